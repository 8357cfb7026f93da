#include "hft/core/trace.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <memory>

#include "hft/core/spsc_ring.hpp"

namespace hft::core {

namespace {

struct KindName {
  TraceKind kind;
  std::string_view name;
};

constexpr std::array<KindName, 15> kKindNames{{
    {TraceKind::kSegmentCreate, "segment_create"},
    {TraceKind::kZeroFill, "zero_fill"},
    {TraceKind::kPrefault, "prefault"},
    {TraceKind::kSpareReady, "spare_ready"},
    {TraceKind::kSpareMissing, "spare_missing"},
    {TraceKind::kRotate, "rotate"},
    {TraceKind::kInlineCreate, "inline_create"},
    {TraceKind::kUnmap, "unmap"},
    {TraceKind::kFsync, "fsync"},
    {TraceKind::kPartialSend, "partial_send"},
    {TraceKind::kSendBlocked, "send_blocked"},
    {TraceKind::kReconnect, "reconnect"},
    {TraceKind::kResendRequested, "resend_requested"},
    {TraceKind::kResendServed, "resend_served"},
    {TraceKind::kTimers, "timers"},
}};

}  // namespace

std::string_view to_string(TraceKind kind) noexcept {
  for (const KindName& k : kKindNames) {
    if (k.kind == kind) return k.name;
  }
  return "unknown";
}

bool parse_trace_kind(std::string_view name, TraceKind& out) noexcept {
  for (const KindName& k : kKindNames) {
    if (k.name == name) {
      out = k.kind;
      return true;
    }
  }
  return false;
}

namespace trace::detail {

struct Slot {
  std::atomic<std::uint64_t> sequence{0};  // claimed index + 1 once the record is written
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  std::uint64_t a = 0;
  std::uint64_t b = 0;
  std::uint32_t tid = 0;
  std::uint16_t kind = 0;
  std::uint16_t reserved = 0;
};
static_assert(sizeof(Slot) == 48, "trace record layout (see trace.hpp)");

struct Ring {
  explicit Ring(std::size_t n) : mask(n - 1), slots(std::make_unique<Slot[]>(n)) {}
  alignas(kCacheLine) std::atomic<std::uint64_t> head{0};  // next index to claim
  alignas(kCacheLine) std::atomic<std::uint64_t> tail{0};  // next index to drain
  alignas(kCacheLine) std::atomic<std::uint64_t> dropped{0};
  std::atomic<std::uint64_t> recorded{0};
  const std::uint64_t mask;
  std::unique_ptr<Slot[]> slots;
  Ring* previous = nullptr;  // rings of earlier enable()s: kept, never freed
};

std::atomic<Ring*> g_ring{nullptr};

namespace {
// Every ring ever made stays reachable from here: an emit() racing with
// disable() may still write into the one it loaded.
Ring* g_kept = nullptr;

std::uint32_t thread_id() noexcept {
  thread_local const auto tid = static_cast<std::uint32_t>(::syscall(SYS_gettid));
  return tid;
}
}  // namespace

void emit_slow(Ring* ring, TraceKind kind, std::uint64_t begin, std::uint64_t end, std::uint64_t a,
               std::uint64_t b) noexcept {
  const std::uint32_t tid = thread_id();
  std::uint64_t h = ring->head.load(std::memory_order_relaxed);
  for (;;) {
    if (h - ring->tail.load(std::memory_order_acquire) > ring->mask) {
      ring->dropped.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    if (ring->head.compare_exchange_weak(h, h + 1, std::memory_order_relaxed)) break;
  }
  Slot& s = ring->slots[h & ring->mask];
  s.begin = begin;
  s.end = end;
  s.a = a;
  s.b = b;
  s.tid = tid;
  s.kind = static_cast<std::uint16_t>(kind);
  s.sequence.store(h + 1, std::memory_order_release);
  ring->recorded.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace trace::detail

namespace trace {

bool enable(std::size_t capacity) {
  if (capacity == 0 || detail::g_ring.load(std::memory_order_acquire) != nullptr) return false;
  std::size_t n = 64;
  while (n < capacity) n *= 2;
  auto* ring = new detail::Ring(n);
  // Touch every slot now, not on the first emit of each.
  for (std::size_t k = 0; k < n; ++k) ring->slots[k].sequence.store(0, std::memory_order_relaxed);
  ring->previous = detail::g_kept;
  detail::g_kept = ring;
  detail::g_ring.store(ring, std::memory_order_release);
  return true;
}

void disable() noexcept {
  detail::g_ring.store(nullptr, std::memory_order_release);
}

std::size_t drain(std::vector<TraceRecord>& out) {
  detail::Ring* ring = detail::g_kept;  // the newest ring, on or off
  if (ring == nullptr) return 0;
  std::size_t n = 0;
  for (;;) {
    const std::uint64_t t = ring->tail.load(std::memory_order_relaxed);
    detail::Slot& s = ring->slots[t & ring->mask];
    if (s.sequence.load(std::memory_order_acquire) != t + 1) break;
    TraceRecord r;
    r.begin = s.begin;
    r.end = s.end;
    r.a = s.a;
    r.b = s.b;
    r.tid = s.tid;
    r.kind = static_cast<TraceKind>(s.kind);
    out.push_back(r);
    ring->tail.store(t + 1, std::memory_order_release);
    ++n;
  }
  return n;
}

std::uint64_t dropped() noexcept {
  const detail::Ring* ring = detail::g_kept;
  return ring == nullptr ? 0 : ring->dropped.load(std::memory_order_relaxed);
}

std::uint64_t recorded() noexcept {
  const detail::Ring* ring = detail::g_kept;
  return ring == nullptr ? 0 : ring->recorded.load(std::memory_order_relaxed);
}

}  // namespace trace
}  // namespace hft::core
