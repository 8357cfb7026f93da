// Asynchronous session event log. The thread that logs (the engine thread)
// copies the event into a preallocated ring of fixed-size records; a writer
// thread formats the lines and writes them in batches. Lines:
// "2026-11-30T14:36:30.691Z INFO FIX.4.4:A->B text", "... WARN engine text"
// for engine-level events (a SessionID with an empty BeginString).
//
//   log() ──claim slot──► ring of kRecordSize records ──► writer thread
//   (no lock, no allocation,  (MPSC, bounded; full:       formats, one write(2)
//    no syscall)               dropped and counted)       per file per batch
//
// Record layout (pinned by static_assert, 512 bytes with its sequence word):
//   +0  u64 sequence (ring protocol)   +8  i64 utc_ns (CLOCK_REALTIME)
//   +16 u32 session index              +20 u16 text length  +22 u8 level
//   +24 text[488] (longer text is cut and ends in "...")
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "hft/core/expected.hpp"
#include "hft/core/spsc_ring.hpp"
#include "hft/session/logger.hpp"

namespace hft::engine {

/// What the writer sends where. Fixed at create().
struct AsyncLoggerOptions {
  session::LogLevel level = session::LogLevel::kInfo;  ///< least severe event kept
  std::size_t ring_size = 8192;  ///< records (rounded up to a power of two, at least 16)
  bool to_stderr = false;        ///< every line to standard error
  std::string file;              ///< every line appended to this file ("": none)
  /// Engine-level lines (and the writer's own reports) appended to
  /// <directory>/GLOBAL.event.current.log ("": none). Created if missing.
  std::string directory;
  struct Session {
    session::SessionID id;
    /// Its lines appended to <directory>/<BeginString>-<Sender>-<Target>[-<Qualifier>].event.current.log
    /// ("": only to the files above). Created if missing.
    std::string directory;
  };
  /// Sessions known in advance; a session's index is its position. Lines of
  /// other sessions still go to `file` and standard error, with their name.
  std::vector<Session> sessions;
  /// The writer's first sleep when it finds the ring empty; each further
  /// empty look doubles it, up to idle_poll_max_ns, and a line found sets it
  /// back. A line logged after a quiet spell reaches the files within
  /// idle_poll_max_ns; a quiet engine's writer wakes ~60 times a second
  /// instead of 1,000 (each wake can preempt a busy-polling thread that
  /// shares its core).
  std::int64_t idle_poll_ns = 1'000'000;
  std::int64_t idle_poll_max_ns = 16'000'000;  ///< at least idle_poll_ns (raised to it if lower)
  /// CPU the writer thread is pinned to (-1: not pinned). Unpinned, its
  /// wakes may take a turn on a core a busy-polling thread owns.
  int cpu = -1;
};

/// Counters, readable from any thread.
struct AsyncLoggerStats {
  std::uint64_t logged = 0;         ///< records put in the ring
  std::uint64_t dropped = 0;        ///< lines lost: the ring was full
  std::uint64_t written = 0;        ///< lines formatted by the writer (one per record)
  std::uint64_t write_errors = 0;   ///< write(2) calls that failed (bytes lost)
  std::uint64_t naps = 0;           ///< times the writer found the ring empty and slept
};

class AsyncLogger final : public session::Logger {
 public:
  static constexpr std::size_t kRecordSize = 512;
  static constexpr std::size_t kMaxText = 488;  ///< longer text is cut to this, ending in "..."
  static constexpr std::uint32_t kEngineIndex = 0xFFFFFFFEu;
  static constexpr std::uint32_t kNamedIndex = 0xFFFFFFFFu;  ///< session not in the options: name in the text

  /// Opens every file (creating the directories), allocates and touches the
  /// ring and starts the writer. Error: a directory that cannot be created or
  /// a file that cannot be opened, naming its path and the errno text.
  [[nodiscard]] static Expected<std::unique_ptr<AsyncLogger>> create(AsyncLoggerOptions options);
  /// stop(), then closes the files.
  ~AsyncLogger() override;
  AsyncLogger(const AsyncLogger&) = delete;
  AsyncLogger& operator=(const AsyncLogger&) = delete;

  [[nodiscard]] bool enabled(session::LogLevel level) const noexcept override {
    return level >= level_.load(std::memory_order_relaxed);
  }
  /// Changes the least severe level kept (the admin endpoint's log-level
  /// command, on the engine thread). Any thread.
  void set_level(session::LogLevel level) noexcept { level_.store(level, std::memory_order_relaxed); }
  /// Copies the event into the ring. No lock, allocation, syscall or
  /// exception: a full ring drops the line and counts it. Any thread.
  void log(session::LogLevel level, const session::SessionID& session, std::string_view text) noexcept override;
  /// An engine-level event.
  void log(session::LogLevel level, std::string_view text) noexcept;
  /// The event of the session at `index` of the options (kEngineIndex: engine-level).
  void log_indexed(session::LogLevel level, std::uint32_t index, std::string_view text) noexcept;

  /// The index of `id` in the options, or kNamedIndex. Never allocates.
  [[nodiscard]] std::uint32_t index_of(const session::SessionID& id) const noexcept;
  /// The file a session's lines go to under `directory`, as QuickFIX names it.
  [[nodiscard]] static std::string session_file(const std::string& directory, const session::SessionID& id);
  /// The file engine-level lines go to under `directory`.
  [[nodiscard]] static std::string global_file(const std::string& directory);

  /// Lets the writer drain the ring (reporting drops), then joins it. Lines
  /// logged afterwards are dropped. Idempotent; not concurrent with itself.
  void stop() noexcept;
  [[nodiscard]] AsyncLoggerStats stats() const noexcept;
  [[nodiscard]] std::size_t capacity() const noexcept { return mask_ + 1; }

 private:
  struct Record {
    std::atomic<std::uint64_t> sequence{0};
    std::int64_t utc_ns = 0;
    std::uint32_t index = 0;
    std::uint16_t length = 0;
    std::uint8_t level = 0;
    std::uint8_t reserved = 0;
    char text[kMaxText];
  };
  static_assert(sizeof(Record) == kRecordSize, "one record is 512 bytes");
  static_assert(offsetof(Record, text) == 24, "text follows the 24-byte header");

  struct Sink;
  struct Writer;
  explicit AsyncLogger(AsyncLoggerOptions options, std::size_t capacity);
  // Claims a slot or returns nullptr (full: counted).
  [[nodiscard]] Record* claim() noexcept;
  void run() noexcept;

  AsyncLoggerOptions options_;
  std::atomic<session::LogLevel> level_;
  const std::size_t mask_;
  std::unique_ptr<Record[]> ring_;
  std::unordered_map<session::SessionID, std::uint32_t> index_;
  std::unique_ptr<Writer> writer_;
  std::thread thread_;
  alignas(core::kCacheLine) std::atomic<std::uint64_t> head_{0};  // producers' claim position
  std::atomic<std::uint64_t> dropped_{0};
  alignas(core::kCacheLine) std::atomic<std::uint64_t> tail_{0};  // writer's position
  std::atomic<std::uint64_t> written_{0};
  std::atomic<std::uint64_t> write_errors_{0};
  std::atomic<std::uint64_t> naps_{0};
  std::atomic<bool> stop_{false};
  bool stopped_ = false;
};

}  // namespace hft::engine
