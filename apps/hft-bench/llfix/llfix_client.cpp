// C++17: llfix 1.0.5 is a C++17 header-only library (its own builds use
// CMAKE_CXX_STANDARD 17). Compiled with LLFIX_ONLY_ERROR_AND_FATAL_LOGS, as
// llfix's benchmark is: debug and info log calls (which build strings) are
// not in the binary.
#include "llfix_client.hpp"

#include <llfix/core/cpu/simd_capabilities.h>
#include <llfix/core/utilities/logger.h>
#include <llfix/core/utilities/object_cache.h>
#include <llfix/core/utilities/tcp_connector.h>
#include <llfix/engine.h>
#include <llfix/fix_client.h>
#include <llfix/fix_client_settings.h>
#include <llfix/fix_session_settings.h>

#include <chrono>
#include <cstring>
#include <thread>

namespace hft_bench_llfix {
namespace {

/// The order object of llfix's benchmark, reduced to the three fields its
/// send loop sets.
struct Order {
  std::string symbol;
  std::uint32_t remaining_qty = 0;
  std::uint64_t price = 0;
};

constexpr std::uint32_t kClOrdID = 11;

/// llfix logs ERROR and FATAL lines only (see the file comment). Its logger
/// is a process-wide singleton that can be opened once and writes through a
/// null buffer until it is: open it on stderr before the first client.
bool open_llfix_log(std::string& error) {
  static const bool opened =
      llfix::Logger<>::get_instance().initialise("/dev/stderr", llfix::LogLevel::LEVEL_ERROR, /*is_async=*/false);
  if (!opened) error = "llfix: its logger could not open /dev/stderr";
  return opened;
}

class Session final : public llfix::FixClient<llfix::TCPConnector> {
 public:
  Session() {
    // As llfix's benchmark client: the parties group of ExecutionReports.
    specify_repeating_group("8", 453, 448, 447, 452);
  }

  void on_execution_report(const llfix::IncomingFixMessage* message) override {
    std::uint64_t index = 0;
    if (message->has_tag(kClOrdID) && message->is_tag_value_numeric(kClOrdID)) {
      index = message->get_tag_value_as<std::uint64_t>(kClOrdID);
    } else {
      ++bad_reports;
    }
    if (this_poll == 0) first_index = index;
    ++this_poll;
  }

  void on_logon_reject(const llfix::IncomingFixMessage*) override { logon_rejected = true; }

  /// The session's encode buffer (the last message encoded).
  const char* encode_buffer() { return get_session()->get_tx_encode_buffer(); }

  std::uint32_t this_poll = 0;
  std::uint64_t first_index = 0;
  std::uint64_t bad_reports = 0;
  bool logon_rejected = false;
};

class Client final : public LlfixClient {
 public:
  explicit Client(const LlfixSettings& s) : settings_(s) {}

  bool init(std::string& error) {
    if (!open_llfix_log(error)) return false;
    // The benchmark's Order keeps its symbol in a std::string: the
    // reference symbol must fit the string's own buffer so that setting it
    // per call never allocates.
    if (std::strlen(kSymbol) > std::string().capacity()) {
      error = "llfix adapter: the symbol does not fit std::string's inline buffer";
      return false;
    }
    if (!orders_.create(kOrderCacheSize)) {
      error = "llfix: ObjectCache<Order>::create failed";
      return false;
    }

    llfix::FixClientSettings client;
    client.primary_address = settings_.host;
    client.primary_port = settings_.port;
    client.socket_tx_size = settings_.socket_buffer_bytes;
    client.socket_rx_size = settings_.socket_buffer_bytes;
    // A zero select() timeout: each process() looks at the socket and
    // returns, as libhft's busy poll and QuickFIX's poll(0.0) do.
    client.async_io_timeout_nanoseconds = 0;

    llfix::FixSessionSettings session;
    session.begin_string = "FIXT.1.1";
    session.default_app_ver_id = settings_.default_appl_ver_id;
    session.sender_comp_id = settings_.sender;
    session.target_comp_id = settings_.target;
    session.additional_static_header_tags = "50=" + settings_.sender_sub + ",57=" + settings_.target_sub;
    session.str_timestamp_subseconds_precision = "MILLI";
    session.timestamp_subseconds_precision = llfix::VDSO::SubsecondPrecision::MILLISECONDS;
    // As llfix's benchmark (enable_simd_avx2=true), where the CPU has it.
    session.enable_simd_avx2 = llfix::SIMDCapabilities::instance().supports_simd_avx2();
    session.set_heartbeat_interval_in_nanoseconds(settings_.heartbeat_seconds);
    session.logon_reset_sequence_numbers = true;  // 141=Y, as ResetOnLogon=Y in the other clients
    session.replay_messages_on_incoming_resend_request = false;
    session.throttle_limit = 0;
    session.sequence_store_file_path = settings_.store_dir + "/sequence.store";
    session.outgoing_message_serialisation_path = settings_.store_dir + "/outgoing";
    session.incoming_message_serialisation_path = settings_.store_dir + "/incoming";
    session.max_serialised_file_size = static_cast<std::size_t>(settings_.max_serialised_file_size);
    session.initialise_derived_settings();
    if (!session.validate()) {
      error = "llfix session settings: " + session.validation_error;
      return false;
    }
    if (!client.validate()) {
      error = "llfix client settings: " + client.validation_error;
      return false;
    }
    if (!session_.create("HFT_BENCH_CLIENT", client, "HFT_BENCH_SESSION", session)) {
      error = "llfix: FixClient::create failed (sequence store or journals under " + settings_.store_dir +
              "; see its log on stderr)";
      return false;
    }
    return true;
  }

  bool start(std::string& error, int timeout_ms) override {
    if (!session_.connect()) {
      error = "llfix: cannot connect to " + settings_.host + ":" + std::to_string(settings_.port) +
              " or send the Logon";
      return false;
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (session_.get_session()->get_state() != llfix::SessionState::LOGGED_ON) {
      session_.process();
      if (session_.logon_rejected) {
        error = "llfix: the venue rejected the Logon";
        return false;
      }
      if (std::chrono::steady_clock::now() > deadline) {
        error = "llfix: no Logon answer within " + std::to_string(timeout_ms) + " ms";
        return false;
      }
    }
    return true;
  }

  bool send_new_order(std::uint64_t i) noexcept override {
    try {
      Order* order = orders_.allocate();
      if (order == nullptr) return false;
      order->symbol = symbol_;
      order->remaining_qty = 10;
      order->price = 10000;

      llfix::OutgoingFixMessage* message = session_.outgoing_message_instance();
      message->set_msg_type('D');
      message->set_tag(11, i);
      message->set_tag(55, order->symbol);
      message->set_tag(54, '1');
      message->set_tag(38, order->remaining_qty);
      message->set_tag(44, order->price);
      message->set_tag(40, '2');
      message->set_tag(59, '0');
      message->set_tag(453, 2);
      message->set_tag(448, "PARTY1");
      message->set_tag(447, 'D');
      message->set_tag(452, 1);
      message->set_tag(448, "PARTY2");
      message->set_tag(447, 'D');
      message->set_tag(452, 3);
      message->set_timestamp_tag(60);
      const bool sent = session_.send_outgoing_message(message);
      // llfix's cache only hands objects out (and doubles when empty); the
      // order is given back so that the cache never grows.
      orders_.decrement_pointer();
      return sent;
    } catch (...) {
      ++exceptions_;
      return false;
    }
  }

  std::uint32_t poll(std::uint64_t& first_index) noexcept override {
    session_.this_poll = 0;
    try {
      session_.process();
    } catch (...) {
      ++exceptions_;
    }
    if (session_.this_poll != 0) first_index = session_.first_index;
    return session_.this_poll;
  }

  std::size_t last_order_size() const noexcept override {
    // "8=FIXT.1.1^9=<n>^" then n bytes of body and "10=ddd^".
    const char* b = const_cast<Session&>(session_).encode_buffer();
    constexpr std::string_view kPrefix = "8=FIXT.1.1\x01" "9=";
    if (b == nullptr || std::memcmp(b, kPrefix.data(), kPrefix.size()) != 0) return 0;
    std::size_t at = kPrefix.size();
    std::size_t body = 0;
    while (at < 32 && b[at] >= '0' && b[at] <= '9') body = body * 10 + static_cast<std::size_t>(b[at++] - '0');
    if (b[at] != '\x01' || std::memcmp(b + at + 1, "35=D\x01", 5) != 0) return 0;
    return at + 1 + body + 7;
  }

  bool stop(std::string& error) override {
    const bool logged_on = session_.get_session()->get_state() == llfix::SessionState::LOGGED_ON;
    session_.shutdown(/*graceful_shutdown=*/true);
    if (!logged_on) {
      error = "llfix: the session was not logged on at the end of the run (state lost before logout)";
      return false;
    }
    return true;
  }

  std::string outgoing_dir() const override { return settings_.store_dir + "/outgoing"; }

  std::uint64_t failures() const noexcept override { return session_.bad_reports + exceptions_; }

 private:
  static constexpr const char* kSymbol = "NOKIA.HE";
  static constexpr std::size_t kOrderCacheSize = 64;
  LlfixSettings settings_;
  Session session_;
  llfix::ObjectCache<Order> orders_;
  const std::string symbol_{kSymbol};
  std::uint64_t exceptions_ = 0;
};

}  // namespace

std::string describe_llfix() {
#ifdef HFT_LLFIX_COMMIT
  const std::string commit = std::string(" (commit ") + HFT_LLFIX_COMMIT + ")";
#else
  const std::string commit;
#endif
  return "llfix " + llfix::Engine::get_version().to_string() + commit +
         ", header-only, FixClient<TCPConnector> polled by the lane thread (process()), CheckSum " +
         (llfix::SIMDCapabilities::instance().supports_simd_avx2() ? "AVX2" : "scalar");
}

std::unique_ptr<LlfixClient> make_llfix_client(const LlfixSettings& settings, std::string& error) {
  std::unique_ptr<Client> c(new Client(settings));
  if (!c->init(error)) return nullptr;
  return std::unique_ptr<LlfixClient>(c.release());
}

}  // namespace hft_bench_llfix
