// hft-test-certs DIR: writes the TLS tests' certificates (test_certs.hpp)
// into DIR, for the interop scripts.
#include <cstdio>
#include <string>

#include "support/test_certs.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: hft-test-certs DIR\n");
    return 2;
  }
  std::string error;
  const auto certs = hft::test::make_test_certificates(argv[1], &error);
  if (certs.directory.empty()) {
    std::fprintf(stderr, "hft-test-certs: %s\n", error.c_str());
    return 1;
  }
  return 0;
}
