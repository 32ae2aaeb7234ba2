// wtmap core (internal): host memory for data read at random over tens of MB to GB.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>

namespace wtmap::detail {

// `bytes` of host memory, 128-byte aligned, to be released with std::free; null when there is
// none. From 2 MiB up it is aligned to 2 MiB and asked for in huge pages (Linux transparent huge
// pages, whose mode is `madvise` on the GPU hosts): read at random, with 4 KiB pages nearly each
// access also misses the TLB. Serves the CPU backend's index buffers (Buffer), the coordinate
// sorter's runs (aligner/bam_sorter.cpp) and the gapped mapper's reference (mapper_reference).
void* allocate_host_pages(std::size_t bytes);

// Owns allocate_host_pages' memory.
struct FreeHostPages {
  void operator()(void* p) const { std::free(p); }
};
using HostPageBytes = std::unique_ptr<std::uint8_t[], FreeHostPages>;

// `bytes` from allocate_host_pages, owned; null when there is none.
inline HostPageBytes allocate_host_page_bytes(std::size_t bytes) {
  return HostPageBytes(static_cast<std::uint8_t*>(allocate_host_pages(bytes)));
}

}  // namespace wtmap::detail
