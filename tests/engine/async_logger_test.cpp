// The asynchronous event log: the logging thread allocates nothing, lines
// arrive whole and in order, a full ring drops and reports, the per-session
// WARN rate limit, FileLogPath's files and its errors, and an engine under a
// garbage flood writing a bounded log.
#include "hft/engine/async_logger.hpp"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "hft/core/clock.hpp"
#include "hft/engine/engine.hpp"
#include "hft/engine/event_log.hpp"
#include "peer_support.hpp"
#include "support/alloc_counter.hpp"
#include "support/temp_dir.hpp"

namespace {

using hft::engine::AsyncLogger;
using hft::engine::AsyncLoggerOptions;
using hft::engine::EventLog;
using hft::engine::EventLogOptions;
using hft::session::LogLevel;
using hft::session::SessionID;

const SessionID kA{"FIX.4.4", "A", "B", ""};
const SessionID kC{"FIX.4.4", "C", "D", ""};
const SessionID kEngine{"", "engine", "", ""};

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::size_t count_containing(const std::vector<std::string>& lines, const std::string& what) {
  std::size_t n = 0;
  for (const auto& l : lines) n += l.find(what) != std::string::npos ? 1 : 0;
  return n;
}

std::unique_ptr<AsyncLogger> make(AsyncLoggerOptions o) {
  auto created = AsyncLogger::create(std::move(o));
  EXPECT_TRUE(created.ok()) << (created.ok() ? "" : created.error().message);
  return created ? std::move(*created) : nullptr;
}

TEST(AsyncLogger, log_allocates_nothing_over_100000_calls_with_drops_and_rate_limited_lines) {
  hft::test::TempDir dir("alog");
  AsyncLoggerOptions o;
  o.file = dir.sub("events.log");
  o.ring_size = 64;
  o.sessions = {{kA, dir.path()}, {kC, ""}};
  auto async = make(std::move(o));
  ASSERT_TRUE(async);
  AsyncLogger* raw = async.get();
  EventLogOptions eo;
  eo.rate_limit = 10;
  eo.min_level = 0;
  EventLog events(nullptr, std::move(async), {kA, kC}, eo);
  events.bind(kA);
  const SessionID unknown{"FIX.4.2", "X", "Y", "q"};
  const std::string long_text(2000, 'x');
  hft::test::AllocationScope scope;
  for (int i = 0; i < 100'000; ++i) {
    switch (i % 5) {
      case 0: events.log(LogLevel::kWarn, kA, "Garbled input ignored"); break;
      case 1: events.log(LogLevel::kInfo, kC, "Logon"); break;
      case 2: events.log(LogLevel::kWarn, kEngine, "refusing connection"); break;
      case 3: events.log(LogLevel::kError, unknown, long_text); break;
      default: raw->log(LogLevel::kInfo, "engine line"); break;
    }
    if (i % 1000 == 0) events.flush_suppressed(hft::core::monotonic_ns());
  }
  EXPECT_EQ(scope.count(), 0u);
  EXPECT_GT(events.stats().suppressed, 0u) << "the rate limit was exercised";
  raw->stop();
  const auto stats = raw->stats();
  EXPECT_GT(stats.dropped, 0u) << "a 64-record ring overflows under this burst";
  EXPECT_EQ(stats.written, stats.logged) << "every record put in the ring was written";
}

TEST(AsyncLogger, every_line_arrives_in_order_in_the_stream_logger_format) {
  hft::test::TempDir dir("alog");
  AsyncLoggerOptions o;
  o.file = dir.sub("events.log");
  o.level = LogLevel::kDebug;
  o.ring_size = 1 << 15;
  o.sessions = {{kA, ""}};
  auto log = make(std::move(o));
  ASSERT_TRUE(log);
  const SessionID other{"FIX.4.2", "X", "Y", "q"};
  constexpr int kLines = 20'000;
  for (int i = 0; i < kLines; ++i) {
    const std::string text = "line " + std::to_string(i);
    if (i % 3 == 0) log->log(LogLevel::kInfo, kA, text);
    else if (i % 3 == 1) log->log(LogLevel::kWarn, text);
    else log->log(LogLevel::kDebug, other, text);
  }
  log->log(LogLevel::kError, kA, std::string(1000, 'z'));
  log->stop();
  EXPECT_EQ(log->stats().dropped, 0u);
  const auto lines = read_lines(dir.sub("events.log"));
  ASSERT_EQ(lines.size(), static_cast<std::size_t>(kLines + 1));
  const std::regex stamp(R"(^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z )");
  for (int i = 0; i < kLines; ++i) {
    const std::string& l = lines[static_cast<std::size_t>(i)];
    ASSERT_TRUE(std::regex_search(l, stamp)) << l;
    const std::string rest = l.substr(25);
    const std::string text = "line " + std::to_string(i);
    if (i % 3 == 0) ASSERT_EQ(rest, "INFO FIX.4.4:A->B " + text);
    else if (i % 3 == 1) ASSERT_EQ(rest, "WARN engine " + text);
    else ASSERT_EQ(rest, "DEBUG FIX.4.2:X->Y:q " + text);
  }
  const std::string& cut = lines.back();
  EXPECT_EQ(cut.substr(25, 19), "ERROR FIX.4.4:A->B ");
  EXPECT_EQ(cut.size(), 25 + 19 + AsyncLogger::kMaxText);
  EXPECT_EQ(cut.substr(cut.size() - 6), "zzz...");
}

TEST(AsyncLogger, a_full_ring_drops_lines_and_the_writer_reports_how_many) {
  hft::test::TempDir dir("alog");
  AsyncLoggerOptions o;
  o.file = dir.sub("events.log");
  o.ring_size = 16;
  o.idle_poll_ns = 400'000'000;  // the writer naps while the ring fills
  auto log = make(std::move(o));
  ASSERT_TRUE(log);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the writer found the ring empty
  for (int i = 0; i < 100; ++i) log->log(LogLevel::kInfo, kA, "line " + std::to_string(i));
  log->stop();
  const auto stats = log->stats();
  EXPECT_EQ(stats.dropped, 84u);
  const auto lines = read_lines(dir.sub("events.log"));
  ASSERT_EQ(lines.size(), 17u);
  for (int i = 0; i < 16; ++i) EXPECT_NE(lines[static_cast<std::size_t>(i)].find("line " + std::to_string(i)), std::string::npos);
  EXPECT_NE(lines[16].find("WARN engine 84 log lines dropped (log ring full)"), std::string::npos) << lines[16];
}

TEST(AsyncLogger, a_quiet_writer_sleeps_longer_and_still_writes_the_next_line) {
  hft::test::TempDir dir("alog");
  AsyncLoggerOptions o;
  o.file = dir.sub("events.log");
  o.idle_poll_ns = 1'000'000;
  o.idle_poll_max_ns = 16'000'000;
  auto log = make(std::move(o));
  ASSERT_TRUE(log);
  // 400 ms with nothing to write: 1, 2, 4, 8 ms, then 16 ms naps, about 30
  // in all (a fixed 1 ms nap took about 400, each one a wake-up on a core).
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  const auto quiet = log->stats();
  EXPECT_GE(quiet.naps, 5u);
  EXPECT_LT(quiet.naps, 100u);
  // The line after the quiet spell still reaches the file, while running.
  log->log(LogLevel::kInfo, kA, "after the quiet spell");
  // The writer counts a line before it writes its batch out: wait for the file.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  auto lines = read_lines(dir.sub("events.log"));
  while (lines.empty() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    lines = read_lines(dir.sub("events.log"));
  }
  ASSERT_EQ(log->stats().written, 1u);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].substr(25), "INFO FIX.4.4:A->B after the quiet spell");
  log->stop();
}

TEST(AsyncLogger, session_files_are_named_as_quickfix_names_them_and_get_only_their_lines) {
  hft::test::TempDir dir("alog");
  const SessionID qualified{"FIX.4.2", "S", "T", "Q1"};
  AsyncLoggerOptions o;
  o.directory = dir.sub("logs");
  o.sessions = {{kA, dir.sub("logs")}, {qualified, dir.sub("other")}};
  auto log = make(std::move(o));
  ASSERT_TRUE(log);
  log->log(LogLevel::kInfo, kA, "to A");
  log->log(LogLevel::kInfo, qualified, "to S");
  log->log(LogLevel::kWarn, kEngine, "to the engine");
  log->stop();
  EXPECT_EQ(AsyncLogger::session_file(dir.sub("other"), qualified), dir.sub("other/FIX.4.2-S-T-Q1.event.current.log"));
  const auto a = read_lines(dir.sub("logs/FIX.4.4-A-B.event.current.log"));
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].substr(25), "INFO FIX.4.4:A->B to A");
  const auto q = read_lines(dir.sub("other/FIX.4.2-S-T-Q1.event.current.log"));
  ASSERT_EQ(q.size(), 1u);
  EXPECT_EQ(q[0].substr(25), "INFO FIX.4.2:S->T:Q1 to S");
  const auto global = read_lines(dir.sub("logs/GLOBAL.event.current.log"));
  ASSERT_EQ(global.size(), 1u);
  EXPECT_EQ(global[0].substr(25), "WARN engine to the engine");
}

// Counts what the application's logger receives.
struct CountingLogger final : hft::session::Logger {
  std::size_t a = 0, c = 0;
  bool enabled(LogLevel) const noexcept override { return true; }
  void log(LogLevel, const SessionID& id, std::string_view) noexcept override {
    if (id == kA) ++a;
    if (id == kC) ++c;
  }
};

TEST(EventLog, a_warn_flood_of_one_session_is_limited_and_another_session_still_passes) {
  hft::test::TempDir dir("alog");
  AsyncLoggerOptions o;
  o.file = dir.sub("events.log");
  o.ring_size = 1 << 14;
  o.sessions = {{kA, ""}, {kC, ""}};
  auto async = make(std::move(o));
  ASSERT_TRUE(async);
  AsyncLogger* raw = async.get();
  CountingLogger user;
  EventLogOptions eo;
  eo.rate_limit = 100;
  EventLog events(&user, std::move(async), {kA, kC}, eo);
  const auto start = hft::core::monotonic_ns();
  for (int i = 0; i < 10'000; ++i) {
    events.log(LogLevel::kWarn, kA, "Garbled input ignored");
    if (i % 100 == 0) events.log(LogLevel::kWarn, kC, "MsgSeqNum too high");
  }
  const auto elapsed = hft::core::monotonic_ns() - start;
  events.flush_suppressed(start + 2 * EventLog::kWindowNs);
  raw->stop();
  const auto lines = read_lines(dir.sub("events.log"));
  const std::size_t flood = count_containing(lines, "FIX.4.4:A->B Garbled input ignored");
  const std::size_t summaries = count_containing(lines, "FIX.4.4:A->B ");
  const std::size_t windows = static_cast<std::size_t>(elapsed / EventLog::kWindowNs) + 1;
  EXPECT_LE(flood, 100 * windows);
  EXPECT_GE(flood, 100u);
  EXPECT_LE(summaries - flood, windows);
  EXPECT_GE(summaries - flood, 1u);
  EXPECT_EQ(count_containing(lines, "FIX.4.4:C->D MsgSeqNum too high"), 100u);
  EXPECT_EQ(events.stats().suppressed + flood, 10'000u);
  if (windows == 1) {
    EXPECT_EQ(count_containing(lines, "WARN FIX.4.4:A->B 9900 similar lines suppressed"), 1u);
  }
  EXPECT_EQ(user.a, summaries) << "the application's logger gets the limited stream too";
  EXPECT_EQ(user.c, 100u);
}

TEST(EventLog, lines_flow_again_in_the_next_window_after_the_summary) {
  hft::test::TempDir dir("alog");
  AsyncLoggerOptions o;
  o.file = dir.sub("events.log");
  o.sessions = {{kA, ""}};
  auto async = make(std::move(o));
  ASSERT_TRUE(async);
  AsyncLogger* raw = async.get();
  EventLogOptions eo;
  eo.rate_limit = 3;
  EventLog events(nullptr, std::move(async), {kA}, eo);
  for (int i = 0; i < 10; ++i) events.log(LogLevel::kWarn, kA, "first");
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  events.log(LogLevel::kWarn, kA, "second");
  raw->stop();
  const auto lines = read_lines(dir.sub("events.log"));
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_NE(lines[3].find("WARN FIX.4.4:A->B 7 similar lines suppressed (LogRateLimit 3 WARN lines per second)"),
            std::string::npos)
      << lines[3];
  EXPECT_NE(lines[4].find("second"), std::string::npos);
}

class NullApp final : public hft::session::Application {};

std::string acceptor_config(const std::string& extra) {
  return "[DEFAULT]\nNonStopSession=Y\nUseDataDictionary=N\nConnectionType=acceptor\nBeginString=FIX.4.4\n"
         "SenderCompID=VENUE\nSocketAcceptPort=0\nLogonTimeout=1\n" +
         extra + "\n[SESSION]\nTargetCompID=CLIENT\n\n[SESSION]\nTargetCompID=OTHER\n";
}

bool poll_for(hft::engine::Engine& e, const std::function<bool()>& done, int ms = 3000) {
  const auto end = hft::core::monotonic_ns() + std::int64_t{ms} * 1'000'000;
  while (hft::core::monotonic_ns() < end) {
    (void)e.poll();
    if (done()) return true;
  }
  return false;
}

TEST(EngineLog, file_log_path_gets_one_file_per_session_named_as_quickfix_names_it) {
  hft::test::TempDir dir("alog");
  const std::string logs = dir.sub("a/b/logs");  // created with its parents
  NullApp app;
  auto engine = hft::test::make_engine(acceptor_config("FileLogPath=" + logs + "\n"), app);
  ASSERT_TRUE(engine);
  const int port = engine->listen_port();
  const int good = hft::test::connect_from("127.0.0.1", port);
  hft::test::send_all(good, hft::test::raw_fix("A", 1, "98=0\x01" "108=30\x01", "CLIENT"));
  ASSERT_TRUE(poll_for(*engine, [&] { return engine->session(0).is_logged_on(); }));
  const int stranger = hft::test::connect_from("127.0.0.1", port);
  hft::test::send_all(stranger, hft::test::raw_fix("A", 1, "98=0\x01" "108=30\x01", "NOBODY"));
  ASSERT_TRUE(poll_for(*engine, [&] { return engine->stats().unknown_session_refused == 1; }));
  engine.reset();  // drains the writer
  ::close(good);
  ::close(stranger);

  const auto client = read_lines(logs + "/FIX.4.4-VENUE-CLIENT.event.current.log");
  ASSERT_FALSE(client.empty());
  EXPECT_EQ(count_containing(client, " FIX.4.4:VENUE->CLIENT "), client.size()) << "only this session's lines";
  EXPECT_EQ(count_containing(client, "INFO FIX.4.4:VENUE->CLIENT Received logon request"), 1u);
  EXPECT_TRUE(std::filesystem::exists(logs + "/FIX.4.4-VENUE-OTHER.event.current.log"));
  EXPECT_TRUE(read_lines(logs + "/FIX.4.4-VENUE-OTHER.event.current.log").empty());
  const auto global = read_lines(logs + "/GLOBAL.event.current.log");
  EXPECT_EQ(count_containing(global, "WARN engine refusing connection for unknown session"), 1u);
  EXPECT_EQ(count_containing(global, "VENUE->CLIENT"), 0u);
  EXPECT_FALSE(std::filesystem::exists(logs + "/FIX.4.4-VENUE-CLIENT.messages.current.log"));
}

TEST(EngineLog, a_file_log_path_that_cannot_be_created_stops_the_start_naming_it) {
  hft::test::TempDir dir("alog");
  std::ofstream(dir.sub("plain")) << "a file\n";
  const std::string bad = dir.sub("plain/logs");
  auto config = hft::engine::Config::parse(acceptor_config("FileLogPath=" + bad + "\n"), "test.cfg");
  ASSERT_TRUE(config.ok()) << config.error().message;
  NullApp app;
  auto engine = hft::engine::Engine::create(*config, app);
  ASSERT_FALSE(engine.ok());
  EXPECT_NE(engine.error().message.find("FileLogPath"), std::string::npos) << engine.error().message;
  EXPECT_NE(engine.error().message.find(bad), std::string::npos) << engine.error().message;
  EXPECT_NE(engine.error().message.find("test.cfg:"), std::string::npos) << engine.error().message;
}

// A logged-on counterparty sends 10 MB of garbled messages (each a WARN line
// without the rate limit): the log stays bounded and the good client is
// still answered.
TEST(EngineLog, a_garbage_flood_writes_a_bounded_log_and_the_good_client_is_still_answered) {
  hft::test::TempDir dir("alog");
  const std::string log_file = dir.sub("events.log");
  NullApp app;
  std::string text = "[DEFAULT]\nNonStopSession=Y\nUseDataDictionary=N\nConnectionType=acceptor\n"
                     "BeginString=FIX.4.4\nSenderCompID=VENUE\nSocketAcceptPort=0\nLogRateLimit=50\nLogFile=" +
                     log_file + "\n\n[SESSION]\nTargetCompID=CLIENT\n\n[SESSION]\nTargetCompID=FLOOD\n";
  auto engine = hft::test::make_engine(text, app);
  ASSERT_TRUE(engine);
  std::thread loop([&] { engine->run(); });
  const int port = engine->listen_port();
  const int good = hft::test::connect_from("127.0.0.1", port);
  const int flood = hft::test::connect_from("127.0.0.1", port);
  std::string inbox;
  bool ended = false;
  auto wait = [&](int fd, const std::string& field) {
    inbox.clear();
    return hft::test::read_until(
        fd, inbox, ended, [] {}, [&] { return hft::test::has_field(inbox, field); }, 5'000'000'000);
  };
  hft::test::send_all(good, hft::test::raw_fix("A", 1, "98=0\x01" "108=30\x01", "CLIENT"));
  ASSERT_TRUE(wait(good, "35=A"));
  hft::test::send_all(flood, hft::test::raw_fix("A", 1, "98=0\x01" "108=30\x01", "FLOOD"));
  ASSERT_TRUE(wait(flood, "35=A"));
  // Well framed, wrong CheckSum: garbled, ignored, one WARN line each.
  std::string garbage;
  const std::string one = "8=FIX.4.4\x01" "9=5\x01" "35=0\x01" "10=000\x01";
  while (garbage.size() < 10 * 1024 * 1024) garbage += one;
  const auto start = hft::core::monotonic_ns();
  hft::test::send_all(flood, garbage);
  hft::test::send_all(good, hft::test::raw_fix("1", 2, "112=after\x01", "CLIENT"));
  EXPECT_TRUE(wait(good, "112=after")) << "the good client is answered after the flood";
  const auto elapsed = hft::core::monotonic_ns() - start;
  engine->request_stop();
  loop.join();
  engine.reset();
  ::close(good);
  ::close(flood);
  const auto lines = read_lines(log_file);
  const std::size_t flood_lines = count_containing(lines, "FIX.4.4:VENUE->FLOOD");
  const std::size_t seconds = static_cast<std::size_t>(elapsed / 1'000'000'000) + 2;
  EXPECT_GE(count_containing(lines, "similar lines suppressed"), 1u) << "the flood was limited";
  EXPECT_LE(flood_lines, seconds * (50 + 1) + 20) << "bounded: " << garbage.size() / one.size() << " garbled messages";
  EXPECT_LE(lines.size(), flood_lines + 50);
}

}  // namespace

namespace hft::engine {
namespace {

// The writer thread's allowed CPUs, read from /proc (it names itself hft-log).
std::string writer_cpus() {
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    std::getline(comm, name);
    if (name != "hft-log") continue;
    std::ifstream status(task.path() / "status");
    for (std::string line; std::getline(status, line);) {
      if (line.rfind("Cpus_allowed_list:", 0) == 0) return line.substr(line.find_first_not_of(" \t", 18));
    }
  }
  return "";
}

TEST(AsyncLogger, the_writer_is_pinned_to_the_cpu_asked_for_and_a_missing_cpu_is_refused) {
  AsyncLoggerOptions o;
  o.cpu = 0;
  auto logger = AsyncLogger::create(o);
  ASSERT_TRUE(logger) << logger.error().message;
  // Named and pinned as the thread starts: wait for it (bounded).
  std::string cpus;
  for (int k = 0; k < 1000 && cpus != "0"; ++k) {
    cpus = writer_cpus();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(cpus, "0");
  logger->reset();
  o.cpu = 4095;
  auto refused = AsyncLogger::create(o);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("log writer: CPU 4095"), std::string::npos) << refused.error().message;
}

}  // namespace
}  // namespace hft::engine
