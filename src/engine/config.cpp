#include "hft/engine/config.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

namespace hft::engine {

// The keys that configure TLS (they need SocketUseSSL=Y).
namespace {
constexpr std::string_view kTlsKeys[] = {
    "ServerCertificateFile",         "ServerCertificateKeyFile",           "ClientCertificateFile",
    "ClientCertificateKeyFile",      "CertificationAuthoritiesFile",       "CertificationAuthoritiesDirectory",
    "CertificateRevocationListFile", "CertificateRevocationListDirectory", "CertificateVerifyLevel",
    "SSLProtocol",                   "SSLCipherSuite"};
}  // namespace


namespace {

// ---------------------------------------------------------------- text ----

char lower(char c) noexcept {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

bool iequals(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

bool istarts_with(std::string_view text, std::string_view prefix) noexcept {
  return text.size() >= prefix.size() && iequals(text.substr(0, prefix.size()), prefix);
}

std::string_view trim(std::string_view s) noexcept {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool all_digits(std::string_view s) noexcept {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string quoted(std::string_view s) {
  return "\"" + std::string(s) + "\"";
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] =
          std::min({row[j] + 1, row[j - 1] + 1, diagonal + (lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// -------------------------------------------------------------- values ----

std::optional<std::int64_t> parse_int(std::string_view s) noexcept {
  std::int64_t v = 0;
  const char* first = s.data();
  if (!s.empty() && s.front() == '+') ++first;
  const auto [ptr, ec] = std::from_chars(first, s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<std::uint64_t> parse_size(std::string_view s) noexcept {
  std::uint64_t multiplier = 1;
  if (!s.empty()) {
    switch (lower(s.back())) {
      case 'k':
        multiplier = 1ULL << 10;
        break;
      case 'm':
        multiplier = 1ULL << 20;
        break;
      case 'g':
        multiplier = 1ULL << 30;
        break;
      default:
        break;
    }
    if (multiplier != 1) s.remove_suffix(1);
  }
  if (!all_digits(s)) return std::nullopt;
  std::uint64_t v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || v > UINT64_MAX / multiplier) return std::nullopt;
  return v * multiplier;
}

std::optional<TimeOfDay> parse_time(std::string_view s) noexcept {
  if (s.size() != 8 || s[2] != ':' || s[5] != ':') return std::nullopt;
  auto two = [&](std::size_t at) -> int {
    if (s[at] < '0' || s[at] > '9' || s[at + 1] < '0' || s[at + 1] > '9') return -1;
    return (s[at] - '0') * 10 + (s[at + 1] - '0');
  };
  const TimeOfDay t{two(0), two(3), two(6)};
  if (t.hour < 0 || t.hour > 23 || t.minute < 0 || t.minute > 59 || t.second < 0 || t.second > 59) {
    return std::nullopt;
  }
  return t;
}

std::optional<std::chrono::weekday> parse_day(std::string_view s) noexcept {
  static constexpr std::string_view kDays[] = {"sunday",   "monday", "tuesday", "wednesday",
                                               "thursday", "friday", "saturday"};
  if (s.size() < 2) return std::nullopt;
  for (unsigned d = 0; d < 7; ++d) {
    const std::string_view name = kDays[d];
    if (s.size() <= name.size() && (s.size() <= 3 || s.size() == name.size()) &&
        iequals(s, name.substr(0, s.size()))) {
      return std::chrono::weekday{d};
    }
  }
  return std::nullopt;
}

bool time_zone_exists(std::string_view name) {
  if (iequals(name, "UTC") || iequals(name, "GMT") || name == "Z") return true;
  if (name.find("..") != std::string_view::npos || name.front() == '/') return false;
  const char* dir = std::getenv("TZDIR");
  const std::string path =
      std::string(dir != nullptr && *dir != '\0' ? dir : "/usr/share/zoneinfo") + "/" + std::string(name);
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string choices_text(std::string_view choices) {
  std::string out;
  std::size_t start = 0;
  while (start <= choices.size()) {
    const std::size_t bar = std::min(choices.find('|', start), choices.size());
    if (!out.empty()) out += ", ";
    out += choices.substr(start, bar - start);
    start = bar + 1;
  }
  return out;
}

bool is_choice(std::string_view choices, std::string_view value) {
  std::size_t start = 0;
  while (start <= choices.size()) {
    const std::size_t bar = std::min(choices.find('|', start), choices.size());
    if (choices.substr(start, bar - start) == value) return true;
    start = bar + 1;
  }
  return false;
}

std::string_view unit_name(std::int64_t unit_ns) {
  switch (unit_ns) {
    case 1'000'000'000:
      return "seconds";
    case 1'000'000:
      return "milliseconds";
    case 1'000:
      return "microseconds";
    default:
      return "nanoseconds";
  }
}

std::string range_text(const KeySpec& spec) {
  return std::to_string(spec.min) + ".." + std::to_string(spec.max);
}

std::string size_text(std::int64_t v) {
  if (v >= (1LL << 30) && v % (1LL << 30) == 0) return std::to_string(v >> 30) + "G";
  if (v >= (1LL << 20) && v % (1LL << 20) == 0) return std::to_string(v >> 20) + "M";
  if (v >= (1LL << 10) && v % (1LL << 10) == 0) return std::to_string(v >> 10) + "K";
  return std::to_string(v);
}

// Checks `value` against the type of `spec`: an empty optional if valid,
// else what is wrong.
std::optional<std::string> check_value(const KeySpec& spec, std::string_view value) {
  const std::string bad = "bad value " + quoted(value) + ": expected ";
  switch (spec.type) {
    case ValueType::kString:
    case ValueType::kPath:
      return std::nullopt;
    case ValueType::kHost:
      if (value.find_first_of(" \t") != std::string_view::npos) return bad + "a host name or address";
      return std::nullopt;
    case ValueType::kInt:
    case ValueType::kPort: {
      const auto v = parse_int(value);
      if (!spec.choices.empty() && (!v || !is_choice(spec.choices, value))) {
        return bad + "one of " + choices_text(spec.choices);
      }
      const char* what = spec.type == ValueType::kPort ? "a port " : "an integer ";
      if (!v || *v < spec.min || *v > spec.max) return bad + what + "in " + range_text(spec);
      return std::nullopt;
    }
    case ValueType::kBool:
      if (value != "Y" && value != "N") return bad + "Y or N";
      return std::nullopt;
    case ValueType::kDuration: {
      const auto v = all_digits(value) ? parse_int(value) : std::nullopt;
      if (!v || *v < spec.min || *v > spec.max) {
        return bad + "a whole number of " + std::string(unit_name(spec.unit_ns)) + " in " + range_text(spec);
      }
      return std::nullopt;
    }
    case ValueType::kSize: {
      const auto v = parse_size(value);
      if (!v || *v < static_cast<std::uint64_t>(spec.min) || *v > static_cast<std::uint64_t>(spec.max)) {
        return bad + "a size in bytes (K, M, G suffixes allowed) in " + size_text(spec.min) + ".." +
               size_text(spec.max);
      }
      return std::nullopt;
    }
    case ValueType::kTimeOfDay:
      if (!parse_time(value)) return bad + "a time of day HH:MM:SS (00:00:00..23:59:59)";
      return std::nullopt;
    case ValueType::kDay:
      if (!parse_day(value)) return bad + "a day name (Sunday..Saturday, or Su, Mon, ...)";
      return std::nullopt;
    case ValueType::kEnum:
      if (!is_choice(spec.choices, value)) return bad + "one of " + choices_text(spec.choices);
      return std::nullopt;
    case ValueType::kTimeZone:
      if (!time_zone_exists(value))
        return bad + "UTC or a time zone of the zoneinfo database (e.g. Europe/London)";
      return std::nullopt;
  }
  return std::nullopt;
}

// A key as written, resolved against the schema.
struct ResolvedKey {
  const KeySpec* spec = nullptr;
  std::string canonical;  // schema spelling plus number / qualifier / family suffix
  int number = 0;         // numbered keys: 0 for the base key
};

std::optional<ResolvedKey> resolve_key(std::string_view key) {
  for (const KeySpec& spec : config_schema()) {
    if (spec.prefix) {
      const std::string_view stem = spec.name.substr(0, spec.name.size() - 1);
      if (key.size() > stem.size() && istarts_with(key, stem)) {
        return ResolvedKey{&spec, std::string(stem) + std::string(key.substr(stem.size())), 0};
      }
      continue;
    }
    if (iequals(key, spec.name)) return ResolvedKey{&spec, std::string(spec.name), 0};
    if (spec.numbered && istarts_with(key, spec.name)) {
      const std::string_view rest = key.substr(spec.name.size());
      if (all_digits(rest) && rest.front() != '0' && rest.size() <= 4) {
        return ResolvedKey{&spec, std::string(spec.name) + std::string(rest),
                           std::atoi(std::string(rest).c_str())};
      }
    }
    if (spec.qualified && key.size() > spec.name.size() + 1 && istarts_with(key, spec.name) &&
        key[spec.name.size()] == '.') {
      return ResolvedKey{&spec, std::string(spec.name) + std::string(key.substr(spec.name.size())), 0};
    }
  }
  return std::nullopt;
}

std::string suggestion(std::string_view key) {
  std::size_t best = SIZE_MAX;
  std::string_view best_name;
  for (const KeySpec& spec : config_schema()) {
    if (spec.prefix) continue;
    const std::size_t d = edit_distance(key, spec.name);
    if (d < best) {
      best = d;
      best_name = spec.name;
    }
  }
  if (best <= 3 && best < key.size() / 2) return " (did you mean " + std::string(best_name) + "?)";
  return {};
}

}  // namespace

const KeySpec* find_key_spec(std::string_view key) noexcept {
  try {
    const auto resolved = resolve_key(key);
    return resolved ? resolved->spec : nullptr;
  } catch (...) {
    return nullptr;
  }
}

// ------------------------------------------------------------ session id ----

std::string SessionId::to_string() const {
  std::string s = begin_string + ":" + sender_comp_id;
  if (!sender_sub_id.empty() || !sender_location_id.empty()) s += "/" + sender_sub_id;
  if (!sender_location_id.empty()) s += "/" + sender_location_id;
  s += "->" + target_comp_id;
  if (!target_sub_id.empty() || !target_location_id.empty()) s += "/" + target_sub_id;
  if (!target_location_id.empty()) s += "/" + target_location_id;
  if (!qualifier.empty()) s += ":" + qualifier;
  return s;
}

// ------------------------------------------------------------- section ----

Error Section::error(std::string_view key, const std::string& message) const {
  return Error{file_ + ":" + std::to_string(line_) + ": " + std::string(key) + ": " + message};
}

const Setting* Section::find(std::string_view key) const {
  const auto resolved = resolve_key(key);
  const std::string canonical = resolved ? resolved->canonical : std::string(key);
  // Own settings override inherited ones; both may be present in a session.
  const Setting* found = nullptr;
  for (const Setting& s : settings_) {
    if (s.key == canonical && (found == nullptr || found->inherited)) found = &s;
  }
  return found;
}

bool Section::has(std::string_view key) const {
  return find(key) != nullptr;
}

bool Section::matches(const SessionId& id) const noexcept {
  auto glob = [](std::string_view pattern, std::string_view text) noexcept {
    // '*' matches any run of characters (none included); everything else itself.
    std::size_t p = 0, t = 0, star = std::string_view::npos, back = 0;
    while (t < text.size()) {
      if (p < pattern.size() && pattern[p] == '*') {
        star = p++;
        back = t;
      } else if (p < pattern.size() && pattern[p] == text[t]) {
        ++p;
        ++t;
      } else if (star != std::string_view::npos) {
        p = star + 1;
        t = ++back;
      } else {
        return false;
      }
    }
    while (p < pattern.size() && pattern[p] == '*') ++p;
    return p == pattern.size();
  };
  return id.begin_string == id_.begin_string && glob(id_.sender_comp_id, id.sender_comp_id) &&
         glob(id_.target_comp_id, id.target_comp_id) && glob(id_.sender_sub_id, id.sender_sub_id) &&
         glob(id_.target_sub_id, id.target_sub_id) && glob(id_.sender_location_id, id.sender_location_id) &&
         glob(id_.target_location_id, id.target_location_id) && id.qualifier == id_.qualifier;
}

Section Section::instantiate(const SessionId& id) const {
  Section s = *this;
  s.template_ = false;
  s.id_ = id;
  const std::pair<const char*, const std::string*> ids[] = {
      {"SenderCompID", &id.sender_comp_id},     {"TargetCompID", &id.target_comp_id},
      {"SenderSubID", &id.sender_sub_id},       {"TargetSubID", &id.target_sub_id},
      {"SenderLocationID", &id.sender_location_id}, {"TargetLocationID", &id.target_location_id}};
  for (const auto& entry : ids) {
    const char* key = entry.first;
    const std::string* value = entry.second;
    const auto it = std::find_if(s.settings_.begin(), s.settings_.end(),
                                 [key](const Setting& x) { return iequals(x.key, key); });
    if (value->empty()) {
      if (it != s.settings_.end()) s.settings_.erase(it);
    } else if (it != s.settings_.end()) {
      it->value = *value;
    } else {
      s.settings_.push_back(Setting{key, *value, line_, false, {}});
    }
  }
  s.settings_.erase(std::remove_if(s.settings_.begin(), s.settings_.end(),
                                   [](const Setting& x) { return iequals(x.key, "AcceptorTemplate"); }),
                    s.settings_.end());
  return s;
}

std::string Section::where(std::string_view key) const {
  const Setting* s = find(key);
  if (s != nullptr && !s->origin.empty()) return s->origin;
  return file_ + ":" + std::to_string(s != nullptr ? s->line : line_);
}

Expected<std::string_view> Section::text_of(std::string_view key,
                                            std::initializer_list<ValueType> types) const {
  const KeySpec* spec = find_key_spec(key);
  if (spec == nullptr) return error(key, "not a configuration key");
  if (std::find(types.begin(), types.end(), spec->type) == types.end()) {
    return error(spec->name, "read with a getter of another type");
  }
  if (const Setting* s = find(key)) return std::string_view(s->value);
  if (!spec->default_value.empty()) return spec->default_value;
  return error(spec->name, "not set in the section at line " + std::to_string(line_) + " and has no default");
}

Expected<std::string> Section::get_string(std::string_view key) const {
  auto t = text_of(key, {ValueType::kString, ValueType::kPath, ValueType::kHost, ValueType::kInt,
                         ValueType::kPort, ValueType::kBool, ValueType::kDuration, ValueType::kSize,
                         ValueType::kTimeOfDay, ValueType::kDay, ValueType::kEnum, ValueType::kTimeZone});
  if (!t) return t.error();
  return std::string(*t);
}

Expected<std::int64_t> Section::get_int(std::string_view key) const {
  auto t = text_of(key, {ValueType::kInt, ValueType::kPort, ValueType::kDuration});
  if (!t) return t.error();
  return parse_int(*t).value_or(0);
}

Expected<bool> Section::get_bool(std::string_view key) const {
  auto t = text_of(key, {ValueType::kBool});
  if (!t) return t.error();
  return *t == "Y";
}

Expected<std::chrono::nanoseconds> Section::get_duration(std::string_view key) const {
  auto t = text_of(key, {ValueType::kDuration});
  if (!t) return t.error();
  return std::chrono::nanoseconds(parse_int(*t).value_or(0) * find_key_spec(key)->unit_ns);
}

Expected<std::uint64_t> Section::get_size(std::string_view key) const {
  auto t = text_of(key, {ValueType::kSize});
  if (!t) return t.error();
  return parse_size(*t).value_or(0);
}

Expected<TimeOfDay> Section::get_time(std::string_view key) const {
  auto t = text_of(key, {ValueType::kTimeOfDay});
  if (!t) return t.error();
  return parse_time(*t).value_or(TimeOfDay{});
}

Expected<std::chrono::weekday> Section::get_day(std::string_view key) const {
  auto t = text_of(key, {ValueType::kDay});
  if (!t) return t.error();
  return parse_day(*t).value_or(std::chrono::weekday{});
}

// -------------------------------------------------------------- parser ----

class ConfigParser {
 public:
  ConfigParser(std::string_view text, const std::string& file, std::span<const Override> overrides,
               std::span<const std::string> origins = {})
      : text_(text), file_(file), overrides_(overrides), origins_(origins) {}

  Expected<Config> run() {
    Config config;
    config.defaults_.kind_ = Section::Kind::kDefault;
    config.defaults_.file_ = file_;
    Section* current = nullptr;
    bool seen_default = false;
    int line_no = 0;
    std::size_t pos = 0;
    while (pos <= text_.size()) {
      const std::size_t end = std::min(text_.find('\n', pos), text_.size());
      const std::string_view line = trim(text_.substr(pos, end - pos));
      pos = end + 1;
      ++line_no;
      if (line.empty() || line.front() == '#') continue;

      if (line.front() == '[') {
        if (line.back() != ']') return fail(line_no, line, "a section header must end with ']'");
        const std::string_view name = trim(line.substr(1, line.size() - 2));
        if (iequals(name, "DEFAULT")) {
          if (seen_default) {
            return fail(
                line_no, "[DEFAULT]",
                "second [DEFAULT] section (first at line " + std::to_string(config.defaults_.line_) + ")");
          }
          seen_default = true;
          config.defaults_.line_ = line_no;
          current = &config.defaults_;
        } else if (iequals(name, "SESSION")) {
          Section& s = config.sessions_.emplace_back();
          s.kind_ = Section::Kind::kSession;
          s.line_ = line_no;
          s.file_ = file_;
          s.origin_ = origin_of(line_no);
          current = &s;
        } else {
          return fail(line_no, "[" + std::string(name) + "]",
                      "unknown section: expected [DEFAULT] or [SESSION]");
        }
        continue;
      }

      const std::size_t eq = line.find('=');
      if (eq == std::string_view::npos) {
        return fail_line(line_no, line, "expected key=value, a [SECTION] header or a # comment");
      }
      const std::string_view key = trim(line.substr(0, eq));
      const std::string_view value = trim(line.substr(eq + 1));
      if (key.empty()) return fail_line(line_no, "(empty key)", "a line starts with '='");
      if (current == nullptr) return fail_line(line_no, key, "setting before any [DEFAULT] or [SESSION] section");
      const auto resolved = resolve_key(key);
      if (!resolved) return fail_line(line_no, key, "unknown key" + suggestion(key));
      const KeySpec& spec = *resolved->spec;
      const std::string& canonical = resolved->canonical;
      if (value.empty()) return fail_line(line_no, canonical, "empty value (remove the line to use the default)");
      if (spec.scope == KeyScope::kEngine && current->kind_ == Section::Kind::kSession) {
        return fail_line(line_no, canonical, "engine-wide key: set it in [DEFAULT], not in a [SESSION]");
      }
      if (spec.support == KeySupport::kUnsupported && value != spec.default_value) {
        return fail_line(line_no, canonical, std::string(spec.description));  // says "Not supported: why"
      }
      if (const auto problem = check_value(spec, value)) return fail_line(line_no, canonical, *problem);
      for (const Setting& s : current->settings_) {
        if (s.key == canonical) {
          return fail_line(line_no, canonical,
                           "set twice in the same section (first " +
                               (s.origin.empty() ? "at line " + std::to_string(s.line) : "by " + s.origin) + ")");
        }
      }
      current->settings_.push_back(Setting{canonical, std::string(value), line_no, false, origin_of(line_no)});
    }

    if (config.sessions_.empty()) {
      return fail(line_no, "[SESSION]", "no [SESSION] section in the file");
    }
    for (const Override& o : overrides_) {
      if (auto applied = apply(config, o); !applied) return applied.error();
    }
    for (Section& session : config.sessions_) {
      std::vector<Setting> merged;
      merged.reserve(config.defaults_.settings_.size() + session.settings_.size());
      for (const Setting& d : config.defaults_.settings_) {
        merged.push_back(d);
        merged.back().inherited = true;
      }
      merged.insert(merged.end(), session.settings_.begin(), session.settings_.end());
      session.settings_ = std::move(merged);
      if (auto checked = check_session(session); !checked) return checked.error();
    }
    for (std::size_t i = 0; i < config.sessions_.size(); ++i) {
      for (std::size_t j = 0; j < i; ++j) {
        if (config.sessions_[i].id_ == config.sessions_[j].id_) {
          const Section& s = config.sessions_[i];
          return fail_section(s, "[SESSION]",
                      "duplicate session " + s.id_.to_string() + " (also defined by the [SESSION] at line " +
                          std::to_string(config.sessions_[j].line_) + ")");
        }
      }
    }
    return config;
  }

 private:
  // The origin of line `line_no` (ConfigBuilder: the option or call that set
  // it), or empty for a file line.
  [[nodiscard]] std::string origin_of(int line_no) const {
    const auto i = static_cast<std::size_t>(line_no - 1);
    return i < origins_.size() ? origins_[i] : std::string();
  }
  // At a line being read: its origin, else file:line.
  Error fail_line(int line_no, std::string_view key, const std::string& message) const {
    const std::string origin = origin_of(line_no);
    if (origin.empty()) return fail(line_no, key, message);
    return Error{origin + ": " + std::string(key) + ": " + message};
  }
  // About a whole [SESSION]: its origin, else file:line of its header.
  Error fail_section(const Section& s, std::string_view key, const std::string& message) const {
    if (s.origin_.empty()) return fail(s.line_, key, message);
    return Error{file_ + ": " + s.origin_ + ": " + std::string(key) + ": " + message};
  }
  Error fail(int line, std::string_view key, const std::string& message) const {
    return Error{file_ + ":" + std::to_string(line) + ": " + std::string(key) + ": " + message};
  }
  // At a setting: its file line, or the override it came from.
  Error fail(const Setting& at, std::string_view key, const std::string& message) const {
    if (at.origin.empty()) return fail(at.line, key, message);
    return Error{at.origin + ": " + std::string(key) + ": " + message};
  }

  // One override, checked as a file line is, set in [DEFAULT] (engine-wide
  // keys) or in every [SESSION], replacing what is there.
  static Expected<void> apply(Config& config, const Override& o) {
    const auto fail_here = [&](std::string_view key, const std::string& message) {
      return Error{o.origin + ": " + std::string(key) + ": " + message};
    };
    const auto resolved = resolve_key(o.key);
    if (!resolved) return fail_here(o.key, "unknown key" + suggestion(o.key));
    const KeySpec& spec = *resolved->spec;
    const std::string value(trim(o.value));
    if (value.empty()) return fail_here(resolved->canonical, "empty value");
    if (spec.support == KeySupport::kUnsupported && value != spec.default_value) {
      return fail_here(resolved->canonical, std::string(spec.description));
    }
    if (const auto problem = check_value(spec, value)) return fail_here(resolved->canonical, *problem);
    const Setting setting{resolved->canonical, value, 0, false, o.origin};
    const auto set_in = [&](Section& section) {
      for (Setting& s : section.settings_) {
        if (s.key == setting.key) {
          s = setting;
          return;
        }
      }
      section.settings_.push_back(setting);
    };
    if (spec.scope == KeyScope::kEngine) {
      set_in(config.defaults_);
    } else {
      for (Section& session : config.sessions_) set_in(session);
    }
    return {};
  }

  // Checks one merged session for what a single line cannot show.
  Expected<void> check_session(Section& s) const {
    auto value = [&](std::string_view key) -> const Setting* { return s.find(key); };
    auto text = [&](std::string_view key) -> std::string {
      const Setting* v = value(key);
      return v != nullptr ? v->value : std::string();
    };
    const std::string in_section =
        s.origin_.empty() ? " in the [SESSION] at line " + std::to_string(s.line_) : " in " + s.origin_;
    auto require = [&](std::string_view key, const std::string& why) -> Expected<void> {
      if (value(key) == nullptr) return fail_section(s, key, "required" + why + ", missing" + in_section);
      return {};
    };
    auto at = [&](std::string_view key, const std::string& message) {
      const Setting* v = value(key);
      return v != nullptr ? fail(*v, key, message) : fail_section(s, key, message);
    };

    for (const char* key : {"ConnectionType", "BeginString", "SenderCompID", "TargetCompID"}) {
      if (auto r = require(key, ""); !r) return r;
    }
    const bool initiator = text("ConnectionType") == "initiator";
    s.type_ = initiator ? ConnectionType::kInitiator : ConnectionType::kAcceptor;
    s.id_ = SessionId{text("BeginString"),      text("SenderCompID"),    text("SenderSubID"),
                      text("SenderLocationID"), text("TargetCompID"),    text("TargetSubID"),
                      text("TargetLocationID"), text("SessionQualifier")};
    const std::string for_type = initiator ? " for ConnectionType=initiator" : " for ConnectionType=acceptor";
    const bool fixt = s.id_.begin_string == "FIXT.1.1";
    if (const Setting* t = value("AcceptorTemplate"); t != nullptr && iequals(t->value, "Y")) {
      if (initiator) return fail(*t, "AcceptorTemplate", "only an acceptor session can be a template" + in_section);
      if (s.id_.sender_comp_id.find('*') == std::string::npos &&
          s.id_.target_comp_id.find('*') == std::string::npos)
        return fail(*t, "AcceptorTemplate",
                    "a template needs '*' (any characters) in SenderCompID or TargetCompID" + in_section);
      // Per-session event files are opened at start for configured sessions;
      // a template's sessions log to the engine's files.
      if (const Setting* f = value("FileLogPath"); f != nullptr && !f->inherited)
        return fail(*f, "FileLogPath",
                    "not in an AcceptorTemplate section: its sessions log to the engine's files "
                    "([DEFAULT] FileLogPath or LogFile)" + in_section);
      s.template_ = true;
    }

    if (initiator) {
      for (const char* key : {"SocketConnectHost", "SocketConnectPort", "HeartBtInt"}) {
        if (auto r = require(key, for_type); !r) return r;
      }
      if (text("HeartBtInt") == "0") {
        return at("HeartBtInt",
                  "must be greater than 0" + for_type + " (session at line " + std::to_string(s.line_) + ")");
      }
      // Endpoints: the primary, then 1, 2, ... without gaps, each with host and port.
      s.endpoints_.push_back({text("SocketConnectHost"),
                              static_cast<std::uint16_t>(parse_int(text("SocketConnectPort")).value_or(0))});
      int highest = 0;
      for (const Setting& v : s.settings_) {
        for (std::string_view stem : {"SocketConnectHost", "SocketConnectPort"}) {
          const std::string_view k = v.key;
          if (k.size() > stem.size() && k.substr(0, stem.size()) == stem &&
              all_digits(k.substr(stem.size()))) {
            highest = std::max(highest, std::atoi(std::string(k.substr(stem.size())).c_str()));
          }
        }
      }
      for (int n = 1; n <= highest; ++n) {
        const std::string host_key = "SocketConnectHost" + std::to_string(n);
        const std::string port_key = "SocketConnectPort" + std::to_string(n);
        const Setting* host = value(host_key);
        const Setting* port = value(port_key);
        if (host == nullptr && port == nullptr) {
          // Point at the first key numbered above the gap.
          const Setting* above = nullptr;
          for (const Setting& v : s.settings_) {
            const auto r = resolve_key(v.key);
            if (r && r->number > n && (above == nullptr || v.line < above->line)) above = &v;
          }
          return fail(*above, above->key,
                      "failover endpoints are numbered 1, 2, ... without gaps: " + host_key + "/" + port_key +
                          " are missing" + in_section);
        }
        if (host == nullptr) return at(port_key, "has no matching " + host_key + in_section);
        if (port == nullptr) return at(host_key, "has no matching " + port_key + in_section);
        s.endpoints_.push_back({host->value, static_cast<std::uint16_t>(parse_int(port->value).value_or(0))});
      }
    } else {
      if (auto r = require("SocketAcceptPort", for_type); !r) return r;
      if (value("SessionQualifier") != nullptr) {
        return at("SessionQualifier", "not allowed for ConnectionType=acceptor (session at line " +
                                          std::to_string(s.line_) + ")");
      }
    }
    // A key of the other connection type set in the session itself is a
    // copy-paste slip; inherited from [DEFAULT] it is normal in a file that
    // mixes initiators and acceptors.
    for (const Setting& v : s.settings_) {
      if (v.inherited) continue;
      const bool connect_key = v.key.rfind("SocketConnect", 0) == 0 || v.key.rfind("ClientCertificate", 0) == 0;
      const bool accept_key = v.key.rfind("SocketAccept", 0) == 0 || v.key.rfind("ServerCertificate", 0) == 0;
      if ((initiator && accept_key) || (!initiator && connect_key)) {
        return fail(v, v.key, std::string("not used") + for_type + in_section);
      }
    }

    if (fixt) {
      if (auto r = require("DefaultApplVerID", " with BeginString=FIXT.1.1"); !r) return r;
    }
    if (text("UseDataDictionary") != "N") {
      const char* dictionary = fixt ? "TransportDataDictionary" : "DataDictionary";
      if (auto r = require(dictionary,
                           " with UseDataDictionary=Y (the default; set N to run with the built-in "
                           "session messages only)");
          !r) {
        return r;
      }
    }
    if (text("NonStopSession") != "Y") {
      for (const char* key : {"StartTime", "EndTime"}) {
        if (auto r = require(key, " unless NonStopSession=Y"); !r) return r;
      }
    }
    if (text("SocketUseSSL") != "Y") {
      for (const std::string_view key : kTlsKeys) {
        if (value(key) != nullptr) {
          return at(key, "is set but SocketUseSSL is not Y (plain TCP would ignore it)" + in_section);
        }
      }
    }
    const bool start_day = value("StartDay") != nullptr;
    const bool end_day = value("EndDay") != nullptr;
    if (start_day && !end_day) return at("StartDay", "set without EndDay" + in_section);
    if (end_day && !start_day) return at("EndDay", "set without StartDay" + in_section);
    if (value("TimeZone") != nullptr && text("UseLocalTime") == "Y") {
      return at("TimeZone", "cannot be combined with UseLocalTime=Y" + in_section);
    }
    auto size_of = [&](std::string_view key) {
      const Setting* v = value(key);
      return parse_size(v != nullptr ? std::string_view(v->value) : find_key_spec(key)->default_value)
          .value_or(0);
    };
    if (size_of("MaxMessageSize") > size_of("ReceiveBufferSize")) {
      const char* key = value("MaxMessageSize") != nullptr ? "MaxMessageSize" : "ReceiveBufferSize";
      return at(key, "MaxMessageSize (" + std::to_string(size_of("MaxMessageSize")) +
                         ") exceeds ReceiveBufferSize (" + std::to_string(size_of("ReceiveBufferSize")) +
                         ")" + in_section);
    }
    return {};
  }

  std::string_view text_;
  std::string file_;
  std::span<const Override> overrides_;
  std::span<const std::string> origins_;
};

Expected<Config> Config::parse(std::string_view text, const std::string& file_name,
                               std::span<const Override> overrides) {
  return ConfigParser(text, file_name, overrides).run();
}

// ------------------------------------------------------------- builder ----

ConfigBuilder::ConfigBuilder(std::string name) : name_(std::move(name)) {}

ConfigBuilder& ConfigBuilder::set(std::string_view key, std::string_view value, std::string_view origin) {
  lines_.push_back(Line{false, std::string(key), std::string(value), std::string(origin)});
  return *this;
}

ConfigBuilder& ConfigBuilder::set(std::string_view key, std::int64_t value, std::string_view origin) {
  return set(key, std::to_string(value), origin);
}

ConfigBuilder& ConfigBuilder::add_session(std::string_view origin) {
  ++sessions_;
  lines_.push_back(Line{true, {}, {}, origin.empty() ? "session " + std::to_string(sessions_) : std::string(origin)});
  return *this;
}

std::string ConfigBuilder::text() const {
  std::string t = "[DEFAULT]\n";
  for (const Line& l : lines_) t += l.section ? std::string("[SESSION]\n") : l.key + "=" + l.value + "\n";
  return t;
}

Expected<Config> ConfigBuilder::build(std::span<const Override> overrides) const {
  // The same text a file would hold, each line tagged with its origin, so
  // that every check and every message is the file's, naming the origin.
  std::string t = "[DEFAULT]\n";
  std::vector<std::string> origins{std::string()};
  for (const Line& l : lines_) {
    const std::string where = l.origin.empty() ? name_ + ": " + l.key : l.origin;
    if (!l.section && (l.key.find_first_of("\r\n=[#") != std::string::npos || l.key.empty()))
      return Error{where + ": bad key '" + l.key + "'"};
    if (!l.section && l.value.find_first_of("\r\n") != std::string::npos)
      return Error{where + ": " + l.key + ": the value must not contain a line break"};
    if (!l.section && l.value.empty()) return Error{where + ": " + l.key + ": empty value"};
    t += l.section ? std::string("[SESSION]\n") : l.key + "=" + l.value + "\n";
    origins.push_back(l.section ? l.origin : where);
  }
  return ConfigParser(t, name_, overrides, origins).run();
}

Expected<Override> parse_override(std::string_view key_value, std::string_view option) {
  const std::string origin = std::string(option) + " " + std::string(key_value);
  const std::size_t eq = key_value.find('=');
  if (eq == std::string_view::npos) return Error{origin + ": expected KEY=VALUE"};
  const std::string_view key = trim(key_value.substr(0, eq));
  if (key.empty()) return Error{origin + ": empty key"};
  return Override{std::string(key), std::string(trim(key_value.substr(eq + 1))), origin};
}

Expected<Config> Config::load(const std::string& path, std::span<const Override> overrides) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{path + ":0: (file): cannot open: " + std::strerror(errno)};
  std::ostringstream content;
  content << in.rdbuf();
  if (in.bad()) return Error{path + ":0: (file): read error"};
  return parse(content.str(), path, overrides);
}

const Section* Config::find_session(const SessionId& id) const noexcept {
  for (const Section& s : sessions_) {
    if (s.session_id() == id) return &s;
  }
  return nullptr;
}

// ------------------------------------------------------------- markdown ----

namespace {
std::string type_text(const KeySpec& spec) {
  switch (spec.type) {
    case ValueType::kString:
      return "string";
    case ValueType::kPath:
      return "path";
    case ValueType::kHost:
      return "host";
    case ValueType::kInt:
      if (!spec.choices.empty()) return "integer: " + choices_text(spec.choices);
      return "integer " + range_text(spec);
    case ValueType::kPort:
      return "port " + range_text(spec);
    case ValueType::kBool:
      return "Y/N";
    case ValueType::kDuration:
      return std::string(unit_name(spec.unit_ns)) + " " + range_text(spec);
    case ValueType::kSize:
      return "bytes " + size_text(spec.min) + ".." + size_text(spec.max);
    case ValueType::kTimeOfDay:
      return "HH:MM:SS";
    case ValueType::kDay:
      return "day";
    case ValueType::kEnum: {
      std::string out;
      std::size_t start = 0;
      while (start <= spec.choices.size()) {
        const std::size_t bar = std::min(spec.choices.find('|', start), spec.choices.size());
        if (!out.empty()) out += ", ";
        out += "`" + std::string(spec.choices.substr(start, bar - start)) + "`";
        start = bar + 1;
      }
      return out;
    }
    case ValueType::kTimeZone:
      return "time zone";
  }
  return "?";
}
}  // namespace

std::string config_schema_markdown() {
  std::string out = "| Key | Type | Default | Meaning |\n| --- | --- | --- | --- |\n";
  for (const KeySpec& spec : config_schema()) {
    std::string meaning;
    if (spec.scope == KeyScope::kEngine) meaning += "[DEFAULT] only. ";
    meaning += spec.description;
    out += "| `" + std::string(spec.name) + "` | " + type_text(spec) + " | " +
           (spec.default_value.empty() ? std::string("-") : "`" + std::string(spec.default_value) + "`") +
           " | " + meaning + " |\n";
  }
  return out;
}

// ------------------------------------------------- transport options ----

namespace {
// Getters on validated keys only fail on a programming error; this keeps
// the converters short while still passing such an error on.
struct Collect {
  std::optional<Error> error;
  template <typename T>
  T operator()(Expected<T> r, T fallback = T{}) {
    if (r.ok()) return std::move(r).value();
    if (!error) error = r.error();
    return fallback;
  }
};
}  // namespace

Expected<transport::ReactorOptions> reactor_options(const Config& config) {
  const Section& d = config.defaults();
  Collect get;
  transport::ReactorOptions o;
  o.poll_mode =
      transport::parse_poll_mode(get(d.get_string("PollMode"))).value_or(transport::PollMode::kEpoll);
  o.epoll_timeout_ms = static_cast<int>(
      std::chrono::duration_cast<std::chrono::milliseconds>(get(d.get_duration("EpollTimeoutMs"))).count());
  o.cpu = static_cast<int>(get(d.get_int("EngineThreadCore")));
  o.idle = core::parse_idle_kind(get(d.get_string("IdleStrategy"))).value_or(core::IdleKind::kBackoff);
  o.max_connections = static_cast<std::size_t>(get(d.get_int("MaxConnections")));
  // Unset: every configured session can be connected at once.
  if (!d.has("MaxConnections")) o.max_connections = std::max(o.max_connections, config.sessions().size());
  o.close_timeout_ns = get(d.get_duration("SocketCloseTimeoutMs")).count();
  o.thread_name = "hft-engine";
  if (get.error) return *get.error;
  return o;
}

Expected<transport::SocketOptions> socket_options(const Section& s) {
  Collect get;
  transport::SocketOptions o;
  o.tcp_nodelay = get(s.get_bool("SocketNodelay"));
  o.tcp_quickack = get(s.get_bool("SocketQuickAck"));
  o.busy_poll_us = static_cast<int>(
      std::chrono::duration_cast<std::chrono::microseconds>(get(s.get_duration("SocketBusyPoll"))).count());
  o.send_buffer_size = static_cast<int>(get(s.get_size("SocketSendBufferSize")));
  o.receive_buffer_size = static_cast<int>(get(s.get_size("SocketReceiveBufferSize")));
  if (get.error) return *get.error;
  return o;
}

namespace {
Expected<transport::ConnectionBuffers> buffers(const Section& s) {
  Collect get;
  transport::ConnectionBuffers b;
  b.receive_size = static_cast<std::size_t>(get(s.get_size("ReceiveBufferSize")));
  b.send_size = static_cast<std::size_t>(get(s.get_size("SendBufferSize")));
  if (get.error) return *get.error;
  return b;
}
}  // namespace

Expected<transport::ConnectorOptions> connector_options(const Section& s) {
  if (s.kind() != Section::Kind::kSession || s.connection_type() != ConnectionType::kInitiator) {
    return Error{s.file() + ":" + std::to_string(s.line()) + ": ConnectionType: not an initiator session"};
  }
  Collect get;
  transport::ConnectorOptions o;
  o.endpoints = s.connect_endpoints();
  o.reconnect_interval_ns = get(s.get_duration("ReconnectInterval")).count();
  o.connect_timeout_ns = get(s.get_duration("SocketConnectTimeoutMs")).count();
  o.socket = get(socket_options(s));
  o.buffers = get(buffers(s));
  if (get.error) return *get.error;
  return o;
}

Expected<transport::ListenerOptions> listener_options(const Section& s) {
  if (s.kind() != Section::Kind::kSession || s.connection_type() != ConnectionType::kAcceptor) {
    return Error{s.file() + ":" + std::to_string(s.line()) + ": ConnectionType: not an acceptor session"};
  }
  Collect get;
  transport::ListenerOptions o;
  o.host = get(s.get_string("SocketAcceptHost"));
  o.port = static_cast<std::uint16_t>(get(s.get_int("SocketAcceptPort")));
  o.socket = get(socket_options(s));
  o.buffers = get(buffers(s));
  if (get.error) return *get.error;
  return o;
}

Expected<std::optional<transport::TlsOptions>> tls_options(const Section& s) {
  auto use = s.get_bool("SocketUseSSL");
  if (!use) return use.error();
  if (!*use) return std::optional<transport::TlsOptions>{};  // TLS keys without it: refused at parse
  const bool initiator = s.connection_type() == ConnectionType::kInitiator;
  Collect get;
  transport::TlsOptions o;
  o.role = initiator ? transport::TlsRole::kClient : transport::TlsRole::kServer;
  auto text = [&](std::string_view key) { return s.has(key) ? get(s.get_string(key)) : std::string(); };
  o.certificate_file = text(initiator ? "ClientCertificateFile" : "ServerCertificateFile");
  o.key_file = text(initiator ? "ClientCertificateKeyFile" : "ServerCertificateKeyFile");
  o.ca_file = text("CertificationAuthoritiesFile");
  o.ca_directory = text("CertificationAuthoritiesDirectory");
  o.crl_file = text("CertificateRevocationListFile");
  o.crl_directory = text("CertificateRevocationListDirectory");
  o.protocols = text("SSLProtocol");
  o.cipher_suite = text("SSLCipherSuite");
  if (s.has("CertificateVerifyLevel")) o.verify_level = static_cast<int>(get(s.get_int("CertificateVerifyLevel")));
  if (initiator) {
    const auto endpoints = s.connect_endpoints();
    if (!endpoints.empty()) o.server_name = endpoints.front().host;
    o.handshake_timeout_ns = get(s.get_duration("SocketConnectTimeoutMs")).count();
  } else {
    o.handshake_timeout_ns = get(s.get_duration("LogonTimeout")).count();
  }
  if (get.error) return *get.error;
  return std::optional<transport::TlsOptions>{std::move(o)};
}

Error tls_context_error(const Section& s, const Error& error) {
  const std::string& message = error.message;
  const std::size_t colon = message.find(':');
  const std::string key = colon == std::string::npos ? std::string() : message.substr(0, colon);
  const bool known = std::find(std::begin(kTlsKeys), std::end(kTlsKeys), key) != std::end(kTlsKeys);
  return Error{s.where(known ? std::string_view(key) : std::string_view("SocketUseSSL")) + ": " + message};
}

}  // namespace hft::engine
