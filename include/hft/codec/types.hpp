// Basic FIX vocabulary shared by the encoder, parser, dictionaries and
// validator: the delimiter, well-known tags, reject reasons, fixed-point
// decimals and timestamp precisions.
#pragma once

#include <cstdint>
#include <string_view>

namespace hft::codec {

inline constexpr char kSoh = '\x01';

/// Tags the engine itself reads or writes.
namespace tag {
inline constexpr int kAccount = 1;
inline constexpr int kBeginSeqNo = 7;
inline constexpr int kBeginString = 8;
inline constexpr int kBodyLength = 9;
inline constexpr int kCheckSum = 10;
inline constexpr int kClOrdID = 11;
inline constexpr int kEndSeqNo = 16;
inline constexpr int kExecID = 17;
inline constexpr int kHandlInst = 21;
inline constexpr int kMsgSeqNum = 34;
inline constexpr int kMsgType = 35;
inline constexpr int kNewSeqNo = 36;
inline constexpr int kOrderID = 37;
inline constexpr int kOrderQty = 38;
inline constexpr int kOrdStatus = 39;
inline constexpr int kOrdType = 40;
inline constexpr int kPossDupFlag = 43;
inline constexpr int kPrice = 44;
inline constexpr int kRefSeqNum = 45;
inline constexpr int kSenderCompID = 49;
inline constexpr int kSenderSubID = 50;
inline constexpr int kSendingTime = 52;
inline constexpr int kSide = 54;
inline constexpr int kSymbol = 55;
inline constexpr int kTargetCompID = 56;
inline constexpr int kTargetSubID = 57;
inline constexpr int kText = 58;
inline constexpr int kTimeInForce = 59;
inline constexpr int kTransactTime = 60;
inline constexpr int kSignatureLength = 93;
inline constexpr int kSignature = 89;
inline constexpr int kRawDataLength = 95;
inline constexpr int kRawData = 96;
inline constexpr int kPossResend = 97;
inline constexpr int kEncryptMethod = 98;
inline constexpr int kHeartBtInt = 108;
inline constexpr int kTestReqID = 112;
inline constexpr int kOnBehalfOfCompID = 115;
inline constexpr int kDeliverToCompID = 128;
inline constexpr int kOrigSendingTime = 122;
inline constexpr int kGapFillFlag = 123;
inline constexpr int kResetSeqNumFlag = 141;
inline constexpr int kExecType = 150;
inline constexpr int kLeavesQty = 151;
inline constexpr int kCumQty = 14;
inline constexpr int kAvgPx = 6;
inline constexpr int kLastQty = 32;
inline constexpr int kLastPx = 31;
inline constexpr int kXmlDataLen = 212;
inline constexpr int kXmlData = 213;
inline constexpr int kHeadline = 148;
inline constexpr int kLastMsgSeqNumProcessed = 369;
inline constexpr int kRefTagID = 371;
inline constexpr int kRefMsgType = 372;
inline constexpr int kSessionRejectReason = 373;
inline constexpr int kBusinessRejectRefID = 379;
inline constexpr int kBusinessRejectReason = 380;
inline constexpr int kMaxMessageSize = 383;
inline constexpr int kNoPartyIDs = 453;
inline constexpr int kPartyID = 448;
inline constexpr int kPartyIDSource = 447;
inline constexpr int kPartyRole = 452;
inline constexpr int kUsername = 553;
inline constexpr int kPassword = 554;
inline constexpr int kNextExpectedMsgSeqNum = 789;
inline constexpr int kNewPassword = 925;
inline constexpr int kApplVerID = 1128;
inline constexpr int kDefaultApplVerID = 1137;
}  // namespace tag

/// SessionRejectReason (373) values.
enum class RejectReason : std::int16_t {
  kNone = -1,
  kInvalidTagNumber = 0,
  kRequiredTagMissing = 1,
  kTagNotDefinedForMessageType = 2,
  kUndefinedTag = 3,
  kTagSpecifiedWithoutValue = 4,
  kValueIncorrect = 5,
  kIncorrectDataFormat = 6,
  kDecryptionProblem = 7,
  kSignatureProblem = 8,
  kCompIdProblem = 9,
  kSendingTimeAccuracyProblem = 10,
  kInvalidMsgType = 11,
  kXmlValidationError = 12,
  kTagAppearsMoreThanOnce = 13,
  kTagSpecifiedOutOfRequiredOrder = 14,
  kRepeatingGroupFieldsOutOfOrder = 15,
  kIncorrectNumInGroupCount = 16,
  kNonDataValueIncludesFieldDelimiter = 17,
  kInvalidUnsupportedApplVersion = 18,
  kOther = 99,
};

/// The standard Text (58) for a reject reason, as QuickFIX and the session
/// conformance scripts word it ("Required tag missing", ...).
[[nodiscard]] std::string_view reject_reason_text(RejectReason reason) noexcept;

/// Fixed-point decimal: value = mantissa * 10^-scale. No double on the wire path.
struct Decimal {
  std::int64_t mantissa = 0;
  std::uint8_t scale = 0;  ///< digits after the decimal point (0..18)

  friend bool operator==(const Decimal&, const Decimal&) = default;
};

/// Sub-second digits of a UTCTimestamp / UTCTimeOnly.
enum class TimePrecision : std::uint8_t {
  kSeconds = 0,  ///< YYYYMMDD-HH:MM:SS
  kMillis = 3,   ///< YYYYMMDD-HH:MM:SS.sss
  kMicros = 6,   ///< YYYYMMDD-HH:MM:SS.ssssss
  kNanos = 9,    ///< YYYYMMDD-HH:MM:SS.sssssssss
};

/// Begin strings the engine speaks.
enum class FixVersion : std::uint8_t { kFix40, kFix41, kFix42, kFix43, kFix44, kFixT11 };

/// "FIX.4.2" -> kFix42 ...; false if unknown.
[[nodiscard]] bool parse_begin_string(std::string_view text, FixVersion& out) noexcept;
/// kFix42 -> "FIX.4.2" ...
[[nodiscard]] std::string_view begin_string(FixVersion version) noexcept;

/// True for tags whose value is the byte length of the following data field
/// (95->96, 212->213, 93->89, ...); `data_tag` receives the data field's tag.
/// This is the built-in table; a dictionary can add pairs (LENGTH followed by DATA).
[[nodiscard]] bool is_length_tag(int tag, int& data_tag) noexcept;

}  // namespace hft::codec
