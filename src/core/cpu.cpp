#include "hft/core/cpu.hpp"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

namespace hft::core {

int available_cpus() noexcept {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  return CPU_COUNT(&set);
}

bool cpu_exists(int cpu) noexcept {
  // Judged against the CPUs online, not the calling thread's affinity: a
  // thread started by an already pinned thread must still be pinnable elsewhere.
  if (cpu < 0 || cpu >= CPU_SETSIZE) return false;
  return cpu < static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
}

bool pin_current_thread(int cpu) noexcept {
  if (cpu < 0) return true;
  if (!cpu_exists(cpu)) return false;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

int current_cpu() noexcept { return sched_getcpu(); }

void name_current_thread(const std::string& name) noexcept {
  const std::string n = name.substr(0, 15);
  pthread_setname_np(pthread_self(), n.c_str());
}

}  // namespace hft::core
