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

std::string simple_config(const SimpleSession& s) {
  std::string text = "[DEFAULT]\nNonStopSession=Y\n";
  text += s.extra;
  if (!s.extra.empty() && s.extra.back() != '\n') text += "\n";
  text += "\n[SESSION]\n";
  text += std::string("ConnectionType=") + (s.initiator ? "initiator" : "acceptor") + "\n";
  text += "BeginString=" + s.begin_string + "\n";
  text += "SenderCompID=" + s.sender + "\nTargetCompID=" + s.target + "\n";
  text += "HeartBtInt=" + std::to_string(s.heartbeat) + "\n";
  if (s.begin_string == "FIXT.1.1") text += "DefaultApplVerID=" + s.default_appl_ver_id + "\n";
  if (s.initiator) {
    text += "SocketConnectHost=" + s.host + "\nSocketConnectPort=" + std::to_string(s.port) + "\n";
    text += "ReconnectInterval=1\n";
  } else {
    text += "SocketAcceptPort=" + std::to_string(s.port) + "\n";
  }
  if (!s.store_dir.empty()) text += "FileStorePath=" + s.store_dir + "\n";
  if (s.spec_dir.empty()) {
    text += "UseDataDictionary=N\n";
  } else if (s.begin_string == "FIXT.1.1") {
    std::string app = s.default_appl_ver_id;
    app.erase(std::remove(app.begin(), app.end(), '.'), app.end());  // FIX.5.0SP2 -> FIX50SP2
    text += "TransportDataDictionary=" + s.spec_dir + "/FIXT11.xml\n";
    text += "AppDataDictionary=" + s.spec_dir + "/" + app + ".xml\n";
  } else {
    std::string file = s.begin_string;
    file.erase(std::remove(file.begin(), file.end(), '.'), file.end());  // FIX.4.4 -> FIX44
    text += "DataDictionary=" + s.spec_dir + "/" + file + ".xml\n";
  }
  return text;
}

}  // namespace hft::apps
