// hft-bench-llfix-venue: the rx lane's llfix acceptor (--lanes rx --engines
// llfix). llfix 1.0.5's FixServer<TcpReactor<>> (the single-threaded server
// of llfix's own networked_server_rx benchmark) with one session per client
// CompID, answering every NewOrderSingle with one ExecutionReport (new), as
// that benchmark's server does, and as hft-venue --no-fill does for libhft.
//
//   hft-bench-llfix-venue --sessions N --store DIR --port-file F --tid-file T
//                         [--segment-size BYTES] [--core C] [--poll busy|epoll]
//
//   sessions   EXECUTOR -> CLIENT1 .. CLIENTN, FIXT.1.1, DefaultApplVerID 9,
//              heartbeat 30 s; llfix's session validations on (as its
//              benchmark: validations_enabled, validate_repeating_groups,
//              max_allowed_message_age_seconds 60); no dictionary
//              validation (this llfix release tree ships without its
//              dictionary headers; the report says so)
//   journals   DIR/CLIENTk/incoming and DIR/CLIENTk/outgoing, llfix's
//              serialised message files of --segment-size bytes
//              (max_serialised_file_size, created zero-filled), and
//              DIR/CLIENTk/sequence.store
//   --poll     busy: async_io_timeout_nanoseconds 0 (the reactor spins on
//              epoll_wait); epoll: llfix's default 1 ms epoll_wait timeout
//   --core     the reactor thread's CPU (llfix's cpu_core_id)
//
// Once listening it writes the reactor thread's id into the tid file and then
// its port into the port file (the lab's ChildProcess waits for the port);
// it runs until SIGTERM or SIGINT, then shuts the server down and prints
// "llfix venue: <orders> orders received, <reports> execution reports sent,
// <failed> sends failed" as its last line. Exit 0, or 1 with one line on
// stderr naming what failed, 2 on bad arguments.
//
// C++17, as llfix's own builds; compiled with LLFIX_ONLY_ERROR_AND_FATAL_LOGS
// as llfix's benchmark server is.
#include <dirent.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <llfix/core/cpu/simd_capabilities.h>
#include <llfix/core/utilities/logger.h>
#include <llfix/core/utilities/tcp_reactor.h>
#include <llfix/engine.h>
#include <llfix/fix_server.h>
#include <llfix/fix_session_settings.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace {

constexpr const char* kServerName = "HFT_BENCH_LLFIX_VENUE";

struct Options {
  int sessions = 0;
  std::string store;
  std::string port_file;
  std::string tid_file;
  std::uint64_t segment_size = 64ULL << 20;
  int core = -1;
  bool busy = true;
};

int bad_arguments(const std::string& why) {
  std::cerr << "hft-bench-llfix-venue: " << why << "\n";
  return 2;
}

int fail(const std::string& why) {
  std::cerr << "hft-bench-llfix-venue: " << why << "\n";
  return 1;
}

bool parse_uint(const char* text, std::uint64_t& out) {
  if (text == nullptr || *text == 0) return false;
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (errno != 0 || end == nullptr || *end != 0 || text[0] == '-') return false;
  out = v;
  return true;
}

/// Answers each NewOrderSingle with an ExecutionReport (new), the fields of
/// llfix's networked_server_rx benchmark server.
class Venue final : public llfix::FixServer<llfix::TcpReactor<>> {
 public:
  void on_new_order(llfix::FixSession* session, const llfix::IncomingFixMessage* message) override {
    ++orders;
    llfix::OutgoingFixMessage* report = outgoing_message_instance(session);
    report->set_msg_type('8');
    ++exec_id_;
    report->set_tag(17, exec_id_);
    const llfix::FixStringView* id = message->get_tag_value(11);
    const std::string_view cl_ord_id = id != nullptr ? id->to_string_view() : std::string_view();
    report->set_tag(11, cl_ord_id);
    report->set_tag(37, cl_ord_id);
    report->set_tag(150, '0');
    report->set_tag(39, '0');
    report->set_tag(14, 0);
    report->set_tag(151, message->get_tag_value_as<std::uint32_t>(38));
    report->set_tag(54, message->get_tag_value_as<char>(54));
    const llfix::FixStringView* symbol = message->get_tag_value(55);
    report->set_tag(55, symbol != nullptr ? symbol->to_string_view() : std::string_view());
    report->set_timestamp_tag(60);
    if (send_outgoing_message(session, report)) {
      ++reports;
    } else {
      ++failed;
    }
  }

  // Read by the main thread only after shutdown() joined the reactor.
  std::uint64_t orders = 0;
  std::uint64_t reports = 0;
  std::uint64_t failed = 0;

 private:
  std::uint64_t exec_id_ = 0;
};

/// A port free now (the kernel's next ephemeral one): llfix's acceptor
/// takes a port number, not 0.
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  int port = -1;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  ::close(fd);
  return port;
}

/// Threads of this process other than the calling one.
std::vector<long> other_threads() {
  std::vector<long> out;
  const long self = static_cast<long>(::syscall(SYS_gettid));
  DIR* d = ::opendir("/proc/self/task");
  if (d == nullptr) return out;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    const long tid = std::strtol(e->d_name, nullptr, 10);
    if (tid != self) out.push_back(tid);
  }
  ::closedir(d);
  return out;
}

/// Writes `text` to `path` through a temporary and a rename, so a reader
/// never sees half of it.
bool write_file(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text << "\n";
    if (!out) return false;
  }
  return std::rename(tmp.c_str(), path.c_str()) == 0;
}

std::string server_config(int port, const Options& o) {
  std::string t = "[" + std::string(kServerName) + "]\n";
  t += "accept_port=" + std::to_string(port) + "\n";
  if (o.core >= 0) t += "cpu_core_id=" + std::to_string(o.core) + "\n";
  if (o.busy) t += "async_io_timeout_nanoseconds=0\n";
  return t;
}

bool add_sessions(Venue& venue, const Options& o, std::string& error) {
  for (int k = 1; k <= o.sessions; ++k) {
    const std::string client = "CLIENT" + std::to_string(k);
    const std::string dir = o.store + "/" + client;
    llfix::FixSessionSettings s;
    s.begin_string = "FIXT.1.1";
    s.default_app_ver_id = "9";
    s.sender_comp_id = "EXECUTOR";
    s.target_comp_id = client;
    s.set_heartbeat_interval_in_nanoseconds(30);
    s.throttle_window_in_milliseconds = 1;
    s.throttle_limit = 0;
    s.enable_simd_avx2 = llfix::SIMDCapabilities::instance().supports_simd_avx2();
    s.validations_enabled = true;
    s.validate_repeating_groups = true;
    s.max_allowed_message_age_seconds = 60;
    s.max_serialised_file_size = static_cast<std::size_t>(o.segment_size);
    s.sequence_store_file_path = dir + "/sequence.store";
    s.incoming_message_serialisation_path = dir + "/incoming";
    s.outgoing_message_serialisation_path = dir + "/outgoing";
    s.initialise_derived_settings();
    if (!s.validate()) {
      error = "llfix session settings of " + client + ": " + s.validation_error;
      return false;
    }
    if (!venue.add_session("SESSION" + std::to_string(k), s)) {
      error = "llfix: add_session " + client + " failed (its store under " + dir + "; see llfix's log above)";
      return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    std::uint64_t n = 0;
    if (a == "--sessions") {
      if (!parse_uint(v, n) || n == 0 || n > 100000) return bad_arguments("--sessions: a whole number 1..100000");
      o.sessions = static_cast<int>(n);
    } else if (a == "--store" && v != nullptr) {
      o.store = v;
    } else if (a == "--port-file" && v != nullptr) {
      o.port_file = v;
    } else if (a == "--tid-file" && v != nullptr) {
      o.tid_file = v;
    } else if (a == "--segment-size") {
      if (!parse_uint(v, n) || n == 0 || n % 4096 != 0) {
        return bad_arguments("--segment-size: bytes, a positive multiple of 4096 (llfix's max_serialised_file_size)");
      }
      o.segment_size = n;
    } else if (a == "--core") {
      if (!parse_uint(v, n) || n > 4095) return bad_arguments("--core: a CPU number");
      o.core = static_cast<int>(n);
    } else if (a == "--poll" && v != nullptr && (std::string(v) == "busy" || std::string(v) == "epoll")) {
      o.busy = std::string(v) == "busy";
    } else {
      return bad_arguments("unknown or incomplete argument '" + a +
                           "' (--sessions N --store DIR --port-file F --tid-file T [--segment-size B] [--core C] "
                           "[--poll busy|epoll])");
    }
    ++i;
  }
  if (o.sessions == 0 || o.store.empty() || o.port_file.empty() || o.tid_file.empty()) {
    return bad_arguments("--sessions, --store, --port-file and --tid-file are required");
  }

  // SIGTERM and SIGINT are taken by sigwait below; blocked before the
  // reactor thread exists, so it inherits the mask.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  if (!llfix::Logger<>::get_instance().initialise("/dev/stderr", llfix::LogLevel::LEVEL_ERROR, /*is_async=*/false)) {
    return fail("llfix's logger could not open /dev/stderr");
  }
  const std::string config_path = o.store + "/server.cfg";
  if (::mkdir(o.store.c_str(), 0755) != 0 && errno != EEXIST) {
    return fail(o.store + ": cannot create (" + std::strerror(errno) + ")");
  }

  // llfix's acceptor binds the port it is given: take a free one, and try
  // again with another if someone else took it meanwhile.
  std::unique_ptr<Venue> venue;
  int port = -1;
  for (int attempt = 0; attempt < 5 && !venue; ++attempt) {
    port = free_port();
    if (port <= 0) return fail(std::string("no free TCP port: ") + std::strerror(errno));
    if (!write_file(config_path, server_config(port, o))) return fail(config_path + ": cannot write");
    std::unique_ptr<Venue> v(new Venue());
    if (!v->create(kServerName, config_path)) return fail("llfix: FixServer::create failed (see llfix's log above)");
    if (std::string error; !add_sessions(*v, o, error)) return fail(error);
    v->specify_repeating_group("D", 453, 448, 447, 452);
    if (v->start()) venue = std::move(v);
  }
  if (!venue) return fail("llfix: the acceptor could not bind and listen (5 ports tried)");

  const std::vector<long> threads = other_threads();
  if (threads.size() != 1) {
    venue->shutdown();
    return fail("expected llfix's reactor to be this process's only other thread; found " +
                std::to_string(threads.size()));
  }
  if (!write_file(o.tid_file, std::to_string(threads[0])) || !write_file(o.port_file, std::to_string(port))) {
    venue->shutdown();
    return fail("cannot write " + o.tid_file + " or " + o.port_file);
  }
  std::cout << "llfix venue: llfix " << llfix::Engine::get_version().to_string() << ", " << o.sessions
            << " session(s), port " << port << ", reactor thread " << threads[0] << " on CPU "
            << (o.core >= 0 ? std::to_string(o.core) : std::string("any")) << ", "
            << (o.busy ? "busy" : "epoll 1 ms") << " poll, journal files of " << o.segment_size << " bytes"
            << std::endl;

  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  venue->shutdown();
  std::cout << "llfix venue: " << venue->orders << " orders received, " << venue->reports
            << " execution reports sent, " << venue->failed << " sends failed" << std::endl;
  return 0;
}
