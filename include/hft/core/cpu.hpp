// CPU placement.
#pragma once

#include <string>

namespace hft::core {

/// Number of CPUs this process may run on (its affinity mask).
[[nodiscard]] int available_cpus() noexcept;

/// True if `cpu` is an online CPU of this machine.
[[nodiscard]] bool cpu_exists(int cpu) noexcept;

/// Pins the calling thread to `cpu`. Returns false (and leaves the thread
/// unpinned) if the CPU does not exist or the call is refused. A negative
/// cpu means "do not pin" and returns true.
bool pin_current_thread(int cpu) noexcept;

/// The CPU the calling thread runs on now (sched_getcpu), or -1.
[[nodiscard]] int current_cpu() noexcept;

/// Names the calling thread (at most 15 characters are kept).
void name_current_thread(const std::string& name) noexcept;

}  // namespace hft::core
