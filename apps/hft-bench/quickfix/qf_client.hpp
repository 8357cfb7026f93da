// A QuickFIX 1.15 initiator driven by the caller's thread, behind an
// interface free of QuickFIX (and of C++20) types, so the C++20 lab code can
// use it while only qf_client.cpp is compiled as C++14.
//
// Boundary of send_new_order (the same as libhft's tx boundary): a
// prebuilt FIX50SP2::NewOrderSingle (FIXT.1.1 session, the LAB.md reference
// fields, 453 with two parties) gets ClOrdID and TransactTime (clock read)
// set, then Session::sendToTarget fills the header (34, 52: clock read),
// serialises it with BodyLength and CheckSum, persists it in the FileStore
// (QuickFIX's journal, under the run directory) and writes it to the socket.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace hft_bench_qf {

struct QfSettings {
  std::string host = "127.0.0.1";
  int port = 0;
  std::string store_dir;  ///< FileStorePath (created)
  std::string spec_dir;   ///< holds FIXT11.xml and FIX50SP2.xml
  std::string sender = "CLIENT1";
  std::string target = "EXECUTOR";
  std::string sender_sub = "SNDR_SUB";
  std::string target_sub = "SRVR_SUB";
  /// Non-empty: TLS through QuickFIX's SSLSocketInitiator with these PEM
  /// files (the venue verifies the client certificate; QuickFIX verifies
  /// the venue against the CA).
  std::string tls_ca, tls_cert, tls_key;
};

/// See the file comment. Every call after start() must come from one thread.
class QfClient {
 public:
  virtual ~QfClient() = default;
  /// Connects and logs on (polling on this thread); false with `error` set
  /// when there is no Logon answer within timeout_ms.
  virtual bool start(std::string& error, int timeout_ms) = 0;
  /// The tx boundary (file comment). False if QuickFIX refused or threw.
  virtual bool send_new_order(std::uint64_t i) noexcept = 0;
  /// One non-blocking poll of the socket; returns the ExecutionReports
  /// delivered (fromApp) and the ClOrdID of the first in first_index.
  virtual std::uint32_t poll(std::uint64_t& first_index) noexcept = 0;
  /// Bytes of the last order as sent.
  virtual std::size_t last_order_size() const noexcept = 0;
  /// Logs out (waiting up to 2 s for the answer) and stops.
  virtual bool stop(std::string& error) = 0;
  /// "QuickFIX 1.15.1 ..." for the report.
  virtual std::string version() const = 0;
  /// Exceptions QuickFIX threw inside the timed calls (a failure otherwise silent).
  virtual std::uint64_t exceptions() const noexcept = 0;
};

/// Builds a client (not connected). Null with `error` set if QuickFIX
/// refused the settings (the message names the key).
std::unique_ptr<QfClient> make_qf_client(const QfSettings& settings, std::string& error);

}  // namespace hft_bench_qf
