// pinned_allocator.hpp: a PinnedVector behaves as a std::vector on any machine (values kept as it
// grows, CPU-only runs included); with a GPU its memory is page-locked, and an asynchronous copy
// from the device into it has landed once its stream is synchronised.
// pinned_buffer.hpp: a PinnedBuffer is page-locked, hands its memory over on a move and frees it
// when destroyed or assigned over; without a device it is an error, never ordinary memory in
// disguise.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "support.hpp"
#include "wtmap/core/pinned_allocator.hpp"
#include "wtmap/core/pinned_buffer.hpp"

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

TEST(PinnedBuffer, ZeroBytesHoldNothing) {
  Result<PinnedBuffer> empty = PinnedBuffer::allocate(0, "test");
  ASSERT_TRUE(empty.ok()) << empty.status().message();
  EXPECT_EQ(empty->data(), nullptr);
  EXPECT_EQ(empty->size(), 0u);
}

TEST(PinnedBuffer, WithoutADeviceIsAnError) {
  if (gpu_available()) GTEST_SKIP() << "a CUDA device is usable here";
  Result<PinnedBuffer> b = PinnedBuffer::allocate(4096, "test staging");
  ASSERT_FALSE(b.ok()) << "ordinary memory handed out as page-locked";
  EXPECT_NE(b.status().message().find("test staging"), std::string::npos) << b.status().message();
}

TEST(PinnedBufferGpu, IsPageLockedMovesAndIsFreed) {
  WTMAP_SKIP_WITHOUT(Backend::gpu);
  constexpr std::size_t kBytes = std::size_t{1} << 20;
  Result<PinnedBuffer> made = PinnedBuffer::allocate(kBytes, "test");
  ASSERT_TRUE(made.ok()) << made.status().message();
  PinnedBuffer first = std::move(made.value());
  ASSERT_NE(first.data(), nullptr);
  EXPECT_EQ(first.size(), kBytes);
  EXPECT_TRUE(page_locked(first.data()));
  EXPECT_TRUE(page_locked(first.data() + kBytes - 1));
  std::byte* const memory = first.data();
  PinnedBuffer second = std::move(first);
  EXPECT_EQ(first.data(), nullptr);
  EXPECT_EQ(first.size(), 0u);
  EXPECT_EQ(second.data(), memory);
  // Assigning over an owner frees what it held.
  Result<PinnedBuffer> other = PinnedBuffer::allocate(4096, "test");
  ASSERT_TRUE(other.ok());
  second = std::move(other.value());
  EXPECT_FALSE(page_locked(memory)) << "the old memory is still page-locked after the assignment";
  std::byte* const last = second.data();
  EXPECT_TRUE(page_locked(last));
  { PinnedBuffer dying = std::move(second); }
  EXPECT_FALSE(page_locked(last)) << "destruction left the memory page-locked";
}

}  // namespace
}  // namespace wtmap::test
