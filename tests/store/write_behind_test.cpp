// Write-behind buffers (JournalConfig::write_behind): the writer stores into
// buffers the journal reuses, the service writes them to the segment files
// behind it, and a process killed in between loses nothing it committed.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "hft/store/journal.hpp"
#include "hft/store/journal_reader.hpp"
#include "hft/store/journal_service.hpp"
#include "store/store_test_util.hpp"
#include "support/alloc_counter.hpp"
#include "support/killed_child.hpp"

namespace hft::store {
namespace {

namespace fs = std::filesystem;
using test::message_for;
using test::TempDir;

constexpr std::int64_t kSecond = 1'000'000'000;

JournalConfig wb_config(const std::string& dir) {
  JournalConfig c = test::small_config(dir, 1024 * 1024);
  c.durability = Durability::kOs;
  c.initial_segment_size = 256 * 1024;
  c.prepare_ahead = 64 * 1024;
  c.write_behind = true;
  c.write_behind_chunk = 64 * 1024;
  c.write_behind_delay_ns = kSecond / 100;
  return c;
}

std::vector<std::string> messages(std::size_t n) {
  std::vector<std::string> sent;
  for (std::uint64_t seq = 1; seq <= n; ++seq) sent.push_back(message_for(seq, 100 + (seq * 7919) % 400));
  return sent;
}

// The data records the segment files hold, read from the files alone; a
// record that fails its checks ends the read (and is counted).
struct OnDisk {
  std::vector<std::uint64_t> seqs;
  std::vector<std::string> bytes;
  int corrupt = 0;
};
OnDisk read_files(const std::string& dir) {
  OnDisk out;
  auto reader = JournalReader::open(dir);
  EXPECT_TRUE(reader) << (reader ? "" : reader.error().message);
  if (!reader) return out;
  RecordView r;
  for (;;) {
    const auto next = reader->next(r);
    if (next == JournalReader::Next::kCorrupt) ++out.corrupt;
    if (next != JournalReader::Next::kRecord) break;
    if (r.control()) continue;
    out.seqs.push_back(r.seq);
    out.bytes.emplace_back(r.bytes.data(), r.bytes.size());
  }
  return out;
}

void expect_every_record(const std::string& dir, const JournalConfig& c, const std::vector<std::string>& sent,
                         std::size_t count) {
  const OnDisk files = read_files(dir);
  EXPECT_EQ(files.corrupt, 0);
  ASSERT_EQ(files.seqs.size(), count);
  for (std::size_t i = 0; i < count; ++i) {
    ASSERT_EQ(files.seqs[i], i + 1);
    ASSERT_EQ(files.bytes[i], sent[i]) << "seq " << i + 1;
  }
  auto j = Journal::open(c);
  ASSERT_TRUE(j) << j.error().message;
  test::Collected got;
  (void)test::replay_all(**j, 1, count, got);
  ASSERT_EQ(got.seqs.size(), count);
  for (std::size_t i = 0; i < count; ++i) ASSERT_EQ(got.bytes[i], sent[i]) << "seq " << i + 1;
}

// Appends sent[first - 1 .. last - 1] as seqs first..last (timestamp: the
// seq); the status of the first one refused, or kOk.
StoreStatus append_messages(Journal& j, const std::vector<std::string>& sent, std::uint64_t first,
                            std::uint64_t last) {
  for (std::uint64_t seq = first; seq <= last; ++seq) {
    const std::string& m = sent[seq - 1];
    if (const StoreStatus st = j.append(seq, static_cast<std::int64_t>(seq), {m.data(), m.size()});
        st != StoreStatus::kOk)
      return st;
  }
  return StoreStatus::kOk;
}

bool has_buffer_files(const std::string& dir) {
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().starts_with("write-behind-")) return true;
  return false;
}

TEST(WriteBehind, records_reach_the_segment_files_behind_the_writer_and_every_one_by_the_close) {
  TempDir dir;
  const JournalConfig c = wb_config(dir.path());
  const std::vector<std::string> sent = messages(12000);
  {
    auto j = Journal::open(c);
    ASSERT_TRUE(j) << j.error().message;
    EXPECT_TRUE(has_buffer_files(dir.path()));
    std::int64_t now = kSecond;
    for (std::uint64_t first = 1; first <= sent.size(); first += 300) {
      ASSERT_EQ(append_messages(**j, sent, first, std::min<std::uint64_t>(first + 299, sent.size())),
                StoreStatus::kOk);
      test::settle(**j, now += kSecond);
    }
    test::settle(**j, now += kSecond);
    const JournalStats st = (*j)->stats();
    EXPECT_GE(st.rotations, 3u);
    EXPECT_GE(st.write_behind_segments, st.rotations);
    EXPECT_EQ(st.write_behind_misses, 0u);
    EXPECT_GT(st.write_behind_bytes, 3u * 1024 * 1024);
    EXPECT_EQ(st.service_errors, 0u);
    // While it is open, the files alone hold every record up to the last
    // one published (the page the writer is in is written with zeros
    // after its last record): a reader finds a clean end, not a torn one.
    const OnDisk live = read_files(dir.path());
    EXPECT_EQ(live.corrupt, 0);
    EXPECT_EQ(live.seqs.size(), sent.size());
  }
  EXPECT_FALSE(has_buffer_files(dir.path()));
  expect_every_record(dir.path(), c, sent, sent.size());
}

// Replay of a segment the writer has left but whose buffer the service has
// not written out yet reads the buffer, not the file that still lacks it.
TEST(WriteBehind, a_resend_from_a_finished_segment_not_yet_written_out_reads_its_buffer) {
  TempDir dir;
  JournalConfig c = wb_config(dir.path());
  c.write_behind_chunk = 16 * 1024 * 1024;  // nothing written out before the segment is finished
  c.write_behind_delay_ns = 1000 * kSecond;
  c.initial_segment_size = 0;  // every segment 1 MiB
  const std::vector<std::string> sent = messages(9000);
  auto j = Journal::open(c);
  ASSERT_TRUE(j) << j.error().message;
  std::uint64_t seq = 0;
  // The spare ready, then records until the writer rotates into it.
  test::settle(**j, 1);
  while ((*j)->stats().rotations == 0) {
    ++seq;
    ASSERT_EQ((*j)->append(seq, static_cast<std::int64_t>(seq), {sent[seq - 1].data(), sent[seq - 1].size()}),
              StoreStatus::kOk);
  }
  // The files lack the first segment's records: they are in its buffer.
  const std::size_t in_files = read_files(dir.path()).seqs.size();
  EXPECT_LT(in_files, seq / 2);
  // The buffers hold them, but a running journal's buffers are in use (its
  // service writes them out): nothing pending for a reader of the directory.
  const auto pending = pending_write_behind(dir.path());
  ASSERT_TRUE(pending) << pending.error().message;
  EXPECT_TRUE(pending->empty());
  test::Collected got;
  const ReplayResult r = test::replay_all(**j, 1, seq, got);
  EXPECT_EQ(r.unavailable_segments, 0u);
  ASSERT_EQ(got.seqs.size(), seq);
  for (std::size_t i = 0; i < seq; ++i) ASSERT_EQ(got.bytes[i], sent[i]) << "seq " << i + 1;
  // The service finishes it: the file then holds its records.
  test::settle(**j, 2);
  EXPECT_GT(read_files(dir.path()).seqs.size(), seq / 2);
  got = {};
  (void)test::replay_all(**j, 1, seq, got);
  ASSERT_EQ(got.seqs.size(), seq);
  j->reset();
  expect_every_record(dir.path(), c, sent, seq);
}

// A writer killed with records in its buffers that the service had not
// written out: the next open writes them back, and says so.
TEST(WriteBehind, a_writer_killed_before_the_write_out_loses_nothing_it_committed) {
  TempDir dir;
  JournalConfig c = wb_config(dir.path());
  c.write_behind_chunk = 512 * 1024;
  c.write_behind_delay_ns = 1000 * kSecond;
  const std::vector<std::string> sent = messages(20000);
  std::uint64_t done = 0;
  ASSERT_TRUE(hft::test::run_then_kill(
      [&](int ready) {
        JournalService service;
        if (!service.start()) ::_exit(2);
        auto j = Journal::open(c, &service);
        if (!j) ::_exit(3);
        if (append_messages(**j, sent, 1, sent.size()) != StoreStatus::kOk) ::_exit(4);
        const std::uint64_t n = sent.size();
        if (::write(ready, &n, sizeof(n)) != sizeof(n)) ::_exit(5);
        hft::test::wait_to_be_killed();  // its journal open
      },
      &done, sizeof(done)));
  ASSERT_EQ(done, sent.size());
  // The files alone lack the last records: they are in a buffer, which
  // says so to a reader of the directory (the audit). (Not read here with
  // JournalReader: killed between a spare's rename and its new header, the
  // files are refused by it until an open settles them.)
  EXPECT_TRUE(has_buffer_files(dir.path()));
  const auto pending = pending_write_behind(dir.path());
  ASSERT_TRUE(pending) << pending.error().message;
  ASSERT_FALSE(pending->empty());
  EXPECT_TRUE(pending->front().from < pending->front().to ||
              pending->front().slots_from < pending->front().slots_to);
  {
    auto j = Journal::open(c);
    ASSERT_TRUE(j) << j.error().message;
    const RecoveryReport& rep = (*j)->recovery();
    EXPECT_GT(rep.written_back_bytes, 0u);
    EXPECT_TRUE(rep.repairs.empty()) << rep.repairs.front();
    EXPECT_FALSE(rep.torn) << "cut at " << rep.cut_offset;
    bool said = false;
    for (const std::string& n : rep.notes) said = said || n.find("written back from") != std::string::npos;
    EXPECT_TRUE(said);
  }
  expect_every_record(dir.path(), c, sent, sent.size());
}

// With no service at all nothing is written out: finished segments, sealed,
// are in their buffers whole, their index slots too. The next open writes
// both back, and a resend from those segments reads their slots.
TEST(WriteBehind, finished_segments_killed_before_any_write_out_come_back_with_their_index) {
  TempDir dir;
  JournalConfig c = wb_config(dir.path());
  c.initial_segment_size = 0;  // 1 MiB segments
  const std::vector<std::string> sent = messages(9000);
  std::uint64_t rotations = 0;
  ASSERT_TRUE(hft::test::run_then_kill(
      [&](int ready) {
        auto j = Journal::open(c);  // no service
        if (!j) ::_exit(3);
        if (append_messages(**j, sent, 1, sent.size()) != StoreStatus::kOk) ::_exit(4);
        const std::uint64_t n = (*j)->stats().rotations;
        if (::write(ready, &n, sizeof(n)) != sizeof(n)) ::_exit(5);
        hft::test::wait_to_be_killed();  // its journal open
      },
      &rotations, sizeof(rotations)));
  ASSERT_GE(rotations, 2u);
  EXPECT_EQ(read_files(dir.path()).seqs.size(), 0u) << "nothing was written out";
  {
    auto j = Journal::open(c);
    ASSERT_TRUE(j) << j.error().message;
    std::size_t with_slots = 0;
    for (const std::string& n : (*j)->recovery().notes)
      with_slots += n.find("and its index slots") != std::string::npos;
    EXPECT_GE(with_slots, rotations) << "every sealed segment's slots written back";
    EXPECT_TRUE((*j)->recovery().repairs.empty()) << (*j)->recovery().repairs.front();
  }
  expect_every_record(dir.path(), c, sent, sent.size());
}

// After a power loss a buffer file may be older than its segment file: it is
// never copied over records the file holds.
TEST(WriteBehind, a_buffer_that_differs_from_its_segments_records_is_not_written_back) {
  TempDir dir;
  const JournalConfig c = wb_config(dir.path());
  const std::vector<std::string> sent = messages(500);
  {
    auto j = Journal::open(c);
    ASSERT_TRUE(j) << j.error().message;
    ASSERT_EQ(append_messages(**j, sent, 1, sent.size()), StoreStatus::kOk);
  }
  const std::string seg = dir.path() + "/" + test::segment_files(dir.path()).back();
  const std::vector<char> before = test::read_file(seg);
  // A buffer with the segment's header and other bytes in its first record,
  // and more records after.
  std::vector<char> stale = before;
  stale[64 + 32 + 20] ^= 0x55;
  test::write_file(dir.path() + "/write-behind-0", stale);
  // And one naming a segment the journal does not have.
  std::vector<char> foreign = before;
  SegmentHeader h{};
  std::memcpy(&h, foreign.data(), sizeof(h));
  h.segment_number += 100;
  std::memcpy(foreign.data(), &h, sizeof(h));
  test::write_file(dir.path() + "/write-behind-1", foreign);
  {
    auto j = Journal::open(c);
    ASSERT_TRUE(j) << j.error().message;
    EXPECT_EQ((*j)->recovery().written_back_bytes, 0u);
  }
  EXPECT_EQ(test::read_file(seg), before);
  expect_every_record(dir.path(), c, sent, sent.size());
}

TEST(WriteBehind, durability_fsync_or_sync_is_refused_by_name) {
  TempDir dir;
  JournalConfig c = wb_config(dir.path());
  c.durability = Durability::kFsync;
  c.fsync_interval_ns = kSecond;
  auto j = Journal::open(c);
  ASSERT_FALSE(j);
  EXPECT_NE(j.error().message.find("write-behind"), std::string::npos) << j.error().message;
  EXPECT_NE(j.error().message.find("fsync"), std::string::npos) << j.error().message;
}

// The writer's appends, rotations included, allocate nothing with buffers.
TEST(WriteBehind, appends_and_rotations_allocate_nothing_on_the_writer) {
  TempDir dir;
  JournalService service;
  ASSERT_TRUE(service.start());
  const JournalConfig c = wb_config(dir.path());
  const std::vector<std::string> sent = messages(30000);
  std::uint64_t allocations = 0;
  JournalStats st;
  {
    auto j = Journal::open(c, &service);
    ASSERT_TRUE(j) << j.error().message;
    ASSERT_EQ(append_messages(**j, sent, 1, 1000), StoreStatus::kOk);
    const hft::test::AllocationScope scope;
    ASSERT_EQ(append_messages(**j, sent, 1001, sent.size()), StoreStatus::kOk);
    allocations = scope.count();
    st = (*j)->stats();
  }
  service.stop();
  EXPECT_EQ(allocations, 0u);
  EXPECT_GE(st.rotations, 5u);
  EXPECT_GT(st.write_behind_segments, 5u);
  expect_every_record(dir.path(), c, sent, sent.size());
}

}  // namespace
}  // namespace hft::store
