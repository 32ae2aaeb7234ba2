#include "support_check.hpp"

#include <algorithm>
#include <cstring>

#include "wtmap/core/bits.hpp"
#include "wtmap/core/detail/parallel.hpp"
#include "wtmap/core/quad_vector_view.hpp"
#include "wtmap/core/rank_select_view.hpp"

namespace wtmap::detail {

Result<const std::byte*> host_bytes(const Buffer& b, Buffer& copy) {
  if (b.backend() == Backend::cpu) return b.data();
  auto host = Buffer::allocate(Backend::cpu, b.size(), "the check of a loaded structure");
  if (!host.ok()) return host.status();
  copy = std::move(host.value());
  WTMAP_TRY(b.copy_to_host(0, copy.data(), b.size()));
  return static_cast<const std::byte*>(copy.data());
}

void copy_rank_select_bits(const std::byte* from, std::byte* to, std::uint64_t n) {
  const std::uint64_t words = RankSelectLayout::num_words32(n);
  std::memcpy(to, from, words * 4);
  if (n % 32 != 0) reinterpret_cast<std::uint32_t*>(to)[words - 1] &= static_cast<std::uint32_t>(bits::low_mask64(static_cast<unsigned>(n % 32)));
}

void copy_quad_symbols(const std::byte* from, std::byte* to, std::uint64_t n) {
  using L = QuadVectorLayout;
  const auto* in = reinterpret_cast<const QuadBlock*>(from);
  auto* out = reinterpret_cast<QuadBlock*>(to);
  parallel_for_ranges(L::num_blocks(n), [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t b = begin; b < end; ++b) {
      for (unsigned w = 0; w < L::kWordsPerBlock; ++w) {
        const std::uint64_t first = (b * L::kWordsPerBlock + w) * L::kSymbolsPerWord;  // its first symbol
        const std::uint64_t kept = n > first ? std::min<std::uint64_t>(n - first, L::kSymbolsPerWord) : 0;
        out[b].words[w] = kept == L::kSymbolsPerWord ? in[b].words[w] : in[b].words[w] & bits::low_mask64(2 * static_cast<unsigned>(kept));
      }
    }
  }, 1 << 12);
}

Status same_support(const std::byte* loaded, const std::byte* expected, std::uint64_t size, const std::string& what) {
  constexpr std::uint64_t kPiece = std::uint64_t{1} << 20;
  const std::uint64_t pieces = (size + kPiece - 1) / kPiece;
  std::vector<std::uint64_t> first_bad(std::max<std::uint64_t>(pieces, 1), size);
  parallel_for_ranges(pieces, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t p = begin; p < end; ++p) {
      const std::uint64_t at = p * kPiece, length = std::min(kPiece, size - at);
      if (std::memcmp(loaded + at, expected + at, length) == 0) continue;
      const auto* mismatch = std::mismatch(loaded + at, loaded + at + length, expected + at).first;
      first_bad[p] = static_cast<std::uint64_t>(mismatch - loaded);
    }
  }, 1);
  const std::uint64_t bad = *std::min_element(first_bad.begin(), first_bad.end());
  if (bad == size) return {};
  return corrupt_data(what + " disagrees with its bits (at byte " + std::to_string(bad) + " of " + std::to_string(size) + ")");
}

}  // namespace wtmap::detail
