// Configuration keys have the effect docs/config.md promises: each test sets
// one key and watches the engine (or the settings it builds) act on it.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "hft/core/clock.hpp"
#include "hft/engine/config.hpp"
#include "hft/engine/engine.hpp"
#include "hft/engine/session_config.hpp"
#include "peer_support.hpp"
#include "support/fix_text.hpp"

namespace {

using hft::engine::Config;
using hft::engine::Engine;

class NullApp final : public hft::session::Application {};

using hft::test::raw_fix;
using hft::test::start_error;
using hft::test::utc_text;

const std::string kLogon = raw_fix("A", 1,
                                   "98=0\x01"
                                   "108=30\x01");

std::string acceptor_config(const std::string& defaults, const std::string& session = {}) {
  return "[DEFAULT]\nNonStopSession=Y\nUseDataDictionary=N\n" + defaults +
         "\n[SESSION]\nConnectionType=acceptor\nBeginString=FIX.4.4\nSenderCompID=VENUE\nTargetCompID="
         "CLIENT\n"
         "SocketAcceptPort=0\n" +
         session;
}

std::string initiator_config(int port, const std::string& defaults, const std::string& session = {}) {
  return "[DEFAULT]\nNonStopSession=Y\nUseDataDictionary=N\n" + defaults +
         "\n[SESSION]\nConnectionType=initiator\nBeginString=FIX.4.4\nSenderCompID=CLIENT\nTargetCompID="
         "VENUE\n"
         "HeartBtInt=30\nReconnectInterval=1\nSocketConnectHost=127.0.0.1\nSocketConnectPort=" +
         std::to_string(port) + "\n" + session;
}

Config parse(const std::string& text) {
  auto config = Config::parse(text, "test.cfg");
  EXPECT_TRUE(config.ok()) << (config.ok() ? "" : config.error().message);
  return config ? std::move(*config) : Config{};
}

std::unique_ptr<Engine> make(const std::string& text, hft::session::Application& app,
                             hft::session::Logger* log = nullptr) {
  return hft::test::make_engine(text, app, log);
}


hft::engine::SessionSetup setup_of(const std::string& text) {
  const Config config = parse(text);
  hft::engine::DictionaryCache cache;
  auto setup = hft::engine::session_setup(config.sessions().at(0), cache);
  EXPECT_TRUE(setup.ok()) << (setup.ok() ? "" : setup.error().message);
  return setup ? std::move(*setup) : hft::engine::SessionSetup{};
}

std::string setup_error(const std::string& text) {
  auto config = Config::parse(text, "test.cfg");
  if (!config) return config.error().message;
  hft::engine::DictionaryCache cache;
  auto setup = hft::engine::session_setup(config->sessions().at(0), cache);
  return setup ? std::string() : setup.error().message;
}

int connect_to(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  return fd;
}

// Polls `engine` while reading `fd` until `done(received, ended)` or 5 s.
template <typename Done>
bool poll_reading(Engine& engine, int fd, std::string& received, bool& ended, Done done,
                  std::int64_t limit_ns = 5'000'000'000) {
  const auto start = hft::core::monotonic_ns();
  char buf[4096];
  while (!done()) {
    if (hft::core::monotonic_ns() - start > limit_ns) return false;
    engine.poll();
    if (ended) continue;
    const ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n > 0) received.append(buf, static_cast<std::size_t>(n));
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) ended = true;
  }
  return true;
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

struct TempDir {
  TempDir() : path(std::filesystem::temp_directory_path() / ("hft-keys-test-" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::filesystem::path path;
};

// --- LogFile / LogLevel -------------------------------------------------------

// A logon from CLIENT (INFO events) and a connection for an unknown session
// (a WARN event from the engine), with the event log in a file.
std::string events_with_level(const std::string& level_line) {
  TempDir dir;
  const auto log = dir.path / "events.log";
  NullApp app;
  auto engine = make(acceptor_config("LogFile=" + log.string() + "\n" + level_line), app);
  if (!engine) return {};
  const int good = connect_to(engine->listen_port());
  const int stranger = connect_to(engine->listen_port());
  EXPECT_EQ(::send(good, kLogon.data(), kLogon.size(), MSG_NOSIGNAL), static_cast<ssize_t>(kLogon.size()));
  const std::string unknown = raw_fix("A", 1,
                                      "98=0\x01"
                                      "108=30\x01",
                                      "STRANGER");
  EXPECT_EQ(::send(stranger, unknown.data(), unknown.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(unknown.size()));
  const auto start = hft::core::monotonic_ns();
  while ((!engine->session(0).is_logged_on() || engine->stats().unknown_session_refused == 0) &&
         hft::core::monotonic_ns() - start < 5'000'000'000) {
    engine->poll();
  }
  EXPECT_TRUE(engine->session(0).is_logged_on());
  EXPECT_EQ(engine->stats().unknown_session_refused, 1u);
  engine.reset();
  ::close(good);
  ::close(stranger);
  return read_file(log);
}

TEST(ConfigKeys, log_file_receives_the_event_log_at_the_log_level) {
  const std::string info = events_with_level("LogLevel=info");
  EXPECT_NE(info.find("INFO FIX.4.4:VENUE->CLIENT Received logon request"), std::string::npos) << info;
  EXPECT_NE(info.find("WARN"), std::string::npos) << info;
  EXPECT_NE(info.find("refusing connection for unknown session"), std::string::npos) << info;

  const std::string warn = events_with_level("LogLevel=warn");
  EXPECT_EQ(warn.find("INFO"), std::string::npos) << warn;
  EXPECT_NE(warn.find("refusing connection for unknown session"), std::string::npos) << warn;

  const std::string off = events_with_level("LogLevel=off");
  EXPECT_EQ(off, "");
}

TEST(ConfigKeys, a_log_file_that_cannot_be_opened_stops_the_start_naming_the_key) {
  const std::string error = start_error(acceptor_config("LogFile=/nonexistent-dir/x/events.log"));
  EXPECT_NE(error.find("test.cfg:4: LogFile: /nonexistent-dir/x/events.log"), std::string::npos) << error;
}

struct Capture final : hft::session::Logger {
  [[nodiscard]] bool enabled(hft::session::LogLevel) const noexcept override { return true; }
  void log(hft::session::LogLevel level, const hft::session::SessionID&,
           std::string_view text) noexcept override {
    lines.push_back(std::string(hft::session::to_string(level)) + " " + std::string(text));
  }
  std::vector<std::string> lines;
};

std::vector<std::string> app_logger_lines(const std::string& level_line) {
  Capture capture;
  NullApp app;
  auto engine = make(acceptor_config(level_line), app, &capture);
  if (!engine) return {};
  const int fd = connect_to(engine->listen_port());
  EXPECT_EQ(::send(fd, kLogon.data(), kLogon.size(), MSG_NOSIGNAL), static_cast<ssize_t>(kLogon.size()));
  const auto start = hft::core::monotonic_ns();
  while (!engine->session(0).is_logged_on() && hft::core::monotonic_ns() - start < 5'000'000'000)
    engine->poll();
  EXPECT_TRUE(engine->session(0).is_logged_on());
  engine.reset();
  ::close(fd);
  return capture.lines;
}

TEST(ConfigKeys, log_level_filters_the_applications_logger_only_when_set) {
  const auto unset = app_logger_lines("");
  EXPECT_FALSE(unset.empty());
  const auto error_only = app_logger_lines("LogLevel=error");
  for (const auto& line : error_only) EXPECT_EQ(line.rfind("ERROR", 0), 0u) << line;
  EXPECT_LT(error_only.size(), unset.size());
}

// --- EngineThreadCore -----------------------------------------------------------

TEST(ConfigKeys, engine_thread_core_pins_the_thread_that_runs_the_engine) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
  int cpu = -1;
  for (int i = 0; i < CPU_SETSIZE && cpu < 0; ++i) {
    if (CPU_ISSET(i, &allowed)) cpu = i;
  }
  ASSERT_GE(cpu, 0);
  NullApp app;
  auto engine = make(acceptor_config("EngineThreadCore=" + std::to_string(cpu)), app);
  ASSERT_TRUE(engine);
  cpu_set_t after;
  CPU_ZERO(&after);
  std::thread runner([&] {
    engine->request_stop();  // run() returns after its start-up and shutdown
    engine->run();
    (void)sched_getaffinity(0, sizeof after, &after);
  });
  runner.join();
  EXPECT_EQ(CPU_COUNT(&after), 1);
  EXPECT_TRUE(CPU_ISSET(cpu, &after));
}

// --- MaxConnections ---------------------------------------------------------------

TEST(ConfigKeys, max_connections_refuses_a_session_beyond_the_limit) {
  NullApp app;
  auto engine = make(acceptor_config("MaxConnections=1",
                                     "\n[SESSION]\nConnectionType=acceptor\nBeginString=FIX.4.4\n"
                                     "SenderCompID=VENUE\nTargetCompID=OTHER\nSocketAcceptPort=0\n"),
                     app);
  ASSERT_TRUE(engine);
  const int first = connect_to(engine->listen_port());
  std::string received;
  bool ended = false;
  ASSERT_EQ(::send(first, kLogon.data(), kLogon.size(), MSG_NOSIGNAL), static_cast<ssize_t>(kLogon.size()));
  ASSERT_TRUE(
      poll_reading(*engine, first, received, ended, [&] { return engine->session(0).is_logged_on(); }));
  const int second = connect_to(engine->listen_port());
  const std::string other = raw_fix("A", 1,
                                    "98=0\x01"
                                    "108=30\x01",
                                    "OTHER");
  ASSERT_EQ(::send(second, other.data(), other.size(), MSG_NOSIGNAL), static_cast<ssize_t>(other.size()));
  std::string second_received;
  bool second_ended = false;
  EXPECT_TRUE(poll_reading(*engine, second, second_received, second_ended, [&] { return second_ended; }))
      << "the session over MaxConnections was let in";
  EXPECT_TRUE(second_received.empty());
  EXPECT_EQ(engine->stats().max_connections_refused, 1u);
  EXPECT_FALSE(engine->session(1).is_connected());
  // The first one still works.
  EXPECT_TRUE(engine->session(0).is_logged_on());
  ::close(first);
  ::close(second);
}

// A non-blocking listening socket on 127.0.0.1 and an ephemeral port
// (written to `port`); -1 on failure.
int loopback_listener(std::uint16_t& port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd, 4) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    if (fd >= 0) ::close(fd);
    return -1;
  }
  port = ntohs(a.sin_port);
  return fd;
}

// --- SendResetSeqNumFlag ----------------------------------------------------------

TEST(ConfigKeys, send_reset_seq_num_flag_makes_the_initiator_send_141_y_from_sequence_1) {
  std::uint16_t port = 0;
  const int listener = loopback_listener(port);
  ASSERT_GE(listener, 0);
  NullApp app;
  auto engine = make(initiator_config(port, "", "SendResetSeqNumFlag=Y\n"), app);
  ASSERT_TRUE(engine);
  engine->session(0).set_next_sender_seq(7);  // a reset must bring it back to 1
  int peer = -1;
  const auto start = hft::core::monotonic_ns();
  while (peer < 0 && hft::core::monotonic_ns() - start < 5'000'000'000) {
    engine->poll();
    peer = ::accept4(listener, nullptr, nullptr, SOCK_NONBLOCK);
  }
  ASSERT_GE(peer, 0);
  std::string logon;
  bool ended = false;
  ASSERT_TRUE(poll_reading(*engine, peer, logon, ended, [&] {
    return logon.find(
               "\x01"
               "10=") != std::string::npos;
  }));
  EXPECT_NE(logon.find("\x01"
                       "35=A\x01"),
            std::string::npos)
      << logon;
  EXPECT_NE(logon.find("\x01"
                       "34=1\x01"),
            std::string::npos)
      << logon;
  EXPECT_NE(logon.find("\x01"
                       "141=Y\x01"),
            std::string::npos)
      << logon;
  ::close(peer);
  ::close(listener);
}

TEST(ConfigKeys, send_reset_seq_num_flag_on_an_acceptor_is_an_error_naming_the_line) {
  const std::string error = setup_error(acceptor_config("", "SendResetSeqNumFlag=Y\n"));
  EXPECT_NE(error.find("test.cfg:11: SendResetSeqNumFlag: initiator only"), std::string::npos) << error;
}

// --- RefreshOnLogon -------------------------------------------------------------

TEST(ConfigKeys, refresh_on_logon_is_refused_as_unsupported) {
  const std::string error = start_error(acceptor_config("RefreshOnLogon=Y"));
  EXPECT_NE(error.find("test.cfg:4: RefreshOnLogon: Not supported"), std::string::npos) << error;
  EXPECT_EQ(start_error(acceptor_config("RefreshOnLogon=N")), "");
}

// --- UseLocalTime -----------------------------------------------------------------

struct ScopedTz {
  explicit ScopedTz(const char* zone) {
    if (const char* old = std::getenv("TZ")) saved = old, had = true;
    ::setenv("TZ", zone, 1);
  }
  ~ScopedTz() {
    if (had)
      ::setenv("TZ", saved.c_str(), 1);
    else
      ::unsetenv("TZ");
  }
  std::string saved;
  bool had = false;
};

constexpr std::int64_t kJuly1 = 1'782'864'000;  // 2026-07-01T00:00:00Z (New York is UTC-4 then)
constexpr std::int64_t kSec = 1'000'000'000;

TEST(ConfigKeys, use_local_time_reads_the_schedule_in_the_hosts_time_zone) {
  ScopedTz tz("America/New_York");
  const std::string schedule = "[DEFAULT]\nUseDataDictionary=N\nStartTime=09:00:00\nEndTime=17:00:00\n";
  const std::string session =
      "[SESSION]\nConnectionType=acceptor\nBeginString=FIX.4.4\nSenderCompID=V\nTargetCompID="
      "C\nSocketAcceptPort=0\n";
  const auto local = setup_of(schedule + "UseLocalTime=Y\n" + session).settings.schedule;
  EXPECT_FALSE(local.is_open((kJuly1 + 12 * 3600) * kSec));  // 08:00 in New York
  EXPECT_TRUE(local.is_open((kJuly1 + 20 * 3600) * kSec));   // 16:00 in New York
  const auto utc = setup_of(schedule + session).settings.schedule;
  EXPECT_TRUE(utc.is_open((kJuly1 + 12 * 3600) * kSec));
  EXPECT_FALSE(utc.is_open((kJuly1 + 20 * 3600) * kSec));
}

// --- AppDataDictionary.<version> --------------------------------------------------

std::string fixt_config(const std::string& dictionaries) {
  const std::string spec = std::string(HFT_SHARED_DIR) + "/fix/spec/";
  return "[DEFAULT]\nNonStopSession=Y\n[SESSION]\nConnectionType=acceptor\nBeginString=FIXT.1.1\n"
         "SenderCompID=V\nTargetCompID=C\nSocketAcceptPort=0\nDefaultApplVerID=FIX.5.0SP2\n"
         "TransportDataDictionary=" +
         spec + "FIXT11.xml\n" + dictionaries;
}

TEST(ConfigKeys, app_data_dictionary_for_the_default_appl_ver_id_is_used) {
  const std::string spec = std::string(HFT_SHARED_DIR) + "/fix/spec/";
  if (!std::filesystem::exists(spec + "FIX50SP2.xml")) GTEST_SKIP() << "no FIX50SP2.xml under " << spec;
  const auto setup = setup_of(fixt_config("AppDataDictionary.FIX.5.0SP2=" + spec + "FIX50SP2.xml\n"));
  EXPECT_NE(setup.settings.app_dictionary, nullptr);
}

TEST(ConfigKeys, app_data_dictionary_for_another_version_is_an_error_naming_the_line) {
  const std::string spec = std::string(HFT_SHARED_DIR) + "/fix/spec/";
  const std::string error = setup_error(fixt_config("AppDataDictionary.FIX.5.0=" + spec + "FIX50.xml\n"));
  EXPECT_NE(error.find("test.cfg:11: AppDataDictionary.FIX.5.0: libhft validates one application version"),
            std::string::npos)
      << error;
}

// --- LogonTime / LogoutTime ---------------------------------------------------------

// "HH:MM:SS" of now + offset seconds (UTC), wrapping around midnight.
std::string time_from_now(std::int64_t offset_s) {
  return utc_text(hft::core::realtime_ns() / kSec + offset_s, "%H:%M:%S");
}

TEST(ConfigKeys, an_initiator_does_not_connect_outside_its_logon_time) {
  std::uint16_t port = 0;
  const int listener = loopback_listener(port);
  ASSERT_GE(listener, 0);
  NullApp app;
  // The window opens in two hours.
  auto engine = make(initiator_config(port, "LogonTime=" + time_from_now(7200) +
                                                             "\nLogoutTime=" + time_from_now(10800)),
                     app);
  ASSERT_TRUE(engine);
  const auto start = hft::core::monotonic_ns();
  int peer = -1;
  while (peer < 0 && hft::core::monotonic_ns() - start < 300'000'000) {
    engine->poll();
    peer = ::accept(listener, nullptr, nullptr);
  }
  EXPECT_LT(peer, 0) << "connected outside LogonTime..LogoutTime";
  if (peer >= 0) ::close(peer);
  ::close(listener);
}

TEST(ConfigKeys, an_acceptor_refuses_a_logon_outside_its_logon_time) {
  NullApp app;
  auto engine =
      make(acceptor_config("LogonTime=" + time_from_now(7200) + "\nLogoutTime=" + time_from_now(10800)), app);
  ASSERT_TRUE(engine);
  const int fd = connect_to(engine->listen_port());
  ASSERT_EQ(::send(fd, kLogon.data(), kLogon.size(), MSG_NOSIGNAL), static_cast<ssize_t>(kLogon.size()));
  std::string received;
  bool ended = false;
  EXPECT_TRUE(poll_reading(*engine, fd, received, ended, [&] { return ended; }));
  EXPECT_EQ(received.find("35=A"), std::string::npos);
  EXPECT_FALSE(engine->session(0).is_logged_on());
  EXPECT_EQ(engine->stats().outside_logon_time_refused, 1u);
  ::close(fd);
}

TEST(ConfigKeys, a_logged_on_session_logs_out_at_logout_time) {
  NullApp app;
  // The window closes two seconds from now (TimerIntervalMs checks it).
  auto engine =
      make(acceptor_config("LogonTime=" + time_from_now(-3600) + "\nLogoutTime=" + time_from_now(2)), app);
  ASSERT_TRUE(engine);
  const int fd = connect_to(engine->listen_port());
  ASSERT_EQ(::send(fd, kLogon.data(), kLogon.size(), MSG_NOSIGNAL), static_cast<ssize_t>(kLogon.size()));
  std::string received;
  bool ended = false;
  ASSERT_TRUE(poll_reading(*engine, fd, received, ended, [&] { return engine->session(0).is_logged_on(); }));
  ASSERT_TRUE(poll_reading(
      *engine, fd, received, ended,
      [&] {
        return received.find(
                   "\x01"
                   "35=5\x01") != std::string::npos;
      },
      5'000'000'000))
      << "no Logout at LogoutTime";
  ::close(fd);
}

TEST(ConfigKeys, logon_time_outside_start_and_end_time_is_an_error_naming_the_line) {
  const std::string text =
      "[DEFAULT]\nUseDataDictionary=N\nStartTime=08:00:00\nEndTime=17:00:00\nLogonTime=07:00:00\n"
      "[SESSION]\nConnectionType=acceptor\nBeginString=FIX.4.4\nSenderCompID=V\nTargetCompID="
      "C\nSocketAcceptPort=0\n";
  const std::string error = setup_error(text);
  EXPECT_NE(error.find(
                "test.cfg:5: LogonTime: 07:00:00 is not between StartTime (08:00:00) and EndTime (17:00:00)"),
            std::string::npos)
      << error;
  const std::string nonstop = setup_error(acceptor_config("LogonTime=07:00:00"));
  EXPECT_NE(nonstop.find("LogoutTime: required with LogonTime"), std::string::npos) << nonstop;
}

// --- MaxFieldsPerMessage -------------------------------------------------------------

TEST(ConfigKeys, max_fields_per_message_rejects_a_longer_message_and_the_session_goes_on) {
  NullApp app;
  auto engine = make(acceptor_config("MaxFieldsPerMessage=40"), app);
  ASSERT_TRUE(engine);
  EXPECT_EQ(engine->session(0).settings().max_fields_per_message, 40u);
  const int fd = connect_to(engine->listen_port());
  std::string received;
  bool ended = false;
  ASSERT_EQ(::send(fd, kLogon.data(), kLogon.size(), MSG_NOSIGNAL), static_cast<ssize_t>(kLogon.size()));
  ASSERT_TRUE(poll_reading(*engine, fd, received, ended, [&] { return engine->session(0).is_logged_on(); }));
  std::string many;
  for (int i = 0; i < 50; ++i) many += "58=x\x01";
  const std::string big = raw_fix("1", 2, "112=A\x01" + many);
  const std::string probe = raw_fix("1", 3, "112=B\x01");
  ASSERT_EQ(::send(fd, big.data(), big.size(), MSG_NOSIGNAL), static_cast<ssize_t>(big.size()));
  ASSERT_EQ(::send(fd, probe.data(), probe.size(), MSG_NOSIGNAL), static_cast<ssize_t>(probe.size()));
  EXPECT_TRUE(poll_reading(*engine, fd, received, ended, [&] {
    return received.find(
               "\x01"
               "112=B\x01") != std::string::npos;
  })) << "the message after the long one is answered";
  EXPECT_NE(received.find("\x01"
                          "58=Message has more than 40 fields (MaxFieldsPerMessage)\x01"),
            std::string::npos);
  EXPECT_NE(received.find("\x01"
                          "373=99\x01"),
            std::string::npos);
  EXPECT_EQ(engine->session(0).next_target_seq(), 4u);
  ::close(fd);
}

TEST(ConfigKeys, max_fields_per_message_out_of_range_is_an_error_naming_the_line) {
  const std::string error = start_error(acceptor_config("MaxFieldsPerMessage=0"));
  EXPECT_NE(error.find("test.cfg:4: MaxFieldsPerMessage"), std::string::npos) << error;
  EXPECT_EQ(setup_of(acceptor_config("")).settings.max_fields_per_message, 16384u)
      << "the documented default";
}

// --- Journal ------------------------------------------------------------------

TEST(ConfigKeys, journal_evict_finished_is_on_by_default_and_n_keeps_finished_segments_cached) {
  const std::string store = "FileStorePath=" + (std::filesystem::temp_directory_path() / "unused").string() + "\n";
  const auto on = setup_of(acceptor_config(store)).store;
  ASSERT_TRUE(on.persistent);
  EXPECT_TRUE(on.journal.evict_finished) << "the documented default";
  EXPECT_FALSE(setup_of(acceptor_config(store + "JournalEvictFinished=N")).store.journal.evict_finished);
  const std::string error = setup_error(acceptor_config(store + "JournalEvictFinished=maybe"));
  EXPECT_NE(error.find("JournalEvictFinished"), std::string::npos) << error;
}

TEST(ConfigKeys, journal_evict_written_follows_segment_growth_unless_set) {
  const std::string store = "FileStorePath=" + (std::filesystem::temp_directory_path() / "unused").string() + "\n";
  // Growing segments (the default): many sessions, on.
  const auto growing = setup_of(acceptor_config(store)).store.journal;
  ASSERT_LT(growing.initial_segment_size, growing.segment_size);
  EXPECT_TRUE(growing.evict_written) << "the documented default with growing segments";
  EXPECT_EQ(growing.evict_written_keep, 64u * 1024);
  EXPECT_EQ(growing.evict_written_chunk, 256u * 1024);
  // Full-size segments (the single-session latency setting): off.
  const std::string full = store + "JournalSegmentSize=8M\nJournalInitialSegmentSize=8M\n";
  EXPECT_FALSE(setup_of(acceptor_config(full)).store.journal.evict_written) << "the documented default, full size";
  // Set either way, it wins.
  EXPECT_TRUE(setup_of(acceptor_config(full + "JournalEvictWritten=Y")).store.journal.evict_written);
  EXPECT_FALSE(setup_of(acceptor_config(store + "JournalEvictWritten=N")).store.journal.evict_written);
  const std::string error = setup_error(acceptor_config(store + "JournalEvictWritten=sometimes"));
  EXPECT_NE(error.find("JournalEvictWritten"), std::string::npos) << error;
}

TEST(ConfigKeys, journal_large_folios_is_off_unless_set) {
  const std::string store =
      "FileStorePath=" + (std::filesystem::temp_directory_path() / "unused").string() + "\n";
  // Off by default, growing or full-size segments (docs/journal.md: on the
  // lab's VM it halved the 1,000-session rate).
  EXPECT_FALSE(setup_of(acceptor_config(store)).store.journal.large_folios) << "the documented default";
  const std::string full = store + "JournalSegmentSize=8M\nJournalInitialSegmentSize=8M\n";
  EXPECT_FALSE(setup_of(acceptor_config(full)).store.journal.large_folios) << "the documented default, full size";
  // Set, it is taken either way.
  EXPECT_TRUE(setup_of(acceptor_config(store + "JournalLargeFolios=Y")).store.journal.large_folios);
  EXPECT_TRUE(setup_of(acceptor_config(full + "JournalLargeFolios=Y")).store.journal.large_folios);
  EXPECT_FALSE(setup_of(acceptor_config(store + "JournalLargeFolios=N")).store.journal.large_folios);
  const std::string error = setup_error(acceptor_config(store + "JournalLargeFolios=big"));
  EXPECT_NE(error.find("JournalLargeFolios"), std::string::npos) << error;
}

TEST(ConfigKeys, journal_write_behind_is_on_for_a_shared_journal_and_refused_with_syncing_durability) {
  const std::string store =
      "FileStorePath=" + (std::filesystem::temp_directory_path() / "unused").string() + "\n";
  const std::string shared = store + "JournalLayout=shared\n";
  // The documented defaults: Y for the one journal of a shared layout, N for
  // per-session journals (each would have buffers of its own).
  EXPECT_TRUE(setup_of(acceptor_config(shared)).store.journal.write_behind)
      << "the documented default, shared";
  EXPECT_FALSE(setup_of(acceptor_config(store)).store.journal.write_behind)
      << "the documented default, session";
  EXPECT_FALSE(setup_of(acceptor_config(shared + "JournalDurability=fsync\n")).store.journal.write_behind)
      << "the documented default with fsync";
  // Set, it wins.
  EXPECT_TRUE(setup_of(acceptor_config(store + "JournalWriteBehind=Y\n")).store.journal.write_behind);
  EXPECT_FALSE(setup_of(acceptor_config(shared + "JournalWriteBehind=N\n")).store.journal.write_behind);
  // Refused with durability fsync or sync, naming both keys.
  const std::string error =
      setup_error(acceptor_config(store + "JournalWriteBehind=Y\nJournalDurability=sync\n"));
  EXPECT_NE(error.find("JournalWriteBehind"), std::string::npos) << error;
  EXPECT_NE(error.find("JournalDurability"), std::string::npos) << error;
  EXPECT_NE(setup_error(acceptor_config(store + "JournalWriteBehind=maybe")).find("JournalWriteBehind"),
            std::string::npos);
}

// --- Throttling ---------------------------------------------------------------

TEST(ConfigKeys, throttling_is_off_by_default_and_the_keys_set_the_session_settings) {
  const auto off = setup_of(acceptor_config("")).settings;
  EXPECT_EQ(off.outgoing_throttle_limit, 0u);
  EXPECT_EQ(off.incoming_throttle_limit, 0u);
  EXPECT_EQ(off.outgoing_throttle_interval_ms, 1000u);
  EXPECT_EQ(off.incoming_throttle_interval_ms, 1000u);
  EXPECT_EQ(off.outgoing_throttle_action, hft::session::OutgoingThrottleAction::kReject);
  EXPECT_EQ(off.outgoing_throttle_queue_size, 1000u);
  EXPECT_EQ(off.incoming_throttle_action, hft::session::IncomingThrottleAction::kReject);
  // [DEFAULT] is inherited; the session's own keys win.
  const auto on = setup_of(acceptor_config("OutgoingThrottleLimit=50\nOutgoingThrottleIntervalMs=250\n"
                                           "OutgoingThrottleAction=queue\nIncomingThrottleAction=logout",
                                           "OutgoingThrottleQueueSize=7\nIncomingThrottleLimit=20\n"
                                           "IncomingThrottleIntervalMs=2000\n"))
                      .settings;
  EXPECT_EQ(on.outgoing_throttle_limit, 50u);
  EXPECT_EQ(on.outgoing_throttle_interval_ms, 250u);
  EXPECT_EQ(on.outgoing_throttle_action, hft::session::OutgoingThrottleAction::kQueue);
  EXPECT_EQ(on.outgoing_throttle_queue_size, 7u);
  EXPECT_EQ(on.incoming_throttle_limit, 20u);
  EXPECT_EQ(on.incoming_throttle_interval_ms, 2000u);
  EXPECT_EQ(on.incoming_throttle_action, hft::session::IncomingThrottleAction::kLogout);
  EXPECT_EQ(setup_of(acceptor_config("IncomingThrottleAction=disconnect")).settings.incoming_throttle_action,
            hft::session::IncomingThrottleAction::kDisconnect);
}

TEST(ConfigKeys, throttle_values_out_of_range_are_errors_naming_the_line_and_key) {
  std::string e = start_error(acceptor_config("OutgoingThrottleLimit=1000001"));
  EXPECT_NE(e.find("test.cfg:4: OutgoingThrottleLimit"), std::string::npos) << e;
  e = start_error(acceptor_config("IncomingThrottleIntervalMs=0"));
  EXPECT_NE(e.find("test.cfg:4: IncomingThrottleIntervalMs"), std::string::npos) << e;
  e = start_error(acceptor_config("OutgoingThrottleIntervalMs=60001"));
  EXPECT_NE(e.find("OutgoingThrottleIntervalMs"), std::string::npos) << e;
  e = start_error(acceptor_config("OutgoingThrottleQueueSize=0"));
  EXPECT_NE(e.find("OutgoingThrottleQueueSize"), std::string::npos) << e;
  e = start_error(acceptor_config("OutgoingThrottleAction=drop"));
  EXPECT_NE(e.find("OutgoingThrottleAction"), std::string::npos) << e;
  EXPECT_NE(e.find("queue"), std::string::npos) << "the choices are named: " << e;
  e = start_error(acceptor_config("IncomingThrottleAction=reject-all"));
  EXPECT_NE(e.find("IncomingThrottleAction"), std::string::npos) << e;
  // Held messages would hold back the Heartbeats: the window must be shorter.
  e = setup_error(initiator_config(9,
                                   "OutgoingThrottleLimit=10\nOutgoingThrottleAction=queue\n"
                                   "OutgoingThrottleIntervalMs=30000"));
  EXPECT_NE(
      e.find("OutgoingThrottleIntervalMs: 30000 ms with OutgoingThrottleAction=queue must be shorter than "
             "HeartBtInt (30 s)"),
      std::string::npos)
      << e;
}

TEST(ConfigKeys, incoming_throttle_limit_rejects_what_is_over_it_over_tcp_and_the_session_goes_on) {
  NullApp app;
  auto engine = make(acceptor_config("IncomingThrottleLimit=2\nIncomingThrottleIntervalMs=60000"), app);
  ASSERT_TRUE(engine);
  const int fd = connect_to(engine->listen_port());
  std::string received;
  bool ended = false;
  ASSERT_EQ(::send(fd, kLogon.data(), kLogon.size(), MSG_NOSIGNAL), static_cast<ssize_t>(kLogon.size()));
  ASSERT_TRUE(poll_reading(*engine, fd, received, ended, [&] { return engine->session(0).is_logged_on(); }));
  std::string orders;
  for (int seq = 2; seq <= 4; ++seq) {
    orders += raw_fix("D", seq,
                      "11=O" + std::to_string(seq) +
                          "\x01"
                          "55=X\x01"
                          "54=1\x01"
                          "40=1\x01");
  }
  orders += raw_fix("1", 5, "112=probe\x01");
  ASSERT_EQ(::send(fd, orders.data(), orders.size(), MSG_NOSIGNAL), static_cast<ssize_t>(orders.size()));
  ASSERT_TRUE(poll_reading(*engine, fd, received, ended,
                           [&] { return received.find("112=probe\x01") != std::string::npos; }));
  // The two within the limit get the application's answer (unsupported
  // message type: NullApp), the third the throttle's Reject.
  EXPECT_NE(received.find("\x01"
                          "35=3\x01"),
            std::string::npos);
  EXPECT_NE(received.find("\x01"
                          "45=4\x01"
                          "58=Throttle limit exceeded\x01"
                          "372=D\x01"
                          "373=99\x01"),
            std::string::npos)
      << received;
  EXPECT_EQ(engine->session(0).counters().incoming_throttled, 1u);
  EXPECT_EQ(engine->session(0).next_target_seq(), 6u);
  EXPECT_EQ(engine->session(0).counters().resend_requests_sent, 0u);
  ::close(fd);
}

// --- SocketCloseTimeoutMs -----------------------------------------------------------

TEST(ConfigKeys, socket_close_timeout_sets_the_reactors_close_deadline) {
  const Config config = parse(acceptor_config("SocketCloseTimeoutMs=250"));
  auto options = hft::engine::reactor_options(config);
  ASSERT_TRUE(options.ok());
  EXPECT_EQ(options->close_timeout_ns, 250'000'000);
  auto defaults = hft::engine::reactor_options(parse(acceptor_config("")));
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->close_timeout_ns, 2'000'000'000);
}

}  // namespace
