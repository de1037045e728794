// SPDX-License-Identifier: Apache-2.0
// Speed of the congestion-controlled levels: the packet level on a 128-endpoint all-to-all
// (events and simulated time per wall second), one training iteration on 128 GPUs at the flow,
// flow+dcqcn and packet levels, and flow+dcqcn on a 16,384-GPU shift permutation.
//
// Usage: packet_benchmark [bytes_per_pair] [--skip-large] [--skip-training]
//   bytes_per_pair  all-to-all message per GPU pair (default 1MiB; the scenario's 4MiB takes ~4x)
//   --skip-large    do not run flow+dcqcn on scenarios/net-shift-16k.yaml
//   --skip-training do not run the 128-GPU training iteration
// The 12,288-GPU training scenario at flow+dcqcn is in training_benchmark.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "calibration/hardware_profile.h"
#include "sim/core/scenario.h"
#include "sim/engine/flow_training.h"
#include "sim/engine/network_bench.h"

namespace {

using clustersim::Fidelity;

void report(const char* label, const clustersim::engine::TrafficResult& r) {
  const double wall = r.wall_seconds > 0 ? r.wall_seconds : 1e-9;
  const double sim_s = r.completion_time.as_s();
  std::printf("%-34s %6d GPUs %9lld flows  sim %9.3f ms  wall %8.2f s  events %11lld  %9.3g events/s  "
              "%8.3g sim-s/wall-s  (x%.1f ideal)\n",
              label, r.gpus, static_cast<long long>(r.flows), sim_s * 1e3, wall,
              static_cast<long long>(r.congestion.events), r.congestion.events / wall, sim_s / wall, r.slowdown);
  std::printf("%-34s marks %lld, CNPs %lld, pauses %lld, drops %lld, fluid steps %lld\n", "",
              static_cast<long long>(r.congestion.ecn_marks), static_cast<long long>(r.congestion.cnps),
              static_cast<long long>(r.congestion.pauses), static_cast<long long>(r.congestion.drops),
              static_cast<long long>(r.congestion.steps));
}

// The default scenario's plan (tp 8, pp 8) cut to 128 GPUs and a 16-layer, 4096-wide model, so
// that the packet level, which moves every NVLink and NIC packet, finishes in seconds.
void training_levels(const std::string& dir) {
  const std::vector<std::string> small = {"cluster.gpus=128",  "training.global_batch=16", "model.layers=16",
                                          "model.hidden=4096", "model.heads=32",           "parallelism.vpp=1"};
  double flow_s = 0;
  for (const Fidelity f : {Fidelity::kFlow, Fidelity::kFlowDcqcn, Fidelity::kPacket}) {
    clustersim::ScenarioConfig cfg = clustersim::load_scenario(dir + "megascale-175b-12288.yaml", small);
    cfg.network.fidelity = f;
    const auto hw = clustersim::calib::load_hardware_profile(cfg.cluster.gpu, cfg.cluster.source_dir);
    clustersim::engine::FlowTrainingOptions options;
    options.use_simgrid = false;  // our own event queue: several runs in one process
    options.keep_spans = false;
    const auto r = clustersim::engine::simulate_training(cfg, hw, options);
    const double s = r.estimate.iteration.as_s();
    if (f == Fidelity::kFlow) flow_s = s;
    std::printf("%-34s %6d GPUs %9lld flows  iteration %9.3f ms (%+.2f%% vs flow)  wall %8.2f s\n",
                (std::string("training 128 GPUs, ") + clustersim::to_string(f)).c_str(), cfg.cluster.gpus,
                static_cast<long long>(r.flows), s * 1e3, 100 * (s - flow_s) / flow_s, r.wall_seconds);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string bytes = "1MiB";
  bool large = true;
  bool training = true;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--skip-large") == 0) {
      large = false;
    } else if (std::strcmp(argv[i], "--skip-training") == 0) {
      training = false;
    } else if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::printf("usage: packet_benchmark [bytes_per_pair (default 1MiB)] [--skip-large] [--skip-training]\n");
      return 0;
    } else if (argv[i][0] == '-') {
      std::fprintf(stderr, "packet_benchmark: unknown option %s (see --help)\n", argv[i]);
      return 2;
    } else {
      bytes = argv[i];
    }
  }
  const std::string dir = CLUSTERSIM_SOURCE_DIR "/scenarios/";
  try {
    // Each run uses SimGrid's clock, which carries on from the previous run; results are relative.
    for (const Fidelity f : {Fidelity::kPacket, Fidelity::kFlowDcqcn}) {
      clustersim::ScenarioConfig cfg =
          clustersim::load_scenario(dir + "net-alltoall-128.yaml", {"traffic.bytes_per_pair=" + bytes});
      cfg.network.fidelity = f;
      const std::string label = std::string("all-to-all 128, ") + bytes + ", " + clustersim::to_string(f);
      report(label.c_str(), clustersim::engine::run_traffic(cfg));
    }
    if (training) training_levels(dir);
    if (large) {
      clustersim::ScenarioConfig cfg = clustersim::load_scenario(dir + "net-shift-16k.yaml");
      cfg.network.fidelity = Fidelity::kFlowDcqcn;
      report("net-shift-16k, flow+dcqcn", clustersim::engine::run_traffic(cfg));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "packet_benchmark: %s\n", e.what());
    return 1;
  }
  return 0;
}
