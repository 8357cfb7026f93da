// Internal helpers of the journal: the in-memory handle of a mapped segment,
// file naming, creation, read-only mapping and record checks. Not installed.
#pragma once

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "hft/store/crc32c.hpp"
#include "hft/store/format.hpp"

namespace hft::store::detail {

/// Segment::fill_state (growing journals, JournalConfig::prepare_ahead).
inline constexpr std::uint32_t kFillIdle = 0;    ///< the service may take kFillBusy
inline constexpr std::uint32_t kFillBusy = 1;    ///< the service is zero-filling past fill_end
inline constexpr std::uint32_t kFillWriter = 2;  ///< the writer's: raising fill_end, or for good

/// A writable mapping of one segment file, owned by a Journal's pool.
struct Segment {
  char* base = nullptr;
  std::size_t size = 0;
  std::uint64_t number = 0;
  std::uint32_t alignment = 8;
  std::uint32_t pool_index = 0;
  int fd = -1;
  std::atomic<bool> prefaulted{false};
  /// Its mapping has the large-folio advice (JournalConfig::large_folios).
  std::atomic<bool> large_folios{false};
  /// Service only: zero-filled with pwrite before hand-over (pages cached).
  bool zero_filled = false;
  /// Zero-filling ahead of the writer (prepare_ahead): the service writes
  /// zeros with pwrite() past fill_end, and maps them, only while it holds
  /// kFillBusy, then raises fill_end; the writer stores no data at or past
  /// fill_end (its fence). A writer that reaches it takes kFillWriter from
  /// kFillIdle, raises fill_end past its claim, zero-fills the piece after
  /// where it writes and gives kFillIdle back; it keeps kFillWriter once it
  /// rotates away. pwrite() of
  /// zeros is destructive, so the two never meet; it caches a page for a
  /// fifth of a write fault's CPU (0.8 against 4 us).
  std::atomic<std::uint32_t> fill_state{kFillWriter};
  std::atomic<std::size_t> fill_end{0};
  /// Set by the writer before handing the segment to the service.
  std::size_t final_end = 0;
  std::size_t final_slot_low = 0;
  /// Service only: when it began preparing this segment as a spare (0: not a spare).
  std::int64_t prepare_started_ns = 0;
  /// Write-behind: the buffer holding the segment (-1: none, the segment
  /// is its file's mapping), the O_DIRECT descriptor the service writes it
  /// with (-1: buffered pwrite), and how far it has (service).
  int buffer = -1;
  int direct_fd = -1;
  std::size_t written = 0;
  /// Bytes from its start whose buffer pages were stored to before (zeroed
  /// since): resident and mapped, no fill needed there.
  std::size_t reused = 0;
};

/// A read-only mapping of a segment (replay of finished segments, tools).
struct ReadView {
  const char* base = nullptr;
  std::size_t size = 0;
};

inline constexpr std::size_t kPathMax = 4096;

/// Writes "<dir>/<number:08>.seg" into `out` (capacity `cap`), without
/// allocating. False if it does not fit.
bool format_segment_path(char* out, std::size_t cap, std::string_view dir, std::uint64_t number) noexcept;
/// "00000012.seg" -> 12. False for any other name.
bool parse_segment_name(std::string_view name, std::uint64_t& number) noexcept;

/// Fills a header and its CRC.
void fill_header(SegmentHeader& header, std::uint64_t number, std::size_t size, std::uint32_t alignment,
                 std::int64_t created_ns, std::uint64_t session_identity) noexcept;
/// Checks a header read from `path` for file number `number` and actual file
/// size `file_size`. Empty string if valid, else the reason (names the path).
std::string check_header(const SegmentHeader& header, const std::string& path, std::uint64_t number,
                         std::size_t file_size);

/// Creates, fallocates and maps a segment file (O_EXCL: never overwrites)
/// and writes its header. Pages are not pre-faulted. With `large_folios` the
/// mapping gets advise_large_folios() before the header is stored (out's
/// large_folios says whether the kernel took it). Returns 0 or an errno; on
/// failure nothing is left behind.
int create_segment_file(const char* path, std::uint64_t number, std::size_t size, std::uint32_t alignment,
                        std::int64_t created_ns, std::uint64_t session_identity, bool large_folios,
                        Segment& out) noexcept;
/// Advice for a mapping the writer appends to: no read-ahead on faults.
/// With read-ahead, one fault on a fresh (fallocated, unwritten) file zero-
/// fills up to read_ahead_kb of page cache in one go (8 MiB on the lab host:
/// 5-25 ms in a single fault, measured in the pre-fault of the service
/// thread); without it each fault costs one page, so pre-fault chunks and
/// the writer's own faults stay bounded.
void advise_writer_access(char* base, std::size_t size) noexcept;
/// MADV_HUGEPAGE on a writable segment mapping (JournalConfig::large_folios):
/// a fault on a page not yet cached fills the page cache in one folio of up
/// to 2 MiB (the file's size at most), read-ahead or not, and the following
/// faults in it only map. On the lab host a fresh page cost 0.4-0.6 us that
/// way against 3.6 us one page per fault (MADV_POPULATE_WRITE over 64 KiB
/// pieces of fallocated 256 KiB-4 MiB files); one fault then fills up to
/// 2 MiB (about 250 us). Advice only: false if the kernel refused it.
bool advise_large_folios(char* base, std::size_t size) noexcept;
/// munmap + close.
void close_segment(Segment& segment) noexcept;

/// Maps a file read-only. Returns 0 or an errno.
int map_readonly(const char* path, ReadView& out) noexcept;
void unmap_readonly(ReadView& view) noexcept;

/// Dirties one word per page in [from, to) with a value-preserving locked
/// RMW, so each page is faulted writable on the calling thread. Safe while
/// another thread writes the same pages.
void touch_pages(char* base, std::size_t from, std::size_t to) noexcept;

/// Faults [from, to) in writable on the calling thread: MADV_POPULATE_WRITE
/// (one system call for the whole range), or touch_pages() where the kernel
/// lacks it. Safe while another thread writes the same pages.
void prefault_pages(char* base, std::size_t from, std::size_t to) noexcept;

inline std::size_t page_floor(std::size_t n) noexcept { return n & ~(kPageSize - 1); }
inline std::size_t page_ceil(std::size_t n) noexcept { return align_up(n, kPageSize); }

/// CRC of a record whose header (with size and gap) is at `record`.
inline std::uint32_t record_crc(const char* record, std::uint32_t size, std::uint32_t gap) noexcept {
  const char* payload = record + kRecordHeaderSize + gap;
  const std::size_t length = size - kRecordHeaderSize - gap;
  std::uint32_t reg = crc32c_update(0xFFFFFFFFu, payload, length);
  reg = crc32c_update(reg, record + 8, kRecordHeaderSize - 8);
  reg = crc32c_update(reg, &size, sizeof(size));
  return ~reg;
}

/// Reads and checks the record at `offset` of a mapping of `size` bytes:
/// framing within [offset, end_limit) and CRC. False if anything fails.
inline bool read_record(const char* base, std::size_t end_limit, std::size_t offset, RecordHeader& out) noexcept {
  if (offset < kSegmentHeaderSize || offset + kRecordHeaderSize > end_limit) return false;
  std::memcpy(&out, base + offset, kRecordHeaderSize);
  if (out.size < kRecordHeaderSize || out.gap > out.size - kRecordHeaderSize) return false;
  if (out.size > end_limit - offset) return false;
  return record_crc(base + offset, out.size, out.gap) == out.crc;
}

/// Offset stored in index slot `i` of a mapping of `size` bytes.
inline std::uint32_t slot_at(const char* base, std::size_t size, std::size_t i) noexcept {
  std::uint32_t v;
  std::memcpy(&v, base + size - kSlotSize * (i + 1), sizeof(v));
  return v;
}

/// Number of leading non-zero slots (binary search; slots fill in order).
std::uint32_t count_slots(const char* base, std::size_t size) noexcept;

/// mkdir -p (mode 0755). Returns 0 or errno (ENOTDIR: `path` is a file).
int make_directories(const std::string& path);

/// errno values that mean "the file system has no room".
inline bool is_space_errno(int err) noexcept { return err == ENOSPC || err == EFBIG || err == EDQUOT; }

}  // namespace hft::store::detail
