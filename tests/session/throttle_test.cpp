// Throttling (docs/session.md, "Throttling"): OutgoingThrottleLimit with
// `reject` and `queue`, IncomingThrottleLimit with `reject`, `logout` and
// `disconnect`; the exact window; what counts; sequence numbers kept in step
// across held messages, interleaved session messages, resends and
// reconnects; one WARN line per window.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "fixture.hpp"

namespace hft::session::test {
namespace {

constexpr std::int64_t kMs = 1'000'000;

class CapturingLogger final : public Logger {
 public:
  bool enabled(LogLevel) const noexcept override { return true; }
  void log(LogLevel level, const SessionID&, std::string_view text) noexcept override {
    lines.push_back(std::string(to_string(level)) + " " + std::string(text));
  }
  [[nodiscard]] std::size_t count(const std::string& needle) const {
    return static_cast<std::size_t>(std::count_if(lines.begin(), lines.end(), [&](const std::string& l) {
      return l.find(needle) != std::string::npos;
    }));
  }
  std::vector<std::string> lines;
};

class SessionThrottle : public SessionFixture {
 protected:
  CapturingLogger logger;

  SessionSettings outgoing(std::uint32_t limit, OutgoingThrottleAction action,
                           std::uint32_t interval_ms = 1000, std::uint32_t queue = 1000) {
    SessionSettings st = base_settings();
    st.outgoing_throttle_limit = limit;
    st.outgoing_throttle_interval_ms = interval_ms;
    st.outgoing_throttle_action = action;
    st.outgoing_throttle_queue_size = queue;
    return st;
  }
  SessionSettings incoming(std::uint32_t limit, IncomingThrottleAction action,
                           std::uint32_t interval_ms = 1000) {
    SessionSettings st = base_settings();
    st.incoming_throttle_limit = limit;
    st.incoming_throttle_interval_ms = interval_ms;
    st.incoming_throttle_action = action;
    return st;
  }
  void make_logged(SessionSettings st, store::MessageStore* other = nullptr) {
    auto s = Session::create(std::move(st), other != nullptr ? *other : store, app, out, &logger, at());
    ASSERT_TRUE(s.ok()) << s.error().message;
    session = std::move(*s);
  }

  /// Takes every message sent so far.
  std::vector<std::string> take() {
    std::vector<std::string> m;
    m.swap(out.messages);
    return m;
  }
  static std::vector<std::string> of_type(const std::vector<std::string>& msgs, const std::string& type) {
    std::vector<std::string> r;
    for (const auto& m : msgs) {
      if (field(m, "35") == type) r.push_back(m);
    }
    return r;
  }
  /// Every message's MsgSeqNum is one more than the one before (from `first`).
  static void expect_contiguous(const std::vector<std::string>& msgs, std::uint64_t first) {
    std::uint64_t want = first;
    for (const auto& m : msgs) {
      EXPECT_EQ(field(m, "34"), std::to_string(want)) << pipes(m);
      ++want;
    }
  }
};

// ---------------------------------------------------------------------------
// Outgoing, `reject`

TEST_F(SessionThrottle, outgoing_reject_refuses_the_send_over_the_limit_and_uses_no_sequence_number) {
  make_logged(outgoing(3, OutgoingThrottleAction::kReject));
  logon();
  for (int i = 0; i < 3; ++i) EXPECT_EQ(send_order("A" + std::to_string(i)), SendStatus::kOk);
  const std::uint64_t next = session->next_sender_seq();
  EXPECT_EQ(send_order("over"), SendStatus::kThrottled);
  EXPECT_EQ(session->next_sender_seq(), next) << "a refused send uses no number";
  EXPECT_EQ(of_type(take(), "D").size(), 3u);
  EXPECT_EQ(session->counters().sends_throttled, 1u);
  EXPECT_EQ(session->throttle_queue_depth(), 0u);
  // The next one that is allowed carries the number the refused one did not use.
  now += 1000 * kMs;
  EXPECT_EQ(send_order("later"), SendStatus::kOk);
  const auto sent = take();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(field(sent[0], "34"), std::to_string(next));
  EXPECT_EQ(field(sent[0], "11"), "later");
}

TEST_F(SessionThrottle, outgoing_window_is_exact_no_more_than_the_limit_in_any_interval) {
  make_logged(outgoing(3, OutgoingThrottleAction::kReject));
  logon();
  const std::int64_t t0 = now;
  auto at_ms = [&](std::int64_t ms, const char* id) {
    now = t0 + ms * kMs;
    return send_order(id);
  };
  EXPECT_EQ(at_ms(0, "a"), SendStatus::kOk);
  EXPECT_EQ(at_ms(400, "b"), SendStatus::kOk);
  EXPECT_EQ(at_ms(800, "c"), SendStatus::kOk);
  now = t0 + 1000 * kMs - 1;  // 3 in (t-1000 ms, t]
  EXPECT_EQ(send_order("x"), SendStatus::kThrottled);
  EXPECT_EQ(at_ms(1000, "d"), SendStatus::kOk) << "the first one is a full interval old";
  EXPECT_EQ(at_ms(1001, "y"), SendStatus::kThrottled) << "b, c, d are within the interval";
  EXPECT_EQ(at_ms(1399, "z"), SendStatus::kThrottled);
  EXPECT_EQ(at_ms(1400, "e"), SendStatus::kOk);
  const auto ids = of_type(take(), "D");
  ASSERT_EQ(ids.size(), 5u);
  EXPECT_EQ(field(ids[3], "11"), "d");
  EXPECT_EQ(field(ids[4], "11"), "e");
  EXPECT_EQ(session->counters().sends_throttled, 3u);
}

TEST_F(SessionThrottle, a_burst_of_the_limit_is_allowed_and_allowed_again_after_the_interval) {
  make_logged(outgoing(100, OutgoingThrottleAction::kReject, 50));
  logon();
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 100; ++i) ASSERT_EQ(send_order("o"), SendStatus::kOk) << round << " " << i;
    EXPECT_EQ(send_order("over"), SendStatus::kThrottled);
    now += 50 * kMs;
  }
  EXPECT_EQ(of_type(take(), "D").size(), 300u);
}

TEST_F(SessionThrottle, session_messages_are_never_refused_nor_counted) {
  make_logged(outgoing(1, OutgoingThrottleAction::kReject));
  logon();
  EXPECT_EQ(send_order("a"), SendStatus::kOk);
  // The peer's TestRequest is answered, a bad message rejected, a gap
  // requested: none of it waits for the window or takes from it.
  send("1", "112=T1|");
  send("D", "11=b|21=1|55=IBM|54=Z|60=20240315-12:00:00|40=1|");  // 54=Z: not a Side
  feed(peer_msg("0", "", peer_seq + 5));
  const auto sent = take();
  ASSERT_EQ(sent.size(), 4u);
  EXPECT_EQ(field(sent[1], "35"), "0");
  EXPECT_EQ(field(sent[2], "35"), "3");
  EXPECT_EQ(field(sent[3], "35"), "2");
  expect_contiguous(sent, 2);
  EXPECT_EQ(send_order("c"), SendStatus::kThrottled) << "still one application message in the window";
}

TEST_F(SessionThrottle, one_warn_line_per_window_not_one_per_refused_send) {
  make_logged(outgoing(2, OutgoingThrottleAction::kReject));
  logon();
  for (int i = 0; i < 50; ++i) (void)send_order("o");
  EXPECT_EQ(logger.count("WARN Outgoing throttle"), 1u);
  now += 1000 * kMs;
  for (int i = 0; i < 50; ++i) (void)send_order("o");
  EXPECT_EQ(logger.count("WARN Outgoing throttle"), 2u);
  EXPECT_EQ(logger.count("47 more refused since the last report"), 1u);
  EXPECT_EQ(session->counters().sends_throttled, 96u);
}

// ---------------------------------------------------------------------------
// Outgoing, `queue`

TEST_F(SessionThrottle, queued_messages_go_out_in_sequence_as_the_window_allows) {
  make_logged(outgoing(2, OutgoingThrottleAction::kQueue, 1000, 10));
  logon();
  for (int i = 1; i <= 5; ++i) EXPECT_EQ(send_order("C" + std::to_string(i)), SendStatus::kOk);
  EXPECT_EQ(session->next_sender_seq(), 7u) << "numbered and journaled when sent";
  EXPECT_EQ(of_type(take(), "D").size(), 2u);
  EXPECT_EQ(session->throttle_queue_depth(), 3u);
  EXPECT_EQ(session->counters().sends_throttle_queued, 3u);
  EXPECT_EQ(session->counters().throttle_queue_max, 3u);

  advance(0.9);
  EXPECT_TRUE(take().empty()) << "the window is still full";
  advance(0.1);
  auto sent = take();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(field(sent[0], "11"), "C3");
  EXPECT_EQ(field(sent[1], "11"), "C4");
  advance(1.0);
  sent = take();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(field(sent[0], "11"), "C5");
  EXPECT_EQ(field(sent[0], "34"), "6");
  EXPECT_FALSE(has_field(sent[0], "43")) << "a held message is sent, not resent";
  EXPECT_EQ(session->throttle_queue_depth(), 0u);
}

TEST_F(SessionThrottle, held_messages_keep_their_order_with_interleaved_session_messages) {
  make_logged(outgoing(1, OutgoingThrottleAction::kQueue, 1000, 100));
  logon();
  std::vector<std::string> wire_order;
  auto collect = [&] {
    for (auto& m : take()) wire_order.push_back(std::move(m));
  };
  collect();
  // Orders, a TestRequest (Heartbeat answer), a bad message (Reject), more
  // orders, a ResendRequest of ours: all numbered as they are made.
  EXPECT_EQ(send_order("1"), SendStatus::kOk);
  EXPECT_EQ(send_order("2"), SendStatus::kOk);
  send("1", "112=T1|");
  EXPECT_EQ(send_order("3"), SendStatus::kOk);
  send("D", "11=b|21=1|55=IBM|54=Z|60=20240315-12:00:00|40=1|");
  EXPECT_EQ(send_order("4"), SendStatus::kOk);
  collect();
  ASSERT_EQ(wire_order.size(), 1u) << "only the first order is out; the Heartbeat waits behind order 2";
  for (int i = 0; i < 40 && session->throttle_queue_depth() != 0; ++i) {
    advance(0.25);
    collect();
  }
  EXPECT_EQ(session->throttle_queue_depth(), 0u);
  ASSERT_EQ(wire_order.size(), 6u);
  expect_contiguous(wire_order, 2);
  std::string types;
  for (const auto& m : wire_order) types += field(m, "35");
  EXPECT_EQ(types, "DD0D3D");
  // And the peer, fed back every message, sees no gap: checked by the
  // sequence above; nothing was resent.
  for (const auto& m : wire_order) EXPECT_FALSE(has_field(m, "43"));
  // Once nothing is held, an idle session heartbeats again.
  advance(31);
  EXPECT_FALSE(of_type(take(), "0").empty());
}

TEST_F(SessionThrottle, a_full_queue_refuses_with_throttled_and_uses_no_number) {
  make_logged(outgoing(1, OutgoingThrottleAction::kQueue, 1000, 2));
  logon();
  EXPECT_EQ(send_order("sent"), SendStatus::kOk);
  EXPECT_EQ(send_order("held1"), SendStatus::kOk);
  EXPECT_EQ(send_order("held2"), SendStatus::kOk);
  const std::uint64_t next = session->next_sender_seq();
  EXPECT_EQ(send_order("refused"), SendStatus::kThrottled);
  EXPECT_EQ(session->next_sender_seq(), next);
  EXPECT_EQ(session->counters().sends_throttled, 1u);
  EXPECT_EQ(session->counters().sends_throttle_queued, 2u);
  EXPECT_EQ(logger.count("WARN Outgoing throttle"), 1u) << "queueing and the refusal: one line in the window";
}

TEST_F(SessionThrottle, a_disconnect_with_a_full_queue_loses_nothing_it_comes_with_the_resend) {
  make_logged(outgoing(2, OutgoingThrottleAction::kQueue, 1000, 4));
  logon();
  for (int i = 1; i <= 6; ++i) ASSERT_EQ(send_order("C" + std::to_string(i)), SendStatus::kOk);
  EXPECT_EQ(send_order("refused"), SendStatus::kThrottled) << "the queue is full";
  std::vector<std::string> received = of_type(take(), "D");  // what the peer got: C1, C2
  ASSERT_EQ(received.size(), 2u);
  EXPECT_EQ(session->throttle_queue_depth(), 4u);

  session->on_disconnected(at());
  EXPECT_EQ(session->throttle_queue_depth(), 0u);
  EXPECT_EQ(session->next_sender_seq(), 8u) << "the held messages keep their numbers";
  advance(5);
  EXPECT_TRUE(out.messages.empty()) << "nothing goes out without a connection";

  // Reconnect: the peer expected 4 and sees our Logon at 8, so it asks.
  session->on_connected(at());
  feed(peer_msg("A", "98=0|108=30|", peer_seq++));
  const std::string logon_answer = out.pop();
  EXPECT_EQ(field(logon_answer, "34"), "8");
  send("2", "7=4|16=0|");
  const auto resent = take();
  // The resends are not throttled: all four at once, as PossDup, in order.
  const auto orders = of_type(resent, "D");
  ASSERT_EQ(orders.size(), 4u);
  for (std::size_t i = 0; i < orders.size(); ++i) {
    EXPECT_EQ(field(orders[i], "34"), std::to_string(4 + i));
    EXPECT_EQ(field(orders[i], "43"), "Y");
    received.push_back(orders[i]);
  }
  // Every order exactly once.
  std::multiset<std::string> ids;
  for (const auto& m : received) ids.insert(field(m, "11"));
  EXPECT_EQ(ids.size(), 6u);
  for (int i = 1; i <= 6; ++i) EXPECT_EQ(ids.count("C" + std::to_string(i)), 1u);
  advance(3);
  EXPECT_TRUE(of_type(take(), "D").empty()) << "nothing is sent twice";
}

TEST_F(SessionThrottle, a_resend_request_while_messages_are_held_resends_only_what_went_out) {
  make_logged(outgoing(1, OutgoingThrottleAction::kQueue, 1000, 10));
  logon();
  for (int i = 1; i <= 4; ++i) ASSERT_EQ(send_order("C" + std::to_string(i)), SendStatus::kOk);
  EXPECT_EQ(of_type(take(), "D").size(), 1u);  // C1 = seq 2; 3..5 held
  send("2", "7=2|16=0|");
  auto sent = take();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(field(sent[0], "34"), "2");
  EXPECT_EQ(field(sent[0], "43"), "Y");
  advance(3.1);
  sent = take();
  ASSERT_EQ(sent.size(), 3u);
  expect_contiguous(sent, 3);
  for (const auto& m : sent) EXPECT_FALSE(has_field(m, "43")) << "held messages go out once, as themselves";
}

TEST_F(SessionThrottle, a_send_from_to_app_during_a_resend_is_held_in_sequence_too) {
  // to_app of a resend sends a new order: the resend's store replay is
  // running, so the held messages are not let out from inside it; the new
  // order is numbered after them and everything leaves in sequence.
  struct SendsOnResend : RecordingApp {
    Session* session = nullptr;
    std::int64_t now = 0;
    int sent = 0;
    Decision to_app(Session&, std::span<const char>, bool poss_dup) noexcept override {
      if (poss_dup && sent++ == 0) {
        (void)session->send_app("D", Instant::from_utc(now), [](OutgoingMessage& m) { m.add(11, "NEW"); });
      }
      return Decision::accept();
    }
  };
  SendsOnResend sends;
  auto s = Session::create(outgoing(1, OutgoingThrottleAction::kQueue, 1000, 10), store, sends, out, &logger, at());
  ASSERT_TRUE(s.ok());
  session = std::move(*s);
  sends.session = session.get();
  logon();
  for (int i = 1; i <= 3; ++i) ASSERT_EQ(send_order("C" + std::to_string(i)), SendStatus::kOk);
  EXPECT_EQ(of_type(take(), "D").size(), 1u);  // C1 = 2; C2 = 3 and C3 = 4 held
  now += 1000 * kMs;                           // the window allows one, no timer yet
  sends.now = now;
  send("2", "7=2|16=0|");
  auto sent = take();
  ASSERT_GE(sent.size(), 2u);
  EXPECT_EQ(field(sent[0], "34"), "2");
  EXPECT_EQ(field(sent[0], "43"), "Y");
  EXPECT_EQ(field(sent[1], "11"), "C2") << "let out after the resend, not inside it";
  advance(3);
  for (auto& m : take()) sent.push_back(std::move(m));
  ASSERT_EQ(sent.size(), 4u);
  sent.erase(sent.begin());
  expect_contiguous(sent, 3);
  EXPECT_EQ(field(sent[2], "11"), "NEW");
}

TEST_F(SessionThrottle, a_logout_waits_behind_held_messages_and_its_timeout_starts_when_it_is_sent) {
  auto st = outgoing(1, OutgoingThrottleAction::kQueue, 1000, 10);
  st.logout_timeout = 1;
  make_logged(st);
  logon();
  for (int i = 1; i <= 4; ++i) ASSERT_EQ(send_order("C" + std::to_string(i)), SendStatus::kOk);
  take();
  session->logout("bye", at());
  EXPECT_TRUE(out.messages.empty());
  advance(2.05);
  EXPECT_TRUE(session->is_connected()) << "the Logout has not gone out: no timeout yet";
  advance(1.0);
  const auto sent = take();
  ASSERT_EQ(sent.size(), 4u);
  EXPECT_EQ(field(sent.back(), "35"), "5");
  expect_contiguous(sent, 3);
  advance(1.1);
  EXPECT_FALSE(session->is_connected());
  EXPECT_EQ(out.reason, DisconnectReason::kLogoutTimeout);
}

TEST_F(SessionThrottle, queueing_settings_are_checked) {
  SessionSettings st = outgoing(1'000'001, OutgoingThrottleAction::kReject);
  EXPECT_NE(st.check().error().message.find("OutgoingThrottleLimit"), std::string::npos);
  st = outgoing(10, OutgoingThrottleAction::kQueue, 0);
  EXPECT_NE(st.check().error().message.find("OutgoingThrottleIntervalMs"), std::string::npos);
  st = outgoing(10, OutgoingThrottleAction::kQueue, 1000, 0);
  EXPECT_NE(st.check().error().message.find("OutgoingThrottleQueueSize"), std::string::npos);
  st = incoming(1'000'001, IncomingThrottleAction::kReject);
  EXPECT_NE(st.check().error().message.find("IncomingThrottleLimit"), std::string::npos);
  st = incoming(5, IncomingThrottleAction::kReject, 60'001);
  EXPECT_NE(st.check().error().message.find("IncomingThrottleIntervalMs"), std::string::npos);
  st = outgoing(10, OutgoingThrottleAction::kQueue, 30'000);
  st.initiator = true;
  st.heart_bt_int = 30;
  EXPECT_NE(st.check().error().message.find("shorter than HeartBtInt"), std::string::npos);
  st.heart_bt_int = 31;
  EXPECT_TRUE(st.check().ok());
}

// ---------------------------------------------------------------------------
// Incoming

TEST_F(SessionThrottle,
       incoming_reject_answers_the_message_over_the_limit_and_keeps_sequence_numbers_in_step) {
  make_logged(incoming(2, IncomingThrottleAction::kReject));
  logon();
  send("D", order_body("A"));
  send("D", order_body("B"));
  send("D", order_body("C"));  // seq 4: over the limit
  EXPECT_EQ(app.app_messages, 2u);
  auto sent = take();
  ASSERT_EQ(sent.size(), 1u);
  const std::string& r = sent[0];
  EXPECT_EQ(field(r, "35"), "3");
  EXPECT_EQ(field(r, "45"), "4");
  EXPECT_EQ(field(r, "58"), "Throttle limit exceeded");
  EXPECT_EQ(field(r, "373"), "99");
  EXPECT_EQ(field(r, "372"), "D");
  EXPECT_EQ(session->next_target_seq(), 5u) << "its number is consumed";
  EXPECT_EQ(session->counters().incoming_throttled, 1u);
  // The next message is in sequence: no ResendRequest either way.
  now += 1000 * kMs;
  send("D", order_body("D"));
  EXPECT_EQ(app.app_messages, 3u);
  EXPECT_TRUE(take().empty());
  EXPECT_EQ(session->next_target_seq(), 6u);
  EXPECT_TRUE(session->is_logged_on());
}

TEST_F(SessionThrottle, incoming_window_is_exact) {
  make_logged(incoming(2, IncomingThrottleAction::kReject));
  logon();
  const std::int64_t t0 = now;
  auto at_ms = [&](std::int64_t ms) {
    now = t0 + ms * kMs;
    const std::uint64_t before = app.app_messages;
    send("D", order_body("X"));
    return app.app_messages > before;
  };
  EXPECT_TRUE(at_ms(0));
  EXPECT_TRUE(at_ms(500));
  EXPECT_FALSE(at_ms(999));
  EXPECT_TRUE(at_ms(1000));
  EXPECT_FALSE(at_ms(1001));
  EXPECT_FALSE(at_ms(1499));
  EXPECT_TRUE(at_ms(1500));
  EXPECT_EQ(of_type(take(), "3").size(), 3u);
  EXPECT_EQ(session->next_target_seq(), peer_seq);
}

TEST_F(SessionThrottle, incoming_reject_before_fix_4_2_names_the_reason_in_text_and_4_2_has_no_373_for_it) {
  for (const std::string version : {"FIX.4.1", "FIX.4.2"}) {
    SCOPED_TRACE(version);
    out.messages.clear();
    store::MemoryStore own{store::MemoryStoreConfig{64, 4096}, kStart};
    SessionSettings st = base_settings(version, "");
    st.incoming_throttle_limit = 1;
    make_logged(st, &own);
    logon();
    send("D", order_body("A"));
    send("D", order_body("B"));
    const auto rejects = of_type(take(), "3");
    ASSERT_EQ(rejects.size(), 1u);
    EXPECT_EQ(field(rejects[0], "58"), "Throttle limit exceeded");
    EXPECT_EQ(field(rejects[0], "45"), "3");
    EXPECT_FALSE(has_field(rejects[0], "373"));
    EXPECT_EQ(has_field(rejects[0], "372"), version == "FIX.4.2");
    session.reset();
  }
}

TEST_F(SessionThrottle, incoming_logout_rejects_then_logs_out_and_disconnects_on_the_answer) {
  make_logged(incoming(2, IncomingThrottleAction::kLogout));
  logon();
  send("D", order_body("A"));
  send("D", order_body("B"));
  send("D", order_body("C"));
  send("D", order_body("E"));  // already logging out: rejected as well, one Logout
  auto sent = take();
  ASSERT_EQ(sent.size(), 3u);
  EXPECT_EQ(field(sent[0], "35"), "3");
  EXPECT_EQ(field(sent[1], "35"), "5");
  EXPECT_EQ(field(sent[1], "58"), "Throttle limit exceeded");
  EXPECT_EQ(field(sent[2], "35"), "3");
  EXPECT_EQ(field(sent[2], "45"), "5");
  EXPECT_EQ(session->state(), SessionState::kLogoutSent);
  EXPECT_EQ(session->next_target_seq(), 6u);
  send("5");
  EXPECT_FALSE(session->is_connected());
  EXPECT_EQ(out.reason, DisconnectReason::kLogoutComplete);
}

TEST_F(SessionThrottle, incoming_logout_disconnects_after_the_logout_timeout_without_an_answer) {
  auto st = incoming(1, IncomingThrottleAction::kLogout);
  st.logout_timeout = 2;
  make_logged(st);
  logon();
  send("D", order_body("A"));
  send("D", order_body("B"));
  EXPECT_EQ(field(out.messages.back(), "35"), "5");
  advance(1.9);
  EXPECT_TRUE(session->is_connected());
  advance(0.2);
  EXPECT_FALSE(session->is_connected());
  EXPECT_EQ(out.reason, DisconnectReason::kLogoutTimeout);
}

TEST_F(SessionThrottle,
       incoming_disconnect_closes_at_once_and_the_message_is_asked_for_again_after_the_next_logon) {
  make_logged(incoming(2, IncomingThrottleAction::kDisconnect));
  logon();
  send("D", order_body("A"));
  send("D", order_body("B"));
  send("D", order_body("C"));  // seq 4
  EXPECT_TRUE(out.messages.empty()) << "no Reject, no Logout";
  EXPECT_FALSE(session->is_connected());
  EXPECT_EQ(out.reason, DisconnectReason::kThrottled);
  EXPECT_EQ(app.app_messages, 2u);
  EXPECT_EQ(session->next_target_seq(), 4u) << "not accepted";
  EXPECT_EQ(logger.count("ERROR Incoming throttle"), 1u);

  // Next logon (seq 5): we ask for 4 and the resent C is processed, not
  // counted (we asked for it).
  out.disconnected = false;
  session->on_connected(at());
  feed(peer_msg("A", "98=0|108=30|", 5));
  auto sent = take();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(field(sent[1], "35"), "2");
  EXPECT_EQ(field(sent[1], "7"), "4");
  feed(peer_msg("D", order_body("C"), 4, "43=Y|122=" + utc_text(now) + "|"));
  EXPECT_EQ(app.app_messages, 3u);
  EXPECT_EQ(session->next_target_seq(), 6u);
  EXPECT_TRUE(session->is_connected());
}

TEST_F(SessionThrottle, session_messages_and_resends_we_asked_for_do_not_count_towards_the_incoming_limit) {
  make_logged(incoming(1, IncomingThrottleAction::kReject));
  logon();
  for (int i = 0; i < 5; ++i) send("0");
  send("1", "112=X|");
  EXPECT_EQ(of_type(take(), "3").size(), 0u);
  // A gap: 9, 10, 11 come ahead of 8 and are held; we ask; the peer resends
  // 8 (PossDup); then the held ones are processed: none of it counts.
  const std::uint64_t gap = peer_seq;  // 8
  for (std::uint64_t s = gap + 1; s <= gap + 3; ++s)
    feed(peer_msg("D", order_body("Q" + std::to_string(s)), s));
  auto sent = take();
  ASSERT_EQ(of_type(sent, "2").size(), 1u);
  feed(peer_msg("D", order_body("R"), gap, "43=Y|122=" + utc_text(now) + "|"));
  EXPECT_EQ(app.app_messages, 4u);
  EXPECT_TRUE(of_type(take(), "3").empty());
  EXPECT_EQ(session->next_target_seq(), gap + 4);
  EXPECT_EQ(session->counters().incoming_throttled, 0u);
  // A PossDup we did not ask for counts like any message.
  now += 1000 * kMs;
  feed(peer_msg("D", order_body("S"), gap + 4, "43=Y|122=" + utc_text(now) + "|"));
  feed(peer_msg("D", order_body("T"), gap + 5, "43=Y|122=" + utc_text(now) + "|"));
  EXPECT_EQ(app.app_messages, 5u);
  EXPECT_EQ(of_type(take(), "3").size(), 1u);
}

TEST_F(SessionThrottle, incoming_over_the_limit_is_one_warn_line_per_window) {
  make_logged(incoming(1, IncomingThrottleAction::kReject));
  logon();
  for (int i = 0; i < 30; ++i) send("D", order_body("F"));
  EXPECT_EQ(session->counters().incoming_throttled, 29u);
  EXPECT_EQ(logger.count("WARN Incoming throttle"), 1u);
  EXPECT_EQ(logger.count("Rejected"), 0u) << "no line per rejected message";
  now += 1000 * kMs;
  for (int i = 0; i < 3; ++i) send("D", order_body("F"));
  EXPECT_EQ(logger.count("WARN Incoming throttle"), 2u);
  EXPECT_EQ(logger.count("28 more rejected since the last report"), 1u);
}

TEST_F(SessionThrottle, both_directions_at_once_an_echo_over_the_outgoing_limit_is_refused) {
  // A venue that answers every order: its answers are throttled too.
  SessionSettings st = incoming(3, IncomingThrottleAction::kReject);
  st.outgoing_throttle_limit = 2;
  make_logged(st);
  struct Echo : RecordingApp {
    std::vector<SendStatus> statuses;
    Decision from_app(Session& s, const codec::MessageView& m) noexcept override {
      (void)RecordingApp::from_app(s, m);
      statuses.push_back(
          s.send_app("8", Instant::from_utc(kStart), [](OutgoingMessage& o) { o.add(37, "X"); }));
      return Decision::accept();
    }
  };
  Echo echo;
  auto s = Session::create(st, store, echo, out, &logger, at());
  ASSERT_TRUE(s.ok());
  session = std::move(*s);
  logon();
  for (int i = 0; i < 4; ++i) send("D", order_body("E"));
  ASSERT_EQ(echo.statuses.size(), 3u);
  EXPECT_EQ(echo.statuses[2], SendStatus::kThrottled);
  const auto sent = take();
  EXPECT_EQ(of_type(sent, "8").size(), 2u);
  EXPECT_EQ(of_type(sent, "3").size(), 1u);
  expect_contiguous(sent, 2);
}

}  // namespace
}  // namespace hft::session::test
