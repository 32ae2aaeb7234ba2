// wtmap core (internal): building the counts and select samples of one quad vector in place.
#pragma once

#include <cstddef>
#include <cstdint>

#include "wtmap/core/config.hpp"
#include "wtmap/core/quad_vector_view.hpp"
#include "wtmap/core/status.hpp"

namespace wtmap::detail {

// `base` points at QuadVectorLayout::total_bytes(n) zeroed bytes of `backend` memory whose
// blocks already hold the packed symbols. Fills block and superblock counts and the samples;
// both backends produce identical bytes.
Status build_quad_vector(Backend backend, std::byte* base, std::uint64_t n, QuadVectorView& view);

inline QuadVectorView quad_vector_view_at(const std::byte* base, std::uint64_t n, const std::uint64_t totals[4]) {
  using L = QuadVectorLayout;
  QuadVectorView v;
  v.blocks = reinterpret_cast<const QuadBlock*>(base);
  v.supers = reinterpret_cast<const std::uint64_t*>(base + L::blocks_bytes(n));
  v.samples = reinterpret_cast<const std::uint64_t*>(base + L::blocks_bytes(n) + L::supers_bytes(n));
  v.size = n;
  for (unsigned c = 0; c < 4; ++c) v.totals[c] = totals[c];
  return v;
}

}  // namespace wtmap::detail
