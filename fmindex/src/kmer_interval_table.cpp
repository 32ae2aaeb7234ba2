// KmerIntervalTable: every k-mer searched through the index, a batch of 2^20 at a time, the
// intervals written in place in the table on the index's backend.
#include "wtmap/fmindex/kmer_interval_table.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace wtmap::fmindex {

std::uint32_t KmerIntervalTable::default_length(std::uint64_t rows) {
  std::uint32_t k = 0;
  while (k < 12 && (std::uint64_t{sizeof(SaInterval)} << (2 * (k + 1))) <= rows / 8) ++k;
  return k;
}

Result<KmerIntervalTable> KmerIntervalTable::build(const FmIndexBase<FmIndexView>& index, std::uint32_t k) {
  if (k == 0 || k > kMaxLength) {
    return invalid_argument("k-mer table length " + std::to_string(k) + " is not in 1.." + std::to_string(kMaxLength));
  }
  const std::uint64_t kmers = std::uint64_t{1} << (2 * k);
  KmerIntervalTable table;
  auto intervals = Buffer::allocate(index.backend(), kmers * sizeof(SaInterval), "k-mer interval table");
  if (!intervals.ok()) return intervals.status();
  table.intervals_ = std::move(intervals.value());
  table.length_ = k;

  const std::uint64_t batch = std::min<std::uint64_t>(kmers, std::uint64_t{1} << 20);
  std::vector<std::uint8_t> codes(batch * k);
  std::vector<PatternRef> patterns(batch);
  std::vector<SaInterval> found(batch);
  for (std::uint64_t i = 0; i < batch; ++i) patterns[i] = {i * k, k};
  for (std::uint64_t first = 0; first < kmers; first += batch) {
    for (std::uint64_t i = 0; i < batch; ++i) {
      std::uint64_t key = first + i;
      for (std::uint32_t j = k; j-- > 0; key >>= 2) codes[i * k + j] = static_cast<std::uint8_t>(key & 3);
    }
    WTMAP_TRY(index.search(codes.data(), codes.size(), patterns.data(), batch, found.data()));
    WTMAP_TRY(table.intervals_.copy_from_host(first * sizeof(SaInterval), found.data(), batch * sizeof(SaInterval)));
  }
  return table;
}

}  // namespace wtmap::fmindex
