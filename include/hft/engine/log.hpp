// Session event logging sinks (not a message log: the journal holds the
// wire bytes). Lines: "2026-11-30T14:36:30.691Z INFO FIX.4.4:A->B text".
#pragma once

#include <cstdio>
#include <memory>
#include <mutex>
#include <string>

#include "hft/core/expected.hpp"
#include "hft/session/logger.hpp"

namespace hft::engine {

/// Writes session events to a FILE* (stderr or a file it opened), one line
/// each, flushed per line. Lines from several threads do not interleave.
class StreamLogger final : public session::Logger {
 public:
  /// Logs to stderr from `level` up.
  explicit StreamLogger(session::LogLevel level = session::LogLevel::kInfo) noexcept;
  /// Appends to `path` (created if missing). Error names the path and errno text.
  [[nodiscard]] static Expected<std::unique_ptr<StreamLogger>> open(const std::string& path,
                                                                    session::LogLevel level);
  ~StreamLogger() override;

  [[nodiscard]] bool enabled(session::LogLevel level) const noexcept override { return level >= level_; }
  void log(session::LogLevel level, const session::SessionID& session, std::string_view text) noexcept override;
  /// Engine-level events that belong to no session.
  void log(session::LogLevel level, std::string_view text) noexcept;

 private:
  std::FILE* file_ = stderr;
  bool owned_ = false;
  session::LogLevel level_;
  std::mutex mutex_;
};

/// "debug" / "info" / "warn" / "error" (any case); false if unknown.
[[nodiscard]] bool parse_log_level(std::string_view text, session::LogLevel& out) noexcept;

}  // namespace hft::engine
