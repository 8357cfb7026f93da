// OpenSSL helpers shared by tls.cpp and connection.cpp (not installed).
#pragma once

#include <cstddef>
#include <string>

struct ssl_st;

namespace hft::transport {

/// Empties this thread's OpenSSL error queue into `out` as "reason; reason"
/// (truncated to `capacity`, NUL-terminated). Returns the length written.
std::size_t tls_error_text(char* out, std::size_t capacity) noexcept;

/// The same as a string (start-up code).
[[nodiscard]] std::string tls_error_queue();

/// Why SSL_do_handshake returned `result` (<= 0), into `out`: the
/// certificate check that failed when `verifying`, else OpenSSL's reasons or
/// the socket error. Empties the error queue. Returns the length written.
std::size_t tls_handshake_error(ssl_st* ssl, int result, bool verifying, char* out, std::size_t capacity) noexcept;

}  // namespace hft::transport
