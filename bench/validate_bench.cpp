// Boundary: frame + parse + validate one ExecutionReport (FIX.4.4, 2 party
// entries) against FIX44.xml, already in memory; no I/O, no copy.
//
// BM_FrameParseValidate gives the per-message cost (Google Benchmark loop,
// use --benchmark_repetitions=5 and read the median). BM_FrameParseValidatePerCall
// times every call with the TSC-free steady clock and reports p50/p90/p99/
// p99.9 and the true maximum in ns (clock read cost included, reported as
// clock_ns). BM_Validate isolates the validator. BM_ValidateRejected is the
// same report with one bad enum value (39=Z): the cost of a message the
// clean-message path hands to the general pass.

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "hft/codec/dictionary.hpp"
#include "hft/codec/parser.hpp"
#include "hft/codec/validator.hpp"

namespace {

using namespace hft::codec;

std::string execution_report(const char* ord_status = "0") {
  std::string body =
      "35=8\x01"
      "34=1234\x01"
      "49=EXECUTOR\x01"
      "52=20261130-14:36:30.691\x01"
      "56=CLIENT1\x01"
      "37=ORD-000123\x01"
      "11=1234\x01"
      "17=EXEC-000456\x01"
      "150=0\x01"
      "39=" +
      std::string(ord_status) +
      "\x01"
      "55=NOKIA.HE\x01"
      "54=1\x01"
      "38=10\x01"
      "44=10000\x01"
      "40=2\x01"
      "59=0\x01"
      "453=2\x01"
      "448=PARTY1\x01"
      "447=D\x01"
      "452=1\x01"
      "448=PARTY2\x01"
      "447=D\x01"
      "452=3\x01"
      "151=10\x01"
      "14=0\x01"
      "6=0\x01"
      "60=20261130-14:36:30.691\x01";
  std::string msg =
      "8=FIX.4.4\x01"
      "9=" +
      std::to_string(body.size()) + "\x01" + body;
  unsigned sum = 0;
  for (char c : msg) sum += static_cast<unsigned char>(c);
  char trailer[16];
  std::snprintf(trailer, sizeof trailer, "10=%03u\x01", sum % 256);
  return msg + trailer;
}

struct Fixture {
  std::shared_ptr<const Dictionary> dict;
  std::string text = execution_report();
  std::unique_ptr<MessageView> view = std::make_unique<MessageView>();

  Fixture() {
    auto loaded = Dictionary::load_file(std::string(HFT_SHARED_DIR) + "/fix/spec/FIX44.xml");
    if (!loaded.ok()) {
      std::fprintf(stderr, "%s\n", loaded.error().message.c_str());
      std::abort();
    }
    dict = loaded.value();
  }
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

// One call of the boundary; false if anything failed (it must not).
inline bool frame_parse_validate(const Validator& v, MessageView& view, std::string_view text) noexcept {
  const FrameResult fr = frame(text);
  if (fr.status != FrameStatus::kComplete) return false;
  if (view.parse(text.substr(0, fr.size)) != ParseStatus::kOk) return false;
  return v.validate(view).ok();
}

void BM_FrameParseValidate(benchmark::State& state) {
  Fixture& f = fixture();
  const Validator v(*f.dict);
  if (!frame_parse_validate(v, *f.view, f.text)) {
    state.SkipWithError("reference ExecutionReport does not validate");
    return;
  }
  for (auto _ : state) {
    std::string_view text = f.text;
    benchmark::DoNotOptimize(text.data());
    const bool ok = frame_parse_validate(v, *f.view, text);
    benchmark::DoNotOptimize(ok);
  }
  state.counters["bytes"] = static_cast<double>(f.text.size());
}
BENCHMARK(BM_FrameParseValidate);

void BM_Validate(benchmark::State& state) {
  Fixture& f = fixture();
  const Validator v(*f.dict);
  if (f.view->parse(f.text) != ParseStatus::kOk) {
    state.SkipWithError("parse failed");
    return;
  }
  for (auto _ : state) {
    const ValidationResult r = v.validate(*f.view);
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_Validate);

void BM_ValidateRejected(benchmark::State& state) {
  Fixture& f = fixture();
  const Validator v(*f.dict);
  const std::string text = execution_report("Z");
  auto view = std::make_unique<MessageView>();
  if (view->parse(text) != ParseStatus::kOk || v.validate(*view).reason != RejectReason::kValueIncorrect) {
    state.SkipWithError("the damaged report is not rejected with 5");
    return;
  }
  for (auto _ : state) {
    const ValidationResult r = v.validate(*view);
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_ValidateRejected);

void BM_FrameParseValidatePerCall(benchmark::State& state) {
  Fixture& f = fixture();
  const Validator v(*f.dict);
  using Clock = std::chrono::steady_clock;
  std::vector<std::int64_t> samples;
  samples.reserve(1 << 20);
  // Clock read cost, measured the same way with an empty body.
  std::vector<std::int64_t> empty;
  empty.reserve(1 << 16);
  for (int i = 0; i < (1 << 16); ++i) {
    const auto t0 = Clock::now();
    const auto t1 = Clock::now();
    empty.push_back((t1 - t0).count());
  }
  std::sort(empty.begin(), empty.end());
  for (auto _ : state) {
    const auto t0 = Clock::now();
    const bool ok = frame_parse_validate(v, *f.view, f.text);
    const auto t1 = Clock::now();
    benchmark::DoNotOptimize(ok);
    if (samples.size() < samples.capacity()) samples.push_back((t1 - t0).count());
  }
  std::sort(samples.begin(), samples.end());
  auto q = [&samples](double p) {
    return static_cast<double>(
        samples[static_cast<std::size_t>(p * static_cast<double>(samples.size() - 1))]);
  };
  if (samples.empty()) return;
  state.counters["p50_ns"] = q(0.50);
  state.counters["p90_ns"] = q(0.90);
  state.counters["p99_ns"] = q(0.99);
  state.counters["p99.9_ns"] = q(0.999);
  state.counters["max_ns"] = static_cast<double>(samples.back());
  state.counters["clock_ns"] = static_cast<double>(empty[empty.size() / 2]);
}
BENCHMARK(BM_FrameParseValidatePerCall);

}  // namespace

BENCHMARK_MAIN();
