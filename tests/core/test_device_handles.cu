// device_handles.hpp: the owners of a CUDA stream and event make what they claim (a
// non-blocking stream, timing events) and hand it over on a move; empty owners hold nothing.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <utility>

#include "support.hpp"
#include "wtmap/core/device_handles.hpp"

namespace wtmap::test {
namespace {

__global__ void __launch_bounds__(1) spin_kernel(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

TEST(DeviceHandles, EmptyOwnersHoldNothing) {
  const Stream stream;
  const Event event;
  EXPECT_FALSE(stream);
  EXPECT_EQ(stream.get(), nullptr);
  EXPECT_FALSE(event);
  EXPECT_EQ(event.get(), nullptr);
}

TEST(DeviceHandlesGpu, StreamIsNonBlockingAndMovesItsHandle) {
  WTMAP_SKIP_WITHOUT(Backend::gpu);
  Result<Stream> made = Stream::create();
  ASSERT_TRUE(made.ok()) << made.status().message();
  Stream first = std::move(made.value());
  ASSERT_TRUE(first);
  unsigned flags = 0;
  ASSERT_EQ(cudaStreamGetFlags(first.get(), &flags), cudaSuccess);
  EXPECT_EQ(flags, static_cast<unsigned>(cudaStreamNonBlocking));
  const cudaStream_t handle = first.get();
  Stream second = std::move(first);
  EXPECT_FALSE(first);
  EXPECT_EQ(second.get(), handle);
  // Non-blocking: work on it finishes while the legacy default stream is still busy.
  std::uint64_t* device = nullptr;
  ASSERT_EQ(cudaMalloc(&device, sizeof(std::uint64_t)), cudaSuccess);
  spin_kernel<<<1, 1, 0, cudaStreamLegacy>>>(400'000'000);  // some 0.2 s
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  ASSERT_EQ(cudaMemsetAsync(device, 0x5A, sizeof(std::uint64_t), second.get()), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(second.get()), cudaSuccess);
  EXPECT_EQ(cudaStreamQuery(cudaStreamLegacy), cudaErrorNotReady) << "the stream waited for the legacy stream";
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  cudaFree(device);
}

TEST(DeviceHandlesGpu, EventsTimeTheWorkBetweenThem) {
  WTMAP_SKIP_WITHOUT(Backend::gpu);
  Result<Stream> stream = Stream::create();
  Result<Event> begin = Event::create(), end = Event::create();
  ASSERT_TRUE(stream.ok() && begin.ok() && end.ok());
  ASSERT_EQ(cudaEventRecord(begin->get(), stream->get()), cudaSuccess);
  spin_kernel<<<1, 1, 0, stream->get()>>>(100'000'000);  // some 50 ms at 2 GHz
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(end->get(), stream->get()), cudaSuccess);
  ASSERT_EQ(cudaEventSynchronize(end->get()), cudaSuccess);
  float ms = 0;
  ASSERT_EQ(cudaEventElapsedTime(&ms, begin->get(), end->get()), cudaSuccess);
  EXPECT_GT(ms, 5.0f) << "10^8 cycles take more than 5 ms at any clock below 20 GHz";
  Event moved = std::move(end.value());
  EXPECT_FALSE(end.value());
  EXPECT_TRUE(moved);
}

}  // namespace
}  // namespace wtmap::test
