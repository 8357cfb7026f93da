// A thread that runs beside a measured run and is not timed: the engine
// lanes' hostile peer and admin scraper (disturbance.hpp). It is started
// from the pinned client thread, so it is placed explicitly: pinned to
// `core`, or (-1) given the process's own CPU mask instead of inheriting the
// client's CPU. Its placement and CPU time go into the run's report.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>

#include "hft/lab/lane.hpp"

namespace hft::lab::lanes {

class SideThread {
 public:
  SideThread(std::string role, int core) : placement_{std::move(role), core, -1, -1} {}
  SideThread(const SideThread&) = delete;
  SideThread& operator=(const SideThread&) = delete;

  /// Starts work() on the thread (named after the role, placed as above).
  void start();
  /// Asks work() to return and joins the thread. Idempotent. A derived
  /// class calls it in its destructor (work() uses its members).
  void stop();
  /// Where the thread ran (valid after stop()).
  [[nodiscard]] const ThreadPlacement& placement() const noexcept { return placement_; }
  /// CPU time the thread used, in ns (valid after stop()).
  [[nodiscard]] std::uint64_t cpu_ns() const noexcept { return cpu_ns_; }

 protected:
  ~SideThread() = default;
  /// The thread's job: runs until stopping().
  virtual void work() noexcept = 0;
  [[nodiscard]] bool stopping() const noexcept { return stop_.load(std::memory_order_relaxed); }

 private:
  ThreadPlacement placement_;
  std::uint64_t cpu_ns_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace hft::lab::lanes
