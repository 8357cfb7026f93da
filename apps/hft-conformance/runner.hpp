// Executes one conformance script against an acceptor over TCP.
#pragma once

#include <chrono>
#include <cstdint>
#include <ostream>
#include <string>

#include "compare.hpp"
#include "script.hpp"

namespace hft::conformance {

struct RunnerOptions {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
  /// Initiator-side scripts: a listening socket (listen_on()); eCONNECT
  /// accepts the engine's connection on it, iCONNECT is an error. -1: the
  /// runner connects to host:port (acceptor-side scripts).
  int listen_fd = -1;
  /// Wait for the first eCONNECT of a run (the engine under test may still
  /// be starting); later ones wait timeout_ms plus this run's reconnect
  /// allowance, reconnect_ms.
  int first_connect_ms = 60000;
  int reconnect_ms = 5000;
  /// Wait for each E line, eDISCONNECT and the TCP connect.
  int timeout_ms = 5000;
  /// Wait for timer-driven expectations (a Heartbeat without TestReqID, a
  /// TestRequest, the disconnect after an unanswered TestRequest). 0 derives
  /// it from the HeartBtInt of the connection's Logon: 2.5 x HeartBtInt + 2 s,
  /// never less than timeout_ms.
  int heartbeat_timeout_ms = 0;
  /// After the driver closes a connection (iDISCONNECT, end of script), how
  /// long to wait for the acceptor to close its side, so the next script
  /// does not find the session still logged on.
  int close_wait_ms = 2000;
  const FieldPatterns* patterns = nullptr;
  /// When set, every executed line and every received message is written here.
  std::ostream* trace = nullptr;
};

struct ScriptResult {
  bool passed = false;
  int line = 0;           ///< failing line (0 when passed)
  std::string reason;     ///< first difference or error
  std::string expected;   ///< expected message, SOH shown as |
  std::string received;   ///< received bytes, SOH shown as |
  std::chrono::milliseconds elapsed{0};
  /// The acceptor refused or ignored a connect for the whole timeout: the
  /// caller may stop running further scripts.
  bool unreachable = false;
};

/// A listening TCP socket on host:port (port 0: any free port), for
/// RunnerOptions::listen_fd; the port bound is stored in `bound`. -1 and
/// `error` set if it fails.
[[nodiscard]] int listen_on(const std::string& host, std::uint16_t port, std::uint16_t& bound, std::string& error);

/// Runs the script on fresh connections and closes every connection it
/// opened (or accepted) before returning.
[[nodiscard]] ScriptResult run_script(const Script& script, const RunnerOptions& options);

/// How many eCONNECTs have been accepted in this process: the first of a
/// run waits first_connect_ms.
[[nodiscard]] int connections_accepted() noexcept;

}  // namespace hft::conformance
