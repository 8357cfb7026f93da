// The message journal: one per session and direction, a directory of
// fixed-size memory-mapped segments (layout in format.hpp).
//
// Hot path (the owning thread, usually the session thread):
//
//   std::span<char> room = journal.claim(max_bytes);   // inside the mapping
//   ... the encoder writes the message somewhere in `room` ...
//   journal.commit(seq, ts, offset_in_room, length);   // CRC, then publish
//
// claim/commit never allocate, lock or make a system call (except
// Durability::kSync, which msyncs by definition). When a segment is full,
// claim() switches to the spare segment the JournalService prepared
// (created, fallocated, mapped, every page pre-faulted): a pointer swap plus
// two 32-byte control records. The finished segment goes to the service
// through an SPSC ring to be flushed and unmapped. If no spare is ready the
// writer does not wait silently: per SpareMissPolicy it creates the segment
// itself (counted) or returns kNoSpare.
//
// Threads: claim, commit, append, reset, replay, flush and the accessors
// belong to the owning thread. The JournalService thread only touches the
// spare hand-off, the retire ring and a few published atomics. Without a
// service, the owner may call maintain() itself (tests, tools).
//
// Epochs: a session reset (ResetSeqNumFlag) restarts sequence numbers at 1.
// reset() rolls to a new segment whose start record opens a new epoch; replay
// and the index only see the current epoch. Earlier epochs stay on disk until
// retention removes them.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "hft/core/expected.hpp"
#include "hft/core/spsc_ring.hpp"
#include "hft/store/format.hpp"
#include "hft/store/types.hpp"

namespace hft::store {

class JournalService;

namespace detail {
struct Segment;
class WriteBehind;
}

struct JournalConfig {
  /// Directory of the segments. Created (with parents) when missing if
  /// create_directory is true; otherwise a missing directory is an error.
  std::string directory;
  bool create_directory = true;
  /// Bytes per segment file: a multiple of 4096 in [kMinSegmentSize, 4 GiB).
  /// With initial_segment_size, the largest a segment grows to.
  std::size_t segment_size = std::size_t{64} << 20;
  /// Size of the journal's first segment (0: segment_size). Each segment
  /// after it is twice the size of the one before, up to segment_size, so a
  /// journal's files grow with what it holds: a quiet session keeps one
  /// small segment, a busy one reaches full-size segments after writing
  /// about segment_size bytes. A claim that a segment of the next size could
  /// not hold gets the size that can (a power-of-two multiple, at most
  /// segment_size). A multiple of 4096, at least kMinSegmentSize, at most
  /// segment_size.
  std::size_t initial_segment_size = 0;
  /// No segment is created at open for a journal that has none: the first
  /// claim creates it (open + fallocate + mmap of initial_segment_size, on
  /// the writer, counted in segments_created). A journal that is never
  /// written leaves no file behind. False: open creates it.
  bool defer_first_segment = false;
  /// When the service prepares the next segment: once the active one is at
  /// least this fraction full (0: as soon as a segment becomes active), and
  /// always at once after the journal has rotated since it was opened (it
  /// is being written fast enough to fill segments). With many quiet
  /// sessions, 0.5 keeps one spare per journal that is filling, not one per
  /// journal.
  double prepare_spare_at = 0.0;
  /// 0: a spare is zero-filled and pre-faulted whole before the writer gets
  /// it (a writer that fills segments fast never faults). N: only its first
  /// N bytes are zero-filled and mapped (and its last slot pages
  /// pre-faulted); the service then zero-fills ahead of the writer, past a
  /// fence the writer stays below, and a writer that reaches the fence
  /// zero-fills its next piece itself (docs/journal.md, "Zero-fill ahead of
  /// the writer"). With thousands of journals
  /// growing in step, preparing whole spares (each as large as all the
  /// journal held before) needed more of the service's core than it has;
  /// this makes the preparation follow what is written.
  std::size_t prepare_ahead = 0;
  /// False: nothing is prepared ahead of the writer (a control that
  /// reproduces an engine without preallocation; hft-bench --prealloc off):
  /// no spare segment (each rotation creates the next file on the writer,
  /// counted in spare_misses and inline_creations), no pre-fault and no
  /// re-warm (the writer faults in every page it first stores to). Files are
  /// still fallocated, so a full disk stays an error, never a SIGBUS. Needs
  /// spare_miss kCreateInline.
  bool preallocate = true;
  /// Record start alignment, 8 (dense) or 64 (one cache line per record start).
  std::uint32_t record_alignment = 8;
  Durability durability = Durability::kOs;
  /// Period of the service's msync under Durability::kFsync. Each tick
  /// flushes what was written up to two ticks before, so the writer never
  /// stores into pages just cleaned by write-back; a shorter period means a
  /// smaller loss window and more writer page faults (docs/journal.md).
  std::int64_t fsync_interval_ns = 10'000'000;
  SpareMissPolicy spare_miss = SpareMissPolicy::kCreateInline;
  /// Retention of finished segments (never the active one, never one a
  /// replay is reading): keep at most this many segment files including the
  /// active one (0 = no limit) ...
  std::size_t retain_segments = 0;
  /// ... and remove finished segments older than this (0 = no limit). Age
  /// counts from when the segment was finished (or, for segments found at
  /// open, from the file's modification time).
  std::int64_t retain_max_age_ns = 0;
  /// Where retention moves segments instead of deleting them (same file
  /// system; created at open). Empty: delete.
  std::string archive_directory;
  /// Segments of one epoch the replay index tracks; older ones of a longer
  /// epoch are no longer replayable (they stay on disk).
  std::size_t max_epoch_segments = 4096;
  /// Every rewarm_interval_ns the service re-touches the pages ahead of the
  /// writer — at least this many bytes, and twice what the writer wrote in
  /// the last interval — so pages the kernel wrote back (and
  /// write-protected) fault on the service thread, not on the writer.
  /// 0 disables.
  std::size_t rewarm_window = std::size_t{4} << 20;
  std::int64_t rewarm_interval_ns = 100'000'000;
  /// Finished segments leave the page cache. As the service unmaps one
  /// (4 MiB per duty cycle) it starts the write-back of those pages and
  /// drops the ones already clean (POSIX_FADV_DONTNEED); evict_delay_ns
  /// later it drops the rest, by then written. The journal's page cache
  /// then stays about the size of the segments being written instead of
  /// growing with everything journaled, and new journal pages come from
  /// memory just freed. Replay and readers still read finished segments,
  /// from disk. False: finished pages stay cached until the kernel reclaims
  /// them.
  bool evict_finished = true;
  std::int64_t evict_delay_ns = 1'000'000'000;
  /// The written part of the segment being written leaves the page cache
  /// too: each re-warm round, once at least evict_written_chunk bytes lie
  /// more than evict_written_keep behind the writer, the service takes them
  /// out of the writer's mapping (MADV_DONTNEED: their dirty state moves to
  /// the page cache, nothing is lost) and, evict_written_delay_ns later,
  /// drops them from the page cache (POSIX_FADV_DONTNEED). It starts no
  /// write-back of its own: the delay is longer than the kernel's dirty
  /// expiry (vm.dirty_expire_centisecs, 30 s, plus one write-back period,
  /// 5 s), so the kernel's flusher threads, not the service on the engine's
  /// core, have written the pages by then and the drop only frees clean
  /// pages (pages still dirty then have their write-back started). A writer
  /// that passes more ranges than the ring holds within the delay extends
  /// the newest one. With many journals, each filling its own segment
  /// slowly, finished segments are rare and without this the writers'
  /// mappings and the page cache grow with everything journaled (64 MiB
  /// segments x 2,000 journals); with it each writer maps about keep +
  /// chunk behind itself. A resend of older messages reads them from the
  /// page cache or the disk. False: the active segment stays mapped and
  /// cached whole.
  bool evict_written = false;
  /// Large page-cache folios for the segments (MADV_HUGEPAGE on the
  /// writable mapping, detail::advise_large_folios): a fault on a page not
  /// yet cached fills up to 2 MiB of it (at most the file) in one folio,
  /// where the writable mappings (MADV_RANDOM, no read-ahead) otherwise fill
  /// one 4 KiB page per fault, six to nine times the CPU per page on the lab
  /// host. A segment gets it when it is created, before its header is
  /// stored (advised after pages were cached, the kernel filled the rest of
  /// each 2 MiB range one page per folio: the load lane ran slower than
  /// without it); a recovered tail after its scan. The written part behind
  /// the writer (evict_written) then leaves in whole 2 MiB folios. Costs:
  /// memory comes in folios (a journal caches up to 2 MiB ahead of its
  /// writer; a segment smaller than that is cached whole once its first
  /// page is); write-back writes whole folios, so with kFsync every flush
  /// would write up to 2 MiB per journal; a fault that finds its page
  /// uncached on the writer fills its folio there (about 250 us for 2 MiB
  /// on the lab host). Engine: JournalLargeFolios, off by default (on the
  /// lab's VM, which takes back the memory a guest frees, the extra page
  /// cache halved the 1,000-session load rate).
  bool large_folios = false;
  std::size_t evict_written_keep = std::size_t{64} << 10;
  std::size_t evict_written_chunk = std::size_t{256} << 10;
  std::int64_t evict_written_delay_ns = 35'000'000'000;
  /// Write-behind buffers (detail::WriteBehind; docs/journal.md): the
  /// writer stores into a few buffers the journal maps once and reuses, and
  /// the service writes them to the segment files behind it with O_DIRECT,
  /// instead of the writer storing into the files' own mappings, which
  /// takes a new page-cache page (allocated, zeroed, mapped, written back
  /// and dropped) for every 4 KiB journaled. Crash safety is the same: the
  /// buffers are files in the journal's directory ("write-behind-<k>"),
  /// and open() writes back what a killed process left in them. Readers of
  /// the files (hft-journal on a running journal) see records once they are
  /// written out: at most write_behind_chunk bytes, or write_behind_delay_ns,
  /// behind the writer; replay reads the buffers. Durability none and os
  /// only. Costs the buffers' memory: up to six segments' worth, touched as
  /// written (the active segment, the spare, and finished segments being
  /// written out and zeroed).
  bool write_behind = false;
  std::size_t write_behind_chunk = std::size_t{4} << 20;
  std::int64_t write_behind_delay_ns = 100'000'000;
  /// session_identity() of the session writing this journal, recorded in
  /// every segment it creates. Non-zero: open() refuses a journal whose
  /// segments record another identity (a journal of another session). 0:
  /// nothing recorded or checked.
  std::uint64_t session_identity = 0;
  /// Payload bytes kept back at the end of every segment for claim_reserve():
  /// when no new segment can be had (a full disk), the owner can still record
  /// one last message of up to this size (the session's Logout). 0: none.
  std::size_t reserve_bytes = 0;
};

/// Records a write-behind buffer (JournalConfig::write_behind) left in a
/// journal directory holds beyond its segment file: a process stopped
/// before writing them out; the next Journal::open writes them back.
struct PendingWriteBehind {
  std::string buffer;            ///< the buffer file
  std::string segment;           ///< the segment file they belong to
  std::size_t from = 0, to = 0;  ///< byte range of the segment: records
  std::size_t slots_from = 0, slots_to = 0;  ///< ... and its index slots (a sealed segment's)
};
/// Read-only: the pending write-behind records of the journal in `dir`,
/// from buffers no running journal holds (a running one's are skipped: its
/// service writes them out). Errors name a file that cannot be read.
[[nodiscard]] Expected<std::vector<PendingWriteBehind>> pending_write_behind(const std::string& dir);

/// File in a journal directory where open() appends one line per repair
/// ("<UTC time> <what was repaired>"), so that a later audit sees what this
/// open changed (hft-journal audit fails on it unless --accept-repairs).
inline constexpr const char* kRepairLogName = "repairs.log";
/// Suffix a segment gets when open() finds it lost its records (truncated to
/// nothing, or headerless): it is moved aside as "<segment>.lost", never deleted.
inline constexpr const char* kLostSuffix = ".lost";

/// Appends "<UTC time> <line>\n" to <directory>/repairs.log and fsyncs it.
/// Errors name the file.
[[nodiscard]] Expected<void> append_repair_log(const std::string& directory, const std::string& line);

/// What open() found and repaired.
struct RecoveryReport {
  std::string tail_path;            ///< segment the writer continues in (or created)
  std::uint64_t epoch = 0;
  std::uint64_t last_seq = 0;               ///< last indexed seq of the epoch (0: none)
  std::uint64_t records = 0;                ///< valid data records in the tail segment
  std::size_t epoch_segments = 0;           ///< segments of the current epoch indexed for replay
  bool created = false;                     ///< no usable segment existed: a new one was created
  bool torn = false;                        ///< the tail was cut
  std::size_t cut_offset = 0;               ///< where (byte offset in tail_path)
  std::size_t cut_bytes = 0;                ///< non-zero bytes zeroed after the cut
  std::string saved_to;                     ///< file the cut bytes were saved to before zeroing
  bool extended = false;                    ///< the tail file was shorter than its header says
  std::size_t original_size = 0;            ///< ... it was this many bytes (when extended)
  std::vector<std::string> removed_spares;  ///< empty segments past the tail, removed
  /// Segments that had lost their records (a file truncated to nothing or
  /// below its header's size, in the middle of the journal or after a sealed
  /// tail), moved aside to these paths ("<segment>.lost").
  std::vector<std::string> lost_segments;
  /// Bytes of a claim that was never committed (a process stopped inside
  /// claim..commit), zeroed at open: not a repair (nothing committed is
  /// lost), but said in `notes`.
  std::size_t discarded_claim_bytes = 0;
  /// Bytes of records a killed process had stored in a write-behind buffer
  /// and not yet written out, written back into their segment files at
  /// open: not a repair (nothing committed was lost), but said in `notes`.
  std::size_t written_back_bytes = 0;
  std::vector<std::string> notes;
  /// One line per repair (tail cut and where it was saved, tail extended,
  /// segment lost), naming paths and counts; also appended to repairs.log.
  /// Empty: open() changed nothing that held data.
  std::vector<std::string> repairs;
};

class Journal {
 public:
  /// Opens (recovering) or creates the journal in config.directory. With a
  /// service, the journal registers with it; otherwise rotations create
  /// segments inline unless the owner calls maintain().
  ///
  /// Errors name the path: a missing directory (when create_directory is
  /// false), permission denied, no space, a segment with bad magic, a bad
  /// header CRC, or a newer format version (never overwritten), an invalid
  /// configuration, a full service.
  [[nodiscard]] static Expected<std::unique_ptr<Journal>> open(const JournalConfig& config,
                                                               JournalService* service = nullptr);

  /// Unregisters from the service, flushes per policy, unmaps, and removes
  /// the unused spare segment.
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  // ---- hot path ----------------------------------------------------------

  /// Writable room for one message of at most max_bytes, inside the mapped
  /// segment. Empty on failure; last_status() says why (kTooLarge, kNoSpare,
  /// kNoSpace, kIoError). A claim not followed by commit() is abandoned by
  /// the next claim().
  [[nodiscard]] std::span<char> claim(std::size_t max_bytes) noexcept;

  /// Whether records of `first` and then `second` payload bytes (0: none)
  /// could be stored now without waiting for the service: false only where
  /// claim() would return kNoSpare (no spare ready, or every pooled segment
  /// waiting for the service), a state the service ends by itself. Other
  /// failures (kTooLarge, kNoSpace, kIoError) answer true: claiming then
  /// fails and reports them. Claims nothing; the writer's thread.
  [[nodiscard]] bool ready_for(std::size_t first, std::size_t second) const noexcept;

  /// claim(), and when that fails because no new segment can be had, room of
  /// at most config().reserve_bytes from what every segment keeps back. Empty
  /// if that is used up too (last_status() says why the claim failed).
  [[nodiscard]] std::span<char> claim_reserve(std::size_t max_bytes) noexcept;

  /// Finalises the claimed record: the message is the `length` bytes at
  /// `offset` inside the claimed span (the encoder may right-align its
  /// prefix). Computes the CRC and publishes the record length last.
  /// `flags` is stored for the caller (replay hands it back).
  /// Returns kOk, kNoClaim, kInvalidArgument, or (kSync only) kIoError when
  /// msync failed: the record is then taken back (never replayed, not found
  /// by recovery, its seq not indexed) and stats().last_errno says why.
  [[nodiscard]] StoreStatus commit(std::uint64_t seq, std::int64_t timestamp_ns, std::size_t offset,
                                   std::size_t length, std::uint8_t flags = 0) noexcept;

  /// claim + copy + commit of an existing buffer (e.g. a received message).
  [[nodiscard]] StoreStatus append(std::uint64_t seq, std::int64_t timestamp_ns,
                                   std::span<const char> bytes, std::uint8_t flags = 0) noexcept;

  /// Why the last claim() failed (kOk after a successful one).
  [[nodiscard]] StoreStatus last_status() const noexcept { return last_status_; }
  /// The largest claim a segment of segment_size can hold (claim() of more
  /// is kTooLarge).
  [[nodiscard]] std::size_t max_claim() const noexcept { return max_payload_; }

  // ---- epochs --------------------------------------------------------------

  /// Starts epoch `new_epoch` (> epoch()) created at `created_ns`: rolls to a
  /// new segment whose start record marks the epoch; the replay index
  /// restarts empty. Same failure statuses as claim().
  [[nodiscard]] StoreStatus reset(std::uint64_t new_epoch, std::int64_t created_ns) noexcept;
  [[nodiscard]] std::uint64_t epoch() const noexcept { return epoch_; }
  [[nodiscard]] std::int64_t epoch_created_ns() const noexcept { return epoch_created_ns_; }
  /// Highest indexed (replayable) seq of the epoch, 0 if none.
  [[nodiscard]] std::uint64_t last_seq() const noexcept { return last_indexed_seq_; }

  // ---- replay ----------------------------------------------------------------

  /// Hands the stored messages with begin <= seq <= end of the current epoch
  /// to `visitor` in ascending order, at most max_messages per call; resume
  /// with begin = result.next_seq. Finding `begin` is O(log segments) +
  /// O(1) inside a segment (O(log n) if seqs have holes). Reads older
  /// segments through a read-only mapping made for the call (a warm path:
  /// mmap/munmap, no allocation); a segment being read is never removed by
  /// retention. Every record's CRC is checked; corrupt ones are skipped and
  /// counted.
  [[nodiscard]] ReplayResult replay(std::uint64_t begin, std::uint64_t end, std::size_t max_messages,
                                    ReplayVisitor& visitor) noexcept;

  template <typename F>
  [[nodiscard]] ReplayResult replay_each(std::uint64_t begin, std::uint64_t end, std::size_t max_messages,
                                         F&& f) noexcept {
    ReplayFunction<std::remove_reference_t<F>> visitor(f);
    return replay(begin, end, max_messages, visitor);
  }

  // ---- durability and service ------------------------------------------------

  /// msync(MS_SYNC) of everything written to the active segment (warm path:
  /// logout, shutdown). kIoError if msync failed.
  [[nodiscard]] StoreStatus flush() noexcept;

  /// One duty cycle of service work for this journal: retire finished
  /// segments, prepare/pre-fault the spare, periodic flush, re-warm,
  /// retention. Returns the amount of work done (0 = idle). Called by the
  /// JournalService thread; callable by the owner when there is no service.
  /// Concurrent calls are refused (return 0).
  int maintain(std::int64_t now_monotonic_ns) noexcept;
  /// Where the writer is (segment and offset); changes with every append.
  /// Any thread: the service reads it to tell a journal in use from an idle one.
  [[nodiscard]] std::uint64_t write_position() const noexcept {
    return published_.load(std::memory_order_relaxed);
  }

  /// Service: the shortest period of this journal's own timer (a quarter of
  /// the fsync interval under Durability::kFsync; INT64_MAX otherwise). A
  /// journal the service finds quiet is visited again within the smaller of
  /// this and JournalServiceConfig::quiet_revisit.
  [[nodiscard]] std::int64_t timer_period_ns() const noexcept;

  /// True when a pre-created spare segment is waiting for the next rotation.
  [[nodiscard]] bool spare_ready() const noexcept;
  /// stats().spare_errno alone (a timer asks it of every journal, often).
  [[nodiscard]] int spare_errno() const noexcept { return spare_errno_.load(std::memory_order_relaxed); }
  /// True when the spare is ready and all its pages are pre-faulted.
  [[nodiscard]] bool spare_prefaulted() const noexcept;

  /// Counters. Owner thread (the service-side counters are atomics, so a
  /// monitoring thread may read them, but epoch and last_seq are the
  /// owner's plain fields).
  [[nodiscard]] JournalStats stats() const noexcept;
  [[nodiscard]] const RecoveryReport& recovery() const noexcept { return recovery_; }
  [[nodiscard]] const JournalConfig& config() const noexcept { return config_; }
  /// Number of the segment the writer appends to.
  [[nodiscard]] std::uint64_t active_segment() const noexcept;
  /// Path of segment `number` in this journal (for tools and tests).
  [[nodiscard]] std::string segment_path(std::uint64_t number) const;

  /// A small mapping (e.g. the sequence-number file) the service msyncs with
  /// this journal under Durability::kFsync. Owner thread.
  void set_companion_mapping(void* address, std::size_t length) noexcept;

 private:
  // No member initialisers: the ring is allocated without being written.
  struct CatalogEntry {
    std::uint64_t number;
    std::uint64_t first_seq;   ///< seq of slot 0 (valid when count > 0)
    std::uint64_t last_seq;    ///< seq of the last slot, or the previous entry's last_seq
    std::uint32_t count;       ///< indexed records
  };
  struct Retained {
    std::uint64_t number = 0;
    std::int64_t finished_ns = 0;  ///< CLOCK_REALTIME
  };
  struct Counter {
    std::atomic<std::uint64_t> v{0};
    void add(std::uint64_t n = 1) noexcept { v.store(v.load(std::memory_order_relaxed) + n, std::memory_order_relaxed); }
    void sub(std::uint64_t n) noexcept { v.store(v.load(std::memory_order_relaxed) - n, std::memory_order_relaxed); }
    void max(std::uint64_t n) noexcept {
      if (n > v.load(std::memory_order_relaxed)) v.store(n, std::memory_order_relaxed);
    }
    [[nodiscard]] std::uint64_t get() const noexcept { return v.load(std::memory_order_relaxed); }
  };

  static constexpr std::size_t kPoolSize = 16;
  /// pool_used_ with every pooled segment taken.
  static constexpr std::uint32_t kPoolFull = kPoolSize == 32 ? ~0u : (1u << kPoolSize) - 1;
  static constexpr std::size_t kRetireCapacity = 8;
  /// Finished segments' files held open for their final eviction at most
  /// (each an open file: with thousands of journals they count against the
  /// process's limit); a journal rotating faster evicts the oldest early.
  static constexpr std::size_t kEvictCapacity = 4;
  struct Evicting {
    int fd = -1;
    std::int64_t due_ns = 0;
  };
  /// A written range of the active segment taken out of the writer's
  /// mapping, dropped from the page cache once due (evict_written).
  struct Trailing {
    std::uint64_t number = 0;  ///< its segment
    std::size_t from = 0, to = 0;
    std::int64_t due_ns = 0;
  };
  static constexpr std::size_t kTrailingCapacity = 16;
  static constexpr std::size_t kReaderPins = 2;
  static constexpr std::size_t kNoClaim = ~std::size_t{0};
  static constexpr std::size_t kNoFence = ~std::size_t{0};
  enum SpareState : std::uint32_t { kSpareEmpty = 0, kSpareCreating = 1, kSpareReady = 2 };

  explicit Journal(const JournalConfig& config);

  /// A segment file found empty at open: no header, or a header and nothing after it.
  struct Empty {
    std::uint64_t number = 0;
    std::size_t file_size = 0;
    bool header = false;     ///< a valid segment header
    bool truncated = false;  ///< ... but the file is shorter than it says
  };

  Expected<void> recover();
  /// Removes the unused spares among `empties`, moves aside (and reports)
  /// the ones that lost records.
  Expected<void> settle_empty(const std::vector<Empty>& empties, std::uint64_t tail_number, bool tail_sealed);
  Expected<void> write_repair_log();
  Expected<void> start_fresh(std::uint64_t number, std::uint64_t epoch, std::int64_t epoch_created_ns,
                             bool epoch_start);
  Expected<void> add_epoch_history(const std::vector<std::uint64_t>& numbers, std::size_t tail_index);

  // writer internals
  /// Seals the active segment and continues in the next one (the spare,
  /// or one created inline) that holds a claim of `need` bytes.
  bool rotate(bool epoch_start, std::size_t need = 0) noexcept;
  /// Makes `segment` the one written, its fence (if it has one) past a
  /// claim of `need` bytes, then publishes it.
  void activate(detail::Segment* segment, bool epoch_start, std::size_t need = 0) noexcept;
  void write_control(std::uint16_t flags, const void* payload, std::size_t length) noexcept;
  void hand_over(detail::Segment* segment) noexcept;
  void compute_max_payload() noexcept;
  detail::Segment* acquire_pool() noexcept;
  void release_pool(detail::Segment* segment) noexcept;
  int create_segment(detail::Segment* segment, std::uint64_t number, std::size_t size) noexcept;
  /// Size of a segment that holds a claim of `need` bytes (record header
  /// included, aligned): at least `size`, doubled while it cannot, at most
  /// config_.segment_size.
  [[nodiscard]] std::size_t size_to_hold(std::size_t size, std::size_t need) const noexcept;
  /// Bytes a record of `payload` bytes takes: header, payload, alignment.
  [[nodiscard]] std::size_t record_size(std::size_t payload) const noexcept {
    return (kRecordHeaderSize + payload + align_mask_) & ~align_mask_;
  }
  /// Whether the rotation may take spare `s` for a record that takes `need`
  /// bytes: it follows the active segment and is large enough.
  [[nodiscard]] bool spare_fits(const detail::Segment* s, std::size_t need) const noexcept;
  /// Bytes of a fresh segment no claim can have (header, start, seal, reserve).
  [[nodiscard]] std::size_t segment_overhead() const noexcept;
  /// initial_segment_size, or segment_size when it is 0.
  [[nodiscard]] std::size_t first_segment_size() const noexcept;
  /// The first segment of a journal opened with none (defer_first_segment).
  bool create_first(std::size_t need) noexcept;
  /// Creates the next-numbered segment of `size` into the pooled `segment`
  /// on the writer; on failure gives both back and records the status.
  bool create_on_writer(detail::Segment* segment, std::size_t size) noexcept;
  void publish() noexcept;
  void push_catalog(std::uint64_t number) noexcept;
  CatalogEntry& catalog_at(std::size_t i) noexcept;
  void fail(StoreStatus status, int err) noexcept;
  /// Gives back a segment number whose file could not be created.
  void return_number(std::uint64_t number) noexcept;
  /// Undoes the commit of the record at rec_off (kSync msync failure).
  void take_back(std::size_t rec_off, bool indexed, std::uint64_t prev_last, std::uint64_t prev_first,
                 std::size_t length) noexcept;
  /// Sets seal_reserve_ and reserve_room_ for records aligned to `align`.
  void set_end_reserve(std::size_t align) noexcept;
  bool pin(std::uint64_t number) noexcept;
  void unpin() noexcept;

  // service internals
  int service_retire(std::int64_t now) noexcept;
  /// Takes s's file for the final eviction evict_delay_ns after now.
  void hold_for_eviction(detail::Segment* s, std::int64_t now) noexcept;
  /// Drops the oldest held file's pages from the page cache and closes it.
  void evict_oldest() noexcept;
  /// POSIX_FADV_DONTNEED on [offset, offset + length) of fd (length 0: to
  /// the end), timed into max_evict_ns_.
  void drop_cached(int fd, std::size_t offset, std::size_t length) noexcept;
  int service_evict(std::int64_t now) noexcept;
  /// evict_written: takes the written range behind the writer out of its
  /// mapping (each re-warm interval), drops ranges that are due.
  int service_evict_written(std::int64_t now) noexcept;
  /// Takes the oldest trailing range off the ring, dropping its pages if
  /// its segment is `active`, the one being written.
  void drop_oldest_trailing(const detail::Segment& active) noexcept;
  int service_spare(std::int64_t now) noexcept;
  int service_prefault() noexcept;
  /// prepare_ahead: zero-fills (pwrite) and maps the active segment ahead of
  /// the writer, past its fence (detail::Segment::fill_end).
  int service_fill_ahead() noexcept;
  /// Zeros in [from, to) of a segment no writer stores to there, then maps
  /// them. errno on failure, 0 on success.
  int fill_zeros(detail::Segment* segment, std::size_t from, std::size_t to) noexcept;
  /// Bytes of [from, to) fill_zeros() writes zeros to (a buffer's bytes are
  /// only mapped: they are zero already).
  [[nodiscard]] static std::size_t zero_filled(const detail::Segment* segment, std::size_t from,
                                               std::size_t to) noexcept;
  int service_flush(std::int64_t now) noexcept;
  int service_rewarm(std::int64_t now) noexcept;
  int service_fill(std::int64_t now) noexcept;
  int service_retention(std::int64_t now) noexcept;
  /// flush_finished + unmap + close + back to the pool, in one go.
  void finish_segment(detail::Segment* segment) noexcept;
  /// The durability policy's flush of a finished segment (service side).
  void flush_finished(detail::Segment* segment) noexcept;
  /// munmap (what is still mapped) + close + counted as retired + back to the pool.
  void close_retired(detail::Segment* segment) noexcept;
  /// A spare never handed over: unlink its file, unmap, close, back to the pool.
  void discard_spare(detail::Segment* segment) noexcept;
  /// A ready spare the writer passed over (it created one inline) gets the
  /// next number instead of being removed. False: it could not be renamed.
  bool renumber_spare(detail::Segment* segment) noexcept;
  /// Makes a prepared spare the one the writer takes at its next rotation.
  void hand_over_spare(detail::Segment* segment) noexcept;
  /// Zero-fills and maps the first `ahead` bytes of a segment no writer has
  /// yet (its fence at their end: the rest is filled as the writer comes,
  /// fill_end, kFillIdle) and pre-faults its last slot pages.
  void prefault_ends(detail::Segment* segment, std::size_t ahead) noexcept;
  /// The writer reached its fence: moves it to where the service has filled
  /// to, or takes the next piece past it itself (under kFillWriter). False:
  /// the service is filling there right now, or the segment is full: rotate.
  bool extend_fence(std::size_t need) noexcept;
  /// Moves the fence of the active segment past a claim of `need` bytes and
  /// a piece more, and zero-fills the piece after pos_. Only while the
  /// service cannot be filling there: under kFillWriter, or before the
  /// segment is published.
  void take_piece(std::size_t need, std::size_t physical) noexcept;
  /// Where records of the active segment must end: below its lowest slot,
  /// the next slot and the seal's (and reserve's) room.
  [[nodiscard]] std::size_t physical_limit() const noexcept { return slot_low_ - kSlotSize - seal_reserve_; }
  /// The writer's limit below a fill ending at `fill_end`: the seal's room kept.
  [[nodiscard]] std::size_t fence_at(std::size_t fill_end) const noexcept {
    return fill_end > seal_reserve_ ? fill_end - seal_reserve_ : 0;
  }
  void service_error(int err) noexcept;
  /// A spare could not be prepared: counted, retried after kSpareRetryNs.
  void spare_failed(int err, std::int64_t now) noexcept;

  // ---- writer state (owner thread), hot fields first ----
  char* base_ = nullptr;           ///< active segment mapping
  std::size_t pos_ = 0;            ///< offset of the next record
  std::size_t limit_ = 0;          ///< records must end at or before this
  std::size_t fence_ = kNoFence;   ///< the service's fill: fill_end less the seal reserve
  std::size_t writer_filled_ = 0;  ///< zero-filled below here (fill_end may be further: owned, not filled)
  std::size_t slot_low_ = 0;       ///< lowest slot offset in use
  std::size_t claimed_ = kNoClaim; ///< payload bytes of the open claim
  std::size_t align_mask_ = 7;
  std::size_t seal_reserve_ = 0;   ///< seal record + reserve room (limit_ keeps both free)
  std::size_t reserve_room_ = 0;   ///< the part of seal_reserve_ only claim_reserve() uses
  std::size_t max_payload_ = 0;    ///< largest claim an empty segment can hold
  std::uint64_t last_indexed_seq_ = 0;
  std::uint32_t slot_count_ = 0;
  std::uint32_t active_index_ = 0; ///< pool index of the active segment
  CatalogEntry* cat_active_ = nullptr;
  detail::Segment* active_ = nullptr;
  StoreStatus last_status_ = StoreStatus::kOk;
  Durability durability_ = Durability::kOs;
  std::int64_t last_ts_ = 0;
  /// Finished segments the retire ring had no room for (bounded by the pool).
  std::array<detail::Segment*, kPoolSize> retire_pending_{};
  std::size_t retire_pending_count_ = 0;
  std::uint64_t epoch_ = 0;
  std::int64_t epoch_created_ns_ = 0;
  std::uint32_t active_alignment_ = 8;

  Counter appends_, bytes_, unindexed_, failed_claims_, rotations_, spare_misses_, inline_creations_,
      unfaulted_rotations_, retire_overflows_, sync_flushes_, fill_takeovers_, fence_rotations_,
      writer_filled_bytes_;

  /// Ring of capacity max_epoch_segments, allocated without being written
  /// (entries are written when pushed), so a journal that stays in one
  /// segment keeps one page of it resident, not all of it.
  std::unique_ptr<CatalogEntry[]> catalog_;
  std::size_t catalog_size_ = 0;
  std::size_t cat_head_ = 0;           ///< ring index of the oldest entry
  std::size_t cat_count_ = 0;

  JournalConfig config_;
  RecoveryReport recovery_;
  JournalService* service_ = nullptr;

  // ---- shared between writer and service ----
  std::unique_ptr<detail::Segment[]> pool_;
  alignas(64) std::atomic<std::uint32_t> pool_used_{0};       ///< bitmap
  std::atomic<std::uint64_t> next_number_{1};                 ///< next segment file number
  std::atomic<std::uint32_t> spare_state_{kSpareEmpty};
  std::atomic<detail::Segment*> spare_{nullptr};
  alignas(64) std::atomic<std::uint64_t> published_{0};       ///< pool index << 32 | data end
  std::atomic<std::uint64_t> published_slot_low_{0};
  /// prepare_ahead: bytes past its data end the writer keeps filled (its
  /// last claim taken at the fence, record header and seal room included);
  /// set by the writer when it takes a piece, read by service_fill_ahead.
  std::atomic<std::size_t> writer_lead_{0};
  std::atomic<std::uint64_t> active_number_{0};  ///< 0: no segment yet (defer_first_segment)
  /// Size of the segment the next rotation goes to (the spare's size):
  /// twice the active one's, at most segment_size. Set by the writer.
  std::atomic<std::size_t> next_size_{0};
  /// The writer has rotated since open: spares are prepared at once.
  std::atomic<bool> rotated_{false};
  /// First segment deferred: its epoch starts with it (an epoch-start record).
  bool pending_epoch_start_ = false;
  alignas(64) std::atomic<int> last_errno_{0};
  std::atomic<int> spare_errno_{0};  ///< errno of the failing spare preparation, 0 once one succeeds
  core::SpscRing<detail::Segment*> retired_{kRetireCapacity};
  alignas(64) std::array<std::atomic<std::uint64_t>, kReaderPins> pins_{};
  std::atomic<std::uint64_t> removing_below_{0};              ///< segments below are (being) removed
  std::atomic<bool> maintaining_{false};
  std::atomic<void*> companion_{nullptr};
  std::atomic<std::size_t> companion_length_{0};

  // ---- service state (service thread) ----
  alignas(64) detail::Segment* prefault_target_ = nullptr;
  std::size_t prefault_next_ = 0;
  detail::Segment* prefault_active_ = nullptr;  ///< writer's segment, not fully pre-faulted
  std::size_t prefault_active_next_ = 0;
  detail::Segment* flush_segment_ = nullptr;
  std::size_t synced_end_ = 0;
  std::size_t pending_end_ = 0;   ///< data end at the previous flush tick
  std::size_t pending_end2_ = 0;  ///< ... and at the one before
  std::int64_t next_flush_ns_ = 0;
  std::int64_t next_rewarm_ns_ = 0;
  detail::Segment* rewarm_segment_ = nullptr;
  std::size_t rewarm_last_end_ = 0;
  std::size_t rewarm_next_ = 0;  ///< this round's range, done piece by piece
  std::size_t rewarm_to_ = 0;
  unsigned quiet_rewarm_rounds_ = 0;  ///< rounds skipped since the last re-touch of a quiet journal
  detail::Segment* filling_ = nullptr;  ///< the next spare, being zero-filled (not handed over)
  std::size_t fill_next_ = 0;
  detail::Segment* unmapping_ = nullptr;  ///< retired, being unmapped chunk by chunk
  std::size_t unmapped_ = 0;
  std::array<Evicting, kEvictCapacity> evicting_{};  ///< ring, oldest first
  std::size_t ev_head_ = 0;
  std::size_t ev_count_ = 0;
  std::uint64_t trail_number_ = 0;  ///< active segment the trailing eviction is in
  std::size_t trail_to_ = 0;        ///< its bytes below this are out of the writer's mapping
  std::int64_t next_trail_ns_ = 0;
  std::array<Trailing, kTrailingCapacity> trailing_{};  ///< ring, oldest first
  std::size_t tr_head_ = 0;
  std::size_t tr_count_ = 0;
  std::int64_t next_retention_ns_ = 0;
  std::int64_t spare_retry_ns_ = 0;
  std::vector<Retained> retained_;     ///< ring of finished segments, oldest first
  std::size_t ret_head_ = 0;
  std::size_t ret_count_ = 0;

  Counter segments_created_, segments_retired_, segments_removed_, flushes_, flush_errors_, max_flush_ns_,
      max_prepare_ns_, service_errors_, spares_renumbered_, segments_evicted_, max_evict_ns_,
      written_evicted_bytes_, filled_bytes_;
  std::size_t fill_window_ = 0;  ///< service: how far ahead of the writer it fills (grows with its pace)

  // ---- write-behind (JournalConfig::write_behind) ----
  std::unique_ptr<detail::WriteBehind> write_behind_;
  /// Gives a new segment a buffer (either thread): the segment is then the
  /// buffer's first `size` bytes. False: none free, or no disk blocks for
  /// it (the segment stays its file's mapping).
  bool attach_buffer(detail::Segment* segment, const char* path) noexcept;
  /// Service: writes [from, to) of a buffered segment to its file. False
  /// (counted, errno kept) if it could not.
  bool write_out(detail::Segment* segment, std::size_t from, std::size_t to) noexcept;
  /// Service: the active segment's records up to the published end, in
  /// pieces (write_behind_chunk, or whatever is there once write_behind_delay_ns passed).
  int service_write_behind(std::int64_t now) noexcept;
  /// Writes out the rest of a finished buffered segment, puts its file's
  /// own mapping back over the buffer's slot range and releases the buffer
  /// (later, if a reader has the segment pinned). Service, or the closing writer.
  void finish_buffered(detail::Segment* segment) noexcept;
  /// A finished segment's buffer, written out, to be released.
  struct Held {
    int buffer = -1;
    std::size_t size = 0;   ///< its segment's
    std::size_t dirty = 0;  ///< bytes from its start the writer may have stored to
    std::size_t slots = 0;  ///< ... and from here to `size` (its index slots)
  };
  /// Releases h's buffer (puts the buffer's own mapping back over the
  /// segment's slot range, starts zeroing it), unless a reader has its
  /// segment pinned: false.
  bool release_buffer(const Held& h) noexcept;
  /// Releases buffers whose release a reader's pin held back.
  int service_held_buffers() noexcept;
  std::array<Held, 8> held_{};
  std::size_t held_count_ = 0;
  std::int64_t next_write_out_ns_ = 0;
  char* scratch_page_ = nullptr;  ///< write_behind: one page, aligned for O_DIRECT (the writer's last page)
  bool closing_ = false;          ///< the destructor runs: finish_buffered also syncs (kOs)
  Counter write_behind_bytes_, write_behind_segments_, write_behind_misses_;

  friend class JournalService;
};

}  // namespace hft::store
