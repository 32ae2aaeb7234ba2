// libFuzzer harness: the command line of `wtmap index`, `count` and `align` -- option parsing and
// validation and whatever runs after it -- in a scratch folder holding a small reference, its
// index, reads and patterns. The input's first byte picks the command; the rest, split at NUL
// bytes, are its arguments (tests/fuzz/fuzz_cli.dict lists the options). An input with an
// argument holding '/' is not run, so that every path stays in the scratch folder, which is
// emptied of what a run wrote after each input. A command must return 0 or 1 without a crash, a hang, a sanitizer
// report or an allocation past libFuzzer's limit.
//
// The commands are reached through their entry functions, as main() calls them, so the harness
// follows the CLI's sources wherever they live (tests/fuzz/CMakeLists.txt takes them from the
// `wtmap` target).
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <new>
#include <set>
#include <string>
#include <vector>

#include "fuzz_cli_exit.hpp"
#include "fuzz_support.hpp"

namespace wtmap::cli {
int index_main(int argc, char** argv);
int count_main(int argc, char** argv);
int align_main(int argc, char** argv);
}  // namespace wtmap::cli

namespace {

std::set<std::string> fixtures;  // the scratch folder's files before any input ran

std::set<std::string> folder_entries() {
  std::set<std::string> names;
  DIR* dir = opendir(".");
  WTMAP_FUZZ_CHECK(dir != nullptr, "cannot list the scratch folder");
  while (const dirent* e = readdir(dir)) names.insert(e->d_name);
  closedir(dir);
  return names;
}

int run(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int argc = static_cast<int>(args.size());
  struct Inside {  // _Exit throws FinishedRun while this lives (fuzz_cli_exit.cpp)
    Inside() { wtmap::fuzz::inside_command = true; }
    ~Inside() { wtmap::fuzz::inside_command = false; }
  } inside;
  try {  // as main() does: what still throws ends the run with exit status 1
    if (args[0] == "index") return wtmap::cli::index_main(argc, argv.data());
    if (args[0] == "count") return wtmap::cli::count_main(argc, argv.data());
    return wtmap::cli::align_main(argc, argv.data());
  } catch (const wtmap::fuzz::FinishedRun& exit) {
    return exit.status;
  } catch (const std::bad_alloc&) {
  } catch (const std::exception&) {
  }
  return 1;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  static std::string folder = wtmap::fuzz::scratch_path(".d");
  if (mkdir(folder.c_str(), 0700) != 0 || chdir(folder.c_str()) != 0) std::abort();
  std::atexit([] {
    std::error_code ignored;
    std::filesystem::remove_all(folder, ignored);
  });
  // SAM on stdout and reads from stdin ("-") would clutter the log and wait on a terminal.
  if (std::freopen("/dev/null", "w", stdout) == nullptr || std::freopen("/dev/null", "r", stdin) == nullptr) std::abort();
  wtmap::fuzz::write_file("ref.fa", ">chr1 first\nACGTTGCAAGGCTTAACCGGATCGATCGGGCTAGCTAGGATCCAAT\nNNNNACGTAC\n>chr2\nTTGACCAGTAGGACCATTAG\n");
  wtmap::fuzz::write_file("reads.fq", "@r1\nACGTTGCAAGGC\n+\nIIIIIIIIIIII\n@r2\nCTAATGGTCC\n+\n##########\n");
  wtmap::fuzz::write_file("pats.fa", ">p1\nGATC\n>p2\nAC\n");
  WTMAP_FUZZ_CHECK(run({"index", "-t", "1", "--device", "cpu", "-p", "ref", "ref.fa"}) == 0, "cannot index ref.fa");
  fixtures = folder_entries();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static const char* const kCommands[] = {"index", "count", "align"};
  std::vector<std::string> args = {kCommands[data[0] % 3]};
  std::string arg;
  for (std::size_t i = 1; i <= size && args.size() < 32; ++i) {
    if (i < size && data[i] != '\0') {
      arg += static_cast<char>(data[i]);
      continue;
    }
    if (arg.find('/') != std::string::npos) return 0;
    if (i > 1) args.push_back(arg);
    arg.clear();
  }
  const int rc = run(args);
  WTMAP_FUZZ_CHECK(rc == 0 || rc == 1, "exit status " + std::to_string(rc));
  for (const std::string& name : folder_entries()) {
    std::error_code ignored;  // no shell: a name may hold anything but '/'
    if (fixtures.count(name) == 0) std::filesystem::remove_all(name, ignored);
  }
  return 0;
}
