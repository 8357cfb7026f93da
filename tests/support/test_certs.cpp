#include "support/test_certs.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>

namespace hft::test {

const TestCertificates& shared_test_certificates() {
  static const TestCertificates certificates = [] {
    const std::string dir =
        (std::filesystem::temp_directory_path() / ("hft-test-certs-" + std::to_string(::getpid()))).string();
    std::string error;
    TestCertificates made = make_test_certificates(dir, &error);
    if (made.directory.empty()) std::fprintf(stderr, "test certificates: %s\n", error.c_str());
    return made;
  }();
  return certificates;
}

}  // namespace hft::test
