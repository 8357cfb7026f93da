#include "hft/codec/types.hpp"

namespace hft::codec {

std::string_view reject_reason_text(RejectReason reason) noexcept {
  switch (reason) {
    case RejectReason::kNone: return "";
    case RejectReason::kInvalidTagNumber: return "Invalid tag number";
    case RejectReason::kRequiredTagMissing: return "Required tag missing";
    case RejectReason::kTagNotDefinedForMessageType: return "Tag not defined for this message type";
    case RejectReason::kUndefinedTag: return "Undefined Tag";
    case RejectReason::kTagSpecifiedWithoutValue: return "Tag specified without a value";
    case RejectReason::kValueIncorrect: return "Value is incorrect (out of range) for this tag";
    case RejectReason::kIncorrectDataFormat: return "Incorrect data format for value";
    case RejectReason::kDecryptionProblem: return "Decryption problem";
    case RejectReason::kSignatureProblem: return "Signature problem";
    case RejectReason::kCompIdProblem: return "CompID problem";
    case RejectReason::kSendingTimeAccuracyProblem: return "SendingTime accuracy problem";
    case RejectReason::kInvalidMsgType: return "Invalid MsgType";
    case RejectReason::kXmlValidationError: return "XML Validation error";
    case RejectReason::kTagAppearsMoreThanOnce: return "Tag appears more than once";
    case RejectReason::kTagSpecifiedOutOfRequiredOrder: return "Tag specified out of required order";
    case RejectReason::kRepeatingGroupFieldsOutOfOrder: return "Out of order repeating group members";
    case RejectReason::kIncorrectNumInGroupCount: return "Incorrect NumInGroup count for repeating group";
    case RejectReason::kNonDataValueIncludesFieldDelimiter: return "Non Data value includes field delimiter";
    case RejectReason::kInvalidUnsupportedApplVersion: return "Invalid or unsupported application version";
    case RejectReason::kOther: return "Other";
  }
  return "Other";
}

bool parse_begin_string(std::string_view text, FixVersion& out) noexcept {
  if (text == "FIX.4.0") out = FixVersion::kFix40;
  else if (text == "FIX.4.1") out = FixVersion::kFix41;
  else if (text == "FIX.4.2") out = FixVersion::kFix42;
  else if (text == "FIX.4.3") out = FixVersion::kFix43;
  else if (text == "FIX.4.4") out = FixVersion::kFix44;
  else if (text == "FIXT.1.1") out = FixVersion::kFixT11;
  else return false;
  return true;
}

std::string_view begin_string(FixVersion version) noexcept {
  switch (version) {
    case FixVersion::kFix40: return "FIX.4.0";
    case FixVersion::kFix41: return "FIX.4.1";
    case FixVersion::kFix42: return "FIX.4.2";
    case FixVersion::kFix43: return "FIX.4.3";
    case FixVersion::kFix44: return "FIX.4.4";
    case FixVersion::kFixT11: return "FIXT.1.1";
  }
  return "FIX.4.4";
}

bool is_length_tag(int tag, int& data_tag) noexcept {
  // Standard LENGTH -> DATA pairs across FIX 4.0 - 5.0SP2.
  static constexpr int kPairs[][2] = {
      {90, 91},   {93, 89},   {95, 96},   {212, 213}, {348, 349}, {350, 351}, {352, 353},
      {354, 355}, {356, 357}, {358, 359}, {360, 361}, {362, 363}, {364, 365}, {445, 446},
      {618, 619}, {621, 622}, {1184, 1185},
  };
  for (const auto& p : kPairs) {
    if (p[0] == tag) {
      data_tag = p[1];
      return true;
    }
  }
  return false;
}

}  // namespace hft::codec
