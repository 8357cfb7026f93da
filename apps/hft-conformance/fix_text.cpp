#include "fix_text.hpp"

#include <charconv>
#include <cstdio>
#include <ctime>

namespace hft::conformance {
namespace {

constexpr std::string_view kTimeOpen = "<TIME";
// A BeginString or BodyLength field longer than this is not a FIX header.
constexpr std::size_t kMaxHeaderFieldBytes = 64;

bool all_digits(std::string_view s) noexcept {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

std::string three_digits(unsigned value) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%03u", value % 256U);
  return buf;
}

}  // namespace

std::string format_utc_seconds(std::chrono::system_clock::time_point tp) {
  const std::time_t t = std::chrono::system_clock::to_time_t(tp);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H:%M:%S", &tm);
  return buf;
}

std::string substitute_time(std::string_view text, std::chrono::system_clock::time_point now) {
  std::string out;
  out.reserve(text.size() + 16);
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t open = text.find(kTimeOpen, pos);
    if (open == std::string_view::npos) break;
    out.append(text.substr(pos, open - pos));
    const std::size_t after = open + kTimeOpen.size();
    const std::size_t close = text.find('>', after);
    bool replaced = false;
    if (close != std::string_view::npos) {
      const std::string_view inner = text.substr(after, close - after);
      if (inner.empty()) {
        out += format_utc_seconds(now);
        replaced = true;
      } else if ((inner[0] == '+' || inner[0] == '-') && all_digits(inner.substr(1))) {
        long long seconds = 0;
        std::from_chars(inner.data() + 1, inner.data() + inner.size(), seconds);
        const auto shifted =
            inner[0] == '+' ? now + std::chrono::seconds(seconds) : now - std::chrono::seconds(seconds);
        out += format_utc_seconds(shifted);
        replaced = true;
      }
    }
    if (replaced) {
      pos = close + 1;
    } else {
      out.append(kTimeOpen);
      pos = after;
    }
  }
  out.append(text.substr(pos));
  return out;
}

unsigned checksum(std::string_view bytes) noexcept {
  unsigned sum = 0;
  for (unsigned char c : bytes) sum += c;
  return sum % 256U;
}

std::string complete_message(std::string_view message) {
  if (message.substr(0, 2) != "8=") return std::string(message);
  const std::size_t head_end = message.find(kSoh);
  if (head_end == std::string_view::npos) return std::string(message);

  const bool has_length = message.find("\x01" "9=") != std::string_view::npos;

  // The trailer is the first SOH-led `10=` field, provided the message ends
  // with SOH (the same rule QuickFIX's script driver applies).
  std::size_t trailer = std::string_view::npos;  // index of the SOH before "10="
  if (message.back() == kSoh) trailer = message.find("\x01" "10=", head_end);

  const std::string_view head = message.substr(0, head_end + 1);
  const std::string_view body =
      trailer == std::string_view::npos ? message.substr(head_end + 1)
                                        : message.substr(head_end + 1, trailer - head_end);

  std::string out(head);
  if (!has_length) {
    out += "9=";
    out += std::to_string(body.size());
    out += kSoh;
  }
  out.append(body);
  if (trailer == std::string_view::npos) {
    const std::string sum = three_digits(checksum(out));
    out += "10=";
    out += sum;
    out += kSoh;
  } else {
    out.append(message.substr(trailer + 1));
  }
  return out;
}

std::vector<Field> split_fields(std::string_view message) {
  std::vector<Field> fields;
  std::size_t pos = 0;
  while (pos < message.size()) {
    std::size_t end = message.find(kSoh, pos);
    if (end == std::string_view::npos) end = message.size();
    const std::string_view piece = message.substr(pos, end - pos);
    const std::size_t eq = piece.find('=');
    if (eq == std::string_view::npos) {
      fields.push_back(Field{piece, {}, false});
    } else {
      fields.push_back(Field{piece.substr(0, eq), piece.substr(eq + 1), true});
    }
    pos = end + 1;
  }
  while (!fields.empty() && fields.back().tag.empty() && !fields.back().has_equals) fields.pop_back();
  return fields;
}

FieldLookup find_field(std::string_view message, std::string_view tag) {
  for (const Field& f : split_fields(message)) {
    if (f.has_equals && f.tag == tag) return FieldLookup{f.value, true};
  }
  return {};
}

std::string show(std::string_view bytes) {
  std::string out(bytes);
  for (char& c : out) {
    if (c == kSoh) c = '|';
  }
  return out;
}

FrameResult frame_message(std::string_view buffer) {
  FrameResult r;
  if (buffer.empty()) return r;
  if (buffer[0] != '8' || (buffer.size() >= 2 && buffer[1] != '=')) {
    r.status = FrameStatus::kGarbled;
    r.error = "received bytes do not start with 8=";
    return r;
  }
  const std::size_t soh1 = buffer.find(kSoh);
  if (soh1 == std::string_view::npos) {
    if (buffer.size() > kMaxHeaderFieldBytes) {
      r.status = FrameStatus::kGarbled;
      r.error = "BeginString field is not terminated by SOH";
    }
    return r;
  }
  const std::string_view after1 = buffer.substr(soh1 + 1);
  if (after1.size() < 2) return r;
  if (after1.substr(0, 2) != "9=") {
    r.status = FrameStatus::kGarbled;
    r.error = "second field is not BodyLength (9=)";
    return r;
  }
  const std::size_t soh2 = buffer.find(kSoh, soh1 + 1);
  if (soh2 == std::string_view::npos) {
    if (after1.size() > kMaxHeaderFieldBytes) {
      r.status = FrameStatus::kGarbled;
      r.error = "BodyLength field is not terminated by SOH";
    }
    return r;
  }
  const std::string_view length_text = buffer.substr(soh1 + 3, soh2 - soh1 - 3);
  std::size_t body_length = 0;
  if (!all_digits(length_text) || length_text.size() > 9) {
    r.status = FrameStatus::kGarbled;
    r.error = "BodyLength value is not a number: '" + std::string(length_text) + "'";
    return r;
  }
  std::from_chars(length_text.data(), length_text.data() + length_text.size(), body_length);
  const std::size_t trailer = soh2 + 1 + body_length;
  if (buffer.size() < trailer + 3) return r;
  if (buffer.substr(trailer, 3) != "10=" || buffer[trailer - 1] != kSoh) {
    r.status = FrameStatus::kGarbled;
    r.error = "BodyLength " + std::to_string(body_length) + " does not end at the CheckSum field";
    return r;
  }
  const std::size_t soh3 = buffer.find(kSoh, trailer);
  if (soh3 == std::string_view::npos) {
    if (buffer.size() > trailer + kMaxHeaderFieldBytes) {
      r.status = FrameStatus::kGarbled;
      r.error = "CheckSum field is not terminated by SOH";
    }
    return r;
  }
  r.status = FrameStatus::kComplete;
  r.length = soh3 + 1;
  return r;
}

std::string verify_checksum(std::string_view message) {
  const std::size_t trailer = message.rfind("\x01" "10=");
  if (trailer == std::string_view::npos) return "no CheckSum field";
  std::string_view value = message.substr(trailer + 4);
  if (!value.empty() && value.back() == kSoh) value.remove_suffix(1);
  const unsigned computed = checksum(message.substr(0, trailer + 1));
  unsigned received = 0;
  const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), received);
  if (ec != std::errc() || ptr != value.data() + value.size() || received != computed) {
    return "CheckSum is " + std::string(value) + " but the bytes sum to " + three_digits(computed);
  }
  return {};
}

}  // namespace hft::conformance
