// Sending from threads that are not the engine's: a SendRing is a bounded,
// preallocated single-producer ring from one application thread to the
// engine thread. The producer encodes the message body (the same writer,
// typed writers included, that Session::send_app hands out) into the next
// slot; the engine thread, in poll(), takes it, writes the header (MsgSeqNum,
// SendingTime), journals and sends it through the session as send_app would.
//
//   SendRing& ring = engine.add_send_ring({.capacity = 1024});   // before run()
//   const SessionHandle venue = *engine.handle_of(id);
//   // on the strategy thread:
//   QueueStatus q = ring.send(venue, "D", [&](codec::MessageWriter& w) {
//     fix44::NewOrderSingleWriter order(w, "ORD1", fix44::Side::kBuy, now_ns, fix44::OrdType::kLimit);
//     order.price({1005, 1}).instrument().symbol("NOKIA.HE");
//   });
//
// A full ring is a status (kFull), never a wait or an allocation; nothing
// locks. One ring per producer thread (several rings for several threads):
// the engine drains each in turn, at most `drain_batch` messages per ring per
// poll(). What the session then says (kNotLoggedOn, kStoreFull, kThrottled,
// ...) is counted in the ring's stats and, with a tag, reported to
// Application::on_queued_send_failed on the engine thread. A throttled
// message (OutgoingThrottleAction=reject, or its queue full) is reported and
// dropped, not kept in the ring: the ring serves every session, and one
// session's throttle must not hold back the others (docs/engine.md). A
// message whose journal has no segment ready yet (kStoreBusy: the journal
// service is behind, which no session outruns alone) stays first in the
// ring, and the ring waits, until the service has one.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>

#include "hft/codec/encoder.hpp"
#include "hft/session/session.hpp"

namespace hft::engine {

/// A session as a producer thread names it: stable for the session's life,
/// never reused for another session (Engine::handle_of).
struct SessionHandle {
  std::uint32_t value = 0;
};

struct SendRingOptions {
  /// Messages the ring holds (rounded up to a power of two).
  std::size_t capacity = 1024;
  /// Largest encoded body of one message (fields after the header).
  std::size_t max_body = 2048;
  /// Messages the engine thread takes from this ring per poll(), at most.
  std::size_t drain_batch = 64;
};

/// What the producer is told at once.
enum class QueueStatus : std::uint8_t {
  kOk = 0,      ///< queued; the engine thread sends it
  kFull,        ///< the engine thread is behind: nothing queued, try again
  kTooLarge,    ///< the body does not fit max_body (or the writer failed)
  kBadMsgType,  ///< empty or longer than 7 characters
};

[[nodiscard]] constexpr std::string_view to_string(QueueStatus s) noexcept {
  switch (s) {
    case QueueStatus::kOk: return "ok";
    case QueueStatus::kFull: return "ring full";
    case QueueStatus::kTooLarge: return "body too large for the ring";
    case QueueStatus::kBadMsgType: return "bad MsgType";
  }
  return "?";
}

/// Counters: `queued`/`full`/`too_large` written by the producer, the rest by
/// the engine thread; any thread may read them.
struct SendRingStats {
  std::uint64_t queued = 0;
  std::uint64_t full = 0;          ///< send() found the ring full
  std::uint64_t too_large = 0;
  std::uint64_t sent = 0;          ///< the session sent it (kOk)
  std::uint64_t failed = 0;        ///< the session refused it (not logged on, store full, throttled, ...)
  std::uint64_t unknown_session = 0;  ///< its session was removed meanwhile
  /// Polls that left the ring's first message in place: its session's
  /// journal had no segment ready yet (SendStatus::kStoreBusy); it is sent
  /// once the journal service has one.
  std::uint64_t store_waits = 0;
};

class SendRing {
 public:
  SendRing(const SendRingOptions& options);
  SendRing(const SendRing&) = delete;
  SendRing& operator=(const SendRing&) = delete;

  /// Producer thread only. `fill(codec::MessageWriter&)` adds the body
  /// fields. `tag` is handed back to Application::on_queued_send_failed if
  /// the session does not send it (0: not reported, only counted).
  template <typename Fill>
  [[nodiscard]] QueueStatus send(SessionHandle session, std::string_view msg_type, Fill&& fill,
                                 std::uint64_t tag = 0) noexcept {
    if (msg_type.empty() || msg_type.size() > kMaxMsgType) return QueueStatus::kBadMsgType;
    const std::uint64_t head = head_.load(std::memory_order_relaxed);
    if (head - tail_cache_ > mask_) {
      tail_cache_ = tail_.load(std::memory_order_acquire);
      if (head - tail_cache_ > mask_) {
        bump(full_);
        return QueueStatus::kFull;
      }
    }
    Entry& e = entries_[head & mask_];
    char* room = arena_.get() + (head & mask_) * slot_bytes_;
    codec::MessageWriter w({room, slot_bytes_});
    w.start_raw(kRawBegin);
    fill(w);
    const auto r = w.finish();
    if (!r.ok()) {
      bump(too_large_);
      return QueueStatus::kTooLarge;
    }
    // The body: after "8=X^9=<n>^", before "10=nnn^".
    const std::string_view m(r.message.data(), r.message.size());
    const std::size_t body_at = m.find('\x01', 4) + 1;
    e.offset = static_cast<std::uint32_t>(r.message.data() + body_at - room);
    e.length = static_cast<std::uint32_t>(m.size() - body_at - 7);
    e.session = session.value;
    e.tag = tag;
    e.type_length = static_cast<std::uint8_t>(msg_type.size());
    std::memcpy(e.type, msg_type.data(), msg_type.size());
    head_.store(head + 1, std::memory_order_release);
    bump(queued_);
    return QueueStatus::kOk;
  }

  [[nodiscard]] SendRingStats stats() const noexcept;
  [[nodiscard]] const SendRingOptions& options() const noexcept { return options_; }
  /// Messages queued and not yet taken by the engine thread (approximate
  /// from other threads).
  [[nodiscard]] std::size_t pending() const noexcept {
    return static_cast<std::size_t>(head_.load(std::memory_order_acquire) - tail_.load(std::memory_order_acquire));
  }

 private:
  friend class Engine;
  static constexpr std::size_t kMaxMsgType = 7;
  static constexpr std::string_view kRawBegin = "X";
  struct Entry {
    std::uint32_t session = 0;
    std::uint32_t offset = 0;
    std::uint32_t length = 0;
    std::uint8_t type_length = 0;
    char type[kMaxMsgType] = {};
    std::uint64_t tag = 0;
  };
  /// Single-writer counter: a plain load and store, readable from anywhere.
  static void bump(std::atomic<std::uint64_t>& c) noexcept {
    c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }

  /// Engine thread: the next entry, or nullptr; release() after use.
  [[nodiscard]] const Entry* peek() noexcept;
  [[nodiscard]] std::string_view body(const Entry& e) const noexcept {
    return {arena_.get() + (static_cast<std::size_t>(&e - entries_.get())) * slot_bytes_ + e.offset, e.length};
  }
  void release() noexcept { tail_.store(tail_.load(std::memory_order_relaxed) + 1, std::memory_order_release); }

  SendRingOptions options_;
  std::size_t mask_ = 0;
  std::size_t slot_bytes_ = 0;
  std::unique_ptr<Entry[]> entries_;
  std::unique_ptr<char[]> arena_;
  // Producer side.
  alignas(64) std::atomic<std::uint64_t> head_{0};
  std::uint64_t tail_cache_ = 0;
  std::atomic<std::uint64_t> queued_{0}, full_{0}, too_large_{0};
  // Engine side.
  alignas(64) std::atomic<std::uint64_t> tail_{0};
  std::uint64_t head_cache_ = 0;
  std::atomic<std::uint64_t> sent_{0}, failed_{0}, unknown_{0}, store_waits_{0};
};

}  // namespace hft::engine
