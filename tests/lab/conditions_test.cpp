// The quiet check's process sampler: other processes' CPU use counts as
// competing load, the lab's own children (the venues it starts) do not.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "hft/lab/conditions.hpp"

namespace {

using hft::lab::ProcSampler;
using hft::lab::QuietSample;

[[noreturn]] void spin_forever() {
  volatile unsigned long n = 0;
  for (;;) n = n + 1;
}

bool listed(const QuietSample& q, int pid) {
  for (const auto& p : q.busiest) {
    if (p.pid == pid) return true;
  }
  return false;
}

TEST(ProcSampler, counts_other_processes_but_not_the_labs_own_children) {
  // A child of this process, and an orphan (the child of a child that
  // exited at once), both spinning.
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) spin_forever();
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const pid_t middle = ::fork();
  ASSERT_GE(middle, 0);
  if (middle == 0) {
    const pid_t orphan = ::fork();
    if (orphan == 0) spin_forever();
    (void)!::write(pipe_fds[1], &orphan, sizeof(orphan));
    ::_exit(0);
  }
  pid_t orphan = -1;
  ASSERT_EQ(::read(pipe_fds[0], &orphan, sizeof(orphan)), static_cast<ssize_t>(sizeof(orphan)));
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
  ::waitpid(middle, nullptr, 0);
  ASSERT_GT(orphan, 0);

  ProcSampler sampler;
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const QuietSample q = sampler.sample(0.3, 1000);
  ::kill(child, SIGKILL);
  ::kill(orphan, SIGKILL);
  ::waitpid(child, nullptr, 0);

  EXPECT_TRUE(listed(q, orphan)) << "a spinning process that is not the lab's was not counted";
  EXPECT_FALSE(listed(q, child)) << "the lab's own child was counted as competing load";
}

}  // namespace
