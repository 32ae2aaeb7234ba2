// packed_codes.hpp: a batch's codes packed, word by word, against the codes themselves -- each
// read's bases and non-bases read back 32 at a time from its own offset (PackedCodesView::read_at
// and bases32, as the search's verification reads them), and nothing past the batch's end.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "wtmap/aligner/packed_codes.hpp"
#include "wtmap/fmindex/packed_text_view.hpp"

namespace wtmap::altest {
namespace {

TEST(PackedCodes, ReadsComeBackFromAnyOffset) {
  std::mt19937_64 rng(11);
  for (std::uint64_t size : {0, 1, 31, 32, 33, 100, 1000}) {
    std::vector<std::uint8_t> codes(size);
    for (auto& c : codes) c = static_cast<std::uint8_t>(rng() % 9 == 0 ? 4 : rng() % 4);
    const std::uint64_t words = aligner::packed_code_words(size);
    std::vector<std::uint64_t> bases(words, ~0ull), unknown(words, ~0ull);
    for (std::uint64_t w = 0; w < words; ++w) aligner::pack_codes_word(codes.data(), size, w, bases[w], unknown[w]);
    EXPECT_EQ(bases.back(), 0u);
    EXPECT_EQ(unknown.back(), 0u);
    const aligner::PackedCodesView view{bases.data(), unknown.data()};
    for (std::uint64_t offset = 0; offset < size; offset += 1 + rng() % 7) {
      const aligner::PackedRead read = view.read_at(offset);
      ASSERT_LT(read.first, 32u);
      for (std::uint64_t done = 0; offset + done < size; done += 32) {
        const std::uint64_t b = fmindex::bases32(read.bases, read.first + done);
        const std::uint64_t u = fmindex::bases32(read.unknown, read.first + done);
        for (unsigned j = 0; j < 32; ++j) {
          const std::uint64_t i = offset + done + j;
          const unsigned code = i < size ? codes[i] : 0u;  // past the end: A, known
          SCOPED_TRACE("size " + std::to_string(size) + ", base " + std::to_string(i));
          ASSERT_EQ((b >> (2 * j)) & 3, code > 3 ? 0u : code);
          ASSERT_EQ((u >> (2 * j)) & 3, code > 3 ? 1u : 0u);
        }
      }
    }
  }
}

}  // namespace
}  // namespace wtmap::altest
