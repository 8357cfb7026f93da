// Many sessions per engine: an acceptor with 150 journaled sessions and an
// initiator with 80, both in this process. A session's store holds only its
// sequence numbers until it journals a message, every configured session can
// be connected at once without setting MaxConnections, the journal service
// serves all of them (more than 64 journals), and a start-up that fails
// leaves nothing half-created.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <sstream>
#include <string>

#include "engine/loopback.hpp"
#include "engine/peer_support.hpp"
#include "hft/engine/engine.hpp"
#include "support/temp_dir.hpp"

namespace hft::engine {
namespace {

namespace fs = std::filesystem;

struct Quiet final : session::Application {
  session::Decision from_app(session::Session&, const codec::MessageView&) noexcept override {
    return session::Decision::accept();
  }
};

std::string acceptor_config(const std::string& store, int sessions, int port = 0) {
  std::ostringstream s;
  s << "[DEFAULT]\nConnectionType=acceptor\nBeginString=FIX.4.4\nSenderCompID=VENUE\nHeartBtInt=30\n"
    << "NonStopSession=Y\nUseDataDictionary=N\nSocketAcceptPort=" << port << "\nFileStorePath=" << store
    << "\nLogLevel=error\n";
  for (int i = 1; i <= sessions; ++i) s << "[SESSION]\nTargetCompID=C" << i << "\n";
  return s.str();
}

std::string initiator_config(const std::string& store, int sessions, int port) {
  std::ostringstream s;
  s << "[DEFAULT]\nConnectionType=initiator\nBeginString=FIX.4.4\nTargetCompID=VENUE\nHeartBtInt=30\n"
    << "NonStopSession=Y\nUseDataDictionary=N\nSocketConnectHost=127.0.0.1\nSocketConnectPort=" << port
    << "\nFileStorePath=" << store << "\nReconnectInterval=1\nLogLevel=error\n";
  for (int i = 1; i <= sessions; ++i) s << "[SESSION]\nSenderCompID=C" << i << "\n";
  return s.str();
}

std::set<std::string> entries(const fs::path& dir) {
  std::set<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) names.insert(e.path().filename().string());
  return names;
}

TEST(ManySessions, sessions_journal_nothing_until_they_log_on_and_all_can_be_connected_at_once) {
  hft::test::TempDir dir;
  const fs::path venue_store = fs::path(dir.path()) / "venue";
  const fs::path client_store = fs::path(dir.path()) / "client";
  Quiet venue_app, client_app;
  auto venue = hft::test::make_engine(acceptor_config(venue_store, 150), venue_app);
  ASSERT_TRUE(venue);
  ASSERT_EQ(venue->session_count(), 150u);
  // Before any Logon: one directory per session, holding its sequence numbers only.
  EXPECT_EQ(entries(venue_store).size(), 150u);
  EXPECT_EQ(entries(venue_store / "FIX.4.4-VENUE-C77"), std::set<std::string>{"seqnums.dat"});

  // 80 initiators: more connections than the old fixed default of 64, and
  // 2 x (150 + 80) journals for the two engines' services.
  auto client = hft::test::make_engine(initiator_config(client_store, 80, venue->listen_port()), client_app);
  ASSERT_TRUE(client);
  auto all_on = [&] {
    for (std::size_t i = 0; i < client->session_count(); ++i)
      if (!client->session(i).is_logged_on()) return false;
    return true;
  };
  ASSERT_TRUE(test::poll_until(*venue, *client, all_on, 60'000'000'000));
  EXPECT_EQ(venue->stats().max_connections_refused, 0u);
  std::size_t venue_on = 0;
  for (std::size_t i = 0; i < venue->session_count(); ++i) venue_on += venue->session(i).is_logged_on() ? 1 : 0;
  EXPECT_EQ(venue_on, 80u);

  // Sessions that logged on journaled their Logons (one small first segment
  // per direction); the others still hold nothing.
  const fs::path on = venue_store / "FIX.4.4-VENUE-C80";
  EXPECT_EQ(entries(on), (std::set<std::string>{"inbound", "outbound", "seqnums.dat"}));
  EXPECT_EQ(entries(on / "outbound"), std::set<std::string>{"00000001.seg"});
  EXPECT_EQ(fs::file_size(on / "outbound" / "00000001.seg"), 256u * 1024);  // JournalInitialSegmentSize
  EXPECT_EQ(entries(venue_store / "FIX.4.4-VENUE-C81"), std::set<std::string>{"seqnums.dat"});
  EXPECT_EQ(entries(client_store / "FIX.4.4-C1-VENUE" / "inbound"), std::set<std::string>{"00000001.seg"});
  client->logout_all(5'000'000'000);
}

TEST(ManySessions, a_start_up_that_fails_removes_the_stores_it_created_and_keeps_the_ones_it_found) {
  hft::test::TempDir dir;
  const fs::path store = fs::path(dir.path()) / "store";
  {
    // An earlier run of session C1 left its store.
    Quiet app;
    auto earlier = hft::test::make_engine(acceptor_config(store, 1), app);
    ASSERT_TRUE(earlier);
  }
  ASSERT_EQ(entries(store), std::set<std::string>{"FIX.4.4-VENUE-C1"});
  // A port that is taken: the last session's listener cannot bind, after
  // every store was opened.
  const int taken = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(taken, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(taken, 1), 0);
  socklen_t len = sizeof a;
  ::getsockname(taken, reinterpret_cast<sockaddr*>(&a), &len);
  std::string text = acceptor_config(store.string(), 40);
  text += "[SESSION]\nTargetCompID=LAST\nSocketAcceptHost=127.0.0.1\nSocketAcceptPort=" +
          std::to_string(ntohs(a.sin_port)) + "\n";
  auto config = Config::parse(text, "test.cfg");
  ASSERT_TRUE(config) << config.error().message;
  Quiet app;
  auto failed = Engine::create(*config, app);
  ::close(taken);
  ASSERT_FALSE(failed);
  EXPECT_NE(failed.error().message.find("SocketAcceptPort"), std::string::npos) << failed.error().message;
  EXPECT_EQ(entries(store), std::set<std::string>{"FIX.4.4-VENUE-C1"});
  EXPECT_EQ(entries(store / "FIX.4.4-VENUE-C1"), std::set<std::string>{"seqnums.dat"});
}

}  // namespace
}  // namespace hft::engine
