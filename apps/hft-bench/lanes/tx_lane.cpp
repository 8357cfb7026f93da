// The tx lane: the llfix TX benchmark's boundary (LAB.md, "Lanes").
//
// One sample = one EngineAdapter::send_new_order call, read with fenced
// rdtsc on the pinned client thread: take an order from a preallocated
// pool, set its fields, encode header + SendingTime (clock read) + body +
// TransactTime (clock read) + CheckSum, journal it (claim/commit), send().
// The call never waits for a reply; between calls (outside the timed
// region) the client polls its engine once so the venue's ExecutionReports
// are read and the venue's send never blocks.
//
// Flow control, outside the timed region: the venue does more per order
// than the sender (parse, validate, journal, answer), so an unpaced sender
// would fill the socket buffers and its send() would then stop accepting
// bytes (the engine queues them). Before each call the client waits, still
// untimed, while more than kMaxUnanswered orders (about 250 KB, far below
// the socket buffers) are unanswered, so every timed send() finds room; the
// achieved rate then shows the venue's pace. Waits are counted in a note.
//
// Variants:
//   unpaced  back to back; series "tx" (TSC ticks, with each call's start)
//   paced    call i planned at t0 + i/rate (never re-anchored); series
//            "service" (the send call), "response" (completion - planned),
//            "scheduler_delay" (issue - planned), all TSC ticks
//   unpaced-sink, paced-sink
//            the same against a venue that answers nothing (hft-venue
//            --sink), as llfix's benchmark server: no ExecutionReports share
//            the loopback and there is no flow control; the venue's inbound
//            journal is audited to hold every order
// Warm-up calls run unpaced first and are not recorded.
#include "engine_run.hpp"
#include "hft/lab/pacer.hpp"

namespace hft::lab::lanes {
namespace {

constexpr std::uint64_t kMaxUnanswered = 1024;

/// Polls (untimed) until at most kMaxUnanswered orders await their report.
/// Returns false after 10 s without progress.
bool wait_for_room(EngineRun& run, std::uint64_t& waits) noexcept {
  if (run.sink || run.orders - run.reports < kMaxUnanswered) return true;
  ++waits;
  std::uint64_t first = 0;
  std::uint64_t spins = 0;
  std::uint64_t last = tsc_now();
  std::uint64_t seen = run.reports;
  while (run.orders - run.reports >= kMaxUnanswered) {
    (void)run.poll(first);
    if (every_4096(spins)) {
      const std::uint64_t now = tsc_now();
      if (run.reports != seen) {
        seen = run.reports;
        last = now;
      } else if (now - last > ticks(run.hz, 10.0)) {
        return false;
      }
    }
  }
  return true;
}

void note_waits(EngineRun& run, std::uint64_t waits) {
  if (run.sink) {
    run.result.notes.emplace_back("flow control", "none: the venue is a sink (no ExecutionReports)");
    return;
  }
  run.result.notes.emplace_back("flow-control waits",
                                std::to_string(waits) + " calls waited (untimed) for the venue: more than " +
                                    std::to_string(kMaxUnanswered) + " orders were unanswered");
}

Expected<void> tx_unpaced(EngineRun& run) {
  const LaneConfig& cfg = run.config;
  const std::uint64_t total = cfg.warmup + cfg.calls;
  Recorder rec("tx", cfg.calls, cfg.warmup, Unit::kTscTicks, run.hz, /*with_time=*/true);
  std::uint64_t t_start = tsc_now();
  std::uint64_t t_end = t_start;
  std::uint64_t first = 0;
  std::uint64_t waits = 0;
  for (std::uint64_t k = 0; k < total; ++k) {
    if (!wait_for_room(run, waits)) return Error{"the venue answered nothing for 10 s"};
    if (k == cfg.warmup) t_start = tsc_now();
    const std::uint64_t t0 = tsc_now();
    const bool ok = run.adapter.send_new_order(k);
    const std::uint64_t t1 = tsc_now();
    if (!ok) return Error{"send_new_order failed at call " + std::to_string(k)};
    ++run.orders;
    rec.record(static_cast<std::int64_t>(t1 - t0), static_cast<std::int64_t>(t0 - t_start));
    t_end = t1;
    (void)run.poll(first);
    if ((k & 1023U) == 0) run.context.report_progress(k);
  }
  run.context.report_progress(total);
  note_waits(run, waits);
  RunResult& r = run.result;
  r.completed = rec.size();
  r.warmup_done = rec.warmup_seen();
  r.overflow = rec.overflow();
  r.wall_seconds = static_cast<double>(t_end - t_start) / run.hz;
  r.achieved_rate = r.wall_seconds > 0 ? static_cast<double>(r.completed) / r.wall_seconds : 0;
  r.series.push_back(std::move(rec).take());
  return {};
}

Expected<void> tx_paced(EngineRun& run) {
  const LaneConfig& cfg = run.config;
  std::uint64_t first = 0;
  std::uint64_t waits = 0;
  for (std::uint64_t k = 0; k < cfg.warmup; ++k) {
    if (!wait_for_room(run, waits)) return Error{"the venue answered nothing for 10 s"};
    if (!run.adapter.send_new_order(k)) return Error{"send_new_order failed at warm-up call " + std::to_string(k)};
    ++run.orders;
    (void)run.poll(first);
  }
  PacerSettings ps;
  ps.rate_per_s = cfg.rate;
  ps.ticks_per_second = run.hz;
  ps.window = 1;  // each call completes when send() returns
  Pacer pacer(cfg.calls, ps, Unit::kTscTicks);
  const std::uint64_t base = cfg.warmup;
  pacer.start(static_cast<std::int64_t>(tsc_now()));
  while (pacer.next() < pacer.calls()) {
    const auto now = static_cast<std::int64_t>(tsc_now());
    if (!pacer.due(now)) {
      (void)run.poll(first);
      continue;
    }
    // A rate above the venue's pace shows as scheduler delay, not as a
    // send() into a full socket.
    if (!wait_for_room(run, waits)) return Error{"the venue answered nothing for 10 s"};
    const auto t_issue = static_cast<std::int64_t>(tsc_now());
    const std::uint64_t i = pacer.issue(t_issue);
    const bool ok = run.adapter.send_new_order(base + i);
    const auto t_done = static_cast<std::int64_t>(tsc_now());
    if (!ok) return Error{"send_new_order failed at call " + std::to_string(base + i)};
    ++run.orders;
    pacer.complete(i, t_done);
    if ((i & 1023U) == 0) run.context.report_progress(base + i);
  }
  pacer.finish();
  run.context.report_progress(cfg.warmup + cfg.calls);
  note_waits(run, waits);
  run.result.warmup_done = cfg.warmup;
  take_pacer_result(std::move(pacer), run.result);
  return {};
}

Lane make_tx_lane() {
  return make_engine_lane(
      "tx",
      "order from pool + encode (2 clock reads) + journal + send() return of a NewOrderSingle, per call",
      {{"unpaced", tx_unpaced}, {"paced", tx_paced}, {"unpaced-sink", tx_unpaced}, {"paced-sink", tx_paced}});
}

}  // namespace
HFT_LAB_REGISTER_LANE(make_tx_lane);
}  // namespace hft::lab::lanes
