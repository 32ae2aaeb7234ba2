// The striped local DP (see local_striped.hpp).
#include "local_striped.hpp"

#include <algorithm>
#include <cstddef>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace wtmap::aligner::gapped {

namespace {

// A score no 16-bit cell reaches or leaves: penalties and scores up to this keep every sum
// inside int16_t's range with room (saturating arithmetic does the rest).
constexpr std::int32_t kMostScore = 8191;

}  // namespace

bool striped_fits(std::uint32_t qlen, std::uint32_t tlen, const Scoring& sc) {
#if defined(__SSE2__)
  const auto widest = static_cast<std::int64_t>(std::max(qlen, tlen));
  const std::int64_t best = static_cast<std::int64_t>(qlen) * sc.match;  // no cell scores more
  return qlen > 0 && sc.band >= widest && best <= kMostScore && sc.mismatch <= kMostScore &&
         sc.read_ambiguous <= kMostScore && sc.open_del + sc.extend_del <= kMostScore &&
         sc.open_ins + sc.extend_ins <= kMostScore;
#else
  (void)qlen, (void)tlen, (void)sc;
  return false;
#endif
}

#if defined(__SSE2__)

namespace {

// The striped rows of one alignment: query position j (0-based; DP column j + 1) in lane
// j / segments of vector j % segments. Buffers are the thread's, reused by its next alignment.
class StripedRows {
 public:
  StripedRows(const std::uint8_t* query, std::uint32_t qlen, const Scoring& sc) : qlen_(static_cast<std::int32_t>(qlen)) {
    segments_ = (qlen_ + kLanes - 1) / kLanes;
    const std::size_t n = static_cast<std::size_t>(segments_);
    Buffers& b = buffers();
    b.profile.resize(5 * n);
    b.h.assign(n, Lanes{_mm_setzero_si128()});
    b.h_next.resize(n);
    b.e.assign(n, Lanes{_mm_setzero_si128()});
    b.f.resize(n);
    b.valid.resize(n);
    // Past the query's end a lane scores far below any path and is left out of a row's best.
    alignas(16) std::int16_t lane[kLanes];
    for (std::uint8_t code = 0; code < 5; ++code) {
      const Scoring::AgainstBase by_base = sc.against(code);
      for (std::int32_t s = 0; s < segments_; ++s) {
        for (std::int32_t k = 0; k < kLanes; ++k) {
          const std::int32_t j = k * segments_ + s;
          lane[k] = static_cast<std::int16_t>(j < qlen_ ? by_base(query[j], code) : -2 * kMostScore);
        }
        b.profile[code * n + static_cast<std::size_t>(s)].v = _mm_load_si128(reinterpret_cast<const __m128i*>(lane));
      }
    }
    for (std::int32_t s = 0; s < segments_; ++s) {
      for (std::int32_t k = 0; k < kLanes; ++k) lane[k] = k * segments_ + s < qlen_ ? -1 : 0;
      b.valid[static_cast<std::size_t>(s)].v = _mm_load_si128(reinterpret_cast<const __m128i*>(lane));
    }
    open_del_ = _mm_set1_epi16(static_cast<std::int16_t>(sc.open_del + sc.extend_del));
    extend_del_ = _mm_set1_epi16(static_cast<std::int16_t>(sc.extend_del));
    open_ins_ = _mm_set1_epi16(static_cast<std::int16_t>(sc.open_ins + sc.extend_ins));
    extend_ins_ = _mm_set1_epi16(static_cast<std::int16_t>(sc.extend_ins));
  }

  // The next row, on reference code tb: H(I, .) and E(I+1, .) from H(I-1, .) and E(I, .); returns
  // its best cell's score.
  std::int32_t next(std::uint8_t tb) {
    Buffers& b = buffers();
    const std::size_t n = static_cast<std::size_t>(segments_);
    const Lanes* profile = b.profile.data() + (tb < 4 ? tb : 4) * n;
    const __m128i zero = _mm_setzero_si128();
    // H(I-1, j - 1) for each lane's first position: the lane before's last (column 0 is 0).
    __m128i diag = _mm_slli_si128(b.h[n - 1].v, 2);
    __m128i f = zero, best = zero;
    for (std::size_t s = 0; s < n; ++s) {
      const __m128i m = _mm_adds_epi16(diag, profile[s].v);
      const __m128i e = b.e[s].v;
      __m128i h = _mm_max_epi16(_mm_max_epi16(m, e), _mm_max_epi16(f, zero));
      b.f[s].v = f;
      diag = b.h[s].v;
      b.h_next[s].v = h;
      best = _mm_max_epi16(best, _mm_and_si128(h, b.valid[s].v));
      b.e[s].v = _mm_max_epi16(_mm_max_epi16(_mm_subs_epi16(e, extend_del_), _mm_subs_epi16(m, open_del_)), zero);
      f = _mm_max_epi16(_mm_max_epi16(_mm_subs_epi16(f, extend_ins_), _mm_subs_epi16(m, open_ins_)), zero);
    }
    best = carry_f(f, best);
    std::swap(b.h, b.h_next);
    best = _mm_max_epi16(best, _mm_srli_si128(best, 8));
    best = _mm_max_epi16(best, _mm_srli_si128(best, 4));
    best = _mm_max_epi16(best, _mm_srli_si128(best, 2));
    return static_cast<std::int16_t>(_mm_extract_epi16(best, 0));
  }

  // The largest column (1-based) of the last row holding `score`: per vector, the highest lane
  // that does (2 mask bits a lane), position lane * segments + vector.
  std::int32_t column_of(std::int32_t score) const {
    const Buffers& b = buffers();
    const __m128i wanted = _mm_set1_epi16(static_cast<std::int16_t>(score));
    std::int32_t column = 0;
    for (std::int32_t s = 0; s < segments_; ++s) {
      const std::size_t at = static_cast<std::size_t>(s);
      const auto mask = static_cast<unsigned>(
          _mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi16(b.h[at].v, wanted), b.valid[at].v)));
      if (mask == 0) continue;
      const std::int32_t lane = (31 - __builtin_clz(mask)) / 2;
      column = std::max(column, lane * segments_ + s + 1);
    }
    return column;
  }

 private:
  static constexpr std::int32_t kLanes = 8;
  // A vector in a struct: std::vector of the bare __m128i would drop its alignment attribute.
  struct Lanes {
    __m128i v;
  };
  struct Buffers {
    std::vector<Lanes> profile, h, h_next, e, f, valid;
  };
  static Buffers& buffers() {
    thread_local Buffers b;
    return b;
  }

  // The lazy-F pass: F past each lane's last position continues in the next lane's first; where it
  // beats the F a cell had, it raises the cell's H and goes on (E and M do not depend on F). It
  // stops at the first vector where it beats no lane's F, from which on it is beaten everywhere.
  __m128i carry_f(__m128i f, __m128i best) {
    Buffers& b = buffers();
    const std::size_t n = static_cast<std::size_t>(segments_);
    for (std::int32_t pass = 0; pass < kLanes; ++pass) {
      f = _mm_slli_si128(f, 2);
      for (std::size_t s = 0; s < n; ++s) {
        if (_mm_movemask_epi8(_mm_cmpgt_epi16(f, b.f[s].v)) == 0) return best;
        b.f[s].v = _mm_max_epi16(b.f[s].v, f);
        b.h_next[s].v = _mm_max_epi16(b.h_next[s].v, f);
        best = _mm_max_epi16(best, _mm_and_si128(b.h_next[s].v, b.valid[s].v));
        f = _mm_subs_epi16(f, extend_ins_);
      }
    }
    return best;
  }

  std::int32_t qlen_, segments_ = 0;
  __m128i open_del_, extend_del_, open_ins_, extend_ins_;
};

// Every row of the DP, its best handed to visit(I, row) as local_rows' visitors take it; the best's
// column (best_j) only where wants_column(best) (LocalBest: a new best; TandemRuns: never).
template <class Visit, class WantsColumn>
void striped_rows(const std::uint8_t* query, std::uint32_t qlen, const std::uint8_t* target, std::uint32_t tlen,
                  const Scoring& sc, Visit& visit, WantsColumn wants_column) {
  StripedRows rows(query, qlen, sc);
  for (std::uint32_t i = 0; i < tlen; ++i) {
    RowSummary row{rows.next(target[i]), 0, 0, {0, 0}};
    if (row.best > 0 && wants_column(row.best)) row.best_j = rows.column_of(row.best);
    visit(static_cast<std::int32_t>(i + 1), row);
  }
}

}  // namespace

ExtendResult local_align_striped(const std::uint8_t* query, std::uint32_t qlen, const std::uint8_t* target,
                                 std::uint32_t tlen, const Scoring& sc) {
  LocalBest best;
  striped_rows(query, qlen, target, tlen, sc, best, [&best](std::int32_t score) { return score > best.r.score; });
  return best.r;
}

std::int32_t tandem_score_striped(const std::uint8_t* query, std::uint32_t qlen, const std::uint8_t* target,
                                  std::uint32_t tlen, const ExtendResult& best, const Scoring& sc, std::int32_t floor) {
  TandemRuns runs = tandem_runs(best, sc, floor);
  striped_rows(query, qlen, target, tlen, sc, runs, [](std::int32_t) { return false; });
  runs.close();
  return runs.best_away;
}

#else  // no SSE2: striped_fits() is false, and these are never called

ExtendResult local_align_striped(const std::uint8_t*, std::uint32_t, const std::uint8_t*, std::uint32_t,
                                 const Scoring&) {
  return {};
}
std::int32_t tandem_score_striped(const std::uint8_t*, std::uint32_t, const std::uint8_t*, std::uint32_t,
                                  const ExtendResult&, const Scoring&, std::int32_t) {
  return 0;
}

#endif

}  // namespace wtmap::aligner::gapped
