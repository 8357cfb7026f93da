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
// converted without a loop. A message whose every field is "<1-4 digit
// tag>=<value without '='>^" (nearly all of them) is checked for that shape a
// block at a time with mask arithmetic, after which its fields are read
// without a per-field branch on rare cases; anything else (raw data, '=' in a
// value, odd tags, too many fields, a missing delimiter) is parsed again by
// the general loop, which decides every rule.
#include "hft/codec/parser.hpp"

#include <immintrin.h>

// PEXT turns a tag's digits into packed BCD in one instruction (one table
// load then gives the tag). Zen 1/2 microcode it slowly: SWAR there.
#if defined(__BMI2__) && !defined(__znver1__) && !defined(__znver2__)
#define HFT_PARSE_PEXT 1
#else
#define HFT_PARSE_PEXT 0
#endif
// The clean path builds 16 fields at a time with byte compress/permute.
#if defined(__AVX512BW__) && defined(__AVX512VBMI__) && defined(__AVX512VBMI2__)
#define HFT_PARSE_VBMI2 1
#else
#define HFT_PARSE_VBMI2 0
#endif
// GCC 12's AVX-512 headers trip -Wmaybe-uninitialized on their own
// _mm512_undefined_* placeholders.
#if defined(__clang__)
#define HFT_AVX512_WARNINGS_OFF
#define HFT_AVX512_WARNINGS_ON
#else
#define HFT_AVX512_WARNINGS_OFF                                                              \
  _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wmaybe-uninitialized\"") \
      _Pragma("GCC diagnostic ignored \"-Wuninitialized\"")
#define HFT_AVX512_WARNINGS_ON _Pragma("GCC diagnostic pop")
#endif

#include <algorithm>
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

constexpr bool is_digit(char c) noexcept {
  return static_cast<unsigned char>(c - '0') <= 9;
}

// ---------------------------------------------------------------- byte sum

#if defined(__AVX512BW__)
HFT_AVX512_WARNINGS_OFF
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
  // Halving by hand, not _mm512_reduce_add_epi64: GCC 12's version of that
  // trips -Wmaybe-uninitialized inside its own header.
  const __m512i acc = _mm512_add_epi64(acc0, acc1);
  const __m256i half = _mm256_add_epi64(_mm512_castsi512_si256(acc), _mm512_extracti64x4_epi64(acc, 1));
  const __m128i quarter = _mm_add_epi64(_mm256_castsi256_si128(half), _mm256_extracti128_si256(half, 1));
  return static_cast<std::uint32_t>(
      _mm_cvtsi128_si64(_mm_add_epi64(quarter, _mm_unpackhi_epi64(quarter, quarter))));
}
HFT_AVX512_WARNINGS_ON
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

constexpr FrameResult need_more() noexcept {
  return {FrameStatus::kNeedMore, FrameError::kNone, 0};
}
constexpr FrameResult garbled(std::size_t size, FrameError e) noexcept {
  return {FrameStatus::kGarbled, e, size};
}

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
    const auto bits = [](__m128i x) {
      return std::uint64_t{static_cast<std::uint16_t>(_mm_movemask_epi8(x))};
    };
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
inline std::uint64_t above(std::size_t k) noexcept {
  return k >= 63 ? 0 : ~std::uint64_t{0} << (k + 1);
}

// Bit i of the result is the parity of the bits 0..i of x.
inline std::uint64_t prefix_xor(std::uint64_t x) noexcept {
#if defined(__PCLMUL__)
  const __m128i r = _mm_clmulepi64_si128(_mm_cvtsi64_si128(static_cast<long long>(x)), _mm_set1_epi8(-1), 0);
  return static_cast<std::uint64_t>(_mm_cvtsi128_si64(r));
#else
  x ^= x << 1;
  x ^= x << 2;
  x ^= x << 4;
  x ^= x << 8;
  x ^= x << 16;
  x ^= x << 32;
  return x;
#endif
}

// Bits 0..k-1 set (k in 0..64).
inline std::uint64_t low_bits(std::size_t k) noexcept {
  return k >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << k) - 1;
}

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
  v = v * 10 + (v >> 8);                                      // bytes 0 and 2: the two 2-digit halves
  return static_cast<std::int64_t>((v & 0xFFu) * 100 + ((v >> 16) & 0xFFu));
}

}  // namespace

// Per-tag facts for the field loop, built from is_length_tag() by the first
// MessageView constructed, so that parse() depends on no static
// initialisation order and pays no guard:
// - data_tag: the data tag of each length tag below kIndexedTags (0: none);
// - slow: for every 1-4 digit tag, whether the general loop's fast path may
//   take it (not for length tags and tags beyond the index);
// - by_bcd (with PEXT): the tag whose 1-4 digits read as packed BCD give the
//   index ("35" -> 0x35), or kNoTag if the clean-message path may not take it.
struct detail::TagTables {
  static constexpr std::uint16_t kNoTag = 0xffff;
  std::array<std::int16_t, MessageView::kIndexedTags> data_tag{};
  std::array<std::uint8_t, 10000> slow{};
#if HFT_PARSE_PEXT
  std::array<std::uint16_t, 0x10000> by_bcd{};
#endif
  /// The vector path's test for length tags below kIndexedTags: tag t is one
  /// iff length_by_hash[(t * length_hash_mul) >> 27] == t (a perfect hash,
  /// searched for here; empty slots hold a value no tag has).
  alignas(64) std::array<std::uint32_t, 32> length_by_hash{};
  std::uint32_t length_hash_mul = 0;  ///< 0: none found, no vector path
  TagTables() noexcept {
    for (int t = 0; t < 10000; ++t) {
      int d = 0;
      const bool length = is_length_tag(t, d);
      slow[static_cast<std::size_t>(t)] = length || t >= MessageView::kIndexedTags;
      if (length && t < MessageView::kIndexedTags && d > 0 && d <= std::numeric_limits<std::int16_t>::max()) {
        data_tag[static_cast<std::size_t>(t)] = static_cast<std::int16_t>(d);
      }
    }
    // Multipliers from a fixed LCG until the length tags land in distinct
    // slots (17 tags in 32 slots: ~100 tries).
    std::uint64_t lcg = 0x9E3779B97F4A7C15ull;
    for (int attempt = 0; attempt < (1 << 20) && length_hash_mul == 0; ++attempt) {
      lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
      const auto mul = static_cast<std::uint32_t>(lcg >> 32) | 1u;
      length_by_hash.fill(~0u);
      bool distinct = true;
      for (int t = 0; t < MessageView::kIndexedTags && distinct; ++t) {
        int d = 0;
        if (!is_length_tag(t, d)) continue;
        std::uint32_t& slot = length_by_hash[(static_cast<std::uint32_t>(t) * mul) >> 27];
        distinct = slot == ~0u;
        slot = static_cast<std::uint32_t>(t);
      }
      if (distinct) length_hash_mul = mul;
    }
#if HFT_PARSE_PEXT
    by_bcd.fill(kNoTag);
    for (int t = 0; t < MessageView::kIndexedTags; ++t) {
      if (slow[static_cast<std::size_t>(t)] != 0) continue;
      const unsigned bcd =
          static_cast<unsigned>((t / 1000) << 12 | (t / 100 % 10) << 8 | (t / 10 % 10) << 4 | t % 10);
      by_bcd[bcd] = static_cast<std::uint16_t>(t);
    }
#endif
  }
};

namespace {

using detail::TagTables;

const TagTables& tag_tables() noexcept {
  static const TagTables tables;
  return tables;
}

// ------------------------------------------------------------- clean path

// Tag of the 1-4 digits p[e-len..e) (e >= 4, known to be digits), or -1 if
// the clean path may not take it (a length tag, a tag beyond the index).
inline int clean_tag(const char* p, std::size_t e, std::size_t len, const TagTables& tables) noexcept {
#if HFT_PARSE_PEXT
  std::uint32_t v;
  std::memcpy(&v, p + e - 4, 4);
  v = __builtin_bswap32(v);  // the last digit in the low byte
  const unsigned bcd = _pext_u32(_bzhi_u32(v, static_cast<unsigned>(len * 8)), 0x0F0F0F0Fu);
  const std::uint16_t t = tables.by_bcd[bcd];
  return t == TagTables::kNoTag ? -1 : static_cast<int>(t);
#else
  const std::int64_t t = tag4(p, e, len);
  return tables.slow[static_cast<std::size_t>(t)] != 0 ? -1 : static_cast<int>(t);
#endif
}

// What a clean path did: all of the text (done), or its first `count` fields
// (written and indexed) with the general loop to go on at byte `resume`, the
// start of the field after them.
struct CleanRun {
  std::size_t count;
  std::size_t resume;
  bool done;
};

// Reads the fields of a clean message: every field "<1-4 digit tag>=<value>^"
// with no '=' in the value, no length tag, no tag beyond the index, at most
// `max_fields` fields, the text ending in SOH. At the first field that is not
// so, stops with the fields before it (the index is the caller's).
//
// The shape is checked per 64-byte block: with v = the prefix parity of the
// SOH|'=' bits (carried across blocks), '=' and value bytes have v = 1 and
// tag bytes v = 0 exactly when '=' and SOH alternate; so a '=' with v = 0, a
// SOH with v = 1 or a non-digit tag byte means "not clean". Fields then pair
// the k-th '=' with the k-th SOH.
CleanRun clean_fields(const char* p, std::size_t n, Field* fields, std::size_t max_fields,
                      const TagTables& tables) noexcept {
  std::size_t count = 0;
  std::size_t ts = 0;          // first byte of the next field's tag
  std::size_t pending_eq = 0;  // '=' of a field whose SOH is in a later block
  std::uint64_t in_value = 0;  // all ones if the block starts inside a value
  if (p[n - 1] != kSoh) return CleanRun{0, 0, false};
  const auto emit = [&](std::size_t e, std::size_t s) noexcept {
    const std::size_t len = e - ts;
    if (len - 1 >= 4) return false;  // empty or longer than 4 digits
    const int tag = clean_tag(p, e, len, tables);
    if (tag < 0) return false;
    fields[count] = Field{tag, static_cast<std::uint32_t>(e + 1), static_cast<std::uint32_t>(s - e - 1)};
    ++count;
    ts = s + 1;
    return true;
  };
  for (std::size_t block = 0; block < n; block += 64) {
    const Masks m = block_masks(p, n, block);
    const std::uint64_t carried = in_value;
    const std::uint64_t v = prefix_xor(m.soh | m.eq) ^ carried;
    const std::uint64_t bad = (m.eq & ~v) | (m.soh & v) | (m.nd & ~(v | m.soh) & low_bits(n - block));
    if (bad != 0) return CleanRun{count, ts, false};
    in_value = static_cast<std::uint64_t>(static_cast<std::int64_t>(v) >> 63);
    std::uint64_t soh = m.soh, eq = m.eq;
    if (count + static_cast<std::size_t>(std::popcount(soh)) > max_fields) return CleanRun{count, ts, false};
    if (carried != 0) {
      if (soh == 0) continue;  // a value longer than the block
      // A first field running past its block would need the first-field tag.
      if (count == 0 || !emit(pending_eq, block + static_cast<std::size_t>(std::countr_zero(soh))))
        return CleanRun{count, ts, false};
      soh &= soh - 1;
    } else if (block == 0) {
      // The first field, whose tag may start fewer than 4 bytes into the text.
      if (soh == 0) return CleanRun{count, ts, false};
      const std::size_t e = static_cast<std::size_t>(std::countr_zero(eq));
      if (e - 1 >= 4) return CleanRun{count, ts, false};
      int tag = 0;
      for (std::size_t i = 0; i < e; ++i) tag = tag * 10 + (p[i] - '0');
      if (tables.slow[static_cast<std::size_t>(tag)] != 0) return CleanRun{count, ts, false};
      const std::size_t s = static_cast<std::size_t>(std::countr_zero(soh));
      fields[0] = Field{tag, static_cast<std::uint32_t>(e + 1), static_cast<std::uint32_t>(s - e - 1)};
      count = 1;
      ts = s + 1;
      soh &= soh - 1;
      eq &= eq - 1;
    }
    // Alternation makes the k-th remaining '=' the k-th remaining SOH's.
    while (soh != 0) {
      const std::size_t e = block + static_cast<std::size_t>(std::countr_zero(eq));
      const std::size_t s = block + static_cast<std::size_t>(std::countr_zero(soh));
      eq &= eq - 1;
      soh &= soh - 1;
      if (!emit(e, s)) [[unlikely]]
        return CleanRun{count, ts, false};
    }
    if (eq != 0) pending_eq = block + static_cast<std::size_t>(std::countr_zero(eq));
  }
  return CleanRun{count, n, true};
}

// The first occurrence of each tag in the index: written backwards so that
// it is the one that stays. Scalar on purpose: GCC would vectorize it with
// scatters (or, without AVX-512, element extracts), which cost more than the
// 1-2 stores a cycle this loop runs at.
template <typename Tags>
#if defined(__clang__)
[[gnu::noinline]]
#else
[[gnu::noinline, gnu::optimize("no-tree-vectorize")]]
#endif
void index_fields(Tags tag_of, std::size_t count, std::uint64_t* index, std::uint64_t gen) noexcept {
  std::uint64_t slot = gen | (std::uint64_t{count} << 32);
#if defined(__clang__)
#pragma clang loop vectorize(disable)
#endif
  for (std::size_t i = count; i-- > 0;) {
    slot -= std::uint64_t{1} << 32;
    index[tag_of(i)] = slot;
  }
}

// clean_fields() and the index of the fields it read.
CleanRun clean_fields_indexed(const char* p, std::size_t n, Field* fields, std::size_t max_fields,
                              std::uint64_t* index, std::uint64_t gen, const TagTables& tables) noexcept {
  const CleanRun run = clean_fields(p, n, fields, max_fields, tables);
  index_fields([fields](std::size_t i) noexcept { return static_cast<std::uint32_t>(fields[i].tag); },
               run.count, index, gen);
  return run;
}

#if HFT_PARSE_VBMI2
HFT_AVX512_WARNINGS_OFF

// Keeps a constant in a register: GCC otherwise rebuilds broadcast constants
// inside the loop (two instructions each, every block).
template <typename T>
inline T pinned(T value) noexcept {
  asm("" : "+v"(value));
  return value;
}

// clean_fields() with AVX-512, writing the index too. Per 64-byte block, in
// registers: the shape checks, then the '=' and SOH offsets compressed into
// position lists; the fields the block's SOHs complete take the '=' list
// (after the '=' carried from an earlier block, if any), the SOH list shifted
// by one (after the previous SOH) gives where each tag starts, and for each
// '=' the 4 bytes before it come from a permute over this block and the
// previous one. Tags are their masked digits times (1000, 100, 10, 1) by two
// multiply-adds; length tags are found by a perfect hash. The records are
// interleaved into Field triples. A block completing more than 16 fields
// (fields under 4 bytes long) hands the text to the scalar clean path. The
// tags go through a stack buffer of kVbmi2Fields: past that many fields the
// general loop reads the rest.
constexpr std::size_t kVbmi2Fields = 1024;

[[gnu::noinline]] CleanRun clean_fields_vbmi2(const char* p, std::size_t n, Field* fields,
                                              std::size_t max_fields, std::uint64_t* index, std::uint64_t gen,
                                              const TagTables& tables) noexcept {
  const std::size_t kMax = max_fields < kVbmi2Fields ? max_fields : kVbmi2Fields;
  if (p[n - 1] != kSoh) return CleanRun{0, 0, false};
  // The index loop reads tags back: full-width stores only (a load cannot
  // take its bytes from a masked store still in flight).
  alignas(64) std::uint32_t tags[kVbmi2Fields + 16];

  const __m512i iota =
      _mm512_set_epi8(63, 62, 61, 60, 59, 58, 57, 56, 55, 54, 53, 52, 51, 50, 49, 48, 47, 46, 45, 44, 43, 42,
                      41, 40, 39, 38, 37, 36, 35, 34, 33, 32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20,
                      19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
  // Byte j: the (j/4)-th '=' offset, to which back4 adds 60 + j%4: the 4
  // bytes before that '=' in (previous block, this block).
  const __m512i rep4 =
      _mm512_set_epi8(15, 15, 15, 15, 14, 14, 14, 14, 13, 13, 13, 13, 12, 12, 12, 12, 11, 11, 11, 11, 10, 10,
                      10, 10, 9, 9, 9, 9, 8, 8, 8, 8, 7, 7, 7, 7, 6, 6, 6, 6, 5, 5, 5, 5, 4, 4, 4, 4, 3, 3, 3,
                      3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0);
  const __m512i back4 = pinned(_mm512_set1_epi32(0x3f3e3d3c));  // 60, 61, 62, 63
  const __m512i soh_v = pinned(_mm512_set1_epi8(kSoh)), eq_v = pinned(_mm512_set1_epi8('=')),
                zero_c = pinned(_mm512_set1_epi8('0'));
  const __m512i nine = pinned(_mm512_set1_epi8(9));
  // Digits (d0 d1 d2 d3) -> (10 d0 + d1, 10 d2 + d3) -> 100 (10 d0 + d1) + (10 d2 + d3).
  const __m512i tens = pinned(_mm512_set1_epi16(0x010a));
  const __m512i hundreds = pinned(_mm512_set1_epi32(0x00010064));
  const __m512i low_nibbles = pinned(_mm512_set1_epi8(0x0f));
  const __m512i ones = pinned(_mm512_set1_epi32(1)), three = pinned(_mm512_set1_epi32(3)),
                four = pinned(_mm512_set1_epi32(4));
  const __m512i all = pinned(_mm512_set1_epi32(-1)),
                index_limit = pinned(_mm512_set1_epi32(MessageView::kIndexedTags));
  // Length tags: a perfect hash of them into 32 slots (TagTables).
  const __m512i length_mul = pinned(_mm512_set1_epi32(static_cast<int>(tables.length_hash_mul)));
  const __m512i length_slots0 = _mm512_load_si512(tables.length_by_hash.data());
  const __m512i length_slots1 = _mm512_load_si512(tables.length_by_hash.data() + 16);
  // 16 (tag, offset, length) triples = 48 dwords = 3 vectors: idx_toK picks
  // tag and offset lanes from (tags, offsets), idx_lK keeps those (0-15) and
  // adds the length lanes (16-31).
  const __m512i idx_to0 = _mm512_setr_epi32(0, 16, 0, 1, 17, 0, 2, 18, 0, 3, 19, 0, 4, 20, 0, 5);
  const __m512i idx_to1 = _mm512_setr_epi32(21, 0, 6, 22, 0, 7, 23, 0, 8, 24, 0, 9, 25, 0, 10, 26);
  const __m512i idx_to2 = _mm512_setr_epi32(0, 11, 27, 0, 12, 28, 0, 13, 29, 0, 14, 30, 0, 15, 31, 0);
  const __m512i idx_l0 = _mm512_setr_epi32(0, 1, 16, 3, 4, 17, 6, 7, 18, 9, 10, 19, 12, 13, 20, 15);
  const __m512i idx_l1 = _mm512_setr_epi32(0, 21, 2, 3, 22, 5, 6, 23, 8, 9, 24, 11, 12, 25, 14, 15);
  const __m512i idx_l2 = _mm512_setr_epi32(26, 1, 2, 27, 4, 5, 28, 7, 8, 29, 10, 11, 30, 13, 14, 31);
  static_assert(sizeof(Field) == 12 && alignof(Field) == 4, "Field records are three dwords");
  std::uint32_t* const out = reinterpret_cast<std::uint32_t*>(fields);

  std::size_t count = 0;
  std::uint64_t in_value = 0;       // all ones if the block starts inside a value
  std::uint32_t last_soh = ~0u;     // the SOH before the next tag (-1: none yet)
  std::uint32_t pending_eq = 0;     // '=' of the field open at the block start
  std::uint32_t pending_bytes = 0;  // the 4 bytes before it
  __m512i prev = _mm512_setzero_si512();
  __m512i base = _mm512_setzero_si512();  // the block's offset in every lane
  const __m512i sixty_four = pinned(_mm512_set1_epi32(64));
  enum Step { kNext, kNotClean, kScalar };
  // One block: `cur` holds its bytes (zeros past the text), `valid` marks them.
  const auto step = [&](std::size_t block, __m512i cur, std::uint64_t valid) noexcept -> Step {
    const std::uint64_t soh = _mm512_cmpeq_epi8_mask(cur, soh_v);
    const std::uint64_t eq = _mm512_cmpeq_epi8_mask(cur, eq_v);
    const std::uint64_t nd = _mm512_cmpgt_epu8_mask(_mm512_sub_epi8(cur, zero_c), nine) & valid;
    const std::uint64_t carried = in_value;
    const std::uint64_t v = prefix_xor(soh | eq) ^ carried;
    if (((eq & ~v) | (soh & v) | (nd & ~(v | soh))) != 0) return kNotClean;
    in_value = static_cast<std::uint64_t>(static_cast<std::int64_t>(v) >> 63);
    const std::size_t done = static_cast<std::size_t>(std::popcount(soh));  // fields completed here
    if (done != 0) {
      if (done > 16) {
        // Fields under 4 bytes long: the scalar clean path.
        return kScalar;
      }
      if (count + done > kMax) return kNotClean;
      const __m512i eq_at = _mm512_maskz_compress_epi8(eq, iota);
      const __m512i soh_at = _mm512_maskz_compress_epi8(soh, iota);
      __m512i e = _mm512_add_epi32(_mm512_cvtepu8_epi32(_mm512_castsi512_si128(eq_at)), base);
      const __m512i s = _mm512_add_epi32(_mm512_cvtepu8_epi32(_mm512_castsi512_si128(soh_at)), base);
      __m512i bytes =
          _mm512_permutex2var_epi8(prev, _mm512_add_epi8(_mm512_permutexvar_epi8(rep4, eq_at), back4), cur);
      if (carried != 0) {
        e = _mm512_alignr_epi32(e, _mm512_set1_epi32(static_cast<int>(pending_eq)), 15);
        bytes = _mm512_alignr_epi32(bytes, _mm512_set1_epi32(static_cast<int>(pending_bytes)), 15);
      }
      const __m512i before = _mm512_alignr_epi32(s, _mm512_set1_epi32(static_cast<int>(last_soh)), 15);
      const __mmask16 live = static_cast<__mmask16>(low_bits(done));
      const __m512i len = _mm512_sub_epi32(_mm512_sub_epi32(e, before), ones);
      const __mmask16 bad_len = _mm512_cmpgt_epu32_mask(_mm512_sub_epi32(len, ones), three);
      const __m512i keep = _mm512_sllv_epi32(all, _mm512_slli_epi32(_mm512_sub_epi32(four, len), 3));
      const __m512i digits = _mm512_and_si512(bytes, _mm512_and_si512(keep, low_nibbles));
      const __m512i tag = _mm512_madd_epi16(_mm512_maddubs_epi16(digits, tens), hundreds);
      const __m512i slot = _mm512_srli_epi32(_mm512_mullo_epi32(tag, length_mul), 27);
      const __mmask16 length_tag =
          _mm512_cmpeq_epi32_mask(_mm512_permutex2var_epi32(length_slots0, slot, length_slots1), tag);
      const __mmask16 beyond = _mm512_cmpge_epu32_mask(tag, index_limit);
      if (((bad_len | length_tag | beyond) & live) != 0) return kNotClean;
      const __m512i offset = _mm512_add_epi32(e, ones);
      const __m512i value_length = _mm512_sub_epi32(s, offset);
      const __m512i r0 =
          _mm512_permutex2var_epi32(_mm512_permutex2var_epi32(tag, idx_to0, offset), idx_l0, value_length);
      const __m512i r1 =
          _mm512_permutex2var_epi32(_mm512_permutex2var_epi32(tag, idx_to1, offset), idx_l1, value_length);
      const __m512i r2 =
          _mm512_permutex2var_epi32(_mm512_permutex2var_epi32(tag, idx_to2, offset), idx_l2, value_length);
      _mm512_storeu_si512(tags + count, tag);
      std::uint32_t* const o = out + 3 * count;
      if (count + 16 <= kMax) [[likely]] {
        // Records past `done` are garbage that the next block overwrites (or
        // that lies past size()).
        _mm512_storeu_si512(o, r0);
        _mm512_storeu_si512(o + 16, r1);
        _mm512_storeu_si512(o + 32, r2);
      } else {
        const std::size_t words = 3 * done;
        _mm512_mask_storeu_epi32(o, static_cast<__mmask16>(low_bits(words)), r0);
        _mm512_mask_storeu_epi32(o + 16, static_cast<__mmask16>(low_bits(words > 16 ? words - 16 : 0)), r1);
        _mm512_mask_storeu_epi32(o + 32, static_cast<__mmask16>(low_bits(words > 32 ? words - 32 : 0)), r2);
      }
      count += done;
      last_soh = static_cast<std::uint32_t>(block + 63 - static_cast<std::size_t>(std::countl_zero(soh)));
    }
    if (in_value != 0 && (carried == 0 || done != 0)) {
      // A field opens here: its '=' is the block's last.
      pending_eq = static_cast<std::uint32_t>(block + 63 - static_cast<std::size_t>(std::countl_zero(eq)));
      if (pending_eq < 4) {
        // The first field, longer than the block: the scalar clean path.
        return kScalar;
      }
      std::memcpy(&pending_bytes, p + pending_eq - 4, 4);
    }
    prev = cur;
    base = _mm512_add_epi32(base, sixty_four);
    return kNext;
  };
  std::size_t block = 0;
  Step r = kNext;
  for (; r == kNext && block + 64 <= n; block += 64)
    r = step(block, _mm512_loadu_si512(p + block), ~std::uint64_t{0});
  if (r == kNext && block < n) {
    const std::uint64_t valid = low_bits(n - block);
    r = step(block, _mm512_maskz_loadu_epi8(valid, p + block), valid);
  }
  // Fields under 4 bytes long, or a first field longer than a block.
  if (r == kScalar) return clean_fields_indexed(p, n, fields, max_fields, index, gen, tables);
  index_fields([&tags](std::size_t i) noexcept { return tags[i]; }, count, index, gen);
  // Not clean: the general loop goes on after the last SOH of the blocks done.
  if (r == kNotClean) return CleanRun{count, static_cast<std::size_t>(last_soh + 1u), false};
  return CleanRun{count, n, true};
}
HFT_AVX512_WARNINGS_ON
#endif

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
                                        std::size_t eq_at, Field* fields, std::uint64_t* index,
                                        std::uint64_t gen, std::size_t count, std::size_t max_fields,
                                        DataState& data, const TagTables& tables) noexcept {
  if (eq_at >= s) return {ParseStatus::kMissingDelimiter, s};  // no '=' before the SOH
  if (count == max_fields) return {ParseStatus::kTooManyFields, s};
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
    case FrameError::kNone:
      return "none";
    case FrameError::kNoBeginString:
      return "no 8=FIX BeginString at the start";
    case FrameError::kBadBodyLength:
      return "second field is not 9=<digits>";
    case FrameError::kBodyLengthTooLarge:
      return "BodyLength above the limit";
    case FrameError::kNoCheckSum:
      return "no 10= CheckSum at the end of the declared body";
    case FrameError::kBadCheckSum:
      return "CheckSum is not three digits or does not match";
  }
  return "unknown";
}

FrameResult frame(std::string_view buffer, const FrameOptions& options) noexcept {
  const char* p = buffer.data();
  const std::size_t n = buffer.size();
  // The common case first: "8=FIX...^9=<1-8 digits>^" within the first 32
  // bytes, and "^10=ddd^" exactly where BodyLength says. Any doubt goes to
  // the general rules below, which give the same answer for such a message.
  if (n >= 32) {
    std::uint64_t head;
    std::memcpy(&head, p, 8);
    constexpr std::uint64_t kBeginKey = 0x5849463d38;  // "8=FIX"
    if ((head & 0xffffffffff) == kBeginKey) {
      const __m128i soh = _mm_set1_epi8(kSoh);
      const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16));
      const std::uint32_t sohs = static_cast<std::uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(lo, soh))) |
                                 static_cast<std::uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(hi, soh))) << 16;
      const std::uint32_t after_begin = sohs & ~std::uint32_t{0x1f};  // the SOH scan starts at byte 5
      const std::size_t i = static_cast<std::size_t>(std::countr_zero(after_begin));
      const std::uint32_t after_nine = i < 31 ? after_begin & (~std::uint32_t{0} << (i + 1)) : 0;
      const std::size_t j = static_cast<std::size_t>(std::countr_zero(after_nine));  // 32: none
      if (i < 2 + kMaxBeginValue + 1 && j < 32 && j - (i + 4) < 8 && p[i + 1] == '9' && p[i + 2] == '=') {
        std::size_t body_length = 0;
        bool digits = true;
        for (std::size_t k = i + 3; k < j; ++k) {
          const unsigned d = static_cast<unsigned char>(p[k] - '0');
          digits &= d <= 9;
          body_length = body_length * 10 + d;
        }
        const std::size_t body_start = j + 1;
        if (digits && body_length <= options.max_body_length && body_length <= n - body_start &&
            n - body_start - body_length >= 7) {
          const std::size_t t = body_start + body_length - 1;  // the SOH before "10="
          std::uint64_t tail;
          std::memcpy(&tail, p + t, 8);
          constexpr std::uint64_t kShape = 0x010000003d303101;  // "^10=???^"
          constexpr std::uint64_t kShapeMask = 0xff000000ffffffff;
          const unsigned d0 = static_cast<unsigned>((tail >> 32) & 0xff) - '0';
          const unsigned d1 = static_cast<unsigned>((tail >> 40) & 0xff) - '0';
          const unsigned d2 = static_cast<unsigned>((tail >> 48) & 0xff) - '0';
          if ((tail & kShapeMask) == kShape && d0 <= 9 && d1 <= 9 && d2 <= 9) {
            const std::size_t size = t + 8;
            if (options.verify_checksum && (byte_sum(p, t + 1) & 0xffu) != d0 * 100 + d1 * 10 + d2) {
              return garbled(size, FrameError::kBadCheckSum);
            }
            return {FrameStatus::kComplete, FrameError::kNone, size};
          }
        }
      }
    }
  }

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
                              static_cast<unsigned>(p[v + 1] - '0') * 10 +
                              static_cast<unsigned>(p[v + 2] - '0');
    if ((byte_sum(p, t + 1) & 0xffu) != declared) return garbled(size, FrameError::kBadCheckSum);
  }
  return {FrameStatus::kComplete, FrameError::kNone, size};
}

// ==================================================================== parse

std::string_view to_string(ParseStatus status) noexcept {
  switch (status) {
    case ParseStatus::kOk:
      return "ok";
    case ParseStatus::kTooManyFields:
      return "too many fields";
    case ParseStatus::kMissingDelimiter:
      return "field without '=' or not ending in SOH";
    case ParseStatus::kBadTag:
      return "tag is not a number";
    case ParseStatus::kBadDataLength:
      return "bad length for a data field";
    case ParseStatus::kEmpty:
      return "empty message";
  }
  return "unknown";
}

MessageView::MessageView(std::size_t max_fields)
    : tables_(&tag_tables()),
      max_fields_(std::clamp<std::size_t>(max_fields, 1, kMaxFieldsLimit)),
      storage_(max_fields_),
      fields_(storage_.data()),
      index_storage_(kIndexedTags),
      index_(index_storage_.data()) {}

ParseStatus MessageView::parse(std::string_view text) noexcept {
  text_ = text;
  count_ = 0;
  if (++generation_ == 0) {
    for (std::uint64_t& slot : index_storage_) slot = 0;
    generation_ = 1;
  }
  const char* const p = text.data();
  const std::size_t n = text.size();
  if (n == 0) return ParseStatus::kEmpty;
  if (n > std::numeric_limits<std::uint32_t>::max()) return ParseStatus::kTooManyFields;

#if HFT_PARSE_VBMI2
  const CleanRun run = tables_->length_hash_mul != 0
                           ? clean_fields_vbmi2(p, n, fields_, max_fields_, index_, generation_, *tables_)
                           : clean_fields_indexed(p, n, fields_, max_fields_, index_, generation_, *tables_);
#else
  const CleanRun run = clean_fields_indexed(p, n, fields_, max_fields_, index_, generation_, *tables_);
#endif
  if (run.done) [[likely]] {
    count_ = run.count;
    return ParseStatus::kOk;
  }
  // The fields read so far stand (and are indexed): the general loop goes on
  // from the first one that is not clean.
  return parse_general(p, n, run.resume, run.count);
}

// Every text the clean path leaves: decides each rule of parse().
[[gnu::noinline]] ParseStatus MessageView::parse_general(const char* p, std::size_t n, std::size_t start,
                                                         std::size_t start_count) noexcept {
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
  const std::size_t max_fields = max_fields_;
  Field* const fields = fields_;
  std::size_t count = start_count;
  DataState data;  // the clean path stops before a length field, never after one
  // The first field always takes the slow path: after it, a fast-path tag
  // has at least 3 bytes before it, which tag4() reads.
  bool pending = true;
  std::size_t pos = start;  // start of the current field
  std::size_t block = start & ~std::size_t{63};
  std::size_t eq_at = block, nd_at = block;  // looked for again in that block
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
    // Near max_fields every field is counted by the slow path.
    const bool careful = count + 64 > max_fields;
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
          fields[count] = Field{static_cast<std::int32_t>(tag), static_cast<std::uint32_t>(v),
                                static_cast<std::uint32_t>(s - v)};
          std::uint64_t& slot = index_[tag];
          if (static_cast<std::uint32_t>(slot) != gen) slot = gen | (std::uint64_t{count} << 32);
          ++count;
          pos = s + 1;
        }
      }
      if (!fast) {
        const SlowResult r =
            slow_field(p, n, pos, s, eq_at, fields, index_, gen, count, max_fields, data, tables);
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
  for (; pending_zeros > 0 && scale < kMaxDigits && (mantissa == 0 || significant < kMaxDigits);
       --pending_zeros) {
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
  if (!digits2(s, y_hi) || !digits2(s + 2, y_lo) || !digits2(s + 4, mo) || !digits2(s + 6, d) ||
      s[8] != '-' || !digits2(s + 9, h) || s[11] != ':' || !digits2(s + 12, mi) || s[14] != ':' ||
      !digits2(s + 15, sec)) {
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
  std::int64_t seconds =
      days_from_civil(y, mo, d) * 86400 + std::int64_t{h} * 3600 + std::int64_t{mi} * 60 + sec;
  if (seconds < 0 && frac_ns > 0) {
    // Borrow a second so that the instants just after INT64_MIN ns do not
    // overflow on the way.
    seconds += 1;
    frac_ns -= 1'000'000'000;
  }
  std::int64_t ns = 0;
  if (__builtin_mul_overflow(seconds, std::int64_t{1'000'000'000}, &ns) ||
      __builtin_add_overflow(ns, frac_ns, &ns)) {
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
