#include "wtmap/core/bit_vector.hpp"

#include <istream>
#include <ostream>
#include <string>

#include "wtmap/core/detail/batch.cuh"
#include "rank_select_build.hpp"
#include "serialize.hpp"
#include "support_check.hpp"

namespace wtmap {
namespace {

using L = RankSelectLayout;

// Query operations (see batch.cuh): one __host__ __device__ call each.
struct Rank1Op {
  using In = std::uint64_t;
  using Out = std::uint64_t;
  RankSelectView v;
  WTMAP_HD bool valid(In i) const { return i <= v.size; }
  WTMAP_HD Out operator()(In i) const { return v.rank1(i); }
  std::string why_invalid(In i) const { return "position " + std::to_string(i) + " is past the end (n = " + std::to_string(v.size) + ")"; }
};
struct Rank0Op : Rank1Op {
  WTMAP_HD Out operator()(In i) const { return v.rank0(i); }
};
struct AccessOp {
  using In = std::uint64_t;
  using Out = std::uint8_t;
  RankSelectView v;
  WTMAP_HD bool valid(In i) const { return i < v.size; }
  WTMAP_HD Out operator()(In i) const { return v.access(i) ? 1 : 0; }
  std::string why_invalid(In i) const { return "position " + std::to_string(i) + " is not below n = " + std::to_string(v.size); }
};
template <bool Bit>
struct SelectOp {
  using In = std::uint64_t;
  using Out = std::uint64_t;
  RankSelectView v;
  WTMAP_HD std::uint64_t available() const { return Bit ? v.ones : v.zeros(); }
  WTMAP_HD bool valid(In k) const { return k >= 1 && k <= available(); }
  WTMAP_HD Out operator()(In k) const { return Bit ? v.select1(k) : v.select0(k); }
  std::string why_invalid(In k) const {
    return "k = " + std::to_string(k) + " is outside [1, " + std::to_string(available()) + "] (the " +
           (Bit ? "ones" : "zeros") + " in the vector)";
  }
};

constexpr char kMagic[8] = {'W', 'T', 'M', 'B', 'V', 'E', 'C', '1'};

}  // namespace

RankSelectBitVector::RankSelectBitVector(RankSelectBitVector&&) noexcept = default;
RankSelectBitVector& RankSelectBitVector::operator=(RankSelectBitVector&&) noexcept = default;
RankSelectBitVector::~RankSelectBitVector() = default;

Result<RankSelectBitVector> RankSelectBitVector::build(const std::uint32_t* words, std::uint64_t n, Backend backend) {
  if (backend == Backend::gpu && !gpu_available()) return Status{StatusCode::unavailable, "no usable CUDA device"};
  RankSelectBitVector bv;
  auto storage = Buffer::allocate(backend, L::total_bytes(n), "bit vector");
  if (!storage.ok()) return storage.status();
  bv.storage_ = std::move(storage.value());
  const std::uint64_t full_words = n / 32;
  WTMAP_TRY(bv.storage_.copy_from_host(0, words, full_words * 4));
  if (n % 32 != 0) {  // clear the bits past n so that counts are a function of the n bits alone
    const std::uint32_t last = words[full_words] & static_cast<std::uint32_t>(bits::low_mask64(n % 32));
    WTMAP_TRY(bv.storage_.copy_from_host(full_words * 4, &last, 4));
  }
  WTMAP_TRY(detail::build_rank_select(backend, bv.storage_.data(), n, bv.view_));
  bv.workspace_ = std::make_unique<detail::QueryWorkspace>();
  return std::move(bv);
}

template <class Op, class In, class Out>
Status RankSelectBitVector::run(const Op& op, const In* in, Out* out, std::size_t count, const char* what) const {
  return detail::run_batch(backend(), op, in, out, count, *workspace_, what);
}

Status RankSelectBitVector::rank1(const std::uint64_t* p, std::uint64_t* out, std::size_t count) const {
  return run(Rank1Op{view_}, p, out, count, "rank1");
}
Status RankSelectBitVector::rank0(const std::uint64_t* p, std::uint64_t* out, std::size_t count) const {
  return run(Rank0Op{{view_}}, p, out, count, "rank0");
}
Status RankSelectBitVector::select1(const std::uint64_t* k, std::uint64_t* out, std::size_t count) const {
  return run(SelectOp<true>{view_}, k, out, count, "select1");
}
Status RankSelectBitVector::select0(const std::uint64_t* k, std::uint64_t* out, std::size_t count) const {
  return run(SelectOp<false>{view_}, k, out, count, "select0");
}
Status RankSelectBitVector::access(const std::uint64_t* p, std::uint8_t* out, std::size_t count) const {
  return run(AccessOp{view_}, p, out, count, "access");
}

Status RankSelectBitVector::rank1_device(const std::uint64_t* p, std::uint64_t* out, std::size_t count,
                                         cudaStream_t stream) const {
  if (backend() != Backend::gpu) return invalid_argument("rank1_device needs a GPU-backed bit vector");
  return detail::run_batch_device(Rank1Op{view_}, p, out, count, stream, *workspace_, "rank1");
}
Status RankSelectBitVector::select1_device(const std::uint64_t* k, std::uint64_t* out, std::size_t count,
                                           cudaStream_t stream) const {
  if (backend() != Backend::gpu) return invalid_argument("select1_device needs a GPU-backed bit vector");
  return detail::run_batch_device(SelectOp<true>{view_}, k, out, count, stream, *workspace_, "select1");
}

Status RankSelectBitVector::save(std::ostream& out) const {
  detail::Writer w(out);
  w.bytes(kMagic, sizeof kMagic);
  w.u64(detail::kFormatVersion);
  w.u64(view_.size);
  w.u64(view_.ones);
  WTMAP_TRY(w.buffer(storage_));
  return w.status("bit vector");
}

Result<RankSelectBitVector> RankSelectBitVector::load(std::istream& in, Backend backend) {
  if (backend == Backend::gpu && !gpu_available()) return Status{StatusCode::unavailable, "no usable CUDA device"};
  detail::Reader r(in, "bit vector");
  WTMAP_TRY(r.magic(kMagic));
  WTMAP_TRY(r.version());
  std::uint64_t n = 0, ones = 0;
  WTMAP_TRY(r.u64(n));
  WTMAP_TRY(r.u64(ones));
  if (ones > n) return corrupt_data("bit vector: header claims more ones than bits");
  RankSelectBitVector bv;
  auto storage = r.buffer(backend, L::total_bytes(n));
  if (!storage.ok()) return storage.status();
  bv.storage_ = std::move(storage.value());
  {  // the counts and select samples must be the ones the bits give (support_check.hpp)
    Buffer copy;
    auto loaded = detail::host_bytes(bv.storage_, copy);
    if (!loaded.ok()) return loaded.status();
    auto expected = Buffer::allocate(Backend::cpu, bv.storage_.size(), "the check of a loaded bit vector");
    if (!expected.ok()) return expected.status();
    detail::copy_rank_select_bits(*loaded, expected->data(), n);
    RankSelectView rebuilt;
    WTMAP_TRY(detail::build_rank_select(Backend::cpu, expected->data(), n, rebuilt));
    if (rebuilt.ones != ones) {
      return corrupt_data("bit vector: the header counts " + std::to_string(ones) + " ones, the bits hold " +
                          std::to_string(rebuilt.ones));
    }
    WTMAP_TRY(detail::same_support(*loaded, expected->data(), bv.storage_.size(), "bit vector: the rank/select directory"));
  }
  bv.view_ = detail::rank_select_view_at(bv.storage_.data(), n, ones);
  bv.workspace_ = std::make_unique<detail::QueryWorkspace>();
  return std::move(bv);
}

}  // namespace wtmap
