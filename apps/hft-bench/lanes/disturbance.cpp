#include "disturbance.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "hft/core/clock.hpp"

namespace hft::lab::lanes {

namespace fs = std::filesystem;

namespace {

// A rate of the control `key`: absent (false), or a finite number >= 0.
Expected<bool> read_rate(const LaneConfig& config, const char* key, const char* unit, double& rate) {
  const auto it = config.extra.find(key);
  if (it == config.extra.end()) return false;
  char* end = nullptr;
  rate = std::strtod(it->second.c_str(), &end);
  if (it->second.empty() || end != it->second.c_str() + it->second.size() || !std::isfinite(rate) ||
      rate < 0) {
    // "--garbage-peer x: ..." from the command line, "--arm a: garbage-peer=x: ..." from an arm.
    const std::string given = config.arm == "default" ? "--" + std::string(key) + " " + it->second
                                                      : "--arm " + config.arm + ": " + key + "=" + it->second;
    return Error{given + ": expected " + unit + " per second, >= 0 (0: prepare the venue, send nothing)"};
  }
  return true;
}

std::string ms(std::uint64_t ns) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f ms", static_cast<double>(ns) * 1e-6);
  return text;
}

// The number just before `at` in `line` (0 if none).
std::uint64_t number_before(const std::string& line, std::size_t at) {
  std::size_t start = at;
  while (start > 0 && line[start - 1] >= '0' && line[start - 1] <= '9') --start;
  return start == at ? 0 : std::strtoull(line.c_str() + start, nullptr, 10);
}

}  // namespace

Expected<Disturbances> Disturbances::from(const LaneConfig& config) {
  Disturbances d;
  auto garbage = read_rate(config, "garbage-peer", "pieces of garbage", d.garbage_rate_);
  if (!garbage) return garbage.error();
  auto scrape = read_rate(config, "admin-scrape", "admin requests", d.scrape_rate_);
  if (!scrape) return scrape.error();
  d.garbage_ = *garbage;
  d.scrape_ = *scrape;
  return d;
}

Expected<void> Disturbances::check(const LaneConfig& config) {
  auto d = from(config);
  if (!d) return d.error();
  if (!d->any()) return {};
  const char* key = d->garbage_ ? "garbage-peer" : "admin-scrape";
  if (config.venue_port != 0) {
    return Error{std::string(key) +
                 ": needs the lab's own venue (leave --venue out): the run configures it (" +
                 (d->garbage_ ? "the peer's session" : "its admin endpoint") + ") and reads its log"};
  }
  if (d->garbage_ && config.variant.ends_with("-tls")) {
    return Error{"garbage-peer: --variants " + config.variant +
                 ": the hostile peer speaks plain TCP; run it with a variant without TLS"};
  }
  return {};
}

void Disturbances::prepare(VenueSpec& spec, const fs::path& run_dir) const {
  if (garbage_) {
    // The peer's own session: in memory (its Logons and Logouts are not the
    // run's journals), so its pieces reach a session and its WARN lines.
    VenueSession hostile;
    hostile.client_comp_id = kHostileCompId;
    hostile.keys = "PersistMessages=N\n";
    spec.sessions.push_back(std::move(hostile));
  }
  if (scrape_) {
    const fs::path file = run_dir / "venue.http-port";
    spec.extra_args.insert(spec.extra_args.end(), {"--http-port", "0", "--http-port-file", file.string()});
  }
}

Expected<void> Disturbances::start(const VenueProcess& venue, const LaneConfig& config) {
  if (!any()) return {};
  before_ = venue_threads(venue.pid());
  started_ns_ = core::monotonic_ns();
  if (scrape_) {
    // hft-venue writes its admin port right after its FIX port.
    http_port_file_ = config.run_dir / "venue.http-port";
    int port = 0;
    for (int tries = 0; tries < 1000 && port <= 0; ++tries) {
      std::ifstream f(http_port_file_);
      if (!(f >> port)) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (port <= 0) return Error{"admin-scrape: the venue wrote no admin port to " + http_port_file_.string()};
    if (scrape_rate_ > 0) {
      AdminScraperOptions o;
      o.port = port;
      o.rate = scrape_rate_;
      o.core = config.server_core;
      scraper_ = std::make_unique<AdminScraper>(o);
      scraper_->start();
    }
  }
  if (garbage_ && garbage_rate_ > 0) {
    GarbagePeerOptions o;
    o.port = venue.port();
    o.rate = garbage_rate_;
    o.core = config.server_core;
    o.seed = 0x9e3779b97f4a7c15ULL ^ config.repeat;
    peer_ = std::make_unique<GarbagePeer>(o);
    peer_->start();
  }
  return {};
}

void Disturbances::stop(const VenueProcess& venue, RunResult& result) {
  if (!any()) return;
  if (peer_) {
    peer_->stop();
    result.notes.emplace_back("garbage peer", peer_->describe());
    result.threads.push_back(peer_->placement());
  } else if (garbage_) {
    result.notes.emplace_back(
        "garbage peer",
        std::string("off (garbage-peer=0; the venue has the peer's session ") + kHostileCompId + ", unused)");
  }
  if (scraper_) {
    scraper_->stop();
    result.notes.emplace_back("admin scraper", scraper_->describe());
    result.threads.push_back(scraper_->placement());
  } else if (scrape_) {
    result.notes.emplace_back("admin scraper",
                              "off (admin-scrape=0; the venue's admin endpoint is on, not asked)");
  }
  // Where the venue's threads ran over the window: its engine thread (the
  // main thread), the journal helper, and the others (log writer, admin
  // endpoint), which no option pins.
  const double window_ns = static_cast<double>(core::monotonic_ns() - started_ns_);
  std::map<int, ThreadTimes> start;
  for (const ThreadTimes& t : before_) start[t.tid] = t;
  std::string engine, journal;
  std::uint64_t other_run = 0, other_wait = 0;
  int others = 0;
  std::set<int> other_cpus;
  for (const ThreadTimes& t : venue_threads(venue.pid())) {
    const ThreadTimes& b = start.count(t.tid) != 0 ? start[t.tid] : ThreadTimes{};
    const std::uint64_t run = t.run_ns - b.run_ns, wait = t.wait_ns - b.wait_ns;
    char text[160];
    std::snprintf(text, sizeof text,
                  "%s on a CPU (%.0f%% of the window), %s runnable waiting, last on CPU %d", ms(run).c_str(),
                  window_ns > 0 ? 100.0 * static_cast<double>(run) / window_ns : 0.0, ms(wait).c_str(),
                  t.cpu);
    if (t.tid == venue.pid()) {
      engine = text;
    } else if (t.name.rfind("hft-journal", 0) == 0) {
      journal += (journal.empty() ? "" : "; ") + t.name + " " + text;
    } else if (run != 0 || wait != 0) {
      ++others;
      other_run += run;
      other_wait += wait;
      if (t.cpu >= 0) other_cpus.insert(t.cpu);
    }
  }
  std::string cpus;
  for (const int c : other_cpus) cpus += (cpus.empty() ? "" : ",") + std::to_string(c);
  result.notes.emplace_back("venue threads during the run",
                            "engine thread " + engine + "; " +
                                (journal.empty() ? std::string() : journal + "; ") + std::to_string(others) +
                                " other thread(s) that ran (log writer, admin endpoint; not pinned): " +
                                ms(other_run) + " on a CPU, " + ms(other_wait) +
                                " runnable waiting, last on CPU(s) " + (cpus.empty() ? "-" : cpus));
}

void Disturbances::after_venue_stop(const VenueProcess& venue, const fs::path& run_dir,
                                    RunResult& result) const {
  if (!any()) return;
  // The venue logs at warn to its stderr (RUN/venue.log), through its
  // AsyncLogger; refused connections are summed up per reason and second,
  // a session's WARN lines held to LogRateLimit per second.
  std::ifstream f(run_dir / "venue.log");
  std::string line;
  std::uint64_t warn = 0, error = 0, garbled = 0, refusal_lines = 0, refusals_held = 0, summaries = 0,
                suppressed = 0;
  while (std::getline(f, line)) {
    const bool is_warn = line.find(" WARN ") != std::string::npos;
    warn += is_warn ? 1 : 0;
    error += line.find(" ERROR ") != std::string::npos ? 1 : 0;
    if (!is_warn) continue;
    if (line.find("Garbled input ignored") != std::string::npos) ++garbled;
    if (const auto at = line.find(" similar lines suppressed"); at != std::string::npos) {
      ++summaries;
      suppressed += number_before(line, at);
    }
    if (line.find(" WARN engine refusing") != std::string::npos ||
        line.find(" WARN engine closing") != std::string::npos) {
      ++refusal_lines;
      if (const auto at = line.find(" more since the last report"); at != std::string::npos) {
        refusals_held += number_before(line, at);
      }
    }
  }
  char text[512];
  std::snprintf(
      text, sizeof text,
      "%llu WARN lines written (%llu about refused or closed connections, summing up %llu more not "
      "written one by one; %llu 'Garbled input ignored'; %llu 'similar lines suppressed' summaries for "
      "%llu WARN lines held back by LogRateLimit), %llu ERROR lines",
      static_cast<unsigned long long>(warn), static_cast<unsigned long long>(refusal_lines),
      static_cast<unsigned long long>(refusals_held), static_cast<unsigned long long>(garbled),
      static_cast<unsigned long long>(summaries), static_cast<unsigned long long>(suppressed),
      static_cast<unsigned long long>(error));
  result.notes.emplace_back("venue log", text);
  // hft-venue's EngineStats at exit (the line before its order counters).
  const std::string stats = venue.log_line_from("hft-venue: engine: ");
  if (!stats.empty()) result.notes.emplace_back("venue EngineStats at exit", stats.substr(19));
}

std::vector<Disturbances::ThreadTimes> Disturbances::venue_threads(int pid) {
  std::vector<ThreadTimes> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    ThreadTimes t;
    t.tid = std::atoi(entry.path().filename().c_str());
    std::ifstream comm(entry.path() / "comm");
    std::getline(comm, t.name);
    const ThreadSched s = thread_sched(pid, t.tid);
    t.run_ns = s.run_ns;
    t.wait_ns = s.wait_ns;
    t.cpu = thread_last_cpu(pid, t.tid);
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace hft::lab::lanes
