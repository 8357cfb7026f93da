// hft-venue: a FIX acceptor that answers NewOrderSingle with ExecutionReports
// (new, then fill), for demos and for the lab; or, with --conformance, the
// echo acceptor the FIX session conformance suite expects.
//
//   hft-venue --port 9878 [--host 0.0.0.0] [--begin-string FIX.4.4] [--sender VENUE] [--target CLIENT]
//             [--username U --password P]
//   hft-venue --config venue.cfg
//   ... [--http-port P [--http-host H] [--http-token-file F] [--http-audit-file F]]  (admin endpoint)
//   hft-venue --conformance --spec-dir DIR --port 9878
//   ... [--trace-file F [--trace-size N]]  (the engine's event trace, written at exit)
#include <CLI/CLI.hpp>
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <utility>

#include "common/configs.hpp"
#include "common/conformance_app.hpp"
#include "common/venue_app.hpp"
#include "hft/core/cpu.hpp"
#include "hft/engine/async_logger.hpp"
#include "hft/engine/engine.hpp"
#include "hft/engine/log.hpp"
#include "hft/engine/trace_file.hpp"

namespace {
hft::engine::Engine* g_engine = nullptr;
void on_signal(int) {
  if (g_engine != nullptr) g_engine->request_stop();
}
}  // namespace

int main(int argc, char** argv) {
  CLI::App cli{"hft-venue: FIX acceptor answering orders with execution reports"};
  std::string config_path, spec_dir, begin_string = "FIX.4.4", sender = "VENUE", target = "CLIENT";
  std::string store_dir, log_level = "info", port_file;
  int port = 9878;
  int core = -1;
  std::size_t dedup_capacity = hft::apps::VenueOptions{}.dedup_capacity;
  bool conformance = false, no_fill = false, busy = false, sink = false;
  cli.add_option("--config", config_path, "QuickFIX-style session file (overrides the session flags)");
  cli.add_option("--port", port, "port to listen on (0: any free port, see --port-file)");
  std::string host, username, password;
  cli.add_option("--host", host, "local address to listen on (SocketAcceptHost; default 0.0.0.0, all IPv4)");
  cli.add_option(
      "--username", username,
      "require this Username (553) in the client's Logon (FIX.4.3+); refused: Logout, nothing changes");
  cli.add_option("--password", password,
                 "require this Password (554; RawData 96 before FIX.4.3) in the client's Logon");
  cli.add_option("--port-file", port_file, "write the port listened on to this file once ready");
  std::string trace_file;
  std::size_t trace_size = 262144;
  cli.add_option("--trace-file", trace_file,
                 "record the engine's event trace (journal rotation, spare, zero-fill, pre-fault, unmap, fsync, "
                 "partial send, resend; TSC stamps) and write it to this file at exit (docs/lab.md)");
  cli.add_option("--trace-size", trace_size, "records the trace holds before it drops (with --trace-file)")
      ->check(CLI::Range(std::size_t{64}, std::size_t{1} << 26));
  cli.add_option("--begin-string", begin_string, "FIX.4.2, FIX.4.4, FIXT.1.1, ...");
  cli.add_option("--sender", sender, "our SenderCompID");
  cli.add_option("--target", target, "the client's CompID");
  cli.add_option("--store", store_dir, "journal directory (default: in memory)");
  cli.add_option("--core", core, "pin the engine thread and the log writer to this CPU");
  cli.add_flag("--busy-poll", busy, "poll sockets without sleeping (burns a core)");
  cli.add_flag("--no-fill", no_fill, "acknowledge orders without filling them");
  cli.add_flag("--sink", sink, "accept and journal orders but answer none (the lab's sink boundary)")
      ->excludes("--no-fill");
  cli.add_option(
         "--dedup-capacity", dedup_capacity,
         "ClOrdIDs remembered (preallocated) so that a resent order (PossDupFlag=Y) is not executed twice; "
         "0: off")
      ->capture_default_str();
  cli.add_flag("--conformance", conformance, "behave as the conformance suite's echo acceptor");
  std::string only_sessions;
  cli.add_option("--sessions", only_sessions, "with --conformance: only these TargetCompIDs (e.g. TW44,TW)");
  cli.add_option("--spec-dir", spec_dir, "directory of the FIX XML dictionaries (default: the ones shipped)");
  std::string http_host, http_token_file, http_audit_file, http_port_file;
  int http_port = -1;
  cli.add_option("--http-port", http_port,
                 "serve the admin and metrics endpoint on this port (HttpAcceptPort; 0: any free port; "
                 "hft-admin talks to it)");
  cli.add_option("--http-host", http_host, "address of the admin endpoint (HttpAcceptAddress; default 127.0.0.1)");
  cli.add_option("--http-token-file", http_token_file,
                 "token file state-changing admin commands must present (HttpAdminTokenFile, mode 0600)");
  cli.add_option("--http-audit-file", http_audit_file, "append admin commands to this file (HttpAdminAuditFile)");
  cli.add_option("--http-port-file", http_port_file, "write the admin endpoint's port to this file once ready");
  bool no_dictionary = false;
  cli.add_flag("--no-dictionary", no_dictionary, "validate session-level messages only (built-in dictionary)");
  cli.add_option("--log-level", log_level, "debug, info, warn or error");
  CLI11_PARSE(cli, argc, argv);

  hft::session::LogLevel level;
  if (!hft::engine::parse_log_level(log_level, level)) {
    std::fprintf(stderr, "hft-venue: --log-level: use debug, info, warn or error\n");
    return 2;
  }
  if (core >= 0 && !hft::core::cpu_exists(core)) {
    std::fprintf(stderr, "hft-venue: --core %d: no such CPU (this machine has %d)\n", core,
                 hft::core::available_cpus());
    return 2;
  }
  if (spec_dir.empty()) spec_dir = hft::apps::default_spec_dir();

  if (!config_path.empty() && (!host.empty() || !username.empty() || !password.empty())) {
    std::fprintf(stderr,
                 "hft-venue: --host, --username and --password apply to the sessions built from the command "
                 "line; with --config set SocketAcceptHost, Username and Password in the file\n");
    return 2;
  }
  if (sink && conformance) {
    std::fprintf(stderr, "hft-venue: --sink and --conformance exclude each other\n");
    return 2;
  }
  // Settings from options, each named by its option in errors.
  std::vector<hft::apps::SimpleSession::Extra> settings;
  if (!host.empty()) settings.push_back({"SocketAcceptHost", host, "--host " + host});
  if (!username.empty()) settings.push_back({"Username", username, "--username"});
  if (!password.empty()) settings.push_back({"Password", password, "--password"});
  if (core >= 0) settings.push_back({"EngineThreadCore", std::to_string(core), "--core " + std::to_string(core)});
  if (busy) {
    settings.push_back({"PollMode", "busy", "--busy-poll"});
    settings.push_back({"IdleStrategy", "busy-spin", "--busy-poll"});
  }
  // The admin endpoint's keys: over the file's [DEFAULT] too.
  std::vector<hft::apps::SimpleSession::Extra> admin;
  if (http_port >= 0) admin.push_back({"HttpAcceptPort", std::to_string(http_port), "--http-port " + std::to_string(http_port)});
  if (!http_host.empty()) admin.push_back({"HttpAcceptAddress", http_host, "--http-host " + http_host});
  if (!http_token_file.empty()) admin.push_back({"HttpAdminTokenFile", http_token_file, "--http-token-file"});
  if (!http_audit_file.empty()) admin.push_back({"HttpAdminAuditFile", http_audit_file, "--http-audit-file"});
  settings.insert(settings.end(), admin.begin(), admin.end());
  auto config = [&]() -> hft::Expected<hft::engine::Config> {
    if (!config_path.empty()) {
      std::vector<hft::engine::Override> overrides;
      for (const auto& e : admin) overrides.push_back({e.key, e.value, e.origin});
      return hft::engine::Config::load(config_path, overrides);
    }
    if (conformance) {
      std::string text = hft::apps::conformance_acceptor_config(port, spec_dir, only_sessions);
      std::vector<hft::engine::Override> overrides;
      for (const auto& e : settings) overrides.push_back({e.key, e.value, e.origin});
      return hft::engine::Config::parse(text, "<conformance>", overrides);
    }
    hft::apps::SimpleSession s;
    s.begin_string = begin_string;
    s.sender = sender;
    s.target = target;
    s.port = port;
    s.store_dir = store_dir;
    s.settings = settings;
    s.origins = {.begin_string = "--begin-string", .sender = "--sender", .target = "--target", .host = "--host",
                 .port = "--port", .heartbeat = {}, .store_dir = "--store", .spec_dir = "--spec-dir"};
    if (!no_dictionary) s.spec_dir = spec_dir;
    return hft::apps::simple_builder(s, "hft-venue").build();
  }();
  if (!config) {
    std::fprintf(stderr, "hft-venue: %s\n", config.error().message.c_str());
    return 2;
  }

  // On before the engine starts, so its journal thread's first events are in it.
  if (!trace_file.empty()) (void)hft::core::trace::enable(trace_size);

  // Events are formatted and written by a writer thread: the engine thread only copies them.
  hft::engine::AsyncLoggerOptions log_options;
  log_options.level = level;
  log_options.to_stderr = true;
  // Beside the engine thread: the writer wakes every millisecond, and unpinned
  // it would take turns on a core another busy-polling thread owns.
  log_options.cpu = core;
  auto async_log = hft::engine::AsyncLogger::create(std::move(log_options));
  if (!async_log) {
    std::fprintf(stderr, "hft-venue: %s\n", async_log.error().message.c_str());
    return 2;
  }
  hft::engine::AsyncLogger& logger = **async_log;
  hft::apps::VenueOptions venue_options;
  venue_options.fill = !no_fill;
  venue_options.sink = sink;
  venue_options.dedup_capacity = dedup_capacity;
  venue_options.logger = &logger;
  hft::apps::VenueApplication venue(venue_options);
  hft::apps::ConformanceApplication echo;
  hft::session::Application& app = conformance ? static_cast<hft::session::Application&>(echo) : venue;
  auto engine = hft::engine::Engine::create(*config, app, &logger);
  if (!engine) {
    std::fprintf(stderr, "hft-venue: %s\n", engine.error().message.c_str());
    return 2;
  }
  g_engine = engine->get();
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  const int bound = (*engine)->listen_port();
  std::fprintf(stderr, "hft-venue: listening on %s port %d (%zu sessions%s)\n",
               host.empty() ? "0.0.0.0" : host.c_str(), bound, (*engine)->session_count(),
               username.empty() && password.empty() ? "" : ", credentials required");
  if (!port_file.empty()) {
    std::ofstream(port_file + ".tmp") << bound << "\n";
    std::rename((port_file + ".tmp").c_str(), port_file.c_str());
  }
  if (const int admin_port = (*engine)->admin_port(); admin_port != 0) {
    std::fprintf(stderr, "hft-venue: admin endpoint on http://%s:%d (hft-admin --port %d)\n",
                 http_host.empty() ? "127.0.0.1" : http_host.c_str(), admin_port, admin_port);
    if (!http_port_file.empty()) {
      std::ofstream(http_port_file + ".tmp") << admin_port << "\n";
      std::rename((http_port_file + ".tmp").c_str(), http_port_file.c_str());
    }
  }
  if (core >= 0 && !hft::core::pin_current_thread(core)) {
    std::fprintf(stderr, "hft-venue: cannot pin to CPU %d\n", core);
    return 2;
  }
  (*engine)->run();
  int status = 0;
  if (!trace_file.empty()) {
    // While the engine's threads still run: their names are read now.
    hft::core::trace::disable();
    if (auto written = hft::engine::write_trace_file(trace_file); !written) {
      std::fprintf(stderr, "hft-venue: %s\n", written.error().message.c_str());
      status = 1;
    }
  }
  const hft::engine::EngineStats s = (*engine)->stats();
  // Every session's journals together: how their segments were prepared
  // (the lab's load lane reads it).
  hft::store::JournalStats journals{};
  std::size_t journal_count = 0;
  // A shared journal (JournalLayout=shared) counts its segments once; its
  // sessions count their own records.
  const std::vector<hft::store::JournalStats> shared = (*engine)->shared_journal_stats();
  std::vector<hft::store::StoreStats> stats;
  for (std::size_t i = 0; i < (*engine)->session_count(); ++i)
    stats.push_back((*engine)->session(i).store_stats());
  for (const hft::store::JournalStats& j : shared) {
    hft::store::StoreStats st;
    st.outbound = j;
    st.outbound.appends = 0;
    stats.push_back(st);
  }
  for (const hft::store::StoreStats& st : stats) {
    for (const hft::store::JournalStats* j : {&st.outbound, &st.inbound}) {
      if (j->appends == 0 && j->rotations == 0 && j->segments_created == 0) continue;
      ++journal_count;
      journals.appends += j->appends;
      journals.rotations += j->rotations;
      journals.spare_misses += j->spare_misses;
      journals.inline_creations += j->inline_creations;
      journals.unfaulted_rotations += j->unfaulted_rotations;
      journals.segments_created += j->segments_created;
      journals.spares_renumbered += j->spares_renumbered;
      journals.segments_evicted += j->segments_evicted;
      journals.written_evicted_bytes += j->written_evicted_bytes;
      journals.filled_bytes += j->filled_bytes;
      journals.fill_takeovers += j->fill_takeovers;
      journals.writer_filled_bytes += j->writer_filled_bytes;
      journals.fence_rotations += j->fence_rotations;
      journals.write_behind_bytes += j->write_behind_bytes;
      journals.write_behind_segments += j->write_behind_segments;
      journals.write_behind_misses += j->write_behind_misses;
      journals.max_evict_ns = std::max(journals.max_evict_ns, j->max_evict_ns);
      journals.failed_claims += j->failed_claims;
      journals.service_errors += j->service_errors;
      if (j->last_errno != 0) journals.last_errno = j->last_errno;
    }
  }
  // Destroying the engine writes the summaries it still holds (refused
  // connections, lines over LogRateLimit); stopping the logger writes them
  // out, before the lines below, so the order counters stay the last line.
  g_engine = nullptr;
  engine->reset();
  logger.stop();
  const auto& c = venue.counters();
  if (!conformance) {
    // What the engine did with connections that never became a session (the
    // lab's --garbage-peer notes read it).
    std::fprintf(
        stderr,
        "hft-venue: engine: %llu connections accepted, %llu unknown session refused, %llu garbled first "
        "message, %llu duplicate refused, %llu pre-logon timeouts, %llu pre-logon bytes exceeded, %llu "
        "pending per address refused, %llu pending evicted, %llu no slot refused, %llu input pauses "
        "(sessions waiting for their journal)\n",
        static_cast<unsigned long long>(s.connections_accepted),
        static_cast<unsigned long long>(s.unknown_session_refused),
        static_cast<unsigned long long>(s.garbled_first_message),
        static_cast<unsigned long long>(s.duplicate_refused),
        static_cast<unsigned long long>(s.pre_logon_timeouts),
        static_cast<unsigned long long>(s.pre_logon_bytes_exceeded),
        static_cast<unsigned long long>(s.pending_per_address_refused),
        static_cast<unsigned long long>(s.pending_evicted),
        static_cast<unsigned long long>(s.no_slot_refused), static_cast<unsigned long long>(s.input_pauses));
    std::fprintf(
        stderr,
        "hft-venue: journals: %zu written, %llu records, %llu rotations, %llu spare misses (%llu segments "
        "created inline), %llu rotations before the spare was pre-faulted, %llu spares prepared by the "
        "service (%llu renamed to follow a segment created inline), %llu finished segments dropped from the "
        "page cache, %.1f MiB taken out of the writers' mappings behind them (longest call %.1f ms), "
        "%.1f MiB zero-filled ahead of the writers by the service and %.1f MiB by writers that reached it "
        "(in %llu pieces; %llu segments sealed early where it was filling), %.1f MiB written to the segment "
        "files from write-behind buffers (%llu segments written through a buffer, %llu with none free), "
        "%llu failed claims, %llu service errors%s%s\n",
        journal_count, static_cast<unsigned long long>(journals.appends),
        static_cast<unsigned long long>(journals.rotations),
        static_cast<unsigned long long>(journals.spare_misses),
        static_cast<unsigned long long>(journals.inline_creations),
        static_cast<unsigned long long>(journals.unfaulted_rotations),
        static_cast<unsigned long long>(journals.segments_created),
        static_cast<unsigned long long>(journals.spares_renumbered),
        static_cast<unsigned long long>(journals.segments_evicted),
        static_cast<double>(journals.written_evicted_bytes) / (1 << 20),
        static_cast<double>(journals.max_evict_ns) / 1e6,
        static_cast<double>(journals.filled_bytes) / (1 << 20),
        static_cast<double>(journals.writer_filled_bytes) / (1 << 20),
        static_cast<unsigned long long>(journals.fill_takeovers),
        static_cast<unsigned long long>(journals.fence_rotations),
        static_cast<double>(journals.write_behind_bytes) / (1 << 20),
        static_cast<unsigned long long>(journals.write_behind_segments),
        static_cast<unsigned long long>(journals.write_behind_misses),
        static_cast<unsigned long long>(journals.failed_claims),
        static_cast<unsigned long long>(journals.service_errors), journals.last_errno != 0 ? ": " : "",
        journals.last_errno != 0 ? std::strerror(journals.last_errno) : "");
    std::fprintf(
        stderr,
        "hft-venue: %llu orders, %llu reports, %llu send failures, %llu resent orders (%llu already "
        "executed, not executed again), %llu not remembered (--dedup-capacity full)\n",
        static_cast<unsigned long long>(c.orders), static_cast<unsigned long long>(c.reports_sent),
        static_cast<unsigned long long>(c.send_failures), static_cast<unsigned long long>(c.possdup_orders),
        static_cast<unsigned long long>(c.duplicates), static_cast<unsigned long long>(c.dedup_full));
  }
  return status;
}
