// What one admin request costs the engine thread (docs/admin.md, "Threading
// and what it costs the engine thread").
//
// Boundary: one Engine::poll() on the engine thread (this thread, pinned to
// HFT_BENCH_CPU, default 0) between two fenced rdtsc reads. The engine is an
// acceptor with N journaled sessions (FIX.4.4 VENUE->C1..CN, none connected)
// and its admin endpoint on (HttpAcceptPort=0; cpp-httplib's threads are
// started before this thread is pinned, so they keep the process's mask). A
// client thread of this program (pinned to HFT_BENCH_CLIENT_CPU, default 1,
// blocked while it waits) sends one GET per sample over a keep-alive
// connection. The engine thread polls only when it times a poll, after
// busy-waiting 2 ms without polling (so the endpoint's worker has published
// the request, and the engine's own data is not kept warm by polls in
// between); once it has made as many polls as the request needs it waits up
// to 200 ms for the answer, and stops once the client has it. Every answer can only
// have been made inside one of those timed polls, and one poll serves at most
// one mailbox request, so a sample whose request needed exactly as many
// polls as mailbox requests (GET /sessions: 1, the session snapshot; GET
// /metrics: 2, EngineStats then the snapshot) timed only polls that served
// one; any other sample (the worker was late) is counted as discarded.
//
//   request=0 idle      a poll with nothing pending, after the same 2 ms wait
//   request=1 sessions  GET /sessions: the poll that copies every session
//   request=2 metrics   GET /metrics: both polls, summed
//
// Reports p50, p90, p99, max (ns) of 1,000 samples per case after 50 warm-up
// samples, and for GET /metrics the two polls' p50s apart. The engine
// thread's cost of a request is its poll minus the idle poll.
#include <benchmark/benchmark.h>
#include <httplib.h>
#include <sched.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "hft/core/clock.hpp"
#include "hft/core/cpu.hpp"
#include "hft/engine/engine.hpp"

namespace {

using namespace hft;

constexpr std::size_t kSamples = 1'000;
constexpr std::size_t kWarmup = 50;
constexpr std::int64_t kGapNs = 2'000'000;  // busy wait before each timed poll
constexpr std::int64_t kAnswerNs =
    200'000'000;               // after the polls a request needs: wait this long for its answer
constexpr int kMaxPolls = 20;  // a sample still unanswered after these is polled to its end untimed

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::atoi(v) : fallback;
}

struct NoApp final : session::Application {};

// A client thread that sends GET `path` each time `go` is raised and raises
// `done` to the same number when the whole answer is in.
class Asker {
 public:
  Asker(int port, const char* path) : path_(path), thread_([this, port] { run(port); }) {}
  ~Asker() {
    go_.store(-1);
    go_.notify_one();
    thread_.join();
  }
  void ask(std::int64_t n) {
    go_.store(n, std::memory_order_release);
    go_.notify_one();
  }
  [[nodiscard]] std::int64_t done() const noexcept { return done_.load(std::memory_order_acquire); }
  [[nodiscard]] int failures() const noexcept { return failures_.load(); }

 private:
  void run(int port) {
    (void)core::pin_current_thread(env_int("HFT_BENCH_CLIENT_CPU", 1));
    httplib::Client client("127.0.0.1", port);
    client.set_keep_alive(true);
    client.set_read_timeout(10, 0);
    std::int64_t seen = 0;
    for (;;) {
      go_.wait(seen);  // blocked, not spinning: the endpoint's worker needs a CPU
      const std::int64_t n = go_.load(std::memory_order_acquire);
      if (n < 0) return;
      seen = n;
      auto res = client.Get(path_);
      if (!res || res->status != 200) failures_.fetch_add(1);
      done_.store(n, std::memory_order_release);
    }
  }

  const char* path_;
  std::atomic<std::int64_t> go_{0};
  std::atomic<std::int64_t> done_{0};
  std::atomic<int> failures_{0};
  std::thread thread_;
};

std::string config_text(const std::string& dir, int sessions) {
  std::string t =
      "[DEFAULT]\nConnectionType=acceptor\nBeginString=FIX.4.4\nSenderCompID=VENUE\nHeartBtInt=30\n"
      "NonStopSession=Y\nUseDataDictionary=N\nSocketAcceptPort=0\nSocketAcceptHost=127.0.0.1\n"
      "PollMode=busy\nIdleStrategy=busy-spin\nLogLevel=error\nHttpAcceptPort=0\nFileStorePath=" +
      dir + "\n";
  for (int i = 1; i <= sessions; ++i) t += "[SESSION]\nTargetCompID=C" + std::to_string(i) + "\n";
  return t;
}

void spin_until(std::int64_t until_ns, const Asker* asker, std::int64_t n) {
  while (core::monotonic_ns() < until_ns) {
    if (asker != nullptr && asker->done() == n) return;
  }
}

void BM_AdminPoll(benchmark::State& state) {
  static const core::TscClock tsc = core::TscClock::calibrate();
  // The mask this thread had before any case pinned it: each engine's
  // endpoint threads are started with it.
  static const cpu_set_t original = [] {
    cpu_set_t m;
    CPU_ZERO(&m);
    (void)::sched_getaffinity(0, sizeof m, &m);
    return m;
  }();
  (void)::sched_setaffinity(0, sizeof original, &original);
  const int sessions = static_cast<int>(state.range(0));
  const int kind = static_cast<int>(state.range(1));
  char tmpl[] = "/tmp/hft-admin-bench-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) {
    state.SkipWithError("mkdtemp failed");
    return;
  }
  const std::string dir = tmpl;
  NoApp app;
  auto config = engine::Config::parse(config_text(dir, sessions), "admin_bench.cfg");
  if (!config) {
    state.SkipWithError(config.error().message.c_str());
    return;
  }
  auto created = engine::Engine::create(*config, app);
  if (!created) {
    state.SkipWithError(created.error().message.c_str());
    return;
  }
  engine::Engine& e = **created;
  // Pinned after create(): the endpoint's threads keep the process's mask.
  (void)core::pin_current_thread(env_int("HFT_BENCH_CPU", 0));
  const int expected = kind == 2 ? 2 : 1;
  const char* path = kind == 2 ? "/metrics" : "/sessions";
  std::vector<double> total, first, second;
  total.reserve(kSamples);
  first.reserve(kSamples);
  second.reserve(kSamples);
  std::uint64_t discarded = 0;
  int failures = 0;
  for (auto _ : state) {
    Asker asker(e.admin_port(), path);
    std::int64_t n = 0;
    while (total.size() < kSamples) {
      const bool warm = n >= static_cast<std::int64_t>(kWarmup);
      if (kind == 0) {
        spin_until(core::monotonic_ns() + kGapNs, nullptr, 0);
        const std::uint64_t a = core::rdtsc_fenced();
        (void)e.poll();
        const std::uint64_t b = core::rdtsc_fenced();
        if (warm) total.push_back(tsc.to_ns(b - a));
        ++n;
        continue;
      }
      asker.ask(++n);
      double polls[kMaxPolls] = {};
      int count = 0;
      for (;;) {
        // Once the polls the request needs were made, its answer is only
        // waited for (the endpoint formats and writes it on its own threads).
        spin_until(core::monotonic_ns() + (count == expected ? kAnswerNs : kGapNs), &asker, n);
        if (asker.done() == n) break;
        if (count == kMaxPolls) {
          while (asker.done() != n) (void)e.poll();
          break;
        }
        const std::uint64_t a = core::rdtsc_fenced();
        (void)e.poll();
        const std::uint64_t b = core::rdtsc_fenced();
        polls[count++] = tsc.to_ns(b - a);
      }
      if (!warm) continue;
      if (count != expected) {
        ++discarded;
        continue;
      }
      total.push_back(expected == 2 ? polls[0] + polls[1] : polls[0]);
      first.push_back(polls[0]);
      if (expected == 2) second.push_back(polls[1]);
    }
    failures = asker.failures();
    state.SetIterationTime(static_cast<double>(n) * static_cast<double>(kGapNs) * 1e-9);
  }
  created->reset();
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  const auto at = [](std::vector<double>& v, double q) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0
                     : v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))];
  };
  state.counters["p50_ns"] = at(total, 0.50);
  state.counters["p90_ns"] = at(total, 0.90);
  state.counters["p99_ns"] = at(total, 0.99);
  state.counters["max_ns"] = total.empty() ? 0.0 : total.back();
  if (kind == 2) {
    state.counters["engine_poll_p50_ns"] = at(first, 0.50);
    state.counters["sessions_poll_p50_ns"] = at(second, 0.50);
  }
  state.counters["samples"] = static_cast<double>(total.size());
  state.counters["discarded"] = static_cast<double>(discarded);
  state.counters["http_failures"] = failures;
  if (failures != 0) state.SkipWithError("some GET requests failed");
}

}  // namespace

BENCHMARK(BM_AdminPoll)
    ->ArgNames({"sessions", "request"})
    ->ArgsProduct({{1, 10, 100}, {0, 1, 2}})
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
