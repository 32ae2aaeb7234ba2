// Running the `wtmap` executable from a test as a user runs it: through the shell, with its
// standard input, output and error in files, and helpers to read what it printed.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "fm_support.hpp"

#ifndef WTMAP_EXECUTABLE
#error "WTMAP_EXECUTABLE must name the wtmap program"
#endif

namespace wtmap::fmtest {

// A pattern file's record, and the files a test writes of them.
struct Pattern {
  std::string name, sequence;
};

inline std::string fastq_text(const std::vector<Pattern>& patterns) {
  std::string s;
  for (const Pattern& p : patterns) s += "@" + p.name + " comment\n" + p.sequence + "\n+\n" + std::string(p.sequence.size(), 'I') + "\n";
  return s;
}

// FASTA with the sequences wrapped at `width` letters.
inline std::string fasta_text(const std::vector<Pattern>& patterns, std::size_t width) {
  std::string s;
  for (const Pattern& p : patterns) {
    s += ">" + p.name + "\n";
    for (std::size_t i = 0; i < p.sequence.size(); i += width) s += p.sequence.substr(i, width) + "\n";
  }
  return s;
}

struct RunResult {
  int exit_code = -1;  // -1: killed by a signal
  std::string out, err;
};

// Runs `wtmap <args>` through the shell with standard input from `stdin_path`.
inline RunResult run_wtmap(const TempDir& dir, const std::string& args, const std::string& stdin_path = "/dev/null") {
  const std::string out = dir.file("stdout.txt"), err = dir.file("stderr.txt");
  const std::string command = shell_quote(wtmap_program(WTMAP_EXECUTABLE)) + " " + args + " < " + shell_quote(stdin_path) + " > " + shell_quote(out) +
                              " 2> " + shell_quote(err);
  const int status = std::system(command.c_str());
  RunResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_file(out);
  r.err = read_file(err);
  return r;
}

// Starts `wtmap <args>` as a shell starts a foreground job -- the signals wtmap handles at their
// defaults -- with stderr to /dev/null, for a test that signals it. Returns the child's id
// (negative where fork failed).
inline pid_t start_wtmap(const std::vector<std::string>& args) {
  const std::string program = wtmap_program(WTMAP_EXECUTABLE);
  std::vector<char*> argv{const_cast<char*>(program.c_str())};
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t child = fork();
  if (child == 0) {
    for (const int s : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) ::signal(s, SIG_DFL);
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, 2);
    execv(program.c_str(), argv.data());
    _exit(127);
  }
  return child;
}

// Sends `signal` to `child`, which must die of it.
inline void expect_signal_ends(pid_t child, int signal) {
  kill(child, signal);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "exit status " << WEXITSTATUS(status);
  EXPECT_EQ(WTERMSIG(status), signal);
}

inline std::string describe(const RunResult& r) { return "exit " + std::to_string(r.exit_code) + ", stderr:\n" + r.err; }

inline std::vector<std::string> split(const std::string& s, char by) {
  std::vector<std::string> parts;
  std::size_t begin = 0;
  while (true) {
    const std::size_t end = s.find(by, begin);
    parts.push_back(s.substr(begin, end == std::string::npos ? std::string::npos : end - begin));
    if (end == std::string::npos) return parts;
    begin = end + 1;
  }
}

// One line of `wtmap count` output: name TAB count [TAB contig:pos1:strand,...].
struct CountLine {
  std::string name;
  std::uint64_t count = 0;
  std::vector<Hit> hits;  // 0-based positions
  bool has_hits_column = false;
};

inline std::vector<CountLine> parse_count_output(const std::string& out, const std::vector<TestContig>& contigs) {
  std::map<std::string, std::uint32_t> contig_ids;
  for (std::uint32_t k = 0; k < contigs.size(); ++k) contig_ids[contigs[k].name] = k;
  std::vector<CountLine> lines;
  if (out.empty()) return lines;
  if (out.back() != '\n') throw std::runtime_error("output does not end with a newline");
  for (const std::string& line : split(out.substr(0, out.size() - 1), '\n')) {
    const auto fields = split(line, '\t');
    if (fields.size() < 2 || fields.size() > 3) throw std::runtime_error("not 2 or 3 fields: '" + line + "'");
    CountLine c;
    c.name = fields[0];
    c.count = std::stoull(fields[1]);
    c.has_hits_column = fields.size() == 3;
    if (c.has_hits_column && !fields[2].empty()) {
      for (const std::string& h : split(fields[2], ',')) {
        const std::size_t strand_at = h.rfind(':'), pos_at = h.rfind(':', strand_at - 1);
        if (strand_at == std::string::npos || pos_at == std::string::npos) throw std::runtime_error("bad hit '" + h + "'");
        const std::string contig = h.substr(0, pos_at), strand = h.substr(strand_at + 1);
        if (contig_ids.count(contig) == 0 || (strand != "+" && strand != "-")) throw std::runtime_error("bad hit '" + h + "'");
        const std::uint64_t pos1 = std::stoull(h.substr(pos_at + 1, strand_at - pos_at - 1));
        if (pos1 == 0) throw std::runtime_error("position 0 in '" + h + "' (positions are 1-based)");
        c.hits.push_back({contig_ids[contig], pos1 - 1, strand[0]});
      }
    }
    lines.push_back(std::move(c));
  }
  return lines;
}

// Every line that wtmap count printed against expected_of(pattern) (a naive scan's sorted hits), in
// input order; `found`, if given, counts the patterns with a hit.
template <class ExpectedOf>
void expect_count_lines(const std::string& out, const std::vector<TestContig>& contigs, const std::vector<Pattern>& patterns,
                        bool located, ExpectedOf expected_of, int* found = nullptr) {
  std::vector<CountLine> lines;
  ASSERT_NO_THROW(lines = parse_count_output(out, contigs)) << out;
  ASSERT_EQ(lines.size(), patterns.size());
  int wrong = 0;
  for (std::size_t i = 0; i < patterns.size(); ++i) {
    const auto expected = expected_of(patterns[i].sequence);
    SCOPED_TRACE(patterns[i].name);
    EXPECT_EQ(lines[i].name, patterns[i].name);
    EXPECT_EQ(lines[i].count, expected.size());
    EXPECT_EQ(lines[i].has_hits_column, located);
    if (located) {
      EXPECT_EQ(lines[i].hits, expected);
    }
    wrong += lines[i].count != expected.size();
    if (found != nullptr) *found += !expected.empty();
    ASSERT_LT(wrong, 10) << "stopping after 10 wrong counts";
  }
}

}  // namespace wtmap::fmtest
