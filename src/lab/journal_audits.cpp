#include "hft/lab/journal_audits.hpp"

#include <cstdio>
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
  if (!report->ok) {
    out.status = AuditResult::Status::kFail;
    detail += "; FAILED: " + std::to_string(report->failure_count) + " failure(s)";
    if (const auto* f = report->first_failure(); f != nullptr) detail += ", first: " + f->describe();
  } else if (got != expected) {
    out.status = AuditResult::Status::kFail;
    detail += "; FAILED: " + std::to_string(got) + " 35=" + counted_type + " messages, expected " +
              std::to_string(expected);
  } else {
    out.status = AuditResult::Status::kPass;
    detail += "; 35=" + counted_type + " count " + std::to_string(got) + " == expected";
  }
  out.detail = std::move(detail);
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
