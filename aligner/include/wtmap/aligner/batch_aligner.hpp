// wtmap aligner: aligning a batch of reads -- k-mismatch search of every read on the backend,
// choice of the reported hit, locate of the reported and alternative hits.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "wtmap/aligner/alignment.hpp"
#include "wtmap/aligner/hit_choice.hpp"
#include "wtmap/aligner/mismatch_search.hpp"
#include "wtmap/aligner/seq_reader.hpp"
#include "wtmap/core/pinned_allocator.hpp"
#include "wtmap/core/status.hpp"
#include "wtmap/fmindex/fm_index.hpp"

namespace wtmap::aligner {

struct AlignOptions {
  SearchParams search;
  unsigned max_alternatives = 3;  // -N (<= kMaxAlternatives): XA lists the other hits when X0 + X1 <= N
  // Each read is searched by one thread up to this many nodes; the few reads that need more are
  // searched again from the start by a group of 256 (ReadSearch's group steps, up to
  // search.work_cap): a block on the GPU, one CPU thread playing each member on the CPU, with the
  // same results. One GPU thread walks a dependent chain of ~1 us per node, so one read at the
  // full cap would hold a batch for ~65 ms; a group takes 256 nodes a step. On both backends, so
  // that a read's result does not depend on where it ran. 0: default_thread_work_slice of the
  // index.
  std::uint32_t thread_work_slice = 0;
};

// The slice for an index of `rows` rows: 1024, or 2048 where a random 15-mer, the longest
// k-mer lookup (search_kmer_length), occurs at least once on average (rows >= 4^15: genomes of
// 537 Mbp and more). The slice trades the launch's tail, a chain of up to `slice` nodes on few
// threads, against the groups' search of the reads past it, each about a read's depth of group
// steps. On E. coli 1024 is fastest (search only 0.0181 s against 0.0216 s at 2048). On a 1 Gbp
// genome a read with one mismatch among its last 15 bases takes 1,100-1,800 nodes, since the
// 15-mers with a second substitution there mostly occur; 2048 sends 1,676 of 10^6 reads to the
// groups instead of 27,094 and takes search only from 0.0727 s to 0.0540 s (H100;
// bench/history/RESULTS-2026-11-26.md). Both backends take the same slice, so a read goes the
// same way on either.
inline std::uint32_t default_thread_work_slice(std::uint64_t rows) {
  return rows >= (std::uint64_t{1} << 30) ? 2048 : 1024;
}

// A batch between the two halves of its alignment: BatchAligner::search fills it, finish turns it
// into alignments. The buffers are reused when the object is. A pipeline keeps one per batch in
// flight, so that the GPU searches batch i + 1 while the CPU threads finish batch i.
struct SearchedBatch {
  // The reads' bases: search codes (0..3 and 4, search_code), or for a GPU index their letters,
  // which the GPU encodes in its own copy. These three go to and from the GPU: page-locked, so
  // that their copies need no staging.
  PinnedVector<std::uint8_t> codes;
  PinnedVector<fmindex::PatternRef> patterns;  // each read's bases in codes
  // Each read's reported hit, located (a text position), with what placing it needs of its search
  // result, and the other hits it lists (XA; ReadChoice::first_other): on a GPU index chosen and
  // located by the GPU after its search, else on the host.
  // The other hits have room for max(1, N) - 1 a read, but a read only takes what it lists: on a
  // GPU index the choice kernel writes them here itself (page-locked host memory), one after
  // another, so that only those cross PCIe.
  PinnedVector<ReadChoice> choices;
  PinnedVector<OtherHit> others;
  // CPU index: the search results (a GPU index keeps them on the device), the codes packed
  // (packed_codes.hpp: the bases' words, then the mask's), and the reads that the slice cut short
  // (AlignOptions::thread_work_slice).
  std::vector<SearchResult> results;
  std::vector<std::uint64_t> packed_codes;
  std::vector<std::size_t> long_reads;

  // Room for a batch of `reads` reads of `bases` bases in all for an index on `backend`, the
  // pages of the per-read buffers written once, so that a search into it neither allocates nor
  // faults pages in (10^5 reads of 150 bases: some 22 MB, and 25 MB more of results on the CPU).
  // Leaves the batch empty.
  void reserve(std::size_t reads, std::size_t bases, Backend backend);
};

class MismatchBackend;  // (internal)

// Aligns batches of reads: encodes them, searches them on the index's backend (a CPU or a GPU
// MismatchBackend, the same steps and results), chooses and locates each read's reported hit and
// places it. Space: per batch in flight a SearchedBatch (some 250 bytes a read on a GPU index, 500
// on a CPU one); on a GPU, two launch slots of device scratch (the codes, choices and the group
// searches' stacks). Time: the search of mismatch_search.hpp per read.
class BatchAligner {
 public:
  // The index must outlive the aligner.
  BatchAligner(const fmindex::FmIndex& index, const AlignOptions& options);
  ~BatchAligner();
  BatchAligner(const BatchAligner&) = delete;
  BatchAligner& operator=(const BatchAligner&) = delete;

  // Aligns reads[0, n) into out[0, n) (resized): search(), then finish(). Reads with bases other
  // than A/C/G/T/N letters count those as N.
  Status align(const std::vector<SeqRecord>& reads, std::vector<ReadAlignment>& out);

  // The two halves of align(), for pipelines. search() encodes the reads (for a GPU index, on the
  // GPU) and searches them on the index's backend, where a GPU also chooses and locates their
  // reported hits; finish() chooses and locates them on the CPU, and places them; it takes the
  // reads and the SearchedBatch that search() was given (a different read count is an error).
  // One thread may call search() while another calls finish() on an earlier batch; each half
  // runs on one thread at a time. On a GPU index search() returns once the batch is launched, and
  // its results come back in finish() or in the second search() after it, whichever comes first:
  // so the next batch's kernel runs beside the tail of this one's (its slowest reads on few
  // threads). A searched batch must live until it is finished or the BatchAligner is destroyed.
  // A search() that fails with device_out_of_memory (its device buffers do not fit) has launched
  // nothing: the batch may be searched again, whole or in parts (release_device_memory first).
  Status search(const std::vector<SeqRecord>& reads, SearchedBatch& batch) {
    return search(reads.data(), reads.size(), batch);
  }
  Status finish(const std::vector<SeqRecord>& reads, SearchedBatch& batch, std::vector<ReadAlignment>& out) {
    return finish(reads.data(), reads.size(), batch, out);
  }
  // The same for reads[0, count) of an array (a part of a batch).
  Status search(const SeqRecord* reads, std::size_t count, SearchedBatch& batch);
  Status finish(const SeqRecord* reads, std::size_t count, SearchedBatch& batch, std::vector<ReadAlignment>& out);

  // Waits for every batch in flight (their results kept in their SearchedBatch for finish()) and
  // frees the device buffers kept between batches; the next search() makes them anew, for its
  // own size. After a device_out_of_memory: the buffers of a larger batch hold no memory then.
  Status release_device_memory();

  // Wall seconds spent in each stage, summed over all calls: where a batch's time goes (the
  // search includes the copies of reads and results between host and GPU, and on the GPU the
  // encoding, the long reads' group search, hit choice and locate; encode is then the gathering
  // of the letters). search() adds to encode and search, finish() to the others.
  struct StageSeconds {
    // search: on a GPU index the launch, and the wait for the results where they are collected.
    // choose: the host's hit choice; locate: its locate, and the placement of every read.
    double encode = 0, search = 0, choose = 0, locate = 0;
    std::uint64_t search_nodes = 0;  // search steps (SearchResult::work) of all reads
    // Reads that needed more than options.thread_work_slice nodes, searched again in groups, and
    // the group searches' nodes.
    std::uint64_t long_reads = 0, long_read_nodes = 0;
    // The most nodes one read took, and the reads the work cap (or a full stack) stopped.
    std::uint64_t max_read_nodes = 0, capped_reads = 0;
    // GPU index: each batch's device work, from its reads' arrival on the device to its results'
    // in host memory (CUDA events; encoding, search, hit choice and locate, and the copies back).
    // For batches one at a time, the search of reads already on the GPU, locate included; batches
    // in flight together overlap, and their sum then exceeds the wall time.
    double device = 0;
  };
  const StageSeconds& stage_seconds() const { return seconds_; }
  // The options it runs with (a thread_work_slice of 0 resolved for the index).
  const AlignOptions& options() const { return options_; }

 private:
  // finish()'s placement of every read from its choice (and the counts of search nodes).
  void place_chosen(const SearchedBatch& batch, std::vector<ReadAlignment>& out);

  const fmindex::FmIndex& index_;
  AlignOptions options_;
  SearchedBatch own_;  // align()'s
  StageSeconds seconds_;
  // The index's backend: CPU loops or GPU kernels (mismatch_backend.cuh). Declared last, so
  // destroyed first: a GPU backend waits for its kernels, which write into own_.
  std::unique_ptr<MismatchBackend> backend_;
};

}  // namespace wtmap::aligner
