// hft-admin: the command-line client of an engine's admin endpoint
// (HttpAcceptPort; docs/admin.md).
//
//   hft-admin --port P [--host H] [--token-file F] [--json] sessions
//   hft-admin --port P session ID | engine | metrics
//   hft-admin --port P --token-file F logout ID [--text T] | disconnect ID | enable ID | disable ID [--text T]
//             | reset ID | set-seqnum ID [--sender N] [--target N] | sequence-reset ID --new-seq N [--no-gap-fill]
//             | log-level LEVEL
//
// ID: BeginString:SenderCompID->TargetCompID[:SessionQualifier] as the
// engine names it (hft-admin sessions lists them), or its index there.
// Exit status: 0 done; 1 the server refused or failed (its error printed);
// 2 bad usage or the endpoint cannot be reached.
#include <CLI/CLI.hpp>
#include <httplib.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace {

using nlohmann::json;

std::string url_encode(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '.' || c == '_' || c == '~' || c == '-') {
      out += static_cast<char>(c);
    } else {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", c);
      out += hex;
    }
  }
  return out;
}

std::string number(const json& v) { return v.is_null() ? "-" : v.dump(); }

// Columns left-aligned, widths from the content.
void print_table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width;
  for (const auto& row : rows) {
    width.resize(std::max(width.size(), row.size()));
    for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(width[i] - row[i].size() + 2, ' ');
    }
    std::printf("%s\n", line.c_str());
  }
}

void print_sessions(const json& body) {
  std::vector<std::vector<std::string>> rows{
      {"#", "SESSION", "TYPE", "STATE", "ENABLED", "NEXT-OUT", "NEXT-IN", "MSGS-IN", "MSGS-OUT", "REJECTS",
       "RESENT", "GAPS", "JOURNAL-OUT"}};
  for (const json& s : body["sessions"]) {
    const json& c = s["counters"];
    const json& out = s["journal"]["outbound"];
    rows.push_back({number(s["index"]), s["id"].get<std::string>(), s["connection_type"].get<std::string>(),
                    s["state"].get<std::string>(), s["enabled"].get<bool>() ? "yes" : "NO",
                    number(s["next_sender_seq"]), number(s["next_target_seq"]), number(c["messages_received"]),
                    number(c["messages_sent"]),
                    std::to_string(c["rejects_sent"].get<std::uint64_t>() +
                                   c["business_rejects_sent"].get<std::uint64_t>()),
                    number(c["messages_resent"]), number(c["resend_requests_sent"]),
                    out.is_null() ? "memory" : number(out["bytes"]) + " B"});
  }
  print_table(rows);
}

// "key: value" lines, nested objects indented.
void print_object(const json& o, int indent = 0) {
  for (auto it = o.begin(); it != o.end(); ++it) {
    const std::string pad(static_cast<std::size_t>(indent), ' ');
    if (it.value().is_object()) {
      std::printf("%s%s:\n", pad.c_str(), it.key().c_str());
      print_object(it.value(), indent + 2);
    } else {
      const std::string v = it.value().is_string() ? it.value().get<std::string>() : it.value().dump();
      std::printf("%s%s: %s\n", pad.c_str(), it.key().c_str(), v.c_str());
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App cli{"hft-admin: look at and operate a running libhft engine through its admin endpoint"};
  cli.require_subcommand(1);
  std::string host = "127.0.0.1", token_file, user;
  int port = 0;
  bool raw = false;
  int timeout_s = 10;
  cli.add_option("--host", host, "address of the endpoint (HttpAcceptAddress)")->capture_default_str();
  cli.add_option("--port", port, "port of the endpoint (HttpAcceptPort)")->required();
  cli.add_option("--token-file", token_file, "file holding the token (HttpAdminTokenFile) for commands");
  cli.add_option("--user", user, "who is asking, for the engine's log and audit file (default: $USER)");
  cli.add_flag("--json", raw, "print the server's JSON as it came");
  cli.add_option("--timeout", timeout_s, "seconds to wait for an answer")->capture_default_str();

  std::string id, text, level;
  std::uint64_t sender = 0, target = 0, new_seq = 0;
  bool no_gap_fill = false;
  auto* sessions = cli.add_subcommand("sessions", "every session: state, sequence numbers, counters");
  auto* session = cli.add_subcommand("session", "one session in full");
  auto* engine = cli.add_subcommand("engine", "engine-wide counters and connection figures");
  auto* metrics = cli.add_subcommand("metrics", "the Prometheus text of /metrics");
  auto* logout = cli.add_subcommand("logout", "send a Logout (the session may log on again)");
  auto* disconnect = cli.add_subcommand("disconnect", "close the connection now, without a Logout");
  auto* enable = cli.add_subcommand("enable", "allow a disabled session to log on again");
  auto* disable = cli.add_subcommand("disable", "log the session out and keep it out");
  auto* reset = cli.add_subcommand("reset", "Logout, disconnect, both sequence numbers back to 1");
  auto* set_seqnum = cli.add_subcommand("set-seqnum", "set the next sender and/or target sequence number");
  auto* sequence_reset = cli.add_subcommand("sequence-reset", "send a SequenceReset moving our MsgSeqNum up");
  auto* log_level = cli.add_subcommand("log-level", "change the engine's LogLevel");
  auto* add_session = cli.add_subcommand("add-session", "add the session a config file's one [SESSION] describes");
  auto* remove = cli.add_subcommand("remove", "remove a session (connection closed, its store stays on disk)");
  std::string config_file;
  add_session->add_option("config", config_file, "config file: one [SESSION] (and a [DEFAULT] if it needs one)")
      ->required();
  for (CLI::App* sub : {session, logout, disconnect, enable, disable, reset, set_seqnum, sequence_reset, remove}) {
    sub->add_option("id", id, "BeginString:Sender->Target[:qualifier], or the index in `sessions`")->required();
  }
  logout->add_option("--text", text, "Text (58) of the Logout");
  disable->add_option("--text", text, "Text (58) of the Logout");
  set_seqnum->add_option("--sender", sender, "next MsgSeqNum we send");
  set_seqnum->add_option("--target", target, "next MsgSeqNum we expect");
  sequence_reset->add_option("--new-seq", new_seq, "NewSeqNo (36): our next MsgSeqNum")->required();
  sequence_reset->add_flag("--no-gap-fill", no_gap_fill, "Reset mode (123=N) instead of GapFill");
  log_level->add_option("level", level, "trace, debug, info, warn, error or off")->required();
  CLI11_PARSE(cli, argc, argv);

  httplib::Client client(host, port);
  client.set_connection_timeout(timeout_s, 0);
  client.set_read_timeout(timeout_s, 0);
  httplib::Headers headers;
  if (user.empty() && std::getenv("USER") != nullptr) user = std::getenv("USER");
  if (!user.empty()) headers.emplace("X-Admin-User", user);
  if (!token_file.empty()) {
    std::ifstream f(token_file);
    std::string token;
    if (!f || !std::getline(f, token) || token.empty()) {
      std::fprintf(stderr, "hft-admin: --token-file %s: cannot read a token from it\n", token_file.c_str());
      return 2;
    }
    while (!token.empty() && (token.back() == '\r' || token.back() == ' ')) token.pop_back();
    headers.emplace("Authorization", "Bearer " + token);
  }

  const std::string path_id = "/sessions/" + url_encode(id);
  std::string method = "GET", path;
  json body = json::object();
  if (sessions->parsed()) path = "/sessions";
  else if (session->parsed()) path = path_id;
  else if (engine->parsed()) path = "/engine";
  else if (metrics->parsed()) path = "/metrics";
  else {
    method = "POST";
    if (logout->parsed()) path = path_id + "/logout";
    else if (disconnect->parsed()) path = path_id + "/disconnect";
    else if (enable->parsed()) path = path_id + "/enable";
    else if (disable->parsed()) path = path_id + "/disable";
    else if (reset->parsed()) path = path_id + "/reset";
    else if (set_seqnum->parsed()) path = path_id + "/seqnum";
    else if (sequence_reset->parsed()) path = path_id + "/sequence-reset";
    else if (remove->parsed()) path = path_id + "/remove";
    else if (add_session->parsed()) path = "/sessions";
    else path = "/log-level";
    if (add_session->parsed()) {
      std::ifstream f(config_file);
      if (!f) {
        std::fprintf(stderr, "hft-admin: %s: cannot read the file\n", config_file.c_str());
        return 2;
      }
      body["config"] = std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    }
    if (!text.empty()) body["text"] = text;
    if (sender != 0) body["next_sender"] = sender;
    if (target != 0) body["next_target"] = target;
    if (sequence_reset->parsed()) {
      body["new_seq_no"] = new_seq;
      body["gap_fill"] = !no_gap_fill;
    }
    if (log_level->parsed()) body["level"] = level;
  }
  auto res = method == "GET" ? client.Get(path.c_str(), headers)
                             : client.Post(path.c_str(), headers, body.dump(), "application/json");
  if (!res) {
    std::fprintf(stderr, "hft-admin: %s:%d: %s\n", host.c_str(), port, httplib::to_string(res.error()).c_str());
    return 2;
  }
  if (metrics->parsed() && res->status == 200) {
    std::fwrite(res->body.data(), 1, res->body.size(), stdout);
    return 0;
  }
  const json answer = json::parse(res->body, nullptr, false);
  if (res->status != 200) {
    const std::string why = !answer.is_discarded() && answer.contains("error") ? answer["error"].get<std::string>()
                                                                               : res->body;
    std::fprintf(stderr, "hft-admin: %d: %s\n", res->status, why.c_str());
    return 1;
  }
  if (raw || answer.is_discarded()) {
    std::fwrite(res->body.data(), 1, res->body.size(), stdout);
    return 0;
  }
  if (sessions->parsed()) print_sessions(answer);
  else if (session->parsed() || engine->parsed()) print_object(answer);
  else
    std::printf("%s%s%s\n", answer.contains("session") ? answer["session"].get<std::string>().c_str() : "",
                answer.contains("session") ? ": " : "", answer["result"].get<std::string>().c_str());
  return 0;
}
