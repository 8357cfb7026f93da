#include "compare.hpp"

#include <charconv>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "fix_text.hpp"

namespace hft::conformance {
namespace {

// Same content as /work/shared/conformance/fields.fmt, so the tool runs
// without the shared tree.
constexpr std::string_view kDefaultPatterns =
    "10=\\d{3}\n"
    "42=\\d{8}-\\d{2}:\\d{2}:\\d{2}\n"
    "52=\\d{8}-\\d{2}:\\d{2}:\\d{2}|\\d{8}-\\d{2}:\\d{2}:\\d{2}[.]\\d{3}\n"
    "60=\\d{8}-\\d{2}:\\d{2}:\\d{2}\n"
    "122=\\d{8}-\\d{2}:\\d{2}:\\d{2}\n";

// Leading integer of a tag, like the reference driver's String#to_i; a tag
// that does not start with a number gets no pattern.
bool parse_tag(std::string_view tag, long& out) {
  const char* first = tag.data();
  const char* last = tag.data() + tag.size();
  if (first != last && *first == '+') ++first;
  const auto [ptr, ec] = std::from_chars(first, last, out);
  return ec == std::errc() && ptr != first;
}

std::string field_text(const Field& f) {
  if (!f.has_equals) return std::string(f.tag);
  return std::string(f.tag) + "=" + std::string(f.value);
}

}  // namespace

FieldPatterns FieldPatterns::defaults() {
  FieldPatterns p = parse(kDefaultPatterns, "built-in fields.fmt");
  return p;
}

FieldPatterns FieldPatterns::parse(std::string_view text, const std::string& origin) {
  FieldPatterns result;
  result.origin_ = origin;
  int line_no = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line.front() == '#') continue;
    const std::size_t eq = line.find('=');
    long tag = 0;
    if (eq == std::string_view::npos || !parse_tag(line.substr(0, eq), tag)) {
      throw std::runtime_error(origin + ":" + std::to_string(line_no) + ": expected tag=regex, got '" +
                               std::string(line) + "'");
    }
    std::string source(line.substr(eq + 1));
    try {
      result.patterns_[tag] = FieldPattern{source, std::regex(source, std::regex::ECMAScript)};
    } catch (const std::regex_error& e) {
      throw std::runtime_error(origin + ":" + std::to_string(line_no) + ": bad regex for tag " +
                               std::to_string(tag) + ": " + e.what());
    }
  }
  return result;
}

FieldPatterns FieldPatterns::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open field pattern file");
  std::ostringstream buf;
  buf << in.rdbuf();
  return parse(buf.str(), path);
}

const FieldPattern* FieldPatterns::find(long tag) const {
  const auto it = patterns_.find(tag);
  return it == patterns_.end() ? nullptr : &it->second;
}

std::optional<Difference> compare_messages(std::string_view expected, std::string_view received,
                                           const FieldPatterns& patterns) {
  const std::vector<Field> exp = split_fields(expected);
  const std::vector<Field> got = split_fields(received);
  std::string count_note;
  if (exp.size() != got.size()) {
    count_note = "expected " + std::to_string(exp.size()) + " fields, received " + std::to_string(got.size());
  }
  const std::size_t common = exp.size() < got.size() ? exp.size() : got.size();
  // A BodyLength difference is nearly always the echo of a later one; report
  // that later one first so the cause is visible, and BodyLength with it.
  std::optional<Difference> length_diff;
  auto with_length_note = [&](std::string what) {
    if (length_diff) what += " (and " + length_diff->description + ")";
    return what;
  };
  for (std::size_t i = 0; i < common; ++i) {
    const Field& e = exp[i];
    const Field& g = got[i];
    std::string what;
    if (e.tag != g.tag) {
      what = "field " + std::to_string(i + 1) + ": expected tag " + std::string(e.tag) + " (" + field_text(e) +
             ") but received tag " + std::string(g.tag) + " (" + field_text(g) + ")";
    } else {
      long tag = 0;
      const FieldPattern* pattern = parse_tag(e.tag, tag) ? patterns.find(tag) : nullptr;
      if (pattern != nullptr) {
        const std::string value(g.value);
        if (!std::regex_search(value, pattern->regex)) {
          what = "field " + std::to_string(i + 1) + " (tag " + std::string(e.tag) + "): received value '" +
                 value + "' does not match /" + pattern->text + "/";
        }
      } else if (e.value != g.value || e.has_equals != g.has_equals) {
        what = "field " + std::to_string(i + 1) + " (tag " + std::string(e.tag) + "): expected '" +
               std::string(e.value) + "' but received '" + std::string(g.value) + "'";
      }
    }
    if (what.empty()) continue;
    if (e.tag == "9" && g.tag == "9" && !length_diff) {
      length_diff = Difference{i, std::move(what)};
      continue;
    }
    if (!count_note.empty()) what = count_note + "; first difference at " + what;
    return Difference{length_diff ? length_diff->field_index : i, with_length_note(std::move(what))};
  }
  if (!count_note.empty()) {
    std::string what = count_note + "; ";
    what += exp.size() > got.size() ? "missing field " + field_text(exp[common])
                                    : "extra field " + field_text(got[common]);
    what += " at position " + std::to_string(common + 1);
    return Difference{length_diff ? length_diff->field_index : common, with_length_note(std::move(what))};
  }
  if (length_diff) return length_diff;
  return std::nullopt;
}

}  // namespace hft::conformance
