// The journal service: spare segments, retiring, flushing, retention.
#include "hft/store/journal_service.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <filesystem>
#include <thread>

#include "hft/core/clock.hpp"
#include "hft/store/journal.hpp"
#include "store/store_test_util.hpp"

namespace hft::store {
namespace {

using test::Collected;
using test::message_for;
using test::wait_for;
using test::TempDir;

constexpr std::size_t kSeg = 64 * 1024;

TEST(Service, prepares_spares_so_rotations_never_create_a_segment_inline) {
  TempDir dir;
  JournalService service;
  ASSERT_TRUE(service.start());
  {
    auto j = Journal::open(test::small_config(dir.path(), kSeg), &service);
    ASSERT_TRUE(j) << j.error().message;
    std::uint64_t seq = 1;
    while ((*j)->stats().rotations < 6) {
      // The writer runs at its own pace; the service must have the next
      // segment ready (and pre-faulted) by the time it is needed.
      ASSERT_TRUE(wait_for([&] { return (*j)->spare_prefaulted(); })) << "service never prepared a spare";
      const std::string m = message_for(seq, 200);
      ASSERT_EQ((*j)->append(seq, 0, {m.data(), m.size()}), StoreStatus::kOk);
      ++seq;
    }
    ASSERT_TRUE(wait_for([&] { return (*j)->stats().segments_retired >= 6; }));
    const JournalStats st = (*j)->stats();
    EXPECT_EQ(st.spare_misses, 0u);
    EXPECT_EQ(st.inline_creations, 0u);
    EXPECT_EQ(st.unfaulted_rotations, 0u);
    EXPECT_GE(st.segments_created, 6u);
    Collected got;
    EXPECT_EQ(test::replay_all(**j, 1, seq, got).delivered, seq - 1);
  }
  EXPECT_EQ(service.journals(), 0u) << "a closed journal detaches";
  // Closing removed the unused spare: only written segments remain.
  for (const std::string& name : test::segment_files(dir.path())) {
    EXPECT_GT(test::read_file(dir.sub(name))[kSegmentHeaderSize], 0) << name;
  }
}

TEST(Service, an_idle_service_sleeps_instead_of_spinning) {
  // It shares a core with a busy-polling session: a thread that spins or
  // yields when idle stays runnable and the scheduler hands it whole ticks
  // of that core. Idle, it wakes about every 10 ms (a spinning one ran
  // hundreds of thousands of duty cycles in the same time).
  TempDir dir;
  JournalService service;
  ASSERT_TRUE(service.start());
  auto j = Journal::open(test::small_config(dir.path(), kSeg), &service);
  ASSERT_TRUE(j);
  ASSERT_TRUE(wait_for([&] { return (*j)->spare_prefaulted(); }));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // retention, re-warm rounds
  const std::uint64_t before = service.duty_cycles();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const std::uint64_t cycles = service.duty_cycles() - before;
  EXPECT_LE(cycles, 60u) << "an idle service ran " << cycles << " duty cycles in 300 ms";
  EXPECT_GE(cycles, 5u) << "the service stopped waking up";
}

TEST(Service, a_spare_is_zero_filled_in_pieces_before_it_is_handed_over) {
  TempDir dir;
  const std::size_t size = 8 * 1024 * 1024;
  auto j = Journal::open(test::small_config(dir.path(), size));
  ASSERT_TRUE(j);
  // Each duty cycle does one bounded piece: 8 MiB takes many cycles, and the
  // spare is not handed over before all of it is written.
  int cycles = 0;
  while (!(*j)->spare_ready() && cycles < 1000) {
    ASSERT_GT((*j)->maintain(core::monotonic_ns()), 0) << "the service idled with no spare";
    ++cycles;
  }
  ASSERT_TRUE((*j)->spare_ready());
  EXPECT_GE(cycles, 8) << "8 MiB prepared in " << cycles << " cycles";
  // The spare on disk: full size, a header, zeros after it.
  const auto files = test::segment_files(dir.path());
  ASSERT_EQ(files.size(), 2u);
  const std::vector<char> bytes = test::read_file(dir.sub(files.back()));
  ASSERT_EQ(bytes.size(), size);
  EXPECT_NE(std::memcmp(bytes.data(), "\0\0\0\0\0\0\0\0", 8), 0) << "no header";
  std::size_t nonzero = 0;
  for (std::size_t i = kSegmentHeaderSize; i < bytes.size(); ++i) nonzero += bytes[i] != 0 ? 1 : 0;
  EXPECT_EQ(nonzero, 0u);
  // It is a working segment: rotate into it and read back.
  const std::size_t big = 3 * 1024 * 1024;
  std::vector<char> payload(big, 'p');
  for (std::uint64_t s = 1; s <= 3; ++s) ASSERT_EQ((*j)->append(s, 0, {payload.data(), payload.size()}), StoreStatus::kOk);
  EXPECT_EQ((*j)->stats().rotations, 1u);
  EXPECT_EQ((*j)->stats().inline_creations, 0u);
  Collected got;
  EXPECT_EQ(test::replay_all(**j, 1, 4, got).delivered, 3u);
}

TEST(Service, a_finished_segment_is_unmapped_over_several_cycles) {
  TempDir dir;
  const std::size_t size = 16 * 1024 * 1024;
  auto j = Journal::open(test::small_config(dir.path(), size));
  ASSERT_TRUE(j);
  while (!(*j)->spare_ready()) ASSERT_GT((*j)->maintain(core::monotonic_ns()), 0);
  const std::size_t big = 5 * 1024 * 1024;
  std::vector<char> payload(big, 'q');
  for (std::uint64_t s = 1; s <= 4; ++s) ASSERT_EQ((*j)->append(s, 0, {payload.data(), payload.size()}), StoreStatus::kOk);
  ASSERT_EQ((*j)->stats().rotations, 1u);
  // 16 MiB in 4 MiB pieces: retired only after several cycles.
  int cycles = 0;
  while ((*j)->stats().segments_retired == 0 && cycles < 1000) {
    (void)(*j)->maintain(core::monotonic_ns());
    ++cycles;
  }
  EXPECT_EQ((*j)->stats().segments_retired, 1u);
  EXPECT_GE(cycles, 4);
  // The finished segment is intact on disk and replays.
  Collected got;
  EXPECT_EQ(test::replay_all(**j, 1, 5, got).delivered, 4u);
}

// Pages of a file (of its first `below` bytes, when not 0) in the page cache
// (mincore on a read-only mapping, which faults nothing in); -1 when the
// file cannot be read.
long cached_pages(const std::string& path, std::size_t below = 0) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  off_t size = ::lseek(fd, 0, SEEK_END);
  if (below != 0 && static_cast<off_t>(below) < size) size = static_cast<off_t>(below);
  void* p = ::mmap(nullptr, static_cast<std::size_t>(size), PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) return -1;
  const std::size_t pages = (static_cast<std::size_t>(size) + 4095) / 4096;
  std::vector<unsigned char> in(pages);
  long n = ::mincore(p, static_cast<std::size_t>(size), in.data()) == 0 ? 0 : -1;
  for (unsigned char c : in) n += (n >= 0 && (c & 1) != 0) ? 1 : 0;
  ::munmap(p, static_cast<std::size_t>(size));
  return n;
}

// Finished segments leave the page cache (evict_finished): the journal's
// cache follows the segments being written, not all it ever journaled. The
// control (evict_finished false) keeps them cached, so the check can fail.
TEST(Service, a_finished_segment_leaves_the_page_cache_once_written_back) {
  for (const bool evict : {true, false}) {
    SCOPED_TRACE(evict ? "evict_finished" : "control: evict_finished false");
    TempDir dir;
    JournalConfig c = test::small_config(dir.path(), 1024 * 1024);
    c.durability = Durability::kOs;
    c.evict_finished = evict;
    c.evict_delay_ns = 1'000'000'000;
    auto j = Journal::open(c);
    ASSERT_TRUE(j) << j.error().message;
    std::int64_t now = core::monotonic_ns();
    (void)test::settle(**j, now);
    test::append_range(**j, 1, 6000, 300);  // about 1.8 MB: one rotation
    ASSERT_EQ((*j)->stats().rotations, 1u);
    (void)test::settle(**j, now);  // retired: unmapped, write-back started
    ASSERT_EQ((*j)->stats().segments_retired, 1u);
    const std::string first = dir.path() + "/" + test::segment_files(dir.path()).front();
    // Wait for the write-back here (it does not drop pages), so that the
    // final pass finds every page clean.
    {
      const int fd = ::open(first.c_str(), O_RDONLY | O_CLOEXEC);
      ASSERT_GE(fd, 0);
      ASSERT_EQ(::fdatasync(fd), 0);
      ::close(fd);
    }
    EXPECT_EQ((*j)->stats().segments_evicted, 0u) << "the final pass came before its delay";
    now += 1'000'000'001;
    (void)test::settle(**j, now);
    const long cached = cached_pages(first);
    ASSERT_GE(cached, 0);
    if (evict) {
      EXPECT_EQ((*j)->stats().segments_evicted, 1u);
      EXPECT_EQ(cached, 0) << "pages of the finished segment still cached";
    } else {
      EXPECT_EQ((*j)->stats().segments_evicted, 0u);
      EXPECT_GE(cached, 200) << "the control dropped the pages too";
    }
    // The finished segment still replays, read from disk.
    Collected got;
    EXPECT_EQ(test::replay_all(**j, 1, 6001, got).delivered, 6000u);
  }
}

// The trailing eviction's settings in these tests: 64 KiB kept behind the
// writer, pieces of 256 KiB, dropped delay_ns after they leave the mapping.
JournalConfig trailing_config(const std::string& dir, std::size_t segment, bool evict, std::int64_t delay_ns) {
  JournalConfig c = test::small_config(dir, segment);
  c.durability = Durability::kOs;
  c.evict_written = evict;
  c.evict_written_keep = 64 * 1024;
  c.evict_written_chunk = 256 * 1024;
  c.evict_written_delay_ns = delay_ns;
  return c;
}

// Writes path's dirty pages back (what the kernel's flushers do in time).
void write_back(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0) << path;
  ASSERT_EQ(::fdatasync(fd), 0) << path;
  ::close(fd);
}

// Every record 1..next-1 replays with its bytes.
void expect_replays_all(Journal& j, std::uint64_t next) {
  Collected got;
  EXPECT_EQ(test::replay_all(j, 1, next, got).delivered, next - 1);
  ASSERT_EQ(got.bytes.size(), next - 1);
  for (std::uint64_t s = 1; s < next; s += 977) EXPECT_EQ(got.bytes[s - 1], message_for(s, 300)) << s;
}

// The written part of the segment being written leaves the page cache too
// (evict_written): behind the writer, past evict_written_keep, in pieces of
// at least evict_written_chunk. The writer goes on in the same segment,
// everything replays (read back from disk), and a reopen recovers it all.
// The control (evict_written false) keeps the segment cached whole.
TEST(Service, the_written_part_of_the_active_segment_leaves_the_page_cache) {
  for (const bool evict : {true, false}) {
    SCOPED_TRACE(evict ? "evict_written" : "control: evict_written false");
    TempDir dir;
    JournalConfig c = trailing_config(dir.path(), 8 * 1024 * 1024, evict, 1'000'000'000);
    c.evict_delay_ns = 1'000'000'000;
    std::uint64_t next = 1;
    {
      auto j = Journal::open(c);
      ASSERT_TRUE(j) << j.error().message;
      std::int64_t now = core::monotonic_ns();
      (void)test::settle(**j, now);
      // Less than a chunk past the kept 64 KiB: nothing goes yet.
      test::append_range(**j, next, next + 899, 300);  // ~300 KB
      next += 900;
      now += c.rewarm_interval_ns;
      (void)test::settle(**j, now);
      EXPECT_EQ((*j)->stats().written_evicted_bytes, 0u);
      test::append_range(**j, next, next + 5099, 300);  // ~1.8 MB in all, one segment
      next += 5100;
      ASSERT_EQ((*j)->stats().rotations, 0u);
      now += c.rewarm_interval_ns;
      (void)test::settle(**j, now);  // out of the writer's mapping
      const std::string active = dir.path() + "/" + test::segment_files(dir.path()).front();
      ASSERT_NO_FATAL_FAILURE(write_back(active));
      now += 1'000'000'001;
      (void)test::settle(**j, now);  // dropped, by then clean
      // Below the writer, less the 64 KiB kept (the pages ahead of it are
      // pre-faulted: the whole segment here, rewarm_window 0).
      const std::size_t end = (*j)->write_position() & 0xFFFFFFFFu;
      ASSERT_GT(end, 1'800'000u);
      const std::size_t below = (end - 64 * 1024) / 4096 * 4096;
      const long cached = cached_pages(active, below);
      ASSERT_GE(cached, 0);
      const std::uint64_t dropped = (*j)->stats().written_evicted_bytes;
      if (evict) {
        EXPECT_EQ(dropped, below);
        EXPECT_EQ(cached, 0) << "written pages still cached";
      } else {
        EXPECT_EQ(dropped, 0u);
        EXPECT_EQ(cached, static_cast<long>(below / 4096)) << "the control dropped pages too";
      }
      // The writer goes on in the same segment; all of it replays.
      test::append_range(**j, next, next + 99, 300);
      next += 100;
      expect_replays_all(**j, next);
    }
    // Reopened (recovery walks the segment, read back from disk): all there.
    auto j = Journal::open(c);
    ASSERT_TRUE(j) << j.error().message;
    EXPECT_EQ((*j)->last_seq(), next - 1);
    Collected got;
    EXPECT_EQ(test::replay_all(**j, 1, next, got).delivered, next - 1);
  }
}

// The /proc/self/smaps lines of this process's mappings of path (empty if
// it has none).
std::vector<std::string> mapping_lines(const std::string& path) {
  std::ifstream smaps("/proc/self/smaps");
  std::vector<std::string> out;
  std::string line;
  bool in = false;
  while (std::getline(smaps, line)) {
    // A mapping's header: "start-end perms offset dev inode path".
    const std::size_t space = line.find(' ');
    if (space != std::string::npos && space > 0 &&
        line.find_first_not_of("0123456789abcdef-", 0) == space) {
      in = line.size() >= path.size() && line.compare(line.size() - path.size(), path.size(), path) == 0;
      continue;
    }
    if (in) out.push_back(line);
  }
  return out;
}

// `rounds` re-warm rounds of the service, 1,000 records of 300 bytes (~300
// KB) written before each, from seq `next`; returns the next seq.
std::uint64_t write_rounds(Journal& j, std::uint64_t next, int rounds, std::int64_t& now,
                           std::int64_t interval) {
  for (int round = 0; round < rounds; ++round) {
    test::append_range(j, next, next + 999, 300);
    next += 1000;
    now += interval;
    (void)test::settle(j, now);
  }
  return next;
}

// Resident kB of this process's mapping of path, -1 if it has none.
long mapped_kib(const std::string& path) {
  long kib = -1;
  for (const std::string& line : mapping_lines(path))
    if (line.rfind("Rss:", 0) == 0) kib = (kib < 0 ? 0 : kib) + std::atol(line.c_str() + 4);
  return kib;
}

// The trailing eviction takes what the writer wrote out of its mapping at
// once (its resident size falls) and leaves it in the page cache, for the
// kernel's flusher, until evict_written_delay_ns has passed; a writer that
// passes more ranges than the ring holds within the delay has them joined,
// and dropped when due. (Whether write-back was started early is not
// visible per file here: this checks the mapping and the drop.)
TEST(Service, the_written_part_leaves_the_mapping_at_once_and_the_page_cache_after_the_delay) {
  TempDir dir;
  const JournalConfig c = trailing_config(dir.path(), 16 * 1024 * 1024, true, 30'000'000'000);
  auto j = Journal::open(c);
  ASSERT_TRUE(j) << j.error().message;
  std::int64_t now = core::monotonic_ns();
  (void)test::settle(**j, now);
  const std::string active = dir.path() + "/" + test::segment_files(dir.path()).front();
  const long mapped_before = mapped_kib(active);
  ASSERT_GT(mapped_before, 8 * 1024) << "the segment is pre-faulted whole here (rewarm_window 0)";
  // 24 rounds, each ~300 KB further: more ranges than the ring's 16.
  const std::uint64_t next = write_rounds(**j, 1, 24, now, c.rewarm_interval_ns);
  ASSERT_EQ((*j)->stats().rotations, 0u);
  const std::size_t end = (*j)->write_position() & 0xFFFFFFFFu;
  ASSERT_GT(end, 7'000'000u);
  const std::size_t below = (end - 64 * 1024) / 4096 * 4096;
  const std::uint64_t taken = (*j)->stats().written_evicted_bytes;
  EXPECT_GE(taken + 256 * 1024, below) << "the writer's mapping still holds what it wrote";
  EXPECT_LE(mapped_kib(active), mapped_before - static_cast<long>(taken / 1024))
      << "taken out of the writer's mapping: its resident size falls by as much";
  // Not yet due: every written page is still cached.
  EXPECT_EQ(cached_pages(active, taken), static_cast<long>(taken / 4096)) << "dropped before the delay";
  ASSERT_NO_FATAL_FAILURE(write_back(active));
  now += c.evict_written_delay_ns + c.rewarm_interval_ns;
  (void)test::settle(**j, now);
  EXPECT_EQ(cached_pages(active, taken), 0) << "ranges past the ring's capacity were not dropped when due";
  expect_replays_all(**j, next);  // read back from disk
}

// The VmFlags of this process's mapping of path, space-separated with a
// space at both ends (" rd wr sh ... "); empty if it has none.
std::string mapping_flags(const std::string& path) {
  for (const std::string& line : mapping_lines(path))
    if (line.rfind("VmFlags:", 0) == 0) return line.substr(8) + " ";
  return {};
}

// large_folios: every segment's writable mapping has the kernel's large-folio
// advice (VmFlags "hg", MADV_HUGEPAGE), the first one from its creation and
// each one a rotation brings; the control has none. The trailing eviction
// then works in whole 2 MiB folios (the page cache drops only folios wholly
// inside a range, so 256 KiB pieces would leave them cached), and what it
// took out replays from disk.
TEST(Service, large_folios_advise_every_segment_and_the_trailing_eviction_drops_whole_folios) {
  for (const bool large : {true, false}) {
    SCOPED_TRACE(large ? "large_folios" : "control: large_folios false");
    TempDir dir;
    JournalConfig c = trailing_config(dir.path(), 8 * 1024 * 1024, true, 30'000'000'000);
    c.large_folios = large;
    auto j = Journal::open(c);
    ASSERT_TRUE(j) << j.error().message;
    std::int64_t now = core::monotonic_ns();
    (void)test::settle(**j, now);
    const std::string first = dir.path() + "/" + test::segment_files(dir.path()).front();
    const std::string first_flags = mapping_flags(first);
    ASSERT_FALSE(first_flags.empty()) << "the first segment is not mapped";
    EXPECT_EQ(first_flags.find(" hg ") != std::string::npos, large) << first_flags;
    // ~5.4 MB over 18 rounds: the trailing eviction takes what lies 64 KiB
    // behind the writer.
    std::uint64_t next = write_rounds(**j, 1, 18, now, c.rewarm_interval_ns);
    ASSERT_EQ((*j)->stats().rotations, 0u);
    const std::size_t end = (*j)->write_position() & 0xFFFFFFFFu;
    ASSERT_GT(end, 5'000'000u);
    const std::uint64_t taken = (*j)->stats().written_evicted_bytes;
    const std::size_t folio = 2 * 1024 * 1024;
    if (large) {
      EXPECT_EQ(taken, (end - 64 * 1024) / folio * folio) << "not in whole folios";
    } else {
      EXPECT_GE(taken + 256 * 1024, (end - 64 * 1024) / 4096 * 4096);
    }
    ASSERT_NO_FATAL_FAILURE(write_back(first));
    now += c.evict_written_delay_ns + c.rewarm_interval_ns;
    (void)test::settle(**j, now);
    EXPECT_EQ(cached_pages(first, taken), 0) << "written pages still cached after the delay";
    // Segments made later (the one a rotation brought, or the spare after
    // it: the newest file) have it too.
    test::append_range(**j, next, next + 9999, 300);
    next += 10000;
    (void)test::settle(**j, now);
    ASSERT_GE((*j)->stats().rotations, 1u);
    const std::string second = dir.path() + "/" + test::segment_files(dir.path()).back();
    ASSERT_NE(second, first);
    const std::string flags = mapping_flags(second);
    ASSERT_FALSE(flags.empty()) << "the newest segment is not mapped";
    EXPECT_EQ(flags.find(" hg ") != std::string::npos, large) << flags;
    expect_replays_all(**j, next);
  }
}

// Start address of this process's mapping of path (/proc/self/maps), 0 if
// it has none.
std::uintptr_t mapping_start(const std::string& path) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.size() >= path.size() && line.compare(line.size() - path.size(), path.size(), path) == 0)
      return std::strtoull(line.c_str(), nullptr, 16);
  }
  return 0;
}

// A journal closed while the service is part-way through unmapping a
// finished segment unmaps only the rest: the part already unmapped may
// belong to another mapping by then (here one placed there on purpose),
// which a munmap of the whole segment would take away.
TEST(Service, closing_mid_unmap_leaves_what_was_mapped_where_the_segment_was) {
  TempDir dir;
  const std::size_t segment = 16 * 1024 * 1024;
  auto j = Journal::open(test::small_config(dir.path(), segment));
  ASSERT_TRUE(j) << j.error().message;
  std::int64_t now = core::monotonic_ns();
  (void)test::settle(**j, now);
  const std::string first = dir.path() + "/" + test::segment_files(dir.path()).front();
  const std::uintptr_t start = mapping_start(first);
  ASSERT_NE(start, 0u);
  test::append_range(**j, 1, 4200, 4000);  // ~17 MB: one rotation
  ASSERT_EQ((*j)->stats().rotations, 1u);
  // Duty cycles, one at a time, until the service has unmapped the first
  // piece of the finished segment and not all of it.
  int cycles = 0;
  while (mapping_start(first) == start && cycles < 100) {
    (void)(*j)->maintain(now);
    ++cycles;
  }
  const std::uintptr_t rest = mapping_start(first);
  ASSERT_GT(rest, start) << "the service unmapped nothing of the finished segment";
  ASSERT_LT(rest, start + segment) << "the service unmapped all of it: nothing left to close mid-way";
  // Someone else's mapping where the unmapped piece was.
  const std::size_t length = rest - start;
  void* other = ::mmap(reinterpret_cast<void*>(start), length, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  ASSERT_EQ(other, reinterpret_cast<void*>(start)) << std::strerror(errno);
  j->reset();
  std::vector<unsigned char> in(length / 4096);
  EXPECT_EQ(::mincore(other, length, in.data()), 0)
      << "the other mapping was unmapped: " << std::strerror(errno);
  EXPECT_EQ(mapping_start(first), 0u) << "the rest of the segment is still mapped";
  ::munmap(other, length);
}

TEST(Service, one_service_thread_serves_several_journals) {
  TempDir dir;
  JournalService service;
  ASSERT_TRUE(service.start());
  std::vector<std::unique_ptr<Journal>> journals;
  for (int i = 0; i < 4; ++i) {
    auto j = Journal::open(test::small_config(dir.sub("s" + std::to_string(i)), kSeg), &service);
    ASSERT_TRUE(j);
    journals.push_back(std::move(*j));
  }
  EXPECT_EQ(service.journals(), 4u);
  for (auto& j : journals) ASSERT_TRUE(wait_for([&] { return j->spare_ready(); }));
  journals.clear();
  EXPECT_EQ(service.journals(), 0u);
}

TEST(Service, fail_policy_reports_no_spare_instead_of_creating_inline) {
  TempDir dir;
  JournalService service;  // not started: driven by hand
  JournalConfig c = test::small_config(dir.path(), 16 * 1024);
  c.spare_miss = SpareMissPolicy::kFail;
  auto j = Journal::open(c, &service);
  ASSERT_TRUE(j);
  std::uint64_t seq = 1;
  StoreStatus st = StoreStatus::kOk;
  while (st == StoreStatus::kOk) {
    const std::string m = message_for(seq, 200);
    st = (*j)->append(seq, 0, {m.data(), m.size()});
    if (st == StoreStatus::kOk) ++seq;
  }
  EXPECT_EQ(st, StoreStatus::kNoSpare);
  EXPECT_EQ((*j)->stats().spare_misses, 1u);
  EXPECT_EQ((*j)->stats().inline_creations, 0u);
  // The spare is zero-filled in bounded chunks, then handed over.
  for (int cycle = 0; cycle < 1000 && !(*j)->spare_ready(); ++cycle) (void)service.do_work();
  ASSERT_TRUE((*j)->spare_ready());
  const std::string m = message_for(seq, 200);
  EXPECT_EQ((*j)->append(seq, 0, {m.data(), m.size()}), StoreStatus::kOk);
  EXPECT_EQ((*j)->stats().rotations, 1u);
}

// ready_for() is what the session asks before it reads a message: it must
// say false exactly where the claim would return kNoSpare, and true again
// once the service has caught up.
TEST(Service, ready_for_says_false_exactly_where_a_claim_would_wait_for_the_service) {
  for (const SpareMissPolicy policy : {SpareMissPolicy::kFail, SpareMissPolicy::kCreateInline}) {
    SCOPED_TRACE(policy == SpareMissPolicy::kFail ? "fail" : "create inline");
    TempDir dir;
    JournalService service;  // not started: driven by hand
    JournalConfig c = test::small_config(dir.path(), 16 * 1024);
    c.spare_miss = policy;
    c.retain_segments = 100;
    auto j = Journal::open(c, &service);
    ASSERT_TRUE(j);
    std::uint64_t seq = 1;
    StoreStatus st = StoreStatus::kOk;
    for (int i = 0; i < 100'000 && st == StoreStatus::kOk; ++i) {
      const std::string m = message_for(seq, 200);
      const bool ready = (*j)->ready_for(m.size(), 0);
      st = (*j)->append(seq, 0, {m.data(), m.size()});
      ASSERT_EQ(ready, st == StoreStatus::kOk) << "record " << seq << ": " << to_string(st);
      if (st == StoreStatus::kOk) ++seq;
    }
    ASSERT_EQ(st, StoreStatus::kNoSpare);
    EXPECT_FALSE((*j)->ready_for(200, 0));
    EXPECT_TRUE((*j)->ready_for(c.segment_size * 4, 0)) << "too large is not a wait: claim says kTooLarge";
    for (int cycle = 0; cycle < 10'000 && !(*j)->ready_for(200, 200); ++cycle) (void)service.do_work();
    ASSERT_TRUE((*j)->ready_for(200, 200));
    const std::string m = message_for(seq, 200);
    EXPECT_EQ((*j)->append(seq, 0, {m.data(), m.size()}), StoreStatus::kOk);
  }
}

TEST(Service, a_spare_taken_before_its_prefault_finished_is_counted) {
  TempDir dir;
  JournalConfig c = test::small_config(dir.path(), 8 * 1024 * 1024);
  auto j = Journal::open(c);
  ASSERT_TRUE(j);
  // Duty cycles create and zero-fill the spare, then hand it over with only
  // its first pages pre-faulted.
  for (int cycle = 0; cycle < 1000 && !(*j)->spare_ready(); ++cycle) (void)(*j)->maintain(core::monotonic_ns());
  ASSERT_TRUE((*j)->spare_ready());
  ASSERT_FALSE((*j)->spare_prefaulted());
  const std::size_t big = 3 * 1024 * 1024;
  std::vector<char> payload(big, 'p');
  for (std::uint64_t s = 1; s <= 3; ++s) ASSERT_EQ((*j)->append(s, 0, {payload.data(), payload.size()}), StoreStatus::kOk);
  const JournalStats st = (*j)->stats();
  EXPECT_EQ(st.rotations, 1u);
  EXPECT_EQ(st.spare_misses, 0u);
  EXPECT_EQ(st.unfaulted_rotations, 1u);
  // The service keeps pre-faulting the now active segment.
  (void)(*j)->maintain(core::monotonic_ns());
  (void)(*j)->maintain(core::monotonic_ns());
}

TEST(Service, finished_segments_are_flushed_and_unmapped_under_fsync) {
  TempDir dir;
  JournalConfig c = test::small_config(dir.path(), 16 * 1024);
  c.durability = Durability::kFsync;
  c.fsync_interval_ns = 1'000'000;
  auto j = Journal::open(c);
  ASSERT_TRUE(j);
  std::int64_t now = core::monotonic_ns();
  test::append_range(**j, 1, 300, 100);
  const std::uint64_t rotations = (*j)->stats().rotations;
  ASSERT_GE(rotations, 2u);
  (void)test::settle(**j, now);
  JournalStats st = (*j)->stats();
  EXPECT_EQ(st.segments_retired, rotations);
  EXPECT_GE(st.flushes, rotations);
  EXPECT_EQ(st.flush_errors, 0u);
  // The periodic flush: data written before one tick is durable two ticks
  // later (loss window: three intervals).
  const std::uint64_t before = st.flushes;
  test::append_range(**j, 301, 302, 100);
  for (int tick = 0; tick < 3; ++tick) {
    now += 2'000'000;
    (void)(*j)->maintain(now);
  }
  EXPECT_GT((*j)->stats().flushes, before);
  // Nothing new: no more msync.
  const std::uint64_t after = (*j)->stats().flushes;
  for (int tick = 0; tick < 3; ++tick) {
    now += 2'000'000;
    (void)(*j)->maintain(now);
  }
  EXPECT_EQ((*j)->stats().flushes, after);
}

TEST(Service, sync_policy_flushes_every_commit) {
  TempDir dir;
  JournalConfig c = test::small_config(dir.path(), 16 * 1024);
  c.durability = Durability::kSync;
  auto j = Journal::open(c);
  ASSERT_TRUE(j);
  test::append_range(**j, 1, 10);
  EXPECT_EQ((*j)->stats().sync_flushes, 10u);
  EXPECT_EQ((*j)->flush(), StoreStatus::kOk);
}

std::size_t run_retention(Journal& j) {
  // Retention runs at most every 200 ms of the monotonic time given.
  // Finished segments are retired one per duty cycle: settle, then let
  // retention see them all.
  static std::int64_t fake_now = core::monotonic_ns();
  fake_now += 1'000'000'000;
  int cycles = test::settle(j, fake_now);
  fake_now += 1'000'000'000;
  cycles += test::settle(j, fake_now);
  return static_cast<std::size_t>(cycles);
}

TEST(Service, retention_keeps_at_most_the_configured_number_of_segments) {
  TempDir dir;
  JournalConfig c = test::small_config(dir.path(), 16 * 1024);
  c.retain_segments = 3;
  auto j = Journal::open(c);
  ASSERT_TRUE(j);
  test::append_range(**j, 1, 1000, 100);
  ASSERT_GE((*j)->stats().rotations, 6u);
  (void)run_retention(**j);
  const auto files = test::segment_files(dir.path());
  // Three kept (two finished + the active one) plus the spare just created.
  EXPECT_EQ(files.size(), 4u);
  EXPECT_EQ((*j)->stats().segments_removed, (*j)->stats().rotations - 2);
  // The newest messages still replay; the removed ones are reported.
  Collected got;
  const ReplayResult r = test::replay_all(**j, 1, 1000, got);
  EXPECT_GT(r.unavailable_segments, 0u);
  ASSERT_FALSE(got.seqs.empty());
  EXPECT_EQ(got.seqs.back(), 1000u);
  for (std::size_t i = 1; i < got.seqs.size(); ++i) ASSERT_EQ(got.seqs[i], got.seqs[i - 1] + 1);
}

TEST(Service, retention_by_age_moves_finished_segments_to_the_archive) {
  TempDir dir;
  JournalConfig c = test::small_config(dir.sub("live"), 16 * 1024);
  c.retain_max_age_ns = 1;  // everything finished is old
  c.archive_directory = dir.sub("archive");
  auto j = Journal::open(c);
  ASSERT_TRUE(j);
  test::append_range(**j, 1, 300, 100);
  const std::uint64_t rotations = (*j)->stats().rotations;
  ASSERT_GE(rotations, 2u);
  (void)run_retention(**j);
  EXPECT_EQ(test::segment_files(dir.sub("archive")).size(), rotations);
  EXPECT_EQ((*j)->stats().segments_removed, rotations);
  // The active one (and the spare) stay.
  EXPECT_EQ(test::segment_files(dir.sub("live")).size(), 2u);
}

TEST(Service, retention_never_removes_a_segment_a_replay_is_reading) {
  TempDir dir;
  JournalConfig c = test::small_config(dir.path(), 16 * 1024);
  c.retain_segments = 1;
  auto j = Journal::open(c);
  ASSERT_TRUE(j);
  test::append_range(**j, 1, 300, 100);
  const std::string first = dir.sub("00000001.seg");
  bool checked = false;
  const ReplayResult r = (*j)->replay_each(1, 1, 10, [&](const StoredMessage& m) {
    // The replay holds segment 1 right now: retention runs and must wait.
    (void)run_retention(**j);
    checked = ::access(first.c_str(), F_OK) == 0;
    EXPECT_EQ(std::string(m.bytes.data(), m.bytes.size()), message_for(1, 100));
    return true;
  });
  EXPECT_EQ(r.delivered, 1u);
  EXPECT_TRUE(checked) << "segment 1 was removed while being read";
  EXPECT_EQ((*j)->stats().segments_removed, 0u) << "removal is in order: nothing after segment 1 either";
  (void)run_retention(**j);
  EXPECT_NE(::access(first.c_str(), F_OK), 0);
  EXPECT_GT((*j)->stats().segments_removed, 0u);
}

TEST(Service, a_writer_outrunning_the_service_gets_statuses_and_never_loses_a_record) {
  TempDir dir;
  JournalService service;
  ASSERT_TRUE(service.start());
  JournalConfig c = test::small_config(dir.path(), 64 * 1024);
  c.durability = Durability::kFsync;
  c.fsync_interval_ns = 100'000;
  c.rewarm_window = 1 << 20;
  c.rewarm_interval_ns = 1'000'000;
  c.retain_segments = 50;
  auto j = Journal::open(c, &service);
  ASSERT_TRUE(j);
  std::uint64_t refused = 0;
  constexpr std::uint64_t kCount = 30'000;
  for (std::uint64_t s = 1; s <= kCount; ++s) {
    const std::string m = message_for(s, 200);
    for (;;) {
      const StoreStatus st = (*j)->append(s, 0, {m.data(), m.size()});
      if (st == StoreStatus::kOk) break;
      ASSERT_EQ(st, StoreStatus::kNoSpare) << "only 'service behind' may refuse";
      ++refused;
      std::this_thread::yield();
    }
  }
  const JournalStats st = (*j)->stats();
  EXPECT_GE(st.rotations, 100u);
  // Everything retention kept replays intact, in order, to the last record.
  Collected got;
  (void)test::replay_all(**j, 1, kCount, got);
  ASSERT_FALSE(got.seqs.empty());
  EXPECT_EQ(got.seqs.back(), kCount);
  for (std::size_t i = 0; i < got.seqs.size(); ++i) {
    ASSERT_EQ(got.bytes[i], message_for(got.seqs[i], 200));
    if (i > 0) {
      ASSERT_EQ(got.seqs[i], got.seqs[i - 1] + 1);
    }
  }
  RecordProperty("refused", static_cast<int>(refused));
}

TEST(Service, start_fails_when_the_cpu_cannot_be_pinned) {
  JournalServiceConfig cfg;
  cfg.cpu = 100000;
  JournalService service(cfg);
  auto started = service.start();
  ASSERT_FALSE(started);
  EXPECT_NE(started.error().message.find("100000"), std::string::npos);
  EXPECT_FALSE(service.running());
  JournalServiceConfig ok;
  ok.cpu = 0;
  JournalService pinned(ok);
  ASSERT_TRUE(pinned.start());
  EXPECT_TRUE(pinned.running());
  pinned.stop();
  EXPECT_FALSE(pinned.running());
}

}  // namespace
}  // namespace hft::store
