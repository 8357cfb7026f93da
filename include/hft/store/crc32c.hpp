// CRC-32C (Castagnoli): the checksum of every journal record, segment header
// and sequence-number slot.
//
// Standard parameters: reflected polynomial 0x82F63B78, initial value
// 0xFFFFFFFF, final XOR 0xFFFFFFFF (crc32c("123456789") == 0xE3069283), so
// any CRC-32C implementation can verify a journal.
//
// With SSE4.2 (and PCLMULQDQ) the hot path runs three independent crc32
// instruction chains over thirds of the buffer and joins them with one
// carry-less multiply each; a record of ~260 bytes then costs about a third
// of a single chain's latency. Without them a slicing-by-8 table is used.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__SSE4_2__)
#include <nmmintrin.h>
#endif
#if defined(__SSE4_2__) && defined(__PCLMUL__)
#include <wmmintrin.h>
#define HFT_CRC32C_CLMUL 1
#endif

namespace hft::store {

namespace detail {

inline constexpr std::uint32_t kCrc32cPoly = 0x82F63B78u;  // reflected Castagnoli

struct Crc32cTables {
  std::uint32_t t[8][256];
};

constexpr Crc32cTables make_crc32c_tables() noexcept {
  Crc32cTables tables{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1u) ? (c >> 1) ^ kCrc32cPoly : c >> 1;
    tables.t[0][i] = c;
  }
  for (std::uint32_t i = 0; i < 256; ++i) {
    for (int s = 1; s < 8; ++s) {
      const std::uint32_t prev = tables.t[s - 1][i];
      tables.t[s][i] = (prev >> 8) ^ tables.t[0][prev & 0xFFu];
    }
  }
  return tables;
}

inline constexpr Crc32cTables kCrc32cTables = make_crc32c_tables();

/// Register update without the pre/post inversion, portable slicing-by-8.
constexpr std::uint32_t crc32c_update_portable(std::uint32_t reg, const unsigned char* p,
                                               std::size_t n) noexcept {
  const auto& t = kCrc32cTables.t;
  while (n >= 8) {
    const std::uint32_t lo = reg ^ (static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
                                    static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24);
    reg = t[7][lo & 0xFF] ^ t[6][(lo >> 8) & 0xFF] ^ t[5][(lo >> 16) & 0xFF] ^ t[4][lo >> 24] ^
          t[3][p[4]] ^ t[2][p[5]] ^ t[1][p[6]] ^ t[0][p[7]];
    p += 8;
    n -= 8;
  }
  while (n-- > 0) reg = (reg >> 8) ^ t[0][(reg ^ *p++) & 0xFFu];
  return reg;
}

#if defined(__SSE4_2__)
/// One crc32 instruction chain over n bytes.
inline std::uint32_t crc32c_update_chain(std::uint32_t reg, const unsigned char* p, std::size_t n) noexcept {
  std::uint64_t r = reg;
  while (n >= 8) {
    std::uint64_t v;
    std::memcpy(&v, p, 8);
    r = _mm_crc32_u64(r, v);
    p += 8;
    n -= 8;
  }
  auto r32 = static_cast<std::uint32_t>(r);
  if (n >= 4) {
    std::uint32_t v;
    std::memcpy(&v, p, 4);
    r32 = _mm_crc32_u32(r32, v);
    p += 4;
    n -= 4;
  }
  if (n >= 2) {
    std::uint16_t v;
    std::memcpy(&v, p, 2);
    r32 = _mm_crc32_u16(r32, v);
    p += 2;
    n -= 2;
  }
  if (n != 0) r32 = _mm_crc32_u8(r32, *p);
  return r32;
}
#endif

#if defined(HFT_CRC32C_CLMUL)
/// Longest stretch (bytes) one shift constant is tabulated for.
inline constexpr std::size_t kShiftTableBytes = 1536;
/// Three-way split is used from this many bytes on (below it one chain wins).
inline constexpr std::size_t kThreeWayMin = 64;
/// Stream length used for buffers longer than kShiftTableBytes.
inline constexpr std::size_t kThreeWayBlock = 512;

/// kShift[n] = x^(8n-33) mod P (reflected), n >= 5: multiplying a register by
/// it with clmul and reducing with crc32 advances it over n zero bytes.
struct Crc32cShiftTable {
  std::uint32_t k[kShiftTableBytes + 1];
};

constexpr Crc32cShiftTable make_crc32c_shift_table() noexcept {
  Crc32cShiftTable table{};
  std::uint32_t p = 0x80000000u >> 7;  // x^7 == x^(8*5-33)
  for (std::size_t n = 5; n <= kShiftTableBytes; ++n) {
    table.k[n] = p;
    for (int i = 0; i < 8; ++i) p = (p & 1u) ? (p >> 1) ^ kCrc32cPoly : p >> 1;
  }
  return table;
}

inline constexpr Crc32cShiftTable kCrc32cShift = make_crc32c_shift_table();

/// reg * x^(8n) mod P for 5 <= n <= kShiftTableBytes.
inline std::uint32_t crc32c_shift(std::uint32_t reg, std::size_t n) noexcept {
  const __m128i a = _mm_cvtsi32_si128(static_cast<int>(reg));
  const __m128i b = _mm_cvtsi32_si128(static_cast<int>(kCrc32cShift.k[n]));
  const __m128i prod = _mm_clmulepi64_si128(a, b, 0x00);
  return static_cast<std::uint32_t>(_mm_crc32_u64(0, static_cast<std::uint64_t>(_mm_cvtsi128_si64(prod))));
}

/// Three chains over [0,l), [l,2l), [2l,n) joined by two shifts. n <= kShiftTableBytes.
inline std::uint32_t crc32c_update_3way(std::uint32_t reg, const unsigned char* p, std::size_t n) noexcept {
  const std::size_t l = (n + 23) / 24 * 8;  // balanced: the third stream is at most l bytes
  const std::size_t lc = n - 2 * l;
  std::uint64_t a = reg, b = 0, c = 0;
  const unsigned char* pa = p;
  const unsigned char* pb = p + l;
  const unsigned char* pc = p + 2 * l;
  std::size_t common = lc < l ? lc : l;
  common &= ~std::size_t{7};
  for (std::size_t i = 0; i < common; i += 8) {
    std::uint64_t va, vb, vc;
    std::memcpy(&va, pa + i, 8);
    std::memcpy(&vb, pb + i, 8);
    std::memcpy(&vc, pc + i, 8);
    a = _mm_crc32_u64(a, va);
    b = _mm_crc32_u64(b, vb);
    c = _mm_crc32_u64(c, vc);
  }
  for (std::size_t i = common; i < l; i += 8) {
    std::uint64_t va, vb;
    std::memcpy(&va, pa + i, 8);
    std::memcpy(&vb, pb + i, 8);
    a = _mm_crc32_u64(a, va);
    b = _mm_crc32_u64(b, vb);
  }
  const auto c32 = crc32c_update_chain(static_cast<std::uint32_t>(c), pc + common, lc - common);
  return crc32c_shift(static_cast<std::uint32_t>(a), l + lc) ^
         crc32c_shift(static_cast<std::uint32_t>(b), lc) ^ c32;
}
#endif

/// Register update (no inversion) with the fastest available method.
inline std::uint32_t crc32c_update(std::uint32_t reg, const void* data, std::size_t n) noexcept {
  const auto* p = static_cast<const unsigned char*>(data);
#if defined(HFT_CRC32C_CLMUL)
  while (n > kShiftTableBytes) {
    reg = crc32c_update_3way(reg, p, 3 * kThreeWayBlock);
    p += 3 * kThreeWayBlock;
    n -= 3 * kThreeWayBlock;
  }
  if (n >= kThreeWayMin) return crc32c_update_3way(reg, p, n);
  return crc32c_update_chain(reg, p, n);
#elif defined(__SSE4_2__)
  return crc32c_update_chain(reg, p, n);
#else
  return crc32c_update_portable(reg, p, n);
#endif
}

}  // namespace detail

/// CRC-32C of `n` bytes at `data`.
[[nodiscard]] inline std::uint32_t crc32c(const void* data, std::size_t n) noexcept {
  return ~detail::crc32c_update(0xFFFFFFFFu, data, n);
}

/// Continues `crc` (a finished CRC-32C of some bytes A) over `n` more bytes
/// B: returns crc32c(A followed by B).
[[nodiscard]] inline std::uint32_t crc32c_extend(std::uint32_t crc, const void* data, std::size_t n) noexcept {
  return ~detail::crc32c_update(~crc, data, n);
}

/// Portable reference (byte tables only), for tests and tools.
[[nodiscard]] inline std::uint32_t crc32c_portable(const void* data, std::size_t n) noexcept {
  return ~detail::crc32c_update_portable(0xFFFFFFFFu, static_cast<const unsigned char*>(data), n);
}

}  // namespace hft::store
