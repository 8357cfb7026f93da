// Audits of the outbound journals that the other engines of the tx and rtt
// lanes write (LAB.md rule 10): QuickFIX's FileStore and llfix's serialised
// message files. Neither has record CRCs; both hold each message's exact
// wire bytes, so each message is checked the same way (MessageAudit):
// framing, BodyLength and CheckSum, MsgSeqNum contiguous, the reference
// order's fields, and the NewOrderSingle count against the calls made.
// They are readers of those formats over the codec, with no code of either
// engine, so they live in the lab library and are built and tested whether
// or not QuickFIX or llfix is.
//
// llfix 1.0.5's serialised message file (MessageSerialiser in
// electronic_trading/common/message_serialiser.h), one per <n>.bin in the
// session's outgoing_message_serialisation_path, numbered 1, 2, ... as the
// writer rotates. Native byte order (little-endian on x86-64), unaligned:
//
//   offset  size  field
//   ------  ----  ---------------------------------------------------------
//        0     8  message count     records written to this file (uint64)
//        8        records, back to back, `message count` of them:
//       +0     8    timestamp       CLOCK_REALTIME ns at the append (uint64)
//       +8     1    success         1: send() accepted every byte, 0: it failed
//       +9     8    msglen          bytes of the message (uint64)
//      +17     n    message         the FIX message as encoded for the wire
//        .        zeros to the end: the file is created at its full size
//                 (max_serialised_file_size) filled with zero bytes
//
// There is no magic, version, record length check or CRC: a damaged length
// shows as a record that frames wrong or runs past the file, a damaged
// message body as a CheckSum or BodyLength mismatch (CheckSum is a sum mod
// 256: changes that cancel out are not seen); a changed timestamp or a
// success byte flipped to another value in {0, 1} cannot be seen at all.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "hft/core/expected.hpp"
#include "hft/lab/lane.hpp"

namespace hft::lab {

/// Per-message checks shared by the foreign-journal audits, accumulated
/// over one journal: record count, per-type counts, sequence range and the
/// first failure.
class MessageAudit {
 public:
  /// `counted_type`: the MsgType finish() counts against the expected
  /// number ("D": the orders of a client's outbound journal; "8": the
  /// reports of a venue's).
  explicit MessageAudit(std::string counted_type = "D") : counted_type_(std::move(counted_type)) {}

  /// Checks one stored message. `stored_seq` is the sequence number the
  /// journal keeps beside it (0 when it keeps none): the message's 34 must
  /// equal it. The sequence numbers (stored, else 34) must be contiguous.
  /// `where` prefixes failure text (file, record).
  void check(std::string_view message, std::uint64_t stored_seq, const std::string& where);
  /// Records a failure found outside the message (layout, bounds).
  void fail(const std::string& why);

  /// The result: kFail on any failure or when the count of the counted
  /// type differs from `expected_orders`. Detail: "<what>: N messages
  /// (types), seqs a..b; <checked> checked; 35=D count N == expected" or
  /// the first failure.
  [[nodiscard]] AuditResult finish(const std::string& what, const std::string& checked,
                                   std::uint64_t expected_orders) const;

  [[nodiscard]] std::uint64_t failures() const noexcept { return failures_; }

 private:
  void sequence(std::uint64_t seq, const std::string& where);

  std::string counted_type_;
  std::uint64_t records_ = 0;
  std::uint64_t orders_ = 0;
  std::uint64_t failures_ = 0;
  std::uint64_t first_seq_ = 0;
  std::uint64_t last_seq_ = 0;
  std::map<std::string, std::uint64_t> per_type_;
  std::string first_failure_;
};

/// Audits a QuickFIX FileStore: `<prefix>.header` holds "seq,offset,size "
/// per stored message, `<prefix>.body` the messages back to back.
[[nodiscard]] AuditResult audit_quickfix_store(const std::filesystem::path& header_file,
                                               std::uint64_t expected_orders);

/// One record of an llfix serialised file (a view into the file's bytes).
struct LlfixRecord {
  std::uint64_t offset = 0;        ///< of the record (its timestamp) in the file
  std::uint64_t timestamp_ns = 0;  ///< CLOCK_REALTIME at the append
  std::uint8_t success = 0;        ///< 1 sent, 0 send() failed; anything else is damage
  std::string_view message;
};

/// Layout facts of one parsed llfix file.
struct LlfixFileSummary {
  std::uint64_t records = 0;   ///< == the file's message count
  std::uint64_t used = 0;      ///< bytes up to the end of the last record
  std::uint64_t size = 0;      ///< file size
};

/// Walks the records of one llfix serialised file's bytes (layout above),
/// calling `visit` for each. Errors (naming the record and its offset): a
/// file shorter than its count field; a record header or message that runs
/// past the end of the file (truncation, damaged length); a non-zero record
/// header right after the last counted record (a record appended without
/// its count).
[[nodiscard]] Expected<LlfixFileSummary> read_llfix_file(std::string_view bytes,
                                                         const std::function<void(const LlfixRecord&)>& visit);

/// True if `dir` holds llfix serialised files (<digits>.bin).
[[nodiscard]] bool is_llfix_journal(const std::filesystem::path& dir);

/// Audits an llfix outgoing journal directory: files 1.bin .. N.bin with no
/// gap and one size, each file's layout (read_llfix_file), every record's
/// success byte 1 and timestamps non-decreasing, then MessageAudit on every
/// message (34 is the only sequence number llfix keeps). Passes when all
/// holds and there are exactly `expected` messages of `counted_type`
/// (NewOrderSingles by default; "8" for a venue's outgoing journal). Failure
/// detail names the file.
[[nodiscard]] AuditResult audit_llfix_journal(const std::filesystem::path& dir, std::uint64_t expected,
                                              const std::string& counted_type = "D");

}  // namespace hft::lab
