// Validation tables compiled from a Dictionary at load time (private to the
// codec layer): per message type, one lookup from a tag to everything the
// validator's clean-message path checks for that field in that message, and
// the same per repeating group. Built by finalize() in dictionary.cpp, read
// by validator.cpp.
//
//   FastMessage::slot[tag] ---> entries[slot]: section (header / body /
//   (u16, every tag < 2048)     trailer), required bit, value check, enum
//                               table or group
//
// A message type or a field the tables cannot vouch for (more than 64
// required fields, a group in the header, a required body field that is also
// a header field, tags beyond the index) is marked so; the validator then
// runs its general pass, which decides every rule.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "hft/codec/dictionary.hpp"
#include "hft/codec/validator.hpp"

namespace hft::codec::detail {

/// What the clean path does with a field's value beyond "not empty" (format
/// and enum folded into one test where the enum implies the format).
enum class ValueCheck : std::uint8_t {
  kAny,        ///< nothing
  kInt,        ///< INT, LENGTH, NUMINGROUP, SEQNUM, DAYOFMONTH
  kFloat,      ///< FLOAT, QTY, PRICE, PRICEOFFSET, AMT, PERCENTAGE
  kChar,       ///< exactly one byte
  kTimestamp,  ///< UTCTIMESTAMP
  kEnumChar,   ///< one-byte enum values: a 256-bit set at `aux` (implies the format)
  kEnumHash,   ///< enum values of 1-8 bytes: open addressing at `aux` (implies the format)
  kGeneric,    ///< value_has_type_format + Dictionary::enum_allows (Dictionary::tag_info)
  kGroup,      ///< a NumInGroup field: walk group `aux`
};

enum class FieldSection : std::uint8_t { kNone = 0, kHeader = 1, kBody = 2, kTrailer = 3 };

struct FastEntry {
  std::uint64_t required = 0;                  ///< the field's bit in the required mask, 0 if not required
  FieldSection section = FieldSection::kNone;  ///< kNone: never on the clean path
  ValueCheck check = ValueCheck::kAny;
  std::uint8_t enum_bits = 0;  ///< TagInfo::enum_bits
  std::uint32_t aux = 0;       ///< enum table offset in Dictionary::enum_keys_, or group index
};
static_assert(sizeof(FastEntry) == 16);

struct FastGroup {
  bool usable = false;                  ///< false: the general pass walks this group
  FastEntry count;                      ///< the NumInGroup field's own value check (an enum, say)
  std::uint64_t required = 0;           ///< bits of the required member positions
  std::vector<std::uint16_t> position;  ///< FieldSet::position_of: tag -> 1 + member position
  std::vector<FastEntry> entries;       ///< by member position
};

struct FastMessage {
  bool usable = false;
  std::uint64_t required = 0;  ///< all required top-level fields
  /// tag (< MessageView::kIndexedTags, all of them) -> index into entries;
  /// entries[0] (section kNone) stands for every field not on the clean path.
  std::vector<std::uint16_t> slot;
  std::vector<FastEntry> entries;
};

struct FastTables {
  std::vector<FastMessage> messages;  ///< same index as Dictionary::messages()
  std::vector<FastGroup> groups;      ///< same index as Dictionary::groups()
  std::int16_t by_char[256];          ///< message index of one-byte MsgTypes, -1 if none
  std::uint64_t begin_string = 0;     ///< packed BeginString (<= 8 bytes), 0 if longer
  std::size_t begin_string_size = 0;
};

/// Compiles the tables of `d` (whose other tables are final).
[[nodiscard]] std::shared_ptr<const FastTables> build_fast_tables(const Dictionary& d);

/// The clean-message path alone: true if it vouches that `message` is valid
/// under every option setting (false: Validator::validate takes the general
/// pass). Exposed so that tests can hold it to the general pass.
[[nodiscard]] bool clean_message_valid(const Dictionary& d, const MessageView& message) noexcept;

/// The general pass alone, which decides every rule (Validator::validate
/// without the clean-message path).
[[nodiscard]] ValidationResult general_validation(const Dictionary& d, const ValidationOptions& options,
                                                  const MessageView& message) noexcept;

}  // namespace hft::codec::detail
