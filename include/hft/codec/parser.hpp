// Zero-copy FIX parser: framing over a receive buffer, then a field index
// over one framed message. Reading has two questions, answered separately:
// "is a whole message here?" (frame) and "is it well formed?" (parse, then
// the Validator against a dictionary). Nothing here allocates or throws.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "hft/codec/types.hpp"

namespace hft::codec {

/// Outcome of framing.
enum class FrameStatus : std::int8_t {
  kComplete = 0,  ///< a whole message of `size` bytes starts at the buffer's start
  kNeedMore = 1,  ///< a message may start here but is incomplete: read more bytes
  kGarbled = -1,  ///< not a valid message: discard `size` bytes and frame again
};

/// Why framing found garbage (for logs and counters).
enum class FrameError : std::uint8_t {
  kNone,
  kNoBeginString,       ///< the buffer does not start with "8=FIX"
  kBadBodyLength,       ///< field 2 is not "9=<digits>^"
  kBodyLengthTooLarge,  ///< declared BodyLength exceeds the limit
  kNoCheckSum,          ///< no "10=" at the end of the declared body
  kBadCheckSum,         ///< "10=" is not three digits + SOH, or does not match
};

/// A short static description of a FrameError.
[[nodiscard]] std::string_view to_string(FrameError error) noexcept;

struct FrameResult {
  FrameStatus status = FrameStatus::kNeedMore;
  FrameError error = FrameError::kNone;
  /// kComplete: the message length. kGarbled: bytes to discard (>= 1).
  /// kNeedMore: 0.
  std::size_t size = 0;
};

/// Framing options.
struct FrameOptions {
  std::size_t max_body_length = 1 << 20;  ///< larger declared bodies are garbled at once
  bool verify_checksum = true;            ///< false: only the "10=NNN^" shape is checked
};

/// Finds the message at the start of `buffer`.
///
/// - Leading bytes that cannot start "8=FIX" are garbled up to the next
///   "8=FIX" (or all but the last 4 bytes, which might begin one).
/// - BodyLength is the second field; the CheckSum field must follow the body
///   exactly. If it does not (the declared length is wrong), the message is
///   garbled through the first "^10=nnn^" at or after the declared end, the way
///   QuickFIX drops such messages, so a length that is too long swallows what it
///   covers instead of resurrecting half a message; if the buffer ends before
///   such a trailer, the result is kNeedMore until max_body_length is passed.
/// - A BodyLength above max_body_length, or not a number, is garbled at once
///   and framing resynchronises at the next "8=FIX".
[[nodiscard]] FrameResult frame(std::string_view buffer, const FrameOptions& options = {}) noexcept;

/// One field of a parsed message: offsets into the message text.
struct Field {
  std::int32_t tag = 0;         ///< -1..0 for malformed tags, see MessageView::parse
  std::uint32_t value_offset = 0;
  std::uint32_t value_length = 0;
};

/// Why parse() refused a framed message.
enum class ParseStatus : std::int8_t {
  kOk = 0,
  kTooManyFields = -1,    ///< more than MessageView::kMaxFields
  kMissingDelimiter = -2, ///< a field without '=' or the text not ending in SOH
  kBadTag = -3,           ///< a tag that is not a number (the field is kept with tag -1
                          ///< so the validator can name it: see bad_tag_text())
  kBadDataLength = -4,    ///< a length field (95, 212, ...) that is not a number or
                          ///< runs past the end of the message
  kEmpty = -5,
};

/// A parsed view of one message. Holds no copy of the text: the text must
/// outlive the view. Reuse one MessageView for every message: parse() resets
/// the tag index in O(1) with a generation counter.
class MessageView {
 public:
  static constexpr std::size_t kMaxFields = 1024;
  /// Tags below this are indexed: find() is O(1). Larger tags are searched.
  static constexpr int kIndexedTags = 2048;

  MessageView() noexcept = default;
  MessageView(const MessageView&) = delete;
  MessageView& operator=(const MessageView&) = delete;

  /// Splits `text` (one framed message, "8=...^10=nnn^") into fields and
  /// indexes them. Raw-data fields (a length tag such as 95/212 followed by
  /// its data tag) are read by their declared length, so they may contain
  /// SOH. On failure the fields read so far remain visible.
  [[nodiscard]] ParseStatus parse(std::string_view text) noexcept;

  [[nodiscard]] std::string_view text() const noexcept { return text_; }
  [[nodiscard]] std::size_t size() const noexcept { return count_; }
  [[nodiscard]] const Field& field(std::size_t i) const noexcept { return fields_[i]; }
  [[nodiscard]] std::string_view value(const Field& f) const noexcept {
    return text_.substr(f.value_offset, f.value_length);
  }
  [[nodiscard]] std::string_view value_at(std::size_t i) const noexcept { return value(fields_[i]); }
  /// The text of field i's tag as received (useful when it is not a number).
  [[nodiscard]] std::string_view tag_text(std::size_t i) const noexcept;

  /// Position of the first field with `tag`, or -1.
  [[nodiscard]] int find(int tag) const noexcept;
  /// Position of the first field with `tag` at or after position `from`, or -1.
  [[nodiscard]] int find_from(int tag, std::size_t from) const noexcept;
  [[nodiscard]] bool has(int tag) const noexcept { return find(tag) >= 0; }
  /// Value of the first `tag`, or empty (check has() to tell empty from absent).
  [[nodiscard]] std::string_view get(int tag) const noexcept;

  /// MsgType (35) value; empty if absent.
  [[nodiscard]] std::string_view msg_type() const noexcept { return get(tag::kMsgType); }

  // Typed getters: true if the tag is present and well formed.
  [[nodiscard]] bool get_int(int tag, std::int64_t& out) const noexcept;
  [[nodiscard]] bool get_uint(int tag, std::uint64_t& out) const noexcept;
  [[nodiscard]] bool get_decimal(int tag, Decimal& out) const noexcept;
  [[nodiscard]] bool get_char(int tag, char& out) const noexcept;
  [[nodiscard]] bool get_bool(int tag, bool& out) const noexcept;
  /// UTCTimestamp with 0, 3, 6 or 9 sub-second digits -> ns since epoch.
  [[nodiscard]] bool get_timestamp(int tag, std::int64_t& epoch_ns) const noexcept;

 private:
  struct Slot {
    std::uint32_t generation;
    std::uint16_t position;
  };
  std::string_view text_;
  std::size_t count_ = 0;
  std::uint32_t generation_ = 0;
  Field fields_[kMaxFields];
  Slot index_[kIndexedTags] = {};
};

// Free-standing value parsers (no allocation, no locale).
[[nodiscard]] bool parse_int(std::string_view text, std::int64_t& out) noexcept;
[[nodiscard]] bool parse_uint(std::string_view text, std::uint64_t& out) noexcept;
/// "12.34", "-0.5", "10", "10." ; at most 18 significant digits.
[[nodiscard]] bool parse_decimal(std::string_view text, Decimal& out) noexcept;
/// "YYYYMMDD-HH:MM:SS[.s{1,9}]" -> ns since the Unix epoch (seconds 60 allowed as leap).
[[nodiscard]] bool parse_utc_timestamp(std::string_view text, std::int64_t& epoch_ns) noexcept;

/// Walks the entries of a repeating group. An entry starts at each occurrence
/// of the group's first (delimiter) field; `fields` lists the group's member
/// tags (nested groups' members included) so the walk stops at the first
/// field that does not belong.
///
///   GroupReader g(msg, msg.find(tag::kNoPartyIDs), 448, members);
///   while (g.next()) { int pos = g.entry_begin(); ... }
class GroupReader {
 public:
  /// `count_position` is the position of the NumInGroup field. `is_member`
  /// returns true for tags that belong to the group.
  template <typename IsMember>
  GroupReader(const MessageView& msg, int count_position, int delimiter_tag, IsMember&& is_member) noexcept
      : msg_(msg), delimiter_(delimiter_tag) {
    if (count_position < 0) return;
    std::int64_t n = 0;
    if (!parse_int(msg.value_at(static_cast<std::size_t>(count_position)), n) || n < 0) return;
    declared_ = n;
    std::size_t p = static_cast<std::size_t>(count_position) + 1;
    begin_ = p;
    while (p < msg.size() && is_member(msg.field(p).tag)) ++p;
    end_ = p;
    cursor_ = begin_;
  }

  /// Advances to the next entry; false at the end.
  bool next() noexcept;
  /// Position of the current entry's first field and one past its last.
  [[nodiscard]] std::size_t entry_begin() const noexcept { return entry_begin_; }
  [[nodiscard]] std::size_t entry_end() const noexcept { return entry_end_; }
  /// Count declared in the NumInGroup field.
  [[nodiscard]] std::int64_t declared() const noexcept { return declared_; }
  /// Position one past the group's last field.
  [[nodiscard]] std::size_t end() const noexcept { return end_; }
  /// Finds `tag` in the current entry, -1 if absent.
  [[nodiscard]] int find_in_entry(int tag) const noexcept;

 private:
  const MessageView& msg_;
  int delimiter_;
  std::int64_t declared_ = 0;
  std::size_t begin_ = 0, end_ = 0, cursor_ = 0;
  std::size_t entry_begin_ = 0, entry_end_ = 0;
};

}  // namespace hft::codec
