// Fixed-size blocks allocated once, whose pages become resident only when
// they are written (or, for ResidentArray, all at once, in one call).
//
// A std::vector<char> resized to its capacity writes zeros over all of it, so
// every page of it becomes resident memory at once; a ByteBuffer's pages
// become resident only as they are first written. A session's receive and
// resend buffers are sized for MaxMessageSize (64 KiB each by default) and
// most sessions never hold more than a few hundred bytes in them: zero-filled,
// those two alone are 131 KiB resident a session.
//
// Blocks of 16 KiB or more are mapped from the kernel (anonymous pages, zero
// and not resident until written) rather than taken from the heap: a heap
// block's allocator writes a header at the block's end, making a page
// resident for nothing, and a heap block that must be zero is cleared by a
// loop that makes all of it resident. Where a page fault is dear (about 12 us
// on the virtual machines the lab ran on, against 1.9 us for an mmap call),
// those faults were a third of a 1,000-session engine's start-up
// (docs/journal.md, "Many sessions", has what was measured).
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>

namespace hft::core {

namespace detail {

/// What a Block's bytes hold when it is made.
enum class BlockFill : unsigned char {
  kUnspecified,  ///< anything (never read before written)
  kZero,         ///< zero bytes, resident as first written
  kResident,     ///< zero bytes, every page resident from the start
};

/// `bytes` bytes from the heap or, from kMapThreshold up (and always for
/// kResident), mapped from the kernel. Aligned for any fundamental type.
class Block {
 public:
  static constexpr std::size_t kMapThreshold = 16 * 1024;

  Block() = default;
  /// Throws std::bad_alloc if the memory cannot be had (set-up only;
  /// aborts where exceptions are off, as operator new does). Under
  /// AddressSanitizer only kResident blocks are mapped: the others come from
  /// the heap, where ASan reports a read or write past their end.
  Block(std::size_t bytes, BlockFill fill);
  Block(Block&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)),
        bytes_(std::exchange(other.bytes_, 0)),
        mapped_(std::exchange(other.mapped_, false)) {}
  Block& operator=(Block&& other) noexcept {
    if (this != &other) {
      release();
      data_ = std::exchange(other.data_, nullptr);
      bytes_ = std::exchange(other.bytes_, 0);
      mapped_ = std::exchange(other.mapped_, false);
    }
    return *this;
  }
  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;
  ~Block() { release(); }

  [[nodiscard]] void* get() const noexcept { return data_; }
  [[nodiscard]] bool mapped() const noexcept { return mapped_; }

 private:
  void release() noexcept;
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
  bool mapped_ = false;
};

template <typename T, BlockFill Fill>
class Array {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);
  static_assert(alignof(T) <= alignof(std::max_align_t));

 public:
  Array() = default;
  explicit Array(std::size_t n) : block_(n * sizeof(T), Fill), size_(n) {}
  Array(Array&& other) noexcept : block_(std::move(other.block_)), size_(std::exchange(other.size_, 0)) {}
  Array& operator=(Array&& other) noexcept {
    block_ = std::move(other.block_);
    size_ = std::exchange(other.size_, 0);
    return *this;
  }

  [[nodiscard]] T* data() noexcept { return static_cast<T*>(block_.get()); }
  [[nodiscard]] const T* data() const noexcept { return static_cast<const T*>(block_.get()); }
  [[nodiscard]] T& operator[](std::size_t i) noexcept { return data()[i]; }
  [[nodiscard]] const T& operator[](std::size_t i) const noexcept { return data()[i]; }
  [[nodiscard]] T* begin() noexcept { return data(); }
  [[nodiscard]] T* end() noexcept { return data() + size_; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  /// True if the block was mapped from the kernel rather than the heap.
  [[nodiscard]] bool mapped() const noexcept { return block_.mapped(); }

 private:
  Block block_;
  std::size_t size_ = 0;
};

}  // namespace detail

/// `size` bytes, contents unspecified (never read before written).
class ByteBuffer {
 public:
  ByteBuffer() = default;
  explicit ByteBuffer(std::size_t size) : bytes_(size) {}

  [[nodiscard]] char* data() noexcept { return bytes_.data(); }
  [[nodiscard]] const char* data() const noexcept { return bytes_.data(); }
  [[nodiscard]] std::size_t size() const noexcept { return bytes_.size(); }

 private:
  detail::Array<char, detail::BlockFill::kUnspecified> bytes_;
};

/// An array of `n` T whose elements are not initialized (and so not made
/// resident) until written.
template <typename T>
using UninitArray = detail::Array<T, detail::BlockFill::kUnspecified>;

/// An array of `n` T whose bytes are all zero, for types whose all-zero bytes
/// are their empty state (a view's tag index). Pages become resident as they
/// are first written: a view's 16 KiB tag index cleared by a loop made 4
/// pages resident per view, 8 per session, at start-up.
template <typename T>
using ZeroedArray = detail::Array<T, detail::BlockFill::kZero>;

/// An array of `n` T whose bytes are all zero and whose pages are all
/// resident from construction: for tables the hot path writes at random
/// (hft-venue's ClOrdID set), where a page first touched by an order would
/// cost that order a page fault. Mapped with MAP_POPULATE, so the kernel
/// provides the pages in one call: a 24 MiB table took 6 ms this way and
/// 75 ms cleared by memset, one fault per page.
template <typename T>
using ResidentArray = detail::Array<T, detail::BlockFill::kResident>;

}  // namespace hft::core
