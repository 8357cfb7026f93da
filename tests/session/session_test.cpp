// The session state machine driven with scripted bytes and a fake clock:
// one test per protocol rule.
#include <gtest/gtest.h>

#include <algorithm>

#include "fixture.hpp"

namespace hft::session::test {
namespace {

using codec::RejectReason;

std::vector<std::string> tags_of(const std::string& msg) {
  std::vector<std::string> out;
  for (auto f : split_fields(msg)) out.emplace_back(f.substr(0, f.find('=')));
  return out;
}

class SessionAcceptorTest : public SessionFixture {
 protected:
  void SetUp() override { make(base_settings()); }
};

// ---------------------------------------------------------------------------
// Logon and logout

TEST_F(SessionAcceptorTest, answers_logon_with_logon_echoing_heartbeat_interval) {
  const std::string reply = logon("98=0|108=45|");
  EXPECT_EQ(field(reply, "35"), "A");
  EXPECT_EQ(field(reply, "34"), "1");
  EXPECT_EQ(field(reply, "49"), "ISLD");
  EXPECT_EQ(field(reply, "56"), "TW");
  EXPECT_EQ(field(reply, "108"), "45");
  EXPECT_EQ(tags_of(reply), (std::vector<std::string>{"8", "9", "35", "34", "49", "52", "56", "98", "108", "10"}));
  EXPECT_EQ(field(reply, "52").size(), 21u) << "FIX 4.4 SendingTime has milliseconds";
  EXPECT_TRUE(session->is_logged_on());
  EXPECT_EQ(session->heart_bt_int(), 45);
  EXPECT_EQ(session->next_target_seq(), 2u);
  EXPECT_EQ(session->next_sender_seq(), 2u);
  EXPECT_EQ(app.events, (std::vector<std::string>{"admin:A:1", "logon"}));
}

TEST_F(SessionAcceptorTest, disconnects_when_first_message_is_not_a_logon) {
  session->on_connected(at());
  send("0");
  EXPECT_TRUE(out.disconnected);
  EXPECT_EQ(out.reason, DisconnectReason::kNotLoggedOn);
  EXPECT_TRUE(out.messages.empty());
}

TEST_F(SessionAcceptorTest, disconnects_when_no_logon_arrives_within_logon_timeout) {
  session->on_connected(at());
  advance(9.5);
  EXPECT_FALSE(out.disconnected);
  advance(1);
  EXPECT_TRUE(out.disconnected);
  EXPECT_EQ(out.reason, DisconnectReason::kLogonTimeout);
}

TEST_F(SessionAcceptorTest, disconnects_a_logon_for_other_comp_ids_without_answering) {
  session->on_connected(at());
  feed(wire("8=FIX.4.4|35=A|34=1|49=SOMEONE|52=" + utc_text(now) + "|56=ISLD|98=0|108=30|"));
  EXPECT_TRUE(out.disconnected);
  EXPECT_EQ(out.reason, DisconnectReason::kInvalidLogon);
  EXPECT_TRUE(out.messages.empty());
  EXPECT_FALSE(session->is_logged_on());
}

TEST_F(SessionAcceptorTest, disconnects_a_logon_with_a_stale_sending_time) {
  session->on_connected(at());
  now -= 600 * kSecond;
  const std::string lo = peer_msg("A", "98=0|108=30|", 1);
  now += 600 * kSecond;
  feed(lo);
  EXPECT_TRUE(out.disconnected);
  EXPECT_TRUE(out.messages.empty());
}

TEST_F(SessionAcceptorTest, passes_credentials_to_the_logon_hook_and_logs_out_when_it_refuses) {
  app.logon_decision = Decision::reject_logon("bad password");
  const std::string reply = logon("98=0|108=30|553=alice|554=wrong|");
  EXPECT_EQ(app.username, "alice");
  EXPECT_EQ(app.password, "wrong");
  EXPECT_EQ(field(reply, "35"), "5");
  EXPECT_EQ(field(reply, "58"), "bad password");
  EXPECT_TRUE(out.disconnected);
  EXPECT_EQ(out.reason, DisconnectReason::kUnauthenticated);
  EXPECT_FALSE(session->is_logged_on());
}

// Username/Password settings (acceptor): the peer's first Logon must carry them.
class SessionCredentialsTest : public SessionFixture {
 protected:
  void make_with(const std::string& begin_string, const std::string& dict, const std::string& user,
                 const std::string& password, bool reset_on_disconnect = false) {
    SessionSettings st = base_settings(begin_string, dict);
    st.username = user;
    st.password = password;
    st.reset_on_disconnect = reset_on_disconnect;
    make(std::move(st));
  }
};

TEST_F(SessionCredentialsTest, accepts_a_logon_with_the_configured_username_and_password) {
  make_with("FIX.4.4", "FIX44.xml", "alice", "s3cr=t");
  const std::string reply = logon("98=0|108=30|553=alice|554=s3cr=t|");
  EXPECT_EQ(field(reply, "35"), "A");
  EXPECT_TRUE(session->is_logged_on());
}

TEST_F(SessionCredentialsTest, answers_a_wrong_password_with_a_logout_and_nothing_else) {
  make_with("FIX.4.4", "FIX44.xml", "alice", "secret");
  const std::string reply = logon("98=0|108=30|553=alice|554=guess|");
  EXPECT_EQ(field(reply, "35"), "5");
  EXPECT_EQ(field(reply, "58"), "Invalid credentials");
  EXPECT_TRUE(out.messages.empty()) << pipes(out.messages.front());
  EXPECT_TRUE(out.disconnected);
  EXPECT_EQ(out.reason, DisconnectReason::kUnauthenticated);
  EXPECT_FALSE(session->is_logged_on());
  EXPECT_EQ(app.username, "") << "the application hook is not asked about a refused logon";
  // Neither the peer's Logon nor our Logout used a sequence number.
  EXPECT_EQ(session->next_target_seq(), 1u);
  EXPECT_EQ(session->next_sender_seq(), 1u);
}

TEST_F(SessionCredentialsTest, refuses_a_logon_without_credentials_when_they_are_required) {
  make_with("FIX.4.4", "FIX44.xml", "alice", "secret");
  const std::string reply = logon();
  EXPECT_EQ(field(reply, "35"), "5");
  EXPECT_FALSE(session->is_logged_on());
}

TEST_F(SessionCredentialsTest, a_reset_logon_from_an_unauthenticated_peer_changes_nothing) {
  make_with("FIX.4.4", "FIX44.xml", "alice", "secret", /*reset_on_disconnect=*/true);
  logon("98=0|108=30|553=alice|554=secret|");
  send("0");
  send("0");
  session->disconnect(at());  // the real client is away; numbers kept (ResetOnDisconnect aside)
  session->set_next_sender_seq(7);
  session->set_next_target_seq(5);
  out.messages.clear();
  out.disconnected = false;
  session->on_connected(at());
  peer_seq = 1;
  send("A", "98=0|108=30|141=Y|553=alice|554=wrong|");
  EXPECT_EQ(field(out.pop(), "35"), "5");
  EXPECT_TRUE(out.disconnected);
  EXPECT_EQ(session->next_sender_seq(), 7u);
  EXPECT_EQ(session->next_target_seq(), 5u);
}

TEST_F(SessionCredentialsTest, before_fix43_the_password_is_checked_in_raw_data) {
  make_with("FIX.4.2", "FIX42.xml", "", "secret");
  const std::string reply = logon("98=0|108=30|95=6|96=secret|");
  EXPECT_EQ(field(reply, "35"), "A");
  EXPECT_TRUE(session->is_logged_on());
}

TEST_F(SessionCredentialsTest, before_fix43_a_wrong_raw_data_is_refused) {
  make_with("FIX.4.2", "FIX42.xml", "", "secret");
  const std::string reply = logon("98=0|108=30|95=5|96=guess|");
  EXPECT_EQ(field(reply, "35"), "5");
  EXPECT_FALSE(session->is_logged_on());
}

TEST_F(SessionCredentialsTest, a_username_before_fix43_is_a_settings_error) {
  SessionSettings st = base_settings("FIX.4.2", "FIX42.xml");
  st.username = "alice";
  const auto checked = st.check();
  ASSERT_FALSE(checked.ok());
  EXPECT_NE(checked.error().message.find("Username"), std::string::npos);
}

TEST_F(SessionAcceptorTest, answers_logout_and_disconnects) {
  logon();
  send("5");
  const std::string reply = out.pop();
  EXPECT_EQ(field(reply, "35"), "5");
  EXPECT_EQ(field(reply, "34"), "2");
  EXPECT_TRUE(out.disconnected);
  EXPECT_EQ(out.reason, DisconnectReason::kLogoutComplete);
  EXPECT_EQ(app.events.back(), "logout");
  EXPECT_EQ(session->state(), SessionState::kDisconnected);
}

TEST_F(SessionAcceptorTest, initiated_logout_waits_for_the_answer_then_disconnects) {
  logon();
  session->logout("end of day", at());
  const std::string lo = out.pop();
  EXPECT_EQ(field(lo, "35"), "5");
  EXPECT_EQ(field(lo, "58"), "end of day");
  EXPECT_EQ(session->state(), SessionState::kLogoutSent);
  send("5");
  EXPECT_TRUE(out.messages.empty()) << "an answer to our Logout is not answered again";
  EXPECT_TRUE(out.disconnected);
  EXPECT_EQ(out.reason, DisconnectReason::kLogoutComplete);
}

TEST_F(SessionAcceptorTest, disconnects_when_logout_is_not_answered_within_logout_timeout) {
  logon();
  session->logout({}, at());
  (void)out.pop();
  advance(1.5);
  EXPECT_FALSE(out.disconnected);
  advance(1);
  EXPECT_TRUE(out.disconnected);
  EXPECT_EQ(out.reason, DisconnectReason::kLogoutTimeout);
}

TEST_F(SessionAcceptorTest, disconnects_on_a_second_logon_without_reset) {
  logon();
  send("A", "98=0|108=30|");
  EXPECT_TRUE(out.disconnected);
  EXPECT_EQ(out.reason, DisconnectReason::kNotLoggedOn);
  EXPECT_TRUE(out.messages.empty());
}

TEST_F(SessionAcceptorTest, logon_with_reset_seq_num_flag_resets_both_sequences_and_echoes_the_flag) {
  logon();
  send("0");
  send("0");
  ASSERT_TRUE(send_order("A1") == SendStatus::kOk);
  (void)out.pop();
  EXPECT_EQ(session->next_sender_seq(), 3u);
  peer_seq = 1;
  send("A", "98=0|108=30|141=Y|");
  const std::string reply = out.pop();
  EXPECT_EQ(field(reply, "34"), "1");
  EXPECT_EQ(field(reply, "141"), "Y");
  EXPECT_EQ(session->next_target_seq(), 2u);
  EXPECT_EQ(session->next_sender_seq(), 2u);
  EXPECT_TRUE(session->is_logged_on());
}

TEST_F(SessionFixture, reset_on_logout_starts_the_next_session_at_one) {
  auto st = base_settings();
  st.reset_on_logout = true;
  make(st);
  logon();
  send("0");
  send("5");
  EXPECT_EQ(session->next_sender_seq(), 1u);
  EXPECT_EQ(session->next_target_seq(), 1u);
}

TEST_F(SessionFixture, reset_on_disconnect_starts_the_next_session_at_one) {
  auto st = base_settings();
  st.reset_on_disconnect = true;
  make(st);
  logon();
  send("0");
  session->on_disconnected(at());
  EXPECT_EQ(session->next_sender_seq(), 1u);
  EXPECT_EQ(session->next_target_seq(), 1u);
  EXPECT_EQ(app.events.back(), "logout");
}

TEST_F(SessionFixture, sequence_numbers_survive_a_reconnect_without_reset) {
  make(base_settings());
  logon();
  send("0");
  session->on_disconnected(at());
  EXPECT_EQ(session->next_target_seq(), 3u);
  session->on_connected(at());
  feed(peer_msg("A", "98=0|108=30|", 3));
  EXPECT_EQ(field(out.pop(), "34"), "2");
  EXPECT_TRUE(session->is_logged_on());
  EXPECT_EQ(session->next_target_seq(), 4u);
}

// ---------------------------------------------------------------------------
// Initiator

TEST_F(SessionFixture, initiator_sends_logon_on_connect_and_is_logged_on_by_the_answer) {
  auto st = base_settings();
  st.initiator = true;
  st.heart_bt_int = 20;
  make(st);
  app.add_credentials = true;
  session->on_connected(at());
  const std::string lo = out.pop();
  EXPECT_EQ(field(lo, "35"), "A");
  EXPECT_EQ(field(lo, "108"), "20");
  EXPECT_EQ(field(lo, "553"), "alice");
  EXPECT_EQ(field(lo, "554"), "secret");
  EXPECT_FALSE(has_field(lo, "141"));
  EXPECT_EQ(session->state(), SessionState::kLogonSent);
  send("A", "98=0|108=20|");
  EXPECT_TRUE(out.messages.empty()) << "a Logon answer is not answered";
  EXPECT_TRUE(session->is_logged_on());
  EXPECT_EQ(app.events.back(), "logon");
}

TEST_F(SessionFixture, initiator_sends_the_username_and_password_settings_in_its_logon) {
  auto st = base_settings();
  st.initiator = true;
  st.username = "bob";
  st.password = "pw=1";
  make(st);
  session->on_connected(at());
  const std::string lo = out.pop();
  EXPECT_EQ(field(lo, "553"), "bob");
  EXPECT_EQ(field(lo, "554"), "pw=1");
}

TEST_F(SessionFixture, initiator_before_fix43_sends_the_password_as_raw_data) {
  auto st = base_settings("FIX.4.2", "FIX42.xml");
  st.initiator = true;
  st.password = "secret";
  make(st);
  session->on_connected(at());
  const std::string lo = out.pop();
  EXPECT_EQ(field(lo, "95"), "6");
  EXPECT_EQ(field(lo, "96"), "secret");
  EXPECT_FALSE(has_field(lo, "554"));
}

TEST_F(SessionFixture, initiator_with_reset_on_logon_sends_reset_seq_num_flag) {
  auto st = base_settings();
  st.initiator = true;
  st.reset_on_logon = true;
  make(st);
  session->on_connected(at());
  const std::string lo = out.pop();
  EXPECT_EQ(field(lo, "141"), "Y");
  EXPECT_EQ(field(lo, "34"), "1");
  send("A", "98=0|108=30|141=Y|");
  EXPECT_TRUE(out.messages.empty());
  EXPECT_TRUE(session->is_logged_on());
}

TEST_F(SessionFixture, initiator_disconnects_when_logon_is_not_answered_within_logon_timeout) {
  auto st = base_settings();
  st.initiator = true;
  st.logon_timeout = 5;
  make(st);
  session->on_connected(at());
  (void)out.pop();
  advance(5.2);
  EXPECT_TRUE(out.disconnected);
  EXPECT_EQ(out.reason, DisconnectReason::kLogonTimeout);
}

TEST_F(SessionFixture, initiator_sends_next_expected_msg_seq_num_when_configured) {
  auto st = base_settings();
  st.initiator = true;
  st.send_next_expected_msg_seq_num = true;
  make(st);
  session->on_connected(at());
  EXPECT_EQ(field(out.pop(), "789"), "1");
}

// ---------------------------------------------------------------------------
// Heartbeats and TestRequests

TEST_F(SessionAcceptorTest, sends_heartbeat_then_test_request_then_disconnects_on_silence) {
  logon();
  advance(29.5);
  EXPECT_TRUE(out.messages.empty());
  advance(1);
  const std::string hb = out.pop();
  EXPECT_EQ(field(hb, "35"), "0");
  EXPECT_FALSE(has_field(hb, "112"));
  advance(6);  // 36 s without anything received: 1.2 intervals
  const std::string tr = out.pop();
  EXPECT_EQ(field(tr, "35"), "1");
  EXPECT_EQ(field(tr, "112"), "TEST");
  EXPECT_FALSE(out.disconnected);
  advance(36);  // 72 s: 2.4 intervals
  EXPECT_TRUE(out.disconnected);
  EXPECT_EQ(out.reason, DisconnectReason::kHeartbeatTimeout);
}

TEST_F(SessionAcceptorTest, an_answered_test_request_keeps_the_session_up) {
  logon();
  advance(36.5);
  ASSERT_EQ(field(out.messages.back(), "35"), "1");
  out.messages.clear();
  send("0", "112=TEST|");
  advance(40);
  EXPECT_FALSE(out.disconnected);
}

TEST_F(SessionAcceptorTest, answers_test_request_with_heartbeat_carrying_its_id) {
  logon();
  send("1", "112=PING 7|");
  const std::string hb = out.pop();
  EXPECT_EQ(field(hb, "35"), "0");
  EXPECT_EQ(field(hb, "112"), "PING 7");
  EXPECT_EQ(session->next_target_seq(), 3u);
}

// ---------------------------------------------------------------------------
// Sequence numbers

TEST_F(SessionAcceptorTest, queues_messages_after_a_gap_and_processes_them_in_order_once_filled) {
  logon();
  send("D", order_body("o2"));
  feed(peer_msg("D", order_body("o5"), 5));
  const std::string rr = out.pop();
  EXPECT_EQ(field(rr, "35"), "2");
  EXPECT_EQ(field(rr, "7"), "3");
  EXPECT_EQ(field(rr, "16"), "0");
  EXPECT_EQ(session->queued_messages(), 1u);
  EXPECT_TRUE(session->resend_requested());
  feed(peer_msg("D", order_body("o3"), 3));
  feed(peer_msg("D", order_body("o4"), 4));
  EXPECT_EQ(app.events, (std::vector<std::string>{"admin:A:1", "logon", "app:D:2", "app:D:3", "app:D:4", "app:D:5"}));
  EXPECT_EQ(session->next_target_seq(), 6u);
  EXPECT_EQ(session->queued_messages(), 0u);
  EXPECT_FALSE(session->resend_requested());
  EXPECT_TRUE(out.messages.empty());
}

TEST_F(SessionAcceptorTest, does_not_repeat_a_resend_request_for_later_messages_of_the_same_gap) {
  logon();
  feed(peer_msg("0", "", 5));
  feed(peer_msg("0", "", 6));
  feed(peer_msg("0", "", 7));
  EXPECT_EQ(out.messages.size(), 1u);
  EXPECT_EQ(session->queued_messages(), 3u);
}

TEST_F(SessionFixture, asks_for_a_large_gap_in_chunks) {
  auto st = base_settings();
  st.resend_request_chunk_size = 2;
  make(st);
  logon();
  feed(peer_msg("0", "", 7));  // 2..6 missing
  std::string rr = out.pop();
  EXPECT_EQ(field(rr, "7"), "2");
  EXPECT_EQ(field(rr, "16"), "3");
  feed(peer_msg("0", "", 2));
  EXPECT_TRUE(out.messages.empty());
  feed(peer_msg("0", "", 3));
  rr = out.pop();
  EXPECT_EQ(field(rr, "7"), "4");
  EXPECT_EQ(field(rr, "16"), "5");
  feed(peer_msg("0", "", 4));
  feed(peer_msg("0", "", 5));
  rr = out.pop();
  EXPECT_EQ(field(rr, "7"), "6");
  EXPECT_EQ(field(rr, "16"), "6");
  feed(peer_msg("0", "", 6));
  EXPECT_TRUE(out.messages.empty());
  EXPECT_EQ(session->next_target_seq(), 8u);
  EXPECT_FALSE(session->resend_requested());
}

TEST_F(SessionFixture, fix41_resend_request_asks_up_to_999999) {
  make(base_settings("FIX.4.1", "FIX41.xml"));
  logon();
  feed(peer_msg("0", "", 4));
  const std::string rr = out.pop();
  EXPECT_EQ(field(rr, "16"), "999999");
  EXPECT_EQ(field(rr, "52").size(), 17u) << "FIX 4.1 SendingTime has whole seconds";
}

TEST_F(SessionAcceptorTest, logs_out_and_disconnects_when_msg_seq_num_is_too_low_without_poss_dup) {
  logon();
  send("0");
  feed(peer_msg("0", "", 2));
  const std::string lo = out.pop();
  EXPECT_EQ(field(lo, "35"), "5");
  EXPECT_EQ(field(lo, "58"), "MsgSeqNum too low, expecting 3 but received 2");
  EXPECT_TRUE(out.disconnected);
  EXPECT_EQ(out.reason, DisconnectReason::kSeqNumTooLow);
}

TEST_F(SessionAcceptorTest, ignores_a_poss_dup_that_was_already_received) {
  logon();
  send("D", order_body("o2"));
  feed(peer_msg("D", order_body("o2"), 2, "43=Y|122=" + utc_text(now - kSecond) + "|"));
  EXPECT_TRUE(out.messages.empty());
  EXPECT_EQ(app.app_messages, 1u);
  EXPECT_TRUE(session->is_logged_on());
  EXPECT_EQ(session->next_target_seq(), 3u);
}

TEST_F(SessionAcceptorTest, rejects_a_poss_dup_without_orig_sending_time) {
  logon();
  send("D", order_body("o2"));
  send("D", order_body("o3"));
  feed(peer_msg("D", order_body("o2"), 2, "43=Y|"));
  const std::string rj = out.pop();
  EXPECT_EQ(field(rj, "35"), "3");
  EXPECT_EQ(field(rj, "45"), "2");
  EXPECT_EQ(field(rj, "58"), "Required tag missing");
  EXPECT_EQ(field(rj, "371"), "122");
  EXPECT_EQ(field(rj, "372"), "D");
  EXPECT_EQ(field(rj, "373"), "1");
  EXPECT_EQ(session->next_target_seq(), 4u) << "a reject of an old message does not move the sequence";
}

TEST_F(SessionAcceptorTest, rejects_and_logs_out_when_orig_sending_time_is_after_sending_time) {
  logon();
  send("D", order_body("o2"));
  send("D", order_body("o3"));
  feed(peer_msg("D", order_body("o2"), 2, "43=Y|122=" + utc_text(now + 10 * kSecond) + "|"));
  const std::string rj = out.pop();
  EXPECT_EQ(field(rj, "58"), "SendingTime accuracy problem");
  EXPECT_EQ(field(rj, "373"), "10");
  EXPECT_FALSE(has_field(rj, "371"));
  EXPECT_EQ(field(out.pop(), "35"), "5");
  EXPECT_EQ(session->state(), SessionState::kLogoutSent);
}

TEST_F(SessionAcceptorTest, sequence_reset_moves_the_expected_number_in_both_modes) {
  logon();
  feed(peer_msg("4", "36=10|", 0));  // reset mode: MsgSeqNum is not checked
  EXPECT_EQ(session->next_target_seq(), 10u);
  feed(peer_msg("4", "36=15|123=Y|", 10));
  EXPECT_EQ(session->next_target_seq(), 15u);
  EXPECT_TRUE(out.messages.empty());
}

TEST_F(SessionAcceptorTest, rejects_a_sequence_reset_that_would_lower_the_expected_number) {
  logon();
  send("0");
  feed(peer_msg("4", "36=1|", 0));
  const std::string rj = out.pop();
  EXPECT_EQ(field(rj, "35"), "3");
  EXPECT_EQ(field(rj, "45"), "0");
  EXPECT_EQ(field(rj, "58"), "Value is incorrect (out of range) for this tag");
  EXPECT_EQ(field(rj, "372"), "4");
  EXPECT_EQ(field(rj, "373"), "5");
  EXPECT_EQ(session->next_target_seq(), 3u);
}

TEST_F(SessionAcceptorTest, gap_fill_ahead_of_a_gap_is_queued_and_requests_a_resend) {
  logon();
  feed(peer_msg("4", "36=20|123=Y|", 10));
  EXPECT_EQ(field(out.pop(), "35"), "2");
  EXPECT_EQ(session->next_target_seq(), 2u);
}

// ---------------------------------------------------------------------------
// Answering a ResendRequest

TEST_F(SessionAcceptorTest, replays_application_messages_and_gap_fills_over_session_messages) {
  logon();                       // our 1: Logon
  ASSERT_EQ(send_order("o2"), SendStatus::kOk);  // 2
  const std::string original = out.pop();
  ASSERT_EQ(send_order("o3"), SendStatus::kOk);  // 3
  (void)out.pop();
  send("1", "112=a|");           // our 4: Heartbeat
  send("1", "112=b|");           // our 5: Heartbeat
  out.messages.clear();
  now += 5 * kSecond;
  send("2", "7=1|16=0|");
  ASSERT_EQ(out.messages.size(), 4u);
  const std::string gf1 = out.pop();
  EXPECT_EQ(tags_of(gf1), (std::vector<std::string>{"8", "9", "35", "34", "43", "49", "52", "56", "122", "36",
                                                   "123", "10"}));
  EXPECT_EQ(field(gf1, "35"), "4");
  EXPECT_EQ(field(gf1, "34"), "1");
  EXPECT_EQ(field(gf1, "43"), "Y");
  EXPECT_EQ(field(gf1, "36"), "2");
  EXPECT_EQ(field(gf1, "123"), "Y");
  EXPECT_EQ(field(gf1, "122"), field(gf1, "52"));
  const std::string r2 = out.pop();
  EXPECT_EQ(field(r2, "35"), "D");
  EXPECT_EQ(field(r2, "34"), "2");
  EXPECT_EQ(field(r2, "43"), "Y");
  EXPECT_EQ(field(r2, "122"), field(original, "52")) << "OrigSendingTime is the first SendingTime";
  EXPECT_NE(field(r2, "52"), field(original, "52"));
  EXPECT_EQ(field(r2, "11"), "o2");
  EXPECT_EQ(tags_of(r2), (std::vector<std::string>{"8", "9", "35", "34", "43", "49", "52", "56", "122", "11",
                                                  "21", "55", "54", "60", "40", "10"}));
  EXPECT_EQ(field(out.pop(), "34"), "3");
  const std::string gf2 = out.pop();
  EXPECT_EQ(field(gf2, "34"), "4");
  EXPECT_EQ(field(gf2, "36"), "6") << "consecutive session messages collapse into one gap fill";
  EXPECT_EQ(session->next_sender_seq(), 6u) << "resends and gap fills take no new sequence numbers";
  EXPECT_EQ(session->counters().messages_resent, 2u);
  EXPECT_EQ(session->counters().gap_fills_sent, 2u);
}

TEST_F(SessionAcceptorTest, a_resend_the_application_declines_becomes_part_of_a_gap_fill) {
  logon();
  ASSERT_EQ(send_order("o2"), SendStatus::kOk);
  ASSERT_EQ(send_order("o3"), SendStatus::kOk);
  out.messages.clear();
  app.veto_resends = true;
  send("2", "7=1|16=0|");
  ASSERT_EQ(out.messages.size(), 1u);
  EXPECT_EQ(field(out.messages[0], "34"), "1");
  EXPECT_EQ(field(out.messages[0], "36"), "4");
}

TEST_F(SessionFixture, answers_a_resend_request_for_a_billion_messages_in_batches) {
  auto st = base_settings();
  st.max_resend_batch = 10;
  make(st);
  logon();
  for (int i = 0; i < 50; ++i) ASSERT_EQ(send_order("o" + std::to_string(i)), SendStatus::kOk);
  out.messages.clear();
  send("2", "7=1|16=1000000000|");
  EXPECT_LE(out.messages.size(), 11u) << "one batch per call";
  EXPECT_TRUE(session->replay_pending());
  int calls = 0;
  while (session->replay_pending() && calls < 100) {
    session->on_timer(at());
    ++calls;
  }
  EXPECT_FALSE(session->replay_pending());
  EXPECT_GE(calls, 4);
  ASSERT_EQ(out.messages.size(), 51u);  // gap fill over the Logon, then 50 orders
  EXPECT_EQ(field(out.messages[0], "35"), "4");
  for (std::size_t i = 1; i < out.messages.size(); ++i) {
    EXPECT_EQ(field(out.messages[i], "34"), std::to_string(i + 1));
    EXPECT_EQ(field(out.messages[i], "43"), "Y");
  }
  EXPECT_EQ(session->next_sender_seq(), 52u);
  EXPECT_EQ(session->next_target_seq(), 3u);
}

TEST_F(SessionAcceptorTest, resends_what_the_peer_missed_when_its_logon_names_a_lower_next_expected) {
  logon();
  ASSERT_EQ(send_order("o2"), SendStatus::kOk);
  ASSERT_EQ(send_order("o3"), SendStatus::kOk);
  session->on_disconnected(at());
  out.messages.clear();
  session->on_connected(at());
  feed(peer_msg("A", "98=0|108=30|789=3|", 2));
  const std::string reply = out.pop();
  EXPECT_EQ(field(reply, "35"), "A");
  EXPECT_EQ(field(reply, "34"), "4");
  EXPECT_EQ(field(reply, "789"), "3") << "we expect its message 3 next";
  const std::string resent = out.pop();
  EXPECT_EQ(field(resent, "34"), "3");
  EXPECT_EQ(field(resent, "43"), "Y");
  EXPECT_EQ(field(resent, "11"), "o3");
  EXPECT_TRUE(out.messages.empty());
  EXPECT_TRUE(session->is_logged_on());
}

TEST_F(SessionAcceptorTest, logs_out_when_logon_next_expected_is_beyond_what_was_sent) {
  session->on_connected(at());
  send("A", "98=0|108=30|789=100|");
  const std::string lo = out.pop();
  EXPECT_EQ(field(lo, "35"), "5");
  EXPECT_EQ(field(lo, "58"), "NextExpectedMsgSeqNum too high, expecting 1 but received 100");
  EXPECT_TRUE(out.disconnected);
}

// ---------------------------------------------------------------------------
// Validation, CompIDs, SendingTime, BeginString, garbled input

TEST_F(SessionAcceptorTest, rejects_an_undefined_tag_with_reason_and_reference) {
  logon();
  send("0", "999=HI|");
  const std::string rj = out.pop();
  EXPECT_EQ(pipes(rj).substr(pipes(rj).find("|45=")),
            "|45=2|58=Invalid tag number|371=999|372=0|373=0|10=" + field(rj, "10") + "|");
  EXPECT_EQ(session->next_target_seq(), 3u);
  EXPECT_EQ(session->counters().rejects_sent, 1u);
}

TEST_F(SessionFixture, fix40_reject_names_the_tag_in_its_text) {
  make(base_settings("FIX.4.0", "FIX40.xml"));
  logon();
  send("0", "999=HI|");
  const std::string rj = out.pop();
  EXPECT_EQ(field(rj, "58"), "Invalid tag number (999)");
  EXPECT_FALSE(has_field(rj, "371"));
  EXPECT_FALSE(has_field(rj, "372"));
  EXPECT_FALSE(has_field(rj, "373"));
}

TEST_F(SessionFixture, fix40_header_tag_of_later_versions_is_rejected_before_body_faults) {
  // OnBehalfOfLocationID (144) is a header field from FIX 4.1 on; FIX 4.0
  // does not define it, and QuickFIX reports it with the header, ahead of the
  // bad OrdType further on.
  make(base_settings("FIX.4.0", "FIX40.xml"));
  logon();
  send("D", "115=JCD|116=CS|144=CHI|11=ID|21=3|38=100|40=w|54=1|55=INTC|");
  std::string rj = out.pop();
  EXPECT_EQ(field(rj, "58"), "Invalid tag number (144)");
  EXPECT_EQ(field(rj, "128"), "JCD") << "the Reject is still routed back";
  send("D", "128=JCD|129=CS|145=|11=ID|21=3|38=100|40=w|54=1|55=INTC|");
  rj = out.pop();
  EXPECT_EQ(field(rj, "58"), "Tag specified without a value (145)");
  send("D", "11=ID|21=3|38=100|40=w|54=1|55=INTC|");
  EXPECT_EQ(field(out.pop(), "58"), "Value is incorrect (out of range) for this tag (40)");
  EXPECT_EQ(app.app_messages, 0u);
}

TEST_F(SessionFixture, fix42_reject_omits_reasons_fix42_does_not_define) {
  make(base_settings("FIX.4.2", "FIX42.xml"));
  logon();
  send("D", "11=a|21=1|40=1|40=2|54=1|55=X|60=20240315-12:00:00|");
  const std::string rj = out.pop();
  EXPECT_EQ(field(rj, "58"), "Tag appears more than once");
  EXPECT_EQ(field(rj, "371"), "40");
  EXPECT_FALSE(has_field(rj, "373")) << "reason 13 is not in FIX 4.2's SessionRejectReason";
}

TEST_F(SessionAcceptorTest, rejects_a_comp_id_problem_and_logs_out) {
  logon();
  const std::string bad = wire("8=FIX.4.4|35=0|34=2|49=XX|52=" + utc_text(now) + "|56=ISLD|");
  feed(bad);
  const std::string rj = out.pop();
  EXPECT_EQ(field(rj, "58"), "CompID problem");
  EXPECT_EQ(field(rj, "373"), "9");
  EXPECT_EQ(field(out.pop(), "35"), "5");
  send("5");
  EXPECT_TRUE(out.disconnected);
}

TEST_F(SessionAcceptorTest, rejects_a_stale_sending_time_and_logs_out) {
  logon();
  now -= 121 * kSecond;
  const std::string stale = peer_msg("0", "", 2);
  now += 121 * kSecond;
  feed(stale);
  const std::string rj = out.pop();
  EXPECT_EQ(field(rj, "58"), "SendingTime accuracy problem");
  EXPECT_EQ(field(out.pop(), "35"), "5");
}

TEST_F(SessionFixture, accepts_any_sending_time_when_latency_is_not_checked) {
  auto st = base_settings();
  st.check_latency = false;
  make(st);
  logon();
  now -= 3600 * kSecond;
  const std::string old = peer_msg("0", "", 2);
  now += 3600 * kSecond;
  feed(old);
  EXPECT_TRUE(out.messages.empty());
  EXPECT_EQ(session->next_target_seq(), 3u);
}

TEST_F(SessionAcceptorTest, logs_out_on_an_incorrect_begin_string) {
  logon();
  feed(wire("8=FIX.4.2|35=1|34=2|49=TW|52=" + utc_text(now) + "|56=ISLD|112=x|"));
  const std::string lo = out.pop();
  EXPECT_EQ(field(lo, "35"), "5");
  EXPECT_EQ(field(lo, "58"), "Incorrect BeginString");
  EXPECT_EQ(session->next_target_seq(), 3u);
  advance(2.5);
  EXPECT_TRUE(out.disconnected);
  EXPECT_EQ(out.reason, DisconnectReason::kLogoutTimeout);
}

TEST_F(SessionAcceptorTest, ignores_a_garbled_message_and_processes_the_next) {
  logon();
  std::string bad = peer_msg("1", "112=x|", 2);
  bad[bad.size() - 2] = bad[bad.size() - 2] == '0' ? '1' : '0';  // break the CheckSum
  feed(bad);
  EXPECT_TRUE(out.messages.empty());
  EXPECT_EQ(session->counters().garbled, 1u);
  send("1", "112=y|");
  EXPECT_EQ(field(out.pop(), "112"), "y");
}

TEST_F(SessionFixture, reject_garbled_message_answers_a_garbled_message_in_sequence_and_consumes_it) {
  auto st = base_settings();
  st.reject_garbled_message = true;
  make(st);
  logon();
  std::string bad = peer_msg("1", "112=x|", 2);
  bad[bad.size() - 2] = bad[bad.size() - 2] == '0' ? '1' : '0';  // break the CheckSum
  feed(bad);
  const std::string rj = out.pop();
  EXPECT_EQ(field(rj, "35"), "3");
  EXPECT_EQ(field(rj, "45"), "2");
  EXPECT_EQ(field(rj, "58"), "Message failed basic validity check");
  EXPECT_EQ(field(rj, "372"), "1");
  EXPECT_EQ(field(rj, "373"), "") << "QuickFIX/J's Reject carries Text only";
  EXPECT_EQ(session->next_target_seq(), 3u) << "the garbled message's number is consumed";
  // A tag that is not a number: rejected the same way.
  feed(peer_msg("D", order_body("a") + "49foo=bar|", 3));
  EXPECT_EQ(field(out.pop(), "45"), "3");
  EXPECT_EQ(session->next_target_seq(), 4u);
  // Out of sequence: left to the gap logic, no Reject, nothing consumed.
  feed(peer_msg("D", order_body("b") + "49foo=bar|", 9));
  EXPECT_TRUE(out.messages.empty());
  EXPECT_EQ(session->next_target_seq(), 4u);
  peer_seq = 4;
  send("1", "112=y|");
  EXPECT_EQ(field(out.pop(), "112"), "y");
  EXPECT_TRUE(session->is_logged_on());
  EXPECT_EQ(session->counters().garbled, 3u);
}

TEST_F(SessionFixture, reject_garbled_message_still_disconnects_on_a_garbled_logon) {
  auto st = base_settings();
  st.reject_garbled_message = true;
  make(st);
  session->on_connected(at());
  std::string bad = peer_msg("A", "98=0|108=30|", 1);
  bad[bad.size() - 2] = bad[bad.size() - 2] == '0' ? '1' : '0';
  feed(bad);
  EXPECT_TRUE(out.messages.empty());
  EXPECT_TRUE(out.disconnected);
  EXPECT_EQ(out.reason, DisconnectReason::kInvalidLogon);
}

TEST_F(SessionFixture, validate_checksum_off_accepts_a_wrong_checksum) {
  auto st = base_settings();
  st.validate_checksum = false;
  make(st);
  logon();
  std::string bad = peer_msg("1", "112=x|", 2);
  bad[bad.size() - 2] = bad[bad.size() - 2] == '0' ? '1' : '0';
  feed(bad);
  EXPECT_EQ(field(out.pop(), "112"), "x");
  EXPECT_EQ(session->counters().garbled, 0u);
  // The trailer's shape is still required.
  std::string shapeless = peer_msg("1", "112=z|", 3);
  shapeless.replace(shapeless.size() - 4, 3, "1x1");
  feed(shapeless);
  EXPECT_TRUE(out.messages.empty());
  EXPECT_EQ(session->counters().garbled, 1u);
}

TEST_F(SessionFixture, enable_last_msg_seq_num_processed_puts_369_on_every_message_sent) {
  auto st = base_settings();
  st.enable_last_msg_seq_num_processed = true;
  make(st);
  EXPECT_EQ(field(logon(), "369"), "0") << "the Logon is answered before it counts as processed";
  send("1", "112=a|");  // 2
  EXPECT_EQ(field(out.pop(), "369"), "1") << "answered before it counts as processed";
  send("0");  // 3
  ASSERT_EQ(send_order("o1"), SendStatus::kOk);
  const std::string order = out.pop();
  EXPECT_EQ(field(order, "369"), "3");
  EXPECT_EQ(field(order, "11"), "o1");
  // A gap fill sent for a ResendRequest carries it too.
  send("2", "7=1|16=0|");  // 4
  bool gap_fill_seen = false;
  while (!out.messages.empty()) {
    const std::string m = out.pop();
    if (field(m, "35") == "4") {
      gap_fill_seen = true;
      EXPECT_EQ(field(m, "369"), "3");
    }
  }
  EXPECT_TRUE(gap_fill_seen);
}

TEST_F(SessionAcceptorTest, sends_no_369_unless_enabled) {
  EXPECT_EQ(field(logon(), "369"), "");
  send("1", "112=a|");
  EXPECT_EQ(field(out.pop(), "369"), "");
}

TEST_F(SessionAcceptorTest, ignores_a_message_whose_tag_is_not_a_number_without_consuming_its_seq_num) {
  logon();
  // BodyLength and CheckSum are right: only the tag is not a number.
  feed(peer_msg("D", order_body("a") + "11garbled2=GARBLED|", 2));
  EXPECT_TRUE(out.messages.empty()) << pipes(out.messages.front());
  EXPECT_EQ(session->counters().garbled, 1u);
  EXPECT_EQ(session->next_target_seq(), 2u);
  feed(peer_msg("D", order_body("a"), 2));
  EXPECT_TRUE(out.messages.empty());
  EXPECT_EQ(app.events.back(), "app:D:2");
  EXPECT_TRUE(session->is_logged_on());
}

TEST_F(SessionAcceptorTest, rejects_a_numeric_tag_out_of_range_as_invalid_tag_number) {
  logon();
  for (const std::string t : {"0", "-1"}) {
    send("0", t + "=x|");
    const std::string rj = out.pop();
    EXPECT_EQ(field(rj, "35"), "3") << t;
    EXPECT_EQ(field(rj, "373"), "0") << t;
    EXPECT_EQ(field(rj, "371"), t);
  }
  EXPECT_EQ(session->next_target_seq(), 4u);
}

TEST_F(SessionAcceptorTest, rejects_a_msg_seq_num_that_is_not_a_number_as_incorrect_data_format) {
  logon();
  for (const std::string seq :
       {"18446744073709551616", "9223372036854775808", "-1", "100000000000000000000000"}) {
    feed(wire("8=FIX.4.4|35=1|34=" + seq + "|49=TW|52=" + utc_text(now) + "|56=ISLD|112=x|"));
    const std::string rj = out.pop();
    EXPECT_EQ(field(rj, "35"), "3") << seq;
    EXPECT_EQ(field(rj, "45"), seq);
    EXPECT_EQ(field(rj, "373"), "6") << seq;
    EXPECT_EQ(field(rj, "371"), "34") << seq;
    EXPECT_EQ(field(rj, "58"), "Incorrect data format for value") << seq;
    EXPECT_TRUE(out.messages.empty());
    EXPECT_FALSE(out.disconnected);
  }
  EXPECT_EQ(session->next_target_seq(), 2u) << "no number was consumed";
  send("1", "112=y|");
  EXPECT_EQ(field(out.pop(), "112"), "y");
  EXPECT_TRUE(session->is_logged_on());
}

TEST_F(SessionAcceptorTest, rejects_a_sequence_reset_beyond_the_largest_seq_num_and_keeps_its_numbers) {
  logon();
  // 2^63 and 2^64 - 1: a number that large would wrap when incremented.
  for (const std::string to : {"9223372036854775808", "18446744073709551615", "x"}) {
    const std::uint64_t expected = session->next_target_seq();
    feed(peer_msg("4", "36=" + to + "|", expected, "123=N|"));
    const std::string rj = out.pop();
    EXPECT_EQ(field(rj, "35"), "3") << to;
    EXPECT_EQ(field(rj, "373"), "6") << to;
    EXPECT_EQ(field(rj, "371"), "36") << to;
    EXPECT_EQ(session->next_target_seq(), expected) << "a SequenceReset-Reset that failed changes nothing";
    EXPECT_FALSE(out.disconnected);
  }
  // The largest number itself is taken.
  feed(peer_msg("4", "36=9223372036854775807|", session->next_target_seq(), "123=N|"));
  EXPECT_TRUE(out.messages.empty());
  EXPECT_EQ(session->next_target_seq(), kMaxSeqNum);
  EXPECT_TRUE(session->is_logged_on());
}

TEST_F(SessionAcceptorTest, answers_absurd_resend_request_ranges_without_a_replay_storm) {
  logon();                                       // our 1: Logon
  ASSERT_EQ(send_order("o2"), SendStatus::kOk);  // our 2
  out.messages.clear();
  // A range far beyond what was sent is cut at the last message sent.
  send("2", "7=1|16=1000000000000|");
  ASSERT_EQ(out.messages.size(), 2u);
  EXPECT_EQ(field(out.pop(), "35"), "4");  // gap fill over the Logon
  EXPECT_EQ(field(out.pop(), "11"), "o2");
  // Beyond the largest sequence number, or not a number: a Reject, no replay.
  for (const std::string range :
       {"7=9223372036854775808|16=0|", "7=1|16=18446744073709551616|", "7=-5|16=0|"}) {
    send("2", range);
    ASSERT_EQ(out.messages.size(), 1u) << range;
    const std::string rj = out.pop();
    EXPECT_EQ(field(rj, "35"), "3") << range;
    EXPECT_EQ(field(rj, "373"), "6") << range;
    EXPECT_EQ(field(rj, "371"), range[0] == '7' && range.find("7=1|") == 0 ? "16" : "7") << range;
  }
  // A begin above the end, or above everything sent: nothing to resend.
  send("2", "7=50|16=10|");
  send("2", "7=9223372036854775807|16=0|");
  EXPECT_TRUE(out.messages.empty());
  EXPECT_EQ(session->next_target_seq(), static_cast<std::uint64_t>(peer_seq)) << "every request consumed its number";
  send("1", "112=still|");
  EXPECT_EQ(field(out.pop(), "112"), "still");
}

TEST_F(SessionAcceptorTest, logs_out_and_disconnects_on_a_message_without_msg_seq_num) {
  logon();
  feed(wire("8=FIX.4.4|35=1|49=TW|52=" + utc_text(now) + "|56=ISLD|112=x|"));
  const std::string lo = out.pop();
  EXPECT_EQ(field(lo, "35"), "5");
  EXPECT_EQ(field(lo, "58"), "Received message without MsgSeqNum");
  EXPECT_TRUE(out.messages.empty()) << "no Reject: it could not carry RefSeqNum";
  EXPECT_TRUE(out.disconnected);
  EXPECT_EQ(out.reason, DisconnectReason::kMissingMsgSeqNum);
}

TEST_F(SessionAcceptorTest, answers_a_negative_heart_bt_int_with_a_logout_saying_why) {
  session->on_connected(at());
  send("A", "98=0|108=-10|");
  const std::string lo = out.pop();
  EXPECT_EQ(field(lo, "35"), "5");
  EXPECT_EQ(field(lo, "58"), "HeartBtInt (108) -10 is out of range (0 to 86400 seconds)");
  EXPECT_TRUE(out.disconnected);
  EXPECT_EQ(out.reason, DisconnectReason::kInvalidLogon);
  EXPECT_FALSE(session->is_logged_on());
}

TEST_F(SessionFixture, echoes_an_empty_test_req_id_when_empty_values_are_allowed) {
  SessionSettings st = base_settings();
  st.validation.check_fields_have_values = false;
  make(st);
  logon();
  send("1", "112=|");
  const std::string hb = out.pop();
  EXPECT_EQ(field(hb, "35"), "0");
  EXPECT_TRUE(has_field(hb, "112")) << pipes(hb);
  EXPECT_EQ(field(hb, "112"), "");
  send("1");
  EXPECT_FALSE(has_field(out.pop(), "112")) << "no TestReqID, none echoed";
}

// Sessions over a store that takes 64 KiB messages, the default MaxMessageSize.
class SessionLargeMessageTest : public SessionFixture {
 protected:
  store::MemoryStore big_store{store::MemoryStoreConfig{64, 64 * 1024}, kStart};
  SessionSettings large_settings() {
    SessionSettings st = base_settings();
    st.max_message_size = 64 * 1024;
    st.queue_capacity_bytes = 1 << 20;
    return st;
  }
  std::string many(const std::string& field_text, int n, int first_tag = 0) {
    std::string s;
    for (int i = 0; i < n; ++i) s += (first_tag != 0 ? std::to_string(first_tag + i) : "") + field_text;
    return s;
  }
};

TEST_F(SessionLargeMessageTest, rejects_thousands_of_user_defined_fields_and_goes_on) {
  make(large_settings(), &big_store);
  logon();
  send("D", order_body("a") + many("=x|", 1100, 5001));
  const std::string rj = out.pop();
  EXPECT_EQ(field(rj, "35"), "3") << "answered, not dropped as garbled";
  EXPECT_EQ(field(rj, "45"), "2");
  EXPECT_EQ(field(rj, "58"), "Invalid tag number");
  EXPECT_EQ(session->counters().garbled, 0u);
  EXPECT_EQ(session->next_target_seq(), 3u);
  send("D", order_body("b"));
  EXPECT_TRUE(out.messages.empty());
  EXPECT_EQ(app.events.back(), "app:D:3");
}

TEST_F(SessionLargeMessageTest, rejects_thousands_of_repeats_of_a_tag_and_goes_on) {
  make(large_settings(), &big_store);
  logon();
  send("D", order_body("a") + many("58=x|", 3000));
  const std::string rj = out.pop();
  EXPECT_EQ(field(rj, "58"), "Tag appears more than once");
  EXPECT_EQ(field(rj, "371"), "58");
  EXPECT_EQ(session->next_target_seq(), 3u);
  send("D", order_body("b"));
  EXPECT_EQ(app.events.back(), "app:D:3");
}

TEST_F(SessionLargeMessageTest, delivers_a_message_of_thousands_of_fields_the_dictionary_allows) {
  SessionSettings st = large_settings();
  st.validation.check_user_defined_fields = false;
  st.validation.allow_unknown_message_fields = true;
  make(st, &big_store);
  logon();
  send("D", order_body("a") + many("=x|", 5000, 5001));
  EXPECT_TRUE(out.messages.empty());
  EXPECT_EQ(app.events.back(), "app:D:2");
}

TEST_F(SessionLargeMessageTest, rejects_more_fields_than_max_fields_per_message_and_consumes_the_number) {
  SessionSettings st = large_settings();
  st.max_fields_per_message = 100;
  make(st, &big_store);
  logon();
  send("D", order_body("a") + many("58=x|", 200));
  const std::string rj = out.pop();
  EXPECT_EQ(field(rj, "35"), "3");
  EXPECT_EQ(field(rj, "45"), "2");
  EXPECT_EQ(field(rj, "373"), "99");
  EXPECT_EQ(field(rj, "372"), "D");
  EXPECT_EQ(field(rj, "58"), "Message has more than 100 fields (MaxFieldsPerMessage)");
  EXPECT_EQ(session->next_target_seq(), 3u);
  // Every such message is answered the same way: the session never stalls on one.
  send("D", order_body("a") + many("58=x|", 200), "43=Y|122=" + utc_text(now) + "|");
  EXPECT_EQ(field(out.pop(), "373"), "99");
  send("D", order_body("b"));
  EXPECT_EQ(app.events.back(), "app:D:4");
  EXPECT_TRUE(session->is_logged_on());
}

TEST_F(SessionAcceptorTest, rejects_a_message_larger_than_max_message_size_and_goes_on) {
  logon();
  const std::string big = peer_msg("D", order_body("a") + "58=" + std::string(10000, 'x') + "|", 2);
  for (std::size_t at = 0; at < big.size(); at += 1000) feed(big.substr(at, 1000));
  std::string rj = out.pop();
  EXPECT_EQ(field(rj, "35"), "3") << "answered, not dropped";
  EXPECT_EQ(field(rj, "45"), "2");
  EXPECT_EQ(field(rj, "373"), "99");
  EXPECT_EQ(field(rj, "58"),
            "Message of " + std::to_string(big.size()) + " bytes is larger than MaxMessageSize (4096)");
  EXPECT_EQ(session->next_target_seq(), 3u);
  // In one read, with the next message behind it.
  const std::string again = peer_msg("D", order_body("b") + "58=" + std::string(10000, 'y') + "|", 3);
  feed(again + peer_msg("1", "112=after|", 4));
  rj = out.pop();
  EXPECT_EQ(field(rj, "45"), "3");
  EXPECT_EQ(field(out.pop(), "112"), "after");
  EXPECT_EQ(session->next_target_seq(), 5u);
  EXPECT_EQ(session->counters().garbled, 0u);
}

TEST_F(SessionAcceptorTest, drops_a_message_larger_than_max_message_size_whose_checksum_is_wrong) {
  logon();
  std::string big = peer_msg("D", order_body("a") + "58=" + std::string(10000, 'x') + "|", 2);
  big[big.size() - 2] = big[big.size() - 2] == '0' ? '1' : '0';
  feed(big);
  EXPECT_TRUE(out.messages.empty());
  EXPECT_EQ(session->counters().garbled, 1u);
  EXPECT_EQ(session->next_target_seq(), 2u);
  send("1", "112=y|");
  EXPECT_EQ(field(out.pop(), "112"), "y");
}

TEST_F(SessionFixture, max_fields_per_message_out_of_range_is_refused_naming_the_key) {
  SessionSettings st = base_settings();
  st.max_fields_per_message = 0;
  auto s = Session::create(std::move(st), store, app, out, nullptr, at());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("MaxFieldsPerMessage"), std::string::npos) << s.error().message;
}

TEST_F(SessionAcceptorTest, disconnects_on_a_garbled_logon) {
  session->on_connected(at());
  std::string bad = peer_msg("A", "98=0|108=30|", 1);
  bad.replace(bad.find("9="), 4, "9=40");
  feed(bad);
  EXPECT_TRUE(out.disconnected);
  EXPECT_EQ(out.reason, DisconnectReason::kInvalidLogon);
}

TEST_F(SessionAcceptorTest, survives_a_flood_of_garbage_before_and_after_logon) {
  session->on_connected(at());
  std::string junk(1 << 16, 'x');
  for (std::size_t i = 0; i < junk.size(); i += 7) junk[i] = static_cast<char>(i * 31);
  for (int i = 0; i < 16; ++i) feed(junk);
  EXPECT_FALSE(out.disconnected);
  EXPECT_TRUE(out.messages.empty());
  feed(peer_msg("A", "98=0|108=30|", 1));
  EXPECT_EQ(field(out.pop(), "35"), "A");
  peer_seq = 2;
  for (int i = 0; i < 16; ++i) feed(junk + "8=FIX.4.4\x01" "9=99999999\x01");
  send("1", "112=still here|");
  ASSERT_FALSE(out.messages.empty());
  EXPECT_EQ(field(out.messages.back(), "112"), "still here");
  EXPECT_TRUE(session->is_logged_on());
}

TEST_F(SessionAcceptorTest, reassembles_a_message_split_across_reads) {
  session->on_connected(at());
  const std::string lo = peer_msg("A", "98=0|108=30|", 1);
  for (char c : lo) feed(std::string(1, c));
  EXPECT_TRUE(session->is_logged_on());
  peer_seq = 2;
  const std::string two = peer_msg("1", "112=a|", 2) + peer_msg("1", "112=b|", 3);
  feed(two.substr(0, 30));
  feed(two.substr(30));
  out.messages.erase(out.messages.begin());
  ASSERT_EQ(out.messages.size(), 2u);
  EXPECT_EQ(field(out.messages[0], "112"), "a");
  EXPECT_EQ(field(out.messages[1], "112"), "b");
}

TEST_F(SessionAcceptorTest, reverses_routing_fields_on_a_reject) {
  logon();
  send("D", "11=a|21=1|55=X|54=1|60=20240315-12:00:00|40=w|", "115=JCD|116=CS|");
  const std::string rj = out.pop();
  EXPECT_EQ(field(rj, "128"), "JCD");
  EXPECT_EQ(field(rj, "129"), "CS");
  EXPECT_EQ(field(rj, "371"), "40");
}

// ---------------------------------------------------------------------------
// Application decisions

TEST_F(SessionAcceptorTest, answers_an_unsupported_message_type_with_a_business_reject) {
  app.app_decision = Decision::unsupported_message_type();
  logon();
  send("D", order_body("x"));
  const std::string j = out.pop();
  EXPECT_EQ(pipes(j).substr(pipes(j).find("|45=")),
            "|45=2|58=Unsupported Message Type|372=D|380=3|10=" + field(j, "10") + "|");
  EXPECT_EQ(session->next_target_seq(), 3u);
}

TEST_F(SessionFixture, fix40_answers_an_unsupported_message_type_with_a_reject) {
  make(base_settings("FIX.4.0", "FIX40.xml"));
  app.app_decision = Decision::unsupported_message_type();
  logon();
  send("D", "11=a|21=1|55=X|54=1|38=1|40=1|");
  const std::string rj = out.pop();
  EXPECT_EQ(field(rj, "35"), "3");
  EXPECT_EQ(field(rj, "58"), "Unsupported message type");
  EXPECT_EQ(session->next_target_seq(), 3u);
}

TEST_F(SessionAcceptorTest, business_reject_names_the_field_in_its_text) {
  app.app_decision = Decision::business_reject(BusinessRejectReason::kUnknownSecurity, 55);
  logon();
  send("D", order_body("x"));
  const std::string j = out.pop();
  EXPECT_EQ(field(j, "58"), "Unknown Security (55)");
  EXPECT_EQ(field(j, "380"), "2");
}

TEST_F(SessionAcceptorTest, application_reject_sends_a_session_reject) {
  app.app_decision = Decision::reject(RejectReason::kValueIncorrect, 54, "no selling today");
  logon();
  send("D", order_body("x"));
  const std::string rj = out.pop();
  EXPECT_EQ(field(rj, "58"), "no selling today");
  EXPECT_EQ(field(rj, "371"), "54");
  EXPECT_EQ(field(rj, "373"), "5");
}

TEST_F(SessionAcceptorTest, application_logout_decision_accepts_then_logs_out) {
  app.app_decision = Decision::logout("limits breached");
  logon();
  send("D", order_body("x"));
  const std::string lo = out.pop();
  EXPECT_EQ(field(lo, "58"), "limits breached");
  EXPECT_EQ(session->next_target_seq(), 3u);
}

// ---------------------------------------------------------------------------
// Sending

TEST_F(SessionAcceptorTest, refuses_to_send_when_not_logged_on) {
  EXPECT_EQ(send_order("x"), SendStatus::kNotLoggedOn);
  session->on_connected(at());
  EXPECT_EQ(send_order("x"), SendStatus::kNotLoggedOn);
  EXPECT_EQ(session->next_sender_seq(), 1u);
}

TEST_F(SessionAcceptorTest, sends_an_application_message_and_stores_it) {
  logon();
  ASSERT_EQ(send_order("o2"), SendStatus::kOk);
  const std::string m = out.pop();
  EXPECT_EQ(field(m, "35"), "D");
  EXPECT_EQ(field(m, "34"), "2");
  EXPECT_EQ(field(m, "11"), "o2");
  EXPECT_EQ(session->next_sender_seq(), 3u);
  std::string stored;
  (void)store.replay(2, 2, 10, [&](const store::StoredMessage& s) {
    stored.assign(s.bytes.data(), s.bytes.size());
    return true;
  });
  EXPECT_EQ(stored, m) << "the bytes sent are the bytes stored";
}

TEST_F(SessionAcceptorTest, a_second_open_message_is_busy_and_the_first_still_sends) {
  logon();
  OutgoingMessage& a = session->begin_app("D", at());
  ASSERT_EQ(a.status(), SendStatus::kOk);
  OutgoingMessage& b = session->begin_app("D", at());
  EXPECT_EQ(b.status(), SendStatus::kBusy);
  EXPECT_EQ(session->send(b), SendStatus::kBusy);
  a.add(11, "a");
  a.add_char(21, '1');
  EXPECT_EQ(session->send(a), SendStatus::kOk);
}

TEST_F(SessionAcceptorTest, to_app_can_veto_a_send_without_using_a_sequence_number) {
  logon();
  app.veto_sends = true;
  EXPECT_EQ(send_order("x"), SendStatus::kDoNotSend);
  EXPECT_TRUE(out.messages.empty());
  EXPECT_EQ(session->next_sender_seq(), 2u);
  app.veto_sends = false;
  EXPECT_EQ(send_order("y"), SendStatus::kOk);
  EXPECT_EQ(field(out.pop(), "34"), "2");
}

TEST_F(SessionAcceptorTest, abandoned_message_uses_no_sequence_number) {
  logon();
  OutgoingMessage& a = session->begin_app("D", at());
  a.add(11, "a");
  session->abandon(a);
  EXPECT_EQ(send_order("b"), SendStatus::kOk);
  EXPECT_EQ(field(out.pop(), "34"), "2");
}

TEST_F(SessionAcceptorTest, sends_poss_resend_and_extra_header_fields) {
  logon();
  SendOptions opts;
  opts.poss_resend = true;
  opts.extra_header = "128=BROKER\x01";
  const SendStatus st = session->send_app("D", at(), [](OutgoingMessage& m) { m.add(11, "z"); }, opts);
  ASSERT_EQ(st, SendStatus::kOk);
  const std::string m = out.pop();
  EXPECT_EQ(field(m, "97"), "Y");
  EXPECT_EQ(field(m, "128"), "BROKER");
}

// ---------------------------------------------------------------------------
// FIXT.1.1

TEST_F(SessionFixture, fixt_logon_carries_default_appl_ver_id_both_ways) {
  auto st = base_settings("FIXT.1.1", "FIXT11.xml");
  st.app_dictionary = shared_dictionary("FIX50SP2.xml");
  st.default_appl_ver_id = "FIX.5.0SP2";
  make(st);
  const std::string reply = logon("98=0|108=30|1137=9|");
  EXPECT_EQ(field(reply, "1137"), "9");
  EXPECT_EQ(session->target_default_appl_ver_id(), "9");
  app.app_decision = Decision::unsupported_message_type();
  send("D", order_body("x"));
  EXPECT_EQ(field(out.pop(), "1137"), "9") << "QuickFIX puts DefaultApplVerID on its BusinessMessageReject";
}

TEST_F(SessionFixture, fixt_session_messages_are_checked_against_the_transport_dictionary_only) {
  auto st = base_settings("FIXT.1.1", "FIXT11.xml");
  st.app_dictionary = shared_dictionary("FIX50SP2.xml");
  st.default_appl_ver_id = "FIX.5.0SP2";
  make(st);
  logon("98=0|108=30|1137=9|");
  // 999 is an application field of FIX 5.0SP2 but no field of FIXT.1.1.
  send("0", "999=HI|");
  std::string rj = out.pop();
  EXPECT_EQ(field(rj, "58"), "Invalid tag number");
  EXPECT_EQ(field(rj, "371"), "999");
  EXPECT_EQ(field(rj, "373"), "0");
  // Text (58) is a FIXT.1.1 field, just not one of a Heartbeat.
  send("0", "58=Text|");
  rj = out.pop();
  EXPECT_EQ(field(rj, "58"), "Tag not defined for this message type");
  EXPECT_EQ(field(rj, "373"), "2");
  // Application messages still use the application dictionary.
  send("D", order_body("x"));
  EXPECT_EQ(app.app_messages, 1u);
}

TEST_F(SessionFixture, fixt_logon_without_default_appl_ver_id_is_refused) {
  auto st = base_settings("FIXT.1.1", "FIXT11.xml");
  st.app_dictionary = shared_dictionary("FIX50SP2.xml");
  st.default_appl_ver_id = "9";
  make(st);
  session->on_connected(at());
  send("A", "98=0|108=30|");
  EXPECT_TRUE(out.disconnected);
  EXPECT_TRUE(out.messages.empty());
}

TEST_F(SessionFixture, runs_with_the_built_in_dictionary) {
  make(base_settings("FIX.4.4", ""));
  logon();
  send("1", "112=x|");
  EXPECT_EQ(field(out.pop(), "112"), "x");
  send("D", order_body("o"));  // application messages: header checks only
  EXPECT_EQ(app.app_messages, 1u);
}

// ---------------------------------------------------------------------------
// Configuration and routing

TEST(SessionSettingsTest, names_the_key_at_fault) {
  SessionSettings st;
  st.sender_comp_id = "A";
  st.target_comp_id = "";
  EXPECT_NE(st.check().error().message.find("TargetCompID"), std::string::npos);
  st.target_comp_id = "B";
  st.begin_string = "FIX.9.9";
  EXPECT_NE(st.check().error().message.find("BeginString"), std::string::npos);
  st.begin_string = "FIXT.1.1";
  EXPECT_NE(st.check().error().message.find("DefaultApplVerID"), std::string::npos);
  st.default_appl_ver_id = "FIX.5.0SP1";
  EXPECT_TRUE(st.check().ok());
  EXPECT_EQ(appl_ver_id_code("FIX.5.0SP1"), "8");
  EXPECT_EQ(appl_ver_id_code("FIX44"), "6");
}

TEST(SessionCreateTest, refuses_a_store_that_cannot_hold_max_message_size) {
  store::MemoryStore small(store::MemoryStoreConfig{8, 1024});
  CollectingOutput out;
  RecordingApp app;
  SessionSettings st;
  st.sender_comp_id = "A";
  st.target_comp_id = "B";
  st.max_message_size = 4096;
  auto s = Session::create(st, small, app, out);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("MaxMessageSize"), std::string::npos);
}

TEST(SessionRouteTest, peeks_begin_string_comp_ids_and_type_of_a_message) {
  const std::string m = wire("8=FIX.4.4|35=A|34=1|49=TW|52=20240315-12:00:00|56=ISLD|98=0|108=30|");
  RouteKey k;
  ASSERT_TRUE(peek_route(m, k));
  EXPECT_EQ(k.begin_string, "FIX.4.4");
  EXPECT_EQ(k.msg_type, "A");
  EXPECT_EQ(k.sender_comp_id, "ISLD");
  EXPECT_EQ(k.target_comp_id, "TW");
  EXPECT_TRUE(k.matches(SessionID{"FIX.4.4", "ISLD", "TW", ""}));
  EXPECT_FALSE(k.matches(SessionID{"FIX.4.2", "ISLD", "TW", ""}));
  EXPECT_FALSE(peek_route(wire("8=FIX.4.4|35=0|34=1|52=20240315-12:00:00|56=ISLD|"), k));
  EXPECT_EQ((SessionID{"FIX.4.4", "ISLD", "TW", "q"}).to_string(), "FIX.4.4:ISLD->TW:q");
}

class CountingLogger final : public Logger {
 public:
  bool enabled(LogLevel) const noexcept override { return true; }
  void log(LogLevel level, const SessionID&, std::string_view text) noexcept override {
    lines.push_back(std::string(to_string(level)) + " " + std::string(text));
  }
  std::vector<std::string> lines;
};

TEST_F(SessionFixture, logs_session_events) {
  CountingLogger logger;
  auto s = Session::create(base_settings(), store, app, out, &logger, at());
  ASSERT_TRUE(s.ok());
  session = std::move(*s);
  logon();
  feed(peer_msg("0", "", 5));
  const auto has = [&](const std::string& needle) {
    return std::any_of(logger.lines.begin(), logger.lines.end(),
                       [&](const std::string& l) { return l.find(needle) != std::string::npos; });
  };
  EXPECT_TRUE(has("INFO Received logon request"));
  EXPECT_TRUE(has("WARN MsgSeqNum too high, expecting 2 but received 5"));
  EXPECT_TRUE(has("Sent ResendRequest FROM: 2 TO: 4"));
}

}  // namespace
}  // namespace hft::session::test
