// Runs a piece of a test in a forked child that is then killed with SIGKILL,
// the way a crashing process stops: nothing of it runs after the signal
// (no destructors, no flush), its open files and mappings simply end.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>

namespace hft::test {

/// Where a child waits for its SIGKILL: never returns, so that what the
/// body opened (its locals) stays open as it is.
[[noreturn]] inline void wait_to_be_killed() {
  for (;;) ::pause();
}

/// Forks; the child runs `body(ready_fd)`, which writes `ready` bytes to
/// ready_fd once it has done what is to be killed and then calls
/// wait_to_be_killed() (or _exit()s with a non-zero status if it cannot).
/// The parent reads them into `out` (at least `ready` bytes of room), kills
/// the child with SIGKILL and reaps it. True if the child said it was ready
/// and died of the signal.
template <typename Body>
bool run_then_kill(Body&& body, void* out, std::size_t ready) {
  int fds[2];
  if (::pipe(fds) != 0) return false;
  const pid_t pid = ::fork();
  if (pid < 0) return false;
  if (pid == 0) {
    ::close(fds[0]);
    body(fds[1]);
    ::_exit(6);  // the body returned instead of waiting to be killed
  }
  ::close(fds[1]);
  std::size_t got = 0;
  while (got < ready) {
    const ssize_t n = ::read(fds[0], static_cast<char*>(out) + got, ready - got);
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fds[0]);
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return got == ready && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

}  // namespace hft::test
