#include "hft/audit/journal_audit.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>
#include <set>
#include <span>
#include <utility>

#include "hft/codec/encoder.hpp"
#include "hft/codec/parser.hpp"
#include "hft/codec/types.hpp"
#include "hft/store/crc32c.hpp"
#include "hft/store/format.hpp"
#include "hft/store/journal.hpp"
#include "hft/store/journal_reader.hpp"
#include "hft/store/shared_journal.hpp"

namespace hft::audit {

namespace {

constexpr std::uint64_t kNoEpoch = UINT64_MAX;

std::string errno_text(int err) { return std::strerror(err); }

bool is_directory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// Same rule as the store: "<8..19 digits>.seg".
bool is_segment_name(std::string_view name, std::uint64_t* number = nullptr) {
  constexpr std::string_view kSuffix = ".seg";
  if (name.size() <= kSuffix.size() || !name.ends_with(kSuffix)) return false;
  const std::string_view digits = name.substr(0, name.size() - kSuffix.size());
  if (digits.size() < 8 || digits.size() > 19) return false;
  std::uint64_t v = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  if (number != nullptr) *number = v;
  return true;
}

bool has_segments(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return false;
  bool found = false;
  while (dirent* e = ::readdir(d)) {
    if (is_segment_name(e->d_name)) {
      found = true;
      break;
    }
  }
  ::closedir(d);
  return found;
}

std::string_view find_msg_type(std::string_view bytes) noexcept {
  const std::size_t p = bytes.find("\x01" "35=");
  if (p == std::string_view::npos) return {};
  const std::size_t v = p + 4;
  const std::size_t e = bytes.find(codec::kSoh, v);
  return bytes.substr(v, (e == std::string_view::npos ? bytes.size() : e) - v);
}

std::uint64_t file_size(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
}

/// What is wrong with the record at `offset` of `path`, found again by hand
/// because the reader only says "corrupt".
struct Corruption {
  std::string file;
  std::uint64_t segment = 0;
  std::size_t offset = 0;
  std::uint64_t seq = 0;
  std::int64_t timestamp_ns = 0;
  std::string reason;
  [[nodiscard]] std::string line() const { return file + "@" + std::to_string(offset) + ": " + reason; }
};

Corruption diagnose(const std::string& file, std::size_t offset) {
  Corruption c;
  c.file = file;
  c.offset = offset;
  const std::size_t slash = file.rfind('/');
  is_segment_name(std::string_view(file).substr(slash == std::string::npos ? 0 : slash + 1), &c.segment);
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    c.reason = "cannot open the segment file: " + errno_text(errno);
    return c;
  }
  struct stat st {};
  ::fstat(fd, &st);
  const auto size = static_cast<std::size_t>(st.st_size);
  if (offset < store::kSegmentHeaderSize) {
    c.reason = "cannot map the segment file";
    ::close(fd);
    return c;
  }
  const std::size_t end_limit = size < store::kSlotSize ? 0 : size - store::kSlotSize;
  store::RecordHeader h{};
  if (offset + store::kRecordHeaderSize > end_limit ||
      ::pread(fd, &h, sizeof(h), static_cast<off_t>(offset)) != static_cast<ssize_t>(sizeof(h))) {
    c.reason = "record header runs past the end of the segment";
    ::close(fd);
    return c;
  }
  c.seq = h.seq;
  c.timestamp_ns = h.timestamp_ns;
  if (h.size < store::kRecordHeaderSize) {
    c.reason = "record length " + std::to_string(h.size) + " is shorter than the 32-byte record header";
  } else if (h.gap > h.size - store::kRecordHeaderSize) {
    c.reason = "record gap " + std::to_string(h.gap) + " exceeds the record length " + std::to_string(h.size);
  } else if (h.size > end_limit - offset) {
    c.reason = "record length " + std::to_string(h.size) + " runs past the end of the segment (" +
               std::to_string(end_limit - offset) + " bytes left)";
  } else {
    std::string rec(h.size, '\0');
    if (::pread(fd, rec.data(), rec.size(), static_cast<off_t>(offset)) != static_cast<ssize_t>(rec.size())) {
      c.reason = "cannot read the record: " + errno_text(errno);
    } else {
      const char* payload = rec.data() + store::kRecordHeaderSize + h.gap;
      std::uint32_t crc = store::crc32c(payload, h.size - store::kRecordHeaderSize - h.gap);
      crc = store::crc32c_extend(crc, rec.data() + 8, store::kRecordHeaderSize - 8);
      crc = store::crc32c_extend(crc, &h.size, sizeof(h.size));
      char text[96];
      if (crc != h.crc) {
        std::snprintf(text, sizeof text, "record CRC-32C mismatch (stored 0x%08" PRIx32 ", computed 0x%08" PRIx32 ")",
                      h.crc, crc);
      } else {
        std::snprintf(text, sizeof text, "record failed the reader's checks");
      }
      c.reason = text;
    }
  }
  ::close(fd);
  return c;
}

/// A JournalReader plus what the records themselves say about epochs. Of a
/// stream source, it reads the whole shared journal and yields only the
/// stream's messages of the source's direction, with the stream's epochs.
class Cursor {
 public:
  enum class Step : std::int8_t { kRecord, kEnd, kCorrupt };

  Cursor(JournalSource source, store::JournalReader reader)
      : source_(std::move(source)), reader_(std::move(reader)) {
    rec_.direction = source_.direction;
    if (source_.stream != 0) epoch_ = 1;  // a stream's first epoch has no kEpochStart record
  }

  Step next() {
    for (;;) {
      store::RecordView v;
      switch (reader_.next(v)) {
        case store::JournalReader::Next::kEnd:
          return Step::kEnd;
        case store::JournalReader::Next::kCorrupt: {
          ++read_;
          const std::string where = reader_.where();
          const std::size_t at = where.rfind('@');
          std::size_t offset = 0;
          if (at != std::string::npos) offset = std::strtoull(where.c_str() + at + 1, nullptr, 10);
          corruption_ = diagnose(where.substr(0, at), offset);
          return Step::kCorrupt;
        }
        case store::JournalReader::Next::kRecord:
          ++read_;
          break;
      }
      if (source_.stream != 0) {
        if (!stream_record(v)) continue;
        return Step::kRecord;
      }
      fill(v);
      new_epoch_ = false;
      if (v.control()) {
        rec_.msg_type = {};
        if ((v.flags & store::kRecordSegmentStart) != 0 &&
            v.bytes.size() == sizeof(store::SegmentStartPayload)) {
          store::SegmentStartPayload p;
          std::memcpy(&p, v.bytes.data(), sizeof(p));
          new_epoch_ = (v.flags & store::kRecordEpochStart) != 0 || p.epoch != epoch_;
          epoch_ = p.epoch;
          epoch_created_ns_ = p.epoch_created_ns;
        }
      } else if (source_.shared) {
        store::StreamHeader h;
        if (store::StreamHeader::read(v.bytes, h)) {
          set_stream(v, h);
          rec_.msg_type = carries_message(h) ? find_msg_type(rec_.bytes) : std::string_view{};
        } else {
          rec_.msg_type = {};
        }
      } else {
        rec_.msg_type = find_msg_type(rec_.bytes);
      }
      rec_.epoch = epoch_ == kNoEpoch ? 0 : epoch_;
      return Step::kRecord;
    }
  }

  [[nodiscard]] const JournalRecord& record() const noexcept { return rec_; }
  [[nodiscard]] const Corruption& corruption() const noexcept { return corruption_; }
  [[nodiscard]] const JournalSource& source() const noexcept { return source_; }
  [[nodiscard]] const store::JournalReader& reader() const noexcept { return reader_; }
  /// The last record was a segment start that opens a new epoch (or changes
  /// it); of a stream, the first message after its name or a kEpochStart.
  [[nodiscard]] bool new_epoch() const noexcept { return new_epoch_; }
  [[nodiscard]] std::int64_t epoch_created_ns() const noexcept { return epoch_created_ns_; }
  /// Records the reader gave (data, control and corrupt), the stream's or not.
  [[nodiscard]] std::uint64_t records_read() const noexcept { return read_; }

 private:
  static bool carries_message(const store::StreamHeader& h) noexcept {
    return h.kind == store::StreamHeader::kOutbound || h.kind == store::StreamHeader::kInbound;
  }

  void fill(const store::RecordView& v) noexcept {
    rec_.journal = &source_.path;
    rec_.segment = v.segment;
    rec_.offset = v.offset;
    rec_.seq = v.seq;
    rec_.timestamp_ns = v.timestamp_ns;
    rec_.flags = v.flags;
    rec_.bytes = {v.bytes.data(), v.bytes.size()};
    rec_.stream = 0;
    rec_.stream_kind = 0;
    rec_.stream_value = 0;
  }

  void set_stream(const store::RecordView& v, const store::StreamHeader& h) noexcept {
    rec_.stream = h.stream;
    rec_.stream_kind = h.kind;
    rec_.stream_value = h.value;
    rec_.bytes = {v.bytes.data() + store::StreamHeader::kSize, v.bytes.size() - store::StreamHeader::kSize};
  }

  /// Whether `v` is a record to yield (then in rec_): a message of the
  /// source's stream and direction, or a control record of the shared
  /// journal (its segments' starts and seals, as the file has them; the
  /// stream's epoch). Follows the stream's epochs on the way. Other
  /// streams' records and records without a stream header are skipped here
  /// (an audit of the shared journal reports those).
  bool stream_record(const store::RecordView& v) {
    if (v.control()) {
      fill(v);
      rec_.msg_type = {};
      rec_.epoch = epoch_;
      new_epoch_ = false;
      return true;
    }
    store::StreamHeader h;
    if (!store::StreamHeader::read(v.bytes, h) || h.stream != source_.stream) return false;
    switch (h.kind) {
      case store::StreamHeader::kStreamName:
        pending_epoch_ = true;  // the stream's first epoch begins here
        epoch_created_ns_ = v.timestamp_ns;
        return false;
      case store::StreamHeader::kEpochStart: {
        epoch_ = h.value;
        const std::span<const char> body = v.bytes.subspan(store::StreamHeader::kSize);
        epoch_created_ns_ = 0;
        if (body.size() >= sizeof(epoch_created_ns_))
          std::memcpy(&epoch_created_ns_, body.data(), sizeof(epoch_created_ns_));
        pending_epoch_ = true;
        return false;
      }
      default:
        break;
    }
    const std::uint8_t wanted = source_.direction == JournalDirection::kInbound
                                    ? store::StreamHeader::kInbound
                                    : store::StreamHeader::kOutbound;
    if (h.kind != wanted) return false;
    fill(v);
    set_stream(v, h);
    rec_.seq = h.value;
    rec_.msg_type = find_msg_type(rec_.bytes);
    rec_.epoch = epoch_;
    new_epoch_ = pending_epoch_;
    pending_epoch_ = false;
    return true;
  }

  JournalSource source_;
  store::JournalReader reader_;
  JournalRecord rec_;
  Corruption corruption_;
  std::uint64_t epoch_ = kNoEpoch;
  std::int64_t epoch_created_ns_ = 0;
  bool new_epoch_ = false;
  bool pending_epoch_ = false;  ///< of a stream: an epoch began since its last message
  std::uint64_t read_ = 0;
};

Expected<std::vector<Cursor>> open_cursors(const std::vector<JournalSource>& sources) {
  std::vector<Cursor> cursors;
  cursors.reserve(sources.size());
  for (const JournalSource& s : sources) {
    auto reader = store::JournalReader::open(s.path);
    if (!reader) return reader.error();
    cursors.emplace_back(s, std::move(*reader));
  }
  return cursors;
}

/// Not a shared journal's stream name or epoch start (records without a message).
bool carries_message(const JournalRecord& r) noexcept {
  return r.stream == 0 || r.stream_kind == store::StreamHeader::kOutbound ||
         r.stream_kind == store::StreamHeader::kInbound;
}

void count_type(PerTypeCounts& counts, std::string_view msg_type) {
  if (auto it = counts.find(msg_type); it != counts.end()) ++it->second;
  else counts.emplace(std::string(msg_type), 1);
}

bool passes(const JournalRecord& r, const RecordFilter& f) {
  if (f.epoch && r.epoch != *f.epoch) return false;
  if (r.timestamp_ns < f.since_ns || r.timestamp_ns >= f.until_ns) return false;
  if (r.control()) return f.include_control;
  if (r.seq < f.from_seq || r.seq > f.to_seq) return false;
  if (!f.msg_types.empty() &&
      std::find(f.msg_types.begin(), f.msg_types.end(), r.msg_type) == f.msg_types.end())
    return false;
  return true;
}

}  // namespace

// ---- sources ------------------------------------------------------------------

std::string_view direction_label(JournalDirection direction) noexcept {
  switch (direction) {
    case JournalDirection::kOutbound:
      return "OUT";
    case JournalDirection::kInbound:
      return "IN";
    case JournalDirection::kJournal:
      break;
  }
  return "";
}

std::optional<DirectionSelect> parse_direction(std::string_view text) noexcept {
  if (text == "out" || text == "outbound") return DirectionSelect::kOutbound;
  if (text == "in" || text == "inbound") return DirectionSelect::kInbound;
  if (text == "both") return DirectionSelect::kBoth;
  return std::nullopt;
}

std::string segment_file(const std::string& journal, std::uint64_t segment) {
  char name[32];
  std::snprintf(name, sizeof name, "/%08llu.seg", static_cast<unsigned long long>(segment));
  return journal + name;
}

std::string source_label(const JournalSource& source) {
  std::string out = source.path;
  if (source.stream != 0) {
    out += " stream " + std::to_string(source.stream);
    if (!source.store.empty()) out += " (" + source.store + ")";
  } else if (source.shared) {
    out += " (shared journal)";
  }
  const std::string_view label = direction_label(source.direction);
  if (!label.empty()) {
    out += " (";
    out += label;
    out += ')';
  }
  return out;
}

namespace {

/// A shared journal (store::SharedJournal) begins with the record naming its
/// stream 1. Reads the first readable data record of `reader`.
bool is_shared_journal(store::JournalReader& reader) {
  store::RecordView v;
  for (;;) {
    switch (reader.next(v)) {
      case store::JournalReader::Next::kEnd:
        return false;
      case store::JournalReader::Next::kCorrupt:
        continue;
      case store::JournalReader::Next::kRecord:
        break;
    }
    if (v.control()) continue;
    store::StreamHeader h;
    return store::StreamHeader::read(v.bytes, h) && h.kind == store::StreamHeader::kStreamName &&
           h.stream == 1;
  }
}

/// The sources of the session directory `dir` (seqnums.dat only) in the
/// shared journal beside it: the stream named as the directory.
Expected<std::vector<JournalSource>> resolve_stream(const std::string& dir, DirectionSelect select) {
  std::string path = dir;
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  std::size_t slash = path.rfind('/');
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  if (name == "." || name == "..") {
    // The session's name is that of the directory itself.
    if (char* real = ::realpath(path.c_str(), nullptr)) {
      path = real;
      std::free(real);
      slash = path.rfind('/');
      name = path.substr(slash + 1);
    }
  }
  const std::string parent = slash == std::string::npos ? "." : path.substr(0, slash);
  const std::string journal = parent + "/shared-journal";
  if (!has_segments(journal))
    return Error{dir +
                 ": not a journal (no NNNNNNNN.seg segment files), not a session store (no outbound/ or "
                 "inbound/), and no shared journal at " +
                 journal + " (JournalLayout=shared)"};
  auto reader = store::JournalReader::open(journal);
  if (!reader) return reader.error();
  std::uint32_t stream = 0;
  store::RecordView v;
  for (;;) {
    const store::JournalReader::Next n = reader->next(v);
    if (n == store::JournalReader::Next::kEnd) break;
    if (n == store::JournalReader::Next::kCorrupt || v.control()) continue;  // the scan says what is corrupt
    store::StreamHeader h;
    if (!store::StreamHeader::read(v.bytes, h) || h.kind != store::StreamHeader::kStreamName) continue;
    const std::span<const char> body = v.bytes.subspan(store::StreamHeader::kSize);
    if (std::string_view(body.data(), body.size()) == name) {
      stream = h.stream;
      break;
    }
  }
  if (stream == 0)
    return Error{dir + ": the shared journal " + journal + " has no stream named \"" + name +
                 "\" (the session has not opened its store in it)"};
  std::vector<JournalSource> out;
  if (select != DirectionSelect::kInbound)
    out.push_back({journal, JournalDirection::kOutbound, stream, true, dir});
  if (select != DirectionSelect::kOutbound)
    out.push_back({journal, JournalDirection::kInbound, stream, true, dir});
  return out;
}

}  // namespace

Expected<std::vector<JournalSource>> resolve_journals(const std::string& dir, DirectionSelect select) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return Error{dir + ": cannot open: " + errno_text(errno)};
  if (!S_ISDIR(st.st_mode)) return Error{dir + ": not a directory (expected a journal or a session store directory)"};
  std::vector<JournalSource> out;
  if (has_segments(dir)) {
    out.push_back({dir, JournalDirection::kJournal});
  } else {
    const std::string ob = dir + "/outbound";
    const std::string ib = dir + "/inbound";
    const bool has_ob = is_directory(ob);
    const bool has_ib = is_directory(ib);
    if (!has_ob && !has_ib) {
      // A session of a shared journal (JournalLayout=shared) holds only seqnums.dat.
      if (::stat((dir + "/seqnums.dat").c_str(), &st) != 0)
        return Error{dir +
                     ": not a journal (no NNNNNNNN.seg segment files) and not a session store "
                     "(no outbound/ or inbound/)"};
      auto streams = resolve_stream(dir, select);
      if (!streams) return streams.error();
      out = std::move(*streams);
    } else {
      if (select != DirectionSelect::kInbound) {
        if (has_ob)
          out.push_back({ob, JournalDirection::kOutbound});
        else if (select == DirectionSelect::kOutbound)
          return Error{ob + ": no outbound journal in this store"};
      }
      if (select != DirectionSelect::kOutbound) {
        if (has_ib)
          out.push_back({ib, JournalDirection::kInbound});
        else if (select == DirectionSelect::kInbound)
          return Error{ib + ": no inbound journal in this store (inbound messages not journaled)"};
      }
    }
    for (const JournalSource& s : out) {
      if (!has_segments(s.path)) return Error{s.path + ": not a journal (no NNNNNNNN.seg segment files)"};
    }
  }
  // Checks every segment header now, so bad input is reported before any output.
  for (JournalSource& s : out) {
    auto reader = store::JournalReader::open(s.path);
    if (!reader) return reader.error();
    if (s.stream == 0) s.shared = is_shared_journal(*reader);
  }
  return out;
}

// ---- dictionaries ----------------------------------------------------------------

Expected<std::shared_ptr<const codec::Dictionary>> load_dictionary(const std::string& path,
                                                                   const std::string& app_path) {
  if (path.empty()) {
    if (!app_path.empty()) return Error{app_path + ": an application dictionary needs the FIXT.1.1 transport dictionary too"};
    return std::shared_ptr<const codec::Dictionary>();
  }
  auto dict = codec::Dictionary::load_file(path);
  if (!dict) return dict.error();
  if (app_path.empty()) return *dict;
  if ((*dict)->begin_string() != "FIXT.1.1")
    return Error{path + ": is " + (*dict)->begin_string() +
                 ", not a FIXT.1.1 transport dictionary; an application dictionary goes with FIXT.1.1"};
  auto app = codec::Dictionary::load_file(app_path);
  if (!app) return app.error();
  return codec::Dictionary::combine(**dict, **app);
}

std::shared_ptr<const codec::Dictionary> dictionary_for(const std::shared_ptr<const codec::Dictionary>& loaded,
                                                        std::string_view begin_string) {
  if (loaded) return loaded;
  codec::FixVersion version{};
  if (!codec::parse_begin_string(begin_string, version)) return nullptr;
  return codec::Dictionary::builtin(version);
}

// ---- time text -------------------------------------------------------------------

std::string format_utc_ns(std::int64_t epoch_ns) {
  std::int64_t sec = epoch_ns / 1'000'000'000;
  std::int64_t frac = epoch_ns % 1'000'000'000;
  if (frac < 0) {
    frac += 1'000'000'000;
    --sec;
  }
  const auto t = static_cast<std::time_t>(sec);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char out[48];
  const std::size_t n = std::strftime(out, sizeof out, "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(out + n, sizeof out - n, ".%09" PRId64 "Z", frac);
  return out;
}

bool parse_time(std::string_view text, std::int64_t& epoch_ns) noexcept {
  if (text.empty()) return false;
  if (std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    std::int64_t v = 0;
    if (!codec::parse_int(text, v)) return false;
    epoch_ns = v;
    return true;
  }
  if (text.size() >= 9 && text[8] == '-') return codec::parse_utc_timestamp(text, epoch_ns);
  // ISO 8601: YYYY-MM-DD[(T| )HH:MM:SS[.f]][Z]
  if (text.back() == 'Z') text.remove_suffix(1);
  auto digits = [&](std::size_t from, std::size_t n) {
    if (text.size() < from + n) return false;
    for (std::size_t i = from; i < from + n; ++i)
      if (text[i] < '0' || text[i] > '9') return false;
    return true;
  };
  if (text.size() < 10 || !digits(0, 4) || text[4] != '-' || !digits(5, 2) || text[7] != '-' || !digits(8, 2))
    return false;
  char fix[40];
  std::size_t n = 0;
  auto put = [&](std::string_view s) {
    std::memcpy(fix + n, s.data(), s.size());
    n += s.size();
  };
  put(text.substr(0, 4));
  put(text.substr(5, 2));
  put(text.substr(8, 2));
  if (text.size() == 10) {
    put("-00:00:00");
  } else {
    if ((text[10] != 'T' && text[10] != ' ') || text.size() < 19 || text.size() > 30) return false;
    put("-");
    put(text.substr(11));
  }
  return codec::parse_utc_timestamp({fix, n}, epoch_ns);
}

// ---- records ---------------------------------------------------------------------

bool JournalRecord::control() const noexcept { return (flags & store::kRecordControl) != 0; }

std::string JournalRecord::file() const { return segment_file(journal != nullptr ? *journal : std::string(), segment); }

Expected<ScanResult> scan_journals(const std::vector<JournalSource>& sources, const RecordFilter& filter,
                                   const std::function<bool(const JournalRecord&)>& visit) {
  auto opened = open_cursors(sources);
  if (!opened) return opened.error();
  std::vector<Cursor>& cursors = *opened;
  ScanResult result;
  std::vector<bool> ready(cursors.size(), false);
  auto advance = [&](std::size_t i) {
    ready[i] = false;
    for (;;) {
      const Cursor::Step step = cursors[i].next();
      if (step == Cursor::Step::kEnd) return;
      if (step == Cursor::Step::kCorrupt) {
        ++result.corrupt;
        result.corruptions.push_back(cursors[i].corruption().line());
        continue;
      }
      if (passes(cursors[i].record(), filter)) {
        ready[i] = true;
        return;
      }
    }
  };
  for (std::size_t i = 0; i < cursors.size(); ++i) advance(i);
  for (;;) {
    std::size_t best = cursors.size();
    for (std::size_t i = 0; i < cursors.size(); ++i) {
      if (ready[i] && (best == cursors.size() ||
                       cursors[i].record().timestamp_ns < cursors[best].record().timestamp_ns))
        best = i;
    }
    if (best == cursors.size()) break;
    ++result.delivered;
    if (!visit(cursors[best].record())) break;
    if (filter.limit != 0 && result.delivered >= filter.limit) break;
    advance(best);
  }
  return result;
}

// ---- stats -----------------------------------------------------------------------

namespace {

SizeDistribution distribution(std::vector<std::uint64_t> sizes) {
  SizeDistribution d;
  if (sizes.empty()) return d;
  std::sort(sizes.begin(), sizes.end());
  d.count = sizes.size();
  d.min = sizes.front();
  d.max = sizes.back();
  double sum = 0;
  for (std::uint64_t s : sizes) sum += static_cast<double>(s);
  d.mean = sum / static_cast<double>(sizes.size());
  // Nearest rank: the smallest size with at least q of the messages at or below it.
  auto rank = [&](double q) {
    auto r = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sizes.size())));
    return sizes[std::clamp<std::size_t>(r, 1, sizes.size()) - 1];
  };
  d.p50 = rank(0.50);
  d.p90 = rank(0.90);
  d.p99 = rank(0.99);
  std::uint64_t bound = 64;
  std::size_t i = 0;
  while (i < sizes.size()) {
    std::uint64_t n = 0;
    while (i < sizes.size() && sizes[i] <= bound) {
      ++n;
      ++i;
    }
    if (n != 0) d.buckets.emplace_back(bound, n);
    bound *= 2;
  }
  return d;
}

}  // namespace

// ---- repairs -----------------------------------------------------------------------

namespace {

struct SeqNumFacts {
  std::uint64_t epoch = 0;
  std::uint64_t next_sender = 0;
  std::uint64_t next_target = 0;
};

/// The current slot of a sequence-number file, read without mapping it for
/// writing (a tool may look at a read-only copy). Empty if missing or bad.
std::optional<SeqNumFacts> read_seqnums(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char file[store::kSeqNumFileSize];
  const ssize_t got = ::pread(fd, file, sizeof(file), 0);
  ::close(fd);
  if (got != static_cast<ssize_t>(sizeof(file))) return std::nullopt;
  store::SeqNumHeader h;
  std::memcpy(&h, file, sizeof(h));
  if (std::memcmp(h.magic, store::kSeqNumMagic, sizeof(h.magic)) != 0 ||
      store::crc32c(&h, offsetof(store::SeqNumHeader, header_crc)) != h.header_crc)
    return std::nullopt;
  std::optional<SeqNumFacts> best;
  std::uint64_t best_generation = 0;
  for (int i = 0; i < 2; ++i) {
    store::SeqNumSlot slot;
    std::memcpy(&slot, file + 64 + i * sizeof(slot), sizeof(slot));
    if (slot.generation == 0 || store::crc32c(&slot, offsetof(store::SeqNumSlot, crc)) != slot.crc) continue;
    if (!best || slot.generation > best_generation) {
      best = SeqNumFacts{slot.epoch, slot.next_sender_seq, slot.next_target_seq};
      best_generation = slot.generation;
    }
  }
  return best;
}

/// What the last segments of a journal say: is the last one sealed, and the
/// last indexed seq of the epoch it belongs to.
struct TailFacts {
  bool sealed = false;
  std::uint64_t epoch = 0;
  std::uint64_t last_seq = 0;
  std::string last_file;
};

TailFacts tail_facts(const std::string& journal) {
  TailFacts t;
  auto reader = store::JournalReader::open(journal);
  if (!reader || reader->segments().empty()) return t;
  const std::vector<std::uint64_t> segments = reader->segments();
  t.last_file = segment_file(journal, segments.back());
  for (std::size_t i = segments.size(); i-- > 0;) {
    reader->seek_segment(i);
    store::RecordView v;
    std::uint64_t epoch = 0, last = 0;
    bool opens_epoch = false, sealed = false;
    while (reader->next(v) == store::JournalReader::Next::kRecord && v.segment == segments[i]) {
      sealed = false;
      if (v.control()) {
        if ((v.flags & store::kRecordSegmentStart) != 0 &&
            v.bytes.size() == sizeof(store::SegmentStartPayload)) {
          store::SegmentStartPayload p;
          std::memcpy(&p, v.bytes.data(), sizeof(p));
          epoch = p.epoch;
          opens_epoch = (v.flags & store::kRecordEpochStart) != 0;
        }
        sealed = (v.flags & store::kRecordSegmentSeal) != 0;
      } else if ((v.flags & store::kRecordUnindexed) == 0) {
        last = std::max(last, v.seq);
      }
    }
    if (i + 1 == segments.size()) {
      t.sealed = sealed;
      t.epoch = epoch;
    } else if (epoch != t.epoch) {
      break;
    }
    if (last != 0) {
      t.last_seq = last;
      break;
    }
    if (opens_epoch) break;
  }
  return t;
}

/// What a shared journal holds of one stream's outbound messages: the
/// stream's current epoch and its last seq there (as SharedJournal's scan
/// finds them: a kEpochStart starts an epoch with no seq yet).
TailFacts stream_tail_facts(const std::string& journal, std::uint32_t stream) {
  TailFacts t;
  auto reader = store::JournalReader::open(journal);
  if (!reader) return t;
  t.epoch = 1;
  store::RecordView v;
  for (;;) {
    const store::JournalReader::Next n = reader->next(v);
    if (n == store::JournalReader::Next::kEnd) break;
    if (n == store::JournalReader::Next::kCorrupt || v.control()) continue;
    store::StreamHeader h;
    if (!store::StreamHeader::read(v.bytes, h) || h.stream != stream) continue;
    if (h.kind == store::StreamHeader::kEpochStart) {
      t.epoch = h.value;
      t.last_seq = 0;
    } else if (h.kind == store::StreamHeader::kOutbound) {
      t.last_seq = std::max(t.last_seq, h.value);
    }
  }
  return t;
}

bool mentions(const std::string& log, const std::string& path) {
  return log.find(path) != std::string::npos;
}

}  // namespace

namespace {

/// What the files of the journal at source.path show (repairs.log, .cut
/// and .lost files, a sealed last segment), appended to `out`; returns what
/// its last segments say (for the seqnums.dat check of a store's journal).
TailFacts journal_file_repairs(const JournalSource& source, std::vector<RepairFinding>& out) {
  auto add = [&](std::string file, std::string text) {
    out.push_back(RepairFinding{source.direction, std::move(file), std::move(text)});
  };
  const std::string log_path = source.path + "/" + store::kRepairLogName;
  std::string log;
  if (std::FILE* f = std::fopen(log_path.c_str(), "rb")) {
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) log.append(buf, n);
    std::fclose(f);
  }
  for (std::size_t pos = 0; pos < log.size();) {
    std::size_t end = log.find('\n', pos);
    if (end == std::string::npos) end = log.size();
    if (end > pos) add(log_path, log_path + ": " + log.substr(pos, end - pos));
    pos = end + 1;
  }
  if (DIR* d = ::opendir(source.path.c_str())) {
    std::vector<std::string> left;
    const std::string lost = std::string(".seg") + store::kLostSuffix;
    while (dirent* e = ::readdir(d)) {
      const std::string_view name = e->d_name;
      if (name.find(".seg.cut-") != std::string_view::npos || name.ends_with(lost)) left.emplace_back(name);
    }
    ::closedir(d);
    std::sort(left.begin(), left.end());
    for (const std::string& name : left) {
      const std::string path = source.path + "/" + name;
      if (mentions(log, path)) continue;
      add(path, path + ": " +
                    (name.ends_with(store::kLostSuffix) ? "a segment that lost its records"
                                                        : "bytes cut from a torn tail") +
                    ", left by a repair that " + store::kRepairLogName + " does not record");
    }
  }
  // Records a killed writer left in its write-behind buffers: the files
  // alone lack them until the journal is opened again.
  if (auto pending = store::pending_write_behind(source.path); !pending) {
    add(source.path, pending.error().message);
  } else {
    for (const store::PendingWriteBehind& p : *pending)
      add(p.buffer, p.buffer + ": holds records of " + p.segment + " (bytes " + std::to_string(p.from) +
                        ".." + std::to_string(p.to) +
                        ") that are not in the segment file yet: the journal's writer stopped before writing "
                        "them out; opening the journal (starting the engine) writes them back");
  }
  TailFacts tail = tail_facts(source.path);
  if (tail.sealed)
    add(tail.last_file,
        tail.last_file +
            ": the journal's last segment is sealed, but the segment written after it is missing: "
            "the journal stopped early");
  return tail;
}

/// An outbound journal (or stream) that ends, at `last`, before the next
/// sender seq of `store_dir`/seqnums.dat: appended to `out`.
void seqnums_repair(const JournalSource& source, const std::string& store_dir, const TailFacts& last,
                    std::vector<RepairFinding>& out) {
  const std::string journal =
      source.stream != 0 ? source.path + " stream " + std::to_string(source.stream) : source.path;
  const std::string path = store_dir + "/seqnums.dat";
  const std::optional<SeqNumFacts> seq = read_seqnums(path);
  if (!seq || seq->epoch != last.epoch || last.last_seq + 1 >= seq->next_sender) return;
  out.push_back(RepairFinding{
      source.direction, path,
      journal + ": ends at seq " + std::to_string(last.last_seq) + " of epoch " + std::to_string(last.epoch) +
          ", but " + path + " says next sender seq " + std::to_string(seq->next_sender) + ": seqs " +
          std::to_string(last.last_seq + 1) + ".." + std::to_string(seq->next_sender - 1) + " (" +
          std::to_string(seq->next_sender - 1 - last.last_seq) +
          " messages) are not in the journal: it stopped early"});
}

}  // namespace

std::vector<RepairFinding> find_repairs(const JournalSource& source, const std::string& store_dir) {
  std::vector<RepairFinding> out;
  const TailFacts tail = journal_file_repairs(source, out);
  if (!store_dir.empty() && source.direction == JournalDirection::kOutbound) {
    // Of a stream, its own last seq: the shared journal's tail is every session's.
    seqnums_repair(source, store_dir,
                   source.stream != 0 ? stream_tail_facts(source.path, source.stream) : tail, out);
  }
  return out;
}

namespace {

/// The store directory `source` belongs to ("" for a bare journal).
std::string store_of(const JournalSource& source) {
  if (source.stream != 0) return source.store;
  if (source.direction == JournalDirection::kJournal) return {};
  const std::size_t slash = source.path.find_last_of('/');
  return slash == std::string::npos ? std::string(".") : source.path.substr(0, slash);
}

}  // namespace

Expected<std::vector<JournalSummary>> summarize_journals(const std::string& dir, DirectionSelect select) {
  auto sources = resolve_journals(dir, select);
  if (!sources) return sources.error();
  auto opened = open_cursors(*sources);
  if (!opened) return opened.error();
  std::vector<JournalSummary> out;
  for (Cursor& c : *opened) {
    JournalSummary s;
    s.source = c.source();
    std::map<std::uint64_t, std::size_t> seg_index;
    for (std::uint64_t number : c.reader().segments()) {
      SegmentSummary seg;
      seg.number = number;
      seg.path = segment_file(s.source.path, number);
      seg.file_bytes = file_size(seg.path);
      s.file_bytes += seg.file_bytes;
      seg_index[number] = s.segments.size();
      s.segments.push_back(std::move(seg));
    }
    std::vector<std::uint64_t> sizes;
    std::shared_ptr<const codec::Dictionary> names;
    for (;;) {
      const Cursor::Step step = c.next();
      if (step == Cursor::Step::kEnd) break;
      if (step == Cursor::Step::kCorrupt) {
        ++s.corrupt;
        s.corruptions.push_back(c.corruption().line());
        if (auto it = seg_index.find(c.corruption().segment); it != seg_index.end())
          s.segments[it->second].corrupt = true;
        continue;
      }
      const JournalRecord& r = c.record();
      SegmentSummary* seg = nullptr;
      if (auto it = seg_index.find(r.segment); it != seg_index.end()) seg = &s.segments[it->second];
      if (c.new_epoch() || (!r.control() && s.epochs.empty())) {
        EpochSummary e;
        e.epoch = r.epoch;
        e.created_ns = c.epoch_created_ns();
        s.epochs.push_back(e);
      }
      if (r.control()) {
        ++s.control_records;
        if (seg != nullptr) {
          ++seg->control_records;
          if ((r.flags & store::kRecordSegmentSeal) != 0) seg->sealed = true;
        }
        continue;
      }
      ++s.records;
      s.payload_bytes += r.bytes.size();
      sizes.push_back(r.bytes.size());
      if ((r.flags & store::kRecordUnindexed) != 0) ++s.unindexed;
      if (s.records == 1) {
        s.first_seq = r.seq;
        s.first_ns = r.timestamp_ns;
        if (r.bytes.starts_with("8=")) s.begin_string = std::string(r.bytes.substr(2, r.bytes.find(codec::kSoh) - 2));
      }
      s.last_seq = r.seq;
      s.last_ns = r.timestamp_ns;
      if (carries_message(r)) count_type(s.per_type, r.msg_type);
      EpochSummary& e = s.epochs.back();
      if (e.records++ == 0) {
        e.first_seq = r.seq;
        e.first_ns = r.timestamp_ns;
      }
      e.last_seq = r.seq;
      e.last_ns = r.timestamp_ns;
      if (seg != nullptr) {
        if (seg->records++ == 0) seg->first_seq = r.seq;
        seg->last_seq = r.seq;
      }
    }
    // Epoch entries opened by a start record but holding no message stay:
    // a reset with no traffic after it is still an epoch.
    if (s.records >= 2 && s.last_ns > s.first_ns)
      s.messages_per_second =
          static_cast<double>(s.records - 1) * 1e9 / static_cast<double>(s.last_ns - s.first_ns);
    s.message_sizes = distribution(std::move(sizes));
    s.repairs = find_repairs(s.source, store_of(s.source));
    out.push_back(std::move(s));
  }
  return out;
}

// ---- audit -----------------------------------------------------------------------

std::string_view to_string(AuditCheck check) noexcept {
  switch (check) {
    case AuditCheck::kRecord:
      return "record";
    case AuditCheck::kStream:
      return "stream";
    case AuditCheck::kFixFraming:
      return "fix-framing";
    case AuditCheck::kParse:
      return "parse";
    case AuditCheck::kBeginString:
      return "begin-string";
    case AuditCheck::kMsgSeqNum:
      return "msg-seq-num";
    case AuditCheck::kValidation:
      return "validation";
    case AuditCheck::kSequence:
      return "sequence";
    case AuditCheck::kCount:
      return "count";
    case AuditCheck::kRepair:
      return "repair";
  }
  return "unknown";
}

std::string AuditFailure::describe() const {
  std::string out;
  if (!file.empty()) {
    out += file;
    out += '@';
    out += std::to_string(offset);
    if (seq != 0) {
      out += " seq ";
      out += std::to_string(seq);
    }
    if (!msg_type.empty()) {
      out += " 35=";
      out += msg_type;
    }
    out += ": ";
  }
  out += to_string(check);
  out += ": ";
  out += reason;
  return out;
}

namespace {

/// What the sequence check needs from a parsed message.
struct MessageFacts {
  bool parsed = false;
  std::string_view msg_type;
  bool poss_dup = false;
  bool gap_fill = false;
  bool reset_seq_num = false;
  std::optional<std::uint64_t> new_seq_no;
};

/// What the auditors of one audit share: the parse view (allocated once,
/// reused for every message) and the built-in dictionaries looked up.
struct AuditTools {
  codec::MessageView view;
  std::map<std::string, std::shared_ptr<const codec::Dictionary>, std::less<>> builtins;
};

/// Audits journals one after the other (audit(), or begin(), corrupt() and
/// record() per record, end()), each into a JournalAudit of `report`.
class Auditor {
 public:
  /// `tools`: shared with other auditors (which must not run inside this
  /// one's calls); null: its own.
  Auditor(const AuditOptions& options, AuditReport& report, AuditTools* tools = nullptr)
      : options_(options), report_(report) {
    if (tools == nullptr) {
      own_tools_ = std::make_unique<AuditTools>();
      tools = own_tools_.get();
    }
    tools_ = tools;
    expected_begin_ = options.begin_string;
  }

  void audit(Cursor& cursor) {
    begin(cursor.source(), cursor.reader().segments().size());
    for (;;) {
      const Cursor::Step step = cursor.next();
      if (step == Cursor::Step::kEnd) break;
      if (step == Cursor::Step::kCorrupt) {
        corrupt(cursor.corruption());
        continue;
      }
      record(cursor.record(), cursor.new_epoch());
    }
    end();
  }

  /// Starts the audit of `source`, a journal of `segments` segment files.
  void begin(const JournalSource& source, std::uint64_t segments) {
    journal_audit_ = JournalAudit{};
    journal_audit_.source = source;
    journal_audit_.segments = segments;
    journal_ = &journal_audit_;
    seg_ = ~std::uint64_t{0};
    epoch_ = kNoEpoch;
    next_.reset();
    epoch_opened_ = false;
    last_record_ = 0;
  }

  /// A record that failed its length/CRC check (the rest of its segment is lost).
  void corrupt(const Corruption& c) {
    // Both directions of a session read the same shared journal: its
    // corrupt record is one failure.
    if (ignore_corruptions_ || (journal_->source.shared && !corruptions_.insert(c.line()).second)) return;
    AuditFailure f;
    f.check = AuditCheck::kRecord;
    f.direction = journal_->source.direction;
    f.file = c.file;
    f.segment = c.segment;
    f.offset = c.offset;
    f.seq = c.seq;
    f.epoch = epoch_ == kNoEpoch ? 0 : epoch_;
    f.timestamp_ns = c.timestamp_ns;
    f.reason = c.reason + "; the rest of the segment is not readable";
    fail(std::move(f));
    seg_ = ~std::uint64_t{0};  // the next segment starts afresh
  }

  /// The next record of the journal; `new_epoch` as Cursor::new_epoch().
  void record(const JournalRecord& r, bool new_epoch) {
    if (r.segment != seg_) begin_segment(r);
    if (r.control()) {
      // A stream's are the shared journal's: audited with it.
      if (journal_->source.stream == 0) on_control(r, new_epoch);
    } else if (journal_->source.stream != 0) {
      on_stream_message(r, new_epoch);
    } else if (journal_->source.shared) {
      on_shared_record(r);
    } else {
      on_message(r);
    }
    ++seg_records_;
  }

  /// Ends the journal's audit: its JournalAudit goes into the report.
  void end() {
    report_.journals.push_back(std::move(journal_audit_));
    journal_ = nullptr;
  }

  /// With options.begin_string empty, the BeginString expected of this
  /// auditor's messages is `leader`'s (the outbound auditor of the same
  /// session, run alongside: audit_journal() audits the outbound journal
  /// first) once it has one, else that of its own first message: a guess
  /// (begin_string_guessed()) until the leader's is known.
  void follow_begin_string(const Auditor* leader) noexcept { leader_ = leader; }
  [[nodiscard]] const std::string& expected_begin_string() const noexcept { return expected_begin_; }
  [[nodiscard]] bool begin_string_guessed() const noexcept { return guessed_begin_; }
  void expect_begin_string(std::string begin_string) { expected_begin_ = std::move(begin_string); }
  /// Corrupt records are another auditor's to report (ignored here).
  void ignore_corruptions() noexcept { ignore_corruptions_ = true; }

 private:
  void fail(AuditFailure f) {
    ++report_.failure_count;
    if (journal_ != nullptr) ++journal_->failures;
    report_.ok = false;
    if (report_.failures.size() < options_.max_failures) report_.failures.push_back(std::move(f));
  }

  void fail_at(const JournalRecord& r, AuditCheck check, std::string reason) {
    AuditFailure f;
    f.check = check;
    f.direction = r.direction;
    f.file = r.file();
    f.segment = r.segment;
    f.offset = r.offset;
    f.seq = r.seq;
    f.epoch = r.epoch;
    f.timestamp_ns = r.timestamp_ns;
    f.msg_type = std::string(r.msg_type);
    f.reason = std::move(reason);
    fail(std::move(f));
  }

  void begin_segment(const JournalRecord& r) {
    seg_ = r.segment;
    seg_records_ = 0;
    seg_indexed_ = 0;
    seg_last_indexed_ = 0;
    sealed_ = false;
  }

  void on_control(const JournalRecord& r, bool new_epoch) {
    ++journal_->control_records;
    if (sealed_) {
      fail_at(r, AuditCheck::kRecord, "control record after the segment's seal record");
      return;
    }
    if ((r.flags & store::kRecordSegmentStart) != 0) {
      if (seg_records_ != 0) fail_at(r, AuditCheck::kRecord, "segment start record in the middle of a segment");
      if (r.bytes.size() != sizeof(store::SegmentStartPayload)) {
        fail_at(r, AuditCheck::kRecord,
                "segment start record of " + std::to_string(r.bytes.size()) + " bytes, expected 16");
        return;
      }
      if (epoch_ != kNoEpoch && r.epoch < epoch_) {
        fail_at(r, AuditCheck::kRecord,
                "epoch goes back from " + std::to_string(epoch_) + " to " + std::to_string(r.epoch));
      }
      if (new_epoch || epoch_ == kNoEpoch) {
        ++journal_->epochs;
        epoch_ = r.epoch;
        next_.reset();
        // Only a marked epoch start promises seq 1 next: a journal whose
        // older segments were removed by retention starts mid-epoch.
        epoch_opened_ = (r.flags & store::kRecordEpochStart) != 0;
      }
      return;
    }
    if ((r.flags & store::kRecordSegmentSeal) != 0) {
      sealed_ = true;
      if (r.bytes.size() != sizeof(store::SegmentSealPayload)) {
        fail_at(r, AuditCheck::kRecord,
                "seal record of " + std::to_string(r.bytes.size()) + " bytes, expected 16");
        return;
      }
      store::SegmentSealPayload p;
      std::memcpy(&p, r.bytes.data(), sizeof(p));
      if (p.last_seq != seg_last_indexed_ || p.indexed_count != seg_indexed_) {
        fail_at(r, AuditCheck::kRecord,
                "seal record says last seq " + std::to_string(p.last_seq) + " and " +
                    std::to_string(p.indexed_count) + " indexed records; the segment has last seq " +
                    std::to_string(seg_last_indexed_) + " and " + std::to_string(seg_indexed_));
      }
      return;
    }
    char text[64];
    std::snprintf(text, sizeof text, "unknown control record (flags 0x%04x)", static_cast<unsigned>(r.flags));
    fail_at(r, AuditCheck::kRecord, text);
  }

  void on_message(const JournalRecord& r) {
    count(r);
    check_place(r);
    MessageFacts facts;
    check_message(r, facts);
    check_sequence(r, facts);
  }

  /// A message of a shared journal's stream: the shared journal's control
  /// records are not the stream's (they are audited with the shared
  /// journal), its epochs are.
  void on_stream_message(const JournalRecord& r, bool new_epoch) {
    if (new_epoch) {
      // The stream's name or a kEpochStart opens an epoch at seq 1, as a
      // journal's marked epoch start does.
      ++journal_->epochs;
      epoch_ = r.epoch;
      next_.reset();
      epoch_opened_ = true;
    }
    count(r);
    MessageFacts facts;
    check_message(r, facts);
    check_sequence(r, facts);
  }

  /// A record of a shared journal read whole: the record and its stream
  /// header; its message is audited with its session.
  void on_shared_record(const JournalRecord& r) {
    count(r);
    check_place(r);
    if (last_record_ != 0 && r.seq <= last_record_)
      fail_at(r, AuditCheck::kRecord,
              "record number " + std::to_string(r.seq) + " does not follow record " +
                  std::to_string(last_record_) + " (a shared journal numbers its records 1, 2, 3, ...)");
    last_record_ = std::max(last_record_, r.seq);
    if (r.stream == 0) {
      fail_at(r, AuditCheck::kStream,
              "no stream header (16 bytes: stream not 0, kind 1-4, version " +
                  std::to_string(store::StreamHeader::kVersion) + ")");
      return;
    }
    const std::uint64_t named = journal_->streams;
    if (r.stream_kind == store::StreamHeader::kStreamName) {
      if (r.stream != named + 1) {
        fail_at(r, AuditCheck::kStream,
                "names stream " + std::to_string(r.stream) + " where stream " + std::to_string(named + 1) +
                    " was next");
        return;
      }
      ++journal_->streams;
      return;
    }
    if (r.stream > named) {
      fail_at(r, AuditCheck::kStream,
              "stream " + std::to_string(r.stream) + " is not named by an earlier record (" +
                  std::to_string(named) + " streams named)");
      return;
    }
    if (r.stream_kind == store::StreamHeader::kEpochStart && r.bytes.size() != sizeof(std::int64_t))
      fail_at(r, AuditCheck::kStream,
              "epoch start of stream " + std::to_string(r.stream) + " holds " +
                  std::to_string(r.bytes.size()) + " bytes, expected 8 (its creation time)");
  }

  void count(const JournalRecord& r) {
    JournalAudit& j = *journal_;
    ++j.records;
    j.bytes += r.bytes.size();
    if (j.records == 1) {
      j.first_seq = r.seq;
      j.first_ns = r.timestamp_ns;
    }
    j.last_seq = r.seq;
    j.last_ns = r.timestamp_ns;
    if (carries_message(r)) count_type(j.per_type, r.msg_type);
    if (j.epochs == 0) j.epochs = 1;  // records before any start record: one unknown epoch
  }

  /// A data record in its segment: after the start record, before the seal.
  void check_place(const JournalRecord& r) {
    if ((r.flags & store::kRecordUnindexed) == 0) {
      ++seg_indexed_;
      seg_last_indexed_ = r.seq;
    }
    if (seg_records_ == 0) fail_at(r, AuditCheck::kRecord, "segment does not begin with a segment start record");
    if (sealed_) fail_at(r, AuditCheck::kRecord, "message record after the segment's seal record");
  }

  // Framing, parse, BeginString, MsgSeqNum, dictionary: the first that fails.
  void check_message(const JournalRecord& r, MessageFacts& facts) {
    const std::string_view bytes = r.bytes;
    codec::FrameOptions fo;
    fo.max_body_length = std::max<std::size_t>(bytes.size(), 1);
    const codec::FrameResult fr = codec::frame(bytes, fo);
    if (fr.status != codec::FrameStatus::kComplete) {
      fail_at(r, AuditCheck::kFixFraming, framing_reason(bytes, fr));
      return;
    }
    if (fr.size != bytes.size()) {
      fail_at(r, AuditCheck::kFixFraming,
              std::to_string(bytes.size() - fr.size) + " bytes follow the message's CheckSum in the record");
      return;
    }
    codec::MessageView& m = tools_->view;
    const codec::ParseStatus ps = m.parse(bytes);
    if (ps != codec::ParseStatus::kOk) {
      fail_at(r, AuditCheck::kParse, "message does not parse: " + std::string(codec::to_string(ps)));
      return;
    }
    facts.parsed = true;
    facts.msg_type = m.msg_type();
    bool flag = false;
    facts.poss_dup = m.get_bool(codec::tag::kPossDupFlag, flag) && flag;
    flag = false;
    facts.gap_fill = m.get_bool(codec::tag::kGapFillFlag, flag) && flag;
    flag = false;
    facts.reset_seq_num = m.get_bool(codec::tag::kResetSeqNumFlag, flag) && flag;
    std::uint64_t v = 0;
    if (m.get_uint(codec::tag::kNewSeqNo, v)) facts.new_seq_no = v;

    const std::string_view bs = m.get(codec::tag::kBeginString);
    if (report_.begin_string.empty()) report_.begin_string = std::string(bs);
    if (expected_begin_.empty()) {
      if (leader_ != nullptr && !leader_->expected_begin_.empty()) {
        expected_begin_ = leader_->expected_begin_;
      } else {
        expected_begin_ = std::string(bs);
        guessed_begin_ = leader_ != nullptr;
      }
    }
    if (bs != expected_begin_) {
      fail_at(r, AuditCheck::kBeginString,
              "BeginString is " + std::string(bs) + ", expected " + expected_begin_ +
                  (options_.begin_string.empty() ? " (the journal's first message)" : ""));
      return;
    }
    std::uint64_t seq = 0;
    if (!m.has(codec::tag::kMsgSeqNum)) {
      fail_at(r, AuditCheck::kMsgSeqNum, "MsgSeqNum (34) is missing");
      return;
    }
    if (!m.get_uint(codec::tag::kMsgSeqNum, seq)) {
      fail_at(r, AuditCheck::kMsgSeqNum,
              "MsgSeqNum (34) \"" + std::string(m.get(codec::tag::kMsgSeqNum)) + "\" is not a number");
      return;
    }
    if (seq != r.seq) {
      fail_at(r, AuditCheck::kMsgSeqNum,
              "MsgSeqNum (34) is " + std::to_string(seq) + " but the record's seq is " + std::to_string(r.seq));
      return;
    }
    if (!options_.validate) return;
    const codec::Dictionary* dict = dictionary(bs);
    if (dict == nullptr) return;  // a BeginString without a built-in dictionary: nothing to check against
    ++journal_->validated;
    const codec::ValidationOptions vo = options_.validation ? *options_.validation : default_validation();
    const codec::ValidationResult vr = codec::Validator(*dict, vo).validate(m);
    if (!vr.ok()) {
      std::string reason(vr.text);
      reason += " (373=" + std::to_string(static_cast<int>(vr.reason));
      if (vr.ref_tag != 0) reason += ", 371=" + std::to_string(vr.ref_tag);
      reason += ")";
      if (vr.failure == codec::ValidationFailure::kGarbled) reason += "; QuickFIX would drop it as garbled";
      if (vr.failure == codec::ValidationFailure::kWrongBeginString)
        reason += "; the dictionary is " + dict->begin_string();
      fail_at(r, AuditCheck::kValidation, std::move(reason));
    }
  }

  static std::string framing_reason(std::string_view bytes, const codec::FrameResult& fr) {
    if (fr.status == codec::FrameStatus::kNeedMore)
      return "message is truncated: BodyLength (9) runs past the end of the record's " +
             std::to_string(bytes.size()) + " bytes";
    switch (fr.error) {
      case codec::FrameError::kBadCheckSum: {
        const std::size_t at = bytes.rfind("\x01" "10=");
        if (at != std::string_view::npos && at + 8 <= bytes.size()) {
          const unsigned sum = codec::checksum(bytes.substr(0, at + 1));
          char text[96];
          std::snprintf(text, sizeof text, "CheckSum (10) is %.*s but the bytes sum to %03u",
                        static_cast<int>(std::min<std::size_t>(bytes.size() - at - 4, 3)), bytes.data() + at + 4, sum);
          return text;
        }
        return "CheckSum (10) is malformed";
      }
      case codec::FrameError::kNoCheckSum: {
        // Tell the declared BodyLength from the actual one.
        const std::size_t nine = bytes.find("\x01" "9=");
        const std::size_t body = nine == std::string_view::npos ? nine : bytes.find(codec::kSoh, nine + 1);
        const std::size_t ten = bytes.rfind("\x01" "10=");
        if (body != std::string_view::npos && ten != std::string_view::npos && ten > body) {
          return "BodyLength (9) is " + std::string(bytes.substr(nine + 3, body - nine - 3)) + " but the body is " +
                 std::to_string(ten + 1 - (body + 1)) + " bytes";
        }
        return "no CheckSum (10) at the end of the declared body";
      }
      default:
        return std::string(codec::to_string(fr.error));
    }
  }

  [[nodiscard]] codec::ValidationOptions default_validation() const noexcept {
    codec::ValidationOptions vo;
    if (!options_.dictionary) {
      // The built-in dictionaries only know session messages: application
      // messages and their fields are not theirs to judge.
      vo.check_unknown_msg_type = false;
      vo.allow_unknown_message_fields = true;
      vo.check_user_defined_fields = false;
    }
    return vo;
  }

  const codec::Dictionary* dictionary(std::string_view begin_string) {
    if (options_.dictionary) return options_.dictionary.get();
    auto& builtins = tools_->builtins;
    auto it = builtins.find(begin_string);
    if (it == builtins.end())
      it = builtins.emplace(std::string(begin_string), dictionary_for(nullptr, begin_string)).first;
    return it->second.get();
  }

  void gap(const JournalRecord& r, std::uint64_t first, std::uint64_t last, const std::string& why) {
    journal_->missing_seqs += last - first + 1;
    if (options_.allow_gaps) return;
    std::string text = first == last ? "seq " + std::to_string(first) + " is missing"
                                     : "seqs " + std::to_string(first) + ".." + std::to_string(last) + " are missing";
    text += " (" + why + ")";
    fail_at(r, AuditCheck::kSequence, std::move(text));
  }

  void check_sequence(const JournalRecord& r, const MessageFacts& f) {
    const std::uint64_t s = r.seq;
    const bool seq_reset = f.parsed && f.msg_type == "4";
    const bool reset_mode = seq_reset && !f.gap_fill;
    const bool logon_reset = f.parsed && f.msg_type == "A" && f.reset_seq_num && s == 1;
    auto epoch_text = [&] { return "epoch " + std::to_string(r.epoch); };
    if (!next_) {
      if (epoch_opened_ && s != 1 && !reset_mode) gap(r, 1, s - 1, epoch_text() + " begins at seq " + std::to_string(s));
    } else if (s > *next_) {
      gap(r, *next_, s - 1, "expected " + std::to_string(*next_) + " in " + epoch_text());
    } else if (s < *next_) {
      if (f.poss_dup) {
        ++journal_->duplicates;  // a resend of a seq already seen: moves nothing ...
        // ... unless it is a gap fill reaching past what was seen: a receiver
        // that journaled a message and died before processing it (the Logon
        // of a restart) takes the resend of that seq, and its NewSeqNo covers
        // what came after (the new Logon, which is never journaled itself).
        if (seq_reset && f.gap_fill && f.new_seq_no && *f.new_seq_no > *next_) {
          next_ = *f.new_seq_no;
          ++journal_->sequence_resets;
        }
        return;
      }
      if (!reset_mode && !logon_reset) {
        fail_at(r, AuditCheck::kSequence,
                "seq goes back to " + std::to_string(s) + " (expected " + std::to_string(*next_) + " in " + epoch_text() +
                    "), without PossDupFlag");
      }
    }
    if (seq_reset && f.new_seq_no) {
      if (*f.new_seq_no > s || reset_mode) {
        next_ = *f.new_seq_no;
        ++journal_->sequence_resets;
        return;
      }
      fail_at(r, AuditCheck::kSequence,
              "SequenceReset NewSeqNo (36) " + std::to_string(*f.new_seq_no) + " is not above its own seq");
    }
    next_ = s + 1;
  }

  const AuditOptions& options_;
  AuditReport& report_;
  std::unique_ptr<AuditTools> own_tools_;
  AuditTools* tools_ = nullptr;
  std::string expected_begin_;
  const Auditor* leader_ = nullptr;
  bool guessed_begin_ = false;
  bool ignore_corruptions_ = false;
  JournalAudit journal_audit_;  ///< of the journal being audited
  JournalAudit* journal_ = nullptr;
  // segment state
  std::uint64_t seg_ = 0;
  std::uint64_t seg_records_ = 0;
  std::uint32_t seg_indexed_ = 0;
  std::uint64_t seg_last_indexed_ = 0;
  bool sealed_ = false;
  // sequence state of the journal being audited
  std::uint64_t epoch_ = kNoEpoch;
  bool epoch_opened_ = false;
  std::optional<std::uint64_t> next_;
  // a shared journal read whole
  std::uint64_t last_record_ = 0;
  /// Corrupt records of shared journals reported ("FILE@OFFSET: reason").
  std::set<std::string> corruptions_;
};

/// Adds the repair `findings` of journal `j` to `report`, each once over the
/// report (`found`: a shared journal's findings are each of its streams').
void add_repairs(AuditReport& report, const AuditOptions& options, JournalAudit& j,
                 std::vector<RepairFinding> findings, std::set<std::pair<std::string, std::string>>& found) {
  for (RepairFinding& r : findings) {
    if (!found.emplace(r.file, r.text).second) continue;
    ++j.repairs;
    if (!options.accept_repairs) {
      AuditFailure f;
      f.check = AuditCheck::kRepair;
      f.direction = r.direction;
      f.reason = r.text + " (--accept-repairs to accept)";
      ++j.failures;
      ++report.failure_count;
      report.ok = false;
      if (report.failures.size() < options.max_failures) report.failures.push_back(std::move(f));
    }
    report.repairs.push_back(std::move(r));
  }
}

/// The report's totals over its journals, then the count check.
void sum_up(AuditReport& report, const AuditOptions& options, std::optional<std::uint64_t> expected_count) {
  bool first = true;
  for (const JournalAudit& j : report.journals) {
    report.segments += j.segments;
    report.records += j.records;
    report.control_records += j.control_records;
    report.bytes += j.bytes;
    report.missing_seqs += j.missing_seqs;
    for (const auto& [type, n] : j.per_type) report.per_type[type] += n;
    if (j.records == 0) continue;
    report.first_seq = first ? j.first_seq : std::min(report.first_seq, j.first_seq);
    report.last_seq = first ? j.last_seq : std::max(report.last_seq, j.last_seq);
    first = false;
  }
  if (expected_count && report.records != *expected_count) {
    AuditFailure f;
    f.check = AuditCheck::kCount;
    f.reason =
        "expected " + std::to_string(*expected_count) + " messages, found " + std::to_string(report.records);
    ++report.failure_count;
    report.ok = false;
    if (report.failures.size() < options.max_failures) report.failures.push_back(std::move(f));
  }
}

std::string dictionary_name(const AuditOptions& options) {
  return options.dictionary ? options.dictionary->version() : "built-in";
}

}  // namespace

Expected<AuditReport> audit_journal(const std::string& dir, const AuditOptions& options) {
  auto sources = resolve_journals(dir, options.direction);
  if (!sources) return sources.error();
  auto opened = open_cursors(*sources);
  if (!opened) return opened.error();
  AuditReport report;
  report.directory = dir;
  report.dictionary = dictionary_name(options);
  Auditor auditor(options, report);
  for (Cursor& c : *opened) auditor.audit(c);
  std::set<std::pair<std::string, std::string>> found;
  for (JournalAudit& j : report.journals)
    add_repairs(report, options, j, find_repairs(j.source, store_of(j.source)), found);
  sum_up(report, options, options.expected_count);
  return report;
}

// ---- every session of a shared journal ---------------------------------------------

namespace {

/// One stream of the shared journal during the pass: what the Cursor of
/// each of its directions would know (its epoch; per direction, whether an
/// epoch began since its last message), an Auditor per direction audited,
/// each into a report of its own (merged as audit_journal() orders them),
/// and what stream_tail_facts() would find of it.
struct StreamPass {
  static constexpr std::size_t kOut = 0, kIn = 1;
  std::uint32_t id = 0;
  bool named = false;
  std::string name;
  std::uint64_t epoch = 1;  // a stream's first epoch has no kEpochStart record
  bool pending[2] = {false, false};
  TailFacts tail;
  AuditReport part[2];
  std::unique_ptr<Auditor> auditor[2];
};

/// The report audit_journal(directory) gives, from the stream's auditors.
AuditReport session_report(StreamPass& s, const std::string& directory, const AuditOptions& options,
                           const std::vector<RepairFinding>& journal_findings) {
  AuditReport report;
  report.directory = directory;
  report.dictionary = dictionary_name(options);
  for (const std::size_t k : {StreamPass::kOut, StreamPass::kIn}) {
    if (!s.auditor[k]) continue;
    AuditReport& part = s.part[k];
    if (report.begin_string.empty()) report.begin_string = part.begin_string;
    report.ok = report.ok && part.ok;
    report.failure_count += part.failure_count;
    for (AuditFailure& f : part.failures) {
      if (report.failures.size() < options.max_failures) report.failures.push_back(std::move(f));
    }
    for (JournalAudit& j : part.journals) report.journals.push_back(std::move(j));
  }
  std::set<std::pair<std::string, std::string>> found;
  for (JournalAudit& j : report.journals) {
    std::vector<RepairFinding> findings = journal_findings;
    for (RepairFinding& r : findings) r.direction = j.source.direction;
    if (j.source.direction == JournalDirection::kOutbound)
      seqnums_repair(j.source, directory, s.tail, findings);
    add_repairs(report, options, j, std::move(findings), found);
  }
  sum_up(report, options, options.expected_count);
  return report;
}

}  // namespace

Expected<SharedJournalAudit> audit_shared_sessions(const std::string& shared_journal_dir,
                                                   const AuditOptions& options) {
  std::string path = shared_journal_dir;
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  auto sources = resolve_journals(path);
  if (!sources) return sources.error();
  if (sources->size() != 1 || (*sources)[0].direction != JournalDirection::kJournal || !(*sources)[0].shared)
    return Error{path +
                 ": not a shared journal (a journal whose first record names stream 1: "
                 "<FileStorePath>/shared-journal of JournalLayout=shared)"};
  const JournalSource whole = (*sources)[0];
  // Session directories sit beside the journal, as resolve_journals finds them.
  const std::size_t slash = path.rfind('/');
  const std::string parent = slash == std::string::npos ? "." : path.substr(0, slash);
  auto opened = open_cursors(*sources);
  if (!opened) return opened.error();
  Cursor& cursor = (*opened)[0];
  const std::uint64_t segments = cursor.reader().segments().size();

  SharedJournalAudit out;
  out.journal.directory = path;
  out.journal.dictionary = dictionary_name(options);
  AuditTools tools;
  Auditor journal(options, out.journal, &tools);
  journal.begin(whole, segments);

  const bool out_selected = options.direction != DirectionSelect::kInbound;
  const bool in_selected = options.direction != DirectionSelect::kOutbound;
  // A corrupt record is a failure of the first direction audited (the other
  // one reads past it too: one failure per session).
  const std::size_t reporter = out_selected ? StreamPass::kOut : StreamPass::kIn;
  std::map<std::uint32_t, std::unique_ptr<StreamPass>> streams;
  std::vector<Corruption> corruptions;  // so far: every session's audit meets them, named yet or not
  StreamPass* last = nullptr;
  auto stream = [&](std::uint32_t id) -> StreamPass& {
    if (last != nullptr && last->id == id) return *last;
    std::unique_ptr<StreamPass>& p = streams[id];
    if (!p) {
      p = std::make_unique<StreamPass>();
      p->id = id;
      p->tail.epoch = 1;
      for (const std::size_t k : {StreamPass::kOut, StreamPass::kIn}) {
        if (!(k == StreamPass::kOut ? out_selected : in_selected)) continue;
        p->auditor[k] = std::make_unique<Auditor>(options, p->part[k], &tools);
        p->auditor[k]->begin(
            {path,
             k == StreamPass::kOut ? JournalDirection::kOutbound : JournalDirection::kInbound,
             id,
             true,
             {}},
            segments);
      }
      if (out_selected && in_selected) {
        p->auditor[StreamPass::kIn]->follow_begin_string(p->auditor[StreamPass::kOut].get());
      }
      for (const Corruption& c : corruptions) p->auditor[reporter]->corrupt(c);
    }
    last = p.get();
    return *p;
  };

  for (;;) {
    const Cursor::Step step = cursor.next();
    if (step == Cursor::Step::kEnd) break;
    if (step == Cursor::Step::kCorrupt) {
      const Corruption& c = cursor.corruption();
      journal.corrupt(c);
      for (auto& [id, s] : streams) s->auditor[reporter]->corrupt(c);
      corruptions.push_back(c);
      continue;
    }
    const JournalRecord& r = cursor.record();
    journal.record(r, cursor.new_epoch());
    // Control records are the journal's; records without a stream header
    // belong to no session (the journal's stream check names them).
    if (r.control() || r.stream == 0) continue;
    StreamPass& s = stream(r.stream);
    switch (r.stream_kind) {
      case store::StreamHeader::kStreamName:
        if (!s.named) {
          s.named = true;
          s.name = std::string(r.bytes);
        }
        s.pending[StreamPass::kOut] = s.pending[StreamPass::kIn] = true;  // its first epoch begins here
        continue;
      case store::StreamHeader::kEpochStart:
        s.epoch = r.stream_value;
        s.pending[StreamPass::kOut] = s.pending[StreamPass::kIn] = true;
        s.tail.epoch = r.stream_value;
        s.tail.last_seq = 0;
        continue;
      default:
        break;
    }
    const std::size_t k =
        r.stream_kind == store::StreamHeader::kOutbound ? StreamPass::kOut : StreamPass::kIn;
    if (k == StreamPass::kOut) s.tail.last_seq = std::max(s.tail.last_seq, r.stream_value);
    if (!s.auditor[k]) continue;
    // The record as the stream's Cursor gives it.
    JournalRecord message = r;
    message.direction = k == StreamPass::kOut ? JournalDirection::kOutbound : JournalDirection::kInbound;
    message.seq = r.stream_value;
    message.epoch = s.epoch;
    const bool new_epoch = s.pending[k];
    s.pending[k] = false;
    s.auditor[k]->record(message, new_epoch);
  }
  out.passes = 1;
  out.records_read = cursor.records_read();

  journal.end();
  std::vector<RepairFinding> journal_findings;
  journal_file_repairs(whole, journal_findings);
  {
    std::set<std::pair<std::string, std::string>> found;
    add_repairs(out.journal, options, out.journal.journals.front(), journal_findings, found);
    sum_up(out.journal, options, std::nullopt);
  }
  out.ok = out.journal.ok;

  for (auto& [id, s] : streams) {
    if (!s->named) continue;  // no directory to name it by (the journal's stream check says so)
    const std::string directory = parent + "/" + s->name;
    for (std::unique_ptr<Auditor>& a : s->auditor) {
      if (a) a->end();
    }
    for (AuditReport& part : s->part) {
      for (JournalAudit& j : part.journals) j.source.store = directory;
    }
    if (out_selected && in_selected) {
      const Auditor& ob = *s->auditor[StreamPass::kOut];
      const Auditor& ib = *s->auditor[StreamPass::kIn];
      if (ib.begin_string_guessed() && !ob.expected_begin_string().empty() &&
          ob.expected_begin_string() != ib.expected_begin_string()) {
        // Its inbound messages were checked against the BeginString of the
        // first of them, which came before any outbound one and differs
        // from it: audit them again against the outbound one's.
        auto reader = store::JournalReader::open(path);
        if (!reader) return reader.error();
        Cursor again({path, JournalDirection::kInbound, id, true, directory}, std::move(*reader));
        AuditReport part;
        Auditor inbound(options, part, &tools);
        inbound.expect_begin_string(ob.expected_begin_string());
        inbound.ignore_corruptions();  // the outbound auditor reported them
        inbound.audit(again);
        s->part[StreamPass::kIn] = std::move(part);
        ++out.passes;
        out.records_read += again.records_read();
      }
    }
    SessionAudit session;
    session.stream = id;
    session.name = s->name;
    session.directory = directory;
    session.report = session_report(*s, directory, options, journal_findings);
    out.ok = out.ok && session.report.ok;
    out.sessions.push_back(std::move(session));
    s.reset();  // its auditors and their reports: memory of a thousand sessions
  }
  return out;
}

// ---- JSON --------------------------------------------------------------------------

namespace {

using Json = nlohmann::ordered_json;

std::string direction_name(JournalDirection d) {
  switch (d) {
    case JournalDirection::kOutbound:
      return "outbound";
    case JournalDirection::kInbound:
      return "inbound";
    case JournalDirection::kJournal:
      break;
  }
  return "journal";
}

Json per_type_json(const PerTypeCounts& per_type) {
  Json o = Json::object();
  for (const auto& [type, n] : per_type) o[type] = n;
  return o;
}

/// Of a shared journal's source only (the other layouts' JSON is unchanged).
void source_json(Json& o, const JournalSource& source) {
  if (!source.shared) return;
  o["shared"] = true;
  if (source.stream == 0) return;
  o["stream"] = source.stream;
  o["store"] = source.store;
}

Json repairs_json(const std::vector<RepairFinding>& repairs) {
  Json a = Json::array();
  for (const RepairFinding& r : repairs) {
    Json o;
    o["direction"] = direction_name(r.direction);
    o["file"] = r.file;
    o["text"] = r.text;
    a.push_back(std::move(o));
  }
  return a;
}

std::string dump(const Json& j, int indent) {
  // Message bytes may hold anything: replace invalid UTF-8 instead of throwing.
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

std::string to_json(const AuditReport& report, int indent) {
  Json j;
  j["ok"] = report.ok;
  j["directory"] = report.directory;
  j["dictionary"] = report.dictionary;
  j["begin_string"] = report.begin_string;
  j["segments"] = report.segments;
  j["records"] = report.records;
  j["control_records"] = report.control_records;
  j["bytes"] = report.bytes;
  j["first_seq"] = report.first_seq;
  j["last_seq"] = report.last_seq;
  j["missing_seqs"] = report.missing_seqs;
  j["per_type"] = per_type_json(report.per_type);
  Json journals = Json::array();
  for (const JournalAudit& a : report.journals) {
    Json o;
    o["path"] = a.source.path;
    o["direction"] = direction_name(a.source.direction);
    source_json(o, a.source);
    if (a.source.shared && a.source.stream == 0) o["streams"] = a.streams;
    o["segments"] = a.segments;
    o["records"] = a.records;
    o["control_records"] = a.control_records;
    o["bytes"] = a.bytes;
    o["epochs"] = a.epochs;
    o["first_seq"] = a.first_seq;
    o["last_seq"] = a.last_seq;
    o["first_time"] = a.records ? format_utc_ns(a.first_ns) : "";
    o["last_time"] = a.records ? format_utc_ns(a.last_ns) : "";
    o["missing_seqs"] = a.missing_seqs;
    o["duplicates"] = a.duplicates;
    o["sequence_resets"] = a.sequence_resets;
    o["validated"] = a.validated;
    o["failures"] = a.failures;
    o["repairs"] = a.repairs;
    o["per_type"] = per_type_json(a.per_type);
    journals.push_back(std::move(o));
  }
  j["journals"] = std::move(journals);
  j["failure_count"] = report.failure_count;
  Json failures = Json::array();
  for (const AuditFailure& f : report.failures) {
    Json o;
    o["check"] = std::string(to_string(f.check));
    o["direction"] = direction_name(f.direction);
    o["file"] = f.file;
    o["offset"] = f.offset;
    o["seq"] = f.seq;
    o["epoch"] = f.epoch;
    o["time"] = f.file.empty() ? "" : format_utc_ns(f.timestamp_ns);
    o["msg_type"] = f.msg_type;
    o["reason"] = f.reason;
    o["text"] = f.describe();
    failures.push_back(std::move(o));
  }
  j["failures"] = std::move(failures);
  j["repairs"] = repairs_json(report.repairs);
  return dump(j, indent);
}

std::string to_json(const SharedJournalAudit& audit, int indent) {
  Json o;
  o["ok"] = audit.ok;
  o["passes"] = audit.passes;
  o["records_read"] = audit.records_read;
  o["journal"] = Json::parse(to_json(audit.journal, -1));
  Json sessions = Json::array();
  for (const SessionAudit& s : audit.sessions) {
    Json e;
    e["stream"] = s.stream;
    e["name"] = s.name;
    e["directory"] = s.directory;
    e["report"] = Json::parse(to_json(s.report, -1));
    sessions.push_back(std::move(e));
  }
  o["sessions"] = std::move(sessions);
  return dump(o, indent);
}

std::string to_json(const std::vector<JournalSummary>& summaries, int indent) {
  Json all = Json::array();
  for (const JournalSummary& s : summaries) {
    Json o;
    o["path"] = s.source.path;
    o["direction"] = direction_name(s.source.direction);
    source_json(o, s.source);
    o["begin_string"] = s.begin_string;
    Json segs = Json::array();
    for (const SegmentSummary& g : s.segments) {
      Json x;
      x["number"] = g.number;
      x["path"] = g.path;
      x["file_bytes"] = g.file_bytes;
      x["records"] = g.records;
      x["control_records"] = g.control_records;
      x["sealed"] = g.sealed;
      x["corrupt"] = g.corrupt;
      x["first_seq"] = g.first_seq;
      x["last_seq"] = g.last_seq;
      segs.push_back(std::move(x));
    }
    o["segments"] = std::move(segs);
    o["records"] = s.records;
    o["control_records"] = s.control_records;
    o["payload_bytes"] = s.payload_bytes;
    o["file_bytes"] = s.file_bytes;
    o["unindexed"] = s.unindexed;
    o["corrupt"] = s.corrupt;
    o["corruptions"] = s.corruptions;
    o["repairs"] = repairs_json(s.repairs);
    Json epochs = Json::array();
    for (const EpochSummary& e : s.epochs) {
      Json x;
      x["epoch"] = e.epoch;
      x["created"] = format_utc_ns(e.created_ns);
      x["records"] = e.records;
      x["first_seq"] = e.first_seq;
      x["last_seq"] = e.last_seq;
      x["first_time"] = e.records ? format_utc_ns(e.first_ns) : "";
      x["last_time"] = e.records ? format_utc_ns(e.last_ns) : "";
      epochs.push_back(std::move(x));
    }
    o["epochs"] = std::move(epochs);
    o["first_seq"] = s.first_seq;
    o["last_seq"] = s.last_seq;
    o["first_time"] = s.records ? format_utc_ns(s.first_ns) : "";
    o["last_time"] = s.records ? format_utc_ns(s.last_ns) : "";
    o["span_seconds"] = s.records ? static_cast<double>(s.last_ns - s.first_ns) / 1e9 : 0.0;
    o["messages_per_second"] = s.messages_per_second;
    o["per_type"] = per_type_json(s.per_type);
    Json sizes;
    sizes["count"] = s.message_sizes.count;
    sizes["min"] = s.message_sizes.min;
    sizes["p50"] = s.message_sizes.p50;
    sizes["p90"] = s.message_sizes.p90;
    sizes["p99"] = s.message_sizes.p99;
    sizes["max"] = s.message_sizes.max;
    sizes["mean"] = s.message_sizes.mean;
    Json buckets = Json::array();
    for (const auto& [bound, n] : s.message_sizes.buckets) buckets.push_back(Json{{"le", bound}, {"count", n}});
    sizes["buckets"] = std::move(buckets);
    o["message_sizes"] = std::move(sizes);
    all.push_back(std::move(o));
  }
  return dump(all, indent);
}

}  // namespace hft::audit
