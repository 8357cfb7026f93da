// Reading a session's journals after the fact: listing messages (dump),
// summarising them (stats) and auditing them (audit). The hft-journal tool is
// a thin command line over these functions; the latency lab calls
// audit_journal() on the journal of every run. This is the audit layer
// (hft::audit): it stands on codec and store only, so neither needs the
// session, transport or engine layers to read a journal.
//
// A directory given here is either
//   - a journal: a directory of "NNNNNNNN.seg" segment files, or
//   - a session store (store::JournalStore): outbound/ and inbound/ journals
//     and seqnums.dat; both journals are read, marked OUT and IN, or
//   - a session of a shared journal (store::SharedJournal, JournalLayout=shared):
//     a session directory holding only seqnums.dat, whose messages are the
//     records of one stream of <its parent>/shared-journal:
//
//       <FileStorePath>/shared-journal/NNNNNNNN.seg   records of every session
//       <FileStorePath>/<session dir>/seqnums.dat     the stream named <session dir>
//
//     Its outbound and inbound records are read as the OUT and IN journals of
//     a session store (seq: the stream header's MsgSeqNum; epoch: the stream's,
//     from its kEpochStart records; file and offset: the shared journal's), so
//     every check below applies to them as to a store's own journals.
//
// A shared journal given itself (its first record names stream 1) is read
// whole and audited record by record only: record, and stream (a valid
// stream header naming a known stream); its messages are audited per session.
// audit_shared_sessions() does both at once: it reads the shared journal
// once and audits the journal itself and every session (stream) it names,
// each as audit_journal() of the session's directory would, where auditing
// N sessions one by one reads the whole journal about 4N times.
//
// What the audit checks, per data record, in this order (the first check that
// fails names the record; later records are still audited and counted):
//
//   record      length and CRC-32C of the journal record (store::JournalReader);
//               control records in their places (segment start first, seal last,
//               the seal's last seq and index count agree with the segment);
//               a shared journal read whole: record numbers increase. (Read
//               as a session, the shared journal's control records are not
//               the stream's: audit the shared journal for them.)
//   stream      a shared journal read whole: the stream header is valid, a
//               kStreamName record names the next stream number, other
//               records name a stream named before. Nothing below is checked
//               there: per-message checks are done per session
//   fix-framing frame(): "8=FIX", BodyLength, "10=ddd" and its CheckSum value;
//               the record holds exactly one message
//   parse       MessageView::parse
//   begin-string  8 is the expected BeginString (option) or that of the journal's
//               first message
//   msg-seq-num 34 is present and equals the record's seq
//   validation  codec::Validator against the dictionary: required fields,
//               repeating groups (NumInGroup counts, entry order), formats, enums.
//               Without a dictionary, the built-in one of the message's
//               BeginString, checking only what it covers (session messages,
//               header, trailer)
//   sequence    within an epoch seqs are contiguous: a new epoch (store reset;
//               of a stream, also its first, opened by its name record)
//               starts at 1; a SequenceReset (35=4) moves the next expected seq
//               to its NewSeqNo (36); a record whose seq goes back is accepted
//               only as a PossDup (43=Y) duplicate or a SequenceReset-Reset.
//               Missing seqs are failures unless allow_gaps.
//   count       the number of messages equals expected_count (when given)
//
// And, per journal, what its files say was repaired or lost (find_repairs):
//
//   repair      lines of repairs.log (what Journal::open repaired: a tail cut,
//               a tail extended, a segment moved aside as .lost); a .cut-* or
//               .lost file repairs.log does not mention; a last segment that
//               is sealed (the segment written after it is gone); in a session
//               store, an outbound journal that ends before seqnums.dat's next
//               sender seq (messages sent but no longer in the journal). For a
//               session of a shared journal: the shared journal's files (its
//               repairs concern all its sessions) and its stream's last
//               outbound seq against the session's seqnums.dat.
//               Failures unless accept_repairs; always listed in the report.
//
// Everything here is a tool/start-up path: it allocates, and reports bad input
// (missing directory, not a journal, a newer format version, a corrupt segment
// header) as an Error naming the file and the problem, never by crashing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hft/codec/dictionary.hpp"
#include "hft/codec/validator.hpp"
#include "hft/core/expected.hpp"

namespace hft::audit {

/// Messages per MsgType (35), ordered by MsgType; looked up without a copy.
using PerTypeCounts = std::map<std::string, std::uint64_t, std::less<>>;

// ---- sources ------------------------------------------------------------------

/// Where a journal sits in a session store.
enum class JournalDirection : std::uint8_t {
  kJournal,   ///< a bare journal directory (no direction known)
  kOutbound,  ///< <store>/outbound
  kInbound,   ///< <store>/inbound
};

/// "OUT", "IN", or "" for a bare journal.
[[nodiscard]] std::string_view direction_label(JournalDirection direction) noexcept;

/// Which journals of a session store to read.
enum class DirectionSelect : std::uint8_t { kBoth, kOutbound, kInbound };

/// "out" / "in" / "both" -> DirectionSelect; empty if unknown.
[[nodiscard]] std::optional<DirectionSelect> parse_direction(std::string_view text) noexcept;

struct JournalSource {
  std::string path;  ///< the journal directory (holds the segments)
  JournalDirection direction = JournalDirection::kJournal;
  /// A session of the shared journal at `path`: its stream number, whose
  /// records of `direction` are read. 0: every record of `path`.
  std::uint32_t stream = 0;
  /// `path` is a shared journal (store::SharedJournal): every record's
  /// payload starts with a stream header.
  bool shared = false;
  /// Of a stream: the session directory (holds seqnums.dat); empty otherwise.
  std::string store = {};
};

/// How tools name a source: "PATH", "PATH (OUT)", "PATH (shared journal)",
/// "PATH stream 2 (SESSION DIR) (OUT)".
[[nodiscard]] std::string source_label(const JournalSource& source);

/// Resolves `dir` to the journals to read. A directory holding segment files
/// is one journal (`select` is ignored; `shared` when its first data record
/// names stream 1). A directory holding outbound/ or inbound/ (a session
/// store) gives those `select` asks for, outbound first. A directory holding
/// seqnums.dat but neither, next to a shared journal (../shared-journal),
/// gives the outbound and inbound records (`select`) of the stream named as
/// the directory, outbound first.
/// Errors (the message names the path): the directory is missing or not a
/// directory; it is neither a journal nor a store; a selected direction is
/// absent from the store (e.g. inbound messages were not journaled); the
/// shared journal names no stream as the directory (naming both); a segment
/// header has bad magic, a bad CRC, a newer format version, or is
/// inconsistent (store::JournalReader::open).
[[nodiscard]] Expected<std::vector<JournalSource>> resolve_journals(const std::string& dir,
                                                                    DirectionSelect select = DirectionSelect::kBoth);

/// "<journal>/NNNNNNNN.seg".
[[nodiscard]] std::string segment_file(const std::string& journal, std::uint64_t segment);

// ---- dictionaries ----------------------------------------------------------------

/// Loads a QuickFIX XML dictionary; with `app_path`, `path` must be the
/// FIXT.1.1 transport dictionary and the two are combined
/// (codec::Dictionary::combine). Errors name the file and line; an
/// application dictionary without a FIXT transport dictionary is an error.
[[nodiscard]] Expected<std::shared_ptr<const codec::Dictionary>> load_dictionary(const std::string& path,
                                                                                 const std::string& app_path = {});

/// The dictionary to print or validate a message with BeginString
/// `begin_string`: `loaded` when given, otherwise the built-in dictionary of
/// that version (nullptr when the BeginString is not one the engine speaks).
[[nodiscard]] std::shared_ptr<const codec::Dictionary> dictionary_for(
    const std::shared_ptr<const codec::Dictionary>& loaded, std::string_view begin_string);

// ---- time text -------------------------------------------------------------------

/// "2026-05-01T12:34:56.123456789Z" (UTC, always 9 fraction digits).
[[nodiscard]] std::string format_utc_ns(std::int64_t epoch_ns);

/// Parses a point in time (UTC) for filters: nanoseconds since the Unix epoch
/// ("1714566896123456789"), a FIX UTCTimestamp ("20260501-12:34:56.123"), or
/// ISO 8601 ("2026-05-01T12:34:56.123Z", "2026-05-01 12:34:56", "2026-05-01";
/// a trailing "Z" is optional, other offsets are refused). False if malformed.
[[nodiscard]] bool parse_time(std::string_view text, std::int64_t& epoch_ns) noexcept;

// ---- records ---------------------------------------------------------------------

/// One journal record as handed to a scan visitor. Views are valid only
/// during the callback.
struct JournalRecord {
  JournalDirection direction = JournalDirection::kJournal;
  const std::string* journal = nullptr;  ///< path of the journal directory
  std::uint64_t segment = 0;             ///< segment file number
  std::size_t offset = 0;                ///< byte offset of the record in the segment file
  std::uint64_t epoch = 0;               ///< from the segment's start record (0 if unknown)
  std::uint64_t seq = 0;                 ///< 0 for control records
  std::int64_t timestamp_ns = 0;         ///< the record's timestamp (UTC ns for sessions)
  std::uint16_t flags = 0;               ///< store::RecordFlag bits | caller flags << 8
  std::string_view bytes;                ///< the payload: wire bytes of a message
  std::string_view msg_type;             ///< 35 of a message; empty for control records
  /// A shared journal's record: its stream header, and `bytes` is what
  /// follows the header (a message, a stream's name, an epoch's creation
  /// time). Read as a stream, `seq` is then the MsgSeqNum and `epoch` the
  /// stream's; read whole, `seq` is the record number. All 0 for a record of
  /// another journal or without a valid stream header.
  std::uint32_t stream = 0;
  std::uint8_t stream_kind = 0;    ///< store::StreamHeader::Kind
  std::uint64_t stream_value = 0;  ///< MsgSeqNum, session identity or epoch
  [[nodiscard]] bool control() const noexcept;
  /// Path of the segment file.
  [[nodiscard]] std::string file() const;
};

/// Which records a scan delivers. Every bound is inclusive except `until_ns`.
struct RecordFilter {
  std::uint64_t from_seq = 0;
  std::uint64_t to_seq = UINT64_MAX;
  std::int64_t since_ns = INT64_MIN;
  std::int64_t until_ns = INT64_MAX;   ///< records at or after this are left out
  std::vector<std::string> msg_types;  ///< empty: every MsgType
  std::optional<std::uint64_t> epoch;  ///< only this epoch
  bool include_control = false;        ///< also segment start/seal records (seq and type filters skip them)
  std::size_t limit = 0;               ///< stop after this many (0: no limit)
};

struct ScanResult {
  std::size_t delivered = 0;
  /// Records that failed their length/CRC check (each ends its segment).
  std::size_t corrupt = 0;
  /// One line per corruption: "FILE@OFFSET: reason".
  std::vector<std::string> corruptions;
};

/// Hands the records of `sources` passing `filter` to `visit` in timestamp
/// order (a merge across journals; within a journal, file order). `visit`
/// returns false to stop. A stream source delivers only its stream's messages
/// of its direction (and, with include_control, the shared journal's control
/// records); its filters apply to MsgSeqNum and the stream's epoch. Errors: a
/// segment file vanished or became unreadable between resolve and scan.
[[nodiscard]] Expected<ScanResult> scan_journals(const std::vector<JournalSource>& sources,
                                                 const RecordFilter& filter,
                                                 const std::function<bool(const JournalRecord&)>& visit);

// ---- repairs -----------------------------------------------------------------------

/// One thing a journal's files show was repaired or lost (see the top of the file).
struct RepairFinding {
  JournalDirection direction = JournalDirection::kJournal;
  std::string file;  ///< the file that shows it (repairs.log, a .cut/.lost file, a segment, seqnums.dat)
  std::string text;  ///< what, with paths and counts
};

/// What the files of `source` show was repaired or lost. `store_dir`: the
/// session store it belongs to (for seqnums.dat), empty for a bare journal
/// (for a stream, source.store). Reads the journal's last segments only;
/// for an outbound stream, the whole shared journal (its last seq).
/// The shared journal's own findings are the same for each of its sources.
[[nodiscard]] std::vector<RepairFinding> find_repairs(const JournalSource& source,
                                                      const std::string& store_dir);

// ---- stats -----------------------------------------------------------------------

/// Distribution of message (payload) sizes in bytes.
struct SizeDistribution {
  std::uint64_t count = 0;
  std::uint64_t min = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
  double mean = 0;
  /// (upper bound, count) for power-of-two buckets <= 64, <= 128, ... up to max.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> buckets;
};

struct SegmentSummary {
  std::uint64_t number = 0;
  std::string path;
  std::uint64_t file_bytes = 0;      ///< size of the file (preallocated)
  std::uint64_t records = 0;         ///< data records
  std::uint64_t control_records = 0;
  bool sealed = false;               ///< ends with a seal record (finished by the writer)
  bool corrupt = false;              ///< reading stopped at a record that failed its checks
  std::uint64_t first_seq = 0, last_seq = 0;
};

struct EpochSummary {
  std::uint64_t epoch = 0;
  std::int64_t created_ns = 0;       ///< from the start record
  std::uint64_t records = 0;
  std::uint64_t first_seq = 0, last_seq = 0;
  std::int64_t first_ns = 0, last_ns = 0;
};

struct JournalSummary {
  JournalSource source;
  std::string begin_string;           ///< BeginString of the first message
  std::vector<SegmentSummary> segments;
  std::uint64_t records = 0;          ///< data records (messages)
  std::uint64_t control_records = 0;
  std::uint64_t payload_bytes = 0;    ///< message bytes
  std::uint64_t file_bytes = 0;       ///< size of the segment files
  std::uint64_t unindexed = 0;        ///< records whose seq did not increase (not replayable)
  std::uint64_t corrupt = 0;
  std::vector<std::string> corruptions;
  std::vector<EpochSummary> epochs;
  std::uint64_t first_seq = 0, last_seq = 0;
  std::int64_t first_ns = 0, last_ns = 0;
  PerTypeCounts per_type;
  /// (records - 1) / (last_ns - first_ns); 0 with fewer than two records or no span.
  double messages_per_second = 0;
  SizeDistribution message_sizes;
  std::vector<RepairFinding> repairs;  ///< find_repairs()
};

/// Summarises every journal `dir` resolves to (resolve_journals).
[[nodiscard]] Expected<std::vector<JournalSummary>> summarize_journals(const std::string& dir,
                                                                       DirectionSelect select = DirectionSelect::kBoth);

// ---- audit -----------------------------------------------------------------------

/// The checks of an audit, in the order they are applied to a record.
enum class AuditCheck : std::uint8_t {
  kRecord,       ///< journal record length/CRC, control records, record numbers
  kStream,       ///< a shared journal's stream header (read whole)
  kFixFraming,   ///< BeginString, BodyLength, CheckSum (codec::frame)
  kParse,        ///< codec::MessageView::parse
  kBeginString,  ///< unexpected BeginString
  kMsgSeqNum,    ///< 34 absent or != the record's seq
  kValidation,   ///< codec::Validator
  kSequence,     ///< gap, or a seq going back
  kCount,        ///< message count != expected_count
  kRepair,       ///< a repair or loss the journal's files show (find_repairs)
};

/// "record", "stream", "fix-framing", "parse", "begin-string", "msg-seq-num",
/// "validation", "sequence", "count", "repair".
[[nodiscard]] std::string_view to_string(AuditCheck check) noexcept;

struct AuditOptions {
  /// Dictionary for validation (load_dictionary). Null: the built-in
  /// dictionary of each message's BeginString, checking only what it covers.
  std::shared_ptr<const codec::Dictionary> dictionary;
  /// Validator switches. Unset: every check with `dictionary`; with the
  /// built-in dictionaries, unknown message types and their fields pass.
  std::optional<codec::ValidationOptions> validation;
  bool validate = true;             ///< false: skip the Validator step
  /// Expected BeginString of every message; empty: the journal's first message's.
  std::string begin_string;
  /// Fail unless exactly this many messages (data records) are found.
  std::optional<std::uint64_t> expected_count;
  /// Missing seqs are counted but do not fail the audit.
  bool allow_gaps = false;
  /// Repairs found (find_repairs) are listed in AuditReport::repairs but do
  /// not fail the audit.
  bool accept_repairs = false;
  DirectionSelect direction = DirectionSelect::kBoth;
  /// Failures kept in AuditReport::failures (all are counted).
  std::size_t max_failures = 20;
};

struct AuditFailure {
  AuditCheck check = AuditCheck::kRecord;
  JournalDirection direction = JournalDirection::kJournal;
  std::string file;              ///< segment file; empty for kCount
  std::uint64_t segment = 0;
  std::size_t offset = 0;        ///< byte offset of the record in `file`
  std::uint64_t seq = 0;         ///< the record's seq (0 if unreadable or control)
  std::uint64_t epoch = 0;
  std::int64_t timestamp_ns = 0;
  std::string msg_type;
  std::string reason;
  /// "FILE@OFFSET seq N [35=T]: check: reason" (for kCount: "check: reason").
  [[nodiscard]] std::string describe() const;
};

/// Audit of one journal.
struct JournalAudit {
  JournalSource source;
  std::uint64_t segments = 0;
  std::uint64_t records = 0;          ///< data records (messages)
  std::uint64_t control_records = 0;
  std::uint64_t bytes = 0;            ///< message bytes
  std::uint64_t epochs = 0;
  std::uint64_t first_seq = 0, last_seq = 0;  ///< of the first and last message, file order
  std::int64_t first_ns = 0, last_ns = 0;
  PerTypeCounts per_type;
  std::uint64_t missing_seqs = 0;     ///< seqs skipped inside epochs (gaps)
  std::uint64_t duplicates = 0;       ///< PossDup records whose seq was already seen
  std::uint64_t sequence_resets = 0;  ///< SequenceReset messages that moved the expected seq
  std::uint64_t validated = 0;        ///< messages the Validator checked
  std::uint64_t failures = 0;
  std::uint64_t repairs = 0;  ///< findings of find_repairs()
  /// A shared journal read whole: the streams (sessions) its records name.
  /// Its messages are not checked here: audit each session's directory.
  std::uint64_t streams = 0;
};

struct AuditReport {
  bool ok = true;
  std::string directory;
  std::vector<JournalAudit> journals;
  std::uint64_t segments = 0;
  std::uint64_t records = 0;          ///< messages in every journal audited
  std::uint64_t control_records = 0;
  std::uint64_t bytes = 0;
  /// Lowest first and highest last seq over the journals (one journal: its own).
  std::uint64_t first_seq = 0, last_seq = 0;
  PerTypeCounts per_type;
  std::uint64_t missing_seqs = 0;
  std::string begin_string;           ///< of the first message
  std::string dictionary;             ///< version of the given dictionary, or "built-in"
  std::uint64_t failure_count = 0;
  std::vector<AuditFailure> failures; ///< the first AuditOptions::max_failures, in order found
  /// Every repair found (find_repairs), accepted or not.
  std::vector<RepairFinding> repairs;
  /// The first failure, or nullptr when ok.
  [[nodiscard]] const AuditFailure* first_failure() const noexcept {
    return failures.empty() ? nullptr : &failures.front();
  }
};

/// Audits the journal(s) in `dir` (see the top of this file). The returned
/// report says ok or names the failures; an Error means the input could not
/// be read at all (resolve_journals' errors). Failures inside records never
/// become an Error.
[[nodiscard]] Expected<AuditReport> audit_journal(const std::string& dir, const AuditOptions& options);

// ---- every session of a shared journal ---------------------------------------------

/// One session (stream) of a shared journal, audited as its own store.
struct SessionAudit {
  std::uint32_t stream = 0;  ///< its number in the shared journal
  std::string name;          ///< the stream's name record: the session's directory name
  /// <the shared journal's parent>/<name>: the session directory, which
  /// holds its seqnums.dat (FileStorePath/<session dir>).
  std::string directory;
  /// What audit_journal(directory, options) reports: one JournalAudit per
  /// direction options.direction selects (outbound first), per_type,
  /// failures in the same order, the shared journal's repairs and the
  /// session's seqnums.dat check, options.expected_count against the
  /// session's messages.
  AuditReport report;
};

/// Every session of a shared journal and the journal itself, from one read.
struct SharedJournalAudit {
  /// The journal's report and every session's are ok.
  bool ok = true;
  /// The shared journal read whole, record by record (record and stream
  /// checks, its repairs): what audit_journal(shared_journal_dir, options)
  /// reports, except that options.expected_count is the sessions' (it is
  /// not applied here). Its failures are the journal's, reported once; a
  /// corrupt record is also a failure of every session, as each session's
  /// own audit_journal() finds it.
  AuditReport journal;
  /// Every stream a name record names, by stream number.
  std::vector<SessionAudit> sessions;
  /// Reads of the journal's records from its first segment to its last: 1,
  /// plus one per session whose inbound messages had to be audited again
  /// (when options.begin_string is empty, audit_journal() expects every
  /// message of a session to have the BeginString of its first outbound
  /// one; a session whose first inbound message came before any outbound
  /// one and has another BeginString is read again to know that).
  std::uint64_t passes = 0;
  /// Records (data, control and corrupt) those passes read.
  std::uint64_t records_read = 0;
};

/// Audits every session of the shared journal at `shared_journal_dir`
/// (<FileStorePath>/shared-journal) and the journal itself in one pass over
/// its records: each record goes to the journal's record checks and, by its
/// stream header, to its session's auditor of that direction (one per
/// stream and direction). Each SessionAudit's report is the one
/// audit_journal() gives for <parent>/<name>; the repairs the journal's
/// files show are found once and given to every session, as audit_journal()
/// does for each. `shared_journal_dir` is used as given without trailing
/// slashes (the paths in the reports derive from it). Unlike
/// audit_journal(<parent>/<name>), a stream is audited even when its
/// session directory is gone (no seqnums.dat: no seqnums check) or when an
/// earlier stream has the same name (audit_journal() finds only the first).
/// Records of a stream no name record names are the journal's stream
/// failures only.
/// Errors (naming the path): resolve_journals' for the directory; it is not
/// a shared journal (a session store, or a journal whose first record does
/// not name stream 1).
[[nodiscard]] Expected<SharedJournalAudit> audit_shared_sessions(const std::string& shared_journal_dir,
                                                                 const AuditOptions& options);

/// The report as JSON text (nlohmann-json layout; `indent` < 0: one line).
[[nodiscard]] std::string to_json(const AuditReport& report, int indent = 2);
/// Every session's audit of a shared journal as JSON text: ok, passes,
/// records_read, journal (its report), sessions [{stream, name, directory,
/// report}].
[[nodiscard]] std::string to_json(const SharedJournalAudit& audit, int indent = 2);
/// Summaries as JSON text.
[[nodiscard]] std::string to_json(const std::vector<JournalSummary>& summaries, int indent = 2);

}  // namespace hft::audit
