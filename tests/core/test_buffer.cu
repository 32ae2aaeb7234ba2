// buffer.hpp: an allocation is zero-filled, sized and copied to and from the host on either
// backend; on the GPU the zero fill and copy_from_host are complete when they return, so a
// non-blocking stream (as the batch API's are) that uses the buffer at once sees their bytes.
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

// Sizes that are not multiples of the alignment, below and above the 2 MiB from which host
// buffers come in huge pages.
TEST_P(BufferOn, FreshBufferIsZeroAndCopiesRoundTrip) {
  WTMAP_SKIP_WITHOUT(GetParam());
  for (const std::size_t size : {std::size_t{1000003}, (std::size_t{3} << 20) + 5}) {
    SCOPED_TRACE(size);
    auto buffer = Buffer::allocate(GetParam(), size, "test buffer");
    ASSERT_TRUE(buffer.ok()) << buffer.status().message();
    EXPECT_EQ(buffer->size(), size);
    EXPECT_EQ(buffer->backend(), GetParam());
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(buffer->data()) % 128, 0u);
    std::vector<std::uint8_t> bytes(size, 0xAB);
    ASSERT_TRUE(buffer->copy_to_host(0, bytes.data(), size).ok());
    for (std::size_t i = 0; i < size; ++i) ASSERT_EQ(bytes[i], 0) << "byte " << i;
    for (std::size_t i = 0; i < size; ++i) bytes[i] = static_cast<std::uint8_t>(i * 7 + 3);
    ASSERT_TRUE(buffer->copy_from_host(100, bytes.data(), size - 100).ok());
    std::vector<std::uint8_t> back(size);
    ASSERT_TRUE(buffer->copy_to_host(0, back.data(), size).ok());
    for (std::size_t i = 0; i < 100; ++i) ASSERT_EQ(back[i], 0) << "byte " << i;
    for (std::size_t i = 100; i < size; ++i) ASSERT_EQ(back[i], bytes[i - 100]) << "byte " << i;
  }
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

// The same for copy_from_host: with the legacy stream busy until the copy starts, the bytes read
// back at once on a non-blocking stream are the bytes copied, not what the buffer held before.
TEST(BufferGpu, CopyFromHostIsDoneWhenItReturns) {
  WTMAP_SKIP_WITHOUT(Backend::gpu);
  constexpr std::size_t kBytes = std::size_t{64} << 20;
  std::vector<std::uint8_t> pattern(kBytes), back(kBytes);
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  auto buffer = Buffer::allocate(Backend::gpu, kBytes, "test buffer");
  ASSERT_TRUE(buffer.ok()) << buffer.status().message();
  for (int round = 0; round < 4; ++round) {
    for (std::size_t i = 0; i < kBytes; ++i) pattern[i] = static_cast<std::uint8_t>((i + round) % 251 + 1);
    spin_kernel<<<1, 1, 0, cudaStreamLegacy>>>(50'000'000);
    ASSERT_EQ(cudaGetLastError(), cudaSuccess);
    ASSERT_TRUE(buffer->copy_from_host(0, pattern.data(), kBytes).ok());
    ASSERT_EQ(cudaMemcpyAsync(back.data(), buffer->data(), kBytes, cudaMemcpyDeviceToHost, stream), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    ASSERT_TRUE(back == pattern) << "round " << round << ": a read on another stream saw older bytes";
  }
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  cudaStreamDestroy(stream);
}

}  // namespace
}  // namespace wtmap::test
