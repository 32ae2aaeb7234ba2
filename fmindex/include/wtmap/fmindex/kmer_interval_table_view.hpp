// wtmap fmindex: the SA interval of every DNA k-mer, looked up in one load instead of searched in
// k backward-search steps -- the first k steps of a search, which are also its dearest: there the
// interval is wide, so each step ranks two blocks rather than one. Bowtie's "ftab" (Langmead et
// al., "Ultrafast and memory-efficient alignment of short DNA sequences to the human genome",
// Genome Biology 2009). The owner is KmerIntervalTable (kmer_interval_table.hpp).
#pragma once

#include <cstdint>

#include "wtmap/core/config.hpp"
#include "wtmap/fmindex/sa_interval.hpp"

namespace wtmap::fmindex {

// The table answers for k-mers (`length`) but may hold fewer levels (`stored`): the intervals of
// the k-mers' last `stored` bases, which FmIndexView::kmer_interval extends by the other
// k - stored bases, a backward step each. So what a search that looks up k-mers finds depends on
// k alone, while the memory it costs (16 * 4^stored bytes) can follow the backend: the GPU holds
// k = 15 (16 GiB), the CPU 13 levels and steps the rest.
struct KmerIntervalTableView {
  // 4^stored intervals, indexed by the `stored`-mer read as a base-4 number, first base most
  // significant (so in lexicographic order); each is exactly what backward search returns.
  const SaInterval* intervals = nullptr;
  std::uint32_t length = 0;  // k; 0 when there is no table
  std::uint32_t stored = 0;  // levels held, 1..length (0 when there is no table)

  // The interval of codes[0, stored), or false (iv untouched) when one of them is not a base.
  WTMAP_HD bool find(const std::uint8_t* codes, SaInterval& iv) const {
    std::uint64_t key = 0;
    for (std::uint32_t j = 0; j < stored; ++j) {
      if (codes[j] > 3) return false;
      key = key << 2 | codes[j];
    }
    iv = intervals[key];
    return true;
  }
};

}  // namespace wtmap::fmindex
