// Connection events an initiator's user must see: a failed connect reaches
// the Application (on_connect_failed, with the endpoint and errno) and the
// log (WARN with the error's text), instead of only "no logon".
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "hft/engine/engine.hpp"
#include "peer_support.hpp"

namespace {

// A loopback port that was free a moment ago: nothing listens on it.
int closed_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

class RecordingApp final : public hft::session::Application {
 public:
  void on_connect_failed(hft::session::Session&, std::string_view endpoint, int error) noexcept override {
    endpoints.emplace_back(endpoint);
    errors.push_back(error);
  }
  std::vector<std::string> endpoints;
  std::vector<int> errors;
};

using hft::test::Lines;

TEST(ConnectionEvents, a_failed_connect_reaches_the_application_and_the_log_with_its_errno) {
  const int port = closed_port();
  RecordingApp app;
  Lines lines;
  auto engine = hft::test::make_engine(
      "[DEFAULT]\nNonStopSession=Y\nUseDataDictionary=N\nReconnectInterval=1\n\n[SESSION]\n"
      "ConnectionType=initiator\nBeginString=FIX.4.4\nSenderCompID=CLIENT\nTargetCompID=VENUE\n"
      "SocketConnectHost=127.0.0.1\nSocketConnectPort=" +
          std::to_string(port) + "\nHeartBtInt=30\n",
      app, &lines);
  ASSERT_TRUE(engine);
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (app.errors.size() < 2 && std::chrono::steady_clock::now() < end) {
    engine->poll();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_GE(app.errors.size(), 2u) << "a first attempt and one retry after ReconnectInterval";
  EXPECT_EQ(app.errors[0], ECONNREFUSED);
  EXPECT_EQ(app.endpoints[0], "127.0.0.1:" + std::to_string(port));
  EXPECT_FALSE(lines.containing("Connection to 127.0.0.1:" + std::to_string(port) + " failed: Connection refused")
                   .empty());
}

}  // namespace
