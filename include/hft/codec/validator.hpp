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
  bool check_begin_string = true;             ///< 8 equals the dictionary's BeginString
  bool check_fields_out_of_order = true;      ///< ValidateFieldsOutOfOrder: header, body, trailer order
  bool check_fields_have_values = true;       ///< ValidateFieldsHaveValues: no empty values
  bool check_user_defined_fields = true;      ///< ValidateUserDefinedFields: tags >= 5000 must be defined
  bool allow_unknown_message_fields = false;  ///< AllowUnknownMsgFields: body tags not in the message pass
  bool check_required = true;                 ///< required fields (header, body, trailer, groups)
  bool check_values = true;                   ///< enum values
  bool check_types = true;                    ///< value format per field type
  bool check_repeated = true;                 ///< a tag appears more than once outside groups
  bool check_groups = true;                   ///< NumInGroup count equals entries, entry field order
  bool check_unknown_msg_type = true;         ///< MsgType defined in the dictionary
};

/// How a failed message is to be handled, as QuickFIX 1.15 handles it.
enum class ValidationFailure : std::uint8_t {
  kNone = 0,
  /// Send a session-level Reject (35=3) with `reason` (373), `ref_tag` (371,
  /// omitted when 0) and `text` (58). MsgSeqNum is consumed.
  kReject,
  /// The first three fields are not 8, 9, 35 in that order: QuickFIX drops
  /// such a message as invalid (no Reject, MsgSeqNum not consumed).
  /// `reason` is kOther, `ref_tag` the first misplaced tag.
  kGarbled,
  /// BeginString is not the dictionary's: QuickFIX answers with a Logout
  /// "Incorrect BeginString". `reason` is kOther, `ref_tag` 8.
  kWrongBeginString,
};

/// Result of validation: ok() or the reason, the referenced tag and the text.
struct ValidationResult {
  RejectReason reason = RejectReason::kNone;
  int ref_tag = 0;        ///< 371; 0 when no tag applies (e.g. Invalid MsgType)
  std::string_view text;  ///< 58: reject_reason_text(reason), or a static description
  ValidationFailure failure = ValidationFailure::kNone;
  [[nodiscard]] bool ok() const noexcept { return reason == RejectReason::kNone; }
};

/// Validates messages against one dictionary (for FIXT, pass the combined
/// transport + application dictionary). Holds only a reference and options.
class Validator {
 public:
  Validator(const Dictionary& dictionary, ValidationOptions options = {}) noexcept
      : dict_(&dictionary), options_(options) {}

  /// Checks `message` (parsed by MessageView::parse) and returns the first
  /// failure in QuickFIX 1.15's order:
  ///  1. first three fields are 8, 9, 35 (else kGarbled);
  ///  2. BeginString equals the dictionary's (else kWrongBeginString);
  ///  3. header/body/trailer order: a header field after a body or trailer
  ///     field, or a body field after a trailer field -> 14, 371 = the first
  ///     such tag (QuickFIX detects this while parsing, before anything else);
  ///  4. MsgType defined -> 11 (371 omitted, as in the conformance scripts);
  ///  5. required fields: header, trailer, body (smallest missing tag first,
  ///     QuickFIX keeps them in ordered sets), then repeating-group entries -> 1;
  ///  6. per-field checks, visiting fields in QuickFIX's order (header: 8, 9,
  ///     35 then by tag; trailer by tag with 10 last; body by tag; group
  ///     entries right after their NumInGroup field). Per field: repeated
  ///     tag (13), value present (4), format (6), enum value (5), tag number
  ///     defined (0; also tags <= 0 and undefined tags >= 5000), tag in the
  ///     message (2), NumInGroup count vs entries (16, 371 = the count tag),
  ///     entry starts with the delimiter and keeps the dictionary order (15,
  ///     371 = the misplaced tag).
  /// Only one failure is reported; when none, ok(). Validation of an unknown
  /// MsgType with check_unknown_msg_type off checks header and trailer fully
  /// and body fields only for value, format and enum.
  /// After ParseStatus::kBadTag (non-numeric tag; parsing stopped there) the
  /// bad field is reported as 0 "Invalid tag number" with 371=0 (QuickFIX
  /// reads such a tag as 0) and required checks are skipped.
  [[nodiscard]] ValidationResult validate(const MessageView& message) const noexcept;

  [[nodiscard]] const ValidationOptions& options() const noexcept { return options_; }
  [[nodiscard]] const Dictionary& dictionary() const noexcept { return *dict_; }

 private:
  const Dictionary* dict_;
  ValidationOptions options_;
};

/// Checks `value` against a field type's format as QuickFIX's convertors do:
/// INT family (INT, LENGTH, NUMINGROUP, SEQNUM, DAYOFMONTH): optional '-' and
/// digits; FLOAT family (FLOAT, QTY, PRICE, PRICEOFFSET, AMT, PERCENTAGE):
/// optional '-', digits with at most one '.', at least one digit, no '+' or
/// exponent; CHAR: exactly one byte; BOOLEAN: Y or N; UTCTIMESTAMP:
/// YYYYMMDD-HH:MM:SS[.f{1,9}]; UTCTIMEONLY: HH:MM:SS[.f{1,9}]; UTCDATEONLY:
/// YYYYMMDD (fields in range). Every other type accepts any value.
[[nodiscard]] bool value_has_type_format(FieldType type, std::string_view value) noexcept;

}  // namespace hft::codec
