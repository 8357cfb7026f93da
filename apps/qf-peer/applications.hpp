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
/// SecurityDefinition and Email echoed, a News with Headline "LOGOUT" makes
/// the session log out (the initiator-side suite's trigger), any other
/// application message answered with a BusinessMessageReject (by QuickFIX,
/// from UnsupportedMessageType).
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

/// What the order-flow venue received (all sessions together).
struct VenueCounts {
  long orders = 0;               ///< NewOrderSingles answered
  long possdup_orders = 0;       ///< of which PossDupFlag=Y (resent after a gap) and new to us
  long possdup_repeats = 0;      ///< PossDupFlag=Y orders whose ClOrdID was already answered (dropped)
  long duplicate_orders = 0;     ///< PossDupFlag=N orders whose ClOrdID was already answered (a bug upstream)
  long logons = 0;
  long logouts = 0;              ///< sessions ended (Logout or disconnect)
  long heartbeats_received = 0;
  long test_requests_received = 0;
  long resend_requests_received = 0;
  long sequence_resets_received = 0;
  long session_rejects_received = 0;
};

/// Order-flow venue: every NewOrderSingle gets an ExecutionReport New, then
/// an ExecutionReport Fill for the whole quantity. Other application
/// messages get a BusinessMessageReject. ClOrdIDs are remembered for the
/// life of the process, so a PossDup order seen before is not answered twice
/// and a non-PossDup repeat is counted as a duplicate.
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

  VenueCounts counts();

 private:
  bool verbose_;
  std::mutex mutex_;
  long next_id_ = 0;
  VenueCounts counts_;
  std::set<std::string> seen_cl_ord_ids_;
};

/// Counts of what the trader received, by distinct ClOrdID where it matters.
/// An ExecutionReport of a kind (New, Fill, Rejected) already seen for its
/// ClOrdID is a PossDup repeat when it carries PossDupFlag=Y (a resend,
/// legitimate) and a duplicate otherwise (lost sequencing: a failure).
struct TraderCounts {
  long execution_reports = 0;
  long acked = 0;     ///< orders with an ExecutionReport ExecType New
  long filled = 0;    ///< orders with an ExecutionReport ExecType Trade/Fill
  long rejected = 0;  ///< orders with an ExecutionReport ExecType Rejected
  long duplicates = 0;       ///< repeated reports without PossDupFlag=Y
  long possdup_received = 0; ///< application messages with PossDupFlag=Y
  long possdup_repeats = 0;  ///< PossDup reports for what was already counted
  long unknown_orders = 0;   ///< reports for ClOrdIDs this run did not send
  long session_rejects = 0;   ///< Reject (35=3) received
  long business_rejects = 0;  ///< BusinessMessageReject (35=j) received
  long logons = 0;            ///< onLogon callbacks (1 + reconnects)
  long logouts = 0;           ///< onLogout callbacks (Logout or disconnect)
  long logouts_received = 0;  ///< Logout (35=5) messages received
  long heartbeats_received = 0;
  long test_requests_received = 0;
  long resend_requests_received = 0;
  long sequence_resets_received = 0;  ///< SequenceReset (35=4), gap fill or reset
  long reset_logons_received = 0;     ///< Logons with ResetSeqNumFlag=Y
  long last_logon_seq = 0;            ///< MsgSeqNum of the last Logon received
};

/// Order-flow trader: the caller waits for logon, sends orders and waits
/// for the counts it needs. Only ClOrdIDs starting with the prefix given
/// to the constructor are this run's orders.
class TraderApplication : public FIX::Application {
 public:
  explicit TraderApplication(std::string cl_ord_id_prefix = {}) : prefix_(std::move(cl_ord_id_prefix)) {}
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
  bool logged_on();

 private:
  struct OrderState {
    bool acked = false;
    bool filled = false;
    bool rejected = false;
  };
  std::string prefix_;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool logged_on_ = false;
  FIX::SessionID session_;
  TraderCounts counts_;
  std::map<std::string, OrderState> orders_;
};

/// A NewOrderSingle for this session's FIX version (FIX.4.x or FIXT.1.1).
FIX::Message make_new_order_single(const std::string& cl_ord_id, const std::string& symbol, int quantity,
                                   double price);

}  // namespace qf_peer
