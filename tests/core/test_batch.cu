// detail/batch.cuh: a batch of queries gives the same results on the CPU, through run_batch_gpu
// and through launch_batch_gpu + collect_batch_gpu, for every mix of pageable and pinned
// queries and results; a query out of range is named by its index on each path. A stepwise
// operation of two rounds finishes every query, those that round 0 stopped in round 1.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "support.hpp"
#include "wtmap/core/detail/batch.cuh"
#include "wtmap/core/pinned_allocator.hpp"

namespace wtmap::test {
namespace {

// x -> x * x + 1 for x < limit.
struct SquareOp {
  using In = std::uint64_t;
  using Out = std::uint64_t;
  std::uint64_t limit;
  WTMAP_HD bool valid(In x) const { return x < limit; }
  WTMAP_HD Out operator()(In x) const { return x * x + 1; }
  std::string why_invalid(In x) const { return std::to_string(x) + " is not below " + std::to_string(limit); }
};

constexpr std::size_t kQueries = 300001;  // several chunks for run_batch_gpu, not a multiple of a block

template <class Vector>
Vector queries() {
  Vector q(kQueries);
  for (std::size_t i = 0; i < kQueries; ++i) q[i] = (i * 7919) % 1000003;
  return q;
}

template <class Vector>
::testing::AssertionResult squares_of(const Vector& out, const std::vector<std::uint64_t>& in) {
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (out[i] != in[i] * in[i] + 1) return ::testing::AssertionFailure() << "result " << i << ": " << out[i];
  }
  return ::testing::AssertionSuccess();
}

struct Kinds {
  bool pinned_in, pinned_out;
};

class BatchGpu : public ::testing::TestWithParam<Kinds> {
 protected:
  // The queries and results of one run, in the kinds of memory of the parameter.
  struct Buffers {
    std::vector<std::uint64_t> pageable_in = queries<std::vector<std::uint64_t>>(), pageable_out;
    PinnedVector<std::uint64_t> pinned_in = queries<PinnedVector<std::uint64_t>>(), pinned_out;
    const std::uint64_t* in(const Kinds& k) const { return k.pinned_in ? pinned_in.data() : pageable_in.data(); }
    std::uint64_t* out(const Kinds& k) {
      pageable_out.assign(kQueries, 0);
      pinned_out.assign(kQueries, 0);
      return k.pinned_out ? pinned_out.data() : pageable_out.data();
    }
  };
};

INSTANTIATE_TEST_SUITE_P(Core, BatchGpu,
                         ::testing::Values(Kinds{false, false}, Kinds{true, false}, Kinds{false, true}, Kinds{true, true}),
                         [](const auto& info) {
                           return std::string(info.param.pinned_in ? "PinnedIn" : "PageableIn") +
                                  (info.param.pinned_out ? "PinnedOut" : "PageableOut");
                         });

TEST_P(BatchGpu, RunBatchMatchesTheFormula) {
  WTMAP_SKIP_WITHOUT(Backend::gpu);
  Buffers b;
  detail::QueryWorkspace ws;
  std::uint64_t* out = b.out(GetParam());
  ASSERT_TRUE(IsOk(detail::run_batch_gpu(SquareOp{1u << 20}, b.in(GetParam()), out, kQueries, ws, "square")));
  EXPECT_TRUE(squares_of(out, b.pageable_in));
}

// Two workspaces, two batches in flight, collected in the opposite order of their launches.
TEST_P(BatchGpu, LaunchAndCollectMatchTheFormula) {
  WTMAP_SKIP_WITHOUT(Backend::gpu);
  Buffers first, second;
  detail::QueryWorkspace ws[2];
  std::uint64_t* out[2] = {first.out(GetParam()), second.out(GetParam())};
  const SquareOp op{1u << 20};
  ASSERT_TRUE(IsOk(detail::launch_batch_gpu(op, first.in(GetParam()), out[0], kQueries, ws[0])));
  ASSERT_TRUE(IsOk(detail::launch_batch_gpu(op, second.in(GetParam()), out[1], kQueries, ws[1])));
  ASSERT_TRUE(IsOk(detail::collect_batch_gpu(op, second.in(GetParam()), out[1], kQueries, ws[1], "square")));
  ASSERT_TRUE(IsOk(detail::collect_batch_gpu(op, first.in(GetParam()), out[0], kQueries, ws[0], "square")));
  EXPECT_TRUE(squares_of(out[0], first.pageable_in));
  EXPECT_TRUE(squares_of(out[1], second.pageable_in));
}

TEST_P(BatchGpu, OutOfRangeQueryIsNamed) {
  WTMAP_SKIP_WITHOUT(Backend::gpu);
  Buffers b;
  const SquareOp op{1000};  // most queries are out of range
  std::size_t first_bad = 0;
  while (b.pageable_in[first_bad] < op.limit) ++first_bad;
  detail::QueryWorkspace ws;
  EXPECT_TRUE(RejectsQuery(detail::run_batch_gpu(op, b.in(GetParam()), b.out(GetParam()), kQueries, ws, "square"), first_bad));
  std::uint64_t* out = b.out(GetParam());
  ASSERT_TRUE(IsOk(detail::launch_batch_gpu(op, b.in(GetParam()), out, kQueries, ws)));
  EXPECT_TRUE(RejectsQuery(detail::collect_batch_gpu(op, b.in(GetParam()), out, kQueries, ws, "square"), first_bad));
}

// A stepwise operation of two rounds: query w takes w steps, and round 0 stops it after
// first_cap of them.
struct CountdownOp {
  static constexpr bool kTwoRounds = true;
  using In = std::uint32_t;
  struct Out {
    std::uint32_t steps, round, stopped;
  };
  struct Scratch {};
  struct State {
    WTMAP_HD explicit State(Scratch&) {}
    std::uint32_t left = 0, cap = 0;
  };
  std::uint32_t first_cap;
  WTMAP_HD bool valid(In) const { return true; }
  WTMAP_HD void start(State& s, In w, Out& out, unsigned round) const {
    s.left = w;
    s.cap = round == 0 ? first_cap : ~0u;
    out = {0, round, 0};
  }
  WTMAP_HD bool step(State& s, Out& out) const {
    if (s.left == 0) return false;
    if (out.steps == s.cap) {
      out.stopped = 1;
      return false;
    }
    --s.left;
    ++out.steps;
    return true;
  }
  WTMAP_HD bool retry(const Out& out) const { return out.stopped != 0; }
  std::string why_invalid(In) const { return {}; }
};

// Every query done in full, in round 1 exactly where it needs more than first_cap steps (-1 for
// the CPU, which runs round 1 only: every query).
::testing::AssertionResult finished(const CountdownOp::Out* out, const std::vector<std::uint32_t>& in,
                                    std::int64_t first_cap) {
  for (std::size_t i = 0; i < in.size(); ++i) {
    const std::uint32_t round = in[i] > first_cap ? 1 : 0;
    if (out[i].steps != in[i] || out[i].round != round || out[i].stopped != 0) {
      return ::testing::AssertionFailure() << "query " << i << " (" << in[i] << " steps): " << out[i].steps
                                           << " steps in round " << out[i].round << ", stopped " << out[i].stopped;
    }
  }
  return ::testing::AssertionSuccess();
}

std::vector<std::uint32_t> countdowns(std::size_t n, std::uint32_t least, std::uint32_t spread) {
  std::vector<std::uint32_t> w(n);
  for (std::size_t i = 0; i < n; ++i) w[i] = least + static_cast<std::uint32_t>((i * 7919) % spread);
  return w;
}

// A few long queries among short ones, and only long ones: each GPU thread then sets two aside
// and restarts the rest at once.
TEST(BatchTwoRounds, EveryQueryFinishesInTheRoundItNeeds) {
  WTMAP_SKIP_WITHOUT(Backend::gpu);
  const CountdownOp op{1000};
  for (const auto& in : {countdowns(100001, 0, 3000), countdowns(300001, 1001, 100)}) {
    std::vector<CountdownOp::Out> out(in.size());
    detail::QueryWorkspace ws;
    ASSERT_TRUE(IsOk(detail::run_batch_gpu(op, in.data(), out.data(), in.size(), ws, "countdown")));
    EXPECT_TRUE(finished(out.data(), in, op.first_cap));
  }
}

TEST(BatchTwoRounds, CpuRunsRoundOneOnly) {
  const auto in = countdowns(100001, 0, 3000);
  std::vector<CountdownOp::Out> out(in.size());
  ASSERT_TRUE(IsOk(detail::run_batch_cpu(CountdownOp{1000}, in.data(), out.data(), in.size(), "countdown")));
  EXPECT_TRUE(finished(out.data(), in, -1));
}

TEST(BatchCpu, RunBatchMatchesTheFormulaAndNamesABadQuery) {
  const auto in = queries<std::vector<std::uint64_t>>();
  std::vector<std::uint64_t> out(kQueries);
  ASSERT_TRUE(IsOk(detail::run_batch_cpu(SquareOp{1u << 20}, in.data(), out.data(), kQueries, "square")));
  EXPECT_TRUE(squares_of(out, in));
  std::size_t first_bad = 0;
  while (in[first_bad] < 1000) ++first_bad;
  EXPECT_TRUE(RejectsQuery(detail::run_batch_cpu(SquareOp{1000}, in.data(), out.data(), kQueries, "square"), first_bad));
}

}  // namespace
}  // namespace wtmap::test
