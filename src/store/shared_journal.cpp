#include "hft/store/shared_journal.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>

#include "hft/core/clock.hpp"
#include "hft/store/seqnum_store.hpp"
#include "store/segment.hpp"
#include "store_reconcile.hpp"

namespace hft::store {

// ---------------------------------------------------------------------------
// StreamHeader

bool StreamHeader::read(std::span<const char> payload, StreamHeader& out) noexcept {
  if (payload.size() < kSize) return false;
  const char* p = payload.data();
  std::memcpy(&out.stream, p, 4);
  out.kind = static_cast<std::uint8_t>(p[4]);
  const auto version = static_cast<std::uint8_t>(p[5]);
  std::memcpy(&out.value, p + 8, 8);
  return out.stream != 0 && version == kVersion && out.kind >= kOutbound && out.kind <= kEpochStart;
}

void StreamHeader::write(char* at) const noexcept {
  std::memcpy(at, &stream, 4);
  at[4] = static_cast<char>(kind);
  at[5] = static_cast<char>(kVersion);
  at[6] = 0;
  at[7] = 0;
  std::memcpy(at + 8, &value, 8);
}

// ---------------------------------------------------------------------------
// SharedJournal::Stream

void SharedJournal::Stream::index(std::uint64_t seq, std::uint64_t record) noexcept {
  if (seq <= last_out) return;  // not replayable (as Journal: seqs must increase in an epoch)
  last_out = seq;
  if (recent.empty()) return;  // an unnamed stream (its name record damaged): no session replays it
  recent[recent_count % kRecent] = {seq, record};
  ++recent_count;
  if (seq % kSparseEvery == 0 || sparse_count == 0) {
    sparse[sparse_count % kSparse] = {seq, record};
    ++sparse_count;
  }
}

namespace {

// The record of the newest mark at or before `seq` in a ring of `capacity`
// marks of which `count` were pushed (seqs increase along it); 0: none.
template <typename Mark>
std::uint64_t find_mark(const std::vector<Mark>& ring, std::size_t count, std::size_t capacity,
                        std::uint64_t seq) noexcept {
  const std::size_t n = std::min(count, capacity);
  if (n == 0) return 0;
  const std::size_t first = count - n;
  if (ring[first % capacity].seq > seq) return 0;
  std::size_t lo = 0, hi = n;  // the first index whose seq is above `seq`
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (ring[(first + mid) % capacity].seq <= seq) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return ring[(first + lo - 1) % capacity].record;
}

}  // namespace

std::uint64_t SharedJournal::Stream::start_for(std::uint64_t begin) const noexcept {
  if (const std::uint64_t r = find_mark(recent, recent_count, kRecent, begin); r != 0) return r;
  if (const std::uint64_t r = find_mark(sparse, sparse_count, kSparse, begin); r != 0) return r;
  return epoch_record;
}

void SharedJournal::Stream::new_epoch(std::uint64_t e, std::int64_t created_ns,
                                      std::uint64_t record) noexcept {
  epoch = e;
  epoch_created_ns = created_ns;
  epoch_record = record;
  last_out = 0;
  last_in = 0;
  recent_count = 0;
  sparse_count = 0;
}

// ---------------------------------------------------------------------------
// SharedJournal

Expected<std::unique_ptr<SharedJournal>> SharedJournal::open(const SharedJournalConfig& config,
                                                             JournalService* service) {
  JournalConfig jc = config.journal;
  if (jc.retain_segments != 0 || jc.retain_max_age_ns != 0)
    return Error{
        jc.directory +
        ": retention (JournalRetainSegments) is not supported by a shared journal: the records naming "
        "its sessions' streams and epochs would go with the oldest segments"};
  // One epoch for the journal's whole life: every segment stays indexed
  // (the sessions' epochs are in their records).
  jc.max_epoch_segments = std::max<std::size_t>(jc.max_epoch_segments, std::size_t{1} << 16);
  // Room for one session's Logout after a store failure, with its header.
  jc.reserve_bytes = std::max(jc.reserve_bytes, kReserveMessageSize + StreamHeader::kSize);
  jc.session_identity = 0;
  auto journal = Journal::open(jc, service);
  if (!journal) return journal.error();
  std::unique_ptr<SharedJournal> shared(new SharedJournal(std::move(*journal)));
  if (auto scanned = shared->scan(); !scanned) return scanned.error();
  return shared;
}

SharedJournal::~SharedJournal() = default;

Expected<void> SharedJournal::scan() {
  Journal& j = *journal_;
  const std::string& dir = j.config().directory;
  std::uint64_t unreadable = 0;
  std::uint64_t first_unreadable = 0;
  std::uint64_t before_name = 0;  // records of a stream before its name (a damaged name record)
  std::uint64_t duplicate_names = 0;
  std::string error;
  auto visit = [&](const StoredMessage& m) noexcept -> bool {
    ++scanned_;
    last_record_ = m.seq;
    StreamHeader h;
    // A stream is named by a record of its own before it writes, so its
    // number cannot exceed the record's; nor can streams skip numbers by
    // more than a damaged name record or few explain (a header that says
    // otherwise is not this journal's: skipped, not trusted to size anything).
    if (!StreamHeader::read(m.bytes, h) || h.stream > m.seq || h.stream > streams_.size() + kMaxStreamGap) {
      if (unreadable++ == 0) first_unreadable = m.seq;
      return true;
    }
    const std::span<const char> body = m.bytes.subspan(StreamHeader::kSize);
    if (h.kind == StreamHeader::kStreamName) {
      Stream& s = ensure(h.stream);
      if (!s.name.empty()) {
        ++duplicate_names;
        return true;
      }
      s.identity = h.value;
      s.name.assign(body.data(), body.size());
      if (s.epoch_record == 0) s.epoch_record = m.seq;
      s.recent.resize(kRecent);  // a named stream's indexes (an unnamed one has none)
      s.sparse.resize(kSparse);
      return true;
    }
    if (h.stream > streams_.size()) ++before_name;
    Stream& s = ensure(h.stream);
    switch (h.kind) {
      case StreamHeader::kEpochStart: {
        std::int64_t created = 0;
        if (body.size() >= sizeof created) std::memcpy(&created, body.data(), sizeof created);
        s.new_epoch(h.value, created, m.seq);
        break;
      }
      case StreamHeader::kOutbound:
        s.used = true;
        s.index(h.value, m.seq);
        break;
      case StreamHeader::kInbound:
        s.used = true;
        s.last_in = std::max(s.last_in, h.value);
        break;
      default:
        break;
    }
    return true;
  };
  ReplayFunction<decltype(visit)> visitor(visit);
  const ReplayResult r = j.replay(1, std::numeric_limits<std::uint64_t>::max(),
                                  std::numeric_limits<std::size_t>::max(), visitor);
  if (!error.empty()) return Error{error};
  if (r.status == ReplayStatus::kIoError || r.unavailable_segments != 0)
    return Error{
        dir + ": " + std::to_string(r.unavailable_segments) +
        " segment(s) of the shared journal cannot be read: the sessions' numbers cannot be recovered"};
  // Record numbers continue after the last one the journal holds, indexed
  // or not (a record of a lower number is not replayable).
  last_record_ = std::max(last_record_, j.last_seq());
  if (r.corrupt != 0)
    warnings_.push_back(dir + ": " + std::to_string(r.corrupt) + " corrupt record(s) skipped by the scan");
  if (unreadable != 0)
    warnings_.push_back(dir + ": " + std::to_string(unreadable) +
                        " record(s) without a stream header (first: record " +
                        std::to_string(first_unreadable) + "): not a shared journal's, skipped");
  if (before_name != 0 || duplicate_names != 0)
    warnings_.push_back(dir + ": " + std::to_string(before_name) +
                        " record(s) of a stream before its name and " + std::to_string(duplicate_names) +
                        " repeated name record(s)");
  std::string unnamed;
  std::size_t unnamed_count = 0;
  for (const auto& st : streams_) {
    if (!st->name.empty()) continue;
    if (unnamed_count++ < 8) unnamed += (unnamed.empty() ? "" : ", ") + std::to_string(st->id);
  }
  if (unnamed_count != 0)
    warnings_.push_back(dir + ": " + std::to_string(unnamed_count) +
                        " stream(s) without a readable name record (" + unnamed +
                        (unnamed_count > 8 ? ", ..." : "") +
                        "): their records stay in the journal, but no session finds them; a session whose "
                        "stream it was starts a new one (its resends are gap-filled)");
  return {};
}

SharedJournal::Stream& SharedJournal::ensure(std::uint32_t id) {
  while (streams_.size() < id) {
    auto s = std::make_unique<Stream>();
    s->id = static_cast<std::uint32_t>(streams_.size() + 1);
    streams_.push_back(std::move(s));
  }
  return *streams_[id - 1];
}

StoreStatus SharedJournal::append(const StreamHeader& h, std::int64_t timestamp_ns,
                                  std::span<const char> body) noexcept {
  claimer_ = nullptr;
  const std::span<char> room = journal_->claim(StreamHeader::kSize + body.size());
  if (room.empty()) return journal_->last_status();
  h.write(room.data());
  if (!body.empty()) std::memcpy(room.data() + StreamHeader::kSize, body.data(), body.size());
  const std::uint64_t record = last_record_ + 1;
  const StoreStatus st = journal_->commit(record, timestamp_ns, 0, StreamHeader::kSize + body.size());
  if (st == StoreStatus::kOk) last_record_ = record;
  return st;
}

Expected<std::unique_ptr<SharedStore>> SharedJournal::open_store(const StoreConfig& config,
                                                                 std::int64_t now_ns) {
  if (config.directory.empty()) return Error{"shared journal store: no directory configured"};
  if (config.name.empty()) return Error{config.directory + ": shared journal store: no stream name"};
  if (now_ns == 0) now_ns = core::realtime_ns();
  const std::string& dir = journal_->config().directory;
  Stream* stream = nullptr;
  for (const auto& s : streams_) {
    if (s->name == config.name) {
      if (config.session_identity != 0 && s->identity != 0 && s->identity != config.session_identity)
        return Error{dir + ": stream " + std::to_string(s->id) + " (" + s->name +
                     ") records another session's identity"};
      stream = s.get();
      break;
    }
  }
  if (stream != nullptr && stream->store != nullptr)
    return Error{dir + ": stream " + std::to_string(stream->id) + " (" + stream->name + ") is open already"};

  if (const int err = detail::make_directories(config.directory); err != 0)
    return Error{config.directory + ": cannot create the session directory: " + std::strerror(err)};

  SharedStoreRecovery rec;
  const bool created = stream == nullptr;
  std::unique_ptr<Stream> fresh;
  if (created) {
    fresh = std::make_unique<Stream>();
    fresh->id = static_cast<std::uint32_t>(streams_.size() + 1);
    fresh->identity = config.session_identity;
    fresh->name = config.name;
    fresh->recent.resize(kRecent);
    fresh->sparse.resize(kSparse);
    stream = fresh.get();
    rec.stream_created = true;
  }

  // The seqnums file, reconciled with what the journal holds for the stream.
  const std::string stream_name = "stream " + std::to_string(stream->id) + " (" + config.name + ")";
  detail::ReconcileInput in;
  in.directory = config.directory;
  in.session_identity = config.session_identity;
  in.sync_new_files = config.sync_new_files;
  in.journal_inbound = config.journal_inbound;
  in.journals_used = !created && stream->used;
  in.last_out_before = stream->last_out;
  in.outbound_name = "the shared journal " + dir + "'s " + stream_name;
  in.repair_directory = dir;
  in.level = [&](SeqNumStore& seq) -> Expected<detail::JournalTail> {
    if (created) {
      // Name the stream before anything of it is written (after the file
      // opened: a start-up that fails there records nothing).
      const StreamHeader h{fresh->id, StreamHeader::kStreamName, config.session_identity};
      if (const StoreStatus st = append(h, now_ns, {config.name.data(), config.name.size()});
          st != StoreStatus::kOk)
        return Error{dir + ": cannot record " + stream_name + ": " + std::string(to_string(st))};
      fresh->epoch_record = last_record_;
      fresh->epoch = 1;
      fresh->epoch_created_ns = seq.epoch_created_ns();
      streams_.push_back(std::move(fresh));
    }
    if (!created && stream->epoch > seq.epoch()) {
      // reset() writes the journal first, then the file: finish it.
      seq.reset(stream->epoch, stream->epoch_created_ns);
    } else if (seq.epoch() > stream->epoch) {
      // The file is ahead (the journal's tail with the reset was lost, or a
      // store that had its own journals): the stream follows the file.
      const std::int64_t body = seq.epoch_created_ns();
      const StreamHeader h{stream->id, StreamHeader::kEpochStart, seq.epoch()};
      if (const StoreStatus st = append(h, now_ns, {reinterpret_cast<const char*>(&body), sizeof body});
          st != StoreStatus::kOk)
        return Error{dir + ": cannot start epoch " + std::to_string(seq.epoch()) + " of " + stream_name +
                     ": " + std::string(to_string(st))};
      stream->new_epoch(seq.epoch(), seq.epoch_created_ns(), last_record_);
    }
    return detail::JournalTail{stream->last_out, stream->last_in};
  };
  auto reconciled = detail::reconcile_seqnums(in, now_ns);
  if (!reconciled) return reconciled.error();
  detail::ReconcileOutput& out = *reconciled;

  std::unique_ptr<SharedStore> store(new SharedStore(*this, *stream));
  store->seqnums_ = std::move(out.seqnums);
  store->journal_inbound_ = config.journal_inbound;
  rec.seqnums_created = out.created;
  rec.seqnums_recovered = out.recovered;
  rec.next_sender = store->seqnums_->next_sender_seq();
  rec.next_target = store->seqnums_->next_target_seq();
  rec.warnings = std::move(out.warnings);
  store->recovery_ = std::move(rec);
  stream->store = store.get();
  stream->appends = 0;
  stream->bytes = 0;
  return store;
}

// ---------------------------------------------------------------------------
// SharedStore

SharedStore::SharedStore(SharedJournal& owner, SharedJournal::Stream& stream)
    : owner_(owner), stream_(&stream) {}

SharedStore::~SharedStore() {
  if (owner_.claimer_ == this) owner_.claimer_ = nullptr;
  stream_->store = nullptr;
}

std::span<char> SharedStore::take(std::span<char> room) noexcept {
  if (room.empty()) [[unlikely]] {
    owner_.claimer_ = nullptr;
    return room;
  }
  owner_.claimer_ = this;
  room_ = room.data();
  room_size_ = room.size() - StreamHeader::kSize;
  return room.subspan(StreamHeader::kSize);
}

std::span<char> SharedStore::claim(std::size_t max_bytes) noexcept {
  return take(owner_.journal_->claim(max_bytes + StreamHeader::kSize));
}

std::span<char> SharedStore::claim_reserve(std::size_t max_bytes) noexcept {
  return take(owner_.journal_->claim_reserve(max_bytes + StreamHeader::kSize));
}

std::size_t SharedStore::max_claim() const noexcept {
  const std::size_t m = owner_.journal_->max_claim();
  return m > StreamHeader::kSize ? m - StreamHeader::kSize : 0;
}

StoreStatus SharedStore::commit(std::uint64_t seq, std::int64_t timestamp_ns, std::size_t offset,
                                std::size_t length, std::uint8_t flags) noexcept {
  if (owner_.claimer_ != this) [[unlikely]]
    return StoreStatus::kNoClaim;
  // Checked before the header is written: nothing outside the claim is touched.
  if (length == 0 || offset > room_size_ || length > room_size_ - offset) [[unlikely]]
    return StoreStatus::kInvalidArgument;
  // The message is at room_ + kSize + offset: its header goes just before it.
  const StreamHeader h{stream_->id, StreamHeader::kOutbound, seq};
  h.write(room_ + offset);
  const std::uint64_t record = owner_.last_record_ + 1;
  const StoreStatus status =
      owner_.journal_->commit(record, timestamp_ns, offset, length + StreamHeader::kSize, flags);
  owner_.claimer_ = nullptr;
  if (status != StoreStatus::kOk) [[unlikely]]
    return status;
  owner_.last_record_ = record;
  stream_->used = true;
  stream_->index(seq, record);
  ++stream_->appends;
  stream_->bytes += length;
  if (seq >= seqnums_->next_sender_seq()) seqnums_->set_next_sender_seq(seq + 1);
  return status;
}

StoreStatus SharedStore::last_status() const noexcept {
  return owner_.journal_->last_status();
}

StoreStatus SharedStore::store_inbound(std::uint64_t seq, std::int64_t timestamp_ns,
                                       std::span<const char> bytes) noexcept {
  if (!journal_inbound_) return StoreStatus::kOk;
  const StreamHeader h{stream_->id, StreamHeader::kInbound, seq};
  const StoreStatus status = owner_.append(h, timestamp_ns, bytes);
  if (status != StoreStatus::kOk) [[unlikely]]
    return status;
  stream_->used = true;
  if (seq > stream_->last_in) stream_->last_in = seq;
  ++stream_->appends;
  stream_->bytes += bytes.size();
  return status;
}

StoreStatus SharedStore::check_room(std::size_t max_bytes) noexcept {
  // Both directions write the same journal: one claim says it.
  if (claim(max_bytes).empty()) return last_status();
  owner_.claimer_ = nullptr;
  return StoreStatus::kOk;
}

bool SharedStore::ready_for(std::size_t inbound_bytes, std::size_t answer_bytes) noexcept {
  // Both into the one journal: the received message first, then the answer.
  const std::size_t answer = answer_bytes + StreamHeader::kSize;
  return journal_inbound_ ? owner_.journal_->ready_for(inbound_bytes + StreamHeader::kSize, answer)
                          : owner_.journal_->ready_for(answer, 0);
}

std::size_t SharedStore::describe_failure(std::span<char> out) const noexcept {
  if (out.empty()) return 0;
  const Journal& j = *owner_.journal_;
  const int err = j.stats().last_errno;
  const std::string_view what = to_string(j.last_status());
  const std::string& dir = j.config().directory;
  const int n = err != 0 ? std::snprintf(out.data(), out.size(), "shared journal %s: %.*s (%s)", dir.c_str(),
                                         static_cast<int>(what.size()), what.data(), std::strerror(err))
                         : std::snprintf(out.data(), out.size(), "shared journal %s: %.*s", dir.c_str(),
                                         static_cast<int>(what.size()), what.data());
  return n <= 0 ? 0 : std::min(static_cast<std::size_t>(n), out.size() - 1);
}

std::uint64_t SharedStore::next_sender_seq() const noexcept {
  return seqnums_->next_sender_seq();
}
std::uint64_t SharedStore::next_target_seq() const noexcept {
  return seqnums_->next_target_seq();
}
void SharedStore::set_next_sender_seq(std::uint64_t seq) noexcept {
  seqnums_->set_next_sender_seq(seq);
}
void SharedStore::set_next_target_seq(std::uint64_t seq) noexcept {
  seqnums_->set_next_target_seq(seq);
}

StoreStatus SharedStore::reset(std::int64_t now_ns) noexcept {
  const std::uint64_t next_epoch = seqnums_->epoch() + 1;
  // The journal first (see SharedJournal::open_store).
  const StreamHeader h{stream_->id, StreamHeader::kEpochStart, next_epoch};
  const std::int64_t body = now_ns;
  if (const StoreStatus s = owner_.append(h, now_ns, {reinterpret_cast<const char*>(&body), sizeof body});
      s != StoreStatus::kOk)
    return s;
  stream_->new_epoch(next_epoch, now_ns, owner_.last_record_);
  seqnums_->reset(next_epoch, now_ns);
  return StoreStatus::kOk;
}

std::uint64_t SharedStore::epoch() const noexcept {
  return seqnums_->epoch();
}
std::int64_t SharedStore::creation_time() const noexcept {
  return seqnums_->epoch_created_ns();
}

ReplayResult SharedStore::replay(std::uint64_t begin, std::uint64_t end, std::size_t max_messages,
                                 ReplayVisitor& visitor) noexcept {
  ReplayResult result;
  result.next_seq = begin;
  if (begin > end) return result;
  if (max_messages == 0) {
    result.status = ReplayStatus::kLimit;
    return result;
  }
  const std::uint64_t after_end = end == std::numeric_limits<std::uint64_t>::max() ? end : end + 1;
  if (stream_->last_out < begin) {
    result.next_seq = after_end;
    return result;
  }
  const std::uint32_t id = stream_->id;
  const std::uint64_t from = std::max<std::uint64_t>(stream_->start_for(begin), 1);
  std::uint64_t last =
      0;  // highest seq seen (delivered or before begin): later lower seqs are not replayable
  bool limit = false;
  bool stopped = false;
  std::size_t delivered = 0;
  std::uint64_t next = begin;
  auto visit = [&](const StoredMessage& m) noexcept -> bool {
    StreamHeader h;
    if (!StreamHeader::read(m.bytes, h) || h.stream != id) return true;
    if (h.kind != StreamHeader::kOutbound) return true;
    if (h.value <= last) return true;  // not replayable (a lower seq after a higher one)
    last = h.value;
    if (h.value < begin) return true;
    if (h.value > end || h.value > stream_->last_out) return false;
    if (delivered == max_messages) {
      limit = true;
      next = h.value;
      return false;
    }
    StoredMessage out;
    out.seq = h.value;
    out.timestamp_ns = m.timestamp_ns;
    out.flags = m.flags;
    out.bytes = m.bytes.subspan(StreamHeader::kSize);
    ++delivered;
    next = h.value + 1;
    if (!visitor.on_message(out)) {
      stopped = true;
      return false;
    }
    return true;
  };
  ReplayFunction<decltype(visit)> v(visit);
  const ReplayResult r =
      owner_.journal_->replay(from, owner_.last_record_, std::numeric_limits<std::size_t>::max(), v);
  result.delivered = delivered;
  result.corrupt = r.corrupt;
  result.unavailable_segments = r.unavailable_segments;
  if (limit) {
    result.status = ReplayStatus::kLimit;
    result.next_seq = next;
  } else if (stopped) {
    result.status = ReplayStatus::kStopped;
    result.next_seq = next;
  } else if (r.status == ReplayStatus::kIoError) {
    result.status = ReplayStatus::kIoError;
    result.next_seq = next;
  } else {
    result.status = ReplayStatus::kComplete;
    result.next_seq = after_end;
  }
  return result;
}

StoreStatus SharedStore::flush() noexcept {
  StoreStatus status = owner_.journal_->flush();
  if (const StoreStatus s = seqnums_->flush(); s != StoreStatus::kOk) status = s;
  return status;
}

StoreStats SharedStore::stats() const noexcept {
  StoreStats s;
  s.outbound.appends = stream_->appends;
  s.outbound.bytes = stream_->bytes;
  s.outbound.epoch = stream_->epoch;
  s.outbound.last_seq = stream_->last_out;
  s.outbound.last_errno = owner_.journal_->stats().last_errno;
  return s;
}

}  // namespace hft::store
