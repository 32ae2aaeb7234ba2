#include "cli.hpp"

#include <cuda_runtime_api.h>  // CUDART_VERSION
#include <htslib/hts.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#ifdef WTMAP_WITH_JEMALLOC
#include <jemalloc/jemalloc.h>
#endif

#include "build_info.hpp"

#include "wtmap/core/gpu_host_wait.hpp"

namespace wtmap::cli {

Status write_and_commit(io::OutputFile& file, const std::string& text) {
  std::FILE* out = std::fopen(file.write_path().c_str(), "w");
  if (out == nullptr) return {StatusCode::io_error, file.path() + ": cannot open for writing"};
  const bool written = std::fwrite(text.data(), 1, text.size(), out) == text.size();
  if (std::fclose(out) != 0 || !written) return {StatusCode::io_error, file.path() + ": write failed"};
  return file.commit();
}

int fail(const char* command, const Status& s) {
  std::fprintf(stderr, "[wtmap %s] error: %s\n", command, s.message().c_str());
  return 1;
}

int print_version() {
  std::printf("wtmap %s", kVersion);
  if (*kGitCommit != '\0') std::printf(" (commit %s)", kGitCommit);
  std::printf("\nUsing htslib %s\n", hts_version());
#ifdef WTMAP_WITH_JEMALLOC
  const char* jemalloc = nullptr;
  std::size_t size = sizeof jemalloc;
  if (mallctl("version", &jemalloc, &size, nullptr, 0) == 0) std::printf("Using jemalloc %s\n", jemalloc);
#endif
  std::printf("Built with CUDA %d.%d\n", CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10);
  return 0;
}

int usage_error(const char* command, const std::string& message) {
  std::fprintf(stderr, "[wtmap %s] %s; see 'wtmap %s --help'\n", command, message.c_str(), command);
  return 1;
}

int usage_or_error(int argc, const char* command, const std::string& message, const char* usage) {
  if (argc > 1) return usage_error(command, message);
  std::fputs(usage, stderr);
  return 1;
}

CommonOptions::Outcome CommonOptions::handle(int argc, char** argv, int& i) {
  const std::string a = argv[i];
  const bool has_value = i + 1 < argc;
  if (a == "-h" || a == "--help") return Outcome::help;
  if (a == "--version") return Outcome::version;
  if (a == "-q" || a == "--quiet") {
    quiet = true;
    return Outcome::consumed;
  }
  if (a == "-t" && has_value) {
    return parse_count(argv[++i], threads) && threads > 0 && threads <= kMostThreads ? Outcome::consumed : Outcome::bad_threads;
  }
  if (a == "--device" && has_value) {
    device = argv[++i];
    return Outcome::consumed;
  }
  if (a == "--gpus" && has_value) {
    Result<GpuSelection> parsed = GpuSelection::parse(argv[++i]);
    if (!parsed.ok()) {
      gpus_error = parsed.status().message();
      return Outcome::bad_gpus;
    }
    gpu_selection = std::move(*parsed);
    gpus_given = true;
    return Outcome::consumed;
  }
  return Outcome::not_common;
}

int handle_common_or_unknown(CommonOptions& common, int argc, char** argv, int& i, const char* command,
                             const char* usage) {
  switch (common.handle(argc, argv, i)) {
    case CommonOptions::Outcome::consumed: return -1;
    case CommonOptions::Outcome::help: std::fputs(usage, stdout); return 0;
    case CommonOptions::Outcome::version: return print_version();
    case CommonOptions::Outcome::bad_threads: return usage_error(command, "-t needs an integer in 1.." + std::to_string(CommonOptions::kMostThreads));
    case CommonOptions::Outcome::bad_gpus: return usage_error(command, common.gpus_error);
    case CommonOptions::Outcome::not_common: break;
  }
  return usage_error(command, std::string("unknown or incomplete option '") + argv[i] + "'");
}

namespace {

// The GPUs --gpus selects, the first made current (CUDA starts its context now; the others'
// start on the threads that load their index copies, at once). Where WTMAP_GPU_WAIT names the
// host's way of waiting (gpu_host_wait.hpp: a setting of the current device), each is made
// current in turn to take it.
Result<std::vector<int>> select_gpus(const GpuSelection& selection, int visible) {
  Result<std::vector<int>> devices = selection.devices(visible);
  if (!devices.ok()) return devices.status();
  if (std::getenv(kGpuHostWaitVariable) != nullptr) {
    for (int g : *devices) {
      WTMAP_TRY(use_gpu(g));
      if (Status s = set_gpu_host_wait_from_environment(); !s.ok()) return s;
    }
  }
  WTMAP_TRY(use_gpu(devices->front()));
  return devices;
}

}  // namespace

Result<Backend> CommonOptions::apply(const Log& log) {
  set_cpu_threads(static_cast<unsigned>(threads));
  if (device == "cpu") {
    if (gpus_given) return invalid_argument("--gpus " + gpu_selection.text() + " selects GPUs, but --device cpu runs on the CPU");
    return Backend::cpu;
  }
  if (device == "gpu" && !gpu_available()) {
    return Status{StatusCode::unavailable, "--device gpu: no usable CUDA device (driver or card missing)"};
  }
  if (device != "gpu" && device != "auto") return invalid_argument("--device must be auto, gpu or cpu, not '" + device + "'");
  if (device == "auto" && !gpu_available()) {
    // --gpus asked for GPUs: an error rather than a slower run than asked for.
    if (gpus_given) return gpu_selection.devices(0).status();
    log.info("no usable CUDA device: running on the CPU (slower)");
    return Backend::cpu;
  }
  visible_gpus = visible_gpu_count();
  Result<std::vector<int>> selected = select_gpus(gpu_selection, visible_gpus);
  if (!selected.ok()) return selected.status();
  gpus = std::move(*selected);
  return Backend::gpu;
}

std::vector<int> CommonOptions::lane_devices(Backend backend) const {
  if (backend == Backend::gpu) return gpus;
  const char* text = std::getenv("WTMAP_CPU_LANES");
  std::uint64_t lanes = 0;
  if (text == nullptr || !parse_count(text, lanes) || lanes < 1 || lanes > 8) lanes = 1;
  return std::vector<int>(lanes, -1);
}

std::string CommonOptions::gpus_used() const {
  return (gpus.size() == 1 ? "GPU " : "GPUs ") + gpu_list_text(gpus) + " (" + std::to_string(gpus.size()) + " of " +
         std::to_string(visible_gpus) + " visible)";
}

bool parse_count(const char* text, std::uint64_t& value) {
  if (text == nullptr || *text < '0' || *text > '9') return false;
  char* end = nullptr;
  errno = 0;
  value = std::strtoull(text, &end, 10);
  return errno == 0 && *end == '\0';
}

std::string index_path(const std::string& prefix) { return prefix + ".wtmap"; }

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// `path` without its FASTA extension (.fa, .fasta, .fna, .fas, .fsa, each maybe .gz or .bgz;
// any case); empty if it has none.
std::string without_fasta_extension(const std::string& path) {
  std::string lower = path;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const char* compression : {".gz", ".bgz", ""}) {
    for (const char* extension : {".fa", ".fasta", ".fna", ".fas", ".fsa"}) {
      const std::string suffix = std::string(extension) + compression;
      if (ends_with(lower, suffix) && lower.size() > suffix.size()) return path.substr(0, path.size() - suffix.size());
    }
  }
  return "";
}

bool is_file(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec) && !std::filesystem::is_directory(path, ec);
}

}  // namespace

Result<std::string> resolve_index(const std::string& x) {
  std::vector<std::string> tried = {index_path(x)};
  if (ends_with(x, ".wtmap")) tried.push_back(x);
  if (const std::string stem = without_fasta_extension(x); !stem.empty()) tried.push_back(index_path(stem));
  for (const std::string& path : tried) {
    if (is_file(path)) return path;
  }
  std::string message = "no index for -x " + x + ": tried " + tried[0];
  for (std::size_t k = 1; k < tried.size(); ++k) message += (k + 1 == tried.size() ? " and " : ", ") + tried[k];
  if (!ends_with(x, ".wtmap") && is_file(x)) message += "; 'wtmap index " + x + "' builds one";
  return Status{StatusCode::io_error, message};
}

std::string fasta_of_index(const std::string& x, const std::string& index_file) {
  const std::string suffix = index_path("");
  const std::string stem = ends_with(index_file, suffix) ? index_file.substr(0, index_file.size() - suffix.size()) : "";
  for (const std::string& candidate : {x, stem}) {
    if (!without_fasta_extension(candidate).empty() && is_file(candidate)) return candidate;
  }
  return "";
}

namespace {

// A word as the shell takes it back: as it is where it holds nothing the shell would read.
std::string shell_word(const std::string& word) {
  const bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [](unsigned char c) {
    return std::isalnum(c) || std::strchr("_./:=,+-@%", c) != nullptr;
  });
  if (plain) return word;
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

}  // namespace

int hint_bwa_order(const char* command, int argc, char** argv, const std::vector<int>& operand_at) {
  if (operand_at.size() < 2 || !resolve_index(argv[operand_at[0]]).ok()) return -1;
  std::string line = std::string("wtmap ") + command + " -x " + shell_word(argv[operand_at[0]]);
  for (int i = 1; i < argc; ++i) {
    if (i != operand_at[0]) line += " " + shell_word(argv[i]);
  }
  std::fprintf(stderr, "[wtmap %s] the index comes with -x; did you mean: %s\n", command, line.c_str());
  return 1;
}

}  // namespace wtmap::cli
