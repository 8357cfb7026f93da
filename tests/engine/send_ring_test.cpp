// Sending from other threads (engine::SendRing): a producer thread queues
// orders, the engine thread sends them through the session in order; a full
// ring is a status; a message the session refuses is counted and reported
// with its tag; neither side allocates.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "engine/loopback.hpp"
#include "engine/peer_support.hpp"
#include "hft/codec/parser.hpp"
#include "hft/core/clock.hpp"
#include "hft/store/journal_service.hpp"
#include "support/alloc_counter.hpp"
#include "support/temp_dir.hpp"

namespace hft::engine {
namespace {

constexpr int kClOrdID = 11;

struct Venue final : session::Application {
  session::Decision from_app(session::Session&, const codec::MessageView& m) noexcept override {
    std::uint64_t id = 0;
    if (m.msg_type() == "D" && m.get_uint(kClOrdID, id)) {
      if (id != next) out_of_order = true;
      next = id + 1;
      ++orders;
    }
    return session::Decision::accept();
  }
  std::uint64_t next = 1;
  std::uint64_t orders = 0;
  bool out_of_order = false;
};

struct Client final : session::Application {
  void on_queued_send_failed(session::Session&, std::uint64_t tag, session::SendStatus status) noexcept override {
    failed_tags.push_back(tag);
    last = status;
  }
  std::vector<std::uint64_t> failed_tags;
  session::SendStatus last = session::SendStatus::kOk;
};

std::string venue_config() {
  return "[DEFAULT]\nConnectionType=acceptor\nBeginString=FIX.4.4\nSenderCompID=VENUE\nTargetCompID=CLIENT\n"
         "HeartBtInt=30\nNonStopSession=Y\nUseDataDictionary=N\nSocketAcceptPort=0\nLogLevel=error\n[SESSION]\n";
}
std::string client_config(int port, const std::string& keys = {}) {
  return "[DEFAULT]\nConnectionType=initiator\nBeginString=FIX.4.4\nSenderCompID=CLIENT\nTargetCompID=VENUE\n"
         "HeartBtInt=30\nNonStopSession=Y\nUseDataDictionary=N\nSocketConnectHost=127.0.0.1\nLogLevel=error\n"
         "SocketConnectPort=" +
         std::to_string(port) + "\n" + keys + "[SESSION]\n";
}

const session::SessionID kClientId{"FIX.4.4", "CLIENT", "VENUE", ""};

auto order(std::uint64_t id) {
  return [id](codec::MessageWriter& w) {
    w.add_uint(kClOrdID, id);
    w.add(55, "NOKIA.HE");
    w.add_char(54, '1');
    w.add_uint(38, 100);
    w.add_char(40, '2');
    w.add(44, "10.5");
  };
}

// A venue and a client engine on loopback, with one ring on the client.
class SendRingTest : public ::testing::Test {
 protected:
  // Creates both engines and the ring; logs on when `logon`.
  void start(const SendRingOptions& options, bool logon = true, const std::string& client_keys = {}) {
    venue = hft::test::make_engine(venue_config(), venue_app);
    ASSERT_TRUE(venue);
    client = hft::test::make_engine(client_config(venue->listen_port(), client_keys), client_app);
    ASSERT_TRUE(client);
    ring = &client->add_send_ring(options);
    const auto h = client->handle_of(kClientId);
    ASSERT_TRUE(h);
    handle = *h;
    if (logon) {
      ASSERT_TRUE(test::poll_until(*venue, *client, [&] { return client->session(0).is_logged_on(); }));
    }
  }
  Venue venue_app;
  Client client_app;
  std::unique_ptr<Engine> venue, client;
  SendRing* ring = nullptr;
  SessionHandle handle;
};

TEST_F(SendRingTest, orders_queued_on_another_thread_reach_the_venue_once_each_in_order) {
  ASSERT_NO_FATAL_FAILURE(start({.capacity = 256, .max_body = 256, .drain_batch = 32}));
  SendRing& ring_ = *ring;
  constexpr std::uint64_t kOrders = 20'000;
  std::atomic<bool> done{false};
  std::uint64_t producer_allocations = 0, fulls = 0;
  std::thread producer([&] {
    hft::test::AllocationScope scope;
    for (std::uint64_t id = 1; id <= kOrders;) {
      const QueueStatus q = ring_.send(handle, "D", order(id));
      if (q == QueueStatus::kOk) {
        ++id;
      } else {
        EXPECT_EQ(q, QueueStatus::kFull);
        ++fulls;  // back-pressure: the producer decides (here: retry)
      }
    }
    producer_allocations = scope.count();
    done = true;
  });
  const bool all = test::poll_until(*venue, *client, [&] { return done && venue_app.orders == kOrders; },
                                    60'000'000'000);
  producer.join();
  ASSERT_TRUE(all) << venue_app.orders << " of " << kOrders;
  EXPECT_FALSE(venue_app.out_of_order);
  EXPECT_EQ(producer_allocations, 0u);
  const SendRingStats s = ring_.stats();
  EXPECT_EQ(s.queued, kOrders);
  EXPECT_EQ(s.sent, kOrders);
  EXPECT_EQ(s.full, fulls);
  EXPECT_EQ(s.failed, 0u);
  EXPECT_EQ(ring_.pending(), 0u);
  EXPECT_EQ(client->session(0).next_sender_seq(), kOrders + 2);  // the Logon, then one seq per order
  client->logout_all(2'000'000'000);
}

TEST_F(SendRingTest, the_engine_side_allocates_nothing_either) {
  ASSERT_NO_FATAL_FAILURE(start({.capacity = 64}));
  for (std::uint64_t id = 1; id <= 32; ++id) ASSERT_EQ(ring->send(handle, "D", order(id)), QueueStatus::kOk);
  client->poll();  // warm: the first drain
  hft::test::AllocationScope scope;
  for (std::uint64_t id = 33; id <= 64; ++id) ASSERT_EQ(ring->send(handle, "D", order(id)), QueueStatus::kOk);
  while (ring->pending() != 0) client->poll();
  EXPECT_EQ(scope.count(), 0u);
  ASSERT_TRUE(test::poll_until(*venue, *client, [&] { return venue_app.orders == 64; }));
  client->logout_all(2'000'000'000);
}

TEST_F(SendRingTest, a_full_ring_and_a_body_too_large_are_statuses_at_once) {
  ASSERT_NO_FATAL_FAILURE(start({.capacity = 4, .max_body = 64}, false));
  for (std::uint64_t id = 1; id <= 4; ++id) EXPECT_EQ(ring->send(handle, "D", order(id)), QueueStatus::kOk);
  EXPECT_EQ(ring->send(handle, "D", order(5)), QueueStatus::kFull);
  EXPECT_EQ(ring->send(handle, "", order(5)), QueueStatus::kBadMsgType);
  EXPECT_EQ(ring->stats().full, 1u);
  EXPECT_EQ(ring->pending(), 4u);
  // Not logged on yet: the engine thread takes them, the session refuses
  // them, and the tagged ones come back to the application.
  client->poll();
  EXPECT_EQ(ring->pending(), 0u);
  EXPECT_EQ(ring->stats().failed, 4u);
  EXPECT_TRUE(client_app.failed_tags.empty());  // untagged: counted only
  ASSERT_EQ(ring->send(handle, "D", order(9), 77), QueueStatus::kOk);
  client->poll();
  ASSERT_EQ(client_app.failed_tags, std::vector<std::uint64_t>{77});
  EXPECT_EQ(client_app.last, session::SendStatus::kNotLoggedOn);
  const std::string big(200, 'x');
  EXPECT_EQ(ring->send(handle, "D", [&](codec::MessageWriter& w) { w.add(58, big); }), QueueStatus::kTooLarge);
  EXPECT_EQ(ring->stats().too_large, 1u);
}

// OutgoingThrottleAction=reject: what the throttle refuses comes back as any
// refusal does, with its tag and kThrottled; nothing is sent for it.
TEST_F(SendRingTest, a_send_the_throttle_refuses_is_reported_with_its_tag_as_throttled) {
  ASSERT_NO_FATAL_FAILURE(
      start({.capacity = 64}, true, "OutgoingThrottleLimit=5\nOutgoingThrottleIntervalMs=60000\n"));
  for (std::uint64_t id = 1; id <= 8; ++id)
    ASSERT_EQ(ring->send(handle, "D", order(id), 100 + id), QueueStatus::kOk);
  client->poll();
  EXPECT_EQ(ring->pending(), 0u);
  EXPECT_EQ(ring->stats().sent, 5u);
  EXPECT_EQ(ring->stats().failed, 3u);
  EXPECT_EQ(client_app.failed_tags, (std::vector<std::uint64_t>{106, 107, 108}));
  EXPECT_EQ(client_app.last, session::SendStatus::kThrottled);
  EXPECT_EQ(client->session(0).counters().sends_throttled, 3u);
  ASSERT_TRUE(test::poll_until(*venue, *client, [&] { return venue_app.orders == 5; }));
  EXPECT_FALSE(venue_app.out_of_order);
  EXPECT_EQ(client->session(0).next_sender_seq(), 7u) << "the refused ones used no number";
  client->logout_all(2'000'000'000);
}

// OutgoingThrottleAction=queue: a burst from the ring is accepted (kOk, so
// counted as sent), held, and let out by the engine's timer at the limit's
// pace, in order, each once.
TEST_F(SendRingTest, a_burst_over_the_limit_is_held_and_reaches_the_venue_in_order) {
  ASSERT_NO_FATAL_FAILURE(start({.capacity = 256, .drain_batch = 256}, true,
                                "OutgoingThrottleLimit=20\nOutgoingThrottleIntervalMs=100\n"
                                "OutgoingThrottleAction=queue\nOutgoingThrottleQueueSize=200\n"));
  const std::int64_t t0 = core::monotonic_ns();
  for (std::uint64_t id = 1; id <= 100; ++id)
    ASSERT_EQ(ring->send(handle, "D", order(id), id), QueueStatus::kOk);
  client->poll();
  EXPECT_EQ(ring->stats().sent, 100u);
  EXPECT_TRUE(client_app.failed_tags.empty());
  EXPECT_EQ(client->session(0).throttle_queue_depth(), 80u);
  ASSERT_TRUE(test::poll_until(
      *venue, *client, [&] { return venue_app.orders == 100; }, 10'000'000'000));
  // 100 at 20 per 100 ms: the last 20 cannot leave before 400 ms.
  EXPECT_GE(core::monotonic_ns() - t0, 400'000'000);
  EXPECT_FALSE(venue_app.out_of_order);
  EXPECT_EQ(client->session(0).throttle_queue_depth(), 0u);
  EXPECT_EQ(client->session(0).counters().throttle_queue_max, 80u);
  EXPECT_EQ(venue->session(0).next_target_seq(), 102u);
  EXPECT_EQ(venue->session(0).counters().resend_requests_sent, 0u) << "the venue never saw a gap";
  client->logout_all(2'000'000'000);
}

// The client's journal service held back until its shared journal has no
// segment ready: the ring's first message waits in place (the producer
// meets a full ring), nothing is refused or lost and the session stays
// logged on; once the service runs again every order reaches the venue,
// once, in order.
TEST_F(SendRingTest, a_journal_with_no_segment_ready_holds_the_ring_and_loses_nothing) {
  hft::test::TempDir dir;
  ASSERT_NO_FATAL_FAILURE(
      start({.capacity = 256, .max_body = 256, .drain_batch = 32}, true,
            "FileStorePath=" + dir.sub("client") +
                "\nJournalLayout=shared\nJournalInitialSegmentSize=16K\nJournalSegmentSize=1M\n"));
  ASSERT_NE(client->journal_service(), nullptr);
  client->journal_service()->stop();
  std::uint64_t id = 1;
  while (ring->stats().store_waits == 0 && id < 1'000'000 && client->session(0).is_logged_on()) {
    if (ring->send(handle, "D", order(id)) == QueueStatus::kOk) {
      ++id;
    } else {
      venue->poll();
      client->poll();
    }
  }
  ASSERT_GT(ring->stats().store_waits, 0u) << "the journal never ran out of segments";
  const auto until = core::monotonic_ns() + 300'000'000;
  while (core::monotonic_ns() < until) {
    venue->poll();
    client->poll();
  }
  EXPECT_TRUE(client->session(0).is_logged_on());
  EXPECT_EQ(ring->stats().failed, 0u);
  EXPECT_GT(ring->pending(), 0u) << "the held messages are still queued";
  EXPECT_LT(venue_app.orders, id - 1);

  ASSERT_TRUE(client->journal_service()->start());
  const std::uint64_t orders = id - 1;
  ASSERT_TRUE(test::poll_until(*venue, *client, [&] { return venue_app.orders == orders; }))
      << venue_app.orders << " of " << orders;
  EXPECT_FALSE(venue_app.out_of_order);
  EXPECT_EQ(ring->stats().sent, orders);
  EXPECT_EQ(ring->stats().failed, 0u);
  EXPECT_TRUE(client_app.failed_tags.empty());
  EXPECT_EQ(client->session(0).counters().logons, 1u);
  EXPECT_EQ(client->session(0).next_sender_seq(), orders + 2);  // the Logon, then one seq per order
  client->logout_all(2'000'000'000);
}

TEST_F(SendRingTest, a_message_for_a_removed_session_is_counted_not_sent) {
  ASSERT_NO_FATAL_FAILURE(start({}, false));
  ASSERT_TRUE(client->remove_session(kClientId));
  client->poll();
  EXPECT_FALSE(client->handle_of(kClientId));
  ASSERT_EQ(ring->send(handle, "D", order(1)), QueueStatus::kOk);
  client->poll();
  EXPECT_EQ(ring->stats().unknown_session, 1u);
  EXPECT_EQ(ring->stats().sent, 0u);
}

}  // namespace
}  // namespace hft::engine
