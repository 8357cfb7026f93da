// QuickFIX applications behind qf-peer's three modes.
#pragma once

#include <quickfix/Application.h>
#include <quickfix/Message.h>
#include <quickfix/SessionID.h>

#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <string>

namespace qf_peer {

/// The application the conformance scripts expect behind the acceptor:
/// NewOrderSingle echoed back (a PossResend order whose ClOrdID this session
/// already saw is dropped; the seen-set is cleared at logout),
/// SecurityDefinition and Email echoed, any other application message
/// answered with a BusinessMessageReject (by QuickFIX, from
/// UnsupportedMessageType).
class EchoApplication : public FIX::Application {
 public:
  void onCreate(const FIX::SessionID&) override {}
  void onLogon(const FIX::SessionID&) override {}
  void onLogout(const FIX::SessionID& session) override;
  void toAdmin(FIX::Message&, const FIX::SessionID&) override {}
  void toApp(FIX::Message&, const FIX::SessionID&) throw(FIX::DoNotSend) override {}
  void fromAdmin(const FIX::Message& message, const FIX::SessionID& session) throw(
      FIX::FieldNotFound, FIX::IncorrectDataFormat, FIX::IncorrectTagValue, FIX::RejectLogon) override;
  void fromApp(const FIX::Message& message, const FIX::SessionID& session) throw(
      FIX::FieldNotFound, FIX::IncorrectDataFormat, FIX::IncorrectTagValue, FIX::UnsupportedMessageType) override;

 private:
  std::mutex mutex_;
  std::map<FIX::SessionID, std::set<std::string>> seen_cl_ord_ids_;
};

/// Order-flow venue: every NewOrderSingle gets an ExecutionReport New, then
/// an ExecutionReport Fill for the whole quantity. Other application
/// messages get a BusinessMessageReject.
class VenueApplication : public FIX::Application {
 public:
  explicit VenueApplication(bool verbose) : verbose_(verbose) {}
  void onCreate(const FIX::SessionID&) override {}
  void onLogon(const FIX::SessionID& session) override;
  void onLogout(const FIX::SessionID& session) override;
  void toAdmin(FIX::Message&, const FIX::SessionID&) override {}
  void toApp(FIX::Message&, const FIX::SessionID&) throw(FIX::DoNotSend) override {}
  void fromAdmin(const FIX::Message& message, const FIX::SessionID& session) throw(
      FIX::FieldNotFound, FIX::IncorrectDataFormat, FIX::IncorrectTagValue, FIX::RejectLogon) override;
  void fromApp(const FIX::Message& message, const FIX::SessionID& session) throw(
      FIX::FieldNotFound, FIX::IncorrectDataFormat, FIX::IncorrectTagValue, FIX::UnsupportedMessageType) override;

 private:
  bool verbose_;
  std::mutex mutex_;
  long next_id_ = 0;
};

/// Counts of what the trader received, by distinct ClOrdID where it matters.
struct TraderCounts {
  long execution_reports = 0;
  long acked = 0;     ///< orders with an ExecutionReport ExecType New
  long filled = 0;    ///< orders with an ExecutionReport ExecType Trade/Fill
  long rejected = 0;  ///< orders with an ExecutionReport ExecType Rejected
  long session_rejects = 0;   ///< Reject (35=3) received
  long business_rejects = 0;  ///< BusinessMessageReject (35=j) received
};

/// Order-flow trader: the caller waits for logon, sends orders and waits
/// for the counts it needs.
class TraderApplication : public FIX::Application {
 public:
  void onCreate(const FIX::SessionID&) override {}
  void onLogon(const FIX::SessionID& session) override;
  void onLogout(const FIX::SessionID& session) override;
  void toAdmin(FIX::Message&, const FIX::SessionID&) override {}
  void toApp(FIX::Message&, const FIX::SessionID&) throw(FIX::DoNotSend) override {}
  void fromAdmin(const FIX::Message& message, const FIX::SessionID& session) throw(
      FIX::FieldNotFound, FIX::IncorrectDataFormat, FIX::IncorrectTagValue, FIX::RejectLogon) override;
  void fromApp(const FIX::Message& message, const FIX::SessionID& session) throw(
      FIX::FieldNotFound, FIX::IncorrectDataFormat, FIX::IncorrectTagValue, FIX::UnsupportedMessageType) override;

  /// Waits up to `timeout_ms` for a logon; returns the session, or false.
  bool wait_logon(int timeout_ms, FIX::SessionID& session);
  /// Waits up to `timeout_ms` until `done(counts)` holds; returns whether it did.
  template <typename Pred>
  bool wait_for(int timeout_ms, Pred done) {
    std::unique_lock<std::mutex> lock(mutex_);
    return changed_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] { return done(counts_); });
  }
  TraderCounts counts();

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool logged_on_ = false;
  FIX::SessionID session_;
  TraderCounts counts_;
  std::set<std::string> acked_;
  std::set<std::string> filled_;
  std::set<std::string> rejected_;
};

/// A NewOrderSingle for this session's FIX version (FIX.4.x or FIXT.1.1).
FIX::Message make_new_order_single(const std::string& cl_ord_id, const std::string& symbol, int quantity,
                                   double price);

}  // namespace qf_peer
