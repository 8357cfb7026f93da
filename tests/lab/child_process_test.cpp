// The lab's child server (hft/lab/child_process.hpp) with /bin/sh standing
// in for a server: started when it writes its port, its log read back,
// stopped by SIGTERM; a child that dies or never listens is an error that
// quotes its log.
#include "hft/lab/child_process.hpp"

#include <gtest/gtest.h>
#include <signal.h>

#include <string>

#include "support/temp_dir.hpp"

namespace hft::lab {
namespace {

/// A child running `script` under /bin/sh; PORT is its port file.
ChildSpec shell(const test::TempDir& tmp, const std::string& script) {
  ChildSpec spec;
  spec.log_path = tmp.sub("child.log");
  spec.port_file = tmp.sub("child.port");
  spec.argv = {"/bin/sh", "-c", script, "sh", spec.port_file.string()};
  spec.listen_timeout_s = 5.0;
  spec.stop_timeout_s = 5.0;
  return spec;
}

// Writes its port, logs, exits 0 on SIGTERM with a closing line.
constexpr const char* kServer =
    "trap 'echo counters: 3 orders >&2; exit 0' TERM; echo listening on 4242 >&2; echo 4242 > \"$1\"; "
    "while :; do sleep 0.05; done";

TEST(ChildProcess, starts_when_the_port_is_written_and_stops_on_sigterm) {
  const test::TempDir tmp("hft_child");
  auto started = ChildProcess::start(shell(tmp, kServer));
  ASSERT_TRUE(started.ok()) << started.error().message;
  ChildProcess& child = **started;
  EXPECT_EQ(child.port(), 4242);
  EXPECT_GT(child.pid(), 0);
  EXPECT_EQ(::kill(child.pid(), 0), 0);
  EXPECT_EQ(child.log_line_from("on 4242"), "on 4242");
  EXPECT_EQ(child.log_line_from("nothing like this"), "");
  EXPECT_GE(child.main_thread_cpu(), 0);
  auto stopped = child.stop();
  ASSERT_TRUE(stopped.ok()) << stopped.error().message;
  EXPECT_EQ(*stopped, "counters: 3 orders");  // its last line, not the log before it
  EXPECT_EQ(child.pid(), -1);
  EXPECT_EQ(child.main_thread_cpu(), -1);
  EXPECT_NE(child.log_tail().find("listening on 4242"), std::string::npos);
  // Stopping again has nothing to do.
  auto again = child.stop();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, "");
}

TEST(ChildProcess, a_child_that_exits_before_listening_is_an_error_quoting_its_log) {
  const test::TempDir tmp("hft_child");
  auto started = ChildProcess::start(shell(tmp, "echo bad config line 7 >&2; exit 3"));
  ASSERT_FALSE(started.ok());
  EXPECT_NE(started.error().message.find("sh exited before listening"), std::string::npos)
      << started.error().message;
  EXPECT_NE(started.error().message.find("bad config line 7"), std::string::npos) << started.error().message;
}

TEST(ChildProcess, a_child_that_never_listens_is_an_error_after_the_timeout) {
  const test::TempDir tmp("hft_child");
  ChildSpec spec = shell(tmp, "echo starting >&2; exec sleep 30");
  spec.listen_timeout_s = 0.2;
  spec.stop_timeout_s = 0.2;
  auto started = ChildProcess::start(spec);
  ASSERT_FALSE(started.ok());
  EXPECT_NE(started.error().message.find("sh did not listen within"), std::string::npos)
      << started.error().message;
}

TEST(ChildProcess, a_child_that_ignores_sigterm_is_killed_and_reported) {
  const test::TempDir tmp("hft_child");
  ChildSpec spec = shell(tmp, "trap '' TERM; echo 1 > \"$1\"; while :; do sleep 0.05; done");
  spec.stop_timeout_s = 0.3;
  auto started = ChildProcess::start(spec);
  ASSERT_TRUE(started.ok()) << started.error().message;
  auto stopped = (*started)->stop();
  ASSERT_FALSE(stopped.ok());
  EXPECT_NE(stopped.error().message.find("sh did not stop within"), std::string::npos)
      << stopped.error().message;
}

TEST(ChildProcess, a_missing_program_is_an_error) {
  const test::TempDir tmp("hft_child");
  ChildSpec spec = shell(tmp, "");
  spec.argv = {tmp.sub("no-such-server")};
  auto started = ChildProcess::start(spec);
  ASSERT_FALSE(started.ok());
  EXPECT_NE(started.error().message.find("no-such-server exited before listening (status"), std::string::npos)
      << started.error().message;
}

}  // namespace
}  // namespace hft::lab
