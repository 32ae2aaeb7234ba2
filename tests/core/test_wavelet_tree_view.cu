// WaveletTreeView<Symbol>: the wavelet-tree contract queried through the view itself, in a host
// loop over a CPU-backed tree and in a test kernel over a GPU-backed one; and the device-memory
// batch methods access_device / rank_device / select_device.
#include <gtest/gtest.h>

#include <random>
#include <type_traits>
#include <vector>

#include "view_drivers.cuh"
#include "wavelet_tree_contract.hpp"

namespace wtmap::test {
namespace {

template <class D>
using AllSymbols = ::testing::Types<WtCase<D, std::uint8_t>, WtCase<D, std::uint16_t>, WtCase<D, std::uint32_t>,
                                    WtCase<D, std::uint8_t, 4>, WtCase<D, std::uint16_t, 4>, WtCase<D, std::uint32_t, 4>>;

// The views leave range checks to their callers: the batch-error suite does not apply.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(WaveletTreeBatchErrors);
INSTANTIATE_TYPED_TEST_SUITE_P(CpuView, WaveletTreeContract, AllSymbols<CpuViewLoop>, DriverNames);
INSTANTIATE_TYPED_TEST_SUITE_P(GpuKernel, WaveletTreeContract, AllSymbols<GpuViewKernel>, DriverNames);

// count(c) of the view is the number of occurrences, 0 outside the alphabet.
template <class View, class S>
struct WtCount {
  View v;
  __host__ __device__ std::uint64_t operator()(S c) const { return v.count(c); }
};

template <class Case>
class WaveletTreeViewTest : public ::testing::Test {
 protected:
  void SetUp() override { WTMAP_SKIP_WITHOUT(Case::D::kBackend); }
  std::mt19937_64 rng{kSeed};
};
using ViewCases = ::testing::Types<WtCase<CpuViewLoop, std::uint8_t>, WtCase<CpuViewLoop, std::uint16_t>,
                                   WtCase<GpuViewKernel, std::uint8_t>, WtCase<GpuViewKernel, std::uint16_t>,
                                   WtCase<CpuViewLoop, std::uint8_t, 4>, WtCase<GpuViewKernel, std::uint8_t, 4>,
                                   WtCase<GpuViewKernel, std::uint16_t, 4>>;
TYPED_TEST_SUITE(WaveletTreeViewTest, ViewCases, DriverNames);

TYPED_TEST(WaveletTreeViewTest, CountIsTheNumberOfOccurrences) {
  using S = typename TypeParam::S;
  for (std::uint64_t given : {std::uint64_t{25}, std::uint64_t{0}}) {
    const auto text = random_text<S>(5000, 25, true, [](std::uint64_t m) { return static_cast<S>(3 * m); }, this->rng);
    const TextReference<S> ref(text);
    WaveletTreeOptions options;
    options.backend = TypeParam::D::kBackend;
    options.sigma = given == 0 ? 0 : 3 * 24 + 1;
    auto tree = TypeParam::Tree::build(text.data(), text.size(), options);
    ASSERT_TRUE(IsOk(tree));
    std::vector<S> symbols;
    std::vector<std::uint64_t> expected;
    for (std::uint64_t c = 0; c <= std::numeric_limits<S>::max() && c < 1000; ++c) {
      symbols.push_back(static_cast<S>(c));
      expected.push_back(ref.count(static_cast<S>(c)));
    }
    auto got = TypeParam::D::template run<std::uint64_t>(WtCount<typename TypeParam::Tree::View, S>{tree->view()}, symbols);
    ASSERT_TRUE(IsOk(got));
    EXPECT_TRUE(SameAnswers(expected, *got, [&](std::size_t j) { return "count(" + std::to_string(+symbols[j]) + ")"; }));
  }
}

// access_rank(i) of the view is (T[i], rank(T[i], i)), the LF step of the FM-indexes (the
// general one's binary tree, the DNA one's quad tree): every alphabet size of the contract (sigma
// 1 included: no levels) and lengths around blocks; on the GPU the quad levels' loads take one
// or both sectors of a block depending on the position.
template <class View>
struct WtAccessRank {
  static_assert(std::is_trivially_copyable_v<View>, "a view goes to the kernel by value");
  View v;
  __host__ __device__ std::uint64_t operator()(std::uint64_t i) const {
    const auto r = v.access_rank(i);
    return (r.rank << 32) | static_cast<std::uint64_t>(r.symbol);  // both halves, one answer
  }
};

TYPED_TEST(WaveletTreeViewTest, AccessRankIsTheSymbolAndItsRank) {
  using S = typename TypeParam::S;
  for (const std::uint64_t sigma : alphabet_sizes()) {
    if (!fits<S>(sigma) || sigma > 4096) continue;
    for (const std::uint64_t n : {std::uint64_t{1}, std::uint64_t{513}, std::uint64_t{65537}}) {
      SCOPED_TRACE("sigma " + std::to_string(sigma) + ", n " + std::to_string(n));
      for (const bool extracted : {false, true}) {
        const auto text = random_text<S>(n, sigma, false, [&](std::uint64_t m) {
          return extracted ? sparse_symbol<S>(m, sigma) : static_cast<S>(m);
        }, this->rng);
        const TextReference<S> ref(text);
        WaveletTreeOptions options;
        options.backend = TypeParam::D::kBackend;
        options.sigma = extracted ? 0 : sigma;
        auto tree = TypeParam::Tree::build(text.data(), n, options);
        ASSERT_TRUE(IsOk(tree));
        const auto positions = query_positions(n, 512, 2000, this->rng);
        std::vector<std::uint64_t> expected;
        for (std::uint64_t i : positions) expected.push_back((ref.rank(text[i], i) << 32) | text[i]);
        auto got = TypeParam::D::template run<std::uint64_t>(WtAccessRank<typename TypeParam::Tree::View>{tree->view()}, positions);
        ASSERT_TRUE(IsOk(got));
        EXPECT_TRUE(SameAnswers(expected, *got, [&](std::size_t j) {
          return "access_rank(" + std::to_string(positions[j]) + ") as rank << 32 | symbol";
        }));
      }
    }
  }
}

// ---- rank_all and the interval-end pairs of the 4-ary view (DNA) ---------------------------------

// Query `slot` of a pair (i, j): slots 0..3 ask for the count of symbol `slot` before i, slots
// 4..7 for the count of symbol `slot - 4` before j. One answer per query keeps the drivers' shape.
struct PairQuery {
  std::uint64_t i, j;
  unsigned slot;
};
using QuadView = WaveletTreeView<std::uint8_t, 4>;
struct QuadRankAll {  // rank_all at each end on its own
  QuadView v;
  __host__ __device__ std::uint64_t operator()(const PairQuery& q) const {
    std::uint64_t counts[4];
    v.rank_all(q.slot < 4 ? q.i : q.j, counts);
    return counts[q.slot % 4];
  }
};
struct QuadRankAllPair {
  QuadView v;
  __host__ __device__ std::uint64_t operator()(const PairQuery& q) const {
    std::uint64_t at_i[4], at_j[4];
    v.rank_all_pair(q.i, q.j, at_i, at_j);
    return q.slot < 4 ? at_i[q.slot] : at_j[q.slot - 4];
  }
};
struct QuadLevelRankPair {  // one symbol at both ends, on the quad vector itself
  QuadView v;
  __host__ __device__ std::uint64_t operator()(const PairQuery& q) const {
    std::uint64_t rank_i = 0, rank_j = 0;
    v.levels[0].rank_pair(q.slot % 4, q.i, q.j, rank_i, rank_j);
    return q.slot < 4 ? rank_i : rank_j;
  }
};

template <class D>
class QuadViewPairs : public ::testing::Test {
 protected:
  void SetUp() override { WTMAP_SKIP_WITHOUT(D::kBackend); }
  std::mt19937_64 rng{kSeed};
};
using PairDrivers = ::testing::Types<CpuViewLoop, GpuViewKernel>;
TYPED_TEST_SUITE(QuadViewPairs, PairDrivers, DriverNames);

// Against prefix counts of the text, for texts over 4 and 3 symbols (and 1: no levels) of lengths
// around the 224-symbol blocks and the 65,408-symbol superblocks. Pairs with both ends in one
// block (the one-read path) in either order, equal ends, block edges, neighbouring blocks, far apart.
TYPED_TEST(QuadViewPairs, RankAllAndPairsAreThePrefixCounts) {
  constexpr std::uint64_t kBlock = QuadVectorLayout::kSymbolsPerBlock;
  for (const std::uint64_t sigma : {std::uint64_t{4}, std::uint64_t{3}, std::uint64_t{1}}) {
    for (const std::uint64_t n : {std::uint64_t{1}, kBlock - 1, 3 * kBlock + 5, std::uint64_t{2} * QuadVectorLayout::kSymbolsPerSuper + 300}) {
      SCOPED_TRACE("sigma " + std::to_string(sigma) + ", n " + std::to_string(n));
      const auto text = random_text<std::uint8_t>(n, sigma, false, [](std::uint64_t m) { return static_cast<std::uint8_t>(m); },
                                                  this->rng);
      const TextReference<std::uint8_t> ref(text);
      WaveletTreeOptions options;
      options.backend = TypeParam::kBackend;
      options.sigma = sigma;
      auto tree = WaveletTree<std::uint8_t, 4>::build(text.data(), n, options);
      ASSERT_TRUE(IsOk(tree));
      std::vector<std::pair<std::uint64_t, std::uint64_t>> pairs = {{0, 0}, {0, n}, {n, n}, {n, 0}};
      std::uniform_int_distribution<std::uint64_t> position(0, n);
      for (int k = 0; k < 300; ++k) {
        const std::uint64_t i = position(this->rng), start = i / kBlock * kBlock;
        const std::uint64_t in_block = std::min(n, start + this->rng() % kBlock);
        pairs.push_back({i, in_block});
        pairs.push_back({in_block, i});
        pairs.push_back({start, std::min(n, start + kBlock - 1)});
        pairs.push_back({i, std::min(n, i + kBlock)});
        pairs.push_back({i, position(this->rng)});
      }
      std::vector<PairQuery> queries;
      std::vector<std::uint64_t> expected;
      for (const auto& [i, j] : pairs) {
        for (unsigned slot = 0; slot < 8; ++slot) {
          queries.push_back({i, j, slot});
          expected.push_back(ref.rank(static_cast<std::uint8_t>(slot % 4), slot < 4 ? i : j));
        }
      }
      auto describe = [&](const char* op) {
        return [&, op](std::size_t q) {
          return std::string(op) + "(" + std::to_string(queries[q].i) + ", " + std::to_string(queries[q].j) + ") slot " +
                 std::to_string(queries[q].slot);
        };
      };
      auto all = TypeParam::template run<std::uint64_t>(QuadRankAll{tree->view()}, queries);
      ASSERT_TRUE(IsOk(all));
      EXPECT_TRUE(SameAnswers(expected, *all, describe("rank_all")));
      auto all_pair = TypeParam::template run<std::uint64_t>(QuadRankAllPair{tree->view()}, queries);
      ASSERT_TRUE(IsOk(all_pair));
      EXPECT_TRUE(SameAnswers(expected, *all_pair, describe("rank_all_pair")));
      if (tree->view().num_levels == 1) {
        auto level_pair = TypeParam::template run<std::uint64_t>(QuadLevelRankPair{tree->view()}, queries);
        ASSERT_TRUE(IsOk(level_pair));
        EXPECT_TRUE(SameAnswers(expected, *level_pair, describe("levels[0].rank_pair")));
      }
    }
  }
}

// ---- access_device / rank_device / select_device -------------------------------------------

// Runs a *_device batch method on `queries` copied to device memory.
template <class Out, class In, class Call>
Result<std::vector<Out>> device_batch(const std::vector<In>& queries, Call call) {
  DeviceArray<In> in(queries.size());
  DeviceArray<Out> out(queries.size());
  WTMAP_TRY(in.status());
  WTMAP_TRY(out.status());
  WTMAP_TRY(cuda_status(cudaMemcpy(in.data(), queries.data(), queries.size() * sizeof(In), cudaMemcpyHostToDevice),
                        "copy in"));
  cudaStream_t stream = nullptr;
  WTMAP_TRY(cuda_status(cudaStreamCreate(&stream), "cudaStreamCreate"));
  const Status s = call(in.data(), out.data(), queries.size(), stream);
  cudaStreamDestroy(stream);
  WTMAP_TRY(s);
  std::vector<Out> h(queries.size());
  WTMAP_TRY(cuda_status(cudaMemcpy(h.data(), out.data(), h.size() * sizeof(Out), cudaMemcpyDeviceToHost), "copy back"));
  return h;
}

template <class S>
class WaveletTreeDeviceBatch : public ::testing::Test {};
using SymbolTypes = ::testing::Types<std::uint8_t, std::uint16_t, std::uint32_t>;
TYPED_TEST_SUITE(WaveletTreeDeviceBatch, SymbolTypes);

TYPED_TEST(WaveletTreeDeviceBatch, QueriesOnDeviceMemory) {
  using S = TypeParam;
  WTMAP_SKIP_WITHOUT(Backend::gpu);
  std::mt19937_64 rng(kSeed);
  const std::uint64_t sigma = 243, n = 65537;
  const auto text = random_text<S>(n, sigma, false, [&](std::uint64_t m) { return sparse_symbol<S>(m, sigma); }, rng);
  const TextReference<S> ref(text);
  WaveletTreeOptions options;  // GPU, alphabet extracted
  auto tree = WaveletTree<S>::build(text.data(), n, options);
  ASSERT_TRUE(IsOk(tree));
  auto access = [&](auto... a) { return tree->access_device(a...); };
  auto rank = [&](auto... a) { return tree->rank_device(a...); };
  auto select = [&](auto... a) { return tree->select_device(a...); };

  const auto positions = query_positions(n, 512, 2000, rng);
  std::vector<RankQuery<S>> rq;
  std::vector<SelectQuery<S>> sq;
  for (std::uint64_t i : positions) {
    rq.push_back({i + 1, text[i]});
    sq.push_back({ref.rank(text[i], i) + 1, text[i]});  // the occurrence at i
  }
  auto a = device_batch<S>(positions, access);
  ASSERT_TRUE(IsOk(a));
  auto r = device_batch<std::uint64_t>(rq, rank);
  ASSERT_TRUE(IsOk(r));
  auto s = device_batch<std::uint64_t>(sq, select);
  ASSERT_TRUE(IsOk(s));
  std::vector<S> expected_access;
  std::vector<std::uint64_t> expected_rank;
  for (std::uint64_t i : positions) {
    expected_access.push_back(text[i]);
    expected_rank.push_back(ref.rank(text[i], i + 1));
  }
  auto at = [&](std::size_t j) { return "position " + std::to_string(positions[j]); };
  EXPECT_TRUE(SameAnswers(expected_access, *a, at));
  EXPECT_TRUE(SameAnswers(expected_rank, *r, at));
  EXPECT_TRUE(SameAnswers(positions, *s, at));
}

TYPED_TEST(WaveletTreeDeviceBatch, OutOfRangeQueriesOnDeviceMemory) {
  using S = TypeParam;
  WTMAP_SKIP_WITHOUT(Backend::gpu);
  const std::vector<S> text = {7, 3, 7, 9, 3};
  const std::uint64_t n = text.size();
  WaveletTreeOptions options;  // GPU, alphabet extracted
  auto tree = WaveletTree<S>::build(text.data(), n, options);
  ASSERT_TRUE(IsOk(tree));
  auto access = [&](auto... a) { return tree->access_device(a...); };
  auto rank = [&](auto... a) { return tree->rank_device(a...); };
  auto select = [&](auto... a) { return tree->select_device(a...); };
  EXPECT_TRUE(RejectsQuery(device_batch<S>(std::vector<std::uint64_t>{0, n, n}, access), 1));
  EXPECT_TRUE(RejectsQuery(device_batch<std::uint64_t>(std::vector<RankQuery<S>>{{n, 7}, {n + 1, 7}}, rank), 1));
  EXPECT_TRUE(RejectsQuery(device_batch<std::uint64_t>(std::vector<SelectQuery<S>>{{1, 7}, {0, 7}, {1, 8}}, select), 1));
  EXPECT_TRUE(RejectsQuery(device_batch<std::uint64_t>(std::vector<SelectQuery<S>>{{1, 9}, {2, 9}}, select), 1));
  EXPECT_TRUE(RejectsQuery(device_batch<std::uint64_t>(std::vector<SelectQuery<S>>{{1, 8}}, select), 0));
}

TYPED_TEST(WaveletTreeDeviceBatch, CpuBackendRefusesDeviceBatches) {
  using S = TypeParam;
  const std::vector<S> text = {1, 0, 1};
  WaveletTreeOptions options;
  options.backend = Backend::cpu;
  auto tree = WaveletTree<S>::build(text.data(), text.size(), options);
  ASSERT_TRUE(IsOk(tree));
  std::uint64_t position = 0, out = 0;
  S symbol{};
  RankQuery<S> rq{0, 1};
  SelectQuery<S> sq{1, 1};
  EXPECT_TRUE(HasCode(tree->access_device(&position, &symbol, 1, nullptr), StatusCode::invalid_argument));
  EXPECT_TRUE(HasCode(tree->rank_device(&rq, &out, 1, nullptr), StatusCode::invalid_argument));
  EXPECT_TRUE(HasCode(tree->select_device(&sq, &out, 1, nullptr), StatusCode::invalid_argument));
}

}  // namespace
}  // namespace wtmap::test
