#include "hft/transport/tls.hpp"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdint>
#include <cstring>

#include "tls_support.hpp"

namespace hft::transport {

namespace {

// Versions by bit: TLS 1.0, 1.1, 1.2, 1.3.
constexpr std::array<int, 4> kVersions = {TLS1_VERSION, TLS1_1_VERSION, TLS1_2_VERSION, TLS1_3_VERSION};
constexpr std::array<const char*, 4> kVersionNames = {"TLSv1", "TLSv1.1", "TLSv1.2", "TLSv1.3"};

bool iequals(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  }
  return true;
}

// Bits of one SSLProtocol token; -1: SSLv2/SSLv3; -2: unknown.
int protocol_bits(std::string_view token) noexcept {
  if (iequals(token, "all")) return 0xf;
  if (iequals(token, "SSLv2") || iequals(token, "SSLv3")) return -1;
  if (iequals(token, "TLSv1") || iequals(token, "TLSv1.0") || iequals(token, "TLSv1_0")) return 1;
  if (iequals(token, "TLSv1_1") || iequals(token, "TLSv1.1")) return 2;
  if (iequals(token, "TLSv1_2") || iequals(token, "TLSv1.2")) return 4;
  if (iequals(token, "TLSv1_3") || iequals(token, "TLSv1.3")) return 8;
  return -2;
}

bool file_exists(const std::string& path, bool directory) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return false;
  return directory ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode);
}

// An encrypted private key would make OpenSSL prompt on the terminal.
int refuse_passphrase(char*, int, int, void*) {
  return 0;
}

bool is_numeric_address(const std::string& host) {
  unsigned char buffer[sizeof(in6_addr)];
  return ::inet_pton(AF_INET, host.c_str(), buffer) == 1 || ::inet_pton(AF_INET6, host.c_str(), buffer) == 1;
}

// Splits an SSLCipherSuite value into the TLS 1.2 list and the TLS 1.3
// suites (OpenSSL takes them through two calls).
void split_ciphers(const std::string& text, std::string& tls12, std::string& tls13) {
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find_first_of(":, ", start);
    if (end == std::string::npos) end = text.size();
    const std::string token = text.substr(start, end - start);
    if (!token.empty()) {
      std::string& into = token.rfind("TLS_", 0) == 0 ? tls13 : tls12;
      if (!into.empty()) into += ':';
      into += token;
    }
    start = end + 1;
  }
}

// A BIO over the connection's non-blocking socket that writes with
// send(MSG_NOSIGNAL): OpenSSL's own socket BIO uses write(), which raises
// SIGPIPE on a peer that has gone. One send()/recv() per call, like the
// plain TCP path.
int bio_fd(BIO* bio) noexcept {
  return static_cast<int>(reinterpret_cast<std::intptr_t>(BIO_get_data(bio)));
}

int bio_write(BIO* bio, const char* data, std::size_t length, std::size_t* written) {
  BIO_clear_retry_flags(bio);
  for (;;) {
    const ssize_t n = ::send(bio_fd(bio), data, length, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n >= 0) {
      *written = static_cast<std::size_t>(n);
      return 1;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) BIO_set_retry_write(bio);
    *written = 0;
    return 0;
  }
}

int bio_read(BIO* bio, char* data, std::size_t length, std::size_t* read) {
  BIO_clear_retry_flags(bio);
  for (;;) {
    const ssize_t n = ::recv(bio_fd(bio), data, length, MSG_DONTWAIT);
    if (n > 0) {
      *read = static_cast<std::size_t>(n);
      return 1;
    }
    *read = 0;
    if (n == 0) return 0;  // end of stream
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) BIO_set_retry_read(bio);
    return 0;
  }
}

long bio_ctrl(BIO* bio, int command, long, void* pointer) {
  switch (command) {
    case BIO_CTRL_FLUSH:
      return 1;
    case BIO_C_GET_FD:
      if (pointer != nullptr) *static_cast<int*>(pointer) = bio_fd(bio);
      return bio_fd(bio);
    default:
      return 0;
  }
}

int bio_create(BIO* bio) {
  BIO_set_init(bio, 1);
  return 1;
}

BIO_METHOD* socket_method() noexcept {
  static BIO_METHOD* const method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK | BIO_TYPE_DESCRIPTOR, "hft-socket");
    if (m == nullptr) return m;
    BIO_meth_set_write_ex(m, bio_write);
    BIO_meth_set_read_ex(m, bio_read);
    BIO_meth_set_ctrl(m, bio_ctrl);
    BIO_meth_set_create(m, bio_create);
    return m;
  }();
  return method;
}

}  // namespace

std::size_t tls_error_text(char* out, std::size_t capacity) noexcept {
  std::size_t length = 0;
  unsigned long code = 0;
  if (capacity > 0) out[0] = '\0';
  while ((code = ERR_get_error()) != 0) {
    if (capacity == 0) continue;
    const char* reason = ERR_reason_error_string(code);
    char number[32];
    if (reason == nullptr) {
      std::snprintf(number, sizeof number, "error %lx", code);
      reason = number;
    }
    const int n = std::snprintf(out + length, capacity - length, "%s%s", length == 0 ? "" : "; ", reason);
    if (n > 0) length = std::min(capacity - 1, length + static_cast<std::size_t>(n));
  }
  return length;
}

std::string tls_error_queue() {
  char text[512];
  const std::size_t n = tls_error_text(text, sizeof text);
  return std::string(text, n);
}

Expected<TlsVersionRange> parse_tls_protocols(std::string_view text) {
  unsigned set = 0;
  bool any = false;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == ',')) ++i;
    if (i >= text.size()) break;
    char action = '\0';
    if (text[i] == '+' || text[i] == '-') action = text[i++];
    std::size_t end = i;
    while (end < text.size() && text[end] != ' ' && text[end] != '\t' && text[end] != ',') ++end;
    const std::string_view token = text.substr(i, end - i);
    i = end;
    const int bits = protocol_bits(token);
    if (bits == -2) {
      return Error{"SSLProtocol: unknown protocol '" + std::string(token) +
                   "' (expected all, TLSv1, TLSv1_1, TLSv1_2 or TLSv1_3, each with an optional + or -)"};
    }
    if (bits == -1) {
      if (action == '-') continue;  // QuickFIX's default "all -SSLv2": removing it is a no-op
      return Error{"SSLProtocol: " + std::string(token) + " is not supported (OpenSSL 3 has no SSLv2 or SSLv3)"};
    }
    any = true;
    if (action == '-') {
      set &= ~static_cast<unsigned>(bits);
    } else if (action == '+') {
      set |= static_cast<unsigned>(bits);
    } else {
      set = static_cast<unsigned>(bits);
    }
  }
  if (!any) set = 4 | 8;
  if (set == 0) return Error{"SSLProtocol: '" + std::string(text) + "' enables no TLS version"};
  int low = 0;
  while ((set & (1u << low)) == 0) ++low;
  int high = 3;
  while ((set & (1u << high)) == 0) --high;
  for (int b = low; b <= high; ++b) {
    if ((set & (1u << b)) == 0) {
      return Error{"SSLProtocol: '" + std::string(text) + "' leaves a gap (" + kVersionNames[static_cast<std::size_t>(b)] +
                   " is off between enabled versions); OpenSSL takes one contiguous range"};
    }
  }
  return TlsVersionRange{kVersions[static_cast<std::size_t>(low)], kVersions[static_cast<std::size_t>(high)]};
}

TlsContext::~TlsContext() {
  if (ctx_ != nullptr) SSL_CTX_free(ctx_);
}

Expected<std::shared_ptr<TlsContext>> TlsContext::create(const TlsOptions& options) {
  const bool server = options.role == TlsRole::kServer;
  auto range = parse_tls_protocols(options.protocols);
  if (!range) return range.error();
  const int level = options.verify_level < 0 ? (server ? 0 : 1) : options.verify_level;
  if (level > 2) {
    return Error{"CertificateVerifyLevel: " + std::to_string(level) +
                 " is not a level (0: none, 1: require and verify, 2: verify if presented)"};
  }
  if (server && options.certificate_file.empty()) {
    return Error{"ServerCertificateFile: a TLS acceptor needs its certificate (and key)"};
  }
  if (!options.key_file.empty() && options.certificate_file.empty()) {
    return Error{std::string(server ? "ServerCertificateKeyFile" : "ClientCertificateKeyFile") +
                 ": a key without a certificate (set " + (server ? "ServerCertificateFile" : "ClientCertificateFile") +
                 ")"};
  }
  if (server && level > 0 && options.ca_file.empty() && options.ca_directory.empty()) {
    return Error{"CertificateVerifyLevel: " + std::to_string(level) +
                 " verifies client certificates and needs CertificationAuthoritiesFile or "
                 "CertificationAuthoritiesDirectory"};
  }
  const char* cert_key = server ? "ServerCertificateFile" : "ClientCertificateFile";
  const char* key_key = server ? "ServerCertificateKeyFile" : "ClientCertificateKeyFile";
  struct FileCheck {
    const char* key;
    const std::string* path;
    bool directory;
  };
  const FileCheck checks[] = {{cert_key, &options.certificate_file, false},
                              {key_key, &options.key_file, false},
                              {"CertificationAuthoritiesFile", &options.ca_file, false},
                              {"CertificationAuthoritiesDirectory", &options.ca_directory, true},
                              {"CertificateRevocationListFile", &options.crl_file, false},
                              {"CertificateRevocationListDirectory", &options.crl_directory, true}};
  for (const FileCheck& check : checks) {
    if (check.path->empty() || file_exists(*check.path, check.directory)) continue;
    return Error{std::string(check.key) + ": " + *check.path + ": " +
                 (check.directory ? "no such directory" : "no such file")};
  }

  ERR_clear_error();
  std::shared_ptr<TlsContext> context(new TlsContext());
  context->options_ = options;
  context->options_.verify_level = level;
  SSL_CTX* ctx = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
  if (ctx == nullptr) return Error{"TLS: cannot create an OpenSSL context: " + tls_error_queue()};
  context->ctx_ = ctx;
  std::string versions = kVersionNames[static_cast<std::size_t>(range->min_version - TLS1_VERSION)];
  if (range->max_version != range->min_version) {
    versions += "-";
    versions += kVersionNames[static_cast<std::size_t>(range->max_version - TLS1_VERSION)];
  }
  if (SSL_CTX_set_min_proto_version(ctx, range->min_version) != 1 ||
      SSL_CTX_set_max_proto_version(ctx, range->max_version) != 1) {
    return Error{"SSLProtocol: OpenSSL refuses " + versions + ": " + tls_error_queue()};
  }
  // No renegotiation (a peer cannot make the engine thread redo a
  // handshake mid-stream); a peer closing without close_notify is a close,
  // not an error; no compression (CRIME).
  SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_NO_COMPRESSION |
                               SSL_OP_CIPHER_SERVER_PREFERENCE);
  // send() hands OpenSSL what it has; a record the kernel did not take
  // whole is retried from the outbound buffer (another address, same bytes).
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  // No session cache or tickets: a FIX session is one long connection, and
  // tickets sent after the handshake would allocate on the message path.
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
  if (server) (void)SSL_CTX_set_num_tickets(ctx, 0);
  SSL_CTX_set_default_passwd_cb(ctx, refuse_passphrase);

  if (!options.cipher_suite.empty()) {
    std::string tls12;
    std::string tls13;
    split_ciphers(options.cipher_suite, tls12, tls13);
    if (!tls12.empty() && SSL_CTX_set_cipher_list(ctx, tls12.c_str()) != 1) {
      return Error{"SSLCipherSuite: no cipher matches '" + tls12 + "': " + tls_error_queue()};
    }
    if (!tls13.empty() && SSL_CTX_set_ciphersuites(ctx, tls13.c_str()) != 1) {
      return Error{"SSLCipherSuite: no TLS 1.3 suite matches '" + tls13 + "': " + tls_error_queue()};
    }
  }

  if (!options.certificate_file.empty()) {
    if (SSL_CTX_use_certificate_chain_file(ctx, options.certificate_file.c_str()) != 1) {
      return Error{std::string(cert_key) + ": " + options.certificate_file +
                   ": not a PEM certificate: " + tls_error_queue()};
    }
    const std::string& key = options.key_file.empty() ? options.certificate_file : options.key_file;
    const std::string key_setting = options.key_file.empty() ? cert_key : key_key;
    FILE* file = std::fopen(key.c_str(), "r");
    EVP_PKEY* private_key = file != nullptr ? PEM_read_PrivateKey(file, nullptr, refuse_passphrase, nullptr) : nullptr;
    if (file != nullptr) std::fclose(file);
    if (private_key == nullptr) {
      return Error{key_setting + ": " + key + ": no usable PEM private key (an encrypted key is not supported): " +
                   tls_error_queue()};
    }
    const bool matches = SSL_CTX_use_PrivateKey(ctx, private_key) == 1 && SSL_CTX_check_private_key(ctx) == 1;
    EVP_PKEY_free(private_key);
    if (!matches) {
      ERR_clear_error();
      return Error{key_setting + ": " + key + ": the private key does not match the certificate " +
                   options.certificate_file};
    }
  }

  if (!options.ca_file.empty() || !options.ca_directory.empty()) {
    if (SSL_CTX_load_verify_locations(ctx, options.ca_file.empty() ? nullptr : options.ca_file.c_str(),
                                      options.ca_directory.empty() ? nullptr : options.ca_directory.c_str()) != 1) {
      return Error{std::string(options.ca_file.empty() ? "CertificationAuthoritiesDirectory: " + options.ca_directory
                                                       : "CertificationAuthoritiesFile: " + options.ca_file) +
                   ": no CA certificate could be loaded: " + tls_error_queue()};
    }
    if (server && !options.ca_file.empty()) {
      // The CAs named in the CertificateRequest: a client picks its
      // certificate by them.
      STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(options.ca_file.c_str());
      if (names != nullptr) SSL_CTX_set_client_CA_list(ctx, names);
    }
  } else if (!server && level > 0) {
    if (SSL_CTX_set_default_verify_paths(ctx) != 1) {
      return Error{"CertificationAuthoritiesFile: not set, and the system CA store cannot be loaded: " +
                   tls_error_queue()};
    }
  }

  if (!options.crl_file.empty() || !options.crl_directory.empty()) {
    X509_STORE* store = SSL_CTX_get_cert_store(ctx);
    if (!options.crl_file.empty() && X509_STORE_load_file(store, options.crl_file.c_str()) != 1) {
      return Error{"CertificateRevocationListFile: " + options.crl_file + ": not a PEM CRL: " + tls_error_queue()};
    }
    if (!options.crl_directory.empty() && X509_STORE_load_path(store, options.crl_directory.c_str()) != 1) {
      return Error{"CertificateRevocationListDirectory: " + options.crl_directory + ": " + tls_error_queue()};
    }
    X509_STORE_set_flags(store, X509_V_FLAG_CRL_CHECK | X509_V_FLAG_CRL_CHECK_ALL);
  }

  int mode = SSL_VERIFY_NONE;
  if (server) {
    if (level == 1) mode = SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
    if (level == 2) mode = SSL_VERIFY_PEER;
  } else if (level > 0) {
    mode = SSL_VERIFY_PEER;
  }
  SSL_CTX_set_verify(ctx, mode, nullptr);
  context->verifies_peer_ = mode != SSL_VERIFY_NONE;
  ERR_clear_error();
  return context;
}

ssl_st* TlsContext::new_session(int fd) const noexcept {
  SSL* ssl = SSL_new(ctx_);
  if (ssl == nullptr) {
    ERR_clear_error();
    return nullptr;
  }
  BIO_METHOD* method = socket_method();
  BIO* bio = method != nullptr ? BIO_new(method) : nullptr;
  if (bio == nullptr) {
    SSL_free(ssl);
    ERR_clear_error();
    return nullptr;
  }
  BIO_set_data(bio, reinterpret_cast<void*>(static_cast<std::intptr_t>(fd)));
  SSL_set_bio(ssl, bio, bio);
  if (options_.role == TlsRole::kServer) {
    SSL_set_accept_state(ssl);
  } else {
    SSL_set_connect_state(ssl);
    if (!options_.server_name.empty() && !is_numeric_address(options_.server_name)) {
      (void)SSL_set_tlsext_host_name(ssl, options_.server_name.c_str());
    }
  }
  return ssl;
}

std::size_t tls_handshake_error(ssl_st* ssl, int result, bool verifying, char* out,
                                std::size_t capacity) noexcept {
  const int saved_errno = errno;
  const int error = SSL_get_error(ssl, result);
  const long verify = verifying ? SSL_get_verify_result(ssl) : X509_V_OK;
  char queue[384];
  const std::size_t queued = tls_error_text(queue, sizeof queue);
  int n = 0;
  if (verify != X509_V_OK) {
    n = std::snprintf(out, capacity, "certificate verify failed: %s", X509_verify_cert_error_string(verify));
  } else if (queued > 0) {
    n = std::snprintf(out, capacity, "%s", queue);
  } else if (error == SSL_ERROR_ZERO_RETURN || (error == SSL_ERROR_SYSCALL && saved_errno == 0)) {
    n = std::snprintf(out, capacity, "the peer closed the connection during the handshake");
  } else if (error == SSL_ERROR_SYSCALL) {
    n = std::snprintf(out, capacity, "%s", std::strerror(saved_errno));
  } else {
    n = std::snprintf(out, capacity, "handshake failed (OpenSSL error %d)", error);
  }
  return n < 0 ? 0 : std::min(capacity - 1, static_cast<std::size_t>(n));
}

}  // namespace hft::transport
