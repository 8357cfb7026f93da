// The load lane: many sessions per engine (issue 15). N client sessions
// (--sessions, one run set per entry; CLIENT1..N) stream orders from one or
// two pinned load-generator threads (--load-threads) into ONE hft-venue
// engine thread (pinned to --server-core), while one extra session, PROBE,
// on its own connection sends one order at a time and times each round trip.
//
//   load thread 0 (--client-core)         hft-venue (--server-core)
//     generator: CLIENT1..  epoll  ----->  one engine thread, N+1 sessions,
//     probe PROBE (window 1), polled       validation FIXT11 + FIX50SP2,
//       once per loop iteration            journals in RUN/venue-store (a
//                                          journal per session and direction,
//                                          or --venue-journal shared: one,
//                                          RUN/venue-store/shared-journal)
//   [load thread 1 (--load-core, default --client-core): CLIENT2, 4, ...]
//
// One run (one N, one variant):
//   1. start the venue (generated config, N+1 sessions); start-up = spawn ->
//      its port accepts -> the probe's Logon answered
//   2. connect and log on the N load sessions, let the journal threads settle
//   3. warm-up: --warmup orders over the load sessions, then up to 1,000
//      probe orders, none recorded
//   4. probe alone ("unloaded"): --probe-calls orders, closed loop
//   5. load phase: --calls orders over the N sessions, variant
//        max    each session as fast as its --window allows
//        paced  --load-rate orders/s over all sessions (arrival i planned at
//               t0 + i/rate; chunks of up to 16 consecutive orders to one
//               session per send(), sent when the chunk's first order is
//               due, sessions in round robin; late orders counted); default half
//               the rx lane's rate with 8 clients in this invocation (the
//               criterion's load); without one, half of what max reached in
//               the same run set (its max run; if none ran, a max phase of
//               --calls orders is run first here)
//      with the probe in closed loop throughout ("loaded")
//   6. venue memory (/proc/PID/status), log out, stop, disk (st_blocks of
//      RUN/venue-store), audit every session's journals (shared: every
//      session's streams and the journal itself in one pass over it)
//
// The probe's round trip is TSC just before its send() to TSC after the
// recv() that returned its ExecutionReport. Under load it includes the load
// thread's loop (the probe is read once per iteration and after every 8
// ready connections of it): that is the cost of a client sharing a core
// with its load, and is in the figure.
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <sstream>
#include <thread>
#include <vector>

#include "hft/core/clock.hpp"
#include "hft/core/cpu.hpp"
#include "hft/core/expected.hpp"
#include "hft/engine/trace_file.hpp"
#include "hft/lab/bench.hpp"
#include "hft/lab/report.hpp"
#include "hft/lab/stats.hpp"
#include "lane_support.hpp"
#include "load_generator.hpp"

namespace hft::lab::lanes {
namespace {

constexpr const char* kProbeComp = "PROBE";
constexpr std::uint64_t kProbeWarmup = 1000;

struct LoadSettings {
  std::vector<std::uint32_t> sessions_all;  ///< --sessions
  std::uint32_t sessions = 0;               ///< this run's N (after expansion)
  std::uint32_t threads = 1;
  int second_core = -1;                     ///< thread 1's CPU
  double rate = 0;                          ///< --load-rate; 0: half of rx with 8 clients (or of max)
  std::uint64_t probe_calls = 10'000;
  bool venue_busy = false;                  ///< --venue-poll busy
  bool shared_journal = false;              ///< --venue-journal shared (JournalLayout=shared)
  int journal_core = VenueSpec::kSameAsCore;  ///< --venue-journal-core
};

std::string extra_or(const LaneConfig& c, const char* key, const char* fallback) {
  const auto it = c.extra.find(key);
  return it == c.extra.end() ? std::string(fallback) : it->second;
}

bool parse_u64(const std::string& s, std::uint64_t& out) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos || s.size() > 18) return false;
  out = std::stoull(s);
  return true;
}

/// A CPU this process may run on, or -1 (unpinned); the error names `option`.
Expected<int> parse_cpu(const char* option, const std::string& text) {
  if (text == "-1") return -1;
  std::uint64_t cpu = 0;
  if (!parse_u64(text, cpu) || !core::cpu_exists(static_cast<int>(cpu))) {
    return Error{std::string(option) + " " + text +
                 ": CPU does not exist or is not allowed for this process (or -1: unpinned)"};
  }
  return static_cast<int>(cpu);
}

Expected<std::vector<std::uint32_t>> parse_sessions(const std::string& text) {
  std::vector<std::uint32_t> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    std::string digits;
    for (const char ch : item) {
      if (ch != '_' && ch != '\'' && ch != ' ') digits += ch;  // 1,000 is two items; 1_000 or 1000 one
    }
    std::uint64_t n = 0;
    if (!parse_u64(digits, n) || n == 0 || n > 65000) {
      return Error{"--sessions " + text + ": '" + item + "' is not a session count from 1 to 65000 (e.g. --sessions 10,100,1000)"};
    }
    out.push_back(static_cast<std::uint32_t>(n));
  }
  if (out.empty()) return Error{"--sessions: give at least one session count (e.g. --sessions 10,100,1000)"};
  return out;
}

Expected<LoadSettings> load_settings(const LaneConfig& c) {
  LoadSettings s;
  auto all = parse_sessions(extra_or(c, "sessions-list", extra_or(c, "sessions", "10,100,1000").c_str()));
  if (!all) return all.error();
  s.sessions_all = *all;
  auto mine = parse_sessions(extra_or(c, "sessions", "10,100,1000"));
  if (!mine) return mine.error();
  s.sessions = mine->front();
  std::uint64_t v = 0;
  const std::string threads = extra_or(c, "load-threads", "1");
  if (!parse_u64(threads, v) || (v != 1 && v != 2)) return Error{"--load-threads " + threads + ": use 1 or 2"};
  s.threads = static_cast<std::uint32_t>(v);
  const std::string core = extra_or(c, "load-core", "");
  if (core.empty()) {
    s.second_core = c.client_core;
  } else {
    auto cpu = parse_cpu("--load-core", core);
    if (!cpu) return cpu.error();
    s.second_core = *cpu;
  }
  const std::string rate = extra_or(c, "load-rate", "half");
  if (rate != "half") {
    char* end = nullptr;
    s.rate = std::strtod(rate.c_str(), &end);
    if (end == rate.c_str() || *end != 0 || !(s.rate > 0)) {
      return Error{"--load-rate " + rate +
                   ": messages/s over all sessions, > 0 (or 'half': half of rx with 8 clients, or of max)"};
    }
  }
  const std::string probe = extra_or(c, "probe-calls", "10000");
  if (!parse_u64(probe, s.probe_calls) || s.probe_calls == 0) {
    return Error{"--probe-calls " + probe + ": a whole number of probe orders, at least 1"};
  }
  const std::string poll = extra_or(c, "venue-poll", "epoll");
  if (poll != "epoll" && poll != "busy") return Error{"--venue-poll " + poll + ": use epoll or busy"};
  s.venue_busy = poll == "busy";
  const std::string layout = extra_or(c, "venue-journal", "session");
  if (layout != "session" && layout != "shared") {
    return Error{"--venue-journal " + layout +
                 ": use session (a journal per session and direction) or shared (JournalLayout=shared)"};
  }
  s.shared_journal = layout == "shared";
  if (const std::string journal_core = extra_or(c, "venue-journal-core", ""); !journal_core.empty()) {
    auto cpu = parse_cpu("--venue-journal-core", journal_core);
    if (!cpu) return cpu.error();
    s.journal_core = *cpu;
  }
  return s;
}

/// Where the venue's journal service runs, as its config places it.
std::string journal_placement(const VenueSpec& spec) {
  const int cpu = spec.journal_thread_core();
  if (spec.journal_core == VenueSpec::kSameAsCore) {
    return cpu >= 0 ? "beside the engine thread (JournalThreadCore = --server-core)"
                    : "not pinned (--server-core -1)";
  }
  return cpu >= 0 ? "on CPU " + std::to_string(cpu) + " (--venue-journal-core)"
                  : "not pinned (--venue-journal-core -1)";
}

/// max's messages/s per run set (arm, repeat, N), for paced's default rate
/// and the criterion.
std::map<std::string, double>& max_rates() {
  static std::map<std::string, double> rates;
  return rates;
}
std::string set_key(const LaneConfig& c, std::uint32_t n) {
  return c.arm + "/" + std::to_string(c.repeat) + "/" + std::to_string(n);
}

/// The rx runs with 8 clients of this invocation the criterion compares
/// with: full-size journal segments (busy or epoll), and rx's growing
/// variant (the load lane's journal settings) beside it; the base arm's if
/// there are several. Null where none ran.
struct CriterionRx {
  const RxFigure* full = nullptr;
  const RxFigure* growing = nullptr;
};
CriterionRx criterion_rx(const LaneConfig& cfg) {
  CriterionRx out;
  for (const RxFigure& f : rx_figures()) {
    if (f.connections != 8) continue;
    const RxFigure*& slot = f.variant == "growing" ? out.growing : out.full;
    if (slot == nullptr || f.arm == extra_or(cfg, "base-arm", "default")) slot = &f;
  }
  return out;
}

/// Open-file limit for N + 1 client sockets here and as many accepted ones
/// plus two journals per session in the venue (which inherits the limit):
/// per session two sockets, seqnums.dat and, per journal, its active
/// segment, a spare, one being unmapped and up to four finished ones held
/// for their eviction from the page cache (JournalEvictFinished). Raises
/// the soft limit up to the hard one. Returns a note or an error.
Expected<std::string> ensure_fd_limit(std::uint32_t sessions) {
  const rlim_t need = static_cast<rlim_t>(sessions) * 17 + 256;
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) != 0) return std::string("RLIMIT_NOFILE not readable");
  if (lim.rlim_cur >= need) return "RLIMIT_NOFILE " + std::to_string(lim.rlim_cur) + " (enough)";
  if (lim.rlim_max < need) {
    return Error{"the open-file limit (RLIMIT_NOFILE hard " + std::to_string(lim.rlim_max) + ") is below the " +
                 std::to_string(need) + " that " + std::to_string(sessions) +
                 " sessions need; raise it (ulimit -Hn) or use fewer --sessions"};
  }
  const rlim_t before = lim.rlim_cur;
  lim.rlim_cur = need;
  if (::setrlimit(RLIMIT_NOFILE, &lim) != 0) return Error{"setrlimit(RLIMIT_NOFILE) failed"};
  return "RLIMIT_NOFILE raised from " + std::to_string(before) + " to " + std::to_string(need);
}

class ProbeHook final : public PumpHook {
 public:
  explicit ProbeHook(LoadGenerator& probe) : probe_(probe) {}
  Expected<void> on_pump() override { return probe_.step(); }

 private:
  LoadGenerator& probe_;
};

struct PhaseOutcome {
  std::vector<int> cpu_start, cpu_end;  ///< per generator thread (index 0: the caller's)
  std::uint64_t t_end = 0;
  std::uint64_t late = 0;
  std::uint64_t batches = 0;
  std::uint64_t max_in_flight = 0;  ///< most unanswered orders of one session
  std::uint64_t pumps = 0, idle_pumps = 0;  ///< load thread 0's (PhaseStats)
};

/// One phase over every load generator: generator 0 on this thread, the
/// others on threads pinned to `second_core`; all share `shared`.
Expected<PhaseOutcome> run_phase(std::vector<std::unique_ptr<LoadGenerator>>& gens,
                                 const std::vector<std::uint64_t>& orders, double rate, bool measured,
                                 PhaseShared* shared, PumpHook* hook, const RunContext& ctx,
                                 std::uint64_t progress_base, int second_core, std::uint32_t sessions) {
  // The other threads are created and pinned first and wait (futex, not
  // spinning: they may share this core) for t0, so neither thread creation
  // nor the pinning falls inside the phase.
  std::uint64_t t0 = 0;
  PhaseShared unmeasured;  // an unmeasured phase counts nothing; its abort flag still stops every thread
  if (shared == nullptr) shared = &unmeasured;
  std::atomic<bool> go{false};
  std::atomic<std::uint32_t> ready{0};
  std::vector<std::optional<Expected<PhaseStats>>> results(gens.size());
  PhaseOutcome out;
  out.cpu_start.assign(gens.size(), -1);
  out.cpu_end.assign(gens.size(), -1);
  std::vector<std::thread> others;
  const auto spec_for = [&](std::size_t k) {
    PhaseSpec s;
    s.orders = orders[k];
    s.measured = measured;
    s.shared = shared;
    s.ctx = &ctx;
    s.progress_base = progress_base;
    s.t0 = t0;
    // Each generator paces its share of the rate: its share of the sessions.
    s.rate = rate > 0 ? rate * static_cast<double>(gens[k]->conns().size()) / sessions : 0;
    s.hook = k == 0 ? hook : nullptr;
    return s;
  };
  for (std::size_t k = 1; k < gens.size(); ++k) {
    others.emplace_back([&, k] {
      core::name_current_thread("load-gen");
      if (!core::pin_current_thread(second_core)) {
        results[k] = Error{"cannot pin load thread " + std::to_string(k) + " to CPU " + std::to_string(second_core)};
        shared->abort.store(true);
        ready.fetch_add(1);
        ready.notify_one();
        return;
      }
      ready.fetch_add(1);
      ready.notify_one();
      go.wait(false);
      out.cpu_start[k] = core::current_cpu();
      results[k] = gens[k]->phase(spec_for(k));
      out.cpu_end[k] = core::current_cpu();
    });
  }
  for (std::uint32_t r = ready.load(); r < others.size(); r = ready.load()) ready.wait(r);
  t0 = tsc_now();
  shared->t_start = t0;
  go.store(true);
  go.notify_all();
  out.cpu_start[0] = core::current_cpu();
  results[0] = gens[0]->phase(spec_for(0));
  out.cpu_end[0] = core::current_cpu();
  for (std::thread& t : others) t.join();
  for (std::size_t k = 0; k < gens.size(); ++k) {
    if (!*results[k]) return Error{"load thread " + std::to_string(k) + ": " + results[k]->error().message};
    out.t_end = std::max(out.t_end, (*results[k])->last_ack);
    out.late += (*results[k])->late;
    out.batches += (*results[k])->batches;
    out.max_in_flight = std::max(out.max_in_flight, (*results[k])->max_in_flight);
  }
  out.pumps = (*results[0])->pumps;
  out.idle_pumps = (*results[0])->idle_pumps;
  return out;
}

struct Outcome {
  std::optional<Error> error;
  RunResult result;
};

std::string fmt(const char* f, double a) {
  char text[64];
  std::snprintf(text, sizeof text, f, a);
  return text;
}

void add_probe_figures(RunResult& r, const char* which, const Stats& s) {
  const std::string p = std::string("load.probe_") + which + "_";
  r.notes.emplace_back(p + "count", std::to_string(s.count));
  r.notes.emplace_back(p + "p50_ns", fmt("%.0f", s.quantile("p50")));
  r.notes.emplace_back(p + "p99_ns", fmt("%.0f", s.quantile("p99")));
  r.notes.emplace_back(p + "p99.9_ns", fmt("%.0f", s.quantile("p99.9")));
  r.notes.emplace_back(p + "max_ns", fmt("%.0f", s.max_ns));
}

void run_load_thread(const LaneConfig& cfg, RunContext& ctx, Outcome& out) {
  core::name_current_thread("load-gen");
  RunResult& result = out.result;
  auto parsed = load_settings(cfg);
  if (!parsed) {
    out.error = parsed.error();
    return;
  }
  const LoadSettings set = *parsed;
  const std::uint32_t n = set.sessions;
  ThreadPlacement place{"load thread 0 + probe", cfg.client_core, -1, -1};
  if (!core::pin_current_thread(cfg.client_core)) {
    out.error = Error{"cannot pin the load thread to CPU " + std::to_string(cfg.client_core)};
    return;
  }
  place.cpu_at_start = core::current_cpu();
  const double hz = ctx.tsc->hz();

  // 1. The venue: N + 1 sessions.
  auto fds = ensure_fd_limit(n + 1);
  if (!fds) {
    out.error = fds.error();
    return;
  }
  result.notes.emplace_back("open files", *fds);
  VenueSpec spec;
  spec.sessions.clear();
  for (std::uint32_t k = 0; k < n; ++k) spec.sessions.push_back({"CLIENT" + std::to_string(k + 1), {}});
  spec.sessions.push_back({kProbeComp, {}});
  spec.busy_poll = set.venue_busy;
  spec.epoll_spin = !set.venue_busy;
  spec.core = cfg.server_core;
  spec.journal_core = set.journal_core;
  // Every session's journals as the engine makes them by default: the first
  // segment at the Logon, each next one twice as large, up to --segment-size.
  spec.segment_size = cfg.segment_size;
  spec.full_size_segments = false;
  spec.prealloc = cfg.prealloc;
  spec.shared_journal = set.shared_journal;
  spec.listen_timeout_s = 15.0 + 0.1 * n;
  // Exit logs out and closes every session and unmaps its journals: 3.8 s
  // for 1,001 sessions that never logged on, more after traffic.
  spec.stop_timeout_s = 10.0 + 0.05 * n;
  // The venue of a large N may want more memory than the host has; it is
  // stopped at 75% of what was available rather than meeting the OOM killer.
  if (const std::int64_t avail = mem_available_kib(); avail > 0) spec.max_rss_kib = avail / 4 * 3;
  // A paced run's venue keeps its event trace (segment creation, pre-faults,
  // zero fills, rotations, unmaps; hft/core/trace.hpp), so that the probe's
  // long round trips are lined up with what the venue did meanwhile. Not the
  // max run's: its memory figures are the lane's headline, and the trace
  // ring (hft-venue's default, 262,144 records, ~12 MiB touched at start)
  // would be among them; the paced run's figures include it.
  const bool traced = cfg.variant == "paced";
  if (traced) spec.trace_file = (cfg.run_dir / "venue.trace").string();
  const auto t_spawn = std::chrono::steady_clock::now();
  auto started = VenueProcess::start(spec, cfg.run_dir);
  if (!started) {
    out.error = Error{"venue: " + started.error().message};
    return;
  }
  std::unique_ptr<VenueProcess> venue = std::move(*started);
  const auto t_listen = std::chrono::steady_clock::now();
  result.notes.emplace_back(
      "venue", "hft-venue pid " + std::to_string(venue->pid()) + ", " + std::to_string(n) +
                   " load sessions + PROBE, PollMode=" +
                   (set.venue_busy ? "busy" : "epoll (EpollTimeoutMs=0, busy-spin)") + ", --no-fill, " +
                   (set.shared_journal ? "JournalLayout=shared (one journal for every session, "
                                         "venue-store/shared-journal; the session directories hold "
                                         "seqnums.dat only)"
                                       : "JournalLayout=session (a journal per session and direction)") +
                   ", journal segments growing from the engine's "
                   "JournalInitialSegmentSize up to " +
                   std::to_string(spec.segment_size >> 20) +
                   " MiB, MaxConnections unset (every configured session), journal service " +
                   journal_placement(spec));
  result.notes.emplace_back("load.venue_journal", set.shared_journal ? "shared" : "session");
  if (ctx.progress_total != nullptr) ctx.progress_total->store(cfg.warmup + cfg.calls);

  // Until the logons are done (connection buffers come with them), a
  // watchdog keeps the venue under the same memory limit; it is gone
  // before anything is measured.
  std::atomic<bool> logons_done{false};
  std::atomic<std::int64_t> rss_over{0};
  std::thread watchdog([&, pid = venue->pid(), limit = spec.max_rss_kib] {
    while (limit > 0 && !logons_done.load()) {
      if (const std::int64_t rss = process_memory(pid).vm_rss_kib; rss > limit) {
        rss_over.store(rss);
        ::kill(pid, SIGKILL);  // its connections close: the logons fail
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });
  struct JoinOnExit {
    std::atomic<bool>& done;
    std::thread& t;
    ~JoinOnExit() {
      done.store(true);
      if (t.joinable()) t.join();
    }
  } join_watchdog{logons_done, watchdog};
  const auto fail = [&](const Error& e) {
    logons_done.store(true);
    if (watchdog.joinable()) watchdog.join();
    if (const std::int64_t rss = rss_over.load(); rss > 0) {
      out.error = Error{"hft-venue's resident memory reached " + std::to_string(rss >> 10) +
                        " MiB during the logons, over the limit of " + std::to_string(spec.max_rss_kib >> 10) +
                        " MiB (75% of MemAvailable at start); killed (" + e.message + ")"};
      return;
    }
    out.error = Error{e.message + " (venue log: " + venue->log_tail(400) + ")"};
  };

  // The probe: its own connection and session, one order in flight.
  LoadGeneratorOptions probe_options;
  probe_options.hz = hz;
  probe_options.window = 1;
  probe_options.rx_buffer = 64 << 10;
  probe_options.stamp_at_send = true;
  LoadGenerator probe(probe_options);
  if (auto e = probe.connect(venue->port(), {kProbeComp}); !e) return fail(e.error());
  if (auto e = probe.logon_all(15.0 + 0.1 * n); !e) return fail(e.error());
  const auto t_logon = std::chrono::steady_clock::now();
  const double listen_s = std::chrono::duration<double>(t_listen - t_spawn).count();
  const double startup_s = std::chrono::duration<double>(t_logon - t_spawn).count();

  // 2. The load sessions, split over the threads (CLIENT k on thread k % T):
  // every connection first, then every Logon at once, as many clients
  // reconnecting after a venue restart would.
  const auto t_logons = std::chrono::steady_clock::now();
  std::vector<std::unique_ptr<LoadGenerator>> gens;
  std::vector<std::vector<std::string>> ids(set.threads);
  for (std::uint32_t k = 0; k < n; ++k) ids[k % set.threads].push_back("CLIENT" + std::to_string(k + 1));
  for (std::uint32_t t = 0; t < set.threads; ++t) {
    LoadGeneratorOptions o;
    o.hz = hz;
    o.window = cfg.window;
    o.use_epoll = true;
    o.rx_buffer = std::max<std::size_t>(64 << 10, static_cast<std::size_t>(cfg.window) * kLoadSlot * 2);
    o.id_stride = set.threads;
    o.id_offset = t;
    gens.push_back(std::make_unique<LoadGenerator>(o));
    if (ids[t].empty()) continue;
    if (auto e = gens.back()->connect(venue->port(), ids[t]); !e) return fail(e.error());
    if (auto e = gens.back()->logon_all(30.0 + 0.1 * n); !e) return fail(e.error());
  }
  if (gens.size() > 1 && gens.back()->conns().empty()) gens.pop_back();  // N = 1 with two threads
  const double logons_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_logons).count();
  result.notes.emplace_back("load.logons_s", fmt("%.3f", logons_s));
  logons_done.store(true);
  watchdog.join();
  if (rss_over.load() > 0) return fail(Error{"after the logons"});
  result.notes.emplace_back("settle", wait_journal_threads_idle({venue->pid()}, 10.0 + 0.05 * n));
  result.threads.push_back({"venue", cfg.server_core, venue->engine_cpu(), -1});
  for (std::size_t t = 1; t < gens.size(); ++t) {
    result.threads.push_back({"load thread " + std::to_string(t) + " (measured phase)", set.second_core, -1, -1});
  }

  const auto split = [&](std::uint64_t total) {
    std::vector<std::uint64_t> parts;
    for (const auto& g : gens) parts.push_back(total * g->conns().size() / n);
    std::uint64_t given = 0;
    for (const std::uint64_t p : parts) given += p;
    parts[0] += total - given;
    return parts;
  };

  // 3. Warm-up.
  if (cfg.warmup > 0) {
    auto w = run_phase(gens, split(cfg.warmup), 0, false, nullptr, nullptr, ctx, 0, set.second_core, n);
    if (!w) return fail(w.error());
  }
  {
    PhaseSpec warm;
    warm.orders = std::min<std::uint64_t>(kProbeWarmup, std::max<std::uint64_t>(cfg.warmup, 1));
    if (auto w = probe.phase(warm); !w) return fail(w.error());
  }

  // 4. Probe alone.
  probe.record_rtt(probe.next_index(), set.probe_calls);
  {
    PhaseSpec alone;
    alone.orders = set.probe_calls;
    if (auto w = probe.phase(alone); !w) return fail(w.error());
  }
  if (const auto missing = probe.unmatched(set.probe_calls); missing != 0) {
    return fail(Error{std::to_string(missing) + " unloaded probe orders got no ExecutionReport"});
  }
  Series unloaded = probe.rtt_series("probe_rtt_unloaded", set.probe_calls);

  // 5. The rate of a paced run.
  // The criterion: the 1,000-session run sustains at least rx's
  // rate with 8 clients, with the probe's p99 under 2x unloaded "at a load
  // of half that rate": half of rx's rate when rx ran in this invocation.
  // Half of max only without one (half of max would make every gain in
  // max a higher load for the probe, and a max below rx a lower one).
  double rate = 0;
  std::string rate_origin;
  std::string rate_kind;
  if (cfg.variant == "paced") {
    const RxFigure* rx8 = criterion_rx(cfg).full;
    if (set.rate > 0) {
      rate = set.rate;
      rate_origin = "--load-rate";
      rate_kind = "--load-rate, not half of rx with 8 clients";
    } else if (rx8 != nullptr) {
      rate = rx8->messages_per_s / 2;
      rate_origin = "half of the rx lane's rate with 8 clients in this invocation (" +
                    fmt("%.0f", rx8->messages_per_s) + " messages/s)";
      rate_kind = "half of rx with 8 clients";
    } else if (const auto it = max_rates().find(set_key(cfg, n)); it != max_rates().end()) {
      rate = it->second / 2;
      rate_origin = "half of the max run of this set (" + fmt("%.0f", it->second) +
                    " messages/s; rx with 8 clients did not run in this invocation)";
      rate_kind = "half of max: rx with 8 clients did not run";
    } else {
      PhaseShared first;
      first.total = cfg.calls;
      auto m = run_phase(gens, split(cfg.calls), 0, true, &first, nullptr, ctx, cfg.warmup, set.second_core, n);
      if (!m) return fail(m.error());
      const double max_rate = static_cast<double>(cfg.calls) / (static_cast<double>(m->t_end - first.t_start) / hz);
      max_rates()[set_key(cfg, n)] = max_rate;
      rate = max_rate / 2;
      rate_origin = "half of a max phase run first in this run (" + fmt("%.0f", max_rate) +
                    " messages/s; no max run in this set, no rx run with 8 clients in this invocation)";
      rate_kind = "half of max: rx with 8 clients did not run";
    }
    result.target_rate = rate;
  }

  // 6. The measured load phase, the probe in closed loop on thread 0's loop.
  const std::uint64_t probe_cap = std::max<std::uint64_t>(cfg.calls, 100'000);
  probe.record_rtt(probe.next_index(), probe_cap);
  probe.start_open_phase(probe_cap);
  ProbeHook hook(probe);
  PhaseShared shared;
  shared.total = cfg.calls;
  shared.boundary.assign(cfg.calls / kLoadBlock, 0);
  const pid_t self = static_cast<pid_t>(::gettid());
  const ThreadSched venue_sched_start = thread_sched(venue->pid(), venue->pid());
  const ThreadSched client_sched_start = thread_sched(::getpid(), self);
  const auto sched_t0 = std::chrono::steady_clock::now();
  auto measured = run_phase(gens, split(cfg.calls), rate, true, &shared, &hook, ctx, cfg.warmup, set.second_core, n);
  const ThreadSched venue_sched_end = thread_sched(venue->pid(), venue->pid());
  const ThreadSched client_sched_end = thread_sched(::getpid(), self);
  const double sched_wall_ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - sched_t0).count();
  if (!measured) return fail(measured.error());
  for (std::size_t t = 1; t < gens.size(); ++t) {
    result.threads[t].cpu_at_start = measured->cpu_start[t];  // [0] is the venue until `place` goes in front
    result.threads[t].cpu_at_end = measured->cpu_end[t];
  }
  probe.stop_sending();
  if (auto e = probe.finish(); !e) return fail(e.error());
  const std::uint64_t probe_loaded = probe.phase_sent();
  if (const auto missing = probe.unmatched(probe_loaded); missing != 0) {
    return fail(Error{std::to_string(missing) + " loaded probe orders got no ExecutionReport"});
  }
  Series loaded = probe.rtt_series("probe_rtt_loaded", probe_loaded, traced ? shared.t_start : 0);
  const ProcessMemory mem = process_memory(venue->pid());

  // 7. Log out, stop, disk, audit.
  Expected<void> ok = probe.logout_all(5.0);
  for (auto& g : gens) {
    if (ok) ok = g->logout_all(5.0 + 0.01 * n);
  }
  place.cpu_at_end = core::current_cpu();
  result.threads.front().cpu_at_end = venue->engine_cpu();
  result.threads.insert(result.threads.begin(), place);
  if (!ok) return fail(ok.error());
  std::vector<std::pair<std::string, std::uint64_t>> totals;
  for (const auto& g : gens) {
    for (const auto& c : g->conns()) totals.emplace_back(c->comp_id, c->orders_total);
  }
  totals.emplace_back(kProbeComp, probe.conns().front()->orders_total);
  for (auto& g : gens) g->close_all();
  probe.close_all();
  const auto t_stop = std::chrono::steady_clock::now();
  auto stopped = venue->stop();
  const double stop_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_stop).count();
  if (!stopped) {
    out.error = stopped.error();
    return;
  }
  result.notes.emplace_back("venue at exit", *stopped);
  if (traced) {
    // Written by the venue as it stopped; its stamps are this host's TSC.
    auto trace = engine::read_trace_file(spec.trace_file);
    if (!trace) {
      result.notes.emplace_back("venue trace", "not read: " + trace.error().message);
    } else {
      result.events.traced = true;
      result.events.sources.emplace_back("venue engine and journal service (hft-venue --trace-file)");
      result.events.dropped = trace->dropped;
      for (const engine::TraceFileRecord& r : trace->records) {
        if (r.record.end < shared.t_start) continue;
        result.events.events.push_back(trace_event(r.record, r.thread, "venue", shared.t_start));
      }
      sort_events(result.events.events);
      result.attributed_series = "probe_rtt_loaded";
    }
  }
  if (const std::string journals = venue->log_line_from("journals: "); !journals.empty()) {
    // hft-venue counts a shared journal's sessions and the journal apart.
    result.notes.emplace_back(
        "venue journals",
        journals +
            (set.shared_journal
                 ? " (JournalLayout=shared: one journal on disk, venue-store/shared-journal; hft-venue "
                   "counts "
                   "each session's stream as a journal written, with its records, and the shared journal as "
                   "one more, with its segments, rotations and service work, counted once)"
                 : ""));
  }
  // hft-venue's EngineStats at exit: its input pauses say whether sessions
  // waited for a journal that was behind.
  if (const std::string stats = venue->log_line_from("hft-venue: engine: "); !stats.empty())
    result.notes.emplace_back("venue EngineStats at exit", stats.substr(19));
  result.notes.emplace_back("load.venue_stop_s", fmt("%.3f", stop_s));
  // st_blocks of everything under the store root: with the shared layout
  // its shared-journal/ and the sessions' seqnums.dat.
  const std::uint64_t disk = allocated_bytes(venue->store_dir());
  const std::filesystem::path shared_dir = venue->store_dir() / "shared-journal";
  const std::uint64_t shared_disk = set.shared_journal ? allocated_bytes(shared_dir) : 0;
  const auto session_dir = [](const std::string& comp) {
    return std::string(ref::kBeginString) + "-" + std::string(ref::kTarget) + "-" + comp;
  };
  std::vector<std::pair<std::string, AuditResult>> audits;
  const auto t_audit = std::chrono::steady_clock::now();
  if (set.shared_journal) {
    // One pass over the shared journal for every session: audit_venue_store
    // per session would read all of it several times per session.
    std::vector<VenueSessionCounts> counts;
    for (const auto& [comp, orders] : totals) counts.push_back({session_dir(comp), orders, orders});
    audits = audit_venue_shared_store(venue->store_dir(), counts, spec_dir());
  } else {
    for (const auto& [comp, orders] : totals) {
      audits.emplace_back(comp, audit_venue_store(venue->store_dir() / session_dir(comp), orders, orders));
    }
  }
  const double audit_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_audit).count();
  result.notes.emplace_back("load.venue_audit_s", fmt("%.3f", audit_s));
  result.audit = combine_audits(audits);
  if (result.audit.status == AuditResult::Status::kPass) {
    // N + 1 sessions of detail would be a megabyte of text: the count says it.
    const std::size_t sessions_audited = totals.size();
    result.audit.detail =
        std::to_string(sessions_audited) + " venue sessions (" + std::to_string(n) + " load + PROBE)" +
        (set.shared_journal ? ", audited in one pass over the shared journal " + shared_dir.string() +
                                  " (JournalLayout=shared): each session's inbound stream holds exactly the "
                                  "orders its connection "
                                  "sent, its outbound stream as many ExecutionReports; "
                            : ": each inbound journal holds exactly the orders its connection sent, each "
                              "outbound journal as many "
                              "ExecutionReports; ") +
        "record CRC, framing/CheckSum, MsgSeqNum, validation (FIXT11 + FIX50SP2) and sequence checked. "
        "First: " +
        audits.front().second.detail + (set.shared_journal ? " | " + audits.back().second.detail : "");
  }
  result.notes.emplace_back("journal disk use", empty_run_journals(cfg.run_dir, result.audit));

  // 8. Figures.
  const double wall = static_cast<double>(measured->t_end - shared.t_start) / hz;
  const double msgs = wall > 0 ? static_cast<double>(cfg.calls) / wall : 0;
  if (cfg.variant == "max") max_rates()[set_key(cfg, n)] = msgs;
  result.completed = cfg.calls;
  result.warmup_done = cfg.warmup;
  result.wall_seconds = wall;
  result.achieved_rate = msgs;
  result.window = cfg.window;
  result.late = measured->late;
  if (rate > 0) result.late_threshold_ns = 1e9 / rate;
  Series per_message;
  per_message.name = "ns_per_message";
  per_message.unit = Unit::kTscTicks;
  per_message.ticks_per_second = hz;
  block_series(shared, per_message);
  const Stats su = compute_stats(unloaded);
  const Stats sl = compute_stats(loaded);
  result.series.push_back(std::move(per_message));
  result.series.push_back(std::move(unloaded));
  result.series.push_back(std::move(loaded));

  const double ratio = su.quantile("p99") > 0 ? sl.quantile("p99") / su.quantile("p99") : 0;
  result.notes.emplace_back("load.sessions", std::to_string(n));
  result.notes.emplace_back("load.load_threads", std::to_string(gens.size()));
  result.notes.emplace_back("load.messages_per_s", fmt("%.0f", msgs));
  result.notes.emplace_back("load.ns_per_message", fmt("%.1f", wall * 1e9 / static_cast<double>(cfg.calls)));
  result.notes.emplace_back("load.generator_pumps", std::to_string(measured->pumps));
  result.notes.emplace_back("load.generator_idle_pumps", std::to_string(measured->idle_pumps));
  result.notes.emplace_back("load.target_rate", fmt("%.0f", rate));
  add_probe_figures(result, "unloaded", su);
  add_probe_figures(result, "loaded", sl);
  result.notes.emplace_back("load.probe_p99_ratio", fmt("%.3f", ratio));
  result.notes.emplace_back("load.venue_vmrss_kib", std::to_string(mem.vm_rss_kib));
  result.notes.emplace_back("load.venue_rss_anon_kib", std::to_string(mem.rss_anon_kib));
  result.notes.emplace_back("load.venue_rss_file_kib", std::to_string(mem.rss_file_kib));
  result.notes.emplace_back("load.venue_rss_shmem_kib", std::to_string(mem.rss_shmem_kib));
  result.notes.emplace_back("load.venue_vmhwm_kib", std::to_string(mem.vm_hwm_kib));
  result.notes.emplace_back("load.venue_disk_bytes", std::to_string(disk));
  if (set.shared_journal) {
    result.notes.emplace_back("load.venue_shared_journal_disk_bytes", std::to_string(shared_disk));
  }
  result.notes.emplace_back("load.venue_listen_s", fmt("%.4f", listen_s));
  result.notes.emplace_back("load.venue_startup_s", fmt("%.4f", startup_s));

  char text[400];
  std::snprintf(text, sizeof text,
                "%.0f messages/s over %u sessions (%.3f s for %llu orders; %.1f ns/message wall)%s", msgs, n, wall,
                static_cast<unsigned long long>(cfg.calls), wall * 1e9 / static_cast<double>(cfg.calls),
                rate > 0 ? (", paced at " + fmt("%.0f", rate) + " messages/s: " + rate_origin + "; " +
                            std::to_string(measured->late) + " orders late (a period or more after their plan)").c_str()
                         : (", each session as fast as its window allows (at most " +
                            std::to_string(measured->max_in_flight) + " orders in flight of a window of " +
                            std::to_string(cfg.window) + ")").c_str());
  result.notes.emplace_back("throughput", text);
  if (const std::string tenths = rate_by_tenths(shared, hz); !tenths.empty()) {
    result.notes.emplace_back("rate by tenth", tenths);
  }
  std::snprintf(text, sizeof text,
                "round trip of PROBE, one order in flight: unloaded p50 %.1f us, p99 %.1f us (%llu orders); under "
                "load p50 %.1f us, p99 %.1f us, max %.1f us (%llu orders); p99 loaded/unloaded %.2f",
                su.quantile("p50") / 1e3, su.quantile("p99") / 1e3, static_cast<unsigned long long>(su.count),
                sl.quantile("p50") / 1e3, sl.quantile("p99") / 1e3, sl.max_ns / 1e3,
                static_cast<unsigned long long>(sl.count), ratio);
  result.notes.emplace_back("probe", text);
  std::snprintf(text, sizeof text,
                "VmRSS %.1f MiB (anon %.1f, file %.1f, shmem %.1f; peak VmHWM %.1f) after the load phase; journals "
                "%.1f MiB allocated on disk (st_blocks) at the end",
                static_cast<double>(mem.vm_rss_kib) / 1024, static_cast<double>(mem.rss_anon_kib) / 1024,
                static_cast<double>(mem.rss_file_kib) / 1024, static_cast<double>(mem.rss_shmem_kib) / 1024,
                static_cast<double>(mem.vm_hwm_kib) / 1024, static_cast<double>(disk) / (1 << 20));
  std::string disk_where;
  if (set.shared_journal) {
    disk_where =
        " (JournalLayout=shared: " + fmt("%.1f", static_cast<double>(shared_disk) / (1 << 20)) +
        " MiB in the shared journal, venue-store/shared-journal; the rest the sessions' seqnums.dat)";
  }
  result.notes.emplace_back("venue memory and disk",
                            std::string(text) + disk_where +
                                (traced ? " (anon includes the venue's event trace ring, ~12 MiB)" : ""));
  std::snprintf(text, sizeof text,
                "%.3f s from spawn to the first Logon answered (%.3f s to its port file: listening; the port file is "
                "polled every 5 ms); the %u load sessions connected and logged on in %.3f s",
                startup_s, listen_s, n, logons_s);
  result.notes.emplace_back("venue start-up", text);
  // Where the two busy-polling threads were during the phase: on a CPU,
  // runnable but waiting for one (other work on their core), or neither
  // (blocked: I/O, page faults, locks, sleeping).
  const auto where = [&](const ThreadSched& a, const ThreadSched& b) {
    const double run = static_cast<double>(b.run_ns - a.run_ns);
    const double wait = static_cast<double>(b.wait_ns - a.wait_ns);
    const double off = std::max(0.0, sched_wall_ns - run - wait);
    return fmt("%.0f ns CPU per message", run / static_cast<double>(cfg.calls)) + " (on CPU " +
           fmt("%.0f%%", 100 * run / sched_wall_ns) + ", waiting for a CPU " + fmt("%.0f%%", 100 * wait / sched_wall_ns) +
           ", off CPU " + fmt("%.0f%%", 100 * off / sched_wall_ns) + ")";
  };
  // Both threads busy-poll, so on CPU is not busy: load thread 0 also
  // counts its iterations that found nothing to do.
  std::snprintf(
      text, sizeof text,
      "venue engine thread %s; load thread 0 %s, %.0f%% of its %llu iterations found no report and no "
      "send pending (waiting for the venue); %llu send batches",
      where(venue_sched_start, venue_sched_end).c_str(), where(client_sched_start, client_sched_end).c_str(),
      measured->pumps != 0
          ? 100.0 * static_cast<double>(measured->idle_pumps) / static_cast<double>(measured->pumps)
          : 0.0,
      static_cast<unsigned long long>(measured->pumps), static_cast<unsigned long long>(measured->batches));
  result.notes.emplace_back("cpu", text);

  // 9. The criterion, on the last run of the largest N.
  const std::uint32_t largest = *std::max_element(set.sessions_all.begin(), set.sessions_all.end());
  if (n == largest && (cfg.variant == "paced" || extra_or(cfg, "variants-in-set", "max,paced") == "max")) {
    std::string line = "N=" + std::to_string(n) + ": ";
    const auto mx = max_rates().find(set_key(cfg, n));
    const double max_msgs = mx != max_rates().end() ? mx->second : msgs;
    const auto [rx8, rx8_growing] = criterion_rx(cfg);
    std::string thr = "n/a";
    if (rx8 != nullptr) {
      thr = max_msgs >= rx8->messages_per_s ? "pass" : "fail";
      line += "max " + fmt("%.0f", max_msgs) + " messages/s " + (thr == "pass" ? ">=" : "<") + " rx 8 clients " +
              fmt("%.0f", rx8->messages_per_s) + " messages/s (same invocation): " + (thr == "pass" ? "PASS" : "FAIL");
      if (rx8->prepared_only) {
        line += " (rx's venue had " + fmt("%.0f", rx8->prepared_mib) +
                " MiB of journal segments allocated before its measured phase and its orders and reports came to " +
                fmt("%.0f", rx8->journaled_mib) +
                " MiB: its figure is a burst into segments prepared before its run; compare runs long enough to "
                "pass them, docs/lab.md)";
      }
    } else {
      line += "max " + fmt("%.0f", max_msgs) + " messages/s (rx with 8 clients did not run in this invocation: no comparison)";
    }
    if (rx8_growing != nullptr) {
      line += "; rx 8 clients with the load lane's journal settings (variant growing) " +
              fmt("%.0f", rx8_growing->messages_per_s) + " messages/s";
    }
    std::string lat = "n/a";
    if (cfg.variant == "paced") {
      lat = ratio < 2.0 ? "pass" : "fail";
      line += "; probe p99 under paced load at " + fmt("%.0f", rate) + " messages/s" + " (" + rate_kind +
              ")" + " " + fmt("%.1f", sl.quantile("p99") / 1e3) + " us vs unloaded " +
              fmt("%.1f", su.quantile("p99") / 1e3) + " us: ratio " + fmt("%.2f", ratio) +
              (ratio < 2.0 ? " < 2: PASS" : " >= 2: FAIL");
    } else {
      line += "; probe criterion needs the paced variant (not run)";
    }
    result.notes.emplace_back("criterion", line);
    result.notes.emplace_back("load.criterion_throughput", thr);
    result.notes.emplace_back("load.criterion_latency", lat);
  }
}

Expected<RunResult> run_load(const LaneConfig& cfg, RunContext& ctx) {
  if (ctx.tsc == nullptr) return Error{"load: no calibrated TSC clock in the run context"};
  if (cfg.variant != "max" && cfg.variant != "paced") return Error{"load: unknown variant '" + cfg.variant + "'"};
  if (cfg.venue_port != 0) return Error{"load: --venue is not supported (the lane configures its venue's N + 1 sessions)"};
  Outcome out;
  std::thread t(run_load_thread, std::cref(cfg), std::ref(ctx), std::ref(out));
  t.join();
  if (out.error) return Error{"load: " + out.error->message};
  return std::move(out.result);
}

Expected<void> load_preflight(const LaneConfig& cfg) {
  if (cfg.calls < kLoadBlock) return Error{"load: --calls " + std::to_string(cfg.calls) + ": at least 1000 orders"};
  if (cfg.venue_port != 0) return Error{"load: --venue: the load lane starts its own venue (N + 1 sessions); leave --venue out"};
  auto s = load_settings(cfg);
  if (!s) return s.error();
  for (const std::uint32_t n : s->sessions_all) {
    if (cfg.calls < n) {
      return Error{"load: --calls " + std::to_string(cfg.calls) + " is fewer than --sessions " + std::to_string(n) +
                   ": every session needs at least one order"};
    }
  }
  LaneConfig c = cfg;
  c.engine = "libhft";
  return engine_lane_preflight(c);
}

std::string note_of(const RunRecord& r, const std::string& key) {
  for (const auto& [k, v] : r.result.notes) {
    if (k == key) return v;
  }
  return {};
}

// Lane::expand_plan: replaces each planned load run (extra "sessions" a list
// N1,N2,...) by one run per N and variant, in the order N1 max, N1 paced, N2
// max, ... within its (repeat, arm) (a paced run's default rate comes from
// the max run of its set, which runs first). The arm becomes "<arm>-n<N>"
// ("n<N>" for the default arm) so every N has its own summary row; run
// directories are renumbered as the runner numbers its runs.
Expected<void> expand_load_runs(Plan& plan, const std::filesystem::path& out_dir) {
  std::vector<PlannedRun> runs;
  for (std::size_t k = 0; k < plan.runs.size();) {
    const PlannedRun& first = plan.runs[k];
    if (first.config.lane != "load") {
      runs.push_back(first);
      ++k;
      continue;
    }
    // The load runs of one (repeat, arm): consecutive in the plan.
    std::vector<std::string> variants;
    std::size_t end = k;
    while (end < plan.runs.size() && plan.runs[end].config.lane == "load" &&
           plan.runs[end].config.repeat == first.config.repeat && plan.runs[end].config.arm == first.config.arm) {
      variants.push_back(plan.runs[end].config.variant);
      ++end;
    }
    std::sort(variants.begin(), variants.end());  // "max" before "paced"
    auto all = parse_sessions(extra_or(first.config, "sessions", "10,100,1000"));
    if (!all) return all.error();
    std::string list;
    for (const std::uint32_t n : *all) list += (list.empty() ? "" : ",") + std::to_string(n);
    std::string in_set;
    for (const std::string& v : variants) in_set += (in_set.empty() ? "" : ",") + v;
    for (const std::uint32_t n : *all) {
      for (const std::string& v : variants) {
        PlannedRun pr = first;
        pr.config.variant = v;
        pr.config.extra["sessions"] = std::to_string(n);
        pr.config.extra["sessions-list"] = list;
        pr.config.extra["variants-in-set"] = in_set;
        pr.config.extra["base-arm"] = first.config.arm;
        pr.config.arm = (first.config.arm == "default" ? "" : first.config.arm + "-") + "n" + std::to_string(n);
        runs.push_back(std::move(pr));
      }
    }
    k = end;
  }
  for (std::size_t k = 0; k < runs.size(); ++k) runs[k].config.run_dir = out_dir / "runs" / run_id(k + 1, runs[k].config);
  plan.runs = std::move(runs);
  return {};
}

// With several runs (--runs), one criterion over all of them: the median of
// each per-run figure (LAB.md rule 4, never pooled), since one run of each
// decides nothing on a noisy host (the ratio moved from 2.2 to 10.9 between
// runs of one build). Throughput: the median max rate of the largest N
// against the median rx rate with 8 clients (full-size journals; the growing
// variant's median beside it); latency: the median of the paced runs' p99
// ratios, each measured within its own run. "" with fewer than two runs of
// the largest N.
std::string criterion_over_runs(const Report& report) {
  std::uint32_t largest = 0;
  for (const RunRecord& r : report.runs) {
    if (r.config.lane == "load" && r.error.empty()) {
      largest = std::max<std::uint32_t>(
          largest, static_cast<std::uint32_t>(std::atol(note_of(r, "load.sessions").c_str())));
    }
  }
  std::vector<double> max_rates, ratios, rx, rx_growing;
  for (const RunRecord& r : report.runs) {
    if (!r.error.empty()) continue;
    if (r.config.lane == "rx" && r.config.connections == 8) {
      (r.config.variant == "growing" ? rx_growing : rx).push_back(r.result.achieved_rate);
      continue;
    }
    if (r.config.lane != "load" ||
        std::atol(note_of(r, "load.sessions").c_str()) != static_cast<long>(largest))
      continue;
    if (r.config.variant == "max") max_rates.push_back(r.result.achieved_rate);
    if (r.config.variant == "paced" && !note_of(r, "load.probe_p99_ratio").empty()) {
      ratios.push_back(std::atof(note_of(r, "load.probe_p99_ratio").c_str()));
    }
  }
  if (max_rates.size() < 2 && ratios.size() < 2) return "";
  const auto list = [](const std::vector<double>& v, const char* format) {
    std::string text;
    for (const double x : v) text += (text.empty() ? "" : " / ") + fmt(format, x);
    return text;
  };
  std::string line = "criterion over runs (medians of per-run figures): N=" + std::to_string(largest) + ": ";
  if (!max_rates.empty()) {
    const double m = median(max_rates);
    line += "max " + fmt("%.0f", m) + " messages/s (" + std::to_string(max_rates.size()) +
            " runs: " + list(max_rates, "%.0f") + ")";
    if (!rx.empty()) {
      const double x = median(rx);
      line += (m >= x ? " >= " : " < ") + std::string("rx 8 clients ") + fmt("%.0f", x) + " messages/s (" +
              std::to_string(rx.size()) + " runs: " + list(rx, "%.0f") + "): " + (m >= x ? "PASS" : "FAIL");
    } else {
      line += " (rx with 8 clients did not run: no comparison)";
    }
    if (!rx_growing.empty()) {
      line +=
          "; rx 8 clients growing " + fmt("%.0f", median(rx_growing)) + " (" + list(rx_growing, "%.0f") + ")";
    }
  }
  if (!ratios.empty()) {
    const double r = median(ratios);
    line += std::string(max_rates.empty() ? "" : "; ") + "probe p99 loaded/unloaded " + fmt("%.2f", r) +
            " (" + std::to_string(ratios.size()) + " runs: " + list(ratios, "%.2f") + ")" +
            (r < 2.0 ? " < 2: PASS" : " >= 2: FAIL");
  }
  return line;
}

// A paced run's probe round trips at or above the attribution threshold and
// the venue events that overlapped them, most frequent first.
std::string attribution_line(const RunRecord& r) {
  const Attribution& a = *r.attribution;
  std::vector<std::pair<std::uint64_t, std::string>> kinds;
  for (const auto& [kind, calls] : a.calls_by_kind) kinds.emplace_back(calls, kind);
  std::sort(kinds.begin(), kinds.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
  std::string line = "N=" + note_of(r, "load.sessions") + " " + r.config.variant + ": " + a.series +
                     " >= " + fmt("%.0f", a.threshold_ns / 1e3) + " us: " + std::to_string(a.long_calls) +
                     " of " + note_of(r, "load.probe_loaded_count") + " round trips; " +
                     std::to_string(a.long_calls - a.unattributed) + " overlapped venue events (";
  for (std::size_t k = 0; k < kinds.size(); ++k) {
    line += (k == 0 ? "" : ", ") + kinds[k].second + " " + std::to_string(kinds[k].first);
  }
  return line + "), " + std::to_string(a.unattributed) + " none";
}

// Lane::print_summary: the load runs' figures (nothing when none finished):
// per N and variant messages/s, ns/message, probe round trips unloaded and
// loaded, venue memory, disk and start-up, then the criterion line.
void print_load_summary(const Report& report, std::ostream& out) {
  std::vector<std::vector<std::string>> cells;
  cells.push_back({"load", "N", "variant", "msgs/s", "ns/msg", "probe p50 us", "p99 us", "loaded p50 us", "p99 us",
                   "p99 ratio", "VmRSS MiB", "RssFile MiB", "RssShmem MiB", "disk MiB", "start-up s", "stop s"});
  std::vector<std::string> criteria, attributions;
  const auto us = [](const std::string& ns) { return ns.empty() ? std::string("-") : fmt("%.1f", std::atof(ns.c_str()) / 1e3); };
  const auto mib = [](const std::string& v, double per) {
    return v.empty() ? std::string("-") : fmt("%.1f", std::atof(v.c_str()) / per);
  };
  for (const RunRecord& r : report.runs) {
    if (r.config.lane != "load") continue;
    if (!r.error.empty()) {
      cells.push_back({r.config.arm, extra_or(r.config, "sessions", "?"), r.config.variant, "FAILED", "", "", "", "",
                       "", "", "", "", "", "", "", ""});
      criteria.push_back("N=" + extra_or(r.config, "sessions", "?") + " " + r.config.variant +
                         ": not judged, the run failed: " + r.error.substr(0, 400));
      continue;
    }
    cells.push_back({r.config.arm, note_of(r, "load.sessions"), r.config.variant, note_of(r, "load.messages_per_s"),
                     note_of(r, "load.ns_per_message"), us(note_of(r, "load.probe_unloaded_p50_ns")),
                     us(note_of(r, "load.probe_unloaded_p99_ns")), us(note_of(r, "load.probe_loaded_p50_ns")),
                     us(note_of(r, "load.probe_loaded_p99_ns")), note_of(r, "load.probe_p99_ratio"),
                     mib(note_of(r, "load.venue_vmrss_kib"), 1024), mib(note_of(r, "load.venue_rss_file_kib"), 1024),
                     mib(note_of(r, "load.venue_rss_shmem_kib"), 1024),
                     mib(note_of(r, "load.venue_disk_bytes"), 1024.0 * 1024.0), note_of(r, "load.venue_startup_s"),
                     note_of(r, "load.venue_stop_s")});
    if (const std::string c = note_of(r, "criterion"); !c.empty()) criteria.push_back(c);
    if (r.attribution) attributions.push_back(attribution_line(r));
  }
  if (cells.size() == 1) return;
  std::vector<std::size_t> width(cells.front().size(), 0);
  for (const auto& row : cells) {
    for (std::size_t k = 0; k < row.size(); ++k) width[k] = std::max(width[k], row[k].size());
  }
  for (const auto& row : cells) {
    for (std::size_t k = 0; k < row.size(); ++k) {
      const std::string pad(width[k] - row[k].size(), ' ');
      out << (k == 0 || k == 2 ? row[k] + pad : pad + row[k]) << (k + 1 < row.size() ? "  " : "\n");
    }
  }
  for (const std::string& a : attributions) out << a << "\n";
  for (const std::string& c : criteria) out << "criterion: " << c << "\n";
  if (const std::string over = criterion_over_runs(report); !over.empty()) out << over << "\n";
}

Lane make_load_lane() {
  Lane lane;
  lane.name = "load";
  lane.summary = "N sessions (--sessions) stream orders into one hft-venue thread while a probe session times its "
                 "round trips: messages/s, ns/message, probe rtt unloaded/loaded, venue memory, disk, start-up";
  lane.available = true;
  lane.variants = {"max", "paced"};
  lane.default_variants = {"max", "paced"};
  lane.controls = {"sessions",    "load-threads", "load-core",     "load-rate",
                   "probe-calls", "venue-poll",   "venue-journal", "venue-journal-core"};
  lane.preflight = load_preflight;
  lane.run = run_load;
  // One run set per --sessions entry (the runner plans one per cell), and
  // the lane's own table with the issue-15 criterion after the runs.
  lane.expand_plan = expand_load_runs;
  lane.print_summary = print_load_summary;
  return lane;
}

}  // namespace

HFT_LAB_REGISTER_LANE(make_load_lane);
}  // namespace hft::lab::lanes
