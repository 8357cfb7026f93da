// The journal's events in the event trace (hft/core/trace.hpp): what the
// lab lines up with long calls.
#include "hft/core/trace.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <thread>
#include <vector>

#include "hft/store/journal.hpp"
#include "hft/store/journal_service.hpp"
#include "store/store_test_util.hpp"

namespace hft::store {
namespace {

using core::TraceKind;
using core::TraceRecord;
using test::message_for;
using test::wait_for;
using test::TempDir;

constexpr std::size_t kSeg = 64 * 1024;

class JournalTrace : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(core::trace::enable(1 << 14)); }
  void TearDown() override {
    core::trace::disable();
    std::vector<TraceRecord> rest;
    (void)core::trace::drain(rest);
  }
  static std::uint32_t this_tid() {
    core::trace::emit_point(TraceKind::kReconnect);
    std::vector<TraceRecord> r;
    (void)core::trace::drain(r);
    return r.back().tid;
  }
};

TEST_F(JournalTrace, rotations_on_the_writer_and_spare_work_on_the_service_are_traced) {
  TempDir dir;
  const std::uint32_t writer = this_tid();
  JournalService service;
  ASSERT_TRUE(service.start());
  {
    auto j = Journal::open(test::small_config(dir.path(), kSeg), &service);
    ASSERT_TRUE(j) << j.error().message;
    std::uint64_t seq = 1;
    while ((*j)->stats().rotations < 3) {
      ASSERT_TRUE(wait_for([&] { return (*j)->spare_prefaulted(); }));
      const std::string m = message_for(seq, 200);
      ASSERT_EQ((*j)->append(seq, 0, {m.data(), m.size()}), StoreStatus::kOk);
      ++seq;
    }
    ASSERT_TRUE(wait_for([&] { return (*j)->stats().segments_retired >= 3; }));
  }
  std::vector<TraceRecord> got;
  (void)core::trace::drain(got);
  std::map<TraceKind, std::vector<const TraceRecord*>> by_kind;
  for (const TraceRecord& r : got) by_kind[r.kind].push_back(&r);
  ASSERT_EQ(by_kind[TraceKind::kRotate].size(), 3u);
  for (const TraceRecord* r : by_kind[TraceKind::kRotate]) {
    EXPECT_EQ(r->tid, writer) << "a rotation happens on the writer's thread";
    EXPECT_GE(r->end, r->begin);
    EXPECT_EQ(r->b, kSeg) << "the new segment's size";
  }
  EXPECT_EQ(by_kind[TraceKind::kRotate][1]->a, by_kind[TraceKind::kRotate][0]->a + 1) << "segment numbers";
  for (const TraceKind k : {TraceKind::kSegmentCreate, TraceKind::kZeroFill, TraceKind::kPrefault,
                            TraceKind::kSpareReady, TraceKind::kUnmap}) {
    ASSERT_FALSE(by_kind[k].empty()) << core::to_string(k);
    for (const TraceRecord* r : by_kind[k]) {
      // The first segment's head is pre-faulted by the writer when it is created.
      if (k == TraceKind::kPrefault && r->tid == writer) continue;
      EXPECT_NE(r->tid, writer) << core::to_string(k) << " runs on the journal service";
    }
  }
  std::uint64_t unmapped = 0;
  for (const TraceRecord* r : by_kind[TraceKind::kUnmap]) unmapped += r->b;
  EXPECT_GE(unmapped, 3 * kSeg) << "every retired segment unmapped, piece by piece";
  EXPECT_TRUE(by_kind[TraceKind::kSpareMissing].empty());
  EXPECT_TRUE(by_kind[TraceKind::kInlineCreate].empty());
}

TEST_F(JournalTrace, a_rotation_without_a_spare_is_traced_as_missing_and_created_inline) {
  TempDir dir;
  const std::uint32_t writer = this_tid();
  JournalConfig c = test::small_config(dir.path(), kSeg);
  c.preallocate = false;
  c.spare_miss = SpareMissPolicy::kCreateInline;
  auto j = Journal::open(c, nullptr);
  ASSERT_TRUE(j) << j.error().message;
  std::uint64_t seq = 1;
  while ((*j)->stats().rotations < 2) {
    const std::string m = message_for(seq, 200);
    ASSERT_EQ((*j)->append(seq, 0, {m.data(), m.size()}), StoreStatus::kOk);
    ++seq;
  }
  std::vector<TraceRecord> got;
  (void)core::trace::drain(got);
  std::size_t missing = 0, inline_created = 0, rotations = 0;
  for (const TraceRecord& r : got) {
    if (r.kind == TraceKind::kSpareMissing) ++missing;
    if (r.kind == TraceKind::kInlineCreate) ++inline_created;
    if (r.kind == TraceKind::kRotate) {
      ++rotations;
      EXPECT_EQ(r.tid, writer);
    }
  }
  EXPECT_EQ(missing, 2u);
  EXPECT_GE(inline_created, 2u) << "the first segment and each rotation's";
  EXPECT_EQ(rotations, 2u);
}

}  // namespace
}  // namespace hft::store
