// A journal whose file system fills mid-session (label "recovery"): the real
// programs, hft-venue and hft-trader, trade over a journaled session while
// one side's store lives on a small tmpfs that a filler file has nearly
// filled. Orders stream until that side's journal cannot take more; the
// session must then log out and refuse to log on (never process a message
// it could not journal, never answer an order without recording the
// answer); the test frees the space (deletes the filler) and the session
// must reconnect and finish. From both sides' journals afterwards:
//
//   - every order is in the trader's outbound journal exactly once (no
//     order sent twice as new);
//   - the venue's outbound journal has exactly one acknowledgement and one
//     fill for every order: nothing acknowledged or executed twice;
//   - every order reached the venue's inbound journal, some of them as
//     PossDup resends after space returned;
//   - the trader's inbound journal has every order's acknowledgement and fill.
//
// And from the programs: the trader saw every report once (exit status 0,
// duplicates=0); the full side logged the failure with the journal
// directory and the errno, a bounded number of times (per connection, not
// per message), and the journal service's spare failure and its recovery.
//
// Needs root (mount). If the tmpfs cannot be mounted the test fails with the
// reason: it does not skip.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "hft/store/journal_reader.hpp"

extern char** environ;

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr std::uint64_t kOrders = 6000;
constexpr std::size_t kMiB = std::size_t{1} << 20;
// Each side's store: two journals, each an active segment plus the spare the
// journal service prepares (4 x JournalSegmentSize=1M), and half a segment
// more. The first rotation of the busier journal then finds no spare and
// the next segment cannot be created.
constexpr std::size_t kFreeForStore = 4 * kMiB + kMiB / 2;

/// A tmpfs mounted for the test's lifetime.
class Tmpfs {
 public:
  explicit Tmpfs(const std::string& dir) : dir_(dir) {
    fs::create_directories(dir);
    if (::mount("tmpfs", dir.c_str(), "tmpfs", 0, "size=8m") != 0) {
      error_ = std::string("mount -t tmpfs -o size=8m tmpfs ") + dir + ": " + std::strerror(errno) +
               (::geteuid() != 0 ? " (not running as root)" : "");
    }
  }
  ~Tmpfs() {
    if (error_.empty()) ::umount2(dir_.c_str(), MNT_DETACH);
  }
  [[nodiscard]] const std::string& error() const { return error_; }

 private:
  std::string dir_;
  std::string error_;
};

/// A program run in the background, its stdout and stderr in one file;
/// killed if still running when the test ends.
class Program {
 public:
  Program(const std::vector<std::string>& args, const std::string& log) : log_(log) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    std::vector<char*> argv;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    if (posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
  }
  ~Program() {
    if (pid_ > 0 && !done_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status_, 0);
    }
  }
  [[nodiscard]] bool started() const { return pid_ > 0; }
  /// Waits up to `limit` for the exit; the exit status, or -1 if still running.
  int wait(milliseconds limit) {
    const auto end = Clock::now() + limit;
    while (!done_) {
      if (::waitpid(pid_, &status_, WNOHANG) == pid_) {
        done_ = true;
        break;
      }
      if (Clock::now() >= end) return -1;
      std::this_thread::sleep_for(milliseconds(20));
    }
    return WIFEXITED(status_) ? WEXITSTATUS(status_) : 128 + WTERMSIG(status_);
  }
  int stop() {
    if (!done_) ::kill(pid_, SIGTERM);
    const int rc = wait(milliseconds(10'000));
    return rc;
  }
  [[nodiscard]] std::string output() const {
    std::ifstream in(log_);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }

 private:
  std::string log_;
  pid_t pid_ = -1;
  int status_ = 0;
  bool done_ = false;
};

int count_of(const std::string& text, const std::string& needle) {
  int n = 0;
  for (std::size_t pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + 1)) ++n;
  return n;
}

bool wait_until(milliseconds limit, const auto& done) {
  const auto end = Clock::now() + limit;
  while (Clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(milliseconds(20));
  }
  return done();
}

/// Value of `tag` in a FIX message ("" if absent).
std::string_view field(std::string_view msg, std::string_view tag) {
  std::size_t pos = 0;
  while (pos < msg.size()) {
    std::size_t end = msg.find('\x01', pos);
    if (end == std::string_view::npos) end = msg.size();
    const std::string_view f = msg.substr(pos, end - pos);
    if (f.size() > tag.size() && f.substr(0, tag.size()) == tag && f[tag.size()] == '=')
      return f.substr(tag.size() + 1);
    pos = end + 1;
  }
  return {};
}

/// What one journal holds, per order number (ClOrdID 1..kOrders).
struct Orders {
  std::vector<int> orders;  ///< NewOrderSingle records
  std::vector<int> resent;  ///< ... of them with PossDupFlag=Y
  std::vector<int> acks;    ///< ExecutionReport ExecType=0
  std::vector<int> fills;   ///< ExecutionReport ExecType=F
  int resent_reports = 0;   ///< ExecutionReports with PossDupFlag=Y
  std::uint64_t records = 0;
  std::string error;
};

Orders read_orders(const std::string& dir) {
  Orders o;
  o.orders.assign(kOrders + 1, 0);
  o.resent = o.acks = o.fills = o.orders;
  auto reader = hft::store::JournalReader::open(dir);
  if (!reader) {
    o.error = reader.error().message;
    return o;
  }
  hft::store::RecordView r;
  for (;;) {
    const auto next = reader->next(r);
    if (next == hft::store::JournalReader::Next::kEnd) break;
    if (next == hft::store::JournalReader::Next::kCorrupt) {
      o.error = "corrupt record at " + reader->where();
      break;
    }
    if (r.control()) continue;
    ++o.records;
    const std::string_view msg(r.bytes.data(), r.bytes.size());
    const std::string id(field(msg, "11"));
    const std::uint64_t n = id.empty() ? 0 : std::strtoull(id.c_str(), nullptr, 10);
    if (n == 0 || n > kOrders) continue;
    const std::string_view type = field(msg, "35");
    if (type == "D") {
      ++o.orders[n];
      if (field(msg, "43") == "Y") ++o.resent[n];
    } else if (type == "8") {
      if (field(msg, "43") == "Y") ++o.resent_reports;
      const std::string_view exec = field(msg, "150");
      if (exec == "0") ++o.acks[n];
      if (exec == "F") ++o.fills[n];
    }
  }
  return o;
}

/// Order numbers whose count is not in [lo, hi], as text (first few).
std::string outside(const std::vector<int>& counts, int lo, int hi) {
  std::ostringstream s;
  int shown = 0, total = 0;
  for (std::uint64_t i = 1; i <= kOrders; ++i) {
    if (counts[i] >= lo && counts[i] <= hi) continue;
    ++total;
    if (shown++ < 8) s << " " << i << "(x" << counts[i] << ")";
  }
  if (total == 0) return {};
  return std::to_string(total) + " orders:" + s.str();
}

int sum(const std::vector<int>& v) {
  int n = 0;
  for (int x : v) n += x;
  return n;
}

/// Fills the tmpfs at `mount` up to `leave` bytes free with one file.
std::string fill_to(const std::string& mount, const std::string& filler, std::size_t leave) {
  struct statvfs st {};
  if (::statvfs(mount.c_str(), &st) != 0) return "statvfs " + mount + ": " + std::strerror(errno);
  const std::size_t free = static_cast<std::size_t>(st.f_bavail) * st.f_frsize;
  if (free <= leave) return mount + ": only " + std::to_string(free) + " bytes free";
  const int fd = ::open(filler.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return filler + ": " + std::strerror(errno);
  const int err = ::posix_fallocate(fd, 0, static_cast<off_t>(free - leave));
  ::close(fd);
  return err == 0 ? std::string() : filler + ": " + std::strerror(err);
}

class FullTmpfs : public ::testing::Test {
 protected:
  void run(bool venue_full) {
    const std::string work =
        std::string(HFT_FULL_DISK_WORK_DIR) + (venue_full ? "/venue_full" : "/trader_full");
    const std::string mnt = work + "/tmpfs";
    ::umount2(mnt.c_str(), MNT_DETACH);  // left over by an interrupted run
    std::error_code ec;
    fs::remove_all(work, ec);
    fs::create_directories(work);
    Tmpfs tmpfs(mnt);
    ASSERT_TRUE(tmpfs.error().empty())
        << "this test needs a small tmpfs to fill and cannot mount one: " << tmpfs.error();
    const std::string filler = mnt + "/filler";
    const std::string full_store = mnt + (venue_full ? "/venue" : "/trader");
    const std::string venue_store = venue_full ? full_store : work + "/venue";
    const std::string trader_store = venue_full ? work + "/trader" : full_store;
    const std::string fill_error = fill_to(mnt, filler, kFreeForStore);
    ASSERT_TRUE(fill_error.empty()) << fill_error;

    {
      std::ofstream cfg(work + "/venue.cfg");
      cfg << "[DEFAULT]\nNonStopSession=Y\n\n[SESSION]\nConnectionType=acceptor\nBeginString=FIX.4.4\n"
             "SenderCompID=VENUE\nTargetCompID=CLIENT\nHeartBtInt=30\nSocketAcceptPort=0\nUseDataDictionary="
             "N\n"
             "JournalSegmentSize=1M\nFileStorePath="
          << venue_store << "\n";
    }
    const std::string port_file = work + "/venue.port";
    Program venue({HFT_VENUE, "--config", work + "/venue.cfg", "--port-file", port_file},
                  work + "/venue.log");
    ASSERT_TRUE(venue.started());
    ASSERT_TRUE(wait_until(milliseconds(20'000), [&] { return fs::exists(port_file); }))
        << "the venue did not start:\n"
        << venue.output();
    std::string port;
    std::ifstream(port_file) >> port;

    Program trader({HFT_TRADER, "--port", port, "--orders", std::to_string(kOrders), "--rate", "3000",
                    "--show", "0", "--store", trader_store, "--set", "JournalSegmentSize=1M",
                    "--require-fills", "--timeout", "45", "--log-level", "info"},
                   work + "/trader.log");
    ASSERT_TRUE(trader.started());
    Program& full = venue_full ? venue : trader;
    const std::string failure = "Message store failure: journal " + full_store + "/";

    // The journal fills; the session ends and then refuses to log on again.
    ASSERT_TRUE(wait_until(milliseconds(30'000), [&] { return count_of(full.output(), failure) >= 1; }))
        << "no store failure reported by the full side:\n"
        << full.output().substr(0, 4000);
    ASSERT_TRUE(wait_until(milliseconds(15'000), [&] { return count_of(full.output(), failure) >= 2; }))
        << "a logon was accepted while the store was full";
    ASSERT_EQ(::unlink(filler.c_str()), 0) << std::strerror(errno);

    const int trader_rc = trader.wait(milliseconds(50'000));
    const std::string trader_out = trader.output();
    EXPECT_EQ(trader_rc, 0) << "every order must be acknowledged and filled once:\n"
                            << trader_out.substr(trader_out.size() > 3000 ? trader_out.size() - 3000 : 0);
    EXPECT_EQ(venue.stop(), 0);
    const std::string full_out = full.output();

    // Reported with the journal and the errno, per connection, not per message.
    EXPECT_NE(full_out.find(failure), std::string::npos);
    EXPECT_NE(full_out.find("(No space left on device)"), std::string::npos);
    const int failures = count_of(full_out, "Message store failure: journal");
    EXPECT_LE(failures, 60) << "logged per message?";
    EXPECT_NE(full_out.find("cannot prepare the next segment: No space left on device; retrying"),
              std::string::npos)
        << "the journal service's failure is reported";
    EXPECT_NE(full_out.find("next segment prepared again"), std::string::npos) << "and its recovery";
    EXPECT_NE(trader_out.find("duplicates=0 "), std::string::npos);
    EXPECT_NE(trader_out.find("acked=" + std::to_string(kOrders) + " filled=" + std::to_string(kOrders)),
              std::string::npos);

    // FileStorePath holds one directory per session.
    const std::string trader_session = trader_store + "/FIX.4.4-CLIENT-VENUE";
    const std::string venue_session = venue_store + "/FIX.4.4-VENUE-CLIENT";
    const Orders trader_out_j = read_orders(trader_session + "/outbound");
    const Orders trader_in_j = read_orders(trader_session + "/inbound");
    const Orders venue_out_j = read_orders(venue_session + "/outbound");
    const Orders venue_in_j = read_orders(venue_session + "/inbound");
    for (const Orders* o : {&trader_out_j, &trader_in_j, &venue_out_j, &venue_in_j}) ASSERT_EQ(o->error, "");
    EXPECT_EQ(outside(trader_out_j.orders, 1, 1), "")
        << "orders the trader journaled (and sent) other than once";
    EXPECT_EQ(outside(venue_out_j.acks, 1, 1), "") << "orders acknowledged other than once";
    EXPECT_EQ(outside(venue_out_j.fills, 1, 1), "") << "orders executed other than once";
    EXPECT_EQ(outside(venue_in_j.orders, 1, 1000), "") << "orders that never reached the venue's journal";
    if (venue_full) {
      EXPECT_GT(sum(venue_in_j.resent), 0) << "orders resent to the venue after space returned";
    } else {
      EXPECT_GT(trader_in_j.resent_reports, 0) << "reports resent to the trader after space returned";
    }
    EXPECT_EQ(outside(trader_in_j.acks, 1, 1000), "") << "acknowledgements missing from the trader's journal";
    EXPECT_EQ(outside(trader_in_j.fills, 1, 1000), "") << "fills missing from the trader's journal";
  }
};

TEST_F(FullTmpfs, the_venue_store_fills_and_every_order_gets_its_reports_after_space_returns) {
  run(true);
}

TEST_F(FullTmpfs, the_trader_store_fills_and_every_order_gets_its_reports_after_space_returns) {
  run(false);
}

}  // namespace
