#include "wtmap/aligner/alignment.hpp"

#include <cmath>

namespace wtmap::aligner {

int mapping_quality(const ReadAlignment& a, unsigned max_mismatches) {
  if (!a.mapped) return 0;
  if (a.best_count > 1 || search_cut_short(a.flags)) return 0;
  if (a.mismatches == max_mismatches) return 25;
  if (a.second_count == 0) return 37;
  const std::uint64_t n = a.second_count >= 255 ? 255 : a.second_count;
  const int log_n = static_cast<int>(4.343 * std::log(static_cast<double>(n)) + 0.5);
  return log_n > 23 ? 0 : 23 - log_n;
}

}  // namespace wtmap::aligner
