// Session event log: logon, logout, gaps, resends, rejects, timeouts. Not a
// message log (the journal holds the wire bytes). The engine provides file
// and stderr sinks; the session formats each line into a fixed buffer it
// owns, so logging never allocates on the session's side.
#pragma once

#include <cstdint>
#include <string_view>

#include "hft/session/session_id.hpp"

namespace hft::session {

enum class LogLevel : std::uint8_t {
  kDebug = 0,  ///< routine detail: resend batches, queued messages
  kInfo = 1,   ///< lifecycle: logon, logout, sequence resets
  kWarn = 2,   ///< counterparty errors: rejects sent, gaps, garbled input
  kError = 3,  ///< the session gave up: timeouts, disconnects on protocol errors
};

/// "DEBUG", "INFO", "WARN", "ERROR".
[[nodiscard]] std::string_view to_string(LogLevel level) noexcept;

/// Sink for session events. Called on the session's thread.
class Logger {
 public:
  virtual ~Logger() = default;
  /// Cheap filter checked before a line is formatted.
  [[nodiscard]] virtual bool enabled(LogLevel level) const noexcept { return level >= LogLevel::kInfo; }
  /// One event. `text` is valid only during the call.
  virtual void log(LogLevel level, const SessionID& session, std::string_view text) noexcept = 0;
};

/// Discards everything.
class NullLogger final : public Logger {
 public:
  [[nodiscard]] bool enabled(LogLevel) const noexcept override { return false; }
  void log(LogLevel, const SessionID&, std::string_view) noexcept override {}
};

}  // namespace hft::session
