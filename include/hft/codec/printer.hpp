// Human-readable rendering of FIX messages for logs and tools (not for the
// hot path: these allocate).
#pragma once

#include <string>
#include <string_view>

#include "hft/codec/dictionary.hpp"

namespace hft::codec {

/// "8=FIX.4.4|9=..." : SOH shown as `separator`.
[[nodiscard]] std::string to_printable(std::string_view message, char separator = '|');

/// With a dictionary: "BeginString=FIX.4.4|...|MsgType=NewOrderSingle(D)|Side=BUY(1)|..."
/// Unknown tags print as their number.
[[nodiscard]] std::string to_named(std::string_view message, const Dictionary& dictionary,
                                   char separator = '|');

/// One field per line, indented inside repeating groups:
///   "   35 MsgType          = D (NewOrderSingle)"
[[nodiscard]] std::string to_tree(std::string_view message, const Dictionary& dictionary);

}  // namespace hft::codec
