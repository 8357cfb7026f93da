// The parser's general field loop on its own (private to the codec layer and
// its tests): parse() takes a clean-message path first and hands the general
// loop only what that path leaves, so the tests and the fuzz target compare
// the two on the same text to prove the shortcut changes no answer.
#pragma once

#include <cstdint>
#include <string_view>

#include "hft/codec/parser.hpp"

namespace hft::codec::detail {

struct ParseAccess {
  /// What parse(text) returns, with every field read by the general loop
  /// (the view is left as parse() would leave it).
  static ParseStatus general(MessageView& v, std::string_view text) noexcept {
    v.text_ = text;
    v.count_ = 0;
    if (++v.generation_ == 0) {
      for (std::uint64_t& slot : v.index_storage_) slot = 0;
      v.generation_ = 1;
    }
    if (text.empty()) return ParseStatus::kEmpty;
    if (text.size() > UINT32_MAX) return ParseStatus::kTooManyFields;
    return v.parse_general(text.data(), text.size(), 0, 0);
  }
};

}  // namespace hft::codec::detail
