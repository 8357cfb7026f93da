// The event trace: what the engine did, stamped in TSC ticks, so a long call
// measured by the lab can be lined up with the journal rotation, pre-fault,
// unmap, fsync, partial send or resend that overlapped it (docs/lab.md,
// "Event trace and attribution").
//
//   emit() ──claim slot (CAS)──► ring of TraceRecord ──► drain() on any thread
//   (any thread: no lock,          (MPSC, bounded; full:     (the lab, or the
//    no allocation, no syscall)     dropped and counted)      program at exit)
//
// The trace is process-wide and off until enable(): emit() then costs one
// relaxed load and a branch. Enabled, a record costs a CAS on the ring's
// head, five stores and a release store (no syscall: the thread's id is
// read once per thread). The ring never grows and never blocks a writer: a
// record that finds it full is dropped and counted (dropped()).
//
// Record (48 bytes, pinned by static_assert):
//   +0  u64 sequence (ring protocol)  +8  u64 begin (TSC)  +16 u64 end (TSC)
//   +24 u64 a                         +32 u64 b            +40 u32 tid  +44 u16 kind
// `a` and `b` are per kind (see TraceKind). A point event has begin == end.
// TSC ticks are one domain per host on an invariant TSC, so records from
// another process (hft-venue --trace-file) line up with the lab's stamps.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "hft/core/clock.hpp"

namespace hft::core {

/// What a trace record is about. Values are stable (they are written to
/// files); new kinds are added at the end.
enum class TraceKind : std::uint16_t {
  kSegmentCreate = 1,     ///< journal service: a spare segment file created and sized (a: number, b: bytes)
  kZeroFill = 2,          ///< journal service: one slice of a spare zero-filled (a: number, b: bytes)
  kPrefault = 3,          ///< one piece of a segment pre-faulted (a: number, b: bytes)
  kSpareReady = 4,        ///< journal service: a spare handed to the writer (point; a: number, b: bytes)
  kSpareMissing = 5,      ///< writer: rotation found no spare ready (point; a: active number)
  kRotate = 6,            ///< writer: rotation to the next segment (a: new number, b: bytes)
  kInlineCreate = 7,      ///< writer: a segment created on the writer's thread (a: number, b: bytes)
  kUnmap = 8,             ///< journal service: one piece of a finished segment unmapped (a: number, b: bytes)
  kFsync = 9,             ///< msync/fsync of journal pages (a: number, b: bytes)
  kPartialSend = 10,      ///< transport: send() took part of the bytes (a: sent, b: asked)
  kSendBlocked = 11,      ///< transport: send() took nothing (EAGAIN) (point; a: bytes queued)
  kReconnect = 12,        ///< transport: an initiator's connect attempt (point; a: attempt)
  kResendRequested = 13,  ///< session: ResendRequest sent for a gap (point; a: begin, b: end)
  kResendServed = 14,     ///< session: a ResendRequest answered (a: begin, b: end)
  kTimers = 15,  ///< engine: a slice of its timer round over the sessions (a: sessions, b: first index)
};

/// A short stable name: "segment_create", "zero_fill", ...; "unknown" otherwise.
[[nodiscard]] std::string_view to_string(TraceKind kind) noexcept;
/// Parses the names to_string returns; false if unknown.
[[nodiscard]] bool parse_trace_kind(std::string_view name, TraceKind& out) noexcept;

/// One record as drain() returns it.
struct TraceRecord {
  std::uint64_t begin = 0;  ///< TSC ticks
  std::uint64_t end = 0;    ///< TSC ticks (== begin for a point event)
  std::uint64_t a = 0;
  std::uint64_t b = 0;
  std::uint32_t tid = 0;  ///< kernel thread id of the thread that emitted it
  TraceKind kind = TraceKind::kSegmentCreate;
};

namespace trace {

namespace detail {
struct Ring;
extern std::atomic<Ring*> g_ring;
void emit_slow(Ring* ring, TraceKind kind, std::uint64_t begin, std::uint64_t end, std::uint64_t a,
               std::uint64_t b) noexcept;
}  // namespace detail

/// Allocates and touches a ring of `capacity` records (rounded up to a
/// power of two, at least 64) and turns the trace on. Not thread-safe
/// against another enable()/disable(); call it before the threads whose
/// events matter start emitting. Returns false (nothing changed) if the
/// trace is already on or `capacity` is 0.
bool enable(std::size_t capacity);

/// Turns the trace off. The ring is kept (never freed while the process
/// runs: an emit() racing with disable() may still write into it); drain()
/// still returns what it holds.
void disable() noexcept;

/// True while enabled.
[[nodiscard]] inline bool enabled() noexcept {
  return detail::g_ring.load(std::memory_order_relaxed) != nullptr;
}

/// Records one event. Never blocks, never allocates, never makes a
/// syscall after the calling thread's first record; a no-op while off.
inline void emit(TraceKind kind, std::uint64_t begin, std::uint64_t end, std::uint64_t a = 0,
                 std::uint64_t b = 0) noexcept {
  if (detail::Ring* r = detail::g_ring.load(std::memory_order_acquire); r != nullptr) {
    detail::emit_slow(r, kind, begin, end, a, b);
  }
}

/// A point event now.
inline void emit_point(TraceKind kind, std::uint64_t a = 0, std::uint64_t b = 0) noexcept {
  if (detail::Ring* r = detail::g_ring.load(std::memory_order_acquire); r != nullptr) {
    const std::uint64_t t = rdtsc();
    detail::emit_slow(r, kind, t, t, a, b);
  }
}

/// A TSC stamp for the start of a traced interval: 0 (no clock read) while
/// the trace is off, so untraced builds pay one load.
[[nodiscard]] inline std::uint64_t begin() noexcept {
  return enabled() ? rdtsc() : 0;
}

/// Ends an interval started by begin(): records [begin, now] unless begin
/// was 0 (the trace was off when it started).
inline void end(TraceKind kind, std::uint64_t begin, std::uint64_t a = 0, std::uint64_t b = 0) noexcept {
  if (begin != 0) emit(kind, begin, rdtsc(), a, b);
}

/// Appends every committed record to `out` in the order their slots were
/// claimed and frees their slots. One drainer at a time. Returns how many.
std::size_t drain(std::vector<TraceRecord>& out);

/// Records dropped so far because the ring was full.
[[nodiscard]] std::uint64_t dropped() noexcept;
/// Records emitted so far (drained or not; dropped ones excluded).
[[nodiscard]] std::uint64_t recorded() noexcept;

}  // namespace trace
}  // namespace hft::core
