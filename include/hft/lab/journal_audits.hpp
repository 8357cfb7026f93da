// The post-run audits of the journals a run wrote (LAB.md rule 10): a
// client engine's outbound journal, whichever engine wrote it (libhft
// through the audit layer, hft::audit::audit_journal; QuickFIX's FileStore
// and llfix's serialised files through foreign_journals.hpp), and the
// inbound and outbound journals of the venue's session stores. Each passes
// when every record passes and the journal holds exactly the messages the
// run sent or answered; the result goes into RunResult::audit.
//
// The libhft journals are validated against the reference order's
// dictionaries (reference_order.hpp): FIXT11.xml and FIX50SP2.xml in
// `spec_dir`, loaded once per process (per spec_dir). Files are read, never
// written, except by empty_run_journals, set_aside_emptied_journals and
// set_aside_stale_run.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "hft/lab/lane.hpp"

namespace hft::lab {

/// Audits the outbound journal a client engine wrote in `dir`: a libhft
/// session store (it holds outbound/), a QuickFIX FileStore (a *.header
/// file and its .body) or llfix serialised files (<n>.bin). Passes when
/// every check passes and the journal holds exactly `expected_orders`
/// NewOrderSingles. Not run: no such directory, or (libhft) the
/// dictionaries in `spec_dir` did not load. Fails: a directory that is none
/// of the three.
[[nodiscard]] AuditResult audit_client_journal(const std::filesystem::path& dir,
                                               std::uint64_t expected_orders, const std::string& spec_dir);

/// Audits one venue session store (libhft): inbound NewOrderSingles ==
/// `orders`, outbound ExecutionReports == `reports`, both journals pass.
[[nodiscard]] AuditResult audit_venue_store(const std::filesystem::path& session_dir, std::uint64_t orders,
                                            std::uint64_t reports, const std::string& spec_dir);

/// One venue session as the run saw it, for audit_venue_shared_store.
struct VenueSessionCounts {
  /// Its directory's name under the store root (the session's stream name),
  /// e.g. "FIXT.1.1-EXECUTOR-CLIENT1".
  std::string directory;
  std::uint64_t orders = 0;   ///< NewOrderSingles its connection sent
  std::uint64_t reports = 0;  ///< ExecutionReports it should have answered
};

/// Audits the venue sessions of a shared journal (JournalLayout=shared:
/// <store_root>/shared-journal) in one pass over it
/// (audit::audit_shared_sessions), where audit_venue_store per session
/// would read the whole journal several times per session. Returns one
/// result per entry of `sessions`, named by its directory, as
/// audit_venue_store gives (its inbound stream holds exactly `orders`
/// NewOrderSingles, its outbound stream `reports` ExecutionReports, both
/// pass every check; the two parts' details joined with " | "), then one
/// named "shared journal" for the journal's own record checks (checked: 0,
/// its records are the sessions' messages). A session the journal names no
/// stream for fails; streams of sessions not in `sessions` are not looked
/// at. Not run (every entry): the dictionaries in `spec_dir` did not load.
/// Fails (every entry): the shared journal cannot be read.
[[nodiscard]] std::vector<std::pair<std::string, AuditResult>> audit_venue_shared_store(
    const std::filesystem::path& store_root, const std::vector<VenueSessionCounts>& sessions,
    const std::string& spec_dir);

/// Combines audits: fail if any failed, pass if all passed (and there is
/// at least one), else not run. Details joined with " | ", counts summed.
[[nodiscard]] AuditResult combine_audits(const std::vector<std::pair<std::string, AuditResult>>& parts);

/// Empties the files of a run whose audit did not fail (640 MiB segments
/// add up quickly; the blocks are freed now) and leaves the directory for
/// set_aside_emptied_journals(); keeps everything when it failed. Returns a
/// note for the report (the disk use freed, or where the journals are kept).
[[nodiscard]] std::string empty_run_journals(const std::filesystem::path& run_dir, const AuditResult& audit);
/// Where emptied run directories are kept, relative to --out; the manifest
/// does not list what is under it.
inline constexpr const char* kEmptiedDir = "runs/.emptied";
/// kEmptiedDir under `out_dir`.
[[nodiscard]] std::filesystem::path emptied_root(const std::filesystem::path& out_dir);
/// Moves the directories empty_run_journals() emptied into
/// emptied_root(out_dir) (the bench calls it after its last run). Their
/// files are not removed: on ext4 without a journal, every file created in
/// the minutes after thousands were removed scans the removed inodes, and
/// the next bench's venue creates its segments then (see
/// journal_audits.cpp).
void set_aside_emptied_journals(const std::filesystem::path& out_dir);
/// Empties every file under `dir` (a run directory an interrupted bench
/// left) and moves it into emptied_root(out_dir), so a run can start in its
/// place without removing files. Returns false when it could not be moved.
bool set_aside_stale_run(const std::filesystem::path& dir, const std::filesystem::path& out_dir);

}  // namespace hft::lab
