// Sending and receiving application messages on a logged-on session
// allocates nothing (DESIGN.md: no heap allocation after logon).
#include <gtest/gtest.h>

#include "fixture.hpp"
#include "support/alloc_counter.hpp"

namespace hft::session::test {
namespace {

class CountingOutput final : public Output {
 public:
  void send(std::span<const char> data) noexcept override {
    ++messages;
    bytes += data.size();
  }
  void disconnect(DisconnectReason) noexcept override { disconnected = true; }
  std::uint64_t messages = 0;
  std::uint64_t bytes = 0;
  bool disconnected = false;
};

class NoAllocApp final : public Application {
 public:
  Decision from_app(Session&, const codec::MessageView& m) noexcept override {
    ++received;
    last_px = m.get(44).size();
    return Decision::accept();
  }
  std::uint64_t received = 0;
  std::size_t last_px = 0;
};

TEST(SessionAllocation, logged_on_session_sends_and_receives_without_allocating) {
  constexpr std::int64_t kNow = 1'710'504'000'000'000'000;
  store::MemoryStore store(store::MemoryStoreConfig{1024, 4096}, kNow);
  CountingOutput out;
  NoAllocApp app;
  SessionSettings st;
  st.sender_comp_id = "ISLD";
  st.target_comp_id = "TW";
  st.max_message_size = 4096;
  st.dictionary = shared_dictionary("FIX44.xml");
  auto created = Session::create(st, store, app, out, nullptr, Instant::from_utc(kNow));
  ASSERT_TRUE(created.ok()) << created.error().message;
  Session& s = **created;

  const std::string t = utc_text(kNow);
  auto inbound = [&](std::uint64_t seq, const std::string& type, const std::string& body) {
    return wire("8=FIX.4.4|35=" + type + "|34=" + std::to_string(seq) + "|49=TW|52=" + t + "|56=ISLD|" + body);
  };
  constexpr int kRounds = 2000;
  std::vector<std::string> in;
  in.push_back(inbound(1, "A", "98=0|108=30|"));
  for (int i = 0; i < kRounds; ++i) {
    in.push_back(inbound(static_cast<std::uint64_t>(i + 2), "D",
                         "11=C" + std::to_string(i) + "|21=1|55=IBM|54=1|60=" + t + "|38=100|40=2|44=101.25|"));
  }

  Instant now = Instant::from_utc(kNow);
  s.on_connected(now);
  s.on_bytes({in[0].data(), in[0].size()}, now);
  ASSERT_TRUE(s.is_logged_on());

  auto round = [&](int i) {
    now.mono_ns += 1000;
    now.utc_ns += 1000;
    const std::string& m = in[static_cast<std::size_t>(i) + 1];
    s.on_bytes({m.data(), m.size()}, now);
    const SendStatus st2 = s.send_app("8", now, [&](OutgoingMessage& o) {
      o.add(37, "ORD1");
      o.add(17, "EXEC1");
      o.add_char(150, '0');
      o.add_char(39, '0');
      o.add(55, "IBM");
      o.add_char(54, '1');
      o.add_decimal(151, codec::Decimal{100, 0});
      o.add_decimal(14, codec::Decimal{0, 0});
      o.add_decimal(6, codec::Decimal{0, 0});
      o.add_decimal(44, codec::Decimal{10125, 2});
    });
    EXPECT_EQ(st2, SendStatus::kOk);
    s.on_timer(now);
  };
  for (int i = 0; i < 100; ++i) round(i);  // warm-up: first-use paths

  hft::test::AllocationScope scope;
  for (int i = 100; i < kRounds; ++i) round(i);
  const std::uint64_t allocations = scope.count();

  {  // the counter counts: a vector of runtime size allocates once
    hft::test::AllocationScope probe;
    std::vector<char> v(static_cast<std::size_t>(kRounds) + out.bytes % 7);
    EXPECT_GT(probe.count(), 0u);
    EXPECT_FALSE(v.empty());
  }

  EXPECT_EQ(allocations, 0u);
  EXPECT_EQ(app.received, static_cast<std::uint64_t>(kRounds));
  EXPECT_EQ(out.messages, static_cast<std::uint64_t>(kRounds) + 1);
  EXPECT_FALSE(out.disconnected);
  EXPECT_EQ(s.next_target_seq(), static_cast<std::uint64_t>(kRounds) + 2);
}

// The throttled paths: sends held by OutgoingThrottleAction=queue and
// released by the timer from the store, sends refused with kThrottled (queue
// full, and `reject`), inbound messages over IncomingThrottleLimit rejected,
// and the WARN lines about them: nothing allocates either.
class CountingLogger final : public Logger {
 public:
  [[nodiscard]] bool enabled(LogLevel) const noexcept override { return true; }
  void log(LogLevel, const SessionID&, std::string_view text) noexcept override {
    ++lines;
    bytes += text.size();
  }
  std::uint64_t lines = 0;
  std::uint64_t bytes = 0;
};

void throttled_round_trips(OutgoingThrottleAction action) {
  constexpr std::int64_t kNow = 1'710'504'000'000'000'000;
  store::MemoryStore store(store::MemoryStoreConfig{1024, 4096}, kNow);
  CountingOutput out;
  NoAllocApp app;
  CountingLogger logger;
  SessionSettings st;
  st.sender_comp_id = "ISLD";
  st.target_comp_id = "TW";
  st.max_message_size = 4096;
  st.dictionary = shared_dictionary("FIX44.xml");
  st.outgoing_throttle_limit = 4;
  st.outgoing_throttle_interval_ms = 10;
  st.outgoing_throttle_action = action;
  st.outgoing_throttle_queue_size = 16;
  st.incoming_throttle_limit = 3;
  st.incoming_throttle_interval_ms = 10;
  auto created = Session::create(st, store, app, out, &logger, Instant::from_utc(kNow));
  ASSERT_TRUE(created.ok()) << created.error().message;
  Session& s = **created;

  const std::string t = utc_text(kNow);
  auto inbound = [&](std::uint64_t seq, const std::string& type, const std::string& body) {
    return wire("8=FIX.4.4|35=" + type + "|34=" + std::to_string(seq) + "|49=TW|52=" + t + "|56=ISLD|" +
                body);
  };
  constexpr int kRounds = 400;
  constexpr int kPerRound = 6;  // over both limits in every round
  std::vector<std::string> in;
  in.push_back(inbound(1, "A", "98=0|108=30|"));
  for (int i = 0; i < kRounds * kPerRound; ++i) {
    in.push_back(
        inbound(static_cast<std::uint64_t>(i + 2), "D",
                "11=C" + std::to_string(i) + "|21=1|55=IBM|54=1|60=" + t + "|38=100|40=2|44=101.25|"));
  }
  Instant now = Instant::from_utc(kNow);
  s.on_connected(now);
  s.on_bytes({in[0].data(), in[0].size()}, now);
  ASSERT_TRUE(s.is_logged_on());

  std::uint64_t throttled = 0;
  auto round = [&](int r) {
    for (int k = 0; k < kPerRound; ++k) {
      const std::string& m = in[static_cast<std::size_t>(r * kPerRound + k) + 1];
      s.on_bytes({m.data(), m.size()}, now);
      const SendStatus status = s.send_app("8", now, [&](OutgoingMessage& o) {
        o.add(37, "ORD1");
        o.add(17, "EXEC1");
        o.add_char(150, '0');
        o.add_char(39, '0');
        o.add(55, "IBM");
        o.add_char(54, '1');
        o.add_decimal(151, codec::Decimal{100, 0});
        o.add_decimal(14, codec::Decimal{0, 0});
        o.add_decimal(6, codec::Decimal{0, 0});
      });
      if (status == SendStatus::kThrottled) ++throttled;
      EXPECT_TRUE(status == SendStatus::kOk || status == SendStatus::kThrottled) << to_string(status);
    }
    // 3 ms a round: a window holds about three rounds, the timer releases.
    now.mono_ns += 3'000'000;
    now.utc_ns += 3'000'000;
    s.on_timer(now);
  };
  for (int r = 0; r < 40; ++r) round(r);  // warm-up

  hft::test::AllocationScope scope;
  for (int r = 40; r < kRounds; ++r) round(r);
  const std::uint64_t allocations = scope.count();

  EXPECT_EQ(allocations, 0u);
  EXPECT_TRUE(s.is_logged_on());
  EXPECT_GT(throttled, 0u);
  EXPECT_GT(s.counters().incoming_throttled, 0u);
  EXPECT_GT(logger.lines, 0u);
  if (action == OutgoingThrottleAction::kQueue) {
    EXPECT_GT(s.counters().sends_throttle_queued, 0u);
  }
  EXPECT_EQ(s.next_target_seq(), static_cast<std::uint64_t>(kRounds * kPerRound) + 2) << "in step";
}

TEST(SessionAllocation, throttled_sends_held_released_and_refused_and_inbound_rejects_allocate_nothing) {
  throttled_round_trips(OutgoingThrottleAction::kQueue);
}

TEST(SessionAllocation, throttled_sends_refused_with_reject_allocate_nothing) {
  throttled_round_trips(OutgoingThrottleAction::kReject);
}

}  // namespace
}  // namespace hft::session::test
