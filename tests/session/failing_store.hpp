// A MessageStore that fails on demand the way a full journal does, over a
// MemoryStore: for tests of what the session and applications do when their
// store cannot record a message.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "hft/store/message_store.hpp"

namespace hft::session::test {

using store::StoreStatus;

/// A MemoryStore that fails on demand, the way a full journal does.
class FailingStore final : public store::MessageStore {
 public:
  explicit FailingStore(store::MemoryStore& inner) : inner_(inner) {}

  StoreStatus claim_fails = StoreStatus::kOk;    ///< claim() returns empty with this status ...
  int claims_left = 0;                           ///< ... after this many more succeed
  StoreStatus commit_fails = StoreStatus::kOk;   ///< commit() returns this, records nothing
  StoreStatus inbound_fails = StoreStatus::kOk;  ///< store_inbound() returns this
  bool reserve_left = true;                      ///< claim_reserve() still has room
  std::vector<std::uint64_t> inbound;            ///< seqs journaled inbound
  int reserve_claims = 0;
  int ready_left = -1;  ///< ready_for() says true this many more times (-1: always), then false
  int ready_asked = 0;  ///< ready_for() calls

  std::span<char> claim(std::size_t max_bytes) noexcept override {
    if (claim_fails != StoreStatus::kOk && claims_left-- <= 0) {
      status_ = claim_fails;
      return {};
    }
    status_ = StoreStatus::kOk;
    return inner_.claim(max_bytes);
  }
  std::span<char> claim_reserve(std::size_t max_bytes) noexcept override {
    ++reserve_claims;
    if (claim_fails == StoreStatus::kOk && commit_fails == StoreStatus::kOk) return inner_.claim(max_bytes);
    if (!reserve_left || max_bytes > store::kReserveMessageSize) return {};
    reserve_left = false;
    reserve_commit_ = true;
    return inner_.claim(max_bytes);
  }
  using MessageStore::commit;
  StoreStatus commit(std::uint64_t seq, std::int64_t ts, std::size_t offset, std::size_t length,
                     std::uint8_t flags) noexcept override {
    const bool reserve = reserve_commit_;
    reserve_commit_ = false;
    if (commit_fails != StoreStatus::kOk && !reserve) return status_ = commit_fails;
    return inner_.commit(seq, ts, offset, length, flags);
  }
  StoreStatus last_status() const noexcept override { return status_; }
  StoreStatus store_inbound(std::uint64_t seq, std::int64_t, std::span<const char>) noexcept override {
    if (inbound_fails != StoreStatus::kOk) return status_ = inbound_fails;
    inbound.push_back(seq);
    return StoreStatus::kOk;
  }
  StoreStatus check_room(std::size_t max_bytes) noexcept override {
    if (inbound_fails != StoreStatus::kOk) return status_ = inbound_fails;
    return claim(max_bytes).empty() ? status_ : StoreStatus::kOk;
  }
  bool ready_for(std::size_t, std::size_t) noexcept override {
    ++ready_asked;
    if (ready_left < 0) return true;
    if (ready_left == 0) return false;
    --ready_left;
    return true;
  }
  std::size_t describe_failure(std::span<char> out) const noexcept override {
    const int n = std::snprintf(out.data(), out.size(), "journal /test/store: %s (No space left on device)",
                                std::string(store::to_string(status_)).c_str());
    return n > 0 ? static_cast<std::size_t>(n) : 0;
  }
  std::uint64_t next_sender_seq() const noexcept override { return inner_.next_sender_seq(); }
  std::uint64_t next_target_seq() const noexcept override { return inner_.next_target_seq(); }
  void set_next_sender_seq(std::uint64_t seq) noexcept override { inner_.set_next_sender_seq(seq); }
  void set_next_target_seq(std::uint64_t seq) noexcept override { inner_.set_next_target_seq(seq); }
  StoreStatus reset(std::int64_t now_ns) noexcept override { return inner_.reset(now_ns); }
  std::uint64_t epoch() const noexcept override { return inner_.epoch(); }
  std::int64_t creation_time() const noexcept override { return inner_.creation_time(); }
  using MessageStore::replay;
  store::ReplayResult replay(std::uint64_t b, std::uint64_t e, std::size_t n,
                             store::ReplayVisitor& v) noexcept override {
    return inner_.replay(b, e, n, v);
  }
  StoreStatus flush() noexcept override { return StoreStatus::kOk; }
  store::StoreStats stats() const noexcept override { return inner_.stats(); }

  void space_returns() {
    claim_fails = commit_fails = inbound_fails = StoreStatus::kOk;
    claims_left = 0;
    reserve_left = true;
    ready_left = -1;
  }

 private:
  store::MemoryStore& inner_;
  StoreStatus status_ = StoreStatus::kOk;
  bool reserve_commit_ = false;
};

}  // namespace hft::session::test
