#include "side_thread.hpp"

#include <sched.h>
#include <unistd.h>

#include <ctime>

#include "hft/core/cpu.hpp"

namespace hft::lab::lanes {

void SideThread::start() {
  stop_.store(false);
  thread_ = std::thread([this] {
    core::name_current_thread(placement_.role);
    if (placement_.requested_cpu >= 0) {
      (void)core::pin_current_thread(placement_.requested_cpu);
    } else {
      cpu_set_t mask;
      CPU_ZERO(&mask);
      if (::sched_getaffinity(::getpid(), sizeof mask, &mask) == 0)
        (void)::sched_setaffinity(0, sizeof mask, &mask);
    }
    placement_.cpu_at_start = core::current_cpu();
    work();
    placement_.cpu_at_end = core::current_cpu();
    timespec cpu{};
    if (::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu) == 0) {
      cpu_ns_ =
          static_cast<std::uint64_t>(cpu.tv_sec) * 1'000'000'000ULL + static_cast<std::uint64_t>(cpu.tv_nsec);
    }
  });
}

void SideThread::stop() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
}

}  // namespace hft::lab::lanes
