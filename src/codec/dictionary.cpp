// Loading QuickFIX XML dictionaries with expat into a small element tree, then
// flattening it into the dense tables of Dictionary.
//
// The tree is needed because the files declare <fields> and <components>
// after the <messages> that use them. Errors are returned, never thrown: the
// codec layer builds with -fno-exceptions.

#include "hft/codec/dictionary.hpp"

#include <expat.h>

#include "codec/validation_tables.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <unordered_map>

namespace hft::codec {

// ---------------------------------------------------------------------------
// Types

namespace {
struct TypeName {
  std::string_view name;
  FieldType type;
};
constexpr TypeName kTypeNames[] = {
    {"STRING", FieldType::kString},
    {"CHAR", FieldType::kChar},
    {"BOOLEAN", FieldType::kBoolean},
    {"INT", FieldType::kInt},
    {"LENGTH", FieldType::kLength},
    {"NUMINGROUP", FieldType::kNumInGroup},
    {"SEQNUM", FieldType::kSeqNum},
    {"TAGNUM", FieldType::kTagNum},
    {"DAYOFMONTH", FieldType::kDayOfMonth},
    {"FLOAT", FieldType::kFloat},
    {"QTY", FieldType::kQty},
    {"PRICE", FieldType::kPrice},
    {"PRICEOFFSET", FieldType::kPriceOffset},
    {"AMT", FieldType::kAmt},
    {"PERCENTAGE", FieldType::kPercentage},
    {"UTCTIMESTAMP", FieldType::kUtcTimestamp},
    {"UTCTIMEONLY", FieldType::kUtcTimeOnly},
    {"UTCDATEONLY", FieldType::kUtcDateOnly},
    {"LOCALMKTDATE", FieldType::kLocalMktDate},
    {"TZTIMEONLY", FieldType::kTzTimeOnly},
    {"TZTIMESTAMP", FieldType::kTzTimestamp},
    {"MONTHYEAR", FieldType::kMonthYear},
    {"DATA", FieldType::kData},
    {"XMLDATA", FieldType::kXmlData},
    {"MULTIPLEVALUESTRING", FieldType::kMultipleValueString},
    {"MULTIPLECHARVALUE", FieldType::kMultipleCharValue},
    {"MULTIPLESTRINGVALUE", FieldType::kMultipleStringValue},
    {"CURRENCY", FieldType::kCurrency},
    {"EXCHANGE", FieldType::kExchange},
    {"COUNTRY", FieldType::kCountry},
    {"LANGUAGE", FieldType::kLanguage},
    {"TENOR", FieldType::kTenor},
};
}  // namespace

FieldType parse_field_type(std::string_view name) noexcept {
  for (const auto& t : kTypeNames) {
    if (t.name == name) return t.type;
  }
  if (name == "TIME") return FieldType::kUtcTimestamp;  // FIX.4.0/4.1 spelling
  if (name == "UTCDATE") return FieldType::kUtcDateOnly;
  return FieldType::kUnknown;
}

std::string_view to_string(FieldType type) noexcept {
  for (const auto& t : kTypeNames) {
    if (t.type == type) return t.name;
  }
  return "UNKNOWN";
}

// ---------------------------------------------------------------------------
// FieldDef / FieldSet

std::string_view FieldDef::enum_name(std::string_view value) const noexcept {
  for (std::size_t i = 0; i < enum_values.size(); ++i) {
    if (enum_values[i] == value) return enum_names[i];
  }
  return {};
}

namespace {
bool is_multi_value(FieldType t) noexcept {
  return t == FieldType::kMultipleValueString || t == FieldType::kMultipleCharValue ||
         t == FieldType::kMultipleStringValue;
}
}  // namespace

bool FieldDef::enum_allows(std::string_view value) const noexcept {
  if (enum_values.empty()) return true;
  auto one = [this](std::string_view v) {
    return std::find(enum_values.begin(), enum_values.end(), v) != enum_values.end();
  };
  if (!is_multi_value(type)) return one(value);
  std::size_t start = 0;
  while (true) {
    const std::size_t sp = value.find(' ', start);
    if (!one(value.substr(start, sp == std::string_view::npos ? std::string_view::npos : sp - start))) {
      return false;
    }
    if (sp == std::string_view::npos) return true;
    start = sp + 1;
  }
}

int FieldSet::sparse_position(int tag) const noexcept {
  auto it = std::lower_bound(sparse_positions.begin(), sparse_positions.end(), tag,
                             [](const std::pair<int, std::uint16_t>& p, int t) { return p.first < t; });
  if (it == sparse_positions.end() || it->first != tag) return -1;
  return static_cast<int>(it->second) - 1;
}

// ---------------------------------------------------------------------------
// Lookups

const FieldDef* Dictionary::field_by_name(std::string_view name) const noexcept {
  for (const auto& f : fields_) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

const MessageDef* Dictionary::message(std::string_view msg_type) const noexcept {
  if (msg_type.empty() || message_slot_.empty()) return nullptr;
  if (msg_type.size() > 8) {
    for (const auto& m : messages_) {
      if (m.msg_type == msg_type) return &m;
    }
    return nullptr;
  }
  const std::uint64_t key = detail::pack_key(msg_type);
  const std::size_t mask = message_slot_.size() - 1;
  for (std::size_t i = detail::hash_key(key) & mask;; i = (i + 1) & mask) {
    const std::int32_t idx = message_slot_[i];
    if (idx < 0) return nullptr;
    if (message_key_[i] == key) return &messages_[static_cast<std::size_t>(idx)];
  }
}

bool Dictionary::enum_allows(int tag, std::string_view value) const noexcept {
  const TagInfo info = tag_info(tag);
  if ((info.flags & TagInfo::kEnum) == 0) return true;
  return detail::enum_contains(*this, tag, info, value);
}

namespace detail {

bool enum_contains_one(const Dictionary& d, int tag, const TagInfo& info, std::string_view v) noexcept {
  if (v.size() > 8 || v.empty()) {
    if ((info.flags & TagInfo::kLongEnum) == 0 || v.empty()) return false;
    const FieldDef* f = d.field(tag);
    return f != nullptr && std::find(f->enum_values.begin(), f->enum_values.end(), v) != f->enum_values.end();
  }
  const std::uint64_t* table = d.enum_keys_.data() + info.enum_offset;
  if (info.enum_bits == 0) {
    if (v.size() != 1) return false;
    const auto c = static_cast<unsigned char>(v[0]);
    return (table[c >> 6] >> (c & 63) & 1) != 0;
  }
  const std::uint64_t key = detail::pack_key(v);
  const std::size_t mask = (std::size_t{1} << info.enum_bits) - 1;
  for (std::size_t i = detail::hash_key(key) & mask;; i = (i + 1) & mask) {
    const std::uint64_t k = table[i];
    if (k == key) return true;
    if (k == 0) return false;
  }
}

bool enum_contains_multi(const Dictionary& d, int tag, const TagInfo& info, std::string_view value) noexcept {
  std::size_t start = 0;
  while (true) {
    const std::size_t sp = value.find(' ', start);
    const std::string_view item =
        value.substr(start, sp == std::string_view::npos ? std::string_view::npos : sp - start);
    if (!enum_contains_one(d, tag, info, item)) return false;
    if (sp == std::string_view::npos) return true;
    start = sp + 1;
  }
}

}  // namespace detail

namespace {
void finalize_set(FieldSet& set) {
  // Keep the first occurrence of a tag (a component may repeat a field the
  // message already has; QuickFIX keeps sets too).
  std::vector<FieldSet::Member> unique;
  unique.reserve(set.members.size());
  std::unordered_map<int, bool> seen;
  for (const auto& m : set.members) {
    if (seen.emplace(m.tag, true).second) unique.push_back(m);
  }
  set.members = std::move(unique);
  int max_dense = 0;
  set.required_count = 0;
  set.sparse_positions.clear();
  for (std::size_t i = 0; i < set.members.size(); ++i) {
    const auto& m = set.members[i];
    if (m.required) ++set.required_count;
    if (m.tag < FieldSet::kDenseTagLimit) {
      max_dense = std::max(max_dense, m.tag);
    } else {
      set.sparse_positions.emplace_back(m.tag, static_cast<std::uint16_t>(i + 1));
    }
  }
  set.position_of.assign(static_cast<std::size_t>(max_dense) + (set.members.empty() ? 0 : 1), 0);
  for (std::size_t i = 0; i < set.members.size(); ++i) {
    const int t = set.members[i].tag;
    if (t < FieldSet::kDenseTagLimit)
      set.position_of[static_cast<std::size_t>(t)] = static_cast<std::uint16_t>(i + 1);
  }
  std::sort(set.sparse_positions.begin(), set.sparse_positions.end());
}

bool has_format(FieldType t) noexcept {
  switch (t) {
    case FieldType::kChar:
    case FieldType::kBoolean:
    case FieldType::kInt:
    case FieldType::kLength:
    case FieldType::kNumInGroup:
    case FieldType::kSeqNum:
    case FieldType::kDayOfMonth:
    case FieldType::kFloat:
    case FieldType::kQty:
    case FieldType::kPrice:
    case FieldType::kPriceOffset:
    case FieldType::kAmt:
    case FieldType::kPercentage:
    case FieldType::kUtcTimestamp:
    case FieldType::kUtcTimeOnly:
    case FieldType::kUtcDateOnly:
      return true;
    default:
      return false;
  }
}

void finalize(Dictionary& d) {
  finalize_set(d.header_);
  finalize_set(d.trailer_);
  for (auto& g : d.groups_) {
    finalize_set(g.fields);
    g.delimiter_tag = g.fields.members.empty() ? 0 : g.fields.members.front().tag;
  }
  for (auto& m : d.messages_) finalize_set(m.fields);

  // Fields by tag.
  int max_tag = 0;
  for (const auto& f : d.fields_) max_tag = std::max(max_tag, f.tag);
  d.field_index_.assign(static_cast<std::size_t>(max_tag) + 1, -1);
  for (std::size_t i = 0; i < d.fields_.size(); ++i) {
    d.field_index_[static_cast<std::size_t>(d.fields_[i].tag)] = static_cast<int>(i);
  }

  // Validation facts per tag. Before FIX.4.2 CHAR was any string (QuickFIX
  // treats it so too).
  const bool old_char = d.version_ == "FIX.4.0" || d.version_ == "FIX.4.1";
  d.tag_info_.assign(d.field_index_.size(), TagInfo{});
  d.enum_keys_.clear();
  for (const auto& f : d.fields_) {
    TagInfo info;
    info.check_type = (old_char && f.type == FieldType::kChar) ? FieldType::kString : f.type;
    info.flags = TagInfo::kDefined;
    if (has_format(info.check_type)) info.flags |= TagInfo::kFormat;
    if (is_multi_value(f.type)) info.flags |= TagInfo::kMultiValue;
    const bool single_chars =
        !f.enum_values.empty() && std::all_of(f.enum_values.begin(), f.enum_values.end(),
                                              [](const std::string& v) { return v.size() == 1; });
    if (single_chars) {
      // One-byte values (Side, OrdStatus, ...): a 256-bit set, enum_bits 0.
      info.flags |= TagInfo::kEnum;
      info.enum_bits = 0;
      info.enum_offset = static_cast<std::uint32_t>(d.enum_keys_.size());
      d.enum_keys_.resize(d.enum_keys_.size() + 4, 0);
      std::uint64_t* bits = d.enum_keys_.data() + info.enum_offset;
      for (const auto& v : f.enum_values) {
        const auto c = static_cast<unsigned char>(v[0]);
        bits[c >> 6] |= std::uint64_t{1} << (c & 63);
      }
    } else if (!f.enum_values.empty()) {
      info.flags |= TagInfo::kEnum;
      std::size_t size = 2;
      std::uint8_t bits = 1;
      while (size < 2 * f.enum_values.size()) {
        size <<= 1;
        ++bits;
      }
      info.enum_bits = bits;
      info.enum_offset = static_cast<std::uint32_t>(d.enum_keys_.size());
      d.enum_keys_.resize(d.enum_keys_.size() + size, 0);
      std::uint64_t* table = d.enum_keys_.data() + info.enum_offset;
      for (const auto& v : f.enum_values) {
        if (v.size() > 8 || v.empty()) {
          info.flags |= TagInfo::kLongEnum;
          continue;
        }
        const std::uint64_t key = detail::pack_key(v);
        for (std::size_t i = detail::hash_key(key) & (size - 1);; i = (i + 1) & (size - 1)) {
          if (table[i] == key) break;
          if (table[i] == 0) {
            table[i] = key;
            break;
          }
        }
      }
    }
    d.tag_info_[static_cast<std::size_t>(f.tag)] = info;
  }
  for (auto& info : d.tag_info_) info.slot = TagInfo::kNoSlot;
  auto mark_section = [&d](const FieldSet& set, std::uint8_t flag) {
    for (std::size_t i = 0; i < set.members.size(); ++i) {
      const auto& m = set.members[i];
      if (static_cast<std::size_t>(m.tag) >= d.tag_info_.size()) continue;
      TagInfo& info = d.tag_info_[static_cast<std::size_t>(m.tag)];
      info.flags |= flag;
      if (m.required) info.flags |= TagInfo::kRequired;
      info.slot = i < TagInfo::kNoSlot ? static_cast<std::uint8_t>(i) : TagInfo::kNoSlot;
    }
  };
  mark_section(d.header_, TagInfo::kHeader);
  mark_section(d.trailer_, TagInfo::kTrailer);
  auto fill_info = [&d](FieldSet& set) {
    set.member_info.resize(set.members.size());
    for (std::size_t i = 0; i < set.members.size(); ++i) {
      TagInfo info = d.tag_info(set.members[i].tag);
      info.flags = static_cast<std::uint8_t>(info.flags & ~TagInfo::kRequired);
      if (set.members[i].required) info.flags |= TagInfo::kRequired;
      info.slot = set.members[i].group >= 0 ? 1 : 0;
      set.member_info[i] = info;
    }
  };
  fill_info(d.header_);
  fill_info(d.trailer_);
  for (auto& g : d.groups_) fill_info(g.fields);
  for (auto& m : d.messages_) fill_info(m.fields);

  // Messages by packed type, load factor <= 1/4 so probes stay short.
  std::size_t slots = 8;
  while (slots < 4 * d.messages_.size()) slots <<= 1;
  d.message_slot_.assign(slots, -1);
  d.message_key_.assign(slots, 0);
  for (std::size_t i = 0; i < d.messages_.size(); ++i) {
    const std::string& t = d.messages_[i].msg_type;
    if (t.empty() || t.size() > 8) continue;
    const std::uint64_t key = detail::pack_key(t);
    for (std::size_t s = detail::hash_key(key) & (slots - 1);; s = (s + 1) & (slots - 1)) {
      if (d.message_slot_[s] < 0) {
        d.message_slot_[s] = static_cast<std::int32_t>(i);
        d.message_key_[s] = key;
        break;
      }
    }
  }

  d.validation_tables_ = detail::build_fast_tables(d);
}

// ---------------------------------------------------------------------------
// XML tree

struct XmlNode {
  std::string name;
  std::vector<std::pair<std::string, std::string>> attrs;
  std::vector<int> children;
  int line = 0;

  const std::string* attr(std::string_view key) const {
    for (const auto& a : attrs) {
      if (a.first == key) return &a.second;
    }
    return nullptr;
  }
};

struct XmlTree {
  std::vector<XmlNode> nodes;
  std::vector<int> stack;
  XML_Parser parser = nullptr;
};

void on_start(void* data, const XML_Char* name, const XML_Char** attrs) {
  auto* tree = static_cast<XmlTree*>(data);
  XmlNode node;
  node.name = name;
  node.line = static_cast<int>(XML_GetCurrentLineNumber(tree->parser));
  for (int i = 0; attrs[i] != nullptr; i += 2) node.attrs.emplace_back(attrs[i], attrs[i + 1]);
  const int index = static_cast<int>(tree->nodes.size());
  tree->nodes.push_back(std::move(node));
  if (!tree->stack.empty())
    tree->nodes[static_cast<std::size_t>(tree->stack.back())].children.push_back(index);
  tree->stack.push_back(index);
}

void on_end(void* data, const XML_Char*) {
  auto* tree = static_cast<XmlTree*>(data);
  tree->stack.pop_back();
}

bool is_required(const XmlNode& n) {
  const std::string* r = n.attr("required");
  return r != nullptr && (*r == "Y" || *r == "y");
}

class Loader {
 public:
  explicit Loader(const std::string& name) : name_(name) {}

  bool parse(std::string_view xml) {
    XML_Parser p = XML_ParserCreate(nullptr);
    tree_.parser = p;
    XML_SetUserData(p, &tree_);
    XML_SetElementHandler(p, on_start, on_end);
    bool ok = true;
    // XML_Parse takes an int length: feed large texts in chunks.
    std::size_t pos = 0;
    do {
      const std::size_t n = std::min<std::size_t>(xml.size() - pos, 1 << 30);
      const bool last = pos + n == xml.size();
      if (XML_Parse(p, xml.data() + pos, static_cast<int>(n), last ? 1 : 0) == XML_STATUS_ERROR) {
        ok = fail(static_cast<int>(XML_GetCurrentLineNumber(p)),
                  std::string("malformed XML: ") + XML_ErrorString(XML_GetErrorCode(p)));
        break;
      }
      pos += n;
    } while (pos < xml.size());
    XML_ParserFree(p);
    tree_.parser = nullptr;
    if (ok && tree_.nodes.empty()) ok = fail(1, "malformed XML: no root element");
    return ok;
  }

  bool build(Dictionary& d) {
    const XmlNode& root = tree_.nodes[0];
    if (root.name != "fix") return fail(root.line, "root element is <" + root.name + ">, expected <fix>");
    std::string type = "FIX";
    if (const auto* t = root.attr("type")) type = *t;
    if (type != "FIX" && type != "FIXT")
      return fail(root.line, "<fix> type must be FIX or FIXT, not '" + type + "'");
    const std::string* major = root.attr("major");
    if (major == nullptr) return missing(root, "major");
    const std::string* minor = root.attr("minor");
    if (minor == nullptr) return missing(root, "minor");
    int sp = 0;
    if (const auto* s = root.attr("servicepack")) {
      if (!parse_number(*s, sp) && !s->empty()) return fail(root.line, "bad servicepack '" + *s + "'");
    }
    d.version_ = type + "." + *major + "." + *minor + (sp > 0 ? "SP" + std::to_string(sp) : "");
    const bool app_only = type == "FIX" && *major >= "5";
    d.begin_string_ = app_only ? "FIXT.1.1" : type + "." + *major + "." + *minor;

    int header = -1, trailer = -1, messages = -1, components = -1, fields = -1;
    for (int c : root.children) {
      const std::string& n = node(c).name;
      if (n == "header")
        header = c;
      else if (n == "trailer")
        trailer = c;
      else if (n == "messages")
        messages = c;
      else if (n == "components")
        components = c;
      else if (n == "fields")
        fields = c;
    }
    if (fields < 0) return fail(root.line, "missing <fields> section");
    if (messages < 0) return fail(root.line, "missing <messages> section");
    if (!app_only && header < 0) return fail(root.line, "missing <header> section");
    if (!app_only && trailer < 0) return fail(root.line, "missing <trailer> section");

    if (!load_fields(d, node(fields))) return false;
    if (components >= 0 && !index_components(node(components))) return false;
    if (header >= 0 && !expand(d, node(header), d.header_, true)) return false;
    std::vector<int> trailer_lines;
    if (trailer >= 0 && !expand(d, node(trailer), d.trailer_, true, &trailer_lines)) return false;
    // A field is the header's or the trailer's, never both: a message has one
    // place for it, and validation could not tell which requirement it meets.
    for (std::size_t i = 0; i < d.trailer_.members.size(); ++i) {
      const int tag = d.trailer_.members[i].tag;
      for (const auto& m : d.header_.members) {
        if (m.tag == tag)
          return fail(trailer_lines[i], "field " + name_of_tag(tag) + " (" + std::to_string(tag) +
                                            ") is in both <header> and <trailer>");
      }
    }
    if (!load_messages(d, node(messages))) return false;
    finalize(d);
    return true;
  }

  const std::string& error() const { return error_; }

 private:
  const XmlNode& node(int i) const { return tree_.nodes[static_cast<std::size_t>(i)]; }

  bool fail(int line, const std::string& problem) {
    error_ = name_ + ":" + std::to_string(line) + ": " + problem;
    return false;
  }
  bool missing(const XmlNode& n, std::string_view attr) {
    return fail(n.line, "<" + n.name + "> is missing attribute '" + std::string(attr) + "'");
  }

  static bool parse_number(const std::string& s, int& out) {
    if (s.empty() || s.size() > 9) return false;
    int v = 0;
    for (char c : s) {
      if (c < '0' || c > '9') return false;
      v = v * 10 + (c - '0');
    }
    out = v;
    return true;
  }

  bool load_fields(Dictionary& d, const XmlNode& section) {
    std::unordered_map<int, int> line_of_tag;
    for (int c : section.children) {
      const XmlNode& n = node(c);
      if (n.name != "field") continue;
      const std::string* number = n.attr("number");
      if (number == nullptr) return missing(n, "number");
      const std::string* name = n.attr("name");
      if (name == nullptr) return missing(n, "name");
      const std::string* type = n.attr("type");
      if (type == nullptr) return missing(n, "type");
      int tag = 0;
      // Tags are positive; the bound keeps the dense per-tag tables small.
      if (!parse_number(*number, tag) || tag <= 0 || tag > kMaxTag) {
        return fail(n.line, "bad field number '" + *number + "' for field " + *name);
      }
      if (auto it = line_of_tag.find(tag); it != line_of_tag.end()) {
        return fail(n.line, "duplicate field number " + *number + " (" + *name + "; first defined at line " +
                                std::to_string(it->second) + ")");
      }
      if (tag_of_name_.count(*name) != 0) return fail(n.line, "duplicate field name '" + *name + "'");
      line_of_tag.emplace(tag, n.line);
      tag_of_name_.emplace(*name, tag);
      FieldDef f;
      f.tag = tag;
      f.name = *name;
      f.type = parse_field_type(*type);
      for (int v : n.children) {
        const XmlNode& vn = node(v);
        if (vn.name != "value") continue;
        const std::string* e = vn.attr("enum");
        if (e == nullptr) return missing(vn, "enum");
        const std::string* desc = vn.attr("description");
        f.enum_values.push_back(*e);
        f.enum_names.push_back(desc != nullptr ? *desc : std::string());
      }
      d.fields_.push_back(std::move(f));
    }
    // A LENGTH field directly followed by a DATA field in the list gives the
    // DATA field's byte count (RawDataLength/RawData, XmlDataLen/XmlData, ...).
    for (std::size_t i = 0; i + 1 < d.fields_.size(); ++i) {
      if (d.fields_[i].type == FieldType::kLength &&
          (d.fields_[i + 1].type == FieldType::kData || d.fields_[i + 1].type == FieldType::kXmlData)) {
        d.fields_[i].data_tag = d.fields_[i + 1].tag;
      }
    }
    return true;
  }

  bool index_components(const XmlNode& section) {
    for (int c : section.children) {
      const XmlNode& n = node(c);
      if (n.name != "component") continue;
      const std::string* name = n.attr("name");
      if (name == nullptr) return missing(n, "name");
      if (!components_.emplace(*name, c).second) return fail(n.line, "duplicate component '" + *name + "'");
    }
    return true;
  }

  bool load_messages(Dictionary& d, const XmlNode& section) {
    std::unordered_map<std::string, int> line_of_type;
    for (int c : section.children) {
      const XmlNode& n = node(c);
      if (n.name != "message") continue;
      const std::string* type = n.attr("msgtype");
      if (type == nullptr) return missing(n, "msgtype");
      const std::string* name = n.attr("name");
      if (name == nullptr) return missing(n, "name");
      if (type->empty()) return fail(n.line, "empty msgtype for message " + *name);
      if (auto it = line_of_type.find(*type); it != line_of_type.end()) {
        return fail(n.line, "duplicate msgtype '" + *type + "' (first defined at line " +
                                std::to_string(it->second) + ")");
      }
      line_of_type.emplace(*type, n.line);
      MessageDef m;
      m.msg_type = *type;
      m.name = *name;
      const std::string* cat = n.attr("msgcat");
      m.admin = cat != nullptr && *cat == "admin";
      if (!expand(d, n, m.fields, true)) return false;
      d.messages_.push_back(std::move(m));
    }
    return true;
  }

  bool lookup_field(const XmlNode& n, int& tag) {
    const std::string* name = n.attr("name");
    if (name == nullptr) return missing(n, "name");
    auto it = tag_of_name_.find(*name);
    if (it == tag_of_name_.end()) return fail(n.line, "unknown field '" + *name + "' referenced");
    tag = it->second;
    return true;
  }

  // Appends the fields of `parent`'s children to `set`, expanding components
  // in place. `required_context` is false inside an optional component.
  // `lines`, if given, gets the XML line of each member added to `set`.
  bool expand(Dictionary& d, const XmlNode& parent, FieldSet& set, bool required_context,
              std::vector<int>* lines = nullptr) {
    for (int c : parent.children) {
      const XmlNode& n = node(c);
      if (n.name == "field") {
        int tag = 0;
        if (!lookup_field(n, tag)) return false;
        set.members.push_back({tag, required_context && is_required(n), -1});
        if (lines != nullptr) lines->push_back(n.line);
      } else if (n.name == "group") {
        int tag = 0;
        if (!lookup_field(n, tag)) return false;
        int index = -1;
        if (!build_group(d, c, tag, index)) return false;
        set.members.push_back({tag, required_context && is_required(n), index});
        if (lines != nullptr) lines->push_back(n.line);
      } else if (n.name == "component") {
        const std::string* name = n.attr("name");
        if (name == nullptr) return missing(n, "name");
        auto it = components_.find(*name);
        if (it == components_.end()) return fail(n.line, "unknown component '" + *name + "' referenced");
        if (std::find(active_.begin(), active_.end(), *name) != active_.end()) {
          std::string cycle;
          for (const auto& a : active_) cycle += a + " -> ";
          return fail(n.line, "component cycle: " + cycle + *name);
        }
        active_.push_back(*name);
        const bool ok = expand(d, node(it->second), set, required_context && is_required(n), lines);
        active_.pop_back();
        if (!ok) return false;
      }
    }
    return true;
  }

  // One GroupDef per <group> element: a group inside a component used by many
  // messages is built once (FIX 5.0SP2 has ~26,000 uses of ~560 groups).
  bool build_group(Dictionary& d, int group_node, int count_tag, int& index) {
    if (auto it = group_of_node_.find(group_node); it != group_of_node_.end()) {
      index = it->second;
      return true;
    }
    GroupDef g;
    g.count_tag = count_tag;
    if (!expand(d, node(group_node), g.fields, true)) return false;
    if (!g.fields.members.empty()) g.delimiter_tag = g.fields.members.front().tag;
    index = static_cast<int>(d.groups_.size());
    d.groups_.push_back(std::move(g));
    group_of_node_.emplace(group_node, index);
    return true;
  }

  std::string name_of_tag(int tag) const {
    for (const auto& [name, t] : tag_of_name_) {
      if (t == tag) return name;
    }
    return std::to_string(tag);
  }

  static constexpr int kMaxTag = 999999;

  std::string name_;
  std::string error_;
  XmlTree tree_;
  std::unordered_map<std::string, int> tag_of_name_;
  std::unordered_map<std::string, int> components_;
  std::unordered_map<int, int> group_of_node_;
  std::vector<std::string> active_;
};

}  // namespace

Expected<std::shared_ptr<const Dictionary>> Dictionary::load_string(std::string_view xml,
                                                                    const std::string& name) {
  Loader loader(name);
  auto d = std::make_shared<Dictionary>();
  if (!loader.parse(xml) || !loader.build(*d)) return Error{loader.error()};
  return std::shared_ptr<const Dictionary>(std::move(d));
}

Expected<std::shared_ptr<const Dictionary>> Dictionary::load_file(const std::string& path) {
  // Read whole into a string of the file's size (a copy through an
  // ostringstream grew its buffer step by step: 6% of a one-session start).
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    const std::string why = ec ? ec.message() : std::string("not a regular file");
    return Error{path + ":0: cannot open dictionary file (" + why + ")"};
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Error{path + ":0: cannot open dictionary file (" + std::strerror(errno) + ")"};
  }
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) return Error{path + ":0: cannot read dictionary file (" + ec.message() + ")"};
  std::string text(static_cast<std::size_t>(size), '\0');
  if (size > 0 && !in.read(text.data(), static_cast<std::streamsize>(size)))
    return Error{path + ":0: cannot read dictionary file"};
  return load_string(text, path);
}

// ---------------------------------------------------------------------------
// Combine

std::shared_ptr<const Dictionary> Dictionary::combine(const Dictionary& transport, const Dictionary& app) {
  auto d = std::make_shared<Dictionary>();
  d->version_ = app.version_;
  d->begin_string_ = transport.begin_string_;
  d->fields_ = transport.fields_;
  for (const auto& f : app.fields_) {
    if (transport.field(f.tag) == nullptr) d->fields_.push_back(f);
  }
  std::sort(d->fields_.begin(), d->fields_.end(),
            [](const FieldDef& a, const FieldDef& b) { return a.tag < b.tag; });
  d->groups_ = transport.groups_;
  const int offset = static_cast<int>(d->groups_.size());
  auto shift = [offset](FieldSet& set) {
    for (auto& m : set.members) {
      if (m.group >= 0) m.group += offset;
    }
  };
  for (GroupDef g : app.groups_) {
    shift(g.fields);
    d->groups_.push_back(std::move(g));
  }
  d->header_ = transport.header_;
  d->trailer_ = transport.trailer_;
  d->messages_ = transport.messages_;
  for (const auto& m : app.messages_) {
    if (transport.message(m.msg_type) != nullptr) continue;
    MessageDef copy = m;
    shift(copy.fields);
    d->messages_.push_back(std::move(copy));
  }
  finalize(*d);
  return d;
}

}  // namespace hft::codec
