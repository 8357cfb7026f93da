// Write-behind buffers of a journal (JournalConfig::write_behind): the
// writer stores records into memory the journal keeps and reuses, and the
// service writes them to the segment files behind it with O_DIRECT.
// Internal to the store layer; not installed.
//
// Why: a segment file written through its mapping takes a new page-cache
// page for every 4 KiB journaled. Allocating, zeroing, mapping, writing back
// and dropping those pages cost about 3.5 us of CPU per page on the lab's VM
// (8 us for memory the host had taken back), 40% of the venue's CPU at
// 850,000 orders/s (perf, docs/shared_journal.md). The buffers' pages are
// allocated once and reused, and O_DIRECT writes take no page cache.
//
// Layout. A buffer is a file "<journal>/write-behind-<k>" (k < kBuffers),
// mapped once for the journal's life at capacity (segment_size) bytes. A
// segment that gets a buffer is the buffer's first `size` bytes: header,
// records, and the index slots at its end.
//
// Crash safety. The buffer is a file's shared mapping: a process killed
// with records not yet written out leaves them in the page cache (on disk
// after write-back), as the segment file's own mapping would. The next open
// writes them back (recover_write_behind) before anything reads the
// segments: only records that continue the segment file's own chain of
// valid records, and only from a buffer whose bytes up to there equal the
// file's (so a buffer older than the file, after a power loss, is never
// copied over it); and a sealed segment's index slots (the seal says how
// many), where the file's differ. A buffer's header is zeroed before the rest of it when
// it is released: a buffer with a valid header holds everything the
// segment's file may lack.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "hft/core/expected.hpp"
#include "hft/store/journal.hpp"

namespace hft::store::detail {

inline constexpr std::size_t kWriteBehindBuffers = 6;
/// "write-behind-<k>" in the journal's directory.
bool format_write_behind_path(char* out, std::size_t cap, const std::string& dir, std::size_t k) noexcept;

struct WriteBehindRecovery {
  std::vector<std::string> notes;  ///< one line per buffer found (written back, or why not)
  std::size_t bytes = 0;           ///< bytes written back into segment files
};

/// Writes back what buffers left by an earlier process hold beyond their
/// segment files' records, then removes the buffer files. Errors name the
/// file (one that cannot be read or written).
Expected<WriteBehindRecovery> recover_write_behind(const std::string& dir);

class WriteBehind {
 public:
  enum State : std::uint32_t { kFree = 0, kAcquiring = 1, kHeld = 2, kReleasing = 3, kZeroing = 4 };

  WriteBehind() = default;
  WriteBehind(const WriteBehind&) = delete;
  WriteBehind& operator=(const WriteBehind&) = delete;
  /// Unmaps the buffers and removes their files, except a held one's (its
  /// records could not all be written out: the next open writes them back).
  ~WriteBehind();

  /// Creates the (empty) buffer files of `dir` and maps each at `capacity`
  /// bytes (nothing touched: pages come as the writer first stores to them).
  Expected<void> open(const std::string& dir, std::size_t capacity);
  [[nodiscard]] bool is_open() const noexcept { return capacity_ != 0; }

  /// A free buffer for segment `number` of `size` bytes (its bytes are all
  /// zero), or -1. Either thread.
  int acquire(std::uint64_t number, std::size_t size) noexcept;
  [[nodiscard]] char* base(int b) const noexcept { return slots_[static_cast<std::size_t>(b)].base; }
  [[nodiscard]] int fd(int b) const noexcept { return slots_[static_cast<std::size_t>(b)].fd; }
  /// Bytes from its start buffer b has had stored to before (zeroed since):
  /// their pages are resident and mapped, nothing to prepare there.
  [[nodiscard]] std::size_t reusable(int b) const noexcept {
    return slots_[static_cast<std::size_t>(b)].touched.load(std::memory_order_acquire);
  }
  /// The buffer holding segment `number` (call with the segment pinned:
  /// see Journal::pin), or -1; `size` gets the segment's size.
  int holding(std::uint64_t number, std::size_t& size) const noexcept;
  /// Service: starts releasing buffer b, whose records are all written
  /// out. False (still held) while a reader has its segment pinned:
  /// `pinned(number)` decides, asked after the buffer is marked releasing
  /// (Dekker with holding(), called by a reader after it pinned).
  template <typename Pinned>
  bool begin_release(int b, Pinned&& pinned) noexcept {
    Slot& s = slots_[static_cast<std::size_t>(b)];
    s.state.store(kReleasing, std::memory_order_seq_cst);
    if (pinned(s.number.load(std::memory_order_relaxed))) {
      s.state.store(kHeld, std::memory_order_seq_cst);
      return false;
    }
    return true;
  }
  /// Zeroes buffer b's header at once (it no longer holds a segment), then
  /// its first `dirty` bytes and [tail_from, tail_to) (the index slots)
  /// piece by piece (zero_some); free once done.
  void begin_zeroing(int b, std::size_t dirty, std::size_t tail_from, std::size_t tail_to) noexcept;
  /// A buffer acquired and never stored to, free again.
  void give_back(int b) noexcept;
  /// Disk blocks for buffer b's first `size` bytes (posix_fallocate, once):
  /// a store to a page of a sparse shared mapping on a full disk is a
  /// SIGBUS, never an error. 0 or the errno.
  int reserve(int b, std::size_t size) noexcept;
  /// Service: zeroes at most `budget` bytes of releasing buffers; a buffer
  /// all zero is free again. Returns the bytes zeroed.
  std::size_t zero_some(std::size_t budget) noexcept;

 private:
  struct Slot {
    char* base = nullptr;
    int fd = -1;
    std::atomic<std::uint32_t> state{kFree};
    std::atomic<std::uint64_t> number{0};
    std::atomic<std::size_t> size{0};
    std::atomic<std::size_t> touched{0};  ///< see reusable()
    std::size_t allocated = 0;            ///< bytes with disk blocks (reserve)
    std::size_t zero_next = 0;  ///< service: zeroing from here ...
    std::size_t zero_end = 0;   ///< ... to here
    std::size_t tail_next = 0, tail_end = 0;  ///< then these (the slots)
  };
  std::array<Slot, kWriteBehindBuffers> slots_{};
  std::size_t capacity_ = 0;
  std::string dir_;
};

}  // namespace hft::store::detail
