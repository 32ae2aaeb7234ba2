#include "wtmap/core/gpu_selection.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <limits>

#include "wtmap/core/detail/cuda_check.hpp"

namespace wtmap {
namespace {

// The decimal number of `text` (digits only, below 2^31); false for anything else.
bool parse_number(const std::string& text, std::uint64_t& value) {
  if (text.empty() || text.size() > 10) return false;
  value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return value <= static_cast<std::uint64_t>(std::numeric_limits<int>::max());
}

Status bad_form(const std::string& text, const std::string& why) {
  return invalid_argument("--gpus " + text + ": " + why +
                          "; use all, a count N (the first N GPUs) or a list of distinct device ordinals i,j,...");
}

std::string visible_text(int visible) {
  return std::to_string(visible) + (visible == 1 ? " GPU is visible" : " GPUs are visible");
}

}  // namespace

Result<GpuSelection> GpuSelection::parse(const std::string& text) {
  GpuSelection s;
  s.text_ = text;
  if (text == "all") return s;
  if (text.find(',') == std::string::npos) {
    if (!parse_number(text, s.count_)) return bad_form(text, "not a count");
    if (s.count_ == 0) return bad_form(text, "a run needs at least one GPU (--device cpu runs on the CPU)");
    return s;
  }
  std::size_t begin = 0;
  while (begin <= text.size()) {
    const std::size_t end = std::min(text.find(',', begin), text.size());
    std::uint64_t ordinal = 0;
    const std::string entry = text.substr(begin, end - begin);
    if (!parse_number(entry, ordinal)) return bad_form(text, "'" + entry + "' is not a device ordinal");
    if (std::find(s.listed_.begin(), s.listed_.end(), static_cast<int>(ordinal)) != s.listed_.end()) {
      return bad_form(text, "GPU " + entry + " is listed twice");
    }
    s.listed_.push_back(static_cast<int>(ordinal));
    begin = end + 1;
  }
  return s;
}

Result<std::vector<int>> GpuSelection::devices(int visible) const {
  if (visible <= 0) return Status{StatusCode::unavailable, "--gpus " + text_ + ": no usable CUDA device"};
  std::vector<int> ordinals;
  if (!listed_.empty()) {
    for (int g : listed_) {
      if (g >= visible) {
        return invalid_argument("--gpus " + text_ + ": there is no GPU " + std::to_string(g) + " (" +
                                visible_text(visible) + ", ordinals 0.." + std::to_string(visible - 1) + ")");
      }
    }
    return listed_;
  }
  if (count_ > static_cast<std::uint64_t>(visible)) {
    return invalid_argument("--gpus " + text_ + ": only " + visible_text(visible));
  }
  const int n = count_ > 0 ? static_cast<int>(count_) : visible;
  for (int g = 0; g < n; ++g) ordinals.push_back(g);
  return ordinals;
}

int visible_gpu_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // no driver or no card: not an error for the next CUDA call to find
    return 0;
  }
  return count;
}

Status use_gpu(int ordinal) {
  if (ordinal < 0) return {};
  const cudaError_t err = cudaSetDevice(ordinal);
  if (err == cudaSuccess) return {};
  return detail::cuda_status(err, ("cudaSetDevice(" + std::to_string(ordinal) + ")").c_str(), __FILE__, __LINE__);
}

ScopedGpu::ScopedGpu(int ordinal) {
  if (ordinal < 0) return;
  int current = 0;
  if (cudaGetDevice(&current) == cudaSuccess) previous_ = current;
  status_ = use_gpu(ordinal);
}

ScopedGpu::~ScopedGpu() {
  if (previous_ >= 0) cudaSetDevice(previous_);
}

std::string gpu_list_text(const std::vector<int>& ordinals) {
  std::string text;
  for (std::size_t k = 0; k < ordinals.size(); ++k) text += (k > 0 ? "," : "") + std::to_string(ordinals[k]);
  return text;
}

}  // namespace wtmap
