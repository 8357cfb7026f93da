// Many sessions per engine: an acceptor with 150 journaled sessions and an
// initiator with 80, both in this process. A session's store holds only its
// sequence numbers until it journals a message, every configured session can
// be connected at once without setting MaxConnections, the journal service
// serves all of them (more than 64 journals), and a start-up that fails
// leaves nothing half-created.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "engine/loopback.hpp"
#include "engine/peer_support.hpp"
#include "hft/core/trace.hpp"
#include "hft/engine/engine.hpp"
#include "hft/store/journal_reader.hpp"
#include "support/temp_dir.hpp"

namespace hft::engine {
namespace {

namespace fs = std::filesystem;

struct Quiet final : session::Application {
  session::Decision from_app(session::Session&, const codec::MessageView&) noexcept override {
    ++received;
    return session::Decision::accept();
  }
  int received = 0;
};

bool logged_on(Engine& e, const char* begin, const char* sender, const char* target) {
  session::Session* s = e.find(session::SessionID{begin, sender, target, ""});
  return s != nullptr && s->is_logged_on();
}

std::string acceptor_config(const std::string& store, int sessions, int port = 0) {
  std::ostringstream s;
  s << "[DEFAULT]\nConnectionType=acceptor\nBeginString=FIX.4.4\nSenderCompID=VENUE\nHeartBtInt=30\n"
    << "NonStopSession=Y\nUseDataDictionary=N\nSocketAcceptPort=" << port << "\nFileStorePath=" << store
    << "\nLogLevel=error\n";
  for (int i = 1; i <= sessions; ++i) s << "[SESSION]\nTargetCompID=C" << i << "\n";
  return s.str();
}

std::string initiator_config(const std::string& store, int sessions, int port) {
  std::ostringstream s;
  s << "[DEFAULT]\nConnectionType=initiator\nBeginString=FIX.4.4\nTargetCompID=VENUE\nHeartBtInt=30\n"
    << "NonStopSession=Y\nUseDataDictionary=N\nSocketConnectHost=127.0.0.1\nSocketConnectPort=" << port
    << "\nFileStorePath=" << store << "\nReconnectInterval=1\nLogLevel=error\n";
  for (int i = 1; i <= sessions; ++i) s << "[SESSION]\nSenderCompID=C" << i << "\n";
  return s.str();
}

std::set<std::string> entries(const fs::path& dir) {
  std::set<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) names.insert(e.path().filename().string());
  return names;
}

// Polls both engines until every session of `client` is logged on (60 s at most).
bool log_on_all(Engine& venue, Engine& client) {
  auto all_on = [&] {
    for (std::size_t i = 0; i < client.session_count(); ++i)
      if (!client.session(i).is_logged_on()) return false;
    return true;
  };
  return test::poll_until(venue, client, all_on, 60'000'000'000);
}

TEST(ManySessions, sessions_journal_nothing_until_they_log_on_and_all_can_be_connected_at_once) {
  hft::test::TempDir dir;
  const fs::path venue_store = fs::path(dir.path()) / "venue";
  const fs::path client_store = fs::path(dir.path()) / "client";
  Quiet venue_app, client_app;
  auto venue = hft::test::make_engine(acceptor_config(venue_store, 150), venue_app);
  ASSERT_TRUE(venue);
  ASSERT_EQ(venue->session_count(), 150u);
  // Before any Logon: one directory per session, holding its sequence numbers only.
  EXPECT_EQ(entries(venue_store).size(), 150u);
  EXPECT_EQ(entries(venue_store / "FIX.4.4-VENUE-C77"), std::set<std::string>{"seqnums.dat"});

  // 80 initiators: more connections than the old fixed default of 64, and
  // 2 x (150 + 80) journals for the two engines' services.
  auto client = hft::test::make_engine(initiator_config(client_store, 80, venue->listen_port()), client_app);
  ASSERT_TRUE(client);
  ASSERT_TRUE(log_on_all(*venue, *client));
  EXPECT_EQ(venue->stats().max_connections_refused, 0u);
  std::size_t venue_on = 0;
  for (std::size_t i = 0; i < venue->session_count(); ++i) venue_on += venue->session(i).is_logged_on() ? 1 : 0;
  EXPECT_EQ(venue_on, 80u);

  // Sessions that logged on journaled their Logons (one small first segment
  // per direction); the others still hold nothing.
  const fs::path on = venue_store / "FIX.4.4-VENUE-C80";
  EXPECT_EQ(entries(on), (std::set<std::string>{"inbound", "outbound", "seqnums.dat"}));
  EXPECT_EQ(entries(on / "outbound"), std::set<std::string>{"00000001.seg"});
  EXPECT_EQ(fs::file_size(on / "outbound" / "00000001.seg"), 256u * 1024);  // JournalInitialSegmentSize
  EXPECT_EQ(entries(venue_store / "FIX.4.4-VENUE-C81"), std::set<std::string>{"seqnums.dat"});
  EXPECT_EQ(entries(client_store / "FIX.4.4-C1-VENUE" / "inbound"), std::set<std::string>{"00000001.seg"});
  client->logout_all(5'000'000'000);
}

// An engine's timer round (heartbeats, test requests, timeouts, logon
// windows) goes over its sessions 64 at a time, the rest at the next polls:
// over 1,000 sessions in one go it held the engine thread ~240 us every
// TimerIntervalMs. Every session still gets its timers each interval.
TEST(ManySessions, the_timer_round_serves_every_session_a_slice_at_a_time) {
  hft::test::TempDir dir;
  Quiet venue_app, client_app;
  auto venue =
      hft::test::make_engine(acceptor_config((fs::path(dir.path()) / "venue").string(), 150), venue_app);
  ASSERT_TRUE(venue);
  std::string client_cfg =
      initiator_config((fs::path(dir.path()) / "client").string(), 80, venue->listen_port());
  client_cfg.replace(client_cfg.find("HeartBtInt=30"), 13, "HeartBtInt=1");
  auto client = hft::test::make_engine(client_cfg, client_app);
  ASSERT_TRUE(client);
  ASSERT_TRUE(log_on_all(*venue, *client));
  ASSERT_TRUE(core::trace::enable(1 << 16));
  std::vector<std::uint64_t> start(client->session_count());
  for (std::size_t i = 0; i < start.size(); ++i) start[i] = client->session(i).next_target_seq();
  // Every one of the venue's 80 logged-on sessions sends its Heartbeats
  // (HeartBtInt=1): two of them reach each client session.
  auto two_heartbeats = [&] {
    for (std::size_t i = 0; i < start.size(); ++i)
      if (client->session(i).next_target_seq() < start[i] + 2) return false;
    return true;
  };
  EXPECT_TRUE(test::poll_until(*venue, *client, two_heartbeats, 20'000'000'000));
  std::vector<core::TraceRecord> records;
  (void)core::trace::drain(records);
  core::trace::disable();
  std::size_t slices = 0;
  bool venue_third = false;
  for (const core::TraceRecord& r : records) {
    if (r.kind != core::TraceKind::kTimers) continue;
    ++slices;
    EXPECT_LE(r.a, 64u) << "a slice of at most 64 sessions";
    venue_third = venue_third || (r.b == 128 && r.a == 22);  // the venue's 150: 64 + 64 + 22
  }
  EXPECT_GT(slices, 0u);
  EXPECT_TRUE(venue_third) << "the venue's round went on past its first two slices";
  client->logout_all(5'000'000'000);
}

std::int64_t rss_anon_kib() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("RssAnon:", 0) == 0) return std::stoll(line.substr(8));
  return -1;
}

// A session's buffers are sized for MaxMessageSize (64 KiB) and its queue
// for 4,096 messages, and most sessions never hold more than a few hundred
// bytes in them: their pages are resident only once written. Zero-filled
// at creation, 1,000 sessions kept 305 MiB of anonymous memory before any
// of them logged on (docs/journal.md, "Many sessions").
TEST(ManySessions, a_session_that_holds_nothing_keeps_little_of_its_buffers_in_memory) {
#if defined(__SANITIZE_ADDRESS__)
  // ASan writes shadow memory for every allocation (an eighth of its size)
  // and fills the start of each: resident memory is then the sanitizer's.
  GTEST_SKIP() << "resident memory is measured in builds without ASan (build/release)";
#endif
  hft::test::TempDir dir;
  Quiet app;
  const std::int64_t before = rss_anon_kib();
  ASSERT_GT(before, 0);
  constexpr int kSessions = 300;
  auto venue = hft::test::make_engine(acceptor_config(fs::path(dir.path()) / "venue", kSessions), app);
  ASSERT_TRUE(venue);
  const std::int64_t per_session = (rss_anon_kib() - before) / kSessions;
  // Creation writes the session's own state and its stores': 48 KiB here.
  // It was about 100 KiB while the two parse indexes (16 KiB each) were
  // zeroed by a loop and the large blocks came from the heap (whose
  // allocator writes a header page after each), 315 KiB with the buffers
  // zero-filled.
  EXPECT_LT(per_session, 72) << per_session << " KiB of anonymous memory per session";
}

TEST(ManySessions, a_start_up_that_fails_removes_the_stores_it_created_and_keeps_the_ones_it_found) {
  hft::test::TempDir dir;
  const fs::path store = fs::path(dir.path()) / "store";
  {
    // An earlier run of session C1 left its store.
    Quiet app;
    auto earlier = hft::test::make_engine(acceptor_config(store, 1), app);
    ASSERT_TRUE(earlier);
  }
  ASSERT_EQ(entries(store), std::set<std::string>{"FIX.4.4-VENUE-C1"});
  // A port that is taken: the last session's listener cannot bind, after
  // every store was opened.
  const int taken = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(taken, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(taken, 1), 0);
  socklen_t len = sizeof a;
  ::getsockname(taken, reinterpret_cast<sockaddr*>(&a), &len);
  std::string text = acceptor_config(store.string(), 40);
  text += "[SESSION]\nTargetCompID=LAST\nSocketAcceptHost=127.0.0.1\nSocketAcceptPort=" +
          std::to_string(ntohs(a.sin_port)) + "\n";
  auto config = Config::parse(text, "test.cfg");
  ASSERT_TRUE(config) << config.error().message;
  Quiet app;
  auto failed = Engine::create(*config, app);
  ::close(taken);
  ASSERT_FALSE(failed);
  EXPECT_NE(failed.error().message.find("SocketAcceptPort"), std::string::npos) << failed.error().message;
  EXPECT_EQ(entries(store), std::set<std::string>{"FIX.4.4-VENUE-C1"});
  EXPECT_EQ(entries(store / "FIX.4.4-VENUE-C1"), std::set<std::string>{"seqnums.dat"});
}

std::string template_venue(const std::string& store) {
  return "[DEFAULT]\nConnectionType=acceptor\nBeginString=FIX.4.4\nSenderCompID=VENUE\nHeartBtInt=30\n"
         "NonStopSession=Y\nUseDataDictionary=N\nSocketAcceptPort=0\nFileStorePath=" +
         store +
         "\nLogLevel=error\n"
         "[SESSION]\nTargetCompID=C1\n"
         "[SESSION]\nAcceptorTemplate=Y\nTargetCompID=CLIENT*\nUsername=desk\nPassword=s3cret\n";
}

std::string one_initiator(const std::string& sender, const std::string& password, int port) {
  return "[DEFAULT]\nConnectionType=initiator\nBeginString=FIX.4.4\nTargetCompID=VENUE\nHeartBtInt=30\n"
         "NonStopSession=Y\nUseDataDictionary=N\nSocketConnectHost=127.0.0.1\nReconnectInterval=1\n"
         "LogLevel=error\nSocketConnectPort=" +
         std::to_string(port) + "\n[SESSION]\nSenderCompID=" + sender +
         (password.empty() ? "" : "\nUsername=desk\nPassword=" + password) + "\n";
}

TEST(AcceptorTemplate, a_logon_matching_the_template_with_its_credentials_gets_a_session_and_a_store) {
  hft::test::TempDir dir;
  const fs::path store = fs::path(dir.path()) / "venue";
  Quiet venue_app;
  auto venue = hft::test::make_engine(template_venue(store.string()), venue_app);
  ASSERT_TRUE(venue);
  EXPECT_EQ(venue->session_count(), 1u);  // the template is not a session
  EXPECT_EQ(entries(store), std::set<std::string>{"FIX.4.4-VENUE-C1"});
  const int port = venue->listen_port();

  Quiet a_app, b_app, bad_app, other_app;
  auto a = hft::test::make_engine(one_initiator("CLIENT7", "s3cret", port), a_app);
  auto b = hft::test::make_engine(one_initiator("CLIENT8", "s3cret", port), b_app);
  auto bad = hft::test::make_engine(one_initiator("CLIENT9", "guess", port), bad_app);
  auto other = hft::test::make_engine(one_initiator("OTHER", "s3cret", port), other_app);
  ASSERT_TRUE(a && b && bad && other);
  auto poll_all = [&](auto done, std::int64_t timeout_ns) {
    const auto t0 = core::monotonic_ns();
    while (!done()) {
      if (core::monotonic_ns() - t0 > timeout_ns) return false;
      venue->poll();
      a->poll();
      b->poll();
      bad->poll();
      other->poll();
    }
    return true;
  };
  ASSERT_TRUE(poll_all([&] { return a->session(0).is_logged_on() && b->session(0).is_logged_on(); },
                       20'000'000'000));
  // The wrong password and the CompID the pattern does not match keep being refused.
  poll_all([&] { return venue->stats().template_refused >= 2 && venue->stats().unknown_session_refused >= 2; },
           5'000'000'000);
  EXPECT_FALSE(bad->session(0).is_logged_on());
  EXPECT_FALSE(other->session(0).is_logged_on());
  EXPECT_GE(venue->stats().template_refused, 2u);
  EXPECT_GE(venue->stats().unknown_session_refused, 2u);
  EXPECT_EQ(venue->stats().template_sessions_created, 2u);
  EXPECT_EQ(venue->session_count(), 3u);
  EXPECT_TRUE(logged_on(*venue, "FIX.4.4", "VENUE", "CLIENT7"));
  EXPECT_TRUE(logged_on(*venue, "FIX.4.4", "VENUE", "CLIENT8"));
  // Stores for the two that logged on, none for the refused ones.
  EXPECT_EQ(entries(store),
            (std::set<std::string>{"FIX.4.4-VENUE-C1", "FIX.4.4-VENUE-CLIENT7", "FIX.4.4-VENUE-CLIENT8"}));

  // The session works like a configured one: an application message is journaled and delivered.
  (void)a->session(0).send_app("B", Engine::now(), [](session::OutgoingMessage& m) {
    m.writer().add(148, "hello");  // News Headline
  });
  ASSERT_TRUE(poll_all([&] { return venue_app.received == 1; }, 10'000'000'000));

  // A reconnect after a restart of the venue finds the template session's store again.
  a->logout_all(2'000'000'000);
  b->logout_all(2'000'000'000);
  venue.reset();
  venue = hft::test::make_engine(template_venue(store.string()), venue_app);
  ASSERT_TRUE(venue);
  a = hft::test::make_engine(one_initiator("CLIENT7", "s3cret", venue->listen_port()), a_app);
  ASSERT_TRUE(a);
  ASSERT_TRUE(test::poll_until(*venue, *a, [&] { return a->session(0).is_logged_on(); }));
  session::Session* s = venue->find(session::SessionID{"FIX.4.4", "VENUE", "CLIENT7", ""});
  ASSERT_NE(s, nullptr);
  EXPECT_GT(s->next_target_seq(), 3u);  // Logon, News, Logout of the first run, then this Logon
  a->logout_all(2'000'000'000);
}

TEST(AcceptorTemplate, configuration_errors_name_the_key) {
  auto parse = [](const std::string& session) {
    return Config::parse(
        "[DEFAULT]\nBeginString=FIX.4.4\nSenderCompID=V\nHeartBtInt=30\nNonStopSession=Y\nUseDataDictionary=N\n"
        "SocketAcceptPort=0\nSocketConnectHost=h\nSocketConnectPort=1\n[SESSION]\n" +
            session,
        "t.cfg");
  };
  auto initiator = parse("ConnectionType=initiator\nTargetCompID=*\nAcceptorTemplate=Y\n");
  ASSERT_FALSE(initiator);
  EXPECT_NE(initiator.error().message.find("t.cfg:13: AcceptorTemplate: only an acceptor"), std::string::npos)
      << initiator.error().message;
  auto no_star = parse("ConnectionType=acceptor\nTargetCompID=C\nAcceptorTemplate=Y\n");
  ASSERT_FALSE(no_star);
  EXPECT_NE(no_star.error().message.find("AcceptorTemplate: a template needs '*'"), std::string::npos)
      << no_star.error().message;
  auto log = parse("ConnectionType=acceptor\nTargetCompID=*\nAcceptorTemplate=Y\nFileLogPath=/tmp/x\n");
  ASSERT_FALSE(log);
  EXPECT_NE(log.error().message.find("FileLogPath: not in an AcceptorTemplate section"), std::string::npos)
      << log.error().message;
  auto ok = parse("ConnectionType=acceptor\nTargetCompID=*\nAcceptorTemplate=Y\n");
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_TRUE(ok->sessions()[0].is_template());
  EXPECT_TRUE(ok->sessions()[0].matches(SessionId{"FIX.4.4", "V", "", "", "ANY", "", "", ""}));
  EXPECT_FALSE(ok->sessions()[0].matches(SessionId{"FIX.4.2", "V", "", "", "ANY", "", "", ""}));
  EXPECT_FALSE(ok->sessions()[0].matches(SessionId{"FIX.4.4", "W", "", "", "ANY", "", "", ""}));
}

TEST(RuntimeSessions, added_disabled_enabled_and_removed_while_the_engine_runs) {
  hft::test::TempDir dir;
  const fs::path venue_store = fs::path(dir.path()) / "venue";
  const fs::path client_store = fs::path(dir.path()) / "client";
  Quiet venue_app, client_app;
  auto venue = hft::test::make_engine(acceptor_config(venue_store.string(), 2), venue_app);
  ASSERT_TRUE(venue);
  auto client = hft::test::make_engine(initiator_config(client_store.string(), 1, venue->listen_port()), client_app);
  ASSERT_TRUE(client);
  ASSERT_TRUE(test::poll_until(*venue, *client, [&] { return client->session(0).is_logged_on(); }));

  // Add an acceptor session to the venue and an initiator for it to the client.
  auto venue_more = Config::parse(acceptor_config(venue_store.string(), 3), "more.cfg");
  ASSERT_TRUE(venue_more);
  auto added = venue->add_session(venue_more->sessions()[2]);  // C3
  ASSERT_TRUE(added) << added.error().message;
  EXPECT_EQ(venue->session_count(), 3u);
  auto again = venue->add_session(venue_more->sessions()[2]);
  ASSERT_FALSE(again);
  EXPECT_NE(again.error().message.find("exists already"), std::string::npos) << again.error().message;
  auto client_more = Config::parse(initiator_config(client_store.string(), 3, venue->listen_port()), "more.cfg");
  ASSERT_TRUE(client_more);
  auto c3 = client->add_session(client_more->sessions()[2]);
  ASSERT_TRUE(c3) << c3.error().message;
  const session::SessionID c3_id = (*c3)->id();
  ASSERT_TRUE(test::poll_until(*venue, *client, [&] { return logged_on(*venue, "FIX.4.4", "VENUE", "C3"); }));

  // Disabled on the venue: logged out, and its reconnects are refused.
  const session::SessionID venue_c3{"FIX.4.4", "VENUE", "C3", ""};
  ASSERT_TRUE(venue->disable_session(venue_c3, "maintenance"));
  ASSERT_TRUE(test::poll_until(*venue, *client, [&] { return !client->find(c3_id)->is_logged_on(); }));
  ASSERT_TRUE(test::poll_until(*venue, *client, [&] { return venue->stats().disabled_refused >= 1; }));
  EXPECT_FALSE(client->find(c3_id)->is_logged_on());
  ASSERT_TRUE(venue->enable_session(venue_c3));
  ASSERT_TRUE(test::poll_until(*venue, *client, [&] { return client->find(c3_id)->is_logged_on(); }));

  // Removed from the client: the connection closes, the session is gone
  // after the next poll, its journal stays readable.
  const std::uint64_t sent = client->find(c3_id)->next_sender_seq();
  ASSERT_TRUE(client->remove_session(c3_id));
  EXPECT_FALSE(client->remove_session(c3_id));
  EXPECT_EQ(client->find(c3_id), nullptr);
  ASSERT_TRUE(test::poll_until(*venue, *client, [&] {
    return client->session_count() == 1 && !logged_on(*venue, "FIX.4.4", "VENUE", "C3");
  }));
  auto reader = store::JournalReader::open((client_store / "FIX.4.4-C3-VENUE" / "outbound").string());
  ASSERT_TRUE(reader) << reader.error().message;
  store::RecordView r;
  int records = 0;
  while (reader->next(r) == store::JournalReader::Next::kRecord) records += r.control() ? 0 : 1;
  EXPECT_GE(records, 2);  // its two Logons
  // Added again: it resumes its sequence numbers from its store.
  auto back = client->add_session(client_more->sessions()[2]);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_GE((*back)->next_sender_seq(), sent);
  ASSERT_TRUE(test::poll_until(*venue, *client, [&] { return client->find(c3_id)->is_logged_on(); }));
  client->logout_all(2'000'000'000);
}

}  // namespace
}  // namespace hft::engine
