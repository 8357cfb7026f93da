// The codec lane: libhft's codec on the reference messages, no I/O, one
// fenced-rdtsc sample per call on the pinned client thread.
//
// Every call handles both reference messages, each timed on its own:
//   new_order_single   the LAB.md NewOrderSingle (FIXT.1.1, 49/50/56/57,
//                      453 with two parties, ms timestamps)
//   execution_report   the ExecutionReport hft-venue answers it with
//
// Variants (what one sample covers):
//   encode    MessageWriter::start (header template, 34, 52 from a given
//             time) + body fields + finish (BodyLength, CheckSum)
//   parse     frame() (BodyLength, CheckSum verified) + MessageView::parse
//   validate  frame() + parse + Validator::validate against FIXT11 +
//             FIX50SP2 (what an acceptor does before the application)
// Inputs for parse/validate are a ring of 1,024 messages encoded up front
// with different ClOrdIDs and sequence numbers. The clock reads for the
// timestamps are outside the samples. The audit checks every encoded
// message frames with the right CheckSum, and every parse/validation passed.
#include <array>
#include <optional>
#include <thread>
#include <vector>

#include "hft/codec/dictionary.hpp"
#include "hft/codec/encoder.hpp"
#include "hft/codec/parser.hpp"
#include "hft/codec/validator.hpp"
#include "hft/core/clock.hpp"
#include "hft/core/cpu.hpp"
#include "lane_support.hpp"

namespace hft::lab::lanes {
namespace {

namespace tag = codec::tag;

constexpr std::size_t kRing = 1024;
constexpr std::size_t kSlot = 512;

struct Templates {
  codec::HeaderTemplate order;   // CLIENT1 -> EXECUTOR
  codec::HeaderTemplate report;  // EXECUTOR -> CLIENT1
};

Expected<Templates> make_templates() {
  Templates t;
  const std::string client_sub = "50=" + std::string(ref::kSenderSub) + "\x01" "57=" + std::string(ref::kTargetSub) + "\x01";
  const std::string venue_sub = "50=" + std::string(ref::kTargetSub) + "\x01" "57=" + std::string(ref::kSenderSub) + "\x01";
  if (!t.order.init(ref::kBeginString, ref::kSender, ref::kTarget, client_sub) ||
      !t.report.init(ref::kBeginString, ref::kTarget, ref::kSender, venue_sub)) {
    return Error{"codec: header templates refused"};
  }
  return t;
}


inline void fill_report(codec::MessageWriter& w, std::uint64_t id, std::int64_t now_ns,
                        codec::TimestampFormatter& f) noexcept {
  w.add_uint(tag::kOrderID, id + 1);
  w.add_uint(tag::kClOrdID, id);
  w.add_uint(tag::kExecID, id + 1);
  w.add_char(tag::kExecType, '0');
  w.add_char(tag::kOrdStatus, '0');
  w.add(tag::kSymbol, ref::kSymbol);
  w.add_char(tag::kSide, ref::kSide);
  w.add_int(tag::kOrderQty, ref::kOrderQty);
  w.add_int(tag::kPrice, ref::kPrice);
  w.add_int(tag::kLeavesQty, ref::kOrderQty);
  w.add_int(tag::kCumQty, 0);
  w.add_int(tag::kAvgPx, 0);
  w.add_timestamp(tag::kTransactTime, now_ns, codec::TimePrecision::kMillis, f);
}

struct Ring {
  std::vector<char> bytes = std::vector<char>(kRing * kSlot);
  std::array<std::size_t, kRing> offset{};
  std::array<std::size_t, kRing> size{};
  [[nodiscard]] std::string_view at(std::size_t k) const noexcept {
    return {bytes.data() + offset[k % kRing], size[k % kRing]};
  }
};

template <typename Fill>
Expected<Ring> encode_ring(const codec::HeaderTemplate& h, const char* type, Fill fill) {
  Ring ring;
  codec::TimestampFormatter f;
  const std::int64_t now = core::realtime_ns();
  for (std::size_t k = 0; k < kRing; ++k) {
    codec::MessageWriter w(std::span<char>(ring.bytes.data() + k * kSlot, kSlot));
    w.start(h, type, k + 2, now, codec::TimePrecision::kMillis, f);
    fill(w, k + 1, now, f);
    const auto r = w.finish();
    if (!r.ok()) return Error{"codec: encoding the reference message failed"};
    ring.offset[k] = static_cast<std::size_t>(r.message.data() - ring.bytes.data());
    ring.size[k] = r.message.size();
  }
  return ring;
}

enum class Op : std::uint8_t { kEncode, kParse, kValidate };

struct Outcome {
  std::optional<Error> error;
  RunResult result;
};

void run_codec_thread(const LaneConfig& cfg, RunContext& ctx, Op op, Outcome& out) {
  core::name_current_thread("codec-lane");
  ThreadPlacement place{"client", cfg.client_core, -1, -1};
  if (!core::pin_current_thread(cfg.client_core)) {
    out.error = Error{"cannot pin to CPU " + std::to_string(cfg.client_core)};
    return;
  }
  place.cpu_at_start = core::current_cpu();
  auto templates = make_templates();
  if (!templates) {
    out.error = templates.error();
    return;
  }
  auto orders = encode_ring(templates->order, "D", ref::write_order_body);
  auto reports = encode_ring(templates->report, "8", fill_report);
  if (!orders || !reports) {
    out.error = Error{"codec: could not encode the reference messages"};
    return;
  }
  std::shared_ptr<const codec::Dictionary> dict;
  if (op == Op::kValidate) {
    const std::string dir = spec_dir();
    auto t = codec::Dictionary::load_file(dir + "/FIXT11.xml");
    auto a = codec::Dictionary::load_file(dir + "/FIX50SP2.xml");
    if (!t || !a) {
      out.error = Error{"codec: " + (!t ? t.error().message : a.error().message)};
      return;
    }
    dict = codec::Dictionary::combine(**t, **a);
  }
  std::optional<codec::Validator> validator;
  if (dict) validator.emplace(*dict);

  const double hz = ctx.tsc->hz();
  const std::uint64_t total = cfg.warmup + cfg.calls;
  Recorder rec_order("new_order_single", cfg.calls, cfg.warmup, Unit::kTscTicks, hz, true);
  Recorder rec_report("execution_report", cfg.calls, cfg.warmup, Unit::kTscTicks, hz, true);
  std::vector<char> buf(kSlot);
  codec::TimestampFormatter fmt;
  codec::MessageView view;
  std::uint64_t failures = 0;
  std::uint64_t checked = 0;
  std::string first_failure;
  if (ctx.progress_total != nullptr) ctx.progress_total->store(total);

  std::uint64_t t_start = tsc_now();
  std::uint64_t t_end = t_start;
  for (std::uint64_t k = 0; k < total; ++k) {
    if (k == cfg.warmup) t_start = tsc_now();
    for (int which = 0; which < 2; ++which) {
      Recorder& rec = which == 0 ? rec_order : rec_report;
      std::uint64_t t0 = 0, t1 = 0;
      bool ok = true;
      if (op == Op::kEncode) {
        const std::int64_t now = core::realtime_ns();
        const codec::HeaderTemplate& h = which == 0 ? templates->order : templates->report;
        t0 = tsc_now();
        codec::MessageWriter w(std::span<char>(buf.data(), buf.size()));
        w.start(h, which == 0 ? "D" : "8", k + 2, now, codec::TimePrecision::kMillis, fmt);
        if (which == 0) {
          ref::write_order_body(w, k, now, fmt);
        } else {
          fill_report(w, k, now, fmt);
        }
        const auto r = w.finish();
        t1 = tsc_now();
        ok = r.ok() && codec::frame({r.message.data(), r.message.size()}).status == codec::FrameStatus::kComplete;
      } else {
        const std::string_view msg = (which == 0 ? *orders : *reports).at(k);
        t0 = tsc_now();
        const codec::FrameResult fr = codec::frame(msg);
        ok = fr.status == codec::FrameStatus::kComplete && view.parse(msg.substr(0, fr.size)) == codec::ParseStatus::kOk;
        if (ok && validator) ok = validator->validate(view).ok();
        t1 = tsc_now();
      }
      rec.record(static_cast<std::int64_t>(t1 - t0), static_cast<std::int64_t>(t0 - t_start));
      t_end = t1;
      ++checked;
      if (!ok) {
        ++failures;
        if (first_failure.empty()) {
          first_failure = std::string(which == 0 ? "NewOrderSingle" : "ExecutionReport") + " at call " +
                          std::to_string(k);
          if (validator && op == Op::kValidate) {
            const std::string_view msg = (which == 0 ? *orders : *reports).at(k);
            (void)view.parse(msg);
            first_failure += ": " + std::string(validator->validate(view).text);
          }
        }
      }
    }
    if ((k & 1023U) == 0) ctx.report_progress(k);
  }
  ctx.report_progress(total);
  place.cpu_at_end = core::current_cpu();

  RunResult& r = out.result;
  r.threads.push_back(place);
  r.completed = rec_order.size();
  r.warmup_done = rec_order.warmup_seen();
  r.overflow = rec_order.overflow() + rec_report.overflow();
  r.wall_seconds = static_cast<double>(t_end - t_start) / hz;
  r.achieved_rate = r.wall_seconds > 0 ? static_cast<double>(r.completed) / r.wall_seconds : 0;
  r.notes.emplace_back("message bytes", "NewOrderSingle " + std::to_string(orders->size[0]) + "-" +
                                             std::to_string(orders->size[kRing - 1]) + ", ExecutionReport " +
                                             std::to_string(reports->size[0]) + "-" +
                                             std::to_string(reports->size[kRing - 1]));
  if (dict) r.notes.emplace_back("dictionary", "FIXT11.xml + FIX50SP2.xml from " + spec_dir());
  r.audit.checked = checked;
  const char* what = op == Op::kEncode ? "encoded and re-framed (BodyLength, CheckSum)"
                     : op == Op::kParse ? "framed and parsed"
                                        : "framed, parsed and validated";
  if (failures == 0) {
    r.audit.status = AuditResult::Status::kPass;
    r.audit.detail = "every message (" + std::to_string(checked) + ") " + what + "; no journal in this lane";
  } else {
    r.audit.status = AuditResult::Status::kFail;
    r.audit.detail = std::to_string(failures) + " of " + std::to_string(checked) + " messages not " + what +
                     "; first: " + first_failure;
  }
  r.series.push_back(std::move(rec_order).take());
  r.series.push_back(std::move(rec_report).take());
}

Expected<RunResult> run_codec(const LaneConfig& cfg, RunContext& ctx) {
  if (ctx.tsc == nullptr) return Error{"codec: no calibrated TSC clock in the run context"};
  Op op;
  if (cfg.variant == "encode") {
    op = Op::kEncode;
  } else if (cfg.variant == "parse") {
    op = Op::kParse;
  } else if (cfg.variant == "validate") {
    op = Op::kValidate;
  } else {
    return Error{"codec: unknown variant '" + cfg.variant + "'"};
  }
  Outcome out;
  std::thread t(run_codec_thread, std::cref(cfg), std::ref(ctx), op, std::ref(out));
  t.join();
  if (out.error) return Error{"codec " + cfg.variant + ": " + out.error->message};
  return std::move(out.result);
}

Lane make_codec_lane() {
  Lane lane;
  lane.name = "codec";
  lane.summary = "encode, parse, parse+validate of the reference NewOrderSingle and ExecutionReport, no I/O";
  lane.available = true;
  lane.variants = {"encode", "parse", "validate"};
  lane.default_variants = lane.variants;
  lane.run = run_codec;
  return lane;
}

}  // namespace
HFT_LAB_REGISTER_LANE(make_codec_lane);
}  // namespace hft::lab::lanes
