// The admin and metrics endpoint (docs/admin.md): a venue engine with two
// acceptor sessions and HttpAcceptPort=0, a client engine logged on to both,
// both polled on the test's thread while an HTTP client asks from another.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "engine/loopback.hpp"
#include "engine/peer_support.hpp"
#include "hft/engine/engine.hpp"
#include "support/alloc_counter.hpp"
#include "support/temp_dir.hpp"

namespace hft::engine {
namespace {

using nlohmann::json;

// Records the MsgSeqNum of every message received, by MsgType.
struct Recorder final : session::Application {
  session::Decision from_admin(session::Session&, const codec::MessageView& m) noexcept override {
    record(m);
    return session::Decision::accept();
  }
  session::Decision from_app(session::Session&, const codec::MessageView& m) noexcept override {
    record(m);
    return session::Decision::accept();
  }
  void record(const codec::MessageView& m) noexcept {
    std::uint64_t seq = 0;
    (void)m.get_uint(34, seq);
    seen.emplace_back(std::string(m.msg_type()), seq);
  }
  std::vector<std::pair<std::string, std::uint64_t>> seen;
};

struct Http {
  int status = 0;
  std::string body;
  [[nodiscard]] json parsed() const { return json::parse(body, nullptr, false); }
};

std::string write_token(const std::string& path, const std::string& token, mode_t mode = 0600) {
  {
    std::ofstream f(path);
    f << token << "\n";
  }
  ::chmod(path.c_str(), mode);
  return path;
}

std::string venue_config(const std::string& dir, const std::string& admin_keys) {
  std::ostringstream s;
  s << "[DEFAULT]\nConnectionType=acceptor\nBeginString=FIX.4.4\nSenderCompID=VENUE\nHeartBtInt=30\n"
    << "NonStopSession=Y\nUseDataDictionary=N\nSocketAcceptPort=0\nFileStorePath=" << dir << "/venue\n"
    << "LogLevel=error\nHttpAcceptPort=0\n"
    << admin_keys << "[SESSION]\nTargetCompID=C1\n[SESSION]\nTargetCompID=C2\n";
  return s.str();
}

std::string client_config(const std::string& dir, int port) {
  std::ostringstream s;
  s << "[DEFAULT]\nConnectionType=initiator\nBeginString=FIX.4.4\nTargetCompID=VENUE\nHeartBtInt=30\n"
    << "NonStopSession=Y\nUseDataDictionary=N\nSocketConnectHost=127.0.0.1\nSocketConnectPort=" << port
    << "\nFileStorePath=" << dir << "/client\nReconnectInterval=1\nLogLevel=error\n"
    << "[SESSION]\nSenderCompID=C1\n[SESSION]\nSenderCompID=C2\n";
  return s.str();
}

const session::SessionID kVenueC1{"FIX.4.4", "VENUE", "C1", ""};
const session::SessionID kVenueC2{"FIX.4.4", "VENUE", "C2", ""};
const session::SessionID kClientC1{"FIX.4.4", "C1", "VENUE", ""};
const session::SessionID kClientC2{"FIX.4.4", "C2", "VENUE", ""};
constexpr const char* kC1Path = "/sessions/FIX.4.4%3AVENUE-%3EC1";
constexpr const char* kToken = "s3cret-token-for-tests";

class AdminEndpoint : public ::testing::Test {
 protected:
  void start(const std::string& extra_keys = "", bool with_token = true) {
    std::string keys = extra_keys + "HttpAdminAuditFile=" + dir.sub("audit.jsonl") + "\n";
    if (with_token) keys += "HttpAdminTokenFile=" + write_token(dir.sub("token"), kToken) + "\n";
    venue = hft::test::make_engine(venue_config(dir.path(), keys), venue_app);
    ASSERT_TRUE(venue);
    ASSERT_NE(venue->admin_port(), 0);
    client = hft::test::make_engine(client_config(dir.path(), venue->listen_port()), client_app);
    ASSERT_TRUE(client);
    ASSERT_TRUE(test::poll_until(*venue, *client, [&] {
      return client->find(kClientC1)->is_logged_on() && client->find(kClientC2)->is_logged_on() &&
             venue->find(kVenueC1)->is_logged_on() && venue->find(kVenueC2)->is_logged_on();
    }));
  }

  // `request` on another thread while both engines are polled on this one
  // (the engine thread), which is where the endpoint's requests are answered.
  template <typename F>
  Http during_poll(F request) {
    auto answer = std::async(std::launch::async, request);
    while (answer.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
      venue->poll();
      if (client) client->poll();
    }
    return answer.get();
  }
  Http get(const std::string& path) {
    return during_poll([&] {
      httplib::Client c("127.0.0.1", venue->admin_port());
      auto r = c.Get(path.c_str());
      return r ? Http{r->status, r->body} : Http{};
    });
  }
  Http post(const std::string& path, const json& body = json::object(), const std::string& token = kToken) {
    return during_poll([&] {
      httplib::Client c("127.0.0.1", venue->admin_port());
      httplib::Headers headers;
      if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
      headers.emplace("X-Admin-User", "tester");
      auto r = c.Post(path.c_str(), headers, body.dump(), "application/json");
      return r ? Http{r->status, r->body} : Http{};
    });
  }
  std::vector<json> audit_lines() {
    std::ifstream f(dir.sub("audit.jsonl"));
    std::vector<json> lines;
    for (std::string line; std::getline(f, line);) lines.push_back(json::parse(line, nullptr, false));
    return lines;
  }

  hft::test::TempDir dir;
  Recorder venue_app, client_app;
  std::unique_ptr<Engine> venue, client;
};

TEST_F(AdminEndpoint, lists_sessions_with_state_sequence_numbers_counters_and_journals) {
  start();
  const Http all = get("/sessions");
  ASSERT_EQ(all.status, 200) << all.body;
  const json sessions = all.parsed()["sessions"];
  ASSERT_EQ(sessions.size(), 2u) << all.body;
  EXPECT_EQ(sessions[0]["id"], "FIX.4.4:VENUE->C1");
  EXPECT_EQ(sessions[1]["id"], "FIX.4.4:VENUE->C2");
  for (const json& s : sessions) {
    EXPECT_EQ(s["state"], "logged_on") << s;
    EXPECT_EQ(s["connection_type"], "acceptor");
    EXPECT_EQ(s["next_sender_seq"], 2) << s;
    EXPECT_EQ(s["next_target_seq"], 2) << s;
    EXPECT_EQ(s["counters"]["messages_received"], 1) << s;
    EXPECT_EQ(s["counters"]["messages_sent"], 1) << s;
    EXPECT_EQ(s["counters"]["logons"], 1) << s;
    EXPECT_GT(s["journal"]["outbound"]["bytes"].get<std::uint64_t>(), 50u) << s;
    EXPECT_EQ(s["journal"]["outbound"]["spare_ready"], true) << s;
  }
  const Http one = get(kC1Path);
  ASSERT_EQ(one.status, 200) << one.body;
  EXPECT_EQ(one.parsed()["id"], "FIX.4.4:VENUE->C1");
  const Http by_index = get("/sessions/1");
  ASSERT_EQ(by_index.status, 200) << by_index.body;
  EXPECT_EQ(by_index.parsed()["id"], "FIX.4.4:VENUE->C2");
  EXPECT_EQ(get("/sessions/FIX.4.4%3AVENUE-%3ENOPE").status, 404);
  EXPECT_EQ(get("/sessions/2").status, 404);
  const Http bad = get("/sessions/nonsense");
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.find("nonsense"), std::string::npos) << bad.body;

  const Http engine = get("/engine");
  ASSERT_EQ(engine.status, 200) << engine.body;
  EXPECT_EQ(engine.parsed()["sessions"], 2);
  EXPECT_EQ(engine.parsed()["logged_on"], 2);
  EXPECT_EQ(engine.parsed()["stats"]["connections_accepted"], 2);
  EXPECT_EQ(engine.parsed()["log_level"], "error");
}

TEST_F(AdminEndpoint, set_seqnum_changes_what_the_next_message_carries) {
  start();
  const Http r = post(std::string(kC1Path) + "/seqnum", {{"next_sender", 50}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(venue->find(kVenueC1)->next_sender_seq(), 50u);
  EXPECT_EQ(venue->find(kVenueC1)->next_target_seq(), 2u) << "next_target not given: unchanged";
  EXPECT_EQ(get(kC1Path).parsed()["next_sender_seq"], 50);
  client_app.seen.clear();
  ASSERT_EQ(venue->find(kVenueC1)->send_app("8", Engine::now(), [](session::OutgoingMessage& m) { m.add(58, "x"); }),
            session::SendStatus::kOk);
  // The client sees 50 where it expected 2: it asks for 2..49 (gap-filled), then takes 50.
  ASSERT_TRUE(test::poll_until(*venue, *client, [&] {
    for (const auto& seen : client_app.seen) {
      if (seen.first == "8") return true;
    }
    return false;
  }));
  for (const auto& seen : client_app.seen) {
    if (seen.first == "8") {
      EXPECT_EQ(seen.second, 50u);
    }
  }
  EXPECT_EQ(client->find(kClientC1)->next_target_seq(), 51u);

  const Http both = post(std::string(kC1Path) + "/seqnum", {{"next_sender", 70}, {"next_target", 9}});
  ASSERT_EQ(both.status, 200) << both.body;
  EXPECT_EQ(venue->find(kVenueC1)->next_sender_seq(), 70u);
  EXPECT_EQ(venue->find(kVenueC1)->next_target_seq(), 9u);
  const auto audit = audit_lines();
  ASSERT_EQ(audit.size(), 2u);
  EXPECT_EQ(audit[0]["command"], "seqnum");
  EXPECT_EQ(audit[0]["session"], "FIX.4.4:VENUE->C1");
  EXPECT_EQ(audit[0]["user"], "tester");
  EXPECT_EQ(audit[0]["status"], 200);
  EXPECT_EQ(audit[0]["args"]["next_sender"], 50);
  EXPECT_EQ(audit[0]["remote"].get<std::string>().rfind("127.0.0.1:", 0), 0u) << audit[0];
}

TEST_F(AdminEndpoint, an_unauthenticated_command_is_refused_and_changes_nothing) {
  start();
  EXPECT_EQ(post(std::string(kC1Path) + "/logout", json::object(), "").status, 401);
  EXPECT_EQ(post(std::string(kC1Path) + "/seqnum", {{"next_sender", 99}}, "wrong-token").status, 401);
  EXPECT_EQ(post("/log-level", {{"level", "debug"}}, "").status, 401);
  for (int i = 0; i < 100; ++i) {
    venue->poll();
    client->poll();
  }
  EXPECT_TRUE(venue->find(kVenueC1)->is_logged_on());
  EXPECT_EQ(venue->find(kVenueC1)->next_sender_seq(), 2u);
  EXPECT_EQ(get("/engine").parsed()["log_level"], "error");
  const auto audit = audit_lines();
  ASSERT_EQ(audit.size(), 3u);
  for (const json& line : audit) EXPECT_EQ(line["status"], 401) << line;
}

TEST_F(AdminEndpoint, without_a_token_file_commands_are_forbidden_and_reads_served) {
  start("", /*with_token=*/false);
  const Http r = post(std::string(kC1Path) + "/disconnect", json::object(), "anything");
  EXPECT_EQ(r.status, 403);
  EXPECT_NE(r.body.find("HttpAdminTokenFile"), std::string::npos) << r.body;
  EXPECT_TRUE(venue->find(kVenueC1)->is_connected());
  EXPECT_EQ(get("/sessions").status, 200);
}

TEST_F(AdminEndpoint, disable_refuses_reconnects_until_enable) {
  start();
  const std::string c2 = "/sessions/FIX.4.4%3AVENUE-%3EC2";
  ASSERT_EQ(post(c2 + "/disable", {{"text", "maintenance"}}).status, 200);
  ASSERT_TRUE(test::poll_until(*venue, *client, [&] { return !client->find(kClientC2)->is_logged_on(); }));
  // The client reconnects every second and is refused.
  ASSERT_TRUE(test::poll_until(*venue, *client, [&] { return venue->stats().disabled_refused >= 1; }));
  EXPECT_FALSE(venue->find(kVenueC2)->is_logged_on());
  EXPECT_EQ(get(c2).parsed()["enabled"], false);
  EXPECT_TRUE(venue->find(kVenueC1)->is_logged_on()) << "the other session is untouched";
  ASSERT_EQ(post(c2 + "/enable").status, 200);
  ASSERT_TRUE(test::poll_until(*venue, *client, [&] { return venue->find(kVenueC2)->is_logged_on(); }));
  EXPECT_EQ(get(c2).parsed()["enabled"], true);
}

TEST_F(AdminEndpoint, sessions_are_added_and_removed_at_run_time_and_a_removed_sessions_store_stays) {
  start();
  // SocketAcceptPort as in the engine's own config (here 0): the session
  // shares that listener.
  const std::string c3_text = "[SESSION]\nConnectionType=acceptor\nBeginString=FIX.4.4\nSenderCompID=VENUE\n"
                              "TargetCompID=C3\nHeartBtInt=30\nNonStopSession=Y\nUseDataDictionary=N\n"
                              "SocketAcceptPort=0\nFileStorePath=" + dir.path() + "/venue\n";
  // Unauthenticated: refused, nothing added.
  EXPECT_EQ(post("/sessions", {{"config", c3_text}}, "").status, 401);
  // A config that is not one [SESSION], or a bad key: 400 naming it.
  std::string c4_text = c3_text;
  c4_text.replace(c4_text.find("C3"), 2, "C4");
  const Http two = post("/sessions", {{"config", c3_text + c4_text}});
  EXPECT_EQ(two.status, 400);
  EXPECT_NE(two.body.find("exactly one [SESSION]"), std::string::npos) << two.body;
  const Http bad = post("/sessions", {{"config", c3_text + "HeartBtInt=soon\n"}});
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.find("HeartBtInt"), std::string::npos) << bad.body;
  ASSERT_EQ(get("/sessions").parsed()["sessions"].size(), 2u);

  const Http added = post("/sessions", {{"config", c3_text}});
  ASSERT_EQ(added.status, 200) << added.body;
  EXPECT_EQ(added.parsed()["session"], "FIX.4.4:VENUE->C3");
  EXPECT_EQ(post("/sessions", {{"config", c3_text}}).status, 400) << "it exists already";
  const session::SessionID venue_c3{"FIX.4.4", "VENUE", "C3", ""};
  ASSERT_NE(venue->find(venue_c3), nullptr);
  // A client for it logs on through the same port.
  Recorder c3_app;
  auto c3 = hft::test::make_engine(
      "[DEFAULT]\nConnectionType=initiator\nBeginString=FIX.4.4\nTargetCompID=VENUE\nHeartBtInt=30\n"
      "NonStopSession=Y\nUseDataDictionary=N\nSocketConnectHost=127.0.0.1\nSocketConnectPort=" +
          std::to_string(venue->listen_port()) + "\nFileStorePath=" + dir.path() +
          "/client3\nReconnectInterval=1\nLogLevel=error\n[SESSION]\nSenderCompID=C3\n",
      c3_app);
  ASSERT_TRUE(c3);
  ASSERT_TRUE(test::poll_until(*venue, *c3, [&] { return venue->find(venue_c3)->is_logged_on(); }));
  const json listed = get("/sessions").parsed()["sessions"];
  ASSERT_EQ(listed.size(), 3u);
  EXPECT_EQ(listed[2]["id"], "FIX.4.4:VENUE->C3");
  EXPECT_EQ(listed[2]["state"], "logged_on");

  const Http removed = post("/sessions/FIX.4.4%3AVENUE-%3EC3/remove");
  ASSERT_EQ(removed.status, 200) << removed.body;
  ASSERT_TRUE(test::poll_until(*venue, *c3, [&] { return venue->find(venue_c3) == nullptr; }));
  EXPECT_EQ(get("/sessions").parsed()["sessions"].size(), 2u);
  EXPECT_TRUE(std::filesystem::exists(dir.path() + "/venue/FIX.4.4-VENUE-C3/seqnums.dat"))
      << "the removed session's store stays on disk";
  EXPECT_EQ(post("/sessions/FIX.4.4%3AVENUE-%3EC3/remove").status, 404);
  bool audited_add = false, audited_remove = false;
  for (const json& line : audit_lines()) {
    audited_add = audited_add || (line["command"] == "add-session" && line["status"] == 200);
    audited_remove = audited_remove || (line["command"] == "remove" && line["status"] == 200);
  }
  EXPECT_TRUE(audited_add);
  EXPECT_TRUE(audited_remove);
}

TEST_F(AdminEndpoint, logout_lets_the_session_log_on_again_and_disconnect_closes_it) {
  start();
  ASSERT_EQ(post(std::string(kC1Path) + "/logout", {{"text", "operator"}}).status, 200);
  ASSERT_TRUE(test::poll_until(*venue, *client, [&] { return !client->find(kClientC1)->is_logged_on(); }));
  auto logons = [&] { return venue->find(kVenueC1)->counters().logons; };
  ASSERT_TRUE(test::poll_until(*venue, *client, [&] { return logons() == 2 && venue->find(kVenueC1)->is_logged_on(); }))
      << "a logout is not a disable: the client's reconnect is accepted";
  ASSERT_EQ(post(std::string(kC1Path) + "/disconnect").status, 200);
  EXPECT_FALSE(venue->find(kVenueC1)->is_connected());
  ASSERT_TRUE(test::poll_until(*venue, *client, [&] { return logons() == 3 && venue->find(kVenueC1)->is_logged_on(); }));
}

TEST_F(AdminEndpoint, sequence_reset_moves_the_counterpartys_expected_number_and_reset_goes_back_to_one) {
  start();
  const Http r = post(std::string(kC1Path) + "/sequence-reset", {{"new_seq_no", 100}});
  ASSERT_EQ(r.status, 200) << r.body;
  ASSERT_TRUE(test::poll_until(*venue, *client, [&] { return client->find(kClientC1)->next_target_seq() == 100; }));
  EXPECT_EQ(venue->find(kVenueC1)->next_sender_seq(), 100u);
  const Http low = post(std::string(kC1Path) + "/sequence-reset", {{"new_seq_no", 50}});
  EXPECT_EQ(low.status, 400);
  EXPECT_NE(low.body.find("new_seq_no"), std::string::npos) << low.body;

  const Http reset = post("/sessions/0/reset");
  ASSERT_EQ(reset.status, 200) << reset.body;
  EXPECT_NE(reset.body.find("next sender 1, next target 1"), std::string::npos) << reset.body;
}

TEST_F(AdminEndpoint, bad_arguments_are_refused_naming_them) {
  start();
  auto expect_400 = [&](const std::string& path, const json& body, const std::string& names) {
    const Http r = post(path, body);
    EXPECT_EQ(r.status, 400) << path << " " << body << ": " << r.body;
    EXPECT_NE(r.parsed()["error"].get<std::string>().find(names), std::string::npos) << r.body;
  };
  expect_400(std::string(kC1Path) + "/seqnum", {{"next_sender", 0}}, "next_sender: bad value 0");
  expect_400(std::string(kC1Path) + "/seqnum", {{"next_target", "x"}}, "next_target: bad value \"x\"");
  expect_400(std::string(kC1Path) + "/seqnum", json::object(), "next_sender, next_target");
  expect_400(std::string(kC1Path) + "/sequence-reset", json::object(), "new_seq_no: missing");
  expect_400(std::string(kC1Path) + "/sequence-reset", {{"new_seq_no", 9}, {"gap_fill", 1}}, "gap_fill");
  expect_400("/log-level", {{"level", "loud"}}, "level: bad value \"loud\"");
  EXPECT_EQ(post(std::string(kC1Path) + "/explode").status, 404);
  EXPECT_EQ(post("/sessions/FIX.4.4%3AVENUE-%3ENOPE/logout").status, 404);
  EXPECT_EQ(venue->find(kVenueC1)->next_sender_seq(), 2u);
}

TEST_F(AdminEndpoint, log_level_changes_at_run_time) {
  start();
  const Http r = post("/log-level", {{"level", "debug"}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(get("/engine").parsed()["log_level"], "debug");
  ASSERT_EQ(post("/log-level", {{"level", "warn"}}).status, 200);
  EXPECT_EQ(get("/engine").parsed()["log_level"], "warn");
}

TEST_F(AdminEndpoint, metrics_are_prometheus_text_that_promtool_accepts) {
  start();
  const Http r = get("/metrics");
  ASSERT_EQ(r.status, 200);
  EXPECT_NE(r.body.find("hft_session_logged_on{session=\"FIX.4.4:VENUE->C1\"} 1\n"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("hft_session_next_sender_seq_num{session=\"FIX.4.4:VENUE->C2\"} 2\n"), std::string::npos);
  EXPECT_NE(r.body.find("hft_session_journal_bytes_total{session=\"FIX.4.4:VENUE->C1\",direction=\"outbound\"}"),
            std::string::npos);
  EXPECT_NE(r.body.find("hft_engine_connections_accepted_total 2\n"), std::string::npos);
  if (std::system("command -v promtool > /dev/null 2>&1") != 0) GTEST_SKIP() << "promtool not installed";
  const std::string file = dir.sub("metrics.txt");
  {
    std::ofstream f(file);
    f << r.body;
  }
  const std::string command = "promtool check metrics < " + file + " > " + dir.sub("promtool.out") + " 2>&1";
  const int rc = std::system(command.c_str());
  std::ifstream out(dir.sub("promtool.out"));
  const std::string said((std::istreambuf_iterator<char>(out)), std::istreambuf_iterator<char>());
  EXPECT_EQ(rc, 0) << said;
  EXPECT_EQ(said, "") << "promtool's lint findings";
}

TEST_F(AdminEndpoint, an_engine_that_does_not_poll_answers_503_and_the_command_is_never_executed) {
  start();
  Http r;
  std::thread asker([&] {
    httplib::Client c("127.0.0.1", venue->admin_port());
    c.set_read_timeout(10, 0);
    auto res = c.Post((std::string(kC1Path) + "/disconnect").c_str(), {{"Authorization", std::string("Bearer ") + kToken}},
                      "", "application/json");
    if (res) r = Http{res->status, res->body};
  });
  asker.join();  // no poll meanwhile
  EXPECT_EQ(r.status, 503) << r.body;
  for (int i = 0; i < 100; ++i) venue->poll();
  EXPECT_TRUE(venue->find(kVenueC1)->is_connected()) << "a withdrawn command must not run later";
  EXPECT_EQ(get("/sessions/0").status, 200);
}

TEST_F(AdminEndpoint, replies_on_a_keep_alive_connection_are_not_held_back_for_a_delayed_ack) {
  // A reply goes out in pieces (headers, then body). With Nagle's algorithm
  // on the server's socket the body waited for the client's delayed ACK of
  // the headers: 40 ms or more per request on a kept-alive connection, as a
  // Prometheus scraper's is. The median of 11 requests stays far below that.
  start();
  const int port = venue->admin_port();
  std::vector<double> ms;
  (void)during_poll([&] {
    httplib::Client c("127.0.0.1", port);
    c.set_keep_alive(true);
    for (int i = 0; i < 11; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      auto res = c.Get(i % 2 == 0 ? "/metrics" : "/sessions");
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      EXPECT_TRUE(res && res->status == 200);
    }
    return Http{};
  });
  ASSERT_EQ(ms.size(), 11u);
  std::sort(ms.begin(), ms.end());
  EXPECT_LT(ms[5], 20.0) << "median reply " << ms[5] << " ms";
}

TEST_F(AdminEndpoint, answering_requests_allocates_nothing_on_the_engine_thread) {
  start();
  std::uint64_t allocations = 0;
  auto counted = [&](auto request) {
    auto answer = std::async(std::launch::async, request);
    while (answer.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
      const hft::test::AllocationScope scope;
      venue->poll();
      allocations += scope.count();
    }
    return answer.get();
  };
  (void)get("/metrics");  // the server sizes its snapshot buffers
  const int port = venue->admin_port();
  EXPECT_EQ(counted([port] {
              httplib::Client c("127.0.0.1", port);
              auto res = c.Get("/metrics");
              return res ? res->status : 0;
            }),
            200);
  EXPECT_EQ(counted([port] {
              httplib::Client c("127.0.0.1", port);
              auto res = c.Post("/sessions/0/seqnum", {{"Authorization", std::string("Bearer ") + kToken}},
                                R"({"next_target": 2})", "application/json");
              return res ? res->status : 0;
            }),
            200);
  EXPECT_EQ(allocations, 0u);
}

// ---- start-up errors name the key ---------------------------------------

std::string create_error(const std::string& text) { return hft::test::start_error(text, "admin.cfg"); }

std::string acceptor(const std::string& keys) {
  return "[DEFAULT]\nConnectionType=acceptor\nBeginString=FIX.4.4\nSenderCompID=V\nNonStopSession=Y\n"
         "UseDataDictionary=N\nSocketAcceptPort=0\nLogLevel=off\n" +
         keys + "[SESSION]\nTargetCompID=C\n";
}

TEST(AdminConfig, a_token_file_that_is_missing_empty_or_world_readable_stops_the_start) {
  hft::test::TempDir dir;
  std::string e = create_error(acceptor("HttpAcceptPort=0\nHttpAdminTokenFile=" + dir.sub("none") + "\n"));
  EXPECT_NE(e.find("admin.cfg:10: HttpAdminTokenFile: " + dir.sub("none") + ": cannot open"), std::string::npos) << e;
  write_token(dir.sub("empty"), "");
  e = create_error(acceptor("HttpAcceptPort=0\nHttpAdminTokenFile=" + dir.sub("empty") + "\n"));
  EXPECT_NE(e.find("HttpAdminTokenFile: " + dir.sub("empty") + ": empty"), std::string::npos) << e;
  write_token(dir.sub("open"), "t", 0644);
  e = create_error(acceptor("HttpAcceptPort=0\nHttpAdminTokenFile=" + dir.sub("open") + "\n"));
  EXPECT_NE(e.find("HttpAdminTokenFile: " + dir.sub("open") + ": readable by others (mode 644)"), std::string::npos)
      << e;
  write_token(dir.sub("good"), "t", 0640);
  EXPECT_EQ(create_error(acceptor("HttpAcceptPort=0\nHttpAdminTokenFile=" + dir.sub("good") + "\n")), "");
}

TEST(AdminConfig, admin_keys_without_http_accept_port_and_a_taken_port_are_errors) {
  std::string e = create_error(acceptor("HttpAdminTokenFile=/x\n"));
  EXPECT_NE(e.find("HttpAdminTokenFile: needs HttpAcceptPort"), std::string::npos) << e;
  e = create_error(acceptor("HttpAcceptAddress=0.0.0.0\n"));
  EXPECT_NE(e.find("HttpAcceptAddress: needs HttpAcceptPort"), std::string::npos) << e;
  Recorder app;
  auto first = Config::parse(acceptor("HttpAcceptPort=0\n"), "a.cfg");
  ASSERT_TRUE(first);
  auto running = Engine::create(*first, app);
  ASSERT_TRUE(running) << running.error().message;
  const int port = (*running)->admin_port();
  ASSERT_GT(port, 0);
  e = create_error(acceptor("HttpAcceptPort=" + std::to_string(port) + "\n"));
  EXPECT_NE(e.find("HttpAcceptPort: cannot listen on 127.0.0.1:" + std::to_string(port)), std::string::npos) << e;
  e = create_error(acceptor("HttpAcceptPort=0\nHttpAcceptAddress=203.0.113.9\n"));
  EXPECT_NE(e.find("HttpAcceptPort: cannot listen on 203.0.113.9:0"), std::string::npos) << e;
}

TEST(AdminConfig, without_http_accept_port_there_is_no_endpoint) {
  Recorder app;
  auto config = Config::parse(acceptor(""), "a.cfg");
  ASSERT_TRUE(config);
  auto engine = Engine::create(*config, app);
  ASSERT_TRUE(engine);
  EXPECT_EQ((*engine)->admin_port(), 0);
}

}  // namespace
}  // namespace hft::engine
