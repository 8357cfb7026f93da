// Support code of the typed messages that spec/codegen/hft_messages.py
// generates from a FIX dictionary (hft/messages/fix44.hpp, ..., or a user's
// own XML through the CMake function hft_generate_messages).
//
// Writers are thin wrappers over codec::MessageWriter: each setter is one
// add_* call with a constant tag, so a typed message encodes in place, in
// the order the setters are called, at the speed of the hand-written calls.
// Readers are thin wrappers over a parsed codec::MessageView: each getter is
// one find() and one value parser, returning a Value<T> (a status and the
// value) instead of throwing. Nothing here allocates.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string_view>
#include <type_traits>
#include <utility>

#include "hft/codec/encoder.hpp"
#include "hft/codec/parser.hpp"
#include "hft/codec/types.hpp"

namespace hft::messages {

/// Outcome of a typed getter.
enum class ValueStatus : std::int8_t {
  kOk = 0,
  kAbsent = 1,     ///< the field is not in the message (or the group entry)
  kBadValue = -1,  ///< present, but not well formed for its type (or, for a
                   ///< string-valued enum, none of the dictionary's values)
};

/// A getter's result: a status and, when kOk, the value. `text()` is the
/// field's text as received whenever the field is present (also for
/// kBadValue, to name it in a reject).
template <typename T>
class Value {
 public:
  constexpr Value() noexcept = default;
  [[nodiscard]] static constexpr Value ok(T value, std::string_view text) noexcept {
    return Value(ValueStatus::kOk, value, text);
  }
  [[nodiscard]] static constexpr Value bad(std::string_view text) noexcept {
    return Value(ValueStatus::kBadValue, T{}, text);
  }

  [[nodiscard]] constexpr ValueStatus status() const noexcept { return status_; }
  [[nodiscard]] constexpr bool has_value() const noexcept { return status_ == ValueStatus::kOk; }
  [[nodiscard]] constexpr explicit operator bool() const noexcept { return has_value(); }
  /// The value; T{} unless has_value().
  [[nodiscard]] constexpr const T& operator*() const noexcept { return value_; }
  [[nodiscard]] constexpr const T* operator->() const noexcept { return &value_; }
  [[nodiscard]] constexpr T value_or(T fallback) const noexcept { return has_value() ? value_ : fallback; }
  /// The received text; empty when kAbsent.
  [[nodiscard]] constexpr std::string_view text() const noexcept { return text_; }

 private:
  constexpr Value(ValueStatus s, T v, std::string_view t) noexcept : value_(v), text_(t), status_(s) {}
  T value_{};
  std::string_view text_;
  ValueStatus status_ = ValueStatus::kAbsent;
};

/// A UTCTimestamp: nanoseconds since the Unix epoch, and (when writing) the
/// sub-second digits to send. Converts from a plain nanosecond count.
struct Timestamp {
  std::int64_t epoch_ns = 0;
  codec::TimePrecision precision = codec::TimePrecision::kMillis;

  constexpr Timestamp() noexcept = default;
  // NOLINTNEXTLINE(google-explicit-constructor): ns since the epoch is what a caller has.
  constexpr Timestamp(std::int64_t ns, codec::TimePrecision p = codec::TimePrecision::kMillis) noexcept
      : epoch_ns(ns), precision(p) {}
  /// Equal instants (the precision is how it is written, not what it is).
  friend constexpr bool operator==(const Timestamp& a, const Timestamp& b) noexcept {
    return a.epoch_ns == b.epoch_ns;
  }
};

/// The calling thread's timestamp formatter (a per-second text cache), used
/// by writers constructed without one.
[[nodiscard]] inline codec::TimestampFormatter& thread_formatter() noexcept {
  thread_local codec::TimestampFormatter formatter;
  return formatter;
}

namespace detail {

/// The fields a reader looks in: a whole message (looked up through the
/// view's tag index) or [begin, end), one group entry (searched).
struct Range {
  const codec::MessageView* view = nullptr;
  std::size_t begin = 0;
  std::size_t end = 0;
  bool whole = false;
};
[[nodiscard]] inline Range whole(const codec::MessageView& v) noexcept {
  return {&v, 0, v.size(), true};
}

[[nodiscard]] inline int locate(const Range& r, int tag) noexcept {
  if (r.whole) return r.view->find(tag);
  for (std::size_t i = r.begin; i < r.end; ++i) {
    if (r.view->field(i).tag == tag) return static_cast<int>(i);
  }
  return -1;
}

/// parse_fix_value of a STRING enum: the index of `text` in the value table.
template <typename E, std::size_t N>
[[nodiscard]] constexpr bool parse_text_enum(const std::string_view (&table)[N], std::string_view text,
                                             E& out) noexcept {
  for (std::size_t i = 0; i < N; ++i) {
    if (table[i] == text) {
      out = static_cast<E>(i);
      return true;
    }
  }
  return false;
}

/// The one pattern of every getter: find the field, then parse its text.
template <typename T, typename Parse>
[[nodiscard]] inline Value<T> read(const Range& where, int tag, Parse&& parse) noexcept {
  const int pos = locate(where, tag);
  if (pos < 0) return {};
  const std::string_view text = where.view->value_at(static_cast<std::size_t>(pos));
  T out{};
  return parse(text, out) ? Value<T>::ok(out, text) : Value<T>::bad(text);
}

[[nodiscard]] inline Value<std::string_view> read_string(const Range& w, int tag) noexcept {
  return read<std::string_view>(w, tag, [](std::string_view t, std::string_view& o) noexcept {
    o = t;
    return true;
  });
}
[[nodiscard]] inline Value<std::int64_t> read_int(const Range& w, int tag) noexcept {
  return read<std::int64_t>(
      w, tag, [](std::string_view t, std::int64_t& o) noexcept { return codec::parse_int(t, o); });
}
[[nodiscard]] inline Value<std::uint64_t> read_uint(const Range& w, int tag) noexcept {
  return read<std::uint64_t>(
      w, tag, [](std::string_view t, std::uint64_t& o) noexcept { return codec::parse_uint(t, o); });
}
[[nodiscard]] inline Value<codec::Decimal> read_decimal(const Range& w, int tag) noexcept {
  return read<codec::Decimal>(
      w, tag, [](std::string_view t, codec::Decimal& o) noexcept { return codec::parse_decimal(t, o); });
}
[[nodiscard]] inline Value<char> read_char(const Range& w, int tag) noexcept {
  return read<char>(w, tag, [](std::string_view t, char& o) noexcept { return codec::parse_char(t, o); });
}
[[nodiscard]] inline Value<bool> read_bool(const Range& w, int tag) noexcept {
  return read<bool>(w, tag, [](std::string_view t, bool& o) noexcept { return codec::parse_bool(t, o); });
}
[[nodiscard]] inline Value<Timestamp> read_timestamp(const Range& w, int tag) noexcept {
  return read<Timestamp>(w, tag, [](std::string_view t, Timestamp& o) noexcept {
    std::int64_t ns = 0;
    if (!codec::parse_utc_timestamp(t, ns)) return false;
    // The precision as received: 17 characters without a fraction, else
    // 18 + digits (rounded up to 3, 6 or 9 as the encoder writes them).
    const std::size_t digits = t.size() > 18 ? t.size() - 18 : 0;
    const auto p = digits == 0   ? codec::TimePrecision::kSeconds
                   : digits <= 3 ? codec::TimePrecision::kMillis
                   : digits <= 6 ? codec::TimePrecision::kMicros
                                 : codec::TimePrecision::kNanos;
    o = Timestamp(ns, p);
    return true;
  });
}
/// A CHAR enum: any single character is well formed (a value outside the
/// dictionary compares unequal to every enumerator; the validator judges it).
template <typename E>
[[nodiscard]] inline Value<E> read_char_enum(const Range& w, int tag) noexcept {
  return read<E>(w, tag, [](std::string_view t, E& o) noexcept {
    char c = 0;
    if (!codec::parse_char(t, c)) return false;
    o = static_cast<E>(c);
    return true;
  });
}
/// An INT enum: any integer that fits the enum is well formed.
template <typename E>
[[nodiscard]] inline Value<E> read_int_enum(const Range& w, int tag) noexcept {
  return read<E>(w, tag, [](std::string_view t, E& o) noexcept {
    std::int64_t v = 0;
    using U = std::underlying_type_t<E>;
    if (!codec::parse_int(t, v) || v < INT32_MIN || v > INT32_MAX) return false;
    o = static_cast<E>(static_cast<U>(v));
    return true;
  });
}
/// A STRING enum: only the dictionary's values (parse_fix_value) are well formed.
template <typename E>
[[nodiscard]] inline Value<E> read_string_enum(const Range& w, int tag) noexcept {
  return read<E>(w, tag, [](std::string_view t, E& o) noexcept { return parse_fix_value(t, o); });
}

/// Base of a group writer: writes NumInGroup, then counts the entries. Adding
/// more entries than declared, or leaving the writer with fewer, marks the
/// message invalid (MessageWriter::invalidate: finish() and Session::send
/// report kInvalidArgument / kEncodeError), so a wrong count never goes out.
class GroupCount {
 public:
  GroupCount(const GroupCount&) = delete;
  GroupCount& operator=(const GroupCount&) = delete;
  /// Entries added so far, and the count written.
  [[nodiscard]] std::uint64_t added() const noexcept { return added_; }
  [[nodiscard]] std::uint64_t declared() const noexcept { return declared_; }

 protected:
  GroupCount(codec::MessageWriter& w, int count_tag, std::uint64_t count) noexcept
      : w_(&w), declared_(count) {
    w.add_uint(count_tag, count);
  }
  ~GroupCount() {
    if (added_ != declared_) w_->invalidate();
  }
  void count_entry() noexcept {
    if (++added_ > declared_) w_->invalidate();
  }
  codec::MessageWriter* w_;

 private:
  std::uint64_t declared_;
  std::uint64_t added_ = 0;
};

/// The cracker's step for one message type: the handler's on_message for
/// `Reader` if it has one, else on_unhandled.
template <typename Reader, typename Handler, typename... Args>
auto dispatch(const codec::MessageView& view, Handler& handler, Args&... args)
    -> decltype(handler.on_unhandled(view, args...)) {
  if constexpr (requires { handler.on_message(std::declval<const Reader&>(), args...); }) {
    return handler.on_message(Reader(view), args...);
  } else {
    return handler.on_unhandled(view, args...);
  }
}

template <typename Handler, typename... Args>
auto crack_versions(const codec::MessageView& view, std::string_view, Handler& handler, Args&... args)
    -> decltype(handler.on_unhandled(view, args...)) {
  return handler.on_unhandled(view, args...);
}
template <typename V, typename... Rest, typename Handler, typename... Args>
auto crack_versions(const codec::MessageView& view, std::string_view ver, Handler& handler, Args&... args)
    -> decltype(handler.on_unhandled(view, args...)) {
  if (ver == V::kApplVerID) return V::crack(view, handler, args...);
  return crack_versions<Rest...>(view, ver, handler, args...);
}

}  // namespace detail

/// The entries of a repeating group in a parsed message: a range of
/// `Entry` readers. An entry starts at each occurrence of the delimiter (the
/// group's first field) and the group ends at the first field that is not a
/// member. The count declared in NumInGroup is declared(); the entries found
/// are what iteration yields (the validator checks that they agree).
template <typename Entry, int kDelimiter, bool (*kIsMember)(int)>
class GroupRange {
 public:
  /// The group whose NumInGroup field is `count_tag` in `where` (a message,
  /// or a group entry for a nested group).
  GroupRange(const detail::Range& entry, int count_tag) noexcept
      : GroupRange(At{}, *entry.view, detail::locate(entry, count_tag)) {}

  /// kAbsent: no NumInGroup field; kBadValue: it is not a non-negative integer.
  [[nodiscard]] ValueStatus status() const noexcept { return status_; }
  [[nodiscard]] std::uint64_t declared() const noexcept { return declared_; }

  class iterator {
   public:
    using value_type = Entry;
    using difference_type = std::ptrdiff_t;
    iterator() noexcept = default;
    [[nodiscard]] Entry operator*() const noexcept { return Entry(detail::Range{g_->view_, pos_, next_}); }
    iterator& operator++() noexcept {
      pos_ = next_;
      next_ = g_->entry_end(pos_);
      return *this;
    }
    iterator operator++(int) noexcept {
      iterator old = *this;
      ++*this;
      return old;
    }
    friend bool operator==(const iterator& a, const iterator& b) noexcept { return a.pos_ == b.pos_; }

   private:
    friend class GroupRange;
    iterator(const GroupRange* g, std::size_t pos) noexcept : g_(g), pos_(pos), next_(g->entry_end(pos)) {}
    const GroupRange* g_ = nullptr;
    std::size_t pos_ = 0;
    std::size_t next_ = 0;
  };
  [[nodiscard]] iterator begin() const noexcept { return iterator(this, begin_); }
  [[nodiscard]] iterator end() const noexcept { return iterator(this, end_); }
  /// Entries found (a walk over them).
  [[nodiscard]] std::size_t size() const noexcept {
    std::size_t n = 0;
    for (auto it = begin(); it != end(); ++it) ++n;
    return n;
  }
  [[nodiscard]] bool empty() const noexcept { return begin_ == end_; }

 private:
  struct At {};
  GroupRange(At, const codec::MessageView& view, int count_pos) noexcept : view_(&view) {
    if (count_pos < 0) return;
    std::uint64_t n = 0;
    if (!codec::parse_uint(view.value_at(static_cast<std::size_t>(count_pos)), n)) {
      status_ = ValueStatus::kBadValue;
      return;
    }
    status_ = ValueStatus::kOk;
    declared_ = n;
    std::size_t p = static_cast<std::size_t>(count_pos) + 1;
    begin_ = p;
    while (p < view.size() && kIsMember(view.field(p).tag)) ++p;
    end_ = p;
  }
  [[nodiscard]] std::size_t entry_end(std::size_t pos) const noexcept {
    if (pos >= end_) return end_;
    std::size_t p = pos + 1;
    while (p < end_ && view_->field(p).tag != kDelimiter) ++p;
    return p;
  }

  const codec::MessageView* view_;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
  std::uint64_t declared_ = 0;
  ValueStatus status_ = ValueStatus::kAbsent;
};

/// Dispatch of a FIXT.1.1 application message by its ApplVerID (1128), or
/// `default_appl_ver_id` (the session's DefaultApplVerID, e.g.
/// Session::target_default_appl_ver_id()) when the message has none:
///
///   return messages::crack_fixt<fix50sp2::Messages, fix44::Messages>(view, "9", *this, session);
///
/// Calls Versions::crack of the version whose kApplVerID matches, or
/// handler.on_unhandled(view, args...) when none does.
template <typename... Versions, typename Handler, typename... Args>
auto crack_fixt(const codec::MessageView& view, std::string_view default_appl_ver_id, Handler& handler,
                Args&&... args) -> decltype(handler.on_unhandled(view, args...)) {
  const int pos = view.find(codec::tag::kApplVerID);
  const std::string_view ver = pos >= 0 ? view.value_at(static_cast<std::size_t>(pos)) : default_appl_ver_id;
  return detail::crack_versions<Versions...>(view, ver, handler, args...);
}

}  // namespace hft::messages
