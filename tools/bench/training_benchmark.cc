// SPDX-License-Identifier: Apache-2.0
// Training benchmark: one iteration of a scenario (default: MegaScale 175B on 12,288 GPUs) at the
// flow level with and without rank folding, sprayed (network.routing: spray) folded, and at
// flow+dcqcn (DCQCN/ECN/PFC as fluid queues) folded, each in its own child process; prints the
// wall time, the peak memory (max RSS of the child) and the simulated iteration. Nothing asserts
// on time.
//
// Usage: training_benchmark [SCENARIO] [--dcqcn-unfolded] [--skip-dcqcn]
//   --dcqcn-unfolded  also flow+dcqcn unfolded (every rank group: much longer)
//   --skip-dcqcn      the flow level only
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "calibration/hardware_profile.h"
#include "sim/core/scenario.h"
#include "sim/engine/flow_training.h"

namespace {

using namespace clustersim;

struct Run {
  const char* fidelity;
  bool fold;
  const char* routing = nullptr;  // network.routing override (nullptr: the scenario's)
};

int run_child(const std::string& path, const Run& run) {
  try {
    std::vector<std::string> set = {std::string("network.fidelity=") + run.fidelity};
    if (run.routing) set.push_back(std::string("network.routing=") + run.routing);
    ScenarioConfig cfg = load_scenario(path, set);
    cfg.training.fold_ranks = run.fold ? FoldRanks::kFold : FoldRanks::kUnfold;
    const calib::HardwareProfile hw = calib::load_hardware_profile(cfg.cluster.gpu, cfg.cluster.source_dir);
    engine::FlowTrainingOptions options;
    options.keep_spans = false;
    const engine::FlowTrainingResult r = engine::simulate_training(cfg, hw, options);
    const std::string level = std::string(run.fidelity) + (run.routing ? std::string(" ") + run.routing : "");
    std::printf("%-16s %-9s %6lld rank groups %9lld ops %10lld flows  iteration %.4f s  MFU %.1f%%  ", level.c_str(),
                run.fold ? "folded" : "unfolded", static_cast<long long>(r.rank_groups),
                static_cast<long long>(r.ops), static_cast<long long>(r.flows), r.estimate.iteration.as_s(),
                100 * r.estimate.mfu);
    std::fflush(stdout);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "training_benchmark: %s\n", e.what());
    return 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string path = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/megascale-175b-12288.yaml";
  bool dcqcn = true;
  bool dcqcn_unfolded = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--dcqcn-unfolded") == 0) {
      dcqcn_unfolded = true;
    } else if (std::strcmp(argv[i], "--skip-dcqcn") == 0) {
      dcqcn = false;
    } else if (std::strcmp(argv[i], "--help") == 0) {
      std::printf("usage: training_benchmark [SCENARIO] [--dcqcn-unfolded] [--skip-dcqcn]\n");
      return 0;
    } else if (argv[i][0] == '-') {
      std::fprintf(stderr, "training_benchmark: unknown option %s (see --help)\n", argv[i]);
      return 2;
    } else {
      path = argv[i];
    }
  }
  // Spraying splits every sub-flow over all equal-cost paths (4,096 agg->core cables between two
  // pods of the default fabric): the run that keeps the flow solver's parallel-link groups honest.
  std::vector<Run> runs = {{"flow", true}, {"flow", false}, {"flow", true, "spray"}};
  if (dcqcn) runs.push_back({"flow+dcqcn", true});
  if (dcqcn && dcqcn_unfolded) runs.push_back({"flow+dcqcn", false});
  std::printf("training_benchmark: %s, one iteration per level (fluid solver)\n", path.c_str());
  for (const Run& run : runs) {
    const auto start = std::chrono::steady_clock::now();
    std::fflush(stdout);
    const pid_t pid = fork();
    if (pid == 0) _exit(run_child(path, run));
    int status = 0;
    rusage usage{};
    wait4(pid, &status, 0, &usage);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::printf("%s %s run failed\n", run.fidelity, run.fold ? "folded" : "unfolded");
      return 1;
    }
    std::printf("wall %.2f s  peak %.0f MiB\n", wall, usage.ru_maxrss / 1024.0);
  }
  return 0;
}
