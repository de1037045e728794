// SPDX-License-Identifier: Apache-2.0
// Regression: each scenario's headline metrics against a checked-in golden file. The files are
// plain "key value" lines so that a diff reads well. Set CLUSTERSIM_UPDATE_GOLDEN=1 to rewrite
// them after an intended change (and say why in the commit).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "sim/core/scenario.h"
#include "sim/report/run_scenario.h"

namespace clustersim {
namespace {

namespace fs = std::filesystem;

// Relative tolerance: the analytical level is deterministic, so this only absorbs printf
// rounding of the golden values (10 significant digits).
constexpr double kTolerance = 1e-8;

std::map<std::string, double> read_golden(const fs::path& path) {
  std::map<std::string, double> values;
  std::ifstream in(path);
  std::string key;
  double value;
  while (in >> key >> value) values[key] = value;
  return values;
}

void write_golden(const fs::path& path, const std::map<std::string, double>& metrics) {
  std::ofstream out(path);
  out.precision(10);
  for (const auto& [k, v] : metrics) out << k << " " << v << "\n";
}

class GoldenTest : public ::testing::TestWithParam<const char*> {};

TEST_P(GoldenTest, MetricsMatchGolden) {
  const fs::path source(CLUSTERSIM_SOURCE_DIR);
  const fs::path scenario = source / "scenarios" / GetParam();
  const fs::path golden = source / "tests/regression/golden" / (scenario.stem().string() + ".txt");
  const report::RunOutput out = report::run_scenario(load_scenario(scenario.string()));
  if (const char* update = std::getenv("CLUSTERSIM_UPDATE_GOLDEN"); update && std::string(update) == "1") {
    write_golden(golden, out.metrics);
    GTEST_SKIP() << "rewrote " << golden;
  }
  ASSERT_TRUE(fs::exists(golden)) << "no golden file " << golden << "; run with CLUSTERSIM_UPDATE_GOLDEN=1";
  const auto expected = read_golden(golden);
  ASSERT_EQ(expected.size(), out.metrics.size()) << "metric set changed; update the golden file";
  for (const auto& [key, value] : expected) {
    const auto it = out.metrics.find(key);
    ASSERT_NE(it, out.metrics.end()) << key;
    EXPECT_NEAR(it->second, value, std::fabs(value) * kTolerance) << GetParam() << ": " << key;
  }
}

INSTANTIATE_TEST_SUITE_P(Scenarios, GoldenTest,
                         ::testing::Values("megascale-175b-12288.yaml",
                                           "megascale-table2/megatron-175b-256-b768.yaml",
                                           "megatron-sc21/gpt-1008b-3072.yaml",
                                           "megatron-sc21/gpt-1p7b-32.yaml",
                                           // Each other kind of run: MoE training, stragglers,
                                           // a reliability study, serving, congestion.
                                           "mixtral-8x7b-h100-256.yaml",
                                           "stragglers-175b-12288.yaml",
                                           "faults-16k-30d.yaml",
                                           "infer-afd.yaml",
                                           "net-incast-32-dcqcn.yaml"));

}  // namespace
}  // namespace clustersim
