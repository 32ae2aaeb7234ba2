// wtmap fmindex: an interval of suffix-array rows, the answer of a backward search.
#pragma once

#include <cstdint>

#include "wtmap/core/config.hpp"

namespace wtmap::fmindex {

// Rows [lo, hi) of the suffix array.
struct SaInterval {
  std::uint64_t lo = 0, hi = 0;
  WTMAP_HD std::uint64_t size() const { return hi - lo; }
  WTMAP_HD bool empty() const { return hi <= lo; }
};

}  // namespace wtmap::fmindex
