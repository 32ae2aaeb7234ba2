// detail/batch.cuh: a batch of queries gives the same results on the CPU, through run_batch_gpu
// and through launch_batch_gpu + collect_batch_gpu, for every mix of pageable and pinned
// queries and results; a query out of range is named by its index on each path. for_each_index
// reaches every position of its arrays on the device once, and a launch's epilogue runs before its
// results are copied. upload_staged brings every size across its pinned pieces whole. A stepwise
// operation with prefetch() runs interleaved on the CPU with the same results. A warp-per-query
// operation gives its closed form on both backends.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <type_traits>
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

// Every result equals formula(its query).
template <class Vector, class Formula>
::testing::AssertionResult results_follow(const Vector& out, const std::vector<std::uint64_t>& in, Formula formula) {
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (out[i] != formula(in[i])) return ::testing::AssertionFailure() << "result " << i << ": " << out[i];
  }
  return ::testing::AssertionSuccess();
}

template <class Vector>
::testing::AssertionResult squares_of(const Vector& out, const std::vector<std::uint64_t>& in) {
  return results_follow(out, in, [](std::uint64_t x) { return x * x + 1; });
}

// The index of the first query not below `limit`, the one a batch must reject (there is one).
template <class Vector>
std::size_t first_not_below(const Vector& in, std::uint64_t limit) {
  std::size_t i = 0;
  while (in[i] < limit) ++i;
  return i;
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

// With no `out`, the results stay on the device: the epilogue sees them (here it sums them into a
// counter of its own), and nothing else is written to the host.
struct SumResults {
  unsigned long long* sum;  // device
  Status operator()(const std::uint64_t*, std::uint64_t* d_out, cudaStream_t stream) const {
    WTMAP_TRY(detail::enqueue_for_each_index(AddResult{d_out, sum}, kQueries, stream));
    return {};
  }
  struct AddResult {
    const std::uint64_t* results;
    unsigned long long* sum;
    __device__ void operator()(std::uint64_t i) const { atomicAdd(sum, static_cast<unsigned long long>(results[i])); }
  };
};

TEST_P(BatchGpu, ResultsKeptOnTheDeviceReachOnlyTheEpilogue) {
  WTMAP_SKIP_WITHOUT(Backend::gpu);
  Buffers b;
  detail::QueryWorkspace ws;
  auto sum = Buffer::allocate(Backend::gpu, sizeof(unsigned long long), "sum");
  ASSERT_TRUE(sum.ok());
  auto* d_sum = reinterpret_cast<unsigned long long*>(sum->data());
  ASSERT_EQ(cudaMemset(d_sum, 0, sizeof(unsigned long long)), cudaSuccess);
  const SquareOp op{1u << 20};
  ASSERT_TRUE(IsOk(detail::launch_batch_gpu(op, b.in(GetParam()), static_cast<std::uint64_t*>(nullptr), kQueries, ws,
                                            SumResults{d_sum})));
  ASSERT_TRUE(IsOk(detail::collect_batch_gpu(op, b.in(GetParam()), static_cast<std::uint64_t*>(nullptr), kQueries, ws,
                                             "square")));
  unsigned long long got = 0;
  ASSERT_EQ(cudaMemcpy(&got, d_sum, sizeof got, cudaMemcpyDeviceToHost), cudaSuccess);
  unsigned long long expected = 0;
  for (const std::uint64_t x : b.pageable_in) expected += x * x + 1;
  EXPECT_EQ(got, expected);
}

TEST_P(BatchGpu, OutOfRangeQueryIsNamed) {
  WTMAP_SKIP_WITHOUT(Backend::gpu);
  Buffers b;
  const SquareOp op{1000};  // most queries are out of range
  const std::size_t first_bad = first_not_below(b.pageable_in, op.limit);
  detail::QueryWorkspace ws;
  EXPECT_TRUE(RejectsQuery(detail::run_batch_gpu(op, b.in(GetParam()), b.out(GetParam()), kQueries, ws, "square"), first_bad));
  std::uint64_t* out = b.out(GetParam());
  ASSERT_TRUE(IsOk(detail::launch_batch_gpu(op, b.in(GetParam()), out, kQueries, ws)));
  EXPECT_TRUE(RejectsQuery(detail::collect_batch_gpu(op, b.in(GetParam()), out, kQueries, ws, "square"), first_bad));
}

// A warp-per-query operation: x -> sum of (x + k)^2 for k < 64 (mod 2^64), on the GPU with each
// lane taking two terms and a butterfly adding them up, on the CPU in one loop. Closed form:
// 64 x^2 + 2 * 2016 x + 85344 (the sums of k and of k^2 for k < 64).
struct SumOfSquaresOp {
  using In = std::uint64_t;
  using Out = std::uint64_t;
  using WarpPerQuery = std::true_type;
  static constexpr unsigned kBlockThreads = 64;  // two warps a block: each takes its own queries
  std::uint64_t limit;
  WTMAP_HD bool valid(In x) const { return x < limit; }
  WTMAP_HD Out operator()(In x) const {
    std::uint64_t sum = 0;
    for (std::uint64_t k = 0; k < 64; ++k) sum += (x + k) * (x + k);
    return sum;
  }
  __device__ Out warp_call(In x, unsigned lane) const {
    std::uint64_t sum = (x + lane) * (x + lane) + (x + lane + 32) * (x + lane + 32);
    for (unsigned d = 16; d > 0; d >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, d);
    return sum;
  }
  std::string why_invalid(In x) const { return std::to_string(x) + " is not below " + std::to_string(limit); }
};
static_assert(detail::is_warp_per_query<SumOfSquaresOp>::value && !detail::is_warp_per_query<SquareOp>::value);

template <class Vector>
::testing::AssertionResult sums_of_squares_of(const Vector& out, const std::vector<std::uint64_t>& in) {
  return results_follow(out, in, [](std::uint64_t x) { return 64 * x * x + 4032 * x + 85344; });
}

// More queries than the GPU holds warps at once (the loop strides by warp), in every kind of
// memory; a query out of range is named as on the thread-a-query path.
TEST_P(BatchGpu, AWarpAQueryMatchesTheFormulaAndNamesABadQuery) {
  WTMAP_SKIP_WITHOUT(Backend::gpu);
  Buffers b;
  detail::QueryWorkspace ws;
  std::uint64_t* out = b.out(GetParam());
  ASSERT_TRUE(IsOk(detail::run_batch_gpu(SumOfSquaresOp{1u << 20}, b.in(GetParam()), out, kQueries, ws, "sum")));
  EXPECT_TRUE(sums_of_squares_of(out, b.pageable_in));
  const std::size_t first_bad = first_not_below(b.pageable_in, 1000);
  EXPECT_TRUE(RejectsQuery(detail::run_batch_gpu(SumOfSquaresOp{1000}, b.in(GetParam()), b.out(GetParam()), kQueries, ws, "sum"),
                           first_bad));
}

TEST(BatchCpu, AWarpAQueryOperationRunsItsOperatorOnTheCpu) {
  const auto in = queries<std::vector<std::uint64_t>>();
  std::vector<std::uint64_t> out(kQueries);
  ASSERT_TRUE(IsOk(detail::run_batch_cpu(SumOfSquaresOp{1u << 20}, in.data(), out.data(), kQueries, "sum")));
  EXPECT_TRUE(sums_of_squares_of(out, in));
}

// for_each_index over arrays on the device, more positions than the grid has threads (a grid of
// at most 2048 threads per multiprocessor: 270,336 on an H100), so that the loop strides.
struct SquareAtIndex {
  const std::uint64_t* in;
  std::uint64_t* out;
  WTMAP_HD void operator()(std::uint64_t i) const { out[i] = in[i] * in[i] + 1; }
};

TEST(BatchGpuIndex, ForEachIndexVisitsEveryPositionOnce) {
  WTMAP_SKIP_WITHOUT(Backend::gpu);
  const auto in = queries<std::vector<std::uint64_t>>();
  auto d_in = Buffer::allocate(Backend::gpu, kQueries * sizeof(std::uint64_t), "queries");
  auto d_out = Buffer::allocate(Backend::gpu, kQueries * sizeof(std::uint64_t), "results");
  ASSERT_TRUE(d_in.ok() && d_out.ok());
  auto* queries_on_device = reinterpret_cast<std::uint64_t*>(d_in->data());
  auto* results_on_device = reinterpret_cast<std::uint64_t*>(d_out->data());
  ASSERT_EQ(cudaMemcpy(queries_on_device, in.data(), kQueries * sizeof(std::uint64_t), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemset(results_on_device, 0, kQueries * sizeof(std::uint64_t)), cudaSuccess);
  ASSERT_TRUE(IsOk(detail::enqueue_for_each_index(SquareAtIndex{queries_on_device, results_on_device}, kQueries, nullptr)));
  std::vector<std::uint64_t> out(kQueries);
  ASSERT_EQ(cudaMemcpy(out.data(), results_on_device, kQueries * sizeof(std::uint64_t), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_TRUE(squares_of(out, in));
}

// An epilogue runs on the device's queries and results after the kernel and before the copy:
// here it adds each query to its result, so the results read back are x * x + 1 + x.
struct AddQueryAtIndex {
  const std::uint64_t* in;
  std::uint64_t* out;
  WTMAP_HD void operator()(std::uint64_t i) const { out[i] += in[i]; }
};

TEST_P(BatchGpu, LaunchWithAnEpilogueCopiesItsResults) {
  WTMAP_SKIP_WITHOUT(Backend::gpu);
  Buffers b;
  detail::QueryWorkspace ws;
  std::uint64_t* out = b.out(GetParam());
  auto add_queries = [](const std::uint64_t* d_in, std::uint64_t* d_out, cudaStream_t stream) {
    return detail::enqueue_for_each_index(AddQueryAtIndex{d_in, d_out}, kQueries, stream);
  };
  const SquareOp op{1u << 20};
  ASSERT_TRUE(IsOk(detail::launch_batch_gpu(op, b.in(GetParam()), out, kQueries, ws, add_queries)));
  ASSERT_TRUE(IsOk(detail::collect_batch_gpu(op, b.in(GetParam()), out, kQueries, ws, "square")));
  const auto in = queries<std::vector<std::uint64_t>>();
  for (std::size_t i = 0; i < kQueries; ++i) ASSERT_EQ(out[i], in[i] * in[i] + 1 + in[i]) << "result " << i;
}

// The workspace's buffers: made by reserve, kept while they are large enough, grown with a quarter
// to spare when not, the staging buffers only for pageable sides; a request larger than the device
// fails with out_of_memory and leaves the workspace usable.
TEST(QueryWorkspaceGpu, ReserveGrowsKeepsAndRecovers) {
  WTMAP_SKIP_WITHOUT(Backend::gpu);
  detail::QueryWorkspace ws;
  ASSERT_TRUE(IsOk(ws.reserve(4096, 8192, 1, {false, true})));
  ASSERT_NE(ws.stream(0), nullptr);
  ASSERT_NE(ws.stream(1), nullptr);
  ASSERT_NE(ws.first_invalid_on_device(), nullptr);
  ASSERT_NE(ws.first_invalid_on_host(), nullptr);
  EXPECT_NE(ws.next_query_on_device(0), ws.next_query_on_device(1));
  void* const in = ws.device_in(0);
  void* const out = ws.device_out(0);
  ASSERT_NE(in, nullptr);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(ws.device_in(1), nullptr) << "one slot asked for";
  EXPECT_EQ(ws.pinned_in(0), nullptr) << "pinned queries need no staging";
  ASSERT_NE(ws.pinned_out(0), nullptr);
  ASSERT_TRUE(IsOk(ws.reserve(1024, 8192, 1, {false, true})));
  EXPECT_EQ(ws.device_in(0), in) << "a smaller batch reuses the buffers";
  EXPECT_EQ(ws.device_out(0), out);
  ASSERT_TRUE(IsOk(ws.reserve(1 << 20, 8192, 2, {true, true})));
  EXPECT_NE(ws.device_in(1), nullptr);
  EXPECT_NE(ws.pinned_in(0), nullptr);
  EXPECT_NE(ws.pinned_in(1), nullptr);
  // (grown with a quarter to spare: 1.25 MiB per slot, kept for a batch of that size, grown again
  // by a quarter of a larger one)
  constexpr std::size_t kGrown = (1 << 20) + (1 << 18);
  EXPECT_EQ(ws.in_capacity(), kGrown);
  void* const kept = ws.device_in(1);
  ASSERT_TRUE(IsOk(ws.reserve(kGrown, 8192, 2, {true, true})));
  EXPECT_EQ(ws.in_capacity(), kGrown);
  EXPECT_EQ(ws.device_in(1), kept);
  ASSERT_TRUE(IsOk(ws.reserve(kGrown + 4, 8192, 2, {true, true})));
  EXPECT_EQ(ws.in_capacity(), kGrown + 4 + (kGrown + 4) / 4);
  // (a 1 MiB buffer of queries fits; one with the whole device's memory cannot, and says the
  // device is short, which the engines answer with smaller batches)
  std::size_t free_bytes = 0, total_bytes = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_bytes, &total_bytes), cudaSuccess);
  EXPECT_TRUE(HasCode(ws.reserve(total_bytes + 1, 8192, 2, {false, false}), StatusCode::device_out_of_memory));
  ASSERT_TRUE(IsOk(ws.reserve(1 << 20, 8192, 2, {false, false})));
  EXPECT_NE(ws.device_in(0), nullptr);
  EXPECT_NE(ws.device_in(1), nullptr);
  ASSERT_TRUE(IsOk(ws.reserve_timing()));
  EXPECT_NE(ws.timing(0), nullptr);
  EXPECT_NE(ws.timing(1), nullptr);
  ASSERT_TRUE(IsOk(ws.reserve_scratch(12345)));
  EXPECT_NE(ws.scratch(), nullptr);
  // And a batch still runs through it.
  const auto batch = queries<std::vector<std::uint64_t>>();
  std::vector<std::uint64_t> results(kQueries);
  ASSERT_TRUE(IsOk(detail::run_batch_gpu(SquareOp{1u << 20}, batch.data(), results.data(), kQueries, ws, "square")));
  EXPECT_TRUE(squares_of(results, batch));
}

// Under WTMAP_GPU_MEM_LIMIT, a reserve whose quarter to spare does not fit takes the exact size
// (2 slots of 28 MiB under 64 MiB; 35 MiB each would not fit). In a child
// (expect_true_under_memory_limit).
TEST(QueryWorkspaceGpu, ReserveTakesTheExactSizeWhereTheSlackDoesNotFit) {
  WTMAP_SKIP_WITHOUT(Backend::gpu);
  expect_true_under_memory_limit("64M", [] {
    constexpr std::size_t kAsked = std::size_t{28} << 20;
    detail::QueryWorkspace ws;
    return ws.reserve(kAsked, 0, 2, {false, false}).ok() && ws.in_capacity() == kAsked;
  });
}

// Uploads of every size around the pieces' bounds (64 KiB, 4 MiB) arrive whole: the bytes read
// back equal the source's, one workspace serving them all, its pinned pieces growing between them.
TEST(QueryWorkspaceGpu, UploadStagedCopiesEverySizeAcrossPieces) {
  WTMAP_SKIP_WITHOUT(Backend::gpu);
  detail::QueryWorkspace ws;
  constexpr std::size_t kMost = std::size_t{4} << 20;
  const std::size_t sizes[] = {1, (64 << 10) - 1, (64 << 10) + 1, 300001, kMost, kMost + 1, 2 * kMost + 4097, 1};
  std::mt19937_64 rng(7);
  for (const std::size_t size : sizes) {
    std::vector<std::uint8_t> source(size), back(size);
    for (std::uint8_t& b : source) b = static_cast<std::uint8_t>(rng());
    Result<Buffer> device = Buffer::allocate(Backend::gpu, size, "upload test");
    ASSERT_TRUE(device.ok());
    ASSERT_TRUE(IsOk(detail::upload_staged(ws, device.value().data(), source.data(), size))) << size;
    ASSERT_EQ(cudaMemcpy(back.data(), device.value().data(), size, cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_TRUE(back == source) << size << " bytes";
  }
}

// The staging pieces: powers of two from 64 KiB, at least the upload, at most 4 MiB.
TEST(QueryWorkspaceCpu, StagingPiecesArePowersOfTwoFrom64KiBTo4MiB) {
  constexpr std::size_t kKiB = 1 << 10, kMiB = 1 << 20;
  EXPECT_EQ(detail::staging_piece_bytes(1), 64 * kKiB);
  EXPECT_EQ(detail::staging_piece_bytes(64 * kKiB), 64 * kKiB);
  EXPECT_EQ(detail::staging_piece_bytes(64 * kKiB + 1), 128 * kKiB);
  EXPECT_EQ(detail::staging_piece_bytes(3 * kMiB), 4 * kMiB);
  EXPECT_EQ(detail::staging_piece_bytes(4 * kMiB), 4 * kMiB);
  EXPECT_EQ(detail::staging_piece_bytes(std::size_t{40} * kMiB), 4 * kMiB);
}

TEST(BatchCpu, RunBatchMatchesTheFormulaAndNamesABadQuery) {
  const auto in = queries<std::vector<std::uint64_t>>();
  std::vector<std::uint64_t> out(kQueries);
  ASSERT_TRUE(IsOk(detail::run_batch_cpu(SquareOp{1u << 20}, in.data(), out.data(), kQueries, "square")));
  EXPECT_TRUE(squares_of(out, in));
  const std::size_t first_bad = first_not_below(in, 1000);
  EXPECT_TRUE(RejectsQuery(detail::run_batch_cpu(SquareOp{1000}, in.data(), out.data(), kQueries, "square"), first_bad));
}

// Records the CPU threads that answer its queries (host only: run_batch_cpu never instantiates the
// kernel); no policy of its own. Each query waits (up to 10 s) until `together` threads have
// come, so that ranges which may run at once are seen to: the pool's caller could otherwise
// take them all before a worker wakes. SpreadOp names 16 queries a thread.
struct ThreadIds {
  std::mutex mutex;
  std::condition_variable arrived;
  std::set<std::thread::id> ids;
};
struct ThreadRecordingOp {
  using In = std::uint64_t;
  using Out = std::uint64_t;
  ThreadIds* seen;
  std::size_t together = 1;
  bool valid(In) const { return true; }
  Out operator()(In x) const {
    std::unique_lock<std::mutex> lock(seen->mutex);
    seen->ids.insert(std::this_thread::get_id());
    seen->arrived.notify_all();
    seen->arrived.wait_for(lock, std::chrono::seconds(10), [&] { return seen->ids.size() >= together; });
    return x;
  }
  std::string why_invalid(In) const { return {}; }
};
struct SpreadOp : ThreadRecordingOp {
  static constexpr std::uint64_t kCpuMinPerThread = 16;
};

// 64 queries on 4 CPU threads: the default policy keeps them on one thread (fewer than 2^14 per
// thread), an operation naming 16 per thread spreads them over all 4, running at once.
TEST(BatchCpu, AnOperationSetsHowFewQueriesAThreadTakes) {
  set_cpu_threads(4);
  std::vector<std::uint64_t> in(64, 1), out(64);
  ThreadIds by_default, spread;
  ASSERT_TRUE(IsOk(detail::run_batch_cpu(ThreadRecordingOp{&by_default}, in.data(), out.data(), 64, "ids")));
  ASSERT_TRUE(IsOk(detail::run_batch_cpu(SpreadOp{{&spread, 4}}, in.data(), out.data(), 64, "ids")));
  set_cpu_threads(0);
  EXPECT_EQ(by_default.ids.size(), 1u);
  EXPECT_EQ(spread.ids.size(), 4u);
}

// x -> 1 + 2 + ... + x, one addend a step, for x < limit: a stepwise operation with prefetch(),
// which the CPU loop runs several queries at a time. A step that did not follow a prefetch marks
// its result (the top bit), so the sums also show that every step was settled first.
struct TriangleOp {
  using In = std::uint64_t;
  using Out = std::uint64_t;
  struct Scratch {
    std::uint64_t unused;
  };
  struct State {
    explicit State(Scratch&) {}
    std::uint64_t left = 0;
    bool settled = false;
  };
  std::uint64_t limit;
  WTMAP_HD bool valid(In x) const { return x < limit; }
  WTMAP_HD void start(State& s, In x, Out& out) const {
    s.left = x;
    out = 0;
  }
  bool prefetch(State& s, Out&) const {
    s.settled = true;
    return s.left > 0;
  }
  WTMAP_HD bool step(State& s, Out& out) const {
    if (s.left == 0) return false;
    if (!s.settled) out |= std::uint64_t{1} << 63;
    out += s.left--;
    s.settled = false;
    return true;
  }
  std::string why_invalid(In x) const { return std::to_string(x) + " is not below " + std::to_string(limit); }
};
static_assert(detail::has_prefetch<TriangleOp>::value, "the interleaved CPU loop runs it");
static_assert(!detail::has_prefetch<SquareOp>::value, "an operation without prefetch() is not interleaved");

// Queries of 0 to 99 steps, more than the loop's lanes on each thread and not a multiple of them:
// each sum the formula's; then the first invalid query is named and the others still summed.
TEST(BatchCpu, InterleavedStepwiseQueriesMatchTheFormula) {
  for (const unsigned threads : {1u, 3u}) {
    set_cpu_threads(threads);
    std::vector<std::uint64_t> in(100003), out(in.size());
    for (std::size_t i = 0; i < in.size(); ++i) in[i] = (i * 7919) % 100;
    ASSERT_TRUE(IsOk(detail::run_batch_cpu(TriangleOp{100}, in.data(), out.data(), in.size(), "triangle")));
    for (std::size_t i = 0; i < in.size(); ++i) ASSERT_EQ(out[i], in[i] * (in[i] + 1) / 2) << "query " << i;
    in[5000] = 100;
    in[70000] = 200;
    const Status bad = detail::run_batch_cpu(TriangleOp{100}, in.data(), out.data(), in.size(), "triangle");
    EXPECT_EQ(bad.message(), "triangle query 5000: 100 is not below 100");
    EXPECT_EQ(out[5000], 0u);
    EXPECT_EQ(out[4999], in[4999] * (in[4999] + 1) / 2);
    EXPECT_EQ(out[70001], in[70001] * (in[70001] + 1) / 2);
  }
  set_cpu_threads(0);
}

}  // namespace
}  // namespace wtmap::test
