// wtmap aligner (gapped, device only): the unbanded local DP of extend.hpp's local_rows with a warp
// of 32 threads on one alignment, for mate rescue's windows: a batch holds a few hundred of them,
// too few for one thread each to fill the GPU, and each a chain of some 10^5 dependent cells.
//
// The rows are local_rows' own, cell for cell. A local row's M(I, J) = H(I-1, J-1) + s and
// E(I+1, J) come from the row above alone; only F runs along the row, and F(I, J+1) =
// max(F(I, J) - e_ins, M(I, J) - o_ins - e_ins, 0) unrolls into a prefix maximum:
//   F(I, J+1) = max(0, max_{K <= J} (M(I, K) - o_ins - e_ins - (J - K) e_ins)),
// which the warp takes 32 columns at a time (a scan of M(I, K) + K e_ins over the lanes, carried
// from one group of columns to the next). The row's best cell (the largest column on ties) is a
// warp reduction. Unbanded only (sc.band >= both lengths): with a band the rows differ.
//
// Space: the caller's DpRows<1> (extend_scratch_bytes(qlen)); lane L takes columns 32 G + L + 1.
// Time: tlen * ceil(qlen / 32) steps of a warp, each some 5 shuffles of scan and, per row, 5 of
// reduction. Every lane must call it (it uses __shfl_sync on the full warp); every lane returns
// with the same visitor calls made.
#pragma once

#include <cstdint>

#include "wtmap/aligner/gapped/extend.hpp"

namespace wtmap::aligner::gapped {

constexpr unsigned kFullWarp = 0xffffffffu;

// Whether local_rows over these lengths is unbanded (the only case local_rows_warp computes).
WTMAP_HD bool local_unbanded(std::uint32_t qlen, std::uint32_t tlen, const Scoring& sc) {
  const std::uint32_t longest = qlen > tlen ? qlen : tlen;
  return sc.band >= 0 && static_cast<std::uint32_t>(sc.band) >= longest;
}

// local_rows(query, qlen, target, tlen, sc, rows, visit) for an unbanded alignment, on the calling
// warp (`lane` = the thread's lane); visit(I, row) on every lane after each row.
template <class Query, class Target, class Visit>
__device__ void local_rows_warp(const Query& query, std::uint32_t qlen_u, const Target& target, std::uint32_t tlen_u,
                                const Scoring& sc, DpRows<1> rows, Visit& visit, unsigned lane) {
  const auto qlen = static_cast<std::int32_t>(qlen_u), tlen = static_cast<std::int32_t>(tlen_u);
  const auto L = static_cast<std::int32_t>(lane);
  const std::int32_t groups = (qlen + 31) / 32;
  const std::int32_t open_ins = sc.open_ins + sc.extend_ins;
  constexpr std::int32_t kNone = -(1 << 29);  // below any score less any gap a row can hold
  for (std::int32_t j = L + 1; j <= qlen; j += 32) rows.h(j) = rows.e(j) = 0;
  for (std::int32_t I = 1; I <= tlen; ++I) {
    const std::uint8_t tb = target[I - 1];
    std::int32_t diag_in = 0, f_in = 0;  // H(I-1, 32 G) and F(I, 32 G + 1): the group before's
    std::int32_t best = 0, best_j = 0;
    for (std::int32_t g = 0; g < groups; ++g) {
      const std::int32_t j = 32 * g + L + 1;
      const bool here = j <= qlen;
      const std::int32_t up = here ? rows.h(j) : 0, e = here ? rows.e(j) : 0;
      const std::int32_t left_up = __shfl_up_sync(kFullWarp, up, 1);
      const std::int32_t diag = L == 0 ? diag_in : left_up, sub = here ? sc.substitution(query[j - 1], tb) : 0;
      const std::int32_t m = diag + sub;
      // F(I, j + 1) as a prefix maximum over the group's lanes, with the group before's F carried.
      std::int32_t scan = here ? m - open_ins + L * sc.extend_ins : kNone;
      for (unsigned d = 1; d < 32; d <<= 1) {
        const std::int32_t other = __shfl_up_sync(kFullWarp, scan, d);
        if (lane >= d && other > scan) scan = other;
      }
      std::int32_t f_out = scan - L * sc.extend_ins;
      const std::int32_t carried = f_in - (L + 1) * sc.extend_ins;
      f_out = f_out > carried ? f_out : carried;
      f_out = f_out > 0 ? f_out : 0;
      // The cell, with F(I, j) from the lane before (its f_out; the cell's own f is this f_out).
      const std::int32_t f_left = __shfl_up_sync(kFullWarp, f_out, 1);
      const Cell c = extend_cell<true>(diag, e, L == 0 ? f_in : f_left, sub, sc);
      if (here) {
        rows.h(j) = c.h;
        rows.e(j) = c.e;
        if (c.h >= best) best = c.h, best_j = j;
      }
      diag_in = __shfl_sync(kFullWarp, up, 31);
      f_in = __shfl_sync(kFullWarp, f_out, 31);
    }
    // The row's best: the highest, the largest column on ties.
    for (unsigned d = 16; d > 0; d >>= 1) {
      const std::int32_t other = __shfl_xor_sync(kFullWarp, best, d), other_j = __shfl_xor_sync(kFullWarp, best_j, d);
      if (other > best || (other == best && other_j > best_j)) best = other, best_j = other_j;
    }
    visit(I, RowSummary{best, best_j, 0, {0, qlen}});
  }
}

}  // namespace wtmap::aligner::gapped
