// Making `wtmap align` short of GPU memory from a test: WTMAP_GPU_MEM_LIMIT (core's
// device_memory.hpp) set for the runs a test starts, and what `wtmap align -v` says of the device
// memory it held, from which a test chooses a limit between what one read needs and what the
// whole input in one batch needs.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <regex>
#include <string>

namespace wtmap::altest {

// WTMAP_GPU_MEM_LIMIT for the processes started while it lives (the variable is read by them, not
// by the test).
class ScopedGpuMemoryLimit {
 public:
  explicit ScopedGpuMemoryLimit(std::uint64_t bytes) : ScopedGpuMemoryLimit(std::to_string(bytes)) {}
  explicit ScopedGpuMemoryLimit(const std::string& value) { setenv("WTMAP_GPU_MEM_LIMIT", value.c_str(), 1); }
  ~ScopedGpuMemoryLimit() { unsetenv("WTMAP_GPU_MEM_LIMIT"); }
  ScopedGpuMemoryLimit(const ScopedGpuMemoryLimit&) = delete;
  ScopedGpuMemoryLimit& operator=(const ScopedGpuMemoryLimit&) = delete;
};

// `wtmap align -v`'s GPU memory line: bytes held before the first batch (the index, the k-mer
// table, the mapper's reference), the most held while they loaded, and the most held while the
// batches ran.
struct GpuMemoryUse {
  std::uint64_t before_batches = 0, loading_peak = 0, peak = 0;
};
inline std::optional<GpuMemoryUse> gpu_memory_use(const std::string& err) {
  static const std::regex line(
      R"(GPU memory held: (\d+) bytes before the first batch \((\d+) at the peak of loading\), (\d+) at the peak of the batches)");
  std::smatch m;
  if (!std::regex_search(err, m, line)) return std::nullopt;
  return GpuMemoryUse{std::stoull(m[1]), std::stoull(m[2]), std::stoull(m[3])};
}

// The lines saying that the GPU was short of memory and the batches got smaller.
inline std::size_t shortage_lines(const std::string& err) {
  std::size_t count = 0;
  for (std::size_t at = err.find("the GPU was short of memory"); at != std::string::npos;
       at = err.find("the GPU was short of memory", at + 1)) {
    ++count;
  }
  return count;
}

}  // namespace wtmap::altest
