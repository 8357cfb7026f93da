// A hostile client for the engine lanes' --garbage-peer control (issue 14:
// "a peer that sends garbage during an rtt run"). On a thread of its own it
// sends `rate` pieces of garbage per second to the venue port the measured
// session uses, the pieces taking turns:
//
//   piece k % 4   connection        what is sent                          what the venue does
//   -----------   ----------------  ------------------------------------
//   ------------------------------------- 0 noise       new               64-512 random bytes closes it:
//   first message names no
//                                                                         session (garbled_first_message)
//   1 bad frame   new               a Logon from INTRUDER with a wrong    closes it (garbled first message,
//   or
//                                   BodyLength or CheckSum (alternately)  unknown session when it still names
//                                   one)
//   2 unknown     new               a well-formed Logon from INTRUDER     refuses it
//   (unknown_session_refused) 3 session     its own session   a garbled Heartbeat (wrong CheckSum   logs
//   "Garbled input ignored" (WARN,
//                 HOSTILE, kept     or BodyLength, alternately); every    LogRateLimit per session); on the
//                 open              25th: a Heartbeat with MsgSeqNum 1    MsgSeqNum too low: Logout,
//                 disconnect
//
// Connections 0-2 each get one piece and are watched until the venue closes
// them (at most 5 s; then the peer closes them itself and counts them as
// left open). The session connection logs on (141=Y) when it has none and
// reconnects after the venue closed it. Nothing is waited for between
// pieces: the thread sleeps in ppoll() until the next piece is due or a
// watched socket has something.
//
// The HOSTILE session must exist in the venue's config (an acceptor
// [SESSION] TargetCompID=HOSTILE; the lanes add it with PersistMessages=N),
// or its pieces are refused like piece 2.
#pragma once

#include <cstdint>
#include <string>

#include "side_thread.hpp"

namespace hft::lab::lanes {

/// CompID of the hostile peer's own session (its SenderCompID).
inline constexpr const char* kHostileCompId = "HOSTILE";

struct GarbagePeerOptions {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
  double rate = 1000;  ///< pieces of garbage per second (> 0)
  int core = -1;       ///< CPU to pin to; -1: the process's own mask (SideThread)
  std::uint64_t seed = 1;
};

/// What the peer did, read after stop().
struct GarbagePeerCounts {
  std::uint64_t pieces = 0;            ///< pieces sent (every kind)
  std::uint64_t per_kind[4] = {};      ///< noise, bad frame, unknown logon, session garbage
  std::uint64_t bytes = 0;             ///< bytes sent (the session's Logons included)
  std::uint64_t connects = 0;          ///< connections established
  std::uint64_t connect_failures = 0;  ///< connect() refused or failed
  std::uint64_t closed_by_venue = 0;   ///< one-piece connections the venue closed
  std::uint64_t left_open = 0;         ///< one-piece connections still open after 5 s (or at stop)
  std::uint64_t session_logons = 0;    ///< Logons sent on the HOSTILE session
  std::uint64_t session_answered = 0;  ///< ... answered with a Logon
  std::uint64_t session_closed = 0;    ///< HOSTILE connections the venue closed
  std::uint64_t send_errors = 0;       ///< send() refused (connection already gone)
  double seconds = 0;                  ///< from start to stop
  std::uint64_t cpu_ns = 0;            ///< CPU time of the peer's thread
};

/// The peer (see the file comment); its thread's role is "garbage-peer".
class GarbagePeer final : public SideThread {
 public:
  explicit GarbagePeer(GarbagePeerOptions options)
      : SideThread("garbage-peer", options.core), options_(std::move(options)) {}
  ~GarbagePeer() { stop(); }

  /// What it did (after stop()).
  [[nodiscard]] const GarbagePeerCounts& counts() const noexcept { return counts_; }
  /// One line for a run's notes (after stop()).
  [[nodiscard]] std::string describe() const;

 private:
  void work() noexcept override;

  GarbagePeerOptions options_;
  GarbagePeerCounts counts_;
};

}  // namespace hft::lab::lanes
