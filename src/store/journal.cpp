#include "hft/store/journal.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <limits>
#include <new>

#include "hft/core/clock.hpp"
#include "hft/core/trace.hpp"
#include "hft/store/journal_service.hpp"
#include "store/segment.hpp"
#include "store/write_behind.hpp"

namespace hft::store {

using detail::Segment;

namespace {

constexpr std::uint64_t kNoPin = std::numeric_limits<std::uint64_t>::max();
// Per service duty cycle: 16 pages of a fresh ext4 file cost 25-75 us of
// faults, the longest the service thread keeps a shared core at a stretch.
// (64 pages, 0.1-0.3 ms, made the service's slices on the core of a
// 1,000-session engine 230-260 us each even with a 50 us cycle budget, and
// so the round trip of a session that arrived during one: p99 at 300,000
// orders/s was 380-570 us.)
constexpr std::size_t kPrefaultChunk = 16 * kPageSize;
// A zero-filled spare's pages are in the page cache: pre-faulting only maps
// them (64 MiB in 2.5 ms), so larger chunks, fewer wake-ups.
constexpr std::size_t kPrefaultFilledChunk = std::size_t{2} << 20;
// Per duty cycle: zeros written (at most kFillChunk, for at most
// kFillSliceNs, in pwrite()s of kFillPiece) and bytes unmapped. Measured in
// the rtt lane (64 MiB segments): 2 MiB fill / 8 MiB pre-fault / 16 MiB
// unmap pieces gave fewer interrupted calls (p99.9 90-110 us instead of
// 150-400 us) but 16-19 ms maxima; these sizes keep the maximum at the
// host's own (the floor lane's 4-5 ms). The time bound: a page of zeros
// costs 0.6-0.8 us of CPU on an idle host, but 12 us on the lab's VM while
// the journals are being written (their own page-cache traffic slows it),
// where a 512 KiB piece held the shared core for 1.5 ms.
constexpr std::size_t kFillChunk = std::size_t{512} << 10;
constexpr std::size_t kFillPiece = std::size_t{32} << 10;
constexpr std::int64_t kFillSliceNs = 100'000;
constexpr std::size_t kUnmapChunk = std::size_t{4} << 20;
// write_behind: the most the service writes out in one duty cycle (the
// default write_behind_chunk, so a chunk is one write).
// Every write costs the engine's core a fixed part whatever its size (on
// the lab's VM the virtio kick alone, a VM exit, was 24% of the service's
// CPU, and one write per chunk also rewrites the writer's partial page):
// chunks of 4 MiB instead of 256 KiB took the engine thread's wait for its
// core from 9-11% to 6-7% of a 525,000 msgs/s run, and its probe's p99
// from 85-98 us to 73-74 us (three interleaved pairs).
constexpr std::size_t kWriteOutPiece = std::size_t{4} << 20;
// ... and the most it zeroes of released buffers in one.
constexpr std::size_t kZeroPiece = std::size_t{1} << 20;
// Zeros for pwrite(), the same block every time; never written to.
alignas(kPageSize) constexpr char kZeros[kFillPiece] = {};
// prepare_ahead: the farthest the service zero-fills ahead of a writer.
constexpr std::size_t kFillWindowMax = std::size_t{8} << 20;
// prepare_ahead: a writer that reached the fill owns its claim and this much
// more, and zero-fills this much after where it writes.
constexpr std::size_t kWriterPiece = 8 * kPageSize;
constexpr std::size_t kMinWriterPiece = 2 * kPageSize;
// prepare_ahead: the service fills only while the writer is at least this far from the fence.
constexpr std::size_t kFillSlack = 2 * kPageSize;
// prepare_ahead: the most the service zero-fills in one go.
constexpr std::size_t kFillAheadPiece = 32 * kPageSize;
constexpr std::size_t kFirstPrefault = 64 * kPageSize;    // before a spare is handed over
// prepare_ahead: what a journal's first segment has zero-filled and mapped at its start.
constexpr std::size_t kFirstSegmentHead = 2 * kPageSize;
// prepare_ahead: the slot pages pre-faulted at the end of a new segment (4,096 records).
constexpr std::size_t kSlotPrefault = 4 * kPageSize;
// large_folios: the trailing eviction works in whole folios of this size.
constexpr std::size_t kLargeFolio = std::size_t{2} << 20;
constexpr std::int64_t kRewarmSliceNs = 25'000;  // re-warm time per duty cycle (then one more piece at most)
// Rounds a journal that was not written skips between two re-touches.
constexpr unsigned kQuietRewarmRounds = 10;
constexpr std::int64_t kSpareRetryNs = 100'000'000;
constexpr std::int64_t kRetentionPeriodNs = 200'000'000;

std::string errno_text(int err) { return std::strerror(err); }

std::string hex_text(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%016llx", static_cast<unsigned long long>(v));
  return buf;
}

Expected<void> ensure_directory(const std::string& dir, bool create, const char* what) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) return Error{dir + ": " + what + " is not a directory"};
    return {};
  }
  const int err = errno;
  if (err != ENOENT) return Error{dir + ": cannot access " + what + ": " + errno_text(err)};
  if (!create) return Error{dir + ": " + what + " does not exist (create_directory is off)"};
  const int made = detail::make_directories(dir);
  if (made != 0) return Error{dir + ": cannot create " + what + ": " + errno_text(made)};
  return {};
}

bool all_zero(const char* p, std::size_t n) noexcept {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t v;
    std::memcpy(&v, p + i, 8);
    if (v != 0) return false;
  }
  for (; i < n; ++i)
    if (p[i] != 0) return false;
  return true;
}

/// Last non-zero byte index + 1 in [from, to), or `from` if all zero.
std::size_t nonzero_end(const char* base, std::size_t from, std::size_t to) noexcept {
  std::size_t end = to;
  while (end > from && (end - from) >= 8) {
    std::uint64_t v;
    std::memcpy(&v, base + end - 8, 8);
    if (v != 0) break;
    end -= 8;
  }
  while (end > from && base[end - 1] == 0) --end;
  return end;
}

struct Listed {
  std::uint64_t number = 0;
  std::size_t file_size = 0;
  std::int64_t mtime_ns = 0;
  SegmentHeader header{};
};

}  // namespace

std::string_view to_string(StoreStatus status) noexcept {
  switch (status) {
    case StoreStatus::kOk: return "ok";
    case StoreStatus::kNoClaim: return "commit without claim";
    case StoreStatus::kInvalidArgument: return "invalid argument";
    case StoreStatus::kTooLarge: return "message too large for a segment";
    case StoreStatus::kNoSpare: return "no spare segment ready";
    case StoreStatus::kNoSpace: return "no space on the file system";
    case StoreStatus::kIoError: return "I/O error";
    case StoreStatus::kClosed: return "store closed";
  }
  return "unknown";
}

std::optional<Durability> parse_durability(std::string_view name) noexcept {
  if (name == "none") return Durability::kNone;
  if (name == "os") return Durability::kOs;
  if (name == "fsync") return Durability::kFsync;
  if (name == "sync") return Durability::kSync;
  return std::nullopt;
}

std::string_view to_string(Durability durability) noexcept {
  switch (durability) {
    case Durability::kNone: return "none";
    case Durability::kOs: return "os";
    case Durability::kFsync: return "fsync";
    case Durability::kSync: return "sync";
  }
  return "unknown";
}

// ---------------------------------------------------------------------------
// open / recovery

Journal::Journal(const JournalConfig& config)
    : durability_(config.durability), config_(config), pool_(std::make_unique<Segment[]>(kPoolSize)) {
  for (std::size_t i = 0; i < kPoolSize; ++i) pool_[i].pool_index = static_cast<std::uint32_t>(i);
  catalog_size_ = config.max_epoch_segments;
  catalog_ = std::make_unique_for_overwrite<CatalogEntry[]>(catalog_size_);
  if (config.retain_segments != 0 || config.retain_max_age_ns != 0)
    retained_.resize(std::max<std::size_t>(config.max_epoch_segments, config.retain_segments + 8));
  for (auto& p : pins_) p.store(kNoPin, std::memory_order_relaxed);
  fill_window_ = std::max(config.prepare_ahead, kPrefaultChunk);
  if (config.write_behind) {
    write_behind_ = std::make_unique<detail::WriteBehind>();
    scratch_page_ = static_cast<char*>(::operator new (kPageSize, std::align_val_t{kPageSize}));
  }
}

Expected<std::unique_ptr<Journal>> Journal::open(const JournalConfig& config, JournalService* service) {
  const std::string& dir = config.directory;
  if (dir.empty()) return Error{"journal: no directory configured"};
  if (config.segment_size % kPageSize != 0 || config.segment_size < kMinSegmentSize ||
      config.segment_size >= kMaxSegmentSize)
    return Error{dir + ": segment_size " + std::to_string(config.segment_size) +
                 " must be a multiple of 4096 in [16384, 4294967296)"};
  if (config.initial_segment_size != 0 &&
      (config.initial_segment_size % kPageSize != 0 || config.initial_segment_size < kMinSegmentSize ||
       config.initial_segment_size > config.segment_size))
    return Error{dir + ": initial_segment_size " + std::to_string(config.initial_segment_size) +
                 " must be a multiple of 4096 in [16384, segment_size " + std::to_string(config.segment_size) + "]"};
  if (!config.preallocate && config.spare_miss != SpareMissPolicy::kCreateInline)
    return Error{dir + ": preallocate off needs the spare-miss policy create-inline (no spare is ever prepared)"};
  if (!(config.prepare_spare_at >= 0.0 && config.prepare_spare_at < 1.0))
    return Error{dir + ": prepare_spare_at " + std::to_string(config.prepare_spare_at) + " must be in [0, 1)"};
  if (config.record_alignment != 8 && config.record_alignment != 64)
    return Error{dir + ": record_alignment " + std::to_string(config.record_alignment) + " must be 8 or 64"};
  if (config.max_epoch_segments == 0) return Error{dir + ": max_epoch_segments must be at least 1"};
  if (config.reserve_bytes > config.segment_size / 4)
    return Error{dir + ": reserve_bytes " + std::to_string(config.reserve_bytes) +
                 " must be at most a quarter of segment_size"};
  if (config.durability == Durability::kFsync && config.fsync_interval_ns <= 0)
    return Error{dir + ": fsync_interval_ns must be positive"};
  if (config.write_behind &&
      (config.durability == Durability::kFsync || config.durability == Durability::kSync))
    return Error{dir + ": write-behind buffers need durability none or os (not " +
                 std::string(to_string(config.durability)) + ")"};
  if (config.write_behind && config.write_behind_chunk % kPageSize != 0)
    return Error{dir + ": write_behind_chunk " + std::to_string(config.write_behind_chunk) +
                 " must be a multiple of 4096"};

  struct stat dir_st {};
  const bool dir_missing = ::stat(dir.c_str(), &dir_st) != 0 && errno == ENOENT;
  if (config.defer_first_segment && config.create_directory && dir_missing) {
    // Created with the first segment (create_first); its parent now, so
    // the owner can keep its own files beside it.
    const std::size_t slash = dir.find_last_of('/');
    if (slash != std::string::npos && slash != 0) {
      if (auto made = ensure_directory(dir.substr(0, slash), true, "journal's parent directory"); !made)
        return made.error();
    }
  } else if (auto made = ensure_directory(dir, config.create_directory, "journal directory"); !made) {
    return made.error();
  }
  if (!config.archive_directory.empty()) {
    if (auto made = ensure_directory(config.archive_directory, true, "archive directory"); !made)
      return made.error();
  }

  std::unique_ptr<Journal> journal(new Journal(config));
  if (auto recovered = journal->recover(); !recovered) return recovered.error();
  if (service != nullptr) {
    if (!service->attach(journal.get()))
      return Error{dir + ": the journal service already serves its maximum number of journals"};
    journal->service_ = service;
  }
  return journal;
}

Expected<void> Journal::recover() {
  const std::string& dir = config_.directory;
  // Records a killed process left in write-behind buffers go back into
  // their segment files before anything reads those (whatever this open's
  // own setting: the buffers are the journal's).
  {
    auto back = detail::recover_write_behind(dir);
    if (!back) return back.error();
    recovery_.written_back_bytes = back->bytes;
    for (std::string& note : back->notes) recovery_.notes.push_back(std::move(note));
  }
  if (write_behind_ != nullptr) {
    struct stat dir_st {};
    if (::stat(dir.c_str(), &dir_st) == 0) {
      if (auto opened = write_behind_->open(dir, config_.segment_size); !opened) return opened.error();
    }
  }
  std::vector<Listed> listed;
  {
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr && !(errno == ENOENT && config_.defer_first_segment && config_.create_directory))
      return Error{dir + ": cannot read journal directory: " + errno_text(errno)};
    while (d != nullptr) {
      dirent* e = ::readdir(d);
      if (e == nullptr) break;
      std::uint64_t number = 0;
      if (detail::parse_segment_name(e->d_name, number)) listed.push_back(Listed{number, 0, 0, {}});
    }
    if (d != nullptr) ::closedir(d);
  }
  std::sort(listed.begin(), listed.end(), [](const Listed& a, const Listed& b) { return a.number < b.number; });
  const std::uint64_t max_number = listed.empty() ? 0 : listed.back().number;
  std::vector<Empty> empties;

  // Every header is checked before anything is modified: a journal we do
  // not understand is refused as a whole and left untouched.
  std::vector<Listed> valid;
  for (Listed& l : listed) {
    const std::string path = segment_path(l.number);
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Error{path + ": cannot open: " + errno_text(errno)};
    struct stat st {};
    ::fstat(fd, &st);
    l.file_size = static_cast<std::size_t>(st.st_size);
    l.mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
    char probe[2 * kSegmentHeaderSize] = {};
    const ssize_t got = ::pread(fd, probe, sizeof(probe), 0);
    ::close(fd);
    if (got < 0) return Error{path + ": cannot read: " + errno_text(errno)};
    std::memcpy(&l.header, probe, sizeof(l.header));
    if (all_zero(probe, sizeof(probe))) {
      // No header: a creation interrupted before the header was written (a
      // spare), or a segment that lost its contents. Which one is decided
      // once the tail is known (settle_empty).
      bool empty = true;
      if (l.file_size > sizeof(probe)) {
        detail::ReadView v;
        if (detail::map_readonly(path.c_str(), v) == 0) {
          empty = all_zero(v.base, v.size);
          detail::unmap_readonly(v);
        }
      }
      if (empty) {
        empties.push_back(Empty{l.number, l.file_size, false, false});
        continue;
      }
    }
    if (l.header.segment_number != l.number && l.file_size > kSegmentHeaderSize) {
      // A spare renumbered by the service (renumber_spare), cut short
      // between its rename and its new header: nothing after the header.
      detail::ReadView v;
      bool empty = false;
      if (detail::map_readonly(path.c_str(), v) == 0) {
        empty = all_zero(v.base + kSegmentHeaderSize, v.size - kSegmentHeaderSize);
        detail::unmap_readonly(v);
      }
      if (empty && detail::check_header(l.header, path, l.header.segment_number, l.file_size).empty()) {
        empties.push_back(Empty{l.number, l.file_size, true, false});
        continue;
      }
    }
    if (std::string why = detail::check_header(l.header, path, l.number, l.file_size); !why.empty())
      return Error{why};
    if (config_.session_identity != 0 && l.header.session_identity != 0 &&
        l.header.session_identity != config_.session_identity)
      return Error{dir + ": the journal belongs to another session: " + path + " records session identity " +
                   hex_text(l.header.session_identity) + ", this session's is " +
                   hex_text(config_.session_identity) + "; refusing to open"};
    valid.push_back(l);
  }
  next_number_.store(max_number + 1, std::memory_order_relaxed);

  // The tail is the highest segment holding anything; empty ones above it
  // are spares a previous run prepared and never used (or, after a sealed
  // tail, the segment the writer went on in, if it lost its records).
  std::size_t tail = valid.size();
  while (tail > 0) {
    const Listed& l = valid[tail - 1];
    const std::string path = segment_path(l.number);
    detail::ReadView v;
    if (const int err = detail::map_readonly(path.c_str(), v); err != 0)
      return Error{path + ": cannot map: " + errno_text(err)};
    const bool empty =
        v.size <= kSegmentHeaderSize || all_zero(v.base + kSegmentHeaderSize, v.size - kSegmentHeaderSize);
    detail::unmap_readonly(v);
    if (!empty) break;
    // A spare is allocated in full before its header is written: a shorter
    // one was truncated.
    empties.push_back(Empty{l.number, l.file_size, true, l.file_size < l.header.segment_size});
    --tail;
  }
  std::sort(empties.begin(), empties.end(),
            [](const Empty& a, const Empty& b) { return a.number < b.number; });

  // Finished segments (all epochs) are candidates for retention.
  if (!retained_.empty()) {
    for (std::size_t i = 0; i + 1 < tail; ++i) {
      if (ret_count_ == retained_.size()) {
        ret_head_ = (ret_head_ + 1) % retained_.size();
        --ret_count_;
      }
      retained_[(ret_head_ + ret_count_) % retained_.size()] = Retained{valid[i].number, valid[i].mtime_ns};
      ++ret_count_;
    }
  }

  if (tail == 0) {
    if (auto settled = settle_empty(empties, 0, false); !settled) return settled.error();
    recovery_.created = true;
    if (config_.defer_first_segment) {
      // Nothing on disk until the first claim (create_first).
      next_number_.store(max_number + 1, std::memory_order_relaxed);
      epoch_ = 1;
      epoch_created_ns_ = core::realtime_ns();
      pending_epoch_start_ = true;
      compute_max_payload();
      recovery_.epoch = epoch_;
      return write_repair_log();
    }
    if (auto fresh = start_fresh(max_number + 1, 1, core::realtime_ns(), true); !fresh) return fresh.error();
    return write_repair_log();
  }

  // ---- the tail segment: scan, cut, rebuild its index ----
  const Listed& t = valid[tail - 1];
  const std::string path = segment_path(t.number);
  recovery_.tail_path = path;
  const std::size_t size = t.header.segment_size;
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return Error{path + ": cannot open for writing: " + errno_text(errno)};
  if (t.file_size < size) {
    // Truncated (e.g. copied while being written): restore the declared
    // size; the missing bytes read as zero and the scan cuts there.
    const int err = ::posix_fallocate(fd, 0, static_cast<off_t>(size));
    if (err != 0) {
      ::close(fd);
      return Error{path + ": cannot restore the segment to " + std::to_string(size) + " bytes: " + errno_text(err)};
    }
    recovery_.extended = true;
    recovery_.original_size = t.file_size;
    recovery_.repairs.push_back(path + ": file was " + std::to_string(t.file_size) +
                                " bytes, its header says " + std::to_string(size) + ": extended to " +
                                std::to_string(size) + " bytes; records that were past byte " +
                                std::to_string(t.file_size) + " are lost");
  }
  void* mapped = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (mapped == MAP_FAILED) {
    const int err = errno;
    ::close(fd);
    return Error{path + ": cannot map: " + errno_text(err)};
  }
  Segment* seg = acquire_pool();
  seg->base = static_cast<char*>(mapped);
  seg->size = size;
  seg->number = t.number;
  seg->alignment = t.header.record_alignment;
  seg->fd = fd;
  char* base = seg->base;
  const std::size_t align = seg->alignment;

  std::size_t off = kSegmentHeaderSize;
  std::uint32_t count = 0;
  std::uint64_t last_seq = 0;
  std::uint64_t first_seq = 0;
  std::uint64_t records = 0;
  bool have_start = false;
  bool sealed = false;
  SegmentStartPayload start{};
  std::int64_t last_ts = 0;
  for (;;) {
    RecordHeader h;
    // A record ends before its own index slot; the seal has none, and in a
    // segment filled to the brim it ends where the slots begin.
    const std::size_t seal_limit = size - kSlotSize * count;
    if (!detail::read_record(base, seal_limit, off, h)) break;
    const bool seal = off != kSegmentHeaderSize && (h.flags & kRecordSegmentSeal) != 0;
    if (!seal && h.size > seal_limit - kSlotSize - off) break;
    const char* payload = base + off + kRecordHeaderSize + h.gap;
    const std::size_t length = h.size - kRecordHeaderSize - h.gap;
    if (off == kSegmentHeaderSize) {
      if ((h.flags & kRecordSegmentStart) == 0 || length != sizeof(start)) break;
      std::memcpy(&start, payload, sizeof(start));
      have_start = true;
    } else if ((h.flags & kRecordControl) != 0) {
      if ((h.flags & kRecordSegmentSeal) == 0) break;
      sealed = true;
      off = align_up(off + h.size, align);
      break;
    } else {
      ++records;
      last_ts = h.timestamp_ns;
      if ((h.flags & kRecordUnindexed) == 0) {
        const auto o32 = static_cast<std::uint32_t>(off);
        if (detail::slot_at(base, size, count) != o32) std::memcpy(base + size - kSlotSize * (count + 1), &o32, 4);
        if (count == 0) first_seq = h.seq;
        ++count;
        last_seq = h.seq;
      }
    }
    off = align_up(off + h.size, align);
  }
  const std::size_t slot_low = size - kSlotSize * count;
  const std::size_t dirty_end = nonzero_end(base, off, slot_low);
  std::uint32_t size_there = 0;
  std::uint64_t seq_there = 0;
  if (off + kRecordHeaderSize <= slot_low) {
    std::memcpy(&size_there, base + off, sizeof(size_there));
    std::memcpy(&seq_there, base + off + 8, sizeof(seq_there));
  }
  if (dirty_end > off && size_there == 0 && seq_there == kClaimMarker && detail::slot_at(base, size, count) == 0) {
    // A claim that was never committed (claim() marks it, commit() would
    // have replaced the mark and published the size last): a message being
    // written when the process stopped. It was never committed and so never
    // sent (or, inbound, never accepted: the peer resends it). Nothing to save.
    // A claim with nothing written into it (a room check, or the claim
    // of a message the application declined) is not worth a line.
    if (dirty_end > off + kRecordHeaderSize) {
      recovery_.discarded_claim_bytes = dirty_end - off;
      recovery_.notes.push_back(path + ": an uncommitted claim (" + std::to_string(dirty_end - off) +
                                " bytes at offset " + std::to_string(off) + " after " + std::to_string(records) +
                                " records, last seq " + std::to_string(last_seq) +
                                ") was discarded: a message being written (or abandoned) when the process "
                                "stopped, never committed");
    }
    std::memset(base + off, 0, dirty_end - off);
  } else if (dirty_end > off) {
    // Bytes after the last good record: a torn write, or damage. Keep a copy
    // beside the segment, then zero them so no reader ever sees them.
    recovery_.torn = true;
    recovery_.cut_offset = off;
    recovery_.cut_bytes = dirty_end - off;
    std::string saved = path + ".cut-" + std::to_string(off);
    for (int n = 1; ::access(saved.c_str(), F_OK) == 0; ++n) saved = path + ".cut-" + std::to_string(off) + "." + std::to_string(n);
    const int sfd = ::open(saved.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    bool written = sfd >= 0;
    if (written) {
      std::size_t done = 0;
      while (done < recovery_.cut_bytes) {
        const ssize_t w = ::write(sfd, base + off + done, recovery_.cut_bytes - done);
        if (w <= 0) {
          written = false;
          break;
        }
        done += static_cast<std::size_t>(w);
      }
      written = written && ::fsync(sfd) == 0;
      ::close(sfd);
    }
    if (!written) {
      const int err = errno;
      ::unlink(saved.c_str());
      release_pool(seg);
      detail::close_segment(*seg);
      return Error{path + ": torn tail at offset " + std::to_string(off) + " could not be saved to " + saved + ": " +
                   errno_text(err) + "; refusing to cut it"};
    }
    std::memset(base + off, 0, dirty_end - off);
    recovery_.saved_to = saved;
    recovery_.repairs.push_back(path + ": tail cut at offset " + std::to_string(off) + " after " +
                                std::to_string(records) + " good records (last seq " +
                                std::to_string(last_seq) + "): " + std::to_string(recovery_.cut_bytes) +
                                " bytes that were not a valid record saved to " + saved + " and zeroed");
  }

  if (auto settled = settle_empty(empties, t.number, sealed); !settled) {
    release_pool(seg);
    detail::close_segment(*seg);
    return settled.error();
  }

  // Scanned (with read-ahead, which helps a cold scan); from here on the
  // writer appends.
  detail::advise_writer_access(base, size);
  // Its cached pages stay as they are; the kernel fills the rest of a
  // range that holds some one page per folio.
  seg->large_folios.store(config_.large_folios && detail::advise_large_folios(base, size),
                          std::memory_order_relaxed);

  // The epoch the tail belongs to.
  bool epoch_start = false;
  if (have_start) {
    epoch_ = start.epoch;
    epoch_created_ns_ = start.epoch_created_ns;
  } else {
    // The tail lost even its start record: continue the previous segment's
    // epoch (or begin the first one).
    epoch_ = 0;
    detail::ReadView v;
    if (tail >= 2 && detail::map_readonly(segment_path(valid[tail - 2].number).c_str(), v) == 0) {
      RecordHeader h;
      if (detail::read_record(v.base, v.size, kSegmentHeaderSize, h) && (h.flags & kRecordSegmentStart) != 0 &&
          h.size - kRecordHeaderSize - h.gap == sizeof(start)) {
        std::memcpy(&start, v.base + kSegmentHeaderSize + kRecordHeaderSize + h.gap, sizeof(start));
        epoch_ = start.epoch;
        epoch_created_ns_ = start.epoch_created_ns;
      }
      detail::unmap_readonly(v);
    }
    if (epoch_ == 0) {
      epoch_ = 1;
      epoch_created_ns_ = core::realtime_ns();
      epoch_start = true;
    }
  }

  if (auto history = add_epoch_history([&] {
        std::vector<std::uint64_t> numbers;
        for (std::size_t i = 0; i + 1 < tail; ++i) numbers.push_back(valid[i].number);
        return numbers;
      }(), tail - 1);
      !history) {
    release_pool(seg);
    detail::close_segment(*seg);
    return history.error();
  }

  // Writer state over the recovered tail.
  active_ = seg;
  active_index_ = seg->pool_index;
  base_ = base;
  active_alignment_ = static_cast<std::uint32_t>(align);
  align_mask_ = align - 1;
  set_end_reserve(align);
  pos_ = off;
  slot_low_ = slot_low;
  slot_count_ = count;
  limit_ = physical_limit();
  fence_ = kNoFence;
  last_ts_ = last_ts;
  compute_max_payload();
  push_catalog(seg->number);
  cat_active_->first_seq = first_seq;
  cat_active_->count = count;
  if (count != 0) cat_active_->last_seq = last_seq;
  last_indexed_seq_ = cat_active_->last_seq;
  active_number_.store(seg->number, std::memory_order_release);
  if (!have_start) {
    pos_ = kSegmentHeaderSize;
    SegmentStartPayload p{epoch_, epoch_created_ns_};
    write_control(static_cast<std::uint16_t>(kRecordControl | kRecordSegmentStart | (epoch_start ? kRecordEpochStart : 0)),
                  &p, sizeof(p));
    if (epoch_start) {
      cat_count_ = 0;
      push_catalog(seg->number);
      last_indexed_seq_ = 0;
    }
  }
  if (!config_.preallocate) {
    // Nothing ahead of the writer: it faults in what it stores to.
  } else if (config_.rewarm_window == 0) {
    detail::prefault_pages(base, pos_, size);
  } else {
    // The pages the writer reaches first (data after pos_, the slot pages
    // below slot_low_); the service's re-warm keeps a window ahead of it
    // from then on, so a restart with many large tails does not fault in
    // every tail whole.
    const std::size_t window = std::max(config_.rewarm_window, kFirstPrefault);
    const std::size_t data_to = std::min(size, pos_ + window);
    const std::size_t slots_from = slot_low_ > kFirstPrefault ? std::max(data_to, slot_low_ - kFirstPrefault) : data_to;
    detail::prefault_pages(base, pos_, data_to);
    if (slots_from < size) detail::prefault_pages(base, slots_from, size);
  }
  seg->prefaulted.store(true, std::memory_order_release);
  next_size_.store(std::max(std::min(size * 2, config_.segment_size), size), std::memory_order_relaxed);
  publish();

  recovery_.records = records;
  if (sealed) {
    // The previous run finished this segment: continue in a new one.
    Segment* next = acquire_pool();
    const std::uint64_t number = next_number_.fetch_add(1, std::memory_order_relaxed);
    if (const int err = create_segment(next, number, next_size_.load(std::memory_order_relaxed)); err != 0) {
      release_pool(next);
      return Error{segment_path(number) + ": cannot create segment: " + errno_text(err)};
    }
    if (config_.preallocate) {
      detail::prefault_pages(next->base, 0, next->size);
      next->prefaulted.store(true, std::memory_order_release);
    }
    Segment* old = active_;
    const std::uint64_t old_number = old->number;
    old->final_end = pos_;
    old->final_slot_low = slot_low_;
    activate(next, false);
    finish_segment(old);
    if (!retained_.empty() && ret_count_ < retained_.size()) {
      retained_[(ret_head_ + ret_count_) % retained_.size()] = Retained{old_number, core::realtime_ns()};
      ++ret_count_;
    }
    recovery_.tail_path = segment_path(number);
  }
  recovery_.epoch = epoch_;
  recovery_.last_seq = last_indexed_seq_;
  recovery_.epoch_segments = cat_count_;
  return write_repair_log();
}

Expected<void> Journal::settle_empty(const std::vector<Empty>& empties, std::uint64_t tail_number,
                                     bool tail_sealed) {
  // The writer creates a segment in full (header included) before it seals
  // the one before, and writes into it right after: an empty segment below
  // the tail, or a headerless or short one right after a sealed tail, held
  // records once. Any other empty one is an unused spare.
  //
  // Except a spare the writer passed over: it found the spare not ready,
  // created the next segment itself, and the process stopped before the
  // service had finished (or renumbered) it. It held nothing: the segments
  // on either side hold consecutive seqs of one epoch.
  struct Facts {
    bool ok = false;
    std::uint64_t epoch = 0, first = 0, last = 0;
    bool epoch_start = false;
  };
  const auto facts = [&](std::uint64_t number) {
    Facts f;
    detail::ReadView v;
    if (detail::map_readonly(segment_path(number).c_str(), v) != 0) return f;
    RecordHeader h;
    SegmentStartPayload start{};
    const std::uint32_t count = v.size > kSegmentHeaderSize ? detail::count_slots(v.base, v.size) : 0;
    RecordHeader first, last;
    if (count != 0 && detail::read_record(v.base, v.size, kSegmentHeaderSize, h) &&
        (h.flags & kRecordSegmentStart) != 0 && h.size - kRecordHeaderSize - h.gap == sizeof(start) &&
        detail::read_record(v.base, v.size, detail::slot_at(v.base, v.size, 0), first) &&
        detail::read_record(v.base, v.size, detail::slot_at(v.base, v.size, count - 1), last)) {
      std::memcpy(&start, v.base + kSegmentHeaderSize + kRecordHeaderSize + h.gap, sizeof(start));
      f = Facts{true, start.epoch, first.seq, last.seq, (h.flags & kRecordEpochStart) != 0};
    }
    detail::unmap_readonly(v);
    return f;
  };
  const auto is_empty = [&](std::uint64_t number) {
    return std::any_of(empties.begin(), empties.end(), [&](const Empty& x) { return x.number == number; });
  };
  const auto passed_over = [&](std::uint64_t number) {
    std::uint64_t below = number;
    while (below > 1 && (is_empty(below - 1) || ::access(segment_path(below - 1).c_str(), F_OK) != 0))
      --below;
    std::uint64_t above = number;
    while (above < tail_number && is_empty(above + 1)) ++above;
    if (below <= 1 || above >= tail_number) return false;
    const Facts a = facts(below - 1);
    const Facts b = facts(above + 1);
    return a.ok && b.ok && a.epoch == b.epoch && !b.epoch_start && b.first == a.last + 1;
  };
  bool first_above = true;
  for (const Empty& e : empties) {
    const std::string path = segment_path(e.number);
    const bool above = e.number > tail_number;
    const bool lost =
        tail_number != 0 &&
        (!above ? !passed_over(e.number) : (tail_sealed && first_above && (e.truncated || !e.header)));
    if (above) first_above = false;
    if (!lost) {
      if (::unlink(path.c_str()) != 0)
        return Error{path + ": cannot remove unused spare: " + errno_text(errno)};
      recovery_.removed_spares.push_back(path);
      continue;
    }
    const std::string aside = path + kLostSuffix;
    if (::rename(path.c_str(), aside.c_str()) != 0)
      return Error{path + ": segment lost its records and cannot be moved aside to " + aside + ": " +
                   errno_text(errno) + "; refusing to open"};
    recovery_.lost_segments.push_back(aside);
    recovery_.repairs.push_back(
        path + ": " + std::to_string(e.file_size) + " bytes, " + (e.header ? "header only" : "no header") +
        (above ? ", after sealed segment " + std::to_string(tail_number)
               : ", below segment " + std::to_string(tail_number) + " which holds records") +
        ": its records are lost (their count is not known here); moved aside to " + aside);
  }
  return {};
}

Expected<void> Journal::write_repair_log() {
  for (const std::string& line : recovery_.repairs) {
    if (auto written = append_repair_log(config_.directory, line); !written) return written.error();
  }
  return {};
}

Expected<void> append_repair_log(const std::string& directory, const std::string& line) {
  const std::string path = directory + "/" + kRepairLogName;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return Error{path + ": cannot record a repair: " + errno_text(errno)};
  const std::int64_t now = core::realtime_ns();
  const std::time_t secs = static_cast<std::time_t>(now / 1'000'000'000);
  std::tm tm{};
  ::gmtime_r(&secs, &tm);
  char stamp[40];
  const int n = std::snprintf(stamp, sizeof(stamp), "%04d-%02d-%02dT%02d:%02d:%02d.%09lldZ ",
                              tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                              static_cast<long long>(now % 1'000'000'000));
  std::string text(stamp, static_cast<std::size_t>(n > 0 ? n : 0));
  text += line;
  text += '\n';
  const bool ok =
      ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && ::fsync(fd) == 0;
  const int err = errno;
  ::close(fd);
  if (!ok) return Error{path + ": cannot record a repair: " + errno_text(err)};
  return {};
}

Expected<void> Journal::add_epoch_history(const std::vector<std::uint64_t>& numbers, std::size_t tail_index) {
  // Walk back from the segment below the tail while segments belong to the
  // current epoch; stop after the one that started it.
  std::vector<CatalogEntry> found;
  for (std::size_t i = tail_index; i > 0; --i) {
    const std::uint64_t number = numbers[i - 1];
    const std::string path = segment_path(number);
    detail::ReadView v;
    if (const int err = detail::map_readonly(path.c_str(), v); err != 0)
      return Error{path + ": cannot map: " + errno_text(err)};
    RecordHeader h;
    SegmentStartPayload start{};
    bool same_epoch = false;
    bool opens_epoch = false;
    if (detail::read_record(v.base, v.size, kSegmentHeaderSize, h) && (h.flags & kRecordSegmentStart) != 0 &&
        h.size - kRecordHeaderSize - h.gap == sizeof(start)) {
      std::memcpy(&start, v.base + kSegmentHeaderSize + kRecordHeaderSize + h.gap, sizeof(start));
      same_epoch = start.epoch == epoch_;
      opens_epoch = (h.flags & kRecordEpochStart) != 0;
    } else if (v.size > kSegmentHeaderSize &&
               all_zero(v.base + kSegmentHeaderSize, v.size - kSegmentHeaderSize)) {
      // A header and nothing else below the tail: a spare the writer passed
      // over (it created the next segment itself while the service was
      // still preparing this one, and the process stopped before the
      // service renumbered it). The epoch goes on below it: stopping here
      // left every older segment out of replay.
      detail::unmap_readonly(v);
      continue;
    }
    if (same_epoch) {
      CatalogEntry e{};
      e.number = number;
      std::uint32_t count = v.size == 0 ? 0 : detail::count_slots(v.base, v.size);
      RecordHeader first, last;
      if (count != 0 && detail::read_record(v.base, v.size, detail::slot_at(v.base, v.size, 0), first) &&
          detail::read_record(v.base, v.size, detail::slot_at(v.base, v.size, count - 1), last)) {
        e.first_seq = first.seq;
        e.last_seq = last.seq;
        e.count = count;
      }
      found.push_back(e);
    }
    detail::unmap_readonly(v);
    if (!same_epoch || opens_epoch || found.size() + 1 >= catalog_size_) break;
  }
  for (auto it = found.rbegin(); it != found.rend(); ++it) {
    const std::uint64_t prev_last = cat_count_ == 0 ? 0 : catalog_at(cat_count_ - 1).last_seq;
    push_catalog(it->number);
    *cat_active_ = *it;
    if (it->count == 0) cat_active_->last_seq = prev_last;
  }
  return {};
}

Expected<void> Journal::start_fresh(std::uint64_t number, std::uint64_t epoch, std::int64_t epoch_created_ns,
                                    bool epoch_start) {
  Segment* seg = acquire_pool();
  if (const int err = create_segment(seg, number, first_segment_size()); err != 0) {
    release_pool(seg);
    return Error{segment_path(number) + ": cannot create segment: " + errno_text(err)};
  }
  next_number_.store(number + 1, std::memory_order_relaxed);
  if (config_.preallocate) {
    detail::prefault_pages(seg->base, 0, seg->size);
    seg->prefaulted.store(true, std::memory_order_release);
  }
  epoch_ = epoch;
  epoch_created_ns_ = epoch_created_ns;
  activate(seg, epoch_start);
  recovery_.tail_path = segment_path(number);
  recovery_.epoch = epoch_;
  recovery_.epoch_segments = cat_count_;
  return {};
}

Journal::~Journal() {
  if (service_ != nullptr) service_->detach(this);
  closing_ = true;
  Segment* s = nullptr;
  if (Segment* u = unmapping_; u != nullptr) {
    // Only the rest: the part the service unmapped may be another
    // mapping's by now.
    ::munmap(u->base + unmapped_, u->size - unmapped_);
    u->base = nullptr;  // close_segment then only closes the file
    close_retired(u);
    unmapping_ = nullptr;
  }
  while (retired_.try_pop(s)) finish_segment(s);
  for (std::size_t i = 0; i < retire_pending_count_; ++i) finish_segment(retire_pending_[i]);
  retire_pending_count_ = 0;
  if (active_ != nullptr) {
    active_->final_end = pos_;
    active_->final_slot_low = slot_low_;
    // A clean close leaves everything on disk, except under kNone (a
    // buffered segment is written out and synced by finish_buffered).
    if (durability_ == Durability::kOs && active_->buffer < 0) (void)flush();
    finish_segment(active_);
    active_ = nullptr;
  }
  if (spare_state_.load(std::memory_order_acquire) == kSpareReady) {
    discard_spare(spare_.load(std::memory_order_acquire));
  }
  if (filling_ != nullptr) {  // a spare half zero-filled: never used
    discard_spare(filling_);
    filling_ = nullptr;
  }
  while (ev_count_ != 0) evict_oldest();
  // No reader is left: every buffer written out is released (the buffer
  // files are removed with write_behind_; one that could not be written
  // out keeps its file for the next open).
  if (write_behind_ != nullptr) (void)service_held_buffers();
  if (scratch_page_ != nullptr) ::operator delete (scratch_page_, std::align_val_t{kPageSize});
}

// ---------------------------------------------------------------------------
// writer (hot path)

std::span<char> Journal::claim(std::size_t max_bytes) noexcept {
  if (max_bytes > max_payload_) [[unlikely]] {
    claimed_ = kNoClaim;
    fail(StoreStatus::kTooLarge, 0);
    return {};
  }
  const std::size_t need = record_size(max_bytes);
  if (pos_ + need > limit_) [[unlikely]] {
    if (!extend_fence(need) && !rotate(false, need)) {
      claimed_ = kNoClaim;
      return {};
    }
  }
  claimed_ = max_bytes;
  last_status_ = StoreStatus::kOk;
  // Marks the claim open (commit overwrites it): a process stopped before
  // commit leaves bytes that recovery knows were never committed.
  std::memcpy(base_ + pos_ + 8, &kClaimMarker, sizeof(kClaimMarker));
  return {base_ + pos_ + kRecordHeaderSize, max_bytes};
}

void Journal::take_piece(std::size_t need, std::size_t physical) noexcept {
  Segment* s = active_;
  // Its own from here: the whole claim and a piece more (a session claims
  // MaxMessageSize, 64 KiB, for every message). Zero-filled: only the next
  // piece after where it writes (a claim is mostly not written), and never
  // its own records (below pos_) or index (from the page of slot_low_).
  // The piece is as large as what the segment holds so far, from two pages
  // up to kWriterPiece: the first claims of a journal that then stays quiet
  // (most of an engine's sessions) fill two pages, not eight.
  const std::size_t piece = std::clamp(detail::page_ceil(pos_), kMinWriterPiece, kWriterPiece);
  const std::size_t taken = std::max(s->fill_end.load(std::memory_order_relaxed),
                                     detail::page_ceil(pos_ + need + seal_reserve_) + piece);
  const std::size_t from = std::max(writer_filled_, detail::page_ceil(pos_));
  const std::size_t fill_to =
      std::min({detail::page_ceil(pos_) + piece, detail::page_floor(slot_low_), taken});
  // What the writer keeps filled past where it writes (its claim and the
  // seal's room): the service's window starts there, not at pos_.
  const std::size_t lead = need + seal_reserve_;
  if (writer_lead_.load(std::memory_order_relaxed) != lead) writer_lead_.store(lead, std::memory_order_relaxed);
  const std::uint64_t t_fill = core::trace::begin();
  if (fill_to > from && fill_zeros(s, from, fill_to) == 0)
    writer_filled_bytes_.add(zero_filled(s, from, fill_to));
  core::trace::end(core::TraceKind::kZeroFill, t_fill, s->number, fill_to > from ? fill_to - from : 0);
  writer_filled_ = std::max(writer_filled_, fill_to);
  s->fill_end.store(taken, std::memory_order_release);
  fence_ = fence_at(taken);
  limit_ = std::min(physical, fence_);
}

bool Journal::extend_fence(std::size_t need) noexcept {
  if (fence_ == kNoFence) return false;
  const std::size_t physical = physical_limit();
  if (pos_ + need > physical) return false;  // full: rotate
  Segment* s = active_;
  fence_ = fence_at(s->fill_end.load(std::memory_order_acquire));
  limit_ = std::min(physical, fence_);
  if (pos_ + need <= limit_) return true;
  // The service is behind: the writer takes the next piece past the fill
  // and fills it itself, as the service would (one pwrite() and one
  // madvise() instead of a write fault on each page: a fifth of the CPU);
  // the service goes on filling after it.
  std::uint32_t idle = detail::kFillIdle;
  if (s->fill_state.compare_exchange_strong(idle, detail::kFillWriter, std::memory_order_acq_rel)) {
    take_piece(need, physical);
    s->fill_state.store(detail::kFillIdle, std::memory_order_release);
    fill_takeovers_.add();
    return true;
  }
  // It is writing zeros just past the fence right now: never wait for it.
  fence_rotations_.add();
  return false;
}

bool Journal::ready_for(std::size_t first, std::size_t second) const noexcept {
  if (first > max_payload_ || second > max_payload_) return true;  // kTooLarge: not the service's to end
  const std::size_t need = record_size(first) + (second == 0 ? 0 : record_size(second));
  if (active_ != nullptr) {
    if (pos_ + need <= limit_) [[likely]]
      return true;
    // As extend_fence(): room up to the segment's end, unless the service is
    // writing zeros just past the fence right now.
    if (fence_ != kNoFence && pos_ + need <= physical_limit()) {
      if (pos_ + need <= fence_at(active_->fill_end.load(std::memory_order_acquire))) return true;
      if (active_->fill_state.load(std::memory_order_acquire) == detail::kFillIdle) return true;
    }
  }
  // A rotation (as rotate(), for the larger record: the smaller may still
  // fit the active segment).
  if (spare_state_.load(std::memory_order_acquire) == kSpareReady &&
      spare_fits(spare_.load(std::memory_order_acquire), record_size(std::max(first, second))))
    return true;
  if (active_ != nullptr && config_.spare_miss == SpareMissPolicy::kFail) return false;
  return pool_used_.load(std::memory_order_acquire) != kPoolFull;
}

std::span<char> Journal::claim_reserve(std::size_t max_bytes) noexcept {
  std::span<char> room = claim(max_bytes);
  if (!room.empty() || max_bytes > config_.reserve_bytes || last_status_ == StoreStatus::kTooLarge)
    return room;
  // No next segment: the room this one kept back. Ends where the seal's own
  // room begins, so the segment can still be sealed when space returns.
  const std::size_t need = record_size(max_bytes);
  if (pos_ + need > limit_ + reserve_room_) return room;
  claimed_ = max_bytes;
  std::memcpy(base_ + pos_ + 8, &kClaimMarker, sizeof(kClaimMarker));
  return {base_ + pos_ + kRecordHeaderSize, max_bytes};
}

StoreStatus Journal::commit(std::uint64_t seq, std::int64_t timestamp_ns, std::size_t offset,
                            std::size_t length, std::uint8_t flags) noexcept {
  if (claimed_ == kNoClaim) [[unlikely]]
    return StoreStatus::kNoClaim;
  if (length == 0 || offset > claimed_ || length > claimed_ - offset) [[unlikely]]
    return StoreStatus::kInvalidArgument;
  claimed_ = kNoClaim;
  char* rec = base_ + pos_;
  const bool indexed = seq > last_indexed_seq_;
  const std::uint64_t prev_last = last_indexed_seq_;
  const std::uint64_t prev_first = cat_active_->first_seq;
  const auto size = static_cast<std::uint32_t>(kRecordHeaderSize + offset + length);
  RecordHeader h;
  h.size = 0;
  h.crc = 0;
  h.seq = seq;
  h.timestamp_ns = timestamp_ns;
  h.gap = static_cast<std::uint32_t>(offset);
  h.flags = static_cast<std::uint16_t>((static_cast<std::uint16_t>(flags) << 8) | (indexed ? 0 : kRecordUnindexed));
  h.reserved = 0;
  std::memcpy(rec + 8, &h.seq, kRecordHeaderSize - 8);
  const std::uint32_t crc = detail::record_crc(rec, size, h.gap);
  std::memcpy(rec + 4, &crc, sizeof(crc));
  // Published last: a reader (or recovery) that sees the size sees the rest.
  std::atomic_ref<std::uint32_t>(*reinterpret_cast<std::uint32_t*>(rec)).store(size, std::memory_order_release);

  if (indexed) [[likely]] {
    slot_low_ -= kSlotSize;
    const auto o32 = static_cast<std::uint32_t>(pos_);
    std::memcpy(base_ + slot_low_, &o32, sizeof(o32));
    ++slot_count_;
    last_indexed_seq_ = seq;
    CatalogEntry& e = *cat_active_;
    if (e.count++ == 0) e.first_seq = seq;
    e.last_seq = seq;
  } else {
    unindexed_.add();
  }
  const std::size_t rec_off = pos_;
  pos_ = (pos_ + size + align_mask_) & ~align_mask_;
  limit_ = std::min(physical_limit(), fence_);
  last_ts_ = timestamp_ns;
  appends_.add();
  bytes_.add(length);
  published_.store((static_cast<std::uint64_t>(active_index_) << 32) | pos_, std::memory_order_release);
  published_slot_low_.store(slot_low_, std::memory_order_relaxed);

  if (durability_ == Durability::kSync) [[unlikely]] {
    const std::size_t from = detail::page_floor(rec_off);
    sync_flushes_.add();
    const std::uint64_t t_sync = core::trace::begin();
    const int rc = ::msync(base_ + from, detail::page_ceil(pos_) - from, MS_SYNC);
    core::trace::end(core::TraceKind::kFsync, t_sync, active_->number, detail::page_ceil(pos_) - from);
    if (rc != 0) {
      last_errno_.store(errno, std::memory_order_relaxed);
      // Not durable is not recorded: the caller is told the message was not
      // stored, so it must not be found by replay or recovery either.
      take_back(rec_off, indexed, prev_last, prev_first, length);
      return StoreStatus::kIoError;
    }
  }
  return StoreStatus::kOk;
}

void Journal::take_back(std::size_t rec_off, bool indexed, std::uint64_t prev_last, std::uint64_t prev_first,
                        std::size_t length) noexcept {
  char* rec = base_ + rec_off;
  // The size word first: a reader that sees it zero ignores the rest.
  std::atomic_ref<std::uint32_t>(*reinterpret_cast<std::uint32_t*>(rec)).store(0, std::memory_order_release);
  std::memset(rec, 0, pos_ - rec_off);
  pos_ = rec_off;
  if (indexed) {
    std::memset(base_ + slot_low_, 0, kSlotSize);
    slot_low_ += kSlotSize;
    --slot_count_;
    last_indexed_seq_ = prev_last;
    CatalogEntry& e = *cat_active_;
    --e.count;
    e.last_seq = prev_last;
    e.first_seq = prev_first;
  } else {
    unindexed_.sub(1);
  }
  limit_ = std::min(physical_limit(), fence_);
  appends_.sub(1);
  bytes_.sub(length);
  publish();
}

StoreStatus Journal::append(std::uint64_t seq, std::int64_t timestamp_ns, std::span<const char> bytes,
                            std::uint8_t flags) noexcept {
  const std::span<char> room = claim(bytes.size());
  if (room.empty()) return bytes.empty() ? StoreStatus::kInvalidArgument : last_status_;
  std::memcpy(room.data(), bytes.data(), bytes.size());
  return commit(seq, timestamp_ns, 0, bytes.size(), flags);
}

void Journal::return_number(std::uint64_t number) noexcept {
  // Unless another creation took the next number meanwhile: a full disk
  // retried for minutes must not leave thousands of holes in the numbering.
  std::uint64_t expected = number + 1;
  (void)next_number_.compare_exchange_strong(expected, number, std::memory_order_relaxed);
}

void Journal::fail(StoreStatus status, int err) noexcept {
  last_status_ = status;
  failed_claims_.add();
  if (err != 0) last_errno_.store(err, std::memory_order_relaxed);
}

void Journal::write_control(std::uint16_t flags, const void* payload, std::size_t length) noexcept {
  char* rec = base_ + pos_;
  const auto size = static_cast<std::uint32_t>(kRecordHeaderSize + length);
  RecordHeader h{};
  h.timestamp_ns = last_ts_;
  h.flags = static_cast<std::uint16_t>(flags | kRecordControl);
  std::memcpy(rec + 8, &h.seq, kRecordHeaderSize - 8);
  std::memcpy(rec + kRecordHeaderSize, payload, length);
  const std::uint32_t crc = detail::record_crc(rec, size, 0);
  std::memcpy(rec + 4, &crc, sizeof(crc));
  std::atomic_ref<std::uint32_t>(*reinterpret_cast<std::uint32_t*>(rec)).store(size, std::memory_order_release);
  pos_ = (pos_ + size + align_mask_) & ~align_mask_;
}

void Journal::publish() noexcept {
  published_.store((static_cast<std::uint64_t>(active_index_) << 32) | pos_, std::memory_order_release);
  published_slot_low_.store(slot_low_, std::memory_order_relaxed);
}

std::size_t Journal::segment_overhead() const noexcept {
  // The segment header and start record, the seal record with its slot
  // room, and the reserve record with its slot: what no claim gets.
  const std::size_t align = config_.record_alignment;
  const std::size_t reserve =
      config_.reserve_bytes == 0 ? 0 : align_up(kRecordHeaderSize + config_.reserve_bytes, align) + kSlotSize;
  return kSegmentHeaderSize + align_up(kRecordHeaderSize + sizeof(SegmentStartPayload), align) + kSlotSize +
         align_up(kRecordHeaderSize + sizeof(SegmentSealPayload), align) + reserve;
}

std::size_t Journal::first_segment_size() const noexcept {
  return config_.initial_segment_size != 0 ? config_.initial_segment_size : config_.segment_size;
}

void Journal::compute_max_payload() noexcept {
  // The largest claim a fresh segment of the configured size can hold.
  max_payload_ = (config_.segment_size - segment_overhead() - kRecordHeaderSize) & ~(config_.record_alignment - 1);
}

void Journal::set_end_reserve(std::size_t align) noexcept {
  // The reserve is a record of reserve_bytes plus its index slot, kept free
  // by limit_ like the seal: a normal claim never reaches into it.
  reserve_room_ =
      config_.reserve_bytes == 0 ? 0 : align_up(kRecordHeaderSize + config_.reserve_bytes, align) + kSlotSize;
  seal_reserve_ = align_up(kRecordHeaderSize + sizeof(SegmentSealPayload), align) + reserve_room_;
}

Journal::CatalogEntry& Journal::catalog_at(std::size_t i) noexcept {
  return catalog_[(cat_head_ + i) % catalog_size_];
}

void Journal::push_catalog(std::uint64_t number) noexcept {
  const std::uint64_t prev_last = cat_count_ == 0 ? 0 : catalog_at(cat_count_ - 1).last_seq;
  if (cat_count_ == catalog_size_) {
    // The epoch spans more segments than tracked: forget the oldest.
    cat_head_ = (cat_head_ + 1) % catalog_size_;
    --cat_count_;
  }
  CatalogEntry& e = catalog_at(cat_count_++);
  e = CatalogEntry{number, 0, prev_last, 0};
  cat_active_ = &e;
}

void Journal::activate(Segment* segment, bool epoch_start, std::size_t need) noexcept {
  active_ = segment;
  active_index_ = segment->pool_index;
  base_ = segment->base;
  active_alignment_ = segment->alignment;
  align_mask_ = segment->alignment - 1;
  set_end_reserve(segment->alignment);
  pos_ = kSegmentHeaderSize;
  slot_low_ = segment->size;
  slot_count_ = 0;
  limit_ = physical_limit();
  fence_ = kNoFence;
  writer_filled_ = 0;
  if (segment->fill_state.load(std::memory_order_acquire) != detail::kFillWriter) {
    writer_filled_ = segment->fill_end.load(std::memory_order_acquire);
    fence_ = fence_at(writer_filled_);
    limit_ = std::min(limit_, fence_);
  }
  compute_max_payload();
  next_size_.store(std::max(std::min(segment->size * 2, config_.segment_size), segment->size),
                   std::memory_order_relaxed);
  if (epoch_start) {
    cat_count_ = 0;
    last_indexed_seq_ = 0;
  }
  push_catalog(segment->number);
  const SegmentStartPayload start{epoch_, epoch_created_ns_};
  write_control(static_cast<std::uint16_t>(kRecordSegmentStart | (epoch_start ? kRecordEpochStart : 0)), &start,
                sizeof(start));
  // The claim that rotated must fit below the fence: past it the service
  // may be writing zeros once the segment is published. Not published yet,
  // so the piece is the writer's without taking kFillWriter.
  if (fence_ != kNoFence && pos_ + need > limit_) {
    const std::size_t physical = physical_limit();
    if (pos_ + need <= physical) take_piece(need, physical);
  }
  active_number_.store(segment->number, std::memory_order_release);
  publish();
}

Segment* Journal::acquire_pool() noexcept {
  std::uint32_t used = pool_used_.load(std::memory_order_relaxed);
  for (;;) {
    if (used == kPoolFull) return nullptr;
    const int bit = __builtin_ctz(~used);
    if (pool_used_.compare_exchange_weak(used, used | (1u << bit), std::memory_order_acq_rel)) return &pool_[bit];
  }
}

void Journal::release_pool(Segment* segment) noexcept {
  pool_used_.fetch_and(~(1u << segment->pool_index), std::memory_order_acq_rel);
}

int Journal::create_segment(Segment* segment, std::uint64_t number, std::size_t size) noexcept {
  char path[detail::kPathMax];
  if (!detail::format_segment_path(path, sizeof(path), config_.directory, number)) return ENAMETOOLONG;
  const int rc =
      detail::create_segment_file(path, number, size, config_.record_alignment, core::realtime_ns(),
                                  config_.session_identity, config_.large_folios, *segment);
  segment->buffer = -1;
  segment->direct_fd = -1;
  if (rc == 0 && write_behind_ != nullptr) (void)attach_buffer(segment, path);
  return rc;
}

bool Journal::attach_buffer(Segment* segment, const char* path) noexcept {
  const int b = write_behind_->acquire(segment->number, segment->size);
  if (b < 0) {
    write_behind_misses_.add();
    return false;
  }
  // Its blocks first: the writer's first store to a page of a sparse file
  // on a full disk would be a SIGBUS. Without them, the segment is its
  // file's own mapping (fallocated), whose full disk is a status.
  if (const int err = write_behind_->reserve(b, segment->size); err != 0) {
    write_behind_->give_back(b);
    write_behind_misses_.add();
    last_errno_.store(err, std::memory_order_relaxed);
    return false;
  }
  // The whole segment (header, records, index slots) is the buffer's; the
  // file's own mapping goes.
  char* va = write_behind_->base(b);
  std::memcpy(va, segment->base, kSegmentHeaderSize);
  ::munmap(segment->base, segment->size);
  segment->base = va;
  segment->buffer = b;
  segment->written = 0;
  segment->reused = std::min(detail::page_floor(write_behind_->reusable(b)), segment->size);
  // O_DIRECT where the file system has it; otherwise write_out() writes
  // through the page cache.
  segment->direct_fd = ::open(path, O_WRONLY | O_DIRECT | O_CLOEXEC);
  write_behind_segments_.add();
  return true;
}

bool Journal::write_out(Segment* s, std::size_t from, std::size_t to) noexcept {
  std::size_t at = from;
  while (at < to) {
    ssize_t w = -1;
    if (s->direct_fd >= 0) {
      w = ::pwrite(s->direct_fd, s->base + at, to - at, static_cast<off_t>(at));
      if (w < 0 && errno == EINVAL) {  // the file system refuses O_DIRECT here: the page cache then
        ::close(s->direct_fd);
        s->direct_fd = -1;
        continue;
      }
    } else {
      w = ::pwrite(s->fd, s->base + at, to - at, static_cast<off_t>(at));
    }
    if (w > 0) {
      at += static_cast<std::size_t>(w);
      write_behind_bytes_.add(static_cast<std::size_t>(w));
    } else if (w < 0 && errno == EINTR) {
      continue;
    } else {
      service_error(w < 0 ? errno : EIO);
      flush_errors_.add();
      return false;
    }
  }
  return true;
}

int Journal::service_write_behind(std::int64_t now) noexcept {
  const std::uint64_t p = published_.load(std::memory_order_acquire);
  Segment* s = &pool_[p >> 32];
  if (s->base == nullptr || s->buffer < 0) return 0;
  // Up to the published end: whole records, committed.
  const std::size_t end = p & 0xFFFFFFFFu;
  if (end <= s->written) return 0;
  if (end - s->written < config_.write_behind_chunk && now < next_write_out_ns_) return 0;
  const std::uint64_t t = core::trace::begin();
  const std::size_t to = std::min(detail::page_floor(end), s->written + kWriteOutPiece);
  bool ok = to <= s->written || write_out(s, s->written, to);
  if (ok) s->written = to;
  if (ok && to == detail::page_floor(end) && end > to) {
    // The page the writer is in: its records so far and zeros after them
    // (not the claim being written there), so that a reader of the file
    // finds its end at a record boundary. Written again, whole, next time.
    std::memcpy(scratch_page_, s->base + to, end - to);
    std::memset(scratch_page_ + (end - to), 0, kPageSize - (end - to));
    const int fd = s->direct_fd >= 0 ? s->direct_fd : s->fd;
    if (::pwrite(fd, scratch_page_, kPageSize, static_cast<off_t>(to)) != static_cast<ssize_t>(kPageSize)) {
      service_error(errno);
      flush_errors_.add();
    }
  }
  core::trace::end(core::TraceKind::kFsync, t, s->number, end - s->written);
  next_write_out_ns_ = now + config_.write_behind_delay_ns;
  return 1;
}

void Journal::finish_buffered(Segment* s) noexcept {
  // Everything the writer stored: its records, at most one claim's room
  // past them (an abandoned or open claim's bytes), and the index slots.
  const std::size_t dirty =
      std::min(s->size, detail::page_ceil(s->final_end + kRecordHeaderSize + max_payload_ + seal_reserve_));
  const std::size_t data_end = detail::page_ceil(s->final_end);
  const std::size_t slots = detail::page_floor(s->final_slot_low);
  bool written = true;
  if (data_end > s->written) written = write_out(s, s->written, data_end);
  if (written) s->written = data_end;
  if (written && slots < s->size) written = write_out(s, slots, s->size);
  // A clean close leaves everything on disk, what O_DIRECT left in the
  // device's cache too.
  if (written && closing_ && durability_ == Durability::kOs && ::fdatasync(s->fd) != 0) {
    flush_errors_.add();
    last_errno_.store(errno, std::memory_order_relaxed);
  }
  if (s->direct_fd >= 0) ::close(s->direct_fd);
  s->direct_fd = -1;
  const Held h{s->buffer, s->size, dirty, slots};
  s->buffer = -1;
  s->base = nullptr;  // the buffer's: close_segment then only closes the file
  // A buffer whose records could not all be written out stays held, its
  // file kept for the next open to write back.
  if (!written) return;
  if (!release_buffer(h)) held_[held_count_++] = h;
}

bool Journal::release_buffer(const Held& h) noexcept {
  const bool released = write_behind_->begin_release(h.buffer, [this](std::uint64_t number) noexcept {
    for (const auto& pin_slot : pins_)
      if (pin_slot.load(std::memory_order_seq_cst) == number) return true;
    return false;
  });
  if (!released) return false;
  write_behind_->begin_zeroing(h.buffer, h.dirty, h.slots, h.size);
  return true;
}

int Journal::service_held_buffers() noexcept {
  int work = 0;
  for (std::size_t i = 0; i < held_count_;) {
    if (release_buffer(held_[i])) {
      held_[i] = held_[--held_count_];
      ++work;
    } else {
      ++i;
    }
  }
  return work;
}

std::size_t Journal::size_to_hold(std::size_t size, std::size_t need) const noexcept {
  // Room a fresh segment of `size` leaves for claims, against the claim's `need`.
  const std::size_t fixed = segment_overhead();
  while (size < config_.segment_size && size < fixed + need) size = std::min(size * 2, config_.segment_size);
  return size;
}

bool Journal::spare_fits(const Segment* s, std::size_t need) const noexcept {
  return (active_ == nullptr || s->number > active_->number) && size_to_hold(s->size, need) == s->size;
}

bool Journal::create_first(std::size_t need) noexcept {
  Segment* seg = acquire_pool();
  if (seg == nullptr) {
    fail(StoreStatus::kNoSpare, 0);
    return false;
  }
  const std::size_t size = size_to_hold(first_segment_size(), need);
  // Its directory too, if open found none (its parent exists).
  if (::mkdir(config_.directory.c_str(), 0755) != 0 && errno != EEXIST) {
    const int err = errno;
    release_pool(seg);
    fail(detail::is_space_errno(err) ? StoreStatus::kNoSpace : StoreStatus::kIoError, err);
    return false;
  }
  // The buffers with the directory (the service prepares no spare before
  // this first segment exists).
  if (write_behind_ != nullptr && !write_behind_->is_open() &&
      !write_behind_->open(config_.directory, config_.segment_size))
    write_behind_misses_.add();
  if (!create_on_writer(seg, size)) return false;
  segments_created_.add();
  // The pages the writer stores to first (data and slots); the service
  // pre-faults the rest (prefaulted stays false).
  if (config_.preallocate && config_.prepare_ahead != 0) {
    // As a spare is (prepare_ahead), but only its first pages: most
    // journals of an engine with many sessions hold a Logon or two for
    // hours, and a head of prepare_ahead (64 KiB) zero-filled and mapped
    // for each of them was most of what 1,000 sessions wrote and mapped at
    // start-up. A journal that is written on reaches the fence soon and
    // fills its next piece itself (or the service fills ahead of it).
    prefault_ends(seg, std::min(config_.prepare_ahead, kFirstSegmentHead));
    seg->prefaulted.store(true, std::memory_order_release);
  } else if (config_.preallocate) {
    const std::size_t head = std::min(kFirstPrefault, seg->size / 2);
    const std::uint64_t t_fault = core::trace::begin();
    detail::prefault_pages(seg->base, 0, head);
    detail::prefault_pages(seg->base, seg->size - head, seg->size);
    core::trace::end(core::TraceKind::kPrefault, t_fault, seg->number, 2 * head);
    if (seg->size <= 2 * kFirstPrefault) seg->prefaulted.store(true, std::memory_order_release);
  }
  const bool epoch_start = pending_epoch_start_;
  pending_epoch_start_ = false;
  activate(seg, epoch_start, need);
  recovery_.tail_path = segment_path(seg->number);
  return true;
}

bool Journal::create_on_writer(Segment* segment, std::size_t size) noexcept {
  const std::uint64_t number = next_number_.fetch_add(1, std::memory_order_relaxed);
  const std::uint64_t t_create = core::trace::begin();
  const int err = create_segment(segment, number, size);
  core::trace::end(core::TraceKind::kInlineCreate, t_create, number, size);
  if (err != 0) {
    release_pool(segment);
    return_number(number);
    fail(detail::is_space_errno(err) ? StoreStatus::kNoSpace : StoreStatus::kIoError, err);
    return false;
  }
  return true;
}

bool Journal::rotate(bool epoch_start, std::size_t need) noexcept {
  const std::uint64_t t_rotate = core::trace::begin();
  if (active_ == nullptr) {
    // The deferred first segment (defer_first_segment); a reset() before
    // it only moved the epoch it will start.
    pending_epoch_start_ = pending_epoch_start_ || epoch_start;
    return create_first(need);
  }
  Segment* next = nullptr;
  if (spare_state_.load(std::memory_order_acquire) == kSpareReady) {
    Segment* s = spare_.load(std::memory_order_acquire);
    std::uint32_t expected = kSpareReady;
    // A spare too small for this claim (prepared for a smaller next size)
    // stays for the service to replace; the claim gets one inline.
    if (spare_fits(s, need) &&
        spare_state_.compare_exchange_strong(expected, kSpareEmpty, std::memory_order_acq_rel)) {
      next = s;
      if (!next->prefaulted.load(std::memory_order_acquire)) unfaulted_rotations_.add();
    }
  }
  if (next == nullptr) {
    spare_misses_.add();
    core::trace::emit_point(core::TraceKind::kSpareMissing, active_->number);
    if (config_.spare_miss == SpareMissPolicy::kFail) {
      fail(StoreStatus::kNoSpare, 0);
      return false;
    }
    next = acquire_pool();
    if (next == nullptr) {
      // Every pooled segment is active, spare or waiting for the service
      // to finish it: the service is far behind. Never block on it.
      fail(StoreStatus::kNoSpare, 0);
      return false;
    }
    if (!create_on_writer(next, size_to_hold(next_size_.load(std::memory_order_relaxed), need))) return false;
    inline_creations_.add();
    if (config_.preallocate && config_.prepare_ahead != 0) {
      // As the service prepares a spare: its first pages zero-filled and
      // mapped, the rest filled ahead of the writer (not faulted in).
      prefault_ends(next, config_.prepare_ahead);
      next->prefaulted.store(true, std::memory_order_release);
    }
  }
  // Seal the finished segment so a reader knows it is complete (below the
  // fence: limit_ keeps the seal's room).
  const SegmentSealPayload seal{cat_active_->count != 0 ? cat_active_->last_seq : 0, slot_count_, 0};
  write_control(kRecordSegmentSeal, &seal, sizeof(seal));
  Segment* old = active_;
  // No more filling ahead in it (a fill under way finishes past the seal).
  old->fill_state.store(detail::kFillWriter, std::memory_order_release);
  old->final_end = pos_;
  old->final_slot_low = slot_low_;
  // Publish the new segment before handing the old one over, so the service
  // never sees the old one as active after it popped it.
  activate(next, epoch_start, need);
  hand_over(old);
  rotations_.add();
  rotated_.store(true, std::memory_order_relaxed);
  core::trace::end(core::TraceKind::kRotate, t_rotate, next->number, next->size);
  return true;
}

void Journal::hand_over(Segment* segment) noexcept {
  // Older ones first, so the service finishes segments in order. Never
  // unmapped here: the service may be touching the segment right now.
  std::size_t sent = 0;
  while (sent < retire_pending_count_ && retired_.try_push(retire_pending_[sent])) ++sent;
  if (sent != 0) {
    std::copy(retire_pending_.begin() + static_cast<std::ptrdiff_t>(sent),
              retire_pending_.begin() + static_cast<std::ptrdiff_t>(retire_pending_count_), retire_pending_.begin());
    retire_pending_count_ -= sent;
  }
  if (retire_pending_count_ != 0 || !retired_.try_push(segment)) {
    retire_overflows_.add();
    retire_pending_[retire_pending_count_++] = segment;  // the pool bounds the count
  }
}

StoreStatus Journal::reset(std::uint64_t new_epoch, std::int64_t created_ns) noexcept {
  if (new_epoch <= epoch_) return StoreStatus::kInvalidArgument;
  if (active_ == nullptr) {
    // No segment yet: the first one starts the new epoch.
    epoch_ = new_epoch;
    epoch_created_ns_ = created_ns;
    pending_epoch_start_ = true;
    last_status_ = StoreStatus::kOk;
    return StoreStatus::kOk;
  }
  const std::uint64_t old_epoch = epoch_;
  const std::int64_t old_created = epoch_created_ns_;
  epoch_ = new_epoch;
  epoch_created_ns_ = created_ns;
  if (!rotate(true)) {
    epoch_ = old_epoch;
    epoch_created_ns_ = old_created;
    return last_status_;
  }
  last_status_ = StoreStatus::kOk;
  return StoreStatus::kOk;
}

StoreStatus Journal::flush() noexcept {
  if (active_ == nullptr) return StoreStatus::kOk;  // nothing written yet (defer_first_segment)
  if (::msync(base_, detail::page_ceil(pos_), MS_SYNC) != 0 ||
      ::msync(base_ + detail::page_floor(slot_low_), active_->size - detail::page_floor(slot_low_), MS_SYNC) != 0) {
    last_errno_.store(errno, std::memory_order_relaxed);
    return StoreStatus::kIoError;
  }
  return StoreStatus::kOk;
}

void Journal::set_companion_mapping(void* address, std::size_t length) noexcept {
  companion_length_.store(length, std::memory_order_relaxed);
  companion_.store(address, std::memory_order_release);
}

// ---------------------------------------------------------------------------
// replay

bool Journal::pin(std::uint64_t number) noexcept {
  // Dekker with service_retention(): either it sees this pin, or we see its
  // removal mark.
  pins_[0].store(number, std::memory_order_seq_cst);
  return removing_below_.load(std::memory_order_seq_cst) <= number;
}

void Journal::unpin() noexcept { pins_[0].store(kNoPin, std::memory_order_release); }

ReplayResult Journal::replay(std::uint64_t begin, std::uint64_t end, std::size_t max_messages,
                             ReplayVisitor& visitor) noexcept {
  ReplayResult result;
  result.next_seq = begin;
  const std::uint64_t after_end = end == std::numeric_limits<std::uint64_t>::max() ? end : end + 1;
  if (begin > end) return result;
  if (max_messages == 0) {
    result.status = ReplayStatus::kLimit;
    return result;
  }
  // First catalog entry whose last_seq >= begin (last_seq never decreases).
  std::size_t lo = 0;
  std::size_t hi = cat_count_;
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (catalog_at(mid).last_seq < begin) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  char path[detail::kPathMax];
  for (std::size_t i = lo; i < cat_count_; ++i) {
    const CatalogEntry& e = catalog_at(i);
    if (e.count == 0) continue;
    if (e.first_seq > end) break;
    detail::ReadView view;
    const bool active = &e == cat_active_;
    bool buffered = false;  // read through its write-behind buffer (pinned, not mapped)
    const auto release_view = [&]() noexcept {
      if (!buffered) detail::unmap_readonly(view);
      unpin();
    };
    if (active) {
      view.base = base_;
      view.size = active_->size;
    } else {
      if (!pin(e.number)) {
        ++result.unavailable_segments;
        continue;
      }
      // A finished segment whose buffer the service has not released yet:
      // its file may still lack the last records written out (the pin
      // keeps the buffer from being released while it is read).
      std::size_t held_size = 0;
      const int b = write_behind_ != nullptr ? write_behind_->holding(e.number, held_size) : -1;
      if (b >= 0) {
        view.base = write_behind_->base(b);
        view.size = held_size;
        buffered = true;
      } else if (!detail::format_segment_path(path, sizeof(path), config_.directory, e.number) ||
                 detail::map_readonly(path, view) != 0) {
        unpin();
        ++result.unavailable_segments;
        continue;
      }
    }
    // Slot of the first seq >= next_seq: direct when seqs are contiguous.
    const std::uint64_t want = result.next_seq;
    auto seq_at = [&](std::uint32_t slot) noexcept -> std::uint64_t {
      const std::uint32_t off = detail::slot_at(view.base, view.size, slot);
      if (off < kSegmentHeaderSize || off + kRecordHeaderSize > view.size) return 0;
      std::uint64_t s;
      std::memcpy(&s, view.base + off + 8, sizeof(s));
      return s;
    };
    std::uint32_t slot = 0;
    if (want > e.first_seq) {
      const std::uint64_t guess = want - e.first_seq;
      if (guess < e.count && seq_at(static_cast<std::uint32_t>(guess)) == want) {
        slot = static_cast<std::uint32_t>(guess);
      } else {
        std::uint32_t l = 0;
        std::uint32_t h = e.count;
        while (l < h) {
          const std::uint32_t m = l + (h - l) / 2;
          if (seq_at(m) < want) {
            l = m + 1;
          } else {
            h = m;
          }
        }
        slot = l;
      }
    }
    bool done = false;
    for (; slot < e.count; ++slot) {
      const std::uint32_t off = detail::slot_at(view.base, view.size, slot);
      RecordHeader h;
      if (!detail::read_record(view.base, view.size - kSlotSize * e.count, off, h) ||
          (h.flags & kRecordControl) != 0) {
        ++result.corrupt;
        continue;
      }
      if (h.seq < want) continue;
      if (h.seq > end) {
        done = true;
        break;
      }
      if (result.delivered == max_messages) {
        result.status = ReplayStatus::kLimit;
        result.next_seq = h.seq;
        if (!active) {
          release_view();
        }
        return result;
      }
      StoredMessage m;
      m.seq = h.seq;
      m.timestamp_ns = h.timestamp_ns;
      m.flags = static_cast<std::uint8_t>(h.flags >> 8);
      m.bytes = {view.base + off + kRecordHeaderSize + h.gap, h.size - kRecordHeaderSize - h.gap};
      ++result.delivered;
      result.next_seq = h.seq + 1;
      if (!visitor.on_message(m)) {
        result.status = ReplayStatus::kStopped;
        if (!active) {
          release_view();
        }
        return result;
      }
    }
    if (!active) release_view();
    if (done) break;
  }
  result.status = ReplayStatus::kComplete;
  result.next_seq = after_end;
  return result;
}

// ---------------------------------------------------------------------------
// service side

std::int64_t Journal::timer_period_ns() const noexcept {
  return durability_ == Durability::kFsync ? std::max<std::int64_t>(config_.fsync_interval_ns / 4, 1)
                                           : std::numeric_limits<std::int64_t>::max();
}

int Journal::maintain(std::int64_t now) noexcept {
  if (maintaining_.exchange(true, std::memory_order_acquire)) return 0;
  // The spare first: a writer about to rotate waits for nothing else.
  // Retiring (write-back, munmap) can block on the disk queue.
  // Without preallocation nothing is prepared ahead of the writer.
  int work = config_.preallocate ? service_spare(now) + service_prefault() : 0;
  if (config_.preallocate && config_.prepare_ahead != 0) work += service_fill_ahead();
  if (write_behind_ != nullptr) {
    work += service_write_behind(now);
    work += service_held_buffers();
    if (write_behind_->zero_some(kZeroPiece) != 0) ++work;
  }
  work += service_retire(now);
  work += service_evict(now);
  work += service_flush(now);
  if (config_.preallocate) work += service_rewarm(now);
  work += service_evict_written(now);
  work += service_retention(now);
  maintaining_.store(false, std::memory_order_release);
  return work;
}

void Journal::service_error(int err) noexcept {
  service_errors_.add();
  last_errno_.store(err, std::memory_order_relaxed);
}

void Journal::finish_segment(Segment* s) noexcept {
  flush_finished(s);
  close_retired(s);
}

void Journal::close_retired(Segment* s) noexcept {
  detail::close_segment(*s);
  segments_retired_.add();
  release_pool(s);
}

void Journal::discard_spare(Segment* s) noexcept {
  char path[detail::kPathMax];
  if (detail::format_segment_path(path, sizeof(path), config_.directory, s->number)) ::unlink(path);
  if (s->buffer >= 0) {
    // Never written (its header only, and pre-faulted zeros): the buffer
    // goes back with nothing to write out.
    if (s->direct_fd >= 0) ::close(s->direct_fd);
    s->direct_fd = -1;
    const Held h{s->buffer, s->size, kPageSize, s->size};
    s->buffer = -1;
    s->base = nullptr;
    if (!release_buffer(h)) held_[held_count_++] = h;
  }
  detail::close_segment(*s);
  release_pool(s);
}

void Journal::flush_finished(Segment* s) noexcept {
  if (s == prefault_target_) prefault_target_ = nullptr;
  if (s == prefault_active_) prefault_active_ = nullptr;
  if (s == flush_segment_) flush_segment_ = nullptr;
  if (s == rewarm_segment_) rewarm_segment_ = nullptr;
  if (s->buffer >= 0) {
    finish_buffered(s);
    return;
  }
  const std::int64_t t0 = core::monotonic_ns();
  const std::uint64_t t_trace = core::trace::begin();
  bool flushed = false;
  int rc = 0;
  switch (durability_) {
    case Durability::kNone:
    case Durability::kOs:
      // The page cache has it; the kernel writes it back on its own
      // schedule. (Starting write-back here with sync_file_range blocked
      // this thread for 40-160 ms on a congested disk, starving spare
      // preparation for every journal.)
      break;
    case Durability::kFsync:
    case Durability::kSync: {
      // Only what was written: the data and the slots, not the zero middle.
      const std::size_t data = detail::page_ceil(s->final_end);
      const std::size_t slots = detail::page_floor(s->final_slot_low);
      if (data >= slots) {
        rc = ::msync(s->base, s->size, MS_SYNC);
      } else {
        rc = ::msync(s->base, data, MS_SYNC);
        if (rc == 0) rc = ::msync(s->base + slots, s->size - slots, MS_SYNC);
      }
      flushed = true;
      break;
    }
  }
  if (flushed) {
    core::trace::end(core::TraceKind::kFsync, t_trace, s->number, s->size);
    flushes_.add();
    max_flush_ns_.max(static_cast<std::uint64_t>(core::monotonic_ns() - t0));
    if (rc != 0) {
      flush_errors_.add();
      last_errno_.store(errno, std::memory_order_relaxed);
    }
  }
}

void Journal::hold_for_eviction(Segment* s, std::int64_t now) noexcept {
  if (ev_count_ == evicting_.size()) evict_oldest();
  evicting_[(ev_head_ + ev_count_) % evicting_.size()] = Evicting{s->fd, now + config_.evict_delay_ns};
  ++ev_count_;
  s->fd = -1;  // the file is closed by evict_oldest()
}

void Journal::evict_oldest() noexcept {
  Evicting& e = evicting_[ev_head_];
  // What write-back finished since the first pass is clean now and goes;
  // pages still being written stay cached (the kernel reclaims them later).
  drop_cached(e.fd, 0, 0);
  ::close(e.fd);
  e = Evicting{};
  ev_head_ = (ev_head_ + 1) % evicting_.size();
  --ev_count_;
  segments_evicted_.add();
}

void Journal::drop_cached(int fd, std::size_t offset, std::size_t length) noexcept {
  const std::int64_t t0 = core::monotonic_ns();
  (void)::posix_fadvise(fd, static_cast<off_t>(offset), static_cast<off_t>(length), POSIX_FADV_DONTNEED);
  max_evict_ns_.max(static_cast<std::uint64_t>(core::monotonic_ns() - t0));
}

int Journal::service_evict(std::int64_t now) noexcept {
  if (ev_count_ == 0 || evicting_[ev_head_].due_ns > now) return 0;
  evict_oldest();
  return 1;
}

void Journal::drop_oldest_trailing(const Segment& active) noexcept {
  const Trailing& t = trailing_[tr_head_];
  // Only while its segment is still the one being written (a finished
  // segment's pages go with it, evict_finished).
  if (active.base != nullptr && active.fd >= 0 && active.number == t.number) drop_cached(active.fd, t.from, t.to - t.from);
  tr_head_ = (tr_head_ + 1) % kTrailingCapacity;
  --tr_count_;
}

int Journal::service_evict_written(std::int64_t now) noexcept {
  if (!config_.evict_written) return 0;
  int work = 0;
  const std::uint64_t p = published_.load(std::memory_order_acquire);
  Segment* s = &pool_[p >> 32];
  while (tr_count_ != 0 && trailing_[tr_head_].due_ns <= now) {
    drop_oldest_trailing(*s);
    work = 1;
  }
  // Rounds on the re-warm's instants: with thousands of journals the calls
  // come together in a few duty cycles.
  if (now < next_trail_ns_) return work;
  const std::int64_t interval = std::max<std::int64_t>(config_.rewarm_interval_ns, 1);
  next_trail_ns_ = (now / interval + 1) * interval;
  if (s->base == nullptr || s->fd < 0) return work;
  if (s->number != trail_number_) {
    trail_number_ = s->number;  // segment numbers are never reused for a segment that was written
    trail_to_ = 0;
  }
  const std::size_t end = p & 0xFFFFFFFFu;
  if (end <= config_.evict_written_keep) return work;
  // In whole folios once the segment has large ones: the page cache drops
  // only folios wholly inside the range.
  const std::size_t target = s->large_folios.load(std::memory_order_relaxed)
                                 ? (end - config_.evict_written_keep) / kLargeFolio * kLargeFolio
                                 : detail::page_floor(end - config_.evict_written_keep);
  if (target < trail_to_ + std::max(config_.evict_written_chunk, kPageSize)) return work;
  // The writer stores only at and after `end`, so nothing below target is
  // written again; a replay or a store that does reach below faults the
  // page back in (from the page cache or the disk), nothing is lost: the
  // unmapped pages' dirty state is the page cache's, written back by the
  // kernel's flusher threads, and dropped when due.
  const std::size_t from = trail_to_;
  const std::int64_t t0 = core::monotonic_ns();
  (void)::madvise(s->base + from, target - from, MADV_DONTNEED);
  max_evict_ns_.max(static_cast<std::uint64_t>(core::monotonic_ns() - t0));
  // More rounds than the ring holds within the delay: the newest range
  // (same segment, ending where this one starts) takes this one in and
  // keeps its own due time, rather than the oldest going early.
  Trailing& newest = trailing_[(tr_head_ + tr_count_ + kTrailingCapacity - 1) % kTrailingCapacity];
  if (tr_count_ == kTrailingCapacity && newest.number == s->number && newest.to == from) {
    newest.to = target;
  } else {
    if (tr_count_ == kTrailingCapacity) drop_oldest_trailing(*s);
    trailing_[(tr_head_ + tr_count_) % kTrailingCapacity] =
        Trailing{s->number, from, target, now + config_.evict_written_delay_ns};
    ++tr_count_;
  }
  written_evicted_bytes_.add(target - from);
  trail_to_ = target;
  return 1;
}

int Journal::service_retire(std::int64_t now) noexcept {
  if (Segment* u = unmapping_; u != nullptr) {
    // One chunk per duty cycle: a 64 MiB munmap in one call kept a shared
    // core for 3-15 ms. (Pieces of 1 MiB within a 100 us slice made no
    // difference in the rtt lane: a 4 MiB munmap takes ~0.2 ms there.)
    const std::size_t from = unmapped_;
    const std::size_t to = std::min(u->size, unmapped_ + kUnmapChunk);
    const std::uint64_t t_unmap = core::trace::begin();
    ::munmap(u->base + from, to - from);
    core::trace::end(core::TraceKind::kUnmap, t_unmap, u->number, to - from);
    unmapped_ = to;
    // The unmapped pages' dirty state is the page cache's now: start their
    // write-back, drop those already clean (all of them after an msync
    // under kFsync and kSync).
    if (config_.evict_finished) drop_cached(u->fd, from, to - from);
    if (to == u->size) {
      u->base = nullptr;  // all unmapped: close_segment only closes the file
      if (config_.evict_finished) hold_for_eviction(u, now);
      close_retired(u);
      unmapping_ = nullptr;
    }
    return 1;
  }
  Segment* s = nullptr;
  if (retired_.try_pop(s)) {
    const std::uint64_t number = s->number;
    flush_finished(s);
    if (s->base == nullptr) {
      close_retired(s);  // written through a buffer (write_behind): nothing of it mapped any more
    } else {
      unmapping_ = s;
      unmapped_ = 0;
    }
    if (!retained_.empty()) {
      if (ret_count_ == retained_.size()) {
        ret_head_ = (ret_head_ + 1) % retained_.size();
        --ret_count_;
      }
      retained_[(ret_head_ + ret_count_) % retained_.size()] = Retained{number, core::realtime_ns()};
      ++ret_count_;
    }
    return 1;
  }
  return 0;
}

int Journal::service_spare(std::int64_t now) noexcept {
  const std::uint32_t state = spare_state_.load(std::memory_order_acquire);
  if (state == kSpareReady) {
    // A spare older than the active segment (the writer created one inline
    // meanwhile) would break the order of the files: replace it.
    Segment* s = spare_.load(std::memory_order_acquire);
    if (s->number > active_number_.load(std::memory_order_acquire)) return 0;
    std::uint32_t expected = kSpareReady;
    if (!spare_state_.compare_exchange_strong(expected, kSpareCreating, std::memory_order_acq_rel)) return 0;
    // Renumbered after the active segment and kept: its blocks are
    // allocated and its pages prepared. (Removing it and creating another
    // cost a second zero-fill, and on ext4 without a journal every file
    // created after many removals scans the recently removed inodes: with
    // 2,000 journals that made every spare late.)
    if (renumber_spare(s)) {
      spare_state_.store(kSpareReady, std::memory_order_release);
      return 1;
    }
    if (s == prefault_target_) prefault_target_ = nullptr;
    discard_spare(s);
    spare_state_.store(kSpareEmpty, std::memory_order_release);
    return 1;
  }
  if (filling_ != nullptr) return service_fill(now);
  if (state != kSpareEmpty || now < spare_retry_ns_) return 0;
  // No segment yet (defer_first_segment): nothing to prepare a next one for.
  if (active_number_.load(std::memory_order_acquire) == 0) return 0;
  if (config_.prepare_spare_at > 0.0 && !rotated_.load(std::memory_order_relaxed)) {
    // Lazily: only once the active segment is filling.
    const std::uint64_t p = published_.load(std::memory_order_acquire);
    const Segment& active = pool_[p >> 32];
    const auto used = static_cast<double>(p & 0xFFFFFFFFu);
    if (used < config_.prepare_spare_at * static_cast<double>(active.size)) return 0;
  }
  std::uint32_t expected = kSpareEmpty;
  if (!spare_state_.compare_exchange_strong(expected, kSpareCreating, std::memory_order_acq_rel)) return 0;
  Segment* s = acquire_pool();
  if (s == nullptr) {
    spare_state_.store(kSpareEmpty, std::memory_order_release);
    return 0;
  }
  const std::uint64_t number = next_number_.fetch_add(1, std::memory_order_relaxed);
  const std::size_t spare_size = next_size_.load(std::memory_order_relaxed);
  const std::uint64_t t_create = core::trace::begin();
  const int create_err = create_segment(s, number, spare_size);
  core::trace::end(core::TraceKind::kSegmentCreate, t_create, number, spare_size);
  if (const int err = create_err; err != 0) {
    release_pool(s);
    return_number(number);
    spare_failed(err, now);
    return 1;
  }
  if (config_.prepare_ahead != 0) {
    // Only where the writer stores first; the re-warm keeps a window ahead
    // of it from then on.
    segments_created_.add();
    prefault_ends(s, config_.prepare_ahead);
    s->prefaulted.store(true, std::memory_order_release);
    max_prepare_ns_.max(static_cast<std::uint64_t>(core::monotonic_ns() - now));
    hand_over_spare(s);
    return 1;
  }
  // Zero-filled with pwrite() first, piece by piece (service_fill), while
  // no one else can see it: that creates the page cache pages for less than
  // half the CPU time of write faults on the fresh file without read-ahead
  // (64 MiB: 17 ms of 32 KiB writes + 2.5 ms to map them, against 40 ms), and the pre-fault
  // after it only maps them.
  s->prepare_started_ns = now;
  filling_ = s;
  fill_next_ = kSegmentHeaderSize;
  segments_created_.add();
  return 1;
}

void Journal::hand_over_spare(Segment* s) noexcept {
  core::trace::emit_point(core::TraceKind::kSpareReady, s->number, s->size);
  spare_.store(s, std::memory_order_release);
  spare_state_.store(kSpareReady, std::memory_order_release);
  spare_errno_.store(0, std::memory_order_relaxed);
}

void Journal::prefault_ends(Segment* s, std::size_t ahead) noexcept {
  // The first `ahead` bytes (records) and the last slot pages (the index
  // grows down from the end: 4 bytes a record).
  const std::size_t head = std::min(detail::page_ceil(ahead), s->size / 2);
  const std::size_t tail = std::min(head, kSlotPrefault);
  const std::uint64_t t_fault = core::trace::begin();
  // No writer has it yet: the head zero-filled and mapped (the header
  // stays), the fence at its end, the rest filled as the writer comes.
  if (fill_zeros(s, kSegmentHeaderSize, head) == 0) {
    // A reused buffer's pages are there already: the fence past them.
    s->fill_end.store(s->buffer >= 0 ? std::max(head, s->reused) : head, std::memory_order_relaxed);
    s->fill_state.store(detail::kFillIdle, std::memory_order_release);
  } else {
    detail::prefault_pages(s->base, 0, head);  // no fence: the writer's to the end
  }
  detail::prefault_pages(s->base, s->size - tail, s->size);
  core::trace::end(core::TraceKind::kPrefault, t_fault, s->number, head + tail);
}

bool Journal::renumber_spare(Segment* s) noexcept {
  const std::uint64_t number = next_number_.fetch_add(1, std::memory_order_relaxed);
  char from[detail::kPathMax];
  char to[detail::kPathMax];
  if (!detail::format_segment_path(from, sizeof(from), config_.directory, s->number) ||
      !detail::format_segment_path(to, sizeof(to), config_.directory, number)) {
    return_number(number);
    return false;
  }
  if (::rename(from, to) != 0) {
    service_error(errno);
    return_number(number);
    return false;
  }
  // Then the header: a crash between the two leaves a file whose name and
  // header disagree and which holds no record, which open() takes for an
  // unused spare (the writer never saw it).
  SegmentHeader header;
  detail::fill_header(header, number, s->size, s->alignment, core::realtime_ns(), config_.session_identity);
  std::memcpy(s->base, &header, sizeof(header));
  // A buffered spare's header is the buffer's: the file gets it too, so a
  // buffer left by a crash matches its file (detail::recover_write_behind).
  if (s->buffer >= 0) (void)::pwrite(s->fd, &header, sizeof(header), 0);
  core::trace::emit_point(core::TraceKind::kSpareReady, number, s->size);
  s->number = number;
  spares_renumbered_.add();
  return true;
}

void Journal::spare_failed(int err, std::int64_t now) noexcept {
  service_error(err);
  // Never given up: a full disk gets space back, and the next attempt is
  // due after kSpareRetryNs.
  spare_errno_.store(err, std::memory_order_relaxed);
  spare_retry_ns_ = now + kSpareRetryNs;
  spare_state_.store(kSpareEmpty, std::memory_order_release);
}

int Journal::service_fill(std::int64_t now) noexcept {
  Segment* s = filling_;
  if (s->buffer >= 0) fill_next_ = s->size;  // a buffer's bytes are zero already
  if (fill_next_ < s->size) {
    // Up to the next kFillChunk boundary (the first chunk starts after the
    // header), in page-aligned pieces, while the slice lasts.
    const std::size_t chunk_end = std::min(fill_next_ - fill_next_ % kFillChunk + kFillChunk, s->size);
    const std::int64_t t0 = core::monotonic_ns();
    const std::uint64_t t_fill = core::trace::begin();
    const std::size_t fill_from = fill_next_;
    do {
      const std::size_t n = std::min(kFillPiece - fill_next_ % kFillPiece, chunk_end - fill_next_);
      const ssize_t w = ::pwrite(s->fd, kZeros, n, static_cast<off_t>(fill_next_));
      if (w > 0) {
        fill_next_ += static_cast<std::size_t>(w);
        continue;
      }
      const int err = w < 0 ? errno : EIO;
      if (err == EINTR) return 1;
      filling_ = nullptr;
      const std::uint64_t number = s->number;
      discard_spare(s);
      return_number(number);
      spare_failed(err, now);
      return 1;
    } while (fill_next_ < chunk_end && core::monotonic_ns() - t0 < kFillSliceNs);
    core::trace::end(core::TraceKind::kZeroFill, t_fill, s->number, fill_next_ - fill_from);
    return 1;
  }
  filling_ = nullptr;
  s->zero_filled = true;
  // The pages the writer touches first (the start of the data and the
  // index slots at the end of the file) before anything else; then hand it
  // over, so a writer that needs it early gets it at once while the rest is
  // pre-faulted in chunks (safe next to the writer's stores).
  const std::size_t head = std::min(kFirstPrefault, s->size / 2);
  const std::uint64_t t_fault = core::trace::begin();
  detail::prefault_pages(s->base, 0, head);
  detail::prefault_pages(s->base, s->size - head, s->size);
  core::trace::end(core::TraceKind::kPrefault, t_fault, s->number, 2 * head);
  hand_over_spare(s);
  prefault_target_ = s;
  prefault_next_ = head;
  return 1;
}

int Journal::service_prefault() noexcept {
  // Two cursors: the segment the writer is in (urgent: it faults on every
  // page not done yet) and the spare (needed at the next rotation).
  const std::uint64_t p = published_.load(std::memory_order_acquire);
  Segment* active = &pool_[p >> 32];
  const std::size_t writer_at = detail::page_floor(p & 0xFFFFFFFFu);
  if (prefault_target_ == active) {
    // The writer took the spare before its pre-fault finished.
    prefault_active_ = prefault_target_;
    prefault_active_next_ = prefault_next_;
    prefault_target_ = nullptr;
  }
  if (prefault_active_ == nullptr && active->base != nullptr && !active->prefaulted.load(std::memory_order_acquire)) {
    // Created inline by the writer: nothing faulted yet.
    prefault_active_ = active;
    prefault_active_next_ = 0;
  }
  Segment* s = nullptr;
  std::size_t* next = nullptr;
  if (prefault_active_ != nullptr) {
    s = prefault_active_;
    next = &prefault_active_next_;
    if (s == active) *next = std::max(*next, writer_at);  // pages behind the writer are done
  } else if (prefault_target_ != nullptr) {
    s = prefault_target_;
    next = &prefault_next_;
  } else {
    return 0;
  }
  const std::size_t to = std::min(s->size, *next + (s->zero_filled ? kPrefaultFilledChunk : kPrefaultChunk));
  const std::uint64_t t_fault = core::trace::begin();
  detail::prefault_pages(s->base, *next, to);
  core::trace::end(core::TraceKind::kPrefault, t_fault, s->number, to - *next);
  *next = to;
  if (to >= s->size) {
    s->prefaulted.store(true, std::memory_order_release);
    if (s == prefault_active_) {
      prefault_active_ = nullptr;
    } else {
      prefault_target_ = nullptr;
    }
    if (s->prepare_started_ns != 0) {
      max_prepare_ns_.max(static_cast<std::uint64_t>(core::monotonic_ns() - s->prepare_started_ns));
      s->prepare_started_ns = 0;
    }
  }
  return 1;
}

std::size_t Journal::zero_filled(const Segment* s, std::size_t from, std::size_t to) noexcept {
  return s->buffer < 0 && to > from ? to - from : 0;
}

int Journal::fill_zeros(Segment* s, std::size_t from, std::size_t to) noexcept {
  if (s->buffer >= 0) {
    // A buffer's bytes are zero already (zeroed when it was released) and
    // never the file's page cache: only mapped in ahead of the writer.
    detail::prefault_pages(s->base, detail::page_floor(from), to);
    return 0;
  }
  std::size_t at = from;
  while (at < to) {
    const std::size_t n = std::min(kFillPiece - at % kFillPiece, to - at);
    const ssize_t w = ::pwrite(s->fd, kZeros, n, static_cast<off_t>(at));
    if (w > 0) {
      at += static_cast<std::size_t>(w);
    } else if (w < 0 && errno == EINTR) {
      continue;
    } else {
      return w < 0 ? errno : EIO;
    }
  }
  detail::prefault_pages(s->base, detail::page_floor(from), to);
  return 0;
}

int Journal::service_fill_ahead() noexcept {
  const std::uint64_t p = published_.load(std::memory_order_acquire);
  Segment* s = &pool_[p >> 32];
  if (s->base == nullptr || s->fill_state.load(std::memory_order_acquire) != detail::kFillIdle) return 0;
  // Measured from where the writer next needs the fill to reach: its data
  // end plus the room of its claims (a session claims MaxMessageSize,
  // 64 KiB, for every message). From the data end alone, a window smaller
  // than that claim was always already filled by the writer's own pieces,
  // and the service never filled ahead of it: the writer zero-filled every
  // page itself.
  const std::size_t end = (p & 0xFFFFFFFFu) + writer_lead_.load(std::memory_order_relaxed);
  const std::size_t filled = s->fill_end.load(std::memory_order_relaxed);
  if (filled >= end + fill_window_ / 2) return 0;
  // The writer came within a quarter of the window: it writes faster than
  // the service comes round; fill further ahead of it from now on.
  if (filled < end + fill_window_ / 4 && fill_window_ < kFillWindowMax) fill_window_ *= 2;
  // A writer this close to the fence would likely reach it during the fill
  // (and then seal its segment early rather than wait): it takes its next
  // piece itself instead.
  if (filled < end + kFillSlack) return 0;
  // Clear of the index: records (of at least 40 bytes) ending before `to`
  // take at most to / 10 bytes of slots down from the end of the file,
  // whatever the writer does meanwhile; the rest it faults in itself.
  // In pieces of at most kFillAheadPiece: a writer that arrives while one is
  // written seals its segment early rather than wait.
  std::size_t to = std::min(detail::page_ceil(end + fill_window_), filled + kFillAheadPiece);
  const std::size_t guard = to / 8 + kPageSize;
  if (s->size < guard) return 0;
  to = std::min(to, detail::page_floor(s->size - guard));
  if (to <= filled) return 0;
  std::uint32_t idle = detail::kFillIdle;
  if (!s->fill_state.compare_exchange_strong(idle, detail::kFillBusy, std::memory_order_acq_rel)) return 0;
  // The writer may have taken a piece past the fill just before.
  const std::size_t from = s->fill_end.load(std::memory_order_acquire);
  const bool fills = to > from;
  if (fills) {
    const std::uint64_t t_fill = core::trace::begin();
    const int err = fill_zeros(s, from, to);
    core::trace::end(core::TraceKind::kZeroFill, t_fill, s->number, to - from);
    if (err == 0) {
      s->fill_end.store(to, std::memory_order_release);
      filled_bytes_.add(zero_filled(s, from, to));
    } else {
      service_error(err);  // the writer takes over at the fence
    }
  }
  // Unless the writer rotated away meanwhile (it set kFillWriter).
  std::uint32_t busy = detail::kFillBusy;
  (void)s->fill_state.compare_exchange_strong(busy, detail::kFillIdle, std::memory_order_acq_rel);
  return fills ? 1 : 0;
}

int Journal::service_flush(std::int64_t now) noexcept {
  if (durability_ != Durability::kFsync || now < next_flush_ns_) return 0;
  next_flush_ns_ = now + config_.fsync_interval_ns;
  const std::uint64_t p = published_.load(std::memory_order_acquire);
  Segment* s = &pool_[p >> 32];
  const std::size_t end = p & 0xFFFFFFFFu;
  if (s != flush_segment_) {
    flush_segment_ = s;
    synced_end_ = 0;
    pending_end_ = 0;
    pending_end2_ = 0;
  }
  int work = 0;
  // Flush what was written two ticks ago, not up to the writer: write-back
  // write-protects the pages it cleans, and the kernel cleans whole (large)
  // folios around the range, so flushing right behind the writer makes its
  // next stores fault (measured: ~1 fault per 15 commits at 100k/s when
  // flushing one interval behind). The loss window is at most three
  // intervals.
  const std::size_t target = std::min(pending_end2_, end);
  if (target > synced_end_) {
    const std::size_t from = detail::page_floor(synced_end_);
    const std::int64_t t0 = core::monotonic_ns();
    const std::uint64_t t_sync = core::trace::begin();
    const int rc = ::msync(s->base + from, detail::page_ceil(target) - from, MS_SYNC);
    core::trace::end(core::TraceKind::kFsync, t_sync, s->number, detail::page_ceil(target) - from);
    flushes_.add();
    max_flush_ns_.max(static_cast<std::uint64_t>(core::monotonic_ns() - t0));
    if (rc != 0) {
      flush_errors_.add();
      last_errno_.store(errno, std::memory_order_relaxed);
    } else {
      synced_end_ = target;
    }
    ++work;
  }
  pending_end2_ = pending_end_;
  pending_end_ = end;
  if (void* companion = companion_.load(std::memory_order_acquire); companion != nullptr) {
    if (::msync(companion, companion_length_.load(std::memory_order_relaxed), MS_SYNC) != 0) {
      flush_errors_.add();
      last_errno_.store(errno, std::memory_order_relaxed);
    }
    flushes_.add();
  }
  return work;
}

int Journal::service_rewarm(std::int64_t now) noexcept {
  if (config_.rewarm_window == 0) return 0;
  int work = 0;
  const std::uint64_t p = published_.load(std::memory_order_acquire);
  Segment* s = &pool_[p >> 32];
  // Mapped, and not a segment the pre-fault is still working through.
  const bool warmable = s->base != nullptr && s != prefault_target_ && s != prefault_active_;
  if (now >= next_rewarm_ns_) {
    // Rounds fall on multiples of the interval, the same instants for every
    // journal of the service: with thousands of journals their rounds then
    // come together in a few duty cycles, and the cycles between them find
    // nothing to do and sleep, instead of each finding one journal's round.
    const std::int64_t interval = std::max<std::int64_t>(config_.rewarm_interval_ns, 1);
    next_rewarm_ns_ = (now / interval + 1) * interval;
    rewarm_next_ = rewarm_to_ = 0;
    if (!warmable) return 0;
    const std::size_t end = p & 0xFFFFFFFFu;
    // Cover what the writer will reach before the next round, with margin.
    const std::size_t advanced = s == rewarm_segment_ && end > rewarm_last_end_ ? end - rewarm_last_end_ : 0;
    // A journal not written since its last round was re-touched then: only
    // every kQuietRewarmRounds-th round for it (the kernel writes pages back
    // after dirty_expire, 30 s by default).
    if (advanced == 0 && s == rewarm_segment_ && ++quiet_rewarm_rounds_ < kQuietRewarmRounds) return 0;
    quiet_rewarm_rounds_ = 0;
    rewarm_segment_ = s;
    rewarm_last_end_ = end;
    const std::size_t window = std::max(config_.rewarm_window, 2 * advanced);
    const std::size_t slot_low =
        std::min<std::size_t>(published_slot_low_.load(std::memory_order_relaxed), s->size);
    const std::size_t slot_page = detail::page_floor(slot_low);
    rewarm_next_ = detail::page_floor(end);
    rewarm_to_ = std::min(rewarm_next_ + window, slot_page);
    // Not past the service's zero-fill: the fill maps those pages for a
    // fifth of what faulting them in costs.
    if (s->fill_state.load(std::memory_order_acquire) != detail::kFillWriter)
      rewarm_to_ = std::min(rewarm_to_, std::max(rewarm_next_, s->fill_end.load(std::memory_order_relaxed)));
    const std::size_t slots_from = slot_page >= kPageSize ? slot_page - kPageSize : 0;
    detail::prefault_pages(s->base, std::max(slots_from, rewarm_to_), std::min(s->size, slot_page + kPageSize));
    work = 1;
  }
  if (rewarm_next_ >= rewarm_to_) return work;
  if (s != rewarm_segment_ || !warmable) {
    rewarm_next_ = rewarm_to_ = 0;  // rotated meanwhile: the next round starts over
    return work;
  }
  // Pages still mapped writable cost ~50 ns each to walk, pages the kernel
  // wrote back (write-protected) a write fault of ~2 us: pieces of 64 pages
  // until ~100 us are spent, the rest in the next cycles.
  const std::int64_t t0 = core::monotonic_ns();
  do {
    const std::size_t to = std::min(rewarm_to_, rewarm_next_ + kPrefaultChunk);
    detail::prefault_pages(s->base, rewarm_next_, to);
    rewarm_next_ = to;
  } while (rewarm_next_ < rewarm_to_ && core::monotonic_ns() - t0 < kRewarmSliceNs);
  return 1;
}

int Journal::service_retention(std::int64_t now) noexcept {
  if (retained_.empty() || now < next_retention_ns_) return 0;
  next_retention_ns_ = now + kRetentionPeriodNs;
  const std::int64_t wall = core::realtime_ns();
  const std::uint64_t active = active_number_.load(std::memory_order_acquire);
  int work = 0;
  char path[detail::kPathMax];
  char target[detail::kPathMax];
  while (ret_count_ > 0) {
    const Retained r = retained_[ret_head_];
    const bool over_count = config_.retain_segments != 0 && ret_count_ + 1 > config_.retain_segments;
    const bool too_old = config_.retain_max_age_ns != 0 && wall - r.finished_ns > config_.retain_max_age_ns;
    if (!over_count && !too_old) break;
    if (r.number >= active) break;
    // Announce, then look at the readers' pins (see pin()).
    removing_below_.store(r.number + 1, std::memory_order_seq_cst);
    std::uint64_t min_pin = kNoPin;
    for (const auto& pin_slot : pins_) min_pin = std::min(min_pin, pin_slot.load(std::memory_order_seq_cst));
    if (min_pin <= r.number) {
      removing_below_.store(r.number, std::memory_order_seq_cst);
      break;
    }
    int rc = 0;
    if (detail::format_segment_path(path, sizeof(path), config_.directory, r.number)) {
      if (config_.archive_directory.empty()) {
        rc = ::unlink(path);
      } else if (detail::format_segment_path(target, sizeof(target), config_.archive_directory, r.number)) {
        rc = ::rename(path, target);
      }
    }
    if (rc != 0 && errno != ENOENT) {
      service_error(errno);
      removing_below_.store(r.number, std::memory_order_seq_cst);
      break;
    }
    segments_removed_.add();
    ret_head_ = (ret_head_ + 1) % retained_.size();
    --ret_count_;
    ++work;
  }
  return work;
}

// ---------------------------------------------------------------------------
// accessors

bool Journal::spare_ready() const noexcept {
  return spare_state_.load(std::memory_order_acquire) == kSpareReady;
}

bool Journal::spare_prefaulted() const noexcept {
  if (!spare_ready()) return false;
  const Segment* s = spare_.load(std::memory_order_acquire);
  return s != nullptr && s->prefaulted.load(std::memory_order_acquire);
}

std::uint64_t Journal::active_segment() const noexcept { return active_number_.load(std::memory_order_acquire); }

std::string Journal::segment_path(std::uint64_t number) const {
  char path[detail::kPathMax];
  if (!detail::format_segment_path(path, sizeof(path), config_.directory, number)) return {};
  return path;
}

JournalStats Journal::stats() const noexcept {
  JournalStats s;
  s.appends = appends_.get();
  s.bytes = bytes_.get();
  s.unindexed = unindexed_.get();
  s.failed_claims = failed_claims_.get();
  s.rotations = rotations_.get();
  s.spare_misses = spare_misses_.get();
  s.inline_creations = inline_creations_.get();
  s.unfaulted_rotations = unfaulted_rotations_.get();
  s.retire_overflows = retire_overflows_.get();
  s.sync_flushes = sync_flushes_.get();
  s.fill_takeovers = fill_takeovers_.get();
  s.fence_rotations = fence_rotations_.get();
  s.filled_bytes = filled_bytes_.get();
  s.write_behind_bytes = write_behind_bytes_.get();
  s.write_behind_segments = write_behind_segments_.get();
  s.write_behind_misses = write_behind_misses_.get();
  s.writer_filled_bytes = writer_filled_bytes_.get();
  s.segments_created = segments_created_.get();
  s.spares_renumbered = spares_renumbered_.get();
  s.segments_retired = segments_retired_.get();
  s.segments_evicted = segments_evicted_.get();
  s.max_evict_ns = max_evict_ns_.get();
  s.written_evicted_bytes = written_evicted_bytes_.get();
  s.segments_removed = segments_removed_.get();
  s.flushes = flushes_.get();
  s.flush_errors = flush_errors_.get();
  s.max_flush_ns = max_flush_ns_.get();
  s.max_prepare_ns = max_prepare_ns_.get();
  s.service_errors = service_errors_.get();
  s.last_errno = last_errno_.load(std::memory_order_relaxed);
  s.spare_errno = spare_errno_.load(std::memory_order_relaxed);
  s.active_segment = active_number_.load(std::memory_order_relaxed);
  s.epoch = epoch_;
  s.last_seq = last_indexed_seq_;
  return s;
}

}  // namespace hft::store
