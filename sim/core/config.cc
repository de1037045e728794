// SPDX-License-Identifier: Apache-2.0
#include "sim/core/config.h"

#include <cassert>
#include <filesystem>

namespace clustersim {

std::string scenario_name(const ScenarioConfig& cfg) {
  if (!cfg.name.empty()) return cfg.name;
  const std::string stem = std::filesystem::path(cfg.file).stem().string();
  return stem.empty() ? cfg.file : stem;
}

const char* to_string(Fidelity f) {
  switch (f) {
    case Fidelity::kAnalytical: return "analytical";
    case Fidelity::kFlow: return "flow";
    case Fidelity::kFlowDcqcn: return "flow+dcqcn";
    case Fidelity::kPacket: return "packet";
  }
  return "?";
}

const char* to_string(OversubscriptionBy o) {
  return o == OversubscriptionBy::kPortSplit ? "port_split" : "fewer_uplinks";
}

const char* to_string(Wiring w) {
  return w == Wiring::kRailOptimized ? "rail_optimized" : "tor_per_server";
}

const char* to_string(Routing r) {
  switch (r) {
    case Routing::kEcmp: return "ecmp";
    case Routing::kDmodK: return "dmodk";
    case Routing::kSpray: return "spray";
  }
  return "?";
}

const char* to_string(FlowSolver s) { return s == FlowSolver::kFluid ? "fluid" : "lmm"; }

const char* to_string(Activation a) { return a == Activation::kGelu ? "gelu" : "swiglu"; }

const char* to_string(Recompute r) {
  switch (r) {
    case Recompute::kNone: return "none";
    case Recompute::kSelective: return "selective";
    case Recompute::kFull: return "full";
  }
  return "?";
}

const char* to_string(Precision p) {
  switch (p) {
    case Precision::kBf16: return "bf16";
    case Precision::kFp16: return "fp16";
    case Precision::kFp8: return "fp8";
  }
  return "?";
}

const char* to_string(TrafficPattern p) {
  switch (p) {
    case TrafficPattern::kShift: return "shift";
    case TrafficPattern::kRandomPermutation: return "random_permutation";
    case TrafficPattern::kRingAllReduce: return "ring_allreduce";
    case TrafficPattern::kAllToAll: return "all_to_all";
    case TrafficPattern::kIncast: return "incast";
  }
  return "?";
}

int data_parallel_size(const ScenarioConfig& cfg) {
  const ParallelismConfig& p = cfg.parallelism;
  const int model_ranks = p.tp * p.pp * p.cp;
  assert(model_ranks > 0 && cfg.cluster.gpus % model_ranks == 0 && "validate the scenario first");
  return cfg.cluster.gpus / model_ranks;
}

int gradient_sync_size(const ScenarioConfig& cfg) { return data_parallel_size(cfg) * cfg.parallelism.cp; }

int micro_batches_per_iteration(const ScenarioConfig& cfg) {
  const int per_replica = cfg.parallelism.micro_batch * data_parallel_size(cfg);
  assert(cfg.training.global_batch % per_replica == 0 && "validate the scenario first");
  return cfg.training.global_batch / per_replica;
}

}  // namespace clustersim
