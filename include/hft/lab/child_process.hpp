// A server the lab starts as a child process for a run (the engine lanes'
// hft-venue): its own address space, heap and mmap lock, so nothing of it is
// shared with the measuring process but the CPUs it is pinned to.
//
//   start(): fork, exec `argv` with stdout and stderr to `log_path`, from the
//            process's own CPU mask (not the calling thread's pinned one);
//            wait until the child writes the port it listens on into
//            `port_file` (or exits, or passes `max_rss_kib`, or
//            `listen_timeout_s` passes)
//   stop():  SIGTERM, wait up to `stop_timeout_s` for a clean exit, SIGKILL
//
// The child dies with the lab (PR_SET_PDEATHSIG), so an interrupted bench
// leaves none behind. Start-up and shutdown paths only: they allocate and
// sleep.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hft/core/expected.hpp"

namespace hft::lab {

/// How to start a child server and when it counts as started.
struct ChildSpec {
  /// Program and arguments; argv[0] is the executable's path. Its file name
  /// names the child in error messages.
  std::vector<std::string> argv;
  /// Where its stdout and stderr go (created or truncated).
  std::filesystem::path log_path;
  /// The file the child writes its listening port into (removed first);
  /// start() returns once it holds a port > 0.
  std::filesystem::path port_file;
  /// How long start() waits for the port.
  double listen_timeout_s = 15.0;
  /// How long stop() waits after SIGTERM before it kills the child.
  double stop_timeout_s = 10.0;
  /// start() kills the child and fails when its VmRSS passes this while it
  /// starts (a shared host's other work must not meet the OOM killer); 0: no limit.
  std::int64_t max_rss_kib = 0;
};

/// A running child server (see the file comment). Stopped by its destructor
/// if still running.
class ChildProcess {
 public:
  /// Starts the child (see the file comment). Errors: fork or the log file
  /// failed; the child exited before it wrote its port, or passed
  /// max_rss_kib (it is killed), or wrote none within listen_timeout_s.
  /// Errors quote the tail of its log.
  [[nodiscard]] static Expected<std::unique_ptr<ChildProcess>> start(const ChildSpec& spec);
  virtual ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  /// The port it wrote into the port file.
  [[nodiscard]] std::uint16_t port() const noexcept { return port_; }
  /// Its process id; -1 once stopped.
  [[nodiscard]] pid_t pid() const noexcept { return pid_; }
  /// CPU time of its main thread in nanoseconds (thread_cpu_ns; 0 if unreadable or stopped).
  [[nodiscard]] std::uint64_t main_thread_cpu_ns() const;
  /// CPU its main thread last ran on (thread_last_cpu; -1 if unreadable or stopped).
  [[nodiscard]] int main_thread_cpu() const;
  /// Stops it (SIGTERM, then SIGKILL after stop_timeout_s). Returns the last
  /// line of its log (a server's closing counters), or an error when it did
  /// not exit by itself with status 0. Nothing to do (an empty line) once stopped.
  [[nodiscard]] Expected<std::string> stop();
  /// Its log so far (the last `max_bytes`, newlines as spaces).
  [[nodiscard]] std::string log_tail(std::size_t max_bytes = 2000) const;
  /// The first line of its log containing `text`, less what comes before
  /// `text`; empty if none.
  [[nodiscard]] std::string log_line_from(std::string_view text) const;

 protected:
  ChildProcess() = default;
  /// What start() does, into this object: for a derived class that keeps
  /// more about its child (VenueProcess keeps its store directory).
  [[nodiscard]] Expected<void> launch(const ChildSpec& spec);

 private:
  /// The last `max_bytes` of the log as written ("..." before them when cut).
  [[nodiscard]] std::string raw_tail(std::size_t max_bytes) const;

  pid_t pid_ = -1;
  std::uint16_t port_ = 0;
  std::string name_;
  std::filesystem::path log_path_;
  double stop_timeout_s_ = 10.0;
};

}  // namespace hft::lab
