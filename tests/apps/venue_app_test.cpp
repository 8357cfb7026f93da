// hft-venue's application when its session's store fills: an order whose
// acknowledgement went out but whose fill could not be recorded is not
// accepted, and its PossDup resend after the next logon gets the fill only.
#include "common/venue_app.hpp"

#include <gtest/gtest.h>

#include "hft/core/clock.hpp"
#include "session/failing_store.hpp"
#include "session/harness.hpp"

namespace hft::apps {
namespace {

using session::test::CollectingOutput;
using session::test::FailingStore;
using session::test::field;
using session::test::utc_text;
using session::test::wire;

class VenueStoreFull : public ::testing::Test {
 protected:
  void SetUp() override {
    session::SessionSettings st;
    st.begin_string = "FIX.4.4";
    st.sender_comp_id = "VENUE";
    st.target_comp_id = "CLIENT";
    st.max_message_size = 4096;
    auto s = session::Session::create(std::move(st), failing, venue, out, nullptr, at());
    ASSERT_TRUE(s.ok()) << s.error().message;
    session = std::move(*s);
  }
  // The venue reads the real clock for its reports: so does the test.
  static session::Instant at() { return session::Instant{core::realtime_ns(), core::monotonic_ns()}; }
  void feed(const std::string& type, std::uint64_t seq, const std::string& body,
            const std::string& extra = "") {
    const std::string m = wire("8=FIX.4.4|35=" + type + "|34=" + std::to_string(seq) + "|49=CLIENT|52=" +
                               utc_text(core::realtime_ns()) + "|56=VENUE|" + extra + body);
    session->on_bytes({m.data(), m.size()}, at());
  }
  /// ExecType of each ExecutionReport sent since the last call.
  std::string reports() {
    std::string r;
    for (const std::string& m : out.messages) {
      if (field(m, "35") == "8") r += field(m, "150") + "/" + field(m, "37") + " ";
    }
    out.messages.clear();
    return r;
  }

  store::MemoryStore memory{store::MemoryStoreConfig{64, 4096}};
  FailingStore failing{memory};
  CollectingOutput out;
  VenueApplication venue;
  std::unique_ptr<session::Session> session;
  const std::string order = "11=7|21=1|55=NOKIA|54=1|60=20240315-12:00:00|38=10|40=2|44=100|";
};

TEST_F(VenueStoreFull, an_order_acknowledged_but_not_filled_gets_only_the_fill_when_resent) {
  session->on_connected(at());
  feed("A", 1, "98=0|108=30|");
  ASSERT_TRUE(session->is_logged_on());
  out.messages.clear();

  failing.claim_fails = store::StoreStatus::kNoSpace;
  failing.claims_left = 1;  // the acknowledgement, not the fill
  feed("D", 2, order);
  EXPECT_EQ(reports(), "0/O1 ");
  EXPECT_FALSE(session->is_connected());
  EXPECT_EQ(session->next_target_seq(), 2u) << "the order is not accepted";
  EXPECT_EQ(venue.counters().send_failures, 1u);

  failing.space_returns();
  out.disconnected = false;
  session->on_connected(at());
  feed("A", 4, "98=0|108=30|");
  ASSERT_TRUE(session->is_logged_on());
  out.messages.clear();
  feed("D", 2, order, "43=Y|122=" + utc_text(core::realtime_ns()) + "|");
  EXPECT_EQ(reports(), "F/O1 ") << "the fill of the same order, no second acknowledgement";
  EXPECT_EQ(venue.counters().orders, 1u);

  // A later resend of an order never acknowledged is a new order.
  feed("4", 3, "123=Y|36=5|", "43=Y|122=" + utc_text(core::realtime_ns()) + "|");
  feed("D", 5, "11=8|21=1|55=NOKIA|54=1|60=20240315-12:00:00|38=10|40=2|44=100|");
  EXPECT_EQ(reports(), "0/O2 F/O2 ");
}

}  // namespace
}  // namespace hft::apps
