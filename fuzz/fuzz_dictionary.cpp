// libFuzzer target for the QuickFIX XML dictionary loader: hostile XML
// through Dictionary::load_string, then the loaded dictionary put to work:
// combined with the built-in FIXT.1.1 transport dictionary, and a few
// messages (session messages, an order with a repeating group, the
// dictionary's own message types with every field it lists) validated with
// it, the clean-message path held to the general pass.
// Invariants: no crash or hang (component cycles, deep nesting); a refusal is
// an Error "fuzz.xml:LINE: problem"; validation of anything with a loaded
// dictionary returns ok or a reason with a text.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "codec/validation_tables.hpp"
#include "hft/codec/dictionary.hpp"
#include "hft/codec/parser.hpp"
#include "hft/codec/validator.hpp"
#include "support/fix_text.hpp"

using namespace hft::codec;

namespace {

inline void expect(bool ok) {
  if (!ok) __builtin_trap();
}

// "8=<begin>^9=<n>^<fields>10=<ck>^", '|' in `fields` standing for SOH.
std::string framed(std::string_view begin, std::string_view fields) {
  return hft::test::with_trailer(begin, hft::test::soh(fields));
}

void check(const Dictionary& d, const Validator& v, MessageView& view, const std::string& text) {
  if (view.parse(text) != ParseStatus::kOk) return;
  const ValidationResult a = v.validate(view);
  const ValidationResult b = detail::general_validation(d, v.options(), view);
  expect(a.reason == b.reason && a.ref_tag == b.ref_tag && a.text == b.text && a.failure == b.failure);
  expect(a.ok() || !a.text.empty());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view xml(reinterpret_cast<const char*>(data), size);
  auto loaded = Dictionary::load_string(xml, "fuzz.xml");
  if (!loaded) {
    expect(loaded.error().message.rfind("fuzz.xml:", 0) == 0);
    return 0;
  }
  std::shared_ptr<const Dictionary> d = *loaded;
  if (d->begin_string() == "FIXT.1.1" && d->version().rfind("FIX.5", 0) == 0) {
    d = Dictionary::combine(*Dictionary::builtin(FixVersion::kFixT11), *d);
  }
  const std::string begin = d->begin_string().empty() ? "FIX.4.4" : d->begin_string();
  static const auto view = std::make_unique<MessageView>();
  const Validator strict(*d);
  ValidationOptions lax;
  lax.check_fields_out_of_order = false;
  lax.check_user_defined_fields = false;
  lax.allow_unknown_message_fields = true;
  const Validator loose(*d, lax);
  const std::string head = "34=2|49=A|52=20240315-12:00:00.000|56=B|";
  const std::string messages[] = {
      framed(begin, "35=A|" + head + "98=0|108=30|"),
      framed(begin, "35=0|" + head),
      framed(begin, "35=D|" + head +
                        "11=X|21=1|55=IBM|54=1|60=20240315-12:00:00|40=2|44=1.5|38=100|"
                        "453=2|448=P1|447=D|452=1|448=P2|447=D|452=3|"),
      framed(begin, "35=8|" + head + "37=1|17=1|150=0|39=0|55=IBM|54=1|151=0|14=0|6=0|"),
  };
  for (const std::string& m : messages) {
    check(*d, strict, *view, m);
    check(*d, loose, *view, m);
  }
  // The dictionary's own message types with every field it lists.
  for (const MessageDef& def : d->messages()) {
    if (def.msg_type.find_first_of("|\x01=") != std::string::npos) continue;
    std::string body = "35=" + def.msg_type + "|" + head;
    for (const auto& member : def.fields.members) body += std::to_string(member.tag) + "=1|";
    const std::string m = framed(begin, body);
    check(*d, strict, *view, m);
    check(*d, loose, *view, m);
  }
  return 0;
}
