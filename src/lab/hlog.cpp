#include "hft/lab/hlog.hpp"

#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "text.hpp"

namespace hft::lab {

namespace {

constexpr std::uint32_t kV2EncodingCookie = 0x1c849303U | 0x10U;
constexpr std::uint32_t kV2CompressedCookie = 0x1c849304U | 0x10U;
constexpr std::size_t kEncodingHeader = 40;
constexpr std::size_t kCompressedHeader = 8;

void put_be(std::vector<std::uint8_t>& out, std::uint64_t v, int bytes) {
  for (int k = bytes - 1; k >= 0; --k) out.push_back(static_cast<std::uint8_t>(v >> (8 * k)));
}

std::uint64_t get_be(const std::uint8_t* p, int bytes) {
  std::uint64_t v = 0;
  for (int k = 0; k < bytes; ++k) v = (v << 8) | p[k];
  return v;
}

// ZigZag LEB128 as HdrHistogram writes it: 7 bits a byte, low first, at most
// 9 bytes (the ninth carries 8 bits).
void put_zigzag(std::vector<std::uint8_t>& out, std::int64_t signed_value) {
  std::uint64_t v = (static_cast<std::uint64_t>(signed_value) << 1) ^ static_cast<std::uint64_t>(signed_value >> 63);
  for (int k = 0; k < 8; ++k) {
    if ((v >> 7) == 0) {
      out.push_back(static_cast<std::uint8_t>(v));
      return;
    }
    out.push_back(static_cast<std::uint8_t>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<std::uint8_t>(v));
}

/// Reads one value at data[pos]; false if it runs past `end`.
bool get_zigzag(const std::uint8_t* data, std::size_t end, std::size_t& pos, std::int64_t& out) {
  std::uint64_t v = 0;
  for (int k = 0; k < 9; ++k) {
    if (pos >= end) return false;
    const std::uint64_t b = data[pos++];
    if (k == 8) {
      v |= b << 56;
      break;
    }
    v |= (b & 0x7F) << (7 * k);
    if ((b & 0x80) == 0) break;
  }
  out = static_cast<std::int64_t>((v >> 1) ^ (~(v & 1) + 1));
  return true;
}

constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string base64(const std::vector<std::uint8_t>& in) {
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  for (std::size_t k = 0; k < in.size(); k += 3) {
    const std::uint32_t n = (static_cast<std::uint32_t>(in[k]) << 16) |
                            (k + 1 < in.size() ? static_cast<std::uint32_t>(in[k + 1]) << 8 : 0U) |
                            (k + 2 < in.size() ? static_cast<std::uint32_t>(in[k + 2]) : 0U);
    out.push_back(kB64[(n >> 18) & 63]);
    out.push_back(kB64[(n >> 12) & 63]);
    out.push_back(k + 1 < in.size() ? kB64[(n >> 6) & 63] : '=');
    out.push_back(k + 2 < in.size() ? kB64[n & 63] : '=');
  }
  return out;
}

Expected<std::vector<std::uint8_t>> unbase64(std::string_view in) {
  if (in.size() % 4 != 0) return Error{"base64 length " + std::to_string(in.size()) + " is not a multiple of 4"};
  std::vector<std::uint8_t> out;
  out.reserve(in.size() / 4 * 3);
  for (std::size_t k = 0; k < in.size(); k += 4) {
    std::uint32_t n = 0;
    int pad = 0;
    for (std::size_t j = 0; j < 4; ++j) {
      const char c = in[k + j];
      std::uint32_t d = 0;
      if (c == '=' && k + 4 == in.size() && j >= 2) {
        ++pad;
      } else if (pad > 0) {
        return Error{"base64: data after padding"};
      } else if (const char* p = std::strchr(kB64, c); p != nullptr && c != '\0') {
        d = static_cast<std::uint32_t>(p - kB64);
      } else {
        return Error{std::string("base64: bad character '") + c + "'"};
      }
      n = (n << 6) | d;
    }
    out.push_back(static_cast<std::uint8_t>(n >> 16));
    if (pad < 2) out.push_back(static_cast<std::uint8_t>(n >> 8));
    if (pad < 1) out.push_back(static_cast<std::uint8_t>(n));
  }
  return out;
}

std::string fixed3(double v) { return detail::fixed(v, 3); }

}  // namespace

Expected<HdrLayout> HdrLayout::make(std::int64_t lowest, std::int64_t highest, int significant_digits) {
  if (lowest < 1) return Error{"HdrHistogram: lowest discernible value must be at least 1"};
  if (significant_digits < 1 || significant_digits > 5) return Error{"HdrHistogram: significant digits must be 1..5"};
  if (highest < 2 * lowest) return Error{"HdrHistogram: highest trackable value must be at least twice the lowest"};
  HdrLayout l;
  l.lowest = lowest;
  l.highest = highest;
  l.significant_digits = significant_digits;
  std::int64_t single_unit = 2;
  for (int k = 0; k < significant_digits; ++k) single_unit *= 10;
  int magnitude = 0;
  while ((std::int64_t{1} << magnitude) < single_unit) ++magnitude;
  l.sub_bucket_half_count_magnitude = std::max(magnitude, 1) - 1;
  l.unit_magnitude = 63 - std::countl_zero(static_cast<std::uint64_t>(lowest));
  l.sub_bucket_count = std::int64_t{1} << (l.sub_bucket_half_count_magnitude + 1);
  l.sub_bucket_half_count = l.sub_bucket_count / 2;
  l.sub_bucket_mask = (l.sub_bucket_count - 1) << l.unit_magnitude;
  std::int64_t smallest_untrackable = l.sub_bucket_count << l.unit_magnitude;
  int buckets = 1;
  while (smallest_untrackable <= highest) {
    if (smallest_untrackable > INT64_MAX / 2) {
      ++buckets;
      break;
    }
    smallest_untrackable <<= 1;
    ++buckets;
  }
  l.bucket_count = buckets;
  l.counts_len = static_cast<std::int64_t>(buckets + 1) * (l.sub_bucket_count / 2);
  return l;
}

std::int64_t HdrLayout::index_of(std::int64_t value) const noexcept {
  const int pow2ceiling = 64 - std::countl_zero(static_cast<std::uint64_t>(value | sub_bucket_mask));
  const int bucket = pow2ceiling - unit_magnitude - (sub_bucket_half_count_magnitude + 1);
  const std::int64_t sub_bucket = value >> (bucket + unit_magnitude);
  return (static_cast<std::int64_t>(bucket + 1) << sub_bucket_half_count_magnitude) + (sub_bucket - sub_bucket_half_count);
}

std::int64_t HdrLayout::value_at(std::int64_t index) const noexcept {
  std::int64_t bucket = (index >> sub_bucket_half_count_magnitude) - 1;
  std::int64_t sub_bucket = (index & (sub_bucket_half_count - 1)) + sub_bucket_half_count;
  if (bucket < 0) {
    sub_bucket -= sub_bucket_half_count;
    bucket = 0;
  }
  return sub_bucket << (bucket + unit_magnitude);
}

std::uint64_t HlogInterval::total() const noexcept {
  std::uint64_t n = 0;
  for (const std::int64_t c : counts) n += static_cast<std::uint64_t>(c);
  return n;
}

Expected<std::vector<HlogInterval>> hlog_intervals(const Series& series, double untimed_length_s,
                                                   std::uint64_t* negative) {
  const double npu = series.ns_per_unit();
  std::vector<std::int64_t> ns(series.values.size());
  std::int64_t max_ns = 0;
  std::uint64_t negatives = 0;
  for (std::size_t k = 0; k < ns.size(); ++k) {
    // Capped where HdrHistogram's bucket arithmetic still fits an int64.
    const double v = std::min(std::round(static_cast<double>(series.values[k]) * npu), 0x1p61);
    ns[k] = v < 0 ? 0 : static_cast<std::int64_t>(v);
    negatives += v < 0 ? 1 : 0;
    max_ns = std::max(max_ns, ns[k]);
  }
  if (negative != nullptr) *negative = negatives;
  auto layout = HdrLayout::make(1, std::max(kHlogHighestNs, max_ns), kHlogSignificantDigits);
  if (!layout) return layout.error();

  const bool timed = !series.time.empty() && series.time.size() == series.values.size();
  std::vector<std::size_t> slot(ns.size(), 0);
  double end_s = 0;
  std::size_t slots = ns.empty() ? 0 : 1;
  if (timed) {
    for (std::size_t k = 0; k < ns.size(); ++k) {
      const double t_s = std::max(0.0, static_cast<double>(series.time[k]) * npu * 1e-9);
      slot[k] = static_cast<std::size_t>(std::floor(t_s));
      slots = std::max(slots, slot[k] + 1);
      end_s = std::max(end_s, t_s + static_cast<double>(ns[k]) * 1e-9);
    }
  }
  std::vector<HlogInterval> out(slots);
  std::vector<std::int64_t> max_of(slots, -1);
  for (std::size_t s = 0; s < slots; ++s) {
    out[s].highest = layout->highest;
    out[s].significant_digits = layout->significant_digits;
    out[s].start_s = static_cast<double>(s);
    out[s].length_s = timed ? std::clamp(end_s - static_cast<double>(s), 0.001, 1.0) : untimed_length_s;
  }
  for (std::size_t k = 0; k < ns.size(); ++k) {
    HlogInterval& iv = out[slot[k]];
    const auto index = static_cast<std::size_t>(layout->index_of(ns[k]));
    if (iv.counts.size() <= index) iv.counts.resize(index + 1, 0);
    ++iv.counts[index];
    max_of[slot[k]] = std::max(max_of[slot[k]], ns[k]);
  }
  for (std::size_t s = 0; s < slots; ++s) out[s].max_ms = max_of[s] < 0 ? 0.0 : static_cast<double>(max_of[s]) / 1e6;
  return out;
}

Expected<std::string> encode_histogram(const HlogInterval& interval) {
  std::vector<std::uint8_t> payload;
  for (std::size_t k = 0; k < interval.counts.size();) {
    if (interval.counts[k] != 0) {
      put_zigzag(payload, interval.counts[k++]);
      continue;
    }
    std::int64_t zeros = 0;
    while (k < interval.counts.size() && interval.counts[k] == 0) {
      ++zeros;
      ++k;
    }
    put_zigzag(payload, -zeros);
  }
  std::vector<std::uint8_t> encoded;
  encoded.reserve(kEncodingHeader + payload.size());
  put_be(encoded, kV2EncodingCookie, 4);
  put_be(encoded, payload.size(), 4);
  put_be(encoded, 0, 4);  // normalizing index offset
  put_be(encoded, static_cast<std::uint64_t>(interval.significant_digits), 4);
  put_be(encoded, 1, 8);  // lowest discernible value
  put_be(encoded, static_cast<std::uint64_t>(interval.highest), 8);
  put_be(encoded, std::bit_cast<std::uint64_t>(1.0), 8);
  encoded.insert(encoded.end(), payload.begin(), payload.end());

  uLongf zlen = compressBound(static_cast<uLong>(encoded.size()));
  std::vector<std::uint8_t> out(kCompressedHeader + zlen);
  if (compress2(out.data() + kCompressedHeader, &zlen, encoded.data(), static_cast<uLong>(encoded.size()),
                Z_DEFAULT_COMPRESSION) != Z_OK) {
    return Error{"HdrHistogram encoding: zlib compress failed"};
  }
  out.resize(kCompressedHeader + zlen);
  std::vector<std::uint8_t> head;
  put_be(head, kV2CompressedCookie, 4);
  put_be(head, zlen, 4);
  std::copy(head.begin(), head.end(), out.begin());
  return base64(out);
}

Expected<void> decode_histogram(std::string_view text, HlogInterval& out) {
  auto bytes = unbase64(text);
  if (!bytes) return bytes.error();
  const std::vector<std::uint8_t>& b = *bytes;
  if (b.size() < kCompressedHeader) return Error{"compressed histogram shorter than its 8-byte header"};
  if (get_be(b.data(), 4) != kV2CompressedCookie) return Error{"not a V2 compressed histogram (cookie)"};
  const std::uint64_t zlen = get_be(b.data() + 4, 4);
  if (zlen > b.size() - kCompressedHeader) return Error{"compressed length runs past the data"};
  std::vector<std::uint8_t> enc(std::max<std::size_t>(256, zlen * 4));
  for (;;) {
    uLongf n = static_cast<uLongf>(enc.size());
    const int rc = uncompress(enc.data(), &n, b.data() + kCompressedHeader, static_cast<uLong>(zlen));
    if (rc == Z_OK) {
      enc.resize(n);
      break;
    }
    if (rc != Z_BUF_ERROR || enc.size() > (1U << 30)) return Error{"zlib: the histogram does not inflate"};
    enc.resize(enc.size() * 2);
  }
  if (enc.size() < kEncodingHeader || get_be(enc.data(), 4) != kV2EncodingCookie) {
    return Error{"not a V2 histogram encoding (cookie)"};
  }
  const std::uint64_t payload = get_be(enc.data() + 4, 4);
  if (payload != enc.size() - kEncodingHeader) return Error{"payload length does not match the data"};
  if (get_be(enc.data() + 8, 4) != 0) return Error{"normalizing index offset is not 0 (not supported)"};
  const auto digits = static_cast<int>(get_be(enc.data() + 12, 4));
  const auto lowest = static_cast<std::int64_t>(get_be(enc.data() + 16, 8));
  const auto highest = static_cast<std::int64_t>(get_be(enc.data() + 24, 8));
  auto layout = HdrLayout::make(lowest, highest, digits);
  if (!layout) return layout.error();
  if (lowest != 1) return Error{"lowest discernible value " + std::to_string(lowest) + " (expected 1)"};
  out.highest = highest;
  out.significant_digits = digits;
  out.counts.clear();
  std::size_t pos = kEncodingHeader;
  while (pos < enc.size()) {
    std::int64_t v = 0;
    if (!get_zigzag(enc.data(), enc.size(), pos, v)) return Error{"truncated count"};
    if (v < 0) {
      if (v == INT64_MIN || static_cast<std::int64_t>(out.counts.size()) - v > layout->counts_len) {
        return Error{"zero run past the histogram"};
      }
      out.counts.resize(out.counts.size() + static_cast<std::size_t>(-v), 0);
    } else {
      if (static_cast<std::int64_t>(out.counts.size()) >= layout->counts_len) return Error{"counts past the histogram"};
      out.counts.push_back(v);
    }
  }
  while (!out.counts.empty() && out.counts.back() == 0) out.counts.pop_back();
  return {};
}

Expected<void> write_hlog(const std::filesystem::path& path, const Series& series, double start_epoch_s,
                          double untimed_length_s) {
  std::uint64_t negative = 0;
  auto intervals = hlog_intervals(series, untimed_length_s, &negative);
  if (!intervals) return Error{path.string() + ": " + intervals.error().message};
  const auto secs = static_cast<std::time_t>(start_epoch_s);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char date[64];
  std::strftime(date, sizeof(date), "%a %b %d %H:%M:%S UTC %Y", &tm);
  std::string text = "#[Histogram log format version 1.3]\n";
  text += "#[StartTime: " + fixed3(start_epoch_s) + " (seconds since epoch), " + date + "]\n";
  text += "#[BaseTime: " + fixed3(start_epoch_s) + " (seconds since epoch)]\n";
  text += "#[hft-lab series " + series.name + ", values in nanoseconds, " +
          (series.time.empty() ? std::string("one interval (no time column)") : std::string("1 s intervals")) +
          " of the measured phase, " + std::to_string(kHlogSignificantDigits) + " significant digits]\n";
  if (negative > 0) text += "#[hft-lab: " + std::to_string(negative) + " negative samples recorded as 0]\n";
  text += "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n";
  for (const HlogInterval& iv : *intervals) {
    auto enc = encode_histogram(iv);
    if (!enc) return Error{path.string() + ": " + enc.error().message};
    text += fixed3(iv.start_s) + "," + fixed3(iv.length_s) + "," + fixed3(iv.max_ms) + "," + *enc + "\n";
  }
  return detail::write_text_file(path, text);
}

Expected<Hlog> read_hlog(const std::filesystem::path& path) {
  detail::LineReader in(path);
  if (!in.is_open()) return Error{path.string() + ": cannot open"};
  Hlog log;
  std::string line;
  const auto fail = [&](const std::string& what) { return in.error(what); };
  while (in.next(line)) {
    if (line.empty() || line[0] == '"') continue;
    if (line[0] == '#') {
      double v = 0;
      if (std::sscanf(line.c_str(), "#[StartTime: %lf", &v) == 1) log.start_time_s = v;
      if (std::sscanf(line.c_str(), "#[BaseTime: %lf", &v) == 1) log.base_time_s = v;
      continue;
    }
    if (line.rfind("Tag=", 0) == 0) return fail("tagged intervals are not supported");
    HlogInterval iv;
    std::size_t fields[3] = {};
    std::size_t at = 0;
    for (std::size_t& f : fields) {
      const auto comma = line.find(',', at);
      if (comma == std::string::npos) return fail("expected StartTimestamp,Interval_Length,Interval_Max,histogram");
      f = comma;
      at = comma + 1;
    }
    char* end = nullptr;
    iv.start_s = std::strtod(line.c_str(), &end);
    if (end != line.c_str() + fields[0]) return fail("bad StartTimestamp");
    iv.length_s = std::strtod(line.c_str() + fields[0] + 1, &end);
    if (end != line.c_str() + fields[1]) return fail("bad Interval_Length");
    iv.max_ms = std::strtod(line.c_str() + fields[1] + 1, &end);
    if (end != line.c_str() + fields[2]) return fail("bad Interval_Max");
    if (auto e = decode_histogram(std::string_view(line).substr(fields[2] + 1), iv); !e) return fail(e.error().message);
    log.intervals.push_back(std::move(iv));
  }
  return log;
}

}  // namespace hft::lab
