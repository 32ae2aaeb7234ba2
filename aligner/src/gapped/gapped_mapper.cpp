// The gapped mapper (see gapped_mapper.hpp). On the index's backend: SMEM seeding (SmemSeeder),
// locate (FmIndex::locate), the extensions' DP and the CIGARs' global alignments (GappedAligner,
// in batches: one round extends the next seed of every read still extending). On the host, for
// both backends alike: chaining, the choice of the seeds to extend, region selection and NM/MD
// (mapper_steps.hpp). Each read's result depends on its own seeds only, and the backends run the
// same __host__ __device__ steps, so any batch size and either backend give the same bytes.
//
// Space: per batch, the reads' codes and seeds, their occurrences (at most max_occurrences a
// seed), chains and regions, and per round one reference window per extending read -- bounded by
// the batch size times the read length (plus max_occurrences x seeds for the occurrences).
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <mutex>
#include <new>
#include <optional>
#include <tuple>
#include <utility>

#include "mapper_reference.hpp"
#include "mapper_steps.hpp"
#include "mate_rescue.hpp"
#include "wtmap/aligner/gapped/edit_tags.hpp"
#include "wtmap/aligner/gapped/gapped_batch.hpp"
#include "wtmap/aligner/gapped/gapped_mapper.hpp"
#include "wtmap/aligner/gapped/global.hpp"
#include "wtmap/aligner/mismatch_search.hpp"
#include "wtmap/core/detail/host_pages.hpp"
#include "wtmap/core/detail/parallel.hpp"
#include "wtmap/fmindex/reference.hpp"
#include "wtmap/fmindex/smem_seeder.hpp"

namespace wtmap::aligner::gapped {

namespace {

// Seeds a read may keep (SmemResult's kSeedsOverflow beyond: the rest are lost, as the LAST-like
// pass's are first): a read of unique sequence has a few per pass, one inside a repeat a few per
// 19 bases; this room (91 for 150 bases, 32 bytes each) bounds the device memory of a batch.
std::uint32_t seed_capacity(std::uint32_t read_length) { return read_length / 2 + 16; }
// The room of a batch's first seeding (34 for 150 bases): enough for all but reads inside
// repeats, which are seeded again with seed_capacity (the same seeds: a read's seeding depends
// on the read alone). Rooms of the full size took some 300 MB a batch, host and device alike.
std::uint32_t first_seed_capacity(std::uint32_t read_length) {
  return std::min(seed_capacity(read_length), read_length / 8 + 16);
}

constexpr std::uint32_t kCigarSoftClip = 4;

// Reads a CPU thread takes at least in the host's per-read steps (chaining, region selection,
// NM/MD): some 10 us each, so that starting a thread pays.
constexpr std::uint64_t kReadsPerThread = 256;
// Seeds a CPU thread takes at least in a round's per-seed steps (start_region, finish_region:
// some 100 ns each).
constexpr std::uint64_t kSeedsPerThread = 1024;
// The most seeds a read extends ahead of their turn in one round beyond its chain heads
// (extend_all): enough that a tandem repeat's hundreds of seeds take a handful of rounds.
constexpr std::size_t kMaxGuesses = 256;

// search_code of every byte: a read's letters are random, and search_code's chain of comparisons
// mispredicts most of them (encode_read was 5.7 % of a gapped run's CPU time, H200 host, perf).
constexpr std::array<std::uint8_t, 256> kSearchCodes = [] {
  std::array<std::uint8_t, 256> table{};
  for (unsigned b = 0; b < 256; ++b) table[b] = fmindex::search_code(static_cast<char>(b));
  return table;
}();

void encode_read(const std::string& sequence, ReadCodes& r) {
  const std::size_t n = sequence.size();
  r.forward.resize(n);
  r.reverse.resize(n);
  // Locals, not r's members: the byte stores may alias them, and the compiler then stored and
  // reloaded the hash at every base (3.0 K -> 2.4 K instructions a 150 bp read, callgrind).
  std::uint8_t* forward = r.forward.data();
  std::uint8_t* reverse = r.reverse.data();
  std::uint64_t hash = 1469598103934665603ull;  // FNV-1a: ties between equal scores follow the read
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint8_t c = kSearchCodes[static_cast<unsigned char>(sequence[i])];
    forward[i] = c;
    reverse[n - 1 - i] = complement_code(c);
    hash = (hash ^ c) * 1099511628211ull;
  }
  r.hash = hash;
}

// Read bases inside seeds of more than max_occurrences hits (bwa's l_rep), as a share of the read.
float repeat_fraction(const fmindex::Seed* seeds, std::uint32_t count, std::uint64_t max_occ, std::uint32_t length) {
  std::uint32_t covered = 0, begin = 0, end = 0;
  for (std::uint32_t k = 0; k < count; ++k) {
    const fmindex::Seed& s = seeds[k];
    if (s.bi.size <= max_occ) continue;
    if (s.begin > end) {
      covered += end - begin;
      begin = s.begin;
      end = s.end;
    } else {
      end = std::max(end, s.end);
    }
  }
  covered += end - begin;
  return length == 0 ? 0.f : static_cast<float>(covered) / static_cast<float>(length);
}

// A mapper's step spans, kept once asked for (GappedMapper::keep_step_spans). Locked: rescue_mates()
// may run beside map().
class StepSpans {
 public:
  void keep() { keep_.store(true, std::memory_order_relaxed); }
  bool kept() const { return keep_.load(std::memory_order_relaxed); }
  void add(const StepSpan& span) {
    const std::lock_guard<std::mutex> lock(mutex_);
    try {
      spans_.push_back(span);
    } catch (const std::bad_alloc&) {  // the timeline is a diagnostic: a gap in it is no error
    }
  }
  std::vector<StepSpan> take() {
    const std::lock_guard<std::mutex> lock(mutex_);
    return std::exchange(spans_, {});
  }

 private:
  std::atomic<bool> keep_{false};
  std::mutex mutex_;
  std::vector<StepSpan> spans_;
};

// Adds the seconds of its scope to a GappedStageSeconds field (none: nullptr), and its span to
// `spans` where they are kept.
class AddSeconds {
 public:
  AddSeconds(double* seconds, StepSpans& spans, const char* step)
      : seconds_(seconds), spans_(spans), step_(step), start_(std::chrono::steady_clock::now()) {}
  AddSeconds(const AddSeconds&) = delete;
  AddSeconds& operator=(const AddSeconds&) = delete;
  ~AddSeconds() {
    const auto end = std::chrono::steady_clock::now();
    if (seconds_ != nullptr) *seconds_ += std::chrono::duration<double>(end - start_).count();
    if (spans_.kept()) spans_.add({step_, start_, end});
  }

 private:
  double* seconds_;
  StepSpans& spans_;
  const char* step_;
  std::chrono::steady_clock::time_point start_;
};

// A region as pairing sees it (forward coordinates), and back (strand coordinates, for its CIGAR).
PairCandidate candidate_of(const Region& r, const MapperReference& reference) {
  const auto contig_length = static_cast<std::int64_t>(reference.contig_length(r.contig));
  const auto position = static_cast<std::uint64_t>(r.reverse ? contig_length - r.re : r.rb);
  return PairCandidate{r.contig, position, position + static_cast<std::uint64_t>(r.re - r.rb), r.reverse,
                       static_cast<std::uint32_t>(r.qb), static_cast<std::uint32_t>(r.qe), r.score, r.true_score,
                       r.secondary};
}
Region region_of(const PairCandidate& c, const MapperReference& reference) {
  const auto contig_length = static_cast<std::int64_t>(reference.contig_length(c.contig));
  Region r;
  r.contig = c.contig;
  r.reverse = c.reverse;
  r.rb = c.reverse ? contig_length - static_cast<std::int64_t>(c.reference_end) : static_cast<std::int64_t>(c.position);
  r.re = r.rb + static_cast<std::int64_t>(c.reference_end - c.position);
  r.qb = static_cast<std::int32_t>(c.query_begin);
  r.qe = static_cast<std::int32_t>(c.query_end);
  r.score = c.score;
  r.true_score = c.true_score;
  return r;
}

// A hit to report: a region of a read and where its GappedHit goes.
struct Reported {
  const Region* region;
  std::size_t read;
  GappedHit* hit;
};

// A read being aligned: its chains, the regions found so far, and this round's extension.
struct ReadWork {
  std::size_t read = 0;  // index in the batch
  std::vector<Chain> chains;
  ExtensionPlan plan;
  std::vector<Region> regions;
  std::vector<Reported> reported;  // its hits to report (choose_hits)
  // The seeds extended so far (ahead of their turn too) with their regions, and the one the plan
  // waits for, if any.
  struct Extended {
    std::size_t chain, seed;
    Region region;
  };
  std::vector<Extended> extended;
  bool waiting = false;
  std::size_t wanted_chain = 0, wanted_seed = 0;
  std::uint32_t rounds = 0;  // the rounds it has waited in
  std::vector<std::pair<std::size_t, std::size_t>> ahead;  // this round's seeds taken ahead (chain, seed)

  // Ready for read `index` of a new batch; the lists keep their memory (the plan restarts when its
  // chains are made).
  void reset(std::size_t index) {
    read = index;
    chains.clear();
    regions.clear();
    reported.clear();
    extended.clear();
    waiting = false;
    wanted_chain = wanted_seed = 0;
    rounds = 0;
  }

  const Region* extension_of(std::size_t chain, std::size_t seed) const {
    for (const Extended& e : extended)
      if (e.chain == chain && e.seed == seed) return &e.region;
    return nullptr;
  }
};

// The seeds extended in one call on the backend. Each seed reads its read's codes and its chain's
// window [lo, hi) (chain_window), laid out once per read and chain: a window's seeds are
// consecutive. Each seed gives a region.
struct ExtensionRound {
  struct Window {
    ReadWork* work = nullptr;
    std::size_t chain = 0;
    std::int64_t lo = 0, hi = 0;
    std::uint64_t query_offset = 0, target_offset = 0;
  };
  struct Seed {
    std::size_t window = 0, seed = 0;
    Region region;
  };
  std::vector<Window> windows;
  std::vector<Seed> seeds;

  void add(ReadWork* w, std::size_t chain, std::size_t seed) {
    if (windows.empty() || windows.back().work != w || windows.back().chain != chain) windows.push_back({w, chain});
    seeds.push_back({windows.size() - 1, seed, {}});
  }
  void clear() {
    windows.clear();
    seeds.clear();
  }
};

// The DP on the index's backend and what it reads: per round (or for the reported hits) the
// codes of the reads that take part and their reference windows, all the aligner copies. map()
// and rescue_mates() have one each, so that the two may run at once on different threads.
struct DpWorkspace {
  explicit DpWorkspace(Backend backend) : aligner(backend) {}
  GappedAligner aligner;
  // Rewritten whole by each call, kept between batches (a fresh CIGAR room was some 100 MB of
  // new pages a batch), in huge pages.
  wtmap::detail::HostPageVector<std::uint8_t> query, target;
  wtmap::detail::HostPageVector<std::uint32_t> cigars;
};

// rescue_mates' changes to a batch's alignments, kept apart until its last device call has
// returned: a read's alignment is copied the first time it changes (the few that gain rescued or
// paired hits), and commit() moves the copies in. So a rescue short of device memory leaves the
// batch as it was, without a copy of the whole batch. A read that holds pair_hits (rescued
// before) is copied at once with them cleared, as a rescue starts from none.
class AlignmentEdits {
 public:
  explicit AlignmentEdits(std::vector<GappedReadAlignment>& batch) : batch_(batch), copy_of_(batch.size(), kNone) {
    for (std::size_t i = 0; i < batch.size(); ++i) {
      if (!batch[i].pair_hits.empty()) edit(i).pair_hits.clear();
    }
  }
  std::size_t size() const { return batch_.size(); }
  // Read i's alignment as changed so far.
  const GappedReadAlignment& operator[](std::size_t i) const {
    return copy_of_[i] == kNone ? batch_[i] : copies_[copy_of_[i]];
  }
  GappedReadAlignment& edit(std::size_t i) {
    if (copy_of_[i] == kNone) {
      copy_of_[i] = copies_.size();
      copies_.push_back(batch_[i]);
    }
    return copies_[copy_of_[i]];
  }
  void commit() {
    for (std::size_t i = 0; i < batch_.size(); ++i) {
      if (copy_of_[i] != kNone) batch_[i] = std::move(copies_[copy_of_[i]]);
    }
  }

 private:
  static constexpr std::size_t kNone = SIZE_MAX;
  std::vector<GappedReadAlignment>& batch_;
  std::vector<std::size_t> copy_of_;
  std::deque<GappedReadAlignment> copies_;  // stable references for edit()
};

}  // namespace

struct GappedMapper::Impl {
  Impl(const fmindex::FmIndex& i, const GappedOptions& o, std::shared_ptr<const MapperReference> r)
      : index(&i), options(o), shared_reference(std::move(r)), reference(*shared_reference), seeder(i),
        dp(i.backend()), rescue_dp(i.backend()) {}

  const fmindex::FmIndex* index;
  GappedOptions options;
  std::shared_ptr<const MapperReference> shared_reference;  // with the mappers made by another()
  const MapperReference& reference;
  fmindex::SmemSeeder seeder;
  DpWorkspace dp, rescue_dp;  // map()'s extensions and CIGARs; rescue_mates()' local alignments and CIGARs
  GappedStageSeconds stage;   // map()'s
  StepSpans spans;            // map()'s and rescue_mates()' steps, where kept

  // Per batch: the seeds and their located occurrences (the large arrays in huge pages).
  wtmap::detail::HostPageVector<std::uint8_t> codes;
  std::vector<fmindex::SeedingRead> seeding;
  wtmap::detail::HostPageVector<fmindex::Seed> seeds;
  std::vector<fmindex::SmemResult> seeded;
  wtmap::detail::HostPageVector<std::uint64_t> rows, positions;
  // map()'s reads in progress: kept between batches, the array (a fresh one faulted in some 10 MB
  // a batch) and the reads' own lists (ReadWork::reset; each read's allocations were most of a
  // gapped run's calls to malloc).
  std::vector<ReadWork> work;
  std::vector<std::size_t> to_map;  // the batch's reads of a length to map, in order (work[k]'s read)

  Status seed_and_locate(const std::vector<ReadCodes>& encoded, std::vector<std::uint64_t>& first_position);
  // The read's seed occurrences in reference order, into `hits` (replaced).
  void seed_hits(std::size_t read, const std::vector<std::uint64_t>& first_position, std::vector<SeedHit>& hits);
  Status find_seeds(const std::vector<fmindex::SeedingRead>& reads, fmindex::Seed* out, std::uint64_t out_size,
                    std::vector<fmindex::SmemResult>& results);
  Status seed_again_with_full_rooms(std::uint64_t seed_total);
  Status extend_round(ExtensionRound& round, const std::vector<ReadCodes>& encoded);
  bool advance(ReadWork& w, std::int32_t read_length) const;
  // On the codes dp.aligner holds placed.
  Status extend_with_retry(const std::vector<ExtendTask>& tasks, std::vector<ExtendResult>& results);
  Status extend_all(std::vector<ReadWork>& work, const std::vector<ReadCodes>& encoded);
  void choose_hits(ReadWork& w, GappedReadAlignment& out) const;
  void set_mapping_qualities(const ReadWork& w, GappedReadAlignment& a) const;
  Status align_reported(DpWorkspace& ws, const std::vector<Reported>& reported, const std::vector<ReadCodes>& encoded);
  Status finish_hit(const Region& region, const ReadCodes& read, const std::uint32_t* ops, std::uint32_t n_ops,
                    GappedHit& hit) const;
  Status align_found(const std::vector<ReadCodes>& reads, const std::vector<Region>& regions,
                     const std::vector<std::size_t>& read_of, std::vector<GappedHit>& hits);
  Status align_pair_choices(const std::vector<ReadCodes>& reads, AlignmentEdits& alignments,
                            const InsertSizeModel& model, std::int32_t unpaired);
  Status search_windows(const std::vector<ReadCodes>& reads, const std::vector<RescueJob>& jobs,
                        std::vector<LocalResult>& found);
  // Whether a read of this length is mapped (else it is too short or too long: kTooShort, kTooLong).
  bool maps_length(std::size_t length) const {
    return length >= options.min_seed_length && length <= options.max_read_length;
  }
  // What a rescued alignment must score to be kept: bwa's --min-seed bar, and -T so that every
  // written hit passes it.
  std::int32_t rescue_bar() const {
    return std::max<std::int32_t>(static_cast<std::int32_t>(options.min_seed_length), options.min_output_score);
  }
};

Status GappedMapper::Impl::seed_and_locate(const std::vector<ReadCodes>& encoded,
                                           std::vector<std::uint64_t>& first_position) {
  const std::size_t count = encoded.size();
  seeding.assign(count, {});
  std::uint64_t code_total = 0, seed_total = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const auto length = static_cast<std::uint32_t>(encoded[i].forward.size());
    fmindex::SeedingRead& s = seeding[i];
    s.offset = code_total;
    s.seed_offset = seed_total;
    const bool searched = maps_length(length);
    s.length = searched ? length : 0;
    s.seed_capacity = searched ? first_seed_capacity(length) : 0;
    code_total += s.length;
    seed_total += s.seed_capacity;
  }
  // The copies on the CPU threads: on the mapping thread alone they were part of some 30 ms of
  // serial host work a batch of 5*10^4 reads, with the GPU idle for this mapper (WTMAP_TRACE).
  codes.resize(code_total);
  wtmap::detail::parallel_for_ranges(count, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t i = begin; i < end; ++i)
      std::copy_n(encoded[i].forward.begin(), seeding[i].length, codes.data() + seeding[i].offset);
  }, kReadsPerThread);
  seeds.resize(std::max<std::uint64_t>(seed_total, 1));
  seeded.assign(count, {});
  {
    AddSeconds clock(&stage.seed, spans, "seeds");
    WTMAP_TRY(find_seeds(seeding, seeds.data(), seed_total, seeded));
    WTMAP_TRY(seed_again_with_full_rooms(seed_total));
  }
  AddSeconds clock(&stage.locate, spans, "locate");
  // Each seed's rows as occurrence_sample takes them, read by read, seed by seed: each read's
  // count, their running sum (read i's rows from first_position[i]), then the rows.
  first_position.assign(count + 1, 0);
  wtmap::detail::parallel_for_ranges(count, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t i = begin; i < end; ++i) {
      const fmindex::Seed* s = seeds.data() + seeding[i].seed_offset;
      std::uint64_t taken = 0;
      for (std::uint32_t k = 0; k < seeded[i].count; ++k)
        taken += occurrence_sample(s[k].bi.size, options.max_occurrences).count;
      first_position[i + 1] = taken;
    }
  }, kReadsPerThread);
  for (std::size_t i = 0; i < count; ++i) first_position[i + 1] += first_position[i];
  rows.resize(first_position[count]);
  wtmap::detail::parallel_for_ranges(count, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t i = begin; i < end; ++i) {
      const fmindex::Seed* s = seeds.data() + seeding[i].seed_offset;
      std::uint64_t* row = rows.data() + first_position[i];
      for (std::uint32_t k = 0; k < seeded[i].count; ++k) {
        const OccurrenceSample taken = occurrence_sample(s[k].bi.size, options.max_occurrences);
        for (std::uint64_t r = 0; r < taken.count; ++r) *row++ = s[k].bi.x0 + r * taken.step;
      }
    }
  }, kReadsPerThread);
  positions.resize(rows.size());
  if (!rows.empty()) WTMAP_TRY(index->locate(rows.data(), positions.data(), rows.size()));
  return {};
}

Status GappedMapper::Impl::find_seeds(const std::vector<fmindex::SeedingRead>& reads, fmindex::Seed* out,
                                      std::uint64_t out_size, std::vector<fmindex::SmemResult>& results) {
  fmindex::SmemParams params;
  params.min_seed_len = options.min_seed_length;
  return seeder.find(codes.data(), codes.size(), reads.data(), reads.size(), params, out, std::max<std::uint64_t>(out_size, 1),
                     results.data());
}

// The reads whose first room overflowed, seeded again in rooms of seed_capacity placed after the
// first rooms (seeds[seed_total, ...)); their seeding entries then point there.
Status GappedMapper::Impl::seed_again_with_full_rooms(std::uint64_t seed_total) {
  std::vector<std::size_t> again;
  std::vector<fmindex::SeedingRead> full;
  std::uint64_t room = 0;
  for (std::size_t i = 0; i < seeding.size(); ++i) {
    if ((seeded[i].flags & fmindex::kSeedsOverflow) == 0) continue;
    fmindex::SeedingRead r = seeding[i];
    r.seed_offset = room;
    r.seed_capacity = seed_capacity(r.length);
    room += r.seed_capacity;
    again.push_back(i);
    full.push_back(r);
  }
  if (again.empty()) return {};
  seeds.resize(seed_total + room);
  std::vector<fmindex::SmemResult> results(full.size());
  WTMAP_TRY(find_seeds(full, seeds.data() + seed_total, room, results));
  for (std::size_t k = 0; k < again.size(); ++k) {
    seeding[again[k]].seed_offset = seed_total + full[k].seed_offset;
    seeding[again[k]].seed_capacity = full[k].seed_capacity;
    seeded[again[k]] = results[k];
  }
  return {};
}

void GappedMapper::Impl::seed_hits(std::size_t read, const std::vector<std::uint64_t>& first_position,
                                   std::vector<SeedHit>& hits) {
  hits.clear();
  hits.reserve(first_position[read + 1] - first_position[read]);  // the located occurrences
  const fmindex::Seed* s = seeds.data() + seeding[read].seed_offset;
  std::uint64_t p = first_position[read];
  for (std::uint32_t k = 0; k < seeded[read].count; ++k) {
    const std::uint64_t taken = occurrence_sample(s[k].bi.size, options.max_occurrences).count;
    const std::size_t first = hits.size();
    for (std::uint64_t r = 0; r < taken; ++r, ++p) {
      const StrandPosition at = reference.place(positions[p], s[k].length());
      hits.push_back({at.contig, at.reverse, at.position, static_cast<std::int32_t>(s[k].begin),
                      static_cast<std::int32_t>(s[k].length())});
    }
    // A seed's occurrences in reference order, not the suffix array's.
    std::sort(hits.begin() + static_cast<std::ptrdiff_t>(first), hits.end(), [](const SeedHit& a, const SeedHit& b) {
      return std::make_tuple(a.contig, a.reverse, a.rbeg) < std::make_tuple(b.contig, b.reverse, b.rbeg);
    });
  }
}

// Lays out the round's (or the reported hits') arrays: item k takes query_length(k) codes at
// query_offset[k] and target_length(k) at target_offset[k], one after another in item order; then
// fill(k, query + query_offset[k], target + target_offset[k]) writes each item's codes, items
// spread over the CPU threads (the copies of reference windows are a round's largest host work).
template <class QueryLength, class TargetLength, class Fill>
void lay_out_codes(std::size_t count, QueryLength query_length, TargetLength target_length, Fill fill,
                   std::vector<std::uint64_t>& query_offset, std::vector<std::uint64_t>& target_offset,
                   wtmap::detail::HostPageVector<std::uint8_t>& query, wtmap::detail::HostPageVector<std::uint8_t>& target) {
  query_offset.resize(count);
  target_offset.resize(count);
  std::uint64_t q = 0, t = 0;
  for (std::size_t k = 0; k < count; ++k) {
    query_offset[k] = q;
    target_offset[k] = t;
    q += query_length(k);
    t += target_length(k);
  }
  query.resize(q);
  target.resize(t);
  wtmap::detail::parallel_for_ranges(count, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t k = begin; k < end; ++k) fill(k, query.data() + query_offset[k], target.data() + target_offset[k]);
  }, kReadsPerThread);
}

// One round: each seed extended left, then right from the left's score, as two batches on the
// backend (bwa's mem_chain2aln for one seed).
Status GappedMapper::Impl::extend_round(ExtensionRound& round, const std::vector<ReadCodes>& encoded) {
  const Scoring& sc = options.scoring;
  stage.seeds_extended += round.seeds.size();
  ++stage.extension_rounds;
  std::vector<ExtensionRound::Window>& windows = round.windows;
  const auto read_length = [&](const ExtensionRound::Window& x) {
    return static_cast<std::int32_t>(encoded[x.work->read].forward.size());
  };
  wtmap::detail::parallel_for_ranges(windows.size(), [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t k = begin; k < end; ++k)
      chain_window(windows[k].work->chains[windows[k].chain], read_length(windows[k]), reference, sc, windows[k].lo,
                   windows[k].hi);
  }, kReadsPerThread);
  std::vector<std::uint64_t> query_at, target_at;
  lay_out_codes(
      windows.size(), [&](std::size_t k) { return encoded[windows[k].work->read].forward.size(); },
      [&](std::size_t k) { return static_cast<std::uint64_t>(windows[k].hi - windows[k].lo); },
      [&](std::size_t k, std::uint8_t* q, std::uint8_t* t) {
        const ExtensionRound::Window& x = windows[k];
        const Chain& c = x.work->chains[x.chain];
        std::copy(encoded[x.work->read].forward.begin(), encoded[x.work->read].forward.end(), q);
        reference.copy_bases(c.contig, c.reverse, x.lo, x.hi, t);
      },
      query_at, target_at, dp.query, dp.target);
  for (std::size_t k = 0; k < windows.size(); ++k) {
    windows[k].query_offset = query_at[k];
    windows[k].target_offset = target_at[k];
  }
  const auto seed_of = [&](const ExtensionRound::Seed& e) -> const SeedHit& {
    const ExtensionRound::Window& x = windows[e.window];
    return x.work->chains[x.chain].seeds[e.seed];
  };
  std::vector<ExtendTask> left, right;
  std::vector<std::size_t> left_of(round.seeds.size(), SIZE_MAX), right_of(round.seeds.size(), SIZE_MAX);
  bool any_right = false;
  for (std::size_t k = 0; k < round.seeds.size(); ++k) {
    const ExtensionRound::Window& x = windows[round.seeds[k].window];
    const SeedHit& s = seed_of(round.seeds[k]);
    any_right = any_right || s.qbeg + s.len < read_length(x);
    if (s.qbeg > 0) {
      left_of[k] = left.size();
      left.push_back({x.query_offset, x.target_offset, static_cast<std::uint32_t>(s.qbeg),
                      static_cast<std::uint32_t>(s.rbeg - x.lo), s.len * sc.match, 1});
    }
  }
  if (!left.empty() || any_right) {  // the windows placed once for all the round's calls
    AddSeconds clock(&stage.extend_dp, spans, "extension: device call");
    WTMAP_TRY(dp.aligner.place({dp.query.data(), dp.query.size(), dp.target.data(), dp.target.size()}));
  }
  std::vector<ExtendResult> left_results, right_results;
  WTMAP_TRY(extend_with_retry(left, left_results));
  wtmap::detail::parallel_for_ranges(round.seeds.size(), [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t k = begin; k < end; ++k) {
      ExtensionRound::Seed& e = round.seeds[k];
      e.region = start_region(seed_of(e), static_cast<std::int32_t>(windows[e.window].chain),
                              left_of[k] < left.size() ? &left_results[left_of[k]] : nullptr, sc);
    }
  }, kSeedsPerThread);
  for (std::size_t k = 0; k < round.seeds.size(); ++k) {
    ExtensionRound::Seed& e = round.seeds[k];
    const ExtensionRound::Window& x = windows[e.window];
    const SeedHit& s = seed_of(e);
    const std::int32_t length = read_length(x);
    const std::int32_t qe = s.qbeg + s.len;
    const std::int64_t re = s.rbeg + s.len;
    if (qe < length) {
      right_of[k] = right.size();
      right.push_back({x.query_offset + static_cast<std::uint64_t>(qe), x.target_offset + static_cast<std::uint64_t>(re - x.lo),
                       static_cast<std::uint32_t>(length - qe), static_cast<std::uint32_t>(x.hi - re), e.region.score, 0});
    }
  }
  WTMAP_TRY(extend_with_retry(right, right_results));
  wtmap::detail::parallel_for_ranges(round.seeds.size(), [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t k = begin; k < end; ++k) {
      ExtensionRound::Seed& e = round.seeds[k];
      const ExtensionRound::Window& x = windows[e.window];
      finish_region(e.region, seed_of(e), x.work->chains[x.chain], read_length(x),
                    right_of[k] < right.size() ? &right_results[right_of[k]] : nullptr, sc);
    }
  }, kSeedsPerThread);
  return {};
}

// The extensions on the backend, and bwa's second try (MAX_BAND_TRY in mem_chain2aln): one that
// improved on its start with best cells as far as 3/4 of the band from the diagonal runs again
// with twice the band, and that result stands.
Status GappedMapper::Impl::extend_with_retry(const std::vector<ExtendTask>& tasks, std::vector<ExtendResult>& results) {
  const Scoring& sc = options.scoring;
  results.assign(tasks.size(), {});
  if (tasks.empty()) return {};
  AddSeconds clock(&stage.extend_dp, spans, "extension: device call");
  WTMAP_TRY(dp.aligner.extend(sc, tasks.data(), results.data(), tasks.size()));
  std::vector<ExtendTask> again;
  std::vector<std::size_t> which;
  const std::int32_t stray = (sc.band >> 1) + (sc.band >> 2);
  for (std::size_t k = 0; k < tasks.size(); ++k) {
    if (results[k].score == tasks[k].h0 || results[k].max_off < stray) continue;
    again.push_back(tasks[k]);
    which.push_back(k);
  }
  if (again.empty()) return {};
  Scoring wide = sc;
  wide.band = 2 * sc.band;
  std::vector<ExtendResult> second(again.size());
  WTMAP_TRY(dp.aligner.extend(wide, again.data(), second.data(), again.size()));
  for (std::size_t i = 0; i < again.size(); ++i) results[which[i]] = second[i];
  return {};
}

// Runs the read's plan on as far as the seeds extended allow, each seed it hands out adding its
// region; false once the plan has ended, else it waits for the seed it handed out last.
bool GappedMapper::Impl::advance(ReadWork& w, std::int32_t read_length) const {
  std::size_t chain = w.wanted_chain, seed = w.wanted_seed;
  if (!w.waiting && !w.plan.next(w.chains, w.regions, read_length, options.scoring, chain, seed)) return false;
  for (;;) {
    const Region* done = w.extension_of(chain, seed);
    if (done == nullptr) break;
    w.regions.push_back(*done);
    if (!w.plan.next(w.chains, w.regions, read_length, options.scoring, chain, seed)) {
      w.waiting = false;
      return false;
    }
  }
  w.waiting = true;
  w.wanted_chain = chain;
  w.wanted_seed = seed;
  return true;
}

// Rounds until no read's plan waits for a seed: each round extends the seeds the plans wait for
// (and, looking ahead, the heads of their later chains) as one call on the backend.
Status GappedMapper::Impl::extend_all(std::vector<ReadWork>& work, const std::vector<ReadCodes>& encoded) {
  // A read leaves the active list for good once its plan has ended (later rounds are the few
  // reads of many seeds extended in one chain).
  std::vector<ReadWork*> active;
  for (ReadWork& w : work) active.push_back(&w);
  const bool look_ahead = options.schedule == ExtensionSchedule::lookahead;
  ExtensionRound round;
  std::vector<std::uint8_t> waits;  // by active read: it takes part in this round
  for (;;) {
    round.clear();
    // Each read's plan on the CPU threads (its own data only; on the mapping thread alone, the
    // plans held up the batch), then the round in read order.
    waits.assign(active.size(), 0);
    wtmap::detail::parallel_for_ranges(active.size(), [&](std::uint64_t begin, std::uint64_t end) {
      for (std::uint64_t k = begin; k < end; ++k) {
        ReadWork& w = *active[k];
        const auto read_length = static_cast<std::int32_t>(encoded[w.read].forward.size());
        w.ahead.clear();
        waits[k] = advance(w, read_length);
        if (!waits[k] || !look_ahead) continue;
        // Guesses double with each round the read has waited: the rounds of a read that extends
        // n seeds fall from n to about log2 n, at most about as many extensions again as it needs.
        const std::size_t doubling = (std::size_t{1} << std::min<std::uint32_t>(w.rounds++, 16)) - 1;
        const std::size_t guesses = std::min(kMaxGuesses, doubling);
        w.plan.take_ahead(w.chains, w.regions, read_length, options.scoring, guesses, w.ahead);
      }
    }, kReadsPerThread);
    std::size_t kept = 0;
    for (std::size_t k = 0; k < active.size(); ++k) {
      if (!waits[k]) continue;
      ReadWork* w = active[k];
      active[kept++] = w;
      round.add(w, w->wanted_chain, w->wanted_seed);
      for (const auto& [chain, seed] : w->ahead) round.add(w, chain, seed);
    }
    active.resize(kept);
    if (active.empty()) return {};
    WTMAP_TRY(extend_round(round, encoded));
    for (const ExtensionRound::Seed& e : round.seeds) {
      const ExtensionRound::Window& x = round.windows[e.window];
      x.work->extended.push_back({x.chain, e.seed, e.region});
    }
  }
}

// The read's primary, its alternatives (XA: secondaries of the primary scoring close to it, all or
// none) and the other primaries (supplementary: other parts of a chimeric read) that score enough;
// w.regions as finish_regions leaves them.
void GappedMapper::Impl::choose_hits(ReadWork& w, GappedReadAlignment& out) const {
  std::vector<Reported>& reported = w.reported;
  if (w.regions.empty() || w.regions[0].score < options.min_output_score) return;
  const Region& best = w.regions[0];
  out.mapped = true;
  out.sub_score = best.sub;
  out.sub_count = static_cast<std::uint32_t>(best.sub_n);
  out.chain_sub_score = best.csub;
  out.seed_coverage = static_cast<std::uint32_t>(best.seed_coverage);
  std::size_t alternatives = 0, supplementary = 0;
  for (std::size_t i = 1; i < w.regions.size(); ++i) {
    const Region& r = w.regions[i];
    alternatives += r.secondary == 0 && r.score >= options.xa_drop_ratio * best.score;
    supplementary += r.secondary < 0 && r.score >= options.min_output_score;
  }
  out.candidates.clear();
  for (std::size_t i = 0; i < w.regions.size() && i < kMaxPairCandidates; ++i)
    out.candidates.push_back(candidate_of(w.regions[i], reference));
  out.alternatives.resize(alternatives <= options.max_xa_hits ? alternatives : 0);
  out.supplementary.resize(supplementary);
  reported.push_back({&best, w.read, &out.primary});
  std::size_t a = 0, s = 0;
  for (std::size_t i = 1; i < w.regions.size(); ++i) {
    const Region& r = w.regions[i];
    if (r.secondary == 0 && r.score >= options.xa_drop_ratio * best.score && a < out.alternatives.size())
      reported.push_back({&r, w.read, &out.alternatives[a++]});
    if (r.secondary < 0 && r.score >= options.min_output_score) reported.push_back({&r, w.read, &out.supplementary[s++]});
  }
}

// The CIGARs of the reported hits: one batch of banded global alignments on the backend, each
// in a band that holds every alignment scoring the region's own (global_band_for_score).
Status GappedMapper::Impl::align_reported(DpWorkspace& ws, const std::vector<Reported>& reported,
                                          const std::vector<ReadCodes>& encoded) {
  const Scoring& sc = options.scoring;
  // A region of equal lengths whose score leaves no room for a gap (band 0) has one alignment,
  // the diagonal: its CIGAR is one M, without the DP (bwa_gen_cigar2's "no gap" case). Most reads'
  // are; the others go to the backend, codes and tasks for them alone.
  std::vector<std::int32_t> band(reported.size());
  std::vector<std::size_t> aligned;  // the reported hits that take the DP, in order
  for (std::size_t k = 0; k < reported.size(); ++k) {
    const Region& g = *reported[k].region;
    const auto qlen = static_cast<std::uint32_t>(g.qe - g.qb), tlen = static_cast<std::uint32_t>(g.re - g.rb);
    band[k] = global_band_for_score(qlen, tlen, g.true_score, sc);
    if (!(qlen == tlen && qlen > 0 && band[k] == 0)) aligned.push_back(k);
  }
  std::vector<std::uint64_t> query_at, target_at;
  const auto region = [&](std::size_t a) -> const Region& { return *reported[aligned[a]].region; };
  lay_out_codes(
      aligned.size(), [&](std::size_t a) { return static_cast<std::uint64_t>(region(a).qe - region(a).qb); },
      [&](std::size_t a) { return static_cast<std::uint64_t>(region(a).re - region(a).rb); },
      [&](std::size_t a, std::uint8_t* q, std::uint8_t* t) {
        // On the forward strand, as bwa mem's mem_reg2aln aligns a reverse region: the read's
        // reverse complement against the contig, so that a gap with equally good places takes
        // the leftmost on the contig, bwa's CIGAR, not the leftmost on the reverse strand.
        const Region& g = region(a);
        const ReadCodes& read = encoded[reported[aligned[a]].read];
        if (g.reverse) {
          const auto length = static_cast<std::int64_t>(read.reverse.size());
          const auto contig_length = static_cast<std::int64_t>(reference.contig_length(g.contig));
          std::copy(read.reverse.begin() + (length - g.qe), read.reverse.begin() + (length - g.qb), q);
          reference.copy_bases(g.contig, false, contig_length - g.re, contig_length - g.rb, t);
        } else {
          std::copy(read.forward.begin() + g.qb, read.forward.begin() + g.qe, q);
          reference.copy_bases(g.contig, false, g.rb, g.re, t);
        }
      },
      query_at, target_at, ws.query, ws.target);
  std::vector<GlobalTask> tasks(aligned.size());
  std::uint64_t cigar_size = 0;
  for (std::size_t a = 0; a < aligned.size(); ++a) {
    const Region& g = region(a);
    const auto qlen = static_cast<std::uint32_t>(g.qe - g.qb), tlen = static_cast<std::uint32_t>(g.re - g.rb);
    tasks[a] = {query_at[a], target_at[a], qlen, tlen, band[aligned[a]], cigar_size};
    cigar_size += global_max_cigar_ops(qlen, tlen);
  }
  std::vector<GlobalResult> results(tasks.size());
  wtmap::detail::HostPageVector<std::uint32_t>& cigars = ws.cigars;
  cigars.resize(std::max<std::uint64_t>(cigar_size, 1));
  const CodeArrays arrays{ws.query.data(), ws.query.size(), ws.target.data(), ws.target.size()};
  if (!tasks.empty()) {
    // rescue_mates() runs beside map(): its time is not map()'s (-v)
    const bool mapping = &ws == &dp;
    AddSeconds clock(mapping ? &stage.cigar_dp : nullptr, spans, mapping ? "CIGARs: device call" : "rescue: CIGARs: device call");
    WTMAP_TRY(ws.aligner.align_global(sc, arrays, tasks.data(), results.data(), tasks.size(), cigars.data(), cigars.size()));
  }
  for (std::size_t a = 0; a < aligned.size(); ++a) {
    if (results[a].n_cigar == 0 && tasks[a].query_length + tasks[a].target_length > 0)
      return Status(StatusCode::invalid_argument, "gapped: the CIGAR of a region did not fit");
  }
  // Each hit's CIGAR: the DP's, or the diagonal's one M (BAM's encoding, M = 0; finish_hit copies it).
  std::vector<std::size_t> task_of(reported.size(), SIZE_MAX);
  for (std::size_t a = 0; a < aligned.size(); ++a) task_of[aligned[a]] = a;
  std::vector<Status> failed(reported.size());
  wtmap::detail::parallel_for_ranges(reported.size(), [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t k = begin; k < end; ++k) {
      const Region& g = *reported[k].region;
      const std::size_t a = task_of[k];
      const std::uint32_t diagonal = static_cast<std::uint32_t>(g.qe - g.qb) << 4;
      const std::uint32_t* ops = a == SIZE_MAX ? &diagonal : cigars.data() + tasks[a].cigar_offset;
      failed[k] = finish_hit(g, encoded[reported[k].read], ops, a == SIZE_MAX ? 1 : results[a].n_cigar, *reported[k].hit);
    }
  }, kReadsPerThread);
  for (const Status& f : failed) WTMAP_TRY(f);
  return {};
}

// A hit from its region and CIGAR: soft clips, SAM order and forward coordinates, NM and MD.
Status GappedMapper::Impl::finish_hit(const Region& region, const ReadCodes& read, const std::uint32_t* ops,
                                      std::uint32_t n_ops, GappedHit& hit) const {
  const auto length = static_cast<std::uint32_t>(read.forward.size());
  const auto qlen = static_cast<std::uint32_t>(region.qe - region.qb), tlen = static_cast<std::uint32_t>(region.re - region.rb);
  // The ops are on the forward strand (align_reported); the clips in SAM's order, the read's end
  // first where it is reverse.
  const auto qb = static_cast<std::uint32_t>(region.qb);
  const std::uint32_t tail = length - static_cast<std::uint32_t>(region.qe);
  const std::uint32_t lead = region.reverse ? tail : qb, trail = region.reverse ? qb : tail;
  hit.cigar.clear();
  if (lead > 0) hit.cigar.push_back(lead << 4 | kCigarSoftClip);
  hit.cigar.insert(hit.cigar.end(), ops, ops + n_ops);
  if (trail > 0) hit.cigar.push_back(trail << 4 | kCigarSoftClip);
  const std::uint64_t contig_length = reference.contig_length(region.contig);
  hit.contig = region.contig;
  hit.reverse = region.reverse;
  hit.position = static_cast<std::uint64_t>(region.reverse ? static_cast<std::int64_t>(contig_length) - region.re : region.rb);
  hit.reference_end = hit.position + tlen;
  hit.query_begin = static_cast<std::uint32_t>(region.qb);
  hit.query_end = static_cast<std::uint32_t>(region.qe);
  hit.score = region.score;
  // NM and MD along the forward strand: the read as SAM holds it against the contig.
  const std::vector<std::uint8_t>& sam_read = region.reverse ? read.reverse : read.forward;
  Result<EditTags> tags = edit_tags(sam_read.data() + lead, qlen, reference.forward_codes(region.contig) + hit.position,
                                    tlen, hit.cigar.data() + (lead > 0 ? 1 : 0), n_ops);
  if (!tags.ok()) return tags.status();
  hit.edit_distance = tags->nm;
  hit.md = std::move(tags->md);
  return {};
}

GappedMapper::GappedMapper(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GappedMapper::GappedMapper(GappedMapper&&) noexcept = default;
GappedMapper& GappedMapper::operator=(GappedMapper&&) noexcept = default;
GappedMapper::~GappedMapper() = default;

const GappedOptions& GappedMapper::options() const { return impl_->options; }
const GappedStageSeconds& GappedMapper::stage_seconds() const { return impl_->stage; }
void GappedMapper::keep_step_spans() { impl_->spans.keep(); }
std::vector<StepSpan> GappedMapper::take_step_spans() { return impl_->spans.take(); }

Result<GappedMapper> GappedMapper::create(const fmindex::FmIndex& index, const GappedOptions& options) {
  if (!options.scoring.valid()) return invalid_argument("gapped: invalid scoring (penalties >= 0, match > 0)");
  if (options.min_seed_length == 0) return invalid_argument("gapped: the minimum seed length must be positive");
  if (!index.can_locate()) return invalid_argument("gapped alignment needs an index that can locate (not search_only)");
  Result<MapperReference> reference = MapperReference::create(index);
  if (!reference.ok()) return reference.status();
  return GappedMapper(std::make_unique<Impl>(
      index, options, std::make_shared<const MapperReference>(std::move(reference).value())));
}

GappedMapper GappedMapper::another() const { return another(*impl_->index); }

GappedMapper GappedMapper::another(const fmindex::FmIndex& copy) const {
  return GappedMapper(std::make_unique<Impl>(copy, impl_->options, impl_->shared_reference));
}

std::vector<ReadCodes> GappedMapper::encode(const SeqRecord* reads, std::size_t count) {
  std::vector<ReadCodes> encoded;
  encode(reads, count, encoded);
  return encoded;
}

void GappedMapper::encode(const SeqRecord* reads, std::size_t count, std::vector<ReadCodes>& codes) {
  codes.resize(count);
  wtmap::detail::parallel_for_ranges(count, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t i = begin; i < end; ++i) encode_read(reads[i].sequence, codes[i]);
  }, kReadsPerThread);
}

void GappedMapper::release_device_memory() {
  impl_->dp.aligner.release_device_memory();
  impl_->seeder.release_device_memory();
  impl_->index->release_workspace();
}

Status GappedMapper::map(const SeqRecord* reads, std::size_t count, std::vector<GappedReadAlignment>& alignments) {
  return map(encode(reads, count), alignments);
}

Status GappedMapper::map(const std::vector<ReadCodes>& encoded, std::vector<GappedReadAlignment>& alignments) {
  Impl& m = *impl_;
  std::vector<std::uint64_t> first_position;
  WTMAP_TRY(m.seed_and_locate(encoded, first_position));
  // The reads to map, in the work items of the batches before (their lists' memory reused).
  std::vector<ReadWork>& work = m.work;
  std::vector<std::size_t>& to_map = m.to_map;
  to_map.clear();
  for (std::size_t i = 0; i < encoded.size(); ++i) {
    const std::size_t length = encoded[i].forward.size();
    if (m.maps_length(length)) to_map.push_back(i);
  }
  work.resize(to_map.size());
  // The host's per-read steps on the CPU threads: each read's own data only, so any split of
  // the reads gives the same result. (The alignments' copy from an empty one keeps their lists'
  // memory, which finish() hands back batch after batch.)
  alignments.resize(encoded.size());
  wtmap::detail::parallel_for_ranges(encoded.size(), [&](std::uint64_t begin, std::uint64_t end) {
    static const GappedReadAlignment kEmpty;
    for (std::uint64_t i = begin; i < end; ++i) {
      GappedReadAlignment& a = alignments[i];
      a = kEmpty;
      const std::size_t length = encoded[i].forward.size();
      if (!m.maps_length(length)) {
        a.flags = length < m.options.min_seed_length ? kTooShort : kTooLong;
        continue;
      }
      a.repeat_fraction = repeat_fraction(m.seeds.data() + m.seeding[i].seed_offset, m.seeded[i].count,
                                          m.options.max_occurrences, static_cast<std::uint32_t>(length));
    }
  }, kReadsPerThread);
  std::optional<AddSeconds> clock(std::in_place, &m.stage.chain, m.spans, "chains");
  wtmap::detail::parallel_for_ranges(work.size(), [&](std::uint64_t begin, std::uint64_t end) {
    std::vector<SeedHit> hits;  // a read's at a time, its memory kept over the range
    for (std::uint64_t k = begin; k < end; ++k) {
      ReadWork& w = work[k];
      w.reset(to_map[k]);
      m.seed_hits(w.read, first_position, hits);
      w.chains = chain_seeds(hits, m.reference, m.options);
      w.plan.start(w.chains);
    }
  }, kReadsPerThread);
  clock.emplace(&m.stage.extend, m.spans, "extension");
  WTMAP_TRY(m.extend_all(work, encoded));
  clock.emplace(&m.stage.choose, m.spans, "region choice");
  wtmap::detail::parallel_for_ranges(work.size(), [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t k = begin; k < end; ++k) {
      finish_regions(work[k].regions, encoded[work[k].read].hash, m.options);
      m.choose_hits(work[k], alignments[work[k].read]);
    }
  }, kReadsPerThread);
  clock.emplace(&m.stage.cigar, m.spans, "CIGAR and tags");
  std::vector<Reported> reported;
  for (const ReadWork& w : work) reported.insert(reported.end(), w.reported.begin(), w.reported.end());
  WTMAP_TRY(m.align_reported(m.dp, reported, encoded));
  wtmap::detail::parallel_for_ranges(work.size(), [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t k = begin; k < end; ++k) m.set_mapping_qualities(work[k], alignments[work[k].read]);
  }, kReadsPerThread);
  return {};
}

// The read's MAPQ, and each supplementary hit's own: its region's score against its own
// sub-scores (mem_reg2sam).
void GappedMapper::Impl::set_mapping_qualities(const ReadWork& w, GappedReadAlignment& a) const {
  if (!a.mapped) return;
  a.mapq = mapping_quality(a, options);
  for (const Reported& r : w.reported) {
    if (r.region->secondary >= 0 || r.hit == &a.primary) continue;
    GappedReadAlignment part;
    part.primary = *r.hit;
    part.sub_score = r.region->sub;
    part.chain_sub_score = r.region->csub;
    part.sub_count = static_cast<std::uint32_t>(r.region->sub_n);
    part.seed_coverage = static_cast<std::uint32_t>(r.region->seed_coverage);
    part.repeat_fraction = a.repeat_fraction;
    r.hit->mapq = mapping_quality(part, options);
    r.hit->sub_score = std::max(part.sub_score, part.chain_sub_score);
  }
}

// Every job's mate aligned locally in its window: one batch on the backend, unbanded (the
// band covers the longest window), the window read on the strand the job names.
Status GappedMapper::Impl::search_windows(const std::vector<ReadCodes>& reads, const std::vector<RescueJob>& jobs,
                                          std::vector<LocalResult>& found) {
  std::vector<std::int64_t> lo(jobs.size()), hi(jobs.size());
  Scoring sc = options.scoring;
  sc.band = 0;
  for (std::size_t k = 0; k < jobs.size(); ++k) {
    const RescueJob& j = jobs[k];
    strand_span(j.window, reference.contig_length(j.window.contig), lo[k], hi[k]);
    sc.band = std::max<std::int32_t>(
        {sc.band, static_cast<std::int32_t>(reads[j.read].forward.size()), static_cast<std::int32_t>(hi[k] - lo[k])});
  }
  std::vector<std::uint64_t> query_at, target_at;
  lay_out_codes(
      jobs.size(), [&](std::size_t k) { return reads[jobs[k].read].forward.size(); },
      [&](std::size_t k) { return static_cast<std::uint64_t>(hi[k] - lo[k]); },
      [&](std::size_t k, std::uint8_t* q, std::uint8_t* t) {
        const RescueJob& j = jobs[k];
        std::copy(reads[j.read].forward.begin(), reads[j.read].forward.end(), q);
        reference.copy_bases(j.window.contig, j.window.reverse, lo[k], hi[k], t);
      },
      query_at, target_at, rescue_dp.query, rescue_dp.target);
  // A find kept (rescue_bar) also gets bwa's csub: ksw_align2's score2 with min_seed_len * A.
  const auto floor = static_cast<std::int32_t>(options.min_seed_length) * options.scoring.match;
  std::vector<LocalTask> tasks(jobs.size());
  for (std::size_t k = 0; k < jobs.size(); ++k) {
    tasks[k] = {query_at[k], target_at[k], static_cast<std::uint32_t>(reads[jobs[k].read].forward.size()),
                static_cast<std::uint32_t>(hi[k] - lo[k]), floor, rescue_bar()};
  }
  found.assign(tasks.size(), {});
  if (tasks.empty()) return {};
  const CodeArrays arrays{rescue_dp.query.data(), rescue_dp.query.size(), rescue_dp.target.data(),
                          rescue_dp.target.size()};
  const AddSeconds clock(nullptr, spans, "rescue: windows: device call");
  return rescue_dp.aligner.align_local(sc, arrays, tasks.data(), found.data(), tasks.size());
}

Status GappedMapper::rescue_mates(const std::vector<SeqRecord>& reads, std::vector<GappedReadAlignment>& alignments,
                                  const InsertSizeModel& model, std::int32_t unpaired) {
  return rescue_mates(encode(reads.data(), reads.size()), alignments, model, unpaired);
}

Status GappedMapper::rescue_mates(const std::vector<ReadCodes>& reads, std::vector<GappedReadAlignment>& alignments,
                                  const InsertSizeModel& model, std::int32_t unpaired) {
  Impl& m = *impl_;
  if (alignments.size() != reads.size() || reads.size() % 2 != 0) {
    return invalid_argument("rescue_mates: " + std::to_string(reads.size()) + " reads (pairs: an even number), " +
                            std::to_string(alignments.size()) + " alignments");
  }
  const AddSeconds clock(nullptr, m.spans, "rescue");
  AlignmentEdits edits(alignments);  // add_rescued_hits and align_pair_choices fill pair_hits anew
  const std::vector<RescueJob> jobs = plan_rescues(reads, alignments, model, unpaired, m.reference, m.options);
  std::vector<LocalResult> found;
  WTMAP_TRY(m.search_windows(reads, jobs, found));
  // The alignments good enough, as regions in strand coordinates (the read as given against the
  // window's strand), each once: one overlapping an earlier one of its mate is the same find.
  const std::int32_t bar = m.rescue_bar();
  std::vector<Region> regions;
  std::vector<std::size_t> read_of;
  for (std::size_t k = 0; k < jobs.size(); ++k) {
    if (found[k].score < bar) continue;
    const RescueWindow& w = jobs[k].window;
    std::int64_t lo = 0, hi = 0;
    const std::uint64_t contig_length = m.reference.contig_length(w.contig);
    strand_span(w, contig_length, lo, hi);
    Region g;
    g.contig = w.contig;
    g.reverse = w.reverse;
    g.rb = lo + found[k].target_begin;
    g.re = lo + found[k].target_end;
    g.qb = found[k].query_begin;
    g.qe = found[k].query_end;
    g.score = g.true_score = found[k].score;
    g.csub = found[k].tandem;
    g.seed_coverage = static_cast<std::int32_t>(std::min<std::int64_t>(g.re - g.rb, g.qe - g.qb) >> 1);
    const auto forward_begin = static_cast<std::uint64_t>(g.reverse ? static_cast<std::int64_t>(contig_length) - g.re : g.rb);
    const auto forward_end = forward_begin + static_cast<std::uint64_t>(g.re - g.rb);
    if (overlaps_a_hit(alignments[jobs[k].read], g.contig, g.reverse, forward_begin, forward_end)) continue;
    bool again = false;
    for (std::size_t r = 0; r < regions.size() && !again; ++r) {
      const Region& o = regions[r];
      again = read_of[r] == jobs[k].read && o.contig == g.contig && o.reverse == g.reverse && o.rb < g.re && g.rb < o.re;
    }
    if (again) continue;
    regions.push_back(g);
    read_of.push_back(jobs[k].read);
  }
  // Their CIGARs, NM and MD as map() makes a hit's.
  std::vector<GappedHit> hits;
  WTMAP_TRY(m.align_found(reads, regions, read_of, hits));
  // Each mate's rescued hits, best first (ties: in the order found), into its alignment.
  std::vector<std::size_t> order(regions.size());
  for (std::size_t r = 0; r < order.size(); ++r) order[r] = r;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return read_of[a] != read_of[b] ? read_of[a] < read_of[b] : hits[a].score > hits[b].score;
  });
  for (std::size_t begin = 0; begin < order.size();) {
    std::size_t end = begin;
    std::vector<GappedHit> rescued;
    std::vector<std::int32_t> tandem;
    for (; end < order.size() && read_of[order[end]] == read_of[order[begin]]; ++end) {
      rescued.push_back(std::move(hits[order[end]]));
      tandem.push_back(regions[order[end]].csub);
    }
    add_rescued_hits(edits.edit(read_of[order[begin]]), rescued, tandem, regions[order[begin]].seed_coverage, m.options);
    begin = end;
  }
  WTMAP_TRY(m.align_pair_choices(reads, edits, model, unpaired));
  edits.commit();
  return {};
}

// The hits of regions found beside map() (rescued, or chosen by pairing) -- region r of read
// read_of[r] -- as map() makes a hit's: one batch of global alignments on rescue_dp.
Status GappedMapper::Impl::align_found(const std::vector<ReadCodes>& reads, const std::vector<Region>& regions,
                                       const std::vector<std::size_t>& read_of, std::vector<GappedHit>& hits) {
  hits.assign(regions.size(), {});
  std::vector<Reported> reported;
  for (std::size_t r = 0; r < regions.size(); ++r) reported.push_back({&regions[r], read_of[r], &hits[r]});
  return reported.empty() ? Status{} : align_reported(rescue_dp, reported, reads);
}

// The hits pair_gapped_mates will write that no mate holds yet -- a chosen candidate that is not
// the primary, and its new XA list (gapped_written_candidates) -- as one batch of global
// alignments, into each mate's pair_hits. The choice is pair_gapped_mates' own (choose_gapped_pair
// with the same scoring), so it finds them there.
Status GappedMapper::Impl::align_pair_choices(const std::vector<ReadCodes>& reads, AlignmentEdits& alignments,
                                              const InsertSizeModel& model, std::int32_t unpaired) {
  PairScoring scoring = gapped_pair_scoring(options.scoring, unpaired);
  scoring.xa_drop_ratio = options.xa_drop_ratio;
  scoring.max_xa_hits = options.max_xa_hits;
  std::vector<Region> regions;
  std::vector<std::size_t> read_of;
  for (std::size_t first = 0; first + 1 < alignments.size(); first += 2) {
    const GappedReadAlignment& a0 = alignments[first];
    const GappedReadAlignment& a1 = alignments[first + 1];
    const GappedReadAlignment* mates[2] = {&a0, &a1};
    std::vector<PairCandidate> candidates[2];
    const PairChoice choice = choose_gapped_pair(a0, a1, model, scoring, candidates);
    for (std::size_t m = 0; m < 2; ++m) {
      if (choice.hit[m] == 0) continue;
      for (const std::size_t k : gapped_written_candidates(candidates[m], choice.hit[m], scoring)) {
        if (hit_of_candidate(*mates[m], candidates[m][k]) != nullptr) continue;
        regions.push_back(region_of(candidates[m][k], reference));
        read_of.push_back(first + m);
      }
    }
  }
  std::vector<GappedHit> hits;
  WTMAP_TRY(align_found(reads, regions, read_of, hits));
  for (std::size_t r = 0; r < regions.size(); ++r) alignments.edit(read_of[r]).pair_hits.push_back(std::move(hits[r]));
  return {};
}

}  // namespace wtmap::aligner::gapped
