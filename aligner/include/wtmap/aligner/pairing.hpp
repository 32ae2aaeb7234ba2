// wtmap aligner: paired-end reads -- mate names, the insert-size model, bwa mem's choice of a pair
// of hits and its MAPQ, and the SAM fields that tie two mates together (FLAG bits, RNEXT/PNEXT,
// TLEN, MC, MQ). Independent of how each mate was aligned: a mate is a list of hits (MateHit), the
// best first, each with a score and its reference span, so the k-mismatch mode (mate_hits below)
// and the gapped mode (pair_gapped_mates) feed the same pairing and the same SAM fields.
//
// Sources: bwa mem's bwamem_pair.c (mem_pestat: the insert-size distribution from quartiles;
// mem_pair: the pair score, both mates' scores plus the log-likelihood of the insert size;
// mem_sam_pe: unpaired penalty -U, MAPQ from the pair score margin), bwamem.c (mem_aln2sam: the
// mate fields) and samtools fixmate (bam_mate.c: TLEN between the mates' 5' ends and MC, where
// its rules and bwa's differ, so that fixmate changes nothing), written anew here. Space:
// O(hits) per pair; time O(hits1 * hits2) per pair, with at most 1 + kMaxAlternatives hits a
// mate in the k-mismatch mode and kMaxPairCandidates plus the rescued ones in the gapped mode
// (mem_pair scores every region of both mates, reported or not).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "wtmap/aligner/alignment.hpp"
#include "wtmap/aligner/gapped/gapped_alignment.hpp"
#include "wtmap/aligner/gapped/scoring.hpp"
#include "wtmap/core/status.hpp"

namespace wtmap::aligner {

// A read name without its mate suffix "/1" or "/2" (the reader has cut it at the first blank):
// mates are matched by it, and SAM wants it (samtools fixmate pairs records by QNAME).
std::string_view mate_name(std::string_view name);
void strip_mate_suffix(std::string& name);

// The insert sizes a proper pair may have, orientation FR (forward mate leftmost, reverse mate
// rightmost): estimated from the leading confident pairs (estimate_insert_size) or given (-I).
struct InsertSizeModel {
  bool known = false;  // false: too few pairs to estimate one (or -I none); then no pair is proper
  bool given = false;  // from -I
  std::uint64_t pairs = 0;  // pairs estimated from
  std::int64_t q25 = 0, q50 = 0, q75 = 0;  // quartiles (estimated only)
  double mean = 0, std = 0;
  std::int64_t low = 0, high = 0;  // a proper pair's insert size lies in [low, high]
};

// bwa mem's constants: fewer than 10 pairs estimate nothing; mean and std from the sizes within
// 2 interquartile ranges of the quartiles; proper pairs within 3 of them, widened to 4 std.
constexpr std::uint64_t kMinInsertPairs = 10;
// Insert sizes above this are never sampled (bwa mem's max_ins).
constexpr std::int64_t kMaxSampledInsert = 10000;
// Pairs sampled for the estimate: the first this many confident ones in input order, among the
// first kInsertWindowPairs pairs (which bounds what waits for the estimate), so that the model and
// every record depend on the input only, not on --batch or the device.
constexpr std::uint64_t kInsertSamplePairs = 10000;
constexpr std::uint64_t kInsertWindowPairs = 100000;
// A mate whose single-end MAPQ is at least this is confident enough to sample.
constexpr int kConfidentMapq = 20;

InsertSizeModel estimate_insert_size(std::vector<std::int64_t> sizes);
// -I mean,std[,max[,min]]: max and min default to mean +- 4 std (min at least 1). -I none: no
// model (known false), as a run that samples fewer than kMinInsertPairs pairs has.
Result<InsertSizeModel> parse_insert_size(const std::string& option);
// The -I argument that gives `model` back: parse_insert_size(insert_size_option(m)) has m's known,
// mean, std, low and high bit for bit (mean and std with 17 significant digits, which round-trip
// any double through strtod: IEEE 754-2008 5.12.2), "none" where m is not known. Runs over parts
// of one input (workflow/) pass their whole input's estimate with it, so that they pair as one
// run over the whole input does.
std::string insert_size_option(const InsertSizeModel& model);

// One hit of a mate: where it lies and how good it is (the higher the score, the better).
struct MateHit {
  std::uint32_t contig = 0;
  std::uint64_t position = 0, end = 0;  // 0-based [position, end) on the reference
  bool reverse = false;
  int score = 0;
  // Another alignment of a better hit's part of the read (bwa mem's secondary >= 0): chosen by a
  // pair, its single-end MAPQ is 0, since mem_sam_pe gives it that better hit's score as sub.
  bool secondary = false;
  // bwa mem's csub: the second-best score of a tandem copy in the rescue window that found it (0
  // for the mapper's own hits, whose csub bwa leaves 0); a pair raises its MAPQ to at most
  // 6.02 * (score - tandem_sub) / A.
  int tandem_sub = 0;
};

// The insert size of two hits in FR orientation, as bwa mem measures it (mem_infer_dir, the
// distance in mem_pair and mem_pestat): from the forward one's 5' end (its position) to the
// reverse one's 5' end, its last base -- the fragment's length less one, so that bwa's -I and
// its estimates mean the same here; FR only where that distance is positive (bwa calls 0 RF).
// Else -1 (another orientation, or different contigs).
std::int64_t fr_insert_size(const MateHit& a, const MateHit& b);

// bwa mem's scoring, for the k-mismatch mode's score of a hit: length * A - (A + B) * mismatches
// (each base matched scores A, a mismatch -B instead).
struct PairScoring {
  int match = 1, mismatch = 4;  // -A, -B
  int unpaired = 17;            // -U: what a pair not proper costs against the best single hits
  // Pairs scoring within this of the second best pair count as its equals (bwa mem's n_sub):
  // max(A + B, O + E) with bwa mem's defaults, the cost of one difference.
  int near_second = 7;
  // The gapped mode's -h and XA share (GappedOptions): the XA list of a mate that pairing moves
  // to another of its regions is rebuilt with them (gapped_written_candidates).
  float xa_drop_ratio = 0.80f;
  unsigned max_xa_hits = 5;
};

// A gapped run's: its -A and -B, `unpaired` (-U), and near_second bwa mem's max(A + B, O + E) over
// both gap kinds (mem_pair's tmp).
PairScoring gapped_pair_scoring(const gapped::Scoring& scoring, int unpaired);

// The score of an ungapped hit of `length` bases with `mismatches` substitutions.
int ungapped_score(std::size_t length, unsigned mismatches, const PairScoring& scoring);

// What pairing decided: which hit of each mate to report (an index into its hits; 0 when not
// proper), whether the pair is proper, and each mate's MAPQ after pairing.
struct PairChoice {
  bool proper = false;
  std::size_t hit[2] = {0, 0};
  int mapq[2] = {0, 0};
};

// Whether two hits form a proper pair by the model alone: FR, insert size within its bounds.
bool within_bounds(const MateHit& a, const MateHit& b, const InsertSizeModel& model);

// bwa mem's mem_sam_pe for two mapped mates: among the pairs of hits in FR orientation with an
// insert size within the model's bounds, the best by score1 + score2 + A * log4(P(insert)) (the
// normal tail probability of the insert size) is proper when it beats the mates' best hits
// unpaired (best1 + best2 - U); its MAPQ, 6.02 * (best pair - max(second pair, unpaired)) / A
// less 4.343 ln(n + 1) for the n other pairs within near_second of the second, in [0, 60], scaled
// by 1 - (repeat_fraction[0] + repeat_fraction[1]) / 2, raises each mate's single-end MAPQ q (0
// for a secondary hit) to at most q + 40, then caps it at 6.02 * (score - tandem_sub) / A of the
// chosen hit. Ties keep the earlier hits (bwa mem draws among them), so the choice depends on the
// hits' order only. `hits` best first. No pair scoring above 0 (bwa's no_pairing): the best hits
// are written, proper if they are within_bounds. A pair beaten by the unpaired ones: not proper.
inline constexpr float kNoRepeats[2] = {0, 0};
PairChoice choose_pair(const std::vector<MateHit> (&hits)[2], const int (&mapq)[2], const InsertSizeModel& model,
                       const PairScoring& scoring, const float (&repeat_fraction)[2] = kNoRepeats);

// A mate as written: what its mate's SAM fields are taken from.
struct WrittenMate {
  bool mapped = false;
  std::uint32_t contig = 0;
  std::uint64_t position = 0, end = 0;
  bool reverse = false;
  int mapq = 0;
  std::string cigar;  // its CIGAR, as MC gives it
};

// SAM's FLAG bits of pairs (the SAM specification, 1.4).
constexpr std::uint16_t kSamPaired = 0x1, kSamProperPair = 0x2, kSamMateUnmapped = 0x8, kSamMateReverse = 0x20,
                        kSamFirstMate = 0x40, kSamSecondMate = 0x80;

// The paired fields of one mate's SAM record: bwa mem's (mem_aln2sam) but for TLEN and MC, which
// follow samtools fixmate's rules (bam_mate.c), since `samtools fixmate` must change nothing
// (issue 26).
struct MateFields {
  std::uint16_t flag = 0;   // 0x1 0x2 0x8 0x20 0x40 0x80, OR-ed into the record's own
  std::int32_t mate_contig = -1;
  std::int64_t mate_position = -1;
  std::int64_t tlen = 0;
  int mapq = 0;             // this mate's MAPQ after pairing
  // An unmapped mate of a mapped one takes its mate's contig, position and strand (0x10, SEQ
  // reverse complemented), so that the two sort together.
  std::int32_t contig = -1;
  std::int64_t position = -1;
  bool reverse = false;
  // MQ on every mate (bwa's MQ:i:0 for an unmapped mate, which fixmate leaves); MC where either
  // mate is mapped, "*" for an unmapped mate (fixmate's; bwa writes none).
  int mate_mapq = 0;
  bool has_mate_cigar = false;
  std::string mate_cigar;
  std::int64_t mate_five_prime = -1;  // the mapped mate's 5' end, as five_prime_end gives it
};

// A mapped read's 5' end as samtools fixmate measures TLEN from it: its first base if forward,
// the base past its last (bam_endpos) if reverse. TLEN is the mate's 5' end less this read's, on
// one contig. For an FR pair that is the fragment's length, as bwa mem writes it; bwa counts RF
// pairs two bases longer and same-strand pairs one longer (a reverse read's last base, then
// d + sign(d)), which fixmate would rewrite.
std::int64_t five_prime_end(std::uint64_t position, std::uint64_t end, bool reverse);

// Both mates' fields (mem_aln2sam with the other mate's primary): TLEN between five_prime_ends
// when both are mapped on one contig, 0 otherwise; 0x2 only with `proper`. An unmapped mate
// stands at its mapped mate, takes its strand, and that mapped mate's RNEXT/PNEXT and 0x20 name
// itself.
void mate_fields(const WrittenMate (&mates)[2], bool proper, MateFields (&out)[2]);

// The fields of a supplementary line (a hit at `line`) of a mate whose primary has `primary`:
// mem_aln2sam with the mate's primary -- flags, RNEXT/PNEXT, MQ and MC the primary's, MC's soft
// clips hard unless `soft_clip_supplementary` (-Y; bwa writes the mate's CIGAR as it writes this
// line's), TLEN measured from this line's own 5' end by the primary's rule (0 off the mate's
// contig). Where the mate is unmapped, bwa places it at this line: RNEXT/PNEXT the line's own,
// 0x20 its strand. samtools fixmate leaves supplementary lines alone.
MateFields supplementary_mate_fields(const MateFields& primary, const gapped::GappedHit& line,
                                     bool soft_clip_supplementary = false);

// What pairing counted (the summary of `wtmap align` on pairs), from the pairs' fields as
// samtools flagstat counts them: a singleton is a pair with one mate mapped.
struct PairTotals {
  std::uint64_t pairs = 0, proper = 0, both_mapped = 0, singletons = 0, different_contigs = 0;
  std::uint64_t mates_mapq_positive = 0;  // mapped mates with MAPQ > 0 after pairing
  void add(const MateFields& first, const MateFields& second);
};

// Pairs two mates of any alignment type: `hits` are each mate's (best first, then its
// alternatives in order: hit i > 0 is alternative i - 1), `mapq` their single-end MAPQs;
// promote(mate, j) makes alternative j the primary (bwa mem reports the hits that pair), and
// written(mate, m, mapq) says how mate m (0 or 1) is written. `out` gets both mates' SAM fields.
template <class Alignment, class Promote, class Written>
void pair_mates(Alignment (&mates)[2], const std::vector<MateHit> (&hits)[2], const int (&mapq)[2],
                const InsertSizeModel& model, const PairScoring& scoring, Promote&& promote, Written&& written,
                MateFields (&out)[2]) {
  const PairChoice choice = choose_pair(hits, mapq, model, scoring);
  WrittenMate as_written[2];
  for (int m = 0; m < 2; ++m) {
    if (choice.hit[m] > 0) promote(mates[m], choice.hit[m] - 1);
    as_written[m] = written(mates[m], m, choice.mapq[m]);
  }
  mate_fields(as_written, choice.proper, out);
}

// ---- the k-mismatch mode --------------------------------------------------------------------

// A mapped k-mismatch alignment's hits: its primary, then its alternatives (XA), scored with
// ungapped_score.
std::vector<MateHit> mate_hits(const ReadAlignment& a, std::size_t length, const PairScoring& scoring);

// Pairs two k-mismatch mates: the chosen hits become their primaries (the one it replaces among
// the alternatives), and `out` gets their SAM fields. Either mate may be unmapped.
void pair_mismatch_mates(ReadAlignment (&mates)[2], const std::size_t (&lengths)[2], unsigned max_mismatches,
                         const InsertSizeModel& model, const PairScoring& scoring, MateFields (&out)[2]);

// The insert size a pair contributes to the estimate: both mates mapped once, confidently, in FR
// orientation within kMaxSampledInsert; else -1.
std::int64_t sampled_insert_size(const ReadAlignment (&mates)[2], const std::size_t (&lengths)[2],
                                 unsigned max_mismatches);

// ---- mate rescue (bwa mem's mem_matesw), for the gapped mode --------------------------------
// Not run by the k-mismatch mode: its search finds every hit with at most k mismatches, so a
// window could hold only alignments it cannot write (more mismatches, or gaps).

// Where the mate of `anchor` lies if the two are a proper FR pair: [begin, end) of the anchor's
// contig (of `contig_length` bases), the mate on the other strand (reverse: the mate's reverse
// complement aligns there). Empty (begin == end) without a model or off the contig.
struct RescueWindow {
  std::uint32_t contig = 0;
  std::uint64_t begin = 0, end = 0;
  bool reverse = false;
};
RescueWindow rescue_window(const MateHit& anchor, std::size_t mate_length, const InsertSizeModel& model,
                           std::uint64_t contig_length);

// The hit a local alignment of the mate (as the window's strand reads it) in the window makes:
// offsets of `target_begin`, `target_end` in the window, its score. Search it unbanded
// (gapped::Scoring::band at least the window's length), as bwa mem's ksw_align2 does.
MateHit rescued_hit(const RescueWindow& window, std::int64_t target_begin, std::int64_t target_end, int score);

// ---- the gapped mode ------------------------------------------------------------------------

// What a gapped mate offers to pairing: its candidates (every region the mapper found, best
// first, and the rescued hits), or, for an alignment made without them, its primary and its XA
// alternatives (secondary to the primary).
std::vector<gapped::PairCandidate> pairing_candidates(const gapped::GappedReadAlignment& a);
// The hits pairing scores: pairing_candidates, each scored by its AS.
std::vector<MateHit> mate_hits(const gapped::GappedReadAlignment& a);

// bwa mem's mem_pair over every candidate of both mates (choose_pair; `mapq` fields the
// single-end MAPQs, repeat_fraction the pair MAPQ's scale): the chosen hits index `candidates`,
// each mate's pairing_candidates. If either mate has supplementary hits, none is chosen (bwa mem
// pairs no split read: mem_sam_pe's is_multi, then no_pairing): both stay at their primaries with
// their single-end MAPQs, proper if the primaries are within_bounds.
PairChoice choose_gapped_pair(const gapped::GappedReadAlignment& first, const gapped::GappedReadAlignment& second,
                              const InsertSizeModel& model, const PairScoring& scoring,
                              std::vector<gapped::PairCandidate> (&candidates)[2]);

// The candidates a mate written at candidate `chosen` shows (indices into `candidates`): the chosen
// first, then its XA as bwa mem writes it after mem_sam_pe moved the primary there -- the chosen
// one's primary and that primary's other secondaries, those scoring at least xa_drop_ratio of
// the chosen, all or none (max_xa_hits), in candidate order (mem_gen_alt).
std::vector<std::size_t> gapped_written_candidates(const std::vector<gapped::PairCandidate>& candidates,
                                                   std::size_t chosen, const PairScoring& scoring);
// Whether hit `h` is candidate `c`'s (the same place, read part and score).
bool is_hit_of(const gapped::GappedHit& h, const gapped::PairCandidate& c);
// The hit of `a` (primary, alternative, supplementary or pair_hits) at candidate `c`; nullptr if none.
const gapped::GappedHit* hit_of_candidate(const gapped::GappedReadAlignment& a, const gapped::PairCandidate& c);

// Pairs two gapped mates (their mapq fields the single-end MAPQs) as pair_mismatch_mates pairs
// k-mismatch ones, over every candidate (choose_gapped_pair); `scoring` from gapped_pair_scoring.
// A mate whose chosen candidate is not its primary is written there, with the XA list and XS
// (the former primary's score) bwa mem gives it; the hits that needs must be among its hits or
// pair_hits (GappedMapper::rescue_mates computes them), else the pair is written unpaired.
void pair_gapped_mates(gapped::GappedReadAlignment (&mates)[2], const InsertSizeModel& model,
                       const PairScoring& scoring, MateFields (&out)[2]);
// The insert size a gapped pair contributes to the estimate (bwa mem's mem_pestat): both mates
// mapped, each with no other alignment of its part scoring over 0.8 of its own (sub_score), in FR
// orientation within kMaxSampledInsert; else -1.
std::int64_t sampled_insert_size(const gapped::GappedReadAlignment (&mates)[2]);

}  // namespace wtmap::aligner
