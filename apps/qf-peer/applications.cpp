#include "applications.hpp"

#include <quickfix/Session.h>
#include <quickfix/Values.h>

#include <iostream>

namespace qf_peer {
namespace {

std::string msg_type(const FIX::Message& message) {
  FIX::MsgType type;
  message.getHeader().getField(type);
  return type.getValue();
}

void adopt_default_appl_ver_id(const FIX::Message& message, const FIX::SessionID& session) {
  if (msg_type(message) != FIX::MsgType_Logon) return;
  FIX::DefaultApplVerID default_appl_ver_id;
  if (!message.isSetField(default_appl_ver_id)) return;
  message.getField(default_appl_ver_id);
  if (FIX::Session* s = FIX::Session::lookupSession(session)) {
    s->setSenderDefaultApplVerID(default_appl_ver_id);
  }
}

bool poss_dup(const FIX::Message& message) {
  FIX::PossDupFlag flag(false);
  message.getHeader().getFieldIfSet(flag);
  return flag.getValue();
}

// Session-level messages a peer counts: heartbeats, test requests, resend
// requests, sequence resets, rejects. Returns the counter for `type`, or null.
template <typename Counts>
long* admin_counter(Counts& c, const std::string& type) {
  if (type == FIX::MsgType_Heartbeat) return &c.heartbeats_received;
  if (type == FIX::MsgType_TestRequest) return &c.test_requests_received;
  if (type == FIX::MsgType_ResendRequest) return &c.resend_requests_received;
  if (type == FIX::MsgType_SequenceReset) return &c.sequence_resets_received;
  return nullptr;
}

// Before FIX 4.3 a fill is ExecType 2 and ExecutionReport needs ExecTransType.
bool is_pre_fix43(const FIX::SessionID& session) {
  const std::string& begin = session.getBeginString().getValue();
  return begin == "FIX.4.0" || begin == "FIX.4.1" || begin == "FIX.4.2";
}

}  // namespace

// ---- EchoApplication ------------------------------------------------------

void EchoApplication::onLogout(const FIX::SessionID& session) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    seen_cl_ord_ids_.erase(session);
  }
  // A Logout asked for by the LOGOUT News disables the session; the
  // initiator-side suite's next script needs it to connect again.
  if (FIX::Session* s = FIX::Session::lookupSession(session)) s->logon();
}

void EchoApplication::fromAdmin(const FIX::Message& message, const FIX::SessionID& session) throw(
    FIX::FieldNotFound, FIX::IncorrectDataFormat, FIX::IncorrectTagValue, FIX::RejectLogon) {
  adopt_default_appl_ver_id(message, session);
}

void EchoApplication::fromApp(const FIX::Message& message, const FIX::SessionID& session) throw(
    FIX::FieldNotFound, FIX::IncorrectDataFormat, FIX::IncorrectTagValue, FIX::UnsupportedMessageType) {
  const std::string type = msg_type(message);
  if (type == FIX::MsgType_NewOrderSingle) {
    FIX::PossResend poss_resend(false);
    message.getHeader().getFieldIfSet(poss_resend);
    FIX::ClOrdID cl_ord_id;
    message.getField(cl_ord_id);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      std::set<std::string>& seen = seen_cl_ord_ids_[session];
      if (poss_resend.getValue() && seen.count(cl_ord_id.getValue()) != 0) return;
      seen.insert(cl_ord_id.getValue());
    }
  } else if (type == FIX::MsgType_News) {
    // The initiator-side suite's trigger for a Logout from the engine side.
    FIX::Headline headline;
    if (message.getFieldIfSet(headline) && headline.getValue() == "LOGOUT") {
      if (FIX::Session* s = FIX::Session::lookupSession(session)) s->logout();
      return;
    }
    throw FIX::UnsupportedMessageType();
  } else if (type != FIX::MsgType_SecurityDefinition && type != FIX::MsgType_Email) {
    throw FIX::UnsupportedMessageType();
  }
  FIX::Message echo = message;
  FIX::Session::sendToTarget(echo, session);
}

// ---- VenueApplication -----------------------------------------------------

void VenueApplication::onLogon(const FIX::SessionID& session) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++counts_.logons;
  }
  if (verbose_) std::cout << "qf-peer: logon " << session.toString() << std::endl;
}

void VenueApplication::onLogout(const FIX::SessionID& session) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++counts_.logouts;
  }
  if (verbose_) std::cout << "qf-peer: logout " << session.toString() << std::endl;
}

void VenueApplication::fromAdmin(const FIX::Message& message, const FIX::SessionID& session) throw(
    FIX::FieldNotFound, FIX::IncorrectDataFormat, FIX::IncorrectTagValue, FIX::RejectLogon) {
  adopt_default_appl_ver_id(message, session);
  const std::string type = msg_type(message);
  std::lock_guard<std::mutex> lock(mutex_);
  if (long* counter = admin_counter(counts_, type)) ++*counter;
  if (type == FIX::MsgType_Reject) ++counts_.session_rejects_received;
}

VenueCounts VenueApplication::counts() {
  std::lock_guard<std::mutex> lock(mutex_);
  return counts_;
}

void VenueApplication::fromApp(const FIX::Message& message, const FIX::SessionID& session) throw(
    FIX::FieldNotFound, FIX::IncorrectDataFormat, FIX::IncorrectTagValue, FIX::UnsupportedMessageType) {
  if (msg_type(message) != FIX::MsgType_NewOrderSingle) throw FIX::UnsupportedMessageType();

  FIX::ClOrdID cl_ord_id;
  FIX::Side side;
  FIX::OrderQty quantity;
  message.getField(cl_ord_id);
  message.getField(side);
  message.getField(quantity);
  FIX::Symbol symbol("N/A");
  message.getFieldIfSet(symbol);
  FIX::Price price(100.0);
  message.getFieldIfSet(price);

  const bool resent = poss_dup(message);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const bool seen = !seen_cl_ord_ids_.insert(cl_ord_id.getValue()).second;
    if (seen && resent) {
      ++counts_.possdup_repeats;
      return;
    }
    if (seen) ++counts_.duplicate_orders;
    if (resent) ++counts_.possdup_orders;
    ++counts_.orders;
  }

  long id = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    id = ++next_id_;
  }
  const bool old = is_pre_fix43(session);
  const std::string order_id = "O" + std::to_string(id);

  auto report = [&](char exec_type, char ord_status, double leaves, double cum, double avg_px,
                    const std::string& exec_id) {
    FIX::Message er;
    er.getHeader().setField(FIX::MsgType(FIX::MsgType_ExecutionReport));
    er.setField(FIX::OrderID(order_id));
    er.setField(FIX::ExecID(exec_id));
    if (old) er.setField(FIX::ExecTransType(FIX::ExecTransType_NEW));
    er.setField(FIX::ExecType(exec_type));
    er.setField(FIX::OrdStatus(ord_status));
    er.setField(cl_ord_id);
    er.setField(symbol);
    er.setField(side);
    er.setField(quantity);
    er.setField(FIX::LeavesQty(leaves));
    er.setField(FIX::CumQty(cum));
    er.setField(FIX::AvgPx(avg_px));
    if (cum > 0) {
      er.setField(FIX::LastQty(cum));
      er.setField(FIX::LastPx(price.getValue()));
    }
    FIX::Session::sendToTarget(er, session);
  };
  const double qty = quantity.getValue();
  report(FIX::ExecType_NEW, FIX::OrdStatus_NEW, qty, 0, 0, order_id + "-0");
  report(old ? FIX::ExecType_FILL : FIX::ExecType_TRADE, FIX::OrdStatus_FILLED, 0, qty, price.getValue(),
         order_id + "-1");
}

// ---- TraderApplication ----------------------------------------------------

void TraderApplication::onLogon(const FIX::SessionID& session) {
  std::lock_guard<std::mutex> lock(mutex_);
  logged_on_ = true;
  session_ = session;
  ++counts_.logons;
  changed_.notify_all();
}

void TraderApplication::onLogout(const FIX::SessionID&) {
  std::lock_guard<std::mutex> lock(mutex_);
  logged_on_ = false;
  ++counts_.logouts;
  changed_.notify_all();
}

void TraderApplication::fromAdmin(const FIX::Message& message, const FIX::SessionID&) throw(
    FIX::FieldNotFound, FIX::IncorrectDataFormat, FIX::IncorrectTagValue, FIX::RejectLogon) {
  const std::string type = msg_type(message);
  std::lock_guard<std::mutex> lock(mutex_);
  if (long* counter = admin_counter(counts_, type)) ++*counter;
  if (type == FIX::MsgType_Reject) {
    ++counts_.session_rejects;
  } else if (type == FIX::MsgType_Logout) {
    ++counts_.logouts_received;
  } else if (type == FIX::MsgType_Logon) {
    FIX::MsgSeqNum seq;
    message.getHeader().getFieldIfSet(seq);
    counts_.last_logon_seq = seq.getValue();
    FIX::ResetSeqNumFlag reset(false);
    message.getFieldIfSet(reset);
    if (reset.getValue()) ++counts_.reset_logons_received;
  }
  changed_.notify_all();
}

void TraderApplication::fromApp(const FIX::Message& message, const FIX::SessionID&) throw(
    FIX::FieldNotFound, FIX::IncorrectDataFormat, FIX::IncorrectTagValue, FIX::UnsupportedMessageType) {
  const std::string type = msg_type(message);
  const bool resent = poss_dup(message);
  std::lock_guard<std::mutex> lock(mutex_);
  if (resent) ++counts_.possdup_received;
  if (type == FIX::MsgType_BusinessMessageReject) {
    ++counts_.business_rejects;
  } else if (type == FIX::MsgType_ExecutionReport) {
    ++counts_.execution_reports;
    FIX::ClOrdID cl_ord_id;
    FIX::ExecType exec_type;
    message.getFieldIfSet(cl_ord_id);
    message.getFieldIfSet(exec_type);
    const std::string& id = cl_ord_id.getValue();
    if (id.compare(0, prefix_.size(), prefix_) != 0) {
      ++counts_.unknown_orders;
    } else {
      OrderState& order = orders_[id];
      bool* seen = nullptr;
      long* distinct = nullptr;
      switch (exec_type.getValue()) {
        case FIX::ExecType_NEW:
          seen = &order.acked;
          distinct = &counts_.acked;
          break;
        case FIX::ExecType_TRADE:
        case FIX::ExecType_FILL:
          seen = &order.filled;
          distinct = &counts_.filled;
          break;
        case FIX::ExecType_REJECTED:
          seen = &order.rejected;
          distinct = &counts_.rejected;
          break;
        default:
          break;
      }
      if (seen != nullptr && *seen) {
        ++(resent ? counts_.possdup_repeats : counts_.duplicates);
      } else if (seen != nullptr) {
        *seen = true;
        ++*distinct;
      }
    }
  } else {
    throw FIX::UnsupportedMessageType();
  }
  changed_.notify_all();
}

bool TraderApplication::wait_logon(int timeout_ms, FIX::SessionID& session) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!changed_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] { return logged_on_; })) return false;
  session = session_;
  return true;
}

TraderCounts TraderApplication::counts() {
  std::lock_guard<std::mutex> lock(mutex_);
  return counts_;
}

bool TraderApplication::logged_on() {
  std::lock_guard<std::mutex> lock(mutex_);
  return logged_on_;
}

FIX::Message make_new_order_single(const std::string& cl_ord_id, const std::string& symbol, int quantity,
                                   double price) {
  FIX::Message order;
  order.getHeader().setField(FIX::MsgType(FIX::MsgType_NewOrderSingle));
  order.setField(FIX::ClOrdID(cl_ord_id));
  order.setField(FIX::HandlInst(FIX::HandlInst_AUTOMATED_EXECUTION_ORDER_PRIVATE_NO_BROKER_INTERVENTION));
  order.setField(FIX::Symbol(symbol));
  order.setField(FIX::Side(FIX::Side_BUY));
  order.setField(FIX::TransactTime());
  order.setField(FIX::OrderQty(quantity));
  order.setField(FIX::OrdType(FIX::OrdType_LIMIT));
  order.setField(FIX::Price(price));
  return order;
}

}  // namespace qf_peer
