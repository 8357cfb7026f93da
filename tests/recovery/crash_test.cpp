// Crash test of the journal: an initiator and an acceptor (apps/crash-peer)
// stream messages both ways over a journaled session (FileStorePath,
// JournalDurability=os) while one side is killed with SIGKILL at random
// points and restarted, once or twice per trial. The killed side recovers its
// sequence numbers from the journal, logs on again, and the two resynchronise
// (ResendRequest, gap fill, PossDup resends). Then both stop cleanly and:
//
//   - `hft-journal audit` passes on both session stores (outbound + inbound);
//   - per direction, every message whose send_app returned kOk reached the
//     other application exactly once (a PossDup delivery of a message already
//     seen is a recognised resend; any other repeat is a duplicate), with
//     the MsgSeqNum it was sent with, in send order; nothing that send_app
//     refused was delivered; a delivered message that the sender's log does
//     not confirm must be the one send_app was inside when the sender was
//     killed (committed, but killed before it could log kOk).
//
// Reproducible: trial i of a side uses seed HFT_CRASH_SEED + i (the seed
// picks the stream length, rate, segment size, number of kills and their
// times). Environment knobs: HFT_CRASH_SEED (base seed), HFT_CRASH_TRIALS
// (trials per side, default 20), HFT_CRASH_ONLY (run only trial i),
// HFT_CRASH_KEEP=1 (keep the work directories of passing trials too).
// A failing trial keeps its directory (logs, journals, audit output).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

std::uint64_t env_u64(const char* name, std::uint64_t fallback) {
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

int run_command(const std::vector<std::string>& args, const std::string& output) {
  Child c;
  if (!c.start(args, output)) return -1;
  while (c.running()) std::this_thread::sleep_for(milliseconds(5));
  return c.describe_exit() == "exit status 0" ? 0 : 1;
}

std::string tail_of(const std::string& path, std::size_t max_lines) {
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

std::vector<LogLine> read_log(const std::string& path) {
  std::vector<LogLine> out;
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::size_t pos = 0;
  while (true) {
    const std::size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) break;  // only complete lines
    std::istringstream s(text.substr(pos, nl - pos));
    pos = nl + 1;
    std::string kind;
    s >> kind;
    LogLine l;
    if (kind == "#") {
      std::string what;
      s >> what;
      if (what == "start") {
        l.kind = '#';
      } else if (what == "logon" || what == "logout") {
        l.kind = what == "logon" ? 'L' : 'O';
        std::string word;
        s >> word >> l.next_sender >> word >> l.next_target;
      } else {
        continue;
      }
    } else if (kind == "A" || kind == "S" || kind == "F" || kind == "R") {
      l.kind = kind[0];
      s >> l.id;
      if (l.kind == 'S' || l.kind == 'R') s >> l.seq;
      if (l.kind == 'R') {
        int pd = 0, end = 0;
        s >> pd >> end;
        l.poss_dup = pd != 0;
        l.end = end != 0;
      }
    } else {
      continue;
    }
    out.push_back(l);
  }
  return out;
}

std::uint64_t accepted_count(const std::vector<LogLine>& log) {
  return static_cast<std::uint64_t>(std::count_if(log.begin(), log.end(), [](const LogLine& l) { return l.kind == 'S'; }));
}
bool end_received(const std::vector<LogLine>& log) {
  return std::any_of(log.begin(), log.end(), [](const LogLine& l) { return l.kind == 'R' && l.end; });
}
/// The last start/logon/logout line, or nullptr.
const LogLine* last_event(const std::vector<LogLine>& log) {
  for (auto it = log.rbegin(); it != log.rend(); ++it) {
    if (it->kind == '#' || it->kind == 'L' || it->kind == 'O') return &*it;
  }
  return nullptr;
}
bool logged_on(const std::vector<LogLine>& log) {
  const LogLine* e = last_event(log);
  return e != nullptr && e->kind == 'L';
}

struct Tally {
  std::uint64_t accepted = 0;        ///< send_app returned kOk
  std::uint64_t delivered = 0;       ///< distinct messages delivered to the receiving application
  std::uint64_t resent_first = 0;    ///< ... of which the first delivery was a PossDup resend
  std::uint64_t duplicates = 0;      ///< PossDup deliveries of messages already seen (recognised)
  std::uint64_t unconfirmed = 0;     ///< delivered, committed by a send killed before it returned
  std::uint64_t failed_sends = 0;    ///< send_app refused (not logged on, ...)
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
void check_direction(const std::vector<LogLine>& sender, const std::vector<LogLine>& receiver, const std::string& name,
                     Tally& t, std::vector<std::string>& errors) {
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
      case '#': close_pending(); break;
      case 'A':
        if (pending != 0) err("sender log: attempt " + std::to_string(pending) + " never resolved before the next");
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
      default: break;
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
        err("message " + std::to_string(l.id) + " delivered again without PossDupFlag (seq " + std::to_string(l.seq) +
            ", first as seq " + std::to_string(it->second.seq) + ")");
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
      err("out of order: message " + std::to_string(l.id) + " (seq " + std::to_string(l.seq) + ") delivered after " +
          std::to_string(last_id) + " (seq " + std::to_string(last_seq) + ")");
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
      err("message " + std::to_string(l.id) + " sent as seq " + std::to_string(a->second.seq) + ", delivered as seq " +
          std::to_string(l.seq));
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
  std::uint64_t count = 0;     // messages per direction before END
  std::uint64_t rate = 0;      // per direction, per second
  std::uint64_t stall_every = 0;  // both peers stop polling for stall_ms after every stall_every sends
  std::uint64_t stall_ms = 0;
  std::string segment_size;
  bool next_expected = false;  // SendNextExpectedMsgSeqNum=Y: gaps are also recovered from the Logon's 789
  std::vector<milliseconds> kill_after;  // first: from the initiator's start; next: from the previous restart
  std::vector<milliseconds> down_for;    // pause before each restart
  /// Scripted trials: extra crash-peer options for the victim's start i (0:
  /// the first start). A victim given a --crash-* option kills itself: the
  /// matching kill_after is then kSelf (wait for it to die).
  std::vector<std::vector<std::string>> victim_options;
};

constexpr milliseconds kSelf{-1};

TrialPlan plan_trial(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto uniform = [&](std::uint64_t lo, std::uint64_t hi) { return std::uniform_int_distribution<std::uint64_t>(lo, hi)(rng); };
  TrialPlan p;
  p.seed = seed;
  // Fast streams and stalls (a peer not polling for a while) leave messages
  // in socket buffers and in flight when the kill comes: they are the ones
  // that must come back as resends.
  p.count = uniform(200, 500);
  p.rate = uniform(0, 3) == 0 ? uniform(500, 1500) : uniform(2000, 6000);
  p.stall_every = uniform(20, 120);
  p.stall_ms = uniform(2, 40);
  p.segment_size = "1M";  // the smallest JournalSegmentSize the config accepts
  const std::uint64_t stream_ms = p.count * 1000 / p.rate + p.count / p.stall_every * p.stall_ms;
  const std::uint64_t kills = uniform(0, 2) == 0 ? 2 : 1;
  // The first kill lands anywhere from logon to a little past the stream's
  // planned end; a second one often lands in the reconnect/resend phase.
  p.kill_after.emplace_back(uniform(20, 300 + stream_ms));
  p.down_for.emplace_back(uniform(0, 300));
  for (std::uint64_t k = 1; k < kills; ++k) {
    p.kill_after.emplace_back(uniform(50, 1500));
    p.down_for.emplace_back(uniform(0, 300));
  }
  p.next_expected = uniform(0, 1) == 1;
  return p;
}

struct TrialResult {
  std::vector<std::string> errors;
  Tally tally;
  std::string dir;
};

class Trial {
 public:
  Trial(Victim victim, const TrialPlan& plan, std::string dir) : victim_(victim), plan_(plan), dir_(std::move(dir)) {}

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
      const auto ilog = read_log(dir_ + "/init/log");
      const auto alog = read_log(dir_ + "/acc/log");
      check_direction(ilog, alog, "orders initiator->acceptor", r.tally, r.errors);
      check_direction(alog, ilog, "reports acceptor->initiator", r.tally, r.errors);
    }
    if (!r.errors.empty()) r.tally.failed_trials = 1;
    return r;
  }

 private:
  std::vector<std::string> args(bool initiator) {
    const bool victim = initiator == (victim_ == Victim::kInitiator);
    const std::size_t start = victim ? victim_starts_++ : 0;
    const std::string side = dir_ + (initiator ? "/init" : "/acc");
    std::vector<std::string> a = {HFT_CRASH_PEER,
                                  "--role", initiator ? "initiator" : "acceptor",
                                  "--store", side + "/store",
                                  "--log", side + "/log",
                                  "--events", side + "/events.log",
                                  "--count", std::to_string(plan_.count),
                                  "--rate", std::to_string(plan_.rate),
                                  "--segment-size", plan_.segment_size,
                                  "--stall-every", std::to_string(plan_.stall_every),
                                  "--stall-ms", std::to_string(plan_.stall_ms),
                                  "--spec-dir", HFT_SPEC_DIR};
    if (plan_.next_expected) a.insert(a.end(), {"--config-extra", "SendNextExpectedMsgSeqNum=Y"});
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
        errors.push_back("acceptor ended at start (" + acceptor_.describe_exit() + "):\n" + tail_of(output, 20));
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
      std::this_thread::sleep_for(std::min(milliseconds(5), std::chrono::duration_cast<milliseconds>(
                                                                 std::max(until - Clock::now(), Clock::duration(0)))));
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
        errors.push_back(std::string("scripted crash: the ") + (victim_ == Victim::kInitiator ? "initiator" : "acceptor") +
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

  /// Runs the plan; true if the streams completed (the logs can be checked).
  bool execute(std::vector<std::string>& errors, Tally& tally) {
    if (!start_acceptor(errors) || !start_initiator(errors)) return false;
    for (std::size_t k = 0; k < plan_.kill_after.size(); ++k) {
      if (plan_.kill_after[k] == kSelf) {
        if (!await_self_kill(errors)) return false;
      } else {
        if (!watch(plan_.kill_after[k], errors)) return false;
        (victim_ == Victim::kInitiator ? initiator_ : acceptor_).kill_now();
      }
      ++tally.kills;
      std::this_thread::sleep_for(plan_.down_for[k]);
      if (victim_ == Victim::kInitiator ? !start_initiator(errors) : !start_acceptor(errors)) return false;
    }
    // Both streams complete: each side had its END accepted and received the other's.
    const auto deadline = Clock::now() + milliseconds(60000);
    while (true) {
      const auto ilog = read_log(dir_ + "/init/log");
      const auto alog = read_log(dir_ + "/acc/log");
      // Logged on again after the last restart, and both streams complete.
      if (logged_on(ilog) && logged_on(alog) && accepted_count(ilog) > plan_.count &&
          accepted_count(alog) > plan_.count && end_received(ilog) && end_received(alog)) {
        break;
      }
      if (Clock::now() > deadline) {
        errors.push_back("streams did not complete within 60 s after the last restart (initiator accepted " +
                         std::to_string(accepted_count(ilog)) + ", acceptor accepted " +
                         std::to_string(accepted_count(alog)) + ", END received by initiator " +
                         (end_received(ilog) ? "yes" : "no") + ", by acceptor " + (end_received(alog) ? "yes" : "no") +
                         ")\n  initiator events:\n" + tail_of(dir_ + "/init/events.log", 15) +
                         "  acceptor events:\n" + tail_of(dir_ + "/acc/events.log", 15));
        return false;
      }
      if (!watch(milliseconds(20), errors)) return false;
    }
    // Clean stop: the initiator logs out, the acceptor answers; then the acceptor.
    if (!initiator_.stop(milliseconds(15000))) {
      errors.push_back("initiator did not stop cleanly (" + initiator_.describe_exit() + "):\n" +
                       tail_of(dir_ + "/init/output.txt", 30));
    }
    if (!acceptor_.stop(milliseconds(15000))) {
      errors.push_back("acceptor did not stop cleanly (" + acceptor_.describe_exit() + "):\n" +
                       tail_of(dir_ + "/acc/output.txt", 30));
    }
    // After the clean Logout both sides agree on the sequence numbers.
    const auto ilog = read_log(dir_ + "/init/log");
    const auto alog = read_log(dir_ + "/acc/log");
    const LogLine* ie = last_event(ilog);
    const LogLine* ae = last_event(alog);
    if (ie == nullptr || ae == nullptr || ie->kind != 'O' || ae->kind != 'O') {
      errors.push_back("the sessions did not end with a logout");
    } else if (ie->next_sender != ae->next_target || ie->next_target != ae->next_sender) {
      errors.push_back("after the logout the sides disagree: initiator next sender/target " +
                       std::to_string(ie->next_sender) + "/" + std::to_string(ie->next_target) + ", acceptor " +
                       std::to_string(ae->next_sender) + "/" + std::to_string(ae->next_target));
    }
    for (const char* side : {"init", "acc"}) {
      const std::string store = dir_ + "/" + side + "/store";
      int audited = 0;
      for (const auto& entry : fs::directory_iterator(store)) {
        if (!entry.is_directory()) continue;
        ++audited;
        const std::string out = dir_ + "/" + side + "/audit-" + entry.path().filename().string() + ".txt";
        const int rc = run_command({HFT_JOURNAL_TOOL, "audit", entry.path().string(), "--dictionary",
                                    std::string(HFT_SPEC_DIR) + "/FIX44.xml"},
                                   out);
        if (rc != 0) errors.push_back("hft-journal audit " + entry.path().string() + " failed:\n" + tail_of(out, 25));
      }
      if (audited == 0) errors.push_back(store + ": no session store to audit");
    }
    return true;
  }

  Victim victim_;
  TrialPlan plan_;
  std::string dir_;
  int port_ = 0;
  std::size_t victim_starts_ = 0;
  Child acceptor_;
  Child initiator_;
};

// ---- the tests --------------------------------------------------------------------

const char* side_name(Victim v) { return v == Victim::kInitiator ? "initiator" : "acceptor"; }

/// Runs one trial, prints its line, turns its errors into test failures.
Tally run_one(Victim victim, const TrialPlan& plan, const std::string& label, bool keep) {
  const char* side = side_name(victim);
  const std::string dir = std::string(HFT_CRASH_WORK_DIR) + "/" + side + "-" + label;
  const auto t0 = Clock::now();
  TrialResult r = Trial(victim, plan, dir).run();
  const auto ms = std::chrono::duration_cast<milliseconds>(Clock::now() - t0).count();
  std::string kills;
  for (std::size_t k = 0; k < plan.kill_after.size(); ++k) {
    kills += (k ? "," : "") + (plan.kill_after[k] == kSelf ? std::string("self") : std::to_string(plan.kill_after[k].count()) + "ms");
  }
  std::printf("[crash] %s %s seed %llu: count %llu rate %llu stall %llu/%llums%s kill at %s: accepted %llu delivered %llu "
              "(first as resend %llu, unconfirmed %llu) dup-resends %llu refused %llu, %lld ms: %s\n",
              side, label.c_str(), static_cast<unsigned long long>(plan.seed),
              static_cast<unsigned long long>(plan.count), static_cast<unsigned long long>(plan.rate),
              static_cast<unsigned long long>(plan.stall_every), static_cast<unsigned long long>(plan.stall_ms),
              plan.next_expected ? " 789" : "", kills.c_str(), static_cast<unsigned long long>(r.tally.accepted),
              static_cast<unsigned long long>(r.tally.delivered), static_cast<unsigned long long>(r.tally.resent_first),
              static_cast<unsigned long long>(r.tally.unconfirmed), static_cast<unsigned long long>(r.tally.duplicates),
              static_cast<unsigned long long>(r.tally.failed_sends), static_cast<long long>(ms),
              r.errors.empty() ? "ok" : "FAILED");
  std::fflush(stdout);
  for (const auto& e : r.errors) {
    ADD_FAILURE() << side << " " << label << " (seed " << plan.seed << ", kept in " << r.dir << "): " << e;
  }
  if (r.errors.empty() && !keep) fs::remove_all(dir);
  return r.tally;
}

void print_total(const char* what, const Tally& total) {
  std::printf("[crash] %s: %llu trials, %llu kills, %llu failed trials; both directions: accepted %llu, "
              "delivered %llu (first as PossDup resend %llu, committed-unconfirmed %llu), PossDup duplicates "
              "recognised %llu, refused sends %llu\n",
              what, static_cast<unsigned long long>(total.trials), static_cast<unsigned long long>(total.kills),
              static_cast<unsigned long long>(total.failed_trials), static_cast<unsigned long long>(total.accepted),
              static_cast<unsigned long long>(total.delivered), static_cast<unsigned long long>(total.resent_first),
              static_cast<unsigned long long>(total.unconfirmed), static_cast<unsigned long long>(total.duplicates),
              static_cast<unsigned long long>(total.failed_sends));
}

void run_random_trials(Victim victim) {
  const std::uint64_t seed = env_u64("HFT_CRASH_SEED", 20260501);
  const std::uint64_t base = seed + (victim == Victim::kInitiator ? 0 : 1000);
  const std::uint64_t trials = env_u64("HFT_CRASH_TRIALS", 20);
  const std::uint64_t only = env_u64("HFT_CRASH_ONLY", UINT64_MAX);
  const bool keep = env_u64("HFT_CRASH_KEEP", 0) != 0;
  Tally total;
  for (std::uint64_t i = 0; i < trials; ++i) {
    if (only != UINT64_MAX && i != only) continue;
    SCOPED_TRACE("rerun with HFT_CRASH_SEED=" + std::to_string(seed) + " HFT_CRASH_ONLY=" + std::to_string(i));
    total.add(run_one(victim, plan_trial(base + i), "trial-" + std::to_string(i), keep));
  }
  print_total((std::string(side_name(victim)) + " killed at random points").c_str(), total);
}

/// A scripted trial: a fast stream with stalls, the victim killing itself
/// at the points `options` give (one entry per start that crashes).
TrialPlan scripted_plan(std::vector<std::vector<std::string>> options) {
  TrialPlan p;
  p.seed = 0;
  p.count = 300;
  p.rate = 3000;
  p.stall_every = 50;
  p.stall_ms = 30;
  p.segment_size = "1M";
  for (std::size_t i = 0; i < options.size(); ++i) {
    p.kill_after.push_back(kSelf);
    p.down_for.emplace_back(100);
  }
  p.victim_options = std::move(options);
  return p;
}

TEST(CrashRecovery, initiator_killed_at_random_points_every_accepted_message_arrives_once_in_order) {
  run_random_trials(Victim::kInitiator);
}

TEST(CrashRecovery, acceptor_killed_at_random_points_every_accepted_message_arrives_once_in_order) {
  run_random_trials(Victim::kAcceptor);
}

// A kill between the inbound journal append and the application's callback:
// the message must be delivered after the restart (as a PossDup resend).
TEST(CrashRecovery, receiver_killed_inside_from_app_gets_that_message_again) {
  for (Victim v : {Victim::kInitiator, Victim::kAcceptor}) {
    run_one(v, scripted_plan({{"--crash-at-delivery", "40"}}), "in-from-app", false);
  }
}

// A kill after the application saw a message but before the session counted
// it: the message comes again as a PossDup resend, which the application
// recognises (a repeat without PossDupFlag would be a duplicate).
TEST(CrashRecovery, receiver_killed_after_from_app_sees_that_message_again_only_as_a_possdup) {
  for (Victim v : {Victim::kInitiator, Victim::kAcceptor}) {
    run_one(v, scripted_plan({{"--crash-after-delivery", "40"}}), "after-from-app", false);
  }
}

// A kill right after send_app returned kOk, before the application noted
// it: the message was committed, so it is delivered, once.
TEST(CrashRecovery, sender_killed_right_after_an_accepted_send_delivers_it_once) {
  for (Victim v : {Victim::kInitiator, Victim::kAcceptor}) {
    run_one(v, scripted_plan({{"--crash-after-send", "60"}}), "after-send", false);
  }
}

// The receiver dies with unread input (a gap), restarts, logs on (the peer's
// Logon is ahead of the gap), and dies again on the first resent message
// while the gap is being filled; after the second restart nothing is missing.
TEST(CrashRecovery, receiver_killed_while_a_gap_is_being_filled_loses_nothing) {
  for (Victim v : {Victim::kInitiator, Victim::kAcceptor}) {
    run_one(v, scripted_plan({{"--crash-after-stall", "2"}, {"--crash-at-delivery", "1"}}), "during-gap-fill", false);
  }
}

}  // namespace
