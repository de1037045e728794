// SPDX-License-Identifier: Apache-2.0
// Runs `clustersim-probe --quick` on the GPUs of this machine and checks that its file parses.
// Label gpu; skips (exit code 3 of the probe: no usable device) on machines without one.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "calibration/probe_file.h"

namespace clustersim::calib {
namespace {

constexpr int kProbeExitNoDevice = 3;

TEST(ProbeOnGpu, QuickRunWritesAReadableProbeFile) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "probe_gpu_test";
  std::filesystem::create_directories(dir);
  const std::filesystem::path out = dir / "quick.pb";
  const std::filesystem::path log = dir / "quick.log";
  std::filesystem::remove(out);
  const std::string cmd = std::string("\"") + CLUSTERSIM_PROBE_EXE + "\" -o \"" + out.string() +
                          "\" --quick --max-bytes 16MiB > \"" + log.string() + "\" 2>&1";
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status)) << cmd;
  std::stringstream output;
  output << std::ifstream(log).rdbuf();
  const int rc = WEXITSTATUS(status);
  if (rc == kProbeExitNoDevice) GTEST_SKIP() << "no CUDA device: " << output.str();
  ASSERT_EQ(rc, 0) << output.str();

  const ProbeData d = read_probe_file(out);
  EXPECT_FALSE(d.header.synthetic);
  EXPECT_GT(d.header.gpu_count, 0);
  EXPECT_GT(d.header.sm_count, 0);
  EXPECT_FALSE(d.gemm.empty());
  EXPECT_FALSE(d.attention.empty());
  EXPECT_FALSE(d.memory.empty());
  if (d.header.nccl_version > 0) {
    EXPECT_FALSE(d.collectives.empty());
  }
  EXPECT_TRUE(std::filesystem::exists(dir / "quick.txt"));
}

}  // namespace
}  // namespace clustersim::calib
