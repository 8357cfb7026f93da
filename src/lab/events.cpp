#include "hft/lab/events.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <string_view>
#include <tuple>

#include "text.hpp"

namespace hft::lab {

namespace {

template <typename T>
bool parse_number(std::string_view text, T& out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && end == text.data() + text.size() && !text.empty();
}

bool plain_field(const std::string& s) {
  return s.find_first_of(",\"\r\n") == std::string::npos;
}

}  // namespace

void sort_events(std::vector<RunEvent>& events) {
  std::stable_sort(events.begin(), events.end(), [](const RunEvent& x, const RunEvent& y) {
    return std::tie(x.begin, x.end, x.source, x.kind) < std::tie(y.begin, y.end, y.source, y.kind);
  });
}

std::string event_key(const RunEvent& event) {
  return event.source + ":" + event.kind;
}

Attribution attribute_long_calls(const Series& series, const std::vector<RunEvent>& events,
                                 double threshold_ns, std::size_t max_listed) {
  Attribution out;
  out.series = series.name;
  out.threshold_ns = threshold_ns;
  if (series.time.size() != series.values.size()) return out;
  // Events by begin; an event overlapping [s, e] begins at or before e and
  // at or after s - (the longest event).
  std::vector<std::size_t> order(events.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t x, std::size_t y) { return events[x].begin < events[y].begin; });
  std::int64_t longest = 0;
  for (const RunEvent& e : events) longest = std::max(longest, e.end - e.begin);

  // Which long calls are listed: the longest max_listed (ties: the earlier).
  std::vector<std::size_t> long_idx;
  for (std::size_t k = 0; k < series.values.size(); ++k) {
    if (series.ns(k) >= threshold_ns) long_idx.push_back(k);
  }
  out.long_calls = long_idx.size();
  std::vector<bool> listed(long_idx.size(), true);
  if (long_idx.size() > max_listed) {
    std::vector<std::size_t> by_length(long_idx.size());
    for (std::size_t k = 0; k < by_length.size(); ++k) by_length[k] = k;
    std::stable_sort(by_length.begin(), by_length.end(), [&](std::size_t x, std::size_t y) {
      return series.values[long_idx[x]] > series.values[long_idx[y]];
    });
    listed.assign(long_idx.size(), false);
    for (std::size_t k = 0; k < max_listed; ++k) listed[by_length[k]] = true;
  }
  out.calls.reserve(std::min(long_idx.size(), max_listed));

  for (std::size_t n = 0; n < long_idx.size(); ++n) {
    const std::size_t k = long_idx[n];
    LongCall call;
    call.index = k;
    call.start = series.time[k];
    call.duration = series.values[k];
    const std::int64_t s = call.start;
    const std::int64_t e = call.start + call.duration;
    auto first = std::lower_bound(order.begin(), order.end(), s - longest,
                                  [&](std::size_t i, std::int64_t v) { return events[i].begin < v; });
    std::vector<std::size_t> overlapping;
    for (auto it = first; it != order.end() && events[*it].begin <= e; ++it) {
      const RunEvent& ev = events[*it];
      if (ev.end < s) continue;
      overlapping.push_back(*it);
      std::string key = event_key(ev);
      if (std::find(call.kinds.begin(), call.kinds.end(), key) == call.kinds.end()) {
        call.kinds.push_back(std::move(key));
      }
    }
    if (overlapping.empty()) ++out.unattributed;
    for (const std::string& key : call.kinds) ++out.calls_by_kind[key];
    if (!listed[n]) continue;
    std::sort(overlapping.begin(), overlapping.end());
    call.overlapping = overlapping.size();
    if (overlapping.size() > kMaxEventsPerCall) overlapping.resize(kMaxEventsPerCall);
    call.events = std::move(overlapping);
    out.calls.push_back(std::move(call));
  }
  return out;
}

Expected<void> write_events_csv(const std::filesystem::path& path, const RunEvents& events,
                                double ticks_per_second) {
  std::string text = "# hft-lab events, csv v1\n# unit=tsc_ticks\n# ticks_per_second=";
  char num[64];
  std::snprintf(num, sizeof num, "%.17g", ticks_per_second);
  text += num;
  text += "\n# dropped=" + std::to_string(events.dropped) + "\n# sources=";
  for (std::size_t k = 0; k < events.sources.size(); ++k) text += (k ? ";" : "") + events.sources[k];
  text += "\nsource,kind,thread,begin,end,a,b\n";
  for (const RunEvent& e : events.events) {
    if (!plain_field(e.source) || !plain_field(e.kind) || !plain_field(e.thread)) {
      return Error{path.string() + ": an event field holds a comma, quote or line break"};
    }
    text += e.source + "," + e.kind + "," + e.thread + "," + std::to_string(e.begin) + "," +
            std::to_string(e.end) + "," + std::to_string(e.a) + "," + std::to_string(e.b) + "\n";
  }
  return detail::write_text_file(path, text);
}

Expected<RunEvents> read_events_csv(const std::filesystem::path& path, double* ticks_per_second) {
  detail::LineReader in(path);
  if (!in.is_open()) return Error{path.string() + ": cannot open"};
  RunEvents out;
  out.traced = true;
  std::string line;
  bool magic = false, header = false;
  while (in.next(line)) {
    if (line.empty()) continue;
    if (line[0] == '#') {
      if (line == "# hft-lab events, csv v1") magic = true;
      const std::string_view v(line);
      if (v.starts_with("# dropped=") && !parse_number(v.substr(10), out.dropped))
        return in.error("bad dropped count");
      if (v.starts_with("# ticks_per_second=") && ticks_per_second != nullptr) {
        *ticks_per_second = std::strtod(line.c_str() + 19, nullptr);
      }
      if (v.starts_with("# sources=")) {
        std::string_view rest = v.substr(10);
        while (!rest.empty()) {
          const std::size_t semi = rest.find(';');
          out.sources.emplace_back(rest.substr(0, semi));
          rest = semi == std::string_view::npos ? std::string_view{} : rest.substr(semi + 1);
        }
      }
      continue;
    }
    if (!magic) return in.error("not an events file (no '# hft-lab events, csv v1' line)");
    if (!header) {
      if (line != "source,kind,thread,begin,end,a,b") return in.error("expected the column header");
      header = true;
      continue;
    }
    std::vector<std::string_view> f;
    std::string_view rest(line);
    for (;;) {
      const std::size_t comma = rest.find(',');
      f.push_back(rest.substr(0, comma));
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
    if (f.size() != 7) return in.error("expected 7 fields");
    RunEvent e;
    e.source = std::string(f[0]);
    e.kind = std::string(f[1]);
    e.thread = std::string(f[2]);
    if (!parse_number(f[3], e.begin) || !parse_number(f[4], e.end) || !parse_number(f[5], e.a) ||
        !parse_number(f[6], e.b)) {
      return in.error("a number field is not a number");
    }
    if (e.end < e.begin) return in.error("end before begin");
    out.events.push_back(std::move(e));
  }
  if (!magic || !header) return Error{path.string() + ": not an events file (no header)"};
  return out;
}

}  // namespace hft::lab
