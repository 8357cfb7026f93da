// One journal shared by many sessions (docs/shared_journal.md).
//
// With hundreds of sessions, a journal per session and direction makes the
// journal service's work, the files and the page cache grow with the
// session count. A SharedJournal is one Journal written by every session of
// an engine thread (they run on that thread, so it has one writer and needs
// no lock); each session sees it through a SharedStore, a MessageStore like
// JournalStore.
//
//   <directory>/                 the shared Journal's segments, repairs.log
//   <session dir>/seqnums.dat    per session, as with JournalStore
//
// Every record's payload starts with a 16-byte stream header, then the
// message (docs/shared_journal.md, "Records"):
//
//   u32 stream   the session's number in this journal (1, 2, ...)
//   u8  kind     kOutbound, kInbound, kStreamName, kEpochStart
//   u8  version  1
//   u16 0
//   u64 value    MsgSeqNum (messages), session identity (kStreamName),
//                epoch (kEpochStart)
//
// The Journal's own seq is a record number, one per record over the whole
// journal. A kStreamName record (its body the session's directory name)
// names a stream when a session first opens; a kEpochStart record (its body
// the epoch's creation time, i64 ns) starts a session's new epoch (reset).
//
// Open scans the whole journal once and rebuilds, per stream, its epoch and
// the last outbound and inbound seqs of that epoch; each SharedStore then
// reconciles its seqnums.dat with them exactly as JournalStore does with its
// own journals (the journal is the truth, the file a cache of it). Replay of
// a session's messages reads the shared journal from a known record number:
// the last kRecent outbound messages of each stream are indexed exactly,
// older ones every kSparseEvery-th message (kSparse of them), older still
// from the epoch's start; other sessions' records in between are skipped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hft/core/expected.hpp"
#include "hft/store/journal.hpp"
#include "hft/store/message_store.hpp"
#include "hft/store/types.hpp"

namespace hft::store {

class JournalService;
class SeqNumStore;
class SharedStore;

/// The stream header that starts every payload of a shared journal.
struct StreamHeader {
  static constexpr std::size_t kSize = 16;
  static constexpr std::uint8_t kVersion = 1;
  enum Kind : std::uint8_t {
    kOutbound = 1,    ///< a message the session sent; value: MsgSeqNum
    kInbound = 2,     ///< a message the session received; value: MsgSeqNum
    kStreamName = 3,  ///< value: session identity; body: the session's directory name
    kEpochStart = 4,  ///< value: epoch; body: creation time (i64 ns, CLOCK_REALTIME)
  };
  std::uint32_t stream = 0;
  std::uint8_t kind = 0;
  std::uint64_t value = 0;

  /// Reads the header at the start of `payload`. False: shorter than kSize,
  /// unknown kind or version, or stream 0.
  [[nodiscard]] static bool read(std::span<const char> payload, StreamHeader& out) noexcept;
  void write(char* at) const noexcept;
};

struct SharedJournalConfig {
  /// Settings of the shared journal (its directory included).
  JournalConfig journal;
};

/// What a SharedStore's open found: as StoreRecovery, per session.
struct SharedStoreRecovery {
  bool stream_created = false;  ///< the session had no stream in the journal
  bool seqnums_created = false;
  bool seqnums_recovered = false;
  std::uint64_t next_sender = 0, next_target = 0;
  std::vector<std::string> warnings;
};

class SharedJournal {
 public:
  /// Opens or creates the journal in config.journal.directory and scans it.
  /// Errors name the path (as Journal::open); retention is refused (the
  /// records naming the streams and their epochs would go with the oldest
  /// segments). Records the scan cannot place (no stream header: a
  /// journal of a single session; a stream whose name record is damaged)
  /// are skipped and said in warnings().
  [[nodiscard]] static Expected<std::unique_ptr<SharedJournal>> open(const SharedJournalConfig& config,
                                                                     JournalService* service = nullptr);
  ~SharedJournal();
  SharedJournal(const SharedJournal&) = delete;
  SharedJournal& operator=(const SharedJournal&) = delete;

  /// Identity of one session's store in this journal.
  struct StoreConfig {
    /// Session directory: holds seqnums.dat (created with parents).
    std::string directory;
    /// Name recorded for the stream (the session directory's name); with
    /// the identity it is how a reopened journal finds the session's stream.
    std::string name;
    std::uint64_t session_identity = 0;
    bool journal_inbound = true;
    bool sync_new_files = true;
  };
  /// The store of one session: its stream (a new one, recorded in the
  /// journal, if the session has none), its seqnums.dat, reconciled with
  /// what the scan found. One store per session at a time; the store must
  /// be destroyed before the journal. Errors name the file.
  [[nodiscard]] Expected<std::unique_ptr<SharedStore>> open_store(const StoreConfig& config,
                                                                  std::int64_t now_ns = 0);

  [[nodiscard]] Journal& journal() noexcept { return *journal_; }
  [[nodiscard]] const RecoveryReport& recovery() const noexcept { return journal_->recovery(); }
  /// Streams the journal names (sessions that ever wrote to it).
  [[nodiscard]] std::size_t streams() const noexcept { return streams_.size(); }
  /// Records the open's scan read, and those it could not read as a shared
  /// journal's record (skipped; counted, and said in the scan's warnings).
  [[nodiscard]] std::uint64_t scanned() const noexcept { return scanned_; }
  [[nodiscard]] const std::vector<std::string>& warnings() const noexcept { return warnings_; }

 private:
  friend class SharedStore;
  static constexpr std::size_t kRecent = 256;        ///< last outbound messages indexed exactly
  static constexpr std::size_t kSparse = 512;        ///< sparse index entries
  static constexpr std::uint64_t kSparseEvery = 64;  ///< one sparse entry per this many seqs
  static constexpr std::size_t kMaxStreamGap = 1024;  ///< stream numbers a scan accepts past the last known

  struct Mark {
    std::uint64_t seq = 0;
    std::uint64_t record = 0;
  };
  struct Stream {
    std::uint32_t id = 0;
    std::uint64_t identity = 0;
    std::string name;
    std::uint64_t epoch = 1;
    std::int64_t epoch_created_ns = 0;
    std::uint64_t epoch_record = 0;  ///< record number of its epoch's start (0: the journal's start)
    std::uint64_t last_out = 0;      ///< of the epoch
    std::uint64_t last_in = 0;
    bool used = false;             ///< any message in any epoch
    std::vector<Mark> recent;      ///< ring, kRecent
    std::size_t recent_count = 0;  ///< total pushed this epoch
    std::vector<Mark> sparse;      ///< ring, kSparse
    std::size_t sparse_count = 0;
    SharedStore* store = nullptr;          ///< the open store, if any
    std::uint64_t appends = 0, bytes = 0;  ///< this open's commits (both directions)

    void index(std::uint64_t seq, std::uint64_t record) noexcept;
    /// Record number to scan from to find seq `begin` (0: the epoch's start).
    [[nodiscard]] std::uint64_t start_for(std::uint64_t begin) const noexcept;
    void new_epoch(std::uint64_t epoch, std::int64_t created_ns, std::uint64_t record) noexcept;
  };

  explicit SharedJournal(std::unique_ptr<Journal> journal) : journal_(std::move(journal)) {}
  Expected<void> scan();
  /// The stream of `id`, adding unnamed ones up to it (a damaged name record).
  Stream& ensure(std::uint32_t id);
  /// Claim + header + body + commit of one record (warm path or recovery).
  StoreStatus append(const StreamHeader& h, std::int64_t timestamp_ns, std::span<const char> body) noexcept;

  std::unique_ptr<Journal> journal_;
  /// The store whose claim is open: another store's commit finds kNoClaim
  /// (a claim is abandoned by the next claim of any session).
  const SharedStore* claimer_ = nullptr;
  std::vector<std::unique_ptr<Stream>> streams_;  ///< index: stream id - 1
  std::uint64_t last_record_ = 0;
  std::uint64_t scanned_ = 0;
  std::vector<std::string> warnings_;
};

/// One session's view of a SharedJournal (see SharedJournal::open_store).
/// Hot operations as JournalStore's: claim/commit/store_inbound write one
/// record into the shared journal and update the session's seqnums.dat.
class SharedStore final : public MessageStore {
 public:
  ~SharedStore() override;

  [[nodiscard]] std::span<char> claim(std::size_t max_bytes) noexcept override;
  [[nodiscard]] std::size_t max_claim() const noexcept override;
  using MessageStore::commit;
  [[nodiscard]] StoreStatus commit(std::uint64_t seq, std::int64_t timestamp_ns, std::size_t offset,
                                   std::size_t length, std::uint8_t flags) noexcept override;
  [[nodiscard]] StoreStatus last_status() const noexcept override;
  [[nodiscard]] std::span<char> claim_reserve(std::size_t max_bytes) noexcept override;
  [[nodiscard]] StoreStatus check_room(std::size_t max_bytes) noexcept override;
  [[nodiscard]] bool ready_for(std::size_t inbound_bytes, std::size_t answer_bytes) noexcept override;
  std::size_t describe_failure(std::span<char> out) const noexcept override;
  [[nodiscard]] StoreStatus store_inbound(std::uint64_t seq, std::int64_t timestamp_ns,
                                          std::span<const char> bytes) noexcept override;
  [[nodiscard]] std::uint64_t next_sender_seq() const noexcept override;
  [[nodiscard]] std::uint64_t next_target_seq() const noexcept override;
  void set_next_sender_seq(std::uint64_t seq) noexcept override;
  void set_next_target_seq(std::uint64_t seq) noexcept override;
  [[nodiscard]] StoreStatus reset(std::int64_t now_ns) noexcept override;
  [[nodiscard]] std::uint64_t epoch() const noexcept override;
  [[nodiscard]] std::int64_t creation_time() const noexcept override;
  using MessageStore::replay;
  /// Reads the shared journal from the nearest indexed record before
  /// `begin` (a warm path: maps finished segments, skips other sessions'
  /// records, never allocates).
  [[nodiscard]] ReplayResult replay(std::uint64_t begin, std::uint64_t end, std::size_t max_messages,
                                    ReplayVisitor& visitor) noexcept override;
  /// The shared journal's msync and this session's seqnums.dat.
  [[nodiscard]] StoreStatus flush() noexcept override;
  /// This session's records and bytes (appends, bytes, last_seq, epoch);
  /// the segment and service counters are the shared journal's
  /// (SharedJournal::journal().stats()), counted once for all its sessions.
  [[nodiscard]] StoreStats stats() const noexcept override;

  [[nodiscard]] std::uint32_t stream() const noexcept { return stream_->id; }
  [[nodiscard]] const SharedStoreRecovery& recovery() const noexcept { return recovery_; }
  [[nodiscard]] SharedJournal& shared() noexcept { return owner_; }

 private:
  friend class SharedJournal;
  SharedStore(SharedJournal& owner, SharedJournal::Stream& stream);
  /// A claim of the shared journal made this store's (its header's room
  /// kept before what the session gets), or the empty span of a failure.
  std::span<char> take(std::span<char> room) noexcept;

  SharedJournal& owner_;
  SharedJournal::Stream* stream_;
  std::unique_ptr<SeqNumStore> seqnums_;
  bool journal_inbound_ = true;
  char* room_ = nullptr;       ///< the open claim, in the shared journal's terms
  std::size_t room_size_ = 0;  ///< what the session was given of it (after the header)
  SharedStoreRecovery recovery_;
};

}  // namespace hft::store
