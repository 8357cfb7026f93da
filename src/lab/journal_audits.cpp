#include "hft/lab/journal_audits.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "hft/audit/journal_audit.hpp"
#include "hft/lab/foreign_journals.hpp"
#include "hft/lab/proc.hpp"
#include "hft/lab/reference_order.hpp"
#include "text.hpp"

namespace hft::lab {

namespace fs = std::filesystem;

namespace {

/// FIXT11.xml + FIX50SP2.xml of `spec_dir`, loaded once per directory; null
/// with `error` set when they did not load.
std::shared_ptr<const codec::Dictionary> reference_dictionary(const std::string& spec_dir,
                                                              std::string& error) {
  static std::mutex mutex;
  static std::string cached_dir;
  static std::shared_ptr<const codec::Dictionary> cached;
  static std::string cached_error;
  const std::lock_guard<std::mutex> lock(mutex);
  if (cached_dir != spec_dir || (!cached && cached_error.empty())) {
    cached_dir = spec_dir;
    cached.reset();
    cached_error.clear();
    auto d = audit::load_dictionary(spec_dir + "/FIXT11.xml", spec_dir + "/FIX50SP2.xml");
    if (d) {
      cached = *d;
    } else {
      cached_error = d.error().message;
    }
  }
  error = cached_error;
  return cached;
}

template <typename Map>
std::uint64_t count_of(const Map& per_type, const std::string& type) {
  const auto it = per_type.find(type);
  return it == per_type.end() ? 0 : it->second;
}

// The verdict of an audit that found `failures` (the first described in
// `first`) and `got` messages of `counted_type` where `expected` were sent.
void judge(AuditResult& out, std::string detail, std::uint64_t failures, const std::string& first,
           std::uint64_t got, std::uint64_t expected, const std::string& counted_type) {
  if (failures != 0) {
    out.status = AuditResult::Status::kFail;
    detail += "; FAILED: " + std::to_string(failures) + " failure(s)";
    if (!first.empty()) detail += ", first: " + first;
  } else if (got != expected) {
    out.status = AuditResult::Status::kFail;
    detail += "; FAILED: " + std::to_string(got) + " 35=" + counted_type + " messages, expected " +
              std::to_string(expected);
  } else {
    out.status = AuditResult::Status::kPass;
    detail += "; 35=" + counted_type + " count " + std::to_string(got) + " == expected";
  }
  out.detail = std::move(detail);
}

AuditResult audit_libhft_journal(const fs::path& dir, audit::DirectionSelect direction,
                                 const std::string& counted_type, std::uint64_t expected, const char* what,
                                 const std::string& spec_dir) {
  AuditResult out;
  std::string dict_error;
  audit::AuditOptions options;
  options.dictionary = reference_dictionary(spec_dir, dict_error);
  if (!options.dictionary) {
    out.status = AuditResult::Status::kNotRun;
    out.detail = std::string(what) + ": dictionary not loaded (" + dict_error + ")";
    return out;
  }
  options.direction = direction;
  options.begin_string = std::string(ref::kBeginString);
  options.max_failures = 5;
  auto report = audit::audit_journal(dir.string(), options);
  if (!report) {
    out.status = AuditResult::Status::kFail;
    out.detail = std::string(what) + ": " + report.error().message;
    return out;
  }
  out.checked = report->records;
  const std::uint64_t got = count_of(report->per_type, counted_type);
  std::string detail = std::string(what) + " " + dir.string() + ": " + std::to_string(report->records) +
                       " messages in " + std::to_string(report->segments) + " segment(s) (" +
                       detail::per_type_text(report->per_type) + "), seqs " +
                       std::to_string(report->first_seq) + ".." + std::to_string(report->last_seq) +
                       "; record CRC, framing/CheckSum, MsgSeqNum, validation (" + report->dictionary +
                       ") and sequence checked";
  const auto* f = report->first_failure();
  judge(out, std::move(detail), report->ok ? 0 : std::max<std::uint64_t>(report->failure_count, 1),
        f != nullptr ? f->describe() : "", got, expected, counted_type);
  return out;
}

}  // namespace

AuditResult audit_client_journal(const fs::path& dir, std::uint64_t expected_orders,
                                 const std::string& spec_dir) {
  std::error_code ec;
  if (dir.empty() || !fs::is_directory(dir, ec)) {
    return AuditResult{AuditResult::Status::kNotRun, 0, "no client journal directory to audit"};
  }
  if (fs::is_directory(dir / "outbound", ec)) {
    return audit_libhft_journal(dir, audit::DirectionSelect::kOutbound, "D", expected_orders,
                                "client outbound journal", spec_dir);
  }
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".header") return audit_quickfix_store(entry.path(), expected_orders);
  }
  if (is_llfix_journal(dir)) return audit_llfix_journal(dir, expected_orders);
  return AuditResult{AuditResult::Status::kFail, 0,
                     dir.string() + ": neither a libhft store, a QuickFIX FileStore nor an llfix journal"};
}

AuditResult audit_venue_store(const fs::path& session_dir, std::uint64_t orders, std::uint64_t reports,
                              const std::string& spec_dir) {
  AuditResult in = audit_libhft_journal(session_dir, audit::DirectionSelect::kInbound, "D", orders,
                                        "venue inbound journal", spec_dir);
  AuditResult out = audit_libhft_journal(session_dir, audit::DirectionSelect::kOutbound, "8", reports,
                                         "venue outbound journal", spec_dir);
  return combine_audits({{"in", std::move(in)}, {"out", std::move(out)}});
}

namespace {

/// One direction of a session audited by audit_shared_sessions, as
/// audit_libhft_journal says it of a session store's journal.
AuditResult shared_direction_result(const audit::AuditReport& report, const audit::JournalAudit& j,
                                    const std::string& counted_type, std::uint64_t expected,
                                    const char* what) {
  AuditResult out;
  out.checked = j.records;
  const std::uint64_t got = count_of(j.per_type, counted_type);
  std::string detail =
      std::string(what) + " " + report.directory + " (stream " + std::to_string(j.source.stream) + " of " +
      j.source.path + "): " + std::to_string(j.records) + " messages in " + std::to_string(j.segments) +
      " segment(s) (" + detail::per_type_text(j.per_type) + "), seqs " + std::to_string(j.first_seq) + ".." +
      std::to_string(j.last_seq) + "; record CRC, framing/CheckSum, MsgSeqNum, validation (" +
      report.dictionary + ") and sequence checked";
  // The first failure kept of this direction (a corrupt record of the
  // journal and its repairs are the outbound direction's, read first).
  std::string first;
  for (const audit::AuditFailure& f : report.failures) {
    if (f.direction == j.source.direction) {
      first = f.describe();
      break;
    }
  }
  judge(out, std::move(detail), j.failures, first, got, expected, counted_type);
  return out;
}

}  // namespace

std::vector<std::pair<std::string, AuditResult>> audit_venue_shared_store(
    const fs::path& store_root, const std::vector<VenueSessionCounts>& sessions,
    const std::string& spec_dir) {
  std::vector<std::pair<std::string, AuditResult>> out;
  const std::string journal_dir = (store_root / "shared-journal").string();
  const auto every = [&](AuditResult::Status status, const std::string& detail) {
    for (const VenueSessionCounts& s : sessions)
      out.emplace_back(s.directory, AuditResult{status, 0, detail});
    out.emplace_back("shared journal", AuditResult{status, 0, detail});
    return out;
  };
  std::string dict_error;
  audit::AuditOptions options;
  options.dictionary = reference_dictionary(spec_dir, dict_error);
  if (!options.dictionary) {
    return every(AuditResult::Status::kNotRun,
                 "venue shared journal: dictionary not loaded (" + dict_error + ")");
  }
  options.begin_string = std::string(ref::kBeginString);
  options.max_failures = 5;
  auto all = audit::audit_shared_sessions(journal_dir, options);
  if (!all) return every(AuditResult::Status::kFail, "venue shared journal: " + all.error().message);
  std::map<std::string, const audit::SessionAudit*, std::less<>> by_name;
  // The first stream of a name, as audit_journal() of the directory finds it.
  for (const audit::SessionAudit& s : all->sessions) by_name.emplace(s.name, &s);
  for (const VenueSessionCounts& s : sessions) {
    const auto it = by_name.find(s.directory);
    if (it == by_name.end()) {
      out.emplace_back(s.directory,
                       AuditResult{AuditResult::Status::kFail, 0,
                                   "venue session " + s.directory + ": the shared journal " + journal_dir +
                                       " names no stream so (the session never opened its store)"});
      continue;
    }
    const audit::AuditReport& r = it->second->report;
    AuditResult in, ob;
    for (const audit::JournalAudit& j : r.journals) {
      if (j.source.direction == audit::JournalDirection::kInbound) {
        in = shared_direction_result(r, j, "D", s.orders, "venue inbound journal");
      } else {
        ob = shared_direction_result(r, j, "8", s.reports, "venue outbound journal");
      }
    }
    out.emplace_back(s.directory, combine_audits({{"in", std::move(in)}, {"out", std::move(ob)}}));
  }
  const audit::AuditReport& j = all->journal;
  AuditResult journal;
  journal.detail =
      "venue shared journal " + journal_dir + ": " + std::to_string(j.records) + " records (" +
      std::to_string(j.journals.empty() ? 0 : j.journals.front().streams) + " streams) and " +
      std::to_string(j.control_records) + " control records in " + std::to_string(j.segments) +
      " segment(s), read once for every session; record CRC, control records, record numbers and "
      "stream headers checked";
  if (j.ok) {
    journal.status = AuditResult::Status::kPass;
  } else {
    journal.status = AuditResult::Status::kFail;
    journal.detail += "; FAILED: " + std::to_string(j.failure_count) + " failure(s)";
    if (const auto* f = j.first_failure(); f != nullptr) journal.detail += ", first: " + f->describe();
  }
  out.emplace_back("shared journal", std::move(journal));
  return out;
}

AuditResult combine_audits(const std::vector<std::pair<std::string, AuditResult>>& parts) {
  AuditResult out;
  bool any_fail = false, all_pass = !parts.empty();
  for (const auto& [name, a] : parts) {
    any_fail = any_fail || a.status == AuditResult::Status::kFail;
    all_pass = all_pass && a.status == AuditResult::Status::kPass;
    out.checked += a.checked;
    out.detail += (out.detail.empty() ? "" : " | ") + a.detail;
  }
  out.status = any_fail ? AuditResult::Status::kFail
                        : (all_pass ? AuditResult::Status::kPass : AuditResult::Status::kNotRun);
  return out;
}

namespace {
std::mutex g_emptied_mutex;
std::vector<fs::path> g_emptied;  // run directories whose files were emptied, set aside at the bench's end

// Truncates every regular file under dir (their blocks are freed; the inodes stay).
void truncate_files(const fs::path& dir) {
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    std::error_code fec;
    if (it->is_regular_file(fec)) fs::resize_file(it->path(), 0, fec);
  }
}

// Moves dir into emptied_root(out_dir) under its own name, or a numbered
// one when that is taken (a re-run into the same --out).
bool move_aside(const fs::path& dir, const fs::path& out_dir) {
  const fs::path root = emptied_root(out_dir);
  std::error_code ec;
  fs::create_directories(root, ec);
  fs::path to = root / dir.filename();
  for (int k = 2; fs::exists(to, ec) && k < 100000; ++k) to = root / (dir.filename().string() + "." + std::to_string(k));
  fs::rename(dir, to, ec);
  return !ec;
}

}  // namespace

std::string empty_run_journals(const fs::path& run_dir, const AuditResult& audit) {
  if (audit.status == AuditResult::Status::kFail)
    return "journals kept for inspection in " + run_dir.string();
  const std::uint64_t bytes = directory_bytes(run_dir);
  // Emptied now (their blocks freed), never removed: on ext4 without a
  // journal every file created in the minutes after many removals scans
  // the recently removed inodes (measured on the lab host after a
  // 1,000-session run: 400 us per creation instead of tens), and the next
  // run's journals are created then. The bench moves the directory aside
  // after its last run.
  truncate_files(run_dir);
  {
    const std::lock_guard lock(g_emptied_mutex);
    g_emptied.push_back(run_dir);
  }
  char text[240];
  std::snprintf(text, sizeof text,
                "journals (%.1f MiB on disk) emptied after the audit; the empty files are kept under "
                "runs/.emptied, not removed",
                static_cast<double>(bytes) / (1 << 20));
  return text;
}

fs::path emptied_root(const fs::path& out_dir) { return out_dir / kEmptiedDir; }

void set_aside_emptied_journals(const fs::path& out_dir) {
  std::vector<fs::path> dirs;
  {
    const std::lock_guard lock(g_emptied_mutex);
    dirs.swap(g_emptied);
  }
  for (const auto& dir : dirs) (void)move_aside(dir, out_dir);
}

bool set_aside_stale_run(const fs::path& dir, const fs::path& out_dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) return true;
  truncate_files(dir);
  return move_aside(dir, out_dir);
}

}  // namespace hft::lab
