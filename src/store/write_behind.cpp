#include "store/write_behind.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string_view>

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
                      bool& passed) noexcept {
  std::size_t off = kSegmentHeaderSize;
  passed = must_pass == off;
  RecordHeader h{};
  while (read_record(base, limit, off, h)) {
    off = align_up(off + h.size, alignment);
    if (off == must_pass) passed = true;
    if (off >= limit) break;
  }
  return std::min(off, limit);
}

// What one buffer file holds beyond its segment file, written back.
Expected<void> recover_one(const std::string& dir, const std::string& path, WriteBehindRecovery& out) {
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
  const int sfd = ::open(seg_path, O_RDWR | O_CLOEXEC);
  if (sfd < 0) {
    const int err = errno;
    ::close(bfd);
    if (err == ENOENT) {
      out.notes.push_back(path + ": holds segment " + std::to_string(h.segment_number) +
                          ", which is not in the journal: nothing written back");
      return {};
    }
    return Error{std::string(seg_path) + ": cannot open to write back " + path + ": " + errno_text(err)};
  }
  const std::size_t size = h.segment_size;
  const std::size_t split = std::min(write_behind_split(size), bsize);
  std::vector<char> file(size, 0);
  std::vector<char> buffer(split, 0);
  const ssize_t fgot = ::pread(sfd, file.data(), size, 0);
  const ssize_t bgot = ::pread(bfd, buffer.data(), split, 0);
  ::close(bfd);
  if (fgot < 0 || bgot < 0) {
    const int err = errno;
    ::close(sfd);
    return Error{std::string(fgot < 0 ? seg_path : path) + ": cannot read: " + errno_text(err)};
  }
  // The segment file's own records, then the buffer's over the same bytes.
  bool passed = false;
  const std::size_t file_end = chain_end(file.data(), size, h.record_alignment, 0, passed);
  const std::size_t common = std::min(file_end, split);
  if (std::memcmp(file.data(), buffer.data(), common) != 0) {
    ::close(sfd);
    out.notes.push_back(path + ": differs from " + seg_path + " within the segment's records (up to byte " +
                        std::to_string(common) + "): an older buffer, not written back");
    return {};
  }
  std::memcpy(file.data() + common, buffer.data() + common, split - common);
  const std::size_t end = chain_end(file.data(), size, h.record_alignment, file_end, passed);
  if (!passed || end <= file_end) {
    ::close(sfd);
    if (end > file_end)
      out.notes.push_back(path + ": its records do not continue those of " + seg_path + " at byte " +
                          std::to_string(file_end) + ": not written back");
    return {};
  }
  std::size_t at = file_end;
  while (at < end) {
    const ssize_t w = ::pwrite(sfd, file.data() + at, end - at, static_cast<off_t>(at));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      const int err = w < 0 ? errno : EIO;
      ::close(sfd);
      return Error{std::string(seg_path) + ": cannot write back records from " + path + ": " +
                   errno_text(err)};
    }
    at += static_cast<std::size_t>(w);
  }
  const int rc = ::fdatasync(sfd);
  const int err = errno;
  ::close(sfd);
  if (rc != 0)
    return Error{std::string(seg_path) + ": fdatasync after write-back failed: " + errno_text(err)};
  out.bytes += end - file_end;
  out.notes.push_back(std::string(seg_path) + ": bytes " + std::to_string(file_end) + ".." +
                      std::to_string(end) + " written back from " + path +
                      " (records the writer had stored but not yet written out)");
  return {};
}

}  // namespace

bool format_write_behind_path(char* out, std::size_t cap, const std::string& dir, std::size_t k) noexcept {
  const int n =
      std::snprintf(out, cap, "%s/%.*s%zu", dir.c_str(), static_cast<int>(kPrefix.size()), kPrefix.data(), k);
  return n > 0 && static_cast<std::size_t>(n) < cap;
}

Expected<WriteBehindRecovery> recover_write_behind(const std::string& dir) {
  WriteBehindRecovery out;
  std::vector<std::string> found;
  if (DIR* d = ::opendir(dir.c_str()); d != nullptr) {
    while (dirent* e = ::readdir(d)) {
      const std::string_view name = e->d_name;
      if (name.size() > kPrefix.size() && name.substr(0, kPrefix.size()) == kPrefix) found.emplace_back(name);
    }
    ::closedir(d);
  }
  std::sort(found.begin(), found.end());
  for (const std::string& name : found) {
    const std::string path = dir + "/" + name;
    if (auto r = recover_one(dir, path, out); !r) return r.error();
    if (::unlink(path.c_str()) != 0 && errno != ENOENT)
      return Error{path + ": cannot remove write-behind buffer: " + errno_text(errno)};
  }
  return out;
}

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

void WriteBehind::give_back(int b) noexcept {
  slots_[static_cast<std::size_t>(b)].state.store(kFree, std::memory_order_release);
}

void WriteBehind::begin_zeroing(int b, std::size_t dirty) noexcept {
  Slot& s = slots_[static_cast<std::size_t>(b)];
  // The header first: a buffer without one holds nothing to write back.
  std::memset(s.base, 0, kPageSize);
  s.zero_next = kPageSize;
  s.zero_end = std::max(std::min(page_ceil(dirty), capacity_), kPageSize);
  s.state.store(kZeroing, std::memory_order_release);
}

std::size_t WriteBehind::zero_some(std::size_t budget) noexcept {
  std::size_t done = 0;
  for (Slot& s : slots_) {
    if (s.state.load(std::memory_order_acquire) != kZeroing) continue;
    const std::size_t n = std::min(budget - done, s.zero_end - s.zero_next);
    std::memset(s.base + s.zero_next, 0, n);
    s.zero_next += n;
    done += n;
    if (s.zero_next == s.zero_end) {
      if (s.zero_end > s.touched.load(std::memory_order_relaxed))
        s.touched.store(s.zero_end, std::memory_order_release);
      s.state.store(kFree, std::memory_order_release);
    }
    if (done == budget) break;
  }
  return done;
}

void WriteBehind::zero_all() noexcept {
  while (zero_some(std::size_t{64} << 20) != 0) {
  }
}

}  // namespace hft::store::detail
