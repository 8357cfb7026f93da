#include "hft/codec/encoder.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace hft::codec {

namespace {

struct Trailers {
  char text[256][8];
};
// "10=000^" .. "10=255^": the trailer is one 8-byte copy.
constexpr Trailers kTrailers = [] {
  Trailers t{};
  for (int i = 0; i < 256; ++i) {
    t.text[i][0] = '1';
    t.text[i][1] = '0';
    t.text[i][2] = '=';
    t.text[i][3] = static_cast<char>('0' + i / 100);
    t.text[i][4] = static_cast<char>('0' + i / 10 % 10);
    t.text[i][5] = static_cast<char>('0' + i % 10);
    t.text[i][6] = kSoh;
  }
  return t;
}();

constexpr bool contains(std::string_view s, char c) noexcept {
  return s.find(c) != std::string_view::npos;
}

// Bucket of a header tag among the per-message tags 34, 43, 52, 97, 122.
constexpr int bucket_of(int tag) noexcept {
  if (tag < tag::kMsgSeqNum) return 0;
  if (tag < tag::kPossDupFlag) return 1;
  if (tag < tag::kSendingTime) return 2;
  if (tag < tag::kPossResend) return 3;
  if (tag < tag::kOrigSendingTime) return 4;
  return 5;
}

constexpr bool is_writer_tag(int tag) noexcept {
  switch (tag) {
    case tag::kBeginString:
    case tag::kBodyLength:
    case tag::kCheckSum:
    case tag::kMsgType:
    case tag::kMsgSeqNum:
    case tag::kPossDupFlag:
    case tag::kSenderCompID:
    case tag::kSendingTime:
    case tag::kTargetCompID:
    case tag::kPossResend:
    case tag::kOrigSendingTime:
      return true;
    default:
      return false;
  }
}

}  // namespace

// ---------------------------------------------------------------- checksum

std::uint64_t detail::sum_bytes(const char* p, std::size_t n) noexcept {
  std::uint64_t total = 0;
#if defined(__AVX512BW__)
  // SAD against zero adds 8 bytes into each 64-bit lane; a masked load takes
  // the tail without reading past the end.
  const __m512i zero = _mm512_setzero_si512();
  __m512i acc = zero;
  while (n >= 64) {
    acc = _mm512_add_epi64(acc, _mm512_sad_epu8(_mm512_loadu_si512(p), zero));
    p += 64;
    n -= 64;
  }
  if (n != 0) {
    const __mmask64 mask = (__mmask64{1} << n) - 1;
    acc = _mm512_add_epi64(acc, _mm512_sad_epu8(_mm512_maskz_loadu_epi8(mask, p), zero));
  }
  // Not _mm512_reduce_add_epi64: GCC 12 warns on its undefined upper half.
  alignas(64) std::uint64_t lanes[8];
  _mm512_store_si512(lanes, acc);
  for (const std::uint64_t lane : lanes) total += lane;
#elif defined(__AVX2__)
  const __m256i zero = _mm256_setzero_si256();
  __m256i acc = zero;
  const std::size_t whole = n;
  const char* const begin = p;
  while (n >= 32) {
    acc = _mm256_add_epi64(
        acc, _mm256_sad_epu8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)), zero));
    p += 32;
    n -= 32;
  }
  if (n != 0 && whole >= 32) {
    // Reload the last 32 bytes and keep only the `n` not yet summed.
    alignas(64) static constexpr unsigned char kMask[64] = {
        0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,
        0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,
        0,    0,    0,    0,    0,    0,    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    const __m256i last = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(begin + whole - 32));
    const __m256i mask = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kMask + n));
    acc = _mm256_add_epi64(acc, _mm256_sad_epu8(_mm256_and_si256(last, mask), zero));
    n = 0;
  }
  alignas(32) std::uint64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), acc);
  total = lanes[0] + lanes[1] + lanes[2] + lanes[3];
  for (; n != 0; --n) total += static_cast<unsigned char>(*p++);
#else
  // Four independent sums so that the adds do not form one chain.
  std::uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (; n >= 4; n -= 4, p += 4) {
    s0 += static_cast<unsigned char>(p[0]);
    s1 += static_cast<unsigned char>(p[1]);
    s2 += static_cast<unsigned char>(p[2]);
    s3 += static_cast<unsigned char>(p[3]);
  }
  for (; n != 0; --n) s0 += static_cast<unsigned char>(*p++);
  total = s0 + s1 + s2 + s3;
#endif
  return total;
}

// ---------------------------------------------------------------- numbers

std::size_t format_decimal(char* out, Decimal value) noexcept {
  if (value.scale == 0) return format_int(out, value.mantissa);
  if (value.scale > 18) return 0;
  char* p = out;
  std::uint64_t magnitude = static_cast<std::uint64_t>(value.mantissa);
  if (value.mantissa < 0) {
    *p++ = '-';
    magnitude = 0 - magnitude;
  }
  const std::uint64_t unit = detail::kPow10[value.scale];
  const std::uint64_t integer = magnitude / unit;
  const std::uint64_t fraction = magnitude - integer * unit;
  p += format_uint(p, integer);
  *p++ = '.';
  // The fraction has exactly `scale` digits, leading zeros included.
  const unsigned digits = detail::count_digits(fraction);
  std::memset(p, '0', value.scale - digits);
  detail::write_digits_backward(p + value.scale, fraction);
  p += value.scale;
  return static_cast<std::size_t>(p - out);
}

// ---------------------------------------------------------------- time

void TimestampFormatter::refresh(std::uint64_t second) noexcept {
  // Civil from days (H. Hinnant's algorithm), days >= 0 here.
  const std::uint64_t days = second / 86'400;
  auto sod = static_cast<std::uint32_t>(second - days * 86'400);
  const std::uint64_t z = days + 719'468;
  const std::uint64_t era = z / 146'097;
  const auto doe = static_cast<std::uint32_t>(z - era * 146'097);                  // [0, 146096]
  const std::uint32_t yoe = (doe - doe / 1'460 + doe / 36'524 - doe / 146'096) / 365;  // [0, 399]
  const std::uint32_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);               // [0, 365]
  const std::uint32_t mp = (5 * doy + 2) / 153;                                    // [0, 11]
  const std::uint32_t day = doy - (153 * mp + 2) / 5 + 1;                          // [1, 31]
  const std::uint32_t month = mp < 10 ? mp + 3 : mp - 9;                           // [1, 12]
  const auto year = static_cast<std::uint32_t>(yoe + era * 400 + (month <= 2 ? 1 : 0));

  char* t = cached_text_;
  detail::put2(t, year / 100 % 100);
  detail::put2(t + 2, year % 100);
  detail::put2(t + 4, month);
  detail::put2(t + 6, day);
  t[8] = '-';
  detail::put2(t + 9, sod / 3600);
  sod %= 3600;
  t[11] = ':';
  detail::put2(t + 12, sod / 60);
  t[14] = ':';
  detail::put2(t + 15, sod % 60);
  cached_second_ = static_cast<std::int64_t>(second);
}

std::size_t TimestampFormatter::format_other(char* out, std::uint32_t frac, TimePrecision p) noexcept {
  const std::size_t digits = length(p) - 18;
  char nanos[9];
  write_nanos(nanos, frac);
  out[17] = '.';
  std::memcpy(out + 18, nanos, digits);
  return 18 + digits;
}

// ---------------------------------------------------------------- header

bool HeaderTemplate::init(std::string_view begin_string, std::string_view sender_comp_id,
                          std::string_view target_comp_id, std::string_view static_fields) noexcept {
  *this = HeaderTemplate{};
  if (begin_string.empty() || begin_string.size() > kMaxBeginString || contains(begin_string, kSoh) ||
      contains(begin_string, '=')) {
    return false;
  }
  if (sender_comp_id.empty() || contains(sender_comp_id, kSoh) || target_comp_id.empty() ||
      contains(target_comp_id, kSoh)) {
    return false;
  }

  struct Piece {
    int tag;
    std::string_view value;
  };
  Piece pieces[kMaxStaticFields + 2];
  std::size_t count = 0;
  pieces[count++] = {tag::kSenderCompID, sender_comp_id};
  pieces[count++] = {tag::kTargetCompID, target_comp_id};

  std::string_view rest = static_fields;
  while (!rest.empty()) {
    const std::size_t eq = rest.find('=');
    const std::size_t soh = rest.find(kSoh);
    if (eq == std::string_view::npos || soh == std::string_view::npos || eq > soh) return false;
    const std::string_view tag_text = rest.substr(0, eq);
    const std::string_view value = rest.substr(eq + 1, soh - eq - 1);
    rest.remove_prefix(soh + 1);
    if (tag_text.empty() || tag_text.size() > 10 || tag_text[0] == '0' || value.empty()) return false;
    std::uint64_t tag = 0;
    for (const char c : tag_text) {
      if (c < '0' || c > '9') return false;
      tag = tag * 10 + static_cast<std::uint64_t>(c - '0');
    }
    if (tag > 0x7fffffff || is_writer_tag(static_cast<int>(tag))) return false;
    if (count == std::size(pieces)) return false;
    pieces[count++] = {static_cast<int>(tag), value};
  }

  // Insertion sort: a handful of fields, no allocation.
  for (std::size_t i = 1; i < count; ++i) {
    const Piece piece = pieces[i];
    std::size_t j = i;
    for (; j > 0 && pieces[j - 1].tag > piece.tag; --j) pieces[j] = pieces[j - 1];
    pieces[j] = piece;
  }
  for (std::size_t i = 1; i < count; ++i) {
    if (pieces[i].tag == pieces[i - 1].tag) return false;
  }

  std::size_t pos = 0;
  int bucket = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const int b = bucket_of(pieces[i].tag);
    for (; bucket < b; ++bucket) {
      bucket_end_[bucket] = static_cast<std::uint16_t>(pos);
      bucket_begin_[bucket + 1] = static_cast<std::uint16_t>(pos);
    }
    char tag_text[12];
    const std::size_t tag_len = static_cast<std::size_t>(detail::write_tag(tag_text, pieces[i].tag) - tag_text);
    if (pos + tag_len + pieces[i].value.size() + 1 > kMaxStatic) {
      *this = HeaderTemplate{};
      return false;
    }
    std::memcpy(text_ + pos, tag_text, tag_len);
    pos += tag_len;
    std::memcpy(text_ + pos, pieces[i].value.data(), pieces[i].value.size());
    pos += pieces[i].value.size();
    text_[pos++] = kSoh;
  }
  for (; bucket < kBuckets - 1; ++bucket) {
    bucket_end_[bucket] = static_cast<std::uint16_t>(pos);
    bucket_begin_[bucket + 1] = static_cast<std::uint16_t>(pos);
  }
  bucket_end_[kBuckets - 1] = static_cast<std::uint16_t>(pos);

  std::size_t run_pos = 0;
  const auto add_run = [&](int index, int first_bucket, int last_bucket, std::string_view next_tag) {
    run_begin_[index] = static_cast<std::uint16_t>(run_pos);
    runs_[run_pos++] = kSoh;
    const std::size_t n = bucket_end_[last_bucket] - bucket_begin_[first_bucket];
    std::memcpy(runs_ + run_pos, text_ + bucket_begin_[first_bucket], n);
    run_pos += n;
    std::memcpy(runs_ + run_pos, next_tag.data(), next_tag.size());
    run_pos += next_tag.size();
    run_len_[index] = static_cast<std::uint16_t>(run_pos - run_begin_[index]);
  };
  add_run(0, 0, 0, "34=");
  add_run(1, 1, 2, "52=");
  add_run(2, 3, 5, "");

  std::memcpy(begin_string_, begin_string.data(), begin_string.size());
  begin_string_len_ = static_cast<std::uint8_t>(begin_string.size());
  return true;
}

// ---------------------------------------------------------------- writer

void MessageWriter::fail(EncodeStatus status) noexcept {
  if (status_ == EncodeStatus::kOk) status_ = status;
  limit_ = cur_;
}

bool MessageWriter::begin_body(const char* begin_string, std::size_t begin_string_len) noexcept {
  status_ = EncodeStatus::kOk;
  begin_string_ = begin_string;
  begin_string_len_ = begin_string_len;
  // "8=" BeginString SOH "9=" <at most size_digits_ digits> SOH
  const std::size_t offset = 6 + begin_string_len + size_digits_;
  if (offset > buf_.size()) {
    body_ = cur_ = limit_ = buf_.data();
    fail(EncodeStatus::kBufferTooSmall);
    return false;
  }
  body_ = cur_ = buf_.data() + offset;
  limit_ = buf_.data() + buf_.size();
  return true;
}

void MessageWriter::start_raw(std::string_view begin_string) noexcept {
  if (begin_string.empty() || begin_string.size() > HeaderTemplate::kMaxBeginString) {
    start_invalid();
    return;
  }
  begin_body(begin_string.data(), begin_string.size());
}

void MessageWriter::start_invalid() noexcept {
  status_ = EncodeStatus::kOk;
  body_ = cur_ = limit_ = nullptr;
  fail(EncodeStatus::kInvalidArgument);
}

namespace {

// Copies a template run. With kSlack the destination has 32 spare bytes and
// the source is padded (HeaderTemplate::kRunPad): whole 32-byte chunks, no
// branch on the length beyond the loop.
template <bool kSlack>
inline char* copy_run(char* dst, const char* src, std::size_t n) noexcept {
  if constexpr (kSlack) {
    for (std::size_t i = 0; i < n; i += 32) std::memcpy(dst + i, src + i, 32);
  } else {
    detail::copy_short(dst, src, n);
  }
  return dst + n;
}

}  // namespace

template <bool kSlack>
void MessageWriter::write_common_header(const HeaderTemplate& header, std::string_view msg_type,
                                        std::uint64_t seq_num, unsigned seq_digits,
                                        std::int64_t sending_time_ns, TimePrecision precision,
                                        TimestampFormatter& formatter) noexcept {
  const char* runs = header.runs_;
  char* p = cur_;
  std::memcpy(p, "35=", 3);
  p += 3;
  detail::copy_short(p, msg_type.data(), msg_type.size());
  p += msg_type.size();
  p = copy_run<kSlack>(p, runs + header.run_begin_[0], header.run_len_[0]);
  p += seq_digits;
  detail::write_digits_backward(p, seq_num);
  p = copy_run<kSlack>(p, runs + header.run_begin_[1], header.run_len_[1]);
  p += formatter.format(p, sending_time_ns, precision);
  p = copy_run<kSlack>(p, runs + header.run_begin_[2], header.run_len_[2]);
  cur_ = p;
}

void MessageWriter::start(const HeaderTemplate& header, std::string_view msg_type, std::uint64_t seq_num,
                          std::int64_t sending_time_ns, TimePrecision precision,
                          TimestampFormatter& formatter) noexcept {
  if (!header.valid() || msg_type.empty()) [[unlikely]] {
    start_invalid();
    return;
  }
  if (!begin_body(header.begin_string_, header.begin_string_len_)) return;
  const unsigned seq_digits = detail::count_digits(seq_num);
  const std::size_t need = 3 + msg_type.size() + seq_digits + TimestampFormatter::length(precision) +
                           header.run_len_[0] + header.run_len_[1] + header.run_len_[2];
  if (need + 32 <= room()) [[likely]] {
    write_common_header<true>(header, msg_type, seq_num, seq_digits, sending_time_ns, precision, formatter);
  } else if (need <= room()) {
    write_common_header<false>(header, msg_type, seq_num, seq_digits, sending_time_ns, precision, formatter);
  } else {
    fail(EncodeStatus::kBufferTooSmall);
  }
}

void MessageWriter::start(const HeaderTemplate& header, std::string_view msg_type, std::uint64_t seq_num,
                          std::int64_t sending_time_ns, TimePrecision precision,
                          TimestampFormatter& formatter, const HeaderExtras& extras) noexcept {
  if (!extras.more.empty() && extras.more.back() != kSoh) [[unlikely]] {
    start_invalid();
    return;
  }
  if (!extras.poss_dup && !extras.poss_resend && extras.orig_sending_time.empty()) {
    start(header, msg_type, seq_num, sending_time_ns, precision, formatter);
    add_raw(extras.more);
    return;
  }
  if (!header.valid() || msg_type.empty()) [[unlikely]] {
    start_invalid();
    return;
  }
  if (!begin_body(header.begin_string_, header.begin_string_len_)) return;

  // Header with 43, 97 or 122: bucket by bucket, exact copies.
  const unsigned seq_digits = detail::count_digits(seq_num);
  const std::size_t time_len = TimestampFormatter::length(precision);
  std::size_t need = 4 + msg_type.size() + 4 + seq_digits + 4 + time_len + header.bucket_end_[5] +
                     extras.more.size();
  if (extras.poss_dup) need += 5;
  if (extras.poss_resend) need += 5;
  if (!extras.orig_sending_time.empty()) need += 5 + extras.orig_sending_time.size();
  if (need > room()) {
    fail(EncodeStatus::kBufferTooSmall);
    return;
  }

  const char* text = header.text_;
  const auto bucket = [&](char* p, int b) noexcept {
    const std::size_t n = header.bucket_end_[b] - header.bucket_begin_[b];
    std::memcpy(p, text + header.bucket_begin_[b], n);
    return p + n;
  };

  char* p = cur_;
  std::memcpy(p, "35=", 3);
  p += 3;
  std::memcpy(p, msg_type.data(), msg_type.size());
  p += msg_type.size();
  *p++ = kSoh;
  p = bucket(p, 0);
  std::memcpy(p, "34=", 3);
  p += 3 + seq_digits;
  detail::write_digits_backward(p, seq_num);
  *p++ = kSoh;
  p = bucket(p, 1);
  if (extras.poss_dup) {
    std::memcpy(p, "43=Y\x01", 5);
    p += 5;
  }
  p = bucket(p, 2);
  std::memcpy(p, "52=", 3);
  p += 3;
  p += formatter.format(p, sending_time_ns, precision);
  *p++ = kSoh;
  p = bucket(p, 3);
  if (extras.poss_resend) {
    std::memcpy(p, "97=Y\x01", 5);
    p += 5;
  }
  p = bucket(p, 4);
  if (!extras.orig_sending_time.empty()) {
    std::memcpy(p, "122=", 4);
    p += 4;
    std::memcpy(p, extras.orig_sending_time.data(), extras.orig_sending_time.size());
    p += extras.orig_sending_time.size();
    *p++ = kSoh;
  }
  p = bucket(p, 5);
  if (!extras.more.empty()) {
    std::memcpy(p, extras.more.data(), extras.more.size());
    p += extras.more.size();
  }
  cur_ = p;
}

void MessageWriter::add_slow(int tag, std::string_view value) noexcept {
  if (status_ != EncodeStatus::kOk) return;
  if (cur_ == nullptr || tag <= 0 || value.empty()) {
    fail(EncodeStatus::kInvalidArgument);
    return;
  }
  char tag_text[12];
  const auto tag_len = static_cast<std::size_t>(detail::write_tag(tag_text, tag) - tag_text);
  if (tag_len + value.size() + 1 > room()) {
    fail(EncodeStatus::kBufferTooSmall);
    return;
  }
  std::memcpy(cur_, tag_text, tag_len);
  std::memcpy(cur_ + tag_len, value.data(), value.size());
  cur_ += tag_len + value.size();
  *cur_++ = kSoh;
}

void MessageWriter::add_decimal_slow(int tag, Decimal value) noexcept {
  if (value.scale > 18) {
    if (status_ == EncodeStatus::kOk) fail(EncodeStatus::kInvalidArgument);
    return;
  }
  if (tag > 0 && room() >= kMaxTagText + 22) [[likely]] {
    char* p = detail::write_tag(cur_, tag);
    p += format_decimal(p, value);
    *p = kSoh;
    cur_ = p + 1;
    return;
  }
  char tmp[24];
  add_slow(tag, {tmp, format_decimal(tmp, value)});
}

void MessageWriter::add_raw(std::string_view encoded_fields) noexcept {
  if (status_ != EncodeStatus::kOk || encoded_fields.empty()) return;
  if (cur_ == nullptr || encoded_fields.back() != kSoh) {
    fail(EncodeStatus::kInvalidArgument);
    return;
  }
  if (encoded_fields.size() > room()) {
    fail(EncodeStatus::kBufferTooSmall);
    return;
  }
  std::memcpy(cur_, encoded_fields.data(), encoded_fields.size());
  cur_ += encoded_fields.size();
}

MessageWriter::Result MessageWriter::finish() noexcept {
  if (status_ != EncodeStatus::kOk) return {status_, {}};
  if (cur_ == nullptr) {
    fail(EncodeStatus::kInvalidArgument);
    return {status_, {}};
  }
  if (room() < 7) {
    fail(EncodeStatus::kBufferTooSmall);
    return {status_, {}};
  }
  // Prefix, backwards from the body: "8=" BeginString SOH "9=" <len> SOH.
  const auto body_length = static_cast<std::uint64_t>(cur_ - body_);
  char* p = body_ - 1;
  *p = kSoh;
  p -= detail::count_digits(body_length);
  detail::write_digits_backward(body_ - 1, body_length);
  p -= 3;
  std::memcpy(p, "\x01" "9=", 3);
  p -= begin_string_len_;
  detail::copy_short(p, begin_string_, begin_string_len_);
  p -= 2;
  std::memcpy(p, "8=", 2);

  const auto sum = static_cast<std::uint8_t>(detail::sum_bytes(p, static_cast<std::size_t>(cur_ - p)));
  char* end = cur_;
  if (room() >= 8) {
    std::memcpy(end, kTrailers.text[sum], 8);
  } else {
    std::memcpy(end, kTrailers.text[sum], 7);
  }
  end += 7;

  // The message is complete: further add_* need a new start().
  body_ = cur_ = limit_ = nullptr;
  return {EncodeStatus::kOk, {p, end}};
}

}  // namespace hft::codec
