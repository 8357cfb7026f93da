// Throwaway TLS credentials, made with OpenSSL (CAs: P-256 keys; leaf
// certificates: RSA-2048, which QuickFIX 1.15 requires; SHA-256): for
// the lab's TLS variants (a run's own CA, never trusted beyond it) and the
// TLS tests, which also use the failure cases (expired, untrusted,
// revoked). Nothing secret is kept in the repository.
//
//   ca.pem            test CA (self-signed)
//   server.pem/-key   CN=server, SAN 127.0.0.1 and localhost, signed by ca
//   client.pem/-key   CN=client, signed by ca
//   expired.pem/-key  CN=server, signed by ca, valid until yesterday
//   other-ca.pem      another self-signed CA, trusted by nobody
//   untrusted.pem/-key CN=server, signed by other-ca
//   revoked.pem/-key  CN=revoked-client, signed by ca, listed in crl.pem
//   crl.pem           ca's CRL revoking revoked.pem
#pragma once

#include <string>

namespace hft::lab {

struct TlsCredentials {
  std::string directory;
  std::string ca;
  std::string server_cert, server_key;
  std::string client_cert, client_key;
  std::string expired_cert, expired_key;
  std::string other_ca;
  std::string untrusted_cert, untrusted_key;
  std::string revoked_cert, revoked_key;
  std::string crl;
};

/// Writes the set above into `directory` (created if missing). Returns the
/// paths; on failure `directory` is empty and `error` says why.
[[nodiscard]] TlsCredentials make_tls_credentials(const std::string& directory, std::string* error = nullptr);

}  // namespace hft::lab
