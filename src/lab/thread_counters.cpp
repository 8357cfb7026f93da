#include "hft/lab/thread_counters.hpp"

#include <sys/resource.h>

namespace hft::lab {

ThreadCounterSampler::ThreadCounterSampler(std::size_t capacity) : windows_(capacity) {}

ThreadCounterSampler::Counters ThreadCounterSampler::read() noexcept {
  rusage u{};
  (void)::getrusage(RUSAGE_THREAD, &u);
  Counters c;
  c.involuntary = static_cast<std::uint64_t>(u.ru_nivcsw);
  c.voluntary = static_cast<std::uint64_t>(u.ru_nvcsw);
  c.minor = static_cast<std::uint64_t>(u.ru_minflt);
  c.major = static_cast<std::uint64_t>(u.ru_majflt);
  return c;
}

void ThreadCounterSampler::start(std::uint64_t now) noexcept {
  last_ = read();
  last_tsc_ = now;
}

void ThreadCounterSampler::sample(std::uint64_t now) noexcept {
  const Counters c = read();
  ++samples_;
  if (c.involuntary != last_.involuntary || c.voluntary != last_.voluntary || c.minor != last_.minor ||
      c.major != last_.major) {
    if (size_ < windows_.size()) {
      Window& w = windows_[size_++];
      // The window starts just after the previous sample: what that sample
      // counted belongs to the call before.
      w.begin = last_tsc_ + 1;
      w.end = now;
      w.delta = {c.involuntary - last_.involuntary, c.voluntary - last_.voluntary, c.minor - last_.minor,
                 c.major - last_.major};
    } else {
      ++dropped_;
    }
  }
  last_ = c;
  last_tsc_ = now;
}

std::vector<RunEvent> ThreadCounterSampler::events(std::uint64_t origin, const std::string& thread) const {
  std::vector<RunEvent> out;
  const auto add = [&](const Window& w, const char* kind, std::uint64_t n) {
    if (n == 0) return;
    RunEvent e;
    e.source = "os";
    e.kind = kind;
    e.thread = thread;
    e.begin = static_cast<std::int64_t>(w.begin - origin);
    e.end = static_cast<std::int64_t>(w.end - origin);
    e.a = n;
    out.push_back(std::move(e));
  };
  for (std::size_t k = 0; k < size_; ++k) {
    const Window& w = windows_[k];
    add(w, "involuntary_switches", w.delta.involuntary);
    add(w, "voluntary_switches", w.delta.voluntary);
    add(w, "minor_faults", w.delta.minor);
    add(w, "major_faults", w.delta.major);
  }
  return out;
}

}  // namespace hft::lab
