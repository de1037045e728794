// SPDX-License-Identifier: Apache-2.0
#include "workloads/moe.h"

#include <algorithm>
#include <numeric>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "calibration/compute_cost.h"
#include "workloads/pipeline_schedule.h"
#include "workloads/placement.h"
#include "workloads/training_graph.h"

namespace clustersim::work {
namespace {

using coll::CollectiveOp;

// Activations travel as 16-bit values (as in transformer.cc).
constexpr double kAct = 2.0;

bool swiglu(const ModelConfig& m) { return m.activation == Activation::kSwiglu; }
double dense_ffn(const ModelConfig& m) { return m.ffn_hidden > 0 ? m.ffn_hidden : 4.0 * m.hidden; }

// Parameters of one MLP of width f: 3hf (SwiGLU, no biases) or 2hf + f + h (GELU with biases).
double mlp_params(const ModelConfig& m, double f) {
  const double h = m.hidden;
  return swiglu(m) ? 3.0 * h * f : 2.0 * h * f + f + h;
}
double mlp_gemm_params(const ModelConfig& m, double f) { return (swiglu(m) ? 3.0 : 2.0) * m.hidden * f; }

// splitmix64 (Steele, Lea, Flood, OOPSLA 2014): a tiny generator whose output is the same on
// every platform, unlike std:: distributions.
// Its output function: a bijection of 64-bit words that scatters nearby inputs.
uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
struct SplitMix {
  uint64_t state;
  uint64_t next() { return mix64(state += 0x9e3779b97f4a7c15ULL); }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
};

std::vector<double> expert_weights(const MoeConfig& moe) {
  assert((moe.routing != MoeRouting::kLoads || moe.loads.size() == static_cast<size_t>(moe.experts)) &&
         "validate_moe gives one weight per expert");
  const std::vector<double> by_rank = routing_weights(moe);
  if (moe.routing != MoeRouting::kZipf) return by_rank;
  // Which expert is hot is part of the draw: a seeded permutation assigns the ranks.
  std::vector<int> order(static_cast<size_t>(moe.experts));
  for (int i = 0; i < moe.experts; ++i) order[i] = i;
  SplitMix rng{moe.seed ^ 0x5a17f00dULL};
  for (int i = moe.experts - 1; i > 0; --i) std::swap(order[i], order[rng.next() % static_cast<uint64_t>(i + 1)]);
  std::vector<double> w(by_rank.size());
  for (int r = 0; r < moe.experts; ++r) w[order[r]] = by_rank[static_cast<size_t>(r)];
  return w;
}

// Bytes per GEMM operand element (FP8 GEMMs read 1-byte operands).
double operand_bytes(const TrainingConfig& t) { return t.precision == Precision::kFp8 ? 1.0 : kAct; }

// The bytes one expert GEMM's passes move (m tokens, n outputs, k inputs; moe_gemm_time): forward
// C = A B reads A (m x k) and B (k x n) and writes C (m x n); the input gradient dA = dC B^T reads
// dC and B and writes dA (m x k); the weight gradient dB += A^T dC reads A and dC and reads and
// writes the main grad (k x n).
struct GemmPassBytes {
  double fwd, data_grad, weight_grad;
};
GemmPassBytes gemm_pass_bytes(int64_t m, int64_t n, int64_t k, double operand_bytes, double grad_bytes) {
  const double md = static_cast<double>(m), nd = static_cast<double>(n), kd = static_cast<double>(k);
  return {operand_bytes * (md * kd + kd * nd) + kAct * md * nd, operand_bytes * (md * nd + nd * kd) + kAct * md * kd,
          operand_bytes * (kd * md + md * nd) + 2.0 * grad_bytes * kd * nd};
}

// moe_gemm_time for the scenario's precision and gradient buffer.
GemmPassTimes gemm_pass(const ScenarioConfig& cfg, const calib::HardwareProfile& hw, int64_t m, int64_t n, int64_t k) {
  return moe_gemm_time(m, n, k, cfg.training.precision, operand_bytes(cfg.training), main_grad_bytes(cfg.training),
                       hw);
}

// The grouped form of gemm_pass: problems of `rows` x n x k (one a GPU's expert), each GEMM of the
// pass one grouped kernel (calib::grouped_gemm_time) against the memory roofline of all their bytes.
GemmPassTimes grouped_gemm_pass(const ScenarioConfig& cfg, const calib::HardwareProfile& hw,
                                const std::vector<int64_t>& rows, int64_t n, int64_t k) {
  const Precision precision = cfg.training.precision;
  const double ob = operand_bytes(cfg.training), gb = main_grad_bytes(cfg.training);
  std::vector<calib::GemmProblem> fwd, data_grad, weight_grad;
  double fwd_bytes = 0, data_bytes = 0, weight_bytes = 0;
  for (const int64_t m : rows) {
    const BackwardGemms back = backward_gemms({"", m, n, k});
    fwd.push_back({m, n, k});
    data_grad.push_back({back.data_grad.m, back.data_grad.n, back.data_grad.k});
    weight_grad.push_back({back.weight_grad.m, back.weight_grad.n, back.weight_grad.k});
    const GemmPassBytes bytes = gemm_pass_bytes(m, n, k, ob, gb);
    fwd_bytes += bytes.fwd;
    data_bytes += bytes.data_grad;
    weight_bytes += bytes.weight_grad;
  }
  const auto roof = [&](const std::vector<calib::GemmProblem>& g, double bytes) {
    return max(calib::grouped_gemm_time(g, precision, hw), calib::memory_time(bytes_of(bytes), hw));
  };
  return {roof(fwd, fwd_bytes), roof(data_grad, data_bytes) + roof(weight_grad, weight_bytes)};
}

// Expert GEMMs (and the activation kernel) of owner `owner`, with every expert's tokens divided
// by `chunks` (one chunk's work). Backward: input- and weight-gradient GEMMs, twice the bytes.
struct ExpertTimes {
  Time fwd, bwd;
};

// Routing draws per layer behind the experts' time (moe_layer_cost), and the generator stream of
// draw k of `layer` (draw 0: the layer's own, whose transfers the all-to-all uses).
constexpr int kRoutingDraws = 4;
uint64_t routing_stream(int layer, int k) { return static_cast<uint64_t>(layer) + (static_cast<uint64_t>(k) << 32); }

// Tokens of one micro-batch on one GPU: its share of the sequences under tp and cp.
double tokens_per_gpu(const ScenarioConfig& cfg) {
  const ParallelismConfig& p = cfg.parallelism;
  return static_cast<double>(p.micro_batch) * cfg.model.seq_len / (p.cp * p.tp);
}

// The virtual stage holding `layer` (virtual_stage_layers); it sits on stage v mod pp.
int virtual_stage_of_layer(const ScenarioConfig& cfg, int layer) {
  const ParallelismConfig& p = cfg.parallelism;
  const int stages_v = p.pp * p.vpp;
  for (int v = 0; v < stages_v; ++v) {
    const LayerRange r = virtual_stage_layers(cfg, v);
    if (layer < r.first + r.count) return v;
  }
  return stages_v - 1;
}

int stage_of_layer(const ScenarioConfig& cfg, int layer) { return virtual_stage_of_layer(cfg, layer) % cfg.parallelism.pp; }

// Routing draw k of `layer` over its stage's expert layout `lay`, one micro-batch per GPU; from
// `draws` where given.
RoutingMatrix layer_draw(const ScenarioConfig& cfg, const ExpertLayout& lay, int layer, int k,
                         RoutingDraws* draws = nullptr) {
  const auto tokens = static_cast<int64_t>(tokens_per_gpu(cfg));
  return draws ? draws->draw(*cfg.model.moe, lay.ep, lay.etp, tokens, routing_stream(layer, k))
               : route_tokens(*cfg.model.moe, lay.ep, lay.etp, tokens, routing_stream(layer, k));
}
ExpertTimes owner_expert_time(const ScenarioConfig& cfg, const calib::HardwareProfile& hw, const RoutingMatrix& r,
                              int owner, int chunks) {
  const ModelConfig& m = cfg.model;
  const int per_owner = m.moe->experts / r.owners;
  const int etp = cfg.parallelism.expert_tp;
  const auto f = static_cast<int64_t>(expert_ffn_hidden(m) / etp);
  const int64_t up = (swiglu(m) ? 2 : 1) * f;
  const int64_t h = m.hidden;
  ExpertTimes t;
  // The tokens of each of the owner's experts that any reach (one chunk's).
  std::vector<int64_t> rows;
  for (int e = owner * per_owner; e < (owner + 1) * per_owner; ++e) {
    const auto n = static_cast<int64_t>(std::ceil(r.expert_pairs[e] / chunks));
    if (n > 0) rows.push_back(n);
  }
  if (rows.empty()) return t;
  if (cfg.training.moe_grouped_gemm) {
    // One grouped GEMM per projection and pass over the owner's experts (their tokens as rows), and
    // one activation kernel over them all, as Megatron-LM's GroupedMLP runs them. Until 2026-12-07
    // one GEMM per expert, each its own launch and waves: 128 experts of 768 at top-8 paid 42% more
    // expert time than 16 of 6,144 at top-1 for the same FLOPs (QA), where serving grouped them.
    const GemmPassTimes g_up = grouped_gemm_pass(cfg, hw, rows, up, h);
    const GemmPassTimes g_down = grouped_gemm_pass(cfg, hw, rows, h, f);
    double all_rows = 0;
    for (const int64_t n : rows) all_rows += static_cast<double>(n);
    const Bytes act = activation_kernel_bytes(all_rows, static_cast<double>(up), static_cast<double>(f), kAct);
    t.fwd = g_up.fwd + g_down.fwd + calib::memory_time(act, hw);
    t.bwd = g_up.bwd + g_down.bwd + calib::memory_time(Bytes{2 * act.n}, hw);
    return t;
  }
  for (const int64_t n : rows) {
    // Up (gate + up under SwiGLU) and down projections of the expert's n tokens.
    const GemmPassTimes g_up = gemm_pass(cfg, hw, n, up, h);
    const GemmPassTimes g_down = gemm_pass(cfg, hw, n, h, f);
    t.fwd += g_up.fwd + g_down.fwd;
    t.bwd += g_up.bwd + g_down.bwd;
    // Activation: read the up projection, write its f-wide output.
    const Bytes act = activation_kernel_bytes(static_cast<double>(n), static_cast<double>(up), static_cast<double>(f), kAct);
    t.fwd += calib::memory_time(act, hw);
    t.bwd += calib::memory_time(Bytes{2 * act.n}, hw);
  }
  return t;
}

// The exposed time of one all-to-all of `a2a` (latency `lat` included) that streams tile by tile
// behind (or ahead of) a GEMM taking `gemm`, in `chunks` tiles: a two-stage pipeline,
// lat + chunk_pipeline_time(gemm/c, a2a_bw/c, 0, c) - gemm; with one chunk the whole all-to-all.
Time fused_a2a_exposed(Time a2a, Time lat, Time gemm, int chunks) {
  if (chunks <= 1) return a2a;
  const Time bw = a2a - lat;
  const double c = 1.0 / chunks;
  return max(Time::zero(), lat + chunk_pipeline_time(c * gemm, c * bw, Time::zero(), chunks) - gemm);
}

// Ulysses sequence parallelism over the tp group (DeepSpeed-Ulysses, Jacobs et al.,
// arXiv:2309.14509; MegaScale-MoE section 3.1 and Figure 9, which rejects the context-parallel
// K/V ring for its causal imbalance): each of the n GPUs holds s/n tokens; one all-to-all turns
// its Q, K, V ([s/n, q + 2 kv d], q = heads x d) into all tokens of 1/n of the heads before the
// attention core, another turns the core's output ([s, q/n]) back before the output projection; the backward moves their
// gradients the same way. Each all-to-all keeps 1/n of a GPU's buffer local, so per GPU and pass
// (2 + 2/m) b s h (n - 1) / n^2 values cross NVLink, m = heads / kv (the paper's eq. 2 writes
// twice that, with the same ratio to TP, (2 + 2/m) / n). In 16-bit activations whatever
// comm_precision says (MegaScale-MoE compresses TP and DP traffic only, section 5). Without
// overlap every all-to-all waits on the line; with intra-operator overlap
// (training.overlap.a2a_chunks > 1: MegaScale-MoE's GEMM+A2A and A2A+GEMM kernels, section 4.2,
// copy engines moving tiles while all SMs compute) the QKV all-to-all streams behind the QKV GEMM
// and the output all-to-all ahead of the output projection (fused_a2a_exposed); the backward
// pairs them with the same GEMMs' input gradients.
// `qkv_gemm` and `out_gemm` are those two GEMMs' forward times on one GPU of the group.
Time ulysses_exposed(const ScenarioConfig& cfg, const TrainingLinks& l, Time qkv_gemm, Time out_gemm) {
  const ParallelismConfig& p = cfg.parallelism;
  const ModelConfig& m = cfg.model;
  const int n = p.tp;
  if (n <= 1) return Time::zero();
  const double tokens = static_cast<double>(p.micro_batch) * m.seq_len / (p.cp * n);
  const double kv = m.kv_heads > 0 ? m.kv_heads : m.heads;
  const double d = head_dim(m);
  // The group's ranks per node as placed (a TP group across nodes exchanges over the NICs).
  const Placement pl = placement_of(cfg);
  const coll::GroupLinks g = group_links(n, pl.ranks_per_node(Dim::kTp, cfg.cluster.gpus_per_node), l);
  const Time lat = coll::collective_latency(CollectiveOp::kAllToAll, coll::Algorithm::kRing, g);
  // With fewer KV heads than ranks each rank still needs the KV head of its query heads: a KV
  // head goes to n / kv ranks, as if there were n (until 2026-12-06 the kv heads were split like
  // the queries, and MQA over tp 8 moved an eighth of its K/V: 0.46 MB for 3.7 a pass).
  const double kv_sent = std::max(kv, static_cast<double>(n));
  // Queries, keys and values go out and the attention context (heads x d wide) comes back.
  const Bytes qkv_bytes = bytes_of(tokens * (query_width(m) + 2.0 * kv_sent * d) * kAct);
  const Time qkv = collective_time(CollectiveOp::kAllToAll, qkv_bytes, g);
  const Time out = collective_time(CollectiveOp::kAllToAll, bytes_of(tokens * query_width(m) * kAct), g);
  const int c = cfg.training.overlap.a2a_chunks;
  const Time pass = fused_a2a_exposed(qkv, lat, qkv_gemm, c) + fused_a2a_exposed(out, lat, out_gemm, c);
  return pass + pass;
}

// Attention-block communication of a layer: Ulysses over the tp group under attention_parallel
// sp (plus the context-parallel ring when the scenario itself sets cp > 1, priced on the attention
// view), Megatron TP / CP as a dense layer otherwise.
Time attention_comm_time(const ScenarioConfig& cfg, const ScenarioConfig& view, const MoeLinks& l,
                         const LayerTimes& lt, Time qkv_gemm, Time out_gemm) {
  if (cfg.training.attention_parallel != AttentionParallel::kSp) return layer_tp_time(view, l.tp, l.cp, lt);
  const Time cp_ring = cfg.parallelism.cp > 1 ? layer_tp_time(view, l.cp, l.cp, lt) : Time::zero();
  return ulysses_exposed(cfg, l.tp, qkv_gemm, out_gemm) + cp_ring;
}

}  // namespace

GemmPassTimes moe_gemm_time(int64_t m, int64_t n, int64_t k, Precision precision, double operand_bytes,
                            double grad_bytes, const calib::HardwareProfile& hw) {
  const auto roof = [&](int64_t gm, int64_t gn, int64_t gk, double bytes) {
    return max(calib::gemm_time(gm, gn, gk, precision, hw), calib::memory_time(bytes_of(bytes), hw));
  };
  const GemmPassBytes bytes = gemm_pass_bytes(m, n, k, operand_bytes, grad_bytes);
  GemmPassTimes t;
  t.fwd = roof(m, n, k, bytes.fwd);
  // The backward's two GEMMs, the weight gradient timed in the probe's orientation
  // (backward_gemms: n x k x m).
  const BackwardGemms back = backward_gemms({"", m, n, k});
  t.bwd = roof(back.data_grad.m, back.data_grad.n, back.data_grad.k, bytes.data_grad);
  t.bwd += roof(back.weight_grad.m, back.weight_grad.n, back.weight_grad.k, bytes.weight_grad);
  return t;
}

bool is_moe_layer(const ModelConfig& m, int layer) {
  if (!m.moe || layer < m.moe->first_dense_layers) return false;
  return (layer - m.moe->first_dense_layers) % m.moe->moe_layer_frequency == 0;
}

int moe_layer_count(const ModelConfig& m) {
  int n = 0;
  for (int i = 0; i < m.layers; ++i) n += is_moe_layer(m, i) ? 1 : 0;
  return n;
}

LayerRange virtual_stage_layers(const ScenarioConfig& cfg, int v) {
  const ParallelismConfig& p = cfg.parallelism;
  const std::vector<int>& listed = p.stage_layers;
  if (listed.empty()) {
    const int per_chunk = cfg.model.layers / (p.pp * p.vpp);
    return {v * per_chunk, per_chunk};
  }
  const auto count = [&](int u) { return listed[static_cast<size_t>(u % p.pp)] / p.vpp; };
  LayerRange r;
  for (int u = 0; u < v; ++u) r.first += count(u);
  r.count = count(v);
  return r;
}

std::vector<int> moe_layers_per_chunk(const ScenarioConfig& cfg, int stage) {
  const ParallelismConfig& p = cfg.parallelism;
  std::vector<int> out(static_cast<size_t>(p.vpp), 0);
  for (int c = 0; c < p.vpp; ++c) {
    const LayerRange r = virtual_stage_layers(cfg, c * p.pp + stage);
    for (int layer = r.first; layer < r.first + r.count; ++layer) out[static_cast<size_t>(c)] += is_moe_layer(cfg.model, layer);
  }
  return out;
}

double expert_ffn_hidden(const ModelConfig& m) {
  return m.moe && m.moe->expert_ffn_hidden > 0 ? m.moe->expert_ffn_hidden : dense_ffn(m);
}

double moe_extra_params(const ModelConfig& m) {
  if (!m.moe) return 0.0;
  const MoeConfig& e = *m.moe;
  const double per_layer = (e.experts + e.shared_experts) * mlp_params(m, expert_ffn_hidden(m)) +
                           static_cast<double>(m.hidden) * e.experts - mlp_params(m, dense_ffn(m));
  return moe_layer_count(m) * per_layer;
}

double moe_extra_active_gemm_params(const ModelConfig& m) {
  if (!m.moe) return 0.0;
  const MoeConfig& e = *m.moe;
  const double per_layer = (e.top_k + e.shared_experts) * mlp_gemm_params(m, expert_ffn_hidden(m)) +
                           static_cast<double>(m.hidden) * e.experts - mlp_gemm_params(m, dense_ffn(m));
  return moe_layer_count(m) * per_layer;
}

double moe_active_params(const ModelConfig& m) {
  const double total = count_params(m).total;
  if (!m.moe) return total;
  const MoeConfig& e = *m.moe;
  return total - moe_layer_count(m) * (e.experts - e.top_k) * mlp_params(m, expert_ffn_hidden(m));
}

ExpertLayout expert_layout(const ScenarioConfig& cfg, int stage) {
  const ParallelismConfig& p = cfg.parallelism;
  const int dp = data_parallel_size(cfg);
  const Placement pl(p.placement, p.tp, p.cp, dp, p.pp);
  ExpertLayout out;
  for (int d = 0; d < dp; ++d) {
    for (int c = 0; c < p.cp; ++c) {
      for (int t = 0; t < p.tp; ++t) out.stage_gpus.push_back(pl.gpu(t, c, d, stage));
    }
  }
  std::sort(out.stage_gpus.begin(), out.stage_gpus.end());
  out.ep = p.ep;
  out.etp = p.expert_tp;
  out.edp = static_cast<int>(out.stage_gpus.size()) / (p.ep * p.expert_tp);
  return out;
}

double RoutingMatrix::owner_pairs(int owner) const {
  double sum = 0;
  for (int s = 0; s < sources; ++s) sum += pairs[static_cast<size_t>(s) * owners + owner];
  return sum;
}

RoutingMatrix::OwnerTotals RoutingMatrix::owner_totals() const {
  OwnerTotals t;
  for (int o = 0; o < owners; ++o) {
    const double v = owner_pairs(o);
    t.kept += v;
    t.busiest = std::max(t.busiest, v);
  }
  return t;
}

double RoutingMatrix::imbalance() const {
  const OwnerTotals t = owner_totals();
  return t.kept > 0 ? t.busiest / (t.kept / owners) : 1.0;
}

RoutingMatrix route_tokens(const MoeConfig& moe, int ep, int etp, int64_t tokens_per_gpu, uint64_t stream) {
  const int experts = moe.experts;
  const int k = std::min(moe.top_k, experts);
  const std::vector<double> w = expert_weights(moe);
  std::vector<double> cum(w.size());
  double acc = 0;
  for (size_t i = 0; i < w.size(); ++i) cum[i] = (acc += w[i]);
  const bool even = std::all_of(w.begin(), w.end(), [&](double x) { return x == w[0]; }) && w[0] > 0;
  // routing_weights scales the largest weight to 1, so equal weights are 1 (the division below is
  // for weights that come otherwise).
  const bool unit_weights = even && w[0] == 1.0;
  // Uneven weights: the first expert whose cumulative weight passes u (what upper_bound over `cum`
  // finds), started from a table of where each of kBuckets equal slices of [0, acc) begins, so a
  // draw walks a step or two instead of searching (skewed routing draws dozens per pair).
  constexpr int kBuckets = 1024;
  std::vector<int> bucket_start(kBuckets);
  for (int b = 0; b < kBuckets && !even; ++b) {
    bucket_start[static_cast<size_t>(b)] =
        static_cast<int>(std::upper_bound(cum.begin(), cum.end(), acc * b / kBuckets) - cum.begin());
  }
  const auto expert_at = [&](double u) {
    const int b = std::clamp(static_cast<int>(u / acc * kBuckets), 0, kBuckets - 1);
    int e = bucket_start[static_cast<size_t>(b)];
    // u / acc x kBuckets may round up past a bucket edge: step back, then forward.
    while (e > 0 && cum[static_cast<size_t>(e - 1)] > u) --e;
    while (e < experts && cum[static_cast<size_t>(e)] <= u) ++e;
    return e;
  };
  RoutingMatrix r;
  r.sources = ep * etp;
  r.owners = ep;
  std::vector<double> per_expert(static_cast<size_t>(r.sources) * experts, 0.0);
  // The seed and the stream hashed before they start the generator. Until 2026-12-06 it started at
  // seed x C + stream x the generator's own increment, so layer L's draws were layer 0's shifted
  // by L: every layer routed alike, the same GPU hottest in each (Mixtral, seed 0: imbalance
  // 1.0396, 1.0393, 1.0393, ... over its 8 layers), and a stage's layers did not average out.
  SplitMix rng{mix64(moe.seed * 0x2545f4914f6cdd1dULL + 1) ^ mix64(stream ^ 0xd1b54a32d192ed03ULL)};
  std::vector<int> chosen(static_cast<size_t>(k));  // this token's picks (the first `picked` of them)
  std::vector<char> taken(static_cast<size_t>(experts), 0);  // chosen for this token (O(1) membership)
  // One source's pairs per expert, counted as integers and added to per_expert once per source
  // (a double += per pair, a load-add-store chain, took a quarter of a DeepSeek-V3-sized plan's
  // 3.6 s; review 2026-12-07: the same counts, exactly).
  std::vector<int64_t> counts(static_cast<size_t>(experts), 0);
  // top_k = experts: every token picks every expert, whatever the weights: no draws
  // (they ran at the skewed rejection's cost, 11 s for 128 of 128 experts under zipf s = 10,
  // until 2026-12-06; the counts are the same).
  const bool every = k == experts;
  for (int s = 0; s < r.sources && every; ++s) {
    for (int e = 0; e < experts; ++e) per_expert[static_cast<size_t>(s) * experts + e] = static_cast<double>(tokens_per_gpu);
  }
  for (int s = 0; s < r.sources && !every; ++s) {
    std::fill(counts.begin(), counts.end(), 0);
    for (int64_t t = 0; t < tokens_per_gpu; ++t) {
      int picked = 0;
      for (int j = 0; j < k; ++j) {
        int pick = -1;
        // Rejection against the experts already chosen; after a few misses (a very skewed
        // distribution), draw from the renormalised remainder instead.
        for (int tries = 0; tries < 16 && pick < 0; ++tries) {
          const double u = rng.uniform() * acc;
          // Equal weights: the expert is the uniform draw's bucket (what the search finds, faster;
          // weights of 1, as uniform routing's, need no division).
          const int e = even ? static_cast<int>(unit_weights ? u : u / w[0]) : expert_at(u);
          const int c = std::min(e, experts - 1);
          if ((even || w[c] > 0) && !taken[static_cast<size_t>(c)]) pick = c;
        }
        if (pick < 0) {
          double left = 0;
          for (int e = 0; e < experts; ++e) {
            if (!taken[static_cast<size_t>(e)]) left += w[e];
          }
          double u = rng.uniform() * left;
          for (int e = 0; e < experts && pick < 0; ++e) {
            if (taken[static_cast<size_t>(e)] || w[e] <= 0) continue;
            if ((u -= w[e]) < 0) pick = e;
          }
          if (pick < 0) {  // rounding: the last expert with weight left
            for (int e = experts - 1; e >= 0 && pick < 0; --e) {
              if (w[e] > 0 && !taken[static_cast<size_t>(e)]) pick = e;
            }
          }
        }
        if (pick < 0) break;  // fewer experts with weight than top_k (validation forbids it)
        chosen[static_cast<size_t>(picked++)] = pick;
        taken[static_cast<size_t>(pick)] = 1;
        ++counts[static_cast<size_t>(pick)];
      }
      for (int j = 0; j < picked; ++j) taken[static_cast<size_t>(chosen[static_cast<size_t>(j)])] = 0;
    }
    for (int e = 0; e < experts; ++e) {
      per_expert[static_cast<size_t>(s) * experts + e] += static_cast<double>(counts[static_cast<size_t>(e)]);
    }
  }
  r.expert_pairs.assign(static_cast<size_t>(experts), 0.0);
  for (int s = 0; s < r.sources; ++s) {
    for (int e = 0; e < experts; ++e) r.expert_pairs[e] += per_expert[static_cast<size_t>(s) * experts + e];
  }
  if (moe.capacity_factor > 0) {
    // GShard-style capacity: ceil(cf x pairs / experts) per expert; the excess is dropped
    // evenly over the sources that sent it.
    const double mean = static_cast<double>(r.sources) * tokens_per_gpu * k / experts;
    const double cap = std::ceil(moe.capacity_factor * mean);
    for (int e = 0; e < experts; ++e) {
      if (r.expert_pairs[e] <= cap) continue;
      const double keep = cap / r.expert_pairs[e];
      r.dropped += r.expert_pairs[e] - cap;
      for (int s = 0; s < r.sources; ++s) per_expert[static_cast<size_t>(s) * experts + e] *= keep;
      r.expert_pairs[e] = cap;
    }
  }
  r.pairs.assign(static_cast<size_t>(r.sources) * r.owners, 0.0);
  const int per_owner = experts / ep;
  for (int s = 0; s < r.sources; ++s) {
    for (int e = 0; e < experts; ++e) {
      r.pairs[static_cast<size_t>(s) * r.owners + e / per_owner] += per_expert[static_cast<size_t>(s) * experts + e];
    }
  }
  return r;
}

RoutingMatrix RoutingDraws::draw(const MoeConfig& moe, int ep, int etp, int64_t tokens_per_gpu, uint64_t stream) {
  // Every input route_tokens reads, exactly (%a: doubles to the bit).
  char head[256];
  std::snprintf(head, sizeof head, "%d %d %d %a %a %llu %d %d %lld %llu", moe.experts, moe.top_k,
                static_cast<int>(moe.routing), moe.capacity_factor, moe.zipf_s, static_cast<unsigned long long>(moe.seed),
                ep, etp, static_cast<long long>(tokens_per_gpu), static_cast<unsigned long long>(stream));
  std::string key = head;
  char one[32];
  for (const double w : moe.loads) {
    std::snprintf(one, sizeof one, " %a", w);
    key += one;
  }
  if (const auto it = done_.find(key); it != done_.end()) return it->second;
  RoutingMatrix r = route_tokens(moe, ep, etp, tokens_per_gpu, stream);
  const size_t bytes = (r.pairs.size() + r.expert_pairs.size()) * sizeof(double) + key.size();
  if (bytes_ + bytes > kMaxBytes) {
    done_.clear();
    bytes_ = 0;
  }
  bytes_ += bytes;
  done_.emplace(std::move(key), r);
  return r;
}

std::vector<coll::FlowSpec> dispatch_transfers(const RoutingMatrix& routing, const ExpertLayout& layout,
                                               int edp_index, double bytes_per_pair, int gpus_per_node) {
  std::vector<coll::FlowSpec> out;
  for (int s = 0; s < routing.sources; ++s) {
    const int i = s % layout.etp, j = s / layout.etp;
    const int32_t src = layout.gpu(i, j, edp_index);
    for (int d = 0; d < routing.owners; ++d) {
      const int32_t dst = layout.gpu(i, d, edp_index);
      const double bytes = routing.pairs[static_cast<size_t>(s) * routing.owners + d] * bytes_per_pair;
      if (src == dst || bytes <= 0) continue;
      out.push_back({src, dst, bytes_of(bytes), src / gpus_per_node != dst / gpus_per_node});
    }
  }
  return out;
}

std::vector<coll::FlowSpec> all_domains_dispatch(const RoutingMatrix& routing, const ExpertLayout& layout,
                                                 double bytes_per_pair, int gpus_per_node) {
  std::vector<coll::FlowSpec> out;
  for (int e = 0; e < layout.edp; ++e) {
    const std::vector<coll::FlowSpec> one = dispatch_transfers(routing, layout, e, bytes_per_pair, gpus_per_node);
    out.insert(out.end(), one.begin(), one.end());
  }
  return out;
}

namespace {

// NCCL's all-to-all sends to another rail through PXN (network.pxn, NCCL's default), relaying
// only through the sender's own expert group (its expert-TP slice of its domain). Built once per
// layout, applied to each flow list; without PXN it leaves them as they are.
class ThroughPxn {
 public:
  ThroughPxn(const ScenarioConfig& cfg, const ExpertLayout& lay)
      : on_(cfg.network.pxn), gpus_per_node_(cfg.cluster.gpus_per_node), nics_per_node_(cfg.cluster.nics_per_node) {
    if (!on_) return;
    for (size_t k = 0; k < lay.stage_gpus.size(); ++k) {
      const int at = static_cast<int>(k);
      slice_[lay.stage_gpus[k]] = at / (lay.ep * lay.etp) * lay.etp + at % lay.etp;
    }
  }
  void operator()(std::vector<coll::FlowSpec>& flows) const {
    if (!on_) return;
    coll::route_through_pxn(flows, gpus_per_node_, nics_per_node_, [this](int32_t src, int32_t gpu) {
      const auto it = slice_.find(gpu);
      return it != slice_.end() && it->second == slice_.at(src);
    });
  }

 private:
  bool on_;
  int gpus_per_node_, nics_per_node_;
  std::unordered_map<int32_t, int> slice_;  // GPU -> its expert group, edp_index x etp + etp_index
};

std::vector<coll::FlowSpec> swapped(std::vector<coll::FlowSpec> flows) {
  for (coll::FlowSpec& f : flows) std::swap(f.src, f.dst);
  return flows;
}

}  // namespace

std::vector<coll::FlowSpec> layer_dispatch_flows(const ScenarioConfig& cfg, int layer, RoutingDraws* draws) {
  const ExpertLayout lay = expert_layout(cfg, stage_of_layer(cfg, layer));
  std::vector<coll::FlowSpec> flows = all_domains_dispatch(
      layer_draw(cfg, lay, layer, 0, draws), lay, cfg.model.hidden * a2a_bytes_per_value(cfg.training), cfg.cluster.gpus_per_node);
  ThroughPxn(cfg, lay)(flows);
  return flows;
}

double a2a_bytes_per_value(const TrainingConfig& t) { return t.comm_precision == CommPrecision::kFp8 ? 1.0 : 2.0; }

ScenarioConfig attention_view(const ScenarioConfig& cfg) {
  ScenarioConfig v = cfg;
  if (cfg.training.attention_parallel == AttentionParallel::kSp) {
    v.parallelism.cp = cfg.parallelism.cp * cfg.parallelism.tp;
    v.parallelism.tp = 1;
  }
  return v;
}

Time chunk_pipeline_time(Time d, Time e, Time k, int chunks) {
  return d + e + k + static_cast<int64_t>(std::max(chunks, 1) - 1) * max(d + k, e);
}

MoeLinks moe_links(const ScenarioConfig& cfg, const TrainingLinks& l) {
  const ParallelismConfig& p = cfg.parallelism;
  const Placement pl(p.placement, p.tp, p.cp, data_parallel_size(cfg), p.pp);
  MoeLinks out(l);
  out.tp = links_for_ring(cfg, l, p.tp > 1 ? pl.gpu(1, 0, 0, 0) : 0, p.tp);
  out.cp = links_for_ring(cfg, l, p.cp > 1 ? pl.gpu(0, 1, 0, 0) : 0, p.cp);
  return out;
}

MoeLayerCost moe_layer_cost(const ScenarioConfig& cfg, const calib::HardwareProfile& hw, const MoeLinks& l, int layer,
                            RoutingDraws* draws) {
  const ModelConfig& m = cfg.model;
  const ScenarioConfig v = attention_view(cfg);
  MoeLayerCost c;
  if (!is_moe_layer(m, layer)) {
    const LayerTimes lt = layer_times(v, hw);
    c.attention_fwd = lt.forward;
    c.attention_bwd = lt.backward;
    c.attention_core_fwd = lt.attention_fwd;
    const std::vector<GemmShape> dg = layer_gemms(v);
    const auto fwd_of = [&](size_t i) {
      return i < dg.size() ? calib::gemm_time(dg[i].m, dg[i].n, dg[i].k, cfg.training.precision, hw) : Time::zero();
    };
    c.attention_comm = attention_comm_time(cfg, v, l, lt, fwd_of(0), fwd_of(1));
    return c;
  }
  c.moe = true;
  const MoeConfig& moe = *m.moe;
  const Precision prec = cfg.training.precision;
  const bool fused = cfg.training.flash_attention;
  // --- Attention block: QKV and output GEMMs, attention core, norms and residuals (the dense
  // layer's memory-bound kernels less the MLP activation).
  ScenarioConfig a = v;
  a.training.parallel_block = true;  // one TP collective pair: the attention block's
  Time fwd, bwd;
  Time gemm_fwd[2];  // QKV and output projection, forward (Ulysses overlaps its all-to-alls with them)
  const std::vector<GemmShape> g = layer_gemms(a);
  for (size_t i = 0; i < 2 && i < g.size(); ++i) {
    const GemmPassTimes t = gemm_pass(cfg, hw, g[i].m, g[i].n, g[i].k);
    fwd += t.fwd;
    bwd += t.bwd;
    gemm_fwd[i] = t.fwd;
  }
  c.part_attention_gemm = fwd + bwd;
  const AttentionFlops att = layer_attention_flops(a);
  const calib::AttentionKernel kernel = attention_kernel(cfg.training);
  const Precision att_prec = attention_precision(prec);
  const Time core_fwd = calib::attention_time(att.executed, kernel, att_prec, hw, att.score_elements);
  const Time core_bwd = calib::attention_time(Flops{att.executed.n * (fused ? 2.5 : 2.0)}, kernel, att_prec, hw,
                                              att.score_elements, true);
  fwd += core_fwd;
  bwd += core_bwd;
  c.part_attention_core = core_fwd + core_bwd;
  const Bytes elem = Bytes{std::max<int64_t>(0, layer_elementwise_bytes(a).n - mlp_activation_bytes(a).n)};
  const Time elem_fwd = calib::memory_time(elem, hw), elem_bwd = calib::memory_time(Bytes{2 * elem.n}, hw);
  fwd += elem_fwd;
  bwd += elem_bwd;
  c.part_elementwise = elem_fwd + elem_bwd;
  // Router (tokens x experts x h GEMM), and the permutation of every token-expert pair before the
  // dispatch and after the combine (read + write h values each).
  const double tokens_gpu = tokens_per_gpu(cfg);
  const auto tg = static_cast<int64_t>(tokens_gpu);
  const GemmPassTimes router = gemm_pass(cfg, hw, tg, moe.experts, m.hidden);
  const Bytes permute = bytes_of(2.0 * 2.0 * tokens_gpu * moe.top_k * m.hidden * kAct);
  const Time permute_t = calib::memory_time(permute, hw);
  fwd += router.fwd + permute_t;
  bwd += router.bwd + permute_t;
  c.part_router_permute = router.fwd + router.bwd + permute_t + permute_t;
  Time shared_fwd, shared_bwd;
  if (moe.shared_experts > 0) {
    // Shared experts: one MLP of width shared x f on the GPU's own tokens.
    const auto fs = static_cast<int64_t>(moe.shared_experts * expert_ffn_hidden(m));
    const int64_t up = (swiglu(m) ? 2 : 1) * fs;
    const GemmPassTimes s_up = gemm_pass(cfg, hw, tg, up, m.hidden);
    const GemmPassTimes s_down = gemm_pass(cfg, hw, tg, m.hidden, fs);
    // Their activation kernel as the routed experts' (read the up projection, write fs wide).
    const Bytes act = activation_kernel_bytes(tokens_gpu, static_cast<double>(up), static_cast<double>(fs), kAct);
    const Time act_fwd = calib::memory_time(act, hw), act_bwd = calib::memory_time(Bytes{2 * act.n}, hw);
    shared_fwd = s_up.fwd + s_down.fwd + act_fwd;
    shared_bwd = s_up.bwd + s_down.bwd + act_bwd;
    fwd += shared_fwd;
    bwd += shared_bwd;
    c.part_shared = s_up.fwd + s_up.bwd + s_down.fwd + s_down.bwd + act_fwd + act_bwd;
  }
  c.attention_fwd = fwd;
  c.attention_bwd = bwd;
  c.attention_core_fwd = core_fwd;
  // The windows TP overlap hides under: the backward pass recomputes the forward under full
  // recomputation (as layer_times counts it for a dense layer).
  const bool full = cfg.training.recompute == Recompute::kFull;
  LayerTimes lt;
  lt.forward = fwd;
  lt.backward = full ? bwd + fwd : bwd;
  lt.attention_fwd = core_fwd;
  c.attention_comm = attention_comm_time(cfg, a, l, lt, gemm_fwd[0], gemm_fwd[1]);
  if (moe.shared_experts > 0 && cfg.training.attention_parallel == AttentionParallel::kTp) {
    // The shared experts' tensor-parallel MLP gathers its input and reduce-scatters its output
    // itself (Megatron-Core's SharedExpertMLP; overlapping them came later,
    // --moe-shared-expert-overlap): one more collective pair.
    c.attention_comm += tp_collectives_time(a, l.tp, 1, shared_fwd, full ? shared_bwd + shared_fwd : shared_bwd);
  }

  // --- Routing of one micro-batch in expert domain 0 of this layer's stage.
  const int stage = stage_of_layer(cfg, layer);
  const ExpertLayout lay = expert_layout(cfg, stage);
  const RoutingMatrix r = layer_draw(cfg, lay, layer, 0, draws);
  c.imbalance = r.imbalance();
  double kept = 0;
  for (const double p : r.expert_pairs) kept += p;
  c.dropped_fraction = kept + r.dropped > 0 ? r.dropped / (kept + r.dropped) : 0.0;
  const double bytes_per_pair = m.hidden * a2a_bytes_per_value(cfg.training);
  const std::vector<coll::FlowSpec> xfers = dispatch_transfers(r, lay, 0, bytes_per_pair, cfg.cluster.gpus_per_node);
  // Every expert domain of the stage dispatches at once; their flows decide what the tiers cost.
  const std::vector<coll::FlowSpec> payload = all_domains_dispatch(r, lay, bytes_per_pair, cfg.cluster.gpus_per_node);
  const ThroughPxn through_pxn(cfg, lay);
  c.dispatch_flows = payload;
  through_pxn(c.dispatch_flows);
  // The combine sends the experts' outputs back: PXN relays on the experts' side (a hot expert's
  // outputs leave its node over every rail, where the dispatch to it arrives over its own).
  std::vector<coll::FlowSpec> combine_wire = swapped(payload);
  through_pxn(combine_wire);
  if (cfg.network.pxn) c.combine_flows = swapped(combine_wire);
  const int per_nic = gpus_per_nic(cfg.cluster);
  const auto nic_time = [&cfg, &hw, per_nic](const std::vector<coll::FlowSpec>& flows) {
    // At the NIC's achieved rate, as the rings' NIC time it is set against (at line rate until
    // 2026-12-07: about 5% short beside them).
    const double rate = cfg.cluster.nic_bandwidth.bytes_per_s * hw.eff.network_busbw;
    return rate > 0 ? Time::s(coll::busiest_nic_bytes(flows, per_nic) / rate) : Time::zero();
  };
  c.dispatch_nic = nic_time(c.dispatch_flows);
  c.combine_nic = nic_time(combine_wire);
  std::vector<coll::FlowSpec> legs = xfers;  // domain 0's, as they cross NVLink and the NICs
  through_pxn(legs);
  std::vector<coll::FlowSpec> combine_legs = swapped(xfers);
  through_pxn(combine_legs);
  std::vector<int32_t> ep_group;
  for (int d = 0; d < lay.ep; ++d) ep_group.push_back(lay.gpu(0, d, 0));
  double slowdown = fabric_slowdown(cfg, c.dispatch_flows);
  if (static_cast<size_t>(layer) < l.a2a.size()) slowdown = std::max(slowdown, l.a2a[static_cast<size_t>(layer)]);
  const coll::GroupLinks eg = group_links(lay.ep, coll::fewest_members_per_node(ep_group, cfg.cluster.gpus_per_node),
                                          links_at_contention(l.base, slowdown));
  const Time a2a = coll::alltoallv_time(legs, eg, per_nic, c.dispatch_flows);
  const Time a2a_back = coll::alltoallv_time(combine_legs, eg, per_nic, combine_wire);
  const Time a2a_lat = coll::collective_latency(CollectiveOp::kAllToAll, coll::Algorithm::kRing, eg);
  // The busiest GPU's dispatch bytes, sent or received: a hot expert's owner receives far more
  // than any GPU sends (zipf s = 10 on Mixtral: 117 MB in against 33.5 MB out; until 2026-12-06
  // the sent bytes alone were reported), over every expert domain of the stage (domain 0's until
  // 2026-12-07: a domain that straddles nodes can hold the busiest GPU).
  std::vector<double> sent(static_cast<size_t>(cfg.cluster.gpus), 0.0), received(sent.size(), 0.0);
  for (const coll::FlowSpec& f : payload) sent[f.src] += f.bytes.as_double(), received[f.dst] += f.bytes.as_double();
  c.a2a_bytes_max_gpu =
      bytes_of(std::max(*std::max_element(sent.begin(), sent.end()), *std::max_element(received.begin(), received.end())));
  // Expert TP: the pairs an owner received are gathered over its etp slices (and their outputs
  // reduce-scattered back) so that every slice runs its 1/etp of each expert on all of them.
  Time etp_coll, etp_lat;
  if (lay.etp > 1) {
    double busiest = 0;
    for (int o = 0; o < r.owners; ++o) busiest = std::max(busiest, r.owner_pairs(o));
    const coll::GroupLinks tg_links = group_links(lay.etp, lay.etp, l.base);
    etp_coll = collective_time(CollectiveOp::kAllGather, bytes_of(busiest * bytes_per_pair), tg_links);
    etp_lat = coll::collective_latency(CollectiveOp::kAllGather, coll::Algorithm::kRing, tg_links);
  }
  c.dispatch = a2a + etp_coll;
  c.combine = a2a_back + etp_coll;
  c.a2a_latency = a2a_lat + etp_lat;
  c.etp_bandwidth_time = etp_coll - etp_lat;
  // --- Experts of the busiest owner, whole and in chunks. Every micro-batch routes afresh: the
  // mean over kRoutingDraws draws of the busiest owner's time (draw 0 is `r`, whose transfers the
  // all-to-all uses), so that a draw whose busiest expert just crosses a GEMM tile edge does not
  // set every micro-batch's time (Mixtral-8x7B, seeds 0..9, one draw: 3.36 s at seed 0 against
  // 3.13-3.15 s at the others).
  ExpertTimes whole;
  for (int k = 0; k < kRoutingDraws; ++k) {
    const RoutingMatrix rk = k == 0 ? r : layer_draw(cfg, lay, layer, k, draws);
    ExpertTimes most;
    for (int o = 0; o < rk.owners; ++o) {
      const ExpertTimes t = owner_expert_time(cfg, hw, rk, o, 1);
      if (t.fwd > most.fwd) most.fwd = t.fwd;
      if (t.bwd > most.bwd) most.bwd = t.bwd;
    }
    whole.fwd += (1.0 / kRoutingDraws) * most.fwd;
    whole.bwd += (1.0 / kRoutingDraws) * most.bwd;
  }
  c.expert_fwd = whole.fwd;
  c.expert_bwd = whole.bwd;
  const Time lat = a2a_lat + etp_lat;
  // Each direction's bandwidth term on its own: the combine leaves a hot expert's GPU over every
  // rail through PXN where the dispatch to it arrives through its one NIC (until 2026-12-06 the
  // chunked pipeline priced the combine at the dispatch's: one hot expert per node, ep 16,
  // 4 chunks, 5.77 ms exposed per layer where each at its own gives 3.6 ms).
  const Time bw = max(Time::zero(), c.dispatch - lat);
  const Time combine_bw = max(Time::zero(), c.combine - lat);
  c.moe_fwd = c.dispatch + c.expert_fwd + c.combine;
  c.moe_bwd = c.dispatch + c.expert_bwd + c.combine;
  c.chunks = 1;
  for (int n = 2; n <= cfg.training.overlap.a2a_chunks; ++n) {
    // COMET-style fine-grained overlap: the expert GEMMs run as one kernel whose tiles follow the
    // arriving chunks (no extra launches or smaller GEMMs), the all-to-all streams its chunks
    // after one latency. So one chunk is 1/n of each part, and the latencies are paid once.
    const Time d = (1.0 / n) * bw, k = (1.0 / n) * combine_bw;
    const Time f = lat + lat + chunk_pipeline_time(d, (1.0 / n) * c.expert_fwd, k, n);
    const Time b = lat + lat + chunk_pipeline_time(d, (1.0 / n) * c.expert_bwd, k, n);
    if (f + b < c.moe_fwd + c.moe_bwd) {
      c.moe_fwd = f;
      c.moe_bwd = b;
      c.chunks = n;
    }
  }
  if (cfg.training.recompute == Recompute::kFull) {
    c.attention_bwd += c.attention_fwd;
    c.expert_bwd += c.expert_fwd;
    c.moe_bwd += c.moe_fwd;
  } else if (cfg.training.recompute == Recompute::kSelective) {
    c.attention_bwd += selective_recompute_time(a, hw, core_fwd);  // the attention core again
  }
  return c;
}

std::vector<MoeStageCost> moe_stage_costs(const ScenarioConfig& cfg, const calib::HardwareProfile& hw, const MoeLinks& l,
                                          RoutingDraws* draws) {
  const ParallelismConfig& p = cfg.parallelism;
  std::vector<MoeStageCost> out(static_cast<size_t>(p.pp));
  for (int s = 0; s < p.pp; ++s) {
    MoeStageCost& sc = out[s];
    sc.stage = s;
    for (int ch = 0; ch < p.vpp; ++ch) {
      sc.chunk_begin.push_back(sc.layers.size());
      ChunkTime& chunk = sc.chunks.emplace_back();
      const LayerRange r = virtual_stage_layers(cfg, ch * p.pp + s);
      for (int layer = r.first; layer < r.first + r.count; ++layer) {
        const MoeLayerCost c = moe_layer_cost(cfg, hw, l, layer, draws);
        sc.layers.push_back(layer);
        sc.costs.push_back(c);
        sc.compute += c.compute();
        sc.tp_exposed += c.attention_comm;
        sc.ep_exposed += c.ep_exposed();
        chunk.forward += c.attention_fwd + (c.moe ? c.moe_fwd : Time::zero());
        chunk.backward += c.attention_bwd + (c.moe ? c.moe_bwd : Time::zero());
      }
      sc.forward += chunk.forward;
      sc.backward += chunk.backward;
    }
    sc.chunk_begin.push_back(sc.layers.size());
  }
  return out;
}

namespace {

// Dense and expert parameters of each stage (dense: attention, norms, routers, shared experts,
// dense layers, embedding on the first stage, LM head and final norm on the last).
struct StageParams {
  double dense = 0, expert = 0;
};
std::vector<StageParams> stage_params(const ScenarioConfig& cfg) {
  const ModelConfig& m = cfg.model;
  const ParallelismConfig& p = cfg.parallelism;
  ModelConfig dense = m;
  dense.moe.reset();
  const ParamCount pc = count_params(dense);
  const double f = expert_ffn_hidden(m);
  std::vector<StageParams> out(static_cast<size_t>(p.pp));
  for (int layer = 0; layer < m.layers; ++layer) {
    StageParams& s = out[static_cast<size_t>(stage_of_layer(cfg, layer))];
    if (is_moe_layer(m, layer)) {
      s.dense += pc.per_layer - mlp_params(m, dense_ffn(m)) + static_cast<double>(m.hidden) * m.moe->experts +
                 m.moe->shared_experts * mlp_params(m, f);
      s.expert += m.moe->experts * mlp_params(m, f);
    } else {
      s.dense += pc.per_layer;
    }
  }
  out.front().dense += pc.embedding;
  const double vocab_part = static_cast<double>(m.vocab) * m.hidden;
  out.back().dense += (p.pp > 1 || !m.tied_embeddings ? vocab_part : 0.0) + pc.final_norm;
  return out;
}

// Each stage's parameters on one of its GPUs.
std::vector<StageParams> gpu_params_by_stage(const ScenarioConfig& cfg) {
  const ParallelismConfig& p = cfg.parallelism;
  const int tp_eff = cfg.training.attention_parallel == AttentionParallel::kSp ? 1 : p.tp;
  std::vector<StageParams> out;
  for (const StageParams& s : stage_params(cfg)) out.push_back({s.dense / tp_eff, s.expert / (p.ep * p.expert_tp)});
  return out;
}

// Of `stages`, the one with the most parameters.
StageParams most_params(const std::vector<StageParams>& stages) {
  StageParams best;
  for (const StageParams& g : stages) {
    if (g.dense + g.expert > best.dense + best.expert) best = g;
  }
  return best;
}

// The stage with the most parameters on one GPU.
StageParams gpu_params(const ScenarioConfig& cfg) { return most_params(gpu_params_by_stage(cfg)); }

// Data-parallel group sizes: the dense part's replicas (dp, and the tp group too under sp) and
// the experts' (stage GPUs / (ep x expert_tp)).
int dense_dp(const ScenarioConfig& cfg) {
  const int sync = gradient_sync_size(cfg);  // DP x CP
  return cfg.training.attention_parallel == AttentionParallel::kSp ? sync * cfg.parallelism.tp : sync;
}
int expert_dp(const ScenarioConfig& cfg) {
  const ParallelismConfig& p = cfg.parallelism;
  return cfg.cluster.gpus / p.pp / (p.ep * p.expert_tp);
}

}  // namespace

// How many times the mean pairs the busiest expert owner holds: the imbalance of the first MoE
// layer's routing draw (draw 0, as its all-to-all's transfers). An owner's activations grow with
// its pairs in every layer in flight, so the memory check must see the busiest GPU: under zipf or
// `loads` routing the same owner is hot in every layer (the weights do not change with the
// layer), 1.98x on the 352B plan, which the mean hid (17 GiB; 2026-12-05 audit). Under uniform
// routing the hot owner changes from layer to layer and one layer's 1.03x errs on the safe side.
// One draw, not one per layer: a draw per layer made an MoE sweep 50% slower. Over the mean of
// the pairs routed, dropped ones included (the mean the caller multiplies by): the busiest owner's
// kept pairs over the kept mean counted the dropped pairs once more (capacity_factor 1 under zipf
// s = 3 on the Mixtral plan: 2.30x for at most 1x, 32.4 GiB of activations for 16.4; until
// 2026-12-06).
double busiest_owner_load(const ScenarioConfig& cfg) {
  for (int layer = 0; layer < cfg.model.layers; ++layer) {
    if (!is_moe_layer(cfg.model, layer)) continue;
    const RoutingMatrix r = layer_draw(cfg, expert_layout(cfg, stage_of_layer(cfg, layer)), layer, 0);
    const RoutingMatrix::OwnerTotals t = r.owner_totals();
    const double routed = t.kept + r.dropped;
    return routed > 0 ? t.busiest / (routed / r.owners) : 1.0;
  }
  return 1.0;
}

MemoryEstimate moe_memory_per_gpu(const ScenarioConfig& cfg) {
  const ParallelismConfig& p = cfg.parallelism;
  const ModelConfig& m = cfg.model;
  const double ddp = dense_dp(cfg), edp = expert_dp(cfg);
  const int zero = p.zero_stage;
  const double grad_bytes = main_grad_bytes(cfg.training);
  // Each stage's weights, gradients and optimizer state (its activations are added below).
  const std::vector<StageParams> by_stage = gpu_params_by_stage(cfg);
  std::vector<MemoryEstimate> stages;
  for (size_t st = 0; st < by_stage.size(); ++st) {
    const StageParams& g = by_stage[st];
    MemoryEstimate e;
    auto shard = [&](double bytes_per_param, int from_stage) {
      const bool sharded = zero >= from_stage;
      return bytes_of(bytes_per_param * (g.dense / (sharded ? ddp : 1.0) + g.expert / (sharded ? edp : 1.0)));
    };
    e.weights = shard(2.0, 3);
    e.gradients = shard(grad_bytes, 2);
    e.optimizer = shard(12.0, 1);
    // ZeRO-3 gathers per layer what its group shards (and from ZeRO-2 reduce-scatters its
    // gradients so): the largest layer, an MoE one, holds a layer's share of the dense parameters
    // when dense DP > 1 and its experts on this GPU when expert DP > 1 (a group of 1 keeps its
    // parameters whole, nothing to gather). Before 2026-12-05 both shares whenever either group
    // sharded (16 H100s, pp 2, ep 8 over a stage's 8 GPUs, so expert DP 1; 8 layers, h 2048, 8
    // experts top-2: weights 0.697 GiB, gradients 1.099; now 0.510 and 0.912). A layer's share is
    // of this stage's own layers and MoE layers (since 2026-12-07; before, the model's over pp: a
    // stage of a listed layer map, or with dense first layers, holding 1 MoE layer where the mean
    // stage holds 4 counted a quarter of its experts).
    int stage_layers = 0, stage_moe = 0;
    for (int c = 0; c < p.vpp; ++c) stage_layers += virtual_stage_layers(cfg, c * p.pp + static_cast<int>(st)).count;
    for (const int n : moe_layers_per_chunk(cfg, static_cast<int>(st))) stage_moe += n;
    const double gathered = (ddp > 1 ? g.dense / std::max(1, stage_layers) : 0.0) +
                            (edp > 1 && stage_moe > 0 ? g.expert / stage_moe : 0.0);
    if (gathered > 0) add_zero_working_set(e, zero, gathered, grad_bytes);
    stages.push_back(e);
  }

  // Activations: the attention block as the dense model keeps it (MLP width 1), plus per MoE
  // layer the pairs an owner holds (dispatched input h, up projection, activation output, the
  // combine's input h) and shared experts on the GPU's own tokens.
  const ScenarioConfig v = attention_view(cfg);
  ScenarioConfig a = v;
  a.model.ffn_hidden = 1;
  a.model.moe.reset();
  const double attn = activation_bytes_per_layer(a).as_double();
  const double tokens_gpu = tokens_per_gpu(cfg);
  const double f = expert_ffn_hidden(m);
  const double up = (swiglu(m) ? 2.0 : 1.0) * f;
  // Pairs on the busiest owner GPU: the mean (tokens x top_k per GPU of the domain, times the
  // expert-TP slices that each receive all of their experts' pairs) times its load over the mean.
  const double pairs = tokens_gpu * m.moe->top_k * p.expert_tp * busiest_owner_load(cfg);
  const double experts_act = pairs * (2.0 * m.hidden + (up + f) / p.expert_tp) * kAct +
                             tokens_gpu * m.moe->shared_experts * (up + f) * kAct;
  const bool full = cfg.training.recompute == Recompute::kFull;
  const double moe_act = full ? 0.0 : experts_act;  // under full recompute the layer input is in `attn`
  ScenarioConfig dense_layer = v;
  dense_layer.model.moe.reset();
  const double dense_act = activation_bytes_per_layer(dense_layer).as_double();
  // What one micro-batch's forward of each chunk keeps (its MoE and dense layers'), and the most
  // any stage holds at once as its passes run (work::peak_held). Until 2026-12-06 the first
  // stage's in-flight micro-batches at a share of MoE layers (the model's, then its own stage's),
  // and plain 1F1B's later stages apart: an interleaved plan whose first chunks are dense
  // (first_dense_layers) holds more MoE layers on a later stage or chunk.
  std::vector<double> chunk_held(static_cast<size_t>(p.pp) * p.vpp, 0.0);
  for (int layer = 0; layer < m.layers; ++layer) {
    chunk_held[static_cast<size_t>(virtual_stage_of_layer(cfg, layer))] += is_moe_layer(m, layer) ? attn + moe_act : dense_act;
  }
  // Logits of the last stage (16-bit) and their FP32 copy for the loss: b s / cp tokens x vocab /
  // tp per GPU, as head_time splits the vocabulary over the tp group; under sp the same count
  // (s / (cp tp) tokens each, the whole vocabulary). Before 2026-12-05 the sp view's tp of 1 with
  // the plan's cp divided them by nothing: the whole sequence's logits on every GPU (the 352B
  // MegaScale-MoE plan, tp 8 under sp: 29.59 GiB of activations, now 26.96). On the last stage
  // alone (until 2026-12-06 on top of the most loaded stage's layers, as for a dense model).
  const double logits = static_cast<double>(p.micro_batch) * m.seq_len / p.cp * m.vocab / p.tp * (kAct + 4.0);
  const std::vector<double> held =
      work::peak_held_by_rank(chunk_held, p.pp, p.vpp, static_cast<int>(micro_batches_per_iteration(cfg)), logits);
  double recomputed = 0.0;
  if (full) {
    // Recomputing a layer needs its full activations once more, as for a dense model
    // (transformer.cc): an MoE layer's attention block as kept without recomputation, its routed
    // pairs and its shared experts, or a dense layer's, whichever is larger. Before 2026-12-05 the
    // MoE layer counted only its input and the routed pairs (16 H100s, tp 2, pp 2, ep 8; 8 layers,
    // h 2048, 8 experts top-2 and 2 shared: 0.664 GiB of activations, now 0.906).
    auto whole = [](ScenarioConfig c) {
      c.training.recompute = Recompute::kNone;
      return activation_bytes_per_layer(c).as_double();
    };
    recomputed = whole(a) + experts_act;
    if (moe_layer_count(m) < m.layers) recomputed = std::max(recomputed, whole(dense_layer));
  }
  // The most loaded GPU: the stage whose parts add up to the most. Until 2026-12-07 the stage
  // with the most parameters, sharded, beside the most activations of any stage: with
  // first_dense_layers the first stage's wide dense layers could outweigh the next stage's
  // experts before sharding and not after (16 H100s, pp 2, ep 8 so expert DP 1, 4 dense layers
  // of ffn 57,344 then 4 of 192 experts at ZeRO-3: 28.6 GiB where the second stage holds 87).
  MemoryEstimate e;
  Bytes most_optimizer;
  for (size_t s = 0; s < stages.size(); ++s) {
    MemoryEstimate st = stages[s];
    st.activations = bytes_of(held[s] + recomputed);
    most_optimizer = std::max(most_optimizer, st.optimizer);
    if (s == 0 || st.total() > e.total()) e = st;
  }
  e.most_optimizer = most_optimizer;
  // The DP collectives' bytes: the stage with the most parameters (what the time model sends).
  const StageParams g = most_params(by_stage);
  e.params_on_gpu = g.dense + g.expert;
  e.expert_params_on_gpu = g.expert;
  return e;
}

std::optional<StraddlingDomain> straddling_expert_domain(const ScenarioConfig& cfg) {
  const int size = cfg.parallelism.ep * cfg.parallelism.expert_tp;
  const int gpn = cfg.cluster.gpus_per_node;
  if (!cfg.model.moe || size <= 1 || gpn <= 0 || size % gpn == 0 || gpn % size == 0) return std::nullopt;
  const ExpertLayout lay = expert_layout(cfg, 0);
  const int needs = (size + gpn - 1) / gpn;
  for (int k = 0; k < lay.edp; ++k) {
    std::vector<int32_t> gpus;
    for (int j = 0; j < lay.ep; ++j) {
      for (int i = 0; i < lay.etp; ++i) gpus.push_back(lay.gpu(i, j, k));
    }
    const int nodes = static_cast<int>(coll::members_by_node(gpus, gpn).size());
    if (nodes > needs) {
      return StraddlingDomain{*std::min_element(gpus.begin(), gpus.end()), *std::max_element(gpus.begin(), gpus.end()),
                              nodes};
    }
  }
  return std::nullopt;
}

MoeDpTimes moe_dp_times(const ScenarioConfig& cfg, const TrainingLinks& dense_l, const TrainingLinks& expert_l) {
  const ParallelismConfig& p = cfg.parallelism;
  const StageParams g = gpu_params(cfg);
  MoeDpTimes t;
  t.dense_params = g.dense;
  t.expert_params = g.expert;
  const double gb = grad_bytes_per_value(cfg.training);
  // Ranks per node as the placement puts the replicas (stage 0's dense and expert rings, as
  // the flow level builds them): under tp-cp-dp-pp dense replicas sit tp x cp apart (every GPU of
  // the tp group under sp) and expert replicas ep x expert_tp apart; placed DP outermost, one per
  // node.
  const Placement pl(p.placement, p.tp, p.cp, data_parallel_size(cfg), p.pp);
  // Every stage's rings count (fewest_ring_members_per_node).
  const coll::GroupLinks dg = group_links(dense_dp(cfg), dense_dp_ring_members_per_node(cfg, pl), dense_l);
  t.dense_group = dg;
  const coll::GroupLinks eg = group_links(
      expert_dp(cfg), fewest_ring_members_per_node(cfg, [&](int s) { return expert_dp_rings(cfg, s); }), expert_l);
  t.expert_group = eg;
  for (int s = 0; s < p.pp; ++s) {
    const std::vector<int> per_chunk = moe_layers_per_chunk(cfg, s);
    t.expert_chunks = std::max(t.expert_chunks, static_cast<int>(std::count_if(per_chunk.begin(), per_chunk.end(), [](int n) { return n > 0; })));
    t.expert_layers = std::max(t.expert_layers, std::accumulate(per_chunk.begin(), per_chunk.end(), 0));
  }
  const CollectiveOp reduce = p.zero_stage == 0 ? CollectiveOp::kAllReduce : CollectiveOp::kReduceScatter;
  t.reduce_dense = collective_time(reduce, bytes_of(g.dense * gb), dg);
  t.reduce_expert = collective_time(reduce, bytes_of(g.expert * gb), eg);
  t.reduce = t.reduce_dense + t.reduce_expert;
  if (gathers_weights_each_step(p)) {
    const double wb = 2.0;  // 16-bit weights
    t.gather = collective_time(CollectiveOp::kAllGather, bytes_of(g.dense * wb), dg) +
               collective_time(CollectiveOp::kAllGather, bytes_of(g.expert * wb), eg);
  }
  return t;
}

}  // namespace clustersim::work
