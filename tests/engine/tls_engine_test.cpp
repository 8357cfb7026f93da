// The engine over TLS (SocketUseSSL=Y) on loopback: an acceptor with the
// venue application and an initiator, with QuickFIX's keys; certificate
// failures end with a log line and no session; configuration errors name
// the file, line and key.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "common/configs.hpp"
#include "common/venue_app.hpp"
#include "engine/loopback.hpp"
#include "engine/peer_support.hpp"
#include "hft/engine/engine.hpp"
#include "support/alloc_counter.hpp"
#include "support/openssl_alloc_counter.hpp"
#include "support/test_certs.hpp"

namespace {

using hft::engine::Engine;
using hft::engine::test::poll_until;

const hft::test::TestCertificates& certs() { return hft::test::shared_test_certificates(); }

std::string venue_tls(const std::string& cert, const std::string& key, const std::string& more = {}) {
  return "SocketUseSSL=Y\nServerCertificateFile=" + cert + "\nServerCertificateKeyFile=" + key + "\n" + more;
}

std::string client_tls(const std::string& more = {}) {
  return "SocketUseSSL=Y\nCertificationAuthoritiesFile=" + certs().ca + "\n" + more;
}

// ReportClient that also counts failed connects.
struct Client final : hft::engine::test::ReportClient {
  void on_connect_failed(hft::session::Session&, std::string_view, int) noexcept override { ++connect_failures; }
  int connect_failures = 0;
};

struct TlsPair {
  hft::apps::VenueApplication venue_app;
  Client client_app;
  hft::test::Lines venue_log;
  hft::test::Lines client_log;
  std::unique_ptr<Engine> venue;
  std::unique_ptr<Engine> client;

  TlsPair(const std::string& venue_extra, const std::string& client_extra) {
    hft::apps::SimpleSession v;
    v.sender = "VENUE";
    v.target = "CLIENT";
    v.extra = venue_extra;
    venue = hft::test::make_engine(hft::apps::simple_config(v), venue_app, &venue_log);
    hft::apps::SimpleSession c;
    c.initiator = true;
    c.sender = "CLIENT";
    c.target = "VENUE";
    c.port = venue ? venue->listen_port() : 0;
    c.extra = client_extra + "ReconnectInterval=60\n";
    client = hft::test::make_engine(hft::apps::simple_config(c), client_app, &client_log);
  }

  bool logon() {
    return venue && client && poll_until(*venue, *client, [&] { return client_app.logged_on; });
  }

  hft::session::SendStatus order(std::uint64_t i) {
    return hft::engine::test::send_test_order(client->session(0), i);
  }
};

TEST(EngineTls, orders_and_reports_flow_over_mutually_authenticated_tls) {
  TlsPair p(venue_tls(certs().server_cert, certs().server_key,
                      "CertificationAuthoritiesFile=" + certs().ca + "\nCertificateVerifyLevel=1\n"),
            client_tls("ClientCertificateFile=" + certs().client_cert + "\nClientCertificateKeyFile=" +
                       certs().client_key + "\n"));
  ASSERT_TRUE(p.logon());
  for (std::uint64_t i = 1; i <= 500; ++i) {
    ASSERT_EQ(p.order(i), hft::session::SendStatus::kOk);
    p.client->poll();
    p.venue->poll();
  }
  ASSERT_TRUE(poll_until(*p.venue, *p.client, [&] { return p.client_app.reports == 1000; }));
  EXPECT_EQ(p.venue_app.counters().orders, 500u);
  // Each side says once what it negotiated.
  EXPECT_EQ(p.venue_log.containing("TLS TLSv1.3 TLS_").size(), 1u);
  EXPECT_EQ(p.client_log.containing("TLS TLSv1.3 TLS_").size(), 1u);
}

// libhft allocates nothing after the logon over TLS; OpenSSL 3.0's record
// layer makes transient allocations per record (tests/transport/tls_test.cpp)
// and keeps none of them.
TEST(EngineTls, steady_state_orders_over_tls_allocate_nothing_in_libhft_and_openssl_keeps_nothing) {
  TlsPair p(venue_tls(certs().server_cert, certs().server_key), client_tls());
  ASSERT_TRUE(p.logon());
  for (std::uint64_t i = 1; i <= 100; ++i) ASSERT_EQ(p.order(i), hft::session::SendStatus::kOk);
  ASSERT_TRUE(poll_until(*p.venue, *p.client, [&] { return p.client_app.reports == 200; }));
  const std::int64_t openssl_held = hft::test::openssl_live_bytes();
  hft::test::AllocationScope scope;
  for (std::uint64_t i = 101; i <= 1100; ++i) {
    (void)p.order(i);
    p.client->poll();
    p.venue->poll();
  }
  while (p.client_app.reports < 2200) {
    p.client->poll();
    p.venue->poll();
  }
  EXPECT_EQ(scope.count(), 0u) << "operator new on the order/report path of both engines";
  // In this binary OpenSSL may have allocated before the counter could be
  // installed (then only tls_test.cpp's count of it applies).
  if (hft::test::openssl_allocations_counted()) {
    EXPECT_EQ(hft::test::openssl_live_bytes(), openssl_held) << "OpenSSL kept memory from the message path";
  }
}

// Polls both engines for `ms` milliseconds.
void poll_for(Engine& a, Engine& b, int ms) {
  (void)poll_until(a, b, [] { return false; }, static_cast<std::int64_t>(ms) * 1'000'000);
}

TEST(EngineTls, an_untrusted_venue_certificate_gives_a_clear_log_line_and_no_session) {
  TlsPair p(venue_tls(certs().untrusted_cert, certs().untrusted_key), client_tls());
  ASSERT_TRUE(p.venue && p.client);
  ASSERT_TRUE(poll_until(*p.venue, *p.client, [&] { return p.client_app.connect_failures == 1; }));
  poll_for(*p.venue, *p.client, 200);
  EXPECT_FALSE(p.client_app.logged_on);
  EXPECT_EQ(p.venue_app.counters().logons, 0u);
  const auto client_lines = p.client_log.containing("TLS connection to 127.0.0.1:");
  ASSERT_EQ(client_lines.size(), 1u);
  EXPECT_NE(client_lines[0].find("certificate verify failed"), std::string::npos) << client_lines[0];
  const auto venue_lines = p.venue_log.containing("TLS handshake failed");
  ASSERT_EQ(venue_lines.size(), 1u);
  EXPECT_NE(venue_lines[0].find("from 127.0.0.1:"), std::string::npos) << venue_lines[0];
  EXPECT_EQ(p.venue->stats().tls_handshake_failures, 1u);
}

TEST(EngineTls, an_expired_venue_certificate_gives_a_clear_log_line_and_no_session) {
  TlsPair p(venue_tls(certs().expired_cert, certs().expired_key), client_tls());
  ASSERT_TRUE(p.venue && p.client);
  ASSERT_TRUE(poll_until(*p.venue, *p.client, [&] { return p.client_app.connect_failures == 1; }));
  EXPECT_FALSE(p.client_app.logged_on);
  const auto lines = p.client_log.containing("certificate has expired");
  EXPECT_EQ(lines.size(), 1u);
}

TEST(EngineTls, a_plain_tcp_initiator_to_a_tls_port_gets_no_session) {
  TlsPair p(venue_tls(certs().server_cert, certs().server_key), "");
  ASSERT_TRUE(p.venue && p.client);
  poll_for(*p.venue, *p.client, 500);
  EXPECT_FALSE(p.client_app.logged_on);
  EXPECT_EQ(p.venue_app.counters().logons, 0u);
  ASSERT_TRUE(poll_until(*p.venue, *p.client, [&] { return p.venue->stats().tls_handshake_failures == 1; }));
  const auto lines = p.venue_log.containing("TLS handshake failed");
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines[0].find("wrong version number"), std::string::npos) << lines[0];
}

TEST(EngineTls, configuration_errors_name_the_file_line_and_key) {
  hft::apps::SimpleSession v;
  v.sender = "VENUE";
  v.target = "CLIENT";
  v.extra = venue_tls("/nonexistent/server.pem", certs().server_key);
  const std::string missing = hft::test::start_error(hft::apps::simple_config(v));
  EXPECT_NE(missing.find("test.cfg:"), std::string::npos) << missing;
  EXPECT_NE(missing.find("ServerCertificateFile: /nonexistent/server.pem: no such file"), std::string::npos) << missing;

  v.extra = venue_tls(certs().server_cert, certs().client_key);
  const std::string mismatch = hft::test::start_error(hft::apps::simple_config(v));
  EXPECT_NE(mismatch.find("ServerCertificateKeyFile: "), std::string::npos) << mismatch;
  EXPECT_NE(mismatch.find("does not match the certificate"), std::string::npos) << mismatch;

  v.extra = venue_tls(certs().server_cert, certs().server_key, "SSLProtocol=SSLv3\n");
  const std::string protocol = hft::test::start_error(hft::apps::simple_config(v));
  EXPECT_NE(protocol.find("SSLProtocol: SSLv3 is not supported"), std::string::npos) << protocol;

  v.extra = "SocketUseSSL=Y\n";
  const std::string no_cert = hft::test::start_error(hft::apps::simple_config(v));
  EXPECT_NE(no_cert.find("ServerCertificateFile: a TLS acceptor needs its certificate"), std::string::npos)
      << no_cert;
}

TEST(EngineTls, sessions_sharing_a_port_must_agree_on_tls) {
  const std::string text = "[DEFAULT]\nConnectionType=acceptor\nBeginString=FIX.4.4\nHeartBtInt=30\n"
                           "UseDataDictionary=N\nNonStopSession=Y\nSocketAcceptPort=0\n"
                           "[SESSION]\nSenderCompID=V\nTargetCompID=A\n" +
                           venue_tls(certs().server_cert, certs().server_key) +
                           "[SESSION]\nSenderCompID=V\nTargetCompID=B\n";
  const std::string error = hft::test::start_error(text);
  EXPECT_NE(error.find("TLS settings differ"), std::string::npos) << error;
}

}  // namespace
