// wtmap fmindex: the owning table of the SA intervals of all 4^k DNA k-mers of an FmIndex, on the
// index's backend (see kmer_interval_table_view.hpp for the lookup and the source).
//
// Space: 16 * 4^stored bytes, for the stored levels (k = 10: 16 MiB; k = 12: 256 MiB; k = 15:
// 16 GiB). Built through the index itself, level by level: 4/3 * 4^stored steps.
// Never saved, since it follows from the index. A search of at least k bases then costs one
// lookup plus m - k steps (plus k - stored for a lookup of the whole k-mer).
#pragma once

#include <cstdint>

#include "wtmap/core/buffer.hpp"
#include "wtmap/core/status.hpp"
#include "wtmap/fmindex/fm_index_base.hpp"
#include "wtmap/fmindex/fm_index_view.hpp"
#include "wtmap/fmindex/kmer_interval_table_view.hpp"

namespace wtmap::fmindex {

class KmerIntervalTable {
 public:
  static constexpr std::uint32_t kMaxLength = 15;  // k-mers looked up; 16 GiB when all levels are held
  // The levels the CPU backend holds at most (1 GiB, built in 0.3-0.6 s on two cores).
  static constexpr std::uint32_t kMaxStoredOnCpu = 13;

  // The k for an index of `rows` rows: the largest k <= 12 whose table takes at most rows / 8
  // bytes (a fifth of the index or less): 8 for E. coli, 10 for 100 Mbp, 12 from 1.1 Gbp on
  // (rows = twice the bases); 0 (no table) below 512 rows.
  static std::uint32_t default_length(std::uint64_t rows);

  // The intervals of every k-mer (1 <= k <= kMaxLength) as `index` searches them, holding the
  // last `stored` levels (1 <= stored <= k; the view's kmer_interval extends by the rest).
  static Result<KmerIntervalTable> build(const FmIndexBase<FmIndexView>& index, std::uint32_t k,
                                         std::uint32_t stored);

  KmerIntervalTable() = default;  // no table: length 0

  KmerIntervalTableView view() const {
    return {reinterpret_cast<const SaInterval*>(intervals_.data()), length_, stored_};
  }
  std::uint32_t length() const { return length_; }
  std::uint32_t stored() const { return stored_; }
  std::size_t size_in_bytes() const { return intervals_.size(); }

 private:
  Buffer intervals_;
  std::uint32_t length_ = 0, stored_ = 0;
};

}  // namespace wtmap::fmindex
