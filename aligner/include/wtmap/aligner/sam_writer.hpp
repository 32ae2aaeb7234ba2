// wtmap aligner: SAM/BAM/CRAM output through htslib, written to a temporary beside the output and
// renamed over it when complete (io/output_file.hpp), so a failed or interrupted run never leaves
// a half-written file under the requested name nor destroys the file it was to replace.
#pragma once

#include <array>
#include <functional>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "wtmap/aligner/alignment.hpp"
#include "wtmap/aligner/bam_sorter.hpp"
#include "wtmap/aligner/cram_reference.hpp"
#include "wtmap/aligner/gapped/gapped_alignment.hpp"
#include "wtmap/aligner/pairing.hpp"
#include "wtmap/aligner/seq_reader.hpp"
#include "wtmap/core/status.hpp"
#include "wtmap/fmindex/reference.hpp"

namespace wtmap::aligner {

struct SamOptions {
  std::string path = "-";         // "-": SAM on stdout; else written as io/output_file.hpp says
  std::vector<std::string> inputs;  // the run's input files: refused as the output
  std::string format;             // "sam", "bam" or "cram"; empty: from the path's extension, else
                                  // SAM (SAM to a path ending .gz or .bgz is BGZF-compressed)
  // CRAM: the FASTA the records are encoded against (cram_reference.hpp), an input of the run.
  // Refused for the other formats, which have no use for it.
  std::string reference;
  std::string read_group;         // -R line with \t escapes, e.g. "@RG\tID:x\tSM:y"
  std::string command_line;       // for @PG CL
  unsigned threads = 1;           // formatting and BAM/CRAM compression threads
  // BAM and BGZF SAM: zlib's level, 0 (stored) .. 9. CRAM: htslib's CRAM level, 0 (blocks
  // stored) .. 9, which also picks how many codecs htslib tries per block (1 the fastest few;
  // cram_encode.c, cram_compress_slice). -1: htslib's default (CRAM's is 5). Unsorted BAM at
  // level 1 is written by wtmap's own BGZF writer with ISA-L's level 1 deflate (2.3x the speed of
  // htslib's level 1, 1.7 % larger; aligner/src/bam_block_writer.hpp); the rest by htslib.
  int compression_level = -1;
  unsigned max_mismatches = 4;    // for MAPQ
  // Gapped records: supplementary lines keep their clips soft (bwa mem -Y); by default they are
  // hard-clipped (H), their SEQ and QUAL only the aligned part, as bwa mem writes them.
  bool soft_clip_supplementary = false;
  // Coordinate-sorted BAM or CRAM (bam_sorter.hpp) with its index beside it: for BAM path +
  // ".bai", or ".csi" where a contig has 2^29 bases or more (BAI's bins end there; samtools index
  // makes the same choice only with -c); for CRAM path + ".crai". Needs a BAM or CRAM file that
  // is a regular file.
  bool sort = false;
  std::uint64_t sort_memory = 0;  // bytes for records in memory; 0: default_sort_memory()
};

// What a SamWriter with `options` writes: plain SAM, BGZF-compressed SAM (SAM to a path that ends
// .gz or .bgz, as samtools writes x.sam.gz, and as `samtools view` and tabix read it), BAM or
// CRAM (.cram, or -O cram; htslib's default CRAM version, 3.x). invalid_argument for any other
// format, for CRAM without a reference, for a reference without CRAM, and for `sort` with
// anything but BAM or CRAM to a path, so that a command can refuse it before any work;
// SamWriter::open decides the same way.
enum class SamFormat { sam, sam_bgzf, bam, cram };
Result<SamFormat> sam_format(const SamOptions& options);
// The format `options` asks for, unchecked: `format` where given, else the path's ("sam", "bam"
// or "cram"; the name before a .gz or .bgz). For a command that fills in what that format needs.
std::string requested_format(const SamOptions& options);

// BAM and CRAM store a position as a signed 32-bit integer (SAM spec 4.2; htslib's bam_write1
// refuses a record past it, CRAM 3's ITF8 ends there too): a contig of kBinaryContigLimit bases
// or more fits only SAM, whose positions htslib writes and reads as 64-bit.
constexpr std::uint64_t kBinaryContigLimit = std::uint64_t{1} << 31;
// invalid_argument naming the first such contig where `format` is BAM or CRAM, saying to write
// SAM; so that a run is refused before any work, not failed at its first read past 2^31.
Status check_contigs_fit(SamFormat format, const std::vector<fmindex::Contig>& contigs);

class SamWriter {
 public:
  SamWriter(SamWriter&&) noexcept;
  SamWriter& operator=(SamWriter&&) noexcept;
  ~SamWriter();  // removes the temporary file unless finish() succeeded

  // CRAM: the reference is checked (prepare_cram_reference) before the output file is made. Its
  // records are those of BAM with two differences that CRAM's layout makes: the @SQ lines gain
  // M5 and UR (the reference's MD5 and absolute path, for readers to find it), and an RG:Z tag
  // comes back last among a record's tags (CRAM 3 keeps the read group in a field of its own, not
  // as a tag). NM and MD are stored as written, not dropped to be recomputed by the reader,
  // so that they come back in their place.
  static Result<SamWriter> open(const SamOptions& options, const std::vector<fmindex::Contig>& contigs);

  // Makes the records of a batch of `reads` reads before the first write() needs them, each with
  // room for a read of some 150 bases and its tags: a pipeline's writer calls it while it waits
  // for its first batch. Allocated and first touched inside write(), on all threads at once, they
  // made the first batch of 10^5 reads take 130-190 ms to write where the next ones took 25-50 ms
  // (H100 host, bench/history/RESULTS-2026-11-26.md).
  Status reserve(std::size_t reads);
  // Writes one record per read, in order.
  Status write(const std::vector<SeqRecord>& reads, const std::vector<ReadAlignment>& alignments);
  // Gapped alignments, as bwa mem writes them (bwamem.c, mem_aln2sam): per read the primary line
  // (flag 0x10 for the reverse strand, 0x4 unmapped; CIGAR with M/I/D/S; NM, MD, AS, XS, RG, SA,
  // XA), then a line per supplementary hit (flag 0x800, clips hard unless
  // soft_clip_supplementary, MAPQ at most the primary's, no XS or XA), in read order. A hit whose
  // contig is unknown or whose CIGAR does not span the read is refused.
  Status write(const std::vector<SeqRecord>& reads, const std::vector<gapped::GappedReadAlignment>& alignments);
  // Writes pairs as write() writes reads, each record with its read's pair fields (pairing.hpp):
  // FLAG bits, RNEXT/PNEXT/TLEN, the MAPQ after pairing, MC and MQ; `mates` has one per read.
  Status write_pairs(const std::vector<SeqRecord>& reads, const std::vector<ReadAlignment>& alignments,
                     const std::vector<MateFields>& mates);
  // Gapped pairs: each read's lines as write() writes them, every line with its read's pair fields
  // (bwa mem's mem_aln2sam gives a supplementary line its mate's fields too); a supplementary
  // line keeps its own MAPQ (at most the primary's, which is the one after pairing).
  Status write_pairs(const std::vector<SeqRecord>& reads, const std::vector<gapped::GappedReadAlignment>& alignments,
                     const std::vector<MateFields>& mates);
  // Flushes, closes and renames the temporary file to the requested name; sorting, first writes
  // the records in coordinate order and the index, renamed after the output (so that the index
  // is never older than its BAM or CRAM file).
  Status finish();

  // Sorting: called with a line for the log as finish() starts to write the sorted records (which
  // may take seconds after the last batch).
  void set_sort_note(std::function<void(const std::string&)> note);
  // The index finish() writes beside a sorted output; empty when not sorting.
  const std::string& index_path() const;
  // What sorting did (records, runs spilled to temporary files, seconds), after finish(); none
  // when not sorting.
  std::optional<CoordinateSorter::Stats> sort_stats() const;

  // Where the writing time went (for `wtmap align -v`): seconds of formatting records on all
  // threads, of handing them to htslib in order (which waits for its compression threads when
  // they fall behind), and of the final flush and close.
  struct Times {
    double format = 0, write = 0, close = 0;
  };
  Times times() const;

  // What the output holds, counted as the records are written (for `wtmap align --stats-json`):
  // the MAPQ of each mapped read's primary record, and the insert size (|TLEN|) of each proper
  // pair, at its first mate. Constant space; one pass over records already in hand.
  struct Counts {
    std::array<std::uint64_t, 256> primary_mapq{};
    std::uint64_t proper_pairs = 0;
    double insert_sum = 0, insert_squares = 0;
  };
  const Counts& counts() const;

 private:
  struct Impl;
  explicit SamWriter(std::unique_ptr<Impl> impl);
  // write() of gapped alignments, each read's lines with its pair fields where `mates` is given.
  Status write_gapped(const std::vector<SeqRecord>& reads, const std::vector<gapped::GappedReadAlignment>& alignments,
                      const std::vector<MateFields>* mates);
  std::unique_ptr<Impl> impl_;
};

// The MD tag of a placement of a read of `length` bases (SAM orientation).
std::string md_tag(const Placement& p, std::size_t length);

}  // namespace wtmap::aligner
