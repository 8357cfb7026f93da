#include "admin_scraper.hpp"

#include <httplib.h>

#include <algorithm>
#include <cstdio>
#include <ctime>

#include "hft/core/clock.hpp"

namespace hft::lab::lanes {

void AdminScraper::work() noexcept {
  try {
    httplib::Client client(options_.host, options_.port);
    client.set_keep_alive(true);
    client.set_tcp_nodelay(true);
    client.set_connection_timeout(2, 0);
    client.set_read_timeout(5, 0);
    const std::int64_t t0 = core::monotonic_ns();
    const double period_ns = 1e9 / options_.rate;
    for (std::uint64_t i = 0; !stopping();) {
      const std::int64_t due = t0 + static_cast<std::int64_t>(static_cast<double>(i) * period_ns);
      const std::int64_t now = core::monotonic_ns();
      if (now < due) {
        // In slices, so that stop() is not kept waiting at low rates.
        const std::int64_t wait = std::min<std::int64_t>(due - now, 5'000'000);
        const timespec ts{0, static_cast<long>(wait)};
        ::nanosleep(&ts, nullptr);
        continue;
      }
      ScrapeCounts& p = counts_.paths[i % 2];
      ++i;
      const std::int64_t start = core::monotonic_ns();
      auto res = client.Get(p.path);
      const auto took = static_cast<std::uint64_t>(core::monotonic_ns() - start);
      ++p.requests;
      p.total_ns += took;
      p.max_ns = std::max(p.max_ns, took);
      if (!res || res->status != 200) {
        ++p.failures;
        if (p.first_failure.empty()) {
          p.first_failure = res ? "status " + std::to_string(res->status) + ": " + res->body.substr(0, 120)
                                : "no answer: " + httplib::to_string(res.error());
        }
      } else {
        p.bytes += res->body.size();
      }
    }
    counts_.seconds = static_cast<double>(core::monotonic_ns() - t0) * 1e-9;
  } catch (const std::exception& e) {
    counts_.paths[0].first_failure = std::string("scraper stopped: ") + e.what();
    ++counts_.paths[0].failures;
  }
}

std::string AdminScraper::describe() const {
  const AdminScrapeCounts& c = counts_;
  const double rate = options_.rate;
  std::uint64_t requests = 0;
  for (const ScrapeCounts& p : c.paths) requests += p.requests;
  char head[160];
  std::snprintf(head, sizeof head, "%llu GET requests in %.2f s (%.1f/s, target %.0f/s)",
                static_cast<unsigned long long>(requests), c.seconds,
                c.seconds > 0 ? static_cast<double>(requests) / c.seconds : 0.0, rate);
  std::string text = head;
  for (const ScrapeCounts& p : c.paths) {
    char line[256];
    std::snprintf(
        line, sizeof line,
        "; %s: %llu requests, %llu failures, reply mean %.0f us max %.0f us, %.1f KiB "
        "per reply",
        p.path, static_cast<unsigned long long>(p.requests), static_cast<unsigned long long>(p.failures),
        p.requests != 0 ? static_cast<double>(p.total_ns) * 1e-3 / static_cast<double>(p.requests) : 0.0,
        static_cast<double>(p.max_ns) * 1e-3,
        p.requests > p.failures
            ? static_cast<double>(p.bytes) / 1024.0 / static_cast<double>(p.requests - p.failures)
            : 0.0);
    text += line;
    if (!p.first_failure.empty()) text += " (first failure: " + p.first_failure + ")";
  }
  char tail[64];
  std::snprintf(tail, sizeof tail, "; scraper thread CPU %.1f ms", static_cast<double>(cpu_ns()) * 1e-6);
  return text + tail;
}

}  // namespace hft::lab::lanes
