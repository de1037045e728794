// SPDX-License-Identifier: Apache-2.0
// Steady-state decode throughput per GPU under a TPOT limit, and the sweep over micro-batch count,
// pool sizes and batch size that compares attention/FFN disaggregation with colocated serving.
#pragma once

#include <string>
#include <vector>

#include "sim/core/config.h"
#include "sim/engine/inference_cost.h"

namespace clustersim::engine {

// One deployment decoding `batch` sequences at once, each at the mean context (prompt mean +
// output mean / 2), every step a decode step: TPOT = step time, throughput = batch / TPOT.
struct DecodePoint {
  ServingMode mode = ServingMode::kColocated;
  int micro_batches = 1;
  int tp = 1;              // attention TP
  int instance_gpus = 0;   // colocated: ep (GPUs per instance)
  int attention_gpus = 0;  // attention_ffn
  int expert_gpus = 0;
  int batch = 0;           // sequences decoding together
  int gpus = 0;            // GPUs the throughput is divided by
  bool fits = false;       // weights fit and batch x (prompt + output) fits the KV cache
  Time tpot;
  double tokens_per_s_per_gpu = 0;
  StepTiming timing;
};

struct DecodeSweepGrid {
  std::vector<int> micro_batches{1, 2, 3, 4};
  std::vector<int> attention_tp{1, 2, 4, 8};  // attention pool TP (replicas = attention GPUs / tp)
  std::vector<int> colocated_tp{1, 2, 4, 8};  // colocated attention TP (ep / tp data-parallel replicas)
  std::vector<int> attention_gpus{8, 16, 24, 32, 40, 48};
  std::vector<int> expert_gpus{8, 16};
  std::vector<int> colocated_instance_gpus{8, 16};  // ep of a colocated instance (tp from the scenario)
  std::vector<int> batches{16, 32, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192};
};

struct DecodeSweepResult {
  Time tpot_limit;                 // inference.tpot_limit (0 = none)
  double context = 0;              // mean context per sequence, tokens
  std::vector<DecodePoint> points; // every point evaluated
  DecodePoint colocated_best;      // best per-GPU throughput within the limit
  std::vector<DecodePoint> afd_best;  // per entry of grid.micro_batches
};

// Points of one deployment (throws nothing: points that do not fit come back with fits = false).
DecodePoint colocated_decode_point(const ScenarioConfig& cfg, int tp, int instance_gpus, int batch);
// Expert TP: the expert pool's tp, or expert_gpus / experts when there are more GPUs than experts.
DecodePoint afd_decode_point(const ScenarioConfig& cfg, int tp, int attention_gpus, int expert_gpus, int batch, int m);

// Evaluates the grid for the scenario's model and GPU types (pools.colocated / attention / expert
// when present, else cluster.gpu).
DecodeSweepResult sweep_decode(const ScenarioConfig& cfg, const DecodeSweepGrid& grid = {});

// The table: colocated best, then per m the best attention/FFN point and its gain.
std::string format_decode_sweep(const DecodeSweepResult& r);

}  // namespace clustersim::engine
