// Field-by-field comparison of a received message with the expected one,
// with per-tag regular expressions (fields.fmt) for values the acceptor
// chooses itself (CheckSum, SendingTime, OrigSendingTime, ...).
#pragma once

#include <map>
#include <optional>
#include <regex>
#include <string>
#include <string_view>

namespace hft::conformance {

/// One fields.fmt entry: the regex text (for reports) and its compiled form.
struct FieldPattern {
  std::string text;
  std::regex regex;
};

/// Tag -> pattern, from a fields.fmt file (`tag=regex` per line).
class FieldPatterns {
 public:
  /// The patterns of the shared fields.fmt, used when no file is given.
  [[nodiscard]] static FieldPatterns defaults();

  /// Parses `tag=regex` lines; blank lines and `#` comments are skipped.
  /// Throws std::runtime_error naming `origin` and the line on a bad line or regex.
  [[nodiscard]] static FieldPatterns parse(std::string_view text, const std::string& origin);

  /// Reads and parses a file; throws std::runtime_error when it cannot be read or parsed.
  [[nodiscard]] static FieldPatterns load(const std::string& path);

  /// The pattern for this tag, or nullptr when the value must match exactly.
  [[nodiscard]] const FieldPattern* find(long tag) const;

  [[nodiscard]] const std::string& origin() const noexcept { return origin_; }

 private:
  std::map<long, FieldPattern> patterns_;
  std::string origin_;
};

/// The first difference between an expected and a received message.
struct Difference {
  std::size_t field_index = 0;  ///< 0-based field where they first differ
  std::string description;
};

/// Compares as the script format defines it: same field count, same tag at
/// each position, equal values except for tags with a pattern, whose
/// received value must match it (regex search, not anchored). Returns
/// nothing when they match. The description names the first differing
/// field other than BodyLength, and BodyLength too when it also differs
/// (a wrong BodyLength alone is reported as such).
[[nodiscard]] std::optional<Difference> compare_messages(std::string_view expected, std::string_view received,
                                                         const FieldPatterns& patterns);

}  // namespace hft::conformance
