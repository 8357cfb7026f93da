// Session configuration: a QuickFIX-style INI file, so that a QuickFIX user
// can point libhft at the same file.
//
//   # comment (a line whose first non-blank character is '#')
//   [DEFAULT]                 settings every session inherits
//   ConnectionType=initiator
//   HeartBtInt=30
//   [SESSION]                 one per session; its own keys override DEFAULT
//   BeginString=FIX.4.4
//   SenderCompID=CLIENT
//   TargetCompID=VENUE
//   SocketConnectHost=10.0.0.1      primary endpoint
//   SocketConnectPort=9876
//   SocketConnectHost1=10.0.0.2     failover endpoints 1, 2, ...
//   SocketConnectPort1=9876
//
// Keys are matched without regard to case (as QuickFIX does) and reported
// with their canonical spelling; values are trimmed. Every key must be in
// the schema (config_schema(), documented in docs/config.md); every value is
// checked against its type when the file is read. Errors name the file,
// the line and the key: "session.cfg:12: HeartBtInt: bad value "-5": ...".
//
// Start-up code: allocates freely, never on a hot path.
#pragma once

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hft/core/expected.hpp"
#include "hft/transport/connector.hpp"
#include "hft/transport/listener.hpp"
#include "hft/transport/reactor.hpp"
#include "hft/transport/tls.hpp"

namespace hft::engine {

/// The type of a configuration value.
enum class ValueType : std::uint8_t {
  kString,     ///< any non-empty text
  kPath,       ///< a file or directory path
  kHost,       ///< a host name or numeric address
  kInt,        ///< a decimal integer within [min, max]
  kPort,       ///< a TCP port within [min, max]
  kBool,       ///< Y or N
  kDuration,   ///< a non-negative integer in the key's unit (s, ms or us)
  kSize,       ///< bytes, with an optional K, M or G suffix (powers of 1024)
  kTimeOfDay,  ///< HH:MM:SS
  kDay,        ///< a day of the week: Sunday..Saturday, or the first 2 or 3 letters
  kEnum,       ///< one of the listed choices (exact spelling)
  kTimeZone,   ///< UTC, or an IANA zone name present in the zoneinfo database
};

/// How libhft treats a key QuickFIX defines.
enum class KeySupport : std::uint8_t {
  kSupported,    ///< has the documented effect
  kIgnored,      ///< accepted (and type-checked) so QuickFIX files load; no effect
  kUnsupported,  ///< a feature libhft does not have: any value but the default is an error
};

/// Where a key may appear.
enum class KeyScope : std::uint8_t {
  kSession,  ///< in [DEFAULT] (inherited) or in a [SESSION]
  kEngine,   ///< engine-wide: only in [DEFAULT]
};

/// One entry of the schema.
struct KeySpec {
  std::string_view name = {};  ///< canonical spelling
  ValueType type = ValueType::kString;
  std::string_view default_value = {};  ///< empty: no default
  std::string_view description = {};
  std::string_view choices = {};  ///< kEnum (and optionally kInt): allowed values "a|b|c"
  std::int64_t min = 0;           ///< kInt/kPort/kDuration/kSize: smallest value
  std::int64_t max = 0;           ///< largest value
  std::int64_t unit_ns = 0;       ///< kDuration: nanoseconds per unit
  KeyScope scope = KeyScope::kSession;
  KeySupport support = KeySupport::kSupported;
  bool numbered = false;   ///< also accepted as <name>1, <name>2, ... (failover endpoints)
  bool qualified = false;  ///< also accepted as <name>.<qualifier> (e.g. AppDataDictionary.FIX.5.0SP2)
  bool prefix = false;     ///< a family: every key starting with name (less the final '*')
};

/// Every key libhft knows, in documentation order.
[[nodiscard]] std::span<const KeySpec> config_schema() noexcept;

/// The schema entry for `key` (any case; numbered/qualified forms included),
/// or nullptr if unknown.
[[nodiscard]] const KeySpec* find_key_spec(std::string_view key) noexcept;

/// The schema as the Markdown table of docs/config.md (key, type, default,
/// meaning), one row per key.
[[nodiscard]] std::string config_schema_markdown();

/// A time of day, as in StartTime=HH:MM:SS.
struct TimeOfDay {
  int hour = 0;
  int minute = 0;
  int second = 0;
  [[nodiscard]] constexpr int seconds_since_midnight() const noexcept {
    return hour * 3600 + minute * 60 + second;
  }
  friend constexpr bool operator==(const TimeOfDay&, const TimeOfDay&) = default;
};

enum class ConnectionType : std::uint8_t { kInitiator, kAcceptor };

/// A session's identity, QuickFIX/J style (sub and location IDs included).
struct SessionId {
  std::string begin_string;
  std::string sender_comp_id;
  std::string sender_sub_id;
  std::string sender_location_id;
  std::string target_comp_id;
  std::string target_sub_id;
  std::string target_location_id;
  std::string qualifier;

  /// "FIX.4.4:SENDER[/SUB[/LOC]]->TARGET[/SUB[/LOC]][:QUALIFIER]".
  [[nodiscard]] std::string to_string() const;
  friend bool operator==(const SessionId&, const SessionId&) = default;
};

/// One value as written in the file.
struct Setting {
  std::string key;         ///< canonical spelling (with its number or qualifier)
  std::string value;       ///< trimmed text
  int line = 0;            ///< line of the file it is on (0 for an override)
  bool inherited = false;  ///< from [DEFAULT] (for a session's view)
  std::string origin;      ///< an override's origin ("--set HeartBtInt=5"); empty for a file line
};

/// A setting given outside the file (a program's command line), applied
/// over it: an engine-wide key to [DEFAULT], a session key to every
/// [SESSION], replacing what the file (or [DEFAULT]) says. Errors about it
/// name `origin` instead of a file position.
struct Override {
  std::string key;
  std::string value;
  std::string origin;  ///< e.g. "--set HeartBtInt=5"
};

/// Reads "KEY=VALUE" (a command-line --set) as an Override whose origin is
/// `option` followed by the text. Error: no '=' or an empty key.
[[nodiscard]] Expected<Override> parse_override(std::string_view key_value,
                                                std::string_view option = "--set");

/// [DEFAULT], or a [SESSION] merged with [DEFAULT]. Every getter returns
/// the value set here (or inherited), else the schema default; the Error of
/// a getter names file:line:key: the key is unknown, of another type, or
/// unset without a default. Values were checked on load, so a present value
/// always converts.
class Section {
 public:
  enum class Kind : std::uint8_t { kDefault, kSession };

  [[nodiscard]] Kind kind() const noexcept { return kind_; }
  /// Line of the section header (0 for an absent [DEFAULT]).
  [[nodiscard]] int line() const noexcept { return line_; }
  [[nodiscard]] const std::string& file() const noexcept { return file_; }

  /// True if `key` is set here or inherited (a schema default does not count).
  [[nodiscard]] bool has(std::string_view key) const;
  /// The setting of `key`, or nullptr.
  [[nodiscard]] const Setting* find(std::string_view key) const;
  /// "file:line" of the value of `key`, or of the section if it is not set:
  /// for the engine's own error messages (e.g. a DataDictionary that fails
  /// to load).
  [[nodiscard]] std::string where(std::string_view key) const;
  /// All settings, own and inherited, in file order ([DEFAULT] first).
  [[nodiscard]] const std::vector<Setting>& settings() const noexcept { return settings_; }

  /// The text of any key, as written (trimmed) or its default.
  [[nodiscard]] Expected<std::string> get_string(std::string_view key) const;
  /// kInt and kPort keys; also kDuration keys, as the number written (in the key's unit).
  [[nodiscard]] Expected<std::int64_t> get_int(std::string_view key) const;
  [[nodiscard]] Expected<bool> get_bool(std::string_view key) const;
  [[nodiscard]] Expected<std::chrono::nanoseconds> get_duration(std::string_view key) const;
  [[nodiscard]] Expected<std::uint64_t> get_size(std::string_view key) const;
  [[nodiscard]] Expected<TimeOfDay> get_time(std::string_view key) const;
  [[nodiscard]] Expected<std::chrono::weekday> get_day(std::string_view key) const;

  /// A [SESSION]'s identity (empty for [DEFAULT]).
  [[nodiscard]] const SessionId& session_id() const noexcept { return id_; }
  /// A [SESSION]'s ConnectionType.
  [[nodiscard]] ConnectionType connection_type() const noexcept { return type_; }
  /// AcceptorTemplate=Y: the section describes the sessions whose identity
  /// matches it (matches()), created when one logs on; not a session itself.
  [[nodiscard]] bool is_template() const noexcept { return template_; }
  /// Whether `id` matches this section's identity: the same BeginString and
  /// SessionQualifier, and every CompID/SubID/LocationID matching, where '*'
  /// in this section's value matches any run of characters.
  [[nodiscard]] bool matches(const SessionId& id) const noexcept;
  /// This section with the identity `id` (a template's session): the ID
  /// settings replaced, AcceptorTemplate removed; everything else as is.
  [[nodiscard]] Section instantiate(const SessionId& id) const;
  /// An initiator's endpoints: SocketConnectHost/Port, then
  /// SocketConnectHost1/Port1, 2, ... (empty for an acceptor).
  [[nodiscard]] const std::vector<transport::Endpoint>& connect_endpoints() const noexcept {
    return endpoints_;
  }

 private:
  friend class Config;
  friend class ConfigParser;
  [[nodiscard]] Error error(std::string_view key, const std::string& message) const;
  // The text of `key` (set, inherited or the default) if its type is one of `types`.
  [[nodiscard]] Expected<std::string_view> text_of(std::string_view key,
                                                   std::initializer_list<ValueType> types) const;

  Kind kind_ = Kind::kDefault;
  int line_ = 0;
  std::string file_;
  std::vector<Setting> settings_;
  SessionId id_;
  ConnectionType type_ = ConnectionType::kInitiator;
  bool template_ = false;
  std::string origin_;  ///< ConfigBuilder: who made the section ("session 1", an option); empty for a file
  std::vector<transport::Endpoint> endpoints_;
};

/// A whole configuration file.
class Config {
 public:
  /// Reads and checks `path`. Error: the file cannot be read, or the first
  /// problem found, as "path:line: Key: what is wrong".
  [[nodiscard]] static Expected<Config> load(const std::string& path,
                                             std::span<const Override> overrides = {});
  /// Parses `text` as if read from `file_name` (used in messages), then
  /// applies `overrides` in order (a later one for the same key wins); every
  /// check (types, required keys, combinations) sees the result.
  [[nodiscard]] static Expected<Config> parse(std::string_view text, const std::string& file_name,
                                              std::span<const Override> overrides = {});

  [[nodiscard]] const std::string& file() const noexcept { return defaults_.file(); }
  /// [DEFAULT] alone; engine-wide keys (EngineThreadCore, PollMode, ...) are read here.
  [[nodiscard]] const Section& defaults() const noexcept { return defaults_; }
  /// The [SESSION]s in file order, each merged with [DEFAULT].
  [[nodiscard]] const std::vector<Section>& sessions() const noexcept { return sessions_; }
  /// The session with `id`, or nullptr.
  [[nodiscard]] const Section* find_session(const SessionId& id) const noexcept;

 private:
  friend class ConfigParser;
  Section defaults_;
  std::vector<Section> sessions_;
};

/// Settings built in code (docs/config.md, "Settings in code"): the same
/// keys, schema and checks as a file, with each value's origin (a program's
/// command-line option, a call site) named in every error instead of a file
/// line:
///
///   ConfigBuilder b("hft-venue");
///   b.set("ConnectionType", "acceptor").set("SocketAcceptPort", port, "--port");
///   b.add_session().set("TargetCompID", target, "--target");
///   Expected<Config> c = b.build();   // "--port 70000: SocketAcceptPort: ..."
///
/// set() goes to [DEFAULT] until the first add_session(), then to the last
/// session added. INI text is one source of a Config; this is another.
class ConfigBuilder {
 public:
  explicit ConfigBuilder(std::string name = "<settings>");
  /// `origin` names the value in errors (e.g. "--port 70000"); empty: the
  /// builder's name and the key.
  ConfigBuilder& set(std::string_view key, std::string_view value, std::string_view origin = {});
  ConfigBuilder& set(std::string_view key, std::int64_t value, std::string_view origin = {});
  ConfigBuilder& set(std::string_view key, const char* value, std::string_view origin = {}) {
    return set(key, std::string_view(value), origin);
  }
  /// Starts a [SESSION] (`origin` names it in errors about the whole
  /// session; default "session N").
  ConfigBuilder& add_session(std::string_view origin = {});
  /// Checks everything a file is checked for; `overrides` as Config::parse.
  [[nodiscard]] Expected<Config> build(std::span<const Override> overrides = {}) const;
  /// The same settings as INI text (what a file holding them would say).
  [[nodiscard]] std::string text() const;

 private:
  struct Line {
    bool section = false;  // a [SESSION] header
    std::string key, value, origin;
  };
  std::string name_;
  std::vector<Line> lines_;
  int sessions_ = 0;
};


/// Reactor options from the engine-wide keys of [DEFAULT] (PollMode,
/// EpollTimeoutMs, EngineThreadCore, IdleStrategy, MaxConnections, SocketCloseTimeoutMs).
[[nodiscard]] Expected<transport::ReactorOptions> reactor_options(const Config& config);
/// Socket options of a session (SocketNodelay, SocketQuickAck, SocketBusyPoll,
/// SocketSendBufferSize, SocketReceiveBufferSize).
[[nodiscard]] Expected<transport::SocketOptions> socket_options(const Section& session);
/// Connector options of an initiator session (endpoints, ReconnectInterval,
/// SocketConnectTimeoutMs, socket options, ReceiveBufferSize, SendBufferSize).
[[nodiscard]] Expected<transport::ConnectorOptions> connector_options(const Section& session);
/// Listener options of an acceptor session (SocketAcceptHost, SocketAcceptPort, ...).
[[nodiscard]] Expected<transport::ListenerOptions> listener_options(const Section& session);
/// A session's TLS settings (SocketUseSSL=Y and the certificate keys, by its
/// role; the handshake timeout is SocketConnectTimeoutMs for an initiator,
/// LogonTimeout for an acceptor), or nullopt for plain TCP. Error if a TLS
/// key is set without SocketUseSSL=Y. Files are loaded later, by
/// transport::TlsContext::create (tls_context_error() places its errors).
[[nodiscard]] Expected<std::optional<transport::TlsOptions>> tls_options(const Section& session);
/// `error` from TlsContext::create for `session`'s options, prefixed with the
/// file and line of the key it names ("a.cfg:7: SSLProtocol: ...").
[[nodiscard]] Error tls_context_error(const Section& session, const Error& error);

}  // namespace hft::engine
