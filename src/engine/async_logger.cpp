#include "hft/engine/async_logger.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "hft/core/clock.hpp"
#include "hft/core/cpu.hpp"

namespace hft::engine {

// One output file. The writer appends lines to `buffer` and writes it once
// per batch (or when it is nearly full).
struct AsyncLogger::Sink {
  int fd = -1;
  bool owned = false;
  std::string path;
  std::vector<char> buffer = std::vector<char>(kBufferSize);
  std::size_t used = 0;
  static constexpr std::size_t kBufferSize = 64 * 1024;
};

// The writer's state: touched by the writer thread only (after create()).
struct AsyncLogger::Writer {
  std::vector<Sink> sinks;
  std::vector<std::size_t> every;         // sinks that take every line
  std::size_t global = SIZE_MAX;          // engine-level lines
  std::vector<std::size_t> session_sink;  // per session index: its sink, or SIZE_MAX
  std::vector<std::string> session_name;  // per session index: "FIX.4.4:A->B"
  std::uint64_t dropped_reported = 0;
  std::int64_t stamp_second = -1;
  char stamp[24] = {};  // "2026-11-30T14:36:30" of stamp_second
};

namespace {

constexpr std::uint64_t kBatch = 1024;  // records per batch at most

Expected<int> open_append(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return Error{path + ": cannot open log file: " + std::strerror(errno)};
  return fd;
}

Expected<void> make_directory(const std::string& directory) {
  std::error_code ec;
  std::filesystem::create_directories(directory, ec);
  if (ec) return Error{directory + ": cannot create log directory: " + ec.message()};
  if (!std::filesystem::is_directory(directory, ec)) return Error{directory + ": not a directory"};
  return {};
}

std::string session_name(const session::SessionID& id) {
  return id.begin_string + ":" + id.sender_comp_id + "->" + id.target_comp_id +
         (id.qualifier.empty() ? "" : ":" + id.qualifier);
}

// Appends what fits of `s` at `out + n` (capacity `cap`).
std::size_t put(char* out, std::size_t n, std::size_t cap, std::string_view s) noexcept {
  const std::size_t k = std::min(s.size(), cap - n);
  std::memcpy(out + n, s.data(), k);
  return n + k;
}

}  // namespace

std::string AsyncLogger::session_file(const std::string& directory, const session::SessionID& id) {
  std::string prefix = id.begin_string + "-" + id.sender_comp_id + "-" + id.target_comp_id;
  if (!id.qualifier.empty()) prefix += "-" + id.qualifier;
  return (std::filesystem::path(directory) / (prefix + ".event.current.log")).string();
}

std::string AsyncLogger::global_file(const std::string& directory) {
  return (std::filesystem::path(directory) / "GLOBAL.event.current.log").string();
}

AsyncLogger::AsyncLogger(AsyncLoggerOptions options, std::size_t capacity)
    : options_(std::move(options)),
      level_(options_.level),
      mask_(capacity - 1),
      ring_(std::make_unique<Record[]>(capacity)),
      writer_(std::make_unique<Writer>()) {
  for (std::size_t i = 0; i < capacity; ++i) ring_[i].sequence.store(i, std::memory_order_relaxed);
}

Expected<std::unique_ptr<AsyncLogger>> AsyncLogger::create(AsyncLoggerOptions options) {
  std::size_t capacity = 16;
  while (capacity < options.ring_size) capacity <<= 1;
  std::unique_ptr<AsyncLogger> logger(new AsyncLogger(std::move(options), capacity));
  const AsyncLoggerOptions& o = logger->options_;
  Writer& w = *logger->writer_;
  // Sinks are kept by path: a session file that is also LogFile is written once.
  std::unordered_map<std::string, std::size_t> by_path;
  auto sink_for = [&](const std::string& path) -> Expected<std::size_t> {
    const std::string key = std::filesystem::weakly_canonical(path).string();
    if (auto it = by_path.find(key); it != by_path.end()) return it->second;
    auto fd = open_append(path);
    if (!fd) return fd.error();
    w.sinks.push_back(Sink{.fd = *fd, .owned = true, .path = path});
    by_path.emplace(key, w.sinks.size() - 1);
    return w.sinks.size() - 1;
  };
  if (o.to_stderr) {
    w.sinks.push_back(Sink{.fd = STDERR_FILENO, .owned = false, .path = "<stderr>"});
    w.every.push_back(w.sinks.size() - 1);
  }
  if (!o.file.empty()) {
    auto s = sink_for(o.file);
    if (!s) return s.error();
    w.every.push_back(*s);
  }
  if (!o.directory.empty()) {
    if (auto made = make_directory(o.directory); !made) return made.error();
    auto s = sink_for(global_file(o.directory));
    if (!s) return s.error();
    if (std::find(w.every.begin(), w.every.end(), *s) == w.every.end()) w.global = *s;
  }
  for (std::size_t i = 0; i < o.sessions.size(); ++i) {
    const auto& s = o.sessions[i];
    std::size_t sink = SIZE_MAX;
    if (!s.directory.empty()) {
      if (auto made = make_directory(s.directory); !made) return made.error();
      auto opened = sink_for(session_file(s.directory, s.id));
      if (!opened) return opened.error();
      if (std::find(w.every.begin(), w.every.end(), *opened) == w.every.end()) sink = *opened;
    }
    w.session_sink.push_back(sink);
    w.session_name.push_back(session_name(s.id));
    logger->index_.emplace(s.id, static_cast<std::uint32_t>(i));
  }
  if (o.cpu >= 0 && !core::cpu_exists(o.cpu)) {
    return Error{"log writer: CPU " + std::to_string(o.cpu) + " does not exist or is not allowed for this process"};
  }
  logger->thread_ = std::thread([l = logger.get(), cpu = o.cpu] {
    core::name_current_thread("hft-log");
    // Checked above; a refusal now (the mask changed meanwhile) leaves it unpinned.
    if (cpu >= 0) (void)core::pin_current_thread(cpu);
    l->run();
  });
  return logger;
}

AsyncLogger::~AsyncLogger() {
  stop();
  for (const Sink& s : writer_->sinks) {
    if (s.owned) ::close(s.fd);
  }
}

void AsyncLogger::stop() noexcept {
  if (stopped_) return;
  stopped_ = true;
  stop_.store(true, std::memory_order_release);
  if (thread_.joinable()) thread_.join();
}

std::uint32_t AsyncLogger::index_of(const session::SessionID& id) const noexcept {
  if (id.begin_string.empty()) return kEngineIndex;
  const auto it = index_.find(id);
  return it == index_.end() ? kNamedIndex : it->second;
}

AsyncLogger::Record* AsyncLogger::claim() noexcept {
  std::uint64_t pos = head_.load(std::memory_order_relaxed);
  for (;;) {
    Record& r = ring_[pos & mask_];
    const std::uint64_t seq = r.sequence.load(std::memory_order_acquire);
    const auto diff = static_cast<std::int64_t>(seq - pos);
    if (diff == 0) {
      if (head_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) return &r;
    } else if (diff < 0) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return nullptr;
    } else {
      pos = head_.load(std::memory_order_relaxed);
    }
  }
}

void AsyncLogger::log_indexed(session::LogLevel level, std::uint32_t index, std::string_view text) noexcept {
  if (!enabled(level)) return;
  Record* r = claim();
  if (r == nullptr) return;
  r->utc_ns = core::realtime_ns();
  r->index = index;
  r->level = static_cast<std::uint8_t>(level);
  std::size_t n = put(r->text, 0, kMaxText, text);
  if (text.size() > kMaxText) std::memcpy(r->text + kMaxText - 3, "...", 3);
  r->length = static_cast<std::uint16_t>(n);
  // Publishes the record: the writer reads it once the sequence is pos + 1.
  r->sequence.store(r->sequence.load(std::memory_order_relaxed) + 1, std::memory_order_release);
}

void AsyncLogger::log(session::LogLevel level, std::string_view text) noexcept {
  log_indexed(level, kEngineIndex, text);
}

void AsyncLogger::log(session::LogLevel level, const session::SessionID& session,
                      std::string_view text) noexcept {
  if (!enabled(level)) return;
  const std::uint32_t index = index_of(session);
  if (index != kNamedIndex) {
    log_indexed(level, index, text);
    return;
  }
  // A session the options do not list: its name travels in the text.
  Record* r = claim();
  if (r == nullptr) return;
  r->utc_ns = core::realtime_ns();
  r->index = kNamedIndex;
  r->level = static_cast<std::uint8_t>(level);
  std::size_t n = put(r->text, 0, kMaxText, session.begin_string);
  n = put(r->text, n, kMaxText, ":");
  n = put(r->text, n, kMaxText, session.sender_comp_id);
  n = put(r->text, n, kMaxText, "->");
  n = put(r->text, n, kMaxText, session.target_comp_id);
  if (!session.qualifier.empty()) {
    n = put(r->text, n, kMaxText, ":");
    n = put(r->text, n, kMaxText, session.qualifier);
  }
  n = put(r->text, n, kMaxText, " ");
  const std::size_t room = kMaxText - n;
  n = put(r->text, n, kMaxText, text);
  if (text.size() > room) std::memcpy(r->text + kMaxText - 3, "...", 3);
  r->length = static_cast<std::uint16_t>(n);
  r->sequence.store(r->sequence.load(std::memory_order_relaxed) + 1, std::memory_order_release);
}

AsyncLoggerStats AsyncLogger::stats() const noexcept {
  const std::uint64_t dropped = dropped_.load(std::memory_order_relaxed);
  return AsyncLoggerStats{.logged = head_.load(std::memory_order_relaxed),
                          .dropped = dropped,
                          .written = written_.load(std::memory_order_relaxed),
                          .write_errors = write_errors_.load(std::memory_order_relaxed),
                          .naps = naps_.load(std::memory_order_relaxed)};
}

void AsyncLogger::run() noexcept {
  Writer& w = *writer_;
  auto flush = [&](Sink& s) {
    std::size_t off = 0;
    while (off < s.used) {
      const ssize_t k = ::write(s.fd, s.buffer.data() + off, s.used - off);
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) {
        write_errors_.fetch_add(1, std::memory_order_relaxed);
        break;
      }
      off += static_cast<std::size_t>(k);
    }
    s.used = 0;
  };
  auto append = [&](std::size_t sink, const char* line, std::size_t n) {
    Sink& s = w.sinks[sink];
    if (s.used + n > s.buffer.size()) flush(s);
    std::memcpy(s.buffer.data() + s.used, line, n);
    s.used += n;
  };
  // Formats one line into `line`; returns its length.
  char line[kMaxText + 256];
  auto format = [&](std::int64_t utc_ns, std::uint8_t level, std::string_view who, std::string_view text) {
    const std::int64_t second = utc_ns / 1'000'000'000;
    if (second != w.stamp_second) {
      w.stamp_second = second;
      const std::time_t t = static_cast<std::time_t>(second);
      std::tm tm{};
      gmtime_r(&t, &tm);
      std::strftime(w.stamp, sizeof w.stamp, "%Y-%m-%dT%H:%M:%S", &tm);
    }
    const int ms = static_cast<int>((utc_ns / 1'000'000) % 1000);
    std::size_t n = put(line, 0, sizeof line, w.stamp);
    const char millis[6] = {'.', static_cast<char>('0' + ms / 100), static_cast<char>('0' + ms / 10 % 10),
                            static_cast<char>('0' + ms % 10), 'Z', ' '};
    n = put(line, n, sizeof line, std::string_view(millis, sizeof millis));
    n = put(line, n, sizeof line, session::to_string(static_cast<session::LogLevel>(level)));
    n = put(line, n, sizeof line, " ");
    if (!who.empty()) {
      n = put(line, n, sizeof line, who);
      n = put(line, n, sizeof line, " ");
    }
    n = put(line, n, sizeof line, text);
    return put(line, n, sizeof line, "\n");
  };
  auto emit = [&](std::uint32_t index, std::size_t n) {
    for (const std::size_t s : w.every) append(s, line, n);
    if (index == kEngineIndex) {
      if (w.global != SIZE_MAX) append(w.global, line, n);
    } else if (index < w.session_sink.size() && w.session_sink[index] != SIZE_MAX) {
      append(w.session_sink[index], line, n);
    }
  };

  const std::int64_t nap_max = std::max(options_.idle_poll_ns, options_.idle_poll_max_ns);
  std::int64_t nap_ns = options_.idle_poll_ns;
  for (;;) {
    const bool stopping = stop_.load(std::memory_order_acquire);
    std::uint64_t pos = tail_.load(std::memory_order_relaxed);
    std::uint64_t done = 0;
    while (done < kBatch) {
      Record& r = ring_[pos & mask_];
      if (r.sequence.load(std::memory_order_acquire) != pos + 1) break;
      std::string_view who;
      if (r.index == kEngineIndex) who = "engine";
      else if (r.index < w.session_name.size()) who = w.session_name[r.index];
      const std::size_t n = format(r.utc_ns, r.level, who, std::string_view(r.text, r.length));
      emit(r.index, n);
      // Frees the slot for the producer that wraps around to it.
      r.sequence.store(pos + mask_ + 1, std::memory_order_release);
      ++pos;
      ++done;
    }
    tail_.store(pos, std::memory_order_relaxed);
    written_.fetch_add(done, std::memory_order_relaxed);
    if (done < kBatch) {
      // Caught up: say what was lost while the ring was full.
      const std::uint64_t dropped = dropped_.load(std::memory_order_relaxed);
      if (dropped != w.dropped_reported) {
        char text[96];
        const int k = std::snprintf(text, sizeof text, "%llu log lines dropped (log ring full)",
                                    static_cast<unsigned long long>(dropped - w.dropped_reported));
        w.dropped_reported = dropped;
        const std::size_t n = format(core::realtime_ns(), static_cast<std::uint8_t>(session::LogLevel::kWarn),
                                     "engine", std::string_view(text, k > 0 ? static_cast<std::size_t>(k) : 0));
        emit(kEngineIndex, n);
      }
    }
    for (Sink& s : w.sinks) {
      if (s.used != 0) flush(s);
    }
    if (done != 0) {
      nap_ns = options_.idle_poll_ns;
      continue;
    }
    if (stopping) break;
    naps_.fetch_add(1, std::memory_order_relaxed);
    const timespec nap{static_cast<time_t>(nap_ns / 1'000'000'000),
                       static_cast<long>(nap_ns % 1'000'000'000)};
    ::nanosleep(&nap, nullptr);
    nap_ns = std::min(nap_ns * 2, nap_max);
  }
}

}  // namespace hft::engine
