// Typed readers (hft/messages/fix44.hpp) over parsed golden messages: values
// present, absent and malformed, enums, timestamps, groups (nested too).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "hft/codec/parser.hpp"
#include "hft/messages/fix44.hpp"
#include "support/fix_text.hpp"

namespace {

using namespace hft;
using codec::Decimal;
using messages::ValueStatus;

// 2026-11-30 14:36:30.692 UTC
constexpr std::int64_t kTransact = 1'796'049'390'692'000'000LL;

struct Parsed {
  explicit Parsed(std::string_view pipes, std::string_view begin = "FIX.4.4")
      : text(test::with_trailer(begin, test::soh(pipes))), view(std::make_unique<codec::MessageView>()) {
    status = view->parse(text);
  }
  std::string text;
  std::unique_ptr<codec::MessageView> view;
  codec::ParseStatus status;
};

const char* const kExecReport =
    "35=8|34=7|49=EXECUTOR|52=20261130-14:36:30.692|56=CLIENT1|37=O1|11=1|17=E1|150=F|39=2|"
    "55=NOKIA.HE|167=CS|54=1|38=10|44=10000|32=10|31=100.25|151=0|14=10|6=100.25|60=20261130-14:36:30.692|"
    "453=2|448=PARTY1|447=D|452=1|448=PARTY2|447=D|452=3|802=2|523=DESK7|803=1|523=ALICE|803=2|";

TEST(TypedReader, reads_present_fields_with_their_types) {
  const Parsed p(kExecReport);
  ASSERT_EQ(p.status, codec::ParseStatus::kOk);
  const fix44::ExecutionReportReader er(*p.view);
  EXPECT_EQ(*er.order_id(), "O1");
  EXPECT_EQ(*er.exec_type(), fix44::ExecType::kTrade);
  EXPECT_EQ(*er.ord_status(), fix44::OrdStatus::kFilled);
  EXPECT_EQ(*er.side(), fix44::Side::kBuy);
  EXPECT_EQ(*er.last_px(), (Decimal{10025, 2}));
  EXPECT_EQ(*er.order_qty_data().order_qty(), (Decimal{10, 0}));
  EXPECT_EQ(*er.instrument().symbol(), "NOKIA.HE");
  EXPECT_EQ(*er.instrument().security_type(), fix44::SecurityType::kCommonStock);
  EXPECT_EQ(er.transact_time()->epoch_ns, kTransact);
  EXPECT_EQ(er.transact_time()->precision, codec::TimePrecision::kMillis);
  EXPECT_EQ(*er.header().msg_seq_num(), 7U);
  EXPECT_EQ(*er.header().sender_comp_id(), "EXECUTOR");
}

TEST(TypedReader, an_absent_field_is_absent_not_an_error) {
  const Parsed p(kExecReport);
  const fix44::ExecutionReportReader er(*p.view);
  const auto text = er.text();
  EXPECT_EQ(text.status(), ValueStatus::kAbsent);
  EXPECT_FALSE(text.has_value());
  EXPECT_EQ(er.stop_px().value_or(Decimal{-1, 0}), (Decimal{-1, 0}));
  EXPECT_EQ(er.header().poss_dup_flag().status(), ValueStatus::kAbsent);
}

TEST(TypedReader, a_malformed_value_is_bad_value_with_the_received_text) {
  const Parsed p(
      "35=8|34=7|49=EXECUTOR|52=20261130-14:36:30.692|56=CLIENT1|37=O1|17=E1|150=F|39=22|54=1|"
      "151=ten|14=10|6=1.5.0|60=20261399-14:36:30|167=NOTATYPE|");
  ASSERT_EQ(p.status, codec::ParseStatus::kOk);
  const fix44::ExecutionReportReader er(*p.view);
  EXPECT_EQ(er.leaves_qty().status(), ValueStatus::kBadValue);
  EXPECT_EQ(er.leaves_qty().text(), "ten");
  EXPECT_EQ(er.avg_px().status(), ValueStatus::kBadValue);
  EXPECT_EQ(er.ord_status().status(), ValueStatus::kBadValue);  // two characters for a CHAR
  EXPECT_EQ(er.transact_time().status(), ValueStatus::kBadValue);
  EXPECT_EQ(er.instrument().security_type().status(), ValueStatus::kBadValue);
  EXPECT_EQ(er.instrument().security_type().text(), "NOTATYPE");
  EXPECT_TRUE(er.cum_qty().has_value());
}

TEST(TypedReader, a_char_enum_outside_the_dictionary_is_read_as_received) {
  const Parsed p("35=8|34=7|49=E|52=20261130-14:36:30.692|56=C|54=Z|");
  const fix44::ExecutionReportReader er(*p.view);
  ASSERT_TRUE(er.side().has_value());
  EXPECT_EQ(static_cast<char>(*er.side()), 'Z');
}

TEST(TypedReader, iterates_groups_and_nested_groups) {
  const Parsed p(kExecReport);
  const fix44::ExecutionReportReader er(*p.view);
  const auto parties = er.parties().no_party_ids();
  EXPECT_EQ(parties.status(), ValueStatus::kOk);
  EXPECT_EQ(parties.declared(), 2U);
  EXPECT_EQ(parties.size(), 2U);
  std::vector<std::string> ids;
  std::vector<std::string> subs;
  for (const auto party : parties) {
    ids.emplace_back(*party.party_id());
    EXPECT_EQ(*party.party_id_source(), fix44::PartyIDSource::kProprietary);
    for (const auto sub : party.ptys_sub_grp().no_party_sub_ids()) {
      subs.emplace_back(std::string(*sub.party_sub_id()) + "/" +
                        std::to_string(static_cast<int>(*sub.party_sub_id_type())));
    }
  }
  EXPECT_EQ(ids, (std::vector<std::string>{"PARTY1", "PARTY2"}));
  EXPECT_EQ(subs, (std::vector<std::string>{"DESK7/1", "ALICE/2"}));
  // The first entry's role is its own, not the second's.
  EXPECT_EQ(*(*parties.begin()).party_role(), fix44::PartyRole::kExecutingFirm);
}

TEST(TypedReader, a_missing_or_malformed_count_is_an_empty_group_with_a_status) {
  const Parsed absent("35=8|34=7|49=E|52=20261130-14:36:30.692|56=C|37=O1|");
  EXPECT_EQ(fix44::ExecutionReportReader(*absent.view).parties().no_party_ids().status(),
            ValueStatus::kAbsent);
  EXPECT_TRUE(fix44::ExecutionReportReader(*absent.view).parties().no_party_ids().empty());
  const Parsed bad("35=8|34=7|49=E|52=20261130-14:36:30.692|56=C|453=x|448=P|");
  const auto g = fix44::ExecutionReportReader(*bad.view).parties().no_party_ids();
  EXPECT_EQ(g.status(), ValueStatus::kBadValue);
  EXPECT_EQ(g.size(), 0U);
}

TEST(TypedEnums, string_enums_round_trip_through_their_fix_text) {
  for (const auto v :
       {fix44::SecurityType::kCommonStock, fix44::SecurityType::kFuture, fix44::SecurityType::kOption}) {
    fix44::SecurityType back{};
    ASSERT_TRUE(fix44::parse_fix_value(fix44::fix_value(v), back));
    EXPECT_EQ(back, v);
  }
  EXPECT_EQ(fix44::fix_value(fix44::SecurityType::kCommonStock), "CS");
  fix44::SecurityType out = fix44::SecurityType::kFuture;
  EXPECT_FALSE(fix44::parse_fix_value("NOPE", out));
  EXPECT_EQ(out, fix44::SecurityType::kFuture);
  EXPECT_EQ(static_cast<char>(fix44::Side::kSellShort), '5');
  EXPECT_EQ(static_cast<int>(fix44::PartyRole::kClientId), 3);
}

}  // namespace
