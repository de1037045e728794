// SPDX-License-Identifier: Apache-2.0
#include "sim/engine/inference_sweep.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

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
  p.instances = 1;
  p.attention_replicas = role == PoolRole::kExpert ? 0 : ep / tp;
  InferenceConfig sized = in;
  sized.trace.clear();
  try {
    size_pool_memory(serving_model(cfg), sized, "", p);
  } catch (const BadInput&) {
    return false;
  }
  return true;
}

double context_of(const InferenceConfig& in) { return mean_of(in.prompt) + 0.5 * mean_of(in.output); }
double reserved_of(const InferenceConfig& in) { return mean_of(in.prompt) + mean_of(in.output); }

}  // namespace

DecodePoint colocated_decode_point(const ScenarioConfig& cfg, int tp, int instance_gpus, int batch) {
  DecodePoint d;
  d.mode = ServingMode::kColocated;
  d.tp = tp;
  d.instance_gpus = instance_gpus;
  d.batch = batch;
  d.gpus = instance_gpus;
  PoolPlan p;
  if (!make_pool(cfg, PoolRole::kColocated, instance_gpus, tp, instance_gpus, p)) return d;
  const InferenceConfig& in = *cfg.inference;
  const double kv_tokens = static_cast<double>(p.kv_tokens_per_replica) * p.attention_replicas;
  d.fits = batch * reserved_of(in) <= kv_tokens;
  const ServingModel m = serving_model(cfg);
  StepLoad load;
  const double ctx = context_of(in);
  for (int i = 0; i < batch; ++i) load.add_decode(static_cast<int64_t>(ctx));
  d.timing = colocated_step(m, p, serving_links(cfg, p.hw), load);
  d.tpot = d.timing.total;
  d.tokens_per_s_per_gpu = batch / d.tpot.as_s() / d.gpus;
  return d;
}

DecodePoint afd_decode_point(const ScenarioConfig& cfg, int atp, int attention_gpus, int expert_gpus, int batch, int m) {
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
  AfdPlan plan{&a, &e, m, 1.0};
  d.timing = afd_step(model, plan, serving_links(cfg, a.hw), serving_links(cfg, e.hw), micro);
  d.tpot = d.timing.total;
  d.tokens_per_s_per_gpu = batch / d.tpot.as_s() / d.gpus;
  return d;
}

DecodeSweepResult sweep_decode(const ScenarioConfig& cfg, const DecodeSweepGrid& grid) {
  const InferenceConfig& in = *cfg.inference;
  DecodeSweepResult r;
  r.tpot_limit = in.tpot_limit;
  r.context = context_of(in);
  auto within = [&](const DecodePoint& d) {
    return d.fits && (r.tpot_limit == Time::zero() || d.tpot <= r.tpot_limit);
  };
  auto better = [&](const DecodePoint& d, const DecodePoint& best) {
    return within(d) && (!within(best) || d.tokens_per_s_per_gpu > best.tokens_per_s_per_gpu);
  };
  const int heads = cfg.model.heads;
  for (int inst : grid.colocated_instance_gpus) {
    for (int tp : grid.colocated_tp) {
      if (inst % tp != 0 || heads % tp != 0) continue;
      for (int b : grid.batches) {
        const DecodePoint d = colocated_decode_point(cfg, tp, inst, b);
        r.points.push_back(d);
        if (better(d, r.colocated_best)) r.colocated_best = d;
      }
    }
  }
  for (int m : grid.micro_batches) {
    DecodePoint best;
    best.micro_batches = m;
    best.mode = ServingMode::kAttentionFfn;
    for (int tp : grid.attention_tp) {
      for (int a : grid.attention_gpus) {
        for (int e : grid.expert_gpus) {
          for (int b : grid.batches) {
            const DecodePoint d = afd_decode_point(cfg, tp, a, e, b, m);
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
  char line[512];
  std::snprintf(line, sizeof line, "decode sweep: mean context %.0f tokens, TPOT limit %s\n", r.context,
                r.tpot_limit == Time::zero() ? "none" : to_string(r.tpot_limit).c_str());
  o << line;
  o << "  mode        m  tp  attn GPUs  expert GPUs  batch  TPOT ms  attn ms  ffn ms  comm ms  idle ms  tok/s/GPU  gain\n";
  const DecodePoint& c = r.colocated_best;
  const double base = c.fits ? c.tokens_per_s_per_gpu : 0.0;
  auto row = [&](const char* mode, const DecodePoint& d) {
    if (!d.fits) {
      std::snprintf(line, sizeof line, "  %-10s %2d  no point fits the limit\n", mode, d.micro_batches);
      o << line;
      return;
    }
    const double ms = 1e3;
    std::snprintf(line, sizeof line, "  %-10s %2d  %2d  %9d  %11d  %5d  %7.2f  %7.2f  %6.2f  %7.2f  %7.2f  %9.0f  %4.2fx\n", mode,
                  d.micro_batches, d.tp, d.mode == ServingMode::kColocated ? d.instance_gpus : d.attention_gpus,
                  d.expert_gpus, d.batch, d.tpot.as_s() * ms, d.timing.attention.as_s() * ms, d.timing.ffn.as_s() * ms,
                  d.timing.communication.as_s() * ms, d.timing.idle.as_s() * ms, d.tokens_per_s_per_gpu,
                  base > 0 ? d.tokens_per_s_per_gpu / base : 0.0);
    o << line;
  };
  row("colocated", c);
  for (const DecodePoint& d : r.afd_best) row("attn/ffn", d);
  return o.str();
}

}  // namespace clustersim::engine
