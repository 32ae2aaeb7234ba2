// wtmap core: move-only owners of CUDA runtime handles -- a stream and an event -- destroyed with
// their owner.
//
// Space: one handle each. Made by create() (one runtime call, checked); an empty owner (default
// constructed or moved from) holds none and its destruction calls nothing, so a CPU-only run that
// never makes one never starts the CUDA runtime (even cudaStreamDestroy(nullptr) would).
// Destroying a stream with work still queued is allowed: the runtime releases it once the work
// is done (CUDA Runtime API, cudaStreamDestroy).
#pragma once

#include <cuda_runtime_api.h>

#include <utility>

#include "wtmap/core/detail/cuda_check.hpp"
#include "wtmap/core/status.hpp"

namespace wtmap {
namespace detail {

// One owner for every handle kind; Traits names the runtime calls that make and destroy it.
template <class Handle, class Traits>
class UniqueCudaHandle {
 public:
  UniqueCudaHandle() = default;
  UniqueCudaHandle(const UniqueCudaHandle&) = delete;
  UniqueCudaHandle& operator=(const UniqueCudaHandle&) = delete;
  UniqueCudaHandle(UniqueCudaHandle&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  UniqueCudaHandle& operator=(UniqueCudaHandle&& other) noexcept {
    UniqueCudaHandle(std::move(other)).swap(*this);
    return *this;
  }
  ~UniqueCudaHandle() {
    if (handle_ != nullptr) Traits::destroy(handle_);  // nothing useful to do with an error here
  }

  static Result<UniqueCudaHandle> create() {
    UniqueCudaHandle owner;
    WTMAP_TRY(cuda_status(Traits::create(&owner.handle_), Traits::kCreateCall, __FILE__, __LINE__));
    return Result<UniqueCudaHandle>(std::move(owner));
  }

  Handle get() const { return handle_; }
  explicit operator bool() const { return handle_ != nullptr; }

 private:
  void swap(UniqueCudaHandle& other) noexcept { std::swap(handle_, other.handle_); }
  Handle handle_ = nullptr;
};

// Non-blocking: its work neither waits for nor holds up the legacy default stream, which the
// construction code and Buffer's zero fill use.
struct StreamTraits {
  static constexpr const char* kCreateCall = "cudaStreamCreateWithFlags(cudaStreamNonBlocking)";
  static cudaError_t create(cudaStream_t* s) { return cudaStreamCreateWithFlags(s, cudaStreamNonBlocking); }
  static void destroy(cudaStream_t s) { cudaStreamDestroy(s); }
};

// With timing (cudaEventElapsedTime between two of them).
struct EventTraits {
  static constexpr const char* kCreateCall = "cudaEventCreate";
  static cudaError_t create(cudaEvent_t* e) { return cudaEventCreate(e); }
  static void destroy(cudaEvent_t e) { cudaEventDestroy(e); }
};

}  // namespace detail

using Stream = detail::UniqueCudaHandle<cudaStream_t, detail::StreamTraits>;
using Event = detail::UniqueCudaHandle<cudaEvent_t, detail::EventTraits>;

}  // namespace wtmap
