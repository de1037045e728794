// SPDX-License-Identifier: Apache-2.0
#include "sim/core/inference_config.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "sim/core/error.h"
#include "sim/core/map_reader.h"
#include "sim/core/scenario.h"
#include "sim/core/units.h"

namespace clustersim {
namespace {

void read_length(MapReader r, LengthConfig& l) {
  r.read_enum("dist", l.dist,
              {{"fixed", LengthDist::kFixed}, {"uniform", LengthDist::kUniform},
               {"exponential", LengthDist::kExponential}});
  r.read("mean", l.mean, Need::kOptional, 1, 1 << 24);
  r.read("min", l.min, Need::kOptional, 1, 1 << 24);
  r.read("max", l.max, Need::kOptional, 0, 1 << 24);
  r.finish();
}

void read_moe(MapReader r, MoeServingConfig& m) {
  r.read("experts", m.experts, Need::kRequired, 1, 1 << 16);
  r.read("top_k", m.top_k, Need::kOptional, 1, 1 << 16);
  r.read("expert_ffn_hidden", m.expert_ffn_hidden, Need::kOptional, 1, 1 << 22);
  r.read("shared_experts", m.shared_experts, Need::kOptional, 0, 1 << 10);
  r.read("dense_layers", m.dense_layers, Need::kOptional, 0, 100000);
  r.read("moe_layer_frequency", m.moe_layer_frequency, Need::kOptional, 1, 1 << 16);
  r.read("load_imbalance", m.load_imbalance, Need::kOptional, 1.0, 1000.0);
  r.read_enum("dispatch", m.dispatch, {{"all_to_all", MoeDispatch::kAllToAll}, {"all_gather", MoeDispatch::kAllGather}});
  r.finish();
}

constexpr double kMinPrice = 1e-6;  // per GPU-hour, when given

void read_pool(MapReader r, PoolConfig& p) {
  // '' would run the pool on cluster.gpu, as if the key were left out.
  r.read_text("gpu", p.gpu,
              "a built-in profile name (clustersim profiles lists them) or a profile file; remove the key for "
              "cluster.gpu");
  r.read("gpus", p.gpus, Need::kRequired, 1, kMaxGpus);
  r.read("tp", p.tp, Need::kOptional, 1, 1 << 16);
  r.read("ep", p.ep, Need::kOptional, 1, 1 << 20);
  r.read("expert_tp", p.expert_tp, Need::kOptional, 1, 1 << 20);
  r.read("max_batch", p.max_batch, Need::kOptional, 1, 1 << 20);
  if (r.read("price_per_gpu_hour", p.price_per_gpu_hour, Need::kOptional, 0.0, 1e9) && p.price_per_gpu_hour > 0 &&
      p.price_per_gpu_hour < kMinPrice) {
    // Tokens per currency unit would pass any float (1e-305 printed 'inf').
    r.error("price_per_gpu_hour", "must be 0 (unknown) or at least " + format_number(kMinPrice) +
                                      " per GPU-hour; got " + format_number(p.price_per_gpu_hour));
  }
  r.finish();
}

std::string str(long long v) { return std::to_string(v); }

}  // namespace

const char* to_string(ServingMode m) {
  switch (m) {
    case ServingMode::kColocated: return "colocated";
    case ServingMode::kPrefillDecode: return "prefill_decode";
    case ServingMode::kAttentionFfn: return "attention_ffn";
  }
  return "?";
}

void read_inference(MapReader r, InferenceConfig& out) {
  r.read_enum("mode", out.mode,
              {{"colocated", ServingMode::kColocated},
               {"prefill_decode", ServingMode::kPrefillDecode},
               {"attention_ffn", ServingMode::kAttentionFfn}});
  r.read("seed", out.seed);
  r.read("requests", out.requests, Need::kOptional, 1, 10'000'000);
  r.read("rate_per_s", out.rate_per_s, Need::kOptional, 1e-9, 1e9);
  // '' would serve Poisson arrivals, as if the key were left out.
  r.read_text("trace", out.trace,
              "a request trace file (CSV: arrival_s,prompt_tokens,output_tokens); remove the key for Poisson "
              "arrivals");
  // Load scaling over one trace (since 2026-12-07; a trace user rewrote the file for each speed).
  r.read("trace_speed", out.trace_speed, Need::kOptional, 1e-6, 1e6);
  if (r.has("prompt_tokens")) read_length(r.section("prompt_tokens"), out.prompt);
  if (r.has("output_tokens")) read_length(r.section("output_tokens"), out.output);
  r.read("max_batch", out.max_batch, Need::kOptional, 1, 1 << 20);
  r.read("max_prefill_tokens", out.max_prefill_tokens, Need::kOptional, 1, 1 << 26);
  r.read("chunked_prefill", out.chunked_prefill);
  Bytes kv;
  if (r.read("kv_cache_per_gpu", kv)) out.kv_cache_per_gpu = kv;
  // One message for both ends of (0, 1] (the reader's said ">= 0" for 1.01, where 0 is refused:
  // until 2026-12-06).
  if (double fraction = 0; r.read("kv_cache_fraction", fraction)) {
    if (fraction > 0 && fraction <= 1) {
      out.kv_cache_fraction = fraction;
    } else {
      r.error("kv_cache_fraction", "expected a number above 0 and at most 1 (a KV cache of nothing serves no "
                                   "request), got " + format_number(fraction));
    }
  }
  if (out.kv_cache_per_gpu && r.has("kv_cache_fraction")) {
    r.error("kv_cache_fraction", "applies to the memory left after the weights; kv_cache_per_gpu sets the cache "
                                 "itself: give one of the two");
  }
  r.read_enum("kv_precision", out.kv_precision, {{"bf16", KvPrecision::kBf16}, {"fp8", KvPrecision::kFp8}});
  r.read_enum("weight_precision", out.weight_precision,
              {{"bf16", WeightPrecision::kBf16}, {"fp8", WeightPrecision::kFp8}});
  r.read("micro_batches", out.micro_batches, Need::kOptional, 1, 64);
  r.read("tpot_limit", out.tpot_limit);
  r.read("ttft_limit", out.ttft_limit);
  if (r.has("moe")) read_moe(r.section("moe"), out.moe);
  MapReader pools = r.section("pools");
  const std::pair<const char*, std::optional<PoolConfig>*> roles[] = {
      {"colocated", &out.colocated}, {"prefill", &out.prefill}, {"decode", &out.decode},
      {"attention", &out.attention}, {"expert", &out.expert}};
  for (const auto& [name, slot] : roles) {
    if (!pools.has(name)) continue;
    slot->emplace();
    read_pool(pools.section(name), **slot);
  }
  pools.finish();
  r.finish();
}

std::vector<const PoolConfig*> given_pools(const InferenceConfig& in) {
  std::vector<const PoolConfig*> out;
  for (const std::optional<PoolConfig>* p : {&in.colocated, &in.prefill, &in.decode, &in.attention, &in.expert}) {
    if (*p) out.push_back(&**p);
  }
  return out;
}

int serving_gpus(const InferenceConfig& in) {
  int total = 0;
  for (const PoolConfig* p : given_pools(in)) total += p->gpus;
  return total;
}

void validate_inference(const ScenarioConfig& cfg, std::vector<InputError>& errors) {
  if (!cfg.inference) return;
  const InferenceConfig& in = *cfg.inference;
  auto fail = [&](const std::string& key, const std::string& msg) {
    errors.push_back(scenario_error(cfg, key, msg));
  };
  const ModelConfig& m = cfg.model;
  if (m.moe) {
    // The serving simulation takes its experts from inference.moe; model.moe would be dropped.
    fail("model.moe", "a serving scenario takes its experts from inference.moe (experts, top_k, expert_ffn_hidden); "
                      "move them there");
  }
  // The serving cost model (serving_model) has rotary positions and full causal attention. The
  // values it assumes stay accepted: shipped serving scenarios spell learned_positions: false.
  if (cfg.given.count("model.learned_positions") && m.learned_positions) {
    fail("model.learned_positions", "the serving cost model has no position-embedding table (rotary positions, "
                                    "no parameters); set it to false or remove it");
  }
  // A window of the whole sequence is full attention (refused until 2026-12-06); one past it is
  // refused as training refuses it.
  if (m.attention_window > m.seq_len) {
    fail("model.attention_window", "must not exceed model.seq_len (" + str(m.seq_len) + "); 0 is full causal attention");
  } else if (cfg.given.count("model.attention_window") && m.attention_window > 0 && m.attention_window < m.seq_len) {
    fail("model.attention_window", "the serving cost model prices full causal attention (decode reads the whole "
                                   "KV cache); sliding-window attention is not modelled for serving: remove it, or set it to 0 or "
                                   "model.seq_len (" + str(m.seq_len) + ")");
  }
  const int kv = m.kv_heads > 0 ? m.kv_heads : m.heads;
  if (m.head_dim == 0 && m.heads > 0 && m.hidden % m.heads != 0) {
    fail("model.hidden", "must be divisible by model.heads (" + str(m.heads) + ") unless model.head_dim is given; got " +
                             str(m.hidden));
  }
  if (kv > m.heads || (kv > 0 && m.heads % kv != 0)) {
    fail("model.kv_heads", "must divide model.heads (" + str(m.heads) + "); got " + str(kv));
  }
  if (in.trace.empty() && in.requests < 1) fail("inference.requests", "must be at least 1");
  if (in.trace.empty() && cfg.given.count("inference.trace_speed")) {  // even 1: a sweep axis over it would run alike
    fail("inference.trace_speed", "replays inference.trace faster or slower; without a trace, set inference.rate_per_s");
  }
  for (const auto& [key, l] : {std::pair{"inference.prompt_tokens", in.prompt},
                               std::pair{"inference.output_tokens", in.output}}) {
    if (l.dist == LengthDist::kUniform && (l.max == 0 || l.max < l.min)) {
      fail(std::string(key) + ".max", "a uniform length needs max >= min (" + str(l.min) + ")");
    }
    if (l.dist != LengthDist::kUniform && l.mean < 1) fail(std::string(key) + ".mean", "must be at least 1");
    if (l.dist != LengthDist::kUniform && l.max != 0 && l.max < l.min) {  // uniform: said above
      fail(std::string(key) + ".max", "must be >= min (" + str(l.min) + ")");
    }
    // Draws above max are clamped to it: with max under the mean most are, and the lengths' mean
    // is mean (1 - exp(-max / mean)), not the mean asked for.
    if (l.dist == LengthDist::kExponential && l.max != 0 && l.max < l.mean) {
      char got[64];
      std::snprintf(got, sizeof got, "%.0f", l.mean * (1.0 - std::exp(-static_cast<double>(l.max) / l.mean)));
      fail(std::string(key) + ".max", "is below mean (" + str(l.mean) + "): draws above max are clamped to it, "
                                      "so the lengths would average " + got + ", not " + str(l.mean) +
                                      "; raise max (3 x mean clamps one draw in 20)");
    }
    // Its mirror: draws below min are raised to it, and the mean becomes
    // min + mean (exp(-min / mean) - exp(-max / mean)), above the one asked for.
    if (l.dist == LengthDist::kExponential && l.min > l.mean) {
      const double mu = l.mean;
      const double upper = l.max != 0 ? std::exp(-static_cast<double>(l.max) / mu) : 0.0;
      char got[64];
      std::snprintf(got, sizeof got, "%.0f", l.min + mu * (std::exp(-static_cast<double>(l.min) / mu) - upper));
      fail(std::string(key) + ".min", "is above mean (" + str(l.mean) + "): draws below min are raised to it, "
                                      "so the lengths would average " + got + ", not " + str(l.mean) +
                                      "; lower min");
    }
  }
  // An exponential length without max has no upper bound: some draws pass any context length.
  for (const auto& [key, l] : {std::pair{"inference.prompt_tokens", in.prompt},
                               std::pair{"inference.output_tokens", in.output}}) {
    if (in.trace.empty() && l.dist == LengthDist::kExponential && l.max == 0 && m.seq_len > 0) {
      fail(std::string(key) + ".max", "an exponential length has no upper bound (with mean " + str(l.mean) +
                                          ", one draw in 20 passes 3x the mean); set max so that prompt + "
                                          "output fit model.seq_len (" + str(m.seq_len) + ")");
    }
  }
  const int max_len = [&] {
    const LengthConfig& p = in.prompt;
    const LengthConfig& o = in.output;
    const int pm = p.dist == LengthDist::kFixed ? p.mean : p.max;
    const int om = o.dist == LengthDist::kFixed ? o.mean : o.max;
    return (pm > 0 && om > 0) ? pm + om : 0;
  }();
  if (in.trace.empty() && m.seq_len > 0 && max_len > m.seq_len) {  // a trace's lines are checked as it is read
    fail("model.seq_len", "is the longest context served; prompt + output can reach " + str(max_len) +
                              " tokens (set max on the length distributions, or raise seq_len)");
  }
  if (in.moe.experts > 0) {
    if (in.moe.top_k > in.moe.experts) {
      fail("inference.moe.top_k", "must not exceed inference.moe.experts (" + str(in.moe.experts) + ")");
    }
    // A token visits an expert at most once: the busiest expert holds at most every token,
    // experts / top_k times the mean (checked once top_k itself is valid).
    const double most = static_cast<double>(in.moe.experts) / std::max(1, in.moe.top_k);
    if (in.moe.top_k <= in.moe.experts && in.moe.load_imbalance > most + 1e-9) {
      const auto num = [](double v) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%g", v);
        return std::string(buf);
      };
      fail("inference.moe.load_imbalance", "the busiest expert's tokens over the mean cannot exceed experts / top_k = " +
                                               num(most) + " (every token on it); got " + num(in.moe.load_imbalance));
    }
    if (in.moe.dense_layers >= m.layers) {
      fail("inference.moe.dense_layers", "must be below model.layers (" + str(m.layers) +
                                             "): with every layer dense there is no MoE layer (remove inference.moe "
                                             "for a dense model)");
    }
  }
  if (in.micro_batches > in.max_batch) {
    fail("inference.micro_batches", "m = " + str(in.micro_batches) + " micro-batches cannot be formed from "
                                        "a batch of at most inference.max_batch = " + str(in.max_batch) +
                                        " sequences; lower m or raise max_batch");
  }
  if (in.moe.dispatch != MoeDispatch::kAllToAll && in.mode == ServingMode::kAttentionFfn) {
    fail("inference.moe.dispatch", "applies to the colocated, prefill and decode pools' expert groups; mode "
                                   "attention_ffn sends the tokens to the expert pool by M2N (remove the key)");
  }
  if (in.micro_batches > 1 && in.mode != ServingMode::kAttentionFfn) {
    fail("inference.micro_batches", "micro-batching (ping-pong) applies to mode attention_ffn only; got mode " +
                                        std::string(to_string(in.mode)));
  }

  // Pools: the mode decides which are required and which must be absent.
  struct Role {
    const char* name;
    const std::optional<PoolConfig>* pool;
    bool used;
  };
  const ServingMode mode = in.mode;
  const Role roles[] = {
      {"colocated", &in.colocated, mode == ServingMode::kColocated},
      {"prefill", &in.prefill, mode == ServingMode::kPrefillDecode},
      {"decode", &in.decode, mode == ServingMode::kPrefillDecode},
      {"attention", &in.attention, mode == ServingMode::kAttentionFfn},
      {"expert", &in.expert, mode == ServingMode::kAttentionFfn},
  };
  long long total = 0;
  for (const Role& role : roles) {
    const std::string key = std::string("inference.pools.") + role.name;
    if (!role.used) {
      if (*role.pool) fail(key, std::string("mode ") + to_string(mode) + " has no " + role.name + " pool");
      continue;
    }
    if (!*role.pool) {
      fail(key, std::string("mode ") + to_string(mode) + " needs this pool (gpus, tp, ...)");
      continue;
    }
    const PoolConfig& p = **role.pool;
    total += p.gpus;
    const bool is_expert = std::string(role.name) == "expert";
    if (p.max_batch != 0 && mode == ServingMode::kAttentionFfn) {
      fail(key + ".max_batch", "under attention_ffn a step's batch is the deployment's, split over its micro-batches: "
                               "set inference.max_batch");
    }
    if (!is_expert) {
      if (m.heads > 0 && m.heads % p.tp != 0) {
        fail(key + ".tp", "must divide model.heads (" + str(m.heads) + ") so that each rank holds whole "
                          "heads; got " + str(p.tp));
      }
      // KV heads split over the ranks or replicated on groups of them, as vLLM requires (and the
      // training plan's parallelism.tp): 6 KV heads over tp 4 passed until 2026-12-06.
      if (p.tp > 1 && kv > 0 && kv % p.tp != 0 && p.tp % kv != 0) {
        fail(key + ".tp", "must divide model.kv_heads (" + str(kv) + ") or be a multiple of it, so that each rank "
                          "holds whole KV heads or a whole copy of one; got " + str(p.tp));
      }
      if (p.tp > cfg.cluster.gpus_per_node) {
        fail(key + ".tp", "tensor parallelism stays inside a node: must not exceed cluster.gpus_per_node (" +
                              str(cfg.cluster.gpus_per_node) + ")");
      }
      const int ep = p.ep > 0 ? p.ep : p.tp;
      if (role.name != std::string("attention") && in.moe.experts == 0 && p.ep > 0 && p.ep != p.tp) {
        // A dense model's instance is its tp group: an ep wider than it made one instance of
        // ep / tp replicas that share a batch and a step clock (2 TP-1 GPUs of 8B at ep 2 served
        // 13% fewer tokens at 50x the TTFT, accepted until 2026-12-06).
        fail(key + ".ep", "groups GPUs around experts, but the model has none (inference.moe): a dense model's "
                          "instance is its tp group (" + str(p.tp) + " GPUs); remove ep");
      }
      if (role.name != std::string("attention")) {
        if (ep % p.tp != 0) {
          fail(key + ".ep", "instance GPUs (ep = " + str(ep) + ") must be a multiple of tp (" + str(p.tp) + ")");
        }
        if (p.gpus % ep != 0) {
          // ep only where it was given (a dense pool's instance is its tp group).
          fail(key + ".gpus", "must be a multiple of the instance size (" +
                                  (p.ep > 0 ? "ep = " + str(ep) : "tp = " + str(p.tp)) + "); got " + str(p.gpus));
        }
        if (p.expert_tp > 0) {
          // The instance's ep GPUs form ep / expert_tp groups, each holding whole experts, each
          // expert split over its group's expert_tp GPUs.
          if (in.moe.experts == 0) {
            fail(key + ".expert_tp", "splits the experts, but the model has none (inference.moe); remove it");
          } else if (ep % p.expert_tp != 0) {
            fail(key + ".expert_tp", "must divide the instance's GPUs (ep = " + str(ep) + "); got " + str(p.expert_tp));
          } else if (in.moe.experts % (ep / p.expert_tp) != 0) {
            fail(key + ".expert_tp", "ep / expert_tp = " + str(ep / p.expert_tp) +
                                         " expert groups must divide inference.moe.experts (" + str(in.moe.experts) +
                                         "); got expert_tp " + str(p.expert_tp));
          } else if (const int width = in.moe.expert_ffn_hidden > 0 ? in.moe.expert_ffn_hidden : m.ffn_hidden;
                     width > 0 && width % p.expert_tp != 0) {
            // Each GPU holds whole columns of the expert (a 7-wide expert over 8 GPUs was priced
            // as 1 column each until 2026-12-05).
            fail(key + ".expert_tp", "must divide the expert's width (" + str(width) +
                                         (in.moe.expert_ffn_hidden > 0 ? ", inference.moe.expert_ffn_hidden"
                                                                       : ", model.ffn_hidden") +
                                         "); got " + str(p.expert_tp));
          }
        } else if (in.moe.experts > 0 && in.moe.experts % ep != 0 && ep % in.moe.experts != 0) {
          fail(key + ".ep", "must divide inference.moe.experts (" + str(in.moe.experts) +
                                ") or be a multiple of it; got " + str(ep));
        }
      } else {
        if (p.ep != 0) fail(key + ".ep", "the attention pool holds no experts; remove ep");
        if (p.expert_tp != 0) fail(key + ".expert_tp", "the attention pool holds no experts; remove expert_tp");
        if (p.gpus % p.tp != 0) {
          fail(key + ".gpus", "must be a multiple of tp (" + str(p.tp) + "); got " + str(p.gpus));
        }
      }
    } else {
      if (in.moe.experts == 0) {
        fail("inference.moe", "mode attention_ffn needs an MoE model (inference.moe.experts)");
        continue;
      }
      if (p.ep != 0) fail(key + ".ep", "the expert pool is one expert-parallel group over all its gpus; remove ep");
      if (p.expert_tp != 0) fail(key + ".expert_tp", "the expert pool splits each expert over its tp GPUs; use tp");
      if (p.tp > cfg.cluster.gpus_per_node) {
        fail(key + ".tp", "expert tensor parallelism stays inside a node: must not exceed cluster.gpus_per_node (" +
                              str(cfg.cluster.gpus_per_node) + ")");
      }
      if (p.gpus % p.tp != 0) {
        fail(key + ".gpus", "must be a multiple of tp (" + str(p.tp) + "); got " + str(p.gpus));
      } else {
        const int groups = p.gpus / p.tp;
        if (in.moe.experts % groups != 0) {
          fail(key + ".gpus", "gpus / tp = " + str(groups) + " expert groups must divide inference.moe.experts (" +
                                  str(in.moe.experts) + ")");
        }
      }
    }
  }
  if (total > cfg.cluster.gpus) {
    fail("cluster.gpus", "the pools use " + str(total) + " GPUs but the cluster has " + str(cfg.cluster.gpus));
  }
  // Pools sit on consecutive GPUs in this order; a node holds one kind of GPU, so pools of two
  // kinds may not share one (4 H200s and 4 H800s on one 8-GPU node, their exchange on NVLink,
  // were accepted until 2026-12-06).
  const int gpn = cfg.cluster.gpus_per_node;
  long long start = 0;
  const Role* previous = nullptr;
  for (const Role& role : roles) {
    if (!role.used || !*role.pool) continue;
    const PoolConfig& p = **role.pool;
    if (previous && gpn > 0 && start % gpn != 0) {
      const PoolConfig& q = **previous->pool;
      const std::string& kind = p.gpu.empty() ? cfg.cluster.gpu : p.gpu;
      const std::string& other = q.gpu.empty() ? cfg.cluster.gpu : q.gpu;
      // Spelled alike up to case, one GPU (a misspelt name's own error then comes first).
      if (ascii_lower(kind) != ascii_lower(other)) {
        fail(std::string("inference.pools.") + role.name + ".gpu",
             std::string("pool ") + role.name + " (" + kind + ") would start on GPU " + str(static_cast<int>(start)) +
                 ", on a node of pool " + previous->name + " (" + other + "): a node holds one kind of GPU; make "
                 "inference.pools." + previous->name + ".gpus a multiple of cluster.gpus_per_node (" + str(gpn) + ")");
      }
    }
    start += p.gpus;
    previous = &role;
  }
}

}  // namespace clustersim
