#include "hft/store/journal.hpp"

#include <gtest/gtest.h>

#include <cstring>

#include "hft/store/journal_reader.hpp"
#include "store/store_test_util.hpp"

namespace hft::store {
namespace {

using test::Collected;
using test::message_for;
using test::TempDir;

std::unique_ptr<Journal> open_ok(const JournalConfig& c) {
  auto j = Journal::open(c);
  if (!j) ADD_FAILURE() << j.error().message;
  return j ? std::move(*j) : nullptr;
}

TEST(Journal, replay_returns_exactly_the_committed_wire_bytes) {
  TempDir dir;
  auto j = open_ok(test::small_config(dir.path()));
  ASSERT_TRUE(j);
  test::append_range(*j, 1, 50);
  Collected got;
  const ReplayResult r = test::replay_all(*j, 1, 50, got);
  EXPECT_EQ(r.status, ReplayStatus::kComplete);
  EXPECT_EQ(r.delivered, 50u);
  EXPECT_EQ(r.corrupt, 0u);
  ASSERT_EQ(got.seqs.size(), 50u);
  for (std::uint64_t s = 1; s <= 50; ++s) {
    EXPECT_EQ(got.seqs[s - 1], s);
    EXPECT_EQ(got.bytes[s - 1], message_for(s));
  }
  EXPECT_EQ(j->last_seq(), 50u);
  EXPECT_EQ(j->stats().appends, 50u);
}

TEST(Journal, commit_keeps_a_message_written_at_an_offset_inside_the_claim) {
  TempDir dir;
  auto j = open_ok(test::small_config(dir.path()));
  ASSERT_TRUE(j);
  // Like the encoder: reserve room in front, write the prefix backwards.
  const std::string msg = message_for(1, 200);
  std::span<char> room = j->claim(400);
  ASSERT_EQ(room.size(), 400u);
  const std::size_t offset = 37;
  std::memset(room.data(), 'X', offset);  // garbage in the unused prefix
  std::memcpy(room.data() + offset, msg.data(), msg.size());
  ASSERT_EQ(j->commit(1, 123, offset, msg.size(), 0x5A), StoreStatus::kOk);
  Collected got;
  (void)test::replay_all(*j, 1, 1, got);
  ASSERT_EQ(got.bytes.size(), 1u);
  EXPECT_EQ(got.bytes[0], msg);
  EXPECT_EQ(got.flags[0], 0x5A);
}

TEST(Journal, rejects_commit_without_claim_and_lengths_beyond_the_claim) {
  TempDir dir;
  auto j = open_ok(test::small_config(dir.path()));
  ASSERT_TRUE(j);
  EXPECT_EQ(j->commit(1, 0, 0, 10), StoreStatus::kNoClaim);
  ASSERT_FALSE(j->claim(100).empty());
  EXPECT_EQ(j->commit(1, 0, 50, 51), StoreStatus::kInvalidArgument);
  EXPECT_EQ(j->commit(1, 0, 0, 0), StoreStatus::kInvalidArgument);
  EXPECT_EQ(j->commit(1, 0, 101, 0), StoreStatus::kInvalidArgument);
  EXPECT_EQ(j->commit(1, 0, 0, 100), StoreStatus::kOk);
  EXPECT_EQ(j->commit(2, 0, 0, 100), StoreStatus::kNoClaim) << "a claim is used once";
}

TEST(Journal, claim_larger_than_a_segment_fails_with_too_large_without_rotating) {
  TempDir dir;
  auto j = open_ok(test::small_config(dir.path(), 16 * 1024));
  ASSERT_TRUE(j);
  EXPECT_TRUE(j->claim(16 * 1024).empty());
  EXPECT_EQ(j->last_status(), StoreStatus::kTooLarge);
  EXPECT_TRUE(j->claim(~std::size_t{0}).empty());
  EXPECT_EQ(j->last_status(), StoreStatus::kTooLarge);
  EXPECT_EQ(j->stats().rotations, 0u);
  // The largest claim that fits an empty segment works (after a rotation).
  std::size_t lo = 1, hi = 16 * 1024;
  while (lo + 1 < hi) {
    const std::size_t mid = (lo + hi) / 2;
    if (j->claim(mid).empty()) hi = mid; else lo = mid;
  }
  EXPECT_GT(lo, 15u * 1024);
}

TEST(Journal, rolls_over_across_several_small_segments_and_replays_across_them) {
  TempDir dir;
  auto j = open_ok(test::small_config(dir.path(), 16 * 1024));
  ASSERT_TRUE(j);
  test::append_range(*j, 1, 1000, 100);  // ~140 bytes a record: ~9 segments
  const JournalStats st = j->stats();
  EXPECT_GE(st.rotations, 7u);
  EXPECT_EQ(st.rotations, st.spare_misses) << "no service: every rotation creates inline";
  EXPECT_EQ(st.inline_creations, st.rotations);
  EXPECT_EQ(test::segment_files(dir.path()).size(), st.rotations + 1);

  Collected got;
  const ReplayResult r = test::replay_all(*j, 1, 1000, got);
  EXPECT_EQ(r.delivered, 1000u);
  for (std::uint64_t s = 1; s <= 1000; ++s) ASSERT_EQ(got.bytes[s - 1], message_for(s, 100)) << s;

  // A range starting in the middle of an old segment.
  Collected mid;
  (void)test::replay_all(*j, 333, 444, mid);
  ASSERT_EQ(mid.seqs.size(), 112u);
  EXPECT_EQ(mid.seqs.front(), 333u);
  EXPECT_EQ(mid.seqs.back(), 444u);
}

TEST(Journal, replay_serves_a_large_range_in_batches_of_the_limit) {
  TempDir dir;
  auto j = open_ok(test::small_config(dir.path(), 16 * 1024));
  ASSERT_TRUE(j);
  test::append_range(*j, 1, 500, 60);
  std::uint64_t next = 1;
  std::size_t calls = 0, total = 0;
  std::uint64_t expect = 1;
  for (;;) {
    const ReplayResult r = j->replay_each(next, ~std::uint64_t{0}, 64, [&](const StoredMessage& m) {
      EXPECT_EQ(m.seq, expect++);
      return true;
    });
    ++calls;
    total += r.delivered;
    next = r.next_seq;
    if (r.status == ReplayStatus::kComplete) break;
    ASSERT_EQ(r.status, ReplayStatus::kLimit);
    ASSERT_EQ(r.delivered, 64u);
  }
  EXPECT_EQ(total, 500u);
  EXPECT_EQ(calls, 8u);
}

TEST(Journal, replay_skips_seqs_that_were_never_stored_and_stops_when_the_visitor_says_so) {
  TempDir dir;
  auto j = open_ok(test::small_config(dir.path()));
  ASSERT_TRUE(j);
  for (std::uint64_t s : {1, 2, 5, 6, 9}) {
    const std::string m = message_for(s);
    ASSERT_EQ(j->append(s, 0, {m.data(), m.size()}), StoreStatus::kOk);
  }
  Collected got;
  (void)test::replay_all(*j, 2, 8, got);
  EXPECT_EQ(got.seqs, (std::vector<std::uint64_t>{2, 5, 6}));
  int seen = 0;
  const ReplayResult r = j->replay_each(1, 9, 100, [&](const StoredMessage&) { return ++seen < 2; });
  EXPECT_EQ(r.status, ReplayStatus::kStopped);
  EXPECT_EQ(r.delivered, 2u);
  EXPECT_EQ(r.next_seq, 3u);
}

TEST(Journal, a_seq_that_does_not_increase_is_kept_but_not_replayed) {
  TempDir dir;
  auto j = open_ok(test::small_config(dir.path()));
  ASSERT_TRUE(j);
  test::append_range(*j, 1, 5);
  const std::string dup = "duplicate of 3";
  ASSERT_EQ(j->append(3, 0, {dup.data(), dup.size()}), StoreStatus::kOk);
  EXPECT_EQ(j->stats().unindexed, 1u);
  Collected got;
  (void)test::replay_all(*j, 1, 10, got);
  EXPECT_EQ(got.seqs, (std::vector<std::uint64_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(got.bytes[2], message_for(3));
  EXPECT_EQ(j->last_seq(), 5u);
}

TEST(Journal, reset_starts_a_new_epoch_and_replay_sees_only_it) {
  TempDir dir;
  auto j = open_ok(test::small_config(dir.path(), 16 * 1024));
  ASSERT_TRUE(j);
  test::append_range(*j, 1, 300, 100);
  EXPECT_EQ(j->epoch(), 1u);
  ASSERT_EQ(j->reset(2, 777), StoreStatus::kOk);
  EXPECT_EQ(j->epoch(), 2u);
  EXPECT_EQ(j->epoch_created_ns(), 777);
  EXPECT_EQ(j->last_seq(), 0u);
  Collected empty;
  EXPECT_EQ(test::replay_all(*j, 1, 1000, empty).delivered, 0u);
  // Seqs restart at 1 with different content.
  for (std::uint64_t s = 1; s <= 200; ++s) {
    const std::string m = "epoch2-" + message_for(s, 90);
    ASSERT_EQ(j->append(s, 0, {m.data(), m.size()}), StoreStatus::kOk);
  }
  Collected got;
  (void)test::replay_all(*j, 1, 1000, got);
  ASSERT_EQ(got.seqs.size(), 200u);
  EXPECT_EQ(got.bytes[9], "epoch2-" + message_for(10, 90));
  EXPECT_EQ(j->reset(2, 0), StoreStatus::kInvalidArgument) << "epochs only move forward";

  // The same after reopening.
  j.reset();
  auto again = open_ok(test::small_config(dir.path(), 16 * 1024));
  ASSERT_TRUE(again);
  EXPECT_EQ(again->epoch(), 2u);
  EXPECT_EQ(again->epoch_created_ns(), 777);
  EXPECT_EQ(again->last_seq(), 200u);
  Collected reopened;
  (void)test::replay_all(*again, 1, 1000, reopened);
  ASSERT_EQ(reopened.seqs.size(), 200u);
  EXPECT_EQ(reopened.bytes[199], "epoch2-" + message_for(200, 90));
}

TEST(Journal, reopening_continues_in_the_tail_and_replays_earlier_segments) {
  TempDir dir;
  {
    auto j = open_ok(test::small_config(dir.path(), 16 * 1024));
    ASSERT_TRUE(j);
    test::append_range(*j, 1, 400, 100);
  }
  const auto files_before = test::segment_files(dir.path());
  auto j = open_ok(test::small_config(dir.path(), 16 * 1024));
  ASSERT_TRUE(j);
  EXPECT_EQ(test::segment_files(dir.path()), files_before) << "no new segment for an unsealed tail";
  EXPECT_FALSE(j->recovery().torn);
  EXPECT_EQ(j->last_seq(), 400u);
  EXPECT_EQ(j->recovery().epoch_segments, files_before.size());
  Collected before;
  EXPECT_EQ(test::replay_all(*j, 1, 400, before).delivered, 400u) << "earlier segments are indexed at open";
  test::append_range(*j, 401, 450, 100);
  Collected got;
  (void)test::replay_all(*j, 1, 450, got);
  ASSERT_EQ(got.seqs.size(), 450u);
  for (std::uint64_t s = 1; s <= 450; ++s) ASSERT_EQ(got.bytes[s - 1], message_for(s, 100));
}

TEST(Journal, sixty_four_byte_alignment_puts_every_record_on_a_cache_line) {
  TempDir dir;
  JournalConfig c = test::small_config(dir.path());
  c.record_alignment = 64;
  {
    auto j = open_ok(c);
    ASSERT_TRUE(j);
    test::append_range(*j, 1, 30, 77);
  }
  auto reader = JournalReader::open(dir.path());
  ASSERT_TRUE(reader) << reader.error().message;
  RecordView v;
  int data = 0;
  while (reader->next(v) == JournalReader::Next::kRecord) {
    EXPECT_EQ(v.offset % 64, 0u);
    if (!v.control()) {
      EXPECT_EQ(std::string(v.bytes.data(), v.bytes.size()), message_for(++data, 77));
    }
  }
  EXPECT_EQ(data, 30);
}

TEST(Journal, reader_walks_every_record_including_control_records_in_file_order) {
  TempDir dir;
  {
    auto j = open_ok(test::small_config(dir.path(), 16 * 1024));
    ASSERT_TRUE(j);
    test::append_range(*j, 1, 300, 100);
  }
  auto reader = JournalReader::open(dir.path());
  ASSERT_TRUE(reader);
  RecordView v;
  std::uint64_t expect = 1;
  std::size_t starts = 0, seals = 0;
  JournalReader::Next n;
  while ((n = reader->next(v)) == JournalReader::Next::kRecord) {
    if (v.control()) {
      starts += (v.flags & kRecordSegmentStart) != 0;
      seals += (v.flags & kRecordSegmentSeal) != 0;
      continue;
    }
    ASSERT_EQ(v.seq, expect);
    ASSERT_EQ(std::string(v.bytes.data(), v.bytes.size()), message_for(expect, 100));
    ++expect;
  }
  EXPECT_EQ(n, JournalReader::Next::kEnd);
  EXPECT_EQ(expect, 301u);
  EXPECT_EQ(starts, reader->segments().size());
  EXPECT_EQ(seals, reader->segments().size() - 1) << "every finished segment is sealed";
}

TEST(Journal, rejects_invalid_configuration_naming_the_directory) {
  TempDir dir;
  JournalConfig c = test::small_config(dir.path());
  c.segment_size = 10000;
  auto j = Journal::open(c);
  ASSERT_FALSE(j);
  EXPECT_NE(j.error().message.find(dir.path()), std::string::npos);
  EXPECT_NE(j.error().message.find("segment_size"), std::string::npos);
  c = test::small_config(dir.path());
  c.record_alignment = 16;
  EXPECT_FALSE(Journal::open(c));
  c = test::small_config("");
  EXPECT_FALSE(Journal::open(c));
}

}  // namespace
}  // namespace hft::store
