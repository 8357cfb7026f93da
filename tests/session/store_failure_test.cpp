// No message without its journal: what the session does when its store
// cannot record an outgoing message (claim or commit fails) or a received
// one (store_inbound fails), driven with a store that fails on demand.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "failing_store.hpp"
#include "fixture.hpp"

namespace hft::session::test {
namespace {

using store::StoreStatus;

class Lines final : public Logger {
 public:
  bool enabled(LogLevel) const noexcept override { return true; }
  void log(LogLevel level, const SessionID&, std::string_view text) noexcept override {
    lines.push_back(std::string(to_string(level)) + " " + std::string(text));
  }
  [[nodiscard]] int count(const std::string& needle) const {
    return static_cast<int>(std::count_if(lines.begin(), lines.end(), [&](const std::string& l) {
      return l.find(needle) != std::string::npos;
    }));
  }
  std::vector<std::string> lines;
};

/// An application that answers each order with a report, as a venue does.
class ReportingApp final : public RecordingApp {
 public:
  std::vector<SendStatus> report_status;
  Decision from_app(Session& s, const codec::MessageView& m) noexcept override {
    (void)RecordingApp::from_app(s, m);
    report_status.push_back(s.send_app("8", Instant::from_utc(now), [&](OutgoingMessage& r) {
      r.add(37, "O1");
      r.add(11, m.get(11));
      r.add(17, "E1");
      r.add_char(150, '0');
      r.add_char(39, '0');
    }));
    return Decision::accept();
  }
  std::int64_t now = 0;
};

class StoreFailureTest : public SessionFixture {
 protected:
  void SetUp() override { make_with(base_settings()); }

  void make_with(SessionSettings st) {
    auto s = Session::create(std::move(st), failing, *application, out, &logger, at());
    ASSERT_TRUE(s.ok()) << s.error().message;
    session = std::move(*s);
  }

  /// Our messages since the last call, as "35:34" pairs.
  std::vector<std::string> sent() {
    std::vector<std::string> r;
    for (const std::string& m : out.messages) r.push_back(field(m, "35") + ":" + field(m, "34"));
    out.messages.clear();
    return r;
  }

  std::string last_logout_text() const {
    for (auto it = out.messages.rbegin(); it != out.messages.rend(); ++it) {
      if (field(*it, "35") == "5") return field(*it, "58");
    }
    return "<no Logout>";
  }

  /// The session again, with an application that answers each order.
  void make_reporting() {
    reporting.now = now;
    application = &reporting;
    make_with(base_settings());
  }

  FailingStore failing{store};
  Lines logger;
  ReportingApp reporting;
  Application* application = &app;
};

TEST_F(StoreFailureTest, a_send_the_store_cannot_claim_fails_uses_no_seq_and_ends_the_session) {
  logon();
  ASSERT_EQ(send_order("o1"), SendStatus::kOk);
  out.messages.clear();
  failing.claim_fails = StoreStatus::kNoSpace;
  EXPECT_EQ(send_order("o2"), SendStatus::kStoreFull);
  EXPECT_EQ(session->next_sender_seq(), 4u) << "the Logout took seq 3, not the failed order";
  ASSERT_EQ(out.messages.size(), 1u) << "only the Logout";
  EXPECT_EQ(field(out.messages[0], "35"), "5");
  EXPECT_EQ(field(out.messages[0], "34"), "3");
  EXPECT_EQ(field(out.messages[0], "58"), "Message store failure: no space on the file system");
  EXPECT_TRUE(out.disconnected);
  EXPECT_EQ(out.reason, DisconnectReason::kStoreError);
  EXPECT_FALSE(session->is_connected());
  EXPECT_EQ(app.events.back(), "logout");
  EXPECT_EQ(logger.count("ERROR Message store failure: journal /test/store: no space on the file system "
                         "(No space left on device)"),
            1);
  EXPECT_EQ(send_order("o3"), SendStatus::kNotLoggedOn);
  EXPECT_EQ(logger.count("ERROR Message store failure"), 1) << "logged once";
}

TEST_F(StoreFailureTest, a_send_whose_commit_fails_is_not_sent_and_its_seq_is_used_again) {
  logon();
  failing.commit_fails = StoreStatus::kIoError;
  EXPECT_EQ(send_order("o1"), SendStatus::kStoreError);
  const std::vector<std::string> wire = sent();
  EXPECT_EQ(wire, (std::vector<std::string>{"5:2"})) << "the order never left; the Logout has its seq";
  EXPECT_EQ(out.reason, DisconnectReason::kStoreError);

  // After reconnecting the numbers continue where the peer expects them.
  failing.space_returns();
  out.disconnected = false;
  session->on_connected(at());
  peer_seq = 2;
  send("A", "98=0|108=30|");
  EXPECT_TRUE(session->is_logged_on());
  EXPECT_EQ(sent(), (std::vector<std::string>{"A:3"}));
  ASSERT_EQ(send_order("o1"), SendStatus::kOk);
  EXPECT_EQ(sent(), (std::vector<std::string>{"D:4"}));
}

TEST_F(StoreFailureTest, without_room_for_the_logout_the_session_disconnects_without_one) {
  logon();
  failing.claim_fails = StoreStatus::kNoSpace;
  failing.reserve_left = false;
  EXPECT_EQ(send_order("o1"), SendStatus::kStoreFull);
  EXPECT_TRUE(out.messages.empty()) << "a Logout that cannot be recorded is not sent";
  EXPECT_EQ(session->next_sender_seq(), 2u) << "so no number is used";
  EXPECT_TRUE(out.disconnected);
  EXPECT_EQ(out.reason, DisconnectReason::kStoreError);
}

TEST_F(StoreFailureTest, an_order_whose_report_cannot_be_recorded_is_not_accepted) {
  make_reporting();
  logon();
  send("D", order_body("a"));
  ASSERT_EQ(reporting.report_status.size(), 1u);
  EXPECT_EQ(session->next_target_seq(), 3u);
  out.messages.clear();

  failing.claim_fails = StoreStatus::kNoSpace;
  send("D", order_body("b"));
  send("D", order_body("c"));
  ASSERT_EQ(reporting.report_status.size(), 2u) << "the session ended after the first failure";
  EXPECT_EQ(reporting.report_status[1], SendStatus::kStoreFull);
  EXPECT_EQ(session->next_target_seq(), 3u) << "order b (seq 3) is not accepted: the peer resends it";
  EXPECT_EQ(sent(), (std::vector<std::string>{"5:3"}));
  EXPECT_EQ(out.reason, DisconnectReason::kStoreError);

  // Space is back: the peer logs on again, we ask for 3.., it resends b and c.
  failing.space_returns();
  session->on_connected(at());
  feed(peer_msg("A", "98=0|108=30|", 5));
  EXPECT_EQ(sent(), (std::vector<std::string>{"A:4", "2:5"}));
  feed(peer_msg("D", order_body("b"), 3, "43=Y|122=" + utc_text(now) + "|"));
  feed(peer_msg("D", order_body("c"), 4, "43=Y|122=" + utc_text(now) + "|"));
  EXPECT_EQ(reporting.report_status.size(), 4u);
  EXPECT_EQ(reporting.report_status[3], SendStatus::kOk);
  EXPECT_EQ(session->next_target_seq(), 6u);
  EXPECT_EQ(sent(), (std::vector<std::string>{"8:6", "8:7"}));
}

TEST_F(StoreFailureTest, a_received_message_that_cannot_be_journaled_is_not_handed_to_the_application) {
  logon();
  send("D", order_body("a"));
  EXPECT_EQ(app.app_messages, 1u);
  out.messages.clear();
  failing.inbound_fails = StoreStatus::kNoSpace;
  send("D", order_body("b"));
  send("D", order_body("c"));
  EXPECT_EQ(app.app_messages, 1u) << "neither b nor c reached from_app";
  EXPECT_EQ(session->next_target_seq(), 3u);
  EXPECT_EQ(sent(), (std::vector<std::string>{"5:2"}));
  EXPECT_EQ(out.reason, DisconnectReason::kStoreError);
  EXPECT_EQ(logger.count("ERROR Message store failure"), 1);
  EXPECT_EQ(failing.inbound, (std::vector<std::uint64_t>{1, 2}));

  failing.space_returns();
  session->on_connected(at());
  feed(peer_msg("A", "98=0|108=30|", 6));
  EXPECT_EQ(sent(), (std::vector<std::string>{"A:3", "2:4"}));
  feed(peer_msg("D", order_body("b"), 3, "43=Y|122=" + utc_text(now) + "|"));
  EXPECT_EQ(app.app_messages, 2u) << "the resend is processed";
  EXPECT_EQ(failing.inbound.back(), 3u);
}

// The journal service behind (no segment ready yet) is not a failure: the
// session reads no further until the store has room, then goes on where it
// stopped. Nothing is lost, nothing acted on twice, no Logout.
TEST_F(StoreFailureTest, input_waits_while_the_store_has_no_room_yet_and_goes_on_in_order) {
  make_reporting();
  logon();
  out.messages.clear();
  const std::string batch = peer_msg("D", order_body("a"), 2) + peer_msg("D", order_body("b"), 3) +
                            peer_msg("D", order_body("c"), 4);
  peer_seq = 5;
  failing.ready_left = 1;  // room for a, not yet for b
  const std::size_t taken = session->on_bytes({batch.data(), batch.size()}, at());
  const std::size_t first = peer_msg("D", order_body("a"), 2).size();
  EXPECT_EQ(taken, first) << "b and c stay the caller's";
  EXPECT_TRUE(session->input_paused());
  EXPECT_EQ(reporting.report_status.size(), 1u);
  EXPECT_EQ(session->next_target_seq(), 3u);
  EXPECT_EQ(sent(), (std::vector<std::string>{"8:2"}));
  EXPECT_FALSE(out.disconnected);
  EXPECT_EQ(session->counters().input_pauses, 1u);

  // Asked again while the service is still behind: still nothing, counted once.
  const std::string rest = batch.substr(taken);
  EXPECT_EQ(session->on_bytes({rest.data(), rest.size()}, at()), 0u);
  EXPECT_TRUE(session->input_paused());
  EXPECT_EQ(session->counters().input_pauses, 1u);
  // Timers meanwhile: the peer is not silent (its messages wait here).
  advance(80);
  EXPECT_TRUE(session->is_logged_on());
  EXPECT_EQ(field(out.messages.back(), "35"), "0") << "our heartbeats go on";
  out.messages.clear();

  failing.ready_left = -1;
  EXPECT_EQ(session->on_bytes({rest.data(), rest.size()}, at()), rest.size());
  EXPECT_FALSE(session->input_paused());
  ASSERT_EQ(reporting.report_status.size(), 3u);
  EXPECT_EQ(session->next_target_seq(), 5u);
  const std::vector<std::string> wire = sent();
  ASSERT_EQ(wire.size(), 2u);
  EXPECT_EQ(wire[0].substr(0, 2), "8:");
  EXPECT_FALSE(out.disconnected);
  EXPECT_EQ(failing.inbound, (std::vector<std::uint64_t>{1, 2, 3, 4}));
  EXPECT_EQ(logger.count("Message store failure"), 0);
}

TEST_F(StoreFailureTest, a_message_completed_in_the_carried_tail_waits_there_for_the_store) {
  logon();
  const std::string m = peer_msg("D", order_body("a"), 2);
  peer_seq = 3;
  const std::string head = m.substr(0, 20);
  const std::string tail = m.substr(20);
  EXPECT_EQ(session->on_bytes({head.data(), head.size()}, at()), head.size()) << "a partial message is kept";
  failing.ready_left = 0;
  EXPECT_EQ(session->on_bytes({tail.data(), tail.size()}, at()), tail.size())
      << "taken into the carried tail";
  EXPECT_TRUE(session->input_paused());
  EXPECT_EQ(app.app_messages, 0u);
  failing.ready_left = -1;
  EXPECT_EQ(session->on_bytes({}, at()), 0u);
  EXPECT_FALSE(session->input_paused());
  EXPECT_EQ(app.app_messages, 1u);
  EXPECT_EQ(session->next_target_seq(), 3u);
  send("D", order_body("b"));
  EXPECT_EQ(app.app_messages, 2u);
}

TEST_F(StoreFailureTest, a_heartbeat_waits_while_no_segment_is_ready_and_goes_out_when_one_is) {
  logon();
  out.messages.clear();
  failing.claim_fails = StoreStatus::kNoSpare;
  advance(31);
  EXPECT_TRUE(out.messages.empty()) << "no heartbeat yet, and no Logout";
  EXPECT_FALSE(out.disconnected);
  EXPECT_EQ(session->next_sender_seq(), 2u);
  failing.space_returns();
  advance(0.2);
  EXPECT_EQ(sent(), (std::vector<std::string>{"0:2"}));
  EXPECT_TRUE(session->is_logged_on());
}

TEST_F(StoreFailureTest, an_own_send_with_no_segment_ready_is_busy_and_the_session_goes_on) {
  logon();
  out.messages.clear();
  failing.claim_fails = StoreStatus::kNoSpare;
  EXPECT_EQ(send_order("o1"), SendStatus::kStoreBusy);
  EXPECT_TRUE(out.messages.empty());
  EXPECT_FALSE(out.disconnected);
  EXPECT_TRUE(session->is_logged_on());
  EXPECT_EQ(session->next_sender_seq(), 2u) << "no number used";
  EXPECT_EQ(logger.count("Message store failure"), 0);
  failing.space_returns();
  EXPECT_EQ(send_order("o1"), SendStatus::kOk);
  EXPECT_EQ(sent(), (std::vector<std::string>{"D:2"}));
}

TEST_F(StoreFailureTest, a_second_answer_with_no_segment_ready_is_not_accepted_as_before) {
  // The check before a received message keeps room for one answer; an
  // answer beyond it that meets kNoSpare cannot wait (the message it answers
  // is being accepted): the message is not accepted and the session ends.
  make_reporting();
  logon();
  out.messages.clear();
  failing.claim_fails = StoreStatus::kNoSpare;
  send("D", order_body("a"));
  ASSERT_EQ(reporting.report_status.size(), 1u);
  EXPECT_EQ(reporting.report_status[0], SendStatus::kStoreFull);
  EXPECT_EQ(session->next_target_seq(), 2u) << "order a is not accepted: the peer resends it";
  EXPECT_EQ(out.reason, DisconnectReason::kStoreError);
}

TEST_F(StoreFailureTest, a_heartbeat_that_cannot_be_recorded_ends_the_session_with_a_logout) {
  logon();
  failing.claim_fails = StoreStatus::kNoSpace;
  advance(31);
  EXPECT_EQ(sent(), (std::vector<std::string>{"5:2"}));
  EXPECT_EQ(out.reason, DisconnectReason::kStoreError);
}

TEST_F(StoreFailureTest, an_acceptor_refuses_a_logon_while_the_store_is_full) {
  failing.claim_fails = StoreStatus::kNoSpace;
  failing.reserve_left = false;
  session->on_connected(at());
  send("A", "98=0|108=30|");
  EXPECT_TRUE(out.messages.empty());
  EXPECT_TRUE(out.disconnected);
  EXPECT_EQ(out.reason, DisconnectReason::kStoreError);
  EXPECT_FALSE(session->is_logged_on());
  EXPECT_EQ(session->next_target_seq(), 1u) << "the Logon is not accepted";
  EXPECT_TRUE(std::find(app.events.begin(), app.events.end(), "logon") == app.events.end());

  // With room for a Logout it says why.
  failing.reserve_left = true;
  out.disconnected = false;
  session->on_connected(at());
  feed(peer_msg("A", "98=0|108=30|", 1));
  EXPECT_EQ(last_logout_text(), "Message store failure: no space on the file system");
  EXPECT_EQ(session->next_target_seq(), 1u);
  EXPECT_TRUE(out.disconnected);
}

TEST_F(StoreFailureTest, an_acceptor_refuses_a_logon_while_the_inbound_journal_is_full) {
  failing.inbound_fails = StoreStatus::kNoSpace;
  session->on_connected(at());
  send("A", "98=0|108=30|");
  EXPECT_FALSE(session->is_logged_on());
  EXPECT_EQ(session->next_target_seq(), 1u);
  EXPECT_EQ(out.reason, DisconnectReason::kStoreError);
  EXPECT_EQ(app.events, std::vector<std::string>{}) << "the application never saw the Logon";
}

TEST_F(StoreFailureTest, an_initiator_does_not_log_on_while_the_store_is_full) {
  SessionSettings st = base_settings();
  st.initiator = true;
  make_with(std::move(st));
  failing.claim_fails = StoreStatus::kNoSpace;
  session->on_connected(at());
  EXPECT_TRUE(out.messages.empty()) << "no Logon, and no Logout before a Logon";
  EXPECT_TRUE(out.disconnected);
  EXPECT_EQ(out.reason, DisconnectReason::kStoreError);
  EXPECT_EQ(session->next_sender_seq(), 1u);

  failing.space_returns();
  out.disconnected = false;
  session->on_connected(at());
  EXPECT_EQ(sent(), (std::vector<std::string>{"A:1"}));
}

}  // namespace
}  // namespace hft::session::test
