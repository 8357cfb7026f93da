#include "hft/engine/event_log.hpp"

#include <algorithm>
#include <charconv>

#include "hft/core/clock.hpp"

namespace hft::engine {

EventLog::EventLog(session::Logger* user, std::unique_ptr<AsyncLogger> own, std::vector<session::SessionID> sessions,
                   const EventLogOptions& options)
    : user_(user), own_(std::move(own)), sessions_(std::move(sessions)), options_(options) {
  for (std::size_t i = 0; i < sessions_.size(); ++i) by_value_.emplace(sessions_[i], static_cast<std::uint32_t>(i));
  windows_.resize(sessions_.size());
  pending_.reserve(sessions_.size());
  async_sessions_ = sessions_.size();
}

void EventLog::add_session(const session::SessionID& id) {
  if (by_value_.contains(id)) return;
  by_value_.emplace(id, static_cast<std::uint32_t>(sessions_.size()));
  sessions_.push_back(id);
  windows_.emplace_back();
  pending_.reserve(sessions_.size());
}

EventLog::~EventLog() { flush_suppressed(INT64_MAX); }

void EventLog::bind(const session::SessionID& id) {
  if (const auto it = by_value_.find(id); it != by_value_.end()) by_address_[&id] = it->second;
}

bool EventLog::enabled(session::LogLevel level) const noexcept {
  if (static_cast<int>(level) < options_.min_level) return false;
  return (user_ != nullptr && static_cast<int>(level) >= options_.user_min_level && user_->enabled(level)) ||
         (own_ != nullptr && own_->enabled(level));
}

void EventLog::set_min_level(int level) noexcept {
  options_.min_level = level;
  options_.user_min_level = level;
  if (own_ != nullptr) own_->set_level(static_cast<session::LogLevel>(std::min(level, 3)));
}

std::uint32_t EventLog::index_of(const session::SessionID& id) const noexcept {
  if (const auto it = by_address_.find(&id); it != by_address_.end() && sessions_[it->second] == id) {
    return it->second;
  }
  const auto it = by_value_.find(id);
  return it == by_value_.end() ? AsyncLogger::kNamedIndex : it->second;
}

void EventLog::forward(session::LogLevel level, std::uint32_t index, const session::SessionID& id,
                       std::string_view text) noexcept {
  if (user_ != nullptr && static_cast<int>(level) >= options_.user_min_level && user_->enabled(level)) {
    user_->log(level, id, text);
  }
  if (own_ == nullptr) return;
  if (index < async_sessions_) own_->log_indexed(level, index, text);
  else own_->log(level, id, text);
}

void EventLog::log(session::LogLevel level, const session::SessionID& session, std::string_view text) noexcept {
  if (static_cast<int>(level) < options_.min_level) return;
  if (session.begin_string.empty()) {
    forward(level, AsyncLogger::kEngineIndex, session, text);
    return;
  }
  const std::uint32_t index = index_of(session);
  if (level == session::LogLevel::kWarn && options_.rate_limit != 0 && index < windows_.size()) {
    Window& w = windows_[index];
    const std::int64_t now = core::monotonic_ns();
    if (now - w.start_ns >= kWindowNs) {
      if (w.suppressed != 0) summarize(index, w);
      w.start_ns = now;
      w.count = 0;
    }
    if (w.count >= options_.rate_limit) {
      ++w.suppressed;
      ++stats_.suppressed;
      if (!w.pending) {
        w.pending = true;
        pending_.push_back(index);  // reserved for every session: never grows
      }
      return;
    }
    ++w.count;
  }
  forward(level, index, session, text);
}

void EventLog::summarize(std::uint32_t index, Window& w) noexcept {
  char line[96];
  auto r = std::to_chars(line, line + 24, w.suppressed);
  constexpr std::string_view kText = " similar lines suppressed (LogRateLimit ";
  std::copy(kText.begin(), kText.end(), r.ptr);
  r = std::to_chars(r.ptr + kText.size(), line + sizeof line - 16, options_.rate_limit);
  constexpr std::string_view kTail = " WARN lines per second)";
  std::copy(kTail.begin(), kTail.end(), r.ptr);
  const std::size_t n = static_cast<std::size_t>(r.ptr - line) + kTail.size();
  w.suppressed = 0;
  ++stats_.summaries;
  forward(session::LogLevel::kWarn, index, sessions_[index], std::string_view(line, n));
}

void EventLog::flush_suppressed(std::int64_t mono_ns) noexcept {
  for (std::size_t i = 0; i < pending_.size();) {
    const std::uint32_t index = pending_[i];
    Window& w = windows_[index];
    if (w.suppressed != 0 && mono_ns != INT64_MAX && mono_ns - w.start_ns < kWindowNs) {
      ++i;
      continue;
    }
    if (w.suppressed != 0) {
      summarize(index, w);
      // The summary opens a new window: lines flow again at once.
      w.start_ns = mono_ns == INT64_MAX ? w.start_ns : mono_ns;
      w.count = 0;
    }
    w.pending = false;
    pending_[i] = pending_.back();
    pending_.pop_back();
  }
}

}  // namespace hft::engine
