// Idle strategies for agents (an agent's do_work() returns how much it did;
// the idle strategy decides what to do when that is zero).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <thread>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace hft::core {

enum class IdleKind : std::uint8_t {
  kBusySpin,  ///< never yields the CPU (lowest latency, burns a core)
  kBackoff,   ///< spin, then yield, then park for growing intervals up to 1 ms
  kSleep,     ///< sleep 1 ms whenever idle
};

/// Parses "busy-spin" / "backoff" / "sleep". Empty optional if unknown.
[[nodiscard]] std::optional<IdleKind> parse_idle_kind(std::string_view name) noexcept;
/// The name parse_idle_kind accepts for `kind`.
[[nodiscard]] std::string_view to_string(IdleKind kind) noexcept;

inline void cpu_relax() noexcept {
#if defined(__x86_64__)
  _mm_pause();
#endif
}

/// Call idle(work) after each duty cycle with the work count it returned.
class IdleStrategy {
 public:
  explicit IdleStrategy(IdleKind kind = IdleKind::kBackoff) noexcept : kind_(kind) {}

  void idle(int work_count) noexcept {
    if (work_count > 0) {
      idle_rounds_ = 0;
      return;
    }
    switch (kind_) {
      case IdleKind::kBusySpin:
        cpu_relax();
        return;
      case IdleKind::kSleep:
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        return;
      case IdleKind::kBackoff:
        ++idle_rounds_;
        if (idle_rounds_ < 1000) {
          cpu_relax();
        } else if (idle_rounds_ < 1100) {
          std::this_thread::yield();
        } else {
          const std::uint32_t shift = idle_rounds_ - 1100 < 10 ? idle_rounds_ - 1100 : 10;
          std::this_thread::sleep_for(std::chrono::microseconds(1u << shift));
        }
        return;
    }
  }

  [[nodiscard]] IdleKind kind() const noexcept { return kind_; }

 private:
  IdleKind kind_;
  std::uint32_t idle_rounds_ = 0;
};

}  // namespace hft::core
