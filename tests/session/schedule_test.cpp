// Time zones from the TZ database, daily and weekly schedules, and a session
// that follows its schedule.
#include <gtest/gtest.h>

#include "fixture.hpp"
#include "hft/session/schedule.hpp"

namespace hft::session::test {
namespace {

constexpr std::int64_t kS = 1'000'000'000;

// Seconds since the epoch of a UTC civil time (test helper).
std::int64_t utc(int y, int mo, int d, int h, int mi, int s = 0) {
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = s;
  return static_cast<std::int64_t>(timegm(&tm));
}

TEST(SessionTimeZoneTest, reads_new_york_offsets_across_daylight_saving) {
  auto ny = TimeZone::load("America/New_York");
  ASSERT_TRUE(ny.ok()) << ny.error().message;
  EXPECT_EQ(ny->offset_at(utc(2024, 1, 15, 12, 0)), -5 * 3600);
  EXPECT_EQ(ny->offset_at(utc(2024, 7, 15, 12, 0)), -4 * 3600);
  // 2024-03-10 02:00 EST -> 03:00 EDT, at 07:00 UTC.
  EXPECT_EQ(ny->offset_at(utc(2024, 3, 10, 6, 59, 59)), -5 * 3600);
  EXPECT_EQ(ny->offset_at(utc(2024, 3, 10, 7, 0)), -4 * 3600);
  // Far future: from the POSIX rule in the file's footer.
  EXPECT_EQ(ny->offset_at(utc(2050, 7, 1, 12, 0)), -4 * 3600);
  EXPECT_EQ(ny->offset_at(utc(2050, 12, 1, 12, 0)), -5 * 3600);
}

TEST(SessionTimeZoneTest, converts_local_wall_time_to_utc_including_gaps_and_overlaps) {
  auto ny = TimeZone::load("America/New_York");
  ASSERT_TRUE(ny.ok());
  EXPECT_EQ(ny->to_utc(utc(2024, 7, 15, 9, 30)), utc(2024, 7, 15, 13, 30));
  // 02:30 does not exist on 2024-03-10: read with the old offset.
  EXPECT_EQ(ny->to_utc(utc(2024, 3, 10, 2, 30)), utc(2024, 3, 10, 7, 30));
  // 01:30 happens twice on 2024-11-03: the first one (EDT).
  EXPECT_EQ(ny->to_utc(utc(2024, 11, 3, 1, 30)), utc(2024, 11, 3, 5, 30));
}

TEST(SessionTimeZoneTest, parses_posix_rules_and_reports_unknown_zones) {
  auto z = TimeZone::from_posix("CET-1CEST,M3.5.0,M10.5.0/3");
  ASSERT_TRUE(z.ok()) << z.error().message;
  EXPECT_EQ(z->offset_at(utc(2024, 1, 10, 0, 0)), 3600);
  EXPECT_EQ(z->offset_at(utc(2024, 6, 10, 0, 0)), 7200);
  EXPECT_EQ(z->offset_at(utc(2024, 3, 31, 0, 59)), 3600);
  EXPECT_EQ(z->offset_at(utc(2024, 3, 31, 1, 0)), 7200);
  EXPECT_FALSE(TimeZone::from_posix("nonsense,").ok());
  auto missing = TimeZone::load("Mars/Olympus_Mons");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("Mars/Olympus_Mons"), std::string::npos);
  EXPECT_TRUE(TimeZone::load("UTC").ok());
}

TEST(SessionScheduleTest, parses_days_and_times) {
  Weekday d{};
  EXPECT_TRUE(parse_weekday("Sunday", d));
  EXPECT_EQ(d, Weekday::kSunday);
  EXPECT_TRUE(parse_weekday("fri", d));
  EXPECT_EQ(d, Weekday::kFriday);
  EXPECT_FALSE(parse_weekday("t", d));
  EXPECT_FALSE(parse_weekday("Funday", d));
  std::int32_t s = 0;
  EXPECT_TRUE(parse_time_of_day("08:30:15", s));
  EXPECT_EQ(s, 8 * 3600 + 30 * 60 + 15);
  EXPECT_FALSE(parse_time_of_day("25:00:00", s));
  EXPECT_FALSE(Schedule::daily("8am", "17:00:00").ok());
}

TEST(SessionScheduleTest, daily_window_is_open_between_start_and_end) {
  auto sch = Schedule::daily("08:00:00", "17:00:00");
  ASSERT_TRUE(sch.ok());
  EXPECT_FALSE(sch->is_open(utc(2024, 3, 15, 7, 59) * kS));
  EXPECT_TRUE(sch->is_open(utc(2024, 3, 15, 8, 0) * kS));
  EXPECT_TRUE(sch->is_open(utc(2024, 3, 15, 16, 59) * kS));
  EXPECT_FALSE(sch->is_open(utc(2024, 3, 15, 18, 0) * kS));
  EXPECT_TRUE(sch->same_period(utc(2024, 3, 15, 9, 0) * kS, utc(2024, 3, 15, 16, 0) * kS));
  EXPECT_FALSE(sch->same_period(utc(2024, 3, 15, 9, 0) * kS, utc(2024, 3, 16, 9, 0) * kS));
  EXPECT_EQ(sch->period_start(utc(2024, 3, 15, 12, 0) * kS), utc(2024, 3, 15, 8, 0) * kS);
}

TEST(SessionScheduleTest, overnight_window_in_new_york_time) {
  auto ny = TimeZone::load("America/New_York");
  ASSERT_TRUE(ny.ok());
  auto sch = Schedule::daily("17:00:00", "16:00:00", *ny);
  ASSERT_TRUE(sch.ok());
  // 16:30 New York (EDT) = 20:30 UTC: the daily hour of closure.
  EXPECT_FALSE(sch->is_open(utc(2024, 7, 15, 20, 30) * kS));
  EXPECT_TRUE(sch->is_open(utc(2024, 7, 15, 22, 0) * kS));
  // 10:00 New York belongs to the period that began at 17:00 the day before.
  EXPECT_EQ(sch->period_start(utc(2024, 7, 16, 14, 0) * kS), utc(2024, 7, 15, 21, 0) * kS);
  EXPECT_TRUE(sch->same_period(utc(2024, 7, 15, 22, 0) * kS, utc(2024, 7, 16, 14, 0) * kS));
}

TEST(SessionScheduleTest, weekly_window_spans_the_trading_week) {
  auto ny = TimeZone::load("America/New_York");
  ASSERT_TRUE(ny.ok());
  auto sch = Schedule::weekly("Sunday", "17:00:00", "Friday", "17:00:00", *ny);
  ASSERT_TRUE(sch.ok()) << sch.error().message;
  const std::int64_t monday = utc(2024, 7, 15, 14, 0) * kS;
  const std::int64_t thursday = utc(2024, 7, 18, 14, 0) * kS;
  const std::int64_t saturday = utc(2024, 7, 20, 14, 0) * kS;
  const std::int64_t next_monday = utc(2024, 7, 22, 14, 0) * kS;
  EXPECT_TRUE(sch->is_open(monday));
  EXPECT_TRUE(sch->is_open(thursday));
  EXPECT_FALSE(sch->is_open(saturday));
  EXPECT_TRUE(sch->same_period(monday, thursday));
  EXPECT_FALSE(sch->same_period(thursday, next_monday));
  EXPECT_EQ(sch->period_start(monday), utc(2024, 7, 14, 21, 0) * kS);
}

class SessionScheduledTest : public SessionFixture {
 protected:
  void SetUp() override {
    auto st = base_settings();
    auto sch = Schedule::daily("08:00:00", "17:00:00");
    ASSERT_TRUE(sch.ok());
    st.schedule = *sch;
    make(st);
  }
};

TEST_F(SessionScheduledTest, refuses_connections_outside_the_schedule) {
  now = utc(2024, 3, 15, 18, 0) * kS;
  session->on_connected(at());
  EXPECT_TRUE(out.disconnected);
  EXPECT_EQ(out.reason, DisconnectReason::kOutsideSchedule);
}

TEST_F(SessionScheduledTest, logs_out_at_the_end_and_starts_the_next_period_at_one) {
  now = utc(2024, 3, 15, 16, 59) * kS;
  logon();
  send("0");
  EXPECT_EQ(session->next_target_seq(), 3u);
  advance(61);
  ASSERT_FALSE(out.messages.empty());
  EXPECT_EQ(field(out.messages.back(), "35"), "5");
  EXPECT_TRUE(out.disconnected);
  EXPECT_EQ(out.reason, DisconnectReason::kOutsideSchedule);
  EXPECT_EQ(session->next_target_seq(), 1u);
  EXPECT_EQ(session->next_sender_seq(), 1u);
  // Next morning: a new period, a fresh session.
  out = CollectingOutput{};
  now = utc(2024, 3, 16, 8, 30) * kS;
  session->on_timer(at());
  const std::string reply = logon();
  EXPECT_EQ(field(reply, "34"), "1");
  EXPECT_TRUE(session->is_logged_on());
}

TEST_F(SessionScheduledTest, keeps_sequence_numbers_within_a_period) {
  now = utc(2024, 3, 15, 9, 0) * kS;
  session->on_timer(at());  // the store was created at kStart (12:00): same period
  logon();
  send("0");
  session->on_disconnected(at());
  now += 3600 * kS;
  session->on_connected(at());
  feed(peer_msg("A", "98=0|108=30|", 3));
  EXPECT_EQ(field(out.pop(), "34"), "2");
}

}  // namespace
}  // namespace hft::session::test
