// RankSelectBitVector through its host batch API: the contract on the CPU backend and on the GPU
// backend (pageable and pinned queries), errors, save/load across backends, and byte-identical
// construction on both backends.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "batch_drivers.hpp"
#include "bit_vector_contract.hpp"

namespace wtmap::test {
namespace {

using BatchDrivers = ::testing::Types<CpuBatch, GpuBatchPageable, GpuBatchPinned>;
INSTANTIATE_TYPED_TEST_SUITE_P(HostBatch, BitVectorContract, BatchDrivers, DriverNames);

using ErrorDrivers = ::testing::Types<CpuBatch, GpuBatchPageable>;
INSTANTIATE_TYPED_TEST_SUITE_P(HostBatch, BitVectorBatchErrors, ErrorDrivers, DriverNames);

// Inputs for the save/load and cross-backend tests: lengths around blocks, records and several
// select samples; uniform, empty, full and adversarial fills.
std::vector<Bits> assorted_bit_vectors(std::mt19937_64& rng) {
  std::vector<Bits> all;
  for (std::uint64_t n : {0, 1, 33, 513, 6145, 65536, 3 * 65536 + 17}) {
    for (double percent : {0.0, 10.0, 50.0, 100.0}) all.push_back(uniform_bits(n, percent, rng));
    all.push_back(adversarial_bits(n, 1.0, rng));
  }
  return all;
}

std::string describe(const Bits& b) {
  std::uint64_t ones = 0;
  for (bool x : b.bit) ones += x;
  return "n = " + std::to_string(b.size()) + ", ones = " + std::to_string(ones);
}

// Build with From's backend, save, load with To's, and query through To: same answers as the
// reference, and the reloaded vector saves to the same bytes.
template <class From, class To>
void check_round_trip() {
  if (skip_backend(From::kBackend) || skip_backend(To::kBackend)) GTEST_SKIP() << "no usable CUDA device";
  std::mt19937_64 rng(kSeed);
  for (const Bits& bits : assorted_bit_vectors(rng)) {
    SCOPED_TRACE(describe(bits));
    const auto words = bits.words();
    auto built = RankSelectBitVector::build(words.data(), bits.size(), From::kBackend);
    ASSERT_TRUE(IsOk(built));
    const std::string bytes = saved_bytes(*built);
    auto loaded = load_bytes<RankSelectBitVector>(bytes, To::kBackend);
    ASSERT_TRUE(IsOk(loaded));
    EXPECT_EQ(loaded->backend(), To::kBackend);
    check_bit_vector<To>(*loaded, bits, rng);
    EXPECT_EQ(saved_bytes(*loaded), bytes);
  }
}

TEST(BitVectorSaveLoad, CpuToCpu) { check_round_trip<CpuBatch, CpuBatch>(); }
TEST(BitVectorSaveLoad, CpuToGpu) { check_round_trip<CpuBatch, GpuBatchPageable>(); }
TEST(BitVectorSaveLoad, GpuToCpu) { check_round_trip<GpuBatchPageable, CpuBatch>(); }
TEST(BitVectorSaveLoad, GpuToGpu) { check_round_trip<GpuBatchPageable, GpuBatchPageable>(); }

// Both backends build the same structure, byte for byte.
TEST(BitVectorBackends, SaveIsByteIdentical) {
  WTMAP_SKIP_WITHOUT(Backend::gpu);
  std::mt19937_64 rng(kSeed);
  for (const Bits& bits : assorted_bit_vectors(rng)) {
    SCOPED_TRACE(describe(bits));
    const auto words = bits.words();
    auto cpu = RankSelectBitVector::build(words.data(), bits.size(), Backend::cpu);
    auto gpu = RankSelectBitVector::build(words.data(), bits.size(), Backend::gpu);
    ASSERT_TRUE(IsOk(cpu));
    ASSERT_TRUE(IsOk(gpu));
    EXPECT_EQ(cpu->size_in_bytes(), gpu->size_in_bytes());
    EXPECT_TRUE(saved_bytes(*cpu) == saved_bytes(*gpu)) << "saved streams differ";
  }
}

TEST(BitVectorBackends, GpuBuildWithoutDeviceIsUnavailable) {
  if (gpu_available()) GTEST_SKIP() << "a CUDA device is usable here";
  const std::uint32_t word = 5;
  EXPECT_TRUE(HasCode(RankSelectBitVector::build(&word, 3, Backend::gpu), StatusCode::unavailable));
}

}  // namespace
}  // namespace wtmap::test
