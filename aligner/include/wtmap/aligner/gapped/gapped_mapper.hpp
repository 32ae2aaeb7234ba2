// wtmap aligner (gapped): bwa mem's single-end algorithm on the GPU or the CPU backend, the same
// steps on either (WTMAP_HD functions run by core's batch operations): SMEM seeds from the
// both-strand index (fmindex/smem.hpp), their occurrences located, chained on the diagonal,
// extended with banded affine-gap alignment and z-drop (extend.hpp), the regions deduplicated and
// marked primary or secondary, the primary's CIGAR from a banded global alignment (global.hpp),
// NM and MD from the reference (edit_tags.hpp). For pairs, mate rescue (bwa mem's mem_matesw):
// a mate aligned locally in the window an insert-size model allows, and the alignments of the
// regions pairing will write that map() did not report (rescue_mates). Options and
// defaults are bwa mem's.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "wtmap/aligner/gapped/gapped_alignment.hpp"
#include "wtmap/aligner/gapped/scoring.hpp"
#include "wtmap/aligner/pairing.hpp"
#include "wtmap/aligner/seq_reader.hpp"
#include "wtmap/core/status.hpp"

namespace wtmap::fmindex {
class FmIndex;
}

namespace wtmap::aligner::gapped {

// How the seeds' extensions are batched; the alignments are the same either way (an extension
// depends only on its read, chain and seed; which seeds bwa's order skips, only on the regions
// found before), so this is a choice of speed.
//   lookahead   each round extends the seed each read's plan waits for, the first seed of
//               every later chain of the read (which bwa's order extends in its turn unless
//               another chain's region holds it: rare, mason reads 0.05 % more extensions), and
//               guesses at the seeds of its chains it will want next, twice as many with each
//               round it has waited (a read of a tandem repeat extends dozens to hundreds of
//               seeds of one chain): the rounds of a batch fall from the most seeds a read
//               extends to about their log2 (ART reads of a 50 Mbp synthetic genome, one batch
//               of 50000: 328 rounds to 9, 0.4 % more extensions). On the GPU a round is a
//               round trip and a launch as long as its longest extension;
//   rounds      one seed per read and round, bwa's order itself (the reference for the tests).
enum class ExtensionSchedule { lookahead, rounds };

struct GappedOptions {
  Scoring scoring;                      // -A -B -O -E -L -w -d
  std::uint32_t min_seed_length = 19;   // bwa mem -k (wtmap align --min-seed)
  std::uint32_t max_occurrences = 500;  // -c: seeds with more hits are sampled (occurrence_sample) and repetitive
  std::int32_t min_output_score = 30;   // -T: a read whose best score is lower is reported unmapped
  float mask_level = 0.50f;             // a region overlapping a better one on the read by more is secondary to it
  float drop_ratio = 0.50f;             // -D: chains and regions below this share of the best are dropped
  float xa_drop_ratio = 0.80f;          // alternatives (XA) score at least this share of the primary
  std::uint32_t max_xa_hits = 5;        // -h: more alternatives than this: no XA at all
  std::uint32_t max_read_length = 1000; // longer reads are left unmapped (kTooLong)
  ExtensionSchedule schedule = ExtensionSchedule::lookahead;
};

// Seconds spent in each step of map(), summed over its calls (`wtmap align -v`, the benchmark):
// wall time of the calling thread, device work included where the step waits for it; and the
// extension step's work: seeds extended and the rounds (calls on the backend) they took.
struct GappedStageSeconds {
  double seed = 0;    // SMEM seeds (backend)
  double locate = 0;  // their occurrences (backend)
  double chain = 0;   // seed hits placed on the reference and chained (host threads)
  double extend = 0;     // rounds of banded extension (backend) and their windows (host)
  double extend_dp = 0;  //   of which the backend's calls
  double choose = 0;     // regions deduplicated, primary and alternatives chosen (host threads)
  double cigar = 0;      // global alignments of the reported hits (backend), NM, MD, MAPQ (host)
  double cigar_dp = 0;   //   of which the backend's call
  std::uint64_t seeds_extended = 0, extension_rounds = 0;

  GappedStageSeconds& operator+=(const GappedStageSeconds& o) {
    seed += o.seed;
    locate += o.locate;
    chain += o.chain;
    extend += o.extend;
    extend_dp += o.extend_dp;
    choose += o.choose;
    cigar += o.cigar;
    cigar_dp += o.cigar_dp;
    seeds_extended += o.seeds_extended;
    extension_rounds += o.extension_rounds;
    return *this;
  }
};

// A read's codes (0..4, anything but A/C/G/T/U is N) on both strands, and the hash that breaks
// ties between its equally scoring hits.
struct ReadCodes {
  std::vector<std::uint8_t> forward, reverse;
  std::uint64_t hash = 0;
};

// Which of a seed's `occurrences` (suffix-array rows first, first + 1, ...) the mapper locates, as
// bwa mem's mem_chain takes them: every one up to max_occurrences; beyond, rows first + k * step
// for k < count, step = occurrences / max_occurrences, count = max_occurrences, evenly spread, so
// that a read of a repeat still finds copies to align to (at MAPQ 0) rather than none. Such a
// seed still counts in repeat_fraction.
struct OccurrenceSample {
  std::uint64_t step = 1, count = 0;
};
constexpr OccurrenceSample occurrence_sample(std::uint64_t occurrences, std::uint64_t max_occurrences) {
  if (occurrences <= max_occurrences) return {1, occurrences};
  const std::uint64_t step = occurrences / max_occurrences;
  const std::uint64_t spread = (occurrences + step - 1) / step;  // k < occurrences
  return {step, spread < max_occurrences ? spread : max_occurrences};
}

// One step of a mapper's work as a span of time: map()'s steps as GappedStageSeconds counts them
// and their device calls, rescue_mates() and its device calls (`wtmap align`'s trace, WTMAP_TRACE).
struct StepSpan {
  const char* step;  // a string literal: "seeds", "extension", "extension: device call", ...
  std::chrono::steady_clock::time_point begin, end;
};

// Aligns batches of reads against one index (which must outlive it). Not copyable; one batch at a time.
class GappedMapper {
 public:
  static Result<GappedMapper> create(const fmindex::FmIndex& index, const GappedOptions& options);
  // A mapper of the same index and options that shares this one's copy of the reference (one byte
  // per base), to map another batch at the same time on another thread.
  GappedMapper another() const;
  // The same for `copy`, this one's index loaded on another GPU (the same file): a mapper there
  // that shares this one's reference (`wtmap align --gpus`). Made with copy's GPU current.
  GappedMapper another(const fmindex::FmIndex& copy) const;
  GappedMapper(GappedMapper&&) noexcept;
  GappedMapper& operator=(GappedMapper&&) noexcept;
  ~GappedMapper();

  // One alignment per read (letters as SeqRecord::sequence holds them; anything but A/C/G/T/U is N),
  // the same bytes on either backend, for any batch size or thread count. mapq is filled.
  Status map(const std::vector<SeqRecord>& reads, std::vector<GappedReadAlignment>& alignments) {
    return map(reads.data(), reads.size(), alignments);
  }
  // The same for reads[0, count) of an array (a part of a batch). After a device_out_of_memory
  // the alignments are unspecified, and the same reads may be mapped again, whole or in parts.
  Status map(const SeqRecord* reads, std::size_t count, std::vector<GappedReadAlignment>& alignments);
  // The same from reads already encoded: the batch's first step, apart so that a caller can keep
  // a batch's codes once its records are gone (GappedSearchEngine's mapping threads).
  static std::vector<ReadCodes> encode(const SeqRecord* reads, std::size_t count);
  // The same into `codes`, whose items keep their memory (a caller recycling a batch's codes).
  static void encode(const SeqRecord* reads, std::size_t count, std::vector<ReadCodes>& codes);
  Status map(const std::vector<ReadCodes>& encoded, std::vector<GappedReadAlignment>& alignments);

  // Mate rescue (bwa mem's mem_matesw) over pairs -- reads 2p and 2p + 1 are mates, `alignments`
  // as map() gave them: for each hit of a mate scoring within `unpaired` (-U) of its best, where
  // the other mate has no hit the model pairs with it, the other mate (on the strand a proper
  // pair needs) is aligned locally, unbanded, in the window the model allows (rescue_window). A
  // local alignment scoring at least --min-seed (bwa's bar) and -T (so that every hit written
  // passes -T), and overlapping none of the mate's hits, becomes one of its hits: CIGAR, NM, MD
  // as map() makes them; the primary if the mate had none or it scores more (mate_rescue.hpp).
  // All windows of a call run as one batch of local alignments on the backend (LocalOp), their
  // CIGARs as one batch of global alignments. Then pairing's choice (choose_gapped_pair over every
  // candidate of both mates, with -U `unpaired` and the options' scoring, -h and XA share, as
  // pair_gapped_mates makes it): a mate that will be written at a candidate no hit holds, or with
  // an XA list holding such candidates, gets their hits in pair_hits, one more batch of global
  // alignments. Nothing without a known model. The result depends on each pair and the model
  // only; on an error (device_out_of_memory too) `alignments` are as they were. May run while
  // map() runs on another thread (each has its own DP buffers), not beside another rescue_mates().
  Status rescue_mates(const std::vector<SeqRecord>& reads, std::vector<GappedReadAlignment>& alignments,
                      const InsertSizeModel& model, std::int32_t unpaired);
  // The same from the reads' codes (encode), which a caller that mapped them from codes still holds.
  Status rescue_mates(const std::vector<ReadCodes>& reads, std::vector<GappedReadAlignment>& alignments,
                      const InsertSizeModel& model, std::int32_t unpaired);

  // Frees the device buffers map() keeps between batches (seeding, the index's locate workspace,
  // the DP's); the next map() makes them anew, for its own size. Not rescue_mates()' DP buffers,
  // which may be in use on another thread meanwhile.
  void release_device_memory();

  const GappedOptions& options() const;
  const GappedStageSeconds& stage_seconds() const;
  // From now on every step's span is kept (none by default): a run's timeline.
  void keep_step_spans();
  // The spans kept since the last call, moved out; safe beside map() or rescue_mates() on another
  // thread.
  std::vector<StepSpan> take_step_spans();

 private:
  struct Impl;
  explicit GappedMapper(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// bwa mem's mapping quality of a read's primary alignment (mem_approx_mapq_se): 0..60.
std::uint8_t mapping_quality(const GappedReadAlignment& a, const GappedOptions& options);

}  // namespace wtmap::aligner::gapped
