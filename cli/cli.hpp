// wtmap CLI (internal): small helpers shared by the subcommands.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "wtmap/aligner/stage_clock.hpp"
#include "wtmap/core/config.hpp"
#include "wtmap/core/gpu_selection.hpp"
#include "wtmap/core/status.hpp"
#include "wtmap/io/output_file.hpp"

namespace wtmap::cli {

using aligner::guarded;
using aligner::StageClock;

// Messages on stderr prefixed like bwa's: "[wtmap index] ..."; none when quiet (-q), where only
// errors (fail, usage_error) are printed.
class Log {
 public:
  explicit Log(const char* command, bool quiet = false)
      : command_(command), quiet_(quiet), start_(std::chrono::steady_clock::now()) {}
  template <class... Args>
  void info(const char* fmt, Args... args) const {
    if (quiet_) return;
    std::fprintf(stderr, "[wtmap %s %7.1fs] ", command_, seconds());
    std::fprintf(stderr, fmt, args...);
    std::fputc('\n', stderr);
  }
  double seconds() const { return seconds_at(std::chrono::steady_clock::now()); }
  // Seconds from the start to t.
  double seconds_at(std::chrono::steady_clock::time_point t) const {
    return std::chrono::duration<double>(t - start_).count();
  }
  std::chrono::steady_clock::time_point start() const { return start_; }

 private:
  const char* command_;
  bool quiet_;
  std::chrono::steady_clock::time_point start_;
};

int fail(const char* command, const Status& s);

// Writes `text` to `file`'s temporary and commits it (io/output_file.hpp: renamed over the name
// when complete, removed on failure): --stats-json's file, WTMAP_TRACE's.
Status write_and_commit(io::OutputFile& file, const std::string& text);

// `wtmap --version`, as samtools prints its own: "wtmap VERSION (commit C)" (the commit where the
// build knows it), then the libraries it was built with. To stdout; returns 0.
int print_version();

// A command line the command cannot take: one line saying what is wrong and where the options
// are ("see 'wtmap align --help'"), as git and GNU tools answer, not the whole usage. Returns 1.
int usage_error(const char* command, const std::string& message);
// What a command says when an operand or -x is missing: its usage, on stderr, when it was given
// no arguments at all (argc 1, as bwa does), else usage_error(message). Returns 1.
int usage_or_error(int argc, const char* command, const std::string& message, const char* usage);

// The options every command takes: -t INT, --device auto|gpu|cpu, --gpus all|N|i,j,...,
// -q/--quiet, -h/--help, --version.
struct CommonOptions {
  // -t's bound: far above any host's cores, far below where a thread count would wrap.
  static constexpr std::uint64_t kMostThreads = 4096;
  std::string device = "auto";
  std::uint64_t threads = 0;  // 0: all cores
  bool quiet = false;         // -q: errors only on stderr
  GpuSelection gpu_selection = GpuSelection::all();
  bool gpus_given = false;  // --gpus (refused with --device cpu; an error, not the CPU, without a GPU)
  std::string gpus_error;   // --gpus' value was malformed: why (Outcome::bad_gpus)
  // After apply() picked the GPU: the devices --gpus selects, in its order (the first is the
  // calling thread's current device), and how many were visible. Empty on the CPU.
  std::vector<int> gpus;
  int visible_gpus = 0;

  enum class Outcome { not_common, consumed, help, version, bad_threads, bad_gpus };
  // Consumes argv[i] (and its value, advancing i) when it is one of the common options.
  Outcome handle(int argc, char** argv, int& i);
  // Applies -t, then picks the backend: auto falls back to the CPU with a note on stderr. On the
  // GPU, fills `gpus` (--gpus against the visible devices), sets WTMAP_GPU_WAIT's wait on each,
  // and makes the first current.
  Result<Backend> apply(const Log& log);
  // "GPU 0 (1 of 2 visible)", "GPUs 2,0 (2 of 4 visible)": the information line's words.
  std::string gpus_used() const;
  // The device of each lane -- a copy of the index and its searching threads -- of a run on
  // `backend`: the selected GPUs, or the CPU (-1) once, or WTMAP_CPU_LANES times (1..8; a test's
  // setting, not a user option: the CPU suites then run the lanes' wiring that --gpus runs).
  std::vector<int> lane_devices(Backend backend) const;
};

// Handles argv[i], an option word (is_option_word) that is none of `command`'s own: a common
// option, or an unknown one; returns -1 to go on parsing, else the exit status (0 after --help or
// --version, 1 after a usage error).
int handle_common_or_unknown(CommonOptions& common, int argc, char** argv, int& i, const char* command,
                             const char* usage);

// Operands and options (POSIX utility guideline 10): "--" ends the options, so that every word
// after it is an operand, even one that begins with '-'; before it, a word that begins with '-' is
// an option, but "-" alone (standard input).
inline bool ends_options(const std::string& word, bool& operands_only) {
  if (operands_only || word != "--") return false;
  operands_only = true;
  return true;
}
inline bool is_option_word(const std::string& word, bool operands_only) {
  return !operands_only && word.size() > 1 && word[0] == '-';
}
// Where argv[i] is "--" or an operand, takes it (an operand's place into `operand_at`, in the
// order given) and returns true; an option word is left to the command.
inline bool take_operand(const std::string& word, int i, bool& operands_only, std::vector<int>& operand_at) {
  if (ends_options(word, operands_only)) return true;
  if (is_option_word(word, operands_only)) return false;
  operand_at.push_back(i);
  return true;
}

// Parses an unsigned integer option value; false if it is not one.
bool parse_count(const char* text, std::uint64_t& value);

std::string index_path(const std::string& prefix);

// The index file that -x names, in this order: the prefix (X.wtmap, what `wtmap index -p X`
// writes, and `wtmap index X.fa` writes X.fa.wtmap, as bwa names its files), the .wtmap file
// itself, or the FASTA it was built from under `-p` without the FASTA extension (ref.fa ->
// ref.wtmap). The first that exists; else io_error naming every path tried.
Result<std::string> resolve_index(const std::string& x);

// The FASTA an index was built from, where the command line says it (an index file does not
// record it): -x naming an existing FASTA file (a FASTA extension: ref.fa, ref.fa.gz), or an
// `index_file` named after one, as `wtmap index ref.fa` names ref.fa.wtmap. Else empty.
std::string fasta_of_index(const std::string& x, const std::string& index_file);

// bwa's order (`bwa mem ref.fa reads.fq`) where -x is missing: when the first of two or more
// operands names an index (resolve_index finds one), says on one line what to type instead and
// returns 1; else -1, and the command goes on to its own message. `operand_at`: the operands'
// places in argv. A reference cannot be told from reads by its name (reads come as FASTA too),
// so only an index that exists makes the first operand a reference.
int hint_bwa_order(const char* command, int argc, char** argv, const std::vector<int>& operand_at);

int index_main(int argc, char** argv);
int count_main(int argc, char** argv);
int align_main(int argc, char** argv);

}  // namespace wtmap::cli
