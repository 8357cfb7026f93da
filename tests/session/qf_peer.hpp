// A QuickFIX 1.15 peer for the interoperability test, behind an interface
// that does not include QuickFIX headers (they need C++14; the peer is built
// as a separate C++14 library). The peer answers every NewOrderSingle with an
// ExecutionReport and counts what it receives.
#pragma once

#include <memory>
#include <string>

namespace qf_interop {

struct PeerOptions {
  bool initiator = true;
  std::string begin_string = "FIX.4.4";
  std::string sender_comp_id = "QF";
  std::string target_comp_id = "HFT";
  int port = 0;
  int heart_bt_int = 1;
  std::string dictionary;      ///< DataDictionary, or TransportDataDictionary for FIXT.1.1
  std::string app_dictionary;  ///< AppDataDictionary (FIXT.1.1)
  std::string default_appl_ver_id;  ///< FIXT.1.1: "FIX.5.0SP2", ...
  bool reset_on_logon = true;
  std::string log_directory;   ///< empty: no QuickFIX log
};

class Peer {
 public:
  explicit Peer(PeerOptions options);
  ~Peer();
  Peer(const Peer&) = delete;
  Peer& operator=(const Peer&) = delete;

  /// Starts the QuickFIX initiator or acceptor. False with `error` set on failure.
  bool start(std::string& error);
  void stop();

  bool logged_on() const;
  /// Sends a NewOrderSingle with ClOrdID `id`.
  bool send_order(const std::string& id);
  /// Starts a Logout.
  void logout();
  /// Moves QuickFIX's next outgoing MsgSeqNum forward by `n` (creates a gap).
  void skip_sequence(int n);

  int logons() const;
  int logouts() const;
  int orders_received() const;      ///< NewOrderSingle (each answered with an ExecutionReport)
  int execution_reports() const;    ///< ExecutionReports received
  int session_rejects() const;      ///< Reject (35=3) received
  int business_rejects() const;     ///< BusinessMessageReject (35=j) received
  int resend_requests() const;      ///< ResendRequest (35=2) received
  int sequence_resets() const;      ///< SequenceReset (35=4) received
  int expected_target_seq() const;  ///< QuickFIX's next expected incoming MsgSeqNum
  int next_sender_seq() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace qf_interop
