// Framing and field indexing over bytes owned by the caller.
//
// frame() follows QuickFIX's Parser::readFixMessage so that a stream is cut
// exactly where QuickFIX cuts it (the session conformance scripts send wrong
// BodyLengths on purpose and expect the following message to be swallowed or
// not). The only full pass over the message is the CheckSum, done 64 bytes at
// a time with PSADBW.
//
// parse() finds SOH and '=' through 64-bit masks built one 64-byte block at a
// time (one compare per delimiter per block), so a field costs a couple of
// bit operations instead of a byte loop over its value, and its tag is
// converted without a loop.
#include "hft/codec/parser.hpp"

#include <immintrin.h>

#include <array>
#include <bit>
#include <cstring>
#include <limits>

namespace hft::codec {
namespace {

constexpr std::size_t kNpos = static_cast<std::size_t>(-1);
constexpr char kBegin[] = "8=FIX";
constexpr std::size_t kBeginLen = 5;
// "8=" + the longest BeginString accepted + SOH: "FIXT.1.1" is 8 bytes.
constexpr std::size_t kMaxBeginValue = 16;
// Digits of BodyLength, leading zeros included: stops "9=000..." from
// holding the stream forever.
constexpr std::size_t kMaxBodyLengthDigits = 20;
// Bytes past field 9 tolerated beyond max_body_length while waiting for a
// trailer ("10=ddd^" plus room for a wrong length's slack).
constexpr std::size_t kTrailerSlack = 64;

constexpr bool is_digit(char c) noexcept { return static_cast<unsigned char>(c - '0') <= 9; }

// ---------------------------------------------------------------- byte sum

#if defined(__AVX512BW__)
inline std::uint32_t byte_sum(const char* p, std::size_t n) noexcept {
  const __m512i zero = _mm512_setzero_si512();
  __m512i acc0 = zero, acc1 = zero;
  std::size_t i = 0;
  for (; i + 128 <= n; i += 128) {
    acc0 = _mm512_add_epi64(acc0, _mm512_sad_epu8(_mm512_loadu_si512(p + i), zero));
    acc1 = _mm512_add_epi64(acc1, _mm512_sad_epu8(_mm512_loadu_si512(p + i + 64), zero));
  }
  if (i + 64 <= n) {
    acc0 = _mm512_add_epi64(acc0, _mm512_sad_epu8(_mm512_loadu_si512(p + i), zero));
    i += 64;
  }
  if (i < n) {
    // Masked-off lanes are neither read nor faulted on.
    const __mmask64 m = (std::uint64_t{1} << (n - i)) - 1;
    acc1 = _mm512_add_epi64(acc1, _mm512_sad_epu8(_mm512_maskz_loadu_epi8(m, p + i), zero));
  }
  // A store, not _mm512_reduce_add_epi64: GCC 12's version of that trips
  // -Wmaybe-uninitialized inside its own header.
  alignas(64) std::uint64_t lanes[8];
  _mm512_store_si512(lanes, _mm512_add_epi64(acc0, acc1));
  std::uint64_t s = 0;
  for (const std::uint64_t l : lanes) s += l;
  return static_cast<std::uint32_t>(s);
}
#elif defined(__AVX2__)
inline std::uint32_t byte_sum(const char* p, std::size_t n) noexcept {
  const __m256i zero = _mm256_setzero_si256();
  __m256i acc = zero;
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    acc = _mm256_add_epi64(
        acc, _mm256_sad_epu8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i)), zero));
  }
  std::uint64_t s = 0;
  if (n >= 32 && i < n) {
    // Re-read the last 32 bytes and mask off the ones already summed.
    alignas(32) static constexpr std::array<std::uint8_t, 64> kTail = [] {
      std::array<std::uint8_t, 64> a{};
      for (std::size_t k = 32; k < 64; ++k) a[k] = 0xff;
      return a;
    }();
    const std::size_t rest = n - i;
    const __m256i mask = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kTail.data() + rest));
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + n - 32));
    acc = _mm256_add_epi64(acc, _mm256_sad_epu8(_mm256_and_si256(v, mask), zero));
  } else {
    for (; i < n; ++i) s += static_cast<unsigned char>(p[i]);
  }
  alignas(32) std::uint64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), acc);
  return static_cast<std::uint32_t>(s + lanes[0] + lanes[1] + lanes[2] + lanes[3]);
}
#else
inline std::uint32_t byte_sum(const char* p, std::size_t n) noexcept {
  const __m128i zero = _mm_setzero_si128();
  __m128i acc = zero;
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    acc = _mm_add_epi64(acc, _mm_sad_epu8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i)), zero));
  }
  std::uint64_t s = static_cast<std::uint64_t>(_mm_cvtsi128_si64(acc)) +
                    static_cast<std::uint64_t>(_mm_cvtsi128_si64(_mm_unpackhi_epi64(acc, acc)));
  for (; i < n; ++i) s += static_cast<unsigned char>(p[i]);
  return static_cast<std::uint32_t>(s);
}
#endif

// ---------------------------------------------------------------- framing

constexpr FrameResult need_more() noexcept { return {FrameStatus::kNeedMore, FrameError::kNone, 0}; }
constexpr FrameResult garbled(std::size_t size, FrameError e) noexcept { return {FrameStatus::kGarbled, e, size}; }

// First "8=FIX" at or after `from`, or kNpos.
std::size_t find_begin(const char* p, std::size_t n, std::size_t from) noexcept {
  while (from + kBeginLen <= n) {
    const void* q = std::memchr(p + from, '8', n - from - (kBeginLen - 1));
    if (q == nullptr) return kNpos;
    const std::size_t i = static_cast<std::size_t>(static_cast<const char*>(q) - p);
    if (std::memcmp(p + i + 1, kBegin + 1, kBeginLen - 1) == 0) return i;
    from = i + 1;
  }
  return kNpos;
}

// Garbled up to the next "8=FIX" at or after `from` (>= 1), keeping a tail
// that the next read could complete into one.
FrameResult resync(const char* p, std::size_t n, std::size_t from, FrameError e) noexcept {
  const std::size_t i = find_begin(p, n, from);
  if (i != kNpos) return garbled(i, e);
  std::size_t keep = std::min<std::size_t>(kBeginLen - 1, n - from);
  while (keep > 0 && std::memcmp(p + n - keep, kBegin, keep) != 0) --keep;
  return garbled(n - keep, e);
}

// First "^10=" at or after `from`, or kNpos.
std::size_t find_trailer(const char* p, std::size_t n, std::size_t from) noexcept {
  while (from + 4 <= n) {
    if (p[from] == kSoh && p[from + 1] == '1' && p[from + 2] == '0' && p[from + 3] == '=') return from;
    const void* q = std::memchr(p + from + 1, kSoh, n - from - 4);
    if (q == nullptr) return kNpos;
    from = static_cast<std::size_t>(static_cast<const char*>(q) - p);
  }
  return kNpos;
}

// ---------------------------------------------------------------- scanning

// Bit i of `soh` / `eq` / `nd` is set if byte i of 64 bytes is SOH / '=' /
// not a decimal digit.
struct Masks {
  std::uint64_t soh;
  std::uint64_t eq;
  std::uint64_t nd;
};

inline Masks masks64(const char* q) noexcept {
#if defined(__AVX512BW__)
  const __m512i v = _mm512_loadu_si512(q);
  return {_mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(kSoh)), _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('=')),
          _mm512_cmpgt_epu8_mask(_mm512_sub_epi8(v, _mm512_set1_epi8('0')), _mm512_set1_epi8(9))};
#elif defined(__AVX2__)
  const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q));
  const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + 32));
  const __m256i s = _mm256_set1_epi8(kSoh), e = _mm256_set1_epi8('=');
  const __m256i zero = _mm256_set1_epi8('0'), nine = _mm256_set1_epi8(9);
  auto bits = [](__m256i x) {
    return static_cast<std::uint64_t>(static_cast<std::uint32_t>(_mm256_movemask_epi8(x)));
  };
  auto digits = [&](__m256i x) {  // x - '0' <= 9 unsigned
    const __m256i d = _mm256_sub_epi8(x, zero);
    return _mm256_cmpeq_epi8(_mm256_min_epu8(d, nine), d);
  };
  return {bits(_mm256_cmpeq_epi8(a, s)) | (bits(_mm256_cmpeq_epi8(b, s)) << 32),
          bits(_mm256_cmpeq_epi8(a, e)) | (bits(_mm256_cmpeq_epi8(b, e)) << 32),
          ~(bits(digits(a)) | (bits(digits(b)) << 32))};
#else
  const __m128i s = _mm_set1_epi8(kSoh), e = _mm_set1_epi8('=');
  const __m128i zero = _mm_set1_epi8('0'), nine = _mm_set1_epi8(9);
  Masks m{0, 0, 0};
  for (int k = 0; k < 4; ++k) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q + 16 * k));
    const __m128i d = _mm_sub_epi8(v, zero);
    const auto bits = [](__m128i x) { return std::uint64_t{static_cast<std::uint16_t>(_mm_movemask_epi8(x))}; };
    m.soh |= bits(_mm_cmpeq_epi8(v, s)) << (16 * k);
    m.eq |= bits(_mm_cmpeq_epi8(v, e)) << (16 * k);
    m.nd |= (bits(_mm_cmpeq_epi8(_mm_min_epu8(d, nine), d)) ^ 0xffff) << (16 * k);
  }
  return m;
#endif
}

// Masks of a text shorter than 64 bytes, through a zero-padded copy. Out of
// line: its 64-byte stack buffer would otherwise realign the parse frame.
[[gnu::noinline]] Masks short_text_masks(const char* p, std::size_t n) noexcept {
  alignas(64) char tmp[64] = {};
  std::memcpy(tmp, p, n);
  return masks64(tmp);
}

// Masks of the block of text [block, block + 64); bits past n are zero.
// Never reads outside [p, p + n).
inline Masks block_masks(const char* p, std::size_t n, std::size_t block) noexcept {
  if (block + 64 <= n) return masks64(p + block);
  if (n < 64) return short_text_masks(p, n);
  // The final 64 bytes, shifted: bytes past the end shift in as zeros.
  const Masks m = masks64(p + n - 64);
  const std::size_t shift = block - (n - 64);
  return {m.soh >> shift, m.eq >> shift, m.nd >> shift};
}

// Mask of the bits above bit k (k in 0..63): clears bits 0..k.
inline std::uint64_t above(std::size_t k) noexcept { return k >= 63 ? 0 : ~std::uint64_t{0} << (k + 1); }

// Signed decimal tag; false for empty, non-digits or beyond int32.
inline bool parse_tag(const char* s, std::size_t len, std::int32_t& out) noexcept {
  bool neg = false;
  if (len != 0 && *s == '-') {
    neg = true;
    ++s;
    --len;
  }
  if (len == 0) return false;
  const std::uint64_t limit = std::uint64_t{std::numeric_limits<std::int32_t>::max()} + (neg ? 1 : 0);
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < len; ++i) {
    const unsigned d = static_cast<unsigned char>(s[i] - '0');
    if (d > 9) return false;
    v = v * 10 + d;
    if (v > limit) return false;
  }
  out = neg ? static_cast<std::int32_t>(-static_cast<std::int64_t>(v)) : static_cast<std::int32_t>(v);
  return true;
}

// Value of the 1..4 digits ending just before p[eq] (eq >= 4), already known
// to be digits, without a loop: the 4 bytes before '=' are loaded and the
// digits, in the high bytes, are combined pairwise.
inline std::int64_t tag4(const char* p, std::size_t eq, std::size_t len) noexcept {
  std::uint32_t v;
  std::memcpy(&v, p + eq - 4, 4);
  v &= (~std::uint32_t{0} << (8 * (4 - len))) & 0x0F0F0F0Fu;  // leading bytes read as digit 0
  v = v * 10 + (v >> 8);  // bytes 0 and 2: the two 2-digit halves
  return static_cast<std::int64_t>((v & 0xFFu) * 100 + ((v >> 16) & 0xFFu));
}

}  // namespace

// Data tag of each length tag below kIndexedTags (0: not a length tag), and
// for every 1-4 digit tag whether the field loop's fast path may take it (it
// may not for length tags and tags beyond the index). Built from
// is_length_tag() by the first MessageView constructed, so that parse()
// depends on no static initialisation order and pays no guard.
struct detail::TagTables {
  std::array<std::int16_t, MessageView::kIndexedTags> data_tag{};
  std::array<std::uint8_t, 10000> slow{};
  TagTables() noexcept {
    for (int t = 0; t < 10000; ++t) {
      int d = 0;
      const bool length = is_length_tag(t, d);
      slow[static_cast<std::size_t>(t)] = length || t >= MessageView::kIndexedTags;
      if (length && t < MessageView::kIndexedTags && d > 0 && d <= std::numeric_limits<std::int16_t>::max()) {
        data_tag[static_cast<std::size_t>(t)] = static_cast<std::int16_t>(d);
      }
    }
  }
};

namespace {

using detail::TagTables;

const TagTables& tag_tables() noexcept {
  static const TagTables tables;
  return tables;
}

constexpr std::int64_t kNoDataTag = std::numeric_limits<std::int64_t>::min();  // equals no tag

// Value of a length field, or UINT64_MAX (longer than any text) if it is not a number.
inline std::uint64_t length_value(const char* s, std::size_t len) noexcept {
  std::uint64_t v = 0;
  return parse_uint(std::string_view(s, len), v) ? v : ~std::uint64_t{0};
}

struct DataState {
  std::int64_t data_tag = kNoDataTag;  // the data tag allowed next
  std::uint64_t data_length = 0;       // its declared length (UINT64_MAX: not a number)
};

// Every case the field loop's fast path leaves out: a missing '=', too many
// fields, tags that are signed, long, not numbers or beyond the index, length
// tags and the data fields after them. On kOk and kBadTag the caller counts
// the field written at fields[count].
struct SlowResult {
  ParseStatus status;
  std::size_t end;  // the SOH ending the field
};

[[gnu::noinline]] SlowResult slow_field(const char* p, std::size_t n, std::size_t pos, std::size_t s,
                                        std::size_t eq_at, Field* fields, std::uint64_t* index, std::uint64_t gen,
                                        std::size_t count, DataState& data, const TagTables& tables) noexcept {
  if (eq_at >= s) return {ParseStatus::kMissingDelimiter, s};  // no '=' before the SOH
  if (count == MessageView::kMaxFields) return {ParseStatus::kTooManyFields, s};
  const std::size_t v = eq_at + 1;
  std::int32_t tag = 0;
  if (!parse_tag(p + pos, eq_at - pos, tag)) {
    fields[count] = Field{-1, static_cast<std::uint32_t>(v), static_cast<std::uint32_t>(s - v)};
    return {ParseStatus::kBadTag, s};
  }
  std::size_t end = s;
  if (tag == data.data_tag) {
    if (data.data_length >= n - v || p[v + data.data_length] != kSoh) return {ParseStatus::kBadDataLength, s};
    end = v + static_cast<std::size_t>(data.data_length);
  }
  fields[count] = Field{tag, static_cast<std::uint32_t>(v), static_cast<std::uint32_t>(end - v)};
  int next_data_tag = 0;
  if (static_cast<std::uint32_t>(tag) < static_cast<std::uint32_t>(MessageView::kIndexedTags)) {
    std::uint64_t& slot = index[tag];
    if (static_cast<std::uint32_t>(slot) != gen) slot = gen | (std::uint64_t{count} << 32);
    next_data_tag = tables.data_tag[static_cast<std::size_t>(tag)];
  } else if (tag >= 0) {
    if (!is_length_tag(tag, next_data_tag)) next_data_tag = 0;
  }
  data.data_tag = next_data_tag != 0 ? next_data_tag : kNoDataTag;
  if (next_data_tag != 0) data.data_length = length_value(p + v, end - v);
  return {ParseStatus::kOk, end};
}

// Days since 1970-01-01 of a proleptic Gregorian date.
constexpr std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) noexcept {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

constexpr unsigned days_in_month(unsigned y, unsigned m) noexcept {
  constexpr unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (m == 2 && (y % 4 == 0 && (y % 100 != 0 || y % 400 == 0))) return 29;
  return kDays[m - 1];
}

inline bool digits2(const char* s, unsigned& out) noexcept {
  if (!is_digit(s[0]) || !is_digit(s[1])) return false;
  out = static_cast<unsigned>(s[0] - '0') * 10 + static_cast<unsigned>(s[1] - '0');
  return true;
}

}  // namespace

// ==================================================================== frame

std::string_view to_string(FrameError error) noexcept {
  switch (error) {
    case FrameError::kNone: return "none";
    case FrameError::kNoBeginString: return "no 8=FIX BeginString at the start";
    case FrameError::kBadBodyLength: return "second field is not 9=<digits>";
    case FrameError::kBodyLengthTooLarge: return "BodyLength above the limit";
    case FrameError::kNoCheckSum: return "no 10= CheckSum at the end of the declared body";
    case FrameError::kBadCheckSum: return "CheckSum is not three digits or does not match";
  }
  return "unknown";
}

FrameResult frame(std::string_view buffer, const FrameOptions& options) noexcept {
  const char* p = buffer.data();
  const std::size_t n = buffer.size();
  if (n == 0) return need_more();

  // 8=FIX...^
  if (n < kBeginLen) {
    if (std::memcmp(p, kBegin, n) == 0) return need_more();
    return resync(p, n, 1, FrameError::kNoBeginString);
  }
  if (std::memcmp(p, kBegin, kBeginLen) != 0) return resync(p, n, 1, FrameError::kNoBeginString);
  const std::size_t begin_limit = std::min(n, 2 + kMaxBeginValue + 1);
  std::size_t i = kBeginLen;
  while (i < begin_limit && p[i] != kSoh) ++i;
  if (i == begin_limit) {
    if (n < 2 + kMaxBeginValue + 1) return need_more();
    return resync(p, n, 1, FrameError::kNoBeginString);
  }

  // 9=<digits>^
  std::size_t q = i + 1;
  if (q >= n) return need_more();
  if (p[q] != '9') return resync(p, n, 1, FrameError::kBadBodyLength);
  if (++q >= n) return need_more();
  if (p[q] != '=') return resync(p, n, 1, FrameError::kBadBodyLength);
  ++q;
  const std::size_t max_body = options.max_body_length;
  std::size_t body_length = 0;
  std::size_t digits = 0;
  for (;; ++q) {
    if (q >= n) return need_more();
    const char c = p[q];
    if (c == kSoh) break;
    if (!is_digit(c) || ++digits > kMaxBodyLengthDigits) return resync(p, n, 1, FrameError::kBadBodyLength);
    const std::size_t d = static_cast<std::size_t>(c - '0');
    if (d > max_body || body_length > (max_body - d) / 10) {
      return resync(p, n, 1, FrameError::kBodyLengthTooLarge);
    }
    body_length = body_length * 10 + d;
  }
  if (digits == 0) return resync(p, n, 1, FrameError::kBadBodyLength);
  const std::size_t body_start = q + 1;  // <= n

  // Body and "^10=ddd^" right after it (QuickFIX: find("\00110=", end - 1)).
  if (body_length > n - body_start) return need_more();
  const std::size_t expected = body_start + body_length - 1;  // the SOH before "10="
  const std::size_t limit = max_body > std::numeric_limits<std::size_t>::max() - kTrailerSlack
                                ? std::numeric_limits<std::size_t>::max()
                                : max_body + kTrailerSlack;
  // A trailer further than the limit is no more a message end than none.
  const std::size_t search_end = n - body_start > limit ? body_start + limit : n;
  const std::size_t t = find_trailer(p, search_end, expected);
  if (t == kNpos) {
    if (n - body_start > limit) return resync(p, n, 1, FrameError::kNoCheckSum);
    return need_more();
  }
  const std::size_t v = t + 4;
  std::size_t end = v;
  while (end < n && p[end] != kSoh) ++end;
  if (end == n) {
    if (n - body_start > limit) return resync(p, n, 1, FrameError::kNoCheckSum);
    return need_more();
  }
  const std::size_t size = end + 1;
  if (t != expected) return garbled(size, FrameError::kNoCheckSum);
  if (end - v != 3 || !is_digit(p[v]) || !is_digit(p[v + 1]) || !is_digit(p[v + 2])) {
    return garbled(size, FrameError::kBadCheckSum);
  }
  if (options.verify_checksum) {
    const unsigned declared = static_cast<unsigned>(p[v] - '0') * 100 +
                              static_cast<unsigned>(p[v + 1] - '0') * 10 + static_cast<unsigned>(p[v + 2] - '0');
    if ((byte_sum(p, t + 1) & 0xffu) != declared) return garbled(size, FrameError::kBadCheckSum);
  }
  return {FrameStatus::kComplete, FrameError::kNone, size};
}

// ==================================================================== parse

std::string_view to_string(ParseStatus status) noexcept {
  switch (status) {
    case ParseStatus::kOk: return "ok";
    case ParseStatus::kTooManyFields: return "too many fields";
    case ParseStatus::kMissingDelimiter: return "field without '=' or not ending in SOH";
    case ParseStatus::kBadTag: return "tag is not a number";
    case ParseStatus::kBadDataLength: return "bad length for a data field";
    case ParseStatus::kEmpty: return "empty message";
  }
  return "unknown";
}

MessageView::MessageView() noexcept : tables_(&tag_tables()) {}

ParseStatus MessageView::parse(std::string_view text) noexcept {
  text_ = text;
  count_ = 0;
  if (++generation_ == 0) {
    for (std::uint64_t& slot : index_) slot = 0;
    generation_ = 1;
  }
  const char* const p = text.data();
  const std::size_t n = text.size();
  if (n == 0) return ParseStatus::kEmpty;
  if (n > std::numeric_limits<std::uint32_t>::max()) return ParseStatus::kTooManyFields;

  // One pass over 64-byte blocks. Each SOH bit ends a field; the field's '='
  // is the first '=' bit after the previous SOH, and its tag is all digits
  // if the first non-digit after that SOH is that '='. Only the SOH bit-walk
  // is a dependency chain from field to field, so fields overlap in the
  // pipeline; the common field (1-4 digit indexed tag, not a length or data
  // field) takes one predictable branch, everything else slow_field().
  //
  // eq_at / nd_at: the first '=' / non-digit at or after pos; a value at or
  // past the current block's end means "not in this block yet" (tzcnt of an
  // empty mask is 64).
  const std::uint64_t gen = generation_;
  const TagTables& tables = *tables_;
  std::size_t count = 0;
  DataState data;
  // The first field always takes the slow path: after it, a fast-path tag
  // has at least 3 bytes before it, which tag4() reads.
  bool pending = true;
  std::size_t pos = 0;  // start of the current field
  std::size_t eq_at = 0, nd_at = 0;
  std::size_t block = 0;
  ParseStatus status = ParseStatus::kOk;
  while (block < n) {
    const Masks m = block_masks(p, n, block);
    std::uint64_t soh = m.soh, eq = m.eq, nd = m.nd;
    if (pos > block) {  // resuming after raw data that ended inside this block
      const std::uint64_t from = ~std::uint64_t{0} << (pos - block);
      soh &= from;
      eq &= from;
      nd &= from;
    }
    if (eq_at >= block) eq_at = block + static_cast<std::size_t>(std::countr_zero(eq));
    if (nd_at >= block) nd_at = block + static_cast<std::size_t>(std::countr_zero(nd));
    // Near kMaxFields every field is counted by the slow path.
    const bool careful = count + 64 > kMaxFields;
    pending |= careful;
    bool jumped = false;
    while (soh != 0) {
      const std::uint64_t bit = soh & (0 - soh);
      soh ^= bit;
      const std::uint64_t after = 0 - (bit << 1);  // bits after this SOH: the next field's
      eq &= after;
      nd &= after;
      const std::size_t s = block + static_cast<std::size_t>(__builtin_ctzll(bit));
      const std::size_t len = eq_at - pos;
      // nd_at == eq_at: the tag is digits up to an '=' (which then precedes s).
      bool fast = (len - 1 < 4) & (nd_at == eq_at) & !pending;
      if (fast) [[likely]] {
        const std::int64_t tag = tag4(p, eq_at, len);
        fast = tables.slow[static_cast<std::size_t>(tag)] == 0;
        if (fast) [[likely]] {
          const std::size_t v = eq_at + 1;
          fields_[count] = Field{static_cast<std::int32_t>(tag), static_cast<std::uint32_t>(v),
                                 static_cast<std::uint32_t>(s - v)};
          std::uint64_t& slot = index_[tag];
          if (static_cast<std::uint32_t>(slot) != gen) slot = gen | (std::uint64_t{count} << 32);
          ++count;
          pos = s + 1;
        }
      }
      if (!fast) {
        const SlowResult r = slow_field(p, n, pos, s, eq_at, fields_, index_, gen, count, data, tables);
        if (r.status != ParseStatus::kOk) [[unlikely]] {
          if (r.status == ParseStatus::kBadTag) ++count;
          status = r.status;
          goto done;
        }
        ++count;
        pending = careful | (data.data_tag != kNoDataTag);
        const std::size_t end = r.end;
        pos = end + 1;
        if (end != s) {
          // Skip the SOH, '=' and digits inside the data.
          if (end - block >= 63) {
            block = pos & ~std::size_t{63};
            eq_at = nd_at = block;  // look again in that block
            jumped = true;
            break;
          }
          soh &= above(end - block);
          eq &= above(end - block);
          nd &= above(end - block);
        }
      }
      eq_at = block + static_cast<std::size_t>(std::countr_zero(eq));
      nd_at = block + static_cast<std::size_t>(std::countr_zero(nd));
    }
    if (!jumped) block += 64;
  }
  if (pos < n) status = ParseStatus::kMissingDelimiter;  // text not ending in SOH
done:
  count_ = count;
  return status;
}

std::string_view MessageView::tag_text(std::size_t i) const noexcept {
  if (i >= count_) return {};
  const std::size_t start =
      i == 0 ? 0 : std::size_t{fields_[i - 1].value_offset} + fields_[i - 1].value_length + 1;
  const std::size_t eq = fields_[i].value_offset - 1;
  return text_.substr(start, eq - start);
}

int MessageView::find(int tag) const noexcept {
  if (static_cast<unsigned>(tag) < static_cast<unsigned>(kIndexedTags)) {
    const std::uint64_t slot = index_[tag];
    return static_cast<std::uint32_t>(slot) == generation_ ? static_cast<int>(slot >> 32) : -1;
  }
  return find_from(tag, 0);
}

int MessageView::find_from(int tag, std::size_t from) const noexcept {
  if (static_cast<unsigned>(tag) < static_cast<unsigned>(kIndexedTags)) {
    const std::uint64_t slot = index_[tag];
    if (static_cast<std::uint32_t>(slot) != generation_) return -1;
    const std::size_t first = static_cast<std::size_t>(slot >> 32);
    if (first >= from) return static_cast<int>(first);
  }
  for (std::size_t i = from; i < count_; ++i) {
    if (fields_[i].tag == tag) return static_cast<int>(i);
  }
  return -1;
}

std::string_view MessageView::get(int tag) const noexcept {
  const int i = find(tag);
  return i < 0 ? std::string_view{} : value_at(static_cast<std::size_t>(i));
}

bool MessageView::get_int(int tag, std::int64_t& out) const noexcept {
  const int i = find(tag);
  return i >= 0 && parse_int(value_at(static_cast<std::size_t>(i)), out);
}

bool MessageView::get_uint(int tag, std::uint64_t& out) const noexcept {
  const int i = find(tag);
  return i >= 0 && parse_uint(value_at(static_cast<std::size_t>(i)), out);
}

bool MessageView::get_decimal(int tag, Decimal& out) const noexcept {
  const int i = find(tag);
  return i >= 0 && parse_decimal(value_at(static_cast<std::size_t>(i)), out);
}

bool MessageView::get_char(int tag, char& out) const noexcept {
  const int i = find(tag);
  return i >= 0 && parse_char(value_at(static_cast<std::size_t>(i)), out);
}

bool MessageView::get_bool(int tag, bool& out) const noexcept {
  const int i = find(tag);
  return i >= 0 && parse_bool(value_at(static_cast<std::size_t>(i)), out);
}

bool MessageView::get_timestamp(int tag, std::int64_t& epoch_ns) const noexcept {
  const int i = find(tag);
  return i >= 0 && parse_utc_timestamp(value_at(static_cast<std::size_t>(i)), epoch_ns);
}

// ============================================================ value parsers

bool parse_uint(std::string_view text, std::uint64_t& out) noexcept {
  if (text.empty()) return false;
  std::uint64_t v = 0;
  for (const char c : text) {
    const unsigned d = static_cast<unsigned char>(c - '0');
    if (d > 9) return false;
    if (__builtin_mul_overflow(v, 10u, &v) || __builtin_add_overflow(v, d, &v)) return false;
  }
  out = v;
  return true;
}

bool parse_int(std::string_view text, std::int64_t& out) noexcept {
  const bool neg = !text.empty() && text.front() == '-';
  if (neg) text.remove_prefix(1);
  std::uint64_t v = 0;
  if (!parse_uint(text, v)) return false;
  constexpr std::uint64_t kMax = std::numeric_limits<std::int64_t>::max();
  if (v > kMax + (neg ? 1 : 0)) return false;
  out = neg ? static_cast<std::int64_t>(0 - v) : static_cast<std::int64_t>(v);
  return true;
}

bool parse_decimal(std::string_view text, Decimal& out) noexcept {
  constexpr unsigned kMaxDigits = 18;
  std::size_t i = 0;
  const bool neg = !text.empty() && text[0] == '-';
  if (neg) ++i;
  std::uint64_t mantissa = 0;
  unsigned significant = 0, scale = 0, pending_zeros = 0;
  bool dot = false, any_digit = false;
  // Appends one digit; a fraction digit also raises the scale.
  auto push = [&](unsigned d) noexcept {
    if (dot) {
      if (scale == kMaxDigits) return false;
      ++scale;
    }
    if (mantissa == 0 && d == 0) return true;
    if (significant == kMaxDigits) return false;
    mantissa = mantissa * 10 + d;
    ++significant;
    return true;
  };
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '.') {
      if (dot) return false;
      dot = true;
      continue;
    }
    const unsigned d = static_cast<unsigned char>(c - '0');
    if (d > 9) return false;
    any_digit = true;
    if (dot && d == 0) {
      ++pending_zeros;  // may turn out to be trailing zeros
      continue;
    }
    for (; pending_zeros > 0; --pending_zeros) {
      if (!push(0)) return false;
    }
    if (!push(d)) return false;
  }
  if (!any_digit) return false;
  // Trailing fraction zeros: keep the written scale while it fits, drop the rest.
  for (; pending_zeros > 0 && scale < kMaxDigits && (mantissa == 0 || significant < kMaxDigits); --pending_zeros) {
    (void)push(0);
  }
  out.mantissa = neg ? -static_cast<std::int64_t>(mantissa) : static_cast<std::int64_t>(mantissa);
  out.scale = static_cast<std::uint8_t>(scale);
  return true;
}

bool parse_char(std::string_view text, char& out) noexcept {
  if (text.size() != 1) return false;
  out = text[0];
  return true;
}

bool parse_bool(std::string_view text, bool& out) noexcept {
  if (text == "Y") {
    out = true;
    return true;
  }
  if (text == "N") {
    out = false;
    return true;
  }
  return false;
}

bool parse_utc_timestamp(std::string_view text, std::int64_t& epoch_ns) noexcept {
  const std::size_t n = text.size();
  if (n < 17 || n == 18 || n > 27) return false;
  const char* s = text.data();
  unsigned y_hi = 0, y_lo = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0;
  if (!digits2(s, y_hi) || !digits2(s + 2, y_lo) || !digits2(s + 4, mo) || !digits2(s + 6, d) || s[8] != '-' ||
      !digits2(s + 9, h) || s[11] != ':' || !digits2(s + 12, mi) || s[14] != ':' || !digits2(s + 15, sec)) {
    return false;
  }
  const unsigned y = y_hi * 100 + y_lo;
  if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 || sec > 60) return false;
  std::int64_t frac_ns = 0;
  if (n > 17) {
    if (s[17] != '.') return false;
    for (std::size_t k = 18; k < n; ++k) {
      if (!is_digit(s[k])) return false;
      frac_ns = frac_ns * 10 + (s[k] - '0');
    }
    for (std::size_t k = n; k < 27; ++k) frac_ns *= 10;
  }
  std::int64_t seconds = days_from_civil(y, mo, d) * 86400 + std::int64_t{h} * 3600 + std::int64_t{mi} * 60 + sec;
  if (seconds < 0 && frac_ns > 0) {
    // Borrow a second so that the instants just after INT64_MIN ns do not
    // overflow on the way.
    seconds += 1;
    frac_ns -= 1'000'000'000;
  }
  std::int64_t ns = 0;
  if (__builtin_mul_overflow(seconds, std::int64_t{1'000'000'000}, &ns) || __builtin_add_overflow(ns, frac_ns, &ns)) {
    return false;
  }
  epoch_ns = ns;
  return true;
}

// ============================================================ GroupReader

bool GroupReader::next() noexcept {
  if (cursor_ >= end_) return false;
  entry_begin_ = cursor_;
  std::size_t p = cursor_ + 1;
  while (p < end_ && msg_.field(p).tag != delimiter_) ++p;
  entry_end_ = p;
  cursor_ = p;
  ++entries_;
  return true;
}

int GroupReader::find_in_entry(int tag) const noexcept {
  for (std::size_t i = entry_begin_; i < entry_end_; ++i) {
    if (msg_.field(i).tag == tag) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace hft::codec
