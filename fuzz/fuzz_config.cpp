// libFuzzer target for the QuickFIX-style INI configuration: Config::parse
// on hostile text, then everything the engine builds from a configuration
// before it opens a socket or a file (reactor, socket, connector and
// listener options; the session settings of sessions that name no file).
// Invariants: no crash; a refusal is an Error naming the file (and line),
// never an empty message; what parses is consistent (every [SESSION] has an
// identity, a session's settings pass SessionSettings::check).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "hft/engine/config.hpp"
#include "hft/engine/session_config.hpp"

using namespace hft;

namespace {

inline void expect(bool ok) {
  if (!ok) __builtin_trap();
}

constexpr std::string_view kFile = "fuzz.cfg";

template <typename T>
void expect_named(const Expected<T>& r) {
  if (!r) expect(!r.error().message.empty());
}

// Keys whose value is a file the settings would read.
bool names_a_file(const engine::Section& section) {
  for (const engine::Setting& s : section.settings()) {
    const std::string_view key = s.key;
    if (key.find("Dictionary") != std::string_view::npos || key == "UseLocalTime") return true;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto config = engine::Config::parse(text, std::string(kFile));
  if (!config) {
    // "fuzz.cfg:LINE: Key: what is wrong" (or "fuzz.cfg: ..." for the whole file).
    expect(config.error().message.rfind(kFile, 0) == 0);
    return 0;
  }
  expect_named(engine::reactor_options(*config));
  for (const engine::Section& section : config->sessions()) {
    expect(!section.session_id().sender_comp_id.empty() && !section.session_id().target_comp_id.empty());
    expect_named(engine::socket_options(section));
    if (section.connection_type() == engine::ConnectionType::kInitiator) {
      expect_named(engine::connector_options(section));
    } else {
      expect_named(engine::listener_options(section));
    }
    if (names_a_file(section)) continue;
    engine::DictionaryCache cache;
    auto setup = engine::session_setup(section, cache);
    if (!setup) {
      expect(!setup.error().message.empty());
      continue;
    }
    expect(setup->settings.check().ok());
  }
  return 0;
}
