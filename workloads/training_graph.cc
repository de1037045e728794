// SPDX-License-Identifier: Apache-2.0
#include "workloads/training_graph.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "calibration/compute_cost.h"
#include "sim/collectives/collective_flows.h"
#include "workloads/pipeline_schedule.h"
#include "workloads/placement.h"
#include "workloads/training_costs.h"
#include "workloads/transformer.h"

namespace clustersim::work {

using coll::CollectiveOp;

const char* to_string(OpRole r) {
  switch (r) {
    case OpRole::kBarrier: return "barrier";
    case OpRole::kForward: return "forward";
    case OpRole::kBackward: return "backward";
    case OpRole::kOptimizer: return "optimizer";
    case OpRole::kTpComm: return "tp_comm";
    case OpRole::kCpComm: return "cp_comm";
    case OpRole::kPpSend: return "pp_send";
    case OpRole::kDpReduce: return "dp_reduce";
    case OpRole::kDpGather: return "dp_gather";
    case OpRole::kEmbeddingSync: return "embedding_sync";
    case OpRole::kEpComm: return "ep_comm";
    case OpRole::kStepStall: return "step_stall";
  }
  return "?";
}

const char* to_string(Stream s) {
  switch (s) {
    case Stream::kCompute: return "compute";
    case Stream::kTp: return "tp";
    case Stream::kPp: return "pp";
    case Stream::kDp: return "dp";
  }
  return "?";
}

namespace {

// f x t, exact when f is 1 (straggler factors leave straggler-free graphs bit for bit unchanged).
Time scaled(double f, Time t) { return f == 1.0 ? t : f * t; }

std::vector<int32_t> line(const Placement& pl, Dim along, int tp, int cp, int dp, int pp) {
  std::vector<int32_t> out;
  const int n = pl.size(along);
  for (int i = 0; i < n; ++i) {
    out.push_back(pl.gpu(along == Dim::kTp ? i : tp, along == Dim::kCp ? i : cp, along == Dim::kDp ? i : dp,
                         along == Dim::kPp ? i : pp));
  }
  return out;
}

class Builder {
 public:
  TrainingGraph g;

  int32_t add(const Op& op) {
    g.ops.push_back(op);
    return static_cast<int32_t>(g.ops.size() - 1);
  }
  void edge(int32_t from, int32_t to) {
    if (from < 0 || to < 0) return;
    edges_.emplace_back(from, to);
    ++g.ops[to].preds;
  }
  // The graph with its edges as flat successor lists (a counting sort by source that keeps each
  // source's edges in the order they were added).
  TrainingGraph finish() {
    g.succ_offsets.assign(g.ops.size() + 1, 0);
    for (const auto& [from, to] : edges_) ++g.succ_offsets[static_cast<size_t>(from) + 1];
    for (size_t i = 0; i < g.ops.size(); ++i) g.succ_offsets[i + 1] += g.succ_offsets[i];
    g.succ_targets.resize(edges_.size());
    std::vector<int32_t> next(g.succ_offsets.begin(), g.succ_offsets.end() - 1);
    for (const auto& [from, to] : edges_) g.succ_targets[static_cast<size_t>(next[static_cast<size_t>(from)]++)] = to;
    edges_ = {};
    return std::move(g);
  }
  // `waits`: the leading instances an op waits for (TrainingGraph::comm_set_waits); -1 = all.
  int32_t comm_set(std::vector<std::vector<int32_t>> instances, int32_t waits = -1) {
    g.comm_set_waits.push_back(waits < 0 ? static_cast<int32_t>(instances.size()) : waits);
    g.comm_sets.push_back(std::move(instances));
    return static_cast<int32_t>(g.comm_sets.size() - 1);
  }
  static Op compute(OpRole role, int32_t group, Time duration) {
    Op op;
    op.kind = OpKind::kCompute;
    op.role = role;
    op.stream = Stream::kCompute;
    op.main_line = true;
    op.group = group;
    op.duration = duration;
    return op;
  }
  static Op comm(OpRole role, Stream stream, int32_t group, CollectiveOp c, Bytes bytes, Time latency, int32_t set) {
    Op op;
    op.kind = OpKind::kComm;
    op.role = role;
    op.stream = stream;
    op.group = group;
    op.collective = c;
    op.bytes = bytes;
    op.duration = latency;
    op.comm_set = set;
    return op;
  }

 private:
  std::vector<std::pair<int32_t, int32_t>> edges_;  // (from, to), in the order added
};

}  // namespace

GraphCosts graph_costs(const ScenarioConfig& cfg, const calib::HardwareProfile& hw) {
  const ParallelismConfig& p = cfg.parallelism;
  const int dp = data_parallel_size(cfg);
  const int gpn = cfg.cluster.gpus_per_node;
  const Placement pl(p.placement, p.tp, p.cp, dp, p.pp);
  const TrainingLinks l = training_links(cfg, hw);
  const LayerTimes lt = layer_times(cfg, hw);
  const double layers_chunk = static_cast<double>(cfg.model.layers) / (p.pp * p.vpp);
  GraphCosts c;
  c.forward_chunk = layers_chunk * lt.forward;
  c.backward_chunk = layers_chunk * lt.backward;
  c.attention_fwd_chunk = layers_chunk * lt.attention_fwd;
  const Time head = head_time(cfg, hw);
  // One of the head's three GEMMs runs forward, two backward (input and weight gradients).
  c.head_forward = (1.0 / 3.0) * head;
  c.head_backward = head - c.head_forward;
  using coll::Algorithm;
  using coll::collective_latency;
  const coll::GroupLinks tp_g =
      group_links(p.tp, pl.ranks_per_node(Dim::kTp, gpn), l);
  c.tp_latency_per_collective =
      p.sequence_parallel ? collective_latency(CollectiveOp::kAllGather, Algorithm::kRing, tp_g) +
                                collective_latency(CollectiveOp::kReduceScatter, Algorithm::kRing, tp_g)
                          : collective_latency(CollectiveOp::kAllReduce, Algorithm::kRing, tp_g);
  const coll::GroupLinks cp_g =
      group_links(p.cp, pl.ranks_per_node(Dim::kCp, gpn), l);
  c.cp_latency_per_ring = collective_latency(CollectiveOp::kAllGather, Algorithm::kRing, cp_g);
  const bool pp_inter = p.pp > 1 && pl.gpu(0, 0, 0, 0) / gpn != pl.gpu(0, 0, 0, 1) / gpn;
  c.pp_latency = p.pp > 1 ? (pp_inter ? l.net_alpha : l.nvlink_alpha) : Time::zero();
  // Gradients sync, and ZeRO shards, over the DP x CP ranks.
  const int sync = gradient_sync_size(cfg);
  const coll::GroupLinks dp_g = group_links(sync, dense_dp_ring_members_per_node(cfg, pl), l);
  c.dp_latency_reduce = collective_latency(
      p.zero_stage == 0 ? CollectiveOp::kAllReduce : CollectiveOp::kReduceScatter, Algorithm::kRing, dp_g);
  c.dp_latency_gather = collective_latency(CollectiveOp::kAllGather, Algorithm::kRing, dp_g);
  c.emb_latency = collective_latency(CollectiveOp::kAllReduce, Algorithm::kRing, group_links(2, 1, l));
  c.params_on_gpu = memory_per_gpu(cfg).params_on_gpu;
  const double shard = p.zero_stage >= 1 ? c.params_on_gpu / sync : c.params_on_gpu;
  c.optimizer = calib::memory_time(bytes_of(shard * kAdamBytesPerParam), hw);
  c.step_stall = cfg.training.step_stall;
  c.bucket_params = dp_bucket_params(cfg, sync);
  if (cfg.model.moe) {
    // As the analytical level: dense and expert parts synced over their own groups, and the
    // optimizer over this GPU's shards of both.
    c.moe_stages = moe_stage_costs(cfg, hw, moe_links(cfg, l));
    const MoeDpTimes moe_dp = moe_dp_times(cfg, l, l);  // parameter counts only
    c.params_on_gpu = moe_dp.dense_params;
    c.expert_params = moe_dp.expert_params;
    c.optimizer = calib::memory_time(bytes_of(memory_per_gpu(cfg).most_optimizer.as_double() / 12.0 * kAdamBytesPerParam), hw);
    const ExpertLayout lay = expert_layout(cfg, 0);
    const coll::GroupLinks eg = group_links(lay.edp, std::max(1, gpn / (lay.ep * lay.etp)), l);
    c.edp_latency_reduce = collective_latency(
        p.zero_stage == 0 ? CollectiveOp::kAllReduce : CollectiveOp::kReduceScatter, Algorithm::kRing, eg);
    c.edp_latency_gather = collective_latency(CollectiveOp::kAllGather, Algorithm::kRing, eg);
    if (cfg.training.attention_parallel == AttentionParallel::kSp) {
      // The dense part is replicated over the tp group too: one ring of dp x cp x tp ranks.
      const coll::GroupLinks dg = group_links(sync * p.tp, dense_dp_ring_members_per_node(cfg, pl), l);
      c.dp_latency_reduce = collective_latency(
          p.zero_stage == 0 ? CollectiveOp::kAllReduce : CollectiveOp::kReduceScatter, Algorithm::kRing, dg);
      c.dp_latency_gather = collective_latency(CollectiveOp::kAllGather, Algorithm::kRing, dg);
    }
  }
  return c;
}

std::vector<std::vector<int32_t>> dense_dp_rings(const ScenarioConfig& cfg, const Placement& pl, int stage) {
  const ParallelismConfig& p = cfg.parallelism;
  const int dp = pl.size(Dim::kDp);
  std::vector<std::vector<int32_t>> rings;
  // The CP ranks hold the same weights as the DP replicas: every ring runs over both, in GPU
  // order (one ring per CP position until 2026-12-05).
  const auto ring_over = [&](int t_first, int t_end) {
    std::vector<int32_t> ring;
    for (int ci = 0; ci < p.cp; ++ci) {
      for (int r = 0; r < dp; ++r) {
        for (int t = t_first; t < t_end; ++t) ring.push_back(pl.gpu(t, ci, r, stage));
      }
    }
    std::sort(ring.begin(), ring.end());
    rings.push_back(std::move(ring));
  };
  if (cfg.model.moe && cfg.training.attention_parallel == AttentionParallel::kSp) {
    ring_over(0, p.tp);
    return rings;
  }
  for (int t = 0; t < p.tp; ++t) ring_over(t, t + 1);
  return rings;
}

int fewest_ring_members_per_node(const ScenarioConfig& cfg,
                                 const std::function<std::vector<std::vector<int32_t>>(int)>& rings_of_stage) {
  int fewest = INT32_MAX;
  for (int s = 0; s < cfg.parallelism.pp; ++s) {
    for (const std::vector<int32_t>& r : rings_of_stage(s)) {
      if (!r.empty()) fewest = std::min(fewest, coll::ring_members_per_node(r, cfg.cluster.gpus_per_node));
    }
  }
  return fewest == INT32_MAX ? 1 : fewest;
}

int dense_dp_ring_members_per_node(const ScenarioConfig& cfg, const Placement& pl) {
  return fewest_ring_members_per_node(cfg, [&](int s) { return dense_dp_rings(cfg, pl, s); });
}

std::vector<std::vector<int32_t>> tp_groups(const ScenarioConfig& cfg, const Placement& pl, int replica, int stage) {
  std::vector<std::vector<int32_t>> groups;
  for (int ci = 0; ci < cfg.parallelism.cp; ++ci) groups.push_back(line(pl, Dim::kTp, 0, ci, replica, stage));
  return groups;
}

std::vector<std::vector<int32_t>> cp_rings(const ScenarioConfig& cfg, const Placement& pl, int replica, int stage) {
  std::vector<std::vector<int32_t>> rings;
  for (int t = 0; t < cfg.parallelism.tp; ++t) rings.push_back(line(pl, Dim::kCp, t, 0, replica, stage));
  return rings;
}

std::vector<std::vector<int32_t>> cp_hops(const ScenarioConfig& cfg, const Placement& pl, int replica, int stage) {
  std::vector<std::vector<int32_t>> hops;
  for (const std::vector<int32_t>& ring : cp_rings(cfg, pl, replica, stage)) {
    for (size_t i = 0; i < ring.size() && ring.size() > 1; ++i) hops.push_back({ring[i], ring[(i + 1) % ring.size()]});
  }
  return hops;
}

std::vector<std::vector<int32_t>> embedding_sync_pairs(const ScenarioConfig& cfg, const Placement& pl, int replica) {
  const ParallelismConfig& p = cfg.parallelism;
  std::vector<std::vector<int32_t>> pairs;
  if (p.pp <= 1 || !cfg.model.tied_embeddings) return pairs;
  for (int ci = 0; ci < p.cp; ++ci) {
    for (int t = 0; t < p.tp; ++t) pairs.push_back({pl.gpu(t, ci, replica, 0), pl.gpu(t, ci, replica, p.pp - 1)});
  }
  return pairs;
}

std::vector<std::vector<int32_t>> expert_dp_rings(const ScenarioConfig& cfg, int stage) {
  const ExpertLayout lay = expert_layout(cfg, stage);
  std::vector<std::vector<int32_t>> rings;
  if (lay.edp <= 1) return rings;
  for (int j = 0; j < lay.ep; ++j) {
    for (int i = 0; i < lay.etp; ++i) {
      std::vector<int32_t> ring;
      for (int k = 0; k < lay.edp; ++k) ring.push_back(lay.gpu(i, j, k));
      rings.push_back(std::move(ring));
    }
  }
  return rings;
}

bool folds_replicas(const ScenarioConfig& cfg) {
  switch (cfg.training.fold_ranks) {
    case FoldRanks::kFold: return true;
    case FoldRanks::kUnfold: return false;
    case FoldRanks::kAuto: break;
  }
  return !groups_span_nodes(cfg, Dim::kTp) && !replica_lines_cross_taper(cfg);
}

std::vector<int> simulated_replicas(const ScenarioConfig& cfg, const GraphStragglers& st, bool& folded) {
  const int dp = data_parallel_size(cfg);
  folded = folds_replicas(cfg) || dp == 1;
  std::vector<int> replicas;
  if (folded) {
    // The representative (the first replica that does not straggle), then every straggling one.
    int representative = 0;
    while (representative < dp && st.replicas.count(representative) > 0) ++representative;
    if (representative < dp) replicas.push_back(representative);
    for (const auto& [r, scaling] : st.replicas) {
      if (r < dp) replicas.push_back(r);
    }
    if (dp > 1 && static_cast<int>(replicas.size()) == dp) folded = false;
  }
  if (!folded) {
    replicas.clear();
    for (int r = 0; r < dp; ++r) replicas.push_back(r);
  }
  return replicas;
}

TrainingGraph build_training_graph(const ScenarioConfig& cfg, const GraphCosts& c, const GraphStragglers& st,
                                   int64_t expected_ops) {
  const ParallelismConfig& p = cfg.parallelism;
  const ModelConfig& m = cfg.model;
  const OverlapConfig& ov = cfg.training.overlap;
  const int tp = p.tp, cp = p.cp, pp = p.pp, vpp = p.vpp;
  const int dp = data_parallel_size(cfg);
  const int mbs = micro_batches_per_iteration(cfg);
  const int stages_v = pp * vpp;
  const Placement pl(p.placement, tp, cp, dp, pp);
  Builder b;
  TrainingGraph& g = b.g;
  if (expected_ops > 0) g.ops.reserve(static_cast<size_t>(expected_ops));
  g.gpus_per_node = cfg.cluster.gpus_per_node;
  g.dp = dp;
  g.micro_batches = mbs;
  // `d` below indexes the simulated replicas.
  const auto listed = [&st](int r) { return st.replicas.count(r) > 0; };
  g.replicas = simulated_replicas(cfg, st, g.folded);
  int representative = 0;  // the first replica not listed (dp when every one is)
  while (representative < dp && listed(representative)) ++representative;
  const std::vector<int>& replica = g.replicas;
  const int ndp = static_cast<int>(replica.size());
  auto group_of = [ndp](int stage, int d) { return static_cast<int32_t>(stage * ndp + d); };
  const GroupScaling unit;
  auto scaling = [&](int d, int stage) -> const GroupScaling& {
    const auto it = st.replicas.find(replica[d]);
    return it == st.replicas.end() ? unit : it->second[stage];
  };
  auto layer_share = [&st](int stage) { return st.stage_layers.empty() ? 1.0 : st.stage_layers[stage]; };

  // Rank groups and the comm sets of each. The representative of a folded run also carries the
  // TP, CP and pipeline lines of every replica folded into it that leave a node: those share NICs
  // and fabric links with each other and with its own (a TP group across nodes, replicas on one
  // NIC, pipeline sends over oversubscribed uplinks). Its ops wait only for its own lines (the
  // replicas run in step, and each waits for its own flows: waiting for all would charge every
  // op the unluckiest replica's ECMP collisions, which the unfolded run never compounds). Lines
  // inside a node use only their own GPUs' NVLink ports, so no other replica's flows meet them.
  const int gpn = cfg.cluster.gpus_per_node;
  const auto leaves_node = [gpn](const std::vector<int32_t>& l) { return spans_nodes(l, gpn); };
  std::vector<int32_t> tp_set, cp_set, pp_next_set, pp_prev_set;
  for (int s = 0; s < pp; ++s) {
    for (int d = 0; d < ndp; ++d) {
      RankGroup rg;
      rg.stage = s;
      rg.dp = replica[d];
      rg.name = "stage" + std::to_string(s) + "/dp" + std::to_string(replica[d]);
      rg.reported = replica[d] == representative || listed(replica[d]);
      for (int ci = 0; ci < cp; ++ci) {
        for (int t = 0; t < tp; ++t) rg.gpus.push_back(pl.gpu(t, ci, replica[d], s));
      }
      std::vector<int> members{replica[d]};
      if (g.folded && replica[d] == representative) {
        for (int r = 0; r < dp; ++r) {
          if (r != representative && !listed(r)) members.push_back(r);
        }
      }
      std::vector<std::vector<int32_t>> tps, cps, next, prev;
      int32_t own_tps = 0, own_cps = 0, own_next = 0, own_prev = 0;
      for (const int r : members) {
        const bool own = r == replica[d];
        for (int ci = 0; ci < cp; ++ci) {
          for (int t = 0; t < tp; ++t) {
            std::vector<int32_t> n{pl.gpu(t, ci, r, s), pl.gpu(t, ci, r, (s + 1) % pp)};
            std::vector<int32_t> v{pl.gpu(t, ci, r, s), pl.gpu(t, ci, r, (s + pp - 1) % pp)};
            if (own || leaves_node(n)) next.push_back(std::move(n));
            if (own || leaves_node(v)) prev.push_back(std::move(v));
          }
        }
        for (std::vector<int32_t>& group : tp_groups(cfg, pl, r, s)) {
          if (own || leaves_node(group)) tps.push_back(std::move(group));
        }
        for (std::vector<int32_t>& hop : cp_hops(cfg, pl, r, s)) {
          if (own || leaves_node(hop)) cps.push_back(std::move(hop));
        }
        if (own) {
          own_tps = static_cast<int32_t>(tps.size());
          own_cps = static_cast<int32_t>(cps.size());
          own_next = static_cast<int32_t>(next.size());
          own_prev = static_cast<int32_t>(prev.size());
        }
      }
      tp_set.push_back(tp > 1 ? b.comm_set(tps, own_tps) : -1);
      cp_set.push_back(cp > 1 ? b.comm_set(cps, own_cps) : -1);
      pp_next_set.push_back(pp > 1 ? b.comm_set(next, own_next) : -1);
      pp_prev_set.push_back(pp > 1 ? b.comm_set(prev, own_prev) : -1);
      g.groups.push_back(std::move(rg));
    }
  }
  // Dense gradients sync over dp replicas; an MoE model under sp also over the tp group, whose
  // ranks hold replicas of the attention weights (so even with dp 1).
  // (Over the DP x CP ranks: with dp 1, CP ranks still reduce their gradients together.)
  const int sync_ranks = gradient_sync_size(cfg);
  const bool dense_sync =
      sync_ranks > 1 || (m.moe.has_value() && cfg.training.attention_parallel == AttentionParallel::kSp && tp > 1);
  // DP rings of a stage: every TP/CP position, every replica (also when folded).
  std::vector<int32_t> dp_set(static_cast<size_t>(pp), -1);
  if (dense_sync) {
    for (int s = 0; s < pp; ++s) dp_set[s] = b.comm_set(dense_dp_rings(cfg, pl, s));
  }
  // MoE: expert-data-parallel rings of each stage (every expert-TP and EP position), and each
  // MoE layer's dispatch transfers as a transfer set ([stage][layer of the stage]).
  const bool moe = m.moe.has_value();
  std::vector<int32_t> edp_set(static_cast<size_t>(pp), -1);
  std::vector<std::vector<int32_t>> a2a_set(static_cast<size_t>(pp));
  std::vector<std::vector<int32_t>> combine_set(static_cast<size_t>(pp));  // run reversed
  if (moe) {
    for (int s = 0; s < pp; ++s) {
      const std::vector<std::vector<int32_t>> rings = expert_dp_rings(cfg, s);
      if (!rings.empty()) edp_set[s] = b.comm_set(rings);
      for (const MoeLayerCost& lc : c.moe_stages[s].costs) {
        const auto add_set = [&g](const std::vector<coll::FlowSpec>& flows) {
          double total = 0;
          for (const coll::FlowSpec& f : flows) total += f.bytes.as_double();
          g.transfer_sets.push_back(flows);
          g.transfer_set_bytes.push_back(bytes_of(total));
          return static_cast<int32_t>(g.transfer_sets.size() - 1);
        };
        a2a_set[s].push_back(add_set(lc.dispatch_flows));
        // Without PXN the combine is the dispatch reversed: the same set.
        combine_set[s].push_back(lc.combine_flows.empty() ? a2a_set[s].back() : add_set(lc.combine_flows));
      }
    }
  }

  // Per-pass traffic.
  const TpLayerTraffic tpt = tp_layer_traffic(cfg);
  const double layers_chunk = static_cast<double>(m.layers) / stages_v;
  const double tp_colls_fwd = tpt.collectives * layers_chunk;
  const double tp_colls_bwd = tp_colls_fwd * (cfg.training.recompute == Recompute::kFull ? 2.0 : 1.0);
  const double tp_hidden_share = ov.tp_comm ? 1.0 - 1.0 / tp : 0.0;
  // A CP ring pass: cp - 1 hops of each rank's K/V block, point to point (cp_hops).
  const double cp_ring = static_cast<double>(cp_kv_bytes(cfg).n) * (cp - 1);
  const double tokens = static_cast<double>(p.micro_batch) * m.seq_len / cp;
  const Bytes pp_bytes = bytes_of(tokens * m.hidden * 2.0 / tp);
  const double chunk_params = c.params_on_gpu / vpp;
  const int buckets = std::max(1, static_cast<int>(std::ceil(chunk_params / std::max(1.0, c.bucket_params))));
  const double grad_bytes = grad_bytes_per_value(cfg.training);
  // The first stage's first chunk holds the input embedding in its last bucket (reduced last,
  // gathered first): that bucket at least the embedding's share, the others even over the rest.
  const double embedding_share = embedding_bucket_share(cfg, chunk_params, buckets);
  const auto bucket_params = [&](int s, int ch, bool embedding_bucket) {
    if (s != 0 || ch != 0 || buckets <= 1) return chunk_params / buckets;
    return embedding_bucket ? embedding_share * chunk_params : (1.0 - embedding_share) * chunk_params / (buckets - 1);
  };
  // Buckets ready over the chunk's backward (bucket_ready_at; review, 2026-12-07: in the chunk with
  // the embedding they were marked at (j + 1) / B, and the layers' buckets read ready early).
  const auto ready_at = [&](int s, int ch, int j) {
    return bucket_ready_at(j, buckets, s == 0 && ch == 0 ? embedding_share : 0.0);
  };
  const bool dp_overlap_reduce = ov.dp_grad_reduce;
  const bool gather_at_start = dense_sync && gathers_weights_each_step(p) && ov.dp_param_gather;
  const CollectiveOp reduce_op = p.zero_stage == 0 ? CollectiveOp::kAllReduce : CollectiveOp::kReduceScatter;

  // Parameter gathers at the start (the previous step's update, overlapped with forward), in the
  // order the chunks use them: each chunk's dense buckets, then (MoE) its share of the expert
  // parameters over their own group. As in Megatron-LM's overlapped gather, a chunk's first
  // forward waits for its first bucket (first_gather) and the rest arrive under that forward:
  // its next pass waits for them all (gathered).
  std::vector<int32_t> dp_prev(static_cast<size_t>(pp), -1);
  std::vector<std::vector<int32_t>> gathered(static_cast<size_t>(pp), std::vector<int32_t>(static_cast<size_t>(vpp), -1));
  std::vector<std::vector<int32_t>> first_gather = gathered;
  const bool experts_at_start = moe && gathers_weights_each_step(p) && ov.dp_param_gather;
  // MoE: each chunk's expert gather in one piece per MoE layer, in layer order (stage, chunk ->
  // pieces): the chunk's first forward runs each MoE layer once its own piece is in.
  std::vector<std::vector<std::vector<int32_t>>> expert_piece(
      static_cast<size_t>(pp), std::vector<std::vector<int32_t>>(static_cast<size_t>(vpp)));
  // MoE: each chunk's share of its stage's expert parameters, its MoE layers over the stage's
  // (dense layers first, or every other layer MoE, leave some chunks fewer or none: those gather
  // and reduce no experts).
  std::vector<std::vector<double>> expert_share(static_cast<size_t>(pp), std::vector<double>(static_cast<size_t>(vpp), 0.0));
  std::vector<std::vector<int>> moe_layers_of(static_cast<size_t>(pp));  // stage, chunk -> its MoE layers
  for (int s = 0; moe && s < pp; ++s) {
    const std::vector<int>& per_chunk = moe_layers_of[static_cast<size_t>(s)] = moe_layers_per_chunk(cfg, s);
    int stage_moe = 0;
    for (const int n : per_chunk) stage_moe += n;
    for (int ch = 0; stage_moe > 0 && ch < vpp; ++ch) {
      expert_share[s][ch] = static_cast<double>(per_chunk[static_cast<size_t>(ch)]) / stage_moe;
    }
  }
  // Stage s's gathers: one dense bucket, and a `share` of the expert parameters over their group.
  const auto dense_gather = [&](int s, int ch, int j) {
    return Builder::comm(OpRole::kDpGather, Stream::kDp, group_of(s, 0), CollectiveOp::kAllGather,
                         bytes_of(bucket_params(s, ch, j == 0) * 2.0), c.dp_latency_gather, dp_set[s]);
  };
  const auto expert_gather = [&](int s, double share) {
    return Builder::comm(OpRole::kDpGather, Stream::kDp, group_of(s, 0), CollectiveOp::kAllGather,
                         bytes_of(c.expert_params * 2.0 * share), c.edp_latency_gather, edp_set[s]);
  };
  for (int s = 0; s < pp; ++s) {
    for (int ch = 0; ch < vpp; ++ch) {
      auto chain = [&](Op op) {
        op.chunk = ch;
        const int32_t id = b.add(op);
        b.edge(dp_prev[s], id);
        dp_prev[s] = id;
        if (first_gather[s][ch] < 0) first_gather[s][ch] = id;
      };
      for (int j = 0; gather_at_start && j < buckets; ++j) chain(dense_gather(s, ch, j));
      if (experts_at_start && edp_set[s] >= 0 && expert_share[s][ch] > 0) {
        // Megatron-LM's forward pre-hook waits for the bucket that holds a module's parameters,
        // so the first forward's layers use their experts as they arrive and the pass ends no
        // sooner than its last MoE layer's (before 2026-12-05 the whole expert gather came after
        // the first forward, at the chunk's second pass: 112 ms of gathers hid behind a 50 ms
        // forward). One collective's latency, on the first piece.
        const int pieces = std::max(1, moe_layers_of[static_cast<size_t>(s)][static_cast<size_t>(ch)]);
        for (int k = 0; k < pieces; ++k) {
          Op op = expert_gather(s, expert_share[s][ch] / pieces);
          if (k > 0) op.duration = Time::zero();
          chain(op);
          expert_piece[s][ch].push_back(dp_prev[s]);
        }
      }
      gathered[s][ch] = dp_prev[s];
    }
  }

  // Passes of every rank group.
  const size_t slots = static_cast<size_t>(ndp) * mbs * stages_v * 2;
  std::vector<int32_t> entry(slots, -1), send_of(slots, -1);
  auto slot = [&](int d, int mb, int v, bool fwd) {
    return ((static_cast<size_t>(d) * mbs + mb) * stages_v + v) * 2 + (fwd ? 0 : 1);
  };
  const size_t ngroups = g.groups.size();
  std::vector<std::vector<std::vector<int32_t>>> reduce_ready(ngroups);  // [group][chunk][bucket]
  std::vector<std::vector<int>> last_bwd_pass(static_cast<size_t>(pp));
  std::vector<std::vector<int32_t>> final_chain(ngroups);
  // ZeRO-3 per-pass gathers, shared per stage: the first and last of each pass's.
  std::vector<std::vector<int32_t>> z3(static_cast<size_t>(pp)), z3_first(static_cast<size_t>(pp));
  std::vector<int32_t> z3_prev(static_cast<size_t>(pp), -1);
  // MoE: per group and chunk, the end of each MoE layer in the chunk's last backward pass, when
  // that layer's expert gradients are complete (its expert reduction waits for it).
  std::vector<std::vector<std::vector<int32_t>>> expert_ready(ngroups,
                                                              std::vector<std::vector<int32_t>>(static_cast<size_t>(vpp)));
  // ZeRO-2/3: per stage, the reductions of the backward passes that are not a chunk's last, as
  // {pass index in the stage's order, the pass's last reduction op}, in pass order.
  const bool micro_batch_reduce = p.zero_stage >= 2 && mbs > 1;
  std::vector<std::vector<std::pair<int, int32_t>>> mb_reduced(static_cast<size_t>(pp));
  for (int s = 0; s < pp; ++s) {
    const std::vector<PipelinePass> order = pipeline_order(pp, vpp, mbs, s);
    std::vector<int> first_fwd(static_cast<size_t>(vpp), -1), last_bwd(static_cast<size_t>(vpp), -1);
    std::vector<int> second_pass(static_cast<size_t>(vpp), -1);  // the chunk's next pass after its first forward
    for (int i = 0; i < static_cast<int>(order.size()); ++i) {
      if (first_fwd[order[i].chunk] >= 0 && second_pass[order[i].chunk] < 0) second_pass[order[i].chunk] = i;
      if (order[i].forward && first_fwd[order[i].chunk] < 0) first_fwd[order[i].chunk] = i;
      if (!order[i].forward) last_bwd[order[i].chunk] = i;
    }
    last_bwd_pass[s] = last_bwd;
    std::vector<int32_t> mb_first(order.size(), -1), mb_last(order.size(), -1);  // by pass index
    int32_t mb_prev = -1;
    for (int d = 0; d < ndp; ++d) {
      const int32_t gi = group_of(s, d);
      reduce_ready[gi].assign(static_cast<size_t>(vpp), {});
      // The last pipeline send in each direction (0 forward, 1 backward): NCCL runs a rank's
      // sends on its pipeline communicator's stream one after another.
      int32_t prev_send[2] = {-1, -1};
      int32_t z3_gate = -1;  // ZeRO-3: the representative's previous pass, which the next gather waits for
      std::vector<int32_t> chain;
      // The first stage waits for its input batch before its first forward; the other stages wait
      // for it through their receives.
      if (s == 0 && c.step_stall > Time::zero()) chain.push_back(b.add(Builder::compute(OpRole::kStepStall, gi, c.step_stall)));
      for (int i = 0; i < static_cast<int>(order.size()); ++i) {
        const PipelinePass& pass = order[i];
        const int v = pass.chunk * pp + s;
        Op bar = Builder::compute(OpRole::kBarrier, gi, Time::zero());
        bar.microbatch = pass.microbatch;
        bar.chunk = pass.chunk;
        const int32_t barrier = b.add(bar);
        for (const int32_t pred : chain) b.edge(pred, barrier);
        entry[slot(d, pass.microbatch, v, pass.forward)] = barrier;
        if (pass.forward && i == first_fwd[pass.chunk]) b.edge(first_gather[s][pass.chunk], barrier);
        if (i == second_pass[pass.chunk] || (i == first_fwd[pass.chunk] && second_pass[pass.chunk] < 0)) {
          b.edge(gathered[s][pass.chunk], barrier);
        }
        if (p.zero_stage == 3 && (dense_sync || edp_set[s] >= 0)) {
          if (d == 0) {
            // The chunk's dense weights, then (MoE) its experts over their own group (each where
            // it has replicas: an MoE model may have expert replicas with dp 1).
            const auto per_pass = [&](Op op) {
              op.microbatch = pass.microbatch;
              op.chunk = pass.chunk;
              const int32_t id = b.add(op);
              b.edge(z3_prev[s], id);
              z3_prev[s] = id;
              return id;
            };
            int32_t first = -1;
            if (dense_sync) {
              first = per_pass(Builder::comm(OpRole::kDpGather, Stream::kDp, gi, CollectiveOp::kAllGather,
                                             bytes_of(chunk_params * 2.0), c.dp_latency_gather, dp_set[s]));
            }
            if (moe && edp_set[s] >= 0 && expert_share[s][pass.chunk] > 0) {
              const int32_t id = per_pass(expert_gather(s, expert_share[s][pass.chunk]));
              if (first < 0) first = id;
            }
            z3_first[s].push_back(first);
            z3[s].push_back(z3_prev[s]);
            // Overlapped, a pass's gather starts as the pass before it does: one pass ahead, as
            // FSDP's prefetch and the memory check's two gathered layers hold (until 2026-12-07
            // the gathers ran as far ahead as the NIC allowed, two micro-batches, and stretched
            // a blocking reduce-scatter beside them: ZeRO-3 without the reduction's overlap read
            // 18% over the analytical level; review).
            if (ov.dp_param_gather) b.edge(z3_gate, first);
            z3_gate = barrier;
          }
          if (!ov.dp_param_gather) {
            for (const int32_t pred : chain) b.edge(pred, z3_first[s][i]);
          }
          b.edge(z3[s][i], barrier);
        }
        const GroupScaling& sc = scaling(d, s);
        const double share = layer_share(s);
        Time dur = pass.forward ? scaled(share * sc.forward, c.forward_chunk) : scaled(share * sc.backward, c.backward_chunk);
        if (v == stages_v - 1) {
          dur += pass.forward ? scaled(sc.head_forward, c.head_forward) : scaled(sc.head_backward, c.head_backward);
        }
        const OpRole role = pass.forward ? OpRole::kForward : OpRole::kBackward;
        // Concurrent TP share (overlapped with the GEMMs) starts with the pass.
        const double colls = share * (pass.forward ? tp_colls_fwd : tp_colls_bwd);
        int32_t tp_hidden = -1;
        if (tp > 1 && tp_hidden_share > 0 && !moe) {
          Op op = Builder::comm(OpRole::kTpComm, Stream::kTp, gi, CollectiveOp::kAllReduce,
                                bytes_of(tp_hidden_share * colls * sc.traffic * tpt.activation.as_double()), Time::zero(),
                                tp_set[gi]);
          op.microbatch = pass.microbatch;
          op.chunk = pass.chunk;
          tp_hidden = b.add(op);
          b.edge(barrier, tp_hidden);
        }
        int32_t last = barrier;
        int32_t cp_op = -1;
        auto add_compute = [&](Time t) {
          Op op = Builder::compute(role, gi, t);
          op.microbatch = pass.microbatch;
          op.chunk = pass.chunk;
          const int32_t id = b.add(op);
          b.edge(last, id);
          last = id;
          return id;
        };
        const bool split_for_dp =
            !moe && !pass.forward && i == last_bwd[pass.chunk] && sync_ranks > 1 && dp_overlap_reduce;
        // A dense chunk's first forward under the overlapped gather: Megatron-LM's forward
        // pre-hook makes each layer wait for the bucket holding its parameters, so the pass ends
        // no sooner than the last bucket plus its share (1 / buckets) of the compute; it waits for
        // the first bucket at its barrier (until 2026-12-05 it waited for that one only, and a
        // gather slower than the forward hid behind it whole: the flow level hid a forward and
        // backward slot where the analytical level hides one forward).
        const bool gather_paced = !moe && pass.forward && i == first_fwd[pass.chunk] && gather_at_start && buckets > 1;
        const auto paced_compute = [&](Time t) {
          if (!gather_paced) {
            add_compute(t);
            return;
          }
          add_compute((1.0 - 1.0 / buckets) * t);
          Op wait = Builder::compute(OpRole::kBarrier, gi, Time::zero());
          wait.microbatch = pass.microbatch;
          wait.chunk = pass.chunk;
          const int32_t id = b.add(wait);
          b.edge(last, id);
          b.edge(gathered[s][pass.chunk], id);
          last = id;
          add_compute((1.0 / buckets) * t);
        };
        if (moe) {
          // Layer by layer: attention block (with router and permutation), then per MoE layer
          // the dispatch all-to-all, the busiest owner's expert GEMMs and the combine, in
          // lc.chunks pipelined chunks (COMET-style); backward the same with the gradients.
          // Representative groups carry the flows of every expert domain of the stage; other
          // simulated replicas wait the analytical all-to-all time without flows.
          const MoeStageCost& msc = c.moe_stages[s];
          const size_t chunk_first = msc.chunk_begin[static_cast<size_t>(pass.chunk)];
          const size_t chunk_end = msc.chunk_begin[static_cast<size_t>(pass.chunk) + 1];
          const double cf = share * (pass.forward ? sc.forward : sc.backward);
          const bool carrier = d == 0;
          const std::vector<int32_t>& pieces = expert_piece[s][static_cast<size_t>(pass.chunk)];
          const bool first_forward = pass.forward && i == first_fwd[pass.chunk];
          // The chunk's last backward pass completes its gradients layer by layer: each layer's
          // end releases its expert gradients and its share of the dense ones (until 2026-12-07
          // all were ready as the pass began, and reduced before backward had made them: QA, one
          // micro-batch on 16 GPUs reduced the experts' 17 ms during the 20 ms backward).
          const bool grads_out = !pass.forward && i == last_bwd[pass.chunk];
          std::vector<int32_t> layer_end;
          size_t moe_seen = 0;
          for (size_t idx = chunk_first; idx < chunk_end; ++idx) {
            const MoeLayerCost& lc = msc.costs[idx];
            const int32_t layer = msc.layers[idx];
            add_compute(scaled(cf, pass.forward ? lc.attention_fwd : lc.attention_bwd));
            if (!lc.moe) {
              if (grads_out) layer_end.push_back(last);
              continue;
            }
            if (first_forward && moe_seen < pieces.size()) {
              // The layer's experts gathered (expert_piece).
              Op wait = Builder::compute(OpRole::kBarrier, gi, Time::zero());
              wait.microbatch = pass.microbatch;
              wait.chunk = pass.chunk;
              const int32_t id = b.add(wait);
              b.edge(last, id);
              b.edge(pieces[moe_seen], id);
              last = id;
            }
            ++moe_seen;
            const int32_t ts = a2a_set[s][idx];
            const int32_t tc = combine_set[s][idx];
            const int n = std::max(1, lc.chunks);
            auto block = [&](Time expert) {
              const int32_t before = last;
              int32_t prev_d = -1, prev_k = -1, prev_e = last;
              auto a2a = [&](int k, bool reversed, int32_t after, int32_t prev) {
                // Each all-to-all pays its latency once (as moe_layer_cost): the dispatch before
                // its first chunk can move, the combine when its last chunk completes.
                const bool pays = reversed ? k == n - 1 : k == 0;
                const Time closed = reversed ? lc.combine : lc.dispatch;
                const Time fixed = (pays ? lc.a2a_latency : Time::zero()) +
                                   (1.0 / n) * (carrier ? lc.etp_bandwidth_time : closed - lc.a2a_latency);
                const int32_t set = reversed ? tc : ts;
                const Bytes bytes = carrier ? bytes_of(g.transfer_set_bytes[set].as_double() * sc.traffic / n) : Bytes{0};
                Op op = Builder::comm(OpRole::kEpComm, Stream::kTp, gi, CollectiveOp::kAllToAll, bytes, fixed, -1);
                op.transfer_set = carrier ? set : -1;
                op.reversed = reversed;
                op.layer = layer;
                op.microbatch = pass.microbatch;
                op.chunk = pass.chunk;
                const int32_t id = b.add(op);
                b.edge(after, id);
                b.edge(prev, id);
                return id;
              };
              for (int k = 0; k < n; ++k) {
                prev_d = a2a(k, false, before, prev_d);
                Op e = Builder::compute(role, gi, (1.0 / n) * scaled(cf, expert));
                e.microbatch = pass.microbatch;
                e.chunk = pass.chunk;
                e.layer = layer;
                const int32_t eid = b.add(e);
                b.edge(prev_d, eid);
                b.edge(prev_e, eid);
                prev_e = eid;
                prev_k = a2a(k, true, eid, prev_k);
              }
              Op join = Builder::compute(OpRole::kBarrier, gi, Time::zero());
              join.layer = layer;
              last = b.add(join);
              b.edge(prev_e, last);
              b.edge(prev_k, last);
              if (g.groups[gi].reported) g.moe_blocks.push_back({gi, layer, before, last, scaled(cf, expert)});
            };
            if (pass.forward) {
              block(lc.expert_fwd);
            } else if (cfg.training.recompute == Recompute::kFull) {
              block(lc.expert_fwd);  // recomputed forward, all-to-alls included
              block(lc.expert_bwd - lc.expert_fwd);
            } else {
              block(lc.expert_bwd);
            }
            if (grads_out) {
              layer_end.push_back(last);
              expert_ready[gi][static_cast<size_t>(pass.chunk)].push_back(last);
            }
          }
          if (v == stages_v - 1) {
            add_compute(pass.forward ? scaled(sc.head_forward, c.head_forward) : scaled(sc.head_backward, c.head_backward));
            // The head's backward runs here after the layers (its time, not its order): the last
            // gradients wait for it, as a dense chunk's last bucket does.
            if (grads_out && !layer_end.empty()) {
              layer_end.back() = last;
              std::vector<int32_t>& experts_out = expert_ready[gi][static_cast<size_t>(pass.chunk)];
              if (!experts_out.empty()) experts_out.back() = last;
            }
          }
          // Dense bucket j of the chunk (buckets over its layers in order) with the layer that
          // completes it.
          if (grads_out && dense_sync && !layer_end.empty()) {
            std::vector<int32_t>& ready = reduce_ready[gi][pass.chunk];
            for (int j = 0; j < buckets; ++j) {
              const size_t at =
                  static_cast<size_t>(std::ceil(ready_at(s, pass.chunk, j) * static_cast<double>(layer_end.size()))) - 1;
              ready.push_back(layer_end[std::min(at, layer_end.size() - 1)]);
            }
          }
        } else if (cp > 1) {
          // The K/V ring runs beside the attention core (forward: one ring; backward: K/V and
          // their gradients, against 2.5x the forward attention, and the recomputed forward's
          // ring beside its attention where it is recomputed: work::cp_backward_rings).
          const Time attention = scaled(share * sc.forward, c.attention_fwd_chunk);
          const Time window = pass.forward ? attention : cp_backward_window(cfg.training) * attention;
          const Time att = min(window, dur);
          if (split_for_dp && buckets > 1) {
            // Buckets become ready as backward walks through the chunk's parameters; the last
            // with the attention core and its ring.
            for (int j = 0; j + 1 < buckets; ++j) {
              reduce_ready[gi][pass.chunk].push_back(add_compute((1.0 / (buckets - 1)) * (dur - att)));
            }
          } else {
            paced_compute(dur - att);
          }
          const double rings = share * layers_chunk * (pass.forward ? 1.0 : cp_backward_rings(cfg.training));
          Op op = Builder::comm(OpRole::kCpComm, Stream::kTp, gi, CollectiveOp::kSendRecv,
                                bytes_of(rings * cp_ring * sc.traffic), rings * c.cp_latency_per_ring, cp_set[gi]);
          op.microbatch = pass.microbatch;
          op.chunk = pass.chunk;
          cp_op = b.add(op);
          b.edge(last, cp_op);
          add_compute(att);
          if (split_for_dp) reduce_ready[gi][pass.chunk].resize(static_cast<size_t>(buckets), last);
        } else if (split_for_dp) {
          // Buckets become ready as backward walks through the chunk's parameters.
          for (int j = 0; j < buckets; ++j) {
            const double from = j == 0 ? 0.0 : ready_at(s, pass.chunk, j - 1);
            reduce_ready[gi][pass.chunk].push_back(add_compute((ready_at(s, pass.chunk, j) - from) * dur));
          }
        } else {
          paced_compute(dur);
        }
        int32_t end = last;
        if (moe) {
          // MoE: the attention block's TP / SP traffic as the analytical level leaves it exposed
          // (moe_layer_cost's attention_comm, split over the passes like the attention compute);
          // a wait on the line, not flows.
          Time fwd, bwd, comm;
          const MoeStageCost& msc = c.moe_stages[s];
          for (size_t idx = msc.chunk_begin[static_cast<size_t>(pass.chunk)];
               idx < msc.chunk_begin[static_cast<size_t>(pass.chunk) + 1]; ++idx) {
            const MoeLayerCost& lc = msc.costs[idx];
            fwd += lc.attention_fwd;
            bwd += lc.attention_bwd;
            comm += lc.attention_comm;
          }
          const double total = (fwd + bwd).as_s();
          const double part = total > 0 ? (pass.forward ? fwd : bwd).as_s() / total : 0.0;
          const Time wait = scaled(share * sc.traffic, part * comm);
          if (wait > Time::zero()) {
            Op op = Builder::comm(OpRole::kTpComm, Stream::kTp, gi, CollectiveOp::kAllReduce, Bytes{0}, wait, -1);
            op.microbatch = pass.microbatch;
            op.chunk = pass.chunk;
            op.main_line = true;
            end = b.add(op);
            b.edge(last, end);
          }
        } else if (tp > 1) {
          Op op = Builder::comm(OpRole::kTpComm, Stream::kTp, gi, CollectiveOp::kAllReduce,
                                bytes_of((1.0 - tp_hidden_share) * colls * sc.traffic * tpt.activation.as_double()),
                                (ov.tp_comm ? 1.0 / tp : 1.0) * (colls * c.tp_latency_per_collective), tp_set[gi]);
          op.microbatch = pass.microbatch;
          op.chunk = pass.chunk;
          op.main_line = true;
          end = b.add(op);
          b.edge(last, end);
          b.edge(tp_hidden, end);
          b.edge(cp_op, end);
          // The pass's TP collectives run as one block after its compute; the chunk's last bucket
          // holds the first layers' weight gradients, which in Megatron-LM come after those
          // layers' collectives, so it waits for the block (QA 2026-12-07: it reduced under it,
          // 0 ms of DP exposed where the analytical level counts 3.2 ms).
          if (split_for_dp && !reduce_ready[gi][pass.chunk].empty()) reduce_ready[gi][pass.chunk].back() = end;
        } else if (cp_op >= 0) {
          Op join = Builder::compute(OpRole::kBarrier, gi, Time::zero());
          end = b.add(join);
          b.edge(last, end);
          b.edge(cp_op, end);
        }
        chain.assign(1, end);
        // ZeRO-2/3 keep a shard of the gradients only, so each backward pass but a chunk's last
        // reduce-scatters the chunk's gradients of its micro-batch once every replica has ended
        // it (the last pass's go in buckets, below), as DeepSpeed's ZeRO and PyTorch FSDP do
        // under gradient accumulation: one collective per pass on the stage's DP rings (one
        // latency per bucket) and, MoE, its experts' share over their own, one after another in
        // the order the passes end. Without overlap the stage's next pass waits for it.
        const bool experts_here = moe && edp_set[s] >= 0 && expert_share[s][pass.chunk] > 0;
        if (micro_batch_reduce && !pass.forward && i != last_bwd[pass.chunk] && (dense_sync || experts_here)) {
          if (d == 0) {
            const auto add = [&](Op op) {
              op.microbatch = pass.microbatch;
              op.chunk = pass.chunk;
              const int32_t id = b.add(op);
              b.edge(mb_prev, id);
              if (mb_first[i] < 0) mb_first[i] = id;
              mb_prev = mb_last[i] = id;
            };
            if (dense_sync) {
              add(Builder::comm(OpRole::kDpReduce, Stream::kDp, gi, reduce_op, bytes_of(chunk_params * grad_bytes),
                                buckets * c.dp_latency_reduce, dp_set[s]));
            }
            if (experts_here) {
              add(Builder::comm(OpRole::kDpReduce, Stream::kDp, gi, reduce_op,
                                bytes_of(c.expert_params * grad_bytes * expert_share[s][pass.chunk]), c.edp_latency_reduce,
                                edp_set[s]));
            }
            mb_reduced[s].emplace_back(i, mb_prev);
          }
          b.edge(end, mb_first[i]);
          if (!dp_overlap_reduce) chain.push_back(mb_last[i]);
        }
        const bool sends = pass.forward ? v < stages_v - 1 : v > 0;
        if (sends) {
          const int next_stage = (pass.forward ? v + 1 : v - 1) % pp;
          const Bytes send = sc.traffic == 1.0 ? pp_bytes : bytes_of(sc.traffic * pp_bytes.as_double());
          Op op = Builder::comm(OpRole::kPpSend, Stream::kPp, gi, CollectiveOp::kSendRecv, send, c.pp_latency,
                                pass.forward ? pp_next_set[gi] : pp_prev_set[gi]);
          op.microbatch = pass.microbatch;
          op.chunk = pass.chunk;
          op.peer_group = group_of(next_stage, d);
          const int32_t id = b.add(op);
          b.edge(end, id);
          // In order behind the previous send the same way (before 2026-12-05 every send in flight
          // shared the NIC at once, so a faster GPU, with more of them in flight, waited longer for
          // each: +9.5% at twice the FLOP rate on a 64-GPU, pp 8, vpp 3 plan with 100 Gbps NICs).
          int32_t& prev = prev_send[pass.forward ? 0 : 1];
          if (prev >= 0) b.edge(prev, id);
          prev = id;
          send_of[slot(d, pass.microbatch, v, pass.forward)] = id;
          // Without overlap the send blocks the stream (Megatron's batched isend/irecv + wait).
          if (!ov.pp_p2p) chain.push_back(id);
        }
        if (split_for_dp == false && !pass.forward && i == last_bwd[pass.chunk] && dense_sync &&
            reduce_ready[gi][pass.chunk].empty()) {
          // Without the bucket split (no overlap, one replica): every bucket with the pass's end.
          reduce_ready[gi][pass.chunk].assign(static_cast<size_t>(buckets), end);
        }
      }
      final_chain[gi] = chain;
    }
  }
  // Activations and gradients between virtual stages.
  for (int d = 0; d < ndp; ++d) {
    for (int mb = 0; mb < mbs; ++mb) {
      for (int v = 0; v < stages_v; ++v) {
        if (v > 0) b.edge(send_of[slot(d, mb, v - 1, true)], entry[slot(d, mb, v, true)]);
        if (v < stages_v - 1) b.edge(send_of[slot(d, mb, v + 1, false)], entry[slot(d, mb, v, false)]);
      }
    }
  }
  // Gradient reduction, bucket by bucket in the order backward finishes the chunks; an MoE
  // chunk's expert gradients after its dense buckets, over the expert-data-parallel group, as
  // Megatron-LM's expert buckets of each model chunk (before 2026-11-22 all experts at once after
  // the last chunk: with interleaving their reduction was all exposed).
  std::vector<int32_t> reduced(static_cast<size_t>(pp), -1);
  for (int s = 0; s < pp; ++s) {
    const bool experts = moe && edp_set[s] >= 0;
    if (!dense_sync && !experts) continue;
    std::vector<int> chunks(static_cast<size_t>(vpp));
    for (int ch = 0; ch < vpp; ++ch) chunks[ch] = ch;
    std::sort(chunks.begin(), chunks.end(), [&](int a, int x) { return last_bwd_pass[s][a] < last_bwd_pass[s][x]; });
    // Each reduction waits for its gradients (or, without overlap, every pass) in every replica.
    const auto wait_for = [&](int32_t id, const auto& ready) {
      for (int d = 0; d < ndp; ++d) {
        const int32_t gi = group_of(s, d);
        if (dp_overlap_reduce) {
          b.edge(ready(gi), id);
        } else {
          for (const int32_t pred : final_chain[gi]) b.edge(pred, id);
        }
      }
    };
    for (const int ch : chunks) {
      // ZeRO-2/3: behind the micro-batch reductions issued before the chunk's last backward pass.
      int32_t issued_before = -1;
      for (const auto& [pass_index, id] : mb_reduced[s]) {
        if (pass_index < last_bwd_pass[s][ch]) issued_before = id;
      }
      // The chunk's dense buckets and (MoE) its expert gradients, one reduction per MoE layer, in
      // the order backward completes them (the representative's ready ops are numbered in that
      // order; dense models: the buckets in turn). Until 2026-12-07 an MoE chunk's experts went
      // after its dense buckets, all ready as its last backward pass began.
      struct Piece {
        int32_t ready;  // the representative's op that completes the gradients
        bool expert;
        int index;      // bucket or MoE layer
      };
      const int32_t g0 = group_of(s, 0);
      std::vector<Piece> pieces;
      for (int j = 0; dense_sync && j < buckets; ++j) pieces.push_back({reduce_ready[g0][ch][j], false, j});
      const std::vector<int32_t>& expert_layers = expert_ready[g0][static_cast<size_t>(ch)];
      const double expert_bytes =
          experts ? c.expert_params * grad_bytes * expert_share[s][ch] / std::max<size_t>(1, expert_layers.size()) : 0.0;
      for (size_t k = 0; expert_bytes > 0 && k < expert_layers.size(); ++k) {
        pieces.push_back({expert_layers[k], true, static_cast<int>(k)});
      }
      std::stable_sort(pieces.begin(), pieces.end(), [](const Piece& a, const Piece& x) { return a.ready < x.ready; });
      for (const Piece& piece : pieces) {
        Op op = piece.expert ? Builder::comm(OpRole::kDpReduce, Stream::kDp, g0, reduce_op, bytes_of(expert_bytes),
                                             c.edp_latency_reduce, edp_set[s])
                             : Builder::comm(OpRole::kDpReduce, Stream::kDp, g0, reduce_op,
                                             bytes_of(bucket_params(s, ch, piece.index == buckets - 1) * grad_bytes),
                                             c.dp_latency_reduce, dp_set[s]);
        op.chunk = ch;
        const int32_t id = b.add(op);
        b.edge(dp_prev[s], id);
        b.edge(issued_before, id);
        wait_for(id, [&](int32_t gi) {
          return piece.expert ? expert_ready[gi][static_cast<size_t>(ch)][static_cast<size_t>(piece.index)]
                              : reduce_ready[gi][ch][static_cast<size_t>(piece.index)];
        });
        dp_prev[s] = id;
      }
    }
    reduced[s] = dp_prev[s];
  }
  // Optimizer step per rank group, after its gradients are reduced and the embedding synced.
  std::vector<int32_t> optimizer(ngroups, -1);
  for (size_t gi = 0; gi < ngroups; ++gi) {
    Op op = Builder::compute(OpRole::kOptimizer, static_cast<int32_t>(gi), c.optimizer);
    optimizer[gi] = b.add(op);
    for (const int32_t pred : final_chain[gi]) b.edge(pred, optimizer[gi]);
    b.edge(reduced[g.groups[gi].stage], optimizer[gi]);
    const auto& mb = mb_reduced[static_cast<size_t>(g.groups[gi].stage)];
    if (!mb.empty()) b.edge(mb.back().second, optimizer[gi]);
  }
  // The tied-embedding gradient all-reduce, at the gradient sync's bytes per value (analytical_training.cc).
  if (pp > 1 && m.tied_embeddings) {
    const Bytes emb = bytes_of(static_cast<double>(m.vocab) * m.hidden / tp * grad_bytes_per_value(cfg.training));
    for (int d = 0; d < ndp; ++d) {
      std::vector<std::vector<int32_t>> pairs;
      // The representative carries the pairs of every replica folded into it.
      std::vector<int> members;
      if (g.folded && replica[d] == representative) {
        for (int r = 0; r < dp; ++r) {
          if (!listed(r)) members.push_back(r);
        }
      } else {
        members.push_back(replica[d]);
      }
      for (const int dd : members) {
        for (std::vector<int32_t>& pair : embedding_sync_pairs(cfg, pl, dd)) pairs.push_back(std::move(pair));
      }
      const int32_t first = group_of(0, d), last = group_of(pp - 1, d);
      Op op = Builder::comm(OpRole::kEmbeddingSync, Stream::kDp, first, CollectiveOp::kAllReduce, emb, c.emb_latency,
                            b.comm_set(pairs));
      op.peer_group = last;
      const int32_t id = b.add(op);
      for (const int32_t gi : {first, last}) {
        for (const int32_t pred : final_chain[gi]) b.edge(pred, id);
        b.edge(reduced[g.groups[gi].stage], id);
        b.edge(id, optimizer[gi]);
      }
    }
  }
  // Without overlap, the updated parameters are gathered after the step, on the critical path:
  // the dense buckets, then (MoE) the expert parameters over their own group, as at the start.
  if (gathers_weights_each_step(p) && !ov.dp_param_gather) {
    for (int s = 0; s < pp; ++s) {
      int32_t prev = -1;
      auto chain = [&](Op op) {
        op.main_line = true;
        const int32_t id = b.add(op);
        b.edge(prev, id);
        if (prev < 0) {
          for (int d = 0; d < ndp; ++d) b.edge(optimizer[group_of(s, d)], id);
        }
        prev = id;
      };
      for (int ch = 0; dense_sync && ch < vpp; ++ch) {
        for (int j = 0; j < buckets; ++j) {
          Op op = dense_gather(s, ch, j);
          op.chunk = ch;
          chain(op);
        }
      }
      if (moe && edp_set[s] >= 0) chain(expert_gather(s, 1));
    }
  }
  return b.finish();
}

int simulated_replica_count(const ScenarioConfig& cfg, const GraphStragglers& stragglers) {
  bool folded = true;
  return static_cast<int>(simulated_replicas(cfg, stragglers, folded).size());
}

int64_t training_graph_ops(const ScenarioConfig& cfg, const GraphCosts& costs, const GraphStragglers& stragglers) {
  const int m = micro_batches_per_iteration(cfg);
  const int pp = cfg.parallelism.pp;
  const int replicas = simulated_replica_count(cfg, stragglers);
  // The graph of `micro_batches` per pipeline, with the scenario's replicas (k = 0) or with k
  // simulated: folded, the first k - 1 replicas listed with unit factors (the same ops as any).
  const auto ops_at = [&](int micro_batches, int k) {
    ScenarioConfig small = cfg;
    small.training.global_batch = micro_batches * cfg.parallelism.micro_batch * data_parallel_size(cfg);
    if (k == 0) return static_cast<int64_t>(build_training_graph(small, costs, stragglers).ops.size());
    small.training.fold_ranks = FoldRanks::kFold;
    GraphStragglers fewer;
    fewer.stage_layers = stragglers.stage_layers;
    for (int r = 0; r < k - 1; ++r) fewer.replicas[r] = std::vector<GroupScaling>(static_cast<size_t>(pp));
    return static_cast<int64_t>(build_training_graph(small, costs, fewer).ops.size());
  };
  const auto over_batches = [&](int k) {
    if (m <= 4 * pp) return ops_at(m, k);
    const int64_t two = ops_at(2 * pp, k);
    const int64_t four = ops_at(4 * pp, k);
    return two + static_cast<int64_t>(std::llround(static_cast<double>(four - two) / (2 * pp) * (m - 2 * pp)));
  };
  if (replicas <= 2) return over_batches(0);
  const int64_t one = over_batches(1);
  const int64_t two = over_batches(2);
  return one + (two - one) * (replicas - 1);
}

}  // namespace clustersim::work
