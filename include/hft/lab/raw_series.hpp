// Raw series files: CSV and a compact binary format, each with a reader.
//
// Binary format "HFTRAW", version 1. Little-endian, 8-byte aligned:
//
//   offset size  field
//   ------ ----  ---------------------------------------------------------
//        0    8  magic            "HFTRAW\0\0"
//        8    2  version          1
//       10    2  header_size      64 (bytes before the name)
//       12    1  unit             0 = nanoseconds, 1 = TSC ticks
//       13    1  flags            bit 0: a time column follows the values
//       14    2  reserved         0
//       16    8  count            number of samples (uint64)
//       24    8  ticks_per_second clock frequency of values and time (IEEE double)
//       32    4  name_length      bytes of the series name (uint32)
//       36    4  crc32            CRC-32 (IEEE, zlib) of every byte after the header
//       40   24  reserved         0
//       64    n  name             UTF-8, not terminated, zero-padded to a multiple of 8
//        .  8*c  values           int64 samples, call order
//        .  8*c  time             int64 start offsets (only if flags bit 0)
//
// CSV: '#' comment lines first (format, name, unit, ticks_per_second, count),
// then the header row "index,value" or "index,value,time", then one row per
// sample with the exact integers. Convert to ns with value * 1e9 /
// ticks_per_second.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>

#include "hft/core/expected.hpp"
#include "hft/lab/series.hpp"

namespace hft::lab {

inline constexpr char kRawMagic[8] = {'H', 'F', 'T', 'R', 'A', 'W', '\0', '\0'};
inline constexpr std::uint16_t kRawVersion = 1;

/// The 64-byte binary header, as laid out on disk (see the file comment).
struct RawHeader {
  char magic[8];
  std::uint16_t version;
  std::uint16_t header_size;
  std::uint8_t unit;
  std::uint8_t flags;
  std::uint16_t reserved0;
  std::uint64_t count;
  double ticks_per_second;
  std::uint32_t name_length;
  std::uint32_t crc32;
  std::uint8_t reserved1[24];
};
static_assert(sizeof(RawHeader) == 64, "HFTRAW header is 64 bytes");

/// CRC-32 (IEEE 802.3 polynomial, as zlib's crc32), continuing from `crc`.
[[nodiscard]] std::uint32_t crc32(std::span<const std::uint8_t> bytes, std::uint32_t crc = 0) noexcept;

/// Writes `series` as HFTRAW. Error names the path and the failing step.
[[nodiscard]] Expected<void> write_binary(const std::filesystem::path& path, const Series& series);
/// Reads an HFTRAW file; checks magic, version, sizes and the CRC.
[[nodiscard]] Expected<Series> read_binary(const std::filesystem::path& path);

/// Writes `series` as CSV (see the file comment).
[[nodiscard]] Expected<void> write_csv(const std::filesystem::path& path, const Series& series);
/// Reads a CSV written by write_csv. Errors name the path and line.
[[nodiscard]] Expected<Series> read_csv(const std::filesystem::path& path);

}  // namespace hft::lab
