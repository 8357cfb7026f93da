// FIX tag=value text helpers for the conformance runner: time placeholders,
// BodyLength/CheckSum completion, field splitting and framing of received
// bytes. Self-contained on purpose: the runner judges the engine's codec, so
// it must not share code with it.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace hft::conformance {

inline constexpr char kSoh = '\x01';

/// Formats a UTC time point as `YYYYMMDD-HH:MM:SS`.
[[nodiscard]] std::string format_utc_seconds(std::chrono::system_clock::time_point tp);

/// Replaces every `<TIME>`, `<TIME+N>` and `<TIME-N>` in `text` by `now`
/// (plus/minus N seconds) formatted with format_utc_seconds().
[[nodiscard]] std::string substitute_time(std::string_view text, std::chrono::system_clock::time_point now);

/// Sum of the bytes modulo 256, the FIX CheckSum.
[[nodiscard]] unsigned checksum(std::string_view bytes) noexcept;

/// Completes a script message the way the script format defines it: when it
/// starts with `8=` and has no `9=` field, BodyLength is inserted after the
/// first field; when it has no trailing `10=` field, CheckSum is appended
/// (computed over every byte before it, three digits). A message that does
/// not start with `8=` is returned unchanged (scripts use that to send
/// deliberately malformed headers).
[[nodiscard]] std::string complete_message(std::string_view message);

/// One `tag=value` piece of a message. `has_equals` is false for a piece with
/// no `=` at all (then `tag` holds the whole piece).
struct Field {
  std::string_view tag;
  std::string_view value;
  bool has_equals = true;
};

/// Splits on SOH. Empty pieces inside the message are kept; trailing empty
/// pieces (the final SOH) are dropped.
[[nodiscard]] std::vector<Field> split_fields(std::string_view message);

/// Returns the value of the first field with this tag, or an empty view with
/// `found` false.
struct FieldLookup {
  std::string_view value;
  bool found = false;
};
[[nodiscard]] FieldLookup find_field(std::string_view message, std::string_view tag);

/// Shows a message with SOH printed as `|`.
[[nodiscard]] std::string show(std::string_view bytes);

enum class FrameStatus {
  kNeedMore,  ///< the bytes so far are a valid prefix of a message
  kComplete,  ///< a whole message of `length` bytes starts the buffer
  kGarbled,   ///< the buffer does not start with a well-framed message; see `error`
};

struct FrameResult {
  FrameStatus status = FrameStatus::kNeedMore;
  std::size_t length = 0;
  std::string error;
};

/// Frames one message at the start of `buffer` by BeginString, BodyLength
/// and the CheckSum field that must follow the body.
[[nodiscard]] FrameResult frame_message(std::string_view buffer);

/// Checks the CheckSum field of a framed message against its bytes. Returns
/// an empty string when it matches, else a description of the difference.
[[nodiscard]] std::string verify_checksum(std::string_view message);

}  // namespace hft::conformance
