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
#include "store_reconcile.hpp"

namespace hft::store {

namespace {

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

  detail::ReconcileInput in;
  in.directory = config.directory;
  in.session_identity = config.session_identity;
  in.sync_new_files = config.sync_new_files;
  in.journal_inbound = ib != nullptr;
  // Journals that hold anything at all (any epoch): a store in use.
  in.journals_used = !rec.outbound.created || (ib != nullptr && !rec.inbound.created);
  in.last_out_before = ob.last_seq();
  in.repair_directory = ob.config().directory;
  in.level = [&](SeqNumStore& seq) -> Expected<detail::JournalTail> {
    // reset() writes the journals first, then the file: a crash in between
    // leaves the journals one epoch ahead. Finish what was started.
    std::uint64_t journal_epoch = ob.epoch();
    std::int64_t journal_created = ob.epoch_created_ns();
    if (ib != nullptr && ib->epoch() > journal_epoch) {
      journal_epoch = ib->epoch();
      journal_created = ib->epoch_created_ns();
    }
    if (journal_epoch > seq.epoch()) seq.reset(journal_epoch, journal_created);
    // A journal behind the file (replaced, or its reset lost): follow the file.
    if (ib != nullptr && ib->epoch() < seq.epoch() &&
        ib->reset(seq.epoch(), seq.epoch_created_ns()) != StoreStatus::kOk)
      return Error{ib->config().directory + ": cannot start epoch " + std::to_string(seq.epoch())};
    if (ob.epoch() < seq.epoch() && ob.reset(seq.epoch(), seq.epoch_created_ns()) != StoreStatus::kOk)
      return Error{ob.config().directory + ": cannot start epoch " + std::to_string(seq.epoch())};
    return detail::JournalTail{ob.last_seq(), ib != nullptr ? ib->last_seq() : 0};
  };
  auto reconciled = detail::reconcile_seqnums(in, now_ns);
  if (!reconciled) return reconciled.error();
  store->seqnums_ = std::move(reconciled->seqnums);
  SeqNumStore& seq = *store->seqnums_;
  rec.seqnums_created = reconciled->created;
  rec.seqnums_recovered = reconciled->recovered;
  rec.file_next_sender = reconciled->file_next_sender;
  rec.file_next_target = reconciled->file_next_target;
  rec.file_epoch = reconciled->file_epoch;
  rec.next_sender = reconciled->next_sender;
  rec.next_target = reconciled->next_target;
  for (std::string& line : reconciled->warnings) rec.warnings.push_back(std::move(line));

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

bool JournalStore::ready_for(std::size_t inbound_bytes, std::size_t answer_bytes) noexcept {
  return outbound_->ready_for(answer_bytes, 0) && (!inbound_ || inbound_->ready_for(inbound_bytes, 0));
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
