// The hot path allocates nothing: claim + commit across rotations (with and
// without the service), replay, reset, and the MessageStore operations.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "hft/store/journal.hpp"
#include "hft/store/journal_service.hpp"
#include "hft/store/message_store.hpp"
#include "store/store_test_util.hpp"
#include "support/alloc_counter.hpp"

namespace hft::store {
namespace {

using test::message_for;
using test::TempDir;

TEST(Allocation, claim_and_commit_allocate_nothing_across_rotations_through_spares) {
  TempDir dir;
  JournalService service;
  ASSERT_TRUE(service.start());
  auto j = Journal::open(test::small_config(dir.path(), 64 * 1024), &service);
  ASSERT_TRUE(j);
  const std::string m = message_for(0, 230);
  std::uint64_t seq = 1;
  std::uint64_t allocations = 0;
  while ((*j)->stats().rotations < 5) {
    // Give the service its chance (outside the counted region).
    while (!(*j)->spare_prefaulted()) std::this_thread::yield();
    hft::test::AllocationScope scope;
    for (int i = 0; i < 50; ++i, ++seq) {
      std::span<char> room = (*j)->claim(m.size() + 40);
      ASSERT_FALSE(room.empty());
      std::memcpy(room.data() + 40, m.data(), m.size());
      ASSERT_EQ((*j)->commit(seq, 0, 40, m.size()), StoreStatus::kOk);
    }
    allocations += scope.count();
  }
  EXPECT_EQ(allocations, 0u);
  EXPECT_EQ((*j)->stats().spare_misses, 0u);
}

TEST(Allocation, rotations_that_create_segments_inline_allocate_nothing_either) {
  TempDir dir;
  auto j = Journal::open(test::small_config(dir.path(), 16 * 1024));
  ASSERT_TRUE(j);
  const std::string m = message_for(0, 230);
  hft::test::AllocationScope scope;
  for (std::uint64_t seq = 1; seq <= 500; ++seq)
    ASSERT_EQ((*j)->append(seq, 0, {m.data(), m.size()}), StoreStatus::kOk);
  EXPECT_EQ(scope.count(), 0u);
  EXPECT_GE((*j)->stats().inline_creations, 5u);
}

TEST(Allocation, replay_across_finished_segments_and_reset_allocate_nothing) {
  TempDir dir;
  auto j = Journal::open(test::small_config(dir.path(), 16 * 1024));
  ASSERT_TRUE(j);
  test::append_range(**j, 1, 500, 100);
  std::size_t bytes = 0;
  hft::test::AllocationScope scope;
  std::uint64_t next = 1;
  for (;;) {
    const ReplayResult r = (*j)->replay_each(next, 500, 37, [&](const StoredMessage& msg) {
      bytes += msg.bytes.size();
      return true;
    });
    next = r.next_seq;
    if (r.status != ReplayStatus::kLimit) break;
  }
  ASSERT_EQ((*j)->reset(2, 1), StoreStatus::kOk);
  EXPECT_EQ(scope.count(), 0u);
  EXPECT_GT(bytes, 500u * 90);
}

void exercise(MessageStore& store, const std::string& m) {
  for (int round = 0; round < 300; ++round) {
    const std::uint64_t seq = store.next_sender_seq();
    std::span<char> room = store.claim(512);
    ASSERT_FALSE(room.empty());
    std::memcpy(room.data() + 17, m.data(), m.size());
    ASSERT_EQ(store.commit(seq, round, 17, m.size()), StoreStatus::kOk);
    ASSERT_EQ(store.store_inbound(store.next_target_seq(), round, {m.data(), m.size()}), StoreStatus::kOk);
    store.set_next_target_seq(store.next_target_seq() + 1);
  }
  std::size_t n = 0;
  (void)store.replay(1, 300, 100, [&](const StoredMessage&) { return ++n > 0; });
  ASSERT_EQ(store.reset(12345), StoreStatus::kOk);
  (void)store.stats();
}

TEST(Allocation, journal_store_operations_allocate_nothing_after_open) {
  TempDir dir;
  JournalStoreConfig cfg;
  cfg.directory = dir.path();
  cfg.journal = test::small_config("", 64 * 1024);
  auto store = JournalStore::open(cfg);
  ASSERT_TRUE(store) << store.error().message;
  const std::string m = message_for(0, 230);
  hft::test::AllocationScope scope;
  exercise(**store, m);
  EXPECT_EQ(scope.count(), 0u);
}

TEST(Allocation, memory_store_operations_allocate_nothing_after_construction) {
  MemoryStore store(MemoryStoreConfig{256, 1024});
  const std::string m = message_for(0, 230);
  hft::test::AllocationScope scope;
  exercise(store, m);
  EXPECT_EQ(scope.count(), 0u);
}

}  // namespace
}  // namespace hft::store
