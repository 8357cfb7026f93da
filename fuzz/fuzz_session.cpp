// libFuzzer target for the session state machine: a random sequence of
// connection events, timer ticks, framed messages (right BodyLength and
// CheckSum, header fields from the fuzz input, MsgSeqNum near the expected
// one), raw bytes and application sends, against an invariant checker:
//
// - nothing crashes, leaks or reads out of bounds (ASan, UBSan);
// - within a store epoch, next_target_seq and next_sender_seq never go
//   back, and our MsgSeqNum strictly increases on every message sent that
//   is not a resend (PossDupFlag Y);
// - every message handed to Application::from_app was journaled first
//   (MessageStore::store_inbound, same bytes, same seq), and no accepted seq
//   is journaled twice in an epoch (a SequenceReset-Reset, journaled where
//   it comes, excepted);
// - no stall: at the end, a logged-on session that is sent a gap fill to
//   past everything and a TestRequest answers the TestRequest.
//
// Input: byte 0 selects settings (bit 0: FIX.4.2 instead of 4.4, bit 1:
// ResetOnLogon, bit 2: CheckLatency off, bit 3: ValidateFieldsHaveValues off,
// bit 4: MaxFieldsPerMessage 32, bit 5: initiator). Then operations, each an
// opcode byte and its arguments; in a message body '|' stands for SOH, so a
// seed can be written by hand.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "hft/codec/parser.hpp"
#include "hft/session/session.hpp"
#include "hft/store/message_store.hpp"
#include "support/fix_text.hpp"

using namespace hft;

namespace {

inline void expect(bool ok) {
  if (!ok) __builtin_trap();
}

constexpr std::int64_t kStart = 1'710'504'000'000'000'000;  // 2024-03-15 12:00:00 UTC
constexpr std::int64_t kTick = 100'000'000;

// Reads the fuzz input; past its end every read is 0.
struct Reader {
  const std::uint8_t* p;
  std::size_t n;
  std::uint8_t byte() noexcept {
    if (n == 0) return 0;
    --n;
    return *p++;
  }
  std::string_view bytes(std::size_t k) noexcept {
    if (k > n) k = n;
    const std::string_view s(reinterpret_cast<const char*>(p), k);
    p += k;
    n -= k;
    return s;
  }
  [[nodiscard]] bool done() const noexcept { return n == 0; }
};

bool trace() noexcept;
void trace_message(const char* what, std::string_view m) noexcept;

// The store under the session, checking how the session journals.
class CheckingStore final : public store::MessageStore {
 public:
  explicit CheckingStore(std::int64_t now) : inner_(store::MemoryStoreConfig{64, 4096}, now) {}

  std::span<char> claim(std::size_t max_bytes) noexcept override { return inner_.claim(max_bytes); }
  using MessageStore::commit;
  store::StoreStatus commit(std::uint64_t seq, std::int64_t ts, std::size_t offset, std::size_t length,
                            std::uint8_t flags) noexcept override {
    return inner_.commit(seq, ts, offset, length, flags);
  }
  store::StoreStatus last_status() const noexcept override { return inner_.last_status(); }
  store::StoreStatus store_inbound(std::uint64_t seq, std::int64_t ts,
                                   std::span<const char> bytes) noexcept override {
    const std::string_view text(bytes.data(), bytes.size());
    if (!is_sequence_reset(text)) {
      // Each accepted seq journaled once, in order. The same seq again is a
      // message journaled and then refused (a Logon the logon checks turned
      // down): it did not move next_target_seq past itself.
      expect(seq > last_journaled_ || (seq == last_journaled_ && inner_.next_target_seq() <= seq));
      last_journaled_ = seq;
    }
    journaled_seq_ = seq;
    journaled_.assign(text);
    return inner_.store_inbound(seq, ts, bytes);
  }
  std::uint64_t next_sender_seq() const noexcept override { return inner_.next_sender_seq(); }
  std::uint64_t next_target_seq() const noexcept override { return inner_.next_target_seq(); }
  void set_next_sender_seq(std::uint64_t seq) noexcept override { inner_.set_next_sender_seq(seq); }
  void set_next_target_seq(std::uint64_t seq) noexcept override { inner_.set_next_target_seq(seq); }
  store::StoreStatus reset(std::int64_t now) noexcept override {
    last_journaled_ = 0;
    journaled_seq_ = 0;
    journaled_.clear();
    return inner_.reset(now);
  }
  std::uint64_t epoch() const noexcept override { return inner_.epoch(); }
  std::int64_t creation_time() const noexcept override { return inner_.creation_time(); }
  using MessageStore::replay;
  store::ReplayResult replay(std::uint64_t begin, std::uint64_t end, std::size_t max_messages,
                             store::ReplayVisitor& visitor) noexcept override {
    return inner_.replay(begin, end, max_messages, visitor);
  }
  store::StoreStatus flush() noexcept override { return inner_.flush(); }
  store::StoreStats stats() const noexcept override { return inner_.stats(); }

  /// The message from_app is handed must be the one just journaled.
  void check_delivered(std::string_view text, std::uint64_t seq) const noexcept {
    expect(seq == journaled_seq_ && text == journaled_);
  }

 private:
  static bool is_sequence_reset(std::string_view text) noexcept {
    return text.find(
               "\x01"
               "35=4\x01") != std::string_view::npos;
  }
  store::MemoryStore inner_;
  std::uint64_t last_journaled_ = 0;
  std::uint64_t journaled_seq_ = 0;
  std::string journaled_;
};

class CheckingApp final : public session::Application {
 public:
  explicit CheckingApp(CheckingStore& store) : store_(store) {}
  session::Decision from_app(session::Session&, const codec::MessageView& m) noexcept override {
    std::uint64_t seq = 0;
    expect(m.get_uint(codec::tag::kMsgSeqNum, seq));
    store_.check_delivered(m.text(), seq);
    return session::Decision::accept();
  }

 private:
  CheckingStore& store_;
};

// Our messages: MsgSeqNum strictly increasing per epoch except resends; the
// last TestReqID answered.
class CheckingOutput final : public session::Output {
 public:
  explicit CheckingOutput(const store::MessageStore& store) : store_(store) {}
  void send(std::span<const char> bytes) noexcept override {
    std::string_view rest(bytes.data(), bytes.size());
    while (!rest.empty()) {
      const codec::FrameResult fr = codec::frame(rest);
      expect(fr.status == codec::FrameStatus::kComplete);  // we send only whole, valid messages
      const codec::ParseStatus ps = view_->parse(rest.substr(0, fr.size));
      expect(ps == codec::ParseStatus::kOk);
      std::uint64_t seq = 0;
      expect(view_->get_uint(codec::tag::kMsgSeqNum, seq));
      if (store_.epoch() != epoch_) {
        epoch_ = store_.epoch();
        last_seq_ = 0;
      }
      if (view_->get(codec::tag::kPossDupFlag) != "Y") {
        expect(seq > last_seq_);
        last_seq_ = seq;
      }
      if (view_->msg_type() == "0") last_test_req_id_.assign(view_->get(codec::tag::kTestReqID));
      if (trace()) trace_message("out", rest.substr(0, fr.size));
      rest.remove_prefix(fr.size);
    }
  }
  void disconnect(session::DisconnectReason) noexcept override { disconnected_ = true; }

  bool disconnected_ = false;
  std::string last_test_req_id_;

 private:
  const store::MessageStore& store_;
  std::unique_ptr<codec::MessageView> view_ = std::make_unique<codec::MessageView>();
  std::uint64_t epoch_ = 0;
  std::uint64_t last_seq_ = 0;
};

// FUZZ_SESSION_TRACE=1: what goes in and out, to read a crash input.
bool trace() noexcept {
  static const bool on = std::getenv("FUZZ_SESSION_TRACE") != nullptr;
  return on;
}

void trace_message(const char* what, std::string_view m) noexcept {
  std::string t(m);
  for (char& c : t) {
    if (c == '\x01') c = '|';
  }
  std::fprintf(stderr, "%s %s\n", what, t.c_str());
}

unsigned checksum(std::string_view s) noexcept {
  unsigned sum = 0;
  for (const char c : s) sum += static_cast<unsigned char>(c);
  return sum % 256;
}

std::string utc_text(std::int64_t ns) {
  const std::int64_t s = ns / 1'000'000'000;
  const std::int64_t days = s / 86400, rem = s % 86400;
  // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
  const std::int64_t z = days + 719468, era = z / 146097, doe = z - era * 146097;
  const std::int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const std::int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100), mp = (5 * doy + 2) / 153;
  const std::int64_t d = doy - (153 * mp + 2) / 5 + 1, m = mp < 10 ? mp + 3 : mp - 9;
  const std::int64_t y = yoe + era * 400 + (m <= 2);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04d%02d%02d-%02d:%02d:%02d.%03d", static_cast<int>(y), static_cast<int>(m),
                static_cast<int>(d), static_cast<int>(rem / 3600), static_cast<int>(rem / 60 % 60),
                static_cast<int>(rem % 60), static_cast<int>(ns / 1'000'000 % 1000));
  return buf;
}

// "8=<begin>^9=<n>^<fields>10=<ck>^", '|' in `fields` standing for SOH.
std::string framed(std::string_view begin, std::string_view fields) {
  return hft::test::with_trailer(begin, hft::test::soh(fields));
}

constexpr const char* kTypes[] = {"A", "0", "1", "2", "3", "4", "5", "D", "8", "j", "ZZ", ""};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Reader in{data, size};
  const std::uint8_t config = in.byte();
  session::SessionSettings st;
  st.begin_string = (config & 1) ? "FIX.4.2" : "FIX.4.4";
  st.sender_comp_id = "ISLD";
  st.target_comp_id = "TW";
  st.reset_on_logon = (config & 2) != 0;
  st.check_latency = (config & 4) == 0;
  st.validation.check_fields_have_values = (config & 8) == 0;
  if (config & 16) st.max_fields_per_message = 32;
  st.initiator = (config & 32) != 0;
  st.max_message_size = 4096;
  st.queue_capacity_bytes = 16 * 1024;
  st.queue_capacity_messages = 16;
  st.max_resend_batch = 8;
  const std::string begin = st.begin_string;

  std::int64_t now = kStart;
  CheckingStore store(now);
  CheckingApp app(store);
  CheckingOutput out(store);
  auto created = session::Session::create(st, store, app, out, nullptr, session::Instant::from_utc(now));
  expect(created.ok());
  session::Session& s = **created;

  std::uint64_t epoch = store.epoch(), target = store.next_target_seq(), sender = store.next_sender_seq();
  const auto check_seqs = [&] {
    if (store.epoch() != epoch) {
      epoch = store.epoch();
      target = sender = 0;
    }
    expect(store.next_target_seq() >= target && store.next_sender_seq() >= sender);
    target = store.next_target_seq();
    sender = store.next_sender_seq();
  };
  const auto at = [&] { return session::Instant::from_utc(now); };

  // A message from the peer; `seq` as given.
  const auto message = [&](std::string_view type, std::uint64_t seq, std::uint8_t flags,
                           std::string_view body) {
    std::string f =
        "35=" + std::string(type) + "|34=" + std::to_string(seq) + "|49=TW|52=" + utc_text(now) + "|56=ISLD|";
    if (flags & 1) f += "43=Y|122=" + utc_text(now - 1'000'000'000) + "|";
    if (type == "A") {
      f += body.empty() ? "98=0|108=30|" : "";
      if (flags & 2) f += "141=Y|";
    }
    if (type == "4" && (flags & 4)) f += "123=Y|";
    f += body;
    return framed(begin, f);
  };

  int ops = 0;
  while (!in.done() && ++ops < 256) {
    const std::uint8_t op = in.byte();
    if (trace()) std::fprintf(stderr, "op %d\n", op % 8);
    switch (op % 8) {
      case 0:
        s.on_connected(at());
        break;
      case 1:
        s.on_disconnected(at());
        break;
      case 2:
        for (int t = in.byte(); t >= 0; --t) {
          now += kTick;
          s.on_timer(at());
        }
        break;
      case 3:
      case 6: {
        const std::string_view type = kTypes[in.byte() % (sizeof kTypes / sizeof kTypes[0])];
        const int delta = static_cast<int>(in.byte() % 6) - 2;
        const std::uint8_t flags = in.byte();
        const std::string_view body = in.bytes(in.byte());
        const std::int64_t seq = static_cast<std::int64_t>(s.next_target_seq()) + delta;
        const std::string m = message(type, static_cast<std::uint64_t>(seq < 0 ? 0 : seq), flags, body);
        if (trace()) trace_message("in", m);
        if (op % 8 == 3) {
          s.on_bytes({m.data(), m.size()}, at());
        } else {
          const std::size_t cut = in.byte() % (m.size() + 1);
          s.on_bytes({m.data(), cut}, at());
          s.on_bytes({m.data() + cut, m.size() - cut}, at());
        }
        break;
      }
      case 4: {
        const std::string_view raw = in.bytes(in.byte());
        s.on_bytes({raw.data(), raw.size()}, at());
        break;
      }
      case 5:
        (void)s.send_app("D", at(), [&](session::OutgoingMessage& m) {
          m.add(11, "ORD");
          m.add_char(21, '1');
          m.add(55, "IBM");
          m.add_char(54, '1');
          m.add(60, utc_text(now).substr(0, 17));
          m.add_char(40, '1');
        });
        break;
      case 7:
        s.logout("fuzz", at());
        s.enable();
        break;
    }
    check_seqs();
  }

  // No stall: whatever happened, a gap fill past every held message and a
  // TestRequest are answered. First, bytes that end whatever partial message
  // the framer holds (longer than any BodyLength it waits for, then a
  // trailer), which would otherwise swallow the probe, as QuickFIX's framing
  // rules say.
  const auto live = [&] {
    return s.is_logged_on() && s.is_connected() && s.state() == session::SessionState::kLoggedOn;
  };
  if (live()) {
    const std::string flush = std::string(17 * st.max_message_size, 'x') +
                              "\x01"
                              "10=000\x01";
    s.on_bytes({flush.data(), flush.size()}, at());
  }
  if (live()) {
    const std::uint64_t next = s.next_target_seq();
    const std::uint64_t past = next + 1000;
    const std::string fill = message("4", next, 5, "36=" + std::to_string(past) + "|");
    s.on_bytes({fill.data(), fill.size()}, at());
    out.last_test_req_id_.clear();
    const std::string probe = message("1", past, 0, "112=PROBE|");
    s.on_bytes({probe.data(), probe.size()}, at());
    if (s.is_connected()) {
      expect(out.last_test_req_id_ == "PROBE");
      expect(s.next_target_seq() == past + 1);
    }
    check_seqs();
  }
  return 0;
}
