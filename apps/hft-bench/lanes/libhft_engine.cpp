// The libhft engine adapters: one hft::engine::Engine with one FIXT.1.1
// initiator session (CLIENT1 -> EXECUTOR), journaling under the run
// directory, polled by the lane's thread (PollMode=busy; no engine thread).
//
// tx boundary (send_new_order): take an Order from a preallocated pool and
// set three fields; Session::begin_app claims room in the outbound journal
// and writes the header (34, 49, 50, 52 from one clock read, 56, 57); the
// body follows, 60 from a second clock read; Session::send finishes
// BodyLength and CheckSum, commits the journal record and hands the bytes to
// send() on the non-blocking TCP_NODELAY socket. The call returns when
// send() accepted the bytes (or the engine queued the rest; counted, see
// stop()).
//
// Two engines, the same boundary and the same fields (LAB.md's reference
// order, 230-242 bytes):
//   libhft       the typed FIX 5.0SP2 NewOrderSingleWriter (what an
//                application writes, docs/codec.md): the required fields
//                first (11 54 60 40), then 55 38 44 59 and the parties;
//                ExecutionReports read through the cracker and the typed
//                reader
//   libhft-tags  MessageWriter::add_* by tag in the reference order (11 55
//                54 38 44 40 59 453 60), reports read by tag
// FIX fixes no order for body fields outside groups; the venue validates
// both. Running both in one bench shows what the typed layer costs at the
// lab's boundary.
//
// Cross-thread send (tx variants paced-ring*): queue_new_order, on a
// producer thread, builds the order's body (the same typed writer) into the
// engine's SendRing; send_queued, on the lane's thread, is
// Engine::send_queued: the header, the journal and send() as above.
#include <algorithm>
#include <chrono>
#include <memory>
#include <span>
#include <string>
#include <thread>

#include "hft/codec/encoder.hpp"
#include "hft/codec/types.hpp"
#include "hft/core/clock.hpp"
#include "hft/core/object_pool.hpp"
#include "hft/engine/config.hpp"
#include "hft/engine/engine.hpp"
#include "hft/engine/log.hpp"
#include "hft/engine/send_ring.hpp"
#include "hft/lab/engine_adapter.hpp"
#include "hft/session/session.hpp"
#include "hft_bench/sp2.hpp"
#include "lane_support.hpp"

namespace hft::lab::lanes {
namespace {

namespace tag = codec::tag;

enum class Encoding : std::uint8_t { kTyped, kTags };

/// The reference order's body through the typed writer: the required
/// fields first, then the rest in the reference order.
void write_typed_order(codec::MessageWriter& w, codec::TimestampFormatter& f, const Order& order) noexcept {
  char id[24];
  sp2::NewOrderSingleWriter nos(w, f, {id, codec::format_uint(id, order.cl_ord_id)}, sp2::Side::kBuy,
                                core::realtime_ns(), sp2::OrdType::kLimit);
  nos.instrument().symbol(ref::kSymbol);
  nos.order_qty_data().order_qty(codec::Decimal{order.quantity, 0});
  nos.price(codec::Decimal{order.price, 0}).time_in_force(sp2::TimeInForce::kDay);
  auto parties = nos.parties().no_party_ids(2);
  parties.add("PARTY1").party_id_source(sp2::PartyIDSource::kProprietary).party_role(sp2::PartyRole::kExecutingFirm);
  parties.add("PARTY2").party_id_source(sp2::PartyIDSource::kProprietary).party_role(sp2::PartyRole::kClientId);
}

/// Counts ExecutionReports and remembers the ClOrdID index of the first one
/// seen since the last poll.
class ClientApplication final : public session::Application {
 public:
  explicit ClientApplication(Encoding encoding) : encoding_(encoding) {}
  void on_logon(session::Session&) noexcept override { logged_on_ = true; }
  void on_logout(session::Session&) noexcept override { logged_on_ = false; }
  session::Decision to_app(session::Session&, std::span<const char> message, bool) noexcept override {
    last_size_ = message.size();
    return session::Decision::accept();
  }
  session::Decision from_app(session::Session&, const codec::MessageView& message) noexcept override {
    if (encoding_ == Encoding::kTyped) return sp2::crack(message, *this);
    if (message.msg_type() != "8") return on_unhandled(message);
    std::uint64_t index = 0;
    if (!message.get_uint(tag::kClOrdID, index)) ++bad_;
    count_report(index);
    return session::Decision::accept();
  }
  // The cracker's handlers (Encoding::kTyped).
  session::Decision on_message(const sp2::ExecutionReportReader& report) noexcept {
    const auto id = report.cl_ord_id();
    std::uint64_t index = 0;
    if (!id || !codec::parse_uint(*id, index)) ++bad_;
    count_report(index);
    return session::Decision::accept();
  }
  session::Decision on_unhandled(const codec::MessageView&) noexcept {
    ++other_;
    return session::Decision::accept();
  }
  void count_report(std::uint64_t index) noexcept {
    if (reports_this_poll_ == 0) first_index_ = index;
    ++reports_this_poll_;
    ++reports_;
  }

  bool logged_on_ = false;
  std::size_t last_size_ = 0;  // wire bytes of the last application message sent
  std::uint32_t reports_this_poll_ = 0;
  std::uint64_t first_index_ = 0;
  std::uint64_t reports_ = 0;
  std::uint64_t bad_ = 0;
  std::uint64_t other_ = 0;
  Encoding encoding_;
};

class LibhftAdapter final : public EngineAdapter {
 public:
  explicit LibhftAdapter(Encoding encoding) : app_(encoding), pool_(kPoolSize), encoding_(encoding) {}

  std::string_view name() const noexcept override { return encoding_ == Encoding::kTyped ? "libhft" : "libhft-tags"; }
  std::string version() const override {
    return std::string("libhft (this build): Engine, PollMode=busy, journal per session, orders ") +
           (encoding_ == Encoding::kTyped ? "through the typed FIX 5.0SP2 NewOrderSingleWriter"
                                          : "by tag in the reference field order");
  }

  Expected<void> start(const LaneConfig& config) override {
    const std::string journal = journal_keys(config.segment_size, config.prealloc);
    store_root_ = config.run_dir / "client-store";
    const std::string dir = spec_dir();
    std::string text = "# hft-bench libhft client: written per run\n[DEFAULT]\nNonStopSession=Y\n";
    text += "PollMode=busy\nIdleStrategy=busy-spin\n";
    // The journal helper thread (segment preparation, pre-faulting, flushes)
    // must not share the measured client's core: when it woke there, the
    // scheduler gave it the core for 20-37 ms at each rotation (seen in the
    // tx series). With --server-core given it goes to the venue's core; on a
    // host with more cores, pin both away from the hot ones.
    if (config.server_core >= 0 && config.server_core != config.client_core) {
      text += "JournalThreadCore=" + std::to_string(config.server_core) + "\n";
    }
    text += "FileStorePath=" + store_root_.string() + "\n" + journal;
    text += "\n[SESSION]\nConnectionType=initiator\nBeginString=" + std::string(ref::kBeginString) + "\n";
    text += "SenderCompID=" + std::string(ref::kSender) + "\nTargetCompID=" + std::string(ref::kTarget) + "\n";
    text += "SenderSubID=" + std::string(ref::kSenderSub) + "\nTargetSubID=" + std::string(ref::kTargetSub) + "\n";
    text += "DefaultApplVerID=" + std::string(ref::kApplVerID) + "\n";
    text += "SocketConnectHost=" + config.venue_host + "\nSocketConnectPort=" + std::to_string(config.venue_port) + "\n";
    text += "HeartBtInt=30\nReconnectInterval=1\nResetOnLogon=Y\n";
    if (const TlsFiles tls = tls_files(config); tls) {
      text += "SocketUseSSL=Y\nCertificationAuthoritiesFile=" + tls.ca + "\nClientCertificateFile=" + tls.cert +
              "\nClientCertificateKeyFile=" + tls.key + "\n";
    }
    // Large queues on both ends: an unpaced sender outruns the venue for a
    // while; the engine must queue, never drop the connection.
    text += "SocketSendBufferSize=4M\nSendBufferSize=16M\n";
    text += "TransportDataDictionary=" + dir + "/FIXT11.xml\nAppDataDictionary=" + dir + "/FIX50SP2.xml\n";
    auto cfg = engine::Config::parse(text, (config.run_dir / "client.cfg").string());
    if (!cfg) return Error{"libhft client config: " + cfg.error().message};
    logger_ = std::make_unique<engine::StreamLogger>(session::LogLevel::kWarn);
    auto created = engine::Engine::create(*cfg, app_, logger_.get());
    if (!created) return Error{"libhft: " + created.error().message};
    engine_ = std::move(*created);
    session_ = &engine_->session(0);
    // The cross-thread variants' ring (a few hundred KB, faulted in now).
    ring_ = &engine_->add_send_ring(
        engine::SendRingOptions{.capacity = kRingCapacity, .max_body = 512, .drain_batch = kRingCapacity});
    handle_ = *engine_->handle_of(session_->id());
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!session_->is_logged_on()) {
      (void)engine_->poll();
      if (std::chrono::steady_clock::now() > deadline) {
        return Error{"libhft: no Logon answer from " + config.venue_host + ":" + std::to_string(config.venue_port) +
                     " within 10 s"};
      }
    }
    return {};
  }

  bool send_new_order(std::uint64_t i) noexcept override {
    const std::uint64_t t0 = tsc_now();
    Order* order = pool_.acquire();
    if (order == nullptr) return false;
    order->cl_ord_id = i;
    order->price = ref::kPrice;
    order->quantity = ref::kOrderQty;
    session::OutgoingMessage& m = session_->begin_app("D", engine::Engine::now());
    const std::uint64_t t1 = tsc_now();
    if (encoding_ == Encoding::kTyped) {
      write_typed_order(m.writer(), formatter_, *order);
    } else {
      m.add_uint(tag::kClOrdID, order->cl_ord_id);
      m.add(tag::kSymbol, ref::kSymbol);
      m.add_char(tag::kSide, ref::kSide);
      m.add_int(tag::kOrderQty, order->quantity);
      m.add_int(tag::kPrice, order->price);
      m.add_char(tag::kOrdType, ref::kOrdType);
      m.add_char(tag::kTimeInForce, ref::kTimeInForce);
      m.add_raw(ref::kParties);
      m.writer().add_timestamp(tag::kTransactTime, core::realtime_ns(), codec::TimePrecision::kMillis, formatter_);
    }
    const std::uint64_t t2 = tsc_now();
    const session::SendStatus status = session_->send(m);
    pool_.release(order);
    const std::uint64_t t3 = tsc_now();
    stages_[0] = t1 - t0;
    stages_[1] = t2 - t1;
    stages_[2] = t3 - t2;
    if (status != session::SendStatus::kOk) {
      ++failures_;
      return false;
    }
    return true;
  }

  std::span<const std::string_view> stage_names() const noexcept override { return kStageNames; }
  std::span<const std::uint64_t> last_stages() const noexcept override { return stages_; }

  bool supports_queued_send() const noexcept override { return true; }

  bool queue_new_order(std::uint64_t i) noexcept override {
    producer_order_.cl_ord_id = i;
    const engine::QueueStatus q = ring_->send(handle_, "D", [&](codec::MessageWriter& w) {
      if (encoding_ == Encoding::kTyped) {
        write_typed_order(w, producer_formatter_, producer_order_);
      } else {
        ref::write_order_body(w, i, core::realtime_ns(), producer_formatter_);
      }
    });
    return q == engine::QueueStatus::kOk;
  }

  std::uint32_t send_queued(std::uint64_t& failed) noexcept override {
    const std::uint64_t failed_before = ring_->stats().failed;
    const int n = engine_->send_queued();
    failed += ring_->stats().failed - failed_before;
    return static_cast<std::uint32_t>(n);
  }

  std::uint32_t poll_execution_reports(std::uint64_t& first_index) noexcept override {
    app_.reports_this_poll_ = 0;
    // Sockets only: what the producer queued is sent by send_queued, where
    // the paced-ring loop times it.
    (void)engine_->poll_sockets();
    if (app_.reports_this_poll_ != 0) first_index = app_.first_index_;
    return app_.reports_this_poll_;
  }

  std::size_t last_order_size() const noexcept override { return app_.last_size_; }

  Expected<std::filesystem::path> stop() override {
    if (!engine_) return std::filesystem::path{};
    engine_->logout_all(2'000'000'000);
    const engine::EngineStats stats = engine_->stats();
    const std::string session_dir = std::string(ref::kBeginString) + "-" + std::string(ref::kSender) + "-" +
                                    std::string(ref::kTarget);
    engine_.reset();  // closes the store: the journal is flushed per policy
    if (stats.send_overflows != 0) {
      return Error{"libhft: the engine's send queue overflowed " + std::to_string(stats.send_overflows) +
                   " time(s) (the venue did not drain the socket)"};
    }
    if (app_.bad_ != 0) return Error{"libhft: " + std::to_string(app_.bad_) + " ExecutionReports without a ClOrdID"};
    return store_root_ / session_dir;
  }

 private:
  static constexpr std::size_t kPoolSize = 64;
  static constexpr std::size_t kRingCapacity = 1024;
  // begin_app: order from the pool, journal claim, header (34 52 ...);
  // body: the fields (60 from a clock read); send_call: Session::send
  // (BodyLength, CheckSum, journal commit, send()).
  static constexpr std::string_view kStageNames[] = {"begin_app", "body", "send_call"};
  std::uint64_t stages_[3] = {};
  ClientApplication app_;
  std::unique_ptr<engine::StreamLogger> logger_;
  std::unique_ptr<engine::Engine> engine_;
  session::Session* session_ = nullptr;
  core::ObjectPool<Order> pool_;
  codec::TimestampFormatter formatter_;
  std::filesystem::path store_root_;
  std::uint64_t failures_ = 0;
  Encoding encoding_;
  engine::SendRing* ring_ = nullptr;
  engine::SessionHandle handle_;
  // The producer thread's own (queue_new_order).
  Order producer_order_;
  codec::TimestampFormatter producer_formatter_;
};

EngineInfo make_libhft_engine() {
  return EngineInfo{
      "libhft", true, [] { return std::unique_ptr<EngineAdapter>(new LibhftAdapter(Encoding::kTyped)); }, {}, {}, true};
}
EngineInfo make_libhft_tags_engine() {
  return EngineInfo{
      "libhft-tags", true, [] { return std::unique_ptr<EngineAdapter>(new LibhftAdapter(Encoding::kTags)); }, {}, {}, true};
}

}  // namespace
HFT_LAB_REGISTER_ENGINE(make_libhft_engine);
HFT_LAB_REGISTER_ENGINE(make_libhft_tags_engine);
}  // namespace hft::lab::lanes
