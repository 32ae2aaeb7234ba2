// detail/batch.cuh: results of one batch copied back into several host arrays (OutputPieces),
// on the CPU alone and through a GPU launch, against the same values computed in a host loop.
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "support.hpp"
#include "wtmap/core/detail/batch.cuh"

namespace wtmap::test {
namespace {

// A query whose answer is a closed form of its input: 3x + 1.
struct TripleOp {
  using In = std::uint64_t;
  using Out = std::uint64_t;
  WTMAP_HD bool valid(const In&) const { return true; }
  WTMAP_HD Out operator()(const In& x) const { return 3 * x + 1; }
  std::string why_invalid(const In&) const { return {}; }
};

// Arrays of the given sizes, and the pieces that cover them in order.
struct Pieces {
  explicit Pieces(const std::vector<std::uint64_t>& sizes) : arrays(sizes.size()), first{0} {
    for (std::size_t p = 0; p < sizes.size(); ++p) {
      arrays[p].assign(sizes[p], ~std::uint64_t{0});
      first.push_back(first.back() + sizes[p]);
    }
    for (auto& a : arrays) pointers.push_back(a.data());
  }
  detail::OutputPieces<std::uint64_t> view() const { return {pointers.data(), first.data(), arrays.size()}; }
  // Result i of the whole sequence, found by walking the arrays.
  std::uint64_t at(std::uint64_t i) const {
    for (const auto& a : arrays) {
      if (i < a.size()) return a[i];
      i -= a.size();
    }
    ADD_FAILURE() << "index past the pieces";
    return 0;
  }
  std::vector<std::vector<std::uint64_t>> arrays;
  std::vector<std::uint64_t> first;
  std::vector<std::uint64_t*> pointers;
};

TEST(OutputPieces, CopyInSplitsEveryRangeAtPieceBoundaries) {
  const std::vector<std::uint64_t> sizes = {3, 0, 5, 1, 0, 4};
  const std::uint64_t total = 13;
  std::vector<std::uint64_t> source(total);
  std::iota(source.begin(), source.end(), 100);
  for (std::uint64_t step = 1; step <= total; ++step) {
    Pieces pieces(sizes);
    for (std::uint64_t begin = 0; begin < total; begin += step) {
      pieces.view().copy_in(begin, source.data() + begin, std::min(step, total - begin));
    }
    for (std::uint64_t i = 0; i < total; ++i) ASSERT_EQ(pieces.at(i), 100 + i) << "ranges of " << step << ", result " << i;
  }
}

// More queries than one chunk of the host-memory path (2^16), so chunks cross the pieces' ends.
TEST(RunBatchGpu, ResultsInPiecesEqualOneArray) {
  WTMAP_SKIP_WITHOUT(Backend::gpu);
  const std::vector<std::uint64_t> sizes = {100000, 0, 150001, 1, 49998};
  const std::uint64_t total = 300000;
  std::vector<std::uint64_t> queries(total);
  for (std::uint64_t i = 0; i < total; ++i) queries[i] = i * 2654435761u;
  detail::QueryWorkspace workspace;
  Pieces pieces(sizes);
  ASSERT_TRUE(IsOk(detail::run_batch_gpu(TripleOp{}, queries.data(), pieces.view(), workspace, "triple")));
  for (std::uint64_t i = 0; i < total; ++i) ASSERT_EQ(pieces.at(i), 3 * queries[i] + 1) << "result " << i;
}

}  // namespace
}  // namespace wtmap::test
