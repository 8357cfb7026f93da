// The engine end to end on loopback, in one process: an acceptor engine with
// the venue application and an initiator engine, polled from this thread.
#include "hft/engine/engine.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "common/configs.hpp"
#include "common/venue_app.hpp"
#include "engine/loopback.hpp"
#include "hft/core/clock.hpp"
#include "support/alloc_counter.hpp"
#include "support/fix_text.hpp"

namespace {

using hft::engine::Config;
using hft::engine::Engine;
namespace tag = hft::codec::tag;

using Client = hft::engine::test::ReportClient;

std::unique_ptr<Engine> make(const std::string& text, hft::session::Application& app) {
  auto config = Config::parse(text, "test.cfg");
  EXPECT_TRUE(config.ok()) << (config.ok() ? "" : config.error().message);
  if (!config) return nullptr;
  auto engine = Engine::create(*config, app);
  EXPECT_TRUE(engine.ok()) << (engine.ok() ? "" : engine.error().message);
  return engine ? std::move(*engine) : nullptr;
}

using hft::engine::test::poll_until;

struct Pair {
  hft::apps::VenueApplication venue_app;
  Client client_app;
  std::unique_ptr<Engine> venue;
  std::unique_ptr<Engine> client;

  explicit Pair(const std::string& begin_string = "FIX.4.4", const std::string& store = {}) {
    hft::apps::SimpleSession v;
    v.begin_string = begin_string;
    v.sender = "VENUE";
    v.target = "CLIENT";
    v.port = 0;
    venue = make(hft::apps::simple_config(v), venue_app);
    hft::apps::SimpleSession c;
    c.initiator = true;
    c.begin_string = begin_string;
    c.sender = "CLIENT";
    c.target = "VENUE";
    c.port = venue ? venue->listen_port() : 0;
    c.store_dir = store;
    client = make(hft::apps::simple_config(c), client_app);
  }

  bool logon() {
    return venue && client && poll_until(*venue, *client, [&] { return client_app.logged_on; });
  }

  hft::session::SendStatus order(std::uint64_t i) {
    return hft::engine::test::send_test_order(client->session(0), i);
  }
};

TEST(Engine, initiator_logs_on_and_every_order_gets_an_ack_and_a_fill) {
  Pair p;
  ASSERT_TRUE(p.logon());
  for (std::uint64_t i = 1; i <= 500; ++i) {
    ASSERT_EQ(p.order(i), hft::session::SendStatus::kOk);
    p.client->poll();
    p.venue->poll();
  }
  ASSERT_TRUE(poll_until(*p.venue, *p.client, [&] { return p.client_app.reports == 1000; }));
  EXPECT_EQ(p.venue_app.counters().orders, 500u);
  EXPECT_EQ(p.client->session(0).next_sender_seq(), 502u);  // Logon + 500 orders
}

TEST(Engine, fixt_session_with_default_appl_ver_id_exchanges_orders) {
  Pair p("FIXT.1.1");
  ASSERT_TRUE(p.logon());
  ASSERT_EQ(p.order(1), hft::session::SendStatus::kOk);
  ASSERT_TRUE(poll_until(*p.venue, *p.client, [&] { return p.client_app.reports == 2; }));
}

TEST(Engine, acceptor_refuses_a_logon_for_an_unknown_session_and_stays_up) {
  Pair p;
  hft::apps::SimpleSession c;
  c.initiator = true;
  c.sender = "STRANGER";
  c.target = "VENUE";
  c.port = p.venue->listen_port();
  Client stranger_app;
  auto stranger = make(hft::apps::simple_config(c), stranger_app);
  ASSERT_TRUE(stranger);
  ASSERT_TRUE(poll_until(*p.venue, *stranger, [&] { return p.venue->stats().unknown_session_refused >= 1; }));
  EXPECT_FALSE(stranger_app.logged_on);
  // The configured client still gets in.
  ASSERT_TRUE(p.logon());
}

TEST(Engine, second_connection_for_a_logged_on_session_is_refused) {
  Pair p;
  ASSERT_TRUE(p.logon());
  hft::apps::SimpleSession c;
  c.initiator = true;
  c.sender = "CLIENT";
  c.target = "VENUE";
  c.port = p.venue->listen_port();
  Client twin_app;
  auto twin = make(hft::apps::simple_config(c), twin_app);
  ASSERT_TRUE(twin);
  ASSERT_TRUE(poll_until(*p.venue, *twin, [&] { return p.venue->stats().duplicate_refused >= 1; }));
  EXPECT_FALSE(twin_app.logged_on);
  EXPECT_TRUE(p.client_app.logged_on);
}

TEST(Engine, logout_all_ends_both_sides_cleanly) {
  Pair p;
  ASSERT_TRUE(p.logon());
  p.client->logout_all(2'000'000'000);  // Logout, wait for the answer
  EXPECT_FALSE(p.client_app.logged_on);
  ASSERT_TRUE(poll_until(*p.venue, *p.client, [&] { return p.venue_app.counters().logouts == 1; }));
}

TEST(Engine, journaled_initiator_resumes_its_sequence_numbers_after_a_restart) {
  const auto dir = std::filesystem::temp_directory_path() / ("hft-engine-test-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  {
    Pair p("FIX.4.4", dir.string());
    ASSERT_TRUE(p.logon());
    for (std::uint64_t i = 1; i <= 10; ++i) ASSERT_EQ(p.order(i), hft::session::SendStatus::kOk);
    ASSERT_TRUE(poll_until(*p.venue, *p.client, [&] { return p.client_app.reports == 20; }));
    EXPECT_EQ(p.client->session(0).next_sender_seq(), 12u);
  }
  hft::apps::SimpleSession c;
  c.initiator = true;
  c.sender = "CLIENT";
  c.target = "VENUE";
  c.port = 1;  // not connecting: only the store is of interest
  c.store_dir = dir.string();
  Client app;
  auto reopened = make(hft::apps::simple_config(c), app);
  ASSERT_TRUE(reopened);
  EXPECT_EQ(reopened->session(0).next_sender_seq(), 12u);
  EXPECT_EQ(reopened->session(0).next_target_seq(), 22u);  // Logon + 20 reports
  reopened.reset();
  std::filesystem::remove_all(dir);
}

TEST(Engine, steady_state_orders_and_reports_allocate_nothing) {
  Pair p;
  ASSERT_TRUE(p.logon());
  // Warm up: first use of every buffer and connection slot.
  for (std::uint64_t i = 1; i <= 100; ++i) ASSERT_EQ(p.order(i), hft::session::SendStatus::kOk);
  ASSERT_TRUE(poll_until(*p.venue, *p.client, [&] { return p.client_app.reports == 200; }));
  hft::test::AllocationScope scope;
  for (std::uint64_t i = 101; i <= 1100; ++i) {
    (void)p.order(i);
    p.client->poll();
    p.venue->poll();
  }
  while (p.client_app.reports < 2200) {
    p.client->poll();
    p.venue->poll();
  }
  EXPECT_EQ(scope.count(), 0u) << "allocations on the order/report path of both engines";
}

// --- graceful close -------------------------------------------------------

// A FIX.4.4 message from CLIENT to VENUE with BodyLength and CheckSum.
std::string raw_fix(const std::string& type, int seq, const std::string& fields) {
  const std::string body = "35=" + type + "\x01" + "34=" + std::to_string(seq) +
                           "\x01"
                           "49=CLIENT\x01"
                           "52=" +
                           [] {
                             char t[32];
                             const std::time_t now = std::time(nullptr);
                             std::tm tm{};
                             gmtime_r(&now, &tm);
                             std::strftime(t, sizeof t, "%Y%m%d-%H:%M:%S", &tm);
                             return std::string(t);
                           }() +
                           "\x01"
                           "56=VENUE\x01" +
                           fields;
  return hft::test::with_trailer("FIX.4.4", body);
}

std::size_t count_of(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// A counterparty on a plain socket with a small receive buffer, so that the
// venue's kernel soon stops taking bytes and the rest waits in the engine.
struct SlowPeer {
  explicit SlowPeer(int port) {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    const int small = 4096;
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  }
  ~SlowPeer() {
    if (reader.joinable()) reader.join();
    ::close(fd);
  }
  void send(const std::string& bytes) const {
    ASSERT_EQ(::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL), static_cast<ssize_t>(bytes.size()));
  }
  // After `delay`, reads everything in small pieces until the stream ends.
  void read_later(std::chrono::milliseconds delay) {
    reader = std::thread([this, delay] {
      std::this_thread::sleep_for(delay);
      char buf[2048];
      for (;;) {
        const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n > 0) {
          received.append(buf, static_cast<std::size_t>(n));
          continue;
        }
        if (n < 0 && errno == EINTR) continue;
        eof = n == 0;
        break;
      }
      finished.store(true);
    });
  }
  void join() { reader.join(); }

  int fd = -1;
  bool connected = false;
  std::thread reader;
  std::string received;
  bool eof = false;
  std::atomic<bool> finished{false};
};

// A venue whose socket send buffer is small: most of what it sends queues
// in the engine's outbound buffer while the peer does not read.
struct SlowPeerVenue {
  SlowPeerVenue() {
    hft::apps::SimpleSession v;
    v.sender = "VENUE";
    v.target = "CLIENT";
    v.extra =
        "SocketSendBufferSize=4K\nSendBufferSize=8M\nLogoutTimeout=1\nLogLevel=warn\nSocketCloseTimeoutMs="
        "5000";
    venue = make(hft::apps::simple_config(v), venue_app);
  }
  // Logs on `peer` and has the venue send `n` 1 KB news messages to it.
  bool logon_and_queue(SlowPeer& peer, int n) {
    if (!venue || !peer.connected) return false;
    peer.send(raw_fix("A", 1,
                      "98=0\x01"
                      "108=30\x01"));
    const auto start = hft::core::monotonic_ns();
    while (!venue->session(0).is_logged_on()) {
      if (hft::core::monotonic_ns() - start > 5'000'000'000) return false;
      venue->poll();
    }
    const std::string text(1000, 'x');
    for (int i = 0; i < n; ++i) {
      const auto st = venue->session(0).send_app("B", Engine::now(), [&](hft::session::OutgoingMessage& m) {
        m.add(148, "headline");
        m.add(tag::kText, text);
      });
      if (st != hft::session::SendStatus::kOk) return false;
    }
    return true;
  }
  hft::apps::VenueApplication venue_app;
  std::unique_ptr<Engine> venue;
};

TEST(Engine, logout_all_delivers_every_queued_message_and_the_logout_to_a_slow_reader) {
  SlowPeerVenue v;
  ASSERT_TRUE(v.venue);
  SlowPeer peer(v.venue->listen_port());
  ASSERT_TRUE(v.logon_and_queue(peer, 400));
  // The peer starts reading only after logout_all has given up waiting for
  // the Logout answer and closed the connection: the close must still
  // deliver everything.
  peer.read_later(std::chrono::milliseconds(1500));
  v.venue->logout_all(500'000'000);  // the peer never answers the Logout
  peer.join();
  EXPECT_EQ(count_of(peer.received,
                     "\x01"
                     "35=B\x01"),
            400u);
  EXPECT_EQ(count_of(peer.received,
                     "\x01"
                     "35=5\x01"),
            1u)
      << "the Logout was lost behind the queued messages";
  EXPECT_TRUE(peer.eof) << "the connection must end with a FIN, not a reset";
  EXPECT_FALSE(v.venue->session(0).is_connected());
}

TEST(Engine, the_logout_answer_reaches_a_peer_that_logs_out_without_reading) {
  SlowPeerVenue v;
  ASSERT_TRUE(v.venue);
  SlowPeer peer(v.venue->listen_port());
  ASSERT_TRUE(v.logon_and_queue(peer, 400));
  // The peer logs out while 400 messages wait for it; the venue answers and
  // disconnects at once ("logout complete"), but the bytes must still go out.
  peer.send(raw_fix("5", 2, ""));
  peer.read_later(std::chrono::milliseconds(300));
  const auto start = hft::core::monotonic_ns();
  while (!peer.finished.load() && hft::core::monotonic_ns() - start < 10'000'000'000) v.venue->poll();
  peer.join();
  EXPECT_EQ(count_of(peer.received,
                     "\x01"
                     "35=B\x01"),
            400u);
  EXPECT_EQ(count_of(peer.received,
                     "\x01"
                     "35=5\x01"),
            1u)
      << "the Logout answer was lost";
  EXPECT_TRUE(peer.eof);
}

}  // namespace
