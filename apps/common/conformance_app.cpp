#include "common/conformance_app.hpp"

#include <algorithm>
#include <vector>

#include "hft/engine/engine.hpp"

namespace hft::apps {

void ConformanceApplication::on_create(session::Session& session) noexcept {
  header_dictionary_[&session] = codec::Dictionary::builtin(session.version());
}

void ConformanceApplication::on_logout(session::Session& session) noexcept {
  seen_[&session].clear();
  // A Logout asked for by the LOGOUT News disables the session (as
  // QuickFIX's Session::logout does); the next script needs it back.
  session.enable();
}

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
  if (type == "B" && message.get(codec::tag::kHeadline) == "LOGOUT") {
    // The initiator-side suite's trigger for a Logout from the engine side.
    session.logout({}, engine::Engine::now());
    return session::Decision::accept();
  }
  return session::Decision::unsupported_message_type();
}

namespace {

// One past the last field of the repeating group whose first entry starts at `pos`.
std::size_t group_end(const codec::Dictionary& dict, const codec::GroupDef& group, const codec::MessageView& m,
                      std::size_t pos) {
  while (pos < m.size()) {
    const auto* member = group.fields.member(m.field(pos).tag);
    if (member == nullptr) break;
    pos = member->group >= 0 ? group_end(dict, dict.group(member->group), m, pos + 1) : pos + 1;
  }
  return pos;
}

}  // namespace

void ConformanceApplication::echo(session::Session& session, const codec::MessageView& message,
                                  bool poss_resend) noexcept {
  // QuickFIX, which the suite was written against, keeps body fields in tag
  // order (groups travel with their NumInGroup field), so an echo comes back
  // sorted by tag.
  const codec::FieldSet& header = header_dictionary_[&session]->header();
  const auto& settings = session.settings();
  const codec::Dictionary* dict = settings.app_dictionary ? settings.app_dictionary.get() : settings.dictionary.get();
  const codec::MessageDef* def = dict != nullptr ? dict->message(message.msg_type()) : nullptr;
  struct Run {
    int tag;
    std::size_t begin, end;
  };
  std::vector<Run> runs;
  for (std::size_t i = 0; i < message.size();) {
    const int tag = message.field(i).tag;
    if (tag == codec::tag::kCheckSum || header.member(tag) != nullptr) {
      ++i;
      continue;
    }
    const auto* member = def != nullptr ? def->fields.member(tag) : nullptr;
    const std::size_t end = member != nullptr && member->group >= 0
                                ? group_end(*dict, dict->group(member->group), message, i + 1)
                                : i + 1;
    runs.push_back({tag, i, end});
    i = end;
  }
  std::stable_sort(runs.begin(), runs.end(), [](const Run& a, const Run& b) { return a.tag < b.tag; });
  session::SendOptions options;
  options.poss_resend = poss_resend;
  (void)session.send_app(message.msg_type(), engine::Engine::now(), [&](session::OutgoingMessage& m) {
    for (const Run& run : runs) {
      for (std::size_t i = run.begin; i < run.end; ++i) m.add(message.field(i).tag, message.value_at(i));
    }
  }, options);
}

}  // namespace hft::apps
