// Internal: the JSON objects report.json holds for one series' statistics
// and one summary row. Shared by the report writer and by verify, which
// rebuilds them from the raw series and compares them with the file.
#pragma once

#include <nlohmann/json.hpp>

#include "hft/lab/report.hpp"

namespace hft::lab::detail {

/// report.json runs[].series[].stats for `s`.
[[nodiscard]] nlohmann::json stats_json(const Stats& s);
/// report.json summary[] entry for `row`.
[[nodiscard]] nlohmann::json summary_json(const SummaryRow& row);
/// report.json runs[].bracket.check: the verdict of a run's brackets.
[[nodiscard]] nlohmann::json bracket_check_json(const BracketCheck& check);
/// report.json runs[].attribution for `a` (its calls carry their events' indices and kinds).
[[nodiscard]] nlohmann::json attribution_json(const Attribution& a);
/// `v`, or null when it is NaN or infinite (JSON has neither).
[[nodiscard]] nlohmann::json number_or_null(double v);

}  // namespace hft::lab::detail
