#include "hft/lab/raw_series.hpp"

#include <array>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <system_error>

namespace hft::lab {

static_assert(std::endian::native == std::endian::little, "HFTRAW is little-endian; add byte swapping");

namespace {

constexpr std::array<std::uint32_t, 256> make_crc_table() {
  std::array<std::uint32_t, 256> t{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1U) != 0 ? 0xEDB88320U ^ (c >> 1) : c >> 1;
    t[i] = c;
  }
  return t;
}
constexpr std::array<std::uint32_t, 256> kCrcTable = make_crc_table();

std::string errno_text() { return std::strerror(errno); }

struct FileCloser {
  void operator()(std::FILE* f) const noexcept {
    if (f != nullptr) std::fclose(f);
  }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

std::size_t padded(std::size_t n) { return (n + 7) / 8 * 8; }

}  // namespace

std::uint32_t crc32(std::span<const std::uint8_t> bytes, std::uint32_t crc) noexcept {
  crc = ~crc;
  for (const std::uint8_t b : bytes) crc = kCrcTable[(crc ^ b) & 0xFFU] ^ (crc >> 8);
  return ~crc;
}

Expected<void> write_binary(const std::filesystem::path& path, const Series& series) {
  const bool has_time = !series.time.empty();
  if (has_time && series.time.size() != series.values.size()) {
    return Error{path.string() + ": series '" + series.name + "' has " + std::to_string(series.time.size()) +
                 " time entries for " + std::to_string(series.values.size()) + " values"};
  }
  const std::size_t name_pad = padded(series.name.size()) - series.name.size();
  const auto as_bytes = [](const void* p, std::size_t n) {
    return std::span<const std::uint8_t>(static_cast<const std::uint8_t*>(p), n);
  };
  const std::array<std::uint8_t, 8> zeros{};

  std::uint32_t crc = 0;
  crc = crc32(as_bytes(series.name.data(), series.name.size()), crc);
  crc = crc32(std::span(zeros.data(), name_pad), crc);
  crc = crc32(as_bytes(series.values.data(), series.values.size() * 8), crc);
  if (has_time) crc = crc32(as_bytes(series.time.data(), series.time.size() * 8), crc);

  RawHeader h{};
  std::memcpy(h.magic, kRawMagic, sizeof(h.magic));
  h.version = kRawVersion;
  h.header_size = sizeof(RawHeader);
  h.unit = static_cast<std::uint8_t>(series.unit);
  h.flags = has_time ? 1 : 0;
  h.count = series.values.size();
  h.ticks_per_second = series.ticks_per_second;
  h.name_length = static_cast<std::uint32_t>(series.name.size());
  h.crc32 = crc;

  File f(std::fopen(path.c_str(), "wb"));
  if (!f) return Error{path.string() + ": cannot create (" + errno_text() + ")"};
  bool ok = std::fwrite(&h, sizeof(h), 1, f.get()) == 1;
  ok = ok && std::fwrite(series.name.data(), 1, series.name.size(), f.get()) == series.name.size();
  ok = ok && std::fwrite(zeros.data(), 1, name_pad, f.get()) == name_pad;
  ok = ok && std::fwrite(series.values.data(), 8, series.values.size(), f.get()) == series.values.size();
  if (has_time) ok = ok && std::fwrite(series.time.data(), 8, series.time.size(), f.get()) == series.time.size();
  if (!ok) return Error{path.string() + ": write failed (" + errno_text() + ")"};
  if (std::fclose(f.release()) != 0) return Error{path.string() + ": close failed (" + errno_text() + ")"};
  return {};
}

Expected<Series> read_binary(const std::filesystem::path& path) {
  const std::string where = path.string() + ": ";
  File f(std::fopen(path.c_str(), "rb"));
  if (!f) return Error{where + "cannot open (" + errno_text() + ")"};
  std::error_code ec;
  const std::uintmax_t file_size = std::filesystem::file_size(path, ec);
  if (ec) return Error{where + "cannot stat (" + ec.message() + ")"};

  RawHeader h{};
  if (file_size < sizeof(h) || std::fread(&h, sizeof(h), 1, f.get()) != 1) {
    return Error{where + "shorter than the 64-byte HFTRAW header"};
  }
  if (std::memcmp(h.magic, kRawMagic, sizeof(h.magic)) != 0) return Error{where + "not an HFTRAW file (bad magic)"};
  if (h.version != kRawVersion) {
    return Error{where + "HFTRAW version " + std::to_string(h.version) + " is not supported (expected " +
                 std::to_string(kRawVersion) + ")"};
  }
  if (h.header_size != sizeof(RawHeader)) return Error{where + "unexpected header_size " + std::to_string(h.header_size)};
  Series s;
  if (h.unit > static_cast<std::uint8_t>(Unit::kTscTicks)) return Error{where + "unknown unit " + std::to_string(h.unit)};
  s.unit = static_cast<Unit>(h.unit);
  s.ticks_per_second = h.ticks_per_second;
  if (!(h.ticks_per_second > 0)) return Error{where + "ticks_per_second is not positive"};
  const bool has_time = (h.flags & 1U) != 0;
  const std::uintmax_t columns = has_time ? 2 : 1;
  const std::uintmax_t expected = sizeof(h) + padded(h.name_length) + columns * 8 * h.count;
  if (h.count > (file_size / 8) || expected != file_size) {
    return Error{where + "size " + std::to_string(file_size) + " bytes does not match the header (expected " +
                 std::to_string(expected) + " for " + std::to_string(h.count) + " samples): truncated or corrupt"};
  }
  std::string name(padded(h.name_length), '\0');
  if (std::fread(name.data(), 1, name.size(), f.get()) != name.size()) return Error{where + "cannot read the name"};
  s.values.resize(h.count);
  if (std::fread(s.values.data(), 8, h.count, f.get()) != h.count) return Error{where + "cannot read the values"};
  if (has_time) {
    s.time.resize(h.count);
    if (std::fread(s.time.data(), 8, h.count, f.get()) != h.count) return Error{where + "cannot read the time column"};
  }
  std::uint32_t crc = crc32(std::span(reinterpret_cast<const std::uint8_t*>(name.data()), name.size()));
  crc = crc32(std::span(reinterpret_cast<const std::uint8_t*>(s.values.data()), s.values.size() * 8), crc);
  if (has_time) crc = crc32(std::span(reinterpret_cast<const std::uint8_t*>(s.time.data()), s.time.size() * 8), crc);
  if (crc != h.crc32) return Error{where + "CRC mismatch: the samples are corrupt"};
  name.resize(h.name_length);
  s.name = std::move(name);
  return s;
}

Expected<void> write_csv(const std::filesystem::path& path, const Series& series) {
  const bool has_time = !series.time.empty();
  File f(std::fopen(path.c_str(), "wb"));
  if (!f) return Error{path.string() + ": cannot create (" + errno_text() + ")"};
  std::fprintf(f.get(), "# hft-lab raw series, csv v1\n# name=%s\n# unit=%s\n# ticks_per_second=%.17g\n# count=%zu\n",
               series.name.c_str(), std::string(to_string(series.unit)).c_str(), series.ticks_per_second,
               series.values.size());
  std::fputs(has_time ? "index,value,time\n" : "index,value\n", f.get());
  // to_chars into a local buffer: printf per row would dominate for 1e6 rows.
  std::string buf;
  buf.reserve(1 << 16);
  char num[24];
  auto put = [&](std::int64_t v) {
    const auto r = std::to_chars(num, num + sizeof(num), v);
    buf.append(num, r.ptr);
  };
  bool ok = true;
  for (std::size_t k = 0; k < series.values.size() && ok; ++k) {
    put(static_cast<std::int64_t>(k));
    buf.push_back(',');
    put(series.values[k]);
    if (has_time) {
      buf.push_back(',');
      put(series.time[k]);
    }
    buf.push_back('\n');
    if (buf.size() > (1 << 16) - 80) {
      ok = std::fwrite(buf.data(), 1, buf.size(), f.get()) == buf.size();
      buf.clear();
    }
  }
  ok = ok && std::fwrite(buf.data(), 1, buf.size(), f.get()) == buf.size();
  if (!ok) return Error{path.string() + ": write failed (" + errno_text() + ")"};
  if (std::fclose(f.release()) != 0) return Error{path.string() + ": close failed (" + errno_text() + ")"};
  return {};
}

Expected<Series> read_csv(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return Error{path.string() + ": cannot open"};
  Series s;
  s.ticks_per_second = 0;
  std::size_t declared = 0;
  bool have_count = false;
  bool has_time = false;
  bool header_seen = false;
  std::string line;
  std::size_t line_no = 0;
  auto fail = [&](const std::string& what) { return Error{path.string() + ":" + std::to_string(line_no) + ": " + what}; };
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty()) continue;
    if (line[0] == '#') {
      const auto eq = line.find('=');
      if (eq == std::string::npos) continue;
      std::string key = line.substr(1, eq - 1);
      while (!key.empty() && key.front() == ' ') key.erase(key.begin());
      const std::string value = line.substr(eq + 1);
      if (key == "name") {
        s.name = value;
      } else if (key == "unit") {
        if (!parse_unit(value, s.unit)) return fail("unknown unit '" + value + "'");
      } else if (key == "ticks_per_second") {
        s.ticks_per_second = std::strtod(value.c_str(), nullptr);
      } else if (key == "count") {
        declared = std::strtoull(value.c_str(), nullptr, 10);
        have_count = true;
        s.values.reserve(declared);
      }
      continue;
    }
    if (!header_seen) {
      if (line == "index,value,time") {
        has_time = true;
      } else if (line != "index,value") {
        return fail("expected header 'index,value[,time]', got '" + line + "'");
      }
      header_seen = true;
      if (has_time) s.time.reserve(declared);
      continue;
    }
    const char* p = line.data();
    const char* end = p + line.size();
    std::int64_t index = 0;
    std::int64_t value = 0;
    std::int64_t time = 0;
    auto r = std::from_chars(p, end, index);
    if (r.ec != std::errc{} || r.ptr == end || *r.ptr != ',') return fail("bad index");
    r = std::from_chars(r.ptr + 1, end, value);
    if (r.ec != std::errc{}) return fail("bad value");
    if (has_time) {
      if (r.ptr == end || *r.ptr != ',') return fail("missing time");
      r = std::from_chars(r.ptr + 1, end, time);
      if (r.ec != std::errc{}) return fail("bad time");
    }
    if (r.ptr != end) return fail("trailing characters");
    if (static_cast<std::size_t>(index) != s.values.size()) {
      return fail("index " + std::to_string(index) + " out of order (expected " + std::to_string(s.values.size()) + ")");
    }
    s.values.push_back(value);
    if (has_time) s.time.push_back(time);
  }
  if (!header_seen) return fail("no header row");
  if (!(s.ticks_per_second > 0)) return fail("missing or bad '# ticks_per_second='");
  if (have_count && declared != s.values.size()) {
    return fail("declares count=" + std::to_string(declared) + " but has " + std::to_string(s.values.size()) +
                " rows: truncated");
  }
  return s;
}

}  // namespace hft::lab
