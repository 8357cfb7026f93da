#include "hft/codec/encoder.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <ctime>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "support/alloc_counter.hpp"

namespace hft::codec {
namespace {

constexpr std::int64_t kNsPerSecond = 1'000'000'000;
// 2026-11-30 14:36:30.691 UTC, the SendingTime of every golden message.
constexpr std::int64_t kRefTime = 1'796'049'390LL * kNsPerSecond + 691'000'000;
// 2026-11-30 14:30:00.000 UTC as OrigSendingTime text.
constexpr std::string_view kOrigTime = "20261130-14:30:00.000";

std::string wire(std::string_view with_pipes) {
  std::string s(with_pipes);
  std::replace(s.begin(), s.end(), '|', kSoh);
  return s;
}

std::string pipes(std::string_view on_wire) {
  std::string s(on_wire);
  std::replace(s.begin(), s.end(), kSoh, '|');
  return s;
}

std::string load_golden(const std::string& name) {
  const std::string path = std::string(HFT_SOURCE_DIR) + "/tests/data/golden/" + name;
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return wire(text);
}

// Checks 9 and 10 of a message from first principles (no encoder code):
// 9 counts the bytes after "9=..^" up to and including the SOH before
// "10=", and 10 is the byte sum before "10=" mod 256, three digits.
void expect_framing_consistent(std::string_view msg) {
  ASSERT_GE(msg.size(), 20U);
  ASSERT_EQ(msg.substr(0, 2), "8=");
  const std::size_t soh1 = msg.find(kSoh);
  ASSERT_NE(soh1, std::string_view::npos);
  ASSERT_EQ(msg.substr(soh1 + 1, 2), "9=");
  const std::size_t soh2 = msg.find(kSoh, soh1 + 1);
  ASSERT_NE(soh2, std::string_view::npos);
  const std::size_t declared = std::stoul(std::string(msg.substr(soh1 + 3, soh2 - soh1 - 3)));
  const std::size_t trailer = msg.size() - 7;
  ASSERT_EQ(msg.substr(trailer, 3), "10=");
  ASSERT_EQ(msg.back(), kSoh);
  EXPECT_EQ(declared, trailer - (soh2 + 1)) << pipes(msg);
  unsigned sum = 0;
  for (std::size_t i = 0; i < trailer; ++i) sum += static_cast<unsigned char>(msg[i]);
  char expected[4];
  std::snprintf(expected, sizeof expected, "%03u", sum % 256);
  EXPECT_EQ(msg.substr(trailer + 3, 3), std::string_view(expected, 3)) << pipes(msg);
}

HeaderTemplate make_header(std::string_view begin_string, std::string_view sender, std::string_view target,
                           std::string_view static_fields = {}) {
  HeaderTemplate h;
  EXPECT_TRUE(h.init(begin_string, sender, target, wire(static_fields)));
  return h;
}

// ---------------------------------------------------------------- goldens

// Builders encode the fields of one golden file; they are replayed for
// every buffer size, so they take the writer and formatter from the caller.
using Builder = void (*)(MessageWriter&, TimestampFormatter&);

const HeaderTemplate& fix44_client() {
  static const HeaderTemplate h = make_header("FIX.4.4", "CLIENT1", "EXECUTOR");
  return h;
}

void build_new_order_single(MessageWriter& w, TimestampFormatter& f) {
  static const HeaderTemplate h = make_header("FIXT.1.1", "CLIENT1", "EXECUTOR", "57=SRVR_SUB|50=SNDR_SUB|");
  w.start(h, "D", 2, kRefTime, TimePrecision::kMillis, f);
  w.add(tag::kClOrdID, "1");
  w.add(tag::kSymbol, "NOKIA.HE");
  w.add_char(tag::kSide, '1');
  w.add_int(tag::kOrderQty, 10);
  w.add_decimal(tag::kPrice, Decimal{10000, 0});
  w.add_char(tag::kOrdType, '2');
  w.add_char(tag::kTimeInForce, '0');
  w.add_uint(tag::kNoPartyIDs, 2);
  w.add(tag::kPartyID, "PARTY1");
  w.add_char(tag::kPartyIDSource, 'D');
  w.add_int(tag::kPartyRole, 1);
  w.add(tag::kPartyID, "PARTY2");
  w.add_char(tag::kPartyIDSource, 'D');
  w.add_int(tag::kPartyRole, 3);
  w.add_timestamp(tag::kTransactTime, kRefTime, TimePrecision::kMillis, f);
}

void build_execution_report(MessageWriter& w, TimestampFormatter& f) {
  static const HeaderTemplate h = make_header("FIX.4.4", "EXECUTOR", "CLIENT1");
  w.start(h, "8", 3, kRefTime, TimePrecision::kMillis, f);
  w.add(tag::kOrderID, "O-1");
  w.add(tag::kClOrdID, "1");
  w.add(tag::kExecID, "E-1");
  w.add_char(tag::kExecType, 'F');
  w.add_char(tag::kOrdStatus, '2');
  w.add(tag::kSymbol, "NOKIA.HE");
  w.add_char(tag::kSide, '1');
  w.add_int(tag::kOrderQty, 10);
  w.add_decimal(tag::kPrice, Decimal{1025, 2});
  w.add_int(tag::kLastQty, 10);
  w.add_decimal(tag::kLastPx, Decimal{1025, 2});
  w.add_int(tag::kLeavesQty, 0);
  w.add_int(tag::kCumQty, 10);
  w.add_decimal(tag::kAvgPx, Decimal{1025, 2});
  w.add_timestamp(tag::kTransactTime, kRefTime, TimePrecision::kMillis, f);
}

void build_logon44(MessageWriter& w, TimestampFormatter& f) {
  w.start(fix44_client(), "A", 1, kRefTime, TimePrecision::kMillis, f);
  w.add_int(tag::kEncryptMethod, 0);
  w.add_int(tag::kHeartBtInt, 30);
}

void build_logon_t11(MessageWriter& w, TimestampFormatter& f) {
  static const HeaderTemplate h = make_header("FIXT.1.1", "CLIENT1", "EXECUTOR", "50=SNDR_SUB|57=SRVR_SUB|");
  w.start(h, "A", 1, kRefTime, TimePrecision::kMillis, f);
  w.add_int(tag::kEncryptMethod, 0);
  w.add_int(tag::kHeartBtInt, 30);
  w.add_bool(tag::kResetSeqNumFlag, true);
  w.add(tag::kDefaultApplVerID, "9");
}

void build_heartbeat(MessageWriter& w, TimestampFormatter& f) {
  w.start(fix44_client(), "0", 7, kRefTime, TimePrecision::kMillis, f);
}

void build_heartbeat_test_req_id(MessageWriter& w, TimestampFormatter& f) {
  w.start(fix44_client(), "0", 8, kRefTime, TimePrecision::kMillis, f);
  w.add(tag::kTestReqID, "TEST-1");
}

void build_test_request(MessageWriter& w, TimestampFormatter& f) {
  w.start(fix44_client(), "1", 9, kRefTime, TimePrecision::kMillis, f);
  w.add(tag::kTestReqID, "TEST-1");
}

void build_resend_request(MessageWriter& w, TimestampFormatter& f) {
  w.start(fix44_client(), "2", 10, kRefTime, TimePrecision::kMillis, f);
  w.add_uint(tag::kBeginSeqNo, 5);
  w.add_uint(tag::kEndSeqNo, 0);
}

void build_reject(MessageWriter& w, TimestampFormatter& f) {
  w.start(fix44_client(), "3", 11, kRefTime, TimePrecision::kMillis, f);
  w.add_uint(tag::kRefSeqNum, 6);
  w.add(tag::kText, reject_reason_text(RejectReason::kRequiredTagMissing));
  w.add_int(tag::kRefTagID, 44);
  w.add_char(tag::kRefMsgType, 'D');
  w.add_int(tag::kSessionRejectReason, static_cast<int>(RejectReason::kRequiredTagMissing));
}

void build_sequence_reset_gap_fill(MessageWriter& w, TimestampFormatter& f) {
  HeaderExtras extras;
  extras.poss_dup = true;
  extras.orig_sending_time = kOrigTime;
  w.start(fix44_client(), "4", 5, kRefTime, TimePrecision::kMillis, f, extras);
  w.add_uint(tag::kNewSeqNo, 12);
  w.add_bool(tag::kGapFillFlag, true);
}

void build_logout(MessageWriter& w, TimestampFormatter& f) {
  w.start(fix44_client(), "5", 13, kRefTime, TimePrecision::kMillis, f);
  w.add(tag::kText, "Goodbye");
}

void build_header_extras(MessageWriter& w, TimestampFormatter& f) {
  static const HeaderTemplate h =
      make_header("FIX.4.2", "CLIENT1", "EXECUTOR", "142=LOC|115=ONBEHALF|57=TS|50=SS|128=DELIVER|");
  HeaderExtras extras;
  extras.poss_dup = true;
  extras.poss_resend = true;
  extras.orig_sending_time = kOrigTime;
  w.start(h, "D", 3, kRefTime, TimePrecision::kMillis, f, extras);
  w.add(tag::kClOrdID, "1");
}

struct GoldenCase {
  const char* file;
  Builder build;
};

const GoldenCase kGoldenCases[] = {
    {"fixt11_new_order_single.fix", build_new_order_single},
    {"fix44_execution_report.fix", build_execution_report},
    {"fix44_logon.fix", build_logon44},
    {"fixt11_logon.fix", build_logon_t11},
    {"fix44_heartbeat.fix", build_heartbeat},
    {"fix44_heartbeat_test_req_id.fix", build_heartbeat_test_req_id},
    {"fix44_test_request.fix", build_test_request},
    {"fix44_resend_request.fix", build_resend_request},
    {"fix44_reject.fix", build_reject},
    {"fix44_sequence_reset_gap_fill.fix", build_sequence_reset_gap_fill},
    {"fix44_logout.fix", build_logout},
    {"fix42_header_extras.fix", build_header_extras},
};

class GoldenMessage : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(GoldenMessage, golden_file_has_correct_body_length_and_checksum) {
  expect_framing_consistent(load_golden(GetParam().file));
}

TEST_P(GoldenMessage, encodes_byte_exact) {
  const std::string expected = load_golden(GetParam().file);
  std::vector<char> buf(1024);
  TimestampFormatter f;
  MessageWriter w(buf);
  GetParam().build(w, f);
  const auto r = w.finish();
  ASSERT_TRUE(r.ok()) << static_cast<int>(r.status);
  EXPECT_EQ(pipes({r.message.data(), r.message.size()}), pipes(expected));
  expect_framing_consistent({r.message.data(), r.message.size()});
}

constexpr std::size_t kGuard = 64;
constexpr char kGuardByte = '\x5a';

TEST_P(GoldenMessage, reports_buffer_too_small_at_every_shorter_size_without_writing_outside) {
  const std::string expected = load_golden(GetParam().file);
  std::size_t needed = 0;
  for (std::size_t n = 0; n <= expected.size() + 8; ++n) {
    // Guards on both sides: the prefix is written backwards, the body forwards.
    std::vector<char> mem(kGuard + n + kGuard, kGuardByte);
    TimestampFormatter f;
    MessageWriter w(std::span<char>(mem.data() + kGuard, n));
    GetParam().build(w, f);
    const auto r = w.finish();
    for (std::size_t i = 0; i < kGuard; ++i) {
      ASSERT_EQ(mem[i], kGuardByte) << "write before the buffer, size " << n;
      ASSERT_EQ(mem[kGuard + n + i], kGuardByte) << "write after the buffer, size " << n;
    }
    if (r.ok()) {
      needed = n;
      EXPECT_EQ(pipes({r.message.data(), r.message.size()}), pipes(expected));
      break;
    }
    ASSERT_EQ(r.status, EncodeStatus::kBufferTooSmall) << "size " << n;
    ASSERT_TRUE(r.message.empty());
    ASSERT_EQ(w.status(), EncodeStatus::kBufferTooSmall);
  }
  ASSERT_NE(needed, 0U) << "never fitted";
  // The body offset reserves digits(buffer size) for BodyLength, so a buffer
  // the size of the message suffices unless that has more digits.
  const std::size_t prefix_end = expected.find(kSoh, expected.find(kSoh) + 1) + 1;
  const std::size_t body_length = expected.size() - 7 - prefix_end;
  const auto digits = [](std::size_t v) { return std::to_string(v).size(); };
  EXPECT_EQ(needed, expected.size() + digits(needed) - digits(body_length));
  // Every larger size fits too.
  for (std::size_t n = needed; n < needed + 64; ++n) {
    std::vector<char> mem(n);
    TimestampFormatter f;
    MessageWriter w(mem);
    GetParam().build(w, f);
    const auto r = w.finish();
    ASSERT_TRUE(r.ok()) << "size " << n;
    ASSERT_EQ(pipes({r.message.data(), r.message.size()}), pipes(expected));
  }
}

INSTANTIATE_TEST_SUITE_P(Golden, GoldenMessage, ::testing::ValuesIn(kGoldenCases),
                         [](const ::testing::TestParamInfo<GoldenCase>& param_info) {
                           std::string name = param_info.param.file;
                           name = name.substr(0, name.find('.'));
                           return name;
                         });

// ---------------------------------------------------------------- writer

TEST(MessageWriter, matches_the_quickfix_logout_from_isld_to_tw44_byte_for_byte) {
  // As QuickFIX 1.15 sends it (Message::toString with these header fields).
  const std::string expected = wire("8=FIX.4.4|9=51|35=5|34=4|49=ISLD|52=20261130-14:36:30.691|56=TW44|10=025|");
  const HeaderTemplate h = make_header("FIX.4.4", "ISLD", "TW44");
  char buf[128];
  TimestampFormatter f;
  MessageWriter w(buf);
  w.start(h, "5", 4, kRefTime, TimePrecision::kMillis, f);
  const auto r = w.finish();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(pipes({r.message.data(), r.message.size()}), pipes(expected));
}

TEST(MessageWriter, start_raw_leaves_msg_type_and_header_to_the_caller) {
  char buf[128];
  MessageWriter w(buf);
  w.start_raw("FIX.4.4");
  w.add(tag::kMsgType, "0");
  w.add_raw(wire("34=7|49=CLIENT1|52=20261130-14:36:30.691|56=EXECUTOR|"));
  const auto r = w.finish();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(pipes({r.message.data(), r.message.size()}), pipes(load_golden("fix44_heartbeat.fix")));
}

TEST(MessageWriter, appends_extra_header_fields_after_the_standard_ones) {
  const HeaderTemplate h = make_header("FIXT.1.1", "A", "B", "1128=9|");
  const std::string more = wire("1129=X|");
  HeaderExtras extras;
  extras.more = more;
  char buf[256];
  TimestampFormatter f;
  MessageWriter w(buf);
  w.start(h, "D", 1, 0, TimePrecision::kSeconds, f, extras);
  w.add(tag::kClOrdID, "X");
  const auto r = w.finish();
  ASSERT_TRUE(r.ok());
  const std::string_view msg(r.message.data(), r.message.size());
  EXPECT_EQ(pipes(msg.substr(0, msg.size() - 7)),
            "8=FIXT.1.1|9=60|35=D|34=1|49=A|52=19700101-00:00:00|56=B|1128=9|1129=X|11=X|");
  expect_framing_consistent(msg);
}

TEST(MessageWriter, writes_every_field_type) {
  const HeaderTemplate h = make_header("FIX.4.4", "S", "T");
  char buf[512];
  TimestampFormatter f;
  MessageWriter w(buf);
  w.start(h, "AE", 123456789012ULL, kRefTime + 123'456, TimePrecision::kNanos, f);
  w.add_bool(1000, false);
  w.add_int(1001, INT64_MIN);
  w.add_uint(1002, UINT64_MAX);
  w.add_decimal(1003, Decimal{-5, 3});
  w.add_timestamp(1004, kRefTime, TimePrecision::kMicros, f);
  w.add_timestamp(1005, kRefTime, TimePrecision::kSeconds, f);
  w.add(2147483647, "max tag");
  w.add_char(12345, 'z');
  const auto r = w.finish();
  ASSERT_TRUE(r.ok());
  const std::string_view msg(r.message.data(), r.message.size());
  const std::string body(pipes(msg.substr(msg.find("35="), msg.size() - 7 - msg.find("35="))));
  EXPECT_EQ(body,
            "35=AE|34=123456789012|49=S|52=20261130-14:36:30.691123456|56=T|1000=N|"
            "1001=-9223372036854775808|1002=18446744073709551615|1003=-0.005|"
            "1004=20261130-14:36:30.691000|1005=20261130-14:36:30|2147483647=max tag|12345=z|");
  expect_framing_consistent(msg);
}

TEST(MessageWriter, body_length_with_five_digits_is_correct) {
  const HeaderTemplate h = make_header("FIX.4.4", "S", "T");
  const std::string text(20000, 'x');
  std::vector<char> buf(20100);
  TimestampFormatter f;
  MessageWriter w(buf);
  w.start(h, "B", 1, kRefTime, TimePrecision::kMillis, f);
  w.add(tag::kText, text);
  const auto r = w.finish();
  ASSERT_TRUE(r.ok());
  expect_framing_consistent({r.message.data(), r.message.size()});
  // BodyLength has as many digits as the buffer size: no gap in front.
  EXPECT_EQ(r.message.data(), buf.data());
}

TEST(MessageWriter, reuses_the_buffer_for_the_next_message) {
  char buf[256];
  TimestampFormatter f;
  MessageWriter w(buf);
  build_logout(w, f);
  ASSERT_TRUE(w.finish().ok());
  build_heartbeat(w, f);
  const auto r = w.finish();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(pipes({r.message.data(), r.message.size()}), pipes(load_golden("fix44_heartbeat.fix")));
}

TEST(MessageWriter, add_after_a_failure_writes_nothing) {
  const HeaderTemplate h = make_header("FIX.4.4", "S", "T");
  std::vector<char> buf(90, '#');
  TimestampFormatter f;
  MessageWriter w(buf);
  w.start(h, "0", 1, kRefTime, TimePrecision::kMillis, f);
  ASSERT_EQ(w.status(), EncodeStatus::kOk);
  w.add(tag::kText, std::string(100, 'x'));
  ASSERT_EQ(w.status(), EncodeStatus::kBufferTooSmall);
  const std::vector<char> snapshot = buf;
  w.add(tag::kTestReqID, "1");
  w.add_char(tag::kSide, '1');
  w.add_int(tag::kOrderQty, 1);
  w.add_uint(tag::kOrderQty, 1);
  w.add_decimal(tag::kPrice, Decimal{1, 1});
  w.add_decimal(tag::kPrice, Decimal{1, 0});
  w.add_timestamp(tag::kTransactTime, 0, TimePrecision::kSeconds, f);
  w.add_raw(wire("1=a|"));
  EXPECT_EQ(buf, snapshot);
  EXPECT_EQ(w.status(), EncodeStatus::kBufferTooSmall);
  const auto r = w.finish();
  EXPECT_EQ(r.status, EncodeStatus::kBufferTooSmall);
  EXPECT_TRUE(r.message.empty());
  EXPECT_EQ(buf, snapshot);
}

TEST(MessageWriter, rejects_invalid_arguments) {
  const HeaderTemplate h = make_header("FIX.4.4", "S", "T");
  char buf[256];
  TimestampFormatter f;
  MessageWriter w(buf);

  const auto status_after = [&](auto&& body) {
    w.start(h, "0", 1, kRefTime, TimePrecision::kMillis, f);
    body();
    return w.finish().status;
  };
  EXPECT_EQ(status_after([&] { w.add(0, "x"); }), EncodeStatus::kInvalidArgument);
  EXPECT_EQ(status_after([&] { w.add(-5, "x"); }), EncodeStatus::kInvalidArgument);
  EXPECT_EQ(status_after([&] { w.add(tag::kText, ""); }), EncodeStatus::kInvalidArgument);
  EXPECT_EQ(status_after([&] { w.add_int(0, 1); }), EncodeStatus::kInvalidArgument);
  EXPECT_EQ(status_after([&] { w.add_decimal(tag::kPrice, Decimal{1, 19}); }), EncodeStatus::kInvalidArgument);
  EXPECT_EQ(status_after([&] { w.add_raw("1=a"); }), EncodeStatus::kInvalidArgument);
  EXPECT_EQ(status_after([&] { w.add_raw(""); }), EncodeStatus::kOk);

  HeaderTemplate uninitialised;
  w.start(uninitialised, "0", 1, kRefTime, TimePrecision::kMillis, f);
  EXPECT_EQ(w.finish().status, EncodeStatus::kInvalidArgument);
  w.start(h, "", 1, kRefTime, TimePrecision::kMillis, f);
  EXPECT_EQ(w.finish().status, EncodeStatus::kInvalidArgument);
  HeaderExtras bad_more;
  bad_more.more = "1128=9";
  w.start(h, "0", 1, kRefTime, TimePrecision::kMillis, f, bad_more);
  EXPECT_EQ(w.finish().status, EncodeStatus::kInvalidArgument);
  w.start_raw("");
  EXPECT_EQ(w.finish().status, EncodeStatus::kInvalidArgument);

  MessageWriter fresh(buf);
  fresh.add(tag::kText, "before start");
  EXPECT_EQ(fresh.status(), EncodeStatus::kInvalidArgument);

  w.start(h, "0", 1, kRefTime, TimePrecision::kMillis, f);
  ASSERT_TRUE(w.finish().ok());
  w.add(tag::kText, "after finish");
  EXPECT_EQ(w.status(), EncodeStatus::kInvalidArgument);
}

TEST(MessageWriter, start_and_add_and_finish_allocate_nothing) {
  std::vector<char> buf(512);
  TimestampFormatter f;
  MessageWriter w(buf);
  build_new_order_single(w, f);  // builds the static HeaderTemplate outside the scope
  ASSERT_TRUE(w.finish().ok());
  hft::test::AllocationScope scope;
  std::size_t total = 0;
  for (int i = 0; i < 1000; ++i) {
    build_new_order_single(w, f);
    w.add_decimal(tag::kPrice, Decimal{-12345, 4});
    w.add_raw("1=a\x01");
    const auto r = w.finish();
    total += r.message.size();
  }
  EXPECT_EQ(scope.count(), 0U);
  EXPECT_GT(total, 0U);
}

// ---------------------------------------------------------------- header template

TEST(HeaderTemplate, sorts_static_fields_between_the_per_message_tags) {
  const HeaderTemplate h = make_header("FIX.4.2", "SND", "TGT", "142=LOC|115=OBO|57=TS|50=SS|128=DTC|1=A|");
  EXPECT_EQ(pipes(h.static_text()), "1=A|49=SND|50=SS|56=TGT|57=TS|115=OBO|128=DTC|142=LOC|");
  EXPECT_EQ(h.begin_string(), "FIX.4.2");
  EXPECT_TRUE(h.valid());
}

TEST(HeaderTemplate, rejects_malformed_arguments) {
  HeaderTemplate h;
  EXPECT_FALSE(h.init("", "S", "T"));
  EXPECT_FALSE(h.init(std::string(HeaderTemplate::kMaxBeginString + 1, 'F'), "S", "T"));
  EXPECT_FALSE(h.init("FIX\x01", "S", "T"));
  EXPECT_FALSE(h.init("FIX.4.4", "", "T"));
  EXPECT_FALSE(h.init("FIX.4.4", "S", ""));
  EXPECT_FALSE(h.init("FIX.4.4", "S\x01", "T"));
  for (const char* bad : {"50=X", "50=|", "=X|", "0=X|", "050=X|", "5a=X|", "50X|", "50=X|50=Y|", "34=1|",
                          "52=X|", "49=X|", "56=X|", "43=Y|", "97=Y|", "122=X|", "35=D|", "8=F|", "9=1|",
                          "10=000|", "2147483648=X|"}) {
    EXPECT_FALSE(h.init("FIX.4.4", "S", "T", wire(bad))) << bad;
    EXPECT_FALSE(h.valid()) << bad;
  }
  EXPECT_TRUE(h.init("FIX.4.4", "S", "T", wire("2147483647=X|")));
  const std::string too_long = "58=" + std::string(HeaderTemplate::kMaxStatic, 'x') + "\x01";
  EXPECT_FALSE(h.init("FIX.4.4", "S", "T", too_long));
  std::string too_many;
  for (int t = 1000; t < 1000 + static_cast<int>(HeaderTemplate::kMaxStaticFields) + 1; ++t) {
    too_many += std::to_string(t) + "=x\x01";
  }
  EXPECT_FALSE(h.init("FIX.4.4", "S", "T", too_many));
  EXPECT_TRUE(h.init("FIX.4.4", "S", "T", too_many.substr(too_many.find('\x01') + 1)));
}

// ---------------------------------------------------------------- checksum

TEST(Checksum, equals_the_byte_sum_mod_256_for_every_length_and_alignment) {
  std::mt19937 rng(7);
  std::vector<char> data(400);
  for (auto& c : data) c = static_cast<char>(rng());  // high bytes must count as unsigned
  for (std::size_t offset = 0; offset < 64; ++offset) {
    for (std::size_t n = 0; n + offset <= 330; ++n) {
      unsigned sum = 0;
      for (std::size_t i = 0; i < n; ++i) sum += static_cast<unsigned char>(data[offset + i]);
      ASSERT_EQ(checksum({data.data() + offset, n}), sum % 256) << "offset " << offset << " length " << n;
    }
  }
  const std::string all_ff(1000, '\xff');
  EXPECT_EQ(checksum(all_ff), (255U * 1000U) % 256U);
}

// ---------------------------------------------------------------- integers

std::string fmt_uint(std::uint64_t v) {
  char buf[24];
  return {buf, format_uint(buf, v)};
}
std::string fmt_int(std::int64_t v) {
  char buf[24];
  return {buf, format_int(buf, v)};
}

TEST(FormatInt, formats_edge_values) {
  EXPECT_EQ(fmt_uint(0), "0");
  EXPECT_EQ(fmt_uint(UINT64_MAX), "18446744073709551615");
  EXPECT_EQ(fmt_int(0), "0");
  EXPECT_EQ(fmt_int(INT64_MAX), "9223372036854775807");
  EXPECT_EQ(fmt_int(INT64_MIN), "-9223372036854775808");
  EXPECT_EQ(fmt_int(-1), "-1");
}

TEST(FormatInt, formats_every_power_of_ten_and_its_neighbours) {
  std::uint64_t p = 1;
  for (int i = 0; i < 20; ++i, p *= 10) {
    for (const std::uint64_t v : {p - 1, p, p + 1}) {
      EXPECT_EQ(fmt_uint(v), std::to_string(v));
      if (v <= static_cast<std::uint64_t>(INT64_MAX)) {
        const auto s = static_cast<std::int64_t>(v);
        EXPECT_EQ(fmt_int(s), std::to_string(s));
        EXPECT_EQ(fmt_int(-s), std::to_string(-s));
      }
    }
    if (i == 19) break;
  }
}

TEST(FormatInt, matches_to_string_on_random_values) {
  std::mt19937_64 rng(11);
  for (int i = 0; i < 100000; ++i) {
    const std::uint64_t v = rng() >> (rng() % 64);
    ASSERT_EQ(fmt_uint(v), std::to_string(v));
    ASSERT_EQ(fmt_int(static_cast<std::int64_t>(v)), std::to_string(static_cast<std::int64_t>(v)));
  }
}

// ---------------------------------------------------------------- decimals

std::string fmt_decimal(std::int64_t mantissa, std::uint8_t scale) {
  char buf[32];
  std::fill(std::begin(buf), std::end(buf), '#');
  const std::size_t n = format_decimal(buf, Decimal{mantissa, scale});
  EXPECT_LE(n, 21U);
  return {buf, n};
}

// Reference: the digits of |mantissa| left-padded to scale + 1 and a point
// inserted scale digits from the right.
std::string reference_decimal(std::int64_t mantissa, int scale) {
  std::string digits = std::to_string(mantissa);
  const bool negative = digits[0] == '-';
  if (negative) digits.erase(0, 1);
  if (scale == 0) return (negative ? "-" : "") + digits;
  if (static_cast<int>(digits.size()) <= scale) digits.insert(0, scale + 1 - digits.size(), '0');
  digits.insert(digits.size() - scale, ".");
  return (negative ? "-" : "") + digits;
}

TEST(FormatDecimal, formats_fixed_point_values) {
  EXPECT_EQ(fmt_decimal(1234, 2), "12.34");
  EXPECT_EQ(fmt_decimal(1234, 0), "1234");
  EXPECT_EQ(fmt_decimal(-5, 3), "-0.005");
  EXPECT_EQ(fmt_decimal(0, 0), "0");
  EXPECT_EQ(fmt_decimal(0, 3), "0.000");
  EXPECT_EQ(fmt_decimal(1000, 2), "10.00");
  EXPECT_EQ(fmt_decimal(1, 1), "0.1");
  EXPECT_EQ(fmt_decimal(-1234567, 3), "-1234.567");
  EXPECT_EQ(fmt_decimal(5, 18), "0.000000000000000005");
  EXPECT_EQ(fmt_decimal(INT64_MAX, 18), "9.223372036854775807");
  EXPECT_EQ(fmt_decimal(INT64_MIN, 18), "-9.223372036854775808");
  EXPECT_EQ(fmt_decimal(INT64_MIN, 0), "-9223372036854775808");
  EXPECT_EQ(fmt_decimal(-1, 18), "-0.000000000000000001");
}

TEST(FormatDecimal, matches_reference_for_every_scale) {
  for (int scale = 0; scale <= 18; ++scale) {
    for (const std::int64_t m : std::initializer_list<std::int64_t>{0, 1, -1, 7LL, 10LL, -100LL, 123456789012345678LL, -123456789012345678LL,
                                 999999999999999999LL, INT64_MAX, INT64_MIN}) {
      EXPECT_EQ(fmt_decimal(m, static_cast<std::uint8_t>(scale)), reference_decimal(m, scale))
          << m << " scale " << scale;
    }
  }
}

TEST(FormatDecimal, writes_nothing_for_a_scale_above_18) {
  char buf[8] = "#######";
  EXPECT_EQ(format_decimal(buf, Decimal{1, 19}), 0U);
  EXPECT_EQ(std::string_view(buf), "#######");
}

// ---------------------------------------------------------------- timestamps

std::string fmt_time(TimestampFormatter& f, std::int64_t ns, TimePrecision p) {
  char buf[32];
  const std::size_t n = f.format(buf, ns, p);
  EXPECT_EQ(n, TimestampFormatter::length(p));
  return {buf, n};
}

struct TimeCase {
  std::int64_t ns;
  const char* seconds;  // YYYYMMDD-HH:MM:SS
  const char* nanos;    // the 9 sub-second digits
};

constexpr TimeCase kTimeCases[] = {
    {0, "19700101-00:00:00", "000000000"},
    {-1, "19700101-00:00:00", "000000000"},
    {INT64_MIN, "19700101-00:00:00", "000000000"},
    {94'694'399LL * kNsPerSecond + 999'999'999, "19721231-23:59:59", "999999999"},
    {946'684'799LL * kNsPerSecond + 999'000'000, "19991231-23:59:59", "999000000"},
    {946'684'800LL * kNsPerSecond, "20000101-00:00:00", "000000000"},
    {951'782'400LL * kNsPerSecond + 123'456'789, "20000229-00:00:00", "123456789"},  // 2000: leap (400)
    {1'709'251'199LL * kNsPerSecond + 999'999'999, "20240229-23:59:59", "999999999"},
    {1'709'251'200LL * kNsPerSecond, "20240301-00:00:00", "000000000"},
    {4'107'542'399LL * kNsPerSecond + 1, "21000228-23:59:59", "000000001"},
    {4'107'542'400LL * kNsPerSecond, "21000301-00:00:00", "000000000"},  // 2100: not leap
    {kRefTime, "20261130-14:36:30", "691000000"},
    {INT64_MAX, "22620411-23:47:16", "854775807"},
};

TEST(TimestampFormatter, formats_known_instants_at_every_precision) {
  for (const TimeCase& c : kTimeCases) {
    const std::string s = c.seconds;
    const std::string nanos = c.nanos;
    TimestampFormatter f;  // a fresh cache for each
    EXPECT_EQ(fmt_time(f, c.ns, TimePrecision::kSeconds), s) << c.ns;
    EXPECT_EQ(fmt_time(f, c.ns, TimePrecision::kMillis), s + "." + nanos.substr(0, 3)) << c.ns;
    EXPECT_EQ(fmt_time(f, c.ns, TimePrecision::kMicros), s + "." + nanos.substr(0, 6)) << c.ns;
    EXPECT_EQ(fmt_time(f, c.ns, TimePrecision::kNanos), s + "." + nanos) << c.ns;
  }
}

TEST(TimestampFormatter, one_cache_follows_the_clock_across_second_boundaries_both_ways) {
  TimestampFormatter shared;
  // Every known instant in a row, then in reverse, then interleaved with
  // the next/previous nanosecond: the cached text must always be refreshed.
  std::vector<std::int64_t> order;
  for (const TimeCase& c : kTimeCases) order.push_back(c.ns);
  for (auto it = std::rbegin(kTimeCases); it != std::rend(kTimeCases); ++it) order.push_back(it->ns);
  for (const TimeCase& c : kTimeCases) {
    if (c.ns > 0 && c.ns < INT64_MAX) {
      order.push_back(c.ns + 1);
      order.push_back(c.ns - 1);
      order.push_back(c.ns + kNsPerSecond);
      order.push_back(c.ns);
    }
  }
  for (const std::int64_t ns : order) {
    TimestampFormatter fresh;
    EXPECT_EQ(fmt_time(shared, ns, TimePrecision::kNanos), fmt_time(fresh, ns, TimePrecision::kNanos)) << ns;
  }
  // A second rolls over at .999999999 -> .000000000.
  const std::int64_t t = kRefTime - 691'000'000 + kNsPerSecond - 1;
  EXPECT_EQ(fmt_time(shared, t, TimePrecision::kMillis), "20261130-14:36:30.999");
  EXPECT_EQ(fmt_time(shared, t + 1, TimePrecision::kMillis), "20261130-14:36:31.000");
  EXPECT_EQ(fmt_time(shared, t, TimePrecision::kMillis), "20261130-14:36:30.999");
}

TEST(TimestampFormatter, agrees_with_gmtime_on_random_seconds) {
  std::mt19937_64 rng(3);
  TimestampFormatter f;
  for (int i = 0; i < 100000; ++i) {
    const auto second = static_cast<std::time_t>(rng() % 9'223'372'036ULL);
    std::tm tm{};
    ASSERT_NE(gmtime_r(&second, &tm), nullptr);
    char expected[32];
    std::strftime(expected, sizeof expected, "%Y%m%d-%H:%M:%S", &tm);
    ASSERT_EQ(fmt_time(f, static_cast<std::int64_t>(second) * kNsPerSecond, TimePrecision::kSeconds), expected)
        << second;
  }
}

TEST(TimestampFormatter, other_precisions_write_that_many_digits) {
  TimestampFormatter f;
  EXPECT_EQ(fmt_time(f, kRefTime + 123'456, static_cast<TimePrecision>(1)), "20261130-14:36:30.6");
  EXPECT_EQ(fmt_time(f, kRefTime + 123'456, static_cast<TimePrecision>(7)), "20261130-14:36:30.6911234");
  EXPECT_EQ(TimestampFormatter::length(static_cast<TimePrecision>(12)), 27U);
}

}  // namespace
}  // namespace hft::codec
