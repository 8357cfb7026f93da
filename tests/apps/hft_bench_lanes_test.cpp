// End to end: the real hft-bench runs every lane (floor, tx, rtt, rx, codec)
// against a real hft-venue child with libhft (and QuickFIX when built), and
// what a user reads afterwards is right: exit code 0, report.json with every
// run, its raw series of the requested size and a passing audit that
// actually looked at the journals; audit.json agreeing.
#include <cctype>
#include <cstring>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "apps/hft_bench_run.hpp"
#include "hft/lab/events.hpp"
#include "hft/lab/manifest.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using Outcome = hft::test::BenchOutcome;
using HftBenchLanes = hft::test::HftBenchRun;

std::string engines() {
#if HFT_BENCH_HAS_QUICKFIX
  return "libhft,quickfix";
#else
  return "libhft";
#endif
}

const json* series_named(const json& run, const std::string& name) {
  for (const json& s : run["series"]) {
    if (s["name"] == name) return &s;
  }
  return nullptr;
}

TEST_F(HftBenchLanes, every_lane_runs_and_every_journal_audit_passes) {
  // Light enough for ASan on two shared CPUs: the paced rate is one an
  // instrumented build keeps up with; nothing here asserts on timing.
  const std::uint64_t calls = 2000;
  const json report = run_passing("--lanes floor,tx,rtt,rx,codec --engines " + engines() + " --calls " +
                                  std::to_string(calls) + " --warmup 200 --rate 5000" +
                                  " --segment-size 1MiB --clients 4 --bracket-calls 2000");
  ASSERT_TRUE(report.is_object());
  const std::size_t n_engines = engines().find(',') == std::string::npos ? 1 : 2;
  // floor 4 variants, tx 4 (unpaced, paced, each also against a sink venue)
  // and rtt 2 per engine, rx 1, codec 3.
  ASSERT_EQ(report["runs"].size(), 4 + 6 * n_engines + 1 + 3);

  std::map<std::string, int> per_lane;
  std::set<std::string> tx_engines;
  for (const json& run : report["runs"]) {
    const std::string lane = run["lane"];
    const std::string id = run["id"];
    ++per_lane[lane];
    EXPECT_EQ(run["error"], "") << id;
    EXPECT_EQ(run["audit"]["status"], "pass") << id << ": " << run["audit"]["detail"];
    ASSERT_FALSE(run["series"].empty()) << id;
    const json& primary = run["series"][0];
    if (lane == "rx") {
      // One ns/message sample per 1,000 answered orders; one rtt per order.
      EXPECT_EQ(primary["stats"]["count"], calls / 1000) << id;
      const json* rtt = series_named(run, "rtt_under_load");
      ASSERT_NE(rtt, nullptr) << id;
      EXPECT_EQ((*rtt)["stats"]["count"], calls) << id;
      EXPECT_GT(run["achieved_rate"].get<double>(), 0) << id;
      // The venue's journals of all four sessions were audited.
      const std::string detail = run["audit"]["detail"];
      EXPECT_NE(detail.find("EXECUTOR-CLIENT4"), std::string::npos) << detail;
      continue;
    }
    EXPECT_EQ(primary["stats"]["count"], calls) << id;
    const double p50 = primary["stats"]["p50_ns"];
    const double max = primary["stats"]["max_ns"];
    EXPECT_GT(p50, 0) << id;
    EXPECT_LE(p50, max) << id;
    // Raw series files exist and are not empty.
    const fs::path raw = dir_ / "lab" / primary["files"]["binary"].get<std::string>();
    EXPECT_TRUE(fs::exists(raw) && fs::file_size(raw) > 64 + calls * 8) << raw;

    if (lane != "tx" && lane != "rtt" && lane != "rx") {
      EXPECT_TRUE(run["bracket"].is_null()) << id;
    }
    if (lane == "tx" || lane == "rtt") {
      const std::string engine = run["engine"];
      if (lane == "tx") tx_engines.insert(engine);
      // A floor bracket just before and just after the run, each with its raw series.
      for (const char* which : {"before", "after"}) {
        const json& b = run["bracket"][which];
        EXPECT_EQ(b["error"], "") << id << " " << which;
        EXPECT_EQ(b["series"]["stats"]["count"], 2000) << id << " " << which;
        EXPECT_EQ(b["audit"]["status"], "pass") << id << " " << which;
        EXPECT_TRUE(fs::exists(dir_ / "lab" / b["series"]["files"]["binary"].get<std::string>())) << id;
      }
      EXPECT_EQ(run["bracket"]["check"]["measured"], true) << id;
      const std::string detail = run["audit"]["detail"];
      // The client's outbound journal held every order, warm-ups included,
      // and the venue's inbound journal the same number.
      const std::string count = "35=D count " + std::to_string(calls + 200) + " == expected";
      EXPECT_NE(detail.find(count), std::string::npos) << id << ": " << detail;
      EXPECT_NE(detail.find("venue inbound journal"), std::string::npos) << detail;
      const std::string bytes = run["notes"]["order bytes on the wire (last)"];
      EXPECT_GE(std::stoi(bytes), 230) << id;
      EXPECT_LE(std::stoi(bytes), 250) << id;
      const std::string variant = run["variant"];
      const bool sink = variant.ends_with("-sink");
      // Against the sink venue nothing is answered, and its outbound
      // journal is audited to hold no ExecutionReport; otherwise one per order.
      const std::string counts = run["notes"]["orders sent / ExecutionReports received"];
      EXPECT_EQ(counts, std::to_string(calls + 200) + " / " + std::to_string(sink ? 0 : calls + 200)) << id;
      const std::string venue = run["notes"]["venue"];
      EXPECT_NE(venue.find(sink ? "--sink" : "--no-fill"), std::string::npos) << id << ": " << venue;
      if (lane == "tx") {
        EXPECT_NE(detail.find("35=8 count " + std::to_string(sink ? 0 : calls + 200) + " == expected"),
                  std::string::npos)
            << id << ": " << detail;
      }
      if (variant == "paced" || variant == "paced-sink") {
        ASSERT_NE(series_named(run, "scheduler_delay"), nullptr) << id;
        ASSERT_NE(series_named(run, "response"), nullptr) << id;
        EXPECT_EQ(run["target_rate"], 5000.0) << id;
      }
      if (lane == "tx") {
        // Every engine's call split in the same clock: the interposed
        // send() and the rest; libhft's own stages beside them.
        const json* send = series_named(run, "send");
        const json* rest = series_named(run, "engine");
        ASSERT_NE(send, nullptr) << id;
        ASSERT_NE(rest, nullptr) << id;
        EXPECT_EQ((*send)["stats"]["count"], calls) << id;
        EXPECT_EQ((*rest)["stats"]["count"], calls) << id;
        EXPECT_GT((*send)["stats"]["p50_ns"].get<double>(), 0) << id << ": send() was timed";
        EXPECT_LT((*send)["stats"]["p50_ns"].get<double>(), primary["stats"]["p50_ns"].get<double>()) << id;
        const std::string split = run["notes"]["send() split"];
        EXPECT_NE(split.find("send() interposed"), std::string::npos) << id << ": " << split;
        if (engine == "libhft") {
          for (const char* stage : {"stage.begin_app", "stage.body", "stage.send_call", "stage.send_call_minus_send"}) {
            const json* st = series_named(run, stage);
            ASSERT_NE(st, nullptr) << id << " " << stage;
            EXPECT_EQ((*st)["stats"]["count"], calls) << id << " " << stage;
          }
        }
      }
    }
    if (lane == "codec") {
      ASSERT_EQ(run["series"].size(), 2u) << id;
      EXPECT_EQ(run["series"][1]["name"], "execution_report") << id;
    }
  }
  EXPECT_EQ(per_lane["floor"], 4);
  EXPECT_EQ(per_lane["tx"], 4 * static_cast<int>(n_engines));
  EXPECT_EQ(per_lane["rtt"], 2 * static_cast<int>(n_engines));
  EXPECT_EQ(per_lane["rx"], 1);
#if HFT_BENCH_HAS_QUICKFIX
  // The rx lane drives libhft and llfix acceptors only; the plan says so.
  EXPECT_NE(last_out_.find("lane rx: engine quickfix left out (this lane drives libhft, llfix)"), std::string::npos)
      << last_out_;
  const Outcome only_qf = run("--lanes rx --engines quickfix --calls 2000");
  EXPECT_EQ(only_qf.exit_code, 2) << only_qf.out << only_qf.err;
  EXPECT_NE(only_qf.err.find("nothing to run: lane rx: engine quickfix left out"), std::string::npos) << only_qf.err;
#endif
  EXPECT_EQ(per_lane["codec"], 3);
  EXPECT_EQ(tx_engines.size(), n_engines);

  const json audit = load("audit.json");
  ASSERT_TRUE(audit.is_object());
  EXPECT_EQ(audit["all_passed"], true);
  EXPECT_EQ(audit["runs"].size(), report["runs"].size());

  // The console names the brackets; verify re-derives them with everything else.
  EXPECT_NE(last_out_.find("brackets: floor busy-closed, 2,000 calls just before and just after each engine run"),
            std::string::npos)
      << last_out_;
  const std::string verify = std::string(HFT_BENCH_EXE) + " verify " + (dir_ / "lab").string() + " >" +
                             (dir_ / "verify.txt").string() + " 2>&1";
  EXPECT_EQ(std::system(verify.c_str()), 0);
  std::ifstream vin(dir_ / "verify.txt");
  const std::string vtext{std::istreambuf_iterator<char>(vin), std::istreambuf_iterator<char>()};
  // tx and rtt per engine, and rx (libhft only: QuickFIX has no rx driver).
  EXPECT_NE(vtext.find("brackets: " + std::to_string(6 * n_engines + 1) + " runs' floor brackets re-read"),
            std::string::npos)
      << vtext;
}

TEST_F(HftBenchLanes, orders_built_on_another_thread_are_sent_by_the_engine_thread_typed_or_by_tag) {
  // tx paced-ring: the producer thread builds each order into the engine's
  // SendRing, the client thread sends it; both libhft engines (typed
  // writer, by tag) put every order on the wire and in both journals.
  const std::uint64_t calls = 2000;
  const json report = run_passing("--lanes tx --variants paced-ring,paced-ring-sink,paced --engines libhft,libhft-tags"
                                  " --calls " + std::to_string(calls) + " --warmup 200 --rate 5000 --segment-size 1MiB");
  ASSERT_EQ(report["runs"].size(), 6u);
  std::set<std::string> seen;
  for (const json& run : report["runs"]) {
    const std::string id = run["id"];
    const std::string variant = run["variant"];
    seen.insert(run["engine"].get<std::string>() + " " + variant);
    EXPECT_EQ(run["error"], "") << id;
    EXPECT_EQ(run["audit"]["status"], "pass") << id << ": " << run["audit"]["detail"];
    const std::string detail = run["audit"]["detail"];
    EXPECT_NE(detail.find("35=D count " + std::to_string(calls + 200) + " == expected"), std::string::npos)
        << id << ": " << detail;
    const std::string bytes = run["notes"]["order bytes on the wire (last)"];
    EXPECT_GE(std::stoi(bytes), 230) << id;
    EXPECT_LE(std::stoi(bytes), 250) << id;
    EXPECT_EQ(run["target_rate"], 5000.0) << id;
    if (variant == "paced") continue;
    EXPECT_EQ(run["series"][0]["name"], "service") << id;
    for (const char* name : {"service", "response", "scheduler_delay", "producer", "handover"}) {
      const json* s = series_named(run, name);
      ASSERT_NE(s, nullptr) << id << " " << name;
      EXPECT_EQ((*s)["stats"]["count"], calls) << id << " " << name;
    }
    // Build + hand-over + send is longer than the build alone.
    EXPECT_GT((*series_named(run, "service"))["stats"]["p50_ns"].get<double>(),
              (*series_named(run, "producer"))["stats"]["p50_ns"].get<double>())
        << id;
    const std::string queue = run["notes"]["cross-thread queue"];
    EXPECT_NE(queue.find("queue attempts found the ring full"), std::string::npos) << id;
    bool producer = false;
    for (const json& t : run["threads"]) producer = producer || t["role"] == "producer";
    EXPECT_TRUE(producer) << id;
  }
  EXPECT_EQ(seen.size(), 6u);
}

TEST_F(HftBenchLanes, the_tls_rtt_variant_runs_each_engine_over_tls_with_its_own_certificates) {
  // closed-tls: the run makes its own CA and certificates; the venue
  // requires the client's. Every order is acked and audited as over TCP.
  std::string engines = "libhft";
#if HFT_BENCH_HAS_QUICKFIX
  engines += ",quickfix";
#endif
  const std::uint64_t calls = 500;
  const json report = run_passing("--lanes rtt --variants rtt:closed-tls --engines " + engines + " --calls " +
                                  std::to_string(calls) + " --warmup 50 --segment-size 1MiB");
  ASSERT_GE(report["runs"].size(), 1u);
  for (const json& run : report["runs"]) {
    const std::string id = run["id"];
    EXPECT_EQ(run["variant"], "closed-tls") << id;
    EXPECT_EQ(run["error"], "") << id;
    EXPECT_EQ(run["audit"]["status"], "pass") << id << ": " << run["audit"]["detail"];
    const std::string venue = run["notes"]["venue"];
    EXPECT_NE(venue.find("TLS, client certificate required"), std::string::npos) << id << ": " << venue;
    const std::string tls = run["notes"]["tls"];
    EXPECT_EQ(tls.rfind("TLSv1.3 TLS_", 0), 0u) << id << ": " << tls;
    EXPECT_EQ(tls.find("INFO"), std::string::npos) << id << ": one log line only: " << tls;
    EXPECT_EQ(run["notes"]["orders sent / ExecutionReports received"],
              std::to_string(calls + 50) + " / " + std::to_string(calls + 50))
        << id;
    const json* rtt = series_named(run, "rtt");
    ASSERT_NE(rtt, nullptr) << id;
    EXPECT_EQ((*rtt)["stats"]["count"], calls) << id;
  }
#if HFT_BENCH_HAS_LLFIX
  // An adapter without TLS is refused before anything runs.
  const Outcome refused = run("--lanes rtt --variants rtt:closed-tls --engines llfix --calls 100");
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_NE(refused.err.find("engine 'llfix' has no TLS in its lab adapter"), std::string::npos) << refused.err;
#endif
}

TEST_F(HftBenchLanes, the_cross_thread_variant_is_refused_for_an_engine_without_one) {
#if HFT_BENCH_HAS_QUICKFIX
  const Outcome o = run("--lanes tx --variants paced-ring --engines quickfix --calls 100 --warmup 10 --rate 1000");
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_FALSE(fs::exists(dir_ / "lab" / "report.json"));
  EXPECT_NE(o.err.find("engine 'quickfix' has no cross-thread send"), std::string::npos) << o.out << o.err;
#else
  GTEST_SKIP() << "QuickFIX's adapter is not built";
#endif
}

TEST_F(HftBenchLanes, load_lane_reports_its_figures_and_audits_every_session) {
  // rx with 8 clients first, so the criterion compares with it; then the
  // load lane's one run set (N = 10): max, then paced at half of rx's rate.
  // Ten or more blocks of 1,000: a rate per tenth. 40,000 orders of 8
  // sessions (~1.3 MB per journal) pass the 1 MiB segments prepared at the
  // Logons, so rx's venue creates segments while measuring.
  const std::uint64_t calls = 40000;
  const json report = run_passing("--lanes rx,load --clients 8 --sessions 10 --calls " + std::to_string(calls) +
                                  " --warmup 500 --probe-calls 500 --segment-size 1MiB");
  ASSERT_TRUE(report.is_object());
  ASSERT_EQ(report["runs"].size(), 3u);
  // Ten rates and the two halves, each a positive number.
  const auto expect_tenths = [](const json& run) {
    const std::string id = run["id"];
    ASSERT_TRUE(run["notes"].contains("rate by tenth")) << id;
    const std::string text = run["notes"]["rate by tenth"];
    const std::string head = "answered orders/s by tenth of the measured orders:";
    ASSERT_EQ(text.rfind(head, 0), 0u) << text;
    std::istringstream in(text.substr(head.size()));
    for (int t = 0; t < 10; ++t) {
      double r = 0;
      ASSERT_TRUE(in >> r) << text;
      EXPECT_GT(r, 0) << text;
    }
    EXPECT_NE(text.find("; first half "), std::string::npos) << text;
    EXPECT_NE(text.find(", second half "), std::string::npos) << text;
  };
  {
    // rx's venue created segments while measuring, but its orders and
    // reports (~21 MB) fit in the 1 MiB segments and spares it had before
    // (16 journals x 2 MiB and more): the rx figure is still said to be a
    // burst, here and in the load lane's criterion.
    const json& rx = report["runs"][0];
    EXPECT_EQ(rx["lane"], "rx");
    expect_tenths(rx);
    const std::string memory = rx["notes"]["venue journal memory"];
    EXPECT_NE(memory.find("MiB allocated before the measured phase"), std::string::npos) << memory;
    EXPECT_NE(memory.find("(segments created while measuring)"), std::string::npos) << memory;
    EXPECT_NE(memory.find("within what was allocated before the run"), std::string::npos) << memory;
    EXPECT_NE(memory.find("this rate is a burst into ready journal memory"), std::string::npos) << memory;
    const std::string criterion = report["runs"][2]["notes"]["criterion"];
    EXPECT_NE(criterion.find("its figure is a burst into segments prepared before its run"), std::string::npos)
        << criterion;
  }
  const auto number = [](const json& run, const char* key) {
    const json& v = run["notes"][key];
    return v.is_string() ? std::stod(v.get<std::string>()) : -1.0;
  };
  double max_rate = 0;
  for (std::size_t k = 1; k < 3; ++k) {
    const json& run = report["runs"][k];
    const std::string id = run["id"];
    EXPECT_EQ(run["lane"], "load") << id;
    EXPECT_EQ(run["variant"], k == 1 ? "max" : "paced") << id;
    EXPECT_EQ(run["arm"], "n10") << id;
    EXPECT_EQ(run["error"], "") << id;
    EXPECT_EQ(run["audit"]["status"], "pass") << id << ": " << run["audit"]["detail"];
    const std::string detail = run["audit"]["detail"];
    EXPECT_NE(detail.find("11 venue sessions (10 load + PROBE)"), std::string::npos) << detail;
    // One ns/message sample per 1,000 answered orders; every probe order
    // alone recorded; some under load.
    const json* per_message = series_named(run, "ns_per_message");
    const json* unloaded = series_named(run, "probe_rtt_unloaded");
    const json* loaded = series_named(run, "probe_rtt_loaded");
    ASSERT_TRUE(per_message != nullptr && unloaded != nullptr && loaded != nullptr) << id;
    EXPECT_EQ((*per_message)["stats"]["count"], calls / 1000) << id;
    expect_tenths(run);
    EXPECT_EQ((*unloaded)["stats"]["count"], 500) << id;
    EXPECT_GT((*loaded)["stats"]["count"].get<std::uint64_t>(), 0u) << id;
    EXPECT_TRUE(fs::exists(dir_ / "lab" / (*loaded)["files"]["binary"].get<std::string>())) << id;
    EXPECT_EQ(number(run, "load.sessions"), 10) << id;
    EXPECT_GT(number(run, "load.messages_per_s"), 0) << id;
    EXPECT_NEAR(number(run, "load.messages_per_s"), run["achieved_rate"].get<double>(), 1.0) << id;
    EXPECT_GT(number(run, "load.ns_per_message"), 0) << id;
    // Load thread 0's epoll iterations over the phase, and those of them
    // that found nothing: never more idle iterations than iterations.
    EXPECT_GT(number(run, "load.generator_pumps"), 0) << id;
    EXPECT_LE(number(run, "load.generator_idle_pumps"), number(run, "load.generator_pumps")) << id;
    EXPECT_EQ(number(run, "load.probe_unloaded_count"), 500) << id;
    EXPECT_GT(number(run, "load.probe_unloaded_p50_ns"), 0) << id;
    EXPECT_LE(number(run, "load.probe_unloaded_p50_ns"), number(run, "load.probe_unloaded_p99_ns")) << id;
    EXPECT_GT(number(run, "load.probe_loaded_p99_ns"), 0) << id;
    EXPECT_NEAR(number(run, "load.probe_p99_ratio"),
                number(run, "load.probe_loaded_p99_ns") / number(run, "load.probe_unloaded_p99_ns"), 0.01)
        << id;
    EXPECT_GT(number(run, "load.venue_vmrss_kib"), 0) << id;
    EXPECT_GE(number(run, "load.venue_rss_file_kib"), 0) << id;
    EXPECT_GE(number(run, "load.venue_rss_shmem_kib"), 0) << id;
    EXPECT_GT(number(run, "load.venue_disk_bytes"), 0) << id;
    EXPECT_GT(number(run, "load.venue_startup_s"), 0) << id;
    EXPECT_LE(number(run, "load.venue_listen_s"), number(run, "load.venue_startup_s")) << id;
    // hft-venue's count over every session's journals: 11 sessions, both
    // directions journaled, every one written.
    ASSERT_TRUE(run["notes"].contains("venue EngineStats at exit")) << id;
    const std::string engine_stats = run["notes"]["venue EngineStats at exit"];
    EXPECT_NE(engine_stats.find(" connections accepted, "), std::string::npos) << engine_stats;
    EXPECT_NE(engine_stats.find(" input pauses (sessions waiting for their journal)"), std::string::npos)
        << engine_stats;
    ASSERT_TRUE(run["notes"].contains("venue journals")) << id;
    const std::string journals = run["notes"]["venue journals"];
    EXPECT_EQ(journals.rfind("journals: 22 written, ", 0), 0u) << journals;
    EXPECT_NE(journals.find(" spare misses ("), std::string::npos) << journals;
    EXPECT_NE(journals.find(" renamed to follow a segment created inline), "), std::string::npos) << journals;
    EXPECT_NE(journals.find(" finished segments dropped from the page cache, "), std::string::npos)
        << journals;
    EXPECT_NE(journals.find(" MiB zero-filled ahead of the writers by the service and "), std::string::npos)
        << journals;
    EXPECT_NE(
        journals.find(" segments sealed early where it was filling), 0.0 MiB written to the segment files "
                      "from write-behind buffers (0 segments written through a buffer, 0 with none free), "
                      "0 failed claims, 0 service errors"),
        std::string::npos)
        << "per-session journals: no write-behind buffers; " << journals;
    if (k == 1) {
      max_rate = run["achieved_rate"];
      EXPECT_FALSE(run["notes"].contains("criterion")) << id;
      // As fast as the window allows: each session's window (64) is filled,
      // in sends of up to 16 orders, not one send per batch of reports.
      const std::string throughput = run["notes"]["throughput"];
      EXPECT_NE(throughput.find("(at most 64 orders in flight of a window of 64)"), std::string::npos) << throughput;
    } else {
      // Paced at half of rx's rate with 8 clients (the criterion's load),
      // not half of max.
      const double rx = report["runs"][0]["achieved_rate"];
      EXPECT_NEAR(run["target_rate"].get<double>(), rx / 2, 1e-6 * rx) << id;
      const std::string criterion = run["notes"]["criterion"];
      EXPECT_NE(criterion.find("(half of rx with 8 clients)"), std::string::npos) << criterion;
      EXPECT_NE(criterion.find("rx 8 clients"), std::string::npos) << criterion;
      const std::string thr = run["notes"]["load.criterion_throughput"];
      const std::string lat = run["notes"]["load.criterion_latency"];
      EXPECT_EQ(thr, max_rate >= rx ? "pass" : "fail") << criterion;
      EXPECT_EQ(lat, number(run, "load.probe_p99_ratio") < 2.0 ? "pass" : "fail") << criterion;
      // The venue traced its events; the probe's loaded round trips carry
      // their send times and their long ones are attributed to them.
      ASSERT_TRUE(run.contains("attribution") && run["attribution"].is_object()) << id;
      EXPECT_EQ(run["attribution"]["series"], "probe_rtt_loaded") << id;
      EXPECT_TRUE(fs::exists(dir_ / "lab" / run["events"]["file"].get<std::string>())) << id;
      // The engine's timer passes are among them (every TimerIntervalMs, 100 ms, until the venue stops).
      EXPECT_TRUE(run["events"]["by_kind"].contains("venue:timers")) << run["events"].dump();
      // The journal service's records are its own source; the engine thread's are the venue's.
      auto events = hft::lab::read_events_csv(dir_ / "lab" / run["events"]["file"].get<std::string>());
      ASSERT_TRUE(events) << events.error().message;
      std::size_t service = 0;
      for (const hft::lab::RunEvent& e : events->events) {
        const bool journal_thread = e.thread.rfind("hft-journal", 0) == 0;
        service += journal_thread ? 1 : 0;
        EXPECT_EQ(e.source, journal_thread ? "venue-journal" : "venue") << e.thread << " " << e.kind;
      }
      EXPECT_GT(service, 0u) << "the service prepared segments during the run";
      EXPECT_NE(
          last_out_.find("N=10 paced: probe_rtt_loaded >= 100 us: " +
                         std::to_string(run["attribution"]["long_calls"].get<std::uint64_t>()) + " of "),
          std::string::npos)
          << last_out_;
    }
  }
  EXPECT_TRUE(!report["runs"][1].contains("attribution") || report["runs"][1]["attribution"].is_null())
      << "the max run is not traced";
  EXPECT_NE(last_out_.find("criterion: N=10: max "), std::string::npos) << last_out_;
  // verify re-reads the probe's series and the events and derives the same attribution.
  const std::string verify = std::string(HFT_BENCH_EXE) + " verify " + (dir_ / "lab").string() + " >" +
                             (dir_ / "verify.txt").string() + " 2>&1";
  EXPECT_EQ(std::system(verify.c_str()), 0);
  std::ifstream vin(dir_ / "verify.txt");
  const std::string vtext{std::istreambuf_iterator<char>(vin), std::istreambuf_iterator<char>()};
  EXPECT_NE(vtext.find("attribution: 1 runs' long calls and overlapping events recomputed"),
            std::string::npos)
      << vtext;
}

// With --runs 2 the summary also judges the criterion over the runs: the
// median of each per-run figure (LAB.md rule 4), every run's figure listed.
TEST_F(HftBenchLanes, load_lane_judges_its_criterion_over_the_medians_of_several_runs) {
  const json report = run_passing(
      "--lanes rx,load --variants rx:busy load:max load:paced --clients 8 --sessions 10 --calls 10000 "
      "--warmup 500 --probe-calls 500 --segment-size 1MiB --runs 2");
  ASSERT_TRUE(report.is_object());
  std::vector<double> rx, max, ratio;
  for (const json& run : report["runs"]) {
    if (run["lane"] == "rx") rx.push_back(run["achieved_rate"]);
    if (run["lane"] == "load" && run["variant"] == "max") max.push_back(run["achieved_rate"]);
    if (run["lane"] == "load" && run["variant"] == "paced") {
      ratio.push_back(std::stod(run["notes"]["load.probe_p99_ratio"].get<std::string>()));
    }
  }
  ASSERT_EQ(rx.size(), 2u);
  ASSERT_EQ(max.size(), 2u);
  ASSERT_EQ(ratio.size(), 2u);
  const auto median2 = [](const std::vector<double>& v) { return (v[0] + v[1]) / 2; };
  const auto at = last_out_.find("criterion over runs (medians of per-run figures): N=10: max ");
  ASSERT_NE(at, std::string::npos) << last_out_;
  const std::string line = last_out_.substr(at, last_out_.find('\n', at) - at);
  char text[64];
  std::snprintf(text, sizeof text, "max %.0f messages/s (2 runs: ", median2(max));
  EXPECT_NE(line.find(text), std::string::npos) << line;
  std::snprintf(text, sizeof text, "rx 8 clients %.0f messages/s (2 runs: ", median2(rx));
  EXPECT_NE(line.find(text), std::string::npos) << line;
  std::snprintf(text, sizeof text, "probe p99 loaded/unloaded %.2f (2 runs: ", median2(ratio));
  EXPECT_NE(line.find(text), std::string::npos) << line;
  EXPECT_NE(line.find(median2(max) >= median2(rx) ? "): PASS" : "): FAIL"), std::string::npos) << line;
  EXPECT_NE(line.find(median2(ratio) < 2.0 ? "< 2: PASS" : ">= 2: FAIL"), std::string::npos) << line;
}

// rx's growing variant runs the same 8 clients with the load lane's journal
// settings (segments growing from JournalInitialSegmentSize); the load
// lane's criterion still compares with the full-size run and gives the
// growing one beside it.
TEST_F(HftBenchLanes, rx_growing_variant_uses_the_load_lanes_journal_settings) {
  const json report = run_passing(
      "--lanes rx,load --variants rx:busy rx:growing load:max --clients 8 --sessions 10 --calls 10000 "
      "--warmup 500 --probe-calls 500 --segment-size 1MiB");
  ASSERT_TRUE(report.is_object());
  ASSERT_EQ(report["runs"].size(), 3u);
  const json& busy = report["runs"][0];
  const json& growing = report["runs"][1];
  ASSERT_EQ(busy["variant"], "busy");
  ASSERT_EQ(growing["variant"], "growing");
  const std::string busy_venue = busy["notes"]["venue"];
  const std::string growing_venue = growing["notes"]["venue"];
  EXPECT_NE(busy_venue.find("journal 1 MiB segments"), std::string::npos) << busy_venue;
  EXPECT_NE(growing_venue.find("journal segments growing from the engine's JournalInitialSegmentSize up to 1 MiB"),
            std::string::npos)
      << growing_venue;
  EXPECT_NE(growing_venue.find("PollMode=busy"), std::string::npos) << growing_venue;
  // Growing segments start at 256 KiB: far less allocated before the
  // measured phase than two 1 MiB segments per journal.
  const std::string busy_memory = busy["notes"]["venue journal memory"];
  const std::string growing_memory = growing["notes"]["venue journal memory"];
  EXPECT_LT(std::stod(growing_memory), std::stod(busy_memory)) << growing_memory << " / " << busy_memory;
  EXPECT_EQ(growing["audit"]["status"], "pass");
  const std::string criterion = report["runs"][2]["notes"]["criterion"];
  const double busy_rate = busy["achieved_rate"];
  const double growing_rate = growing["achieved_rate"];
  char expect[160];
  std::snprintf(expect, sizeof expect, "rx 8 clients %.0f messages/s (same invocation)", busy_rate);
  EXPECT_NE(criterion.find(expect), std::string::npos) << criterion;
  std::snprintf(expect, sizeof expect, "rx 8 clients with the load lane's journal settings (variant growing) %.0f messages/s",
                growing_rate);
  EXPECT_NE(criterion.find(expect), std::string::npos) << criterion;
  // Only the lane's own venue can be given these journal settings.
  const Outcome o = run("--lanes rx --variants rx:growing --venue 127.0.0.1:9 --calls 2000");
  EXPECT_EQ(o.exit_code, 2) << o.out << o.err;
  EXPECT_NE(o.err.find("variant growing sets the journal of the venue the lane starts"), std::string::npos) << o.err;
}

// Without an rx run with 8 clients in the invocation, paced runs at half of
// what max reached in its run set, and the criterion line says so.
TEST_F(HftBenchLanes, load_lane_without_rx_paces_at_half_of_its_max) {
  const json report = run_passing(
      "--lanes load --variants load:max load:paced --sessions 10 --calls 5000 --warmup 500 --probe-calls 200 "
      "--segment-size 1MiB");
  ASSERT_TRUE(report.is_object());
  ASSERT_EQ(report["runs"].size(), 2u);
  const json& max = report["runs"][0];
  const json& paced = report["runs"][1];
  ASSERT_EQ(max["variant"], "max");
  ASSERT_EQ(paced["variant"], "paced");
  const double max_rate = max["achieved_rate"];
  EXPECT_NEAR(paced["target_rate"].get<double>(), max_rate / 2, 1e-6 * max_rate);
  const std::string throughput = paced["notes"]["throughput"];
  EXPECT_NE(throughput.find("half of the max run of this set ("), std::string::npos) << throughput;
  const std::string criterion = paced["notes"]["criterion"];
  EXPECT_NE(criterion.find("(rx with 8 clients did not run in this invocation: no comparison)"),
            std::string::npos)
      << criterion;
  EXPECT_NE(criterion.find("(half of max: rx with 8 clients did not run)"), std::string::npos) << criterion;
}

// --venue-journal shared: the venue's sessions journal into one journal
// (JournalLayout=shared) and the lane audits them all, and the journal
// itself, in one pass over it; its notes say which layout ran.
TEST_F(HftBenchLanes, load_lane_with_a_shared_venue_journal_audits_every_session_in_one_pass) {
  const json report = run_passing(
      "--lanes load --variants load:max --sessions 10 --calls 5000 --warmup 500 --probe-calls 200 "
      "--segment-size 1MiB --venue-journal shared");
  ASSERT_TRUE(report.is_object());
  ASSERT_EQ(report["runs"].size(), 1u);
  const json& run = report["runs"][0];
  const std::string id = run["id"];
  EXPECT_EQ(run["error"], "") << id;
  EXPECT_EQ(run["audit"]["status"], "pass") << id << ": " << run["audit"]["detail"];
  const std::string detail = run["audit"]["detail"];
  EXPECT_NE(detail.find("11 venue sessions (10 load + PROBE), audited in one pass over the shared journal "),
            std::string::npos)
      << detail;
  EXPECT_NE(detail.find("(stream 1 of "), std::string::npos) << detail;
  EXPECT_NE(detail.find("35=D count "), std::string::npos) << detail;
  EXPECT_NE(detail.find("35=8 count "), std::string::npos) << detail;
  EXPECT_NE(detail.find("(11 streams)"), std::string::npos) << "the journal's own record checks: " << detail;
  EXPECT_GT(run["audit"]["checked"].get<std::uint64_t>(), 2u * 5000u) << "every order and report checked";

  // A reader of report.json knows the layout.
  EXPECT_EQ(run["notes"]["load.venue_journal"], "shared") << id;
  const std::string venue = run["notes"]["venue"];
  EXPECT_NE(venue.find("JournalLayout=shared"), std::string::npos) << venue;
  const std::string journals = run["notes"]["venue journals"];
  EXPECT_EQ(journals.rfind("journals: ", 0), 0u) << journals;
  EXPECT_NE(journals.find("(JournalLayout=shared: one journal on disk"), std::string::npos) << journals;
  // The shared journal writes through its write-behind buffers (the default
  // with JournalLayout=shared), every segment of it.
  EXPECT_EQ(journals.find(" MiB written to the segment files from write-behind buffers (0 segments"),
            std::string::npos)
      << journals;
  EXPECT_NE(journals.find(" with none free), 0 failed claims, 0 service errors"), std::string::npos)
      << journals;
  const double disk = std::stod(run["notes"]["load.venue_disk_bytes"].get<std::string>());
  const double shared = std::stod(run["notes"]["load.venue_shared_journal_disk_bytes"].get<std::string>());
  EXPECT_GT(shared, 0) << "the store root's disk use includes shared-journal/";
  EXPECT_LE(shared, disk);
  const std::string memory = run["notes"]["venue memory and disk"];
  EXPECT_NE(memory.find("MiB in the shared journal"), std::string::npos) << memory;

  // The venue wrote one journal and session directories of seqnums.dat
  // only (the audited run's files are emptied and set aside, not removed).
  const fs::path store = dir_ / "lab" / "runs" / ".emptied" / id / "venue-store";
  ASSERT_TRUE(fs::is_directory(store / "shared-journal")) << store;
  EXPECT_TRUE(fs::exists(store / "shared-journal" / "00000001.seg")) << store;
  const fs::path session = store / "FIXT.1.1-EXECUTOR-CLIENT1";
  EXPECT_TRUE(fs::exists(session / "seqnums.dat")) << session;
  EXPECT_FALSE(fs::exists(session / "outbound")) << session;
}

TEST_F(HftBenchLanes, load_lane_options_are_checked_before_anything_runs) {
  for (const char* bad : {"--sessions 0", "--sessions 10,x", "--load-threads 3", "--load-rate -5",
                          "--venue-poll sometimes", "--venue-journal pooled", "--venue-journal-core 99999",
                          "--venue-journal-core one", "--sessions 2000 --calls 1000"}) {
    const Outcome o = run(std::string("--lanes load --calls 1000 ") + bad);
    EXPECT_EQ(o.exit_code, 2) << bad << ": " << o.out << o.err;
    EXPECT_NE(o.err.find("hft-bench: "), std::string::npos) << bad << ": " << o.err;
    EXPECT_FALSE(fs::exists(dir_ / "lab" / "report.json")) << bad;
  }
}

// --venue-journal-core places the venue's journal service (JournalThreadCore)
// apart from its engine thread; by default it is pinned beside it on
// --server-core, as in every lane. The venue note says where it ran.
TEST_F(HftBenchLanes, load_lane_places_the_venue_journal_service_where_it_is_told) {
  const json report = run_passing(
      "--lanes load --variants load:max --sessions 4 --calls 2000 --warmup 200 --probe-calls 100 "
      "--segment-size 1MiB --venue-journal shared --server-core 0 --experiment jcore "
      "--arm beside --arm unpinned:venue-journal-core=-1");
  ASSERT_TRUE(report.is_object());
  ASSERT_EQ(report["runs"].size(), 2u);
  int seen = 0;
  for (const json& run : report["runs"]) {
    const std::string arm = run["arm"];
    const std::string venue = run["notes"]["venue"];
    if (arm.rfind("beside", 0) == 0) {
      EXPECT_NE(venue.find("journal service beside the engine thread (JournalThreadCore = --server-core)"),
                std::string::npos)
          << venue;
      ++seen;
    } else if (arm.rfind("unpinned", 0) == 0) {
      EXPECT_NE(venue.find("journal service not pinned (--venue-journal-core -1)"), std::string::npos)
          << venue;
      ++seen;
    }
  }
  EXPECT_EQ(seen, 2) << report["runs"].dump();
}

TEST_F(HftBenchLanes, journal_rotations_inside_the_window_are_audited_per_arm) {
  // 1 MiB segments (the engine keeps 64 KiB of room per claim): 5,000 orders
  // of ~240 bytes roll over at least once inside the measured window; the
  // 64 MiB arm never does. (The A B B A order is bench_plan_test's.)
  const Outcome o = run("--lanes tx --variants unpaced --engines libhft --calls 5000 --warmup 100 --runs 1"
                        " --experiment seg --arm small:segment-size=1MiB --arm big:segment-size=64MiB");
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  const json report = load("report.json");
  ASSERT_EQ(report["runs"].size(), 2u);
  const char* order[] = {"small", "big"};
  for (std::size_t k = 0; k < 2; ++k) {
    const json& run = report["runs"][k];
    EXPECT_EQ(run["arm"], order[k]);
    EXPECT_EQ(run["audit"]["status"], "pass") << run["audit"]["detail"];
    const std::string detail = run["audit"]["detail"];
    const auto at = detail.find(" segment(s)");
    ASSERT_NE(at, std::string::npos) << detail;
    const auto start = detail.rfind(' ', at - 1) + 1;
    const int segments = std::stoi(detail.substr(start, at - start));
    if (run["arm"] == "small") {
      // Logon reset opens segment 2; 1.2 MB of orders need at least one more.
      EXPECT_GE(segments, 3) << detail;
    } else {
      EXPECT_EQ(segments, 2) << detail;
    }
    EXPECT_EQ(run["config"]["journal"]["segment_size"], run["arm"] == "small" ? 1048576 : 67108864);
  }
}

TEST_F(HftBenchLanes, prealloc_off_runs_both_ends_and_its_long_calls_are_lined_up_with_the_events) {
  // LAB.md rule 9: --prealloc off runs, the client's and the venue's
  // journals with JournalPrealloc=N (rotations create segments inline, the
  // writers fault in their own pages: tests/store/growth_test.cpp), 1 MiB
  // segments rotating in the window, and every order is in the journals.
  // Each of those shows in the run's events, in the tx series' clock: the
  // rotations at both ends (client and venue) and the timed thread's faults.
  const Outcome o = run("--lanes tx --variants unpaced --engines libhft --calls 5000 --warmup 100 --runs 1"
                        " --segment-size 1MiB --prealloc off");
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  const json report = load("report.json");
  ASSERT_EQ(report["runs"].size(), 1u);
  const json& r = report["runs"][0];
  EXPECT_EQ(r["error"], "");
  EXPECT_EQ(r["audit"]["status"], "pass") << r["audit"]["detail"];
  EXPECT_EQ(r["config"]["journal"]["prealloc"], false);
  const std::string detail = r["audit"]["detail"];
  EXPECT_NE(detail.find("35=D count 5100 == expected"), std::string::npos) << detail;

  const json& ev = r["events"];
  ASSERT_TRUE(ev.is_object()) << r.dump(1);
  const json& kinds = ev["by_kind"];
  for (const char* k : {"client:rotate", "client:inline_create", "venue:rotate"}) {
    EXPECT_TRUE(kinds.contains(k)) << k << " in " << kinds.dump();
  }
  // The writer's faults on its inline-created segments: the kernel counts a
  // first touch of a page of a new fallocated file as minor or as major
  // (both seen on the lab host, depending on its page-cache state).
  EXPECT_TRUE(kinds.contains("os:minor_faults") || kinds.contains("os:major_faults")) << kinds.dump();
  const fs::path events_path = dir_ / "lab" / ev["file"].get<std::string>();
  auto events = hft::lab::read_events_csv(events_path);
  ASSERT_TRUE(events) << events.error().message;
  ASSERT_EQ(events->events.size(), ev["count"].get<std::size_t>());
  // Every event is after the measured phase began (the window's clock), and
  // the client's rotations ran on the timed thread.
  const std::int64_t wall_ticks = static_cast<std::int64_t>(r["wall_seconds"].get<double>() * report["conditions"]["clocks"]["tsc_hz"].get<double>());
  std::size_t client_rotations = 0;
  for (const hft::lab::RunEvent& e : events->events) {
    EXPECT_GE(e.end, 0) << e.kind;
    if (e.source == "client" && e.kind == "rotate") {
      ++client_rotations;
      EXPECT_EQ(e.thread, "tx-client");
      EXPECT_LE(e.begin, wall_ticks);
    }
  }
  EXPECT_GE(client_rotations, 1u);
  const json& a = r["attribution"];
  ASSERT_TRUE(a.is_object());
  EXPECT_EQ(a["series"], "tx");
  const json* tx = series_named(r, "tx");
  ASSERT_NE(tx, nullptr);
  EXPECT_EQ(a["long_calls"], (*tx)["stats"]["long_calls"][">=100us"]["count"]) << "every call >= 100 us is listed";
  EXPECT_EQ(a["long_calls"].get<std::uint64_t>(), a["with_events"].get<std::uint64_t>() + a["unattributed"].get<std::uint64_t>());
  for (const json& c : a["calls"]) {
    for (const json& i : c["events"]) EXPECT_LT(i.get<std::size_t>(), events->events.size());
  }
  EXPECT_NE(o.out.find("tx: " + std::to_string(a["long_calls"].get<std::uint64_t>()) + " calls >= 100"),
            std::string::npos)
      << "the console gives the attribution: " << o.out;
  const auto verify = [&] {
    Outcome v;
    const fs::path out = dir_ / "verify.txt";
    const std::string cmd = std::string(HFT_BENCH_EXE) + " verify " + (dir_ / "lab").string() + " >" +
                            out.string() + " 2>&1";
    const int status = std::system(cmd.c_str());
    v.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::ifstream in(out);
    v.out.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    return v;
  };

  // verify recomputes the attribution; an event taken out of the file (the
  // manifest rewritten to hide it) is found.
  const Outcome ok = verify();
  ASSERT_EQ(ok.exit_code, 0) << ok.out << ok.err;
  EXPECT_NE(ok.out.find("attribution: 1 runs'"), std::string::npos) << ok.out;
  std::vector<std::string> lines;
  {
    std::ifstream in(events_path);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
  }
  lines.pop_back();
  {
    std::ofstream out(events_path, std::ios::trunc);
    for (const std::string& line : lines) out << line << "\n";
  }
  ASSERT_TRUE(hft::lab::write_manifest(dir_ / "lab"));
  const Outcome bad = verify();
  EXPECT_NE(bad.exit_code, 0) << bad.out;
  EXPECT_NE(bad.out.find(ev["file"].get<std::string>()), std::string::npos) << bad.out;
}

// The figure just before `label` in a note ("123 closed by the venue"), -1 if none.
long long figure_before(const std::string& note, const std::string& label) {
  const auto at = note.find(label);
  if (at == std::string::npos) return -1;
  auto start = at;
  while (start > 0 && std::isdigit(static_cast<unsigned char>(note[start - 1])) != 0) --start;
  return start == at ? -1 : std::stoll(note.substr(start, at - start));
}

TEST_F(HftBenchLanes, a_garbage_peer_during_rtt_is_refused_by_the_venue_and_the_session_audits_pass) {
  // Issue 14: a hostile client on the venue's port during the measured run
  // (its control arm prepares the same venue and sends nothing). The good
  // session's orders are all answered and audited; the notes say what the
  // peer sent and what the venue did about it.
  const Outcome o =
      run("--lanes rtt --variants rtt:closed --engines libhft --calls 2000 --warmup 100"
          " --segment-size 1MiB --bracket-calls 0 --experiment hostile"
          " --arm quiet:garbage-peer=0 --arm hostile:garbage-peer=2000");
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  const json report = load("report.json");
  ASSERT_EQ(report["runs"].size(), 2u);
  for (const json& r : report["runs"]) {
    const std::string id = r["id"];
    EXPECT_EQ(r["error"], "") << id;
    EXPECT_EQ(r["audit"]["status"], "pass") << id << ": " << r["audit"]["detail"];
    EXPECT_EQ(r["notes"]["orders sent / ExecutionReports received"], "2100 / 2100") << id;
    const std::string peer = r["notes"]["garbage peer"];
    const std::string log = r["notes"]["venue log"];
    const std::string stats = r["notes"]["venue EngineStats at exit"];
    EXPECT_NE(r["notes"]["venue threads during the run"].get<std::string>().find("engine thread "),
              std::string::npos);
    bool placed = false;
    for (const json& t : r["threads"]) placed = placed || t["role"] == "garbage-peer";
    if (r["arm"] == "quiet") {
      EXPECT_EQ(peer.rfind("off", 0), 0u) << peer;
      EXPECT_EQ(figure_before(stats, " connections accepted"), 1) << stats;  // the measured session's alone
      EXPECT_FALSE(placed);
      continue;
    }
    EXPECT_TRUE(placed) << id;
    EXPECT_GT(figure_before(peer, " pieces in "), 0) << peer;
    EXPECT_GT(figure_before(peer, " bytes;"), 0) << peer;
    EXPECT_GT(figure_before(peer, " connections made"), 0) << peer;
    EXPECT_GT(figure_before(peer, " closed by the venue, "), 0) << peer;
    EXPECT_GT(figure_before(log, " WARN lines written"), 0) << log;
    EXPECT_GT(figure_before(stats, " unknown session refused"), 0) << stats;
    EXPECT_GT(figure_before(stats, " garbled first message"), 0) << stats;
  }
}

TEST_F(HftBenchLanes, an_admin_scraper_during_rtt_reads_metrics_and_sessions_without_failures) {
  const json report = run_passing(
      "--lanes rtt --variants rtt:closed --engines libhft --calls 2000 --warmup 100"
      " --segment-size 1MiB --bracket-calls 0 --admin-scrape 200");
  ASSERT_EQ(report["runs"].size(), 1u);
  const json& r = report["runs"][0];
  EXPECT_EQ(r["audit"]["status"], "pass") << r["audit"]["detail"];
  const std::string note = r["notes"]["admin scraper"];
  EXPECT_GT(figure_before(note, " GET requests in "), 0) << note;
  for (const char* path : {"/metrics: ", "/sessions: "}) {
    const auto at = note.find(path);
    ASSERT_NE(at, std::string::npos) << note;
    const std::string part = note.substr(at + std::strlen(path));
    EXPECT_GE(figure_before(part, " requests, "), 1) << path << note;
    EXPECT_EQ(figure_before(part, " failures, "), 0) << path << note;
  }
  bool placed = false;
  for (const json& t : r["threads"]) placed = placed || t["role"] == "admin-scraper";
  EXPECT_TRUE(placed);
}

TEST_F(HftBenchLanes, disturbance_controls_are_checked_before_anything_runs) {
  for (const char* bad :
       {"--lanes rtt --garbage-peer -5", "--lanes rtt --admin-scrape fast",
        "--lanes floor --garbage-peer 100", "--lanes rtt --venue 127.0.0.1:1 --admin-scrape 10",
        "--lanes rtt --experiment e --arm a:garbage-peer=lots",
        "--lanes rtt --variants rtt:closed-tls --garbage-peer 10"}) {
    const Outcome o = run(std::string(bad) + " --calls 100");
    EXPECT_EQ(o.exit_code, 2) << bad << ": " << o.out << o.err;
    EXPECT_NE(o.err.find("hft-bench: "), std::string::npos) << bad << ": " << o.err;
    EXPECT_FALSE(fs::exists(dir_ / "lab" / "report.json")) << bad;
  }
}

// Only in a build without the llfix adapter (with it, hft_bench_llfix_test
// runs llfix instead).
#if !HFT_BENCH_HAS_LLFIX
TEST_F(HftBenchLanes, llfix_without_its_adapter_built_says_how_to_build_it) {
  const Outcome o = run("--lanes tx --engines llfix --calls 100");
  EXPECT_EQ(o.exit_code, 2) << o.out << o.err;
  EXPECT_NE(o.err.find("'llfix' is not available in this build"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("-DHFT_LLFIX_DIR="), std::string::npos) << o.err;
  EXPECT_FALSE(fs::exists(dir_ / "lab" / "report.json"));
}
#endif

}  // namespace
