#include "hft/lab/report.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
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
          {"shed_total", row.shed_total}};
}

}  // namespace detail

namespace {

using detail::stats_json;
using detail::summary_json;


using detail::fixed;

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

json run_json(const RunRecord& r) {
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
  j["audit"] = {{"status", std::string(to_string(x.audit.status))}, {"checked", x.audit.checked}, {"detail", x.audit.detail}};
  json notes = json::object();
  for (const auto& [k, v] : x.notes) notes[k] = v;
  j["notes"] = notes;
  json during = json::array();
  for (const QuietSample& q : r.quiet_during) during.push_back(quiet_sample_json(q));
  j["quiet"] = {{"quiet", r.quiet.quiet}, {"reason", r.quiet.reason}, {"during", during}};
  json series = json::array();
  for (const SeriesRecord& s : r.series) {
    series.push_back({{"name", s.name},
                      {"unit", std::string(to_string(s.unit))},
                      {"ticks_per_second", s.ticks_per_second},
                      {"files", {{"csv", s.csv_file}, {"binary", s.binary_file}, {"hlog", s.hlog_file}}},
                      {"stats", stats_json(s.analysis.stats)}});
  }
  j["series"] = series;
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
  json runs = json::array();
  for (const RunRecord& r : rep.runs) runs.push_back(run_json(r));
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
  if (tmax <= 0) tmax = 1;
  const LogAxis ax(lo, hi);
  o << "<svg xmlns='http://www.w3.org/2000/svg' width='" << f.w << "' height='" << f.h
    << "' font-family='sans-serif' font-size='11'>";
  o << "<text x='" << f.left << "' y='13' font-weight='bold'>" << esc(title) << "</text>";
  y_axis(o, f, ax);
  for (int k = 0; k <= 5; ++k) {
    const double t = tmax * k / 5.0;
    const double x = f.px(static_cast<double>(k) / 5.0);
    o << "<line x1='" << x << "' x2='" << x << "' y1='" << f.top << "' y2='" << f.h - f.bottom << "' stroke='#eee'/>";
    o << "<text x='" << x << "' y='" << f.h - f.bottom + 14 << "' text-anchor='middle'>"
      << (by_index ? fixed(t, 0) : fixed(t, 2) + " s") << "</text>";
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
  o << "</svg>\n";
}

void kv_row(std::ostringstream& o, std::string_view k, std::string_view v) {
  o << "<tr><th>" << esc(k) << "</th><td>" << esc(v) << "</td></tr>\n";
}

std::string html_text(const Report& rep) {
  std::ostringstream o;
  o << "<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>hft-lab report</title><style>"
       "body{font-family:sans-serif;margin:24px;color:#222}table{border-collapse:collapse;margin:8px 0}"
       "td,th{border:1px solid #ccc;padding:3px 6px;font-size:12px;text-align:right}"
       "th{background:#f4f4f4}table.kv th,table.kv td{text-align:left}.bad{color:#b00;font-weight:bold}"
       ".good{color:#070}.note{color:#555}h2{margin-top:32px}</style></head><body>\n";
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

  const std::vector<SummaryRow> rows = summarize_report(rep);
  o << "<h2>Summary</h2><table><tr><th>lane</th><th>variant</th><th>engine</th><th>arm</th><th>series</th>"
       "<th>runs</th><th>min</th>";
  for (const QuantileSpec& q : kQuantiles) o << "<th>" << q.label << "</th>";
  o << "<th>mean</th><th>largest max</th>";
  for (const auto& l : kLongCallLabels) o << "<th>" << esc(l) << "</th>";
  o << "<th>achieved / target calls/s</th><th>late</th><th>shed</th></tr>\n";
  for (const SummaryRow& r : rows) {
    o << "<tr><td>" << esc(r.lane) << "</td><td>" << esc(r.variant) << "</td><td>" << esc(r.engine) << "</td><td>"
      << esc(r.arm) << "</td><td>" << esc(r.series) << "</td><td>" << r.summary.runs << "</td><td>"
      << esc(format_ns(r.summary.median_min_ns)) << "</td>";
    for (const double v : r.summary.median_quantile_ns) o << "<td>" << esc(format_ns(v)) << "</td>";
    o << "<td>" << esc(format_ns(r.summary.median_mean_ns)) << "</td><td>" << esc(format_ns(r.summary.largest_max_ns))
      << "</td>";
    for (const std::uint64_t c : r.summary.long_total) o << "<td>" << c << "</td>";
    o << "<td>" << fixed(r.median_achieved_rate, 1) << " / "
      << (r.target_rate > 0 ? fixed(r.target_rate, 0) : std::string("closed")) << "</td><td>" << r.late_total
      << "</td><td>" << r.shed_total << "</td></tr>\n";
  }
  o << "</table>\n";

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

  o << "<h2>Runs</h2><table><tr><th>run</th><th>id</th><th>series</th><th>count</th>";
  for (const QuantileSpec& q : kQuantiles) o << "<th>" << q.label << "</th>";
  o << "<th>mean</th><th>max</th><th>max index</th>";
  for (const auto& l : kLongCallLabels) o << "<th>" << esc(l) << "</th>";
  o << "<th>calls/s</th><th>cores (client/server)</th><th>audit</th><th>quiet</th></tr>\n";
  for (const RunRecord& r : rep.runs) {
    std::string cores;
    for (const ThreadPlacement& t : r.result.threads) {
      cores += (cores.empty() ? "" : ", ") + t.role + " " +
               (t.requested_cpu < 0 ? std::string("unpinned") : std::to_string(t.requested_cpu)) + " (on " +
               std::to_string(t.cpu_at_start) + "/" + std::to_string(t.cpu_at_end) + ")";
    }
    if (!r.error.empty()) {
      o << "<tr><td>" << r.order << "</td><td>" << esc(r.id) << "</td><td class='bad' colspan='20'>failed: "
        << esc(r.error) << "</td></tr>\n";
      continue;
    }
    for (const SeriesRecord& s : r.series) {
      const Stats& st = s.analysis.stats;
      o << "<tr><td>" << r.order << "</td><td>" << esc(r.id) << "</td><td>" << esc(s.name) << "</td><td>" << st.count
        << "</td>";
      for (const double v : st.quantile_ns) o << "<td>" << esc(format_ns(v)) << "</td>";
      o << "<td>" << esc(format_ns(st.mean_ns)) << "</td><td>" << esc(format_ns(st.max_ns)) << "</td><td>"
        << st.max_index << "</td>";
      for (std::size_t t = 0; t < kLongCallThresholdsNs.size(); ++t) o << "<td>" << st.long_count(t) << "</td>";
      o << "<td>" << fixed(r.result.achieved_rate, 1) << "</td><td>" << esc(cores) << "</td><td class='"
        << (r.result.audit.status == AuditResult::Status::kFail ? "bad" : "good") << "' title='"
        << esc(r.result.audit.detail) << "'>" << to_string(r.result.audit.status) << "</td><td class='"
        << (r.quiet.quiet ? "good" : "bad") << "' title='" << esc(r.quiet.reason) << "'>"
        << (r.quiet.quiet ? "yes" : "no") << "</td></tr>\n";
    }
  }
  o << "</table>\n<p class='note'>Raw series of every run are in series/ as CSV and HFTRAW, with "
       "HdrHistogram interval logs (.hlog) beside them (see docs/lab.md); report.json has every statistic, "
       "long-call index and condition; manifest.sha256 the hash of every file (hft-bench verify DIR re-derives "
       "them).</p>\n</body></html>\n";
  return o.str();
}

}  // namespace

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

std::vector<SummaryRow> summarize_report(const Report& report) {
  std::vector<SummaryRow> rows;
  std::map<std::string, std::size_t> index;
  std::vector<std::vector<Stats>> stats;
  std::vector<std::vector<double>> rates;
  for (const RunRecord& r : report.runs) {
    if (!r.error.empty()) continue;
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
      row.late_total += r.result.late;
      row.shed_total += r.result.shed;
      stats[it->second].push_back(s.analysis.stats);
      rates[it->second].push_back(r.result.achieved_rate);
    }
  }
  for (std::size_t k = 0; k < rows.size(); ++k) {
    rows[k].summary = summarize(stats[k]);
    rows[k].median_achieved_rate = median(rates[k]);
  }
  return rows;
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
    runs.push_back({{"order", r.order},
                    {"id", r.id},
                    {"status", r.error.empty() ? std::string(to_string(a.status)) : std::string("run-failed")},
                    {"checked", a.checked},
                    {"detail", r.error.empty() ? a.detail : r.error}});
  }
  const json j = {{"format", "hft-lab-audit"}, {"version", 1}, {"all_passed", all_pass}, {"runs", runs}};
  return write_text_file(path, j.dump(2) + "\n");
}

std::string console_table(const Report& report) {
  const std::vector<SummaryRow> rows = summarize_report(report);
  std::vector<std::vector<std::string>> cells;
  cells.push_back({"lane", "variant", "engine", "arm", "series", "runs", "p50 us", "p90 us", "p99 us", "p99.9 us",
                   "p99.99 us", "mean us", "max us", ">=100us", ">=1ms", ">=10ms", "calls/s"});
  const auto us = [](double ns) { return fixed(ns / 1e3, 3); };
  for (const SummaryRow& r : rows) {
    std::vector<std::string> c{r.lane, r.variant, r.engine, r.arm, r.series, std::to_string(r.summary.runs)};
    for (std::size_t q = 0; q < kQuantiles.size(); ++q) {
      if (kQuantiles[q].label == "p95") continue;
      c.push_back(us(r.summary.median_quantile_ns[q]));
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
    cells.push_back(std::move(c));
  }
  std::vector<std::size_t> width(cells.front().size(), 0);
  for (const auto& row : cells) {
    for (std::size_t k = 0; k < row.size(); ++k) width[k] = std::max(width[k], row[k].size());
  }
  std::string out;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    for (std::size_t k = 0; k < cells[i].size(); ++k) {
      const std::string& s = cells[i][k];
      const std::string pad(width[k] - s.size(), ' ');
      out += k < 5 ? s + pad : pad + s;  // text left, numbers right
      out += k + 1 < cells[i].size() ? "  " : "\n";
    }
  }
  out += "(medians of per-run statistics; max = largest actual maximum; long-call counts summed over runs)\n";
  return out;
}

}  // namespace hft::lab
