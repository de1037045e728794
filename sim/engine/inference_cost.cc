// SPDX-License-Identifier: Apache-2.0
#include "sim/engine/inference_cost.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>
#include <utility>

#include "calibration/compute_cost.h"
#include "sim/core/error.h"
#include "workloads/training_costs.h"
#include "workloads/transformer.h"

namespace clustersim::engine {
namespace {

using coll::CollectiveOp;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Live activation buffers per prompt token in the workspace (input, QKV, attention output, MLP
// intermediate in pieces); an assumption, stated in scenarios/README.md.
constexpr double kWorkspaceBuffers = 8.0;

std::string gib(Bytes b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", b.as_gib());
  return buf;
}

// Length of the union of intervals (sorted by start inside).
Time union_length(std::vector<std::pair<Time, Time>> v) {
  std::sort(v.begin(), v.end());
  Time total = Time::zero();
  Time cur_start = Time::zero(), cur_end = Time::zero();
  bool open = false;
  for (const auto& [s, e] : v) {
    if (e <= s) continue;
    if (!open || s > cur_end) {
      if (open) total += cur_end - cur_start;
      cur_start = s;
      cur_end = e;
      open = true;
    } else {
      cur_end = max(cur_end, e);
    }
  }
  if (open) total += cur_end - cur_start;
  return total;
}

}  // namespace

ServingModel serving_model(const ScenarioConfig& cfg) {
  const ModelConfig& mc = cfg.model;
  ServingModel m;
  m.layers = mc.layers;
  m.hidden = mc.hidden;
  m.heads = mc.heads;
  m.kv_heads = mc.kv_heads > 0 ? mc.kv_heads : mc.heads;
  m.head_dim = static_cast<int>(work::head_dim(mc));  // heads >= 1 and hidden a multiple of it, or head_dim given
  m.ffn_hidden = mc.ffn_hidden > 0 ? mc.ffn_hidden : 4 * mc.hidden;
  m.vocab = mc.vocab;
  m.swiglu = mc.activation == Activation::kSwiglu;
  m.tied_embeddings = mc.tied_embeddings;
  if (cfg.inference) {
    m.moe = cfg.inference->moe;
    m.kv_bytes = cfg.inference->kv_precision == KvPrecision::kFp8 ? 1.0 : 2.0;
    if (cfg.inference->weight_precision == WeightPrecision::kFp8) {
      m.weight_bytes = 1.0;
      m.precision = Precision::kFp8;
    }
  }
  return m;
}

int default_expert_tp(const ServingModel& m, int ep) { return m.is_moe() ? std::max(1, ep / m.moe.experts) : 1; }

double attention_params_per_layer(const ServingModel& m) {
  const double h = m.hidden;
  const double q = static_cast<double>(m.heads) * m.head_dim;
  const double kv = static_cast<double>(m.kv_heads) * m.head_dim;
  return h * q + 2.0 * h * kv + q * h + 2.0 * h;
}

double mlp_params(const ServingModel& m, int width) {
  return static_cast<double>(m.mlp_matrices()) * m.hidden * static_cast<double>(width);
}

double total_params(const ServingModel& m) {
  const double emb = static_cast<double>(m.vocab) * m.hidden * (m.tied_embeddings ? 1.0 : 2.0);
  double layers = m.layers * attention_params_per_layer(m);
  if (m.is_moe()) {
    const double moe_layer = m.moe.experts * mlp_params(m, m.expert_ffn()) +
                             m.moe.shared_experts * mlp_params(m, m.expert_ffn()) +
                             static_cast<double>(m.hidden) * m.moe.experts;
    layers += m.moe_layers() * moe_layer + m.dense_mlp_layers() * mlp_params(m, m.ffn_hidden);
  } else {
    layers += m.layers * mlp_params(m, m.ffn_hidden);
  }
  return emb + layers + m.hidden;
}

Bytes kv_bytes_per_token(const ServingModel& m, int tp) {
  const int64_t heads = ceil_div(m.kv_heads, std::max(1, tp));
  return bytes_of(2.0 * m.layers * static_cast<double>(heads) * m.head_dim * m.kv_bytes);
}

const char* to_string(PoolRole r) {
  switch (r) {
    case PoolRole::kColocated: return "colocated";
    case PoolRole::kPrefill: return "prefill";
    case PoolRole::kDecode: return "decode";
    case PoolRole::kAttention: return "attention";
    case PoolRole::kExpert: return "expert";
  }
  return "?";
}

namespace {

// Appends `op` over every group of `size` consecutive GPUs of pool `p`.
void pool_group_flows(const PoolPlan& p, int size, CollectiveOp op, Bytes bytes, int gpus_per_node,
                      std::vector<coll::FlowSpec>& out) {
  std::vector<int32_t> group(static_cast<size_t>(size));
  for (int g = 0; g + size <= p.gpus; g += size) {
    for (int i = 0; i < size; ++i) group[static_cast<size_t>(i)] = p.first_gpu + g + i;
    coll::collective_flows(op, coll::Algorithm::kRing, bytes, group, gpus_per_node, out);
  }
}

// The fewest GPUs that one group of `size` consecutive GPUs of pool `p` has on one node.
int fewest_per_node(const PoolPlan& p, int size, int gpus_per_node) {
  int fewest = std::max(1, std::min(size, gpus_per_node));
  std::vector<int32_t> group(static_cast<size_t>(std::max(size, 0)));
  for (int g = 0; size > 1 && g + size <= p.gpus; g += size) {
    for (int i = 0; i < size; ++i) group[static_cast<size_t>(i)] = p.first_gpu + g + i;
    fewest = std::min(fewest, coll::fewest_members_per_node(group, gpus_per_node));
  }
  return fewest;
}

}  // namespace

std::vector<coll::FlowSpec> pool_tp_flows(const PoolPlan& p, Bytes size, int gpus_per_node) {
  std::vector<coll::FlowSpec> out;
  if (p.tp > 1) pool_group_flows(p, p.tp, CollectiveOp::kAllReduce, size, gpus_per_node, out);
  return out;
}

std::vector<coll::FlowSpec> pool_ep_flows(const PoolPlan& p, Bytes size, const ServingLinks& l) {
  std::vector<coll::FlowSpec> out;
  // The attention pool has no experts; the expert pool's tokens come by M2N, not an all-to-all.
  if (p.role == PoolRole::kAttention || p.role == PoolRole::kExpert || p.ep <= 1) return out;
  pool_group_flows(p, p.ep, CollectiveOp::kAllToAll, size, l.gpus_per_node, out);
  // PXN relays only through the sender's own instance (a pool can start in the middle of a node,
  // beside another pool's GPUs).
  const auto instance = [&p](int32_t gpu) { return gpu < p.first_gpu || gpu >= p.first_gpu + p.gpus ? -1 : (gpu - p.first_gpu) / p.ep; };
  if (l.pxn) {
    coll::route_through_pxn(out, l.gpus_per_node, l.nics_per_node,
                            [&instance](int32_t src, int32_t gpu) { return instance(gpu) >= 0 && instance(gpu) == instance(src); });
  }
  return out;
}

std::vector<coll::FlowSpec> m2n_exchange_flows(const PoolPlan& a, const PoolPlan& e, const ServingModel& m,
                                               int64_t tokens, int gpus_per_node) {
  std::vector<coll::FlowSpec> out;
  const int64_t pairs = int64_t{a.gpus} * e.gpus;
  if (pairs <= 0) return out;
  const int groups = e.gpus / e.tp;
  const Bytes up{m2n_bytes(m, tokens, groups, e.tp).n / pairs};
  const Bytes down{n2m_bytes(m, tokens, groups).n / pairs};
  out.reserve(static_cast<size_t>(2 * pairs));
  for (int i = 0; i < a.gpus; ++i) {
    for (int j = 0; j < e.gpus; ++j) {
      const int32_t ag = a.first_gpu + i, eg = e.first_gpu + j;
      const bool inter = ag / gpus_per_node != eg / gpus_per_node;
      out.push_back({ag, eg, up, inter});
      out.push_back({eg, ag, down, inter});
    }
  }
  return out;
}

double serving_fabric_slowdown(const ScenarioConfig& cfg, std::span<const coll::FlowSpec> flows) {
  if (std::none_of(flows.begin(), flows.end(), [](const coll::FlowSpec& f) { return f.inter_node; })) return 1.0;
  try {
    return work::fabric_slowdown(cfg, flows);
  } catch (const BadInput&) {
    // A fabric the planner cannot build: every tier's ratio and the slower of NIC and fabric link.
    const ClusterConfig& c = cfg.cluster;
    const NetworkConfig& n = cfg.network;
    const Bandwidth fabric = n.fabric_bandwidth.value_or(c.nic_bandwidth);
    const double oversub = n.tor_oversubscription * (n.tiers == 3 ? n.agg_oversubscription : 1.0);
    return oversub * std::max(1.0, c.nic_bandwidth.bytes_per_s / fabric.bytes_per_s);
  }
}

ServingLinks serving_links(const ScenarioConfig& cfg, const PoolPlan& p) {
  const ClusterConfig& c = cfg.cluster;
  const NetworkConfig& n = cfg.network;
  ServingLinks l;
  l.nvlink_busbw = p.hw.eff.nvlink_busbw * n.nvlink_bandwidth.value_or(p.hw.nvlink_bandwidth);
  const double share = static_cast<double>(c.nics_per_node) / c.gpus_per_node;
  l.nic_per_gpu = Bandwidth{c.nic_bandwidth.bytes_per_s * share * p.hw.eff.network_busbw};
  l.gpus_per_node = c.gpus_per_node;
  l.nics_per_node = c.nics_per_node;
  l.pxn = n.pxn;
  l.nic_line_rate = c.nic_bandwidth;
  const Bytes unit{1 << 20};
  l.tp_slowdown = serving_fabric_slowdown(cfg, pool_tp_flows(p, unit, c.gpus_per_node));
  l.ep_slowdown = serving_fabric_slowdown(cfg, pool_ep_flows(p, unit, l));
  l.tp_ranks_per_node = fewest_per_node(p, p.tp, c.gpus_per_node);
  l.ep_ranks_per_node = fewest_per_node(p, p.ep, c.gpus_per_node);
  l.nvlink_alpha = p.hw.eff.nvlink_collective_latency;
  l.net_alpha = p.hw.eff.network_collective_latency;
  return l;
}

namespace {

coll::GroupLinks serving_group(int ranks, const ServingLinks& l, double slowdown, int placed_per_node) {
  coll::GroupLinks g;
  g.ranks = ranks;
  g.ranks_per_node = std::max(1, std::min({ranks, l.gpus_per_node, placed_per_node > 0 ? placed_per_node : ranks}));
  g.intra_busbw = l.nvlink_busbw;
  g.nic_per_gpu = Bandwidth{l.nic_per_gpu.bytes_per_s / std::max(1.0, slowdown)};
  g.intra_alpha = l.nvlink_alpha;
  g.inter_alpha = l.net_alpha;
  return g;
}

}  // namespace

coll::GroupLinks group_links(int ranks, const ServingLinks& l) {
  return serving_group(ranks, l, l.tp_slowdown, l.tp_ranks_per_node);
}

coll::GroupLinks group_links_ep(int ranks, const ServingLinks& l) {
  return serving_group(ranks, l, l.ep_slowdown, l.ep_ranks_per_node);
}

void size_pool_memory(const ServingModel& m, const InferenceConfig& in, const std::string& key, PoolPlan& p) {
  const double w = m.weight_bytes;
  double params = 0;     // at w bytes each
  double unquantised = 0;  // embeddings, LM head and routers: bf16 whatever the weight precision
  const double embed = static_cast<double>(m.vocab) * m.hidden * (m.tied_embeddings ? 1.0 : 2.0);
  const double routers = m.moe_layers() * static_cast<double>(m.hidden) * m.moe.experts;
  const double experts_all = m.moe.experts * mlp_params(m, m.expert_ffn());
  const double shared = m.moe.shared_experts * mlp_params(m, m.expert_ffn());
  switch (p.role) {
    case PoolRole::kColocated:
    case PoolRole::kPrefill:
    case PoolRole::kDecode:
      // Attention, embeddings, dense MLPs, shared experts and router: TP-sharded per replica.
      params = m.layers * attention_params_per_layer(m) / p.tp;
      unquantised = embed / p.tp + routers;
      if (m.is_moe()) {
        params += m.dense_mlp_layers() * mlp_params(m, m.ffn_hidden) / p.tp;
        params += m.moe_layers() * shared / p.ep;
        params += m.moe_layers() * experts_all / p.ep;
      } else {
        params += m.layers * mlp_params(m, m.ffn_hidden) / p.tp;
      }
      break;
    case PoolRole::kAttention:
      params = m.layers * attention_params_per_layer(m) / p.tp + m.dense_mlp_layers() * mlp_params(m, m.ffn_hidden) / p.tp +
               m.moe_layers() * shared / p.tp;
      unquantised = embed / p.tp + routers;
      break;
    case PoolRole::kExpert:
      params = m.moe_layers() * experts_all / p.gpus;
      break;
  }
  p.weights_per_gpu = bytes_of(params * w + unquantised * ServingModel::kBf16Bytes);
  const Bytes usable = p.hw.hbm_capacity - p.hw.memory_reserved;
  const Bytes workspace = p.role == PoolRole::kExpert
                              ? Bytes{0}
                              : bytes_of(static_cast<double>(in.max_prefill_tokens) * m.hidden * 2.0 * kWorkspaceBuffers);
  const Bytes free = usable - p.weights_per_gpu - workspace;
  if (free.n <= 0) {
    // The workspace is per GPU, whatever tp: where it outweighs the weights, more GPUs do not
    // help much (the message said they would until 2026-12-07, QA: 122 GiB of workspace).
    const bool workspace_bound = workspace.as_double() >= p.weights_per_gpu.as_double();
    const std::string remedy =
        workspace_bound ? "lower inference.max_prefill_tokens (" + std::to_string(in.max_prefill_tokens) +
                              ": the workspace holds that many tokens' activations on every GPU, whatever tp)"
                        : "spread the model over more GPUs (" +
                              (p.role == PoolRole::kExpert ? std::string("gpus") : std::string("tp / ep")) + ")";
    throw BadInput(InputError{"", 0, key,
                              "the pool is too small for the model: " + gib(p.weights_per_gpu) +
                                  " of weights per GPU plus " + gib(workspace) + " of activation workspace, but one " +
                                  p.hw.name + " has " + gib(usable) + " usable; " + remedy});
  }
  if (p.role == PoolRole::kExpert) return;
  p.kv_budget_per_gpu = bytes_of(free.as_double() * in.kv_cache_fraction);
  if (in.kv_cache_per_gpu) {
    if (*in.kv_cache_per_gpu > free) {
      throw BadInput(InputError{"", 0, "inference.kv_cache_per_gpu",
                                "asks for " + gib(*in.kv_cache_per_gpu) + " per GPU but the " +
                                    std::string(to_string(p.role)) + " pool has " + gib(free) +
                                    " left after weights and workspace"});
    }
    p.kv_budget_per_gpu = *in.kv_cache_per_gpu;
  }
  const Bytes per_token = kv_bytes_per_token(m, p.tp);
  p.kv_tokens_per_replica = p.kv_budget_per_gpu.n / std::max<int64_t>(1, per_token.n);
  // The longest request a replica holds: the longest draw (a fixed length's mean, else its max;
  // an exponential without max is refused unless a trace replaces the draws); a prefill replica
  // holds the prompt only, as the simulation reserves.
  const int64_t longest = [&] {
    const auto top = [](const LengthConfig& l) -> int64_t { return l.dist == LengthDist::kFixed ? l.mean : l.max; };
    return top(in.prompt) + (p.role == PoolRole::kPrefill ? 0 : top(in.output));
  }();
  // A trace's requests are checked one by one (rejected when too long); a cache without room
  // for a single token serves none of them.
  const int64_t need = in.trace.empty() ? longest : 1;
  if (p.kv_tokens_per_replica < need) {
    const std::string remedy =
        in.kv_cache_per_gpu ? "raise inference.kv_cache_per_gpu (" + to_string(*in.kv_cache_per_gpu) + " per GPU), give"
        : in.kv_cache_fraction < 1.0
            ? "raise inference.kv_cache_fraction (" + format_number(in.kv_cache_fraction) + " of the memory left), give"
            : "give";
    const std::string needs = in.trace.empty() ? " tokens per replica but one request can need " + std::to_string(need)
                                               : " tokens per replica: no request of the trace fits";
    throw BadInput(InputError{"", 0, key,
                              "the KV cache holds " + std::to_string(p.kv_tokens_per_replica) + needs + "; " + remedy +
                                  " the pool more memory per replica (tp) or shorten the requests"});
  }
}

void StepLoad::add_decode(int64_t context) {
  ++decode_seqs;
  decode_context += static_cast<double>(context);
  longest_context = std::max(longest_context, context);
}

void StepLoad::add_prefill(int64_t prompt) { add_prefill_chunk(0, prompt); }

void StepLoad::add_prefill_chunk(int64_t done, int64_t chunk) {
  ++prefill_seqs;
  prefill_tokens += chunk;
  const double pairs = static_cast<double>(chunk) * static_cast<double>(done) +
                       0.5 * static_cast<double>(chunk) * static_cast<double>(chunk);
  prefill_pairs += pairs;
  longest_prompt = std::max(longest_prompt, chunk);
  largest_pairs = std::max(largest_pairs, pairs);
}

StepLoad StepLoad::share(int replicas) const {
  StepLoad r;
  r.decode_seqs = ceil_div(decode_seqs, replicas);
  r.prefill_seqs = ceil_div(prefill_seqs, replicas);
  // Its ceil(n / replicas) requests of the mean size, and never less than the largest one.
  const auto busiest = [](double sum, int64_t n, int64_t on_it) {
    if (on_it >= n) return sum;  // one replica (or one request each): exact, no rounding
    return n > 0 ? sum / static_cast<double>(n) * static_cast<double>(on_it) : 0.0;
  };
  r.decode_context = std::max(busiest(decode_context, decode_seqs, r.decode_seqs), static_cast<double>(longest_context));
  r.prefill_tokens = std::max(static_cast<int64_t>(std::ceil(busiest(static_cast<double>(prefill_tokens), prefill_seqs,
                                                                     r.prefill_seqs))),
                              longest_prompt);
  r.prefill_pairs = std::max(busiest(prefill_pairs, prefill_seqs, r.prefill_seqs), largest_pairs);
  r.longest_prompt = longest_prompt;
  r.largest_pairs = largest_pairs;
  r.longest_context = longest_context;
  return r;
}

Time split_k_gemm_time(int64_t m, int64_t n, int64_t k, Precision p, const calib::HardwareProfile& hw, int64_t count) {
  if (m <= 0 || n <= 0 || k <= 0 || count <= 0) return Time::zero();
  const calib::Efficiencies& e = hw.eff;
  const int64_t sms = std::max(1, hw.sm_count);
  // A skinny GEMM (decode: a few rows per step) runs a kernel whose tiles are only as tall as its
  // rows, rounded up to 16 (the tensor cores' MMA row count), not the fitted tile of a large GEMM,
  // and slices K down to 128 deep so that its few tiles fill the SMs (split-K / stream-K). With
  // the large GEMM's 128-row tile and 512-deep slices, one decode row of a TP-8 projection
  // (1 x 6,144 x 768) took 16 us against 7 us to read its weights, and more TP made attention
  // slower (assumption, 2026-12-04: cuBLAS picks such kernels for skinny shapes; probe data for
  // m < 128 would fit it).
  // Past one tile, the fitted tile's height: one row more then steps where padding and waves both
  // bind (an H800 expert's 129 tokens take 1.46x the compute of 128), as measured GEMMs step.
  // Shorter tiles (the best of 64, 128, ... or rows split evenly in blocks of 16) smooth those
  // steps, and were tried on 2026-12-06: the TensorRT-LLM serving suite, whose decode GEMMs run
  // past one tile, read 6.92% and 6.51% (worst +35% and +44%) against 6.44% (worst +35%) as here.
  const int64_t tile_m = std::min<int64_t>(e.gemm_tile_m, std::max<int64_t>(16, ceil_div(m, 16) * 16));
  const int64_t tiles = ceil_div(m, tile_m) * ceil_div(n, e.gemm_tile_n) * count;
  // Slices of K so that the tiles fill the SMs.
  const int64_t split = std::clamp<int64_t>(sms / std::max<int64_t>(1, tiles), 1, std::max<int64_t>(1, k / 128));
  const int64_t ks = ceil_div(k, split);
  const int64_t all = tiles * split;
  const int64_t waves = ceil_div(all, sms);
  const double wave = static_cast<double>(all) / static_cast<double>(waves * sms);
  const double tile = (static_cast<double>(m) * static_cast<double>(n)) /
                      (static_cast<double>(ceil_div(m, tile_m) * tile_m) *
                       static_cast<double>(ceil_div(n, e.gemm_tile_n) * e.gemm_tile_n));
  const double inner = static_cast<double>(ks) / static_cast<double>(ks + e.gemm_k_half);
  const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) *
                       static_cast<double>(count);
  return e.kernel_launch + Time::s(flops / (hw.peak(p).per_s * calib::gemm_efficiency(p, hw) * wave * tile * inner));
}

Time gemm_roofline(int64_t m, int64_t n, int64_t k, double w, Precision p, const calib::HardwareProfile& hw,
                   int64_t count) {
  if (m <= 0 || n <= 0 || k <= 0 || count <= 0) return Time::zero();
  const Time compute = min(calib::gemm_time(m, n, k, p, hw, count), split_k_gemm_time(m, n, k, p, hw, count));
  const double bytes = (w * (static_cast<double>(n) * k + static_cast<double>(m) * k) +
                        ServingModel::kBf16Bytes * static_cast<double>(m) * n) *
                       static_cast<double>(count);
  return max(compute, calib::memory_time(bytes_of(bytes), hw));
}

Time attention_layer_time(const ServingModel& m, const calib::HardwareProfile& hw, const StepLoad& load, int tp) {
  const int64_t tokens = load.tokens();
  if (tokens <= 0) return Time::zero();
  const double w = m.weight_bytes;
  const int64_t d = m.head_dim;
  const int64_t q_heads = m.heads / tp;
  const int64_t kv_heads = ceil_div(m.kv_heads, tp);
  Time t = gemm_roofline(tokens, (q_heads + 2 * kv_heads) * d, m.hidden, w, m.precision, hw);
  t += gemm_roofline(tokens, m.hidden, q_heads * d, w, m.precision, hw);
  if (load.decode_seqs > 0) {
    // FlashDecoding-style kernel: every cached token's K and V read once per step.
    const double flops = 4.0 * load.decode_context * static_cast<double>(q_heads * d);
    const double bytes = load.decode_context * 2.0 * static_cast<double>(kv_heads * d) * m.kv_bytes;
    const Time compute = calib::attention_time(Flops{flops}, calib::AttentionKernel::kFlash2, Precision::kBf16, hw);
    t += max(compute, calib::memory_time(bytes_of(bytes), hw));
  }
  if (load.prefill_tokens > 0) {
    const double flops = 4.0 * load.prefill_pairs * static_cast<double>(q_heads * d);
    t += calib::attention_time(Flops{flops}, calib::AttentionKernel::kFlash2, Precision::kBf16, hw);
  }
  t += calib::memory_time(bytes_of(8.0 * static_cast<double>(tokens) * m.hidden * ServingModel::kBf16Bytes), hw);
  return t;
}

Time dense_mlp_time(const ServingModel& m, const calib::HardwareProfile& hw, int64_t tokens, int width, int shards) {
  if (tokens <= 0 || width <= 0) return Time::zero();
  const int64_t f = ceil_div(width, shards);
  const int64_t up = m.swiglu ? 2 * f : f;
  // The activation kernel between the projections as expert_layer_time's and the training
  // model's (left out until 2026-12-07: a 2,048-token prefill chunk of Llama 3.3 70B at tp 1 read
  // 352 MB fewer a layer, about 5% of its MLP).
  const Bytes act = work::activation_kernel_bytes(static_cast<double>(tokens), static_cast<double>(up),
                                                  static_cast<double>(f), ServingModel::kBf16Bytes);
  return gemm_roofline(tokens, up, m.hidden, m.weight_bytes, m.precision, hw) + calib::memory_time(act, hw) +
         gemm_roofline(tokens, m.hidden, f, m.weight_bytes, m.precision, hw);
}

Time expert_layer_time(const ServingModel& m, const calib::HardwareProfile& hw, int64_t tokens, int groups, int etp) {
  if (tokens <= 0 || !m.is_moe()) return Time::zero();
  const int experts = m.moe.experts;
  const int k = m.moe.top_k;
  const double local = static_cast<double>(experts) / groups;  // experts per GPU group
  const double hit = 1.0 - std::pow(1.0 - static_cast<double>(k) / experts, static_cast<double>(tokens));
  const double active = std::max(1.0, local * hit);
  // The busiest group holds the busiest expert (load_imbalance x the mean) beside local - 1 at the
  // mean; until 2026-12-05 every one of its experts was charged the busiest's load, so a GPU
  // holding a slice of every expert (expert_tp = ep) paid the imbalance it cannot have.
  const double per_expert =
      static_cast<double>(tokens) * k / experts * (local - 1.0 + m.moe.load_imbalance) / active;
  const int64_t t_e = std::max<int64_t>(1, std::llround(std::ceil(per_expert)));
  const int64_t count = std::max<int64_t>(1, std::llround(std::ceil(active)));
  const int64_t f = ceil_div(m.expert_ffn(), etp);
  const int64_t up = m.swiglu ? 2 * f : f;
  // One grouped GEMM per projection over the experts hit (one launch each), and the activation
  // kernel between them: read the up projection (bf16), write its f-wide output, as the training
  // model prices it (workloads/moe.cc, owner_expert_time).
  const double pairs = static_cast<double>(t_e) * static_cast<double>(count);
  const Bytes act = work::activation_kernel_bytes(pairs, static_cast<double>(up), static_cast<double>(f),
                                                  ServingModel::kBf16Bytes);
  return gemm_roofline(t_e, up, m.hidden, m.weight_bytes, m.precision, hw, count) + calib::memory_time(act, hw) +
         gemm_roofline(t_e, m.hidden, f, m.weight_bytes, m.precision, hw, count);
}

Time permute_time(const ServingModel& m, const calib::HardwareProfile& hw, int64_t tokens) {
  if (tokens <= 0 || !m.is_moe()) return Time::zero();
  const double pairs = static_cast<double>(tokens) * m.moe.top_k;
  return calib::memory_time(bytes_of(2.0 * 2.0 * pairs * m.hidden * ServingModel::kBf16Bytes), hw);
}

Time lm_head_time(const ServingModel& m, const calib::HardwareProfile& hw, int64_t seqs, int tp) {
  return gemm_roofline(seqs, ceil_div(m.vocab, tp), m.hidden, ServingModel::kBf16Bytes, Precision::kBf16, hw);
}

StepLoad busiest_replica(const ServingModel& m, const PoolPlan& p, std::span<const StepLoad> replicas) {
  StepLoad out;
  Time worst = Time::zero();
  for (const StepLoad& r : replicas) {
    if (r.tokens() <= 0) continue;
    const Time t = attention_layer_time(m, p.hw, r, p.tp);
    if (out.tokens() == 0 || t > worst) {
      worst = t;
      out = r;
    }
  }
  return out;
}

StepTiming colocated_step(const ServingModel& m, const PoolPlan& p, const ServingLinks& l, const StepLoad& load) {
  return colocated_step(m, p, l, load, load.share(p.attention_replicas));
}

StepTiming colocated_step(const ServingModel& m, const PoolPlan& p, const ServingLinks& l, const StepLoad& load,
                          const StepLoad& r) {
  StepTiming s;
  if (load.tokens() <= 0) return s;
  const double w = ServingModel::kBf16Bytes;  // hidden states on the wire
  const Time attn = attention_layer_time(m, p.hw, r, p.tp);
  const Time tp_ar = coll::collective_time(CollectiveOp::kAllReduce,
                                           bytes_of(static_cast<double>(r.tokens()) * m.hidden * w),
                                           group_links(p.tp, l));
  Time attention_sum = m.layers * attn + lm_head_time(m, p.hw, r.seqs(), p.tp);
  Time ffn_sum = Time::zero();
  Time comm_sum = m.layers * tp_ar;  // after attention
  if (!m.is_moe()) {
    ffn_sum = m.layers * dense_mlp_time(m, p.hw, r.tokens(), m.ffn_hidden, p.tp);
    comm_sum += m.layers * tp_ar;    // after the MLP
  } else {
    const int dense = m.dense_mlp_layers();
    ffn_sum += dense * dense_mlp_time(m, p.hw, r.tokens(), m.ffn_hidden, p.tp);
    comm_sum += dense * tp_ar;
    const int64_t tokens = load.tokens();  // every token of the instance meets the experts
    const int etp = p.expert_tp;
    const int groups = p.ep / etp;
    const bool gathered = m.moe.dispatch == MoeDispatch::kAllGather;
    const int64_t per_gpu = ceil_div(tokens, p.ep);  // the tokens each GPU routes
    // The permutation sorts the pairs of each GPU's group's experts by expert on every GPU of the
    // group (each GPU of an expert's etp runs all of them, on its slice), after the all-gather or
    // as the tokens arrive once per GPU by the all-to-all; with one expert group a GPU
    // (expert_tp 1) those are the pairs of its own share of the tokens. (Until 2026-12-05 an
    // all-to-all sorted only the GPU's own tokens' pairs, whatever expert_tp.)
    const int64_t sorted = ceil_div(tokens, groups);
    Time moe = expert_layer_time(m, p.hw, tokens, groups, etp) +
               gemm_roofline(r.tokens(), m.moe.experts, m.hidden, ServingModel::kBf16Bytes, Precision::kBf16,
                            p.hw) +  // router
               permute_time(m, p.hw, sorted);
    if (m.moe.shared_experts > 0) {
      moe += dense_mlp_time(m, p.hw, tokens, m.moe.shared_experts * m.expert_ffn(), p.ep);
    }
    ffn_sum += m.moe_layers() * moe;
    // Dispatch and combine: each GPU sends its share of the tokens to top_k experts. The dispatch
    // carries the expert GEMMs' input precision (fp8 weights: quantised before it is sent, as
    // TensorRT-LLM's fused MoE and DeepEP's fp8 dispatch do), the combine the bf16 outputs.
    // An all-gather instead sends every token to every GPU of the instance (whatever top_k) and
    // returns the outputs by a reduce-scatter of the whole instance's tokens (TensorRT-LLM's
    // fused MoE where it has no all-to-all: tensorrt_llm/_torch/modules/fused_moe, 2025).
    const coll::GroupLinks ep_links = group_links_ep(p.ep, l);
    Time exchange;
    if (gathered) {
      // Its reduce-scatter also sums the partial outputs of an expert's etp GPUs.
      const double values = static_cast<double>(per_gpu) * p.ep * m.hidden;
      exchange = coll::collective_time(CollectiveOp::kAllGather, bytes_of(values * m.weight_bytes), ep_links) +
                 coll::collective_time(CollectiveOp::kReduceScatter, bytes_of(values * w), ep_links);
    } else {
      // Each token goes once to every GPU of its experts' groups (etp GPUs each), and each
      // returns its 1 / etp of the group's summed output: the M2N's and N2M's bytes for this
      // GPU's tokens.
      // The busiest group's GPUs receive the dispatch and send the combine busiest_group_skew
      // times the mean: their NICs pace both all-to-alls (until 2026-12-06 charged at the mean).
      // The busiest replica's GPUs send the dispatch and receive the combine for its tokens, a
      // 1 / tp share each: where the replicas' loads differ (a long prompt on one of them), they
      // pace the all-to-alls where the busiest group does not (until 2026-12-07 every GPU was
      // charged the mean: one 3,000-token prompt on one of 8 replicas, its GPU sending the
      // whole prompt, was charged an eighth of it, TTFT 21% short). The replica is the one with
      // the longest attention (busiest_replica), which holds the most tokens but where a few
      // long contexts outweigh many short ones.
      const double skew = busiest_group_skew(m, groups);
      const int64_t busiest_sender = std::max(per_gpu, ceil_div(r.tokens(), p.tp));
      const double m2n = std::max(skew * m2n_bytes(m, per_gpu, groups, etp).as_double(),
                                  m2n_bytes(m, busiest_sender, groups, etp).as_double());
      const double n2m = std::max(skew * n2m_bytes(m, per_gpu, groups).as_double(),
                                  n2m_bytes(m, busiest_sender, groups).as_double());
      exchange = coll::collective_time(CollectiveOp::kAllToAll, bytes_of(m2n), ep_links) +
                 coll::collective_time(CollectiveOp::kAllToAll, bytes_of(n2m), ep_links);
      if (etp > 1) {
        // The etp GPUs reduce-scatter their partial outputs, one per token the group holds
        // experts of, before the combine (an all-reduce until 2026-12-05; top_k per token until
        // then too).
        exchange += coll::collective_time(CollectiveOp::kReduceScatter,
                                          bytes_of(busiest_group_tokens(m, tokens, groups) * m.hidden * w),
                                          group_links_ep(etp, l));
      }
    }
    comm_sum += m.moe_layers() * exchange;
  }
  s.attention = attention_sum;
  s.ffn = ffn_sum;
  s.communication = comm_sum;
  s.total = attention_sum + ffn_sum + comm_sum;
  s.attention_busy = attention_sum;
  s.ffn_busy = ffn_sum;
  return s;
}

double expert_groups_hit(int experts, int groups, int top_k) {
  assert(experts > 0 && groups > 0 && experts % groups == 0 && top_k > 0 && top_k <= experts &&
         "experts spread evenly over the groups, top_k of them per token");
  // C(E - E/G, k) / C(E, k) = prod over i < k of (E - E/G - i) / (E - i); 0 once a factor is.
  const int others = experts - experts / groups;
  double miss = 1.0;
  for (int i = 0; i < top_k && miss > 0.0; ++i) {
    miss *= static_cast<double>(std::max(0, others - i)) / (experts - i);
  }
  return groups * (1.0 - miss);
}

Bytes m2n_bytes(const ServingModel& m, int64_t tokens, int groups, int etp) {
  const double hit = expert_groups_hit(m.moe.experts, groups, m.moe.top_k);
  return bytes_of(static_cast<double>(tokens) * hit * etp * m.hidden * m.weight_bytes);
}

Bytes n2m_bytes(const ServingModel& m, int64_t tokens, int groups) {
  const double hit = expert_groups_hit(m.moe.experts, groups, m.moe.top_k);
  return bytes_of(static_cast<double>(tokens) * hit * m.hidden * ServingModel::kBf16Bytes);
}

double busiest_group_skew(const ServingModel& m, int groups) {
  if (!m.is_moe() || groups <= 1) return 1.0;
  const double local = static_cast<double>(m.moe.experts) / groups;
  const double skew = (local - 1.0 + m.moe.load_imbalance) / local;
  return std::clamp(skew, 1.0, groups / expert_groups_hit(m.moe.experts, groups, m.moe.top_k));
}

double busiest_group_tokens(const ServingModel& m, int64_t tokens, int groups) {
  return static_cast<double>(tokens) * expert_groups_hit(m.moe.experts, groups, m.moe.top_k) / groups *
         busiest_group_skew(m, groups);
}

Time exchange_time(Bytes total, int senders, int receivers, const ServingLinks& send, const ServingLinks& recv,
                   double contention, double send_skew, double recv_skew) {
  assert(senders > 0 && receivers > 0 && "an exchange needs GPUs on both sides");
  if (total.n <= 0) return Time::zero();
  const double bytes = total.as_double();
  const Time out = Time::s(send_skew * bytes / senders / send.nic_per_gpu.bytes_per_s);
  const Time in = Time::s(recv_skew * bytes / receivers / recv.nic_per_gpu.bytes_per_s);
  return send.net_alpha + contention * max(out, in);
}

const char* to_string(StepPart p) {
  switch (p) {
    case StepPart::kAttention: return "attention";
    case StepPart::kFfn: return "ffn";
    case StepPart::kM2n: return "m2n";
    case StepPart::kN2m: return "n2m";
    case StepPart::kCommunication: return "communication";
  }
  return "?";
}

StepTiming ping_pong_step(const PingPongCosts& c, std::vector<StepSpan>* spans) {
  const size_t mb = c.attention.size();
  assert(mb >= 1 && "a step has at least one micro-batch");
  std::vector<std::pair<Time, Time>> attn, ffn, comm;
  std::vector<Time> ready(mb, Time::zero());
  Time attn_free = Time::zero(), ffn_free = Time::zero(), up_free = Time::zero(), down_free = Time::zero();
  int layer = 0;
  auto run = [&](Time& free, Time ready_at, Time dur, std::vector<std::pair<Time, Time>>& log, StepPart part,
                 size_t i) {
    const Time start = max(free, ready_at);
    free = start + dur;
    if (dur > Time::zero()) {
      log.emplace_back(start, free);
      if (spans) spans->push_back({part, static_cast<int>(i), layer, start, free});
    }
    return free;
  };
  const int layers = c.layers > 0 ? c.layers : c.dense_layers + c.moe_layers;
  for (layer = 0; layer < layers; ++layer) {
    // Dense layers lead (DeepSeekMoE layout), then every moe_layer_frequency-th is MoE (Llama 4).
    const bool moe = layer >= c.dense_layers && (layer - c.dense_layers) % c.moe_layer_frequency == 0;
    for (size_t i = 0; i < mb; ++i) {
      if (!moe) {
        ready[i] = run(attn_free, ready[i], c.dense[i], attn, StepPart::kAttention, i);
        continue;
      }
      const Time a = run(attn_free, ready[i], c.attention[i], attn, StepPart::kAttention, i);
      const Time up = run(up_free, a, c.m2n[i], comm, StepPart::kM2n, i);
      const Time f = run(ffn_free, up, c.ffn[i], ffn, StepPart::kFfn, i);
      ready[i] = run(down_free, f, c.n2m[i], comm, StepPart::kN2m, i);
    }
  }
  layer = -1;  // the LM head
  Time end = Time::zero();
  for (size_t i = 0; i < mb; ++i) end = max(end, run(attn_free, ready[i], c.head[i], attn, StepPart::kAttention, i));
  StepTiming s;
  s.total = end;
  s.attention_busy = union_length(attn);
  s.ffn_busy = union_length(ffn);
  std::vector<std::pair<Time, Time>> af = attn;
  af.insert(af.end(), ffn.begin(), ffn.end());
  const Time u_af = union_length(af);
  af.insert(af.end(), comm.begin(), comm.end());
  const Time u_all = union_length(af);
  s.attention = s.attention_busy;
  s.ffn = u_af - s.attention_busy;
  s.communication = u_all - u_af;
  s.idle = end - u_all;
  return s;
}

PingPongCosts afd_costs(const ServingModel& m, const AfdPlan& plan, const ServingLinks& al,
                        const ServingLinks& el, const std::vector<StepLoad>& micro,
                        std::span<const StepLoad> replica_loads) {
  const PoolPlan& a = *plan.attention;
  const PoolPlan& e = *plan.expert;
  PingPongCosts c;
  c.dense_layers = m.moe.dense_layers;
  c.moe_layers = m.moe_layers();
  c.moe_layer_frequency = m.moe.moe_layer_frequency;
  c.layers = m.layers;
  const int replicas = a.attention_replicas;
  const int groups = e.gpus / e.tp;
  const double w = ServingModel::kBf16Bytes;  // hidden states on the wire
  for (size_t i = 0; i < micro.size(); ++i) {
    const StepLoad& load = micro[i];
    const StepLoad r = i < replica_loads.size() ? replica_loads[i] : load.share(replicas);
    const Time tp_ar = coll::collective_time(CollectiveOp::kAllReduce,
                                             bytes_of(static_cast<double>(r.tokens()) * m.hidden * w),
                                             group_links(a.tp, al));
    const Time attn = attention_layer_time(m, a.hw, r, a.tp) + tp_ar;
    // The N2M returns each token's output to one rank of its attention replica; every rank of the
    // TP group needs the whole hidden state for the next layer, so the group all-gathers it over
    // NVLink (not charged until 2026-12-06, where the dispatch side charged its expert-TP copies).
    const Time n2m_gather = a.tp > 1 ? coll::collective_time(CollectiveOp::kAllGather,
                                                             bytes_of(static_cast<double>(r.tokens()) * m.hidden * w),
                                                             group_links(a.tp, al))
                                     : Time::zero();
    Time moe_attn = attn + n2m_gather +
                    gemm_roofline(r.tokens(), m.moe.experts, m.hidden, ServingModel::kBf16Bytes, Precision::kBf16,
                                  a.hw) +  // router
                    permute_time(m, a.hw, ceil_div(r.tokens(), a.tp));
    if (m.moe.shared_experts > 0) {
      moe_attn += dense_mlp_time(m, a.hw, r.tokens(), m.moe.shared_experts * m.expert_ffn(), a.tp);
    }
    c.attention.push_back(moe_attn);
    c.dense.push_back(attn + dense_mlp_time(m, a.hw, r.tokens(), m.ffn_hidden, a.tp) + tp_ar);
    const int64_t tokens = load.tokens();
    const double skew = busiest_group_skew(m, groups);
    // The busiest attention replica's GPUs send its tokens and receive their outputs: against the
    // mean, its share of the micro-batch's tokens times the replicas (until 2026-12-07 1, the
    // mean: one 3,000-token prompt on one tp-2 replica of 8 was charged 1/16 of the exchange on
    // each NIC where its two NICs carry it all, TTFT half of it).
    const double replica_skew =
        tokens > 0 ? std::max(1.0, static_cast<double>(r.tokens()) * replicas / static_cast<double>(tokens)) : 1.0;
    c.m2n.push_back(
        exchange_time(m2n_bytes(m, tokens, groups, e.tp), a.gpus, e.gpus, al, el, plan.m2n_factor, replica_skew, skew));
    c.n2m.push_back(
        exchange_time(n2m_bytes(m, tokens, groups), e.gpus, a.gpus, el, al, plan.m2n_factor, skew, replica_skew));
    // The expert TP group sums its partial outputs; each rank keeps the 1/etp it sends back (N2M).
    const double group_tokens = busiest_group_tokens(m, tokens, groups);
    const Time etp_rs = e.tp > 1 ? coll::collective_time(CollectiveOp::kReduceScatter,
                                                           bytes_of(group_tokens * m.hidden * w), group_links(e.tp, el))
                                 : Time::zero();
    c.ffn.push_back(expert_layer_time(m, e.hw, tokens, groups, e.tp) + etp_rs);
    c.head.push_back(lm_head_time(m, a.hw, r.seqs(), a.tp));
  }
  return c;
}

StepTiming afd_step(const ServingModel& m, const AfdPlan& plan, const ServingLinks& al, const ServingLinks& el,
                    const std::vector<StepLoad>& micro, std::vector<StepSpan>* spans,
                    std::span<const StepLoad> replica_loads) {
  return ping_pong_step(afd_costs(m, plan, al, el, micro, replica_loads), spans);
}

}  // namespace clustersim::engine
