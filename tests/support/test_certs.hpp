// Certificates for the TLS tests, made at test time with OpenSSL (P-256
// keys, SHA-256): nothing secret is kept in the repository, and nothing
// expires while the tests are kept.
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

namespace hft::test {

struct TestCertificates {
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
TestCertificates make_test_certificates(const std::string& directory, std::string* error = nullptr);

/// The set made once per process in a temporary directory of its own.
const TestCertificates& shared_test_certificates();

}  // namespace hft::test
