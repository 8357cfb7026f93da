// Peers before and at Logon, against an engine acceptor on loopback:
// connections that never name a session, credentials, the address listened
// on, and a counterparty that reconnects while its old connection drains.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <ctime>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "hft/core/clock.hpp"
#include "hft/engine/engine.hpp"
#include "peer_support.hpp"

namespace {

using hft::engine::Config;
using hft::engine::Engine;

class NullApp final : public hft::session::Application {};

using Lines = hft::test::Lines;

using hft::test::connect_from;
using hft::test::has_field;
using hft::test::raw_fix;
using hft::test::read_until;
using hft::test::send_all;

std::string logon(int seq = 1, const std::string& extra = "") {
  return raw_fix("A", seq,
                 "98=0\x01"
                 "108=30\x01" +
                     extra);
}

std::string acceptor_config(const std::string& defaults, const std::string& session = {}) {
  return "[DEFAULT]\nNonStopSession=Y\nUseDataDictionary=N\n" + defaults +
         "\n[SESSION]\nConnectionType=acceptor\nBeginString=FIX.4.4\nSenderCompID=VENUE\nTargetCompID="
         "CLIENT\n"
         "SocketAcceptPort=0\n" +
         session;
}

std::unique_ptr<Engine> make(const std::string& text, hft::session::Application& app,
                             hft::session::Logger* log = nullptr) {
  return hft::test::make_engine(text, app, log);
}

// 1000 sockets plus the engine's: raise the soft limit to the hard one if
// it is lower than that.
bool enough_descriptors(rlim_t wanted) {
  rlimit r{};
  if (::getrlimit(RLIMIT_NOFILE, &r) != 0) return false;
  if (r.rlim_cur >= wanted) return true;
  if (r.rlim_max < wanted) return false;
  r.rlim_cur = wanted;
  return ::setrlimit(RLIMIT_NOFILE, &r) == 0;
}

TEST(PreLogon, a_logon_is_answered_within_a_second_while_1000_connections_name_no_session) {
  ASSERT_TRUE(enough_descriptors(4096)) << "RLIMIT_NOFILE below 4096 and cannot be raised";
  NullApp app;
  Lines lines;
  auto engine = make(acceptor_config("LogonTimeout=30\n"), app, &lines);
  ASSERT_TRUE(engine);
  const int port = engine->listen_port();
  std::thread loop([&] { engine->run(); });

  // 500 idle connections from one address, 500 sending half a Logon from
  // 125 addresses (4 each, under MaxPendingConnectionsPerAddress).
  std::vector<int> held;
  held.reserve(1000);
  for (int i = 0; i < 500; ++i) {
    const int fd = connect_from("127.0.0.2", port);
    if (fd >= 0) held.push_back(fd);
  }
  for (int i = 0; i < 500; ++i) {
    const std::string source = "127.0.1." + std::to_string(1 + i / 4);
    const int fd = connect_from(source.c_str(), port);
    if (fd < 0) continue;
    send_all(fd,
             "8=FIX.4.4\x01"
             "9=");
    held.push_back(fd);
  }
  EXPECT_GE(held.size(), 990u) << "connect() itself failed";

  const int good = connect_from("127.0.0.1", port);
  ASSERT_GE(good, 0);
  const auto sent_at = hft::core::monotonic_ns();
  send_all(good, logon());
  std::string received;
  bool ended = false;
  const bool answered = read_until(
      good, received, ended, [] {}, [&] { return ended || has_field(received, "35=A"); }, 5'000'000'000);
  const auto answer_ns = hft::core::monotonic_ns() - sent_at;
  engine->request_stop();
  loop.join();
  ::close(good);
  for (const int fd : held) ::close(fd);

  ASSERT_TRUE(answered && has_field(received, "35=A")) << "no Logon answer";
  EXPECT_LT(answer_ns, 1'000'000'000) << "Logon answered after " << answer_ns / 1'000'000 << " ms";
  const auto& stats = engine->stats();
  std::printf("Logon answered in %.1f ms with %zu connections held; refused per address %llu, evicted %llu\n",
              static_cast<double>(answer_ns) / 1e6, held.size(),
              static_cast<unsigned long long>(stats.pending_per_address_refused),
              static_cast<unsigned long long>(stats.pending_evicted));
  EXPECT_GE(stats.pending_per_address_refused, 400u);  // all but 8 of 127.0.0.2's
  EXPECT_GE(stats.pending_evicted, 400u);              // the 125 addresses share 64 slots
  EXPECT_EQ(stats.no_slot_refused, 0u);
  // Refusals are logged with the peer, not once per connection.
  const auto per_address = lines.containing("MaxPendingConnectionsPerAddress");
  ASSERT_FALSE(per_address.empty());
  EXPECT_NE(per_address.front().find("from 127.0.0.2:"), std::string::npos) << per_address.front();
  EXPECT_LT(per_address.size(), 20u);
  const auto evicted = lines.containing("MaxPendingConnections reached");
  ASSERT_FALSE(evicted.empty());
  EXPECT_LT(evicted.size(), 20u);
  EXPECT_NE(evicted.back().find("127.0.1."), std::string::npos) << evicted.back();
}

// Waits until the engine has closed `fd` (EOF or reset), polling it.
bool closed_by_engine(Engine& engine, int fd) {
  std::string received;
  bool ended = false;
  return read_until(
      fd, received, ended, [&] { engine.poll(); }, [&] { return ended; }, 2'000'000'000);
}

TEST(PreLogon, pending_connection_limits_per_address_and_in_total_are_the_configured_ones) {
  NullApp app;
  auto engine = make(acceptor_config("MaxPendingConnections=2\nMaxPendingConnectionsPerAddress=1\n"), app);
  ASSERT_TRUE(engine);
  const int port = engine->listen_port();
  const int a1 = connect_from("127.0.0.2", port);
  const int a2 = connect_from("127.0.0.2", port);
  EXPECT_TRUE(closed_by_engine(*engine, a2)) << "a second pending connection from one address";
  EXPECT_EQ(engine->stats().pending_per_address_refused, 1u);
  const int b = connect_from("127.0.0.3", port);
  const int c = connect_from("127.0.0.4", port);  // a third: the oldest (a1) makes room
  EXPECT_TRUE(closed_by_engine(*engine, a1));
  EXPECT_EQ(engine->stats().pending_evicted, 1u);
  // The two newest are still there and can log on.
  send_all(c, logon());
  std::string received;
  bool ended = false;
  ASSERT_TRUE(read_until(
      c, received, ended, [&] { engine->poll(); }, [&] { return ended || has_field(received, "35=A"); }));
  EXPECT_TRUE(has_field(received, "35=A"));
  for (const int fd : {a1, a2, b, c}) ::close(fd);
}

TEST(PreLogon, a_connection_that_names_no_session_within_logon_timeout_is_closed_and_counted) {
  NullApp app;
  auto engine = make(acceptor_config("LogonTimeout=1\n"), app);
  ASSERT_TRUE(engine);
  const int fd = connect_from("127.0.0.1", engine->listen_port());
  ASSERT_GE(fd, 0);
  send_all(fd,
           "8=FIX.4.4\x01"
           "9=");
  std::string received;
  bool ended = false;
  const auto start = hft::core::monotonic_ns();
  ASSERT_TRUE(read_until(
      fd, received, ended, [&] { engine->poll(); }, [&] { return ended; }));
  const auto took = hft::core::monotonic_ns() - start;
  ::close(fd);
  EXPECT_GE(took, 900'000'000);
  EXPECT_EQ(engine->stats().pre_logon_timeouts, 1u);
  EXPECT_TRUE(received.empty());
}

TEST(PreLogon, a_connection_sending_more_than_max_pre_logon_bytes_is_closed) {
  NullApp app;
  auto engine = make(acceptor_config("MaxPreLogonBytes=1024\n"), app);
  ASSERT_TRUE(engine);
  const int fd = connect_from("127.0.0.1", engine->listen_port());
  ASSERT_GE(fd, 0);
  send_all(fd,
           "8=FIX.4.4\x01"
           "9=100000\x01" +
               std::string(2000, 'x'));
  std::string received;
  bool ended = false;
  ASSERT_TRUE(read_until(
      fd, received, ended, [&] { engine->poll(); }, [&] { return ended; }));
  ::close(fd);
  EXPECT_EQ(engine->stats().pre_logon_bytes_exceeded, 1u);
  // Below the cap the same connection would still be waiting.
  const int patient = connect_from("127.0.0.1", engine->listen_port());
  send_all(patient,
           "8=FIX.4.4\x01"
           "9=100000\x01" +
               std::string(500, 'x'));
  const auto until = hft::core::monotonic_ns() + 200'000'000;
  while (hft::core::monotonic_ns() < until) engine->poll();
  EXPECT_EQ(engine->stats().pre_logon_bytes_exceeded, 1u);
  ::close(patient);
}

TEST(Credentials, a_wrong_password_gets_a_logout_with_text_and_the_right_one_logs_on) {
  NullApp app;
  auto engine = make(acceptor_config("", "Username=alice\nPassword=secret\n"), app);
  ASSERT_TRUE(engine);
  const int intruder = connect_from("127.0.0.1", engine->listen_port());
  send_all(intruder, logon(1,
                           "141=Y\x01"
                           "553=alice\x01"
                           "554=guess\x01"));
  std::string received;
  bool ended = false;
  ASSERT_TRUE(read_until(
      intruder, received, ended, [&] { engine->poll(); }, [&] { return ended; }));
  ::close(intruder);
  EXPECT_TRUE(has_field(received, "35=5")) << received;
  EXPECT_TRUE(has_field(received, "58=Invalid credentials")) << received;
  EXPECT_FALSE(has_field(received, "35=A"));
  EXPECT_EQ(engine->session(0).next_sender_seq(), 1u);
  EXPECT_EQ(engine->session(0).next_target_seq(), 1u);

  const int client = connect_from("127.0.0.1", engine->listen_port());
  send_all(client, logon(1,
                         "553=alice\x01"
                         "554=secret\x01"));
  received.clear();
  ended = false;
  ASSERT_TRUE(read_until(
      client, received, ended, [&] { engine->poll(); },
      [&] { return ended || has_field(received, "35=A"); }));
  ::close(client);
  EXPECT_TRUE(has_field(received, "35=A")) << received;
}

TEST(SocketAcceptHost, the_listener_binds_the_configured_address_only) {
  NullApp app;
  auto engine = make(acceptor_config("", "SocketAcceptHost=127.0.0.2\n"), app);
  ASSERT_TRUE(engine);
  const int port = engine->listen_port();
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);  // 127.0.0.1: not listened on
  EXPECT_NE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  EXPECT_EQ(errno, ECONNREFUSED);
  ::close(fd);
  ::inet_pton(AF_INET, "127.0.0.2", &a.sin_addr);
  const int ok = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  EXPECT_EQ(::connect(ok, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ::close(ok);
}

// The counterparty logs out and reconnects at once while its old socket is
// still open and not read, so our Logout is still being delivered.
TEST(Reconnect, a_new_connection_takes_over_a_session_whose_old_connection_is_draining) {
  NullApp app;
  auto engine = make(acceptor_config("SocketCloseTimeoutMs=5000\n"), app);
  ASSERT_TRUE(engine);
  const int port = engine->listen_port();
  const int old = connect_from("127.0.0.1", port, 4096);
  ASSERT_GE(old, 0);
  send_all(old, logon());
  // Many TestRequests, never read: their Heartbeats fill the old socket's
  // small receive window, so what follows stays unacknowledged.
  std::string burst;
  const std::string id(100, 'T');
  for (int seq = 2; seq < 102; ++seq) burst += raw_fix("1", seq, "112=" + id + "\x01");
  burst += raw_fix("5", 102, "");
  send_all(old, burst);
  const auto until = hft::core::monotonic_ns() + 5'000'000'000;
  while (engine->session(0).is_connected() || engine->session(0).next_target_seq() < 103) {
    ASSERT_LT(hft::core::monotonic_ns(), until) << "the Logout was not processed";
    engine->poll();
  }
  const int again = connect_from("127.0.0.1", port);
  send_all(again, logon(103));
  std::string received;
  bool ended = false;
  ASSERT_TRUE(read_until(
      again, received, ended, [&] { engine->poll(); }, [&] { return ended || has_field(received, "35=A"); }));
  EXPECT_TRUE(has_field(received, "35=A")) << "the new connection was refused while the old one drained";
  EXPECT_EQ(engine->stats().connections_taken_over, 1u);
  EXPECT_EQ(engine->stats().duplicate_refused, 0u);
  EXPECT_TRUE(engine->session(0).is_logged_on());

  // A second Logon while the session is really logged on is still refused.
  const int twin = connect_from("127.0.0.1", port);
  send_all(twin, logon(1));
  std::string twin_received;
  bool twin_ended = false;
  ASSERT_TRUE(read_until(
      twin, twin_received, twin_ended, [&] { engine->poll(); }, [&] { return twin_ended; }));
  EXPECT_EQ(engine->stats().duplicate_refused, 1u);
  EXPECT_TRUE(engine->session(0).is_logged_on());
  ::close(twin);
  ::close(again);
  ::close(old);
}

}  // namespace
