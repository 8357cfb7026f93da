#include "send_timing.hpp"

#include <dlfcn.h>
#include <sys/socket.h>

#include <atomic>

#include "lane_support.hpp"

namespace hft::lab::lanes::send_timing {
namespace {

struct PerThread {
  bool on = false;
  std::uint64_t ticks = 0;
  std::uint32_t calls = 0;
};
thread_local PerThread tl;
std::atomic<bool> seen{false};

using SendFn = ssize_t (*)(int, const void*, size_t, int);

ssize_t via_sendto(int fd, const void* buf, size_t len, int flags) { return ::sendto(fd, buf, len, flags, nullptr, 0); }

SendFn next_send() noexcept {
  // No next definition (a static link): sendto() is what libc's send() is.
  static const SendFn fn = [] {
    void* next = ::dlsym(RTLD_NEXT, "send");
    return next != nullptr ? reinterpret_cast<SendFn>(next) : &via_sendto;
  }();
  return fn;
}

}  // namespace

void enable(bool on) noexcept {
  tl.on = on;
  tl.ticks = 0;
  tl.calls = 0;
}

Taken take() noexcept {
  const Taken t{tl.ticks, tl.calls};
  tl.ticks = 0;
  tl.calls = 0;
  return t;
}

bool interposed() noexcept { return seen.load(std::memory_order_relaxed); }

}  // namespace hft::lab::lanes::send_timing

// The process's send(): see send_timing.hpp.
extern "C" ssize_t send(int fd, const void* buf, size_t len, int flags) {
  namespace st = hft::lab::lanes::send_timing;
  const st::SendFn fn = st::next_send();
  if (!st::tl.on) [[likely]] {
    if (!st::seen.load(std::memory_order_relaxed)) st::seen.store(true, std::memory_order_relaxed);
    return fn(fd, buf, len, flags);
  }
  const std::uint64_t t0 = hft::lab::tsc_now();
  const ssize_t r = fn(fd, buf, len, flags);
  st::tl.ticks += hft::lab::tsc_now() - t0;
  ++st::tl.calls;
  st::seen.store(true, std::memory_order_relaxed);
  return r;
}
