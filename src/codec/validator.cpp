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
// QuickFIX checks fields after sorting each section by tag, so when a message
// has several faults it reports the one on the smallest tag. Here the pass is
// in message order, and every fault gets a sort key (section, tag, position);
// the smallest key wins. Keys are only computed on faults, so a clean message
// pays nothing for this.

#include "hft/codec/validator.hpp"

#include <cstring>
#include <limits>

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

}  // namespace

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

ValidationResult Validator::validate(const MessageView& message) const noexcept {
  Pass pass(*dict_, options_, message);
  return pass.run();
}

}  // namespace hft::codec
