// Helpers shared by the contract suites: instance names, GPU skipping, error-message checks and
// byte-level surgery on serialized streams.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <regex>
#include <sstream>
#include <string>

#include "reference.hpp"
#include "wtmap/core/config.hpp"
#include "wtmap/core/device_memory.hpp"
#include "wtmap/core/status.hpp"

namespace wtmap::test {

// Names typed instances after their configuration: Cpu/BitVectorContract/CpuBatch.UniformFills.
struct DriverNames {
  template <class T>
  static std::string GetName(int) { return T::name(); }
};

inline bool skip_backend(Backend b) { return b == Backend::gpu && !gpu_available(); }

#define WTMAP_SKIP_WITHOUT(backend)                                                 \
  do {                                                                              \
    if (::wtmap::test::skip_backend(backend)) GTEST_SKIP() << "no usable CUDA device"; \
  } while (0)

// Runs `check` in a child under WTMAP_GPU_MEM_LIMIT=`limit` and expects it to return true. The
// child is a re-executed process ("threadsafe"), so that the limit is read there first and so
// that CUDA starts there anew (a child forked after the suite's earlier tests started CUDA cannot
// use it: the 2-GPU run of 2026-11-27 failed so). compute-sanitizer does not finish such a child
// (tests/run-compute-sanitizer.sh leaves these tests out).
template <class Check>
void expect_true_under_memory_limit(const char* limit, Check check) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv(kDeviceMemoryLimitVariable, limit, 1);
        std::exit(check() ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

// invalid_argument, with a message that names query `index` ("... query 3 ...", not 30).
inline ::testing::AssertionResult RejectsQuery(const Status& s, std::size_t index) {
  auto r = HasCode(s, StatusCode::invalid_argument);
  if (!r) return r;
  if (std::regex_search(s.message(), std::regex("query " + std::to_string(index) + "\\b"))) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "message does not name query " << index << ": " << s.message();
}
template <class T>
::testing::AssertionResult RejectsQuery(const Result<T>& r, std::size_t index) {
  return RejectsQuery(r.ok() ? Status{} : r.status(), index);
}

// ---- Serialized streams -----------------------------------------------------------------

template <class Structure>
std::string saved_bytes(const Structure& s) {
  std::ostringstream out(std::ios::binary);
  EXPECT_TRUE(IsOk(s.save(out)));
  return out.str();
}

template <class Structure>
Result<Structure> load_bytes(const std::string& bytes, Backend backend) {
  std::istringstream in(bytes, std::ios::binary);
  return Structure::load(in, backend);
}

// The format: 8-byte magic, then the u64 format version, then further u64 fields.
constexpr std::size_t kVersionOffset = 8;
inline std::string with_u64(std::string bytes, std::size_t offset, std::uint64_t value) {
  std::memcpy(&bytes[offset], &value, sizeof value);
  return bytes;
}

// Every corruption the loader must reject with corrupt_data: each truncation, a wrong magic,
// a version from the future and version 0.
template <class Structure>
void expect_corrupt_streams_rejected(const std::string& good, Backend backend) {
  ASSERT_GT(good.size(), 16u);
  ASSERT_TRUE(IsOk(load_bytes<Structure>(good, backend)));  // the untouched stream loads
  for (std::size_t len = 0; len < good.size(); ++len) {
    ASSERT_TRUE(HasCode(load_bytes<Structure>(good.substr(0, len), backend), StatusCode::corrupt_data))
        << "truncated to " << len << " of " << good.size() << " bytes";
  }
  std::string magic = good;
  magic[0] ^= 0x20;
  EXPECT_TRUE(HasCode(load_bytes<Structure>(magic, backend), StatusCode::corrupt_data)) << "wrong magic";
  EXPECT_TRUE(HasCode(load_bytes<Structure>(std::string(good.size(), 'x'), backend), StatusCode::corrupt_data))
      << "garbage";
  std::uint64_t version = 0;
  std::memcpy(&version, good.data() + kVersionOffset, sizeof version);
  EXPECT_TRUE(HasCode(load_bytes<Structure>(with_u64(good, kVersionOffset, version + 1), backend),
                      StatusCode::corrupt_data))
      << "future version " << version + 1;
  EXPECT_TRUE(HasCode(load_bytes<Structure>(with_u64(good, kVersionOffset, ~std::uint64_t{0}), backend),
                      StatusCode::corrupt_data))
      << "version 2^64 - 1";
  EXPECT_TRUE(HasCode(load_bytes<Structure>(with_u64(good, kVersionOffset, 0), backend), StatusCode::corrupt_data))
      << "version 0";
}

}  // namespace wtmap::test
