#include "lane_support.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include "common/configs.hpp"
#include "hft/lab/bench.hpp"
#include "hft/lab/engine_adapter.hpp"

namespace hft::lab::lanes {

RunEvent trace_event(const core::TraceRecord& record, std::string thread, const char* source,
                     std::uint64_t origin) {
  RunEvent e;
  // The journal service's own thread apart from the session's: on a shared
  // core its slices and the writer's own journal work delay a call alike,
  // and the attribution says which.
  e.source = thread.rfind("hft-journal", 0) == 0 ? std::string(source) + "-journal" : std::string(source);
  e.kind = std::string(core::to_string(record.kind));
  e.thread = std::move(thread);
  e.begin = static_cast<std::int64_t>(record.begin - origin);
  e.end = static_cast<std::int64_t>(record.end - origin);
  e.a = record.a;
  e.b = record.b;
  return e;
}

namespace fs = std::filesystem;

std::string spec_dir() { return apps::default_spec_dir(); }

Expected<fs::path> find_program(const ProgramSearch& search) {
  std::vector<fs::path> tried;
  std::error_code ec;
  const auto usable = [&](const fs::path& p) {
    tried.push_back(p);
    return !p.empty() && fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
  };
  if (const char* env = std::getenv(search.env_var); env != nullptr && *env != 0) {
    if (usable(env)) return fs::path(env);
    return Error{std::string(search.env_var) + "=" + env + ": not an executable file"};
  }
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    // Installed side by side, or the build tree's apps/<name>/.
    if (const fs::path p = exe.parent_path() / search.name; usable(p)) return p;
    if (const fs::path p = exe.parent_path().parent_path() / search.name / search.name; usable(p)) return p;
  }
  if (search.built_path != nullptr) {
    if (const fs::path p = search.built_path; usable(p)) return p;
  }
  std::string list;
  for (const fs::path& p : tried) list += (list.empty() ? "" : ", ") + p.string();
  return Error{std::string(search.name) + " not found (looked at " + list + "); " + search.hint + " or set " +
               search.env_var};
}

Expected<fs::path> venue_executable() {
  ProgramSearch search;
  search.name = "hft-venue";
  search.env_var = "HFT_VENUE_EXE";
#ifdef HFT_BENCH_VENUE_EXE
  search.built_path = HFT_BENCH_VENUE_EXE;
#endif
  search.hint = "build it (cmake --build <dir> --target hft-venue)";
  return find_program(search);
}

std::string journal_keys(std::uint64_t segment_size, bool prealloc, bool full_size) {
  // Full-size segments from the first one (JournalInitialSegmentSize, whose
  // engine default grows segments from 256 KiB for many quiet sessions):
  // the arms compare segment sizes, as llfix's journals are sized. The load
  // lane keeps the engine's growth (full_size false): many sessions are
  // what it is for.
  std::string keys = "JournalSegmentSize=" + std::to_string(segment_size) + "\n";
  if (full_size) keys += "JournalInitialSegmentSize=" + std::to_string(segment_size) + "\n";
  // --prealloc off: nothing prepared ahead of the writer (rotation creates
  // the next file on the session's thread, which faults in its own pages).
  if (!prealloc) keys += "JournalPrealloc=N\n";
  return keys;
}

std::string venue_config_text(const VenueSpec& spec, const fs::path& store_dir) {
  const std::string dir = spec_dir();
  std::string t = "# hft-bench venue: written per run\n[DEFAULT]\nNonStopSession=Y\n";
  if (spec.busy_poll) {
    t += "PollMode=busy\nIdleStrategy=busy-spin\n";
  } else if (spec.epoll_spin) {
    t += "PollMode=epoll\nEpollTimeoutMs=0\nIdleStrategy=busy-spin\n";
  } else {
    t += "PollMode=epoll\n";
  }
  if (spec.core >= 0) t += "EngineThreadCore=" + std::to_string(spec.core) + "\n";
  // The venue's journal helper shares the venue's core, never the client's,
  // unless a run places it (load --venue-journal-core).
  if (const int cpu = spec.journal_thread_core(); cpu >= 0)
    t += "JournalThreadCore=" + std::to_string(cpu) + "\n";
  t += "ConnectionType=acceptor\nBeginString=" + std::string(ref::kBeginString) + "\n";
  t += "SenderCompID=" + std::string(ref::kTarget) + "\n";
  t += "SenderSubID=" + std::string(ref::kTargetSub) + "\nTargetSubID=" + std::string(ref::kSenderSub) + "\n";
  t += "DefaultApplVerID=" + std::string(ref::kApplVerID) + "\n";
  t += "SocketAcceptPort=0\nSocketAcceptHost=127.0.0.1\nHeartBtInt=30\nResetOnLogon=Y\n";
  t += "TransportDataDictionary=" + dir + "/FIXT11.xml\nAppDataDictionary=" + dir + "/FIX50SP2.xml\n";
  if (!spec.socket_receive_buffer.empty()) t += "SocketReceiveBufferSize=" + spec.socket_receive_buffer + "\n";
  if (!spec.tls_dir.empty()) {
    t += "SocketUseSSL=Y\nServerCertificateFile=" + spec.tls_dir + "/server.pem\nServerCertificateKeyFile=" +
         spec.tls_dir + "/server-key.pem\nCertificationAuthoritiesFile=" + spec.tls_dir +
         "/ca.pem\nCertificateVerifyLevel=1\n";
  }
  // The venue's outbound queue must absorb bursts of ExecutionReports while
  // a client is busy sending.
  t += "SendBufferSize=4M\n";
  if (spec.journal) {
    t += "FileStorePath=" + store_dir.string() + "\n";
    if (spec.shared_journal) t += "JournalLayout=shared\n";
    t += journal_keys(spec.segment_size, spec.prealloc, spec.full_size_segments);
  }
  // The rx lane connects every client before it sends any Logon: all of
  // them wait, unidentified, from 127.0.0.1 at once.
  const std::size_t pending = std::max<std::size_t>(64, spec.sessions.size());
  t += "MaxPendingConnections=" + std::to_string(pending) +
       "\nMaxPendingConnectionsPerAddress=" + std::to_string(pending) + "\n";
  for (const VenueSession& s : spec.sessions) t += "\n[SESSION]\nTargetCompID=" + s.client_comp_id + "\n" + s.keys;
  return t;
}

// ------------------------------------------------------------ venue -----

Expected<std::unique_ptr<VenueProcess>> VenueProcess::start(const VenueSpec& spec, const fs::path& run_dir) {
  auto exe = venue_executable();
  if (!exe) return exe.error();
  std::error_code ec;
  fs::create_directories(run_dir, ec);
  if (ec) return Error{run_dir.string() + ": cannot create (" + ec.message() + ")"};
  const fs::path cfg = run_dir / "venue.cfg";
  std::unique_ptr<VenueProcess> v(new VenueProcess());
  v->store_dir_ = run_dir / "venue-store";
  {
    std::ofstream out(cfg);
    out << venue_config_text(spec, v->store_dir_);
    if (!out) return Error{cfg.string() + ": cannot write the venue config"};
  }
  ChildSpec child;
  child.log_path = run_dir / "venue.log";
  child.port_file = run_dir / "venue.port";
  child.argv = {exe->string(), "--config", cfg.string(), "--port-file", child.port_file.string(),
                spec.sink ? "--sink" : "--no-fill", "--log-level",
                // TLS: the INFO line naming what was negotiated (one per connection).
                spec.tls_dir.empty() ? "warn" : "info"};
  if (spec.core >= 0) {
    child.argv.push_back("--core");
    child.argv.push_back(std::to_string(spec.core));
  }
  if (!spec.trace_file.empty()) {
    child.argv.push_back("--trace-file");
    child.argv.push_back(spec.trace_file);
  }
  child.argv.insert(child.argv.end(), spec.extra_args.begin(), spec.extra_args.end());
  child.listen_timeout_s = spec.listen_timeout_s;
  child.stop_timeout_s = spec.stop_timeout_s;
  child.max_rss_kib = spec.max_rss_kib;
  if (auto started = v->launch(child); !started) return started.error();
  return v;
}

// ------------------------------------------------------------- audits ---

AuditResult audit_client_journal(const fs::path& dir, std::uint64_t expected_orders) {
  return lab::audit_client_journal(dir, expected_orders, spec_dir());
}

AuditResult audit_venue_store(const fs::path& session_dir, std::uint64_t orders, std::uint64_t reports) {
  return lab::audit_venue_store(session_dir, orders, reports, spec_dir());
}

TlsFiles tls_files(const LaneConfig& config) {
  TlsFiles f;
  auto value = [&](const char* key) {
    const auto it = config.extra.find(key);
    return it == config.extra.end() ? std::string() : it->second;
  };
  f.ca = value("tls-ca");
  f.cert = value("tls-cert");
  f.key = value("tls-key");
  return f;
}

Expected<void> engine_lane_preflight(const LaneConfig& config) {
  if (config.venue_port != 0) {
    if (auto e = check_tcp_reachable(config.venue_host, config.venue_port); !e) {
      return Error{"--venue " + config.venue_host + ":" + std::to_string(config.venue_port) +
                   ": not reachable (" + e.error().message + "); start hft-venue there or leave --venue out"};
    }
  } else if (auto exe = venue_executable(); !exe) {
    return Error{"lane " + config.lane + ": " + exe.error().message};
  }
  if (const auto idle = config.extra.find("venue-idle");
      idle != config.extra.end() && idle->second != "spin" && idle->second != "sleep") {
    return Error{"venue-idle=" + idle->second + ": use spin (busy poll) or sleep (epoll_wait)"};
  }
  const EngineInfo* info = EngineRegistry::instance().find(config.engine);
  if (config.variant.ends_with("-tls") && info != nullptr && !info->tls) {
    return Error{"--variants " + config.variant + ": engine '" + config.engine +
                 "' has no TLS in its lab adapter (the -tls variants are for libhft, libhft-tags and quickfix)"};
  }
  if (config.variant.ends_with("-tls") && config.venue_port != 0) {
    return Error{"--variants " + config.variant + ": needs the lab's own venue (leave --venue out): the run makes "
                 "its own certificates"};
  }
  if (info != nullptr && info->check) {
    if (auto ok = info->check(config); !ok) return ok.error();
  }
  // tx paced-ring*: the order is built on another thread; an engine with no
  // way to take it from there is refused before anything runs.
  if (config.variant.starts_with("paced-ring") && info != nullptr && info->available && info->make &&
      !info->make()->supports_queued_send()) {
    return Error{"--variants " + config.variant + ": engine '" + config.engine +
                 "' has no cross-thread send (paced-ring variants are for libhft and libhft-tags)"};
  }
  return {};
}

}  // namespace hft::lab::lanes
