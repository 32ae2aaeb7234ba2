// Test oracle for gapped alignment: plain, unbanded (or explicitly masked) full Gotoh DP over three
// matrices, written for obviousness, not speed -- O(qlen * tlen) memory.
//
// Model (the one extend.hpp and global.hpp document): a column is a match/mismatch (M), an
// insertion (query base against nothing) or a deletion (target base against nothing); a gap of k
// bases costs open + k * extend; a gap opens only right after an M column or at the very start, so
// insertions never touch deletions. Extension: the alignment starts at score h0 and every prefix of
// it must keep a score > 0. Local: it starts anywhere with score 0.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "wtmap/aligner/gapped/scoring.hpp"

namespace wtmap::test {

using aligner::gapped::Scoring;

// The three matrices, (tlen + 1) x (qlen + 1); kNone where no allowed alignment ends in that state.
struct GotohMatrices {
  static constexpr std::int64_t kNone = INT64_MIN / 4;
  std::int64_t rows, cols;
  std::vector<std::int64_t> M, D, I;  // last column: match/mismatch, deletion, insertion
  std::int64_t at(const std::vector<std::int64_t>& x, std::int64_t i, std::int64_t j) const { return x[i * cols + j]; }
  std::int64_t best(std::int64_t i, std::int64_t j) const { return std::max({at(M, i, j), at(D, i, j), at(I, i, j)}); }
};

enum class OracleMode { extension, global, local };

// in_band(i, j): whether cell (i target bases, j query bases) may be used (always true unbanded).
template <class InBand>
GotohMatrices gotoh(const std::vector<std::uint8_t>& q, const std::vector<std::uint8_t>& t, const Scoring& sc,
                    OracleMode mode, std::int64_t h0, InBand in_band) {
  const std::int64_t N = GotohMatrices::kNone;
  GotohMatrices g{static_cast<std::int64_t>(t.size()) + 1, static_cast<std::int64_t>(q.size()) + 1, {}, {}, {}};
  g.M.assign(g.rows * g.cols, N);
  g.D = g.M;
  g.I = g.M;
  // A value a path may continue from: in extension mode only positive scores live on.
  auto alive = [&](std::int64_t v) { return mode == OracleMode::extension ? (v > 0 ? v : N) : v; };
  for (std::int64_t i = 0; i < g.rows; ++i) {
    for (std::int64_t j = 0; j < g.cols; ++j) {
      if (!in_band(i, j)) continue;
      auto& m = g.M[i * g.cols + j];
      auto& d = g.D[i * g.cols + j];
      auto& ins = g.I[i * g.cols + j];
      // The start counts as an M column (gaps may open from it).
      if (i == 0 && j == 0) m = mode == OracleMode::extension ? h0 : 0;
      if (mode == OracleMode::local) m = std::max<std::int64_t>(m, 0);  // start anywhere
      if (i > 0 && j > 0) {
        const std::int64_t prev = std::max(alive(g.best(i - 1, j - 1)), mode == OracleMode::local ? 0 : N);
        if (prev != N) m = std::max(m, alive(prev + sc.substitution(q[j - 1], t[i - 1])));
      }
      if (i > 0) {
        const std::int64_t open = alive(g.at(g.M, i - 1, j)), ext = alive(g.at(g.D, i - 1, j));
        if (open != N) d = std::max(d, alive(open - sc.open_del - sc.extend_del));
        if (ext != N) d = std::max(d, alive(ext - sc.extend_del));
      }
      if (j > 0) {
        const std::int64_t open = alive(g.at(g.M, i, j - 1)), ext = alive(g.at(g.I, i, j - 1));
        if (open != N) ins = std::max(ins, alive(open - sc.open_ins - sc.extend_ins));
        if (ext != N) ins = std::max(ins, alive(ext - sc.extend_ins));
      }
    }
  }
  return g;
}

inline auto unbanded() {
  return [](std::int64_t, std::int64_t) { return true; };
}
inline auto band_of(std::int64_t w) {
  return [w](std::int64_t i, std::int64_t j) { return i - j <= w && j - i <= w; };
}

// What extend() reports, computed from the full matrices (no z-drop): the best cell (first row,
// then largest column on ties; the start if nothing beats h0), the best cell of the last column
// (latest row on ties, -1 if none).
struct OracleExtension {
  std::int64_t score, qle, tle, gscore, gtle;
};
inline OracleExtension extension_answer(const GotohMatrices& g, std::int64_t h0) {
  OracleExtension r{h0, 0, 0, -1, 0};
  for (std::int64_t i = 1; i < g.rows; ++i) {
    for (std::int64_t j = 1; j < g.cols; ++j) {
      const std::int64_t v = g.best(i, j);
      if (v > r.score || (v == r.score && i == r.tle && j > r.qle && r.tle > 0)) r.score = v, r.tle = i, r.qle = j;
    }
  }
  for (std::int64_t i = 0; i < g.rows; ++i) {
    const std::int64_t v = g.best(i, g.cols - 1);
    if (v > 0 && v >= r.gscore) r.gscore = v, r.gtle = i;
  }
  return r;
}

// Local: the best cell over all (0 with no end if no cell scores above 0).
inline OracleExtension local_answer(const GotohMatrices& g) {
  OracleExtension r{0, 0, 0, -1, 0};
  for (std::int64_t i = 1; i < g.rows; ++i) {
    for (std::int64_t j = 1; j < g.cols; ++j) {
      const std::int64_t v = g.best(i, j);
      if (v > r.score || (v == r.score && v > 0 && i == r.tle && j > r.qle)) r.score = v, r.tle = i, r.qle = j;
    }
  }
  return r;
}

// ksw_align2's score2 (bwa's ksw.c with KSW_XSUBO, written out as ksw keeps it): the list b of
// (row maximum, row) over the rows whose maximum reaches `floor` -- a row right after the last
// entry's row replaces it if its maximum is higher, else (and any other row) is ignored or
// appended -- then the highest entry whose row lies more than ceil(score / match) rows from `tle`,
// the best local alignment's row (0 if none). From the full local matrices.
inline std::int64_t ksw_score2(const GotohMatrices& g, std::int64_t floor, std::int64_t score, std::int64_t tle,
                               std::int64_t match) {
  std::vector<std::pair<std::int64_t, std::int64_t>> b;  // (maximum, row)
  for (std::int64_t i = 1; i < g.rows; ++i) {
    std::int64_t row_max = 0;
    for (std::int64_t j = 1; j < g.cols; ++j) row_max = std::max(row_max, g.best(i, j));
    if (row_max < floor) continue;
    if (b.empty() || b.back().second + 1 != i) {
      b.push_back({row_max, i});
    } else if (b.back().first < row_max) {
      b.back() = {row_max, i};
    }
  }
  const std::int64_t reach = (score + match - 1) / match;
  std::int64_t score2 = 0;
  for (const auto& [value, row] : b) {
    if ((row < tle - reach || row > tle + reach) && value > score2) score2 = value;
  }
  return score2;
}

// Rescores an alignment given as BAM CIGAR operations (M, I, D) from the sequences alone: the
// score of the columns, or kNone if the CIGAR does not consume both sequences exactly or puts an
// insertion next to a deletion.
inline std::int64_t rescore(const std::vector<std::uint8_t>& q, const std::vector<std::uint8_t>& t,
                            const std::vector<std::uint32_t>& cigar, const Scoring& sc) {
  std::int64_t score = 0;
  std::size_t qi = 0, ti = 0;
  std::uint32_t prev_op = 99;
  for (std::uint32_t c : cigar) {
    const std::uint32_t op = c & 0xF, len = c >> 4;
    if (len == 0 || op == prev_op) return GotohMatrices::kNone;  // runs are merged
    if ((op == 1 && prev_op == 2) || (op == 2 && prev_op == 1)) return GotohMatrices::kNone;
    if (op == 0) {
      if (qi + len > q.size() || ti + len > t.size()) return GotohMatrices::kNone;
      for (std::uint32_t k = 0; k < len; ++k) score += sc.substitution(q[qi++], t[ti++]);
    } else if (op == 1) {
      if (qi + len > q.size()) return GotohMatrices::kNone;
      qi += len;
      score -= sc.open_ins + std::int64_t{sc.extend_ins} * len;
    } else if (op == 2) {
      if (ti + len > t.size()) return GotohMatrices::kNone;
      ti += len;
      score -= sc.open_del + std::int64_t{sc.extend_del} * len;
    } else {
      return GotohMatrices::kNone;
    }
    prev_op = op;
  }
  return qi == q.size() && ti == t.size() ? score : GotohMatrices::kNone;
}

}  // namespace wtmap::test
