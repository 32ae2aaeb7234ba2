// wtmap core: which GPUs a run uses (`--gpus all|N|i,j,...`), and binding a host thread to one.
//
// CUDA keeps a current device per host thread (cudaSetDevice); every device resource -- memory,
// streams, events, kernel launches -- belongs to the device that was current where it was made.
// A run on several GPUs therefore binds each thread that touches device g to g first (use_gpu)
// and makes every resource of g with g current; ScopedGpu does that for a block and restores the
// thread's previous device after it (releasing a GPU's resources from another thread).
// The ordinals are CUDA's, after CUDA_VISIBLE_DEVICES (so `CUDA_VISIBLE_DEVICES=3 wtmap ...`
// picks one card by its system number). Space and time: O(ordinals).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "wtmap/core/status.hpp"

namespace wtmap {

// A --gpus value as written, checked for form before any device is asked: "all", a count N >= 1
// (the first N visible devices), or a comma list of two or more distinct ordinals (i,j,...).
// One number is always a count ("2": devices 0 and 1).
class GpuSelection {
 public:
  // invalid_argument naming the text for anything else: empty, "0", signs, spaces, empty list
  // entries, a number past 2^31, an ordinal listed twice.
  static Result<GpuSelection> parse(const std::string& text);
  static GpuSelection all() { return GpuSelection{}; }

  // The ordinals, in the order given, against `visible` devices: invalid_argument where a count
  // exceeds them or an ordinal is not among them; unavailable where none is visible.
  Result<std::vector<int>> devices(int visible) const;
  const std::string& text() const { return text_; }

 private:
  std::string text_ = "all";
  std::uint64_t count_ = 0;   // the first count_ devices, when > 0
  std::vector<int> listed_;   // else these, or all when empty
};

// CUDA devices visible to this process (cudaGetDeviceCount; 0 where there is no driver or card).
int visible_gpu_count();

// Makes `ordinal` the calling thread's current device (checked cudaSetDevice); a negative
// ordinal leaves the thread as it is (a CPU run, or a caller that bound it already).
Status use_gpu(int ordinal);

// `ordinal` current for a block, the thread's previous device back after it (both checked where
// they can be: status() after construction; a failure to restore is ignored, as in destructors).
// Making a device current starts its context where it has none (CUDA 12), so a thread that
// never chose one (CUDA's device 0) binds itself to a device in use before it uses this.
class ScopedGpu {
 public:
  explicit ScopedGpu(int ordinal);
  ~ScopedGpu();
  ScopedGpu(const ScopedGpu&) = delete;
  ScopedGpu& operator=(const ScopedGpu&) = delete;
  const Status& status() const { return status_; }

 private:
  int previous_ = -1;
  Status status_;
};

// "0", "0,1,2": the ordinals as --gpus lists them (for messages).
std::string gpu_list_text(const std::vector<int>& ordinals);

}  // namespace wtmap
