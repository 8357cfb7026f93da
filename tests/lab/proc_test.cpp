// The lab's /proc and disk samples (hft/lab/proc.hpp) on this process and a
// scratch directory: values where the files are readable, the documented
// "unknown" where they are not.
#include "hft/lab/proc.hpp"

#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "support/temp_dir.hpp"

namespace hft::lab {
namespace {

pid_t self_tid() {
  return static_cast<pid_t>(::syscall(SYS_gettid));
}

// A pid above the kernel's pid_max: no such process.
constexpr pid_t kNoProcess = 4'194'304 + 1;

TEST(Proc, reads_this_process_memory_and_the_host_memory) {
  const ProcessMemory m = process_memory(::getpid());
  EXPECT_GT(m.vm_rss_kib, 0);
  EXPECT_GE(m.vm_hwm_kib, m.vm_rss_kib);
  EXPECT_GE(m.rss_anon_kib, 0);
  EXPECT_GT(mem_available_kib(), 0);
}

TEST(Proc, reads_this_thread_cpu_time_and_placement) {
  volatile std::uint64_t spin = 0;
  for (int i = 0; i < 1'000'000; ++i) spin = spin + 1;
  const ThreadSched s = thread_sched(::getpid(), self_tid());
  EXPECT_GT(s.run_ns, 0U);
  EXPECT_GT(thread_cpu_ns(::getpid(), self_tid()), 0U);
  const int cpu = thread_last_cpu(::getpid(), self_tid());
  EXPECT_GE(cpu, 0);
  EXPECT_LT(cpu, 4096);
}

TEST(Proc, a_process_that_is_not_there_reads_as_unknown) {
  const ProcessMemory m = process_memory(kNoProcess);
  EXPECT_EQ(m.vm_rss_kib, -1);
  EXPECT_EQ(m.vm_hwm_kib, -1);
  EXPECT_EQ(thread_sched(kNoProcess, kNoProcess).run_ns, 0U);
  EXPECT_EQ(thread_cpu_ns(kNoProcess, kNoProcess), 0U);
  EXPECT_EQ(thread_last_cpu(kNoProcess, kNoProcess), -1);
}

TEST(Proc, counts_file_bytes_and_the_disk_blocks_they_hold) {
  const test::TempDir tmp("hft_proc");
  std::filesystem::create_directories(tmp.sub("a/b"));
  {
    std::ofstream f(tmp.sub("a/b/data"), std::ios::binary);
    f << std::string(10'000, 'x');
    std::ofstream g(tmp.sub("top"), std::ios::binary);
    g << std::string(100, 'y');
  }
  // A sparse file: large, nothing on disk.
  std::ofstream(tmp.sub("a/sparse")).close();
  std::filesystem::resize_file(tmp.sub("a/sparse"), 1 << 20);
  EXPECT_EQ(directory_bytes(tmp.path()), 10'000U + 100U + (1U << 20));
  const std::uint64_t allocated = allocated_bytes(tmp.path());
  EXPECT_GE(allocated, 10'000U + 100U);
  EXPECT_LT(allocated, 1U << 20);
  EXPECT_EQ(directory_bytes(tmp.sub("missing")), 0U);
  EXPECT_EQ(allocated_bytes(tmp.sub("missing")), 0U);
}

TEST(Proc, settling_with_no_journal_threads_returns_at_once_with_a_note) {
  const std::string note = wait_journal_threads_idle({::getpid()}, 5.0);
  EXPECT_NE(note.find("journal threads idle after"), std::string::npos) << note;
}

}  // namespace
}  // namespace hft::lab
