// hft-admin end to end: the real binary against an engine in this process
// (a venue with the admin endpoint on port 0 and a client logged on to it),
// polled on the test's thread while hft-admin runs.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <future>
#include <sstream>
#include <string>
#include <thread>

#include "engine/loopback.hpp"
#include "engine/peer_support.hpp"
#include "hft/engine/engine.hpp"
#include "support/temp_dir.hpp"

namespace hft::engine {
namespace {

struct Outcome {
  int code = -1;
  std::string out, err;
};

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

struct Quiet final : session::Application {};

class HftAdminCli : public ::testing::Test {
 protected:
  void SetUp() override {
    {
      std::ofstream(dir.sub("token")) << "cli-token\n";
    }
    ::chmod(dir.sub("token").c_str(), 0600);
    std::ostringstream v;
    v << "[DEFAULT]\nConnectionType=acceptor\nBeginString=FIX.4.4\nSenderCompID=VENUE\nHeartBtInt=30\n"
      << "NonStopSession=Y\nUseDataDictionary=N\nSocketAcceptPort=0\nFileStorePath=" << dir.sub("venue")
      << "\nLogLevel=error\nHttpAcceptPort=0\nHttpAdminTokenFile=" << dir.sub("token")
      << "\n[SESSION]\nTargetCompID=CLIENT\n";
    venue = hft::test::make_engine(v.str(), venue_app);
    ASSERT_TRUE(venue);
    std::ostringstream c;
    c << "[DEFAULT]\nConnectionType=initiator\nBeginString=FIX.4.4\nSenderCompID=CLIENT\nTargetCompID=VENUE\n"
      << "HeartBtInt=30\nNonStopSession=Y\nUseDataDictionary=N\nSocketConnectHost=127.0.0.1\nSocketConnectPort="
      << venue->listen_port() << "\nReconnectInterval=1\nLogLevel=error\n[SESSION]\n";
    client = hft::test::make_engine(c.str(), client_app);
    ASSERT_TRUE(client);
    ASSERT_TRUE(test::poll_until(*venue, *client, [&] { return venue->session(0).is_logged_on(); }));
  }

  // hft-admin --port <the venue's> `args`, both engines polled meanwhile.
  Outcome run(const std::string& args) {
    const std::string out = dir.sub("stdout"), err = dir.sub("stderr");
    const std::string cmd = std::string(HFT_ADMIN_EXE) + " --port " + std::to_string(venue->admin_port()) + " " +
                            args + " >" + out + " 2>" + err;
    auto status = std::async(std::launch::async, [cmd] { return std::system(cmd.c_str()); });
    while (status.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
      venue->poll();
      client->poll();
    }
    const int s = status.get();
    return Outcome{WIFEXITED(s) ? WEXITSTATUS(s) : 128, slurp(out), slurp(err)};
  }

  hft::test::TempDir dir;
  Quiet venue_app, client_app;
  std::unique_ptr<Engine> venue, client;
};

TEST_F(HftAdminCli, lists_sessions_and_sets_sequence_numbers_with_the_token) {
  const Outcome list = run("sessions");
  ASSERT_EQ(list.code, 0) << list.err;
  EXPECT_NE(list.out.find("SESSION"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("FIX.4.4:VENUE->CLIENT  acceptor  logged_on"), std::string::npos) << list.out;

  const Outcome set = run("--token-file " + dir.sub("token") + " set-seqnum 0 --sender 42");
  ASSERT_EQ(set.code, 0) << set.err;
  EXPECT_EQ(set.out, "FIX.4.4:VENUE->CLIENT: next sender 42, next target 2\n") << "named as the engine names it";
  EXPECT_EQ(venue->session(0).next_sender_seq(), 42u);

  const Outcome reset = run("--token-file " + dir.sub("token") + " set-seqnum 'FIX.4.4:VENUE->CLIENT' --target 2");
  ASSERT_EQ(reset.code, 0) << reset.err;
  const Outcome one = run("--json session 0");
  ASSERT_EQ(one.code, 0) << one.err;
  EXPECT_NE(one.out.find("\"next_sender_seq\": 42"), std::string::npos) << one.out;

  const Outcome metrics = run("metrics");
  ASSERT_EQ(metrics.code, 0) << metrics.err;
  EXPECT_NE(metrics.out.find("hft_session_next_sender_seq_num{session=\"FIX.4.4:VENUE->CLIENT\"} 42"),
            std::string::npos);
}

TEST_F(HftAdminCli, a_command_without_the_token_fails_with_the_servers_error) {
  const Outcome r = run("disconnect 0");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("hft-admin: 401: authentication required"), std::string::npos) << r.err;
  EXPECT_TRUE(venue->session(0).is_connected());
  const Outcome unknown = run("--token-file " + dir.sub("token") + " logout FIX.4.4:VENUE-\\>NOBODY");
  EXPECT_EQ(unknown.code, 1);
  EXPECT_NE(unknown.err.find("hft-admin: 404: no such session"), std::string::npos) << unknown.err;
}

#ifdef HFT_VENUE_EXE
// hft-venue --http-port: a running venue administered by hft-admin.
TEST(HftAdminVenue, a_running_hft_venue_serves_the_endpoint_it_is_given) {
  hft::test::TempDir dir;
  const std::string port_file = dir.sub("http.port"), token = dir.sub("token");
  {
    std::ofstream(token) << "venue-token\n";
  }
  ::chmod(token.c_str(), 0600);
  const pid_t venue = ::fork();
  ASSERT_GE(venue, 0);
  if (venue == 0) {
    std::freopen(dir.sub("venue.log").c_str(), "w", stderr);
    ::execl(HFT_VENUE_EXE, HFT_VENUE_EXE, "--port", "0", "--http-port", "0", "--http-port-file", port_file.c_str(),
            "--http-token-file", token.c_str(), "--http-audit-file", dir.sub("audit").c_str(),
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  std::string port;
  for (int i = 0; i < 400 && port.empty(); ++i) {
    port = slurp(port_file);
    if (port.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  ASSERT_FALSE(port.empty()) << slurp(dir.sub("venue.log"));
  port.pop_back();
  const std::string admin = std::string(HFT_ADMIN_EXE) + " --port " + port + " ";
  const std::string out = dir.sub("out");
  EXPECT_EQ(std::system((admin + "sessions > " + out).c_str()), 0);
  EXPECT_NE(slurp(out).find("0  FIX.4.4:VENUE->CLIENT  acceptor  disconnected  yes"), std::string::npos) << slurp(out);
  EXPECT_EQ(std::system((admin + "--token-file " + token + " disable 0 > " + out).c_str()), 0);
  EXPECT_EQ(slurp(out), "FIX.4.4:VENUE->CLIENT: disabled\n");
  EXPECT_NE(slurp(dir.sub("audit")).find("\"command\":\"disable\""), std::string::npos);
  ::kill(venue, SIGTERM);
  int status = 0;
  ::waitpid(venue, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "stops cleanly with the endpoint running";
}
#endif

}  // namespace
}  // namespace hft::engine
