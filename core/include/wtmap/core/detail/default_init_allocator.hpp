// wtmap core (internal): an allocator adaptor whose construct() without arguments
// default-initialises: a trivial type's new item is left as the memory holds it, not zeroed.
// std::vector's resize then makes no pass over memory its owner writes whole right after --
// arrays of gigabytes in the index build (fmindex's keyed suffixes), rooms of hundreds of MB a
// batch in the gapped mapper (host_pages.hpp). Any other construct() is the usual placement new.
#pragma once

#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace wtmap::detail {

template <class Base>
struct DefaultInitialising : Base {
  template <class U>
  struct rebind {
    using other = DefaultInitialising<typename std::allocator_traits<Base>::template rebind_alloc<U>>;
  };
  DefaultInitialising() = default;
  template <class Other>
  DefaultInitialising(const DefaultInitialising<Other>& other) noexcept : Base(other) {}

  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

}  // namespace wtmap::detail
