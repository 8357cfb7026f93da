// frame(): cutting a byte stream into messages the way QuickFIX does, and
// resynchronising after garbage.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hft/codec/parser.hpp"

namespace hft::codec {
namespace {

// '|' stands for SOH in the test texts.
std::string soh(std::string_view text) {
  std::string s(text);
  for (char& c : s) {
    if (c == '|') c = kSoh;
  }
  return s;
}

unsigned sum_mod_256(std::string_view bytes) {
  unsigned s = 0;
  for (const char c : bytes) s += static_cast<unsigned char>(c);
  return s % 256;
}

std::string three_digits(unsigned v) {
  std::string s = std::to_string(v);
  return std::string(3 - s.size(), '0') + s;
}

// A well-formed message: BodyLength and CheckSum computed here.
std::string make(std::string_view begin, std::string_view body) {
  const std::string b = soh(body);
  std::string m = "8=" + std::string(begin) + kSoh + "9=" + std::to_string(b.size()) + kSoh + b;
  return m + "10=" + three_digits(sum_mod_256(m)) + kSoh;
}

// Same, with a chosen BodyLength (the CheckSum still matches the bytes).
std::string make_with_length(std::string_view begin, std::string_view body, long long length) {
  const std::string b = soh(body);
  std::string m = "8=" + std::string(begin) + kSoh + "9=" + std::to_string(length) + kSoh + b;
  return m + "10=" + three_digits(sum_mod_256(m)) + kSoh;
}

const std::string kNewOrderBody =
    "35=D|34=2|49=CLIENT1|52=20261130-14:36:30.691|56=EXECUTOR|50=SNDR_SUB|57=SRVR_SUB|11=1|55=NOKIA.HE|"
    "54=1|38=10|44=10000|40=2|59=0|453=2|448=PARTY1|447=D|452=1|448=PARTY2|447=D|452=3|"
    "60=20261130-14:36:30.691|";

std::string reference_order() { return make("FIXT.1.1", kNewOrderBody); }

std::string heartbeat(int seq) {
  return make("FIX.4.4", "35=0|34=" + std::to_string(seq) + "|49=TW44|52=20240101-12:00:00|56=ISLD|");
}

std::vector<std::string> golden_messages() {
  return {
      reference_order(),
      make("FIX.4.4", "35=A|34=1|49=TW44|52=20240101-12:00:00.000|56=ISLD|98=0|108=30|141=Y|"),
      heartbeat(2),
      make("FIX.4.4", "35=1|34=3|49=TW44|52=20240101-12:00:00|56=ISLD|112=HELLO|"),
      make("FIX.4.4", "35=2|34=4|49=ISLD|52=20240101-12:00:00.000|56=TW44|7=3|16=0|"),
      make("FIX.4.4", "35=4|34=5|49=ISLD|52=20240101-12:00:00.000|56=TW44|43=Y|122=20240101-11:00:00|123=Y|36=9|"),
      make("FIX.4.4", "35=3|34=6|49=ISLD|52=20240101-12:00:00.000|56=TW44|45=3|371=44|372=D|373=5|"
                      "58=Value is incorrect (out of range) for this tag|"),
      make("FIX.4.4",
           "35=8|34=7|49=EXECUTOR|52=20261130-14:36:30.692|56=CLIENT1|37=O1|11=1|17=E1|150=0|39=0|"
           "55=NOKIA.HE|54=1|38=10|44=10000|151=10|14=0|6=0|60=20261130-14:36:30.692|"),
      make("FIX.4.4", "35=5|34=8|49=ISLD|52=20240101-12:00:00.000|56=TW44|58=bye|"),
  };
}

// Copies `bytes` into a heap block of exactly that size so that ASan reports
// any read past the end.
FrameResult frame_exact(std::string_view bytes, const FrameOptions& options = {}) {
  auto block = std::make_unique<char[]>(bytes.size() + (bytes.empty() ? 1 : 0));
  if (!bytes.empty()) std::memcpy(block.get(), bytes.data(), bytes.size());
  return frame(std::string_view(block.get(), bytes.size()), options);
}

// Drives frame() over a stream delivered in `chunks`, as a session would:
// append, frame until kNeedMore, discard garbled bytes.
struct StreamResult {
  std::vector<std::string> messages;
  std::vector<std::string> discarded;
};

StreamResult run_stream(const std::vector<std::string>& chunks, const FrameOptions& options = {}) {
  StreamResult out;
  std::string buffer;
  for (const std::string& chunk : chunks) {
    buffer += chunk;
    for (;;) {
      const FrameResult r = frame(buffer, options);
      if (r.status == FrameStatus::kNeedMore) {
        EXPECT_EQ(r.size, 0u);
        break;
      }
      EXPECT_GE(r.size, 1u);
      EXPECT_LE(r.size, buffer.size());
      if (r.status == FrameStatus::kComplete) {
        out.messages.push_back(buffer.substr(0, r.size));
      } else {
        out.discarded.push_back(buffer.substr(0, r.size));
      }
      buffer.erase(0, r.size);
    }
  }
  return out;
}

TEST(Framing, frames_the_reference_new_order_single) {
  const std::string m = reference_order();
  ASSERT_EQ(m.size(), 230u);  // the LAB.md reference: 9=206, 10=110
  EXPECT_NE(m.find(soh("|9=206|")), std::string::npos);
  EXPECT_EQ(m.substr(m.size() - 7), soh("10=110|"));
  const FrameResult r = frame_exact(m);
  EXPECT_EQ(r.status, FrameStatus::kComplete);
  EXPECT_EQ(r.error, FrameError::kNone);
  EXPECT_EQ(r.size, m.size());
}

TEST(Framing, frames_each_golden_message_and_ignores_what_follows) {
  for (const std::string& m : golden_messages()) {
    const FrameResult r = frame_exact(m + "8=FIX.4.4|9=");
    EXPECT_EQ(r.status, FrameStatus::kComplete) << m;
    EXPECT_EQ(r.size, m.size()) << m;
  }
}

TEST(Framing, needs_more_for_every_proper_prefix_of_a_valid_message) {
  for (const std::string& m : golden_messages()) {
    for (std::size_t k = 0; k < m.size(); ++k) {
      const FrameResult r = frame_exact(std::string_view(m).substr(0, k));
      ASSERT_EQ(r.status, FrameStatus::kNeedMore) << "prefix " << k << " of " << m;
      ASSERT_EQ(r.size, 0u);
    }
  }
}

TEST(Framing, frames_several_messages_in_one_buffer) {
  const std::vector<std::string> golden = golden_messages();
  std::string all;
  for (const auto& m : golden) all += m;
  const StreamResult r = run_stream({all});
  EXPECT_EQ(r.messages, golden);
  EXPECT_TRUE(r.discarded.empty());
}

TEST(Framing, frames_a_stream_split_at_every_byte_boundary) {
  const std::string a = reference_order(), b = heartbeat(3), c = golden_messages()[7];
  const std::string all = a + b + c;
  for (std::size_t cut = 0; cut <= all.size(); ++cut) {
    const StreamResult r = run_stream({all.substr(0, cut), all.substr(cut)});
    ASSERT_EQ(r.messages, (std::vector<std::string>{a, b, c})) << "cut at " << cut;
    ASSERT_TRUE(r.discarded.empty());
  }
}

TEST(Framing, frames_a_stream_delivered_one_byte_at_a_time) {
  const std::string all = reference_order() + heartbeat(3) + soh("garbage|") + heartbeat(4);
  std::vector<std::string> chunks;
  for (const char c : all) chunks.emplace_back(1, c);
  const StreamResult r = run_stream(chunks);
  EXPECT_EQ(r.messages, (std::vector<std::string>{reference_order(), heartbeat(3), heartbeat(4)}));
  std::string discarded;
  for (const auto& d : r.discarded) discarded += d;
  EXPECT_EQ(discarded, soh("garbage|"));
}

TEST(Framing, empty_buffer_needs_more) {
  const FrameResult r = frame({});
  EXPECT_EQ(r.status, FrameStatus::kNeedMore);
  EXPECT_EQ(r.size, 0u);
}

TEST(Framing, only_a_begin_string_needs_more) {
  EXPECT_EQ(frame_exact(soh("8=FIX.4.4|")).status, FrameStatus::kNeedMore);
  EXPECT_EQ(frame_exact(soh("8=FIXT.1.1|9")).status, FrameStatus::kNeedMore);
  EXPECT_EQ(frame_exact("8=FI").status, FrameStatus::kNeedMore);
}

TEST(Framing, rejects_when_checksum_does_not_match) {
  std::string m = heartbeat(2);
  const std::size_t v = m.size() - 4;  // first checksum digit
  m[v] = m[v] == '0' ? '1' : '0';
  const FrameResult r = frame_exact(m + heartbeat(3));
  EXPECT_EQ(r.status, FrameStatus::kGarbled);
  EXPECT_EQ(r.error, FrameError::kBadCheckSum);
  EXPECT_EQ(r.size, m.size());
  const StreamResult s = run_stream({m + heartbeat(3)});
  EXPECT_EQ(s.messages, std::vector<std::string>{heartbeat(3)});
}

TEST(Framing, accepts_a_wrong_checksum_when_verification_is_off) {
  std::string m = heartbeat(2);
  const std::size_t v = m.size() - 4;
  m[v] = m[v] == '0' ? '1' : '0';
  FrameOptions options;
  options.verify_checksum = false;
  const FrameResult r = frame_exact(m, options);
  EXPECT_EQ(r.status, FrameStatus::kComplete);
  EXPECT_EQ(r.size, m.size());
  // The shape is still checked.
  const std::string bad = soh("8=FIX.4.4|9=5|35=0|10=12|");
  EXPECT_EQ(frame_exact(bad, options).error, FrameError::kBadCheckSum);
}

TEST(Framing, rejects_checksums_that_are_not_three_digits) {
  // Conformance 3b (10=256) and 2d (10=0): dropped whole, the next message framed.
  for (const char* trailer : {"10=256|", "10=0|", "10=1234|", "10=|", "10=1a2|"}) {
    const std::string body = soh("35=0|34=2|49=TW44|52=20240101-12:00:00|56=ISLD|");
    const std::string m = "8=FIX.4.4" + std::string(1, kSoh) + "9=" + std::to_string(body.size()) + kSoh + body +
                          soh(trailer);
    const FrameResult r = frame_exact(m + heartbeat(3));
    EXPECT_EQ(r.status, FrameStatus::kGarbled) << trailer;
    EXPECT_EQ(r.error, FrameError::kBadCheckSum) << trailer;
    EXPECT_EQ(r.size, m.size()) << trailer;
  }
}

TEST(Framing, rejects_when_body_length_is_too_short_and_discards_through_its_trailer) {
  // Conformance 2m: 9=30 on a longer body; the next message is processed.
  const std::string body = "35=D|34=2|49=TW44|52=20240101-12:00:00|56=ISLD|11=ID|21=3|40=1|54=1|55=INTC|";
  const std::string bad = make_with_length("FIX.4.4", body, 30);
  const std::string good = heartbeat(3);
  const FrameResult r = frame_exact(bad + good);
  EXPECT_EQ(r.status, FrameStatus::kGarbled);
  EXPECT_EQ(r.error, FrameError::kNoCheckSum);
  EXPECT_EQ(r.size, bad.size());
  EXPECT_EQ(run_stream({bad + good}).messages, std::vector<std::string>{good});
  // One byte short: the trailer is found one byte later than declared.
  const std::string one_short = make_with_length("FIX.4.4", body, static_cast<long long>(body.size()) - 1);
  const FrameResult r1 = frame_exact(one_short + good);
  EXPECT_EQ(r1.status, FrameStatus::kGarbled);
  EXPECT_EQ(r1.size, one_short.size());
}

TEST(Framing, body_length_too_long_swallows_the_next_message) {
  // Conformance 2m: "a length that is too long will combine with the next
  // message and be ignored".
  const std::string body = "35=D|34=4|49=TW44|52=20240101-12:00:00|56=ISLD|11=ID|21=3|40=1|54=1|55=INTC|";
  const std::string actual = make("FIX.4.4", body);
  const std::size_t real_length = soh(body).size();
  for (const long long extra : {1LL, 7LL, 14LL}) {
    const std::string bad = make_with_length("FIX.4.4", body, static_cast<long long>(real_length) + extra);
    const std::string next = heartbeat(5), after = heartbeat(6);
    // Alone in the buffer: wait for the declared length and a trailer.
    EXPECT_EQ(frame_exact(bad).status, FrameStatus::kNeedMore) << extra;
    const FrameResult r = frame_exact(bad + next + after);
    EXPECT_EQ(r.status, FrameStatus::kGarbled) << extra;
    EXPECT_EQ(r.error, FrameError::kNoCheckSum) << extra;
    EXPECT_EQ(r.size, bad.size() + next.size()) << extra;
    EXPECT_EQ(run_stream({bad, next, after}).messages, std::vector<std::string>{after}) << extra;
  }
  (void)actual;
}

TEST(Framing, truncated_message_followed_by_a_valid_one_is_dropped_with_it) {
  // QuickFIX cuts at the first trailer after the declared end: the truncated
  // message takes the following one with it.
  const std::string truncated = soh("8=FIX.4.4|9=60|35=0|34=2|49=TW");
  const std::string good = heartbeat(3);
  ASSERT_LT(truncated.size(), 60u + 15u);
  const StreamResult r = run_stream({truncated, good, heartbeat(4)});
  ASSERT_EQ(r.discarded.size(), 1u);
  EXPECT_EQ(r.discarded[0], truncated + good);
  EXPECT_EQ(r.messages, std::vector<std::string>{heartbeat(4)});
}

TEST(Framing, rejects_a_huge_body_length_at_once_without_waiting) {
  const std::string good = heartbeat(3);
  for (const char* length : {"1000000000000", "99999999999999999999999", "18446744073709551616"}) {
    const std::string bad = soh("8=FIX.4.4|9=") + length + soh("|35=0|");
    const FrameResult r = frame_exact(bad + good);
    EXPECT_EQ(r.status, FrameStatus::kGarbled) << length;
    EXPECT_EQ(r.error, FrameError::kBodyLengthTooLarge) << length;
    EXPECT_EQ(r.size, bad.size()) << length;  // resynchronised at the next 8=FIX
    // Even before the SOH that ends the digits has arrived.
    const std::string partial = "8=FIX.4.4" + std::string(1, kSoh) + "9=" + length;
    EXPECT_EQ(frame_exact(partial).status, FrameStatus::kGarbled) << length;
  }
  // With no limit at all the digits still cannot overflow.
  FrameOptions unlimited;
  unlimited.max_body_length = static_cast<std::size_t>(-1);
  const FrameResult r = frame_exact(soh("8=FIX.4.4|9=99999999999999999999999|35=0|"), unlimited);
  EXPECT_EQ(r.status, FrameStatus::kGarbled);
}

TEST(Framing, body_length_at_the_limit_is_accepted) {
  const std::string m = heartbeat(2);
  FrameOptions options;
  options.max_body_length = soh("35=0|34=2|49=TW44|52=20240101-12:00:00|56=ISLD|").size();
  EXPECT_EQ(frame_exact(m, options).status, FrameStatus::kComplete);
  options.max_body_length -= 1;
  EXPECT_EQ(frame_exact(m, options).error, FrameError::kBodyLengthTooLarge);
}

TEST(Framing, rejects_a_body_length_that_is_not_a_number) {
  const std::string good = heartbeat(3);
  for (const char* bad_text : {"8=FIX.4.4|9=abc|35=0|", "8=FIX.4.4|9=-5|35=0|", "8=FIX.4.4|9=|35=0|",
                               "8=FIX.4.4|9=5 |35=0|", "8=FIX.4.4|35=0|9=5|", "8=FIX.4.4|99=5|"}) {
    const std::string bad = soh(bad_text);
    const FrameResult r = frame_exact(bad + good);
    EXPECT_EQ(r.status, FrameStatus::kGarbled) << bad_text;
    EXPECT_EQ(r.error, FrameError::kBadBodyLength) << bad_text;
    EXPECT_EQ(r.size, bad.size()) << bad_text;
  }
  // Endless leading zeros do not hold the stream.
  const FrameResult z = frame_exact(soh("8=FIX.4.4|9=") + std::string(40, '0'));
  EXPECT_EQ(z.error, FrameError::kBadBodyLength);
}

TEST(Framing, skips_bytes_before_the_begin_string) {
  // Conformance 2t: "35=0|8=FIX.4.4|..." starts with a stray field.
  const std::string good = heartbeat(2);
  const std::string stray = soh("35=0|");
  const FrameResult r = frame_exact(stray + good);
  EXPECT_EQ(r.status, FrameStatus::kGarbled);
  EXPECT_EQ(r.error, FrameError::kNoBeginString);
  EXPECT_EQ(r.size, stray.size());
  // "8=" alone (not "8=FIX") is not a start.
  const FrameResult r2 = frame_exact(soh("8=XYZ|") + good);
  EXPECT_EQ(r2.size, 6u);
}

TEST(Framing, frames_a_message_after_64_KiB_of_garbage) {
  std::string garbage(64 * 1024, 'x');
  for (std::size_t i = 0; i < garbage.size(); i += 7) garbage[i] = static_cast<char>(i % 2 ? kSoh : '=');
  for (std::size_t i = 3; i < garbage.size(); i += 97) garbage[i] = '8';
  const std::string good = reference_order();
  const StreamResult r = run_stream({garbage + good});
  EXPECT_EQ(r.messages, std::vector<std::string>{good});
  ASSERT_EQ(r.discarded.size(), 1u);
  EXPECT_EQ(r.discarded[0].size(), garbage.size());
  // Same garbage arriving in 4 KiB reads, with the message split across two.
  std::string all = garbage + good;
  std::vector<std::string> chunks;
  for (std::size_t i = 0; i < all.size(); i += 4096) chunks.push_back(all.substr(i, 4096));
  EXPECT_EQ(run_stream(chunks).messages, std::vector<std::string>{good});
}

TEST(Framing, keeps_a_partial_begin_string_at_the_end_of_garbage) {
  for (const std::string tail : {"8", "8=", "8=F", "8=FI"}) {
    const std::string buffer = "garbage" + tail;
    const FrameResult r = frame_exact(buffer);
    EXPECT_EQ(r.status, FrameStatus::kGarbled) << tail;
    EXPECT_EQ(r.size, 7u) << tail;
  }
  EXPECT_EQ(frame_exact("garbage8=FX").size, 11u);
  EXPECT_EQ(frame_exact("x").size, 1u);
}

TEST(Framing, garbles_an_overlong_begin_string) {
  const std::string bad = "8=FIX" + std::string(30, '.');
  const FrameResult r = frame_exact(bad + heartbeat(2));
  EXPECT_EQ(r.status, FrameStatus::kGarbled);
  EXPECT_EQ(r.error, FrameError::kNoBeginString);
  EXPECT_EQ(r.size, bad.size());
  EXPECT_EQ(frame_exact("8=FIX.4.4.4.4").status, FrameStatus::kNeedMore);  // might still end
}

TEST(Framing, missing_soh_before_the_checksum_waits_then_gives_up_past_the_limit) {
  // "...56=ISLD10=123|": no "^10=" where the body ends.
  const std::string bad = soh("8=FIX.4.4|9=12|35=0|56=ISLD10=123|");
  EXPECT_EQ(frame_exact(bad).status, FrameStatus::kNeedMore);
  FrameOptions small;
  small.max_body_length = 64;
  const std::string filler(200, 'z');
  const FrameResult r = frame_exact(bad + filler + heartbeat(2), small);
  EXPECT_EQ(r.status, FrameStatus::kGarbled);
  EXPECT_EQ(r.error, FrameError::kNoCheckSum);
  EXPECT_EQ(r.size, bad.size() + filler.size());
  // A trailer with no closing SOH is bounded the same way.
  const std::string open = soh("8=FIX.4.4|9=5|35=0|10=") + std::string(200, '1');
  EXPECT_EQ(frame_exact(open, small).error, FrameError::kNoCheckSum);
  EXPECT_EQ(frame_exact(open).status, FrameStatus::kNeedMore);
}

TEST(Framing, a_checksum_lookalike_inside_raw_data_does_not_end_the_message) {
  const std::string data = soh("ab|10=123|cd");
  const std::string m = make("FIX.4.4", "35=0|34=2|95=" + std::to_string(data.size()) + "|96=ab|10=123|cd|");
  const FrameResult r = frame_exact(m + heartbeat(3));
  EXPECT_EQ(r.status, FrameStatus::kComplete);
  EXPECT_EQ(r.size, m.size());
}

TEST(Framing, zero_body_length_frames_an_empty_body) {
  const std::string m = make("FIX.4.4", "");
  const FrameResult r = frame_exact(m);
  EXPECT_EQ(r.status, FrameStatus::kComplete);
  EXPECT_EQ(r.size, m.size());
}

TEST(Framing, error_texts_are_distinct) {
  EXPECT_NE(to_string(FrameError::kBadCheckSum), to_string(FrameError::kNoCheckSum));
  EXPECT_EQ(to_string(FrameError::kNone), "none");
}

}  // namespace
}  // namespace hft::codec
