// Validates a parsed message against a dictionary. Each failure carries the
// SessionRejectReason (373), the tag (371) and the standard text (58) that the
// session layer puts in a Reject. No allocation, no exceptions.
#pragma once

#include <cstdint>
#include <string_view>

#include "hft/codec/dictionary.hpp"
#include "hft/codec/parser.hpp"
#include "hft/codec/types.hpp"

namespace hft::codec {

/// Checks that can be switched off one by one (QuickFIX's Validate* settings).
struct ValidationOptions {
  bool check_begin_string = true;           ///< 8 equals the dictionary's BeginString
  bool check_fields_out_of_order = true;    ///< ValidateFieldsOutOfOrder: header, body, trailer order
  bool check_fields_have_values = true;     ///< ValidateFieldsHaveValues: no empty values
  bool check_user_defined_fields = true;    ///< ValidateUserDefinedFields: tags >= 5000 must be defined
  bool allow_unknown_message_fields = false;///< AllowUnknownMsgFields: body tags not in the message pass
  bool check_required = true;               ///< required fields (header, body, trailer, groups)
  bool check_values = true;                 ///< enum values
  bool check_types = true;                  ///< value format per field type
  bool check_repeated = true;               ///< a tag appears more than once outside groups
  bool check_groups = true;                 ///< NumInGroup count equals entries, entry field order
  bool check_unknown_msg_type = true;       ///< MsgType defined in the dictionary
};

/// Result of validation: ok() or the reason, the referenced tag and the text.
struct ValidationResult {
  RejectReason reason = RejectReason::kNone;
  int ref_tag = 0;             ///< 371; 0 when no tag applies
  std::string_view text;       ///< 58: reject_reason_text(reason)
  [[nodiscard]] bool ok() const noexcept { return reason == RejectReason::kNone; }
};

/// Validates messages against one dictionary (for FIXT, pass the combined
/// transport + application dictionary). Holds only a reference and options.
class Validator {
 public:
  Validator(const Dictionary& dictionary, ValidationOptions options = {}) noexcept
      : dict_(&dictionary), options_(options) {}

  /// Checks, in this order: first three fields 8/9/35, BeginString, MsgType
  /// known, then every field in message order (tag number valid, defined for
  /// the message type, value present, format, enum value, repeated tags,
  /// header/body/trailer order, group counts and entry order), then required
  /// fields. Returns the first failure.
  [[nodiscard]] ValidationResult validate(const MessageView& message) const noexcept;

  [[nodiscard]] const ValidationOptions& options() const noexcept { return options_; }
  [[nodiscard]] const Dictionary& dictionary() const noexcept { return *dict_; }

 private:
  const Dictionary* dict_;
  ValidationOptions options_;
};

/// Checks `value` against a field type's format (INT digits, FLOAT, CHAR one
/// byte, BOOLEAN Y/N, UTCTIMESTAMP, ...).
[[nodiscard]] bool value_has_type_format(FieldType type, std::string_view value) noexcept;

}  // namespace hft::codec
