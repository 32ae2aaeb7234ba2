// wtmap aligner (gapped): the scoring of bwa mem's local alignment -- match, mismatch, affine gaps
// for deletions and insertions apart, clipping penalties, band and z-drop -- with bwa mem's option
// names and defaults (bwa mem's usage text; Li 2013, arXiv:1303.3997).
//
// A gap of length k costs open + k * extend (bwa's convention: a 1-base deletion costs O + E = 7).
// Codes are 0..3 for A, C, G, T and 4 for any ambiguous base (N). An N in the reference scores as a
// mismatch (-B), as issue 25 asks so that a read across a reference N is not favoured (bwa's index
// turns them into random bases). An N in the read against a reference base scores -1, bwa mem's
// ambiguity entry (bwa_fill_scmat), which no option of bwa mem changes: a read with a no-call
// then gets bwa's score, clipping and MAPQ.
#pragma once

#include <cstdint>

#include "wtmap/core/config.hpp"

namespace wtmap::aligner::gapped {

struct Scoring {
  std::int32_t match = 1;       // -A
  std::int32_t mismatch = 4;    // -B (a penalty: subtracted)
  std::int32_t open_del = 6;    // -O, first value
  std::int32_t extend_del = 1;  // -E, first value
  std::int32_t open_ins = 6;    // -O, second value
  std::int32_t extend_ins = 1;  // -E, second value
  std::int32_t clip5 = 5;       // -L, first value: a 5' soft clip costs this much
  std::int32_t clip3 = 5;       // -L, second value
  std::int32_t band = 100;      // -w: the largest |target offset - query offset| of a cell
  std::int32_t zdrop = 100;     // -d; <= 0 turns z-drop off
  std::int32_t read_ambiguous = 1;  // a read N against a reference base (a penalty), as bwa mem

  // The score of aligning read code a with reference code b.
  WTMAP_HD std::int32_t substitution(std::uint8_t a, std::uint8_t b) const {
    if (b >= 4) return -mismatch;
    if (a >= 4) return -read_ambiguous;
    return a == b ? match : -mismatch;
  }
  // substitution(., b) for one reference code b, chosen once for a DP row that scores every read
  // code against the same reference base. On the CPU a table by read code: one load a cell, where
  // three values and the compares between them cost the cell loop its registers (bench_gapped_extend
  // BM_Extend/cpu on one core: 32-39 k tasks/s against 28-29 k). On the GPU the three values in
  // registers (a table indexed at run time would sit in local memory).
  struct AgainstBase {
#if defined(__CUDA_ARCH__)
    std::int32_t equal, differ, read_ambiguous;
    WTMAP_HD std::int32_t operator()(std::uint8_t a, std::uint8_t b) const {
      return a == b ? equal : a >= 4 ? read_ambiguous : differ;
    }
#else
    std::int32_t by_read_code[5];  // codes 0..3, then any other
    std::int32_t operator()(std::uint8_t a, std::uint8_t) const { return by_read_code[a < 4 ? a : 4]; }
#endif
  };
  WTMAP_HD AgainstBase against(std::uint8_t b) const {
#if defined(__CUDA_ARCH__)
    if (b >= 4) return {-mismatch, -mismatch, -mismatch};
    return {match, -mismatch, -read_ambiguous};
#else
    AgainstBase r;
    for (std::uint8_t a = 0; a < 5; ++a) r.by_read_code[a] = substitution(a, b);
    return r;
#endif
  }

  // Penalties are non-negative and a match scores > 0 (the DP's "dead cell" convention needs it).
  bool valid() const {
    return match > 0 && mismatch >= 0 && read_ambiguous >= 0 && open_del >= 0 && extend_del >= 0 &&
           open_ins >= 0 && extend_ins >= 0 && clip5 >= 0 && clip3 >= 0 && band >= 0;
  }
};

// Read a code sequence forwards or backwards without copying it: a left extension runs on the
// read and reference before the seed, reversed (bwa mem reverses them into new arrays).
struct ForwardCodes {
  const std::uint8_t* codes;
  WTMAP_HD std::uint8_t operator[](std::uint32_t i) const { return codes[i]; }
};
// Any code sequence (a pointer, ForwardCodes, ...) read backwards over its first `length` codes.
template <class Codes>
struct Reversed {
  Codes codes;
  std::uint32_t length;
  WTMAP_HD std::uint8_t operator[](std::uint32_t i) const { return codes[length - 1 - i]; }
};
using ReverseCodes = Reversed<const std::uint8_t*>;

// A cell score no alignment reaches (room to subtract any penalty without overflow).
constexpr std::int32_t kUnreachable = INT32_MIN / 2;

WTMAP_HD std::int32_t max2(std::int32_t a, std::int32_t b) { return a > b ? a : b; }

}  // namespace wtmap::aligner::gapped
