// bam_sorter.hpp and SamWriter's sorted output (--sort, issue 29): records come out in samtools
// sort's order with ties in input order -- checked against a stable sort of the input written in
// the test -- byte for byte the records given, whether sorted in memory, spilled to several runs
// or to so many that runs are merged during the run; the temporary runs are gone afterwards; the
// index (BAI, or CSI for a contig of 2^29 bases) answers region queries as a scan does.
#include <gtest/gtest.h>
#include <htslib/sam.h>
#include <htslib/thread_pool.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "fm_support.hpp"
#include "sorted_bam_support.hpp"
#include "wtmap/aligner/bam_sorter.hpp"
#include "wtmap/aligner/sam_writer.hpp"

namespace wtmap::altest {
namespace {

using aligner::CoordinateSorter;
using fmtest::TempDir;
namespace fs = std::filesystem;

constexpr int kContigs = 3;

std::unique_ptr<sam_hdr_t, HeaderDeleter> test_header() {
  std::unique_ptr<sam_hdr_t, HeaderDeleter> h(sam_hdr_init());
  sam_hdr_add_line(h.get(), "HD", "VN", "1.6", "SO", "unsorted", nullptr);
  for (int t = 0; t < kContigs; ++t) {
    sam_hdr_add_line(h.get(), "SQ", "SN", ("c" + std::to_string(t)).c_str(), "LN", "100000", nullptr);
  }
  return h;
}

// `n` records named by their input order: mapped on either strand at positions drawn from a few
// hundred (many ties), unmapped ones placed at a position (as at a mapped mate) and unplaced ones.
std::vector<RecordPtr> random_records(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  auto draw = [&rng](int low, int high) { return std::uniform_int_distribution<int>(low, high)(rng); };
  std::vector<RecordPtr> records;
  for (std::size_t i = 0; i < n; ++i) {
    const int kind = draw(0, 9);  // 0: unplaced, 1: unmapped placed, else mapped
    const int length = draw(20, 80);
    std::string seq(length, 'A'), qual(length, '\0');
    for (int k = 0; k < length; ++k) {
      seq[k] = "ACGTN"[draw(0, 4)];
      qual[k] = static_cast<char>(draw(0, 40));
    }
    const std::uint32_t cigar = bam_cigar_gen(length, BAM_CMATCH);
    std::uint16_t flag = kind <= 1 ? BAM_FUNMAP : 0;
    if (kind != 0 && draw(0, 1) == 1) flag |= BAM_FREVERSE;
    const int tid = kind == 0 ? -1 : draw(0, kContigs - 1);
    const hts_pos_t pos = kind == 0 ? -1 : draw(0, 300);
    const std::string name = "r" + std::to_string(i);
    RecordPtr b(bam_init1());
    EXPECT_GE(bam_set1(b.get(), name.size(), name.c_str(), flag, tid, pos, static_cast<std::uint8_t>(draw(0, 60)),
                       kind >= 2 ? 1 : 0, &cigar, -1, -1, 0, seq.size(), seq.c_str(), qual.c_str(), 0), 0);
    bam_aux_update_int(b.get(), "NM", draw(0, 5));
    records.push_back(std::move(b));
  }
  return records;
}

// The input's indices in samtools sort's order, ties in input order.
std::vector<std::size_t> expected_order(const std::vector<RecordPtr>& records) {
  std::vector<std::size_t> order(records.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return samtools_key(records[a].get()) < samtools_key(records[b].get());
  });
  return order;
}

bool same_record(const bam1_t* a, const bam1_t* b) {
  return std::memcmp(&a->core, &b->core, sizeof a->core) == 0 && a->l_data == b->l_data &&
         std::memcmp(a->data, b->data, static_cast<std::size_t>(a->l_data)) == 0;
}

struct SortRun {
  std::vector<std::size_t> order;  // input indices, as emitted
  CoordinateSorter::Stats stats;
  std::vector<std::string> files_after;
};

// Sorts `records` with `memory` bytes and `threads` htslib threads (1: none) in a fresh folder.
SortRun sort_records(const std::vector<RecordPtr>& records, std::uint64_t memory, int threads) {
  TempDir dir;
  const auto header = test_header();
  hts_tpool* pool = threads > 1 ? hts_tpool_init(threads) : nullptr;
  SortRun run;
  {
    aligner::SortOptions options;
    options.memory_bytes = memory;
    options.scratch_stem = dir.file("out.bam.tmp.test");
    Result<CoordinateSorter> sorter = CoordinateSorter::create(header.get(), options, pool);
    EXPECT_TRUE(sorter.ok()) << sorter.status().message();
    for (const RecordPtr& r : records) EXPECT_TRUE(sorter->add(r.get()).ok());
    const Status done = sorter->finish([&](const bam1_t* b) {
      const std::size_t i = std::stoul(bam_get_qname(b) + 1);
      EXPECT_TRUE(i < records.size() && same_record(b, records[i].get())) << "record " << bam_get_qname(b) << " changed";
      run.order.push_back(i);
      return Status{};
    });
    EXPECT_TRUE(done.ok()) << done.message();
    run.stats = sorter->stats();
    run.files_after = dir.entries();
  }
  if (pool != nullptr) hts_tpool_destroy(pool);
  return run;
}

TEST(CoordinateSorter, InMemoryIsSamtoolsOrderWithTiesInInputOrder) {
  const auto records = random_records(5000, 1);
  const SortRun run = sort_records(records, std::uint64_t{1} << 30, 1);
  EXPECT_EQ(run.order, expected_order(records));
  EXPECT_EQ(run.stats.records, 5000u);
  EXPECT_EQ(run.stats.runs_spilled, 0u);
  EXPECT_EQ(run.files_after, std::vector<std::string>{});
}

// Some 190 bytes a record: 256 KiB gives runs of some 700 records, 7 runs; 16 KiB gives runs of
// some 40, about 300 runs, merged during the run 16 at a time: floor(n / 16) merges of spilled
// runs and floor(n / 256) of merged ones (the second level).
TEST(CoordinateSorter, SpilledRunsGiveTheSameOrder) {
  const auto records = random_records(12000, 2);
  const std::vector<std::size_t> expected = expected_order(records);
  for (const int threads : {1, 3}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    const SortRun some = sort_records(records, 512 << 10, threads);
    EXPECT_EQ(some.order, expected);
    EXPECT_GE(some.stats.runs_spilled, 3u);
    EXPECT_EQ(some.stats.run_merges, 0u);
    EXPECT_EQ(some.files_after, std::vector<std::string>{}) << "runs left behind";
    if (threads > 1) continue;  // some 300 files: once is enough
    const SortRun many = sort_records(records, 16 << 10, threads);
    EXPECT_EQ(many.order, expected);
    const std::uint64_t runs = many.stats.runs_spilled;
    EXPECT_GE(runs, 256u);
    EXPECT_EQ(many.stats.run_merges, runs / 16 + runs / 256);
    EXPECT_EQ(many.files_after, std::vector<std::string>{}) << "runs left behind";
  }
}

// Enough records for the parallel sort's parts (2^16 entries a part) on several threads.
TEST(CoordinateSorter, ALargeRunSortedInPartsKeepsTheOrder) {
  const auto records = random_records(300000, 3);
  const SortRun run = sort_records(records, std::uint64_t{1} << 30, 1);
  EXPECT_EQ(run.order, expected_order(records));
}

TEST(CoordinateSorter, EmptyInputEmitsNothing) {
  const SortRun run = sort_records({}, 16 << 10, 1);
  EXPECT_TRUE(run.order.empty());
  EXPECT_EQ(run.files_after, std::vector<std::string>{});
}

// A sorter dropped before finish() (a failed run) removes the runs it spilled.
TEST(CoordinateSorter, AnAbandonedSortRemovesItsRuns) {
  TempDir dir;
  const auto header = test_header();
  const auto records = random_records(3000, 4);
  {
    aligner::SortOptions options;
    options.memory_bytes = 16 << 10;
    options.scratch_stem = dir.file("out.bam.tmp.test");
    Result<CoordinateSorter> sorter = CoordinateSorter::create(header.get(), options, nullptr);
    ASSERT_TRUE(sorter.ok());
    for (const RecordPtr& r : records) ASSERT_TRUE(sorter->add(r.get()).ok());
    std::size_t runs = 0;
    for (const std::string& e : dir.entries()) runs += e.rfind("out.bam.tmp.test.run", 0) == 0;
    EXPECT_GE(runs, 1u) << "nothing spilled";
  }
  EXPECT_EQ(dir.entries(), std::vector<std::string>{});
}

// A run that cannot be written fails the sort with the file's name.
TEST(CoordinateSorter, ARunThatCannotBeWrittenFailsTheSort) {
  TempDir dir;
  const auto header = test_header();
  aligner::SortOptions options;
  options.memory_bytes = 16 << 10;
  options.scratch_stem = dir.file("missing/out.bam.tmp.test");
  Result<CoordinateSorter> sorter = CoordinateSorter::create(header.get(), options, nullptr);
  ASSERT_TRUE(sorter.ok());
  Status status;
  for (const RecordPtr& r : random_records(2000, 5)) {
    status = sorter->add(r.get());
    if (!status.ok()) break;
  }
  if (status.ok()) status = sorter->finish([](const bam1_t*) { return Status{}; });
  EXPECT_EQ(status.code(), StatusCode::io_error);
  EXPECT_NE(status.message().find(dir.file("missing/out.bam.tmp.test.run0")), std::string::npos) << status.message();
}

// ---- SamWriter --sort: header, order, index kind and its answers ---------------------------

struct WrittenSorted {
  std::string bam, bai, csi;
};

// Writes reads at `positions` of contig 0 (of `length` bases) and contig 1, sorted, to dir/out.bam.
WrittenSorted write_sorted(const TempDir& dir, std::uint64_t length, const std::vector<std::uint64_t>& positions) {
  aligner::SamOptions options;
  options.path = dir.file("out.bam");
  options.sort = true;
  options.sort_memory = 64 << 10;  // several runs
  options.threads = 2;
  const std::vector<fmindex::Contig> contigs = {{"long", length}, {"short", 5000}};
  Result<aligner::SamWriter> writer = aligner::SamWriter::open(options, contigs);
  EXPECT_TRUE(writer.ok()) << writer.status().message();
  std::vector<aligner::SeqRecord> reads;
  std::vector<aligner::ReadAlignment> alignments;
  for (std::size_t i = 0; i < positions.size(); ++i) {
    reads.push_back({"q" + std::to_string(i), std::string(100, "ACGT"[i % 4]), std::string(100, 'I')});
    aligner::ReadAlignment a;
    a.mapped = i % 7 != 0;
    a.best_count = 1;
    a.primary = aligner::Placement{static_cast<std::uint32_t>(i % 3 == 0), i % 3 == 0 ? positions[i] % 4900 : positions[i],
                                   i % 2 == 1, {}};
    alignments.push_back(a);
  }
  EXPECT_TRUE(writer->write(reads, alignments).ok());
  const Status finished = writer->finish();
  EXPECT_TRUE(finished.ok()) << finished.message();
  return {options.path, options.path + ".bai", options.path + ".csi"};
}

void expect_sorted_and_indexed(const TempDir& dir, const WrittenSorted& w, const std::string& index, std::uint64_t length) {
  const BamContents c = read_bam(w.bam);
  EXPECT_EQ(c.header.rfind("@HD\tVN:1.6\tSO:coordinate\n", 0), 0u) << c.header;
  for (std::size_t i = 1; i < c.records.size(); ++i) {
    const bam1_t *a = c.records[i - 1].get(), *b = c.records[i].get();
    const int qa = std::stoi(bam_get_qname(a) + 1), qb = std::stoi(bam_get_qname(b) + 1);
    ASSERT_TRUE(samtools_key(a) < samtools_key(b) || (samtools_key(a) == samtools_key(b) && qa < qb))
        << c.lines[i - 1] << "\nbefore\n" << c.lines[i];
  }
  std::mt19937_64 rng(9);
  for (int q = 0; q < 200; ++q) {
    const int tid = q % 2;
    const std::uint64_t span = tid == 0 ? length : 5000;
    const auto begin = static_cast<std::int64_t>(rng() % span);
    const auto end = begin + 1 + static_cast<std::int64_t>(rng() % (q % 5 == 0 ? span : 400));
    SCOPED_TRACE("query " + std::to_string(tid) + ":" + std::to_string(begin) + "-" + std::to_string(end));
    EXPECT_EQ(query_lines(w.bam, index, tid, begin, end), scanned_lines(c, tid, begin, end));
  }
  for (const std::string& e : dir.entries()) EXPECT_EQ(e.find(".tmp."), std::string::npos) << e << " left behind";
}

TEST(SortedSamWriter, ShortContigsGetABaiIndex) {
  TempDir dir;
  std::vector<std::uint64_t> positions;
  std::mt19937_64 rng(7);
  for (int i = 0; i < 3000; ++i) positions.push_back(rng() % 99900);
  const WrittenSorted w = write_sorted(dir, 100000, positions);
  EXPECT_TRUE(fs::exists(w.bai));
  EXPECT_FALSE(fs::exists(w.csi));
  expect_sorted_and_indexed(dir, w, w.bai, 100000);
}

// A contig of 2^29 bases is past BAI's bins: a CSI index, which answers queries past 2^29 too.
TEST(SortedSamWriter, AContigOf2To29BasesGetsACsiIndex) {
  TempDir dir;
  const std::uint64_t length = std::uint64_t{1} << 29;
  std::vector<std::uint64_t> positions;
  std::mt19937_64 rng(8);
  for (int i = 0; i < 3000; ++i) positions.push_back(i % 2 == 0 ? length - 1 - rng() % 200000 : rng() % (length - 100));
  const WrittenSorted w = write_sorted(dir, length, positions);
  EXPECT_FALSE(fs::exists(w.bai));
  EXPECT_TRUE(fs::exists(w.csi));
  expect_sorted_and_indexed(dir, w, w.csi, length);
}

// What --sort cannot write is refused before anything is made.
TEST(SortedSamWriter, SortNeedsABamFile) {
  aligner::SamOptions options;
  options.sort = true;
  options.path = "x.sam";
  EXPECT_EQ(aligner::sam_format(options).status().message(),
            "--sort writes BAM or CRAM: give -o FILE.bam or FILE.cram (or -O bam|cram), not SAM");
  for (const char* format : {"bam", "cram"}) {
    options.path = "-";
    options.format = format;
    options.reference = options.format == "cram" ? "ref.fa" : "";
    EXPECT_EQ(aligner::sam_format(options).status().message(),
              "--sort writes a file and its index: give -o FILE.bam or FILE.cram, not stdout");
  }
  options.path = "x.cram";
  options.format = "";
  EXPECT_EQ(aligner::sam_format(options).value(), aligner::SamFormat::cram);
  options.reference = "";
  options.path = "/dev/null";
  options.format = "bam";
  EXPECT_EQ(aligner::SamWriter::open(options, {{"c", 100}}).status().message(),
            "/dev/null: --sort writes an index beside the output; -o must name a regular file");
}

}  // namespace
}  // namespace wtmap::altest
