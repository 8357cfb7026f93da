#include "peer_config.hpp"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace qf_peer {

std::string conformance_acceptor_settings(int port, const std::string& spec_dir,
                                          const std::set<std::string>& only_targets) {
  struct SessionRow {
    const char* begin_string;
    const char* target;
    const char* dictionary;  // app dictionary for FIXT sessions
    const char* default_appl_ver_id;
    bool check_fields_have_values;
  };
  static const SessionRow kSessions[] = {
      {"FIX.4.0", "TW40", "FIX40.xml", nullptr, true},
      {"FIX.4.1", "TW41", "FIX41.xml", nullptr, true},
      {"FIX.4.2", "TW42", "FIX42.xml", nullptr, true},
      {"FIX.4.3", "TW43", "FIX43.xml", nullptr, true},
      {"FIX.4.4", "TW44", "FIX44.xml", nullptr, true},
      {"FIXT.1.1", "TW50", "FIX50.xml", "FIX.5.0", true},
      {"FIXT.1.1", "TW50SP1", "FIX50SP1.xml", "FIX.5.0SP1", true},
      {"FIXT.1.1", "TW50SP2", "FIX50SP2.xml", "FIX.5.0SP2", true},
      {"FIX.4.4", "TW", "FIX44.xml", nullptr, true},
      {"FIX.4.4", "NO_CHECK_FIELDS_HAVE_VALUES", "FIX44.xml", nullptr, false},
  };
  std::ostringstream out;
  out << "[DEFAULT]\n"
      << "ConnectionType=acceptor\n"
      << "SocketAcceptPort=" << port << "\n"
      << "SocketReuseAddress=Y\n"
      << "StartTime=00:00:00\n"
      << "EndTime=00:00:00\n"
      << "SenderCompID=ISLD\n"
      << "ResetOnLogon=Y\n"
      << "UseDataDictionary=Y\n";
  std::set<std::string> unknown = only_targets;
  for (const SessionRow& s : kSessions) {
    unknown.erase(s.target);
    if (!only_targets.empty() && only_targets.count(s.target) == 0) continue;
    out << "\n[SESSION]\n"
        << "BeginString=" << s.begin_string << "\n"
        << "TargetCompID=" << s.target << "\n";
    if (s.default_appl_ver_id != nullptr) {
      out << "DefaultApplVerID=" << s.default_appl_ver_id << "\n"
          << "TransportDataDictionary=" << spec_dir << "/FIXT11.xml\n"
          << "AppDataDictionary=" << spec_dir << "/" << s.dictionary << "\n";
    } else {
      out << "DataDictionary=" << spec_dir << "/" << s.dictionary << "\n";
    }
    if (!s.check_fields_have_values) out << "ValidateFieldsHaveValues=N\n";
  }
  if (!unknown.empty()) {
    throw std::runtime_error("--sessions: the conformance acceptor has no session with TargetCompID " +
                             *unknown.begin());
  }
  return out.str();
}

std::string load_with_placeholders(const std::string& path, const std::map<std::string, std::string>& values) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open config file");
  std::ostringstream out;
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#' || line[first] == ';') {
      out << line << '\n';
      continue;
    }
    std::string::size_type pos = 0;
    while ((pos = line.find("${", pos)) != std::string::npos) {
      const auto close = line.find('}', pos + 2);
      if (close == std::string::npos) {
        throw std::runtime_error(path + ":" + std::to_string(line_no) + ": unterminated ${ placeholder");
      }
      const std::string name = line.substr(pos + 2, close - pos - 2);
      const auto it = values.find(name);
      if (it == values.end() || it->second.empty()) {
        const std::string key = line.substr(0, line.find('='));
        throw std::runtime_error(path + ":" + std::to_string(line_no) + ": key " + key + " uses ${" + name +
                                 "} but no value was given for it on the command line");
      }
      line.replace(pos, close - pos + 1, it->second);
      pos += it->second.size();
    }
    out << line << '\n';
  }
  return out.str();
}

int pick_free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const std::string err = std::strerror(errno);
    ::close(fd);
    throw std::runtime_error("cannot find a free port: " + err);
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

void write_port_file(const std::string& path, int port) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << port << '\n';
    if (!out) throw std::runtime_error(tmp + ": cannot write port file");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    throw std::runtime_error(path + ": cannot rename port file: " + std::strerror(errno));
  }
}

}  // namespace qf_peer
