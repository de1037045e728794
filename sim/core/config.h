// SPDX-License-Identifier: Apache-2.0
// Scenario configuration: plain structs with defaults and unit types. No yaml-cpp here; the one
// loader (sim/core/load_yaml.cc) fills these, `validate_scenario` checks them. Every key is
// documented with its default in scenarios/README.md.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sim/core/dcqcn_config.h"
#include "sim/core/faults_config.h"
#include "sim/core/inference_config.h"
#include "sim/core/moe_config.h"
#include "sim/core/stragglers_config.h"
#include "sim/core/units.h"

namespace clustersim {

enum class Fidelity { kAnalytical, kFlow, kFlowDcqcn, kPacket };
enum class Wiring { kRailOptimized, kTorPerServer };
// How a tier's down:up ratio takes the switch's ports: split the radix at the ratio (more down
// ports: bigger ToR groups and pods), or keep half of them down as at 1:1 (the same groups and
// pods) and cable down / ratio of them up, the rest unused (a tapered fabric).
enum class OversubscriptionBy { kPortSplit, kFewerUplinks };
enum class Routing { kEcmp, kDmodK, kSpray };
enum class FlowSolver { kFluid, kLmm };
enum class Activation { kGelu, kSwiglu };
enum class Recompute { kNone, kSelective, kFull };
enum class Precision { kBf16, kFp16, kFp8 };
enum class Schedule { k1F1B, kInterleaved1F1B };

// The largest cluster (and serving pool) accepted: 2^20 GPUs, the largest the simulator is
// sized and benchmarked for (a 1,048,576-GPU traffic run takes about 3 GB).
inline constexpr int kMaxGpus = 1 << 20;

// `cluster`: what hardware there is.
struct ClusterConfig {
  std::string gpu = "H100-SXM";  // built-in profile name, or a path to a profile file
  int gpus = 0;                  // required
  int gpus_per_node = 8;
  int nics_per_node = 8;
  Bandwidth nic_bandwidth = gbps(400);
  std::string source_dir;        // directory of the scenario file, to resolve relative paths
};

// A link or switch that is down or slower than built. Links are named "tier:index" as printed by
// `clustersim topo --list-links`; switches "tor:3", "agg:2.1", "core:7".
// The smallest factor a degraded (not failed) link may have: below it its transfers outrun the
// range of simulated time.
inline constexpr double kMinDegradedFactor = 1e-6;

struct FabricFault {
  std::string element;
  double bandwidth_factor = 0.0;  // 0 = failed, [kMinDegradedFactor, 1) = degraded; 1 when only extra_latency is given
  Time extra_latency = Time::zero();
  int line = 0;  // in the scenario file, for messages (0: not from a file)
};

// `network`: the fabric and how finely it is simulated.
// The largest down:up port ratio a scenario may ask for at a switch tier.
inline constexpr double kMaxOversubscription = 64.0;

struct NetworkConfig {
  Fidelity fidelity = Fidelity::kAnalytical;
  int tiers = 3;                              // 2 (leaf/spine) or 3 (ToR/agg/core) Clos
  Wiring wiring = Wiring::kRailOptimized;
  int switch_radix = 64;                      // ports per switch, every tier
  double tor_oversubscription = 1.0;          // ToR down:up port ratio, in [1, kMaxOversubscription]
  double agg_oversubscription = 1.0;          // aggregation down:up ratio, >= 1
  OversubscriptionBy oversubscription_by = OversubscriptionBy::kPortSplit;
  std::optional<Bandwidth> fabric_bandwidth;  // switch-to-switch links; default = cluster.nic_bandwidth
  Time host_link_latency = Time::us(1.0);     // NIC to ToR, one way
  Time fabric_link_latency = Time::us(1.0);   // each switch-to-switch hop, one way
  Time switch_latency = Time::ns(500);        // per switch traversed
  std::optional<Bandwidth> nvlink_bandwidth;  // per GPU per direction; default from the GPU profile
  Time nvlink_latency = Time::us(2.0);
  Routing routing = Routing::kEcmp;
  int qps_per_connection = 1;
  // NCCL's PXN for all-to-all traffic (MoE dispatch and combine, serving's expert all-to-all, the
  // all_to_all traffic pattern): a send to another rail goes over NVLink to the sender node's GPU
  // on the destination's rail first (coll::route_through_pxn). NCCL's default; false is
  // NCCL_PXN_DISABLE=1.
  bool pxn = true;
  uint64_t ecmp_seed = 0;
  // Analytical level, ECMP: the routed slowdowns are the mean over this many hash draws (seeds
  // ecmp_seed, ecmp_seed + 1, ...) instead of the one draw of ecmp_seed.
  int ecmp_draws = 1;
  FlowSolver solver = FlowSolver::kFluid;
  Time merge_tolerance = Time::us(0.1);       // flow completions closer than this are merged
  double rate_tolerance = 0.0;                // fraction of a finished flow's lifetime its bandwidth may idle
  std::vector<FabricFault> faults;
  DcqcnConfig dcqcn;                          // `network.dcqcn`: congestion control parameters
};

// `model`: a GPT/Llama-style dense transformer.
struct ModelConfig {
  std::string name;
  int layers = 0;        // required
  int hidden = 0;        // required
  int heads = 0;         // required
  int kv_heads = 0;      // 0 = same as heads (no GQA)
  int head_dim = 0;      // size of one attention head (training and serving); 0 = hidden / heads
  int ffn_hidden = 0;    // 0 = 4 * hidden
  int seq_len = 0;       // required
  int vocab = 0;         // required
  Activation activation = Activation::kGelu;
  bool tied_embeddings = true;
  bool learned_positions = true;  // GPT-style learned position embeddings (false: rotary, no parameters)
  int attention_window = 0;  // sliding-window attention span in tokens; 0 = full causal attention
  std::optional<MoeConfig> moe;  // `model.moe`: set for a Mixture-of-Experts model (sim/core/moe_config.h)
};

// `parallelism`: how the model is split. DP is derived: gpus / (tp * pp * cp).
struct ParallelismConfig {
  int tp = 1;
  int pp = 1;
  int vpp = 1;                   // virtual stages per pipeline rank (interleaved 1F1B when > 1)
  int cp = 1;
  int micro_batch = 1;           // sequences per micro-batch
  bool sequence_parallel = true; // Megatron SP with TP
  int zero_stage = 1;            // 0, 1, 2, 3 (distributed optimizer = 1)
  // Rank order, fastest-varying first (Megatron-LM's default tp-cp-dp-pp): a permutation of
  // tp, cp, dp, pp. Consecutive ranks fill a node, so tp first keeps TP inside the NVLink domain.
  std::string placement = "tp-cp-dp-pp";
  int ep = 1;         // MoE: expert parallelism (experts / ep per GPU), within the stage's GPUs
  int expert_tp = 1;  // MoE: tensor parallelism of each expert (inside a node)
  // MoE models: whole layers per pipeline stage, read from stragglers.stage_layers (empty: the
  // even split). For an MoE model the list is the plan's layer map, priced in every run and its
  // straggler-free reference alike; a dense model keeps it in StragglersConfig, where it is
  // compared with the even split (scenarios/README.md, stragglers.stage_layers).
  std::vector<int> stage_layers;
};

// `training.overlap`: which communication hides behind compute (MegaScale section 3.2).
struct OverlapConfig {
  bool dp_grad_reduce = true;    // bucketed reduce-scatter during backward
  bool dp_param_gather = true;   // all-gather during forward (ZeRO >= 1)
  bool tp_comm = false;          // TP/SP collectives overlapped with GEMMs
  bool pp_p2p = false;           // PP send/recv off the critical path
  int a2a_chunks = 1;            // MoE: all-to-all pipelined with expert compute in up to n chunks (1 = none)
};

// training.fold_ranks: true, false or auto (the default).
enum class FoldRanks { kAuto, kFold, kUnfold };

// `training`: the step being simulated.
struct TrainingConfig {
  int global_batch = 0;          // required: sequences per iteration
  Precision precision = Precision::kBf16;
  Recompute recompute = Recompute::kNone;
  bool parallel_block = false;   // attention and MLP in parallel (PaLM/MegaScale PTB)
  bool flash_attention = true;   // fused attention kernel instead of matmul-softmax-matmul
  int flash_attention_version = 2;  // 2 = FlashAttention-2; 1 = FlashAttention(-1), about half its rate
  bool fused_kernels = true;     // fused layernorm/activation/dropout kernels
  bool memory_check = true;      // reject plans whose memory estimate exceeds the GPU; false = report only
  bool dropout = true;           // hidden dropout (GPT/Megatron-LM 0.1): its 1-byte masks are kept per layer
  bool fp32_grad_reduce = true;  // gradients reduced in FP32 (Megatron default); false = BF16
  Time step_stall = Time::zero();  // GPUs idle once per step outside the schedule (data loading, host stalls)
  OverlapConfig overlap;
  int64_t dp_bucket_size = 0;    // gradient bucket in parameters, 0 or >= 100,000; 0 = Megatron's max(40M, 1M x dp)
  // Flow level: simulate one representative of the DP replicas (kFold), every replica (kUnfold),
  // or, kAuto, fold unless TP groups span nodes (work::folds_replicas).
  FoldRanks fold_ranks = FoldRanks::kAuto;
  AttentionParallel attention_parallel = AttentionParallel::kTp;  // MoE: attention over the tp group
  CommPrecision comm_precision = CommPrecision::kDefault;        // MoE: all-to-all and gradient sync
  bool moe_grouped_gemm = false;  // MoE: true = a GPU's experts in one grouped GEMM per projection (Megatron-LM --moe-grouped-gemm); false (Megatron-LM's default) = one GEMM per expert
};

// `traffic`: a network microbenchmark instead of a training step (scenarios/net-*.yaml).
enum class TrafficPattern { kShift, kRandomPermutation, kRingAllReduce, kAllToAll, kIncast };
struct TrafficConfig {
  TrafficPattern pattern = TrafficPattern::kShift;
  Bytes bytes_per_pair = Bytes::mib(64);  // per (source, destination) pair; per rank for ring
  int shift = 0;                          // shift distance in GPUs; 0 = gpus_per_node (next node)
  int incast_senders = 32;                // N of N-to-1
  uint64_t seed = 0;                      // random permutation
};

struct ScenarioConfig {
  std::string file;  // where it was loaded from, for messages
  std::map<std::string, int> lines;  // key path -> line in `file`, for messages about values
  std::set<std::string> given;       // every key path the file or --set gives ("network.dcqcn.g")
  std::string name;
  std::string description;
  ClusterConfig cluster;
  NetworkConfig network;
  ModelConfig model;
  ParallelismConfig parallelism;
  TrainingConfig training;
  std::optional<TrafficConfig> traffic;  // set: the scenario is a network microbenchmark
  std::optional<InferenceConfig> inference;  // set: the scenario is a serving simulation
  std::optional<FaultsConfig> faults;        // set: job-level reliability over days
  StragglersConfig stragglers;               // slow GPUs/hosts/links/stages (empty: none)
};

// What reports call the scenario: its `name`, else its file's name without the folder and the
// extension (`runs/x.yaml` -> `x`), the same from any directory and however the path is spelt
// (until 2026-12-07 the path as typed: results.json differed between `./x.yaml` and `/abs/x.yaml`).
std::string scenario_name(const ScenarioConfig& cfg);

// Names as written in scenarios, for messages and reports.
const char* to_string(Fidelity f);
const char* to_string(Wiring w);
const char* to_string(OversubscriptionBy o);
const char* to_string(Routing r);
const char* to_string(FlowSolver s);
const char* to_string(Activation a);
const char* to_string(Recompute r);
const char* to_string(Precision p);
const char* to_string(TrafficPattern p);

// Derived plan quantities, valid only for a validated config.
int data_parallel_size(const ScenarioConfig& cfg);
// The ranks that hold the same parameters of a stage and TP position and reduce their gradients
// together, over which ZeRO shards: the DP replicas times the CP ranks (Megatron-LM's data-parallel
// group with context parallelism; before 2026-12-05 the DP replicas alone, so each CP rank kept
// its own gradients and a cp-fold larger optimizer shard).
int gradient_sync_size(const ScenarioConfig& cfg);
int micro_batches_per_iteration(const ScenarioConfig& cfg);  // per pipeline, per DP replica

}  // namespace clustersim
