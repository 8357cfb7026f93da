// Internal text helpers of the lab's writers and readers: number formats,
// counts per MsgType, writing a whole file, and reading one line by line
// with errors that name the line.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "hft/core/expected.hpp"

namespace hft::lab::detail {

/// `v` with `decimals` digits after the point ("%.*f").
inline std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, v);
  return buf;
}

/// 1234567 -> "1,234,567".
inline std::string with_commas(std::uint64_t v) {
  std::string s = std::to_string(v);
  for (int k = static_cast<int>(s.size()) - 3; k > 0; k -= 3) s.insert(static_cast<std::size_t>(k), 1, ',');
  return s;
}

/// "A: 1, D: 150" from a MsgType -> count map (any string-keyed map of
/// counts: the audit layer's PerTypeCounts, a std::map).
template <typename Map>
std::string per_type_text(const Map& per_type) {
  std::string s;
  for (const auto& [type, n] : per_type) s += (s.empty() ? "" : ", ") + type + ": " + std::to_string(n);
  return s;
}

/// Writes `text` to `path` (replacing it). Error names the path.
inline Expected<void> write_text_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Error{path.string() + ": cannot create"};
  out << text;
  out.close();
  if (!out) return Error{path.string() + ": write failed"};
  return {};
}

/// Reads a text file line by line (a trailing '\r' dropped).
class LineReader {
 public:
  explicit LineReader(const std::filesystem::path& path) : path_(path), in_(path, std::ios::binary) {}
  [[nodiscard]] bool is_open() const { return static_cast<bool>(in_); }
  /// The next line into `line`; false at the end.
  bool next(std::string& line) {
    if (!std::getline(in_, line)) return false;
    ++line_no_;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    return true;
  }
  /// "path:line: what" for the line last read.
  [[nodiscard]] Error error(const std::string& what) const {
    return Error{path_.string() + ":" + std::to_string(line_no_) + ": " + what};
  }

 private:
  std::filesystem::path path_;
  std::ifstream in_;
  std::size_t line_no_ = 0;
};

}  // namespace hft::lab::detail
