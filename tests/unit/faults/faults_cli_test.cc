// SPDX-License-Identifier: Apache-2.0
// `clustersim run` on the fault scenarios and `clustersim whatif`, as a user runs them: exit
// codes, the stable keys, identical output for a fixed seed, and exit 2 on bad input.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>

namespace {

struct Result {
  int code = -1;
  std::string out;
};

// Runs `clustersim ARGS` in the source directory (stderr folded into stdout).
Result clustersim(const std::string& args) {
  const std::string cmd = std::string("cd '") + CLUSTERSIM_SOURCE_DIR + "' && '" + CLUSTERSIM_CLI + "' " + args + " 2>&1";
  Result r;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (!pipe) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) r.out.append(buf, n);
  const int status = ::pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

bool contains(const std::string& s, const std::string& needle) { return s.find(needle) != std::string::npos; }

TEST(FaultsCli, ThirtyDayJobReportsEttrAndIsReproducible) {
  const Result a = clustersim("run scenarios/faults-16k-30d.yaml --format json");
  ASSERT_EQ(a.code, 0) << a.out;
  for (const char* key : {"\"ettr\"", "\"ettr_ci95\"", "\"goodput\"", "\"effective_mfu\"", "\"interruptions\"",
                          "\"time_lost_s\"", "\"comm_init\"", "\"optimal_checkpoint_interval_s\"",
                          "\"young_daly_interval_s\""}) {
    EXPECT_TRUE(contains(a.out, key)) << key;
  }
  EXPECT_EQ(a.out, clustersim("run scenarios/faults-16k-30d.yaml --format json").out);
}

TEST(FaultsCli, SlowRecoveryScenarioRuns) {
  const Result r = clustersim("run scenarios/faults-16k-30d-slow-recovery.yaml");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "ETTR"));
  EXPECT_TRUE(contains(r.out, "comm_init"));
}

TEST(FaultsCli, WhatIfNamesTheSlowHosts) {
  const Result r = clustersim("whatif scenarios/stragglers-175b-12288.yaml");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "hosts"));
  EXPECT_TRUE(contains(r.out, "stage"));
  EXPECT_TRUE(contains(r.out, "MFU lost"));
  const Result j = clustersim("whatif scenarios/stragglers-175b-12288.yaml --format json --draws 3");
  EXPECT_EQ(j.code, 0) << j.out;
  EXPECT_TRUE(contains(j.out, "\"mfu_lost_mean\""));
  EXPECT_TRUE(contains(j.out, "\"critical_path\""));
}

TEST(FaultsCli, BadInputExitsTwo) {
  EXPECT_EQ(clustersim("whatif scenarios/megascale-175b-12288.yaml").code, 2);  // no stragglers
  EXPECT_EQ(clustersim("whatif scenarios/stragglers-175b-12288.yaml --draws zero").code, 2);
  EXPECT_EQ(clustersim("whatif").code, 2);
  const Result r = clustersim("run scenarios/faults-16k-30d.yaml --set faults.recovery.comm_init=fast");
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.out, "faults.recovery.comm_init")) << r.out;
  const Result s = clustersim("run scenarios/stragglers-175b-12288.yaml --set stragglers.hosts.slowdown=0.9");
  EXPECT_EQ(s.code, 2);
  EXPECT_TRUE(contains(s.out, "stragglers.hosts.slowdown")) << s.out;
  EXPECT_EQ(clustersim("run scenarios/faults-16k-30d.yaml --set network.fidelity=flow").code, 2);
}

}  // namespace
