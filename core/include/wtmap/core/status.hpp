// wtmap core: error values threaded through every fallible call (never exit()).
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace wtmap {

enum class StatusCode {
  ok = 0,
  invalid_argument,  // caller error: out-of-range query, symbol outside the alphabet, ...
  out_of_memory,     // a host allocation failed (or pinned host memory)
  // A device allocation failed, or would exceed the free device memory or WTMAP_GPU_MEM_LIMIT
  // (device_memory.hpp): the same work in smaller batches may fit.
  device_out_of_memory,
  cuda_error,        // a CUDA runtime call failed
  io_error,          // stream read/write failed
  corrupt_data,      // a serialized structure failed validation
  unavailable,       // requested backend not usable here (no GPU / no driver)
  cancelled,         // the caller stopped the work before it was done (AlignPipeline::cancel)
};

// A status code plus a human-readable message naming what went wrong and where.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok_status() { return {}; }
  bool ok() const { return code_ == StatusCode::ok; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  StatusCode code_ = StatusCode::ok;
  std::string message_;
};

inline Status invalid_argument(std::string m) { return {StatusCode::invalid_argument, std::move(m)}; }
inline Status corrupt_data(std::string m) { return {StatusCode::corrupt_data, std::move(m)}; }

// Either a value or the Status explaining why there is none.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(Status status) : status_(std::move(status)) { assert(!status_.ok()); }  // NOLINT

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  T& value() & { assert(ok()); return *value_; }
  const T& value() const& { assert(ok()); return *value_; }
  T&& value() && { assert(ok()); return std::move(*value_); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace wtmap

// Propagate a failed Status from the current function.
#define WTMAP_TRY(expr)                         \
  do {                                          \
    ::wtmap::Status wtmap_try_status_ = (expr); \
    if (!wtmap_try_status_.ok()) return wtmap_try_status_; \
  } while (0)
