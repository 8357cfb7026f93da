// Session options that counterparties set, through the config file and over
// TCP against an engine acceptor: EnableLastMsgSeqNumProcessed,
// RejectGarbledMessage and ValidateChecksum (QuickFIX/J's keys and
// semantics; docs/config.md).
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <thread>
#include <utility>
#include <string>

#include "hft/engine/engine.hpp"
#include "peer_support.hpp"

namespace {

using hft::test::connect_from;
using hft::test::has_field;
using hft::test::raw_fix;
using hft::test::read_until;
using hft::test::send_all;

class NullApp final : public hft::session::Application {};

// An acceptor with one session for CLIENT, `keys` added to its [SESSION].
std::unique_ptr<hft::engine::Engine> acceptor(const std::string& keys, hft::session::Application& app) {
  return hft::test::make_engine(
      "[DEFAULT]\nNonStopSession=Y\nUseDataDictionary=N\n\n[SESSION]\nConnectionType=acceptor\n"
      "BeginString=FIX.4.4\nSenderCompID=VENUE\nTargetCompID=CLIENT\nSocketAcceptPort=0\n" +
          keys,
      app);
}

// A logged-on raw client of `engine`, polled on this thread.
class Client {
 public:
  explicit Client(hft::engine::Engine& engine)
      : engine_(engine), fd_(connect_from("127.0.0.1", engine.listen_port())) {}
  ~Client() {
    if (fd_ >= 0) ::close(fd_);
  }

  void send(const std::string& bytes) { send_all(fd_, bytes); }

  // Everything received until `field` arrives (empty if it does not).
  std::string until(const std::string& field) {
    bool ended = false;
    const bool ok = read_until(
        fd_, received_, ended, [&] { engine_.poll(); }, [&] { return ended || has_field(received_, field); });
    std::string out;
    if (ok && has_field(received_, field)) out.swap(received_);
    return out;
  }

 private:
  hft::engine::Engine& engine_;
  int fd_;
  std::string received_;
};

std::string logon() {
  return raw_fix("A", 1,
                 "98=0\x01"
                 "108=30\x01");
}

// An acceptor with `keys` and a client of it that has sent its Logon.
struct LoggedOn {
  explicit LoggedOn(const std::string& keys) : engine(acceptor(keys, app)) {
    if (!engine) return;
    client = std::make_unique<Client>(*engine);
    client->send(logon());
    logon_answer = client->until("35=A");
  }
  NullApp app;
  std::unique_ptr<hft::engine::Engine> engine;
  std::unique_ptr<Client> client;
  std::string logon_answer;  ///< empty if the Logon was not answered
};

// `message` with its CheckSum changed to another valid-looking value.
std::string wrong_checksum(std::string message) {
  char& digit = message[message.size() - 2];
  digit = digit == '0' ? '1' : '0';
  return message;
}

TEST(SessionOptions, enable_last_msg_seq_num_processed_puts_369_on_what_the_engine_sends) {
  LoggedOn s("EnableLastMsgSeqNumProcessed=Y\n");
  ASSERT_FALSE(s.logon_answer.empty());
  Client& c = *s.client;
  EXPECT_TRUE(has_field(s.logon_answer, "369=0"));
  c.send(raw_fix("1", 2, "112=first\x01"));
  EXPECT_TRUE(has_field(c.until("112=first"), "369=1"));
  c.send(raw_fix("0", 3, ""));
  c.send(raw_fix("1", 4, "112=second\x01"));
  EXPECT_TRUE(has_field(c.until("112=second"), "369=3"));
}

TEST(SessionOptions, without_the_key_no_369_is_sent) {
  LoggedOn s("");
  ASSERT_FALSE(s.logon_answer.empty());
  EXPECT_EQ(s.logon_answer.find("\x01" "369="), std::string::npos);
}

TEST(SessionOptions, reject_garbled_message_rejects_a_wrong_checksum_and_consumes_its_number) {
  LoggedOn s("RejectGarbledMessage=Y\n");
  ASSERT_FALSE(s.logon_answer.empty());
  Client& c = *s.client;
  c.send(wrong_checksum(raw_fix("1", 2, "112=garbled\x01")));
  const std::string rj = c.until("35=3");
  EXPECT_TRUE(has_field(rj, "45=2")) << rj;
  EXPECT_TRUE(has_field(rj, "58=Message failed basic validity check")) << rj;
  EXPECT_FALSE(has_field(rj, "112=garbled")) << "the garbled TestRequest was not answered";
  // 3 is next: answered, no ResendRequest for 2.
  c.send(raw_fix("1", 3, "112=next\x01"));
  const std::string hb = c.until("112=next");
  EXPECT_FALSE(hb.empty());
  EXPECT_FALSE(has_field(hb, "35=2")) << hb;
  EXPECT_EQ(s.engine->session(0).next_target_seq(), 4u);
}

TEST(SessionOptions, by_default_a_wrong_checksum_is_ignored_and_its_number_asked_for_again) {
  LoggedOn s("");
  ASSERT_FALSE(s.logon_answer.empty());
  Client& c = *s.client;
  c.send(wrong_checksum(raw_fix("1", 2, "112=garbled\x01")));
  c.send(raw_fix("1", 3, "112=next\x01"));
  const std::string rr = c.until("35=2");
  EXPECT_TRUE(has_field(rr, "7=2")) << rr;
  EXPECT_FALSE(has_field(rr, "35=3")) << rr;
}

TEST(SessionOptions, validate_checksum_off_accepts_a_wrong_checksum) {
  LoggedOn s("ValidateChecksum=N\n");
  ASSERT_FALSE(s.logon_answer.empty());
  Client& c = *s.client;
  c.send(wrong_checksum(raw_fix("1", 2, "112=accepted\x01")));
  EXPECT_FALSE(c.until("112=accepted").empty());
  EXPECT_EQ(s.engine->session(0).next_target_seq(), 3u);
}

TEST(SessionOptions, a_peer_that_logs_on_with_next_expected_msg_seq_num_gets_what_it_missed) {
  // The engine sends two Heartbeats (2, 3) the peer never saw; the peer
  // reconnects saying, with 789, that it expects 2: the Logon answer states
  // what the engine expects (789) and the gap is filled without a
  // ResendRequest.
  NullApp app;
  auto engine = acceptor("", app);
  ASSERT_TRUE(engine);
  {
    Client c(*engine);
    c.send(logon());
    ASSERT_FALSE(c.until("35=A").empty());
    c.send(raw_fix("1", 2, "112=one\x01"));
    ASSERT_FALSE(c.until("112=one").empty());
    c.send(raw_fix("1", 3, "112=two\x01"));
    ASSERT_FALSE(c.until("112=two").empty());
  }
  // Closed without a Logout; the engine notices and keeps the numbers.
  for (int i = 0; i < 200 && engine->session(0).is_logged_on(); ++i) {
    engine->poll();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_FALSE(engine->session(0).is_logged_on());
  Client c(*engine);
  c.send(raw_fix("A", 4,
                 "98=0\x01"
                 "108=30\x01"
                 "789=2\x01"));
  const std::string answer = c.until("123=Y");
  EXPECT_TRUE(has_field(answer, "35=A")) << answer;
  EXPECT_TRUE(has_field(answer, "789=5")) << "the engine expects the peer's 5 next: " << answer;
  EXPECT_TRUE(has_field(answer, "35=4")) << "a gap fill over the two Heartbeats: " << answer;
  EXPECT_TRUE(has_field(answer, "36=4")) << answer;
  EXPECT_FALSE(has_field(answer, "35=2")) << "no ResendRequest was needed: " << answer;
}

TEST(SessionOptions, time_stamp_precision_sets_the_digits_of_sending_time) {
  // QuickFIX/J's values (its key TimeStampPrecision is this one: keys are
  // case-insensitive) and QuickFIX's digits.
  for (const auto& [value, digits] : {std::pair<std::string, std::size_t>{"SECONDS", 0},
                                      {"MICROS", 6},
                                      {"NANOS", 9},
                                      {"6", 6}}) {
    LoggedOn s("TimeStampPrecision=" + value + "\n");
    ASSERT_FALSE(s.logon_answer.empty()) << value;
    const std::size_t at = s.logon_answer.find("\x01" "52=");
    ASSERT_NE(at, std::string::npos);
    const std::string sending_time =
        s.logon_answer.substr(at + 4, s.logon_answer.find('\x01', at + 4) - at - 4);
    // YYYYMMDD-HH:MM:SS, then '.' and the digits.
    EXPECT_EQ(sending_time.size(), 17 + (digits == 0 ? 0 : 1 + digits)) << value << ": " << sending_time;
  }
}

}  // namespace
