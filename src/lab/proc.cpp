#include "hft/lab/proc.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

namespace hft::lab {

namespace fs = std::filesystem;

namespace {

std::string task_file(pid_t pid, pid_t tid, const char* name) {
  return "/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/" + name;
}

}  // namespace

std::int64_t mem_available_kib() {
  std::ifstream f("/proc/meminfo");
  std::string key;
  std::int64_t value = 0;
  std::string unit;
  while (f >> key >> value >> unit) {
    if (key == "MemAvailable:") return value;
  }
  return -1;
}

ProcessMemory process_memory(pid_t pid) {
  ProcessMemory m;
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(f, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = line.substr(0, colon);
    std::int64_t* into = key == "VmRSS"      ? &m.vm_rss_kib
                         : key == "RssAnon"  ? &m.rss_anon_kib
                         : key == "RssFile"  ? &m.rss_file_kib
                         : key == "RssShmem" ? &m.rss_shmem_kib
                         : key == "VmHWM"    ? &m.vm_hwm_kib
                                             : nullptr;
    if (into != nullptr) *into = std::atoll(line.c_str() + colon + 1);
  }
  return m;
}

ThreadSched thread_sched(pid_t pid, pid_t tid) {
  std::ifstream f(task_file(pid, tid, "schedstat"));
  ThreadSched t;
  if (!(f >> t.run_ns >> t.wait_ns)) return ThreadSched{};
  return t;
}

std::uint64_t thread_cpu_ns(pid_t pid, pid_t tid) {
  return thread_sched(pid, tid).run_ns;
}

int thread_last_cpu(pid_t pid, pid_t tid) {
  std::ifstream f(task_file(pid, tid, "stat"));
  const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  // comm (field 2) is in parentheses and may itself hold spaces or ')'.
  const auto close = text.rfind(')');
  if (close == std::string::npos || close + 2 > text.size()) return -1;
  std::istringstream rest(text.substr(close + 2));
  std::string field;
  // Field 39 (processor); after ')' the fields start at 3.
  for (int k = 3; k <= 39 && (rest >> field); ++k) {
    if (k == 39) return std::atoi(field.c_str());
  }
  return -1;
}

std::uint64_t allocated_bytes(const fs::path& dir) {
  std::uint64_t total = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      total += static_cast<std::uint64_t>(st.st_blocks) * 512U;
    }
  }
  return total;
}

std::uint64_t directory_bytes(const fs::path& dir) {
  std::uint64_t total = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->is_regular_file(ec)) total += it->file_size(ec);
  }
  return total;
}

// ---------------------------------------------------------- settling ----

namespace {

struct JournalThreads {
  std::uint64_t cpu_ns = 0;
  int threads = 0;
};

JournalThreads journal_threads_cpu(const std::vector<pid_t>& pids) {
  JournalThreads out;
  for (const pid_t pid : pids) {
    std::error_code ec;
    const fs::path task_dir = "/proc/" + std::to_string(pid) + "/task";
    for (const auto& entry : fs::directory_iterator(task_dir, ec)) {
      std::ifstream comm(entry.path() / "comm");
      std::string name;
      std::getline(comm, name);
      if (name.rfind("hft-journal", 0) != 0) continue;
      const pid_t tid = static_cast<pid_t>(std::atoi(entry.path().filename().c_str()));
      out.cpu_ns += thread_cpu_ns(pid, tid);
      ++out.threads;
    }
  }
  return out;
}

}  // namespace

std::string wait_journal_threads_idle(const std::vector<pid_t>& pids, double max_seconds) {
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::duration<double>(max_seconds);
  std::uint64_t before = journal_threads_cpu(pids).cpu_ns;
  std::uint64_t total = 0;
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const JournalThreads now = journal_threads_cpu(pids);
    const std::uint64_t used = now.cpu_ns - before;
    total += used;
    before = now.cpu_ns;
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    char text[160];
    // Preparing a segment keeps a service thread at 10-20% of a CPU (it
    // pauses 4x as long as each piece took, docs/journal.md); an idle one
    // wakes every 10 ms and re-touches pages ahead of each writer every
    // 100 ms (well under 1% before the run starts). 3% per thread tells
    // them apart.
    if (used < 3'000'000ULL * static_cast<std::uint64_t>(std::max(1, now.threads))) {
      // The prepared segments are gigabytes of dirty zero pages (640 MiB
      // arm: four journals x active + spare); left dirty, the kernel writes
      // them back 30 s later (dirty_expire), inside the measured window,
      // with flusher threads on both cores (seen as 5-15 ms tx stalls at
      // 0.8 s and 2.3 s into a run). Written back now, before measuring.
      // Data written during the run is still written back during the run.
      const auto t_sync = std::chrono::steady_clock::now();
      ::sync();
      const double synced = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_sync).count();
      std::snprintf(text, sizeof text,
                    "journal threads idle after %.2f s (%.1f ms of their CPU while waiting); sync() %.2f s",
                    waited, static_cast<double>(total) * 1e-6, synced);
      return text;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      std::snprintf(text, sizeof text,
                    "journal threads still busy after %.2f s (%.1f ms CPU in the last 100 ms)", waited,
                    static_cast<double>(used) * 1e-6);
      return text;
    }
  }
}

}  // namespace hft::lab
