// wtmap fmindex (internal): the sorts of the blockwise suffix sorter (blockwise_suffix_array.hpp,
// difference_cover_sample.hpp) -- suffixes keyed by a fixed-width 64-bit key (a window of packed
// symbols, or a rank), sorted by key as CUB's radix sort of pairs would on the GPU -- and the
// dynamically scheduled loop over independent pieces of work (blocks, tied groups).
//
// radix_sort_by_key: stable LSD radix sort, 11 bits a pass (8 for short arrays), passes whose
// digit is the same for every key skipped (one pass over keys that are all equal); O(n) per
// pass, on the threads asked for, with a scratch array as large as the input.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <new>
#include <utility>
#include <vector>

#include "wtmap/core/detail/default_init_allocator.hpp"
#include "wtmap/core/detail/parallel.hpp"

namespace wtmap::fmindex::detail {

struct KeyedSuffix {
  std::uint64_t key;
  std::uint64_t position;
};

// Resized without zeroing (default_init_allocator.hpp): the keyed arrays are written whole right
// after, and the difference-cover sample's first pass (some 2 GB of keys and 2 GB of radix scratch
// for a 1 Gbp genome) was zeroed on one thread, its pages faulted in there, whatever the core
// count. (In huge pages, as the gapped mapper's rooms are, a 200 Mbp build took 3 % less time at
// a 25 % higher peak: not taken.)
using KeyedSuffixes = std::vector<KeyedSuffix, wtmap::detail::DefaultInitialising<std::allocator<KeyedSuffix>>>;

// body(i) for every i < count, each CPU thread taking the next i as it finishes one: for work of
// very uneven sizes (a block of repeats beside blocks of unique sequence).
template <class Body>
void for_each_dynamic(std::uint64_t count, Body body) {
  std::atomic<std::uint64_t> next{0};
  const std::uint64_t threads = std::min<std::uint64_t>(wtmap::detail::cpu_threads(), count);
  wtmap::detail::parallel_for_ranges(threads, [&](std::uint64_t, std::uint64_t) {
    for (std::uint64_t i = next++; i < count; i = next++) body(i);
  }, 1);
}

// On `threads` CPU threads (1: on the calling one).
inline void radix_sort_by_key(KeyedSuffix* items, std::uint64_t n, KeyedSuffix* scratch, std::uint64_t threads) {
  const std::uint64_t chunks = std::max<std::uint64_t>(1, std::min<std::uint64_t>(threads, n >> 16));
  auto chunk_range = [&](std::uint64_t c) { return std::pair{n * c / chunks, n * (c + 1) / chunks}; };
  // The digits where some keys differ: in a run of repeats (the sorter's ties) most or all agree,
  // and a pass over a digit they share would move nothing.
  std::vector<std::array<std::uint64_t, 2>> bits(chunks, {~std::uint64_t{0}, 0});  // per chunk: AND, OR
  wtmap::detail::parallel_for_ranges(chunks, [&](std::uint64_t first, std::uint64_t last) {
    for (std::uint64_t c = first; c < last; ++c) {
      const auto [begin, end] = chunk_range(c);
      std::uint64_t all = ~std::uint64_t{0}, any = 0;  // in registers: the chunks' entries share lines
      for (std::uint64_t i = begin; i < end; ++i) {
        all &= items[i].key;
        any |= items[i].key;
      }
      bits[c] = {all, any};
    }
  }, 1);
  std::uint64_t all_ones = ~std::uint64_t{0}, any_ones = 0;
  for (const auto& b : bits) all_ones &= b[0], any_ones |= b[1];
  const std::uint64_t varying = all_ones ^ any_ones;
  // Digits of 11 bits where there are many keys (6 passes over 64 bits instead of 8; a chunk's
  // 2048 destinations still fit the caches), of 8 below (fewer counts to clear and sum).
  const unsigned digit_bits = n >= (std::uint64_t{1} << 16) ? 11 : 8;
  const std::uint64_t digits = std::uint64_t{1} << digit_bits, mask = digits - 1;
  std::vector<std::uint64_t> counts(chunks * digits);  // chunk c's count of digit d at c * digits + d
  KeyedSuffix *from = items, *to = scratch;
  for (unsigned shift = 0; shift < 64; shift += digit_bits) {
    if (((varying >> shift) & mask) == 0) continue;
    wtmap::detail::parallel_for_ranges(chunks, [&](std::uint64_t first, std::uint64_t last) {
      for (std::uint64_t c = first; c < last; ++c) {
        std::uint64_t* own = counts.data() + c * digits;
        std::fill(own, own + digits, 0);
        const auto [begin, end] = chunk_range(c);
        for (std::uint64_t i = begin; i < end; ++i) ++own[(from[i].key >> shift) & mask];
      }
    }, 1);
    std::uint64_t total = 0;  // counts become each chunk's first slot per digit, in digit-major order
    for (std::uint64_t d = 0; d < digits; ++d) {
      for (std::uint64_t c = 0; c < chunks; ++c) {
        const std::uint64_t k = counts[c * digits + d];
        counts[c * digits + d] = total;
        total += k;
      }
    }
    wtmap::detail::parallel_for_ranges(chunks, [&](std::uint64_t first, std::uint64_t last) {
      for (std::uint64_t c = first; c < last; ++c) {
        const auto [begin, end] = chunk_range(c);
        std::uint64_t* own = counts.data() + c * digits;
        for (std::uint64_t i = begin; i < end; ++i) to[own[(from[i].key >> shift) & mask]++] = from[i];
      }
    }, 1);
    std::swap(from, to);
  }
  if (from == items) return;
  wtmap::detail::parallel_for_ranges(chunks, [&](std::uint64_t first, std::uint64_t last) {
    for (std::uint64_t c = first; c < last; ++c) {
      const auto [begin, end] = chunk_range(c);
      std::copy(from + begin, from + end, items + begin);
    }
  }, 1);
}

// Sorts by key on `threads` threads: std::sort below 256 items, else the radix sort with
// `scratch` grown to n.
inline void sort_by_key(KeyedSuffix* items, std::uint64_t n, KeyedSuffixes& scratch, std::uint64_t threads) {
  if (n < 256) {
    std::sort(items, items + n, [](const KeyedSuffix& a, const KeyedSuffix& b) { return a.key < b.key; });
    return;
  }
  if (scratch.size() < n) scratch.resize(n);
  radix_sort_by_key(items, n, scratch.data(), threads);
}

// on_run(begin, end) for each run [begin, end) of equal keys in items[0, n), sorted by key.
template <class OnRun>
void for_each_run(const KeyedSuffix* items, std::uint64_t n, OnRun on_run) {
  for (std::uint64_t run = 0; run < n;) {
    std::uint64_t run_end = run + 1;
    while (run_end < n && items[run_end].key == items[run].key) ++run_end;
    on_run(run, run_end);
    run = run_end;
  }
}

}  // namespace wtmap::fmindex::detail
