// hft-demo: encodes the lab's reference NewOrderSingle, frames, parses and
// validates it against the built-in or a given dictionary, and prints it with
// tag and enum names.
//
//   hft-demo [DICTIONARY.xml [APP_DICTIONARY.xml]]
#include <cstdio>
#include <string>

#include "hft/codec/dictionary.hpp"
#include "hft/codec/encoder.hpp"
#include "hft/codec/parser.hpp"
#include "hft/codec/printer.hpp"
#include "hft/codec/validator.hpp"
#include "hft/core/clock.hpp"

namespace codec = hft::codec;

int main(int argc, char** argv) {
  std::shared_ptr<const codec::Dictionary> dict;
  if (argc >= 2) {
    auto loaded = codec::Dictionary::load_file(argv[1]);
    if (!loaded) {
      std::fprintf(stderr, "hft-demo: %s\n", loaded.error().message.c_str());
      return 2;
    }
    dict = *loaded;
    if (argc >= 3) {
      auto app = codec::Dictionary::load_file(argv[2]);
      if (!app) {
        std::fprintf(stderr, "hft-demo: %s\n", app.error().message.c_str());
        return 2;
      }
      dict = codec::Dictionary::combine(*dict, **app);
    }
  } else {
    dict = codec::Dictionary::builtin(codec::FixVersion::kFixT11);
  }

  codec::HeaderTemplate header;
  if (!header.init("FIXT.1.1", "CLIENT1", "EXECUTOR", "50=SNDR_SUB\x01" "57=SRVR_SUB\x01")) {
    std::fprintf(stderr, "hft-demo: header template does not fit\n");
    return 1;
  }
  codec::TimestampFormatter clock_text;
  char buffer[512];
  codec::MessageWriter w(buffer);
  const auto now = hft::core::realtime_ns();
  w.start(header, "D", 2, now, codec::TimePrecision::kMillis, clock_text);
  w.add(codec::tag::kClOrdID, "1");
  w.add(codec::tag::kSymbol, "NOKIA.HE");
  w.add_char(codec::tag::kSide, '1');
  w.add_int(codec::tag::kOrderQty, 10);
  w.add_decimal(codec::tag::kPrice, codec::Decimal{10000, 0});
  w.add_char(codec::tag::kOrdType, '2');
  w.add_char(codec::tag::kTimeInForce, '0');
  w.add_int(codec::tag::kNoPartyIDs, 2);
  w.add(codec::tag::kPartyID, "PARTY1");
  w.add_char(codec::tag::kPartyIDSource, 'D');
  w.add_int(codec::tag::kPartyRole, 1);
  w.add(codec::tag::kPartyID, "PARTY2");
  w.add_char(codec::tag::kPartyIDSource, 'D');
  w.add_int(codec::tag::kPartyRole, 3);
  w.add_timestamp(codec::tag::kTransactTime, now, codec::TimePrecision::kMillis, clock_text);
  const auto encoded = w.finish();
  if (!encoded.ok()) {
    std::fprintf(stderr, "hft-demo: encoding failed\n");
    return 1;
  }
  const std::string_view wire(encoded.message.data(), encoded.message.size());
  std::printf("wire (%zu bytes):\n  %s\n", wire.size(), codec::to_printable(wire).c_str());

  const auto framed = codec::frame(wire);
  if (framed.status != codec::FrameStatus::kComplete) {
    std::fprintf(stderr, "hft-demo: framing failed: %s\n", std::string(codec::to_string(framed.error)).c_str());
    return 1;
  }
  static codec::MessageView view;  // 10 KiB: keep it off the stack
  if (view.parse(wire.substr(0, framed.size)) != codec::ParseStatus::kOk) {
    std::fprintf(stderr, "hft-demo: parse failed\n");
    return 1;
  }
  const codec::Validator validator(*dict);
  const auto result = validator.validate(view);
  std::printf("framed: %zu bytes, %zu fields; validation against %s: %s", framed.size, view.size(),
              dict->version().c_str(), result.ok() ? "ok\n" : "FAILED: ");
  if (!result.ok()) {
    std::printf("%.*s (tag %d, reason %d)\n", static_cast<int>(result.text.size()), result.text.data(),
                result.ref_tag, static_cast<int>(result.reason));
  }
  std::printf("named:\n  %s\n", codec::to_named(wire, *dict).c_str());
  std::printf("tree:\n%s", codec::to_tree(wire, *dict).c_str());
  return result.ok() ? 0 : 1;
}
