// KmerIntervalTable: built level by level in place (extend_level), each level through core's
// for_each_index: a kernel launch on the GPU, a parallel loop on the CPU.
#include "wtmap/fmindex/kmer_interval_table.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "wtmap/core/detail/batch.cuh"

namespace wtmap::fmindex {

std::uint32_t KmerIntervalTable::default_length(std::uint64_t rows) {
  std::uint32_t k = 0;
  while (k < 12 && (std::uint64_t{sizeof(SaInterval)} << (2 * (k + 1))) <= rows / 8) ++k;
  return k;
}

namespace {

// One level of the table, in place: the j-mer `key`'s interval, at table[key], extended by each base
// c to the (j + 1)-mer c key at table[c * 4^j + key] (c = 0 last: it is key's own place). An empty
// interval ends backward search, so it passes to the longer k-mers as it is, as the search would
// return it. Each j-mer writes only its own four places, so all of a level's j-mers may run at
// once. From table[0] = all rows, levels 0..stored-1 take 4/3 * 4^stored extends in all. The
// independent j-mers of a level overlap their memory accesses, where a depth-first walk's
// depended on each other: on two cores E. coli's k = 13 takes 0.31-0.34 s (the walk 1.4-3.7 s).
WTMAP_HD void extend_level(const FmIndexView& index, SaInterval* table, std::uint32_t j, std::uint64_t key) {
  const SaInterval iv = table[key];
  for (unsigned c = 4; c-- > 0;) table[(std::uint64_t{c} << (2 * j)) + key] = iv.empty() ? iv : index.extend(iv, c);
}

struct ExtendLevel {
  FmIndexView index;
  SaInterval* table;
  std::uint32_t j;
  WTMAP_HD void operator()(std::uint64_t key) const { extend_level(index, table, j, key); }
};

}  // namespace

Result<KmerIntervalTable> KmerIntervalTable::build(const FmIndexBase<FmIndexView>& index, std::uint32_t k,
                                                   std::uint32_t stored) {
  if (k == 0 || k > kMaxLength) {
    return invalid_argument("k-mer table length " + std::to_string(k) + " is not in 1.." + std::to_string(kMaxLength));
  }
  if (stored == 0 || stored > k) {
    return invalid_argument("k-mer table levels " + std::to_string(stored) + " are not in 1.." + std::to_string(k));
  }
  const std::uint64_t kmers = std::uint64_t{1} << (2 * stored);
  KmerIntervalTable table;
  auto intervals = Buffer::allocate(index.backend(), kmers * sizeof(SaInterval), "k-mer interval table");
  if (!intervals.ok()) return intervals.status();
  table.intervals_ = std::move(intervals.value());
  table.length_ = k;
  table.stored_ = stored;

  auto* out = reinterpret_cast<SaInterval*>(table.intervals_.data());
  const FmIndexView view = index.view();
  const SaInterval all = view.all();
  WTMAP_TRY(table.intervals_.copy_from_host(0, &all, sizeof all));
  for (std::uint32_t j = 0; j < stored; ++j) {
    WTMAP_TRY(wtmap::detail::for_each_index(index.backend(), std::uint64_t{1} << (2 * j), ExtendLevel{view, out, j}, 1 << 12));
  }
  return std::move(table);
}

}  // namespace wtmap::fmindex
