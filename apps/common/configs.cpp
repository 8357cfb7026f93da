#include "common/configs.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

namespace hft::apps {

std::string conformance_acceptor_config(int port, const std::string& spec_dir, const std::string& only) {
  struct Row {
    const char* begin;
    const char* target;
    const char* dictionaries;
  };
  static constexpr Row kRows[] = {
      {"FIX.4.0", "TW40", "DataDictionary=FIX40.xml"},
      {"FIX.4.1", "TW41", "DataDictionary=FIX41.xml"},
      {"FIX.4.2", "TW42", "DataDictionary=FIX42.xml"},
      {"FIX.4.3", "TW43", "DataDictionary=FIX43.xml"},
      {"FIX.4.4", "TW44", "DataDictionary=FIX44.xml"},
      {"FIXT.1.1", "TW50", "TransportDataDictionary=FIXT11.xml\nAppDataDictionary=FIX50.xml\nDefaultApplVerID=FIX.5.0"},
      {"FIXT.1.1", "TW50SP1", "TransportDataDictionary=FIXT11.xml\nAppDataDictionary=FIX50SP1.xml\nDefaultApplVerID=FIX.5.0SP1"},
      {"FIXT.1.1", "TW50SP2", "TransportDataDictionary=FIXT11.xml\nAppDataDictionary=FIX50SP2.xml\nDefaultApplVerID=FIX.5.0SP2"},
      {"FIX.4.4", "TW", "DataDictionary=FIX44.xml"},
      {"FIX.4.4", "NO_CHECK_FIELDS_HAVE_VALUES", "DataDictionary=FIX44.xml\nValidateFieldsHaveValues=N"},
  };
  std::string text =
      "[DEFAULT]\nConnectionType=acceptor\nSenderCompID=ISLD\nResetOnLogon=Y\nNonStopSession=Y\nSocketAcceptPort=" +
      std::to_string(port) + "\n";
  for (const Row& row : kRows) {
    if (!only.empty() && ("," + only + ",").find(std::string(",") + row.target + ",") == std::string::npos) continue;
    std::string dictionaries = row.dictionaries;
    // Prefix each file name with the spec directory.
    std::string out;
    std::size_t pos = 0;
    while (pos < dictionaries.size()) {
      std::size_t end = dictionaries.find('\n', pos);
      if (end == std::string::npos) end = dictionaries.size();
      std::string line = dictionaries.substr(pos, end - pos);
      const auto eq = line.find('=');
      if (line.find(".xml") != std::string::npos) line = line.substr(0, eq + 1) + spec_dir + "/" + line.substr(eq + 1);
      out += line + "\n";
      pos = end + 1;
    }
    text += std::string("\n[SESSION]\nBeginString=") + row.begin + "\nTargetCompID=" + row.target + "\n" + out;
  }
  return text;
}

std::string default_spec_dir() {
  if (const char* env = std::getenv("HFT_SPEC_DIR"); env != nullptr && *env != 0) return env;
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto installed = exe.parent_path().parent_path() / "share/libhft/spec";
    if (std::filesystem::exists(installed / "FIX44.xml", ec)) return installed.string();
  }
  return HFT_SOURCE_SPEC_DIR;
}

engine::ConfigBuilder simple_builder(const SimpleSession& s, const std::string& name) {
  engine::ConfigBuilder b(name);
  // "--port 70000": the option and the value the user gave.
  auto from = [](const std::string& option, const std::string& value) {
    return option.empty() ? std::string() : option + " " + value;
  };
  b.set("NonStopSession", "Y");
  for (std::size_t pos = 0; pos < s.extra.size();) {  // "Key=Value" lines
    std::size_t end = s.extra.find('\n', pos);
    if (end == std::string::npos) end = s.extra.size();
    const std::string line = s.extra.substr(pos, end - pos);
    pos = end + 1;
    if (const auto eq = line.find('='); eq != std::string::npos) b.set(line.substr(0, eq), line.substr(eq + 1));
  }
  for (const SimpleSession::Extra& e : s.settings) b.set(e.key, e.value, e.origin);
  b.add_session();
  const SimpleSession::Origins& o = s.origins;
  b.set("ConnectionType", s.initiator ? "initiator" : "acceptor");
  b.set("BeginString", s.begin_string, from(o.begin_string, s.begin_string));
  b.set("SenderCompID", s.sender, from(o.sender, s.sender));
  b.set("TargetCompID", s.target, from(o.target, s.target));
  b.set("HeartBtInt", s.heartbeat, from(o.heartbeat, std::to_string(s.heartbeat)));
  if (s.begin_string == "FIXT.1.1") b.set("DefaultApplVerID", s.default_appl_ver_id);
  const std::string port = std::to_string(s.port);
  if (s.initiator) {
    b.set("SocketConnectHost", s.host, from(o.host, s.host));
    b.set("SocketConnectPort", port, from(o.port, port));
    b.set("ReconnectInterval", "1");
  } else {
    b.set("SocketAcceptPort", port, from(o.port, port));
  }
  if (!s.store_dir.empty()) b.set("FileStorePath", s.store_dir, from(o.store_dir, s.store_dir));
  const std::string spec = from(o.spec_dir, s.spec_dir);
  if (s.spec_dir.empty()) {
    b.set("UseDataDictionary", "N");
  } else if (s.begin_string == "FIXT.1.1") {
    std::string app = s.default_appl_ver_id;
    app.erase(std::remove(app.begin(), app.end(), '.'), app.end());  // FIX.5.0SP2 -> FIX50SP2
    b.set("TransportDataDictionary", s.spec_dir + "/FIXT11.xml", spec);
    b.set("AppDataDictionary", s.spec_dir + "/" + app + ".xml", spec);
  } else {
    std::string file = s.begin_string;
    file.erase(std::remove(file.begin(), file.end(), '.'), file.end());  // FIX.4.4 -> FIX44
    b.set("DataDictionary", s.spec_dir + "/" + file + ".xml", spec);
  }
  return b;
}

std::string simple_config(const SimpleSession& s) { return simple_builder(s, "").text(); }

}  // namespace hft::apps
