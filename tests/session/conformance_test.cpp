// Runs the FIX session conformance scripts (HFT_SHARED_DIR/conformance/
// definitions/<dir>/*.def) directly against sessions configured like the
// README's acceptor: SenderCompID ISLD, ResetOnLogon, always open, the
// dictionaries of /fix/spec, an echo application. No TCP: an in-process
// "acceptor" binds connections to sessions by the first message's CompIDs
// (as the engine's acceptor does), and a fake clock advances while the
// script waits for a message or a disconnect (heartbeat scripts).
//
// Comparison follows the README: same field count, same tags in order, equal
// values except the tags of fields.fmt, whose value must match the regex.
// The other versions' suites (tests/data/conformance/fix*/) run too; scripts
// listed in tests/data/conformance/libhft_known_differences.txt must still
// fail (so a fix shows up as a test to update).
// Set HFT_CONFORMANCE_DIR to run another definitions/ folder as well.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>

#include "harness.hpp"
#include "hft/codec/dictionary.hpp"
#include "hft/session/session.hpp"

namespace fs = std::filesystem;
using namespace hft;
using namespace hft::session;
using hft::session::test::complete;
using hft::session::test::pipes;
using hft::session::test::split_fields;
using hft::session::test::utc_text;

namespace {

const std::string kShared = HFT_SHARED_DIR;

std::shared_ptr<const codec::Dictionary> load_dict(const std::string& file) {
  static std::map<std::string, std::shared_ptr<const codec::Dictionary>> cache;
  auto it = cache.find(file);
  if (it != cache.end()) return it->second;
  auto d = codec::Dictionary::load_file(kShared + "/fix/spec/" + file);
  if (!d) {
    ADD_FAILURE() << d.error().message;
    return nullptr;
  }
  cache[file] = *d;
  return *d;
}

std::shared_ptr<const codec::Dictionary> combined(const std::string& transport, const std::string& app) {
  static std::map<std::string, std::shared_ptr<const codec::Dictionary>> cache;
  auto& d = cache[transport + "+" + app];
  if (!d) d = codec::Dictionary::combine(*load_dict(transport), *load_dict(app));
  return d;
}

std::map<int, std::regex> load_formats() {
  std::map<int, std::regex> out;
  std::ifstream in(kShared + "/conformance/fields.fmt");
  std::string line;
  while (std::getline(in, line)) {
    const auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    out.emplace(std::stoi(line.substr(0, eq)), std::regex(line.substr(eq + 1)));
  }
  return out;
}

// ---------------------------------------------------------------------------
// The echo application of the README.

class EchoApp final : public Application {
 public:
  explicit EchoApp(std::shared_ptr<const codec::Dictionary> dict) : dict_(std::move(dict)) {}

  std::int64_t now_ns = 0;

  void on_logout(Session&) noexcept override { seen_.clear(); }

  Decision from_app(Session& s, const codec::MessageView& m) noexcept override {
    const std::string_view type = m.msg_type();
    if (type == "D") {
      const bool poss_resend = m.get(codec::tag::kPossResend) == "Y";
      const std::string id(m.get(codec::tag::kClOrdID));
      if (poss_resend && seen_.count(id) != 0) return Decision::accept();
      seen_.insert(id);
      echo(s, m);
      return Decision::accept();
    }
    if (type == "d" || type == "C") {
      echo(s, m);
      return Decision::accept();
    }
    return Decision::unsupported_message_type();
  }

 private:
  // Sends `m` back as QuickFIX's echo does: same header extras, body fields
  // in QuickFIX's default order (ascending tags, group entries kept after
  // their count field).
  void echo(Session& s, const codec::MessageView& m) {
    const codec::FieldSet& header = dict_->header();
    const codec::FieldSet& trailer = dict_->trailer();
    std::vector<std::pair<int, std::string>> extra;
    struct Item {
      int key;
      std::string text;
    };
    std::vector<Item> items;
    const codec::MessageDef* def = dict_->message(m.msg_type());
    for (std::size_t i = 3; i < m.size(); ++i) {
      const int t = m.field(i).tag;
      const std::string one = std::string(m.tag_text(i)) + "=" + std::string(m.value_at(i)) + "\x01";
      if (header.member(t) != nullptr) {
        switch (t) {
          case 8: case 9: case 35: case 34: case 49: case 52: case 56: case 43: case 122: case 97:
            break;
          default:
            extra.emplace_back(t, one);
        }
        continue;
      }
      if (trailer.member(t) != nullptr) continue;
      Item item{t, one};
      const codec::FieldSet::Member* mem = def != nullptr ? def->fields.member(t) : nullptr;
      if (mem != nullptr && mem->group >= 0) {
        i = take_group(m, i + 1, mem->group, item.text) - 1;
      }
      items.push_back(std::move(item));
    }
    std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.key < b.key; });
    std::sort(extra.begin(), extra.end());
    std::string extra_text;
    for (auto& e : extra) extra_text += e.second;
    SendOptions opts;
    opts.poss_resend = m.get(codec::tag::kPossResend) == "Y";
    opts.extra_header = extra_text;
    OutgoingMessage& out = s.begin_app(m.msg_type(), Instant::from_utc(now_ns), opts);
    for (const Item& it : items) out.add_raw(it.text);
    const SendStatus st = s.send(out);
    if (st != SendStatus::kOk) ADD_FAILURE() << "echo not sent: " << to_string(st);
  }

  // Appends the fields of group `g`'s entries starting at position `i`;
  // returns the position after the group.
  std::size_t take_group(const codec::MessageView& m, std::size_t i, int g, std::string& text) {
    const codec::GroupDef& group = dict_->group(g);
    while (i < m.size()) {
      const int t = m.field(i).tag;
      const codec::FieldSet::Member* mem = group.fields.member(t);
      if (mem == nullptr) break;
      text += std::string(m.tag_text(i)) + "=" + std::string(m.value_at(i)) + "\x01";
      ++i;
      if (mem->group >= 0) i = take_group(m, i, mem->group, text);
    }
    return i;
  }

  std::shared_ptr<const codec::Dictionary> dict_;
  std::set<std::string> seen_;
};

// ---------------------------------------------------------------------------
// The in-process acceptor.

struct Connection;

struct Slot;

class ForwardingOutput final : public Output {
 public:
  explicit ForwardingOutput(Slot& slot) : slot_(slot) {}
  void send(std::span<const char> bytes) noexcept override;
  void disconnect(DisconnectReason reason) noexcept override;

 private:
  Slot& slot_;
};

struct Connection {
  bool open = true;
  Slot* bound = nullptr;
  std::string pending;  // bytes before the first complete message
  std::deque<std::string> outbox;
  std::vector<std::string> log;
};

struct Slot {
  SessionSettings settings;
  std::shared_ptr<const codec::Dictionary> echo_dict;
  std::unique_ptr<store::MemoryStore> store;
  std::unique_ptr<ForwardingOutput> output;
  std::unique_ptr<EchoApp> app;
  std::unique_ptr<Session> session;
  Connection* conn = nullptr;
};

void ForwardingOutput::send(std::span<const char> bytes) noexcept {
  if (slot_.conn == nullptr) return;
  std::string_view rest(bytes.data(), bytes.size());
  while (!rest.empty()) {
    const codec::FrameResult fr = codec::frame(rest);
    const std::size_t n = fr.status == codec::FrameStatus::kComplete ? fr.size : rest.size();
    slot_.conn->outbox.emplace_back(rest.substr(0, n));
    rest.remove_prefix(n);
  }
}

void ForwardingOutput::disconnect(DisconnectReason reason) noexcept {
  if (slot_.conn == nullptr) return;
  slot_.conn->open = false;
  slot_.conn->log.push_back(std::string("acceptor disconnected: ") + std::string(to_string(reason)));
  slot_.conn->bound = nullptr;
  slot_.conn = nullptr;
}

class Acceptor {
 public:
  explicit Acceptor(std::int64_t start_ns) : now_ns_(start_ns) {
    add("FIX.4.0", "TW40", "FIX40.xml", "", "");
    add("FIX.4.1", "TW41", "FIX41.xml", "", "");
    add("FIX.4.2", "TW42", "FIX42.xml", "", "");
    add("FIX.4.3", "TW43", "FIX43.xml", "", "");
    add("FIX.4.4", "TW44", "FIX44.xml", "", "");
    add("FIXT.1.1", "TW50", "FIXT11.xml", "FIX50.xml", "FIX.5.0");
    add("FIXT.1.1", "TW50SP1", "FIXT11.xml", "FIX50SP1.xml", "FIX.5.0SP1");
    add("FIXT.1.1", "TW50SP2", "FIXT11.xml", "FIX50SP2.xml", "FIX.5.0SP2");
    add("FIX.4.4", "TW", "FIX44.xml", "", "");
    add("FIX.4.4", "NO_CHECK_FIELDS_HAVE_VALUES", "FIX44.xml", "", "", false);
  }

  [[nodiscard]] Instant now() const { return Instant::from_utc(now_ns_); }
  [[nodiscard]] std::int64_t now_ns() const { return now_ns_; }

  void advance(std::int64_t ns) {
    now_ns_ += ns;
    for (auto& s : slots_) {
      if (!s->session) continue;
      s->app->now_ns = now_ns_;
      s->session->on_timer(now());
    }
  }

  /// Bytes from the driver on `c`.
  void receive(Connection& c, const std::string& bytes) {
    if (!c.open) {
      c.log.push_back("driver wrote to a closed connection");
      return;
    }
    for (auto& s : slots_) {
      if (s->session) s->app->now_ns = now_ns_;
    }
    if (c.bound != nullptr) {
      c.bound->session->on_bytes({bytes.data(), bytes.size()}, now());
      return;
    }
    c.pending += bytes;
    const codec::FrameResult fr = codec::frame(c.pending);
    if (fr.status == codec::FrameStatus::kNeedMore) return;
    if (fr.status == codec::FrameStatus::kGarbled) {
      c.log.push_back("first message garbled: connection closed");
      c.open = false;
      return;
    }
    RouteKey key;
    Slot* slot = nullptr;
    if (peek_route(std::string_view(c.pending).substr(0, fr.size), key)) {
      for (auto& s : slots_) {
        if (key.matches(s->settings.id())) slot = s.get();
      }
    }
    // Sessions are made on their first connection: a script uses one or two
    // of the ten, and making all of them per script was most of the time.
    if (slot != nullptr && !slot->session && !start(*slot)) slot = nullptr;
    if (slot == nullptr) {
      c.log.push_back("no session for the first message: connection closed");
      c.open = false;
      return;
    }
    if (slot->conn != nullptr) {
      c.log.push_back("session already connected: connection closed");
      c.open = false;
      return;
    }
    slot->conn = &c;
    c.bound = slot;
    std::string data = std::move(c.pending);
    c.pending.clear();
    slot->session->on_connected(now());
    if (c.bound != nullptr) slot->session->on_bytes({data.data(), data.size()}, now());
  }

  /// The driver closes `c`.
  void close(Connection& c) {
    if (!c.open) return;
    c.open = false;
    if (c.bound != nullptr) {
      Slot* s = c.bound;
      s->conn = nullptr;
      c.bound = nullptr;
      s->session->on_disconnected(now());
    }
  }

 private:
  void add(const std::string& begin, const std::string& target, const std::string& dict,
           const std::string& app_dict, const std::string& appl_ver, bool have_values = true) {
    auto slot = std::make_unique<Slot>();
    SessionSettings& st = slot->settings;
    st.begin_string = begin;
    st.sender_comp_id = "ISLD";
    st.target_comp_id = target;
    st.reset_on_logon = true;
    st.dictionary = load_dict(dict);
    if (!app_dict.empty()) {
      st.app_dictionary = load_dict(app_dict);
      st.default_appl_ver_id = appl_ver;
      slot->echo_dict = combined(dict, app_dict);
    } else {
      slot->echo_dict = st.dictionary;
    }
    st.validation.check_fields_have_values = have_values;
    st.max_message_size = 8192;
    st.queue_capacity_bytes = 64 * 1024;
    st.queue_capacity_messages = 256;
    slots_.push_back(std::move(slot));
  }

  bool start(Slot& slot) {
    slot.store = std::make_unique<store::MemoryStore>(store::MemoryStoreConfig{128, 8192}, now_ns_);
    slot.output = std::make_unique<ForwardingOutput>(slot);
    slot.app = std::make_unique<EchoApp>(slot.echo_dict);
    slot.app->now_ns = now_ns_;
    auto s = Session::create(slot.settings, *slot.store, *slot.app, *slot.output, nullptr, now());
    if (!s) {
      ADD_FAILURE() << s.error().message;
      return false;
    }
    slot.session = std::move(*s);
    return true;
  }

  std::int64_t now_ns_;
  std::vector<std::unique_ptr<Slot>> slots_;
};

// ---------------------------------------------------------------------------
// Script runner.

struct Outcome {
  bool passed = true;
  std::string failure;
};

std::string substitute_time(const std::string& text, std::int64_t now_ns) {
  static const std::regex re("<TIME([+-]\\d+)?>");
  std::string out;
  std::sregex_iterator it(text.begin(), text.end(), re), end;
  std::size_t last = 0;
  for (; it != end; ++it) {
    const auto& m = *it;
    out.append(text, last, static_cast<std::size_t>(m.position()) - last);
    std::int64_t offset = 0;
    if (m[1].matched) offset = std::stoll(m[1].str());
    out += utc_text(now_ns + offset * 1'000'000'000);
    last = static_cast<std::size_t>(m.position() + m.length());
  }
  out.append(text, last, std::string::npos);
  return out;
}

bool compare(const std::string& expected, const std::string& actual, const std::map<int, std::regex>& fmt,
             std::string& why) {
  const auto e = split_fields(expected);
  const auto a = split_fields(actual);
  if (e.size() != a.size()) {
    why = "field count " + std::to_string(a.size()) + " != expected " + std::to_string(e.size());
    return false;
  }
  for (std::size_t i = 0; i < e.size(); ++i) {
    const auto ee = e[i].find('=');
    const auto ae = a[i].find('=');
    const std::string_view et = e[i].substr(0, ee), at = a[i].substr(0, ae);
    if (et != at) {
      why = "field " + std::to_string(i) + ": tag " + std::string(at) + " != expected " + std::string(et);
      return false;
    }
    const std::string_view ev = ee == std::string_view::npos ? "" : e[i].substr(ee + 1);
    const std::string_view av = ae == std::string_view::npos ? "" : a[i].substr(ae + 1);
    const int t = std::atoi(std::string(et).c_str());
    const auto f = fmt.find(t);
    if (f != fmt.end()) {
      if (!std::regex_search(std::string(av), f->second)) {
        why = "field " + std::string(et) + " value '" + std::string(av) + "' does not match its format";
        return false;
      }
    } else if (ev != av) {
      why = "field " + std::string(et) + " value '" + std::string(av) + "' != expected '" + std::string(ev) + "'";
      return false;
    }
  }
  return true;
}

Outcome run_script(const fs::path& path) {
  static const auto formats = load_formats();
  constexpr std::int64_t kStep = 100'000'000;         // 100 ms
  constexpr std::int64_t kWaitLimit = 90'000'000'000;  // 90 s of simulated time
  // A fixed start, a quarter second past a whole second.
  Acceptor acceptor(1'710'504'000'250'000'000);
  std::map<int, Connection> conns;
  Outcome out;
  std::ifstream in(path, std::ios::binary);
  std::string line;
  int line_no = 0;
  auto fail = [&](const std::string& why) {
    out.passed = false;
    std::string log;
    for (auto& [id, c] : conns) {
      for (auto& l : c.log) log += "\n    [" + std::to_string(id) + "] " + l;
    }
    out.failure = path.filename().string() + ":" + std::to_string(line_no) + ": " + why + log;
  };
  while (out.passed && std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    const char kind = line[0];
    std::string rest = line.substr(1);
    int conn = 1;
    if (rest.size() > 2 && std::isdigit(static_cast<unsigned char>(rest[0])) && rest[1] == ',') {
      conn = rest[0] - '0';
      rest = rest.substr(2);
    }
    Connection& c = conns[conn];
    if (kind == 'i' && rest == "CONNECT") {
      c = Connection{};
    } else if (kind == 'i' && rest == "DISCONNECT") {
      acceptor.close(c);
    } else if (kind == 'e' && rest == "DISCONNECT") {
      std::int64_t waited = 0;
      while (c.open && waited < kWaitLimit) {
        acceptor.advance(kStep);
        waited += kStep;
      }
      if (c.open) {
        fail("expected a disconnect, the connection is still open");
      } else if (!c.outbox.empty()) {
        fail("unexpected message before the disconnect: " + pipes(c.outbox.front()));
      }
    } else if (kind == 'I') {
      const std::string msg = complete(substitute_time(rest, acceptor.now_ns()));
      c.log.push_back("sent     " + pipes(msg));
      acceptor.receive(c, msg);
    } else if (kind == 'E') {
      const std::string expected = complete(substitute_time(rest, acceptor.now_ns()));
      std::int64_t waited = 0;
      while (c.outbox.empty() && c.open && waited < kWaitLimit) {
        acceptor.advance(kStep);
        waited += kStep;
      }
      if (c.outbox.empty()) {
        fail("expected " + pipes(expected) + ", got nothing" + (c.open ? "" : " (disconnected)"));
        break;
      }
      const std::string actual = c.outbox.front();
      c.outbox.pop_front();
      c.log.push_back("received " + pipes(actual));
      std::string why;
      if (!compare(expected, actual, formats, why)) {
        fail(why + "\n    expected " + pipes(expected) + "\n    received " + pipes(actual));
      }
    } else {
      fail("unknown script line '" + line + "'");
    }
  }
  for (auto& [id, c] : conns) acceptor.close(c);
  return out;
}

std::vector<fs::path> directories() {
  std::vector<fs::path> out;
  std::vector<fs::path> roots = {fs::path(kShared) / "conformance" / "definitions",
                                 fs::path(HFT_SOURCE_DIR) / "tests" / "data" / "conformance"};
  if (const char* extra = std::getenv("HFT_CONFORMANCE_DIR")) roots.emplace_back(extra);
  for (const auto& root : roots) {
    if (!fs::is_directory(root)) continue;
    for (const auto& dir : fs::directory_iterator(root)) {
      // tests/data/conformance also holds the runner's negative scripts.
      if (dir.is_directory() && dir.path().filename().string().rfind("fix", 0) == 0) out.push_back(dir.path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<fs::path> scripts_in(const fs::path& dir) {
  std::vector<fs::path> out;
  const char* only = std::getenv("HFT_CONFORMANCE_SCRIPT");  // run one script by file name
  for (const auto& f : fs::directory_iterator(dir)) {
    if (f.path().extension() != ".def") continue;
    if (only != nullptr && f.path().filename() != only) continue;
    out.push_back(f.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// "<suite>/<script>.def" lines of the known-differences list.
std::set<std::string> known_differences() {
  std::set<std::string> out;
  std::ifstream in(std::string(HFT_SOURCE_DIR) + "/tests/data/conformance/libhft_known_differences.txt");
  std::string line;
  while (std::getline(in, line)) {
    line = line.substr(0, line.find('#'));
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
    if (!line.empty()) out.insert(line);
  }
  return out;
}

class ConformanceDirectory : public ::testing::TestWithParam<fs::path> {};

// Every script of one definitions/ directory; prints "fix44: 59/59 scripts pass".
TEST_P(ConformanceDirectory, every_script_passes_against_the_acceptor) {
  const auto files = scripts_in(GetParam());
  const std::set<std::string> known = known_differences();
  int passed = 0;
  for (const auto& f : files) {
    const Outcome o = run_script(f);
    const bool listed = known.count(GetParam().filename().string() + "/" + f.filename().string()) != 0;
    if (o.passed) {
      ++passed;
      EXPECT_FALSE(listed) << f << " passes now: remove it from libhft_known_differences.txt";
    } else if (!listed) {
      ADD_FAILURE() << o.failure;
    }
  }
  std::printf("conformance %s: %d/%zu scripts pass\n", GetParam().filename().c_str(), passed, files.size());
  EXPECT_GT(files.size(), 0u);
}

std::string directory_name(const ::testing::TestParamInfo<fs::path>& info) {
  std::string name = info.param.filename().string();
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name + "_" + std::to_string(info.index);
}

INSTANTIATE_TEST_SUITE_P(SessionConformance, ConformanceDirectory, ::testing::ValuesIn(directories()), directory_name);

}  // namespace
