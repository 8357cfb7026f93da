#include "common/conformance_app.hpp"

#include "hft/engine/engine.hpp"

namespace hft::apps {

void ConformanceApplication::on_create(session::Session& session) noexcept {
  header_dictionary_[&session] = codec::Dictionary::builtin(session.version());
}

void ConformanceApplication::on_logout(session::Session& session) noexcept { seen_[&session].clear(); }

session::Decision ConformanceApplication::from_app(session::Session& session,
                                                   const codec::MessageView& message) noexcept {
  const auto type = message.msg_type();
  if (type == "D") {
    bool poss_resend = false;
    (void)message.get_bool(codec::tag::kPossResend, poss_resend);
    const std::string cl_ord_id(message.get(codec::tag::kClOrdID));
    auto& seen = seen_[&session];
    if (poss_resend && seen.count(cl_ord_id) != 0) return session::Decision::accept();
    seen.insert(cl_ord_id);
    echo(session, message, poss_resend);
    return session::Decision::accept();
  }
  if (type == "d" || type == "C") {
    echo(session, message, false);
    return session::Decision::accept();
  }
  return session::Decision::unsupported_message_type();
}

void ConformanceApplication::echo(session::Session& session, const codec::MessageView& message,
                                  bool poss_resend) noexcept {
  const codec::FieldSet& header = header_dictionary_[&session]->header();
  session::SendOptions options;
  options.poss_resend = poss_resend;
  (void)session.send_app(message.msg_type(), engine::Engine::now(), [&](session::OutgoingMessage& m) {
    for (std::size_t i = 0; i < message.size(); ++i) {
      const int tag = message.field(i).tag;
      if (tag == codec::tag::kCheckSum || header.member(tag) != nullptr) continue;
      m.add(tag, message.value_at(i));
    }
  }, options);
}

}  // namespace hft::apps
