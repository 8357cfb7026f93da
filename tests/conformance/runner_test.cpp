// Tests of hft-conformance's script handling: placeholders, BodyLength and
// CheckSum completion, framing, comparison, parsing, and whole scripts run
// against a scripted in-process acceptor.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include "compare.hpp"
#include "fix_text.hpp"
#include "runner.hpp"
#include "script.hpp"

namespace hft::conformance {
namespace {

// Script text is written with '|' for SOH, as in the reports.
std::string soh(std::string text) {
  for (char& c : text) {
    if (c == '|') c = kSoh;
  }
  return text;
}

std::chrono::system_clock::time_point at_utc(int hour, int minute, int second) {
  // 2024-03-05 is 19787 days after the epoch.
  return std::chrono::system_clock::time_point(std::chrono::hours(24 * 19787) + std::chrono::hours(hour) +
                                                std::chrono::minutes(minute) + std::chrono::seconds(second));
}

TEST(SubstituteTime, replaces_time_and_offsets_in_utc) {
  const auto now = at_utc(23, 59, 58);
  EXPECT_EQ(substitute_time("52=<TIME>|122=<TIME-1>|x=<TIME+3>", now),
            "52=20240305-23:59:58|122=20240305-23:59:57|x=20240306-00:00:01");
}

TEST(SubstituteTime, leaves_unknown_placeholders_alone) {
  EXPECT_EQ(substitute_time("a=<TIMEX>|b=<TIME+>|c=<TIME", at_utc(0, 0, 0)), "a=<TIMEX>|b=<TIME+>|c=<TIME");
}

TEST(CompleteMessage, inserts_body_length_and_appends_checksum) {
  // The same Logon QuickFIX accepted on the wire with these values.
  const std::string in = soh("8=FIX.4.4|35=A|34=1|49=TW44|52=20261130-15:48:46|56=ISLD|98=0|108=30|");
  EXPECT_EQ(show(complete_message(in)),
            "8=FIX.4.4|9=59|35=A|34=1|49=TW44|52=20261130-15:48:46|56=ISLD|98=0|108=30|10=128|");
}

TEST(CompleteMessage, keeps_deliberately_wrong_length_and_checksum) {
  const std::string in = soh("8=FIX.4.4|9=30|35=0|34=2|10=256|");
  EXPECT_EQ(complete_message(in), in);
}

TEST(CompleteMessage, computes_the_real_body_length_when_only_checksum_is_given) {
  EXPECT_EQ(show(complete_message(soh("8=FIX.4.4|35=0|34=2|10=256|"))), "8=FIX.4.4|9=10|35=0|34=2|10=256|");
}

TEST(CompleteMessage, appends_checksum_when_only_body_length_is_given) {
  const std::string out = complete_message(soh("8=FIX.4.4|9=10|35=0|34=2|"));
  EXPECT_EQ(verify_checksum(out), "");
  EXPECT_EQ(show(out).substr(0, 24), "8=FIX.4.4|9=10|35=0|34=2");
}

TEST(CompleteMessage, leaves_a_message_not_starting_with_begin_string_unchanged) {
  const std::string in = soh("35=0|8=FIX.4.4|9=29|34=2|");
  EXPECT_EQ(complete_message(in), in);
}

TEST(SplitFields, keeps_empty_values_and_drops_the_final_separator) {
  const std::string message = soh("8=FIX.4.4|56=|garbage|10=001|");  // fields are views into it
  const auto fields = split_fields(message);
  ASSERT_EQ(fields.size(), 4u);
  EXPECT_EQ(fields[1].tag, "56");
  EXPECT_EQ(fields[1].value, "");
  EXPECT_TRUE(fields[1].has_equals);
  EXPECT_EQ(fields[2].tag, "garbage");
  EXPECT_FALSE(fields[2].has_equals);
}

TEST(FrameMessage, frames_one_message_out_of_two) {
  const std::string one = complete_message(soh("8=FIX.4.4|35=0|34=2|"));
  const std::string two = complete_message(soh("8=FIX.4.4|35=0|34=3|"));
  const FrameResult r = frame_message(one + two);
  EXPECT_EQ(r.status, FrameStatus::kComplete);
  EXPECT_EQ(r.length, one.size());
}

TEST(FrameMessage, needs_more_bytes_for_a_partial_message) {
  const std::string one = complete_message(soh("8=FIX.4.4|35=0|34=2|"));
  for (std::size_t n = 0; n < one.size(); ++n) {
    EXPECT_EQ(frame_message(std::string_view(one).substr(0, n)).status, FrameStatus::kNeedMore) << n;
  }
}

TEST(FrameMessage, rejects_a_body_length_that_misses_the_checksum_field) {
  const FrameResult r = frame_message(soh("8=FIX.4.4|9=5|35=0|34=2|10=000|"));
  EXPECT_EQ(r.status, FrameStatus::kGarbled);
  EXPECT_NE(r.error.find("BodyLength 5"), std::string::npos);
}

TEST(FrameMessage, rejects_bytes_that_do_not_start_with_begin_string) {
  EXPECT_EQ(frame_message("garbage").status, FrameStatus::kGarbled);
}

TEST(VerifyChecksum, reports_a_wrong_checksum) {
  std::string m = complete_message(soh("8=FIX.4.4|35=0|34=2|"));
  EXPECT_EQ(verify_checksum(m), "");
  m[m.size() - 2] = m[m.size() - 2] == '0' ? '1' : '0';
  EXPECT_NE(verify_checksum(m), "");
}

class CompareTest : public ::testing::Test {
 protected:
  FieldPatterns patterns_ = FieldPatterns::defaults();
};

TEST_F(CompareTest, matches_pattern_fields_whatever_their_value) {
  EXPECT_FALSE(compare_messages(soh("8=FIX.4.4|52=00000000-00:00:00.000|10=0|"),
                                soh("8=FIX.4.4|52=20240305-10:11:12.345|10=123|"), patterns_));
  EXPECT_FALSE(compare_messages(soh("8=FIX.4.4|52=x|"), soh("8=FIX.4.4|52=20240305-10:11:12|"), patterns_));
}

TEST_F(CompareTest, matches_unanchored_so_millisecond_orig_sending_time_passes) {
  EXPECT_FALSE(compare_messages(soh("122=00000000-00:00:00|"), soh("122=20240305-10:11:12.345|"), patterns_));
}

TEST_F(CompareTest, rejects_a_pattern_field_that_does_not_match) {
  const auto d = compare_messages(soh("52=0|"), soh("52=2024-03-05|"), patterns_);
  ASSERT_TRUE(d);
  EXPECT_NE(d->description.find("does not match"), std::string::npos);
}

TEST_F(CompareTest, reports_the_first_differing_value) {
  const auto d = compare_messages(soh("35=3|58=Invalid tag number|371=5|"),
                                  soh("35=3|58=Invalid tag number|371=6|"), patterns_);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->field_index, 2u);
  EXPECT_EQ(d->description, "field 3 (tag 371): expected '5' but received '6'");
}

TEST_F(CompareTest, requires_the_same_tag_order) {
  const auto d = compare_messages(soh("35=D|11=a|21=1|"), soh("35=D|21=1|11=a|"), patterns_);
  ASSERT_TRUE(d);
  EXPECT_NE(d->description.find("expected tag 11"), std::string::npos);
}

TEST_F(CompareTest, requires_the_same_field_count) {
  const auto d = compare_messages(soh("35=0|"), soh("35=0|112=x|"), patterns_);
  ASSERT_TRUE(d);
  EXPECT_NE(d->description.find("expected 1 fields, received 2"), std::string::npos);
  EXPECT_NE(d->description.find("extra field 112=x"), std::string::npos);
}

TEST_F(CompareTest, reports_the_cause_before_the_body_length_it_changes) {
  const auto d = compare_messages(soh("8=FIX.4.4|9=20|35=j|380=3|10=0|"),
                                  soh("8=FIX.4.4|9=27|35=j|380=3|1137=9|10=001|"), patterns_);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->description,
            "expected 5 fields, received 6; first difference at field 5: expected tag 10 (10=0) but received "
            "tag 1137 (1137=9) (and field 2 (tag 9): expected '20' but received '27')");
}

TEST_F(CompareTest, reports_a_wrong_body_length_alone) {
  const auto d = compare_messages(soh("8=FIX.4.4|9=20|35=0|"), soh("8=FIX.4.4|9=21|35=0|"), patterns_);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->description, "field 2 (tag 9): expected '20' but received '21'");
}

TEST(FieldPatterns, names_file_and_line_of_a_bad_entry) {
  try {
    (void)FieldPatterns::parse("10=\\d{3}\nnot a pattern\n", "fields.fmt");
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("fields.fmt:2"), std::string::npos);
  }
}

TEST(ParseScript, reads_commands_connections_and_skips_comments) {
  const Script s = parse_script(soh("# c\r\n\niCONNECT\nI2,8=FIX.4.4|35=0|\r\ne2,DISCONNECT\nE8=X|\n"), "t.def");
  ASSERT_TRUE(s.error.empty()) << s.error;
  ASSERT_EQ(s.commands.size(), 4u);
  EXPECT_EQ(s.commands[0].kind, CommandKind::kConnect);
  EXPECT_EQ(s.commands[0].line, 3);
  EXPECT_EQ(s.commands[1].kind, CommandKind::kSend);
  EXPECT_EQ(s.commands[1].connection, 2);
  EXPECT_EQ(s.commands[1].body, soh("8=FIX.4.4|35=0|"));
  EXPECT_EQ(s.commands[2].kind, CommandKind::kExpectDisconnect);
  EXPECT_EQ(s.commands[2].connection, 2);
  EXPECT_EQ(s.commands[3].connection, 1);
}

TEST(ParseScript, reports_the_line_of_a_syntax_error) {
  const Script s = parse_script("iCONNECT\niCONNCT\n", "t.def");
  EXPECT_EQ(s.error_line, 2);
  EXPECT_FALSE(s.error.empty());
}

// A one-connection acceptor on a loopback port whose behaviour is a function
// of the accepted socket.
class FakeAcceptor {
 public:
  explicit FakeAcceptor(std::function<void(int)> handler) : handler_(std::move(handler)) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    EXPECT_EQ(::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(::listen(listen_fd_, 4), 0);
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] {
      const int fd = ::accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) return;
      handler_(fd);
      ::close(fd);
    });
  }
  ~FakeAcceptor() {
    ::shutdown(listen_fd_, SHUT_RDWR);
    thread_.join();
    ::close(listen_fd_);
  }
  [[nodiscard]] std::uint16_t port() const { return port_; }

 private:
  std::function<void(int)> handler_;
  int listen_fd_ = -1;
  std::uint16_t port_ = 0;
  std::thread thread_;
};

// Reads one framed message (or returns "" at EOF / after 5 s).
std::string read_message(int fd, std::string& inbox) {
  for (;;) {
    const FrameResult r = frame_message(inbox);
    if (r.status == FrameStatus::kComplete) {
      std::string m = inbox.substr(0, r.length);
      inbox.erase(0, r.length);
      return m;
    }
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 5000) <= 0) return {};
    char buf[1024];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return {};
    inbox.append(buf, static_cast<std::size_t>(n));
  }
}

void send_text(int fd, const std::string& pipe_text) {
  const std::string m = complete_message(
      substitute_time(soh(pipe_text), std::chrono::system_clock::now()));
  ASSERT_EQ(::send(fd, m.data(), m.size(), MSG_NOSIGNAL), static_cast<ssize_t>(m.size()));
}

RunnerOptions options_for(const FakeAcceptor& acceptor, const FieldPatterns& patterns) {
  RunnerOptions o;
  o.port = acceptor.port();
  o.timeout_ms = 1000;
  o.close_wait_ms = 1000;
  o.patterns = &patterns;
  return o;
}

const char* const kLogonScript =
    "iCONNECT\n"
    "I8=FIX.4.4|35=A|34=1|49=TW44|52=<TIME>|56=ISLD|98=0|108=30|\n"
    "E8=FIX.4.4|9=63|35=A|34=1|49=ISLD|52=00000000-00:00:00.000|56=TW44|98=0|108=30|10=0|\n";
const char* const kLogonReply = "8=FIX.4.4|35=A|34=1|49=ISLD|52=20240305-10:11:12.345|56=TW44|98=0|108=30|";

TEST(RunScript, passes_when_the_acceptor_answers_as_scripted) {
  const FieldPatterns patterns = FieldPatterns::defaults();
  FakeAcceptor acceptor([&](int fd) {
    std::string inbox;
    EXPECT_NE(read_message(fd, inbox).find(soh("|35=A|")), std::string::npos);
    send_text(fd, kLogonReply);
    EXPECT_NE(read_message(fd, inbox).find(soh("|35=5|")), std::string::npos);
    send_text(fd, "8=FIX.4.4|35=5|34=2|49=ISLD|52=20240305-10:11:13.000|56=TW44|");
  });
  const Script script = parse_script(
      soh(std::string(kLogonScript) +
          "I8=FIX.4.4|35=5|34=2|49=TW44|52=<TIME>|56=ISLD|\n"
          "E8=FIX.4.4|9=51|35=5|34=2|49=ISLD|52=00000000-00:00:00.000|56=TW44|10=0|\n"
          "eDISCONNECT\n"),
      "pass.def");
  const ScriptResult r = run_script(script, options_for(acceptor, patterns));
  EXPECT_TRUE(r.passed) << r.line << ": " << r.reason;
}

TEST(RunScript, reports_line_and_difference_when_a_value_differs) {
  const FieldPatterns patterns = FieldPatterns::defaults();
  FakeAcceptor acceptor([&](int fd) {
    std::string inbox;
    read_message(fd, inbox);
    send_text(fd, "8=FIX.4.4|35=A|34=1|49=ISLD|52=20240305-10:11:12.345|56=TW44|98=0|108=31|");
    read_message(fd, inbox);
  });
  const ScriptResult r = run_script(parse_script(soh(kLogonScript), "diff.def"), options_for(acceptor, patterns));
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.line, 3);
  EXPECT_EQ(r.reason, "field 9 (tag 108): expected '30' but received '31'");
  EXPECT_NE(r.received.find("|108=31|"), std::string::npos);
}

TEST(RunScript, fails_on_a_received_message_with_a_wrong_checksum) {
  const FieldPatterns patterns = FieldPatterns::defaults();
  FakeAcceptor acceptor([&](int fd) {
    std::string inbox;
    read_message(fd, inbox);
    std::string bad = complete_message(soh(kLogonReply));
    bad[bad.size() - 2] = bad[bad.size() - 2] == '0' ? '1' : '0';
    ::send(fd, bad.data(), bad.size(), MSG_NOSIGNAL);
    read_message(fd, inbox);
  });
  const ScriptResult r = run_script(parse_script(soh(kLogonScript), "sum.def"), options_for(acceptor, patterns));
  EXPECT_FALSE(r.passed);
  EXPECT_NE(r.reason.find("CheckSum"), std::string::npos);
}

TEST(RunScript, fails_when_the_acceptor_sends_data_instead_of_disconnecting) {
  const FieldPatterns patterns = FieldPatterns::defaults();
  FakeAcceptor acceptor([&](int fd) {
    std::string inbox;
    read_message(fd, inbox);
    send_text(fd, kLogonReply);
    send_text(fd, "8=FIX.4.4|35=5|34=2|49=ISLD|52=20240305-10:11:13.000|56=TW44|");
    read_message(fd, inbox);
  });
  const ScriptResult r =
      run_script(parse_script(soh(std::string(kLogonScript) + "eDISCONNECT\n"), "data.def"),
                 options_for(acceptor, patterns));
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.line, 4);
  EXPECT_NE(r.reason.find("sent data"), std::string::npos);
}

TEST(RunScript, fails_when_the_acceptor_keeps_the_connection_open) {
  const FieldPatterns patterns = FieldPatterns::defaults();
  FakeAcceptor acceptor([&](int fd) {
    std::string inbox;
    read_message(fd, inbox);
    send_text(fd, kLogonReply);
    read_message(fd, inbox);  // returns at the driver's close
  });
  RunnerOptions o = options_for(acceptor, patterns);
  o.timeout_ms = 200;
  const auto start = std::chrono::steady_clock::now();
  const ScriptResult r = run_script(parse_script(soh(std::string(kLogonScript) + "eDISCONNECT\n"), "open.def"), o);
  EXPECT_FALSE(r.passed);
  EXPECT_NE(r.reason.find("within 200 ms"), std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
}

TEST(RunScript, waits_for_a_heartbeat_by_the_logon_heartbeat_interval) {
  const FieldPatterns patterns = FieldPatterns::defaults();
  FakeAcceptor acceptor([&](int fd) {
    std::string inbox;
    read_message(fd, inbox);
    send_text(fd, "8=FIX.4.4|35=A|34=1|49=ISLD|52=20240305-10:11:12.345|56=TW44|98=0|108=1|");
    std::this_thread::sleep_for(std::chrono::milliseconds(1100));
    send_text(fd, "8=FIX.4.4|35=0|34=2|49=ISLD|52=20240305-10:11:13.000|56=TW44|");
    read_message(fd, inbox);
  });
  RunnerOptions o = options_for(acceptor, patterns);
  o.timeout_ms = 300;  // shorter than the heartbeat: only the derived wait lets it pass
  const ScriptResult r = run_script(
      parse_script(soh("iCONNECT\n"
                       "I8=FIX.4.4|35=A|34=1|49=TW44|52=<TIME>|56=ISLD|98=0|108=1|\n"
                       "E8=FIX.4.4|35=A|34=1|49=ISLD|52=00000000-00:00:00.000|56=TW44|98=0|108=1|\n"
                       "E8=FIX.4.4|35=0|34=2|49=ISLD|52=00000000-00:00:00.000|56=TW44|\n"),
                   "hb.def"),
      o);
  EXPECT_TRUE(r.passed) << r.line << ": " << r.reason;
}

TEST(RunScript, closes_its_connection_before_returning) {
  const FieldPatterns patterns = FieldPatterns::defaults();
  std::atomic<bool> saw_eof{false};
  FakeAcceptor acceptor([&](int fd) {
    std::string inbox;
    read_message(fd, inbox);
    send_text(fd, kLogonReply);
    char c;
    if (::recv(fd, &c, 1, 0) == 0) saw_eof = true;
  });
  const ScriptResult r = run_script(parse_script(soh(kLogonScript), "close.def"), options_for(acceptor, patterns));
  EXPECT_TRUE(r.passed) << r.reason;
  EXPECT_TRUE(saw_eof.load());
}

// QuickFIX's Runner.rb never closes a socket at eDISCONNECT: the next iCONNECT
// opens a new connection while the old one is still open. An acceptor that
// holds a session until the old socket closes must fail here as it does
// there, so the runner does the same.
TEST(RunScript, keeps_the_old_socket_open_at_disconnect_when_it_connects_again) {
  const FieldPatterns patterns = FieldPatterns::defaults();
  const int listen_fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::bind(listen_fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(listen_fd, 4), 0);
  ::getsockname(listen_fd, reinterpret_cast<sockaddr*>(&addr), &len);
  std::atomic<int> old_socket_state{-1};  // 1: still open when the new connection came, 0: closed
  std::thread acceptor([&] {
    const int first = ::accept(listen_fd, nullptr, nullptr);
    if (first < 0) return;
    std::string inbox;
    read_message(first, inbox);
    send_text(first, kLogonReply);
    ::shutdown(first, SHUT_WR);  // the acceptor disconnects
    const int second = ::accept(listen_fd, nullptr, nullptr);
    pollfd p{first, POLLIN, 0};
    char c;
    old_socket_state = ::poll(&p, 1, 0) == 1 && ::recv(first, &c, 1, MSG_DONTWAIT) == 0 ? 0 : 1;
    if (second >= 0) {
      std::string inbox2;
      read_message(second, inbox2);
      send_text(second, kLogonReply);
      read_message(second, inbox2);  // until the runner closes at the end
      ::close(second);
    }
    ::close(first);
  });
  RunnerOptions o;
  o.port = ntohs(addr.sin_port);
  o.timeout_ms = 2000;
  o.close_wait_ms = 200;
  o.patterns = &patterns;
  const ScriptResult r = run_script(
      parse_script(soh(std::string(kLogonScript) + "eDISCONNECT\n" + kLogonScript), "linger.def"), o);
  acceptor.join();
  ::close(listen_fd);
  EXPECT_TRUE(r.passed) << r.line << ": " << r.reason;
  EXPECT_EQ(old_socket_state.load(), 1) << "the runner closed the old socket before connecting again";
}


// ---- initiator-side runs (--listen) ----------------------------------------

// A fake initiator: connects to the runner's port from its own thread and
// does what `handler` says on the socket.
class FakeInitiator {
 public:
  FakeInitiator(std::uint16_t port, std::function<void(int)> handler) {
    thread_ = std::thread([port, handler] {
      const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      addr.sin_port = htons(port);
      if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) handler(fd);
      ::close(fd);
    });
  }
  ~FakeInitiator() { thread_.join(); }

 private:
  std::thread thread_;
};

const char* const kInitiatorScript =
    "eCONNECT\n"
    "E8=FIX.4.4|9=61|35=A|34=1|49=ISLD|52=00000000-00:00:00.000|56=TW|98=0|108=30|10=0|\n"
    "I8=FIX.4.4|35=A|34=1|49=TW|52=<TIME>|56=ISLD|98=0|108=30|\n";

// A listening socket for an initiator-side run, and the runner's options for it.
class RunScriptListening : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    options_.listen_fd = listen_on("127.0.0.1", 0, port_, error);
    ASSERT_GE(options_.listen_fd, 0) << error;
    options_.timeout_ms = 2000;
    options_.close_wait_ms = 500;
    options_.patterns = &patterns_;
  }
  void TearDown() override {
    if (options_.listen_fd >= 0) ::close(options_.listen_fd);
  }

  const FieldPatterns patterns_ = FieldPatterns::defaults();
  std::uint16_t port_ = 0;
  RunnerOptions options_;
};

TEST_F(RunScriptListening, accepts_the_initiator_at_e_connect_and_checks_its_logon) {
  // One connection the initiator gave up at once (skipped), then the real one.
  FakeInitiator stale(port_, [](int) {});
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::string seen;
  FakeInitiator initiator(port_, [&](int fd) {
    send_text(fd, "8=FIX.4.4|35=A|34=1|49=ISLD|52=20240305-10:11:12.345|56=TW|98=0|108=30|");
    std::string inbox;
    seen = read_message(fd, inbox);
  });
  const ScriptResult r = run_script(parse_script(soh(kInitiatorScript), "init.def"), options_);
  EXPECT_TRUE(r.passed) << r.line << ": " << r.reason;
  EXPECT_NE(seen.find(soh("|35=A|34=1|49=TW|")), std::string::npos) << "the runner's Logon answer";
}

TEST_F(RunScriptListening, fails_when_the_initiator_logs_on_differently) {
  FakeInitiator initiator(port_, [&](int fd) {
    send_text(fd, "8=FIX.4.4|35=A|34=1|49=ISLD|52=20240305-10:11:12.345|56=TW|98=0|108=31|");
    std::string inbox;
    (void)read_message(fd, inbox);
  });
  const ScriptResult r = run_script(parse_script(soh(kInitiatorScript), "init.def"), options_);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.line, 2);
  EXPECT_NE(r.reason.find("tag 108"), std::string::npos) << r.reason;
}

TEST_F(RunScriptListening, refuses_i_connect_when_listening_and_e_connect_when_not) {
  const ScriptResult a = run_script(parse_script("iCONNECT\n", "a.def"), options_);
  EXPECT_FALSE(a.passed);
  EXPECT_NE(a.reason.find("use eCONNECT"), std::string::npos) << a.reason;

  RunnerOptions connecting;
  connecting.port = 1;
  connecting.patterns = &patterns_;
  const ScriptResult b = run_script(parse_script("eCONNECT\n", "b.def"), connecting);
  EXPECT_FALSE(b.passed);
  EXPECT_NE(b.reason.find("--listen"), std::string::npos) << b.reason;
}

}  // namespace
}  // namespace hft::conformance
