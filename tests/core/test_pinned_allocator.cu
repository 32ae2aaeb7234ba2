// pinned_allocator.hpp: a PinnedVector behaves as a std::vector on any machine (values kept as it
// grows, CPU-only runs included); with a GPU its memory is page-locked, and an asynchronous copy
// from the device into it has landed once its stream is synchronised.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "support.hpp"
#include "wtmap/core/pinned_allocator.hpp"

namespace wtmap::test {
namespace {

bool page_locked(const void* p) {
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return attr.type == cudaMemoryTypeHost;
}

// Grown element by element through several reallocations, then resized: every value is the
// one written, as in a std::vector.
TEST(PinnedVector, KeepsItsValuesAsItGrows) {
  PinnedVector<std::uint64_t> v;
  std::vector<std::uint64_t> expected;
  for (std::uint64_t i = 0; i < 100000; ++i) {
    v.push_back(i * i + 7);
    expected.push_back(i * i + 7);
  }
  ASSERT_EQ(v.size(), expected.size());
  EXPECT_TRUE(std::equal(v.begin(), v.end(), expected.begin()));
  v.resize(200000);
  for (std::size_t i = 100000; i < v.size(); ++i) ASSERT_EQ(v[i], 0u) << "element " << i << " of the resize";
  PinnedVector<std::uint64_t> moved = std::move(v);
  EXPECT_EQ(moved[99999], 99999ull * 99999ull + 7);
  PinnedVector<std::uint64_t> copied = moved;
  EXPECT_TRUE(std::equal(copied.begin(), copied.end(), moved.begin(), moved.end()));
}

TEST(PinnedVectorGpu, MemoryIsPageLocked) {
  WTMAP_SKIP_WITHOUT(Backend::gpu);
  PinnedVector<std::uint32_t> v(1000);
  EXPECT_TRUE(page_locked(v.data()));
  std::vector<std::uint32_t> plain(1000);
  EXPECT_FALSE(page_locked(plain.data())) << "the test's own check tells the two kinds apart";
}

// A device-to-host copy on a non-blocking stream returns before its bytes land; after the
// stream's synchronisation they are all there.
TEST(PinnedVectorGpu, AsyncCopyFromTheDeviceLands) {
  WTMAP_SKIP_WITHOUT(Backend::gpu);
  constexpr std::size_t kCount = std::size_t{16} << 20;
  std::vector<std::uint32_t> source(kCount);
  for (std::size_t i = 0; i < kCount; ++i) source[i] = static_cast<std::uint32_t>(i * 2654435761u);
  std::uint32_t* device = nullptr;
  ASSERT_EQ(cudaMalloc(&device, kCount * sizeof(std::uint32_t)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(device, source.data(), kCount * sizeof(std::uint32_t), cudaMemcpyHostToDevice), cudaSuccess);
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  PinnedVector<std::uint32_t> v(kCount);
  ASSERT_EQ(cudaMemcpyAsync(v.data(), device, kCount * sizeof(std::uint32_t), cudaMemcpyDeviceToHost, stream), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  for (std::size_t i = 0; i < kCount; ++i) ASSERT_EQ(v[i], source[i]) << "element " << i;
  cudaStreamDestroy(stream);
  cudaFree(device);
}

}  // namespace
}  // namespace wtmap::test
