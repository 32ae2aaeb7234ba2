// wtmap fmindex: the suffix array of a text delivered in row order, a few blocks at a time, never
// whole -- Kärkkäinen's blockwise suffix sorting with a difference-cover sample (J. Kärkkäinen,
// "Fast BWT in small space by blockwise suffix sorting", TCS 387, 2007; the approach of
// bowtie-build). The index build consumes the rows as they come (fm_index_pipeline.hpp), so the
// 8 bytes a symbol of a whole suffix array (divsufsort64) are never held.
//
// Steps, each on all CPU threads and written so that the GPU can run the same ones (the shared
// WTMAP_HD comparison of difference_cover_sample.hpp, sorts of 64-bit keys as CUB's radix sort):
//  1. the difference-cover sample of period v ranked (difference_cover_sample.hpp): any two
//     suffixes then compare in at most v symbols and one rank lookup, however long their repeat;
//  2. splitters: n / bucket_size random suffixes, sorted; they cut the suffix array into buckets
//     of bucket_size suffixes on average whatever the text (a random position has a uniformly
//     random row);
//  3. one scan of the text counts each bucket's suffixes (a binary search among the splitters,
//     by their first K symbols' key first); consecutive buckets are grouped into rounds of at
//     most round_size suffixes (a round is one bucket where a bucket alone is larger);
//  4. per round: a scan of the text collects the round's suffixes into their buckets (each text
//     chunk into its own rows, from the count scan's per-chunk counts); each bucket is sorted on
//     its own, the buckets in parallel -- radix by the K-symbol key, the runs still tied by the
//     next K symbols and so on up to v, then by compare_suffixes at one rank lookup each -- and
//     the round's rows go to the consumer. With Backend::gpu the GPU does this step instead, the
//     whole round at once (src/gpu_round_sorter.hpp), in rounds that fit the device's memory.
//
// Time: O(n log b) key comparisons for the splitter searches (b buckets) and O(n) radix passes,
// plus for a suffix inside a repeat up to v / K window reads per scan and per tied pass; a scan
// of the text per round. Space: the packed text (b n / 8 bytes), the sample's ranks (8 n |D| / v
// bytes: 0.5 a symbol at v = 1024, 3 a symbol while they are sorted), a round (8 round_size
// bytes) and each thread's bucket being sorted (32 bytes a suffix): blockwise_suffix_array_bytes.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "wtmap/core/config.hpp"
#include "wtmap/core/status.hpp"
#include "wtmap/fmindex/packed_symbols.hpp"

namespace wtmap::fmindex {

struct BlockwiseSuffixArrayOptions {
  // v, a power of 2: 0.5 bytes a symbol of sample ranks at 1024 (0.25 at 4096, where a suffix
  // inside a long repeat costs 3-4x the symbol reads: 5 Mbp of poly-A sorted in 21 s of CPU, 6 at 1024).
  std::uint32_t period = 1024;
  std::uint64_t bucket_size = 0;  // mean suffixes per bucket (>= 1); 0: by size and threads
  std::uint64_t round_size = 0;   // most suffixes per round (>= 1); 0: n / 8 (GPU n / 16), at least 2^24
  std::uint64_t seed = 0x5eed;    // the splitters' positions (the suffix array does not depend on it)
  // Where the rounds are sorted: gpu, the current GPU (gpu_round_sorter.hpp: each round picked out
  // of the text and sorted whole there, the round at most what the device has room for).
  Backend backend = Backend::cpu;
  std::function<void(const std::string&)> progress;  // optional: a line per round (the index build's if unset)
};

// The bucket and round sizes that `options` gives a text of n symbols (its zeros replaced).
BlockwiseSuffixArrayOptions resolved_blockwise_options(std::uint64_t n, const BlockwiseSuffixArrayOptions& options);

// Host bytes that blockwise_suffix_array holds at its peak for a text of n symbols of `bits` bits,
// the packed text included, with a consumer that holds consumer_bytes from its first rows on: the
// larger of ranking the sample (positions, ranks, keys and radix scratch: 48 bytes a sample
// suffix) and a round (the ranks, 8 bytes a suffix of the round -- 16 on the GPU, which holds two
// rounds of half the size --, on the CPU 32 bytes a suffix of a bucket per thread -- keys and radix
// scratch -- buckets up to 4x their mean -- and the consumer).
std::uint64_t blockwise_suffix_array_bytes(std::uint64_t n, std::uint32_t bits, const BlockwiseSuffixArrayOptions& options,
                                           std::uint64_t consumer_bytes);

// Rows [first_row, first_row + count) of the suffix array: their text positions, valid until the
// call returns. Called in row order (first_row is the previous call's end), one call at a time:
// on the calling thread, or with Backend::gpu on a thread of the sorter's while the GPU sorts the
// next round; it may use every CPU thread.
using SuffixArrayConsumer = std::function<Status(std::uint64_t first_row, const std::uint64_t* sa, std::uint64_t count)>;

// The suffix array of `text`, whose last symbol must be its only 0 (the terminator $; otherwise
// invalid_argument), to `consume` in row order; a consumer's error stops it and is returned.
Status blockwise_suffix_array(const PackedSymbolsView& text, const BlockwiseSuffixArrayOptions& options,
                              const SuffixArrayConsumer& consume);

}  // namespace wtmap::fmindex
