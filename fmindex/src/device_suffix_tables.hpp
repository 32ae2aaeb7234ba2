// wtmap fmindex (internal): the packed text and the difference cover's tables copied to the
// device, with views of them there -- what both GPU steps of the index build read
// (gpu_sample_ranker.cu, which refines the ranks there, and gpu_round_sorter.cu).
//
// Space on the device: the packed text, 8 bytes per v-periodic table entry, 8 per rank.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "wtmap/core/buffer.hpp"
#include "wtmap/core/status.hpp"
#include "wtmap/fmindex/difference_cover_sample.hpp"
#include "wtmap/fmindex/packed_symbols.hpp"

namespace wtmap::fmindex::detail {

class DeviceSuffixTables {
 public:
  // Copies `text`'s words, `dc`'s slot and anchor tables and `num_ranks` ranks from `ranks` (host
  // arrays) to the device; `what` names the allocations in errors.
  Status upload(const PackedSymbolsView& text, const DifferenceCoverView& dc, const std::uint64_t* ranks,
                std::uint64_t num_ranks, const char* what) {
    const std::uint64_t v = dc.period();
    WTMAP_TRY(copy(words_, text.words, PackedSymbols::num_words(text.n, text.bits) * 8, what));
    WTMAP_TRY(copy(slot_, dc.slot, v * 4, what));
    WTMAP_TRY(copy(anchor_, dc.anchor, v * 4, what));
    WTMAP_TRY(copy(ranks_, ranks, num_ranks * 8, what));
    num_ranks_ = num_ranks;
    text_ = text;
    text_.words = reinterpret_cast<const std::uint64_t*>(words_.data());
    dc_ = dc;
    dc_.slot = reinterpret_cast<const std::uint32_t*>(slot_.data());
    dc_.anchor = reinterpret_cast<const std::uint32_t*>(anchor_.data());
    dc_.ranks = reinterpret_cast<const std::uint64_t*>(ranks_.data());
    return {};
  }

  // Views whose arrays are on the device.
  const PackedSymbolsView& text() const { return text_; }
  const DifferenceCoverView& cover() const { return dc_; }
  // The ranks on the device, for a step that refines them, and their copy back.
  std::uint64_t* ranks() { return reinterpret_cast<std::uint64_t*>(ranks_.data()); }
  Status download_ranks(std::uint64_t* host) const { return ranks_.copy_to_host(0, host, num_ranks_ * 8); }

 private:
  static Status copy(Buffer& to, const void* host, std::size_t bytes, const char* what) {
    WTMAP_TRY(to.grow_to(Backend::gpu, std::max<std::size_t>(bytes, 8), what));
    return bytes == 0 ? Status{} : to.copy_from_host(0, host, bytes);
  }

  Buffer words_, slot_, anchor_, ranks_;
  std::uint64_t num_ranks_ = 0;
  PackedSymbolsView text_{};
  DifferenceCoverView dc_{};
};

}  // namespace wtmap::fmindex::detail
