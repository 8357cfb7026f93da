// Recovery on open: torn tails, damaged records and headers, files this
// build must refuse, leftovers of interrupted runs.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "hft/store/crc32c.hpp"
#include "hft/store/journal.hpp"
#include "hft/store/journal_reader.hpp"
#include "store/store_test_util.hpp"

namespace hft::store {
namespace {

using test::Collected;
using test::message_for;
using test::TempDir;

constexpr std::size_t kSeg = 16 * 1024;

/// Offsets of the data records of one segment file, from its bytes.
std::vector<std::size_t> data_record_offsets(const std::vector<char>& file, std::size_t alignment = 8) {
  std::vector<std::size_t> out;
  std::size_t off = kSegmentHeaderSize;
  while (off + kRecordHeaderSize <= file.size()) {
    RecordHeader h;
    std::memcpy(&h, file.data() + off, sizeof(h));
    if (h.size == 0) break;
    if ((h.flags & kRecordControl) == 0) out.push_back(off);
    off = align_up(off + h.size, alignment);
  }
  return out;
}

std::uint64_t seq_of_record(const std::vector<char>& file, std::size_t off) {
  std::uint64_t seq;
  std::memcpy(&seq, file.data() + off + 8, 8);
  return seq;
}

TEST(Recovery, torn_tail_at_every_byte_of_the_last_record_keeps_the_previous_one_and_accepts_appends) {
  TempDir dir;
  const std::string seg = dir.sub("00000001.seg");
  {
    auto j = Journal::open(test::small_config(dir.path(), kSeg));
    ASSERT_TRUE(j);
    test::append_range(**j, 1, 20, 90);
  }
  const std::vector<char> pristine = test::read_file(seg);
  const std::vector<std::size_t> offsets = data_record_offsets(pristine);
  ASSERT_EQ(offsets.size(), 20u);
  const std::size_t last = offsets.back();
  RecordHeader lh;
  std::memcpy(&lh, pristine.data() + last, sizeof(lh));
  const std::size_t last_end = last + lh.size;

  for (std::size_t cut = last; cut < last_end; ++cut) {
    SCOPED_TRACE("truncated at " + std::to_string(cut));
    test::write_file(seg, pristine);
    ASSERT_EQ(::truncate(seg.c_str(), static_cast<off_t>(cut)), 0);
    auto j = Journal::open(test::small_config(dir.path(), kSeg));
    ASSERT_TRUE(j) << j.error().message;
    EXPECT_EQ((*j)->last_seq(), 19u);
    EXPECT_TRUE((*j)->recovery().extended);
    EXPECT_EQ((*j)->recovery().records, 19u);
    if (cut > last) {
      EXPECT_TRUE((*j)->recovery().torn);
      EXPECT_EQ((*j)->recovery().cut_offset, last);
    }
    // The journal takes new appends right where the torn record was.
    test::append_range(**j, 20, 22, 90);
    Collected got;
    (void)test::replay_all(**j, 1, 100, got);
    ASSERT_EQ(got.seqs.size(), 22u);
    EXPECT_EQ(got.bytes[18], message_for(19, 90));
    EXPECT_EQ(got.bytes[21], message_for(22, 90));
    j->reset();
    // And it is clean when opened again.
    auto again = Journal::open(test::small_config(dir.path(), kSeg));
    ASSERT_TRUE(again);
    EXPECT_FALSE((*again)->recovery().torn);
    EXPECT_EQ((*again)->last_seq(), 22u);
    for (const auto& e : std::filesystem::directory_iterator(dir.path()))
      if (e.path().string().find(".cut-") != std::string::npos) std::filesystem::remove(e.path());
  }
}

TEST(Recovery, a_claim_never_committed_is_discarded_without_a_repair_and_appends_go_on_there) {
  // A process stopped between claim() and commit(): the message's bytes are
  // in the claimed room, its size (published last) is not. Nothing committed
  // is lost: no repair, no saved copy, a note.
  TempDir dir;
  const std::string seg = dir.sub("00000001.seg");
  {
    auto j = Journal::open(test::small_config(dir.path(), kSeg));
    ASSERT_TRUE(j);
    test::append_range(**j, 1, 5, 90);
    const std::string m = message_for(6, 90);
    std::span<char> room = (*j)->claim(m.size() + 40);
    ASSERT_FALSE(room.empty());
    std::memcpy(room.data() + 40, m.data(), m.size());
  }  // closed with the claim open, as a process stopped inside it
  const std::vector<char> file = test::read_file(seg);
  const auto offsets = data_record_offsets(file);
  ASSERT_EQ(offsets.size(), 5u);
  RecordHeader last;
  std::memcpy(&last, file.data() + offsets.back(), sizeof(last));
  const std::size_t at = align_up(offsets.back() + last.size, 8);
  {
    auto j = Journal::open(test::small_config(dir.path(), kSeg));
    ASSERT_TRUE(j) << j.error().message;
    const RecoveryReport& rep = (*j)->recovery();
    EXPECT_FALSE(rep.torn);
    EXPECT_TRUE(rep.repairs.empty());
    EXPECT_TRUE(rep.saved_to.empty());
    EXPECT_GT(rep.discarded_claim_bytes, 90u);
    ASSERT_EQ(rep.notes.size(), 1u);
    EXPECT_NE(rep.notes[0].find("uncommitted claim"), std::string::npos) << rep.notes[0];
    EXPECT_NE(rep.notes[0].find("offset " + std::to_string(at)), std::string::npos) << rep.notes[0];
    EXPECT_EQ((*j)->last_seq(), 5u);
    EXPECT_FALSE(std::filesystem::exists(dir.sub("repairs.log")));
    test::append_range(**j, 6, 7, 90);
    Collected got;
    (void)test::replay_all(**j, 1, 100, got);
    ASSERT_EQ(got.seqs.size(), 7u);
    EXPECT_EQ(got.bytes[5], message_for(6, 90));
  }
  EXPECT_EQ(data_record_offsets(test::read_file(seg))[5], at);  // appended where the claim was

  // The same bytes without the claim's mark are damage: cut and reported.
  TempDir other;
  const std::string seg2 = other.sub("00000001.seg");
  std::vector<char> damaged = file;
  std::memset(damaged.data() + at + 8, 0, 8);
  test::write_file(seg2, damaged);
  auto j = Journal::open(test::small_config(other.path(), kSeg));
  ASSERT_TRUE(j) << j.error().message;
  EXPECT_TRUE((*j)->recovery().torn);
  EXPECT_EQ((*j)->recovery().repairs.size(), 1u);
  EXPECT_EQ((*j)->recovery().discarded_claim_bytes, 0u);
}

TEST(Recovery, a_torn_tail_is_saved_beside_the_segment_before_it_is_zeroed) {
  TempDir dir;
  const std::string seg = dir.sub("00000001.seg");
  {
    auto j = Journal::open(test::small_config(dir.path(), kSeg));
    ASSERT_TRUE(j);
    test::append_range(**j, 1, 5, 90);
  }
  std::vector<char> file = test::read_file(seg);
  const auto offsets = data_record_offsets(file);
  // A half-written record: valid size, payload never arrived (CRC fails).
  const std::size_t torn = offsets.back();
  std::memset(file.data() + torn + kRecordHeaderSize + 10, 0, 20);
  test::write_file(seg, file);
  auto j = Journal::open(test::small_config(dir.path(), kSeg));
  ASSERT_TRUE(j) << j.error().message;
  const RecoveryReport& rep = (*j)->recovery();
  EXPECT_TRUE(rep.torn);
  EXPECT_EQ(rep.cut_offset, torn);
  EXPECT_EQ((*j)->last_seq(), 4u);
  ASSERT_FALSE(rep.saved_to.empty());
  const std::vector<char> saved = test::read_file(rep.saved_to);
  ASSERT_EQ(saved.size(), rep.cut_bytes);
  EXPECT_EQ(std::memcmp(saved.data(), file.data() + torn, saved.size()), 0);
  // The cut bytes are gone from the segment.
  const std::vector<char> after = test::read_file(seg);
  for (std::size_t i = torn; i < torn + rep.cut_bytes; ++i) ASSERT_EQ(after[i], 0) << i;
}

TEST(Recovery, a_bit_flip_in_a_payload_of_the_tail_cuts_there) {
  TempDir dir;
  const std::string seg = dir.sub("00000001.seg");
  {
    auto j = Journal::open(test::small_config(dir.path(), kSeg));
    ASSERT_TRUE(j);
    test::append_range(**j, 1, 10, 90);
  }
  std::vector<char> file = test::read_file(seg);
  const auto offsets = data_record_offsets(file);
  file[offsets[6] + kRecordHeaderSize + 40] ^= 0x10;  // seq 7
  test::write_file(seg, file);
  auto j = Journal::open(test::small_config(dir.path(), kSeg));
  ASSERT_TRUE(j);
  EXPECT_EQ((*j)->last_seq(), 6u);
  EXPECT_TRUE((*j)->recovery().torn);
  EXPECT_FALSE((*j)->recovery().saved_to.empty()) << "records 7..10 are kept in the side file";
}

TEST(Recovery, a_bit_flip_in_a_record_header_of_the_tail_cuts_there) {
  TempDir dir;
  const std::string seg = dir.sub("00000001.seg");
  {
    auto j = Journal::open(test::small_config(dir.path(), kSeg));
    ASSERT_TRUE(j);
    test::append_range(**j, 1, 10, 90);
  }
  for (std::size_t field : {0, 4, 8, 16, 24, 28}) {
    SCOPED_TRACE("header byte " + std::to_string(field));
    const std::vector<char> pristine = test::read_file(seg);
    std::vector<char> file = pristine;
    const auto offsets = data_record_offsets(file);
    ASSERT_GE(offsets.size(), 10u);
    file[offsets[8] + field] ^= 0x01;  // seq 9
    test::write_file(seg, file);
    auto j = Journal::open(test::small_config(dir.path(), kSeg));
    ASSERT_TRUE(j);
    EXPECT_EQ((*j)->last_seq(), 8u);
    test::append_range(**j, 9, 10, 90);  // put the journal back for the next round
  }
}

TEST(Recovery, a_corrupt_record_in_a_finished_segment_is_skipped_by_replay_and_counted) {
  TempDir dir;
  {
    auto j = Journal::open(test::small_config(dir.path(), kSeg));
    ASSERT_TRUE(j);
    test::append_range(**j, 1, 300, 90);
  }
  const std::string seg = dir.sub("00000001.seg");
  std::vector<char> file = test::read_file(seg);
  const auto offsets = data_record_offsets(file);
  const std::uint64_t victim = seq_of_record(file, offsets[10]);
  file[offsets[10] + kRecordHeaderSize + 5] ^= 0x40;
  test::write_file(seg, file);
  auto j = Journal::open(test::small_config(dir.path(), kSeg));
  ASSERT_TRUE(j);
  EXPECT_FALSE((*j)->recovery().torn) << "only the tail segment is scanned at open";
  Collected got;
  const ReplayResult r = test::replay_all(**j, 1, 300, got);
  EXPECT_EQ(r.corrupt, 1u);
  EXPECT_EQ(r.delivered, 299u);
  EXPECT_EQ(std::count(got.seqs.begin(), got.seqs.end(), victim), 0);
}

std::string reopen_error(const std::string& dir) {
  auto j = Journal::open(test::small_config(dir, kSeg));
  return j ? std::string() : j.error().message;
}

TEST(Recovery, a_newer_format_version_is_refused_naming_the_file_and_left_untouched) {
  TempDir dir;
  {
    auto j = Journal::open(test::small_config(dir.path(), kSeg));
    ASSERT_TRUE(j);
    test::append_range(**j, 1, 5);
  }
  const std::string seg = dir.sub("00000001.seg");
  std::vector<char> file = test::read_file(seg);
  SegmentHeader h;
  std::memcpy(&h, file.data(), sizeof(h));
  h.format_version = kFormatVersion + 1;
  h.header_crc = crc32c(&h, offsetof(SegmentHeader, header_crc));
  std::memcpy(file.data(), &h, sizeof(h));
  test::write_file(seg, file);
  const std::string err = reopen_error(dir.path());
  EXPECT_NE(err.find(seg), std::string::npos) << err;
  EXPECT_NE(err.find("newer"), std::string::npos) << err;
  EXPECT_EQ(test::read_file(seg), file) << "never overwritten";
  EXPECT_EQ(test::segment_files(dir.path()).size(), 1u) << "nothing created beside it";
  auto reader = JournalReader::open(dir.path());
  EXPECT_FALSE(reader);
}

TEST(Recovery, bad_magic_or_header_crc_is_refused_naming_the_file_and_left_untouched) {
  TempDir dir;
  {
    auto j = Journal::open(test::small_config(dir.path(), kSeg));
    ASSERT_TRUE(j);
    test::append_range(**j, 1, 5);
  }
  const std::string seg = dir.sub("00000001.seg");
  const std::vector<char> pristine = test::read_file(seg);
  for (std::size_t byte : {0, 16, 24, 60}) {
    SCOPED_TRACE("header byte " + std::to_string(byte));
    std::vector<char> file = pristine;
    file[byte] ^= 0x04;
    test::write_file(seg, file);
    const std::string err = reopen_error(dir.path());
    EXPECT_NE(err.find(seg), std::string::npos) << err;
    EXPECT_NE(err.find(byte == 0 ? "magic" : "CRC"), std::string::npos) << err;
    EXPECT_EQ(test::read_file(seg), file);
  }
}

TEST(Recovery, a_sealed_tail_continues_in_a_new_segment_of_the_same_epoch) {
  TempDir dir;
  {
    auto j = Journal::open(test::small_config(dir.path(), kSeg));
    ASSERT_TRUE(j);
    test::append_range(**j, 1, 200, 90);
  }
  // Remove the unsealed tail: the previous (sealed) segment becomes the tail.
  auto files = test::segment_files(dir.path());
  ASSERT_GE(files.size(), 2u);
  std::filesystem::remove(dir.sub(files.back()));
  auto j = Journal::open(test::small_config(dir.path(), kSeg));
  ASSERT_TRUE(j) << j.error().message;
  const std::uint64_t last = (*j)->last_seq();
  EXPECT_GT(last, 0u);
  EXPECT_EQ((*j)->recovery().tail_path, dir.sub(files.back())) << "the next number is used again";
  test::append_range(**j, last + 1, last + 5, 90);
  Collected got;
  (void)test::replay_all(**j, 1, 1000, got);
  EXPECT_EQ(got.seqs.size(), last + 5);
}

// Where the seal of segment 1 ends and where its index slots begin, from
// the file's bytes: equal when the last claim filled the segment exactly.
struct SealPlace {
  std::size_t seal_end = 0;
  std::size_t slot_low = 0;
  std::uint32_t indexed = 0;
};

SealPlace seal_place(const std::vector<char>& file) {
  SealPlace p;
  std::size_t off = kSegmentHeaderSize;
  while (off + kRecordHeaderSize <= file.size()) {
    RecordHeader h;
    std::memcpy(&h, file.data() + off, sizeof(h));
    if (h.size == 0) break;
    if ((h.flags & kRecordSegmentSeal) != 0) {
      SegmentSealPayload seal;
      std::memcpy(&seal, file.data() + off + kRecordHeaderSize + h.gap, sizeof(seal));
      p.seal_end = off + h.size;
      p.indexed = seal.indexed_count;
      p.slot_low = file.size() - kSlotSize * seal.indexed_count;
      break;
    }
    off = align_up(off + h.size, 8);
  }
  return p;
}

// Journals `dir` with messages of one length, trying lengths until the
// first segment's last claim fills it exactly (its seal ends where the
// slots begin); returns how many messages that took, 0 if no length did.
std::uint64_t fill_first_segment_to_the_brim(const TempDir& dir) {
  for (std::size_t length = 60; length < 200; ++length) {
    for (const auto& e : std::filesystem::directory_iterator(dir.path()))
      std::filesystem::remove_all(e.path());
    // About a segment and a half.
    const std::uint64_t count = 3 * kSeg / (2 * (length + kRecordHeaderSize + kSlotSize));
    {
      auto j = Journal::open(test::small_config(dir.path(), kSeg));
      if (!j) return 0;
      test::append_range(**j, 1, count, length);
    }
    const SealPlace p = seal_place(test::read_file(dir.sub(test::segment_files(dir.path()).front())));
    if (p.seal_end != 0 && p.seal_end == p.slot_low) return count;
  }
  return 0;
}

TEST(Recovery, a_segment_filled_to_the_brim_reads_whole_and_its_seal_is_not_cut_as_a_torn_tail) {
  // The last claim that fits leaves its seal ending exactly where the index
  // slots begin: no zero byte between them. Readers must stop at the seal
  // (the slots are not records), and recovery must take the seal for one.
  TempDir dir;
  const std::uint64_t written = fill_first_segment_to_the_brim(dir);
  ASSERT_NE(written, 0u) << "no message length filled a 16 KiB segment exactly";
  auto files = test::segment_files(dir.path());
  ASSERT_GE(files.size(), 2u);
  const SealPlace brim = seal_place(test::read_file(dir.sub(files.front())));

  // hft-journal and the audit read with JournalReader.
  {
    auto reader = JournalReader::open(dir.path());
    ASSERT_TRUE(reader) << reader.error().message;
    RecordView v;
    std::uint64_t expect = 1;
    JournalReader::Next n;
    while ((n = reader->next(v)) == JournalReader::Next::kRecord) {
      if (!v.control()) {
        EXPECT_EQ(v.seq, expect++);
      }
    }
    EXPECT_EQ(n, JournalReader::Next::kEnd) << reader->where();
    EXPECT_EQ(expect, written + 1);
  }

  // The sealed, brim-full segment as the tail (the next one removed, as a
  // crash right after the rotation can leave it): no cut, no repair.
  for (std::size_t i = 1; i < files.size(); ++i) std::filesystem::remove(dir.sub(files[i]));
  const std::uint64_t in_first = brim.indexed;
  {
    auto j = Journal::open(test::small_config(dir.path(), kSeg));
    ASSERT_TRUE(j) << j.error().message;
    EXPECT_FALSE((*j)->recovery().torn) << "cut at " << (*j)->recovery().cut_offset;
    EXPECT_TRUE((*j)->recovery().repairs.empty()) << (*j)->recovery().repairs.front();
    EXPECT_EQ((*j)->last_seq(), in_first);
    test::append_range(**j, in_first + 1, in_first + 5, 90);
    Collected got;
    (void)test::replay_all(**j, 1, 1000, got);
    EXPECT_EQ(got.seqs.size(), in_first + 5);
  }
  for (const auto& e : std::filesystem::directory_iterator(dir.path()))
    EXPECT_EQ(e.path().filename().string().find(".cut-"), std::string::npos) << e.path();
  const SealPlace after = seal_place(test::read_file(dir.sub(files.front())));
  EXPECT_EQ(after.seal_end, brim.seal_end) << "the seal is still there";
}

TEST(Recovery, unused_spares_and_interrupted_creations_past_the_tail_are_removed) {
  TempDir dir;
  {
    auto j = Journal::open(test::small_config(dir.path(), kSeg));
    ASSERT_TRUE(j);
    test::append_range(**j, 1, 10);
  }
  // An empty, valid spare (as the service leaves one) and a zero-length file
  // (creation interrupted before fallocate).
  {
    std::vector<char> spare(kSeg, 0);
    SegmentHeader h;
    std::memset(&h, 0, sizeof(h));
    std::memcpy(h.magic, kSegmentMagic, 8);
    h.format_version = kFormatVersion;
    h.header_size = 64;
    h.record_alignment = 8;
    h.segment_number = 2;
    h.segment_size = kSeg;
    h.slot_size = 4;
    h.header_crc = crc32c(&h, offsetof(SegmentHeader, header_crc));
    std::memcpy(spare.data(), &h, sizeof(h));
    test::write_file(dir.sub("00000002.seg"), spare);
    test::write_file(dir.sub("00000003.seg"), {});
  }
  auto j = Journal::open(test::small_config(dir.path(), kSeg));
  ASSERT_TRUE(j) << j.error().message;
  EXPECT_EQ((*j)->recovery().removed_spares.size(), 2u);
  EXPECT_EQ((*j)->last_seq(), 10u);
  EXPECT_EQ(test::segment_files(dir.path()), std::vector<std::string>{"00000001.seg"});
}

TEST(Recovery, a_tail_that_lost_its_start_record_continues_the_previous_epoch) {
  TempDir dir;
  {
    auto j = Journal::open(test::small_config(dir.path(), kSeg));
    ASSERT_TRUE(j);
    test::append_range(**j, 1, 200, 90);
    ASSERT_EQ((*j)->reset(5, 55), StoreStatus::kOk);
    test::append_range(**j, 1, 150, 90);
  }
  auto files = test::segment_files(dir.path());
  const std::string tail = dir.sub(files.back());
  std::vector<char> file = test::read_file(tail);
  file[kSegmentHeaderSize + 9] ^= 1;  // damage the start record
  test::write_file(tail, file);
  auto j = Journal::open(test::small_config(dir.path(), kSeg));
  ASSERT_TRUE(j) << j.error().message;
  EXPECT_EQ((*j)->epoch(), 5u);
  EXPECT_TRUE((*j)->recovery().torn);
  EXPECT_FALSE((*j)->recovery().saved_to.empty());
  // Epoch 5's earlier segment still replays (1..k); the cut tail does not,
  // and nothing of epoch 1 (which had seqs up to 200) shows up.
  Collected got;
  (void)test::replay_all(**j, 1, 1000, got);
  ASSERT_GT(got.seqs.size(), 0u);
  EXPECT_LT(got.seqs.size(), 150u);
  for (std::size_t i = 0; i < got.seqs.size(); ++i) EXPECT_EQ(got.seqs[i], i + 1);
  EXPECT_EQ((*j)->last_seq(), got.seqs.back());
}

TEST(Recovery, a_cut_tail_is_reported_and_recorded_in_the_repair_log) {
  TempDir dir;
  {
    auto j = Journal::open(test::small_config(dir.path(), kSeg));
    ASSERT_TRUE(j);
    test::append_range(**j, 1, 5);
  }
  const std::string path = dir.sub("00000001.seg");
  std::vector<char> bytes = test::read_file(path);
  // Garbage after the last record, as a torn write leaves.
  auto j0 = Journal::open(test::small_config(dir.path(), kSeg));
  ASSERT_TRUE(j0);
  const std::size_t end = static_cast<std::size_t>((*j0)->write_position() & 0xFFFFFFFFu);
  j0->reset();
  bytes[end + 3] = 0x5a;
  test::write_file(path, bytes);
  auto j = Journal::open(test::small_config(dir.path(), kSeg));
  ASSERT_TRUE(j) << j.error().message;
  const RecoveryReport& r = (*j)->recovery();
  ASSERT_TRUE(r.torn);
  ASSERT_EQ(r.repairs.size(), 1u);
  EXPECT_NE(r.repairs[0].find(path + ": tail cut at offset " + std::to_string(end) + " after 5 good records"),
            std::string::npos)
      << r.repairs[0];
  EXPECT_NE(r.repairs[0].find(r.saved_to), std::string::npos);
  const std::vector<char> log = test::read_file(dir.sub(kRepairLogName));
  EXPECT_NE(std::string(log.begin(), log.end()).find(r.repairs[0]), std::string::npos);
  // Nothing more to repair: nothing more reported.
  j->reset();
  auto again = Journal::open(test::small_config(dir.path(), kSeg));
  ASSERT_TRUE(again);
  EXPECT_TRUE((*again)->recovery().repairs.empty());
}

TEST(Recovery, a_segment_emptied_below_the_tail_is_moved_aside_not_removed_as_a_spare) {
  TempDir dir;
  {
    auto j = Journal::open(test::small_config(dir.path(), kSeg));
    ASSERT_TRUE(j);
    test::append_range(**j, 1, 300, 90);
  }
  auto files = test::segment_files(dir.path());
  ASSERT_GE(files.size(), 3u);
  test::write_file(dir.sub(files[1]), {});
  auto j = Journal::open(test::small_config(dir.path(), kSeg));
  ASSERT_TRUE(j) << j.error().message;
  const RecoveryReport& r = (*j)->recovery();
  EXPECT_TRUE(r.removed_spares.empty());
  ASSERT_EQ(r.lost_segments.size(), 1u);
  EXPECT_EQ(r.lost_segments[0], dir.sub(files[1]) + ".lost");
  ASSERT_EQ(r.repairs.size(), 1u);
  EXPECT_NE(r.repairs[0].find("which holds records: its records are lost"), std::string::npos)
      << r.repairs[0];
}

TEST(Recovery, a_truncated_tail_is_extended_and_reported) {
  TempDir dir;
  {
    auto j = Journal::open(test::small_config(dir.path(), kSeg));
    ASSERT_TRUE(j);
    test::append_range(**j, 1, 40, 90);
  }
  const std::string path = dir.sub("00000001.seg");
  ASSERT_EQ(::truncate(path.c_str(), 4096), 0);
  auto j = Journal::open(test::small_config(dir.path(), kSeg));
  ASSERT_TRUE(j) << j.error().message;
  const RecoveryReport& r = (*j)->recovery();
  EXPECT_TRUE(r.extended);
  EXPECT_EQ(r.original_size, 4096u);
  EXPECT_LT((*j)->last_seq(), 40u);
  ASSERT_FALSE(r.repairs.empty());
  EXPECT_NE(r.repairs[0].find(path + ": file was 4096 bytes"), std::string::npos) << r.repairs[0];
}

}  // namespace
}  // namespace hft::store

namespace hft::store {
namespace {

// Segments 1..3 of 300-byte messages; returns the last seq. Then segment 3
// becomes segment 4 (its header renumbered) and 00000003.seg a spare the
// writer passed over (the service was still preparing it when the writer
// needed it, so the writer created 4 itself, and the process stopped before
// the service renumbered or finished 3): with its header only, or none.
/// Appends 300-byte messages until the journal has `segments` segments;
/// returns the last seq (0 if it could not be opened).
std::uint64_t write_segments(const std::string& dir, const JournalConfig& c, std::size_t segments) {
  std::uint64_t last = 0;
  auto j = Journal::open(c);
  EXPECT_TRUE(j) << j.error().message;
  if (!j) return 0;
  while (test::segment_files(dir).size() < segments) {
    ++last;
    const std::string m = message_for(last, 300);
    EXPECT_EQ((*j)->append(last, static_cast<std::int64_t>(last), {m.data(), m.size()}), StoreStatus::kOk);
  }
  return last;
}

std::uint64_t journal_with_a_passed_over_spare(const std::string& dir, const JournalConfig& c, bool header) {
  const std::uint64_t last = write_segments(dir, c, 3);
  if (last == 0) return 0;
  const std::string three = dir + "/00000003.seg";
  std::vector<char> bytes = test::read_file(three);
  SegmentHeader h{};
  std::memcpy(&h, bytes.data(), sizeof(h));
  h.segment_number = 4;
  h.header_crc = crc32c(&h, offsetof(SegmentHeader, header_crc));
  std::memcpy(bytes.data(), &h, sizeof(h));
  test::write_file(dir + "/00000004.seg", bytes);
  std::vector<char> spare(bytes.size(), 0);
  h.segment_number = 3;
  h.created_ns -= 1000;
  h.header_crc = crc32c(&h, offsetof(SegmentHeader, header_crc));
  if (header) std::memcpy(spare.data(), &h, sizeof(h));
  test::write_file(three, spare);
  return last;
}

// With its header only, or none (the process stopped while the service was
// creating it), it is not a segment that lost records: the segments on
// either side hold consecutive seqs of one epoch. No repair, and every
// older segment stays replayable; a headerless one is removed as a spare.
TEST(Recovery,
     a_spare_the_writer_passed_over_below_the_tail_is_no_repair_and_older_segments_stay_replayable) {
  for (const bool header : {true, false}) {
    SCOPED_TRACE(header ? "header only" : "no header");
    TempDir dir;
    JournalConfig c = test::small_config(dir.path(), 64 * 1024);
    const std::uint64_t last = journal_with_a_passed_over_spare(dir.path(), c, header);
    ASSERT_GT(last, 0u);
    auto j = Journal::open(c);
    ASSERT_TRUE(j) << j.error().message;
    EXPECT_EQ((*j)->recovery().last_seq, last);
    EXPECT_TRUE((*j)->recovery().repairs.empty()) << (*j)->recovery().repairs.front();
    if (!header) {
      ASSERT_EQ((*j)->recovery().removed_spares.size(), 1u);
      EXPECT_EQ((*j)->recovery().removed_spares.front(), dir.path() + "/00000003.seg");
    }
    Collected got;
    (void)test::replay_all(**j, 1, last, got);
    ASSERT_EQ(got.seqs.size(), last) << "segments below the passed-over spare are replayed too";
    for (std::uint64_t s = 1; s <= last; ++s) ASSERT_EQ(got.bytes[s - 1], message_for(s, 300));
  }
}

// A segment that did hold records and lost them (zeroed): the seqs on
// either side do not follow each other, so it is still a repair.
TEST(Recovery, a_zeroed_segment_below_the_tail_whose_seqs_are_missing_is_still_reported_lost) {
  TempDir dir;
  JournalConfig c = test::small_config(dir.path(), 64 * 1024);
  ASSERT_GT(write_segments(dir.path(), c, 4), 0u);
  const std::string three = dir.path() + "/00000003.seg";
  test::write_file(three, std::vector<char>(test::read_file(three).size(), 0));
  auto j = Journal::open(c);
  ASSERT_TRUE(j) << j.error().message;
  ASSERT_EQ((*j)->recovery().repairs.size(), 1u);
  EXPECT_NE((*j)->recovery().repairs.front().find("its records are lost"), std::string::npos)
      << (*j)->recovery().repairs.front();
}

}  // namespace
}  // namespace hft::store
