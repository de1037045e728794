// SPDX-License-Identifier: Apache-2.0
// Flow-level training benchmark: one iteration of a scenario (default: MegaScale 175B on 12,288
// GPUs) with and without rank folding, each in its own child process; prints the wall time, the
// peak memory (max RSS of the child) and the simulated iteration. Nothing asserts on time.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "calibration/hardware_profile.h"
#include "sim/core/scenario.h"
#include "sim/engine/flow_training.h"

namespace {

using namespace clustersim;

int run_child(const std::string& path, bool fold) {
  ScenarioConfig cfg = load_scenario(path, {"network.fidelity=flow"});
  cfg.training.fold_ranks = fold;
  const calib::HardwareProfile hw = calib::load_hardware_profile(cfg.cluster.gpu, cfg.cluster.source_dir);
  engine::FlowTrainingOptions options;
  options.keep_spans = false;
  const engine::FlowTrainingResult r = engine::simulate_training(cfg, hw, options);
  std::printf("%-9s %6lld rank groups %9lld ops %10lld flows  iteration %.4f s  MFU %.1f%%  ",
              fold ? "folded" : "unfolded", static_cast<long long>(r.rank_groups), static_cast<long long>(r.ops),
              static_cast<long long>(r.flows), r.estimate.iteration.as_s(), 100 * r.estimate.mfu);
  std::fflush(stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/megascale-175b-12288.yaml";
  std::printf("training_benchmark: %s at the flow level (fluid solver), one iteration\n", path.c_str());
  for (const bool fold : {true, false}) {
    const auto start = std::chrono::steady_clock::now();
    std::fflush(stdout);
    const pid_t pid = fork();
    if (pid == 0) _exit(run_child(path, fold));
    int status = 0;
    rusage usage{};
    wait4(pid, &status, 0, &usage);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::printf("%s run failed\n", fold ? "folded" : "unfolded");
      return 1;
    }
    std::printf("wall %.2f s  peak %.0f MiB\n", wall, usage.ru_maxrss / 1024.0);
  }
  return 0;
}
