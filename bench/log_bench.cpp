// Event log cost on the logging (engine) thread, per call.
//
// Boundary: one Logger::log() call of a 56-byte session line ("Message 1234
// Rejected: Required tag missing (tag 55) ..." shape) between two rdtsc
// reads, on a thread pinned to HFT_BENCH_CPU (default 0). StreamLogger writes
// to /dev/null (clock read, strftime, mutex, fprintf, fflush: the write(2)
// happens inside the call); AsyncLogger copies the line into its ring and
// its writer thread, unpinned, writes /dev/null. Calls are paced at one per
// 10 us (100,000 lines/s, a heavy log) so the writer keeps up, as it must in
// service; the spin to the planned time is outside the timed region.
//
// Each run prints p50, p99, p99.9 and the maximum of 100,000 calls in ns,
// and the lines the AsyncLogger dropped (0 expected at this pace).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "hft/core/clock.hpp"
#include "hft/core/cpu.hpp"
#include "hft/engine/async_logger.hpp"
#include "hft/engine/log.hpp"

namespace {

using namespace hft;

constexpr std::size_t kCalls = 100'000;
constexpr std::int64_t kPeriodNs = 10'000;
constexpr std::string_view kText = "Message 1234 Rejected: Required tag missing (tag 55)..";
const session::SessionID kId{"FIX.4.4", "VENUE", "CLIENT", ""};

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::atoi(v) : fallback;
}

void run(benchmark::State& state, session::Logger& log) {
  static const core::TscClock tsc = core::TscClock::calibrate();
  (void)core::pin_current_thread(env_int("HFT_BENCH_CPU", 0));
  std::vector<double> ns(kCalls);
  for (int i = 0; i < 1000; ++i) log.log(session::LogLevel::kWarn, kId, kText);  // warm-up
  for (auto _ : state) {
    const std::int64_t t0 = core::monotonic_ns() + 1'000'000;
    for (std::size_t i = 0; i < kCalls; ++i) {
      const std::int64_t due = t0 + static_cast<std::int64_t>(i) * kPeriodNs;
      while (core::monotonic_ns() < due) {
      }
      const std::uint64_t a = core::rdtsc_fenced();
      log.log(session::LogLevel::kWarn, kId, kText);
      const std::uint64_t b = core::rdtsc_fenced();
      ns[i] = tsc.to_ns(b - a);
    }
    state.SetIterationTime(static_cast<double>(kCalls) * kPeriodNs * 1e-9);
  }
  std::sort(ns.begin(), ns.end());
  auto at = [&](double q) { return ns[std::min(kCalls - 1, static_cast<std::size_t>(q * kCalls))]; };
  state.counters["p50_ns"] = at(0.50);
  state.counters["p99_ns"] = at(0.99);
  state.counters["p999_ns"] = at(0.999);
  state.counters["max_ns"] = ns.back();
}

void BM_StreamLogger_DevNull(benchmark::State& state) {
  auto log = engine::StreamLogger::open("/dev/null", session::LogLevel::kInfo);
  if (!log) {
    state.SkipWithError(log.error().message.c_str());
    return;
  }
  run(state, **log);
}

void BM_AsyncLogger_DevNull(benchmark::State& state) {
  engine::AsyncLoggerOptions o;
  o.file = "/dev/null";
  o.sessions = {{kId, ""}};
  auto log = engine::AsyncLogger::create(std::move(o));
  if (!log) {
    state.SkipWithError(log.error().message.c_str());
    return;
  }
  run(state, **log);
  (*log)->stop();
  state.counters["dropped"] = static_cast<double>((*log)->stats().dropped);
}

}  // namespace

BENCHMARK(BM_StreamLogger_DevNull)->Iterations(1)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AsyncLogger_DevNull)->Iterations(1)->UseManualTime()->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
