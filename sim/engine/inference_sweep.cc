// SPDX-License-Identifier: Apache-2.0
#include "sim/engine/inference_sweep.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <sstream>

#include "sim/core/error.h"
#include "sim/engine/inference_sim.h"
#include "sim/network/fabric_routes.h"
#include "topology/fabric_router.h"

namespace clustersim::engine {
namespace {

double mean_of(const LengthConfig& l) {
  if (l.dist == LengthDist::kUniform) return 0.5 * (l.min + l.max);
  return l.mean;
}

const PoolConfig* pool_of(const InferenceConfig& in, PoolRole role) {
  switch (role) {
    case PoolRole::kColocated: return in.colocated ? &*in.colocated : nullptr;
    case PoolRole::kPrefill: return in.prefill ? &*in.prefill : nullptr;
    case PoolRole::kDecode: return in.decode ? &*in.decode : nullptr;
    case PoolRole::kAttention: return in.attention ? &*in.attention : nullptr;
    case PoolRole::kExpert: return in.expert ? &*in.expert : nullptr;
  }
  return nullptr;
}

// A pool of `gpus` GPUs of the scenario's type for `role`; false when the weights do not fit.
bool make_pool(const ScenarioConfig& cfg, PoolRole role, int gpus, int tp, int ep, PoolPlan& p) {
  const InferenceConfig& in = *cfg.inference;
  const PoolConfig* pc = pool_of(in, role);
  const std::string gpu = pc && !pc->gpu.empty() ? pc->gpu : cfg.cluster.gpu;
  p.role = role;
  p.hw = calib::load_hardware_profile(gpu, cfg.cluster.source_dir);
  p.gpus = gpus;
  p.tp = tp;
  p.ep = ep;
  const ServingModel model = serving_model(cfg);
  // A colocated point of a prefill/decode scenario decodes: its experts are laid out as the
  // decode pool's.
  const PoolConfig* layout = role == PoolRole::kColocated && !pc ? pool_of(in, PoolRole::kDecode) : pc;
  p.expert_tp = layout && layout->expert_tp > 0 ? layout->expert_tp : default_expert_tp(model, ep);
  p.instances = 1;
  p.attention_replicas = role == PoolRole::kExpert ? 0 : ep / tp;
  InferenceConfig sized = in;
  sized.trace.clear();
  try {
    size_pool_memory(model, sized, "", p);
  } catch (const BadInput&) {
    return false;
  }
  return true;
}

// The GPU type of `role` (its pool's gpu, else cluster.gpu) and its price per GPU-hour: the pool's
// own, else that of any pool of the scenario with the same GPU type (so that a colocated baseline
// on the expert pool's GPUs is priced like them); 0 when none is known.
std::string gpu_of(const ScenarioConfig& cfg, PoolRole role) {
  const PoolConfig* pc = pool_of(*cfg.inference, role);
  return pc && !pc->gpu.empty() ? pc->gpu : cfg.cluster.gpu;
}

double price_of(const ScenarioConfig& cfg, PoolRole role) {
  const InferenceConfig& in = *cfg.inference;
  const PoolConfig* own = pool_of(in, role);
  if (own && own->price_per_gpu_hour > 0) return own->price_per_gpu_hour;
  const std::string gpu = gpu_of(cfg, role);
  for (PoolRole r : {PoolRole::kColocated, PoolRole::kPrefill, PoolRole::kDecode, PoolRole::kAttention, PoolRole::kExpert}) {
    const PoolConfig* pc = pool_of(in, r);
    if (pc && pc->price_per_gpu_hour > 0 && gpu_of(cfg, r) == gpu) return pc->price_per_gpu_hour;
  }
  return 0;
}

// Tokens per cost unit: tokens/s x 3600 s/h / (price of all the GPUs per hour).
void set_cost(DecodePoint& d, double price_per_hour) {
  d.price_per_hour = price_per_hour;
  d.tokens_per_cost_unit = price_per_hour > 0 ? d.tokens_per_s_per_gpu * d.gpus * 3600.0 / price_per_hour : 0.0;
}

double context_of(const InferenceConfig& in) { return mean_of(in.prompt) + 0.5 * mean_of(in.output); }
double reserved_of(const InferenceConfig& in) { return mean_of(in.prompt) + mean_of(in.output); }

}  // namespace

namespace {

// The pools' links (and the M2N factor when there are two pools) on `on` where they fit in it,
// else the block model (serving_links, serving_fabric_slowdown).
double price_links(const ScenarioConfig& cfg, ServingSetup& s, const SweepFabric& on) {
  for (const PoolPlan& p : s.pools) s.links.push_back(serving_links(cfg, p));
  const PoolPlan& last = s.pools.back();
  if (on.fabric && on.routes && last.first_gpu + last.gpus <= on.gpus) {
    set_pool_nvlink(cfg.network, s.pools, *on.fabric);
    route_pool_links(s, *on.fabric, *on.routes);
    return m2n_static_factor(s, *on.fabric, *on.routes);
  }
  if (s.pools.size() < 2) return 1.0;
  // The M2N's fabric factor from the bytes that leave each ToR and pod.
  const int64_t tokens = int64_t{64} * s.pools[0].gpus * s.pools[1].gpus;
  return serving_fabric_slowdown(cfg, m2n_exchange_flows(s.pools[0], s.pools[1], s.model, tokens,
                                                         cfg.cluster.gpus_per_node));
}

}  // namespace

DecodePoint colocated_decode_point(const ScenarioConfig& cfg, int tp, int instance_gpus, int batch,
                                   const SweepFabric& on) {
  DecodePoint d;
  d.mode = ServingMode::kColocated;
  d.tp = tp;
  d.instance_gpus = instance_gpus;
  d.batch = batch;
  d.gpus = instance_gpus;
  PoolPlan p;
  if (!make_pool(cfg, PoolRole::kColocated, instance_gpus, tp, instance_gpus, p)) return d;
  const ServingModel m = serving_model(cfg);
  // The pool's expert_tp must split this instance into groups of whole experts.
  if (m.is_moe() && (p.ep % p.expert_tp != 0 || m.moe.experts % (p.ep / p.expert_tp) != 0)) return d;
  const InferenceConfig& in = *cfg.inference;
  const double kv_tokens = static_cast<double>(p.kv_tokens_per_replica) * p.attention_replicas;
  d.fits = batch * reserved_of(in) <= kv_tokens;
  StepLoad load;
  const double ctx = context_of(in);
  for (int i = 0; i < batch; ++i) load.add_decode(static_cast<int64_t>(ctx));
  ServingSetup setup;
  setup.model = m;
  setup.pools = {p};
  price_links(cfg, setup, on);
  d.timing = colocated_step(m, p, setup.links[0], load);
  d.tpot = d.timing.total;
  d.tokens_per_s_per_gpu = batch / d.tpot.as_s() / d.gpus;
  const double price = price_of(cfg, PoolRole::kColocated);
  set_cost(d, price > 0 ? price * instance_gpus : 0.0);
  return d;
}

DecodePoint afd_decode_point(const ScenarioConfig& cfg, int atp, int attention_gpus, int expert_gpus, int batch, int m,
                             const SweepFabric& on) {
  const InferenceConfig& in = *cfg.inference;
  const int experts = std::max(1, in.moe.experts);
  const int etp = std::max(in.expert ? in.expert->tp : 1, expert_gpus > experts ? expert_gpus / experts : 1);
  DecodePoint d;
  d.mode = ServingMode::kAttentionFfn;
  d.micro_batches = m;
  d.tp = atp;
  d.attention_gpus = attention_gpus;
  d.expert_gpus = expert_gpus;
  d.batch = batch;
  d.gpus = attention_gpus + expert_gpus;
  const ServingModel model = serving_model(cfg);
  if (m > batch || attention_gpus % atp != 0 || expert_gpus % etp != 0 || model.heads % atp != 0 ||
      model.moe.experts % (expert_gpus / etp) != 0) {
    return d;
  }
  PoolPlan a, e;
  if (!make_pool(cfg, PoolRole::kAttention, attention_gpus, atp, atp, a)) return d;
  a.attention_replicas = attention_gpus / atp;
  if (!make_pool(cfg, PoolRole::kExpert, expert_gpus, etp, expert_gpus, e)) return d;
  const double kv_tokens = static_cast<double>(a.kv_tokens_per_replica) * a.attention_replicas;
  d.fits = batch * reserved_of(in) <= kv_tokens;
  std::vector<StepLoad> micro(static_cast<size_t>(m));
  const double ctx = context_of(in);
  for (int i = 0; i < batch; ++i) micro[static_cast<size_t>(i % m)].add_decode(static_cast<int64_t>(ctx));
  e.first_gpu = attention_gpus;
  ServingSetup setup;
  setup.model = model;
  setup.pools = {a, e};
  const double factor = price_links(cfg, setup, on);
  AfdPlan plan{&a, &e, m, factor};
  d.timing = afd_step(model, plan, setup.links[0], setup.links[1], micro);
  d.tpot = d.timing.total;
  d.tokens_per_s_per_gpu = batch / d.tpot.as_s() / d.gpus;
  const double pa = price_of(cfg, PoolRole::kAttention), pe = price_of(cfg, PoolRole::kExpert);
  set_cost(d, pa > 0 && pe > 0 ? pa * attention_gpus + pe * expert_gpus : 0.0);
  return d;
}

DecodeSweepResult sweep_decode(const ScenarioConfig& cfg, const DecodeSweepGrid& grid) {
  const InferenceConfig& in = *cfg.inference;
  std::optional<topo::Fabric> fabric;
  std::optional<net::FabricRoutes> routes;
  SweepFabric on;
  try {
    // The scenario's fabric, grown (same switches, wiring and ratios) to hold the largest point.
    ClusterConfig cluster = cfg.cluster;
    int largest = 0;
    for (int g : grid.colocated_instance_gpus) largest = std::max(largest, g);
    const int experts = grid.expert_gpus.empty() ? 0 : *std::max_element(grid.expert_gpus.begin(), grid.expert_gpus.end());
    for (int a : grid.attention_gpus) largest = std::max(largest, a + experts);
    const int gpn = cluster.gpus_per_node;
    cluster.gpus = std::max(cluster.gpus, (largest + gpn - 1) / gpn * gpn);
    // NVLink: each point sets its pools' (price_links); before 2026-12-05 H100's 450 GB/s for all.
    fabric.emplace(topo::build_fabric(cluster, cfg.network, cfg.file));
    routes.emplace(*fabric, topo::routing_options(cfg.network));
    on = {&*fabric, &*routes, cluster.gpus};
  } catch (const BadInput&) {
    // A fabric that cannot be built: every point gets the block model's fallback.
  }
  DecodeSweepResult r;
  r.tpot_limit = in.tpot_limit;
  r.context = context_of(in);
  r.rank_by_cost = grid.rank_by_cost;
  auto within = [&](const DecodePoint& d) {
    return d.fits && (r.tpot_limit == Time::zero() || d.tpot <= r.tpot_limit);
  };
  auto score = [&](const DecodePoint& d) { return grid.rank_by_cost ? d.tokens_per_cost_unit : d.tokens_per_s_per_gpu; };
  auto better = [&](const DecodePoint& d, const DecodePoint& best) {
    return within(d) && (!within(best) || score(d) > score(best));
  };
  const int heads = cfg.model.heads;
  r.baseline_tp = grid.colocated_tp.empty() ? 8 : *std::max_element(grid.colocated_tp.begin(), grid.colocated_tp.end());
  r.colocated_tp_best.tp = r.baseline_tp;
  for (int inst : grid.colocated_instance_gpus) {
    for (int tp : grid.colocated_tp) {
      if (inst % tp != 0 || heads % tp != 0) continue;
      DecodePoint& best = tp == r.baseline_tp ? r.colocated_tp_best : r.colocated_dp_best;
      for (int b : grid.batches) {
        const DecodePoint d = colocated_decode_point(cfg, tp, inst, b, on);
        r.points.push_back(d);
        if (better(d, best)) best = d;
      }
    }
  }
  char types[256];
  std::snprintf(types, sizeof types, "colocated %s at %.2f/h, attention %s at %.2f/h, expert %s at %.2f/h",
                gpu_of(cfg, PoolRole::kColocated).c_str(), price_of(cfg, PoolRole::kColocated),
                gpu_of(cfg, PoolRole::kAttention).c_str(), price_of(cfg, PoolRole::kAttention),
                gpu_of(cfg, PoolRole::kExpert).c_str(), price_of(cfg, PoolRole::kExpert));
  r.gpu_types = types;
  for (int m : grid.micro_batches) {
    DecodePoint best;
    best.micro_batches = m;
    best.mode = ServingMode::kAttentionFfn;
    for (int tp : grid.attention_tp) {
      for (int a : grid.attention_gpus) {
        for (int e : grid.expert_gpus) {
          for (int b : grid.batches) {
            const DecodePoint d = afd_decode_point(cfg, tp, a, e, b, m, on);
            r.points.push_back(d);
            if (better(d, best)) best = d;
          }
        }
      }
    }
    r.afd_best.push_back(best);
  }
  return r;
}

std::string format_decode_sweep(const DecodeSweepResult& r) {
  std::ostringstream o;
  char line[640];
  std::snprintf(line, sizeof line, "decode sweep: mean context %.0f tokens, TPOT limit %s, best = most tokens/s %s\n",
                r.context, r.tpot_limit == Time::zero() ? "none" : to_string(r.tpot_limit).c_str(),
                r.rank_by_cost ? "per cost unit" : "per GPU");
  o << line << "GPU types (price per GPU-hour, 0 = unknown): " << r.gpu_types << "\n";
  o << "  row                  m  tp  attn/inst  expert  batch  TPOT ms  attn ms  ffn ms  comm ms  idle ms  tok/s/GPU"
       "  tok/cost  vs TP-" << r.baseline_tp << "  vs DP-attn\n";
  const DecodePoint& tp = r.colocated_tp_best;
  const DecodePoint& dp = r.colocated_dp_best;
  const bool cost = r.rank_by_cost;
  auto metric = [&](const DecodePoint& d) { return !d.fits ? 0.0 : cost ? d.tokens_per_cost_unit : d.tokens_per_s_per_gpu; };
  auto gain = [&](const DecodePoint& d, const DecodePoint& base) {
    if (metric(base) <= 0) return std::string("      -");
    char g[32];
    std::snprintf(g, sizeof g, "%6.2fx", metric(d) / metric(base));
    return std::string(g);
  };
  auto row = [&](const std::string& name, const DecodePoint& d) {
    if (!d.fits) {
      std::snprintf(line, sizeof line, "  %-19s  no point fits the limit (or none evaluated)\n", name.c_str());
      o << line;
      return;
    }
    const double ms = 1e3;
    std::snprintf(line, sizeof line,
                  "  %-19s %2s  %2d  %9d  %6d  %5d  %7.2f  %7.2f  %6.2f  %7.2f  %7.2f  %9.0f  %8.0f  %s  %s\n",
                  name.c_str(), d.mode == ServingMode::kColocated ? "-" : std::to_string(d.micro_batches).c_str(), d.tp,
                  d.mode == ServingMode::kColocated ? d.instance_gpus : d.attention_gpus, d.expert_gpus, d.batch,
                  d.tpot.as_s() * ms, d.timing.attention.as_s() * ms, d.timing.ffn.as_s() * ms,
                  d.timing.communication.as_s() * ms, d.timing.idle.as_s() * ms, d.tokens_per_s_per_gpu,
                  d.tokens_per_cost_unit, gain(d, tp).c_str(), gain(d, dp).c_str());
    o << line;
  };
  row("colocated TP-" + std::to_string(r.baseline_tp) + " attn", tp);
  row("colocated DP attn", dp);
  for (const DecodePoint& d : r.afd_best) row("attn/ffn ping-pong", d);
  o << "rows: colocated TP-" << r.baseline_tp
    << " attn = every instance runs whole layers, attention tensor-parallel over " << r.baseline_tp
    << " GPUs, experts over\n"
       "      the instance (whole, or sliced as the pool's expert_tp says) (the baseline the gains are quoted against; MegaScale-Infer, arXiv 2504.02263,\n"
       "      compares with vLLM and TensorRT-LLM; that their attention was tensor-parallel is assumed here, not sourced).\n"
       "      colocated DP attn = the same instance with attention data-parallel (tp < "
    << r.baseline_tp << ", ep / tp replicas), the stronger baseline.\n"
       "      attn/ffn = attention pool (KV caches) + expert pool, m ping-pong micro-batches; attn/inst = attention GPUs.\n"
       "      tok/cost = tokens per currency unit (tokens/s x 3600 / price of all GPUs per hour); 0 = unpriced.\n"
       "      vs columns = ratio of the ranking metric (tok/s/GPU, or tok/cost with --by-cost) to that row; - = none.\n";
  return o.str();
}

}  // namespace clustersim::engine
