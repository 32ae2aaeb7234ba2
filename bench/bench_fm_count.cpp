// SDSL baseline for `wtmap count`: builds sdsl::csa_wt<> over the same reference text as
// `wtmap index` (every contig on both strands; ambiguity codes and contig ends become a
// separator that no A/C/G/T pattern can match) and counts every pattern with sdsl::count in
// an OpenMP parallel for over all cores.
//
//   bench_fm_count REF.fa[.gz] PATTERNS.fa|fq [PATTERNS2 ...] [--check NAME.tsv ...] [--json OUT.json]
//
// Per pattern file it prints: patterns, total count, count wall seconds, patterns/s. The text
// read and construction time are printed too. --check FILE (one per pattern file, same order)
// compares the counts with a `wtmap count` TSV (name TAB count ...) line by line. Patterns that
// contain anything but A/C/G/T count 0 (as in wtmap count).
#include <omp.h>
#include <zlib.h>

#include <sdsl/suffix_arrays.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

[[noreturn]] void die(const std::string& msg) {
  std::fprintf(stderr, "bench_fm_count: %s\n", msg.c_str());
  std::exit(1);
}

std::string read_all(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) die("cannot open " + path);
  gzbuffer(f, 1 << 20);
  std::string data;
  std::vector<char> buf(1 << 22);
  int got;
  while ((got = gzread(f, buf.data(), static_cast<unsigned>(buf.size()))) > 0) data.append(buf.data(), got);
  if (got < 0) die("read error in " + path);
  gzclose(f);
  return data;
}

char code_of(char c) {
  switch (c) {
    case 'A': case 'a': return 'A';
    case 'C': case 'c': return 'C';
    case 'G': case 'g': return 'G';
    case 'T': case 't': return 'T';
    default: return 0;
  }
}

// Both strands of every contig, separated by '#' at contig ends and ambiguity runs.
std::string reference_text(const std::string& fasta) {
  std::string fwd;
  fwd.reserve(fasta.size());
  std::size_t i = 0;
  auto sep = [&] { if (!fwd.empty() && fwd.back() != '#') fwd.push_back('#'); };
  while (i < fasta.size()) {
    std::size_t eol = fasta.find('\n', i);
    if (eol == std::string::npos) eol = fasta.size();
    if (fasta[i] == '>') {
      sep();
    } else {
      for (std::size_t j = i; j < eol; ++j) {
        const char c = fasta[j];
        if (c == '\r' || c == ' ') continue;
        const char x = code_of(c);
        if (x) fwd.push_back(x); else sep();
      }
    }
    i = eol + 1;
  }
  sep();
  std::string text = fwd;
  for (auto it = fwd.rbegin(); it != fwd.rend(); ++it) {
    switch (*it) {
      case 'A': text.push_back('T'); break;
      case 'C': text.push_back('G'); break;
      case 'G': text.push_back('C'); break;
      case 'T': text.push_back('A'); break;
      default: if (text.back() != '#') text.push_back('#');
    }
  }
  return text;
}

struct Patterns {
  std::vector<std::string> names;
  std::vector<std::string> seqs;
};

Patterns read_patterns(const std::string& path) {
  const std::string data = read_all(path);
  Patterns p;
  std::istringstream in(data);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    if (line[0] == '>') {
      p.names.push_back(line.substr(1, line.find_first_of(" \t") - 1));
      p.seqs.emplace_back();
    } else if (line[0] == '@') {  // FASTQ: one sequence line, '+', one quality line
      p.names.push_back(line.substr(1, line.find_first_of(" \t") - 1));
      std::string seq, plus, qual;
      std::getline(in, seq);
      std::getline(in, plus);
      std::getline(in, qual);
      p.seqs.push_back(seq);
    } else {
      if (p.seqs.empty()) die(path + ": sequence before the first header");
      p.seqs.back() += line;
    }
  }
  for (auto& s : p.seqs) {
    if (!s.empty() && s.back() == '\r') s.pop_back();
    for (char& c : s) {
      const char x = code_of(c);
      c = x ? x : 'N';
    }
  }
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  std::string ref, json_path;
  std::vector<std::string> pattern_files, checks;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--check" && i + 1 < argc) checks.push_back(argv[++i]);
    else if (a == "--json" && i + 1 < argc) json_path = argv[++i];
    else if (a == "-h" || a == "--help") {
      std::puts("usage: bench_fm_count REF.fa[.gz] PATTERNS... [--check WTMAP_COUNT.tsv ...] [--json OUT.json]");
      return 0;
    } else if (ref.empty()) ref = a;
    else pattern_files.push_back(a);
  }
  if (ref.empty() || pattern_files.empty()) die("usage: bench_fm_count REF.fa[.gz] PATTERNS... [--check TSV ...] [--json OUT]");
  if (!checks.empty() && checks.size() != pattern_files.size()) die("give one --check file per pattern file");
  const int threads = omp_get_max_threads();

  auto t0 = Clock::now();
  const std::string text = reference_text(read_all(ref));
  const double read_s = since(t0);
  t0 = Clock::now();
  sdsl::csa_wt<> csa;
  sdsl::construct_im(csa, text, 1);
  const double build_s = since(t0);
  const double size_mb = sdsl::size_in_mega_bytes(csa);
  std::printf("sdsl csa_wt<>: text %zu symbols (both strands), read %.2f s, construct_im %.2f s, %.1f MB, %d threads\n",
              text.size(), read_s, build_s, size_mb, threads);

  std::ostringstream json;
  json << "{\"tool\":\"sdsl_csa_wt\",\"threads\":" << threads << ",\"text_symbols\":" << text.size()
       << ",\"build_s\":" << build_s << ",\"index_mb\":" << size_mb << ",\"runs\":[";
  int status = 0;
  for (std::size_t f = 0; f < pattern_files.size(); ++f) {
    const Patterns p = read_patterns(pattern_files[f]);
    const std::size_t n = p.seqs.size();
    std::vector<std::uint64_t> counts(n, 0);
    // untimed warm-up on a prefix
    const std::size_t warm = std::min<std::size_t>(n, 1 << 16);
#pragma omp parallel for schedule(dynamic, 4096)
    for (std::size_t i = 0; i < warm; ++i) {
      const std::string& s = p.seqs[i];
      counts[i] = s.find('N') != std::string::npos ? 0 : sdsl::count(csa, s.begin(), s.end());
    }
    t0 = Clock::now();
#pragma omp parallel for schedule(dynamic, 4096)
    for (std::size_t i = 0; i < n; ++i) {
      const std::string& s = p.seqs[i];
      counts[i] = s.empty() || s.find('N') != std::string::npos ? 0 : sdsl::count(csa, s.begin(), s.end());
    }
    const double secs = since(t0);
    std::uint64_t total = 0, nonzero = 0;
    for (auto c : counts) { total += c; nonzero += c > 0; }
    std::printf("%s: %zu patterns, %llu with a match, %llu matches, count %.3f s, %.4g patterns/s\n",
                pattern_files[f].c_str(), n, (unsigned long long)nonzero, (unsigned long long)total, secs,
                secs > 0 ? n / secs : 0.0);
    long long mismatched = -1;
    if (!checks.empty()) {
      std::ifstream in(checks[f]);
      if (!in) die("cannot open " + checks[f]);
      std::string line;
      std::size_t i = 0;
      mismatched = 0;
      while (std::getline(in, line) && i < n) {
        const auto t1 = line.find('\t');
        const auto t2 = line.find('\t', t1 + 1);
        const std::string name = line.substr(0, t1);
        const std::uint64_t c = std::strtoull(line.substr(t1 + 1, t2 - t1 - 1).c_str(), nullptr, 10);
        if (name != p.names[i] || c != counts[i]) {
          if (mismatched < 5)
            std::printf("  check: pattern %zu (%s): sdsl %llu, wtmap %s -> %llu\n", i, p.names[i].c_str(),
                        (unsigned long long)counts[i], name.c_str(), (unsigned long long)c);
          ++mismatched;
        }
        ++i;
      }
      if (i != n) { std::printf("  check: %s has %zu lines, expected %zu\n", checks[f].c_str(), i, n); mismatched += n - i; }
      std::printf("  check against %s: %lld of %zu differ\n", checks[f].c_str(), mismatched, n);
      if (mismatched) status = 2;
    }
    json << (f ? "," : "") << "{\"patterns\":\"" << pattern_files[f] << "\",\"n\":" << n << ",\"count_s\":" << secs
         << ",\"patterns_per_s\":" << (secs > 0 ? n / secs : 0.0) << ",\"total_matches\":" << total
         << ",\"with_match\":" << nonzero << ",\"check_mismatches\":" << mismatched << "}";
  }
  json << "]}\n";
  if (!json_path.empty()) {
    std::ofstream out(json_path);
    out << json.str();
  }
  return status;
}
