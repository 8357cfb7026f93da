// The journal service: one background thread per engine serving many
// journals. For each journal it keeps the NEXT segment created, fallocated,
// mapped and pre-faulted before the writer needs it (so rotation on the hot
// path is a pointer swap), flushes and unmaps finished segments, runs the
// Durability::kFsync timer, re-touches pages ahead of the writer that the
// kernel wrote back, and applies retention.
//
// The thread is an agent: do_work() returns the work done, an idle strategy
// decides what to do when it is zero; it can be pinned to a CPU. By default
// it sleeps when idle and pauses after each bounded piece of work, so it can
// share a core with a busy-polling thread: a helper that spins or yields
// stays runnable, and the scheduler then takes whole 4 ms ticks from the
// poller (measured: 4-25 ms stalls in the rtt lane after every rotation). Hand-off
// with the writers is through atomics and SPSC rings only; attach/detach (at
// journal open/close) are the only calls that may wait.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
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
  /// kSleep (default): sleep idle_sleep when idle. kBackoff / kBusySpin only
  /// for a core of its own.
  core::IdleKind idle = core::IdleKind::kSleep;
  /// kSleep only. Every wake-up on a shared core costs the poller there a
  /// context switch, so the thread wakes rarely; spares are prepared a whole
  /// segment ahead, so 10 ms is never late (the fsync timer of
  /// Durability::kFsync gets this resolution).
  std::chrono::microseconds idle_sleep{10'000};
  /// Sleep after a duty cycle that did work (0: none). Each cycle does a
  /// bounded piece (at most one pre-fault chunk, one unmap chunk, ... per
  /// journal), so this bounds the share of a core the thread takes.
  std::chrono::microseconds work_pause{100};
  /// ... and, while any attached journal is being written, at least
  /// `busy_ratio` times the CPU the cycle took, so the thread keeps at
  /// most 1 / (1 + busy_ratio) of a core while it prepares segments next to
  /// a session that is trading. With no appends (start-up, an idle market)
  /// it prepares at full pace, still pausing work_pause between pieces.
  unsigned busy_ratio = 4;
  /// A duty cycle ends once it has spent this long on journals that had work
  /// (the journal it is at finishes its bounded pieces first); the next one
  /// goes on from the journal after it, round robin, so with thousands of
  /// journals a cycle still holds a shared core for about this long before
  /// its pause, and every journal is reached in turn. 0: every journal in
  /// every cycle.
  std::chrono::microseconds cycle_budget{50};
  /// A journal not written since the service's previous visit, which then
  /// had nothing to do, is skipped (one load of its write position, not a
  /// dozen cache lines of its state) until this long has passed, or a
  /// quarter of its fsync interval under Durability::kFsync if shorter.
  /// Its timed work (evictions due, re-warm rounds, retention, retries)
  /// comes at 100 ms or more, so it is at most this much late. 0: every
  /// journal at every visit.
  std::chrono::microseconds quiet_revisit{20'000};
  std::string thread_name = "hft-journal";
};

class JournalService {
 public:
  /// Journals are held in blocks of kBlock slots, allocated as journals
  /// attach and kept until the service is destroyed (a closed journal's
  /// slot is reused), so the service has no fixed limit below kMaxJournals.
  static constexpr std::size_t kBlock = 64;
  static constexpr std::size_t kMaxBlocks = 4096;
  static constexpr std::size_t kMaxJournals = kBlock * kMaxBlocks;

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

  /// One duty cycle: the attached journals in turn, from where the previous
  /// cycle stopped, until cycle_budget is spent or each was visited once;
  /// returns the work done. This is what the thread runs; call it yourself
  /// only when the thread is not started (tests, single-threaded tools).
  int do_work() noexcept;

  /// Full passes over the attached journals completed so far.
  [[nodiscard]] std::uint64_t passes() const noexcept { return passes_.load(std::memory_order_relaxed); }

  /// Journals maintained so far (visits that were not skipped as quiet).
  [[nodiscard]] std::uint64_t maintained() const noexcept {
    return maintained_.load(std::memory_order_relaxed);
  }

  /// Duty cycles completed so far.
  [[nodiscard]] std::uint64_t duty_cycles() const noexcept { return cycles_.load(std::memory_order_relaxed); }
  /// Journals attached now.
  [[nodiscard]] std::size_t journals() const noexcept;

 private:
  friend class Journal;
  /// Called by Journal::open (may allocate a block). False when
  /// kMaxJournals are attached, or a block cannot be allocated.
  bool attach(Journal* journal) noexcept;
  /// Called by ~Journal. Returns once the service no longer touches it.
  void detach(Journal* journal) noexcept;
  void run() noexcept;

  struct Block {
    std::array<std::atomic<Journal*>, kBlock> journals{};
    // Service thread only: each journal's write_position() at the previous
    // cycle, the journal the slot held then, and until when it is skipped
    // (quiet: not written, nothing done at its last visit).
    std::array<std::uint64_t, kBlock> positions{};
    std::array<const Journal*, kBlock> seen{};
    std::array<std::int64_t, kBlock> quiet_until{};
  };

  JournalServiceConfig config_;
  /// Published with release once allocated; never freed before ~JournalService.
  std::unique_ptr<std::atomic<Block*>[]> blocks_;
  std::atomic<std::size_t> block_count_{0};
  std::mutex attach_mutex_;  ///< attach() only (open time), never the service thread
  std::atomic<const void*> current_{nullptr};  ///< the Block the service is reading, or nullptr
  std::atomic<bool> stop_{false};
  std::atomic<bool> running_{false};
  std::atomic<int> start_state_{0};  // 0 starting, 1 ok, -1 pin failed
  std::atomic<std::uint64_t> cycles_{0};
  std::atomic<std::uint64_t> passes_{0};
  std::atomic<std::uint64_t> maintained_{0};
  // Service thread only: where the next cycle starts (block * kBlock + slot);
  // whether any journal moved in the last full pass, and in this one so far.
  std::size_t cursor_ = 0;
  bool writing_ = false;
  bool writing_pass_ = false;
  std::thread thread_;
};

}  // namespace hft::store
