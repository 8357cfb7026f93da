// Journal append latency, per call.
//
// Boundary: Journal::claim(230) + memcpy of the 230-byte reference message +
// Journal::commit (CRC, publish), one call between two rdtsc reads; the
// JournalService thread runs pinned on another CPU and prepares 64 MiB
// segments. Paced runs plan call i at t0 + i/rate and spin until then (the
// spin is outside the timed region), so the service has the time a real
// session would give it; unpaced runs show what happens when the writer
// outruns it (counted, not hidden).
//
// Environment: HFT_BENCH_CPU (writer CPU, default 0), HFT_BENCH_SERVICE_CPU
// (default 1), HFT_JOURNAL_BENCH_DIR (default /tmp; a subdirectory is made
// and removed), HFT_BENCH_FSYNC_NS (fsync interval, default 10 ms),
// HFT_BENCH_REWARM_WINDOW (bytes; 0 disables re-warming).
//
// Each run prints one line: percentiles of all calls, of the calls that
// rotated, the journal's counters (spare misses, spares taken before their
// pre-fault finished, inline creations), the writer thread's page faults and
// involuntary context switches during the timed loop (getrusage), and the
// service's longest spare preparation and flush.
#include <benchmark/benchmark.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "hft/core/clock.hpp"
#include "hft/core/cpu.hpp"
#include "hft/store/journal.hpp"
#include "hft/store/journal_service.hpp"
#include "hft/store/message_store.hpp"

namespace {

using namespace hft;

// The LAB.md reference NewOrderSingle (230 bytes on the wire).
constexpr char kReference[] =
    "8=FIXT.1.1\x01" "9=206\x01" "35=D\x01" "34=2\x01" "49=CLIENT1\x01" "52=20261130-14:36:30.691\x01"
    "56=EXECUTOR\x01" "50=SNDR_SUB\x01" "57=SRVR_SUB\x01" "11=1\x01" "55=NOKIA.HE\x01" "54=1\x01" "38=10\x01"
    "44=10000\x01" "40=2\x01" "59=0\x01" "453=2\x01" "448=PARTY1\x01" "447=D\x01" "452=1\x01" "448=PARTY2\x01"
    "447=D\x01" "452=3\x01" "60=20261130-14:36:30.691\x01" "10=110\x01";
constexpr std::size_t kRefSize = sizeof(kReference) - 1;
static_assert(kRefSize == 230);

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::atoi(v) : fallback;
}

// The affinity the process started with. A thread inherits its creator's
// mask, and core::pin_current_thread only accepts CPUs in the caller's mask,
// so the writer (pinned by an earlier benchmark) widens itself back before
// starting the service thread.
const cpu_set_t kStartAffinity = [] {
  cpu_set_t set;
  CPU_ZERO(&set);
  sched_getaffinity(0, sizeof(set), &set);
  return set;
}();

void unpin_current_thread() { sched_setaffinity(0, sizeof(kStartAffinity), &kStartAffinity); }

const core::TscClock& tsc() {
  static const core::TscClock clock = core::TscClock::calibrate();
  return clock;
}

std::string bench_dir(std::string tag) {
  for (char& c : tag)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  const char* base = std::getenv("HFT_JOURNAL_BENCH_DIR");
  return std::string(base != nullptr ? base : "/tmp") + "/hft_journal_bench_" + std::to_string(::getpid()) + "_" + tag;
}

struct Summary {
  double p50 = 0, p90 = 0, p99 = 0, p999 = 0, p9999 = 0, max = 0, mean = 0;
  double rotation_max = 0, rotation_p50 = 0, rotation_p99 = 0;
  std::size_t rotating_calls = 0;
  std::size_t over_1us = 0, over_20us = 0;
};

Summary summarise(const std::vector<std::uint64_t>& ticks, const std::vector<std::uint8_t>& rotated) {
  Summary s;
  std::vector<std::uint64_t> sorted(ticks);
  std::sort(sorted.begin(), sorted.end());
  const auto at = [&](double q) {
    const auto i = static_cast<std::size_t>(q * static_cast<double>(sorted.size() - 1));
    return tsc().to_ns(sorted[i]);
  };
  s.p50 = at(0.5);
  s.p90 = at(0.9);
  s.p99 = at(0.99);
  s.p999 = at(0.999);
  s.p9999 = at(0.9999);
  s.max = tsc().to_ns(sorted.back());
  double sum = 0;
  for (std::size_t i = 0; i < ticks.size(); ++i) {
    const double ns = tsc().to_ns(ticks[i]);
    sum += ns;
    s.over_1us += ns >= 1000.0;
    s.over_20us += ns >= 20000.0;
    if (rotated[i]) {
      ++s.rotating_calls;
      s.rotation_max = std::max(s.rotation_max, ns);
    }
  }
  s.mean = sum / static_cast<double>(ticks.size());
  std::vector<std::uint64_t> rot;
  for (std::size_t i = 0; i < ticks.size(); ++i)
    if (rotated[i]) rot.push_back(ticks[i]);
  std::sort(rot.begin(), rot.end());
  if (!rot.empty()) {
    s.rotation_p50 = tsc().to_ns(rot[rot.size() / 2]);
    s.rotation_p99 = tsc().to_ns(rot[(rot.size() - 1) * 99 / 100]);
  }
  return s;
}

long thread_minor_faults() {
  rusage ru{};
  getrusage(RUSAGE_THREAD, &ru);
  return ru.ru_minflt + ru.ru_majflt;
}

long thread_preemptions() {
  rusage ru{};
  getrusage(RUSAGE_THREAD, &ru);
  return ru.ru_nivcsw;
}

void report(benchmark::State& state, const char* name, const Summary& s, const store::JournalStats& st,
            long writer_faults = 0, long preemptions = 0) {
  state.counters["p50_ns"] = s.p50;
  state.counters["p99_ns"] = s.p99;
  state.counters["p99.99_ns"] = s.p9999;
  state.counters["max_ns"] = s.max;
  state.counters["rot_max_ns"] = s.rotation_max;
  state.counters["rotations"] = static_cast<double>(st.rotations);
  state.counters["spare_miss"] = static_cast<double>(st.spare_misses);
  state.counters["unfaulted"] = static_cast<double>(st.unfaulted_rotations);
  std::printf(
      "%-34s p50 %7.1f  p90 %7.1f  p99 %7.1f  p99.9 %8.1f  p99.99 %8.1f  max %9.1f  mean %6.1f ns | "
      "rotations %llu (p50 %.1f p99 %.1f max %.1f ns) spare_miss %llu unfaulted %llu inline %llu | >=1us %zu >=20us %zu | "
      "writer faults %ld preempted %ld | service prepare max %.1f ms, flush max %.2f ms\n",
      name, s.p50, s.p90, s.p99, s.p999, s.p9999, s.max, s.mean, static_cast<unsigned long long>(st.rotations),
      s.rotation_p50, s.rotation_p99, s.rotation_max, static_cast<unsigned long long>(st.spare_misses),
      static_cast<unsigned long long>(st.unfaulted_rotations), static_cast<unsigned long long>(st.inline_creations),
      s.over_1us, s.over_20us, writer_faults, preemptions, static_cast<double>(st.max_prepare_ns) * 1e-6,
      static_cast<double>(st.max_flush_ns) * 1e-6);
  std::fflush(stdout);
}

/// Runs `calls` timed appends (after 1000 warm-up ones) at `rate` per second
/// (0 = back to back).
void run_append(benchmark::State& state, const char* name, store::Durability durability, std::uint32_t alignment,
                std::size_t calls, double rate, std::size_t segment_size = std::size_t{64} << 20) {
  const std::string dir = bench_dir(name);
  std::filesystem::remove_all(dir);
  unpin_current_thread();
  store::JournalServiceConfig scfg;
  scfg.cpu = env_int("HFT_BENCH_SERVICE_CPU", 1);
  scfg.idle = core::IdleKind::kBackoff;
  store::JournalService service(scfg);
  if (auto started = service.start(); !started) {
    state.SkipWithError(started.error().message.c_str());
    return;
  }
  store::JournalConfig cfg;
  cfg.directory = dir;
  cfg.durability = durability;
  cfg.record_alignment = alignment;
  cfg.fsync_interval_ns = 10'000'000;
  cfg.segment_size = segment_size;
  if (const char* w = std::getenv("HFT_BENCH_REWARM_WINDOW")) cfg.rewarm_window = std::strtoull(w, nullptr, 10);
  if (const char* f = std::getenv("HFT_BENCH_FSYNC_NS")) cfg.fsync_interval_ns = std::strtoll(f, nullptr, 10);
  std::vector<std::uint64_t> ticks(calls);
  std::vector<std::uint8_t> rotated(calls);
  store::JournalStats st;
  long writer_faults = 0;
  long preemptions = 0;
  std::size_t failed = 0;
  {
    auto opened = store::Journal::open(cfg, &service);
    if (!opened) {
      state.SkipWithError(opened.error().message.c_str());
      return;
    }
    store::Journal& j = **opened;
    core::pin_current_thread(env_int("HFT_BENCH_CPU", 0));
    std::uint64_t seq = 1;
    for (int i = 0; i < 1000; ++i, ++seq) {
      std::span<char> room = j.claim(kRefSize);
      if (!room.empty()) std::memcpy(room.data(), kReference, kRefSize);
      (void)j.commit(seq, 0, 0, kRefSize);
    }
    const double ticks_per_call = rate > 0 ? tsc().hz() / rate : 0;
    const long faults_before = thread_minor_faults();
    const long preempt_before = thread_preemptions();
    for (auto _ : state) {
      const std::uint64_t start = core::rdtsc();
      for (std::size_t i = 0; i < calls; ++i, ++seq) {
        if (ticks_per_call > 0) {
          const auto planned = start + static_cast<std::uint64_t>(static_cast<double>(i) * ticks_per_call);
          while (core::rdtsc() < planned) core::cpu_relax();
        }
        const std::uint64_t before_segment = j.active_segment();
        const std::uint64_t t0 = core::rdtsc();
        std::span<char> room = j.claim(kRefSize);
        if (!room.empty()) [[likely]]
          std::memcpy(room.data(), kReference, kRefSize);
        const store::StoreStatus status = j.commit(seq, static_cast<std::int64_t>(t0), 0, kRefSize);
        const std::uint64_t t1 = core::rdtsc();
        ticks[i] = t1 - t0;
        rotated[i] = j.active_segment() != before_segment;
        if (status != store::StoreStatus::kOk) ++failed;
      }
      state.SetIterationTime(tsc().to_ns(core::rdtsc() - start) * 1e-9);
    }
    writer_faults = thread_minor_faults() - faults_before;
    preemptions = thread_preemptions() - preempt_before;
    st = j.stats();
  }
  service.stop();
  std::filesystem::remove_all(dir);
  if (failed != 0) std::printf("%s: %zu appends failed (last status: no spare / no space)\n", name, failed);
  report(state, name, summarise(ticks, rotated), st, writer_faults, preemptions);
}

// 64 MiB segments, 230-byte messages (264-byte records): 254k per segment,
// so 1.3 M calls cross 5 rotations. 100k calls/s is the lab's paced rate
// (LAB.md); 1M/s and back-to-back stress the service.
constexpr std::size_t kRotatingCalls = 1'300'000;

void BM_Append_Os_Paced100k(benchmark::State& state) {
  run_append(state, "append os align8 paced 100k/s", store::Durability::kOs, 8, kRotatingCalls, 1e5);
}
void BM_Append_Os_Align64_Paced100k(benchmark::State& state) {
  run_append(state, "append os align64 paced 100k/s", store::Durability::kOs, 64, kRotatingCalls, 1e5);
}
void BM_Append_Os_Paced1M(benchmark::State& state) {
  run_append(state, "append os align8 paced 1M/s", store::Durability::kOs, 8, kRotatingCalls, 1e6);
}
void BM_Append_Os_Unpaced(benchmark::State& state) {
  run_append(state, "append os align8 unpaced", store::Durability::kOs, 8, kRotatingCalls, 0);
}
/// Many rotations to see their distribution: 1 MiB segments (3,971 calls
/// each), 200 rotations; a rotation does the same work at any segment size.
void BM_Rotation_1MiB_Paced100k(benchmark::State& state) {
  run_append(state, "rotations, 1 MiB segments, 100k/s", store::Durability::kOs, 8, 800'000, 1e5, std::size_t{1} << 20);
}
void BM_Append_None_Paced100k(benchmark::State& state) {
  run_append(state, "durability none paced 100k/s", store::Durability::kNone, 8, 300'000, 1e5);
}
void BM_Append_OsShort_Paced100k(benchmark::State& state) {
  run_append(state, "durability os paced 100k/s", store::Durability::kOs, 8, 300'000, 1e5);
}
void BM_Append_Fsync10ms_Paced100k(benchmark::State& state) {
  run_append(state, "durability fsync/10ms paced 100k/s", store::Durability::kFsync, 8, 300'000, 1e5);
}
void BM_Append_Fsync10ms_Rotating(benchmark::State& state) {
  run_append(state, "fsync/10ms paced 100k/s rotating", store::Durability::kFsync, 8, kRotatingCalls, 1e5);
}
void BM_Append_Sync_Paced1k(benchmark::State& state) {
  run_append(state, "durability sync paced 1k/s", store::Durability::kSync, 8, 2'000, 1e3);
}

/// The store seam as the session calls it: virtual claim + copy + commit
/// (journal append and sequence-number file update).
void BM_StoreCommit_Paced100k(benchmark::State& state) {
  const std::string dir = bench_dir("store");
  std::filesystem::remove_all(dir);
  unpin_current_thread();
  store::JournalServiceConfig scfg;
  scfg.cpu = env_int("HFT_BENCH_SERVICE_CPU", 1);
  store::JournalService service(scfg);
  if (!service.start()) {
    state.SkipWithError("service");
    return;
  }
  store::JournalStoreConfig cfg;
  cfg.directory = dir;
  const std::size_t calls = 300'000;
  std::vector<std::uint64_t> ticks(calls);
  std::vector<std::uint8_t> rotated(calls);
  store::JournalStats st;
  {
    auto opened = store::JournalStore::open(cfg, &service);
    if (!opened) {
      state.SkipWithError(opened.error().message.c_str());
      return;
    }
    store::MessageStore& s = **opened;
    core::pin_current_thread(env_int("HFT_BENCH_CPU", 0));
    const double ticks_per_call = tsc().hz() / 1e5;
    for (auto _ : state) {
      const std::uint64_t start = core::rdtsc();
      for (std::size_t i = 0; i < calls; ++i) {
        const auto planned = start + static_cast<std::uint64_t>(static_cast<double>(i) * ticks_per_call);
        while (core::rdtsc() < planned) core::cpu_relax();
        const std::uint64_t t0 = core::rdtsc();
        std::span<char> room = s.claim(kRefSize + 40);
        if (!room.empty()) std::memcpy(room.data() + 40, kReference, kRefSize);
        (void)s.commit(s.next_sender_seq(), static_cast<std::int64_t>(t0), 40, kRefSize);
        ticks[i] = core::rdtsc() - t0;
      }
      state.SetIterationTime(tsc().to_ns(core::rdtsc() - start) * 1e-9);
    }
    st = s.stats().outbound;
  }
  service.stop();
  std::filesystem::remove_all(dir);
  report(state, "JournalStore claim+copy+commit 100k/s", summarise(ticks, rotated), st);
}

/// Cost of the measurement itself: two rdtsc reads around nothing.
void BM_TimerOverhead(benchmark::State& state) {
  const std::size_t calls = 1'000'000;
  std::vector<std::uint64_t> ticks(calls);
  std::vector<std::uint8_t> rotated(calls);
  core::pin_current_thread(env_int("HFT_BENCH_CPU", 0));
  for (auto _ : state) {
    for (std::size_t i = 0; i < calls; ++i) {
      const std::uint64_t t0 = core::rdtsc();
      benchmark::ClobberMemory();
      ticks[i] = core::rdtsc() - t0;
    }
  }
  report(state, "rdtsc pair (timer overhead)", summarise(ticks, rotated), store::JournalStats{});
  state.counters["tsc_ghz"] = tsc().hz() * 1e-9;
}

/// The check a session makes before each received message
/// (MessageStore::ready_for, through the virtual seam as the session calls
/// it): room for the message and an answer of MaxMessageSize (4 KiB here)
/// in a journal whose segment has it, the common case.
void BM_StoreReadyFor(benchmark::State& state) {
  const std::string dir = bench_dir("ready");
  std::filesystem::remove_all(dir);
  unpin_current_thread();
  store::JournalService service;
  if (!service.start()) {
    state.SkipWithError("service");
    return;
  }
  {
    store::JournalStoreConfig cfg;
    cfg.directory = dir;
    cfg.journal_inbound = true;
    auto opened = store::JournalStore::open(cfg, &service);
    if (!opened) {
      state.SkipWithError(opened.error().message.c_str());
      return;
    }
    store::MessageStore* s = opened->get();
    benchmark::DoNotOptimize(s);
    std::size_t ready = 0;
    for (auto _ : state) {
      ready += s->ready_for(kRefSize, 4096) ? 1 : 0;
      benchmark::ClobberMemory();
    }
    if (ready != static_cast<std::size_t>(state.iterations())) state.SkipWithError("not ready");
  }
  service.stop();
  std::filesystem::remove_all(dir);
}

}  // namespace

BENCHMARK(BM_StoreReadyFor);
BENCHMARK(BM_TimerOverhead)->Iterations(1);
BENCHMARK(BM_Append_Os_Paced100k)->Iterations(1)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Append_Os_Align64_Paced100k)->Iterations(1)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Rotation_1MiB_Paced100k)->Iterations(1)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Append_Os_Paced1M)->Iterations(1)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Append_Os_Unpaced)->Iterations(1)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Append_None_Paced100k)->Iterations(1)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Append_OsShort_Paced100k)->Iterations(1)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Append_Fsync10ms_Paced100k)->Iterations(1)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Append_Fsync10ms_Rotating)->Iterations(1)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Append_Sync_Paced1k)->Iterations(1)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_StoreCommit_Paced100k)->Iterations(1)->UseManualTime()->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
