// What hft-bench's main needs from the load lane beyond its registration:
// one run set per --sessions entry (the plan expanded before the runs) and
// the lane's own console table with the issue-15 criterion after them.
#pragma once

#include <filesystem>
#include <iosfwd>

#include "hft/core/expected.hpp"
#include "hft/lab/bench.hpp"
#include "hft/lab/report.hpp"

namespace hft::lab::lanes {

/// Replaces each planned load run (extra "sessions" a list N1,N2,...) by one
/// run per N and variant, in the order N1 max, N1 paced, N2 max, ... within
/// its (repeat, arm) (a paced run's default rate comes from the max run of
/// its set, which runs first). The arm becomes "<arm>-n<N>" ("n<N>" for the
/// default arm) so every N has its own summary row; run directories are
/// renumbered as the runner numbers its runs.
[[nodiscard]] Expected<void> expand_load_runs(Plan& plan, const std::filesystem::path& out_dir);

/// Prints the load lane's figures of the runs in `report` (nothing when no
/// load run finished): per N and variant messages/s, ns/message, probe
/// round trips unloaded and loaded, venue memory, disk and start-up, then
/// the criterion line.
void print_load_summary(const Report& report, std::ostream& out);

}  // namespace hft::lab::lanes
