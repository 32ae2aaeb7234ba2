// FmIndexBase: batched search and locate over either index's view, on the CPU or the GPU, with
// core's batch machinery (core/detail/batch.cuh). Instantiated here for both views.
#include "wtmap/fmindex/fm_index_base.hpp"

#include <algorithm>
#include <mutex>
#include <string>

#include "wtmap/core/detail/batch.cuh"
#include "wtmap/fmindex/fm_index_view.hpp"
#include "wtmap/fmindex/general_fm_index_view.hpp"

namespace wtmap::fmindex {
namespace {

template <class View>
struct SearchOp {
  using In = PatternRef;
  using Out = SaInterval;
  View v;
  const std::uint8_t* codes;  // on the backend
  std::uint64_t codes_size;
  WTMAP_HD bool valid(const In& p) const { return p.offset + p.length <= codes_size; }
  WTMAP_HD Out operator()(const In& p) const { return v.backward_search(codes + p.offset, p.length); }
  std::string why_invalid(const In& p) const {
    return "pattern at offset " + std::to_string(p.offset) + " runs past the " + std::to_string(codes_size) + " codes";
  }
};

template <class View>
struct LocateOp {
  using In = std::uint64_t;
  using Out = std::uint64_t;
  // Rows a CPU thread takes at least (run_batch_cpu): a locate is some 1-2 us of LF steps, and a
  // gapped batch's seeds of 10^4 reads have a few 10^4 rows, which the default of 2^14 a thread
  // left to two or three threads.
  static constexpr std::uint64_t kCpuMinPerThread = 1024;
  View v;
  WTMAP_HD bool valid(In r) const { return r < v.rows; }
  WTMAP_HD Out operator()(In r) const { return v.locate(r); }
  std::string why_invalid(In r) const { return "row " + std::to_string(r) + " is not below " + std::to_string(v.rows); }
};

}  // namespace

template <class View>
FmIndexBase<View>::FmIndexBase(SampledSuffixArray&& sa, std::vector<Contig> contigs, std::vector<Fragment> fragments,
                               std::uint64_t forward_length, std::uint32_t sample_rate)
    : sa_(std::move(sa)),
      contigs_(std::move(contigs)),
      fragments_(std::move(fragments)),
      forward_length_(forward_length),
      sample_rate_(sample_rate),
      workspace_(std::make_unique<detail::QueryWorkspace>()) {}

template <class View>
FmIndexBase<View>::FmIndexBase(FmIndexBase&&) noexcept = default;
template <class View>
FmIndexBase<View>& FmIndexBase<View>::operator=(FmIndexBase&&) noexcept = default;
template <class View>
FmIndexBase<View>::~FmIndexBase() = default;

template <class View>
const Fragment& FmIndexBase<View>::fragment_at(std::uint64_t p) const {
  auto it = std::upper_bound(fragments_.begin(), fragments_.end(), p,
                             [](std::uint64_t pos, const Fragment& f) { return pos < f.text_start; });
  return *(it - 1);
}

template <class View>
Status FmIndexBase<View>::search(const std::uint8_t* codes, std::uint64_t codes_size, const PatternRef* patterns,
                                 std::size_t count, SaInterval* out) const {
  const std::uint8_t* backend_codes = codes;
  std::lock_guard<std::mutex> lock(workspace_->scratch_mutex);
  if (backend() == Backend::gpu) {
    WTMAP_TRY(workspace_->reserve_scratch(codes_size));
    WTMAP_TRY(detail::upload_staged(*workspace_, workspace_->scratch(), codes, codes_size));
    backend_codes = reinterpret_cast<const std::uint8_t*>(workspace_->scratch());
  }
  return detail::run_batch(backend(), SearchOp<View>{view_, backend_codes, codes_size}, patterns, out, count,
                           *workspace_, "search");
}

template <class View>
void FmIndexBase<View>::release_workspace() const {
  std::scoped_lock lock(workspace_->scratch_mutex, workspace_->mutex);
  workspace_->release();
}

template <class View>
Status FmIndexBase<View>::locate(const std::uint64_t* rows, std::uint64_t* text_positions, std::size_t count) const {
  if (!can_locate()) {
    return invalid_argument("locate: the index was loaded for search only, without its sampled suffix array");
  }
  WTMAP_TRY(detail::run_batch(backend(), LocateOp<View>{view_}, rows, text_positions, count, *workspace_, "locate"));
  // A walk that found no sample within s steps: the index's marks, samples or BWT disagree.
  const std::uint64_t* failed = std::find(text_positions, text_positions + count, SampledSuffixArrayView::kNotLocated);
  if (failed != text_positions + count) {
    return corrupt_data("corrupt index: row " + std::to_string(rows[failed - text_positions]) +
                        " meets no SA sample within " + std::to_string(sample_rate_) + " LF steps");
  }
  return {};
}

template class FmIndexBase<FmIndexView>;
template class FmIndexBase<GeneralFmIndexView>;

}  // namespace wtmap::fmindex
