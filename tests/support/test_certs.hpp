// Certificates for the TLS tests: the lab's throwaway set
// (hft/lab/tls_credentials.hpp), made once per test process.
#pragma once

#include <string>

#include "hft/lab/tls_credentials.hpp"

namespace hft::test {

using TestCertificates = lab::TlsCredentials;

/// Writes the set into `directory`; see lab::make_tls_credentials.
inline TestCertificates make_test_certificates(const std::string& directory, std::string* error = nullptr) {
  return lab::make_tls_credentials(directory, error);
}

/// The set made once per process in a temporary directory of its own.
const TestCertificates& shared_test_certificates();

}  // namespace hft::test
