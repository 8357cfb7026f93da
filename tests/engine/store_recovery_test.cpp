// A venue restarted on a store whose sequence-number file is missing, an old
// copy, or next to a journal of another session: the client reconnects with
// its own store (it resends whatever the venue asks for), and no order is
// executed twice. What the store repaired or recovered is logged at WARN.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "common/configs.hpp"
#include "common/venue_app.hpp"
#include "engine/loopback.hpp"
#include "hft/core/clock.hpp"
#include "hft/engine/engine.hpp"
#include "hft/store/format.hpp"
#include "hft/store/message_store.hpp"
#include "support/temp_dir.hpp"

namespace {

using hft::engine::Config;
using hft::engine::Engine;
namespace fs = std::filesystem;

using Client = hft::engine::test::ReportClient;
using hft::engine::test::poll_until;

/// Keeps every line (the engine logs on the thread that polls it).
class Captured final : public hft::session::Logger {
 public:
  [[nodiscard]] bool enabled(hft::session::LogLevel) const noexcept override { return true; }
  void log(hft::session::LogLevel level, const hft::session::SessionID&,
           std::string_view text) noexcept override {
    if (level == hft::session::LogLevel::kWarn) warnings.emplace_back(text);
  }
  [[nodiscard]] bool warned(const std::string& what) const {
    for (const std::string& w : warnings)
      if (w.find(what) != std::string::npos) return true;
    return false;
  }
  std::vector<std::string> warnings;
};

hft::Expected<std::unique_ptr<Engine>> start(const hft::apps::SimpleSession& s,
                                             hft::session::Application& app, hft::session::Logger* log) {
  auto config = Config::parse(hft::apps::simple_config(s), "test.cfg");
  if (!config) return config.error();
  return Engine::create(*config, app, log);
}

/// One run of the venue and the client, each on its own store.
struct Peers {
  hft::apps::VenueApplication venue_app;
  Client client_app;
  Captured venue_log;
  std::unique_ptr<Engine> venue;
  std::unique_ptr<Engine> client;
  std::string venue_error;

  Peers(const std::string& venue_store, const std::string& client_store) : client_store_(client_store) {
    hft::apps::SimpleSession v;
    v.store_dir = venue_store;
    auto ve = start(v, venue_app, &venue_log);
    if (!ve) {
      venue_error = ve.error().message;
      return;
    }
    venue = std::move(*ve);
    start_client();
  }

  /// (Re)starts the client on its store, as a restarted process would.
  void start_client() {
    client.reset();
    client_app.logged_on = false;
    hft::apps::SimpleSession c;
    c.initiator = true;
    c.sender = "CLIENT";
    c.target = "VENUE";
    c.port = venue->listen_port();
    c.store_dir = client_store_;
    auto ce = start(c, client_app, nullptr);
    EXPECT_TRUE(ce) << (ce ? "" : ce.error().message);
    if (ce) client = std::move(*ce);
  }
  std::string client_store_;

  bool logon() {
    return venue && client && poll_until(*venue, *client, [&] { return client_app.logged_on; });
  }

  /// Sends orders first..last and waits for their two reports each.
  bool orders(std::uint64_t first, std::uint64_t last) {
    const std::uint64_t want = client_app.reports + 2 * (last - first + 1);
    for (std::uint64_t i = first; i <= last; ++i) {
      const auto status = hft::engine::test::send_test_order(client->session(0), i);
      if (status != hft::session::SendStatus::kOk) return false;
      client->poll();
      venue->poll();
    }
    return poll_until(*venue, *client, [&] { return client_app.reports >= want; });
  }

  /// Lets a resend the venue asked for (if any) play out.
  void settle() {
    const auto until = hft::core::monotonic_ns() + 300'000'000;
    while (hft::core::monotonic_ns() < until) {
      venue->poll();
      client->poll();
    }
  }
};

class StoreRecovery : public ::testing::Test {
 protected:
  /// First day: 20 orders executed; seqnums.dat copied after the 5th.
  void first_run() {
    Peers r(venue_store(), client_store());
    ASSERT_TRUE(r.venue) << r.venue_error;
    ASSERT_TRUE(r.logon());
    ASSERT_TRUE(r.orders(1, 5));
    fs::copy_file(venue_session() + "/seqnums.dat", tmp_.sub("seqnums.old"));
    ASSERT_TRUE(r.orders(6, 20));
    ASSERT_EQ(r.venue_app.counters().orders, 20u);
  }

  /// Restart after the store was tampered with: 10 new orders, and the 20
  /// of the first run are not executed again.
  void second_run_executes_only_the_new_orders(const std::string& expected_warning) {
    Peers r(venue_store(), client_store());
    ASSERT_TRUE(r.venue) << r.venue_error;
    EXPECT_TRUE(r.venue_log.warned(expected_warning)) << ::testing::PrintToString(r.venue_log.warnings);
    ASSERT_TRUE(r.logon());
    r.settle();
    ASSERT_TRUE(r.orders(21, 30));
    r.settle();
    EXPECT_EQ(r.venue_app.counters().orders, 10u) << "orders of the first run executed again";
    EXPECT_EQ(r.venue_app.counters().possdup_orders, 0u) << "the venue asked for orders it had";
    EXPECT_EQ(r.client_app.reports, 20u);
  }

  std::string venue_store() const { return tmp_.sub("venue"); }
  /// FileStorePath/<session>: the venue session's store.
  std::string venue_session() const { return venue_store() + "/FIX.4.4-VENUE-CLIENT"; }
  std::string client_store() const { return tmp_.sub("client"); }
  hft::test::TempDir tmp_;
};

TEST_F(StoreRecovery,
       a_venue_store_without_its_seqnum_file_recovers_the_numbers_and_executes_no_order_twice) {
  first_run();
  fs::remove(venue_session() + "/seqnums.dat");
  second_run_executes_only_the_new_orders(venue_session() +
                                          "/seqnums.dat: missing, recovered from the journals");
}

TEST_F(StoreRecovery,
       a_venue_store_with_an_old_copy_of_its_seqnum_file_recovers_and_executes_no_order_twice) {
  first_run();
  fs::copy_file(tmp_.sub("seqnums.old"), venue_session() + "/seqnums.dat",
                fs::copy_options::overwrite_existing);
  second_run_executes_only_the_new_orders(venue_session() + "/seqnums.dat: older than the journals");
}

TEST_F(StoreRecovery, a_venue_store_holding_the_journal_of_another_session_is_refused_naming_the_directory) {
  first_run();
  // Another session's store (same venue, another client), written by the store itself.
  {
    hft::store::JournalStoreConfig c;
    c.directory = tmp_.sub("other");
    c.session_identity = hft::store::session_identity("FIX.4.4:VENUE->OTHER");
    auto other = hft::store::JournalStore::open(c);
    ASSERT_TRUE(other) << other.error().message;
    const std::string bytes =
        "8=FIX.4.4\x01"
        "9=5\x01"
        "35=0\x01"
        "10=000\x01";
    for (std::uint64_t q = 1; q <= 3; ++q) {
      const auto room = (*other)->claim(bytes.size());
      ASSERT_FALSE(room.empty());
      std::copy(bytes.begin(), bytes.end(), room.begin());
      ASSERT_EQ((*other)->commit(q, 0, 0, bytes.size()), hft::store::StoreStatus::kOk);
    }
  }
  fs::remove_all(venue_session() + "/outbound");
  fs::copy(tmp_.sub("other/outbound"), venue_session() + "/outbound");
  Peers r(venue_store(), client_store());
  EXPECT_FALSE(r.venue);
  EXPECT_NE(r.venue_error.find(venue_session() + "/outbound: the journal belongs to another session"),
            std::string::npos)
      << r.venue_error;
}

TEST_F(StoreRecovery, a_clean_restart_warns_about_nothing_and_resends_nothing) {
  first_run();
  Peers r(venue_store(), client_store());
  ASSERT_TRUE(r.venue) << r.venue_error;
  EXPECT_TRUE(r.venue_log.warnings.empty()) << ::testing::PrintToString(r.venue_log.warnings);
  ASSERT_TRUE(r.logon());
  ASSERT_TRUE(r.orders(21, 22));
  EXPECT_EQ(r.venue_app.counters().orders, 2u);
}

TEST_F(StoreRecovery, a_resent_order_the_venue_executed_is_seen_as_possdup_and_not_executed_again) {
  Peers r(venue_store(), client_store());
  ASSERT_TRUE(r.venue) << r.venue_error;
  ASSERT_TRUE(r.logon());
  ASSERT_TRUE(r.orders(1, 5));
  r.client.reset();
  const std::uint64_t logouts = r.venue_app.counters().logouts;
  const auto until = hft::core::monotonic_ns() + 10'000'000'000;
  while (r.venue_app.counters().logouts == logouts && hft::core::monotonic_ns() < until) r.venue->poll();
  ASSERT_GT(r.venue_app.counters().logouts, logouts);
  // The venue forgets it received orders 2..6 (seqs): it asks the client
  // to resend them, and the client resends them with PossDupFlag=Y.
  r.venue->session(0).set_next_target_seq(2);
  r.start_client();
  ASSERT_TRUE(r.logon());
  r.settle();
  EXPECT_EQ(r.venue_app.counters().possdup_orders, 5u);
  EXPECT_EQ(r.venue_app.counters().duplicates, 5u);
  EXPECT_EQ(r.venue_app.counters().orders, 5u) << "a resent order was executed again";
  ASSERT_TRUE(r.orders(6, 7));
  EXPECT_EQ(r.venue_app.counters().orders, 7u);
}

TEST(VenueDedup, the_clordid_set_is_per_session_bounded_and_compares_whole_ids) {
  hft::apps::OrderIdSet set(4);
  int a = 0, b = 0;
  EXPECT_EQ(set.insert(&a, "ORD1"), hft::apps::OrderIdSet::Insert::kAdded);
  EXPECT_EQ(set.insert(&a, "ORD1"), hft::apps::OrderIdSet::Insert::kPresent);
  EXPECT_TRUE(set.contains(&a, "ORD1"));
  EXPECT_FALSE(set.contains(&b, "ORD1")) << "ClOrdIDs are per session";
  const std::string long_id(100, 'x');
  EXPECT_EQ(set.insert(&a, long_id), hft::apps::OrderIdSet::Insert::kAdded);
  EXPECT_FALSE(set.contains(&a, long_id.substr(0, 99)));
  EXPECT_EQ(set.insert(&a, "ORD2"), hft::apps::OrderIdSet::Insert::kAdded);
  EXPECT_EQ(set.insert(&a, "ORD3"), hft::apps::OrderIdSet::Insert::kAdded);
  EXPECT_EQ(set.insert(&a, "ORD4"), hft::apps::OrderIdSet::Insert::kFull) << "bounded, never grown";
  EXPECT_EQ(set.size(), 4u);
  EXPECT_EQ(set.insert(&a, "ORD1"), hft::apps::OrderIdSet::Insert::kFull) << "full: insert does not look";
  EXPECT_TRUE(set.contains(&a, "ORD1")) << "a full set still finds every id it holds";
  EXPECT_TRUE(set.contains(&a, long_id));
  EXPECT_TRUE(set.contains(&a, "ORD3"));
  EXPECT_FALSE(set.contains(&a, "ORD4"));
}

}  // namespace
