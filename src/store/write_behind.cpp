#include "store/write_behind.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <utility>

#include "store/segment.hpp"

namespace hft::store::detail {
namespace {

constexpr std::string_view kPrefix = "write-behind-";

std::string errno_text(int err) {
  return std::strerror(err);
}

bool valid_header(const SegmentHeader& h) noexcept {
  return std::memcmp(h.magic, kSegmentMagic, sizeof(h.magic)) == 0 &&
         crc32c(&h, offsetof(SegmentHeader, header_crc)) == h.header_crc &&
         h.header_size == kSegmentHeaderSize && (h.record_alignment == 8 || h.record_alignment == 64) &&
         h.segment_size >= kMinSegmentSize && h.segment_size < kMaxSegmentSize &&
         h.segment_size % kPageSize == 0;
}

/// End of the chain of valid records from the header on, in [0, limit).
std::size_t chain_end(const char* base, std::size_t limit, std::size_t alignment, std::size_t must_pass,
                      bool& passed, std::size_t* last = nullptr) noexcept {
  std::size_t off = kSegmentHeaderSize;
  passed = must_pass == off;
  RecordHeader h{};
  while (read_record(base, limit, off, h)) {
    if (last != nullptr) *last = off;
    off = align_up(off + h.size, alignment);
    if (off == must_pass) passed = true;
    if (off >= limit) break;
  }
  return std::min(off, limit);
}

// What one buffer file holds beyond its segment file: `pending` gets the
// ranges (empty: nothing), `note` why not when it is not taken, and
// `bytes` the buffer's bytes (what the write-back writes).
Expected<void> analyze_one(const std::string& dir, const std::string& path, PendingWriteBehind& pending,
                           std::string& note, std::vector<char>& bytes) {
  pending.buffer = path;
  const int bfd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (bfd < 0) return Error{path + ": cannot open write-behind buffer: " + errno_text(errno)};
  struct stat st {};
  ::fstat(bfd, &st);
  const std::size_t bsize = static_cast<std::size_t>(st.st_size);
  SegmentHeader h{};
  const ssize_t got = bsize >= sizeof(h) ? ::pread(bfd, &h, sizeof(h), 0) : 0;
  if (got < 0) {
    const int err = errno;
    ::close(bfd);
    return Error{path + ": cannot read write-behind buffer: " + errno_text(err)};
  }
  // A buffer is released header first: without a valid header it holds
  // nothing its segment lacks.
  if (got != static_cast<ssize_t>(sizeof(h)) || !valid_header(h)) {
    ::close(bfd);
    return {};
  }
  char seg_path[kPathMax];
  if (!format_segment_path(seg_path, sizeof(seg_path), dir, h.segment_number)) {
    ::close(bfd);
    return Error{path + ": segment path too long"};
  }
  pending.segment = seg_path;
  const int sfd = ::open(seg_path, O_RDONLY | O_CLOEXEC);
  if (sfd < 0) {
    const int err = errno;
    ::close(bfd);
    if (err == ENOENT) {
      note = path + ": holds segment " + std::to_string(h.segment_number) +
             ", which is not in the journal: nothing written back";
      return {};
    }
    return Error{std::string(seg_path) + ": cannot open to compare with " + path + ": " + errno_text(err)};
  }
  const std::size_t size = h.segment_size;
  // The buffer's bytes, as far as its file goes (a whole segment).
  const std::size_t in_buffer = std::min(size, bsize);
  std::vector<char> file(size, 0);
  bytes.assign(in_buffer, 0);
  const ssize_t fgot = ::pread(sfd, file.data(), size, 0);
  const int ferr = errno;
  ::close(sfd);
  const ssize_t bgot = ::pread(bfd, bytes.data(), in_buffer, 0);
  const int berr = errno;
  ::close(bfd);
  if (fgot < 0) return Error{std::string(seg_path) + ": cannot read: " + errno_text(ferr)};
  if (bgot < 0) return Error{path + ": cannot read: " + errno_text(berr)};
  // The segment file's own records; the buffer must hold the same bytes up
  // to their end, and its records go on from there.
  bool passed = false;
  const std::size_t file_end = chain_end(file.data(), size, h.record_alignment, 0, passed);
  const std::size_t common = std::min(file_end, in_buffer);
  if (std::memcmp(file.data(), bytes.data(), common) != 0) {
    note = path + ": differs from " + seg_path + " within the segment's records (up to byte " +
           std::to_string(common) + "): an older buffer, not written back";
    return {};
  }
  std::size_t last = 0;
  const std::size_t end = chain_end(bytes.data(), in_buffer, h.record_alignment, file_end, passed, &last);
  if (end > file_end && !passed) {
    note = path + ": its records do not continue those of " + seg_path + " at byte " +
           std::to_string(file_end) + ": not written back";
    return {};
  }
  pending.from = file_end;
  pending.to = std::max(end, file_end);
  // A sealed segment's index slots, where the file's differ: the seal says
  // how many (an unsealed tail's are rebuilt by the open from its records).
  RecordHeader r{};
  if (last != 0 && in_buffer == size && read_record(bytes.data(), size, last, r) &&
      (r.flags & kRecordSegmentSeal) != 0 &&
      r.size >= kRecordHeaderSize + r.gap + sizeof(SegmentSealPayload)) {
    SegmentSealPayload seal{};
    std::memcpy(&seal, bytes.data() + last + kRecordHeaderSize + r.gap, sizeof(seal));
    const std::size_t slots = std::size_t{seal.indexed_count} * kSlotSize;
    if (slots != 0 && slots <= size - end &&
        std::memcmp(bytes.data() + size - slots, file.data() + size - slots, slots) != 0) {
      pending.slots_from = size - slots;
      pending.slots_to = size;
    }
  }
  return {};
}

// Another process has the buffer open (a running journal holds a shared
// lock on each of its buffers): not a leftover.
bool in_use(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool busy = ::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);
  return busy;
}

std::vector<std::string> buffer_names(const std::string& dir) {
  std::vector<std::string> found;
  if (DIR* d = ::opendir(dir.c_str()); d != nullptr) {
    while (dirent* e = ::readdir(d)) {
      const std::string_view name = e->d_name;
      if (name.size() > kPrefix.size() && name.substr(0, kPrefix.size()) == kPrefix) found.emplace_back(name);
    }
    ::closedir(d);
  }
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace

bool format_write_behind_path(char* out, std::size_t cap, const std::string& dir, std::size_t k) noexcept {
  const int n =
      std::snprintf(out, cap, "%s/%.*s%zu", dir.c_str(), static_cast<int>(kPrefix.size()), kPrefix.data(), k);
  return n > 0 && static_cast<std::size_t>(n) < cap;
}

Expected<WriteBehindRecovery> recover_write_behind(const std::string& dir) {
  WriteBehindRecovery out;
  std::vector<char> bytes;
  for (const std::string& name : buffer_names(dir)) {
    const std::string path = dir + "/" + name;
    PendingWriteBehind p;
    std::string note;
    if (auto r = analyze_one(dir, path, p, note, bytes); !r) return r.error();
    if (!note.empty()) out.notes.push_back(std::move(note));
    if (p.to > p.from || p.slots_to > p.slots_from) {
      const int sfd = ::open(p.segment.c_str(), O_WRONLY | O_CLOEXEC);
      if (sfd < 0) return Error{p.segment + ": cannot open to write back " + path + ": " + errno_text(errno)};
      for (const auto& [from, to] : {std::pair{p.from, p.to}, std::pair{p.slots_from, p.slots_to}}) {
        std::size_t at = from;
        while (at < to) {
          const ssize_t w = ::pwrite(sfd, bytes.data() + at, to - at, static_cast<off_t>(at));
          if (w < 0 && errno == EINTR) continue;
          if (w <= 0) {
            const int err = w < 0 ? errno : EIO;
            ::close(sfd);
            return Error{p.segment + ": cannot write back records from " + path + ": " + errno_text(err)};
          }
          at += static_cast<std::size_t>(w);
        }
      }
      const int rc = ::fdatasync(sfd);
      const int err = errno;
      ::close(sfd);
      if (rc != 0) return Error{p.segment + ": fdatasync after write-back failed: " + errno_text(err)};
      out.bytes += p.to - p.from + p.slots_to - p.slots_from;
      out.notes.push_back(
          p.segment + ": bytes " + std::to_string(p.from) + ".." + std::to_string(p.to) +
          (p.slots_to > p.slots_from ? " and its index slots (bytes " + std::to_string(p.slots_from) + ".." +
                                           std::to_string(p.slots_to) + ")"
                                     : std::string()) +
          " written back from " + path + " (what the writer had stored but not yet written out)");
    }
    if (::unlink(path.c_str()) != 0 && errno != ENOENT)
      return Error{path + ": cannot remove write-behind buffer: " + errno_text(errno)};
  }
  return out;
}

}  // namespace hft::store::detail

namespace hft::store {

Expected<std::vector<PendingWriteBehind>> pending_write_behind(const std::string& dir) {
  std::vector<PendingWriteBehind> out;
  std::vector<char> bytes;
  for (const std::string& name : detail::buffer_names(dir)) {
    const std::string path = dir + "/" + name;
    if (detail::in_use(path)) continue;
    PendingWriteBehind p;
    std::string note;
    if (auto r = detail::analyze_one(dir, path, p, note, bytes); !r) return r.error();
    if (p.to > p.from || p.slots_to > p.slots_from) out.push_back(std::move(p));
  }
  return out;
}

}  // namespace hft::store

namespace hft::store::detail {

WriteBehind::~WriteBehind() {
  char path[kPathMax];
  for (std::size_t k = 0; k < slots_.size(); ++k) {
    Slot& s = slots_[k];
    if (s.base != nullptr) ::munmap(s.base, capacity_);
    if (s.fd >= 0) ::close(s.fd);
    // A buffer still held keeps its file: the next open writes it back.
    // (One being zeroed has no header: nothing to write back.)
    if (s.fd >= 0 && s.state.load(std::memory_order_acquire) != kHeld &&
        format_write_behind_path(path, sizeof(path), dir_, k))
      ::unlink(path);
  }
}

Expected<void> WriteBehind::open(const std::string& dir, std::size_t capacity) {
  dir_ = dir;
  char path[kPathMax];
  for (std::size_t k = 0; k < slots_.size(); ++k) {
    Slot& s = slots_[k];
    if (!format_write_behind_path(path, sizeof(path), dir, k)) return Error{dir + ": path too long"};
    s.fd = ::open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (s.fd < 0)
      return Error{std::string(path) + ": cannot create write-behind buffer: " + errno_text(errno)};
    // Held while the journal is open: a reader of the directory (the
    // audit) tells a running journal's buffers from a killed one's.
    (void)::flock(s.fd, LOCK_SH);
    if (::ftruncate(s.fd, static_cast<off_t>(capacity)) != 0)
      return Error{std::string(path) + ": cannot size write-behind buffer: " + errno_text(errno)};
    void* p = ::mmap(nullptr, capacity, PROT_READ | PROT_WRITE, MAP_SHARED, s.fd, 0);
    if (p == MAP_FAILED)
      return Error{std::string(path) + ": cannot map write-behind buffer: " + errno_text(errno)};
    s.base = static_cast<char*>(p);
  }
  capacity_ = capacity;
  return {};
}

int WriteBehind::acquire(std::uint64_t number, std::size_t size) noexcept {
  if (capacity_ == 0 || size > capacity_) return -1;
  for (std::size_t k = 0; k < slots_.size(); ++k) {
    Slot& s = slots_[k];
    std::uint32_t free = kFree;
    if (!s.state.compare_exchange_strong(free, kAcquiring, std::memory_order_acq_rel)) continue;
    s.number.store(number, std::memory_order_relaxed);
    s.size.store(size, std::memory_order_relaxed);
    s.state.store(kHeld, std::memory_order_seq_cst);
    return static_cast<int>(k);
  }
  return -1;
}

int WriteBehind::holding(std::uint64_t number, std::size_t& size) const noexcept {
  for (std::size_t k = 0; k < slots_.size(); ++k) {
    const Slot& s = slots_[k];
    if (s.state.load(std::memory_order_seq_cst) != kHeld) continue;
    if (s.number.load(std::memory_order_relaxed) != number) continue;
    size = s.size.load(std::memory_order_relaxed);
    return static_cast<int>(k);
  }
  return -1;
}

int WriteBehind::reserve(int b, std::size_t size) noexcept {
  Slot& s = slots_[static_cast<std::size_t>(b)];
  if (size <= s.allocated) return 0;
  const int err = ::posix_fallocate(s.fd, 0, static_cast<off_t>(size));
  if (err == 0) s.allocated = size;
  return err;
}

void WriteBehind::give_back(int b) noexcept {
  slots_[static_cast<std::size_t>(b)].state.store(kFree, std::memory_order_release);
}

namespace {

// Zeroes [p, p + n) with non-temporal stores where the range allows: the
// service zeroes a released buffer (up to a segment, 64 MiB) 1 MiB per duty
// cycle on the engine's core, and stores through the cache would evict the
// engine thread's working set from that core's L2 (1 MiB on the lab's host)
// at every cycle, for lines the writer reaches seconds later, long after
// they left the cache anyway. Ends with a store fence, so the zeros are
// ordered before zero_some's release store that marks the buffer free.
void zero_streaming(char* p, std::size_t n) noexcept {
#if defined(__SSE2__)
  const auto start = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t aligned = (start + 63) & ~std::uintptr_t{63};
  const std::size_t head = std::min<std::size_t>(aligned - start, n);
  std::memset(p, 0, head);
  std::size_t at = head;
  const __m128i zero = _mm_setzero_si128();
  for (; at + 64 <= n; at += 64) {
    auto* line = reinterpret_cast<__m128i*>(p + at);
    _mm_stream_si128(line, zero);
    _mm_stream_si128(line + 1, zero);
    _mm_stream_si128(line + 2, zero);
    _mm_stream_si128(line + 3, zero);
  }
  std::memset(p + at, 0, n - at);
  _mm_sfence();
#else
  std::memset(p, 0, n);
#endif
}

}  // namespace

void WriteBehind::begin_zeroing(int b, std::size_t dirty, std::size_t tail_from,
                                std::size_t tail_to) noexcept {
  Slot& s = slots_[static_cast<std::size_t>(b)];
  // The header first: a buffer without one holds nothing to write back.
  std::memset(s.base, 0, kPageSize);
  s.zero_next = kPageSize;
  s.zero_end = std::max(std::min(page_ceil(dirty), capacity_), kPageSize);
  s.tail_next = std::max(page_floor(tail_from), s.zero_end);
  s.tail_end = std::max(std::min(tail_to, capacity_), s.tail_next);
  s.state.store(kZeroing, std::memory_order_release);
}

std::size_t WriteBehind::zero_some(std::size_t budget) noexcept {
  std::size_t done = 0;
  for (Slot& s : slots_) {
    if (s.state.load(std::memory_order_acquire) != kZeroing) continue;
    const std::size_t n = std::min(budget - done, s.zero_end - s.zero_next);
    zero_streaming(s.base + s.zero_next, n);
    s.zero_next += n;
    done += n;
    const std::size_t m = std::min(budget - done, s.tail_end - s.tail_next);
    zero_streaming(s.base + s.tail_next, m);
    s.tail_next += m;
    done += m;
    if (s.zero_next == s.zero_end && s.tail_next == s.tail_end) {
      if (s.zero_end > s.touched.load(std::memory_order_relaxed))
        s.touched.store(s.zero_end, std::memory_order_release);
      s.state.store(kFree, std::memory_order_release);
    }
    if (done == budget) break;
  }
  return done;
}

}  // namespace hft::store::detail
