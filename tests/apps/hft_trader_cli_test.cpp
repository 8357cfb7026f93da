// Runs the built hft-trader against a real hft-venue and checks how a user
// configures it: a QuickFIX-style file (--config) and --set over the tool's
// own settings, with errors that name what the user wrote.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "support/temp_dir.hpp"

#if !defined(HFT_TRADER_EXE) || !defined(HFT_VENUE_EXE)
#error "HFT_TRADER_EXE and HFT_VENUE_EXE must name the binaries"
#endif

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Outcome {
  int code = -1;
  std::string out, err;
};

class HftTraderCli : public ::testing::Test {
 protected:
  Outcome run(const std::string& args) {
    const std::string out = tmp_.sub("stdout"), err = tmp_.sub("stderr");
    const std::string cmd = std::string(HFT_TRADER_EXE) + " " + args + " >" + out + " 2>" + err;
    const int status = std::system(cmd.c_str());
    Outcome r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = read_file(out);
    r.err = read_file(err);
    return r;
  }

  // Starts hft-venue on a free port; returns the port (0 on failure).
  int start_venue() {
    const std::string port_file = tmp_.sub("venue.port");
    venue_ = ::fork();
    if (venue_ == 0) {
      const std::string log = tmp_.sub("venue.log");
      std::freopen(log.c_str(), "w", stderr);
      ::execl(HFT_VENUE_EXE, HFT_VENUE_EXE, "--port", "0", "--port-file", port_file.c_str(), "--log-level",
              "warn", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    for (int i = 0; i < 200; ++i) {
      const std::string text = read_file(port_file);
      if (!text.empty()) return std::stoi(text);
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    return 0;
  }

  void TearDown() override {
    if (venue_ > 0) {
      ::kill(venue_, SIGTERM);
      int status = 0;
      ::waitpid(venue_, &status, 0);
    }
  }

  std::string write_config(int port, const std::string& more = {}) {
    const std::string path = tmp_.sub("trader.cfg");
    std::ofstream(path) << "[DEFAULT]\nConnectionType=initiator\nNonStopSession=Y\nUseDataDictionary=N\n"
                           "HeartBtInt=30\nReconnectInterval=1\n\n[SESSION]\nBeginString=FIX.4.4\n"
                           "SenderCompID=CLIENT\nTargetCompID=VENUE\nSocketConnectHost=127.0.0.1\n"
                           "SocketConnectPort="
                        << port << "\n"
                        << more;
    return path;
  }

  hft::test::TempDir tmp_{"hft_trader_cli"};
  pid_t venue_ = -1;
};

TEST_F(HftTraderCli, sends_orders_with_the_session_of_a_config_file) {
  const int port = start_venue();
  ASSERT_GT(port, 0) << read_file(tmp_.sub("venue.log"));
  const Outcome r = run("--config " + write_config(port) + " --orders 50 --rate 0 --timeout 20");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("orders=50 sent=50 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("acked=50 "), std::string::npos) << r.out;
}

TEST_F(HftTraderCli, set_wins_over_the_config_file) {
  // The file's session says HeartBtInt=30; --set replaces it (0 is refused
  // for an initiator, and the error names the --set the user wrote).
  const Outcome r = run("--config " + write_config(9) + " --set HeartBtInt=0 --orders 1");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--set HeartBtInt=0: HeartBtInt: must be greater than 0"), std::string::npos) << r.err;
}

TEST_F(HftTraderCli, set_wins_over_the_tools_own_session_keys) {
  // Without --config the tool writes ReconnectInterval=1 and
  // SocketConnectTimeoutMs=2000 itself; a --set of either is the user's.
  const Outcome bad = run("--port 9 --set SocketConnectTimeoutMs=abc --orders 1");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("--set SocketConnectTimeoutMs=abc: SocketConnectTimeoutMs:"), std::string::npos)
      << bad.err;

  const int port = start_venue();
  ASSERT_GT(port, 0);
  const Outcome ok =
      run("--port " + std::to_string(port) +
          " --set SocketConnectTimeoutMs=500 --set ReconnectInterval=3 --orders 10 --rate 0 --timeout 20");
  EXPECT_EQ(ok.code, 0) << ok.out << ok.err;
}

TEST_F(HftTraderCli, config_excludes_the_session_flags_and_port_is_required_without_it) {
  const Outcome both = run("--config " + write_config(9) + " --port 9 --orders 1");
  EXPECT_NE(both.code, 0);
  EXPECT_NE(both.err.find("excludes"), std::string::npos) << both.err;

  const Outcome neither = run("--orders 1");
  EXPECT_EQ(neither.code, 2);
  EXPECT_NE(neither.err.find("--port is required (or --config FILE)"), std::string::npos) << neither.err;
}

TEST_F(HftTraderCli, a_bad_option_value_is_named_by_its_option_not_by_a_generated_line) {
  const Outcome port = run("--port 70000 --orders 1");
  EXPECT_EQ(port.code, 2);
  EXPECT_NE(port.err.find("hft-trader: --port 70000: SocketConnectPort: bad value \"70000\""), std::string::npos)
      << port.err;
  EXPECT_EQ(port.err.find("<command line>"), std::string::npos) << port.err;
  const Outcome hb = run("--port 9 --heartbeat 100000 --orders 1");
  EXPECT_EQ(hb.code, 2);
  EXPECT_NE(hb.err.find("--heartbeat 100000: HeartBtInt: bad value"), std::string::npos) << hb.err;
  const Outcome set = run("--port 9 --set JournalSegmentSize=1k --orders 1");
  EXPECT_EQ(set.code, 2);
  EXPECT_NE(set.err.find("--set JournalSegmentSize=1k: JournalSegmentSize:"), std::string::npos) << set.err;
  // hft-venue too.
  const std::string err = tmp_.sub("venue.err");
  const int status = std::system((std::string(HFT_VENUE_EXE) + " --port 70000 2>" + err).c_str());
  EXPECT_EQ(WEXITSTATUS(status), 2);
  const std::string venue = read_file(err);
  EXPECT_NE(venue.find("hft-venue: --port 70000: SocketAcceptPort: bad value \"70000\""), std::string::npos)
      << venue;
}

TEST_F(HftTraderCli, a_config_without_an_initiator_session_is_refused) {
  const std::string path = tmp_.sub("acceptor.cfg");
  std::ofstream(path) << "[DEFAULT]\nConnectionType=acceptor\nNonStopSession=Y\nUseDataDictionary=N\n"
                         "[SESSION]\nBeginString=FIX.4.4\nSenderCompID=VENUE\nTargetCompID=CLIENT\n"
                         "SocketAcceptPort=9\n";
  const Outcome r = run("--config " + path + " --orders 1");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find(path + ": no initiator session"), std::string::npos) << r.err;
}

}  // namespace
