// TEMPORARY (branch gapped-mapper only): a stand-in for mapping_quality, which branch
// gapped-output implements in mapping_quality.cpp; deleted before this branch's last commit.
#include "wtmap/aligner/gapped/gapped_mapper.hpp"

namespace wtmap::aligner::gapped {
std::uint8_t mapping_quality(const GappedReadAlignment& a, const GappedOptions&) {
  return a.sub_score >= a.primary.score ? 0 : 60;
}
}  // namespace wtmap::aligner::gapped
