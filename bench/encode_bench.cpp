// Encoder micro-benchmarks (lab lane `codec`).
//
// Boundary: encode the reference NewOrderSingle (LAB.md, FIXT.1.1, 230-242
// bytes) with a new MsgSeqNum, ClOrdID and SendingTime/TransactTime per call
// into a preallocated buffer: start + 15 add_* + finish (BodyLength and
// CheckSum). No clock read, no journal, no send().
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "hft/codec/encoder.hpp"
#include "hft/core/clock.hpp"
#include "hft/core/cpu.hpp"

namespace {

using namespace hft::codec;

// 2026-11-30 14:36:30.691 UTC
constexpr std::int64_t kStartTime = 1'796'049'390'691'000'000LL;
// Simulated time advances 1 us per message: the cached date/time text is
// refreshed once every 10^6 messages, as at a million messages per second.
constexpr std::int64_t kStepNs = 1'000;

struct Encoder {
  Encoder() {
    if (!header.init("FIXT.1.1", "CLIENT1", "EXECUTOR", "50=SNDR_SUB\x01" "57=SRVR_SUB\x01")) std::abort();
  }
  HeaderTemplate header;
  TimestampFormatter formatter;
  alignas(64) char buffer[512] = {};
};

// The lab's reference order; MsgSeqNum and ClOrdID grow from 2 and 1.
inline MessageWriter::Result encode_order(Encoder& e, std::uint64_t seq, std::int64_t now) noexcept {
  MessageWriter w(e.buffer);
  w.start(e.header, "D", seq, now, TimePrecision::kMillis, e.formatter);
  w.add_uint(tag::kClOrdID, seq - 1);
  w.add(tag::kSymbol, "NOKIA.HE");
  w.add_char(tag::kSide, '1');
  w.add_int(tag::kOrderQty, 10);
  w.add_decimal(tag::kPrice, Decimal{10000, 0});
  w.add_char(tag::kOrdType, '2');
  w.add_char(tag::kTimeInForce, '0');
  w.add_uint(tag::kNoPartyIDs, 2);
  w.add(tag::kPartyID, "PARTY1");
  w.add_char(tag::kPartyIDSource, 'D');
  w.add_int(tag::kPartyRole, 1);
  w.add(tag::kPartyID, "PARTY2");
  w.add_char(tag::kPartyIDSource, 'D');
  w.add_int(tag::kPartyRole, 3);
  w.add_timestamp(tag::kTransactTime, now, TimePrecision::kMillis, e.formatter);
  return w.finish();
}

void pin() { hft::core::pin_current_thread(hft::core::available_cpus() - 1); }

void BM_EncodeNewOrderSingle(benchmark::State& state) {
  pin();
  Encoder e;
  std::uint64_t seq = 2;
  std::int64_t now = kStartTime;
  std::size_t bytes = 0;
  for (auto _ : state) {
    const auto r = encode_order(e, seq++, now);
    now += kStepNs;
    benchmark::DoNotOptimize(r.message.data());
    bytes += r.message.size();
  }
  state.counters["msg_bytes"] = static_cast<double>(bytes) / static_cast<double>(state.iterations());
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
}
BENCHMARK(BM_EncodeNewOrderSingle);

// Same, with a CLOCK_REALTIME read per message for 52 and 60 (as a sender does).
void BM_EncodeNewOrderSingleWithClock(benchmark::State& state) {
  pin();
  Encoder e;
  std::uint64_t seq = 2;
  for (auto _ : state) {
    const auto r = encode_order(e, seq++, hft::core::realtime_ns());
    benchmark::DoNotOptimize(r.message.data());
  }
}
BENCHMARK(BM_EncodeNewOrderSingleWithClock);

// Each call timed with rdtsc (~10 ns of its own included): percentiles and
// the true maximum over the run, in ns.
void BM_EncodeNewOrderSingleEachCall(benchmark::State& state) {
  pin();
  static const hft::core::TscClock tsc = hft::core::TscClock::calibrate();
  Encoder e;
  std::uint64_t seq = 2;
  std::int64_t now = kStartTime;
  for (int i = 0; i < 1000; ++i) (void)encode_order(e, seq++, now += kStepNs);  // warm-up
  std::vector<std::uint64_t> ticks;
  ticks.reserve(1 << 22);
  for (auto _ : state) {
    const std::uint64_t t0 = hft::core::rdtsc();
    const auto r = encode_order(e, seq++, now);
    benchmark::DoNotOptimize(r.message.data());
    const std::uint64_t t1 = hft::core::rdtsc();
    now += kStepNs;
    if (ticks.size() < ticks.capacity()) ticks.push_back(t1 - t0);
  }
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
BENCHMARK(BM_EncodeNewOrderSingleEachCall);

// Boundary: CheckSum of the 230 bytes before "10=" of the reference message.
void BM_Checksum230(benchmark::State& state) {
  Encoder e;
  const auto r = encode_order(e, 2, kStartTime);
  const std::string_view bytes(r.message.data(), 230);
  for (auto _ : state) {
    benchmark::DoNotOptimize(bytes.data());
    benchmark::DoNotOptimize(checksum(bytes));
  }
}
BENCHMARK(BM_Checksum230);

// Boundary: one millisecond SendingTime from ns, date/time text cached.
void BM_FormatTimestampMillis(benchmark::State& state) {
  TimestampFormatter f;
  char out[32];
  std::int64_t now = kStartTime;
  for (auto _ : state) {
    benchmark::DoNotOptimize(f.format(out, now += kStepNs, TimePrecision::kMillis));
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_FormatTimestampMillis);

// Boundary: the cache-miss path, a new second on every call.
void BM_FormatTimestampNewSecond(benchmark::State& state) {
  TimestampFormatter f;
  char out[32];
  std::int64_t now = kStartTime;
  for (auto _ : state) {
    benchmark::DoNotOptimize(f.format(out, now += 1'000'000'001, TimePrecision::kMillis));
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_FormatTimestampNewSecond);

// Boundary: one integer of 1..20 digits.
void BM_FormatUint(benchmark::State& state) {
  char out[24];
  std::uint64_t v = 1;
  for (auto _ : state) {
    benchmark::DoNotOptimize(format_uint(out, v));
    benchmark::ClobberMemory();
    v = v * 7 + 3;
  }
}
BENCHMARK(BM_FormatUint);

}  // namespace

BENCHMARK_MAIN();
