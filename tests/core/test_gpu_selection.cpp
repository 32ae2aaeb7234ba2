// gpu_selection.hpp: --gpus values against the rules written out here (all, a count of the first
// devices, a list of distinct ordinals), every form of error, and the device counts each meets;
// use_gpu and ScopedGpu on a GPU host (skipped without one).
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <string>
#include <vector>

#include "wtmap/core/gpu_selection.hpp"

namespace wtmap {
namespace {

std::vector<int> devices_of(const std::string& text, int visible) {
  Result<GpuSelection> s = GpuSelection::parse(text);
  EXPECT_TRUE(s.ok()) << text << ": " << s.status().message();
  if (!s.ok()) return {};
  Result<std::vector<int>> d = s->devices(visible);
  EXPECT_TRUE(d.ok()) << text << " of " << visible << ": " << d.status().message();
  return d.ok() ? *d : std::vector<int>{};
}

// The error a value gives, in form or against `visible` devices.
Status error_of(const std::string& text, int visible = 8) {
  Result<GpuSelection> s = GpuSelection::parse(text);
  if (!s.ok()) return s.status();
  Result<std::vector<int>> d = s->devices(visible);
  return d.ok() ? Status{} : d.status();
}

TEST(GpuSelection, AllIsEveryVisibleDeviceInOrder) {
  for (int visible = 1; visible <= 8; ++visible) {
    std::vector<int> expected;
    for (int g = 0; g < visible; ++g) expected.push_back(g);
    EXPECT_EQ(devices_of("all", visible), expected);
    EXPECT_EQ(GpuSelection::all().devices(visible).value(), expected);
  }
}

TEST(GpuSelection, ACountIsTheFirstDevices) {
  for (int visible = 1; visible <= 8; ++visible) {
    for (int n = 1; n <= visible; ++n) {
      std::vector<int> expected;
      for (int g = 0; g < n; ++g) expected.push_back(g);
      EXPECT_EQ(devices_of(std::to_string(n), visible), expected) << n << " of " << visible;
    }
  }
}

TEST(GpuSelection, AListIsThoseOrdinalsInTheOrderGiven) {
  EXPECT_EQ(devices_of("0,1", 2), (std::vector<int>{0, 1}));
  EXPECT_EQ(devices_of("3,1", 4), (std::vector<int>{3, 1}));
  EXPECT_EQ(devices_of("7,0,5", 8), (std::vector<int>{7, 0, 5}));
  EXPECT_EQ(devices_of("0,1,2,3,4,5,6,7", 8), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(devices_of("01,2", 3), (std::vector<int>{1, 2}));  // leading zeros are the same number
}

TEST(GpuSelection, MalformedValuesAreRefusedBeforeAnyDeviceIsAsked) {
  for (const char* text : {"", "0", "00", "-1", "+1", " 1", "1 ", "1.5", "x", "ALL", "all,0", "0,", ",0", "0,,1",
                           "1,-2", "0;1", "2147483648", "99999999999", "1,2147483648"}) {
    Result<GpuSelection> s = GpuSelection::parse(text);
    ASSERT_FALSE(s.ok()) << "'" << text << "'";
    EXPECT_EQ(s.status().code(), StatusCode::invalid_argument);
    EXPECT_EQ(s.status().message().rfind(std::string("--gpus ") + text + ": ", 0), 0u) << s.status().message();
  }
  EXPECT_NE(error_of("0").message().find("at least one GPU"), std::string::npos);
}

TEST(GpuSelection, AnOrdinalListedTwiceIsRefused) {
  for (const char* text : {"0,0", "1,0,1", "3,2,1,3"}) {
    const Status s = error_of(text);
    EXPECT_EQ(s.code(), StatusCode::invalid_argument) << text;
    EXPECT_NE(s.message().find("listed twice"), std::string::npos) << s.message();
  }
  EXPECT_EQ(error_of("3,2,1,3").message(),
            "--gpus 3,2,1,3: GPU 3 is listed twice; use all, a count N (the first N GPUs) or a list of distinct "
            "device ordinals i,j,...");
}

TEST(GpuSelection, MoreThanTheVisibleDevicesIsRefused) {
  EXPECT_EQ(error_of("3", 2).message(), "--gpus 3: only 2 GPUs are visible");
  EXPECT_EQ(error_of("2", 1).message(), "--gpus 2: only 1 GPU is visible");
  EXPECT_EQ(error_of("0,2", 2).message(), "--gpus 0,2: there is no GPU 2 (2 GPUs are visible, ordinals 0..1)");
  EXPECT_EQ(error_of("1,0", 1).code(), StatusCode::invalid_argument);
  EXPECT_TRUE(error_of("8", 8).ok());
  EXPECT_FALSE(error_of("9", 8).ok());
  EXPECT_TRUE(error_of("7,6", 8).ok());
  EXPECT_FALSE(error_of("7,8", 8).ok());
}

TEST(GpuSelection, NoVisibleDeviceIsUnavailableForEveryValue) {
  for (const char* text : {"all", "1", "0,1"}) {
    const Status s = error_of(text, 0);
    EXPECT_EQ(s.code(), StatusCode::unavailable) << text;
    EXPECT_EQ(s.message(), std::string("--gpus ") + text + ": no usable CUDA device");
  }
}

TEST(GpuSelection, ListTextJoinsWithCommas) {
  EXPECT_EQ(gpu_list_text({}), "");
  EXPECT_EQ(gpu_list_text({0}), "0");
  EXPECT_EQ(gpu_list_text({3, 1, 7}), "3,1,7");
}

TEST(GpuSelection, UseGpuBindsTheThreadAndScopedGpuRestoresIt) {
  EXPECT_TRUE(use_gpu(-1).ok());  // nothing to bind: never fails
  const int visible = visible_gpu_count();
  if (visible == 0) GTEST_SKIP() << "no usable CUDA device";
  EXPECT_FALSE(use_gpu(visible).ok());  // beyond the visible devices: cudaErrorInvalidDevice
  cudaGetLastError();
  ASSERT_TRUE(use_gpu(0).ok());
  {
    ScopedGpu bound(visible - 1);
    ASSERT_TRUE(bound.status().ok()) << bound.status().message();
    int current = -1;
    ASSERT_EQ(cudaGetDevice(&current), cudaSuccess);
    EXPECT_EQ(current, visible - 1);
  }
  int current = -1;
  ASSERT_EQ(cudaGetDevice(&current), cudaSuccess);
  EXPECT_EQ(current, 0);
}

}  // namespace
}  // namespace wtmap
