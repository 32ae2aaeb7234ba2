// wtmap aligner (gapped): the reference as the gapped mapper reads it -- every contig's bases in
// contig coordinates (ambiguity runs, which the index keeps as one separator each, come back as
// code 4 = N), read on either strand ("strand coordinates": position i of the reverse strand is
// the complement of contig base L - 1 - i), and the translation of an index text position into
// (contig, strand, strand position).
//
// Space: one byte per contig base on the host (from the index's packed text) plus the fragment
// table. Time: create() O(bases / threads + fragments log fragments); base() O(1); copy_bases()
// O(bases); place() O(log fragments); long_run_between() O(log runs).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "wtmap/core/detail/host_pages.hpp"
#include "wtmap/core/status.hpp"
#include "wtmap/fmindex/fm_index.hpp"

namespace wtmap::aligner::gapped {

// Ambiguity runs at least this long end a reference window, as contig ends do (assembly gaps);
// shorter ones are aligned across, their bases scoring as mismatches (issue 25: "say < 10").
constexpr std::uint64_t kLongAmbiguityRun = 10;

// The complement of code 0..3 (A<->T, C<->G); 4 (N) stays.
inline std::uint8_t complement_code(std::uint8_t b) { return b < 4 ? static_cast<std::uint8_t>(3 - b) : b; }
// complement_code of each byte of a word of codes 0..4: those with bit 2 clear (0..3) flip their
// two low bits (3 - b = b ^ 3); no byte carries into the next.
inline std::uint64_t complement_codes(std::uint64_t w) {
  constexpr std::uint64_t kLowBits = 0x0101010101010101ull;
  return w ^ ((kLowBits & ~(w >> 2)) * 3);
}

// Where a match lies: strand coordinates of its first base.
struct StrandPosition {
  std::uint32_t contig = 0;
  bool reverse = false;
  std::int64_t position = 0;
};

class MapperReference {
 public:
  // The contigs from the index's packed text; failed_precondition for an index without it.
  static Result<MapperReference> create(const fmindex::FmIndex& index);

  std::uint64_t contig_length(std::uint32_t contig) const { return lengths_[contig]; }
  // Contig k's codes on the forward strand, contig_length(k) of them.
  const std::uint8_t* forward_codes(std::uint32_t contig) const { return codes_.get() + starts_[contig]; }
  // Code 0..4 of strand position i (0 <= i < contig length).
  std::uint8_t base(std::uint32_t contig, bool reverse, std::int64_t i) const {
    const std::uint8_t* c = forward_codes(contig);
    return reverse ? complement_code(c[lengths_[contig] - 1 - static_cast<std::uint64_t>(i)]) : c[i];
  }
  // Codes of strand positions [lo, hi) into out[0, hi - lo) (0 <= lo <= hi <= contig length): a
  // copy on the forward strand, the reverse complement read backwards on the reverse one.
  void copy_bases(std::uint32_t contig, bool reverse, std::int64_t lo, std::int64_t hi, std::uint8_t* out) const {
    const std::uint8_t* c = forward_codes(contig);
    if (!reverse) {
      std::copy(c + lo, c + hi, out);
      return;
    }
    // Strand positions [lo, hi) are forward bases [L - hi, L - lo) read backwards: eight at a time
    // (a byte swap reverses a word), then one by one.
    static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the word loop reverses bytes by a swap");
    const std::uint8_t* from = c + lengths_[contig] - hi;
    auto n = static_cast<std::uint64_t>(hi - lo);
    for (; n >= 8; n -= 8, out += 8) {
      std::uint64_t w = 0;
      std::memcpy(&w, from + n - 8, 8);
      w = complement_codes(__builtin_bswap64(w));
      std::memcpy(out, &w, 8);
    }
    while (n > 0) *out++ = complement_code(from[--n]);
  }
  // The match of `length` bases at index text position t (inside one fragment of T).
  StrandPosition place(std::uint64_t t, std::uint32_t length) const;
  // Whether strand bases [a, b) hold a base of an ambiguity run of kLongAmbiguityRun or more: no
  // chain spans one (issue 25: long runs stay separators).
  bool long_run_between(std::uint32_t contig, bool reverse, std::int64_t a, std::int64_t b) const;
  // The window [lo, hi) shrunk to the contig and, around the bases [keep_lo, keep_hi) (no N), to
  // end before any ambiguity run of kLongAmbiguityRun bases or more.
  void clip_window(std::uint32_t contig, bool reverse, std::int64_t keep_lo, std::int64_t keep_hi, std::int64_t& lo,
                   std::int64_t& hi) const;
  // The least strand position in [lo, hi) holding an ambiguity code (hi if none), and the greatest
  // (lo - 1 if none).
  std::int64_t first_ambiguous(std::uint32_t contig, bool reverse, std::int64_t lo, std::int64_t hi) const;
  std::int64_t last_ambiguous(std::uint32_t contig, bool reverse, std::int64_t lo, std::int64_t hi) const;

 private:
  static std::vector<std::vector<std::pair<std::uint64_t, std::uint64_t>>> long_ambiguity_runs(
      const std::vector<fmindex::Fragment>& fragments, const std::vector<std::uint64_t>& lengths);
  // The ambiguity run holding strand position i (code 4): [run_lo, run_hi), looked at no further
  // than kLongAmbiguityRun bases either side.
  void run_around(std::uint32_t contig, bool reverse, std::int64_t i, std::int64_t& run_lo, std::int64_t& run_hi) const;

  wtmap::detail::HostPageBytes codes_;  // the contigs one after another (read at random: huge pages)
  std::vector<std::uint64_t> starts_;   // contig k's first code
  std::vector<std::uint64_t> lengths_;  // contig lengths
  std::vector<std::vector<std::pair<std::uint64_t, std::uint64_t>>> long_runs_;  // per contig, forward, sorted
  std::vector<fmindex::Fragment> fragments_;
  std::uint64_t forward_length_ = 0;
};

}  // namespace wtmap::aligner::gapped
