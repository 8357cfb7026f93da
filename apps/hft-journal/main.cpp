// hft-journal: reads libhft message journals (docs/hft-journal.md).
//
//   hft-journal dump  DIR [filters] [--format line|tree|raw]   messages, readable
//   hft-journal stats DIR [--json]                             what is in the journal
//   hft-journal audit DIR [--dictionary F] [--json] ...        is every record sound
//
// DIR is a journal (a directory of NNNNNNNN.seg segments), a session store
// directory (outbound/, inbound/, seqnums.dat), or the directory of a session
// of a shared journal (seqnums.dat only; its messages are its stream's in
// ../shared-journal). A shared journal given itself is read whole: dump
// shows each record's stream, audit checks records and stream headers only.
//
// Exit codes: 0 success; 1 the audit failed, or dump/stats met corrupt
// records (they print what they could read); 2 usage error or unreadable
// input (one line on stderr naming the file and the problem).
#include <CLI/CLI.hpp>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hft/audit/journal_audit.hpp"
#include "hft/codec/printer.hpp"
#include "hft/store/format.hpp"
#include "hft/store/shared_journal.hpp"

namespace {

using hft::audit::DirectionSelect;
using hft::audit::JournalRecord;
using DictionaryPtr = std::shared_ptr<const hft::codec::Dictionary>;

constexpr int kUsage = 2;

int usage_error(const std::string& message) {
  std::cerr << "hft-journal: " << message << "\n";
  return kUsage;
}

/// Options every subcommand has.
struct Common {
  std::string dir;
  std::string dictionary;
  std::string app_dictionary;
  std::string direction = "both";

  void add_to(CLI::App& sub) {
    sub.add_option(
           "DIR", dir,
           "Journal directory (segments), session store directory (outbound/, inbound/), or a session "
           "directory of a shared journal (seqnums.dat beside FileStorePath/shared-journal)")
        ->required();
    sub.add_option("--dictionary", dictionary, "QuickFIX XML dictionary (default: built-in for the BeginString)");
    sub.add_option("--app-dictionary", app_dictionary,
                   "FIX 5.0 application dictionary; --dictionary is then the FIXT.1.1 transport dictionary");
    sub.add_option("--direction", direction, "Journals of a session store to read: out, in or both")
        ->check(CLI::IsMember({"out", "in", "both"}))
        ->capture_default_str();
  }
  [[nodiscard]] DirectionSelect select() const { return *hft::audit::parse_direction(direction); }
};

/// Dictionaries per BeginString: the loaded one, or the built-in ones.
class Names {
 public:
  explicit Names(DictionaryPtr loaded) : loaded_(std::move(loaded)) {}
  const hft::codec::Dictionary* for_message(std::string_view bytes) {
    if (loaded_) return loaded_.get();
    std::string bs;
    if (bytes.starts_with("8=")) {
      const std::size_t e = bytes.find('\x01');
      bs = std::string(bytes.substr(2, (e == std::string_view::npos ? bytes.size() : e) - 2));
    }
    auto it = cache_.find(bs);
    if (it == cache_.end()) it = cache_.emplace(bs, hft::audit::dictionary_for(nullptr, bs)).first;
    return it->second.get();
  }
  const hft::codec::Dictionary* for_begin_string(const std::string& bs) {
    if (loaded_) return loaded_.get();
    auto it = cache_.find(bs);
    if (it == cache_.end()) it = cache_.emplace(bs, hft::audit::dictionary_for(nullptr, bs)).first;
    if (it->second) return it->second.get();
    // Names only: any version's MsgType enumeration will do.
    if (!fallback_) fallback_ = hft::audit::dictionary_for(nullptr, "FIX.4.4");
    return fallback_.get();
  }

 private:
  DictionaryPtr loaded_;
  DictionaryPtr fallback_;
  std::map<std::string, DictionaryPtr> cache_;
};

std::string type_name(std::string_view msg_type, const hft::codec::Dictionary* dict) {
  if (dict == nullptr) return {};
  if (const hft::codec::MessageDef* m = dict->message(msg_type)) return m->name;
  if (const hft::codec::FieldDef* f = dict->field(hft::codec::tag::kMsgType)) return std::string(f->enum_name(msg_type));
  return {};
}

std::string prefix(const JournalRecord& r) {
  std::string out = hft::audit::format_utc_ns(r.timestamp_ns);
  out += ' ';
  const std::string_view label = hft::audit::direction_label(r.direction);
  if (!label.empty()) {
    out += label;
    out += label.size() == 2 ? "  " : " ";
  }
  return out;
}

std::string control_text(const JournalRecord& r) {
  std::string out = "control ";
  if ((r.flags & hft::store::kRecordSegmentStart) != 0 && r.bytes.size() == sizeof(hft::store::SegmentStartPayload)) {
    hft::store::SegmentStartPayload p;
    std::memcpy(&p, r.bytes.data(), sizeof(p));
    out += "segment-start " + r.file() + " epoch=" + std::to_string(p.epoch);
    if ((r.flags & hft::store::kRecordEpochStart) != 0)
      out += " (new epoch, created " + hft::audit::format_utc_ns(p.epoch_created_ns) + ")";
  } else if ((r.flags & hft::store::kRecordSegmentSeal) != 0 &&
             r.bytes.size() == sizeof(hft::store::SegmentSealPayload)) {
    hft::store::SegmentSealPayload p;
    std::memcpy(&p, r.bytes.data(), sizeof(p));
    out += "seal " + r.file() + " last_seq=" + std::to_string(p.last_seq) +
           " indexed=" + std::to_string(p.indexed_count);
  } else {
    char text[32];
    std::snprintf(text, sizeof text, "flags=0x%04x", static_cast<unsigned>(r.flags));
    out += text;
  }
  return out;
}

/// A shared journal's record read whole: "record=N stream=S " and what it
/// is; for a message, its direction and seq (the caller prints the message).
std::string shared_record_text(const JournalRecord& r) {
  std::string out = "record=" + std::to_string(r.seq) + " stream=" + std::to_string(r.stream) + " ";
  switch (r.stream_kind) {
    case hft::store::StreamHeader::kOutbound:
      out += "OUT seq=" + std::to_string(r.stream_value) + " ";
      break;
    case hft::store::StreamHeader::kInbound:
      out += "IN  seq=" + std::to_string(r.stream_value) + " ";
      break;
    case hft::store::StreamHeader::kStreamName:
      out += "name=" + std::string(r.bytes) + " identity=" + std::to_string(r.stream_value);
      break;
    case hft::store::StreamHeader::kEpochStart: {
      out += "epoch-start epoch=" + std::to_string(r.stream_value);
      std::int64_t created = 0;
      if (r.bytes.size() == sizeof created) {
        std::memcpy(&created, r.bytes.data(), sizeof created);
        out += " created " + hft::audit::format_utc_ns(created);
      }
      break;
    }
    default:
      break;
  }
  return out;
}

int report_corruptions(const std::vector<std::string>& lines) {
  for (const std::string& line : lines) std::cerr << "hft-journal: corrupt record: " << line << "\n";
  return lines.empty() ? 0 : 1;
}

// ---- dump ----------------------------------------------------------------------

struct DumpArgs {
  Common common;
  std::uint64_t from_seq = 0;
  std::uint64_t to_seq = UINT64_MAX;
  std::string since, until;
  std::vector<std::string> types;
  std::string format = "line";
  std::size_t limit = 0;
  std::uint64_t epoch = 0;
  bool control = false;
  CLI::Option* epoch_option = nullptr;
};

int run_dump(const DumpArgs& a) {
  hft::audit::RecordFilter filter;
  filter.from_seq = a.from_seq;
  filter.to_seq = a.to_seq;
  if (filter.from_seq > filter.to_seq)
    return usage_error("--from-seq " + std::to_string(a.from_seq) + " is above --to-seq " + std::to_string(a.to_seq));
  if (!a.since.empty() && !hft::audit::parse_time(a.since, filter.since_ns))
    return usage_error("--since: cannot read \"" + a.since +
                       "\" as a time (2026-05-01T12:34:56.123Z, 20260501-12:34:56.123 or nanoseconds)");
  if (!a.until.empty() && !hft::audit::parse_time(a.until, filter.until_ns))
    return usage_error("--until: cannot read \"" + a.until +
                       "\" as a time (2026-05-01T12:34:56.123Z, 20260501-12:34:56.123 or nanoseconds)");
  filter.msg_types = a.types;
  filter.limit = a.limit;
  filter.include_control = a.control;
  if (a.epoch_option != nullptr && a.epoch_option->count() > 0) filter.epoch = a.epoch;

  auto dict = hft::audit::load_dictionary(a.common.dictionary, a.common.app_dictionary);
  if (!dict) return usage_error(dict.error().message);
  auto sources = hft::audit::resolve_journals(a.common.dir, a.common.select());
  if (!sources) return usage_error(sources.error().message);

  Names names(*dict);
  std::string line;
  auto print = [&](const JournalRecord& r) {
    line = prefix(r);
    const bool whole_shared = r.stream != 0 && r.direction == hft::audit::JournalDirection::kJournal;
    if (r.control()) {
      line += control_text(r);
      line += '\n';
    } else if (whole_shared && r.stream_kind != hft::store::StreamHeader::kOutbound &&
               r.stream_kind != hft::store::StreamHeader::kInbound) {
      line += shared_record_text(r);
      line += '\n';
    } else if (whole_shared) {
      line += shared_record_text(r);
      const hft::codec::Dictionary* d = a.format == "raw" ? nullptr : names.for_message(r.bytes);
      line += d != nullptr ? hft::codec::to_named(r.bytes, *d) : hft::codec::to_printable(r.bytes);
      line += '\n';
    } else if (a.format == "tree") {
      line += "seq=" + std::to_string(r.seq) + " epoch=" + std::to_string(r.epoch) + " " + r.file() + "@" +
              std::to_string(r.offset) + "\n";
      const hft::codec::Dictionary* d = names.for_message(r.bytes);
      line += d != nullptr ? hft::codec::to_tree(r.bytes, *d) : hft::codec::to_printable(r.bytes) + "\n";
      if (!line.ends_with('\n')) line += '\n';
      line += '\n';
    } else {
      line += "seq=" + std::to_string(r.seq) + " ";
      const hft::codec::Dictionary* d = a.format == "raw" ? nullptr : names.for_message(r.bytes);
      line += d != nullptr ? hft::codec::to_named(r.bytes, *d) : hft::codec::to_printable(r.bytes);
      line += '\n';
    }
    std::fwrite(line.data(), 1, line.size(), stdout);
    return true;
  };
  auto scanned = hft::audit::scan_journals(*sources, filter, print);
  std::fflush(stdout);
  if (!scanned) return usage_error(scanned.error().message);
  return report_corruptions(scanned->corruptions);
}

// ---- stats ---------------------------------------------------------------------

struct StatsArgs {
  Common common;
  bool json = false;
};

std::string bytes_text(std::uint64_t n) {
  char text[32];
  if (n >= (std::uint64_t{1} << 30)) std::snprintf(text, sizeof text, "%.1f GiB", static_cast<double>(n) / (1 << 30));
  else if (n >= (1 << 20)) std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(n) / (1 << 20));
  else if (n >= (1 << 10)) std::snprintf(text, sizeof text, "%.1f KiB", static_cast<double>(n) / (1 << 10));
  else std::snprintf(text, sizeof text, "%" PRIu64 " B", n);
  return text;
}

int run_stats(const StatsArgs& a) {
  auto dict = hft::audit::load_dictionary(a.common.dictionary, a.common.app_dictionary);
  if (!dict) return usage_error(dict.error().message);
  auto summaries = hft::audit::summarize_journals(a.common.dir, a.common.select());
  if (!summaries) return usage_error(summaries.error().message);
  std::vector<std::string> corruptions;
  for (const auto& s : *summaries) corruptions.insert(corruptions.end(), s.corruptions.begin(), s.corruptions.end());
  if (a.json) {
    std::cout << hft::audit::to_json(*summaries) << "\n";
    std::cout.flush();
    return report_corruptions(corruptions);
  }
  Names names(*dict);
  for (const auto& s : *summaries) {
    std::printf("journal %s\n", hft::audit::source_label(s.source).c_str());
    std::uint64_t sealed = 0;
    for (const auto& g : s.segments) sealed += g.sealed ? 1 : 0;
    std::printf("  segments     %zu", s.segments.size());
    if (s.segments.size() == 1)
      std::printf(" (%08" PRIu64 ".seg), %s on disk, %" PRIu64 " sealed", s.segments.front().number,
                  bytes_text(s.file_bytes).c_str(), sealed);
    else if (!s.segments.empty())
      std::printf(" (%08" PRIu64 ".seg .. %08" PRIu64 ".seg), %s on disk, %" PRIu64 " sealed",
                  s.segments.front().number, s.segments.back().number, bytes_text(s.file_bytes).c_str(), sealed);
    std::printf("\n");
    std::printf("  records      %" PRIu64 " messages (%s), %" PRIu64 " control", s.records,
                bytes_text(s.payload_bytes).c_str(), s.control_records);
    if (s.unindexed != 0) std::printf(", %" PRIu64 " not replayable (seq did not increase)", s.unindexed);
    if (s.corrupt != 0) std::printf(", %" PRIu64 " CORRUPT", s.corrupt);
    std::printf("\n");
    std::printf("  epochs       %zu\n", s.epochs.size());
    for (const auto& e : s.epochs) {
      std::printf("    epoch %" PRIu64 ": %" PRIu64 " messages", e.epoch, e.records);
      if (e.records != 0)
        std::printf(", seq %" PRIu64 "..%" PRIu64 ", %s .. %s", e.first_seq, e.last_seq,
                    hft::audit::format_utc_ns(e.first_ns).c_str(),
                    hft::audit::format_utc_ns(e.last_ns).c_str());
      std::printf("\n");
    }
    if (s.records != 0) {
      std::printf("  first        seq %" PRIu64 " at %s\n", s.first_seq,
                  hft::audit::format_utc_ns(s.first_ns).c_str());
      std::printf("  last         seq %" PRIu64 " at %s\n", s.last_seq,
                  hft::audit::format_utc_ns(s.last_ns).c_str());
      std::printf("  span         %.6f s, %.1f messages/s\n", static_cast<double>(s.last_ns - s.first_ns) / 1e9,
                  s.messages_per_second);
    }
    std::printf("  per MsgType\n");
    for (const auto& [type, n] : s.per_type) {
      const std::string name = type_name(type, names.for_begin_string(s.begin_string));
      std::printf("    %-4s %-28s %" PRIu64 "\n", type.c_str(), name.c_str(), n);
    }
    const auto& d = s.message_sizes;
    if (d.count != 0) {
      std::printf("  message size min %" PRIu64 ", p50 %" PRIu64 ", p90 %" PRIu64 ", p99 %" PRIu64 ", max %" PRIu64
                  ", mean %.1f bytes\n",
                  d.min, d.p50, d.p90, d.p99, d.max, d.mean);
      for (const auto& [bound, n] : d.buckets)
        std::printf("    <= %-8" PRIu64 " %" PRIu64 "\n", bound, n);
    }
    std::printf("  repairs      %zu\n", s.repairs.size());
    for (const auto& r : s.repairs) std::printf("    %s\n", r.text.c_str());
  }
  std::fflush(stdout);
  return report_corruptions(corruptions);
}

// ---- audit ---------------------------------------------------------------------

struct AuditArgs {
  Common common;
  std::uint64_t expect_count = 0;
  CLI::Option* expect_option = nullptr;
  std::string begin_string;
  bool allow_gaps = false;
  bool accept_repairs = false;
  bool no_validate = false;
  bool json = false;
  bool sessions = false;
  std::size_t max_failures = 20;
};

// audit --sessions: every session of a shared journal in one read.
int run_audit_sessions(const AuditArgs& a, const hft::audit::AuditOptions& options) {
  auto result = hft::audit::audit_shared_sessions(a.common.dir, options);
  if (!result) return usage_error(result.error().message);
  const hft::audit::SharedJournalAudit& r = *result;
  std::size_t failed = 0;
  for (const auto& s : r.sessions) failed += s.report.ok ? 0 : 1;
  if (a.json) {
    std::cout << hft::audit::to_json(r) << "\n";
  } else {
    std::cout << "audit " << a.common.dir << " --sessions: " << (r.ok ? "OK" : "FAILED") << " ("
              << r.sessions.size() << " sessions, " << failed << " failed; " << r.journal.records
              << " records read " << r.passes << " time(s))\n";
    if (!r.journal.ok)
      std::cout << "  the journal: FAILED: " << r.journal.first_failure()->describe() << "\n";
    for (const auto& s : r.sessions) {
      std::uint64_t out_n = 0, in_n = 0;
      for (const auto& j : s.report.journals)
        (j.source.direction == hft::audit::JournalDirection::kInbound ? in_n : out_n) += j.records;
      std::cout << "  " << s.name << " (stream " << s.stream << "): " << (s.report.ok ? "OK" : "FAILED")
                << ", " << out_n << " out, " << in_n << " in";
      if (!s.report.ok && s.report.first_failure() != nullptr)
        std::cout << "; first: " << s.report.first_failure()->describe();
      std::cout << "\n";
    }
  }
  std::cout.flush();
  if (!r.ok) {
    std::cerr << "hft-journal: audit failed: "
              << (r.journal.ok ? std::to_string(failed) + " session(s)" : "the journal") << " of "
              << a.common.dir << "\n";
    return 1;
  }
  return 0;
}

int run_audit(const AuditArgs& a) {
  hft::audit::AuditOptions options;
  auto dict = hft::audit::load_dictionary(a.common.dictionary, a.common.app_dictionary);
  if (!dict) return usage_error(dict.error().message);
  options.dictionary = *dict;
  options.direction = a.common.select();
  options.begin_string = a.begin_string;
  options.allow_gaps = a.allow_gaps;
  options.accept_repairs = a.accept_repairs;
  options.validate = !a.no_validate;
  options.max_failures = a.max_failures;
  if (a.expect_option != nullptr && a.expect_option->count() > 0) options.expected_count = a.expect_count;

  if (a.sessions) return run_audit_sessions(a, options);
  auto result = hft::audit::audit_journal(a.common.dir, options);
  if (!result) return usage_error(result.error().message);
  const hft::audit::AuditReport& r = *result;
  if (a.json) {
    std::cout << hft::audit::to_json(r) << "\n";
  } else {
    std::cout << "audit " << r.directory << ": " << (r.ok ? "OK" : "FAILED") << " (dictionary " << r.dictionary
              << (r.begin_string.empty() ? "" : ", " + r.begin_string) << ")\n";
    for (const auto& j : r.journals) {
      if (j.source.shared && j.source.stream == 0) {
        std::cout << "  " << hft::audit::source_label(j.source) << ": " << j.segments << " segments, "
                  << j.records << " records, " << j.streams << " streams (sessions)";
        if (j.repairs != 0) std::cout << ", " << j.repairs << " repairs";
        std::cout << "\n    records and stream headers checked; messages are checked per session: "
                     "hft-journal audit <FileStorePath>/<session dir>\n";
        continue;
      }
      std::cout << "  " << hft::audit::source_label(j.source) << ": " << j.segments << " segments, "
                << j.records << " messages, " << j.epochs << " epochs";
      if (j.records != 0) std::cout << ", seq " << j.first_seq << ".." << j.last_seq;
      std::cout << ", " << j.validated << " validated";
      if (j.missing_seqs != 0) std::cout << ", " << j.missing_seqs << " seqs missing";
      if (j.duplicates != 0) std::cout << ", " << j.duplicates << " PossDup duplicates";
      if (j.sequence_resets != 0) std::cout << ", " << j.sequence_resets << " sequence resets";
      if (j.repairs != 0) std::cout << ", " << j.repairs << " repairs";
      std::cout << "\n    per MsgType:";
      for (const auto& [type, n] : j.per_type) std::cout << " " << type << "=" << n;
      std::cout << "\n";
    }
    if (!r.repairs.empty() && options.accept_repairs) {
      std::cout << "  repairs (accepted): " << r.repairs.size() << "\n";
      for (const auto& x : r.repairs) std::cout << "    " << x.text << "\n";
    }
    if (!r.ok) {
      std::cout << "  failures: " << r.failure_count;
      if (r.failure_count > r.failures.size()) std::cout << " (first " << r.failures.size() << " listed)";
      std::cout << "\n";
      for (const auto& f : r.failures) std::cout << "    " << f.describe() << "\n";
    }
  }
  std::cout.flush();
  if (!r.ok) {
    std::cerr << "hft-journal: audit failed: " << r.first_failure()->describe() << "\n";
    return 1;
  }
  return 0;
}

int run(int argc, char** argv) {
  CLI::App app{"hft-journal: dump, summarise and audit libhft message journals (docs/hft-journal.md)",
               "hft-journal"};
  app.require_subcommand(1);

  DumpArgs dump;
  CLI::App* d = app.add_subcommand("dump", "Print messages with their record time, seq and named fields");
  dump.common.add_to(*d);
  d->add_option("--from-seq", dump.from_seq, "First seq to print");
  d->add_option("--to-seq", dump.to_seq, "Last seq to print");
  d->add_option("--since", dump.since, "Records at or after this time (UTC: ISO 8601, FIX UTCTimestamp or ns)");
  d->add_option("--until", dump.until, "Records before this time");
  d->add_option("--type", dump.types, "MsgTypes to print, comma-separated (e.g. D,8)")->delimiter(',');
  d->add_option("--format", dump.format, "line (named fields), tree (one field per line) or raw (tag=value)")
      ->check(CLI::IsMember({"line", "tree", "raw"}))
      ->capture_default_str();
  d->add_option("--limit", dump.limit, "Print at most N records (0: all)");
  dump.epoch_option = d->add_option("--epoch", dump.epoch, "Only this epoch (session reset count)");
  d->add_flag("--control", dump.control, "Also print segment start and seal records");

  StatsArgs stats;
  CLI::App* s = app.add_subcommand("stats", "Segments, records, epochs, seqs, times, MsgTypes, rate, sizes");
  stats.common.add_to(*s);
  s->add_flag("--json", stats.json, "Print JSON");

  AuditArgs audit;
  CLI::App* u = app.add_subcommand("audit", "Check every record: CRC, FIX framing, parse, dictionary, seqs");
  audit.common.add_to(*u);
  audit.expect_option = u->add_option("--expect-count", audit.expect_count, "Fail unless exactly N messages are found");
  u->add_option("--begin-string", audit.begin_string, "Every message must carry this BeginString (e.g. FIX.4.4)");
  u->add_flag("--allow-gaps", audit.allow_gaps, "Count missing seqs without failing");
  u->add_flag("--sessions", audit.sessions,
              "DIR is a shared journal (JournalLayout=shared): audit every session in it, in one read, as "
              "`audit <FileStorePath>/<session dir>` would each");
  u->add_flag("--accept-repairs", audit.accept_repairs,
              "List repairs and losses the files show (repairs.log, .cut/.lost files, a journal that stopped "
              "early) without failing");
  u->add_flag("--no-validate", audit.no_validate, "Skip the dictionary checks");
  u->add_option("--max-failures", audit.max_failures, "Failures to list")->capture_default_str();
  u->add_flag("--json", audit.json, "Print the report as JSON");

  if (argc > 1 && argv[1][0] != '-') {
    const std::string_view command = argv[1];
    if (command != "dump" && command != "stats" && command != "audit")
      return usage_error("unknown command \"" + std::string(command) + "\": use dump, stats or audit (--help)");
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    std::cerr << "hft-journal: " << e.what() << "\nRun 'hft-journal --help' (or 'hft-journal dump --help') for usage.\n";
    return kUsage;
  }
  if (d->parsed()) return run_dump(dump);
  if (s->parsed()) return run_stats(stats);
  return run_audit(audit);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    // Nothing should throw past the library's Expected results; if something
    // does (out of memory), say so in one line rather than abort.
    std::cerr << "hft-journal: error: " << e.what() << "\n";
    return kUsage;
  }
}
