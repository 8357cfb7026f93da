// Engine configurations the programs build from their command lines:
// engine::ConfigBuilder settings whose errors name the option that set them
// (or, for the conformance acceptor and tests, QuickFIX-style INI text).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hft/engine/config.hpp"

namespace hft::apps {

/// The conformance suite's acceptor: ten sessions on `port`, SenderCompID
/// ISLD, ResetOnLogon, always open, dictionaries from `spec_dir`.
/// `only`: comma-separated TargetCompIDs to keep (empty: all ten).
[[nodiscard]] std::string conformance_acceptor_config(int port, const std::string& spec_dir,
                                                      const std::string& only = {});

struct SimpleSession {
  bool initiator = false;
  std::string begin_string = "FIX.4.4";
  std::string sender = "VENUE";
  std::string target = "CLIENT";
  std::string host = "127.0.0.1";
  int port = 0;
  int heartbeat = 30;
  std::string store_dir;    ///< empty: in-memory store
  std::string default_appl_ver_id = "FIX.5.0SP2";
  std::string extra;        ///< more "Key=Value" lines for [DEFAULT]
  /// Directory of the FIX XML dictionaries (FIX44.xml, FIXT11.xml, ...);
  /// empty: only the built-in session-level dictionary (UseDataDictionary=N).
  std::string spec_dir;
  /// The command-line options that set the fields above, named in errors
  /// (with the value): e.g. port = "--port" gives "--port 70000: SocketAcceptPort: ...".
  struct Origins {
    std::string begin_string, sender, target, host, port, heartbeat, store_dir, spec_dir;
  } origins;
  /// More [DEFAULT] settings, each with the option that set it.
  struct Extra {
    std::string key, value, origin;
  };
  std::vector<Extra> settings;
};

/// The dictionaries shipped with libhft (spec/ in the source tree, or
/// share/libhft/spec when installed); HFT_SPEC_DIR overrides.
[[nodiscard]] std::string default_spec_dir();

/// One session, acceptor or initiator; `name` (the program) names values
/// that have no origin.
[[nodiscard]] engine::ConfigBuilder simple_builder(const SimpleSession& s, const std::string& name);
/// The same as INI text.
[[nodiscard]] std::string simple_config(const SimpleSession& s);

}  // namespace hft::apps
