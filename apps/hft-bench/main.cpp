// hft-bench: runs the lab's lanes and writes report.json, report.html, raw
// series and the audit result (docs/lab.md).
//
// Presets (every option given on the command line still wins):
//   --preset quick  every lane (floor busy-closed and busy-paced, tx, rtt,
//                   rx, codec), libhft, QuickFIX and llfix (those built),
//                   100,000 calls each,
//                   client/server on CPUs 1/0: the main job's run, under two
//                   minutes on a quiet 2-core host
//   --preset full   the seed-scale journal experiment: floor (busy-closed,
//                   busy-paced), tx and rtt for every engine built,
//                   1,000,000 calls, 3 runs per arm, arms seg64 (64 MiB
//                   segments: rotations inside the window) and seg640
//                   (640 MiB) interleaved A B B A A B. rx and codec are left
//                   out (add them with --lanes): eight sessions of 640 MiB
//                   pre-faulted segments would need 20 GiB of page cache.
//
// Exit codes: 0 every run completed and every audit passed; 1 a run failed or
// an audit failed (verify: a check failed); 2 bad arguments (one line on stderr naming what to change,
// printed before anything runs).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <ctime>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "hft/core/cpu.hpp"
#include "hft/lab/bench.hpp"
#include "hft/lab/engine_adapter.hpp"
#include "hft/lab/lane.hpp"
#include "hft/lab/verify.hpp"

namespace {

int bad_arguments(const std::string& message) {
  std::cerr << "hft-bench: " << message << "\n";
  return 2;
}

std::vector<std::string> split_commas(const std::vector<std::string>& items) {
  std::vector<std::string> out;
  for (const std::string& item : items) {
    std::stringstream ss(item);
    std::string part;
    while (std::getline(ss, part, ',')) {
      if (!part.empty()) out.push_back(part);
    }
  }
  return out;
}

std::string utc_stamp() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y%m%d-%H%M%S", &tm);
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  using hft::lab::BenchConfig;
  BenchConfig cfg;
  for (int k = 0; k < argc; ++k) cfg.command_line += (k == 0 ? "" : " ") + std::string(argv[k]);

  CLI::App app{"hft-bench: latency lab of libhft (docs/lab.md)", "hft-bench"};
  std::vector<std::string> lanes{"floor"};
  std::vector<std::string> variants;
  std::vector<std::string> engines{"libhft"};
  std::vector<std::string> arms;
  std::string segment_size = "64MiB";
  std::string prealloc = "on";
  std::string csv = "on";
  std::string progress = "auto";
  std::string venue;
  std::string out = "lab-out";
  bool list = false;
  std::string preset;
  // rx: eight client connections unless told otherwise (llfix's server benchmark).
  cfg.base.connections = 8;
  // load lane (issue 15): handed to it as lane controls (LaneConfig::extra).
  std::string sessions = "10,100,1000";
  std::string load_threads = "1";
  std::string load_core;
  std::string load_rate = "half";
  std::string probe_calls = "10000";
  std::string venue_poll = "epoll";
  std::string venue_journal = "session";
  std::string venue_journal_core;
  std::optional<int> producer_core;
  std::string venue_idle;
  // tx and rtt lanes (issue 14): lanes/disturbance.hpp.
  std::string garbage_peer, admin_scrape;

  app.add_option("--lanes", lanes, "Lanes to run, comma-separated: floor, tx, rtt, rx, codec, load")->delimiter(',');
  app.add_option("--variants", variants,
                 "Variants to run (default: each lane's defaults), e.g. busy-closed or floor:busy-paced")
      ->delimiter(',');
  app.add_option("--engines", engines, "Engines for tx/rtt: libhft (typed messages), libhft-tags (by tag), quickfix, llfix")->delimiter(',');
  app.add_option("--calls", cfg.base.calls, "Measured calls per run")->capture_default_str();
  app.add_option("--warmup", cfg.base.warmup, "Warm-up calls per run (run, not recorded)")->capture_default_str();
  app.add_option("--runs", cfg.runs, "Runs per lane/variant/engine/arm (never pooled)")->capture_default_str();
  app.add_option("--rate", cfg.base.rate, "Target calls/s of paced variants")->capture_default_str();
  app.add_option("--window", cfg.base.window, "Calls in flight at most in paced variants")->capture_default_str();
  app.add_option("--client-core", cfg.base.client_core, "CPU of the client thread (-1: unpinned)")
      ->capture_default_str();
  app.add_option("--server-core", cfg.base.server_core, "CPU of the server / venue thread (-1: unpinned)")
      ->capture_default_str();
  app.add_option("--producer-core", producer_core,
                 "tx lane, variants paced-ring*: CPU of the thread that builds the orders (default: --server-core)");
  app.add_option("--venue-idle", venue_idle,
                 "tx and rtt lanes: the venue busy-polls (spin) or waits in epoll_wait (sleep) between messages")
      ->check(CLI::IsMember({"spin", "sleep"}));
  std::string os_counters;
  app.add_option("--os-counters", os_counters,
                 "tx and rtt lanes: sample the timed thread's context switches and page faults (getrusage) after "
                 "every measured call, outside the timed region, for the long-call attribution (default on)")
      ->check(CLI::IsMember({"on", "off"}));
  app.add_option(
         "--garbage-peer", garbage_peer,
         "tx and rtt lanes: a hostile client sends this many pieces of garbage per second to the venue's "
         "port during each measured run (random bytes, garbled frames, Logons from unknown CompIDs, garbled "
         "messages on a session of its own); 0: the venue gets the peer's session, nothing is sent")
      ->type_name("RATE");
  app.add_option(
         "--admin-scrape", admin_scrape,
         "tx and rtt lanes: start the venue's admin endpoint and ask it GET /metrics and GET /sessions in "
         "turn, this many requests per second, during each measured run; 0: the endpoint is on, not asked")
      ->type_name("RATE");
  std::string bracket_calls = std::to_string(cfg.bracket_calls);
  app.add_option("--bracket-calls", bracket_calls,
                 "tx and rtt lanes: measured calls of the floor busy-closed run just before and just after each run "
                 "(0: no brackets)")
      ->capture_default_str();
  app.add_option("--bracket-tolerance", cfg.bracket_tolerance,
                 "Largest p50 drift |after-before|/before of a run's floor brackets for the run to count in "
                 "comparisons (a fraction: 0.10 is 10%)")
      ->capture_default_str();
  app.add_option("--message-size", cfg.base.message_size, "Bytes per message of the floor lane")
      ->capture_default_str();
  app.add_option("--segment-size", segment_size, "Journal segment size (bytes or 64MiB, 640MiB)")
      ->capture_default_str();
  app.add_option("--prealloc", prealloc, "Journal segment preallocation: on|off")->capture_default_str();
  app.add_option("--venue", venue, "HOST:PORT of a running hft-venue (default: lanes start their own)");
  app.add_option("--connections,--clients", cfg.base.connections, "Client connections of the rx lane")
      ->capture_default_str();
  app.add_option("--sessions", sessions,
                 "load lane: session counts, one run set per entry (e.g. 10,100,1000)")
      ->capture_default_str();
  app.add_option("--load-threads", load_threads, "load lane: load-generator threads, 1 or 2 (each pinned)")
      ->capture_default_str();
  app.add_option("--load-core", load_core,
                 "load lane: CPU of the second load thread (default: --client-core, beside the first)");
  app.add_option(
         "--load-rate", load_rate,
         "load lane, variant paced: messages/s over all sessions (half: half of the rx lane's rate with 8 "
         "clients in this invocation, the criterion's load; without one, half of what max reached in the "
         "same run set)")
      ->capture_default_str();
  app.add_option("--probe-calls", probe_calls, "load lane: probe orders timed alone before the load")
      ->capture_default_str();
  app.add_option("--venue-poll", venue_poll,
                 "load lane: the venue's poll mode, epoll (EpollTimeoutMs=0, busy-spin) or busy")
      ->capture_default_str();
  app.add_option(
         "--venue-journal", venue_journal,
         "load lane: the venue's journal layout, session (a journal per session and direction) or shared "
         "(JournalLayout=shared: one journal for every session, audited in one pass)")
      ->capture_default_str();
  app.add_option("--venue-journal-core", venue_journal_core,
                 "load lane: CPU of the venue's journal service (default: --server-core, beside the engine "
                 "thread; -1: unpinned)");
  app.add_option("--preset", preset,
                 "quick: all lanes, every engine built (libhft, QuickFIX, llfix), 100,000 calls (under 2 minutes on a quiet 2-core host); "
                 "full: the seed-scale journal experiment (floor, tx, rtt; 1,000,000 calls, 3 runs per arm, "
                 "64 MiB vs 640 MiB segments interleaved); options given explicitly win")
      ->check(CLI::IsMember({"quick", "full"}));
  app.add_option("--out", out, "Output directory")->capture_default_str();
  app.add_option("--experiment", cfg.experiment, "Experiment name: run the --arm arms interleaved (A B B A ...)");
  app.add_option("--arm", arms, "Experiment arm NAME:key=value[,key=value] (repeat; keys are option names)");
  app.add_option("--csv", csv, "Also write raw series as CSV: on|off")->capture_default_str();
  app.add_option("--progress", progress, "Progress line on stderr: auto|on|off")->capture_default_str();
  app.add_option("--quiet-before", cfg.quiet_before_s, "Seconds of quiet-check sampling before the first run")
      ->capture_default_str();
  app.add_option("--quiet-interval", cfg.quiet_interval_s, "Seconds between quiet samples during runs (0: off)")
      ->capture_default_str();
  app.add_flag("--require-quiet", cfg.require_quiet,
               "Refuse to start (exit 3, one line naming the load or process) when the check before the first run "
               "is not quiet");
  app.add_option("--load-limit", cfg.load_limit, "Quiet check: load average at or above this is not quiet")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--process-limit", cfg.process_limit_percent,
                 "Quiet check: another process above this % of a CPU is not quiet")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--list-lanes", list, "List lanes and variants, then exit");
  // hft-bench verify DIR: re-derives an output directory (docs/lab.md, "verify").
  std::string verify_dir;
  CLI::App* verify = app.add_subcommand(
      "verify", "Check DIR against its manifest.sha256 and recompute every statistic of its report.json from the raw "
                "series; exit 0 when everything matches, 1 listing every difference");
  verify->add_option("DIR", verify_dir, "Output directory of a bench (its --out)")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string what = e.what();
    if (const auto nl = what.find('\n'); nl != std::string::npos) what.resize(nl);
    return bad_arguments(what + " (see hft-bench --help)");
  }

  if (*verify) {
    const hft::lab::VerifyResult result = hft::lab::verify_output(verify_dir);
    std::cout << hft::lab::verify_text(verify_dir, result);
    return result.ok() ? 0 : 1;
  }

  auto& registry = hft::lab::LaneRegistry::instance();
  if (list) {
    for (const std::string& name : registry.names()) {
      const hft::lab::Lane* lane = registry.find(name);
      std::cout << name << (lane->available ? "" : " (not available in this build)") << ": " << lane->summary << "\n";
      for (const std::string& v : lane->variants) std::cout << "  " << v << "\n";
    }
    return 0;
  }

  if (!preset.empty()) {
    // A preset fills what the command line left out.
    const auto given = [&](const char* option) { return app.count(option) > 0; };
    const bool full = preset == "full";
    if (!given("--lanes")) {
      lanes = full ? std::vector<std::string>{"floor", "tx", "rtt"}
                   : std::vector<std::string>{"floor", "tx", "rtt", "rx", "codec"};
    }
    const std::vector<std::string> chosen = split_commas(lanes);
    const bool floor_selected = std::find(chosen.begin(), chosen.end(), "floor") != chosen.end();
    // The floor's busy-polled variants are the ones the engine lanes are
    // judged against (the blocking ones double the floor's time on 2 cores).
    if (!given("--variants") && floor_selected) variants = {"floor:busy-closed", "floor:busy-paced"};
    if (!given("--engines")) {
      // Every engine this build has (QuickFIX with libquickfix-dev, llfix
      // with HFT_LLFIX_DIR).
      engines = {"libhft"};
      for (const char* other : {"quickfix", "llfix"}) {
        const hft::lab::EngineInfo* info = hft::lab::EngineRegistry::instance().find(other);
        if (info != nullptr && info->available) engines.emplace_back(other);
      }
    }
    if (!given("--calls")) cfg.base.calls = full ? 1'000'000 : 100'000;
    if (!given("--client-core") && !given("--server-core") && hft::core::cpu_exists(0) &&
        hft::core::cpu_exists(1)) {
      cfg.base.client_core = 1;
      cfg.base.server_core = 0;
    }
    if (full) {
      if (!given("--runs")) cfg.runs = 3;
      if (!given("--experiment") && arms.empty()) {
        cfg.experiment = "journal-segment";
        arms = {"seg64:segment-size=64MiB", "seg640:segment-size=640MiB"};
      }
    }
    if (!given("--out")) out = "lab-out/" + preset + "-" + utc_stamp();
  }

  cfg.lanes = split_commas(lanes);
  cfg.variants = split_commas(variants);
  cfg.engines = split_commas(engines);
  cfg.out_dir = out;
  if (cfg.lanes.empty()) return bad_arguments("--lanes: name at least one lane (e.g. --lanes floor)");
  if (auto v = hft::lab::parse_size(segment_size); !v) {
    return bad_arguments("--segment-size " + v.error().message);
  } else {
    cfg.base.segment_size = *v;
  }
  if (auto v = hft::lab::parse_on_off(prealloc); !v) {
    return bad_arguments("--prealloc " + v.error().message + " (use on or off)");
  } else {
    cfg.base.prealloc = *v;
  }
  {
    const auto end = bracket_calls.data() + bracket_calls.size();
    const auto parsed = std::from_chars(bracket_calls.data(), end, cfg.bracket_calls);
    if (bracket_calls.empty() || parsed.ec != std::errc{} || parsed.ptr != end) {
      return bad_arguments("--bracket-calls " + bracket_calls +
                           ": expected a whole number of calls (0 turns brackets off)");
    }
  }
  if (auto v = hft::lab::parse_on_off(csv); !v) {
    return bad_arguments("--csv " + v.error().message + " (use on or off)");
  } else {
    cfg.write_csv = *v;
  }
  if (progress == "auto") {
    cfg.progress = hft::lab::ProgressMode::kAuto;
  } else if (progress == "on") {
    cfg.progress = hft::lab::ProgressMode::kOn;
  } else if (progress == "off") {
    cfg.progress = hft::lab::ProgressMode::kOff;
  } else {
    return bad_arguments("--progress " + progress + ": use auto, on or off");
  }
  if (!venue.empty()) {
    const auto colon = venue.rfind(':');
    int port = 0;
    try {
      port = colon == std::string::npos ? -1 : std::stoi(venue.substr(colon + 1));
    } catch (...) {
      port = -1;
    }
    if (colon == std::string::npos || colon == 0 || port <= 0 || port > 65535) {
      return bad_arguments("--venue " + venue + ": expected HOST:PORT, e.g. 127.0.0.1:9878");
    }
    cfg.base.venue_host = venue.substr(0, colon);
    cfg.base.venue_port = static_cast<std::uint16_t>(port);
  }
  if (cfg.quiet_before_s < 0 || cfg.quiet_interval_s < 0) {
    return bad_arguments("--quiet-before/--quiet-interval: seconds must not be negative");
  }
  for (const std::string& a : arms) {
    auto arm = hft::lab::parse_arm(a);
    if (!arm) return bad_arguments(arm.error().message);
    cfg.arms.push_back(std::move(*arm));
  }

  if (producer_core) {
    if (*producer_core < -1 || (*producer_core >= 0 && !hft::core::cpu_exists(*producer_core))) {
      return bad_arguments("--producer-core " + std::to_string(*producer_core) +
                           ": no such CPU for this process (or -1 to leave the producer unpinned)");
    }
    cfg.base.extra["producer-core"] = std::to_string(*producer_core);
  }
  if (!venue_idle.empty()) cfg.base.extra["venue-idle"] = venue_idle;
  if (!os_counters.empty()) cfg.base.extra["os-counters"] = os_counters;
  // Values are checked with the lanes' own preflight (as an --arm key's are).
  for (const auto& [option, key, rate] : {std::tuple{"--garbage-peer", "garbage-peer", garbage_peer},
                                          std::tuple{"--admin-scrape", "admin-scrape", admin_scrape}}) {
    if (app.count(option) == 0) continue;
    if (std::find(cfg.lanes.begin(), cfg.lanes.end(), "tx") == cfg.lanes.end() &&
        std::find(cfg.lanes.begin(), cfg.lanes.end(), "rtt") == cfg.lanes.end()) {
      return bad_arguments(std::string(option) + ": disturbs tx and rtt runs only; add --lanes rtt (or tx)");
    }
    cfg.base.extra[key] = rate;
  }
  if (std::find(cfg.lanes.begin(), cfg.lanes.end(), "load") != cfg.lanes.end()) {
    cfg.base.extra["sessions"] = sessions;
    cfg.base.extra["load-threads"] = load_threads;
    if (!load_core.empty()) cfg.base.extra["load-core"] = load_core;
    cfg.base.extra["load-rate"] = load_rate;
    cfg.base.extra["probe-calls"] = probe_calls;
    cfg.base.extra["venue-poll"] = venue_poll;
    cfg.base.extra["venue-journal"] = venue_journal;
    if (!venue_journal_core.empty()) cfg.base.extra["venue-journal-core"] = venue_journal_core;
  }

  // The load lane expands its runs into one set per --sessions entry here (Lane::expand_plan).
  auto plan = hft::lab::plan_bench(cfg, registry);
  if (!plan) return bad_arguments(plan.error().message);

  auto report = hft::lab::run_bench(cfg, *plan, std::cout, std::cerr);
  if (!report) {
    std::cerr << "hft-bench: " << report.error().message << "\n";
    return report.error().message.rfind(hft::lab::kNotQuietPrefix, 0) == 0 ? 3 : 1;
  }
  hft::lab::print_lane_summaries(cfg, registry, *report, std::cout);
  for (const auto& run : report->runs) {
    if (!run.error.empty() || run.result.audit.status == hft::lab::AuditResult::Status::kFail) return 1;
  }
  return 0;
}
