// hft-conformance: runs FIX session conformance scripts (.def) against an
// acceptor over TCP, or with --listen against an initiator that connects to
// it, and reports PASS/FAIL per script. Standalone: it links
// no libhft layer, so it judges the engine without sharing its code.
#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "compare.hpp"
#include "runner.hpp"
#include "script.hpp"

namespace fs = std::filesystem;
using namespace hft::conformance;

namespace {

constexpr const char* kUsage =
    "usage: hft-conformance --port P [options] DIR_OR_FILE...\n"
    "       hft-conformance --listen P [--port-file FILE] [options] DIR_OR_FILE...\n"
    "\n"
    "Runs each .def script (a directory means all its *.def files, by name) on\n"
    "fresh connections to the acceptor and prints PASS/FAIL per script. With\n"
    "--listen the runner is the acceptor: initiator-side scripts start with\n"
    "eCONNECT, which waits for the engine under test to connect (it reconnects\n"
    "between scripts, after its ReconnectInterval).\n"
    "\n"
    "options:\n"
    "  --host H                  acceptor address, or the address to listen on (default 127.0.0.1)\n"
    "  --port P                  acceptor port (required without --listen)\n"
    "  --listen P                listen on port P (0: any free port) for initiator-side scripts\n"
    "  --port-file FILE          with --listen: write the port listened on to FILE\n"
    "  --first-connect-ms N      with --listen: wait for the first connection (default 60000)\n"
    "  --reconnect-ms N          with --listen: allowance for a reconnect on top of\n"
    "                            --timeout-ms (default 5000)\n"
    "  --timeout-ms N            wait for each expectation and connect (default 5000)\n"
    "  --heartbeat-timeout-ms N  wait for timer-driven expectations (Heartbeat without\n"
    "                            TestReqID, TestRequest, disconnect after it); default\n"
    "                            2.5 x HeartBtInt of the script's Logon + 2000\n"
    "  --close-wait-ms N         after closing, wait for the acceptor to close (default 2000)\n"
    "  --fields FILE             field patterns (default: fields.fmt found next to or above\n"
    "                            the first script directory, else the built-in copy)\n"
    "  --known-failures FILE     scripts expected to fail (one name per line, '#' comments);\n"
    "                            exit 0 iff every failure is listed\n"
    "  --verbose                 print every line executed and every message received\n"
    "  --help                    this text\n"
    "\n"
    "exit code: 0 if all scripts pass (or only known failures fail), 1 otherwise,\n"
    "2 on a usage or configuration error.\n";

struct Options {
  RunnerOptions runner;
  std::string fields_path;
  std::string known_failures_path;
  std::vector<std::string> inputs;
  bool verbose = false;
  bool listen = false;
  std::uint16_t listen_port = 0;
  std::string port_file;
};

[[noreturn]] void usage_error(const std::string& message) {
  std::cerr << "hft-conformance: " << message << "\n\n" << kUsage;
  std::exit(2);
}

int parse_int(const std::string& option, const std::string& text, int min, int max) {
  int value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || value < min || value > max) {
    usage_error(option + ": expected an integer in [" + std::to_string(min) + ", " + std::to_string(max) +
                "], got '" + text + "'");
  }
  return value;
}

Options parse_args(int argc, char** argv) {
  Options o;
  bool have_port = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage_error(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      std::exit(0);
    } else if (arg == "--host") {
      o.runner.host = value();
    } else if (arg == "--port") {
      o.runner.port = static_cast<std::uint16_t>(parse_int(arg, value(), 1, 65535));
      have_port = true;
    } else if (arg == "--listen") {
      o.listen_port = static_cast<std::uint16_t>(parse_int(arg, value(), 0, 65535));
      o.listen = true;
    } else if (arg == "--port-file") {
      o.port_file = value();
    } else if (arg == "--first-connect-ms") {
      o.runner.first_connect_ms = parse_int(arg, value(), 1, 3600000);
    } else if (arg == "--reconnect-ms") {
      o.runner.reconnect_ms = parse_int(arg, value(), 0, 3600000);
    } else if (arg == "--timeout-ms") {
      o.runner.timeout_ms = parse_int(arg, value(), 1, 3600000);
    } else if (arg == "--heartbeat-timeout-ms") {
      o.runner.heartbeat_timeout_ms = parse_int(arg, value(), 1, 3600000);
    } else if (arg == "--close-wait-ms") {
      o.runner.close_wait_ms = parse_int(arg, value(), 0, 3600000);
    } else if (arg == "--fields") {
      o.fields_path = value();
    } else if (arg == "--known-failures") {
      o.known_failures_path = value();
    } else if (arg == "--verbose" || arg == "-v") {
      o.verbose = true;
    } else if (arg.size() > 1 && arg[0] == '-') {
      usage_error("unknown option " + arg);
    } else {
      o.inputs.push_back(arg);
    }
  }
  if (o.listen && have_port) usage_error("--port and --listen exclude each other");
  if (!o.listen && !have_port) usage_error("--port (or --listen) is required");
  if (!o.listen && !o.port_file.empty()) usage_error("--port-file needs --listen");
  if (o.inputs.empty()) usage_error("no script directory or file given");
  return o;
}

std::vector<fs::path> collect_scripts(const std::vector<std::string>& inputs) {
  std::vector<fs::path> scripts;
  for (const std::string& input : inputs) {
    const fs::path p(input);
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<fs::path> in_dir;
      for (const auto& entry : fs::directory_iterator(p)) {
        if (entry.is_regular_file() && entry.path().extension() == ".def") in_dir.push_back(entry.path());
      }
      std::sort(in_dir.begin(), in_dir.end());
      if (in_dir.empty()) usage_error(input + ": no .def files in this directory");
      scripts.insert(scripts.end(), in_dir.begin(), in_dir.end());
    } else if (fs::is_regular_file(p, ec)) {
      scripts.push_back(p);
    } else {
      usage_error(input + ": no such file or directory");
    }
  }
  return scripts;
}

// fields.fmt sits beside the definitions/ folder in the shared layout, so
// look in the first input's directory and two levels above it.
FieldPatterns find_patterns(const Options& o) {
  if (!o.fields_path.empty()) return FieldPatterns::load(o.fields_path);
  fs::path dir = fs::absolute(fs::path(o.inputs.front()));
  if (!fs::is_directory(dir)) dir = dir.parent_path();
  for (int up = 0; up < 3 && !dir.empty(); ++up) {
    const fs::path candidate = dir / "fields.fmt";
    if (fs::is_regular_file(candidate)) return FieldPatterns::load(candidate.string());
    dir = dir.parent_path();
  }
  return FieldPatterns::defaults();
}

// "fix44/2t_FirstThreeFieldsOutOfOrder.def": unique across version folders.
std::string display_name(const fs::path& script) {
  const fs::path parent = script.parent_path().filename();
  return parent.empty() ? script.filename().string() : (parent / script.filename()).string();
}

std::set<std::string> load_known_failures(const std::string& path) {
  std::set<std::string> names;
  if (path.empty()) return names;
  std::ifstream in(path);
  if (!in) usage_error(path + ": cannot open known-failures file");
  std::string line;
  while (std::getline(in, line)) {
    const std::size_t hash = line.find('#');
    if (hash != std::string::npos) line.erase(hash);
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos) continue;
    const auto last = line.find_last_not_of(" \t\r");
    names.insert(line.substr(first, last - first + 1));
  }
  return names;
}

bool is_listed(const std::set<std::string>& names, const fs::path& script) {
  return names.count(display_name(script)) != 0 || names.count(script.filename().string()) != 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options options = parse_args(argc, argv);
  FieldPatterns patterns;
  std::set<std::string> known;
  try {
    patterns = find_patterns(options);
  } catch (const std::exception& e) {
    std::cerr << "hft-conformance: " << e.what() << '\n';
    return 2;
  }
  known = load_known_failures(options.known_failures_path);
  const std::vector<fs::path> scripts = collect_scripts(options.inputs);
  options.runner.patterns = &patterns;
  if (options.verbose) options.runner.trace = &std::cout;

  if (options.listen) {
    std::string error;
    std::uint16_t bound = 0;
    options.runner.listen_fd = listen_on(options.runner.host, options.listen_port, bound, error);
    if (options.runner.listen_fd < 0) {
      std::cerr << "hft-conformance: " << error << '\n';
      return 2;
    }
    options.runner.port = bound;
    if (!options.port_file.empty()) {
      const std::string tmp = options.port_file + ".tmp";
      std::ofstream(tmp) << bound << '\n';
      fs::rename(tmp, options.port_file);
    }
  }
  std::cout << "hft-conformance: " << scripts.size() << " scripts " << (options.listen ? "listening on " : "against ")
            << options.runner.host << ':' << options.runner.port << " (patterns: " << patterns.origin() << ")\n";
  int passed = 0;
  int failed = 0;
  int unexpected = 0;
  std::vector<std::string> now_passing;
  bool unreachable = false;
  for (const fs::path& path : scripts) {
    const std::string name = display_name(path);
    if (unreachable) {
      // One wasted timeout per remaining script would say nothing new.
      ++failed;
      if (!is_listed(known, path)) ++unexpected;
      std::cout << "FAIL " << name << (options.listen ? " (not run: the initiator never connected)\n"
                                                      : " (not run: acceptor unreachable)\n");
      continue;
    }
    if (options.verbose) std::cout << "RUN  " << name << '\n';
    const Script script = load_script(path.string());
    const ScriptResult r = run_script(script, options.runner);
    unreachable = r.unreachable;
    const bool listed = is_listed(known, path);
    if (r.passed) {
      ++passed;
      std::cout << "PASS " << name << " (" << r.elapsed.count() << " ms)";
      if (listed) {
        std::cout << " [listed as a known failure]";
        now_passing.push_back(name);
      }
      std::cout << '\n';
    } else {
      ++failed;
      if (!listed) ++unexpected;
      std::cout << "FAIL " << name << ':' << r.line << (listed ? " [known failure]" : "") << " (" << r.elapsed.count()
                << " ms)\n"
                << "     " << r.reason << '\n';
      if (!r.expected.empty()) std::cout << "     expected: " << r.expected << '\n';
      if (!r.received.empty()) std::cout << "     received: " << r.received << '\n';
    }
    std::cout.flush();
  }
  std::cout << passed << " passed, " << failed << " failed\n";
  if (!options.known_failures_path.empty()) {
    std::cout << "known failures: " << (failed - unexpected) << " failed as listed, " << unexpected
              << " unexpected failure(s)";
    if (!now_passing.empty()) {
      std::cout << ", " << now_passing.size() << " listed script(s) now pass (remove them from the list):";
      for (const std::string& n : now_passing) std::cout << ' ' << n;
    }
    std::cout << '\n';
    return unexpected == 0 ? 0 : 1;
  }
  return failed == 0 ? 0 : 1;
}
