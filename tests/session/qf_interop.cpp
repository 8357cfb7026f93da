// Interoperability with QuickFIX 1.15 over loopback TCP: a QuickFIX peer
// (its own threads) on one side, a Session driven by a small poll loop on
// the other. Logon both ways, order flow both ways, heartbeats, a gap on
// each side healed by ResendRequest/gap fill, Logout. Labelled "interop".
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

#include "fixture.hpp"
#include "hft/core/clock.hpp"
#include "qf_peer.hpp"

namespace hft::session::test {
namespace {

Instant real_now() { return Instant{core::realtime_ns(), core::monotonic_ns()}; }

class SocketOutput final : public Output {
 public:
  void send(std::span<const char> bytes) noexcept override {
    std::size_t done = 0;
    while (fd >= 0 && done < bytes.size()) {
      const ssize_t n = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
  }
  void disconnect(DisconnectReason r) noexcept override {
    reason = r;
    closed = true;
    close_fd();
  }
  void close_fd() {
    if (fd >= 0) {
      ::shutdown(fd, SHUT_RDWR);
      ::close(fd);
      fd = -1;
    }
  }
  int fd = -1;
  bool closed = false;
  DisconnectReason reason = DisconnectReason::kApplication;
};

/// Answers orders with execution reports; counts execution reports.
class TradingApp final : public Application {
 public:
  std::atomic<int> orders{0}, reports{0}, rejects{0};
  Decision from_app(Session& s, const codec::MessageView& m) noexcept override {
    if (m.msg_type() == "8") {
      ++reports;
      return Decision::accept();
    }
    if (m.msg_type() != "D") return Decision::unsupported_message_type();
    ++orders;
    const std::string id(m.get(11));
    const SendStatus st = s.send_app("8", real_now(), [&](OutgoingMessage& o) {
      o.add(37, "O" + id);
      o.add(17, "E" + std::to_string(orders.load()));
      o.add_char(150, '0');
      o.add_char(39, '0');
      o.add(11, id);
      o.add(55, m.get(55));
      o.add(54, m.get(54));
      o.add_int(151, 100);
      o.add_int(14, 0);
      o.add_int(6, 0);
    });
    EXPECT_EQ(st, SendStatus::kOk);
    return Decision::accept();
  }
  Decision from_admin(Session&, const codec::MessageView& m) noexcept override {
    if (m.msg_type() == "3") ++rejects;
    return Decision::accept();
  }
};

/// Pumps socket reads and timers into `s` until `done()` or `ms` elapse.
/// While `drop_orders` > 0, received NewOrderSingles are thrown away (a
/// message lost on the way, which the sequence numbers must reveal).
struct Pump {
  Pump(Session& session, SocketOutput& output) : s(session), out(output) {}
  Session& s;
  SocketOutput& out;
  int drop_orders = 0;
  std::string rx;

  bool operator()(const std::function<bool()>& done, int ms) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    char buf[65536];
    while (std::chrono::steady_clock::now() < deadline) {
      if (done()) return true;
      if (out.fd >= 0) {
        pollfd p{out.fd, POLLIN, 0};
        if (::poll(&p, 1, 5) > 0) {
          const ssize_t n = ::read(out.fd, buf, sizeof(buf));
          if (n > 0) {
            deliver({buf, static_cast<std::size_t>(n)});
          } else {
            out.close_fd();
            s.on_disconnected(real_now());
          }
        }
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      s.on_timer(real_now());
    }
    return done();
  }

  void deliver(std::string_view bytes) {
    if (drop_orders == 0 && rx.empty()) {
      s.on_bytes({bytes.data(), bytes.size()}, real_now());
      return;
    }
    rx.append(bytes);
    for (;;) {
      const codec::FrameResult fr = codec::frame(rx);
      if (fr.status == codec::FrameStatus::kNeedMore) break;
      const std::string msg = rx.substr(0, fr.size);
      rx.erase(0, fr.size);
      if (drop_orders > 0 && field(msg, "35") == "D") {
        --drop_orders;
        continue;
      }
      s.on_bytes({msg.data(), msg.size()}, real_now());
    }
  }
};

int listen_loopback(int& port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 || ::listen(fd, 4) != 0) {
    ::close(fd);
    return -1;
  }
  socklen_t len = sizeof(a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  port = ntohs(a.sin_port);
  return fd;
}

int connect_loopback(int port, int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0) {
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      return fd;
    }
    ::close(fd);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return -1;
}

std::string spec(const std::string& file) { return std::string(HFT_SHARED_DIR) + "/fix/spec/" + file; }

SendStatus send_order(Session& s, const std::string& id) {
  return s.send_app("D", real_now(), [&](OutgoingMessage& m) {
    m.add(11, id);
    m.add_char(21, '1');
    m.add(55, "MSFT");
    m.add_char(54, '2');
    m.add(60, utc_text(core::realtime_ns(), true));
    m.add_int(38, 100);
    m.add_char(40, '1');
  });
}

TEST(SessionQuickFixInterop, quickfix_initiator_trades_with_our_acceptor_through_gaps_and_heartbeats) {
  int port = 0;
  const int lfd = listen_loopback(port);
  ASSERT_GE(lfd, 0);

  store::MemoryStore store(store::MemoryStoreConfig{4096, 4096}, core::realtime_ns());
  SocketOutput out;
  TradingApp app;
  SessionSettings st;
  st.begin_string = "FIX.4.4";
  st.sender_comp_id = "HFT";
  st.target_comp_id = "QF";
  st.reset_on_logon = true;
  st.max_message_size = 4096;
  st.dictionary = shared_dictionary("FIX44.xml");
  auto created = Session::create(st, store, app, out, nullptr, real_now());
  ASSERT_TRUE(created.ok()) << created.error().message;
  Session& s = **created;

  qf_interop::PeerOptions po;
  po.initiator = true;
  po.sender_comp_id = "QF";
  po.target_comp_id = "HFT";
  po.port = port;
  po.heart_bt_int = 1;
  po.dictionary = spec("FIX44.xml");
  if (const char* dir = std::getenv("HFT_QF_LOG")) po.log_directory = dir;
  qf_interop::Peer peer(po);
  std::string error;
  ASSERT_TRUE(peer.start(error)) << error;

  pollfd p{lfd, POLLIN, 0};
  ASSERT_GT(::poll(&p, 1, 10000), 0) << "QuickFIX did not connect";
  out.fd = ::accept(lfd, nullptr, nullptr);
  ::close(lfd);
  ASSERT_GE(out.fd, 0);
  s.on_connected(real_now());

  Pump pump(s, out);
  ASSERT_TRUE(pump([&] { return s.is_logged_on() && peer.logged_on(); }, 10000)) << "logon";
  EXPECT_EQ(s.heart_bt_int(), 1);

  // Orders from QuickFIX, execution reports back.
  for (int i = 0; i < 200; ++i) ASSERT_TRUE(peer.send_order("Q" + std::to_string(i)));
  ASSERT_TRUE(pump([&] { return peer.execution_reports() == 200; }, 20000))
      << "execution reports at QuickFIX: " << peer.execution_reports();
  EXPECT_EQ(app.orders.load(), 200);

  // Orders from us.
  for (int i = 0; i < 50; ++i) ASSERT_EQ(send_order(s, "H" + std::to_string(i)), SendStatus::kOk);
  ASSERT_TRUE(pump([&] { return app.reports.load() == 50; }, 20000)) << "reports: " << app.reports.load();
  EXPECT_EQ(peer.orders_received(), 50);

  // Heartbeats keep both sides up through 3.5 silent intervals.
  pump([] { return false; }, 3500);
  EXPECT_TRUE(s.is_logged_on());
  EXPECT_TRUE(peer.logged_on());

  // A gap in our sequence: QuickFIX asks, we gap-fill, the order goes through.
  s.set_next_sender_seq(s.next_sender_seq() + 5);
  ASSERT_EQ(send_order(s, "after-gap"), SendStatus::kOk);
  ASSERT_TRUE(pump([&] { return app.reports.load() == 51; }, 10000));
  EXPECT_GE(s.counters().resend_requests_received, 1u);
  EXPECT_GE(peer.sequence_resets(), 1);
  ASSERT_TRUE(pump([&] { return peer.expected_target_seq() == static_cast<int>(s.next_sender_seq()); },
                   5000));

  // An order from QuickFIX is lost on the way: the next one reveals the gap,
  // we ask, QuickFIX resends it (PossDupFlag), both are processed once, in order.
  pump.drop_orders = 1;
  ASSERT_TRUE(peer.send_order("lost"));
  ASSERT_TRUE(pump([&] { return pump.drop_orders == 0; }, 5000));
  ASSERT_TRUE(peer.send_order("next"));
  ASSERT_TRUE(pump([&] { return peer.execution_reports() == 202 && !s.resend_requested(); }, 10000))
      << "execution reports at QuickFIX: " << peer.execution_reports();
  EXPECT_GE(s.counters().resend_requests_sent, 1u);
  EXPECT_EQ(peer.resend_requests(), static_cast<int>(s.counters().resend_requests_sent));
  EXPECT_EQ(app.orders.load(), 202);
  EXPECT_EQ(s.next_target_seq(), static_cast<std::uint64_t>(peer.next_sender_seq()));

  EXPECT_EQ(peer.session_rejects(), 0);
  EXPECT_EQ(peer.business_rejects(), 0);
  EXPECT_EQ(app.rejects.load(), 0);
  EXPECT_EQ(s.counters().rejects_sent, 0u);

  // QuickFIX logs out; we answer and close.
  peer.logout();
  ASSERT_TRUE(pump([&] { return out.closed; }, 10000));
  EXPECT_EQ(out.reason, DisconnectReason::kLogoutComplete);
  ASSERT_TRUE(pump([&] { return peer.logouts() >= 1; }, 5000));
  peer.stop();
}

TEST(SessionQuickFixInterop, our_fixt_initiator_trades_with_a_quickfix_acceptor) {
  int port = 0;
  const int probe = listen_loopback(port);  // a free port for QuickFIX to listen on
  ASSERT_GE(probe, 0);
  ::close(probe);

  qf_interop::PeerOptions po;
  po.initiator = false;
  po.begin_string = "FIXT.1.1";
  po.sender_comp_id = "QF";
  po.target_comp_id = "HFT";
  po.port = port;
  po.dictionary = spec("FIXT11.xml");
  po.app_dictionary = spec("FIX50SP2.xml");
  po.default_appl_ver_id = "FIX.5.0SP2";
  if (const char* dir = std::getenv("HFT_QF_LOG")) po.log_directory = dir;
  qf_interop::Peer peer(po);
  std::string error;
  ASSERT_TRUE(peer.start(error)) << error;

  store::MemoryStore store(store::MemoryStoreConfig{1024, 4096}, core::realtime_ns());
  SocketOutput out;
  TradingApp app;
  SessionSettings st;
  st.begin_string = "FIXT.1.1";
  st.sender_comp_id = "HFT";
  st.target_comp_id = "QF";
  st.initiator = true;
  st.heart_bt_int = 1;
  st.reset_on_logon = true;
  st.default_appl_ver_id = "FIX.5.0SP2";
  st.max_message_size = 4096;
  st.dictionary = shared_dictionary("FIXT11.xml");
  st.app_dictionary = shared_dictionary("FIX50SP2.xml");
  auto created = Session::create(st, store, app, out, nullptr, real_now());
  ASSERT_TRUE(created.ok()) << created.error().message;
  Session& s = **created;

  out.fd = connect_loopback(port, 10000);
  ASSERT_GE(out.fd, 0) << "could not connect to QuickFIX";
  s.on_connected(real_now());
  Pump pump(s, out);
  ASSERT_TRUE(pump([&] { return s.is_logged_on() && peer.logged_on(); }, 10000)) << "logon";
  EXPECT_EQ(s.target_default_appl_ver_id(), "9");

  for (int i = 0; i < 100; ++i) ASSERT_EQ(send_order(s, "T" + std::to_string(i)), SendStatus::kOk);
  ASSERT_TRUE(pump([&] { return app.reports.load() == 100; }, 20000)) << "reports: " << app.reports.load();
  EXPECT_EQ(peer.orders_received(), 100);

  pump([] { return false; }, 2500);  // heartbeats at 1 s both ways
  EXPECT_TRUE(s.is_logged_on());
  EXPECT_EQ(peer.session_rejects(), 0);
  EXPECT_EQ(app.rejects.load(), 0);

  s.logout("done", real_now());
  ASSERT_TRUE(pump([&] { return out.closed; }, 10000));
  EXPECT_EQ(out.reason, DisconnectReason::kLogoutComplete);
  peer.stop();
}

}  // namespace
}  // namespace hft::session::test
