// Counts heap allocations made by the calling thread, for the tests that
// prove a hot path allocates nothing. Linking hft_test_support replaces the
// global operator new/delete with counting versions, which also keep a
// process-wide count of the heap bytes held.
#pragma once

#include <cstdint>

namespace hft::test {

/// Allocations (operator new / malloc-family via new) made by this thread so far.
[[nodiscard]] std::uint64_t thread_allocations() noexcept;

/// Bytes allocated through operator new and not yet deleted, by every thread
/// (malloc_usable_size of each block): what a process holds on its heap.
[[nodiscard]] std::int64_t live_heap_bytes() noexcept;

/// Counts the allocations made by this thread between construction and count().
class AllocationScope {
 public:
  AllocationScope() noexcept : start_(thread_allocations()) {}
  [[nodiscard]] std::uint64_t count() const noexcept { return thread_allocations() - start_; }

 private:
  std::uint64_t start_;
};

}  // namespace hft::test
