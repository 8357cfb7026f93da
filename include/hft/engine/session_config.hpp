// From a [SESSION] section to what the engine builds: the session's settings
// (with its dictionaries loaded) and its store.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "hft/codec/dictionary.hpp"
#include "hft/core/expected.hpp"
#include "hft/engine/config.hpp"
#include "hft/session/settings.hpp"
#include "hft/store/journal.hpp"

namespace hft::engine {

/// Loads each dictionary file once, however many sessions name it.
class DictionaryCache {
 public:
  /// The dictionary at `path`. Error: "where: DataDictionary: <loader error>".
  [[nodiscard]] Expected<std::shared_ptr<const codec::Dictionary>> get(const std::string& path,
                                                                       const std::string& where);

 private:
  std::map<std::string, std::shared_ptr<const codec::Dictionary>> loaded_;
};

/// Where a session keeps its messages and sequence numbers.
struct StoreSetup {
  bool persistent = false;          ///< FileStorePath set and PersistMessages=Y
  std::string directory;            ///< FileStorePath/<session id>
  store::JournalConfig journal;     ///< JournalSegmentSize, JournalDurability, ...
};

/// Everything the engine needs to build one session.
struct SessionSetup {
  session::SessionSettings settings;
  StoreSetup store;
};

/// Reads `section` (a [SESSION] merged with [DEFAULT]). Errors name the
/// file, line and key.
[[nodiscard]] Expected<SessionSetup> session_setup(const Section& section, DictionaryCache& dictionaries);

/// A file-system-safe directory name for a session: "FIX.4.4-ISLD-TW44[-QUAL]".
[[nodiscard]] std::string session_directory_name(const session::SessionID& id);

}  // namespace hft::engine
