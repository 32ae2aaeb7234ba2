#include "wtmap/fmindex/packed_text.hpp"

namespace wtmap::fmindex {

Result<PackedText> PackedText::from_words(const std::vector<std::uint64_t>& words, std::uint64_t m,
                                          const std::vector<Fragment>& fragments, Backend backend) {
  if (words.size() != num_words(m)) return corrupt_data("the packed text holds " + std::to_string(words.size()) +
                                                        " words for " + std::to_string(m) + " bases");
  std::vector<std::uint64_t> ends;
  ends.reserve(fragments.size());
  for (const Fragment& f : fragments) ends.push_back(f.text_start + f.length);
  PackedText text;
  // A zero word before and after the words (PackedTextView::words), then the fragment ends.
  const std::size_t padded = words.size() + 2;
  auto buffer = Buffer::allocate(backend, (padded + ends.size()) * 8, "packed text");
  if (!buffer.ok()) return buffer.status();
  text.buffer_ = std::move(buffer.value());
  WTMAP_TRY(text.buffer_.copy_from_host(8, words.data(), words.size() * 8));
  WTMAP_TRY(text.buffer_.copy_from_host(padded * 8, ends.data(), ends.size() * 8));
  const auto* base = reinterpret_cast<const std::uint64_t*>(text.buffer_.data());
  text.view_.words = base + 1;
  text.view_.fragment_ends = base + padded;
  text.view_.num_fragments = ends.size();
  text.view_.forward_length = m;
  return text;
}

Result<PackedText> PackedText::build(const std::vector<std::uint8_t>& forward, const std::vector<Fragment>& fragments,
                                     Backend backend) {
  std::vector<std::uint64_t> words(num_words(forward.size()), 0);
  for (std::uint64_t i = 0; i < forward.size(); ++i) {
    const std::uint64_t base = forward[i] < 4 ? forward[i] : 0;  // a separator as A: one_fragment excludes it
    words[i / PackedTextView::kBasesPerWord] |= base << (2 * (i % PackedTextView::kBasesPerWord));
  }
  return from_words(words, forward.size(), fragments, backend);
}

Result<std::vector<std::uint64_t>> PackedText::words() const {
  std::vector<std::uint64_t> words(num_words(view_.forward_length));
  if (words.empty()) return words;
  WTMAP_TRY(buffer_.copy_to_host(8, words.data(), words.size() * 8));
  return words;
}

}  // namespace wtmap::fmindex
