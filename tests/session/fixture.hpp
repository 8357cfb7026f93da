// A session under test with a fake clock, a memory store, a collecting
// output and a recording application.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "harness.hpp"
#include "hft/codec/dictionary.hpp"
#include "hft/session/session.hpp"
#include "hft/store/message_store.hpp"

namespace hft::session::test {

inline std::shared_ptr<const codec::Dictionary> shared_dictionary(const std::string& file) {
  static std::vector<std::pair<std::string, std::shared_ptr<const codec::Dictionary>>> cache;
  for (auto& [name, d] : cache) {
    if (name == file) return d;
  }
  auto d = codec::Dictionary::load_file(std::string(HFT_SHARED_DIR) + "/fix/spec/" + file);
  if (!d) {
    ADD_FAILURE() << d.error().message;
    return nullptr;
  }
  cache.emplace_back(file, *d);
  return *d;
}

/// Records callbacks; decisions are configurable.
class RecordingApp : public Application {
 public:
  bool record = true;
  std::vector<std::string> events;
  Decision app_decision = Decision::accept();
  Decision admin_decision = Decision::accept();
  Decision logon_decision = Decision::accept();
  bool veto_resends = false;
  bool veto_sends = false;
  bool add_credentials = false;
  std::string username, password, new_password;
  std::uint64_t app_messages = 0;

  void on_logon(Session&) noexcept override {
    if (record) events.push_back("logon");
  }
  void on_logout(Session&) noexcept override {
    if (record) events.push_back("logout");
  }
  Decision on_logon_request(Session&, const LogonRequest& r) noexcept override {
    username = r.username;
    password = r.password;
    new_password = r.new_password;
    return logon_decision;
  }
  void to_admin(Session&, std::string_view type, codec::MessageWriter& w) noexcept override {
    if (add_credentials && type == "A") {
      w.add(codec::tag::kUsername, "alice");
      w.add(codec::tag::kPassword, "secret");
    }
  }
  Decision to_app(Session&, std::span<const char>, bool poss_dup) noexcept override {
    if (poss_dup && veto_resends) return Decision::do_not_send();
    if (!poss_dup && veto_sends) return Decision::do_not_send();
    return Decision::accept();
  }
  Decision from_admin(Session&, const codec::MessageView& m) noexcept override {
    if (record) events.push_back("admin:" + std::string(m.msg_type()) + ":" + std::string(m.get(34)));
    return m.msg_type() == "A" ? Decision::accept() : admin_decision;
  }
  Decision from_app(Session&, const codec::MessageView& m) noexcept override {
    ++app_messages;
    if (record) events.push_back("app:" + std::string(m.msg_type()) + ":" + std::string(m.get(34)));
    return app_decision;
  }
};

class SessionFixture : public ::testing::Test {
 protected:
  static constexpr std::int64_t kStart = 1'710'504'000'000'000'000;  // 2024-03-15 12:00:00 UTC
  static constexpr std::int64_t kSecond = 1'000'000'000;

  store::MemoryStore store{store::MemoryStoreConfig{512, 4096}, kStart};
  CollectingOutput out;
  RecordingApp app;
  std::unique_ptr<Session> session;
  std::int64_t now = kStart;
  std::uint64_t peer_seq = 1;
  std::string begin = "FIX.4.4";
  std::string peer = "TW";

  SessionSettings base_settings(const std::string& begin_string = "FIX.4.4",
                                const std::string& dict = "FIX44.xml") {
    begin = begin_string;
    SessionSettings st;
    st.begin_string = begin_string;
    st.sender_comp_id = "ISLD";
    st.target_comp_id = peer;
    st.max_message_size = 4096;
    st.queue_capacity_bytes = 64 * 1024;
    st.queue_capacity_messages = 256;
    if (!dict.empty()) st.dictionary = shared_dictionary(dict);
    return st;
  }

  /// A session over the fixture's store, or over `other` (larger messages).
  void make(SessionSettings st, store::MessageStore* other = nullptr) {
    auto s = Session::create(std::move(st), other != nullptr ? *other : store, app, out, nullptr, at());
    ASSERT_TRUE(s.ok()) << s.error().message;
    session = std::move(*s);
  }

  [[nodiscard]] Instant at() const { return Instant::from_utc(now); }

  /// A message from the peer: header, then `body` (pipes for SOH).
  std::string peer_msg(const std::string& type, const std::string& body, std::uint64_t seq,
                       const std::string& header_extra = "") {
    return wire("8=" + begin + "|35=" + type + "|34=" + std::to_string(seq) + "|49=" + peer +
                "|52=" + utc_text(now) + "|56=ISLD|" + header_extra + body);
  }

  void feed(const std::string& bytes) { session->on_bytes({bytes.data(), bytes.size()}, at()); }

  /// Sends the next message of the peer's sequence.
  void send(const std::string& type, const std::string& body = "", const std::string& header_extra = "") {
    feed(peer_msg(type, body, peer_seq++, header_extra));
  }

  /// Connects and logs on as the peer; returns our Logon answer.
  std::string logon(const std::string& body = "98=0|108=30|") {
    session->on_connected(at());
    peer_seq = 1;
    send("A", body);
    return out.pop();
  }

  /// Advances the clock, firing the timer every 100 ms.
  void advance(double seconds) {
    const auto end = now + static_cast<std::int64_t>(seconds * 1e9);
    while (now < end) {
      now += 100'000'000;
      session->on_timer(at());
    }
  }

  /// Sends an application message from our side.
  SendStatus send_order(const std::string& id) {
    return session->send_app("D", at(), [&](OutgoingMessage& m) {
      m.add(11, id);
      m.add_char(21, '1');
      m.add(55, "IBM");
      m.add_char(54, '1');
      m.add(60, utc_text(now));
      m.add_char(40, '1');
    });
  }

  static std::string order_body(const std::string& id) {
    return "11=" + id + "|21=1|55=IBM|54=1|60=20240315-12:00:00|40=1|";
  }
};

}  // namespace hft::session::test
