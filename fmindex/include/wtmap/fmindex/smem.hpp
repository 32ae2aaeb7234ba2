// wtmap fmindex: the seeds of a read as bwa mem collects them -- its super-maximal exact matches
// (SMEMs) against both strands, the re-seeding of long ones and the LAST-like pass -- as a
// __host__ __device__ state machine stepped by a GPU thread or a CPU loop (SmemSearch;
// smem_seeder.hpp runs batches).
//
// Definitions. A match is a piece read[b, e) without N that occurs in the text (both strands); a
// maximal exact match (MEM) is a match that extends neither left nor right; an SMEM is a MEM
// contained in no other MEM (Li 2012, "Exploring single-sample SNP and INDEL calling with
// whole-genome de novo assembly", Bioinformatics; bwa's bwt_smem1). With "occurs" read as "occurs
// at least t times" the same words define the t-MEMs and t-SMEMs.
// The search (bwa mem's mem_collect_intv):
//   first pass: from x = 0, the SMEMs covering x (a call below, t = 1), then on from the end of
//               the longest match starting at x (N positions skipped): every SMEM of the read once;
//               those of at least min_seed_len bases are the seeds;
//   re-seeding: for each first-pass seed of at least split_length() bases and at most split_width
//               occurrences, the t-SMEMs covering its middle with t = its occurrences + 1 (shorter
//               matches that occur more often: a repeat copy the long seed hides) of at least
//               min_seed_len bases are seeds too;
//   LAST-like:  from x = 0, the shortest piece read[x, e) longer than min_seed_len that occurs
//               fewer than max_mem_intv times is a seed if it occurs at all, and the pass goes on
//               from e; an N before that restarts it after the N (bwt_seed_strategy1; the
//               adaptive seeds of LAST, Kielbasa et al., Genome Research 2011).
// The seeds come out sorted by (begin, end), each piece once (bwa keeps the copies of a seed that a
// later pass finds again; its chaining drops them as contained).
// One call (bwt_smem1), the t-SMEMs covering x: the forward phase extends read[x, i) to the right
// and records each match [x, e) where the next base shrinks the interval (a candidate: the only
// right ends a t-SMEM through x can have), until it drops below t; the backward phase extends all
// candidates to the left together, longest first, and a candidate that cannot extend from b is the
// t-MEM [b, e); it is a t-SMEM exactly when its b is left of every longer candidate's (bwa: no
// longer candidate still alive, and b before the last output's start). A candidate whose extended
// interval has the size of the previous (longer) one's is dropped: its further extensions keep
// that size, so its start is never left of the longer one's.
// Bounded scratch: the candidates sit in a ring of the caller's capacity (any, at least 1). When a
// call has more, the ring keeps the longest; their backward phase runs, then the forward phase
// again for the candidates shorter than those, and so on -- the rule above needs only the
// leftmost start of the longer candidates, carried over. So the seeds do not depend on the
// capacity; a small one costs forward steps on reads of long repeats only.
//
// Space: the state in registers; the caller's candidate ring (32 bytes a candidate) and seed
// array (32 bytes a seed). Time: one bi-interval extension (one occ_all_pair, bidirectional.hpp)
// per step; a call takes (match length) forward steps and at most (candidates x match length)
// backward ones, bwa's count.
#pragma once

#include <cstdint>

#include "wtmap/core/config.hpp"
#include "wtmap/fmindex/bidirectional.hpp"
#include "wtmap/fmindex/fm_index_view.hpp"

namespace wtmap::fmindex {

struct SmemParams {
  std::uint32_t min_seed_len = 19;  // bwa mem -k
  bool reseed = true;               // bwa mem's second pass
  double split_factor = 1.5;        // bwa mem -r: re-seed seeds of at least min_seed_len * this bases
  std::uint64_t split_width = 10;   // ... that occur at most this often (bwa's split_width)
  std::uint64_t max_mem_intv = 20;  // bwa mem -y: the LAST-like pass's occurrence bound (0: no pass)

  // bwa's split_len: min_seed_len * split_factor rounded (19 * 1.5 -> 28), within 0..2^32 - 1.
  WTMAP_HD std::uint32_t split_length() const {
    const double v = min_seed_len * split_factor + .499;
    return v <= 0 ? 0 : v >= 4294967295.0 ? ~std::uint32_t{0} : static_cast<std::uint32_t>(v);
  }
};

// A seed: read[begin, end) and its bi-interval (all its occurrences, both strands).
struct Seed {
  std::uint32_t begin = 0, end = 0;
  BiInterval bi;

  WTMAP_HD std::uint32_t length() const { return end - begin; }
};

// A candidate right end of a call and the bi-interval of the match that ends there.
struct SmemCandidate {
  BiInterval bi;
  std::uint32_t end = 0;
};

enum SmemFlags : std::uint8_t {
  kSeedsOverflow = 1,  // more seeds than the caller's room: those kept are not all (nor re-seeded)
};

struct SmemResult {
  std::uint32_t count = 0;  // seeds written
  std::uint32_t steps = 0;  // extensions done (the work)
  std::uint8_t flags = 0;
};

// Candidates a batch's GPU thread keeps (SmemScratch): 2 KiB of local memory a thread. A call has
// one candidate per distinct occurrence count along its forward match -- on a genome about
// log4(genome size) plus a few, more inside repeats; more than this costs forward steps only.
constexpr std::uint32_t kSmemCandidates = 64;

// The candidate ring of a batch's query, kept apart from SmemSearch so that the search's own state,
// indexed by constants only, can live in registers (as aligner/mismatch_search.hpp's SearchScratch).
struct SmemScratch {
  SmemCandidate candidates[kSmemCandidates];
};

// The seeding of one read: start(), then step() until it returns false.
class SmemSearch {
 public:
  // A ring of `capacity` >= 1 candidates, which must outlive the search.
  WTMAP_HD SmemSearch(SmemCandidate* candidates, std::uint32_t capacity) : ring_(candidates), capacity_(capacity) {}
  WTMAP_HD explicit SmemSearch(SmemScratch& scratch) : SmemSearch(scratch.candidates, kSmemCandidates) {}

  // read: codes 0..3, anything else an N (search_code); seeds[0, seed_capacity): the output, which
  // must also hold the copies a later pass finds, until they are merged at the end.
  WTMAP_HD void start(const std::uint8_t* read, std::uint32_t length, const SmemParams& params, Seed* seeds,
                      std::uint32_t seed_capacity, SmemResult& out) {
    read_ = read;
    length_ = length;
    seeds_ = seeds;
    seed_capacity_ = seed_capacity;
    min_seed_len_ = params.min_seed_len;
    split_len_ = params.split_length();
    split_width_ = params.split_width;
    reseed_ = params.reseed;
    max_mem_intv_ = params.max_mem_intv;
    out = SmemResult{};
    pass_ = Pass::smems;
    next_x_ = 0;
    next_seed_ = 0;
    phase_ = Phase::next_call;
  }

  // The bookkeeping before the next extension, and a prefetch of the index blocks that extension
  // ranks; false once the read is done (step must not be called then). step() right after it
  // settles nothing more (settle stops where an extension is due, changing nothing), so the
  // steps and their results are step()'s alone. For a CPU loop that runs several reads in turn.
  WTMAP_HD bool settle_and_prefetch(const FmIndexView& index, SmemResult& out) {
    if (!settle(index, out)) return false;
    const bool forward = phase_ != Phase::backward;
    prefetch_extend(index, forward ? ik_ : ring_[slot(j_)].bi, forward);  // step()'s `from`
    return true;
  }

  // One extension (and the bookkeeping around it); false once the read is done (out then holds
  // its seed count, sorted seeds in the seed array).
  WTMAP_HD bool step(const FmIndexView& index, SmemResult& out) {
    if (!settle(index, out)) return false;
    // The extension: the same instructions in every phase, so that a warp's threads stay together.
    const bool forward = phase_ != Phase::backward;
    BiInterval from = ik_;
    unsigned c = 0;
    if (forward) {
      c = read_[ik_end_];
    } else {
      const SmemCandidate& candidate = ring_[slot(j_)];
      from = candidate.bi;
      candidate_end_ = candidate.end;
      c = read_[left_ - 1];
    }
    const BiInterval to = extend(index, from, c, forward);
    ++out.steps;
    if (phase_ == Phase::forward) {
      take_forward(to);
    } else if (phase_ == Phase::last_like) {
      take_last_like(to, out);
    } else {
      take_backward(from, to, out);
    }
    return true;
  }

 private:
  enum class Pass : std::uint8_t { smems, reseeding, last_like };
  // A call's forward and backward phases; last_like: the LAST-like pass's extension of ik_.
  enum class Phase : std::uint8_t { next_call, forward, backward, last_like, done };
  static constexpr std::uint32_t kNoLimit = ~std::uint32_t{0};

  // Bookkeeping until the next step needs an extension: true then, false once the read is done.
  WTMAP_HD bool settle(const FmIndexView& index, SmemResult& out) {
    while (true) {
      if (phase_ == Phase::done) return false;
      if (phase_ == Phase::next_call) {
        next_call(index, out);
      } else if (phase_ != Phase::backward) {
        if (ik_end_ < length_ && read_[ik_end_] <= 3) return true;
        if (phase_ == Phase::forward) {
          // The match reaches the read's end or an N: it is the last candidate.
          push(ik_end_);
          end_forward();
        } else {  // no LAST-like seed from origin_: on after the N, or the pass is over
          next_x_ = ik_end_ + (ik_end_ < length_);
          phase_ = Phase::next_call;
        }
      } else if (j_ == count_) {  // backward: every live candidate took this base
        if (alive_ == 0) {
          end_chunk(index);
        } else {
          count_ = alive_;
          j_ = 0;
          alive_ = 0;
          --left_;
        }
      } else if (left_ == 0 || read_[left_ - 1] > 3) {
        // The read's start or an N: every live candidate ends here, the longest first, so only it
        // can be an SMEM.
        const SmemCandidate& longest = ring_[slot(0)];
        if (alive_ == 0) emit(longest.bi, longest.end, out);
        j_ = count_;
      } else {
        return true;
      }
    }
  }

  // The next call: the first pass's next start, the next long seed to re-seed, or the LAST-like
  // pass's next start; the end.
  WTMAP_HD void next_call(const FmIndexView& index, SmemResult& out) {
    if (pass_ == Pass::smems) {
      while (next_x_ < length_ && read_[next_x_] > 3) ++next_x_;
      if (next_x_ < length_) {
        begin_call(index, next_x_, 1);
        return;
      }
      pass_ = Pass::reseeding;
      first_pass_seeds_ = reseed_ ? out.count : 0;
    }
    if (pass_ == Pass::reseeding) {
      while (next_seed_ < first_pass_seeds_) {
        const Seed s = seeds_[next_seed_++];
        if (s.length() >= split_len_ && s.bi.size <= split_width_) {
          begin_call(index, (s.begin + s.end) >> 1, s.bi.size + 1);
          return;
        }
      }
      pass_ = Pass::last_like;
      next_x_ = max_mem_intv_ > 0 ? 0 : length_;
    }
    while (next_x_ < length_ && read_[next_x_] > 3) ++next_x_;
    if (next_x_ == length_) {
      finish(out);
      return;
    }
    origin_ = next_x_;
    ik_ = base_bi_interval(index, read_[origin_]);
    ik_end_ = origin_ + 1;
    phase_ = Phase::last_like;
  }

  // ik_ became Pc = read[origin_, ik_end_ + 1): the LAST-like seed once it is long and rare enough
  // (bwa's i - x >= min_len: more than min_seed_len bases), kept if it occurs.
  WTMAP_HD void take_last_like(const BiInterval& to, SmemResult& out) {
    if (to.size < max_mem_intv_ && ik_end_ - origin_ >= min_seed_len_) {
      if (to.size > 0) append(Seed{origin_, ik_end_ + 1, to}, out);
      next_x_ = ik_end_ + 1;
      phase_ = Phase::next_call;
      return;
    }
    ik_ = to;
    ++ik_end_;
  }

  WTMAP_HD void begin_call(const FmIndexView& index, std::uint32_t x, std::uint64_t min_occ) {
    origin_ = x;
    min_occ_ = min_occ;
    end_limit_ = kNoLimit;
    leftmost_ = x + 1;
    longest_end_ = x + 1;  // where the first pass goes on if x's base is too rare to match
    begin_forward(index);
  }

  // The forward phase of the call's next chunk: candidates with end < end_limit_.
  WTMAP_HD void begin_forward(const FmIndexView& index) {
    ik_ = base_bi_interval(index, read_[origin_]);
    ik_end_ = origin_ + 1;
    pushed_ = 0;
    next_slot_ = 0;
    stop_ = false;
    if (ik_.size < min_occ_) {
      end_call();
    } else {
      phase_ = Phase::forward;
    }
  }

  // ik_ became Pc: a candidate ends where the size changes; the match ends below min_occ_.
  WTMAP_HD void take_forward(const BiInterval& to) {
    if (to.size != ik_.size) {
      push(ik_end_);
      if (to.size < min_occ_) stop_ = true;
    }
    ik_ = to;
    ++ik_end_;
    if (stop_) end_forward();
  }

  // Records ik_ as the candidate ending at `end` (in the ring, over the oldest when it is full),
  // unless it belongs to an earlier chunk; that ends the forward phase.
  WTMAP_HD void push(std::uint32_t end) {
    if (end >= end_limit_) {
      stop_ = true;
      return;
    }
    ring_[next_slot_] = SmemCandidate{ik_, end};
    next_slot_ = next_slot_ + 1 == capacity_ ? 0 : next_slot_ + 1;
    ++pushed_;
  }

  WTMAP_HD void end_forward() {
    count_ = pushed_ < capacity_ ? pushed_ : capacity_;
    if (count_ == 0) {
      end_call();
      return;
    }
    newest_ = next_slot_ == 0 ? capacity_ - 1 : next_slot_ - 1;
    if (end_limit_ == kNoLimit) longest_end_ = ring_[newest_].end;
    more_ = pushed_ > capacity_;
    if (more_) end_limit_ = ring_[slot(count_ - 1)].end;
    left_ = origin_;
    j_ = 0;
    alive_ = 0;
    phase_ = Phase::backward;
  }

  // Candidate j_ (from, ending at candidate_end_) became `to` = read[left_ - 1] from.
  WTMAP_HD void take_backward(const BiInterval& from, const BiInterval& to, SmemResult& out) {
    if (to.size < min_occ_) {
      if (alive_ == 0) emit(from, candidate_end_, out);
    } else if (alive_ == 0 || to.size != ring_[slot(alive_ - 1)].bi.size) {
      ring_[slot(alive_)] = SmemCandidate{to, candidate_end_};
      ++alive_;
    }
    ++j_;
  }

  // The t-MEM read[left_, end) of a candidate no longer candidate outlives: a t-SMEM if it starts
  // left of every longer candidate; a seed if it is long enough and there is room.
  WTMAP_HD void emit(const BiInterval& bi, std::uint32_t end, SmemResult& out) {
    if (left_ >= leftmost_) return;
    leftmost_ = left_;
    if (end - left_ >= min_seed_len_) append(Seed{left_, end, bi}, out);
  }

  WTMAP_HD void append(const Seed& s, SmemResult& out) {
    if (out.count == seed_capacity_) {
      out.flags |= kSeedsOverflow;
    } else {
      seeds_[out.count++] = s;
    }
  }

  WTMAP_HD void end_chunk(const FmIndexView& index) {
    if (more_) {
      begin_forward(index);
    } else {
      end_call();
    }
  }

  WTMAP_HD void end_call() {
    if (pass_ == Pass::smems) next_x_ = longest_end_;
    phase_ = Phase::next_call;
  }

  // Sorts the seeds by (begin, end) and keeps one of each piece: an insertion sort, as the first
  // pass's seeds come almost in order (each call's in reverse), then a pass over the copies.
  WTMAP_HD void finish(SmemResult& out) {
    for (std::uint32_t i = 1; i < out.count; ++i) {
      const Seed s = seeds_[i];
      std::uint32_t k = i;
      for (; k > 0 && before(s, seeds_[k - 1]); --k) seeds_[k] = seeds_[k - 1];
      seeds_[k] = s;
    }
    std::uint32_t kept = 0;
    for (std::uint32_t i = 0; i < out.count; ++i) {
      if (kept == 0 || before(seeds_[kept - 1], seeds_[i])) seeds_[kept++] = seeds_[i];
    }
    out.count = kept;
    phase_ = Phase::done;
  }

  WTMAP_HD static bool before(const Seed& a, const Seed& b) {
    return a.begin < b.begin || (a.begin == b.begin && a.end < b.end);
  }

  // Ring slot of the j-th candidate, longest first.
  WTMAP_HD std::uint32_t slot(std::uint32_t j) const { return j <= newest_ ? newest_ - j : newest_ + capacity_ - j; }

  // The read and the output.
  const std::uint8_t* read_ = nullptr;
  Seed* seeds_ = nullptr;
  std::uint32_t length_ = 0, seed_capacity_ = 0;
  std::uint32_t min_seed_len_ = 0, split_len_ = 0;
  std::uint64_t split_width_ = 0, max_mem_intv_ = 0;
  bool reseed_ = false;
  // The passes: the first and LAST-like passes' next start, re-seeding's next first-pass seed.
  Pass pass_ = Pass::smems;
  std::uint32_t next_x_ = 0, next_seed_ = 0, first_pass_seeds_ = 0;
  Phase phase_ = Phase::done;
  // The call: its x and t, the chunk's end limit, the leftmost start of the candidates done, the
  // end of the longest match from x.
  std::uint32_t origin_ = 0, end_limit_ = kNoLimit, leftmost_ = 0, longest_end_ = 0;
  std::uint64_t min_occ_ = 1;
  // Forward phase (and the LAST-like pass): read[origin_, ik_end_) and its bi-interval; the ring's fill.
  BiInterval ik_;
  std::uint32_t ik_end_ = 0, pushed_ = 0, next_slot_ = 0;
  bool stop_ = false, more_ = false;
  // Backward phase: the live candidates, matches read[left_, end), are ring slots slot(0..count_);
  // candidate j_ is the next to extend by read[left_ - 1], alive_ of them took that base so far.
  std::uint32_t newest_ = 0, count_ = 0, j_ = 0, alive_ = 0, left_ = 0, candidate_end_ = 0;
  SmemCandidate* ring_;
  std::uint32_t capacity_;
};

}  // namespace wtmap::fmindex
