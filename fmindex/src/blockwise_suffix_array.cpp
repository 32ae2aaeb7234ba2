#include "wtmap/fmindex/blockwise_suffix_array.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <new>
#include <future>
#include <optional>
#include <system_error>
#include <random>
#include <vector>

#include "gpu_round_sorter.hpp"
#include "keyed_suffix_sort.hpp"
#include "wtmap/core/detail/default_init_allocator.hpp"
#include "wtmap/core/device_memory.hpp"
#include "wtmap/fmindex/difference_cover_sample.hpp"

namespace wtmap::fmindex {
namespace {

using detail::KeyedSuffix;

Status out_of_memory() { return Status{StatusCode::out_of_memory, "out of host memory for the blockwise suffix sort"}; }

// Whether text[n - 1] is the text's only 0, on all CPU threads, a window of K symbols at a time
// (symbol by symbol, a 2 G-symbol text took seconds): a window v holds a 0 exactly where
// (v - low) & ~v & high != 0, low and high the lowest and highest bit of each b-bit field (a
// borrow can only spread above a 0 field, so the test has no false answer).
bool ends_in_unique_terminator(const PackedSymbolsView& text) {
  if (text.n == 0 || text.symbol(text.n - 1) != 0) return false;
  std::uint64_t low = 0;
  for (std::uint32_t j = 0; j < text.per_window; ++j) low |= std::uint64_t{1} << (j * text.bits);
  const std::uint64_t high = low << (text.bits - 1);
  std::atomic<bool> other_zero{false};
  wtmap::detail::parallel_for_ranges(text.n - 1, [&](std::uint64_t begin, std::uint64_t end) {
    std::uint64_t i = begin;
    for (; i + text.per_window <= end; i += text.per_window) {
      const std::uint64_t v = text.window(i);
      if (((v - low) & ~v & high) != 0) {
        other_zero = true;
        return;
      }
    }
    for (; i < end; ++i) {
      if (text.symbol(i) == 0) {
        other_zero = true;
        return;
      }
    }
  });
  return !other_zero;
}

struct Round {  // buckets [first, last) and their rows [first_row, first_row + size)
  std::uint64_t first, last, first_row, size;
};

// The steps of blockwise_suffix_array (blockwise_suffix_array.hpp) after the sample's ranks.
class BlockwiseSorter {
 public:
  BlockwiseSorter(const PackedSymbolsView& text, const DifferenceCoverView& dc, const BlockwiseSuffixArrayOptions& options)
      : text_(text), dc_(dc), options_(options) {}

  Status run(const SuffixArrayConsumer& consume);

 private:
  void choose_splitters();
  Status count_buckets();
  // The GPU's sorter, its text and ranks on the device; the most rows a round can then hold.
  Status start_gpu(std::uint64_t& most_rows);
  std::vector<Round> plan_rounds(std::uint64_t most_rows) const;
  detail::RoundBounds bounds_of(const Round& round) const;
  // The round's rows by the CPU: its buckets filled by a scan, then sorted in parallel.
  Status sort_round(const Round& round, std::uint64_t* rows);
  // Every round sorted and handed to the consumer in order, by the CPU or the GPU.
  using Rows = std::vector<std::uint64_t, wtmap::detail::DefaultInitialising<std::allocator<std::uint64_t>>>;
  Status sort_rounds_on_cpu(const std::vector<Round>& rounds, std::uint64_t largest, const SuffixArrayConsumer& consume);
  Status sort_rounds_on_gpu(const std::vector<Round>& rounds, std::uint64_t largest, const SuffixArrayConsumer& consume);
  void fill_round(const Round& round, std::uint64_t* rows);
  std::uint64_t chunk_start(std::uint64_t c) const { return text_.n * c / chunks_; }
  void sort_bucket(std::uint64_t* positions, std::uint64_t count) const;
  void report(const Round& round, std::uint64_t done_rounds, std::uint64_t rounds) const;

  const PackedSymbolsView& text_;
  const DifferenceCoverView& dc_;
  const BlockwiseSuffixArrayOptions& options_;
  std::uint64_t bucket_of(std::uint64_t i, std::uint64_t key) const { return splitter_view_.bucket_of(text_, dc_, i, key); }

  std::vector<std::uint64_t> splitters_, splitter_keys_, prefix_start_;  // splitters.hpp's SplitterView
  detail::SplitterView splitter_view_;                                     // over these
  std::vector<std::uint64_t> bucket_rows_;  // per bucket, splitters + 1 of them: its first row, then n
  std::uint64_t chunks_ = 1;                 // the scans' pieces of the text, chunk_start(c) on
  std::vector<std::vector<std::uint64_t>> chunk_counts_;  // per chunk and bucket: its suffixes
  std::optional<detail::GpuRoundSorter> gpu_;             // Backend::gpu: the rounds' sorter
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

void BlockwiseSorter::choose_splitters() {
  const std::uint64_t n = text_.n, wanted = n / options_.bucket_size;
  std::mt19937_64 random(options_.seed);
  splitters_.resize(wanted);
  for (std::uint64_t& s : splitters_) s = std::uniform_int_distribution<std::uint64_t>(0, n - 1)(random);
  std::sort(splitters_.begin(), splitters_.end());
  splitters_.erase(std::unique(splitters_.begin(), splitters_.end()), splitters_.end());
  std::sort(splitters_.begin(), splitters_.end(), [&](std::uint64_t a, std::uint64_t b) {
    return compare_suffixes(text_, dc_, a, b) < 0;
  });
  splitter_keys_.resize(splitters_.size());
  for (std::size_t k = 0; k < splitters_.size(); ++k) splitter_keys_[k] = text_.window(splitters_[k]);
  // A window holds per_window * bits >= 56 bits, right-aligned.
  const std::uint32_t prefix_shift = text_.per_window * text_.bits - detail::SplitterView::kPrefixBits;
  prefix_start_.assign((std::size_t{1} << detail::SplitterView::kPrefixBits) + 1, 0);
  std::size_t k = 0;
  for (std::size_t p = 0; p < prefix_start_.size(); ++p) {
    while (k < splitter_keys_.size() && (splitter_keys_[k] >> prefix_shift) < p) ++k;
    prefix_start_[p] = k;
  }
  splitter_view_ = {splitters_.data(), splitter_keys_.data(), prefix_start_.data(), splitters_.size(), prefix_shift};
}

// One scan: each bucket's rows from its count of suffixes. The CPU's text chunks count their own
// (chunk_counts_, where fill_round's chunks then start writing); the GPU counts in one pass.
Status BlockwiseSorter::count_buckets() {
  const std::uint64_t buckets = splitters_.size() + 1;
  try {
    bucket_rows_.assign(buckets + 1, 0);
    if (gpu_) {
      std::vector<std::uint64_t> counts;
      WTMAP_TRY(gpu_->count_buckets(splitter_view_, counts));
      std::copy(counts.begin(), counts.end(), bucket_rows_.begin() + 1);
    } else {
      chunks_ = std::max<std::uint64_t>(1, std::min<std::uint64_t>(4 * wtmap::detail::cpu_threads(), text_.n >> 16));
      chunk_counts_.assign(chunks_, std::vector<std::uint64_t>(buckets, 0));
      wtmap::detail::parallel_for_ranges(chunks_, [&](std::uint64_t first, std::uint64_t last) {
        for (std::uint64_t c = first; c < last; ++c) {
          std::vector<std::uint64_t>& counts = chunk_counts_[c];
          for (std::uint64_t i = chunk_start(c); i < chunk_start(c + 1); ++i) ++counts[bucket_of(i, text_.window(i))];
        }
      }, 1);
      for (const auto& counts : chunk_counts_) {
        for (std::uint64_t b = 0; b < buckets; ++b) bucket_rows_[b + 1] += counts[b];
      }
    }
  } catch (const std::bad_alloc&) {
    return out_of_memory();
  }
  for (std::uint64_t b = 0; b < buckets; ++b) bucket_rows_[b + 1] += bucket_rows_[b];
  return {};
}

// The device keeps the text and the ranks; a round takes what it leaves, less a tenth for CUB's
// and the driver's own.
Status BlockwiseSorter::start_gpu(std::uint64_t& most_rows) {
  auto sorter = detail::GpuRoundSorter::create(text_, dc_);
  if (!sorter.ok()) return sorter.status();
  gpu_.emplace(std::move(*sorter));
  auto available = device_memory_available();
  if (!available.ok()) return available.status();
  most_rows = std::min(most_rows, std::max<std::uint64_t>(1, gpu_->rows_within(*available / 10 * 9)));
  return {};
}

detail::RoundBounds BlockwiseSorter::bounds_of(const Round& round) const {
  detail::RoundBounds b;
  b.has_lower = round.first > 0;
  b.has_upper = round.last <= splitters_.size();
  if (b.has_lower) {
    b.lower = splitters_[round.first - 1];
    b.lower_key = splitter_keys_[round.first - 1];
  }
  if (b.has_upper) {
    b.upper = splitters_[round.last - 1];
    b.upper_key = splitter_keys_[round.last - 1];
  }
  return b;
}

std::vector<Round> BlockwiseSorter::plan_rounds(std::uint64_t most_rows) const {
  std::vector<Round> rounds;
  const std::uint64_t buckets = splitters_.size() + 1;
  for (std::uint64_t first = 0; first < buckets;) {
    std::uint64_t last = first + 1;
    while (last < buckets && bucket_rows_[last + 1] - bucket_rows_[first] <= most_rows) ++last;
    rounds.push_back({first, last, bucket_rows_[first], bucket_rows_[last] - bucket_rows_[first]});
    first = last;
  }
  return rounds;
}

// One scan of the text: each chunk writes the round's suffixes into its own rows of their buckets
// (after the earlier chunks' counts), in text order. A key outside the round's splitters' keys is
// decided without a search.
void BlockwiseSorter::fill_round(const Round& round, std::uint64_t* rows) {
  const bool has_lower = round.first > 0, has_upper = round.last <= splitters_.size();
  const std::uint64_t lower = has_lower ? splitter_keys_[round.first - 1] : 0;
  const std::uint64_t upper = has_upper ? splitter_keys_[round.last - 1] : 0;
  const std::uint64_t width = round.last - round.first;
  std::vector<std::uint64_t> next(chunks_ * width);  // chunk c's next row in bucket round.first + j
  for (std::uint64_t j = 0; j < width; ++j) {
    std::uint64_t at = bucket_rows_[round.first + j] - round.first_row;
    for (std::uint64_t c = 0; c < chunks_; ++c) {
      next[c * width + j] = at;
      at += chunk_counts_[c][round.first + j];
    }
  }
  // Keys outside [lower, upper] (all of them but about one round's share) are passed over without
  // a branch: the positions inside are gathered in a batch first, then searched.
  const std::uint64_t low = has_lower ? lower : 0, high = has_upper ? upper : ~std::uint64_t{0};
  constexpr std::uint64_t kBatch = 4096;
  wtmap::detail::parallel_for_ranges(chunks_, [&](std::uint64_t first, std::uint64_t last) {
    std::uint64_t inside[kBatch], inside_key[kBatch];
    for (std::uint64_t c = first; c < last; ++c) {
      std::uint64_t* mine = next.data() + c * width;
      for (std::uint64_t start = chunk_start(c); start < chunk_start(c + 1); start += kBatch) {
        const std::uint64_t end = std::min(start + kBatch, chunk_start(c + 1));
        std::uint64_t found = 0;
        for (std::uint64_t i = start; i < end; ++i) {
          const std::uint64_t key = text_.window(i);
          inside[found] = i;
          inside_key[found] = key;
          found += static_cast<std::uint64_t>(key >= low) & static_cast<std::uint64_t>(key <= high);
        }
        for (std::uint64_t k = 0; k < found; ++k) {
          const std::uint64_t i = inside[k];
          const std::uint64_t b = bucket_of(i, inside_key[k]);
          if (b >= round.first && b < round.last) rows[mine[b - round.first]++] = i;
        }
      }
    }
  }, 1);
}

// By the K-symbol key (a radix sort of pairs), then the runs of equal keys by the next
// K symbols, and so on while they tie, up to v symbols (a repeat costs a linear pass per K
// symbols, where a comparison sort would read them again at every comparison); what still ties
// then is ordered by compare_suffixes at one rank lookup a comparison (a segmented sort there).
void BlockwiseSorter::sort_bucket(std::uint64_t* positions, std::uint64_t count) const {
  detail::KeyedSuffixes keyed(count), scratch;
  // A bucket's suffixes start anywhere in the text: each window is a cache miss, asked for early.
  constexpr std::uint64_t kAhead = 16;
  const auto prefetch_window = [&](std::uint64_t position) {
    __builtin_prefetch(text_.words + (position * text_.bits >> 6));
  };
  for (std::uint64_t k = 0; k < count; ++k) {
    if (k + kAhead < count) prefetch_window(positions[k + kAhead]);
    keyed[k] = {text_.window(positions[k]), positions[k]};
  }
  detail::sort_by_key(keyed.data(), count, scratch, 1);  // one thread a bucket: the buckets run in parallel
  std::vector<std::pair<std::uint64_t, std::uint64_t>> tied, still_tied;
  auto collect_ties = [&](std::uint64_t offset, std::uint64_t size) {
    detail::for_each_run(keyed.data() + offset, size, [&](std::uint64_t run, std::uint64_t run_end) {
      if (run_end - run > 1) still_tied.emplace_back(offset + run, offset + run_end);
    });
  };
  collect_ties(0, count);
  std::uint64_t known = text_.per_window;  // symbols every tied run agrees on
  for (; !still_tied.empty() && known + 1 < dc_.period(); known += text_.per_window) {
    tied.swap(still_tied);
    still_tied.clear();
    for (const auto& [begin, end] : tied) {
      for (std::uint64_t k = begin; k < end; ++k) {
        if (k + kAhead < end) prefetch_window(keyed[k + kAhead].position + known);
        keyed[k].key = text_.window(keyed[k].position + known);
      }
      detail::sort_by_key(keyed.data() + begin, end - begin, scratch, 1);
      collect_ties(begin, end - begin);
    }
  }
  for (const auto& [begin, end] : still_tied) {
    std::sort(keyed.begin() + begin, keyed.begin() + end, [&](const KeyedSuffix& a, const KeyedSuffix& b) {
      return compare_suffixes(text_, dc_, a.position, b.position, known) < 0;
    });
  }
  for (std::uint64_t k = 0; k < count; ++k) positions[k] = keyed[k].position;
}

void BlockwiseSorter::report(const Round& round, std::uint64_t done_rounds, std::uint64_t rounds) const {
  if (!options_.progress) return;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double share = static_cast<double>(round.first_row + round.size) / static_cast<double>(text_.n);
  char line[160];
  std::snprintf(line, sizeof line, "suffix array: round %llu of %llu sorted, %.0f %% of the rows, about %.0f s left",
                static_cast<unsigned long long>(done_rounds), static_cast<unsigned long long>(rounds), 100 * share,
                share > 0 ? elapsed * (1 - share) / share : 0.0);
  options_.progress(line);
}

Status BlockwiseSorter::sort_round(const Round& round, std::uint64_t* rows) {
  fill_round(round, rows);
  std::atomic<bool> failed{false};
  detail::for_each_dynamic(round.last - round.first, [&](std::uint64_t j) {
    const std::uint64_t b = round.first + j;
    try {
      sort_bucket(rows + (bucket_rows_[b] - round.first_row), bucket_rows_[b + 1] - bucket_rows_[b]);
    } catch (const std::bad_alloc&) {
      failed = true;
    }
  });
  return failed ? out_of_memory() : Status{};
}

Status BlockwiseSorter::run(const SuffixArrayConsumer& consume) {
  choose_splitters();
  if (options_.progress) {
    options_.progress("suffix array: counting the suffixes of " + std::to_string(splitters_.size() + 1) + " buckets on the " +
                      backend_name(options_.backend));
  }
  std::uint64_t most_rows = options_.round_size;
  if (options_.backend == Backend::gpu) WTMAP_TRY(start_gpu(most_rows));
  WTMAP_TRY(count_buckets());
  const std::vector<Round> rounds = plan_rounds(most_rows);
  std::uint64_t largest = 0;
  for (const Round& r : rounds) largest = std::max(largest, r.size);
  if (gpu_) WTMAP_TRY(gpu_->reserve(largest));
  if (options_.progress) {
    options_.progress("suffix array: " + std::to_string(splitters_.size() + 1) + " buckets in " +
                      std::to_string(rounds.size()) + " rounds of at most " + std::to_string(largest) + " rows, sorted on the " +
                      backend_name(options_.backend));
  }
  return gpu_ ? sort_rounds_on_gpu(rounds, largest, consume) : sort_rounds_on_cpu(rounds, largest, consume);
}

Status BlockwiseSorter::sort_rounds_on_cpu(const std::vector<Round>& rounds, std::uint64_t largest,
                                           const SuffixArrayConsumer& consume) {
  Rows rows(largest);
  for (std::size_t k = 0; k < rounds.size(); ++k) {
    const Round& round = rounds[k];
    if (round.size == 0) continue;  // an empty first bucket before one too large to join it
    WTMAP_TRY(sort_round(round, rows.data()));
    WTMAP_TRY(consume(round.first_row, rows.data(), round.size));
    report(round, k + 1, rounds.size());
  }
  return {};
}

// While a thread of its own hands round k's rows to the consumer, the GPU sorts round k + 1 into
// the other buffer (one after the other, a round of 7 * 10^8 rows took 3 s on an H200 host).
Status BlockwiseSorter::sort_rounds_on_gpu(const std::vector<Round>& rounds, std::uint64_t largest,
                                           const SuffixArrayConsumer& consume) {
  Rows buffers[2] = {Rows(largest), Rows(largest)};
  std::future<Status> consuming;  // the round before's
  auto consumed = [&]() { return consuming.valid() ? consuming.get() : Status{}; };
  std::size_t next = 0;
  for (std::size_t k = 0; k < rounds.size(); ++k) {
    const Round* round = &rounds[k];
    if (round->size == 0) continue;
    std::uint64_t* rows = buffers[next].data();
    const Status sorted = gpu_->sort_round(bounds_of(*round), round->size, rows);
    next ^= 1;
    WTMAP_TRY(consumed());
    WTMAP_TRY(sorted);
    auto hand_over = [this, &consume, &rounds, round, rows, k]() {
      const Status s = consume(round->first_row, rows, round->size);
      if (s.ok()) report(*round, k + 1, rounds.size());
      return s;
    };
    try {
      consuming = std::async(std::launch::async, hand_over);
    } catch (const std::system_error&) {  // no thread to spare: this one consumes
      WTMAP_TRY(hand_over());
    }
  }
  return consumed();
}

}  // namespace

BlockwiseSuffixArrayOptions resolved_blockwise_options(std::uint64_t n, const BlockwiseSuffixArrayOptions& options) {
  BlockwiseSuffixArrayOptions resolved = options;
  const std::uint64_t threads = wtmap::detail::cpu_threads();
  // Some 256 buckets per thread for the dynamic schedule, so that the threads' sort scratch (32
  // bytes a suffix) stays within 0.5 bytes a symbol even for buckets 4x their mean; at most 1M.
  // The GPU sorts a round whole, its buckets only cut the rounds: 4097 of them at most, counted in
  // a block's shared memory.
  if (resolved.bucket_size == 0) {
    resolved.bucket_size = resolved.backend == Backend::gpu ? std::max<std::uint64_t>(n / 4096, 1 << 12)
                                                            : std::clamp<std::uint64_t>(n / (256 * threads), 1 << 12, 1 << 20);
  }
  // The GPU's rounds are held twice on the host (one sorted while the other is consumed).
  if (resolved.round_size == 0) {
    resolved.round_size = std::max<std::uint64_t>(n / (resolved.backend == Backend::gpu ? 16 : 8), std::uint64_t{1} << 24);
  }
  return resolved;
}

std::uint64_t blockwise_suffix_array_bytes(std::uint64_t n, std::uint32_t bits, const BlockwiseSuffixArrayOptions& options,
                                           std::uint64_t consumer_bytes) {
  const BlockwiseSuffixArrayOptions o = resolved_blockwise_options(n, options);
  const std::uint64_t text = PackedSymbols::num_words(n, bits) * 8;
  const std::uint64_t sample = DifferenceCoverSample::num_slots(n, o.period);
  const std::uint64_t ranking = 48 * sample;
  const std::uint64_t bucket_sorts = o.backend == Backend::gpu ? 0 : 32 * std::min(n, 4 * o.bucket_size) * wtmap::detail::cpu_threads();
  const std::uint64_t round_buffers = o.backend == Backend::gpu ? 2 : 1;
  const std::uint64_t round = 8 * sample + 8 * round_buffers * std::min(n, o.round_size) + bucket_sorts;
  return text + std::max(ranking, round + consumer_bytes);
}

Status blockwise_suffix_array(const PackedSymbolsView& text, const BlockwiseSuffixArrayOptions& options,
                              const SuffixArrayConsumer& consume) {
  if (!ends_in_unique_terminator(text)) {
    return invalid_argument("blockwise suffix sort: the text must end in its only 0 (the terminator)");
  }
  const BlockwiseSuffixArrayOptions resolved = resolved_blockwise_options(text.n, options);
  if (resolved.progress) resolved.progress("suffix array: ranking the difference-cover sample (period " +
                                           std::to_string(resolved.period) + ") on the " + backend_name(resolved.backend));
  auto dc = DifferenceCoverSample::build(text, resolved.period, resolved.backend);
  if (!dc.ok()) return dc.status();
  try {  // the threads catch their own; this is for the calling thread's arrays
    BlockwiseSorter sorter(text, dc->view(), resolved);
    return sorter.run(consume);
  } catch (const std::bad_alloc&) {
    return out_of_memory();
  }
}

}  // namespace wtmap::fmindex
