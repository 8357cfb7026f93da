// The rtt lane: NewOrderSingle sent -> its ExecutionReport received, on
// the client side, through the engine under test and hft-venue (which
// parses, validates, journals the order and answers with one
// ExecutionReport). Fenced rdtsc on the pinned client thread.
//
// Variants:
//   closed  one in flight: a sample is send_new_order() + polling until the
//           report for that ClOrdID arrives; series "rtt"
//   paced   open loop at --rate with at most --window in flight, planned
//           arrivals never re-anchored; series "service" (from the actual
//           send), "response" (from the planned arrival), "scheduler_delay"
//   closed-tls  closed over TLS: the run makes its own CA and certificates,
//           the venue requires the client's (mutual authentication); not
//           run unless named (--variants rtt:closed-tls)
// Every report must carry the ClOrdID of the order it answers (in order);
// any other is counted and fails the run. Warm-up runs closed first.
#include "engine_run.hpp"
#include "hft/lab/pacer.hpp"

namespace hft::lab::lanes {
namespace {

/// One closed-loop round trip for order k. Returns the completion time.
Expected<std::uint64_t> round_trip(EngineRun& run, std::uint64_t k, std::uint64_t deadline_ticks) {
  if (!run.adapter.send_new_order(k)) return Error{"send_new_order failed at call " + std::to_string(k)};
  ++run.orders;
  std::uint64_t first = 0;
  std::uint64_t spins = 0;
  const std::uint64_t start = tsc_now();
  for (;;) {
    const std::uint32_t n = run.poll(first);
    if (n != 0) {
      const std::uint64_t t = tsc_now();
      if (n != 1 || first != k) ++run.mismatches;
      return t;
    }
    if (every_4096(spins) && tsc_now() - start > deadline_ticks) {
      return Error{"no ExecutionReport for order " + std::to_string(k) + " within 10 s"};
    }
  }
}

Expected<void> rtt_closed(EngineRun& run) {
  const LaneConfig& cfg = run.config;
  const std::uint64_t total = cfg.warmup + cfg.calls;
  const std::uint64_t limit = ticks(run.hz, 10.0);
  Recorder rec("rtt", cfg.calls, cfg.warmup, Unit::kTscTicks, run.hz, /*with_time=*/true);
  std::uint64_t t_start = tsc_now();
  std::uint64_t t_end = t_start;
  for (std::uint64_t k = 0; k < total; ++k) {
    if (k == cfg.warmup) {
      t_start = tsc_now();
      run.start_measuring(t_start);
    }
    const std::uint64_t t0 = tsc_now();
    auto t1 = round_trip(run, k, limit);
    if (!t1) return t1.error();
    rec.record(static_cast<std::int64_t>(*t1 - t0), static_cast<std::int64_t>(t0 - t_start));
    if (k >= cfg.warmup) run.after_call(*t1);
    t_end = *t1;
    if ((k & 1023U) == 0) run.context.report_progress(k);
  }
  run.context.report_progress(total);
  RunResult& r = run.result;
  r.completed = rec.size();
  r.warmup_done = rec.warmup_seen();
  r.overflow = rec.overflow();
  r.wall_seconds = static_cast<double>(t_end - t_start) / run.hz;
  r.achieved_rate = r.wall_seconds > 0 ? static_cast<double>(r.completed) / r.wall_seconds : 0;
  r.window = 1;
  r.max_in_flight = 1;
  r.series.push_back(std::move(rec).take());
  return {};
}

Expected<void> rtt_paced(EngineRun& run) {
  const LaneConfig& cfg = run.config;
  const std::uint64_t limit = ticks(run.hz, 10.0);
  for (std::uint64_t k = 0; k < cfg.warmup; ++k) {
    if (auto t = round_trip(run, k, limit); !t) return t.error();
  }
  PacerSettings ps;
  ps.rate_per_s = cfg.rate;
  ps.ticks_per_second = run.hz;
  ps.window = cfg.window;
  Pacer pacer(cfg.calls, ps, Unit::kTscTicks);
  const std::uint64_t base = cfg.warmup;
  std::uint64_t next_report = 0;  // measured index the next report must answer
  std::uint64_t first = 0;
  std::uint64_t spins = 0;
  std::uint64_t last_progress = tsc_now();
  pacer.start(static_cast<std::int64_t>(last_progress));
  // The OS counters are sampled after each send (the paced loop's calls
  // overlap: a window is the time since the previous send).
  run.start_measuring(last_progress);
  while (!pacer.done()) {
    const auto now = static_cast<std::int64_t>(tsc_now());
    if (pacer.due(now)) {
      const auto t_issue = static_cast<std::int64_t>(tsc_now());
      const std::uint64_t i = pacer.issue(t_issue);
      if (!run.adapter.send_new_order(base + i)) return Error{"send_new_order failed at call " + std::to_string(base + i)};
      ++run.orders;
      run.after_call(tsc_now());
      continue;
    }
    const std::uint32_t n = run.poll(first);
    if (n != 0) {
      const auto t_done = static_cast<std::int64_t>(tsc_now());
      // Reports come back in order: the j-th of this poll answers first + j.
      if (first != base + next_report) ++run.mismatches;
      for (std::uint32_t j = 0; j < n && next_report < pacer.issued(); ++j) pacer.complete(next_report++, t_done);
      last_progress = static_cast<std::uint64_t>(t_done);
      if ((next_report & 1023U) == 0) run.context.report_progress(base + next_report);
    } else if (every_4096(spins) && tsc_now() - last_progress > limit) {
      return Error{"no ExecutionReport for 10 s with " + std::to_string(pacer.in_flight()) + " orders in flight"};
    }
  }
  pacer.finish();
  run.context.report_progress(cfg.warmup + cfg.calls);
  if (pacer.errors() != 0) return Error{std::to_string(pacer.errors()) + " completions did not match an issued call"};
  run.result.warmup_done = cfg.warmup;
  take_pacer_result(std::move(pacer), run.result);
  return {};
}

Lane make_rtt_lane() {
  Lane lane = make_engine_lane(
      "rtt",
      "NewOrderSingle -> ExecutionReport round trip against hft-venue (validates, journals, answers)",
      {{"closed", rtt_closed}, {"paced", rtt_paced}, {"closed-tls", rtt_closed}});
  lane.default_variants = {"closed", "paced"};
  return lane;
}

}  // namespace
HFT_LAB_REGISTER_LANE(make_rtt_lane);
}  // namespace hft::lab::lanes
