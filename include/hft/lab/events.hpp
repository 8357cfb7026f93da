// Events lined up with a run's calls, and the attribution of long calls
// (docs/lab.md, "Event trace and attribution").
//
// A run may carry events in the clock of its series (TSC ticks, offsets
// from the series' time origin): the engine's own (source "client": the
// timed process; "venue": hft-venue; "client-journal" and "venue-journal":
// their journal service threads; kinds of hft/core/trace.hpp such as
// "rotate", "prefault", "unmap", "partial_send") and the operating
// system's, sampled from the timed thread's own counters after every call
// (source "os": "involuntary_switches", "voluntary_switches",
// "minor_faults", "major_faults", each an interval: the window since the
// previous sample, `a` the count in it). attribute_long_calls() then lists,
// for each call at or above a threshold, the events that overlap it.
//
// The events of a run are kept as "series/<run id>.events.csv":
//
//   # hft-lab events, csv v1
//   # unit=tsc_ticks
//   # ticks_per_second=2399987654
//   # dropped=0
//   source,kind,thread,begin,end,a,b
//   venue,rotate,hft-journal,1830047112,1830047190,3,67108864
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "hft/core/expected.hpp"
#include "hft/lab/series.hpp"

namespace hft::lab {

/// One event, in the clock of the run's series.
struct RunEvent {
  std::string source;      ///< "client", "venue", "client-journal", "venue-journal" or "os"
  std::string kind;        ///< see the file comment
  std::string thread;      ///< name of the thread it happened on ("" unknown)
  std::int64_t begin = 0;  ///< offset from the series' time origin (ticks; negative: before it)
  std::int64_t end = 0;    ///< >= begin (== begin: a point event)
  std::uint64_t a = 0;     ///< per kind (hft/core/trace.hpp; os: the count)
  std::uint64_t b = 0;
};

/// The events of one run, as a lane returns them.
struct RunEvents {
  bool traced = false;               ///< false: the run had no event trace (nothing below means anything)
  std::vector<RunEvent> events;      ///< sorted by begin
  std::uint64_t dropped = 0;         ///< records or samples lost (a ring or buffer was full)
  std::vector<std::string> sources;  ///< what was traced, e.g. "client engine", "venue engine", "os counters"
};

/// Sorts by (begin, end, source, kind).
void sort_events(std::vector<RunEvent>& events);

/// A call at or above the threshold and the events overlapping it.
struct LongCall {
  std::size_t index = 0;            ///< sample index in the series
  std::int64_t start = 0;           ///< series time (ticks from the origin)
  std::int64_t duration = 0;        ///< the sample (ticks)
  /// Indices into the events, ascending: the first kMaxEventsPerCall of
  /// those overlapping the call.
  std::vector<std::size_t> events;
  std::size_t overlapping = 0;      ///< how many events overlap it (>= events.size())
  /// Every distinct "source:kind" among them, in order of first overlap.
  std::vector<std::string> kinds;
};

/// Bounds on what an attribution keeps, so that a run whose calls are
/// nearly all long (a paced run behind its schedule: a million calls each
/// overlapping hundreds of samples) costs kilobytes, not gigabytes, in
/// memory and in report.json. The totals are always over every call.
inline constexpr std::size_t kMaxListedCalls = 2000;
inline constexpr std::size_t kMaxEventsPerCall = 64;

/// The attribution of one series' long calls.
struct Attribution {
  std::string series;  ///< the series' name
  double threshold_ns = 100'000;
  std::uint64_t long_calls = 0;    ///< calls >= threshold
  /// The longest kMaxListedCalls of them (ties: the earlier), in call order.
  std::vector<LongCall> calls;
  std::uint64_t unattributed = 0;  ///< calls >= threshold with no overlapping event
  /// "source:kind" -> how many long calls it overlaps (over every long call).
  std::map<std::string, std::uint64_t> calls_by_kind;
};

/// Finds every call of `series` whose value is >= threshold_ns and the
/// events whose [begin, end] overlaps [start, start + value]; counts them
/// all and lists the longest `max_listed` (see Attribution). A series
/// without start times (Series::time empty) gets no calls.
[[nodiscard]] Attribution attribute_long_calls(const Series& series, const std::vector<RunEvent>& events,
                                               double threshold_ns = 100'000,
                                               std::size_t max_listed = kMaxListedCalls);

/// "source:kind".
[[nodiscard]] std::string event_key(const RunEvent& event);

/// Writes the events (see the file comment). Error names the path.
[[nodiscard]] Expected<void> write_events_csv(const std::filesystem::path& path, const RunEvents& events,
                                              double ticks_per_second);
/// Reads what write_events_csv wrote (traced is true). Error names the path and line.
[[nodiscard]] Expected<RunEvents> read_events_csv(const std::filesystem::path& path,
                                                  double* ticks_per_second = nullptr);

}  // namespace hft::lab
