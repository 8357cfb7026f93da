#include "hft/lab/conditions.hpp"

#include <dirent.h>
#include <sched.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "hft/core/clock.hpp"
#include "hft_lab_build_info.hpp"

namespace hft::lab {

namespace {

std::string trim(std::string s) {
  const auto not_space = [](unsigned char c) { return std::isspace(c) == 0; };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
  s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
  return s;
}

/// First line of a file, trimmed; empty if unreadable.
std::string read_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return {};
  return trim(line);
}

/// Runs a read-only command and returns its trimmed stdout; nullopt-ish empty
/// string plus rc != 0 on failure.
std::string run_command(const std::string& command, int& rc) {
  std::string out;
  std::FILE* p = ::popen(command.c_str(), "r");
  if (p == nullptr) {
    rc = -1;
    return out;
  }
  std::array<char, 512> buf{};
  while (std::fgets(buf.data(), static_cast<int>(buf.size()), p) != nullptr) out += buf.data();
  rc = ::pclose(p);
  return trim(out);
}

bool is_hex_commit(const std::string& s) {
  return s.size() == 40 && std::all_of(s.begin(), s.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
}

std::string quote_shell(const std::string& s) {
  std::string q = "'";
  for (const char c : s) {
    if (c == '\'') {
      q += "'\\''";
    } else {
      q += c;
    }
  }
  return q + "'";
}

}  // namespace

BuildInfo build_info() {
  BuildInfo b;
#if defined(__clang__)
  b.compiler = std::string("Clang ") + __clang_version__;
#elif defined(__GNUC__)
  b.compiler = std::string("GCC ") + __VERSION__;
#else
  b.compiler = "unknown";
#endif
  b.build_type = HFT_LAB_BUILD_TYPE;
  b.cxx_flags = HFT_LAB_CXX_FLAGS;
  b.options = HFT_LAB_OPTIONS;
#if defined(NDEBUG)
  b.options += " NDEBUG";
#endif
#if defined(__OPTIMIZE__)
  b.options += " __OPTIMIZE__";
#endif
#if defined(__SANITIZE_ADDRESS__)
  b.options += " ASan";
#endif
#if defined(__AVX512F__)
  b.options += " AVX-512";
#elif defined(__AVX2__)
  b.options += " AVX2";
#endif
  b.compile_time_commit = HFT_LAB_GIT_COMMIT;
  b.source_dir = HFT_LAB_SOURCE_DIR;
  return b;
}

SourceIdentity source_identity(const std::filesystem::path& source_dir) {
  SourceIdentity id;
  const std::string dir = quote_shell(source_dir.string());
  int rc = 0;
  const std::string head = run_command("git -C " + dir + " rev-parse HEAD 2>/dev/null", rc);
  if (rc == 0 && is_hex_commit(head)) {
    id.commit = head;
    id.how = "git rev-parse";
    // GIT_OPTIONAL_LOCKS=0: status must not refresh (write) the index.
    const std::string status = run_command(
        "GIT_OPTIONAL_LOCKS=0 git -C " + dir + " status --porcelain --untracked-files=no 2>/dev/null", rc);
    if (rc == 0) id.dirty = status.empty() ? 0 : 1;
    return id;
  }
  // No git binary: follow .git/HEAD by hand.
  const std::filesystem::path git = source_dir / ".git";
  const std::string head_file = read_line((git / "HEAD").string());
  if (is_hex_commit(head_file)) {
    id.commit = head_file;
    id.how = ".git";
    return id;
  }
  if (head_file.rfind("ref: ", 0) == 0) {
    const std::string ref = head_file.substr(5);
    std::string c = read_line((git / ref).string());
    if (!is_hex_commit(c)) {
      std::ifstream packed(git / "packed-refs");
      std::string line;
      while (std::getline(packed, line)) {
        if (line.size() > 41 && line.substr(41) == ref) c = line.substr(0, 40);
      }
    }
    if (is_hex_commit(c)) {
      id.commit = c;
      id.how = ".git";
      return id;
    }
  }
  id.commit = HFT_LAB_GIT_COMMIT;
  id.how = "compile-time";
  return id;
}

ProcSampler::ProcSampler() : previous_ns_(core::monotonic_ns()) { (void)sample(0.0); }

QuietSample ProcSampler::sample(double at_s, std::size_t top) {
  QuietSample q;
  q.at_s = at_s;
  const std::int64_t now_ns = core::monotonic_ns();
  q.interval_s = static_cast<double>(now_ns - previous_ns_) * 1e-9;

  std::ifstream load("/proc/loadavg");
  if (load) load >> q.load1 >> q.load5 >> q.load15;

  const int self = static_cast<int>(::getpid());
  const double hz = static_cast<double>(::sysconf(_SC_CLK_TCK));
  std::vector<Ticks> current;
  current.reserve(previous_.size() + 16);
  std::vector<ProcessCpu> busy;
  DIR* d = ::opendir("/proc");
  if (d != nullptr) {
    while (dirent* e = ::readdir(d)) {
      char* end = nullptr;
      const long pid = std::strtol(e->d_name, &end, 10);
      if (end == e->d_name || *end != '\0' || pid <= 0) continue;
      if (pid == self) continue;
      std::ifstream stat(std::string("/proc/") + e->d_name + "/stat");
      std::string text;
      if (!stat || !std::getline(stat, text)) continue;
      // comm is in parentheses and may itself contain spaces or ')'.
      const auto open = text.find('(');
      const auto close = text.rfind(')');
      if (open == std::string::npos || close == std::string::npos || close < open) continue;
      const std::string comm = text.substr(open + 1, close - open - 1);
      std::istringstream rest(text.substr(close + 2));
      std::string field;
      std::uint64_t utime = 0;
      std::uint64_t stime = 0;
      long ppid = 0;
      // Fields after comm start at 3 (state); ppid is 4, utime 14, stime 15.
      for (int k = 3; k <= 15 && rest >> field; ++k) {
        if (k == 4) ppid = std::strtol(field.c_str(), nullptr, 10);
        if (k == 14) utime = std::strtoull(field.c_str(), nullptr, 10);
        if (k == 15) stime = std::strtoull(field.c_str(), nullptr, 10);
      }
      // The lab's own processes (the venues it starts) are the measurement,
      // not competing load.
      if (ppid == self) continue;
      const std::uint64_t ticks = utime + stime;
      current.push_back({static_cast<int>(pid), ticks});
      const auto it = std::lower_bound(previous_.begin(), previous_.end(), static_cast<int>(pid),
                                       [](const Ticks& t, int p) { return t.pid < p; });
      if (it != previous_.end() && it->pid == pid && ticks >= it->ticks && q.interval_s > 0) {
        const double pct = static_cast<double>(ticks - it->ticks) / hz / q.interval_s * 100.0;
        if (pct > 0) busy.push_back({static_cast<int>(pid), comm, pct});
      }
    }
    ::closedir(d);
  }
  std::sort(current.begin(), current.end(), [](const Ticks& a, const Ticks& b) { return a.pid < b.pid; });
  previous_ = std::move(current);
  previous_ns_ = now_ns;
  std::sort(busy.begin(), busy.end(), [](const ProcessCpu& a, const ProcessCpu& b) { return a.cpu_percent > b.cpu_percent; });
  if (busy.size() > top) busy.resize(top);
  q.busiest = std::move(busy);
  return q;
}

QuietVerdict judge_quiet(const std::vector<QuietSample>& before, const std::vector<QuietSample>& during,
                         double load_limit, double process_limit_percent) {
  QuietVerdict v;
  char buf[256];
  for (const QuietSample& s : before) {
    if (s.load1 >= load_limit) {
      std::snprintf(buf, sizeof(buf), "load average %.2f >= %.2f before the run", s.load1, load_limit);
      v.quiet = false;
      v.reason = buf;
      return v;
    }
  }
  auto check = [&](const std::vector<QuietSample>& samples, const char* when) {
    for (const QuietSample& s : samples) {
      for (const ProcessCpu& p : s.busiest) {
        if (p.cpu_percent > process_limit_percent) {
          std::snprintf(buf, sizeof(buf), "%s (pid %d) used %.1f%% of a CPU %s (limit %.1f%%)", p.comm.c_str(), p.pid,
                        p.cpu_percent, when, process_limit_percent);
          v.quiet = false;
          v.reason = buf;
          return false;
        }
      }
    }
    return true;
  };
  if (check(before, "before the run")) check(during, "during the run");
  return v;
}

std::string format_cpu_list(const std::vector<int>& cpus) {
  std::string out;
  std::size_t k = 0;
  while (k < cpus.size()) {
    std::size_t j = k;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(cpus[k]);
    if (j > k) {
      out += '-';
      out += std::to_string(cpus[j]);
    }
    k = j + 1;
  }
  return out;
}

std::string cpu_siblings(int cpu) {
  const std::string s =
      read_line("/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/thread_siblings_list");
  return s.empty() ? "unknown" : s;
}

HostInfo host_info() {
  HostInfo h;
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) == 0) h.hostname = name;
  utsname u{};
  if (::uname(&u) == 0) h.kernel = std::string(u.sysname) + " " + u.release + " " + u.version + " " + u.machine;

  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  bool constant = false;
  bool nonstop = false;
  bool flags_seen = false;
  while (std::getline(cpuinfo, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = trim(line.substr(0, colon));
    if (key == "model name" && h.cpu_model.empty()) h.cpu_model = trim(line.substr(colon + 1));
    if (key == "flags" && !flags_seen) {
      flags_seen = true;
      const std::string flags = " " + line.substr(colon + 1) + " ";
      constant = flags.find(" constant_tsc ") != std::string::npos;
      nonstop = flags.find(" nonstop_tsc ") != std::string::npos;
    }
  }
  if (h.cpu_model.empty()) h.cpu_model = "unknown";
  h.tsc_flags = flags_seen ? std::string(constant ? "constant_tsc" : "no constant_tsc") +
                                 (nonstop ? " nonstop_tsc" : " no nonstop_tsc")
                           : "unknown";
  h.online_cpus = static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN));

  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> allowed;
  if (::sched_getaffinity(0, sizeof(set), &set) == 0) {
    for (int c = 0; c < CPU_SETSIZE; ++c) {
      if (CPU_ISSET(c, &set)) allowed.push_back(c);
    }
  }
  h.allowed_cpus = format_cpu_list(allowed);
  h.isolated_cpus = read_line("/sys/devices/system/cpu/isolated");
  if (h.isolated_cpus.empty()) h.isolated_cpus = "none";
  h.clocksource = read_line("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  if (h.clocksource.empty()) h.clocksource = "unknown";

  std::map<std::string, std::vector<int>> governors;
  for (const int c : allowed) {
    std::string g = read_line("/sys/devices/system/cpu/cpu" + std::to_string(c) + "/cpufreq/scaling_governor");
    governors[g.empty() ? "unknown" : g].push_back(c);
  }
  for (const auto& [g, cpus] : governors) {
    if (!h.governor.empty()) h.governor += "; ";
    h.governor += g + " (cpu " + format_cpu_list(cpus) + ")";
  }
  if (h.governor.empty()) h.governor = "unknown";

  const std::string no_turbo = read_line("/sys/devices/system/cpu/intel_pstate/no_turbo");
  const std::string boost = read_line("/sys/devices/system/cpu/cpufreq/boost");
  if (no_turbo == "1") {
    h.turbo = "disabled (intel_pstate/no_turbo=1)";
  } else if (no_turbo == "0") {
    h.turbo = "enabled (intel_pstate/no_turbo=0)";
  } else if (boost == "0") {
    h.turbo = "disabled (cpufreq/boost=0)";
  } else if (boost == "1") {
    h.turbo = "enabled (cpufreq/boost=1)";
  } else {
    h.turbo = "unknown";
  }
  h.smt = read_line("/sys/devices/system/cpu/smt/active");
  if (h.smt.empty()) h.smt = "unknown";
  return h;
}

}  // namespace hft::lab
