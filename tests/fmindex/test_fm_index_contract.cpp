// The FM-index contract (fm_index_contract.hpp) for every index kind on every backend: DNA
// (FmIndex), protein and byte (GeneralFmIndex), each on the CPU and on the GPU; and the CPU and
// GPU backends against each other per kind. GPU configurations skip themselves where no CUDA
// device is usable.
#include <gtest/gtest.h>

#include "fm_index_contract.hpp"
#include "fm_index_kinds.hpp"

namespace wtmap::fmtest {
namespace {

using Configurations =
    ::testing::Types<OnBackend<DnaKind, Backend::cpu>, OnBackend<DnaKind, Backend::gpu>,
                     OnBackend<ProteinKind, Backend::cpu>, OnBackend<ProteinKind, Backend::gpu>,
                     OnBackend<ByteKind, Backend::cpu>, OnBackend<ByteKind, Backend::gpu>>;
using Kinds = ::testing::Types<DnaKind, ProteinKind, ByteKind>;

INSTANTIATE_TYPED_TEST_SUITE_P(Fm, FmIndexContract, Configurations, KindName);
INSTANTIATE_TYPED_TEST_SUITE_P(Fm, FmIndexFileContract, Configurations, KindName);
INSTANTIATE_TYPED_TEST_SUITE_P(Fm, FmIndexBackendsAgree, Kinds, KindName);

}  // namespace
}  // namespace wtmap::fmtest
