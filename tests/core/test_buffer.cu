// buffer.hpp: an allocation is zero-filled, sized and copied to and from the host on either
// backend, and grow_to keeps or replaces it; on the GPU the zero fill and copy_from_host are
// complete when they return, so a non-blocking stream (as the batch API's are) that uses the
// buffer at once sees their bytes.
// device_memory.hpp: the limit's byte counts; the device bytes held and a request beyond the card.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <thread>
#include <vector>

#include "support.hpp"
#include "wtmap/core/buffer.hpp"
#include "wtmap/core/device_memory.hpp"
#include "wtmap/core/gpu_selection.hpp"

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

// grow_to: an empty buffer becomes one of 16 bytes at least; a large enough one is kept as it is
// (same bytes, same place); a smaller one is replaced by a zero-filled one of the size asked.
TEST_P(BufferOn, GrowToKeepsALargeEnoughBufferAndReplacesASmallerOne) {
  WTMAP_SKIP_WITHOUT(GetParam());
  Buffer b;
  ASSERT_TRUE(b.grow_to(GetParam(), 0, "test buffer").ok());
  EXPECT_EQ(b.size(), 16u);
  EXPECT_EQ(b.backend(), GetParam());
  ASSERT_TRUE(b.grow_to(GetParam(), 1000, "test buffer").ok());
  ASSERT_EQ(b.size(), 1000u);
  const std::vector<std::uint8_t> ones(1000, 1);
  ASSERT_TRUE(b.copy_from_host(0, ones.data(), ones.size()).ok());
  const std::byte* place = b.data();
  ASSERT_TRUE(b.grow_to(GetParam(), 999, "test buffer").ok());
  EXPECT_EQ(b.data(), place);
  EXPECT_EQ(b.size(), 1000u);
  std::vector<std::uint8_t> back(1000);
  ASSERT_TRUE(b.copy_to_host(0, back.data(), back.size()).ok());
  EXPECT_EQ(back, ones);
  ASSERT_TRUE(b.grow_to(GetParam(), 4000, "test buffer").ok());
  ASSERT_EQ(b.size(), 4000u);
  back.assign(4000, 0xAB);
  ASSERT_TRUE(b.copy_to_host(0, back.data(), back.size()).ok());
  EXPECT_EQ(back, std::vector<std::uint8_t>(4000, 0));
}

// grow_with_slack: a buffer made anew holds a quarter more than asked (16 bytes at least), no more
// than `most` unless the request is, zero-filled; a request within it keeps it (same bytes, same
// place). Sizes from the arithmetic here, not from the code under test.
TEST_P(BufferOn, GrowWithSlackLeavesAQuarterToSpareUpToMost) {
  WTMAP_SKIP_WITHOUT(GetParam());
  Buffer b;
  ASSERT_TRUE(b.grow_with_slack(GetParam(), 0, "test buffer").ok());
  EXPECT_EQ(b.size(), 16u);
  ASSERT_TRUE(b.grow_with_slack(GetParam(), 1000, "test buffer").ok());
  ASSERT_EQ(b.size(), 1250u);
  EXPECT_EQ(b.backend(), GetParam());
  const std::vector<std::uint8_t> ones(1250, 1);
  ASSERT_TRUE(b.copy_from_host(0, ones.data(), ones.size()).ok());
  const std::byte* place = b.data();
  ASSERT_TRUE(b.grow_with_slack(GetParam(), 1250, "test buffer").ok());
  EXPECT_EQ(b.data(), place);
  std::vector<std::uint8_t> back(1250);
  ASSERT_TRUE(b.copy_to_host(0, back.data(), back.size()).ok());
  EXPECT_EQ(back, ones);
  ASSERT_TRUE(b.grow_with_slack(GetParam(), 1251, "test buffer", 1400).ok());
  EXPECT_EQ(b.size(), 1400u);  // 1563 capped by most
  back.assign(1400, 0xAB);
  ASSERT_TRUE(b.copy_to_host(0, back.data(), back.size()).ok());
  EXPECT_EQ(back, std::vector<std::uint8_t>(1400, 0));
  ASSERT_TRUE(b.grow_with_slack(GetParam(), 2000, "test buffer", 1500).ok());
  EXPECT_EQ(b.size(), 2000u);  // beyond most: what was asked
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

// device_memory.hpp: WTMAP_GPU_MEM_LIMIT's byte counts, against their closed forms.
TEST(DeviceMemory, ParsesByteCounts) {
  EXPECT_EQ(parse_byte_count("0"), std::optional<std::size_t>(0));
  EXPECT_EQ(parse_byte_count("4096"), std::optional<std::size_t>(4096));
  EXPECT_EQ(parse_byte_count("512K"), std::optional<std::size_t>(512 * 1024));
  EXPECT_EQ(parse_byte_count("64m"), std::optional<std::size_t>(64 * 1024 * 1024));
  EXPECT_EQ(parse_byte_count("2G"), std::optional<std::size_t>(std::size_t{2} * 1024 * 1024 * 1024));
  EXPECT_EQ(parse_byte_count("18446744073709551615"), std::optional<std::size_t>(~std::size_t{0}));
  EXPECT_EQ(parse_byte_count("17179869183G"), std::optional<std::size_t>((std::size_t{17179869183}) << 30));
  for (const char* bad : {"", "K", "-1", "+5", " 5", "5 ", "5KB", "5T", "1.5G", "0x10", "18446744073709551616",
                          "17179869184G", "99999999999999999999999"}) {
    EXPECT_EQ(parse_byte_count(bad), std::nullopt) << "'" << bad << "'";
  }
}

// A GPU buffer's bytes count as held while it lives, and towards the peak.
TEST(DeviceMemoryGpu, CountsWhatBuffersHold) {
  WTMAP_SKIP_WITHOUT(Backend::gpu);
  const std::size_t before = device_memory_held();
  constexpr std::size_t kBytes = (std::size_t{3} << 20) + 5;
  {
    auto buffer = Buffer::allocate(Backend::gpu, kBytes, "test buffer");
    ASSERT_TRUE(buffer.ok()) << buffer.status().message();
    EXPECT_EQ(device_memory_held(), before + kBytes);
    EXPECT_GE(device_memory_peak(), before + kBytes);
    Buffer moved = std::move(buffer.value());  // one owner still: counted once
    EXPECT_EQ(device_memory_held(), before + kBytes);
  }
  EXPECT_EQ(device_memory_held(), before);
  auto host = Buffer::allocate(Backend::cpu, kBytes, "test buffer");  // host memory is not counted
  ASSERT_TRUE(host.ok());
  EXPECT_EQ(device_memory_held(), before);
}

// More than the card holds: device_out_of_memory naming the allocation, nothing held, and no error
// left behind for the next launch's check.
TEST(DeviceMemoryGpu, RequestBeyondTheCardIsDeviceOutOfMemory) {
  WTMAP_SKIP_WITHOUT(Backend::gpu);
  std::size_t free_bytes = 0, total_bytes = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_bytes, &total_bytes), cudaSuccess);
  const std::size_t before = device_memory_held();
  auto buffer = Buffer::allocate(Backend::gpu, total_bytes + 1, "oversized test buffer");
  EXPECT_TRUE(HasCode(buffer, StatusCode::device_out_of_memory));
  if (!buffer.ok()) EXPECT_NE(buffer.status().message().find("oversized test buffer"), std::string::npos);
  EXPECT_EQ(device_memory_held(), before);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  auto available = device_memory_available();
  ASSERT_TRUE(available.ok());
  EXPECT_LE(available.value(), total_bytes);
}

// Where the quarter more does not fit (WTMAP_GPU_MEM_LIMIT 64M, 56 MiB asked: 70 MiB with the
// slack), grow_with_slack takes the exact size; where not even that fits, device_out_of_memory.
// In a child (expect_true_under_memory_limit).
TEST(DeviceMemoryGpu, GrowWithSlackTakesTheExactSizeWhereTheSlackDoesNotFit) {
  WTMAP_SKIP_WITHOUT(Backend::gpu);
  expect_true_under_memory_limit("64M", [] {
    constexpr std::size_t kAsked = std::size_t{56} << 20;
    Buffer b;
    bool as_expected = b.grow_with_slack(Backend::gpu, kAsked, "test buffer").ok() && b.size() == kAsked;
    Buffer other;
    const Status second = other.grow_with_slack(Backend::gpu, std::size_t{16} << 20, "second buffer");
    return as_expected && static_cast<bool>(HasCode(second, StatusCode::device_out_of_memory));
  });
}

// Threads allocating and freeing at once (the ledger's lock is not held across cudaMalloc and
// cudaFree): under a limit of 64 MiB, eight threads each take and give back 200 buffers of up to
// 4 MiB, each thread holding two at a time; the bytes held never pass the limit (the peak), every
// refusal is device_out_of_memory, and at the end all is given back. In a child.
TEST(DeviceMemoryGpu, ThreadsAllocatingAtOnceKeepTheLedgerAndTheLimit) {
  WTMAP_SKIP_WITHOUT(Backend::gpu);
  expect_true_under_memory_limit("64M", [] {
    const std::size_t before = device_memory_held();
    reset_device_memory_peak();
    std::atomic<bool> as_expected{true};
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < 8; ++t) {
      threads.emplace_back([t, &as_expected] {
        if (!use_gpu(0).ok()) as_expected = false;
        Buffer held[2];
        for (unsigned i = 0; i < 200; ++i) {
          const std::size_t bytes = ((t * 7919 + i * 104729) % (std::size_t{4} << 20)) + 1;
          auto b = Buffer::allocate(Backend::gpu, bytes, "thread's buffer");
          if (b.ok()) {
            held[i % 2] = std::move(b.value());
          } else if (b.status().code() != StatusCode::device_out_of_memory) {
            as_expected = false;
          }
        }
      });
    }
    for (std::thread& t : threads) t.join();
    return as_expected.load() && device_memory_peak() <= before + (std::size_t{64} << 20) &&
           device_memory_held() == before;
  });
}

// WTMAP_GPU_MEM_LIMIT holds per device (a run on several GPUs holds an index on each): two
// allocations of 3/4 of the limit fit on two devices, a second one on either does not, and what
// is held is their sum. In a child (expect_true_under_memory_limit).
TEST(DeviceMemoryGpu, LimitHoldsPerDevice) {
  WTMAP_SKIP_WITHOUT(Backend::gpu);
  if (visible_gpu_count() < 2) GTEST_SKIP() << "needs 2 GPUs, " << visible_gpu_count() << " visible";
  expect_true_under_memory_limit("64M", [] {
    constexpr std::size_t kPart = std::size_t{48} << 20;
    const std::size_t before = device_memory_held();
    bool as_expected = use_gpu(0).ok();
    auto on_0 = Buffer::allocate(Backend::gpu, kPart, "device 0's part");
    as_expected = as_expected && on_0.ok() && use_gpu(1).ok();
    auto on_1 = Buffer::allocate(Backend::gpu, kPart, "device 1's part");
    as_expected = as_expected && on_1.ok() && device_memory_held() == before + 2 * kPart;
    as_expected = as_expected && device_memory_held_on_busiest() >= kPart &&
                  device_memory_held_on_busiest() < before + 2 * kPart && device_memory_peak_on_busiest() >= kPart;
    auto more_on_1 = Buffer::allocate(Backend::gpu, kPart, "device 1's second part");
    as_expected = as_expected && static_cast<bool>(HasCode(more_on_1, StatusCode::device_out_of_memory));
    const auto available_on_1 = device_memory_available();
    as_expected = as_expected && available_on_1.ok() && available_on_1.value() <= (std::size_t{16} << 20);
    as_expected = as_expected && use_gpu(0).ok();
    auto more_on_0 = Buffer::allocate(Backend::gpu, kPart, "device 0's second part");
    return as_expected && static_cast<bool>(HasCode(more_on_0, StatusCode::device_out_of_memory));
  });
}

}  // namespace
}  // namespace wtmap::test
