// wtmap core (internal): host memory for data read at random over tens of MB to GB.
#pragma once

#include <cstddef>

namespace wtmap::detail {

// `bytes` of host memory, 128-byte aligned, to be released with std::free; null when there is
// none. From 2 MiB up it is aligned to 2 MiB and asked for in huge pages (Linux transparent huge
// pages, whose mode is `madvise` on the GPU hosts): read at random, with 4 KiB pages nearly each
// access also misses the TLB. Serves the CPU backend's index buffers (Buffer) and the coordinate
// sorter's runs (aligner/bam_sorter.cpp).
void* allocate_host_pages(std::size_t bytes);

}  // namespace wtmap::detail
