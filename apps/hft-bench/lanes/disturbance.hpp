// What disturbs a tx or rtt run from outside, on purpose (issue 14):
//
//   garbage-peer=RATE   a hostile client (garbage_peer.hpp) sends RATE pieces
//                       of garbage per second to the venue port the measured
//                       session uses
//   admin-scrape=RATE   a thread of hft-bench asks the venue's admin endpoint
//                       for GET /metrics and GET /sessions, RATE requests per
//                       second (admin_scraper.hpp)
//
// Lane controls (LaneConfig::extra; --garbage-peer / --admin-scrape, or an
// --arm key). A key that is present prepares the venue for it even at 0, so
// that an experiment's control arm runs the same venue: garbage-peer adds
// the peer's own session (HOSTILE, PersistMessages=N), admin-scrape starts
// the admin endpoint (hft-venue --http-port 0). The disturbing thread runs
// only when RATE > 0, from after the journal threads settled (before the
// warm-up) until every ExecutionReport arrived, pinned to --server-core (the
// venue's core: the timed client's core stays its own). The run's notes say
// what was sent and what the venue did about it (its log and EngineStats)
// and where the venue's threads ran meanwhile.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "admin_scraper.hpp"
#include "garbage_peer.hpp"
#include "hft/core/expected.hpp"
#include "hft/lab/lane.hpp"
#include "lane_support.hpp"

namespace hft::lab::lanes {

/// The lane controls of this file.
inline const std::vector<std::string> kDisturbanceControls{"garbage-peer", "admin-scrape"};

class Disturbances {
 public:
  /// Reads the controls of `config` (errors name the key and what to give).
  [[nodiscard]] static Expected<Disturbances> from(const LaneConfig& config);
  /// Preflight: the values parse, and the run starts its own venue.
  [[nodiscard]] static Expected<void> check(const LaneConfig& config);

  /// True when either key is present.
  [[nodiscard]] bool any() const noexcept { return garbage_ || scrape_; }

  /// Adds what the venue needs to `spec` (before it starts).
  void prepare(VenueSpec& spec, const std::filesystem::path& run_dir) const;
  /// Starts the threads with a positive rate against `venue`; snapshots the
  /// venue's threads. Call after the settle, before the lane's loop.
  [[nodiscard]] Expected<void> start(const VenueProcess& venue, const LaneConfig& config);
  /// Stops them and adds their notes and placements to `result`; notes the
  /// venue's threads over the window. Call after the loop.
  void stop(const VenueProcess& venue, RunResult& result);
  /// Notes what the venue's log says (call after the venue stopped).
  void after_venue_stop(const VenueProcess& venue, const std::filesystem::path& run_dir,
                        RunResult& result) const;

 private:
  struct ThreadTimes {
    int tid = 0;
    std::string name;
    std::uint64_t run_ns = 0, wait_ns = 0;
    int cpu = -1;
  };
  static std::vector<ThreadTimes> venue_threads(int pid);

  bool garbage_ = false, scrape_ = false;
  double garbage_rate_ = 0, scrape_rate_ = 0;
  std::filesystem::path http_port_file_;
  std::unique_ptr<GarbagePeer> peer_;
  std::unique_ptr<AdminScraper> scraper_;
  std::vector<ThreadTimes> before_;
  std::int64_t started_ns_ = 0;
};

}  // namespace hft::lab::lanes
