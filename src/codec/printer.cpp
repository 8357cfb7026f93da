// Log and tool rendering. Splits the text itself (not through MessageView) so
// that it prints whatever it is given, including messages that do not parse.

#include "hft/codec/printer.hpp"

#include <charconv>
#include <vector>

#include "hft/codec/types.hpp"

namespace hft::codec {

namespace {

struct RawField {
  int tag = 0;  // 0 when the tag text is not a number
  std::string_view tag_text;
  std::string_view value;
};

// Splits on SOH; a field announced by a LENGTH field (dictionary data_tag or
// the built-in pairs) is read by its length, so binary data prints whole.
std::vector<RawField> split(std::string_view text, const Dictionary* dict) {
  std::vector<RawField> out;
  std::size_t pos = 0;
  int data_tag = 0;
  std::size_t data_length = 0;
  while (pos < text.size()) {
    const std::size_t eq = text.find('=', pos);
    const std::size_t soh = text.find(kSoh, pos);
    RawField f;
    if (eq == std::string_view::npos || (soh != std::string_view::npos && soh < eq)) {
      // No '=' in this field: print it as a value without tag.
      const std::size_t end = soh == std::string_view::npos ? text.size() : soh;
      f.value = text.substr(pos, end - pos);
      out.push_back(f);
      pos = end + 1;
      data_tag = 0;
      continue;
    }
    f.tag_text = text.substr(pos, eq - pos);
    int tag = 0;
    const auto [ptr, ec] = std::from_chars(f.tag_text.data(), f.tag_text.data() + f.tag_text.size(), tag);
    f.tag = (ec == std::errc() && ptr == f.tag_text.data() + f.tag_text.size()) ? tag : 0;
    const std::size_t v = eq + 1;
    std::size_t end;
    if (data_tag != 0 && f.tag == data_tag && v + data_length <= text.size()) {
      end = v + data_length;
    } else {
      end = text.find(kSoh, v);
      if (end == std::string_view::npos) end = text.size();
    }
    f.value = text.substr(v, end - v);
    out.push_back(f);
    pos = end + 1;
    data_tag = 0;
    int d = 0;
    const FieldDef* def = dict != nullptr ? dict->field(f.tag) : nullptr;
    if (def != nullptr && def->data_tag != 0)
      d = def->data_tag;
    else if (!is_length_tag(f.tag, d))
      d = 0;
    if (d != 0) {
      std::size_t len = 0;
      const auto [p2, ec2] = std::from_chars(f.value.data(), f.value.data() + f.value.size(), len);
      if (ec2 == std::errc() && p2 == f.value.data() + f.value.size()) {
        data_tag = d;
        data_length = len;
      }
    }
  }
  return out;
}

std::string_view tag_name(const Dictionary& dict, const RawField& f) {
  const FieldDef* def = dict.field(f.tag);
  return def != nullptr ? std::string_view(def->name) : std::string_view();
}

// "NewOrderSingle" for 35=D, "BUY" for 54=1, empty if none.
std::string_view value_name(const Dictionary& dict, const RawField& f) {
  if (f.tag == tag::kMsgType) {
    if (const MessageDef* m = dict.message(f.value)) return m->name;
  }
  const FieldDef* def = dict.field(f.tag);
  return def != nullptr ? def->enum_name(f.value) : std::string_view();
}

void append_tag(std::string& out, const Dictionary& dict, const RawField& f) {
  const std::string_view name = tag_name(dict, f);
  if (!name.empty())
    out += name;
  else
    out += f.tag_text;
}

}  // namespace

std::string to_printable(std::string_view message, char separator) {
  std::string out(message);
  for (char& c : out) {
    if (c == kSoh) c = separator;
  }
  return out;
}

std::string to_named(std::string_view message, const Dictionary& dictionary, char separator) {
  std::string out;
  out.reserve(message.size() * 2);
  for (const RawField& f : split(message, &dictionary)) {
    if (!f.tag_text.empty()) {
      append_tag(out, dictionary, f);
      out += '=';
    }
    const std::string_view vn = value_name(dictionary, f);
    if (!vn.empty()) {
      out += vn;
      out += '(';
      out += f.value;
      out += ')';
    } else {
      out += f.value;
    }
    out += separator;
  }
  return out;
}

namespace {

class TreePrinter {
 public:
  TreePrinter(const Dictionary& dict, const std::vector<RawField>& fields) : dict_(dict), fields_(fields) {}

  std::string run() {
    const MessageDef* def = nullptr;
    for (const auto& f : fields_) {
      if (f.tag == tag::kMsgType) {
        def = dict_.message(f.value);
        break;
      }
    }
    std::size_t i = 0;
    while (i < fields_.size()) {
      line(fields_[i], 0);
      const FieldSet::Member* m = dict_.header().member(fields_[i].tag);
      if (m == nullptr && def != nullptr) m = def->fields.member(fields_[i].tag);
      if (m != nullptr && m->group >= 0) {
        i = group(dict_.group(m->group), i + 1, 1);
      } else {
        ++i;
      }
    }
    return out_;
  }

 private:
  // Prints the entries of `g` starting at `i`; returns the first position
  // after the group. Each entry is introduced by a "- entry N" line.
  std::size_t group(const GroupDef& g, std::size_t i, int depth) {
    int entry = 0;
    while (i < fields_.size()) {
      const FieldSet::Member* m = g.fields.member(fields_[i].tag);
      if (m == nullptr) break;
      if (fields_[i].tag == g.delimiter_tag || entry == 0) {
        out_.append(static_cast<std::size_t>(depth) * 4 - 2, ' ');
        out_ += "- entry " + std::to_string(++entry) + "\n";
      }
      line(fields_[i], depth);
      if (m->group >= 0 && depth < 16) {
        i = group(dict_.group(m->group), i + 1, depth + 1);
      } else {
        ++i;
      }
    }
    return i;
  }

  void line(const RawField& f, int depth) {
    out_.append(static_cast<std::size_t>(depth) * 4, ' ');
    std::string tag(f.tag_text);
    if (tag.size() < 5) out_.append(5 - tag.size(), ' ');
    out_ += tag;
    out_ += ' ';
    std::string_view name = tag_name(dict_, f);
    out_ += name;
    if (name.size() < 16) out_.append(16 - name.size(), ' ');
    out_ += " = ";
    out_ += f.value;
    const std::string_view vn = value_name(dict_, f);
    if (!vn.empty()) {
      out_ += " (";
      out_ += vn;
      out_ += ')';
    }
    out_ += '\n';
  }

  const Dictionary& dict_;
  const std::vector<RawField>& fields_;
  std::string out_;
};

}  // namespace

std::string to_tree(std::string_view message, const Dictionary& dictionary) {
  const std::vector<RawField> fields = split(message, &dictionary);
  return TreePrinter(dictionary, fields).run();
}

}  // namespace hft::codec
