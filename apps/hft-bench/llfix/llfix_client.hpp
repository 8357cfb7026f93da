// An llfix 1.0.5 FIX client (FixClient<TCPConnector>, the initiator of
// llfix's networked_client_tx benchmark) driven by the caller's thread,
// behind an interface free of llfix types, so the C++20 lab code can use it
// while only llfix_client.cpp is compiled as C++17 against llfix's headers.
//
// Boundary of send_new_order (llfix's own benchmark's): take an order from
// an llfix ObjectCache and set three fields (symbol, quantity, price); take
// the session's cached OutgoingFixMessage and set 35 and the body fields in
// the reference order (11 from `i`, 453 with two parties), 60 with
// set_timestamp_tag (the one clock read 52 also uses); send_outgoing_message
// encodes header (34, 49, 52, 56, then 50 and 57 as static header tags),
// BodyLength and CheckSum into the session's encode buffer, send()s it
// (busy-retried until every byte is accepted), raises the outgoing sequence
// number, appends the bytes to the memory-mapped outgoing journal
// (a second clock read for its timestamp) and notes the send time (a third).
// The order goes back to the cache before returning.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace hft_bench_llfix {

struct LlfixSettings {
  std::string host = "127.0.0.1";
  int port = 0;
  std::string store_dir;  ///< sequence store, outgoing/ and incoming/ journals (created)
  std::uint64_t max_serialised_file_size = 64ULL << 20;  ///< journal file size (multiple of 4096)
  std::string sender = "CLIENT1";
  std::string target = "EXECUTOR";
  std::string sender_sub = "SNDR_SUB";
  std::string target_sub = "SRVR_SUB";
  std::string default_appl_ver_id = "9";  ///< 1137 in the Logon: FIX.5.0SP2
  int heartbeat_seconds = 30;
  int socket_buffer_bytes = 4 << 20;  ///< SO_SNDBUF and SO_RCVBUF asked for (the kernel caps them)
};

/// See the file comment. Every call after start() must come from one thread.
class LlfixClient {
 public:
  virtual ~LlfixClient() = default;
  /// Connects and logs on (processing on this thread); false with `error`
  /// set when the Logon is refused or unanswered within timeout_ms.
  virtual bool start(std::string& error, int timeout_ms) = 0;
  /// The tx boundary (file comment). False if llfix's send() failed.
  virtual bool send_new_order(std::uint64_t i) noexcept = 0;
  /// One FixClient::process(): receive, parse, validate and dispatch what
  /// arrived, answer session messages. Returns the ExecutionReports
  /// dispatched and the ClOrdID of the first in first_index.
  virtual std::uint32_t poll(std::uint64_t& first_index) noexcept = 0;
  /// Bytes of the last order as encoded (0 if the encode buffer no longer
  /// holds an order).
  virtual std::size_t last_order_size() const noexcept = 0;
  /// Logs out (llfix waits up to logout_timeout_seconds for the answer) and
  /// closes. False with `error` when the session was not logged on. The
  /// journals are flushed and unmapped when the client is destroyed.
  virtual bool stop(std::string& error) = 0;
  /// Directory of the outgoing journal files (<n>.bin).
  virtual std::string outgoing_dir() const = 0;
  /// ExecutionReports without a numeric ClOrdID, exceptions inside the
  /// timed calls: failures otherwise silent.
  virtual std::uint64_t failures() const noexcept = 0;
};

/// "llfix 1.0.5 (commit ...), FixClient<TCPConnector> ..." for the report:
/// the version llfix's headers declare, the commit of the tree built
/// against (its COMMIT file, when there is one) and how it is driven.
std::string describe_llfix();

/// Builds a client (not connected). Null with `error` set if llfix refused
/// the settings (its validation message).
std::unique_ptr<LlfixClient> make_llfix_client(const LlfixSettings& settings, std::string& error);

}  // namespace hft_bench_llfix
