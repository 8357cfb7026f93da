// What /proc and the file system say about the processes and threads a run
// starts or measures: resident memory, a thread's CPU time, run-queue wait
// and last CPU, the disk space a run's files take, and waiting until the
// engines' journal service threads have settled before a measured window.
//
// The readers are samples for the report, not checks: a file that cannot be
// read (the process has exited, /proc is not mounted) gives the documented
// "unknown" value (-1 or zeros), never an error or an exception. None of
// them is for a timed region: each opens and parses a text file.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace hft::lab {

/// MemAvailable of /proc/meminfo in KiB (-1: not read).
[[nodiscard]] std::int64_t mem_available_kib();

/// Resident memory of a process from /proc/PID/status, in KiB (-1: not read).
struct ProcessMemory {
  std::int64_t vm_rss_kib = -1, rss_anon_kib = -1, rss_file_kib = -1, rss_shmem_kib = -1, vm_hwm_kib = -1;
};
[[nodiscard]] ProcessMemory process_memory(pid_t pid);

/// Time a thread spent on a CPU and runnable waiting for one (ns), from
/// /proc/PID/task/TID/schedstat; zeros if unreadable.
struct ThreadSched {
  std::uint64_t run_ns = 0, wait_ns = 0;
};
[[nodiscard]] ThreadSched thread_sched(pid_t pid, pid_t tid);

/// CPU time (ns) of thread `tid` of process `pid` (thread_sched's run_ns); 0 if unreadable.
[[nodiscard]] std::uint64_t thread_cpu_ns(pid_t pid, pid_t tid);

/// The CPU thread `tid` of process `pid` last ran on (field 39 of
/// /proc/PID/task/TID/stat); -1 if unreadable. A thread's placement for the
/// report (RunResult::threads).
[[nodiscard]] int thread_last_cpu(pid_t pid, pid_t tid);

/// Disk space allocated to the files under `dir` (recursive): the sum of
/// st_blocks * 512, so sparse and preallocated files count as the disk holds
/// them. 0 for a missing directory.
[[nodiscard]] std::uint64_t allocated_bytes(const std::filesystem::path& dir);

/// Bytes of the regular files under `dir` (recursive, their sizes): a
/// journal's disk use as its files say. 0 for a missing directory.
[[nodiscard]] std::uint64_t directory_bytes(const std::filesystem::path& dir);

/// Waits until the journal service threads (threads named "hft-journal...")
/// of the given processes stop preparing segments (under 3% of a CPU each
/// over 100 ms), at most `max_seconds`: segment pre-creation and
/// pre-faulting at start must not run inside the measured window. Then
/// sync()s, so the write-back of the prepared segments does not either.
/// Returns a note for the report saying how long it took (or that it gave up).
[[nodiscard]] std::string wait_journal_threads_idle(const std::vector<pid_t>& pids, double max_seconds);

}  // namespace hft::lab
