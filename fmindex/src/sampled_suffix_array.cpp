#include "wtmap/fmindex/sampled_suffix_array.hpp"

#include <algorithm>

namespace wtmap::fmindex {

Result<SampledSuffixArray> SampledSuffixArray::Builder::finish(Backend backend) {
  auto marks = RankSelectBitVector::build(words_.data(), n_, backend);
  if (!marks.ok()) return marks.status();
  words_ = {};
  auto sa = create(std::move(marks.value()), samples_);
  samples_ = {};
  return sa;
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
