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
//   paced-ring, paced-ring-sink
//            the order is built on another thread (the producer, pinned to
//            --producer-core, default --server-core) and sent by the engine
//            thread (the pinned client thread): EngineAdapter::queue_new_order
//            on the producer at each planned time, send_queued on the client
//            thread. "service" is the producer's issue (before the build) to
//            the return of the engine thread's send(): build + hand-over +
//            header, journal and send(). Also "producer" (the queue call on
//            the producer: build + enqueue) and "handover" (enqueued to sent).
//            Both threads read the same TSC (invariant, one domain per host).
//            Against paced / paced-sink at the same --rate in the same bench,
//            it gives what sending from another thread adds.
// Warm-up calls run unpaced first and are not recorded (paced-ring*: paced).
//
// Every timed call of unpaced and paced (and their -sink variants) is also
// split in the same clock (CallSplit): "send" is the time of the socket
// send() calls made inside it (hft-bench interposes send() for every
// engine, send_timing.hpp), "engine" the rest; an adapter that stamps its
// own stages (libhft: begin_app, body, send_call) adds "stage.<name>".
#include <atomic>
#include <charconv>
#include <cstdio>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "engine_run.hpp"
#include "hft/core/cpu.hpp"
#include "hft/lab/pacer.hpp"
#include "send_timing.hpp"

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

/// Splits each timed call (tx, paced service) in the same clock: the time
/// of the send() calls inside it (series "send", interposed for every
/// engine: send_timing.hpp), the rest ("engine": building, encoding,
/// journaling, whatever the engine does around the socket), and the stages
/// the adapter stamps itself ("stage.<name>"; with a "send_call" stage also
/// "stage.send_call_minus_send": that stage without the socket call).
class CallSplit {
 public:
  CallSplit(EngineRun& run, std::size_t calls, std::uint64_t warmup)
      : run_(run), names_(run.adapter.stage_names()) {
    const auto make = [&](std::string name) { recs_.emplace_back(std::move(name), calls, warmup, Unit::kTscTicks, run.hz, true); };
    recs_.reserve(names_.size() + 3);
    make("send");
    make("engine");
    for (std::size_t k = 0; k < names_.size(); ++k) {
      make("stage." + std::string(names_[k]));
      if (names_[k] == "send_call") send_call_ = k;
    }
    if (send_call_ != kNone) make("stage.send_call_minus_send");
    send_timing::enable(true);
  }
  ~CallSplit() { send_timing::enable(false); }
  CallSplit(const CallSplit&) = delete;
  CallSplit& operator=(const CallSplit&) = delete;

  /// Just before the timed call: forgets send() calls made outside it.
  void before() noexcept { (void)send_timing::take(); }
  /// Just after it: `total` is the call's ticks, `time` its start offset.
  void after(std::int64_t total, std::int64_t time) noexcept {
    const send_timing::Taken t = send_timing::take();
    const auto send = static_cast<std::int64_t>(t.ticks);
    if (t.calls == 0) ++no_send_;
    recs_[0].record(send, time);
    recs_[1].record(total - send, time);
    const std::span<const std::uint64_t> stages = run_.adapter.last_stages();
    for (std::size_t k = 0; k < names_.size() && k < stages.size(); ++k) {
      recs_[2 + k].record(static_cast<std::int64_t>(stages[k]), time);
    }
    if (send_call_ != kNone && send_call_ < stages.size()) {
      recs_.back().record(static_cast<std::int64_t>(stages[send_call_]) - send, time);
    }
  }
  /// Adds the series (only if the interposition took effect) and a note.
  void finish(RunResult& r) {
    if (!send_timing::interposed()) {
      r.notes.emplace_back("send() split", "not available: the engine's send() did not go through hft-bench's");
      return;
    }
    for (Recorder& rec : recs_) r.series.push_back(std::move(rec).take());
    r.notes.emplace_back("send() split",
                         "send() interposed by hft-bench (fenced TSC around each call on the timed thread); " +
                             std::to_string(no_send_) + " timed calls made no send() (the engine queued the bytes)");
  }

 private:
  static constexpr std::size_t kNone = ~std::size_t{0};
  EngineRun& run_;
  std::span<const std::string_view> names_;
  std::vector<Recorder> recs_;
  std::size_t send_call_ = kNone;
  std::uint64_t no_send_ = 0;
};

Expected<void> tx_unpaced(EngineRun& run) {
  const LaneConfig& cfg = run.config;
  const std::uint64_t total = cfg.warmup + cfg.calls;
  Recorder rec("tx", cfg.calls, cfg.warmup, Unit::kTscTicks, run.hz, /*with_time=*/true);
  CallSplit split(run, cfg.calls, cfg.warmup);
  std::uint64_t t_start = tsc_now();
  std::uint64_t t_end = t_start;
  std::uint64_t first = 0;
  std::uint64_t waits = 0;
  for (std::uint64_t k = 0; k < total; ++k) {
    if (!wait_for_room(run, waits)) return Error{"the venue answered nothing for 10 s"};
    if (k == cfg.warmup) {
      t_start = tsc_now();
      run.start_measuring(t_start);
    }
    split.before();
    const std::uint64_t t0 = tsc_now();
    const bool ok = run.adapter.send_new_order(k);
    const std::uint64_t t1 = tsc_now();
    if (!ok) return Error{"send_new_order failed at call " + std::to_string(k)};
    ++run.orders;
    rec.record(static_cast<std::int64_t>(t1 - t0), static_cast<std::int64_t>(t0 - t_start));
    split.after(static_cast<std::int64_t>(t1 - t0), static_cast<std::int64_t>(t0 - t_start));
    if (k >= cfg.warmup) run.after_call(t1);
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
  split.finish(r);
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
  CallSplit split(run, cfg.calls, 0);
  const std::uint64_t base = cfg.warmup;
  pacer.start(static_cast<std::int64_t>(tsc_now()));
  run.start_measuring(static_cast<std::uint64_t>(pacer.start_time()));
  while (pacer.next() < pacer.calls()) {
    const auto now = static_cast<std::int64_t>(tsc_now());
    if (!pacer.due(now)) {
      (void)run.poll(first);
      continue;
    }
    // A rate above the venue's pace shows as scheduler delay, not as a
    // send() into a full socket.
    if (!wait_for_room(run, waits)) return Error{"the venue answered nothing for 10 s"};
    split.before();
    const auto t_issue = static_cast<std::int64_t>(tsc_now());
    const std::uint64_t i = pacer.issue(t_issue);
    const bool ok = run.adapter.send_new_order(base + i);
    const auto t_done = static_cast<std::int64_t>(tsc_now());
    if (!ok) return Error{"send_new_order failed at call " + std::to_string(base + i)};
    ++run.orders;
    pacer.complete(i, t_done);
    split.after(t_done - t_issue, t_issue - pacer.start_time());
    run.after_call(static_cast<std::uint64_t>(t_done));
    if ((i & 1023U) == 0) run.context.report_progress(base + i);
  }
  pacer.finish();
  run.context.report_progress(cfg.warmup + cfg.calls);
  note_waits(run, waits);
  run.result.warmup_done = cfg.warmup;
  take_pacer_result(std::move(pacer), run.result);
  split.finish(run.result);
  return {};
}

/// paced-ring*: see the file comment. The producer thread paces and
/// queues; this (the client) thread sends and reads reports.
Expected<void> tx_paced_ring(EngineRun& run) {
  // (An engine without a cross-thread send is refused in the preflight.)
  const LaneConfig& cfg = run.config;
  int producer_core = cfg.server_core;
  if (const auto it = cfg.extra.find("producer-core"); it != cfg.extra.end()) {
    const std::string& v = it->second;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), producer_core);
    if (ec != std::errc{} || end != v.data() + v.size() || producer_core < -1) {
      return Error{"producer-core=" + v + ": expected a CPU number (or -1: unpinned)"};
    }
  }
  const std::uint64_t total = cfg.warmup + cfg.calls;
  // Per call, written by the producer (issue, queued) or this thread (sent);
  // read after the producer has joined.
  std::vector<std::int64_t> issued(total), queued(total), sent_at(total);
  PacerSettings ps;
  ps.rate_per_s = cfg.rate;
  ps.ticks_per_second = run.hz;
  // The window is the ring: the producer cannot see completions, a full
  // ring shows as retries (counted) and scheduler delay.
  ps.window = static_cast<std::uint32_t>(std::min<std::uint64_t>(total, UINT32_MAX));
  Pacer pacer(cfg.calls, ps, Unit::kTscTicks);
  std::atomic<int> ready{0};  // 1: pinned, -1: could not pin
  std::atomic<bool> abort{false};
  std::atomic<std::uint64_t> produced{0};
  std::uint64_t full_retries = 0;
  int producer_cpu = -1;
  std::thread producer([&] {
    core::name_current_thread(cfg.lane + "-producer");
    if (!core::pin_current_thread(producer_core)) {
      ready.store(-1, std::memory_order_release);
      return;
    }
    producer_cpu = core::current_cpu();
    ready.store(1, std::memory_order_release);
    const double period = run.hz / cfg.rate;
    const std::uint64_t w0 = tsc_now();
    for (std::uint64_t k = 0; k < total && !abort.load(std::memory_order_relaxed); ++k) {
      std::int64_t t_issue = 0;
      if (k < cfg.warmup) {
        const auto planned = w0 + static_cast<std::uint64_t>(static_cast<double>(k) * period);
        while (tsc_now() < planned) {
        }
        t_issue = static_cast<std::int64_t>(tsc_now());
      } else {
        if (k == cfg.warmup) pacer.start(static_cast<std::int64_t>(tsc_now()));
        while (!pacer.due(static_cast<std::int64_t>(tsc_now()))) {
        }
        t_issue = static_cast<std::int64_t>(tsc_now());
        (void)pacer.issue(t_issue);
      }
      while (!run.adapter.queue_new_order(k)) {
        ++full_retries;
        if (abort.load(std::memory_order_relaxed)) return;
      }
      issued[k] = t_issue;
      queued[k] = static_cast<std::int64_t>(tsc_now());
      produced.store(k + 1, std::memory_order_release);
    }
  });
  while (ready.load(std::memory_order_acquire) == 0) {
  }
  if (ready.load(std::memory_order_acquire) < 0) {
    producer.join();
    return Error{"producer: cannot pin to CPU " + std::to_string(producer_core) + " (--producer-core)"};
  }
  std::uint64_t sent = 0, failed = 0, first = 0, spins = 0, max_pending = 0;
  std::uint64_t last_progress = tsc_now();
  Expected<void> result;
  // The engine thread's loop, to explain a slow hand-over: passes, the
  // longest one, and how many took 10 us or more (split: send_queued, poll).
  std::uint64_t passes = 0, slow_passes = 0, slowest = 0, slow_sends = 0, slow_polls = 0;
  const std::uint64_t slow = ticks(run.hz, 10e-6);
  while (sent < total) {
    const std::uint64_t t_pass = tsc_now();
    const std::uint32_t n = run.adapter.send_queued(failed);
    const std::uint64_t t_sent = tsc_now();
    if (n != 0) {
      for (std::uint32_t j = 0; j < n && sent < total; ++j) sent_at[sent++] = static_cast<std::int64_t>(t_sent);
      run.orders += n;
      last_progress = t_sent;
      max_pending = std::max(max_pending, produced.load(std::memory_order_relaxed) - (sent - n));
      if ((sent & 1023U) < n) run.context.report_progress(sent);
    }
    (void)run.poll(first);
    const std::uint64_t t_end = tsc_now();
    ++passes;
    slowest = std::max(slowest, t_end - t_pass);
    if (t_end - t_pass >= slow) ++slow_passes;
    if (t_sent - t_pass >= slow) ++slow_sends;
    if (t_end - t_sent >= slow) ++slow_polls;
    if (every_4096(spins) && tsc_now() - last_progress > ticks(run.hz, 10.0)) {
      result = Error{"nothing was queued or sent for 10 s after call " + std::to_string(sent)};
      break;
    }
  }
  abort.store(true, std::memory_order_relaxed);
  producer.join();
  if (!result) return result;
  if (failed != 0) return Error{std::to_string(failed) + " queued orders were refused by the session"};
  Recorder producer_rec("producer", cfg.calls, 0, Unit::kTscTicks, run.hz, /*with_time=*/true);
  Recorder handover_rec("handover", cfg.calls, 0, Unit::kTscTicks, run.hz, /*with_time=*/true);
  const std::int64_t t0 = pacer.start_time();
  // The series' origin; the OS counters are not sampled here (the engine
  // thread's loop has no call boundary of its own).
  run.time_origin = static_cast<std::uint64_t>(t0);
  for (std::uint64_t k = cfg.warmup; k < total; ++k) {
    pacer.complete(k - cfg.warmup, sent_at[k]);
    producer_rec.record(queued[k] - issued[k], issued[k] - t0);
    handover_rec.record(sent_at[k] - queued[k], issued[k] - t0);
  }
  pacer.finish();
  run.context.report_progress(total);
  RunResult& r = run.result;
  r.warmup_done = cfg.warmup;
  take_pacer_result(std::move(pacer), r);
  r.max_in_flight = static_cast<std::uint32_t>(max_pending);
  r.series.push_back(std::move(producer_rec).take());
  r.series.push_back(std::move(handover_rec).take());
  r.threads.push_back({"producer", producer_core, producer_cpu, producer_cpu});
  char loop_text[200];
  std::snprintf(loop_text, sizeof loop_text,
                "%llu passes (send_queued + poll), %llu of 10 us or more (%llu in send_queued, %llu in poll), "
                "longest %.1f us",
                static_cast<unsigned long long>(passes), static_cast<unsigned long long>(slow_passes),
                static_cast<unsigned long long>(slow_sends), static_cast<unsigned long long>(slow_polls),
                static_cast<double>(slowest) * 1e6 / run.hz);
  r.notes.emplace_back("engine-thread loop", loop_text);
  r.notes.emplace_back("cross-thread queue",
                       std::to_string(full_retries) + " queue attempts found the ring full (retried by the producer); "
                       "at most " + std::to_string(max_pending) + " orders queued and not yet sent");
  return {};
}

Lane make_tx_lane() {
  Lane lane = make_engine_lane(
      "tx",
      "order from pool + encode (2 clock reads) + journal + send() return of a NewOrderSingle, per call",
      {{"unpaced", tx_unpaced},
       {"paced", tx_paced},
       {"unpaced-sink", tx_unpaced},
       {"paced-sink", tx_paced},
       {"paced-ring", tx_paced_ring},
       {"paced-ring-sink", tx_paced_ring}});
  // The cross-thread variants are asked for by name (--variants).
  lane.default_variants = {"unpaced", "paced", "unpaced-sink", "paced-sink"};
  lane.controls.emplace_back("producer-core");
  return lane;
}

}  // namespace
HFT_LAB_REGISTER_LANE(make_tx_lane);
}  // namespace hft::lab::lanes
