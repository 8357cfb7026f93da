#include "hft/engine/config.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace {

using namespace hft::engine;
using std::chrono::milliseconds;
using std::chrono::seconds;

const std::string kData = HFT_SOURCE_DIR "/tests/engine/data/";

Config load_ok(const std::string& name) {
  auto config = Config::load(kData + name);
  EXPECT_TRUE(config.ok()) << (config.ok() ? "" : config.error().message);
  return config.ok() ? std::move(config).value() : Config{};
}

template <typename T>
T value_of(hft::Expected<T> r) {
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? std::move(r).value() : T{};
}

// A valid initiator; tests append lines to its [SESSION] (from line 14 on).
const std::string kBase =
    "[DEFAULT]\n"                    // 1
    "ConnectionType=initiator\n"     // 2
    "HeartBtInt=30\n"                // 3
    "FileStorePath=store\n"          // 4
    "StartTime=00:00:00\n"           // 5
    "EndTime=00:00:00\n"             // 6
    "UseDataDictionary=N\n"          // 7
    "SocketConnectHost=127.0.0.1\n"  // 8
    "[SESSION]\n"                    // 9
    "BeginString=FIX.4.4\n"          // 10
    "SenderCompID=A\n"               // 11
    "TargetCompID=B\n"               // 12
    "SocketConnectPort=5001\n";      // 13

std::string replace_first(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// ------------------------------------------------------------ samples ----

TEST(ConfigBuilder, builds_the_config_a_file_with_the_same_settings_gives) {
  ConfigBuilder b("prog");
  b.set("ConnectionType", "acceptor").set("NonStopSession", "Y").set("UseDataDictionary", "N");
  b.set("SocketAcceptPort", 9878, "--port 9878").set("MaxConnections", 100);
  b.add_session().set("BeginString", "FIX.4.4").set("SenderCompID", "VENUE").set("TargetCompID", "C1");
  b.add_session().set("BeginString", "FIX.4.2").set("SenderCompID", "VENUE").set("TargetCompID", "C2");
  auto built = b.build();
  ASSERT_TRUE(built) << built.error().message;
  auto parsed = Config::parse(b.text(), "same.cfg");
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(built->sessions().size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) EXPECT_EQ(built->sessions()[i].session_id(), parsed->sessions()[i].session_id());
  EXPECT_EQ(*built->sessions()[1].get_int("SocketAcceptPort"), 9878);
  EXPECT_EQ(*built->defaults().get_int("MaxConnections"), 100);
  EXPECT_EQ(*built->sessions()[0].get_string("BeginString"), "FIX.4.4");
}

TEST(ConfigBuilder, errors_name_the_origin_of_the_value_not_a_generated_line) {
  auto base = [] {
    ConfigBuilder b("prog");
    b.set("ConnectionType", "initiator").set("NonStopSession", "Y").set("UseDataDictionary", "N");
    b.set("SocketConnectHost", "127.0.0.1").set("HeartBtInt", 30);
    return b;
  };
  {
    ConfigBuilder b = base();
    b.set("SocketConnectPort", 70000, "--port 70000");
    b.add_session().set("BeginString", "FIX.4.4").set("SenderCompID", "A").set("TargetCompID", "B");
    auto c = b.build();
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().message, "--port 70000: SocketConnectPort: bad value \"70000\": expected a port in 1..65535");
  }
  {
    ConfigBuilder b = base();
    b.set("SocketConnectPort", 1).set("SendingTimeTolerance", 5, "--tolerance");
    b.add_session().set("BeginString", "FIX.4.4").set("SenderCompID", "A").set("TargetCompID", "B");
    auto c = b.build();
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().message.rfind("--tolerance: SendingTimeTolerance: unknown key", 0), 0u) << c.error().message;
  }
  {
    ConfigBuilder b = base();
    b.set("SocketConnectPort", 1);
    b.add_session("session CLIENT1").set("BeginString", "FIX.4.4").set("SenderCompID", "A");
    auto c = b.build();
    ASSERT_FALSE(c);
    EXPECT_NE(c.error().message.find("prog: session CLIENT1: TargetCompID: required, missing in session CLIENT1"),
              std::string::npos)
        << c.error().message;
  }
  {
    ConfigBuilder b = base();
    b.set("SocketConnectPort", 1);
    b.add_session().set("BeginString", "FIX.4.4").set("SenderCompID", "A", "--sender A").set("TargetCompID", "B");
    b.set("SenderCompID", "C", "--sender2 C");
    auto c = b.build();
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().message, "--sender2 C: SenderCompID: set twice in the same section (first by --sender A)");
  }
  {
    ConfigBuilder b = base();
    b.set("SocketConnectPort", 1);
    b.add_session().set("BeginString", "FIX.4.4").set("SenderCompID", "A\nSocketUseSSL=Y", "--sender");
    auto c = b.build();
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().message, "--sender: SenderCompID: the value must not contain a line break");
    ConfigBuilder e = base();
    e.set("SocketConnectPort", 1).set("Password", "", "--password");
    e.add_session().set("BeginString", "FIX.4.4").set("SenderCompID", "A").set("TargetCompID", "B");
    auto empty = e.build();
    ASSERT_FALSE(empty);
    EXPECT_EQ(empty.error().message, "--password: Password: empty value");
  }
}

TEST(Config, quickfix_executor_sample_loads_with_every_session_inheriting_default) {
  const Config config = load_ok("executor.cfg");
  ASSERT_EQ(config.sessions().size(), 6u);
  for (const Section& s : config.sessions()) {
    EXPECT_EQ(s.connection_type(), ConnectionType::kAcceptor);
    EXPECT_EQ(value_of(s.get_int("SocketAcceptPort")), 5001);
    EXPECT_EQ(value_of(s.get_time("StartTime")), (TimeOfDay{0, 0, 0}));
    EXPECT_TRUE(s.connect_endpoints().empty());
  }
  const Section& fix44 = config.sessions()[4];
  EXPECT_EQ(fix44.session_id().to_string(), "FIX.4.4:EXECUTOR->CLIENT1");
  EXPECT_EQ(value_of(fix44.get_string("DataDictionary")), "../spec/FIX44.xml");
  EXPECT_FALSE(value_of(fix44.get_bool("ValidateUserDefinedFields")));
  EXPECT_TRUE(value_of(config.sessions()[5].get_bool("ValidateUserDefinedFields")));  // schema default
  const auto listener = value_of(listener_options(fix44));
  EXPECT_EQ(listener.port, 5001);
  EXPECT_EQ(listener.host, "0.0.0.0");
  EXPECT_TRUE(listener.socket.tcp_nodelay);
  SessionId id{"FIX.4.2", "EXECUTOR", "", "", "CLIENT2", "", "", ""};
  ASSERT_NE(config.find_session(id), nullptr);
  EXPECT_EQ(config.find_session(id)->line(), 35);
}

TEST(Config, quickfix_tradeclient_sample_loads_as_initiators) {
  const Config config = load_ok("tradeclient.cfg");
  ASSERT_EQ(config.sessions().size(), 2u);
  const Section& s = config.sessions()[1];
  EXPECT_EQ(s.connection_type(), ConnectionType::kInitiator);
  ASSERT_EQ(s.connect_endpoints().size(), 1u);
  EXPECT_EQ(s.connect_endpoints()[0], (hft::transport::Endpoint{"localhost", 5001}));
  EXPECT_EQ(value_of(s.get_duration("HeartBtInt")), seconds(30));
  EXPECT_TRUE(value_of(s.get_bool("ResetOnLogon")));
  EXPECT_FALSE(value_of(config.sessions()[0].get_bool("ResetOnLogon")));
  const auto connector = value_of(connector_options(s));
  EXPECT_EQ(connector.reconnect_interval_ns, 30'000'000'000);
  EXPECT_EQ(connector.connect_timeout_ns, 5'000'000'000);  // SocketConnectTimeoutMs default
  EXPECT_EQ(connector.buffers.receive_size, 1u << 20);
  EXPECT_FALSE(listener_options(s).ok());
}

TEST(Config, fixt_sample_reads_weekly_schedule_zone_and_qualified_dictionaries) {
  const Config config = load_ok("fixt.cfg");
  const Section& s = config.sessions().at(0);
  EXPECT_EQ(value_of(s.get_string("DefaultApplVerID")), "FIX.5.0SP2");
  EXPECT_EQ(value_of(s.get_day("StartDay")), std::chrono::Sunday);
  EXPECT_EQ(value_of(s.get_day("EndDay")), std::chrono::Friday);
  EXPECT_EQ(value_of(s.get_time("EndTime")).seconds_since_midnight(), 17 * 3600);
  EXPECT_EQ(value_of(s.get_string("TimeZone")), "America/New_York");
  EXPECT_EQ(value_of(s.get_string("AppDataDictionary.FIX.4.4")), "spec/FIX44.xml");
  EXPECT_EQ(value_of(s.get_string("AppDataDictionary")), "spec/FIX50SP2.xml");
}

TEST(Config, libhft_keys_and_failover_endpoints_convert_to_transport_options) {
  const Config config = load_ok("libhft.cfg");
  const Section& s = config.sessions().at(0);
  ASSERT_EQ(s.connect_endpoints().size(), 3u);
  EXPECT_EQ(s.connect_endpoints()[0], (hft::transport::Endpoint{"10.1.0.10", 9001}));
  EXPECT_EQ(s.connect_endpoints()[1], (hft::transport::Endpoint{"10.1.0.11", 9001}));
  EXPECT_EQ(s.connect_endpoints()[2], (hft::transport::Endpoint{"backup.venue.example", 9101}));
  EXPECT_EQ(s.session_id().to_string(), "FIX.4.4:FIRM/DESK1->VENUE");
  EXPECT_EQ(value_of(s.get_size("JournalSegmentSize")), 256u << 20);
  EXPECT_EQ(value_of(s.get_string("JournalDurability")), "fsync");
  EXPECT_EQ(value_of(s.get_duration("JournalFsyncIntervalMs")), milliseconds(20));
  EXPECT_EQ(value_of(s.get_int("JournalRetainSegments")), 0);

  const auto reactor = value_of(reactor_options(config));
  EXPECT_EQ(reactor.poll_mode, hft::transport::PollMode::kBusy);
  EXPECT_EQ(reactor.idle, hft::core::IdleKind::kBusySpin);
  EXPECT_EQ(reactor.epoll_timeout_ms, 0);
  EXPECT_EQ(reactor.cpu, 2);
  EXPECT_EQ(reactor.max_connections, 8u);
  EXPECT_EQ(value_of(config.defaults().get_int("JournalThreadCore")), 3);

  const auto connector = value_of(connector_options(s));
  EXPECT_EQ(connector.endpoints, s.connect_endpoints());
  EXPECT_EQ(connector.reconnect_interval_ns, 2'000'000'000);
  EXPECT_EQ(connector.connect_timeout_ns, 750'000'000);
  EXPECT_TRUE(connector.socket.tcp_quickack);
  EXPECT_EQ(connector.socket.busy_poll_us, 50);
  EXPECT_EQ(connector.socket.send_buffer_size, 4 << 20);
  EXPECT_EQ(connector.socket.receive_buffer_size, 0);
  EXPECT_EQ(connector.buffers.receive_size, 2u << 20);
  EXPECT_EQ(connector.buffers.send_size, 128u << 10);
}

TEST(Config, the_example_in_docs_config_md_loads) {
  std::ifstream in(HFT_SOURCE_DIR "/docs/config.md");
  ASSERT_TRUE(in);
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  const auto begin = doc.find("```ini\n");
  ASSERT_NE(begin, std::string::npos);
  const auto end = doc.find("```", begin + 7);
  auto config = Config::parse(doc.substr(begin + 7, end - begin - 7), "docs/config.md");
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(config->sessions().at(0).connect_endpoints().size(), 2u);
}

// -------------------------------------------------------- inheritance ----

TEST(Config, a_session_overrides_default_and_inherits_the_rest) {
  auto config = Config::parse(kBase + "heartbtint=5\n", "test.cfg");  // any case
  ASSERT_TRUE(config.ok()) << config.error().message;
  const Section& s = config->sessions().at(0);
  EXPECT_EQ(value_of(s.get_duration("HeartBtInt")), seconds(5));
  EXPECT_EQ(value_of(config->defaults().get_duration("HeartBtInt")), seconds(30));
  EXPECT_EQ(s.where("HeartBtInt"), "test.cfg:14");
  EXPECT_EQ(s.where("FileStorePath"), "test.cfg:4");  // inherited: the [DEFAULT] line
  EXPECT_EQ(s.where("LogonTimeout"), "test.cfg:9");   // unset: the section
  ASSERT_NE(s.find("HEARTBTINT"), nullptr);
  EXPECT_EQ(s.find("HEARTBTINT")->key, "HeartBtInt");
  EXPECT_FALSE(s.find("HeartBtInt")->inherited);
  EXPECT_TRUE(s.find("FileStorePath")->inherited);
  EXPECT_TRUE(s.has("SocketConnectHost"));
  EXPECT_FALSE(s.has("LogonTimeout"));
  EXPECT_EQ(value_of(s.get_duration("LogonTimeout")), seconds(10));  // schema default
  EXPECT_EQ(value_of(s.get_string("SocketConnectHost")), "127.0.0.1");
}

TEST(Config, values_and_keys_are_trimmed_and_comments_and_crlf_are_skipped) {
  const std::string text =
      "# comment\r\n"
      "  [ DEFAULT ]  \r\n"
      "ConnectionType = initiator\r\n"
      "   # indented comment\r\n"
      "HeartBtInt=\t30 \r\n"
      "FileStorePath=store\r\n"
      "NonStopSession=Y\r\n"
      "UseDataDictionary=N\r\n"
      "\r\n"
      "[session]\r\n"
      "BeginString=FIX.4.2\r\n"
      "SenderCompID=A B\r\n"
      "TargetCompID=C=D\r\n"
      "SocketConnectHost=localhost\r\n"
      "SocketConnectPort=1\r\n";
  auto config = Config::parse(text, "crlf.cfg");
  ASSERT_TRUE(config.ok()) << config.error().message;
  const Section& s = config->sessions().at(0);
  EXPECT_EQ(s.session_id().sender_comp_id, "A B");
  EXPECT_EQ(s.session_id().target_comp_id, "C=D");  // split at the first '='
  EXPECT_EQ(value_of(s.get_duration("HeartBtInt")), seconds(30));
  EXPECT_EQ(s.line(), 10);
}

TEST(Config, getters_refuse_unknown_keys_other_types_and_unset_keys_without_default) {
  auto config = Config::parse(kBase, "test.cfg");
  ASSERT_TRUE(config.ok());
  const Section& s = config->sessions().at(0);
  const auto unknown = s.get_string("NoSuchKey");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().message, "test.cfg:9: NoSuchKey: not a configuration key");
  const auto wrong = s.get_int("SenderCompID");
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.error().message.find("SenderCompID"), std::string::npos);
  // Any key reads as its text; durations also read as their number.
  EXPECT_EQ(value_of(s.get_string("StartTime")), "00:00:00");
  EXPECT_EQ(value_of(s.get_string("LogonTimeout")), "10");
  EXPECT_EQ(value_of(s.get_int("HeartBtInt")), 30);
  const auto unset = s.get_string("DataDictionary");
  ASSERT_FALSE(unset.ok());
  EXPECT_EQ(unset.error().message,
            "test.cfg:9: DataDictionary: not set in the section at line 9 and has no default");
}

TEST(Config, every_schema_default_is_a_valid_value_of_its_key) {
  std::string text = "[DEFAULT]\n";
  // Every key with a default, written out with it (UseDataDictionary=N
  // comes from the base file, which has no other key with a default).
  for (const KeySpec& spec : config_schema()) {
    if (!spec.default_value.empty() && spec.name != "UseDataDictionary") {
      text += std::string(spec.name) + "=" + std::string(spec.default_value) + "\n";
    }
  }
  text += kBase.substr(kBase.find("ConnectionType"));
  auto config = Config::parse(text, "defaults.cfg");
  ASSERT_TRUE(config.ok()) << config.error().message;
  for (const KeySpec& spec : config_schema()) {
    if (spec.default_value.empty()) continue;
    EXPECT_TRUE(config->defaults().has(spec.name)) << spec.name;
  }
}

TEST(Config, a_session_without_file_store_path_loads) {
  auto config = Config::parse(replace_first(kBase, "FileStorePath=store\n", ""), "memory.cfg");
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_FALSE(config->sessions().at(0).has("FileStorePath"));
}

TEST(Config, key_spec_lookup_handles_numbered_qualified_and_family_keys) {
  ASSERT_NE(find_key_spec("socketconnecthost12"), nullptr);
  EXPECT_EQ(find_key_spec("SocketConnectHost12")->name, "SocketConnectHost");
  EXPECT_EQ(find_key_spec("SocketConnectHost0"), nullptr);
  EXPECT_EQ(find_key_spec("HeartBtInt1"), nullptr);  // not a numbered key
  EXPECT_EQ(find_key_spec("AppDataDictionary.FIX.5.0")->name, "AppDataDictionary");
  EXPECT_EQ(find_key_spec("MySQLStoreHost")->name, "MySQL*");
  EXPECT_EQ(find_key_spec("MySQL"), nullptr);
  EXPECT_EQ(find_key_spec("Heartbeat"), nullptr);
}

TEST(Config, session_ids_print_like_quickfix) {
  SessionId id{"FIX.4.4", "S", "", "", "T", "", "", ""};
  EXPECT_EQ(id.to_string(), "FIX.4.4:S->T");
  id.sender_location_id = "LN";
  id.target_sub_id = "TS";
  id.qualifier = "Q";
  EXPECT_EQ(id.to_string(), "FIX.4.4:S//LN->T/TS:Q");
}

// ------------------------------------------------------------- errors ----

struct ErrorCase {
  const char* name;
  std::string text;
  int line;
  std::string key;
  std::string fragment;
};

std::ostream& operator<<(std::ostream& os, const ErrorCase& c) {
  return os << c.name;
}

class ConfigErrors : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ConfigErrors, name_file_line_and_key) {
  const ErrorCase& c = GetParam();
  auto config = Config::parse(c.text, "bad.cfg");
  ASSERT_FALSE(config.ok()) << c.name << " loaded";
  const std::string& message = config.error().message;
  const std::string where = "bad.cfg:" + std::to_string(c.line) + ": " + c.key + ": ";
  EXPECT_EQ(message.rfind(where, 0), 0u) << "expected prefix \"" << where << "\" in: " << message;
  EXPECT_NE(message.find(c.fragment), std::string::npos)
      << "expected \"" << c.fragment << "\" in: " << message;
}

const std::string kAcceptor =
    "[DEFAULT]\n"                // 1
    "ConnectionType=acceptor\n"  // 2
    "SocketAcceptPort=5001\n"    // 3
    "FileStorePath=store\n"      // 4
    "NonStopSession=Y\n"         // 5
    "UseDataDictionary=N\n"      // 6
    "[SESSION]\n"                // 7
    "BeginString=FIX.4.4\n"      // 8
    "SenderCompID=A\n"           // 9
    "TargetCompID=B\n";          // 10

INSTANTIATE_TEST_SUITE_P(
    Config, ConfigErrors,
    ::testing::Values(
        ErrorCase{"unknown_key", kBase + "HeartBeatInt=30\n", 14, "HeartBeatInt", "did you mean HeartBtInt"},
        ErrorCase{"non_numeric_port",
                  replace_first(kBase, "SocketConnectPort=5001", "SocketConnectPort=http"), 13,
                  "SocketConnectPort", "bad value \"http\": expected a port in 1..65535"},
        ErrorCase{"port_out_of_range",
                  replace_first(kBase, "SocketConnectPort=5001", "SocketConnectPort=65536"), 13,
                  "SocketConnectPort", "1..65535"},
        ErrorCase{"negative_heartbeat", replace_first(kBase, "HeartBtInt=30", "HeartBtInt=-1"), 3,
                  "HeartBtInt", "bad value \"-1\""},
        ErrorCase{"zero_heartbeat_for_initiator", replace_first(kBase, "HeartBtInt=30", "HeartBtInt=0"), 3,
                  "HeartBtInt", "greater than 0"},
        ErrorCase{"hour_out_of_range", replace_first(kBase, "StartTime=00:00:00", "StartTime=24:00:00"), 5,
                  "StartTime", "HH:MM:SS"},
        ErrorCase{"time_without_seconds", replace_first(kBase, "EndTime=00:00:00", "EndTime=8:00"), 6,
                  "EndTime", "HH:MM:SS"},
        ErrorCase{"timestamp_precision_not_0_3_6_9", kBase + "TimestampPrecision=4\n", 14,
                  "TimestampPrecision", "one of 0, 3, 6, 9, SECONDS, MILLIS, MICROS, NANOS"},
        ErrorCase{"bool_not_y_or_n", kBase + "ResetOnLogon=yes\n", 14, "ResetOnLogon", "expected Y or N"},
        ErrorCase{"bad_day", kBase + "StartDay=Funday\nEndDay=Fri\n", 14, "StartDay", "day name"},
        ErrorCase{"bad_connection_type", replace_first(kBase, "=initiator", "=client"), 2, "ConnectionType",
                  "one of initiator, acceptor"},
        ErrorCase{"bad_begin_string", replace_first(kBase, "FIX.4.4", "FIX.4.5"), 10, "BeginString",
                  "FIX.4.4"},
        ErrorCase{"bad_size_suffix", kBase + "ReceiveBufferSize=12Q\n", 14, "ReceiveBufferSize",
                  "size in bytes"},
        ErrorCase{"size_too_small", kBase + "ReceiveBufferSize=1K\n", 14, "ReceiveBufferSize", "4K..1G"},
        ErrorCase{"unknown_time_zone", kBase + "TimeZone=Mars/Olympus\n", 14, "TimeZone", "time zone"},
        ErrorCase{"duration_with_unit", kBase + "LogonTimeout=10s\n", 14, "LogonTimeout",
                  "whole number of seconds"},
        ErrorCase{"empty_value", kBase + "SenderSubID=\n", 14, "SenderSubID", "empty value"},
        ErrorCase{"missing_sender", replace_first(kBase, "SenderCompID=A\n", ""), 9, "SenderCompID",
                  "required"},
        ErrorCase{"missing_connection_type", replace_first(kBase, "ConnectionType=initiator\n", ""), 8,
                  "ConnectionType", "required"},
        ErrorCase{"initiator_without_host", replace_first(kBase, "SocketConnectHost=127.0.0.1\n", ""), 8,
                  "SocketConnectHost", "for ConnectionType=initiator"},
        ErrorCase{"initiator_without_heartbeat", replace_first(kBase, "HeartBtInt=30\n", ""), 8, "HeartBtInt",
                  "for ConnectionType=initiator"},
        ErrorCase{"acceptor_without_port", replace_first(kAcceptor, "SocketAcceptPort=5001\n", ""), 6,
                  "SocketAcceptPort", "for ConnectionType=acceptor"},
        ErrorCase{"acceptor_with_qualifier", kAcceptor + "SessionQualifier=X\n", 11, "SessionQualifier",
                  "not allowed"},
        ErrorCase{"acceptor_with_own_connect_host", kAcceptor + "SocketConnectHost=h\n", 11,
                  "SocketConnectHost", "not used for ConnectionType=acceptor"},
        ErrorCase{"fixt_without_appl_ver_id", replace_first(kBase, "FIX.4.4", "FIXT.1.1"), 9,
                  "DefaultApplVerID", "FIXT.1.1"},
        ErrorCase{"dictionary_required_by_default", replace_first(kBase, "UseDataDictionary=N\n", ""), 8,
                  "DataDictionary", "UseDataDictionary=Y"},
        ErrorCase{"missing_start_time", replace_first(kBase, "StartTime=00:00:00\n", ""), 8, "StartTime",
                  "NonStopSession"},
        ErrorCase{"start_day_without_end_day", kBase + "StartDay=Mon\n", 14, "StartDay", "without EndDay"},
        ErrorCase{"time_zone_and_local_time", kBase + "TimeZone=UTC\nUseLocalTime=Y\n", 14, "TimeZone",
                  "UseLocalTime"},
        ErrorCase{"duplicate_session",
                  kBase + "[SESSION]\nBeginString=FIX.4.4\nSenderCompID=A\nTargetCompID=B\n"
                          "SocketConnectPort=5002\n",
                  14, "[SESSION]",
                  "duplicate session FIX.4.4:A->B (also defined by the [SESSION] at line 9)"},
        ErrorCase{"duplicate_key", kBase + "TargetCompID=C\n", 14, "TargetCompID", "first at line 12"},
        ErrorCase{"duplicate_key_other_case", kBase + "targetcompid=C\n", 14, "TargetCompID", "set twice"},
        ErrorCase{"second_default", kBase + "[DEFAULT]\n", 14, "[DEFAULT]", "first at line 1"},
        ErrorCase{"unknown_section", kBase + "[SESSIONS]\n", 14, "[SESSIONS]", "unknown section"},
        ErrorCase{"unclosed_section", kBase + "[SESSION\n", 14, "[SESSION", "must end with ']'"},
        ErrorCase{"key_before_any_section", "HeartBtInt=30\n" + kBase, 1, "HeartBtInt", "before any"},
        ErrorCase{"line_without_equals", kBase + "HeartBtInt 30\n", 14, "HeartBtInt 30",
                  "expected key=value"},
        ErrorCase{"engine_key_in_session", kBase + "PollMode=busy\n", 14, "PollMode", "set it in [DEFAULT]"},
        ErrorCase{"tls_key_without_tls", kBase + "ClientCertificateFile=c.pem\n", 14, "ClientCertificateFile",
                  "is set but SocketUseSSL is not Y"},
        ErrorCase{"tls_protocol_without_tls", kBase + "SSLProtocol=TLSv1_3\n", 14, "SSLProtocol",
                  "is set but SocketUseSSL is not Y"},
        ErrorCase{"server_certificate_in_initiator", kBase + "SocketUseSSL=Y\nServerCertificateFile=s.pem\n", 15,
                  "ServerCertificateFile", "not used"},
        ErrorCase{"verify_level_out_of_range", kBase + "SocketUseSSL=Y\nCertificateVerifyLevel=3\n", 15,
                  "CertificateVerifyLevel", "3"},
        ErrorCase{"failover_gap", kBase + "SocketConnectHost2=h\nSocketConnectPort2=1\n", 14,
                  "SocketConnectHost2", "SocketConnectHost1/SocketConnectPort1 are missing"},
        ErrorCase{"failover_host_without_port", kBase + "SocketConnectHost1=h\n", 14, "SocketConnectHost1",
                  "no matching SocketConnectPort1"},
        ErrorCase{"failover_port_without_host", kBase + "SocketConnectPort1=7\n", 14, "SocketConnectPort1",
                  "no matching SocketConnectHost1"},
        ErrorCase{"message_larger_than_buffer", kBase + "ReceiveBufferSize=64K\nMaxMessageSize=128K\n", 15,
                  "MaxMessageSize", "exceeds ReceiveBufferSize"},
        ErrorCase{"no_session", "[DEFAULT]\nHeartBtInt=30\n", 3, "[SESSION]", "no [SESSION]"}),
    [](const auto& param_info) { return std::string(param_info.param.name); });

TEST(Config, a_missing_file_is_named) {
  auto config = Config::load("/nonexistent/venue.cfg");
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.error().message.find("/nonexistent/venue.cfg"), std::string::npos);
  EXPECT_NE(config.error().message.find("cannot open"), std::string::npos);
}

TEST(Config, an_error_in_a_sample_file_names_its_path) {
  const std::string path = ::testing::TempDir() + "broken.cfg";
  {
    std::ofstream out(path);
    out << kBase << "HeartBtInt=abc\n";
  }
  auto config = Config::load(path);
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.error().message.rfind(path + ":14: HeartBtInt: bad value \"abc\"", 0), 0u)
      << config.error().message;
}

// --------------------------------------------------------------- docs ----

TEST(Config, docs_config_md_lists_exactly_the_schema_keys) {
  std::ifstream in(HFT_SOURCE_DIR "/docs/config.md");
  ASSERT_TRUE(in) << "docs/config.md is missing";
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();

  std::set<std::string> documented;
  std::istringstream lines(doc);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("| `", 0) != 0) continue;
    const auto end = line.find('`', 3);
    documented.insert(line.substr(3, end - 3));
  }
  std::set<std::string> schema;
  for (const KeySpec& spec : config_schema()) schema.insert(std::string(spec.name));
  for (const std::string& key : schema)
    EXPECT_TRUE(documented.count(key)) << key << " is not in docs/config.md";
  for (const std::string& key : documented) EXPECT_TRUE(schema.count(key)) << key << " is not in the schema";

  // The table itself must be the generated one (types, defaults, meaning).
  const std::string begin_marker = "<!-- schema:begin -->\n";
  const auto begin = doc.find(begin_marker);
  const auto end = doc.find("<!-- schema:end -->");
  ASSERT_NE(begin, std::string::npos);
  ASSERT_NE(end, std::string::npos);
  const std::string table = doc.substr(begin + begin_marker.size(), end - begin - begin_marker.size());
  const std::string expected = config_schema_markdown();
  if (table != expected) {
    std::ofstream("config.md.expected") << expected;
    ADD_FAILURE() << "docs/config.md's table differs from the schema; the generated table is in "
                     "config.md.expected (working directory of the test)";
  }
}

TEST(Config, every_schema_key_is_unique_and_described) {
  std::set<std::string> seen;
  for (const KeySpec& spec : config_schema()) {
    std::string lowered(spec.name);
    for (char& c : lowered) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    EXPECT_TRUE(seen.insert(lowered).second) << spec.name << " twice";
    EXPECT_FALSE(spec.description.empty()) << spec.name;
    if (spec.type == ValueType::kEnum) {
      EXPECT_FALSE(spec.choices.empty()) << spec.name;
    }
    if (spec.type == ValueType::kDuration) {
      EXPECT_GT(spec.unit_ns, 0) << spec.name;
    }
  }
}

}  // namespace

// ---------------------------------------------------------- overrides ----

namespace overrides_test {

std::vector<Override> given(std::initializer_list<const char*> key_values) {
  std::vector<Override> out;
  for (const char* kv : key_values) out.push_back(value_of(parse_override(kv)));
  return out;
}

const std::string kTwoSessions = kBase +
                                 "ReconnectInterval=1\n[SESSION]\nBeginString=FIX.4.2\nSenderCompID=A\n"
                                 "TargetCompID=C\nSocketConnectPort=5002\n";

TEST(ConfigOverride, replaces_a_key_the_file_sets_in_every_session) {
  const auto overrides = given({"ReconnectInterval=7", "HeartBtInt=5"});
  auto config = Config::parse(kTwoSessions, "t.cfg", overrides);
  ASSERT_TRUE(config.ok()) << config.error().message;
  ASSERT_EQ(config->sessions().size(), 2u);
  for (const Section& s : config->sessions()) {
    EXPECT_EQ(value_of(s.get_duration("ReconnectInterval")), seconds(7));
    EXPECT_EQ(value_of(s.get_int("HeartBtInt")), 5);
    EXPECT_EQ(s.where("ReconnectInterval"), "--set ReconnectInterval=7");
  }
  // The file's own values elsewhere are untouched.
  EXPECT_EQ(config->sessions()[1].where("SocketConnectPort"), "t.cfg:19");
}

TEST(ConfigOverride, a_later_override_of_the_same_key_wins) {
  const auto overrides = given({"HeartBtInt=5", "HeartBtInt=9"});
  auto config = Config::parse(kBase, "t.cfg", overrides);
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(value_of(config->sessions()[0].get_int("HeartBtInt")), 9);
}

TEST(ConfigOverride, an_engine_wide_key_goes_to_default) {
  const auto overrides = given({"LogLevel=debug"});
  auto config = Config::parse(kBase, "t.cfg", overrides);
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(value_of(config->defaults().get_string("LogLevel")), "debug");
}

TEST(ConfigOverride, errors_name_the_override_not_a_file_line) {
  auto bad_value = Config::parse(kBase, "t.cfg", given({"HeartBtInt=abc"}));
  ASSERT_FALSE(bad_value.ok());
  EXPECT_EQ(bad_value.error().message.rfind("--set HeartBtInt=abc: HeartBtInt: ", 0), 0u)
      << bad_value.error().message;

  auto unknown = Config::parse(kBase, "t.cfg", given({"HeartBeatInt=5"}));
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("--set HeartBeatInt=5: HeartBeatInt: unknown key"),
            std::string::npos)
      << unknown.error().message;

  // A combination checked after merging still points at the override.
  auto zero = Config::parse(kBase, "t.cfg", given({"HeartBtInt=0"}));
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error().message.rfind("--set HeartBtInt=0: HeartBtInt: must be greater than 0", 0), 0u)
      << zero.error().message;

  EXPECT_FALSE(parse_override("HeartBtInt").ok());
  EXPECT_FALSE(parse_override("=5").ok());
}

}  // namespace overrides_test
