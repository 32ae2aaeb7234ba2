// SMEM seeding (smem.hpp, smem_seeder.hpp) against a brute force written from the definitions:
// the occurrences of every piece of the read counted by a plain scan of the text F # rc(F), the
// maximal exact matches (MEMs) and super-maximal ones (SMEMs: contained in no other MEM) found by
// trying every piece, and bwa mem's re-seeding round (t-SMEMs over a long seed's middle, t = its
// occurrences + 1) from the same counts. Reads: random, sampled from the reference on both strands
// with substitutions, indels and Ns, across contig ends and ambiguity runs, up to 1,200 bases;
// references of every FmIndex shape and one with planted repeats; several -k; candidate rings of
// 1 to 64 slots (the seeds must not depend on it); the batch on the CPU and the GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "dna_cases.hpp"
#include "fm_queries.hpp"
#include "fm_support.hpp"
#include "wtmap/core/buffer.hpp"
#include "wtmap/fmindex/smem.hpp"
#include "wtmap/fmindex/smem_seeder.hpp"

namespace wtmap::fmtest {
namespace {

using fmindex::Seed;
using fmindex::SmemParams;

// ---- the brute force -------------------------------------------------------------------------

// The index's text without $ as a string: the contigs joined by '#', ambiguity codes as '#', then
// '#' and the reverse complement of all that.
std::string both_strands_text(const std::vector<TestContig>& contigs) {
  std::string f;
  for (const TestContig& c : contigs) {
    if (!f.empty()) f += '#';
    for (char x : normalized(c.sequence)) f += is_base(x) ? x : '#';
  }
  std::string rc = revcomp(f);
  for (char& x : rc) x = x == 'N' ? '#' : x;
  return f + '#' + rc;
}

// occurrences[b][l]: how often read[b, b + l) occurs in the text (0 if it holds a non-base).
using OccurrenceTable = std::vector<std::vector<std::uint64_t>>;

OccurrenceTable occurrence_table(const std::string& text, const std::string& read) {
  OccurrenceTable table(read.size());
  for (std::size_t b = 0; b < read.size(); ++b) {
    // How many text positions agree with read[b, ...) for exactly l bases, then at least l.
    std::vector<std::uint64_t> exactly(read.size() - b + 1, 0);
    for (std::size_t p = 0; p < text.size(); ++p) {
      std::size_t l = 0;
      while (b + l < read.size() && p + l < text.size() && is_base(read[b + l]) && text[p + l] == read[b + l]) ++l;
      ++exactly[l];
    }
    table[b].assign(exactly.size(), 0);
    std::uint64_t at_least = 0;
    for (std::size_t l = exactly.size(); l-- > 0;) table[b][l] = at_least += exactly[l];
  }
  return table;
}

struct Piece {
  std::uint32_t begin, end;
  friend bool operator<(const Piece& a, const Piece& b) { return std::tie(a.begin, a.end) < std::tie(b.begin, b.end); }
  friend bool operator==(const Piece& a, const Piece& b) { return a.begin == b.begin && a.end == b.end; }
};

std::string describe(const std::vector<Piece>& pieces) {
  std::string s;
  for (const Piece& p : pieces) s += " [" + std::to_string(p.begin) + "," + std::to_string(p.end) + ")";
  return s.empty() ? " none" : s;
}

class BruteForce {
 public:
  BruteForce(const std::string& text, const std::string& read)
      : read_(read), n_(read.size()), occ_(occurrence_table(text, read)) {}

  std::uint64_t occurrences(std::uint32_t b, std::uint32_t e) const { return occ_[b][e - b]; }

  // The t-SMEMs: pieces occurring at least t times that extend neither way and lie in no other such.
  std::vector<Piece> smems(std::uint64_t t) const {
    auto match = [&](std::size_t b, std::size_t e) { return e > b && occ_[b][e - b] >= t; };
    std::vector<Piece> mems;
    for (std::size_t b = 0; b < n_; ++b) {
      for (std::size_t e = b + 1; e <= n_; ++e) {
        if (match(b, e) && !(b > 0 && match(b - 1, e)) && !(e < n_ && match(b, e + 1))) {
          mems.push_back({static_cast<std::uint32_t>(b), static_cast<std::uint32_t>(e)});
        }
      }
    }
    std::vector<Piece> out;
    for (const Piece& m : mems) {
      bool contained = false;
      for (const Piece& o : mems) contained |= !(o == m) && o.begin <= m.begin && m.end <= o.end;
      if (!contained) out.push_back(m);
    }
    return out;
  }

  // bwa mem's seeds: first-pass SMEMs of at least min_seed_len, with reseed the t-SMEMs over the
  // middle of each long, rare one, and the LAST-like pass's pieces; sorted, each piece once.
  // `reseeded` counts the pieces only re-seeding gives.
  std::vector<Piece> seeds(const SmemParams& params, std::size_t* reseeded = nullptr) const {
    std::vector<Piece> first;
    for (const Piece& p : smems(1)) {
      if (p.end - p.begin >= params.min_seed_len) first.push_back(p);
    }
    std::vector<Piece> all = first;
    if (params.reseed) {
      const auto split_len = static_cast<std::uint32_t>(params.min_seed_len * params.split_factor + .499);
      for (const Piece& p : first) {
        const std::uint64_t occ = occurrences(p.begin, p.end);
        if (p.end - p.begin < split_len || occ > params.split_width) continue;
        const std::uint32_t middle = (p.begin + p.end) / 2;
        for (const Piece& q : smems(occ + 1)) {
          if (q.begin <= middle && middle < q.end && q.end - q.begin >= params.min_seed_len) all.push_back(q);
        }
      }
    }
    if (reseeded != nullptr) {
      std::vector<Piece> unique = all;
      std::sort(unique.begin(), unique.end());
      *reseeded = std::unique(unique.begin(), unique.end()) - unique.begin() - first.size();
    }
    for (const Piece& p : last_like(params)) all.push_back(p);
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
    return all;
  }

  // bwa's third pass as its definition reads: from x, the first piece read[x, e) of more than
  // min_seed_len bases with fewer than max_mem_intv occurrences is a seed if it occurs, and the
  // pass goes on from e; an N first, and it goes on after the N.
  std::vector<Piece> last_like(const SmemParams& params) const {
    std::vector<Piece> out;
    if (params.max_mem_intv == 0) return out;
    std::size_t x = 0;
    while (x < n_) {
      if (!base_at(x)) {
        ++x;
        continue;
      }
      // Whether read[x, e + 1) is long and rare enough.
      auto ends_seed = [&](std::size_t e) {
        return e + 1 - x > params.min_seed_len && occ_[x][e + 1 - x] < params.max_mem_intv;
      };
      std::size_t e = x + 1;
      while (e < n_ && base_at(e) && !ends_seed(e)) ++e;
      if (e == n_) break;
      if (!base_at(e)) {
        x = e + 1;
        continue;
      }
      if (occ_[x][e + 1 - x] > 0) out.push_back({static_cast<std::uint32_t>(x), static_cast<std::uint32_t>(e + 1)});
      x = e + 1;
    }
    return out;
  }

 private:
  bool base_at(std::size_t i) const { return is_base(read_[i]); }

  std::string read_;
  std::size_t n_;
  OccurrenceTable occ_;
};

// ---- reads -------------------------------------------------------------------------------------

std::string random_bases(std::mt19937& rng, std::size_t length) {
  std::string s;
  for (std::size_t i = 0; i < length; ++i) s += "ACGT"[rng() % 4];
  return s;
}

// A piece of a contig (ambiguity codes become N), on either strand, with substitutions, short
// insertions and deletions at `error_rate`, and an occasional N.
std::string sampled_read(const std::vector<TestContig>& contigs, std::mt19937& rng, std::size_t length,
                         double error_rate) {
  const std::string& s = contigs[rng() % contigs.size()].sequence;
  const std::size_t take = std::min(length, s.size());
  const std::size_t at = rng() % (s.size() - take + 1);
  std::string piece;
  for (char c : normalized(s.substr(at, take))) piece += is_base(c) ? c : 'N';
  if (rng() % 2) piece = revcomp(piece);
  std::uniform_real_distribution<double> u(0, 1);
  std::string read;
  for (char c : piece) {
    const double x = u(rng);
    if (x < error_rate / 3) {
      read += "ACGT"[rng() % 4];  // a substitution (or the same base)
    } else if (x < 2 * error_rate / 3) {
      read += c + random_bases(rng, 1 + rng() % 3);  // an insertion after c
    } else if (x < error_rate) {
      // a deletion of c
    } else if (x < error_rate + 0.002) {
      read += 'N';
    } else {
      read += c;
    }
  }
  return read;
}

// A reference with planted repeats: a 25-base motif 14 times, a 60-base piece 6 times with a
// substitution or two per copy, a 300-base piece 3 times with 1 % substitutions, a tandem run, an
// N run and a second contig -- so that long seeds of few occurrences hide more frequent pieces.
std::vector<TestContig> repeat_contigs() {
  std::mt19937 rng(77);
  const std::string motif = random_bases(rng, 25), medium = random_bases(rng, 60), lng = random_bases(rng, 300);
  auto mutated = [&](std::string s, int substitutions) {
    for (int k = 0; k < substitutions; ++k) s[rng() % s.size()] = "ACGT"[rng() % 4];
    return s;
  };
  std::string a = random_bases(rng, 500);
  for (int k = 0; k < 14; ++k) a += motif + random_bases(rng, 150 + rng() % 200);
  for (int k = 0; k < 6; ++k) a += mutated(medium, 1 + k % 2) + random_bases(rng, 200 + rng() % 200);
  for (int k = 0; k < 3; ++k) a += mutated(lng, 3) + random_bases(rng, 300);
  a += repeat("ACGTTGCA", 30) + std::string(12, 'N') + random_bases(rng, 400);
  std::string b = random_bases(rng, 300) + lng + random_bases(rng, 200) + motif + random_bases(rng, 300);
  return {{"rep1", a}, {"rep2", b}};
}

// ---- running the search ----------------------------------------------------------------------

struct Found {
  std::vector<Seed> seeds;
  fmindex::SmemResult result;
};

// One read through SmemSearch on the host, with a ring of `ring` candidates.
Found run_search(const fmindex::FmIndexView& view, const std::string& read, const SmemParams& params,
                 std::uint32_t ring = fmindex::kSmemCandidates, std::uint32_t room = 4096) {
  const std::vector<std::uint8_t> codes = pattern_codes(read);
  std::vector<fmindex::SmemCandidate> candidates(ring);
  Found f;
  f.seeds.resize(room);
  fmindex::SmemSearch search(candidates.data(), ring);
  search.start(codes.data(), static_cast<std::uint32_t>(codes.size()), params, f.seeds.data(), room, f.result);
  while (search.step(view, f.result)) {
  }
  f.seeds.resize(f.result.count);
  return f;
}

std::vector<Piece> pieces_of(const std::vector<Seed>& seeds) {
  std::vector<Piece> out;
  for (const Seed& s : seeds) out.push_back({s.begin, s.end});
  return out;
}

class SmemCheck {
 public:
  SmemCheck(const std::vector<TestContig>& contigs, const fmindex::FmIndex& index)
      : text_(both_strands_text(contigs)), index_(index) {}

  // The seeds found equal the brute force's, and each one's bi-interval is its rows and its
  // reverse complement's (backward search) and its count.
  ::testing::AssertionResult Matches(const std::string& read, const SmemParams& params, const std::vector<Seed>& seeds,
                                     const BruteForce& brute) const {
    const std::vector<Piece> want = brute.seeds(params), got = pieces_of(seeds);
    if (got != want) {
      return ::testing::AssertionFailure() << "read " << read << " -k " << params.min_seed_len << " reseed "
                                           << params.reseed << " -y " << params.max_mem_intv << ":\n  found"
                                           << describe(got) << "\n  brute force" << describe(want);
    }
    for (const Seed& s : seeds) {
      const std::string piece = read.substr(s.begin, s.length());
      const fmindex::SaInterval rows = search(piece), reverse_rows = search(revcomp(piece));
      if (s.bi.size != brute.occurrences(s.begin, s.end) || s.bi.rows().lo != rows.lo || s.bi.rows().hi != rows.hi ||
          s.bi.reverse_rows().lo != reverse_rows.lo || s.bi.reverse_rows().hi != reverse_rows.hi) {
        return ::testing::AssertionFailure() << "read " << read << " seed [" << s.begin << "," << s.end << "): size "
                                             << s.bi.size << " (count " << brute.occurrences(s.begin, s.end) << ")";
      }
    }
    return ::testing::AssertionSuccess();
  }

  // Runs the read with each -k, with the first pass alone, with re-seeding, with bwa mem's three
  // passes, and with the first and LAST-like passes at -y 3, and the default ring; returns the
  // seeds re-seeding added over all of them.
  std::size_t Check(const std::string& read, const std::vector<std::uint32_t>& ks) const {
    const BruteForce brute(text_, read);
    std::size_t reseeded = 0;
    for (std::uint32_t k : ks) {
      for (const auto& [reseed, max_mem_intv] :
           {std::pair<bool, std::uint64_t>{false, 0}, {true, 0}, {true, 20}, {false, 3}}) {
        SmemParams params;
        params.min_seed_len = k;
        params.reseed = reseed;
        params.max_mem_intv = max_mem_intv;
        const Found f = run_search(index_.view(), read, params);
        EXPECT_EQ(f.result.flags, 0) << read;
        EXPECT_TRUE(Matches(read, params, f.seeds, brute));
        std::size_t added = 0;
        brute.seeds(params, &added);
        reseeded += added;
      }
    }
    return reseeded;
  }

  const std::string& text() const { return text_; }

 private:
  fmindex::SaInterval search(const std::string& p) const {
    const std::vector<std::uint8_t> codes = pattern_codes(p);
    return index_.view().backward_search(codes.data(), static_cast<std::uint32_t>(codes.size()));
  }

  std::string text_;
  const fmindex::FmIndex& index_;
};

// ---- against the brute force, per reference shape -------------------------------------------

class SmemSeeds : public ::testing::TestWithParam<DnaShape> {
 protected:
  void SetUp() override {
    contigs_ = GetParam() == DnaShape::tandem ? repeat_contigs() : make_contigs(GetParam());
    index_.emplace(build_index(load_reference(dir_, contigs_), Backend::cpu, 4));
    check_.emplace(contigs_, *index_);
  }

  TempDir dir_;
  std::vector<TestContig> contigs_;
  std::optional<fmindex::FmIndex> index_;
  std::optional<SmemCheck> check_;
};

// The tandem shape's slot runs the planted-repeat reference instead (its tandem runs are in it).
INSTANTIATE_TEST_SUITE_P(Fm, SmemSeeds, ::testing::ValuesIn(all_dna_shapes()), [](const auto& info) {
  return info.param == DnaShape::tandem ? std::string("PlantedRepeats") : std::string(shape_name(info.param));
});

TEST_P(SmemSeeds, TheBruteForceCountsAsTheNaiveScan) {
  std::mt19937 rng(3);
  for (int k = 0; k < 20; ++k) {
    const std::string read = sampled_read(contigs_, rng, 30, 0.05);
    const BruteForce brute(check_->text(), read);
    for (std::uint32_t b = 0; b < read.size(); b += 3) {
      for (std::uint32_t e = b + 1; e <= read.size(); e += 4) {
        ASSERT_EQ(brute.occurrences(b, e), naive_hits(contigs_, read.substr(b, e - b)).size())
            << read << " " << b << " " << e;
      }
    }
  }
}

TEST_P(SmemSeeds, SampledReadsWithErrors) {
  std::mt19937 rng(11);
  for (int k = 0; k < 24; ++k) {
    const std::string read = sampled_read(contigs_, rng, 60 + rng() % 140, k % 3 == 0 ? 0.0 : 0.04);
    check_->Check(read, {1, 8, 19});
  }
}

TEST_P(SmemSeeds, RandomReads) {
  std::mt19937 rng(13);
  for (int k = 0; k < 12; ++k) check_->Check(random_bases(rng, 20 + rng() % 130), {1, 5, 8});
}

// Reads across contig ends and ambiguity runs (across_separators' joins, with flanks), and reads
// with N runs of their own.
TEST_P(SmemSeeds, AcrossSeparatorsAndNs) {
  std::mt19937 rng(17);
  for (const std::string& p : across_separators(contigs_)) {
    if (p.size() < 8 || rng() % 3 != 0) continue;
    std::string read;
    for (char c : p) read += is_base(c) ? c : 'N';
    check_->Check(read, {1, 4, 8});
  }
  for (int k = 0; k < 6; ++k) {
    std::string read = sampled_read(contigs_, rng, 120, 0.01);
    const std::size_t at = rng() % read.size();
    read.replace(at, std::min<std::size_t>(1 + rng() % 5, read.size() - at), std::string(3, 'N'));
    check_->Check(read, {1, 10, 19});
  }
}

TEST_P(SmemSeeds, EdgeReads) {
  for (const std::string read : {"", "A", "N", "NNNN", "ACGT", "NACGTN", "AN", "NA"}) check_->Check(read, {1, 2, 19});
}

// Long reads, from the random large reference's contigs of 3,000 bases and more.
TEST(SmemLongReads, ThousandBases) {
  TempDir dir;
  const std::vector<TestContig> contigs = make_contigs(DnaShape::random_large);
  const fmindex::FmIndex index = build_index(load_reference(dir, contigs), Backend::cpu, 4);
  const SmemCheck check(contigs, index);
  std::mt19937 rng(19);
  for (std::size_t length : {1000, 1200}) check.Check(sampled_read(contigs, rng, length, 0.02), {19});
}

// The seeds do not depend on the ring's capacity (a small ring runs the forward phase again).
TEST_P(SmemSeeds, AnyRingCapacity) {
  std::mt19937 rng(23);
  for (int k = 0; k < 10; ++k) {
    const std::string read = sampled_read(contigs_, rng, 40 + rng() % 100, 0.03);
    const BruteForce brute(check_->text(), read);
    for (std::uint32_t min_len : {1u, 8u}) {
      SmemParams params;
      params.min_seed_len = min_len;
      const Found wide = run_search(index_->view(), read, params);
      for (std::uint32_t ring : {1u, 2u, 3u, 7u}) {
        const Found narrow = run_search(index_->view(), read, params, ring);
        EXPECT_TRUE(check_->Matches(read, params, narrow.seeds, brute)) << "ring " << ring;
        EXPECT_GE(narrow.result.steps, wide.result.steps) << "ring " << ring;
      }
    }
  }
}

// Too little room: the flag, the room full, and every seed kept one of the brute force's.
TEST_P(SmemSeeds, SeedRoomOverflow) {
  std::mt19937 rng(29);
  int overflows = 0;
  for (int k = 0; k < 10; ++k) {
    const std::string read = sampled_read(contigs_, rng, 80, 0.05);
    SmemParams params;
    params.min_seed_len = 1;
    const std::vector<Piece> want = BruteForce(check_->text(), read).seeds(params);
    for (std::uint32_t room : {0u, 1u, 2u}) {
      const Found f = run_search(index_->view(), read, params, fmindex::kSmemCandidates, room);
      if (want.size() <= room) {
        EXPECT_EQ(f.result.flags, 0);
        EXPECT_EQ(pieces_of(f.seeds), want);
        continue;
      }
      ++overflows;
      EXPECT_EQ(f.result.flags, fmindex::kSeedsOverflow);
      EXPECT_EQ(f.result.count, room);
      for (const Piece& p : pieces_of(f.seeds)) EXPECT_TRUE(std::binary_search(want.begin(), want.end(), p)) << read;
    }
  }
  if (GetParam() != DnaShape::tiny && GetParam() != DnaShape::all_a) {
    EXPECT_GT(overflows, 0);
  }
}

// Re-seeding must actually add seeds on the planted repeats (else the comparisons above would not
// test it), with bwa mem's defaults.
TEST(SmemReseeding, FindsHiddenRepeatsWithDefaults) {
  TempDir dir;
  const std::vector<TestContig> contigs = repeat_contigs();
  const fmindex::FmIndex index = build_index(load_reference(dir, contigs), Backend::cpu, 4);
  const SmemCheck check(contigs, index);
  std::mt19937 rng(43);
  std::size_t reseeded = 0;
  const std::string& rep = contigs[0].sequence;
  for (int k = 0; k < 30; ++k) {
    // Reads from the three copies of the 300-base piece and the 60-base copies (at 500 + 14 * ~275).
    const std::size_t at = rep.size() - 3000 + rng() % 1500;
    std::string read = rep.substr(at, 150);
    if (read.find_first_not_of("ACGT") != std::string::npos) continue;
    if (rng() % 2) read = revcomp(read);
    reseeded += check.Check(read, {19});
  }
  EXPECT_GT(reseeded, 0u);
}

// ---- batches on both backends ----------------------------------------------------------------

struct Batch {
  std::vector<std::string> reads;
  std::vector<std::uint8_t> codes;
  std::vector<fmindex::SeedingRead> refs;
  std::uint64_t seeds_size = 0;
};

Batch make_batch(const std::vector<std::string>& reads) {
  Batch b;
  b.reads = reads;
  for (const std::string& r : reads) {
    const std::vector<std::uint8_t> c = pattern_codes(r);
    fmindex::SeedingRead ref;
    ref.offset = b.codes.size();
    ref.length = static_cast<std::uint32_t>(c.size());
    ref.seed_offset = b.seeds_size;
    // Room for every seed, and for the copies re-seeding finds before they are merged.
    ref.seed_capacity = 4 * static_cast<std::uint32_t>(c.size()) + 8;
    b.seeds_size += ref.seed_capacity;
    b.refs.push_back(ref);
    b.codes.insert(b.codes.end(), c.begin(), c.end());
  }
  return b;
}

struct BatchOutput {
  std::vector<std::vector<Seed>> seeds;
  std::vector<fmindex::SmemResult> results;
};

BatchOutput seed_batch(fmindex::SmemSeeder& seeder, const Batch& b, const SmemParams& params) {
  std::vector<Seed> seeds(b.seeds_size);
  BatchOutput out;
  out.results.resize(b.refs.size());
  const Status s = seeder.find(b.codes.data(), b.codes.size(), b.refs.data(), b.refs.size(), params, seeds.data(),
                               seeds.size(), out.results.data());
  if (!s.ok()) throw std::runtime_error("SmemSeeder::find: " + s.message());
  for (std::size_t i = 0; i < b.refs.size(); ++i) {
    const auto first = seeds.begin() + static_cast<std::ptrdiff_t>(b.refs[i].seed_offset);
    out.seeds.emplace_back(first, first + out.results[i].count);
  }
  return out;
}

class SmemSeederBackends : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override { WTMAP_FM_SKIP_WITHOUT(GetParam()); }
};

INSTANTIATE_TEST_SUITE_P(Fm, SmemSeederBackends, ::testing::Values(Backend::cpu, Backend::gpu),
                         [](const auto& info) { return std::string(backend_label(info.param)); });

// Every read's seeds equal the brute force's and the host search's (steps included), on either
// backend, for a batch of reads of mixed lengths.
TEST_P(SmemSeederBackends, BatchEqualsBruteForceAndHostSearch) {
  TempDir dir;
  const std::vector<TestContig> contigs = repeat_contigs();
  const fmindex::FmIndex cpu = build_index(load_reference(dir, contigs), Backend::cpu, 4);
  const fmindex::FmIndex index = build_index(load_reference(dir, contigs), GetParam(), 4);
  const SmemCheck check(contigs, cpu);
  std::mt19937 rng(47);
  std::vector<std::string> reads = {"", "N", "ACGT"};
  for (int k = 0; k < 40; ++k) reads.push_back(sampled_read(contigs, rng, 30 + rng() % 200, 0.02));
  reads.push_back(sampled_read(contigs, rng, 1000, 0.01));
  const Batch batch = make_batch(reads);
  fmindex::SmemSeeder seeder(index);
  for (std::uint32_t k : {8u, 19u}) {
    SmemParams params;
    params.min_seed_len = k;
    const BatchOutput out = seed_batch(seeder, batch, params);
    for (std::size_t i = 0; i < reads.size(); ++i) {
      const Found host = run_search(cpu.view(), reads[i], params);
      EXPECT_EQ(out.results[i].flags, 0);
      EXPECT_EQ(out.results[i].steps, host.result.steps) << reads[i];
      EXPECT_TRUE(check.Matches(reads[i], params, out.seeds[i], BruteForce(check.text(), reads[i])));
    }
  }
}

TEST_P(SmemSeederBackends, ReadsPastTheArraysAreRefused) {
  TempDir dir;
  const fmindex::FmIndex index = build_index(load_reference(dir, make_contigs(DnaShape::random_small)), GetParam(), 4);
  fmindex::SmemSeeder seeder(index);
  Batch batch = make_batch({"ACGTACGTAC", "GGGTTTAAAC", "TTTT"});
  std::vector<Seed> seeds(batch.seeds_size);
  std::vector<fmindex::SmemResult> results(batch.refs.size());
  batch.refs[1].length = 100;  // past the codes
  Status s = seeder.find(batch.codes.data(), batch.codes.size(), batch.refs.data(), batch.refs.size(), SmemParams{},
                         seeds.data(), seeds.size(), results.data());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("query 1"), std::string::npos) << s.message();
  batch = make_batch({"ACGTACGTAC", "GGGTTTAAAC", "TTTT"});
  batch.refs[2].seed_offset = batch.seeds_size;  // its room past the seeds
  s = seeder.find(batch.codes.data(), batch.codes.size(), batch.refs.data(), batch.refs.size(), SmemParams{},
                  seeds.data(), seeds.size(), results.data());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("query 2"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("seed room"), std::string::npos) << s.message();
}

// The device-resident entry: the same seeds and results as the host-memory batch; refused for an
// index on the CPU.
TEST_P(SmemSeederBackends, OnDeviceEqualsTheHostBatch) {
  TempDir dir;
  const std::vector<TestContig> contigs = repeat_contigs();
  const fmindex::FmIndex index = build_index(load_reference(dir, contigs), GetParam(), 4);
  std::mt19937 rng(53);
  std::vector<std::string> reads;
  for (int k = 0; k < 30; ++k) reads.push_back(sampled_read(contigs, rng, 150, 0.02));
  const Batch batch = make_batch(reads);
  fmindex::SmemSeeder seeder(index);
  const SmemParams params;
  if (GetParam() == Backend::cpu) {
    const Status s = seeder.find_on_device(batch.codes.data(), batch.codes.size(), batch.refs.data(),
                                           batch.refs.size(), params, nullptr, 0, nullptr);
    EXPECT_FALSE(s.ok());
    return;
  }
  const BatchOutput want = seed_batch(seeder, batch, params);
  auto device = [](std::size_t bytes, const void* from) {
    auto b = Buffer::allocate(Backend::gpu, std::max<std::size_t>(bytes, 1), "test");
    if (!b.ok()) throw std::runtime_error(b.status().message());
    if (from != nullptr && !b.value().copy_from_host(0, from, bytes).ok()) throw std::runtime_error("copy in");
    return std::move(b).value();
  };
  Buffer codes = device(batch.codes.size(), batch.codes.data());
  Buffer refs = device(batch.refs.size() * sizeof(fmindex::SeedingRead), batch.refs.data());
  Buffer seeds = device(batch.seeds_size * sizeof(Seed), nullptr);
  Buffer results = device(batch.refs.size() * sizeof(fmindex::SmemResult), nullptr);
  const Status s = seeder.find_on_device(reinterpret_cast<const std::uint8_t*>(codes.data()), batch.codes.size(),
                                         reinterpret_cast<const fmindex::SeedingRead*>(refs.data()), batch.refs.size(),
                                         params, reinterpret_cast<Seed*>(seeds.data()), batch.seeds_size,
                                         reinterpret_cast<fmindex::SmemResult*>(results.data()));
  ASSERT_TRUE(s.ok()) << s.message();
  std::vector<Seed> got_seeds(batch.seeds_size);
  std::vector<fmindex::SmemResult> got(batch.refs.size());
  ASSERT_TRUE(seeds.copy_to_host(0, got_seeds.data(), got_seeds.size() * sizeof(Seed)).ok());
  ASSERT_TRUE(results.copy_to_host(0, got.data(), got.size() * sizeof(fmindex::SmemResult)).ok());
  for (std::size_t i = 0; i < reads.size(); ++i) {
    EXPECT_EQ(got[i].count, want.results[i].count);
    EXPECT_EQ(got[i].steps, want.results[i].steps);
    const auto first = got_seeds.begin() + static_cast<std::ptrdiff_t>(batch.refs[i].seed_offset);
    EXPECT_EQ(pieces_of(std::vector<Seed>(first, first + got[i].count)), pieces_of(want.seeds[i])) << reads[i];
  }
}

}  // namespace
}  // namespace wtmap::fmtest
