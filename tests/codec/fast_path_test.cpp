// The parser's clean-message path and the validator's clean-message path are
// shortcuts: each must give exactly the answer of the general code it skips.
// These tests hold them to it on seeded random mutations of real messages
// (byte-level for the parser, field-level for the validator), across
// dictionaries and validation options. Each text sits in a heap buffer of
// its exact size, so a read past the message is an ASan error.

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "codec/parse_access.hpp"
#include "codec/validation_tables.hpp"
#include "hft/codec/dictionary.hpp"
#include "hft/codec/parser.hpp"
#include "hft/codec/validator.hpp"
#include "support/fix_text.hpp"

namespace hft::codec {

namespace {

const std::string kSpec = std::string(HFT_SHARED_DIR) + "/fix/spec/";

using test::soh;

// "8=<begin>^9=<len>^<body>10=nnn^" from a '|'-separated body.
std::string wire(std::string_view begin, std::string_view body_pipes) {
  return test::with_trailer(begin, soh(body_pipes));
}

// Bodies of messages that the clean paths take (groups, nested groups, raw
// data, timestamps, prices, enums), for FIX 4.4 and FIX 5.0SP2 over FIXT.
std::vector<std::string> bodies() {
  const std::string t = "20261130-14:36:30.691";
  return {
      "35=8|34=1234|49=EXECUTOR|52=" + t +
          "|56=CLIENT1|37=ORD-000123|11=1234|17=EXEC-000456|150=0|39=0|55=NOKIA.HE|54=1|38=10|44=10000|"
          "40=2|59=0|453=2|448=PARTY1|447=D|452=1|448=PARTY2|447=D|452=3|151=10|14=0|6=0|60=" +
          t + "|",
      "35=D|34=2|49=CLIENT1|52=" + t +
          "|56=EXECUTOR|50=SNDR_SUB|57=SRVR_SUB|11=1|55=NOKIA.HE|54=1|38=10|44=10000.25|40=2|59=0|453=2|"
          "448=PARTY1|447=D|452=1|448=PARTY2|447=D|452=3|60=" +
          t + "|",
      "35=8|34=7|49=EXECUTOR|52=" + t +
          "|56=CLIENT1|37=O1|11=1|17=E1|150=F|39=2|55=NOKIA.HE|54=1|38=10|44=-10000.5|32=10|31=10000|"
          "151=0|14=10|6=10000|60=20261130-14:36:30|555=2|600=LEG1|539=1|524=NP|525=D|538=1|600=LEG2|",
      "35=W|34=3|49=MD|52=" + t + "|56=CLIENT1|55=NOKIA.HE|268=2|269=0|270=10.5|271=5|269=1|270=11|271=6|",
      "35=A|34=1|49=CLIENT1|52=" + t + "|56=EXECUTOR|98=0|108=30|95=6|96=ab\x01" "c=d|141=Y|",
      "35=0|34=2|49=TW|52=" + t + "|56=ISLD|",
      "35=1|34=2|49=TW|52=" + t + "|56=ISLD|112=TEST-1|",
      "35=5|34=9|49=TW|52=" + t + "|56=ISLD|58=bye|",
      "35=3|34=9|49=TW|52=" + t + "|56=ISLD|45=3|371=44|372=D|373=5|58=Value is incorrect|",
  };
}

std::shared_ptr<const Dictionary> load(const std::string& file) {
  auto loaded = Dictionary::load_file(kSpec + file);
  EXPECT_TRUE(loaded.ok()) << loaded.error().message;
  return loaded.ok() ? loaded.value() : nullptr;
}

// A text in a heap buffer of exactly its size.
class ExactBuffer {
 public:
  explicit ExactBuffer(const std::string& s) : size_(s.size()), bytes_(new char[s.empty() ? 1 : s.size()]) {
    if (!s.empty()) std::memcpy(bytes_.get(), s.data(), s.size());
  }
  [[nodiscard]] std::string_view view() const noexcept { return {bytes_.get(), size_}; }

 private:
  std::size_t size_;
  std::unique_ptr<char[]> bytes_;
};

void expect_same_parse(const std::string& text, MessageView& fast, MessageView& general) {
  const ExactBuffer buffer(text);
  const ParseStatus a = fast.parse(buffer.view());
  const ParseStatus b = detail::ParseAccess::general(general, buffer.view());
  ASSERT_EQ(a, b) << testing::PrintToString(text);
  ASSERT_EQ(fast.size(), general.size()) << testing::PrintToString(text);
  for (std::size_t i = 0; i < fast.size(); ++i) {
    const Field& x = fast.field(i);
    const Field& y = general.field(i);
    ASSERT_EQ(x.tag, y.tag) << "field " << i << " of " << testing::PrintToString(text);
    ASSERT_EQ(x.value_offset, y.value_offset) << "field " << i << " of " << testing::PrintToString(text);
    ASSERT_EQ(x.value_length, y.value_length) << "field " << i << " of " << testing::PrintToString(text);
    ASSERT_EQ(fast.find(x.tag), general.find(x.tag)) << "tag " << x.tag << " of " << testing::PrintToString(text);
    ASSERT_EQ(fast.find_from(x.tag, i), general.find_from(x.tag, i));
  }
  for (const int tag : {0, 8, 9, 10, 35, 44, 95, 96, 448, 2047, 2048, 9999}) {
    ASSERT_EQ(fast.find(tag), general.find(tag)) << "tag " << tag << " of " << testing::PrintToString(text);
  }
}

std::string mutate_bytes(std::string s, std::mt19937_64& rng) {
  static const char kBytes[] = {kSoh, kSoh, '=', '=', '0', '1', '5', '9', 'A', '-', '.', ' ', '\0', '\x7f'};
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits && !s.empty(); ++e) {
    const std::size_t at = rng() % s.size();
    const char c = (rng() % 4 == 0) ? static_cast<char>(rng()) : kBytes[rng() % sizeof kBytes];
    switch (rng() % 6) {
      case 0:
      case 1:
        s[at] = c;
        break;
      case 2:
        s.insert(s.begin() + static_cast<std::ptrdiff_t>(at), c);
        break;
      case 3:
        s.erase(at, 1 + rng() % 3);
        break;
      case 4: {  // a long value: crosses 64-byte blocks
        s.insert(at, std::string(1 + rng() % 150, static_cast<char>('a' + rng() % 26)));
        break;
      }
      default: {  // a chunk repeated
        const std::size_t len = std::min<std::size_t>(s.size() - at, 1 + rng() % 40);
        s.insert(at, s.substr(at, len));
        break;
      }
    }
  }
  return s;
}

TEST(ParserCleanPath, parses_every_seed_message_as_the_general_loop_does) {
  auto fast = std::make_unique<MessageView>();
  auto general = std::make_unique<MessageView>();
  for (const std::string& body : bodies()) {
    const std::string text = wire("FIX.4.4", body);
    expect_same_parse(text, *fast, *general);
    ASSERT_EQ(fast->parse(text), ParseStatus::kOk);
    // Every prefix: texts ending mid-field, mid-tag, at any block offset.
    for (std::size_t n = 0; n <= text.size(); ++n) expect_same_parse(text.substr(0, n), *fast, *general);
  }
}

TEST(ParserCleanPath, matches_the_general_loop_on_mutated_messages) {
  auto fast = std::make_unique<MessageView>();
  auto general = std::make_unique<MessageView>();
  std::mt19937_64 rng(20261130);
  const std::vector<std::string> seeds = bodies();
  for (int round = 0; round < 30000; ++round) {
    const std::string text = wire(round % 2 ? "FIX.4.4" : "FIXT.1.1", seeds[rng() % seeds.size()]);
    expect_same_parse(mutate_bytes(text, rng), *fast, *general);
    if (testing::Test::HasFatalFailure()) return;
  }
}

TEST(ParserCleanPath, matches_the_general_loop_on_odd_field_shapes) {
  auto fast = std::make_unique<MessageView>();
  auto general = std::make_unique<MessageView>();
  std::vector<std::string> texts = {
      soh("1=A|"), soh("=A|"), soh("1=|"), soh("A=1|"), soh("12345=1|"), soh("2047=x|2048=y|"),
      soh("0=1|-1=2|007=3|"), soh("8=FIX.4.4|9=5|35=0|10=000"), soh("8=FIX.4.4|95=3|96=a|b|10=000|"),
      soh("95=3|96=a=b|97=x|"), soh("95=x|96=ab|"), soh("35=0|1=a=b|"), soh("35=0||"),
  };
  // Many short fields: more than 16 per block, up to and beyond the default
  // capacity.
  for (const std::size_t fields : {15u, 16u, 17u, 20u, 1023u, 1024u, 1025u, 1100u, 16383u, 16384u, 16385u}) {
    std::string s;
    for (std::size_t i = 0; i < fields; ++i) s += "1=A|";
    texts.push_back(soh(s));
    std::string t;
    for (std::size_t i = 0; i < fields; ++i) t += std::to_string(100 + i % 900) + "=" + std::to_string(i) + "|";
    texts.push_back(soh(t));
  }
  // Values and tags at every offset around block boundaries.
  for (std::size_t pad = 0; pad < 140; ++pad) {
    texts.push_back(soh("8=FIX.4.4|9=1|58=" + std::string(pad, 'x') + "|1234=5|95=2|96=|=|10=000|"));
    texts.push_back(soh("8=" + std::string(pad, 'x') + "|35=0|44=1.5|"));
  }
  for (const std::string& text : texts) {
    expect_same_parse(text, *fast, *general);
    if (testing::Test::HasFatalFailure()) return;
  }
  // Views of other capacities: the limit falls inside a block, at a block's
  // end, beyond the vector path's own buffer.
  for (const std::size_t capacity : {1u, 17u, 1024u, 1030u, 2000u}) {
    MessageView small_fast(capacity);
    MessageView small_general(capacity);
    for (const std::string& text : texts) {
      expect_same_parse(text, small_fast, small_general);
      if (testing::Test::HasFatalFailure()) return;
    }
  }
}

// ---------------------------------------------------------------- validator

struct Fix {
  int tag;
  std::string value;
};

std::vector<Fix> split(const std::string& text) {
  std::vector<Fix> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t eq = text.find('=', pos);
    // RawData (96) runs by its declared length (95), SOH and '=' included.
    const bool raw = !out.empty() && out.back().tag == 95 && text.compare(pos, eq - pos, "96") == 0;
    const std::size_t end =
        raw ? eq + 1 + static_cast<std::size_t>(std::stoi(out.back().value)) : text.find(kSoh, eq);
    out.push_back({std::stoi(text.substr(pos, eq - pos)), text.substr(eq + 1, end - eq - 1)});
    pos = end + 1;
  }
  return out;
}

std::string join(const std::vector<Fix>& fields) {
  std::string s;
  for (const Fix& f : fields) s += std::to_string(f.tag) + "=" + f.value + kSoh;
  return s;
}

std::vector<Fix> mutate_fields(std::vector<Fix> f, std::mt19937_64& rng) {
  static const char* kValues[] = {"",  "0", "1",  "2",  "3",   "-1",   "1.5", "1.2.3", "Z",      "D",  "Y",
                                  "N", "x", "AB", "99", "0.0", "-0.5", "8",   "W",     "FIX.4.4", "FIXT.1.1",
                                  "20261130-14:36:30.691", "20261130-24:00:00", "20261130-14:36:30.1234567891"};
  static const int kTags[] = {1,   8,   9,   10,  11,  34,  35,  37,  38,  39,  43,  44,  49,  52,  54,
                              55,  56,  58,  60,  97,  122, 268, 269, 270, 447, 448, 452, 453, 524, 525,
                              538, 539, 555, 600, 5000, 9999, 0, 1999, 2047, 2048};
  const int edits = 1 + static_cast<int>(rng() % 3);
  for (int e = 0; e < edits && !f.empty(); ++e) {
    const std::size_t i = rng() % f.size();
    const std::size_t j = rng() % f.size();
    switch (rng() % 7) {
      case 0:
        f.erase(f.begin() + static_cast<std::ptrdiff_t>(i));
        break;
      case 1:
        f.insert(f.begin() + static_cast<std::ptrdiff_t>(j), f[i]);
        break;
      case 2:
        std::swap(f[i], f[j]);
        break;
      case 3:
        f[i].value = kValues[rng() % std::size(kValues)];
        break;
      case 4:
        f[i].tag = kTags[rng() % std::size(kTags)];
        break;
      case 5:
        f.insert(f.begin() + static_cast<std::ptrdiff_t>(j),
                 Fix{kTags[rng() % std::size(kTags)], kValues[rng() % std::size(kValues)]});
        break;
      default: {  // a NumInGroup count off by one
        for (Fix& x : f) {
          if (x.tag == 453 || x.tag == 268 || x.tag == 555 || x.tag == 539) {
            x.value = std::to_string(std::atoi(x.value.c_str()) + (rng() % 2 ? 1 : -1));
            break;
          }
        }
        break;
      }
    }
  }
  return f;
}

std::vector<ValidationOptions> option_sets() {
  std::vector<ValidationOptions> sets(1);
  ValidationOptions off;
  off.check_begin_string = off.check_fields_out_of_order = off.check_fields_have_values = false;
  off.check_user_defined_fields = off.check_required = off.check_values = off.check_types = false;
  off.check_repeated = off.check_groups = off.check_unknown_msg_type = false;
  off.allow_unknown_message_fields = true;
  sets.push_back(off);
  bool ValidationOptions::*flags[] = {
      &ValidationOptions::check_begin_string,        &ValidationOptions::check_fields_out_of_order,
      &ValidationOptions::check_fields_have_values,  &ValidationOptions::check_user_defined_fields,
      &ValidationOptions::allow_unknown_message_fields, &ValidationOptions::check_required,
      &ValidationOptions::check_values,              &ValidationOptions::check_types,
      &ValidationOptions::check_repeated,            &ValidationOptions::check_groups,
      &ValidationOptions::check_unknown_msg_type};
  for (auto flag : flags) {
    ValidationOptions o;
    o.*flag = !(o.*flag);
    sets.push_back(o);
  }
  return sets;
}

struct DictionaryCase {
  std::string name;
  std::shared_ptr<const Dictionary> dict;
  std::string begin;
};

std::vector<DictionaryCase> dictionaries() {
  auto fixt = load("FIXT11.xml");
  auto fix50 = load("FIX50SP2.xml");
  return {
      {"FIX44.xml", load("FIX44.xml"), "FIX.4.4"},
      {"builtin 4.4", Dictionary::builtin(FixVersion::kFix44), "FIX.4.4"},
      {"FIX42.xml", load("FIX42.xml"), "FIX.4.2"},
      {"FIXT11+FIX50SP2", fixt && fix50 ? Dictionary::combine(*fixt, *fix50) : nullptr, "FIXT.1.1"},
  };
}

void expect_same_validation(const DictionaryCase& c, const std::vector<ValidationOptions>& options,
                            const std::string& text, MessageView& view) {
  const ExactBuffer buffer(text);
  (void)view.parse(buffer.view());
  for (const ValidationOptions& o : options) {
    const ValidationResult a = Validator(*c.dict, o).validate(view);
    const ValidationResult b = detail::general_validation(*c.dict, o, view);
    ASSERT_EQ(a.reason, b.reason) << c.name << ": " << testing::PrintToString(text);
    ASSERT_EQ(a.ref_tag, b.ref_tag) << c.name << ": " << testing::PrintToString(text);
    ASSERT_EQ(a.text, b.text) << c.name << ": " << testing::PrintToString(text);
    ASSERT_EQ(a.failure, b.failure) << c.name << ": " << testing::PrintToString(text);
  }
}

TEST(ValidatorCleanPath, takes_the_reference_messages) {
  // Without this the comparisons below would prove nothing about the clean path.
  auto view = std::make_unique<MessageView>();
  for (const DictionaryCase& c : dictionaries()) {
    ASSERT_NE(c.dict, nullptr) << c.name;
    int taken = 0;
    for (const std::string& body : bodies()) {
      const std::string text = wire(c.begin, body);
      ASSERT_EQ(view->parse(text), ParseStatus::kOk);
      const bool clean = detail::clean_message_valid(*c.dict, *view);
      if (clean) ++taken;
      EXPECT_EQ(clean, detail::general_validation(*c.dict, {}, *view).ok() && clean) << c.name;
    }
    EXPECT_GE(taken, 4) << c.name;
  }
  const auto d = load("FIX44.xml");
  const std::string report = wire("FIX.4.4", bodies()[0]);
  ASSERT_EQ(view->parse(report), ParseStatus::kOk);
  EXPECT_TRUE(detail::clean_message_valid(*d, *view));  // the benchmark's ExecutionReport
}

TEST(ValidatorCleanPath, matches_the_general_pass_on_mutated_messages) {
  auto view = std::make_unique<MessageView>();
  const std::vector<ValidationOptions> options = option_sets();
  const std::vector<std::string> seeds = bodies();
  std::mt19937_64 rng(7);
  for (const DictionaryCase& c : dictionaries()) {
    ASSERT_NE(c.dict, nullptr) << c.name;
    for (const std::string& body : seeds) {
      const std::string text = wire(c.begin, body);
      expect_same_validation(c, options, text, *view);
      if (HasFatalFailure()) return;
    }
    for (int round = 0; round < 6000; ++round) {
      const std::string text = wire(c.begin, seeds[rng() % seeds.size()]);
      const std::string mutated = join(mutate_fields(split(text), rng));
      expect_same_validation(c, options, mutated, *view);
      if (HasFatalFailure()) return;
    }
  }
}

}  // namespace
}  // namespace hft::codec
