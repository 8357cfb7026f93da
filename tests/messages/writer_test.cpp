// Typed writers (hft/messages/fix44.hpp): the bytes are those of the same
// fields written by hand, group counts are enforced, nothing allocates.
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "hft/codec/encoder.hpp"
#include "hft/codec/parser.hpp"
#include "hft/messages/fix44.hpp"
#include "support/alloc_counter.hpp"
#include "support/fix_text.hpp"

namespace {

using namespace hft;
using codec::Decimal;
using codec::TimePrecision;

// 2026-11-30 14:36:30.691 UTC
constexpr std::int64_t kNow = 1'796'049'390'691'000'000LL;

struct Out {
  Out() { EXPECT_TRUE(header.init("FIX.4.4", "CLIENT1", "EXECUTOR")); }
  codec::HeaderTemplate header;
  codec::TimestampFormatter ts;
  char buf[1024] = {};
  codec::MessageWriter w{buf};
  codec::MessageWriter& start(std::string_view type) {
    w.start(header, type, 2, kNow, TimePrecision::kMillis, ts);
    return w;
  }
};

std::string text(const codec::MessageWriter::Result& r) {
  return {r.message.data(), r.message.size()};
}

codec::MessageWriter::Result typed_order(Out& o) {
  fix44::NewOrderSingleWriter order(o.start(fix44::NewOrderSingleWriter::kMsgType), o.ts, "ORD1",
                                    fix44::Side::kBuy, kNow, fix44::OrdType::kLimit);
  order.instrument().symbol("NOKIA.HE");
  order.order_qty_data().order_qty(Decimal{10, 0});
  order.price(Decimal{10050, 2}).time_in_force(fix44::TimeInForce::kDay);
  {
    auto parties = order.parties().no_party_ids(2);
    parties.add("PARTY1")
        .party_id_source(fix44::PartyIDSource::kProprietary)
        .party_role(fix44::PartyRole::kExecutingFirm);
    parties.add("PARTY2")
        .party_id_source(fix44::PartyIDSource::kProprietary)
        .party_role(fix44::PartyRole::kClientId);
  }
  return o.w.finish();
}

codec::MessageWriter::Result hand_order(Out& o) {
  auto& w = o.start("D");
  w.add(11, "ORD1");
  w.add_char(54, '1');
  w.add_timestamp(60, kNow, TimePrecision::kMillis, o.ts);
  w.add_char(40, '2');
  w.add(55, "NOKIA.HE");
  w.add_decimal(38, Decimal{10, 0});
  w.add_decimal(44, Decimal{10050, 2});
  w.add_char(59, '0');
  w.add_uint(453, 2);
  w.add(448, "PARTY1");
  w.add_char(447, 'D');
  w.add_int(452, 1);
  w.add(448, "PARTY2");
  w.add_char(447, 'D');
  w.add_int(452, 3);
  return w.finish();
}

TEST(TypedWriter, new_order_single_is_byte_identical_to_the_hand_written_encoding) {
  Out a, b;
  const auto typed = typed_order(a);
  const auto hand = hand_order(b);
  ASSERT_TRUE(typed.ok());
  ASSERT_TRUE(hand.ok());
  EXPECT_EQ(text(typed), text(hand));
  EXPECT_EQ(text(typed),
            test::with_trailer("FIX.4.4", test::soh("35=D|34=2|49=CLIENT1|52=20261130-14:36:30.691|"
                                                    "56=EXECUTOR|11=ORD1|54=1|60=20261130-14:36:30.691|"
                                                    "40=2|55=NOKIA.HE|38=10|44=100.50|59=0|453=2|"
                                                    "448=PARTY1|447=D|452=1|448=PARTY2|447=D|452=3|")));
}

TEST(TypedWriter, required_fields_go_first_in_dictionary_order) {
  Out o;
  fix44::ExecutionReportWriter er(o.start("8"), o.ts, "O1", "E1", fix44::ExecType::kTrade,
                                  fix44::OrdStatus::kFilled, fix44::Side::kSell, Decimal{0, 0},
                                  Decimal{10, 0}, Decimal{1005, 1});
  er.cl_ord_id("ORD1").last_qty(Decimal{10, 0});
  const auto r = o.w.finish();
  ASSERT_TRUE(r.ok());
  EXPECT_NE(text(r).find(test::soh("|37=O1|17=E1|150=F|39=2|54=2|151=0|14=10|6=100.5|11=ORD1|32=10|")),
            std::string::npos)
      << text(r);
}

TEST(TypedWriter, string_enums_and_booleans_write_their_fix_text) {
  Out o;
  fix44::NewOrderSingleWriter order(o.start("D"), o.ts, "X", fix44::Side::kSell, kNow,
                                    fix44::OrdType::kMarket);
  order.instrument().security_type(fix44::SecurityType::kCommonStock);
  order.locate_reqd(true);
  const auto r = o.w.finish();
  ASSERT_TRUE(r.ok());
  EXPECT_NE(text(r).find(test::soh("|167=CS|114=Y|")), std::string::npos) << text(r);
}

fix44::NewOrderSingleWriter market_order(Out& o) {
  return {o.start("D"), o.ts, "X", fix44::Side::kBuy, kNow, fix44::OrdType::kMarket};
}

TEST(TypedWriter, fewer_group_entries_than_declared_fail_the_message) {
  Out o;
  auto order = market_order(o);
  {
    auto parties = order.parties().no_party_ids(2);
    parties.add("ONLY");
    EXPECT_EQ(parties.added(), 1U);
  }
  EXPECT_EQ(o.w.finish().status, codec::EncodeStatus::kInvalidArgument);
}

TEST(TypedWriter, more_group_entries_than_declared_fail_the_message) {
  Out o;
  auto order = market_order(o);
  {
    auto parties = order.parties().no_party_ids(1);
    parties.add("A");
    parties.add("B");
  }
  EXPECT_EQ(o.w.finish().status, codec::EncodeStatus::kInvalidArgument);
}

TEST(TypedWriter, nested_groups_write_their_own_count_inside_the_entry) {
  Out o;
  auto order = market_order(o);
  {
    auto parties = order.parties().no_party_ids(1);
    auto entry = parties.add("P1");
    entry.party_role(fix44::PartyRole::kClientId);
    auto subs = entry.ptys_sub_grp().no_party_sub_ids(1);
    subs.add("DESK7").party_sub_id_type(fix44::PartySubIDType::kFirm);
  }
  const auto r = o.w.finish();
  ASSERT_TRUE(r.ok());
  EXPECT_NE(text(r).find(test::soh("|453=1|448=P1|452=3|802=1|523=DESK7|803=1|")), std::string::npos)
      << text(r);
}

TEST(TypedWriter, encode_and_read_allocate_nothing) {
  Out o;
  auto view = std::make_unique<codec::MessageView>();
  (void)typed_order(o);  // warm the formatter's cache and the thread formatter
  test::AllocationScope scope;
  const auto r = typed_order(o);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(view->parse({r.message.data(), r.message.size()}), codec::ParseStatus::kOk);
  const fix44::NewOrderSingleReader order(*view);
  std::size_t parties = 0;
  for (const auto p : order.parties().no_party_ids()) parties += p.party_id().has_value() ? 1 : 0;
  EXPECT_EQ(*order.cl_ord_id(), "ORD1");
  EXPECT_EQ(*order.price(), (Decimal{10050, 2}));
  EXPECT_EQ(parties, 2U);
  EXPECT_EQ(scope.count(), 0U);
}

}  // namespace
