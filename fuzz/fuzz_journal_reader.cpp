// libFuzzer target for what hft-journal reads: damaged journal segments and
// stores (journal_files.hpp says how the input describes them) through
// resolve_journals, scan_journals, summarize_journals, audit_journal and the
// JSON reports. Invariants: no crash; unreadable input is an Error with a
// message, never an exception or an abort; the counts agree (records
// delivered by a scan = records summarised; an audit is ok exactly when it
// found no failure; per-journal records add up to the total).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "hft/audit/journal_audit.hpp"
#include "journal_files.hpp"

using namespace hft;

namespace {

inline void expect(bool ok) {
  if (!ok) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string dir = fuzz::write_store({reinterpret_cast<const char*>(data), size});
  // The store, or its outbound journal alone (a bare journal directory).
  const std::string target = size > 0 && (data[0] & 1) ? dir + "/outbound" : dir;

  auto sources = audit::resolve_journals(target);
  if (!sources) {
    expect(!sources.error().message.empty());
    return 0;
  }
  audit::RecordFilter filter;
  std::uint64_t data_records = 0;
  auto scanned = audit::scan_journals(*sources, filter, [&](const audit::JournalRecord& r) {
    expect(!r.control());
    ++data_records;
    return true;
  });
  if (!scanned) {
    expect(!scanned.error().message.empty());
    return 0;
  }
  expect(scanned->delivered == data_records);

  auto summaries = audit::summarize_journals(target);
  if (summaries) {
    std::uint64_t summarised = 0;
    for (const audit::JournalSummary& s : *summaries) summarised += s.records;
    expect(summarised == data_records);
    (void)audit::to_json(*summaries, -1);
  } else {
    expect(!summaries.error().message.empty());
  }

  audit::AuditOptions options;
  options.allow_gaps = size > 0 && (data[0] & 2);
  auto report = audit::audit_journal(target, options);
  if (!report) {
    expect(!report.error().message.empty());
    return 0;
  }
  expect(report->ok == (report->failure_count == 0));
  std::uint64_t records = 0;
  for (const audit::JournalAudit& j : report->journals) records += j.records;
  expect(records == report->records);
  (void)audit::to_json(*report, -1);
  return 0;
}
