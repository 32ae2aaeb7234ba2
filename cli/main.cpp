// wtmap: GPU FM-index over a wavelet tree -- index a reference, count patterns, align reads.
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>

#include "cli.hpp"
#include "wtmap/io/output_file.hpp"

namespace {

constexpr const char* kUsage =
    "Usage: wtmap <command> [options]\n"
    "\n"
    "Commands:\n"
    "  index   build the FM-index of a FASTA reference (both strands)\n"
    "  count   count and locate exact matches of many patterns at once\n"
    "  align   align DNA reads (FASTQ or FASTA, single or pairs) and write SAM/BAM: gapped\n"
    "          local alignment as bwa mem by default, every hit with up to k mismatches with -k\n"
    "\n"
    "Run 'wtmap <command> --help' (or the command alone) for its options.\n"
    "'wtmap --version' (or -V, or after a command) prints the version.\n";

int run(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 1 : 0;
  }
  if (std::strcmp(argv[1], "--version") == 0 || std::strcmp(argv[1], "-V") == 0) return wtmap::cli::print_version();
  if (std::strcmp(argv[1], "index") == 0) return wtmap::cli::index_main(argc - 1, argv + 1);
  if (std::strcmp(argv[1], "count") == 0) return wtmap::cli::count_main(argc - 1, argv + 1);
  if (std::strcmp(argv[1], "align") == 0) return wtmap::cli::align_main(argc - 1, argv + 1);
  std::fprintf(stderr, "wtmap: unknown command '%s'; see 'wtmap --help'\n", argv[1]);
  return 1;
}

}  // namespace

// Errors travel as Status (the pipeline threads turn std::bad_alloc into one, cli::guarded);
// what still throws ends the run here with a message instead of an abort.
int main(int argc, char** argv) {
  wtmap::io::install_signal_cleanup();  // an interrupted run leaves no temporary behind
  try {
    return run(argc, argv);
  } catch (const std::bad_alloc&) {
    std::fputs("wtmap: out of host memory\n", stderr);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wtmap: %s\n", e.what());
  }
  return 1;
}
