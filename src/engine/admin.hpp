// The admin and metrics endpoint (docs/admin.md): an HTTP server on threads
// of its own that never touch a session. What it shows and what it changes
// goes through one mailbox the engine thread serves from poll():
//
//   HTTP worker ──(mutex: one request at a time)──► Mailbox ──poll()──► Engine
//        ▲                                            │ kPending -> kTaken -> kDone
//        └──────── reply (snapshot or result) ◄───────┘
//
// The mailbox is a single-entry SPSC hand-off (the server is its one
// producer, under its own mutex; the engine thread its one consumer). The
// engine thread's whole cost while nothing is asked is one acquire load of
// `state` per poll(). A request the engine does not take within the server's
// timeout is withdrawn with a compare-and-swap (kPending -> kFree), so a
// command answered 503 is never executed later; once taken it is always
// finished (the engine thread executes it within that poll()).
//
// Reads are requests too: the engine thread copies what is asked (every
// session's counters, sequence numbers, journal state; EngineStats) into
// buffers the server preallocated, so nothing on the engine thread allocates
// or locks, and nothing is read while the engine thread writes it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hft/core/expected.hpp"
#include "hft/engine/config.hpp"
#include "hft/engine/engine.hpp"
#include "hft/session/session.hpp"
#include "hft/store/types.hpp"

namespace hft::engine {
class AsyncLogger;
}

namespace hft::engine::admin {

enum class Command : std::uint8_t {
  kSessions,       ///< snapshot of every session (or of `target`)
  kEngine,         ///< EngineStats and engine-wide figures
  kLogout,         ///< Logout (text), the session may log on again
  kDisconnect,     ///< close the connection now, no Logout
  kEnable,         ///< Engine::enable_session
  kDisable,        ///< Engine::disable_session (text)
  kReset,          ///< Session::reset: Logout, disconnect, sequence numbers back to 1
  kSetSeqNum,      ///< next sender and/or target sequence number
  kSequenceReset,  ///< Session::send_sequence_reset(a, flag)
  kLogLevel,       ///< LogLevel (text: trace|debug|info|warn|error|off)
  kAddSession,     ///< Engine::add_session(section)
  kRemoveSession,  ///< Engine::remove_session (its store stays on disk)
};

/// One direction of a session's journal.
struct JournalSnapshot {
  bool present = false;
  std::uint64_t appends = 0;
  std::uint64_t bytes = 0;
  std::uint64_t rotations = 0;
  std::uint64_t spare_misses = 0;
  std::uint64_t active_segment = 0;
  int spare_errno = 0;  ///< non-zero while the next segment cannot be prepared
};

struct SessionSnapshot {
  std::uint32_t index = 0;
  char id[200] = {};  ///< "FIX.4.4:SENDER->TARGET[:qualifier]"
  char begin_string[16] = {};
  bool initiator = false;
  session::SessionState state = session::SessionState::kDisconnected;
  bool logged_on = false;
  bool enabled = true;           ///< not disabled by disable_session
  bool in_logon_window = true;   ///< LogonTime..LogoutTime (always, without them)
  std::uint64_t next_sender_seq = 0;
  std::uint64_t next_target_seq = 0;
  std::int32_t heart_bt_int = 0;
  session::SessionCounters counters{};
  JournalSnapshot outbound{};
  JournalSnapshot inbound{};
};

struct EngineSnapshot {
  EngineStats stats{};
  std::uint64_t sessions = 0;
  std::uint64_t connected = 0;
  std::uint64_t logged_on = 0;
  std::uint64_t connection_buffer_bytes = 0;
  std::uint64_t log_lines_suppressed = 0;
  char log_level[8] = {};
};

/// What the server asks. Written by the server before it publishes kPending,
/// read by the engine thread after it took the request.
struct Request {
  Command command = Command::kSessions;
  bool all_sessions = true;      ///< kSessions: every session, else `target`
  bool by_index = false;         ///< `index` names the session, else `target`
  std::size_t index = 0;
  session::SessionID target;
  std::uint64_t a = 0;  ///< kSetSeqNum: next sender (0: unchanged); kSequenceReset: NewSeqNo
  std::uint64_t b = 0;  ///< kSetSeqNum: next target (0: unchanged)
  bool flag = false;    ///< kSequenceReset: GapFillFlag
  std::string text;     ///< Logout text, log level
  std::string who;      ///< remote address and user, for the log line
  /// kAddSession: the [SESSION] to add, parsed (and its keys checked) by the
  /// server from the request's config text.
  std::optional<Section> section;
};

/// What the engine answers. Its buffers are sized by the server beforehand.
struct Reply {
  int status = 200;          ///< HTTP status
  char message[256] = {};    ///< result or error text
  char session[200] = {};    ///< the session a command acted on, by name
  std::vector<SessionSnapshot> sessions;  ///< capacity chosen by the server; `filled` written
  std::size_t filled = 0;
  std::size_t total = 0;     ///< sessions that matched (more than filled: retry with room)
  EngineSnapshot engine{};
};

class Mailbox {
 public:
  enum State : std::uint32_t { kFree, kPending, kTaken, kDone };

  /// Engine thread, every poll(): one acquire load.
  [[nodiscard]] bool pending() const noexcept { return state_.load(std::memory_order_acquire) == kPending; }
  /// Engine thread: claims the pending request (false: withdrawn meanwhile).
  [[nodiscard]] bool take() noexcept {
    std::uint32_t expected = kPending;
    return state_.compare_exchange_strong(expected, kTaken, std::memory_order_acq_rel);
  }
  /// Engine thread: the reply is written.
  void done() noexcept { state_.store(kDone, std::memory_order_release); }

  /// Server: publishes `request` (filled beforehand), waits up to `timeout_ns`
  /// for the reply. False: the engine thread did not take it in time, and it
  /// was withdrawn (never executed).
  bool call(std::int64_t timeout_ns) noexcept;

  Request request;
  Reply reply;

 private:
  alignas(64) std::atomic<std::uint32_t> state_{kFree};
};

struct ServerOptions {
  std::string address = "127.0.0.1";
  int port = 0;
  std::string token;       ///< empty: state-changing commands refused (403)
  std::string audit_file;  ///< empty: no audit file
  std::int64_t engine_timeout_ns = 2'000'000'000;
};

/// The HTTP server: started by Engine::create, stopped by ~Engine.
class Server {
 public:
  /// Binds (errors name the address and port) and starts serving. `log`
  /// (may be null) receives the refused commands' lines from the server's
  /// threads (AsyncLogger is multi-producer).
  static Expected<std::unique_ptr<Server>> start(const ServerOptions& options, Mailbox& mailbox,
                                                 AsyncLogger* log);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;
  [[nodiscard]] int port() const noexcept;

 private:
  struct Impl;
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// Reads HttpAdminTokenFile: error naming the key when it is missing,
/// unreadable, empty or readable by others.
Expected<std::string> read_token_file(const std::string& path, const std::string& where);

/// "FIX.4.4:SENDER->TARGET[:qualifier]" parsed, or an error naming the text.
Expected<session::SessionID> parse_session_id(std::string_view text);

/// `id` as text into `out` (NUL-terminated, cut to fit). No allocation.
void format_session_id(const session::SessionID& id, char* out, std::size_t cap) noexcept;

}  // namespace hft::engine::admin
