// Parser micro-benchmarks (lab lane `codec`).
//
// Boundary: frame() + verify BodyLength and CheckSum + MessageView::parse()
// (split and index all 25 fields) of the reference NewOrderSingle (LAB.md,
// FIXT.1.1, 230 bytes) already in memory. No copy, no validation, no I/O.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "hft/codec/parser.hpp"
#include "hft/core/clock.hpp"
#include "hft/core/cpu.hpp"

namespace {

using namespace hft::codec;

// The reference order with SOH, BodyLength and CheckSum filled in.
std::string with_trailer(std::string begin, std::string body) {
  for (char& c : body) {
    if (c == '|') c = kSoh;
  }
  std::string m = "8=" + begin + kSoh + "9=" + std::to_string(body.size()) + kSoh + body;
  unsigned sum = 0;
  for (const char c : m) sum += static_cast<unsigned char>(c);
  char cs[8];
  std::snprintf(cs, sizeof cs, "10=%03u", sum % 256);
  return m + cs + kSoh;
}

const std::string kOrder = with_trailer(
    "FIXT.1.1",
    "35=D|34=2|49=CLIENT1|52=20261130-14:36:30.691|56=EXECUTOR|50=SNDR_SUB|57=SRVR_SUB|11=1|55=NOKIA.HE|"
    "54=1|38=10|44=10000|40=2|59=0|453=2|448=PARTY1|447=D|452=1|448=PARTY2|447=D|452=3|"
    "60=20261130-14:36:30.691|");
const std::string kExecReport = with_trailer(
    "FIX.4.4",
    "35=8|34=7|49=EXECUTOR|52=20261130-14:36:30.692|56=CLIENT1|37=O1|11=1|17=E1|150=F|39=2|"
    "55=NOKIA.HE|54=1|38=10|44=10000|32=10|31=10000|151=0|14=10|6=10000|60=20261130-14:36:30.692|");

// A receive buffer holding the message at a cache-line boundary.
struct Input {
  explicit Input(const std::string& m) : size(m.size()) { std::memcpy(bytes, m.data(), m.size()); }
  [[nodiscard]] std::string_view view() const noexcept { return {bytes, size}; }
  alignas(64) char bytes[512] = {};
  std::size_t size;
};

void pin() { hft::core::pin_current_thread(hft::core::available_cpus() - 1); }

inline bool frame_and_parse(std::string_view buffer, MessageView& view) noexcept {
  const FrameResult r = frame(buffer);
  if (r.status != FrameStatus::kComplete) return false;
  return view.parse(buffer.substr(0, r.size)) == ParseStatus::kOk;
}

void run_frame_parse(benchmark::State& state, const std::string& message) {
  pin();
  const Input in(message);
  auto view = std::make_unique<MessageView>();
  if (!frame_and_parse(in.view(), *view)) {
    state.SkipWithError("reference message did not frame/parse");
    return;
  }
  for (auto _ : state) {
    std::string_view buffer = in.view();
    benchmark::DoNotOptimize(buffer);
    benchmark::DoNotOptimize(frame_and_parse(buffer, *view));
  }
  state.counters["fields"] = static_cast<double>(view->size());
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(in.size));
}

// The boundary: median of 5 repetitions is the figure to quote.
void BM_FrameParseNewOrderSingle(benchmark::State& state) { run_frame_parse(state, kOrder); }
BENCHMARK(BM_FrameParseNewOrderSingle)->Repetitions(5)->ReportAggregatesOnly(true);

void BM_FrameParseExecutionReport(benchmark::State& state) { run_frame_parse(state, kExecReport); }
BENCHMARK(BM_FrameParseExecutionReport)->Repetitions(5)->ReportAggregatesOnly(true);

// Each call timed with rdtsc (~10 ns of its own included): percentiles and
// the true maximum over the run, in ns.
void BM_FrameParseNewOrderSingleEachCall(benchmark::State& state) {
  pin();
  static const hft::core::TscClock tsc = hft::core::TscClock::calibrate();
  const Input in(kOrder);
  auto view = std::make_unique<MessageView>();
  for (int i = 0; i < 1000; ++i) (void)frame_and_parse(in.view(), *view);  // warm-up
  std::vector<std::uint64_t> ticks;
  ticks.reserve(1 << 24);
  for (auto _ : state) {
    std::string_view buffer = in.view();
    benchmark::DoNotOptimize(buffer);
    const std::uint64_t t0 = hft::core::rdtsc();
    const bool ok = frame_and_parse(buffer, *view);
    benchmark::DoNotOptimize(ok);
    const std::uint64_t t1 = hft::core::rdtsc();
    if (ticks.size() < ticks.capacity()) ticks.push_back(t1 - t0);
  }
  if (ticks.empty()) return;
  std::sort(ticks.begin(), ticks.end());
  const auto at = [&](double q) {
    return tsc.to_ns(ticks[std::min(ticks.size() - 1, static_cast<std::size_t>(q * static_cast<double>(ticks.size())))]);
  };
  state.counters["p50_ns"] = at(0.50);
  state.counters["p90_ns"] = at(0.90);
  state.counters["p99_ns"] = at(0.99);
  state.counters["p99.9_ns"] = at(0.999);
  state.counters["p99.99_ns"] = at(0.9999);
  state.counters["max_ns"] = tsc.to_ns(ticks.back());
}
BENCHMARK(BM_FrameParseNewOrderSingleEachCall);

// Boundary: frame() alone (BodyLength + CheckSum over 223 bytes).
void BM_FrameNewOrderSingle(benchmark::State& state) {
  pin();
  const Input in(kOrder);
  for (auto _ : state) {
    std::string_view buffer = in.view();
    benchmark::DoNotOptimize(buffer);
    benchmark::DoNotOptimize(frame(buffer));
  }
}
BENCHMARK(BM_FrameNewOrderSingle);

// Boundary: MessageView::parse() alone of the framed message.
void BM_ParseNewOrderSingle(benchmark::State& state) {
  pin();
  const Input in(kOrder);
  auto view = std::make_unique<MessageView>();
  for (auto _ : state) {
    std::string_view buffer = in.view();
    benchmark::DoNotOptimize(buffer);
    benchmark::DoNotOptimize(view->parse(buffer));
  }
}
BENCHMARK(BM_ParseNewOrderSingle);

// Boundary: MessageView::parse() of a message the clean-message path leaves to
// the general field loop (a Logon carrying RawData, 95/96, whose bytes include
// SOH and '='): the cost of a message off the fast path.
void BM_ParseLogonWithRawData(benchmark::State& state) {
  pin();
  std::string raw = "ab";
  raw += kSoh;
  raw += "c=d";
  const std::string logon = with_trailer(
      "FIXT.1.1", "35=A|34=1|49=CLIENT1|52=20261130-14:36:30.691|56=EXECUTOR|98=0|108=30|95=" +
                      std::to_string(raw.size()) + "|96=" + raw + "|1137=9|");
  const Input in(logon);
  auto view = std::make_unique<MessageView>();
  if (view->parse(in.view()) != ParseStatus::kOk) {
    state.SkipWithError("logon did not parse");
    return;
  }
  for (auto _ : state) {
    std::string_view buffer = in.view();
    benchmark::DoNotOptimize(buffer);
    benchmark::DoNotOptimize(view->parse(buffer));
  }
  state.counters["fields"] = static_cast<double>(view->size());
}
BENCHMARK(BM_ParseLogonWithRawData);

// Boundary: reading the fields an order handler needs after parse (O(1) finds
// and typed conversions: 34, 11, 55, 54, 38, 44, 40, 60).
void BM_ReadOrderFields(benchmark::State& state) {
  pin();
  const Input in(kOrder);
  auto view = std::make_unique<MessageView>();
  (void)frame_and_parse(in.view(), *view);
  for (auto _ : state) {
    std::int64_t seq = 0, transact = 0;
    std::uint64_t qty = 0;
    Decimal px;
    char side = 0, type = 0;
    benchmark::DoNotOptimize(view->get_int(tag::kMsgSeqNum, seq));
    benchmark::DoNotOptimize(view->get(tag::kClOrdID));
    benchmark::DoNotOptimize(view->get(tag::kSymbol));
    benchmark::DoNotOptimize(view->get_char(tag::kSide, side));
    benchmark::DoNotOptimize(view->get_uint(tag::kOrderQty, qty));
    benchmark::DoNotOptimize(view->get_decimal(tag::kPrice, px));
    benchmark::DoNotOptimize(view->get_char(tag::kOrdType, type));
    benchmark::DoNotOptimize(view->get_timestamp(tag::kTransactTime, transact));
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_ReadOrderFields);

}  // namespace

BENCHMARK_MAIN();
