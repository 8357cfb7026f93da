// ByteBuffer: a fixed-size block of bytes allocated once and never written
// by its allocation. A std::vector<char> resized to its capacity writes
// zeros over all of it, so every page of it becomes resident memory at once;
// this one's pages become resident only as they are first written. A
// session's receive and resend buffers are sized for MaxMessageSize (64 KiB
// each by default) and most sessions never hold more than a few hundred
// bytes in them: zero-filled, those two alone are 131 KiB resident a
// session (docs/journal.md, "Many sessions", has what was measured).
#pragma once

#include <cstddef>
#include <memory>
#include <type_traits>

namespace hft::core {

class ByteBuffer {
 public:
  ByteBuffer() = default;
  /// `size` bytes, contents unspecified (never read before written).
  explicit ByteBuffer(std::size_t size) : data_(std::make_unique_for_overwrite<char[]>(size)), size_(size) {}

  [[nodiscard]] char* data() noexcept { return data_.get(); }
  [[nodiscard]] const char* data() const noexcept { return data_.get(); }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }

 private:
  std::unique_ptr<char[]> data_;
  std::size_t size_ = 0;
};

/// An array of `n` trivially default-constructible T whose elements are not
/// initialized (and so not made resident) until written.
template <typename T>
class UninitArray {
  static_assert(std::is_trivially_default_constructible_v<T>);

 public:
  UninitArray() = default;
  explicit UninitArray(std::size_t n) : data_(std::make_unique_for_overwrite<T[]>(n)), size_(n) {}

  [[nodiscard]] T& operator[](std::size_t i) noexcept { return data_[i]; }
  [[nodiscard]] const T& operator[](std::size_t i) const noexcept { return data_[i]; }
  [[nodiscard]] T* begin() noexcept { return data_.get(); }
  [[nodiscard]] T* end() noexcept { return data_.get() + size_; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }

 private:
  std::unique_ptr<T[]> data_;
  std::size_t size_ = 0;
};

}  // namespace hft::core
