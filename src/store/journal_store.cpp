#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "hft/core/clock.hpp"
#include "hft/store/message_store.hpp"
#include "hft/store/seqnum_store.hpp"

namespace hft::store {

Expected<std::unique_ptr<JournalStore>> JournalStore::open(const JournalStoreConfig& config,
                                                           JournalService* service, std::int64_t now_ns) {
  if (config.directory.empty()) return Error{"journal store: no directory configured"};
  if (now_ns == 0) now_ns = core::realtime_ns();
  std::unique_ptr<JournalStore> store(new JournalStore());

  // The journals first: their open creates the session directory (or
  // refuses a missing one) with the configured policy.
  JournalConfig out = config.journal;
  out.directory = config.directory + "/outbound";
  out.reserve_bytes = std::max(out.reserve_bytes, kReserveMessageSize);
  auto outbound = Journal::open(out, service);
  if (!outbound) return outbound.error();
  store->outbound_ = std::move(*outbound);
  if (config.journal_inbound) {
    JournalConfig in = config.journal;
    in.directory = config.directory + "/inbound";
    auto inbound = Journal::open(in, service);
    if (!inbound) return inbound.error();
    store->inbound_ = std::move(*inbound);
  }
  auto seqnums = SeqNumStore::open(config.directory + "/seqnums.dat", now_ns);
  if (!seqnums) return seqnums.error();
  store->seqnums_ = std::make_unique<SeqNumStore>(std::move(*seqnums));
  SeqNumStore& seq = *store->seqnums_;
  Journal& ob = *store->outbound_;

  // reset() writes the journals first, then the file: a crash in between
  // leaves the journals one epoch ahead. Finish what was started.
  std::uint64_t journal_epoch = ob.epoch();
  std::int64_t journal_created = ob.epoch_created_ns();
  if (store->inbound_ && store->inbound_->epoch() > journal_epoch) {
    journal_epoch = store->inbound_->epoch();
    journal_created = store->inbound_->epoch_created_ns();
  }
  if (journal_epoch > seq.epoch()) seq.reset(journal_epoch, journal_created);
  // A journal behind the file (replaced, or its reset lost): follow the file.
  if (store->inbound_ && store->inbound_->epoch() < seq.epoch() &&
      store->inbound_->reset(seq.epoch(), seq.epoch_created_ns()) != StoreStatus::kOk)
    return Error{store->inbound_->config().directory + ": cannot start epoch " + std::to_string(seq.epoch())};
  if (ob.epoch() < seq.epoch() && ob.reset(seq.epoch(), seq.epoch_created_ns()) != StoreStatus::kOk)
    return Error{ob.config().directory + ": cannot start epoch " + std::to_string(seq.epoch())};

  // The outbound journal holds the last seq used for certain; the file may
  // lag (a crash between commit and the file update, or a torn slot).
  // next_target_seq is NOT raised from the inbound journal: a received
  // message is journaled before the application sees it and before the
  // session accepts it (a Logon ahead of a gap is journaled at once), so a
  // journaled seq is not a processed one. Keeping the file's value makes a
  // crash cost a PossDup resend, never a lost message.
  std::uint64_t sender = seq.next_sender_seq();
  if (ob.last_seq() != 0) sender = std::max(sender, ob.last_seq() + 1);
  if (sender != seq.next_sender_seq()) seq.set_next_sender_seq(sender);

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
