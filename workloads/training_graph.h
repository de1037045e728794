// SPDX-License-Identifier: Apache-2.0
// The operation graph of one training iteration: per rank group (the tp x cp GPUs of one pipeline
// stage of one DP replica), its compute passes and communications with their dependencies, for
// TP/SP, CP, 1F1B or interleaved pipelines and ZeRO-0..3 data parallelism.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "calibration/hardware_profile.h"
#include "sim/collectives/collective_cost.h"
#include "sim/core/config.h"
#include "sim/core/units.h"
#include "workloads/moe.h"
#include "workloads/placement.h"

namespace clustersim::work {

enum class OpKind : uint8_t { kCompute, kComm };
// What an op is for; reports attribute time by role.
enum class OpRole : uint8_t {
  kBarrier,        // zero-time join at the start of a pass
  kForward,        // forward compute of one micro-batch through one chunk
  kBackward,       // backward (and recomputation)
  kOptimizer,      // optimizer step
  kTpComm,         // tensor/sequence-parallel collectives
  kCpComm,         // context-parallel K/V ring
  kPpSend,         // pipeline activation or gradient send/recv
  kDpReduce,       // gradient reduce-scatter (all-reduce with ZeRO-0), one bucket
  kDpGather,       // parameter all-gather, one bucket
  kEmbeddingSync,  // tied-embedding gradient all-reduce between the first and last stage
  kEpComm,         // MoE all-to-all (dispatch or combine, one chunk) over the expert-parallel group
  kStepStall,      // the first stage idle before its first forward (training.step_stall: data loading)
};
// The CUDA stream (trace track) an op runs on.
enum class Stream : uint8_t { kCompute, kTp, kPp, kDp };
inline constexpr int kStreamCount = 4;
const char* to_string(OpRole r);
const char* to_string(Stream s);

struct Op {
  // Fields by size, so that an op takes 56 bytes: unfolded graphs hold millions (3.0 million on
  // 12,288 GPUs), and their successors live in TrainingGraph's flat arrays, not in each op.
  Time duration;           // compute: its time; comm: the latency (alpha) paid besides its flows
  Bytes bytes;             // comm: per instance, nccl-tests size (see collective_flows)
  int32_t group = -1;      // rank group that runs it; shared DP ops: the first member
  int32_t peer_group = -1; // send: the receiving rank group
  int32_t microbatch = -1;
  int32_t chunk = -1;
  int32_t comm_set = -1;   // comm: index into TrainingGraph::comm_sets
  // MoE all-to-all: index into TrainingGraph::transfer_sets instead of a comm set; its flows are
  // scaled so that they sum to `bytes`, and run destination to source when `reversed` (combine).
  int32_t transfer_set = -1;
  int32_t layer = -1;      // MoE ops: the model layer
  int32_t preds = 0;       // number of ops that must end first
  OpKind kind = OpKind::kCompute;
  OpRole role = OpRole::kBarrier;
  Stream stream = Stream::kCompute;
  coll::CollectiveOp collective = coll::CollectiveOp::kSendRecv;
  bool main_line = false;  // on the rank group's sequential line (compute stream and the waits it makes)
  bool reversed = false;
};
static_assert(sizeof(Op) <= 56, "an op's fields are ordered by size; keep it small");

// One rank group: tp x cp GPUs of pipeline stage `stage` in DP replica `dp`.
struct RankGroup {
  int stage = 0;
  int dp = 0;
  std::string name;          // "stage3/dp0"
  std::vector<int32_t> gpus;
  bool reported = true;      // the representative replica's, or a straggling replica's
};

struct TrainingGraph {
  std::vector<Op> ops;
  // The ops that wait for op i: succ_targets[succ_offsets[i] .. succ_offsets[i + 1]), in the order
  // the edges were added (the executor releases them in that order).
  std::vector<int32_t> succ_offsets;
  std::vector<int32_t> succ_targets;
  std::span<const int32_t> successors(int32_t id) const {
    const auto b = static_cast<size_t>(succ_offsets[static_cast<size_t>(id)]);
    const auto e = static_cast<size_t>(succ_offsets[static_cast<size_t>(id) + 1]);
    return {succ_targets.data() + b, e - b};
  }
  // Each comm set lists the collective instances an op runs at once, each a list of GPUs in rank
  // order. With folding, a representative's DP op carries every replica's and every TP rank's
  // ring, so the fabric sees the whole cluster's DP traffic.
  std::vector<std::vector<std::vector<int32_t>>> comm_sets;
  // Per comm set, how many of its leading instances an op waits for; the rest are carried: their
  // flows load the fabric from the op's start, but the op ends with its own (a folded
  // representative's TP, CP and pipeline ops carry the folded replicas' lines that leave a node;
  // the executor starts only those that share a link with the op's own: ExecutorOptions::routes).
  std::vector<int32_t> comm_set_waits;
  std::vector<RankGroup> groups;
  // Explicit transfer lists (MoE dispatch: per-destination bytes from the routing matrix), with
  // each list's total bytes.
  std::vector<std::vector<coll::FlowSpec>> transfer_sets;
  std::vector<Bytes> transfer_set_bytes;
  // One MoE layer's all-to-all block of one pass (forward or backward) of a reported rank group:
  // it starts when op `before` ends and ends when op `join` ends; `expert` is the expert compute
  // on the line in between. The flow level measures exposed all-to-all time from these.
  struct MoeBlock {
    int32_t group = -1;
    int32_t layer = -1;
    int32_t before = -1;
    int32_t join = -1;
    Time expert;
  };
  std::vector<MoeBlock> moe_blocks;
  int gpus_per_node = 8;
  bool folded = true;
  int dp = 1;
  std::vector<int> replicas;  // DP replicas simulated, in group order (folded: representative first)
  int micro_batches = 1;
};

// The durations the graph uses, per micro-batch and chunk on one rank group; graph_costs() takes
// them from the cost model exactly as the analytical level does. Tests may set them by hand.
struct GraphCosts {
  Time forward_chunk;         // layers per chunk x layer forward
  Time backward_chunk;        // with recomputation
  Time attention_fwd_chunk;   // attention core within forward_chunk (CP overlap window)
  Time head_forward;          // LM head on the last virtual stage
  Time head_backward;
  Time optimizer;             // optimizer step over the rank's shard
  Time step_stall;            // first stage idle before its first forward (data loading)
  Time tp_latency_per_collective;  // alpha of one TP/SP collective (AG + RS pair, or AR)
  Time cp_latency_per_ring;        // alpha of one CP K/V ring
  Time pp_latency;            // alpha of one send/recv
  Time dp_latency_reduce;     // alpha of one DP reduce-scatter (all-reduce)
  Time dp_latency_gather;     // alpha of one DP all-gather
  Time emb_latency;           // alpha of the embedding all-reduce
  double params_on_gpu = 0;   // parameters on the most loaded stage
  double bucket_params = 40e6;
  // MoE (model.moe): each stage's layers and their costs (moe_stage_costs; the same numbers as
  // the analytical level), the expert parameters on one GPU (synced over the expert-data-parallel
  // group; params_on_gpu is then the dense part) and that group's collective latencies.
  std::vector<MoeStageCost> moe_stages;
  double expert_params = 0;
  Time edp_latency_reduce;
  Time edp_latency_gather;
};
GraphCosts graph_costs(const ScenarioConfig& cfg, const calib::HardwareProfile& hw);

// The rings that sync stage `stage`'s dense gradients (GPUs in ring order): one per TP position
// over the dp x cp ranks (gradient_sync_size); for an MoE model under sp attention, one over the
// dp x cp x tp ranks (the dense part is replicated over tp too). `pl` is the scenario's placement.
std::vector<std::vector<int32_t>> dense_dp_rings(const ScenarioConfig& cfg, const Placement& pl, int stage);
// The members per node the rings of every stage (`rings_of_stage(s)`) run with
// (coll::ring_members_per_node: a ring split unevenly over nodes runs member to member), the
// fewest over the stages: the step waits for the slowest, and where a stage does not fill whole
// nodes one stage's rings may sit inside a node while the next's straddle two. 1 with no ring.
int fewest_ring_members_per_node(const ScenarioConfig& cfg,
                                 const std::function<std::vector<std::vector<int32_t>>(int)>& rings_of_stage);
// That of the dense_dp_rings.
int dense_dp_ring_members_per_node(const ScenarioConfig& cfg, const Placement& pl);
// The tensor-parallel groups of DP replica `replica` at stage `stage`: one per CP position.
std::vector<std::vector<int32_t>> tp_groups(const ScenarioConfig& cfg, const Placement& pl, int replica, int stage);
// The context-parallel K/V rings of DP replica `replica` at stage `stage`: one per TP position.
std::vector<std::vector<int32_t>> cp_rings(const ScenarioConfig& cfg, const Placement& pl, int replica, int stage);
// Their hops, as Transformer Engine's p2p exchange sends them (Megatron-LM's default
// --cp-comm-type): every rank to the next of its ring, {from, to}, each hop point to point (a hop
// between nodes crosses on one NIC).
std::vector<std::vector<int32_t>> cp_hops(const ScenarioConfig& cfg, const Placement& pl, int replica, int stage);
// The tied-embedding gradient all-reduce of DP replica `replica`: one pair (first stage, last
// stage) per TP and CP position; empty without pipeline parallelism or tied embeddings.
std::vector<std::vector<int32_t>> embedding_sync_pairs(const ScenarioConfig& cfg, const Placement& pl, int replica);
// MoE: the expert-data-parallel rings of stage `stage`, one per expert-TP and EP position; empty
// when the experts have one replica.
std::vector<std::vector<int32_t>> expert_dp_rings(const ScenarioConfig& cfg, int stage);

// Straggler hooks (issue 9): how one rank group's passes differ from the nominal ones. Compute
// factors multiply the pass's time (a slow host; longer sequences); `traffic` multiplies its
// TP/CP and pipeline bytes (tokens per micro-batch).
struct GroupScaling {
  double forward = 1.0;        // layers' forward compute
  double backward = 1.0;       // layers' backward compute (with recomputation)
  double head_forward = 1.0;   // LM head, last stage
  double head_backward = 1.0;
  double traffic = 1.0;
};
struct GraphStragglers {
  // Layers of each stage over the even share, model.layers / pp (empty: every stage even). It
  // scales compute and TP traffic of every replica alike.
  std::vector<double> stage_layers;
  // Replicas that differ from the rest, with one entry per stage. With folding they are simulated
  // on their own (all their stages, since the pipeline couples them); the rest stay folded into
  // one representative, the first replica not listed. A replica may be listed with unit factors
  // (its pipeline sends cross a degraded NIC).
  std::map<int, std::vector<GroupScaling>> replicas;
  bool empty() const { return stage_layers.empty() && replicas.empty(); }
};

// Builds the graph for a validated scenario. Folded (folds_replicas), one representative
// rank group per stage (DP replica 0, or the first replica `stragglers` does not list) carries
// the schedule; its DP collectives and the embedding sync still put every replica's flows on the
// fabric, and so do its TP, CP and pipeline ops for every line that leaves a node (a folded
// replica's lines inside a node cannot meet another's). Replicas listed in `stragglers` get rank groups of their own, and the DP collectives
// wait for them. Without folding, every rank group has its own ops and DP collectives wait for
// every replica. `expected_ops` (training_graph_ops, when known) sizes the op list once: growing
// it by doubling held the old and the new list at once, 352 MB of ops for 3.0 million on
// 12,288 GPUs unfolded, where the ops take 167 MB.
TrainingGraph build_training_graph(const ScenarioConfig& cfg, const GraphCosts& costs,
                                   const GraphStragglers& stragglers = {}, int64_t expected_ops = 0);

// The DP replicas build_training_graph simulates, in its group order, and whether it folds:
// folded, the representative (the first replica `stragglers` does not list) and every listed
// one; without folding (or when that is every replica), all of them.
std::vector<int> simulated_replicas(const ScenarioConfig& cfg, const GraphStragglers& stragglers, bool& folded);

// Whether the flow level folds the DP replicas into one representative: training.fold_ranks true,
// or auto where TP groups stay inside nodes. Where they span nodes the replicas' TP flows meet
// out of step between nodes, which folding (in step) does not see: MegaScale 175B placed DP first
// came out 18 to 26% fast folded, a 70B plan on 2,048 GPUs 47% (12.21 s against 23.15 s), so auto
// simulates every replica there (since 2026-12-06; before, it folded unless told not to).
// CP groups across nodes alone keep folding: Llama 3 405B on 16,384 GPUs with cp 2 (each CP group
// over two nodes) is 0.3% fast folded (6.483 against 6.501 s), in 2.1 s against 41 s; as cp 1, as
// shipped, 0.7% (6.824 against 6.873 s). Nor does auto fold where pipeline sends or CP rings cross
// a tapered tier (replica_lines_cross_taper, since 2026-12-07): folded, every replica's sends meet
// the representative's there at once, where unfolded ones drift apart. Llama 3 405B placed PP
// outermost over an agg tier tapered 8:1 came out 25% slow folded (8.818 against 7.034 s; 2:1 7%,
// 7.353 against 6.873 s), its own plan (DP outermost, each pipeline inside a pod) stays folded.
bool folds_replicas(const ScenarioConfig& cfg);
int simulated_replica_count(const ScenarioConfig& cfg, const GraphStragglers& stragglers = {});

// The ops build_training_graph makes for `cfg`, without building its graph when the pipelines
// hold more than 4 pp micro-batches or it simulates more than 2 replicas: counted on the graphs
// of 2 pp and 4 pp micro-batches and extrapolated (every count, passes, their TP, CP and MoE ops,
// sends and barriers, grows by the same ops per micro-batch from pp on; the DP collectives and
// the optimizer do not grow), and on those of 1 and 2 simulated replicas and extrapolated (each
// replica's rank groups hold the same ops; the folded lines are flows, not ops).
int64_t training_graph_ops(const ScenarioConfig& cfg, const GraphCosts& costs, const GraphStragglers& stragglers = {});

}  // namespace clustersim::work
