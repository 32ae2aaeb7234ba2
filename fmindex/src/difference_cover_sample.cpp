#include "wtmap/fmindex/difference_cover_sample.hpp"

#include <algorithm>
#include <mutex>
#include <new>
#include <string>

#include "gpu_sample_ranker.hpp"
#include "keyed_suffix_sort.hpp"

namespace wtmap::fmindex {
namespace {

using detail::KeyedSuffix;

struct Group {  // sample suffixes order[begin, end), tied on the symbols compared so far
  std::uint64_t begin, end;
};

// Sorts the sample suffixes' ranks by refining groups of tied suffixes (Larsson and Sadakane's
// prefix doubling, restricted to the sample): order holds the sample positions, rank (by
// sample_index) the first row of each one's group, the final row once it is alone in it.
class SampleRanker {
 public:
  SampleRanker(const PackedSymbolsView& text, const DifferenceCoverView& dc, const std::vector<std::uint32_t>& residues,
               std::vector<std::uint64_t>& ranks)
      : text_(text), dc_(dc), residues_(residues), ranks_(ranks) {}

  Status run();

 private:
  struct TiedGroups {  // what a pass leaves tied, from every thread
    std::vector<Group> groups;
    std::mutex mutex;
  };
  template <class KeyOf>
  Status refine(KeyOf key_of);
  void split(const Group& g, const KeyedSuffix* sorted, TiedGroups& tied);
  void split_in_pieces(const Group& g, const KeyedSuffix* sorted, TiedGroups& tied);

  const PackedSymbolsView& text_;
  const DifferenceCoverView& dc_;
  const std::vector<std::uint32_t>& residues_;  // D, ascending
  std::vector<std::uint64_t>& ranks_;
  std::vector<std::uint64_t> order_;
  std::vector<Group> groups_;  // the groups of more than one suffix
  // refine()'s keys and the large groups' radix scratch, kept from pass to pass (the first holds
  // every sample suffix, some 120 M for a 1 Gbp genome; the later ones the few still tied).
  detail::KeyedSuffixes keyed_, scratch_;
};

Status SampleRanker::run() {
  const std::uint64_t n = text_.n, v = dc_.period();
  const std::uint64_t d = residues_.size(), count = detail::sample_suffixes_in_text(n, v, residues_);
  try {
    order_.resize(count);
  } catch (const std::bad_alloc&) {
    return Status{StatusCode::out_of_memory, "out of host memory for the difference-cover sample"};
  }
  wtmap::detail::parallel_for_ranges(count, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t k = begin; k < end; ++k) order_[k] = k / d * v + residues_[k % d];
  });
  if (order_.empty()) return {};
  groups_.push_back({0, order_.size()});
  // The first v symbols (at least), a window of K at a time, then doubling: tied on `known`
  // symbols, two sample suffixes order as the sample suffixes `step` further on (step <= known, a
  // multiple of v, so still in the sample and inside the text: a tie never holds $).
  std::uint64_t known = 0;
  while (!groups_.empty() && known < v) {
    WTMAP_TRY(refine([&](std::uint64_t p) { return text_.window(p + known); }));
    known += text_.per_window;
  }
  while (!groups_.empty()) {
    if (known >= n) return Status{StatusCode::invalid_argument, "difference-cover sample: suffixes tied past the text's end"};
    const std::uint64_t step = known / v * v;
    WTMAP_TRY(refine([&](std::uint64_t p) { return ranks_[dc_.sample_index(p + step)]; }));
    known += step;
  }
  return {};
}

// One pass: every tied group sorted by key_of(position); the keys are all read before any rank
// changes, so each pass sees the ranks of the previous one.
template <class KeyOf>
Status SampleRanker::refine(KeyOf key_of) {
  std::vector<std::uint64_t> first(groups_.size() + 1, 0);  // each group's place in `keyed`
  for (std::size_t g = 0; g < groups_.size(); ++g) first[g + 1] = first[g] + (groups_[g].end - groups_[g].begin);
  detail::KeyedSuffixes& keyed = keyed_;
  try {
    keyed.resize(first.back());
  } catch (const std::bad_alloc&) {
    return Status{StatusCode::out_of_memory, "out of host memory for the difference-cover sample"};
  }
  // Spread over the items, not the groups: the first pass has one group of them all.
  wtmap::detail::parallel_for_ranges(first.back(), [&](std::uint64_t begin, std::uint64_t end) {
    std::uint64_t g = static_cast<std::uint64_t>(std::upper_bound(first.begin(), first.end(), begin) - first.begin()) - 1;
    for (std::uint64_t k = begin; k < end; ++k) {
      while (k >= first[g + 1]) ++g;
      const std::uint64_t p = order_[groups_[g].begin + (k - first[g])];
      keyed[k] = {key_of(p), p};
    }
  });
  // Large groups one at a time on all threads (the first pass has one of every sample suffix);
  // the others each on one thread.
  constexpr std::uint64_t kLarge = std::uint64_t{1} << 20;
  TiedGroups tied;
  try {
    for (std::size_t g = 0; g < groups_.size(); ++g) {
      const std::uint64_t size = first[g + 1] - first[g];
      if (size < kLarge) continue;
      detail::sort_by_key(keyed.data() + first[g], size, scratch_, wtmap::detail::cpu_threads());
      split_in_pieces(groups_[g], keyed.data() + first[g], tied);
    }
  } catch (const std::bad_alloc&) {
    return Status{StatusCode::out_of_memory, "out of host memory for the difference-cover sample"};
  }
  detail::for_each_dynamic(groups_.size(), [&](std::uint64_t g) {
    const std::uint64_t size = first[g + 1] - first[g];
    if (size >= kLarge) return;
    detail::KeyedSuffixes own_scratch;
    detail::sort_by_key(keyed.data() + first[g], size, own_scratch, 1);
    split(groups_[g], keyed.data() + first[g], tied);
  });
  groups_ = std::move(tied.groups);
  return {};
}

// Writes group g back in key order, its suffixes ranked by the first row of their new group.
void SampleRanker::split(const Group& g, const KeyedSuffix* sorted, TiedGroups& tied) {
  std::vector<Group> mine;
  detail::for_each_run(sorted, g.end - g.begin, [&](std::uint64_t run, std::uint64_t run_end) {
    for (std::uint64_t k = run; k < run_end; ++k) {
      order_[g.begin + k] = sorted[k].position;
      ranks_[dc_.sample_index(sorted[k].position)] = g.begin + run;
    }
    if (run_end - run > 1) mine.push_back({g.begin + run, g.begin + run_end});
  });
  if (mine.empty()) return;
  std::lock_guard<std::mutex> lock(tied.mutex);
  tied.groups.insert(tied.groups.end(), mine.begin(), mine.end());
}

// split() of a large group on every CPU thread, in pieces that each start where a run of equal
// keys starts (one thread wrote the first pass's 120 M suffixes of a 1 Gbp genome).
void SampleRanker::split_in_pieces(const Group& g, const KeyedSuffix* sorted, TiedGroups& tied) {
  const std::uint64_t size = g.end - g.begin, pieces = wtmap::detail::cpu_threads();
  std::vector<std::uint64_t> cut(pieces + 1, size);
  cut[0] = 0;
  for (std::uint64_t c = 1; c < pieces; ++c) {
    std::uint64_t at = std::max(cut[c - 1], size * c / pieces);
    while (at > 0 && at < size && sorted[at].key == sorted[at - 1].key) ++at;
    cut[c] = at;
  }
  wtmap::detail::parallel_for_ranges(pieces, [&](std::uint64_t first, std::uint64_t last) {
    for (std::uint64_t c = first; c < last; ++c) {
      if (cut[c] < cut[c + 1]) split({g.begin + cut[c], g.begin + cut[c + 1]}, sorted + cut[c], tied);
    }
  }, 1);
}

}  // namespace

std::uint64_t DifferenceCoverSample::num_slots(std::uint64_t n, std::uint32_t period) {
  auto cover = DifferenceCoverSample::cover(period);
  if (!cover.ok()) return 0;
  return (n + period - 1) / period * cover->residues_.size();
}

Result<DifferenceCoverSample> DifferenceCoverSample::cover(std::uint32_t period) {
  if (period == 0 || period > (1u << 20) || (period & (period - 1)) != 0) {
    return invalid_argument("the difference-cover period must be a power of 2 from 1 to 2^20, not " + std::to_string(period));
  }
  std::uint32_t log2 = 0;
  while ((1u << log2) < period) ++log2;
  const std::uint32_t k = 1u << ((log2 + 1) / 2);
  DifferenceCoverSample dc;
  for (std::uint32_t r = 0; r < period; ++r) {
    if (r < k || r % k == 0) dc.residues_.push_back(r);
  }
  dc.slot_.assign(period, DifferenceCoverView::kNotInCover);
  for (std::uint32_t s = 0; s < dc.residues_.size(); ++s) dc.slot_[dc.residues_[s]] = s;
  dc.anchor_.assign(period, DifferenceCoverView::kNotInCover);
  for (const std::uint32_t a : dc.residues_) {
    for (const std::uint32_t b : dc.residues_) {
      std::uint32_t& anchor = dc.anchor_[(b - a) & (period - 1)];  // a + d = b
      if (anchor == DifferenceCoverView::kNotInCover) anchor = a;
    }
  }
  if (std::count(dc.anchor_.begin(), dc.anchor_.end(), DifferenceCoverView::kNotInCover) != 0) {
    return Status{StatusCode::invalid_argument, "not a difference cover of period " + std::to_string(period)};
  }
  dc.view_ = {dc.slot_.data(), dc.anchor_.data(), nullptr, log2, static_cast<std::uint32_t>(dc.residues_.size())};
  return dc;
}

Result<DifferenceCoverSample> DifferenceCoverSample::build(const PackedSymbolsView& text, std::uint32_t period,
                                                           Backend backend) {
  auto dc = cover(period);
  if (!dc.ok()) return dc.status();
  try {
    dc->ranks_.assign(std::max<std::uint64_t>(1, num_slots(text.n, period)), 0);
  } catch (const std::bad_alloc&) {
    return Status{StatusCode::out_of_memory, "out of host memory for the difference-cover sample"};
  }
  dc->view_.ranks = dc->ranks_.data();
  if (backend == Backend::gpu) {
    WTMAP_TRY(detail::rank_sample_on_gpu(text, dc->view_, dc->residues_, dc->ranks_));
  } else {
    WTMAP_TRY(dc->rank_sample(text));
  }
  return dc;
}

Status DifferenceCoverSample::rank_sample(const PackedSymbolsView& text) {
  SampleRanker ranker(text, view_, residues_, ranks_);
  return ranker.run();
}

}  // namespace wtmap::fmindex
