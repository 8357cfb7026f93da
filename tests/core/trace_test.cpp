// The event trace: a bounded MPSC ring written without locks or allocation.
#include "hft/core/trace.hpp"

#include <gtest/gtest.h>

#include <map>
#include <thread>
#include <vector>

#include "support/alloc_counter.hpp"

namespace hft::core {
namespace {

// The trace is process-wide: every test leaves it off and drained.
class Trace : public ::testing::Test {
 protected:
  void TearDown() override {
    trace::disable();
    std::vector<TraceRecord> rest;
    (void)trace::drain(rest);
  }
};

TEST_F(Trace, records_nothing_while_off) {
  std::vector<TraceRecord> out;
  (void)trace::drain(out);
  out.clear();
  ASSERT_FALSE(trace::enabled());
  trace::emit_point(TraceKind::kRotate, 1, 2);
  trace::end(TraceKind::kUnmap, trace::begin(), 3, 4);
  EXPECT_EQ(trace::begin(), 0u) << "no clock read while off";
  EXPECT_EQ(trace::drain(out), 0u);
}

TEST_F(Trace, keeps_every_field_of_a_record_and_the_emitting_thread) {
  ASSERT_TRUE(trace::enable(128));
  EXPECT_FALSE(trace::enable(128)) << "already on";
  const std::uint64_t b = trace::begin();
  ASSERT_NE(b, 0u);
  trace::end(TraceKind::kPrefault, b, 7, 2 << 20);
  trace::emit_point(TraceKind::kSpareMissing, 9);
  std::vector<TraceRecord> out;
  ASSERT_EQ(trace::drain(out), 2u);
  EXPECT_EQ(out[0].kind, TraceKind::kPrefault);
  EXPECT_EQ(out[0].begin, b);
  EXPECT_GE(out[0].end, b);
  EXPECT_EQ(out[0].a, 7u);
  EXPECT_EQ(out[0].b, 2u << 20);
  EXPECT_NE(out[0].tid, 0u);
  EXPECT_EQ(out[1].kind, TraceKind::kSpareMissing);
  EXPECT_EQ(out[1].begin, out[1].end) << "a point event";
  EXPECT_EQ(out[1].tid, out[0].tid);
  EXPECT_EQ(trace::drain(out), 0u) << "drained records are gone";
}

TEST_F(Trace, a_full_ring_drops_and_counts_and_takes_records_again_once_drained) {
  ASSERT_TRUE(trace::enable(64));
  const std::uint64_t dropped0 = trace::dropped();
  for (std::uint64_t k = 0; k < 100; ++k) trace::emit_point(TraceKind::kSendBlocked, k);
  EXPECT_EQ(trace::dropped() - dropped0, 36u);
  std::vector<TraceRecord> out;
  ASSERT_EQ(trace::drain(out), 64u);
  for (std::uint64_t k = 0; k < 64; ++k) EXPECT_EQ(out[k].a, k) << "the oldest are kept, in order";
  trace::emit_point(TraceKind::kSendBlocked, 1000);
  out.clear();
  ASSERT_EQ(trace::drain(out), 1u);
  EXPECT_EQ(out[0].a, 1000u);
}

TEST_F(Trace, many_threads_lose_nothing_and_keep_each_threads_order) {
  constexpr int kThreads = 4;
  constexpr std::uint64_t kEach = 20'000;
  ASSERT_TRUE(trace::enable(1 << 10));
  std::vector<TraceRecord> got;
  got.reserve(kThreads * kEach);
  std::atomic<int> running{kThreads};
  std::vector<std::thread> writers;
  std::atomic<std::uint64_t> dropped_retries{0};
  for (int t = 0; t < kThreads; ++t) {
    writers.emplace_back([&, t] {
      for (std::uint64_t k = 0; k < kEach; ++k) {
        // A full ring drops: retry until taken, so every record is there to check.
        for (;;) {
          const std::uint64_t before = trace::dropped();
          trace::emit_point(TraceKind::kPartialSend, static_cast<std::uint64_t>(t), k);
          if (trace::dropped() == before) break;
          dropped_retries.fetch_add(1, std::memory_order_relaxed);
        }
      }
      running.fetch_sub(1);
    });
  }
  while (running.load() != 0) (void)trace::drain(got);
  for (std::thread& w : writers) w.join();
  (void)trace::drain(got);
  // dropped() counts every thread's drops, so a retry may repeat a record
  // another thread's drop made look dropped: count distinct (thread, k).
  std::map<std::uint64_t, std::uint64_t> next;  // thread -> next k expected at least
  std::map<std::uint64_t, std::uint64_t> distinct;
  for (const TraceRecord& r : got) {
    ASSERT_EQ(r.kind, TraceKind::kPartialSend);
    ASSERT_GE(r.b + 1, next[r.a]) << "thread " << r.a << " went backwards";
    if (r.b + 1 > next[r.a]) ++distinct[r.a];
    next[r.a] = r.b + 1;
  }
  for (int t = 0; t < kThreads; ++t)
    EXPECT_EQ(distinct[static_cast<std::uint64_t>(t)], kEach) << "thread " << t;
}

TEST_F(Trace, emitting_allocates_nothing) {
  ASSERT_TRUE(trace::enable(256));
  trace::emit_point(TraceKind::kReconnect);  // the thread's id is read once, here
  const test::AllocationScope scope;
  for (int k = 0; k < 200; ++k) trace::end(TraceKind::kZeroFill, trace::begin(), 1, 2);
  EXPECT_EQ(scope.count(), 0u);
}

TEST_F(Trace, kind_names_round_trip) {
  for (std::uint16_t v = 1; v <= 15; ++v) {
    const auto kind = static_cast<TraceKind>(v);
    TraceKind back{};
    ASSERT_TRUE(parse_trace_kind(to_string(kind), back)) << v;
    EXPECT_EQ(back, kind);
  }
  TraceKind k{};
  EXPECT_FALSE(parse_trace_kind("rotation", k));
  EXPECT_EQ(to_string(static_cast<TraceKind>(999)), "unknown");
}

}  // namespace
}  // namespace hft::core
