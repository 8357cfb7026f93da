// qf-peer: a QuickFIX reference peer for libhft's conformance and interop tests.
//
//   qf-peer acceptor --spec-dir DIR [--port P] [--port-file F] [--log-dir D]
//                    [--sessions TW44,...] [--print-config]
//       the conformance acceptor of /work/shared/conformance/README.md (ten
//       sessions, or those TargetCompIDs only; echo application); --port 0
//       (default) picks a free port.
//   qf-peer initiator --config FILE [--spec-dir DIR] [--port P] [--log-dir D]
//       the initiator-side conformance suite's engine under test: the config's
//       initiator session(s) connect to the runner at ${PORT}, with the echo
//       application (tests/data/conformance/initiator/README.md); runs until
//       SIGINT/SIGTERM.
//   qf-peer venue --config FILE [--spec-dir DIR] [--port P] [--port-file F] [--log-dir D]
//                 [--sessions TRADER44,...]
//       acceptor answering NewOrderSingle with ExecutionReport New then Fill.
//   qf-peer trader --config FILE --orders N [--spec-dir DIR] [--host H] [--port P]
//                  [--timeout-ms T] [--require-fills] [--log-dir D]
//                  [--idle-ms T] [--disconnect-after K]
//       initiator sending N NewOrderSingles; exit 0 iff all are acknowledged
//       (and filled, with --require-fills) exactly once: a report repeated
//       without PossDupFlag=Y is a failure.
//
// --tls (any mode) runs the sessions over TLS with QuickFIX's own
// FIX::SSLSocketAcceptor / FIX::SSLSocketInitiator, which read their keys
// (ServerCertificateFile, ClientCertificateFile, CertificationAuthoritiesFile,
// CertificateVerifyLevel, SSLProtocol, ...) from the config's [DEFAULT].
//
// Config files may use ${SPEC_DIR}, ${HOST}, ${PORT} and any ${NAME} given
// with --set NAME=VALUE, replaced by the command-line values. Acceptor and
// venue run until SIGINT/SIGTERM; the venue then prints what it received.
#include <quickfix/FileLog.h>
#include <quickfix/Log.h>
#include <quickfix/MessageStore.h>
#include <quickfix/SSLSocketAcceptor.h>
#include <quickfix/SSLSocketInitiator.h>
#include <quickfix/Session.h>
#include <quickfix/SessionSettings.h>
#include <quickfix/SocketAcceptor.h>
#include <quickfix/SocketInitiator.h>

#include <dirent.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <map>
#include <set>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

#include "applications.hpp"
#include "peer_config.hpp"

namespace {

constexpr const char* kUsage =
    "usage:\n"
    "  qf-peer acceptor --spec-dir DIR [--port P] [--port-file FILE] [--log-dir DIR]\n"
    "                   [--sessions TW44,TW42,...] [--print-config]\n"
    "  qf-peer initiator --config FILE [--spec-dir DIR] [--port P] [--log-dir DIR]\n"
    "  qf-peer venue --config FILE [--spec-dir DIR] [--port P] [--port-file FILE] [--log-dir DIR]\n"
    "                [--sessions TRADER44,...] [--verbose]\n"
    "  qf-peer trader --config FILE --orders N [--spec-dir DIR] [--host H] [--port P]\n"
    "                 [--timeout-ms T] [--require-fills] [--log-dir DIR]\n"
    "                 [--idle-ms T] [--disconnect-after K]\n"
    "  any mode: [--tls]\n"
    "\n"
    "--set NAME=VALUE (venue, trader) defines ${NAME} for the config file.\n"
    "--idle-ms T (trader): stay logged on and idle T ms before sending (heartbeats\n"
    "  only); the session must still be up, without a reconnect, afterwards.\n"
    "--disconnect-after K (trader): after order K, drop the TCP connection without\n"
    "  a Logout (shutdown of the socket) and keep sending: QuickFIX stores the\n"
    "  orders sent while down; it reconnects (ReconnectInterval) and recovers the\n"
    "  gaps by ResendRequest. Use with ResetOnLogon/ResetOnDisconnect=N.\n"
    "The trader prints one line of key=value counts; the venue prints one at exit.\n"
    "\n"
    "--tls (any mode): the sessions run over TLS, with QuickFIX's SSLSocketAcceptor /\n"
    "  SSLSocketInitiator; the config's [DEFAULT] holds the SSL keys (ServerCertificateFile,\n"
    "  ServerCertificateKeyFile, ClientCertificateFile, ClientCertificateKeyFile,\n"
    "  CertificationAuthoritiesFile, CertificateVerifyLevel, SSLProtocol, SSLCipherSuite).\n"
    "--exit-with-parent (acceptor/venue) stops the peer when its parent process exits.\n"
    "--port 0 (acceptor/venue default) picks a free port; it is printed as\n"
    "'qf-peer: listening on port N' and written to --port-file. Config files may\n"
    "use ${SPEC_DIR}, ${HOST}, ${PORT}. acceptor and venue run until SIGINT/SIGTERM.\n";

struct Args {
  std::string mode;
  std::string spec_dir;
  std::string config;
  std::string host = "127.0.0.1";
  int port = 0;
  bool port_given = false;
  std::string port_file;
  std::string log_dir;
  long orders = 0;
  int timeout_ms = 30000;
  bool require_fills = false;
  bool print_config = false;
  bool verbose = false;
  std::set<std::string> sessions;
  bool exit_with_parent = false;
  bool tls = false;
  std::map<std::string, std::string> values;  // --set NAME=VALUE
  int idle_ms = 0;
  long disconnect_after = 0;
};

[[noreturn]] void usage_error(const std::string& message) {
  std::cerr << "qf-peer: " << message << "\n\n" << kUsage;
  std::exit(2);
}

long parse_number(const std::string& option, const std::string& text, long min, long max) {
  char* end = nullptr;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || v < min || v > max) {
    usage_error(option + ": expected an integer in [" + std::to_string(min) + ", " + std::to_string(max) +
                "], got '" + text + "'");
  }
  return v;
}

Args parse_args(int argc, char** argv) {
  if (argc < 2) usage_error("no mode given");
  Args a;
  a.mode = argv[1];
  if (a.mode == "--help" || a.mode == "-h") {
    std::cout << kUsage;
    std::exit(0);
  }
  if (a.mode != "acceptor" && a.mode != "venue" && a.mode != "trader" && a.mode != "initiator") {
    usage_error("unknown mode " + a.mode);
  }
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage_error(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--spec-dir") {
      a.spec_dir = value();
    } else if (arg == "--config") {
      a.config = value();
    } else if (arg == "--host") {
      a.host = value();
    } else if (arg == "--port") {
      a.port = static_cast<int>(parse_number(arg, value(), 0, 65535));
      a.port_given = true;
    } else if (arg == "--port-file") {
      a.port_file = value();
    } else if (arg == "--log-dir") {
      a.log_dir = value();
    } else if (arg == "--orders") {
      a.orders = parse_number(arg, value(), 1, 10000000);
    } else if (arg == "--timeout-ms") {
      a.timeout_ms = static_cast<int>(parse_number(arg, value(), 1, 3600000));
    } else if (arg == "--require-fills") {
      a.require_fills = true;
    } else if (arg == "--sessions") {
      std::istringstream list(value());
      std::string target;
      while (std::getline(list, target, ',')) {
        if (!target.empty()) a.sessions.insert(target);
      }
    } else if (arg == "--set") {
      const std::string assignment = value();
      const auto eq = assignment.find('=');
      if (eq == std::string::npos || eq == 0) usage_error("--set: expected NAME=VALUE, got '" + assignment + "'");
      a.values[assignment.substr(0, eq)] = assignment.substr(eq + 1);
    } else if (arg == "--idle-ms") {
      a.idle_ms = static_cast<int>(parse_number(arg, value(), 0, 3600000));
    } else if (arg == "--disconnect-after") {
      a.disconnect_after = parse_number(arg, value(), 1, 10000000);
    } else if (arg == "--tls") {
      a.tls = true;
    } else if (arg == "--exit-with-parent") {
      a.exit_with_parent = true;
    } else if (arg == "--print-config") {
      a.print_config = true;
    } else if (arg == "--verbose" || arg == "-v") {
      a.verbose = true;
    } else if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      std::exit(0);
    } else {
      usage_error("unknown option " + arg);
    }
  }
  if (a.mode == "acceptor" && a.spec_dir.empty()) usage_error("acceptor needs --spec-dir");
  if (a.mode != "acceptor" && a.config.empty()) usage_error(a.mode + " needs --config");
  if (a.mode == "trader" && a.orders == 0) usage_error("trader needs --orders N");
  if (a.mode == "trader" && a.port == 0 && a.port_given) usage_error("trader needs a real --port");
  if (a.mode == "initiator" && a.port == 0) usage_error("initiator needs --port (the runner's)");
  if (a.mode != "trader" && (a.idle_ms != 0 || a.disconnect_after != 0)) {
    usage_error("--idle-ms and --disconnect-after are trader options");
  }
  if (a.disconnect_after > a.orders && a.mode == "trader") usage_error("--disconnect-after must be <= --orders");
  return a;
}

// Blocks SIGINT/SIGTERM in every thread (QuickFIX's threads inherit the
// mask), so the main thread can wait for them with sigwait.
sigset_t block_stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return set;
}

std::unique_ptr<FIX::LogFactory> make_log_factory(const Args& a) {
  if (!a.log_dir.empty()) return std::unique_ptr<FIX::LogFactory>(new FIX::FileLogFactory(a.log_dir));
  if (a.verbose) return std::unique_ptr<FIX::LogFactory>(new FIX::ScreenLogFactory(true, true, true));
  return nullptr;
}

// Counts every message QuickFIX receives, also those its session layer
// drops without telling the application (a resend of numbers already
// seen), and passes everything on to an optional inner log.
class CountingLog : public FIX::Log {
 public:
  CountingLog(FIX::Log* inner, std::atomic<long>& incoming) : inner_(inner), incoming_(incoming) {}
  void clear() override {
    if (inner_) inner_->clear();
  }
  void backup() override {
    if (inner_) inner_->backup();
  }
  void onIncoming(const std::string& message) override {
    ++incoming_;
    if (inner_) inner_->onIncoming(message);
  }
  void onOutgoing(const std::string& message) override {
    if (inner_) inner_->onOutgoing(message);
  }
  void onEvent(const std::string& text) override {
    if (inner_) inner_->onEvent(text);
  }
  FIX::Log* inner() const { return inner_; }

 private:
  FIX::Log* inner_;
  std::atomic<long>& incoming_;
};

class CountingLogFactory : public FIX::LogFactory {
 public:
  explicit CountingLogFactory(std::unique_ptr<FIX::LogFactory> inner) : inner_(std::move(inner)) {}
  FIX::Log* create() override { return new CountingLog(inner_ ? inner_->create() : nullptr, incoming_); }
  FIX::Log* create(const FIX::SessionID& id) override {
    return new CountingLog(inner_ ? inner_->create(id) : nullptr, incoming_);
  }
  void destroy(FIX::Log* log) override {
    auto* counting = static_cast<CountingLog*>(log);
    if (inner_ && counting->inner()) inner_->destroy(counting->inner());
    delete counting;
  }
  /// Messages received so far, all sessions.
  long incoming() const { return incoming_.load(); }

 private:
  std::unique_ptr<FIX::LogFactory> inner_;
  std::atomic<long> incoming_{0};
};

// The acceptor or initiator QuickFIX runs the settings with: its plain TCP
// one, or with --tls its SSL one (the same settings; the SSL keys are read
// from [DEFAULT] when it starts).
template <typename Base, typename Plain, typename Tls>
std::unique_ptr<Base> make_connector(const Args& a, FIX::Application& app, FIX::MessageStoreFactory& store,
                                     const FIX::SessionSettings& settings, FIX::LogFactory* log) {
  if (a.tls) {
    return std::unique_ptr<Base>(log ? new Tls(app, store, settings, *log) : new Tls(app, store, settings));
  }
  return std::unique_ptr<Base>(log ? new Plain(app, store, settings, *log) : new Plain(app, store, settings));
}

std::unique_ptr<FIX::Acceptor> make_acceptor(const Args& a, FIX::Application& app, FIX::MessageStoreFactory& store,
                                             const FIX::SessionSettings& settings, FIX::LogFactory* log) {
  return make_connector<FIX::Acceptor, FIX::SocketAcceptor, FIX::SSLSocketAcceptor>(a, app, store, settings, log);
}

std::unique_ptr<FIX::Initiator> make_initiator(const Args& a, FIX::Application& app, FIX::MessageStoreFactory& store,
                                               const FIX::SessionSettings& settings, FIX::LogFactory* log) {
  return make_connector<FIX::Initiator, FIX::SocketInitiator, FIX::SSLSocketInitiator>(a, app, store, settings,
                                                                                      log);
}

int run_acceptor_until_signal(FIX::Application& app, const FIX::SessionSettings& settings, const Args& a,
                              int port, const sigset_t& stop_signals) {
  FIX::MemoryStoreFactory store;
  std::unique_ptr<FIX::LogFactory> log = make_log_factory(a);
  std::unique_ptr<FIX::Acceptor> acceptor = make_acceptor(a, app, store, settings, log.get());
  // start() binds the listening socket before it returns, so the port is
  // reported only once connections can be accepted.
  acceptor->start();
  std::cout << "qf-peer: listening on port " << port << std::endl;
  if (!a.port_file.empty()) qf_peer::write_port_file(a.port_file, port);
  int sig = 0;
  sigwait(&stop_signals, &sig);
  acceptor->stop(true);
  return 0;
}

// Keeps the sessions whose TargetCompID is listed (all when none is), so a
// run that needs one session does not load every dictionary.
FIX::SessionSettings only_sessions(const FIX::SessionSettings& all, const std::set<std::string>& targets) {
  if (targets.empty()) return all;
  FIX::SessionSettings kept;
  kept.set(all.get());
  std::set<std::string> unknown = targets;
  for (const FIX::SessionID& id : all.getSessions()) {
    const std::string& target = id.getTargetCompID().getValue();
    unknown.erase(target);
    if (targets.count(target) != 0) kept.set(id, all.get(id));
  }
  if (!unknown.empty()) throw std::runtime_error("--sessions: no session with TargetCompID " + *unknown.begin());
  return kept;
}

// The port the settings really listen on: a venue config may name its own
// SocketAcceptPort instead of using ${PORT}.
int listening_port(const FIX::SessionSettings& settings, int fallback) {
  for (const FIX::SessionID& id : settings.getSessions()) {
    const FIX::Dictionary& d = settings.get(id);
    if (d.has("SocketAcceptPort")) return d.getInt("SocketAcceptPort");
  }
  return fallback;
}

std::map<std::string, std::string> placeholders(const Args& a, int port) {
  std::map<std::string, std::string> values = a.values;
  values["SPEC_DIR"] = a.spec_dir;
  values["HOST"] = a.host;
  values["PORT"] = port > 0 ? std::to_string(port) : "";
  return values;
}

// Drops the TCP connections of this process to `port`, as a network failure
// would: shutdown() of the socket under QuickFIX's feet (its own thread sees
// the end of the stream and disconnects the session; no Logout is sent, and
// what the peer sends meanwhile is lost). Returns the sockets shut down.
int drop_connections_to(int port) {
  int dropped = 0;
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return 0;
  while (dirent* entry = ::readdir(dir)) {
    char* end = nullptr;
    const long fd = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || fd == ::dirfd(dir)) continue;
    sockaddr_storage peer{};
    socklen_t len = sizeof peer;
    if (::getpeername(static_cast<int>(fd), reinterpret_cast<sockaddr*>(&peer), &len) != 0) continue;
    int peer_port = -1;
    if (peer.ss_family == AF_INET) peer_port = ntohs(reinterpret_cast<sockaddr_in*>(&peer)->sin_port);
    if (peer.ss_family == AF_INET6) peer_port = ntohs(reinterpret_cast<sockaddr_in6*>(&peer)->sin6_port);
    if (peer_port == port && ::shutdown(static_cast<int>(fd), SHUT_RDWR) == 0) ++dropped;
  }
  ::closedir(dir);
  return dropped;
}

void print_counts(const qf_peer::TraderCounts& c, long orders, long sent, int drops) {
  std::cout << "orders=" << orders << " sent=" << sent << " execution_reports=" << c.execution_reports
            << " acked=" << c.acked << " filled=" << c.filled << " rejected=" << c.rejected
            << " duplicates=" << c.duplicates << " possdup_received=" << c.possdup_received
            << " possdup_repeats=" << c.possdup_repeats << " unknown_orders=" << c.unknown_orders
            << " session_rejects=" << c.session_rejects << " business_rejects=" << c.business_rejects
            << " logons=" << c.logons << " logouts=" << c.logouts << " logouts_received=" << c.logouts_received
            << " heartbeats_received=" << c.heartbeats_received
            << " test_requests_received=" << c.test_requests_received
            << " resend_requests_received=" << c.resend_requests_received
            << " sequence_resets_received=" << c.sequence_resets_received
            << " reset_logons_received=" << c.reset_logons_received << " last_logon_seq=" << c.last_logon_seq
            << " drops=" << drops << std::endl;
}

void print_counts(const qf_peer::VenueCounts& c) {
  std::cout << "venue: orders=" << c.orders << " possdup_orders=" << c.possdup_orders
            << " possdup_repeats=" << c.possdup_repeats << " duplicate_orders=" << c.duplicate_orders
            << " logons=" << c.logons << " logouts=" << c.logouts << " heartbeats_received=" << c.heartbeats_received
            << " test_requests_received=" << c.test_requests_received
            << " resend_requests_received=" << c.resend_requests_received
            << " sequence_resets_received=" << c.sequence_resets_received
            << " session_rejects_received=" << c.session_rejects_received << std::endl;
}

// The echo initiator of the initiator-side conformance suite: connects to
// the runner and reconnects (ReconnectInterval) until stopped.
int run_echo_initiator(const Args& a, const sigset_t& stop_signals) {
  std::istringstream text(qf_peer::load_with_placeholders(a.config, placeholders(a, a.port)));
  FIX::SessionSettings settings(text);
  qf_peer::EchoApplication app;
  FIX::MemoryStoreFactory store;
  std::unique_ptr<FIX::LogFactory> log = make_log_factory(a);
  std::unique_ptr<FIX::Initiator> initiator = make_initiator(a, app, store, settings, log.get());
  initiator->start();
  std::cout << "qf-peer: initiator connecting to port " << a.port << std::endl;
  int sig = 0;
  sigwait(&stop_signals, &sig);
  initiator->stop(true);
  return 0;
}

int run_trader(const Args& a) {
  std::istringstream text(qf_peer::load_with_placeholders(a.config, placeholders(a, a.port)));
  FIX::SessionSettings settings(text);
  const std::string prefix = "QF" + std::to_string(::getpid()) + "-";
  qf_peer::TraderApplication app(prefix);
  FIX::MemoryStoreFactory store;
  CountingLogFactory log(make_log_factory(a));
  std::unique_ptr<FIX::Initiator> initiator = make_initiator(a, app, store, settings, &log);
  initiator->start();
  FIX::SessionID session;
  if (!app.wait_logon(a.timeout_ms, session)) {
    std::cerr << "qf-peer: no logon within " << a.timeout_ms << " ms" << std::endl;
    initiator->stop(true);
    return 1;
  }
  bool idle_ok = true;
  if (a.idle_ms > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(a.idle_ms));
    const qf_peer::TraderCounts c = app.counts();
    idle_ok = app.logged_on() && c.logons == 1 && c.logouts == 0;
    if (!idle_ok) std::cerr << "qf-peer: the session did not stay up while idle" << std::endl;
  }
  const int port = settings.get(session).getInt("SocketConnectPort");
  FIX::Session* fix_session = FIX::Session::lookupSession(session);
  long sent = 0;
  int drops = 0;
  for (long i = 1; i <= a.orders; ++i) {
    FIX::Message order = qf_peer::make_new_order_single(prefix + std::to_string(i), "HFT", 100, 10.25);
    // While disconnected QuickFIX stores the order (its sequence number is
    // used) without sending it and returns false: the peer asks for it
    // after the next logon. Only an order that did not get a sequence
    // number is lost.
    const int seq_before = fix_session->getExpectedSenderNum();
    if (!fix_session->send(order) && fix_session->getExpectedSenderNum() == seq_before) {
      std::cerr << "qf-peer: could not send order " << i << std::endl;
      break;
    }
    ++sent;
    if (i == a.disconnect_after) {
      drops = drop_connections_to(port);
      if (drops == 0) std::cerr << "qf-peer: --disconnect-after: no connection to port " << port << std::endl;
    }
  }
  const long n = a.orders;
  const bool require_fills = a.require_fills;
  const bool complete = app.wait_for(a.timeout_ms, [n, require_fills](const qf_peer::TraderCounts& c) {
    return c.acked + c.rejected >= n && (!require_fills || c.filled + c.rejected >= n);
  });
  // The fills follow the acks closely; give them a moment so the counts printed are final.
  if (complete && !require_fills) {
    app.wait_for(1000, [n](const qf_peer::TraderCounts& c) { return c.filled + c.rejected >= n; });
  }
  // After a reconnect the venue may still be resending (QuickFIX asks for
  // everything from the gap on, also what it already holds): wait until
  // nothing has arrived for 300 ms, so that late repeats are counted and the
  // Logout answer is not stuck behind a replay.
  if (complete) {
    const auto settle_end = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    long seen = log.incoming();
    while (std::chrono::steady_clock::now() < settle_end) {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      const long now_seen = log.incoming();
      if (now_seen == seen) break;
      seen = now_seen;
    }
  }
  initiator->stop();
  const qf_peer::TraderCounts c = app.counts();
  print_counts(c, n, sent, drops);
  const bool ok = idle_ok && c.acked == n && (!require_fills || c.filled == n) && c.duplicates == 0 &&
                  c.unknown_orders == 0 && (a.disconnect_after == 0 || drops > 0);
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse_args(argc, argv);
  try {
    if (a.mode == "trader") return run_trader(a);

    const sigset_t stop_signals = block_stop_signals();
    // A test wrapper killed hard cannot stop us itself: have the kernel send
    // the SIGTERM we already wait for when the parent goes away.
    if (a.exit_with_parent && ::prctl(PR_SET_PDEATHSIG, SIGTERM) != 0) {
      throw std::runtime_error("prctl(PR_SET_PDEATHSIG) failed");
    }
    if (a.mode == "initiator") return run_echo_initiator(a, stop_signals);
    const int port = a.port != 0 ? a.port : qf_peer::pick_free_port();
    std::string text = a.mode == "acceptor" ? qf_peer::conformance_acceptor_settings(port, a.spec_dir, a.sessions)
                                            : qf_peer::load_with_placeholders(a.config, placeholders(a, port));
    if (a.print_config) {
      std::cout << text;
      return 0;
    }
    std::istringstream in(text);
    const FIX::SessionSettings settings = only_sessions(FIX::SessionSettings(in), a.sessions);
    const int listening = listening_port(settings, port);
    if (a.mode == "acceptor") {
      qf_peer::EchoApplication app;
      return run_acceptor_until_signal(app, settings, a, listening, stop_signals);
    }
    qf_peer::VenueApplication app(a.verbose);
    const int rc = run_acceptor_until_signal(app, settings, a, listening, stop_signals);
    print_counts(app.counts());
    return rc;
  } catch (const std::exception& e) {
    std::cerr << "qf-peer: " << e.what() << std::endl;
    return 2;
  }
}
