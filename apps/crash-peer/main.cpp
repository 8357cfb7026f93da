// crash-peer: one side of a journaled FIX session for the crash test
// (tests/recovery). It streams application messages to its counterparty
// (initiator: NewOrderSingle, ClOrdID = 1, 2, ...; acceptor: ExecutionReport,
// ExecID = 1, 2, ...) and keeps an append-only log of what its application
// saw, so that after any number of kill -9 and restarts a checker can tell
// whether every message the sender's send call accepted reached the
// receiver's application exactly once, in order.
//
//   crash-peer --role initiator|acceptor --port P --store DIR --log FILE
//              [--count N] [--rate R] [--port-file F] [--events F]
//              [--stall-every N --stall-ms M]
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
// An "A" without its "S" or "F" is the last thing a killed process did: the
// message may or may not have been committed. On restart the peer reads its
// log, continues with the next id, and keeps sending until `count` messages
// were accepted; then it sends one more, marked Text=END, so the receiver
// knows the stream is complete. Sequence numbers come from the journal (the
// engine's JournalStore recovery). SIGTERM/SIGINT: logout, flush, exit 0.
//
// --crash-at-delivery K, --crash-after-delivery K, --crash-after-send K and
// --crash-after-stall K kill the process itself (SIGKILL) at exact points,
// for windows a random kill rarely hits: inside from_app of the K-th
// delivery before it is logged (the message is already in the inbound
// journal) or after (the session has not counted it yet), right after the
// K-th accepted send before it is logged, or at the end of the K-th stall
// (whatever the counterparty sent during the stall dies unread with the
// socket, so the restarted peer logs on to a gap).
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <csignal>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

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

class Peer final : public hft::session::Application {
 public:
  Peer(bool initiator, EventLog& log, std::uint64_t crash_at_delivery, std::uint64_t crash_after_delivery)
      : initiator_(initiator),
        log_(log),
        crash_at_delivery_(crash_at_delivery),
        crash_after_delivery_(crash_after_delivery) {}

  void on_logon(Session& s) noexcept override {
    logged_on = true;
    log_.line("# logon next_sender %llu next_target %llu", static_cast<unsigned long long>(s.next_sender_seq()),
              static_cast<unsigned long long>(s.next_target_seq()));
  }
  void on_logout(Session& s) noexcept override {
    logged_on = false;
    log_.line("# logout next_sender %llu next_target %llu", static_cast<unsigned long long>(s.next_sender_seq()),
              static_cast<unsigned long long>(s.next_target_seq()));
  }

  Decision from_app(Session&, const hft::codec::MessageView& m) noexcept override {
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
    log_.line("R %llu %llu %d %d", static_cast<unsigned long long>(id), static_cast<unsigned long long>(seq),
              poss_dup ? 1 : 0, end ? 1 : 0);
    if (deliveries_ == crash_after_delivery_) ::raise(SIGKILL);
    return Decision::accept();
  }

  bool logged_on = false;

 private:
  bool initiator_;
  EventLog& log_;
  std::uint64_t crash_at_delivery_;
  std::uint64_t crash_after_delivery_;
  std::uint64_t deliveries_ = 0;
};

/// Sends message `id` (an order or an execution report). Returns the status
/// and, on kOk, the MsgSeqNum it got.
SendStatus send_one(Session& session, bool initiator, std::uint64_t id, bool end, std::uint64_t& seq,
                    hft::codec::TimestampFormatter& ts) {
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
  });
}

}  // namespace

int main(int argc, char** argv) {
  // First: a stop asked during start-up still ends with a clean logout.
  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);
  std::signal(SIGPIPE, SIG_IGN);
  CLI::App cli{"crash-peer: one side of a journaled FIX session that streams messages, for the crash test"};
  std::string role, store_dir, log_path, port_file, events_path, spec_dir = hft::apps::default_spec_dir();
  int port = 0, heartbeat = 1;
  std::uint64_t count = 300, crash_at_delivery = 0, crash_after_send = 0;
  double rate = 1000;
  std::string segment_size = "1M", durability = "os", extra;
  cli.add_option("--role", role, "initiator or acceptor")->required()->check(CLI::IsMember({"initiator", "acceptor"}));
  cli.add_option("--port", port, "acceptor: port to listen on (0: any, see --port-file); initiator: port to connect to");
  cli.add_option("--port-file", port_file, "acceptor: write the port listened on to this file once listening");
  cli.add_option("--store", store_dir, "FileStorePath: the journal root directory")->required();
  cli.add_option("--log", log_path, "append-only event log (read back on restart)")->required();
  cli.add_option("--events", events_path, "session event log (engine's text log, info level)");
  cli.add_option("--count", count, "messages to have accepted before the END message")->capture_default_str();
  cli.add_option("--rate", rate, "messages per second (0: as fast as possible)")->capture_default_str();
  cli.add_option("--heartbeat", heartbeat, "HeartBtInt, seconds")->capture_default_str();
  cli.add_option("--segment-size", segment_size, "JournalSegmentSize")->capture_default_str();
  cli.add_option("--durability", durability, "JournalDurability")->capture_default_str();
  cli.add_option("--spec-dir", spec_dir, "directory of the FIX XML dictionaries (validation)");
  cli.add_option("--config-extra", extra, "more Key=Value lines for [DEFAULT] (\\n-separated)");
  std::uint64_t stall_every = 0, stall_ms = 0;
  cli.add_option("--stall-every", stall_every, "after every N accepted sends, stop polling for --stall-ms (a busy application: input piles up in the socket)");
  cli.add_option("--stall-ms", stall_ms, "length of a stall, ms");
  std::uint64_t crash_after_stall = 0, crash_after_delivery = 0;
  cli.add_option("--crash-after-delivery", crash_after_delivery, "SIGKILL itself inside from_app of the K-th delivery, after logging it (before the session counts it)");
  cli.add_option("--crash-after-stall", crash_after_stall, "SIGKILL itself at the end of the K-th stall (what the peer sent meanwhile is lost with the socket)");
  cli.add_option("--crash-at-delivery", crash_at_delivery, "SIGKILL itself inside from_app of the K-th delivery, before logging it");
  cli.add_option("--crash-after-send", crash_after_send, "SIGKILL itself after the K-th accepted send, before logging it");
  CLI11_PARSE(cli, argc, argv);
  const bool initiator = role == "initiator";
  if (initiator && port <= 0) {
    std::fprintf(stderr, "crash-peer: --port is required for an initiator\n");
    return 2;
  }

  const Resume resume = read_log(log_path);
  EventLog log(log_path);

  hft::apps::SimpleSession s;
  s.initiator = initiator;
  s.sender = initiator ? "CLIENT" : "VENUE";
  s.target = initiator ? "VENUE" : "CLIENT";
  s.port = port;
  s.heartbeat = heartbeat;
  s.store_dir = store_dir;
  s.spec_dir = spec_dir;
  s.extra = "MaxMessageSize=4096\nJournalSegmentSize=" + segment_size + "\nJournalDurability=" + durability +
            "\nSocketConnectTimeoutMs=1000\nLogonTimeout=5\nLogoutTimeout=2\nTimerIntervalMs=10\n" + extra;
  auto config = hft::engine::Config::parse(hft::apps::simple_config(s), "<crash-peer>");
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
  Peer peer(initiator, log, crash_at_delivery, crash_after_delivery);
  auto engine = hft::engine::Engine::create(*config, peer, events.get());
  if (!engine) {
    std::fprintf(stderr, "crash-peer: %s\n", engine.error().message.c_str());
    return 2;
  }
  auto& e = **engine;
  Session& session = e.session(0);
  log.line("# start %d next_sender %llu next_target %llu next_id %llu accepted %llu", static_cast<int>(::getpid()),
           static_cast<unsigned long long>(session.next_sender_seq()),
           static_cast<unsigned long long>(session.next_target_seq()),
           static_cast<unsigned long long>(resume.next_id), static_cast<unsigned long long>(resume.accepted));
  if (!initiator && !port_file.empty()) {
    const std::string tmp = port_file + ".tmp";
    if (std::FILE* f = std::fopen(tmp.c_str(), "w")) {
      std::fprintf(f, "%d\n", e.listen_port());
      std::fclose(f);
      std::rename(tmp.c_str(), port_file.c_str());
    }
  }

  std::uint64_t next_id = resume.next_id;
  std::uint64_t accepted = resume.accepted;
  std::uint64_t sent_here = 0;
  hft::codec::TimestampFormatter ts;
  const auto t0 = hft::engine::Engine::now();
  while (!g_stop.load()) {
    e.poll();
    // Paced from this process's start; at most a small burst per poll.
    for (int burst = 0; burst < 8 && accepted <= count && peer.logged_on; ++burst) {
      const auto now = hft::engine::Engine::now();
      if (rate > 0 && static_cast<double>(now.mono_ns - t0.mono_ns) * rate / 1e9 < static_cast<double>(sent_here)) {
        break;
      }
      const std::uint64_t id = next_id++;
      const bool end = accepted == count;
      std::uint64_t seq = 0;
      log.line("A %llu", static_cast<unsigned long long>(id));
      const SendStatus st = send_one(session, initiator, id, end, seq, ts);
      if (st == SendStatus::kOk) {
        ++accepted;
        ++sent_here;
        if (sent_here == crash_after_send) ::raise(SIGKILL);
        log.line("S %llu %llu", static_cast<unsigned long long>(id), static_cast<unsigned long long>(seq));
        if (stall_every != 0 && sent_here % stall_every == 0) {
          ::usleep(static_cast<useconds_t>(stall_ms * 1000));
          if (sent_here / stall_every == crash_after_stall) ::raise(SIGKILL);
        }
      } else {
        log.line("F %llu %d", static_cast<unsigned long long>(id), static_cast<int>(st));
        break;
      }
    }
  }
  e.logout_all(3'000'000'000);
  log.line("# stop");
  return 0;
}
