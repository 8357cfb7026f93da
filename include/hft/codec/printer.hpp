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
/// Every field is followed by `separator`. Unknown tags print as their number;
/// values without an enum description print as they are. LENGTH-prefixed data
/// fields are read by their length, so data containing SOH stays one field.
[[nodiscard]] std::string to_named(std::string_view message, const Dictionary& dictionary,
                                   char separator = '|');

/// One field per line, indented inside repeating groups:
///   "   35 MsgType          = D (NewOrderSingle)"
///   "  453 NoPartyIDs       = 2"
///   "  - entry 1"
///   "      448 PartyID          = PARTY1"
/// Tag right-aligned in 5 columns, name padded to 16, enum description in
/// parentheses; each group entry is introduced by "- entry N" and its fields
/// are indented 4 more columns per nesting level.
[[nodiscard]] std::string to_tree(std::string_view message, const Dictionary& dictionary);

}  // namespace hft::codec
