// What the engine lanes (tx, rtt, rx, load, codec) share that is theirs:
// the tx boundary's order, where the FIX dictionaries are, a run's TLS
// files, the hft-venue child process (its executable, its generated config,
// its session stores), the journal audits with the dictionaries of
// spec_dir(), and the engine lanes' preflight. The lab infrastructure they
// stand on is hft::lab's and included here, so lanes call it unqualified:
// fenced TSC reads (lane.hpp), the reference order (reference_order.hpp),
// /proc sampling and journal-thread settling (proc.hpp), child processes
// (child_process.hpp) and the journal audits (journal_audits.hpp).
//
// The venue is a separate process (apps/hft-venue, started per run with a
// generated QuickFIX-style config) so that the client's address space, heap
// and mmap lock are its own, as in the llfix benchmark the tx lane mirrors:
//
//   hft-bench (client thread pinned to --client-core)
//        |  TCP 127.0.0.1, TCP_NODELAY
//        v
//   hft-venue --config RUN/venue.cfg --core <--server-core> --no-fill
//        journals under RUN/venue-store, answers each order with one
//        ExecutionReport (new)
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "hft/core/expected.hpp"
#include "hft/core/trace.hpp"
#include "hft/lab/child_process.hpp"
#include "hft/lab/events.hpp"
#include "hft/lab/journal_audits.hpp"
#include "hft/lab/lane.hpp"
#include "hft/lab/proc.hpp"
#include "hft/lab/reference_order.hpp"

namespace hft::lab::lanes {

/// A record of an engine's event trace (hft/core/trace.hpp) as an event of
/// `source` ("client", "venue"; "client-journal", "venue-journal" for a
/// record of that process's journal service thread), its stamps made
/// offsets from `origin` (TSC).
[[nodiscard]] RunEvent trace_event(const core::TraceRecord& record, std::string thread, const char* source,
                                   std::uint64_t origin);

/// The order object the tx boundary takes from a preallocated pool and
/// fills per call (llfix's benchmark sets three fields of a cached order).
struct Order {
  std::uint64_t cl_ord_id = 0;
  std::int64_t price = ref::kPrice;
  std::int64_t quantity = ref::kOrderQty;
};

/// Directory of the FIX XML dictionaries (FIXT11.xml, FIX50SP2.xml, ...).
[[nodiscard]] std::string spec_dir();

/// A TLS run's client credentials (LaneConfig::extra "tls-ca", "tls-cert",
/// "tls-key", set by run_engine_lane for variants ending in "-tls"); all
/// empty (false) for plain TCP.
struct TlsFiles {
  std::string ca, cert, key;
  explicit operator bool() const noexcept { return !ca.empty(); }
};
[[nodiscard]] TlsFiles tls_files(const LaneConfig& config);

/// Finds the hft-venue executable: $HFT_VENUE_EXE, the build tree's
/// (recorded at configure time), next to hft-bench, or ../hft-venue/.
/// Error names every place looked at.
[[nodiscard]] Expected<std::filesystem::path> venue_executable();

/// Where a program the lab starts is looked for (venue_executable()).
struct ProgramSearch {
  const char* name = "";                ///< file name, e.g. "hft-venue"
  const char* env_var = "";             ///< an environment variable that names it (wins when set)
  const char* built_path = nullptr;     ///< the build tree's path, recorded at configure time
  const char* hint = "build it";        ///< how to get it, for the error
};
/// $env_var, next to hft-bench, ../<name>/<name> from it, or built_path.
/// Error names every place looked at.
[[nodiscard]] Expected<std::filesystem::path> find_program(const ProgramSearch& search);

/// One acceptor session of the venue config.
struct VenueSession {
  std::string client_comp_id = std::string(ref::kSender);
  std::string keys;  ///< extra KEY=VALUE lines of this [SESSION] (e.g. its own JournalSegmentSize)
};

/// Settings of the venue a lane starts.
struct VenueSpec {
  std::vector<VenueSession> sessions{VenueSession{}};
  bool busy_poll = true;         ///< PollMode=busy (tx/rtt) or epoll (rx: CPU time = work)
  bool journal = true;           ///< FileStorePath under the run directory
  std::uint64_t segment_size = 64ULL << 20;
  /// JournalInitialSegmentSize = segment_size (tx/rtt/rx: arms compare
  /// sizes); false: the engine's growth from its initial size (load).
  bool full_size_segments = true;
  /// JournalLayout=shared: every session journals into one journal,
  /// <store>/shared-journal, the session directories hold only seqnums.dat
  /// (load --venue-journal shared); false: the engine's default, a journal
  /// per session and direction.
  bool shared_journal = false;
  bool prealloc = true;
  /// hft-venue --sink (orders journaled, none answered) instead of --no-fill
  /// (one ExecutionReport per order).
  bool sink = false;
  /// Non-empty: the venue's port speaks TLS with this directory's
  /// credentials (hft/lab/tls_credentials.hpp) and requires a client
  /// certificate signed by its CA.
  std::string tls_dir;
  /// Non-empty: hft-venue --trace-file (its engine's event trace, written
  /// when it stops; hft/engine/trace_file.hpp).
  std::string trace_file;
  int core = -1;
  /// JournalThreadCore: kSameAsCore (pinned beside the engine thread on
  /// `core`, every lane's default), -1 (not pinned) or a CPU (load
  /// --venue-journal-core).
  static constexpr int kSameAsCore = -2;
  int journal_core = kSameAsCore;
  /// The JournalThreadCore the venue gets: a CPU, or -1 (the key is left out).
  [[nodiscard]] int journal_thread_core() const noexcept {
    return journal_core == kSameAsCore ? core : journal_core;
  }
  std::string socket_receive_buffer;  ///< SocketReceiveBufferSize value, empty: default
  /// With busy_poll false: PollMode=epoll with EpollTimeoutMs=0 and
  /// IdleStrategy=busy-spin (spins on epoll_wait: busy latency, work per
  /// ready socket, for many sessions) instead of sleeping with backoff.
  bool epoll_spin = false;
  /// How long start() waits for the venue to listen.
  double listen_timeout_s = 15.0;
  /// How long stop() waits after SIGTERM before it kills the venue.
  double stop_timeout_s = 10.0;
  /// start() kills the venue and fails when its VmRSS passes this while it
  /// starts (a shared host's other work must not meet the OOM killer); 0: no limit.
  std::int64_t max_rss_kib = 0;
  /// More hft-venue arguments (e.g. --http-port 0 --http-port-file F).
  std::vector<std::string> extra_args;
};

/// The QuickFIX-style config text of the venue (FIXT.1.1 / FIX.5.0SP2,
/// dictionaries validated, ResetOnLogon, journal under `store_dir`).
[[nodiscard]] std::string venue_config_text(const VenueSpec& spec, const std::filesystem::path& store_dir);

/// Config keys for a journal with `segment_size` (full size from the first
/// segment, or growing up to it when `full_size` is false) and `prealloc`
/// (off: JournalPrealloc=N).
[[nodiscard]] std::string journal_keys(std::uint64_t segment_size, bool prealloc, bool full_size = true);

/// A running hft-venue child process (see the file comment; the lab's
/// ChildProcess with the venue's store directory). It dies with hft-bench
/// (PR_SET_PDEATHSIG), so an interrupted bench leaves none behind.
class VenueProcess final : public ChildProcess {
 public:
  /// Writes RUN/venue.cfg, starts the venue pinned to spec.core, and waits
  /// (up to spec.listen_timeout_s) for it to listen. Errors quote the venue's stderr.
  [[nodiscard]] static Expected<std::unique_ptr<VenueProcess>> start(const VenueSpec& spec,
                                                                     const std::filesystem::path& run_dir);

  [[nodiscard]] const std::filesystem::path& store_dir() const noexcept { return store_dir_; }
  /// CPU time of the venue's engine thread (its main thread), from
  /// /proc/PID/task/PID/schedstat, in nanoseconds (0 if unreadable).
  [[nodiscard]] std::uint64_t engine_cpu_ns() const { return main_thread_cpu_ns(); }
  /// CPU the engine thread last ran on (-1 if unreadable).
  [[nodiscard]] int engine_cpu() const { return main_thread_cpu(); }

 private:
  VenueProcess() = default;
  std::filesystem::path store_dir_;
};

/// The lab's audit_client_journal and audit_venue_store
/// (hft/lab/journal_audits.hpp) with the dictionaries of spec_dir().
[[nodiscard]] AuditResult audit_client_journal(const std::filesystem::path& dir,
                                               std::uint64_t expected_orders);
[[nodiscard]] AuditResult audit_venue_store(const std::filesystem::path& session_dir, std::uint64_t orders,
                                            std::uint64_t reports);

/// Preflight shared by the engine lanes: a given --venue is reachable, the
/// venue executable exists otherwise, the journal request is expressible.
[[nodiscard]] Expected<void> engine_lane_preflight(const LaneConfig& config);

}  // namespace hft::lab::lanes
