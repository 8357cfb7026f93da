// Dictionaries: every QuickFIX XML file of shared/fix/spec loads and reads
// right; broken files report file and line; the built-in dictionaries agree
// with the files; FIXT.1.1 + FIX.5.0SP2 combine.

#include "hft/codec/dictionary.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace hft::codec {
namespace {

const std::string kSpec = std::string(HFT_SHARED_DIR) + "/fix/spec/";
const std::string kBroken = std::string(HFT_SOURCE_DIR) + "/tests/data/dict/";

std::shared_ptr<const Dictionary> load(const std::string& file) {
  auto d = Dictionary::load_file(kSpec + file);
  EXPECT_TRUE(d.ok()) << (d.ok() ? "" : d.error().message);
  return d.ok() ? d.value() : nullptr;
}

std::string load_error(const std::string& path) {
  auto d = Dictionary::load_file(path);
  EXPECT_FALSE(d.ok()) << path << " loaded";
  return d.ok() ? std::string() : d.error().message;
}

std::string load_string_error(const std::string& xml) {
  auto d = Dictionary::load_string(xml, "inline.xml");
  EXPECT_FALSE(d.ok());
  return d.ok() ? std::string() : d.error().message;
}

TEST(Dictionary, loads_every_spec_file_with_its_version_and_begin_string) {
  struct Case {
    const char* file;
    const char* version;
    const char* begin_string;
    std::size_t min_messages;
  };
  const Case cases[] = {
      {"FIX40.xml", "FIX.4.0", "FIX.4.0", 27},         {"FIX41.xml", "FIX.4.1", "FIX.4.1", 28},
      {"FIX42.xml", "FIX.4.2", "FIX.4.2", 46},         {"FIX43.xml", "FIX.4.3", "FIX.4.3", 68},
      {"FIX44.xml", "FIX.4.4", "FIX.4.4", 93},         {"FIX50.xml", "FIX.5.0", "FIXT.1.1", 93},
      {"FIX50SP1.xml", "FIX.5.0SP1", "FIXT.1.1", 105}, {"FIX50SP2.xml", "FIX.5.0SP2", "FIXT.1.1", 156},
      {"FIXT11.xml", "FIXT.1.1", "FIXT.1.1", 8},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.file);
    auto d = load(c.file);
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(d->version(), c.version);
    EXPECT_EQ(d->begin_string(), c.begin_string);
    EXPECT_EQ(d->messages().size(), c.min_messages);
    // Every message is found through the hash table, and every member tag
    // and group is consistent.
    for (const auto& m : d->messages()) {
      const MessageDef* found = d->message(m.msg_type);
      ASSERT_NE(found, nullptr) << m.msg_type;
      EXPECT_EQ(found->name, m.name);
      for (std::size_t i = 0; i < m.fields.members.size(); ++i) {
        const auto& member = m.fields.members[i];
        ASSERT_NE(d->field(member.tag), nullptr) << member.tag;
        EXPECT_EQ(m.fields.position(member.tag), static_cast<int>(i));
        if (member.group >= 0) {
          EXPECT_EQ(d->group(member.group).count_tag, member.tag);
        }
      }
    }
  }
}

TEST(Dictionary, fix44_new_order_single_has_the_parties_group_with_nested_sub_ids) {
  auto d = load("FIX44.xml");
  ASSERT_NE(d, nullptr);
  const MessageDef* nos = d->message("D");
  ASSERT_NE(nos, nullptr);
  EXPECT_EQ(nos->name, "NewOrderSingle");
  EXPECT_FALSE(nos->admin);
  const auto* parties = nos->fields.member(tag::kNoPartyIDs);
  ASSERT_NE(parties, nullptr);
  ASSERT_GE(parties->group, 0);
  EXPECT_FALSE(parties->required);
  const GroupDef& g = d->group(parties->group);
  EXPECT_EQ(g.count_tag, 453);
  EXPECT_EQ(g.delimiter_tag, 448);
  ASSERT_EQ(g.fields.members.size(), 4u);
  EXPECT_EQ(g.fields.members[1].tag, 447);
  EXPECT_EQ(g.fields.members[2].tag, 452);
  const auto* sub = g.fields.member(802);  // NoPartySubIDs
  ASSERT_NE(sub, nullptr);
  ASSERT_GE(sub->group, 0);
  EXPECT_EQ(d->group(sub->group).delimiter_tag, 523);

  // Required fields, including those from a required component.
  EXPECT_TRUE(nos->fields.member(tag::kClOrdID)->required);
  EXPECT_TRUE(nos->fields.member(tag::kSide)->required);
  EXPECT_TRUE(nos->fields.member(tag::kOrdType)->required);
  EXPECT_TRUE(nos->fields.member(tag::kTransactTime)->required);
  // Instrument is required but its Symbol is not: only fields required in
  // every enclosing context are.
  EXPECT_FALSE(nos->fields.member(tag::kSymbol)->required);
  EXPECT_FALSE(nos->fields.member(tag::kPrice)->required);
  EXPECT_EQ(nos->fields.member(tag::kMsgType), nullptr);  // header field

  // Header and trailer.
  EXPECT_TRUE(d->header().member(tag::kSenderCompID)->required);
  EXPECT_FALSE(d->header().member(tag::kPossDupFlag)->required);
  EXPECT_NE(d->trailer().member(tag::kCheckSum), nullptr);
  EXPECT_EQ(d->header().member(tag::kCheckSum), nullptr);
}

TEST(Dictionary, fix44_fields_have_types_enum_names_and_data_links) {
  auto d = load("FIX44.xml");
  ASSERT_NE(d, nullptr);
  const FieldDef* side = d->field(tag::kSide);
  ASSERT_NE(side, nullptr);
  EXPECT_EQ(side->name, "Side");
  EXPECT_EQ(side->type, FieldType::kChar);
  EXPECT_EQ(side->enum_name("1"), "BUY");
  EXPECT_EQ(side->enum_name("2"), "SELL");
  EXPECT_EQ(side->enum_name("Z"), "");
  EXPECT_TRUE(side->enum_allows("1"));
  EXPECT_FALSE(side->enum_allows("Z"));
  EXPECT_EQ(d->field(tag::kOrdStatus)->enum_name("0"), "NEW");
  EXPECT_EQ(d->field(tag::kPrice)->type, FieldType::kPrice);
  EXPECT_EQ(d->field(tag::kSendingTime)->type, FieldType::kUtcTimestamp);
  EXPECT_EQ(d->field(tag::kNoPartyIDs)->type, FieldType::kNumInGroup);
  EXPECT_EQ(d->field_by_name("ClOrdID")->tag, 11);
  EXPECT_EQ(d->field_by_name("NoSuchName"), nullptr);
  EXPECT_EQ(d->field(0), nullptr);
  EXPECT_EQ(d->field(-5), nullptr);
  EXPECT_EQ(d->field(99999), nullptr);

  // LENGTH directly followed by DATA in <fields>.
  EXPECT_EQ(d->field(tag::kRawDataLength)->data_tag, tag::kRawData);
  EXPECT_EQ(d->field(tag::kXmlDataLen)->data_tag, tag::kXmlData);
  EXPECT_EQ(d->field(tag::kSignatureLength)->data_tag, 0);  // 89 is not next to 93
  EXPECT_EQ(d->field(tag::kBodyLength)->data_tag, 0);

  // The per-tag table agrees.
  EXPECT_TRUE(d->enum_allows(tag::kSide, "1"));
  EXPECT_FALSE(d->enum_allows(tag::kSide, "Z"));
  EXPECT_TRUE(d->enum_allows(tag::kClOrdID, "anything"));
  EXPECT_TRUE(d->enum_allows(167, "CS"));
  EXPECT_TRUE(d->enum_allows(167, "SECPLEDGE"));  // longer than 8 bytes
  EXPECT_FALSE(d->enum_allows(167, "BOO"));
  EXPECT_TRUE(d->tag_info(tag::kMsgSeqNum).flags & TagInfo::kHeader);
  EXPECT_TRUE(d->tag_info(tag::kCheckSum).flags & TagInfo::kTrailer);
  EXPECT_EQ(d->tag_info(4999).flags, 0);
}

TEST(Dictionary, message_lookup_misses_unknown_types) {
  auto d = load("FIX44.xml");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->message("*"), nullptr);
  EXPECT_EQ(d->message(""), nullptr);
  EXPECT_EQ(d->message("ZZ"), nullptr);
  EXPECT_EQ(d->message("DD"), nullptr);
  EXPECT_EQ(d->message("a_very_long_type"), nullptr);
  EXPECT_EQ(d->message("AE")->name, "TradeCaptureReport");
  EXPECT_TRUE(d->message("A")->admin);
}

TEST(Dictionary, fix50sp2_with_fixt11_combines_transport_and_application) {
  auto t = load("FIXT11.xml");
  auto a = load("FIX50SP2.xml");
  ASSERT_TRUE(t && a);
  auto c = Dictionary::combine(*t, *a);
  EXPECT_EQ(c->begin_string(), "FIXT.1.1");
  EXPECT_EQ(c->version(), "FIX.5.0SP2");
  EXPECT_NE(c->header().member(tag::kApplVerID), nullptr);
  EXPECT_TRUE(c->header().member(tag::kSenderCompID)->required);
  EXPECT_NE(c->trailer().member(tag::kCheckSum), nullptr);
  ASSERT_NE(c->message("AE"), nullptr);
  EXPECT_EQ(c->message("AE")->name, "TradeCaptureReport");
  ASSERT_NE(c->message("A"), nullptr);
  EXPECT_TRUE(c->message("A")->admin);
  EXPECT_NE(c->message("A")->fields.member(tag::kDefaultApplVerID), nullptr);
  EXPECT_EQ(c->messages().size(), t->messages().size() + a->messages().size());
  // App groups were re-indexed past the transport's.
  const MessageDef* nos = c->message("D");
  ASSERT_NE(nos, nullptr);
  const auto* parties = nos->fields.member(tag::kNoPartyIDs);
  ASSERT_NE(parties, nullptr);
  EXPECT_EQ(c->group(parties->group).count_tag, tag::kNoPartyIDs);
  EXPECT_EQ(c->group(parties->group).delimiter_tag, tag::kPartyID);
  // Header group from the transport.
  const auto* hops = c->header().member(627);
  ASSERT_NE(hops, nullptr);
  EXPECT_EQ(c->group(hops->group).delimiter_tag, 628);
  // Fields of both; tags above the dense limit found through the sparse table.
  EXPECT_NE(c->field(tag::kApplVerID), nullptr);
  EXPECT_NE(c->field(tag::kClOrdID), nullptr);
  EXPECT_EQ(c->max_tag(), 50002);
  bool sparse_found = false;
  for (const auto& m : c->messages()) {
    for (const auto& member : m.fields.members) {
      if (member.tag >= FieldSet::kDenseTagLimit) {
        EXPECT_EQ(m.fields.member(member.tag), &member);
        sparse_found = true;
      }
    }
  }
  for (const auto& g : c->groups()) {
    for (const auto& member : g.fields.members) {
      if (member.tag >= FieldSet::kDenseTagLimit) {
        EXPECT_EQ(g.fields.member(member.tag), &member);
        sparse_found = true;
      }
    }
  }
  EXPECT_TRUE(sparse_found);
}

TEST(Dictionary, components_declared_after_use_expand_recursively_with_requiredness) {
  const std::string xml = R"(<fix major='4' minor='4'>
 <header><field name='BeginString' required='Y'/></header>
 <trailer><field name='CheckSum' required='Y'/></trailer>
 <messages>
  <message name='Order' msgtype='D' msgcat='app'>
   <field name='ClOrdID' required='Y'/>
   <component name='Outer' required='Y'/>
   <component name='Optional' required='N'/>
  </message>
 </messages>
 <components>
  <component name='Outer'>
   <field name='Symbol' required='Y'/>
   <component name='Inner' required='Y'/>
  </component>
  <component name='Inner'>
   <group name='NoPartyIDs' required='N'>
    <field name='PartyID' required='Y'/>
    <field name='PartyRole' required='Y'/>
   </group>
  </component>
  <component name='Optional'>
   <field name='Price' required='Y'/>
  </component>
 </components>
 <fields>
  <field number='8' name='BeginString' type='STRING'/>
  <field number='10' name='CheckSum' type='STRING'/>
  <field number='11' name='ClOrdID' type='STRING'/>
  <field number='44' name='Price' type='PRICE'/>
  <field number='55' name='Symbol' type='STRING'/>
  <field number='448' name='PartyID' type='STRING'/>
  <field number='452' name='PartyRole' type='INT'/>
  <field number='453' name='NoPartyIDs' type='NUMINGROUP'/>
 </fields>
</fix>)";
  auto loaded = Dictionary::load_string(xml, "inline.xml");
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  const auto& d = *loaded.value();
  const MessageDef* m = d.message("D");
  ASSERT_NE(m, nullptr);
  ASSERT_EQ(m->fields.members.size(), 4u);
  EXPECT_EQ(m->fields.members[0].tag, 11);
  EXPECT_EQ(m->fields.members[1].tag, 55);
  EXPECT_EQ(m->fields.members[2].tag, 453);
  EXPECT_EQ(m->fields.members[3].tag, 44);
  EXPECT_TRUE(m->fields.member(55)->required);
  EXPECT_FALSE(m->fields.member(44)->required);  // optional component
  EXPECT_EQ(m->fields.required_count, 2);
  const GroupDef& g = d.group(m->fields.member(453)->group);
  EXPECT_EQ(g.fields.required_count, 2);  // relative to the entry
  EXPECT_EQ(d.version(), "FIX.4.4");
}

TEST(Dictionary, broken_files_report_file_line_and_problem) {
  struct Case {
    const char* file;
    int line;
    const char* problem;
  };
  const Case cases[] = {
      {"malformed.xml", 8, "malformed XML: mismatched tag"},
      {"unknown_field.xml", 8, "unknown field 'NoSuchField'"},
      {"duplicate_number.xml", 14, "duplicate field number 112"},
      {"bad_number.xml", 13, "bad field number '11x'"},
      {"missing_attribute.xml", 13, "<field> is missing attribute 'number'"},
      {"component_cycle.xml", 17, "component cycle: Outer -> Inner -> Outer"},
  };
  for (const auto& c : cases) {
    const std::string path = kBroken + c.file;
    const std::string error = load_error(path);
    const std::string prefix = path + ":" + std::to_string(c.line) + ": ";
    EXPECT_EQ(error.rfind(prefix, 0), 0u) << error;
    EXPECT_NE(error.find(c.problem), std::string::npos) << error;
  }
  const std::string missing = load_error(kBroken + "no_such_file.xml");
  EXPECT_EQ(missing.rfind(kBroken + "no_such_file.xml:0: cannot open", 0), 0u) << missing;
  EXPECT_NE(missing.find("No such file"), std::string::npos) << missing;
  // A directory given as a dictionary file is named as such, not read.
  const std::string directory = load_error(kBroken);
  EXPECT_EQ(directory.rfind(kBroken + ":0: cannot open dictionary file (not a regular file)", 0), 0u) << directory;
}

TEST(Dictionary, inline_errors_name_the_given_source_name) {
  EXPECT_EQ(load_string_error("<fix major='4' minor='4'>\n<fields/>\n<messages>\n<message "
                              "msgtype='0'/>\n</messages>\n<header/><trailer/></fix>"),
            "inline.xml:4: <message> is missing attribute 'name'");
  EXPECT_EQ(load_string_error("<fox/>"), "inline.xml:1: root element is <fox>, expected <fix>");
  EXPECT_EQ(load_string_error("<fix minor='4'><fields/><messages/></fix>"),
            "inline.xml:1: <fix> is missing attribute 'major'");
  EXPECT_EQ(load_string_error("<fix major='4' minor='4'><fields/><messages/><trailer/></fix>"),
            "inline.xml:1: missing <header> section");
  EXPECT_EQ(load_string_error(
                "<fix major='4' minor='4'><header/><trailer/><messages>\n"
                "<message name='X' msgtype='0'><component name='Nope'/></message></messages><fields/></fix>"),
            "inline.xml:2: unknown component 'Nope' referenced");
  EXPECT_EQ(load_string_error(
                "<fix major='4' minor='4'><header/><trailer/><messages/>\n<fields>\n"
                "<field number='1' name='A' type='STRING'><value description='x'/></field></fields></fix>"),
            "inline.xml:3: <value> is missing attribute 'enum'");
  EXPECT_EQ(load_string_error(""), "inline.xml:1: malformed XML: no element found");
  // A field that is both a header and a trailer field (fuzz finding
  // dictionary-58734ba8): refused where the trailer lists it.
  EXPECT_EQ(load_string_error("<fix major='4' minor='4'><header><field name='CheckSum' required='N'/></header>\n"
                              "<trailer>\n<field name='CheckSum' required='Y'/></trailer><messages/>\n"
                              "<fields><field number='10' name='CheckSum' type='STRING'/></fields></fix>"),
            "inline.xml:3: field CheckSum (10) is in both <header> and <trailer>");
}

// The built-in dictionary of each version carries the same header, trailer
// and session messages as the file, with the same field definitions.
void expect_same_set(const Dictionary& a, const FieldSet& x, const Dictionary& b, const FieldSet& y,
                     const std::string& where) {
  ASSERT_EQ(x.members.size(), y.members.size()) << where;
  for (std::size_t i = 0; i < x.members.size(); ++i) {
    const auto& p = x.members[i];
    const auto& q = y.members[i];
    SCOPED_TRACE(where + " tag " + std::to_string(p.tag));
    EXPECT_EQ(p.tag, q.tag);
    EXPECT_EQ(p.required, q.required);
    const FieldDef* fa = a.field(p.tag);
    const FieldDef* fb = b.field(q.tag);
    ASSERT_TRUE(fa && fb);
    EXPECT_EQ(fa->name, fb->name);
    EXPECT_EQ(fa->type, fb->type);
    EXPECT_EQ(fa->enum_values, fb->enum_values);
    EXPECT_EQ(fa->enum_names, fb->enum_names);
    EXPECT_EQ(fa->data_tag, fb->data_tag);
    ASSERT_EQ(p.group >= 0, q.group >= 0);
    if (p.group >= 0) {
      const GroupDef& ga = a.group(p.group);
      const GroupDef& gb = b.group(q.group);
      EXPECT_EQ(ga.delimiter_tag, gb.delimiter_tag);
      expect_same_set(a, ga.fields, b, gb.fields, where + "/" + fa->name);
    }
  }
}

TEST(Dictionary, builtin_agrees_with_the_xml_for_session_messages) {
  struct Case {
    FixVersion version;
    const char* file;
    bool business_reject;
  };
  const Case cases[] = {
      {FixVersion::kFix40, "FIX40.xml", false}, {FixVersion::kFix41, "FIX41.xml", false},
      {FixVersion::kFix42, "FIX42.xml", true},  {FixVersion::kFix43, "FIX43.xml", true},
      {FixVersion::kFix44, "FIX44.xml", true},  {FixVersion::kFixT11, "FIXT11.xml", false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.file);
    auto b = Dictionary::builtin(c.version);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(b, Dictionary::builtin(c.version));  // built once
    auto x = load(c.file);
    ASSERT_NE(x, nullptr);
    EXPECT_EQ(b->version(), x->version());
    EXPECT_EQ(b->begin_string(), begin_string(c.version));
    expect_same_set(*b, b->header(), *x, x->header(), "header");
    expect_same_set(*b, b->trailer(), *x, x->trailer(), "trailer");
    std::set<std::string> types;
    for (const auto& m : b->messages()) types.insert(m.msg_type);
    std::set<std::string> expected = {"0", "1", "2", "3", "4", "5", "A"};
    if (c.business_reject) expected.insert("j");
    for (const auto& t : expected) EXPECT_EQ(types.count(t), 1u) << t;
    for (const auto& m : b->messages()) {
      const MessageDef* xm = x->message(m.msg_type);
      ASSERT_NE(xm, nullptr) << m.msg_type;
      EXPECT_EQ(m.name, xm->name);
      EXPECT_EQ(m.admin, xm->admin);
      expect_same_set(*b, m.fields, *x, xm->fields, m.name);
    }
    // Every field is defined, so session messages are rejected as with the
    // file, and application types and fields print by name.
    EXPECT_EQ(b->fields().size(), x->fields().size());
    EXPECT_EQ(b->field(tag::kMsgType)->enum_values, x->field(tag::kMsgType)->enum_values);
  }
}

}  // namespace
}  // namespace hft::codec
