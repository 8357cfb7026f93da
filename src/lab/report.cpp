#include "hft/lab/report.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <tuple>

#include "report_json.hpp"
#include "text.hpp"

namespace hft::lab {

using nlohmann::json;

namespace detail {

json stats_json(const Stats& s) {
  json j;
  j["count"] = s.count;
  j["min_ns"] = s.min_ns;
  j["mean_ns"] = s.mean_ns;
  for (std::size_t q = 0; q < kQuantiles.size(); ++q) j[std::string(kQuantiles[q].label) + "_ns"] = s.quantile_ns[q];
  j["max_ns"] = s.max_ns;
  j["max_index"] = s.max_index;
  json longs = json::object();
  for (std::size_t t = 0; t < kLongCallThresholdsNs.size(); ++t) {
    longs[std::string(kLongCallLabels[t])] = {{"threshold_ns", kLongCallThresholdsNs[t]},
                                              {"count", s.long_indices[t].size()},
                                              {"indices", s.long_indices[t]}};
  }
  j["long_calls"] = longs;
  return j;
}

json summary_json(const SummaryRow& row) {
  json median = json::object();
  median["min_ns"] = row.summary.median_min_ns;
  median["mean_ns"] = row.summary.median_mean_ns;
  for (std::size_t q = 0; q < kQuantiles.size(); ++q) {
    median[std::string(kQuantiles[q].label) + "_ns"] = row.summary.median_quantile_ns[q];
  }
  json totals = json::object();
  json medians = json::object();
  for (std::size_t t = 0; t < kLongCallThresholdsNs.size(); ++t) {
    totals[std::string(kLongCallLabels[t])] = row.summary.long_total[t];
    medians[std::string(kLongCallLabels[t])] = row.summary.long_median[t];
  }
  return {{"lane", row.lane},
          {"variant", row.variant},
          {"engine", row.engine},
          {"arm", row.arm},
          {"series", row.series},
          {"runs", row.summary.runs},
          {"run_orders", row.run_orders},
          {"total_count", row.summary.total_count},
          {"median", median},
          {"largest_max_ns", row.summary.largest_max_ns},
          {"largest_max_run", row.run_orders.empty() ? 0 : row.run_orders[row.summary.largest_max_run]},
          {"long_calls_total", totals},
          {"long_calls_median_per_run", medians},
          {"target_rate", row.target_rate},
          {"median_achieved_rate", row.median_achieved_rate},
          {"late_total", row.late_total},
          {"shed_total", row.shed_total},
          {"per_run", {{"p50_ns", row.run_p50_ns}, {"p99_ns", row.run_p99_ns}}},
          {"comparison",
           {{"bracketed", row.bracketed},
            {"compared_runs", row.compared_runs},
            {"left_out_runs", row.left_out_runs},
            {"compared_p50_ns", number_or_null(row.compared_p50_ns)},
            {"compared_p99_ns", number_or_null(row.compared_p99_ns)},
            {"baseline_engine", row.baseline_engine},
            {"baseline_runs", row.baseline_runs},
            {"status", std::string(to_string(row.ratio_status))},
            {"ratio_p50", number_or_null(row.ratio_p50)},
            {"ratio_p99", number_or_null(row.ratio_p99)},
            {"floor_p50_ns", number_or_null(row.floor_p50_ns)},
            {"floor_ratio_p50", number_or_null(row.floor_ratio_p50)}}}};
}

json bracket_check_json(const BracketCheck& c) {
  return {{"measured", c.measured},
          {"before_p50_ns", c.before_p50_ns},
          {"after_p50_ns", c.after_p50_ns},
          {"before_p99_ns", c.before_p99_ns},
          {"after_p99_ns", c.after_p99_ns},
          {"drift_p50", number_or_null(c.drift_p50)},
          {"drift_p99", number_or_null(c.drift_p99)},
          {"agree", c.agree}};
}

json number_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

}  // namespace detail

namespace {

using detail::attribution_json;
using detail::bracket_check_json;
using detail::number_or_null;
using detail::stats_json;
using detail::summary_json;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();


using detail::fixed;
using detail::with_commas;

std::string key_of(const RunRecord& r, const SeriesRecord& s) {
  return r.config.lane + '\x1f' + r.config.variant + '\x1f' + r.config.engine + '\x1f' + r.config.arm + '\x1f' + s.name;
}

json quiet_sample_json(const QuietSample& q) {
  json busiest = json::array();
  for (const ProcessCpu& p : q.busiest) {
    busiest.push_back({{"pid", p.pid}, {"comm", p.comm}, {"cpu_percent", p.cpu_percent}});
  }
  return {{"at_s", q.at_s},   {"interval_s", q.interval_s}, {"load1", q.load1},
          {"load5", q.load5}, {"load15", q.load15},         {"busiest", busiest}};
}

json config_json(const LaneConfig& c) {
  json extra = json::object();
  for (const auto& [k, v] : c.extra) extra[k] = v;
  return {{"calls", c.calls},
          {"warmup", c.warmup},
          {"rate", c.rate},
          {"window", c.window},
          {"client_core", c.client_core},
          {"server_core", c.server_core},
          {"message_size", c.message_size},
          {"journal", {{"segment_size", c.segment_size}, {"prealloc", c.prealloc}}},
          {"venue", c.venue_port == 0 ? std::string("self-started") : c.venue_host + ":" + std::to_string(c.venue_port)},
          {"connections", c.connections},
          {"extra", extra}};
}

json audit_json(const AuditResult& a) {
  return {{"status", std::string(to_string(a.status))}, {"checked", a.checked}, {"detail", a.detail}};
}

json series_json(const SeriesRecord& s) {
  return {{"name", s.name},
          {"unit", std::string(to_string(s.unit))},
          {"ticks_per_second", s.ticks_per_second},
          {"files", {{"csv", s.csv_file}, {"binary", s.binary_file}, {"hlog", s.hlog_file}}},
          {"stats", stats_json(s.analysis.stats)}};
}

json bracket_run_json(const BracketRun& b) {
  return {{"id", b.id},
          {"error", b.error},
          {"started_s", b.started_s},
          {"elapsed_s", b.elapsed_s},
          {"wall_seconds", b.wall_seconds},
          {"completed", b.completed},
          {"warmup_done", b.warmup_done},
          {"audit", audit_json(b.audit)},
          {"series", b.error.empty() ? series_json(b.series) : json(nullptr)}};
}

json bracket_json(const Bracket& b, double tolerance) {
  return {{"lane", std::string(kBracketLane)},
          {"variant", std::string(kBracketVariant)},
          {"tolerance", tolerance},
          {"before", bracket_run_json(b.before)},
          {"after", bracket_run_json(b.after)},
          {"check", bracket_check_json(check_bracket(b, tolerance))}};
}

json events_json(const RunRecord& r) {
  const RunEvents& e = r.result.events;
  if (!e.traced) return json(nullptr);
  json counts = json::object();
  for (const RunEvent& ev : e.events) {
    const std::string key = event_key(ev);
    counts[key] = counts.value(key, 0) + 1;
  }
  return {{"file", r.events_file}, {"count", e.events.size()}, {"dropped", e.dropped},
          {"sources", e.sources}, {"by_kind", counts}};
}

}  // namespace

json detail::attribution_json(const Attribution& a) {
  json calls = json::array();
  for (const LongCall& c : a.calls) {
    calls.push_back({{"index", c.index}, {"start", c.start}, {"duration", c.duration}, {"events", c.events},
                     {"overlapping", c.overlapping}, {"kinds", c.kinds}});
  }
  json by_kind = json::object();
  for (const auto& [k, n] : a.calls_by_kind) by_kind[k] = n;
  return {{"series", a.series},           {"threshold_ns", a.threshold_ns},
          {"long_calls", a.long_calls}, {"with_events", a.long_calls - a.unattributed},
          {"unattributed", a.unattributed}, {"calls_by_kind", by_kind},
          {"listed", a.calls.size()},
          {"listed_rule", "the longest " + std::to_string(kMaxListedCalls) + " calls, in call order, each with the first " +
                              std::to_string(kMaxEventsPerCall) + " of its overlapping events"},
          {"calls", calls}};
}

namespace {

json run_json(const RunRecord& r, double bracket_tolerance) {
  json j;
  j["order"] = r.order;
  j["id"] = r.id;
  j["lane"] = r.config.lane;
  j["variant"] = r.config.variant;
  j["engine"] = r.config.engine;
  j["arm"] = r.config.arm;
  j["repeat"] = r.config.repeat;
  j["started_s"] = r.started_s;
  j["elapsed_s"] = r.elapsed_s;
  j["error"] = r.error;
  j["config"] = config_json(r.config);
  json threads = json::array();
  for (const ThreadPlacement& t : r.result.threads) {
    threads.push_back({{"role", t.role},
                       {"requested_cpu", t.requested_cpu},
                       {"cpu_at_start", t.cpu_at_start},
                       {"cpu_at_end", t.cpu_at_end},
                       {"smt_siblings", t.requested_cpu >= 0 ? cpu_siblings(t.requested_cpu) : std::string("n/a")}});
  }
  j["threads"] = threads;
  const RunResult& x = r.result;
  j["completed"] = x.completed;
  j["warmup_done"] = x.warmup_done;
  j["wall_seconds"] = x.wall_seconds;
  j["target_rate"] = x.target_rate;
  j["achieved_rate"] = x.achieved_rate;
  j["late"] = x.late;
  j["late_threshold_ns"] = x.late_threshold_ns;
  j["shed"] = x.shed;
  j["shed_indices"] = x.shed_indices;
  j["overflow"] = x.overflow;
  j["window"] = x.window;
  j["max_in_flight"] = x.max_in_flight;
  j["audit"] = audit_json(x.audit);
  json notes = json::object();
  for (const auto& [k, v] : x.notes) notes[k] = v;
  j["notes"] = notes;
  json during = json::array();
  for (const QuietSample& q : r.quiet_during) during.push_back(quiet_sample_json(q));
  j["quiet"] = {{"quiet", r.quiet.quiet}, {"reason", r.quiet.reason}, {"during", during}};
  json series = json::array();
  for (const SeriesRecord& s : r.series) series.push_back(series_json(s));
  j["series"] = series;
  j["bracket"] = r.bracket ? bracket_json(*r.bracket, bracket_tolerance) : json(nullptr);
  j["events"] = events_json(r);
  j["attribution"] = r.attribution ? attribution_json(*r.attribution) : json(nullptr);
  return j;
}

json report_json(const Report& rep) {
  json j;
  j["format"] = "hft-lab-report";
  j["version"] = 1;
  json cond;
  cond["command_line"] = rep.command_line;
  cond["started_utc"] = rep.started_utc;
  cond["source"] = {{"commit", rep.source.commit}, {"how", rep.source.how}, {"dirty", rep.source.dirty}};
  cond["build"] = {{"compiler", rep.build.compiler},
                   {"build_type", rep.build.build_type},
                   {"cxx_flags", rep.build.cxx_flags},
                   {"options", rep.build.options},
                   {"compile_time_commit", rep.build.compile_time_commit}};
  cond["host"] = {{"hostname", rep.host.hostname},         {"kernel", rep.host.kernel},
                  {"cpu_model", rep.host.cpu_model},       {"online_cpus", rep.host.online_cpus},
                  {"allowed_cpus", rep.host.allowed_cpus}, {"isolated_cpus", rep.host.isolated_cpus},
                  {"smt_active", rep.host.smt},            {"tsc_flags", rep.host.tsc_flags},
                  {"clocksource", rep.host.clocksource},   {"governor", rep.host.governor},
                  {"turbo", rep.host.turbo}};
  cond["clocks"] = {{"tsc_hz", rep.tsc_hz}, {"calibration", rep.tsc_calibration}};
  // Journal settings and message sizes as used by the runs (they can differ per arm).
  std::set<std::pair<std::uint64_t, bool>> journals;
  std::set<std::size_t> sizes;
  std::set<std::string> cores;
  for (const RunRecord& r : rep.runs) {
    journals.insert({r.config.segment_size, r.config.prealloc});
    sizes.insert(r.config.message_size);
    cores.insert("client " + std::to_string(r.config.client_core) + ", server " + std::to_string(r.config.server_core));
  }
  json jj = json::array();
  for (const auto& [seg, pre] : journals) jj.push_back({{"segment_size", seg}, {"prealloc", pre}});
  cond["journal"] = jj;
  cond["message_size"] = sizes;
  cond["cores_requested"] = cores;
  json before = json::array();
  for (const QuietSample& q : rep.quiet_before) before.push_back(quiet_sample_json(q));
  cond["quiet"] = {{"quiet", rep.quiet.quiet}, {"reason", rep.quiet.reason}, {"before", before}};
  j["conditions"] = cond;
  json arms = json::array();
  for (const ArmSpec& a : rep.arms) {
    json o = json::object();
    for (const auto& [k, v] : a.overrides) o[k] = v;
    arms.push_back({{"name", a.name}, {"overrides", o}});
  }
  j["experiment"] = {{"name", rep.experiment}, {"arms", arms}, {"runs_per_cell", rep.runs_per_cell}};
  j["notes"] = rep.notes;
  j["engines"] = rep.engines;
  j["brackets"] = {{"lane", std::string(kBracketLane)},
                   {"variant", std::string(kBracketVariant)},
                   {"calls", rep.bracket_calls},
                   {"tolerance", rep.bracket_tolerance},
                   {"judged_by", "p50 drift |after - before| / before <= tolerance"}};
  json runs = json::array();
  for (const RunRecord& r : rep.runs) runs.push_back(run_json(r, rep.bracket_tolerance));
  j["runs"] = runs;
  json summary = json::array();
  for (const SummaryRow& row : summarize_report(rep)) summary.push_back(summary_json(row));
  j["summary"] = summary;
  return j;
}

using detail::write_text_file;

// ---- HTML ------------------------------------------------------------------

std::string esc(std::string_view s) {
  std::string o;
  o.reserve(s.size());
  for (const char c : s) {
    switch (c) {
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '&': o += "&amp;"; break;
      case '"': o += "&quot;"; break;
      default: o += c;
    }
  }
  return o;
}

constexpr std::array<const char*, 10> kPalette{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                               "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};
constexpr std::array<const char*, 3> kDashes{"", "6,3", "2,2"};

/// Log-scale y range covering [lo, hi] ns on whole 1-2-5 steps.
struct LogAxis {
  double lo_exp;
  double hi_exp;
  explicit LogAxis(double lo, double hi) {
    lo = std::max(lo, 1.0);
    hi = std::max(hi, lo * 1.5);
    lo_exp = std::floor(std::log10(lo));
    hi_exp = std::ceil(std::log10(hi));
    if (hi_exp <= lo_exp) hi_exp = lo_exp + 1;
  }
  [[nodiscard]] double frac(double v) const {
    return (std::log10(std::max(v, 1.0)) - lo_exp) / (hi_exp - lo_exp);
  }
};

struct Frame {
  double w = 860, h = 380, left = 80, right = 20, top = 20, bottom = 50;
  [[nodiscard]] double px(double fx) const { return left + fx * (w - left - right); }
  [[nodiscard]] double py(double fy) const { return h - bottom - fy * (h - top - bottom); }
};

void y_axis(std::ostringstream& o, const Frame& f, const LogAxis& ax) {
  for (double e = ax.lo_exp; e <= ax.hi_exp + 1e-9; e += 1) {
    for (const double m : {1.0, 2.0, 5.0}) {
      const double v = m * std::pow(10.0, e);
      const double fy = ax.frac(v);
      if (fy < -1e-9 || fy > 1 + 1e-9) continue;
      const double y = f.py(fy);
      o << "<line x1='" << f.left << "' x2='" << f.w - f.right << "' y1='" << y << "' y2='" << y
        << "' stroke='" << (m == 1.0 ? "#ccc" : "#eee") << "'/>";
      o << "<text x='" << f.left - 6 << "' y='" << y + 4 << "' text-anchor='end'>" << esc(format_ns(v)) << "</text>";
    }
  }
}

std::string legend_label(const RunRecord& r) {
  std::string s = "run " + std::to_string(r.order);
  if (r.config.arm != "default") s += " " + r.config.arm;
  if (r.config.engine != "none") s += " " + r.config.engine;
  return s;
}

struct Curve {
  const RunRecord* run;
  const SeriesRecord* series;
};

void percentile_svg(std::ostringstream& o, const std::vector<Curve>& curves, const std::string& title) {
  Frame f;
  double lo = 1e300;
  double hi = 0;
  double xmax = 1;
  for (const Curve& c : curves) {
    for (const CurvePoint& p : c.series->analysis.curve) {
      lo = std::min(lo, p.value_ns);
      hi = std::max(hi, p.value_ns);
    }
    xmax = std::max(xmax, std::ceil(std::log10(std::max<double>(2, static_cast<double>(c.series->analysis.stats.count)))));
  }
  if (hi <= 0) return;
  const LogAxis ax(lo, hi);
  o << "<svg xmlns='http://www.w3.org/2000/svg' width='" << f.w << "' height='" << f.h + 18 * ((curves.size() + 3) / 4)
    << "' font-family='sans-serif' font-size='11'>";
  o << "<text x='" << f.left << "' y='13' font-weight='bold'>" << esc(title) << "</text>";
  y_axis(o, f, ax);
  const auto xof = [&](double p) { return f.px(std::log10(1.0 / (1.0 - p)) / xmax); };
  const std::vector<std::pair<double, const char*>> xt{{0.0, "0%"}, {0.5, "50%"}, {0.9, "90%"}, {0.99, "99%"},
                                                       {0.999, "99.9%"}, {0.9999, "99.99%"}, {0.99999, "99.999%"},
                                                       {0.999999, "99.9999%"}, {0.9999999, "99.99999%"}};
  for (const auto& [p, label] : xt) {
    if (std::log10(1.0 / (1.0 - p)) > xmax + 1e-9) continue;
    const double x = xof(p);
    o << "<line x1='" << x << "' x2='" << x << "' y1='" << f.top << "' y2='" << f.h - f.bottom << "' stroke='#eee'/>";
    o << "<text x='" << x << "' y='" << f.h - f.bottom + 14 << "' text-anchor='middle'>" << label << "</text>";
  }
  o << "<text x='" << (f.left + f.w - f.right) / 2 << "' y='" << f.h - f.bottom + 32
    << "' text-anchor='middle'>percentile (log 1/(1-p) axis; last point of a curve = true maximum)</text>";
  o << "<rect x='" << f.left << "' y='" << f.top << "' width='" << f.w - f.left - f.right << "' height='"
    << f.h - f.top - f.bottom << "' fill='none' stroke='#888'/>";
  for (std::size_t k = 0; k < curves.size(); ++k) {
    const auto& pts = curves[k].series->analysis.curve;
    o << "<polyline fill='none' stroke-width='1.5' stroke='" << kPalette[k % kPalette.size()] << "'";
    if (*kDashes[(k / kPalette.size()) % kDashes.size()] != '\0') {
      o << " stroke-dasharray='" << kDashes[(k / kPalette.size()) % kDashes.size()] << "'";
    }
    o << " points='";
    for (const CurvePoint& p : pts) o << fixed(xof(p.p), 1) << ',' << fixed(f.py(ax.frac(p.value_ns)), 1) << ' ';
    o << "'><title>" << esc(legend_label(*curves[k].run)) << "</title></polyline>";
    const double lx = f.left + static_cast<double>(k % 4) * 200;
    const double ly = f.h + 4 + static_cast<double>(k / 4) * 18;
    o << "<line x1='" << lx << "' x2='" << lx + 24 << "' y1='" << ly << "' y2='" << ly << "' stroke-width='2' stroke='"
      << kPalette[k % kPalette.size()] << "'/>";
    o << "<text x='" << lx + 30 << "' y='" << ly + 4 << "'>" << esc(legend_label(*curves[k].run)) << "</text>";
  }
  o << "</svg>\n";
}

// Engine events worth a mark even when no long call overlaps them.
bool always_marked(const RunEvent& e) {
  return e.source != "os" && (e.kind == "rotate" || e.kind == "spare_missing" || e.kind == "inline_create" ||
                              e.kind == "reconnect" || e.kind == "resend_served");
}

// Marks along the bottom of a long-call plot, in each run's colour: the
// events overlapping a long call of the plotted series (a taller mark) and
// every journal rotation, inline segment creation, reconnect and resend.
void event_marks(std::ostringstream& o, const Frame& f, const std::vector<Curve>& curves, double tmax) {
  constexpr std::size_t kMaxMarks = 2000;  // per run
  for (std::size_t k = 0; k < curves.size(); ++k) {
    const RunRecord& r = *curves[k].run;
    if (!r.attribution || r.attribution->series != curves[k].series->name) continue;
    const std::vector<RunEvent>& events = r.result.events.events;
    std::vector<bool> overlaps(events.size(), false);
    for (const LongCall& c : r.attribution->calls) {
      for (const std::size_t i : c.events) overlaps[i] = true;
    }
    const double tps = curves[k].series->ticks_per_second;
    std::size_t marks = 0;
    for (std::size_t i = 0; i < events.size() && marks < kMaxMarks; ++i) {
      const RunEvent& e = events[i];
      if (!overlaps[i] && !always_marked(e)) continue;
      const double t = static_cast<double>(e.begin) / tps;
      if (t < 0 || t > tmax) continue;
      ++marks;
      const double x = f.px(t / tmax);
      const double y0 = f.h - f.bottom;
      o << "<line x1='" << fixed(x, 1) << "' x2='" << fixed(x, 1) << "' y1='" << y0 << "' y2='"
        << y0 - (overlaps[i] ? 12 : 6) << "' stroke='" << kPalette[k % kPalette.size()] << "' stroke-width='1.5'><title>"
        << esc(legend_label(r)) << ": " << esc(event_key(e)) << (e.thread.empty() ? "" : " (" + esc(e.thread) + ")")
        << " at " << fixed(t, 6) << " s for " << esc(format_ns(static_cast<double>(e.end - e.begin) * 1e9 / tps))
        << (overlaps[i] ? ", overlaps a long call" : "") << "</title></line>";
    }
  }
}

void long_calls_svg(std::ostringstream& o, const std::vector<Curve>& curves, const std::string& title) {
  Frame f;
  double lo = 1e300;
  double hi = 0;
  double tmax = 0;
  bool by_index = false;
  std::size_t points = 0;
  for (const Curve& c : curves) {
    for (const LongPoint& p : c.series->analysis.long_points) {
      lo = std::min(lo, p.value_ns);
      hi = std::max(hi, p.value_ns);
      tmax = std::max(tmax, p.time_s);
      ++points;
    }
    by_index = by_index || c.series->analysis.time_from_index;
    if (!c.series->analysis.time_from_index && c.run->result.wall_seconds > 0) {
      tmax = std::max(tmax, c.run->result.wall_seconds);
    }
  }
  if (points == 0) {
    o << "<p class='note'>" << esc(title) << ": no long calls to draw.</p>\n";
    return;
  }
  // Whole 1-2-5 steps, the axis ending at the first tick at or above the
  // last call, so no two labels read the same.
  const std::vector<AxisTick> ticks = axis_ticks(tmax, by_index);
  tmax = ticks.back().value;
  const LogAxis ax(lo, hi);
  o << "<svg xmlns='http://www.w3.org/2000/svg' width='" << f.w << "' height='" << f.h
    << "' font-family='sans-serif' font-size='11'>";
  o << "<text x='" << f.left << "' y='13' font-weight='bold'>" << esc(title) << "</text>";
  y_axis(o, f, ax);
  for (const AxisTick& t : ticks) {
    const double x = f.px(t.value / tmax);
    o << "<line x1='" << x << "' x2='" << x << "' y1='" << f.top << "' y2='" << f.h - f.bottom << "' stroke='#eee'/>";
    o << "<text x='" << x << "' y='" << f.h - f.bottom + 14 << "' text-anchor='middle'>"
      << esc(by_index ? t.label : t.label + " s") << "</text>";
  }
  o << "<text x='" << (f.left + f.w - f.right) / 2 << "' y='" << f.h - f.bottom + 32 << "' text-anchor='middle'>"
    << (by_index ? "call index" : "time since the start of the measured phase") << "</text>";
  o << "<rect x='" << f.left << "' y='" << f.top << "' width='" << f.w - f.left - f.right << "' height='"
    << f.h - f.top - f.bottom << "' fill='none' stroke='#888'/>";
  for (std::size_t k = 0; k < curves.size(); ++k) {
    for (const LongPoint& p : curves[k].series->analysis.long_points) {
      o << "<circle r='2' fill='" << kPalette[k % kPalette.size()] << "' cx='" << fixed(f.px(p.time_s / tmax), 1)
        << "' cy='" << fixed(f.py(ax.frac(p.value_ns)), 1) << "'><title>" << esc(legend_label(*curves[k].run))
        << " call " << p.index << ": " << esc(format_ns(p.value_ns)) << "</title></circle>";
    }
  }
  if (!by_index) event_marks(o, f, curves, tmax);
  o << "</svg>\n";
}

void kv_row(std::ostringstream& o, std::string_view k, std::string_view v) {
  o << "<tr><th>" << esc(k) << "</th><td>" << esc(v) << "</td></tr>\n";
}

// ---- HTML tables: links, spread, comparisons ---------------------------------

std::string percent(double fraction) {
  if (std::isnan(fraction)) return "n/a";
  if (std::isinf(fraction)) return "inf";
  return fixed(fraction * 100, 1) + "%";
}

std::string times(double ratio) { return std::isfinite(ratio) ? fixed(ratio, 2) + "x" : std::string("n/a"); }

std::string run_list(const std::vector<std::size_t>& orders) {
  std::string s;
  for (const std::size_t k : orders) s += (s.empty() ? "" : ", ") + std::to_string(k);
  return s.empty() ? std::string("none") : s;
}

/// Links to a series' raw files, relative to the output directory.
std::string file_links(const SeriesRecord& s) {
  const std::array<std::pair<const char*, const std::string*>, 3> files{
      {{"hftraw", &s.binary_file}, {"csv", &s.csv_file}, {"hlog", &s.hlog_file}}};
  std::string o;
  for (const auto& file : files) {
    if (file.second->empty()) continue;
    o += (o.empty() ? "" : " ") + std::string("<a href='") + esc(*file.second) + "'>" + file.first + "</a>";
  }
  return o;
}

std::string audit_link(const std::string& id, const AuditResult& a, const std::string& error) {
  const bool bad = !error.empty() || a.status == AuditResult::Status::kFail;
  return "<a class='" + std::string(bad ? "bad" : "good") + "' href='#audit-" + esc(id) + "'>audit " +
         (error.empty() ? std::string(to_string(a.status)) : std::string("run failed")) + "</a>";
}

/// One point per run on a line from the smallest to the largest value, the
/// median marked, then "min..max".
std::string spread_cell(const std::vector<double>& values, const std::vector<std::size_t>& orders, double med) {
  if (values.empty()) return "<td></td>";
  const auto [lo_it, hi_it] = std::minmax_element(values.begin(), values.end());
  const double lo = std::min(*lo_it, med);
  const double hi = std::max(*hi_it, med);
  constexpr double kW = 90;
  constexpr double kPad = 4;
  const auto x = [&](double v) { return hi > lo ? kPad + (v - lo) / (hi - lo) * (kW - 2 * kPad) : kW / 2; };
  std::ostringstream o;
  o << "<td><svg xmlns='http://www.w3.org/2000/svg' width='" << kW << "' height='14'><line x1='" << kPad
    << "' x2='" << kW - kPad << "' y1='7' y2='7' stroke='#ccc'/>";
  for (std::size_t k = 0; k < values.size(); ++k) {
    o << "<circle r='2.5' cy='7' cx='" << fixed(x(values[k]), 1) << "' fill='#1f77b4' fill-opacity='0.7'><title>run "
      << orders[k] << ": " << esc(format_ns(values[k])) << "</title></circle>";
  }
  o << "<line y1='1' y2='13' x1='" << fixed(x(med), 1) << "' x2='" << fixed(x(med), 1)
    << "' stroke='#d62728' stroke-width='2'><title>median " << esc(format_ns(med)) << "</title></line></svg> "
    << esc(format_ns(*lo_it)) << ".." << esc(format_ns(*hi_it)) << "</td>";
  return o.str();
}

/// The "x first engine" cell of a summary row.
std::string ratio_cell(const SummaryRow& r) {
  const std::string base = esc(r.baseline_engine);
  switch (r.ratio_status) {
    case RatioStatus::kNone: return "<td>-</td>";
    case RatioStatus::kBaseline:
      return "<td>1.00x (baseline)<br><span class='note'>runs " + run_list(r.compared_runs) + "</span></td>";
    case RatioStatus::kCompared:
      return "<td>" + times(r.ratio_p50) + " / " + times(r.ratio_p99) + "<br><span class='note'>runs " +
             run_list(r.compared_runs) + " vs " + base + " runs " + run_list(r.baseline_runs) + "</span></td>";
    case RatioStatus::kNoAgreeingRuns: return "<td class='bad'>no agreeing runs: not compared</td>";
    case RatioStatus::kBaselineNoAgreeingRuns:
      return "<td class='bad'>" + base + " has no agreeing runs: not compared</td>";
    case RatioStatus::kNoBaseline: return "<td class='bad'>no " + base + " runs: not compared</td>";
  }
  return "<td></td>";
}

/// True when a row's comparisons are missing or made from fewer runs than it has.
bool flagged(const SummaryRow& r) {
  return !r.left_out_runs.empty() || r.ratio_status == RatioStatus::kNoAgreeingRuns ||
         r.ratio_status == RatioStatus::kBaselineNoAgreeingRuns;
}

const SeriesRecord* series_named(const RunRecord& r, const std::string& name) {
  for (const SeriesRecord& s : r.series) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

void summary_html(std::ostringstream& o, const Report& rep, const std::vector<SummaryRow>& rows) {
  std::map<std::size_t, const RunRecord*> by_order;
  for (const RunRecord& r : rep.runs) by_order[r.order] = &r;
  bool engines = false;
  bool bracketed = false;
  std::string baseline;
  for (const SummaryRow& r : rows) {
    engines = engines || r.engine != "none";
    bracketed = bracketed || r.bracketed;
    if (baseline.empty()) baseline = r.baseline_engine;
  }
  o << "<h2>Summary</h2>\n<p class='note'>Medians of per-run statistics; beside p50 and p99 one point per run "
       "(median in red) and the runs' min..max.";
  if (engines) {
    o << " x first engine: ratio of this row's medians (p50 / p99) over the same lane, variant, arm and series of "
      << esc(baseline) << (bracketed ? ", from runs whose floor brackets agree only" : ", from every run (no brackets)") << ".";
  }
  if (bracketed) o << " x floor: this row's median p50 over the median of its runs' floor-bracket p50s.";
  o << " Rows in red had runs left out of their comparisons.</p>\n";
  o << "<table><tr><th>lane</th><th>variant</th><th>engine</th><th>arm</th><th>series</th><th>runs</th><th>min</th>";
  for (const QuantileSpec& q : kQuantiles) {
    o << "<th>" << q.label << "</th>";
    if (q.label == "p50" || q.label == "p99") o << "<th>" << q.label << " per run</th>";
  }
  o << "<th>mean</th><th>largest max</th>";
  if (engines) o << "<th>x first engine (p50 / p99)</th>";
  if (bracketed) o << "<th>floor p50 (brackets)</th><th>x floor p50</th><th>compared runs</th>";
  for (const auto& l : kLongCallLabels) o << "<th>" << esc(l) << "</th>";
  o << "<th>achieved / target calls/s</th><th>late</th><th>shed</th><th>raw files and audit per run</th></tr>\n";
  for (const SummaryRow& r : rows) {
    o << "<tr" << (flagged(r) ? " class='flag'" : "") << "><td>" << esc(r.lane) << "</td><td>" << esc(r.variant)
      << "</td><td>" << esc(r.engine) << "</td><td>" << esc(r.arm) << "</td><td>" << esc(r.series) << "</td><td>"
      << r.summary.runs << "</td><td>" << esc(format_ns(r.summary.median_min_ns)) << "</td>";
    for (std::size_t q = 0; q < kQuantiles.size(); ++q) {
      o << "<td>" << esc(format_ns(r.summary.median_quantile_ns[q])) << "</td>";
      if (kQuantiles[q].label == "p50") o << spread_cell(r.run_p50_ns, r.run_orders, r.summary.median_quantile_ns[q]);
      if (kQuantiles[q].label == "p99") o << spread_cell(r.run_p99_ns, r.run_orders, r.summary.median_quantile_ns[q]);
    }
    o << "<td>" << esc(format_ns(r.summary.median_mean_ns)) << "</td><td>" << esc(format_ns(r.summary.largest_max_ns))
      << "</td>";
    if (engines) o << ratio_cell(r);
    if (bracketed) {
      if (!r.bracketed) {
        o << "<td>-</td><td>-</td><td>every run (not bracketed)</td>";
      } else {
        o << "<td>" << (std::isfinite(r.floor_p50_ns) ? esc(format_ns(r.floor_p50_ns)) : std::string("n/a"))
          << "</td><td>" << times(r.floor_ratio_p50) << "</td><td>" << run_list(r.compared_runs);
        if (!r.left_out_runs.empty()) {
          o << "<br><span class='bad'>left out (brackets disagree): " << run_list(r.left_out_runs) << "</span>";
        }
        o << "</td>";
      }
    }
    for (const std::uint64_t c : r.summary.long_total) o << "<td>" << c << "</td>";
    o << "<td>" << fixed(r.median_achieved_rate, 1) << " / "
      << (r.target_rate > 0 ? fixed(r.target_rate, 0) : std::string("closed")) << "</td><td>" << r.late_total
      << "</td><td>" << r.shed_total << "</td><td class='files'>";
    for (std::size_t k = 0; k < r.run_orders.size(); ++k) {
      const RunRecord& run = *by_order.at(r.run_orders[k]);
      const SeriesRecord* s = series_named(run, r.series);
      o << (k == 0 ? "" : "<br>") << "<a href='#run-" << esc(run.id) << "'>run " << run.order << "</a>: "
        << (s != nullptr ? file_links(*s) : std::string()) << " " << audit_link(run.id, run.result.audit, run.error);
    }
    o << "</td></tr>\n";
  }
  o << "</table>\n";
}

void brackets_html(std::ostringstream& o, const Report& rep) {
  std::size_t bracketed = 0;
  std::size_t agree = 0;
  for (const RunRecord& r : rep.runs) {
    if (!r.bracket) continue;
    ++bracketed;
    agree += check_bracket(*r.bracket, rep.bracket_tolerance).agree ? 1 : 0;
  }
  if (bracketed == 0) return;
  o << "<h2>Floor brackets</h2>\n<p class='note'>Each engine run is bracketed by a short floor run (lane "
    << kBracketLane << ", variant " << kBracketVariant << ": raw loopback TCP, closed loop, on the run's cores "
    << "and message size; " << with_commas(rep.bracket_calls) << " calls after the run's warm-up) just before and "
    << "just after it. Its brackets agree when the p50 drift |after - before| / before is at most "
    << percent(rep.bracket_tolerance) << "; the summary's comparisons use only runs whose brackets agree.</p>\n";
  o << "<p class='" << (agree == bracketed ? "good" : "bad") << "'>" << agree << " of " << bracketed
    << " bracketed runs agree" << (agree == bracketed ? "" : "; the others are flagged below and left out of every "
                                                           "comparison")
    << ".</p>\n";
  o << "<table><tr><th>run</th><th>id</th><th>before p50</th><th>before p99</th><th>after p50</th><th>after p99</th>"
       "<th>p50 drift</th><th>p99 drift</th><th>verdict</th><th>raw files before / after</th><th>audit</th></tr>\n";
  for (const RunRecord& r : rep.runs) {
    if (!r.bracket) continue;
    const BracketCheck c = check_bracket(*r.bracket, rep.bracket_tolerance);
    o << "<tr id='bracket-" << esc(r.id) << "'" << (c.agree ? "" : " class='flag'") << "><td><a href='#run-"
      << esc(r.id) << "'>" << r.order << "</a></td><td>" << esc(r.id) << "</td>";
    if (c.measured) {
      for (const double v : {c.before_p50_ns, c.before_p99_ns, c.after_p50_ns, c.after_p99_ns}) {
        o << "<td>" << esc(format_ns(v)) << "</td>";
      }
      o << "<td>" << percent(c.drift_p50) << "</td><td>" << percent(c.drift_p99) << "</td>";
      o << (c.agree ? "<td class='good'>agree</td>" : "<td class='bad'>DO NOT AGREE: left out of comparisons</td>");
    } else {
      const std::string why = !r.bracket->before.error.empty() ? r.bracket->before.error : r.bracket->after.error;
      o << "<td colspan='6'></td><td class='bad'>not measured" << (why.empty() ? "" : ": " + esc(why))
        << "; left out of comparisons</td>";
    }
    o << "<td>" << file_links(r.bracket->before.series) << " / " << file_links(r.bracket->after.series) << "</td><td>"
      << audit_link(r.bracket->before.id, r.bracket->before.audit, r.bracket->before.error) << " / "
      << audit_link(r.bracket->after.id, r.bracket->after.audit, r.bracket->after.error) << "</td></tr>\n";
  }
  o << "</table>\n";
}

std::string cores_text(const RunRecord& r) {
  std::string cores;
  for (const ThreadPlacement& t : r.result.threads) {
    cores += (cores.empty() ? "" : ", ") + t.role + " " +
             (t.requested_cpu < 0 ? std::string("unpinned") : std::to_string(t.requested_cpu)) + " (on " +
             std::to_string(t.cpu_at_start) + "/" + std::to_string(t.cpu_at_end) + ")";
  }
  return cores;
}

std::string bracket_cell(const RunRecord& r, double tolerance) {
  if (!r.bracket) return "<td>-</td>";
  const BracketCheck c = check_bracket(*r.bracket, tolerance);
  return std::string("<td class='") + (c.agree ? "good" : "bad") + "'><a href='#bracket-" + esc(r.id) + "'>" +
         (c.measured ? "drift " + percent(c.drift_p50) : std::string("not measured")) + ", " +
         (c.agree ? "agree" : "do not agree") + "</a></td>";
}

void runs_html(std::ostringstream& o, const Report& rep) {
  o << "<h2>Runs</h2><table><tr><th>run</th><th>id</th><th>series</th><th>count</th>";
  for (const QuantileSpec& q : kQuantiles) o << "<th>" << q.label << "</th>";
  o << "<th>mean</th><th>max</th><th>max index</th>";
  for (const auto& l : kLongCallLabels) o << "<th>" << esc(l) << "</th>";
  o << "<th>calls/s</th><th>cores (client/server)</th><th>floor brackets</th><th>raw files</th><th>audit</th>"
       "<th>quiet</th></tr>\n";
  for (const RunRecord& r : rep.runs) {
    const std::string anchor = " id='run-" + esc(r.id) + "'";
    if (!r.error.empty()) {
      o << "<tr" << anchor << "><td>" << r.order << "</td><td>" << esc(r.id) << "</td><td class='bad' colspan='20'>"
        << "failed: " << esc(r.error) << " (" << audit_link(r.id, r.result.audit, r.error) << ")</td></tr>\n";
      continue;
    }
    for (std::size_t k = 0; k < r.series.size(); ++k) {
      const SeriesRecord& s = r.series[k];
      const Stats& st = s.analysis.stats;
      o << "<tr" << (k == 0 ? anchor : std::string()) << "><td>" << r.order << "</td><td>" << esc(r.id) << "</td><td>"
        << esc(s.name) << "</td><td>" << st.count << "</td>";
      for (const double v : st.quantile_ns) o << "<td>" << esc(format_ns(v)) << "</td>";
      o << "<td>" << esc(format_ns(st.mean_ns)) << "</td><td>" << esc(format_ns(st.max_ns)) << "</td><td>"
        << st.max_index << "</td>";
      for (std::size_t t = 0; t < kLongCallThresholdsNs.size(); ++t) o << "<td>" << st.long_count(t) << "</td>";
      o << "<td>" << fixed(r.result.achieved_rate, 1) << "</td><td>" << esc(cores_text(r)) << "</td>"
        << bracket_cell(r, rep.bracket_tolerance) << "<td>" << file_links(s) << "</td><td title='"
        << esc(r.result.audit.detail) << "'>" << audit_link(r.id, r.result.audit, r.error) << "</td><td class='"
        << (r.quiet.quiet ? "good" : "bad") << "' title='" << esc(r.quiet.reason) << "'>"
        << (r.quiet.quiet ? "yes" : "no") << "</td></tr>\n";
    }
  }
  o << "</table>\n";
}

// Per run: the primary series' calls >= 100 us and the events overlapping
// each (the first kMaxRows of them; report.json has every one).
void attribution_html(std::ostringstream& o, const Report& rep) {
  bool any = false;
  for (const RunRecord& r : rep.runs) any = any || r.attribution.has_value();
  if (!any) return;
  constexpr std::size_t kMaxRows = 100;
  o << "<h2>Long calls and the events overlapping them</h2>\n<p class='note'>Events: the engine's own trace in "
       "the timed process (client) and in hft-venue (venue), and the timed thread's context switches and page "
       "faults sampled after every call (os: the window since the previous sample). An event is listed with a "
       "call when their intervals overlap; offsets are from the call's start (docs/lab.md, \"Event trace and "
       "attribution\").</p>\n";
  for (const RunRecord& r : rep.runs) {
    if (!r.attribution) continue;
    const Attribution& a = *r.attribution;
    const std::vector<RunEvent>& events = r.result.events.events;
    const SeriesRecord* s = series_named(r, a.series);
    const double tps = s != nullptr ? s->ticks_per_second : rep.tsc_hz;
    const auto ns = [&](std::int64_t ticks) { return static_cast<double>(ticks) * 1e9 / tps; };
    o << "<h3 id='attribution-" << esc(r.id) << "'>" << esc(r.id) << "</h3>\n<p>" << esc(attribution_line(a))
      << "; events: " << events.size() << " (<a href='" << esc(r.events_file) << "'>" << esc(r.events_file)
      << "</a>), " << r.result.events.dropped << " dropped</p>\n";
    if (a.calls.empty()) continue;
    o << "<table><tr><th>call</th><th>start</th><th>duration</th><th>events (offset from the call's start, "
         "duration)</th></tr>\n";
    for (std::size_t c = 0; c < a.calls.size() && c < kMaxRows; ++c) {
      const LongCall& call = a.calls[c];
      std::string list;
      for (const std::size_t i : call.events) {
        const RunEvent& e = events[i];
        list += (list.empty() ? "" : "; ") + event_key(e) + (e.thread.empty() ? "" : " [" + e.thread + "]") + " " +
                (e.begin >= call.start ? "+" : "-") + format_ns(std::abs(ns(e.begin - call.start))) + ", " +
                format_ns(ns(e.end - e.begin)) + (e.source == "os" ? " (" + std::to_string(e.a) + ")" : "");
      }
      if (call.overlapping > call.events.size()) {
        list += "; ... " + std::to_string(call.overlapping - call.events.size()) + " more";
      }
      o << "<tr" << (call.events.empty() ? " class='flag'" : "") << "><td>" << call.index << "</td><td>"
        << fixed(ns(call.start) / 1e9, 6) << " s</td><td>" << esc(format_ns(ns(call.duration)))
        << "</td><td class='detail'>" << esc(list.empty() ? std::string("no event") : list) << "</td></tr>\n";
    }
    o << "</table>\n";
    if (a.long_calls > std::min<std::uint64_t>(a.calls.size(), kMaxRows)) {
      o << "<p class='note'>" << std::min<std::size_t>(a.calls.size(), kMaxRows) << " of " << a.long_calls
        << " long calls shown: the longest, in call order (report.json runs[].attribution lists "
        << a.calls.size() << "; the events file has every event).</p>\n";
    }
  }
}

void audit_row(std::ostringstream& o, const std::string& id, const std::string& what, const AuditResult& a,
               const std::string& error) {
  const bool bad = !error.empty() || a.status == AuditResult::Status::kFail;
  o << "<tr id='audit-" << esc(id) << "'><td>" << esc(id) << "</td><td>" << esc(what) << "</td><td class='"
    << (bad ? "bad" : "good") << "'>" << (error.empty() ? std::string(to_string(a.status)) : std::string("run failed"))
    << "</td><td>" << a.checked << "</td><td class='detail'>" << esc(error.empty() ? a.detail : error)
    << "</td></tr>\n";
}

void audits_html(std::ostringstream& o, const Report& rep) {
  o << "<h2>Audits</h2>\n<p class='note'>The check of every run's output after it (the same in "
       "<a href='audit.json'>audit.json</a>).</p>\n<table class='kv'><tr><th>id</th><th>of</th><th>status</th>"
       "<th>checked</th><th>detail</th></tr>\n";
  for (const RunRecord& r : rep.runs) {
    audit_row(o, r.id, "run " + std::to_string(r.order), r.result.audit, r.error);
    if (!r.bracket) continue;
    audit_row(o, r.bracket->before.id, "floor bracket before run " + std::to_string(r.order), r.bracket->before.audit,
              r.bracket->before.error);
    audit_row(o, r.bracket->after.id, "floor bracket after run " + std::to_string(r.order), r.bracket->after.audit,
              r.bracket->after.error);
  }
  o << "</table>\n";
}

std::string html_text(const Report& rep) {
  std::ostringstream o;
  o << "<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>hft-lab report</title><style>"
       "body{font-family:sans-serif;margin:24px;color:#222}table{border-collapse:collapse;margin:8px 0}"
       "td,th{border:1px solid #ccc;padding:3px 6px;font-size:12px;text-align:right}"
       "th{background:#f4f4f4}table.kv th,table.kv td{text-align:left}.bad{color:#b00;font-weight:bold}"
       ".good{color:#070}.note{color:#555}h2{margin-top:32px}tr.flag td{background:#fff0f0}"
       "td.files,td.detail{text-align:left}</style></head><body>\n";
  o << "<h1>hft-lab report</h1>\n";
  o << "<p class='note'>Statistics are exact (sorted raw series, nearest-rank quantiles). Summaries are medians "
       "of per-run statistics, never pooled; max is the largest actual maximum of any run.</p>\n";

  o << "<h2>Conditions</h2><table class='kv'>\n";
  kv_row(o, "command", rep.command_line);
  kv_row(o, "started (UTC)", rep.started_utc);
  kv_row(o, "commit", rep.source.commit + " (" + rep.source.how + ")" +
                          (rep.source.dirty == 1 ? ", modified tracked files" : rep.source.dirty == 0 ? ", clean" : ""));
  kv_row(o, "compiler", rep.build.compiler);
  kv_row(o, "build", rep.build.build_type + "; " + rep.build.cxx_flags + "; " + rep.build.options);
  kv_row(o, "CPU", rep.host.cpu_model + " (" + std::to_string(rep.host.online_cpus) + " online, allowed " +
                       rep.host.allowed_cpus + ", isolated " + rep.host.isolated_cpus + ", SMT " + rep.host.smt + ")");
  kv_row(o, "TSC", fixed(rep.tsc_hz / 1e6, 3) + " MHz, " + rep.tsc_calibration + "; " + rep.host.tsc_flags +
                       "; clocksource " + rep.host.clocksource);
  kv_row(o, "governor / turbo", rep.host.governor + " / " + rep.host.turbo);
  kv_row(o, "kernel", rep.host.kernel);
  kv_row(o, "host", rep.host.hostname);
  if (!rep.experiment.empty()) {
    std::string arms;
    for (const ArmSpec& a : rep.arms) {
      arms += (arms.empty() ? "" : "; ") + a.name + ":";
      for (const auto& [k, v] : a.overrides) arms += " " + k + "=" + v;
    }
    kv_row(o, "experiment", rep.experiment + " (" + std::to_string(rep.runs_per_cell) + " runs per arm; " + arms + ")");
  }
  o << "<tr><th>quiet check</th><td class='" << (rep.quiet.quiet ? "good" : "bad") << "'>"
    << (rep.quiet.quiet ? "quiet" : "NOT quiet: " + esc(rep.quiet.reason)) << "</td></tr>\n";
  if (!rep.quiet_before.empty()) {
    const QuietSample& q = rep.quiet_before.front();
    std::string busy;
    for (const ProcessCpu& p : q.busiest) busy += p.comm + " " + fixed(p.cpu_percent, 1) + "%  ";
    kv_row(o, "before the runs", "load " + fixed(q.load1, 2) + " " + fixed(q.load5, 2) + " " + fixed(q.load15, 2) +
                                     "; busiest: " + (busy.empty() ? "none" : busy));
  }
  o << "</table>\n";
  for (const std::string& n : rep.notes) o << "<p class='note'>" << esc(n) << "</p>\n";

  summary_html(o, rep, summarize_report(rep));
  brackets_html(o, rep);

  // Plots: one percentile plot and one long-call plot per (lane, variant, series).
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<Curve>> plots;
  std::vector<std::tuple<std::string, std::string, std::string>> plot_order;
  for (const RunRecord& r : rep.runs) {
    for (const SeriesRecord& s : r.series) {
      const auto key = std::make_tuple(r.config.lane, r.config.variant, s.name);
      if (plots.find(key) == plots.end()) plot_order.push_back(key);
      plots[key].push_back({&r, &s});
    }
  }
  for (const auto& key : plot_order) {
    const auto& [lane, variant, series] = key;
    const std::string title = lane + " " + variant + ": " + series;
    o << "<h2>" << esc(title) << "</h2>\n";
    percentile_svg(o, plots[key], title + " - percentiles, one curve per run");
    long_calls_svg(o, plots[key], title + " - long calls over time (>= min(100 us, p99.9), largest 2000 per run)");
  }

  runs_html(o, rep);
  attribution_html(o, rep);
  audits_html(o, rep);
  o << "<p class='note'>Raw series of every run are in series/ as CSV and HFTRAW, with "
       "HdrHistogram interval logs (.hlog) beside them (see docs/lab.md); report.json has every statistic, "
       "long-call index and condition; manifest.sha256 the hash of every file (hft-bench verify DIR re-derives "
       "them).</p>\n</body></html>\n";
  return o.str();
}

}  // namespace

std::string attribution_line(const Attribution& a) {
  std::string out = a.series + ": " + std::to_string(a.long_calls) + " calls >= " + format_ns(a.threshold_ns);
  if (a.long_calls == 0) return out;
  out += ", " + std::to_string(a.long_calls - a.unattributed) + " with events";
  // The kinds by how many long calls they overlap, most first.
  std::vector<std::pair<std::uint64_t, std::string>> kinds;
  for (const auto& [k, n] : a.calls_by_kind) kinds.emplace_back(n, k);
  std::stable_sort(kinds.begin(), kinds.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
  if (!kinds.empty()) {
    out += " (";
    for (std::size_t k = 0; k < kinds.size(); ++k) {
      out += (k ? ", " : "") + kinds[k].second + " " + std::to_string(kinds[k].first);
    }
    out += ")";
  }
  return out + ", " + std::to_string(a.unattributed) + " without";
}

std::string format_ns(double ns) {
  char buf[48];
  if (ns < 1e3) {
    std::snprintf(buf, sizeof(buf), "%.0f ns", ns);
  } else if (ns < 1e6) {
    std::snprintf(buf, sizeof(buf), "%.*f us", ns < 1e4 ? 2 : 1, ns / 1e3);
  } else if (ns < 1e9) {
    std::snprintf(buf, sizeof(buf), "%.*f ms", ns < 1e7 ? 2 : 1, ns / 1e6);
  } else {
    std::snprintf(buf, sizeof(buf), "%.2f s", ns / 1e9);
  }
  return buf;
}

double relative_drift(double before, double after) noexcept {
  if (before > 0) return std::fabs(after - before) / before;
  return after == before ? 0.0 : std::numeric_limits<double>::infinity();
}

BracketCheck check_bracket(const Bracket& bracket, double tolerance) noexcept {
  BracketCheck c;
  c.measured = bracket.before.measured() && bracket.after.measured();
  c.drift_p50 = c.drift_p99 = kNaN;
  if (!c.measured) return c;
  const Stats& b = bracket.before.series.analysis.stats;
  const Stats& a = bracket.after.series.analysis.stats;
  c.before_p50_ns = b.quantile("p50");
  c.after_p50_ns = a.quantile("p50");
  c.before_p99_ns = b.quantile("p99");
  c.after_p99_ns = a.quantile("p99");
  c.drift_p50 = relative_drift(c.before_p50_ns, c.after_p50_ns);
  c.drift_p99 = relative_drift(c.before_p99_ns, c.after_p99_ns);
  c.agree = c.drift_p50 <= tolerance;
  return c;
}

std::string_view to_string(RatioStatus status) noexcept {
  switch (status) {
    case RatioStatus::kNone: return "none";
    case RatioStatus::kBaseline: return "baseline";
    case RatioStatus::kCompared: return "compared";
    case RatioStatus::kNoAgreeingRuns: return "no agreeing runs";
    case RatioStatus::kBaselineNoAgreeingRuns: return "baseline has no agreeing runs";
    case RatioStatus::kNoBaseline: return "no baseline runs";
  }
  return "?";
}

namespace {

/// num / den when den > 0, else NaN.
double ratio_of(double num, double den) { return den > 0 && std::isfinite(num) ? num / den : kNaN; }

/// Median of `v`, NaN when empty.
double median_or_nan(std::vector<double> v) { return v.empty() ? kNaN : median(std::move(v)); }

/// Fills the compared runs, medians and floor figures of `row` (not the ratio).
void compare_with_brackets(SummaryRow& row, const std::map<std::size_t, const RunRecord*>& runs, double tolerance) {
  std::vector<double> p50, p99, floor;
  for (std::size_t k = 0; k < row.run_orders.size(); ++k) {
    const RunRecord& r = *runs.at(row.run_orders[k]);
    row.bracketed = row.bracketed || r.bracket.has_value();
  }
  for (std::size_t k = 0; k < row.run_orders.size(); ++k) {
    const RunRecord& r = *runs.at(row.run_orders[k]);
    BracketCheck check;
    if (r.bracket) check = check_bracket(*r.bracket, tolerance);
    if (row.bracketed && !check.agree) {
      row.left_out_runs.push_back(r.order);
      continue;
    }
    row.compared_runs.push_back(r.order);
    p50.push_back(row.run_p50_ns[k]);
    p99.push_back(row.run_p99_ns[k]);
    if (row.bracketed) floor.push_back((check.before_p50_ns + check.after_p50_ns) / 2);
  }
  row.compared_p50_ns = median_or_nan(p50);
  row.compared_p99_ns = median_or_nan(p99);
  row.floor_p50_ns = median_or_nan(floor);
  row.floor_ratio_p50 = ratio_of(row.compared_p50_ns, row.floor_p50_ns);
}

/// Fills the ratio of every engine row against the first engine's row of
/// the same lane, variant, arm and series.
void compare_with_baseline(std::vector<SummaryRow>& rows, const std::vector<std::string>& engines) {
  std::string baseline = engines.empty() ? std::string() : engines.front();
  for (const SummaryRow& row : rows) {
    if (baseline.empty() && row.engine != "none") baseline = row.engine;
  }
  for (SummaryRow& row : rows) {
    row.ratio_p50 = row.ratio_p99 = kNaN;
    if (row.engine == "none") continue;
    row.baseline_engine = baseline;
    const SummaryRow* base = nullptr;
    for (const SummaryRow& other : rows) {
      if (other.engine == baseline && other.lane == row.lane && other.variant == row.variant &&
          other.arm == row.arm && other.series == row.series) {
        base = &other;
      }
    }
    if (base == nullptr) {
      row.ratio_status = RatioStatus::kNoBaseline;
      continue;
    }
    row.baseline_runs = base->compared_runs;
    if (row.compared_runs.empty()) {
      row.ratio_status = RatioStatus::kNoAgreeingRuns;
    } else if (base == &row) {
      row.ratio_status = RatioStatus::kBaseline;
    } else if (base->compared_runs.empty()) {
      row.ratio_status = RatioStatus::kBaselineNoAgreeingRuns;
      continue;
    } else {
      row.ratio_status = RatioStatus::kCompared;
    }
    if (row.compared_runs.empty()) continue;
    row.ratio_p50 = ratio_of(row.compared_p50_ns, base->compared_p50_ns);
    row.ratio_p99 = ratio_of(row.compared_p99_ns, base->compared_p99_ns);
  }
}

}  // namespace

std::vector<SummaryRow> summarize_report(const Report& report) {
  std::vector<SummaryRow> rows;
  std::map<std::string, std::size_t> index;
  std::vector<std::vector<Stats>> stats;
  std::vector<std::vector<double>> rates;
  std::map<std::size_t, const RunRecord*> by_order;
  for (const RunRecord& r : report.runs) {
    if (!r.error.empty()) continue;
    by_order[r.order] = &r;
    for (const SeriesRecord& s : r.series) {
      const std::string key = key_of(r, s);
      auto it = index.find(key);
      if (it == index.end()) {
        it = index.emplace(key, rows.size()).first;
        SummaryRow row;
        row.lane = r.config.lane;
        row.variant = r.config.variant;
        row.engine = r.config.engine;
        row.arm = r.config.arm;
        row.series = s.name;
        row.target_rate = r.result.target_rate;
        rows.push_back(std::move(row));
        stats.emplace_back();
        rates.emplace_back();
      }
      SummaryRow& row = rows[it->second];
      row.run_orders.push_back(r.order);
      row.run_p50_ns.push_back(s.analysis.stats.quantile("p50"));
      row.run_p99_ns.push_back(s.analysis.stats.quantile("p99"));
      row.late_total += r.result.late;
      row.shed_total += r.result.shed;
      stats[it->second].push_back(s.analysis.stats);
      rates[it->second].push_back(r.result.achieved_rate);
    }
  }
  for (std::size_t k = 0; k < rows.size(); ++k) {
    rows[k].summary = summarize(stats[k]);
    rows[k].median_achieved_rate = median(rates[k]);
    compare_with_brackets(rows[k], by_order, report.bracket_tolerance);
  }
  compare_with_baseline(rows, report.engines);
  return rows;
}

std::vector<AxisTick> axis_ticks(double max, bool integer, int target) {
  if (!(max > 0) || !std::isfinite(max)) max = 1;
  target = std::max(target, 1);
  const double raw = max / target;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double norm = raw / mag;
  double step = (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 5 ? 5 : 10) * mag;
  if (integer) step = std::max(1.0, std::round(step));
  // Decimals the step needs: 0.2 -> 1, 0.05 -> 2, 5 -> 0.
  const int decimals = step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
  const auto steps = static_cast<long long>(std::ceil(max / step - 1e-9));
  std::vector<AxisTick> ticks;
  for (long long k = 0; k <= steps; ++k) {
    const double v = static_cast<double>(k) * step;
    std::string label = decimals == 0 ? detail::with_commas(static_cast<std::uint64_t>(std::llround(v)))
                                      : fixed(v, decimals);
    ticks.push_back({v, std::move(label)});
  }
  return ticks;
}

std::string report_json_text(const Report& report) { return report_json(report).dump(2) + "\n"; }

Expected<void> write_report_json(const std::filesystem::path& path, const Report& report) {
  return write_text_file(path, report_json_text(report));
}

Expected<void> write_report_html(const std::filesystem::path& path, const Report& report) {
  return write_text_file(path, html_text(report));
}

Expected<void> write_audit_json(const std::filesystem::path& path, const Report& report) {
  json runs = json::array();
  bool all_pass = true;
  for (const RunRecord& r : report.runs) {
    const AuditResult& a = r.result.audit;
    if (a.status == AuditResult::Status::kFail || !r.error.empty()) all_pass = false;
    json entry = {{"order", r.order},
                  {"id", r.id},
                  {"status", r.error.empty() ? std::string(to_string(a.status)) : std::string("run-failed")},
                  {"checked", a.checked},
                  {"detail", r.error.empty() ? a.detail : r.error}};
    if (r.bracket) {
      const auto bracket_audit = [](const BracketRun& b) {
        return b.error.empty() ? audit_json(b.audit)
                               : json{{"status", "run-failed"}, {"checked", 0}, {"detail", b.error}};
      };
      entry["brackets"] = {{"before", bracket_audit(r.bracket->before)}, {"after", bracket_audit(r.bracket->after)}};
    }
    runs.push_back(std::move(entry));
  }
  const json j = {{"format", "hft-lab-audit"}, {"version", 1}, {"all_passed", all_pass}, {"runs", runs}};
  return write_text_file(path, j.dump(2) + "\n");
}

namespace {

std::string us(double ns) { return fixed(ns / 1e3, 3); }

/// "min..max" of a row's per-run values in microseconds; "-" for one run.
std::string spread_us(const std::vector<double>& v) {
  if (v.size() < 2) return "-";
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return us(*lo) + ".." + us(*hi);
}

std::string ratio_us(const SummaryRow& r, double ratio) {
  switch (r.ratio_status) {
    case RatioStatus::kNone: return "-";
    case RatioStatus::kBaseline:
    case RatioStatus::kCompared: return std::isfinite(ratio) ? fixed(ratio, 2) : std::string("n/a");
    case RatioStatus::kNoAgreeingRuns:
    case RatioStatus::kBaselineNoAgreeingRuns:
    case RatioStatus::kNoBaseline: return "none";
  }
  return "?";
}

/// Left-aligns the first `text_columns` columns, right-aligns the others.
std::string aligned(const std::vector<std::vector<std::string>>& cells, std::size_t text_columns) {
  std::vector<std::size_t> width(cells.front().size(), 0);
  for (const auto& row : cells) {
    for (std::size_t k = 0; k < row.size(); ++k) width[k] = std::max(width[k], row[k].size());
  }
  std::string out;
  for (const auto& row : cells) {
    for (std::size_t k = 0; k < row.size(); ++k) {
      const std::string pad(width[k] - row[k].size(), ' ');
      out += k < text_columns ? row[k] + pad : pad + row[k];
      out += k + 1 < row.size() ? "  " : "\n";
    }
  }
  return out;
}

/// The brackets' verdict and which runs each comparison used.
std::string bracket_lines(const Report& report, const std::vector<SummaryRow>& rows) {
  std::size_t bracketed = 0;
  std::size_t agree = 0;
  std::string flagged;
  for (const RunRecord& r : report.runs) {
    if (!r.bracket) continue;
    ++bracketed;
    const BracketCheck c = check_bracket(*r.bracket, report.bracket_tolerance);
    if (c.agree) {
      ++agree;
      continue;
    }
    flagged += "  DO NOT AGREE: " + r.id + ": ";
    if (c.measured) {
      flagged += "floor p50 " + format_ns(c.before_p50_ns) + " before, " + format_ns(c.after_p50_ns) + " after (drift " +
                 percent(c.drift_p50) + "; p99 " + format_ns(c.before_p99_ns) + " -> " + format_ns(c.after_p99_ns) +
                 ", drift " + percent(c.drift_p99) + ")";
    } else {
      const std::string why = !r.bracket->before.error.empty() ? r.bracket->before.error : r.bracket->after.error;
      flagged += "a bracket was not measured" + (why.empty() ? std::string() : " (" + why + ")");
    }
    flagged += "; left out of every comparison\n";
  }
  if (bracketed == 0) return {};
  std::string out = "brackets: floor " + std::string(kBracketVariant) + ", " + with_commas(report.bracket_calls) +
                    " calls just before and just after each engine run; agree when the p50 drift |after - before| / "
                    "before is at most " + percent(report.bracket_tolerance) + ": " + std::to_string(agree) + " of " +
                    std::to_string(bracketed) + " runs agree\n" + flagged;
  // Which runs each comparison used: one line per lane/variant/arm, each
  // engine's compared runs (the same for every series of a run).
  std::vector<std::string> groups;
  std::map<std::string, std::string> lines;
  std::set<std::string> seen;
  for (const SummaryRow& r : rows) {
    if (!r.bracketed || r.engine == "none") continue;
    const std::string group = r.lane + " " + r.variant + " " + r.arm;
    if (!seen.insert(group + '\x1f' + r.engine).second) continue;
    if (lines.find(group) == lines.end()) groups.push_back(group);
    std::string& line = lines[group];
    line += (line.empty() ? "" : "; ") + r.engine + " runs " + run_list(r.compared_runs);
    if (!r.left_out_runs.empty()) line += " (left out: " + run_list(r.left_out_runs) + ")";
    if (r.ratio_status == RatioStatus::kBaseline) line += " (baseline)";
    if (r.ratio_status == RatioStatus::kNoAgreeingRuns) line += ": no agreeing runs, not compared";
    if (r.ratio_status == RatioStatus::kBaselineNoAgreeingRuns) {
      line += ": not compared, " + r.baseline_engine + " has no agreeing runs";
    }
    if (r.ratio_status == RatioStatus::kNoBaseline) line += ": not compared, no " + r.baseline_engine + " runs";
  }
  if (!groups.empty()) out += "comparisons made from bracket-agreeing runs:\n";
  for (const std::string& g : groups) out += "  " + g + ": " + lines[g] + "\n";
  return out;
}

}  // namespace

std::string console_table(const Report& report) {
  const std::vector<SummaryRow> rows = summarize_report(report);
  bool engines = false;
  bool bracketed = false;
  std::string baseline;
  for (const SummaryRow& r : rows) {
    engines = engines || r.engine != "none";
    bracketed = bracketed || r.bracketed;
    if (baseline.empty()) baseline = r.baseline_engine;
  }
  std::vector<std::vector<std::string>> cells;
  cells.push_back({"lane", "variant", "engine", "arm", "series", "runs", "p50 us", "p50 min..max", "p90 us", "p99 us",
                   "p99 min..max", "p99.9 us", "p99.99 us", "mean us", "max us", ">=100us", ">=1ms", ">=10ms",
                   "calls/s"});
  if (engines) {
    cells.front().push_back("x p50");
    cells.front().push_back("x p99");
  }
  if (bracketed) {
    cells.front().push_back("x floor");
    cells.front().push_back("agree");
  }
  for (const SummaryRow& r : rows) {
    std::vector<std::string> c{r.lane, r.variant, r.engine, r.arm, r.series, std::to_string(r.summary.runs)};
    for (std::size_t q = 0; q < kQuantiles.size(); ++q) {
      if (kQuantiles[q].label == "p95") continue;
      c.push_back(us(r.summary.median_quantile_ns[q]));
      if (kQuantiles[q].label == "p50") c.push_back(spread_us(r.run_p50_ns));
      if (kQuantiles[q].label == "p99") c.push_back(spread_us(r.run_p99_ns));
    }
    c.push_back(us(r.summary.median_mean_ns));
    c.push_back(us(r.summary.largest_max_ns));
    for (const std::uint64_t n : r.summary.long_total) c.push_back(std::to_string(n));
    std::string rate = fixed(r.median_achieved_rate, 0);
    if (r.target_rate > 0) {
      rate += '/';
      rate += fixed(r.target_rate, 0);
    }
    c.push_back(std::move(rate));
    if (engines) {
      c.push_back(ratio_us(r, r.ratio_p50));
      c.push_back(ratio_us(r, r.ratio_p99));
    }
    if (bracketed) {
      c.push_back(r.bracketed ? (std::isfinite(r.floor_ratio_p50) ? fixed(r.floor_ratio_p50, 2) : std::string("none"))
                              : std::string("-"));
      c.push_back(r.bracketed ? std::to_string(r.compared_runs.size()) + "/" + std::to_string(r.run_orders.size()) +
                                    (r.left_out_runs.empty() ? "" : " !")
                              : std::string("-"));
    }
    cells.push_back(std::move(c));
  }
  std::string out = aligned(cells, 5);
  out += "(medians of per-run statistics; min..max over the runs; max = largest actual maximum; long-call counts "
         "summed over runs)\n";
  if (engines) {
    out += "(x p50, x p99: ratio of medians against the first engine, " + baseline +
           ", same lane/variant/arm/series, " +
           (bracketed ? std::string("from bracket-agreeing runs only; x floor: median p50 over the median floor p50 "
                                    "of the runs' brackets; agree: runs whose brackets agree / runs, ! = runs left out")
                      : std::string("from every run (brackets off)")) +
           ")\n";
  }
  out += bracket_lines(report, rows);
  return out;
}

}  // namespace hft::lab
