// libFuzzer target for the receive path: hostile bytes -> frame -> parse ->
// typed reads -> group walk -> validation against the built-in FIX 4.4
// dictionary, as the session does it. The input is a byte stream that is
// framed repeatedly (resynchronising after garbage); invariants of the
// parser's contract are checked and a violation aborts. The parser's and the
// validator's clean-message paths are held to the general code they skip:
// the same fields, index and status, the same validation result.
//
// Input byte 0 selects framing options (bit 0: max_body_length 512 instead of
// the default, bit 1: no CheckSum verification); a FIX message starts with
// '8' (0x38), which selects the defaults, so plain messages are good seeds.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "codec/parse_access.hpp"
#include "codec/validation_tables.hpp"
#include "hft/codec/dictionary.hpp"
#include "hft/codec/parser.hpp"
#include "hft/codec/types.hpp"
#include "hft/codec/validator.hpp"

using namespace hft::codec;

namespace {

inline void expect(bool ok) {
  if (!ok) __builtin_trap();
}

void check_view(const MessageView& view, std::string_view text) {
  expect(view.size() <= view.max_fields());
  for (std::size_t i = 0; i < view.size(); ++i) {
    const Field& f = view.field(i);
    expect(std::size_t{f.value_offset} + f.value_length <= text.size());
    expect(f.value_offset >= 1 && text[f.value_offset - 1] == '=');
    const std::string_view v = view.value(f);
    expect(v.data() == text.data() + f.value_offset);
    const std::string_view t = view.tag_text(i);
    expect(t.data() >= text.data() && t.data() + t.size() <= text.data() + text.size());
    const int first = view.find(f.tag);
    expect(first >= 0 && static_cast<std::size_t>(first) <= i && view.field(static_cast<std::size_t>(first)).tag == f.tag);
    expect(view.find_from(f.tag, i) == static_cast<int>(i));
  }
}

void read_fields(const MessageView& view) {
  std::int64_t i64 = 0;
  std::uint64_t u64 = 0;
  Decimal d;
  char c = 0;
  bool b = false;
  for (const int tag : {tag::kMsgSeqNum, tag::kOrderQty, tag::kPrice, tag::kSide, tag::kPossDupFlag,
                        tag::kSendingTime, tag::kTransactTime, tag::kHeartBtInt, 9999}) {
    (void)view.get_int(tag, i64);
    (void)view.get_uint(tag, u64);
    (void)view.get_decimal(tag, d);
    (void)view.get_char(tag, c);
    (void)view.get_bool(tag, b);
    (void)view.get_timestamp(tag, i64);
  }
  auto is_party = [](int t) { return t == tag::kPartyID || t == tag::kPartyIDSource || t == tag::kPartyRole; };
  GroupReader g(view, view.find(tag::kNoPartyIDs), tag::kPartyID, is_party);
  std::int64_t entries = 0;
  while (g.next()) {
    expect(g.entry_begin() < g.entry_end() && g.entry_end() <= view.size());
    (void)g.find_in_entry(tag::kPartyRole);
    ++entries;
  }
  expect(entries == g.entries());
}

// parse() (clean path first) against the general loop alone, on the text
// `view` has just parsed with `status`.
void check_general_parse(const MessageView& view, ParseStatus status, std::string_view text) {
  static const auto general = std::make_unique<MessageView>();
  expect(detail::ParseAccess::general(*general, text) == status);
  expect(general->size() == view.size());
  for (std::size_t i = 0; i < view.size(); ++i) {
    const Field& a = view.field(i);
    const Field& b = general->field(i);
    expect(a.tag == b.tag && a.value_offset == b.value_offset && a.value_length == b.value_length);
    expect(view.find(a.tag) == general->find(a.tag));
  }
}

// Validator::validate (clean path first) against the general pass alone.
void check_general_validation(const Dictionary& d, const Validator& validator, const MessageView& view) {
  const ValidationResult a = validator.validate(view);
  const ValidationResult b = detail::general_validation(d, validator.options(), view);
  expect(a.reason == b.reason && a.ref_tag == b.ref_tag && a.text == b.text && a.failure == b.failure);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto dictionary = Dictionary::builtin(FixVersion::kFix44);
  static const Validator validator(*dictionary);
  static const auto view = std::make_unique<MessageView>();

  FrameOptions options;
  if (size > 0 && data[0] != '8') {
    if (data[0] & 1) options.max_body_length = 512;
    if (data[0] & 2) options.verify_checksum = false;
    ++data;
    --size;
  }
  const std::string_view input(reinterpret_cast<const char*>(data), size);

  std::string_view rest = input;
  while (!rest.empty()) {
    const FrameResult r = frame(rest, options);
    if (r.status == FrameStatus::kNeedMore) {
      expect(r.size == 0);
      break;
    }
    expect(r.size >= 1 && r.size <= rest.size());
    if (r.status == FrameStatus::kComplete) {
      const std::string_view msg = rest.substr(0, r.size);
      expect(msg.substr(0, 5) == "8=FIX" && msg.size() >= 7);
      expect(msg.substr(msg.size() - 8, 4) == std::string_view("\x01" "10=", 4) && msg.back() == kSoh);
      const ParseStatus status = view->parse(msg);
      check_view(*view, msg);
      check_general_parse(*view, status, msg);
      check_general_validation(*dictionary, validator, *view);
      if (status == ParseStatus::kOk) {
        expect(view->field(0).tag == tag::kBeginString && view->field(1).tag == tag::kBodyLength);
        read_fields(*view);
        const ValidationResult v = validator.validate(*view);
        expect(v.ok() || !v.text.empty());
      }
    } else {
      expect(r.error != FrameError::kNone);
    }
    rest.remove_prefix(r.size);
  }

  // The parser on its own, on unframed bytes.
  const ParseStatus status = view->parse(input);
  check_view(*view, input);
  check_general_parse(*view, status, input);
  return 0;
}
