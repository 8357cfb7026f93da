// A small expected-style result for configuration and start-up paths, where a
// failure carries a message that names what was wrong (file, line, key).
// Wire paths use status enums instead; nothing here is for the hot path.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace hft {

/// A human-readable error. `message` names the file, line and item at fault.
struct Error {
  std::string message;
};

/// Holds a T or an Error. Accessing the wrong alternative is a programming
/// error (checked by std::get).
template <typename T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}          // NOLINT: implicit by design
  Expected(Error error) : v_(std::move(error)) {}      // NOLINT: implicit by design

  [[nodiscard]] bool ok() const noexcept { return v_.index() == 0; }
  explicit operator bool() const noexcept { return ok(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  [[nodiscard]] const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

/// Expected<void>: success or an Error.
template <>
class [[nodiscard]] Expected<void> {
 public:
  Expected() = default;
  Expected(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT
  [[nodiscard]] bool ok() const noexcept { return ok_; }
  explicit operator bool() const noexcept { return ok_; }
  [[nodiscard]] const Error& error() const { return error_; }

 private:
  Error error_{};
  bool ok_ = true;
};

}  // namespace hft
