// The gapped mapper's reference (see mapper_reference.hpp).
#include "mapper_reference.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "wtmap/core/detail/parallel.hpp"

namespace wtmap::aligner::gapped {

namespace {

// Bases a CPU thread decodes at least (create()): a human genome's 3 G bases took seconds on one.
constexpr std::uint64_t kBasesPerThread = std::uint64_t{1} << 20;

}  // namespace

Result<MapperReference> MapperReference::create(const fmindex::FmIndex& index) {
  if (index.packed_text().view().empty())
    return Status(StatusCode::invalid_argument,
                  "gapped alignment needs the index's packed text (an index of format version 3, loaded whole); "
                  "rebuild the index with `wtmap index`");
  Result<std::vector<std::uint64_t>> words = index.packed_text().words();
  if (!words.ok()) return words.status();
  MapperReference ref;
  ref.forward_length_ = index.forward_length();
  ref.fragments_ = index.fragments();
  std::uint64_t total = 0;
  for (const fmindex::Contig& c : index.contigs()) {
    ref.starts_.push_back(total);
    ref.lengths_.push_back(c.length);
    total += c.length;
  }
  for (const fmindex::Fragment& f : ref.fragments_) {
    if (f.contig >= ref.lengths_.size() || f.contig_offset > ref.lengths_[f.contig] ||
        f.length > ref.lengths_[f.contig] - f.contig_offset || f.text_start + f.length > ref.forward_length_)
      return corrupt_data("index fragment outside its contig or the text");
  }
  ref.codes_ = wtmap::detail::allocate_host_page_bytes(std::max<std::uint64_t>(total, 1));
  if (!ref.codes_)
    return Status(StatusCode::out_of_memory, "no host memory for the reference's " + std::to_string(total) + " bases");
  // Every base not in a fragment is an ambiguity code: N. Written by the CPU threads (which also
  // spreads the first touch of the pages).
  std::uint8_t* codes = ref.codes_.get();
  wtmap::detail::parallel_for_ranges(total, [&](std::uint64_t begin, std::uint64_t end) {
    std::fill(codes + begin, codes + end, std::uint8_t{4});
  }, kBasesPerThread);
  // Then the fragments' bases, from the 2-bit text, over every fragment's bases as one range.
  std::vector<std::uint64_t> before(ref.fragments_.size() + 1, 0);  // fragment bases before fragment k
  for (std::size_t k = 0; k < ref.fragments_.size(); ++k) before[k + 1] = before[k] + ref.fragments_[k].length;
  const std::uint64_t* w = words->data();
  wtmap::detail::parallel_for_ranges(before.back(), [&](std::uint64_t begin, std::uint64_t end) {
    auto k = static_cast<std::size_t>(std::upper_bound(before.begin(), before.end(), begin) - before.begin() - 1);
    for (std::uint64_t at = begin; at < end; ++k) {
      const fmindex::Fragment& f = ref.fragments_[k];
      const std::uint64_t from = at - before[k], to = std::min(end, before[k + 1]) - before[k];
      std::uint8_t* out = codes + ref.starts_[f.contig] + f.contig_offset;
      for (std::uint64_t i = from; i < to; ++i) {
        const std::uint64_t p = f.text_start + i;
        out[i] = static_cast<std::uint8_t>(w[p / 32] >> (2 * (p % 32)) & 3);
      }
      at = before[k] + to;
    }
  }, kBasesPerThread);
  ref.long_runs_ = long_ambiguity_runs(ref.fragments_, ref.lengths_);
  return ref;
}

// The contigs' ambiguity runs of kLongAmbiguityRun bases or more: the gaps between their
// fragments (the bases no fragment holds are N), found from the fragment table alone.
std::vector<std::vector<std::pair<std::uint64_t, std::uint64_t>>> MapperReference::long_ambiguity_runs(
    const std::vector<fmindex::Fragment>& fragments, const std::vector<std::uint64_t>& lengths) {
  std::vector<const fmindex::Fragment*> sorted;
  for (const fmindex::Fragment& f : fragments) sorted.push_back(&f);
  std::sort(sorted.begin(), sorted.end(), [](const fmindex::Fragment* a, const fmindex::Fragment* b) {
    return std::make_pair(a->contig, a->contig_offset) < std::make_pair(b->contig, b->contig_offset);
  });
  std::vector<std::vector<std::pair<std::uint64_t, std::uint64_t>>> runs(lengths.size());
  std::size_t next = 0;
  for (std::uint32_t k = 0; k < lengths.size(); ++k) {
    std::uint64_t covered = 0;  // every base before it is in a fragment or in a run found
    const auto gap_to = [&](std::uint64_t at) {
      if (at >= covered + kLongAmbiguityRun) runs[k].push_back({covered, at});
      covered = std::max(covered, at);
    };
    for (; next < sorted.size() && sorted[next]->contig == k; ++next) {
      gap_to(sorted[next]->contig_offset);
      covered = std::max(covered, sorted[next]->contig_offset + sorted[next]->length);
    }
    gap_to(lengths[k]);
  }
  return runs;
}

bool MapperReference::long_run_between(std::uint32_t contig, bool reverse, std::int64_t a, std::int64_t b) const {
  if (a >= b) return false;
  const auto length = static_cast<std::int64_t>(lengths_[contig]);
  const auto lo = static_cast<std::uint64_t>(reverse ? length - b : a), hi = static_cast<std::uint64_t>(reverse ? length - a : b);
  const auto& runs = long_runs_[contig];
  // The first run ending after lo; it holds a base of [lo, hi) if it starts before hi.
  auto it = std::upper_bound(runs.begin(), runs.end(), lo,
                             [](std::uint64_t p, const std::pair<std::uint64_t, std::uint64_t>& r) { return p < r.second; });
  return it != runs.end() && it->first < hi;
}

StrandPosition MapperReference::place(std::uint64_t t, std::uint32_t length) const {
  // T = F # rc(F) $: T[q] for q > m is the complement of F[2m - q], so T[t, t + length) read
  // backwards is F[2m - t - length + 1, 2m - t + 1).
  const bool reverse = t > forward_length_;
  const std::uint64_t f = reverse ? 2 * forward_length_ - t - length + 1 : t;
  auto it = std::upper_bound(fragments_.begin(), fragments_.end(), f,
                             [](std::uint64_t p, const fmindex::Fragment& g) { return p < g.text_start; });
  const fmindex::Fragment& g = *(it - 1);
  const std::uint64_t p = g.contig_offset + (f - g.text_start);
  StrandPosition s;
  s.contig = g.contig;
  s.reverse = reverse;
  s.position = static_cast<std::int64_t>(reverse ? lengths_[g.contig] - p - length : p);
  return s;
}

void MapperReference::run_around(std::uint32_t contig, bool reverse, std::int64_t i, std::int64_t& run_lo,
                                 std::int64_t& run_hi) const {
  const auto length = static_cast<std::int64_t>(lengths_[contig]);
  const auto reach = static_cast<std::int64_t>(kLongAmbiguityRun);
  run_lo = i;
  run_hi = i + 1;
  while (run_lo > 0 && i - run_lo < reach && base(contig, reverse, run_lo - 1) == 4) --run_lo;
  while (run_hi < length && run_hi - i < reach && base(contig, reverse, run_hi) == 4) ++run_hi;
}

// The strand's positions [lo, hi) are forward codes [lo, hi) or, reversed, [length - hi, length - lo):
// the nearest ambiguity code found by memchr / memrchr (a window's few hundred bases in a few
// vector steps, where a base at a time took 2 % of a GPU run's CPU time).
std::int64_t MapperReference::first_ambiguous(std::uint32_t contig, bool reverse, std::int64_t lo, std::int64_t hi) const {
  if (lo >= hi) return hi;
  const auto length = static_cast<std::int64_t>(lengths_[contig]);
  const std::uint8_t* c = forward_codes(contig);
  const auto count = static_cast<std::size_t>(hi - lo);
  if (!reverse) {
    const void* at = std::memchr(c + lo, 4, count);
    return at == nullptr ? hi : static_cast<const std::uint8_t*>(at) - c;
  }
  const void* at = memrchr(c + (length - hi), 4, count);
  return at == nullptr ? hi : length - 1 - (static_cast<const std::uint8_t*>(at) - c);
}

std::int64_t MapperReference::last_ambiguous(std::uint32_t contig, bool reverse, std::int64_t lo, std::int64_t hi) const {
  if (lo >= hi) return lo - 1;
  const auto length = static_cast<std::int64_t>(lengths_[contig]);
  const std::uint8_t* c = forward_codes(contig);
  const auto count = static_cast<std::size_t>(hi - lo);
  if (!reverse) {
    const void* at = memrchr(c + lo, 4, count);
    return at == nullptr ? lo - 1 : static_cast<const std::uint8_t*>(at) - c;
  }
  const void* at = std::memchr(c + (length - hi), 4, count);
  return at == nullptr ? lo - 1 : length - 1 - (static_cast<const std::uint8_t*>(at) - c);
}

void MapperReference::clip_window(std::uint32_t contig, bool reverse, std::int64_t keep_lo, std::int64_t keep_hi,
                                  std::int64_t& lo, std::int64_t& hi) const {
  const auto length = static_cast<std::int64_t>(lengths_[contig]);
  const auto longest = static_cast<std::int64_t>(kLongAmbiguityRun);
  lo = std::max<std::int64_t>(lo, 0);
  hi = std::min<std::int64_t>(hi, length);
  // Down from keep_lo: the first long run ends the window; a short one is aligned across.
  for (std::int64_t i = last_ambiguous(contig, reverse, lo, keep_lo); i >= lo;) {
    std::int64_t a, b;
    run_around(contig, reverse, i, a, b);
    if (b - a >= longest) {
      lo = b;
      break;
    }
    i = last_ambiguous(contig, reverse, lo, a);
  }
  for (std::int64_t i = first_ambiguous(contig, reverse, keep_hi, hi); i < hi;) {
    std::int64_t a, b;
    run_around(contig, reverse, i, a, b);
    if (b - a >= longest) {
      hi = a;
      break;
    }
    i = first_ambiguous(contig, reverse, b, hi);
  }
}

}  // namespace wtmap::aligner::gapped
