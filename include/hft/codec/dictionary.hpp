// FIX data dictionaries in the QuickFIX XML format (<fix> with <header>,
// <trailer>, <messages>, <components>, <fields>), flattened at load time into
// dense tables so that validation does O(1) lookups per field.
//
// Loading is a start-up path: it allocates and reports errors as values that
// name the file, line and problem. Lookups are noexcept and allocation-free.
//
// Flattening: components are expanded in place (recursively; a component may
// be declared after its use; a cycle is a load error). A field inside a
// component is required only if it is marked required="Y" and every enclosing
// component is required in that context. A repeating group becomes a GroupDef
// whose entry FieldSet is flattened the same way; requiredness inside an entry
// is relative to the entry (a required field must be in every entry that is
// present), independent of whether the group itself is required.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hft/codec/types.hpp"
#include "hft/core/expected.hpp"

namespace hft::codec {

/// Field types of the QuickFIX dictionaries (type="..." attribute).
enum class FieldType : std::uint8_t {
  kString,
  kChar,
  kBoolean,
  kInt,
  kLength,
  kNumInGroup,
  kSeqNum,
  kTagNum,
  kDayOfMonth,
  kFloat,
  kQty,
  kPrice,
  kPriceOffset,
  kAmt,
  kPercentage,
  kUtcTimestamp,
  kUtcTimeOnly,
  kUtcDateOnly,
  kLocalMktDate,
  kTzTimeOnly,
  kTzTimestamp,
  kMonthYear,
  kData,
  kXmlData,
  kMultipleValueString,
  kMultipleCharValue,
  kMultipleStringValue,
  kCurrency,
  kExchange,
  kCountry,
  kLanguage,
  kTenor,
  kUnknown,
};

/// "STRING" -> kString, ...; "TIME" -> kUtcTimestamp and "UTCDATE" ->
/// kUtcDateOnly (old dictionaries); unknown names (XID, DATE, ...) map to
/// kUnknown, whose values are not format-checked (as QuickFIX does).
[[nodiscard]] FieldType parse_field_type(std::string_view name) noexcept;
/// The dictionary spelling of a type ("UTCTIMESTAMP"); "UNKNOWN" for kUnknown.
[[nodiscard]] std::string_view to_string(FieldType type) noexcept;

struct FieldDef {
  int tag = 0;
  std::string name;
  FieldType type = FieldType::kString;
  /// Enumerated values (empty = any value of the type) and their descriptions
  /// (same index; a value without description has an empty name).
  std::vector<std::string> enum_values;
  std::vector<std::string> enum_names;
  /// For LENGTH fields directly followed by their DATA field: that field's tag.
  int data_tag = 0;

  /// Description of an enum value ("NEW" for 39=0), empty if none.
  [[nodiscard]] std::string_view enum_name(std::string_view value) const noexcept;
  /// True if the field has no enumeration or `value` is one of its values
  /// (for MULTIPLE*VALUE types: every space-separated item is).
  [[nodiscard]] bool enum_allows(std::string_view value) const noexcept;
};

/// What the validator reads per tag on every field: packed in 8 bytes so the
/// table for the common tags stays in a few cache lines.
struct TagInfo {
  enum Flags : std::uint8_t {
    kDefined = 1,      ///< the tag is in <fields>
    kHeader = 2,       ///< member of the header
    kTrailer = 4,      ///< member of the trailer
    kFormat = 8,       ///< the type has a format to check
    kEnum = 16,        ///< values are enumerated
    kMultiValue = 32,  ///< MULTIPLE*VALUE: space-separated enum items
    kLongEnum = 64,    ///< some enum value is longer than 8 bytes: slow path
    /// In Dictionary::tag_info(): the header/trailer member is required.
    /// In FieldSet::member_info: the member is required in the set.
    kRequired = 128,
  };
  FieldType check_type = FieldType::kUnknown;  ///< type for format checks
  std::uint8_t flags = 0;
  /// log2 of the enum hash table size; 0: every value is one byte and the
  /// table is a 256-bit set (4 words).
  std::uint8_t enum_bits = 0;
  /// In Dictionary::tag_info(): position in the header or trailer FieldSet
  /// (kNoSlot when not a member or beyond 254). In FieldSet::member_info: 1
  /// if the member is a NumInGroup field opening a group, else 0.
  std::uint8_t slot = 0;
  std::uint32_t enum_offset = 0;  ///< first slot in Dictionary::enum_keys_
  static constexpr std::uint8_t kNoSlot = 0xff;
};
static_assert(sizeof(TagInfo) == 8, "TagInfo is read per field: keep it 8 bytes");

/// A set of fields with order and requiredness: a message body, the header,
/// the trailer, or a repeating group's entry. Components are expanded in place.
struct FieldSet {
  struct Member {
    int tag = 0;
    bool required = false;
    int group = -1;  ///< index into Dictionary::groups() if this is a NumInGroup field
  };
  /// Tags at or above this are looked up in `sparse_positions` (FIX 5.0SP2
  /// defines tags up to 50002; a dense table per set would cost megabytes).
  static constexpr int kDenseTagLimit = 8192;

  std::vector<Member> members;  ///< declaration order, each tag once
  /// Dense lookup: position+1 in members for a tag, 0 if not a member.
  /// Sized to the largest member tag below kDenseTagLimit, plus one.
  std::vector<std::uint16_t> position_of;
  /// (tag, position+1) for member tags >= kDenseTagLimit, sorted by tag.
  std::vector<std::pair<int, std::uint16_t>> sparse_positions;
  /// Number of members with required == true.
  int required_count = 0;
  /// Dictionary::tag_info() of each member, same index as `members`, so a
  /// validator finds membership and per-tag facts with one position lookup.
  std::vector<TagInfo> member_info;

  /// Position of `tag` in members, or -1.
  [[nodiscard]] int position(int tag) const noexcept {
    if (tag > 0 && static_cast<std::size_t>(tag) < position_of.size()) {
      return static_cast<int>(position_of[static_cast<std::size_t>(tag)]) - 1;
    }
    if (tag < kDenseTagLimit) return -1;
    return sparse_position(tag);
  }
  [[nodiscard]] const Member* member(int tag) const noexcept {
    const int p = position(tag);
    return p < 0 ? nullptr : &members[static_cast<std::size_t>(p)];
  }

 private:
  [[nodiscard]] int sparse_position(int tag) const noexcept;
};

struct GroupDef {
  int count_tag = 0;      ///< NumInGroup field
  int delimiter_tag = 0;  ///< first field of each entry
  FieldSet fields;
};

struct MessageDef {
  std::string msg_type;
  std::string name;
  bool admin = false;  ///< msgcat="admin"
  FieldSet fields;
};

class Dictionary;

namespace detail {
struct FastTables;  // validation tables compiled at load (src/codec/validation_tables.hpp)
/// Packs a value of 1..8 bytes into a u64 key (little-endian, zero padded).
/// Values cannot contain NUL, so the packing is unambiguous and never 0.
[[nodiscard]] inline std::uint64_t pack_key(std::string_view v) noexcept {
  std::uint64_t k = 0;
  for (std::size_t i = 0; i < v.size() && i < 8; ++i) {
    k |= static_cast<std::uint64_t>(static_cast<unsigned char>(v[i])) << (8 * i);
  }
  return k;
}
[[nodiscard]] inline std::size_t hash_key(std::uint64_t k) noexcept {
  return static_cast<std::size_t>((k * 0x9E3779B97F4A7C15ull) >> 40);
}
/// Enum membership through the hash table of `info` (one item).
[[nodiscard]] bool enum_contains_one(const Dictionary& d, int tag, const TagInfo& info,
                                     std::string_view value) noexcept;
/// Same for a MULTIPLE*VALUE field: every space-separated item.
[[nodiscard]] bool enum_contains_multi(const Dictionary& d, int tag, const TagInfo& info,
                                       std::string_view value) noexcept;
[[nodiscard]] inline bool enum_contains(const Dictionary& d, int tag, const TagInfo& info,
                                        std::string_view value) noexcept {
  return (info.flags & TagInfo::kMultiValue) != 0 ? enum_contains_multi(d, tag, info, value)
                                                  : enum_contains_one(d, tag, info, value);
}
}  // namespace detail

/// One dictionary (one XML file), or a transport + application pair combined.
class Dictionary {
 public:
  /// Loads a QuickFIX XML dictionary. Errors read "FILE:LINE: problem":
  /// malformed XML, missing attribute, bad or duplicate field number,
  /// duplicate field name or message type, unknown field or component
  /// referenced, component cycle, missing section; a file that cannot be read
  /// is reported as "FILE:0: cannot open ...".
  static Expected<std::shared_ptr<const Dictionary>> load_file(const std::string& path);
  /// Same from text; `name` stands for the file in error messages.
  static Expected<std::shared_ptr<const Dictionary>> load_string(std::string_view xml,
                                                                 const std::string& name);
  /// Built-in dictionary of the session-level messages (Heartbeat, TestRequest,
  /// ResendRequest, Reject, SequenceReset, Logout, Logon, and for FIX.4.2-4.4
  /// BusinessMessageReject) and the standard header/trailer for `version`, so
  /// an engine runs with no file. Its definitions are those of the matching
  /// XML file (for kFixT11: FIXT11.xml); the MsgType field keeps every
  /// enumerated message type so names print. Built once per version, shared.
  static std::shared_ptr<const Dictionary> builtin(FixVersion version);
  /// FIXT.1.1 transport + FIX 5.0SPx application dictionaries as one: header,
  /// trailer and admin messages from `transport`, application messages from
  /// `app`; fields from both (the transport's definition wins on a shared tag).
  /// version() is the app's ("FIX.5.0SP2"), begin_string() the transport's.
  static std::shared_ptr<const Dictionary> combine(const Dictionary& transport, const Dictionary& app);

  /// "FIX.4.4", "FIXT.1.1", "FIX.5.0SP2" (from type/major/minor/servicepack).
  [[nodiscard]] const std::string& version() const noexcept { return version_; }
  /// The BeginString this dictionary's messages carry ("FIXT.1.1" for FIX 5.0).
  [[nodiscard]] const std::string& begin_string() const noexcept { return begin_string_; }

  [[nodiscard]] const FieldDef* field(int tag) const noexcept {
    if (tag <= 0 || static_cast<std::size_t>(tag) >= field_index_.size()) return nullptr;
    const int i = field_index_[static_cast<std::size_t>(tag)];
    return i < 0 ? nullptr : &fields_[static_cast<std::size_t>(i)];
  }
  /// Linear in the number of fields: for tools, not the hot path.
  [[nodiscard]] const FieldDef* field_by_name(std::string_view name) const noexcept;
  /// O(1): open-addressing table keyed on the packed MsgType (<= 8 bytes;
  /// longer types fall back to a linear scan). nullptr if not defined.
  [[nodiscard]] const MessageDef* message(std::string_view msg_type) const noexcept;
  [[nodiscard]] const FieldSet& header() const noexcept { return header_; }
  [[nodiscard]] const FieldSet& trailer() const noexcept { return trailer_; }
  [[nodiscard]] const GroupDef& group(int index) const noexcept {
    return groups_[static_cast<std::size_t>(index)];
  }
  [[nodiscard]] const std::vector<GroupDef>& groups() const noexcept { return groups_; }
  [[nodiscard]] const std::vector<FieldDef>& fields() const noexcept { return fields_; }
  [[nodiscard]] const std::vector<MessageDef>& messages() const noexcept { return messages_; }
  /// Largest tag defined.
  [[nodiscard]] int max_tag() const noexcept { return static_cast<int>(field_index_.size()) - 1; }

  /// Per-tag validation facts; a zero TagInfo (flags 0) for undefined tags.
  [[nodiscard]] TagInfo tag_info(int tag) const noexcept {
    if (tag <= 0 || static_cast<std::size_t>(tag) >= tag_info_.size()) return TagInfo{};
    return tag_info_[static_cast<std::size_t>(tag)];
  }
  /// True if `value` is an allowed value of enumerated tag `tag` (true when the
  /// tag is not enumerated). O(1) per item.
  [[nodiscard]] bool enum_allows(int tag, std::string_view value) const noexcept;

  // Construction is through the loaders; public for the implementation's builders.
  Dictionary() = default;
  std::string version_;
  std::string begin_string_;
  std::vector<FieldDef> fields_;
  std::vector<int> field_index_;  ///< tag -> index in fields_ or -1
  std::vector<MessageDef> messages_;
  std::vector<std::int32_t> message_slot_;  ///< hash of msg_type -> index in messages_, -1
  std::vector<std::uint64_t> message_key_;  ///< packed msg_type per slot
  FieldSet header_;
  FieldSet trailer_;
  std::vector<GroupDef> groups_;
  std::vector<TagInfo> tag_info_;         ///< tag -> TagInfo, same size as field_index_
  std::vector<std::uint64_t> enum_keys_;  ///< open-addressing tables of packed enum values
  /// Per message type and group, what the validator checks per field, compiled
  /// from the tables above when they are final; null until then (the
  /// validator then takes its general pass for every message).
  std::shared_ptr<const detail::FastTables> validation_tables_;
};

}  // namespace hft::codec
