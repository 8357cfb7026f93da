#include "store/segment.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

namespace hft::store::detail {

bool format_segment_path(char* out, std::size_t cap, std::string_view dir, std::uint64_t number) noexcept {
  const int n = std::snprintf(out, cap, "%.*s/%08llu.seg", static_cast<int>(dir.size()), dir.data(),
                              static_cast<unsigned long long>(number));
  return n > 0 && static_cast<std::size_t>(n) < cap;
}

bool parse_segment_name(std::string_view name, std::uint64_t& number) noexcept {
  constexpr std::string_view kSuffix = ".seg";
  if (name.size() <= kSuffix.size() || name.substr(name.size() - kSuffix.size()) != kSuffix) return false;
  const std::string_view digits = name.substr(0, name.size() - kSuffix.size());
  if (digits.size() < 8 || digits.size() > 19) return false;
  std::uint64_t v = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  number = v;
  return true;
}

void fill_header(SegmentHeader& header, std::uint64_t number, std::size_t size, std::uint32_t alignment,
                 std::int64_t created_ns, std::uint64_t session_identity) noexcept {
  std::memset(&header, 0, sizeof(header));
  std::memcpy(header.magic, kSegmentMagic, sizeof(header.magic));
  header.format_version = kFormatVersion;
  header.header_size = static_cast<std::uint16_t>(kSegmentHeaderSize);
  header.record_alignment = alignment;
  header.segment_number = number;
  header.created_ns = created_ns;
  header.segment_size = size;
  header.slot_size = static_cast<std::uint32_t>(kSlotSize);
  header.session_identity = session_identity;
  header.header_crc = crc32c(&header, offsetof(SegmentHeader, header_crc));
}

std::string check_header(const SegmentHeader& h, const std::string& path, std::uint64_t number,
                         std::size_t file_size) {
  if (std::memcmp(h.magic, kSegmentMagic, sizeof(h.magic)) != 0)
    return path + ": bad magic (not a libhft journal segment); refusing to open";
  const std::uint32_t crc = crc32c(&h, offsetof(SegmentHeader, header_crc));
  if (h.format_version > kFormatVersion)
    return path + ": format version " + std::to_string(h.format_version) +
           " is newer than this build supports (" + std::to_string(kFormatVersion) + "); refusing to open";
  if (crc != h.header_crc)
    return path + ": header CRC mismatch (stored " + std::to_string(h.header_crc) + ", computed " +
           std::to_string(crc) + "); refusing to open";
  if (h.format_version == 0 || h.header_size != kSegmentHeaderSize || h.slot_size != kSlotSize ||
      (h.record_alignment != 8 && h.record_alignment != 64) || h.segment_size % kPageSize != 0 ||
      h.segment_size < kMinSegmentSize || h.segment_size >= kMaxSegmentSize)
    return path + ": inconsistent header (version/size/alignment fields); refusing to open";
  if (h.segment_number != number)
    return path + ": header says segment " + std::to_string(h.segment_number) + " but the file is named " +
           std::to_string(number) + "; refusing to open";
  if (file_size > h.segment_size)
    return path + ": file is " + std::to_string(file_size) + " bytes, larger than the " +
           std::to_string(h.segment_size) + " its header declares; refusing to open";
  return {};
}

int create_segment_file(const char* path, std::uint64_t number, std::size_t size, std::uint32_t alignment,
                        std::int64_t created_ns, std::uint64_t session_identity, bool large_folios,
                        Segment& out) noexcept {
  const int fd = ::open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return errno;
  // fallocate (not a sparse ftruncate): a full disk is an error here, never
  // a SIGBUS when the writer first touches a page.
  int err = ::posix_fallocate(fd, 0, static_cast<off_t>(size));
  void* p = MAP_FAILED;
  if (err == 0) {
    p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) err = errno;
  }
  if (err != 0) {
    ::close(fd);
    ::unlink(path);
    return err;
  }
  advise_writer_access(static_cast<char*>(p), size);
  // Before the header's store: a page cached before the advice makes the
  // kernel fill the rest of its 2 MiB range one page per folio.
  if (large_folios) large_folios = advise_large_folios(static_cast<char*>(p), size);
  SegmentHeader header;
  fill_header(header, number, size, alignment, created_ns, session_identity);
  std::memcpy(p, &header, sizeof(header));
  out.base = static_cast<char*>(p);
  out.size = size;
  out.number = number;
  out.alignment = alignment;
  out.fd = fd;
  out.prefaulted.store(false, std::memory_order_relaxed);
  out.large_folios.store(large_folios, std::memory_order_relaxed);
  out.zero_filled = false;
  out.fill_state.store(kFillWriter, std::memory_order_relaxed);
  out.fill_end.store(size, std::memory_order_relaxed);
  out.final_end = 0;
  out.final_slot_low = size;
  out.prepare_started_ns = 0;
  return 0;
}

void advise_writer_access(char* base, std::size_t size) noexcept {
  // Advice only: a kernel that refuses it still works, just less evenly.
  (void)::madvise(base, size, MADV_RANDOM);
}

bool advise_large_folios(char* base, std::size_t size) noexcept {
  return ::madvise(base, size, MADV_HUGEPAGE) == 0;
}

void close_segment(Segment& segment) noexcept {
  if (segment.base != nullptr) ::munmap(segment.base, segment.size);
  if (segment.fd >= 0) ::close(segment.fd);
  segment.base = nullptr;
  segment.fd = -1;
  segment.size = 0;
}

int map_readonly(const char* path, ReadView& out) noexcept {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return err;
  }
  if (st.st_size < static_cast<off_t>(kSegmentHeaderSize)) {
    ::close(fd);
    return EINVAL;
  }
  void* p = ::mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_SHARED, fd, 0);
  const int err = p == MAP_FAILED ? errno : 0;
  ::close(fd);  // the mapping keeps the file alive, even if it is unlinked
  if (err != 0) return err;
  out.base = static_cast<const char*>(p);
  out.size = static_cast<std::size_t>(st.st_size);
  return 0;
}

void unmap_readonly(ReadView& view) noexcept {
  if (view.base != nullptr) ::munmap(const_cast<char*>(view.base), view.size);
  view.base = nullptr;
  view.size = 0;
}

void touch_pages(char* base, std::size_t from, std::size_t to) noexcept {
  for (std::size_t off = page_floor(from); off < to; off += kPageSize) {
    auto* word = reinterpret_cast<std::uint64_t*>(base + off);
#if defined(__x86_64__)
    // A locked OR of 0 writes the value it read, atomically with respect to
    // any store of the writer thread, and is a write access for the MMU.
    // Written in asm because compilers may turn an idempotent atomic RMW into
    // a plain load, which would only fault the page in read-only.
    asm volatile("lock; orq $0, %0" : "+m"(*word) : : "memory");
#else
    __atomic_fetch_or(word, 0, __ATOMIC_RELAXED);
#endif
  }
}

void prefault_pages(char* base, std::size_t from, std::size_t to) noexcept {
  from = page_floor(from);
  if (to <= from) return;
#if defined(MADV_POPULATE_WRITE)
  if (::madvise(base + from, to - from, MADV_POPULATE_WRITE) == 0) return;
#endif
  touch_pages(base, from, to);
}

std::uint32_t count_slots(const char* base, std::size_t size) noexcept {
  // Slot i is in use when it points, in increasing order, at a data record
  // that checks and ends before the slot itself. Past the last slot come
  // zeros (at least one slot's worth) and then record bytes, so the
  // predicate is true on [0, count) and false right after: binary search,
  // then confirm with the seal record, falling back to a linear walk.
  const auto used = [&](std::size_t i) noexcept {
    if (kSlotSize * (i + 1) > size - kSegmentHeaderSize) return false;
    const std::size_t pos = size - kSlotSize * (i + 1);
    const std::uint32_t v = slot_at(base, size, i);
    if (v < kSegmentHeaderSize || v + kRecordHeaderSize > pos) return false;
    if (i > 0 && slot_at(base, size, i - 1) >= v) return false;
    RecordHeader h;
    return read_record(base, pos, v, h) && (h.flags & kRecordControl) == 0;
  };
  std::size_t lo = 0;
  std::size_t hi = (size - kSegmentHeaderSize) / (40 + kSlotSize);
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (used(mid)) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  auto count = static_cast<std::uint32_t>(lo);
  // Confirm with the seal: walk from the last indexed record to it.
  SegmentHeader sh;
  std::memcpy(&sh, base, sizeof(sh));
  const std::size_t align = sh.record_alignment == 64 ? 64 : 8;
  // The seal has no slot of its own: it may end where the slots begin.
  const std::size_t limit = size - kSlotSize * count;
  std::size_t off = count == 0 ? kSegmentHeaderSize : slot_at(base, size, count - 1);
  RecordHeader h;
  while (read_record(base, limit, off, h)) {
    if ((h.flags & kRecordSegmentSeal) != 0) {
      SegmentSealPayload seal;
      if (h.size - kRecordHeaderSize - h.gap == sizeof(seal)) {
        std::memcpy(&seal, base + off + kRecordHeaderSize + h.gap, sizeof(seal));
        if (seal.indexed_count == count) return count;
      }
      break;
    }
    off = align_up(off + h.size, align);
  }
  // Unsealed or inconsistent (damage): count the slots one by one.
  std::uint32_t linear = 0;
  while (used(linear)) ++linear;
  return linear;
}

int make_directories(const std::string& path) {
  if (path.empty()) return EINVAL;
  // The parent usually exists (a session's directory under FileStorePath):
  // one mkdir, not one per component of the path.
  if (::mkdir(path.c_str(), 0755) == 0) return 0;
  const int first = errno;
  if (first != ENOENT && first != EEXIST) return first;
  std::string partial;
  std::size_t pos = first == EEXIST ? std::string::npos : 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    partial = path.substr(0, pos);
    if (partial.empty()) continue;
    if (::mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST) return errno;
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return errno;
  return S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
}

}  // namespace hft::store::detail
