// gpu_host_wait.hpp: each wait sets CUDA's scheduling flag of the device (read back with
// cudaGetDeviceFlags), WTMAP_GPU_WAIT names them, and any other value is refused before CUDA is
// touched.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cstdlib>
#include <string>

#include "support.hpp"
#include "wtmap/core/gpu_host_wait.hpp"

namespace wtmap::test {
namespace {

class ScopedWaitVariable {
 public:
  explicit ScopedWaitVariable(const char* value) {
    if (value == nullptr) unsetenv(kGpuHostWaitVariable);
    else setenv(kGpuHostWaitVariable, value, 1);
  }
  ~ScopedWaitVariable() { unsetenv(kGpuHostWaitVariable); }
};

unsigned schedule_flag() {
  unsigned flags = 0;
  EXPECT_EQ(cudaGetDeviceFlags(&flags), cudaSuccess);
  return flags & cudaDeviceScheduleMask;
}

TEST(GpuHostWait, AnUnknownValueIsRefusedNamingTheVariable) {
  for (const char* bad : {"Block", "blocking", "spin ", "1"}) {
    const ScopedWaitVariable set(bad);
    const Status s = set_gpu_host_wait_from_environment();
    EXPECT_EQ(s.code(), StatusCode::invalid_argument) << bad;
    EXPECT_NE(s.message().find("WTMAP_GPU_WAIT='" + std::string(bad) + "'"), std::string::npos) << s.message();
  }
}

TEST(GpuHostWait, UnsetOrEmptyLeavesCudasDefault) {
  for (const char* value : {static_cast<const char*>(nullptr), ""}) {
    const ScopedWaitVariable set(value);
    EXPECT_TRUE(set_gpu_host_wait_from_environment().ok());
  }
}

TEST(GpuHostWaitGpu, EachWaitSetsItsSchedulingFlag) {
  WTMAP_SKIP_WITHOUT(Backend::gpu);
  const struct {
    const char* name;
    GpuHostWait wait;
    unsigned flag;
  } cases[] = {{"spin", GpuHostWait::spin, cudaDeviceScheduleSpin},
               {"yield", GpuHostWait::yield, cudaDeviceScheduleYield},
               {"block", GpuHostWait::block, cudaDeviceScheduleBlockingSync}};
  for (const auto& c : cases) {
    ASSERT_TRUE(set_gpu_host_wait(c.wait).ok()) << c.name;
    EXPECT_EQ(schedule_flag(), c.flag) << c.name;
    ASSERT_TRUE(set_gpu_host_wait(GpuHostWait::automatic).ok());
    EXPECT_EQ(schedule_flag(), static_cast<unsigned>(cudaDeviceScheduleAuto)) << c.name;
    const ScopedWaitVariable set(c.name);
    ASSERT_TRUE(set_gpu_host_wait_from_environment().ok()) << c.name;
    EXPECT_EQ(schedule_flag(), c.flag) << c.name << " through " << kGpuHostWaitVariable;
  }
  ASSERT_TRUE(set_gpu_host_wait(GpuHostWait::automatic).ok());
}

}  // namespace
}  // namespace wtmap::test
