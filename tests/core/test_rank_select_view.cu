// RankSelectView: the bit-vector contract queried through the view itself, in a host loop over a
// CPU-backed vector and in a test kernel over a GPU-backed one; the fused rank1_and_bit; and the
// device-memory batch methods rank1_device / select1_device.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "bit_vector_contract.hpp"
#include "view_drivers.cuh"

namespace wtmap::test {
namespace {

using ViewDrivers = ::testing::Types<CpuViewLoop, GpuViewKernel>;
// The views leave range checks to their callers: the batch-error suite does not apply.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(BitVectorBatchErrors);
INSTANTIATE_TYPED_TEST_SUITE_P(View, BitVectorContract, ViewDrivers, DriverNames);

struct BvRankAndBit {
  RankSelectView v;
  __host__ __device__ RankSelectView::RankAndBit operator()(std::uint64_t i) const { return v.rank1_and_bit(i); }
};

template <class D>
class RankSelectViewTest : public ::testing::Test {
 protected:
  void SetUp() override { WTMAP_SKIP_WITHOUT(D::kBackend); }
  std::mt19937_64 rng{kSeed};
};
TYPED_TEST_SUITE(RankSelectViewTest, ViewDrivers, DriverNames);

// rank1_and_bit(i) is (rank1(i), bit i) for i < n, and (ones, false) at i = n.
TYPED_TEST(RankSelectViewTest, FusedRankAndBit) {
  for (std::uint64_t n : {1, 64, 511, 512, 6145, 65537}) {
    const Bits bits = uniform_bits(n, 50, this->rng);
    const BitsReference ref(bits);
    const auto words = bits.words();
    auto bv = RankSelectBitVector::build(words.data(), n, TypeParam::kBackend);
    ASSERT_TRUE(IsOk(bv));
    const auto positions = query_positions(n + 1, 512, 500, this->rng);
    auto got = TypeParam::template run<RankSelectView::RankAndBit>(BvRankAndBit{bv->view()}, positions);
    ASSERT_TRUE(IsOk(got));
    std::vector<std::uint64_t> expected_rank, got_rank;
    std::vector<std::uint8_t> expected_bit, got_bit;
    for (std::size_t j = 0; j < positions.size(); ++j) {
      const std::uint64_t i = positions[j];
      expected_rank.push_back(ref.rank1(i));
      expected_bit.push_back(i < n ? ref.access(i) : 0);
      got_rank.push_back((*got)[j].rank1);
      got_bit.push_back((*got)[j].bit ? 1 : 0);
    }
    auto at = [&](std::size_t j) { return "n = " + std::to_string(n) + ", i = " + std::to_string(positions[j]); };
    EXPECT_TRUE(SameAnswers(expected_rank, got_rank, at));
    EXPECT_TRUE(SameAnswers(expected_bit, got_bit, at));
  }
}

// ---- rank1_device / select1_device: queries and answers in device memory ---------------------

template <class T>
Result<std::vector<T>> copy_back(DeviceArray<T>& d, std::size_t count) {
  std::vector<T> h(count);
  WTMAP_TRY(cuda_status(cudaMemcpy(h.data(), d.data(), count * sizeof(T), cudaMemcpyDeviceToHost), "copy back"));
  return h;
}

// Runs a *_device batch method on `queries` copied to device memory.
template <class Call>
Result<std::vector<std::uint64_t>> device_batch(const std::vector<std::uint64_t>& queries, Call call) {
  DeviceArray<std::uint64_t> in(queries.size()), out(queries.size());
  WTMAP_TRY(in.status());
  WTMAP_TRY(out.status());
  WTMAP_TRY(cuda_status(cudaMemcpy(in.data(), queries.data(), queries.size() * 8, cudaMemcpyHostToDevice), "copy in"));
  cudaStream_t stream = nullptr;
  WTMAP_TRY(cuda_status(cudaStreamCreate(&stream), "cudaStreamCreate"));
  const Status s = call(in.data(), out.data(), queries.size(), stream);
  cudaStreamDestroy(stream);
  WTMAP_TRY(s);
  return copy_back(out, queries.size());
}

TEST(BitVectorDeviceBatch, RankAndSelectOnDeviceMemory) {
  WTMAP_SKIP_WITHOUT(Backend::gpu);
  std::mt19937_64 rng(kSeed);
  const Bits bits = adversarial_bits(3 * 65536 + 17, 10, rng);
  const BitsReference ref(bits);
  const auto words = bits.words();
  auto bv = RankSelectBitVector::build(words.data(), bits.size(), Backend::gpu);
  ASSERT_TRUE(IsOk(bv));
  const auto positions = query_positions(bits.size() + 1, 512, 2000, rng);
  const auto ks = select_ks(ref.ones(), rng);
  auto rank = [&](auto... a) { return bv->rank1_device(a...); };
  auto select = [&](auto... a) { return bv->select1_device(a...); };

  auto r = device_batch(positions, rank);
  ASSERT_TRUE(IsOk(r));
  std::vector<std::uint64_t> expected;
  for (std::uint64_t i : positions) expected.push_back(ref.rank1(i));
  EXPECT_TRUE(SameAnswers(expected, *r, [&](std::size_t j) { return "rank1(" + std::to_string(positions[j]) + ")"; }));
  auto s = device_batch(ks, select);
  ASSERT_TRUE(IsOk(s));
  expected.clear();
  for (std::uint64_t k : ks) expected.push_back(ref.select1(k));
  EXPECT_TRUE(SameAnswers(expected, *s, [&](std::size_t j) { return "select1(" + std::to_string(ks[j]) + ")"; }));

  EXPECT_TRUE(RejectsQuery(device_batch({0, 5, bits.size() + 1, bits.size() + 1}, rank), 2));
  EXPECT_TRUE(RejectsQuery(device_batch({1, 0, ref.ones() + 1}, select), 1));
  EXPECT_TRUE(RejectsQuery(device_batch({1, ref.ones() + 1}, select), 1));
}

TEST(BitVectorDeviceBatch, CpuBackendRefusesDeviceBatches) {
  const std::uint32_t word = 0b1011;
  auto bv = RankSelectBitVector::build(&word, 4, Backend::cpu);
  ASSERT_TRUE(IsOk(bv));
  std::uint64_t q = 1, out = 0;
  EXPECT_TRUE(HasCode(bv->rank1_device(&q, &out, 1, nullptr), StatusCode::invalid_argument));
  EXPECT_TRUE(HasCode(bv->select1_device(&q, &out, 1, nullptr), StatusCode::invalid_argument));
}

}  // namespace
}  // namespace wtmap::test
