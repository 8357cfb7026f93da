// The conditions a report names (LAB.md rule 8): source identity, build,
// host, clocks, placement, journal settings, and whether the host was quiet.
//
// Everything here reads files under /proc and /sys or runs read-only git
// commands; a value that cannot be read is reported as "unknown", never
// guessed.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace hft::lab {

/// Where the commit came from, in order of preference.
struct SourceIdentity {
  std::string commit = "unknown";   ///< 40 hex digits, or "unknown"
  std::string how = "unknown";      ///< "git rev-parse", ".git", "compile-time"
  int dirty = -1;                   ///< 1 modified tracked files, 0 clean, -1 unknown
};

/// Build facts fixed at compile time of the lab library.
struct BuildInfo {
  std::string compiler;     ///< e.g. "GCC 12.2.0"
  std::string build_type;   ///< CMAKE_BUILD_TYPE
  std::string cxx_flags;    ///< flags of that build type plus the project options
  std::string options;      ///< -march=native, sanitizers, NDEBUG, ...
  std::string compile_time_commit;
  std::string source_dir;
};

/// The build facts of this binary.
[[nodiscard]] BuildInfo build_info();

/// Reads the commit of `source_dir`: `git rev-parse HEAD` (with the dirty
/// flag from a lock-free `git status`), else .git/HEAD and its ref, else the
/// commit recorded at configure time.
[[nodiscard]] SourceIdentity source_identity(const std::filesystem::path& source_dir);

/// One process's CPU use over a sampling interval.
struct ProcessCpu {
  int pid = 0;
  std::string comm;
  double cpu_percent = 0;  ///< of one CPU over the interval
};

/// One quiet-check sample: load averages and the busiest other processes.
struct QuietSample {
  double at_s = 0;       ///< seconds since the bench started
  double interval_s = 0; ///< CPU-use window of `busiest`
  double load1 = -1, load5 = -1, load15 = -1;
  std::vector<ProcessCpu> busiest;  ///< top processes, this process excluded
};

/// Samples /proc: per-process CPU ticks between two calls of sample().
class ProcSampler {
 public:
  ProcSampler();
  /// CPU use of every other process since the previous call (or construction),
  /// top `top` by CPU, plus the load averages now. The calling process and
  /// its children (the venues the lab starts) are not listed.
  [[nodiscard]] QuietSample sample(double at_s, std::size_t top = 5);

 private:
  struct Ticks {
    int pid;
    std::uint64_t ticks;
  };
  std::vector<Ticks> previous_;
  std::int64_t previous_ns_;
};

/// Verdict over samples, with the limits of the seed records: load1 below
/// `load_limit` before the run (load during a run includes the lab's own
/// spinning threads, so only "before" samples are judged on load), and no
/// other process above `process_limit_percent` of a CPU at any sample.
struct QuietVerdict {
  bool quiet = true;
  std::string reason;  ///< empty when quiet; else what broke the limit
};
[[nodiscard]] QuietVerdict judge_quiet(const std::vector<QuietSample>& before,
                                       const std::vector<QuietSample>& during,
                                       double load_limit = 1.0, double process_limit_percent = 5.0);

/// Host facts.
struct HostInfo {
  std::string hostname;
  std::string kernel;           ///< uname -srvm
  std::string cpu_model;
  int online_cpus = 0;
  std::string allowed_cpus;     ///< this process's affinity, e.g. "0-1"
  std::string isolated_cpus;    ///< /sys/devices/system/cpu/isolated
  std::string tsc_flags;        ///< constant_tsc / nonstop_tsc if present
  std::string clocksource;
  std::string governor;         ///< per distinct value, e.g. "performance (cpu0-1)"
  std::string turbo;            ///< "disabled", "enabled" or "unknown"
  std::string smt;              ///< /sys/devices/system/cpu/smt/active
};

[[nodiscard]] HostInfo host_info();

/// SMT siblings of a CPU (thread_siblings_list), or "unknown".
[[nodiscard]] std::string cpu_siblings(int cpu);

/// Formats a sorted CPU list as ranges: {0,1,2,5} -> "0-2,5".
[[nodiscard]] std::string format_cpu_list(const std::vector<int>& cpus);

}  // namespace hft::lab
