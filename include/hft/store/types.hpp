// Vocabulary shared by the journal, the stores and their callers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace hft::store {

/// Result of a store operation on the hot path. Negative values are
/// failures; none of them leaves a partial record visible to a reader.
enum class StoreStatus : std::int8_t {
  kOk = 0,
  kNoClaim = -1,          ///< commit() without a preceding successful claim()
  kInvalidArgument = -2,  ///< empty message, or offset + length beyond the claim
  kTooLarge = -3,         ///< the message cannot fit in an empty segment / slot
  kNoSpare = -4,          ///< no pre-created segment was ready and the journal
                          ///< is configured to fail instead of creating one inline
  kNoSpace = -5,          ///< the file system refused space (ENOSPC, EFBIG, EDQUOT)
  kIoError = -6,          ///< another system error; stats().last_errno tells which
  kClosed = -7,           ///< the store is not open
};

/// Static text for a status (for logs; never allocates).
[[nodiscard]] std::string_view to_string(StoreStatus status) noexcept;

/// What a journal promises about committed records, and what it pays for it.
/// docs/journal.md has the table of what each survives and its measured cost.
enum class Durability : std::uint8_t {
  kNone,   ///< nothing is ever flushed explicitly, not even at close
  kOs,     ///< the page cache holds every commit (survives a process crash);
           ///< the kernel writes back on its own schedule; msync at clean close
  kFsync,  ///< the service thread msyncs, every interval, what was written
           ///< two intervals ago (power loss loses at most ~3 intervals)
  kSync,   ///< every commit msyncs its pages before returning (slow; audits)
};

/// Parses "none" / "os" / "fsync" / "sync". Empty if unknown.
[[nodiscard]] std::optional<Durability> parse_durability(std::string_view name) noexcept;
[[nodiscard]] std::string_view to_string(Durability durability) noexcept;

/// What the writer does when a segment is full and the service has no
/// spare segment ready.
enum class SpareMissPolicy : std::uint8_t {
  kCreateInline,  ///< create and map the next segment on the writer thread
                  ///< (tens of microseconds, its pages then fault on first
                  ///< touch); counted in JournalStats::spare_misses
  kFail,          ///< return kNoSpare at once; the caller retries later
};

/// One stored message as handed to a replay visitor. `bytes` points into a
/// mapping and is valid only during the callback.
struct StoredMessage {
  std::uint64_t seq = 0;
  std::int64_t timestamp_ns = 0;
  std::uint8_t flags = 0;  ///< the caller's flags given at commit
  std::span<const char> bytes;
};

/// Receives replayed messages in ascending seq order. Return false to stop.
class ReplayVisitor {
 public:
  virtual ~ReplayVisitor() = default;
  virtual bool on_message(const StoredMessage& message) noexcept = 0;
};

/// Adapts any callable `bool(const StoredMessage&)` to a ReplayVisitor.
template <typename F>
class ReplayFunction final : public ReplayVisitor {
 public:
  explicit ReplayFunction(F& f) noexcept : f_(f) {}
  bool on_message(const StoredMessage& message) noexcept override { return f_(message); }

 private:
  F& f_;
};

enum class ReplayStatus : std::int8_t {
  kComplete = 0,   ///< every stored message in [begin, end] was delivered
  kLimit = 1,      ///< max_messages were delivered; resume at next_seq
  kStopped = 2,    ///< the visitor returned false; resume at next_seq
  kIoError = -1,   ///< a segment could not be mapped; resume at next_seq
};

/// Outcome of one replay call. Sequence numbers in [begin, next_seq) that
/// were not delivered are not stored (never committed, removed by
/// retention, or corrupt): the session fills them with a gap fill.
struct ReplayResult {
  ReplayStatus status = ReplayStatus::kComplete;
  std::uint64_t next_seq = 0;   ///< first seq not yet examined
  std::size_t delivered = 0;    ///< messages handed to the visitor
  std::size_t corrupt = 0;      ///< records skipped because their CRC or framing failed
  std::size_t unavailable_segments = 0;  ///< segments removed by retention or unreadable
};

/// Counters of one journal. Writer-side counters are updated by the owning
/// thread, service-side ones by the service thread; a snapshot is
/// consistent per field, not across fields.
struct JournalStats {
  // writer thread
  std::uint64_t appends = 0;          ///< data records committed
  std::uint64_t bytes = 0;            ///< payload bytes committed
  std::uint64_t unindexed = 0;        ///< commits whose seq did not increase
  std::uint64_t failed_claims = 0;    ///< claim() returned an empty span
  std::uint64_t rotations = 0;        ///< segment switches by the writer
  std::uint64_t spare_misses = 0;     ///< rotations that found no ready spare
  std::uint64_t inline_creations = 0; ///< segments created on the writer thread
  std::uint64_t unfaulted_rotations = 0;  ///< spare taken before its pre-fault finished
  std::uint64_t retire_overflows = 0; ///< retire ring full: writer unmapped inline
  std::uint64_t sync_flushes = 0;     ///< per-commit msyncs (Durability::kSync)
  std::uint64_t fill_takeovers = 0;   ///< the writer reached the service's zero-fill and took the next
                                      ///< piece past it (zero-filling it itself: writer_filled_bytes)
  std::uint64_t writer_filled_bytes = 0;  ///< bytes the writer zero-filled so (prepare_ahead)
  std::uint64_t fence_rotations = 0;      ///< rotations because the service was zero-filling just where the
                                          ///< writer arrived (the segment sealed before it was full)
  // service thread
  std::uint64_t segments_created = 0; ///< spares created by the service
  std::uint64_t spares_renumbered = 0; ///< ready spares passed over by an inline creation, renamed to
                                        ///< follow it and kept (not removed and made again)
  std::uint64_t segments_retired = 0; ///< finished segments flushed and unmapped
  std::uint64_t segments_removed = 0; ///< deleted or archived by retention
  std::uint64_t segments_evicted = 0; ///< finished segments dropped from the page cache
                                      ///< (JournalConfig::evict_finished)
  std::uint64_t max_evict_ns = 0;     ///< longest write-back start or page-cache drop call
  std::uint64_t written_evicted_bytes = 0;  ///< bytes of active segments taken out of the writer's mapping
                                            ///< (JournalConfig::evict_written)
  std::uint64_t filled_bytes = 0;     ///< bytes zero-filled and mapped ahead of the writer (prepare_ahead)
  std::uint64_t write_behind_bytes = 0;     ///< bytes written to segment files from write-behind buffers
  std::uint64_t write_behind_segments = 0;  ///< segments written through a write-behind buffer
  std::uint64_t write_behind_misses = 0;    ///< segments created with no buffer free (written through the
                                            ///< page cache instead)
  std::uint64_t flushes = 0;          ///< service msync / write-back calls
  std::uint64_t flush_errors = 0;
  std::uint64_t max_flush_ns = 0;     ///< longest service flush call
  std::uint64_t max_prepare_ns = 0;   ///< longest spare preparation, creation to fully
                                      ///< pre-faulted (wall time, includes waiting for CPU)
  std::uint64_t service_errors = 0;   ///< failed spare creations, deletions, ...
  int last_errno = 0;                 ///< errno of the most recent failure (either side)
  int spare_errno = 0;                ///< non-zero while the service cannot prepare the next
                                      ///< segment (errno of its last attempt; retried every
                                      ///< 100 ms); back to 0 once a spare is ready again
  // state
  std::uint64_t active_segment = 0;
  std::uint64_t epoch = 0;
  std::uint64_t last_seq = 0;
};

}  // namespace hft::store
