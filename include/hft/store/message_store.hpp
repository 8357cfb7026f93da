// The store seam of a FIX session: where outgoing messages are encoded in
// place and kept for resend, and where sequence numbers live.
//
//   MessageStore   the interface the session uses (one indirect call per op)
//   JournalStore   persistent: outbound journal (+ optional inbound journal)
//                  and a sequence-number file, in one session directory
//   MemoryStore    preallocated ring of messages, for tests and for sessions
//                  configured without persistence
//
// Sending a message:
//
//   std::span<char> room = store.claim(max_bytes);     // empty: store.last_status()
//   MessageWriter w(room); ... auto r = w.finish();
//   store.commit(seq, now_ns, r.message.data() - room.data(), r.message.size());
//   send(r.message);                                    // still valid after commit
//
// commit() also advances next_sender_seq() to seq + 1 (it never lowers it),
// so a session may or may not call set_next_sender_seq() afterwards.
//
// Every hot operation is noexcept and allocation-free after open. All calls
// belong to the session's thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "hft/core/expected.hpp"
#include "hft/store/journal.hpp"
#include "hft/store/types.hpp"

namespace hft::store {

class JournalService;
class SeqNumStore;

/// The largest message claim_reserve() promises room for: a Logout with a
/// Text, whatever the CompIDs.
inline constexpr std::size_t kReserveMessageSize = 1024;

/// Counters of a store (both directions).
struct StoreStats {
  JournalStats outbound;
  JournalStats inbound;  ///< zero when inbound messages are not journaled
};

class MessageStore {
 public:
  virtual ~MessageStore() = default;

  // ---- outbound ----------------------------------------------------------

  /// Room for one outgoing message of at most max_bytes. Empty on failure
  /// (last_status(): kTooLarge, kNoSpare, kNoSpace, kIoError). A claim not
  /// committed is abandoned by the next claim().
  [[nodiscard]] virtual std::span<char> claim(std::size_t max_bytes) noexcept = 0;

  /// Stores the `length` bytes at `offset` inside the claimed span as message
  /// `seq` (replayable if seq is greater than every seq committed before in
  /// this epoch) and advances next_sender_seq to at least seq + 1. `flags` is
  /// handed back by replay (e.g. "administrative message").
  /// Returns kOk, kNoClaim, kInvalidArgument, or kIoError (see Journal::commit).
  [[nodiscard]] virtual StoreStatus commit(std::uint64_t seq, std::int64_t timestamp_ns, std::size_t offset,
                                           std::size_t length, std::uint8_t flags) noexcept = 0;
  [[nodiscard]] StoreStatus commit(std::uint64_t seq, std::int64_t timestamp_ns, std::size_t offset,
                                   std::size_t length) noexcept {
    return commit(seq, timestamp_ns, offset, length, 0);
  }

  /// Why the last claim() failed (kOk after a successful one).
  [[nodiscard]] virtual StoreStatus last_status() const noexcept = 0;

  /// claim() for the one message that must still be recorded when nothing
  /// else can (the session's Logout after a store failure): when claim()
  /// fails, room of at most kReserveMessageSize from space the store keeps
  /// back for it. Empty when that is used up too; last_status() then says
  /// why. Default: claim().
  [[nodiscard]] virtual std::span<char> claim_reserve(std::size_t max_bytes) noexcept {
    return claim(max_bytes);
  }

  /// Whether a message of max_bytes could be stored now in each direction
  /// (checked before a logon): kOk, or the status storing would fail with.
  /// Claims room and abandons it, moving to a new segment if one is needed.
  /// Default: an outbound claim().
  [[nodiscard]] virtual StoreStatus check_room(std::size_t max_bytes) noexcept;

  /// Whether a received message of `inbound_bytes` and an answer claimed
  /// at `answer_bytes` could both be stored now without waiting for the
  /// journal service: false while it is behind (storing would fail with
  /// kNoSpare, a state the service ends by itself), so that the session
  /// leaves the message unread until the service catches up instead of
  /// failing it. Failures the service cannot end (no space, I/O) answer
  /// true: storing then fails and reports them. Claims nothing. Default:
  /// true.
  [[nodiscard]] virtual bool ready_for(std::size_t inbound_bytes, std::size_t answer_bytes) noexcept {
    (void)inbound_bytes;
    (void)answer_bytes;
    return true;
  }

  /// The largest claim this store can ever give (its configuration's
  /// limit), without claiming anything: a session checks MaxMessageSize
  /// against it when it is created. Default: no limit of its own.
  [[nodiscard]] virtual std::size_t max_claim() const noexcept { return ~std::size_t{0}; }

  /// The most recent failure in words, for the one log line that reports it
  /// ("journal DIR: no space on the file system (No space left on device)"):
  /// written into `out` (cut to fit), returns the length. Not for the hot path.
  virtual std::size_t describe_failure(std::span<char> out) const noexcept;

  // ---- inbound -----------------------------------------------------------

  /// Keeps a copy of a received message (audit trail) if the store journals
  /// inbound messages; otherwise does nothing and returns kOk. Does not touch
  /// next_target_seq: accepting a message is the session's decision.
  [[nodiscard]] virtual StoreStatus store_inbound(std::uint64_t seq, std::int64_t timestamp_ns,
                                                  std::span<const char> bytes) noexcept = 0;

  // ---- sequence numbers --------------------------------------------------

  [[nodiscard]] virtual std::uint64_t next_sender_seq() const noexcept = 0;
  [[nodiscard]] virtual std::uint64_t next_target_seq() const noexcept = 0;
  virtual void set_next_sender_seq(std::uint64_t seq) noexcept = 0;
  virtual void set_next_target_seq(std::uint64_t seq) noexcept = 0;

  /// Session reset (ResetSeqNumFlag, new day): starts a new epoch created at
  /// now_ns, both next seqs back to 1, stored messages of the old epoch no
  /// longer replayable. Fails like claim() if no new segment can be had.
  [[nodiscard]] virtual StoreStatus reset(std::int64_t now_ns) noexcept = 0;
  /// Epoch number (1 for a new store, +1 per reset).
  [[nodiscard]] virtual std::uint64_t epoch() const noexcept = 0;
  /// When the current epoch began (CLOCK_REALTIME ns): the session's creation time.
  [[nodiscard]] virtual std::int64_t creation_time() const noexcept = 0;

  // ---- replay ------------------------------------------------------------

  /// Hands stored outgoing messages with begin <= seq <= end to `visitor`, in
  /// ascending seq, at most max_messages per call (resume at
  /// result.next_seq). Seqs not delivered are not stored: gap-fill them.
  /// Warm path: may map files; never allocates.
  [[nodiscard]] virtual ReplayResult replay(std::uint64_t begin, std::uint64_t end, std::size_t max_messages,
                                            ReplayVisitor& visitor) noexcept = 0;

  /// replay() with a callable `bool(const StoredMessage&)`.
  template <typename F>
    requires(!std::is_base_of_v<ReplayVisitor, std::remove_cvref_t<F>>)
  [[nodiscard]] ReplayResult replay(std::uint64_t begin, std::uint64_t end, std::size_t max_messages,
                                    F&& f) noexcept {
    ReplayFunction<std::remove_reference_t<F>> visitor(f);
    return replay(begin, end, max_messages, static_cast<ReplayVisitor&>(visitor));
  }

  // ---- durability and statistics ------------------------------------------

  /// Makes everything stored so far durable (msync), whatever the policy.
  /// Warm path (logout, shutdown). kIoError on failure.
  [[nodiscard]] virtual StoreStatus flush() noexcept = 0;
  [[nodiscard]] virtual StoreStats stats() const noexcept = 0;
};

// ---------------------------------------------------------------------------

struct MemoryStoreConfig {
  std::size_t capacity = 4096;           ///< messages kept for replay (oldest dropped)
  std::size_t max_message_size = 4096;   ///< largest claim
  /// Bytes of messages kept, packed one after the other in a ring; the
  /// oldest are dropped when a claim needs their room. 0: room for
  /// `capacity` messages of max_message_size, so the last `capacity`
  /// messages are always kept.
  std::size_t bytes = 0;
};

/// Everything preallocated at construction: an index of `capacity`
/// messages and a ring of `bytes` (+ one claim), written only as messages
/// come, so its memory follows what was sent, not the largest message
/// times the capacity. Replay sees the newest in-order messages of the
/// epoch: the last `capacity`, or as many of them as the ring holds.
/// A claim never touches a message replay can still deliver: the messages
/// its room overlaps are dropped first, whether or not it is committed.
/// Inbound messages are not kept.
class MemoryStore final : public MessageStore {
 public:
  explicit MemoryStore(MemoryStoreConfig config = {}, std::int64_t created_ns = 0);
  /// Ring bytes that always keep the newest `messages` messages of up to
  /// `max_message_size` bytes each: each takes at most its claim (aligned)
  /// and a wrap can leave up to one claim unused.
  [[nodiscard]] static constexpr std::size_t bytes_for(std::size_t messages,
                                                       std::size_t max_message_size) noexcept {
    return (messages + 1) * (max_message_size + kAlign);
  }

  [[nodiscard]] std::span<char> claim(std::size_t max_bytes) noexcept override;
  [[nodiscard]] std::size_t max_claim() const noexcept override {
    return config_.capacity == 0 ? 0 : config_.max_message_size;
  }
  using MessageStore::commit;
  [[nodiscard]] StoreStatus commit(std::uint64_t seq, std::int64_t timestamp_ns, std::size_t offset,
                                   std::size_t length, std::uint8_t flags) noexcept override;
  [[nodiscard]] StoreStatus last_status() const noexcept override { return last_status_; }
  [[nodiscard]] StoreStatus store_inbound(std::uint64_t seq, std::int64_t timestamp_ns,
                                          std::span<const char> bytes) noexcept override;
  [[nodiscard]] std::uint64_t next_sender_seq() const noexcept override { return next_sender_; }
  [[nodiscard]] std::uint64_t next_target_seq() const noexcept override { return next_target_; }
  void set_next_sender_seq(std::uint64_t seq) noexcept override { next_sender_ = seq; }
  void set_next_target_seq(std::uint64_t seq) noexcept override { next_target_ = seq; }
  [[nodiscard]] StoreStatus reset(std::int64_t now_ns) noexcept override;
  [[nodiscard]] std::uint64_t epoch() const noexcept override { return epoch_; }
  [[nodiscard]] std::int64_t creation_time() const noexcept override { return created_ns_; }
  using MessageStore::replay;
  [[nodiscard]] ReplayResult replay(std::uint64_t begin, std::uint64_t end, std::size_t max_messages,
                                    ReplayVisitor& visitor) noexcept override;
  [[nodiscard]] StoreStatus flush() noexcept override { return StoreStatus::kOk; }
  [[nodiscard]] StoreStats stats() const noexcept override { return stats_; }

 private:
  struct Slot {
    std::uint64_t seq = 0;
    std::int64_t timestamp_ns = 0;
    std::size_t offset = 0;  ///< in the ring
    std::uint32_t length = 0;
    std::uint8_t flags = 0;
  };
  static constexpr std::size_t kAlign = 8;  ///< messages start at multiples of this in the ring
  [[nodiscard]] const Slot& slot_at(std::size_t i) const noexcept { return slots_[(head_ + i) % slots_.size()]; }
  void drop_oldest() noexcept;
  void drop_overlapping(std::size_t from, std::size_t to) noexcept;

  MemoryStoreConfig config_;
  std::size_t arena_size_ = 0;  ///< the ring plus one claim
  std::unique_ptr<char[]> arena_;
  std::vector<Slot> slots_;
  std::size_t head_ = 0;   ///< oldest
  std::size_t count_ = 0;
  std::size_t write_ = 0;     ///< where the next claim starts (after the newest message)
  std::size_t claim_at_ = 0;  ///< where the open claim starts
  std::size_t claimed_ = ~std::size_t{0};
  std::uint64_t last_seq_ = 0;
  std::uint64_t next_sender_ = 1;
  std::uint64_t next_target_ = 1;
  std::uint64_t epoch_ = 1;
  std::int64_t created_ns_ = 0;
  StoreStatus last_status_ = StoreStatus::kOk;
  StoreStats stats_{};
};

// ---------------------------------------------------------------------------

struct JournalStoreConfig {
  /// Session directory: holds outbound/, inbound/ and seqnums.dat.
  std::string directory;
  /// Settings of both journals (their `directory` is ignored).
  JournalConfig journal;
  /// Also journal received messages (store_inbound) in inbound/.
  bool journal_inbound = true;
  /// session_identity() of the session (0: not recorded, not checked).
  /// Recorded in the files created; files recording another identity are
  /// refused (a journal or sequence-number file of another session).
  std::uint64_t session_identity = 0;
  /// fsync a sequence-number file the open creates before renaming it into
  /// place (1-2 ms on a virtio disk). False (the engine, so that 1,000 new
  /// sessions start in well under a second): a power loss right after may
  /// leave the new file empty, and open() treats an empty or all-zero file
  /// as a missing one (it held 1/1 of a store with nothing journaled, or the
  /// journals say what it should hold).
  bool sync_new_files = true;
};

/// What JournalStore::open found and repaired.
struct StoreRecovery {
  RecoveryReport outbound;
  RecoveryReport inbound;        ///< default when inbound messages are not journaled
  bool seqnums_created = false;  ///< seqnums.dat did not exist
  /// seqnums.dat was missing or older than the journals, and the numbers
  /// were taken from the journals.
  bool seqnums_recovered = false;
  std::uint64_t file_next_sender = 0, file_next_target = 0, file_epoch = 0;  ///< as found (0: missing)
  std::uint64_t next_sender = 0, next_target = 0;                            ///< after open
  /// One line per repair or recovery (journal repairs, numbers recovered or
  /// raised, messages lost), naming the files: the engine logs each at WARN.
  /// Empty: nothing to report.
  std::vector<std::string> warnings;
};

/// Persistent store: outbound journal, optional inbound journal and a
/// sequence-number file. On open it reconciles them: an epoch present in one
/// but not the other (a crash in the middle of reset()) is completed, and
/// next_sender_seq is raised past the last journaled outbound seq if the
/// file lags behind the journal by one message (a crash). next_target_seq
/// keeps the file's value: an inbound message is journaled before the
/// application sees it, so a crash after journaling costs a PossDup resend,
/// never a lost message. A file that is missing or older than the journals
/// (behind by more than one message) is rebuilt from them: next sender =
/// outbound last + 1, next target = inbound last + 1; without an inbound
/// journal, open() refuses instead (the next target seq is unknown).
/// recovery() says what was done (docs/journal.md, "Store consistency").
class JournalStore final : public MessageStore {
 public:
  /// Opens or creates the store. Errors name the file at fault.
  [[nodiscard]] static Expected<std::unique_ptr<JournalStore>> open(const JournalStoreConfig& config,
                                                                    JournalService* service = nullptr,
                                                                    std::int64_t now_ns = 0);
  ~JournalStore() override;

  [[nodiscard]] std::span<char> claim(std::size_t max_bytes) noexcept override;
  /// The outbound journal's largest claim (both journals share the settings).
  [[nodiscard]] std::size_t max_claim() const noexcept override { return outbound_->max_claim(); }
  using MessageStore::commit;
  /// Advances the sequence-number file only when the message was recorded
  /// (kOk): a failed commit leaves no record, so its seq is used again.
  [[nodiscard]] StoreStatus commit(std::uint64_t seq, std::int64_t timestamp_ns, std::size_t offset,
                                   std::size_t length, std::uint8_t flags) noexcept override;
  [[nodiscard]] StoreStatus last_status() const noexcept override;
  /// From the outbound journal's reserve (kReserveMessageSize per segment).
  [[nodiscard]] std::span<char> claim_reserve(std::size_t max_bytes) noexcept override;
  /// Claims on both journals.
  [[nodiscard]] StoreStatus check_room(std::size_t max_bytes) noexcept override;
  [[nodiscard]] bool ready_for(std::size_t inbound_bytes, std::size_t answer_bytes) noexcept override;
  /// Names the journal directory, the status and the errno.
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
  [[nodiscard]] ReplayResult replay(std::uint64_t begin, std::uint64_t end, std::size_t max_messages,
                                    ReplayVisitor& visitor) noexcept override;
  [[nodiscard]] StoreStatus flush() noexcept override;
  [[nodiscard]] StoreStats stats() const noexcept override;

  [[nodiscard]] Journal& outbound() noexcept { return *outbound_; }
  /// Null when inbound messages are not journaled.
  [[nodiscard]] Journal* inbound() noexcept { return inbound_.get(); }
  [[nodiscard]] SeqNumStore& seqnums() noexcept { return *seqnums_; }
  /// What open() found and repaired.
  [[nodiscard]] const StoreRecovery& recovery() const noexcept { return recovery_; }

 private:
  JournalStore() = default;
  /// Remembers which journal failed with what (failure paths only).
  StoreStatus noted(const Journal* journal, StoreStatus status) noexcept {
    failed_ = journal;
    failed_status_ = status;
    return status;
  }

  StoreRecovery recovery_;
  std::unique_ptr<SeqNumStore> seqnums_;
  std::unique_ptr<Journal> outbound_;
  std::unique_ptr<Journal> inbound_;
  const Journal* failed_ = nullptr;
  StoreStatus failed_status_ = StoreStatus::kOk;
};

}  // namespace hft::store
