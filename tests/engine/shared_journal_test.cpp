// JournalLayout=shared in the engine: every session of a FileStorePath
// journals into FileStorePath/shared-journal, its own directory holding only
// seqnums.dat. Sessions resume after a restart (numbers, resend from the
// shared journal), sessions added at run time get a stream of their own,
// and the journal's settings cannot differ between its sessions.
#include "hft/store/shared_journal.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <sstream>
#include <string>

#include "engine/loopback.hpp"
#include "engine/peer_support.hpp"
#include "hft/audit/journal_audit.hpp"
#include "hft/codec/parser.hpp"
#include "hft/core/clock.hpp"
#include "hft/engine/engine.hpp"
#include "hft/store/journal_service.hpp"
#include "hft/store/types.hpp"
#include "support/temp_dir.hpp"

namespace hft::engine {
namespace {

namespace fs = std::filesystem;

struct Counting final : session::Application {
  session::Decision from_app(session::Session&, const codec::MessageView& m) noexcept override {
    ++received;
    if (m.has(codec::tag::kPossDupFlag)) ++possdup;
    return session::Decision::accept();
  }
  int received = 0;
  int possdup = 0;
};

std::string venue_config(const std::string& store, int sessions, int port = 0) {
  std::ostringstream s;
  s << "[DEFAULT]\nConnectionType=acceptor\nBeginString=FIX.4.4\nSenderCompID=VENUE\nHeartBtInt=30\n"
    << "NonStopSession=Y\nUseDataDictionary=N\nSocketAcceptPort=" << port << "\nFileStorePath=" << store
    << "\nJournalLayout=shared\nLogLevel=error\n";
  for (int i = 1; i <= sessions; ++i) s << "[SESSION]\nTargetCompID=C" << i << "\n";
  return s.str();
}

std::string client_config(const std::string& store, int sessions, int port) {
  std::ostringstream s;
  s << "[DEFAULT]\nConnectionType=initiator\nBeginString=FIX.4.4\nTargetCompID=VENUE\nHeartBtInt=30\n"
    << "NonStopSession=Y\nUseDataDictionary=N\nSocketConnectHost=127.0.0.1\nSocketConnectPort=" << port
    << "\nFileStorePath=" << store << "\nJournalLayout=shared\nReconnectInterval=1\nLogLevel=error\n";
  for (int i = 1; i <= sessions; ++i) s << "[SESSION]\nSenderCompID=C" << i << "\n";
  return s.str();
}

std::set<std::string> entries(const fs::path& dir) {
  std::set<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) names.insert(e.path().filename().string());
  return names;
}

bool all_logged_on(Engine& client) {
  for (std::size_t i = 0; i < client.session_count(); ++i)
    if (!client.session(i).is_logged_on()) return false;
  return true;
}

// Logs every client session out and polls both sides until each is done,
// so that both journals hold the Logouts.
bool log_out_all(Engine& venue, Engine& client) {
  for (std::size_t i = 0; i < client.session_count(); ++i) client.session(i).logout("done", Engine::now());
  return test::poll_until(venue, client, [&] {
    for (std::size_t i = 0; i < client.session_count(); ++i)
      if (client.session(i).is_logged_on() ||
          venue.find(session::SessionID{"FIX.4.4", "VENUE", client.session(i).id().sender_comp_id, ""})
              ->is_logged_on())
        return false;
    return true;
  });
}

session::SessionID client_id(int i) {
  return session::SessionID{"FIX.4.4", "C" + std::to_string(i), "VENUE", ""};
}
session::SessionID venue_id(int i) {
  return session::SessionID{"FIX.4.4", "VENUE", "C" + std::to_string(i), ""};
}

TEST(SharedJournalEngine, sessions_write_one_journal_and_resume_their_numbers_and_resends_after_a_restart) {
  hft::test::TempDir dir;
  const fs::path venue_store = fs::path(dir.path()) / "venue";
  const fs::path client_store = fs::path(dir.path()) / "client";
  constexpr int kVenueSessions = 60, kClients = 20, kOrders = 5;
  std::uint64_t sent_before[kClients + 1] = {};
  int port = 0;
  {
    Counting venue_app, client_app;
    auto venue = hft::test::make_engine(venue_config(venue_store.string(), kVenueSessions), venue_app);
    ASSERT_TRUE(venue);
    port = venue->listen_port();
    auto client = hft::test::make_engine(client_config(client_store.string(), kClients, port), client_app);
    ASSERT_TRUE(client);
    ASSERT_TRUE(test::poll_until(
        *venue, *client, [&] { return all_logged_on(*client); }, 60'000'000'000));
    for (int i = 1; i <= kClients; ++i) {
      session::Session* s = client->find(client_id(i));
      ASSERT_NE(s, nullptr);
      for (int k = 0; k < kOrders; ++k)
        ASSERT_EQ(test::send_test_order(*s, static_cast<std::uint64_t>(i * 100 + k)),
                  session::SendStatus::kOk);
    }
    ASSERT_TRUE(test::poll_until(*venue, *client, [&] { return venue_app.received == kClients * kOrders; }));
    ASSERT_TRUE(log_out_all(*venue, *client));
    for (int i = 1; i <= kClients; ++i) sent_before[i] = client->find(client_id(i))->next_sender_seq();
    EXPECT_EQ(venue->shared_journal_stats().size(), 1u);
  }
  // One journal for every session; a session directory holds its numbers
  // only, and sessions that never logged on have a directory all the same.
  EXPECT_EQ(entries(venue_store).size(), static_cast<std::size_t>(kVenueSessions) + 1);
  EXPECT_TRUE(fs::is_directory(venue_store / "shared-journal"));
  EXPECT_EQ(entries(venue_store / "FIX.4.4-VENUE-C7"), std::set<std::string>{"seqnums.dat"});
  EXPECT_EQ(entries(client_store / "FIX.4.4-C7-VENUE"), std::set<std::string>{"seqnums.dat"});
  EXPECT_FALSE(entries(venue_store / "shared-journal").empty());

  // Restart both. The venue then expects 3 more messages from C5 than it
  // received, so C5's next Logon is answered with a ResendRequest, which C5
  // answers from the shared journal: its orders again, PossDupFlag=Y.
  Counting venue_app, client_app;
  auto venue = hft::test::make_engine(venue_config(venue_store.string(), kVenueSessions, port), venue_app);
  ASSERT_TRUE(venue);
  session::Session* v5 = venue->find(venue_id(5));
  ASSERT_NE(v5, nullptr);
  const std::uint64_t expected = v5->next_target_seq();
  // Logon (1), five orders (2..6), Logout (7): the venue expects 8.
  EXPECT_EQ(expected, static_cast<std::uint64_t>(kOrders) + 3);
  v5->set_next_target_seq(expected - 1 - kOrders);  // as if orders 2..6 never arrived
  auto client = hft::test::make_engine(client_config(client_store.string(), kClients, port), client_app);
  ASSERT_TRUE(client);
  for (int i = 1; i <= kClients; ++i) {
    // Numbers resume where they were (the Logon of the restart is the next).
    EXPECT_EQ(client->find(client_id(i))->next_sender_seq(), sent_before[i]) << "C" << i;
  }
  ASSERT_TRUE(test::poll_until(
      *venue, *client, [&] { return all_logged_on(*client); }, 60'000'000'000));
  ASSERT_TRUE(test::poll_until(*venue, *client, [&] { return venue_app.possdup == kOrders; }));
  EXPECT_EQ(venue_app.received, kOrders);
  // A new order after the resend flows as usual.
  ASSERT_EQ(test::send_test_order(*client->find(client_id(5)), 999), session::SendStatus::kOk);
  ASSERT_TRUE(test::poll_until(*venue, *client, [&] { return venue_app.received == kOrders + 1; }));
  EXPECT_EQ(v5->next_target_seq(), client->find(client_id(5))->next_sender_seq());
  client->logout_all(5'000'000'000);
}

/// Answers every order with a report, as a venue does.
struct Answering final : session::Application {
  session::Decision from_app(session::Session& s, const codec::MessageView& m) noexcept override {
    ++received;
    const session::SendStatus st = s.send_app("8", Engine::now(), [&](session::OutgoingMessage& r) {
      r.add(37, m.get(codec::tag::kClOrdID));
      r.add(11, m.get(codec::tag::kClOrdID));
      r.add(17, m.get(codec::tag::kClOrdID));
      r.add_char(150, '0');
      r.add_char(39, '0');
    });
    if (st != session::SendStatus::kOk) ++failed_answers;
    return session::Decision::accept();
  }
  int received = 0;
  int failed_answers = 0;
};

// The journal service held back while orders arrive: the venue's shared
// journal uses up its pooled segments (each waits for the service to retire
// it). Its sessions then stop reading (the orders wait in the sockets)
// instead of logging out, and once the service runs again every order is
// taken, answered and journaled, in sequence, on every session.
TEST(SharedJournalEngine, sessions_wait_for_a_journal_service_that_is_behind_instead_of_logging_out) {
  hft::test::TempDir dir;
  const fs::path venue_store = fs::path(dir.path()) / "venue";
  const fs::path client_store = fs::path(dir.path()) / "client";
  constexpr int kClients = 4;
  const std::string small = "JournalInitialSegmentSize=16K\nJournalSegmentSize=1M\n";
  std::string vc = venue_config(venue_store.string(), kClients);
  vc.insert(vc.find("[SESSION]"), small);
  Answering venue_app;
  Counting client_app;
  auto venue = hft::test::make_engine(vc, venue_app);
  ASSERT_TRUE(venue);
  auto client = hft::test::make_engine(client_config(client_store.string(), kClients, venue->listen_port()),
                                       client_app);
  ASSERT_TRUE(client);
  ASSERT_TRUE(test::poll_until(
      *venue, *client, [&] { return all_logged_on(*client); }, 60'000'000'000));
  ASSERT_NE(venue->journal_service(), nullptr);
  venue->journal_service()->stop();

  // Orders in rounds until the venue's sessions wait (a round is small
  // enough for the sockets' buffers to hold while they do).
  int sent = 0;
  std::uint64_t id = 1;
  for (int round = 0; round < 5'000 && venue->stats().input_pauses == 0; ++round) {
    for (int i = 1; i <= kClients; ++i) {
      for (int k = 0; k < 50; ++k) {
        ASSERT_EQ(test::send_test_order(*client->find(client_id(i)), id++), session::SendStatus::kOk);
        ++sent;
      }
    }
    // Until the round is answered, or the venue waits for its journal.
    ASSERT_TRUE(test::poll_until(*venue, *client, [&] {
      return client_app.received == sent || venue->stats().input_pauses != 0 || !all_logged_on(*client);
    }));
    ASSERT_TRUE(all_logged_on(*client)) << "a session ended while its journal was behind";
  }
  ASSERT_GT(venue->stats().input_pauses, 0u) << "the venue's journal never ran out of segments";
  // Held for a while: nobody logs out, the orders wait.
  const auto until = core::monotonic_ns() + 300'000'000;
  while (core::monotonic_ns() < until) {
    venue->poll();
    client->poll();
  }
  EXPECT_TRUE(all_logged_on(*client));
  EXPECT_LT(venue_app.received, sent);

  ASSERT_TRUE(venue->journal_service()->start());
  ASSERT_TRUE(test::poll_until(*venue, *client, [&] { return client_app.received == sent; }));
  EXPECT_EQ(venue_app.received, sent);
  EXPECT_EQ(venue_app.failed_answers, 0);
  for (int i = 1; i <= kClients; ++i) {
    const session::Session& c = *client->find(client_id(i));
    const session::Session& v = *venue->find(venue_id(i));
    EXPECT_TRUE(c.is_logged_on()) << "C" << i;
    EXPECT_EQ(c.counters().logons, 1u) << "C" << i << " never logged on again";
    EXPECT_EQ(v.next_target_seq(), c.next_sender_seq()) << "C" << i;
    EXPECT_EQ(c.next_target_seq(), v.next_sender_seq()) << "C" << i;
    EXPECT_EQ(c.counters().resend_requests_sent + v.counters().resend_requests_sent, 0u) << "C" << i;
  }
  ASSERT_TRUE(log_out_all(*venue, *client));
  const std::vector<store::JournalStats> js = venue->shared_journal_stats();
  ASSERT_EQ(js.size(), 1u);
  EXPECT_GE(js[0].rotations, 15u);
  std::uint64_t venue_sent[kClients] = {};
  for (int i = 1; i <= kClients; ++i) venue_sent[i - 1] = venue->find(venue_id(i))->next_sender_seq();
  client.reset();
  venue.reset();
  // Each session's stream of the shared journal: every message both ways,
  // once, in sequence, nothing torn.
  for (int i = 1; i <= kClients; ++i) {
    audit::AuditOptions o;
    o.validate = false;
    auto report = audit::audit_journal((venue_store / ("FIX.4.4-VENUE-C" + std::to_string(i))).string(), o);
    ASSERT_TRUE(report) << report.error().message;
    EXPECT_TRUE(report->ok) << "C" << i;
    EXPECT_EQ(report->missing_seqs, 0u) << "C" << i;
    ASSERT_EQ(report->journals.size(), 2u) << "C" << i;
    EXPECT_EQ(report->journals[0].last_seq + 1, venue_sent[i - 1]) << "C" << i << " outbound";
    EXPECT_EQ(report->journals[0].duplicates + report->journals[1].duplicates, 0u) << "C" << i;
  }
}

TEST(SharedJournalEngine, a_session_added_at_run_time_gets_its_own_stream_and_keeps_it_when_added_again) {
  hft::test::TempDir dir;
  const fs::path venue_store = fs::path(dir.path()) / "venue";
  const fs::path client_store = fs::path(dir.path()) / "client";
  Counting venue_app, client_app;
  auto venue = hft::test::make_engine(venue_config(venue_store.string(), 2), venue_app);
  ASSERT_TRUE(venue);
  auto more = Config::parse(venue_config(venue_store.string(), 3), "more.cfg");
  ASSERT_TRUE(more);
  auto added = venue->add_session(more->sessions()[2]);  // C3
  ASSERT_TRUE(added) << added.error().message;
  auto client =
      hft::test::make_engine(client_config(client_store.string(), 3, venue->listen_port()), client_app);
  ASSERT_TRUE(client);
  ASSERT_TRUE(test::poll_until(
      *venue, *client, [&] { return all_logged_on(*client); }, 60'000'000'000));
  ASSERT_EQ(test::send_test_order(*client->find(client_id(3)), 1), session::SendStatus::kOk);
  ASSERT_TRUE(test::poll_until(*venue, *client, [&] { return venue_app.received == 1; }));
  client->find(client_id(3))->logout("bye", Engine::now());
  ASSERT_TRUE(test::poll_until(*venue, *client, [&] {
    return !client->find(client_id(3))->is_logged_on() && !venue->find(venue_id(3))->is_logged_on();
  }));
  // Logon 1, the order 2, the Logout 3.
  const std::uint64_t next = venue->find(venue_id(3))->next_target_seq();
  EXPECT_EQ(next, 4u);
  ASSERT_TRUE(venue->remove_session(venue_id(3)));
  // Its store is closed once its connection is gone (Engine::reap).
  ASSERT_TRUE(test::poll_until(*venue, *client, [&] { return venue->session_count() == 2; }));
  EXPECT_TRUE(fs::is_regular_file(venue_store / "FIX.4.4-VENUE-C3" / "seqnums.dat"));
  // Added again: the same stream, the numbers where they were.
  auto again = venue->add_session(more->sessions()[2]);
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ((*again)->next_target_seq(), next);
  client->logout_all(5'000'000'000);
  client.reset();
  venue.reset();
  // The journal names C1, C2 and C3 once each: C3's second store found its
  // stream rather than starting a fourth.
  store::SharedJournalConfig c;
  c.journal.directory = (venue_store / "shared-journal").string();
  auto journal = store::SharedJournal::open(c);
  ASSERT_TRUE(journal) << journal.error().message;
  EXPECT_EQ((*journal)->streams(), 3u);
}

TEST(SharedJournalEngine,
     a_template_session_gets_its_stream_at_its_first_logon_and_finds_it_after_a_restart) {
  hft::test::TempDir dir;
  const fs::path store = fs::path(dir.path()) / "venue";
  const std::string venue_text =
      "[DEFAULT]\nConnectionType=acceptor\nBeginString=FIX.4.4\nSenderCompID=VENUE\nHeartBtInt=30\n"
      "NonStopSession=Y\nUseDataDictionary=N\nSocketAcceptPort=0\nJournalLayout=shared\nFileStorePath=" +
      store.string() + "\nLogLevel=error\n[SESSION]\nAcceptorTemplate=Y\nTargetCompID=C*\n";
  Counting venue_app, client_app;
  auto venue = hft::test::make_engine(venue_text, venue_app);
  ASSERT_TRUE(venue);
  EXPECT_EQ(venue->session_count(), 0u);
  auto client = hft::test::make_engine(
      client_config((fs::path(dir.path()) / "client").string(), 2, venue->listen_port()), client_app);
  ASSERT_TRUE(client);
  ASSERT_TRUE(test::poll_until(
      *venue, *client, [&] { return all_logged_on(*client); }, 60'000'000'000));
  EXPECT_EQ(venue->session_count(), 2u);
  EXPECT_EQ(entries(store),
            (std::set<std::string>{"FIX.4.4-VENUE-C1", "FIX.4.4-VENUE-C2", "shared-journal"}));
  ASSERT_EQ(test::send_test_order(*client->find(client_id(2)), 1), session::SendStatus::kOk);
  ASSERT_TRUE(test::poll_until(*venue, *client, [&] { return venue_app.received == 1; }));
  ASSERT_TRUE(log_out_all(*venue, *client));
  const std::uint64_t next = venue->find(venue_id(2))->next_target_seq();
  client.reset();
  venue.reset();
  // After a restart the template session's numbers come back at its Logon.
  venue = hft::test::make_engine(venue_text, venue_app);
  ASSERT_TRUE(venue);
  client = hft::test::make_engine(
      client_config((fs::path(dir.path()) / "client").string(), 2, venue->listen_port()), client_app);
  ASSERT_TRUE(client);
  ASSERT_TRUE(test::poll_until(
      *venue, *client, [&] { return all_logged_on(*client); }, 60'000'000'000));
  EXPECT_EQ(venue->find(venue_id(2))->next_target_seq(), next + 1);  // this run's Logon
  client->logout_all(5'000'000'000);
}

TEST(SharedJournalEngine, sessions_of_one_shared_journal_with_different_journal_settings_are_refused) {
  hft::test::TempDir dir;
  std::string text = venue_config((fs::path(dir.path()) / "venue").string(), 2);
  text += "[SESSION]\nTargetCompID=C9\nJournalSegmentSize=4M\n";
  const std::string error = hft::test::start_error(text);
  EXPECT_NE(error.find("JournalSegmentSize"), std::string::npos) << error;
  EXPECT_NE(error.find("share one journal"), std::string::npos) << error;
  // Nothing of the failed start is left: no session directory, no journal.
  EXPECT_TRUE(entries(fs::path(dir.path()) / "venue").empty());
}

TEST(SharedJournalEngine, an_unknown_layout_is_refused_naming_the_key) {
  hft::test::TempDir dir;
  std::string text = venue_config((fs::path(dir.path()) / "venue").string(), 1);
  text.replace(text.find("JournalLayout=shared"), 20, "JournalLayout=pooled");
  const std::string error = hft::test::start_error(text);
  EXPECT_NE(error.find("JournalLayout"), std::string::npos) << error;
}

}  // namespace
}  // namespace hft::engine
