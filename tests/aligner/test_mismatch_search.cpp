// The k-mismatch search against a brute-force Hamming scan: search_read and its group steps
// (search_read_in_groups) on the CPU (strata counts, every kept SA interval located and checked), and BatchAligner on the CPU and GPU
// backends (X0, X1, the reported placement, its NM and MD, XA's alternatives); for k = 0..4,
// reads of 36, 100 and 150 bases, on random, repetitive and near-duplicate references, with and
// without the index's k-mer table (which the search uses to skip steps). BatchAligner's letters
// (lower case, U, IUPAC), its reserved buffers and its batches in flight against align() alone,
// and MismatchSearchEngine (align_stages.hpp) in AlignPipeline against align() alone.
// Then mapping_quality against bwa's closed form and md_tag against hand-written tags.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cctype>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "align_oracle.hpp"
#include "fm_queries.hpp"
#include "wtmap/aligner/align_pipeline.hpp"
#include "wtmap/aligner/align_stages.hpp"
#include "wtmap/aligner/batch_aligner.hpp"
#include "wtmap/aligner/mismatch_search.hpp"
#include "wtmap/aligner/sam_writer.hpp"
#include "wtmap/core/device_memory.hpp"

namespace wtmap::altest {
namespace {

using aligner::Edits;
using aligner::Placement;
using aligner::ReadAlignment;

constexpr std::size_t kReadLengths[] = {36, 100, 150};
constexpr std::size_t kMaxReportedFailures = 10;

std::vector<Substitution> substitutions_of(const Edits& e) {
  std::vector<Substitution> subs;
  for (unsigned i = 0; i < e.count(); ++i) subs.push_back({e.position(i), "ACGT"[e.base(i)]});
  std::sort(subs.begin(), subs.end());
  return subs;
}

std::string describe(const std::vector<Substitution>& subs) {
  std::ostringstream s;
  for (const auto& [at, base] : subs) s << " " << at << base;
  return "{" + s.str() + " }";
}

// Collects the reads an implementation gets wrong; reports the first few in full.
class Mistakes {
 public:
  void add(const std::string& read, const std::string& why) {
    if (++count_ <= kMaxReportedFailures) text_ << "\n  read " << read << ": " << why;
  }
  ::testing::AssertionResult result(std::size_t reads) const {
    if (count_ == 0) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << count_ << " of " << reads << " reads disagree with the brute force"
                                         << text_.str();
  }

 private:
  std::size_t count_ = 0;
  std::ostringstream text_;
};

// A placement the implementation reports, checked against the oracle: a valid window at the
// claimed distance, with the claimed substitutions. Empty when right, else why not.
std::string check_placement(const BruteForce& oracle, const std::string& read, const Window& w, const Edits& edits) {
  std::ostringstream why;
  const unsigned d = oracle.distance(read, w.contig, w.position, w.reverse);
  if (d != edits.count()) {
    why << "placement " << w << " is at distance " << d << " but claims " << edits.count() << " mismatches";
  } else if (substitutions_of(edits) != oracle.substitutions(read, w.contig, w.position, w.reverse)) {
    why << "placement " << w << " claims substitutions " << describe(substitutions_of(edits)) << ", the reference has "
        << describe(oracle.substitutions(read, w.contig, w.position, w.reverse));
  }
  return why.str();
}

// ---- the fixture: one reference, its index and reads ---------------------------------------------

// The index of `contigs` on `backend` (suffix array sampled every 8 positions), built from a
// FASTA file through read_fasta, as wtmap index builds one.
fmindex::FmIndex index_of(const std::vector<TestContig>& contigs, Backend backend) {
  const fmtest::TempDir dir;
  return fmtest::build_index(fmtest::load_reference(dir, contigs), backend, 8);
}

struct Case {
  Backend backend;
  Shape shape;
  unsigned k;
  std::uint32_t kmer_length;  // of the index's k-mer table, which the search uses to skip exact steps
};

std::string case_name(const Case& c) {
  return std::string(backend_name(c.backend)) + "_" + shape_name(c.shape) + "_k" + std::to_string(c.k) + "_kmer" +
         std::to_string(c.kmer_length);
}

void PrintTo(const Case& c, std::ostream* os) { *os << case_name(c); }

std::vector<Case> cases(Backend backend) {
  std::vector<Case> all;
  for (Shape s : {Shape::random_with_n, Shape::tandem, Shape::near_copy, Shape::repeat_family}) {
    for (unsigned k = 0; k <= aligner::kMaxMismatches; ++k) {
      for (std::uint32_t kmer_length : {0u, 10u}) all.push_back({backend, s, k, kmer_length});
    }
  }
  return all;
}

class MismatchSearch : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    WTMAP_FM_SKIP_WITHOUT(GetParam().backend);
    contigs_ = make_reference(GetParam().shape);
    index_.emplace(index_of(contigs_, GetParam().backend));
    const Status table = index_->set_kmer_length(GetParam().kmer_length);
    ASSERT_TRUE(table.ok()) << table.message();
    oracle_.emplace(contigs_);
    for (std::size_t length : kReadLengths) {
      const auto seed = static_cast<std::uint32_t>(1000 * GetParam().k + length + 17 * static_cast<int>(GetParam().shape));
      for (const std::string& r : planted_reads(contigs_, length, GetParam().k, seed)) reads_.push_back(r);
    }
  }
  unsigned k() const { return GetParam().k; }

  std::vector<TestContig> contigs_;
  std::optional<fmindex::FmIndex> index_;
  std::optional<BruteForce> oracle_;
  std::vector<std::string> reads_;
};

// Planted reads must cover what the oracle distinguishes: mapped and unmapped reads, every stratum
// up to k, repeats (X0 > 1), suboptimal hits (X1 > 0) and reads with N. Guards the generator.
TEST(PlantedReads, CoverEveryStratumRepeatsAndN) {
  for (Shape shape : {Shape::random_with_n, Shape::tandem, Shape::near_copy, Shape::repeat_family}) {
    SCOPED_TRACE(shape_name(shape));
    const auto contigs = make_reference(shape);
    const BruteForce oracle(contigs);
    std::set<unsigned> strata;
    std::size_t unmapped = 0, repeats = 0, suboptimal = 0, with_n = 0;
    for (std::size_t length : kReadLengths) {
      for (const std::string& r : planted_reads(contigs, length, 4, static_cast<std::uint32_t>(length))) {
        const Expected e = oracle.expect(r, 4);
        if (e.mapped) strata.insert(e.mismatches); else ++unmapped;
        repeats += e.x0 > 1;
        suboptimal += e.x1 > 0;
        with_n += r.find('N') != std::string::npos;
      }
    }
    EXPECT_EQ(strata, (std::set<unsigned>{0, 1, 2, 3, 4}));
    EXPECT_GT(unmapped, 0u);
    EXPECT_GT(with_n, 0u);
    if (shape != Shape::random_with_n) {
      EXPECT_GT(repeats, 0u);
      EXPECT_GT(suboptimal, 0u);
    }
  }
}

// ---- search_read on the CPU ------------------------------------------------------------------------

// One read's SearchResult against the oracle; empty when right.
std::string check_search(const fmindex::FmIndex& index, const BruteForce& oracle, const std::string& read, unsigned k,
                         const aligner::SearchResult& r) {
  std::ostringstream why;
  const Expected e = oracle.expect(read, k);
  if ((r.flags & (aligner::kWorkCapped | aligner::kStackOverflow)) != 0) {
    why << "search incomplete (flags " << unsigned{r.flags} << ", work " << r.work << ")";
  } else if (r.mapped() != e.mapped) {
    why << (e.mapped ? "unmapped, but the best window is at " : "mapped, but no window within k; best ")
        << (e.mapped ? describe(e.reportable) : std::to_string(unsigned{r.best}));
  } else if (!e.mapped) {
    for (unsigned mm = 0; mm <= aligner::kMaxMismatches; ++mm) {
      if (r.count[mm] != 0) why << "unmapped but count[" << mm << "] = " << r.count[mm];
    }
  } else if (r.best != e.mismatches || r.best_count() != e.x0 || r.second_count() != e.x1) {
    why << "best " << unsigned{r.best} << " X0 " << r.best_count() << " X1 " << r.second_count() << "; expected best "
        << e.mismatches << " X0 " << e.x0 << " X1 " << e.x1 << ", windows " << describe(e.reportable);
  } else {
    for (unsigned mm = k + 1; mm <= aligner::kMaxMismatches; ++mm) {
      if (r.count[mm] != 0) why << "count[" << mm << "] = " << r.count[mm] << " beyond k = " << k;
    }
    // Every kept interval, located: windows at their claimed distance, in the reported strata.
    std::vector<Window> kept;
    bool kept_best = false;
    for (unsigned s = 0; s < r.num_slots; ++s) {
      const aligner::HitInterval& h = r.slots[s];
      if (h.edits.count() > k || h.edits.count() > e.mismatches + 1u) {
        why << "slot " << s << " has " << h.edits.count() << " mismatches; ";
        continue;
      }
      std::vector<std::uint64_t> positions;
      if (h.located()) {  // verified against the text: one occurrence, its position
        positions.push_back(h.lo);
      } else {
        std::vector<std::uint64_t> rows;
        for (std::uint64_t row = h.lo; row < h.hi; ++row) rows.push_back(row);
        positions.resize(rows.size());
        const Status located = index.locate(rows.data(), positions.data(), rows.size());
        if (!located.ok()) return "locate: " + located.message();
      }
      kept_best = kept_best || (h.edits.count() == e.mismatches && !positions.empty());
      for (std::uint64_t p : positions) {
        const auto hit = index.to_reference(p, read.size());
        const Window w{hit.contig, hit.position, hit.reverse, h.edits.count()};
        const std::string wrong = check_placement(oracle, read, w, h.edits);
        if (!wrong.empty()) why << wrong << "; ";
        kept.push_back(w);
      }
    }
    std::sort(kept.begin(), kept.end());
    if (!kept_best) why << "no kept interval in the best stratum; ";
    if ((r.flags & aligner::kSlotsOverflow) == 0 && kept != e.reportable) {
      why << "kept intervals hold " << describe(kept) << ", expected " << describe(e.reportable);
    }
  }
  return why.str();
}

class SearchReadCpu : public MismatchSearch {};

INSTANTIATE_TEST_SUITE_P(Aligner, SearchReadCpu, ::testing::ValuesIn(cases(Backend::cpu)),
                         [](const auto& info) { return case_name(info.param); });

TEST_P(SearchReadCpu, MatchesBruteForce) {
  aligner::SearchParams params;
  params.max_mismatches = static_cast<std::uint8_t>(k());
  Mistakes mistakes;
  for (const std::string& read : reads_) {
    const auto codes = fmtest::pattern_codes(read);
    aligner::SearchResult result;
    aligner::search_read(index_->view(), codes.data(), static_cast<std::uint32_t>(codes.size()), params, result);
    const std::string wrong = check_search(*index_, *oracle_, read, k(), result);
    if (!wrong.empty()) mistakes.add(read, wrong);
  }
  EXPECT_TRUE(mistakes.result(reads_.size()));
}

// The group steps (a warp's search of a long read, one thread playing each member here) visit
// nodes in another order, but must find the same strata, counts and windows.
TEST_P(SearchReadCpu, GroupStepsMatchBruteForce) {
  aligner::SearchParams params;
  params.max_mismatches = static_cast<std::uint8_t>(k());
  auto scratch = std::make_unique<aligner::GroupSearchScratch>();
  Mistakes mistakes;
  for (const std::string& read : reads_) {
    const auto codes = fmtest::pattern_codes(read);
    const auto length = static_cast<std::uint32_t>(codes.size());
    aligner::PackedReadScratch packed;
    aligner::SearchResult result;
    aligner::search_read_in_groups(index_->view(), codes.data(), length, packed.pack(codes.data(), length), params,
                                   result, *scratch);
    const std::string wrong = check_search(*index_, *oracle_, read, k(), result);
    if (!wrong.empty()) mistakes.add(read, wrong);
  }
  EXPECT_TRUE(mistakes.result(reads_.size()));
}

// Two searches of `read` found the same: best stratum, count of every stratum, and the same
// intervals with the same substitutions in the same slots.
void expect_same_hits(const aligner::SearchResult& a, const aligner::SearchResult& b, const std::string& read) {
  ASSERT_EQ(a.best, b.best) << read;
  for (unsigned m = 0; m <= aligner::kMaxMismatches; ++m) ASSERT_EQ(a.count[m], b.count[m]) << read;
  ASSERT_EQ(a.num_slots, b.num_slots) << read;
  for (unsigned q = 0; q < a.num_slots; ++q) {
    EXPECT_EQ(a.slots[q].lo, b.slots[q].lo) << read;
    EXPECT_EQ(a.slots[q].hi, b.slots[q].hi) << read;
    EXPECT_EQ(substitutions_of(a.slots[q].edits), substitutions_of(b.slots[q].edits)) << read;
  }
}

// The k-mer table only skips steps: with it, every read gets the same strata, counts and kept
// intervals in no more search nodes, and fewer in total (8-14 % fewer here: on a reference this
// small the intervals narrow to a row or two within 8 bases; 30-43 % on E. coli).
TEST(SearchReadCpu, KmerTableSkipsStepsNotHits) {
  for (Shape shape : {Shape::random_with_n, Shape::repeat_family}) {
    SCOPED_TRACE(shape_name(shape));
    const std::vector<TestContig> contigs = make_reference(shape);
    fmindex::FmIndex index = index_of(contigs, Backend::cpu);
    aligner::SearchParams params;
    params.max_mismatches = 2;
    const std::vector<std::string> reads = planted_reads(contigs, 100, params.max_mismatches, 99);
    std::vector<aligner::SearchResult> plain(reads.size()), tabled(reads.size());
    std::uint64_t plain_nodes = 0, tabled_nodes = 0;
    for (std::uint32_t kmer_length : {0u, 10u}) {
      ASSERT_TRUE(index.set_kmer_length(kmer_length).ok());
      std::vector<aligner::SearchResult>& results = kmer_length == 0 ? plain : tabled;
      for (std::size_t i = 0; i < reads.size(); ++i) {
        const auto codes = fmtest::pattern_codes(reads[i]);
        aligner::search_read(index.view(), codes.data(), static_cast<std::uint32_t>(codes.size()), params, results[i]);
        (kmer_length == 0 ? plain_nodes : tabled_nodes) += results[i].work;
      }
    }
    for (std::size_t i = 0; i < reads.size(); ++i) {
      ASSERT_NO_FATAL_FAILURE(expect_same_hits(plain[i], tabled[i], reads[i]));
      EXPECT_LE(tabled[i].work, plain[i].work) << reads[i];
    }
    EXPECT_LT(tabled_nodes, plain_nodes);
  }
}

// Verification (kVerifyDepth) checks one-row nodes against the text instead of stepping them: the
// same strata, counts and hits (as text positions with their substitutions) as the steps alone
// (the view without its text), in fewer nodes, with some hits found by verification.
TEST(SearchReadCpu, VerificationFindsTheStepsHitsInFewerNodes) {
  for (Shape shape : {Shape::random_with_n, Shape::repeat_family}) {
    SCOPED_TRACE(shape_name(shape));
    const std::vector<TestContig> contigs = make_reference(shape);
    fmindex::FmIndex index = index_of(contigs, Backend::cpu);
    ASSERT_TRUE(index.set_kmer_length(10).ok());
    fmindex::FmIndexView stepped = index.view();
    stepped.text = {};
    ASSERT_FALSE(index.view().text.empty());
    aligner::SearchParams params;
    params.max_mismatches = 3;
    // A result's kept hits as (text position, substitutions), sorted.
    auto hits_of = [&](const aligner::SearchResult& r) {
      std::vector<std::pair<std::uint64_t, std::vector<Substitution>>> hits;
      for (unsigned q = 0; q < r.num_slots; ++q) {
        const aligner::HitInterval& h = r.slots[q];
        for (std::uint64_t row = h.lo; row < h.lo + h.occurrences(); ++row) {
          std::uint64_t position = row;
          if (!h.located()) {
            EXPECT_TRUE(index.locate(&row, &position, 1).ok());
          }
          hits.emplace_back(position, substitutions_of(h.edits));
        }
      }
      std::sort(hits.begin(), hits.end());
      return hits;
    };
    std::uint64_t verified_nodes = 0, stepped_nodes = 0, located_slots = 0;
    for (std::size_t length : kReadLengths) {
      for (const std::string& read : planted_reads(contigs, length, params.max_mismatches, 7)) {
        const auto codes = fmtest::pattern_codes(read);
        const auto n = static_cast<std::uint32_t>(codes.size());
        aligner::SearchResult a, b;
        aligner::search_read(index.view(), codes.data(), n, params, a);
        aligner::search_read(stepped, codes.data(), n, params, b);
        ASSERT_EQ(a.best, b.best) << read;
        for (unsigned m = 0; m <= aligner::kMaxMismatches; ++m) ASSERT_EQ(a.count[m], b.count[m]) << read;
        if ((a.flags | b.flags) & aligner::kSlotsOverflow) continue;
        EXPECT_EQ(hits_of(a), hits_of(b)) << read;
        for (unsigned q = 0; q < a.num_slots; ++q) located_slots += a.slots[q].located();
        for (unsigned q = 0; q < b.num_slots; ++q) EXPECT_FALSE(b.slots[q].located()) << read;
        verified_nodes += a.work;
        stepped_nodes += b.work;
      }
    }
    EXPECT_GT(located_slots, 0u);
    EXPECT_LT(verified_nodes, stepped_nodes);
  }
}

// The work cap stops a search early and says so; what a stopped search reports is never more than
// the truth (the full search, which the brute-force tests check): a best stratum no better, and
// no stratum with more rows. A search the cap did not stop is the full search.
TEST(SearchReadCpu, WorkCapStopsHonestly) {
  for (Shape shape : {Shape::random_with_n, Shape::repeat_family}) {
    SCOPED_TRACE(shape_name(shape));
    const std::vector<TestContig> contigs = make_reference(shape);
    fmindex::FmIndex index = index_of(contigs, Backend::cpu);
    ASSERT_TRUE(index.set_kmer_length(10).ok());
    aligner::SearchParams full;
    full.max_mismatches = 3;
    std::size_t stopped = 0;
    for (const std::string& read : planted_reads(contigs, 100, full.max_mismatches, 5)) {
      const auto codes = fmtest::pattern_codes(read);
      const auto length = static_cast<std::uint32_t>(codes.size());
      aligner::SearchResult truth;
      aligner::search_read(index.view(), codes.data(), length, full, truth);
      ASSERT_EQ(truth.flags & aligner::kWorkCapped, 0) << read;
      for (std::uint32_t cap : {1u, 20u, 200u}) {
        aligner::SearchParams capped = full;
        capped.work_cap = cap;
        aligner::SearchResult r;
        aligner::search_read(index.view(), codes.data(), length, capped, r);
        if ((r.flags & aligner::kWorkCapped) == 0) {
          EXPECT_LE(r.work, cap) << read;
          EXPECT_EQ(r.best, truth.best) << read;
          for (unsigned m = 0; m <= aligner::kMaxMismatches; ++m) EXPECT_EQ(r.count[m], truth.count[m]) << read;
          continue;
        }
        ++stopped;
        EXPECT_EQ(r.work, cap + 1) << read;
        if (!r.mapped()) continue;
        ASSERT_TRUE(truth.mapped()) << read;
        EXPECT_GE(r.best, truth.best) << read << ", cap " << cap;
        for (unsigned m = 0; m <= aligner::kMaxMismatches; ++m) EXPECT_LE(r.count[m], truth.count[m]) << read;
      }
    }
    EXPECT_GT(stopped, 0u) << "no search was stopped: the capped path ran untested";
  }
}

// bwa's D (bwt_cal_width) by brute force: the greedy cut of the read into pieces, each as long
// as it occurs somewhere on either strand (std::string::find), D[i] the pieces that ended by
// position i, capped as the search caps it.
std::vector<unsigned> naive_lower_bounds(const std::vector<TestContig>& contigs, const std::string& read) {
  std::string text;
  for (const TestContig& c : contigs) text += normalized(c.sequence) + "|";
  for (const TestContig& c : contigs) text += revcomp(normalized(c.sequence)) + "|";
  std::vector<unsigned> d(read.size());
  unsigned pieces = 0;
  for (std::size_t j = 0, i = 0; i < read.size(); ++i) {
    const std::string piece = normalized(read.substr(j, i + 1 - j));
    if (piece.find_first_not_of("ACGT") != std::string::npos || text.find(piece) == std::string::npos) {
      ++pieces;
      j = i + 1;
    }
    d[i] = std::min(pieces, aligner::kMaxMismatches + 1);
  }
  return d;
}

// Only reads without an exact occurrence compute D (with k > 1): a read found exactly is
// searched in its opening pass, in about as many steps as nodes (a step per node, plus at most one
// per pass that found its root dead). The others compute bwa's D exactly, and take a piece that
// occurs once in a locate instead of a step per base (extend_piece): fewer steps than the read's
// length beyond their nodes, for some reads.
TEST(SearchReadCpu, OnlyReadsWithoutAnExactMatchComputeTheLowerBound) {
  const std::vector<TestContig> contigs = make_reference(Shape::random_with_n);
  fmindex::FmIndex index = index_of(contigs, Backend::cpu);
  ASSERT_TRUE(index.set_kmer_length(10).ok());
  aligner::SearchParams params;
  params.max_mismatches = 3;
  const std::vector<std::string> reads = planted_reads(contigs, 100, params.max_mismatches, 7);
  std::size_t exact = 0, inexact = 0, located_pieces = 0;
  for (const std::string& read : reads) {
    const auto codes = fmtest::pattern_codes(read);
    const auto length = static_cast<std::uint32_t>(codes.size());
    aligner::SearchScratch scratch;
    aligner::PackedReadScratch packed;
    aligner::ReadSearch<aligner::kHitSlots> search(scratch);
    aligner::SearchResult result;
    search.start(index.view(), codes.data(), length, packed.pack(codes.data(), length), params, result);
    std::uint64_t steps = 1;  // the last call, which returns false
    while (search.step(index.view(), result)) ++steps;
    if (search.lower_bounds_known()) {
      const std::vector<unsigned> d = naive_lower_bounds(contigs, read);
      for (unsigned i = 0; i < length; ++i) ASSERT_EQ(search.lower_bound(i), d[i]) << read << " at " << i;
    }
    if (!result.mapped() || (result.flags & aligner::kWorkCapped) != 0) continue;
    if (result.best == 0) {
      ++exact;
      EXPECT_FALSE(search.lower_bounds_known()) << read;
      EXPECT_LE(steps, std::uint64_t{result.work} + params.max_mismatches + 2) << read;
    } else {
      ++inexact;
      EXPECT_TRUE(search.lower_bounds_known()) << read;
      located_pieces += steps < std::uint64_t{result.work} + length;
    }
  }
  EXPECT_GT(exact, 0u);
  EXPECT_GT(inexact, 0u);
  EXPECT_GT(located_pieces, 0u);
}

// What a search finds depends on the k-mer length alone, not on how many of its levels the table
// holds (the CPU holds at most 13 of up to 15, the GPU what fits): every field of every result,
// work included, the same with 4 of 10 levels as with all 10.
TEST(SearchReadCpu, TheTablesLevelsDoNotChangeTheResult) {
  for (Shape shape : {Shape::random_with_n, Shape::repeat_family}) {
    const std::vector<TestContig> contigs = make_reference(shape);
    fmindex::FmIndex index = index_of(contigs, Backend::cpu);
    aligner::SearchParams params;
    const std::vector<std::string> reads = planted_reads(contigs, 100, params.max_mismatches, 11);
    std::vector<aligner::SearchResult> all_levels(reads.size()), fewer(reads.size());
    for (auto* out : {&all_levels, &fewer}) {
      ASSERT_TRUE(index.set_kmer_length(10, out == &fewer ? 4 : 10).ok());
      ASSERT_EQ(index.kmer_levels(), out == &fewer ? 4u : 10u);
      for (std::size_t r = 0; r < reads.size(); ++r) {
        const auto codes = fmtest::pattern_codes(reads[r]);
        aligner::search_read(index.view(), codes.data(), static_cast<std::uint32_t>(codes.size()), params, (*out)[r]);
      }
    }
    for (std::size_t r = 0; r < reads.size(); ++r) {
      ASSERT_NO_FATAL_FAILURE(expect_same_hits(all_levels[r], fewer[r], reads[r]));
      EXPECT_EQ(all_levels[r].flags, fewer[r].flags) << reads[r];
      EXPECT_EQ(all_levels[r].work, fewer[r].work) << reads[r];
    }
  }
}

// ---- BatchAligner on the CPU and the GPU ---------------------------------------------------------

// One read's ReadAlignment against the oracle (XA listed when X0 + X1 <= max_alternatives).
std::string check_alignment(const BruteForce& oracle, const std::string& read, unsigned k, const ReadAlignment& a,
                            unsigned max_alternatives) {
  std::ostringstream why;
  const Expected e = oracle.expect(read, k);
  auto window_of = [](const Placement& p, unsigned d) { return Window{p.contig, p.position, p.reverse, d}; };
  if ((a.flags & (aligner::kWorkCapped | aligner::kStackOverflow)) != 0) {
    why << "search incomplete (flags " << unsigned{a.flags} << ")";
  } else if (a.mapped != e.mapped) {
    why << (e.mapped ? "unmapped, but windows within k: " + describe(e.reportable)
                     : "mapped at " + std::to_string(a.primary.contig) + ":" + std::to_string(a.primary.position) +
                           " with no window within k");
  } else if (!e.mapped) {
    if (a.best_count != 0 || a.second_count != 0 || !a.alternatives.empty()) why << "unmapped read with hits";
  } else if (a.mismatches != e.mismatches || a.best_count != e.x0 || a.second_count != e.x1) {
    why << "mismatches " << unsigned{a.mismatches} << " X0 " << a.best_count << " X1 " << a.second_count
        << "; expected " << e.mismatches << " X0 " << e.x0 << " X1 " << e.x1 << ", windows " << describe(e.reportable);
  } else {
    const Window primary = window_of(a.primary, a.mismatches);
    if (!e.is_best(primary)) why << "reported " << primary << " is no best window of " << describe(e.reportable) << "; ";
    if (a.primary.edits.count() != a.mismatches) why << "NM " << unsigned{a.mismatches} << " but " << a.primary.edits.count() << " edits; ";
    why << check_placement(oracle, read, primary, a.primary.edits);
    const std::string md = aligner::md_tag(a.primary, read.size());
    const std::string expected_md = oracle.md(read, primary.contig, primary.position, primary.reverse);
    if (md != expected_md) why << "MD " << md << ", expected " << expected_md << "; ";
    if (e.x0 + e.x1 <= max_alternatives) {  // XA: every other reportable window
      std::vector<Window> listed = {primary};
      for (const Placement& p : a.alternatives) {
        const Window w = window_of(p, p.edits.count());
        const std::string wrong = check_placement(oracle, read, w, p.edits);
        if (!wrong.empty()) why << "alternative: " << wrong << "; ";
        listed.push_back(w);
      }
      std::sort(listed.begin(), listed.end());
      if (listed != e.reportable) why << "primary and XA list " << describe(listed) << ", expected " << describe(e.reportable);
    } else if (!a.alternatives.empty()) {
      why << a.alternatives.size() << " alternatives listed although X0 + X1 > " << max_alternatives;
    }
  }
  return why.str();
}

class BatchAlignerBackends : public MismatchSearch {};

std::vector<Case> both_backends() {
  std::vector<Case> all = cases(Backend::cpu);
  for (const Case& c : cases(Backend::gpu)) all.push_back(c);
  return all;
}

INSTANTIATE_TEST_SUITE_P(Aligner, BatchAlignerBackends, ::testing::ValuesIn(both_backends()),
                         [](const auto& info) { return case_name(info.param); });

// With -N 3 (the default) and the largest -N, where XA must list every hit of the two strata;
// also with a one-thread slice of 8 nodes, so that many reads are cut short and searched again
// by group steps (a block of kGroupMembers threads on the GPU, one thread playing the members on
// the CPU). The last two configurations go through the pipeline's halves, search() and
// finish(), with two batches in flight: the reads cut in two halves, both searched before either
// is finished.
TEST_P(BatchAlignerBackends, MatchesBruteForce) {
  std::vector<aligner::SeqRecord> records;
  for (const std::string& r : reads_) records.push_back({"read" + std::to_string(records.size()), r, ""});
  struct Config {
    unsigned max_alternatives;
    bool sliced, split;
  };
  const Config configs[] = {{3u, false, false}, {aligner::kMaxAlternatives, false, true}, {aligner::kMaxAlternatives, true, true}};
  for (const auto& [max_alternatives, sliced, split] : configs) {
    SCOPED_TRACE("-N " + std::to_string(max_alternatives) + (sliced ? ", one-thread slice of 8 nodes" : "") +
                 (split ? ", two batches through search() and finish()" : ""));
    aligner::AlignOptions options;
    options.search.max_mismatches = static_cast<std::uint8_t>(k());
    options.max_alternatives = max_alternatives;
    if (sliced) options.thread_work_slice = 8;
    aligner::BatchAligner batch(*index_, options);
    std::vector<ReadAlignment> out;
    if (split) {
      const auto middle = records.begin() + static_cast<std::ptrdiff_t>(records.size() / 2);
      const std::vector<aligner::SeqRecord> first(records.begin(), middle), second(middle, records.end());
      aligner::SearchedBatch searched_first, searched_second;
      std::vector<ReadAlignment> out_second;
      for (const Status& s : {batch.search(first, searched_first), batch.search(second, searched_second),
                              batch.finish(first, searched_first, out), batch.finish(second, searched_second, out_second)}) {
        ASSERT_TRUE(s.ok()) << s.message();
      }
      out.insert(out.end(), out_second.begin(), out_second.end());
      const std::vector<aligner::SeqRecord> one(records.begin(), records.begin() + 1);
      EXPECT_FALSE(batch.finish(one, searched_second, out_second).ok()) << "reads finished with another batch's search";
    } else {
      const Status aligned = batch.align(records, out);
      ASSERT_TRUE(aligned.ok()) << aligned.message();
    }
    if (sliced) {
      EXPECT_GT(batch.stage_seconds().long_reads, 0u) << "no read was cut short: the group search ran untested";
    }
    ASSERT_EQ(out.size(), records.size());
    Mistakes mistakes;
    for (std::size_t i = 0; i < records.size(); ++i) {
      const std::string wrong = check_alignment(*oracle_, reads_[i], k(), out[i], max_alternatives);
      if (!wrong.empty()) mistakes.add(reads_[i], wrong);
    }
    EXPECT_TRUE(mistakes.result(records.size()));
  }
}

// The fields of two alignment runs of the same reads that the search and the choice decide.
void expect_same_alignments(const std::vector<ReadAlignment>& got, const std::vector<ReadAlignment>& expected,
                            const std::vector<aligner::SeqRecord>& records) {
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].mapped, expected[i].mapped) << records[i].name;
    EXPECT_EQ(got[i].primary.contig, expected[i].primary.contig) << records[i].name;
    EXPECT_EQ(got[i].primary.position, expected[i].primary.position) << records[i].name;
    EXPECT_EQ(got[i].primary.reverse, expected[i].primary.reverse) << records[i].name;
    EXPECT_EQ(got[i].mismatches, expected[i].mismatches) << records[i].name;
    EXPECT_EQ(got[i].best_count, expected[i].best_count) << records[i].name;
    EXPECT_EQ(got[i].second_count, expected[i].second_count) << records[i].name;
    EXPECT_EQ(got[i].alternatives.size(), expected[i].alternatives.size()) << records[i].name;
  }
}

// The table length by size: the smallest k with 4^k >= 4 rows, at most 15, at the edges of each.
TEST(SearchKmerLength, SmallestKWithFourTimesTheRowsAtMost15) {
  EXPECT_EQ(aligner::search_kmer_length(0), 1u);
  EXPECT_EQ(aligner::search_kmer_length(1), 1u);
  for (std::uint32_t k = 2; k <= 15; ++k) {
    const std::uint64_t most = std::uint64_t{1} << (2 * (k - 1));  // 4 * most = 4^k
    EXPECT_EQ(aligner::search_kmer_length(most), k) << most;
    EXPECT_EQ(aligner::search_kmer_length(most + 1), k < 15 ? k + 1 : 15u) << most + 1;
  }
  EXPECT_EQ(aligner::search_kmer_length(9'800'000), 13u);        // E. coli, both strands
  EXPECT_EQ(aligner::search_kmer_length(2'000'000'000), 15u);    // 1 Gbp
  EXPECT_EQ(aligner::search_kmer_length(std::uint64_t{1} << 40), 15u);
}

// The one-thread slice by size: 1024 below 4^15 rows, where a random 15-mer is absent more often
// than not, 2048 from there.
TEST(DefaultThreadWorkSlice, TwiceAsLongOnceARandom15merOccurs) {
  const std::uint64_t rows_15mer = std::uint64_t{1} << 30;  // 4^15
  EXPECT_EQ(aligner::default_thread_work_slice(0), 1024u);
  EXPECT_EQ(aligner::default_thread_work_slice(9'800'000), 1024u);  // E. coli, both strands
  EXPECT_EQ(aligner::default_thread_work_slice(rows_15mer - 1), 1024u);
  EXPECT_EQ(aligner::default_thread_work_slice(rows_15mer), 2048u);
  EXPECT_EQ(aligner::default_thread_work_slice(2'000'000'000), 2048u);  // 1 Gbp
  EXPECT_EQ(aligner::default_thread_work_slice(std::uint64_t{1} << 40), 2048u);
}

// BatchAligner on one backend, on its own small reference.
class BatchAlignerOn : public ::testing::TestWithParam<Backend> {};

INSTANTIATE_TEST_SUITE_P(Aligner, BatchAlignerOn, ::testing::Values(Backend::cpu, Backend::gpu),
                         [](const auto& info) { return std::string(backend_name(info.param)); });

// Lower case and U are the bases they name; N and the other IUPAC codes are mismatches. On the
// GPU the letters are encoded there; also with a one-thread work slice of one node, so that the
// read is searched again by group steps.
TEST_P(BatchAlignerOn, LowerCaseAndUAreBasesOtherLettersMismatches) {
  WTMAP_FM_SKIP_WITHOUT(GetParam());
  const auto contigs = make_reference(Shape::near_copy);
  const auto index = index_of(contigs, GetParam());
  const BruteForce oracle(contigs);
  std::string read = normalized(contigs[3].sequence.substr(20, 100));
  for (std::size_t i = 30; i < 40; ++i) read[i] = static_cast<char>(std::tolower(static_cast<unsigned char>(read[i])));
  const std::size_t t = read.find('T', 60);
  ASSERT_NE(t, std::string::npos);
  read[t] = 'u';
  read[10] = 'R';
  read[50] = 'n';
  for (const std::uint32_t slice : {8192u, 1u}) {
    SCOPED_TRACE("one-thread work slice " + std::to_string(slice));
    aligner::AlignOptions options;
    options.thread_work_slice = slice;
    aligner::BatchAligner batch(index, options);
    std::vector<ReadAlignment> out;
    const auto began = std::chrono::steady_clock::now();
    ASSERT_TRUE(batch.align({{"letters", read, ""}}, out).ok());
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    // The device's part of the batch, timed on the GPU, lies within the call; none on the CPU.
    if (GetParam() == Backend::gpu) {
      EXPECT_GT(batch.stage_seconds().device, 0.0);
      EXPECT_LE(batch.stage_seconds().device, wall);
    } else {
      EXPECT_EQ(batch.stage_seconds().device, 0.0);
    }
    ASSERT_EQ(out.size(), 1u);
    ASSERT_TRUE(out[0].mapped);
    EXPECT_EQ(out[0].mismatches, 2u);
    EXPECT_EQ(out[0].primary.contig, 3u);
    EXPECT_EQ(out[0].primary.position, 20u);
    EXPECT_EQ(check_alignment(oracle, read, 4, out[0], options.max_alternatives), "");
    EXPECT_EQ(batch.stage_seconds().long_reads, slice == 1 ? 1u : 0u);
    EXPECT_EQ(batch.options().thread_work_slice, slice);
  }
  // Left at 0, the slice is the index's default.
  const aligner::BatchAligner by_default(index, aligner::AlignOptions{});
  EXPECT_EQ(by_default.options().thread_work_slice, aligner::default_thread_work_slice(index.view().rows));
}

// A reserved SearchedBatch takes a search of that many reads and bases without reallocating any of
// its per-read buffers, and gives the same alignments as a fresh one.
TEST_P(BatchAlignerOn, ReservedBatchIsSearchedInPlace) {
  WTMAP_FM_SKIP_WITHOUT(GetParam());
  const auto contigs = make_reference(Shape::repeat_family);
  const auto index = index_of(contigs, GetParam());
  std::vector<aligner::SeqRecord> records;
  std::size_t bases = 0;
  for (const std::string& r : planted_reads(contigs, 100, 2, 99)) {
    records.push_back({"r" + std::to_string(records.size()), r, ""});
    bases += r.size();
  }
  ASSERT_GT(records.size(), 10u);
  aligner::SearchedBatch reserved;
  reserved.reserve(records.size(), bases, GetParam());
  EXPECT_TRUE(reserved.codes.empty() && reserved.patterns.empty() && reserved.results.empty() && reserved.choices.empty());
  // (A GPU index keeps the results on the device: none reserved, none made.)
  const void* buffers[] = {reserved.codes.data(), reserved.patterns.data(), reserved.results.data(), reserved.choices.data()};
  aligner::BatchAligner batch(index, aligner::AlignOptions{});
  std::vector<ReadAlignment> got, expected;
  ASSERT_TRUE(batch.search(records, reserved).ok());
  EXPECT_EQ(reserved.codes.data(), buffers[0]);
  EXPECT_EQ(reserved.patterns.data(), buffers[1]);
  EXPECT_EQ(reserved.results.data(), buffers[2]);
  EXPECT_EQ(reserved.choices.data(), buffers[3]);
  ASSERT_TRUE(batch.finish(records, reserved, got).ok());
  ASSERT_TRUE(batch.align(records, expected).ok());
  expect_same_alignments(got, expected, records);
}

// On a GPU index search() returns with the batch in flight, and its results come back in finish()
// or in the second search() after it. Three batches searched before any is finished (the third
// search collects the first), finished out of order, and a batch searched twice before it is
// finished: each gives the alignments a fresh BatchAligner's align() gives, on either backend.
TEST_P(BatchAlignerOn, BatchesInFlightFinishInAnyOrder) {
  WTMAP_FM_SKIP_WITHOUT(GetParam());
  const auto contigs = make_reference(Shape::repeat_family);
  const auto index = index_of(contigs, GetParam());
  std::vector<aligner::SeqRecord> parts[3];
  std::size_t count = 0;
  for (const std::string& r : planted_reads(contigs, 100, 2, 7)) {
    parts[count % 3].push_back({"r" + std::to_string(count), r, ""});
    ++count;
  }
  std::vector<ReadAlignment> expected[3];
  for (int p = 0; p < 3; ++p) {
    aligner::BatchAligner alone(index, aligner::AlignOptions{});
    ASSERT_TRUE(alone.align(parts[p], expected[p]).ok());
  }
  aligner::BatchAligner batch(index, aligner::AlignOptions{});
  aligner::SearchedBatch searched[3];
  for (int p = 0; p < 3; ++p) ASSERT_TRUE(batch.search(parts[p], searched[p]).ok()) << "part " << p;
  for (int p : {1, 0, 2}) {
    SCOPED_TRACE("part " + std::to_string(p));
    std::vector<ReadAlignment> got;
    ASSERT_TRUE(batch.finish(parts[p], searched[p], got).ok());
    expect_same_alignments(got, expected[p], parts[p]);
  }
  SCOPED_TRACE("part 0 searched twice");
  ASSERT_TRUE(batch.search(parts[0], searched[0]).ok());
  ASSERT_TRUE(batch.search(parts[0], searched[0]).ok());
  std::vector<ReadAlignment> got;
  ASSERT_TRUE(batch.finish(parts[0], searched[0], got).ok());
  expect_same_alignments(got, expected[0], parts[0]);
}

// release_device_memory (after a batch too large for the GPU) with a batch in flight: its results
// survive, and every device byte the aligner took for batches goes back. Searched anew, in two
// parts of the read array as SplittingSearchEngine runs them, the reads get align()'s alignments.
TEST_P(BatchAlignerOn, ReleasedDeviceMemoryComesBackAndPartsGiveTheBatchsAlignments) {
  WTMAP_FM_SKIP_WITHOUT(GetParam());
  const auto contigs = make_reference(Shape::near_copy);
  const auto index = index_of(contigs, GetParam());
  std::vector<aligner::SeqRecord> records;
  for (const std::string& r : planted_reads(contigs, 100, 2, 13)) records.push_back({"r" + std::to_string(records.size()), r, ""});
  std::vector<ReadAlignment> expected;
  {
    aligner::BatchAligner alone(index, aligner::AlignOptions{});
    ASSERT_TRUE(alone.align(records, expected).ok());
  }
  const std::size_t before_batches = device_memory_held();
  aligner::BatchAligner batch(index, aligner::AlignOptions{});
  aligner::SearchedBatch searched;
  ASSERT_TRUE(batch.search(records, searched).ok());
  if (GetParam() == Backend::gpu) {
    EXPECT_GT(device_memory_held(), before_batches);
  }
  ASSERT_TRUE(batch.release_device_memory().ok());
  EXPECT_EQ(device_memory_held(), before_batches);
  std::vector<ReadAlignment> got;
  ASSERT_TRUE(batch.finish(records, searched, got).ok());
  expect_same_alignments(got, expected, records);
  const std::size_t half = records.size() / 2;
  std::vector<ReadAlignment> first, second;
  ASSERT_TRUE(batch.search(records.data(), half, searched).ok());
  ASSERT_TRUE(batch.finish(records.data(), half, searched, first).ok());
  ASSERT_TRUE(batch.search(records.data() + half, records.size() - half, searched).ok());
  ASSERT_TRUE(batch.finish(records.data() + half, records.size() - half, searched, second).ok());
  first.insert(first.end(), second.begin(), second.end());
  expect_same_alignments(first, expected, records);
}

// MismatchSearchEngine, the pipeline's real engine: batches of 7 reads through AlignPipeline,
// each batch's SearchedBatch held by the engine between search() and finish() (on a GPU index two
// launch slots in flight), with and without its pool made ahead, give the alignments that one
// align() of all the reads gives; the release runs once, after the last batch.
TEST_P(BatchAlignerOn, PipelineEngineGivesAlignsResults) {
  WTMAP_FM_SKIP_WITHOUT(GetParam());
  const auto contigs = make_reference(Shape::repeat_family);
  const auto index = index_of(contigs, GetParam());
  std::vector<aligner::SeqRecord> records;
  for (const std::string& r : planted_reads(contigs, 100, 2, 11)) records.push_back({"r" + std::to_string(records.size()), r, ""});
  ASSERT_GT(records.size(), 3u * 7);
  std::vector<ReadAlignment> expected;
  aligner::BatchAligner alone(index, aligner::AlignOptions{});
  ASSERT_TRUE(alone.align(records, expected).ok());

  struct VectorSource : aligner::ReadSource {
    explicit VectorSource(const std::vector<aligner::SeqRecord>& r) : records(r) {}
    Result<bool> fill(aligner::ReadBatch& batch, std::size_t most) override {
      for (std::size_t r = 0; r < most && next < records.size(); ++r, ++next) {
        batch.next_record() = records[next];
        batch.keep_record();
      }
      return next < records.size();
    }
    const std::vector<aligner::SeqRecord>& records;
    std::size_t next = 0;
  };
  struct CollectingSink : aligner::AlignmentSink {
    Status prepare(std::size_t) override { return {}; }
    Status write(aligner::ReadBatch& batch) override {
      got.insert(got.end(), batch.alignments.begin(), batch.alignments.end());
      return {};
    }
    Status finish() override { return {}; }
    std::vector<ReadAlignment> got;
  };
  for (const bool warm_up : {false, true}) {
    SCOPED_TRACE(warm_up ? "pool made ahead" : "pool made on demand");
    VectorSource source(records);
    CollectingSink sink;
    aligner::MismatchSearchEngine engine(7, GetParam(), warm_up);
    engine.start(index, aligner::AlignOptions{});
    aligner::PipelineOptions options;
    options.batch_size = 7;
    aligner::AlignPipeline pipeline(options);
    pipeline.start_reading(source);
    std::atomic<int> releases{0};
    ASSERT_TRUE(pipeline.run(&engine, sink, [&] {
      engine.release();
      ++releases;
    }).ok());
    pipeline.wait_for_release();
    EXPECT_EQ(releases.load(), 1);
    expect_same_alignments(sink.got, expected, records);
  }
}

// ---- mapping_quality and md_tag ---------------------------------------------------------------------

ReadAlignment alignment(std::uint64_t x0, std::uint64_t x1, unsigned mismatches) {
  ReadAlignment a;
  a.mapped = true;
  a.best_count = x0;
  a.second_count = x1;
  a.mismatches = static_cast<std::uint8_t>(mismatches);
  return a;
}

TEST(MappingQuality, MatchesBwaClosedForm) {
  for (unsigned k = 0; k <= aligner::kMaxMismatches; ++k) {
    for (unsigned mm = 0; mm <= k; ++mm) {
      for (std::uint64_t x0 : {1, 2, 3, 10, 1000}) {
        for (std::uint64_t x1 : {0, 1, 2, 3, 5, 10, 100, 177, 178, 200, 254, 255, 256, 100000}) {
          if (mm == k && x1 > 0) continue;  // the stratum k + 1 is never searched
          EXPECT_EQ(aligner::mapping_quality(alignment(x0, x1, mm), k), expected_mapq(true, x0, x1, mm, k))
              << "k " << k << " mismatches " << mm << " X0 " << x0 << " X1 " << x1;
        }
      }
    }
  }
}

TEST(MappingQuality, HandComputedValues) {
  EXPECT_EQ(aligner::mapping_quality(ReadAlignment{}, 2), 0);       // unmapped
  EXPECT_EQ(aligner::mapping_quality(alignment(1, 0, 0), 2), 37);   // unique
  EXPECT_EQ(aligner::mapping_quality(alignment(1, 0, 1), 2), 37);
  EXPECT_EQ(aligner::mapping_quality(alignment(1, 0, 2), 2), 25);   // unique with all k mismatches
  EXPECT_EQ(aligner::mapping_quality(alignment(1, 0, 0), 0), 25);   // k = 0: an exact hit uses all of them
  EXPECT_EQ(aligner::mapping_quality(alignment(2, 0, 0), 2), 0);    // repeat
  EXPECT_EQ(aligner::mapping_quality(alignment(2, 7, 1), 2), 0);
  EXPECT_EQ(aligner::mapping_quality(alignment(1, 1, 0), 2), 23);   // 23 - round(4.343 ln 1)
  EXPECT_EQ(aligner::mapping_quality(alignment(1, 2, 0), 2), 20);   // 4.343 ln 2 = 3.01
  EXPECT_EQ(aligner::mapping_quality(alignment(1, 3, 1), 2), 18);   // 4.343 ln 3 = 4.77
  EXPECT_EQ(aligner::mapping_quality(alignment(1, 10, 0), 4), 13);  // 4.343 ln 10 = 10.00
  EXPECT_EQ(aligner::mapping_quality(alignment(1, 100, 0), 4), 3);  // 4.343 ln 100 = 20.00
  EXPECT_EQ(aligner::mapping_quality(alignment(1, 177, 0), 4), 1);  // 22.48 rounds to 22
  EXPECT_EQ(aligner::mapping_quality(alignment(1, 178, 0), 4), 0);  // 22.504 rounds to 23
  EXPECT_EQ(aligner::mapping_quality(alignment(1, 5000, 0), 4), 0);
}

Placement placement(bool reverse, std::vector<std::pair<unsigned, unsigned>> edits) {
  Placement p;
  p.reverse = reverse;
  for (const auto& [at, base] : edits) {
    p.edits.push(at, base);
  }
  return p;
}

TEST(MdTag, ForwardPlacements) {
  EXPECT_EQ(aligner::md_tag(placement(false, {}), 36), "36");
  EXPECT_EQ(aligner::md_tag(placement(false, {{3, 2}}), 10), "3G6");
  EXPECT_EQ(aligner::md_tag(placement(false, {{0, 0}}), 10), "0A9");
  EXPECT_EQ(aligner::md_tag(placement(false, {{9, 3}}), 10), "9T0");
  EXPECT_EQ(aligner::md_tag(placement(false, {{7, 1}, {0, 3}}), 10), "0T6C2");      // edits in search order
  EXPECT_EQ(aligner::md_tag(placement(false, {{5, 1}, {4, 0}, {2, 3}, {3, 2}}), 12), "2T0G0A0C6");
}

TEST(MdTag, ReversePlacementsAreInReferenceOrientation) {
  // Read position i sits at SAM position length - 1 - i; the reference base is the complement.
  EXPECT_EQ(aligner::md_tag(placement(true, {}), 100), "100");
  EXPECT_EQ(aligner::md_tag(placement(true, {{0, 0}}), 10), "9T0");
  EXPECT_EQ(aligner::md_tag(placement(true, {{9, 2}}), 10), "0C9");
  EXPECT_EQ(aligner::md_tag(placement(true, {{2, 1}, {6, 3}}), 10), "3A3G2");
  EXPECT_EQ(aligner::md_tag(placement(true, {{4, 0}, {5, 1}}), 10), "4G0T4");
}

}  // namespace
}  // namespace wtmap::altest
