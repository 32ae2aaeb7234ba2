// `wtmap align` on gapped pairs whose mates lie in a repeat of more copies than -h (issue 26's
// E. coli rRNA operons): pairing scores every region of both mates (bwa mem's mem_pair), not only
// the primary and its XA list, which -h leaves empty here. The reference: a random contig with 7
// exact copies of 600 bases, 15000 apart (no insert window holds two). Planted: 40 unique pairs
// (the insert-size estimate); 12 pairs with both mates inside one copy (7 pairs of hits tie:
// MAPQ 0 on both, as bwa mem, not raised by pairing); pairs of a unique mate and a repeat mate (with one
// substitution) next to each copy, whose 7 repeat mates are one sequence, so that single-end they
// all take the same copy and 6 of the 7 pairs must move a mate to another region: it is written
// there, its MAPQ raised to 40 (0 + 40, bwa mem's cap), its CIGAR, NM and MD recomputed here from
// the reference, and samtools fixmate changes nothing; the same records for any --batch and -t,
// and on either device.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>
#include <vector>

#include "pair_support.hpp"

namespace wtmap::altest {
namespace {

constexpr std::int64_t kCopies = 7, kCopyLength = 600, kFirstCopy = 8000, kCopyStep = 15000;
constexpr std::int64_t kContigLength = kFirstCopy + kCopies * kCopyStep;
constexpr std::size_t kSubstitutionAt = 30;
constexpr std::int64_t kInsidePairs = 12;  // of the repeat mate, as given

std::int64_t copy_at(std::int64_t k) { return kFirstCopy + k * kCopyStep; }

// MD and NM of an alignment without gaps of `seq` (as SAM holds it) at `pos` of `ref`, by a scan.
std::pair<std::string, std::int64_t> ungapped_md(const std::string& seq, const std::string& ref, std::int64_t pos) {
  std::string md;
  std::int64_t run = 0, nm = 0;
  for (std::size_t i = 0; i < seq.size(); ++i) {
    const char r = ref[static_cast<std::size_t>(pos) + i];
    if (seq[i] == r) {
      ++run;
      continue;
    }
    md += std::to_string(run) + r;
    run = 0;
    ++nm;
  }
  return {md + std::to_string(run), nm};
}

class AlignGappedPairCandidates : public PlantedPairSuite {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::make_unique<fmtest::TempDir>();
    mode_ = "";
    std::mt19937 rng(2626);
    std::string contig = random_bases(rng, static_cast<std::size_t>(kContigLength));
    const std::string repeat = random_bases(rng, static_cast<std::size_t>(kCopyLength));
    for (std::int64_t k = 0; k < kCopies; ++k) contig.replace(static_cast<std::size_t>(copy_at(k)), repeat.size(), repeat);
    contigs_ = {{"c1", contig}};
    fmtest::write_file(dir_->file("ref.fa"), fmtest::fasta_text(contigs_));
    const auto built = fmtest::run_wtmap(*dir_, "index -p " + fmtest::shell_quote(dir_->file("ref")) + " " +
                                                     fmtest::shell_quote(dir_->file("ref.fa")));
    ASSERT_EQ(built.exit_code, 0) << fmtest::describe(built);
    for (int i = 0; i < 40; ++i) {  // between the copies
      const std::int64_t insert = 260 + rng() % 81;
      const std::int64_t at = copy_at(i % kCopies) + kCopyLength + 1000 + rng() % 12000;
      PlantedPair p = fragment("unique" + std::to_string(i), 0, at, insert, rng() % 2 == 0);
      p.proper = p.sampled = true;
      pairs_.push_back(p);
    }
    // Both mates inside a copy, at 12 offsets (12 draws of each mate's primary among the copies:
    // single-end, some pairs have both primaries in one copy, which alone paired high).
    for (std::int64_t j = 0; j < kInsidePairs; ++j) {
      PlantedPair p = fragment("inside" + std::to_string(j), 0, copy_at(j % kCopies) + 10 + 22 * j, 300, j % 2 == 0);
      p.proper = true;
      pairs_.push_back(p);
    }
    // A unique mate 1 left of each copy, its mate 2 reverse in the copy's [50, 150).
    for (std::int64_t k = 0; k < kCopies; ++k) {
      PlantedPair p = fragment("placed" + std::to_string(k), 0, copy_at(k) - 150, 300, true);
      char& base = p.sequence[1][kSubstitutionAt];
      base = "CGTA"[std::string("ACGT").find(base)];
      p.proper = true;
      pairs_.push_back(p);
    }
    write_pair_reads(pairs_, dir_->file("r1.fq"), dir_->file("r2.fq"), dir_->file("il.fq"));
  }

  static SamContents paired() {
    const std::string out = dir_->file("candidates.sam");
    align(two_files(), out);
    SamContents sam = read_alignments(out);
    EXPECT_EQ(sam.records.size(), 2 * pairs_.size());
    return sam;
  }
};

// Both mates in one copy: 7 pairs of hits score alike, so the pair's MAPQ is 0 and neither mate's
// MAPQ rises (bwa mem: raw MAPQ 0 less 4.343 ln 7); the pair is proper, its mates in one copy.
TEST_F(AlignGappedPairCandidates, MatesInsideTheRepeatKeepMapqZero) {
  const SamContents sam = paired();
  for (std::int64_t j = 0; j < kInsidePairs; ++j) {
    const std::string name = "inside" + std::to_string(j);
    SCOPED_TRACE(name);
    const std::size_t i = index_of(name);
    const SamRecord& r1 = sam.records.at(2 * i);
    const SamRecord& r2 = sam.records.at(2 * i + 1);
    EXPECT_EQ(r1.mapq, 0);
    EXPECT_EQ(r2.mapq, 0);
    EXPECT_EQ(r1.flag & 0x2, 0x2);
    EXPECT_EQ(r1.as, 100);
    EXPECT_EQ(r1.xs, 100);
    // The same copy for both: the planted offsets within it, the planted TLEN.
    const PlantedPair& p = pairs_[i];
    const std::int64_t copy = r1.pos - (p.truth[0].position - copy_at(0)) % kCopyStep;
    EXPECT_EQ((copy - kFirstCopy) % kCopyStep, 0) << r1.pos;
    EXPECT_EQ(r2.pos - r1.pos, p.truth[1].position - p.truth[0].position);
    EXPECT_EQ(r1.tlen, fixmate_tlen(p.truth[0], p.truth[1]));
    EXPECT_EQ(r2.mq, 0);
  }
}

// The repeat mates next to each copy: alone, all 7 (one sequence) take one copy with MAPQ 0;
// paired, each takes the copy its unique mate points to, with 100M, NM 1 and the MD the
// reference gives there, MAPQ 0 + 40 (the pair's 60 capped), XS as single-end and no XA (6 other copies > -h 5); its unique mate keeps 60; every pair field as planted.
TEST_F(AlignGappedPairCandidates, TheUniqueMatePlacesTheRepeatMateOnANonPrimaryCopy) {
  const std::string single = dir_->file("single2.sam");
  align(fmtest::shell_quote(dir_->file("r2.fq")), single);
  const SamContents alone = read_alignments(single);
  std::set<std::int64_t> alone_positions;
  for (std::int64_t k = 0; k < kCopies; ++k) {
    const SamRecord& r = alone.records.at(index_of("placed" + std::to_string(k)));
    EXPECT_EQ(r.mapq, 0);
    alone_positions.insert(r.pos);
  }
  ASSERT_EQ(alone_positions.size(), 1u) << "the repeat mates differ: the test plants them wrong";
  const SamContents sam = paired();
  std::size_t moved = 0;
  for (std::int64_t k = 0; k < kCopies; ++k) {
    const std::string name = "placed" + std::to_string(k);
    SCOPED_TRACE(name);
    const std::size_t i = index_of(name);
    const SamRecord& r1 = sam.records.at(2 * i);
    const SamRecord& r2 = sam.records.at(2 * i + 1);
    check_mate(pairs_[i], 0, r1, r2, 60, {name});
    check_mate(pairs_[i], 1, r2, r1, 60, {name});
    EXPECT_EQ(r1.mapq, 60);
    EXPECT_EQ(r2.mapq, 40);
    EXPECT_EQ(r2.cigar, "100M");
    const auto [md, nm] = ungapped_md(r2.seq, contigs_[0].sequence, r2.pos);
    EXPECT_EQ(nm, 1);
    EXPECT_EQ(r2.nm, nm);
    EXPECT_EQ(r2.md, md);
    EXPECT_EQ(r2.as, 95);  // 99 matches, one mismatch at -B 4
    // XS is max(sub, csub) as single-end, bwa's: another copy's 95 (csub is 0: bwa gives one only
    // to a rescued region; the other copies' chains count through their regions, as sub).
    EXPECT_EQ(r2.xs, 95);
    EXPECT_FALSE(r2.xa.has_value());
    moved += r2.pos != *alone_positions.begin();
  }
  EXPECT_EQ(moved, static_cast<std::size_t>(kCopies - 1));
}

TEST_F(AlignGappedPairCandidates, UniquePairsAreAsPlanted) {
  const SamContents sam = paired();
  for (std::size_t i = 0; i < 40; ++i) {
    for (int m = 0; m < 2; ++m) check_mate(pairs_[i], m, sam.records[2 * i + m], sam.records[2 * i + 1 - m], 60, {});
  }
}

TEST_F(AlignGappedPairCandidates, SamtoolsFixmateChangesNothingAndFlagstatAgrees) {
  const std::string out = dir_->file("fix_in.sam");
  align(two_files(), out);
  check_fixmate_and_flagstat(*dir_, out, pairs_);
}

TEST_F(AlignGappedPairCandidates, AnyBatchAndThreadsGiveTheSameRecords) { expect_same_records_for_any_input_batch_and_threads(); }

TEST_F(AlignGappedPairCandidates, SameRecordsOnCpuAndGpu) { expect_same_records_on_cpu_and_gpu(); }

}  // namespace
}  // namespace wtmap::altest
