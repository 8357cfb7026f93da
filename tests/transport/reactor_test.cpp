// Loopback tests of the reactor, connector, listener and connection.
#include "hft/transport/reactor.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "hft/core/clock.hpp"
#include "support/alloc_counter.hpp"
#include "transport/reactor_pump.hpp"

namespace {

using namespace hft::transport;
using namespace std::chrono_literals;

constexpr std::int64_t kMs = 1'000'000;

using hft::transport::test::pump;

// Records every event; optionally echoes or keeps what it receives.
struct Recorder : ConnectionHandler {
  enum class Mode { kKeep, kEcho, kIgnore };
  explicit Recorder(Mode m = Mode::kKeep) : mode(m) {}

  void on_data(Connection& c) noexcept override {
    ++data_events;
    if (mode == Mode::kIgnore) return;
    const auto bytes = c.received();
    if (mode == Mode::kEcho) {
      const SendResult r = c.send(bytes);
      c.consume(r.accepted());
    } else {
      data.append(bytes.data(), bytes.size());
      c.consume(bytes.size());
    }
  }
  void on_connected(Connection& c) noexcept override {
    ++connected;
    last = &c;
  }
  void on_accepted(Connection& c) noexcept override {
    ++accepted;
    last = &c;
    if (close_on_accept) c.close();
  }
  void on_connect_failed(Connector&, const Endpoint& e, int error) noexcept override {
    failed_endpoints.push_back(e);
    failed_errors.push_back(error);
    failed_at_ns.push_back(hft::core::monotonic_ns());
  }
  void on_drained(Connection&) noexcept override { ++drained; }
  void on_closed(Connection& c, CloseReason reason, int error) noexcept override {
    ++closed;
    close_reasons.push_back(reason);
    close_errors.push_back(error);
    closed_capacity = c.receive_capacity();
    closed_unconsumed = c.received().size();
    if (last == &c) last = nullptr;
  }

  Mode mode;
  bool close_on_accept = false;
  Connection* last = nullptr;
  std::string data;
  int data_events = 0, connected = 0, accepted = 0, drained = 0, closed = 0;
  std::vector<Endpoint> failed_endpoints;
  std::vector<int> failed_errors;
  std::vector<std::int64_t> failed_at_ns;
  std::vector<CloseReason> close_reasons;
  std::vector<int> close_errors;
  std::size_t closed_capacity = 0, closed_unconsumed = 0;
};

std::unique_ptr<Reactor> make_reactor(PollMode mode, std::size_t max_connections = 16) {
  ReactorOptions options;
  options.poll_mode = mode;
  options.epoll_timeout_ms = 1;
  options.service_interval_ns = 50'000;
  options.max_connections = max_connections;
  auto reactor = Reactor::create(options);
  EXPECT_TRUE(reactor.ok()) << (reactor.ok() ? "" : reactor.error().message);
  return std::move(reactor).value();
}

ConnectorOptions connector_to(std::uint16_t port) {
  ConnectorOptions options;
  options.endpoints = {{"127.0.0.1", port}};
  options.reconnect_interval_ns = 50 * kMs;
  options.connect_timeout_ns = 2000 * kMs;
  return options;
}

ListenerOptions listen_on_loopback() {
  ListenerOptions options;
  options.host = "127.0.0.1";
  options.port = 0;
  return options;
}

// A port bound to nothing that listens: connects to it are refused. Kept
// bound so that no other test can take it meanwhile.
struct RefusingPort {
  RefusingPort() {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    socklen_t len = sizeof(a);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    port = ntohs(a.sin_port);
  }
  ~RefusingPort() { ::close(fd); }
  int fd;
  std::uint16_t port;
};

// A plain listening socket outside any reactor.
struct RawListener {
  explicit RawListener(int backlog, int rcvbuf = 0) {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (rcvbuf > 0) ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    EXPECT_EQ(::listen(fd, backlog), 0);
    socklen_t len = sizeof(a);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    port = ntohs(a.sin_port);
  }
  ~RawListener() { ::close(fd); }
  int fd;
  std::uint16_t port;
};

std::string pattern(std::size_t offset, std::size_t size) {
  std::string s(size, '\0');
  for (std::size_t i = 0; i < size; ++i) s[i] = static_cast<char>((offset + i) % 251);
  return s;
}

class ReactorModes : public ::testing::TestWithParam<PollMode> {};

INSTANTIATE_TEST_SUITE_P(Transport, ReactorModes, ::testing::Values(PollMode::kBusy, PollMode::kEpoll),
                         [](const auto& param_info) { return std::string(to_string(param_info.param)); });

TEST_P(ReactorModes, connects_accepts_and_echoes_in_order) {
  Recorder server(Recorder::Mode::kEcho);
  Recorder client;
  auto reactor = make_reactor(GetParam());
  auto listener = reactor->add_listener(listen_on_loopback(), server);
  ASSERT_TRUE(listener.ok()) << listener.error().message;
  auto connector = reactor->add_connector(connector_to((*listener)->port()), client);
  ASSERT_TRUE(connector.ok()) << connector.error().message;

  ASSERT_TRUE(pump(*reactor, [&] { return client.connected == 1 && server.accepted == 1; }));
  Connection* c = (*connector)->connection();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ((*connector)->state(), Connector::State::kConnected);
  EXPECT_EQ((*connector)->endpoint_index(), 0u);
  EXPECT_EQ(c->connector(), *connector);
  EXPECT_EQ(server.last->listener(), *listener);
  EXPECT_EQ(c->peer(), "127.0.0.1:" + std::to_string((*listener)->port()));

  std::string expected;
  for (int i = 0; i < 100; ++i) {
    const std::string message = "8=FIX.4.4|" + std::to_string(i) + "|10=000|";
    expected += message;
    ASSERT_EQ(c->send(message).status, SendStatus::kSent);
  }
  ASSERT_TRUE(pump(*reactor, [&] { return client.data.size() == expected.size(); }));
  EXPECT_EQ(client.data, expected);
  EXPECT_EQ(c->bytes_sent(), expected.size());
  EXPECT_EQ(c->bytes_received(), expected.size());
  EXPECT_EQ(reactor->open_connections(), 2u);
}

TEST_P(ReactorModes, one_listener_accepts_many_connections) {
  Recorder server(Recorder::Mode::kEcho);
  Recorder clients[3];
  auto reactor = make_reactor(GetParam());
  auto listener = reactor->add_listener(listen_on_loopback(), server);
  ASSERT_TRUE(listener.ok());
  Connector* connectors[3];
  for (int i = 0; i < 3; ++i) {
    auto c = reactor->add_connector(connector_to((*listener)->port()), clients[i]);
    ASSERT_TRUE(c.ok());
    connectors[i] = *c;
  }
  ASSERT_TRUE(pump(*reactor, [&] { return server.accepted == 3; }));
  ASSERT_TRUE(pump(*reactor, [&] {
    return clients[0].connected == 1 && clients[1].connected == 1 && clients[2].connected == 1;
  }));
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(connectors[i]->connection()->send("client " + std::to_string(i)).status, SendStatus::kSent);
  }
  ASSERT_TRUE(pump(*reactor, [&] {
    return clients[0].data == "client 0" && clients[1].data == "client 1" && clients[2].data == "client 2";
  }));
  EXPECT_EQ((*listener)->accepted(), 3u);
  EXPECT_EQ(reactor->open_connections(), 6u);
}

TEST_P(ReactorModes, partial_sends_queue_the_rest_report_overflow_and_flush_in_order) {
  // The peer is a plain socket that does not read at first, with small
  // kernel buffers on both sides, so the kernel soon stops taking bytes.
  RawListener peer(8, 4096);
  Recorder client;
  auto reactor = make_reactor(GetParam());
  ConnectorOptions options = connector_to(peer.port);
  options.socket.send_buffer_size = 4096;
  options.buffers.send_size = 32 * 1024;
  auto connector = reactor->add_connector(options, client);
  ASSERT_TRUE(connector.ok());
  ASSERT_TRUE(pump(*reactor, [&] { return client.connected == 1; }));
  const int server_fd = ::accept(peer.fd, nullptr, nullptr);
  ASSERT_GE(server_fd, 0);
  Connection& c = *(*connector)->connection();

  constexpr std::size_t kChunk = 8 * 1024;
  std::size_t accepted = 0;
  bool saw_queued = false;
  bool saw_overflow = false;
  for (int i = 0; i < 1000 && !saw_overflow; ++i) {
    const std::string chunk = pattern(accepted, kChunk);
    const SendResult r = c.send(chunk);
    ASSERT_TRUE(r.status == SendStatus::kSent || r.status == SendStatus::kQueued ||
                r.status == SendStatus::kOverflow)
        << to_string(r.status);
    if (r.status == SendStatus::kQueued) {
      saw_queued = true;
      EXPECT_EQ(r.accepted(), kChunk);
    }
    if (r.status == SendStatus::kOverflow) {
      saw_overflow = true;
      EXPECT_LT(r.accepted(), kChunk);
      EXPECT_EQ(c.pending_send_bytes(), c.send_capacity());
    }
    accepted += r.accepted();
  }
  ASSERT_TRUE(saw_queued);
  ASSERT_TRUE(saw_overflow);
  EXPECT_EQ(c.send_overflows(), 1u);

  // Now the peer reads; the reactor flushes the outbound buffer as the
  // socket becomes writable, and every accepted byte arrives once, in order.
  std::string received;
  char buf[65536];
  ASSERT_TRUE(pump(*reactor, [&] {
    const ssize_t n = ::recv(server_fd, buf, sizeof(buf), MSG_DONTWAIT);
    if (n > 0) received.append(buf, static_cast<std::size_t>(n));
    return received.size() >= accepted;
  }));
  EXPECT_EQ(received.size(), accepted);
  EXPECT_TRUE(received == pattern(0, accepted));
  ASSERT_TRUE(pump(*reactor, [&] { return client.drained >= 1; }));
  EXPECT_EQ(c.pending_send_bytes(), 0u);
  // Sending works directly again.
  EXPECT_EQ(c.send("x").status, SendStatus::kSent);
  ::close(server_fd);
}

TEST_P(ReactorModes, peer_close_is_reported_and_the_connector_waits_to_reconnect) {
  Recorder server;
  Recorder client;
  auto reactor = make_reactor(GetParam());
  auto listener = reactor->add_listener(listen_on_loopback(), server);
  ASSERT_TRUE(listener.ok());
  ConnectorOptions options = connector_to((*listener)->port());
  options.reconnect_interval_ns = 60'000 * kMs;  // no reconnect within the test
  auto connector = reactor->add_connector(options, client);
  ASSERT_TRUE(connector.ok());
  ASSERT_TRUE(pump(*reactor, [&] { return client.connected == 1 && server.accepted == 1; }));

  const std::int64_t before = hft::core::monotonic_ns();
  server.last->close();
  ASSERT_TRUE(pump(*reactor, [&] { return client.closed == 1 && server.closed == 1; }));
  EXPECT_EQ(client.close_reasons[0], CloseReason::kPeerClosed);
  EXPECT_EQ(server.close_reasons[0], CloseReason::kLocal);
  EXPECT_EQ((*connector)->state(), Connector::State::kWaiting);
  EXPECT_EQ((*connector)->connection(), nullptr);
  EXPECT_GE((*connector)->next_attempt_ns(), before + 60'000 * kMs);
  EXPECT_EQ(reactor->open_connections(), 0u);
  EXPECT_EQ(reactor->stats().closed, 2u);
}

TEST_P(ReactorModes, reconnects_to_the_failover_endpoint_when_the_primary_is_down) {
  RefusingPort primary;
  Recorder server;
  Recorder client;
  auto reactor = make_reactor(GetParam());
  auto listener = reactor->add_listener(listen_on_loopback(), server);
  ASSERT_TRUE(listener.ok());
  ConnectorOptions options;
  options.endpoints = {{"127.0.0.1", primary.port}, {"127.0.0.1", (*listener)->port()}};
  options.reconnect_interval_ns = 30 * kMs;
  auto connector = reactor->add_connector(options, client);
  ASSERT_TRUE(connector.ok());

  ASSERT_TRUE(pump(*reactor, [&] { return client.connected == 1; }));
  ASSERT_EQ(client.failed_endpoints.size(), 1u);
  EXPECT_EQ(client.failed_endpoints[0].port, primary.port);
  EXPECT_EQ(client.failed_errors[0], ECONNREFUSED);
  EXPECT_EQ((*connector)->endpoint_index(), 1u);
  EXPECT_EQ((*connector)->attempts(), 2u);

  // When the failover drops us, the next round starts at the primary again
  // after the reconnect interval, and fails over again.
  ASSERT_TRUE(pump(*reactor, [&] { return server.accepted == 1; }));
  server.last->close();
  ASSERT_TRUE(pump(*reactor, [&] { return client.connected == 2; }));
  ASSERT_EQ(client.failed_endpoints.size(), 2u);
  EXPECT_EQ(client.failed_endpoints[1].port, primary.port);
  EXPECT_EQ((*connector)->endpoint_index(), 1u);
}

TEST_P(ReactorModes, all_endpoints_down_waits_the_reconnect_interval_between_rounds) {
  RefusingPort a;
  RefusingPort b;
  Recorder client;
  auto reactor = make_reactor(GetParam());
  ConnectorOptions options;
  options.endpoints = {{"127.0.0.1", a.port}, {"127.0.0.1", b.port}};
  options.reconnect_interval_ns = 40 * kMs;
  auto connector = reactor->add_connector(options, client);
  ASSERT_TRUE(connector.ok());
  ASSERT_TRUE(pump(*reactor, [&] { return client.failed_endpoints.size() >= 4; }));
  EXPECT_EQ(client.failed_endpoints[0].port, a.port);
  EXPECT_EQ(client.failed_endpoints[1].port, b.port);
  EXPECT_EQ(client.failed_endpoints[2].port, a.port);
  EXPECT_EQ(client.failed_endpoints[3].port, b.port);
  // The second round began no sooner than one interval after the first ended.
  EXPECT_GE(client.failed_at_ns[2] - client.failed_at_ns[1], 40 * kMs);
  (*connector)->disable();
  EXPECT_EQ((*connector)->state(), Connector::State::kDisabled);
}

TEST_P(ReactorModes, connect_times_out_when_the_peer_never_answers) {
  // A listener with backlog 0 and one connection already queued: the kernel
  // drops further SYNs, so a connect neither succeeds nor is refused.
  RawListener full(0);
  const int filler = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(full.port);
  ASSERT_EQ(::connect(filler, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);

  Recorder client;
  auto reactor = make_reactor(GetParam());
  ConnectorOptions options = connector_to(full.port);
  options.connect_timeout_ns = 150 * kMs;
  options.reconnect_interval_ns = 60'000 * kMs;
  const std::int64_t start = hft::core::monotonic_ns();
  auto connector = reactor->add_connector(options, client);
  ASSERT_TRUE(connector.ok());
  ASSERT_TRUE(pump(*reactor, [&] { return !client.failed_errors.empty(); }));
  EXPECT_EQ(client.failed_errors[0], ETIMEDOUT);
  EXPECT_GE(client.failed_at_ns[0] - start, 150 * kMs);
  EXPECT_EQ(client.connected, 0);
  EXPECT_EQ((*connector)->state(), Connector::State::kWaiting);
  ::close(filler);
}

TEST_P(ReactorModes, steady_state_send_and_receive_allocate_nothing) {
  Recorder server(Recorder::Mode::kEcho);
  Recorder client;
  auto reactor = make_reactor(GetParam());
  auto listener = reactor->add_listener(listen_on_loopback(), server);
  ASSERT_TRUE(listener.ok());
  auto connector = reactor->add_connector(connector_to((*listener)->port()), client);
  ASSERT_TRUE(connector.ok());
  ASSERT_TRUE(pump(*reactor, [&] { return client.connected == 1 && server.accepted == 1; }));
  Connection& c = *(*connector)->connection();
  const std::string message(200, 'm');
  client.data.reserve(1 << 20);
  // Warm-up round trip.
  ASSERT_EQ(c.send(message).status, SendStatus::kSent);
  ASSERT_TRUE(pump(*reactor, [&] { return client.data.size() == message.size(); }));
  client.data.clear();

  std::size_t expected = 0;
  hft::test::AllocationScope scope;
  for (int i = 0; i < 1000; ++i) {
    const SendResult r = c.send(message);
    if (r.status != SendStatus::kSent) break;
    expected += message.size();
    while (client.data.size() < expected) (void)reactor->do_work();
  }
  const std::uint64_t allocations = scope.count();
  EXPECT_EQ(client.data.size(), 1000 * message.size());
  EXPECT_EQ(allocations, 0u);
}

TEST_P(ReactorModes, a_full_receive_buffer_closes_the_connection_instead_of_growing) {
  Recorder server(Recorder::Mode::kIgnore);  // consumes nothing
  Recorder client;
  auto reactor = make_reactor(GetParam());
  ListenerOptions options = listen_on_loopback();
  options.buffers.receive_size = 4096;
  auto listener = reactor->add_listener(options, server);
  ASSERT_TRUE(listener.ok());
  auto connector = reactor->add_connector(connector_to((*listener)->port()), client);
  ASSERT_TRUE(connector.ok());
  ASSERT_TRUE(pump(*reactor, [&] { return client.connected == 1 && server.accepted == 1; }));
  ASSERT_EQ((*connector)->connection()->send(pattern(0, 10000)).status, SendStatus::kSent);
  ASSERT_TRUE(pump(*reactor, [&] { return server.closed == 1; }));
  EXPECT_EQ(server.close_reasons[0], CloseReason::kReceiveBufferFull);
  EXPECT_EQ(server.closed_capacity, 4096u);
  EXPECT_EQ(server.closed_unconsumed, 4096u);
  EXPECT_EQ(reactor->stats().receive_buffer_full, 1u);
  ASSERT_TRUE(pump(*reactor, [&] { return client.closed == 1; }));
}

// A consumer that cannot take more yet pauses reading: it is not called,
// its full buffer does not close the connection, the rest waits in the
// kernel (the sender's writes queue up), and after resuming every byte
// arrives in order.
TEST_P(ReactorModes, paused_reading_holds_the_peer_and_loses_nothing) {
  struct Holding : ConnectionHandler {
    void on_data(Connection& c) noexcept override {
      ++calls;
      const auto bytes = c.received();
      const std::size_t n = std::min<std::size_t>(bytes.size(), take);
      data.append(bytes.data(), n);
      c.consume(n);
      take -= n;
      if (take == 0 && !c.reading_paused()) c.pause_reading(true);
    }
    void on_accepted(Connection& c) noexcept override { connection = &c; }
    void on_closed(Connection&, CloseReason, int) noexcept override { ++closed; }
    Connection* connection = nullptr;
    std::size_t take = 1000;
    std::string data;
    int calls = 0;
    int closed = 0;
  } server;
  Recorder client;
  auto reactor = make_reactor(GetParam());
  ListenerOptions options = listen_on_loopback();
  options.buffers.receive_size = 4096;
  auto listener = reactor->add_listener(options, server);
  ASSERT_TRUE(listener.ok());
  auto connector = reactor->add_connector(connector_to((*listener)->port()), client);
  ASSERT_TRUE(connector.ok());
  ASSERT_TRUE(pump(*reactor, [&] { return client.connected == 1 && server.connection != nullptr; }));
  const std::string stream = pattern(0, 32 << 20);
  std::size_t off = 0;
  // Far more than the server's buffer and the sockets' hold: the client's
  // writes stop being taken while the server does not read.
  for (int stalled = 0; stalled < 50 && off < stream.size();) {
    const SendResult r = (*connector)->connection()->send(std::string_view(stream).substr(off, 16384));
    ASSERT_TRUE(r.status == SendStatus::kSent || r.status == SendStatus::kQueued ||
                r.status == SendStatus::kOverflow);
    off += r.accepted();
    stalled = r.accepted() == 0 ? stalled + 1 : 0;
    (void)reactor->do_work();
  }
  ASSERT_TRUE(server.connection->reading_paused());
  EXPECT_EQ(server.data.size(), 1000u);
  const int calls = server.calls;
  for (int i = 0; i < 200; ++i) (void)reactor->do_work();
  EXPECT_EQ(server.calls, calls) << "not called while paused";
  EXPECT_EQ(server.closed, 0);
  EXPECT_EQ(reactor->stats().receive_buffer_full, 0u);
  EXPECT_LT(off, stream.size()) << "the peer was held back";

  server.take = SIZE_MAX;
  server.connection->pause_reading(false);
  server.on_data(*server.connection);  // what it kept
  while (off < stream.size() || server.data.size() < stream.size()) {
    if (off < stream.size()) {
      const SendResult r = (*connector)->connection()->send(std::string_view(stream).substr(off, 16384));
      off += r.accepted();
    }
    ASSERT_EQ(server.closed, 0);
    (void)reactor->do_work();
  }
  EXPECT_TRUE(server.data == stream);
}

TEST_P(ReactorModes, partially_consumed_data_is_kept_and_compacted) {
  // The consumer takes only whole 100-byte "messages"; fragments stay in
  // the buffer across reads, and a buffer much smaller than the stream works.
  struct Framer : ConnectionHandler {
    void on_data(Connection& c) noexcept override {
      auto bytes = c.received();
      while (bytes.size() >= 100) {
        messages.append(bytes.data(), 100);
        c.consume(100);
        bytes = c.received();
      }
    }
    std::string messages;
  } server;
  Recorder client;
  auto reactor = make_reactor(GetParam());
  ListenerOptions options = listen_on_loopback();
  options.buffers.receive_size = 1000;
  auto listener = reactor->add_listener(options, server);
  ASSERT_TRUE(listener.ok());
  auto connector = reactor->add_connector(connector_to((*listener)->port()), client);
  ASSERT_TRUE(connector.ok());
  ASSERT_TRUE(pump(*reactor, [&] { return client.connected == 1; }));
  const std::string stream = pattern(0, 100 * 200);
  for (std::size_t off = 0; off < stream.size();) {  // 70-byte writes never align with 100
    const std::size_t n = std::min<std::size_t>(70, stream.size() - off);
    const SendResult r = (*connector)->connection()->send(std::string_view(stream).substr(off, n));
    ASSERT_TRUE(r.status != SendStatus::kNotOpen && r.status != SendStatus::kError);
    off += r.accepted();
    (void)reactor->do_work();
  }
  ASSERT_TRUE(pump(*reactor, [&] { return server.messages.size() == stream.size(); }));
  EXPECT_TRUE(server.messages == stream);
}

TEST_P(ReactorModes, answers_sent_inside_on_data_leave_together_after_the_callback_in_order) {
  // A venue answers each message of a received batch; the answers are
  // queued during the callback and written with one send() after it.
  struct Answerer : ConnectionHandler {
    void on_data(Connection& c) noexcept override {
      auto bytes = c.received();
      while (bytes.size() >= 10) {
        const std::string answer = "ACK" + std::string(bytes.data(), 10);
        const SendResult r = c.send(answer);
        if (r.status == SendStatus::kQueued && r.accepted() == answer.size()) ++deferred;
        ++answers;
        c.consume(10);
        bytes = c.received();
      }
      outbound_at_return = c.pending_send_bytes();
    }
    int answers = 0, deferred = 0;
    std::size_t outbound_at_return = 0;
  } server;
  Recorder client;
  auto reactor = make_reactor(GetParam());
  auto listener = reactor->add_listener(listen_on_loopback(), server);
  ASSERT_TRUE(listener.ok());
  auto connector = reactor->add_connector(connector_to((*listener)->port()), client);
  ASSERT_TRUE(connector.ok());
  ASSERT_TRUE(pump(*reactor, [&] { return client.connected == 1; }));
  std::string batch, expected;
  for (int i = 0; i < 50; ++i) {
    const std::string n = std::to_string(i);
    const std::string m = "msg-" + std::string(6 - n.size(), '0') + n;  // 10 bytes
    batch += m;
    expected += "ACK" + m;
  }
  ASSERT_EQ((*connector)->connection()->send(batch).status, SendStatus::kSent);
  ASSERT_TRUE(pump(*reactor, [&] { return client.data.size() == expected.size(); }));
  EXPECT_EQ(client.data, expected);
  EXPECT_EQ(server.answers, 50);
  EXPECT_EQ(server.deferred, 50);         // every answer was queued, none written one by one
  EXPECT_GT(server.outbound_at_return, 0u);  // still queued when the callback returned
}

TEST_P(ReactorModes, a_full_connection_table_rejects_the_accept_and_the_client_sees_a_close) {
  Recorder server;
  auto reactor = make_reactor(GetParam(), 1);  // room for one connection only
  auto listener = reactor->add_listener(listen_on_loopback(), server);
  ASSERT_TRUE(listener.ok());
  auto raw_client = [&] {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons((*listener)->port());
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    timeval tv{5, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    return fd;
  };
  const int first = raw_client();
  const int second = raw_client();
  ASSERT_TRUE(pump(*reactor, [&] { return (*listener)->rejected() == 1; }));
  EXPECT_EQ(server.accepted, 1);
  EXPECT_EQ(reactor->stats().accept_rejected, 1u);
  char byte;
  EXPECT_EQ(::recv(second, &byte, 1, 0), 0);  // closed by the reactor
  ASSERT_EQ(::send(first, "ok", 2, 0), 2);    // the accepted one works
  ASSERT_TRUE(pump(*reactor, [&] { return server.data == "ok"; }));
  ::close(first);
  ::close(second);
}

TEST(Transport, send_on_a_closed_connection_reports_not_open) {
  Recorder server;
  Recorder client;
  auto reactor = make_reactor(PollMode::kEpoll);
  auto listener = reactor->add_listener(listen_on_loopback(), server);
  ASSERT_TRUE(listener.ok());
  auto connector = reactor->add_connector(connector_to((*listener)->port()), client);
  ASSERT_TRUE(connector.ok());
  ASSERT_TRUE(pump(*reactor, [&] { return client.connected == 1; }));
  Connection* c = (*connector)->connection();
  c->close();
  EXPECT_EQ(c->state(), Connection::State::kDraining);
  EXPECT_EQ(c->send("late").status, SendStatus::kNotOpen);
  EXPECT_EQ(client.closed, 0);  // delivered by the loop, not from close()
  ASSERT_TRUE(pump(*reactor, [&] { return client.closed == 1; }));
  EXPECT_EQ(client.close_reasons[0], CloseReason::kLocal);
}

// A connector to a plain socket that does not read, with small kernel
// buffers on both sides, and `queued` bytes of pattern() stuck in the
// connection's outbound buffer. The sockets are not read by the reactor.
struct SlowReader {
  SlowReader(PollMode mode, std::size_t queued, std::int64_t close_timeout_ns = 2'000'000'000)
      : peer(8, 4096) {
    ReactorOptions options;
    options.poll_mode = mode;
    options.epoll_timeout_ms = 1;
    options.service_interval_ns = 50'000;
    options.close_timeout_ns = close_timeout_ns;
    reactor = std::move(Reactor::create(options)).value();
    ConnectorOptions co = connector_to(peer.port);
    co.socket.send_buffer_size = 4096;
    co.buffers.send_size = 4 << 20;
    auto connector = reactor->add_connector(co, client);
    EXPECT_TRUE(connector.ok());
    EXPECT_TRUE(pump(*reactor, [&] { return client.connected == 1; }));
    fd = ::accept(peer.fd, nullptr, nullptr);
    EXPECT_GE(fd, 0);
    c = (*connector)->connection();
    while (c->pending_send_bytes() < queued) {
      const std::string chunk = pattern(total, 16 * 1024);
      const SendResult r = c->send(chunk);
      EXPECT_TRUE(r.status == SendStatus::kSent || r.status == SendStatus::kQueued) << to_string(r.status);
      total += r.accepted();
    }
  }
  ~SlowReader() {
    if (fd >= 0) ::close(fd);
  }
  // Reads what is there (up to `max` bytes); false once the stream ended
  // (EOF or reset), with `eof`/`reset` saying which.
  bool read_some(std::size_t max) {
    char buf[65536];
    const ssize_t n = ::recv(fd, buf, std::min(max, sizeof buf), MSG_DONTWAIT);
    if (n > 0) received.append(buf, static_cast<std::size_t>(n));
    if (n == 0) eof = true;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) reset = true;
    return !eof && !reset;
  }

  RawListener peer;
  Recorder client;
  std::unique_ptr<Reactor> reactor;
  Connection* c = nullptr;
  int fd = -1;
  std::size_t total = 0;
  std::string received;
  bool eof = false, reset = false;
};

TEST_P(ReactorModes, close_delivers_every_queued_byte_to_a_slow_reader_then_closes) {
  SlowReader s(GetParam(), 512 * 1024);
  ASSERT_GT(s.c->pending_send_bytes(), 0u);
  s.c->close();
  EXPECT_EQ(s.c->send("late").status, SendStatus::kNotOpen);
  // The peer says something after the close: it is not delivered.
  ASSERT_EQ(::send(s.fd, "ignored", 7, MSG_NOSIGNAL), 7);
  const int data_events = s.client.data_events;
  // The peer takes its time before it reads, then reads in small pieces.
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(pump(*s.reactor, [&] { return std::chrono::steady_clock::now() - start > 200ms; }));
  EXPECT_EQ(s.client.closed, 0) << "closed while bytes were still queued";
  ASSERT_TRUE(pump(*s.reactor, [&] { return !s.read_some(8192); }));
  EXPECT_TRUE(s.eof) << "the stream must end with a FIN, not a reset";
  EXPECT_EQ(s.received.size(), s.total);
  EXPECT_TRUE(s.received == pattern(0, s.total));
  ASSERT_TRUE(pump(*s.reactor, [&] { return s.client.closed == 1; }));
  EXPECT_EQ(s.client.close_reasons[0], CloseReason::kLocal);
  EXPECT_EQ(s.client.data_events, data_events);
  EXPECT_EQ(s.reactor->stats().drain_timeouts, 0u);
  EXPECT_EQ(s.reactor->draining_connections(), 0u);
}

TEST_P(ReactorModes, close_gives_up_at_its_deadline_when_the_peer_never_reads) {
  SlowReader s(GetParam(), 256 * 1024, 100 * kMs);
  const auto start = std::chrono::steady_clock::now();
  s.c->close();
  ASSERT_TRUE(pump(*s.reactor, [&] { return s.client.closed == 1; }));
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_GE(elapsed, 100ms);
  EXPECT_LT(elapsed, 2000ms);
  EXPECT_EQ(s.client.close_reasons[0], CloseReason::kDrainTimeout);
  EXPECT_EQ(s.reactor->stats().drain_timeouts, 1u);
}

TEST_P(ReactorModes, abort_drops_queued_bytes_at_once) {
  SlowReader s(GetParam(), 256 * 1024);
  s.c->abort();
  EXPECT_EQ(s.c->state(), Connection::State::kClosing);
  (void)s.reactor->do_work();
  ASSERT_EQ(s.client.closed, 1);
  EXPECT_EQ(s.client.close_reasons[0], CloseReason::kAborted);
  while (s.read_some(65536)) {
  }
  EXPECT_LT(s.received.size(), s.total);
}

TEST(Transport, a_zero_close_timeout_makes_close_abortive) {
  SlowReader s(PollMode::kEpoll, 64 * 1024, 0);
  s.c->close();
  EXPECT_EQ(s.c->state(), Connection::State::kClosing);
  (void)s.reactor->do_work();
  ASSERT_EQ(s.client.closed, 1);
  EXPECT_EQ(s.client.close_reasons[0], CloseReason::kLocal);
}

TEST(Transport, socket_options_are_applied_to_connected_and_accepted_sockets) {
  Recorder server;
  Recorder client;
  auto reactor = make_reactor(PollMode::kEpoll);
  ListenerOptions lo = listen_on_loopback();
  lo.socket.tcp_nodelay = true;
  lo.socket.receive_buffer_size = 64 * 1024;
  auto listener = reactor->add_listener(lo, server);
  ASSERT_TRUE(listener.ok());
  ConnectorOptions co = connector_to((*listener)->port());
  co.socket.tcp_nodelay = true;
  co.socket.tcp_quickack = true;
  co.socket.send_buffer_size = 32 * 1024;
  co.socket.busy_poll_us = 50;
  auto connector = reactor->add_connector(co, client);
  ASSERT_TRUE(connector.ok());
  ASSERT_TRUE(pump(*reactor, [&] { return client.connected == 1 && server.accepted == 1; }));

  auto get = [](int fd, int level, int name) {
    int v = 0;
    socklen_t len = sizeof(v);
    EXPECT_EQ(::getsockopt(fd, level, name, &v, &len), 0);
    return v;
  };
  const int cfd = (*connector)->connection()->fd();
  const int sfd = server.last->fd();
  EXPECT_EQ(get(cfd, IPPROTO_TCP, TCP_NODELAY), 1);
  EXPECT_EQ(get(sfd, IPPROTO_TCP, TCP_NODELAY), 1);
  EXPECT_GE(get(cfd, SOL_SOCKET, SO_SNDBUF), 32 * 1024);
  EXPECT_GE(get(sfd, SOL_SOCKET, SO_RCVBUF), 64 * 1024);
  const OptionError error = (*connector)->connection()->option_error();
  if (!error) {
    EXPECT_EQ(get(cfd, SOL_SOCKET, SO_BUSY_POLL), 50);
  } else {
    // Without CAP_NET_ADMIN the kernel refuses SO_BUSY_POLL: reported, not fatal.
    EXPECT_STREQ(error.option, "SO_BUSY_POLL");
    EXPECT_EQ(error.error, EPERM);
  }
}

TEST(Transport, tick_handler_fires_at_its_interval) {
  struct Ticks : TickHandler {
    void on_tick(std::int64_t now) noexcept override { at.push_back(now); }
    std::vector<std::int64_t> at;
  } ticks;
  ticks.at.reserve(16);
  for (PollMode mode : {PollMode::kBusy, PollMode::kEpoll}) {
    ticks.at.clear();
    auto reactor = make_reactor(mode);
    const std::int64_t start = hft::core::monotonic_ns();
    reactor->set_tick_handler(&ticks, 5 * kMs);
    ASSERT_TRUE(pump(*reactor, [&] { return ticks.at.size() == 5; }));
    for (std::size_t i = 0; i < ticks.at.size(); ++i) {
      EXPECT_GE(ticks.at[i] - start, static_cast<std::int64_t>(i + 1) * 5 * kMs) << i;
    }
    EXPECT_EQ(reactor->stats().ticks, 5u);
  }
}

TEST(Transport, stop_wakes_a_blocked_epoll_wait_and_joins) {
  ReactorOptions options;
  options.poll_mode = PollMode::kEpoll;
  options.epoll_timeout_ms = 10'000;
  auto reactor = Reactor::create(options);
  ASSERT_TRUE(reactor.ok());
  ASSERT_TRUE((*reactor)->start().ok());
  EXPECT_FALSE((*reactor)->start().ok());  // already running
  std::this_thread::sleep_for(20ms);       // let it block in epoll_wait
  const auto t0 = std::chrono::steady_clock::now();
  (*reactor)->stop();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2000ms);
}

TEST(Transport, a_started_reactor_serves_connections_on_its_own_thread) {
  Recorder server(Recorder::Mode::kEcho);
  Recorder client;
  auto reactor = make_reactor(PollMode::kBusy);
  auto listener = reactor->add_listener(listen_on_loopback(), server);
  ASSERT_TRUE(listener.ok());
  const std::uint16_t port = (*listener)->port();
  ASSERT_TRUE(reactor->start().ok());
  // A blocking client outside the reactor.
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  ASSERT_EQ(::send(fd, "ping", 4, 0), 4);
  char buf[4];
  std::size_t got = 0;
  while (got < 4) {
    const ssize_t n = ::recv(fd, buf + got, 4 - got, 0);
    ASSERT_GT(n, 0);
    got += static_cast<std::size_t>(n);
  }
  EXPECT_EQ(std::string(buf, 4), "ping");
  ::close(fd);
  reactor->stop();
}

TEST(Transport, start_fails_when_pinning_to_a_missing_cpu) {
  ReactorOptions options;
  options.cpu = 100000;
  auto reactor = Reactor::create(options);
  ASSERT_TRUE(reactor.ok());
  const auto started = (*reactor)->start();
  ASSERT_FALSE(started.ok());
  EXPECT_NE(started.error().message.find("100000"), std::string::npos);
}

TEST(Transport, listening_on_a_busy_port_names_the_address_and_reason) {
  Recorder handler;
  auto reactor = make_reactor(PollMode::kEpoll);
  auto first = reactor->add_listener(listen_on_loopback(), handler);
  ASSERT_TRUE(first.ok());
  ListenerOptions again = listen_on_loopback();
  again.port = (*first)->port();
  auto second = reactor->add_listener(again, handler);
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.error().message.find("127.0.0.1:" + std::to_string(again.port)), std::string::npos)
      << second.error().message;
  EXPECT_NE(second.error().message.find("in use"), std::string::npos) << second.error().message;
}

TEST(Transport, endpoints_parse_and_bad_ones_are_named) {
  auto e = parse_endpoint("fix.venue.example:9876");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->host, "fix.venue.example");
  EXPECT_EQ(e->port, 9876);
  auto v6 = parse_endpoint("[::1]:5001");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->to_string(), "[::1]:5001");
  for (const char* bad : {"host", "host:", "host:0", "host:70000", "host:12x", ":123", "[::1]5001"}) {
    auto r = parse_endpoint(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.error().message.find(bad), std::string::npos) << r.error().message;
  }
}

TEST(Transport, an_ipv6_loopback_connection_works) {
  Recorder server(Recorder::Mode::kEcho);
  Recorder client;
  auto reactor = make_reactor(PollMode::kEpoll);
  ListenerOptions lo;
  lo.host = "::1";
  auto listener = reactor->add_listener(lo, server);
  if (!listener.ok()) GTEST_SKIP() << "no IPv6 loopback: " << listener.error().message;
  ConnectorOptions co;
  co.endpoints = {{"::1", (*listener)->port()}};
  auto connector = reactor->add_connector(co, client);
  ASSERT_TRUE(connector.ok());
  ASSERT_TRUE(pump(*reactor, [&] { return client.connected == 1; }));
  ASSERT_EQ((*connector)->connection()->send("six").status, SendStatus::kSent);
  ASSERT_TRUE(pump(*reactor, [&] { return client.data == "six"; }));
  EXPECT_EQ((*connector)->connection()->peer().substr(0, 5), "[::1]");
}

}  // namespace
