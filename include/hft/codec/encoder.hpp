// FIX tag=value encoder. Writes a message in place into a caller's buffer;
// never allocates, never throws. A full buffer is a status, not a crash.
//
// Layout of an encoded message inside the caller's buffer:
//
//   buf                                  buf + begin()              buf + end()
//   |<- kPrefixReserve ->|                |                          |
//   [ unused ][8=FIX.4.4^9=NNN^]35=D^49=..^56=..^34=..^52=..^body..^10=CCC^
//            ^ message starts here, right-aligned so that BodyLength needs
//              no memmove: the body is written first at a fixed offset and
//              "8=..^9=<len>^" is written backwards in front of it at finish.
//
// The session's static header (49, 56 and static tags such as 50/57/115/128)
// is precomputed once in a HeaderTemplate.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "hft/codec/types.hpp"

namespace hft::codec {

/// Statuses of the encoder. Negative values are failures.
enum class EncodeStatus : std::int8_t {
  kOk = 0,
  kBufferTooSmall = -1,  ///< the caller's buffer cannot hold the message
  kInvalidArgument = -2, ///< e.g. an empty MsgType, a negative tag
};

/// Formats `value` as decimal digits at `out` (no terminator). Returns the
/// number of characters written (at most 20). Never allocates.
std::size_t format_uint(char* out, std::uint64_t value) noexcept;
/// Signed variant (at most 20 characters, with '-').
std::size_t format_int(char* out, std::int64_t value) noexcept;
/// Formats a Decimal: mantissa 1234, scale 2 -> "12.34"; scale 0 -> "1234";
/// mantissa -5, scale 3 -> "-0.005". At most 22 characters.
std::size_t format_decimal(char* out, Decimal value) noexcept;

/// Formats UTC timestamps "YYYYMMDD-HH:MM:SS[.fff...]" from nanoseconds since
/// the Unix epoch. The date/time text is cached per second: within the same
/// second only the sub-second digits are written.
class TimestampFormatter {
 public:
  /// Length of the text for a precision: 17 + (precision ? 1 + digits : 0).
  static constexpr std::size_t length(TimePrecision p) noexcept {
    return p == TimePrecision::kSeconds ? 17 : 18 + static_cast<std::size_t>(p);
  }
  /// Writes the timestamp at `out` (which must have length(p) bytes) and
  /// returns length(p). Negative times format as 1970-01-01.
  std::size_t format(char* out, std::int64_t epoch_ns, TimePrecision p) noexcept;

 private:
  std::int64_t cached_second_ = -1;
  char cached_text_[17] = {};
};

/// Header fields that vary per message besides 34 and 52.
struct HeaderExtras {
  bool poss_dup = false;                  ///< 43=Y
  bool poss_resend = false;               ///< 97=Y
  std::string_view orig_sending_time;     ///< 122, pre-formatted text; empty = absent
  std::string_view more;                  ///< further header fields, pre-encoded "t=v^...",
                                          ///< appended after the last standard header field
};

/// Precomputed per-session header: BeginString, SenderCompID, TargetCompID
/// and static header fields (50, 57, 115, 128, ...). Header fields go out in
/// ascending tag order after 8, 9, 35 (as QuickFIX sends them); the static
/// fields are kept as pre-encoded runs between the per-message tags 34, 43,
/// 52, 97 and 122, so start() is a handful of short copies.
class HeaderTemplate {
 public:
  static constexpr std::size_t kMaxStatic = 512;

  /// Builds the template. `static_fields` are further header fields
  /// ("50=X^57=Y^", SOH-terminated, any order; sorted here). Returns false if
  /// an argument is malformed or the pieces do not fit kMaxStatic.
  bool init(std::string_view begin_string, std::string_view sender_comp_id,
            std::string_view target_comp_id, std::string_view static_fields = {}) noexcept;

  [[nodiscard]] std::string_view begin_string() const noexcept {
    return {begin_string_, begin_string_len_};
  }

 private:
  friend class MessageWriter;
  static constexpr int kBuckets = 6;  // <34, 34..43, 43..52, 52..97, 97..122, >122
  char begin_string_[24] = {};
  std::uint8_t begin_string_len_ = 0;
  char text_[kMaxStatic] = {};
  std::uint16_t bucket_begin_[kBuckets] = {};
  std::uint16_t bucket_end_[kBuckets] = {};
};

/// Writes one message into a caller's buffer. Usage:
///
///   MessageWriter w(buf);              // buf: std::span<char>
///   w.start(header, "D", seq, now_ns, TimePrecision::kMillis, formatter);
///   w.add(tag::kClOrdID, "ORD1");
///   w.add_int(tag::kOrderQty, 10);
///   auto r = w.finish();               // r.status, r.message (a view into buf)
///
/// Wire order: 8, 9, 35, then header fields ascending (34, 43, 49, 52, 56,
/// static fields and extras in their places), then the body fields in the
/// order added, then 10. add_* after a failure are no-ops; finish() reports
/// the failure.
class MessageWriter {
 public:
  /// Bytes kept in front of the body for "8=...^9=<len>^".
  static constexpr std::size_t kPrefixReserve = 40;

  explicit MessageWriter(std::span<char> buffer) noexcept : buf_(buffer) {}

  /// Begins a message. `sending_time_ns` is nanoseconds since the Unix epoch.
  void start(const HeaderTemplate& header, std::string_view msg_type, std::uint64_t seq_num,
             std::int64_t sending_time_ns, TimePrecision precision,
             TimestampFormatter& formatter, const HeaderExtras& extras = {}) noexcept;

  /// Begins a message with nothing past 8/9: the caller adds 35 and every
  /// other field (tools, tests, replay of stored bodies).
  void start_raw(std::string_view begin_string) noexcept;

  void add(int tag, std::string_view value) noexcept;
  void add_char(int tag, char value) noexcept;
  void add_int(int tag, std::int64_t value) noexcept;
  void add_uint(int tag, std::uint64_t value) noexcept;
  void add_decimal(int tag, Decimal value) noexcept;
  /// 'Y' / 'N'
  void add_bool(int tag, bool value) noexcept;
  void add_timestamp(int tag, std::int64_t epoch_ns, TimePrecision precision,
                     TimestampFormatter& formatter) noexcept;
  /// Appends pre-encoded fields ("a=b^c=d^"), copied verbatim.
  void add_raw(std::string_view encoded_fields) noexcept;

  struct Result {
    EncodeStatus status = EncodeStatus::kOk;
    std::span<char> message;  ///< the complete message, inside the buffer
    [[nodiscard]] bool ok() const noexcept { return status == EncodeStatus::kOk; }
  };

  /// Writes BodyLength and CheckSum and returns the message span.
  [[nodiscard]] Result finish() noexcept;

  /// Status so far (kOk until something did not fit).
  [[nodiscard]] EncodeStatus status() const noexcept { return status_; }

 private:
  std::span<char> buf_;
  std::size_t pos_ = 0;
  const char* begin_string_ = nullptr;
  std::size_t begin_string_len_ = 0;
  EncodeStatus status_ = EncodeStatus::kOk;
};

/// Computes the FIX CheckSum (sum of bytes mod 256) of `bytes`.
[[nodiscard]] std::uint8_t checksum(std::string_view bytes) noexcept;

}  // namespace hft::codec
