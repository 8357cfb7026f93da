// The journal against a hostile environment: full disk, file-size limit,
// missing directory, permission denied. Failures are statuses and errors
// naming the path, never a crash.
#include <gtest/gtest.h>

#include <sched.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <functional>

#include "hft/store/journal.hpp"
#include "hft/store/journal_service.hpp"
#include "store/store_test_util.hpp"

namespace hft::store {
namespace {

using test::Collected;
using test::TempDir;

constexpr int kSkip = 77;

struct ChildResult {
  int code = -1;          ///< exit code, or 128 + signal
  std::string message;    ///< what the child reported
};

/// Runs `body` in a forked child (single-threaded, its own limits and mount
/// namespace). The body returns "" on success or what went wrong; returning
/// "SKIP: why" exits with kSkip.
ChildResult run_in_child(const std::function<std::string()>& body) {
  int fds[2];
  if (::pipe(fds) != 0) return {-1, "pipe failed"};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    std::string msg = body();
    const int code = msg.empty() ? 0 : (msg.rfind("SKIP:", 0) == 0 ? kSkip : 1);
    (void)!::write(fds[1], msg.data(), msg.size());
    ::close(fds[1]);
    ::_exit(code);
  }
  ::close(fds[1]);
  ChildResult r;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof(buf))) > 0) r.message.append(buf, static_cast<std::size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

#define EXPECT_CHILD_OK(result)                                         \
  do {                                                                  \
    const ChildResult r_ = (result);                                    \
    if (r_.code == kSkip) GTEST_SKIP() << r_.message;                   \
    EXPECT_EQ(r_.code, 0) << r_.message;                                \
  } while (0)

bool contains(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

TEST(Environment, a_missing_directory_is_created_with_its_parents) {
  TempDir dir;
  const std::string path = dir.sub("a/b/c");
  auto j = Journal::open(test::small_config(path));
  ASSERT_TRUE(j) << j.error().message;
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  test::append_range(**j, 1, 3);
}

TEST(Environment, a_missing_directory_is_an_error_naming_it_when_creation_is_off) {
  TempDir dir;
  JournalConfig c = test::small_config(dir.sub("absent"));
  c.create_directory = false;
  auto j = Journal::open(c);
  ASSERT_FALSE(j);
  EXPECT_TRUE(contains(j.error().message, dir.sub("absent"))) << j.error().message;
  EXPECT_TRUE(contains(j.error().message, "does not exist")) << j.error().message;
  EXPECT_NE(::access(dir.sub("absent").c_str(), F_OK), 0) << "not created";
}

TEST(Environment, a_file_where_the_directory_should_be_is_an_error) {
  TempDir dir;
  test::write_file(dir.sub("plain"), {'x'});
  auto j = Journal::open(test::small_config(dir.sub("plain")));
  ASSERT_FALSE(j);
  EXPECT_TRUE(contains(j.error().message, dir.sub("plain"))) << j.error().message;
}

// Tests run as root, which bypasses permission bits: the child drops to an
// unprivileged user first.
TEST(Environment, permission_denied_is_an_error_naming_the_path) {
  TempDir dir;
  ASSERT_EQ(::chmod(dir.path().c_str(), 0755), 0);
  const std::string ro = dir.sub("readonly");
  ASSERT_EQ(::mkdir(ro.c_str(), 0555), 0);
  const std::string hidden = dir.sub("private");
  ASSERT_EQ(::mkdir(hidden.c_str(), 0700), 0);
  EXPECT_CHILD_OK(run_in_child([&]() -> std::string {
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) return "SKIP: cannot drop to an unprivileged user";
    // A directory we may not write into: the first segment cannot be created.
    auto a = Journal::open(test::small_config(ro));
    if (a) return "opened a journal in a read-only directory";
    if (!contains(a.error().message, ro) || !contains(a.error().message, "Permission denied"))
      return "unexpected error: " + a.error().message;
    // A directory we may not even look into.
    auto b = Journal::open(test::small_config(hidden + "/journal"));
    if (b) return "opened a journal under an inaccessible directory";
    if (!contains(b.error().message, hidden) || !contains(b.error().message, "Permission denied"))
      return "unexpected error: " + b.error().message;
    return "";
  }));
}

TEST(Environment, a_file_size_limit_below_the_segment_size_fails_open_with_a_clear_error) {
  TempDir dir;
  EXPECT_CHILD_OK(run_in_child([&]() -> std::string {
    std::signal(SIGXFSZ, SIG_IGN);  // the process must ignore it, or the kernel kills it
    rlimit lim{32 * 1024, 32 * 1024};
    if (::setrlimit(RLIMIT_FSIZE, &lim) != 0) return "SKIP: setrlimit refused";
    auto j = Journal::open(test::small_config(dir.path(), 64 * 1024));
    if (j) return "opened although a segment cannot be allocated";
    if (!contains(j.error().message, dir.path()) || !contains(j.error().message, "File too large"))
      return "unexpected error: " + j.error().message;
    return "";
  }));
}

/// Mounts a tmpfs of `bytes` on `where` in a private mount namespace (child only).
std::string mount_small_tmpfs(const std::string& where, std::size_t bytes) {
  if (::unshare(CLONE_NEWNS) != 0) return std::string("SKIP: unshare(CLONE_NEWNS): ") + std::strerror(errno);
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    return std::string("SKIP: private mounts: ") + std::strerror(errno);
  const std::string opts = "size=" + std::to_string(bytes);
  if (::mount("tmpfs", where.c_str(), "tmpfs", 0, opts.c_str()) != 0)
    return std::string("SKIP: mount tmpfs: ") + std::strerror(errno);
  return "";
}

/// Appends 200-byte messages from `seq` on until one is refused (or 100,000
/// were taken); `seq` is then the refused one. Returns its status.
StoreStatus append_until_refused(Journal& j, std::uint64_t& seq) {
  for (; seq < 100000; ++seq) {
    const std::string m = test::message_for(seq, 200);
    const StoreStatus st = j.append(seq, 0, {m.data(), m.size()});
    if (st != StoreStatus::kOk) return st;
  }
  return StoreStatus::kOk;
}

TEST(Environment, a_full_disk_at_rotation_is_a_no_space_status_and_committed_data_survives) {
  TempDir dir;
  EXPECT_CHILD_OK(run_in_child([&]() -> std::string {
    if (std::string m = mount_small_tmpfs(dir.path(), 4 * 64 * 1024); !m.empty()) return m;
    auto j = Journal::open(test::small_config(dir.path() + "/j", 64 * 1024));
    if (!j) return "open: " + j.error().message;
    std::uint64_t seq = 1;
    const StoreStatus last = append_until_refused(**j, seq);
    if (last != StoreStatus::kNoSpace) return "expected kNoSpace, got " + std::string(to_string(last));
    const JournalStats st = (*j)->stats();
    if (st.last_errno != ENOSPC) return "last_errno " + std::to_string(st.last_errno);
    if (st.failed_claims != 1) return "failed_claims " + std::to_string(st.failed_claims);
    // It stays a status, call after call.
    for (int i = 0; i < 3; ++i)
      if (!(*j)->claim(200).empty() || (*j)->last_status() != StoreStatus::kNoSpace) return "claim after full";
    // Everything committed before is intact, now and after reopening.
    Collected got;
    (void)test::replay_all(**j, 1, seq, got);
    if (got.seqs.size() != seq - 1) return "replayed " + std::to_string(got.seqs.size()) + " of " + std::to_string(seq - 1);
    j->reset();
    auto again = Journal::open(test::small_config(dir.path() + "/j", 64 * 1024));
    if (!again) return "reopen: " + again.error().message;
    if ((*again)->last_seq() != seq - 1) return "reopened last_seq " + std::to_string((*again)->last_seq());
    return "";
  }));
}

// With write-behind buffers too: the buffers are files in the journal's
// directory, given their blocks before a segment is stored to them, so a
// full disk is a status, never a SIGBUS on the writer's first store to a
// page of a sparse buffer.
TEST(Environment, a_full_disk_with_write_behind_buffers_is_a_no_space_status_and_committed_data_survives) {
  TempDir dir;
  EXPECT_CHILD_OK(run_in_child([&]() -> std::string {
    // Room for segments and buffers that runs out in the middle of one.
    if (std::string m = mount_small_tmpfs(dir.path(), 7 * 64 * 1024 + 40 * 1024); !m.empty()) return m;
    JournalConfig c = test::small_config(dir.path() + "/j", 64 * 1024);
    c.durability = Durability::kOs;
    c.write_behind = true;
    auto j = Journal::open(c);
    if (!j) return "open: " + j.error().message;
    std::uint64_t seq = 1;
    const StoreStatus last = append_until_refused(**j, seq);
    if (last != StoreStatus::kNoSpace) return "expected kNoSpace, got " + std::string(to_string(last));
    if ((*j)->stats().write_behind_segments == 0) return "no segment was written through a buffer";
    Collected got;
    (void)test::replay_all(**j, 1, seq, got);
    if (got.seqs.size() != seq - 1)
      return "replayed " + std::to_string(got.seqs.size()) + " of " + std::to_string(seq - 1);
    j->reset();
    auto again = Journal::open(c);
    if (!again) return "reopen: " + again.error().message;
    if ((*again)->last_seq() != seq - 1) return "reopened last_seq " + std::to_string((*again)->last_seq());
    return "";
  }));
}

TEST(Environment, a_full_disk_in_the_service_is_counted_and_the_writer_gets_a_status) {
  TempDir dir;
  EXPECT_CHILD_OK(run_in_child([&]() -> std::string {
    if (std::string m = mount_small_tmpfs(dir.path(), 3 * 64 * 1024); !m.empty()) return m;
    JournalService service;
    JournalConfig c = test::small_config(dir.path() + "/j", 64 * 1024);
    c.spare_miss = SpareMissPolicy::kFail;
    auto j = Journal::open(c, &service);
    if (!j) return "open: " + j.error().message;
    std::uint64_t seq = 1;
    StoreStatus last = StoreStatus::kOk;
    for (; seq < 100000; ++seq) {
      (void)service.do_work();
      const std::string m = test::message_for(seq, 200);
      last = (*j)->append(seq, 0, {m.data(), m.size()});
      if (last != StoreStatus::kOk) break;
    }
    if (last != StoreStatus::kNoSpare) return "expected kNoSpare, got " + std::string(to_string(last));
    const JournalStats st = (*j)->stats();
    if (st.service_errors == 0 || st.last_errno != ENOSPC)
      return "service_errors " + std::to_string(st.service_errors) + " errno " + std::to_string(st.last_errno);
    if (st.rotations < 1) return "expected at least one rotation through a spare";
    return "";
  }));
}

TEST(Environment, journal_errors_are_statuses_with_static_text) {
  EXPECT_EQ(to_string(StoreStatus::kNoSpace), "no space on the file system");
  EXPECT_EQ(parse_durability("fsync"), Durability::kFsync);
  EXPECT_EQ(parse_durability("sometimes"), std::nullopt);
  EXPECT_EQ(to_string(Durability::kOs), "os");
}

}  // namespace
}  // namespace hft::store
