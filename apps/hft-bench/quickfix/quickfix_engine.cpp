// The QuickFIX engine adapter (--engines quickfix) for the tx and rtt
// lanes: same venue, same message, same boundary as libhft's adapter
// (qf_client.hpp says what one send_new_order call covers). Its journal is
// QuickFIX's FileStore under RUN/quickfix-store, audited after the run.
#include <memory>
#include <string>

#include "foreign_adapter.hpp"
#include "qf_client.hpp"

namespace hft::lab::lanes {
namespace {

class QuickfixAdapter final : public ForeignClientAdapter<hft_bench_qf::QfClient> {
 public:
  std::string_view name() const noexcept override { return "quickfix"; }
  std::string version() const override {
    return client_ ? client_->version() : std::string("QuickFIX 1.15.1 (Debian libquickfix)");
  }

  Expected<void> start(const LaneConfig& config) override {
    hft_bench_qf::QfSettings s;
    set_venue_and_ids(s, config);
    store_dir_ = config.run_dir / "quickfix-store";
    std::error_code ec;
    std::filesystem::create_directories(store_dir_, ec);
    s.store_dir = store_dir_.string();
    s.spec_dir = spec_dir();
    if (const TlsFiles tls = tls_files(config); tls) {
      s.tls_ca = tls.ca;
      s.tls_cert = tls.cert;
      s.tls_key = tls.key;
    }
    return start_client(hft_bench_qf::make_qf_client, s);
  }

  Expected<std::filesystem::path> stop() override {
    if (!client_) return std::filesystem::path{};
    const std::uint64_t exceptions = client_->exceptions();
    std::string error;
    const bool stopped = client_->stop(error);
    client_.reset();
    if (!stopped) return Error{error};
    if (exceptions != 0) {
      return Error{"QuickFIX threw " + std::to_string(exceptions) + " exception(s) inside timed calls"};
    }
    return store_dir_;
  }

 private:
  std::filesystem::path store_dir_;
};

EngineInfo make_quickfix_engine() {
  return EngineInfo{"quickfix", true, [] { return std::unique_ptr<EngineAdapter>(new QuickfixAdapter()); }, {}, {}, true};
}

}  // namespace
HFT_LAB_REGISTER_ENGINE(make_quickfix_engine);
}  // namespace hft::lab::lanes

#if defined(__SANITIZE_ADDRESS__)
// Under the sanitizers: QuickFIX 1.15.1's SSLSocketInitiator never frees
// what it loads at start (FIX::loadSSLCert's readX509, loadCAInfo's
// findCAList), once per initiator; LeakSanitizer reports that at exit.
// Its stacks end in libcrypto (no frame pointers there to reach QuickFIX's
// frames with the fast unwinder), so OpenSSL's allocations are exempt in
// hft-bench only: libhft's own TLS code is leak-checked by the transport and
// engine tests, which have no such exemption.
extern "C" const char* __lsan_default_suppressions() {
  return "leak:libquickfix.so\nleak:libcrypto.so\nleak:libssl.so\n";
}
#endif
