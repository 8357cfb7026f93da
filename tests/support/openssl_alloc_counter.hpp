// Counts OpenSSL's heap allocations (it uses malloc through CRYPTO_malloc,
// not operator new, so alloc_counter.hpp cannot see them). Linking this and
// calling openssl_allocations() installs the counting functions before main,
// before OpenSSL allocates anything.
#pragma once

#include <cstdint>

namespace hft::test {

/// OpenSSL allocations (malloc and realloc) made by this thread so far.
[[nodiscard]] std::uint64_t openssl_allocations() noexcept;

/// Bytes OpenSSL holds on the heap now (every thread): what it keeps.
[[nodiscard]] std::int64_t openssl_live_bytes() noexcept;

/// False if OpenSSL refused the counting functions (it had allocated already).
[[nodiscard]] bool openssl_allocations_counted() noexcept;

}  // namespace hft::test
