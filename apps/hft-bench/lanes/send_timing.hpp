// Timing the socket send() inside a timed call, for every engine alike.
//
// hft-bench defines send() itself (send_timing.cpp): the executable's
// definition takes precedence over libc's for every caller in the process,
// libhft's transport (static), QuickFIX's shared library (through its PLT)
// and llfix's headers alike, so the engine code is unchanged. The wrapper
// forwards to the next definition (dlsym RTLD_NEXT: libc's, or the
// sanitizer's interceptor in an ASan build) and, only on a thread that
// asked for it with begin(), adds the call's duration (fenced TSC, the
// lanes' clock) to a per-thread total. A timed call's "engine" part is then
// its duration minus the send() time inside it: the same split for engines
// whose stages cannot be stamped from outside.
#pragma once

#include <cstdint>

namespace hft::lab::lanes::send_timing {

/// send() time and calls on this thread since the last take().
struct Taken {
  std::uint64_t ticks = 0;
  std::uint32_t calls = 0;
};

/// Starts (true) or stops counting send() on the calling thread.
void enable(bool on) noexcept;
/// What this thread's send() calls took since the last take(); resets.
[[nodiscard]] Taken take() noexcept;
/// True once a send() went through the wrapper in this process (the
/// interposition works: the executable's send() is the one called).
[[nodiscard]] bool interposed() noexcept;

}  // namespace hft::lab::lanes::send_timing
