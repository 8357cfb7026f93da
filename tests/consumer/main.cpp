// Consumer of an installed libhft: encodes a typed FIX 4.4 NewOrderSingle
// and a message of its own dictionary, frames and reads them back, and asks
// the audit layer about a journal directory that is not there.
#include <cstdio>
#include <memory>
#include <string>

#include "acme/fix.hpp"
#include "hft/audit/journal_audit.hpp"
#include "hft/codec/encoder.hpp"
#include "hft/codec/parser.hpp"
#include "hft/messages/fix44.hpp"

// The installed targets must not choose the consumer's flags (STYLE.md rule
// 17): no sanitizer, and the consumer's own -O2 in force. (The compile
// commands are checked for -march, -W and -fsanitize as well.)
#if defined(__SANITIZE_ADDRESS__)
#error "a sanitizer flag reached the consumer through libhft's targets"
#endif
#if !defined(__OPTIMIZE__)
#error "the consumer's -O2 did not reach the compiler"
#endif
static_assert(__cplusplus >= 202002L, "hft::codec carries C++20 to its consumers");

int main() {
  hft::codec::HeaderTemplate header;
  if (!header.init("FIX.4.4", "A", "B")) return 1;
  hft::codec::TimestampFormatter ts;
  char buf[512];
  hft::codec::MessageWriter w(buf);
  w.start(header, hft::fix44::NewOrderSingleWriter::kMsgType, 1, 0, hft::codec::TimePrecision::kMillis, ts);
  hft::fix44::NewOrderSingleWriter order(w, ts, "ORD1", hft::fix44::Side::kBuy, 0, hft::fix44::OrdType::kLimit);
  order.price({1005, 1});
  const auto r = w.finish();
  if (!r.ok()) return 1;
  const auto f = hft::codec::frame({r.message.data(), r.message.size()});
  if (f.status != hft::codec::FrameStatus::kComplete || f.size != r.message.size()) return 1;
  auto view = std::make_unique<hft::codec::MessageView>();
  if (view->parse({r.message.data(), r.message.size()}) != hft::codec::ParseStatus::kOk) return 1;
  const hft::fix44::NewOrderSingleReader back(*view);
  if (*back.cl_ord_id() != "ORD1" || back.price()->mantissa != 1005) return 1;

  w.start(header, acme::fix::VenueQuoteWriter::kMsgType, 2, 0, hft::codec::TimePrecision::kMillis, ts);
  acme::fix::VenueQuoteWriter quote(w, ts, "Q1", acme::fix::Urgency::kRoutine);
  quote.venue(acme::fix::Venue::kHelsinki);
  const auto q = w.finish();
  if (!q.ok()) return 1;
  // hft::audit links (codec and store come with it): a missing directory is
  // an Error naming it, not a crash.
  const auto missing = hft::audit::resolve_journals("/nonexistent/hft-consumer-journal");
  if (missing.ok() || missing.error().message.find("/nonexistent/hft-consumer-journal") == std::string::npos)
    return 1;
  std::printf("consumer ok: %zu and %zu bytes\n", r.message.size(), q.message.size());
  return 0;
}
