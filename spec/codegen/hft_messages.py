#!/usr/bin/env python3
"""Generates libhft's typed FIX messages from a QuickFIX-format XML dictionary.

    hft_messages.py --xml spec/FIX44.xml --namespace hft::fix44 --out fix44.hpp

One header per dictionary, in the namespace given:

  - `tag::kName` constants for every field;
  - an `enum class` per field with enumerated values: CHAR fields get
    `enum class X : char` with the FIX characters, INT fields
    `enum class X : std::int32_t` with the FIX numbers, STRING fields an
    `enum class X : std::uint16_t` plus `fix_value(X)` (the wire text) and
    `parse_fix_value(text, X&)`;
  - per message, `<Name>Writer`: the required fields are the constructor's
    arguments (in dictionary order, written first), every other field a
    setter written in call order, groups as nested writers; and
    `<Name>Reader`: typed getters returning hft::messages::Value<T> over a
    parsed codec::MessageView, groups as ranges of entries;
  - `Messages::crack(view, handler, args...)`: dispatch by MsgType to
    `handler.on_message(const <Name>Reader&, args...)`, or
    `handler.on_unhandled(view, args...)`.

Components are flattened into the messages that use them (a component's
fields are the message's own setters and getters); repeating groups with the
same structure share one set of classes. The support code (Value, the
getters' parsing, group iteration) is include/hft/messages/support.hpp.
"""

import argparse
import keyword
import re
import sys
import xml.etree.ElementTree as ET

CPP_KEYWORDS = {
    "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case",
    "catch", "char", "class", "compl", "concept", "const", "consteval", "constexpr", "constinit",
    "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype", "default", "delete", "do",
    "double", "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for",
    "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not",
    "not_eq", "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register",
    "reinterpret_cast", "requires", "return", "short", "signed", "sizeof", "static", "static_assert",
    "static_cast", "struct", "switch", "template", "this", "thread_local", "throw", "true", "try",
    "typedef", "typeid", "typename", "union", "unsigned", "using", "virtual", "void", "volatile",
    "wchar_t", "while", "xor", "xor_eq",
    # members and names the generated classes use themselves
    "add", "writer", "view", "header", "begin", "end", "next", "declared", "count_valid", "entries",
    "status", "size", "range",
}

# FIX type -> kind of C++ value.
TYPE_KIND = {
    "CHAR": "char", "BOOLEAN": "bool",
    "INT": "int", "DAYOFMONTH": "int", "TAGNUM": "int",
    "SEQNUM": "uint", "LENGTH": "uint", "NUMINGROUP": "uint",
    "FLOAT": "decimal", "PRICE": "decimal", "QTY": "decimal", "AMT": "decimal", "PRICEOFFSET": "decimal",
    "PERCENTAGE": "decimal",
    "UTCTIMESTAMP": "timestamp", "TIME": "timestamp",
}
# Types whose enumerated values may be combined (space-separated): no enum type.
MULTI = {"MULTIPLEVALUESTRING", "MULTIPLECHARVALUE", "MULTIPLESTRINGVALUE"}


class Field:
    def __init__(self, number, name, ftype, values):
        self.number, self.name, self.type, self.values = number, name, ftype, values
        self.kind = TYPE_KIND.get(ftype, "string")
        self.enum = None  # "char", "int" or "string" when an enum class is generated
        if values and ftype not in MULTI and self.kind != "bool":
            if self.kind == "char" and all(len(v) == 1 for v, _ in values):
                self.enum = "char"
            elif self.kind in ("int", "uint") and all(re.fullmatch(r"-?\d+", v) for v, _ in values):
                self.enum = "int"
            elif self.kind == "string":
                self.enum = "string"


def snake(name):
    # "NoPartyIDs" -> "no_party_ids": a plural acronym is one word.
    name = re.sub(r"([A-Z]{2,})s(?=[A-Z]|$)", lambda m: m.group(1)[0] + m.group(1)[1:].lower() + "s", name)
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", s)
    s = s.lower()
    if s in CPP_KEYWORDS or keyword.iskeyword(s):
        s += "_"
    return s


def enum_name(description, value):
    parts = [p for p in re.split(r"[^A-Za-z0-9]+", description) if p]
    if not parts:
        parts = ["Value", value]
    return "k" + "".join(p[:1].upper() + p[1:].lower() for p in parts)


def cpp_string(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def cpp_char(c):
    if c in "\\'":
        return "'\\" + c + "'"
    return "'" + c + "'"


class Dictionary:
    def __init__(self, path):
        root = ET.parse(path).getroot()
        self.fix_type = root.get("type", "FIX")
        self.major, self.minor = root.get("major"), root.get("minor")
        self.sp = root.get("servicepack", "0")
        self.fields = {}
        self.by_number = {}
        for f in root.find("fields") or []:
            values = [(v.get("enum"), v.get("description", "")) for v in f.findall("value")]
            fld = Field(int(f.get("number")), f.get("name"), f.get("type"), values)
            self.fields[fld.name] = fld
        self.components = {c.get("name"): c for c in (root.find("components") or [])}
        self.header = root.find("header")
        self.messages = list(root.find("messages") or [])

    def begin_string(self):
        if self.fix_type == "FIXT":
            return "FIXT.%s.%s" % (self.major, self.minor)
        if self.major == "5":
            return "FIXT.1.1"
        return "FIX.%s.%s" % (self.major, self.minor)

    def appl_ver_id(self):
        """ApplVerID (1128) of the application version, empty for FIXT itself."""
        if self.fix_type == "FIXT":
            return ""
        table = {("4", "0", "0"): "2", ("4", "1", "0"): "3", ("4", "2", "0"): "4", ("4", "3", "0"): "5",
                 ("4", "4", "0"): "6", ("5", "0", "0"): "7", ("5", "0", "1"): "8", ("5", "0", "2"): "9"}
        return table.get((self.major, self.minor, self.sp), "")


class Generator:
    def __init__(self, d, namespace, source):
        self.d, self.ns, self.source = d, namespace, source
        self.groups = {}      # signature -> group record
        self.components = {}  # name -> component record
        self.emitted = set()
        self.out = []
        self.message_names = {m.get("name") for m in d.messages}

    # -- structure -----------------------------------------------------------
    #
    # A record is a class pair (reader, writer) over `items`: ('field', Field,
    # required), ('comp', record, required) or ('group', record, required).

    def items_of(self, element, seen):
        items, names = [], set()
        for child in element:
            req = child.get("required", "N") == "Y"
            name = child.get("name")
            if name in names:
                continue  # listed twice: one accessor
            names.add(name)
            if child.tag == "field":
                if name not in self.d.fields:
                    sys.exit("%s: field %s is used but not defined" % (self.source, name))
                items.append(("field", self.d.fields[name], req))
            elif child.tag == "component":
                if name not in self.d.components:
                    sys.exit("%s: component %s is used but not defined" % (self.source, name))
                if name in seen:
                    sys.exit("%s: component %s includes itself" % (self.source, name))
                items.append(("comp", self.component(name, seen | {name}), req))
            elif child.tag == "group":
                if name not in self.d.fields:
                    sys.exit("%s: group %s has no field definition" % (self.source, name))
                items.append(("group", self.group(child, seen), req))
        return items

    def component(self, name, seen):
        if name not in self.components:
            cls = name + ("Component" if name in self.message_names else "")
            rec = {"kind": "comp", "name": cls, "xml": name}
            self.components[name] = rec
            rec["items"] = self.items_of(self.d.components[name], seen)
        return self.components[name]

    def group(self, element, seen):
        count = self.d.fields[element.get("name")]
        items = self.items_of(element, seen)
        if not items:
            sys.exit("%s: group %s has no members" % (self.source, count.name))
        sig = (count.number, signature(items))
        if sig in self.groups:
            return self.groups[sig]
        n = sum(1 for g in self.groups.values() if g["count"].number == count.number)
        rec = {"kind": "group", "count": count, "items": items, "name": count.name + (str(n + 1) if n else ""),
               "tags": member_tags(items)}
        self.groups[sig] = rec
        return rec

    # -- emitting ------------------------------------------------------------

    def w(self, line=""):
        self.out.append(line)

    def value_type(self, f):
        if f.enum:
            return f.name
        return {"char": "char", "bool": "bool", "int": "std::int64_t", "uint": "std::uint64_t",
                "decimal": "codec::Decimal", "timestamp": "messages::Timestamp",
                "string": "std::string_view"}[f.kind]

    def param(self, f):
        return "%s %s" % (self.value_type(f), snake(f.name))

    def write_call(self, f, var):
        t = "tag::k%s" % f.name
        if f.enum == "char":
            return "w_->add_char(%s, static_cast<char>(%s));" % (t, var)
        if f.enum == "int":
            return "w_->add_int(%s, static_cast<std::int64_t>(%s));" % (t, var)
        if f.enum == "string":
            return "w_->add(%s, fix_value(%s));" % (t, var)
        return {
            "char": "w_->add_char(%s, %s);",
            "bool": "w_->add_bool(%s, %s);",
            "int": "w_->add_int(%s, %s);",
            "uint": "w_->add_uint(%s, %s);",
            "decimal": "w_->add_decimal(%s, %s);",
            "timestamp": "w_->add_timestamp(%s, %s.epoch_ns, %s.precision, *ts_);",
            "string": "w_->add(%s, %s);",
        }[f.kind].replace("%s", t, 1).replace("%s", var)

    def read_call(self, f):
        t = "tag::k%s" % f.name
        if f.enum:
            return "messages::detail::read_%s_enum<%s>(r_, %s)" % (f.enum, f.name, t)
        return "messages::detail::read_%s(r_, %s)" % (f.kind, t)

    def emit_enums(self):
        for f in sorted(self.d.fields.values(), key=lambda x: x.number):
            if not f.enum:
                continue
            names, seen = [], set()
            for value, desc in f.values:
                n = enum_name(desc, value)
                if n in seen:
                    n = n + "_" + re.sub(r"[^A-Za-z0-9]", "_", value)
                seen.add(n)
                names.append((n, value))
            if f.enum == "char":
                self.w("enum class %s : char {" % f.name)
                for n, v in names:
                    self.w("  %s = %s," % (n, cpp_char(v)))
                self.w("};")
            elif f.enum == "int":
                self.w("enum class %s : std::int32_t {" % f.name)
                for n, v in names:
                    self.w("  %s = %s," % (n, v))
                self.w("};")
            else:
                texts = ", ".join(cpp_string(v) for _, v in names)
                self.w("enum class %s : std::uint16_t {" % f.name)
                for n, _ in names:
                    self.w("  %s," % n)
                self.w("};")
                self.w("inline constexpr std::string_view k%sText[] = {%s};" % (f.name, texts))
                self.w("/// The FIX text of a %s value." % f.name)
                self.w("[[nodiscard]] constexpr std::string_view fix_value(%s v) noexcept {" % f.name)
                self.w("  return k%sText[static_cast<std::size_t>(v)];" % f.name)
                self.w("}")
                self.w("/// The %s of a FIX text; false if it is none of the dictionary's values." % f.name)
                self.w("[[nodiscard]] constexpr bool parse_fix_value(std::string_view text, %s& out) noexcept {"
                       % f.name)
                self.w("  return messages::detail::parse_text_enum(k%sText, text, out);" % f.name)
                self.w("}")

    def emit_setters(self, cls, items, skip):
        """Setters for the fields of `items` not in `skip` (constructor
        arguments), a method per component and per group."""
        names = accessor_names(items)
        for (kind, obj, req), name in zip(items, names):
            if kind == "field":
                if obj.name in skip:
                    continue
                self.w("  %s& %s(%s v) noexcept {" % (cls, name, self.value_type(obj)))
                self.w("    " + self.write_call(obj, "v"))
                self.w("    return *this;")
                self.w("  }")
            elif kind == "comp":
                self.w("  /// The %s component's fields (written where they are set)." % obj["xml"])
                self.w("  [[nodiscard]] %sWriter %s() noexcept { return %sWriter(*w_, *ts_); }"
                       % (obj["name"], name, obj["name"]))
            else:
                g = obj
                self.w("  /// Writes %s=count; add exactly `count` entries to the result." % g["count"].name)
                self.w("  [[nodiscard]] %sGroupWriter %s(std::uint64_t count) noexcept {" % (g["name"], name))
                self.w("    return %sGroupWriter(*w_, *ts_, count);" % g["name"])
                self.w("  }")

    def emit_getters(self, items):
        for (kind, obj, req), name in zip(items, accessor_names(items)):
            if kind == "field":
                self.w("  [[nodiscard]] messages::Value<%s> %s() const noexcept { return %s; }"
                       % (self.value_type(obj), name, self.read_call(obj)))
            elif kind == "comp":
                self.w("  [[nodiscard]] %sReader %s() const noexcept { return %sReader(r_); }"
                       % (obj["name"], name, obj["name"]))
            else:
                g = obj
                self.w("  [[nodiscard]] %sGroupReader %s() const noexcept {" % (g["name"], name))
                self.w("    return %sGroupReader(r_, tag::k%s);" % (g["name"], g["count"].name))
                self.w("  }")

    def emit_deps(self, items):
        for kind, obj, _ in items:
            if kind in ("comp", "group"):
                self.emit_record(obj)

    def emit_record(self, rec):
        if id(rec) in self.emitted:
            return
        self.emitted.add(id(rec))
        self.emit_deps(rec["items"])
        if rec["kind"] == "comp":
            self.emit_component(rec)
        else:
            self.emit_group(rec)

    def emit_writer_members(self):
        self.w("")
        self.w(" private:")
        self.w("  codec::MessageWriter* w_;")
        self.w("  [[maybe_unused]] codec::TimestampFormatter* ts_;")
        self.w("};")

    def emit_member_test(self, fn, items):
        """constexpr bool fn(int tag): a direct member, or one of a nested
        group's or component's (their own tests, so each set is written once)."""
        direct = sorted({o.number for k, o, _ in items if k == "field"} |
                        {o["count"].number for k, o, _ in items if k == "group"})
        nested = ["%s(tag)" % member_fn(o) for k, o, _ in items if k != "field"]
        self.w("[[nodiscard]] constexpr bool %s(int tag) noexcept {" % fn)
        self.w("  switch (tag) {")
        for i in range(0, len(direct), 8):
            self.w("    " + " ".join("case %d:" % t for t in direct[i:i + 8]))
        self.w("      return true;")
        self.w("    default:")
        self.w("      return %s;" % (" || ".join(nested) if nested else "false"))
        self.w("  }")
        self.w("}")

    def emit_component(self, c):
        name = c["name"]
        self.emit_member_test(member_fn(c), c["items"])
        self.w("/// The %s component's fields, read." % c["xml"])
        self.w("class %sReader {" % name)
        self.w(" public:")
        self.w("  explicit %sReader(messages::detail::Range r) noexcept : r_(r) {}" % name)
        self.emit_getters(c["items"])
        self.w("")
        self.w(" private:")
        self.w("  messages::detail::Range r_;")
        self.w("};")
        self.w("/// The %s component's fields, written." % c["xml"])
        self.w("class %sWriter {" % name)
        self.w(" public:")
        self.w("  %sWriter(codec::MessageWriter& w, codec::TimestampFormatter& ts) noexcept : w_(&w), ts_(&ts) {}"
               % name)
        self.emit_setters("%sWriter" % name, c["items"], set())
        self.emit_writer_members()
        self.w("")

    def emit_group(self, g):
        name, items = g["name"], g["items"]
        # The delimiter is the first leaf: a field (possibly inside a
        # component), or (FIX 5.0SP2 has a few) a nested group's NumInGroup.
        lead = first_leaf(items)
        lead_is_field = lead[0] == "field"
        delim = lead[1]
        required = [f for f in required_fields(items) if f is not delim]
        member = member_fn(g)
        self.w("/// One entry of a %s group." % g["count"].name)
        self.w("class %sEntryReader {" % name)
        self.w(" public:")
        self.w("  explicit %sEntryReader(messages::detail::Range r) noexcept : r_(r) {}" % name)
        self.emit_getters(items)
        self.w("  /// The entry's fields: positions in the message.")
        self.w("  [[nodiscard]] messages::detail::Range range() const noexcept { return r_; }")
        self.w("")
        self.w(" private:")
        self.w("  messages::detail::Range r_;")
        self.w("};")
        self.w("/// Whether `tag` belongs to a %s entry (nested groups included)." % g["count"].name)
        self.emit_member_test(member, items)
        self.w("using %sGroupReader = messages::GroupRange<%sEntryReader, tag::k%s, %s>;"
               % (name, name, delim.name, member))
        self.w("/// One entry of a %s group, being written." % g["count"].name)
        self.w("class %sEntryWriter {" % name)
        self.w(" public:")
        self.w("  %sEntryWriter(codec::MessageWriter& w, codec::TimestampFormatter& ts) noexcept : w_(&w), ts_(&ts) {}"
               % name)
        direct_skip = {f.name for f in required} | ({delim.name} if lead_is_field else set())
        self.emit_setters("%sEntryWriter" % name, items, direct_skip)
        self.emit_writer_members()
        self.w("/// A %s group being written: %s=count, then add() per entry." % (g["count"].name, g["count"].name))
        self.w("class %sGroupWriter : public messages::detail::GroupCount {" % name)
        self.w(" public:")
        self.w("  %sGroupWriter(codec::MessageWriter& w, codec::TimestampFormatter& ts, std::uint64_t count) noexcept"
               % name)
        self.w("      : GroupCount(w, tag::k%s, count), ts_(&ts) {}" % g["count"].name)
        params = ([self.param(delim)] if lead_is_field else []) + [self.param(f) for f in required]
        if lead_is_field:
            self.w("  /// Starts the next entry with its delimiter (%s) and required fields." % delim.name)
        else:
            self.w("  /// Starts the next entry; write its %s group first (it delimits the entry)." % delim.name)
        self.w("  %sEntryWriter add(%s) noexcept {" % (name, ", ".join(params)))
        self.w("    count_entry();")
        if lead_is_field:
            self.w("    " + self.write_call(delim, snake(delim.name)))
        for f in required:
            self.w("    " + self.write_call(f, snake(f.name)))
        self.w("    return %sEntryWriter(*w_, *ts_);" % name)
        self.w("  }")
        self.w("")
        self.w(" private:")
        self.w("  codec::TimestampFormatter* ts_;")
        self.w("};")
        self.w("")

    def emit_message(self, m, items):
        name, msg_type = m.get("name"), m.get("msgtype")
        required = required_fields(items)
        self.w("/// %s (35=%s), read." % (name, msg_type))
        self.w("class %sReader {" % name)
        self.w(" public:")
        self.w("  static constexpr std::string_view kMsgType = %s;" % cpp_string(msg_type))
        self.w("  /// `view` is a parsed %s; it must outlive the reader." % name)
        self.w("  explicit %sReader(const codec::MessageView& view) noexcept : r_(messages::detail::whole(view)) {}"
               % name)
        self.w("  [[nodiscard]] const codec::MessageView& view() const noexcept { return *r_.view; }")
        if self.has_header:
            self.w("  [[nodiscard]] HeaderReader header() const noexcept { return HeaderReader(*r_.view); }")
        self.emit_getters(items)
        self.w("")
        self.w(" private:")
        self.w("  messages::detail::Range r_;")
        self.w("};")
        self.w("/// %s (35=%s), written in place: the required fields at construction." % (name, msg_type))
        self.w("class %sWriter {" % name)
        self.w(" public:")
        self.w("  static constexpr std::string_view kMsgType = %s;" % cpp_string(msg_type))
        params = ", ".join([""] + [self.param(f) for f in required])
        args = ", ".join([""] + [snake(f.name) for f in required])
        self.w("  /// `w` has started a %s (35=%s); writes the required fields, in this order." % (name, msg_type))
        self.w("  %sWriter(codec::MessageWriter& w, codec::TimestampFormatter& ts%s) noexcept : w_(&w), ts_(&ts) {"
               % (name, params))
        for f in required:
            self.w("    " + self.write_call(f, snake(f.name)))
        self.w("  }")
        self.w("  /// The same, UTCTimestamps formatted by messages::thread_formatter().")
        self.w("  %s%sWriter(codec::MessageWriter& w%s) noexcept : %sWriter(w, messages::thread_formatter()%s) {}"
               % ("" if required else "explicit ", name, params, name, args))
        self.w("  [[nodiscard]] codec::MessageWriter& writer() noexcept { return *w_; }")
        self.emit_setters("%sWriter" % name, items, {f.name for k, f, r in items if k == "field" and r})
        self.emit_writer_members()
        self.w("")

    def emit_cracker(self, msgs):
        by_type = {}
        for m in msgs:
            by_type.setdefault(m.get("msgtype"), m.get("name"))
        self.w("/// This dictionary's messages, for dispatch (messages::crack_fixt picks one by ApplVerID).")
        self.w("struct Messages {")
        self.w("  static constexpr std::string_view kBeginString = %s;" % cpp_string(self.d.begin_string()))
        self.w("  static constexpr std::string_view kApplVerID = %s;" % cpp_string(self.d.appl_ver_id()))
        self.w("  /// Calls handler.on_message(const <Type>Reader&, args...) for the message's MsgType")
        self.w("  /// when the handler has that overload, else handler.on_unhandled(view, args...);")
        self.w("  /// returns what it returned (on_message's result converts to on_unhandled's).")
        self.w("  template <class Handler, class... Args>")
        self.w("  static auto crack(const codec::MessageView& view, Handler& handler, Args&&... args)")
        self.w("      -> decltype(handler.on_unhandled(view, args...)) {")
        self.w("    const std::string_view t = view.msg_type();")
        self.w("    using messages::detail::dispatch;")
        groups = {}
        for t, n in by_type.items():
            groups.setdefault(len(t), {}).setdefault(t[0], []).append((t, n))
        self.w("    switch (t.size()) {")
        for length in sorted(groups):
            self.w("      case %d:" % length)
            self.w("        switch (t[0]) {")
            for first in sorted(groups[length]):
                self.w("          case %s:" % cpp_char(first))
                for t, n in sorted(groups[length][first]):
                    cond = "true" if length == 1 else "t == %s" % cpp_string(t)
                    self.w("            if (%s) return dispatch<%sReader>(view, handler, args...);" % (cond, n))
                self.w("            break;")
            self.w("          default:")
            self.w("            break;")
            self.w("        }")
            self.w("        break;")
        self.w("      default:")
        self.w("        break;")
        self.w("    }")
        self.w("    return handler.on_unhandled(view, args...);")
        self.w("  }")
        self.w("};")
        self.w("/// Messages::crack.")
        self.w("template <class Handler, class... Args>")
        self.w("auto crack(const codec::MessageView& view, Handler& handler, Args&&... args)")
        self.w("    -> decltype(handler.on_unhandled(view, args...)) {")
        self.w("  return Messages::crack(view, handler, args...);")
        self.w("}")

    def generate(self, only):
        d = self.d
        msgs = d.messages
        if only:
            names = {m.get("name") for m in msgs}
            missing = sorted(set(only) - names)
            if missing:
                sys.exit("%s: no message named %s" % (self.source, ", ".join(missing)))
            msgs = [m for m in msgs if m.get("name") in only]
        header_items = []
        if d.header is not None and len(d.header):
            header_items = [it for it in self.items_of(d.header, set())
                            if not (it[0] == "field" and it[1].number in (8, 9, 10, 35))]
        self.has_header = bool(header_items)
        bodies = [(m, self.items_of(m, set())) for m in msgs]

        self.w("// Generated by spec/codegen/hft_messages.py from %s: do not edit." % self.source)
        self.w("// Typed %s messages (docs/codec.md, \"Typed messages\")." % d.begin_string())
        self.w("#pragma once")
        self.w("")
        self.w("#include <cstddef>")
        self.w("#include <cstdint>")
        self.w("#include <string_view>")
        self.w("")
        self.w('#include "hft/messages/support.hpp"')
        self.w("")
        self.w("namespace %s {" % self.ns)
        self.w("")
        self.w("namespace tag {")
        for f in sorted(d.fields.values(), key=lambda x: x.number):
            self.w("inline constexpr int k%s = %d;" % (f.name, f.number))
        self.w("}  // namespace tag")
        self.w("")
        self.emit_enums()
        self.w("")
        self.emit_deps(header_items)
        for _, items in bodies:
            self.emit_deps(items)
        if self.has_header:
            self.w("/// The standard header's fields.")
            self.w("class HeaderReader {")
            self.w(" public:")
            self.w("  explicit HeaderReader(const codec::MessageView& view) noexcept : r_(messages::detail::whole(view)) {}")
            self.emit_getters(header_items)
            self.w("")
            self.w(" private:")
            self.w("  messages::detail::Range r_;")
            self.w("};")
            self.w("")
        for m, items in bodies:
            self.emit_message(m, items)
        self.emit_cracker(msgs)
        self.w("")
        self.w("}  // namespace %s" % self.ns)
        text = "\n".join(self.out) + "\n"
        # Qualified in full: the namespace is the user's, not necessarily in hft.
        return re.sub(r"(?<![\w:])(messages|codec)::", r"::hft::\1::", text)


def accessor_names(items):
    """The method name of each item; a component or group whose name a field
    of the same class already has gets a suffix."""
    taken = {snake(o.name) for k, o, _ in items if k == "field"}
    out = []
    for kind, obj, _ in items:
        if kind == "field":
            out.append(snake(obj.name))
            continue
        name = snake(obj["xml"] if kind == "comp" else obj["count"].name)
        if name in taken:
            name = name.rstrip("_") + ("_component" if kind == "comp" else "_group")
        taken.add(name)
        out.append(name)
    return out


def member_fn(rec):
    return "is_%s_member" % snake(rec["name"] if rec["kind"] == "group" else rec["xml"] + "_component").rstrip("_")


def first_leaf(items):
    kind, obj, _ = items[0]
    if kind == "comp":
        return first_leaf(obj["items"])
    if kind == "group":
        return ("group", obj["count"])
    return ("field", obj)


def required_fields(items):
    """Required fields, through required components, in dictionary order."""
    out, seen = [], set()
    for kind, obj, req in items:
        if not req:
            continue
        if kind == "field":
            fs = [obj]
        elif kind == "comp":
            fs = required_fields(obj["items"])
        else:
            fs = []
        for f in fs:
            if f.number not in seen:
                seen.add(f.number)
                out.append(f)
    return out


def signature(items):
    def sig(kind, obj):
        if kind == "field":
            return obj.number
        if kind == "comp":
            return obj["xml"]
        return (obj["count"].number, signature(obj["items"]))
    return tuple((k, sig(k, o), r) for k, o, r in items)


def member_tags(items):
    tags = set()
    for k, o, _ in items:
        if k == "field":
            tags.add(o.number)
        elif k == "comp":
            tags |= member_tags(o["items"])
        else:
            tags.add(o["count"].number)
            tags |= o["tags"]
    return tags


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--xml", required=True, help="QuickFIX-format dictionary")
    ap.add_argument("--namespace", required=True, help="C++ namespace of the generated code (a::b)")
    ap.add_argument("--out", required=True, help="header to write")
    ap.add_argument("--messages", default="", help="comma-separated message names (default: all)")
    a = ap.parse_args()
    if not re.fullmatch(r"[A-Za-z_]\w*(::[A-Za-z_]\w*)*", a.namespace):
        sys.exit("--namespace %r is not a C++ namespace" % a.namespace)
    try:
        d = Dictionary(a.xml)
    except (ET.ParseError, OSError) as e:
        sys.exit("%s: %s" % (a.xml, e))
    only = [m for m in a.messages.split(",") if m]
    text = Generator(d, a.namespace, a.xml.replace("\\", "/").split("/")[-1]).generate(only)
    try:
        with open(a.out) as f:
            if f.read() == text:
                return
    except OSError:
        pass
    with open(a.out, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
