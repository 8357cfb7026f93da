// The engine lanes' --admin-scrape control (issue 14: the admin endpoint is
// "served without touching the engine thread's latency"): while a run is
// measured, a thread of hft-bench asks the venue's admin endpoint (hft-venue
// --http-port 0) for GET /metrics and GET /sessions in turn, `rate` requests
// per second in all, planned at t0 + i / rate, over one keep-alive
// connection (cpp-httplib's client, as hft-admin). Reads only: nothing that
// changes the venue's state is sent during a latency run.
//
// On the venue's side a GET /sessions is one request to the engine thread's
// mailbox (a snapshot of every session), a GET /metrics two (EngineStats,
// then the sessions); JSON and Prometheus text are made on the endpoint's own
// threads (docs/admin.md).
#pragma once

#include <cstdint>
#include <string>

#include "side_thread.hpp"

namespace hft::lab::lanes {

struct AdminScraperOptions {
  std::string host = "127.0.0.1";
  int port = 0;
  double rate = 100;  ///< requests per second, both paths together (> 0)
  int core = -1;      ///< CPU to pin to; -1: the process's own mask (SideThread)
};

/// Requests of one path, read after stop().
struct ScrapeCounts {
  const char* path = "";
  std::uint64_t requests = 0;
  std::uint64_t failures = 0;  ///< no answer, or a status other than 200
  std::uint64_t bytes = 0;     ///< body bytes of the answers
  std::uint64_t total_ns = 0;  ///< request sent -> whole answer read, summed
  std::uint64_t max_ns = 0;
  std::string first_failure;
};

struct AdminScrapeCounts {
  AdminScrapeCounts() noexcept {
    paths[0].path = "/metrics";
    paths[1].path = "/sessions";
  }
  ScrapeCounts paths[2];
  double seconds = 0;
};

/// The scraper (see the file comment); its thread's role is "admin-scraper".
class AdminScraper final : public SideThread {
 public:
  explicit AdminScraper(AdminScraperOptions options)
      : SideThread("admin-scraper", options.core), options_(std::move(options)) {}
  ~AdminScraper() { stop(); }

  /// What it asked and got (after stop()).
  [[nodiscard]] const AdminScrapeCounts& counts() const noexcept { return counts_; }
  /// One line for a run's notes (after stop()).
  [[nodiscard]] std::string describe() const;

 private:
  void work() noexcept override;

  AdminScraperOptions options_;
  AdminScrapeCounts counts_;
};

}  // namespace hft::lab::lanes
