#include "hft/lab/tls_credentials.hpp"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <filesystem>
#include <memory>

namespace hft::lab {

namespace {

struct Free {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
  void operator()(X509* p) const { X509_free(p); }
  void operator()(X509_CRL* p) const { X509_CRL_free(p); }
};
using Key = std::unique_ptr<EVP_PKEY, Free>;
using Cert = std::unique_ptr<X509, Free>;

constexpr long kDay = 24 * 3600;

Key new_key() {
  return Key(EVP_EC_gen("P-256"));
}

// Leaf certificates get RSA keys: QuickFIX 1.15 configures RSA and DSA
// certificates only. Two keys serve every leaf (the server-side ones and
// the client-side ones), since RSA key generation takes a while.
Key new_rsa_key() {
  return Key(EVP_RSA_gen(2048));
}

Key share(const Key& key) {
  EVP_PKEY_up_ref(key.get());
  return Key(key.get());
}

void add_extension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (ext == nullptr) return;
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
}

// A certificate for `key`, valid from `from_s` to `until_s` seconds from now.
Cert make_cert(EVP_PKEY* key, const char* cn, long serial, X509* issuer, EVP_PKEY* issuer_key, bool ca,
               long from_s, long until_s) {
  Cert cert(X509_new());
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), serial);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), from_s);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), until_s);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("libhft tests"), -1,
                             -1, 0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn), -1, -1, 0);
  X509* signer = issuer != nullptr ? issuer : cert.get();
  X509_set_issuer_name(cert.get(), X509_get_subject_name(signer));
  if (ca) {
    add_extension(cert.get(), signer, NID_basic_constraints, "critical,CA:TRUE");
    add_extension(cert.get(), signer, NID_key_usage, "critical,keyCertSign,cRLSign");
  } else {
    add_extension(cert.get(), signer, NID_basic_constraints, "critical,CA:FALSE");
    add_extension(cert.get(), signer, NID_subject_alt_name, "IP:127.0.0.1,DNS:localhost");
  }
  add_extension(cert.get(), signer, NID_subject_key_identifier, "hash");
  X509_sign(cert.get(), issuer_key != nullptr ? issuer_key : key, EVP_sha256());
  return cert;
}

bool write_cert(const std::string& path, X509* cert) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return false;
  const bool ok = PEM_write_X509(f, cert) == 1;
  return std::fclose(f) == 0 && ok;
}

bool write_key(const std::string& path, EVP_PKEY* key) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return false;
  const bool ok = PEM_write_PrivateKey(f, key, nullptr, nullptr, 0, nullptr, nullptr) == 1;
  return std::fclose(f) == 0 && ok;
}

}  // namespace

TlsCredentials make_tls_credentials(const std::string& directory, std::string* error) {
  TlsCredentials t;
  std::error_code ec;
  std::filesystem::create_directories(directory, ec);
  auto path = [&](const char* name) { return directory + "/" + name; };
  const long kYears = 50L * 365 * kDay;

  Key ca_key = new_key();
  Key other_ca_key = new_key();
  Key server_key = new_rsa_key();
  Key client_key = new_rsa_key();
  Key expired_key = share(server_key);
  Key untrusted_key = share(server_key);
  Key revoked_key = share(client_key);
  if (!ca_key || !other_ca_key || !server_key || !client_key || !expired_key || !untrusted_key || !revoked_key) {
    if (error != nullptr) *error = "cannot generate the keys (P-256, RSA-2048)";
    return {};
  }
  Cert ca = make_cert(ca_key.get(), "libhft test CA", 1, nullptr, nullptr, true, -kDay, kYears);
  Cert other_ca = make_cert(other_ca_key.get(), "libhft other CA", 1, nullptr, nullptr, true, -kDay, kYears);
  Cert server = make_cert(server_key.get(), "server", 2, ca.get(), ca_key.get(), false, -kDay, kYears);
  Cert client = make_cert(client_key.get(), "client", 3, ca.get(), ca_key.get(), false, -kDay, kYears);
  Cert expired = make_cert(expired_key.get(), "server", 4, ca.get(), ca_key.get(), false, -30 * kDay, -kDay);
  Cert untrusted =
      make_cert(untrusted_key.get(), "server", 5, other_ca.get(), other_ca_key.get(), false, -kDay, kYears);
  Cert revoked = make_cert(revoked_key.get(), "revoked-client", 6, ca.get(), ca_key.get(), false, -kDay, kYears);

  // ca's CRL listing revoked.pem.
  std::unique_ptr<X509_CRL, Free> crl(X509_CRL_new());
  X509_CRL_set_version(crl.get(), 1);
  X509_CRL_set_issuer_name(crl.get(), X509_get_subject_name(ca.get()));
  ASN1_TIME* last = X509_gmtime_adj(nullptr, -kDay);
  ASN1_TIME* next = X509_gmtime_adj(nullptr, kYears);
  X509_CRL_set1_lastUpdate(crl.get(), last);
  X509_CRL_set1_nextUpdate(crl.get(), next);
  X509_REVOKED* entry = X509_REVOKED_new();
  X509_REVOKED_set_serialNumber(entry, X509_get_serialNumber(revoked.get()));
  X509_REVOKED_set_revocationDate(entry, last);
  X509_CRL_add0_revoked(crl.get(), entry);
  X509_CRL_sort(crl.get());
  X509_CRL_sign(crl.get(), ca_key.get(), EVP_sha256());
  ASN1_TIME_free(last);
  ASN1_TIME_free(next);

  t.directory = directory;
  t.ca = path("ca.pem");
  t.server_cert = path("server.pem");
  t.server_key = path("server-key.pem");
  t.client_cert = path("client.pem");
  t.client_key = path("client-key.pem");
  t.expired_cert = path("expired.pem");
  t.expired_key = path("expired-key.pem");
  t.other_ca = path("other-ca.pem");
  t.untrusted_cert = path("untrusted.pem");
  t.untrusted_key = path("untrusted-key.pem");
  t.revoked_cert = path("revoked.pem");
  t.revoked_key = path("revoked-key.pem");
  t.crl = path("crl.pem");
  bool ok = write_cert(t.ca, ca.get()) && write_cert(t.other_ca, other_ca.get()) &&
            write_cert(t.server_cert, server.get()) && write_key(t.server_key, server_key.get()) &&
            write_cert(t.client_cert, client.get()) && write_key(t.client_key, client_key.get()) &&
            write_cert(t.expired_cert, expired.get()) && write_key(t.expired_key, expired_key.get()) &&
            write_cert(t.untrusted_cert, untrusted.get()) && write_key(t.untrusted_key, untrusted_key.get()) &&
            write_cert(t.revoked_cert, revoked.get()) && write_key(t.revoked_key, revoked_key.get());
  if (ok) {
    FILE* f = std::fopen(t.crl.c_str(), "w");
    ok = f != nullptr && PEM_write_X509_CRL(f, crl.get()) == 1;
    if (f != nullptr) ok = std::fclose(f) == 0 && ok;
  }
  if (!ok) {
    if (error != nullptr) *error = "cannot write the test certificates into " + directory;
    return {};
  }
  return t;
}

}  // namespace hft::lab
