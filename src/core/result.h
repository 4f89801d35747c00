// Status and Result<T>: errors as values across module seams.
//
// A Status is ok or carries a code and a message that reads "unable to X for Y: cause"
// (leveldb-style constructors and predicates). Result<T> holds
// either a T or a non-ok Status. Neither throws; ValueOrDie-style access on an error aborts,
// because that is a programming error, not an environmental one.
#pragma once

#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace aiscale {

// What kind of error a Status is, so a caller can choose: retry with backoff (kConflict after
// a re-read, kUnavailable, kDeadlineExceeded), unbind and report (kNotFound,
// kPermissionDenied), or record (kInvalid, kInternal).
enum class StatusCode {
  kOk,
  kNotFound,
  kConflict,
  kUnavailable,
  kDeadlineExceeded,
  kInvalid,
  kPermissionDenied,
  kInternal,
};
std::string_view StatusCodeName(StatusCode c);

class Status {
 public:
  Status() = default;  // ok
  static Status Ok() { return Status(); }
  // An error of no particular kind (kInternal).
  static Status Error(std::string message) {
    return Status(StatusCode::kInternal, std::move(message));
  }
  static Status NotFound(std::string m) { return Status(StatusCode::kNotFound, std::move(m)); }
  static Status Conflict(std::string m) { return Status(StatusCode::kConflict, std::move(m)); }
  static Status Unavailable(std::string m) {
    return Status(StatusCode::kUnavailable, std::move(m));
  }
  static Status DeadlineExceeded(std::string m) {
    return Status(StatusCode::kDeadlineExceeded, std::move(m));
  }
  static Status Invalid(std::string m) { return Status(StatusCode::kInvalid, std::move(m)); }
  static Status PermissionDenied(std::string m) {
    return Status(StatusCode::kPermissionDenied, std::move(m));
  }
  static Status Internal(std::string m) { return Status(StatusCode::kInternal, std::move(m)); }
  // An error of kind `code`; kOk is a programming error and yields kInternal.
  static Status FromCode(StatusCode code, std::string m) {
    return Status(code == StatusCode::kOk ? StatusCode::kInternal : code, std::move(m));
  }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  bool IsNotFound() const { return code_ == StatusCode::kNotFound; }
  bool IsConflict() const { return code_ == StatusCode::kConflict; }
  bool IsUnavailable() const { return code_ == StatusCode::kUnavailable; }
  bool IsDeadlineExceeded() const { return code_ == StatusCode::kDeadlineExceeded; }
  bool IsInvalid() const { return code_ == StatusCode::kInvalid; }
  bool IsPermissionDenied() const { return code_ == StatusCode::kPermissionDenied; }
  bool IsInternal() const { return code_ == StatusCode::kInternal; }
  // Worth trying again later without changing anything (the engine or network may recover).
  bool IsRetryable() const {
    return code_ == StatusCode::kUnavailable || code_ == StatusCode::kDeadlineExceeded ||
           code_ == StatusCode::kConflict;
  }

  const std::string& message() const {
    static const std::string kOk = "ok";
    return ok() ? kOk : message_;
  }
  // Returns a new status of the same kind whose message is "context: message"; ok stays ok.
  Status Wrap(const std::string& context) const {
    return ok() ? *this : Status(code_, context + ": " + message_);
  }

 private:
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline std::string_view StatusCodeName(StatusCode c) {
  switch (c) {
    case StatusCode::kOk:
      return "ok";
    case StatusCode::kNotFound:
      return "not_found";
    case StatusCode::kConflict:
      return "conflict";
    case StatusCode::kUnavailable:
      return "unavailable";
    case StatusCode::kDeadlineExceeded:
      return "deadline_exceeded";
    case StatusCode::kInvalid:
      return "invalid";
    case StatusCode::kPermissionDenied:
      return "permission_denied";
    case StatusCode::kInternal:
      return "internal";
  }
  return "internal";
}

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
