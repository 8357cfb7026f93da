#include "hft/engine/trace_file.hpp"

#include <charconv>
#include <cstdio>
#include <fstream>
#include <map>
#include <string_view>

namespace hft::engine {

std::string thread_name(std::uint32_t tid) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/comm");
  std::string name;
  std::getline(in, name);
  // A name is used as one CSV field: keep it to characters that need no quoting.
  for (char& c : name) {
    if (c == ',' || c == '"' || c == '\n' || c == '\r') c = '_';
  }
  return name;
}

namespace {

template <typename T>
bool parse_number(std::string_view text, T& out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && end == text.data() + text.size();
}

}  // namespace

Expected<std::size_t> write_trace_file(const std::string& path) {
  std::vector<core::TraceRecord> records;
  (void)core::trace::drain(records);
  std::map<std::uint32_t, std::string> names;
  for (const core::TraceRecord& r : records) {
    if (!names.contains(r.tid)) names.emplace(r.tid, thread_name(r.tid));
  }
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "w");
  if (f == nullptr) return Error{tmp + ": cannot create the trace file"};
  std::fprintf(f, "# hft-trace 1\n# recorded %llu dropped %llu\nkind,tid,thread,begin_tsc,end_tsc,a,b\n",
               static_cast<unsigned long long>(core::trace::recorded()),
               static_cast<unsigned long long>(core::trace::dropped()));
  for (const core::TraceRecord& r : records) {
    const std::string_view kind = core::to_string(r.kind);
    std::fprintf(f, "%.*s,%u,%s,%llu,%llu,%llu,%llu\n", static_cast<int>(kind.size()), kind.data(), r.tid,
                 names[r.tid].c_str(), static_cast<unsigned long long>(r.begin),
                 static_cast<unsigned long long>(r.end), static_cast<unsigned long long>(r.a),
                 static_cast<unsigned long long>(r.b));
  }
  const bool ok = std::fflush(f) == 0 && std::ferror(f) == 0;
  if (std::fclose(f) != 0 || !ok) return Error{tmp + ": cannot write the trace file"};
  if (std::rename(tmp.c_str(), path.c_str()) != 0) return Error{path + ": cannot rename " + tmp + " to it"};
  return records.size();
}

Expected<TraceFile> read_trace_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Error{path + ": cannot open the trace file"};
  TraceFile out;
  std::string line;
  std::size_t number = 0;
  const auto bad = [&](const std::string& what) {
    return Error{path + ":" + std::to_string(number) + ": " + what};
  };
  bool header_seen = false, magic_seen = false;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    if (line[0] == '#') {
      if (line == "# hft-trace 1") magic_seen = true;
      unsigned long long recorded = 0, dropped = 0;
      if (std::sscanf(line.c_str(), "# recorded %llu dropped %llu", &recorded, &dropped) == 2) {
        out.recorded = recorded;
        out.dropped = dropped;
      }
      continue;
    }
    if (!magic_seen) return bad("not a trace file (no '# hft-trace 1' line)");
    if (!header_seen) {
      if (line != "kind,tid,thread,begin_tsc,end_tsc,a,b") return bad("expected the column header");
      header_seen = true;
      continue;
    }
    std::string_view fields[7];
    std::size_t k = 0, from = 0;
    const std::string_view text = line;
    while (k < 7) {
      const std::size_t comma = text.find(',', from);
      fields[k++] =
          text.substr(from, comma == std::string_view::npos ? std::string_view::npos : comma - from);
      if (comma == std::string_view::npos) break;
      from = comma + 1;
    }
    if (k != 7 || text.find(',', from) != std::string_view::npos) return bad("expected 7 fields");
    TraceFileRecord r;
    if (!core::parse_trace_kind(fields[0], r.record.kind))
      return bad("unknown kind '" + std::string(fields[0]) + "'");
    if (!parse_number(fields[1], r.record.tid) || !parse_number(fields[3], r.record.begin) ||
        !parse_number(fields[4], r.record.end) || !parse_number(fields[5], r.record.a) ||
        !parse_number(fields[6], r.record.b)) {
      return bad("a number field is not a number");
    }
    if (r.record.end < r.record.begin) return bad("end_tsc before begin_tsc");
    r.thread = std::string(fields[2]);
    out.records.push_back(std::move(r));
  }
  if (!magic_seen || !header_seen) return Error{path + ": not a trace file (no header)"};
  return out;
}

}  // namespace hft::engine
