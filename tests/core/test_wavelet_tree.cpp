// WaveletTree<Symbol> through its host batch API: the contract on the CPU backend and on the GPU
// backend (pageable and pinned queries) for 8-, 16- and 32-bit symbols, errors, save/load across
// backends, byte-identical construction on both backends, and construction from chunks.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "batch_drivers.hpp"
#include "wavelet_tree_contract.hpp"

namespace wtmap::test {
namespace {

template <class D>
using AllSymbols = ::testing::Types<WtCase<D, std::uint8_t>, WtCase<D, std::uint16_t>, WtCase<D, std::uint32_t>,
                                    WtCase<D, std::uint8_t, 4>, WtCase<D, std::uint16_t, 4>, WtCase<D, std::uint32_t, 4>>;

INSTANTIATE_TYPED_TEST_SUITE_P(Cpu, WaveletTreeContract, AllSymbols<CpuBatch>, DriverNames);
INSTANTIATE_TYPED_TEST_SUITE_P(GpuPageable, WaveletTreeContract, AllSymbols<GpuBatchPageable>, DriverNames);
INSTANTIATE_TYPED_TEST_SUITE_P(GpuPinned, WaveletTreeContract, AllSymbols<GpuBatchPinned>, DriverNames);

INSTANTIATE_TYPED_TEST_SUITE_P(Cpu, WaveletTreeBatchErrors, AllSymbols<CpuBatch>, DriverNames);
INSTANTIATE_TYPED_TEST_SUITE_P(Gpu, WaveletTreeBatchErrors, AllSymbols<GpuBatchPageable>, DriverNames);

// ---- Save/load and cross-backend construction, per symbol type -----------------------------

template <class S>
struct TextCase {
  std::vector<S> text;
  std::uint64_t sigma;  // options.sigma: 0 extracts the alphabet
  std::string describe() const {
    return "n = " + std::to_string(text.size()) + ", options.sigma = " + std::to_string(sigma);
  }
};

// Several alphabet sizes, powers of two and not, given and extracted.
template <class S>
std::vector<TextCase<S>> assorted_texts(std::mt19937_64& rng) {
  std::vector<TextCase<S>> all;
  for (std::uint64_t sigma : {1, 2, 3, 4, 5, 7, 16, 25, 243, 256, 1000, 65536}) {
    if (!fits<S>(sigma)) continue;
    for (std::uint64_t n : {1, 513, 65537}) {
      all.push_back({random_text<S>(n, sigma, true, [](std::uint64_t m) { return static_cast<S>(m); }, rng), sigma});
      all.push_back({random_text<S>(n, sigma, false, [&](std::uint64_t m) { return sparse_symbol<S>(m, sigma); }, rng), 0});
    }
  }
  return all;
}

template <class Tree>
Result<Tree> build(const TextCase<typename Tree::symbol_type>& c, Backend backend) {
  WaveletTreeOptions options;
  options.backend = backend;
  options.sigma = c.sigma;
  return Tree::build(c.text.data(), c.text.size(), options);
}

// Parameterised by the tree type: each symbol type, binary and quad-vector levels.
template <class Tree>
class WaveletTreeAcrossBackends : public ::testing::Test {
 protected:
  using S = typename Tree::symbol_type;
  // Build with From's backend, save, load with To's and query through To: the reference's
  // answers, and the reloaded tree saves to the same bytes.
  template <class From, class To>
  void check_round_trip() {
    if (skip_backend(From::kBackend) || skip_backend(To::kBackend)) GTEST_SKIP() << "no usable CUDA device";
    std::mt19937_64 rng(kSeed);
    for (const TextCase<S>& c : assorted_texts<S>(rng)) {
      SCOPED_TRACE(c.describe());
      auto built = build<Tree>(c, From::kBackend);
      ASSERT_TRUE(IsOk(built));
      const std::string bytes = saved_bytes(*built);
      auto loaded = load_bytes<Tree>(bytes, To::kBackend);
      ASSERT_TRUE(IsOk(loaded));
      EXPECT_EQ(loaded->backend(), To::kBackend);
      check_wavelet_tree<To>(*loaded, c.text, c.sigma, rng);
      EXPECT_EQ(saved_bytes(*loaded), bytes);
    }
  }
};
using TreeTypes = ::testing::Types<WaveletTree<std::uint8_t>, WaveletTree<std::uint16_t>, WaveletTree<std::uint32_t>,
                                   WaveletTree<std::uint8_t, 4>, WaveletTree<std::uint16_t, 4>, WaveletTree<std::uint32_t, 4>>;
TYPED_TEST_SUITE(WaveletTreeAcrossBackends, TreeTypes);

TYPED_TEST(WaveletTreeAcrossBackends, SaveLoadCpuToCpu) { this->template check_round_trip<CpuBatch, CpuBatch>(); }
TYPED_TEST(WaveletTreeAcrossBackends, SaveLoadCpuToGpu) { this->template check_round_trip<CpuBatch, GpuBatchPageable>(); }
TYPED_TEST(WaveletTreeAcrossBackends, SaveLoadGpuToCpu) { this->template check_round_trip<GpuBatchPageable, CpuBatch>(); }

// Both backends build the same structure, byte for byte.
TYPED_TEST(WaveletTreeAcrossBackends, SaveIsByteIdentical) {
  WTMAP_SKIP_WITHOUT(Backend::gpu);
  std::mt19937_64 rng(kSeed);
  using S = typename TypeParam::symbol_type;
  for (const TextCase<S>& c : assorted_texts<S>(rng)) {
    SCOPED_TRACE(c.describe());
    auto cpu = build<TypeParam>(c, Backend::cpu);
    auto gpu = build<TypeParam>(c, Backend::gpu);
    ASSERT_TRUE(IsOk(cpu));
    ASSERT_TRUE(IsOk(gpu));
    EXPECT_EQ(cpu->sigma(), gpu->sigma());
    EXPECT_EQ(cpu->alphabet(), gpu->alphabet());
    EXPECT_EQ(cpu->size_in_bytes(), gpu->size_in_bytes());
    EXPECT_TRUE(saved_bytes(*cpu) == saved_bytes(*gpu)) << "saved streams differ";
  }
}

TYPED_TEST(WaveletTreeAcrossBackends, GpuBuildWithoutDeviceIsUnavailable) {
  if (gpu_available()) GTEST_SKIP() << "a CUDA device is usable here";
  const TextCase<typename TypeParam::symbol_type> c{{1, 2, 3}, 4};
  EXPECT_TRUE(HasCode(build<TypeParam>(c, Backend::gpu), StatusCode::unavailable));
}

// ---- Construction from chunks (WaveletTreeOptions::chunk: a text larger than the device) ---

// Chunk sizes for a text of n symbols over sigma: single symbols, sizes around a level word (32
// symbols), a third and the whole text less one; small chunks only where the host's placement
// work (sigma a chunk) stays small, and on the GPU only where there are few (a chunk is a dozen
// device calls).
std::vector<std::uint64_t> chunk_sizes(std::uint64_t n, std::uint64_t sigma, Backend backend) {
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t c : {1, 7, 31, 32, 33, 1000}) {
    const std::uint64_t chunks = (n + c - 1) / c;
    if (c < n && chunks * sigma <= (std::uint64_t{1} << 22) && (backend == Backend::cpu || chunks <= 40)) sizes.push_back(c);
  }
  if (n > 2) sizes.push_back(n / 3 + 1);
  if (n > 1) sizes.push_back(n - 1);
  return sizes;
}

// A build from chunks answers as the naive reference does and saves the bytes of the build from
// the whole text, for every text of assorted_texts (alphabets given and extracted, powers of two
// and not, binary and 4-ary levels, 8- to 32-bit symbols).
template <class Tree>
class WaveletTreeInChunks : public ::testing::Test {
 protected:
  using S = typename Tree::symbol_type;
  template <class D>
  void check() {
    if (skip_backend(D::kBackend)) GTEST_SKIP() << "no usable CUDA device";
    std::mt19937_64 rng(kSeed);
    for (const TextCase<S>& c : assorted_texts<S>(rng)) {
      auto whole = build<Tree>(c, Backend::cpu);
      ASSERT_TRUE(IsOk(whole));
      const std::string expected = saved_bytes(*whole);
      bool queried = false;
      for (std::uint64_t chunk : chunk_sizes(c.text.size(), whole->sigma(), D::kBackend)) {
        SCOPED_TRACE(c.describe() + ", chunks of " + std::to_string(chunk));
        WaveletTreeOptions options;
        options.backend = D::kBackend;
        options.sigma = c.sigma;
        options.chunk = chunk;
        auto chunked = Tree::build(c.text.data(), c.text.size(), options);
        ASSERT_TRUE(IsOk(chunked));
        EXPECT_TRUE(saved_bytes(*chunked) == expected) << "saved streams differ";
        if (!queried) check_wavelet_tree<D>(*chunked, c.text, c.sigma, rng);
        queried = true;
      }
    }
  }
};
TYPED_TEST_SUITE(WaveletTreeInChunks, TreeTypes);

TYPED_TEST(WaveletTreeInChunks, CpuAnswersAsTheReferenceAndSavesTheWholeBuildsBytes) { this->template check<CpuBatch>(); }
TYPED_TEST(WaveletTreeInChunks, GpuAnswersAsTheReferenceAndSavesTheWholeBuildsBytes) {
  this->template check<GpuBatchPageable>();
}

// A symbol outside the given alphabet in a later chunk is named by its text position.
TYPED_TEST(WaveletTreeInChunks, ASymbolOutsideTheAlphabetIsNamedByItsTextPosition) {
  std::vector<typename TypeParam::symbol_type> text(1000, 1);
  text[700] = 9;
  WaveletTreeOptions options;
  options.backend = Backend::cpu;
  options.sigma = 4;
  options.chunk = 256;
  EXPECT_EQ(TypeParam::build(text.data(), text.size(), options).status().message(),
            "text position 700 holds symbol 9, not below sigma = 4");
}

// The chunk a GPU build takes: none while the text's four copies fit beside the tree, then the
// most symbols that do, and at least 2^20. The tree's share: 1.2 times n code bits (2 for sigma
// 4, 8 for an extracted alphabet of bytes, 32 of 32-bit symbols) and 64 MiB.
TEST(WaveletTreeGpuChunk, TheWholeTextWhileItFitsThenTheLargestChunkThatDoes) {
  const std::uint64_t n = 100'000'000, mib64 = std::uint64_t{64} << 20;
  const std::uint64_t tree4 = n / 8 * 2 / 5 * 6 + mib64;  // 3 * 10^7 bytes of levels
  EXPECT_EQ(wavelet_tree_gpu_chunk(n, 4, 1, tree4 + 4 * n), 0u);
  EXPECT_EQ(wavelet_tree_gpu_chunk(n, 4, 1, tree4 + 4 * n - 1), n - 1);
  EXPECT_EQ(wavelet_tree_gpu_chunk(n, 4, 1, tree4 + 4 * (n / 2) + 3), n / 2);
  EXPECT_EQ(wavelet_tree_gpu_chunk(n, 4, 1, 1000), std::uint64_t{1} << 20);
  const std::uint64_t tree_bytes = n / 8 * 8 / 5 * 6 + mib64;
  EXPECT_EQ(wavelet_tree_gpu_chunk(n, 0, 1, tree_bytes + 4 * n), 0u);
  EXPECT_EQ(wavelet_tree_gpu_chunk(n, 0, 1, tree_bytes + 4 * n - 1), n - 1);
  const std::uint64_t tree32 = n / 8 * 32 / 5 * 6 + mib64;
  EXPECT_EQ(wavelet_tree_gpu_chunk(n, 0, 4, tree32 + 16 * n), 0u);
  EXPECT_EQ(wavelet_tree_gpu_chunk(n, 0, 4, tree32 + 16 * 3'000'000 + 15), 3'000'000u);
}

}  // namespace
}  // namespace wtmap::test
