// `wtmap align` (gapped, pairs) against bwa mem itself, field by field, on crafted pairs whose
// every field bwa's rules fix without a tie: FR pairs for the insert-size estimate, then an
// unmapped mate beside a forward and a reverse mate (bwa places it there on that mate's strand),
// both unmapped, RF, FF and RR pairs, one 5' end shared, two contigs, overlapping mates, a repeat
// mate placed by its unique one, a pair too far apart, pairs at contig ends, and split reads
// (unequal parts: no hash tie) beside a soft-clipped mate (a supplementary line shows the mate's
// clips hard in MC) and beside an unmapped one (placed at each line). FLAG, RNAME, POS, MAPQ,
// CIGAR, RNEXT, PNEXT and the tags NM, MD, AS, XS, SA, XA must equal bwa's, and MQ where bwa
// writes it (0.7.18 on). TLEN and MC follow samtools fixmate's rules instead (issue 26: fixmate
// must change nothing), so they are recomputed from bwa's own record by those rules, and bwa's
// TLEN is checked to be its own rule's: the two differ for RF and same-strand pairs, and bwa
// writes no MC where fixmate writes MC:Z:* (a mapped line whose mate is unmapped); samtools
// fixmate then changes none of our lines. Skipped where bwa is missing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "align_oracle.hpp"
#include "cli_support.hpp"
#include "fm_support.hpp"
#include "pair_support.hpp"
#include "sam_readback.hpp"

namespace wtmap::altest {
namespace {

using fmtest::revcomp;
using fmtest::shell_quote;

struct CraftedPair {
  std::string name, mate[2];
};

constexpr std::size_t kLength = 100;

bool bwa_available() { return std::system("command -v bwa > /dev/null 2>&1") == 0; }

std::vector<CraftedPair> crafted_pairs(const std::string& c1, const std::string& c2, std::mt19937& rng) {
  auto forward = [&](const std::string& c, std::size_t at, std::size_t length = kLength) { return c.substr(at, length); };
  auto reverse = [&](const std::string& c, std::size_t at, std::size_t length = kLength) {
    return revcomp(c.substr(at, length));
  };
  std::vector<CraftedPair> pairs;
  auto add = [&pairs](const std::string& name, const std::string& first, const std::string& second) {
    pairs.push_back(CraftedPair{name, {first, second}});
  };
  std::normal_distribution<double> insert(300, 20);
  for (int i = 0; i < 60; ++i) {  // FR, mate 1 forward for even i
    const auto size = static_cast<std::size_t>(insert(rng));
    const std::size_t at = 1000 + 2000 * static_cast<std::size_t>(i);
    const std::string left = forward(c1, at), right = reverse(c1, at + size - kLength);
    add("fr" + std::to_string(i), i % 2 == 0 ? left : right, i % 2 == 0 ? right : left);
  }
  const std::string lost[4] = {random_bases(rng, kLength), random_bases(rng, kLength), random_bases(rng, kLength),
                               random_bases(rng, kLength)};
  add("unmapped_beside_forward", forward(c1, 125000), lost[0]);
  add("unmapped_beside_reverse", reverse(c1, 126000), lost[1]);
  add("unmapped_first_beside_reverse", lost[2], reverse(c1, 127000));
  add("both_unmapped", lost[3], random_bases(rng, kLength));
  add("rf", reverse(c1, 130000), forward(c1, 130200));
  add("ff", forward(c1, 132000), forward(c1, 132250));
  add("rr", reverse(c1, 133000), reverse(c1, 133250));
  add("same_five_prime", forward(c1, 134000), forward(c1, 134000));
  add("two_contigs", forward(c1, 135000), reverse(c2, 5000));
  add("overlapping", forward(c1, 136000), reverse(c1, 135960));
  add("repeat_mate", forward(c1, 49800), reverse(c1, 50000));  // [50000, 50100) at 150000 too
  add("too_far", forward(c1, 140000), reverse(c1, 150500));
  add("contig_end", forward(c2, c2.size() - 300), reverse(c2, c2.size() - kLength));
  add("contig_start", forward(c2, 0), reverse(c2, 200));
  // 70 bases of c1 then 50 of c2: the longer part is the primary.
  add("split_beside_clipped", forward(c1, 160000, 70) + forward(c2, 20000, 50),
      reverse(c1, 160250, 80) + random_bases(rng, 20));
  add("split_beside_unmapped", forward(c1, 161000, 70) + reverse(c2, 21000, 50), random_bases(rng, kLength));
  add("reverse_split_beside_unmapped", revcomp(forward(c1, 162000, 70) + forward(c2, 22000, 50)),
      random_bases(rng, kLength));
  return pairs;
}

// The reference bases a CIGAR covers (M, D, N, = and X).
std::int64_t reference_span(const std::string& cigar) {
  std::int64_t span = 0, length = 0;
  for (const char c : cigar) {
    if (c >= '0' && c <= '9') {
      length = 10 * length + (c - '0');
      continue;
    }
    if (std::string("MDN=X").find(c) != std::string::npos) span += length;
    length = 0;
  }
  return span;
}

// The 5' ends of a line mapped on its mate's contig, the mate's taken from RNEXT/PNEXT, 0x20 and
// MC, each as a (first, past-last) pair of a read's span and its strand.
struct FivePrimeEnds {
  std::int64_t own_first, own_past_last, mate_first, mate_past_last;
  bool own_reverse, mate_reverse;
};

std::optional<FivePrimeEnds> five_prime_ends(const SamRecord& r) {
  if ((r.flag & 0xC) != 0 || r.tid != r.mate_tid || !r.mc) return std::nullopt;
  return FivePrimeEnds{r.pos, r.pos + reference_span(r.cigar), r.mate_pos, r.mate_pos + reference_span(*r.mc),
                       (r.flag & 0x10) != 0, (r.flag & 0x20) != 0};
}

// samtools fixmate's TLEN (bam_mate.c): the mate's 5' end less this line's, a reverse read's
// being the base past its last (bam_endpos); 0 unless both are mapped on one contig.
std::int64_t fixmate_tlen(const SamRecord& r) {
  const auto e = five_prime_ends(r);
  if (!e) return 0;
  return (e->mate_reverse ? e->mate_past_last : e->mate_first) - (e->own_reverse ? e->own_past_last : e->own_first);
}

// bwa mem's TLEN (mem_aln2sam): d = the mate's 5' end less this line's, a reverse read's being
// its last base, written d + sign(d).
std::int64_t bwa_tlen(const SamRecord& r) {
  const auto e = five_prime_ends(r);
  if (!e) return 0;
  const std::int64_t d = (e->mate_reverse ? e->mate_past_last - 1 : e->mate_first) -
                         (e->own_reverse ? e->own_past_last - 1 : e->own_first);
  return d + (d > 0) - (d < 0);
}

// A record's place among a read's lines: name, mate (0x40 or 0x80), supplementary or not.
using LineKey = std::tuple<std::string, int, bool>;

std::map<LineKey, SamRecord> lines_of(const std::string& path) {
  std::map<LineKey, SamRecord> lines;
  for (const SamRecord& r : read_alignments(path).records) {
    EXPECT_TRUE(lines.emplace(LineKey{r.name, r.flag & 0xC0, (r.flag & 0x800) != 0}, r).second) << r.name;
  }
  return lines;
}

TEST(PairsAgainstBwa, EveryFieldAsBwaMemWritesIt) {
  if (!bwa_available()) GTEST_SKIP() << "bwa is not installed";
  const fmtest::TempDir dir;
  std::mt19937 rng(2026);
  std::string c1 = random_bases(rng, 200000);
  const std::string c2 = random_bases(rng, 50000);
  c1.replace(150000, 100, c1.substr(50000, 100));  // the repeat mate's second copy
  const std::string reference = dir.file("ref.fa");
  fmtest::write_file(reference, fmtest::fasta_text({{"c1", c1}, {"c2", c2}}));
  std::string fastq[2];
  const std::vector<CraftedPair> pairs = crafted_pairs(c1, c2, rng);
  for (const CraftedPair& p : pairs) {
    for (int m = 0; m < 2; ++m) {
      fastq[m] += "@" + p.name + "/" + std::to_string(m + 1) + "\n" + p.mate[m] + "\n+\n" + std::string(p.mate[m].size(), 'I') + "\n";
    }
  }
  const std::string r1 = dir.file("r1.fq"), r2 = dir.file("r2.fq");
  fmtest::write_file(r1, fastq[0]);
  fmtest::write_file(r2, fastq[1]);
  const std::string bwa_sam = dir.file("bwa.sam"), wtmap_sam = dir.file("wtmap.sam");
  ASSERT_EQ(std::system(("bwa index " + shell_quote(reference) + " > /dev/null 2>&1").c_str()), 0);
  ASSERT_EQ(std::system(("bwa mem -t 1 " + shell_quote(reference) + " " + shell_quote(r1) + " " + shell_quote(r2) + " > " +
                         shell_quote(bwa_sam) + " 2> /dev/null").c_str()), 0);
  const auto indexed = fmtest::run_wtmap(dir, "index -p " + shell_quote(dir.file("ref")) + " " + shell_quote(reference));
  ASSERT_EQ(indexed.exit_code, 0) << fmtest::describe(indexed);
  const auto aligned = fmtest::run_wtmap(dir, "align -x " + shell_quote(dir.file("ref")) + " --device cpu -t 1 -o " +
                                                  shell_quote(wtmap_sam) + " " + shell_quote(r1) + " " + shell_quote(r2));
  ASSERT_EQ(aligned.exit_code, 0) << fmtest::describe(aligned);
  const std::map<LineKey, SamRecord> bwa = lines_of(bwa_sam), ours = lines_of(wtmap_sam);
  ASSERT_EQ(bwa.size(), 2 * pairs.size() + 3);  // a supplementary line per split read
  ASSERT_EQ(ours.size(), bwa.size());
  std::size_t with_mq = 0, tlen_differs = 0, mc_differs = 0;
  for (const auto& [key, b] : bwa) {
    SCOPED_TRACE(std::get<0>(key) + (std::get<1>(key) == 0x40 ? "/1" : "/2") + (std::get<2>(key) ? " supplementary" : ""));
    const auto found = ours.find(key);
    ASSERT_NE(found, ours.end());
    const SamRecord& w = found->second;
    EXPECT_EQ(w.flag, b.flag);
    EXPECT_EQ(w.tid, b.tid);
    EXPECT_EQ(w.pos, b.pos);
    EXPECT_EQ(w.mapq, b.mapq);
    EXPECT_EQ(w.cigar, b.cigar);
    EXPECT_EQ(w.seq, b.seq);
    EXPECT_EQ(w.mate_tid, b.mate_tid);
    EXPECT_EQ(w.mate_pos, b.mate_pos);
    EXPECT_EQ(b.tlen, bwa_tlen(b));
    EXPECT_EQ(w.tlen, fixmate_tlen(b));
    tlen_differs += w.tlen != b.tlen;
    // MC: bwa's, or MC:Z:* (fixmate's) on a mapped line whose mate is unmapped, where bwa has none.
    const bool star = (b.flag & 0xC) == 0x8;
    EXPECT_EQ(w.mc, star ? std::optional<std::string>("*") : b.mc);
    if (star) {
      EXPECT_FALSE(b.mc.has_value());
      ++mc_differs;
    }
    EXPECT_EQ(w.nm, b.nm);
    EXPECT_EQ(w.md, b.md);
    EXPECT_EQ(w.as, b.as);
    EXPECT_EQ(w.xs, b.xs);
    EXPECT_EQ(w.sa, b.sa);
    EXPECT_EQ(w.xa, b.xa);
    if (b.mq) {  // bwa 0.7.18 on
      ++with_mq;
      EXPECT_EQ(w.mq, b.mq);
    }
  }
  // Either every record of bwa's has MQ or none (0.7.17).
  EXPECT_TRUE(with_mq == 0 || with_mq == bwa.size()) << with_mq;
  // The rules differ where the crafted pairs say: both mates of rf (by 2), ff and rr (by 1); MC:Z:*
  // on the 3 mapped mates beside an unmapped one and on the 2 split reads' 4 lines.
  EXPECT_EQ(tlen_differs, 6u);
  EXPECT_EQ(mc_differs, 7u);
  // And samtools fixmate changes none of our lines, nor their order, same-strand pairs and split
  // reads included. It writes a supplementary line as soon as it reads it, ahead of the primary it
  // holds for the mate (bam_mating_core): a pair's two primaries come first, then the supplementary
  // lines (bwa mem writes mate 1's supplementary line before mate 2's primary, which fixmate moves).
  if (!samtools_available()) GTEST_SKIP() << "samtools is not installed: fixmate not run";
  const std::string fixed = dir.file("fixed.sam");
  ASSERT_EQ(std::system(("samtools fixmate -O sam " + shell_quote(wtmap_sam) + " " + shell_quote(fixed)).c_str()), 0);
  EXPECT_EQ(records_of(fixed), records_of(wtmap_sam));
}

}  // namespace
}  // namespace wtmap::altest
