// Typed messages against the hand-written codec calls (lab lane `codec`).
//
// Boundary (encode): the reference NewOrderSingle (LAB.md, FIXT.1.1, 50/57
// static header fields, two parties) with a new MsgSeqNum, ClOrdID and
// SendingTime/TransactTime per call, into a preallocated buffer: start, the
// fields, finish (BodyLength and CheckSum); typed through the generated
// FIX 5.0SP2 NewOrderSingleWriter, and hand-written through
// MessageWriter::add_* in the same field order (encode_bench's
// BM_EncodeNewOrderSingle has LAB.md's order). No clock read, no journal,
// no send().
//
// Boundary (read): after parse, reading the fields an order handler uses
// from the reference ExecutionReport (FIX.4.4, 20 fields: 37, 11, 17, 150,
// 39, 55, 54, 38, 44, 32, 31, 151, 14, 6, 60) through the generated
// ExecutionReportReader, and through MessageView::get / get_* by hand.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "hft/bench/fix50sp2.hpp"  // bench/CMakeLists.txt: NewOrderSingle of FIX50SP2.xml
#include "hft/codec/encoder.hpp"
#include "hft/codec/parser.hpp"
#include "hft/core/cpu.hpp"
#include "hft/messages/fix44.hpp"
#include "support/fix_text.hpp"

namespace {

using namespace hft;
using namespace hft::codec;
namespace sp2 = hft::bench::fix50sp2;

constexpr std::int64_t kStartTime = 1'796'049'390'691'000'000LL;  // 2026-11-30 14:36:30.691 UTC
constexpr std::int64_t kStepNs = 1'000;

struct Encoder {
  Encoder() {
    if (!header.init("FIXT.1.1", "CLIENT1", "EXECUTOR",
                     "50=SNDR_SUB\x01"
                     "57=SRVR_SUB\x01"))
      std::abort();
  }
  HeaderTemplate header;
  TimestampFormatter formatter;
  alignas(64) char buffer[512] = {};
};

inline MessageWriter::Result typed_order(Encoder& e, std::uint64_t seq, std::int64_t now) noexcept {
  MessageWriter w(e.buffer);
  w.start(e.header, sp2::NewOrderSingleWriter::kMsgType, seq, now, TimePrecision::kMillis, e.formatter);
  char id[24];
  sp2::NewOrderSingleWriter order(w, e.formatter, {id, format_uint(id, seq - 1)}, sp2::Side::kBuy, now,
                                  sp2::OrdType::kLimit);
  order.instrument().symbol("NOKIA.HE");
  order.order_qty_data().order_qty(Decimal{10, 0});
  order.price(Decimal{10000, 0}).time_in_force(sp2::TimeInForce::kDay);
  {
    auto parties = order.parties().no_party_ids(2);
    parties.add("PARTY1")
        .party_id_source(sp2::PartyIDSource::kProprietary)
        .party_role(sp2::PartyRole::kExecutingFirm);
    parties.add("PARTY2")
        .party_id_source(sp2::PartyIDSource::kProprietary)
        .party_role(sp2::PartyRole::kClientId);
  }
  return w.finish();
}

inline void add_parties(MessageWriter& w) noexcept {
  w.add_uint(tag::kNoPartyIDs, 2);
  w.add(tag::kPartyID, "PARTY1");
  w.add_char(tag::kPartyIDSource, 'D');
  w.add_int(tag::kPartyRole, 1);
  w.add(tag::kPartyID, "PARTY2");
  w.add_char(tag::kPartyIDSource, 'D');
  w.add_int(tag::kPartyRole, 3);
}

// The same fields in the same order, by hand.
inline MessageWriter::Result hand_order(Encoder& e, std::uint64_t seq, std::int64_t now) noexcept {
  MessageWriter w(e.buffer);
  w.start(e.header, "D", seq, now, TimePrecision::kMillis, e.formatter);
  // ClOrdID is a STRING: the typed writer takes its text, so it is formatted
  // here too (encode_bench's add_uint skips that copy).
  char id[24];
  w.add(tag::kClOrdID, {id, format_uint(id, seq - 1)});
  w.add_char(tag::kSide, '1');
  w.add_timestamp(tag::kTransactTime, now, TimePrecision::kMillis, e.formatter);
  w.add_char(tag::kOrdType, '2');
  w.add(tag::kSymbol, "NOKIA.HE");
  w.add_decimal(tag::kOrderQty, Decimal{10, 0});
  w.add_decimal(tag::kPrice, Decimal{10000, 0});
  w.add_char(tag::kTimeInForce, '0');
  add_parties(w);
  return w.finish();
}

void pin() {
  hft::core::pin_current_thread(hft::core::available_cpus() - 1);
}

template <MessageWriter::Result (*kEncode)(Encoder&, std::uint64_t, std::int64_t) noexcept>
void run_encode(benchmark::State& state) {
  pin();
  Encoder e;
  std::uint64_t seq = 2;
  std::int64_t now = kStartTime;
  std::size_t bytes = 0;
  if (!kEncode(e, seq, now).ok()) {
    state.SkipWithError("the order did not encode");
    return;
  }
  for (auto _ : state) {
    const auto r = kEncode(e, seq++, now);
    now += kStepNs;
    benchmark::DoNotOptimize(r.message.data());
    bytes += r.message.size();
  }
  state.counters["msg_bytes"] = static_cast<double>(bytes) / static_cast<double>(state.iterations());
}
void BM_TypedEncodeNewOrderSingle(benchmark::State& s) {
  run_encode<typed_order>(s);
}
void BM_HandEncodeNewOrderSingle(benchmark::State& s) {
  run_encode<hand_order>(s);
}
BENCHMARK(BM_TypedEncodeNewOrderSingle);
BENCHMARK(BM_HandEncodeNewOrderSingle);

const std::string kExecReport = hft::test::with_trailer(
    "FIX.4.4",
    hft::test::soh(
        "35=8|34=7|49=EXECUTOR|52=20261130-14:36:30.692|56=CLIENT1|37=O1|11=1|17=E1|150=F|39=2|"
        "55=NOKIA.HE|54=1|38=10|44=10000|32=10|31=10000|151=0|14=10|6=10000|60=20261130-14:36:30.692|"));

struct Report {
  std::string_view order_id, cl_ord_id, exec_id, symbol;
  char exec_type = 0, ord_status = 0, side = 0;
  Decimal qty, px, last_qty, last_px, leaves, cum, avg;
  std::int64_t transact = 0;
};

inline void typed_read(const MessageView& v, Report& r) noexcept {
  const fix44::ExecutionReportReader er(v);
  r.order_id = er.order_id().value_or({});
  r.cl_ord_id = er.cl_ord_id().value_or({});
  r.exec_id = er.exec_id().value_or({});
  r.exec_type = static_cast<char>(er.exec_type().value_or(fix44::ExecType::kNew));
  r.ord_status = static_cast<char>(er.ord_status().value_or(fix44::OrdStatus::kNew));
  r.symbol = er.instrument().symbol().value_or({});
  r.side = static_cast<char>(er.side().value_or(fix44::Side::kBuy));
  r.qty = er.order_qty_data().order_qty().value_or({});
  r.px = er.price().value_or({});
  r.last_qty = er.last_qty().value_or({});
  r.last_px = er.last_px().value_or({});
  r.leaves = er.leaves_qty().value_or({});
  r.cum = er.cum_qty().value_or({});
  r.avg = er.avg_px().value_or({});
  r.transact = er.transact_time().value_or({}).epoch_ns;
}

inline void hand_read(const MessageView& v, Report& r) noexcept {
  r.order_id = v.get(tag::kOrderID);
  r.cl_ord_id = v.get(tag::kClOrdID);
  r.exec_id = v.get(tag::kExecID);
  (void)v.get_char(tag::kExecType, r.exec_type);
  (void)v.get_char(tag::kOrdStatus, r.ord_status);
  r.symbol = v.get(tag::kSymbol);
  (void)v.get_char(tag::kSide, r.side);
  (void)v.get_decimal(tag::kOrderQty, r.qty);
  (void)v.get_decimal(tag::kPrice, r.px);
  (void)v.get_decimal(tag::kLastQty, r.last_qty);
  (void)v.get_decimal(tag::kLastPx, r.last_px);
  (void)v.get_decimal(tag::kLeavesQty, r.leaves);
  (void)v.get_decimal(tag::kCumQty, r.cum);
  (void)v.get_decimal(tag::kAvgPx, r.avg);
  (void)v.get_timestamp(tag::kTransactTime, r.transact);
}

template <void (*kRead)(const MessageView&, Report&) noexcept>
void run_read(benchmark::State& state) {
  pin();
  auto view = std::make_unique<MessageView>();
  if (view->parse(kExecReport) != ParseStatus::kOk) {
    state.SkipWithError("reference report did not parse");
    return;
  }
  Report r;
  for (auto _ : state) {
    kRead(*view, r);
    benchmark::DoNotOptimize(r);
    benchmark::ClobberMemory();
  }
}
void BM_TypedReadExecutionReport(benchmark::State& s) {
  run_read<typed_read>(s);
}
void BM_HandReadExecutionReport(benchmark::State& s) {
  run_read<hand_read>(s);
}
BENCHMARK(BM_TypedReadExecutionReport);
BENCHMARK(BM_HandReadExecutionReport);

}  // namespace

BENCHMARK_MAIN();
