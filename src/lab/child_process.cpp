#include "hft/lab/child_process.hpp"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <thread>
#include <utility>

#include "hft/lab/proc.hpp"

namespace hft::lab {

namespace fs = std::filesystem;

Expected<std::unique_ptr<ChildProcess>> ChildProcess::start(const ChildSpec& spec) {
  std::unique_ptr<ChildProcess> child(new ChildProcess());
  if (auto started = child->launch(spec); !started) return started.error();
  return child;
}

Expected<void> ChildProcess::launch(const ChildSpec& spec) {
  if (spec.argv.empty()) return Error{"child process: no program to run"};
  name_ = fs::path(spec.argv.front()).filename().string();
  log_path_ = spec.log_path;
  stop_timeout_s_ = spec.stop_timeout_s;
  std::error_code ec;
  fs::remove(spec.port_file, ec);

  // Everything the child needs is prepared before fork(): after it only
  // async-signal-safe calls run.
  std::vector<std::string> args = spec.argv;
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int log_fd = ::open(log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log_fd < 0) return Error{log_path_.string() + ": " + std::strerror(errno)};
  const pid_t parent = ::getpid();
  // The calling (client) thread is pinned; the child must start from the
  // process's own mask (the main thread's) and pin itself (hft-venue --core).
  cpu_set_t mask;
  CPU_ZERO(&mask);
  const bool have_mask = ::sched_getaffinity(parent, sizeof(mask), &mask) == 0;
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(log_fd);
    return Error{std::string("fork: ") + std::strerror(errno)};
  }
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(127);
    ::dup2(log_fd, STDERR_FILENO);
    ::dup2(log_fd, STDOUT_FILENO);
    if (have_mask) ::sched_setaffinity(0, sizeof(mask), &mask);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(log_fd);
  pid_ = pid;

  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(spec.listen_timeout_s);
  for (;;) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      pid_ = -1;
      return Error{name_ + " exited before listening (status " + std::to_string(status) +
                   "): " + log_tail(600)};
    }
    if (spec.max_rss_kib > 0) {
      if (const std::int64_t rss = process_memory(pid).vm_rss_kib; rss > spec.max_rss_kib) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
        pid_ = -1;
        return Error{name_ + "'s resident memory reached " + std::to_string(rss >> 10) +
                     " MiB before it listened, over the limit of " + std::to_string(spec.max_rss_kib >> 10) +
                     " MiB; killed: " + log_tail(300)};
      }
    }
    std::ifstream pf(spec.port_file);
    int port = 0;
    if (pf >> port && port > 0) {
      port_ = static_cast<std::uint16_t>(port);
      return {};
    }
    if (std::chrono::steady_clock::now() > deadline) {
      return Error{name_ + " did not listen within " +
                   std::to_string(static_cast<int>(spec.listen_timeout_s)) + " s: " + log_tail(600)};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0) (void)stop();
}

std::uint64_t ChildProcess::main_thread_cpu_ns() const {
  return pid_ > 0 ? thread_cpu_ns(pid_, pid_) : 0;
}

int ChildProcess::main_thread_cpu() const {
  return pid_ > 0 ? thread_last_cpu(pid_, pid_) : -1;
}

Expected<std::string> ChildProcess::stop() {
  if (pid_ <= 0) return std::string{};
  const pid_t pid = std::exchange(pid_, -1);
  ::kill(pid, SIGTERM);
  int status = 0;
  bool exited = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(stop_timeout_s_);
  while (std::chrono::steady_clock::now() < deadline) {
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      exited = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (!exited) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    return Error{name_ + " did not stop within " + std::to_string(static_cast<int>(stop_timeout_s_)) +
                 " s of SIGTERM (killed): " + log_tail(400)};
  }
  // log_tail() turns newlines into spaces: the last line is cut from the raw text.
  std::string tail = raw_tail(400);
  while (!tail.empty() && tail.back() == '\n') tail.pop_back();
  const auto nl = tail.rfind('\n');
  const std::string last = nl == std::string::npos ? tail : tail.substr(nl + 1);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return Error{name_ + " exited with status " + std::to_string(status) + ": " + log_tail(600)};
  }
  return last;
}

std::string ChildProcess::raw_tail(std::size_t max_bytes) const {
  std::ifstream f(log_path_);
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (text.size() > max_bytes) text = "..." + text.substr(text.size() - max_bytes);
  return text;
}

std::string ChildProcess::log_tail(std::size_t max_bytes) const {
  std::string text = raw_tail(max_bytes);
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text;
}

std::string ChildProcess::log_line_from(std::string_view text) const {
  std::ifstream f(log_path_);
  std::string line;
  while (std::getline(f, line)) {
    const std::size_t at = line.find(text);
    if (at != std::string::npos) return line.substr(at);
  }
  return {};
}

}  // namespace hft::lab
