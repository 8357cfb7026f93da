#include "hft/store/journal_service.hpp"

#include <algorithm>
#include <ctime>

#include "hft/core/clock.hpp"
#include "hft/core/cpu.hpp"
#include "hft/store/journal.hpp"

namespace hft::store {

JournalService::JournalService(JournalServiceConfig config)
    : config_(std::move(config)), blocks_(std::make_unique<std::atomic<Block*>[]>(kMaxBlocks)) {}

JournalService::~JournalService() {
  stop();
  for (std::size_t b = 0; b < block_count_.load(std::memory_order_acquire); ++b)
    delete blocks_[b].load(std::memory_order_relaxed);
}

Expected<void> JournalService::start() {
  if (thread_.joinable()) return Error{"journal service: already started"};
  stop_.store(false, std::memory_order_relaxed);
  start_state_.store(0, std::memory_order_relaxed);
  thread_ = std::thread([this] {
    core::name_current_thread(config_.thread_name);
    if (!core::pin_current_thread(config_.cpu)) {
      start_state_.store(-1, std::memory_order_release);
      return;
    }
    running_.store(true, std::memory_order_release);
    start_state_.store(1, std::memory_order_release);
    run();
    running_.store(false, std::memory_order_release);
  });
  while (start_state_.load(std::memory_order_acquire) == 0) std::this_thread::yield();
  if (start_state_.load(std::memory_order_acquire) < 0) {
    thread_.join();
    return Error{"journal service: cannot pin thread '" + config_.thread_name + "' to CPU " +
                 std::to_string(config_.cpu)};
  }
  return {};
}

void JournalService::stop() noexcept {
  stop_.store(true, std::memory_order_release);
  if (thread_.joinable()) thread_.join();
}

namespace {
std::int64_t thread_cpu_ns() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}
}  // namespace

void JournalService::run() noexcept {
  if (config_.idle == core::IdleKind::kSleep) {
    while (!stop_.load(std::memory_order_acquire)) {
      const std::int64_t t0 = core::monotonic_ns();
      const std::int64_t cpu0 = thread_cpu_ns();
      const int work = do_work();
      if (work > 0) {
        // The CPU the cycle took, not its wall time: a write that waits for
        // the disk (write-behind's O_DIRECT writes, a flush) leaves the core
        // to the session meanwhile, and counting the wait made the service
        // pause four times as long after it (a 1 MiB write-out then held
        // it to about 500 MB/s, below a 1,000-session venue's journal).
        const auto busy = std::chrono::nanoseconds(thread_cpu_ns() - cpu0);
        const auto pause =
            writing_ ? std::max<std::chrono::nanoseconds>(config_.work_pause, busy * config_.busy_ratio)
                     : std::chrono::nanoseconds(config_.work_pause);
        if (pause.count() > 0) std::this_thread::sleep_for(pause);
      } else {
        // A pass that found nothing still reads every journal (with
        // thousands, a millisecond or two of cache misses): at most a
        // twentieth of the core on passes that find nothing.
        const auto busy = std::chrono::nanoseconds(core::monotonic_ns() - t0);
        std::this_thread::sleep_for(std::max<std::chrono::nanoseconds>(config_.idle_sleep, busy * 20));
      }
    }
    return;
  }
  core::IdleStrategy idle(config_.idle);
  const bool pause = config_.work_pause.count() > 0 && config_.idle == core::IdleKind::kBackoff;
  while (!stop_.load(std::memory_order_acquire)) {
    const int work = do_work();
    idle.idle(work);
    if (work > 0 && pause) std::this_thread::sleep_for(config_.work_pause);
  }
}

int JournalService::do_work() noexcept {
  const std::int64_t now = core::monotonic_ns();
  const std::int64_t budget_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(config_.cycle_budget).count();
  const std::int64_t revisit_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(config_.quiet_revisit).count();
  int work = 0;
  const std::size_t total = block_count_.load(std::memory_order_acquire) * kBlock;
  std::size_t at = total == 0 ? 0 : cursor_ % total;
  Block* announced = nullptr;
  for (std::size_t visited = 0; visited < total; ++visited) {
    Block& block = *blocks_[at / kBlock].load(std::memory_order_acquire);
    if (&block != announced) {
      // Dekker with detach(), once per block: announce the block, then read
      // its slots; detach() clears a slot, then waits while its block is
      // announced.
      current_.store(&block, std::memory_order_seq_cst);
      announced = &block;
    }
    const std::size_t i = at % kBlock;
    auto& slot = block.journals[i];
    int done = 0;
    bool maintained = false;
    if (Journal* j = slot.load(std::memory_order_seq_cst); j != nullptr) {
      if (block.seen[i] != j) {  // attached since the previous visit (a slot is reused)
        block.seen[i] = j;
        block.quiet_until[i] = 0;
      }
      const std::uint64_t position = j->write_position();
      const bool written = position != block.positions[i];
      if (written) {
        writing_pass_ = true;
        writing_ = true;
      }
      block.positions[i] = position;
      // A journal not written since its last visit, which then had nothing
      // to do, has nothing to do before its next timer either: skipped
      // (one load of its position) until quiet_revisit has passed.
      // A full maintain() of a quiet journal reads a dozen of its cache
      // lines: with 2,000 journals a pass took ~0.85 ms, the service's
      // longest stretch on the engine's core.
      if (written || now >= block.quiet_until[i]) {
        done = j->maintain(now);
        maintained = true;
        maintained_.fetch_add(1, std::memory_order_relaxed);
        block.quiet_until[i] = done == 0 && !written ? now + std::min(revisit_ns, j->timer_period_ns()) : 0;
      }
    }
    work += done;
    if (++at == total) {
      // A full pass ends: whether it saw a journal written decides the
      // pauses until the next one ends.
      at = 0;
      writing_ = writing_pass_;
      writing_pass_ = false;
      passes_.fetch_add(1, std::memory_order_relaxed);
    }
    // The budget bounds every cycle, also one that finds little to do: it
    // is checked after each journal maintained and every 16 skipped.
    if (budget_ns > 0 && (maintained || (visited & 15) == 15) && core::monotonic_ns() - now >= budget_ns)
      break;
  }
  current_.store(nullptr, std::memory_order_release);
  cursor_ = at;
  cycles_.fetch_add(1, std::memory_order_relaxed);
  return work;
}

std::size_t JournalService::journals() const noexcept {
  std::size_t n = 0;
  const std::size_t blocks = block_count_.load(std::memory_order_acquire);
  for (std::size_t b = 0; b < blocks; ++b) {
    for (const auto& slot : blocks_[b].load(std::memory_order_acquire)->journals)
      n += slot.load(std::memory_order_relaxed) != nullptr ? 1 : 0;
  }
  return n;
}

bool JournalService::attach(Journal* journal) noexcept {
  const std::lock_guard lock(attach_mutex_);
  const std::size_t blocks = block_count_.load(std::memory_order_relaxed);
  for (std::size_t b = 0; b < blocks; ++b) {
    for (auto& slot : blocks_[b].load(std::memory_order_relaxed)->journals) {
      Journal* expected = nullptr;
      if (slot.compare_exchange_strong(expected, journal, std::memory_order_acq_rel)) return true;
    }
  }
  if (blocks == kMaxBlocks) return false;
  auto* block = new (std::nothrow) Block();
  if (block == nullptr) return false;
  block->journals[0].store(journal, std::memory_order_relaxed);
  blocks_[blocks].store(block, std::memory_order_release);
  block_count_.store(blocks + 1, std::memory_order_release);
  return true;
}

void JournalService::detach(Journal* journal) noexcept {
  const std::size_t blocks = block_count_.load(std::memory_order_acquire);
  for (std::size_t b = 0; b < blocks; ++b) {
    Block* block = blocks_[b].load(std::memory_order_acquire);
    for (auto& slot : block->journals) {
      if (slot.load(std::memory_order_relaxed) != journal) continue;
      slot.store(nullptr, std::memory_order_seq_cst);
      // The service may have read the slot before it was cleared: it is
      // done with the journal once it has left the block.
      while (current_.load(std::memory_order_seq_cst) == block) std::this_thread::yield();
    }
  }
}

}  // namespace hft::store
