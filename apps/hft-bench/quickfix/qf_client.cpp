// C++14: QuickFIX 1.15 headers use dynamic exception specifications.
#include "qf_client.hpp"

#include <quickfix/Application.h>
#include <quickfix/DataDictionaryProvider.h>
#include <quickfix/Exceptions.h>
#include <quickfix/FileStore.h>
#include <quickfix/Session.h>
#include <quickfix/SessionSettings.h>
#include <quickfix/SSLSocketInitiator.h>
#include <quickfix/SocketInitiator.h>
#include <quickfix/fix50sp2/NewOrderSingle.h>

#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <sstream>
#include <thread>

namespace hft_bench_qf {
namespace {

class Callbacks final : public FIX::Application {
 public:
  void onCreate(const FIX::SessionID&) override {}
  void onLogon(const FIX::SessionID&) override { logged_on = true; }
  void onLogout(const FIX::SessionID&) override { logged_on = false; }
  void toAdmin(FIX::Message&, const FIX::SessionID&) override {}
  void toApp(FIX::Message&, const FIX::SessionID&) throw(FIX::DoNotSend) override {}
  void fromAdmin(const FIX::Message&, const FIX::SessionID&) throw(
      FIX::FieldNotFound, FIX::IncorrectDataFormat, FIX::IncorrectTagValue, FIX::RejectLogon) override {}
  void fromApp(const FIX::Message& message, const FIX::SessionID&) throw(
      FIX::FieldNotFound, FIX::IncorrectDataFormat, FIX::IncorrectTagValue, FIX::UnsupportedMessageType) override {
    FIX::MsgType type;
    message.getHeader().getField(type);
    if (type.getValue() != "8") return;
    const std::string& id = message.getField(11);
    const std::uint64_t index = std::strtoull(id.c_str(), nullptr, 10);
    if (this_poll == 0) first_index = index;
    ++this_poll;
  }

  bool logged_on = false;
  std::uint32_t this_poll = 0;
  std::uint64_t first_index = 0;
};

// QuickFIX parses FIX50SP2.xml in seconds; a SocketInitiator loads it again
// for every run. The dictionaries are loaded once per process instead and
// handed to each session (the same validation as UseDataDictionary=Y with
// the default Validate* settings).
struct Dictionaries {
  std::string spec_dir;
  ptr::shared_ptr<FIX::DataDictionary> transport;
  ptr::shared_ptr<FIX::DataDictionary> app;
};

const Dictionaries& dictionaries(const std::string& spec_dir) {
  static Dictionaries cached;
  if (!cached.transport || cached.spec_dir != spec_dir) {
    cached.transport.reset(new FIX::DataDictionary(spec_dir + "/FIXT11.xml"));
    cached.app.reset(new FIX::DataDictionary(spec_dir + "/FIX50SP2.xml"));
    cached.spec_dir = spec_dir;
  }
  return cached;
}

std::string config_text(const QfSettings& s) {
  std::ostringstream t;
  t << "[DEFAULT]\n"
    << "ConnectionType=initiator\nReconnectInterval=1\nHeartBtInt=30\n"
    << "StartTime=00:00:00\nEndTime=00:00:00\nNonStopSession=Y\n"
    << "SocketConnectHost=" << s.host << "\nSocketConnectPort=" << s.port << "\nSocketNodelay=Y\n"
    << "FileStorePath=" << s.store_dir << "\nPersistMessages=Y\nResetOnLogon=Y\n"
    << "UseDataDictionary=N\nDefaultApplVerID=FIX.5.0SP2\n"
    << "MillisecondsInTimeStamp=Y\n";
  if (!s.tls_ca.empty()) {
    t << "CertificationAuthoritiesFile=" << s.tls_ca << "\nClientCertificateFile=" << s.tls_cert
      << "\nClientCertificateKeyFile=" << s.tls_key << "\nSSLProtocol=all -SSLv2 -SSLv3 -TLSv1 -TLSv1_1\n";
  }
  t << "[SESSION]\nBeginString=FIXT.1.1\nSenderCompID=" << s.sender << "\nTargetCompID=" << s.target << "\n";
  return t.str();
}

class Client final : public QfClient {
 public:
  explicit Client(const QfSettings& s) : settings_(s), session_id_("FIXT.1.1", s.sender, s.target) {}

  bool init(std::string& error) {
    try {
      const Dictionaries& dicts = dictionaries(settings_.spec_dir);
      provider_.addTransportDataDictionary(FIX::BeginString("FIXT.1.1"), dicts.transport);
      provider_.addApplicationDataDictionary(FIX::Message::toApplVerID(FIX::BeginString("FIX.5.0SP2")), dicts.app);
      ::mkdir(settings_.store_dir.c_str(), 0755);
      std::istringstream in(config_text(settings_));
      session_settings_.reset(new FIX::SessionSettings(in));
      store_factory_.reset(new FIX::FileStoreFactory(*session_settings_));
      if (settings_.tls_ca.empty()) {
        initiator_.reset(new FIX::SocketInitiator(callbacks_, *store_factory_, *session_settings_));
      } else {
        initiator_.reset(new FIX::SSLSocketInitiator(callbacks_, *store_factory_, *session_settings_));
      }
    } catch (const std::exception& e) {
      error = std::string("QuickFIX configuration: ") + e.what();
      return false;
    }
    // The reference order, built once; each call sets ClOrdID and TransactTime.
    order_.getHeader().setField(FIX::SenderSubID(settings_.sender_sub));
    order_.getHeader().setField(FIX::TargetSubID(settings_.target_sub));
    order_.set(FIX::ClOrdID("0"));
    order_.set(FIX::Symbol("NOKIA.HE"));
    order_.set(FIX::Side(FIX::Side_BUY));
    order_.set(FIX::OrderQty(10));
    order_.set(FIX::Price(10000));
    order_.set(FIX::OrdType(FIX::OrdType_LIMIT));
    order_.set(FIX::TimeInForce(FIX::TimeInForce_DAY));
    FIX50SP2::NewOrderSingle::NoPartyIDs party;
    party.set(FIX::PartyID("PARTY1"));
    party.set(FIX::PartyIDSource('D'));
    party.set(FIX::PartyRole(1));
    order_.addGroup(party);
    party.set(FIX::PartyID("PARTY2"));
    party.set(FIX::PartyRole(3));
    order_.addGroup(party);
    order_.set(FIX::TransactTime(3));
    return true;
  }

  bool start(std::string& error, int timeout_ms) override {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    try {
      // The session exists once the initiator is initialised: give it the
      // dictionaries before the first byte arrives.
      session_ = FIX::Session::lookupSession(session_id_);
      if (session_ == nullptr) {
        initiator_->poll(0.0);
        session_ = FIX::Session::lookupSession(session_id_);
      }
      if (session_ == nullptr) {
        error = "QuickFIX: session " + session_id_.toString() + " was not created";
        return false;
      }
      session_->setDataDictionaryProvider(provider_);
      while (!callbacks_.logged_on) {
        initiator_->poll(0.0);
        if (std::chrono::steady_clock::now() > deadline) {
          error = "QuickFIX: no Logon answer within " + std::to_string(timeout_ms) + " ms";
          return false;
        }
        if (!callbacks_.logged_on) std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
    } catch (const std::exception& e) {
      error = std::string("QuickFIX: ") + e.what();
      return false;
    }
    return session_ != nullptr;
  }

  bool send_new_order(std::uint64_t i) noexcept override {
    try {
      order_.set(FIX::ClOrdID(std::to_string(i)));
      order_.set(FIX::TransactTime(3));
      if (!FIX::Session::sendToTarget(order_, session_id_)) return false;
      return true;
    } catch (...) {
      ++exceptions_;
      return false;
    }
  }

  std::uint32_t poll(std::uint64_t& first_index) noexcept override {
    callbacks_.this_poll = 0;
    try {
      initiator_->poll(0.0);
    } catch (...) {
      ++exceptions_;
    }
    if (callbacks_.this_poll != 0) first_index = callbacks_.first_index;
    return callbacks_.this_poll;
  }

  std::size_t last_order_size() const noexcept override {
    // The order as last serialised (header filled by the send).
    try {
      return order_.toString().size();
    } catch (...) {
      return 0;
    }
  }

  bool stop(std::string& error) override {
    try {
      if (session_ != nullptr && session_->isLoggedOn()) {
        session_->logout();
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
        while (session_->isLoggedOn() && std::chrono::steady_clock::now() < deadline) {
          initiator_->poll(0.0);
          std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
      }
      // In poll mode nobody else drives the sockets: force, do not wait.
      initiator_->stop(true);
      initiator_.reset();
    } catch (const std::exception& e) {
      error = std::string("QuickFIX stop: ") + e.what();
      return false;
    }
    return true;
  }

  std::string version() const override {
    return std::string("QuickFIX 1.15.1 (Debian libquickfix), ") +
           (settings_.tls_ca.empty() ? "SocketInitiator" : "SSLSocketInitiator (TLS)") +
           " polled by the lane thread, FileStore";
  }

  std::uint64_t exceptions() const noexcept override { return exceptions_; }

 private:
  QfSettings settings_;
  FIX::SessionID session_id_;
  Callbacks callbacks_;
  std::unique_ptr<FIX::SessionSettings> session_settings_;
  std::unique_ptr<FIX::FileStoreFactory> store_factory_;
  std::unique_ptr<FIX::Initiator> initiator_;  // SocketInitiator, or SSLSocketInitiator for TLS
  FIX::Session* session_ = nullptr;
  FIX::DataDictionaryProvider provider_;
  mutable FIX50SP2::NewOrderSingle order_;
  std::uint64_t exceptions_ = 0;
};

}  // namespace

std::unique_ptr<QfClient> make_qf_client(const QfSettings& settings, std::string& error) {
  std::unique_ptr<Client> c(new Client(settings));
  if (!c->init(error)) return nullptr;
  return std::unique_ptr<QfClient>(c.release());
}

}  // namespace hft_bench_qf
