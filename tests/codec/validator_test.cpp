// Validator: the Reject decisions (373, 371, 58) of the FIX session
// conformance scripts, one test per reject reason (also inside repeating
// groups and nested groups), each check switched off, clean reference
// messages, QuickFIX's order when several faults meet, and no allocation.

#include "hft/codec/validator.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "support/alloc_counter.hpp"

namespace hft::codec {
namespace {

const std::string kSpec = std::string(HFT_SHARED_DIR) + "/fix/spec/";
const std::string kScripts = std::string(HFT_SHARED_DIR) + "/conformance/definitions/";
constexpr const char* kTime = "20261130-14:36:30.691";

std::shared_ptr<const Dictionary> load(const std::string& file) {
  static std::map<std::string, std::shared_ptr<const Dictionary>> cache;
  auto& d = cache[file];
  if (!d) {
    auto loaded = Dictionary::load_file(kSpec + file);
    EXPECT_TRUE(loaded.ok()) << loaded.error().message;
    if (loaded.ok()) d = loaded.value();
  }
  return d;
}

std::shared_ptr<const Dictionary> fixt_fix50sp2() {
  static auto d = Dictionary::combine(*load("FIXT11.xml"), *load("FIX50SP2.xml"));
  return d;
}

std::string soh(std::string_view pipes) {
  std::string s(pipes);
  for (char& c : s) {
    if (c == '|') c = kSoh;
  }
  return s;
}

// Appends "10=NNN^" computed over `text`.
std::string with_checksum(std::string text) {
  unsigned sum = 0;
  for (char c : text) sum += static_cast<unsigned char>(c);
  char buf[16];
  std::snprintf(buf, sizeof buf, "10=%03u\x01", sum % 256);
  return text + buf;
}

// "8=<begin>^9=<len>^<body>10=nnn^" from a '|'-separated body.
std::string wire(std::string_view begin_string, std::string_view body_pipes) {
  const std::string body = soh(body_pipes);
  return with_checksum("8=" + std::string(begin_string) + "\x01" + "9=" + std::to_string(body.size()) +
                       "\x01" + body);
}

std::string fix44(std::string_view body) {
  return wire("FIX.4.4", body);
}

// A FIX.4.4 header for a body that follows.
std::string hdr(std::string_view type, int seq = 2) {
  return "35=" + std::string(type) + "|34=" + std::to_string(seq) + "|49=TW|52=" + kTime + "|56=ISLD|";
}

class ValidatorTest : public ::testing::Test {
 protected:
  ValidationResult check(const std::string& text, const Dictionary& d, ValidationOptions o = {}) {
    const ParseStatus st = view_->parse(text);
    EXPECT_TRUE(st == ParseStatus::kOk || st == ParseStatus::kBadTag) << static_cast<int>(st);
    return Validator(d, o).validate(*view_);
  }
  ValidationResult check44(const std::string& body, ValidationOptions o = {}) {
    return check(fix44(body), *load("FIX44.xml"), o);
  }
  static void expect_reject(const ValidationResult& r, RejectReason reason, int ref_tag) {
    EXPECT_EQ(r.reason, reason) << "reason " << static_cast<int>(r.reason) << " tag " << r.ref_tag;
    EXPECT_EQ(r.ref_tag, ref_tag);
    EXPECT_EQ(r.text, reject_reason_text(reason));
    EXPECT_EQ(r.failure, ValidationFailure::kReject);
  }
  static void expect_ok(const ValidationResult& r) {
    EXPECT_TRUE(r.ok()) << "reason " << static_cast<int>(r.reason) << " tag " << r.ref_tag << " " << r.text;
    EXPECT_EQ(r.failure, ValidationFailure::kNone);
  }

  std::unique_ptr<MessageView> view_ = std::make_unique<MessageView>();
};

// ---------------------------------------------------------------------------
// The conformance scripts: every inbound message is followed by the expected
// outbound one; a Reject there names 373/371/58, anything else means the
// message passed validation.

struct Expectation {
  std::string inbound;
  bool reject = false;
  int reason = -1;  // 373 when present
  int ref_tag = 0;  // 371 when present
  std::string text;
  int line = 0;
};

std::map<int, std::string> fields_of(const std::string& line) {
  std::map<int, std::string> out;
  std::stringstream ss(line);
  std::string f;
  while (std::getline(ss, f, '\x01')) {
    const auto eq = f.find('=');
    if (eq == std::string::npos) continue;
    out[std::stoi(f.substr(0, eq))] = f.substr(eq + 1);
  }
  return out;
}

std::vector<Expectation> read_script(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  std::vector<std::string> lines;
  std::string l;
  while (std::getline(in, l)) lines.push_back(l);
  std::vector<Expectation> out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].empty() || lines[i][0] != 'I') continue;
    Expectation e;
    e.line = static_cast<int>(i + 1);
    std::string msg = lines[i].substr(1);
    for (auto p = msg.find("<TIME>"); p != std::string::npos; p = msg.find("<TIME>"))
      msg.replace(p, 6, kTime);
    // The harness inserts BodyLength after BeginString and appends CheckSum.
    const auto first = msg.find('\x01');
    const std::string body = msg.substr(first + 1);
    e.inbound = with_checksum(msg.substr(0, first + 1) + "9=" + std::to_string(body.size()) + "\x01" + body);
    for (std::size_t j = i + 1; j < lines.size(); ++j) {
      if (lines[j].empty() || lines[j][0] == '#') continue;
      if (lines[j][0] == 'E') {
        auto f = fields_of(lines[j].substr(1));
        if (f[35] == "3") {
          e.reject = true;
          e.reason = f.count(373) ? std::stoi(f[373]) : -1;
          e.ref_tag = f.count(371) ? std::stoi(f[371]) : 0;
          e.text = f[58];
        }
      }
      break;
    }
    out.push_back(e);
  }
  return out;
}

TEST_F(ValidatorTest, conformance_scripts_get_the_expected_reject_or_pass) {
  const char* scripts[] = {
      "14a_BadField.def",
      "14b_RequiredFieldMissing.def",
      "14c_TagNotDefinedForMsgType.def",
      "14d_TagSpecifiedWithoutValue.def",
      "14e_IncorrectEnumValue.def",
      "14f_IncorrectDataFormat.def",
      "14g_HeaderBodyTrailerFieldsOutOfOrder.def",
      "14h_RepeatedTag.def",
      "14i_RepeatingGroupCountNotEqual.def",
      "15_HeaderAndBodyFieldsOrderedDifferently.def",
      "21_RepeatingGroupSpecifierWithValueOfZero.def",
      "2q_MsgTypeNotValid.def",
  };
  int rejects = 0, passes = 0;
  for (const char* version : {"fix42", "fix44"}) {
    const auto dict = load(std::string(version) == "fix42" ? "FIX42.xml" : "FIX44.xml");
    for (const char* script : scripts) {
      for (const auto& e : read_script(kScripts + version + "/" + script)) {
        SCOPED_TRACE(std::string(version) + "/" + script + ":" + std::to_string(e.line));
        const auto r = check(e.inbound, *dict);
        if (!e.reject) {
          expect_ok(r);
          ++passes;
          continue;
        }
        ++rejects;
        EXPECT_EQ(r.failure, ValidationFailure::kReject);
        if (e.reason >= 0) {
          EXPECT_EQ(static_cast<int>(r.reason), e.reason);
        }
        EXPECT_EQ(r.ref_tag, e.ref_tag);
        EXPECT_EQ(r.text, e.text);
      }
    }
  }
  EXPECT_EQ(rejects, 2 * 16);
  EXPECT_GT(passes, 2 * 25);
}

TEST_F(ValidatorTest, first_three_fields_out_of_order_is_garbled_not_rejected) {
  // 2t_FirstThreeFieldsOutOfOrder: QuickFIX drops these without a Reject.
  const auto& d = *load("FIX44.xml");
  auto r =
      check(with_checksum(soh(std::string("35=0|8=FIX.4.4|9=29|34=2|49=TW|52=") + kTime + "|56=ISLD|")), d);
  EXPECT_EQ(r.failure, ValidationFailure::kGarbled);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.ref_tag, 35);
  r = check(with_checksum(soh(std::string("8=FIX.4.4|9=29|34=3|35=0|49=TW|52=") + kTime + "|56=ISLD|")), d);
  EXPECT_EQ(r.failure, ValidationFailure::kGarbled);
  EXPECT_EQ(r.ref_tag, 34);
}

TEST_F(ValidatorTest, wrong_begin_string_asks_for_logout) {
  const auto r = check(wire("FIX.4.2", hdr("0")), *load("FIX44.xml"));
  EXPECT_EQ(r.failure, ValidationFailure::kWrongBeginString);
  EXPECT_EQ(r.ref_tag, 8);
  EXPECT_EQ(r.text, "Incorrect BeginString");
  ValidationOptions o;
  o.check_begin_string = false;
  expect_ok(check(wire("FIX.4.2", hdr("0")), *load("FIX44.xml"), o));
}

// ---------------------------------------------------------------------------
// One test per reason.

TEST_F(ValidatorTest, reason_0_invalid_tag_number) {
  expect_reject(check44(hdr("0") + "999=HI|"), RejectReason::kInvalidTagNumber, 999);
  expect_reject(check44(hdr("0") + "0=HI|"), RejectReason::kInvalidTagNumber, 0);
  expect_reject(check44(hdr("0") + "-1=HI|"), RejectReason::kInvalidTagNumber, -1);
  expect_reject(check44(hdr("0") + "5000=HI|"), RejectReason::kInvalidTagNumber, 5000);
  // A tag that is not a number stops the parser; QuickFIX reads it as 0.
  expect_reject(check44(hdr("0") + "4x=HI|"), RejectReason::kInvalidTagNumber, 0);
}

TEST_F(ValidatorTest, reason_1_required_tag_missing_in_header_body_and_group_entry) {
  expect_reject(check44(std::string("35=0|34=2|49=TW|52=") + kTime + "|"), RejectReason::kRequiredTagMissing,
                56);
  expect_reject(check44(hdr("D") + "21=3|40=1|54=1|55=X|60=" + kTime + "|"),
                RejectReason::kRequiredTagMissing, 11);
  // The smallest missing tag first (QuickFIX keeps required fields in a set).
  expect_reject(check44(hdr("D") + "21=3|55=X|60=" + kTime + "|"), RejectReason::kRequiredTagMissing, 11);
  // OrdType (40) is required; OrderQty (38) is not, although its component is.
  expect_reject(check44(hdr("D") + "11=a|21=3|55=X|60=" + kTime + "|"), RejectReason::kRequiredTagMissing,
                40);
}

TEST_F(ValidatorTest, reason_2_tag_not_defined_for_message_type) {
  expect_reject(check44(hdr("0") + "55=MSFT|"), RejectReason::kTagNotDefinedForMessageType, 55);
  // A group member outside its group is not a body field.
  expect_reject(check44(hdr("0") + "448=P|"), RejectReason::kTagNotDefinedForMessageType, 448);
}

TEST_F(ValidatorTest, reason_4_tag_specified_without_value) {
  expect_reject(check44(std::string("35=0|34=2|49=TW|52=") + kTime + "|56=|"),
                RejectReason::kTagSpecifiedWithoutValue, 56);
  expect_reject(check44(hdr("0") + "112=|"), RejectReason::kTagSpecifiedWithoutValue, 112);
}

TEST_F(ValidatorTest, reason_5_value_incorrect_for_enums_and_multiple_values) {
  const std::string nos = hdr("D") + "11=ID|40=1|54=1|38=200|55=INTC|60=" + kTime + "|";
  expect_reject(check44(nos + "21=4|"), RejectReason::kValueIncorrect, 21);
  expect_reject(check44(nos + "21=1|167=BOO|"), RejectReason::kValueIncorrect, 167);
  expect_ok(check44(nos + "21=1|167=SECPLEDGE|"));
  // ExecInst is MULTIPLEVALUESTRING: every item must be a value.
  expect_ok(check44(nos + "18=1 2 G|"));
  expect_reject(check44(nos + "18=1 ZZ|"), RejectReason::kValueIncorrect, 18);
}

TEST_F(ValidatorTest, reason_6_incorrect_data_format) {
  const std::string nos = hdr("D") + "11=ID|21=1|40=1|54=1|55=INTC|60=" + kTime + "|";
  expect_reject(check44(nos + "38=abc|"), RejectReason::kIncorrectDataFormat, 38);
  expect_reject(check44(nos + "38=+200.00|"), RejectReason::kIncorrectDataFormat, 38);
  expect_reject(check44(nos + "38=1e5|"), RejectReason::kIncorrectDataFormat, 38);
  expect_ok(check44(nos + "38=002000.00|"));
  expect_reject(check44(std::string("35=0|34=x|49=TW|52=") + kTime + "|56=ISLD|"),
                RejectReason::kIncorrectDataFormat, 34);
  expect_reject(check44("35=0|34=2|49=TW|52=20261330-14:36:30|56=ISLD|"), RejectReason::kIncorrectDataFormat,
                52);
  expect_reject(check44(hdr("0") + "43=X|"), RejectReason::kIncorrectDataFormat, 43);
}

TEST_F(ValidatorTest, reason_11_invalid_msg_type_has_no_ref_tag) {
  // 2q_MsgTypeNotValid expects "58=Invalid MsgType|372=*|373=11" and no 371.
  expect_reject(check44(hdr("*")), RejectReason::kInvalidMsgType, 0);
}

TEST_F(ValidatorTest, reason_13_tag_appears_more_than_once) {
  const std::string nos = hdr("D") + "11=ID|21=1|54=1|38=200|55=INTC|60=" + kTime + "|";
  expect_reject(check44(nos + "40=1|40=2|"), RejectReason::kTagAppearsMoreThanOnce, 40);
  expect_reject(check44(hdr("0") + "49=X|"), RejectReason::kTagAppearsMoreThanOnce, 49);
  expect_reject(check44(hdr("0") + "9999=a|9999=b|",
                        [] {
                          ValidationOptions o;
                          o.check_user_defined_fields = false;
                          return o;
                        }()),
                RejectReason::kTagAppearsMoreThanOnce, 9999);
}

TEST_F(ValidatorTest, reason_14_header_field_after_body_or_body_after_trailer) {
  expect_reject(check44(std::string("35=D|11=id|21=3|40=1|54=1|55=MSFT|60=") + kTime +
                        "|34=2|49=TW|52=" + kTime + "|56=ISLD|"),
                RejectReason::kTagSpecifiedOutOfRequiredOrder, 34);
  // Out of order is found while parsing: it wins over an unknown MsgType.
  expect_reject(check44(std::string("35=*|55=MSFT|34=3|49=TW|52=") + kTime + "|56=ISLD|"),
                RejectReason::kTagSpecifiedOutOfRequiredOrder, 34);
  // A body field after a trailer field.
  expect_reject(check44(hdr("0") + "93=2|89=ab|112=X|"), RejectReason::kTagSpecifiedOutOfRequiredOrder, 112);
}

TEST_F(ValidatorTest, reason_16_count_differs_from_entries_at_top_level_and_nested) {
  const std::string nos = hdr("D") + "11=ID|21=1|40=1|54=1|38=200|55=INTC|60=" + kTime + "|";
  expect_reject(check44(nos + "386=3|336=PRE-OPEN|336=AFTER-HOURS|"), RejectReason::kIncorrectNumInGroupCount,
                386);
  expect_reject(check44(nos + "453=1|448=A|447=D|452=1|448=B|447=D|452=3|"),
                RejectReason::kIncorrectNumInGroupCount, 453);
  expect_reject(check44(nos + "453=-1|"), RejectReason::kIncorrectNumInGroupCount, 453);
  // Nested: NoPartySubIDs inside a party entry.
  expect_reject(check44(nos + "453=2|448=A|447=D|452=1|802=2|523=s1|803=1|448=B|447=D|452=3|"),
                RejectReason::kIncorrectNumInGroupCount, 802);
  expect_ok(check44(nos + "453=2|448=A|447=D|452=1|802=2|523=s1|803=1|523=s2|803=2|448=B|447=D|452=3|"));
  // 21_RepeatingGroupSpecifierWithValueOfZero.
  expect_ok(check44(nos + "453=0|"));
}

TEST_F(ValidatorTest, reason_15_entry_fields_out_of_order_or_missing_delimiter) {
  const std::string nos = hdr("D") + "11=ID|21=1|40=1|54=1|38=200|55=INTC|60=" + kTime + "|";
  expect_reject(check44(nos + "453=2|448=A|452=1|447=D|448=B|447=D|452=3|"),
                RejectReason::kRepeatingGroupFieldsOutOfOrder, 447);
  expect_reject(check44(nos + "453=1|447=D|448=A|452=1|"), RejectReason::kRepeatingGroupFieldsOutOfOrder,
                447);
  // Nested entry opened without its delimiter (523): 803 is misplaced.
  expect_reject(check44(nos + "453=1|448=A|447=D|452=1|802=1|803=1|523=s1|"),
                RejectReason::kRepeatingGroupFieldsOutOfOrder, 803);
}

TEST_F(ValidatorTest, field_checks_apply_inside_group_entries) {
  const std::string nos = hdr("D") + "11=ID|21=1|40=1|54=1|38=200|55=INTC|60=" + kTime + "|";
  expect_reject(check44(nos + "453=1|448=A|447=D|452=x|"), RejectReason::kIncorrectDataFormat, 452);
  expect_reject(check44(nos + "453=1|448=A|447=%|452=1|"), RejectReason::kValueIncorrect, 447);
  expect_reject(check44(nos + "453=1|448=|447=D|452=1|"), RejectReason::kTagSpecifiedWithoutValue, 448);
  expect_reject(check44(nos + "453=1|448=A|447=D|452=1|802=1|523=s|803=zz|"),
                RejectReason::kIncorrectDataFormat, 803);
}

// A small dictionary for requiredness inside entries and nested groups.
std::shared_ptr<const Dictionary> group_dictionary() {
  static std::shared_ptr<const Dictionary> d = [] {
    auto loaded = Dictionary::load_string(R"(<fix major='4' minor='4'>
 <header>
  <field name='BeginString' required='Y'/><field name='BodyLength' required='Y'/>
  <field name='MsgType' required='Y'/>
 </header>
 <trailer><field name='CheckSum' required='Y'/></trailer>
 <messages>
  <message name='Legs' msgtype='U1' msgcat='app'>
   <field name='Account' required='Y'/>
   <group name='NoLegs' required='N'>
    <field name='LegSymbol' required='Y'/>
    <field name='LegSide' required='Y'/>
    <group name='NoLegStipulations' required='N'>
     <field name='LegStipulationType' required='Y'/>
     <field name='LegStipulationValue' required='Y'/>
    </group>
   </group>
  </message>
 </messages>
 <fields>
  <field number='1' name='Account' type='STRING'/>
  <field number='8' name='BeginString' type='STRING'/>
  <field number='9' name='BodyLength' type='LENGTH'/>
  <field number='10' name='CheckSum' type='STRING'/>
  <field number='35' name='MsgType' type='STRING'/>
  <field number='555' name='NoLegs' type='NUMINGROUP'/>
  <field number='600' name='LegSymbol' type='STRING'/>
  <field number='624' name='LegSide' type='CHAR'/>
  <field number='683' name='NoLegStipulations' type='NUMINGROUP'/>
  <field number='688' name='LegStipulationType' type='STRING'/>
  <field number='689' name='LegStipulationValue' type='STRING'/>
 </fields>
</fix>)",
                                          "groups.xml");
    EXPECT_TRUE(loaded.ok()) << loaded.error().message;
    return loaded.value();
  }();
  return d;
}

TEST_F(ValidatorTest, required_fields_of_entries_and_nested_entries) {
  const auto d = group_dictionary();
  expect_ok(check(wire("FIX.4.4", "35=U1|1=A|555=2|600=X|624=1|600=Y|624=2|683=1|688=T|689=V|"), *d));
  expect_reject(check(wire("FIX.4.4", "35=U1|1=A|555=2|600=X|624=1|600=Y|"), *d),
                RejectReason::kRequiredTagMissing, 624);
  expect_reject(check(wire("FIX.4.4", "35=U1|1=A|555=1|600=X|624=1|683=1|688=T|"), *d),
                RejectReason::kRequiredTagMissing, 689);
  // Required fields before field-level faults (QuickFIX checks them first).
  expect_reject(check(wire("FIX.4.4", "35=U1|1=A|555=1|600=X|624=|"), *d),
                RejectReason::kTagSpecifiedWithoutValue, 624);
  expect_reject(check(wire("FIX.4.4", "35=U1|555=1|600=X|624=|"), *d), RejectReason::kRequiredTagMissing, 1);
}

// ---------------------------------------------------------------------------
// Each check switched off passes the message it would reject.

TEST_F(ValidatorTest, each_check_switched_off_passes_the_message) {
  const std::string nos = hdr("D") + "11=ID|21=1|40=1|54=1|38=200|55=INTC|60=" + kTime + "|";
  struct Case {
    const char* name;
    std::string body;
    bool ValidationOptions::*flag;
    bool off_value;
  };
  const Case cases[] = {
      {"out of order",
       std::string("35=D|11=id|21=3|40=1|54=1|38=1|55=MSFT|60=") + kTime + "|34=2|49=TW|52=" + kTime +
           "|56=ISLD|",
       &ValidationOptions::check_fields_out_of_order, false},
      {"have values", std::string("35=0|34=2|49=TW|52=") + kTime + "|56=|",
       &ValidationOptions::check_fields_have_values, false},
      {"user defined", hdr("0") + "5000=HI|", &ValidationOptions::check_user_defined_fields, false},
      {"unknown fields", hdr("0") + "55=MSFT|999=HI|", &ValidationOptions::allow_unknown_message_fields,
       true},
      {"required", hdr("D") + "21=3|40=1|54=1|55=X|60=" + kTime + "|", &ValidationOptions::check_required,
       false},
      {"values", nos + "167=BOO|", &ValidationOptions::check_values, false},
      {"types", hdr("D") + "11=ID|21=1|40=1|54=1|38=abc|55=INTC|60=" + kTime + "|",
       &ValidationOptions::check_types, false},
      {"repeated", nos + "58=a|58=b|", &ValidationOptions::check_repeated, false},
      {"group count", nos + "386=3|336=PRE-OPEN|336=AFTER-HOURS|", &ValidationOptions::check_groups, false},
      {"group order", nos + "453=2|448=A|452=1|447=D|448=B|447=D|452=3|", &ValidationOptions::check_groups,
       false},
      {"msg type", hdr("*"), &ValidationOptions::check_unknown_msg_type, false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_FALSE(check44(c.body).ok());
    ValidationOptions o;
    o.*(c.flag) = c.off_value;
    expect_ok(check44(c.body, o));
  }
}

// ---------------------------------------------------------------------------
// Clean reference messages.

std::string execution_report_44() {
  return fix44(std::string("35=8|34=2|49=EXECUTOR|52=") + kTime +
               "|56=CLIENT1|37=O1|11=1|17=E1|150=0|39=0|55=NOKIA.HE|54=1|38=10|44=10000|40=2|59=0|"
               "453=2|448=PARTY1|447=D|452=1|448=PARTY2|447=D|452=3|151=10|14=0|6=0|60=" +
               kTime + "|");
}

TEST_F(ValidatorTest, execution_report_and_lab_new_order_single_validate_clean) {
  expect_ok(check(execution_report_44(), *load("FIX44.xml")));
  const std::string lab_body =
      std::string("35=D|34=2|49=CLIENT1|52=") + kTime +
      "|56=EXECUTOR|50=SNDR_SUB|57=SRVR_SUB|11=1|55=NOKIA.HE|54=1|38=10|44=10000|40=2|59=0|"
      "453=2|448=PARTY1|447=D|452=1|448=PARTY2|447=D|452=3|60=" +
      kTime + "|";
  expect_ok(check(wire("FIXT.1.1", lab_body), *fixt_fix50sp2()));
  expect_ok(check(wire("FIX.4.4", lab_body), *load("FIX44.xml")));
  // The session messages validate against the built-in dictionaries.
  expect_ok(check(wire("FIXT.1.1", hdr("A", 1) + "98=0|108=30|1137=9|"),
                  *Dictionary::builtin(FixVersion::kFixT11)));
  expect_ok(check(wire("FIX.4.2", hdr("A", 1) + "98=0|108=30|"), *Dictionary::builtin(FixVersion::kFix42)));
  expect_ok(check(wire("FIX.4.4", hdr("1") + "112=HELLO|"), *Dictionary::builtin(FixVersion::kFix44)));
}

TEST_F(ValidatorTest, builtin_dictionary_rejects_session_messages_like_the_file) {
  const auto& b = *Dictionary::builtin(FixVersion::kFix44);
  expect_reject(check(fix44(hdr("0") + "55=MSFT|"), b), RejectReason::kTagNotDefinedForMessageType, 55);
  expect_reject(check(fix44(hdr("0") + "999=HI|"), b), RejectReason::kInvalidTagNumber, 999);
  expect_reject(check(fix44(hdr("A", 1) + "98=9|108=30|"), b), RejectReason::kValueIncorrect, 98);
  expect_reject(check(fix44(hdr("D")), b), RejectReason::kInvalidMsgType, 0);
}

TEST_F(ValidatorTest, several_faults_report_the_one_quickfix_sees_first) {
  // Body fields are visited by tag: 55 (not in Heartbeat) before 999.
  expect_reject(check44(hdr("0") + "999=HI|55=X|"), RejectReason::kTagNotDefinedForMessageType, 55);
  // Header before body, whatever the positions.
  expect_reject(check44("35=0|34=2|49=TW|52=bad|56=ISLD|112=|"), RejectReason::kIncorrectDataFormat, 52);
  // Per field: repeated before value checks, value present before format.
  expect_reject(check44(hdr("D") + "11=ID|21=1|40=1|54=1|55=INTC|60=" + kTime + "|38=1|38=|"),
                RejectReason::kTagAppearsMoreThanOnce, 38);
  // Format before enum, enum before tag-in-message.
  expect_reject(check44(hdr("0") + "54=Z|"), RejectReason::kValueIncorrect, 54);
  // Required before field faults.
  expect_reject(check44(hdr("D") + "21=9|40=1|54=1|55=X|60=" + kTime + "|"),
                RejectReason::kRequiredTagMissing, 11);
}

TEST_F(ValidatorTest, validate_allocates_nothing) {
  const std::string good = execution_report_44();
  const std::string bad =
      fix44(hdr("D") + "11=ID|21=1|40=1|54=1|38=200|55=INTC|60=" + kTime + "|453=1|448=A|452=1|447=D|");
  const auto dict = load("FIX44.xml");
  const Validator v(*dict);
  ASSERT_EQ(view_->parse(good), ParseStatus::kOk);
  ASSERT_TRUE(v.validate(*view_).ok());
  test::AllocationScope scope;
  for (int i = 0; i < 100; ++i) {
    ASSERT_EQ(view_->parse(i % 2 ? good : bad), ParseStatus::kOk);
    const auto r = v.validate(*view_);
    ASSERT_EQ(r.ok(), i % 2 == 1);
  }
  EXPECT_EQ(scope.count(), 0u);
}

TEST(ValueFormat, follows_quickfix_convertors) {
  EXPECT_TRUE(value_has_type_format(FieldType::kInt, "-12"));
  EXPECT_FALSE(value_has_type_format(FieldType::kInt, "+12"));
  EXPECT_FALSE(value_has_type_format(FieldType::kInt, "-"));
  EXPECT_FALSE(value_has_type_format(FieldType::kInt, ""));
  EXPECT_FALSE(value_has_type_format(FieldType::kSeqNum, "1.0"));
  EXPECT_TRUE(value_has_type_format(FieldType::kPrice, "10."));
  EXPECT_TRUE(value_has_type_format(FieldType::kPrice, ".5"));
  EXPECT_TRUE(value_has_type_format(FieldType::kQty, "-0.25"));
  EXPECT_FALSE(value_has_type_format(FieldType::kQty, "."));
  EXPECT_FALSE(value_has_type_format(FieldType::kQty, "1.2.3"));
  EXPECT_FALSE(value_has_type_format(FieldType::kFloat, "1,5"));
  EXPECT_TRUE(value_has_type_format(FieldType::kChar, "x"));
  EXPECT_FALSE(value_has_type_format(FieldType::kChar, "xy"));
  EXPECT_TRUE(value_has_type_format(FieldType::kBoolean, "Y"));
  EXPECT_FALSE(value_has_type_format(FieldType::kBoolean, "y"));
  EXPECT_TRUE(value_has_type_format(FieldType::kUtcTimestamp, "20261130-14:36:30"));
  EXPECT_TRUE(value_has_type_format(FieldType::kUtcTimestamp, "20261130-14:36:30.691"));
  EXPECT_TRUE(value_has_type_format(FieldType::kUtcTimestamp, "20261130-23:59:60.123456789"));
  EXPECT_FALSE(value_has_type_format(FieldType::kUtcTimestamp, "20261130-24:00:00"));
  EXPECT_FALSE(value_has_type_format(FieldType::kUtcTimestamp, "20261130 14:36:30"));
  EXPECT_FALSE(value_has_type_format(FieldType::kUtcTimestamp, "20261130-14:36:30."));
  EXPECT_FALSE(value_has_type_format(FieldType::kUtcTimestamp, "20261130-14:36:30.1234567890"));
  EXPECT_TRUE(value_has_type_format(FieldType::kUtcTimeOnly, "14:36:30.691"));
  EXPECT_FALSE(value_has_type_format(FieldType::kUtcTimeOnly, "14:36"));
  EXPECT_TRUE(value_has_type_format(FieldType::kUtcDateOnly, "20261130"));
  EXPECT_FALSE(value_has_type_format(FieldType::kUtcDateOnly, "20261131x"));
  EXPECT_FALSE(value_has_type_format(FieldType::kUtcDateOnly, "20261301"));
  EXPECT_TRUE(value_has_type_format(FieldType::kString, ""));
  EXPECT_TRUE(value_has_type_format(FieldType::kMonthYear, "anything"));
}

}  // namespace
}  // namespace hft::codec
