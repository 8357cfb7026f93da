#include "hft/engine/send_ring.hpp"

#include <algorithm>

namespace hft::engine {

namespace {

std::size_t round_up(std::size_t n) noexcept {
  std::size_t p = 2;
  while (p < n) p <<= 1;
  return p;
}

}  // namespace

SendRing::SendRing(const SendRingOptions& options)
    : options_(options),
      mask_(round_up(options.capacity) - 1),
      // The body, the raw prefix "8=X^9=<digits>^" and the "10=nnn^" trailer,
      // rounded to a cache line so slots never share one.
      slot_bytes_((options.max_body + codec::MessageWriter::kPrefixReserve + 8 + 63) & ~std::size_t{63}),
      entries_(std::make_unique<Entry[]>(mask_ + 1)),
      arena_(std::make_unique_for_overwrite<char[]>((mask_ + 1) * slot_bytes_)) {
  // Faulted in now, not by the first messages.
  std::fill_n(arena_.get(), (mask_ + 1) * slot_bytes_, '\0');
}

const SendRing::Entry* SendRing::peek() noexcept {
  const std::uint64_t tail = tail_.load(std::memory_order_relaxed);
  if (tail == head_cache_) {
    head_cache_ = head_.load(std::memory_order_acquire);
    if (tail == head_cache_) return nullptr;
  }
  return &entries_[tail & mask_];
}

SendRingStats SendRing::stats() const noexcept {
  SendRingStats s;
  s.queued = queued_.load(std::memory_order_relaxed);
  s.full = full_.load(std::memory_order_relaxed);
  s.too_large = too_large_.load(std::memory_order_relaxed);
  s.sent = sent_.load(std::memory_order_relaxed);
  s.failed = failed_.load(std::memory_order_relaxed);
  s.unknown_session = unknown_.load(std::memory_order_relaxed);
  s.store_waits = store_waits_.load(std::memory_order_relaxed);
  return s;
}

}  // namespace hft::engine
