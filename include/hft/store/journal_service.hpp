// The journal service: one background thread per engine serving many
// journals. For each journal it keeps the NEXT segment created, fallocated,
// mapped and pre-faulted before the writer needs it (so rotation on the hot
// path is a pointer swap), flushes and unmaps finished segments, runs the
// Durability::kFsync timer, re-touches pages ahead of the writer that the
// kernel wrote back, and applies retention.
//
// The thread is an agent: do_work() returns the work done, an idle strategy
// decides what to do when it is zero; it can be pinned to a CPU. Hand-off
// with the writers is through atomics and SPSC rings only; attach/detach (at
// journal open/close) are the only calls that may wait.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <thread>

#include "hft/core/expected.hpp"
#include "hft/core/idle.hpp"

namespace hft::store {

class Journal;

struct JournalServiceConfig {
  int cpu = -1;                                 ///< pin the thread here; -1: do not pin
  core::IdleKind idle = core::IdleKind::kBackoff;
  std::string thread_name = "hft-journal";
};

class JournalService {
 public:
  static constexpr std::size_t kMaxJournals = 64;

  explicit JournalService(JournalServiceConfig config = {});
  /// Stops the thread. Journals must be closed first (they detach).
  ~JournalService();
  JournalService(const JournalService&) = delete;
  JournalService& operator=(const JournalService&) = delete;

  /// Starts the thread. Error if it is already running or cannot be pinned
  /// to config.cpu.
  [[nodiscard]] Expected<void> start();
  /// Asks the thread to stop and joins it. Idempotent.
  void stop() noexcept;
  [[nodiscard]] bool running() const noexcept { return running_.load(std::memory_order_acquire); }

  /// One duty cycle over every attached journal; returns the work done.
  /// This is what the thread runs; call it yourself only when the thread is
  /// not started (tests, single-threaded tools).
  int do_work() noexcept;

  /// Duty cycles completed so far.
  [[nodiscard]] std::uint64_t duty_cycles() const noexcept { return cycles_.load(std::memory_order_relaxed); }
  /// Journals attached now.
  [[nodiscard]] std::size_t journals() const noexcept;

 private:
  friend class Journal;
  /// Called by Journal::open. False when kMaxJournals are attached.
  bool attach(Journal* journal) noexcept;
  /// Called by ~Journal. Returns once the service no longer touches it.
  void detach(Journal* journal) noexcept;
  void run() noexcept;

  JournalServiceConfig config_;
  std::array<std::atomic<Journal*>, kMaxJournals> journals_{};
  std::atomic<Journal*> current_{nullptr};
  std::atomic<bool> stop_{false};
  std::atomic<bool> running_{false};
  std::atomic<int> start_state_{0};  // 0 starting, 1 ok, -1 pin failed
  std::atomic<std::uint64_t> cycles_{0};
  std::thread thread_;
};

}  // namespace hft::store
