#include "lane_support.hpp"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/configs.hpp"
#include "hft/audit/journal_audit.hpp"
#include "hft/engine/config.hpp"
#include "hft/lab/bench.hpp"
#include "hft/lab/engine_adapter.hpp"
#include "hft/lab/foreign_journals.hpp"

namespace hft::lab::lanes {

namespace fs = std::filesystem;

std::string spec_dir() { return apps::default_spec_dir(); }

Expected<fs::path> venue_executable() {
  std::vector<fs::path> tried;
  std::error_code ec;
  const auto usable = [&](const fs::path& p) {
    tried.push_back(p);
    return !p.empty() && fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
  };
  if (const char* env = std::getenv("HFT_VENUE_EXE"); env != nullptr && *env != 0) {
    if (usable(env)) return fs::path(env);
    return Error{std::string("HFT_VENUE_EXE=") + env + ": not an executable file"};
  }
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    // Installed side by side, or the build tree's apps/hft-venue/.
    if (const fs::path p = exe.parent_path() / "hft-venue"; usable(p)) return p;
    if (const fs::path p = exe.parent_path().parent_path() / "hft-venue" / "hft-venue"; usable(p)) return p;
  }
#ifdef HFT_BENCH_VENUE_EXE
  if (const fs::path p = HFT_BENCH_VENUE_EXE; usable(p)) return p;
#endif
  std::string list;
  for (const fs::path& p : tried) list += (list.empty() ? "" : ", ") + p.string();
  return Error{"hft-venue not found (looked at " + list +
               "); build it (cmake --build <dir> --target hft-venue) or set HFT_VENUE_EXE"};
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
  if (spec.core >= 0) {
    // The venue's journal helper shares the venue's core, never the client's.
    t += "EngineThreadCore=" + std::to_string(spec.core) + "\n";
    t += "JournalThreadCore=" + std::to_string(spec.core) + "\n";
  }
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

std::int64_t mem_available_kib() {
  std::ifstream f("/proc/meminfo");
  std::string key;
  std::int64_t value = 0;
  std::string unit;
  while (f >> key >> value >> unit) {
    if (key == "MemAvailable:") return value;
  }
  return -1;
}

ProcessMemory process_memory(pid_t pid) {
  ProcessMemory m;
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(f, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = line.substr(0, colon);
    std::int64_t* into = key == "VmRSS"      ? &m.vm_rss_kib
                         : key == "RssAnon"  ? &m.rss_anon_kib
                         : key == "RssFile"  ? &m.rss_file_kib
                         : key == "RssShmem" ? &m.rss_shmem_kib
                         : key == "VmHWM"    ? &m.vm_hwm_kib
                                             : nullptr;
    if (into != nullptr) *into = std::atoll(line.c_str() + colon + 1);
  }
  return m;
}

std::uint64_t allocated_bytes(const fs::path& dir) {
  std::uint64_t total = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      total += static_cast<std::uint64_t>(st.st_blocks) * 512U;
    }
  }
  return total;
}

ThreadSched thread_sched(pid_t pid, pid_t tid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/schedstat");
  ThreadSched t;
  if (!(f >> t.run_ns >> t.wait_ns)) return ThreadSched{};
  return t;
}

std::uint64_t thread_cpu_ns(pid_t pid, pid_t tid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/schedstat");
  std::uint64_t run_ns = 0;
  if (!(f >> run_ns)) return 0;
  return run_ns;
}

// ------------------------------------------------------------ venue -----

Expected<std::unique_ptr<VenueProcess>> VenueProcess::start(const VenueSpec& spec, const fs::path& run_dir) {
  auto exe = venue_executable();
  if (!exe) return exe.error();
  std::error_code ec;
  fs::create_directories(run_dir, ec);
  if (ec) return Error{run_dir.string() + ": cannot create (" + ec.message() + ")"};
  const fs::path cfg = run_dir / "venue.cfg";
  const fs::path port_file = run_dir / "venue.port";
  std::unique_ptr<VenueProcess> v(new VenueProcess());
  v->log_path_ = run_dir / "venue.log";
  v->store_dir_ = run_dir / "venue-store";
  v->stop_timeout_s_ = spec.stop_timeout_s;
  {
    std::ofstream out(cfg);
    out << venue_config_text(spec, v->store_dir_);
    if (!out) return Error{cfg.string() + ": cannot write the venue config"};
  }
  fs::remove(port_file, ec);

  // Everything the child needs is prepared before fork(): after it only
  // async-signal-safe calls run.
  std::vector<std::string> args{exe->string(), "--config", cfg.string(), "--port-file", port_file.string(),
                                spec.sink ? "--sink" : "--no-fill", "--log-level",
                                // TLS: the INFO line naming what was negotiated (one per connection).
                                spec.tls_dir.empty() ? "warn" : "info"};
  if (spec.core >= 0) {
    args.push_back("--core");
    args.push_back(std::to_string(spec.core));
  }
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int log_fd = ::open(v->log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log_fd < 0) return Error{v->log_path_.string() + ": " + std::strerror(errno)};
  const pid_t parent = ::getpid();
  // The calling (client) thread is pinned; the venue must start from the
  // process's own mask (the main thread's) and pin itself with --core.
  cpu_set_t mask;
  CPU_ZERO(&mask);
  const bool have_mask = ::sched_getaffinity(parent, sizeof(mask), &mask) == 0;
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(log_fd);
    return Error{std::string("fork: ") + std::strerror(errno)};
  }
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(127);
    ::dup2(log_fd, STDERR_FILENO);
    ::dup2(log_fd, STDOUT_FILENO);
    if (have_mask) ::sched_setaffinity(0, sizeof(mask), &mask);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(log_fd);
  v->pid_ = pid;

  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(spec.listen_timeout_s);
  for (;;) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      v->pid_ = -1;
      return Error{"hft-venue exited before listening (status " + std::to_string(status) +
                   "): " + v->log_tail(600)};
    }
    if (spec.max_rss_kib > 0) {
      if (const std::int64_t rss = process_memory(pid).vm_rss_kib; rss > spec.max_rss_kib) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
        v->pid_ = -1;
        return Error{"hft-venue's resident memory reached " + std::to_string(rss >> 10) +
                     " MiB before it listened, over the limit of " + std::to_string(spec.max_rss_kib >> 10) +
                     " MiB; killed: " + v->log_tail(300)};
      }
    }
    std::ifstream pf(port_file);
    int port = 0;
    if (pf >> port && port > 0) {
      v->port_ = static_cast<std::uint16_t>(port);
      break;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      return Error{"hft-venue did not listen within " + std::to_string(static_cast<int>(spec.listen_timeout_s)) +
                   " s: " + v->log_tail(600)};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return v;
}

VenueProcess::~VenueProcess() {
  if (pid_ > 0) (void)stop();
}

std::uint64_t VenueProcess::engine_cpu_ns() const { return pid_ > 0 ? thread_cpu_ns(pid_, pid_) : 0; }

int VenueProcess::engine_cpu() const {
  if (pid_ <= 0) return -1;
  std::ifstream f("/proc/" + std::to_string(pid_) + "/task/" + std::to_string(pid_) + "/stat");
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream rest(text.substr(close + 2));
  std::string field;
  // Field 39 (processor); after ')' the fields start at 3.
  for (int k = 3; k <= 39 && (rest >> field); ++k) {
    if (k == 39) return std::atoi(field.c_str());
  }
  return -1;
}

Expected<std::string> VenueProcess::stop() {
  if (pid_ <= 0) return std::string{};
  const pid_t pid = std::exchange(pid_, -1);
  ::kill(pid, SIGTERM);
  int status = 0;
  bool exited = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(stop_timeout_s_);
  while (std::chrono::steady_clock::now() < deadline) {
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      exited = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (!exited) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    return Error{"hft-venue did not stop within " + std::to_string(static_cast<int>(stop_timeout_s_)) +
                 " s of SIGTERM (killed): " + log_tail(400)};
  }
  std::string tail = log_tail(400);
  while (!tail.empty() && tail.back() == '\n') tail.pop_back();
  const auto nl = tail.rfind('\n');
  const std::string last = nl == std::string::npos ? tail : tail.substr(nl + 1);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return Error{"hft-venue exited with status " + std::to_string(status) + ": " + log_tail(600)};
  }
  return last;
}

std::string VenueProcess::log_tail(std::size_t max_bytes) const {
  std::ifstream f(log_path_);
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (text.size() > max_bytes) text = "..." + text.substr(text.size() - max_bytes);
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text;
}

std::string VenueProcess::log_line_from(std::string_view text) const {
  std::ifstream f(log_path_);
  std::string line;
  while (std::getline(f, line)) {
    const std::size_t at = line.find(text);
    if (at != std::string::npos) return line.substr(at);
  }
  return {};
}

// ---------------------------------------------------------- settling ----

namespace {

struct JournalThreads {
  std::uint64_t cpu_ns = 0;
  int threads = 0;
};

JournalThreads journal_threads_cpu(const std::vector<pid_t>& pids) {
  JournalThreads out;
  for (const pid_t pid : pids) {
    std::error_code ec;
    const fs::path task_dir = "/proc/" + std::to_string(pid) + "/task";
    for (const auto& entry : fs::directory_iterator(task_dir, ec)) {
      std::ifstream comm(entry.path() / "comm");
      std::string name;
      std::getline(comm, name);
      if (name.rfind("hft-journal", 0) != 0) continue;
      const pid_t tid = static_cast<pid_t>(std::atoi(entry.path().filename().c_str()));
      out.cpu_ns += thread_cpu_ns(pid, tid);
      ++out.threads;
    }
  }
  return out;
}

}  // namespace

std::string wait_journal_threads_idle(const std::vector<pid_t>& pids, double max_seconds) {
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::duration<double>(max_seconds);
  std::uint64_t before = journal_threads_cpu(pids).cpu_ns;
  std::uint64_t total = 0;
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const JournalThreads now = journal_threads_cpu(pids);
    const std::uint64_t used = now.cpu_ns - before;
    total += used;
    before = now.cpu_ns;
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    char text[160];
    // Preparing a segment keeps a service thread at 10-20% of a CPU (it
    // pauses 4x as long as each piece took, docs/journal.md); an idle one
    // wakes every 10 ms and re-touches pages ahead of each writer every
    // 100 ms (well under 1% before the run starts). 3% per thread tells
    // them apart.
    if (used < 3'000'000ULL * static_cast<std::uint64_t>(std::max(1, now.threads))) {
      // The prepared segments are gigabytes of dirty zero pages (640 MiB
      // arm: four journals x active + spare); left dirty, the kernel writes
      // them back 30 s later (dirty_expire), inside the measured window,
      // with flusher threads on both cores (seen as 5-15 ms tx stalls at
      // 0.8 s and 2.3 s into a run). Written back now, before measuring.
      // Data written during the run is still written back during the run.
      const auto t_sync = std::chrono::steady_clock::now();
      ::sync();
      const double synced = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_sync).count();
      std::snprintf(text, sizeof text,
                    "journal threads idle after %.2f s (%.1f ms of their CPU while waiting); sync() %.2f s", waited,
                    static_cast<double>(total) * 1e-6, synced);
      return text;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      std::snprintf(text, sizeof text, "journal threads still busy after %.2f s (%.1f ms CPU in the last 100 ms)",
                    waited, static_cast<double>(used) * 1e-6);
      return text;
    }
  }
}

// ------------------------------------------------------------- audits ---

namespace {

std::shared_ptr<const codec::Dictionary> reference_dictionary(std::string& error) {
  static std::shared_ptr<const codec::Dictionary> cached;
  static std::string cached_error;
  if (!cached && cached_error.empty()) {
    const std::string dir = spec_dir();
    auto d = audit::load_dictionary(dir + "/FIXT11.xml", dir + "/FIX50SP2.xml");
    if (d) {
      cached = *d;
    } else {
      cached_error = d.error().message;
    }
  }
  error = cached_error;
  return cached;
}

// Any string-keyed count map (the audit library's PerTypeCounts included).
template <typename Map>
std::string per_type_text(const Map& per_type) {
  std::string s;
  for (const auto& [type, n] : per_type) s += (s.empty() ? "" : ", ") + type + ": " + std::to_string(n);
  return s;
}

template <typename Map>
std::uint64_t count_of(const Map& per_type, const std::string& type) {
  const auto it = per_type.find(type);
  return it == per_type.end() ? 0 : it->second;
}

AuditResult audit_libhft_journal(const fs::path& dir, audit::DirectionSelect direction,
                                 const std::string& counted_type, std::uint64_t expected, const char* what) {
  AuditResult out;
  std::string dict_error;
  audit::AuditOptions options;
  options.dictionary = reference_dictionary(dict_error);
  if (!options.dictionary) {
    out.status = AuditResult::Status::kNotRun;
    out.detail = std::string(what) + ": dictionary not loaded (" + dict_error + ")";
    return out;
  }
  options.direction = direction;
  options.begin_string = std::string(ref::kBeginString);
  options.max_failures = 5;
  auto report = audit::audit_journal(dir.string(), options);
  if (!report) {
    out.status = AuditResult::Status::kFail;
    out.detail = std::string(what) + ": " + report.error().message;
    return out;
  }
  out.checked = report->records;
  const std::uint64_t got = count_of(report->per_type, counted_type);
  std::string detail = std::string(what) + " " + dir.string() + ": " + std::to_string(report->records) +
                       " messages in " + std::to_string(report->segments) + " segment(s) (" +
                       per_type_text(report->per_type) + "), seqs " + std::to_string(report->first_seq) + ".." +
                       std::to_string(report->last_seq) + "; record CRC, framing/CheckSum, MsgSeqNum, validation (" +
                       report->dictionary + ") and sequence checked";
  if (!report->ok) {
    out.status = AuditResult::Status::kFail;
    detail += "; FAILED: " + std::to_string(report->failure_count) + " failure(s)";
    if (const auto* f = report->first_failure(); f != nullptr) detail += ", first: " + f->describe();
  } else if (got != expected) {
    out.status = AuditResult::Status::kFail;
    detail += "; FAILED: " + std::to_string(got) + " 35=" + counted_type + " messages, expected " +
              std::to_string(expected);
  } else {
    out.status = AuditResult::Status::kPass;
    detail += "; 35=" + counted_type + " count " + std::to_string(got) + " == expected";
  }
  out.detail = std::move(detail);
  return out;
}

}  // namespace

AuditResult audit_client_journal(const fs::path& dir, std::uint64_t expected_orders) {
  std::error_code ec;
  if (dir.empty() || !fs::is_directory(dir, ec)) {
    return AuditResult{AuditResult::Status::kNotRun, 0, "no client journal directory to audit"};
  }
  if (fs::is_directory(dir / "outbound", ec)) {
    return audit_libhft_journal(dir, audit::DirectionSelect::kOutbound, "D", expected_orders,
                                "client outbound journal");
  }
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".header") return audit_quickfix_store(entry.path(), expected_orders);
  }
  if (is_llfix_journal(dir)) return audit_llfix_journal(dir, expected_orders);
  return AuditResult{AuditResult::Status::kFail, 0,
                     dir.string() + ": neither a libhft store, a QuickFIX FileStore nor an llfix journal"};
}

AuditResult audit_venue_store(const fs::path& session_dir, std::uint64_t orders, std::uint64_t reports) {
  AuditResult in = audit_libhft_journal(session_dir, audit::DirectionSelect::kInbound, "D", orders,
                                        "venue inbound journal");
  AuditResult out = audit_libhft_journal(session_dir, audit::DirectionSelect::kOutbound, "8", reports,
                                         "venue outbound journal");
  return combine_audits({{"in", std::move(in)}, {"out", std::move(out)}});
}

AuditResult combine_audits(const std::vector<std::pair<std::string, AuditResult>>& parts) {
  AuditResult out;
  bool any_fail = false, all_pass = !parts.empty();
  for (const auto& [name, a] : parts) {
    any_fail = any_fail || a.status == AuditResult::Status::kFail;
    all_pass = all_pass && a.status == AuditResult::Status::kPass;
    out.checked += a.checked;
    out.detail += (out.detail.empty() ? "" : " | ") + a.detail;
  }
  out.status = any_fail ? AuditResult::Status::kFail
                        : (all_pass ? AuditResult::Status::kPass : AuditResult::Status::kNotRun);
  return out;
}

std::uint64_t directory_bytes(const fs::path& dir) {
  std::uint64_t total = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->is_regular_file(ec)) total += it->file_size(ec);
  }
  return total;
}

std::string remove_run_journals(const fs::path& run_dir, const AuditResult& audit) {
  if (audit.status == AuditResult::Status::kFail) return "journals kept for inspection in " + run_dir.string();
  const std::uint64_t bytes = directory_bytes(run_dir);
  std::error_code ec;
  fs::remove_all(run_dir, ec);
  char text[160];
  std::snprintf(text, sizeof text, "journals (%.1f MiB on disk) removed after the audit", static_cast<double>(bytes) / (1 << 20));
  return text;
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
