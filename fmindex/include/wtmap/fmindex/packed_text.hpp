// wtmap fmindex: the owner of a DNA index's packed forward text (packed_text_view.hpp) on the CPU
// or the GPU.
//
// Space: 2 bits per forward base plus 8 bytes per fragment, on the backend; nothing on the host
// once built. Construction O(m). Saved in the index file's PACK section (format version 3); an
// index file of version 1 has none, and an FmIndex loaded from one has an empty PackedText.
#pragma once

#include <cstdint>
#include <vector>

#include "wtmap/core/buffer.hpp"
#include "wtmap/core/status.hpp"
#include "wtmap/fmindex/packed_text_view.hpp"
#include "wtmap/fmindex/reference.hpp"

namespace wtmap::fmindex {

class PackedText {
 public:
  PackedText() = default;  // empty: view().empty()

  // F from its codes (0..3, kSeparator; Reference::forward) and fragments.
  static Result<PackedText> build(const std::vector<std::uint8_t>& forward, const std::vector<Fragment>& fragments,
                                  Backend backend);
  // F from its words as words() gave them, for a forward text of m bases.
  static Result<PackedText> from_words(const std::vector<std::uint64_t>& words, std::uint64_t m,
                                       const std::vector<Fragment>& fragments, Backend backend);

  // The words of F, copied to the host (ceil(m / 32) of them).
  Result<std::vector<std::uint64_t>> words() const;
  static std::uint64_t num_words(std::uint64_t m) { return (m + PackedTextView::kBasesPerWord - 1) / PackedTextView::kBasesPerWord; }

  const PackedTextView& view() const { return view_; }
  std::size_t size_in_bytes() const { return buffer_.size(); }

 private:
  Buffer buffer_;  // words | fragment ends
  PackedTextView view_{};
};

}  // namespace wtmap::fmindex
