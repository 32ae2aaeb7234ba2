// wtmap aligner: exhaustive k-mismatch backward search of one read, as a __host__ __device__
// state machine (ReadSearch, stepped by a GPU thread or a CPU loop; search_read runs it to the end).
//
// The search is bwa aln's (Li and Durbin, Bioinformatics 2009) restricted to substitutions
// (bwa aln -o 0): a depth-first backward search over the FM-index of both strands, branching on
// all four bases at every read position with rank_all at both ends of the interval (one
// quad-vector block per node when the ends share it, as deep in the tree, else two), pruned
// by bwa's lower bound D[i] on the mismatches needed in read[0, i] (bwt_cal_width). Because the
// index text is closed under reverse complement, D is computed with the same index: extending
// read[j, i] to the right is a backward step of its reverse complement. The passes deepen one
// mismatch at a time (a stratified search, as bowtie's): an opening pass collects every hit
// with at most one mismatch before D is computed (most reads occur exactly, and then D is 0
// and that pass is all the search); past it, passes with limits max(2, D), ... stop at their
// first hit, so the best stratum s is the first limit with one, and a last pass with limit
// min(k, s + 1) collects every hit of strata s and s + 1. So every alignment with at most
// min(k, s + 1) mismatches is found, and a read whose first searched base is wrong no longer
// explores the whole k-mismatch tree before its one-mismatch hit. A first pass explores the
// exact branch first, a collect pass the mismatching ones (a shallow stack). An N in the read
// matches no base (a mismatch). A branch with no mismatch to spare within the read's last k bases
// (it has spent the pass's budget, or D keeps the rest for the bases before them) takes its
// interval k bases deep from the index's k-mer table in one lookup (skip_exact_steps;
// search_kmer_length picks k). A node whose interval is one row, deep enough and with enough of the
// read left, is checked against the index's text instead of stepped base by base (verification: one
// locate and one pass over the read; kVerifyDepth). Work per read is capped so repetitive reads
// cannot stall a batch; such reads are flagged.
#pragma once

#include <cstdint>

#include "wtmap/aligner/packed_codes.hpp"
#include "wtmap/core/bits.hpp"
#include "wtmap/core/config.hpp"
#include "wtmap/fmindex/fm_index_view.hpp"

namespace wtmap::aligner {

constexpr unsigned kMaxMismatches = 4;
constexpr unsigned kMaxReadLength = 512;
constexpr unsigned kMinReadLength = 10;
constexpr unsigned kHitSlots = 8;         // distinct SA intervals kept per read
constexpr unsigned kStackCapacity = 128;  // pending search nodes per read
// The search of a read by a group of threads (ReadSearch's group steps): members per group (a
// block of eight warps on the GPU: search only on 10^6 E. coli reads was 0.058-0.061 s with
// groups of 256 against 0.060-0.066 s with 128; bench/history/RESULTS-2026-11-26.md) and pending
// nodes per read (in scratch memory: a group pops up to 256 nodes and pushes up to 1024 a step).
constexpr unsigned kGroupMembers = 256;
constexpr unsigned kGroupStackCapacity = 4096;
constexpr unsigned kGroupDone = ~0u;  // ReadSearch::take_group: the read is finished
constexpr std::uint8_t kGroupHit = 0xFF;  // ReadSearch::expand_member: the node is a hit

// Verification. A node whose interval is one row stands for one text position, so the rest of its
// search is one path: stepping it costs a rank per base left (r of them), while locating its row
// (at most s - 1 LF steps, s/2 on average, each a sampled-mark and a BWT access) and comparing
// read[0, r) with the text before that position costs about s accesses and one pass over the
// read -- and the locate is one the hit would need anyway. So a node is verified when it is one
// row, r >= s, and it is kVerifyDepth bases deep: a row reached by chance (a mismatching branch
// just past the k-mer table's lookup, most of them one row) dies within a step or two when
// stepped, and one in 4^8 matches the 8 bases past a 12-mer; a row that matched 20 bases is
// almost always one the read aligns to. The same hits either way: the path the steps would take
// is the text's. On E. coli it takes 37 % of the search steps away; the GPU gains less (its code
// costs registers and convergence), the CPU backend searches 22 % faster
// (bench/history/RESULTS-2026-11-26.md).
constexpr unsigned kVerifyDepth = 20;
// A node without mismatches is the read's own path, not one reached by chance: verified from
// 12 bases on (7 % fewer search steps on E. coli when measured; from 10 on, no fewer). A
// mismatching node verified before 20 bases costs more than it saves.
constexpr unsigned kVerifyDepthExact = 12;

// The substitutions of a hit: read positions and the reference base at each, in one 64-bit word
// (nine bits a position, two a base, three the count), so that copying or extending one is
// whole-word work. In a GPU thread an Edits is one register pair (its GPU stage was 30 %
// shorter than with byte fields; bench/history/RESULTS-2026-11-26.md), and a hit slot is 24
// bytes instead of 32. On the CPU, search nodes copied right after one of their edits was
// written no longer wait on store forwarding (fields of one and two bytes read back as 8-byte
// words).
class Edits {
 public:
  WTMAP_HD unsigned count() const { return static_cast<unsigned>(bits_ >> kCountShift); }
  // The e-th substitution (e < count()): its read position and the reference base (0..3).
  WTMAP_HD unsigned position(unsigned e) const { return static_cast<unsigned>(bits_ >> (kPositionBits * e)) & kPositionMask; }
  WTMAP_HD unsigned base(unsigned e) const { return static_cast<unsigned>(bits_ >> (kBaseShift + 2 * e)) & 3u; }

  // Appends one (count() < kMaxMismatches, at < kMaxReadLength, reference_base < 4).
  WTMAP_HD void push(unsigned at, unsigned reference_base) {
    const unsigned e = count();
    bits_ += std::uint64_t{at} << (kPositionBits * e) | std::uint64_t{reference_base} << (kBaseShift + 2 * e) |
             std::uint64_t{1} << kCountShift;
  }

 private:
  static constexpr unsigned kPositionBits = 9, kPositionMask = (1u << kPositionBits) - 1;
  static constexpr unsigned kBaseShift = kPositionBits * kMaxMismatches, kCountShift = kBaseShift + 2 * kMaxMismatches;
  static_assert(kMaxReadLength <= (1u << kPositionBits), "a read position takes nine bits");
  static_assert(kCountShift + 3 <= 64, "positions, bases and count fit one word");
  std::uint64_t bits_ = 0;
};

// All occurrences of one string within min(k, best + 1) mismatches of the read: SA rows [lo, hi),
// or, for a hit found by verification (one occurrence, located already), its text position in lo
// and hi = kTextPosition.
struct HitInterval {
  static constexpr std::uint64_t kTextPosition = ~std::uint64_t{0};
  std::uint64_t lo, hi;
  Edits edits;

  WTMAP_HD bool located() const { return hi == kTextPosition; }
  WTMAP_HD std::uint64_t occurrences() const { return located() ? 1 : hi - lo; }
};
static_assert(sizeof(HitInterval) == 24, "a hit slot is three words");

enum SearchFlags : std::uint8_t {
  kTooShort = 1,         // read shorter than kMinReadLength: not searched
  kTooLong = 2,          // read longer than kMaxReadLength: not searched
  kWorkCapped = 4,       // the work cap stopped the search: counts are lower bounds
  kStackOverflow = 8,    // a branch was dropped for lack of stack: counts are lower bounds
  kSlotsOverflow = 16,   // more intervals than kHitSlots: some hits are counted but not kept
  kGroupSearched = 32,   // searched again by group steps, past the one-thread slice (BatchAligner)
};

// Whether the search behind these flags stopped before it visited every node (the cap, a full
// stack): its counts are lower bounds, and what it found depends on the order of its visits.
constexpr WTMAP_HD bool search_cut_short(std::uint8_t flags) {
  return (flags & (kWorkCapped | kStackOverflow)) != 0;
}

template <unsigned Slots>
struct BasicSearchResult {
  static constexpr unsigned kSlots = Slots;
  HitInterval slots[Slots];
  std::uint64_t count[kMaxMismatches + 1];  // rows found at each mismatch count
  std::uint32_t num_slots;
  std::uint32_t work;    // search steps: nodes visited, and the LF steps of verification
  std::uint8_t flags;
  std::uint8_t best;     // mismatches of the best hits; 0xFF when unmapped

  WTMAP_HD bool mapped() const { return best != 0xFF; }
  WTMAP_HD std::uint64_t best_count() const { return mapped() ? count[best] : 0; }
  WTMAP_HD std::uint64_t second_count() const {
    return mapped() && best < kMaxMismatches ? count[best + 1] : 0;
  }
};
using SearchResult = BasicSearchResult<kHitSlots>;

struct SearchParams {
  std::uint8_t max_mismatches = 4;  // k
  std::uint32_t work_cap = 1u << 16;
};

// The k-mer table length (FmIndex::set_kmer_length) that the search wants on an index of `rows`
// rows: the smallest k with 4^k >= 4 rows, at most 15 (13 on E. coli: 1 GiB; 15 from 34 Mbp:
// 16 GiB on the GPU, while the CPU holds 13 levels and steps the rest,
// FmIndexView::kmer_interval). A branch with no mismatch to spare takes its interval k bases deep
// from the table (skip_exact_steps), and most of them, random k-mers, are absent: with
// 4^k >= 4 rows at least three in four die at the lookup instead of a step or two later. On a
// 300 Mbp genome k = 15 took search only on an H100 from 0.069 s (k = 13) to 0.041 s
// (bench/history/RESULTS-2026-11-26.md).
inline std::uint32_t search_kmer_length(std::uint64_t rows) {
  std::uint32_t k = 1;
  while (k < 15 && (std::uint64_t{1} << (2 * k)) < 4 * rows) ++k;
  return k;
}

namespace detail {

// a[i] for a run-time i through constant indices only: on the GPU an array indexed at run time
// lives in local memory, and so would the whole object that holds it.
template <class T, unsigned N>
WTMAP_HD T element(const T (&a)[N], unsigned i) {
  T v = a[0];
  for (unsigned j = 1; j < N; ++j) v = j == i ? a[j] : v;
  return v;
}

struct Node {
  std::uint64_t lo, hi;
  Edits edits;
  std::uint16_t remaining;  // read positions still to match: read[0, remaining)
};

}  // namespace detail

// The stack of one read's search, kept apart from ReadSearch: an array indexed at run time
// inside the search's own object would keep all of its state in GPU local memory instead of
// registers (with the state in registers, the search kernel's DRAM traffic fell from 11-13 GB
// to 0.2 GB per launch of 2^18 reads; bench/history/RESULTS-2026-11-26.md).
struct SearchScratch {
  detail::Node stack[kStackCapacity];
};

// The search of one read as a resumable state machine: start() sets it up and each step() does
// one unit of work -- one base of the lower bound, or one search node -- at the cost of at most
// two rank_all calls. One read is searched by calling step() until it returns false
// (search_read below); the GPU kernel instead gives each thread a fresh read as soon as its
// current one is done, so the threads of a warp stay busy however unequal the reads' work is
// (a read-per-thread loop runs each warp as long as its slowest read: 9 of 32 threads active).
//
// Group steps search one read with a group of up to kGroupMembers threads, for the few reads that
// need thousands of nodes (a dependent chain of ~1 us per node on one GPU thread): the same
// passes and pruning, but each step takes up to kGroupMembers nodes off the top of the stack
// (take_group, by one leader), the members expand one node each (expand_member), and the leader
// merges their hits and children in member order (merge_group). The order of visits differs
// from step()'s, so the hits are found in another order (other slots, another tie pick, another
// point where a work cap stops), but it is the same wherever the members run: one CPU thread
// playing each in turn (search_read_in_groups) or a GPU block.
//
// Phases:
//   collect_pass (opening): every hit within min(k, 1) mismatches, with D taken as 0 (a lower
//                  bound too). Best stratum 0, or k <= 1: done. 87 % of 100 bp ART reads of
//                  E. coli occur exactly, and the lower bound's step per base, the exact first
//                  pass and the collect pass that walked the read's exact path again are
//                  saved (36 % fewer steps when measured, the same results). Else:
//   lower_bounds:  bwt_cal_width -- D[i] = greedy count of disjoint pieces of read[0, i] absent
//                  from the text, one base per step (a piece that occurs once: one locate and a
//                  comparison with the text, extend_piece); then, if the opening pass found stratum 1
//                  (the best), a collect pass with limit min(k, 2); if it found nothing:
//   first_pass:    depth-first search with limit l (from max(2, D[length - 1]) up to k) that
//                  stops at its first hit; none -> the next limit, or unmapped after k;
//   collect_pass:  with limit min(k, best + 1), records every hit in the result;
//   done.
template <unsigned Slots, unsigned StackCapacity = kStackCapacity>
class ReadSearch {
 public:
  using Result = BasicSearchResult<Slots>;

  // The search uses scratch's arrays; scratch must outlive it.
  WTMAP_HD explicit ReadSearch(SearchScratch& scratch) : stack_(scratch.stack) {}
  // A stack of StackCapacity nodes (group steps: kGroupStackCapacity), which must outlive it.
  WTMAP_HD explicit ReadSearch(detail::Node* stack) : stack_(stack) {}

  // read: the codes (search_code), packed: the same packed (packed_codes.hpp).
  WTMAP_HD void start(const fmindex::FmIndexView& index, const std::uint8_t* read, std::uint32_t length,
                      const PackedRead& packed, const SearchParams& params, Result& out) {
    rows_ = index.rows;
    read_ = read;
    packed_ = packed;
    length_ = length;
    k_ = params.max_mismatches;
    work_cap_ = params.work_cap;
    work_ = 0;
    out.num_slots = 0;
    out.flags = 0;
    out.best = 0xFF;
    out.work = 0;
    for (auto& c : out.count) c = 0;
    phase_ = Phase::done;
    if (length < kMinReadLength) {
      out.flags = kTooShort;
    } else if (length > kMaxReadLength) {
      out.flags = kTooLong;
    } else {
      bounds_known_ = false;
      for (auto& p : first_at_least_) p = kNever;  // D = 0 until lower_bounds computes it
      // The read's last bases as a k-mer key for skip_exact_steps (an N there as base 0, and
      // marked: counted from the read's end).
      tail_key_ = 0;
      tail_non_bases_ = 0;
      const unsigned k = index.kmers.length;
      for (unsigned j = length >= k ? length - k : length; j < length; ++j) {
        const unsigned c = read[j];
        tail_key_ = tail_key_ << 2 | (c & 3u);
        if (c > 3) tail_non_bases_ |= 1u << (length - 1u - j);
      }
      begin_pass(index, k_ < 1 ? k_ : 1u, Phase::collect_pass);  // the opening pass
    }
  }

  // One unit of work; false once the read is finished (out then holds its result).
  //
  // Every way a step can end a pass leads to the one finish_pass call at its end: functions are
  // inlined (WTMAP_HD), and with a call per exit the kernel held six copies of finish_pass, each
  // with the next pass's begin_pass and skip_exact_steps. With one call, and for_each_child's
  // loop kept rolled, the search kernel went from 5,968 to 2,904 SASS instructions, where it had
  // waited for an instruction in 16 % of its stalls (bench/history/RESULTS-2026-11-26.md).
  WTMAP_HD bool step(const fmindex::FmIndexView& index, Result& out) {
    if (phase_ == Phase::done) return false;
    // Which rows this step extends, and whether it extends at all; whether the step's node is a
    // hit, and whether the pass ends here whatever else.
    std::uint64_t lo = 0, hi = 0;
    bool expand = false, hit = false, ended = false;
    detail::Node node{};
    if (phase_ == Phase::lower_bounds && !locating_) {
      lo = interval_.lo;
      hi = interval_.hi;
      expand = read_[position_] <= 3;
    } else if (!locating_ && top_ == 0 && !has_next_) {
      ended = true;  // no node to visit: the pass's root died in skip_exact_steps
    } else if (phase_ != Phase::lower_bounds && ++work_ > work_cap_) {  // the bound's steps are not work
      out.flags |= kWorkCapped;
      locating_ = false;
      ended = true;
    } else if (locating_) {  // a step of the locate of next_'s row (verification, or the bound's piece)
      lo = next_.lo;
      hi = lo + 1;
      expand = true;
    } else {
      // The node to visit: the child the last step kept in registers, else the top of the stack.
      // (Two assignments, not `has_next_ ? next_ : stack_[...]`: a pointer that may point at
      // next_ would keep the whole search state in local memory instead of registers.)
      if (has_next_) {
        node = next_;
      } else {
        node = stack_[--top_];
      }
      has_next_ = false;
      hit = node.remaining == 0;
      if (!hit && verifies(index, node)) {  // next_ holds the node while its row is located
        locating_ = true;
        locate_steps_ = 0;
        next_ = node;
      }
      lo = node.lo;
      hi = node.hi;
      expand = !hit;
    }
    // The memory work of every step, the same code for every phase (so a warp's threads stay
    // converged whatever phase each is in): the counts of the four bases before lo and hi, and a
    // locate step's sampled mark of its row -- read by every step (of row 0 when not locating), so
    // that the load goes out beside the counts' instead of after them: in a warp some thread is
    // locating at almost every step, and a load of its own would add a second memory latency to
    // all of them (behind a branch, the load also took the kernel from 122 to 164 registers).
    const bool sampled = index.sa.sampled.access(locating_ ? lo : 0) && locating_;
    std::uint64_t occ_lo[4] = {0, 0, 0, 0}, occ_hi[4] = {0, 0, 0, 0};
    if (expand) index.occ_all_pair(lo, hi, occ_lo, occ_hi);
    if (locating_) {
      // An LF step: to the row one text position earlier. At most s - 1 of them: only a corrupt
      // index gets that far without a sample, and its row then has no position (kNotLocated
      // verifies nothing and ends a piece's run at once).
      if (!sampled && locate_steps_ + 1 < index.sa.sample_rate) {
        next_.lo = lf_from_counts(index, occ_lo, occ_hi);
        ++locate_steps_;
        return true;
      }
      // The row's text position, and the verification of next_ there (or the bound's piece's
      // run there).
      locating_ = false;
      const std::uint64_t p =
          sampled ? index.sa.position(next_.lo, locate_steps_) : fmindex::SampledSuffixArrayView::kNotLocated;
      if (phase_ == Phase::lower_bounds) return extend_piece(index, p, out);
      node = next_;
      hit = verify(index, node, p);
    } else if (phase_ == Phase::lower_bounds) {
      return lower_bound_step(index, expand, occ_lo, occ_hi, out);
    } else if (expand) {
      push_children(index, node, occ_lo, occ_hi, out);
    }
    // A hit ends a first pass; a collect pass records it and goes on.
    const bool found_first = hit && phase_ == Phase::first_pass;
    if (found_first) {
      first_ = {node.lo, node.hi, node.edits};
    } else if (hit) {
      add_hit(node, out);
    }
    if (found_first || ended || (top_ == 0 && !has_next_)) return finish_pass(index, out, found_first);
    return true;
  }

  // Whether the search computed D (lower_bounds ran), and then D at read position i: the
  // mismatches read[0, i] needs at least, capped at kMaxMismatches + 1 (for tests).
  WTMAP_HD bool lower_bounds_known() const { return bounds_known_; }
  WTMAP_HD unsigned lower_bound(unsigned i) const { return mismatches_needed(i); }

  // ---- group steps (see the class comment); start() as for step() ----

  // Leader only: the next group's size n <= max_members, its nodes group_node(0..n-1); 0 when this
  // call did other work (a base of the lower bound, the end of a pass); kGroupDone once the read
  // is finished (out then holds its result).
  WTMAP_HD unsigned take_group(const fmindex::FmIndexView& index, Result& out, unsigned max_members) {
    if (phase_ == Phase::done) {
      out.work = work_;
      return kGroupDone;
    }
    if (phase_ == Phase::lower_bounds) {
      step(index, out);
      return 0;
    }
    if (has_next_) {  // a pass's root (begin_pass)
      push(next_, out);
      has_next_ = false;
    }
    if (top_ == 0) {
      finish_pass(index, out, false);
      return 0;
    }
    if (work_ >= work_cap_) {
      out.flags |= kWorkCapped;
      finish_pass(index, out, false);
      return 0;
    }
    unsigned n = top_ < max_members ? top_ : max_members;
    if (n > work_cap_ - work_) n = work_cap_ - work_;
    work_ += n;
    top_ -= n;
    return n;
  }

  // The group's j-th node (until merge_group).
  WTMAP_HD const detail::Node& group_node(unsigned j) const { return stack_[top_ + j]; }

  // Any member, between take_group and merge_group: expands `node` into children[0, count) and
  // returns count (at most 4), or kGroupHit with the node itself in children[0] when it matched
  // the whole read.
  WTMAP_HD std::uint8_t expand_member(const fmindex::FmIndexView& index, const detail::Node& node,
                                      detail::Node* children) const {
    if (node.remaining == 0) {
      children[0] = node;
      return kGroupHit;
    }
    if (verifies(index, node)) {
      children[0] = node;
      return verify(index, children[0], index.locate(node.lo)) ? kGroupHit : 0;
    }
    std::uint64_t occ_lo[4] = {0, 0, 0, 0}, occ_hi[4] = {0, 0, 0, 0};
    index.occ_all_pair(node.lo, node.hi, occ_lo, occ_hi);
    std::uint8_t count = 0;
    for_each_child(index, node, occ_lo, occ_hi, [&](const detail::Node& child) { children[count++] = child; });
    return count;
  }

  // The merge of a group without hits (no count is kGroupHit) done by its members at once, where
  // merge_group's leader pushes every member's children in turn: member j copies its counts[j]
  // children to pushed_slot(before_j + c) (before_j: the children of members 0..j-1), then the
  // leader calls commit_pushed(total). The same stack as merge_group makes, when pushed_fit(total)
  // (else merge_group, which drops what does not fit and flags it).
  WTMAP_HD bool pushed_fit(unsigned total) const { return top_ + total <= StackCapacity; }
  WTMAP_HD detail::Node& pushed_slot(unsigned k) { return stack_[top_ + k]; }
  WTMAP_HD void commit_pushed(const fmindex::FmIndexView& index, Result& out, unsigned total) {
    top_ += total;
    if (top_ == 0) finish_pass(index, out, false);
  }

  // Leader only, once every member has expanded its node: member j's hit or children (children
  // + 4 j, counts[j]) in member order -- a first pass ends at its first hit, other passes record
  // every hit and push every child. Nothing for a group of 0 (take_group did other work).
  WTMAP_HD void merge_group(const fmindex::FmIndexView& index, Result& out, const detail::Node* children,
                            const std::uint8_t* counts, unsigned n) {
    if (n == 0) return;
    for (unsigned j = 0; j < n; ++j) {
      const detail::Node* own = children + 4 * j;
      if (counts[j] == kGroupHit) {
        if (phase_ == Phase::first_pass) {
          first_ = {own[0].lo, own[0].hi, own[0].edits};
          finish_pass(index, out, true);
          return;
        }
        add_hit(own[0], out);
      } else {
        for (unsigned c = 0; c < counts[j]; ++c) push(own[c], out);
      }
    }
    if (top_ == 0) finish_pass(index, out, false);
  }

 private:
  enum class Phase : std::uint8_t { lower_bounds, first_pass, collect_pass, done };

  WTMAP_HD void begin_pass(const fmindex::FmIndexView& index, unsigned limit, Phase phase) {
    if (limit > k_) {
      phase_ = Phase::done;
      return;
    }
    limit_ = limit;
    phase_ = phase;
    top_ = 0;
    locating_ = false;
    next_ = {0, rows_, Edits{}, static_cast<std::uint16_t>(length_)};
    has_next_ = skip_exact_steps(index, next_);
  }

  // D at read position i: mismatches read[0, i] needs at least (once lower_bounds is done),
  // capped at k + 1.
  WTMAP_HD unsigned mismatches_needed(unsigned i) const {
    unsigned d = 0;
    for (unsigned j = 0; j <= kMaxMismatches; ++j) d += first_at_least_[j] <= i ? 1u : 0u;
    return d;
  }

  // A node that can spend no more mismatches in the read's last k bases must match the rest of them
  // exactly: it has spent the pass's budget, or all of it but the mismatches that D says
  // read[0, length - k) needs (a mismatch child at i in those bases would need edits + 1 +
  // D[i - 1] mismatches, more than the limit, since D only grows with i). While it is shallower than the
  // k-mer table's length, the read's last k bases with its edits applied are then one fixed k-mer,
  // so its interval k bases deep is one lookup instead of k - depth steps, and those are the
  // search's dearest (wide intervals, two blocks a rank) and most numerous: in a pass with limit 1
  // every mismatch in the read's last k bases opens such a chain, and so does in a pass with limit
  // 2 of a read whose D is 1 before its last k bases (most reads with one mismatch). The same
  // intervals as the steps, so the same hits (a branch that D would have cut inside those k bases
  // lives to the lookup, then dies as it goes on). With D's share, 31 % fewer steps a read on
  // E. coli (bench/history/RESULTS-2026-11-26.md). False when the node dies: an N among those
  // bases, no occurrence, or more mismatches than the limit with those the rest needs (D).
  WTMAP_HD bool skip_exact_steps(const fmindex::FmIndexView& index, detail::Node& node) const {
    const unsigned k = index.kmers.length;
    if (length_ < k || length_ - node.remaining >= k) return true;
    const unsigned remaining = length_ - k;
    const unsigned needed = remaining > 0 ? mismatches_needed(remaining - 1) : 0u;  // D of read[0, remaining)
    if (node.edits.count() + needed != limit_) return node.edits.count() + needed < limit_;
    // The read's last k bases (tail_key_) with the node's edits, all of which lie among them.
    std::uint64_t key = tail_key_;
    std::uint32_t non_bases = tail_non_bases_;
    for (unsigned e = 0; e < kMaxMismatches; ++e) {
      if (e < node.edits.count()) {
        const unsigned from_end = length_ - 1u - node.edits.position(e);
        key = (key & ~(std::uint64_t{3} << (2 * from_end))) | std::uint64_t{node.edits.base(e)} << (2 * from_end);
        non_bases &= ~(1u << from_end);
      }
    }
    if (non_bases != 0) return false;
    const fmindex::SaInterval iv = index.kmer_interval(key);
    if (iv.empty()) return false;
    node.lo = iv.lo;
    node.hi = iv.hi;
    node.remaining = static_cast<std::uint16_t>(remaining);
    return true;
  }

  WTMAP_HD bool finish_if_done(Result& out) {
    if (phase_ != Phase::done) return true;
    out.work = work_;
    return false;
  }

  // A pass ended: its stack ran empty, its first hit was found (first pass), or the work cap hit.
  WTMAP_HD bool finish_pass(const fmindex::FmIndexView& index, Result& out, bool found_first) {
    if (phase_ == Phase::first_pass) {
      // Its hit makes limit_ the best stratum: collect it and the next. Else the next limit,
      // unless the work cap stopped it.
      if (found_first) out.best = static_cast<std::uint8_t>(limit_);
      if (found_first || (out.flags & kWorkCapped) == 0) {
        begin_pass(index, found_first ? (limit_ < k_ ? limit_ + 1 : k_) : limit_ + 1,
                   found_first ? Phase::collect_pass : Phase::first_pass);
      } else {
        phase_ = Phase::done;
      }
    } else if (!bounds_known_) {
      // The opening pass collected every hit within limit_ (0 or 1) mismatches. Its lowest
      // stratum s is the best; done if the next one was in reach too (or beyond k).
      unsigned best = 0xFF;
      for (unsigned m = kMaxMismatches + 1; m-- > 0;) best = m <= limit_ && out.count[m] > 0 ? m : best;
      if (best != 0xFF) out.best = static_cast<std::uint8_t>(best);
      if (best < limit_ || limit_ == k_ || (out.flags & kWorkCapped) != 0) {
        phase_ = Phase::done;
      } else {
        // s = limit_ < k needs the next stratum, or nothing was found: deeper passes, pruned by
        // D, start afresh. One hit of s stands in if the collect pass is cut short (first_).
        for (unsigned q = 0; q < out.num_slots; ++q) {
          if (out.slots[q].edits.count() == best) first_ = out.slots[q];
        }
        out.num_slots = 0;
        for (auto& c : out.count) c = 0;
        out.flags &= static_cast<std::uint8_t>(~kSlotsOverflow);
        phase_ = Phase::lower_bounds;
        position_ = 0;
        bound_ = 0;
        interval_ = {0, rows_};
      }
    } else {
      // A cut-short collect pass may have missed every best hit: keep the first one.
      const unsigned best = out.best;
      bool have_best = false;
      for (unsigned s = 0; s < out.num_slots; ++s) have_best = have_best || out.slots[s].edits.count() == best;
      if (!have_best) {
        if (out.num_slots == Slots) --out.num_slots;
        out.slots[out.num_slots++] = first_;
        if (out.count[best] == 0) out.count[best] = first_.occurrences();
      }
      phase_ = Phase::done;
    }
    return finish_if_done(out);
  }

  // A collect pass's hit: counted in its stratum, and kept in a slot.
  WTMAP_HD void add_hit(const detail::Node& node, Result& out) const {
    const HitInterval hit{node.lo, node.hi, node.edits};
    const unsigned mm = node.edits.count();
    out.count[mm] += hit.occurrences();
    if (out.num_slots < Slots) {
      out.slots[out.num_slots++] = hit;
    } else {  // full: a better hit replaces the worst kept one
      out.flags |= kSlotsOverflow;
      unsigned worst = 0;
      for (unsigned s = 1; s < Slots; ++s) {
        if (out.slots[s].edits.count() > out.slots[worst].edits.count()) worst = s;
      }
      if (out.slots[worst].edits.count() > mm) out.slots[worst] = hit;
    }
  }

  // Whether the one row of [lo, hi) is better located and compared with the text than stepped
  // `left` more bases: the locate takes at most s LF steps, and the index must hold its text.
  WTMAP_HD static bool locate_pays(const fmindex::FmIndexView& index, std::uint64_t lo, std::uint64_t hi,
                                   unsigned left) {
    return hi - lo == 1 && left >= index.sa.sample_rate && !index.text.empty();
  }

  // Whether node is verified rather than stepped: kVerifyDepth bases deep (kVerifyDepthExact
  // without mismatches) and locate_pays.
  WTMAP_HD bool verifies(const fmindex::FmIndexView& index, const detail::Node& node) const {
    const unsigned depth = node.edits.count() == 0 ? kVerifyDepthExact : kVerifyDepth;
    return length_ - node.remaining >= depth && locate_pays(index, node.lo, node.hi, node.remaining);
  }

  // A step of lower_bounds (bwt_cal_width), from the counts at interval_'s ends: read[j, i]
  // forward is its reverse complement backward, so it extends by the complement of read[i].
  WTMAP_HD bool lower_bound_step(const fmindex::FmIndexView& index, bool expand, const std::uint64_t (&occ_lo)[4],
                                 const std::uint64_t (&occ_hi)[4], Result& out) {
    const unsigned c = expand ? 3 - read_[position_] : 0;
    const std::uint64_t first = detail::element(index.C, c);
    interval_ = expand ? fmindex::SaInterval{first + detail::element(occ_lo, c), first + detail::element(occ_hi, c)}
                       : fmindex::SaInterval{};
    if (interval_.empty()) end_piece();
    if (++position_ == length_) return end_lower_bounds(index, out);
    // A piece that occurs once extends as far as its one occurrence matches the read: found by
    // locating its row and comparing the text there with the read, where a step per base would
    // take all the rest of the piece: the lower bound of a 100-base read with one mismatch takes
    // 34 steps instead of 100.
    if (locate_pays(index, interval_.lo, interval_.hi, length_ - position_)) {
      locating_ = true;
      locate_steps_ = 0;
      next_.lo = interval_.lo;
    }
    return true;
  }

  // The piece read[j, position_) ends: it does not occur in the text, so read[0, position_] needs
  // one more mismatch than read[0, j) did, and the next piece starts past position_.
  WTMAP_HD void end_piece() {
    for (unsigned j = 0; j <= kMaxMismatches; ++j) {  // first_at_least_[bound_], constant indices
      if (j == bound_) first_at_least_[j] = static_cast<std::uint16_t>(position_);
    }
    if (bound_ < 0xFF) ++bound_;
    interval_ = {0, rows_};
  }

  // The piece read[j, position_) occurs once, its reverse complement at text position p: the
  // piece extends while T[p - 1], T[p - 2], ... are the complements of read[position_],
  // read[position_ + 1], ..., that is while the mirror of that occurrence on the other strand,
  // which ends before T[2m + 1 - p], goes on matching the read. The same pieces (and so the same
  // D) as lower_bound_step's steps: each of them extends the one row by T[p - 1] or dies.
  WTMAP_HD bool extend_piece(const fmindex::FmIndexView& index, std::uint64_t p, Result& out) {
    const std::uint64_t q = 2 * index.text.forward_length + 1 - p;
    const std::uint64_t run = index.text.fragment_end(q) - q;  // bases of the mirror's fragment from q
    const unsigned end = length_ - position_ <= run ? length_ : position_ + static_cast<unsigned>(run);
    unsigned at = position_;
    for (; at < end; at += 32) {
      const std::uint64_t differing = differing_from_read(index.text.bases32(q + (at - position_)), at);
      if (differing != 0) {
        at += static_cast<unsigned>(bits::count_trailing_zeros64(differing)) / 2;
        break;
      }
    }
    position_ = at < end ? at : end;
    if (position_ < length_) {  // read[position_] ends the piece
      end_piece();
      ++position_;
    }
    return position_ < length_ ? true : end_lower_bounds(index, out);
  }

  // D is known: the opening pass found the best stratum, so collect it and the next; else
  // nothing was within limit_ mismatches: first passes from the limit D allows.
  WTMAP_HD bool end_lower_bounds(const fmindex::FmIndexView& index, Result& out) {
    bounds_known_ = true;
    const unsigned needed = mismatches_needed(length_ - 1);
    const bool found = out.best != 0xFF;
    begin_pass(index, found ? (out.best < k_ ? out.best + 1u : k_) : (needed > limit_ + 1 ? needed : limit_ + 1),
               found ? Phase::collect_pass : Phase::first_pass);
    return finish_if_done(out);
  }

  // The bases of read[from, from + 32) that differ from `text` (32 packed bases) or are no base,
  // as bit 2j for read[from + j] (bits past the read's end undefined).
  WTMAP_HD std::uint64_t differing_from_read(std::uint64_t text, unsigned from) const {
    return fmindex::differing_bases(text, fmindex::bases32(packed_.bases, packed_.first + from)) |
           fmindex::bases32(packed_.unknown, packed_.first + from);
  }

  // The LF step of a row r from its counts (occ_lo at r, occ_hi at r + 1): the row one text
  // position earlier. r's BWT base is the one whose count steps over r (# and $ rows are sampled,
  // never stepped).
  WTMAP_HD static std::uint64_t lf_from_counts(const fmindex::FmIndexView& index, const std::uint64_t occ_lo[4],
                                               const std::uint64_t occ_hi[4]) {
    std::uint64_t row = index.C[0] + occ_lo[0];
    for (unsigned c = 1; c < 4; ++c) row = occ_hi[c] != occ_lo[c] ? index.C[c] + occ_lo[c] : row;
    return row;
  }

  // Verification of node, one row whose suffix at text position p starts with read[remaining,
  // length) (with the node's edits): the whole read aligned at p - remaining, within the pass's
  // limit and inside one fragment, compared 32 bases at a time. True with node made that hit
  // (remaining 0, its start position in lo, hi = HitInterval::kTextPosition, the substitutions in
  // read[0, remaining) added); false when there is none.
  WTMAP_HD bool verify(const fmindex::FmIndexView& index, detail::Node& node, std::uint64_t p) const {
    const unsigned r = node.remaining;
    if (p < r || !index.text.one_fragment(p - r, p)) return false;
    const std::uint64_t start = p - r;
    unsigned spare = limit_ - node.edits.count();
    for (unsigned done = 0; done < r; done += 32) {
      const std::uint64_t text = index.text.bases32(start + done);
      std::uint64_t mismatches = differing_from_read(text, done);
      if (r - done < 32) mismatches &= bits::low_mask64(2 * (r - done));
      const auto count = static_cast<unsigned>(bits::popcount64(mismatches));
      if (count > spare) return false;
      spare -= count;
      for (; mismatches != 0; mismatches &= mismatches - 1) {
        const unsigned bit = static_cast<unsigned>(bits::count_trailing_zeros64(mismatches));
        node.edits.push(done + bit / 2, static_cast<unsigned>(text >> bit) & 3u);
      }
    }
    node.lo = start;
    node.hi = HitInterval::kTextPosition;
    node.remaining = 0;
    return true;
  }

  WTMAP_HD void push(const detail::Node& node, Result& out) {
    if (top_ == StackCapacity) {
      out.flags |= kStackOverflow;
    } else {
      stack_[top_++] = node;
    }
  }

  // Children of node in stack order, pruned by the mismatches the rest of the read needs at
  // least (bwa's D). A first pass visits the exact child first, to reach its first hit soon; a
  // collect pass visits every node within its limit in any order, and visits the mismatching
  // children first: their branches are short (they soon spend the budget and die), so the
  // stack holds a few nodes instead of three for each level of the read's exact path (1.2 KB
  // per thread, which 67,000 threads on an H100 spill out of L2). The last child, the one a
  // push would have popped next, stays in registers as next_ instead: the same order of visits,
  // without a round trip through the stack in local memory on every step down a path.
  WTMAP_HD void push_children(const fmindex::FmIndexView& index, const detail::Node& node,
                              const std::uint64_t (&occ_lo)[4], const std::uint64_t (&occ_hi)[4], Result& out) {
    for_each_child(index, node, occ_lo, occ_hi, [&](const detail::Node& child) {
      if (has_next_) push(next_, out);  // an earlier sibling: to the stack after all
      next_ = child;
      has_next_ = true;
    });
  }

  // The children of node that live (pruned by D, their interval not empty, skip_exact_steps), in
  // the order push_children wants them, each handed to visit(child).
  template <class Visit>
  WTMAP_HD void for_each_child(const fmindex::FmIndexView& index, const detail::Node& node,
                               const std::uint64_t (&occ_lo)[4], const std::uint64_t (&occ_hi)[4], Visit&& visit) const {
    const unsigned i = node.remaining - 1u;
    const unsigned base = read_[i];
    const unsigned needed_before = i > 0 ? mismatches_needed(i - 1) : 0u;
    const bool exact_last = phase_ == Phase::first_pass;  // the child kept in registers is visited first
    // The mismatching bases in increasing order, with the read's own base last (first pass) or
    // first (collect pass); an N has no exact child. One loop of four, kept rolled on the GPU: its
    // body (with skip_exact_steps) is then in the kernel once, where two rounds over the bases,
    // unrolled, held it eight times.
    const unsigned exact_at = base > 3 ? 4u : exact_last ? 3u : 0u;
#if defined(__CUDA_ARCH__)
#pragma unroll 1
#endif
    for (unsigned t = 0; t < 4; ++t) {
      const unsigned m = t > exact_at ? t - 1 : t;  // the m-th mismatching base, when t is not exact_at
      const unsigned c = t == exact_at ? base : m + (m >= base ? 1u : 0u);
      const bool mismatch = t != exact_at;
      const unsigned mm = node.edits.count() + (mismatch ? 1u : 0u);
      if (mm + needed_before > limit_) continue;
      const std::uint64_t first = detail::element(index.C, c);
      const std::uint64_t clo = first + detail::element(occ_lo, c), chi = first + detail::element(occ_hi, c);
      if (clo >= chi) continue;
      detail::Node child{clo, chi, node.edits, static_cast<std::uint16_t>(i)};
      if (mismatch) child.edits.push(i, c);
      if (skip_exact_steps(index, child)) visit(child);
    }
  }

  std::uint64_t rows_ = 0;
  const std::uint8_t* read_ = nullptr;
  PackedRead packed_{};
  std::uint32_t length_ = 0;
  std::uint32_t work_ = 0, work_cap_ = 0;
  unsigned k_ = 0, limit_ = 0, top_ = 0;
  bool has_next_ = false;
  bool bounds_known_ = false;  // lower_bounds has run (else D is taken as 0)
  bool locating_ = false;      // next_ is a node under verification, its lo the locate's current row
  std::uint32_t locate_steps_ = 0;  // LF steps of that locate so far
  detail::Node next_{};  // the next node to visit, when not on the stack
  Phase phase_ = Phase::done;
  std::uint32_t position_ = 0;  // lower_bounds: the next read position
  std::uint8_t bound_ = 0;      // lower_bounds: pieces absent so far
  fmindex::SaInterval interval_;  // lower_bounds: rows of the current piece
  HitInterval first_{};         // the first pass's hit
  // D as the first read position of each of its values 1..k + 1 (kNever: none): the search only
  // compares D with limits up to k, and five positions stay in registers where D per position
  // (up to 512 bytes) would not.
  static constexpr std::uint16_t kNever = 0xFFFF;
  std::uint16_t first_at_least_[kMaxMismatches + 1];
  std::uint64_t tail_key_ = 0;         // the read's last kmers.length bases, base 4
  std::uint32_t tail_non_bases_ = 0;   // bit p: the base p before the read's end is no base
  detail::Node* stack_;   // pending nodes (scratch)
};

// One read's codes packed (packed_codes.hpp), for a search of that read alone.
struct PackedReadScratch {
  static constexpr std::uint64_t kWords = packed_code_words(kMaxReadLength);
  std::uint64_t bases[kWords], unknown[kWords];

  // The read's codes packed here (a read longer than kMaxReadLength, which the search does not
  // search, is not packed).
  WTMAP_HD PackedRead pack(const std::uint8_t* read, std::uint32_t length) {
    const std::uint64_t words = length <= kMaxReadLength ? packed_code_words(length) : 0;
    for (std::uint64_t w = 0; w < words; ++w) pack_codes_word(read, length, w, bases[w], unknown[w]);
    return {bases, unknown, 0};
  }
};

// The whole search of one read (the tests' entry point).
template <unsigned Slots>
WTMAP_HD void search_read(const fmindex::FmIndexView& index, const std::uint8_t* read, std::uint32_t length,
                          const SearchParams& params, BasicSearchResult<Slots>& out) {
  SearchScratch scratch;
  PackedReadScratch packed;
  ReadSearch<Slots> search(scratch);
  search.start(index, read, length, packed.pack(read, length), params, out);
  while (search.step(index, out)) {
  }
}

// A group search's memory: its stack and the members' children.
struct GroupSearchScratch {
  detail::Node stack[kGroupStackCapacity];
  detail::Node children[4 * kGroupMembers];
  std::uint8_t counts[kGroupMembers];
};

// The whole search of one read by group steps, one thread playing each member in turn: the same
// result as a GPU block's (the CPU backend's entry point for reads past the work slice).
template <unsigned Slots>
void search_read_in_groups(const fmindex::FmIndexView& index, const std::uint8_t* read, std::uint32_t length,
                           const PackedRead& packed, const SearchParams& params, BasicSearchResult<Slots>& out,
                           GroupSearchScratch& scratch) {
  ReadSearch<Slots, kGroupStackCapacity> search(scratch.stack);
  search.start(index, read, length, packed, params, out);
  for (unsigned n; (n = search.take_group(index, out, kGroupMembers)) != kGroupDone;) {
    for (unsigned j = 0; j < n; ++j) {
      scratch.counts[j] = search.expand_member(index, search.group_node(j), scratch.children + 4 * j);
    }
    search.merge_group(index, out, scratch.children, scratch.counts, n);
  }
}

}  // namespace wtmap::aligner
