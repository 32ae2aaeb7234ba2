// wtmap-consumer: a program outside wtmap's build that uses the installed library, found by
// find_package(wtmap) (CMakeLists.txt beside it). On the CPU backend, and on the GPU where one is
// usable, it builds a binary and a quad-vector wavelet tree over a small text and answers every
// access, rank and select query the text allows (plus a symbol the text lacks), then builds an
// FM-index of two small DNA contigs and counts patterns on both strands; every answer is checked
// against a naive scan. Exit status 0 when all agree, 1 on a mismatch or an error (printed).
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "wtmap/core/wavelet_tree.hpp"
#include "wtmap/fmindex/fm_index.hpp"

namespace {

// Prints what went wrong, if anything, and says whether it did.
bool failed(const wtmap::Status& status, const char* what) {
  if (status.ok()) return false;
  std::fprintf(stderr, "error: %s: %s\n", what, status.message().c_str());
  return true;
}

// Counts the answers that differ from the naive ones and reports the first.
template <class T>
std::uint64_t count_wrong(const char* what, const std::vector<T>& naive, const std::vector<T>& answers) {
  std::uint64_t wrong = 0;
  for (std::size_t q = 0; q < naive.size(); ++q) {
    if (naive[q] == answers[q]) continue;
    if (wrong++ == 0) {
      std::fprintf(stderr, "mismatch: %s query %zu: naive %llu, library %llu\n", what, q,
                   static_cast<unsigned long long>(naive[q]), static_cast<unsigned long long>(answers[q]));
    }
  }
  return wrong;
}

// Every access position, the rank of every symbol (and one absent symbol) at every position 0..n,
// and the select of every occurrence of every symbol, against a scan of `text`.
template <unsigned Arity>
bool check_wavelet_tree(const std::vector<std::uint8_t>& text, wtmap::Backend backend) {
  const std::uint64_t n = text.size();
  // sigma 0: the tree maps the distinct symbols to 0..sigma-1 itself.
  auto tree = wtmap::WaveletTree<std::uint8_t, Arity>::build(text.data(), n, {backend, /*sigma=*/0});
  if (failed(tree.ok() ? wtmap::Status{} : tree.status(), "wavelet tree build")) return false;

  std::vector<std::uint64_t> positions(n);
  std::vector<std::uint8_t> naive_access(text), access(n);
  for (std::uint64_t i = 0; i < n; ++i) positions[i] = i;

  const std::vector<std::uint8_t> symbols = {'A', 'C', 'G', 'T', 'N', 'X'};  // 'X' never occurs
  std::vector<wtmap::RankQuery<std::uint8_t>> ranks;
  std::vector<std::uint64_t> naive_rank, rank;
  std::vector<wtmap::SelectQuery<std::uint8_t>> selects;
  std::vector<std::uint64_t> naive_select, select;
  for (const std::uint8_t c : symbols) {
    std::uint64_t seen = 0;
    for (std::uint64_t i = 0; i <= n; ++i) {
      ranks.push_back({i, c});
      naive_rank.push_back(seen);
      if (i < n && text[i] == c) {
        ++seen;
        selects.push_back({seen, c});
        naive_select.push_back(i);
      }
    }
  }
  rank.resize(ranks.size());
  select.resize(selects.size());
  if (failed(tree->access(positions.data(), access.data(), n), "access") ||
      failed(tree->rank(ranks.data(), rank.data(), ranks.size()), "rank") ||
      failed(tree->select(selects.data(), select.data(), selects.size()), "select")) {
    return false;
  }
  const std::uint64_t wrong = count_wrong("access", naive_access, access) + count_wrong("rank", naive_rank, rank) +
                              count_wrong("select", naive_select, select);
  std::printf("%s wavelet tree, %s backend: %llu access, %zu rank and %zu select answers, %llu wrong\n",
              Arity == 2 ? "binary" : "quad-vector", wtmap::backend_name(backend), static_cast<unsigned long long>(n),
              rank.size(), select.size(), static_cast<unsigned long long>(wrong));
  return wrong == 0;
}

std::string reverse_complement(const std::string& s) {
  std::string rc(s.rbegin(), s.rend());
  for (char& c : rc) c = c == 'A' ? 'T' : c == 'C' ? 'G' : c == 'G' ? 'C' : 'A';
  return rc;
}

// Occurrences of `pattern` in `text`, overlapping ones included.
std::uint64_t naive_count(const std::string& text, const std::string& pattern) {
  std::uint64_t count = 0;
  for (std::size_t at = text.find(pattern); at != std::string::npos; at = text.find(pattern, at + 1)) ++count;
  return count;
}

// An FM-index of both strands of two contigs (read_fasta(path) makes the same Reference from a
// FASTA file); each pattern's count must be its occurrences in either contig or its reverse
// complement, none spanning the two.
bool check_fm_index(const std::vector<std::string>& contigs, const std::vector<std::string>& patterns,
                    wtmap::Backend backend) {
  namespace fm = wtmap::fmindex;
  fm::Reference reference;
  for (const std::string& contig : contigs) {
    if (!reference.fragments.empty()) reference.forward.push_back(fm::kSeparator);
    reference.fragments.push_back({reference.forward.size(), contig.size(), 0,
                                   static_cast<std::uint32_t>(reference.contigs.size())});
    reference.contigs.push_back({"chr" + std::to_string(reference.contigs.size() + 1), contig.size()});
    for (const char base : contig) reference.forward.push_back(fm::search_code(base));
  }
  fm::FmIndexOptions options;
  options.backend = backend;
  auto index = fm::FmIndex::build(reference, options);
  if (failed(index.ok() ? wtmap::Status{} : index.status(), "FM-index build")) return false;

  std::vector<std::uint8_t> codes;
  std::vector<fm::PatternRef> refs;
  std::vector<std::uint64_t> naive(patterns.size(), 0), counts(patterns.size());
  for (std::size_t p = 0; p < patterns.size(); ++p) {
    refs.push_back({codes.size(), static_cast<std::uint32_t>(patterns[p].size())});
    for (const char base : patterns[p]) codes.push_back(fm::search_code(base));
    for (const std::string& contig : contigs) {
      naive[p] += naive_count(contig, patterns[p]) + naive_count(reverse_complement(contig), patterns[p]);
    }
  }
  std::vector<fm::SaInterval> intervals(patterns.size());
  if (failed(index->search(codes.data(), codes.size(), refs.data(), refs.size(), intervals.data()), "search")) {
    return false;
  }
  for (std::size_t p = 0; p < patterns.size(); ++p) counts[p] = intervals[p].size();
  const std::uint64_t wrong = count_wrong("FM-index count", naive, counts);
  std::printf("FM-index, %s backend: %zu pattern counts on both strands, %llu wrong\n", wtmap::backend_name(backend),
              counts.size(), static_cast<unsigned long long>(wrong));
  return wrong == 0;
}

}  // namespace

int main() {
  std::mt19937_64 rng(29);
  const char bases[] = "ACGT";
  // A text over five letters, skewed so that the symbols' counts differ.
  std::vector<std::uint8_t> text(3000);
  for (auto& c : text) c = rng() % 8 == 0 ? 'N' : bases[rng() % 4];
  std::vector<std::string> contigs = {std::string(1500, 'A'), std::string(700, 'A')};
  for (auto& contig : contigs) {
    for (char& base : contig) base = bases[rng() % 4];
  }
  // Substrings of every length 1..20 (some occur several times), ones that span the contig
  // boundary (where the separator must stop them) and random 24-mers (almost surely absent).
  std::vector<std::string> patterns;
  for (std::size_t length = 1; length <= 20; ++length) {
    for (int k = 0; k < 10; ++k) patterns.push_back(contigs[k % 2].substr(rng() % (700 - length), length));
  }
  for (std::size_t length = 2; length <= 12; ++length) {
    patterns.push_back(contigs[0].substr(1500 - length / 2) + contigs[1].substr(0, length - length / 2));
  }
  for (int k = 0; k < 20; ++k) {
    std::string random(24, 'A');
    for (char& base : random) base = bases[rng() % 4];
    patterns.push_back(random);
  }

  std::vector<wtmap::Backend> backends = {wtmap::Backend::cpu};
  if (wtmap::gpu_available()) {
    backends.push_back(wtmap::Backend::gpu);
  } else {
    std::printf("no usable GPU: the CPU backend only\n");
  }
  bool ok = true;
  for (const wtmap::Backend backend : backends) {
    ok = check_wavelet_tree<2>(text, backend) && ok;
    ok = check_wavelet_tree<4>(text, backend) && ok;
    ok = check_fm_index(contigs, patterns, backend) && ok;
  }
  return ok ? 0 : 1;
}
