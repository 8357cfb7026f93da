#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "hft/core/clock.hpp"
#include "hft/store/message_store.hpp"
#include "hft/store/seqnum_store.hpp"

namespace hft::store {

namespace {

// A file of at most the sequence-number file's size holding only zeros.
bool empty_file(const std::string& path, const struct stat& st) {
  if (st.st_size == 0) return true;
  if (st.st_size > 4096) return false;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[4096];
  const ssize_t n = ::pread(fd, buf, sizeof buf, 0);
  ::close(fd);
  if (n != st.st_size) return false;
  for (ssize_t i = 0; i < n; ++i)
    if (buf[i] != 0) return false;
  return true;
}

void journal_repairs(const char* which, const RecoveryReport& r, std::vector<std::string>& out) {
  for (const std::string& line : r.repairs) out.push_back(std::string(which) + " journal repaired: " + line);
  for (const std::string& line : r.notes) out.push_back(std::string(which) + " journal: " + line);
}

}  // namespace

Expected<std::unique_ptr<JournalStore>> JournalStore::open(const JournalStoreConfig& config,
                                                           JournalService* service, std::int64_t now_ns) {
  if (config.directory.empty()) return Error{"journal store: no directory configured"};
  if (now_ns == 0) now_ns = core::realtime_ns();
  std::unique_ptr<JournalStore> store(new JournalStore());
  StoreRecovery& rec = store->recovery_;

  // The journals first: their open creates the session directory (or
  // refuses a missing one) with the configured policy.
  JournalConfig out = config.journal;
  out.directory = config.directory + "/outbound";
  out.session_identity = config.session_identity;
  out.reserve_bytes = std::max(out.reserve_bytes, kReserveMessageSize);
  auto outbound = Journal::open(out, service);
  if (!outbound) return outbound.error();
  store->outbound_ = std::move(*outbound);
  rec.outbound = store->outbound_->recovery();
  journal_repairs("outbound", rec.outbound, rec.warnings);
  if (config.journal_inbound) {
    JournalConfig in = config.journal;
    in.directory = config.directory + "/inbound";
    in.session_identity = config.session_identity;
    auto inbound = Journal::open(in, service);
    if (!inbound) return inbound.error();
    store->inbound_ = std::move(*inbound);
    rec.inbound = store->inbound_->recovery();
    journal_repairs("inbound", rec.inbound, rec.warnings);
  }
  Journal& ob = *store->outbound_;
  Journal* ib = store->inbound_.get();

  const std::string path = config.directory + "/seqnums.dat";
  struct stat st {};
  bool missing = ::stat(path.c_str(), &st) != 0 && errno == ENOENT;
  if (!missing && S_ISREG(st.st_mode) && empty_file(path, st)) {
    // A creation whose data never reached the disk (a power loss right
    // after a new store was created without fsync): it says nothing, so it
    // is treated as missing and said so.
    rec.warnings.push_back(path + ": empty (" + std::to_string(st.st_size) +
                           " bytes, all zero): a new file cut short by a crash; treated as missing");
    if (::unlink(path.c_str()) != 0) return Error{path + ": empty, and cannot be removed: " + std::strerror(errno)};
    missing = true;
  }
  // Journals that hold anything at all (any epoch): a store in use.
  const bool journals_used = !rec.outbound.created || (ib != nullptr && !rec.inbound.created);
  if (missing && journals_used && ib == nullptr && ob.last_seq() != 0) {
    // The outbound journal gives the next sender seq, but nothing gives the
    // next target seq: starting at 1 would have the peer resend the day.
    return Error{
        path +
        ": missing, and the inbound journal is off (journal_inbound): the next target MsgSeqNum "
        "cannot be recovered (the outbound journal holds up to seq " +
        std::to_string(ob.last_seq()) +
        "); restore the file, or remove the store directory to start the session at 1 on both sides"};
  }
  auto seqnums = SeqNumStore::open(path, now_ns, true, config.session_identity, config.sync_new_files);
  if (!seqnums) return seqnums.error();
  store->seqnums_ = std::make_unique<SeqNumStore>(std::move(*seqnums));
  SeqNumStore& seq = *store->seqnums_;
  rec.seqnums_created = missing;
  rec.file_next_sender = missing ? 0 : seq.next_sender_seq();
  rec.file_next_target = missing ? 0 : seq.next_target_seq();
  rec.file_epoch = missing ? 0 : seq.epoch();

  // reset() writes the journals first, then the file: a crash in between
  // leaves the journals one epoch ahead. Finish what was started.
  std::uint64_t journal_epoch = ob.epoch();
  std::int64_t journal_created = ob.epoch_created_ns();
  if (ib != nullptr && ib->epoch() > journal_epoch) {
    journal_epoch = ib->epoch();
    journal_created = ib->epoch_created_ns();
  }
  const bool file_epoch_behind = journal_epoch > seq.epoch();
  if (file_epoch_behind) seq.reset(journal_epoch, journal_created);
  // A journal behind the file (replaced, or its reset lost): follow the file.
  if (ib != nullptr && ib->epoch() < seq.epoch() &&
      ib->reset(seq.epoch(), seq.epoch_created_ns()) != StoreStatus::kOk)
    return Error{ib->config().directory + ": cannot start epoch " + std::to_string(seq.epoch())};
  if (ob.epoch() < seq.epoch() && ob.reset(seq.epoch(), seq.epoch_created_ns()) != StoreStatus::kOk)
    return Error{ob.config().directory + ": cannot start epoch " + std::to_string(seq.epoch())};

  // The journals are the truth, the file a cache of them. The outbound
  // journal holds the last seq used for certain; the file may lag it by one
  // message (a crash between the journal commit and the file update, or a
  // torn slot). The inbound journal holds the accepted stream in sequence
  // (Session::verify), but a received message is journaled before the
  // application sees it, so its last seq may be one ahead of what was
  // processed: while the file is trusted, next_target_seq keeps the file's
  // value, and a crash costs a PossDup resend, never a lost message.
  //
  // A file that is missing, or further behind the journals than that one
  // message (an old copy restored from a backup, a file of an earlier run),
  // is not trusted: both numbers come from the journals. The next target
  // is then the inbound journal's last seq + 1, which loses at most the one
  // message that was journaled but not yet processed when the process died;
  // a SequenceReset the journal holds without its NewSeqNo gives a lower
  // target, and the peer resends what follows with PossDupFlag=Y.
  const std::uint64_t ob_next = ob.last_seq() + 1;
  const std::uint64_t ib_next = ib != nullptr ? ib->last_seq() + 1 : 0;
  const std::uint64_t file_sender = seq.next_sender_seq();
  const std::uint64_t file_target = seq.next_target_seq();
  const bool sender_stale = ob_next > file_sender + 1;
  const bool target_stale = ib != nullptr && ib_next > file_target + 1;
  // A file whose epoch was behind has just been reset to 1/1 above: the
  // journals of the new epoch are normally empty then, and if they are not
  // (the reset was done and traffic followed, and then the file was lost or
  // replaced by an older copy) they are the truth like any other time.
  const bool distrust = (missing && journals_used) || (!missing && (sender_stale || target_stale));
  if (!missing && ib == nullptr && sender_stale) {
    return Error{
        path + ": older than the outbound journal (next sender seq " + std::to_string(file_sender) +
        ", the journal holds up to seq " + std::to_string(ob.last_seq()) +
        ") and the inbound journal is off (journal_inbound): the next target MsgSeqNum cannot be "
        "recovered; restore the current file, or remove the store directory to start the session at 1 "
        "on both sides"};
  }
  std::uint64_t sender = file_sender;
  std::uint64_t target = file_target;
  if (distrust) {
    sender = std::max(file_sender, ob_next);
    if (ib != nullptr) target = std::max(file_target, ib_next);
    rec.seqnums_recovered = true;
  } else if (ob.last_seq() != 0) {
    sender = std::max(sender, ob_next);
  }
  if (sender != seq.next_sender_seq() || target != seq.next_target_seq()) seq.set(sender, target);
  rec.next_sender = sender;
  rec.next_target = target;

  if (missing && journals_used) {
    rec.warnings.push_back(path + ": missing, recovered from the journals: epoch " +
                           std::to_string(seq.epoch()) + ", next sender seq " + std::to_string(sender) +
                           " (outbound journal's last " + std::to_string(ob.last_seq()) +
                           " + 1), next target seq " + std::to_string(target) + " (inbound journal's last " +
                           std::to_string(ib_next - 1) + " + 1)");
  } else if (rec.seqnums_recovered) {
    rec.warnings.push_back(path + ": older than the journals (generation " +
                           std::to_string(seq.generation()) + ": next sender seq " +
                           std::to_string(file_sender) + ", next target seq " + std::to_string(file_target) +
                           "; the journals hold up to sender seq " + std::to_string(ob.last_seq()) +
                           ", target seq " + std::to_string(ib_next - 1) +
                           "): recovered from the journals: next sender seq " + std::to_string(sender) +
                           ", next target seq " + std::to_string(target));
  } else if (!missing && sender != file_sender) {
    rec.warnings.push_back(path + ": next sender seq raised from " + std::to_string(file_sender) + " to " +
                           std::to_string(sender) + ": the outbound journal holds seq " +
                           std::to_string(ob.last_seq()) +
                           " (the file was not updated after it, e.g. a crash)");
  }
  if (!missing && ob.last_seq() + 1 < sender) {
    // The file knew of messages the journal no longer holds (a repair, or
    // a segment file removed or emptied while the engine was stopped).
    const std::string line = "outbound journal ends at seq " + std::to_string(ob.last_seq()) + " but " +
                             path + " says next sender seq " + std::to_string(sender) + ": seqs " +
                             std::to_string(ob.last_seq() + 1) + ".." + std::to_string(sender - 1) + " (" +
                             std::to_string(sender - 1 - ob.last_seq()) +
                             " messages) are lost; a ResendRequest for them is answered with a gap fill";
    rec.warnings.push_back(line);
    if (auto logged = append_repair_log(ob.config().directory, line); !logged) return logged.error();
  }

  ob.set_companion_mapping(seq.mapping(), SeqNumStore::mapping_size());
  return store;
}

JournalStore::~JournalStore() = default;

std::span<char> JournalStore::claim(std::size_t max_bytes) noexcept {
  const std::span<char> room = outbound_->claim(max_bytes);
  if (room.empty()) [[unlikely]]
    (void)noted(outbound_.get(), outbound_->last_status());
  return room;
}

std::span<char> JournalStore::claim_reserve(std::size_t max_bytes) noexcept {
  const std::span<char> room = outbound_->claim_reserve(max_bytes);
  if (room.empty()) (void)noted(outbound_.get(), outbound_->last_status());
  return room;
}

StoreStatus JournalStore::commit(std::uint64_t seq, std::int64_t timestamp_ns, std::size_t offset, std::size_t length,
                                 std::uint8_t flags) noexcept {
  const StoreStatus status = outbound_->commit(seq, timestamp_ns, offset, length, flags);
  if (status != StoreStatus::kOk) [[unlikely]]
    return noted(outbound_.get(), status);
  if (seq >= seqnums_->next_sender_seq()) seqnums_->set_next_sender_seq(seq + 1);
  return status;
}

StoreStatus JournalStore::last_status() const noexcept { return outbound_->last_status(); }

StoreStatus JournalStore::store_inbound(std::uint64_t seq, std::int64_t timestamp_ns,
                                        std::span<const char> bytes) noexcept {
  if (!inbound_) return StoreStatus::kOk;
  const StoreStatus status = inbound_->append(seq, timestamp_ns, bytes);
  if (status != StoreStatus::kOk) [[unlikely]]
    return noted(inbound_.get(), status);
  return status;
}

StoreStatus JournalStore::check_room(std::size_t max_bytes) noexcept {
  if (claim(max_bytes).empty()) return failed_status_;
  if (inbound_ && inbound_->claim(max_bytes).empty()) return noted(inbound_.get(), inbound_->last_status());
  return StoreStatus::kOk;
}

std::size_t JournalStore::describe_failure(std::span<char> out) const noexcept {
  if (out.empty()) return 0;
  const Journal* j = failed_ != nullptr ? failed_ : outbound_.get();
  const int err = j->stats().last_errno;
  const std::string_view what = to_string(failed_status_);
  const std::string& dir = j->config().directory;
  const int n = err != 0 ? std::snprintf(out.data(), out.size(), "journal %s: %.*s (%s)", dir.c_str(),
                                         static_cast<int>(what.size()), what.data(), std::strerror(err))
                         : std::snprintf(out.data(), out.size(), "journal %s: %.*s", dir.c_str(),
                                         static_cast<int>(what.size()), what.data());
  return n <= 0 ? 0 : std::min(static_cast<std::size_t>(n), out.size() - 1);
}

std::uint64_t JournalStore::next_sender_seq() const noexcept { return seqnums_->next_sender_seq(); }
std::uint64_t JournalStore::next_target_seq() const noexcept { return seqnums_->next_target_seq(); }
void JournalStore::set_next_sender_seq(std::uint64_t seq) noexcept { seqnums_->set_next_sender_seq(seq); }
void JournalStore::set_next_target_seq(std::uint64_t seq) noexcept { seqnums_->set_next_target_seq(seq); }

StoreStatus JournalStore::reset(std::int64_t now_ns) noexcept {
  const std::uint64_t next_epoch = seqnums_->epoch() + 1;
  // Journals first (see open()).
  if (const StoreStatus s = outbound_->reset(next_epoch, now_ns); s != StoreStatus::kOk) return s;
  if (inbound_) {
    if (const StoreStatus s = inbound_->reset(next_epoch, now_ns); s != StoreStatus::kOk) return s;
  }
  seqnums_->reset(next_epoch, now_ns);
  return StoreStatus::kOk;
}

std::uint64_t JournalStore::epoch() const noexcept { return seqnums_->epoch(); }
std::int64_t JournalStore::creation_time() const noexcept { return seqnums_->epoch_created_ns(); }

ReplayResult JournalStore::replay(std::uint64_t begin, std::uint64_t end, std::size_t max_messages,
                                  ReplayVisitor& visitor) noexcept {
  return outbound_->replay(begin, end, max_messages, visitor);
}

StoreStatus JournalStore::flush() noexcept {
  StoreStatus status = outbound_->flush();
  if (inbound_) {
    if (const StoreStatus s = inbound_->flush(); s != StoreStatus::kOk) status = s;
  }
  if (const StoreStatus s = seqnums_->flush(); s != StoreStatus::kOk) status = s;
  return status;
}

StoreStats JournalStore::stats() const noexcept {
  StoreStats s;
  s.outbound = outbound_->stats();
  if (inbound_) s.inbound = inbound_->stats();
  return s;
}

}  // namespace hft::store
