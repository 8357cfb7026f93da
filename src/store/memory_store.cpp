#include <algorithm>
#include <cstdio>
#include <cstring>

#include "hft/store/message_store.hpp"

namespace hft::store {

StoreStatus MessageStore::check_room(std::size_t max_bytes) noexcept {
  return claim(max_bytes).empty() ? last_status() : StoreStatus::kOk;
}

std::size_t MessageStore::describe_failure(std::span<char> out) const noexcept {
  if (out.empty()) return 0;
  const std::string_view what = to_string(last_status());
  const int n = std::snprintf(out.data(), out.size(), "message store: %.*s", static_cast<int>(what.size()),
                              what.data());
  return n <= 0 ? 0 : std::min(static_cast<std::size_t>(n), out.size() - 1);
}

namespace {

std::size_t ring_bytes(const MemoryStoreConfig& c) noexcept {
  return c.bytes != 0 ? c.bytes : MemoryStore::bytes_for(c.capacity, c.max_message_size);
}

}  // namespace

MemoryStore::MemoryStore(MemoryStoreConfig config, std::int64_t created_ns)
    : config_(config),
      arena_size_(config.capacity == 0 ? 0 : ring_bytes(config) + config.max_message_size),
      // Not written until used: a quiet session's ring stays out of memory.
      arena_(std::make_unique_for_overwrite<char[]>(arena_size_)),
      slots_(config.capacity == 0 ? 1 : config.capacity),
      created_ns_(created_ns) {}

void MemoryStore::drop_oldest() noexcept {
  head_ = (head_ + 1) % slots_.size();
  --count_;
}

void MemoryStore::drop_overlapping(std::size_t from, std::size_t to) noexcept {
  // Messages lie in the ring in the order they came, the oldest first after
  // the write position: drop from the oldest while they overlap.
  while (count_ != 0) {
    const Slot& s = slots_[head_];
    if (s.offset >= to || s.offset + s.length <= from) break;
    drop_oldest();
  }
}

std::span<char> MemoryStore::claim(std::size_t max_bytes) noexcept {
  if (max_bytes > config_.max_message_size || config_.capacity == 0) {
    claimed_ = ~std::size_t{0};
    last_status_ = StoreStatus::kTooLarge;
    ++stats_.outbound.failed_claims;
    return {};
  }
  std::size_t at = write_;
  if (at + max_bytes > arena_size_) {
    // Wrap: the messages between here and the end are the oldest.
    drop_overlapping(at, arena_size_);
    at = 0;
  }
  drop_overlapping(at, at + max_bytes);
  claim_at_ = at;
  claimed_ = max_bytes;
  last_status_ = StoreStatus::kOk;
  return {arena_.get() + at, max_bytes};
}

StoreStatus MemoryStore::commit(std::uint64_t seq, std::int64_t timestamp_ns, std::size_t offset, std::size_t length,
                                std::uint8_t flags) noexcept {
  if (claimed_ == ~std::size_t{0}) return StoreStatus::kNoClaim;
  if (length == 0 || offset > claimed_ || length > claimed_ - offset) return StoreStatus::kInvalidArgument;
  claimed_ = ~std::size_t{0};
  if (seq >= next_sender_) next_sender_ = seq + 1;
  ++stats_.outbound.appends;
  stats_.outbound.bytes += length;
  if (seq <= last_seq_) {
    // Kept by a journal for audit; here only in-order messages are kept.
    ++stats_.outbound.unindexed;
    return StoreStatus::kOk;
  }
  if (count_ == slots_.size()) drop_oldest();
  const std::size_t at = claim_at_ + offset;
  slots_[(head_ + count_) % slots_.size()] =
      Slot{seq, timestamp_ns, at, static_cast<std::uint32_t>(length), flags};
  ++count_;
  write_ = (at + length + kAlign - 1) & ~(kAlign - 1);
  last_seq_ = seq;
  stats_.outbound.last_seq = seq;
  return StoreStatus::kOk;
}

StoreStatus MemoryStore::store_inbound(std::uint64_t, std::int64_t, std::span<const char> bytes) noexcept {
  ++stats_.inbound.appends;
  stats_.inbound.bytes += bytes.size();
  return StoreStatus::kOk;
}

StoreStatus MemoryStore::reset(std::int64_t now_ns) noexcept {
  head_ = 0;
  count_ = 0;
  write_ = 0;
  last_seq_ = 0;
  next_sender_ = 1;
  next_target_ = 1;
  ++epoch_;
  created_ns_ = now_ns;
  claimed_ = ~std::size_t{0};
  stats_.outbound.epoch = epoch_;
  stats_.outbound.last_seq = 0;
  return StoreStatus::kOk;
}

ReplayResult MemoryStore::replay(std::uint64_t begin, std::uint64_t end, std::size_t max_messages,
                                 ReplayVisitor& visitor) noexcept {
  ReplayResult result;
  result.next_seq = begin;
  if (begin > end) return result;
  // Slots are in ascending seq order: binary search the first >= begin.
  std::size_t lo = 0;
  std::size_t hi = count_;
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (slot_at(mid).seq < begin) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  for (std::size_t i = lo; i < count_; ++i) {
    const Slot& s = slot_at(i);
    if (s.seq > end) break;
    if (result.delivered == max_messages) {
      result.status = ReplayStatus::kLimit;
      result.next_seq = s.seq;
      return result;
    }
    StoredMessage m;
    m.seq = s.seq;
    m.timestamp_ns = s.timestamp_ns;
    m.flags = s.flags;
    m.bytes = {arena_.get() + s.offset, s.length};
    ++result.delivered;
    result.next_seq = s.seq + 1;
    if (!visitor.on_message(m)) {
      result.status = ReplayStatus::kStopped;
      return result;
    }
  }
  result.status = ReplayStatus::kComplete;
  result.next_seq = end == ~std::uint64_t{0} ? end : end + 1;
  return result;
}

}  // namespace hft::store
