#include "hft/store/journal_service.hpp"

#include <algorithm>

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

void JournalService::run() noexcept {
  if (config_.idle == core::IdleKind::kSleep) {
    while (!stop_.load(std::memory_order_acquire)) {
      const std::int64_t t0 = core::monotonic_ns();
      const int work = do_work();
      if (work > 0) {
        const auto busy = std::chrono::nanoseconds(core::monotonic_ns() - t0);
        const auto pause =
            writing_ ? std::max<std::chrono::nanoseconds>(config_.work_pause, busy * config_.busy_ratio)
                     : std::chrono::nanoseconds(config_.work_pause);
        if (pause.count() > 0) std::this_thread::sleep_for(pause);
      } else {
        std::this_thread::sleep_for(config_.idle_sleep);
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
  int work = 0;
  bool writing = false;
  const std::size_t blocks = block_count_.load(std::memory_order_acquire);
  for (std::size_t b = 0; b < blocks; ++b) {
    Block& block = *blocks_[b].load(std::memory_order_acquire);
    for (std::size_t i = 0; i < kBlock; ++i) {
      auto& slot = block.journals[i];
      Journal* j = slot.load(std::memory_order_acquire);
      if (j == nullptr) continue;
      const std::uint64_t position = j->write_position();
      writing |= position != block.positions[i];
      block.positions[i] = position;
      // Dekker with detach(): announce, then re-check the slot.
      current_.store(j, std::memory_order_seq_cst);
      if (slot.load(std::memory_order_seq_cst) == j) work += j->maintain(now);
      current_.store(nullptr, std::memory_order_release);
    }
  }
  writing_ = writing;
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
    for (auto& slot : blocks_[b].load(std::memory_order_acquire)->journals) {
      if (slot.load(std::memory_order_relaxed) == journal) slot.store(nullptr, std::memory_order_seq_cst);
    }
  }
  while (current_.load(std::memory_order_seq_cst) == journal) std::this_thread::yield();
}

}  // namespace hft::store
