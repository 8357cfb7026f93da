// Parsing of conformance scripts (.def files): one command per line, see
// /work/shared/conformance/README.md for the format.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace hft::conformance {

enum class CommandKind {
  kConnect,           ///< iCONNECT: open a TCP connection to the acceptor
  kDisconnect,        ///< iDISCONNECT: close our connection
  kExpectConnect,     ///< eCONNECT: the engine under test (an initiator) connects to the runner (--listen)
  kExpectDisconnect,  ///< eDISCONNECT: the acceptor must close the connection
  kSend,              ///< I<message>
  kExpect,            ///< E<message>
};

struct Command {
  int line = 0;         ///< 1-based line number in the file
  CommandKind kind = CommandKind::kSend;
  int connection = 1;   ///< from an `I2,` style prefix; 1 without a prefix
  std::string body;     ///< message text as written (placeholders not yet substituted)
};

struct Script {
  std::string path;
  std::vector<Command> commands;
  int error_line = 0;   ///< non-zero when the file has a syntax error
  std::string error;    ///< description of the syntax error, or of an unreadable file
};

/// Parses script text. Blank lines (or whitespace only) and lines starting
/// with `#` are skipped; a trailing CR is ignored. The first bad line stops
/// parsing and is reported in `error_line`/`error`.
[[nodiscard]] Script parse_script(std::string_view text, std::string path);

/// Reads and parses a file; an unreadable file is reported in `error`.
[[nodiscard]] Script load_script(const std::string& path);

}  // namespace hft::conformance
