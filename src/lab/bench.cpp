#include "hft/lab/bench.hpp"

#include <fcntl.h>
#include <linux/fs.h>
#include <netdb.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <mutex>
#include <optional>
#include <ostream>
#include <set>
#include <thread>

#include "hft/core/clock.hpp"
#include "hft/core/cpu.hpp"
#include "hft/lab/conditions.hpp"
#include "hft/lab/engine_adapter.hpp"
#include "hft/lab/floor_lane.hpp"
#include "hft/lab/hlog.hpp"
#include "hft/lab/journal_audits.hpp"
#include "hft/lab/manifest.hpp"
#include "hft/lab/raw_series.hpp"
#include "text.hpp"

namespace hft::lab {

namespace {

// Sets FS_TOPDIR_FL on `dir` (ext2/3/4's "top of directory hierarchies":
// Orlov spreads its subdirectories). True when the flag is set.
bool mark_top_directory(const std::filesystem::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return false;
  int flags = 0;
  bool ok = ::ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0;
  if (ok && (flags & FS_TOPDIR_FL) == 0) {
    flags |= FS_TOPDIR_FL;
    ok = ::ioctl(fd, FS_IOC_SETFLAGS, &flags) == 0;
  }
  ::close(fd);
  return ok;
}

std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

bool contains(const std::vector<std::string>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

std::string trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return std::string(s);
}

template <typename T>
bool parse_number(std::string_view text, T& out) {
  const auto r = std::from_chars(text.data(), text.data() + text.size(), out);
  return r.ec == std::errc{} && r.ptr == text.data() + text.size();
}

bool parse_double(std::string_view text, double& out) {
  const std::string s(text);
  char* end = nullptr;
  errno = 0;
  out = std::strtod(s.c_str(), &end);
  return !s.empty() && end == s.c_str() + s.size() && errno == 0;
}

std::string cpu_choice() {
  std::vector<int> cpus;
  for (int c = 0; c < 1024; ++c) {
    if (core::cpu_exists(c)) cpus.push_back(c);
  }
  return format_cpu_list(cpus);
}

/// Applies one arm override to `c`. `origin` prefixes errors.
Expected<void> apply_override(LaneConfig& c, const std::string& key, const std::string& value,
                              const std::vector<std::string>& lane_controls, const std::string& origin) {
  const auto bad = [&](const std::string& what) { return Error{origin + key + "=" + value + ": " + what}; };
  if (key == "calls") {
    if (!parse_number(value, c.calls)) return bad("expected a whole number of calls");
  } else if (key == "warmup") {
    if (!parse_number(value, c.warmup)) return bad("expected a whole number of calls");
  } else if (key == "rate") {
    if (!parse_double(value, c.rate)) return bad("expected calls per second");
  } else if (key == "window") {
    if (!parse_number(value, c.window)) return bad("expected a whole number of calls in flight");
  } else if (key == "client-core") {
    if (!parse_number(value, c.client_core)) return bad("expected a CPU number");
  } else if (key == "server-core") {
    if (!parse_number(value, c.server_core)) return bad("expected a CPU number");
  } else if (key == "message-size") {
    if (!parse_number(value, c.message_size)) return bad("expected a size in bytes");
  } else if (key == "segment-size") {
    auto v = parse_size(value);
    if (!v) return bad(v.error().message);
    c.segment_size = *v;
  } else if (key == "prealloc") {
    auto v = parse_on_off(value);
    if (!v) return bad(v.error().message);
    c.prealloc = *v;
  } else if (key == "connections") {
    if (!parse_number(value, c.connections)) return bad("expected a whole number of connections");
  } else if (key == "venue") {
    const auto colon = value.rfind(':');
    std::uint16_t port = 0;
    if (colon == std::string::npos || !parse_number(std::string_view(value).substr(colon + 1), port)) {
      return bad("expected HOST:PORT");
    }
    c.venue_host = value.substr(0, colon);
    c.venue_port = port;
  } else if (contains(lane_controls, key)) {
    c.extra[key] = value;
  } else {
    return Error{origin + "unknown key '" + key +
                 "' (use calls, warmup, rate, window, client-core, server-core, message-size, segment-size, "
                 "prealloc, connections, venue" +
                 (lane_controls.empty() ? std::string() : ", " + join(lane_controls)) + ")"};
  }
  return {};
}

/// Checks one planned configuration; `origin` is "" or "--arm NAME: ".
Expected<void> validate_config(const LaneConfig& c, const std::string& origin) {
  // "--rate 0: ..." on the command line, "--arm fast: rate=0: ..." in an arm.
  const auto opt = [&](const char* option) {
    return origin.empty() ? std::string(option) + " " : origin + std::string(option + 2) + "=";
  };
  if (c.calls == 0) return Error{opt("--calls") + "0: must be at least 1 measured call"};
  if (!(c.rate > 0)) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%g", c.rate);
    return Error{opt("--rate") + buf + ": the rate must be greater than 0 calls/s (e.g. --rate 50000)"};
  }
  if (c.window == 0) return Error{opt("--window") + "0: at least 1 call must be allowed in flight (e.g. --window 64)"};
  for (const auto& [name, cpu] : {std::pair{"--client-core", c.client_core}, std::pair{"--server-core", c.server_core}}) {
    if (cpu < -1 || (cpu >= 0 && !core::cpu_exists(cpu))) {
      return Error{opt(name) + std::to_string(cpu) + ": CPU " + std::to_string(cpu) +
                   " does not exist or is not allowed for this process; use one of " + cpu_choice() +
                   " (or -1 to leave the thread unpinned)"};
    }
  }
  if (c.message_size < 8 || c.message_size > (1U << 20)) {
    return Error{opt("--message-size") + std::to_string(c.message_size) + ": must be between 8 and 1048576 bytes"};
  }
  if (c.segment_size < 4096) {
    return Error{opt("--segment-size") + std::to_string(c.segment_size) + ": must be at least 4096 bytes (e.g. 64MiB)"};
  }
  if (c.connections == 0) return Error{opt("--connections") + "0: at least 1 connection"};
  return {};
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

using detail::with_commas;

/// Progress line and quiet sampling while a run is measured. Lives on its own
/// (unpinned) thread that wakes every 100 ms; it reads one atomic counter and,
/// once per quiet interval, /proc.
class RunMonitor {
 public:
  RunMonitor(std::ostream& out, bool live, double quiet_interval_s, std::int64_t bench_start_ns)
      : out_(out), live_(live), quiet_interval_s_(quiet_interval_s), bench_start_ns_(bench_start_ns) {}

  void begin(std::string label) {
    label_ = std::move(label);
    done_.store(0);
    total_.store(0);
    samples_.clear();
    stop_ = false;
    start_ns_ = core::monotonic_ns();
    thread_ = std::thread([this] { loop(); });
  }

  std::vector<QuietSample> end() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
    if (live_) out_ << "\r\033[K" << std::flush;
    return std::move(samples_);
  }

  std::atomic<std::uint64_t>& done() { return done_; }
  std::atomic<std::uint64_t>& total() { return total_; }

 private:
  void loop() {
    ProcSampler sampler;
    std::int64_t last_sample = core::monotonic_ns();
    std::int64_t last_print = 0;
    std::unique_lock<std::mutex> lock(mu_);
    while (!cv_.wait_for(lock, std::chrono::milliseconds(100), [this] { return stop_; })) {
      const std::int64_t now = core::monotonic_ns();
      if (quiet_interval_s_ > 0 && static_cast<double>(now - last_sample) * 1e-9 >= quiet_interval_s_) {
        samples_.push_back(sampler.sample(static_cast<double>(now - bench_start_ns_) * 1e-9));
        last_sample = now;
      }
      if (live_ && now - last_print >= 500'000'000) {
        last_print = now;
        const std::uint64_t d = done_.load(std::memory_order_relaxed);
        const std::uint64_t t = total_.load(std::memory_order_relaxed);
        char pct[16] = "";
        if (t > 0) std::snprintf(pct, sizeof(pct), " (%.0f%%)", 100.0 * static_cast<double>(d) / static_cast<double>(t));
        char el[32];
        std::snprintf(el, sizeof(el), "%.1f s", static_cast<double>(now - start_ns_) * 1e-9);
        out_ << "\r\033[K" << label_ << "  " << with_commas(d) << "/" << with_commas(t) << " calls" << pct << "  " << el
             << std::flush;
      }
    }
  }

  std::ostream& out_;
  bool live_;
  double quiet_interval_s_;
  std::int64_t bench_start_ns_;
  std::string label_;
  std::atomic<std::uint64_t> done_{0};
  std::atomic<std::uint64_t> total_{0};
  std::vector<QuietSample> samples_;
  std::int64_t start_ns_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace

Expected<std::uint64_t> parse_size(std::string_view text) {
  const std::string s = trim(text);
  std::size_t k = 0;
  while (k < s.size() && std::isdigit(static_cast<unsigned char>(s[k])) != 0) ++k;
  std::uint64_t n = 0;
  if (k == 0 || !parse_number(std::string_view(s).substr(0, k), n)) {
    return Error{"'" + s + "' is not a size (use bytes or a suffix: 64MiB, 640MiB, 1GiB)"};
  }
  std::string suffix = s.substr(k);
  std::uint64_t mult = 1;
  if (suffix.empty() || suffix == "B") {
    mult = 1;
  } else if (suffix == "K" || suffix == "KiB" || suffix == "k") {
    mult = 1ULL << 10;
  } else if (suffix == "M" || suffix == "MiB") {
    mult = 1ULL << 20;
  } else if (suffix == "G" || suffix == "GiB") {
    mult = 1ULL << 30;
  } else {
    return Error{"'" + s + "': unknown size suffix '" + suffix + "' (use KiB, MiB or GiB)"};
  }
  if (n > UINT64_MAX / mult) return Error{"'" + s + "' is too large"};
  return n * mult;
}

Expected<bool> parse_on_off(std::string_view text) {
  const std::string s = trim(text);
  if (s == "on" || s == "true" || s == "1" || s == "yes") return true;
  if (s == "off" || s == "false" || s == "0" || s == "no") return false;
  return Error{"'" + s + "' is not on or off"};
}

Expected<ArmSpec> parse_arm(std::string_view text) {
  const auto colon = text.find(':');
  ArmSpec arm;
  arm.name = trim(text.substr(0, colon));
  if (arm.name.empty()) return Error{"--arm '" + std::string(text) + "': expected NAME:key=value[,key=value...]"};
  for (const char ch : arm.name) {
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_' || ch == '.')) {
      return Error{"--arm '" + std::string(text) + "': an arm name uses letters, digits, '-', '_' or '.'"};
    }
  }
  if (colon == std::string_view::npos) return arm;  // an arm with no overrides: the baseline
  std::string_view rest = text.substr(colon + 1);
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    const auto eq = item.find('=');
    if (eq == std::string_view::npos || trim(item.substr(0, eq)).empty()) {
      return Error{"--arm " + arm.name + ": '" + std::string(item) + "' is not key=value"};
    }
    arm.overrides.emplace_back(trim(item.substr(0, eq)), trim(item.substr(eq + 1)));
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  return arm;
}

std::vector<std::vector<std::size_t>> interleaved_order(std::size_t arms, std::uint32_t runs) {
  std::vector<std::vector<std::size_t>> order;
  for (std::uint32_t r = 0; r < runs; ++r) {
    std::vector<std::size_t> round;
    for (std::size_t a = 0; a < arms; ++a) round.push_back(r % 2 == 0 ? a : arms - 1 - a);
    order.push_back(std::move(round));
  }
  return order;
}

Expected<void> check_tcp_reachable(const std::string& host, std::uint16_t port, int timeout_ms) {
  const std::string where = host + ":" + std::to_string(port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  const int gai = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res);
  if (gai != 0) return Error{where + ": cannot resolve (" + ::gai_strerror(gai) + ")"};
  std::string failure = "no address";
  bool ok = false;
  for (addrinfo* a = res; a != nullptr && !ok; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) continue;
    int rc = ::connect(fd, a->ai_addr, a->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      rc = ::poll(&p, 1, timeout_ms);
      if (rc == 1) {
        int err = 0;
        socklen_t len = sizeof(err);
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
        if (err == 0) {
          ok = true;
        } else {
          failure = std::strerror(err);
        }
      } else {
        failure = "no answer within " + std::to_string(timeout_ms) + " ms";
      }
    } else if (rc == 0) {
      ok = true;
    } else {
      failure = std::strerror(errno);
    }
    ::close(fd);
  }
  ::freeaddrinfo(res);
  if (!ok) return Error{where + ": " + failure};
  return {};
}

Expected<Plan> plan_bench(const BenchConfig& config, const LaneRegistry& registry) {
  Plan plan;
  if (config.runs == 0) return Error{"--runs 0: at least 1 run per configuration"};
  if (!(config.bracket_tolerance > 0) || !std::isfinite(config.bracket_tolerance)) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%g", config.bracket_tolerance);
    return Error{std::string("--bracket-tolerance ") + buf +
                 ": must be a fraction greater than 0 (0.10: brackets agree within 10%)"};
  }

  // Lanes.
  std::vector<const Lane*> lanes;
  std::vector<std::string> unavailable;
  for (const std::string& name : config.lanes) {
    const Lane* lane = registry.find(name);
    if (lane == nullptr) {
      return Error{"--lanes: unknown lane '" + name + "' (known: " + join(registry.names()) + ")"};
    }
    if (std::find(lanes.begin(), lanes.end(), lane) != lanes.end() || contains(unavailable, name)) continue;
    if (!lane->available || !lane->run) {
      unavailable.push_back(name);
      plan.notes.push_back("lane " + name + ": not available in this build");
      continue;
    }
    lanes.push_back(lane);
  }
  if (lanes.empty()) {
    return Error{"lane " + (unavailable.empty() ? std::string("?") : unavailable.front()) +
                 ": not available in this build (available: " + join(registry.available_names()) + ")"};
  }

  // Variant filter: every entry must name a variant of a selected lane.
  for (const std::string& v : config.variants) {
    const auto colon = v.find(':');
    const std::string lane_name = colon == std::string::npos ? "" : v.substr(0, colon);
    const std::string variant = colon == std::string::npos ? v : v.substr(colon + 1);
    bool matched = false;
    std::string choices;
    for (const Lane* lane : lanes) {
      if (!lane_name.empty() && lane->name != lane_name) continue;
      matched = matched || contains(lane->variants, variant);
      choices += (choices.empty() ? "" : "; ") + lane->name + ": " + join(lane->variants);
    }
    if (!matched) {
      return Error{"--variants: '" + v + "' is not a variant of the selected lanes (" +
                   (choices.empty() ? "lane '" + lane_name + "' is not selected" : choices) + ")"};
    }
  }

  // Engines.
  const EngineRegistry& engines = EngineRegistry::instance();
  for (const std::string& e : config.engines) {
    if (engines.find(e) == nullptr) {
      return Error{"--engines: unknown engine '" + e + "' (known: " + join(engines.names()) + ")"};
    }
  }

  // Cells: (lane, variant, engine).
  struct Cell {
    const Lane* lane;
    std::string variant;
    std::string engine;
  };
  std::vector<Cell> cells;
  for (const Lane* lane : lanes) {
    std::vector<std::string> variants;
    bool filtered = false;
    for (const std::string& v : config.variants) {
      const auto colon = v.find(':');
      const std::string lane_name = colon == std::string::npos ? "" : v.substr(0, colon);
      const std::string variant = colon == std::string::npos ? v : v.substr(colon + 1);
      if (!lane_name.empty() && lane_name != lane->name) continue;
      if (!contains(lane->variants, variant)) continue;
      filtered = true;
      if (!contains(variants, variant)) variants.push_back(variant);
    }
    if (!filtered && !config.variants.empty()) {
      // The filter named variants of other lanes only: this lane runs its defaults.
      variants = lane->default_variants;
    } else if (!filtered) {
      variants = lane->default_variants;
    }
    if (variants.empty()) variants.push_back("default");
    for (const std::string& v : variants) {
      if (lane->uses_engine) {
        for (const std::string& e : config.engines) {
          if (!lane->engines.empty() && !contains(lane->engines, e)) {
            const std::string note = "lane " + lane->name + ": engine " + e + " left out (this lane drives " +
                                     join(lane->engines) + ")";
            if (!contains(plan.notes, note)) plan.notes.push_back(note);
            continue;
          }
          const EngineInfo* info = engines.find(e);
          if (info == nullptr || !info->available) {
            const std::string hint = info != nullptr && !info->build_hint.empty() ? "; " + info->build_hint : "";
            return Error{"--engines: engine '" + e + "' is not available in this build (lane " + lane->name + ")" +
                         hint};
          }
          cells.push_back({lane, v, e});
        }
      } else {
        cells.push_back({lane, v, "none"});
      }
    }
  }
  if (cells.empty()) {
    std::string why;
    for (const std::string& n : plan.notes) why += (why.empty() ? "" : "; ") + n;
    return Error{"nothing to run: " + why};
  }

  // Arms.
  std::vector<ArmSpec> arms = config.arms;
  if (!config.experiment.empty() && arms.empty()) {
    return Error{"--experiment " + config.experiment +
                 ": give the arms to compare, e.g. --arm seg64:segment-size=64MiB --arm seg640:segment-size=640MiB"};
  }
  if (arms.empty()) arms.push_back(ArmSpec{"default", {}});
  std::set<std::string> arm_names;
  std::vector<std::string> controls;
  for (const Lane* lane : lanes) controls.insert(controls.end(), lane->controls.begin(), lane->controls.end());
  std::vector<LaneConfig> arm_configs;
  const bool experiment = !config.experiment.empty() || !config.arms.empty();
  if (auto e = validate_config(config.base, ""); !e) return e.error();
  for (const ArmSpec& arm : arms) {
    if (!arm_names.insert(arm.name).second) return Error{"--arm " + arm.name + ": two arms have this name"};
    LaneConfig c = config.base;
    c.arm = arm.name;
    const std::string origin = "--arm " + arm.name + ": ";
    for (const auto& [k, v] : arm.overrides) {
      if (auto e = apply_override(c, k, v, controls, origin); !e) return e.error();
    }
    if (experiment) {
      if (auto e = validate_config(c, origin); !e) return e.error();
    }
    arm_configs.push_back(std::move(c));
  }

  // Output directory: must be creatable and writable now, not after an hour of runs.
  std::error_code ec;
  std::filesystem::create_directories(config.out_dir, ec);
  if (ec) {
    return Error{"--out " + config.out_dir.string() + ": cannot create the directory (" + ec.message() +
                 "); choose a writable directory"};
  }
  {
    const std::filesystem::path probe = config.out_dir / ".hft-bench-write-test";
    std::ofstream f(probe);
    const bool ok = static_cast<bool>(f << "ok");
    f.close();
    std::filesystem::remove(probe, ec);
    if (!ok) return Error{"--out " + config.out_dir.string() + ": the directory is not writable; choose another"};
  }

  // Run directories are spread over the file system. ext4 places a new
  // directory in its parent's block group and a new file in its directory's;
  // without a journal it then passes over every inode of the group removed
  // in the last 1-5 minutes before it takes one, so a run that creates
  // journal segments right after an earlier run removed thousands pays
  // hundreds of us per file, on the venue's journal thread or engine
  // thread. Marked TOPDIR (chattr +T), --out/runs gets each run's directory
  // placed as a top-level one (Orlov: a group with fewer directories and more
  // free inodes than average), not in its parent's group. That lowers the
  // odds, no more: a group just emptied has many free inodes. Only ext2/3/4
  // know the flag; elsewhere nothing is done and nothing said.
  {
    const std::filesystem::path runs_root = config.out_dir / "runs";
    std::filesystem::create_directories(runs_root, ec);
    if (mark_top_directory(runs_root)) {
      plan.notes.push_back("run directories: " + runs_root.string() +
                           " is marked TOPDIR (chattr +T): ext4 spreads each run's directory, and so its "
                           "journals, over block groups as it does top-level ones, not in its parent's group");
    }
  }

  // Interleaved order.
  const auto order = interleaved_order(arms.size(), config.runs);
  std::size_t n = 0;
  for (std::uint32_t r = 0; r < config.runs; ++r) {
    for (const std::size_t a : order[r]) {
      for (std::size_t k = 0; k < cells.size(); ++k) {
        const Cell& cell = cells[r % 2 == 0 ? k : cells.size() - 1 - k];
        PlannedRun pr;
        pr.lane = cell.lane;
        pr.config = arm_configs[a];
        pr.config.lane = cell.lane->name;
        pr.config.variant = cell.variant;
        pr.config.engine = cell.engine;
        pr.config.repeat = r;
        pr.config.run_dir = config.out_dir / "runs" / run_id(++n, pr.config);
        pr.bracketed = cell.lane->uses_engine && config.bracket_calls > 0;
        plan.runs.push_back(std::move(pr));
      }
    }
  }

  // Lane preflights, once per distinct (cell, arm).
  for (const PlannedRun& pr : plan.runs) {
    if (pr.config.repeat != 0 || !pr.lane->preflight) continue;
    if (auto e = pr.lane->preflight(pr.config); !e) return e.error();
  }
  // Lanes that plan their own run sets, last.
  for (const Lane* lane : lanes) {
    if (!lane->expand_plan) continue;
    if (auto e = lane->expand_plan(plan, config.out_dir); !e) return e.error();
  }
  return plan;
}

void print_lane_summaries(const BenchConfig& config, const LaneRegistry& registry, const Report& report,
                          std::ostream& out) {
  std::vector<const Lane*> done;
  for (const std::string& name : config.lanes) {
    const Lane* lane = registry.find(name);
    if (lane == nullptr || !lane->print_summary || std::find(done.begin(), done.end(), lane) != done.end())
      continue;
    done.push_back(lane);
    lane->print_summary(report, out);
  }
}

Expected<Report> run_bench(const BenchConfig& config, const Plan& plan, std::ostream& console,
                           std::ostream& progress) {
  Report rep;
  const std::int64_t bench_start = core::monotonic_ns();
  // Wall-clock start, for the StartTime of the HdrHistogram logs.
  const double bench_epoch_s =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  rep.command_line = config.command_line;
  rep.started_utc = utc_now();
  rep.build = build_info();
  rep.source = source_identity(rep.build.source_dir);
  rep.host = host_info();
  rep.experiment = config.experiment.empty() && !config.arms.empty() ? "experiment" : config.experiment;
  rep.arms = config.arms;
  rep.runs_per_cell = config.runs;
  rep.notes = plan.notes;
  rep.engines = config.engines;
  rep.bracket_calls = config.bracket_calls;
  rep.bracket_tolerance = config.bracket_tolerance;
  for (const std::string& n : plan.notes) console << n << "\n";

  std::error_code ec;
  const std::filesystem::path series_dir = config.out_dir / "series";
  std::filesystem::create_directories(series_dir, ec);
  if (ec) return Error{series_dir.string() + ": cannot create (" + ec.message() + ")"};

  const core::TscClock tsc = core::TscClock::calibrate();
  rep.tsc_hz = tsc.hz();
  rep.tsc_calibration = "best of 3 x 20 ms windows against CLOCK_MONOTONIC_RAW at start";

  // Quiet check before anything runs.
  {
    ProcSampler sampler;
    std::this_thread::sleep_for(std::chrono::duration<double>(config.quiet_before_s));
    rep.quiet_before.push_back(sampler.sample(static_cast<double>(core::monotonic_ns() - bench_start) * 1e-9));
  }
  if (config.require_quiet) {
    const QuietVerdict before = judge_quiet(rep.quiet_before, {}, config.load_limit, config.process_limit_percent);
    if (!before.quiet) return Error{std::string(kNotQuietPrefix) + before.reason};
  }

  bool live = config.progress == ProgressMode::kOn;
  if (config.progress == ProgressMode::kAuto) live = ::isatty(STDERR_FILENO) != 0;
  RunMonitor monitor(progress, live, config.quiet_interval_s, bench_start);

  // Writes a series' raw files (HFTRAW, CSV, .hlog) as "series/<id>.<name>.*"
  // and analyses it.
  const auto keep = [&](const Series& s, const std::string& id, double started_s,
                        double wall_s) -> Expected<SeriesRecord> {
    SeriesRecord sr;
    sr.name = s.name;
    sr.unit = s.unit;
    sr.ticks_per_second = s.ticks_per_second;
    sr.analysis = analyze(s);
    const std::string base = id + "." + s.name;
    sr.binary_file = "series/" + base + ".hftraw";
    if (auto e = write_binary(config.out_dir / sr.binary_file, s); !e) return e.error();
    if (config.write_csv) {
      sr.csv_file = "series/" + base + ".csv";
      if (auto e = write_csv(config.out_dir / sr.csv_file, s); !e) return e.error();
    }
    sr.hlog_file = "series/" + base + ".hlog";
    if (auto e = write_hlog(config.out_dir / sr.hlog_file, s, bench_epoch_s + started_s, wall_s); !e) {
      return e.error();
    }
    return sr;
  };
  // One floor bracket of a run ("before" or "after"). A floor run that fails
  // is recorded in the bracket; only an output file that cannot be written
  // stops the bench.
  const auto bracket = [&](const PlannedRun& pr, const std::string& id, const char* which,
                           const std::string& label) -> Expected<BracketRun> {
    BracketRun b;
    b.id = id + ".bracket-" + which;
    b.started_s = static_cast<double>(core::monotonic_ns() - bench_start) * 1e-9;
    RunContext ctx;
    ctx.tsc = &tsc;
    Expected<RunResult> floor = run_floor(bracket_config(pr.config, config.bracket_calls), ctx);
    b.elapsed_s = static_cast<double>(core::monotonic_ns() - bench_start) * 1e-9 - b.started_s;
    if (!floor || floor->series.empty()) {
      b.error = floor ? std::string("the floor run returned no series") : floor.error().message;
      progress << label << ": floor bracket " << which << ": FAILED: " << b.error << "\n" << std::flush;
      return b;
    }
    b.wall_seconds = floor->wall_seconds;
    b.completed = floor->completed;
    b.warmup_done = floor->warmup_done;
    b.audit = floor->audit;
    auto sr = keep(floor->series.front(), b.id, b.started_s, b.wall_seconds);
    if (!sr) return sr.error();
    b.series = std::move(*sr);
    return b;
  };

  std::vector<QuietSample> all_during;
  for (std::size_t k = 0; k < plan.runs.size(); ++k) {
    const PlannedRun& pr = plan.runs[k];
    RunRecord rec;
    rec.order = k + 1;
    rec.config = pr.config;
    rec.id = run_id(rec.order, pr.config);
    // A scratch directory left by an interrupted earlier bench with the same
    // --out would add its journals to this run's audit: start empty.
    // Moved aside, emptied, not removed (removals slow later file creation:
    // journal_audits.cpp).
    if (!set_aside_stale_run(pr.config.run_dir, config.out_dir)) std::filesystem::remove_all(pr.config.run_dir, ec);
    std::filesystem::create_directories(pr.config.run_dir, ec);

    const std::string label = "[" + std::to_string(k + 1) + "/" + std::to_string(plan.runs.size()) + "] " +
                              pr.config.lane + " " + pr.config.variant +
                              (pr.config.engine != "none" ? " " + pr.config.engine : "") + " " + pr.config.arm +
                              " #" + std::to_string(pr.config.repeat + 1);
    std::optional<Bracket> brackets;
    if (pr.bracketed) {
      auto before = bracket(pr, rec.id, "before", label);
      if (!before) return before.error();
      brackets.emplace();
      brackets->before = std::move(*before);
    }
    rec.started_s = static_cast<double>(core::monotonic_ns() - bench_start) * 1e-9;
    RunContext ctx;
    ctx.tsc = &tsc;
    monitor.begin(label);
    ctx.progress = &monitor.done();
    ctx.progress_total = &monitor.total();
    Expected<RunResult> result = pr.lane->run(pr.config, ctx);
    rec.quiet_during = monitor.end();
    rec.elapsed_s = static_cast<double>(core::monotonic_ns() - bench_start) * 1e-9 - rec.started_s;
    if (brackets) {
      auto after = bracket(pr, rec.id, "after", label);
      if (!after) return after.error();
      brackets->after = std::move(*after);
      rec.bracket = std::move(brackets);
    }
    rec.quiet = judge_quiet({}, rec.quiet_during, config.load_limit, config.process_limit_percent);
    all_during.insert(all_during.end(), rec.quiet_during.begin(), rec.quiet_during.end());

    if (!result) {
      rec.error = result.error().message;
      progress << label << ": FAILED: " << rec.error << "\n" << std::flush;
      // The run directory is kept: it may hold the journal to look at.
      rep.runs.push_back(std::move(rec));
      continue;
    }
    rec.result = std::move(*result);
    for (Series& s : rec.result.series) {
      auto sr = keep(s, rec.id, rec.started_s, rec.result.wall_seconds);
      if (!sr) return sr.error();
      rec.series.push_back(std::move(*sr));
    }
    // The events beside the series, and which of them overlap the primary
    // series' long calls (docs/lab.md, "Event trace and attribution").
    if (rec.result.events.traced) {
      rec.events_file = "series/" + rec.id + ".events.csv";
      if (auto e = write_events_csv(config.out_dir / rec.events_file, rec.result.events, tsc.hz()); !e) {
        return e.error();
      }
      const Series* attributed = rec.result.series.empty() ? nullptr : &rec.result.series.front();
      for (const Series& s : rec.result.series) {
        if (!rec.result.attributed_series.empty() && s.name == rec.result.attributed_series) attributed = &s;
      }
      if (attributed != nullptr && attributed->unit == Unit::kTscTicks) {
        rec.attribution = attribute_long_calls(*attributed, rec.result.events.events);
      }
    }
    rec.result.series.clear();
    rec.result.series.shrink_to_fit();
    // Leave no empty scratch directory behind (lanes without a journal).
    std::filesystem::remove(pr.config.run_dir, ec);

    const Stats& primary = rec.series.empty() ? Stats{} : rec.series.front().analysis.stats;
    progress << label << ": " << (rec.series.empty() ? "" : rec.series.front().name + " ") << "p50 "
             << format_ns(primary.quantile("p50")) << ", p99 " << format_ns(primary.quantile("p99")) << ", max "
             << format_ns(primary.max_ns) << ", " << rec.elapsed_s << " s";
    if (rec.bracket) {
      const BracketCheck c = check_bracket(*rec.bracket, config.bracket_tolerance);
      if (c.measured) {
        progress << "; floor brackets p50 " << format_ns(c.before_p50_ns) << " -> " << format_ns(c.after_p50_ns)
                 << ", drift " << detail::fixed(c.drift_p50 * 100, 1) << "%" << (c.agree ? "" : " (DO NOT AGREE)");
      } else {
        progress << "; floor brackets not measured";
      }
    }
    progress << "\n";
    if (rec.attribution) progress << label << ": " << attribution_line(*rec.attribution) << "\n";
    progress << std::flush;
    rep.runs.push_back(std::move(rec));
  }
  set_aside_emptied_journals(config.out_dir);

  rep.quiet = judge_quiet(rep.quiet_before, all_during, config.load_limit, config.process_limit_percent);
  if (auto e = write_report_json(config.out_dir / "report.json", rep); !e) return e.error();
  if (auto e = write_report_html(config.out_dir / "report.html", rep); !e) return e.error();
  if (auto e = write_audit_json(config.out_dir / "audit.json", rep); !e) return e.error();
  // Last: the manifest of everything the run wrote (hft-bench verify checks it).
  auto manifest = write_manifest(config.out_dir);
  if (!manifest) return manifest.error();

  console << console_table(rep);
  // Each traced run's long calls and the events overlapping them (report.html has the table).
  for (const RunRecord& r : rep.runs) {
    if (r.attribution) console << r.id << ": " << attribution_line(*r.attribution) << "\n";
  }
  std::size_t failed = 0;
  std::size_t audit_failed = 0;
  for (const RunRecord& r : rep.runs) {
    failed += r.error.empty() ? 0 : 1;
    audit_failed += r.result.audit.status == AuditResult::Status::kFail ? 1 : 0;
  }
  console << "quiet check: " << (rep.quiet.quiet ? "quiet" : "NOT quiet: " + rep.quiet.reason) << "\n";
  console << "audit: " << (audit_failed == 0 ? "passed" : std::to_string(audit_failed) + " run(s) FAILED") << "; "
          << (failed == 0 ? "all runs completed" : std::to_string(failed) + " run(s) failed") << "\n";
  console << "report: " << (config.out_dir / "report.json").string() << ", " << (config.out_dir / "report.html").string()
          << ", raw series in " << series_dir.string() << "\n";
  console << "manifest: " << (config.out_dir / kManifestName).string() << " (" << manifest->size()
          << " files; check with hft-bench verify " << config.out_dir.string() << ")\n";
  return rep;
}

LaneConfig bracket_config(const LaneConfig& run, std::uint64_t calls) {
  LaneConfig c;
  c.lane = std::string(kBracketLane);
  c.variant = std::string(kBracketVariant);
  c.arm = run.arm;
  c.repeat = run.repeat;
  c.calls = calls;
  c.warmup = run.warmup;
  c.client_core = run.client_core;
  c.server_core = run.server_core;
  c.message_size = run.message_size;
  return c;
}

std::string run_id(std::size_t order, const LaneConfig& c) {
  char num[16];
  std::snprintf(num, sizeof(num), "r%03zu", order);
  std::string id = std::string(num) + "-" + c.lane + "-" + c.variant;
  if (c.engine != "none") id += "-" + c.engine;
  id += "-" + c.arm;
  for (char& ch : id) {
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_' || ch == '.')) ch = '_';
  }
  return id;
}

}  // namespace hft::lab
