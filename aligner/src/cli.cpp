#include "cli.hpp"

#include <cerrno>
#include <cstdlib>

namespace wtmap::cli {

int fail(const char* command, const Status& s) {
  std::fprintf(stderr, "[wtmap %s] error: %s\n", command, s.message().c_str());
  return 1;
}

int usage_error(const char* command, const std::string& message, const char* usage) {
  std::fprintf(stderr, "[wtmap %s] %s\n\n%s", command, message.c_str(), usage);
  return 1;
}

Result<Backend> choose_backend(const std::string& device, const Log& log) {
  if (device == "cpu") return Backend::cpu;
  if (device == "gpu") {
    if (!gpu_available()) return Status{StatusCode::unavailable, "--device gpu: no usable CUDA device (driver or card missing)"};
    return Backend::gpu;
  }
  if (device != "auto") return invalid_argument("--device must be auto, gpu or cpu, not '" + device + "'");
  if (gpu_available()) return Backend::gpu;
  log.info("no usable CUDA device: running on the CPU (slower)");
  return Backend::cpu;
}

bool parse_count(const char* text, std::uint64_t& value) {
  if (text == nullptr || *text < '0' || *text > '9') return false;
  char* end = nullptr;
  errno = 0;
  value = std::strtoull(text, &end, 10);
  return errno == 0 && *end == '\0';
}

std::string index_path(const std::string& prefix) { return prefix + ".wtmap"; }

}  // namespace wtmap::cli
