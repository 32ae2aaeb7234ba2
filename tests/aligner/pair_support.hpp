// Helpers of the pair suites (test_align_pairs.cpp: the k-mismatch mode; test_align_gapped_pairs.cpp:
// the gapped mode with mate rescue): planted FR fragments, their FASTQ files (two files and one
// interleaved), and every pair field of a written mate recomputed from where the test planted
// it -- FLAG, POS of an unmapped mate, RNEXT/PNEXT, TLEN between the 5' ends, MC, MQ -- then
// through samtools fixmate (which must change nothing) and samtools flagstat.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "align_oracle.hpp"
#include "cli_support.hpp"
#include "fm_support.hpp"
#include "sam_readback.hpp"

namespace wtmap::altest {

constexpr std::size_t kMateLength = 100;

struct MateTruth {
  bool mapped = false;
  std::int32_t contig = -1;
  std::int64_t position = -1;
  bool reverse = false;
  std::int64_t span = kMateLength;  // reference bases the mate covers (a deletion adds to them)
  // 5' end, as TLEN measures it: a reverse mate's end.
  std::int64_t five_prime() const { return reverse ? position + span : position; }
};

struct PlantedPair {
  std::string name;
  std::string sequence[2];
  MateTruth truth[2];
  bool proper = false;
  bool sampled = false;  // confident, unique and FR within 10000: part of the insert-size estimate
};

// An FR fragment of `insert` bases at `position` of contig `contig`: the forward mate its first
// kMateLength bases, the reverse mate its last; mate 1 the forward one if `first_forward`.
inline PlantedPair fragment(const std::vector<TestContig>& contigs, const std::string& name, std::int32_t contig,
                            std::int64_t position, std::int64_t insert, bool first_forward) {
  const std::string& text = contigs[contig].sequence;
  PlantedPair p;
  p.name = name;
  const auto length = static_cast<std::int64_t>(kMateLength);
  const int fi = first_forward ? 0 : 1;
  p.sequence[fi] = text.substr(position, kMateLength);
  p.truth[fi] = {true, contig, position, false};
  p.sequence[1 - fi] = fmtest::revcomp(text.substr(position + insert - length, kMateLength));
  p.truth[1 - fi] = {true, contig, position + insert - length, true};
  return p;
}

// Mate names "<name>/1 comment" and "<name>/2 comment": both the suffix and the comment go.
inline void write_pair_reads(const std::vector<PlantedPair>& pairs, const std::string& r1, const std::string& r2,
                             const std::string& interleaved) {
  std::string text[2], both;
  for (const PlantedPair& p : pairs) {
    for (int m = 0; m < 2; ++m) {
      const std::string record = "@" + p.name + "/" + std::to_string(m + 1) + " comment\n" + p.sequence[m] + "\n+\n" +
                                 std::string(p.sequence[m].size(), 'I') + "\n";
      text[m] += record;
      both += record;
    }
  }
  fmtest::write_file(r1, text[0]);
  fmtest::write_file(r2, text[1]);
  fmtest::write_file(interleaved, both);
}

// The alignment lines of a SAM file.
inline std::string records_of(const std::string& sam) {
  std::istringstream in(fmtest::read_file(sam));
  std::string records;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != '@') records += line + "\n";
  }
  return records;
}

inline bool samtools_available() { return std::system("samtools --version > /dev/null 2>&1") == 0; }

// Every pair field of mate `m` of `p`, recomputed from the planted truth; `mate` is the other
// mate's record (MC is its CIGAR, MQ its MAPQ). The MAPQs: 60 for the mates of a proper pair,
// `unpaired_mapq` (a unique mate's single-end MAPQ) for a mapped mate of a pair not proper;
// pairs named in `own_mapq` are checked by a test of their own.
inline void check_mate(const PlantedPair& p, int m, const SamRecord& self, const SamRecord& mate, int unpaired_mapq,
                       const std::vector<std::string>& own_mapq) {
  SCOPED_TRACE(p.name + "/" + std::to_string(m + 1));
  const MateTruth& t = p.truth[m];
  const MateTruth& o = p.truth[1 - m];
  EXPECT_EQ(self.name, p.name);
  int flag = 0x1 | (m == 0 ? 0x40 : 0x80);
  if (!t.mapped) flag |= 0x4;
  if (t.mapped && t.reverse) flag |= 0x10;
  if (!o.mapped) flag |= 0x8;
  if (o.mapped && o.reverse) flag |= 0x20;
  if (p.proper) flag |= 0x2;
  EXPECT_EQ(self.flag, flag);
  // An unmapped mate of a mapped one stands at it; RNEXT/PNEXT name the mate's place, or this
  // mate's own where the mate is unmapped.
  const MateTruth& place = t.mapped ? t : o;
  EXPECT_EQ(self.tid, place.mapped ? place.contig : -1);
  EXPECT_EQ(self.pos, place.mapped ? place.position : -1);
  const MateTruth& next = o.mapped ? o : t;
  EXPECT_EQ(self.mate_tid, next.mapped ? next.contig : -1);
  EXPECT_EQ(self.mate_pos, next.mapped ? next.position : -1);
  const bool same_contig = t.mapped && o.mapped && t.contig == o.contig;
  EXPECT_EQ(self.tlen, same_contig ? o.five_prime() - t.five_prime() : 0);
  if (o.mapped) {
    EXPECT_EQ(self.mq, mate.mapq);
    EXPECT_EQ(self.mc, mate.cigar);
  } else {
    EXPECT_FALSE(self.mq.has_value());
    EXPECT_EQ(self.mc, t.mapped ? std::optional<std::string>("*") : std::nullopt);
  }
  if (std::find(own_mapq.begin(), own_mapq.end(), p.name) != own_mapq.end()) return;
  if (p.proper) {
    EXPECT_EQ(self.mapq, 60);  // unique mates of a proper pair
  } else if (t.mapped) {
    EXPECT_EQ(self.mapq, unpaired_mapq);
  }
}

// samtools fixmate leaves the records of `sam` as they are, and samtools flagstat counts the
// planted pairs (skipped where samtools is missing).
inline void check_fixmate_and_flagstat(const fmtest::TempDir& dir, const std::string& sam,
                                       const std::vector<PlantedPair>& pairs) {
  if (!samtools_available()) GTEST_SKIP() << "samtools is not installed";
  const std::string fixed = dir.file("fix_out.sam");
  ASSERT_EQ(std::system(("samtools fixmate -O sam " + fmtest::shell_quote(sam) + " " + fmtest::shell_quote(fixed)).c_str()), 0);
  EXPECT_EQ(records_of(fixed), records_of(sam));
  const std::string stats = dir.file("flagstat.txt");
  ASSERT_EQ(std::system(("samtools flagstat " + fmtest::shell_quote(sam) + " > " + fmtest::shell_quote(stats)).c_str()), 0);
  const std::string text = fmtest::read_file(stats);
  std::size_t proper = 0, both = 0, other_contig = 0, singletons = 0;
  for (const PlantedPair& p : pairs) {
    proper += p.proper;
    both += p.truth[0].mapped && p.truth[1].mapped;
    singletons += p.truth[0].mapped != p.truth[1].mapped;
    other_contig += p.truth[0].mapped && p.truth[1].mapped && p.truth[0].contig != p.truth[1].contig;
  }
  EXPECT_NE(text.find(std::to_string(2 * pairs.size()) + " + 0 paired in sequencing"), std::string::npos) << text;
  EXPECT_NE(text.find(std::to_string(2 * proper) + " + 0 properly paired"), std::string::npos) << text;
  EXPECT_NE(text.find(std::to_string(2 * both) + " + 0 with itself and mate mapped"), std::string::npos) << text;
  EXPECT_NE(text.find(std::to_string(singletons) + " + 0 singletons"), std::string::npos) << text;
  EXPECT_NE(text.find(std::to_string(2 * other_contig) + " + 0 with mate mapped to a different chr\n"),
            std::string::npos) << text;
}

}  // namespace wtmap::altest
