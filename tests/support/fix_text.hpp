// FIX tag=value text for tests: '|' as SOH, BodyLength and CheckSum filled in.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace hft::test {

/// `pipes` with every '|' replaced by SOH.
inline std::string soh(std::string_view pipes) {
  std::string s(pipes);
  for (char& c : s) {
    if (c == '|') c = '\x01';
  }
  return s;
}

/// "8=<begin>^9=<length>^<body>10=<checksum>^" (^ = SOH); `body` is already
/// SOH-separated and ends in SOH.
inline std::string with_trailer(std::string_view begin, std::string_view body) {
  std::string text = "8=" + std::string(begin) + '\x01' + "9=" + std::to_string(body.size()) + '\x01';
  text += body;
  unsigned sum = 0;
  for (const char c : text) sum += static_cast<unsigned char>(c);
  char trailer[16];
  std::snprintf(trailer, sizeof trailer, "10=%03u\x01", sum % 256);
  return text + trailer;
}

}  // namespace hft::test
