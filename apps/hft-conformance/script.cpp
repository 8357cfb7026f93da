#include "script.hpp"

#include <fstream>
#include <sstream>

namespace hft::conformance {
namespace {

bool is_blank(std::string_view s) noexcept {
  for (char c : s) {
    if (c != ' ' && c != '\t') return false;
  }
  return true;
}

}  // namespace

Script parse_script(std::string_view text, std::string path) {
  Script script;
  script.path = std::move(path);
  int line_no = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (is_blank(line) || line.front() == '#') continue;

    Command cmd;
    cmd.line = line_no;
    const char action = line.front();
    std::string_view rest = line.substr(1);
    // Optional connection prefix: one or more digits then a comma.
    std::size_t digits = 0;
    while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9') ++digits;
    if (digits > 0 && digits < rest.size() && rest[digits] == ',' && digits <= 3) {
      cmd.connection = std::stoi(std::string(rest.substr(0, digits)));
      rest = rest.substr(digits + 1);
    }
    switch (action) {
      case 'I':
        cmd.kind = CommandKind::kSend;
        break;
      case 'E':
        cmd.kind = CommandKind::kExpect;
        break;
      case 'i':
      case 'e':
        if (rest == "CONNECT") {
          cmd.kind = action == 'i' ? CommandKind::kConnect : CommandKind::kExpectConnect;
        } else if (rest == "DISCONNECT") {
          cmd.kind = action == 'i' ? CommandKind::kDisconnect : CommandKind::kExpectDisconnect;
        } else {
          script.error_line = line_no;
          script.error = "syntax error: unknown command '" + std::string(line) + "'";
          return script;
        }
        break;
      default:
        script.error_line = line_no;
        script.error = "syntax error: line starts with neither I, E, i, e nor #";
        return script;
    }
    if ((cmd.kind == CommandKind::kSend || cmd.kind == CommandKind::kExpect) && rest.empty()) {
      script.error_line = line_no;
      script.error = "syntax error: empty message";
      return script;
    }
    cmd.body = std::string(rest);
    script.commands.push_back(std::move(cmd));
  }
  return script;
}

Script load_script(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    Script s;
    s.path = path;
    s.error = "cannot open file";
    return s;
  }
  std::ostringstream buf;
  buf << in.rdbuf();
  return parse_script(buf.str(), path);
}

}  // namespace hft::conformance
