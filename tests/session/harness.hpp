// Helpers shared by the session tests: FIX text with '|' for SOH, BodyLength
// and CheckSum completion, a collecting Output, a fake clock.
#pragma once

#include <cstdint>
#include <cstdio>
#include <ctime>
#include <string>
#include <string_view>
#include <vector>

#include "hft/codec/encoder.hpp"
#include "hft/codec/parser.hpp"
#include "hft/session/session.hpp"

namespace hft::session::test {

/// '|' -> SOH.
inline std::string soh(std::string_view text) {
  std::string s(text);
  for (char& c : s) {
    if (c == '|') c = '\x01';
  }
  return s;
}

/// SOH -> '|'.
inline std::string pipes(std::string_view text) {
  std::string s(text);
  for (char& c : s) {
    if (c == '\x01') c = '|';
  }
  return s;
}

/// Splits on SOH (no trailing empty field).
inline std::vector<std::string_view> split_fields(std::string_view msg) {
  std::vector<std::string_view> out;
  std::size_t pos = 0;
  while (pos < msg.size()) {
    std::size_t end = msg.find('\x01', pos);
    if (end == std::string_view::npos) end = msg.size();
    out.push_back(msg.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

inline bool has_field(std::string_view msg, std::string_view tag) {
  for (std::string_view f : split_fields(msg)) {
    if (f.size() > tag.size() && f.substr(0, tag.size()) == tag && f[tag.size()] == '=') return true;
  }
  return false;
}

/// Adds BodyLength after the first field when there is no 9=, and CheckSum
/// at the end when there is no 10= (the conformance scripts' rule).
inline std::string complete(std::string msg) {
  if (!msg.empty() && msg.back() != '\x01') msg += '\x01';
  if (!has_field(msg, "9")) {
    const std::size_t first = msg.find('\x01');
    std::size_t body_end = msg.size();
    const std::size_t ck = msg.find("\x01" "10=");
    if (ck != std::string::npos) body_end = ck + 1;
    const std::size_t body_len = body_end - (first + 1);
    msg.insert(first + 1, "9=" + std::to_string(body_len) + "\x01");
  }
  if (!has_field(msg, "10")) {
    unsigned sum = 0;
    for (unsigned char c : msg) sum += c;
    char ck[16];
    std::snprintf(ck, sizeof(ck), "10=%03u\x01", sum % 256);
    msg += ck;
  }
  return msg;
}

/// Builds a wire message from "8=FIX.4.4|35=0|..." (9 and 10 computed).
inline std::string wire(std::string_view pipe_text) { return complete(soh(pipe_text)); }

/// "YYYYMMDD-HH:MM:SS" (+".mmm").
inline std::string utc_text(std::int64_t ns, bool millis = false) {
  const std::time_t s = static_cast<std::time_t>(ns / 1'000'000'000);
  std::tm tm{};
  gmtime_r(&s, &tm);
  char buf[80];  // room for any int the format could print (-Wformat-truncation)
  std::snprintf(buf, sizeof(buf), "%04d%02d%02d-%02d:%02d:%02d", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
  std::string out(buf);
  if (millis) {
    std::snprintf(buf, sizeof(buf), ".%03d", static_cast<int>((ns / 1'000'000) % 1000));
    out += buf;
  }
  return out;
}

/// Field value of `tag` in a wire message ("" if absent).
inline std::string field(std::string_view msg, std::string_view tag) {
  for (std::string_view f : split_fields(msg)) {
    if (f.size() > tag.size() && f.substr(0, tag.size()) == tag && f[tag.size()] == '=') {
      return std::string(f.substr(tag.size() + 1));
    }
  }
  return {};
}

/// Collects what a session sends, one string per message.
class CollectingOutput final : public Output {
 public:
  void send(std::span<const char> bytes) noexcept override {
    std::string_view rest(bytes.data(), bytes.size());
    while (!rest.empty()) {
      const codec::FrameResult fr = codec::frame(rest);
      if (fr.status != codec::FrameStatus::kComplete) {
        bad_frames++;
        messages.emplace_back(rest);
        break;
      }
      messages.emplace_back(rest.substr(0, fr.size));
      rest.remove_prefix(fr.size);
    }
  }
  void disconnect(DisconnectReason r) noexcept override {
    disconnected = true;
    reason = r;
  }
  /// Removes and returns the oldest message ("" if none).
  std::string pop() {
    if (messages.empty()) return {};
    std::string m = messages.front();
    messages.erase(messages.begin());
    return m;
  }
  std::vector<std::string> messages;
  bool disconnected = false;
  DisconnectReason reason = DisconnectReason::kApplication;
  int bad_frames = 0;
};

}  // namespace hft::session::test
