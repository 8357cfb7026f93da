// Fixed-capacity object pool: all objects constructed at start; acquire()
// returns nullptr when exhausted (counted), never grows. Single-threaded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace hft::core {

template <typename T>
class ObjectPool {
 public:
  explicit ObjectPool(std::size_t capacity) : objects_(capacity), free_(capacity) {
    for (std::size_t i = 0; i < capacity; ++i) free_[i] = &objects_[capacity - 1 - i];
    free_count_ = capacity;
  }

  /// An object from the pool, or nullptr if all are in use (exhausted() counts it).
  [[nodiscard]] T* acquire() noexcept {
    if (free_count_ == 0) {
      ++exhausted_;
      return nullptr;
    }
    return free_[--free_count_];
  }

  /// Returns an object acquired from this pool.
  void release(T* object) noexcept {
    if (object != nullptr && free_count_ < free_.size()) free_[free_count_++] = object;
  }

  [[nodiscard]] std::size_t capacity() const noexcept { return objects_.size(); }
  [[nodiscard]] std::size_t available() const noexcept { return free_count_; }
  [[nodiscard]] std::uint64_t exhausted() const noexcept { return exhausted_; }

 private:
  std::vector<T> objects_;
  std::vector<T*> free_;
  std::size_t free_count_ = 0;
  std::uint64_t exhausted_ = 0;
};

}  // namespace hft::core
