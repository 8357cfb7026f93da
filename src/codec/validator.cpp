// Validation in one pass over the parsed fields, reproducing the decisions of
// QuickFIX 1.15 (Message::setString + DataDictionary::validate) without its
// maps. The hot loop handles the common field (a body member of the message,
// first seen, with a value) with one dense lookup (FieldSet::position_of) and
// one 8-byte load (FieldSet::member_info: type, enum table, requiredness,
// group); header fields take a similar short path through
// Dictionary::tag_info. Everything else (repeats, empty values, undefined or
// misplaced tags) goes to general_field(), out of line. Requiredness is
// counted on first sight, with a bitset of member positions that also finds
// repeated tags.
//
// Before that pass, a clean-message path answers "valid" for the common
// message with one table lookup per field (detail::FastTables, compiled at
// dictionary load): section order, first occurrence (through the parser's
// index), value check, required fields as a 64-bit mask, groups walked by
// member position (the delimiter is position 0). It never rejects: at the
// first doubt it hands the message to the pass below, which finds the exact
// fault. It checks everything with every option on, so its "valid" holds
// whatever the options switch off.
//
// QuickFIX checks fields after sorting each section by tag, so when a message
// has several faults it reports the one on the smallest tag. Here the pass is
// in message order, and every fault gets a sort key (section, tag, position);
// the smallest key wins. Keys are only computed on faults, so a clean message
// pays nothing for this.

#include "hft/codec/validator.hpp"

#include <bit>
#include <cstring>
#include <limits>

#include "codec/validation_tables.hpp"

namespace hft::codec {

namespace {

constexpr int kUserDefinedMin = 5000;      // QuickFIX FIELD::UserMin
constexpr std::size_t kMaxTracked = 1024;  // members tracked per set (FIX 5.0SP2 max is 610)
constexpr int kMaxGroupDepth = 8;

enum Section : unsigned { kHeaderSection = 0, kTrailerSection = 1, kBodySection = 2 };

// Sort key of a fault: QuickFIX iterates the header (8, 9, 35 first, then by
// tag), then the trailer (by tag, 10 last), then the body (by tag).
inline std::uint64_t fault_key(unsigned section, int tag, std::size_t position) noexcept {
  std::uint32_t t;
  if (section == kHeaderSection) {
    t = tag == 8 ? 0u : tag == 9 ? 1u : tag == 35 ? 2u : static_cast<std::uint32_t>(tag) + 3u;
  } else if (section == kTrailerSection) {
    t = tag == 10 ? 0xffffffffu : static_cast<std::uint32_t>(tag);
  } else {
    t = static_cast<std::uint32_t>(tag) ^ 0x80000000u;  // negative tags sort first
  }
  return (std::uint64_t{section} << 56) | (std::uint64_t{t} << 20) | (position & 0xfffff);
}

struct Fault {
  std::uint64_t key = std::numeric_limits<std::uint64_t>::max();
  RejectReason reason = RejectReason::kNone;
  int tag = 0;

  void offer(std::uint64_t k, RejectReason r, int t) noexcept {
    if (k < key) {
      key = k;
      reason = r;
      tag = t;
    }
  }
};

// Which members of a FieldSet have been seen, by position.
struct Seen {
  std::uint64_t words[kMaxTracked / 64];
  std::size_t size = 0;  // members tracked

  void reset(std::size_t members) noexcept {
    size = members < kMaxTracked ? members : kMaxTracked;
    // A constant-size clear compiles to one or two vector stores; a
    // variable-size one to `rep stos`, which costs more than the whole check
    // of a small message.
    if (size <= 256) {
      std::memset(words, 0, 4 * sizeof(std::uint64_t));
    } else {
      std::memset(words, 0, ((size + 63) / 64) * sizeof(std::uint64_t));
    }
  }
  // Marks position p; false if it was already marked (or is not tracked).
  bool mark(std::size_t p) noexcept {
    if (p >= size) return true;
    const std::uint64_t bit = std::uint64_t{1} << (p & 63);
    std::uint64_t& w = words[p >> 6];
    const bool fresh = (w & bit) == 0;
    w |= bit;
    return fresh;
  }
  [[nodiscard]] bool test(std::size_t p) const noexcept {
    return p < size && (words[p >> 6] >> (p & 63) & 1) != 0;
  }
};

inline bool is_digit(char c) noexcept {
  return static_cast<unsigned char>(c - '0') <= 9;
}

bool digits(std::string_view v, std::size_t from, std::size_t count) noexcept {
  for (std::size_t i = from; i < from + count; ++i) {
    if (!is_digit(v[i])) return false;
  }
  return true;
}

int two(std::string_view v, std::size_t at) noexcept {
  return (v[at] - '0') * 10 + (v[at + 1] - '0');
}

bool valid_int(std::string_view v) noexcept {
  std::size_t i = 0;
  if (!v.empty() && v[0] == '-') i = 1;
  if (i == v.size()) return false;
  for (; i < v.size(); ++i) {
    if (!is_digit(v[i])) return false;
  }
  return true;
}

bool valid_float(std::string_view v) noexcept {
  std::size_t i = 0;
  const std::size_t n = v.size();
  if (n == 0) return false;
  if (v[0] == '-') {
    if (++i == n) return false;
  }
  bool have_digit = false;
  while (i < n && is_digit(v[i])) {
    have_digit = true;
    ++i;
  }
  if (i < n && v[i] == '.') {
    ++i;
    while (i < n && is_digit(v[i])) {
      have_digit = true;
      ++i;
    }
  }
  return i == n && have_digit;
}

// True if all 8 bytes are ASCII digits.
inline bool all_digits8(std::uint64_t x) noexcept {
  return (((x + 0x4646464646464646ull) | (x - 0x3030303030303030ull)) & 0x8080808080808080ull) == 0;
}

// YYYYMMDD-HH:MM:SS[.f{1,9}] with two 8-byte loads (the common 21-byte
// millisecond form costs a few dozen instructions).
bool valid_utc_timestamp(std::string_view v) noexcept {
  const std::size_t len = v.size();
  if (len < 17) return false;
  std::uint64_t date, time;
  std::memcpy(&date, v.data(), 8);
  std::memcpy(&time, v.data() + 9, 8);  // HH:MM:SS
  // Put digits where the colons are so one test covers the time.
  const std::uint64_t colons = (std::uint64_t{':'} << 16) | (std::uint64_t{':'} << 40);
  if (!all_digits8(date) || v[8] != '-' || (time & 0x0000ff0000ff0000ull) != colons ||
      !all_digits8(time ^ colons ^ ((std::uint64_t{'0'} << 16) | (std::uint64_t{'0'} << 40)))) {
    return false;
  }
  const int month = two(v, 4), day = two(v, 6);
  if (month < 1 || month > 12 || day < 1 || day > 31) return false;
  if (two(v, 9) > 23 || two(v, 12) > 59 || two(v, 15) > 60) return false;
  if (len == 17) return true;
  if (v[17] != '.' || len < 19 || len > 27) return false;
  return digits(v, 18, len - 18);
}

// HH:MM:SS[.f{1,9}] starting at `at`, running to the end of v.
bool valid_time(std::string_view v, std::size_t at) noexcept {
  const std::size_t len = v.size() - at;
  if (len < 8) return false;
  if (!digits(v, at, 2) || v[at + 2] != ':' || !digits(v, at + 3, 2) || v[at + 5] != ':' ||
      !digits(v, at + 6, 2)) {
    return false;
  }
  if (two(v, at) > 23 || two(v, at + 3) > 59 || two(v, at + 6) > 60) return false;
  if (len == 8) return true;
  if (v[at + 8] != '.' || len < 10 || len > 18) return false;
  return digits(v, at + 9, len - 9);
}

bool valid_date(std::string_view v) noexcept {
  if (v.size() < 8 || !digits(v, 0, 8)) return false;
  const int month = two(v, 4);
  const int day = two(v, 6);
  return month >= 1 && month <= 12 && day >= 1 && day <= 31;
}

// Invalid-tag reference for a field whose tag is <= 0: QuickFIX reads the tag
// text as an integer and keeps 0 if it is not one.
int reference_tag(const MessageView& msg, std::size_t i) noexcept {
  const int tag = msg.field(i).tag;
  if (tag != -1) return tag;
  std::int64_t v = 0;
  if (parse_int(msg.tag_text(i), v) && v == -1) return -1;
  return 0;
}

// Packs a value of 1..8 bytes for the enum tables. Reads 8 bytes at once when
// the message text extends that far (it does for every field but the last
// few bytes before CheckSum), then masks to the value's length.
inline std::uint64_t pack_value(const char* text, std::size_t text_size, std::size_t offset,
                                std::size_t len) noexcept {
  if (offset + 8 <= text_size) {
    std::uint64_t k;
    std::memcpy(&k, text + offset, 8);
    return len >= 8 ? k : k & ((std::uint64_t{1} << (8 * len)) - 1);
  }
  return detail::pack_key(std::string_view(text + offset, len));
}

class Pass {
 public:
  Pass(const Dictionary& d, const ValidationOptions& o, const MessageView& msg) noexcept
      : d_(d),
        o_(o),
        msg_(msg),
        text_(msg.text().data()),
        text_size_(msg.text().size()),
        info_(d.tag_info_.data()),
        info_size_(d.tag_info_.size()),
        value_mask_(static_cast<std::uint8_t>((o.check_types ? TagInfo::kFormat : 0) |
                                              (o.check_values ? TagInfo::kEnum : 0))) {}

  ValidationResult run() noexcept;

 private:
  const TagInfo& info_of(int tag) const noexcept {
    static constexpr TagInfo kUndefined{};
    return static_cast<std::size_t>(static_cast<unsigned>(tag)) < info_size_ ? info_[tag] : kUndefined;
  }
  std::string_view value_of(const Field& f) const noexcept {
    return std::string_view(text_ + f.value_offset, f.value_length);
  }

  // Fast check of a non-empty value against format and enum; false sends the
  // caller to check_value() for the exact reason.
  bool value_ok(int tag, TagInfo info, const Field& f) const noexcept {
    const char* v = text_ + f.value_offset;
    const std::size_t len = f.value_length;
    const unsigned need = info.flags & value_mask_;
    if ((need & TagInfo::kFormat) != 0) {
      switch (info.check_type) {
        case FieldType::kInt:
        case FieldType::kLength:
        case FieldType::kNumInGroup:
        case FieldType::kSeqNum:
        case FieldType::kDayOfMonth: {
          std::size_t i = v[0] == '-' ? 1 : 0;
          if (i == len) return false;
          for (; i < len; ++i) {
            if (!is_digit(v[i])) return false;
          }
          break;
        }
        case FieldType::kChar:
          if (len != 1) return false;
          break;
        case FieldType::kFloat:
        case FieldType::kQty:
        case FieldType::kPrice:
        case FieldType::kPriceOffset:
        case FieldType::kAmt:
        case FieldType::kPercentage:
          if (!valid_float(std::string_view(v, len))) return false;
          break;
        case FieldType::kUtcTimestamp:
          if (!valid_utc_timestamp(std::string_view(v, len))) return false;
          break;
        default:
          if (!value_has_type_format(info.check_type, std::string_view(v, len))) return false;
      }
    }
    if ((need & TagInfo::kEnum) != 0) {
      if (len > 8 || (info.flags & (TagInfo::kMultiValue | TagInfo::kLongEnum)) != 0) {
        return detail::enum_contains(d_, tag, info, std::string_view(v, len));
      }
      const std::uint64_t* table = d_.enum_keys_.data() + info.enum_offset;
      if (info.enum_bits == 0) {
        const auto c = static_cast<unsigned char>(v[0]);
        return len == 1 && (table[c >> 6] >> (c & 63) & 1) != 0;
      }
      const std::uint64_t key = pack_value(text_, text_size_, f.value_offset, len);
      const std::size_t mask = (std::size_t{1} << info.enum_bits) - 1;
      for (std::size_t i = detail::hash_key(key) & mask;; i = (i + 1) & mask) {
        const std::uint64_t k = table[i];
        if (k == key) break;
        if (k == 0) return false;
      }
    }
    return true;
  }

  // Value present, format, enum: QuickFIX's checkHasValue, checkValidFormat,
  // checkValue, in that order.
  RejectReason check_value(int tag, TagInfo info, std::string_view v) const noexcept {
    if (v.empty() && o_.check_fields_have_values) return RejectReason::kTagSpecifiedWithoutValue;
    if ((info.flags & (TagInfo::kFormat | TagInfo::kEnum)) == 0) return RejectReason::kNone;
    if ((info.flags & TagInfo::kFormat) != 0 && o_.check_types &&
        !value_has_type_format(info.check_type, v)) {
      return RejectReason::kIncorrectDataFormat;
    }
    if ((info.flags & TagInfo::kEnum) != 0 && o_.check_values && !detail::enum_contains(d_, tag, info, v)) {
      return RejectReason::kValueIncorrect;
    }
    return RejectReason::kNone;
  }

  // Value checks of one field: fast path, exact reason only on failure.
  RejectReason checked(int tag, TagInfo info, const Field& f) const noexcept {
    if (f.value_length != 0) {
      if ((info.flags & value_mask_) == 0 || value_ok(tag, info, f)) {
        return RejectReason::kNone;
      }
    }
    return check_value(tag, info, value_of(f));
  }

  // QuickFIX's shouldCheckTag: which tags get the tag-number and
  // in-message checks.
  bool should_check_tag(int tag) const noexcept {
    if (o_.allow_unknown_message_fields && tag < kUserDefinedMin) return false;
    if (!o_.check_user_defined_fields && tag >= kUserDefinedMin) return false;
    return true;
  }

  std::size_t walk_group(const GroupDef& g, std::size_t count_pos, unsigned section, int key_tag,
                         int depth) noexcept;
  [[gnu::noinline]] void body_field_slow(std::size_t i, TagInfo info, int pos) noexcept;
  // Out of line so that the hot loop keeps its registers.
  [[gnu::noinline]] std::size_t general_field(std::size_t i, const MessageDef* def) noexcept;
  int smallest_missing(const FieldSet& set, const Seen& seen) const noexcept;
  bool top_level_repeat(int tag) noexcept;

  const Dictionary& d_;
  const ValidationOptions& o_;
  const MessageView& msg_;
  const char* text_;
  std::size_t text_size_;
  const TagInfo* info_;
  std::size_t info_size_;
  std::uint8_t value_mask_;  // kFormat / kEnum as the options enable them
  const FieldSet* body_ = nullptr;
  Seen body_seen_;
  Seen header_seen_;
  Seen trailer_seen_;
  int header_required_ = 0;
  int trailer_required_ = 0;
  unsigned section_ = kHeaderSection;  // where the message currently is
  bool out_of_order_found_ = false;
  int out_of_order_ = 0;
  int body_required_ = 0;
  bool truncated_ = false;
  Fault fault_;
  Fault group_required_;
  std::size_t n_ = 0;
  // Body tags outside the message definition, for the repeated-tag check.
  int other_tags_[32];
  std::size_t other_count_ = 0;
};

int Pass::smallest_missing(const FieldSet& set, const Seen& seen) const noexcept {
  int best = 0;
  for (std::size_t p = 0; p < set.members.size(); ++p) {
    const auto& m = set.members[p];
    if (!m.required) continue;
    // Untracked positions (sets above kMaxTracked) fall back to the index.
    const bool present = p < seen.size ? seen.test(p) : msg_.has(m.tag);
    if (!present && (best == 0 || m.tag < best)) best = m.tag;
  }
  return best;
}

bool Pass::top_level_repeat(int tag) noexcept {
  for (std::size_t i = 0; i < other_count_; ++i) {
    if (other_tags_[i] == tag) return true;
  }
  if (other_count_ < sizeof(other_tags_) / sizeof(other_tags_[0])) other_tags_[other_count_++] = tag;
  return false;
}

// Walks the entries of group `g` whose NumInGroup field is at `count_pos`;
// returns the position after the group. An entry starts at the delimiter
// field; the group ends at the first field that is not a member. Faults in
// the group sort with the top-level NumInGroup field (`key_tag`).
std::size_t Pass::walk_group(const GroupDef& g, std::size_t count_pos, unsigned section, int key_tag,
                             int depth) noexcept {
  const FieldSet& set = g.fields;
  Seen seen;
  seen.size = 0;
  std::size_t p = count_pos + 1;
  std::int64_t entries = 0;
  int previous = -1;
  int required_seen = 0;
  std::size_t entry_start = p;

  auto finish_entry = [&](std::size_t end) noexcept {
    if (!o_.check_required || required_seen >= set.required_count) return;
    int missing = 0;
    for (std::size_t q = 0; q < set.members.size(); ++q) {
      const auto& m = set.members[q];
      if (!m.required) continue;
      bool present = q < seen.size ? seen.test(q) : false;
      if (q >= seen.size) {
        for (std::size_t r = entry_start; r < end && !present; ++r) present = msg_.field(r).tag == m.tag;
      }
      if (!present && (missing == 0 || m.tag < missing)) missing = m.tag;
    }
    if (missing != 0)
      group_required_.offer(fault_key(section, key_tag, entry_start), RejectReason::kRequiredTagMissing,
                            missing);
  };

  const Field* fields = &msg_.field(0);
  const std::uint16_t* positions = set.position_of.data();
  const std::size_t positions_size = set.position_of.size();
  const TagInfo* member_info = set.member_info.data();
  const int delimiter = g.delimiter_tag;
  while (p < n_) {
    const Field& f = fields[p];
    const unsigned utag = static_cast<unsigned>(f.tag);
    const int pos = utag < positions_size               ? static_cast<int>(positions[utag]) - 1
                    : f.tag >= FieldSet::kDenseTagLimit ? set.position(f.tag)
                                                        : -1;
    if (pos < 0) break;
    if (f.tag == delimiter) {
      if (entries > 0) finish_entry(p);
      ++entries;
      entry_start = p;
      seen.reset(set.members.size());
      required_seen = 0;
      previous = pos;
    } else if (entries == 0 || pos <= previous) {
      // Entry not opened by the delimiter, a field before one it should
      // follow, or a repeat inside the entry. Found while splitting the
      // entries, so it sorts with the NumInGroup field and wins over the
      // count check (QuickFIX/J reports it while parsing, before counting).
      if (o_.check_groups) {
        fault_.offer(fault_key(section, key_tag, count_pos), RejectReason::kRepeatingGroupFieldsOutOfOrder,
                     f.tag);
      }
    } else {
      previous = pos;
    }
    const TagInfo info = member_info[pos];
    // Fields ahead of the first delimiter belong to no entry.
    if (entries > 0 && seen.mark(static_cast<std::size_t>(pos)) && (info.flags & TagInfo::kRequired) != 0) {
      ++required_seen;
    }
    const RejectReason r = checked(f.tag, info, f);
    if (r != RejectReason::kNone) fault_.offer(fault_key(section, key_tag, p), r, f.tag);
    if (info.slot != 0 && depth < kMaxGroupDepth && r == RejectReason::kNone) {
      p = walk_group(d_.group(set.members[static_cast<std::size_t>(pos)].group), p, section, key_tag,
                     depth + 1);
      continue;
    }
    ++p;
  }
  if (entries > 0) finish_entry(p);
  if (o_.check_groups) {
    // The count is known to be well formed (the walk starts only then).
    const Field& c = msg_.field(count_pos);
    std::int64_t declared = 0;
    bool parsed = c.value_length != 0 && c.value_length < 19;
    const char* v = text_ + c.value_offset;
    for (std::size_t k = v[0] == '-' ? 1 : 0; parsed && k < c.value_length; ++k) {
      parsed = is_digit(v[k]);
      declared = declared * 10 + (v[k] - '0');
    }
    if (v[0] == '-') declared = -declared;
    if (!parsed || declared != entries) {
      fault_.offer(fault_key(section, key_tag, count_pos), RejectReason::kIncorrectNumInGroupCount,
                   g.count_tag);
    }
  }
  return p;
}

// A body field off the fast path: not a member of the message, a repeat, an
// empty value, or a tag that is not a number.
void Pass::body_field_slow(std::size_t i, TagInfo info, int pos) noexcept {
  const Field& f = msg_.field(i);
  const int tag = f.tag;
  const std::uint64_t key = fault_key(kBodySection, tag, i);
  if (tag <= 0) {
    // Not a tag number: QuickFIX still runs checkHasValue first.
    if (tag == -1 && msg_.tag_text(i) != "-1") truncated_ = true;
    RejectReason r = RejectReason::kNone;
    if (f.value_length == 0 && o_.check_fields_have_values)
      r = RejectReason::kTagSpecifiedWithoutValue;
    else if (should_check_tag(tag))
      r = RejectReason::kInvalidTagNumber;
    if (r != RejectReason::kNone) fault_.offer(key, r, reference_tag(msg_, i));
    return;
  }
  RejectReason r = RejectReason::kNone;
  if (pos >= 0) {
    if (!body_seen_.mark(static_cast<std::size_t>(pos))) {
      if (o_.check_repeated) r = RejectReason::kTagAppearsMoreThanOnce;
    } else if (body_->members[static_cast<std::size_t>(pos)].required) {
      ++body_required_;
    }
  } else if (top_level_repeat(tag) && o_.check_repeated) {
    r = RejectReason::kTagAppearsMoreThanOnce;
  }
  if (r == RejectReason::kNone) r = check_value(tag, info, value_of(f));
  if (r == RejectReason::kNone && body_ != nullptr && should_check_tag(tag)) {
    if ((info.flags & TagInfo::kDefined) == 0)
      r = RejectReason::kInvalidTagNumber;
    else if (pos < 0)
      r = RejectReason::kTagNotDefinedForMessageType;
  }
  if (r != RejectReason::kNone) fault_.offer(key, r, tag);
}

// Every field off the fast path: header and trailer fields, body fields that
// are not members of the message, repeats, empty values, body fields out of
// place. Returns the position of the next field to look at.
std::size_t Pass::general_field(std::size_t i, const MessageDef* def) noexcept {
  const Field& f = msg_.field(i);
  const int tag = f.tag;
  const TagInfo& info = info_of(tag);
  if ((info.flags & (TagInfo::kHeader | TagInfo::kTrailer)) == 0) {
    if (section_ != kBodySection) {
      if (section_ == kTrailerSection && !out_of_order_found_) {
        out_of_order_found_ = true;
        out_of_order_ = tag;
      }
      section_ = kBodySection;
    }
    const int pos = body_ != nullptr ? body_->position(tag) : -1;
    if (pos >= 0 && f.value_length != 0 && body_seen_.mark(static_cast<std::size_t>(pos))) {
      // A member reached here only because it was the first body field.
      const TagInfo mi = body_->member_info[static_cast<std::size_t>(pos)];
      if ((mi.flags & TagInfo::kRequired) != 0) ++body_required_;
      const RejectReason r = checked(tag, mi, f);
      if (r != RejectReason::kNone) {
        fault_.offer(fault_key(kBodySection, tag, i), r, tag);
        return i + 1;
      }
      if (mi.slot != 0)
        return walk_group(d_.group(body_->members[static_cast<std::size_t>(pos)].group), i, kBodySection, tag,
                          1);
      return i + 1;
    }
    body_field_slow(i, pos >= 0 ? body_->member_info[static_cast<std::size_t>(pos)] : info, pos);
    return i + 1;
  }

  const bool header = (info.flags & TagInfo::kHeader) != 0;
  const FieldSet& set = header ? d_.header() : d_.trailer();
  Seen& seen = header ? header_seen_ : trailer_seen_;
  if (header) {
    if (section_ != kHeaderSection && !out_of_order_found_) {
      out_of_order_found_ = true;
      out_of_order_ = tag;
    }
  } else {
    section_ = kTrailerSection;
  }
  const int pos = info.slot != TagInfo::kNoSlot ? info.slot : set.position(tag);
  const auto& member = set.members[static_cast<std::size_t>(pos)];
  RejectReason r = RejectReason::kNone;
  if (!seen.mark(static_cast<std::size_t>(pos))) {
    if (o_.check_repeated) r = RejectReason::kTagAppearsMoreThanOnce;
  } else if ((info.flags & TagInfo::kRequired) != 0) {
    ++(header ? header_required_ : trailer_required_);
  }
  if (r == RejectReason::kNone) {
    // With the MsgType check off, an unknown type must not fail as a
    // MsgType enum value either.
    r = (tag == tag::kMsgType && def == nullptr && !o_.check_unknown_msg_type)
            ? (f.value_length == 0 && o_.check_fields_have_values ? RejectReason::kTagSpecifiedWithoutValue
                                                                  : RejectReason::kNone)
            : checked(tag, info, f);
  }
  const unsigned section = header ? kHeaderSection : kTrailerSection;
  if (r != RejectReason::kNone) {
    fault_.offer(fault_key(section, tag, i), r, tag);
    return i + 1;
  }
  if (member.group >= 0) return walk_group(d_.group(member.group), i, section, tag, 1);
  return i + 1;
}

ValidationResult Pass::run() noexcept {
  n_ = msg_.size();
  ValidationResult result;
  if (n_ < 3 || msg_.field(0).tag != tag::kBeginString || msg_.field(1).tag != tag::kBodyLength ||
      msg_.field(2).tag != tag::kMsgType) {
    result.reason = RejectReason::kOther;
    result.failure = ValidationFailure::kGarbled;
    result.text = "BeginString, BodyLength and MsgType must be the first three fields";
    for (std::size_t i = 0; i < 3 && i < n_; ++i) {
      static constexpr int kOrder[3] = {tag::kBeginString, tag::kBodyLength, tag::kMsgType};
      if (msg_.field(i).tag != kOrder[i]) {
        result.ref_tag = msg_.field(i).tag;
        break;
      }
    }
    return result;
  }
  if (o_.check_begin_string && value_of(msg_.field(0)) != d_.begin_string()) {
    result.reason = RejectReason::kOther;
    result.failure = ValidationFailure::kWrongBeginString;
    result.ref_tag = tag::kBeginString;
    result.text = "Incorrect BeginString";
    return result;
  }

  const MessageDef* def = d_.message(value_of(msg_.field(2)));
  const FieldSet& header = d_.header();
  const FieldSet& trailer = d_.trailer();
  body_ = def != nullptr ? &def->fields : nullptr;

  header_seen_.reset(header.members.size());
  trailer_seen_.reset(trailer.members.size());
  body_seen_.reset(body_ != nullptr ? body_->members.size() : 0);

  // The body lookups, hoisted: the loop below is the hot path.
  const Field* fields = &msg_.field(0);
  const std::uint16_t* body_pos = body_ != nullptr ? body_->position_of.data() : nullptr;
  const std::size_t body_pos_size = body_ != nullptr ? body_->position_of.size() : 0;
  const TagInfo* body_info = body_ != nullptr ? body_->member_info.data() : nullptr;
  const std::size_t n = n_;
  int body_required = 0;

  std::size_t i = 0;
  while (i < n) {
    const Field& f = fields[i];
    const int tag = f.tag;
    const unsigned utag = static_cast<unsigned>(tag);
    if (utag < body_pos_size && body_pos[utag] != 0) {
      const std::size_t pos = body_pos[utag] - 1u;
      const TagInfo info = body_info[pos];
      if ((info.flags & (TagInfo::kHeader | TagInfo::kTrailer)) == 0 && section_ == kBodySection &&
          f.value_length != 0 && body_seen_.mark(pos)) {
        // A member of the message body, first seen, with a value: the
        // common case, checked here without leaving the loop.
        body_required += info.flags >> 7;  // kRequired
        if ((info.flags & value_mask_) != 0 && !value_ok(tag, info, f)) [[unlikely]] {
          fault_.offer(fault_key(kBodySection, tag, i), check_value(tag, info, value_of(f)), tag);
          ++i;
          continue;
        }
        if (info.slot != 0) {
          i = walk_group(d_.group(body_->members[pos].group), i, kBodySection, tag, 1);
          continue;
        }
        ++i;
        continue;
      }
    }
    const TagInfo info = info_of(tag);
    if ((info.flags & TagInfo::kHeader) != 0 && info.slot != TagInfo::kNoSlot && section_ == kHeaderSection &&
        f.value_length != 0 && tag != tag::kMsgType && header_seen_.mark(info.slot)) {
      // A header field in the header, first seen, with a value.
      header_required_ += info.flags >> 7;  // kRequired
      if ((info.flags & value_mask_) != 0 && !value_ok(tag, info, f)) [[unlikely]] {
        fault_.offer(fault_key(kHeaderSection, tag, i), check_value(tag, info, value_of(f)), tag);
        ++i;
        continue;
      }
      const int group = header.members[info.slot].group;
      if (group >= 0) {
        i = walk_group(d_.group(group), i, kHeaderSection, tag, 1);
        continue;
      }
      ++i;
      continue;
    }
    i = general_field(i, def);
  }
  body_required_ += body_required;

  auto reject = [&result](RejectReason reason, int ref) {
    result.reason = reason;
    result.ref_tag = ref;
    result.text = reject_reason_text(reason);
    result.failure = ValidationFailure::kReject;
    return result;
  };

  if (out_of_order_found_ && o_.check_fields_out_of_order) {
    return reject(RejectReason::kTagSpecifiedOutOfRequiredOrder, out_of_order_);
  }
  if (def == nullptr && o_.check_unknown_msg_type) return reject(RejectReason::kInvalidMsgType, 0);
  if (o_.check_required && !truncated_) {
    if (header_required_ < header.required_count) {
      const int t = smallest_missing(header, header_seen_);
      if (t != 0) return reject(RejectReason::kRequiredTagMissing, t);
    }
    if (trailer_required_ < trailer.required_count) {
      const int t = smallest_missing(trailer, trailer_seen_);
      if (t != 0) return reject(RejectReason::kRequiredTagMissing, t);
    }
    if (body_ != nullptr && body_required_ < body_->required_count) {
      const int t = smallest_missing(*body_, body_seen_);
      if (t != 0) return reject(RejectReason::kRequiredTagMissing, t);
    }
    if (group_required_.reason != RejectReason::kNone) {
      return reject(group_required_.reason, group_required_.tag);
    }
  }
  if (fault_.reason != RejectReason::kNone) return reject(fault_.reason, fault_.tag);
  return result;
}

// ------------------------------------------------------------ clean path

using detail::FastEntry;
using detail::FastGroup;
using detail::FastMessage;
using detail::FastTables;
using detail::FieldSection;
using detail::ValueCheck;

constexpr std::size_t kNoClean = static_cast<std::size_t>(-1);

}  // namespace

// The parser's index, read directly: "field i is the first with its tag" is
// then one load and one compare.
struct detail::ViewIndex {
  static const std::uint64_t* index(const MessageView& m) noexcept { return m.index_; }
  static std::uint64_t generation(const MessageView& m) noexcept { return m.generation_; }
};

namespace {

constexpr std::uint64_t kZeros = 0x3030303030303030ull;

// Bytes [0, len) of the 8 loaded at v, the rest replaced by '0' (len 1..8).
inline std::uint64_t digits_window(std::uint64_t x, std::size_t len) noexcept {
  const std::uint64_t keep = len >= 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * len)) - 1;
  return (x & keep) | (kZeros & ~keep);
}

// INT format (valid_int). Reads 8 bytes at once when the text has them.
inline bool int_text(const char* v, std::size_t len, std::size_t avail) noexcept {
  if (avail >= 8 && len <= 8) {
    std::uint64_t x;
    std::memcpy(&x, v, 8);
    x = digits_window(x, len);
    if ((x & 0xff) == '-') {
      if (len == 1) return false;
      x ^= '-' ^ '0';
    }
    return all_digits8(x);
  }
  return valid_int(std::string_view(v, len));
}

// FLOAT format (valid_float): as INT, with at most one '.' and a digit.
inline bool float_text(const char* v, std::size_t len, std::size_t avail) noexcept {
  if (avail >= 8 && len <= 8) {
    std::uint64_t x;
    std::memcpy(&x, v, 8);
    x = digits_window(x, len);
    if (all_digits8(x)) return true;  // the common price or quantity
    std::size_t marks = 0;
    if ((x & 0xff) == '-') {
      x ^= '-' ^ '0';
      marks = 1;
    }
    // Exact zero-byte test of x ^ "........": the '.' bytes.
    const std::uint64_t t = x ^ 0x2e2e2e2e2e2e2e2eull;
    const std::uint64_t dots =
        ~(((t & 0x7f7f7f7f7f7f7f7full) + 0x7f7f7f7f7f7f7f7full) | t) & 0x8080808080808080ull;
    const std::size_t dot_count = static_cast<std::size_t>(std::popcount(dots));
    x ^= (dots >> 7) * ('.' ^ '0');
    return dot_count <= 1 && marks + dot_count < len && all_digits8(x);
  }
  return valid_float(std::string_view(v, len));
}

// UTCTIMESTAMP (valid_utc_timestamp) with the two-digit fields read from the
// loaded words instead of byte by byte.
inline bool timestamp_text(const char* v, std::size_t len, std::size_t avail) noexcept {
  if (len < 17 || len == 18 || len > 27) return false;
  std::uint64_t date, time;
  std::memcpy(&date, v, 8);
  std::memcpy(&time, v + 9, 8);  // HH:MM:SS
  constexpr std::uint64_t kColons = (std::uint64_t{':'} << 16) | (std::uint64_t{':'} << 40);
  constexpr std::uint64_t kColonDigits = (std::uint64_t{'0'} << 16) | (std::uint64_t{'0'} << 40);
  if (v[8] != '-' || (time & 0x0000ff0000ff0000ull) != kColons) return false;
  time ^= kColons ^ kColonDigits;
  if (!all_digits8(date) || !all_digits8(time)) return false;
  // Byte k of (d * 10 + (d >> 8)) is the two-digit number at bytes k, k+1.
  const std::uint64_t d = date & 0x0f0f0f0f0f0f0f0full, t = time & 0x0f0f0f0f0f0f0f0full;
  const std::uint64_t dp = d * 10 + (d >> 8), tp = t * 10 + (t >> 8);
  const unsigned month = (dp >> 32) & 0xff, day = (dp >> 48) & 0xff;
  const unsigned hour = tp & 0xff, minute = (tp >> 24) & 0xff, second = (tp >> 48) & 0xff;
  if (month - 1 > 11 || day - 1 > 30 || hour > 23 || minute > 59 || second > 60) return false;
  if (len == 17) return true;
  if (v[17] != '.') return false;
  const std::size_t frac = len - 18;  // 1..9
  if (avail >= 18 + 8 && frac <= 8) {
    std::uint64_t f;
    std::memcpy(&f, v + 18, 8);
    return all_digits8(digits_window(f, frac));
  }
  return digits(std::string_view(v, len), 18, frac);
}

class CleanPath {
 public:
  CleanPath(const Dictionary& d, const FastTables& t, const MessageView& msg) noexcept
      : d_(d),
        t_(t),
        text_(msg.text().data()),
        text_size_(msg.text().size()),
        fields_(&msg.field(0)),
        n_(msg.size()),
        enum_keys_(d.enum_keys_.data()),
        index_(detail::ViewIndex::index(msg)),
        generation_(detail::ViewIndex::generation(msg)) {}

  bool run() noexcept;

 private:
  // The value of field `f` passes check `e.check` (not kAny or kGroup; the
  // value is not empty). Inline: a call costs more than most checks. Reads
  // the text through `this` so that the field loops keep their registers.
  [[gnu::always_inline]] bool value_ok(const FastEntry& e, const Field& f) const noexcept {
    // The most frequent checks first.
    const std::size_t len = f.value_length;
    const ValueCheck check = e.check;
    if (check == ValueCheck::kEnumChar) {
      const std::uint64_t* set = enum_keys_ + e.aux;
      const auto c = static_cast<unsigned char>(text_[f.value_offset]);
      return len == 1 && (set[c >> 6] >> (c & 63) & 1) != 0;
    }
    if (check == ValueCheck::kFloat)
      return float_text(text_ + f.value_offset, len, text_size_ - f.value_offset);
    if (check == ValueCheck::kInt) return int_text(text_ + f.value_offset, len, text_size_ - f.value_offset);
    if (check == ValueCheck::kEnumHash) {
      if (len > 8) return false;
      const std::uint64_t* table = enum_keys_ + e.aux;
      const std::uint64_t key = pack_value(text_, text_size_, f.value_offset, len);
      const std::size_t mask = (std::size_t{1} << e.enum_bits) - 1;
      for (std::size_t i = detail::hash_key(key) & mask;; i = (i + 1) & mask) {
        const std::uint64_t k = table[i];
        if (k == key) return true;
        if (k == 0) return false;
      }
    }
    if (check == ValueCheck::kTimestamp) {
      return timestamp_text(text_ + f.value_offset, len, text_size_ - f.value_offset);
    }
    if (check == ValueCheck::kChar) return len == 1;
    if (check == ValueCheck::kGeneric)
      return generic_ok(f.tag, std::string_view(text_ + f.value_offset, len));
    return true;  // kAny, kGroup
  }

  [[gnu::noinline]] bool generic_ok(int tag, std::string_view v) const noexcept {
    const TagInfo info = d_.tag_info(tag);
    return ((info.flags & TagInfo::kFormat) == 0 || value_has_type_format(info.check_type, v)) &&
           ((info.flags & TagInfo::kEnum) == 0 || detail::enum_contains(d_, tag, info, v));
  }

  // Walks a group whose NumInGroup field is at `count_pos`; returns the
  // position after it, or kNoClean.
  std::size_t group(const FastGroup& g, std::size_t count_pos, int depth) const noexcept;

  const Dictionary& d_;
  const FastTables& t_;
  const char* text_;
  std::size_t text_size_;
  const Field* fields_;
  std::size_t n_;
  const std::uint64_t* enum_keys_;
  const std::uint64_t* index_;
  std::uint64_t generation_;
};

std::size_t CleanPath::group(const FastGroup& g, std::size_t count_pos, int depth) const noexcept {
  if (!g.usable || depth > kMaxGroupDepth) return kNoClean;
  // The count: digits only (stricter than the INT format, so never "valid"
  // where the general pass would not be).
  const Field& c = fields_[count_pos];
  if (c.value_length == 0 || c.value_length > 9) return kNoClean;
  std::int64_t declared = 0;
  for (std::size_t k = 0; k < c.value_length; ++k) {
    const char ch = text_[c.value_offset + k];
    if (!is_digit(ch)) return kNoClean;
    declared = declared * 10 + (ch - '0');
  }
  if (g.count.check != ValueCheck::kAny && !value_ok(g.count, c)) return kNoClean;  // NoSides: 1 or 2
  const std::uint16_t* position = g.position.data();
  const std::size_t positions = g.position.size();
  const FastEntry* entries = g.entries.data();
  const std::uint64_t required = g.required;
  std::size_t p = count_pos + 1;
  std::int64_t entries_seen = 0;
  // 1 + position of the previous member in the entry; before the first
  // delimiter, above every position so that any other member fails.
  unsigned previous = 0x10000;
  std::uint64_t seen = required;  // no entry to complete before the first
  while (p < n_) {
    const Field& f = fields_[p];
    const auto utag = static_cast<std::uint32_t>(f.tag);
    const unsigned pos = utag < positions ? position[utag] : 0;  // 1 + member position
    if (pos == 0) break;                                         // the group ends at the first non-member
    if (pos == 1) {  // the delimiter (the first member) opens an entry
      if ((seen & required) != required) return kNoClean;
      ++entries_seen;
      seen = 0;
    } else if (pos <= previous) {
      return kNoClean;  // before the first delimiter, out of order or repeated
    }
    previous = pos;
    const FastEntry& e = entries[pos - 1];
    seen |= e.required;
    if (f.value_length == 0) return kNoClean;
    if (e.check != ValueCheck::kAny) {
      if (e.check == ValueCheck::kGroup) {
        p = group(t_.groups[e.aux], p, depth + 1);
        if (p == kNoClean) return kNoClean;
        continue;
      }
      if (!value_ok(e, f)) return kNoClean;
    }
    ++p;
  }
  if ((seen & required) != required) return kNoClean;
  return entries_seen == declared ? p : kNoClean;
}

bool CleanPath::run() noexcept {
  if (n_ < 3 || fields_[0].tag != tag::kBeginString || fields_[1].tag != tag::kBodyLength ||
      fields_[2].tag != tag::kMsgType) {
    return false;
  }
  const Field& begin = fields_[0];
  if (begin.value_length != t_.begin_string_size) return false;
  if (t_.begin_string != 0) {
    if (pack_value(text_, text_size_, begin.value_offset, begin.value_length) != t_.begin_string)
      return false;
  } else if (std::string_view(text_ + begin.value_offset, begin.value_length) != d_.begin_string()) {
    return false;
  }
  const Field& type = fields_[2];
  std::size_t message;
  if (type.value_length == 1) {
    const std::int16_t i = t_.by_char[static_cast<unsigned char>(text_[type.value_offset])];
    if (i < 0) return false;
    message = static_cast<std::size_t>(i);
  } else {
    const MessageDef* def = d_.message(std::string_view(text_ + type.value_offset, type.value_length));
    if (def == nullptr) return false;
    message = static_cast<std::size_t>(def - d_.messages().data());
  }
  const FastMessage& m = t_.messages[message];
  if (!m.usable) return false;

  const std::uint16_t* slot = m.slot.data();  // kIndexedTags entries
  const FastEntry* entries = m.entries.data();
  const std::uint64_t* index = index_;
  const Field* f = fields_;
  const Field* const end = fields_ + n_;
  auto section = static_cast<unsigned>(FieldSection::kHeader);
  std::uint64_t seen = 0;
  std::uint64_t first = generation_;  // the index slot of a tag first seen at this field
  constexpr std::uint64_t kNext = std::uint64_t{1} << 32;
  while (f != end) {
    const auto utag = static_cast<std::uint32_t>(f->tag);
    if (utag >= static_cast<std::uint32_t>(MessageView::kIndexedTags)) return false;
    // entries[0] (section kNone) stands for the tags this message does not
    // have here. Sections in order, the first occurrence of the tag, a value.
    const FastEntry& e = entries[slot[utag]];
    const auto s = static_cast<unsigned>(e.section);
    if (s < section) return false;
    if (index[utag] != first) return false;
    if (f->value_length == 0) return false;
    section = s;
    seen |= e.required;
    if (e.check != ValueCheck::kAny) {
      if (e.check == ValueCheck::kGroup) {
        const std::size_t next = group(t_.groups[e.aux], static_cast<std::size_t>(f - fields_), 1);
        if (next == kNoClean) return false;
        f = fields_ + next;
        first = generation_ | (std::uint64_t{next} << 32);
        continue;
      }
      if (!value_ok(e, *f)) return false;
    }
    ++f;
    first += kNext;
  }
  return (seen & m.required) == m.required;
}

}  // namespace

namespace detail {

std::shared_ptr<const FastTables> build_fast_tables(const Dictionary& d) {
  auto t = std::make_shared<FastTables>();
  // The check for a member with these facts; the enum folds in the format
  // only if every enum value has the format.
  auto check_of = [&d](int tag, const TagInfo& info) {
    const bool format = (info.flags & TagInfo::kFormat) != 0;
    if ((info.flags & TagInfo::kEnum) != 0) {
      if ((info.flags & (TagInfo::kMultiValue | TagInfo::kLongEnum)) != 0) return ValueCheck::kGeneric;
      const FieldDef* f = d.field(tag);
      if (f == nullptr) return ValueCheck::kGeneric;
      for (const std::string& v : f->enum_values) {
        if (format && !value_has_type_format(info.check_type, v)) return ValueCheck::kGeneric;
      }
      return info.enum_bits == 0 ? ValueCheck::kEnumChar : ValueCheck::kEnumHash;
    }
    if (!format) return ValueCheck::kAny;
    switch (info.check_type) {
      case FieldType::kInt:
      case FieldType::kLength:
      case FieldType::kNumInGroup:
      case FieldType::kSeqNum:
      case FieldType::kDayOfMonth:
        return ValueCheck::kInt;
      case FieldType::kFloat:
      case FieldType::kQty:
      case FieldType::kPrice:
      case FieldType::kPriceOffset:
      case FieldType::kAmt:
      case FieldType::kPercentage:
        return ValueCheck::kFloat;
      case FieldType::kChar:
        return ValueCheck::kChar;
      case FieldType::kUtcTimestamp:
        return ValueCheck::kTimestamp;
      default:
        return ValueCheck::kGeneric;
    }
  };
  auto entry_of = [&](const FieldSet& set, std::size_t p, FieldSection section) {
    FastEntry e;
    const FieldSet::Member& member = set.members[p];
    const TagInfo& info = set.member_info[p];
    e.section = section;
    if (member.group >= 0) {
      // The count's format is checked by the walk (digits only).
      e.check = ValueCheck::kGroup;
      e.aux = static_cast<std::uint32_t>(member.group);
    } else {
      e.check = check_of(member.tag, info);
      e.enum_bits = info.enum_bits;
      e.aux = info.enum_offset;
    }
    return e;
  };

  const std::size_t group_count = d.groups().size();
  t->groups.resize(group_count);
  for (std::size_t gi = 0; gi < group_count; ++gi) {
    const GroupDef& g = d.groups()[gi];
    FastGroup& fg = t->groups[gi];
    fg.position = g.fields.position_of;
    const TagInfo count_info = d.tag_info(g.count_tag);
    fg.count.check = check_of(g.count_tag, count_info);
    fg.count.enum_bits = count_info.enum_bits;
    fg.count.aux = count_info.enum_offset;
    fg.usable = !g.fields.members.empty() && g.fields.sparse_positions.empty() &&
                g.fields.member_info.size() == g.fields.members.size();
    if (!fg.usable) continue;
    for (std::size_t p = 0; p < g.fields.members.size(); ++p) {
      FastEntry e = entry_of(g.fields, p, FieldSection::kBody);
      if (g.fields.members[p].required) {
        if (p >= 64)
          fg.usable = false;
        else
          e.required = std::uint64_t{1} << p;
      }
      fg.required |= e.required;
      fg.entries.push_back(e);
    }
  }

  for (std::int16_t& c : t->by_char) c = -1;
  t->begin_string_size = d.begin_string().size();
  t->begin_string = d.begin_string().size() <= 8 ? pack_key(d.begin_string()) : 0;
  const std::vector<MessageDef>& messages = d.messages();
  t->messages.resize(messages.size());
  for (std::size_t mi = 0; mi < messages.size(); ++mi) {
    const MessageDef& def = messages[mi];
    FastMessage& m = t->messages[mi];
    if (def.msg_type.size() == 1)
      t->by_char[static_cast<unsigned char>(def.msg_type[0])] = static_cast<std::int16_t>(mi);
    m.usable = def.fields.member_info.size() == def.fields.members.size() &&
               d.header().member_info.size() == d.header().members.size() &&
               d.trailer().member_info.size() == d.trailer().members.size();
    // Slots for every tag the parser indexes (find() is O(1) there), so
    // that the field loop's bound is a constant.
    m.slot.assign(MessageView::kIndexedTags, 0);
    m.entries.emplace_back();  // slot 0: not a field of this message (section kNone)
    unsigned bits = 0;
    auto add = [&](const FieldSet& set, FieldSection section) {
      for (std::size_t p = 0; p < set.members.size(); ++p) {
        const FieldSet::Member& member = set.members[p];
        const int tag = member.tag;
        if (section == FieldSection::kBody &&
            (d.tag_info(tag).flags & (TagInfo::kHeader | TagInfo::kTrailer)) != 0) {
          // The general pass handles such a field as a header or trailer
          // field, so a body requirement on it is never met there.
          if (member.required) m.usable = false;
          continue;
        }
        if (tag <= 0 || tag >= MessageView::kIndexedTags || m.slot[static_cast<std::size_t>(tag)] != 0)
          continue;
        FastEntry e = entry_of(set, p, section);
        // Groups are walked in the body only.
        if (section != FieldSection::kBody && e.check == ValueCheck::kGroup) e.section = FieldSection::kNone;
        if (member.required) {
          if (bits == 64)
            m.usable = false;
          else
            e.required = std::uint64_t{1} << bits++;
        }
        m.required |= e.required;
        if (m.entries.size() >= 0xffff) {
          m.usable = false;
          continue;
        }
        m.slot[static_cast<std::size_t>(tag)] = static_cast<std::uint16_t>(m.entries.size());
        m.entries.push_back(e);
      }
    };
    add(d.header(), FieldSection::kHeader);
    add(d.trailer(), FieldSection::kTrailer);
    add(def.fields, FieldSection::kBody);
    // This table is only used for messages whose MsgType is this one, so the
    // MsgType's own check is known here: drop it when it passes.
    if (m.slot[tag::kMsgType] != 0) {
      FastEntry& type = m.entries[m.slot[tag::kMsgType]];
      const TagInfo type_info = d.tag_info(tag::kMsgType);
      if ((type.check == ValueCheck::kEnumChar || type.check == ValueCheck::kEnumHash) &&
          detail::enum_contains(d, tag::kMsgType, type_info, def.msg_type)) {
        type.check = ValueCheck::kAny;
      }
    }
    // A required field beyond the slots can never be seen here.
    for (const FieldSet* set : {&d.header(), &d.trailer(), &def.fields}) {
      for (const FieldSet::Member& member : set->members) {
        if (member.required && (member.tag <= 0 || member.tag >= MessageView::kIndexedTags)) m.usable = false;
      }
    }
  }
  return t;
}

}  // namespace detail

bool value_has_type_format(FieldType type, std::string_view value) noexcept {
  switch (type) {
    case FieldType::kInt:
    case FieldType::kLength:
    case FieldType::kNumInGroup:
    case FieldType::kSeqNum:
    case FieldType::kDayOfMonth:
      return valid_int(value);
    case FieldType::kFloat:
    case FieldType::kQty:
    case FieldType::kPrice:
    case FieldType::kPriceOffset:
    case FieldType::kAmt:
    case FieldType::kPercentage:
      return valid_float(value);
    case FieldType::kChar:
      return value.size() == 1;
    case FieldType::kBoolean:
      return value.size() == 1 && (value[0] == 'Y' || value[0] == 'N');
    case FieldType::kUtcTimestamp:
      return valid_utc_timestamp(value);
    case FieldType::kUtcTimeOnly:
      return valid_time(value, 0);
    case FieldType::kUtcDateOnly:
      return value.size() == 8 && valid_date(value);
    default:
      return true;
  }
}

// Each path in its own function, so that neither burdens the other's
// registers or stack frame.
[[gnu::noinline]] bool detail::clean_message_valid(const Dictionary& d, const MessageView& message) noexcept {
  const detail::FastTables* tables = d.validation_tables_.get();
  return tables != nullptr && tables->messages.size() == d.messages().size() &&
         CleanPath(d, *tables, message).run();
}

[[gnu::noinline]] ValidationResult detail::general_validation(const Dictionary& d, const ValidationOptions& o,
                                                              const MessageView& message) noexcept {
  Pass pass(d, o, message);
  return pass.run();
}

ValidationResult Validator::validate(const MessageView& message) const noexcept {
  if (detail::clean_message_valid(*dict_, message)) return {};
  return detail::general_validation(*dict_, options_, message);
}

}  // namespace hft::codec
