// C++14: QuickFIX 1.15 headers use dynamic exception specifications.
#include "qf_peer.hpp"

#include <quickfix/Application.h>
#include <quickfix/FileLog.h>
#include <quickfix/Message.h>
#include <quickfix/MessageStore.h>
#include <quickfix/Session.h>
#include <quickfix/SessionSettings.h>
#include <quickfix/ThreadedSocketAcceptor.h>
#include <quickfix/ThreadedSocketInitiator.h>
#include <quickfix/Values.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

namespace qf_interop {

namespace {

class CountingApp : public FIX::Application {
 public:
  std::atomic<int> logons{0}, logouts{0}, orders{0}, reports{0}, rejects{0}, business_rejects{0},
      resend_requests{0}, sequence_resets{0};
  std::atomic<bool> logged_on{false};
  std::atomic<int> exec_id{0};

  void onCreate(const FIX::SessionID&) override {}
  void onLogon(const FIX::SessionID&) override {
    ++logons;
    logged_on = true;
  }
  void onLogout(const FIX::SessionID&) override {
    ++logouts;
    logged_on = false;
  }
  void toAdmin(FIX::Message&, const FIX::SessionID&) override {}
  void toApp(FIX::Message&, const FIX::SessionID&) throw(FIX::DoNotSend) override {}
  void fromAdmin(const FIX::Message& m, const FIX::SessionID&) throw(
      FIX::FieldNotFound, FIX::IncorrectDataFormat, FIX::IncorrectTagValue, FIX::RejectLogon) override {
    const std::string type = m.getHeader().getField(FIX::FIELD::MsgType);
    if (type == "3") ++rejects;
    if (type == "2") ++resend_requests;
    if (type == "4") ++sequence_resets;
  }
  void fromApp(const FIX::Message& m, const FIX::SessionID& id) throw(
      FIX::FieldNotFound, FIX::IncorrectDataFormat, FIX::IncorrectTagValue, FIX::UnsupportedMessageType) override {
    const std::string type = m.getHeader().getField(FIX::FIELD::MsgType);
    if (type == "D") {
      ++orders;
      FIX::Message er;
      er.getHeader().setField(FIX::MsgType("8"));
      er.setField(37, "O" + m.getField(11));
      er.setField(17, "E" + std::to_string(++exec_id));
      if (id.getBeginString() == "FIX.4.2") er.setField(20, "0");
      er.setField(150, "0");
      er.setField(39, "0");
      er.setField(11, m.getField(11));
      er.setField(55, m.getField(55));
      er.setField(54, m.getField(54));
      er.setField(151, "100");
      er.setField(14, "0");
      er.setField(6, "0");
      FIX::Session::sendToTarget(er, id);
      return;
    }
    if (type == "8") {
      ++reports;
      return;
    }
    if (type == "j") {
      ++business_rejects;
      return;
    }
    throw FIX::UnsupportedMessageType();
  }
};

}  // namespace

struct Peer::Impl {
  PeerOptions options;
  CountingApp app;
  FIX::MemoryStoreFactory store_factory;
  std::unique_ptr<FIX::FileLogFactory> log_factory;
  std::unique_ptr<FIX::SessionSettings> settings;
  std::unique_ptr<FIX::Initiator> initiator;
  std::unique_ptr<FIX::Acceptor> acceptor;
  FIX::SessionID id;

  FIX::Session* session() const { return FIX::Session::lookupSession(id); }
};

Peer::Peer(PeerOptions options) : impl_(new Impl) { impl_->options = std::move(options); }

Peer::~Peer() { stop(); }

bool Peer::start(std::string& error) {
  Impl& d = *impl_;
  const PeerOptions& o = d.options;
  try {
    d.id = FIX::SessionID(o.begin_string, o.sender_comp_id, o.target_comp_id);
    FIX::Dictionary defaults;
    defaults.setString("ConnectionType", o.initiator ? "initiator" : "acceptor");
    defaults.setString("StartTime", "00:00:00");
    defaults.setString("EndTime", "00:00:00");
    defaults.setString("ReconnectInterval", "1");
    defaults.setString("ResetOnLogon", o.reset_on_logon ? "Y" : "N");
    defaults.setString("UseDataDictionary", "Y");
    if (o.begin_string == "FIXT.1.1") {
      defaults.setString("TransportDataDictionary", o.dictionary);
      defaults.setString("AppDataDictionary", o.app_dictionary);
      defaults.setString("DefaultApplVerID", o.default_appl_ver_id);
    } else {
      defaults.setString("DataDictionary", o.dictionary);
    }
    if (o.initiator) {
      defaults.setString("SocketConnectHost", "127.0.0.1");
      defaults.setInt("SocketConnectPort", o.port);
      defaults.setInt("HeartBtInt", o.heart_bt_int);
    } else {
      defaults.setInt("SocketAcceptPort", o.port);
    }
    FIX::Dictionary session;
    session.setString("BeginString", o.begin_string);
    session.setString("SenderCompID", o.sender_comp_id);
    session.setString("TargetCompID", o.target_comp_id);
    d.settings.reset(new FIX::SessionSettings());
    d.settings->set(defaults);
    d.settings->set(d.id, session);
    if (!o.log_directory.empty()) d.log_factory.reset(new FIX::FileLogFactory(o.log_directory));
    if (o.initiator) {
      if (d.log_factory) {
        d.initiator.reset(new FIX::ThreadedSocketInitiator(d.app, d.store_factory, *d.settings, *d.log_factory));
      } else {
        d.initiator.reset(new FIX::ThreadedSocketInitiator(d.app, d.store_factory, *d.settings));
      }
      d.initiator->start();
    } else {
      if (d.log_factory) {
        d.acceptor.reset(new FIX::ThreadedSocketAcceptor(d.app, d.store_factory, *d.settings, *d.log_factory));
      } else {
        d.acceptor.reset(new FIX::ThreadedSocketAcceptor(d.app, d.store_factory, *d.settings));
      }
      d.acceptor->start();
    }
    return true;
  } catch (const std::exception& e) {
    error = e.what();
    return false;
  }
}

void Peer::stop() {
  Impl& d = *impl_;
  // QuickFIX's acceptor thread sits in accept(), which closing the listening
  // socket does not interrupt on Linux: poke it with connections until stop
  // returns.
  std::atomic<bool> stopping{d.acceptor != nullptr};
  std::thread poker([&] {
    while (stopping) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      a.sin_port = htons(static_cast<unsigned short>(d.options.port));
      (void)::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
      ::close(fd);
    }
  });
  try {
    if (d.initiator) d.initiator->stop(true);
    if (d.acceptor) d.acceptor->stop(true);
  } catch (...) {
  }
  stopping = false;
  poker.join();
  d.initiator.reset();
  d.acceptor.reset();
}

bool Peer::logged_on() const { return impl_->app.logged_on; }

bool Peer::send_order(const std::string& id) {
  FIX::Message m;
  m.getHeader().setField(FIX::MsgType("D"));
  m.setField(11, id);
  m.setField(21, "1");
  m.setField(55, "IBM");
  m.setField(54, "1");
  m.setField(FIX::TransactTime());
  m.setField(38, "100");
  m.setField(40, "1");
  try {
    return FIX::Session::sendToTarget(m, impl_->id);
  } catch (...) {
    return false;
  }
}

void Peer::logout() {
  if (FIX::Session* s = impl_->session()) s->logout("interop done");
}

void Peer::skip_sequence(int n) {
  if (FIX::Session* s = impl_->session()) s->setNextSenderMsgSeqNum(s->getExpectedSenderNum() + n);
}

int Peer::logons() const { return impl_->app.logons; }
int Peer::logouts() const { return impl_->app.logouts; }
int Peer::orders_received() const { return impl_->app.orders; }
int Peer::execution_reports() const { return impl_->app.reports; }
int Peer::session_rejects() const { return impl_->app.rejects; }
int Peer::business_rejects() const { return impl_->app.business_rejects; }
int Peer::resend_requests() const { return impl_->app.resend_requests; }
int Peer::sequence_resets() const { return impl_->app.sequence_resets; }
int Peer::expected_target_seq() const {
  FIX::Session* s = impl_->session();
  return s ? s->getExpectedTargetNum() : 0;
}
int Peer::next_sender_seq() const {
  FIX::Session* s = impl_->session();
  return s ? s->getExpectedSenderNum() : 0;
}

}  // namespace qf_interop
