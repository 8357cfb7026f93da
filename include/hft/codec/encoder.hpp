// FIX tag=value encoder. Writes a message in place into a caller's buffer;
// never allocates, never throws. A full buffer is a status, not a crash.
//
// Layout of an encoded message inside the caller's buffer:
//
//   buf              buf + body offset                    buf + size
//   |                |                                    |
//   [ unused ][8=FIX.4.4^9=NNN^]35=D^34=..^49=..^52=..^56=..^body..^10=CCC^[ unused ]
//            ^ message starts here, right-aligned so that BodyLength needs
//              no memmove: the body is written first at a fixed offset and
//              "8=..^9=<len>^" is written backwards in front of it at finish.
//
// The body offset is 6 + len(BeginString) + digits(buffer size), the most
// the prefix can take in this buffer, so the message starts at most a few
// bytes into the buffer (0 when BodyLength has as many digits as the buffer
// size) and a buffer as large as the message nearly always suffices.
//
// The session's static header (49, 56 and static tags such as 50/57/115/128)
// is precomputed once in a HeaderTemplate.
//
// The add_* functions are inline: a capacity check against the worst case
// of the field, then straight stores. Only a nearly full buffer, a failure
// or a bad argument takes the out-of-line path, which does the exact check.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

#include "hft/codec/types.hpp"

namespace hft::codec {

/// Statuses of the encoder. Negative values are failures.
enum class EncodeStatus : std::int8_t {
  kOk = 0,
  kBufferTooSmall = -1,  ///< the caller's buffer cannot hold the message
  kInvalidArgument = -2, ///< e.g. an empty MsgType or value, a tag <= 0, an
                         ///< uninitialised HeaderTemplate, add_* before start
};

namespace detail {

struct DigitPairs {
  char text[200];
};
/// "00" "01" ... "99": integers are written two digits per step.
inline constexpr DigitPairs kDigitPairs = [] {
  DigitPairs d{};
  for (int i = 0; i < 100; ++i) {
    d.text[2 * i] = static_cast<char>('0' + i / 10);
    d.text[2 * i + 1] = static_cast<char>('0' + i % 10);
  }
  return d;
}();

inline constexpr std::uint64_t kPow10[20] = {1ULL,
                                             10ULL,
                                             100ULL,
                                             1000ULL,
                                             10000ULL,
                                             100000ULL,
                                             1000000ULL,
                                             10000000ULL,
                                             100000000ULL,
                                             1000000000ULL,
                                             10000000000ULL,
                                             100000000000ULL,
                                             1000000000000ULL,
                                             10000000000000ULL,
                                             100000000000000ULL,
                                             1000000000000000ULL,
                                             10000000000000000ULL,
                                             100000000000000000ULL,
                                             1000000000000000000ULL,
                                             10000000000000000000ULL};

/// Decimal digits of `v` (1..20).
[[nodiscard]] inline unsigned count_digits(std::uint64_t v) noexcept {
  v |= 1;  // 0 has one digit; setting bit 0 never crosses a power of ten
  // floor(log10(2^bits)) is the digit count or one less.
  const unsigned t = (static_cast<unsigned>(64 - std::countl_zero(v)) * 1233U) >> 12;
  return t + (v >= kPow10[t] ? 1U : 0U);
}

inline void put2(char* p, unsigned v) noexcept { std::memcpy(p, kDigitPairs.text + 2 * v, 2); }

/// Writes the digits of `v` so that the last one is at end[-1].
inline void write_digits_backward(char* end, std::uint64_t v) noexcept {
  // Blocks of 8 digits split into independent pairs; below 10^8 the
  // divisions are 32-bit (cheaper multiply-shifts).
  while (v >= 100'000'000U) {
    const std::uint64_t q = v / 100'000'000U;
    const auto block = static_cast<std::uint32_t>(v - q * 100'000'000U);
    const std::uint32_t hi = block / 10'000, lo = block % 10'000;
    end -= 8;
    put2(end, hi / 100);
    put2(end + 2, hi % 100);
    put2(end + 4, lo / 100);
    put2(end + 6, lo % 100);
    v = q;
  }
  auto w = static_cast<std::uint32_t>(v);
  while (w >= 100) {
    const std::uint32_t q = w / 100;
    end -= 2;
    put2(end, w - q * 100);
    w = q;
  }
  if (w >= 10) {
    put2(end - 2, w);
  } else {
    end[-1] = static_cast<char>('0' + w);
  }
}

/// Writes "<tag>=" and returns the position after '='. `tag` > 0. Small tags
/// are unrolled so that a constant tag folds into a few stores.
inline char* write_tag(char* p, int tag) noexcept {
  const auto t = static_cast<unsigned>(tag);
  if (t < 10) {
    p[0] = static_cast<char>('0' + t);
    p[1] = '=';
    return p + 2;
  }
  if (t < 100) {
    put2(p, t);
    p[2] = '=';
    return p + 3;
  }
  if (t < 1000) {
    p[0] = static_cast<char>('0' + t / 100);
    put2(p + 1, t % 100);
    p[3] = '=';
    return p + 4;
  }
  if (t < 10000) {
    put2(p, t / 100);
    put2(p + 2, t % 100);
    p[4] = '=';
    return p + 5;
  }
  const unsigned n = count_digits(t);
  write_digits_backward(p + n, t);
  p[n] = '=';
  return p + n + 1;
}

/// Two digits as a little-endian 16-bit word.
[[nodiscard]] inline std::uint64_t pair_word(unsigned v) noexcept {
  std::uint16_t w;
  std::memcpy(&w, kDigitPairs.text + 2 * v, 2);
  return w;
}

/// "<tag>=" packed in a little-endian word, for tags in 1..9999.
struct TagWord {
  std::uint64_t word;
  unsigned len;
};
[[nodiscard]] inline TagWord tag_word(unsigned t) noexcept {
  constexpr std::uint64_t kEq = '=';
  if (t < 10) return {(t + '0') | kEq << 8, 2};
  if (t < 100) return {pair_word(t) | kEq << 16, 3};
  if (t < 1000) return {(t / 100 + '0') | pair_word(t % 100) << 8 | kEq << 24, 4};
  return {pair_word(t / 100) | pair_word(t % 100) << 16 | kEq << 32, 5};
}

inline constexpr bool kLittleEndian = std::endian::native == std::endian::little;

/// write_tag with a single 8-byte store for tags below 10^4 (a constant tag
/// becomes one immediate store). The caller guarantees 8 writable bytes at
/// `p`; the bytes past "<tag>=" are garbage for the value to overwrite.
inline char* write_tag_wide(char* p, int tag) noexcept {
  const auto t = static_cast<unsigned>(tag);
  if (kLittleEndian && t < 10000) {
    const TagWord tw = tag_word(t);
    std::memcpy(p, &tw.word, 8);
    return p + tw.len;
  }
  return write_tag(p, tag);
}

/// memcpy for the short strings of FIX fields: up to 32 bytes with two
/// (possibly overlapping) loads and stores instead of a library call.
inline void copy_short(char* dst, const char* src, std::size_t n) noexcept {
  if (n >= 8) {
    if (n <= 16) {
      std::uint64_t a, b;
      std::memcpy(&a, src, 8);
      std::memcpy(&b, src + n - 8, 8);
      std::memcpy(dst, &a, 8);
      std::memcpy(dst + n - 8, &b, 8);
      return;
    }
    if (n <= 32) {
      struct Chunk {
        char b[16];
      } a, b;
      std::memcpy(&a, src, 16);
      std::memcpy(&b, src + n - 16, 16);
      std::memcpy(dst, &a, 16);
      std::memcpy(dst + n - 16, &b, 16);
      return;
    }
    std::memcpy(dst, src, n);
    return;
  }
  if (n >= 4) {
    std::uint32_t a, b;
    std::memcpy(&a, src, 4);
    std::memcpy(&b, src + n - 4, 4);
    std::memcpy(dst, &a, 4);
    std::memcpy(dst + n - 4, &b, 4);
    return;
  }
  if (n > 0) {
    const char a = src[0], b = src[n / 2], c = src[n - 1];
    dst[0] = a;
    dst[n / 2] = b;
    dst[n - 1] = c;
  }
}

/// Sum of `n` bytes (the CheckSum before the modulo). Vectorised.
[[nodiscard]] std::uint64_t sum_bytes(const char* p, std::size_t n) noexcept;

}  // namespace detail

/// Formats `value` as decimal digits at `out` (no terminator). Returns the
/// number of characters written (at most 20). Never allocates.
inline std::size_t format_uint(char* out, std::uint64_t value) noexcept {
  const unsigned n = detail::count_digits(value);
  detail::write_digits_backward(out + n, value);
  return n;
}
/// Signed variant (at most 20 characters, with '-').
inline std::size_t format_int(char* out, std::int64_t value) noexcept {
  if (value >= 0) return format_uint(out, static_cast<std::uint64_t>(value));
  *out = '-';
  // 0 - (uint64)value is |value| also for INT64_MIN.
  return 1 + format_uint(out + 1, 0 - static_cast<std::uint64_t>(value));
}
/// Formats a Decimal: mantissa 1234, scale 2 -> "12.34"; scale 0 -> "1234";
/// mantissa -5, scale 3 -> "-0.005"; mantissa 1000, scale 2 -> "10.00" (the
/// scale is kept, trailing zeros included). At most 21 characters. A scale
/// above 18 is invalid: nothing is written and 0 is returned.
std::size_t format_decimal(char* out, Decimal value) noexcept;

/// Formats UTC timestamps "YYYYMMDD-HH:MM:SS[.fff...]" from nanoseconds since
/// the Unix epoch. The date/time text is cached per second: within the same
/// second only the sub-second digits are written. One formatter per thread
/// (it is a cache, not shared state).
class TimestampFormatter {
 public:
  /// Length of the text for a precision: 17 + (precision ? 1 + digits : 0).
  /// Precisions other than 0/3/6/9 give that many digits (at most 9).
  static constexpr std::size_t length(TimePrecision p) noexcept {
    return p == TimePrecision::kSeconds ? 17 : 18 + std::min<std::size_t>(static_cast<std::size_t>(p), 9);
  }
  /// Writes the timestamp at `out` (which must have length(p) bytes) and
  /// returns length(p). Negative times format as 1970-01-01 00:00:00.
  std::size_t format(char* out, std::int64_t epoch_ns, TimePrecision p) noexcept {
    const std::uint64_t ns = epoch_ns < 0 ? 0 : static_cast<std::uint64_t>(epoch_ns);
    const std::uint64_t second = ns / 1'000'000'000U;
    const auto frac = static_cast<std::uint32_t>(ns - second * 1'000'000'000U);
    if (static_cast<std::int64_t>(second) != cached_second_) [[unlikely]] refresh(second);
    std::memcpy(out, cached_text_, 16);
    if (!detail::kLittleEndian || p != TimePrecision::kMillis) out[16] = cached_text_[16];
    switch (p) {
      case TimePrecision::kSeconds:
        return 17;
      case TimePrecision::kMillis: {
        const std::uint32_t ms = frac / 1'000'000U;
        if constexpr (detail::kLittleEndian) {
          // Two stores: bytes 0..15, then "M:SS.mmm" (13..20) as one word.
          std::uint32_t tail;
          std::memcpy(&tail, cached_text_ + 13, 4);
          const std::uint64_t word = tail | std::uint64_t{'.'} << 32 | std::uint64_t{ms / 100 + '0'} << 40 |
                                     detail::pair_word(ms % 100) << 48;
          std::memcpy(out + 13, &word, 8);
          return 21;
        }
        out[17] = '.';
        out[18] = static_cast<char>('0' + ms / 100);
        detail::put2(out + 19, ms % 100);
        return 21;
      }
      case TimePrecision::kMicros: {
        const std::uint32_t us = frac / 1'000U;
        out[17] = '.';
        detail::put2(out + 18, us / 10'000);
        detail::put2(out + 20, us / 100 % 100);
        detail::put2(out + 22, us % 100);
        return 24;
      }
      case TimePrecision::kNanos:
        out[17] = '.';
        write_nanos(out + 18, frac);
        return 27;
    }
    return format_other(out, frac, p);
  }

 private:
  static void write_nanos(char* out, std::uint32_t frac) noexcept {
    out[0] = static_cast<char>('0' + frac / 100'000'000U);
    const std::uint32_t low = frac % 100'000'000U;
    detail::put2(out + 1, low / 1'000'000U);
    detail::put2(out + 3, low / 10'000U % 100);
    detail::put2(out + 5, low / 100U % 100);
    detail::put2(out + 7, low % 100);
  }
  /// Cache miss: the date and time of `second` (civil-from-days, no gmtime).
  void refresh(std::uint64_t second) noexcept;
  std::size_t format_other(char* out, std::uint32_t frac, TimePrecision p) noexcept;

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
  static constexpr std::size_t kMaxBeginString = 23;
  static constexpr std::size_t kMaxStaticFields = 64;

  /// Builds the template. `static_fields` are further header fields
  /// ("50=X^57=Y^", SOH-terminated, any order; sorted here). Returns false
  /// (and leaves the template uninitialised, so start() reports
  /// kInvalidArgument) if: BeginString is empty, longer than
  /// kMaxBeginString or contains SOH/'='; a CompID is empty or contains SOH;
  /// a static field is not "<tag>=<non-empty value>^" with a tag in 1..2^31-1
  /// without leading zeros; a static tag repeats or is one the writer sets
  /// itself (8, 9, 10, 35, 34, 43, 49, 52, 56, 97, 122); there are more than
  /// kMaxStaticFields of them; or the pieces do not fit kMaxStatic.
  [[nodiscard]] bool init(std::string_view begin_string, std::string_view sender_comp_id,
                          std::string_view target_comp_id, std::string_view static_fields = {}) noexcept;

  /// True after a successful init().
  [[nodiscard]] bool valid() const noexcept { return begin_string_len_ != 0; }

  [[nodiscard]] std::string_view begin_string() const noexcept {
    return {begin_string_, begin_string_len_};
  }

  /// All precomputed header fields in wire order ("49=..^50=..^56=..^"),
  /// without the per-message ones.
  [[nodiscard]] std::string_view static_text() const noexcept {
    return {text_, static_cast<std::size_t>(bucket_end_[kBuckets - 1])};
  }

 private:
  friend class MessageWriter;
  static constexpr int kBuckets = 6;  // <34, 34..43, 43..52, 52..97, 97..122, >122
  /// Readable bytes after the last run, so runs can be copied in whole
  /// 32-byte chunks.
  static constexpr std::size_t kRunPad = 32;
  char begin_string_[kMaxBeginString + 1] = {};
  std::uint8_t begin_string_len_ = 0;
  char text_[kMaxStatic] = {};
  std::uint16_t bucket_begin_[kBuckets] = {};
  std::uint16_t bucket_end_[kBuckets] = {};
  // Without 43, 97 and 122 the header is "35=" MsgType run0 <seq> run1
  // <time> run2 with run0 = "^" <bucket 0> "34=", run1 = "^" <buckets 1-2>
  // "52=", run2 = "^" <buckets 3-5>: three copies and two numbers.
  alignas(32) char runs_[kMaxStatic + 16 + kRunPad] = {};
  std::uint16_t run_begin_[3] = {};
  std::uint16_t run_len_[3] = {};
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
/// the failure. A writer can be reused: start() begins the next message in
/// the same buffer. Views passed in (values, HeaderExtras, the begin string
/// of start_raw) must not point into the part of the buffer being written.
/// Values are copied verbatim: the encoder does not check them for SOH.
class MessageWriter {
 public:
  /// Upper bound of the bytes in front of the body for "8=...^9=<len>^":
  /// 6 + BeginString (at most 23) + digits of the buffer size (at most 11
  /// for buffers under 100 GB).
  static constexpr std::size_t kPrefixReserve = 40;

  explicit MessageWriter(std::span<char> buffer) noexcept
      : buf_(buffer), size_digits_(detail::count_digits(buffer.size())) {}

  /// Begins a message. `sending_time_ns` is nanoseconds since the Unix epoch.
  /// `header` is referenced (its BeginString) until finish(). Status
  /// afterwards: kOk; kInvalidArgument for an uninitialised template, an
  /// empty `msg_type`, or extras.more not empty and not ending with SOH;
  /// kBufferTooSmall if the header does not fit.
  void start(const HeaderTemplate& header, std::string_view msg_type, std::uint64_t seq_num,
             std::int64_t sending_time_ns, TimePrecision precision,
             TimestampFormatter& formatter, const HeaderExtras& extras) noexcept;
  /// The same without extras (the common case, without the extras' checks).
  void start(const HeaderTemplate& header, std::string_view msg_type, std::uint64_t seq_num,
             std::int64_t sending_time_ns, TimePrecision precision,
             TimestampFormatter& formatter) noexcept;

  /// Begins a message with nothing past 8/9: the caller adds 35 and every
  /// other field (tools, tests, replay of stored bodies). `begin_string` is
  /// referenced, not copied: it must live until finish(). kInvalidArgument if
  /// it is empty or longer than HeaderTemplate::kMaxBeginString.
  void start_raw(std::string_view begin_string) noexcept;

  /// "tag=value^". kInvalidArgument if tag <= 0 or value is empty (FIX has
  /// no empty values: leave the field out).
  void add(int tag, std::string_view value) noexcept {
    if (tag > 0 && !value.empty() && room() >= value.size() + kMaxTagText + 1) [[likely]] {
      char* p = detail::write_tag_wide(cur_, tag);
      detail::copy_short(p, value.data(), value.size());
      p += value.size();
      *p = kSoh;
      cur_ = p + 1;
      return;
    }
    add_slow(tag, value);
  }
  void add_char(int tag, char value) noexcept {
    if (detail::kLittleEndian && tag > 0 && tag < 10000 && room() >= 8) [[likely]] {
      // "<tag>=<c>^" is at most 7 bytes: one store.
      const detail::TagWord tw = detail::tag_word(static_cast<unsigned>(tag));
      const std::uint64_t word = tw.word | std::uint64_t{static_cast<unsigned char>(value)} << (8 * tw.len) |
                                 std::uint64_t{static_cast<unsigned char>(kSoh)} << (8 * tw.len + 8);
      std::memcpy(cur_, &word, 8);
      cur_ += tw.len + 2;
      return;
    }
    if (tag > 0 && room() >= kMaxTagText + 2) {
      char* p = detail::write_tag_wide(cur_, tag);
      p[0] = value;
      p[1] = kSoh;
      cur_ = p + 2;
      return;
    }
    add_slow(tag, {&value, 1});
  }
  void add_int(int tag, std::int64_t value) noexcept {
    if (tag > 0 && room() >= kMaxTagText + 21) [[likely]] {
      char* p = detail::write_tag_wide(cur_, tag);
      p += format_int(p, value);
      *p = kSoh;
      cur_ = p + 1;
      return;
    }
    char tmp[24];
    add_slow(tag, {tmp, format_int(tmp, value)});
  }
  void add_uint(int tag, std::uint64_t value) noexcept {
    if (tag > 0 && room() >= kMaxTagText + 21) [[likely]] {
      char* p = detail::write_tag_wide(cur_, tag);
      p += format_uint(p, value);
      *p = kSoh;
      cur_ = p + 1;
      return;
    }
    char tmp[24];
    add_slow(tag, {tmp, format_uint(tmp, value)});
  }
  /// kInvalidArgument if value.scale > 18.
  void add_decimal(int tag, Decimal value) noexcept {
    if (value.scale == 0) {
      add_int(tag, value.mantissa);
      return;
    }
    add_decimal_slow(tag, value);
  }
  /// 'Y' / 'N'
  void add_bool(int tag, bool value) noexcept { add_char(tag, value ? 'Y' : 'N'); }
  void add_timestamp(int tag, std::int64_t epoch_ns, TimePrecision precision,
                     TimestampFormatter& formatter) noexcept {
    if (tag > 0 && room() >= kMaxTagText + 28) [[likely]] {
      char* p = detail::write_tag_wide(cur_, tag);
      p += formatter.format(p, epoch_ns, precision);
      *p = kSoh;
      cur_ = p + 1;
      return;
    }
    char tmp[32];
    add_slow(tag, {tmp, formatter.format(tmp, epoch_ns, precision)});
  }
  /// Appends pre-encoded fields ("a=b^c=d^"), copied verbatim. Empty is a
  /// no-op; kInvalidArgument if the text does not end with SOH.
  void add_raw(std::string_view encoded_fields) noexcept;

  struct Result {
    EncodeStatus status = EncodeStatus::kOk;
    std::span<char> message;  ///< the complete message, inside the buffer (empty on failure)
    [[nodiscard]] bool ok() const noexcept { return status == EncodeStatus::kOk; }
  };

  /// Writes BodyLength and CheckSum and returns the message span. Reports
  /// the first failure since start(): kBufferTooSmall (nothing was written
  /// outside the buffer), kInvalidArgument. After finish() the writer needs
  /// a new start(); add_* before that set kInvalidArgument.
  [[nodiscard]] Result finish() noexcept;

  /// Status so far (kOk until something did not fit or was invalid).
  [[nodiscard]] EncodeStatus status() const noexcept { return status_; }

  /// Marks the message being written as invalid: later add_* are no-ops and
  /// finish() reports kInvalidArgument (unless an earlier failure is
  /// reported). For callers that check more than one field can, such as the
  /// typed writers' group counts (hft/messages/support.hpp).
  void invalidate() noexcept { fail(EncodeStatus::kInvalidArgument); }

 private:
  /// "2147483647=": the longest tag text.
  static constexpr std::size_t kMaxTagText = 11;

  /// Bytes left; 0 after a failure, before start() and after finish(), so
  /// that the inline fast paths fail over to the out-of-line ones.
  [[nodiscard]] std::size_t room() const noexcept { return static_cast<std::size_t>(limit_ - cur_); }
  /// Exact checks; sets the status on failure.
  void add_slow(int tag, std::string_view value) noexcept;
  void add_decimal_slow(int tag, Decimal value) noexcept;
  /// Positions the body after the space for the prefix; false on failure.
  bool begin_body(const char* begin_string, std::size_t begin_string_len) noexcept;
  void start_invalid() noexcept;
  template <bool kSlack>
  void write_common_header(const HeaderTemplate& header, std::string_view msg_type, std::uint64_t seq_num,
                           unsigned seq_digits, std::int64_t sending_time_ns, TimePrecision precision,
                           TimestampFormatter& formatter) noexcept;
  void fail(EncodeStatus status) noexcept;

  std::span<char> buf_;
  char* body_ = nullptr;   // first byte after "9=<len>^"
  char* cur_ = nullptr;    // next byte to write
  char* limit_ = nullptr;  // end of the buffer; == cur_ when no write may happen
  const char* begin_string_ = nullptr;
  std::size_t begin_string_len_ = 0;
  unsigned size_digits_ = 1;  // digits of buf_.size(): the widest BodyLength it can hold
  EncodeStatus status_ = EncodeStatus::kOk;
};

/// Computes the FIX CheckSum (sum of bytes mod 256) of `bytes`.
[[nodiscard]] inline std::uint8_t checksum(std::string_view bytes) noexcept {
  return static_cast<std::uint8_t>(detail::sum_bytes(bytes.data(), bytes.size()));
}

}  // namespace hft::codec
