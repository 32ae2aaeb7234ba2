// Crafted index files (issue 23, item 3): an index is untrusted input even when its checksums
// hold, since a crafted or carelessly rewritten file carries valid CRCs. Each structural
// invariant the loaders check gets a targeted edit (index_file_editor.hpp recomputes the CRCs)
// that must make the load fail with corrupt_data and a message naming the invariant; the locate
// walk is bounded even where a check could not see a fault; and a seeded campaign of random
// edits with valid checksums must, for every edit, fail to load or answer every count and
// locate of a fixed pattern set in range -- never crash, never hang (a watchdog ends a hung run).
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>

#include "fm_queries.hpp"
#include "fm_support.hpp"
#include "general_support.hpp"
#include "index_file_editor.hpp"
#include "wtmap/core/bit_vector.hpp"
#include "wtmap/fmindex/fm_index.hpp"
#include "wtmap/fmindex/general_fm_index.hpp"
#include "wtmap/fmindex/symbol_reference.hpp"

namespace wtmap::fmtest {
namespace {

using fmindex::FmIndex;
using fmindex::GeneralFmIndex;
using fmindex::SampledSuffixArrayView;
namespace layout = index_layout;
using Editor = IndexFileEditor;

// Ends the test program (exit 124, like timeout(1)) unless destroyed within `seconds`: a hang
// must fail the suite, and a thread stuck in a loop cannot be stopped any other way.
class Watchdog {
 public:
  Watchdog(double seconds, std::string what)
      : thread_([this, seconds, what = std::move(what)] {
          std::unique_lock<std::mutex> lock(mutex_);
          if (!done_cv_.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return done_; })) {
            std::fprintf(stderr, "watchdog: %s did not finish within %.0f s (a hang)\n", what.c_str(), seconds);
            std::fflush(stderr);
            std::_Exit(124);
          }
        }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    done_cv_.notify_one();
    thread_.join();
  }

 private:
  std::mutex mutex_;
  std::condition_variable done_cv_;
  bool done_ = false;
  std::thread thread_;
};

// ---- the two good indexes every edit starts from -------------------------------------------------

struct GoodIndex {
  std::string bytes;                  // the index file
  std::vector<TestContig> contigs;    // what it indexes
  std::vector<std::string> patterns;  // the fixed pattern set the campaign asks for
};

// DNA: five contigs with N runs (so several fragments and special rows), s = 4.
const GoodIndex& dna_index() {
  static const GoodIndex good = [] {
    TempDir dir;
    GoodIndex g;
    RandomReferenceSpec spec;
    spec.seed = 23;
    spec.contigs = 5;
    spec.min_length = 100;
    spec.max_length = 500;
    spec.n_run_rate = 0.02;
    g.contigs = random_reference(spec);
    const FmIndex index = build_index(load_reference(dir, g.contigs), Backend::cpu, 4);
    if (!index.save(dir.file("dna.wtmap")).ok()) throw std::runtime_error("saving the DNA index failed");
    g.bytes = read_file(dir.file("dna.wtmap"));
    std::mt19937 rng(7);
    for (int k = 0; k < 40; ++k) {
      const TestContig& c = g.contigs[rng() % g.contigs.size()];
      const std::size_t length = 1 + rng() % 8, at = rng() % (c.sequence.size() - length);
      g.patterns.push_back(normalized(c.sequence.substr(at, length)));
    }
    return g;
  }();
  return good;
}

// Protein: six records, s = 3.
const GoodIndex& protein_index() {
  static const GoodIndex good = [] {
    TempDir dir;
    GoodIndex g;
    g.contigs = random_records(29, 6, 40, 200, protein_letters(), SymbolKind::protein);
    write_file(dir.file("protein.fa"), symbol_fasta_text(g.contigs, 60));
    auto ref = fmindex::read_symbol_fasta(dir.file("protein.fa"), fmindex::Alphabet::protein);
    if (!ref.ok()) throw std::runtime_error("read_symbol_fasta: " + ref.status().message());
    fmindex::FmIndexOptions options;
    options.backend = Backend::cpu;
    options.sample_rate = 3;
    auto index = GeneralFmIndex::build(*ref, options);
    if (!index.ok() || !index->save(dir.file("protein.wtmap")).ok()) throw std::runtime_error("the protein index failed");
    g.bytes = read_file(dir.file("protein.wtmap"));
    std::mt19937 rng(11);
    for (int k = 0; k < 40; ++k) {
      const TestContig& c = g.contigs[rng() % g.contigs.size()];
      const std::size_t length = 1 + rng() % 5, at = rng() % (c.sequence.size() - length);
      g.patterns.push_back(normalized_symbols(c.sequence.substr(at, length), SymbolKind::protein));
    }
    return g;
  }();
  return good;
}

// ---- asking a loaded index, in range or with a clear error ---------------------------------------

// Searches `patterns`, then locates up to 16 rows of each interval and every row of the index:
// a locate error is allowed only as corrupt_data (a fault the loader could not see), and every
// interval and position must lie inside the rows. Returns what went wrong, empty if nothing.
template <class Index, class Encode>
std::string ask_in_range(const Index& index, const std::vector<std::string>& patterns, Encode encode) {
  const std::uint64_t n = index.view().rows;
  std::vector<fmindex::SaInterval> intervals;
  try {  // a search has no error to give on a loaded index: it walks nothing
    intervals = search_intervals(index, patterns, encode);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  std::vector<std::uint64_t> rows;
  for (const fmindex::SaInterval& iv : intervals) {
    if (iv.lo > iv.hi || iv.hi > n) return "an interval past the rows";
    for (std::uint64_t r = iv.lo; r < iv.hi && r < iv.lo + 16; ++r) rows.push_back(r);
  }
  for (std::uint64_t r = 0; r < n; ++r) rows.push_back(r);
  std::vector<std::uint64_t> positions(rows.size());
  const Status located = index.locate(rows.data(), positions.data(), rows.size());
  if (!located.ok()) return located.code() == StatusCode::corrupt_data ? "" : "locate: " + located.message();
  for (const std::uint64_t p : positions) {
    if (p >= n) return "a position past the text: " + std::to_string(p);
  }
  return "";
}

std::vector<std::uint8_t> protein_codes(const GeneralFmIndex& index, const std::string& p) {
  std::vector<std::uint8_t> c;
  for (const char ch : p) c.push_back(index.symbols().codes()[static_cast<unsigned char>(ch)]);
  return c;
}

// Loads `bytes` as a DNA (else protein) index on `backend`: the load's status, and if it
// loaded, what ask_in_range found (a watchdog around both).
struct Outcome {
  Status load;
  std::string asked;
};
Outcome load_and_ask(const std::string& bytes, bool dna, Backend backend) {
  TempDir dir;
  const std::string path = dir.file("crafted.wtmap");
  write_file(path, bytes);
  Watchdog watchdog(60, "loading and asking a crafted index");
  Outcome out;
  if (dna) {
    auto index = FmIndex::load(path, backend);
    out.load = index.status();
    if (index.ok()) out.asked = ask_in_range(*index, dna_index().patterns, [](const std::string& p) { return pattern_codes(p); });
  } else {
    auto index = GeneralFmIndex::load(path, backend);
    out.load = index.status();
    if (index.ok()) {
      const GeneralFmIndex& i = *index;
      out.asked = ask_in_range(i, protein_index().patterns, [&](const std::string& p) { return protein_codes(i, p); });
    }
  }
  return out;
}

// ---- targeted edits ------------------------------------------------------------------------------

std::uint64_t rows_of(Editor& e) { return Editor::get<std::uint64_t>(e.payload("BWTW"), layout::kTreeSize); }

void add_to_u64(std::string& s, std::size_t at, std::int64_t delta) {
  Editor::set<std::uint64_t>(s, at, Editor::get<std::uint64_t>(s, at) + static_cast<std::uint64_t>(delta));
}
void add_to_u16(std::string& s, std::size_t at, int delta) {
  Editor::set<std::uint16_t>(s, at, static_cast<std::uint16_t>(Editor::get<std::uint16_t>(s, at) + delta));
}

// Fills the bits of the sampled-row marks with `byte` (their header and directory untouched).
void fill_marks(Editor& e, char byte) {
  std::string& marks = e.payload("SMPB");
  const std::uint64_t n = Editor::get<std::uint64_t>(marks, layout::kBitVectorSize);
  std::fill_n(marks.begin() + layout::kBitVectorStorage, (n + 7) / 8, byte);
}

// Drops the last value of a counted u64 array.
void drop_last(std::string& array) {
  add_to_u64(array, layout::kArrayCount, -1);
  array.resize(array.size() - 8);
}

struct Crafted {
  const char* what;
  std::function<void(Editor&)> edit;
  std::vector<std::string> message;  // words the load's error must hold
};

// Applies each edit to `good` and expects the load on `backend` to fail with corrupt_data naming
// the invariant (and the file).
void expect_each_rejected(const std::string& good, bool dna, Backend backend, const std::vector<Crafted>& cases) {
  for (const Crafted& c : cases) {
    SCOPED_TRACE(c.what);
    Editor e(good);
    c.edit(e);
    const Outcome out = load_and_ask(e.file(), dna, backend);
    EXPECT_EQ(out.load.code(), StatusCode::corrupt_data) << out.load.message();
    EXPECT_NE(out.load.message().find("crafted.wtmap"), std::string::npos) << out.load.message();
    for (const std::string& word : c.message) {
      EXPECT_NE(out.load.message().find(word), std::string::npos) << "lacks '" << word << "': " << out.load.message();
    }
  }
}

class CraftedIndex : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override { WTMAP_FM_SKIP_WITHOUT(GetParam()); }
};

INSTANTIATE_TEST_SUITE_P(Crafted, CraftedIndex, ::testing::Values(Backend::cpu, Backend::gpu),
                         [](const auto& info) { return std::string(backend_label(info.param)); });

TEST_P(CraftedIndex, TheUneditedFilesLoadAndAnswerInRange) {
  for (const bool dna : {true, false}) {
    const Outcome out = load_and_ask(Editor(dna ? dna_index().bytes : protein_index().bytes).file(), dna, GetParam());
    EXPECT_TRUE(out.load.ok()) << out.load.message();
    EXPECT_EQ(out.asked, "");
  }
}

// Issue 23's cases first: 0xFF marks read out of bounds (SIGSEGV in run_batch_cpu<LocateOp>),
// 0x00 marks looped in SampledSuffixArrayView::locate, a zeroed C array looped in count --locate.
TEST_P(CraftedIndex, DnaIndexInvariantsAreChecked) {
  using L = std::vector<std::string>;
  const std::vector<Crafted> cases = {
      {"marks all ones", [](Editor& e) { fill_marks(e, '\xff'); }, L{"SMPB", "bit vector", "ones"}},
      {"marks all zero", [](Editor& e) { fill_marks(e, '\0'); }, L{"SMPB", "bit vector", "ones"}},
      {"sample rate past the largest", [](Editor& e) { Editor::set<std::uint32_t>(e.payload("HEAD"), 16, fmindex::kMaxSampleRate + 1); },
       L{"HEAD", "sample rate"}},
      {"C array zeroed", [](Editor& e) { e.payload("CARR").assign(32, '\0'); }, L{"C array"}},
      {"C array not monotone",
       [](Editor& e) {
         std::string& c = e.payload("CARR");
         const auto c1 = Editor::get<std::uint64_t>(c, layout::c_entry(1));
         Editor::set(c, layout::c_entry(1), Editor::get<std::uint64_t>(c, layout::c_entry(2)));
         Editor::set(c, layout::c_entry(2), c1);
       },
       L{"C array"}},
      {"C[4] - C[3] not the count of T", [](Editor& e) { add_to_u64(e.payload("CARR"), layout::c_entry(3), 1); }, L{"C array"}},
      {"C[0] not the separator rows", [](Editor& e) { add_to_u64(e.payload("CARR"), layout::c_entry(0), -1); }, L{"C array"}},
      {"special row out of range",
       [](Editor& e) {
         std::string& s = e.payload("SPEC");
         const auto count = Editor::get<std::uint64_t>(s, layout::kArrayCount);
         Editor::set(s, layout::array_value(count - 1), rows_of(e));
       },
       L{"special-row"}},
      {"special rows unsorted",
       [](Editor& e) {
         std::string& s = e.payload("SPEC");
         const auto first = Editor::get<std::uint64_t>(s, layout::array_value(0));
         Editor::set(s, layout::array_value(0), Editor::get<std::uint64_t>(s, layout::array_value(1)));
         Editor::set(s, layout::array_value(1), first);
       },
       L{"special-row"}},
      {"a special row too few", [](Editor& e) { drop_last(e.payload("SPEC")); }, L{"special-row", "separators"}},
      {"SA sample >= n", [](Editor& e) { Editor::set(e.payload("SMPA"), layout::array_value(0), rows_of(e)); }, L{"SMPA", "sample"}},
      {"SA sample twice",
       [](Editor& e) {
         std::string& s = e.payload("SMPA");
         Editor::set(s, layout::array_value(1), Editor::get<std::uint64_t>(s, layout::array_value(0)));
       },
       L{"SMPA", "sample"}},
      {"SA sample off the sampled positions", [](Editor& e) { add_to_u64(e.payload("SMPA"), layout::array_value(0), 1); },
       L{"SMPA", "sample"}},
      {"an SA sample too few", [](Editor& e) { drop_last(e.payload("SMPA")); }, L{"SMPA", "sample"}},
      {"marks' rank directory off by one",
       [](Editor& e) {
         std::string& marks = e.payload("SMPB");
         const auto n = Editor::get<std::uint64_t>(marks, layout::kBitVectorSize);
         add_to_u16(marks, layout::bit_vector_records(n) + 8 + 2, 1);  // the second block's count
       },
       L{"SMPB", "directory"}},
      {"tree's block count off by one",
       [](Editor& e) { add_to_u16(e.payload("BWTW"), layout::tree_storage(e.payload("BWTW")) + 64, 1); },
       L{"BWTW", "wavelet tree"}},
      {"tree's level totals moved between symbols",
       [](Editor& e) {
         std::string& t = e.payload("BWTW");
         add_to_u64(t, layout::tree_level_counts(t, 0), 1);
         add_to_u64(t, layout::tree_level_counts(t, 0) + 8, -1);
       },
       L{"BWTW", "wavelet tree"}},
      {"fragment past the end", [](Editor& e) { add_to_u64(e.payload("FRAG"), layout::fragment_length(
                                                                                   Editor::get<std::uint64_t>(e.payload("FRAG"), 0) - 1), 1); },
       L{"fragment"}},
      {"packed text a word short", [](Editor& e) { drop_last(e.payload("PACK")); }, L{"packed text"}},
      {"contig without a name",
       [](Editor& e) {
         std::string& c = e.payload("CTGS");
         const auto name_length = Editor::get<std::uint32_t>(c, 8);
         c.erase(12, name_length);
         Editor::set<std::uint32_t>(c, 8, 0);
       },
       L{"CTGS", "name"}},
      {"contig name with a newline", [](Editor& e) { e.payload("CTGS")[12] = '\n'; }, L{"CTGS", "name"}},
      {"contig names repeated",
       [](Editor& e) {  // contigs ctg1 and ctg2: the second named as the first
         std::string& c = e.payload("CTGS");
         c[12 + 4 + 8 + 4 + 3] = '1';
       },
       L{"CTGS", "repeated"}},
  };
  expect_each_rejected(dna_index().bytes, true, GetParam(), cases);
}

TEST_P(CraftedIndex, ProteinIndexInvariantsAreChecked) {
  using L = std::vector<std::string>;
  const std::vector<Crafted> cases = {
      {"marks all ones", [](Editor& e) { fill_marks(e, '\xff'); }, L{"SMPB", "bit vector", "ones"}},
      {"marks all zero", [](Editor& e) { fill_marks(e, '\0'); }, L{"SMPB", "bit vector", "ones"}},
      {"SA sample >= n", [](Editor& e) { Editor::set(e.payload("SMPA"), layout::array_value(0), rows_of(e)); }, L{"SMPA", "sample"}},
      {"SA sample off the sampled positions", [](Editor& e) { add_to_u64(e.payload("SMPA"), layout::array_value(0), 1); },
       L{"SMPA", "sample"}},
      {"level 0's rank directory off by one",
       [](Editor& e) {
         std::string& t = e.payload("BWTW");
         const auto level_size = Editor::get<std::uint64_t>(t, layout::kTreeLevels);
         add_to_u16(t, layout::tree_storage(t) + layout::bit_vector_bits_bytes(level_size) + 8 + 2, 1);
       },
       L{"BWTW", "wavelet tree"}},
      {"level 0's ones off by one", [](Editor& e) { add_to_u64(e.payload("BWTW"), layout::tree_level_counts(e.payload("BWTW"), 0), 1); },
       L{"BWTW", "wavelet tree"}},
      {"fragment past the end", [](Editor& e) { add_to_u64(e.payload("FRAG"), layout::fragment_length(
                                                                                   Editor::get<std::uint64_t>(e.payload("FRAG"), 0) - 1), 1); },
       L{"fragment"}},
  };
  expect_each_rejected(protein_index().bytes, false, GetParam(), cases);
}

// Issue 23, item 8: a flipped bit in the tree's format version (checksum not recomputed) said
// "format version 3 is newer than this build reads"; the checksum must speak first.
TEST_P(CraftedIndex, ADamagedFieldIsReportedAsAChecksumMismatch) {
  std::string bytes = dna_index().bytes;
  const std::size_t tree = bytes.find("BWTW");
  ASSERT_NE(tree, std::string::npos);
  bytes[tree + 12 + 8] ^= 0x02;  // the tag, the size, the tree's magic; then its version
  const Outcome out = load_and_ask(bytes, true, GetParam());
  EXPECT_EQ(out.load.code(), StatusCode::corrupt_data);
  EXPECT_NE(out.load.message().find("checksum mismatch in the BWTW section"), std::string::npos) << out.load.message();
  EXPECT_EQ(out.load.message().find("newer"), std::string::npos) << out.load.message();
}

// Marks moved to other rows, rebuilt into a self-consistent vector with as many ones: no check
// short of inverting the suffix array sees it, so it loads -- and every locate must then still
// end (at most s steps) in range or with corrupt_data.
TEST_P(CraftedIndex, SelfConsistentMisplacedMarksLoadButNeverHang) {
  std::mt19937 rng(5);
  int loaded = 0;
  for (int trial = 0; trial < 20; ++trial) {
    Editor e(dna_index().bytes);
    std::string& marks = e.payload("SMPB");
    const auto n = Editor::get<std::uint64_t>(marks, layout::kBitVectorSize);
    std::vector<std::uint32_t> words((n + 31) / 32);
    std::memcpy(words.data(), marks.data() + layout::kBitVectorStorage, words.size() * 4);
    auto bit = [&](std::uint64_t r) { return (words[r / 32] >> (r % 32)) & 1u; };
    std::vector<std::uint64_t> specials;
    const std::string& spec = e.payload("SPEC");
    for (std::uint64_t j = 0; j < Editor::get<std::uint64_t>(spec, 0); ++j) specials.push_back(Editor::get<std::uint64_t>(spec, layout::array_value(j)));
    for (int moves = 0; moves < 1 + trial; ++moves) {  // a marked non-special row swaps with an unmarked one
      std::uint64_t from = rng() % n, to = rng() % n;
      while (!bit(from) || std::count(specials.begin(), specials.end(), from) != 0) from = rng() % n;
      while (bit(to)) to = rng() % n;
      words[from / 32] ^= 1u << (from % 32);
      words[to / 32] ^= 1u << (to % 32);
    }
    auto moved = RankSelectBitVector::build(words.data(), n, Backend::cpu);
    ASSERT_TRUE(moved.ok());
    std::ostringstream saved;
    ASSERT_TRUE(moved->save(saved).ok());
    marks = saved.str();
    const Outcome out = load_and_ask(e.file(), true, GetParam());
    loaded += out.load.ok();
    EXPECT_EQ(out.asked, "") << "trial " << trial;
  }
  EXPECT_GT(loaded, 0) << "the loader was expected to accept marks it cannot tell from right ones";
}

// The walk's bound itself, on a structure no loader check stands in front of: an "index" whose LF
// steps cycle through rows none of which is marked (what 0x00 marks made of a real index) must
// give kNotLocated after s steps, not loop; a walk that leaves the rows likewise.
struct CyclingIndex {
  std::uint64_t rows = 0;
  bool leaves = false;  // lf(r) = r + 600, past the rows; else r + 1 around them
  std::uint64_t lf(std::uint64_t r) const { return leaves ? r + 600 : (r + 1) % rows; }
};

// The index files the fuzz_index_loader campaign crashed or hung the loader with
// (tests/fuzz/crashes, docs/fuzzing.md): each must now be refused as corrupt, whichever loader
// its alphabet byte names.
TEST(FuzzFindings, EveryReproducerIsRefusedAsCorrupt) {
  const fs::path crashes = fs::path(WTMAP_SOURCE_DIR) / "tests" / "fuzz" / "crashes";
  int files = 0;
  for (const auto& entry : fs::directory_iterator(crashes)) {
    if (entry.path().extension() != ".wtmap") continue;
    ++files;
    const std::string path = entry.path().string();
    SCOPED_TRACE(path);
    Status loaded = FmIndex::load(path, Backend::cpu).status();
    if (loaded.code() == StatusCode::invalid_argument) loaded = GeneralFmIndex::load(path, Backend::cpu).status();
    EXPECT_EQ(loaded.code(), StatusCode::corrupt_data) << loaded.message();
  }
  EXPECT_GE(files, 6);
}

TEST(SampledSuffixArrayWalk, IsBoundedBySampleRateAndRows) {
  const std::uint64_t n = 1000;
  std::vector<std::uint32_t> words((n + 31) / 32, 0);
  words[0] = 1;  // row 0 sampled, at text position 77
  auto marks = RankSelectBitVector::build(words.data(), n, Backend::cpu);
  ASSERT_TRUE(marks.ok());
  const std::uint64_t samples[1] = {77};
  SampledSuffixArrayView sa;
  sa.sampled = marks->view();
  sa.sa_samples = samples;
  sa.sample_rate = 8;
  Watchdog watchdog(30, "an unmarked locate walk");
  const CyclingIndex cycle{n, false};
  EXPECT_EQ(sa.locate(cycle, 0), 77u);                             // sampled: no step
  EXPECT_EQ(sa.locate(cycle, n - 7), 77u + 7);                     // 7 steps to row 0: within s - 1
  EXPECT_EQ(sa.locate(cycle, n - 8), SampledSuffixArrayView::kNotLocated);  // 8 steps: more than s - 1
  EXPECT_EQ(sa.locate(cycle, 500), SampledSuffixArrayView::kNotLocated);    // never a mark on the way
  const CyclingIndex leaving{n, true};
  EXPECT_EQ(sa.locate(leaving, 500), SampledSuffixArrayView::kNotLocated);  // 500 + 600 is past the rows
  sa.sample_rate = 1;  // every row must be sampled
  EXPECT_EQ(sa.locate(cycle, 1), SampledSuffixArrayView::kNotLocated);
}

// ---- a good index under a memory limit --------------------------------------------------------

std::uint64_t virtual_memory_bytes() {  // this process's VmSize
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmSize:", 0) == 0) return std::stoull(line.substr(7)) * 1024;
  }
  return 0;
}

// Issue 23, item 4: under `ulimit -v` a good index was reported "SA sample section is cut short"
// (a thread for the section's checksum could not be created; the stream took the exception for
// an end of data). Loads a good index (s = 1, so that its samples are 48 MB, summed on several
// threads) in child processes under address-space limits rising from what the process holds: each
// load succeeds or says out of memory -- never corrupt, never a crash.
// AddressSanitizer reserves terabytes of address space for its shadow memory, so an address-space
// limit cannot be tested under it (the limited children hang in its allocator).
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kUnderAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kUnderAddressSanitizer = true;
#else
constexpr bool kUnderAddressSanitizer = false;
#endif
#else
constexpr bool kUnderAddressSanitizer = false;
#endif

// Builds an index in a child (`build` saves it to the path, true on success), so that no memory
// freed by the build serves the loads, then loads it with `load` (its status) in children under
// address-space limits rising from what the process holds: each load succeeds or says out of
// memory -- never corrupt, never an exception, never a crash -- and both happen.
void expect_loads_or_out_of_memory(const std::string& path, const std::function<bool(const std::string&)>& build,
                                   const std::function<Status(const std::string&)>& load) {
  const pid_t builder = fork();
  ASSERT_GE(builder, 0);
  if (builder == 0) std::_Exit(build(path) ? 0 : 1);
  int built = 0;
  ASSERT_EQ(waitpid(builder, &built, 0), builder);
  ASSERT_TRUE(WIFEXITED(built) && WEXITSTATUS(built) == 0);
  int loaded = 0, out_of_memory = 0;
  for (std::uint64_t extra = 0; extra <= (std::uint64_t{256} << 20); extra += std::uint64_t{8} << 20) {
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      const rlimit limit{virtual_memory_bytes() + extra, RLIM_INFINITY};
      setrlimit(RLIMIT_AS, &limit);
      try {
        const Status again = load(path);
        if (!again.ok()) std::fprintf(stderr, "limit +%llu MiB: %s\n", static_cast<unsigned long long>(extra >> 20), again.message().c_str());
        std::_Exit(again.ok() ? 0 : again.code() == StatusCode::out_of_memory ? 1 : 2);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "limit +%llu MiB: exception: %s\n", static_cast<unsigned long long>(extra >> 20), e.what());
        std::_Exit(3);
      }
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status)) << "the load under +" << (extra >> 20) << " MiB died of signal " << WTERMSIG(status);
    ASSERT_NE(WEXITSTATUS(status), 2) << "a good index failed for another reason than memory under +" << (extra >> 20) << " MiB (message above)";
    ASSERT_NE(WEXITSTATUS(status), 3) << "the load under +" << (extra >> 20) << " MiB threw (message above)";
    loaded += WEXITSTATUS(status) == 0;
    out_of_memory += WEXITSTATUS(status) == 1;
  }
  EXPECT_GT(loaded, 0) << "no limit tried was enough to load the index";
  // Where even +0 bytes loads the index, the allocator served it from memory the process already
  // held (seen for the protein index on an H200 host, never here), and no failure path ran.
  if (out_of_memory == 0) GTEST_SKIP() << "no limit tried made the load fail on this host: the out-of-memory path was not exercised";
}

TEST(IndexLoadUnderAMemoryLimit, SaysOutOfMemoryNeverCorrupt) {
  if (kUnderAddressSanitizer) GTEST_SKIP() << "an address-space limit means nothing under AddressSanitizer";
  TempDir dir;
  auto build = [&](const std::string& path) {
    RandomReferenceSpec spec;
    spec.seed = 4;
    spec.contigs = 3;
    spec.min_length = spec.max_length = 1000000;
    return build_index(load_reference(dir, random_reference(spec)), Backend::cpu, 1).save(path).ok();
  };
  expect_loads_or_out_of_memory(dir.file("big.wtmap"), build, [](const std::string& path) {
    return FmIndex::load(path, Backend::cpu, 0).status();
  });
}

// The same for a protein index (3 Mbp in records of up to 2,000, s = 1: 24 MB of samples): the
// general loader shares the DNA loader's pipeline, its guard against a small allocation that
// throws included.
TEST(IndexLoadUnderAMemoryLimit, ProteinSaysOutOfMemoryNeverCorrupt) {
  if (kUnderAddressSanitizer) GTEST_SKIP() << "an address-space limit means nothing under AddressSanitizer";
  TempDir dir;
  auto build = [&](const std::string& path) {
    write_file(dir.file("big.fa"), symbol_fasta_text(random_records(5, 3000, 10, 2000, protein_letters(), SymbolKind::protein), 60));
    auto ref = fmindex::read_symbol_fasta(dir.file("big.fa"), fmindex::Alphabet::protein);
    fmindex::FmIndexOptions options;
    options.backend = Backend::cpu;
    options.sample_rate = 1;
    if (!ref.ok()) return false;
    auto index = GeneralFmIndex::build(*ref, options);
    return index.ok() && index->save(path).ok();
  };
  expect_loads_or_out_of_memory(dir.file("big.wtmap"), build, [](const std::string& path) {
    return GeneralFmIndex::load(path, Backend::cpu).status();
  });
}

// ---- the campaign --------------------------------------------------------------------------------

// One random edit of one section's payload: a byte set, a u64 nudged by a little, a run of bytes
// set to 0x00 or 0xFF, or a u64 set to a value near an edge (0, n, n - 1, 2^64 - 1).
void random_edit(Editor& e, std::mt19937_64& rng, std::uint64_t n) {
  auto& sections = e.sections();
  std::string& p = sections[rng() % sections.size()].payload;
  if (p.empty()) return;
  const std::size_t at = rng() % p.size();
  const std::size_t u64_at = std::min<std::size_t>(at / 8 * 8, p.size() >= 8 ? p.size() - 8 : 0);
  switch (rng() % 4) {
    case 0:
      p[at] = static_cast<char>(rng());
      break;
    case 1:
      if (p.size() >= 8) add_to_u64(p, u64_at, static_cast<std::int64_t>(rng() % 5) - 2);
      break;
    case 2:
      std::fill_n(p.begin() + static_cast<std::ptrdiff_t>(at), std::min<std::size_t>(p.size() - at, 1 + rng() % 64),
                  rng() % 2 ? '\xff' : '\0');
      break;
    default: {
      const std::uint64_t edges[] = {0, n, n - 1, ~std::uint64_t{0}};
      if (p.size() >= 8) Editor::set(p, u64_at, edges[rng() % 4]);
    }
  }
}

// 600 edits (half per index kind) with valid checksums: every one fails to load or answers in
// range; none crashes or hangs. A self-consistent different index may load.
TEST(CraftedIndexCampaign, RandomEditsWithValidChecksumsNeverCrashOrHang) {
  std::mt19937_64 rng(2023);
  int rejected = 0, loaded = 0;
  for (int k = 0; k < 600; ++k) {
    const bool dna = k % 2 == 0;
    const GoodIndex& good = dna ? dna_index() : protein_index();
    Editor e(good.bytes);
    std::string edited;
    do {  // an edit that changes something (a byte set to its own value does not)
      random_edit(e, rng, rows_of(e));
      edited = e.file();
    } while (edited == good.bytes);
    const Outcome out = load_and_ask(edited, dna, Backend::cpu);
    if (!out.load.ok()) {
      ++rejected;
      EXPECT_TRUE(out.load.code() == StatusCode::corrupt_data || out.load.code() == StatusCode::invalid_argument)
          << "edit " << k << ": " << out.load.message();
    } else {
      ++loaded;
      EXPECT_EQ(out.asked, "") << "edit " << k;
    }
  }
  std::printf("campaign: %d edits rejected, %d loaded and answered in range\n", rejected, loaded);
  EXPECT_GT(rejected, loaded) << "most random edits break an invariant the loaders check";
}

}  // namespace
}  // namespace wtmap::fmtest
