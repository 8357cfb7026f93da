// Shared parts of the crash tests (crash_test.cpp: one session;
// many_sessions_crash_test.cpp: many sessions in one engine per side): the
// peer processes, the peers' logs (format in apps/crash-peer/main.cpp), the
// exactly-once checker of one direction of one session, and a trial that
// starts an acceptor and an initiator crash-peer, kills one of them with
// SIGKILL at the plan's points, restarts it, stops both cleanly and checks
// every session (logout agreement, `hft-journal audit` of every store, the
// checker per direction).
//
// The including file defines HFT_CRASH_PEER, HFT_JOURNAL_TOOL, HFT_SPEC_DIR
// and HFT_CRASH_WORK_DIR (CMake).
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

extern char** environ;

namespace hft::crash_test {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

inline std::uint64_t env_u64(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == 0) return fallback;
  return std::strtoull(v, nullptr, 10);
}

// ---- child processes -----------------------------------------------------------

/// A peer process. The destructor kills it, so a failed assertion never
/// leaves one running.
class Child {
 public:
  Child() = default;
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  ~Child() { kill_now(); }

  /// Starts `args` with stdout and stderr appended to `output`.
  bool start(const std::vector<std::string>& args, const std::string& output) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, output.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    const int rc = posix_spawn(&pid_, argv[0], &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) pid_ = -1;
    exited_ = false;
    return rc == 0;
  }
  /// False once the process has ended (status() then says how).
  bool running() {
    if (pid_ <= 0 || exited_) return false;
    if (::waitpid(pid_, &status_, WNOHANG) == pid_) exited_ = true;
    return !exited_;
  }
  void kill_now() {
    if (!running()) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, &status_, 0);
    exited_ = true;
  }
  /// SIGTERM, then waits up to `timeout` (SIGKILL after it). True if it
  /// exited by itself with status 0.
  bool stop(milliseconds timeout) {
    if (!running()) return exited_ && WIFEXITED(status_) && WEXITSTATUS(status_) == 0;
    ::kill(pid_, SIGTERM);
    const auto deadline = Clock::now() + timeout;
    while (Clock::now() < deadline) {
      if (!running()) return WIFEXITED(status_) && WEXITSTATUS(status_) == 0;
      std::this_thread::sleep_for(milliseconds(5));
    }
    kill_now();
    return false;
  }
  [[nodiscard]] std::string describe_exit() const {
    if (!exited_) return "running";
    if (WIFEXITED(status_)) return "exit status " + std::to_string(WEXITSTATUS(status_));
    if (WIFSIGNALED(status_)) return "killed by signal " + std::to_string(WTERMSIG(status_));
    return "ended";
  }

 private:
  pid_t pid_ = -1;
  int status_ = 0;
  bool exited_ = true;
};

inline int run_command(const std::vector<std::string>& args, const std::string& output) {
  Child c;
  if (!c.start(args, output)) return -1;
  while (c.running()) std::this_thread::sleep_for(milliseconds(5));
  return c.describe_exit() == "exit status 0" ? 0 : 1;
}

/// Runs every command of `commands` (command i's output appended to
/// `outputs[i]`), at most `parallel` at a time; returns each one's result as
/// run_command does (0: exit status 0).
inline std::vector<int> run_commands(const std::vector<std::vector<std::string>>& commands,
                                     const std::vector<std::string>& outputs, std::size_t parallel) {
  std::vector<int> rcs(commands.size(), -1);
  std::vector<std::unique_ptr<Child>> slots(std::max<std::size_t>(parallel, 1));
  std::vector<std::size_t> running(slots.size(), SIZE_MAX);
  std::size_t next = 0, done = 0;
  while (done < commands.size()) {
    for (std::size_t s = 0; s < slots.size(); ++s) {
      if (running[s] != SIZE_MAX && !slots[s]->running()) {
        rcs[running[s]] = slots[s]->describe_exit() == "exit status 0" ? 0 : 1;
        running[s] = SIZE_MAX;
        ++done;
      }
      if (running[s] == SIZE_MAX && next < commands.size()) {
        slots[s] = std::make_unique<Child>();
        if (slots[s]->start(commands[next], outputs[next])) {
          running[s] = next;
        } else {
          ++done;  // rcs[next] stays -1
        }
        ++next;
      }
    }
    std::this_thread::sleep_for(milliseconds(1));
  }
  return rcs;
}

inline std::string tail_of(const std::string& path, std::size_t max_lines) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  std::string out;
  for (std::size_t i = lines.size() > max_lines ? lines.size() - max_lines : 0; i < lines.size(); ++i) {
    out += "    | " + lines[i] + "\n";
  }
  return out;
}

// ---- the peers' logs (format in apps/crash-peer/main.cpp) --------------------------

struct LogLine {
  char kind = 0;  // 'A', 'S', 'F', 'R'; '#' "# start", 'L' "# logon", 'O' "# logout"
  std::uint64_t id = 0;
  std::uint64_t seq = 0;
  bool poss_dup = false;
  bool end = false;
  std::uint64_t next_sender = 0;  // "# logon"/"# logout": the session's next seqs
  std::uint64_t next_target = 0;
};

/// The complete lines of the log at `path` (a line being written when its
/// process was killed does not count). Parsed without streams: with many
/// sessions the test reads every session's log every few milliseconds.
inline std::vector<LogLine> read_log(const std::string& path) {
  std::vector<LogLine> out;
  std::ifstream in(path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::size_t pos = 0;
  while (true) {
    const std::size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) break;  // only complete lines
    const char* p = text.data() + pos;
    const char* const line_end = text.data() + nl;
    pos = nl + 1;
    auto word = [&]() -> std::string_view {
      while (p < line_end && *p == ' ') ++p;
      const char* w = p;
      while (p < line_end && *p != ' ') ++p;
      return {w, static_cast<std::size_t>(p - w)};
    };
    auto number = [&]() -> std::uint64_t {
      const std::string_view w = word();
      std::uint64_t v = 0;
      std::from_chars(w.data(), w.data() + w.size(), v);
      return v;
    };
    const std::string_view kind = word();
    LogLine l;
    if (kind == "#") {
      const std::string_view what = word();
      if (what == "start") {
        l.kind = '#';
      } else if (what == "logon" || what == "logout") {
        l.kind = what == "logon" ? 'L' : 'O';
        (void)word();
        l.next_sender = number();
        (void)word();
        l.next_target = number();
      } else {
        continue;
      }
    } else if (kind == "A" || kind == "S" || kind == "F" || kind == "R") {
      l.kind = kind[0];
      l.id = number();
      if (l.kind == 'S' || l.kind == 'R') l.seq = number();
      if (l.kind == 'R') {
        l.poss_dup = number() != 0;
        l.end = number() != 0;
      }
    } else {
      continue;
    }
    out.push_back(l);
  }
  return out;
}

inline std::uint64_t accepted_count(const std::vector<LogLine>& log) {
  return static_cast<std::uint64_t>(
      std::count_if(log.begin(), log.end(), [](const LogLine& l) { return l.kind == 'S'; }));
}
inline bool end_received(const std::vector<LogLine>& log) {
  return std::any_of(log.begin(), log.end(), [](const LogLine& l) { return l.kind == 'R' && l.end; });
}
/// The last start/logon/logout line, or nullptr.
inline const LogLine* last_event(const std::vector<LogLine>& log) {
  for (auto it = log.rbegin(); it != log.rend(); ++it) {
    if (it->kind == '#' || it->kind == 'L' || it->kind == 'O') return &*it;
  }
  return nullptr;
}
inline bool logged_on(const std::vector<LogLine>& log) {
  const LogLine* e = last_event(log);
  return e != nullptr && e->kind == 'L';
}

struct Tally {
  std::uint64_t accepted = 0;      ///< send_app returned kOk
  std::uint64_t delivered = 0;     ///< distinct messages delivered to the receiving application
  std::uint64_t resent_first = 0;  ///< ... of which the first delivery was a PossDup resend
  std::uint64_t duplicates = 0;    ///< PossDup deliveries of messages already seen (recognised)
  std::uint64_t unconfirmed = 0;   ///< delivered, committed by a send killed before it returned
  std::uint64_t failed_sends = 0;  ///< send_app refused (not logged on, ...)
  std::uint64_t kills = 0;
  std::uint64_t trials = 0;
  std::uint64_t failed_trials = 0;

  void add(const Tally& o) {
    accepted += o.accepted;
    delivered += o.delivered;
    resent_first += o.resent_first;
    duplicates += o.duplicates;
    unconfirmed += o.unconfirmed;
    failed_sends += o.failed_sends;
    kills += o.kills;
    trials += o.trials;
    failed_trials += o.failed_trials;
  }
};

/// Checks one direction: `sender`'s log against `receiver`'s. Appends what
/// is wrong to `errors` (prefixed with `name`).
inline void check_direction(const std::vector<LogLine>& sender, const std::vector<LogLine>& receiver,
                            const std::string& name, Tally& t, std::vector<std::string>& errors) {
  enum class State { kPending, kOk, kFailed, kUnconfirmed };
  struct Attempt {
    State state = State::kPending;
    std::uint64_t seq = 0;
  };
  std::map<std::uint64_t, Attempt> attempts;
  std::vector<std::uint64_t> ok_order;
  std::uint64_t pending = 0;
  auto err = [&](const std::string& e) {
    if (errors.size() < 40) errors.push_back(name + ": " + e);
  };
  auto close_pending = [&] {
    if (pending != 0) attempts[pending].state = State::kUnconfirmed;
    pending = 0;
  };
  for (const LogLine& l : sender) {
    switch (l.kind) {
      case '#':
        close_pending();
        break;
      case 'A':
        if (pending != 0)
          err("sender log: attempt " + std::to_string(pending) + " never resolved before the next");
        if (attempts.count(l.id) != 0) err("sender log: id " + std::to_string(l.id) + " attempted twice");
        attempts[l.id] = Attempt{};
        pending = l.id;
        break;
      case 'S':
      case 'F':
        if (l.id != pending) {
          err("sender log: result for " + std::to_string(l.id) + " without its attempt");
          break;
        }
        attempts[l.id].state = l.kind == 'S' ? State::kOk : State::kFailed;
        attempts[l.id].seq = l.seq;
        if (l.kind == 'S') {
          ok_order.push_back(l.id);
          ++t.accepted;
        } else {
          ++t.failed_sends;
        }
        pending = 0;
        break;
      default:
        break;
    }
  }
  close_pending();

  struct Delivery {
    std::uint64_t seq = 0;
    bool poss_dup = false;
  };
  std::map<std::uint64_t, Delivery> seen;
  std::uint64_t last_id = 0, last_seq = 0;
  bool after_end = false;
  for (const LogLine& l : receiver) {
    if (l.kind != 'R') continue;
    auto it = seen.find(l.id);
    if (it != seen.end()) {
      if (!l.poss_dup) {
        err("message " + std::to_string(l.id) + " delivered again without PossDupFlag (seq " +
            std::to_string(l.seq) + ", first as seq " + std::to_string(it->second.seq) + ")");
      } else {
        ++t.duplicates;
        if (l.seq != it->second.seq) {
          err("PossDup resend of message " + std::to_string(l.id) + " carries seq " + std::to_string(l.seq) +
              ", first delivered as seq " + std::to_string(it->second.seq));
        }
      }
      continue;
    }
    seen[l.id] = Delivery{l.seq, l.poss_dup};
    ++t.delivered;
    if (l.poss_dup) ++t.resent_first;
    if (l.id <= last_id || l.seq <= last_seq) {
      err("out of order: message " + std::to_string(l.id) + " (seq " + std::to_string(l.seq) +
          ") delivered after " + std::to_string(last_id) + " (seq " + std::to_string(last_seq) + ")");
    }
    if (after_end && !l.end) err("message " + std::to_string(l.id) + " delivered after the END message");
    after_end = after_end || l.end;
    last_id = std::max(last_id, l.id);
    last_seq = std::max(last_seq, l.seq);
    auto a = attempts.find(l.id);
    if (a == attempts.end()) {
      err("message " + std::to_string(l.id) + " delivered but never sent");
    } else if (a->second.state == State::kFailed) {
      err("message " + std::to_string(l.id) + " delivered although send_app refused it");
    } else if (a->second.state == State::kUnconfirmed) {
      ++t.unconfirmed;
    } else if (a->second.seq != l.seq) {
      err("message " + std::to_string(l.id) + " sent as seq " + std::to_string(a->second.seq) +
          ", delivered as seq " + std::to_string(l.seq));
    }
  }
  std::uint64_t lost = 0;
  for (std::uint64_t id : ok_order) {
    if (seen.count(id) == 0) {
      if (lost++ < 5) {
        err("LOST: message " + std::to_string(id) + " (seq " + std::to_string(attempts[id].seq) +
            ") accepted by send_app, never delivered");
      }
    }
  }
  if (lost > 5) err(std::to_string(lost) + " accepted messages lost in all");
  if (!after_end) err("the END message was not delivered");
}

// ---- one trial ----------------------------------------------------------------------

enum class Victim { kInitiator, kAcceptor };

struct TrialPlan {
  std::uint64_t seed = 0;
  std::size_t sessions = 1;  // sessions per engine (crash-peer --sessions): CLIENT1..N <-> VENUE
  std::uint64_t count = 0;   // messages per direction (per session) before END
  std::uint64_t rate = 0;    // per direction and session, per second
  std::uint64_t stall_every =
      0;  // both peers stop polling for stall_ms after every stall_every sends (all sessions)
  std::uint64_t stall_ms = 0;
  std::string segment_size;      // crash-peer --segment-size: JournalSegmentSize, "default": the engine's
  bool next_expected = false;    // SendNextExpectedMsgSeqNum=Y: gaps are also recovered from the Logon's 789
  std::string config_extra;      // more Key=Value lines for both peers' [DEFAULT] (newline-terminated)
  bool pace_from_logon = false;  // crash-peer --pace-from logon (default: from the process's start)
  /// When to kill the victim: a time (the first from the initiator's start,
  /// the next from the previous restart), kSelf or kMidStream.
  std::vector<milliseconds> kill_after;
  std::vector<milliseconds> down_for;  // pause before each restart
  /// kMidStream: the kill comes once every session of both sides has
  /// accepted at least this many messages since the victim's last start, and
  /// none has had its END accepted (every session is mid-stream both ways).
  std::uint64_t mid_stream_min = 0;
  /// Scripted trials: extra crash-peer options for the victim's start i (0:
  /// the first start). A victim given a --crash-* option kills itself: the
  /// matching kill_after is then kSelf (wait for it to die).
  std::vector<std::vector<std::string>> victim_options;
};

inline constexpr milliseconds kSelf{-1};
inline constexpr milliseconds kMidStream{-2};

struct TrialResult {
  std::vector<std::string> errors;
  Tally tally;
  std::string dir;
};

class Trial {
 public:
  Trial(Victim victim, const TrialPlan& plan, std::string dir)
      : victim_(victim), plan_(plan), dir_(std::move(dir)) {}

  TrialResult run() {
    TrialResult r;
    r.dir = dir_;
    r.tally.trials = 1;
    fs::remove_all(dir_);
    fs::create_directories(dir_ + "/init");
    fs::create_directories(dir_ + "/acc");
    // The logs are checked whenever the streams completed, even if the
    // clean stop or the audit failed: a loss is worth knowing about too.
    if (execute(r.errors, r.tally)) {
      for (std::size_t k = 1; k <= plan_.sessions; ++k) {
        const auto ilog = read_log(log_path("init", k));
        const auto alog = read_log(log_path("acc", k));
        const std::string who = plan_.sessions == 1 ? std::string() : client(k) + " ";
        check_direction(ilog, alog, who + "orders initiator->acceptor", r.tally, r.errors);
        check_direction(alog, ilog, who + "reports acceptor->initiator", r.tally, r.errors);
      }
    }
    if (!r.errors.empty()) r.tally.failed_trials = 1;
    return r;
  }

 private:
  /// Session k's CompID on the initiator side (crash-peer's naming).
  [[nodiscard]] std::string client(std::size_t k) const {
    return plan_.sessions == 1 ? std::string("CLIENT") : "CLIENT" + std::to_string(k);
  }
  /// Session k's log on `side` ("init" or "acc").
  [[nodiscard]] std::string log_path(const char* side, std::size_t k) const {
    const std::string log = dir_ + "/" + side + "/log";
    return plan_.sessions == 1 ? log : log + "/" + client(k) + ".log";
  }

  std::vector<std::string> args(bool initiator) {
    const bool victim = initiator == (victim_ == Victim::kInitiator);
    const std::size_t start = victim ? victim_starts_++ : 0;
    const std::string side = dir_ + (initiator ? "/init" : "/acc");
    std::vector<std::string> a = {HFT_CRASH_PEER,
                                  "--role",
                                  initiator ? "initiator" : "acceptor",
                                  "--store",
                                  side + "/store",
                                  "--log",
                                  side + "/log",
                                  "--events",
                                  side + "/events.log",
                                  "--count",
                                  std::to_string(plan_.count),
                                  "--rate",
                                  std::to_string(plan_.rate),
                                  "--stall-every",
                                  std::to_string(plan_.stall_every),
                                  "--segment-size",
                                  plan_.segment_size,
                                  "--stall-ms",
                                  std::to_string(plan_.stall_ms),
                                  "--spec-dir",
                                  HFT_SPEC_DIR};
    if (plan_.sessions != 1) a.insert(a.end(), {"--sessions", std::to_string(plan_.sessions)});
    if (plan_.pace_from_logon) a.insert(a.end(), {"--pace-from", "logon"});
    const std::string extra =
        (plan_.next_expected ? "SendNextExpectedMsgSeqNum=Y\n" : "") + plan_.config_extra;
    if (!extra.empty()) a.insert(a.end(), {"--config-extra", extra});
    if (victim && start < plan_.victim_options.size()) {
      a.insert(a.end(), plan_.victim_options[start].begin(), plan_.victim_options[start].end());
    }
    if (initiator) {
      a.insert(a.end(), {"--port", std::to_string(port_)});
    } else {
      a.insert(a.end(), {"--port", std::to_string(port_), "--port-file", side + "/port"});
    }
    return a;
  }

  bool start_acceptor(std::vector<std::string>& errors) {
    const std::string port_file = dir_ + "/acc/port";
    const std::string output = dir_ + "/acc/output.txt";
    fs::remove(port_file);
    const auto arguments = args(false);
    if (!acceptor_.start(arguments, output)) {
      errors.push_back("cannot start the acceptor");
      return false;
    }
    const auto deadline = Clock::now() + milliseconds(20000);
    int bind_retries = 0;
    while (Clock::now() < deadline) {
      if (!acceptor_.running()) {
        // A restart binds the port the first process got; in the rare case
        // something else took it meanwhile, wait and try again.
        if (port_ != 0 && acceptor_.describe_exit() == "exit status 2" &&
            tail_of(output, 3).find("in use") != std::string::npos && ++bind_retries <= 20) {
          std::this_thread::sleep_for(milliseconds(250));
          if (acceptor_.start(arguments, output)) continue;
        }
        errors.push_back("acceptor ended at start (" + acceptor_.describe_exit() + "):\n" +
                         tail_of(output, 20));
        return false;
      }
      std::ifstream in(port_file);
      int port = 0;
      if (in >> port && port > 0) {
        port_ = port;
        return true;
      }
      std::this_thread::sleep_for(milliseconds(2));
    }
    errors.push_back("acceptor did not listen within 20 s");
    return false;
  }

  bool start_initiator(std::vector<std::string>& errors) {
    if (!initiator_.start(args(true), dir_ + "/init/output.txt")) {
      errors.push_back("cannot start the initiator");
      return false;
    }
    return true;
  }

  /// Sleeps `d`, failing if a peer that was not killed ends meanwhile.
  bool watch(milliseconds d, std::vector<std::string>& errors) {
    const auto until = Clock::now() + d;
    do {
      if (!alive(errors)) return false;
      std::this_thread::sleep_for(std::min(milliseconds(5), std::chrono::duration_cast<milliseconds>(std::max(
                                                                until - Clock::now(), Clock::duration(0)))));
    } while (Clock::now() < until);
    return alive(errors);
  }

  bool alive(std::vector<std::string>& errors) {
    if (!acceptor_.running()) {
      errors.push_back("acceptor ended by itself (" + acceptor_.describe_exit() + "):\n" +
                       tail_of(dir_ + "/acc/output.txt", 30));
      return false;
    }
    if (!initiator_.running()) {
      errors.push_back("initiator ended by itself (" + initiator_.describe_exit() + "):\n" +
                       tail_of(dir_ + "/init/output.txt", 30));
      return false;
    }
    return true;
  }

  /// Waits up to 30 s for the victim to kill itself (SIGKILL), the other
  /// peer staying up.
  bool await_self_kill(std::vector<std::string>& errors) {
    Child& victim = victim_ == Victim::kInitiator ? initiator_ : acceptor_;
    Child& other = victim_ == Victim::kInitiator ? acceptor_ : initiator_;
    const auto deadline = Clock::now() + milliseconds(30000);
    while (victim.running()) {
      if (!other.running() || Clock::now() > deadline) {
        errors.push_back(std::string("scripted crash: the ") +
                         (victim_ == Victim::kInitiator ? "initiator" : "acceptor") +
                         " did not kill itself in time (other peer " + other.describe_exit() + ")");
        return false;
      }
      std::this_thread::sleep_for(milliseconds(2));
    }
    if (victim.describe_exit() != "killed by signal 9") {
      errors.push_back("scripted crash: the victim ended with " + victim.describe_exit());
      return false;
    }
    return true;
  }

  /// Accepted sends per session on `side`, from the logs as they are now.
  std::vector<std::uint64_t> accepted_now(const char* side) const {
    std::vector<std::uint64_t> out;
    for (std::size_t k = 1; k <= plan_.sessions; ++k)
      out.push_back(accepted_count(read_log(log_path(side, k))));
    return out;
  }

  /// kMidStream: waits (up to 60 s) until every session of both sides has
  /// accepted at least plan_.mid_stream_min sends since `base_*`, none past
  /// its END; then kills the victim at once and checks from the victim's
  /// own logs that none of its sessions had its END accepted by then.
  bool kill_mid_stream(const std::vector<std::uint64_t>& base_init,
                       const std::vector<std::uint64_t>& base_acc, std::vector<std::string>& errors) {
    const auto deadline = Clock::now() + milliseconds(60000);
    std::string behind;
    while (true) {
      const auto init = accepted_now("init");
      const auto acc = accepted_now("acc");
      bool all = true;
      std::string late;
      for (std::size_t i = 0; i < plan_.sessions; ++i) {
        if (init[i] > plan_.count || acc[i] > plan_.count) {
          late = client(i + 1) + " already had its END accepted (initiator " + std::to_string(init[i]) +
                 ", acceptor " + std::to_string(acc[i]) + " sends)";
          break;
        }
        if (init[i] < base_init[i] + plan_.mid_stream_min || acc[i] < base_acc[i] + plan_.mid_stream_min) {
          all = false;
          behind = client(i + 1) + ": initiator " +
                   std::to_string(init[i] - std::min(init[i], base_init[i])) + ", acceptor " +
                   std::to_string(acc[i] - std::min(acc[i], base_acc[i]));
        }
      }
      if (!late.empty()) {
        errors.push_back("mid-stream kill: too late, " + late +
                         "; count more messages or lower mid_stream_min");
        return false;
      }
      if (all) break;
      if (Clock::now() > deadline) {
        errors.push_back("mid-stream kill: not every session reached " +
                         std::to_string(plan_.mid_stream_min) + " sends since the last start within 60 s (" +
                         behind + ")");
        return false;
      }
      if (!watch(milliseconds(plan_.sessions == 1 ? 5 : 20), errors)) return false;
    }
    Child& victim = victim_ == Victim::kInitiator ? initiator_ : acceptor_;
    victim.kill_now();
    const auto after = accepted_now(victim_ == Victim::kInitiator ? "init" : "acc");
    std::uint64_t lo = UINT64_MAX, hi = 0;
    for (std::size_t i = 0; i < plan_.sessions; ++i) {
      if (after[i] > plan_.count) {
        errors.push_back(
            "mid-stream kill: " + client(i + 1) +
            " of the victim had its END accepted before the kill landed; the kill did not hit every "
            "session mid-stream");
        return false;
      }
      lo = std::min(lo, after[i]);
      hi = std::max(hi, after[i]);
    }
    mid_stream_note_ +=
        (mid_stream_note_.empty() ? "" : "; ") + std::to_string(lo) + ".." + std::to_string(hi);
    return true;
  }

  /// Runs the plan; true if the streams completed (the logs can be checked).
  bool execute(std::vector<std::string>& errors, Tally& tally) {
    if (!start_acceptor(errors) || !start_initiator(errors)) return false;
    std::vector<std::uint64_t> base_init(plan_.sessions, 0), base_acc(plan_.sessions, 0);
    for (std::size_t k = 0; k < plan_.kill_after.size(); ++k) {
      if (plan_.kill_after[k] == kSelf) {
        if (!await_self_kill(errors)) return false;
      } else if (plan_.kill_after[k] == kMidStream) {
        if (!kill_mid_stream(base_init, base_acc, errors)) return false;
      } else {
        if (!watch(plan_.kill_after[k], errors)) return false;
        (victim_ == Victim::kInitiator ? initiator_ : acceptor_).kill_now();
      }
      ++tally.kills;
      std::this_thread::sleep_for(plan_.down_for[k]);
      if (victim_ == Victim::kInitiator ? !start_initiator(errors) : !start_acceptor(errors)) return false;
      if (k + 1 < plan_.kill_after.size() && plan_.kill_after[k + 1] == kMidStream) {
        base_init = accepted_now("init");
        base_acc = accepted_now("acc");
      }
    }
    // Every stream complete: each session on each side had its END accepted
    // and received the other's, logged on again after the last restart. A
    // session seen complete stays so (its lines are never taken back).
    const auto deadline = Clock::now() + milliseconds(60000);
    std::vector<bool> complete(plan_.sessions, false);
    std::size_t remaining = plan_.sessions;
    while (true) {
      std::string first_incomplete;
      for (std::size_t k = 1; k <= plan_.sessions; ++k) {
        if (complete[k - 1]) continue;
        const auto ilog = read_log(log_path("init", k));
        const auto alog = read_log(log_path("acc", k));
        if (logged_on(ilog) && logged_on(alog) && accepted_count(ilog) > plan_.count &&
            accepted_count(alog) > plan_.count && end_received(ilog) && end_received(alog)) {
          complete[k - 1] = true;
          --remaining;
        } else if (first_incomplete.empty()) {
          first_incomplete = (plan_.sessions == 1 ? std::string() : client(k) + ": ") +
                             "initiator accepted " + std::to_string(accepted_count(ilog)) +
                             ", acceptor accepted " + std::to_string(accepted_count(alog)) +
                             ", END received by initiator " + (end_received(ilog) ? "yes" : "no") +
                             ", by acceptor " + (end_received(alog) ? "yes" : "no") +
                             ", logged on: initiator " + (logged_on(ilog) ? "yes" : "no") + ", acceptor " +
                             (logged_on(alog) ? "yes" : "no");
        }
      }
      if (remaining == 0) break;
      if (Clock::now() > deadline) {
        errors.push_back("streams did not complete within 60 s after the last restart (" +
                         std::to_string(remaining) + " of " + std::to_string(plan_.sessions) +
                         " sessions incomplete; first: " + first_incomplete + ")\n  initiator events:\n" +
                         tail_of(dir_ + "/init/events.log", 15) + "  acceptor events:\n" +
                         tail_of(dir_ + "/acc/events.log", 15));
        return false;
      }
      if (!watch(milliseconds(plan_.sessions == 1 ? 20 : 50), errors)) return false;
    }
    // Clean stop: the initiator logs out, the acceptor answers; then the acceptor.
    // A clean stop of N sessions (logouts, then closing 2N journals) takes
    // time: 7 s per side for 1,000 sessions on an idle host.
    const milliseconds stop_timeout(
        std::max<std::int64_t>(15000, 30 * static_cast<std::int64_t>(plan_.sessions)));
    if (!initiator_.stop(stop_timeout)) {
      errors.push_back("initiator did not stop cleanly (" + initiator_.describe_exit() + "):\n" +
                       tail_of(dir_ + "/init/output.txt", 30));
    }
    if (!acceptor_.stop(stop_timeout)) {
      errors.push_back("acceptor did not stop cleanly (" + acceptor_.describe_exit() + "):\n" +
                       tail_of(dir_ + "/acc/output.txt", 30));
    }
    // After the clean Logout both sides of every session agree on the
    // sequence numbers.
    for (std::size_t k = 1; k <= plan_.sessions; ++k) {
      const auto ilog = read_log(log_path("init", k));
      const auto alog = read_log(log_path("acc", k));
      const LogLine* ie = last_event(ilog);
      const LogLine* ae = last_event(alog);
      const std::string who = plan_.sessions == 1 ? std::string() : client(k) + ": ";
      if (ie == nullptr || ae == nullptr || ie->kind != 'O' || ae->kind != 'O') {
        errors.push_back(who + "the sessions did not end with a logout");
      } else if (ie->next_sender != ae->next_target || ie->next_target != ae->next_sender) {
        errors.push_back(who + "after the logout the sides disagree: initiator next sender/target " +
                         std::to_string(ie->next_sender) + "/" + std::to_string(ie->next_target) +
                         ", acceptor " + std::to_string(ae->next_sender) + "/" +
                         std::to_string(ae->next_target));
      }
    }
    // Every session's store on both sides, by the directory the engine
    // derives from the session ID; a store missing or one too many is an error.
    std::vector<std::string> stores, outputs, logs;
    std::vector<std::vector<std::string>> audits;
    for (const char* side : {"init", "acc"}) {
      const std::string root = dir_ + "/" + side + "/store";
      std::vector<std::string> expected;
      for (std::size_t k = 1; k <= plan_.sessions; ++k) {
        expected.push_back(std::string("FIX.4.4-") +
                           (side == std::string("init") ? client(k) + "-VENUE" : "VENUE-" + client(k)));
      }
      // JournalLayout=shared: the sessions' messages are in one journal
      // beside their directories (which hold seqnums.dat); the audit of a
      // session directory reads its stream from it.
      const bool shared = plan_.config_extra.find("JournalLayout=shared") != std::string::npos;
      if (shared && !fs::is_directory(root + "/shared-journal"))
        errors.push_back(root + ": no shared-journal");
      for (const auto& entry : fs::directory_iterator(root)) {
        const std::string name = entry.path().filename().string();
        if (shared && name == "shared-journal") continue;
        if (std::find(expected.begin(), expected.end(), name) == expected.end()) {
          errors.push_back(root + ": unexpected entry " + name);
        }
      }
      for (std::size_t k = 1; k <= plan_.sessions; ++k) {
        const std::string& name = expected[k - 1];
        const std::string store = root + "/" + name;
        if (!fs::is_directory(store)) {
          errors.push_back(store + ": no session store to audit");
          continue;
        }
        stores.push_back(store);
        logs.push_back(log_path(side, k));
        outputs.push_back(dir_ + "/" + side + "/audit-" + name + ".txt");
        audits.push_back(
            {HFT_JOURNAL_TOOL, "audit", store, "--dictionary", std::string(HFT_SPEC_DIR) + "/FIX44.xml"});
      }
    }
    const auto audit_start = Clock::now();
    const std::vector<int> rcs = run_commands(audits, outputs, 4);
    audit_ms_ = std::chrono::duration_cast<milliseconds>(Clock::now() - audit_start).count();
    for (std::size_t i = 0; i < rcs.size(); ++i) {
      if (rcs[i] == 0) continue;
      // Says whether a kill landed inside a send of this session (its
      // uncommitted claim is what a tail cut would have found), for whoever
      // reads the failure; the audit fails either way.
      std::string in_send;
      const auto log = read_log(logs[i]);
      for (std::size_t j = 0; j + 1 < log.size(); ++j) {
        if (log[j].kind == 'A' && log[j + 1].kind == '#') in_send += " " + std::to_string(log[j].id);
      }
      errors.push_back("hft-journal audit " + stores[i] + " failed" +
                       (in_send.empty() ? std::string()
                                        : " (a kill landed inside send_app of message" + in_send +
                                              " of this session, before its S line)") +
                       ":\n" + tail_of(outputs[i], 25));
    }
    return true;
  }

 public:
  /// kMidStream kills: the victim's accepted sends per session at each such
  /// kill, lowest..highest (empty when the plan has none).
  std::string mid_stream_note_;
  /// How long the audits of every store took.
  long long audit_ms_ = 0;

 private:
  Victim victim_;
  TrialPlan plan_;
  std::string dir_;
  int port_ = 0;
  std::size_t victim_starts_ = 0;
  Child acceptor_;
  Child initiator_;
};

// ---- running trials -----------------------------------------------------------------

inline const char* side_name(Victim v) {
  return v == Victim::kInitiator ? "initiator" : "acceptor";
}

/// Runs one trial, prints its line, turns its errors into test failures.
inline Tally run_one(Victim victim, const TrialPlan& plan, const std::string& label, bool keep) {
  const char* side = side_name(victim);
  const std::string dir = std::string(HFT_CRASH_WORK_DIR) + "/" + side + "-" + label;
  const auto t0 = Clock::now();
  Trial trial(victim, plan, dir);
  TrialResult r = trial.run();
  const auto ms = std::chrono::duration_cast<milliseconds>(Clock::now() - t0).count();
  std::string kills;
  for (std::size_t k = 0; k < plan.kill_after.size(); ++k) {
    const milliseconds at = plan.kill_after[k];
    kills += (k ? "," : "") + (at == kSelf        ? std::string("self")
                               : at == kMidStream ? std::string("mid-stream")
                                                  : std::to_string(at.count()) + "ms");
  }
  if (!trial.mid_stream_note_.empty())
    kills += " (victim's sends per session at the kill: " + trial.mid_stream_note_ + ")";
  std::string sessions;
  if (plan.sessions != 1) sessions = " sessions " + std::to_string(plan.sessions) + " (per session)";
  if (plan.segment_size != "1M") sessions += " segments " + plan.segment_size;
  for (std::size_t at = 0; at < plan.config_extra.size();) {
    const std::size_t nl = std::min(plan.config_extra.find('\n', at), plan.config_extra.size());
    if (nl > at) sessions += " " + plan.config_extra.substr(at, nl - at);
    at = nl + 1;
  }
  std::printf(
      "[crash] %s %s seed %llu:%s count %llu rate %llu stall %llu/%llums%s kill at %s: accepted %llu "
      "delivered %llu "
      "(first as resend %llu, unconfirmed %llu) dup-resends %llu refused %llu, %lld ms (audit %lld ms): %s\n",
      side, label.c_str(), static_cast<unsigned long long>(plan.seed), sessions.c_str(),
      static_cast<unsigned long long>(plan.count), static_cast<unsigned long long>(plan.rate),
      static_cast<unsigned long long>(plan.stall_every), static_cast<unsigned long long>(plan.stall_ms),
      plan.next_expected ? " 789" : "", kills.c_str(), static_cast<unsigned long long>(r.tally.accepted),
      static_cast<unsigned long long>(r.tally.delivered),
      static_cast<unsigned long long>(r.tally.resent_first),
      static_cast<unsigned long long>(r.tally.unconfirmed),
      static_cast<unsigned long long>(r.tally.duplicates),
      static_cast<unsigned long long>(r.tally.failed_sends), static_cast<long long>(ms), trial.audit_ms_,
      r.errors.empty() ? "ok" : "FAILED");
  std::fflush(stdout);
  for (const auto& e : r.errors) {
    ADD_FAILURE() << side << " " << label << " (seed " << plan.seed << ", kept in " << r.dir << "): " << e;
  }
  if (r.errors.empty() && !keep) fs::remove_all(dir);
  return r.tally;
}

inline void print_total(const char* what, const Tally& total) {
  std::printf(
      "[crash] %s: %llu trials, %llu kills, %llu failed trials; both directions: accepted %llu, "
      "delivered %llu (first as PossDup resend %llu, committed-unconfirmed %llu), PossDup duplicates "
      "recognised %llu, refused sends %llu\n",
      what, static_cast<unsigned long long>(total.trials), static_cast<unsigned long long>(total.kills),
      static_cast<unsigned long long>(total.failed_trials), static_cast<unsigned long long>(total.accepted),
      static_cast<unsigned long long>(total.delivered), static_cast<unsigned long long>(total.resent_first),
      static_cast<unsigned long long>(total.unconfirmed), static_cast<unsigned long long>(total.duplicates),
      static_cast<unsigned long long>(total.failed_sends));
}

}  // namespace hft::crash_test
