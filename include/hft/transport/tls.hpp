// TLS (OpenSSL) for connectors and listeners. Start-up code: a TlsContext
// loads certificates, keys, CA and CRL files once and is shared by every
// connection of its connector or listener; a connection's TLS state is made
// when it is set up (SSL_new), and after the handshake reads and writes go
// through SSL_read/SSL_write on the same preallocated buffers as plain TCP.
//
//   connect()/accept() --> kHandshaking --SSL_do_handshake done--> kOpen
//        (on_connected/on_accepted follow the handshake, not the TCP connect)
//                            |
//                            +--failed (alert, bad certificate, timeout,
//                               peer closed)--> socket closed, slot recycled:
//                               connector: on_connect_failed(EPROTO or
//                               ETIMEDOUT), Connector::last_tls_error();
//                               listener: on_handshake_failed(reason)
//
// The keys follow QuickFIX (SSLProtocol, SSLCipherSuite,
// CertificateVerifyLevel, ...); docs/transport.md, "TLS", gives the rules.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "hft/core/expected.hpp"

struct ssl_ctx_st;
struct ssl_st;

namespace hft::transport {

enum class TlsRole : std::uint8_t {
  kClient,  ///< a connector: sends the ClientHello, verifies the server
  kServer,  ///< a listener: presents its certificate, may ask for the client's
};

/// What a TlsContext is made from. Paths are PEM files.
struct TlsOptions {
  TlsRole role = TlsRole::kClient;
  /// Own certificate (chain): required for a server, optional for a client
  /// (mutual authentication when the server asks for it).
  std::string certificate_file;
  /// Own private key; empty: read from certificate_file.
  std::string key_file;
  /// Trusted CAs: a PEM bundle and/or an OpenSSL hashed directory. A client
  /// with neither trusts the system's default store.
  std::string ca_file;
  std::string ca_directory;
  /// Certificate revocation lists (a PEM file and/or a hashed directory):
  /// when set, every certificate of the peer's chain is checked against them.
  std::string crl_file;
  std::string crl_directory;
  /// QuickFIX's CertificateVerifyLevel. Server: 0 do not ask for a client
  /// certificate, 1 require and verify one, 2 verify one if presented.
  /// Client: 0 do not verify the server (a warning at start), 1 or 2 verify it.
  int verify_level = -1;  ///< -1: the default (server 0, client 1)
  /// QuickFIX's SSLProtocol: "all", "TLSv1_2", "+TLSv1_3 -TLSv1", ... (the
  /// versions enabled, which must be contiguous). Empty: TLSv1_2 and TLSv1_3.
  std::string protocols;
  /// OpenSSL cipher list for TLS 1.2 (and TLS 1.3 suites, named TLS_*);
  /// empty: OpenSSL's defaults.
  std::string cipher_suite;
  /// Client: the name sent as SNI (not sent when empty or a numeric address).
  std::string server_name;
  /// A handshake not done within this long fails (a peer that connects and
  /// says nothing holds no slot for longer).
  std::int64_t handshake_timeout_ns = 10'000'000'000;

  friend bool operator==(const TlsOptions&, const TlsOptions&) = default;
};

/// Parses QuickFIX's SSLProtocol text into the lowest and highest TLS
/// versions enabled (TLS1_VERSION .. TLS1_3_VERSION). Error names the token
/// (SSLv2/SSLv3 are refused: OpenSSL 3 has neither) or a gap in the set.
struct TlsVersionRange {
  int min_version = 0;
  int max_version = 0;
};
[[nodiscard]] Expected<TlsVersionRange> parse_tls_protocols(std::string_view text);

/// A loaded OpenSSL context (SSL_CTX) for one role. Shared by the
/// connections of a connector or listener; immutable once made.
class TlsContext {
 public:
  /// Loads everything `options` names. The error names the file or setting
  /// that is wrong and OpenSSL's reason ("ca.pem: no such file", "key does
  /// not match certificate", "SSLCipherSuite: no cipher matches ...").
  [[nodiscard]] static Expected<std::shared_ptr<TlsContext>> create(const TlsOptions& options);

  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;
  ~TlsContext();

  [[nodiscard]] const TlsOptions& options() const noexcept { return options_; }
  /// True when the peer's certificate is verified (client: verify_level > 0;
  /// server: levels 1 and 2).
  [[nodiscard]] bool verifies_peer() const noexcept { return verifies_peer_; }

  /// A new connection's TLS state on `fd` (SSL_new on libhft's socket BIO,
  /// connect or accept state), or nullptr if OpenSSL is out of memory.
  [[nodiscard]] ssl_st* new_session(int fd) const noexcept;

 private:
  TlsContext() = default;
  TlsOptions options_;
  ssl_ctx_st* ctx_ = nullptr;
  bool verifies_peer_ = false;
};

}  // namespace hft::transport
