// buffer.hpp: an allocation is zero-filled, sized and copied to and from the host on either
// backend; on the GPU the zero fill is complete when allocate() returns, so data written into
// the buffer at once on a non-blocking stream (as the batch API's streams are) is not zeroed later.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "support.hpp"
#include "wtmap/core/buffer.hpp"

namespace wtmap::test {
namespace {

class BufferOn : public ::testing::TestWithParam<Backend> {};

INSTANTIATE_TEST_SUITE_P(Core, BufferOn, ::testing::Values(Backend::cpu, Backend::gpu),
                         [](const auto& info) { return std::string(backend_name(info.param)); });

TEST_P(BufferOn, FreshBufferIsZeroAndCopiesRoundTrip) {
  WTMAP_SKIP_WITHOUT(GetParam());
  constexpr std::size_t kBytes = 1000003;  // not a multiple of the alignment
  auto buffer = Buffer::allocate(GetParam(), kBytes, "test buffer");
  ASSERT_TRUE(buffer.ok()) << buffer.status().message();
  EXPECT_EQ(buffer->size(), kBytes);
  EXPECT_EQ(buffer->backend(), GetParam());
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(buffer->data()) % 128, 0u);
  std::vector<std::uint8_t> bytes(kBytes, 0xAB);
  ASSERT_TRUE(buffer->copy_to_host(0, bytes.data(), kBytes).ok());
  for (std::size_t i = 0; i < kBytes; ++i) ASSERT_EQ(bytes[i], 0) << "byte " << i;
  for (std::size_t i = 0; i < kBytes; ++i) bytes[i] = static_cast<std::uint8_t>(i * 7 + 3);
  ASSERT_TRUE(buffer->copy_from_host(100, bytes.data(), kBytes - 100).ok());
  std::vector<std::uint8_t> back(kBytes);
  ASSERT_TRUE(buffer->copy_to_host(0, back.data(), kBytes).ok());
  for (std::size_t i = 0; i < 100; ++i) ASSERT_EQ(back[i], 0) << "byte " << i;
  for (std::size_t i = 100; i < kBytes; ++i) ASSERT_EQ(back[i], bytes[i - 100]) << "byte " << i;
}

TEST_P(BufferOn, EmptyBufferHasNoData) {
  WTMAP_SKIP_WITHOUT(GetParam());
  auto buffer = Buffer::allocate(GetParam(), 0, "test buffer");
  ASSERT_TRUE(buffer.ok());
  EXPECT_EQ(buffer->size(), 0u);
  EXPECT_EQ(buffer->data(), nullptr);
}

// Keeps the legacy default stream busy for about `cycles` clock cycles.
__global__ void __launch_bounds__(1) spin_kernel(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

// With the legacy default stream busy when the buffer is allocated, a fill left queued behind the
// busy kernel would land after the copy below. And the copy of every round must survive.
TEST(BufferGpu, ZeroFillIsDoneBeforeAllocateReturns) {
  WTMAP_SKIP_WITHOUT(Backend::gpu);
  constexpr std::size_t kBytes = std::size_t{64} << 20;
  std::vector<std::uint8_t> pattern(kBytes), back(kBytes);
  for (std::size_t i = 0; i < kBytes; ++i) pattern[i] = static_cast<std::uint8_t>(i % 251 + 1);
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  for (int round = 0; round < 4; ++round) {
    spin_kernel<<<1, 1, 0, cudaStreamLegacy>>>(50'000'000);  // some 25 ms
    ASSERT_EQ(cudaGetLastError(), cudaSuccess);
    auto buffer = Buffer::allocate(Backend::gpu, kBytes, "test buffer");
    ASSERT_TRUE(buffer.ok()) << buffer.status().message();
    ASSERT_EQ(cudaMemcpyAsync(buffer->data(), pattern.data(), kBytes, cudaMemcpyHostToDevice, stream), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);  // and whatever the legacy stream still held
    ASSERT_TRUE(buffer->copy_to_host(0, back.data(), kBytes).ok());
    std::size_t zeroed = 0;
    for (std::size_t i = 0; i < kBytes; ++i) zeroed += back[i] == 0;
    ASSERT_EQ(zeroed, 0u) << "round " << round << ": bytes zeroed after the copy";
    ASSERT_TRUE(back == pattern) << "round " << round;
  }
  cudaStreamDestroy(stream);
}

}  // namespace
}  // namespace wtmap::test
