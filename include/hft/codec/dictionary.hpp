// FIX data dictionaries in the QuickFIX XML format (<fix> with <header>,
// <trailer>, <messages>, <components>, <fields>), flattened at load time into
// dense tables so that validation does O(1) lookups per field.
//
// Loading is a start-up path: it allocates and reports errors as values that
// name the file, line and problem. Lookups are noexcept and allocation-free.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hft/codec/types.hpp"
#include "hft/core/expected.hpp"

namespace hft::codec {

/// Field types of the QuickFIX dictionaries (type="..." attribute).
enum class FieldType : std::uint8_t {
  kString, kChar, kBoolean, kInt, kLength, kNumInGroup, kSeqNum, kTagNum, kDayOfMonth,
  kFloat, kQty, kPrice, kPriceOffset, kAmt, kPercentage,
  kUtcTimestamp, kUtcTimeOnly, kUtcDateOnly, kLocalMktDate, kTzTimeOnly, kTzTimestamp,
  kMonthYear, kData, kXmlData, kMultipleValueString, kMultipleCharValue,
  kMultipleStringValue, kCurrency, kExchange, kCountry, kLanguage, kTenor,
  kUnknown,
};

/// "STRING" -> kString, ...; unknown names map to kUnknown (treated as string).
[[nodiscard]] FieldType parse_field_type(std::string_view name) noexcept;
[[nodiscard]] std::string_view to_string(FieldType type) noexcept;

struct FieldDef {
  int tag = 0;
  std::string name;
  FieldType type = FieldType::kString;
  /// Enumerated values (empty = any value of the type) and their descriptions.
  std::vector<std::string> enum_values;
  std::vector<std::string> enum_names;
  /// For LENGTH fields directly followed by their DATA field: that field's tag.
  int data_tag = 0;

  /// Description of an enum value ("NEW" for 39=0), empty if none.
  [[nodiscard]] std::string_view enum_name(std::string_view value) const noexcept;
  [[nodiscard]] bool enum_allows(std::string_view value) const noexcept;
};

/// A set of fields with order and requiredness: a message body, the header,
/// the trailer, or a repeating group's entry. Components are expanded in place.
struct FieldSet {
  struct Member {
    int tag = 0;
    bool required = false;
    int group = -1;  ///< index into Dictionary::groups() if this is a NumInGroup field
  };
  std::vector<Member> members;  ///< declaration order
  /// Dense lookup: position+1 in members for a tag, 0 if not a member.
  std::vector<std::uint16_t> position_of;

  [[nodiscard]] const Member* member(int tag) const noexcept {
    if (tag <= 0 || static_cast<std::size_t>(tag) >= position_of.size()) return nullptr;
    const std::uint16_t p = position_of[static_cast<std::size_t>(tag)];
    return p == 0 ? nullptr : &members[p - 1];
  }
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

/// One dictionary (one XML file), or a transport + application pair combined.
class Dictionary {
 public:
  /// Loads a QuickFIX XML dictionary. Errors read "FILE:LINE: problem".
  static Expected<std::shared_ptr<const Dictionary>> load_file(const std::string& path);
  /// Same from text; `name` stands for the file in error messages.
  static Expected<std::shared_ptr<const Dictionary>> load_string(std::string_view xml,
                                                                 const std::string& name);
  /// Built-in dictionary of the session-level messages (Heartbeat, TestRequest,
  /// ResendRequest, Reject, SequenceReset, Logout, Logon, BusinessMessageReject)
  /// and the standard header/trailer for `version`, so an engine runs with no file.
  static std::shared_ptr<const Dictionary> builtin(FixVersion version);
  /// FIXT.1.1 transport + FIX 5.0SPx application dictionaries as one: header,
  /// trailer and admin messages from `transport`, application messages from `app`.
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
  [[nodiscard]] const FieldDef* field_by_name(std::string_view name) const noexcept;
  [[nodiscard]] const MessageDef* message(std::string_view msg_type) const noexcept;
  [[nodiscard]] const FieldSet& header() const noexcept { return header_; }
  [[nodiscard]] const FieldSet& trailer() const noexcept { return trailer_; }
  [[nodiscard]] const GroupDef& group(int index) const noexcept {
    return groups_[static_cast<std::size_t>(index)];
  }
  [[nodiscard]] const std::vector<FieldDef>& fields() const noexcept { return fields_; }
  [[nodiscard]] const std::vector<MessageDef>& messages() const noexcept { return messages_; }
  /// Largest tag defined.
  [[nodiscard]] int max_tag() const noexcept { return static_cast<int>(field_index_.size()) - 1; }

  // Construction is through the loaders; public for the implementation's builders.
  Dictionary() = default;
  std::string version_;
  std::string begin_string_;
  std::vector<FieldDef> fields_;
  std::vector<int> field_index_;  ///< tag -> index in fields_ or -1
  std::vector<MessageDef> messages_;
  std::vector<std::int32_t> message_slot_;  ///< hash of msg_type -> index in messages_, -1
  FieldSet header_;
  FieldSet trailer_;
  std::vector<GroupDef> groups_;
};

}  // namespace hft::codec
