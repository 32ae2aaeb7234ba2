// GappedMapper (issue 25): reads planted in a random multi-contig reference with long and single N
// runs -- mismatches, insertions and deletions of 1-50 bases, garbage ends, both strands, contig
// ends, next to long N runs, across single Ns, exact and N-broken repeats -- checked against an
// independent full (unbanded) affine Smith-Waterman (gotoh_oracle.hpp): the reported score is the
// optimal local score in the planted region, the CIGAR rescored from the sequences lies between
// that score less the clipping penalties and it, NM and MD recomputed plainly from the reference;
// and the bytes are the same for batch sizes 1, 7 and all, and for the CPU and GPU backends.
#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <limits>
#include <mutex>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "fm_queries.hpp"
#include "fm_support.hpp"
#include "gotoh_oracle.hpp"
#include "wtmap/aligner/align_stages.hpp"
#include "wtmap/aligner/gapped/gapped_mapper.hpp"
#include "wtmap/aligner/mismatch_search.hpp"
#include "wtmap/core/device_memory.hpp"
#include "wtmap/core/gpu_selection.hpp"

namespace wtmap::test {
namespace {

using aligner::SeqRecord;
using fmtest::TempDir;
using fmtest::TestContig;
using aligner::gapped::GappedHit;
using aligner::gapped::GappedMapper;
using aligner::gapped::GappedOptions;
using aligner::gapped::GappedReadAlignment;
using aligner::gapped::ExtensionSchedule;
using aligner::gapped::GappedStageSeconds;
using aligner::gapped::OccurrenceSample;
using aligner::gapped::occurrence_sample;

std::uint8_t code(char c) { return static_cast<std::uint8_t>(std::string("ACGTN").find(c)); }
std::vector<std::uint8_t> codes(const std::string& s) {
  std::vector<std::uint8_t> c;
  for (char x : s) c.push_back(code(x));
  return c;
}
std::string reverse_complement(const std::string& s) {
  std::string r(s.rbegin(), s.rend());
  for (char& c : r) c = c == 'A' ? 'T' : c == 'C' ? 'G' : c == 'G' ? 'C' : c == 'T' ? 'A' : 'N';
  return r;
}
std::string random_bases(std::mt19937_64& rng, std::size_t n) {
  std::string s(n, 'A');
  for (char& c : s) c = "ACGT"[rng() % 4];
  return s;
}

// Three contigs with a 25-base N run each (an assembly gap) and single Ns every 1,500 bases; an
// exact 400-base repeat (contig 1 and 2) and a copy of another 400 bases with an N in its middle.
struct TestReference {
  std::vector<std::string> contigs;
  std::vector<std::pair<std::size_t, std::size_t>> gaps;  // per contig: the long N run [a, b)
  std::size_t repeat_a = 0, repeat_b = 0;                 // contig 1 and 2 positions of the exact repeat
  std::size_t broken_a = 0, broken_b = 0;                 // contig 0 and 2 positions of the N-broken copy
  static constexpr std::size_t kRepeat = 400;
};

TestReference make_reference() {
  std::mt19937_64 rng(25);
  TestReference r;
  const std::size_t lengths[] = {30000, 20000, 12000};
  for (std::size_t k = 0; k < 3; ++k) {
    std::string s = random_bases(rng, lengths[k]);
    for (std::size_t p = 700; p < s.size(); p += 1500) s[p] = 'N';
    const std::size_t gap = s.size() / 2 + 111;
    s.replace(gap, 25, std::string(25, 'N'));
    r.gaps.push_back({gap, gap + 25});
    r.contigs.push_back(s);
  }
  r.repeat_a = 5300, r.repeat_b = 3000;  // clear of the single Ns
  r.contigs[2].replace(r.repeat_b, TestReference::kRepeat, r.contigs[1].substr(r.repeat_a, TestReference::kRepeat));
  r.broken_a = 8300, r.broken_b = 9000;
  std::string copy = r.contigs[0].substr(r.broken_a, TestReference::kRepeat);
  copy[TestReference::kRepeat / 2] = 'N';
  r.contigs[2].replace(r.broken_b, TestReference::kRepeat, copy);
  return r;
}

// A read and where it came from: contig bases [begin, end) on the forward strand.
struct Planted {
  std::string read;  // as sequenced (reverse complemented for a reverse-strand read)
  std::uint32_t contig = 0;
  std::size_t begin = 0, end = 0;
  bool reverse = false;
  std::size_t garbage5 = 0, garbage3 = 0;  // random bases at the read's ends (SAM orientation)
  bool edited = false;                     // mismatches, indels or garbage planted
  std::string what;
};

// The segment [begin, begin + length) of `contig` with edits away from its middle 30 bases (so
// that a seed exists): mismatches, insertions and deletions of 1..max_gap, garbage ends.
Planted plant(std::mt19937_64& rng, const TestReference& ref, std::uint32_t contig, std::size_t begin,
              std::size_t length, unsigned mismatches, unsigned indels, std::size_t garbage, bool reverse) {
  Planted p;
  p.contig = contig, p.begin = begin, p.end = begin + length, p.reverse = reverse;
  p.edited = mismatches + indels + garbage > 0;
  std::string s = ref.contigs[contig].substr(begin, length);
  const std::size_t mid = length / 2;
  auto edit_position = [&](std::size_t n) {
    for (;;) {
      const std::size_t at = rng() % n;
      if (at + 20 < mid || at > mid + 20) return at;
    }
  };
  for (unsigned k = 0; k < mismatches; ++k) {
    const std::size_t at = edit_position(s.size());
    s[at] = s[at] == 'A' ? 'C' : 'A';
  }
  const std::size_t max_gap = std::min<std::size_t>(50, length / 5);
  for (unsigned k = 0; k < indels; ++k) {
    const std::size_t len = 1 + rng() % max_gap, at = edit_position(s.size() - len);
    if (rng() % 2) s.insert(at, random_bases(rng, len));
    else s.erase(at, len);
  }
  if (garbage > 0) {
    if (rng() % 2) p.garbage5 = garbage, s.replace(0, garbage, random_bases(rng, garbage));
    else p.garbage3 = garbage, s.replace(s.size() - garbage, garbage, random_bases(rng, garbage));
  }
  p.read = reverse ? reverse_complement(s) : s;
  std::ostringstream what;
  what << "contig " << contig << " [" << begin << ", +" << length << ") " << (reverse ? "-" : "+") << " mm "
       << mismatches << " indels " << indels << " garbage " << garbage;
  p.what = what.str();
  return p;
}

// The best local score of the read (SAM orientation) against the contig's bases around the planted
// segment, up to a long N run: a full Gotoh DP.
std::int64_t oracle_score(const TestReference& ref, const Planted& p, const Scoring& sc) {
  const std::string& c = ref.contigs[p.contig];
  std::size_t lo = p.begin >= 100 ? p.begin - 100 : 0, hi = std::min(c.size(), p.end + 100);
  const auto gap = ref.gaps[p.contig];
  if (gap.second <= p.begin) lo = std::max(lo, gap.second);
  if (gap.first >= p.end) hi = std::min(hi, gap.first);
  const std::vector<std::uint8_t> q = codes(p.reverse ? reverse_complement(p.read) : p.read);
  const std::vector<std::uint8_t> t = codes(c.substr(lo, hi - lo));
  return local_answer(gotoh(q, t, sc, OracleMode::local, 0, unbanded())).score;
}

// NM and MD written plainly from the CIGAR, the read (SAM orientation) and the contig.
void expect_edit_tags(const GappedHit& h, const std::string& sam_read, const std::string& contig,
                      const std::string& what) {
  std::uint32_t nm = 0, run = 0;
  std::string md;
  std::size_t q = 0, t = h.position;
  for (std::uint32_t op : h.cigar) {
    const std::uint32_t len = op >> 4, kind = op & 0xF;
    if (kind == 4) q += len;
    if (kind == 1) q += len, nm += len;
    if (kind == 2) {
      md += std::to_string(run) + "^" + contig.substr(t, len);
      run = 0, t += len, nm += len;
    }
    if (kind == 0) {
      for (std::uint32_t k = 0; k < len; ++k, ++q, ++t) {
        if (sam_read[q] == contig[t] && contig[t] != 'N') {
          ++run;
        } else {
          md += std::to_string(run) + contig[t];
          run = 0, ++nm;
        }
      }
    }
  }
  md += std::to_string(run);
  EXPECT_EQ(h.edit_distance, nm) << what;
  EXPECT_EQ(h.md, md) << what;
  EXPECT_EQ(h.reference_end, t) << what;
  EXPECT_EQ(q, sam_read.size()) << what << ": the CIGAR's query length is the read's";
}

// The CIGAR's score from the sequences (soft clips left out).
std::int64_t cigar_score(const GappedHit& h, const std::string& sam_read, const std::string& contig,
                         const Scoring& sc) {
  std::vector<std::uint32_t> core;
  std::size_t lead = 0, aligned = 0, span = 0;
  for (std::uint32_t op : h.cigar) {
    if ((op & 0xF) == 4) {
      if (core.empty()) lead = op >> 4;
      continue;
    }
    core.push_back(op);
    if ((op & 0xF) != 2) aligned += op >> 4;
    if ((op & 0xF) != 1) span += op >> 4;
  }
  return rescore(codes(sam_read.substr(lead, aligned)), codes(contig.substr(h.position, span)), core, sc);
}

std::string describe(const GappedHit& h) {
  std::ostringstream s;
  s << h.contig << ':' << h.position << '-' << h.reference_end << (h.reverse ? '-' : '+') << " q" << h.query_begin
    << '-' << h.query_end << " AS" << h.score << " NM" << h.edit_distance << " MD" << h.md << " Q" << int(h.mapq)
    << " CIGAR";
  for (std::uint32_t op : h.cigar) s << (op >> 4) << "MIDNSHP=X"[std::min(op & 0xF, 8u)];
  return s.str();
}
std::string describe(const GappedReadAlignment& a) {
  std::ostringstream s;
  s << a.mapped << ' ' << int(a.flags) << ' ' << int(a.mapq) << " sub" << a.sub_score << " csub" << a.chain_sub_score
    << " n" << a.sub_count << " cov" << a.seed_coverage << " rep" << a.repeat_fraction << " | " << describe(a.primary);
  for (const GappedHit& h : a.supplementary) s << " | SA " << describe(h);
  for (const GappedHit& h : a.alternatives) s << " | XA " << describe(h);
  for (const aligner::gapped::PairCandidate& c : a.candidates) {
    s << " | cand " << c.contig << ':' << c.position << '-' << c.reference_end << (c.reverse ? '-' : '+') << " q"
      << c.query_begin << '-' << c.query_end << " AS" << c.score << '/' << c.true_score << " sec" << c.secondary;
  }
  for (const GappedHit& h : a.pair_hits) s << " | pair " << describe(h);
  return s.str();
}

// The reads mapped `batch` at a time.
std::vector<GappedReadAlignment> map_all(GappedMapper& m, const std::vector<SeqRecord>& reads, std::size_t batch) {
  std::vector<GappedReadAlignment> all, part;
  for (std::size_t i = 0; i < reads.size(); i += batch) {
    const std::vector<SeqRecord> slice(reads.begin() + i, reads.begin() + std::min(reads.size(), i + batch));
    const Status s = m.map(slice, part);
    if (!s.ok()) throw std::runtime_error(s.message());
    all.insert(all.end(), part.begin(), part.end());
  }
  return all;
}

class GappedMapperTest : public ::testing::TestWithParam<Backend> {
 protected:
  static void SetUpTestSuite() {
    reference_ = new TestReference(make_reference());
    std::vector<TestContig> contigs;
    for (std::size_t k = 0; k < reference_->contigs.size(); ++k)
      contigs.push_back({"chr" + std::to_string(k), reference_->contigs[k]});
    dir_ = new TempDir();
    fasta_ = new fmindex::Reference(fmtest::load_reference(*dir_, contigs));
  }
  static void TearDownTestSuite() {
    delete fasta_;
    delete dir_;
    delete reference_;
  }
  void SetUp() override {
    WTMAP_FM_SKIP_WITHOUT(GetParam());
    index_ = std::make_unique<fmindex::FmIndex>(fmtest::build_index(*fasta_, GetParam(), 8));
  }
  GappedMapper mapper(const GappedOptions& options = {}) {
    auto m = GappedMapper::create(*index_, options);
    if (!m.ok()) throw std::runtime_error(m.status().message());
    return std::move(m).value();
  }
  static TestReference* reference_;
  static TempDir* dir_;
  static fmindex::Reference* fasta_;
  std::unique_ptr<fmindex::FmIndex> index_;
};
TestReference* GappedMapperTest::reference_ = nullptr;
TempDir* GappedMapperTest::dir_ = nullptr;
fmindex::Reference* GappedMapperTest::fasta_ = nullptr;

// Reads of every length with variation, on both strands, anywhere a read fits without crossing a
// long N run (single Ns included).
std::vector<Planted> varied_reads(const TestReference& ref, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Planted> reads;
  for (std::size_t length : {30, 100, 150, 250, 1000}) {
    for (int k = 0; k < 24; ++k) {
      const auto contig = static_cast<std::uint32_t>(rng() % 3);
      const std::string& c = ref.contigs[contig];
      const auto gap = ref.gaps[contig];
      std::size_t begin;
      do begin = rng() % (c.size() - length);
      while (begin < gap.second && begin + length > gap.first);
      const bool short_read = length < 100;
      const unsigned mismatches = short_read ? 0 : static_cast<unsigned>(rng() % (1 + length / 50));
      const unsigned indels = short_read ? 0 : static_cast<unsigned>(rng() % 3);
      const std::size_t garbage = short_read || rng() % 3 ? 0 : 10 + rng() % 20;
      reads.push_back(plant(rng, ref, contig, begin, length, mismatches, indels, garbage, rng() % 2));
    }
  }
  return reads;
}

// Reads at the contig ends and against the long N runs, exact, both strands.
std::vector<Planted> edge_reads(const TestReference& ref) {
  std::mt19937_64 rng(7);
  std::vector<Planted> reads;
  for (std::uint32_t contig = 0; contig < 3; ++contig) {
    const std::size_t n = ref.contigs[contig].size();
    const auto gap = ref.gaps[contig];
    for (std::size_t length : {30, 150}) {
      for (bool reverse : {false, true}) {
        reads.push_back(plant(rng, ref, contig, 0, length, 0, 0, 0, reverse));
        reads.push_back(plant(rng, ref, contig, n - length, length, 0, 0, 0, reverse));
        reads.push_back(plant(rng, ref, contig, gap.first - length, length, 0, 0, 0, reverse));
        reads.push_back(plant(rng, ref, contig, gap.second, length, 0, 0, 0, reverse));
      }
    }
  }
  return reads;
}

std::vector<SeqRecord> records(const std::vector<Planted>& planted) {
  std::vector<SeqRecord> r;
  for (std::size_t i = 0; i < planted.size(); ++i) r.push_back({"r" + std::to_string(i), planted[i].read, ""});
  return r;
}

// The checks of every planted read: score = the oracle's where the hit overlaps the planted
// segment (>= it elsewhere: an equally or better scoring place), CIGAR, NM, MD, clips.
void check_planted(const TestReference& ref, const std::vector<Planted>& planted,
                   const std::vector<GappedReadAlignment>& out, const GappedOptions& options, unsigned& checked) {
  const Scoring& sc = options.scoring;
  ASSERT_EQ(out.size(), planted.size());
  for (std::size_t i = 0; i < planted.size(); ++i) {
    const Planted& p = planted[i];
    const GappedReadAlignment& a = out[i];
    const std::string what = p.what + " -> " + describe(a);
    const std::int64_t best = oracle_score(ref, p, sc);
    // Near -T the seed-anchored extension (bwa's) may score a few points below the unanchored
    // optimum of an edited read and the read stay unmapped: such reads are left out.
    if (best < options.min_output_score + (p.edited ? 10 : 0)) continue;
    ASSERT_TRUE(a.mapped) << what << " (oracle score " << best << ")";
    const GappedHit& h = a.primary;
    const std::string sam_read = h.reverse ? reverse_complement(p.read) : p.read;
    const std::string& contig = ref.contigs[h.contig];
    const bool at_planted = h.contig == p.contig && h.position < p.end && h.reference_end > p.begin;
    if (at_planted) {
      EXPECT_EQ(h.score, best) << what;
      EXPECT_EQ(h.reverse, p.reverse) << what;
    } else {
      EXPECT_GE(h.score, best) << what << ": elsewhere, and scoring less than the planted place";
    }
    expect_edit_tags(h, sam_read, contig, what);
    const std::int64_t rescored = cigar_score(h, sam_read, contig, sc);
    EXPECT_LE(rescored, std::max<std::int64_t>(best, h.score)) << what;
    EXPECT_GE(rescored, h.score - sc.clip5 - sc.clip3) << what;
    // query_begin/end in the read as given: the clips swap ends for a reverse hit.
    const std::uint32_t lead = (h.cigar.front() & 0xF) == 4 ? h.cigar.front() >> 4 : 0;
    const std::uint32_t trail = (h.cigar.back() & 0xF) == 4 ? h.cigar.back() >> 4 : 0;
    const auto n = static_cast<std::uint32_t>(sam_read.size());
    EXPECT_EQ(h.query_begin, h.reverse ? trail : lead) << what;
    EXPECT_EQ(h.query_end, n - (h.reverse ? lead : trail)) << what;
    if (at_planted && p.garbage5 + p.garbage3 >= 15) {
      const std::uint32_t clip_op = p.garbage5 ? h.cigar.front() : h.cigar.back();
      EXPECT_EQ(clip_op & 0xF, 4u) << what << ": a garbage end is soft-clipped";
    }
    ++checked;
  }
}

TEST_P(GappedMapperTest, PlantedReadsScoreAsTheFullSmithWaterman) {
  GappedOptions options;
  options.max_read_length = 1100;  // 1,000-base reads with insertions
  GappedMapper m = mapper(options);
  std::vector<Planted> planted = varied_reads(*reference_, 1);
  const std::vector<Planted> edges = edge_reads(*reference_);
  planted.insert(planted.end(), edges.begin(), edges.end());
  const std::vector<GappedReadAlignment> out = map_all(m, records(planted), planted.size());
  unsigned checked = 0;
  check_planted(*reference_, planted, out, m.options(), checked);
  EXPECT_GE(checked, planted.size() * 9 / 10) << "most planted reads score above -T";
}

TEST_P(GappedMapperTest, ExactReadsHaveClosedFormAlignments) {
  GappedMapper m = mapper();
  std::mt19937_64 rng(3);
  std::vector<Planted> planted;
  for (std::size_t length : {30, 100, 150, 250, 1000}) {
    for (bool reverse : {false, true}) {
      std::size_t begin;  // a stretch without N: a perfect match
      do begin = rng() % (reference_->contigs[1].size() - length);
      while (reference_->contigs[1].substr(begin, length).find('N') != std::string::npos ||
             (begin < reference_->repeat_a + TestReference::kRepeat && begin + length > reference_->repeat_a));
      planted.push_back(plant(rng, *reference_, 1, begin, length, 0, 0, 0, reverse));
    }
  }
  const std::vector<GappedReadAlignment> out = map_all(m, records(planted), planted.size());
  for (std::size_t i = 0; i < planted.size(); ++i) {
    const GappedHit& h = out[i].primary;
    const auto length = static_cast<std::uint32_t>(planted[i].read.size());
    ASSERT_TRUE(out[i].mapped) << planted[i].what;
    EXPECT_EQ(h.contig, 1u);
    EXPECT_EQ(h.position, planted[i].begin) << planted[i].what;
    EXPECT_EQ(h.reverse, planted[i].reverse);
    EXPECT_EQ(h.score, static_cast<std::int32_t>(length));
    EXPECT_EQ(h.cigar, std::vector<std::uint32_t>{length << 4});
    EXPECT_EQ(h.edit_distance, 0u);
    EXPECT_EQ(h.md, std::to_string(length));
    EXPECT_EQ(h.query_begin, 0u);
    EXPECT_EQ(h.query_end, length);
    EXPECT_EQ(out[i].seed_coverage, length) << "one SMEM covers an exact read";
  }
}

TEST_P(GappedMapperTest, ASingleReferenceNIsAlignedAcrossAsAMismatch) {
  GappedMapper m = mapper();
  std::mt19937_64 rng(11);
  std::vector<Planted> planted;
  // Single Ns sit at 700 + 1500 k; reads of 150 with one 75 bases in (seeds on both sides) or 140
  // (the extension must cross it to reach the end), both strands.
  const std::size_t offsets[] = {75, 140};
  for (std::size_t n_at : {2200, 5200, 9700}) {
    for (std::size_t offset : offsets) {
      for (bool reverse : {false, true})
        planted.push_back(plant(rng, *reference_, 0, n_at - offset, 150, 0, 0, 0, reverse));
    }
  }
  const std::vector<GappedReadAlignment> out = map_all(m, records(planted), planted.size());
  for (std::size_t i = 0; i < planted.size(); ++i) {
    const GappedHit& h = out[i].primary;
    const std::string what = planted[i].what + " -> " + describe(out[i]);
    ASSERT_TRUE(out[i].mapped) << what;
    EXPECT_EQ(h.position, planted[i].begin) << what;
    EXPECT_EQ(h.score, 149 - 4) << what << ": 149 matches and the N a mismatch";
    EXPECT_EQ(h.cigar, std::vector<std::uint32_t>{150u << 4}) << what;
    EXPECT_EQ(h.edit_distance, 1u) << what;
    const std::size_t offset = offsets[i / 2 % 2];
    EXPECT_EQ(h.md, std::to_string(offset) + "N" + std::to_string(149 - offset)) << what;
  }
}

// A read N costs 1, as bwa mem scores it. 100 bases of [20100, 20200) (no reference N), either
// strand. An N 50 bases in: 99 matches less 1. An N at read offset 4 and a mismatch at 0: the
// left extension from the seed [5, 100) peaks at 95 + 3 - 1 = 97 at offset 1 and ends at 93,
// within -L 5 of that peak, so the read aligns to its end (bwa's mem_chain2aln), with the peak as
// its score; were the N -4, the end (90) would be 5 below the peak (95, no extension) and the read
// clipped 5S95M.
TEST_P(GappedMapperTest, AReadNCostsOneAsInBwaMem) {
  GappedMapper m = mapper();
  const std::string exact = reference_->contigs[0].substr(20100, 100);
  std::string middle = exact, near_end = exact;
  middle[50] = 'N';
  near_end[4] = 'N';
  near_end[0] = exact[0] == 'A' ? 'C' : 'A';
  std::vector<SeqRecord> reads;
  for (const std::string& s : {middle, near_end}) {
    reads.push_back({"forward", s, ""});
    reads.push_back({"reverse", reverse_complement(s), ""});
  }
  std::vector<GappedReadAlignment> out;
  ASSERT_TRUE(m.map(reads, out).ok());
  ASSERT_EQ(out.size(), 4u);
  for (std::size_t i = 0; i < out.size(); ++i) {
    const GappedHit& h = out[i].primary;
    const std::string what = reads[i].name + (i < 2 ? " middle N" : " N near the end") + " -> " + describe(out[i]);
    ASSERT_TRUE(out[i].mapped) << what;
    EXPECT_EQ(h.position, 20100u) << what;
    EXPECT_EQ(h.reverse, i % 2 == 1) << what;
    EXPECT_EQ(h.cigar, std::vector<std::uint32_t>{100u << 4}) << what;
    EXPECT_EQ(h.score, i < 2 ? 98 : 97) << what;
    EXPECT_EQ(h.edit_distance, i < 2 ? 1u : 2u) << what;
    EXPECT_EQ(h.md, i < 2 ? "50" + exact.substr(50, 1) + "49" : "0" + exact.substr(0, 1) + "3" + exact.substr(4, 1) + "95")
        << what;
  }
}

// A deletion in a homopolymer run can sit at any base of the run with the same score; bwa mem
// aligns a reverse read's region on the forward strand (mem_reg2aln), so the gap takes the run's
// leftmost base on the contig whichever the strand. The read: [20000, 20101) (no N: they sit at 700 +
// 1500 k) less one base of the first run of two or more bases from 20040, either strand.
TEST_P(GappedMapperTest, AGapInARunIsLeftmostOnTheContigOnBothStrands) {
  GappedMapper m = mapper();
  const std::string& contig = reference_->contigs[0];
  std::size_t run = 20040;
  while (contig[run] != contig[run + 1]) ++run;
  ASSERT_LT(run, 20080u) << "the test reference has no run of two in [20040, 20080)";
  std::size_t run_end = run + 1;
  while (contig[run_end + 1] == contig[run]) ++run_end;
  const std::string read = contig.substr(20000, run_end - 20000) + contig.substr(run_end + 1, 20101 - run_end - 1);
  ASSERT_EQ(read.size(), 100u);
  std::vector<GappedReadAlignment> out;
  ASSERT_TRUE(m.map({{"forward", read, ""}, {"reverse", reverse_complement(read), ""}}, out).ok());
  ASSERT_EQ(out.size(), 2u);
  const auto left = static_cast<std::uint32_t>(run - 20000);
  const std::vector<std::uint32_t> cigar = {left << 4, 1u << 4 | 2u, (100 - left) << 4};
  for (const GappedReadAlignment& a : out) {
    ASSERT_TRUE(a.mapped) << describe(a);
    EXPECT_EQ(a.primary.position, 20000u) << describe(a);
    EXPECT_EQ(a.primary.cigar, cigar) << describe(a);
    EXPECT_EQ(a.primary.md, std::to_string(left) + "^" + contig.substr(run, 1) + std::to_string(100 - left)) << describe(a);
    EXPECT_EQ(a.primary.score, 100 - 7) << describe(a);
  }
}

TEST_P(GappedMapperTest, RepeatsAreReportedAsSuchIncludingAcrossAnN) {
  GappedMapper m = mapper();
  const TestReference& r = *reference_;
  std::mt19937_64 rng(5);
  // Inside the exact repeat: two placements of the same score; across the N-broken copy: the
  // other copy scores 149 - 4 (the N a mismatch).
  const std::vector<Planted> planted = {plant(rng, r, 1, r.repeat_a + 100, 150, 0, 0, 0, false),
                                        plant(rng, r, 1, r.repeat_a + 100, 150, 0, 0, 0, true),
                                        plant(rng, r, 0, r.broken_a + 125, 150, 0, 0, 0, false),
                                        plant(rng, r, 0, r.broken_a + 125, 150, 0, 0, 0, true)};
  const std::vector<GappedReadAlignment> out = map_all(m, records(planted), planted.size());
  for (std::size_t i = 0; i < 2; ++i) {
    const std::string what = planted[i].what + " -> " + describe(out[i]);
    ASSERT_TRUE(out[i].mapped) << what;
    EXPECT_EQ(out[i].primary.score, 150) << what;
    EXPECT_EQ(out[i].sub_score, 150) << what;
    EXPECT_GE(out[i].sub_count, 1u) << what;
    ASSERT_EQ(out[i].alternatives.size(), 1u) << what;
    const GappedHit& alt = out[i].alternatives[0];
    const GappedHit& pri = out[i].primary;
    // The two copies, one each.
    std::vector<std::pair<std::uint32_t, std::uint64_t>> places = {{pri.contig, pri.position}, {alt.contig, alt.position}};
    std::sort(places.begin(), places.end());
    EXPECT_EQ(places[0], std::make_pair(1u, std::uint64_t{r.repeat_a + 100})) << what;
    EXPECT_EQ(places[1], std::make_pair(2u, std::uint64_t{r.repeat_b + 100})) << what;
    EXPECT_EQ(out[i].mapq, 0) << what << ": an exact repeat";
  }
  for (std::size_t i = 2; i < 4; ++i) {
    const std::string what = planted[i].what + " -> " + describe(out[i]);
    ASSERT_TRUE(out[i].mapped) << what;
    EXPECT_EQ(out[i].primary.contig, 0u) << what;
    EXPECT_EQ(out[i].primary.position, r.broken_a + 125) << what;
    EXPECT_EQ(out[i].primary.score, 150) << what;
    EXPECT_EQ(out[i].sub_score, 149 - 4) << what << ": the copy across the N is found";
    ASSERT_EQ(out[i].alternatives.size(), 1u) << what;
    EXPECT_EQ(out[i].alternatives[0].contig, 2u) << what;
    EXPECT_EQ(out[i].alternatives[0].position, r.broken_b + 125) << what;
    EXPECT_EQ(out[i].alternatives[0].md, "75N74") << what;
  }
}

// A chimeric read: 100 bases of contig 0 then 100 of contig 2 (and its reverse complement). One
// part is the primary, the other the supplementary; each scores what the full Smith-Waterman of
// the read against its own region gives.
TEST_P(GappedMapperTest, AChimericReadHasASupplementaryHitForItsOtherPart) {
  GappedMapper m = mapper();
  const TestReference& r = *reference_;
  const std::string joined = r.contigs[0].substr(12000, 100) + r.contigs[2].substr(1000, 100);
  const std::vector<SeqRecord> reads = {{"chimera", joined, ""}, {"chimera_rc", reverse_complement(joined), ""}};
  std::vector<GappedReadAlignment> out;
  ASSERT_TRUE(m.map(reads, out).ok());
  for (std::size_t i = 0; i < 2; ++i) {
    const std::string what = reads[i].name + " -> " + describe(out[i]);
    ASSERT_TRUE(out[i].mapped) << what;
    ASSERT_EQ(out[i].supplementary.size(), 1u) << what;
    std::vector<const GappedHit*> hits = {&out[i].primary, &out[i].supplementary[0]};
    std::sort(hits.begin(), hits.end(), [](const GappedHit* a, const GappedHit* b) { return a->contig < b->contig; });
    const std::size_t starts[] = {12000, 1000};
    const std::uint32_t contigs[] = {0, 2};
    for (std::size_t k = 0; k < 2; ++k) {
      const GappedHit& h = *hits[k];
      EXPECT_EQ(h.contig, contigs[k]) << what;
      EXPECT_EQ(h.reverse, i == 1) << what;
      Planted p;
      p.read = reads[i].sequence, p.contig = contigs[k], p.begin = starts[k], p.end = starts[k] + 100, p.reverse = i == 1;
      EXPECT_EQ(h.score, oracle_score(r, p, m.options().scoring)) << what;
      EXPECT_LE(h.position, starts[k]) << what;
      EXPECT_GE(h.reference_end, starts[k] + 100) << what;
      const std::string sam_read = h.reverse ? reverse_complement(reads[i].sequence) : reads[i].sequence;
      expect_edit_tags(h, sam_read, r.contigs[h.contig], what);
    }
    // The parts lie on either side of the junction in the read as given.
    const bool forward = i == 0;
    EXPECT_EQ(hits[forward ? 0 : 1]->query_begin, 0u) << what;
    EXPECT_EQ(hits[forward ? 1 : 0]->query_end, 200u) << what;
  }
}

// A random contig holding `pieces` in order, each after `gap` random bases (`at`: where each
// starts), then 500 random bases.
std::string contig_with_copies(std::mt19937_64& rng, const std::vector<const std::string*>& pieces, std::size_t gap,
                               std::vector<std::size_t>& at) {
  std::string contig;
  at.clear();
  for (const std::string* piece : pieces) {
    contig += random_bases(rng, gap);
    at.push_back(contig.size());
    contig += *piece;
  }
  return contig + random_bases(rng, 500);
}

// Alternatives (XA) come all or none: a piece in 3 copies has its 2 others listed, one in 7
// copies none (6 > max_xa_hits 5); the primary is one of the copies either way, sub = its score.
TEST_P(GappedMapperTest, AlternativesAreListedUpToMaxXaHits) {
  std::mt19937_64 rng(31);
  const std::string few = random_bases(rng, 200), many = random_bases(rng, 200);
  std::vector<std::size_t> at;
  const std::string contig = contig_with_copies(rng, {&few, &few, &few, &many, &many, &many, &many, &many, &many, &many}, 500, at);
  const std::vector<std::size_t> few_at(at.begin(), at.begin() + 3), many_at(at.begin() + 3, at.end());
  TempDir dir;
  const fmindex::Reference fasta = fmtest::load_reference(dir, {{"copies", contig}});
  const fmindex::FmIndex index = fmtest::build_index(fasta, GetParam(), 8);
  auto m = GappedMapper::create(index, {});
  ASSERT_TRUE(m.ok());
  const std::vector<SeqRecord> reads = {{"few", few.substr(20, 150), ""}, {"many", many.substr(20, 150), ""}};
  std::vector<GappedReadAlignment> out;
  ASSERT_TRUE(m->map(reads, out).ok());
  for (std::size_t i = 0; i < 2; ++i) {
    const std::string what = reads[i].name + " -> " + describe(out[i]);
    const std::vector<std::size_t>& at = i == 0 ? few_at : many_at;
    ASSERT_TRUE(out[i].mapped) << what;
    EXPECT_EQ(out[i].primary.score, 150) << what;
    EXPECT_EQ(out[i].sub_score, 150) << what;
    EXPECT_EQ(out[i].sub_count, at.size() - 1) << what;
    std::vector<std::size_t> places = {out[i].primary.position};
    for (const GappedHit& h : out[i].alternatives) {
      places.push_back(h.position);
      EXPECT_EQ(h.score, 150) << what;
      EXPECT_EQ(h.md, "150") << what;
    }
    std::sort(places.begin(), places.end());
    if (i == 0) {
      std::vector<std::size_t> expected;
      for (std::size_t p : at) expected.push_back(p + 20);
      EXPECT_EQ(places, expected) << what;
    } else {
      EXPECT_TRUE(out[i].alternatives.empty()) << what;
      EXPECT_NE(std::find(at.begin(), at.end(), out[i].primary.position - 20), at.end()) << what;
    }
  }
}

// The boundary of kLongAmbiguityRun: a read over a run of 9 Ns is aligned across it, one over a
// run of 10 is split there (the run is an assembly gap): 80 matches primary, 60 supplementary.
TEST_P(GappedMapperTest, NRunsShorterThanTenAreCrossedLongerOnesSplit) {
  std::mt19937_64 rng(41);
  const std::string left9 = random_bases(rng, 60), right9 = random_bases(rng, 80);
  const std::string left10 = random_bases(rng, 60), right10 = random_bases(rng, 80);
  const std::string contig = random_bases(rng, 300) + left9 + std::string(9, 'N') + right9 + random_bases(rng, 300) +
                             left10 + std::string(10, 'N') + right10 + random_bases(rng, 300);
  TempDir dir;
  const fmindex::Reference fasta = fmtest::load_reference(dir, {{"runs", contig}});
  const fmindex::FmIndex index = fmtest::build_index(fasta, GetParam(), 8);
  auto m = GappedMapper::create(index, {});
  ASSERT_TRUE(m.ok());
  const std::vector<SeqRecord> reads = {{"nine", left9 + random_bases(rng, 9) + right9, ""},
                                        {"ten", left10 + random_bases(rng, 10) + right10, ""}};
  std::vector<GappedReadAlignment> out;
  ASSERT_TRUE(m->map(reads, out).ok());
  ASSERT_TRUE(out[0].mapped) << describe(out[0]);
  EXPECT_EQ(out[0].primary.position, 300u) << describe(out[0]);
  const Scoring sc;
  const std::int64_t across = local_answer(gotoh(codes(reads[0].sequence), codes(contig.substr(300, 149)), sc,
                                                 OracleMode::local, 0, unbanded())).score;
  EXPECT_GT(across, 80) << "crossing pays";
  // At most the unanchored optimum: the extension keeps its seed whole, and here a chance match
  // next to the run lets a path that shifts the seed by a base score a little more (bwa's too).
  EXPECT_GT(out[0].primary.score, 80) << describe(out[0]);
  EXPECT_LE(out[0].primary.score, across) << describe(out[0]);
  EXPECT_EQ(out[0].primary.reference_end, 449u) << describe(out[0]);
  EXPECT_EQ(out[0].primary.query_begin, 0u) << describe(out[0]);
  EXPECT_EQ(out[0].primary.query_end, 149u) << describe(out[0]);
  expect_edit_tags(out[0].primary, reads[0].sequence, contig, describe(out[0]));
  EXPECT_TRUE(out[0].supplementary.empty()) << describe(out[0]);
  const std::uint64_t ten_at = 300 + 149 + 300;
  ASSERT_TRUE(out[1].mapped) << describe(out[1]);
  ASSERT_EQ(out[1].supplementary.size(), 1u) << describe(out[1]);
  const GappedHit& right = out[1].primary;
  const GappedHit& left = out[1].supplementary[0];
  EXPECT_EQ(right.position, ten_at + 70) << describe(out[1]);
  EXPECT_EQ(right.score, 80) << describe(out[1]);
  EXPECT_EQ(right.cigar, (std::vector<std::uint32_t>{70u << 4 | 4, 80u << 4})) << describe(out[1]);
  EXPECT_EQ(left.position, ten_at) << describe(out[1]);
  EXPECT_EQ(left.score, 60) << describe(out[1]);
  EXPECT_EQ(left.cigar, (std::vector<std::uint32_t>{60u << 4, 90u << 4 | 4})) << describe(out[1]);
}

// Deletions of 80 and 30 bases behind a 150-base seed: the first try (band 100) gets past the first
// (its best cell 80 off the diagonal: 3/4 of the band or more) but not the second (110 off); bwa's
// second try with twice the band aligns the whole read -- the full Smith-Waterman's score, one
// region, no supplementary.
TEST_P(GappedMapperTest, ADeletionPastTheBandIsFoundWithTheWiderSecondTry) {
  std::mt19937_64 rng(53);
  const std::string contig = random_bases(rng, 600);
  TempDir dir;
  const fmindex::Reference fasta = fmtest::load_reference(dir, {{"wide", contig}});
  const fmindex::FmIndex index = fmtest::build_index(fasta, GetParam(), 8);
  auto m = GappedMapper::create(index, {});
  ASSERT_TRUE(m.ok());
  const std::string read = contig.substr(50, 150) + contig.substr(280, 100) + contig.substr(410, 60);
  std::vector<GappedReadAlignment> out;
  ASSERT_TRUE(m->map({{"wide", read, ""}}, out).ok());
  const std::string what = describe(out[0]);
  const Scoring sc;
  const std::int64_t best = local_answer(gotoh(codes(read), codes(contig), sc, OracleMode::local, 0, unbanded())).score;
  EXPECT_EQ(best, 310 - (sc.open_del + 80 * sc.extend_del) - (sc.open_del + 30 * sc.extend_del));
  ASSERT_TRUE(out[0].mapped) << what;
  EXPECT_EQ(out[0].primary.score, best) << what;
  EXPECT_EQ(out[0].primary.position, 50u) << what;
  EXPECT_EQ(out[0].primary.reference_end, 470u) << what;
  EXPECT_TRUE(out[0].supplementary.empty()) << what;
  expect_edit_tags(out[0].primary, read, contig, what);
}

TEST_P(GappedMapperTest, ReadsTooShortOrTooLongAreUnmappedWithTheirFlag) {
  GappedOptions options;
  options.max_read_length = 300;
  GappedMapper m = mapper(options);
  const std::string& c = reference_->contigs[1];
  const std::vector<SeqRecord> reads = {{"short", c.substr(100, 18), ""}, {"long", c.substr(100, 301), ""},
                                        {"empty", "", ""}, {"fits", c.substr(100, 300), ""}};
  std::vector<GappedReadAlignment> out;
  ASSERT_TRUE(m.map(reads, out).ok());
  ASSERT_EQ(out.size(), 4u);
  EXPECT_FALSE(out[0].mapped);
  EXPECT_EQ(out[0].flags, aligner::kTooShort);
  EXPECT_FALSE(out[1].mapped);
  EXPECT_EQ(out[1].flags, aligner::kTooLong);
  EXPECT_FALSE(out[2].mapped);
  EXPECT_EQ(out[2].flags, aligner::kTooShort);
  EXPECT_TRUE(out[3].mapped);
  EXPECT_EQ(out[3].flags, 0);
}

// An empty batch, a read of Ns only, and lower case (and U for T) read as upper case.
TEST_P(GappedMapperTest, EmptyBatchesNReadsAndLowerCase) {
  GappedMapper m = mapper();
  std::vector<GappedReadAlignment> out(3);
  ASSERT_TRUE(m.map(std::vector<SeqRecord>{}, out).ok());
  EXPECT_TRUE(out.empty());
  const std::string exact = reference_->contigs[0].substr(20100, 100);  // no N: Ns sit at 700 + 1500 k
  std::string lower = exact;
  for (char& c : lower) c = c == 'T' ? 'u' : static_cast<char>(c - 'A' + 'a');
  ASSERT_TRUE(m.map({{"n", std::string(150, 'N'), ""}, {"lower", lower, ""}, {"upper", exact, ""}}, out).ok());
  ASSERT_EQ(out.size(), 3u);
  EXPECT_FALSE(out[0].mapped);
  EXPECT_EQ(out[0].flags, 0);
  ASSERT_TRUE(out[1].mapped);
  EXPECT_EQ(out[1].primary.position, 20100u);
  EXPECT_EQ(out[1].primary.score, 100);
  EXPECT_EQ(describe(out[1]), describe(out[2]));
}

TEST_P(GappedMapperTest, RandomReadsAreUnmapped) {
  GappedMapper m = mapper();
  std::mt19937_64 rng(99);
  std::vector<SeqRecord> reads;
  for (int k = 0; k < 20; ++k) reads.push_back({"random", random_bases(rng, 150), ""});
  std::vector<GappedReadAlignment> out;
  ASSERT_TRUE(m.map(reads, out).ok());
  for (const GappedReadAlignment& a : out) EXPECT_FALSE(a.mapped) << describe(a);
}

TEST_P(GappedMapperTest, BatchSizesAndThreadCountsGiveTheSameBytes) {
  GappedMapper m = mapper();
  const std::vector<SeqRecord> reads = records(varied_reads(*reference_, 2));
  const auto all = map_all(m, reads, reads.size());
  const auto ones = map_all(m, reads, 1);
  const auto sevens = map_all(m, reads, 7);
  // And with 1 and 3 CPU threads (the host's per-read steps, the CPU backend's batches).
  set_cpu_threads(1);
  const auto one_thread = map_all(m, reads, reads.size());
  set_cpu_threads(3);
  const auto three_threads = map_all(m, reads, reads.size());
  set_cpu_threads(0);
  ASSERT_EQ(all.size(), reads.size());
  for (std::size_t i = 0; i < reads.size(); ++i) {
    EXPECT_EQ(describe(ones[i]), describe(all[i])) << i;
    EXPECT_EQ(describe(sevens[i]), describe(all[i])) << i;
    EXPECT_EQ(describe(one_thread[i]), describe(all[i])) << i;
    EXPECT_EQ(describe(three_threads[i]), describe(all[i])) << i;
  }
}

// The two extension schedules give the same alignments (ExtensionSchedule: an extension depends
// only on its read, chain and seed), on reads with several seeds per chain (edits), several
// chains (the repeats) and chimeric parts; and they did differ in work: looking ahead took fewer
// rounds.
TEST_P(GappedMapperTest, ExtensionSchedulesGiveTheSameAlignments) {
  const TestReference& r = *reference_;
  std::vector<Planted> planted = varied_reads(r, 4);
  std::mt19937_64 rng(9);
  for (bool reverse : {false, true}) {
    for (std::size_t at : {0, 60, 250}) {
      planted.push_back(plant(rng, r, 1, r.repeat_a + at, 150, 2, 1, 0, reverse));
      planted.push_back(plant(rng, r, 0, r.broken_a + at, 150, 1, 0, 0, reverse));
    }
  }
  std::vector<SeqRecord> reads = records(planted);
  // Chimeras: 100 bases of contig 0, then 100 of contig 2.
  for (std::size_t k = 0; k < 6; ++k)
    reads.push_back({"chimera" + std::to_string(k), r.contigs[0].substr(2000 + 900 * k, 100) + r.contigs[2].substr(500 + 700 * k, 100), ""});
  GappedOptions by_rounds, lookahead;
  by_rounds.schedule = ExtensionSchedule::rounds;
  lookahead.schedule = ExtensionSchedule::lookahead;
  GappedMapper a = mapper(by_rounds), b = mapper(lookahead);
  const auto ra = map_all(a, reads, reads.size());
  const auto rb = map_all(b, reads, reads.size());
  ASSERT_EQ(ra.size(), reads.size());
  for (std::size_t i = 0; i < reads.size(); ++i) EXPECT_EQ(describe(rb[i]), describe(ra[i])) << reads[i].name;
  const GappedStageSeconds& ta = a.stage_seconds();
  const GappedStageSeconds& tb = b.stage_seconds();
  EXPECT_LT(tb.extension_rounds, ta.extension_rounds) << "no read had two chains: the test proves nothing";
  EXPECT_GE(tb.seeds_extended, ta.seeds_extended);
}

// An index of one contig and its mappers: the tests that need a reference of a shape of their own.
struct OneContigIndex {
  OneContigIndex(const std::string& contig, Backend backend)
      : fasta(fmtest::load_reference(dir, {{"contig", contig}})), index(fmtest::build_index(fasta, backend, 8)) {}
  GappedMapper mapper(const GappedOptions& options = {}) const {
    auto m = GappedMapper::create(index, options);
    if (!m.ok()) throw std::runtime_error(m.status().message());
    return std::move(m).value();
  }
  TempDir dir;
  fmindex::Reference fasta;
  fmindex::FmIndex index;
};

// occurrence_sample against bwa mem's loop in mem_chain, run here: for (k = 0, n = 0; k < occ &&
// n < max; k += step, ++n), step = occ > max ? occ / max : 1.
TEST(OccurrenceSample, TakesTheRowsBwaMemsLoopTakes) {
  for (const std::uint64_t max : {1u, 3u, 5u, 500u}) {
    for (const std::uint64_t occ : {0u, 1u, 2u, 4u, 5u, 6u, 11u, 12u, 499u, 500u, 501u, 999u, 1000u, 1001u, 123457u}) {
      const std::uint64_t step = occ > max ? occ / max : 1;
      std::vector<std::uint64_t> bwa;
      for (std::uint64_t k = 0, n = 0; k < occ && n < max; k += step, ++n) bwa.push_back(k);
      const OccurrenceSample taken = occurrence_sample(occ, max);
      std::vector<std::uint64_t> ours;
      for (std::uint64_t r = 0; r < taken.count; ++r) ours.push_back(r * taken.step);
      EXPECT_EQ(ours, bwa) << occ << " occurrences, at most " << max;
    }
  }
  static_assert(occurrence_sample(12, 5).step == 2 && occurrence_sample(12, 5).count == 5);
  static_assert(occurrence_sample(5, 5).step == 1 && occurrence_sample(5, 5).count == 5);
}

// A read inside one of 12 copies of a 300-base unit: every seed has 12 occurrences. With -c 5
// (fewer than the copies) the seeds are sampled, not skipped, as bwa mem samples them: the read
// still aligns, exactly, to one of the copies, at MAPQ 0 and wholly repetitive; with -c 500 too.
TEST_P(GappedMapperTest, AReadOfARepeatWithMoreCopiesThanMaxOccurrencesStillAligns) {
  std::mt19937_64 rng(71);
  const std::string unit = random_bases(rng, 300);
  std::string contig = random_bases(rng, 500);
  std::vector<std::uint64_t> copies;
  for (int k = 0; k < 12; ++k) {
    copies.push_back(contig.size());
    contig += unit + random_bases(rng, 200);
  }
  const OneContigIndex one(contig, GetParam());
  const std::vector<SeqRecord> reads = {{"forward", unit.substr(60, 150), ""},
                                        {"reverse", reverse_complement(unit.substr(100, 150)), ""}};
  for (const std::uint32_t max : {5u, 500u}) {
    GappedOptions options;
    options.max_occurrences = max;
    GappedMapper m = one.mapper(options);
    const std::vector<GappedReadAlignment> out = map_all(m, reads, reads.size());
    ASSERT_EQ(out.size(), 2u);
    for (std::size_t i = 0; i < 2; ++i) {
      const GappedReadAlignment& a = out[i];
      ASSERT_TRUE(a.mapped) << reads[i].name << " -c " << max;
      EXPECT_EQ(a.mapq, 0) << reads[i].name << " -c " << max;
      EXPECT_EQ(a.primary.score, 150) << reads[i].name << " -c " << max;
      EXPECT_EQ(a.primary.reverse, i == 1);
      const std::uint64_t offset = i == 0 ? 60 : 100;
      EXPECT_NE(std::find(copies.begin(), copies.end(), a.primary.position - offset), copies.end())
          << reads[i].name << " at " << a.primary.position;
      EXPECT_EQ(a.repeat_fraction, max == 5 ? 1.0f : 0.0f);
    }
  }
}

// A read of a tandem repeat extends dozens of seeds of one chain (each overlaps an extended one
// on another diagonal, bwa's second test in mem_chain2aln), one per round in bwa's order; the
// lookahead schedule guesses them ahead (ExtensionPlan::take_ahead), with the same alignments in
// a few rounds. Repeat: 40 copies of a 23-base unit, each with a base of its own drawn anew (most
// change), so that the seeds are many and short; reads of 150 bases across it and its flanks,
// each with an N, on either strand.
TEST_P(GappedMapperTest, TandemRepeatReadsTakeFewRoundsWithTheSameAlignments) {
  std::mt19937_64 rng(53);
  const std::string unit = random_bases(rng, 23);
  std::string repeat;
  for (int k = 0; k < 40; ++k) {
    std::string copy = unit;
    copy[rng() % copy.size()] = "ACGT"[rng() % 4];
    repeat += copy;
  }
  const std::string contig = random_bases(rng, 2000) + repeat + random_bases(rng, 2000);
  std::vector<SeqRecord> reads;
  for (std::size_t begin = 1800; begin + 150 <= 2000 + repeat.size() + 200; begin += 37) {
    std::string read = contig.substr(begin, 150);
    read[40 + rng() % 70] = 'N';
    reads.push_back({"t" + std::to_string(begin), rng() % 2 ? reverse_complement(read) : read, ""});
  }
  const OneContigIndex one(contig, GetParam());
  GappedOptions by_rounds, lookahead;
  by_rounds.schedule = ExtensionSchedule::rounds;
  lookahead.schedule = ExtensionSchedule::lookahead;
  GappedMapper a = one.mapper(by_rounds), b = one.mapper(lookahead);
  const auto ra = map_all(a, reads, reads.size());
  const auto rb = map_all(b, reads, reads.size());
  for (std::size_t i = 0; i < reads.size(); ++i) EXPECT_EQ(describe(rb[i]), describe(ra[i])) << reads[i].name;
  const GappedStageSeconds& ta = a.stage_seconds();
  const GappedStageSeconds& tb = b.stage_seconds();
  ASSERT_GE(ta.extension_rounds, 30u) << "no read extended many seeds: the test proves nothing";
  // Doubling guesses: a read that extends n seeds in one chain takes about log2 n rounds.
  EXPECT_LE(tb.extension_rounds * 4, ta.extension_rounds);
  EXPECT_LE(tb.seeds_extended, 2 * ta.seeds_extended);
}

// release_device_memory (after a batch too large for the GPU) gives back every device byte the
// mapper took for its batches, and the next batch, made anew, maps as before; a part of a batch
// (reads[k, n) of the array) maps as those reads alone.
TEST_P(GappedMapperTest, ReleasedDeviceMemoryComesBackAndPartsMapAlike) {
  GappedMapper m = mapper();
  const std::vector<SeqRecord> reads = records(varied_reads(*reference_, 4));
  m.release_device_memory();  // whatever the index's build left in its workspace
  const std::size_t before_batches = device_memory_held();
  const auto all = map_all(m, reads, reads.size());
  if (GetParam() == Backend::gpu) {
    EXPECT_GT(device_memory_held(), before_batches);
  }
  m.release_device_memory();
  EXPECT_EQ(device_memory_held(), before_batches);
  const auto again = map_all(m, reads, reads.size());
  const std::size_t k = reads.size() / 3;
  std::vector<GappedReadAlignment> tail;
  ASSERT_TRUE(m.map(reads.data() + k, reads.size() - k, tail).ok());
  ASSERT_EQ(tail.size(), reads.size() - k);
  for (std::size_t i = 0; i < reads.size(); ++i) {
    EXPECT_EQ(describe(again[i]), describe(all[i])) << i;
    if (i >= k) {
      EXPECT_EQ(describe(tail[i - k]), describe(all[i])) << i;
    }
  }
}

// The batches of `batch` reads of `reads`, as ReadBatches.
std::vector<aligner::ReadBatch> batches_of(const std::vector<SeqRecord>& reads, std::size_t batch) {
  std::vector<aligner::ReadBatch> batches;
  for (std::size_t i = 0; i < reads.size(); i += batch) {
    aligner::ReadBatch& b = batches.emplace_back();
    b.reads.assign(reads.begin() + i, reads.begin() + std::min(reads.size(), i + batch));
    b.filled = b.reads.size();
  }
  return batches;
}

// Every batch of `batch` reads through the engine with the pipeline's pattern of calls (search
// runs up to the engine's finish queue and two batches ahead of finish); the alignments in read
// order, or the first error.
Status run_engine(aligner::GappedSearchEngine& engine, const std::vector<SeqRecord>& reads, std::size_t batch,
                  std::vector<GappedReadAlignment>& got) {
  std::vector<aligner::ReadBatch> batches = batches_of(reads, batch);
  got.clear();
  std::size_t finished = 0;
  auto finish_one = [&]() -> Status {
    WTMAP_TRY(engine.finish(batches[finished]));
    got.insert(got.end(), batches[finished].gapped_alignments.begin(), batches[finished].gapped_alignments.end());
    ++finished;
    return {};
  };
  for (std::size_t searched = 0; searched < batches.size(); ++searched) {
    WTMAP_TRY(engine.search(batches[searched]));
    if (searched - finished + 1 >= engine.finish_queue_capacity() + 2) WTMAP_TRY(finish_one());
  }
  while (finished < batches.size()) WTMAP_TRY(finish_one());
  return {};
}

// run_engine gives `expected`, read by read.
void expect_engine_gives(aligner::GappedSearchEngine& engine, const std::vector<SeqRecord>& reads, std::size_t batch,
                         const std::vector<GappedReadAlignment>& expected, const std::string& what) {
  std::vector<GappedReadAlignment> got;
  const Status ran = run_engine(engine, reads, batch, got);
  ASSERT_TRUE(ran.ok()) << what << ": " << ran.message();
  ASSERT_EQ(got.size(), expected.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i) ASSERT_EQ(describe(got[i]), describe(expected[i])) << what << ", read " << i;
}

// The pipeline's engine maps several batches at once on mapping threads (mappers made by
// another(), sharing the reference): each batch's alignments equal one GappedMapper's, whichever
// thread mapped it; release() with batches still queued returns.
TEST_P(GappedMapperTest, SearchEngineWithSeveralMappersGivesEachBatchsBytes) {
  GappedMapper m = mapper();
  const std::vector<SeqRecord> reads = records(varied_reads(*reference_, 4));
  constexpr std::size_t kBatch = 17;
  const auto expected = map_all(m, reads, kBatch);
  GappedMapper sibling = m.another();
  const auto from_sibling = map_all(sibling, reads, kBatch);
  for (std::size_t i = 0; i < reads.size(); ++i) ASSERT_EQ(describe(from_sibling[i]), describe(expected[i])) << i;
  for (unsigned mappers = 1; mappers <= aligner::GappedSearchEngine::kMostMappers; ++mappers) {
    aligner::GappedSearchEngine engine;
    EXPECT_EQ(engine.finish_queue_capacity(), aligner::AlignPipeline::kToFinish);
    ASSERT_TRUE(engine.start(*index_, {}, mappers).ok());
    // A batch waiting for each mapping thread besides the pipeline's default queue.
    EXPECT_EQ(engine.finish_queue_capacity(), aligner::AlignPipeline::kToFinish + mappers);
    expect_engine_gives(engine, reads, kBatch, expected, std::to_string(mappers) + " mappers");
    if (HasFatalFailure()) return;
    // Batches searched and never finished: release() drops the queued ones and returns.
    std::vector<aligner::ReadBatch> batches = batches_of(reads, kBatch);
    for (std::size_t k = 0; k < 3 && k < batches.size(); ++k) ASSERT_TRUE(engine.search(batches[k]).ok());
    engine.release();
    EXPECT_FALSE(engine.search(batches[0]).ok());
  }
}

// Another copy of the index -- on the second GPU where there are two, as `wtmap align --gpus`
// loads one per GPU: a mapper made by another(copy), and an engine started on the copy with
// shared_with (sharing the first engine's reference, its threads bound to that GPU), give the
// first mapper's bytes; the first engine still does after.
TEST_P(GappedMapperTest, SearchEngineOnAnotherCopyOfTheIndexGivesTheSameBytes) {
  GappedMapper m = mapper();
  const std::vector<SeqRecord> reads = records(varied_reads(*reference_, 4));
  constexpr std::size_t kBatch = 17;
  const auto expected = map_all(m, reads, kBatch);
  const int gpu = GetParam() == Backend::gpu && visible_gpu_count() >= 2 ? 1 : -1;
  aligner::GappedSearchEngine first;
  ASSERT_TRUE(first.start(*index_, {}).ok());
  {
    const ScopedGpu there(gpu);
    ASSERT_TRUE(there.status().ok()) << there.status().message();
    auto copy = std::make_unique<fmindex::FmIndex>(fmtest::build_index(*fasta_, GetParam(), 8));
    {
      GappedMapper sibling = m.another(*copy);
      const auto from_copy = map_all(sibling, reads, kBatch);
      ASSERT_EQ(from_copy.size(), expected.size());
      for (std::size_t i = 0; i < reads.size(); ++i) ASSERT_EQ(describe(from_copy[i]), describe(expected[i])) << i;
    }
    aligner::GappedSearchEngine second;
    second.bind_to_gpu(gpu);
    EXPECT_EQ(second.where(), gpu < 0 ? "" : "GPU 1");
    ASSERT_TRUE(second.start(*copy, {}, aligner::GappedSearchEngine::kMostMappers, &first).ok());
    expect_engine_gives(second, reads, kBatch, expected, "the engine on the copy");
    second.release();
  }
  expect_engine_gives(first, reads, kBatch, expected, "the first engine");
}

// A device short of memory, made by the engine's test-only fit check (a mapping of more than
// `most` reads fails with device_out_of_memory before the mapper runs): what a run of the engine
// saw -- every count the check was asked about, those it refused, and the report lines.
struct ShortDeviceRun {
  std::mutex mutex;
  std::vector<std::size_t> asked, refused;
  std::vector<std::string> reports;
};

void make_short_of_memory(aligner::GappedSearchEngine& engine, ShortDeviceRun& run, std::size_t most,
                          std::size_t unit = 1) {
  engine.configure_splitting(unit, [&run](const std::string& line) {
    const std::lock_guard<std::mutex> lock(run.mutex);
    run.reports.push_back(line);
  });
  engine.set_fit_check([&run, most](std::size_t count) {
    const std::lock_guard<std::mutex> lock(run.mutex);
    run.asked.push_back(count);
    if (count > most) run.refused.push_back(count);
    return count <= most;
  });
}

// Jobs of 17 reads on a device that holds 5: each job whose mapping fails is mapped again in
// parts (17 -> 8 -> 4 reads) by its thread, the parts' alignments joined in order, so every batch
// gets one GappedMapper's bytes, for one mapping thread or the most. The size is said once, and
// later jobs map in parts of 4 from the start: at most two refusals per job mapped before the size
// was known (exactly two with one thread, whose jobs run one after another).
TEST_P(GappedMapperTest, SearchEngineShortOfMemoryMapsJobsInPartsWithTheSameBytes) {
  GappedMapper m = mapper();
  std::vector<SeqRecord> reads = records(varied_reads(*reference_, 4));
  constexpr std::size_t kBatch = 17;
  reads.resize(reads.size() / kBatch * kBatch);  // whole jobs only: each one's first try is 17 reads
  ASSERT_GT(reads.size(), 3 * kBatch);
  const auto expected = map_all(m, reads, kBatch);
  for (unsigned mappers : {1u, aligner::GappedSearchEngine::kMostMappers}) {
    aligner::GappedSearchEngine engine;
    ShortDeviceRun run;
    make_short_of_memory(engine, run, 5);
    EXPECT_EQ(engine.most_reads_per_batch(), std::numeric_limits<std::size_t>::max());
    ASSERT_TRUE(engine.start(*index_, {}, mappers).ok());
    expect_engine_gives(engine, reads, kBatch, expected, std::to_string(mappers) + " mappers");
    if (HasFatalFailure()) return;
    EXPECT_EQ(engine.part_size(), 4u);
    EXPECT_EQ(engine.most_reads_per_batch(), 4u);
    ASSERT_EQ(run.reports.size(), 1u) << mappers << " mappers";
    EXPECT_EQ(run.reports[0],
              "the GPU was short of memory for a batch of 17 reads: batches of 4 reads from now on (--batch 4 "
              "avoids the retries)");
    for (std::size_t count : run.refused) EXPECT_TRUE(count == 17 || count == 8) << count;
    if (mappers == 1) {
      EXPECT_EQ(run.refused.size(), 2u);
    } else {
      EXPECT_LE(run.refused.size(), 2u * mappers);
    }
    const std::size_t mapped = std::accumulate(run.asked.begin(), run.asked.end(), std::size_t{0}) -
                               std::accumulate(run.refused.begin(), run.refused.end(), std::size_t{0});
    EXPECT_EQ(mapped, reads.size());  // every read mapped once, in a part that fit
  }
}

// Pairs (unit 2, as PairedReadSource lays mates 2p and 2p + 1 side by side) stay in one part: a
// device that holds 3 reads maps jobs of 16 in parts of 2, every count asked about is even, and
// the bytes are one mapper's.
TEST_P(GappedMapperTest, SearchEngineShortOfMemoryKeepsPairsWhole) {
  GappedMapper m = mapper();
  std::vector<SeqRecord> reads = records(varied_reads(*reference_, 4));
  reads.resize(reads.size() / 2 * 2);
  constexpr std::size_t kBatch = 16;
  const auto expected = map_all(m, reads, kBatch);
  aligner::GappedSearchEngine engine;
  ShortDeviceRun run;
  make_short_of_memory(engine, run, 3, 2);
  ASSERT_TRUE(engine.start(*index_, {}, 2).ok());
  expect_engine_gives(engine, reads, kBatch, expected, "pairs");
  if (HasFatalFailure()) return;
  EXPECT_EQ(engine.part_size(), 2u);
  for (std::size_t count : run.asked) EXPECT_EQ(count % 2, 0u) << count;
  EXPECT_EQ(run.reports.size(), 1u);
}

// A single read (or pair) that does not fit fails its job, in finish(), saying so; no report line.
TEST_P(GappedMapperTest, SearchEngineShortOfMemoryForOneReadFailsTheJob) {
  const std::vector<SeqRecord> reads = records(varied_reads(*reference_, 4));
  for (std::size_t unit : {1, 2}) {
    aligner::GappedSearchEngine engine;
    ShortDeviceRun run;
    make_short_of_memory(engine, run, 0, unit);
    ASSERT_TRUE(engine.start(*index_, {}, 1).ok());
    std::vector<aligner::ReadBatch> batches = batches_of(std::vector<SeqRecord>(reads.begin(), reads.begin() + 8), 8);
    ASSERT_TRUE(engine.search(batches[0]).ok());  // the failure shows in finish()
    const Status finished = engine.finish(batches[0]);
    EXPECT_EQ(finished.code(), StatusCode::device_out_of_memory);
    const std::string what = unit == 1 ? "a single read does not fit in the GPU's memory: "
                                       : "a single pair of reads does not fit in the GPU's memory: ";
    EXPECT_EQ(finished.message().rfind(what, 0), 0u) << finished.message();
    EXPECT_TRUE(run.reports.empty());
    EXPECT_EQ(run.asked.back(), unit);
  }
}

// ---- mate rescue (rescue_mates, bwa mem's mem_matesw) -------------------------------------

constexpr std::size_t kMateLength = 120;

// Pairs on contig 0, fragments [1000 + 1500 k, + insert) clear of its single Ns, its long N run and
// its N-broken repeat copy, one mate the fragment's first kMateLength bases (forward), the other
// the reverse strand of its last ones. The anchor (mate 1) is exact and unique: the forward mate
// for k < 8, the reverse one after. Mate 2 is rescuable (k even: a substitution every 15 bases,
// so no 19-base seed; k odd: also a 2-base deletion) or, every fourth pair, exact (it pairs
// already). Then a pair of random mates.
std::vector<SeqRecord> rescue_pairs(const TestReference& ref, std::vector<bool>& rescuable) {
  const std::string& c = ref.contigs[0];
  std::vector<SeqRecord> reads;
  rescuable.clear();
  for (std::size_t k : {0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12}) {
    const std::size_t begin = 1000 + 1500 * k, insert = 260 + (k * 7) % 80, deleted = k % 2 ? 2 : 0;
    const bool exact = k % 4 == 3, anchor_reverse = k >= 8;
    const std::size_t mate_begin = anchor_reverse ? begin : begin + insert - kMateLength - deleted;
    std::string mate = c.substr(mate_begin, kMateLength + deleted);
    if (!exact) {
      if (deleted) mate.erase(60, deleted);
      for (std::size_t at = 8; at < kMateLength; at += 15) mate[at] = mate[at] == 'A' ? 'C' : 'A';
    }
    const std::string anchor = anchor_reverse ? reverse_complement(c.substr(begin + insert - kMateLength, kMateLength))
                                              : c.substr(begin, kMateLength);
    reads.push_back({"m1", anchor, ""});
    reads.push_back({"m2", anchor_reverse ? mate : reverse_complement(mate), ""});
    rescuable.push_back(!exact);
  }
  std::mt19937_64 rng(26);
  reads.push_back({"r1", random_bases(rng, kMateLength), ""});
  reads.push_back({"r2", random_bases(rng, kMateLength), ""});
  rescuable.push_back(false);
  return reads;
}

aligner::InsertSizeModel rescue_model() { return aligner::parse_insert_size("300,20").value(); }  // [220, 380]

// rescue_mates over `pairs` pairs at a time.
std::vector<GappedReadAlignment> rescue_in_slices(GappedMapper& m, const std::vector<SeqRecord>& reads,
                                                  std::vector<GappedReadAlignment> alignments, std::size_t pairs) {
  for (std::size_t i = 0; i < reads.size(); i += 2 * pairs) {
    const std::size_t end = std::min(reads.size(), i + 2 * pairs);
    const std::vector<SeqRecord> slice(reads.begin() + i, reads.begin() + end);
    std::vector<GappedReadAlignment> part(alignments.begin() + i, alignments.begin() + end);
    const Status s = m.rescue_mates(slice, part, rescue_model(), 17);
    if (!s.ok()) throw std::runtime_error(s.message());
    std::move(part.begin(), part.end(), alignments.begin() + i);
  }
  return alignments;
}

// A rescued mate scores what a full unbanded Smith-Waterman of it against the window its mate
// allows scores (worked out here: a proper FR pair's insert lies in [220, 380], so the window is
// [P + 220 - 120, P + 380) for a forward mate 1 at P, [E - 380, E - 220 + 120) for a reverse one
// ending at E), on the other strand, its CIGAR rescoring to that, NM and MD recomputed; mates
// that paired already and random ones are left as map() gave them.
TEST_P(GappedMapperTest, RescueFindsSeedlessMatesAsTheFullSmithWatermanScoresThem) {
  GappedMapper m = mapper();
  std::vector<bool> rescuable;
  const std::vector<SeqRecord> reads = rescue_pairs(*reference_, rescuable);
  const auto single = map_all(m, reads, reads.size());
  const auto rescued = rescue_in_slices(m, reads, single, reads.size());
  const std::string& c = reference_->contigs[0];
  const Scoring sc;
  for (std::size_t p = 0; p < rescuable.size(); ++p) {
    const GappedReadAlignment& anchor = rescued[2 * p];
    const GappedReadAlignment& mate = rescued[2 * p + 1];
    const std::string what = "pair " + std::to_string(p) + ": " + describe(mate);
    EXPECT_EQ(describe(anchor), describe(single[2 * p])) << what;
    if (!rescuable[p]) {
      EXPECT_EQ(describe(mate), describe(single[2 * p + 1])) << what;
      continue;
    }
    ASSERT_FALSE(single[2 * p + 1].mapped) << what << ": seeds found the mate, the test plants it wrong";
    ASSERT_TRUE(anchor.mapped && mate.mapped) << what;
    const bool anchor_reverse = anchor.primary.reverse;
    const std::size_t window = anchor_reverse ? anchor.primary.reference_end - 380
                                              : anchor.primary.position + 220 - kMateLength;
    const std::string target = c.substr(window, 380 - 220 + kMateLength);
    const std::string& read = reads[2 * p + 1].sequence;
    const std::string forward = anchor_reverse ? read : reverse_complement(read);
    const std::int64_t best = local_answer(gotoh(codes(forward), codes(target), sc, OracleMode::local, 0, unbanded())).score;
    const GappedHit& h = mate.primary;
    EXPECT_EQ(h.score, best) << what;
    // csub: ksw's score2 over the window's rows as the rescue reads them -- the read as given
    // against the window on the mate's strand.
    const GotohMatrices strand = gotoh(codes(read), codes(anchor_reverse ? target : reverse_complement(target)), sc,
                                       OracleMode::local, 0, unbanded());
    const OracleExtension strand_best = local_answer(strand);
    EXPECT_EQ(mate.chain_sub_score, ksw_score2(strand, 19, strand_best.score, strand_best.tle, 1)) << what;
    EXPECT_EQ(mate.repeat_fraction, 0.0f) << what;
    EXPECT_EQ(h.reverse, !anchor_reverse) << what;
    EXPECT_GE(h.position, window) << what;
    EXPECT_LE(h.reference_end, window + target.size()) << what;
    expect_edit_tags(h, forward, c, what);
    EXPECT_EQ(cigar_score(h, forward, c, sc), h.score) << what;
    EXPECT_GT(mate.mapq, 0) << what;
  }
}

TEST_P(GappedMapperTest, RescueGivesTheSameBytesForAnySliceOfPairs) {
  GappedMapper m = mapper();
  std::vector<bool> rescuable;
  const std::vector<SeqRecord> reads = rescue_pairs(*reference_, rescuable);
  const auto single = map_all(m, reads, reads.size());
  const auto whole = rescue_in_slices(m, reads, single, reads.size());
  for (const std::size_t pairs : {1, 3}) {
    const auto split = rescue_in_slices(m, reads, single, pairs);
    for (std::size_t i = 0; i < reads.size(); ++i) EXPECT_EQ(describe(split[i]), describe(whole[i])) << pairs << " " << i;
  }
  // An odd count is no batch of pairs; no model: nothing to do.
  std::vector<GappedReadAlignment> odd(single.begin(), single.begin() + 3);
  EXPECT_FALSE(m.rescue_mates(std::vector<SeqRecord>(reads.begin(), reads.begin() + 3), odd, rescue_model(), 17).ok());
  std::vector<GappedReadAlignment> unknown = single;
  ASSERT_TRUE(m.rescue_mates(reads, unknown, aligner::InsertSizeModel{}, 17).ok());
  for (std::size_t i = 0; i < reads.size(); ++i) EXPECT_EQ(describe(unknown[i]), describe(single[i])) << i;
}

// The engine rescue tests' input: the rescue pairs, in batches of kEnginePairs pairs, and what
// GappedMapper::rescue_mates gives them batch by batch (the engine's expected alignments).
constexpr std::size_t kEnginePairs = 3;
struct EngineRescueCase {
  std::vector<SeqRecord> reads;
  std::vector<GappedReadAlignment> expected;
};
EngineRescueCase engine_rescue_case(GappedMapper& m, const TestReference& ref) {
  std::vector<bool> rescuable;
  EngineRescueCase c{rescue_pairs(ref, rescuable), {}};
  c.expected = rescue_in_slices(m, c.reads, map_all(m, c.reads, 2 * kEnginePairs), kEnginePairs);
  return c;
}

// The engine's batches from `first` on, those from `unsearched` searched first, each finished
// rescued by the mapping threads: their alignments after `got` equal `expected`.
void finish_rescued_batches(aligner::GappedSearchEngine& engine, std::vector<aligner::ReadBatch>& batches,
                            std::size_t first, std::size_t unsearched, std::vector<GappedReadAlignment> got,
                            const std::vector<GappedReadAlignment>& expected) {
  for (std::size_t b = first; b < batches.size(); ++b) {
    if (b >= unsearched) {
      ASSERT_TRUE(engine.search(batches[b]).ok());
    }
    ASSERT_TRUE(engine.finish(batches[b]).ok());
    EXPECT_TRUE(batches[b].mates_rescued) << b;
    got.insert(got.end(), batches[b].gapped_alignments.begin(), batches[b].gapped_alignments.end());
  }
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_EQ(describe(got[i]), describe(expected[i])) << i;
}

// The engine's mapping threads, told the model (rescue_on_mapping_threads), rescue each batch
// whose mapping they end after that as GappedMapper::rescue_mates does it -- one searched before
// the call included -- and finish() marks the batch; batches finished before are left to the
// caller (the writer stage's rescue_mates), which gives the same bytes.
TEST_P(GappedMapperTest, SearchEngineRescuesOnItsMappingThreadsOnceTold) {
  GappedMapper m = mapper();
  const auto [reads, expected] = engine_rescue_case(m, *reference_);
  aligner::GappedSearchEngine engine;
  // The fit check runs on the mapping thread before each mapping: there it holds batch 1's.
  std::mutex gate;
  std::condition_variable opened;
  bool open = true;
  engine.set_fit_check([&](std::size_t) {
    std::unique_lock<std::mutex> lock(gate);
    opened.wait(lock, [&] { return open; });
    return true;
  });
  ASSERT_TRUE(engine.start(*index_, {}).ok());
  std::vector<aligner::ReadBatch> batches = batches_of(reads, 2 * kEnginePairs);
  ASSERT_GE(batches.size(), 4u);
  ASSERT_TRUE(engine.search(batches[0]).ok());  // searched and mapped before the model is known
  ASSERT_TRUE(engine.finish(batches[0]).ok());
  EXPECT_FALSE(batches[0].mates_rescued);
  ASSERT_TRUE(engine.rescue_mates(batches[0].reads, batches[0].gapped_alignments, rescue_model(), 17).ok());
  std::vector<GappedReadAlignment> got = batches[0].gapped_alignments;
  {
    const std::lock_guard<std::mutex> lock(gate);
    open = false;
  }
  ASSERT_TRUE(engine.search(batches[1]).ok());  // searched before the model is known, mapped after
  engine.rescue_on_mapping_threads(rescue_model(), 17);
  {
    const std::lock_guard<std::mutex> lock(gate);
    open = true;
  }
  opened.notify_all();
  finish_rescued_batches(engine, batches, 1, 2, std::move(got), expected);
  EXPECT_GT(engine.mapping_rescue_seconds(), 0.0);
}

// A batch mapped before rescue_on_mapping_threads but not yet finished is rescued by a mapping
// thread before finish() hands it over. One mapping thread, so that when it starts on batch 1
// (the fit check, held there), batch 0 is mapped.
TEST_P(GappedMapperTest, SearchEngineRescuesTheBatchesMappedBeforeItWasTold) {
  GappedMapper m = mapper();
  const auto [reads, expected] = engine_rescue_case(m, *reference_);
  aligner::GappedSearchEngine engine;
  std::mutex gate;
  std::condition_variable changed;
  std::size_t checks = 0;
  bool open = false;
  engine.set_fit_check([&](std::size_t) {
    std::unique_lock<std::mutex> lock(gate);
    ++checks;
    changed.notify_all();
    changed.wait(lock, [&] { return open || checks == 1; });
    return true;
  });
  ASSERT_TRUE(engine.start(*index_, {}, 1).ok());
  std::vector<aligner::ReadBatch> batches = batches_of(reads, 2 * kEnginePairs);
  ASSERT_GE(batches.size(), 3u);
  ASSERT_TRUE(engine.search(batches[0]).ok());
  ASSERT_TRUE(engine.search(batches[1]).ok());
  {
    std::unique_lock<std::mutex> lock(gate);
    changed.wait(lock, [&] { return checks == 2; });  // batch 0 mapped, batch 1's mapping held
  }
  engine.rescue_on_mapping_threads(rescue_model(), 17);
  {
    const std::lock_guard<std::mutex> lock(gate);
    open = true;
  }
  changed.notify_all();
  finish_rescued_batches(engine, batches, 0, 2, {}, expected);
}

// A given model with a huge max (-I 300,20,25000: proper inserts in [220, 25000]) makes windows of
// up to 25000 - 220 + 120 bases, cut at the contig's ends; those longer than 20000 are not searched.
TEST_P(GappedMapperTest, RescueSkipsWindowsLongerThanTwiceBwasMaxIns) {
  GappedMapper m = mapper();
  std::vector<bool> rescuable;
  const std::vector<SeqRecord> reads = rescue_pairs(*reference_, rescuable);
  std::vector<GappedReadAlignment> out = map_all(m, reads, reads.size());
  ASSERT_TRUE(m.rescue_mates(reads, out, aligner::parse_insert_size("300,20,25000").value(), 17).ok());
  const auto contig = static_cast<std::int64_t>(reference_->contigs[0].size());
  std::size_t searched = 0, skipped = 0;
  for (std::size_t p = 0; p < rescuable.size(); ++p) {
    if (!rescuable[p]) continue;
    const GappedHit& anchor = out[2 * p].primary;
    const auto lo = anchor.reverse ? std::max<std::int64_t>(0, static_cast<std::int64_t>(anchor.reference_end) - 25000)
                                   : static_cast<std::int64_t>(anchor.position + 220 - kMateLength);
    const auto hi = anchor.reverse ? static_cast<std::int64_t>(anchor.reference_end - 220 + kMateLength)
                                   : std::min<std::int64_t>(contig, static_cast<std::int64_t>(anchor.position) + 25000);
    const bool short_enough = hi - lo <= 20000;
    EXPECT_EQ(out[2 * p + 1].mapped, short_enough) << p << ": window of " << hi - lo;
    (short_enough ? searched : skipped) += 1;
  }
  EXPECT_GT(searched, 0u);
  EXPECT_GT(skipped, 0u);
}

// Pairing's candidates (bwa mem's mem_pair scores every region): the piece in 7 copies has all 7,
// the primary first, the others secondary to it, though XA lists none. Paired with a unique mate
// 300 bases from a copy that is not its primary (insert [220, 380]: no other copy in reach),
// rescue_mates aligns that copy (pair_hits: 150M, NM 0, MD 150, the reverse strand) and
// pair_gapped_mates writes it, MAPQ 0 + 40, XS the former primary's 150, no XA (6 > -h 5).
TEST_P(GappedMapperTest, PairingChoosesAmongEveryCopyNotOnlyTheReportedOnes) {
  std::mt19937_64 rng(37);
  const std::string many = random_bases(rng, 200);
  std::vector<std::size_t> at;
  const std::string contig = contig_with_copies(rng, std::vector<const std::string*>(7, &many), 700, at);
  TempDir dir;
  const fmindex::Reference fasta = fmtest::load_reference(dir, {{"copies", contig}});
  const fmindex::FmIndex index = fmtest::build_index(fasta, GetParam(), 8);
  auto m = GappedMapper::create(index, {});
  ASSERT_TRUE(m.ok());
  const std::string repeat_mate = reverse_complement(many.substr(20, 150));  // reverse on [at + 20, at + 170)
  std::vector<GappedReadAlignment> alone;
  ASSERT_TRUE(m->map({{"many", repeat_mate, ""}}, alone).ok());
  const GappedReadAlignment& a = alone[0];
  ASSERT_TRUE(a.mapped);
  EXPECT_TRUE(a.alternatives.empty()) << describe(a);
  ASSERT_EQ(a.candidates.size(), 7u) << describe(a);
  std::vector<std::size_t> places;
  for (std::size_t c = 0; c < 7; ++c) {
    const aligner::gapped::PairCandidate& x = a.candidates[c];
    places.push_back(x.position - 20);
    EXPECT_EQ(x.score, 150);
    EXPECT_TRUE(x.reverse);
    EXPECT_EQ(x.reference_end, x.position + 150);
    EXPECT_EQ(x.secondary, c == 0 ? -1 : 0);
  }
  EXPECT_EQ(a.candidates[0].position, a.primary.position);
  std::sort(places.begin(), places.end());
  EXPECT_EQ(places, at);
  // A unique mate 300 bases before the end of a copy other than the primary's.
  const std::size_t k = a.primary.position == at[3] + 20 ? 4 : 3;
  const std::vector<SeqRecord> reads = {{"unique", contig.substr(at[k] + 170 - 300, 100), ""}, {"many", repeat_mate, ""}};
  std::vector<GappedReadAlignment> out;
  ASSERT_TRUE(m->map(reads, out).ok());
  const aligner::InsertSizeModel model = rescue_model();
  ASSERT_TRUE(m->rescue_mates(reads, out, model, 17).ok());
  const std::string what = describe(out[1]);
  ASSERT_EQ(out[1].pair_hits.size(), 1u) << what;
  const GappedHit& h = out[1].pair_hits[0];
  EXPECT_EQ(describe(h), describe(GappedHit{0, at[k] + 20, at[k] + 170, true, 0, 150, 150, {150u << 4}, 0, "150", 0}));
  aligner::PairScoring scoring = aligner::gapped_pair_scoring(Scoring{}, 17);
  aligner::MateFields f[2];
  GappedReadAlignment mates[2] = {out[0], out[1]};
  aligner::pair_gapped_mates(mates, model, scoring, f);
  EXPECT_EQ(describe(mates[1].primary), describe(h));
  EXPECT_TRUE(mates[1].alternatives.empty());
  EXPECT_EQ(mates[1].sub_score, 150);
  EXPECT_EQ(f[1].flag & aligner::kSamProperPair, aligner::kSamProperPair);
  EXPECT_EQ(f[0].mapq, 60);
  EXPECT_EQ(f[1].mapq, 40);
  EXPECT_EQ(f[0].tlen, 300);
}

// One pair on a reference of one contig: map()'s alignments, then rescue_mates()' (rescue_model()).
struct MappedPair {
  std::vector<GappedReadAlignment> single, rescued;
};
MappedPair map_and_rescue(const std::string& contig, const std::vector<SeqRecord>& reads, Backend backend) {
  const OneContigIndex one(contig, backend);
  GappedMapper m = one.mapper();
  MappedPair out;
  Status s = m.map(reads, out.single);
  out.rescued = out.single;
  if (s.ok()) s = m.rescue_mates(reads, out.rescued, rescue_model(), 17);
  if (!s.ok()) throw std::runtime_error(s.message());
  return out;
}

// bwa mem's tandem cap (mem_matesw's csub, ksw_align2's score2): the reverse mate's window by a
// unique forward mate at 1000 ([1100, 1380) for inserts [220, 380]) holds two seedless copies of
// it, one with 8 substitutions at [1250, 1370) (score 120 - 8 * 5 = 80) and one with 9 at
// [1100, 1220) (75), whose ends lie 150 apart, beyond the best's reach of 80. The rescue finds
// the first with csub 75; pairing then raises its MAPQ to at most 6.02 * (80 - 75) = 30.
TEST_P(GappedMapperTest, RescueInATandemRepeatIsCappedAtTheSecondCopysScore) {
  std::mt19937_64 rng(41);
  std::string contig = random_bases(rng, 3000);
  const std::string mate = random_bases(rng, 120);  // mate 2's forward-strand bases
  std::string eight = mate, nine = mate;
  for (std::size_t at = 8; at < 120; at += 15) {
    eight[at] = eight[at] == 'A' ? 'C' : 'A';
    nine[at] = eight[at];
  }
  nine[60] = nine[60] == 'G' ? 'T' : 'G';
  contig.replace(1250, 120, eight);
  contig.replace(1100, 120, nine);
  const MappedPair out = map_and_rescue(contig, {{"pair", contig.substr(1000, 120), ""}, {"pair", reverse_complement(mate), ""}},
                                        GetParam());
  ASSERT_TRUE(out.single[0].mapped);
  ASSERT_FALSE(out.single[1].mapped) << describe(out.single[1]) << ": seeds found the mate, the test plants it wrong";
  const GappedReadAlignment& rescued = out.rescued[1];
  ASSERT_TRUE(rescued.mapped);
  EXPECT_EQ(describe(rescued.primary), describe(GappedHit{0, 1250, 1370, true, 0, 120, 80, {120u << 4}, 8, rescued.primary.md, 0}));
  EXPECT_EQ(rescued.chain_sub_score, 75);
  EXPECT_EQ(rescued.repeat_fraction, 0.0f);
  aligner::MateFields f[2];
  GappedReadAlignment mates[2] = {out.rescued[0], out.rescued[1]};
  aligner::pair_gapped_mates(mates, rescue_model(), aligner::gapped_pair_scoring(Scoring{}, 17), f);
  EXPECT_EQ(f[0].flag & aligner::kSamProperPair, aligner::kSamProperPair);
  EXPECT_EQ(f[0].mapq, 60);
  EXPECT_EQ(f[1].mapq, static_cast<int>(6.02 * (80 - 75) + .499));
}

// bwa mem's XA after rescue (mem_gen_alt over the regions mem_matesw added to): mate 1 lies in two
// exact copies (1000 and 4000); mate 2 is unique by the first (reverse on [1180, 1300)) and, in the
// window of the second ([4100, 4380)), half of it with a substitution every 15 bases (no seed):
// read bases [0, 60) on [4200, 4260), 4 mismatches, score 40. That find is secondary to mate 2's
// primary (60S60M on the forward strand): its sub-score (XS) but not in XA (40 < 0.8 * 120); it
// waits in pair_hits.
TEST_P(GappedMapperTest, RescuedHitsBelowTheXaShareCountAsSubButAreNotListed) {
  std::mt19937_64 rng(43);
  std::string contig = random_bases(rng, 6000);
  contig.replace(4000, 120, contig.substr(1000, 120));
  const std::string mate = contig.substr(1180, 120);  // mate 2's forward-strand bases
  std::string half = mate.substr(60, 60);
  for (const std::size_t o : {9, 24, 39, 54}) half[o] = half[o] == 'A' ? 'C' : 'A';
  contig.replace(4200, 60, half);
  contig[4199] = mate[59] == 'A' ? 'C' : 'A';  // the read's next base does not match on
  const MappedPair out = map_and_rescue(contig, {{"pair", contig.substr(1000, 120), ""}, {"pair", reverse_complement(mate), ""}},
                                        GetParam());
  ASSERT_EQ(out.single[0].alternatives.size(), 1u) << describe(out.single[0]);
  ASSERT_EQ(out.single[1].candidates.size(), 1u) << describe(out.single[1]) << ": seeds found the half copy, the test plants it wrong";
  ASSERT_EQ(out.single[1].sub_score, 0);
  const GappedReadAlignment& a = out.rescued[1];
  EXPECT_EQ(a.primary.position, 1180u);
  EXPECT_TRUE(a.alternatives.empty()) << describe(a);
  EXPECT_EQ(a.sub_score, 40);
  ASSERT_EQ(a.pair_hits.size(), 1u) << describe(a);
  EXPECT_EQ(describe(a.pair_hits[0]), describe(GappedHit{0, 4200, 4260, true, 0, 60, 40, {60u << 4 | 4, 60u << 4}, 4, a.pair_hits[0].md, 0}));
  ASSERT_EQ(a.candidates.size(), 2u);
  EXPECT_EQ(a.candidates[1].secondary, 0);
}

// map() and rescue_mates() give the same bytes on the other backend.
TEST_P(GappedMapperTest, CpuAndGpuGiveTheSameBytes) {
  if (!gpu_available()) GTEST_SKIP() << "no usable CUDA device";
  const Backend other = GetParam() == Backend::cpu ? Backend::gpu : Backend::cpu;
  fmindex::FmIndex other_index = fmtest::build_index(*fasta_, other, 8);
  auto other_mapper = GappedMapper::create(other_index, {});
  ASSERT_TRUE(other_mapper.ok());
  GappedMapper m = mapper();
  const std::vector<SeqRecord> reads = records(varied_reads(*reference_, 3));
  const auto a = map_all(m, reads, 64);
  const auto b = map_all(other_mapper.value(), reads, 64);
  for (std::size_t i = 0; i < reads.size(); ++i) EXPECT_EQ(describe(a[i]), describe(b[i])) << i;
  std::vector<bool> rescuable;
  const std::vector<SeqRecord> pairs = rescue_pairs(*reference_, rescuable);
  const auto ra = rescue_in_slices(m, pairs, map_all(m, pairs, pairs.size()), pairs.size());
  const auto rb = rescue_in_slices(other_mapper.value(), pairs, map_all(other_mapper.value(), pairs, pairs.size()),
                                   pairs.size());
  for (std::size_t i = 0; i < pairs.size(); ++i) EXPECT_EQ(describe(ra[i]), describe(rb[i])) << "rescue " << i;
}

INSTANTIATE_TEST_SUITE_P(Backends, GappedMapperTest, ::testing::Values(Backend::cpu, Backend::gpu),
                         [](const auto& info) { return std::string(fmtest::backend_label(info.param)); });

}  // namespace
}  // namespace wtmap::test
