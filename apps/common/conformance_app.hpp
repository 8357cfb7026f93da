// The application behind the acceptor in the FIX session conformance suite
// (see docs/conformance.md): an echo.
//  - NewOrderSingle (D) goes back unchanged to its sender, except that a
//    PossResend (97=Y) order whose ClOrdID was already seen on that session
//    is dropped; the seen-set is cleared at logout;
//  - SecurityDefinition (d) and Email (C) go back unchanged;
//  - a News (B) with Headline "LOGOUT" makes the session log out (the
//    initiator-side suite's trigger for a Logout from the engine's side);
//  - any other application message gets a BusinessMessageReject.
// Test tooling: it allocates (the seen-set), which the hot path never does.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>

#include "hft/codec/dictionary.hpp"
#include "hft/session/application.hpp"
#include "hft/session/session.hpp"

namespace hft::apps {

class ConformanceApplication : public session::Application {
 public:
  void on_create(session::Session& session) noexcept override;
  void on_logout(session::Session& session) noexcept override;
  session::Decision from_app(session::Session& session, const codec::MessageView& message) noexcept override;

 private:
  void echo(session::Session& session, const codec::MessageView& message, bool poss_resend) noexcept;

  std::map<const session::Session*, std::set<std::string>> seen_;
  std::map<const session::Session*, std::shared_ptr<const codec::Dictionary>> header_dictionary_;
};

}  // namespace hft::apps
