// crash-peer: one side of journaled FIX sessions for the crash tests
// (tests/recovery). Each session streams application messages to its
// counterparty (initiator: NewOrderSingle, ClOrdID = 1, 2, ...; acceptor:
// ExecutionReport, ExecID = 1, 2, ...; ids per session) and keeps an
// append-only log of what its application saw, so that after any number of
// kill -9 and restarts a checker can tell whether every message the
// sender's send call accepted reached the receiver's application exactly
// once, in order.
//
//   crash-peer --role initiator|acceptor --port P --store DIR --log FILE|DIR
//              [--sessions N] [--count N] [--rate R] [--pace-from start|logon]
//              [--port-file F] [--events F]
//              [--stall-every N --stall-ms M]
//
// --sessions N (default 1) runs N sessions in this one engine (one process,
// one engine thread). With 1 the session is CLIENT -> VENUE and --log is the
// session's log file. With N > 1 the initiator's sessions are CLIENT1 ..
// CLIENTN -> VENUE, the acceptor's VENUE -> CLIENT1 .. CLIENTN on one port;
// --log is a directory (created if missing) holding one log per session,
// `<DIR>/CLIENT<k>.log`; every session's store is its own subdirectory of
// --store (the engine derives it from the session ID, e.g.
// FIX.4.4-CLIENT7-VENUE). Every session streams at --rate, counts to --count
// and sends its own END; the events file is shared. All N initiators connect
// from one address at once, so the engine's pending-connection limits
// (MaxPendingConnections, MaxPendingConnectionsPerAddress) are raised to N
// where they are lower, as a venue serving N sessions of one counterparty
// host configures them (docs/config.md).
//
// The log (one line per event, each written with a single write(2), so a
// kill never leaves half a line; the page cache keeps it across the kill):
//
//   # start <pid> next_sender <n> next_target <n>   a process began (after recovery)
//   A <id>                    about to call send_app for message <id>
//   S <id> <seq>              send_app returned kOk: the message is journaled as <seq>
//   F <id> <status>           send_app failed: nothing was stored or sent
//   R <id> <seq> <possdup> <end>   from_app delivered message <id> (MsgSeqNum,
//                             PossDupFlag 0/1, 1 if it is the sender's last)
//   # logon / # logout        session events
//
// An "A" without its "S" or "F" is the last thing a killed process did with
// that session: the message may or may not have been committed. On restart
// the peer reads each session's log, continues with the next id, and keeps
// sending until `count` messages were accepted; then it sends one more,
// marked Text=END, so the receiver knows the stream is complete. Sequence
// numbers come from the journal (the engine's JournalStore recovery).
// SIGTERM/SIGINT: logout, flush, exit 0.
//
// --crash-at-delivery K, --crash-after-delivery K, --crash-after-send K,
// --crash-in-send K, --crash-at-logon K and --crash-after-stall K kill the process itself
// (SIGKILL) at exact points (K counts over all sessions of the process; so
// do --stall-every's sends), for windows a random kill rarely hits: inside from_app of the K-th
// delivery before it is logged (the message is already in the inbound
// journal) or after (the session has not counted it yet), right after the
// K-th accepted send before it is logged, inside the K-th send call once the
// message's fields are in the journal's claimed room but before the commit
// (nothing was committed: the message must not count, and the journal must
// open without a repair), inside from_admin of the K-th Logon received (it
// is in the inbound journal, the session has not counted it), or at the end
// of the K-th stall
// (whatever the counterparty sent during the stall dies unread with the
// socket, so the restarted peer logs on to a gap).
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <csignal>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "common/configs.hpp"
#include "hft/codec/encoder.hpp"
#include "hft/engine/engine.hpp"
#include "hft/engine/log.hpp"

namespace {

namespace tag = hft::codec::tag;
using hft::session::Decision;
using hft::session::SendStatus;
using hft::session::Session;

std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop.store(true); }

/// Append-only event log: every line is one write(2).
class EventLog {
 public:
  explicit EventLog(const std::string& path) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw std::runtime_error(path + ": " + std::strerror(errno));
  }
  ~EventLog() {
    if (fd_ >= 0) ::close(fd_);
  }
  EventLog(const EventLog&) = delete;
  EventLog& operator=(const EventLog&) = delete;

  void line(const char* fmt, ...) __attribute__((format(printf, 2, 3))) {
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    int n = std::vsnprintf(buf, sizeof buf - 1, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if (n > static_cast<int>(sizeof buf) - 2) n = static_cast<int>(sizeof buf) - 2;
    buf[n++] = '\n';
    // A short write to a regular file only happens on a full disk: the
    // checker would then report the log as inconsistent, which is right.
    (void)!::write(fd_, buf, static_cast<std::size_t>(n));
  }

 private:
  int fd_ = -1;
};

/// What earlier processes of this peer left in the log.
struct Resume {
  std::uint64_t next_id = 1;   ///< one past the highest id ever attempted
  std::uint64_t accepted = 0;  ///< "S" lines
};

Resume read_log(const std::string& path) {
  Resume r;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream s(line);
    std::string kind;
    std::uint64_t id = 0;
    if (!(s >> kind >> id)) continue;
    if (kind == "A" && id >= r.next_id) r.next_id = id + 1;
    if (kind == "S") ++r.accepted;
  }
  return r;
}

/// One session's side: its log, what earlier processes left, its stream.
struct Stream {
  std::unique_ptr<EventLog> log;
  Session* session = nullptr;
  std::uint64_t next_id = 1;
  std::uint64_t accepted = 0;
  std::uint64_t sent_here = 0;  ///< accepted by this process
  bool logged_on = false;
  std::int64_t paced_from_ns = -1;  ///< --pace-from logon: this process's first logon of the session
};

/// Session k (1-based) of `sessions`: the initiator's CompID, CLIENT or CLIENT<k>.
std::string client_id(std::size_t k, std::size_t sessions) {
  return sessions == 1 ? std::string("CLIENT") : "CLIENT" + std::to_string(k);
}

class Peer final : public hft::session::Application {
 public:
  Peer(bool initiator, std::vector<Stream>& streams, std::uint64_t crash_at_delivery,
       std::uint64_t crash_after_delivery, std::uint64_t crash_at_logon)
      : initiator_(initiator),
        streams_(streams),
        crash_at_delivery_(crash_at_delivery),
        crash_after_delivery_(crash_after_delivery),
        crash_at_logon_(crash_at_logon) {}

  Decision from_admin(Session&, const hft::codec::MessageView& m) noexcept override {
    if (m.msg_type() == "A" && ++logons_ == crash_at_logon_) ::raise(SIGKILL);
    return Decision::accept();
  }

  void on_logon(Session& s) noexcept override {
    Stream& st = stream(s);
    st.logged_on = true;
    if (st.paced_from_ns < 0) st.paced_from_ns = hft::engine::Engine::now().mono_ns;
    st.log->line("# logon next_sender %llu next_target %llu", static_cast<unsigned long long>(s.next_sender_seq()),
                 static_cast<unsigned long long>(s.next_target_seq()));
  }
  void on_logout(Session& s) noexcept override {
    Stream& st = stream(s);
    st.logged_on = false;
    st.log->line("# logout next_sender %llu next_target %llu", static_cast<unsigned long long>(s.next_sender_seq()),
                 static_cast<unsigned long long>(s.next_target_seq()));
  }

  Decision from_app(Session& s, const hft::codec::MessageView& m) noexcept override {
    // The initiator receives execution reports, the acceptor orders.
    const std::string_view want = initiator_ ? "8" : "D";
    if (m.msg_type() != want) return Decision::unsupported_message_type();
    std::uint64_t id = 0, seq = 0;
    if (!m.get_uint(initiator_ ? tag::kExecID : tag::kClOrdID, id)) {
      return Decision::reject(hft::codec::RejectReason::kIncorrectDataFormat,
                              initiator_ ? tag::kExecID : tag::kClOrdID);
    }
    (void)m.get_uint(tag::kMsgSeqNum, seq);
    bool poss_dup = false;
    (void)m.get_bool(tag::kPossDupFlag, poss_dup);
    const bool end = m.get(tag::kText) == "END";
    if (++deliveries_ == crash_at_delivery_) ::raise(SIGKILL);
    stream(s).log->line("R %llu %llu %d %d", static_cast<unsigned long long>(id),
                        static_cast<unsigned long long>(seq), poss_dup ? 1 : 0, end ? 1 : 0);
    if (deliveries_ == crash_after_delivery_) ::raise(SIGKILL);
    return Decision::accept();
  }

 private:
  /// The stream of `s`, from the counterparty's or its own CLIENT<k> CompID.
  Stream& stream(const Session& s) noexcept {
    if (streams_.size() == 1) return streams_[0];
    const std::string& client = initiator_ ? s.id().sender_comp_id : s.id().target_comp_id;
    std::size_t k = 0;
    if (client.size() > 6) k = static_cast<std::size_t>(std::strtoull(client.c_str() + 6, nullptr, 10));
    if (k == 0 || k > streams_.size()) {
      std::fprintf(stderr, "crash-peer: callback for an unknown session %s\n", client.c_str());
      std::abort();
    }
    return streams_[k - 1];
  }

  bool initiator_;
  std::vector<Stream>& streams_;
  std::uint64_t crash_at_delivery_;
  std::uint64_t crash_after_delivery_;
  std::uint64_t crash_at_logon_;
  std::uint64_t deliveries_ = 0;
  std::uint64_t logons_ = 0;
};

/// Sends message `id` (an order or an execution report). Returns the status
/// and, on kOk, the MsgSeqNum it got.
/// `crash_inside`: SIGKILL after the fields are written into the journal's
/// claimed room, before the session commits the message.
SendStatus send_one(Session& session, bool initiator, std::uint64_t id, bool end, std::uint64_t& seq,
                    hft::codec::TimestampFormatter& ts, bool crash_inside) {
  char num[24];
  const std::size_t n = hft::codec::format_uint(num, id);
  const std::string_view id_text(num, n);
  const auto now = hft::engine::Engine::now();
  return session.send_app(initiator ? "D" : "8", now, [&](hft::session::OutgoingMessage& m) {
    seq = m.seq_num();
    if (initiator) {
      m.add(tag::kClOrdID, id_text);
      m.add(tag::kSymbol, "CRASH");
      m.add_char(tag::kSide, '1');
      m.writer().add_timestamp(tag::kTransactTime, now.utc_ns, hft::codec::TimePrecision::kMillis, ts);
      m.add_int(tag::kOrderQty, 10);
      m.add_char(tag::kOrdType, '2');
      m.add_int(tag::kPrice, 100);
    } else {
      m.add(tag::kOrderID, id_text);
      m.add(tag::kExecID, id_text);
      m.add_char(tag::kExecType, '0');
      m.add_char(tag::kOrdStatus, '0');
      m.add(tag::kSymbol, "CRASH");
      m.add_char(tag::kSide, '1');
      m.add_int(tag::kOrderQty, 10);
      m.add_int(tag::kLeavesQty, 10);
      m.add_int(tag::kCumQty, 0);
      m.add_int(tag::kAvgPx, 0);
    }
    if (end) m.add(tag::kText, "END");
    if (crash_inside) ::raise(SIGKILL);
  });
}

}  // namespace

int main(int argc, char** argv) {
  // First: a stop asked during start-up still ends with a clean logout.
  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);
  std::signal(SIGPIPE, SIG_IGN);
  CLI::App cli{"crash-peer: one side of journaled FIX sessions that stream messages, for the crash tests"};
  std::string role, store_dir, log_path, port_file, events_path, spec_dir = hft::apps::default_spec_dir();
  int port = 0, heartbeat = 1;
  std::size_t sessions = 1;
  std::uint64_t count = 300, crash_at_delivery = 0, crash_after_send = 0;
  double rate = 1000;
  std::string segment_size = "1M", durability = "os", extra;
  cli.add_option("--role", role, "initiator or acceptor")->required()->check(CLI::IsMember({"initiator", "acceptor"}));
  cli.add_option("--port", port, "acceptor: port to listen on (0: any, see --port-file); initiator: port to connect to");
  cli.add_option("--port-file", port_file, "acceptor: write the port listened on to this file once listening");
  cli.add_option("--store", store_dir, "FileStorePath: the journal root directory")->required();
  cli.add_option("--log", log_path, "append-only event log (read back on restart); with --sessions N > 1 a directory of one log per session")->required();
  cli.add_option("--sessions", sessions, "sessions in this engine (CLIENT1..N <-> VENUE when more than 1)")->capture_default_str();
  cli.add_option("--events", events_path, "session event log (engine's text log, info level)");
  cli.add_option("--count", count, "messages to have accepted before the END message")->capture_default_str();
  cli.add_option("--rate", rate, "messages per second (0: as fast as possible)")->capture_default_str();
  std::string pace_from = "start";
  cli.add_option("--pace-from", pace_from, "start: each session's --rate counts from the process's start (a session that logs on late catches up in bursts); logon: from the session's first logon in this process")
      ->check(CLI::IsMember({"start", "logon"}))
      ->capture_default_str();
  cli.add_option("--heartbeat", heartbeat, "HeartBtInt, seconds")->capture_default_str();
  cli.add_option("--segment-size", segment_size, "JournalSegmentSize (\"default\": the engine's)")->capture_default_str();
  cli.add_option("--durability", durability, "JournalDurability")->capture_default_str();
  cli.add_option("--spec-dir", spec_dir, "directory of the FIX XML dictionaries (validation)");
  cli.add_option("--config-extra", extra, "more Key=Value lines for [DEFAULT] (newline-separated)");
  std::uint64_t stall_every = 0, stall_ms = 0;
  cli.add_option("--stall-every", stall_every, "after every N accepted sends, stop polling for --stall-ms (a busy application: input piles up in the socket)");
  cli.add_option("--stall-ms", stall_ms, "length of a stall, ms");
  std::uint64_t crash_after_stall = 0, crash_after_delivery = 0;
  cli.add_option("--crash-after-delivery", crash_after_delivery, "SIGKILL itself inside from_app of the K-th delivery, after logging it (before the session counts it)");
  cli.add_option("--crash-after-stall", crash_after_stall, "SIGKILL itself at the end of the K-th stall (what the peer sent meanwhile is lost with the socket)");
  cli.add_option("--crash-at-delivery", crash_at_delivery, "SIGKILL itself inside from_app of the K-th delivery, before logging it");
  cli.add_option("--crash-after-send", crash_after_send, "SIGKILL itself after the K-th accepted send, before logging it");
  std::uint64_t crash_in_send = 0, crash_at_logon = 0;
  cli.add_option("--crash-at-logon", crash_at_logon, "SIGKILL itself inside from_admin of the K-th Logon received (journaled, not yet counted nor answered)");
  cli.add_option("--crash-in-send", crash_in_send, "SIGKILL itself inside the K-th send_app of this process, its fields written in the claimed journal room, before the commit");
  CLI11_PARSE(cli, argc, argv);
  const bool initiator = role == "initiator";
  if (initiator && port <= 0) {
    std::fprintf(stderr, "crash-peer: --port is required for an initiator\n");
    return 2;
  }

  if (sessions == 0) {
    std::fprintf(stderr, "crash-peer: --sessions must be at least 1\n");
    return 2;
  }
  std::vector<Stream> streams(sessions);
  try {
    if (sessions > 1) std::filesystem::create_directories(log_path);
    for (std::size_t k = 1; k <= sessions; ++k) {
      const std::string path = sessions == 1 ? log_path : log_path + "/" + client_id(k, sessions) + ".log";
      const Resume resume = read_log(path);
      streams[k - 1].next_id = resume.next_id;
      streams[k - 1].accepted = resume.accepted;
      streams[k - 1].log = std::make_unique<EventLog>(path);
    }
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "crash-peer: %s\n", ex.what());
    return 2;
  }

  std::string extra_keys = "MaxMessageSize=4096\nJournalDurability=" + durability +
                           "\nSocketConnectTimeoutMs=1000\nLogonTimeout=5\nLogoutTimeout=2\nTimerIntervalMs=10\n";
  if (segment_size != "default") extra_keys += "JournalSegmentSize=" + segment_size + "\n";
  // All N initiators connect from one address at once: the acceptor's
  // pending-connection limits (64, 16 per address) are raised to N when
  // they are lower. MaxConnections is left to the engine (unset: every
  // configured session).
  if (sessions > 16) {
    extra_keys += "MaxPendingConnections=" + std::to_string(std::max<std::size_t>(sessions, 64)) +
                  "\nMaxPendingConnectionsPerAddress=" + std::to_string(sessions) + "\n";
  }
  std::string config_text;
  for (std::size_t k = 1; k <= sessions; ++k) {
    hft::apps::SimpleSession s;
    s.initiator = initiator;
    s.sender = initiator ? client_id(k, sessions) : "VENUE";
    s.target = initiator ? "VENUE" : client_id(k, sessions);
    s.port = port;
    s.heartbeat = heartbeat;
    s.store_dir = store_dir;
    s.spec_dir = spec_dir;
    s.extra = extra_keys + extra;
    const std::string one = hft::apps::simple_config(s);
    // The first session brings [DEFAULT]; the others add their [SESSION].
    config_text += k == 1 ? one : one.substr(one.find("\n[SESSION]\n"));
  }
  auto config = hft::engine::Config::parse(config_text, "<crash-peer>");
  if (!config) {
    std::fprintf(stderr, "crash-peer: %s\n", config.error().message.c_str());
    return 2;
  }
  std::unique_ptr<hft::engine::StreamLogger> events;
  if (!events_path.empty()) {
    auto opened = hft::engine::StreamLogger::open(events_path, hft::session::LogLevel::kInfo);
    if (!opened) {
      std::fprintf(stderr, "crash-peer: %s\n", opened.error().message.c_str());
      return 2;
    }
    events = std::move(*opened);
  }
  Peer peer(initiator, streams, crash_at_delivery, crash_after_delivery, crash_at_logon);
  auto engine = hft::engine::Engine::create(*config, peer, events.get());
  if (!engine) {
    std::fprintf(stderr, "crash-peer: %s\n", engine.error().message.c_str());
    return 2;
  }
  auto& e = **engine;
  if (e.session_count() != sessions) {
    std::fprintf(stderr, "crash-peer: the engine has %zu sessions, %zu configured\n", e.session_count(), sessions);
    return 2;
  }
  for (std::size_t k = 1; k <= sessions; ++k) {
    const std::string client = client_id(k, sessions);
    Session* session = e.find(initiator ? hft::session::SessionID{"FIX.4.4", client, "VENUE", {}}
                                        : hft::session::SessionID{"FIX.4.4", "VENUE", client, {}});
    if (session == nullptr) {
      std::fprintf(stderr, "crash-peer: session %s not found in the engine\n", client.c_str());
      return 2;
    }
    Stream& st = streams[k - 1];
    st.session = session;
    st.log->line("# start %d next_sender %llu next_target %llu next_id %llu accepted %llu", static_cast<int>(::getpid()),
                 static_cast<unsigned long long>(session->next_sender_seq()),
                 static_cast<unsigned long long>(session->next_target_seq()),
                 static_cast<unsigned long long>(st.next_id), static_cast<unsigned long long>(st.accepted));
  }
  if (!initiator && !port_file.empty()) {
    const std::string tmp = port_file + ".tmp";
    if (std::FILE* f = std::fopen(tmp.c_str(), "w")) {
      std::fprintf(f, "%d\n", e.listen_port());
      std::fclose(f);
      std::rename(tmp.c_str(), port_file.c_str());
    }
  }

  std::uint64_t sent_here = 0;  // all sessions: for --stall-every and --crash-after-send
  std::uint64_t send_calls = 0;  // all sessions: for --crash-in-send
  hft::codec::TimestampFormatter ts;
  const auto t0 = hft::engine::Engine::now();
  const bool pace_from_logon = pace_from == "logon";
  while (!g_stop.load()) {
    e.poll();
    for (Stream& st : streams) {
      // Paced from this process's start (or the session's first logon in
      // it); at most a small burst per poll.
      const std::int64_t from_ns = pace_from_logon ? st.paced_from_ns : t0.mono_ns;
      for (int burst = 0; burst < 8 && st.accepted <= count && st.logged_on; ++burst) {
        const auto now = hft::engine::Engine::now();
        if (rate > 0 && static_cast<double>(now.mono_ns - from_ns) * rate / 1e9 < static_cast<double>(st.sent_here)) {
          break;
        }
        const std::uint64_t id = st.next_id++;
        const bool end = st.accepted == count;
        std::uint64_t seq = 0;
        st.log->line("A %llu", static_cast<unsigned long long>(id));
        const SendStatus status = send_one(*st.session, initiator, id, end, seq, ts, ++send_calls == crash_in_send);
        if (status == SendStatus::kOk) {
          ++st.accepted;
          ++st.sent_here;
          ++sent_here;
          if (sent_here == crash_after_send) ::raise(SIGKILL);
          st.log->line("S %llu %llu", static_cast<unsigned long long>(id), static_cast<unsigned long long>(seq));
          if (stall_every != 0 && sent_here % stall_every == 0) {
            ::usleep(static_cast<useconds_t>(stall_ms * 1000));
            if (sent_here / stall_every == crash_after_stall) ::raise(SIGKILL);
          }
        } else {
          st.log->line("F %llu %d", static_cast<unsigned long long>(id), static_cast<int>(status));
          break;
        }
      }
    }
  }
  e.logout_all(3'000'000'000);
  for (Stream& st : streams) st.log->line("# stop");
  return 0;
}
