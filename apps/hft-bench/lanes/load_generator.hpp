// The lean load generator shared by the rx and load lanes: client
// connections that are not an engine (its cost must not be what is
// measured). Per connection a pre-built header template, orders encoded with
// the codec (the LAB.md reference NewOrderSingle) into a per-connection
// buffer, up to kBatch per send(), at most `window` unanswered orders, the
// reports framed and matched by ClOrdID.
//
//   LoadGenerator (one thread owns it)
//     conns_[k]: fd, HeaderTemplate, tx buffer (kBatch x kSlot x 2), rx buffer
//     pump: scan (rx: for every connection fill, send, recv) or epoll (load:
//           only connections with reports waiting; a backlog list for
//           partial sends)
//     offered load: as fast as the windows allow, or paced at a rate over
//           this generator's connections (arrival i planned at t0 + i/rate)
//
// Nothing in a phase allocates: buffers, the rtt arrays and the block
// boundaries are sized before it starts. Several generators (one per load
// thread) share one PhaseShared, which counts answered orders across them
// and stamps every kBlock-th (the ns_per_message series).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hft/codec/encoder.hpp"
#include "hft/codec/parser.hpp"
#include "hft/core/expected.hpp"
#include "hft/lab/lane.hpp"
#include "hft/lab/series.hpp"

namespace hft::lab::lanes {

inline constexpr std::size_t kLoadBatch = 16;     ///< orders per send() at most
inline constexpr std::size_t kLoadSlot = 512;     ///< bytes one encoded order may take
inline constexpr std::uint64_t kLoadBlock = 1000;  ///< answered orders per ns_per_message sample

/// One client connection of a generator.
struct LoadConn {
  int fd = -1;
  std::string comp_id;
  codec::HeaderTemplate header;
  std::uint64_t seq = 1;
  std::vector<char> tx = std::vector<char>(kLoadBatch * kLoadSlot * 2);
  std::size_t tx_begin = 0, tx_end = 0;
  std::vector<char> rx;
  std::size_t rx_len = 0;
  std::uint64_t quota = 0;  ///< orders to send in this phase (as-fast-as-possible phases)
  std::uint64_t sent = 0;   ///< in this phase
  std::uint64_t acked = 0;  ///< in this phase
  std::uint64_t orders_total = 0;
  std::uint64_t stamp_first = 0, stamp_count = 0;  ///< orders queued, not stamped yet (stamp_at_send)
  bool logged_on = false;
  bool logged_out = false;
  bool closed = false;
  bool in_backlog = false;

  LoadConn() = default;
  LoadConn(const LoadConn&) = delete;
  LoadConn& operator=(const LoadConn&) = delete;
  ~LoadConn();
};

/// Answered-order counting shared by the generators of one measured phase.
struct PhaseShared {
  std::atomic<std::uint64_t> acked{0};
  std::uint64_t total = 0;     ///< orders of the phase over every generator
  std::uint64_t t_start = 0;   ///< TSC at the start of the phase
  /// TSC when the (b+1)*kLoadBlock-th order was answered (index b); sized
  /// total / kLoadBlock before the phase.
  std::vector<std::uint64_t> boundary;
  /// Set by a generator that failed, so the others stop waiting.
  std::atomic<bool> abort{false};
};

/// Called once per pump iteration of a generator, and with epoll after
/// every 8 ready connections within one (the load lane's probe rides on the
/// first load thread's loop this way).
class PumpHook {
 public:
  virtual ~PumpHook() = default;
  [[nodiscard]] virtual Expected<void> on_pump() = 0;
};

struct LoadGeneratorOptions {
  double hz = 0;                 ///< TSC ticks per second
  std::uint32_t window = 64;     ///< unanswered orders per connection at most
  bool use_epoll = false;        ///< epoll pump (many connections) instead of scanning
  std::size_t rx_buffer = 1 << 20;
  /// Stamp an order's send time just before its send() (the probe) instead
  /// of before it is encoded (rx).
  bool stamp_at_send = false;
  /// ClOrdID = local order index * id_stride + id_offset (unique over the
  /// generators of one run).
  std::uint64_t id_stride = 1, id_offset = 0;
};

/// What one phase asks of a generator.
struct PhaseSpec {
  std::uint64_t orders = 0;      ///< orders this generator sends in the phase
  bool measured = false;         ///< count into `shared`, record rtt
  double rate = 0;               ///< orders/s over this generator; 0: as fast as the windows allow
  std::uint64_t t0 = 0;          ///< TSC plan origin of a paced phase (0: now)
  PhaseShared* shared = nullptr; ///< measured phases
  PumpHook* hook = nullptr;
  const RunContext* ctx = nullptr;  ///< progress (warm-up orders added)
  std::uint64_t progress_base = 0;
  double timeout_s = 30.0;       ///< no progress for this long: an error
};

/// Outcome of a phase for one generator.
struct PhaseStats {
  std::uint64_t first_send = 0;  ///< TSC of its first send batch
  std::uint64_t last_ack = 0;    ///< TSC of its last answer
  std::uint64_t late = 0;        ///< paced: orders issued a period or more after their plan
  std::uint64_t batches = 0;     ///< send batches
  std::uint64_t max_in_flight = 0;  ///< most unanswered orders one connection had
  std::uint64_t bytes_sent = 0;      ///< bytes the sockets took (the orders)
  std::uint64_t bytes_received = 0;  ///< bytes read from the sockets (reports)
  /// epoll pump iterations, and those that found no connection ready and no
  /// partial send pending: a generator that finds nothing in most of its
  /// iterations is waiting for the venue, not limiting the rate.
  std::uint64_t pumps = 0, idle_pumps = 0;
};

class LoadGenerator {
 public:
  explicit LoadGenerator(const LoadGeneratorOptions& options);
  LoadGenerator(const LoadGenerator&) = delete;
  LoadGenerator& operator=(const LoadGenerator&) = delete;
  ~LoadGenerator();

  /// Opens one TCP_NODELAY, non-blocking connection per CompID to
  /// 127.0.0.1:port (sessions comp_id -> EXECUTOR, the reference header).
  [[nodiscard]] Expected<void> connect(std::uint16_t port, const std::vector<std::string>& comp_ids);
  /// Sends a Logon (ResetSeqNumFlag=Y) on every connection and waits for every answer.
  [[nodiscard]] Expected<void> logon_all(double timeout_s = 30.0);
  /// Runs one phase (see PhaseSpec) until every order of it is answered.
  [[nodiscard]] Expected<PhaseStats> phase(const PhaseSpec& spec);
  /// The probe's loop, driven by another generator's hook: start() sends
  /// one order after another (as the window allows) with no count but
  /// `limit`, step() pumps once, stop_sending() ends sending and finish()
  /// pumps until every order sent is answered.
  void start_open_phase(std::uint64_t limit);
  [[nodiscard]] Expected<void> step();
  void stop_sending() noexcept { phase_limit_ = phase_sent_; }
  [[nodiscard]] Expected<void> finish(double timeout_s = 30.0);
  [[nodiscard]] std::uint64_t phase_sent() const noexcept { return phase_sent_; }
  /// Logout on every connection and wait for the answers (or the close).
  [[nodiscard]] Expected<void> logout_all(double timeout_s = 5.0);

  /// Records the round trip of the orders with local index in
  /// [first, first + capacity) (allocates: call it between phases): the
  /// series rtt_series() returns.
  void record_rtt(std::uint64_t first, std::uint64_t capacity);
  /// Local index of the next order.
  [[nodiscard]] std::uint64_t next_index() const noexcept { return next_index_; }
  /// Recorded orders whose report never came (-1 left), over the first `count`.
  [[nodiscard]] std::uint64_t unmatched(std::uint64_t count) const noexcept;
  /// The recorded round trips (first `count`), in TSC ticks.
  /// `origin` non-zero: each sample also gets its send time, TSC ticks from
  /// `origin` (Series::time), for the attribution of long round trips.
  [[nodiscard]] Series rtt_series(std::string name, std::uint64_t count, std::uint64_t origin = 0);

  [[nodiscard]] const std::vector<std::unique_ptr<LoadConn>>& conns() const noexcept { return conns_; }
  void close_all() noexcept { conns_.clear(); }

 private:
  [[nodiscard]] Expected<void> queue(LoadConn& c, codec::MessageWriter& w);
  [[nodiscard]] Expected<void> flush(LoadConn& c);
  void fill_orders(LoadConn& c, std::uint64_t limit);
  /// As-fast-as-possible phases with epoll: fill_orders + flush until c's
  /// window is full or its socket takes no more.
  [[nodiscard]] Expected<void> fill_window(LoadConn& c);
  [[nodiscard]] Expected<void> on_message(LoadConn& c, std::string_view msg, std::uint64_t now);
  [[nodiscard]] Expected<void> receive(LoadConn& c);
  [[nodiscard]] Expected<void> pump_once();
  [[nodiscard]] Expected<void> dispatch_paced(std::uint64_t now);
  template <typename Done>
  [[nodiscard]] Expected<void> pump_until(Done done, const char* what, double timeout_s);
  [[nodiscard]] std::span<char> scratch() noexcept { return {scratch_, sizeof scratch_}; }

  LoadGeneratorOptions opt_;
  std::vector<std::unique_ptr<LoadConn>> conns_;
  int epoll_fd_ = -1;
  std::vector<LoadConn*> backlog_;
  codec::TimestampFormatter fmt_;
  codec::MessageView view_;
  char scratch_[kLoadSlot];

  std::vector<std::uint64_t> sent_tsc_;
  std::vector<std::int64_t> rtt_;
  std::uint64_t record_first_ = 0;

  std::uint64_t next_index_ = 0;
  // Phase state.
  PhaseSpec spec_;
  PhaseStats stats_;
  bool quota_per_conn_ = true;     ///< false: paced or open (generator-level count)
  std::uint64_t phase_sent_ = 0, phase_acked_ = 0;
  std::uint64_t phase_limit_ = 0;  ///< orders to send in the phase (open: unlimited until stop_sending)
  double ticks_per_order_ = 0;     ///< paced: 0 otherwise
  std::size_t rr_ = 0;             ///< paced: next connection
};

/// The ns_per_message series of a finished measured phase: for block b, the
/// TSC ticks from the previous boundary (the phase start for b = 0) to
/// boundary b, divided by kLoadBlock; its time column the block's start
/// relative to the phase start. Fills s.values and s.time.
void block_series(const PhaseShared& shared, Series& s);

/// An rx run's messages/s as it finished, for the load lane's criterion
/// (rx with 8 clients is the yardstick). Lanes run one after
/// another on the runner's thread, so a plain vector serves.
struct RxFigure {
  std::uint32_t connections = 0;
  double messages_per_s = 0;
  std::string variant, arm;
  /// The measured orders and reports (their bytes on the wire, what the
  /// venue journals) fit in the journal segments the venue had allocated
  /// before the measured phase: every order went to journal memory
  /// prepared before it (a burst figure).
  bool prepared_only = false;
  double prepared_mib = 0;   ///< venue journal space allocated before the measured phase
  double journaled_mib = 0;  ///< bytes of the measured orders and reports
};
[[nodiscard]] std::vector<RxFigure>& rx_figures();

/// The phase's answered orders per second over each tenth of its blocks,
/// and over its first and second halves, from shared.boundary: a rate that
/// falls within a run (journal memory prepared before it used up, say)
/// shows here and not in the run's mean. Empty with fewer than 10 blocks.
[[nodiscard]] std::string rate_by_tenths(const PhaseShared& shared, double hz);

}  // namespace hft::lab::lanes
