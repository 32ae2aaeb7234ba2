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
  const std::uint64_t words = words_.size();
  pieces_.resize(std::max<std::uint64_t>(1, std::min<std::uint64_t>(words, 4 * wtmap::detail::cpu_threads())));
}

Status SampledSuffixArray::Builder::for_each_piece(
    const std::function<void(std::uint64_t, std::uint64_t, std::uint64_t)>& body) {
  const std::uint64_t words = words_.size(), count = pieces_.size();
  std::atomic<bool> out_of_memory{false};
  wtmap::detail::parallel_for_ranges(count, [&](std::uint64_t first, std::uint64_t last) {
    try {
      for (std::uint64_t p = first; p < last; ++p) {
        body(p, words * p / count * 32, std::min(n_, words * (p + 1) / count * 32));
      }
    } catch (const std::bad_alloc&) {
      out_of_memory = true;
    }
  }, 1);
  if (out_of_memory) return Status{StatusCode::out_of_memory, "out of host memory for the SA samples"};
  return {};
}

Result<SampledSuffixArray> SampledSuffixArray::Builder::finish(Backend backend) {
  auto marks = RankSelectBitVector::build(words_.data(), n_, backend);
  if (!marks.ok()) return marks.status();
  words_ = {};
  std::vector<std::uint64_t> samples;
  try {
    std::uint64_t total = 0;
    for (const auto& piece : pieces_) total += piece.size();
    samples.reserve(total);
  } catch (const std::bad_alloc&) {
    return Status{StatusCode::out_of_memory, "out of host memory for the SA samples"};
  }
  for (auto& piece : pieces_) {
    samples.insert(samples.end(), piece.begin(), piece.end());
    piece = {};
  }
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
