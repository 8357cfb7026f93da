// The engine's event log: the one session::Logger the engine's sessions and
// the engine itself log to, on the engine thread. It filters by LogLevel,
// limits the WARN lines a counterparty can cause (garbled input, gaps,
// rejects: one line per message it sends) per session, and hands each line
// to the application's logger (if any) and to the engine's AsyncLogger
// (LogFile, FileLogPath, standard error).
//
// Rate limit: at most `rate_limit` WARN lines per session in a one-second
// window (the window opens with the first WARN line after the previous one
// closed), so a burst of up to `rate_limit` lines passes at once. Lines over
// the limit are counted, and "K similar lines suppressed" is logged (WARN,
// for that session) when the next window opens or when flush_suppressed()
// finds the window over (the engine calls it from its timer). INFO, ERROR and
// DEBUG lines and engine-level lines are not limited (engine-level refusals
// have their own per-interval summaries).
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "hft/engine/async_logger.hpp"
#include "hft/session/logger.hpp"

namespace hft::engine {

struct EventLogOptions {
  /// Least severe level logged at all, as an int (kError + 1: nothing).
  int min_level = static_cast<int>(session::LogLevel::kInfo);
  /// Least severe level handed to the application's logger.
  int user_min_level = 0;
  /// WARN lines per session per second; 0: unlimited.
  std::uint32_t rate_limit = 100;
};

/// Counters (engine thread).
struct EventLogStats {
  std::uint64_t suppressed = 0;  ///< WARN lines held back by the rate limit
  std::uint64_t summaries = 0;   ///< "K similar lines suppressed" lines logged
};

class EventLog final : public session::Logger {
 public:
  static constexpr std::int64_t kWindowNs = 1'000'000'000;

  /// `sessions`: the sessions that are rate limited, in the order of
  /// `own`'s options (their index there). `user` and `own` may be null.
  EventLog(session::Logger* user, std::unique_ptr<AsyncLogger> own, std::vector<session::SessionID> sessions,
           const EventLogOptions& options);
  ~EventLog() override;

  /// Remembers where a session keeps its SessionID, so that its lines are
  /// found by address (a string comparison confirms it). Before logging.
  void bind(const session::SessionID& id);
  /// A session created at run time (an AcceptorTemplate's, Engine::add_session):
  /// rate limited like the others; its lines go to the engine's files (it
  /// has no per-session file). A session seen before keeps its window.
  /// Engine thread, not while logging.
  void add_session(const session::SessionID& id);

  [[nodiscard]] bool enabled(session::LogLevel level) const noexcept override;
  /// No allocation, lock or exception here; the application's logger and
  /// the AsyncLogger then do what they do. Engine thread only (the rate
  /// limit's state is not shared).
  void log(session::LogLevel level, const session::SessionID& session, std::string_view text) noexcept override;
  /// Logs the summaries of the windows that are over at `mono_ns`
  /// (CLOCK_MONOTONIC; INT64_MAX: all).
  void flush_suppressed(std::int64_t mono_ns) noexcept;

  /// LogLevel at run time (as EventLogOptions::min_level): for the
  /// application's logger and the engine's files alike. Engine thread.
  void set_min_level(int level) noexcept;
  [[nodiscard]] int min_level() const noexcept { return options_.min_level; }

  [[nodiscard]] AsyncLogger* async() noexcept { return own_.get(); }
  [[nodiscard]] const EventLogStats& stats() const noexcept { return stats_; }

 private:
  struct Window {
    std::int64_t start_ns = INT64_MIN / 2;
    std::uint32_t count = 0;
    bool pending = false;  // in pending_
    std::uint64_t suppressed = 0;
  };
  [[nodiscard]] std::uint32_t index_of(const session::SessionID& id) const noexcept;
  void forward(session::LogLevel level, std::uint32_t index, const session::SessionID& id,
               std::string_view text) noexcept;
  void summarize(std::uint32_t index, Window& w) noexcept;

  session::Logger* user_;
  std::unique_ptr<AsyncLogger> own_;
  std::vector<session::SessionID> sessions_;
  std::size_t async_sessions_ = 0;  // the first ones, known to own_ by index
  EventLogOptions options_;
  std::unordered_map<const session::SessionID*, std::uint32_t> by_address_;
  std::unordered_map<session::SessionID, std::uint32_t> by_value_;
  std::vector<Window> windows_;
  std::vector<std::uint32_t> pending_;  // sessions with a window holding suppressed lines
  EventLogStats stats_{};
};

}  // namespace hft::engine
