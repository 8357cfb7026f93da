// Single-producer single-consumer ring of T with a fixed power-of-two
// capacity, allocated once at construction. try_push/try_pop never block,
// never allocate and report a full/empty ring as false.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>

namespace hft::core {

inline constexpr std::size_t kCacheLine = 64;

template <typename T>
class SpscRing {
  static_assert(std::is_nothrow_move_assignable_v<T> && std::is_default_constructible_v<T>,
                "SpscRing holds default-constructible, nothrow-movable values");

 public:
  /// capacity is rounded up to a power of two (at least 2).
  explicit SpscRing(std::size_t capacity)
      : mask_(round_up(capacity) - 1), slots_(std::make_unique<T[]>(mask_ + 1)) {}

  SpscRing(const SpscRing&) = delete;
  SpscRing& operator=(const SpscRing&) = delete;

  /// Producer: false if full.
  [[nodiscard]] bool try_push(T value) noexcept {
    const std::size_t head = head_.load(std::memory_order_relaxed);
    if (head - tail_cache_ > mask_) {
      tail_cache_ = tail_.load(std::memory_order_acquire);
      if (head - tail_cache_ > mask_) return false;
    }
    slots_[head & mask_] = std::move(value);
    head_.store(head + 1, std::memory_order_release);
    return true;
  }

  /// Consumer: false if empty.
  [[nodiscard]] bool try_pop(T& out) noexcept {
    const std::size_t tail = tail_.load(std::memory_order_relaxed);
    if (tail == head_cache_) {
      head_cache_ = head_.load(std::memory_order_acquire);
      if (tail == head_cache_) return false;
    }
    out = std::move(slots_[tail & mask_]);
    tail_.store(tail + 1, std::memory_order_release);
    return true;
  }

  [[nodiscard]] std::size_t capacity() const noexcept { return mask_ + 1; }
  /// Approximate when called concurrently.
  [[nodiscard]] std::size_t size() const noexcept {
    return head_.load(std::memory_order_acquire) - tail_.load(std::memory_order_acquire);
  }

 private:
  static std::size_t round_up(std::size_t n) noexcept {
    std::size_t c = 2;
    while (c < n) c <<= 1;
    return c;
  }

  const std::size_t mask_;
  std::unique_ptr<T[]> slots_;
  alignas(kCacheLine) std::atomic<std::size_t> head_{0};
  std::size_t tail_cache_ = 0;  // producer's view of tail
  alignas(kCacheLine) std::atomic<std::size_t> tail_{0};
  std::size_t head_cache_ = 0;  // consumer's view of head
  char pad_[kCacheLine - sizeof(std::size_t)]{};
};

}  // namespace hft::core
