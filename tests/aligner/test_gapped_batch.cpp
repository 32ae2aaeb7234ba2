// gapped/gapped_batch.hpp: GappedAligner's batches on each backend (extension rows interleaved by
// warp) equal extend() / local_align() + local_start() / global_align() called one by one on the
// same codes, each on its own rows (so CPU and GPU agree byte for byte), whatever the scratch
// budget (one launch, one group of tasks per launch, launches cut to whole warps); leftwards
// tasks read their ranges backwards; calls read the codes placed last; a bad task is named by its
// index. GPU configurations skip themselves where no CUDA device is usable.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "gapped_cases.hpp"
#include "wtmap/aligner/gapped/gapped_batch.hpp"

namespace wtmap::test {
namespace {

using namespace aligner::gapped;

// Pairs laid end to end in a query and a target array, one extension (either direction) and one
// global task per pair.
struct Batch {
  Codes query, target;
  std::vector<ExtendTask> extend;
  std::vector<GlobalTask> global;
  std::uint64_t cigar_size = 0;
  CodeArrays codes() const { return {query.data(), query.size(), target.data(), target.size()}; }
};

Batch make_batch(const std::vector<Pair>& pairs) {
  Batch b;
  std::uint32_t k = 0;
  for (const Pair& p : pairs) {
    ExtendTask e;
    e.query_offset = b.query.size();
    e.target_offset = b.target.size();
    e.query_length = static_cast<std::uint32_t>(p.query.size());
    e.target_length = static_cast<std::uint32_t>(p.target.size());
    e.h0 = static_cast<std::int32_t>(1 + k * 7 % 60);
    e.leftwards = static_cast<std::uint8_t>(k % 2);
    b.extend.push_back(e);
    GlobalTask g;
    g.query_offset = e.query_offset;
    g.target_offset = e.target_offset;
    g.query_length = e.query_length;
    g.target_length = e.target_length;
    g.band = static_cast<std::int32_t>(k % 4 == 0 ? 100 : k % 23);
    g.cigar_offset = b.cigar_size + 1;  // a gap of one unused entry between CIGARs
    b.global.push_back(g);
    b.cigar_size = g.cigar_offset + global_max_cigar_ops(g.query_length, g.target_length);
    b.query.insert(b.query.end(), p.query.begin(), p.query.end());
    b.target.insert(b.target.end(), p.target.begin(), p.target.end());
    ++k;
  }
  b.cigar_size += 3;
  return b;
}

std::vector<ExtendResult> extend_one_by_one(const Batch& b, const Scoring& sc) {
  std::vector<ExtendResult> out;
  for (const ExtendTask& t : b.extend) {
    std::vector<std::int32_t> scratch(extend_scratch_bytes(t.query_length) / 4);
    const DpRows<1> rows{scratch.data()};
    const std::uint8_t* q = b.query.data() + t.query_offset;
    const std::uint8_t* r = b.target.data() + t.target_offset;
    out.push_back(t.leftwards
                      ? aligner::gapped::extend(ReverseCodes{q, t.query_length}, t.query_length,
                                                ReverseCodes{r, t.target_length}, t.target_length, sc, t.h0, rows)
                      : aligner::gapped::extend(ForwardCodes{q}, t.query_length, ForwardCodes{r}, t.target_length, sc,
                                                t.h0, rows));
  }
  return out;
}

// The local tasks' tandem_score: for bests of at least 25, with bwa mem's floor 19.
constexpr std::int32_t kTandemFloor = 19, kTandemKeep = 25;

std::vector<LocalResult> local_one_by_one(const Batch& b, const Scoring& sc) {
  std::vector<LocalResult> out;
  for (const ExtendTask& t : b.extend) {
    std::vector<std::int32_t> scratch(extend_scratch_bytes(t.query_length) / 4);
    const DpRows<1> rows{scratch.data()};
    const ForwardCodes q{b.query.data() + t.query_offset}, r{b.target.data() + t.target_offset};
    const ExtendResult end = local_align(q, t.query_length, r, t.target_length, sc, rows);
    LocalResult l;
    if (end.score > 0) {
      const ExtendResult start = local_start(q, r, end, sc, rows);
      l = {end.score, end.qle - start.qle, end.qle, end.tle - start.tle, end.tle, 0};
      if (end.score >= kTandemKeep) l.tandem = tandem_score(q, t.query_length, r, t.target_length, end, sc, kTandemFloor, rows);
    }
    out.push_back(l);
  }
  return out;
}

void global_one_by_one(const Batch& b, const Scoring& sc, std::vector<GlobalResult>& results,
                       std::vector<std::uint32_t>& cigar) {
  cigar.assign(b.cigar_size, 0);
  for (const GlobalTask& t : b.global) {
    std::vector<std::uint32_t> scratch(global_scratch_bytes(t.query_length, t.target_length, t.band) / 4);
    results.push_back(global_align(ForwardCodes{b.query.data() + t.query_offset}, t.query_length,
                                   ForwardCodes{b.target.data() + t.target_offset}, t.target_length, sc, t.band,
                                   scratch.data(), cigar.data() + t.cigar_offset,
                                   global_max_cigar_ops(t.query_length, t.target_length)));
  }
}

template <class T>
::testing::AssertionResult same_bytes(const std::vector<T>& got, const std::vector<T>& want) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure() << got.size() << " vs " << want.size() << " items";
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::memcmp(&got[i], &want[i], sizeof(T)) != 0)
      return ::testing::AssertionFailure() << "item " << i << " differs";
  }
  return ::testing::AssertionSuccess();
}

// Many pairs: the mixed set, then planted 150 bp pairs with a few indels (several GPU warps' worth).
std::vector<Pair> many_pairs() {
  std::vector<Pair> pairs = mixed_pairs(41);
  std::mt19937_64 rng(42);
  for (int k = 0; k < 3000; ++k)
    pairs.push_back(planted_pair(rng, 150, {2, k % 3 == 0, k % 3 == 1, 8, 0, 0, static_cast<unsigned>(k % 10)}));
  return pairs;
}

class GappedBatchOn : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (GetParam() == Backend::gpu && !gpu_available()) GTEST_SKIP() << "no usable CUDA device";
  }
};

INSTANTIATE_TEST_SUITE_P(Aligner, GappedBatchOn, ::testing::Values(Backend::cpu, Backend::gpu),
                         [](const auto& info) { return std::string(backend_name(info.param)); });

TEST_P(GappedBatchOn, ExtensionsEqualTheFunctionCalledOneByOne) {
  const Batch b = make_batch(many_pairs());
  for (std::int32_t zdrop : {0, 100, 20}) {
    Scoring sc;
    sc.zdrop = zdrop;
    sc.band = zdrop == 20 ? 10 : 100;
    const auto want = extend_one_by_one(b, sc);
    for (std::uint64_t budget : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{50000}, std::uint64_t{200000}}) {
      GappedAligner aligner(GetParam(), budget);
      std::vector<ExtendResult> got(b.extend.size());
      ASSERT_TRUE(aligner.extend(sc, b.codes(), b.extend.data(), got.data(), got.size()).ok());
      EXPECT_TRUE(same_bytes(got, want)) << "z-drop " << zdrop << ", budget " << budget;
    }
  }
}

TEST_P(GappedBatchOn, LocalAlignmentsEqualTheFunctionsCalledOneByOne) {
  const Batch b = make_batch(many_pairs());
  std::vector<LocalTask> tasks;
  for (const ExtendTask& t : b.extend)
    tasks.push_back({t.query_offset, t.target_offset, t.query_length, t.target_length, kTandemFloor, kTandemKeep});
  for (std::int32_t band : {1000, 7}) {
    Scoring sc;
    sc.band = band;
    const auto want = local_one_by_one(b, sc);
    // Unbanded (the GPU's warp-a-window path), the cases hold second copies the tandem pass scores.
    if (band == 1000) {
      ASSERT_GT(std::count_if(want.begin(), want.end(), [](const LocalResult& l) { return l.tandem > 0; }), 10);
    }
    for (std::uint64_t budget : {std::uint64_t{0}, std::uint64_t{200000}}) {
      GappedAligner aligner(GetParam(), budget);
      std::vector<LocalResult> got(tasks.size());
      ASSERT_TRUE(aligner.align_local(sc, b.codes(), tasks.data(), got.data(), got.size()).ok());
      EXPECT_TRUE(same_bytes(got, want)) << "band " << band << ", budget " << budget;
    }
  }
}

TEST_P(GappedBatchOn, GlobalAlignmentsEqualTheFunctionCalledOneByOne) {
  const Batch b = make_batch(many_pairs());
  Scoring sc;
  std::vector<GlobalResult> want;
  std::vector<std::uint32_t> want_cigar;
  global_one_by_one(b, sc, want, want_cigar);
  for (std::uint64_t budget : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{300000}}) {
    GappedAligner aligner(GetParam(), budget);
    std::vector<GlobalResult> got(b.global.size());
    std::vector<std::uint32_t> cigar(b.cigar_size, 0xFFFFFFFFu);  // only the CIGARs themselves are defined
    ASSERT_TRUE(
        aligner.align_global(sc, b.codes(), b.global.data(), got.data(), got.size(), cigar.data(), cigar.size()).ok());
    EXPECT_TRUE(same_bytes(got, want)) << "budget " << budget;
    for (std::size_t k = 0; k < want.size(); ++k) {
      const auto at = static_cast<std::ptrdiff_t>(b.global[k].cigar_offset);
      EXPECT_TRUE(std::equal(want_cigar.begin() + at, want_cigar.begin() + at + want[k].n_cigar, cigar.begin() + at))
          << "task " << k << ", budget " << budget;
    }
  }
}

// place() then extensions that name no codes (a mapper's round: left, right, wider band) equal
// the function one by one; a call given codes, or release_device_memory(), replaces the placement.
TEST_P(GappedBatchOn, ExtensionsOnPlacedCodesReadTheCodesPlacedLast) {
  const Batch b = make_batch(many_pairs()), other = make_batch(mixed_pairs(44));
  GappedAligner aligner(GetParam(), 200000);
  Scoring sc;
  std::vector<ExtendResult> got(b.extend.size());
  EXPECT_EQ(aligner.extend(sc, b.extend.data(), got.data(), got.size()).code(), StatusCode::invalid_argument);
  ASSERT_TRUE(aligner.place(b.codes()).ok());
  for (std::int32_t band : {100, 10, 200}) {
    sc.band = band;
    ASSERT_TRUE(aligner.extend(sc, b.extend.data(), got.data(), got.size()).ok());
    EXPECT_TRUE(same_bytes(got, extend_one_by_one(b, sc))) << "band " << band;
  }
  // A call given other codes places them: the next call without reads those.
  std::vector<GlobalResult> global(other.global.size());
  std::vector<std::uint32_t> cigar(other.cigar_size);
  ASSERT_TRUE(aligner.align_global(sc, other.codes(), other.global.data(), global.data(), global.size(), cigar.data(),
                                   cigar.size()).ok());
  std::vector<ExtendResult> got_other(other.extend.size());
  ASSERT_TRUE(aligner.extend(sc, other.extend.data(), got_other.data(), got_other.size()).ok());
  EXPECT_TRUE(same_bytes(got_other, extend_one_by_one(other, sc)));
  // b's tasks reach past other's arrays: refused, not read out of bounds.
  const Status past = aligner.extend(sc, b.extend.data(), got.data(), got.size());
  EXPECT_EQ(past.code(), StatusCode::invalid_argument) << past.message();
  aligner.release_device_memory();
  EXPECT_EQ(aligner.extend(sc, other.extend.data(), got_other.data(), got_other.size()).code(),
            StatusCode::invalid_argument);
}

TEST_P(GappedBatchOn, ABadTaskIsNamedByItsIndex) {
  Batch b = make_batch(mixed_pairs(43, false));
  GappedAligner aligner(GetParam());
  const Scoring sc;
  std::vector<ExtendResult> out(b.extend.size());
  b.extend[7].target_length += 1000000;
  Status s = aligner.extend(sc, b.codes(), b.extend.data(), out.data(), out.size());
  EXPECT_EQ(s.code(), StatusCode::invalid_argument);
  EXPECT_TRUE(std::regex_search(s.message(), std::regex("query 7\\b"))) << s.message();
  b.extend[7].target_length -= 1000000;
  b.extend[9].h0 = 0;
  s = aligner.extend(sc, b.codes(), b.extend.data(), out.data(), out.size());
  EXPECT_TRUE(std::regex_search(s.message(), std::regex("query 9\\b"))) << s.message();
  b.extend[9].h0 = 5;
  Scoring bad;
  bad.match = 0;
  EXPECT_EQ(aligner.extend(bad, b.codes(), b.extend.data(), out.data(), out.size()).code(),
            StatusCode::invalid_argument);
  // A CIGAR slot past the array's end.
  std::vector<GlobalResult> results(b.global.size());
  std::vector<std::uint32_t> cigar(b.cigar_size);
  b.global[12].cigar_offset = b.cigar_size - 1;
  s = aligner.align_global(sc, b.codes(), b.global.data(), results.data(), results.size(), cigar.data(), cigar.size());
  EXPECT_TRUE(std::regex_search(s.message(), std::regex("query 12\\b"))) << s.message();
}

}  // namespace
}  // namespace wtmap::test
