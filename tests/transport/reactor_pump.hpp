// Shared by the transport tests: drive a reactor from the test's thread.
#pragma once

#include <chrono>

#include "hft/transport/reactor.hpp"

namespace hft::transport::test {

/// Runs do_work() until `done` holds or `limit` passes; false on timeout.
template <typename Pred>
bool pump(Reactor& reactor, Pred done, std::chrono::milliseconds limit = std::chrono::milliseconds(5000)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    (void)reactor.do_work();
  }
  return true;
}

}  // namespace hft::transport::test
