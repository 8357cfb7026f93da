// Small allocation-free text helpers of the session layer.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "hft/codec/encoder.hpp"

namespace hft::session::detail {

/// Appends text and integers into a fixed buffer, truncating when full.
class Line {
 public:
  Line(char* buf, std::size_t cap) noexcept : buf_(buf), cap_(cap) {}

  Line& operator<<(std::string_view s) noexcept {
    const std::size_t n = std::min(s.size(), cap_ - len_);
    std::memcpy(buf_ + len_, s.data(), n);
    len_ += n;
    return *this;
  }
  Line& operator<<(const char* s) noexcept { return *this << std::string_view(s); }
  Line& operator<<(char c) noexcept { return *this << std::string_view(&c, 1); }
  template <std::integral T>
  Line& operator<<(T v) noexcept {
    char tmp[24];
    std::size_t n = 0;
    if constexpr (std::is_signed_v<T>) {
      n = codec::format_int(tmp, static_cast<std::int64_t>(v));
    } else {
      n = codec::format_uint(tmp, static_cast<std::uint64_t>(v));
    }
    return *this << std::string_view(tmp, n);
  }
  Line& operator<<(bool) = delete;

  [[nodiscard]] std::string_view view() const noexcept { return {buf_, len_}; }
  [[nodiscard]] std::size_t size() const noexcept { return len_; }

 private:
  char* buf_;
  std::size_t cap_;
  std::size_t len_ = 0;
};

/// Value of the first "<SOH><tag>=" field of raw message bytes (which need
/// not parse); empty if none.
[[nodiscard]] inline std::string_view peek_field(std::string_view bytes, std::string_view tag) noexcept {
  for (std::size_t pos = bytes.find('\x01'); pos != std::string_view::npos; pos = bytes.find('\x01', pos + 1)) {
    if (bytes.substr(pos + 1, tag.size()) != tag || bytes.substr(pos + 1 + tag.size(), 1) != "=") continue;
    const std::size_t begin = pos + 2 + tag.size();
    const std::size_t end = bytes.find('\x01', begin);
    return end == std::string_view::npos ? std::string_view{} : bytes.substr(begin, end - begin);
  }
  return {};
}

/// Value of the first "<SOH>35=" field of raw message bytes; empty if none.
[[nodiscard]] inline std::string_view peek_msg_type(std::string_view bytes) noexcept {
  return peek_field(bytes, "35");
}

/// True for the session-level message types (QuickFIX's isAdminMsgType).
[[nodiscard]] inline bool is_admin_type(std::string_view t) noexcept {
  if (t.size() != 1) return false;
  switch (t[0]) {
    case '0': case '1': case '2': case '3': case '4': case '5': case 'A':
      return true;
    default:
      return false;
  }
}

}  // namespace hft::session::detail
