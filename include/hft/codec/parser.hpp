// Zero-copy FIX parser: framing over a receive buffer, then a field index
// over one framed message. Reading has two questions, answered separately:
// "is a whole message here?" (frame) and "is it well formed?" (parse, then
// the Validator against a dictionary). Nothing here allocates or throws.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "hft/codec/types.hpp"
#include "hft/core/byte_buffer.hpp"

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

/// Finds the message at the start of `buffer` (the rules of QuickFIX's
/// Parser::readFixMessage, which the session conformance scripts rely on).
///
/// - `buffer` must start with "8=FIX" ("8=FIX.4.4", "8=FIXT.1.1", ...) and a
///   BeginString of at most 16 bytes. Otherwise: kGarbled/kNoBeginString up to
///   the next "8=FIX"; if there is none, the whole buffer except a trailing
///   "8", "8=", "8=F" or "8=FI" that the next read may complete.
/// - The second field must be "9=<digits>^" (at most 20 digits). Otherwise:
///   kGarbled/kBadBodyLength, resynchronising at the next "8=FIX" after the
///   first byte (same rule as above). A BodyLength above max_body_length is
///   kGarbled/kBodyLengthTooLarge as soon as its digits show it: framing never
///   waits for such a body and never overflows.
/// - The body ends exactly BodyLength bytes after the SOH of field 9, and
///   "10=ddd^" must follow. If the bytes there are not "^10=" (the declared
///   length is wrong), the message is kGarbled/kNoCheckSum through the end of
///   the first "^10=...^" found at or after (body end - 1), the way QuickFIX
///   drops it: a length that is too long swallows the messages it covers.
///   Until such a trailer is in the buffer the result is kNeedMore, unless more
///   than max_body_length + 64 bytes follow field 9 (a trailer beyond that does
///   not count): then kGarbled/kNoCheckSum with resynchronisation. A receive buffer must therefore hold at least
///   max_body_length + 96 bytes for framing always to make progress.
/// - A CheckSum value that is not exactly three digits, or (verify_checksum)
///   differs from the sum of the bytes before "10=" mod 256: kGarbled/
///   kBadCheckSum, size = the whole message.
///
/// kComplete guarantees: the message starts "8=FIX", field 2 is "9=", the body
/// length matches, and it ends "^10=ddd^". Empty buffer: kNeedMore.
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
  kTooManyFields = -1,    ///< more than MessageView::max_fields() (or text over 4 GiB): the
                          ///< first max_fields() fields are kept (size(), find())
  kMissingDelimiter = -2, ///< a field without '=' or the text not ending in SOH
  kBadTag = -3,           ///< a tag that is not a number (empty, non-digits, above
                          ///< INT32_MAX): parsing stops there; that field is kept as the
                          ///< last one, with tag -1, and tag_text() shows it. QuickFIX
                          ///< drops such a message as garbled.
  kBadDataLength = -4,    ///< a length field (95, 212, ...) that is not a number or
                          ///< runs past the end of the message
  kEmpty = -5,            ///< empty text
};

/// A short static description of a ParseStatus.
[[nodiscard]] std::string_view to_string(ParseStatus status) noexcept;

namespace detail {
struct TagTables;  // per-tag facts the field loop needs (parser.cpp)
struct ViewIndex;  // the validator's read access to the tag index (validator.cpp)
struct ParseAccess;  // tests: the general field loop alone, to compare with parse()
}  // namespace detail

/// A parsed view of one message. Holds no copy of the text: the text must
/// outlive the view. Reuse one MessageView for every message: parse() resets
/// the tag index in O(1) with a generation counter.
///
/// The field records are allocated once, at construction, for `max_fields`
/// fields (12 bytes each; the pages are only touched by messages that long),
/// and never grown: a message with more fields is kTooManyFields.
class MessageView {
 public:
  /// Capacity of a view built without one: the default of the session
  /// setting MaxFieldsPerMessage. A SecurityList or a MarketDataSnapshot
  /// carries thousands of fields; 16384 fields hold any message of the
  /// default MaxMessageSize (64 KiB) whose fields average 4 bytes or more.
  static constexpr std::size_t kDefaultMaxFields = 16384;
  /// Capacities allowed: [1, kMaxFieldsLimit].
  static constexpr std::size_t kMaxFieldsLimit = std::size_t{1} << 20;
  /// Tags below this are indexed: find() is O(1). Larger tags are searched.
  static constexpr int kIndexedTags = 2048;

  /// Allocates room for `max_fields` fields (clamped to [1, kMaxFieldsLimit]).
  /// Not for the hot path (it allocates, and the first one builds the
  /// parser's tag tables); construct views up front and reuse them.
  explicit MessageView(std::size_t max_fields = kDefaultMaxFields);
  MessageView(const MessageView&) = delete;
  MessageView& operator=(const MessageView&) = delete;

  /// Splits `text` (one framed message, "8=...^10=nnn^") into fields and
  /// indexes them. A field is "<tag>=<value>^": the tag runs to the first '=',
  /// the value to the next SOH (so a value may contain '='). Tags are signed
  /// decimal integers: "0", "-1" or "007" parse as 0, -1 and 7 and are kept for
  /// the validator to judge (Invalid tag number). Raw-data fields (a length tag
  /// per is_length_tag(), such as 95 or 212, immediately followed by its data
  /// tag) are read by the declared length, so they may contain SOH and '='.
  /// Nothing about the order or presence of 8/9/35/10 is checked here.
  /// On failure the fields read so far remain visible (size(), find()).
  /// Returns kOk, kEmpty, kTooManyFields (more than max_fields() fields, or
  /// text over 4 GiB), kMissingDelimiter, kBadTag or kBadDataLength (the
  /// length value is not an unsigned number, or the data does not end with
  /// SOH inside `text`).
  [[nodiscard]] ParseStatus parse(std::string_view text) noexcept;

  /// Most fields a message may have (the capacity given at construction).
  [[nodiscard]] std::size_t max_fields() const noexcept { return max_fields_; }
  [[nodiscard]] std::string_view text() const noexcept { return text_; }
  [[nodiscard]] std::size_t size() const noexcept { return count_; }
  [[nodiscard]] const Field& field(std::size_t i) const noexcept { return fields_[i]; }
  [[nodiscard]] std::string_view value(const Field& f) const noexcept {
    return text_.substr(f.value_offset, f.value_length);
  }
  [[nodiscard]] std::string_view value_at(std::size_t i) const noexcept { return value(fields_[i]); }
  /// The text of field i's tag as received (useful when it is not a number).
  [[nodiscard]] std::string_view tag_text(std::size_t i) const noexcept;

  /// Position of the first field with `tag`, or -1. O(1) for
  /// 0 <= tag < kIndexedTags, a linear scan otherwise.
  [[nodiscard]] int find(int tag) const noexcept {
    if (static_cast<unsigned>(tag) < static_cast<unsigned>(kIndexedTags)) {
      const std::uint64_t slot = index_[tag];
      return static_cast<std::uint32_t>(slot) == generation_ ? static_cast<int>(slot >> 32) : -1;
    }
    return find_from(tag, 0);
  }
  /// Position of the first field with `tag` at or after position `from`, or -1.
  [[nodiscard]] int find_from(int tag, std::size_t from) const noexcept;
  [[nodiscard]] bool has(int tag) const noexcept { return find(tag) >= 0; }
  /// Value of the first `tag`, or empty (check has() to tell empty from absent).
  [[nodiscard]] std::string_view get(int tag) const noexcept;

  /// MsgType (35) value; empty if absent.
  [[nodiscard]] std::string_view msg_type() const noexcept { return get(tag::kMsgType); }

  // Typed getters: true if the tag is present and its (first) value is well
  // formed for the type (see the free parsers below); `out` is untouched otherwise.
  [[nodiscard]] bool get_int(int tag, std::int64_t& out) const noexcept;
  [[nodiscard]] bool get_uint(int tag, std::uint64_t& out) const noexcept;
  [[nodiscard]] bool get_decimal(int tag, Decimal& out) const noexcept;
  [[nodiscard]] bool get_char(int tag, char& out) const noexcept;
  [[nodiscard]] bool get_bool(int tag, bool& out) const noexcept;
  /// UTCTimestamp with 0, 3, 6 or 9 sub-second digits -> ns since epoch.
  [[nodiscard]] bool get_timestamp(int tag, std::int64_t& epoch_ns) const noexcept;

 private:
  friend struct detail::ViewIndex;
  friend struct detail::ParseAccess;
  // The general field loop from byte `start`, fields [0, start_count) being
  // read and indexed already.
  ParseStatus parse_general(const char* p, std::size_t n, std::size_t start, std::size_t start_count) noexcept;

  std::string_view text_;
  std::size_t count_ = 0;
  // index_[tag]: generation in the low 32 bits, field position in the high
  // 32 (one store per field). A slot whose generation differs from
  // generation_ is empty; starting at 1 keeps a never-parsed view empty.
  // parse() bumps generation_ (clearing the index when it wraps).
  std::uint32_t generation_ = 1;
  const detail::TagTables* tables_;
  std::size_t max_fields_;
  // Not initialised: Field has default member initialisers, and
  // value-initialising a large capacity would commit its pages for every
  // view, used or not.
  core::UninitArray<Field> storage_;
  Field* fields_;
  // Zeroed by calloc, not by a loop: its pages become resident as tags land
  // in them (a session that only logs on touches one), not at construction.
  core::ZeroedArray<std::uint64_t> index_storage_;
  std::uint64_t* index_;
};

// Free-standing value parsers (no allocation, no locale). Each returns true
// and sets `out` if the whole text is well formed, else returns false and
// leaves `out` untouched.

/// Optional '-', then one or more digits (leading zeros allowed); must fit
/// int64 (INT64_MIN included).
[[nodiscard]] bool parse_int(std::string_view text, std::int64_t& out) noexcept;
/// One or more digits, no sign; must fit uint64.
[[nodiscard]] bool parse_uint(std::string_view text, std::uint64_t& out) noexcept;
/// "12.34", "-0.5", "10", "10.", ".5": optional '-', digits with at most one
/// '.', at least one digit. value = mantissa * 10^-scale with the scale as
/// written ("1.50" -> 150, 2), except that fraction zeros beyond what fits
/// are dropped. At most 18 significant digits and 18 fraction digits.
[[nodiscard]] bool parse_decimal(std::string_view text, Decimal& out) noexcept;
/// Exactly one byte.
[[nodiscard]] bool parse_char(std::string_view text, char& out) noexcept;
/// "Y" -> true, "N" -> false.
[[nodiscard]] bool parse_bool(std::string_view text, bool& out) noexcept;
/// "YYYYMMDD-HH:MM:SS[.s{1,9}]" -> ns since the Unix epoch (FIX sends 3, 6 or 9
/// fraction digits; QuickFIX accepts 1..9, so does this). Month 1-12, day valid
/// for the month (leap years), hour 0-23, minute 0-59, second 0-60 (60 = leap
/// second, counted as the next second). False if the instant does not fit
/// int64 nanoseconds (before 1677-09-21 or after 2262-04-11).
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
  /// If `count_position` is out of range or its value is not a non-negative
  /// integer, count_valid() is false and the group is empty.
  template <typename IsMember>
  GroupReader(const MessageView& msg, int count_position, int delimiter_tag, IsMember&& is_member) noexcept
      : msg_(msg), delimiter_(delimiter_tag) {
    if (count_position < 0 || static_cast<std::size_t>(count_position) >= msg.size()) return;
    std::int64_t n = 0;
    if (!parse_int(msg.value_at(static_cast<std::size_t>(count_position)), n) || n < 0) return;
    declared_ = n;
    count_valid_ = true;
    std::size_t p = static_cast<std::size_t>(count_position) + 1;
    begin_ = p;
    while (p < msg.size() && is_member(msg.field(p).tag)) ++p;
    end_ = p;
    cursor_ = begin_;
  }

  /// Advances to the next entry: from the current position up to (excluding)
  /// the next delimiter field or the group's end. False at the end. An entry
  /// that does not start with the delimiter (the first field after the count
  /// is another member) is still returned: see entry_starts_with_delimiter().
  bool next() noexcept;
  /// Entries returned by next() so far; after the walk, compare with declared().
  [[nodiscard]] std::int64_t entries() const noexcept { return entries_; }
  /// False if the NumInGroup field was absent or not a non-negative integer.
  [[nodiscard]] bool count_valid() const noexcept { return count_valid_; }
  /// True if the current entry begins with the delimiter field.
  [[nodiscard]] bool entry_starts_with_delimiter() const noexcept {
    return entry_end_ > entry_begin_ && msg_.field(entry_begin_).tag == delimiter_;
  }
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
  std::int64_t entries_ = 0;
  bool count_valid_ = false;
  std::size_t begin_ = 0, end_ = 0, cursor_ = 0;
  std::size_t entry_begin_ = 0, entry_end_ = 0;
};

}  // namespace hft::codec
