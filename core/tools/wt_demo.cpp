// wtmap-wt-demo: builds a wavelet tree over a generated text and answers a batch of access,
// rank and select queries on the GPU (or the CPU when no GPU is usable), checking every answer
// against a naive scan. A smoke test of the installed library and a usage example of its API.
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "wtmap/core/wavelet_tree.hpp"

int main(int argc, char** argv) {
  const std::uint64_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1'000'000;
  const std::uint64_t sigma = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 20;
  if (n == 0 || sigma == 0 || sigma > 256) {
    std::fprintf(stderr, "usage: wtmap-wt-demo [length >= 1] [sigma in 1..256]\n");
    return 2;
  }
  const wtmap::Backend backend = wtmap::gpu_available() ? wtmap::Backend::gpu : wtmap::Backend::cpu;
  if (backend == wtmap::Backend::cpu) std::fprintf(stderr, "note: no usable GPU, running on the CPU backend\n");

  std::mt19937_64 rng(42);
  std::vector<std::uint8_t> text(n);
  for (auto& c : text) c = static_cast<std::uint8_t>(rng() % sigma);

  auto tree = wtmap::WaveletTree<std::uint8_t>::build(text.data(), n, {backend, sigma});
  if (!tree.ok()) {
    std::fprintf(stderr, "error: %s\n", tree.status().message().c_str());
    return 1;
  }
  // Queries: the last position of the text for each symbol, and its rank and select.
  std::vector<std::uint64_t> positions;
  std::vector<wtmap::RankQuery<std::uint8_t>> ranks;
  std::vector<wtmap::SelectQuery<std::uint8_t>> selects;
  std::vector<std::uint64_t> occurrences(sigma, 0);
  for (std::uint64_t i = 0; i < n; ++i) ++occurrences[text[i]];
  for (std::uint64_t q = 0; q < 100'000; ++q) {
    const std::uint64_t i = rng() % n;
    positions.push_back(i);
    ranks.push_back({i, static_cast<std::uint8_t>(rng() % sigma)});
  }
  for (std::uint64_t c = 0; c < sigma; ++c) {
    if (occurrences[c] > 0) selects.push_back({occurrences[c], static_cast<std::uint8_t>(c)});
  }
  std::vector<std::uint8_t> symbols(positions.size());
  std::vector<std::uint64_t> rank_out(ranks.size()), select_out(selects.size());
  for (const wtmap::Status& s : {tree->access(positions.data(), symbols.data(), positions.size()),
                                 tree->rank(ranks.data(), rank_out.data(), ranks.size()),
                                 tree->select(selects.data(), select_out.data(), selects.size())}) {
    if (!s.ok()) {
      std::fprintf(stderr, "error: %s\n", s.message().c_str());
      return 1;
    }
  }
  // Naive check of a sample of the answers.
  std::uint64_t wrong = 0;
  for (std::size_t q = 0; q < 200; ++q) {
    std::uint64_t naive = 0;
    for (std::uint64_t i = 0; i < ranks[q].position; ++i) naive += text[i] == ranks[q].symbol;
    wrong += naive != rank_out[q];
    wrong += symbols[q] != text[positions[q]];
  }
  for (std::size_t q = 0; q < selects.size(); ++q) {
    wrong += select_out[q] >= n || text[select_out[q]] != selects[q].symbol ||
             [&] { for (std::uint64_t i = select_out[q] + 1; i < n; ++i) if (text[i] == selects[q].symbol) return true; return false; }();
  }
  std::printf("wavelet tree: n = %llu, sigma = %llu, %u levels, %.2f bits/symbol, backend %s\n",
              static_cast<unsigned long long>(n), static_cast<unsigned long long>(tree->sigma()), tree->num_levels(),
              8.0 * static_cast<double>(tree->size_in_bytes()) / static_cast<double>(n), wtmap::backend_name(backend));
  std::printf("answered %zu access, %zu rank and %zu select queries; %llu wrong in the checked sample\n",
              positions.size(), ranks.size(), selects.size(), static_cast<unsigned long long>(wrong));
  return wrong == 0 ? 0 : 1;
}
