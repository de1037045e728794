// SPDX-License-Identifier: Apache-2.0
// Cross-field checks of a scenario: the plan must divide the model and the cluster.
#include <algorithm>
#include <cstdio>
#include <string>

#include "sim/core/error.h"
#include "sim/core/scenario.h"

namespace clustersim {
namespace {

class Checker {
 public:
  explicit Checker(const ScenarioConfig& cfg) : cfg_(cfg) {}

  void fail(const std::string& key, const std::string& message) {
    errors_.push_back(scenario_error(cfg_, key, message));
  }
  std::vector<InputError> take() { return std::move(errors_); }

 private:
  const ScenarioConfig& cfg_;
  std::vector<InputError> errors_;
};

std::string str(long long v) { return std::to_string(v); }

// Training at the packet level: every packet is an event, and an iteration moves bytes in
// proportion to the GPU count, so the level is kept to fabrics of a few hundred endpoints.
constexpr int kPacketTrainingMaxGpus = 512;

// The training plan and traffic checks (the sections have their own validate_* functions).
std::vector<InputError> validate_plan(const ScenarioConfig& cfg);

}  // namespace

InputError scenario_error(const ScenarioConfig& cfg, const std::string& key_path, const std::string& message) {
  const auto it = cfg.lines.find(key_path);
  return InputError{cfg.file, it == cfg.lines.end() ? 0 : it->second, key_path, message};
}

BadInput in_scenario(const ScenarioConfig& cfg, const BadInput& e) {
  std::vector<InputError> errors = e.errors();
  for (InputError& err : errors) {
    // Checks on the scenario's values outside the reader (the fabric's shape) name the file but
    // not the line: add it.
    const bool lineless = err.file == cfg.file && err.line == 0;
    if (err.file.empty() || lineless) err = scenario_error(cfg, err.key_path, err.message);
  }
  return BadInput(errors);
}

std::vector<InputError> validate_scenario(const ScenarioConfig& cfg) {
  std::vector<InputError> section_errors;
  validate_dcqcn(cfg, section_errors);
  validate_inference(cfg, section_errors);
  validate_faults(cfg, section_errors);
  validate_stragglers(cfg, section_errors);
  validate_moe(cfg, section_errors);
  std::vector<InputError> errors = validate_plan(cfg);
  errors.insert(errors.end(), section_errors.begin(), section_errors.end());
  return errors;
}

namespace {

std::vector<InputError> validate_plan(const ScenarioConfig& cfg) {
  Checker c(cfg);
  const ClusterConfig& cl = cfg.cluster;
  if (cl.gpus % cl.gpus_per_node != 0) {
    c.fail("cluster.gpus", "must be a multiple of cluster.gpus_per_node (" + str(cl.gpus_per_node) +
                               "); got " + str(cl.gpus));
  }
  if (cl.nics_per_node > cl.gpus_per_node || cl.gpus_per_node % cl.nics_per_node != 0) {
    c.fail("cluster.nics_per_node", "must divide cluster.gpus_per_node (" + str(cl.gpus_per_node) +
                                        ") so that each NIC serves the same number of GPUs; got " +
                                        str(cl.nics_per_node) +
                                        // Left to its default, say so (review, 2026-12-07: a
                                        // 1-GPU node read as a value the user never wrote).
                                        (cfg.given.count("cluster.nics_per_node") ? std::string()
                                                                                  : " (the default): set cluster.nics_per_node"));
  }
  if (cfg.network.fidelity == Fidelity::kFlow && cfg.network.solver == FlowSolver::kLmm &&
      cfg.network.routing == Routing::kSpray) {
    // SimGrid's LMM charges a flow its whole rate on every link of its route: a flow sprayed over
    // parallel links would be charged each of them in full (an all-to-all came out 34x slow).
    c.fail("network.solver", "the 'lmm' solver cannot split a sprayed flow over parallel links; use solver 'fluid' "
                             "(the default) with routing 'spray', or routing 'ecmp' or 'dmodk' with 'lmm'");
  }
  const bool congestion_level = cfg.network.fidelity == Fidelity::kFlowDcqcn || cfg.network.fidelity == Fidelity::kPacket;
  if (cfg.inference && congestion_level) {
    c.fail("network.fidelity", std::string("serving runs at the 'analytical' or 'flow' level; '") +
                                   to_string(cfg.network.fidelity) + "' runs training and network microbenchmarks (traffic:)");
  }
  if (!cfg.traffic && !cfg.inference && cfg.network.fidelity == Fidelity::kPacket && cl.gpus > kPacketTrainingMaxGpus) {
    c.fail("cluster.gpus", "training at the 'packet' level is limited to " + str(kPacketTrainingMaxGpus) +
                               " GPUs: it simulates every packet of every transfer (a few million events per "
                               "second), so a larger iteration would take hours; got " + str(cl.gpus) +
                               ". Use network.fidelity: flow+dcqcn (the same DCQCN, ECN and PFC as fluid "
                               "queues, for any size) or fewer GPUs");
  }
  if (cfg.traffic) {
    const TrafficConfig& t = *cfg.traffic;
    if (t.bytes_per_pair.n <= 0) c.fail("traffic.bytes_per_pair", "must be above zero");
    // Keep byte counts far from int64 and transfer times inside Time's range.
    const double pairs = t.pattern == TrafficPattern::kAllToAll ? static_cast<double>(cl.gpus) * (cl.gpus - 1)
                         : t.pattern == TrafficPattern::kIncast ? t.incast_senders
                                                                : cl.gpus;
    if (t.bytes_per_pair > Bytes::gib(1024)) {
      c.fail("traffic.bytes_per_pair", "must be at most 1TiB; got " + to_string(t.bytes_per_pair));
    } else if (pairs * t.bytes_per_pair.as_double() > 1e18) {
      char total[32];
      std::snprintf(total, sizeof total, "%.3g", pairs * t.bytes_per_pair.as_double());
      c.fail("traffic.bytes_per_pair", std::string("the pattern would move ") + total +
                                           " bytes in all; at most 1e18 are supported");
    }
    // Sub-flows the level must route and share: all-to-all grows as N^2 (the other patterns as N,
    // bounded by the GPU cap). The fluid solver's
    // work grows faster than the flow count when every flow shares links with every other
    // (all-to-all on 512 GPUs, 261,632 flows: 23 s; 1,024 GPUs: over 5 min), the analytical
    // level's memory linearly (1,024 GPUs: 0.4 GB).
    const double sub_flows = pairs * std::max(1, cfg.network.qps_per_connection);
    const double limit = cfg.network.fidelity == Fidelity::kAnalytical ? 8.4e6 : 5.3e5;
    if (t.pattern == TrafficPattern::kAllToAll && sub_flows > limit) {
      char text[200];
      std::snprintf(text, sizeof text,
                    "%s on %d GPUs is %.3g sub-flows (pairs x qps_per_connection); the %s level takes at most %.3g",
                    to_string(t.pattern), cl.gpus, sub_flows, to_string(cfg.network.fidelity), limit);
      c.fail("traffic.pattern", std::string(text) + (cfg.network.fidelity == Fidelity::kAnalytical
                                                         ? ": use fewer GPUs or queue pairs per connection"
                                                         : ": use network.fidelity: analytical, fewer GPUs or fewer "
                                                           "network.qps_per_connection"));
    }
    if (t.pattern == TrafficPattern::kIncast && t.incast_senders >= cl.gpus) {
      c.fail("traffic.incast_senders", "needs fewer senders than GPUs (" + str(cl.gpus) + "); got " +
                                           str(t.incast_senders));
    }
    if (t.pattern == TrafficPattern::kShift && t.shift >= cl.gpus) {
      c.fail("traffic.shift", "must be below cluster.gpus (" + str(cl.gpus) + ")");
    }
    return c.take();
  }
  if (cfg.inference) return c.take();  // serving: validate_inference checks model and pools

  const ModelConfig& m = cfg.model;
  const ParallelismConfig& p = cfg.parallelism;
  const int kv = m.kv_heads > 0 ? m.kv_heads : m.heads;
  // Heads of hidden / heads unless model.head_dim sizes them (since 2026-12-07 in training too:
  // before, training refused a head_dim whose heads did not make up the hidden size, as Qwen3's).
  if (m.head_dim == 0 && m.hidden % m.heads != 0) {
    c.fail("model.hidden", "must be divisible by model.heads (" + str(m.heads) +
                               ") unless model.head_dim is given; got " + str(m.hidden));
  }
  if (kv > m.heads || m.heads % kv != 0) {
    c.fail("model.kv_heads", "must divide model.heads (" + str(m.heads) + "); got " + str(kv));
  }
  if (m.heads % p.tp != 0) {
    c.fail("parallelism.tp", "must divide model.heads (" + str(m.heads) + ") so that each TP rank holds "
                             "whole heads; got tp = " + str(p.tp));
  }
  // Megatron-LM splits the MLP's columns over TP: each rank needs at least one (with fewer the
  // GEMMs are empty and the times overflow).
  if (m.ffn_hidden > 0 && (m.ffn_hidden < p.tp || m.ffn_hidden % p.tp != 0)) {
    c.fail("model.ffn_hidden", "must be a multiple of parallelism.tp (" + str(p.tp) +
                                   "): each TP rank holds ffn_hidden / tp of the MLP's columns, as Megatron-LM splits "
                                   "them; got " + str(m.ffn_hidden));
  }
  if (p.tp > 1 && kv != m.heads && kv % p.tp != 0 && p.tp % kv != 0) {
    c.fail("parallelism.tp", "must divide model.kv_heads (" + str(kv) + ") or be a multiple of it; got " +
                                 str(p.tp));
  }
  if (p.tp > cl.gpus_per_node) {
    c.fail("parallelism.tp", "a TP group is at most one node's GPUs (the default placement keeps it inside one): tp (" + str(p.tp) +
                                 ") must not exceed cluster.gpus_per_node (" + str(cl.gpus_per_node) + ")");
  } else if (cl.gpus_per_node % p.tp != 0) {
    c.fail("parallelism.tp", "must divide cluster.gpus_per_node (" + str(cl.gpus_per_node) + "); got " +
                                 str(p.tp));
  }
  const long long stages = static_cast<long long>(p.pp) * p.vpp;
  // Listed layers per stage (stragglers.stage_layers, checked there) may split unevenly, as Llama 3's
  // 126 layers over 16 stages: a dense stage's chunks then carry a fractional share of its layers,
  // an MoE stage's whole layers each (its list is ParallelismConfig::stage_layers; refused here
  // until 2026-12-07, so DeepSeek-V3's 61 layers over 16 stages could not be written).
  const bool listed_stages = !cfg.stragglers.stage_layers.empty() || !p.stage_layers.empty();
  if (m.layers % stages != 0 && !listed_stages) {
    // The documented way to run an uneven plan, named since 2026-12-06 (Llama 3 405B's 126 layers
    // over 16 stages; DeepSeek-V3's 61).
    c.fail("parallelism.pp", "pp x vpp (" + str(p.pp) + " x " + str(p.vpp) + " = " + str(stages) +
                                 ") must divide model.layers (" + str(m.layers) +
                                 "); or list each stage's layers in stragglers.stage_layers (pp entries, summing to "
                                 "model.layers: Llama 3 405B runs 126 layers as 7, 8, ..., 8, 7 over 16 stages" +
                                 (m.moe ? std::string(", and an MoE model's entries multiples of vpp") : "") + ")");
  }
  if (p.vpp > 1 && p.pp == 1) {
    c.fail("parallelism.vpp", "virtual stages need pipeline parallelism (pp > 1)");
  }
  if (m.seq_len % p.cp != 0) {
    // Name the whole rule (2 x cp, below) at once: a seq_len fixed for cp alone was refused again
    // (QA, 2026-12-08).
    c.fail("parallelism.cp", "must divide model.seq_len (" + str(m.seq_len) + "); got " + str(p.cp) +
                                 (p.cp > 1 ? " (and 2 x cp, " + str(2 * static_cast<long long>(p.cp)) +
                                                 ", must: the causal load balance cuts each sequence into 2 x cp chunks)"
                                           : std::string()));
  } else if (p.cp > 1 && m.seq_len % (2 * static_cast<long long>(p.cp)) != 0) {
    // Causal load balancing (Megatron-LM's context parallelism) cuts each sequence into 2 cp
    // chunks, each rank taking one from each end (accepted until 2026-12-07; review).
    c.fail("parallelism.cp", "2 x cp (" + str(2 * static_cast<long long>(p.cp)) + ") must divide model.seq_len (" +
                                 str(m.seq_len) + "): the causal load balance gives each CP rank two of 2 x cp chunks");
  } else if (p.sequence_parallel && p.tp > 1 && !m.moe && (m.seq_len / p.cp) % p.tp != 0) {
    // Sequence parallelism splits each CP rank's tokens over the TP ranks (MoE: moe_config's check).
    c.fail("model.seq_len", "with parallelism.sequence_parallel each CP rank's " + str(m.seq_len / p.cp) +
                                " tokens split over tp " + str(p.tp) + ": tp x cp (" +
                                str(static_cast<long long>(p.tp) * p.cp) + ") must divide model.seq_len (" +
                                str(m.seq_len) + ")");
  }
  const long long model_ranks = static_cast<long long>(p.tp) * p.pp * p.cp;
  if (cl.gpus % model_ranks != 0) {
    c.fail("cluster.gpus", "data parallelism is gpus / (tp x pp x cp) = " + str(cl.gpus) + " / " +
                               str(model_ranks) + ", which is not a whole number");
    return c.take();
  }
  const long long dp = cl.gpus / model_ranks;
  const long long per_replica = static_cast<long long>(p.micro_batch) * dp;
  if (cfg.training.global_batch % per_replica != 0) {
    c.fail("training.global_batch", "must be a multiple of micro_batch x dp = " + str(p.micro_batch) +
                                        " x " + str(dp) + " = " + str(per_replica) + "; got " +
                                        str(cfg.training.global_batch));
  } else {
    const long long micro_batches = cfg.training.global_batch / per_replica;
    if (micro_batches * p.vpp > 1'000'000) {
      c.fail("training.global_batch", "gives " + str(micro_batches) + " micro-batches x " + str(p.vpp) +
                                          " virtual stages per pipeline; at most 1,000,000 are supported "
                                          "(raise parallelism.micro_batch)");
    }
    if (p.vpp > 1 && micro_batches % p.pp != 0) {
      c.fail("training.global_batch", "interleaved 1F1B needs the micro-batch count per pipeline (" +
                                          str(micro_batches) + ") to be a multiple of pp (" + str(p.pp) + ")");
    }
  }
  if (cfg.training.dp_bucket_size != 0 && cfg.training.dp_bucket_size < 100'000) {
    c.fail("training.dp_bucket_size", "must be 0 (the default: Megatron's max(40M, 1M x dp) parameters) or at least 100,000 parameters; got " +
                                          str(cfg.training.dp_bucket_size));
  }
  if (cfg.training.step_stall < Time::zero() || cfg.training.step_stall > Time::s(3600)) {
    c.fail("training.step_stall", "must be between 0 and 1h per iteration; got " + to_string(cfg.training.step_stall));
  }
  if (m.attention_window > m.seq_len) {
    c.fail("model.attention_window",
           "must not exceed model.seq_len (" + str(m.seq_len) + "); 0 is full causal attention");
  }
  return c.take();
}

}  // namespace

}  // namespace clustersim
