// pinnable_allocator.hpp: vectors on either kind of host memory hold what was put in them, pinned
// ones are page-locked in the CUDA runtime's eyes (what the batch API checks before copying) and
// stay so through growth, moves and swaps; unpinned ones never are.
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "wtmap/core/config.hpp"
#include "wtmap/core/detail/batch.cuh"
#include "wtmap/core/pinnable_allocator.hpp"

namespace wtmap::test {
namespace {

using Vector = std::vector<std::uint64_t, PinnableAllocator<std::uint64_t>>;

// Fills 0, 1, ..., n - 1 by push_back (several reallocations) and checks it in closed form.
void fill_and_check(Vector& v, std::uint64_t n) {
  for (std::uint64_t i = 0; i < n; ++i) v.push_back(i);
  ASSERT_EQ(v.size(), n);
  EXPECT_EQ(std::accumulate(v.begin(), v.end(), std::uint64_t{0}), n * (n - 1) / 2);
  EXPECT_EQ(v.back(), n - 1);
}

TEST(PinnableAllocator, UnpinnedVectorHoldsItsElements) {
  Vector v;
  EXPECT_FALSE(v.get_allocator().pinned());
  fill_and_check(v, 100000);
  v.resize(10);
  v.shrink_to_fit();
  EXPECT_EQ(v, Vector({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
}

TEST(PinnableAllocator, PinnedVectorIsPageLockedThroughGrowthMovesAndSwaps) {
  if (!gpu_available()) GTEST_SKIP() << "no usable CUDA device";
  Vector pinned{PinnableAllocator<std::uint64_t>(true)};
  fill_and_check(pinned, 100000);  // grown through some 17 reallocations, each pinned anew
  EXPECT_TRUE(detail::is_pinned(pinned.data()));

  Vector plain;
  fill_and_check(plain, 1000);
  EXPECT_FALSE(detail::is_pinned(plain.data()));

  plain.swap(pinned);  // the allocators travel with the storage
  EXPECT_TRUE(plain.get_allocator().pinned());
  EXPECT_TRUE(detail::is_pinned(plain.data()));
  EXPECT_FALSE(pinned.get_allocator().pinned());
  EXPECT_FALSE(detail::is_pinned(pinned.data()));
  EXPECT_EQ(plain.size(), 100000u);
  EXPECT_EQ(pinned.size(), 1000u);

  Vector moved_into;
  moved_into = std::move(plain);
  EXPECT_TRUE(moved_into.get_allocator().pinned());
  EXPECT_TRUE(detail::is_pinned(moved_into.data()));
  EXPECT_EQ(moved_into.back(), 99999u);
}

}  // namespace
}  // namespace wtmap::test
