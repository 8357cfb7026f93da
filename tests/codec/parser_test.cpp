// MessageView::parse(), its O(1) index and typed getters, GroupReader, and
// the free value parsers.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hft/codec/parser.hpp"
#include "support/alloc_counter.hpp"
#include "support/fix_text.hpp"

namespace hft::codec {
namespace {

using test::soh;

std::string make(std::string_view begin, std::string_view body) { return test::with_trailer(begin, soh(body)); }

const char* const kNewOrderBody =
    "35=D|34=2|49=CLIENT1|52=20261130-14:36:30.691|56=EXECUTOR|50=SNDR_SUB|57=SRVR_SUB|11=1|55=NOKIA.HE|"
    "54=1|38=10|44=10000|40=2|59=0|453=2|448=PARTY1|447=D|452=1|448=PARTY2|447=D|452=3|"
    "60=20261130-14:36:30.691|";
const char* const kExecReportBody =
    "35=8|34=7|49=EXECUTOR|52=20261130-14:36:30.692123|56=CLIENT1|37=O1|11=1|17=E1|150=F|39=2|"
    "55=NOKIA.HE|54=1|38=10|44=10000|32=10|31=9999.75|151=0|14=10|6=9999.75|60=20261130-14:36:30.692123456|";

std::string reference_order() { return make("FIXT.1.1", kNewOrderBody); }
std::string execution_report() { return make("FIX.4.4", kExecReportBody); }
std::string logon() { return make("FIX.4.4", "35=A|34=1|49=TW44|52=20240101-12:00:00.000|56=ISLD|98=0|108=30|141=Y|"); }
std::string sequence_reset() {
  return make("FIX.4.4", "35=4|34=5|49=ISLD|52=20240101-12:00:00|56=TW44|43=Y|122=20240101-11:00:00|123=N|36=9|");
}

// Parses from a heap block of exactly the text's size (ASan catches overreads).
struct ExactText {
  explicit ExactText(std::string_view s) : block(std::make_unique<char[]>(s.size() + 1)), size(s.size()) {
    if (!s.empty()) std::memcpy(block.get(), s.data(), s.size());
  }
  [[nodiscard]] std::string_view view() const { return {block.get(), size}; }
  std::unique_ptr<char[]> block;
  std::size_t size;
};

class ParserTest : public ::testing::Test {
 protected:
  ParseStatus parse(std::string_view text) {
    text_ = std::make_unique<ExactText>(text);
    return view->parse(text_->view());
  }
  std::unique_ptr<MessageView> view = std::make_unique<MessageView>();
  std::unique_ptr<ExactText> text_;
};

TEST_F(ParserTest, parses_the_reference_new_order_single) {
  const std::string m = reference_order();
  ASSERT_EQ(parse(m), ParseStatus::kOk);
  EXPECT_EQ(view->size(), 25u);
  EXPECT_EQ(view->field(0).tag, 8);
  EXPECT_EQ(view->value_at(0), "FIXT.1.1");
  EXPECT_EQ(view->get(9), "206");
  EXPECT_EQ(view->msg_type(), "D");
  EXPECT_EQ(view->get(tag::kCheckSum), "110");
  EXPECT_EQ(view->find(tag::kCheckSum), 24);
  EXPECT_EQ(view->get(tag::kSenderCompID), "CLIENT1");
  EXPECT_EQ(view->get(tag::kSymbol), "NOKIA.HE");
  EXPECT_EQ(view->tag_text(3), "34");
  std::int64_t seq = 0;
  EXPECT_TRUE(view->get_int(tag::kMsgSeqNum, seq));
  EXPECT_EQ(seq, 2);
  std::uint64_t qty = 0;
  EXPECT_TRUE(view->get_uint(tag::kOrderQty, qty));
  EXPECT_EQ(qty, 10u);
  Decimal px;
  EXPECT_TRUE(view->get_decimal(tag::kPrice, px));
  EXPECT_EQ(px, (Decimal{10000, 0}));
  char side = 0;
  EXPECT_TRUE(view->get_char(tag::kSide, side));
  EXPECT_EQ(side, '1');
  std::int64_t ns = 0;
  EXPECT_TRUE(view->get_timestamp(tag::kSendingTime, ns));
  EXPECT_EQ(ns, 1796049390691000000);
  // Repeated group fields: find() gives the first, find_from() the next ones.
  const int first = view->find(tag::kPartyID);
  ASSERT_GE(first, 0);
  EXPECT_EQ(view->value_at(static_cast<std::size_t>(first)), "PARTY1");
  const int second = view->find_from(tag::kPartyID, static_cast<std::size_t>(first) + 1);
  ASSERT_GT(second, first);
  EXPECT_EQ(view->value_at(static_cast<std::size_t>(second)), "PARTY2");
  EXPECT_EQ(view->find_from(tag::kPartyID, static_cast<std::size_t>(second) + 1), -1);
  EXPECT_EQ(view->find_from(tag::kSymbol, 0), view->find(tag::kSymbol));
}

TEST_F(ParserTest, value_offsets_point_into_the_message_text) {
  const std::string m = reference_order();
  ASSERT_EQ(parse(m), ParseStatus::kOk);
  for (std::size_t i = 0; i < view->size(); ++i) {
    const Field& f = view->field(i);
    EXPECT_EQ(view->value(f).data(), view->text().data() + f.value_offset);
    EXPECT_EQ(view->text()[f.value_offset + f.value_length], kSoh);
    EXPECT_EQ(view->text()[f.value_offset - 1], '=');
    EXPECT_EQ(std::to_string(f.tag), view->tag_text(i));
  }
}

TEST_F(ParserTest, parses_an_execution_report_with_prices_and_precise_times) {
  ASSERT_EQ(parse(execution_report()), ParseStatus::kOk);
  EXPECT_EQ(view->msg_type(), "8");
  Decimal avg;
  EXPECT_TRUE(view->get_decimal(tag::kAvgPx, avg));
  EXPECT_EQ(avg, (Decimal{999975, 2}));
  char exec_type = 0;
  EXPECT_TRUE(view->get_char(tag::kExecType, exec_type));
  EXPECT_EQ(exec_type, 'F');
  std::int64_t sending = 0, transact = 0;
  EXPECT_TRUE(view->get_timestamp(tag::kSendingTime, sending));
  EXPECT_EQ(sending, 1796049390692123000);
  EXPECT_TRUE(view->get_timestamp(tag::kTransactTime, transact));
  EXPECT_EQ(transact, 1796049390692123456);
  std::uint64_t leaves = 99;
  EXPECT_TRUE(view->get_uint(tag::kLeavesQty, leaves));
  EXPECT_EQ(leaves, 0u);
}

TEST_F(ParserTest, parses_admin_messages) {
  ASSERT_EQ(parse(logon()), ParseStatus::kOk);
  EXPECT_EQ(view->msg_type(), "A");
  std::int64_t hb = 0;
  EXPECT_TRUE(view->get_int(tag::kHeartBtInt, hb));
  EXPECT_EQ(hb, 30);
  bool reset = false;
  EXPECT_TRUE(view->get_bool(tag::kResetSeqNumFlag, reset));
  EXPECT_TRUE(reset);

  ASSERT_EQ(parse(sequence_reset()), ParseStatus::kOk);
  bool gap_fill = true, poss_dup = false;
  EXPECT_TRUE(view->get_bool(tag::kGapFillFlag, gap_fill));
  EXPECT_FALSE(gap_fill);
  EXPECT_TRUE(view->get_bool(tag::kPossDupFlag, poss_dup));
  EXPECT_TRUE(poss_dup);
  std::int64_t new_seq = 0;
  EXPECT_TRUE(view->get_int(tag::kNewSeqNo, new_seq));
  EXPECT_EQ(new_seq, 9);

  ASSERT_EQ(parse(make("FIX.4.4", "35=3|34=6|49=ISLD|52=20240101-12:00:00|56=TW44|45=3|371=44|372=D|373=5|"
                                  "58=Value is incorrect (out of range) for this tag|")),
            ParseStatus::kOk);
  EXPECT_EQ(view->get(tag::kText), "Value is incorrect (out of range) for this tag");
  std::int64_t reason = 0;
  EXPECT_TRUE(view->get_int(tag::kSessionRejectReason, reason));
  EXPECT_EQ(reason, 5);
}

TEST_F(ParserTest, reusing_a_view_forgets_the_previous_message) {
  ASSERT_EQ(parse(reference_order()), ParseStatus::kOk);
  ASSERT_TRUE(view->has(tag::kPartyID));
  ASSERT_EQ(parse(logon()), ParseStatus::kOk);
  EXPECT_FALSE(view->has(tag::kPartyID));
  EXPECT_FALSE(view->has(tag::kSymbol));
  EXPECT_EQ(view->get(tag::kSymbol), "");
  EXPECT_EQ(view->find_from(tag::kPartyID, 0), -1);
  EXPECT_TRUE(view->has(tag::kHeartBtInt));
  // Many parses in a row keep answering correctly.
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(parse(i % 2 ? reference_order() : logon()), ParseStatus::kOk);
    ASSERT_EQ(view->has(tag::kSymbol), i % 2 == 1);
  }
}

TEST(Parser, a_view_never_parsed_is_empty) {
  auto view = std::make_unique<MessageView>();
  EXPECT_EQ(view->size(), 0u);
  EXPECT_EQ(view->find(0), -1);
  EXPECT_EQ(view->find(35), -1);
  EXPECT_EQ(view->find(9000), -1);
  EXPECT_EQ(view->tag_text(0), "");
}

TEST_F(ParserTest, empty_text_is_refused) {
  EXPECT_EQ(parse(""), ParseStatus::kEmpty);
  EXPECT_EQ(view->size(), 0u);
}

TEST_F(ParserTest, non_numeric_tag_stops_with_the_field_kept) {
  // Conformance 2d: "4garbled9=TW".
  const std::string text = soh("8=FIX.4.4|9=52|35=0|34=2|4garbled9=TW|52=20240101-12:00:00|56=ISLD|10=000|");
  EXPECT_EQ(parse(text), ParseStatus::kBadTag);
  ASSERT_EQ(view->size(), 5u);
  EXPECT_EQ(view->field(4).tag, -1);
  EXPECT_EQ(view->tag_text(4), "4garbled9");
  EXPECT_EQ(view->value_at(4), "TW");
  EXPECT_EQ(view->get(tag::kMsgSeqNum), "2");  // fields before it stay visible
  EXPECT_FALSE(view->has(tag::kSendingTime));
  for (const char* bad : {"8=FIX.4.4|=x|", "8=FIX.4.4|3 5=x|", "8=FIX.4.4|-=x|", "8=FIX.4.4|35a=x|",
                          "8=FIX.4.4|99999999999=x|", "8=FIX.4.4|+35=x|"}) {
    EXPECT_EQ(parse(soh(bad)), ParseStatus::kBadTag) << bad;
    EXPECT_EQ(view->size(), 2u) << bad;
  }
}

TEST_F(ParserTest, zero_and_negative_tags_are_kept_as_numbers) {
  ASSERT_EQ(parse(soh("8=FIX.4.4|9=20|35=0|-1=neg|0=zero|007=seven|10=000|")), ParseStatus::kOk);
  EXPECT_EQ(view->field(3).tag, -1);
  EXPECT_EQ(view->tag_text(3), "-1");
  EXPECT_EQ(view->get(-1), "neg");
  EXPECT_EQ(view->field(4).tag, 0);
  EXPECT_EQ(view->get(0), "zero");
  EXPECT_EQ(view->get(7), "seven");
  EXPECT_EQ(view->tag_text(5), "007");
}

TEST_F(ParserTest, a_field_without_equals_or_final_soh_is_a_missing_delimiter) {
  EXPECT_EQ(parse(soh("8=FIX.4.4|9=5|35D|10=000|")), ParseStatus::kMissingDelimiter);
  EXPECT_EQ(view->size(), 2u);
  EXPECT_EQ(parse(soh("8=FIX.4.4|9=5|35=D")), ParseStatus::kMissingDelimiter);
  EXPECT_EQ(view->size(), 2u);
  EXPECT_EQ(parse(soh("8=FIX.4.4|9=5|35=D|10")), ParseStatus::kMissingDelimiter);
  EXPECT_EQ(view->size(), 3u);
  EXPECT_EQ(view->msg_type(), "D");
  // A value may contain '=' (a missing SOH joins two fields into one value).
  ASSERT_EQ(parse(soh("8=FIX.4.4|58=a=b|35=0 34=2|")), ParseStatus::kOk);
  EXPECT_EQ(view->get(tag::kText), "a=b");
  EXPECT_EQ(view->msg_type(), "0 34=2");
  // Empty values are fields too.
  ASSERT_EQ(parse(soh("8=FIX.4.4|58=|35=0|")), ParseStatus::kOk);
  EXPECT_TRUE(view->has(tag::kText));
  EXPECT_EQ(view->get(tag::kText), "");
}

TEST_F(ParserTest, raw_data_may_contain_soh_and_equals) {
  const std::string data = soh("a|b=c|10=123|");
  const std::string m =
      make("FIX.4.4", "35=0|34=2|95=" + std::to_string(data.size()) + "|96=a|b=c|10=123||58=after|");
  ASSERT_EQ(parse(m), ParseStatus::kOk);
  EXPECT_EQ(view->get(tag::kRawData), data);
  EXPECT_EQ(view->get(tag::kText), "after");
  EXPECT_EQ(view->find(tag::kCheckSum), static_cast<int>(view->size()) - 1);
  // XmlData (212/213) and Signature (93/89) pairs too.
  const std::string xml = soh("<x a=\"1\">|</x>");
  ASSERT_EQ(parse(make("FIX.4.4", "35=0|212=" + std::to_string(xml.size()) + "|213=" + xml + "|93=3|89=|=||")),
            ParseStatus::kOk);
  EXPECT_EQ(view->get(tag::kXmlData), xml);
  EXPECT_EQ(view->get(tag::kSignature), soh("|=|"));
  // An empty data field.
  ASSERT_EQ(parse(soh("8=FIX.4.4|95=0|96=|10=000|")), ParseStatus::kOk);
  EXPECT_EQ(view->get(tag::kRawData), "");
  // A length tag not followed by its data tag is an ordinary field.
  ASSERT_EQ(parse(soh("8=FIX.4.4|95=abc|58=x|96=y|10=000|")), ParseStatus::kOk);
  EXPECT_EQ(view->get(tag::kRawData), "y");
}

TEST_F(ParserTest, rejects_a_bad_data_length) {
  for (const char* bad : {"8=FIX.4.4|95=abc|96=x|10=000|", "8=FIX.4.4|95=-1|96=x|10=000|",
                          "8=FIX.4.4|95=100|96=short|10=000|", "8=FIX.4.4|95=3|96=abcdef|10=000|",
                          "8=FIX.4.4|95=99999999999999999999999|96=x|", "8=FIX.4.4|95=5|96=a|b",
                          "8=FIX.4.4|95=|96=x|"}) {
    EXPECT_EQ(parse(soh(bad)), ParseStatus::kBadDataLength) << bad;
    EXPECT_EQ(view->size(), 2u) << bad;
    EXPECT_EQ(view->field(1).tag, tag::kRawDataLength) << bad;
  }
  // Data cut short at the very end of the text: the text does not end in SOH.
  EXPECT_EQ(parse(soh("8=FIX.4.4|95=2|96=ab")), ParseStatus::kMissingDelimiter);
}

TEST_F(ParserTest, tags_beyond_the_index_are_found_by_scanning) {
  ASSERT_EQ(parse(soh("8=FIX.4.4|35=U1|5000=a|2047=b|2048=c|9999=d|5000=e|10=000|")), ParseStatus::kOk);
  EXPECT_EQ(view->get(5000), "a");
  EXPECT_EQ(view->get(2047), "b");
  EXPECT_EQ(view->get(2048), "c");
  EXPECT_EQ(view->get(9999), "d");
  const int first = view->find(5000);
  EXPECT_EQ(view->value_at(static_cast<std::size_t>(view->find_from(5000, static_cast<std::size_t>(first) + 1))), "e");
  EXPECT_EQ(view->find(7777), -1);
  EXPECT_EQ(view->find(std::numeric_limits<int>::min()), -1);
}

TEST_F(ParserTest, refuses_more_fields_than_the_views_capacity_keeping_those_that_fit) {
  for (const std::size_t capacity : {std::size_t{3}, std::size_t{1024}, MessageView::kDefaultMaxFields}) {
    MessageView small(capacity);
    EXPECT_EQ(small.max_fields(), capacity);
    std::string text = "8=FIX.4.4|35=0|";
    for (std::size_t i = 2; i < capacity; ++i) text += "58=x|";
    const ExactText fits(soh(text));
    ASSERT_EQ(small.parse(fits.view()), ParseStatus::kOk) << capacity;
    EXPECT_EQ(small.size(), capacity);
    text += "10=000|";
    const ExactText over(soh(text));
    EXPECT_EQ(small.parse(over.view()), ParseStatus::kTooManyFields) << capacity;
    EXPECT_EQ(small.size(), capacity);
    EXPECT_EQ(small.msg_type(), capacity >= 2 ? "0" : "");
    EXPECT_FALSE(small.has(10));
  }
}

TEST_F(ParserTest, a_default_view_holds_thousands_of_fields) {
  std::string text = "8=FIX.4.4|9=5|35=y|";
  for (int i = 0; i < 3000; ++i) text += "55=SYM" + std::to_string(i) + "|";
  text += "10=000|";
  ASSERT_EQ(parse(soh(text)), ParseStatus::kOk);
  EXPECT_EQ(view->size(), 3004u);
  EXPECT_EQ(view->get(10), "000");
}

TEST(ParserCapacity, is_clamped_to_at_least_one_field_and_at_most_the_limit) {
  EXPECT_EQ(MessageView(0).max_fields(), 1u);
  EXPECT_EQ(MessageView(MessageView::kMaxFieldsLimit + 1).max_fields(), MessageView::kMaxFieldsLimit);
}

TEST_F(ParserTest, typed_getters_fail_on_absent_or_malformed_values) {
  ASSERT_EQ(parse(soh("8=FIX.4.4|34=x2|38=-5|44=1.2.3|54=12|141=y|52=20240230-00:00:00|10=000|")), ParseStatus::kOk);
  std::int64_t i = 42;
  EXPECT_FALSE(view->get_int(34, i));
  EXPECT_FALSE(view->get_int(999, i));
  EXPECT_EQ(i, 42);
  std::uint64_t u = 42;
  EXPECT_FALSE(view->get_uint(38, u));
  EXPECT_EQ(u, 42u);
  EXPECT_TRUE(view->get_int(38, i));
  EXPECT_EQ(i, -5);
  Decimal d{7, 1};
  EXPECT_FALSE(view->get_decimal(44, d));
  EXPECT_EQ(d, (Decimal{7, 1}));
  char c = 'q';
  EXPECT_FALSE(view->get_char(54, c));
  EXPECT_EQ(c, 'q');
  bool b = true;
  EXPECT_FALSE(view->get_bool(141, b));
  std::int64_t ts = 1;
  EXPECT_FALSE(view->get_timestamp(52, ts));
  EXPECT_EQ(ts, 1);
}

TEST_F(ParserTest, every_prefix_of_a_message_parses_without_reading_past_it) {
  for (const std::string& m : {reference_order(), execution_report(), logon()}) {
    for (std::size_t k = 0; k <= m.size(); ++k) {
      const ParseStatus s = parse(std::string_view(m).substr(0, k));
      if (k == 0) {
        EXPECT_EQ(s, ParseStatus::kEmpty);
      } else if (k == m.size() || m[k - 1] == kSoh) {
        EXPECT_EQ(s, ParseStatus::kOk) << k;
      } else {
        EXPECT_EQ(s, ParseStatus::kMissingDelimiter) << k;
      }
    }
  }
}

TEST_F(ParserTest, group_reader_walks_the_parties_of_the_reference_order) {
  ASSERT_EQ(parse(reference_order()), ParseStatus::kOk);
  auto is_party = [](int t) { return t == tag::kPartyID || t == tag::kPartyIDSource || t == tag::kPartyRole; };
  GroupReader g(*view, view->find(tag::kNoPartyIDs), tag::kPartyID, is_party);
  EXPECT_TRUE(g.count_valid());
  EXPECT_EQ(g.declared(), 2);
  std::vector<std::string> ids, roles;
  while (g.next()) {
    EXPECT_TRUE(g.entry_starts_with_delimiter());
    EXPECT_EQ(g.entry_end() - g.entry_begin(), 3u);
    ids.emplace_back(view->value_at(g.entry_begin()));
    const int role = g.find_in_entry(tag::kPartyRole);
    ASSERT_GE(role, 0);
    roles.emplace_back(view->value_at(static_cast<std::size_t>(role)));
    EXPECT_EQ(g.find_in_entry(tag::kSymbol), -1);
  }
  EXPECT_EQ(g.entries(), 2);
  EXPECT_EQ(ids, (std::vector<std::string>{"PARTY1", "PARTY2"}));
  EXPECT_EQ(roles, (std::vector<std::string>{"1", "3"}));
  EXPECT_EQ(view->field(g.end()).tag, tag::kTransactTime);
}

TEST_F(ParserTest, group_reader_exposes_counts_that_lie) {
  auto is_party = [](int t) { return t == 448 || t == 447 || t == 452; };
  const char* const kParties = "448=A|447=D|452=1|448=B|447=D|452=3|";
  for (const auto& [declared, valid] : std::vector<std::pair<std::string, bool>>{
           {"3", true}, {"1", true}, {"0", true}, {"-1", false}, {"two", false}, {"", false}}) {
    ASSERT_EQ(parse(make("FIX.4.4", "35=D|453=" + declared + "|" + kParties + "55=X|")), ParseStatus::kOk);
    GroupReader g(*view, view->find(453), 448, is_party);
    EXPECT_EQ(g.count_valid(), valid) << declared;
    int walked = 0;
    while (g.next()) ++walked;
    if (valid) {
      EXPECT_EQ(walked, 2) << declared;
      EXPECT_EQ(g.entries(), 2) << declared;
      EXPECT_NE(g.entries(), g.declared()) << declared;
    } else {
      EXPECT_EQ(walked, 0) << declared;
    }
  }
  // An entry that does not start with the delimiter.
  ASSERT_EQ(parse(make("FIX.4.4", "35=D|453=2|447=D|448=A|452=1|448=B|55=X|")), ParseStatus::kOk);
  GroupReader g(*view, view->find(453), 448, is_party);
  ASSERT_TRUE(g.next());
  EXPECT_FALSE(g.entry_starts_with_delimiter());
  EXPECT_EQ(g.entry_end() - g.entry_begin(), 1u);
  ASSERT_TRUE(g.next());
  EXPECT_TRUE(g.entry_starts_with_delimiter());
  ASSERT_TRUE(g.next());
  EXPECT_FALSE(g.next());
  EXPECT_EQ(g.entries(), 3);
  // No count field, or a position past the end.
  GroupReader none(*view, -1, 448, is_party);
  EXPECT_FALSE(none.count_valid());
  EXPECT_FALSE(none.next());
  GroupReader past(*view, 5000, 448, is_party);
  EXPECT_FALSE(past.next());
}

TEST_F(ParserTest, frame_and_parse_of_reference_messages_allocate_nothing) {
  const std::vector<std::string> messages = {reference_order(), execution_report(), logon(), sequence_reset()};
  std::string stream;
  for (const auto& m : messages) stream += m;
  auto is_party = [](int t) { return t == 448 || t == 447 || t == 452; };
  std::size_t framed = 0, fields = 0;
  {
    hft::test::AllocationScope scope;
    std::string_view rest = stream;
    while (!rest.empty()) {
      const FrameResult r = frame(rest);
      if (r.status != FrameStatus::kComplete) break;
      if (view->parse(rest.substr(0, r.size)) != ParseStatus::kOk) break;
      ++framed;
      fields += view->size();
      std::int64_t v = 0;
      Decimal d;
      (void)view->get_int(tag::kMsgSeqNum, v);
      (void)view->get_timestamp(tag::kSendingTime, v);
      (void)view->get_decimal(tag::kPrice, d);
      GroupReader g(*view, view->find(tag::kNoPartyIDs), 448, is_party);
      while (g.next()) {
      }
      rest.remove_prefix(r.size);
    }
    EXPECT_EQ(scope.count(), 0u);
  }
  EXPECT_EQ(framed, messages.size());
  EXPECT_GT(fields, 60u);
}

// A plain byte-at-a-time reading of the rules in parser.hpp, to compare with.
struct RefField {
  int tag;
  std::size_t offset, length;
  bool operator==(const RefField&) const = default;
};

ParseStatus reference_parse(std::string_view t, std::vector<RefField>& out) {
  out.clear();
  if (t.empty()) return ParseStatus::kEmpty;
  std::size_t pos = 0;
  int data_tag = 0;
  std::uint64_t data_length = 0;
  bool data_ok = false;
  while (pos < t.size()) {
    const std::size_t eq = t.find_first_of(std::string_view("=\x01", 2), pos);
    if (eq == std::string_view::npos || t[eq] != '=') return ParseStatus::kMissingDelimiter;
    const std::size_t s = t.find(kSoh, eq + 1);
    if (s == std::string_view::npos) return ParseStatus::kMissingDelimiter;
    if (out.size() == MessageView::kDefaultMaxFields) return ParseStatus::kTooManyFields;
    std::int64_t tag = 0;
    const std::string_view tag_text = t.substr(pos, eq - pos);
    if (!parse_int(tag_text, tag) || tag > std::numeric_limits<std::int32_t>::max() ||
        tag < std::numeric_limits<std::int32_t>::min() || tag_text.empty()) {
      out.push_back({-1, eq + 1, s - eq - 1});
      return ParseStatus::kBadTag;
    }
    std::size_t end = s;
    if (data_tag != 0 && tag == data_tag) {
      if (!data_ok || data_length >= t.size() - (eq + 1) || t[eq + 1 + data_length] != kSoh) {
        return ParseStatus::kBadDataLength;
      }
      end = eq + 1 + data_length;
    }
    out.push_back({static_cast<int>(tag), eq + 1, end - eq - 1});
    int d = 0;
    data_tag = is_length_tag(static_cast<int>(tag), d) ? d : 0;
    if (data_tag != 0) data_ok = parse_uint(t.substr(eq + 1, end - eq - 1), data_length);
    pos = end + 1;
  }
  return ParseStatus::kOk;
}

TEST_F(ParserTest, agrees_with_a_byte_by_byte_reading_on_random_messages) {
  std::uint64_t rng = 0x9e3779b97f4a7c15ULL;
  auto next = [&rng](std::uint64_t bound) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng % bound;
  };
  auto random_bytes = [&](std::size_t len, bool binary) {
    std::string v;
    for (std::size_t i = 0; i < len; ++i) {
      const std::uint64_t r = next(binary ? 6 : 12);
      v += r == 0 ? (binary ? kSoh : 'a') : r == 1 ? '=' : r == 2 && binary ? static_cast<char>(next(256))
                                                                            : static_cast<char>('A' + next(26));
    }
    return v;
  };
  std::vector<RefField> expected;
  int ok_rounds = 0;
  for (int round = 0; round < 4000; ++round) {
    std::string text = "8=FIX.4.4";
    text += kSoh;
    const std::uint64_t fields = next(40);
    for (std::uint64_t f = 0; f < fields; ++f) {
      const std::uint64_t kind = next(60);
      if (kind < 9) {  // a raw data pair, usually with the right length
        const std::size_t len = next(kind < 3 ? 200 : 20);
        const std::string data = random_bytes(len, true);
        const std::size_t declared = next(8) == 0 ? len + next(5) - 2 : len;
        const bool xml = next(2) == 0;
        text += (xml ? "212=" : "95=") + std::to_string(declared) + kSoh + (xml ? "213=" : "96=") + data + kSoh;
      } else if (kind == 9) {  // a tag that is not a plain number
        const char* odd[] = {"-7", "0", "00035", "x1", "", "123456789", "2147483648", "-2147483648", "1-"};
        text += std::string(odd[next(9)]) + "=" + random_bytes(next(5), false) + kSoh;
      } else if (kind == 10) {  // a field with a lost '=' or a lost SOH
        text += next(2) ? "58" + random_bytes(3, false) + kSoh : "58=ab";
      } else {
        text += std::to_string(next(kind < 40 ? 200 : 12000)) + "=" + random_bytes(next(kind >= 55 ? 150 : 12), false) +
                kSoh;
      }
    }
    if (next(4) == 0) text.resize(next(text.size() + 1));
    const ParseStatus want = reference_parse(text, expected);
    const ParseStatus got = parse(text);
    ASSERT_EQ(got, want) << "round " << round;
    ok_rounds += got == ParseStatus::kOk ? 1 : 0;
    ASSERT_EQ(view->size(), expected.size()) << "round " << round;
    for (std::size_t i = 0; i < expected.size(); ++i) {
      const Field& f = view->field(i);
      ASSERT_EQ((RefField{f.tag, f.value_offset, f.value_length}), expected[i]) << "round " << round << " field " << i;
    }
    // The index agrees with a scan for the first occurrence of each tag.
    for (std::size_t i = 0; i < expected.size(); ++i) {
      const int tag = expected[i].tag;
      std::size_t first = 0;
      while (expected[first].tag != tag) ++first;
      ASSERT_EQ(view->find(tag), static_cast<int>(first)) << "round " << round << " tag " << tag;
    }
  }
  EXPECT_GT(ok_rounds, 1000);  // most messages are well formed: the whole walk is compared
}

// ------------------------------------------------------------ value parsers

TEST(ValueParsers, parse_int_accepts_the_int64_range_and_nothing_else) {
  std::int64_t v = 0;
  EXPECT_TRUE(parse_int("0", v));
  EXPECT_EQ(v, 0);
  EXPECT_TRUE(parse_int("-42", v));
  EXPECT_EQ(v, -42);
  EXPECT_TRUE(parse_int("007", v));
  EXPECT_EQ(v, 7);
  EXPECT_TRUE(parse_int("9223372036854775807", v));
  EXPECT_EQ(v, std::numeric_limits<std::int64_t>::max());
  EXPECT_TRUE(parse_int("-9223372036854775808", v));
  EXPECT_EQ(v, std::numeric_limits<std::int64_t>::min());
  v = 5;
  for (const char* bad : {"", "-", "+1", "1a", " 1", "1 ", "9223372036854775808", "-9223372036854775809",
                          "99999999999999999999999", "1.0", "--1"}) {
    EXPECT_FALSE(parse_int(bad, v)) << bad;
  }
  EXPECT_EQ(v, 5);
}

TEST(ValueParsers, parse_uint_accepts_the_uint64_range_and_nothing_else) {
  std::uint64_t v = 0;
  EXPECT_TRUE(parse_uint("18446744073709551615", v));
  EXPECT_EQ(v, std::numeric_limits<std::uint64_t>::max());
  EXPECT_TRUE(parse_uint("0000000000000000000000001", v));
  EXPECT_EQ(v, 1u);
  for (const char* bad : {"", "-1", "18446744073709551616", "1x"}) EXPECT_FALSE(parse_uint(bad, v)) << bad;
}

TEST(ValueParsers, parse_decimal_is_exact_fixed_point) {
  struct Case {
    const char* text;
    std::int64_t mantissa;
    unsigned scale;
  };
  for (const Case& c : std::vector<Case>{{"12.34", 1234, 2},
                                         {"-0.5", -5, 1},
                                         {"10", 10, 0},
                                         {"10.", 10, 0},
                                         {".5", 5, 1},
                                         {"1.50", 150, 2},
                                         {"0", 0, 0},
                                         {"-0", 0, 0},
                                         {"0.000", 0, 3},
                                         {"000123.4500", 1234500, 4},
                                         {"123456789012345678", 123456789012345678, 0},
                                         {"-12345678.9012345678", -123456789012345678, 10},
                                         {"0.000000000000000001", 1, 18},
                                         {"1.00000000000000000000000", 100000000000000000, 17},
                                         {"0.0000000000000000000000", 0, 18}}) {
    Decimal d;
    ASSERT_TRUE(parse_decimal(c.text, d)) << c.text;
    EXPECT_EQ(d.mantissa, c.mantissa) << c.text;
    EXPECT_EQ(d.scale, c.scale) << c.text;
  }
  Decimal d{3, 0};
  for (const char* bad : {"", "-", ".", "-.", "1.2.3", "1e5", "+1", "1,5", " 1", "1234567890123456789",
                          "0.0000000000000000001", "12345678901234567.89", "NaN"}) {
    EXPECT_FALSE(parse_decimal(bad, d)) << bad;
  }
  EXPECT_EQ(d, (Decimal{3, 0}));
}

TEST(ValueParsers, parse_char_and_bool) {
  char c = 0;
  EXPECT_TRUE(parse_char("Z", c));
  EXPECT_EQ(c, 'Z');
  EXPECT_FALSE(parse_char("", c));
  EXPECT_FALSE(parse_char("ZZ", c));
  bool b = false;
  EXPECT_TRUE(parse_bool("Y", b));
  EXPECT_TRUE(b);
  EXPECT_TRUE(parse_bool("N", b));
  EXPECT_FALSE(b);
  for (const char* bad : {"", "y", "n", "YES", "1", "T"}) EXPECT_FALSE(parse_bool(bad, b)) << bad;
}

TEST(ValueParsers, parse_utc_timestamp_converts_to_epoch_nanoseconds) {
  struct Case {
    const char* text;
    std::int64_t ns;
  };
  for (const Case& c : std::vector<Case>{
           {"19700101-00:00:00", 0},
           {"19700101-00:00:01.5", 1'500'000'000},
           {"20261130-14:36:30", 1796049390'000000000},
           {"20261130-14:36:30.691", 1796049390'691000000},
           {"20261130-14:36:30.691123", 1796049390'691123000},
           {"20261130-14:36:30.691123456", 1796049390'691123456},
           {"20240229-23:59:59", 1709251199'000000000},
           {"20240229-23:59:60", 1709251200'000000000},  // leap second
           {"19691231-23:59:59.999", -1'000'000},
           {"22620411-23:47:16.854775807", std::numeric_limits<std::int64_t>::max()},
           {"16770921-00:12:43.145224192", std::numeric_limits<std::int64_t>::min()}}) {
    std::int64_t ns = 0;
    ASSERT_TRUE(parse_utc_timestamp(c.text, ns)) << c.text;
    EXPECT_EQ(ns, c.ns) << c.text;
  }
  std::int64_t ns = 77;
  for (const char* bad :
       {"", "20240101", "20240101-12:00", "20240101-12:00:00.", "20240101-12:00:00.1234567890",
        "20241301-12:00:00", "20240001-12:00:00", "20240132-12:00:00", "20240100-12:00:00", "20230229-12:00:00",
        "21000229-12:00:00", "20240431-12:00:00", "20240101-24:00:00", "20240101-12:60:00", "20240101-12:00:61",
        "20240101 12:00:00", "20240101-12-00:00", "20240101-12:00-00", "2024O101-12:00:00",
        "20240101-12:00:00,123", "20240101-12:00:00.12a", "22620411-23:47:16.854775808", "99991231-23:59:59",
        "16770921-00:12:43.145224191", "00000101-00:00:00"}) {
    EXPECT_FALSE(parse_utc_timestamp(bad, ns)) << bad;
  }
  EXPECT_EQ(ns, 77);
  ASSERT_TRUE(parse_utc_timestamp("20000229-00:00:00", ns));  // 2000 is a leap year
}

TEST(ValueParsers, parse_status_texts_are_distinct) {
  EXPECT_NE(to_string(ParseStatus::kBadTag), to_string(ParseStatus::kBadDataLength));
  EXPECT_EQ(to_string(ParseStatus::kOk), "ok");
}

}  // namespace
}  // namespace hft::codec
