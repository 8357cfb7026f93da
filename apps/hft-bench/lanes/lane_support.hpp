// What the engine lanes (tx, rtt, rx, load, codec) share that is theirs:
// the reference order of LAB.md, the tx boundary's order, where the FIX
// dictionaries are, a run's TLS files, the hft-venue child process (its
// executable, its generated config, its session stores), the post-run
// audits of the journals a run wrote, and the engine lanes' preflight. The
// lab infrastructure they stand on is hft::lab's and included here, so lanes
// call it unqualified: fenced TSC reads (lane.hpp), /proc sampling and
// journal-thread settling (proc.hpp), child processes (child_process.hpp).
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
#include <string_view>
#include <vector>

#include "hft/codec/encoder.hpp"
#include "hft/core/expected.hpp"
#include "hft/lab/child_process.hpp"
#include "hft/lab/lane.hpp"
#include "hft/lab/proc.hpp"

namespace hft::lab::lanes {

/// The LAB.md reference NewOrderSingle, field by field.
namespace ref {
inline constexpr std::string_view kBeginString = "FIXT.1.1";
inline constexpr std::string_view kApplVerID = "FIX.5.0SP2";  ///< DefaultApplVerID of the session
inline constexpr std::string_view kSender = "CLIENT1";
inline constexpr std::string_view kTarget = "EXECUTOR";
inline constexpr std::string_view kSenderSub = "SNDR_SUB";  ///< 50
inline constexpr std::string_view kTargetSub = "SRVR_SUB";  ///< 57
inline constexpr std::string_view kSymbol = "NOKIA.HE";     ///< 55
inline constexpr char kSide = '1';                          ///< 54
inline constexpr std::int64_t kOrderQty = 10;               ///< 38
inline constexpr std::int64_t kPrice = 10000;               ///< 44
inline constexpr char kOrdType = '2';                       ///< 40
inline constexpr char kTimeInForce = '0';                   ///< 59
/// 453 with its two party entries, pre-encoded (SOH-terminated).
inline constexpr std::string_view kParties =
    "453=2\x01" "448=PARTY1\x01" "447=D\x01" "452=1\x01" "448=PARTY2\x01" "447=D\x01" "452=3\x01";

/// Appends the reference NewOrderSingle's body (11 .. 60) to `w`, after
/// its header: ClOrdID `id`, TransactTime `now_ns` in milliseconds.
inline void write_order_body(codec::MessageWriter& w, std::uint64_t id, std::int64_t now_ns,
                             codec::TimestampFormatter& f) noexcept {
  w.add_uint(codec::tag::kClOrdID, id);
  w.add(codec::tag::kSymbol, kSymbol);
  w.add_char(codec::tag::kSide, kSide);
  w.add_int(codec::tag::kOrderQty, kOrderQty);
  w.add_int(codec::tag::kPrice, kPrice);
  w.add_char(codec::tag::kOrdType, kOrdType);
  w.add_char(codec::tag::kTimeInForce, kTimeInForce);
  w.add_raw(kParties);
  w.add_timestamp(codec::tag::kTransactTime, now_ns, codec::TimePrecision::kMillis, f);
}
}  // namespace ref

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
  bool prealloc = true;
  /// hft-venue --sink (orders journaled, none answered) instead of --no-fill
  /// (one ExecutionReport per order).
  bool sink = false;
  /// Non-empty: the venue's port speaks TLS with this directory's
  /// credentials (hft/lab/tls_credentials.hpp) and requires a client
  /// certificate signed by its CA.
  std::string tls_dir;
  int core = -1;
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

/// Audits the outbound journal a client engine wrote: libhft journals with
/// hft::audit::audit_journal (record CRC, framing, CheckSum, dictionary
/// validation, contiguous sequence numbers), QuickFIX FileStores
/// (*.header/*.body) and llfix serialised files (<n>.bin) with the
/// same framing, CheckSum and sequence checks (hft/lab/foreign_journals.hpp).
/// Passes when every check passes and the journal holds exactly
/// `expected_orders` NewOrderSingles.
[[nodiscard]] AuditResult audit_client_journal(const std::filesystem::path& dir, std::uint64_t expected_orders);

/// Audits one venue session store: inbound NewOrderSingles == `orders`,
/// outbound ExecutionReports == `reports`, both journals pass.
[[nodiscard]] AuditResult audit_venue_store(const std::filesystem::path& session_dir, std::uint64_t orders,
                                            std::uint64_t reports);

/// Combines audits: fail if any failed, pass if all passed, else not-run.
[[nodiscard]] AuditResult combine_audits(const std::vector<std::pair<std::string, AuditResult>>& parts);

/// Removes the journals of a run whose audit passed (640 MiB segments add up
/// quickly); keeps everything when it failed. Returns a note.
[[nodiscard]] std::string remove_run_journals(const std::filesystem::path& run_dir, const AuditResult& audit);

/// Preflight shared by the engine lanes: a given --venue is reachable, the
/// venue executable exists otherwise, the journal request is expressible.
[[nodiscard]] Expected<void> engine_lane_preflight(const LaneConfig& config);

}  // namespace hft::lab::lanes
