// mismatch_scratch_layout.hpp: every part of a k-mismatch batch's device scratch starts on a
// 128-byte line, is exactly as large as its contents (closed forms from the batch's sizes), and
// no two overlap; the typed pointers point at their parts. Sizes past 2^32 bytes stay exact.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "wtmap/aligner/mismatch_scratch_layout.hpp"

namespace wtmap::aligner {
namespace {

struct NamedPart {
  std::string name;
  MismatchScratchLayout::Part part;
};

std::vector<NamedPart> parts_of(const MismatchScratchLayout& l) {
  return {{"codes", l.codes},       {"packed_bases", l.packed_bases}, {"packed_unknown", l.packed_unknown},
          {"choices", l.choices},   {"long_reads", l.long_reads},     {"counters", l.counters},
          {"group_stacks", l.group_stacks}, {"others", l.others}};
}

struct Batch {
  std::uint64_t code_bytes, reads, group_blocks, other_hits;
};

// Aligned, disjoint, inside the total, with the sizes their contents need.
::testing::AssertionResult well_laid_out(const Batch& b) {
  const MismatchScratchLayout l(b.code_bytes, b.reads, b.group_blocks, b.other_hits);
  const std::uint64_t packed_bytes = (b.code_bytes / 32 + 2) * 8;  // packed_code_words' closed form
  const std::vector<std::pair<std::string, std::uint64_t>> expected_bytes = {
      {"codes", b.code_bytes},
      {"packed_bases", packed_bytes},
      {"packed_unknown", packed_bytes},
      {"choices", b.reads * sizeof(ReadChoice)},
      {"long_reads", b.reads * sizeof(std::uint64_t)},
      {"counters", 3 * sizeof(unsigned long long)},
      {"group_stacks", b.group_blocks * kGroupStackCapacity * sizeof(detail::Node)},
      {"others", b.other_hits * sizeof(OtherHit)}};
  std::vector<NamedPart> parts = parts_of(l);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const NamedPart& p = parts[i];
    if (p.name != expected_bytes[i].first || p.part.bytes != expected_bytes[i].second) {
      return ::testing::AssertionFailure() << p.name << " holds " << p.part.bytes << " bytes, not "
                                           << expected_bytes[i].second;
    }
    if (p.part.offset % 128 != 0) return ::testing::AssertionFailure() << p.name << " starts at " << p.part.offset;
    if (p.part.offset + p.part.bytes > l.total) {
      return ::testing::AssertionFailure() << p.name << " ends at " << p.part.offset + p.part.bytes
                                           << ", past the total " << l.total;
    }
  }
  // Disjoint: sorted by offset, each part ends before the next one starts (empty parts included).
  std::sort(parts.begin(), parts.end(), [](const NamedPart& x, const NamedPart& y) { return x.part.offset < y.part.offset; });
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const NamedPart &before = parts[i - 1], &after = parts[i];
    if (before.part.bytes > 0 && before.part.offset + before.part.bytes > after.part.offset) {
      return ::testing::AssertionFailure() << before.name << " [" << before.part.offset << ", +" << before.part.bytes
                                           << ") overlaps " << after.name << " at " << after.part.offset;
    }
  }
  // No more than a line's padding per part.
  std::uint64_t needed = 0;
  for (const auto& e : expected_bytes) needed += e.second;
  if (l.total < needed || l.total >= needed + parts.size() * 128) {
    return ::testing::AssertionFailure() << "total " << l.total << " for " << needed << " bytes of parts";
  }
  return ::testing::AssertionSuccess();
}

TEST(MismatchScratchLayout, PartsAreAlignedDisjointAndSized) {
  EXPECT_TRUE(well_laid_out({0, 0, 0, 0})) << "empty batch";
  EXPECT_TRUE(well_laid_out({1, 1, 0, 0})) << "one read of one base";
  EXPECT_TRUE(well_laid_out({100, 1, 528, 3})) << "one read, sliced, others through the device";
  EXPECT_TRUE(well_laid_out({10'000'037, 100'003, 0, 0})) << "odd sizes, unsliced, others pinned";
  EXPECT_TRUE(well_laid_out({127, 3, 1, 1})) << "parts one byte short of a line";
  EXPECT_TRUE(well_laid_out({128, 16, 2, 8})) << "parts of whole lines";
  // Past 2^32 bytes: offsets are 64-bit.
  EXPECT_TRUE(well_laid_out({(std::uint64_t{1} << 33) + 5, std::uint64_t{1} << 27, 528, std::uint64_t{1} << 28}));
}

// The typed pointers are the base plus each part's offset, suitably aligned for their types.
TEST(MismatchScratchLayout, ScratchPointsAtItsParts) {
  const MismatchScratchLayout l(1001, 17, 4, 9);
  alignas(128) static std::byte base[1 << 20];
  ASSERT_LE(l.total, sizeof base);
  const MismatchScratch s = MismatchScratch::at(base, l);
  auto at = [&](const MismatchScratchLayout::Part& p) { return static_cast<const void*>(base + p.offset); };
  EXPECT_EQ(static_cast<const void*>(s.codes), at(l.codes));
  EXPECT_EQ(static_cast<const void*>(s.packed_bases), at(l.packed_bases));
  EXPECT_EQ(static_cast<const void*>(s.packed_unknown), at(l.packed_unknown));
  EXPECT_EQ(static_cast<const void*>(s.choices), at(l.choices));
  EXPECT_EQ(static_cast<const void*>(s.long_reads), at(l.long_reads));
  EXPECT_EQ(static_cast<const void*>(s.counters), at(l.counters));
  EXPECT_EQ(static_cast<const void*>(s.group_stacks), at(l.group_stacks));
  EXPECT_EQ(static_cast<const void*>(s.others), at(l.others));
  EXPECT_EQ(s.packed().bases, s.packed_bases);
  EXPECT_EQ(s.packed().unknown, s.packed_unknown);
  // Distinct parts, not one pointer handed out twice.
  EXPECT_NE(static_cast<const void*>(s.packed_bases), static_cast<const void*>(s.packed_unknown));
  EXPECT_NE(static_cast<const void*>(s.choices), static_cast<const void*>(s.long_reads));
}

}  // namespace
}  // namespace wtmap::aligner
