// SPDX-License-Identifier: Apache-2.0
// Speed of the congestion-controlled levels: the packet level on a 128-endpoint all-to-all
// (events and simulated time per wall second) and flow+dcqcn on a 16,384-GPU shift permutation.
//
// Usage: packet_benchmark [bytes_per_pair] [--skip-large]
//   bytes_per_pair  all-to-all message per GPU pair (default 1MiB; the scenario's 4MiB takes ~4x)
//   --skip-large    do not run flow+dcqcn on scenarios/net-shift-16k.yaml
// The large case is a traffic pattern, not the 12,288-GPU training scenario: training at
// flow+dcqcn is not supported (only `traffic:` scenarios run at the congestion-controlled levels).
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "sim/core/scenario.h"
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

}  // namespace

int main(int argc, char** argv) {
  std::string bytes = "1MiB";
  bool large = true;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--skip-large") == 0) {
      large = false;
    } else if (std::strcmp(argv[i], "--help") == 0) {
      std::printf("usage: packet_benchmark [bytes_per_pair (default 1MiB)] [--skip-large]\n");
      return 0;
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
