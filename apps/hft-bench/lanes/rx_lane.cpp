// The rx lane: acceptor throughput. N client connections (--clients,
// default 8; sessions CLIENT1..CLIENTN) stream reference NewOrderSingles
// into ONE acceptor thread (pinned to --server-core), which frames, parses,
// validates, journals the order, and answers with an ExecutionReport that it
// journals too. The acceptor is the engine under test (--engines):
//   libhft  hft-venue --no-fill: validates against FIXT11 + FIX50SP2
//   llfix   hft-bench-llfix-venue (llfix/llfix_venue.cpp, built with
//           HFT_LLFIX_DIR): llfix's FixServer<TcpReactor<>> as in llfix's
//           networked_server_rx benchmark, its session validations on, no
//           dictionary validation (this llfix tree has no dictionary
//           headers); --segment-size is its max_serialised_file_size
// QuickFIX has no rx driver: with --engines quickfix this lane leaves it
// out (a plan note says so).
//
// Variants (how the acceptor thread waits):
//   busy   it spins on its sockets (libhft PollMode=busy; llfix a zero
//          epoll_wait timeout): the latency setting
//   epoll  it sleeps when idle (libhft PollMode=epoll, IdleStrategy=backoff;
//          llfix's default 1 ms epoll_wait timeout), so its CPU time is its
//          work (the "acceptor CPU" note is then exact)
//   growing  busy, libhft only, with the load lane's journal settings: the
//          engine's defaults for many sessions (segments growing from
//          JournalInitialSegmentSize, spares prepared a piece at a time)
//          instead of full-size segments pre-faulted whole before the run.
//          Beside busy it tells what the journal preparation is worth, and
//          beside the load lane what the number of sessions costs
//
// The clients are the lean load generator (load_generator.hpp, shared with
// the load lane) on one pinned thread, scanning its connections (not an
// engine: its cost must not be what is measured): pre-built header
// templates, orders encoded with the codec into per-connection buffers, up
// to 16 per send(), at most --window unanswered orders per connection, the
// reports framed and matched by ClOrdID. Warm-up orders (--warmup, spread
// over the connections) are sent and answered first.
//
// Measured over the --calls orders of the measured phase:
//   messages/s          orders answered / (last report - first send), the
//                       run's achieved rate
//   ns_per_message      series: for each block of 1,000 answered orders, the
//                       wall time of the block / 1,000 (TSC ticks) - the
//                       acceptor's cost per message while saturated
//   rtt_under_load      series: per order, its send() to its report
//   acceptor CPU        the venue engine thread's CPU time (schedstat) over
//                       the phase / orders: ns of acceptor CPU per message
// The audit checks each venue session's inbound journal holds exactly the
// orders its connection sent and its outbound journal as many reports
// (libhft's journal audit; for llfix its incoming and outgoing serialised
// files, hft/lab/foreign_journals.hpp).
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "hft/core/clock.hpp"
#include "hft/core/cpu.hpp"
#include "hft/lab/engine_adapter.hpp"
#include "hft/lab/foreign_journals.hpp"
#include "lane_support.hpp"
#include "load_generator.hpp"

namespace hft::lab::lanes {
namespace {

// Which rx run the load lane's criterion compares with (lane_support.hpp).
void post_rx_figure(const LaneConfig& cfg, double rate, bool prepared_only, double prepared_mib, double journaled_mib) {
  RxFigure f;
  f.prepared_only = prepared_only;
  f.prepared_mib = prepared_mib;
  f.journaled_mib = journaled_mib;
  f.connections = std::max<std::uint32_t>(1, cfg.connections);
  f.messages_per_s = rate;
  f.variant = cfg.variant;
  f.arm = cfg.arm;
  rx_figures().push_back(f);
}

struct Outcome {
  std::optional<Error> error;
  RunResult result;
};

/// The acceptor under test, started by the lane: hft-venue (its engine is
/// its main thread) or the llfix venue (its reactor thread, named in its
/// tid file).
struct RxVenue {
  std::unique_ptr<ChildProcess> process;
  pid_t engine_tid = -1;  ///< -1: the main thread
  std::filesystem::path store_dir;

  [[nodiscard]] std::uint64_t engine_cpu_ns() const {
    return engine_tid < 0 ? process->main_thread_cpu_ns() : thread_cpu_ns(process->pid(), engine_tid);
  }
  [[nodiscard]] int engine_cpu() const {
    return engine_tid < 0 ? process->main_thread_cpu() : thread_last_cpu(process->pid(), engine_tid);
  }
};

/// Finds hft-bench-llfix-venue (find_program: $HFT_LLFIX_VENUE_EXE, next to
/// hft-bench, or the build tree's).
Expected<std::filesystem::path> llfix_venue_executable() {
  ProgramSearch search;
  search.name = "hft-bench-llfix-venue";
  search.env_var = "HFT_LLFIX_VENUE_EXE";
#ifdef HFT_BENCH_LLFIX_VENUE_EXE
  search.built_path = HFT_BENCH_LLFIX_VENUE_EXE;
#endif
  search.hint = "configure with -DHFT_LLFIX_DIR=<llfix tree> and build it";
  return find_program(search);
}

Expected<RxVenue> start_llfix_venue(const LaneConfig& cfg, std::uint32_t sessions) {
  auto exe = llfix_venue_executable();
  if (!exe) return exe.error();
  RxVenue v;
  v.store_dir = cfg.run_dir / "llfix-venue-store";
  std::error_code ec;
  std::filesystem::create_directories(v.store_dir, ec);
  if (ec) return Error{v.store_dir.string() + ": cannot create (" + ec.message() + ")"};
  const std::filesystem::path tid_file = cfg.run_dir / "venue.tid";
  ChildSpec child;
  child.log_path = cfg.run_dir / "venue.log";
  child.port_file = cfg.run_dir / "venue.port";
  child.argv = {exe->string(), "--sessions", std::to_string(sessions), "--store", v.store_dir.string(),
                "--port-file", child.port_file.string(), "--tid-file", tid_file.string(),
                "--segment-size", std::to_string(cfg.segment_size), "--poll", cfg.variant == "epoll" ? "epoll" : "busy"};
  if (cfg.server_core >= 0) {
    child.argv.push_back("--core");
    child.argv.push_back(std::to_string(cfg.server_core));
  }
  // Every journal file is written full of zeros before the port is: two
  // per session.
  child.listen_timeout_s = 15.0 + 2.0 * sessions * static_cast<double>(cfg.segment_size) / 100e6;
  auto started = ChildProcess::start(child);
  if (!started) return started.error();
  v.process = std::move(*started);
  std::ifstream tid(tid_file);
  long t = 0;
  if (!(tid >> t) || t <= 0) return Error{tid_file.string() + ": the llfix venue wrote no reactor thread id"};
  v.engine_tid = static_cast<pid_t>(t);
  return v;
}

void run_rx_thread(const LaneConfig& cfg, RunContext& ctx, Outcome& out) {
  core::name_current_thread("rx-clients");
  RunResult& result = out.result;
  ThreadPlacement place{"clients", cfg.client_core, -1, -1};
  if (!core::pin_current_thread(cfg.client_core)) {
    out.error = Error{"cannot pin the client thread to CPU " + std::to_string(cfg.client_core)};
    return;
  }
  place.cpu_at_start = core::current_cpu();
  const std::uint32_t n = std::max<std::uint32_t>(1, cfg.connections);

  std::optional<RxVenue> venue;
  std::uint16_t port = cfg.venue_port;
  const bool llfix = cfg.engine == "llfix";
  if (port == 0 && llfix) {
    auto started = start_llfix_venue(cfg, n);
    if (!started) {
      out.error = Error{"llfix venue: " + started.error().message};
      return;
    }
    venue = std::move(*started);
    port = venue->process->port();
    result.notes.emplace_back("venue", venue->process->log_line_from("llfix venue: ") +
                                           "; pid " + std::to_string(venue->process->pid()) +
                                           "; one ExecutionReport per order; llfix session validations on, "
                                           "no dictionary validation");
  } else if (port == 0) {
    VenueSpec spec;
    spec.sessions.clear();
    for (std::uint32_t k = 0; k < n; ++k) spec.sessions.push_back({"CLIENT" + std::to_string(k + 1), {}});
    spec.busy_poll = cfg.variant != "epoll";
    spec.core = cfg.server_core;
    spec.segment_size = cfg.segment_size;
    spec.full_size_segments = cfg.variant != "growing";
    spec.prealloc = cfg.prealloc;
    auto started = VenueProcess::start(spec, cfg.run_dir);
    if (!started) {
      out.error = Error{"venue: " + started.error().message};
      return;
    }
    RxVenue v;
    v.store_dir = (*started)->store_dir();
    v.process = std::move(*started);
    venue = std::move(v);
    port = venue->process->port();
    const std::string journal =
        spec.full_size_segments
            ? std::to_string(cfg.segment_size >> 20) + " MiB segments"
            : "segments growing from the engine's JournalInitialSegmentSize up to " +
                  std::to_string(cfg.segment_size >> 20) + " MiB (the load lane's journal settings)";
    result.notes.emplace_back("venue", "hft-venue pid " + std::to_string(venue->process->pid()) + ", " + std::to_string(n) +
                                           " sessions, PollMode=" + (spec.busy_poll ? std::string("busy") : std::string("epoll")) + ", --no-fill, journal " +
                                           journal + ", FIXT11 + FIX50SP2 dictionary validation");
  }
  if (ctx.progress_total != nullptr) ctx.progress_total->store(cfg.warmup + cfg.calls);

  LoadGeneratorOptions options;
  options.hz = ctx.tsc->hz();
  options.window = cfg.window;
  LoadGenerator client(options);
  client.record_rtt(cfg.warmup, cfg.calls);
  std::vector<std::string> comp_ids;
  for (std::uint32_t k = 0; k < n; ++k) comp_ids.push_back("CLIENT" + std::to_string(k + 1));
  Expected<void> ok = client.connect(port, comp_ids);
  if (ok) ok = client.logon_all();
  if (ok && venue) {
    // After the logons: ResetOnLogon rolls every journal to its spare, and
    // the new spares (two per session) are pre-faulted now, not while measuring.
    const double settle_max = 10.0 + 4.0 * n * static_cast<double>(cfg.segment_size) / 100e6;
    result.notes.emplace_back("settle", wait_journal_threads_idle({venue->process->pid()}, settle_max));
    result.threads.push_back({llfix ? "llfix reactor" : "venue", cfg.server_core, venue->engine_cpu(), -1});
  }
  std::uint64_t batches = 0;
  if (ok && cfg.warmup > 0) {
    PhaseSpec warm;
    warm.orders = cfg.warmup;
    if (auto s = client.phase(warm); s) {
      batches += s->batches;
    } else {
      ok = s.error();
    }
  }
  PhaseShared shared;
  std::uint64_t cpu_start = 0, cpu_end = 0, client_cpu_start = 0, client_cpu_end = 0, t_end = 0;
  std::uint64_t journal_before = 0, journal_after = 0;  ///< venue journal bytes allocated around the measured phase
  std::uint64_t journaled = 0;  ///< bytes of the measured orders and reports on the wire
  if (ok) {
    shared.total = cfg.calls;
    shared.boundary.assign(cfg.calls / kLoadBlock, 0);
    PhaseSpec measured;
    measured.orders = cfg.calls;
    measured.measured = true;
    measured.shared = &shared;
    measured.ctx = &ctx;
    measured.progress_base = cfg.warmup;
    const pid_t self = static_cast<pid_t>(::gettid());
    if (venue) journal_before = allocated_bytes(venue->store_dir);
    cpu_start = venue ? venue->engine_cpu_ns() : 0;
    client_cpu_start = thread_cpu_ns(::getpid(), self);
    shared.t_start = tsc_now();
    auto s = client.phase(measured);
    cpu_end = venue ? venue->engine_cpu_ns() : 0;
    client_cpu_end = thread_cpu_ns(::getpid(), self);
    if (venue) journal_after = allocated_bytes(venue->store_dir);
    if (s) {
      batches += s->batches;
      t_end = s->last_ack;
      journaled = s->bytes_sent + s->bytes_received;
    } else {
      ok = s.error();
    }
  }
  if (ok) ok = client.logout_all();
  place.cpu_at_end = core::current_cpu();
  if (venue && !result.threads.empty()) result.threads.back().cpu_at_end = venue->engine_cpu();
  result.threads.insert(result.threads.begin(), place);
  if (!ok) {
    out.error = Error{ok.error().message + (venue ? " (venue log: " + venue->process->log_tail(300) + ")" : "")};
    return;
  }

  if (const std::uint64_t missing = client.unmatched(cfg.calls); missing != 0) {
    out.error = Error{std::to_string(missing) + " measured orders got no ExecutionReport with their ClOrdID"};
    return;
  }
  const double hz = ctx.tsc->hz();
  const double wall = static_cast<double>(t_end - shared.t_start) / hz;
  result.completed = cfg.calls;
  result.warmup_done = cfg.warmup;
  result.wall_seconds = wall;
  result.achieved_rate = wall > 0 ? static_cast<double>(cfg.calls) / wall : 0;
  result.window = cfg.window;
  Series per_message;
  per_message.name = "ns_per_message";
  per_message.unit = Unit::kTscTicks;
  per_message.ticks_per_second = hz;
  block_series(shared, per_message);
  result.series.push_back(std::move(per_message));
  result.series.push_back(client.rtt_series("rtt_under_load", cfg.calls));
  // Segments are fallocated whole (and, full size, zero-filled and
  // pre-faulted before the run): when the measured orders and reports (the
  // bytes the venue journals, less its record headers) fit in what was
  // allocated before the phase, every order went to journal memory
  // prepared before it, whether or not the service also prepared a next
  // segment while measuring.
  const bool created = journal_after != journal_before;
  const bool prepared_only = venue && (!created || journaled <= journal_before);
  const double mib = 1 << 20;
  post_rx_figure(cfg, result.achieved_rate, prepared_only, static_cast<double>(journal_before) / mib,
                 static_cast<double>(journaled) / mib);

  char text[320];
  std::snprintf(text, sizeof text, "%.0f messages/s (%u connections, %.3f s for %llu orders; %.0f ns/message wall)",
                result.achieved_rate, n, wall, static_cast<unsigned long long>(cfg.calls),
                wall * 1e9 / static_cast<double>(cfg.calls));
  result.notes.emplace_back("throughput", text);
  if (const std::string tenths = rate_by_tenths(shared, hz); !tenths.empty()) {
    result.notes.emplace_back("rate by tenth", tenths);
  }
  if (venue) {
    std::snprintf(text, sizeof text,
                  "%.1f MiB allocated before the measured phase, %.1f MiB after%s; the measured orders and reports "
                  "came to %.1f MiB on the wire",
                  static_cast<double>(journal_before) / mib, static_cast<double>(journal_after) / mib,
                  created ? " (segments created while measuring)" : "", static_cast<double>(journaled) / mib);
    std::string memory = text;
    if (prepared_only) {
      memory += std::string(created ? ", within what was allocated before the run" : ", and no segment was created") +
                ": every order went to segments zero-filled and pre-faulted before the run; this rate is a burst "
                "into ready journal memory, not what the venue sustains once it must prepare segments as it goes "
                "(a longer run, --calls, measures that)";
    }
    result.notes.emplace_back("venue journal memory", memory);
    const double cpu_ns = static_cast<double>(cpu_end - cpu_start);
    std::snprintf(text, sizeof text, "%.0f ns of venue engine-thread CPU per message (%.0f%% of the wall time busy)",
                  cpu_ns / static_cast<double>(cfg.calls), wall > 0 ? 100.0 * cpu_ns * 1e-9 / wall : 0.0);
    result.notes.emplace_back("acceptor CPU", text);
  }
  {
    const double client_ns = static_cast<double>(client_cpu_end - client_cpu_start);
    std::snprintf(text, sizeof text, "%.0f ns of client-thread CPU per message (%.0f%% of the wall time on CPU)",
                  client_ns / static_cast<double>(cfg.calls), wall > 0 ? 100.0 * client_ns * 1e-9 / wall : 0.0);
    result.notes.emplace_back("load generator CPU", text);
  }
  result.notes.emplace_back("client batches", std::to_string(batches) + " send batches of up to " +
                                                  std::to_string(kLoadBatch) + " orders, window " +
                                                  std::to_string(cfg.window) + " per connection");

  // Collect per-connection totals before the connections close.
  std::vector<std::pair<std::string, std::uint64_t>> totals;
  for (const auto& c : client.conns()) totals.emplace_back(c->comp_id, c->orders_total);
  client.close_all();

  if (venue) {
    auto stopped = venue->process->stop();
    if (!stopped) {
      out.error = stopped.error();
      return;
    }
    result.notes.emplace_back("venue at exit", *stopped);
    std::vector<std::pair<std::string, AuditResult>> audits;
    for (const auto& [comp, orders] : totals) {
      if (llfix) {
        // Inbound: the Logon, the orders and the Logout; outbound: the
        // Logon answer, one report per order and the Logout answer.
        audits.emplace_back(comp + " incoming", audit_llfix_journal(venue->store_dir / comp / "incoming", orders));
        audits.emplace_back(comp + " outgoing",
                            audit_llfix_journal(venue->store_dir / comp / "outgoing", orders, "8"));
        continue;
      }
      const auto dir = venue->store_dir /
                       (std::string(ref::kBeginString) + "-" + std::string(ref::kTarget) + "-" + comp);
      audits.emplace_back(comp, audit_venue_store(dir, orders, orders));
    }
    result.audit = combine_audits(audits);
    result.notes.emplace_back("journal disk use", empty_run_journals(cfg.run_dir, result.audit));
  } else {
    result.audit = {AuditResult::Status::kNotRun, 0, "external venue: its journals are not ours to audit"};
  }
}

Expected<RunResult> run_rx(const LaneConfig& cfg, RunContext& ctx) {
  if (ctx.tsc == nullptr) return Error{"rx: no calibrated TSC clock in the run context"};
  if (cfg.calls < kLoadBlock) return Error{"rx: --calls must be at least " + std::to_string(kLoadBlock)};
  if (cfg.variant != "busy" && cfg.variant != "epoll" && cfg.variant != "growing") {
    return Error{"rx: unknown variant '" + cfg.variant + "'"};
  }
  Outcome out;
  std::thread t(run_rx_thread, std::cref(cfg), std::ref(ctx), std::ref(out));
  t.join();
  if (out.error) return Error{"rx: " + out.error->message};
  return std::move(out.result);
}

Expected<void> rx_preflight(const LaneConfig& cfg) {
  if (cfg.calls < kLoadBlock) return Error{"rx: --calls " + std::to_string(cfg.calls) + ": at least 1000 orders"};
  if (cfg.variant == "growing" && (cfg.engine != "libhft" || cfg.venue_port != 0)) {
    return Error{"rx: variant growing sets the journal of the venue the lane starts: libhft only, without --venue"};
  }
  if (cfg.engine == "llfix") {
    if (cfg.venue_port != 0) return Error{"rx: --venue with --engines llfix: the llfix acceptor is started by the lane"};
    if (auto exe = llfix_venue_executable(); !exe) return Error{"rx: " + exe.error().message};
    const EngineInfo* info = EngineRegistry::instance().find("llfix");
    if (info != nullptr && info->check) {
      if (auto ok = info->check(cfg); !ok) return Error{"rx: " + ok.error().message};
    }
    return {};
  }
  LaneConfig c = cfg;
  c.engine = "libhft";
  return engine_lane_preflight(c);
}

Lane make_rx_lane() {
  Lane lane;
  lane.name = "rx";
  lane.summary = "N clients stream orders into one acceptor thread (validate, journal, answer): messages/s, ns/message";
  lane.available = true;
  lane.uses_engine = true;
  lane.engines = {"libhft", "llfix"};
  lane.variants = {"busy", "epoll", "growing"};
  lane.default_variants = {"busy"};
  lane.preflight = rx_preflight;
  lane.run = run_rx;
  return lane;
}

}  // namespace
HFT_LAB_REGISTER_LANE(make_rx_lane);
}  // namespace hft::lab::lanes
