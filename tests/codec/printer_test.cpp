// Printer: SOH made visible, tag and enum names from the dictionary, group
// entries indented.

#include "hft/codec/printer.hpp"

#include <gtest/gtest.h>

#include <string>

namespace hft::codec {
namespace {

std::shared_ptr<const Dictionary> fix44() {
  static auto d = [] {
    auto loaded = Dictionary::load_file(std::string(HFT_SHARED_DIR) + "/fix/spec/FIX44.xml");
    EXPECT_TRUE(loaded.ok());
    return loaded.value();
  }();
  return d;
}

std::string soh(std::string s) {
  for (char& c : s) {
    if (c == '|') c = kSoh;
  }
  return s;
}

const std::string kNos = soh(
    "8=FIX.4.4|9=120|35=D|34=2|49=CLIENT1|52=20261130-14:36:30.691|56=EXECUTOR|11=1|55=NOKIA.HE|54=1|38=10|"
    "40=2|453=2|448=PARTY1|447=D|452=1|802=1|523=S|803=2|448=PARTY2|447=D|452=3|9999=x|10=110|");

TEST(Printer, printable_shows_soh_as_the_separator) {
  EXPECT_EQ(to_printable(soh("8=FIX.4.4|9=5|35=0|10=000|")), "8=FIX.4.4|9=5|35=0|10=000|");
  EXPECT_EQ(to_printable(soh("8=FIX.4.4|35=0|"), '^'), "8=FIX.4.4^35=0^");
  EXPECT_EQ(to_printable(""), "");
}

TEST(Printer, named_uses_tag_names_message_names_and_enum_descriptions) {
  const std::string named = to_named(kNos, *fix44());
  EXPECT_EQ(named.rfind("BeginString=FIX.4.4|BodyLength=120|MsgType=NewOrderSingle(D)|MsgSeqNum=2|", 0), 0u)
      << named;
  EXPECT_NE(named.find("|Side=BUY(1)|"), std::string::npos);
  EXPECT_NE(named.find("|OrdType=LIMIT(2)|"), std::string::npos);
  EXPECT_NE(
      named.find("|NoPartyIDs=2|PartyID=PARTY1|PartyIDSource=PROPRIETARY(D)|PartyRole=EXECUTING_FIRM(1)|"),
      std::string::npos)
      << named;
  EXPECT_NE(named.find("|9999=x|CheckSum=110|"), std::string::npos);  // unknown tag as its number
  EXPECT_EQ(to_named(soh("35=0|"), *fix44(), ' '), "MsgType=Heartbeat(0) ");
}

TEST(Printer, named_keeps_length_prefixed_data_whole) {
  const std::string msg = soh("35=A|95=5|96=") +
                          std::string(
                              "ab\x01"
                              "cd") +
                          soh("|98=0|");
  EXPECT_EQ(to_named(msg, *fix44()), std::string("MsgType=Logon(A)|RawDataLength=5|RawData=ab\x01"
                                                 "cd|EncryptMethod=NONE(0)|"));
}

TEST(Printer, tree_indents_group_entries_and_nested_groups) {
  const std::string tree = to_tree(kNos, *fix44());
  EXPECT_NE(tree.find("   35 MsgType          = D (NewOrderSingle)\n"), std::string::npos) << tree;
  EXPECT_NE(tree.find("   54 Side             = 1 (BUY)\n"), std::string::npos) << tree;
  const std::string parties =
      "  453 NoPartyIDs       = 2\n"
      "  - entry 1\n"
      "      448 PartyID          = PARTY1\n"
      "      447 PartyIDSource    = D (PROPRIETARY)\n"
      "      452 PartyRole        = 1 (EXECUTING_FIRM)\n"
      "      802 NoPartySubIDs    = 1\n"
      "      - entry 1\n"
      "          523 PartySubID       = S\n"
      "          803 PartySubIDType   = 2 (PERSON)\n"
      "  - entry 2\n"
      "      448 PartyID          = PARTY2\n";
  EXPECT_NE(tree.find(parties), std::string::npos) << tree;
  EXPECT_NE(tree.find(" 9999                  = x\n"), std::string::npos) << tree;
  EXPECT_NE(tree.find("   10 CheckSum         = 110\n"), std::string::npos) << tree;
}

}  // namespace
}  // namespace hft::codec
