// Typed messages from a dictionary of one's own: CMake generates
// "desk/fix.hpp" from desk.xml at build time (hft_generate_messages). This
// encodes a RiskLimitUpdate (35=U9), parses it back and dispatches it.
#include <cstdio>
#include <memory>

#include "desk/fix.hpp"
#include "hft/codec/printer.hpp"

using namespace hft;

struct Handler {
  int on_message(const desk::fix::RiskLimitUpdateReader& u) {
    const auto limit = u.limit();
    std::printf("desk %.*s: %s limit %lld (scale %u)\n", static_cast<int>(u.desk()->size()), u.desk()->data(),
                *u.limit_kind() == desk::fix::LimitKind::kGrossNotional ? "gross" : "net",
                static_cast<long long>(limit->mantissa), static_cast<unsigned>(limit->scale));
    return limit && *u.limit_kind() == desk::fix::LimitKind::kNetPosition ? 0 : 1;
  }
  int on_unhandled(const codec::MessageView& m) {
    std::printf("unexpected MsgType %.*s\n", static_cast<int>(m.msg_type().size()), m.msg_type().data());
    return 1;
  }
};

int main() {
  codec::HeaderTemplate header;
  if (!header.init("FIX.4.4", "RISK", "GATEWAY")) return 1;
  codec::TimestampFormatter ts;
  char buf[256];
  codec::MessageWriter w(buf);
  w.start(header, desk::fix::RiskLimitUpdateWriter::kMsgType, 1, 0, codec::TimePrecision::kMillis, ts);
  desk::fix::RiskLimitUpdateWriter update(w, ts, "EQ-NORDIC", desk::fix::LimitKind::kNetPosition,
                                          codec::Decimal{2500000, 0});
  update.effective_at(0);
  const auto r = w.finish();
  if (!r.ok()) return 1;
  auto view = std::make_unique<codec::MessageView>();
  if (view->parse({r.message.data(), r.message.size()}) != codec::ParseStatus::kOk) return 1;
  std::printf("%s\n", codec::to_printable({r.message.data(), r.message.size()}).c_str());
  Handler h;
  return desk::fix::crack(*view, h);
}
