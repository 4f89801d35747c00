// Status and Result<T>: errors as values across module seams.
//
// A Status is ok or carries a message that reads "unable to X for Y: cause". Result<T> holds
// either a T or a non-ok Status. Neither throws; ValueOrDie-style access on an error aborts,
// because that is a programming error, not an environmental one.
#pragma once

#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace aiscale {

class Status {
 public:
  Status() = default;  // ok
  static Status Ok() { return Status(); }
  static Status Error(std::string message) { return Status(std::move(message)); }

  bool ok() const { return !message_.has_value(); }
  const std::string& message() const {
    static const std::string kOk = "ok";
    return message_ ? *message_ : kOk;
  }
  // Returns a new status whose message is "context: message"; ok stays ok.
  Status Wrap(const std::string& context) const {
    return ok() ? *this : Status(context + ": " + *message_);
  }

 private:
  explicit Status(std::string message) : message_(std::move(message)) {}
  std::optional<std::string> message_;
};

template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT: implicit by design
  Result(Status error) : v_(std::move(error)) {  // NOLINT: implicit by design
    if (std::get<Status>(v_).ok()) {
      std::cerr << "Result constructed from an ok Status\n";
      std::abort();
    }
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return Check(), std::get<T>(v_); }
  const T& value() const& { return Check(), std::get<T>(v_); }
  T&& value() && { return Check(), std::move(std::get<T>(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  void Check() const {
    if (!ok()) {
      std::cerr << "Result::value() on error: " << std::get<Status>(v_).message() << "\n";
      std::abort();
    }
  }
  std::variant<T, Status> v_;
};

}  // namespace aiscale

#define AISCALE_CONCAT_INNER(a, b) a##b
#define AISCALE_CONCAT(a, b) AISCALE_CONCAT_INNER(a, b)

// RETURN_IF_ERROR(expr): expr yields a Status; return it if not ok.
#define RETURN_IF_ERROR(expr)       \
  do {                              \
    ::aiscale::Status _st = (expr); \
    if (!_st.ok()) return _st;      \
  } while (0)

// ASSIGN_OR_RETURN(lhs, expr): expr yields a Result<T>; on error return its status.
#define ASSIGN_OR_RETURN(lhs, expr) \
  ASSIGN_OR_RETURN_IMPL(AISCALE_CONCAT(_res_, __LINE__), lhs, expr)
#define ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                          \
  if (!tmp.ok()) return tmp.status();         \
  lhs = std::move(tmp).value()
