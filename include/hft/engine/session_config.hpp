// From a [SESSION] section to what the engine builds: the session's settings
// (with its dictionaries loaded) and its store.
#pragma once

#include <map>
#include <memory>
#include <optional>
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
  /// `transport` and `app` combined (codec::Dictionary::combine), once per pair.
  [[nodiscard]] std::shared_ptr<const codec::Dictionary> combined(
      const std::shared_ptr<const codec::Dictionary>& transport, const std::shared_ptr<const codec::Dictionary>& app);

 private:
  std::map<std::string, std::shared_ptr<const codec::Dictionary>> loaded_;
  // Keyed by the pair; holds both, so the addresses stay theirs.
  struct Combined {
    std::shared_ptr<const codec::Dictionary> transport, app, combined;
  };
  std::map<std::pair<const codec::Dictionary*, const codec::Dictionary*>, Combined> combined_;
};

/// Where a session keeps its messages and sequence numbers.
struct StoreSetup {
  bool persistent = false;          ///< FileStorePath set and PersistMessages=Y
  std::string directory;            ///< FileStorePath/<session id>
  std::string root;                 ///< FileStorePath
  /// JournalLayout=shared: the session's messages go to the journal its
  /// engine shares between the sessions of one FileStorePath
  /// (FileStorePath/shared-journal, docs/shared_journal.md), its directory
  /// holds only seqnums.dat. `journal` is then that journal's settings.
  bool shared = false;
  store::JournalConfig journal;     ///< JournalSegmentSize, JournalDurability, ...
};

/// Everything the engine needs to build one session.
struct SessionSetup {
  session::SessionSettings settings;
  StoreSetup store;
  /// LogonTime..LogoutTime (LogonDay/LogoutDay), if any of them is set:
  /// when logons are allowed, within the session's schedule. The engine
  /// enforces it (connects, accepts and logs out by it).
  std::optional<session::Schedule> logon_window;
};

/// Reads `section` (a [SESSION] merged with [DEFAULT]). Errors name the
/// file, line and key.
///
/// UseLocalTime=Y reads the schedule in the host's time zone: $TZ (a zone
/// name, a path after ':' or '/', or a POSIX rule), else /etc/localtime,
/// else UTC.
[[nodiscard]] Expected<SessionSetup> session_setup(const Section& section, DictionaryCache& dictionaries);

/// The host's local time zone as UseLocalTime=Y uses it. Error names the
/// zone file that does not parse.
[[nodiscard]] Expected<session::TimeZone> local_time_zone();

/// A file-system-safe directory name for a session: "FIX.4.4-ISLD-TW44[-QUAL]".
[[nodiscard]] std::string session_directory_name(const session::SessionID& id);

}  // namespace hft::engine
