// detail/host_pages.hpp: a HostPageVector behaves as a std::vector (values kept as it grows past
// the huge-page size, a class type's new items constructed); its memory is 2 MiB-aligned from
// 2 MiB up, so that the huge-page hint covers whole pages, and 128-byte aligned below; a request
// beyond the address space throws rather than wrapping around. detail/default_init_allocator.hpp:
// a resize within the capacity leaves the new items of a trivial type as the memory held them,
// over std::allocator as over the huge pages. allocate_zeroed_host_pages' memory reads zero.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <limits>
#include <new>
#include <vector>

#include "wtmap/core/detail/host_pages.hpp"

namespace wtmap::test {
namespace {

using detail::DefaultInitialising;
using detail::HostPageAllocator;
using detail::HostPageVector;

constexpr std::uintptr_t kHugePage = std::uintptr_t{2} << 20;

std::uintptr_t address(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

// Grown element by element from nothing to 3 * 2^20 items (24 MiB: reallocations below and
// above the huge-page size), then shrunk and grown again: every value is the one written.
TEST(HostPageVector, KeepsItsValuesAsItGrows) {
  HostPageVector<std::uint64_t> v;
  std::vector<std::uint64_t> expected;
  for (std::uint64_t i = 0; i < 3 * (std::uint64_t{1} << 20); ++i) {
    v.push_back(i * 2654435761u + 1);
    expected.push_back(i * 2654435761u + 1);
  }
  ASSERT_EQ(v.size(), expected.size());
  for (std::size_t i = 0; i < v.size(); ++i) ASSERT_EQ(v[i], expected[i]) << i;
  v.resize(1000);
  v.resize(5 * (std::size_t{1} << 20));
  for (std::size_t i = 0; i < 1000; ++i) ASSERT_EQ(v[i], expected[i]) << i;
}

// Default member initialisers still run on resize: only a trivial type's items are left unwritten.
TEST(HostPageVector, NewItemsOfAClassTypeAreConstructed) {
  struct Item {
    std::uint32_t a = 7;
    std::uint64_t b = 11;
  };
  HostPageVector<Item> v(3);
  v.resize(300000);  // 4.8 MB: huge pages
  for (const Item& item : v) {
    ASSERT_EQ(item.a, 7u);
    ASSERT_EQ(item.b, 11u);
  }
}

// Bytes written, the vector shrunk, then grown again within its capacity: a value-initialising
// resize would zero them (std::byte may be read while indeterminate).
template <class Vector>
void expect_regrown_bytes_unwritten(std::size_t n) {
  Vector v(n);
  const std::byte* before = v.data();
  for (std::byte& b : v) b = std::byte{0xA5};
  v.resize(0);
  v.resize(n);
  ASSERT_EQ(v.data(), before);  // the same memory, no reallocation
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(v[i], std::byte{0xA5}) << i;
}

TEST(DefaultInitialising, ResizeLeavesNewTrivialItemsUnwritten) {
  expect_regrown_bytes_unwritten<std::vector<std::byte, DefaultInitialising<std::allocator<std::byte>>>>(100000);
  expect_regrown_bytes_unwritten<HostPageVector<std::byte>>(3 * kHugePage);
}

TEST(HostPageAllocator, AlignsHugeRequestsToTheHugePageAndSmallOnesTo128Bytes) {
  HostPageAllocator<std::uint8_t> allocator;
  for (const std::size_t bytes : {std::size_t{1}, std::size_t{4096}, std::size_t{kHugePage - 1}}) {
    std::uint8_t* p = allocator.allocate(bytes);
    EXPECT_EQ(address(p) % 128, 0u) << bytes;
    allocator.deallocate(p, bytes);
  }
  for (const std::size_t bytes : {std::size_t{kHugePage}, std::size_t{3 * kHugePage + 5}}) {
    std::uint8_t* p = allocator.allocate(bytes);
    EXPECT_EQ(address(p) % kHugePage, 0u) << bytes;
    p[bytes - 1] = 1;  // the whole request is usable
    allocator.deallocate(p, bytes);
  }
}

// allocate_zeroed_host_pages: every byte reads zero, also where the same sizes were just written
// and freed (memory that comes back from the allocator dirty must be cleared); 2 MiB-aligned from
// 2 MiB up, 128-byte aligned below; the whole request writable; a size that would wrap around
// when rounded up to the huge page gives null.
TEST(ZeroedHostPages, ReadZeroAlignedEvenAfterDirtyFrees) {
  const std::size_t sizes[] = {1, 4096 + 3, kHugePage - 1, kHugePage, 3 * kHugePage + 5};
  for (int round = 0; round < 3; ++round) {
    for (const std::size_t bytes : sizes) {
      auto* p = static_cast<std::uint8_t*>(detail::allocate_zeroed_host_pages(bytes));
      ASSERT_NE(p, nullptr) << bytes;
      EXPECT_EQ(address(p) % (bytes >= kHugePage ? kHugePage : 128), 0u) << bytes;
      std::size_t nonzero = 0;
      for (std::size_t i = 0; i < bytes; ++i) nonzero += p[i] != 0;
      EXPECT_EQ(nonzero, 0u) << bytes << " bytes, round " << round;
      std::fill(p, p + bytes, std::uint8_t{0xA5});  // dirty, for the next round to find if reused
      detail::free_zeroed_host_pages(p, bytes);
    }
  }
  EXPECT_EQ(detail::allocate_zeroed_host_pages(std::numeric_limits<std::size_t>::max() - 5), nullptr);
  detail::free_zeroed_host_pages(nullptr, 5);  // nothing to free
}

// Sizes whose byte count, or its rounding up to the huge page, would wrap around: an error, never
// a small block.
TEST(HostPageAllocator, RequestBeyondTheAddressSpaceThrows) {
  HostPageAllocator<std::uint64_t> allocator;
  EXPECT_THROW(allocator.allocate(std::numeric_limits<std::size_t>::max() / 4), std::bad_array_new_length);
  EXPECT_THROW(allocator.allocate(std::numeric_limits<std::size_t>::max() / 8), std::bad_alloc);
  EXPECT_EQ(detail::allocate_host_pages(std::numeric_limits<std::size_t>::max() - 5), nullptr);
}

}  // namespace
}  // namespace wtmap::test
