// wtmap aligner: which of a read's hits are reported -- one of the best, picked by a hash of the
// read's bases, then the others (XA) when there are few enough -- as __host__ __device__
// functions, so that the GPU chooses and locates a batch's hits in a kernel after its search
// (the host then only turns text positions into reference coordinates), the CPU backend calls
// the same functions on its threads, and both choose alike.
//
// Work per read: O(read length) for the hash, only when the best hits are several; O(slots + N)
// for the choice; a locate is at most s - 1 LF steps per listed row (sampled_suffix_array_view.hpp).
#pragma once

#include <cstdint>

#include "wtmap/aligner/mismatch_search.hpp"
#include "wtmap/core/config.hpp"

namespace wtmap::aligner {

// The largest -N: X0 + X1 <= N hits lie in at most N distinct sequences, all of which the search
// keeps (kHitSlots), so XA is complete.
constexpr unsigned kMaxAlternatives = kHitSlots;

// A read's listed hits, the reported one first: at most max(1, N) of them, since XA is listed only
// when X0 + X1 <= N. `where` holds SA rows until they are located, then text positions (a hit
// the search verified holds its text position from the start: HitInterval::located()); the rest
// of each (its substitutions) is its slot's in the SearchResult. The working form of one read's
// choice; a batch keeps it as a ReadChoice and its other hits (split_choice).
struct ChosenHits {
  std::uint64_t where[kMaxAlternatives];
  std::uint8_t slot[kMaxAlternatives];  // each one's hit slot in the SearchResult
  std::uint8_t count;                   // 0: unmapped
};

// The tie-break between equally good hits: FNV-1a of the read's search codes, then MurmurHash3's
// 64-bit finaliser (fmix64), so that the low bits taken modulo X0 depend on every base. The same
// on either backend and for any batch size, thread count or run; reads with the same bases get
// the same pick (the name is not on the GPU).
WTMAP_HD std::uint64_t tie_hash(const std::uint8_t* codes, unsigned length) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned i = 0; i < length; ++i) {
    h ^= codes[i];
    h *= 1099511628211ull;
  }
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

// Chooses the rows to report of a searched read into `out` (rows in out.where, or positions for
// located slots): the reported one among the best occurrences is the (hash() % kept best)-th,
// counted slot by slot in row order;
// then, when X0 + X1 <= max_alternatives, every other kept row of the two strata, slot by slot.
// `hash` is called only when the kept best rows are several (hashing every read was most of the
// host's choice time).
template <class Hash>
WTMAP_HD void choose_hits(const SearchResult& res, unsigned max_alternatives, Hash&& hash, ChosenHits& out) {
  out.count = 0;
  if (!res.mapped()) return;
  std::uint64_t kept_best = 0, kept = 0;
  for (unsigned s = 0; s < res.num_slots; ++s) {
    const std::uint64_t rows = res.slots[s].occurrences();
    kept += rows;
    if (res.slots[s].edits.count() == res.best) kept_best += rows;
  }
  // The slots hold at most X0 + X1 rows, so at most max_alternatives <= kMaxAlternatives.
  const unsigned listed = res.best_count() + res.second_count() <= max_alternatives ? static_cast<unsigned>(kept) : 1u;
  std::uint64_t pick = kept_best > 1 ? hash() % kept_best : 0;
  unsigned primary_slot = 0;
  std::uint64_t primary_row = 0;
  for (unsigned s = 0; s < res.num_slots; ++s) {
    const HitInterval& h = res.slots[s];
    if (h.edits.count() != res.best) continue;
    if (pick < h.occurrences()) {
      primary_slot = s;
      primary_row = h.lo + pick;
      break;
    }
    pick -= h.occurrences();
  }
  out.where[0] = primary_row;
  out.slot[0] = static_cast<std::uint8_t>(primary_slot);
  unsigned n = 1;
  for (unsigned s = 0; s < res.num_slots && n < listed; ++s) {
    const HitInterval& h = res.slots[s];
    for (std::uint64_t row = h.lo; row < h.lo + h.occurrences() && n < listed; ++row) {
      if (s == primary_slot && row == primary_row) continue;
      out.where[n] = row;
      out.slot[n++] = static_cast<std::uint8_t>(s);
    }
  }
  out.count = static_cast<std::uint8_t>(n);
}

// A listed hit after the reported one (XA).
struct OtherHit {
  std::uint64_t where;  // text position
  Edits edits;
};

// What placing a read needs, in 48 bytes: its reported hit, the search's counts and flags, and
// where its other listed hits are in the batch's list of them. Most reads list one hit, so a GPU
// batch sends the host 48 bytes a read and 16 per other hit: about 50 MB for 10^6 reads, where
// the 248-byte search results alone would be 248 MB.
struct ReadChoice {
  std::uint64_t where;                     // the reported hit's text position
  Edits edits;                             // its substitutions
  std::uint64_t best_count, second_count;  // X0, X1
  std::uint32_t work;                      // the search's steps
  std::uint32_t first_other;               // its other hits: others[first_other, + count - 1)
  std::uint8_t count;                      // hits listed (0: unmapped)
  std::uint8_t flags, best;                // the SearchResult's (SearchFlags; 0xFF: unmapped)
};
static_assert(sizeof(ReadChoice) == 48, "a read's choice is 48 bytes");

// The choice `c` made of the result `res` as a ReadChoice in `out` and its other hits at
// others[first_other, first_other + count - 1).
WTMAP_HD void split_choice(const SearchResult& res, const ChosenHits& c, std::uint32_t first_other, ReadChoice& out,
                           OtherHit* others) {
  out.where = c.count > 0 ? c.where[0] : 0;  // (an unmapped read's choice holds no hit)
  out.edits = c.count > 0 ? res.slots[c.slot[0]].edits : Edits{};
  out.best_count = res.best_count();
  out.second_count = res.second_count();
  out.work = res.work;
  out.first_other = first_other;
  out.count = c.count;
  out.flags = res.flags;
  out.best = res.best;
  for (unsigned j = 1; j < c.count; ++j) others[first_other + j - 1] = {c.where[j], res.slots[c.slot[j]].edits};
}

// The hits of a searched read chosen and located in one go, on the backend that holds the index
// (View: an FM-index view with locate(row), fm_index_view.hpp).
template <class View>
WTMAP_HD void choose_and_locate(const View& index, const SearchResult& res, const std::uint8_t* codes, unsigned length,
                                unsigned max_alternatives, ChosenHits& out) {
  choose_hits(res, max_alternatives, [&] { return tie_hash(codes, length); }, out);
  for (unsigned j = 0; j < out.count; ++j) {
    if (!res.slots[out.slot[j]].located()) out.where[j] = index.locate(out.where[j]);
  }
}

}  // namespace wtmap::aligner
