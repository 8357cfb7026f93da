#include "engine_run.hpp"

#include <chrono>
#include <map>
#include <optional>
#include <thread>

#include "disturbance.hpp"
#include "hft/core/cpu.hpp"
#include "hft/core/trace.hpp"
#include "hft/engine/trace_file.hpp"
#include "hft/lab/tls_credentials.hpp"

namespace hft::lab::lanes {

namespace {

std::string mib(std::uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f MiB", static_cast<double>(bytes) / (1 << 20));
  return text;
}

// Records the client process's event trace holds: libhft's engine, journal
// and transport in this process (QuickFIX and llfix emit none). On for the
// life of the process once a run needs it; each run drains it first.
constexpr std::size_t kClientTraceRecords = std::size_t{1} << 18;
// Windows with a counter change the OS sampler keeps, at most.
constexpr std::uint64_t kMaxOsWindows = std::uint64_t{1} << 22;

// Everything after the adapter connected, on the client thread.
Expected<void> drive(EngineRun& run, const EngineLoop& loop) {
  if (auto e = loop(run); !e) return e;
  if (run.sink) return {};  // the Logout, after every order, tells when the venue has them all
  // Every order gets one report: wait for the last before logging out, so
  // the venue's journals hold the whole run when they are audited.
  const std::uint64_t deadline = tsc_now() + ticks(run.hz, 30.0);
  std::uint64_t spins = 0;
  std::uint64_t first = 0;
  while (run.reports < run.orders) {
    (void)run.poll(first);
    if (every_4096(spins) && tsc_now() > deadline) {
      return Error{"only " + std::to_string(run.reports) + " of " + std::to_string(run.orders) +
                   " ExecutionReports arrived within 30 s of the last order"};
    }
  }
  if (run.mismatches != 0) {
    return Error{std::to_string(run.mismatches) + " ExecutionReports did not carry the ClOrdID expected"};
  }
  return {};
}

}  // namespace

Expected<RunResult> run_engine_lane(const LaneConfig& config, RunContext& context, const EngineLoop& loop) {
  if (context.tsc == nullptr) return Error{config.lane + ": no calibrated TSC clock in the run context"};
  const EngineInfo* info = EngineRegistry::instance().find(config.engine);
  if (info == nullptr || !info->available || !info->make) {
    return Error{config.lane + ": engine '" + config.engine + "' is not available in this build"};
  }

  RunResult result;
  std::optional<Error> error;
  const bool sink = config.variant.ends_with("-sink");
  const bool tls = config.variant.ends_with("-tls");
  auto disturbances = Disturbances::from(config);  // --garbage-peer, --admin-scrape
  if (!disturbances) return Error{config.lane + ": " + disturbances.error().message};
  std::thread client([&] {
    core::name_current_thread(config.lane + "-client");
    ThreadPlacement place{"client", config.client_core, -1, -1};
    if (!core::pin_current_thread(config.client_core)) {
      error = Error{"client: cannot pin to CPU " + std::to_string(config.client_core)};
      return;
    }
    place.cpu_at_start = core::current_cpu();

    // The venue.
    LaneConfig cfg = config;
    std::unique_ptr<VenueProcess> venue;
    if (cfg.venue_port == 0) {
      VenueSpec spec;
      spec.core = config.server_core;
      spec.segment_size = config.segment_size;
      spec.prealloc = config.prealloc;
      // venue-idle=sleep (--venue-idle): the venue waits in epoll_wait and
      // gives its core up between messages (on a 2-core host, to a
      // producer thread that shares it); spin (default): busy poll.
      const auto idle = config.extra.find("venue-idle");
      const bool sleeps = idle != config.extra.end() && idle->second == "sleep";
      spec.busy_poll = !sleeps;
      spec.sink = sink;
      spec.trace_file = (config.run_dir / "venue.trace").string();
      if (tls) {
        // The run's own CA, venue and client certificates, made now (not timed).
        const std::string dir = (config.run_dir / "tls").string();
        std::string made_error;
        if (lab::make_tls_credentials(dir, &made_error).directory.empty()) {
          error = Error{"TLS credentials: " + made_error};
          return;
        }
        spec.tls_dir = dir;
        cfg.extra["tls-ca"] = dir + "/ca.pem";
        cfg.extra["tls-cert"] = dir + "/client.pem";
        cfg.extra["tls-key"] = dir + "/client-key.pem";
      }
      disturbances->prepare(spec, config.run_dir);
      auto started = VenueProcess::start(spec, config.run_dir);
      if (!started) {
        error = Error{"venue: " + started.error().message};
        return;
      }
      venue = std::move(*started);
      cfg.venue_host = "127.0.0.1";
      cfg.venue_port = venue->port();
      result.notes.emplace_back("venue", "hft-venue pid " + std::to_string(venue->pid()) + " on 127.0.0.1:" +
                                             std::to_string(venue->port()) +
                                             (spec.busy_poll ? " (busy poll, " : " (epoll, sleeping when idle, ") +
                                             (sink ? "--sink: orders journaled, none answered, journal "
                                                   : "--no-fill: one ExecutionReport per order, journal ") +
                                             mib(config.segment_size) + " segments" +
                                             (tls ? "; TLS, client certificate required" : "") + ")");
    } else {
      result.notes.emplace_back("venue", "external " + cfg.venue_host + ":" + std::to_string(cfg.venue_port));
    }

    std::unique_ptr<EngineAdapter> adapter = info->make();
    result.notes.emplace_back("engine", adapter->version());
    const auto seconds_since = [](std::chrono::steady_clock::time_point t) {
      return std::to_string(std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count()) + " s";
    };
    const auto t_start = std::chrono::steady_clock::now();
    if (auto started = adapter->start(cfg); !started) {
      error = Error{config.engine + ": " + started.error().message +
                    (venue ? " (venue log: " + venue->log_tail(300) + ")" : "")};
      return;
    }
    result.notes.emplace_back("engine start (connect, logon)", seconds_since(t_start));
    std::vector<pid_t> pids{::getpid()};
    if (venue) pids.push_back(venue->pid());
    // Pre-faulting runs at a few hundred MB/s on a small VM: allow for the
    // active and spare segments of four journals (client and venue, both
    // directions) before giving up.
    const double settle_max = 10.0 + 8.0 * static_cast<double>(config.segment_size) / 100e6;
    result.notes.emplace_back("settle", wait_journal_threads_idle(pids, settle_max));
    if (venue) result.threads.push_back({"venue", config.server_core, venue->engine_cpu(), -1});
    if (venue) {
      if (auto started = disturbances->start(*venue, cfg); !started) {
        error = started.error();
        return;
      }
    }

    EngineRun run{config, context, *adapter, result, context.tsc->hz()};
    run.sink = sink;
    // The event trace (docs/lab.md, "Event trace and attribution"): the
    // client process's own, emptied now, and the timed thread's counters.
    std::optional<ThreadCounterSampler> os;
    if (const auto it = config.extra.find("os-counters"); it == config.extra.end() || it->second != "off") {
      os.emplace(static_cast<std::size_t>(std::min<std::uint64_t>(config.calls, kMaxOsWindows)));
      run.os = &*os;
    }
    (void)core::trace::enable(kClientTraceRecords);
    std::vector<core::TraceRecord> client_trace;
    (void)core::trace::drain(client_trace);
    client_trace.clear();
    const std::uint64_t client_dropped_before = core::trace::dropped();
    if (context.progress_total != nullptr) context.progress_total->store(config.warmup + config.calls);
    Expected<void> driven = drive(run, loop);
    // Drained while the adapter's threads still run: their names are read now.
    (void)core::trace::drain(client_trace);
    RunEvents& events = result.events;
    events.traced = run.time_origin != 0;
    events.dropped = core::trace::dropped() - client_dropped_before;
    events.sources.emplace_back("client engine (libhft's trace in this process; none from other engines)");
    {
      std::map<std::uint32_t, std::string> names;
      for (const core::TraceRecord& r : client_trace) {
        if (r.end < run.time_origin) continue;
        auto [it, added] = names.try_emplace(r.tid);
        if (added) it->second = engine::thread_name(r.tid);
        events.events.push_back(trace_event(r, it->second, "client", run.time_origin));
      }
    }
    if (os) {
      events.sources.emplace_back("os counters of the timed thread (getrusage after each call)");
      auto sampled = os->events(run.time_origin, config.lane + "-client");
      events.events.insert(events.events.end(), sampled.begin(), sampled.end());
      events.dropped += os->dropped();
    }
    if (venue) disturbances->stop(*venue, result);
    place.cpu_at_end = core::current_cpu();
    for (ThreadPlacement& t : result.threads) {
      if (venue && t.role == "venue") t.cpu_at_end = venue->engine_cpu();
    }
    result.threads.insert(result.threads.begin(), place);
    result.notes.emplace_back("order bytes on the wire (last)", std::to_string(adapter->last_order_size()));
    result.notes.emplace_back("orders sent / ExecutionReports received",
                              std::to_string(run.orders) + " / " + std::to_string(run.reports));

    const auto t_stop = std::chrono::steady_clock::now();
    Expected<std::filesystem::path> journal = adapter->stop();
    adapter.reset();
    result.notes.emplace_back("engine stop (logout, close)", seconds_since(t_stop));
    std::string venue_counters;
    if (venue) {
      auto stopped = venue->stop();
      if (!stopped) {
        if (driven) driven = stopped.error();
      } else {
        venue_counters = *stopped;
        result.notes.emplace_back("venue at exit", venue_counters);
      }
      if (events.traced) {
        // Written by the venue as it stopped.
        auto trace = engine::read_trace_file((config.run_dir / "venue.trace").string());
        if (!trace) {
          result.notes.emplace_back("venue trace", "not read: " + trace.error().message);
        } else {
          events.sources.emplace_back("venue engine (hft-venue --trace-file)");
          events.dropped += trace->dropped;
          for (const engine::TraceFileRecord& r : trace->records) {
            if (r.record.end < run.time_origin) continue;
            events.events.push_back(trace_event(r.record, r.thread, "venue", run.time_origin));
          }
        }
      }
      disturbances->after_venue_stop(*venue, config.run_dir, result);
      if (tls) {
        // After the stop, the venue's log is complete: its "TLS <protocol> <cipher> with <peer>" line.
        const std::string line = venue->log_line_from("TLS TLSv");
        result.notes.emplace_back("tls", line.empty() ? std::string("venue log names no TLS connection") : line.substr(4));
      }
    }
    sort_events(events.events);
    if (!driven) {
      error = Error{driven.error().message + (venue ? " (venue log: " + venue->log_tail(300) + ")" : "")};
      return;
    }
    if (!journal) {
      error = journal.error();
      return;
    }

    // Audits (rule 10): the client's outbound journal, then the venue's.
    std::vector<std::pair<std::string, AuditResult>> audits;
    audits.emplace_back("client", audit_client_journal(*journal, run.orders));
    if (venue) {
      const auto session_dir = venue->store_dir() / (std::string(ref::kBeginString) + "-" +
                                                     std::string(ref::kTarget) + "-" + std::string(ref::kSender));
      audits.emplace_back("venue", audit_venue_store(session_dir, run.orders, sink ? 0 : run.orders));
    }
    result.audit = combine_audits(audits);
    result.notes.emplace_back("journal disk use", empty_run_journals(config.run_dir, result.audit));
  });
  client.join();
  if (error) return Error{config.lane + " " + config.variant + " " + config.engine + ": " + error->message};
  return result;
}

Lane make_engine_lane(std::string name, std::string summary,
                      std::vector<std::pair<std::string, EngineLoop>> loops) {
  Lane lane;
  lane.name = std::move(name);
  lane.summary = std::move(summary);
  lane.available = true;
  lane.uses_engine = true;
  for (const auto& entry : loops) lane.variants.push_back(entry.first);
  lane.default_variants = lane.variants;
  lane.preflight = [](const LaneConfig& cfg) -> Expected<void> {
    if (auto e = engine_lane_preflight(cfg); !e) return e;
    return Disturbances::check(cfg);
  };
  lane.controls = {"venue-idle", "os-counters"};
  lane.controls.insert(lane.controls.end(), kDisturbanceControls.begin(), kDisturbanceControls.end());
  lane.run = [name = lane.name, loops = std::move(loops)](const LaneConfig& cfg,
                                                         RunContext& ctx) -> Expected<RunResult> {
    for (const auto& [variant, loop] : loops) {
      if (cfg.variant != variant) continue;
      if (variant.rfind("paced", 0) == 0 && !(cfg.rate > 0)) return Error{name + " " + variant + ": --rate must be > 0"};
      return run_engine_lane(cfg, ctx, loop);
    }
    return Error{name + ": unknown variant '" + cfg.variant + "'"};
  };
  return lane;
}

}  // namespace hft::lab::lanes
