// wtmap core (internal): building the rank and select support of one bit vector in place.
#pragma once

#include <cstddef>
#include <cstdint>

#include "wtmap/core/config.hpp"
#include "wtmap/core/rank_select_view.hpp"
#include "wtmap/core/status.hpp"

namespace wtmap::detail {

// `base` points at RankSelectLayout::total_bytes(n) zeroed bytes in memory of `backend`, whose
// first bits_bytes(n) already hold the bits (LSB-first, zero past n). Fills the counts and the
// select samples and returns the finished view. Both backends produce identical bytes.
Status build_rank_select(Backend backend, std::byte* base, std::uint64_t n, RankSelectView& view);

// The view of an already built vector at `base` with `ones` set bits.
inline RankSelectView rank_select_view_at(const std::byte* base, std::uint64_t n, std::uint64_t ones) {
  using L = RankSelectLayout;
  RankSelectView v;
  v.words = reinterpret_cast<const std::uint64_t*>(base);
  v.records = reinterpret_cast<const RankRecord*>(base + L::bits_bytes(n));
  v.samples = reinterpret_cast<const std::uint64_t*>(base + L::bits_bytes(n) + L::records_bytes(n));
  v.size = n;
  v.ones = ones;
  return v;
}

}  // namespace wtmap::detail
