// An index beyond 32-bit positions (issue 27), built and queried on the GPU: a reference of more
// than 2^32 bases whose two contigs each hold more than 2^31, so that contig offsets cross 2^31,
// forward-text positions cross 2^32 and the both-strand text's cross 2^33. 40-base patterns cut
// from the random reference on both sides of those boundaries (and one's reverse complement) must
// each be counted once and located where they were cut -- the reference itself is the naive
// answer, since a random 40-mer of 4.3 G bases occurs elsewhere with probability ~2^-48. Then
// 150-base reads across the same places, each with a deletion and a substitution, go through the
// gapped mapper (`wtmap align`'s default mode) on that index: each placed where it was cut.
// (SamWriter's 64-bit positions: test_sam_writer's SamWriterPositions.)
//
// A GPU-host test: about 45 GB of host memory and two minutes on an H100 or H200 host; it skips
// itself without a usable CUDA device.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "fm_queries.hpp"
#include "fm_support.hpp"
#include "wtmap/aligner/gapped/gapped_mapper.hpp"
#include "wtmap/fmindex/fm_index.hpp"
#include "wtmap/fmindex/reference.hpp"

namespace wtmap::fmtest {
namespace {

constexpr std::uint64_t kTwo31 = std::uint64_t{1} << 31;
constexpr std::uint64_t kPattern = 40;

// Two contigs of random bases (codes 0..3; xorshift64*, 32 bases a draw), no ambiguity codes:
// F = chrA # chrB.
fmindex::Reference two_long_contigs(std::uint64_t first, std::uint64_t second) {
  fmindex::Reference ref;
  ref.contigs = {{"chrA", first}, {"chrB", second}};
  ref.fragments = {{0, first, 0, 0}, {first + 1, second, 0, 1}};
  ref.forward.resize(first + 1 + second);
  std::uint64_t state = 0x9e3779b97f4a7c15ull;
  for (std::uint64_t i = 0; i < ref.forward.size(); i += 32) {
    state ^= state >> 12, state ^= state << 25, state ^= state >> 27;
    const std::uint64_t draw = state * 0x2545f4914f6cdd1dull;
    for (std::uint64_t j = 0; j < 32 && i + j < ref.forward.size(); ++j) {
      ref.forward[i + j] = static_cast<std::uint8_t>(draw >> (2 * j) & 3);
    }
  }
  ref.forward[first] = fmindex::kSeparator;
  return ref;
}

std::string bases_at(const fmindex::Reference& ref, std::uint64_t text_position, std::uint64_t length) {
  std::string s(length, 'A');
  for (std::uint64_t i = 0; i < length; ++i) s[i] = "ACGT"[ref.forward[text_position + i]];
  return s;
}

std::string reverse_complement(const std::string& s) {
  std::string rc(s.rbegin(), s.rend());
  for (char& c : rc) c = c == 'A' ? 'T' : c == 'C' ? 'G' : c == 'G' ? 'C' : 'A';
  return rc;
}

// A 150-base read from text position `start` with ref[start + 50, start + 52) deleted and its
// base 100 changed, mapped by the gapped mapper on `index` forward and reverse complemented: placed
// at `contig`:`offset` on its strand, unclipped (one 2-base deletion between two M runs), NM 3,
// 152 reference bases -- where a random reference of this size has no other place for it.
void expect_read_mapped_where_cut(const fmindex::Reference& ref, aligner::gapped::GappedMapper& mapper, std::uint64_t start,
                                  std::uint32_t contig, std::uint64_t offset) {
  std::string read = bases_at(ref, start, 50) + bases_at(ref, start + 52, 100);
  read[100] = read[100] == 'A' ? 'C' : 'A';
  const std::vector<aligner::SeqRecord> reads = {{"forward", read, ""}, {"reverse", reverse_complement(read), ""}};
  std::vector<aligner::gapped::GappedReadAlignment> alignments;
  const Status mapped = mapper.map(reads, alignments);
  ASSERT_TRUE(mapped.ok()) << mapped.message();
  ASSERT_EQ(alignments.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    SCOPED_TRACE("read from text position " + std::to_string(start) + ", " + reads[i].name);
    const aligner::gapped::GappedHit& hit = alignments[i].primary;
    ASSERT_TRUE(alignments[i].mapped);
    EXPECT_EQ(hit.contig, contig);
    EXPECT_EQ(hit.position, offset);
    EXPECT_EQ(hit.reference_end, offset + 152);
    EXPECT_EQ(hit.reverse, i == 1);
    EXPECT_EQ(hit.edit_distance, 3u);
    ASSERT_EQ(hit.cigar.size(), 3u);
    EXPECT_EQ(hit.cigar[1], 2u << 4 | 2u) << "a 2-base deletion (BAM op 2) between two M runs";
    EXPECT_EQ((hit.cigar[0] >> 4) + (hit.cigar[2] >> 4), 150u);
    EXPECT_EQ(hit.cigar[0] & 15u, 0u);
    EXPECT_EQ(hit.cigar[2] & 15u, 0u);
  }
}

// The reference of two contigs of `half` + 1 M and `half` + 3 M bases (more than 2 * half in all),
// patterns cut on both sides of `half` (a contig offset) and 2 * half (a forward-text position),
// indexed on `backend`: each counted once, located where it was cut; reads across the same places
// and at the contigs' ends mapped where they were cut (expect_read_mapped_where_cut).
void expect_planted_patterns_found(std::uint64_t half, Backend backend) {
  const std::uint64_t first = half + 1'000'000, second = half + 3'000'000;
  const fmindex::Reference ref = two_long_contigs(first, second);
  const std::uint64_t b = first + 1;  // chrB's first text position

  struct Planted {
    std::string pattern;
    Hit expected;
  };
  std::vector<Planted> planted;
  auto plant = [&](std::uint64_t text_position, bool reverse) {
    const std::string forward = bases_at(ref, text_position, kPattern);
    const std::uint32_t contig = text_position < first ? 0 : 1;
    const std::uint64_t offset = contig == 0 ? text_position : text_position - b;
    planted.push_back({reverse ? reverse_complement(forward) : forward, {contig, offset, reverse ? '-' : '+'}});
  };
  const std::uint64_t whole = 2 * half;
  for (std::uint64_t at : {half - 100, half - kPattern / 2, half, half + 7, first - kPattern}) plant(at, false);
  for (std::uint64_t at : {whole - kPattern / 2, whole, whole + 1000, b + half - kPattern / 2, b + second - kPattern})
    plant(at, false);
  plant(whole - kPattern / 2, true);
  plant(half + 7, true);

  fmindex::FmIndexOptions options;
  options.backend = backend;
  options.sa_builder = fmindex::SuffixArrayBuilder::blockwise;
  options.sample_rate = 32;
  options.kmer_length = 0;  // plain backward search: a table of 4^15 k-mers would not fit the card beside the index
  auto index = fmindex::FmIndex::build(ref, options);
  ASSERT_TRUE(index.ok()) << index.status().message();
  ASSERT_EQ(index->view().rows, 2 * (first + 1 + second) + 2);

  std::vector<std::string> patterns;
  for (const Planted& p : planted) patterns.push_back(p.pattern);
  const Answers answers = query(*index, patterns);
  for (std::size_t i = 0; i < planted.size(); ++i) {
    EXPECT_EQ(answers.counts[i], 1u) << "pattern " << i;
    EXPECT_EQ(answers.hits[i], std::vector<Hit>{planted[i].expected})
        << "pattern " << i << ": " << describe(answers.hits[i]) << ", expected contig " << planted[i].expected.contig
        << " offset " << planted[i].expected.position << " " << planted[i].expected.strand;
  }

  Result<aligner::gapped::GappedMapper> mapper = aligner::gapped::GappedMapper::create(*index, {});
  ASSERT_TRUE(mapper.ok()) << mapper.status().message();
  struct Cut {
    std::uint64_t start;  // text position of the read's first base
    std::uint32_t contig;
    std::uint64_t offset;
  };
  for (const Cut& c : {Cut{half - 75, 0, half - 75}, Cut{first - 152, 0, first - 152}, Cut{b, 1, 0}, Cut{whole - 75, 1, whole - 75 - b},
                       Cut{b + half - 75, 1, half - 75}, Cut{b + second - 152, 1, second - 152}}) {
    expect_read_mapped_where_cut(ref, *mapper, c.start, c.contig, c.offset);
  }
}

TEST(IndexBeyond4G, PatternsAcross2To31And2To32AreCountedOnceAndLocatedWhereTheyWereCut) {
  if (!gpu_available()) GTEST_SKIP() << "no usable CUDA device (a GPU-host test)";
  expect_planted_patterns_found(kTwo31, Backend::gpu);
}

// The same planting at 2^21 and 2^22, on the CPU: what the test itself computes (the cuts, the
// contigs and offsets expected), checked where it always runs.
TEST(IndexBeyond4G, TheSameCheckAtTwoToThe21OnTheCpu) { expect_planted_patterns_found(std::uint64_t{1} << 21, Backend::cpu); }

}  // namespace
}  // namespace wtmap::fmtest
