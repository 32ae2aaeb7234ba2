// WaveletTree<Symbol> through its host batch API: the contract on the CPU backend and on the GPU
// backend (pageable and pinned queries) for 8-, 16- and 32-bit symbols, errors, save/load across
// backends, and byte-identical construction on both backends.
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

}  // namespace
}  // namespace wtmap::test
