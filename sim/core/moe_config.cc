// SPDX-License-Identifier: Apache-2.0
#include "sim/core/moe_config.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/map_reader.h"
#include "sim/core/scenario.h"
#include "sim/core/units.h"

namespace clustersim {
namespace {

std::string str(long long v) { return std::to_string(v); }

}  // namespace

const char* to_string(MoeRouting r) {
  switch (r) {
    case MoeRouting::kUniform: return "uniform";
    case MoeRouting::kZipf: return "zipf";
    case MoeRouting::kLoads: return "loads";
  }
  return "?";
}

const char* to_string(CommPrecision p) {
  switch (p) {
    case CommPrecision::kDefault: return "default";
    case CommPrecision::kBf16: return "bf16";
    case CommPrecision::kFp8: return "fp8";
  }
  return "?";
}

const char* to_string(AttentionParallel a) {
  switch (a) {
    case AttentionParallel::kTp: return "tp";
    case AttentionParallel::kSp: return "sp";
  }
  return "?";
}

void read_moe(MapReader r, MoeConfig& m) {
  r.read("experts", m.experts, Need::kRequired, 1, 1 << 16);
  r.read("top_k", m.top_k, Need::kOptional, 1, 1 << 16);
  r.read("expert_ffn_hidden", m.expert_ffn_hidden, Need::kOptional, 1, 1 << 22);
  r.read("shared_experts", m.shared_experts, Need::kOptional, 0, 1 << 10);
  r.read("moe_layer_frequency", m.moe_layer_frequency, Need::kOptional, 1, 1 << 16);
  r.read("first_dense_layers", m.first_dense_layers, Need::kOptional, 0, 1 << 16);
  r.read("capacity_factor", m.capacity_factor, Need::kOptional, 0.0, 1e3);
  r.read_enum("routing", m.routing,
              {{"uniform", MoeRouting::kUniform}, {"zipf", MoeRouting::kZipf}, {"loads", MoeRouting::kLoads}});
  r.read("zipf_s", m.zipf_s, Need::kOptional, 0.0, 10.0);
  r.read("seed", m.seed);
  if (const YamlNode* loads = r.child("loads"); loads && loads->is_null()) {
    r.error("loads", "has no value; give one weight per expert, or remove the key");  // ignored until 2026-12-06
  } else if (loads) {
    if (!loads->is_seq()) {
      r.error("loads", "expected a list of non-negative weights, one per expert");
    } else if (loads->seq.empty()) {
      // As an empty stragglers list: [] passed as the key left out (routing other than 'loads')
      // until 2026-12-05.
      r.error("loads", "the list is empty; give one weight per expert or remove the key");
    } else {
      for (size_t i = 0; i < loads->seq.size(); ++i) {
        // A finite plain decimal, as MapReader reads numbers (strtod also took a '+', leading
        // spaces and hexadecimal until 2026-12-05).
        const std::optional<double> v = plain_real(loads->seq[i]);
        if (!v || *v < 0) {
          r.error("loads", "entry " + str(static_cast<long long>(i)) + " ('" + loads->seq[i].scalar +
                               "') is not a non-negative number");
          m.loads.clear();
          break;
        }
        m.loads.push_back(*v);
      }
    }
  }
  r.finish();
}

std::vector<double> routing_weights(const MoeConfig& m) {
  std::vector<double> w(static_cast<size_t>(std::max(0, m.experts)), 1.0);
  if (m.routing == MoeRouting::kZipf) {
    for (size_t r = 0; r < w.size(); ++r) w[r] = 1.0 / std::pow(static_cast<double>(r) + 1.0, m.zipf_s);
  } else if (m.routing == MoeRouting::kLoads && m.loads.size() == w.size() && !w.empty()) {
    // Relative to the largest: the ratios are what routes, and their sum must not overflow
    // (loads of 1e308 each summed to infinity and crashed the draw).
    const double largest = *std::max_element(m.loads.begin(), m.loads.end());
    for (size_t e = 0; e < w.size(); ++e) w[e] = largest > 0 ? m.loads[e] / largest : 1.0;
  }
  return w;
}

void validate_moe(const ScenarioConfig& cfg, std::vector<InputError>& errors) {
  const ParallelismConfig& p = cfg.parallelism;
  const TrainingConfig& t = cfg.training;
  auto fail = [&](const std::string& key, const std::string& message) {
    errors.push_back(scenario_error(cfg, key, message));
  };
  if (cfg.traffic || cfg.inference) return;  // no training step (inference has inference.moe)
  if (t.overlap.a2a_chunks < 1) fail("training.overlap.a2a_chunks", "must be at least 1 (1 = no overlap)");
  if (t.attention_parallel == AttentionParallel::kSp && cfg.model.seq_len % p.tp != 0) {
    fail("training.attention_parallel", "sp splits each sequence over the tp group: tp (" + str(p.tp) +
                                            ") must divide model.seq_len (" + str(cfg.model.seq_len) + ")");
  }
  // An MoE layer routes each GPU's tokens, a sequence split over tp (sequence parallel) and cp:
  // whole tokens per GPU (2047.5 were routed as 2047, and a sequence of 4 over 16 GPUs read as a
  // step of 107 days until 2026-12-07; QA).
  const bool sp_reported = t.attention_parallel == AttentionParallel::kSp && cfg.model.seq_len % p.tp != 0;
  const int64_t split = int64_t{p.tp} * p.cp;  // each up to 65536: their product overflows an int
  if (cfg.model.moe && !sp_reported && split > 0 && cfg.model.seq_len % split != 0) {
    fail("model.seq_len", "an MoE layer routes each GPU's share of a sequence, split over tp x cp (" + str(p.tp) +
                              " x " + str(p.cp) + "): it must divide model.seq_len (" + str(cfg.model.seq_len) + ")");
  }
  // The MoE layer's token split over the tp group is sequence parallelism's: Megatron-LM refuses
  // MoE with tensor parallelism but without it (the all-to-all bytes were priced split by tp
  // either way until 2026-12-05).
  if (cfg.model.moe && p.tp > 1 && t.attention_parallel == AttentionParallel::kTp && !p.sequence_parallel) {
    fail("parallelism.sequence_parallel", "an MoE model under tensor parallelism (tp " + str(p.tp) +
                                              ", training.attention_parallel: tp) needs sequence parallelism, as "
                                              "Megatron-LM requires; got false");
  }
  if (!cfg.model.moe) {
    if (p.ep != 1) fail("parallelism.ep", "expert parallelism needs an MoE model (model.moe)");
    if (p.expert_tp != 1) fail("parallelism.expert_tp", "expert tensor parallelism needs an MoE model (model.moe)");
    if (t.attention_parallel == AttentionParallel::kSp) {
      fail("training.attention_parallel", "sp is the MoE plan of MegaScale-MoE; it needs model.moe");
    }
    // Only the MoE layer model reads these two; a dense model has no all-to-all, and its gradient
    // sync takes its bytes from training.fp32_grad_reduce.
    if (cfg.given.count("training.comm_precision")) {
      fail("training.comm_precision", "sets the precision of the MoE all-to-all and gradient sync; it needs "
                                      "model.moe (a dense model's gradient sync follows training.fp32_grad_reduce): "
                                      "remove it");
    }
    if (cfg.given.count("training.overlap.a2a_chunks")) {
      fail("training.overlap.a2a_chunks", "chunks the MoE all-to-alls; it needs model.moe (a dense model has none): "
                                          "remove it");
    }
    if (cfg.given.count("training.moe_grouped_gemm")) {
      fail("training.moe_grouped_gemm", "groups an MoE layer's expert GEMMs; it needs model.moe (a dense model has "
                                        "no experts): remove it");
    }
    return;
  }
  const MoeConfig& m = *cfg.model.moe;
  if (m.top_k > m.experts) {
    fail("model.moe.top_k", "must not exceed model.moe.experts (" + str(m.experts) + "); got " + str(m.top_k));
  } else if (p.tp > 0 && p.cp > 0 && m.top_k < m.experts) {  // top_k = experts draws nothing (route_tokens)
    // The routing draws (workloads/moe.cc: 4 per MoE layer, every token of a micro-batch on every
    // GPU of an expert domain picking top_k experts without repeats, by rejection) cost about
    // 8 ns per draw, and the draws grow as top_k nears the experts: a bound up
    // front, rather than a run of hours (4,096 experts, top_k 4,096: still running after 2
    // minutes, 2026-12-06 review; top_k 1,024 took 21 s). A DeepSeek-V3-like plan draws about 5e8.
    const double pairs = 4.0 * cfg.model.layers * p.ep * p.expert_tp *
                         (static_cast<double>(p.micro_batch) * cfg.model.seq_len / (p.tp * p.cp)) * m.top_k;
    // Per pair, the draws of its pick (the j-th of a token's picks finds a free expert with
    // chance r = the weight not yet taken, up to 16 tries) plus, when all 16 miss, the fallback's
    // two passes over the experts (about a quarter of a draw per expert, measured on 64 and 256
    // experts); averaged over the token's picks. The weight taken is the j heaviest
    // experts' (what a skewed draw takes first; (experts - j) / experts under uniform routing):
    // until 2026-12-06 the uniform figure for every routing, and 256 experts, top_k 128 under
    // zipf s = 10 ran for minutes (about 200 s) where uniform routing takes 5.
    std::vector<double> w = routing_weights(m);
    std::sort(w.begin(), w.end(), std::greater<>());
    double total = 0;
    for (const double x : w) total += x;
    double taken = 0;
    double per_token = 0;
    for (int j = 0; j < m.top_k; ++j) {
      const double r = total > 0 ? std::max(0.0, 1.0 - taken / total) : 0.0;
      taken += w[static_cast<size_t>(j)];
      const double fallback = m.experts / 4.0;
      if (r <= 0) {
        per_token += 16 + fallback;
        continue;
      }
      const double miss16 = std::pow(1.0 - r, 16);
      per_token += (1.0 - miss16) / r + miss16 * fallback;
    }
    const double retries = per_token / m.top_k;
    constexpr double kMaxRoutingWork = 4e9;
    if (pairs * retries > kMaxRoutingWork) {
      char about[32], draws[32];
      std::snprintf(about, sizeof about, "%.3g", pairs);
      std::snprintf(draws, sizeof draws, "%.3g", retries);
      fail("model.moe.top_k", std::string("drawing the routing would take minutes: about ") + about +
                                  " token-expert pairs (4 draws x " + str(cfg.model.layers) + " layers x ep " +
                                  str(p.ep) + " x expert_tp " + str(p.expert_tp) + " x a micro-batch's tokens per GPU x top_k " +
                                  str(m.top_k) + "), each drawn about " + draws +
                                  " times as top_k nears the experts or skewed routing leaves little weight untaken; at "
                                  "most 4e9 draws: lower top_k, ep or the micro-batch");
    }
  }
  if (m.first_dense_layers >= cfg.model.layers) {
    fail("model.moe.first_dense_layers", "leaves no MoE layer: must be below model.layers (" +
                                             str(cfg.model.layers) + ")");
  }
  if (m.routing == MoeRouting::kLoads) {
    if (static_cast<int>(m.loads.size()) != m.experts) {
      fail("model.moe.loads", "needs one weight per expert (" + str(m.experts) + "); got " +
                                  str(static_cast<long long>(m.loads.size())));
    } else {
      int positive = 0;
      for (const double v : m.loads) positive += v > 0 ? 1 : 0;
      if (positive < m.top_k) {
        fail("model.moe.loads", "needs at least top_k (" + str(m.top_k) + ") weights above zero; got " + str(positive));
      }
    }
  } else if (!m.loads.empty()) {
    fail("model.moe.loads", "is used only with routing: loads");
  }
  if (m.capacity_factor > 0 && m.capacity_factor < 1.0) {
    fail("model.moe.capacity_factor", "must be 0 (dropless) or at least 1; got " + format_number(m.capacity_factor));
  }
  if (m.experts % p.ep != 0) {
    fail("parallelism.ep", "must divide model.moe.experts (" + str(m.experts) + ") so that every GPU holds "
                           "the same number of experts; got ep = " + str(p.ep));
  }
  const int f = m.expert_ffn_hidden > 0 ? m.expert_ffn_hidden
                                        : (cfg.model.ffn_hidden > 0 ? cfg.model.ffn_hidden : 4 * cfg.model.hidden);
  if (f % p.expert_tp != 0) {
    fail("parallelism.expert_tp", "must divide the expert FFN width (" + str(f) + "); got " + str(p.expert_tp));
  }
  if (p.tp * p.pp * p.cp <= 0 || cfg.cluster.gpus % (p.tp * p.pp * p.cp) != 0) return;  // validate_plan says why
  const long long stage_gpus = cfg.cluster.gpus / p.pp;
  const long long expert_group = static_cast<long long>(p.ep) * p.expert_tp;
  if (stage_gpus % expert_group != 0) {
    fail("parallelism.ep", "ep x expert_tp (" + str(p.ep) + " x " + str(p.expert_tp) + " = " + str(expert_group) +
                               ") must divide the GPUs of a pipeline stage (gpus / pp = " + str(stage_gpus) + ")");
  }
  if (p.expert_tp > cfg.cluster.gpus_per_node || cfg.cluster.gpus_per_node % p.expert_tp != 0) {
    fail("parallelism.expert_tp", "expert tensor parallelism stays inside a node: must divide "
                                  "cluster.gpus_per_node (" + str(cfg.cluster.gpus_per_node) + "); got " +
                                      str(p.expert_tp));
  }
}

}  // namespace clustersim
