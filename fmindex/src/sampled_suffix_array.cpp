#include "wtmap/fmindex/sampled_suffix_array.hpp"

#include <divsufsort64.h>

#include <algorithm>
#include <atomic>
#include <new>

#include "wtmap/core/detail/parallel.hpp"

namespace wtmap::fmindex {

Result<std::vector<std::int64_t>> full_suffix_array(const std::uint8_t* text, std::uint64_t n) {
  static_assert(sizeof(saidx64_t) == sizeof(std::int64_t), "divsufsort64 writes 64-bit indices");
  std::vector<std::int64_t> sa(n);
  if (divsufsort64(text, reinterpret_cast<saidx64_t*>(sa.data()), static_cast<saidx64_t>(n)) != 0) {
    return Status{StatusCode::out_of_memory, "divsufsort64 failed (out of memory?)"};
  }
  return sa;
}

SampledSuffixArray::Builder::Builder(std::uint64_t n, std::uint32_t sample_rate)
    : n_(n), rate_(sample_rate), words_((n + 31) / 32, 0) {
  pieces_.resize(std::max<std::uint64_t>(1, std::min<std::uint64_t>(words_.size(), 4 * wtmap::detail::cpu_threads())));
  samples_.reserve((n + sample_rate - 1) / sample_rate);  // the multiples of the rate; separators add a few
}

Status SampledSuffixArray::Builder::for_each_piece(
    std::uint64_t begin, std::uint64_t end, const std::function<void(std::uint64_t, std::uint64_t, std::uint64_t)>& body) {
  if (begin != next_row_ || end < begin || end > n_) {
    return Status{StatusCode::invalid_argument, "SA samples: rows given out of order"};
  }
  next_row_ = end;
  const std::uint64_t count = pieces_.size();
  // Piece p's rows: from the first multiple of 32 at or past its share, so that no two pieces of
  // a call share a word of marks (the call before this one has finished with them).
  auto piece_start = [&](std::uint64_t p) {
    if (p == 0) return begin;
    if (p == count) return end;
    return std::min(end, (begin + (end - begin) * p / count + 31) / 32 * 32);
  };
  std::atomic<bool> out_of_memory{false};
  wtmap::detail::parallel_for_ranges(count, [&](std::uint64_t first, std::uint64_t last) {
    try {
      for (std::uint64_t p = first; p < last; ++p) body(p, piece_start(p), piece_start(p + 1));
    } catch (const std::bad_alloc&) {
      out_of_memory = true;
    }
  }, 1);
  try {
    if (!out_of_memory) {
      std::uint64_t added = 0;
      for (const auto& piece : pieces_) added += piece.size();
      const std::uint64_t needed = samples_.size() + added;
      if (samples_.capacity() < needed) samples_.reserve(needed + needed / 16);
      for (const auto& piece : pieces_) samples_.insert(samples_.end(), piece.begin(), piece.end());
    }
  } catch (const std::bad_alloc&) {
    out_of_memory = true;
  }
  for (auto& piece : pieces_) std::vector<std::uint64_t>().swap(piece);  // `= {}` keeps the capacity
  if (out_of_memory) return Status{StatusCode::out_of_memory, "out of host memory for the SA samples"};
  return {};
}

Result<SampledSuffixArray> SampledSuffixArray::Builder::finish(Backend backend) {
  if (next_row_ != n_) return Status{StatusCode::invalid_argument, "SA samples: not every row was given"};
  auto marks = RankSelectBitVector::build(words_.data(), n_, backend);
  if (!marks.ok()) return marks.status();
  std::vector<std::uint32_t>().swap(words_);
  std::vector<std::uint64_t> samples = std::move(samples_);
  return create(std::move(marks.value()), samples);
}

Result<SampledSuffixArray> SampledSuffixArray::empty(Backend backend) {
  const std::uint32_t no_words[1] = {0};
  auto marks = RankSelectBitVector::build(no_words, 0, backend);
  if (!marks.ok()) return marks.status();
  return create(std::move(marks.value()), {});
}

Result<SampledSuffixArray> SampledSuffixArray::create(RankSelectBitVector&& marks, const std::vector<std::uint64_t>& samples) {
  const std::uint64_t n = marks.size();
  if (samples.size() != marks.ones()) return corrupt_data("SA samples do not match the sampled rows");
  for (const std::uint64_t s : samples) {
    if (s >= n) return corrupt_data("corrupt SA samples");
  }
  SampledSuffixArray sa(std::move(marks));
  // At least one word, so that the view's pointer is never null.
  auto buffer = Buffer::allocate(sa.marks_.backend(), std::max<std::size_t>(samples.size(), 1) * 8, "SA samples");
  if (!buffer.ok()) return buffer.status();
  sa.samples_ = std::move(buffer.value());
  WTMAP_TRY(sa.samples_.copy_from_host(0, samples.data(), samples.size() * 8));
  sa.view_.sampled = sa.marks_.view();
  sa.view_.sa_samples = reinterpret_cast<const std::uint64_t*>(sa.samples_.data());
  return sa;
}

Result<std::vector<std::uint64_t>> SampledSuffixArray::samples() const {
  std::vector<std::uint64_t> values(num_samples());
  WTMAP_TRY(samples_.copy_to_host(0, values.data(), values.size() * 8));
  return values;
}

}  // namespace wtmap::fmindex
