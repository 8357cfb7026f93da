#include "hft/engine/log.hpp"

#include <cerrno>
#include <cstring>
#include <ctime>

#include "hft/core/clock.hpp"

namespace hft::engine {

StreamLogger::StreamLogger(session::LogLevel level) noexcept : level_(level) {}

Expected<std::unique_ptr<StreamLogger>> StreamLogger::open(const std::string& path, session::LogLevel level) {
  std::FILE* f = std::fopen(path.c_str(), "a");
  if (f == nullptr) return Error{path + ": cannot open log file: " + std::strerror(errno)};
  auto logger = std::make_unique<StreamLogger>(level);
  logger->file_ = f;
  logger->owned_ = true;
  return logger;
}

StreamLogger::~StreamLogger() {
  if (owned_) std::fclose(file_);
}

namespace {
void stamp(char (&out)[32]) noexcept {
  const std::int64_t ns = core::realtime_ns();
  const std::time_t s = static_cast<std::time_t>(ns / 1'000'000'000);
  std::tm tm{};
  gmtime_r(&s, &tm);
  const std::size_t n = std::strftime(out, sizeof out, "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(out + n, sizeof out - n, ".%03dZ", static_cast<int>((ns / 1'000'000) % 1000));
}
}  // namespace

void StreamLogger::log(session::LogLevel level, const session::SessionID& session, std::string_view text) noexcept {
  if (!enabled(level)) return;
  if (session.begin_string.empty()) {  // an engine-level event
    log(level, text);
    return;
  }
  char ts[32];
  stamp(ts);
  const auto lv = session::to_string(level);
  std::lock_guard lock(mutex_);
  std::fprintf(file_, "%s %.*s %s:%s->%s %.*s\n", ts, static_cast<int>(lv.size()), lv.data(),
               session.begin_string.c_str(), session.sender_comp_id.c_str(), session.target_comp_id.c_str(),
               static_cast<int>(text.size()), text.data());
  std::fflush(file_);
}

void StreamLogger::log(session::LogLevel level, std::string_view text) noexcept {
  if (!enabled(level)) return;
  char ts[32];
  stamp(ts);
  const auto lv = session::to_string(level);
  std::lock_guard lock(mutex_);
  std::fprintf(file_, "%s %.*s engine %.*s\n", ts, static_cast<int>(lv.size()), lv.data(),
               static_cast<int>(text.size()), text.data());
  std::fflush(file_);
}

bool parse_log_level(std::string_view text, session::LogLevel& out) noexcept {
  auto eq = [&](const char* name) {
    if (text.size() != std::strlen(name)) return false;
    for (std::size_t i = 0; i < text.size(); ++i) {
      if (std::tolower(static_cast<unsigned char>(text[i])) != name[i]) return false;
    }
    return true;
  };
  if (eq("debug")) out = session::LogLevel::kDebug;
  else if (eq("info")) out = session::LogLevel::kInfo;
  else if (eq("warn") || eq("warning")) out = session::LogLevel::kWarn;
  else if (eq("error")) out = session::LogLevel::kError;
  else return false;
  return true;
}

}  // namespace hft::engine
