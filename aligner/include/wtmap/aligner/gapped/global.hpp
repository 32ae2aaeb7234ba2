// wtmap aligner (gapped): banded global alignment with affine gaps and traceback, the step that
// turns an extended region into its CIGAR (bwa mem aligns the region found by extension again
// with ksw.c ksw_global2; Needleman-Wunsch 1970 with Gotoh's 1982 affine gaps).
//
// Both sequences are aligned whole. As in extension (extend.hpp) gaps open only after a match or
// mismatch column, so an insertion never touches a deletion. Cells with |I - J| <= w are computed,
// w widened to |qlen - tlen| so that the end cell is always in the band.
//
// Space: global_scratch_bytes(qlen, tlen, w): two int32 rows and 4 traceback bits per banded cell
// (H's source, 2 bits; whether the deletion and the insertion leaving the cell extend a gap, 1
// bit each). Time: O(tlen * (2 w + 1)); the traceback O(qlen + tlen).
// The CIGAR is written in BAM's encoding (length << 4 | op; M = 0, I = 1, D = 2).
#pragma once

#include <cstdint>

#include "wtmap/aligner/gapped/scoring.hpp"
#include "wtmap/core/config.hpp"

namespace wtmap::aligner::gapped {

constexpr std::uint32_t kCigarMatch = 0, kCigarIns = 1, kCigarDel = 2;

struct GlobalResult {
  std::int32_t score = kUnreachable;  // kUnreachable with n_cigar 0: the CIGAR did not fit
  std::uint32_t n_cigar = 0;
};

// The band the alignment uses: w, widened to reach the end cell, at most the longer length.
constexpr WTMAP_HD std::int32_t global_band(std::uint32_t qlen, std::uint32_t tlen, std::int32_t w) {
  const std::int64_t diff = qlen > tlen ? std::int64_t{qlen} - tlen : std::int64_t{tlen} - qlen;
  const std::int64_t longest = qlen > tlen ? qlen : tlen;
  const std::int64_t band = w > diff ? w : diff;
  return static_cast<std::int32_t>(band < longest ? band : longest);
}

// A band that holds every alignment of the two lengths scoring at least `score` (the score an
// extension found for the region, so that global_align in it finds an alignment that good, and
// the same one as unbanded: every alignment as good lies inside). The path runs from diagonal 0
// to diagonal qlen - tlen; one that strays s >= 1 diagonals beyond that range takes s gap bases
// of the kind the length difference does not need and |qlen - tlen| + s of the other, so it opens
// both kinds and aligns at most shorter - s pairs:
//   score <= shorter * match - open_del - open_ins - |qlen - tlen| * (that kind's extend)
//            - s * (match + extend_del + extend_ins).
// The band is |qlen - tlen| plus the largest s that bound allows. (bwa's infer_bw has the
// equal-length case: no band where the score is within two gap openings of all matches.)
constexpr WTMAP_HD std::int32_t global_band_for_score(std::uint32_t qlen, std::uint32_t tlen, std::int32_t score,
                                                      const Scoring& sc) {
  const std::int64_t shorter = qlen < tlen ? qlen : tlen, longer = qlen < tlen ? tlen : qlen;
  const std::int64_t diff = longer - shorter;
  const std::int64_t diff_extend = qlen > tlen ? sc.extend_ins : sc.extend_del;  // a longer query: insertions
  const std::int64_t room =
      shorter * sc.match - score - std::int64_t{sc.open_del} - sc.open_ins - diff * diff_extend;
  const std::int64_t per_diagonal = std::int64_t{sc.match} + sc.extend_del + sc.extend_ins;  // > 0: match > 0
  const std::int64_t band = diff + (room < 0 ? 0 : room / per_diagonal);
  return static_cast<std::int32_t>(band < longer ? band : longer);
}

// Scratch bytes: H and E rows (qlen + 1 int32 each), then 4 bits for each of the tlen * (2 band + 1)
// banded cells; a 16-byte multiple.
constexpr WTMAP_HD std::uint64_t global_scratch_bytes(std::uint32_t qlen, std::uint32_t tlen, std::int32_t w) {
  const std::uint64_t cells = std::uint64_t{tlen} * (2 * std::uint64_t(global_band(qlen, tlen, w)) + 1);
  return (2 * (std::uint64_t{qlen} + 1) * sizeof(std::int32_t) + (cells + 1) / 2 + 15) & ~std::uint64_t{15};
}

// CIGAR operations an alignment may need: each consumes at least one base.
constexpr WTMAP_HD std::uint32_t global_max_cigar_ops(std::uint32_t qlen, std::uint32_t tlen) { return qlen + tlen; }

namespace global_detail {

enum : std::uint8_t { kFromMatch = 0, kFromDel = 1, kFromIns = 2, kDelExtends = 4, kInsExtends = 8 };

// 4-bit traceback codes of the banded cells (I >= 1, J >= 1, |I - J| <= band), two per byte.
struct Trace {
  std::uint8_t* bits;
  std::int32_t band;
  WTMAP_HD std::uint64_t index(std::int32_t I, std::int32_t J) const {
    return std::uint64_t(I - 1) * (2 * std::uint64_t(band) + 1) + std::uint64_t(J - I + band);
  }
  WTMAP_HD void set(std::int32_t I, std::int32_t J, std::uint8_t code) const {
    const std::uint64_t k = index(I, J);
    std::uint8_t& b = bits[k / 2];
    b = (k & 1) ? static_cast<std::uint8_t>((b & 0x0F) | (code << 4)) : static_cast<std::uint8_t>((b & 0xF0) | code);
  }
  WTMAP_HD std::uint8_t get(std::int32_t I, std::int32_t J) const {
    const std::uint64_t k = index(I, J);
    return (bits[k / 2] >> ((k & 1) * 4)) & 0x0F;
  }
};

// One cell: diag = H(I-1, J-1), e = E(I, J), f = F(I, J); returns H(I, J) and leaves E(I+1, J) in
// e and F(I, J+1) in f; `code` gets the traceback bits. Ties prefer a match over a deletion over
// an insertion for H, and opening over extending a gap (ksw_global2's choices).
WTMAP_HD std::int32_t global_cell(std::int32_t diag, std::int32_t& e, std::int32_t& f, std::int32_t s,
                                  const Scoring& sc, std::uint8_t& code) {
  const std::int32_t m = diag + s;
  std::int32_t h = m;
  code = kFromMatch;
  if (e > h) h = e, code = kFromDel;
  if (f > h) h = f, code = kFromIns;
  const std::int32_t open_del = m - sc.open_del - sc.extend_del, ext_del = e - sc.extend_del;
  const std::int32_t open_ins = m - sc.open_ins - sc.extend_ins, ext_ins = f - sc.extend_ins;
  if (ext_del > open_del) code |= kDelExtends;
  if (ext_ins > open_ins) code |= kInsExtends;
  e = max2(max2(ext_del, open_del), kUnreachable);
  f = max2(max2(ext_ins, open_ins), kUnreachable);
  return max2(h, kUnreachable);
}

// Appends `len` of operation `op` to a CIGAR built backwards; false once it would exceed capacity.
WTMAP_HD bool push_op(std::uint32_t* cigar, std::uint32_t capacity, std::uint32_t& n, std::uint32_t op,
                      std::uint32_t len) {
  if (len == 0) return true;
  if (n > 0 && (cigar[n - 1] & 0xF) == op) {
    cigar[n - 1] += len << 4;
    return true;
  }
  if (n == capacity) return false;
  cigar[n++] = len << 4 | op;
  return true;
}

// Follows the traceback from the end cell, writing the CIGAR backwards; false if it does not fit.
WTMAP_HD bool trace_back(const Trace& trace, std::int32_t qlen, std::int32_t tlen, std::uint32_t* cigar,
                         std::uint32_t capacity, std::uint32_t& n) {
  enum State { kH, kM, kE, kF } state = kH;
  std::int32_t I = tlen, J = qlen;
  while (I > 0 && J > 0) {
    const std::uint8_t code = trace.get(I, J);
    if (state == kH) {
      const std::uint8_t from = code & 3;
      state = from == kFromMatch ? kM : (from == kFromDel ? kE : kF);
    }
    if (state == kM) {
      if (!push_op(cigar, capacity, n, kCigarMatch, 1)) return false;
      --I, --J;
      state = kH;
    } else if (state == kE) {  // E(I, J)'s choice was made in cell (I - 1, J)
      if (!push_op(cigar, capacity, n, kCigarDel, 1)) return false;
      state = I > 1 && (trace.get(I - 1, J) & kDelExtends) ? kE : kM;
      --I;
    } else {  // F(I, J)'s choice was made in cell (I, J - 1)
      if (!push_op(cigar, capacity, n, kCigarIns, 1)) return false;
      state = J > 1 && (trace.get(I, J - 1) & kInsExtends) ? kF : kM;
      --J;
    }
  }
  // Leading gap: the rest of either sequence.
  return push_op(cigar, capacity, n, kCigarDel, static_cast<std::uint32_t>(I)) &&
         push_op(cigar, capacity, n, kCigarIns, static_cast<std::uint32_t>(J));
}

}  // namespace global_detail

// Aligns query[0, qlen) with target[0, tlen) end to end in a band of w (global_band); writes at
// most `capacity` CIGAR operations (global_max_cigar_ops suffices). scratch: global_scratch_bytes
// bytes, 4-byte aligned.
template <class Query, class Target>
WTMAP_HD GlobalResult global_align(const Query& query, std::uint32_t qlen_u, const Target& target, std::uint32_t tlen_u,
                                   const Scoring& sc, std::int32_t w, void* scratch, std::uint32_t* cigar,
                                   std::uint32_t capacity) {
  using namespace global_detail;
  const std::int32_t qlen = static_cast<std::int32_t>(qlen_u), tlen = static_cast<std::int32_t>(tlen_u);
  const std::int32_t band = global_band(qlen_u, tlen_u, w);
  auto* h = static_cast<std::int32_t*>(scratch);
  std::int32_t* e = h + qlen + 1;
  const Trace trace{reinterpret_cast<std::uint8_t*>(e + qlen + 1), band};
  // Row 0: leading insertions; nothing deletes before the first query base is placed.
  h[0] = 0;
  for (std::int32_t j = 1; j <= qlen; ++j) {
    h[j] = j <= band ? -(sc.open_ins + sc.extend_ins * j) : kUnreachable;
    e[j] = kUnreachable;
  }
  for (std::int32_t I = 1; I <= tlen; ++I) {
    const std::int32_t first = I - band > 1 ? I - band : 1, last = I + band < qlen ? I + band : qlen;
    std::int32_t diag = h[first - 1];
    h[0] = I <= band ? -(sc.open_del + sc.extend_del * I) : kUnreachable;
    std::int32_t f = kUnreachable;
    const std::uint8_t tb = target[I - 1];
    for (std::int32_t j = first; j <= last; ++j) {
      std::uint8_t code;
      const std::int32_t up = h[j];
      h[j] = global_cell(diag, e[j], f, sc.substitution(query[j - 1], tb), sc, code);
      trace.set(I, j, code);
      diag = up;
    }
  }
  GlobalResult r;
  std::uint32_t n = 0;
  if (!trace_back(trace, qlen, tlen, cigar, capacity, n)) return r;
  for (std::uint32_t a = 0, b = n; a + 1 < b; ++a, --b) {
    const std::uint32_t t = cigar[a];
    cigar[a] = cigar[b - 1];
    cigar[b - 1] = t;
  }
  r.score = h[qlen];
  r.n_cigar = n;
  return r;
}

}  // namespace wtmap::aligner::gapped
