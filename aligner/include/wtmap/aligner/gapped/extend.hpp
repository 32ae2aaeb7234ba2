// wtmap aligner (gapped): banded affine-gap extension of a seed with z-drop, the step with which
// bwa mem grows a seed into an alignment (bwa's ksw.c ksw_extend2; Li 2013, arXiv:1303.3997), and
// the local (Smith-Waterman) mode of the same DP for a mate searched in a window, with the score of
// a second copy there (ksw.c's ksw_align2 score2, bwa mem's csub of a rescued hit).
//
// The DP (Gotoh 1982) runs row by row over the target, one cell per query base: H(I, J) is the best
// score of an alignment of query[0, J) with target[0, I) that starts at the seed's end with score
// h0. As in bwa, gaps open only after a match or mismatch column (an insertion never touches a
// deletion), and a path whose running score falls to 0 or below is dead: it is neither extended
// nor reported (0 marks a dead cell). Only cells with |I - J| <= band are computed; a row covers
// only the columns live paths can reach, so the work follows the alignment, not the band.
//
// Space: extend_scratch_bytes(qlen), two int32 rows (DpRows), from the caller. Time: O(tlen * min(qlen,
// 2 band + 1)) at worst, O(tlen * live columns) in practice. One thread per alignment; extend_cell
// is the DP step alone, for a warp variant that computes a row's cells in parallel.
#pragma once

#include <cstdint>
#include <type_traits>

#include "wtmap/aligner/gapped/scoring.hpp"
#include "wtmap/core/config.hpp"

namespace wtmap::aligner::gapped {

// What bwa mem needs of an extension (ksw_extend2's outputs). Lengths count consumed bases.
struct ExtendResult {
  std::int32_t score = 0;    // best score of any live path (h0 when none exceeds it)
  std::int32_t qle = 0;      // query bases of that best path (0: no extension)
  std::int32_t tle = 0;      // target bases of that best path
  std::int32_t gscore = -1;  // best score of a live path consuming the whole query; -1 if none
  std::int32_t gtle = 0;     // target bases of that path
  std::int32_t max_off = 0;  // largest |tle - qle| over the successive best cells (sizes a later band)
};

// The DP rows of an alignment, H(., J) and E(., J) for J = 0..qlen, in scratch: column J's pair at
// base[2 kLanes J] and base[2 kLanes J + kLanes]. kLanes = 1: an alignment's own memory; kLanes =
// kWarpLanes: the rows of a warp's alignments interleaved (lane k's base = the group's + k), so
// that threads at the same column read adjacent words instead of one memory sector each.
template <unsigned kLanes>
struct DpRows {
  std::int32_t* base;
  WTMAP_HD std::int32_t& h(std::int32_t j) const { return base[2 * kLanes * static_cast<std::uint64_t>(j)]; }
  WTMAP_HD std::int32_t& e(std::int32_t j) const { return base[2 * kLanes * static_cast<std::uint64_t>(j) + kLanes]; }
};
constexpr unsigned kWarpLanes = 32;

// Scratch bytes of one alignment's DpRows<1> for a query of qlen bases: 2 (qlen + 1) int32s,
// a 16-byte multiple; and of a group of kWarpLanes alignments whose longest query has max_qlen.
constexpr WTMAP_HD std::uint64_t extend_scratch_bytes(std::uint32_t qlen) {
  return (2 * (std::uint64_t{qlen} + 1) * sizeof(std::int32_t) + 15) & ~std::uint64_t{15};
}
constexpr WTMAP_HD std::uint64_t extend_group_scratch_bytes(std::uint32_t max_qlen) {
  return kWarpLanes * extend_scratch_bytes(max_qlen);
}

// One DP cell. In: diag = H(I-1, J-1), e = E(I, J) (a deletion reaching the cell from above),
// f = F(I, J) (an insertion reaching it from the left), s = substitution score of the cell.
// Out: h = H(I, J), e = E(I+1, J), f = F(I, J+1); all >= 0, 0 = dead. Extension (kLocal false):
// a dead diagonal does not restart; local mode: every cell may start an alignment.
struct Cell {
  std::int32_t h, e, f;
};
template <bool kLocal>
WTMAP_HD Cell extend_cell(std::int32_t diag, std::int32_t e, std::int32_t f, std::int32_t s, const Scoring& sc) {
  const std::int32_t m = kLocal || diag > 0 ? diag + s : 0;
  Cell out;
  out.h = max2(max2(m, e), max2(f, 0));
  out.e = max2(max2(e - sc.extend_del, m - sc.open_del - sc.extend_del), 0);
  out.f = max2(max2(f - sc.extend_ins, m - sc.open_ins - sc.extend_ins), 0);
  return out;
}

// The columns [lo, hi] of the previous row whose H or E may be non-zero (H(I-1, J) for J in it is
// in rows.h(J); anything outside reads as 0); lo > hi when none.
struct LiveColumns {
  std::int32_t lo, hi;
  WTMAP_HD bool holds(std::int32_t j) const { return j >= lo && j <= hi; }
};

// A computed row: its best cell (the largest column on ties; score 0 if every cell is dead), H at
// the query's end (0 unless computed and live), and the columns live for the next row.
struct RowSummary {
  std::int32_t best, best_j, at_end;
  LiveColumns live;
};

// A query with its scores against each reference code laid out by column (bwa's query profile,
// ksw_extend2's qp), for the CPU: a cell then loads its score, where the by-base table costs the
// read's code, a compare and the table's load (the CPU backend, callgrind: the extensions of 10^4
// mason reads 1.45 G -> 1.31 G instructions, the mate rescue of 10^4 pairs 578 M -> 504 M). The
// GPU keeps the by-base scores in registers. operator[] reads the query itself. Space: 5 qlen int32s.
template <class Query>
struct ProfiledQuery {
  Query query;
  const std::int32_t* scores;  // scores[b * qlen + j] = substitution(query[j], b), b = 0..4
  std::int32_t qlen;
  WTMAP_HD std::uint8_t operator[](std::uint32_t i) const { return query[i]; }
  // Column j's score (j = 0..qlen-1) against reference code b is against(b)[j].
  WTMAP_HD const std::int32_t* against(std::uint8_t b) const { return scores + (b < 4 ? b : 4) * qlen; }
};
// Lays out query[0, qlen)'s scores in `scores` (5 qlen int32s) for ProfiledQuery.
template <class Query>
void fill_query_profile(const Query& query, std::int32_t qlen, const Scoring& sc, std::int32_t* scores) {
  for (std::uint8_t b = 0; b < 5; ++b) {
    const Scoring::AgainstBase by_base = sc.against(b);
    for (std::int32_t j = 0; j < qlen; ++j) scores[b * qlen + j] = by_base(query[j], b);
  }
}
template <class Query>
struct is_profiled : std::false_type {};
template <class Query>
struct is_profiled<ProfiledQuery<Query>> : std::true_type {};

// Row I >= 1 of the DP on target base tb: reads H(I-1, .) and E(I, .) from rows where `live`
// says they hold, writes H(I, .) and E(I+1, .) in place. col0 = H(I, 0), the score of a leading
// deletion of I bases (0 where dead or outside the band).
template <bool kLocal, class Query, class Rows>
WTMAP_HD RowSummary extend_row(const Query& query, std::int32_t qlen, std::uint8_t tb, std::int32_t I, std::int32_t w,
                               std::int32_t col0, LiveColumns live, const Rows& rows, const Scoring& sc) {
  std::int32_t first = I - w > 1 ? I - w : 1;
  if (live.lo > first) first = live.lo;  // so j >= first gives live.holds(j) == (j <= live.hi)
  const std::int32_t last = I + w < qlen ? I + w : qlen;
  RowSummary row{0, 0, 0, {col0 > 0 || kLocal ? 0 : -1, col0 > 0 || kLocal ? 0 : -2}};
  std::int32_t diag = live.holds(first - 1) ? rows.h(first - 1) : 0;
  rows.h(0) = col0;
  // Locals, not sc's fields: the rows are written through int32 pointers that the compiler must
  // otherwise assume may alias sc, and it reloads every field at every cell.
  const Scoring gaps = sc;
  // The row's scores: the profile's row, or sc's choice by read code (not made for a profiled
  // query: a table a row, 1.3 % of the CPU's extension instructions).
  const Scoring::AgainstBase by_base = is_profiled<Query>::value ? Scoring::AgainstBase{} : sc.against(tb);
  const std::int32_t* profile_row = nullptr;
  if constexpr (is_profiled<Query>::value) profile_row = query.against(tb);
  // Column j's substitution score (j >= 1).
  const auto score = [&](std::int32_t j) {
    if constexpr (is_profiled<Query>::value) {
      return profile_row[j - 1];
    } else {
      return by_base(query[j - 1], tb);
    }
  };
  // The live columns for the next row (local mode: all of them). The GPU notes them cell by cell
  // (a scan would read the row's memory again); the CPU scans the row from either end afterwards,
  // as ksw_extend2 does (the CPU backend's extensions of 10^4 mason reads: 15 % fewer instructions).
#if defined(__CUDA_ARCH__)
  constexpr bool kLiveByCell = !kLocal;
#else
  constexpr bool kLiveByCell = false;
#endif
  std::int32_t f = 0, j = first;
  // Cell j from H(I-1, j) and E(I, j) (0 where the previous row is dead).
  const auto cell = [&](std::int32_t up, std::int32_t e_above) {
    const Cell c = extend_cell<kLocal>(diag, e_above, f, score(j), gaps);
    rows.h(j) = c.h;
    rows.e(j) = c.e;
    f = c.f;
    diag = up;
    if (kLiveByCell && c.h > 0) {
      if (row.live.lo < 0) row.live.lo = j;
      row.live.hi = j;
    }
    if (c.h >= row.best) {
      row.best = c.h;
      row.best_j = j;
    }
  };
  // Past the previous row's live columns only an insertion reaches a cell.
  const auto nothing_reaches = [&] { return !kLocal && j > live.hi + 1 && f == 0; };
#if defined(__CUDA_ARCH__)
  // One loop on the GPU: a warp's threads then go through the columns together (with the CPU's
  // two, bench_gapped_extend's BM_Extend/gpu/1048576 ran at 2.9 M tasks/s instead of 6.2-6.9).
  for (; j <= last && !nothing_reaches(); ++j) {
    const bool above = j <= live.hi;
    cell(above ? rows.h(j) : 0, above ? rows.e(j) : 0);
  }
#else
  // Two on the CPU: the columns under the previous row's live ones, then those past them, so that
  // the cell loop tests neither (a fifth fewer instructions a cell, bench_gapped_extend's
  // BM_Extend/cpu under cachegrind).
  for (const std::int32_t covered = live.hi < last ? live.hi : last; j <= covered; ++j) cell(rows.h(j), rows.e(j));
  for (; j <= last && !nothing_reaches(); ++j) cell(0, 0);
#endif
  if (kLocal) {
    row.live = {first - 1 < 0 ? 0 : first - 1, j - 1};
  } else if (!kLiveByCell) {
    std::int32_t lo = first, hi = j - 1;
    while (lo <= hi && rows.h(lo) == 0) ++lo;
    while (hi >= lo && rows.h(hi) == 0) --hi;
    if (lo <= hi) {
      if (row.live.lo < 0) row.live.lo = lo;
      row.live.hi = hi;
    }
  }
  if (j > qlen && qlen >= first) row.at_end = rows.h(qlen);
  return row;
}

// Extends a seed along query[0, qlen) and target[0, tlen) (ForwardCodes, or ReverseCodes for a
// left extension) from score h0 > 0, in a band of sc.band, stopping at z-drop (sc.zdrop > 0):
// after a row whose best cell is below the best so far by more than zdrop plus the gap extensions
// that separate the two diagonals (bwa's rule: extend_del where the row's best lies below the best
// cell's diagonal, extend_ins where above), or once every cell is dead. Ties: the best cell in the
// earliest row, in it the largest query end (bwa's); gscore's cell in the latest row. Unlike
// ksw_extend2, gscore counts a path that ends in an insertion before any target base (row 0), and
// the band is not narrowed from the lengths (dead cells are skipped anyway).
// rows: the DP rows (DpRows; extend_scratch_bytes(qlen) bytes of 4-byte aligned scratch for one
// alignment's own).
template <class Query, class Target, unsigned kLanes>
WTMAP_HD ExtendResult extend(const Query& query, std::uint32_t qlen_u, const Target& target, std::uint32_t tlen_u,
                             const Scoring& sc, std::int32_t h0, DpRows<kLanes> rows) {
  const std::int32_t qlen = static_cast<std::int32_t>(qlen_u), tlen = static_cast<std::int32_t>(tlen_u);
  const std::int32_t longest = qlen > tlen ? qlen : tlen;
  const std::int32_t w = sc.band < longest ? sc.band : longest;
  ExtendResult r;
  r.score = h0;
  // Row 0: leading insertions.
  rows.h(0) = h0;
  rows.e(0) = 0;
  LiveColumns live{0, 0};
  for (std::int32_t j = 1; j <= w && j <= qlen; ++j) {
    const std::int32_t v = h0 - sc.open_ins - sc.extend_ins * j;
    if (v <= 0) break;
    rows.h(j) = v;
    rows.e(j) = 0;
    live.hi = j;
  }
  if (live.hi == qlen) {
    r.gscore = rows.h(qlen);
    r.gtle = 0;
  }
  for (std::int32_t I = 1; I <= tlen; ++I) {
    const std::int32_t lead_del = h0 - sc.open_del - sc.extend_del * I;
    const std::int32_t col0 = I <= w && lead_del > 0 ? lead_del : 0;
    const RowSummary row = extend_row<false>(query, qlen, target[I - 1], I, w, col0, live, rows, sc);
    if (row.at_end > 0 && row.at_end >= r.gscore) {
      r.gscore = row.at_end;
      r.gtle = I;
    }
    if (row.live.lo < 0) break;
    live = row.live;
    if (row.best > r.score) {
      r.score = row.best;
      r.tle = I;
      r.qle = row.best_j;
      const std::int32_t off = row.best_j > I ? row.best_j - I : I - row.best_j;
      if (off > r.max_off) r.max_off = off;
    } else if (sc.zdrop > 0 && row.best > 0) {
      const std::int32_t down = I - r.tle, right = row.best_j - r.qle;
      const std::int32_t gap_cost = down > right ? (down - right) * sc.extend_del : (right - down) * sc.extend_ins;
      if (r.score - row.best - gap_cost > sc.zdrop) break;
    }
  }
  return r;
}

// Where bwa mem ends an extension (bwa's mem_chain2aln): at the query's end (to_end, a
// global end at gtle, scoring gscore) unless no live path gets there or it scores no more than
// the best local end less the clipping penalty of that side (-L), in which case at (qle, tle)
// and the rest of the query is clipped. `score` is what the alignment keeps either way (the local
// best: the clip penalty is not subtracted, as in bwa), true_score the extension's own.
struct ExtensionEnd {
  std::int32_t query_bases, target_bases, score, true_score;
  bool to_end;
};
WTMAP_HD ExtensionEnd choose_end(const ExtendResult& r, std::uint32_t qlen, std::int32_t clip_penalty) {
  if (r.gscore <= 0 || r.gscore <= r.score - clip_penalty) return {r.qle, r.tle, r.score, r.score, false};
  return {static_cast<std::int32_t>(qlen), r.gtle, r.score, r.gscore, true};
}

// The rows of a local alignment (Smith-Waterman with the same gaps) of query[0, qlen) in
// target[0, tlen), cells with |I - J| <= sc.band (a band >= both lengths: unbanded), no z-drop:
// visit(I, row) after each row I = 1..tlen. local_align and tandem_score visit the same rows.
template <class Query, class Target, unsigned kLanes, class Visit>
WTMAP_HD void local_rows(const Query& query, std::uint32_t qlen_u, const Target& target, std::uint32_t tlen_u,
                         const Scoring& sc, DpRows<kLanes> rows, Visit& visit) {
  const std::int32_t qlen = static_cast<std::int32_t>(qlen_u), tlen = static_cast<std::int32_t>(tlen_u);
  const std::int32_t longest = qlen > tlen ? qlen : tlen;
  const std::int32_t w = sc.band < longest ? sc.band : longest;
  for (std::int32_t j = 0; j <= qlen; ++j) rows.h(j) = rows.e(j) = 0;
  LiveColumns live{0, w < qlen ? w : qlen};
  for (std::int32_t I = 1; I <= tlen; ++I) {
    const RowSummary row = extend_row<true>(query, qlen, target[I - 1], I, w, 0, live, rows, sc);
    live = row.live;
    visit(I, row);
  }
}

// local_align's visitor: the best cell, in the earliest row on ties.
struct LocalBest {
  ExtendResult r;
  WTMAP_HD void operator()(std::int32_t I, const RowSummary& row) {
    if (row.best > r.score) {
      r.score = row.best;
      r.tle = I;
      r.qle = row.best_j;
    }
  }
};

// The score and the end (qle, tle) of the best local alignment (local_rows), ties as extend();
// 0 and no end if no base matches (local_start finds the start). rows: as extend()'s.
template <class Query, class Target, unsigned kLanes>
WTMAP_HD ExtendResult local_align(const Query& query, std::uint32_t qlen_u, const Target& target, std::uint32_t tlen_u,
                                  const Scoring& sc, DpRows<kLanes> rows) {
  LocalBest best;
  local_rows(query, qlen_u, target, tlen_u, sc, rows, best);
  return best.r;
}

// tandem_score's visitor, ksw_align2's bookkeeping for its score2 (bwa's ksw.c, with KSW_XSUBO):
// over the rows whose best cell scores at least `floor`, a run is a row and the following rows
// while each row's best rises (the run then moves to it); a row that does not rise ends the run,
// and the next such row starts another. score2 is the highest run whose row lies outside
// [low, high].
struct TandemRuns {
  std::int32_t low = 0, high = 0, floor = 0;
  std::int32_t row = -1, score = 0;  // the open run; row -1: none yet
  std::int32_t best_away = 0;
  WTMAP_HD void close() {
    if (row >= 0 && (row < low || row > high) && score > best_away) best_away = score;
  }
  WTMAP_HD void operator()(std::int32_t I, const RowSummary& r) {
    if (r.best < floor) return;
    if (row >= 0 && row + 1 == I) {
      if (r.best > score) score = r.best, row = I;
      return;
    }
    close();
    row = I;
    score = r.best;
  }
};

// bwa mem's csub of a hit found by mate rescue (mem_matesw: ksw_align2's score2, minimum score
// `floor` = min_seed_len * A): the best score of another local alignment in the window, one whose
// row ends more than ceil(best.score / A) rows from the best's (`best`: local_align's) -- a second
// copy of a tandem repeat. 0 if none. A second pass over the same rows, since the rows that count
// are known only once the best is.
WTMAP_HD TandemRuns tandem_runs(const ExtendResult& best, const Scoring& sc, std::int32_t floor) {
  const std::int32_t reach = (best.score + sc.match - 1) / sc.match;
  TandemRuns runs;
  runs.low = best.tle - reach;
  runs.high = best.tle + reach;
  runs.floor = floor;
  return runs;
}
template <class Query, class Target, unsigned kLanes>
WTMAP_HD std::int32_t tandem_score(const Query& query, std::uint32_t qlen_u, const Target& target, std::uint32_t tlen_u,
                                   const ExtendResult& best, const Scoring& sc, std::int32_t floor, DpRows<kLanes> rows) {
  TandemRuns runs = tandem_runs(best, sc, floor);
  local_rows(query, qlen_u, target, tlen_u, sc, rows, runs);
  runs.close();
  return runs.best_away;
}

// The start of the alignment local_align reported (`end`, with score > 0): extend() back from its
// end over both prefixes reversed, from h0 = 1, unbanded and without z-drop -- every suffix of a
// best local alignment scores >= 0, so it stays live, and no path scores more. Returns the bases
// from the start to the end (qle, tle; ties: the shortest in the target, then the longest in the
// query); score is end.score + 1. rows: extend_scratch_bytes(end.qle).
template <class Query, class Target, unsigned kLanes>
WTMAP_HD ExtendResult local_start(const Query& query, const Target& target, const ExtendResult& end, Scoring sc,
                                  DpRows<kLanes> rows) {
  sc.band = end.qle > end.tle ? end.qle : end.tle;
  sc.zdrop = 0;
  const auto qe = static_cast<std::uint32_t>(end.qle), te = static_cast<std::uint32_t>(end.tle);
  return extend(Reversed<Query>{query, qe}, qe, Reversed<Target>{target, te}, te, sc, 1, rows);
}

}  // namespace wtmap::aligner::gapped
