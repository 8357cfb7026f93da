// hft_generate_messages on a dictionary of the user's own (data/acme.xml):
// custom tags, an INT enum, a STRING enum, a group in a component.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "acme/fix.hpp"
#include "hft/codec/encoder.hpp"
#include "hft/codec/parser.hpp"
#include "support/fix_text.hpp"

namespace {

using namespace hft;

TEST(UserDictionary, writes_and_reads_a_custom_message) {
  codec::HeaderTemplate header;
  ASSERT_TRUE(header.init("FIX.4.4", "ACME", "VENUE"));
  codec::TimestampFormatter ts;
  char buf[512];
  codec::MessageWriter w(buf);
  w.start(header, acme::fix::VenueQuoteWriter::kMsgType, 5, 0, codec::TimePrecision::kSeconds, ts);
  acme::fix::VenueQuoteWriter quote(w, "Q-1", acme::fix::Urgency::kFlash);
  {
    auto legs = quote.legs().no_quote_legs(2);
    legs.add("L1", codec::Decimal{5, 1});
    legs.add("L2", codec::Decimal{15, 1});
  }
  quote.venue(acme::fix::Venue::kStockholm).throttled(false);
  const auto r = w.finish();
  ASSERT_TRUE(r.ok());
  const std::string text(r.message.data(), r.message.size());
  EXPECT_EQ(text, test::with_trailer("FIX.4.4", test::soh("35=U7|34=5|49=ACME|52=19700101-00:00:00|56=VENUE|"
                                                          "20001=Q-1|20002=5|20005=2|20006=L1|20007=0.5|"
                                                          "20006=L2|20007=1.5|20003=XSTO|20004=N|")));

  auto view = std::make_unique<codec::MessageView>();
  ASSERT_EQ(view->parse(text), codec::ParseStatus::kOk);
  struct Handler {
    std::string seen;
    bool on_message(const acme::fix::VenueQuoteReader& q) {
      seen = std::string(*q.quote_ref()) + " " + std::string(acme::fix::fix_value(*q.venue()));
      for (const auto leg : q.legs().no_quote_legs()) seen += " " + std::string(*leg.leg_ref());
      return *q.urgency() == acme::fix::Urgency::kFlash && !*q.throttled();
    }
    bool on_unhandled(const codec::MessageView&) { return false; }
  } h;
  EXPECT_TRUE(acme::fix::crack(*view, h));
  EXPECT_EQ(h.seen, "Q-1 XSTO L1 L2");
  EXPECT_EQ(acme::fix::tag::kQuoteRef, 20001);
}

}  // namespace
