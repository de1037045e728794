// SPDX-License-Identifier: Apache-2.0
// Steady-state decode throughput per GPU under a TPOT limit, and the sweep over micro-batch count,
// pool sizes and batch size that compares attention/FFN disaggregation with two colocated
// baselines: tensor-parallel attention (TP 8 per instance) and data-parallel attention.
#pragma once

#include <string>
#include <vector>

#include "sim/core/config.h"
#include "sim/engine/inference_cost.h"
#include "sim/network/route_source.h"
#include "topology/fabric.h"

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
  double price_per_hour = 0;        // sum over the GPUs of price_per_gpu_hour; 0 when a pool has none
  double tokens_per_cost_unit = 0;  // batch / TPOT x 3600 / price_per_hour; 0 when unpriced
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
  bool rank_by_cost = false;  // best = most tokens per cost unit instead of per GPU (heterogeneous pools)
};

// Best points within the TPOT limit (per GPU, or per cost with grid.rank_by_cost).
struct DecodeSweepResult {
  Time tpot_limit;                 // inference.tpot_limit (0 = none)
  double context = 0;              // mean context per sequence, tokens
  bool rank_by_cost = false;
  std::vector<DecodePoint> points; // every point evaluated
  // Colocated with tensor-parallel attention: tp = the largest entry of grid.colocated_tp (8 by
  // default: one attention replica per 8-GPU node). The baseline the gains are quoted against.
  int baseline_tp = 8;
  DecodePoint colocated_tp_best;
  // Colocated with data-parallel attention: tp below baseline_tp, ep / tp replicas per instance
  // sharing the experts (expert parallelism over the instance). Not found when the grid has no such tp.
  DecodePoint colocated_dp_best;
  std::vector<DecodePoint> afd_best;  // per entry of grid.micro_batches
  std::string gpu_types;              // "attention H200-SXM at 2.6/h, ..." for the table header
};

// A fabric and its routes: a point whose pools (placed from GPU 0, the expert pool after the
// attention pool) fit in it is priced on them as run_serving prices a run (route_pool_links;
// m2n_static_factor, so ECMP collisions count); a point that does not fit, or no fabric, gets the
// block model of the same flows (serving_links; no collisions). sweep_decode builds the
// scenario's fabric grown to the grid's largest deployment (same switches, wiring and ratios).
// Each point sets its pools' GPUs' NVLink speed on the fabric (set_pool_nvlink).
struct SweepFabric {
  topo::Fabric* fabric = nullptr;
  const net::RouteSource* routes = nullptr;
  int gpus = 0;
};

// Points of one deployment (throws nothing: points that do not fit come back with fits = false).
DecodePoint colocated_decode_point(const ScenarioConfig& cfg, int tp, int instance_gpus, int batch,
                                   const SweepFabric& on = {});
// Expert TP: the expert pool's tp, or expert_gpus / experts when there are more GPUs than experts.
DecodePoint afd_decode_point(const ScenarioConfig& cfg, int tp, int attention_gpus, int expert_gpus, int batch, int m,
                             const SweepFabric& on = {});

// Evaluates the grid for the scenario's model and GPU types (pools.colocated / attention / expert
// when present, else cluster.gpu).
DecodeSweepResult sweep_decode(const ScenarioConfig& cfg, const DecodeSweepGrid& grid = {});

// The table: the two colocated rows, then per m the best attention/FFN point with its gain over
// each colocated row, and a note on which baseline is which.
std::string format_decode_sweep(const DecodeSweepResult& r);

}  // namespace clustersim::engine
