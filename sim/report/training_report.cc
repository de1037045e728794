// SPDX-License-Identifier: Apache-2.0
#include "sim/report/training_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <utility>
#include <vector>

#include "sim/core/error.h"
#include "sim/engine/straggler_model.h"
#include "sim/report/html_report.h"
#include "sim/report/internal/html_text.h"
#include "sim/report/internal/straggler_words.h"
#include "sim/report/link_loads_json.h"
#include "sim/report/trace_writer.h"
#include "workloads/moe.h"
#include "workloads/transformer.h"

namespace clustersim::report {
namespace {

// The summary adds the causal count where it reads under this fraction of the MFU.
constexpr double kCausalNoteBelow = 0.95;

// An MFU counted with causal attention (work::FlopCount::model_causal) instead of the whole
// score matrix: the same time, fewer model FLOPs.
double causal_mfu(const engine::TrainingEstimate& est, double mfu) {
  return est.flops.model.n > 0 ? mfu * est.flops.model_causal.n / est.flops.model.n : 0.0;
}
// The same for HFU (work::FlopCount::hardware_causal): at a million tokens the convention's HFU
// read 87% where the causal kernels ran half of what it counted (QA, 2026-12-08).
double causal_hfu(const engine::TrainingEstimate& est, double hfu) {
  return est.flops.hardware.n > 0 ? hfu * est.flops.hardware_causal.n / est.flops.hardware.n : 0.0;
}

// results.json `moe`: the MoE plan, active parameters and the per-layer all-to-all and imbalance.
Json moe_json(const ScenarioConfig& cfg, const engine::TrainingEstimate& est) {
  const MoeConfig& m = *cfg.model.moe;
  Json o = Json::object();
  o.set("experts", m.experts);
  o.set("top_k", m.top_k);
  o.set("shared_experts", m.shared_experts);
  o.set("moe_layers", work::moe_layer_count(cfg.model));
  o.set("routing", to_string(m.routing));
  o.set("ep", cfg.parallelism.ep);
  o.set("expert_tp", cfg.parallelism.expert_tp);
  o.set("attention_parallel", to_string(cfg.training.attention_parallel));
  o.set("a2a_chunks", cfg.training.overlap.a2a_chunks);
  o.set("moe_grouped_gemm", cfg.training.moe_grouped_gemm);  // since 2026-12-07
  o.set("comm_precision", to_string(cfg.training.comm_precision));
  o.set("active_parameters_per_token", static_cast<int64_t>(std::llround(work::moe_active_params(cfg.model))));
  o.set("mfu_note", engine::kMoeMfuNote);
  o.set("critical_stage", est.critical_stage);
  double worst = 1.0;
  Time a2a, exposed;
  Json& layers = o.set("layers", Json::array());
  for (const engine::MoeLayerReport& l : est.moe_layers) {
    Json row = Json::object();
    row.set("layer", l.layer);
    row.set("imbalance", l.imbalance);
    row.set("dropped_pairs_fraction", l.dropped_fraction);
    row.set("a2a_s", l.a2a.as_s());
    row.set("a2a_exposed_s", l.a2a_exposed.as_s());
    row.set("expert_compute_s", l.expert_compute.as_s());
    row.set("chunks", l.chunks);
    row.set("a2a_bytes_max_gpu", l.a2a_bytes_max_gpu.n);
    layers.push(row);
    worst = std::max(worst, l.imbalance);
    a2a += l.a2a;
    exposed += l.a2a_exposed;
  }
  o.set("max_imbalance", worst);
  o.set("a2a_per_microbatch_s", a2a.as_s());
  o.set("a2a_exposed_per_microbatch_s", exposed.as_s());
  return o;
}

constexpr auto fmt = &internal::format_number;

// "175.0B", "125M": billions from one billion, millions below (a tiny model read "0.0B").
std::string parameter_count(double n) {
  return n >= 999.5e6 ? fmt("%.1fB", n / 1e9) : fmt("%.3gM", n / 1e6);
}

}  // namespace

std::vector<std::pair<const char*, Time>> breakdown_parts(const engine::TrainingBreakdown& b, bool moe) {
  std::vector<std::pair<const char*, Time>> parts = {
      {"compute", b.compute}, {"tp_exposed", b.tp_exposed}, {"pp_exposed", b.pp_exposed},
      {"bubble", b.bubble},   {"dp_exposed", b.dp_exposed}, {"optimizer", b.optimizer}};
  if (moe) parts.emplace_back("ep_exposed", b.ep_exposed);  // MoE only: dense keys stay as they were
  if (b.step_stall > Time::zero()) parts.emplace_back("step_stall", b.step_stall);  // only when set
  return parts;
}

Json training_results(const ScenarioConfig& cfg, const calib::HardwareProfile& hw,
                      const engine::TrainingEstimate& est, const std::optional<SlowedHeadline>& slowed) {
  // The headline: the stragglers' where they slow the run (mfu_causal with them since 2026-12-07:
  // it was the straggler-free one, above mfu on the 175B job with slow hosts; QA).
  const SlowedHeadline head = slowed.value_or(SlowedHeadline{est.iteration, est.tokens_per_s, est.mfu, est.hfu});
  Json r = Json::object();
  r.set("kind", "training");
  r.set("scenario", scenario_name(cfg));
  r.set("fidelity", to_string(cfg.network.fidelity));
  r.set("gpu", hw.name);
  r.set("gpus", cfg.cluster.gpus);
  Json& plan = r.set("plan", Json::object());
  plan.set("tp", cfg.parallelism.tp);
  plan.set("pp", cfg.parallelism.pp);
  plan.set("vpp", cfg.parallelism.vpp);
  plan.set("cp", cfg.parallelism.cp);
  plan.set("dp", est.dp);
  plan.set("micro_batch", cfg.parallelism.micro_batch);
  plan.set("micro_batches", est.micro_batches);
  plan.set("global_batch", cfg.training.global_batch);
  plan.set("zero_stage", cfg.parallelism.zero_stage);
  plan.set("recompute", to_string(cfg.training.recompute));
  if (!cfg.parallelism.stage_layers.empty()) plan.set("stage_layers", internal::index_array(cfg.parallelism.stage_layers));
  r.set("iteration_time_s", head.iteration.as_s());
  r.set("tokens_per_s", head.tokens_per_s);
  r.set("mfu", head.mfu);
  r.set("hfu", head.hfu);
  r.set("mfu_causal", causal_mfu(est, head.mfu));
  r.set("hfu_causal", causal_hfu(est, head.hfu));
  r.set("mfu_definition", engine::kMfuDefinition);
  Json& bd = r.set("breakdown", Json::object());
  const bool moe = cfg.model.moe.has_value();
  for (const auto& [name, t] : breakdown_parts(est.breakdown, moe)) bd.set(std::string(name) + "_s", t.as_s());
  Json& frac = r.set("breakdown_fraction", Json::object());
  for (const auto& [name, t] : breakdown_parts(est.breakdown, moe)) frac.set(name, t / est.iteration);
  if (cfg.network.fidelity == Fidelity::kAnalytical && cfg.parallelism.zero_stage >= 2 && est.micro_batches > 1) {
    r.set("dp_micro_batch_backlog_s", est.dp_micro_batch_backlog.as_s());
  }
  Json& fl = r.set("flops", Json::object());
  fl.set("model_per_iteration", est.flops.model.n);
  fl.set("hardware_per_iteration", est.flops.hardware.n);
  fl.set("model_causal_per_iteration", est.flops.model_causal.n);
  fl.set("hardware_causal_per_iteration", est.flops.hardware_causal.n);
  fl.set("model_per_token", work::model_flops_per_token(cfg.model));
  fl.set("achieved_tflops_per_gpu", head.mfu * hw.peak(cfg.training.precision).as_tflops());
  r.set("parameters", static_cast<int64_t>(std::llround(work::count_params(cfg.model).total)));  // a count: an integer
  Json& mem = r.set("memory_per_gpu_gib", Json::object());
  mem.set("weights", est.memory.weights.as_gib());
  mem.set("gradients", est.memory.gradients.as_gib());
  mem.set("optimizer", est.memory.optimizer.as_gib());
  mem.set("activations", est.memory.activations.as_gib());
  mem.set("total", est.memory.total().as_gib());
  mem.set("usable", est.memory_capacity.as_gib());
  if (moe) r.set("moe", moe_json(cfg, est));
  if (cfg.network.fidelity == Fidelity::kAnalytical && est.contention.routed) {
    // The routes the analytical level gave the DP rings (the flow level measures its own).
    const engine::FabricContention& c = est.contention;
    Json& fc = r.set("fabric_contention", Json::object());
    fc.set("dp_ring_slowdown", c.dp);
    if (c.draws > 1) {
      fc.set("ecmp_draws", c.draws);
      fc.set("dp_ring_slowdown_min", c.dp_low);
      fc.set("dp_ring_slowdown_max", c.dp_high);
    }
    if (moe) fc.set("expert_dp_ring_slowdown", c.expert_dp);
    const auto by_stage = [&](const char* key, const std::vector<double>& v) {
      if (v.empty()) return;
      Json& a = fc.set(key, Json::array());
      for (const double x : v) a.push(x);
    };
    if (c.stage_draws.size() == 1) {  // several draws: priced one by one, no one figure per stage
      by_stage("dp_ring_slowdown_by_stage", c.stage_draws.front().dp);
      if (moe) by_stage("expert_dp_ring_slowdown_by_stage", c.stage_draws.front().expert_dp);
    }
    by_stage("pp_send_slowdown_forward_by_stage", c.pp_forward);
    by_stage("pp_send_slowdown_backward_by_stage", c.pp_backward);
    if (cfg.model.tied_embeddings && cfg.parallelism.pp > 1) fc.set("embedding_sync_slowdown", c.embedding);
    if (cfg.parallelism.cp > 1) fc.set("cp_ring_slowdown", c.cp);
    if (cfg.parallelism.tp > 1 && !cfg.model.moe) fc.set("tp_group_slowdown", c.tp);
    if (moe && !c.a2a.empty()) fc.set("expert_all_to_all_slowdown_max", *std::max_element(c.a2a.begin(), c.a2a.end()));
    fc.set("most_loaded_link", c.link);
    fc.set("most_loaded_link_sub_flows", c.sub_flows);
    fc.set("most_loaded_link_traffic", c.link_traffic);
  }
  return r;
}

std::string training_summary(const ScenarioConfig& cfg, const calib::HardwareProfile& hw,
                             const engine::TrainingEstimate& est, const std::optional<SlowedHeadline>& slowed) {
  std::ostringstream o;
  const ParallelismConfig& p = cfg.parallelism;
  o << "scenario     " << scenario_name(cfg) << "\n";
  o << "cluster      " << cfg.cluster.gpus << " x " << hw.name << " (" << cfg.cluster.gpus_per_node
    << " per node, " << cfg.cluster.nics_per_node << " x " << to_string(cfg.cluster.nic_bandwidth) << " NICs)\n";
  o << "model        " << (cfg.model.name.empty() ? "" : cfg.model.name + ", ")
    << parameter_count(work::count_params(cfg.model).total) << " parameters"
    // An MoE model's active parameters beside its total (results.json had them alone until
    // 2026-12-07; QA).
    << (cfg.model.moe ? ", " + parameter_count(work::moe_active_params(cfg.model)) + " active per token" : std::string())
    // A sliding window changes both the time and the FLOPs MFU counts: shown (since 2026-12-06).
    << (cfg.model.attention_window > 0 && cfg.model.attention_window < cfg.model.seq_len
            ? "; sliding-window attention over " + std::to_string(cfg.model.attention_window) + " of " +
                  std::to_string(cfg.model.seq_len) + " tokens"
            : std::string())
    << "\n";
  o << "plan         tp " << p.tp << ", pp " << p.pp << ", vpp " << p.vpp << ", cp " << p.cp << ", dp " << est.dp
    << "; micro-batch " << p.micro_batch << " x " << est.micro_batches << " per pipeline; ZeRO-" << p.zero_stage
    << "; recompute " << to_string(cfg.training.recompute) << "\n";
  if (!p.stage_layers.empty()) {
    o << "             layers per stage " << internal::layer_map_list(cfg)
      << " (stragglers.stage_layers: an MoE model's layer map, priced in every figure)\n";
  }
  o << "fidelity     " << to_string(cfg.network.fidelity) << "\n\n";
  const SlowedHeadline head = slowed.value_or(SlowedHeadline{est.iteration, est.tokens_per_s, est.mfu, est.hfu});
  // An uneven layer split alone is the plan, compared with the even split (review, 2026-12-07: it
  // read as stragglers, beside a breakdown of the even split under that name).
  const std::string without = slowed ? " " + std::string(internal::baseline_words(cfg)) + ")" : ")";
  o << "iteration    " << to_string(head.iteration)
    << (slowed ? "   (" + to_string(est.iteration) + without : std::string()) << "\n";
  o << "tokens/s     " << fmt("%.4g", head.tokens_per_s)
    << (slowed ? "   (" + fmt("%.4g", est.tokens_per_s) + without : std::string()) << "\n";
  o << "MFU          " << fmt("%.1f%%", 100 * head.mfu) << "   (HFU " << fmt("%.1f%%", 100 * head.hfu) << ", "
    << fmt("%.1f", head.mfu * hw.peak(cfg.training.precision).as_tflops()) << " model TFLOP/s per GPU"
    << (slowed ? "; MFU " + fmt("%.1f%%", 100 * est.mfu) + without : std::string(")")) << "\n";
  o << "             " << engine::kMfuDefinition << "\n";
  // Where the convention counts far more than causal attention runs (long sequences), the MFU it
  // gives can pass what the GPU can execute: say what it reads counted causally.
  if (const double causal = causal_mfu(est, head.mfu); causal < kCausalNoteBelow * head.mfu) {
    o << "             " << (head.mfu > 1.0 ? "MFU passes 100% as the convention counts attention FLOPs causal attention never runs; " : "")
      << "counting attention over its causal triangle (about half the score matrix), MFU "
      << fmt("%.1f%%", 100 * causal) << " (mfu_causal), HFU " << fmt("%.1f%%", 100 * causal_hfu(est, head.hfu))
      << " (hfu_causal)\n";
  }
  if (cfg.model.moe) o << "             " << engine::kMoeMfuNote << "\n";
  o << (!slowed                                 ? "\nwhere the time goes\n"
        : cfg.stragglers.only_stage_layers() ? "\nwhere the time goes (the layers split evenly, " + to_string(est.iteration) +
                            "; stragglers.stage_layers' split is not broken down)\n"
                      : std::string("\nwhere the time goes (without stragglers)\n"));
  for (const auto& [name, t] : breakdown_parts(est.breakdown, cfg.model.moe.has_value())) {
    char line[128];
    // tp_exposed holds the CP rings too (the JSON key keeps its name); the text says so.
    const bool with_cp = std::string(name) == "tp_exposed" && cfg.parallelism.cp > 1;
    std::snprintf(line, sizeof line, "  %-12s %12s  %5.1f%%%s\n", name, to_string(t).c_str(),
                  100.0 * (t / est.iteration), with_cp ? "  (TP and CP)" : "");
    o << line;
  }
  if (cfg.network.fidelity == Fidelity::kAnalytical && est.dp_micro_batch_backlog > Time::zero()) {
    o << "  (of dp_exposed, " << to_string(est.dp_micro_batch_backlog) << " is ZeRO-" << p.zero_stage
      << "'s per-micro-batch gradient reductions that the passes do not hide; ZeRO-1 reduces once per step)\n";
  }
  // One decimal, three significant digits below 1 GiB (a small model read 0.0 of 76.6).
  const auto gib = [](Bytes b) { return fmt(b.as_gib() >= 1 ? "%.1f" : "%.3g", b.as_gib()); };
  o << "\nmemory per GPU  " << gib(est.memory.total()) << " of " << gib(est.memory_capacity)
    << " GiB usable (weights " << gib(est.memory.weights) << ", gradients " << gib(est.memory.gradients)
    << ", optimizer " << gib(est.memory.optimizer) << ", activations " << gib(est.memory.activations) << ")";
  if (est.memory.total() > est.memory_capacity) o << "  OVER CAPACITY (training.memory_check: false)";
  o << "\n";
  if (cfg.network.fidelity == Fidelity::kAnalytical && est.contention.routed) {
    const engine::FabricContention& c = est.contention;
    o << "\nfabric       routes slow the DP rings " << fmt("%.2fx", c.dp);
    if (cfg.model.moe) o << ", expert rings " << fmt("%.2fx", c.expert_dp);
    if (cfg.model.tied_embeddings && p.pp > 1) o << ", embedding sync " << fmt("%.2fx", c.embedding);
    if (p.cp > 1) o << ", CP rings " << fmt("%.2fx", c.cp);
    if (p.tp > 1 && !cfg.model.moe && c.tp > 1) o << ", TP groups " << fmt("%.2fx", c.tp);
    o << " against their NIC-bound time (every stage's at once)\n";
    if (!c.pp_forward.empty()) {
      const double fwd = *std::max_element(c.pp_forward.begin(), c.pp_forward.end());
      const double bwd = *std::max_element(c.pp_backward.begin(), c.pp_backward.end());
      o << "             pipeline sends up to " << fmt("%.2fx", std::max(fwd, bwd))
        << " (a stage's sends on average, with the stages that send the same way at once)\n";
    }
    if (cfg.model.moe && !c.a2a.empty()) {
      o << "             expert all-to-alls up to " << fmt("%.2fx", *std::max_element(c.a2a.begin(), c.a2a.end()))
        << " (a layer's dispatch, its stage's expert domains at once)\n";
    }
    if (!c.link.empty()) {
      // Whose flows, since the slowest set by slowdown need not cost the most (a network
      // engineer's QA, 2026-12-07: a DP ring link at 4.00x named where the all-to-all at 2.61x
      // cost 1.45 s of the step and the rings 33 ms).
      o << "             most loaded link " << c.link << ", " << c.sub_flows << " sub-flows of the " << c.link_traffic
        << " (ECMP collisions or oversubscription; the slowest set by its slowdown, not by what it costs the step)\n";
    }
    // Which flows collide is the hash's draw: a change of fabric shape redraws it, and a
    // cheaper fabric can come out faster (up to 60% apart on otherwise equal plans).
    if (cfg.network.routing == Routing::kEcmp && c.draws > 1) {
      // Every slowdown above is the draws' mean, the all-to-alls' too (the line named the DP rings
      // alone until 2026-12-06).
      o << "             every slowdown above is the mean over " << c.draws << " ECMP hash draws"
        << fmt(" (DP rings %.2fx to ", c.dp_low) << fmt("%.2fx by draw)\n", c.dp_high);
    } else if (cfg.network.routing == Routing::kEcmp && c.dp > 1.0) {
      o << "             ECMP's hash decides which flows collide: network.ecmp_seed redraws it (other seeds, or\n"
           "             another fabric shape, can give other slowdowns; network.ecmp_draws: 8 prices the mean\n"
           "             over 8 draws)\n";
    }
  }
  if (cfg.model.moe && !est.moe_layers.empty()) {
    o << "\nMoE layers of stage " << est.critical_stage << " (per micro-batch, forward + backward; ep "
      << cfg.parallelism.ep << ", expert_tp " << cfg.parallelism.expert_tp << ", attention "
      << to_string(cfg.training.attention_parallel) << ", comm " << to_string(cfg.training.comm_precision) << ")\n";
    o << "  layer  imbalance   all-to-all     exposed      experts  chunks\n";
    for (const engine::MoeLayerReport& l : est.moe_layers) {
      char line[160];
      std::snprintf(line, sizeof line, "  %5d  %9.3f  %11s  %10s  %11s  %6d\n", l.layer, l.imbalance, to_string(l.a2a).c_str(),
                    to_string(l.a2a_exposed).c_str(), to_string(l.expert_compute).c_str(), l.chunks);
      o << line;
    }
    double dropped = 0;
    for (const engine::MoeLayerReport& l : est.moe_layers) dropped = std::max(dropped, l.dropped_fraction);
    if (dropped > 0) {
      o << fmt("  model.moe.capacity_factor drops up to %.1f%% of the token-expert pairs (a layer's); MFU and HFU "
               "count every token's expert FLOPs, dropped or not (the nominal model FLOPs), so they read high\n",
               100 * dropped);
    }
  }
  return o.str();
}

namespace {

Json breakdown_json(const engine::TrainingBreakdown& b, bool moe) {
  Json out = Json::object();
  for (const auto& [name, t] : breakdown_parts(b, moe)) out.set(std::string(name) + "_s", t.as_s());
  return out;
}

}  // namespace

Json flow_training_results(const ScenarioConfig& cfg, const calib::HardwareProfile& hw,
                           const engine::FlowTrainingResult& flow) {
  Json r = training_results(cfg, hw, flow.estimate);
  Json& f = r.set("flow", Json::object());
  f.set("folded", flow.folded);
  f.set("rank_groups_simulated", flow.rank_groups);
  f.set("ops", flow.ops);
  f.set("flows", flow.flows);
  f.set("wall_time_s", flow.wall_seconds);
  f.set("critical_rank_group", flow.groups.empty() ? std::string() : flow.groups[flow.critical_group].name);
  f.set("analytical_iteration_time_s", flow.analytical.iteration.as_s());
  f.set("analytical_mfu", flow.analytical.mfu);
  Json& groups = r.set("rank_groups", Json::array());
  for (const engine::RankGroupTiming& g : flow.groups) {
    Json row = Json::object();
    row.set("name", g.name);
    row.set("stage", g.stage);
    row.set("end_s", g.end.as_s());
    row.set("breakdown", breakdown_json(g.breakdown, cfg.model.moe.has_value()));
    // One entry per stretch of the path spent in one rank group, its time by kind (the path
    // alternates compute and TP thousands of times; by stretch it stays short).
    Json& path = row.set("critical_path", Json::array());
    size_t i = 0;
    while (i < g.critical_path.size()) {
      const int32_t group = g.critical_path[i].group;
      std::vector<std::pair<std::string, double>> kinds;
      for (; i < g.critical_path.size() && g.critical_path[i].group == group; ++i) {
        const engine::CriticalSegment& s = g.critical_path[i];
        auto it = std::find_if(kinds.begin(), kinds.end(), [&](const auto& k) { return k.first == s.kind; });
        if (it == kinds.end()) kinds.emplace_back(s.kind, s.time.as_s());
        else it->second += s.time.as_s();
      }
      Json seg = Json::object();
      seg.set("group", flow.group_names[group]);
      for (const auto& [kind, seconds] : kinds) seg.set(kind + "_s", seconds);
      path.push(seg);
    }
    groups.push(row);
  }
  Json& links = r.set("links", Json::object());
  links.set("tiers", tier_loads_json(flow.tiers));
  links.set("top_links", link_loads_json(flow.top_links));
  links.set("busiest_fabric_links", link_loads_json(flow.busiest_fabric_links));
  // Every link direction degraded or failed (network.faults, stragglers.nics) with its load, so a
  // run shows its faults applied, and whether this job's traffic crossed them (since 2026-12-06).
  links.set("degraded", link_loads_json(flow.degraded_links));
  return r;
}

AnalyticalPeer analytical_peer(const ScenarioConfig& cfg, const calib::HardwareProfile& hw,
                               const engine::FlowTrainingResult& flow) {
  const bool faults = !cfg.network.faults.empty();
  AnalyticalPeer peer{flow.analytical.iteration, flow.analytical.mfu, false, faults};
  if (cfg.stragglers.empty() || engine::replay_passes(cfg) > engine::kMaxPassesPerReplay) return peer;
  try {
    const engine::StragglerImpact s = engine::simulate_stragglers(
        faults ? engine::without_network_faults(cfg) : cfg, hw, engine::analytical_level());
    peer = AnalyticalPeer{s.iteration, s.mfu, true, faults};
  } catch (const BadInput&) {
    // A source the replay refuses where the flow level ran: the closed form, labelled as such.
  }
  return peer;
}

std::string flow_training_summary(const ScenarioConfig& cfg, const calib::HardwareProfile& hw,
                                  const engine::FlowTrainingResult& flow, const AnalyticalPeer& peer) {
  std::ostringstream o;
  o << training_summary(cfg, hw, flow.estimate);
  o << "\nflow level   " << flow.rank_groups << " rank groups simulated" << (flow.folded ? " (folded: DP replica 0 per stage; every replica's DP flows, and its TP/CP/pipeline flows between nodes that meet replica 0's, on the fabric)" : "")
    << ", " << flow.ops << " ops, " << flow.flows << " flows, " << fmt("%.2f", flow.wall_seconds) << " s wall\n";
  // Like with like: a run with stragglers beside the analytical level's with the same stragglers
  // (before 2026-12-05 beside its closed form without them, unlabelled: 175B on 12,288 GPUs with
  // 8 slow hosts, flow 6.498 s "/ analytical 6.313 s" = 1.029, where the analytical run with the
  // same stragglers gives 6.51 s).
  // Network faults are the flow level's alone (the analytical level refuses them): the peer is
  // without them, and says so (until 2026-12-06 it priced them on its routed collectives only, so
  // a degraded NVLink read as a 1.59x disagreement between the levels).
  const double ratio = flow.estimate.iteration / peer.iteration;
  const std::string no_faults = peer.without_faults ? " without the network faults" : "";
  const std::string flow_with = peer.without_faults ? "flow with faults" : "flow";
  if (cfg.stragglers.empty()) {
    o << "analytical   " << to_string(peer.iteration) << " per iteration" << no_faults << ", MFU "
      << fmt("%.1f%%", 100 * peer.mfu) << " (" << flow_with << " / analytical" << (peer.without_faults ? " without " : " ")
      << fmt("%.3f", ratio) << ")\n";
  } else if (peer.with_stragglers) {
    o << "analytical   " << to_string(peer.iteration) << " per iteration with the same " << internal::stragglers_name(cfg)
      << no_faults << ", MFU " << fmt("%.1f%%", 100 * peer.mfu) << " (" << flow_with << " / analytical "
      << fmt("%.3f", ratio) << "); " << internal::baseline_words(cfg) << " " << to_string(flow.analytical.iteration)
      << ", MFU "
      << fmt("%.1f%%", 100 * flow.analytical.mfu) << "\n";
  } else {
    o << "analytical   " << to_string(peer.iteration) << " per iteration without stragglers" << no_faults << ", MFU "
      << fmt("%.1f%%", 100 * peer.mfu) << " (" << flow_with << " and stragglers / analytical without "
      << fmt("%.3f", ratio) << ")\n";
  }
  const bool moe = cfg.model.moe.has_value();
  const bool stall = cfg.training.step_stall > Time::zero();
  o << "\nrank groups  (end; compute / tp / pp / bubble / dp / optimizer" << (moe ? " / ep" : "") << (stall ? " / stall" : "")
    << ", s)\n";
  for (size_t i = 0; i < flow.groups.size(); ++i) {
    const engine::RankGroupTiming& g = flow.groups[i];
    const engine::TrainingBreakdown& b = g.breakdown;
    char line[256];
    // Columns only some runs have: the all-to-all (MoE) and the step stall (dense output stays as it was).
    std::string extra = moe ? " / " + fmt("%.3f", b.ep_exposed.as_s()) : "";
    if (stall) extra += " / " + fmt("%.3f", b.step_stall.as_s());
    std::snprintf(line, sizeof line, "  %-14s %10s  %.3f / %.3f / %.3f / %.3f / %.3f / %.3f%s%s\n", g.name.c_str(),
                  to_string(g.end).c_str(), b.compute.as_s(), b.tp_exposed.as_s(), b.pp_exposed.as_s(), b.bubble.as_s(),
                  b.dp_exposed.as_s(), b.optimizer.as_s(), extra.c_str(),
                  static_cast<int>(i) == flow.critical_group ? "  <- critical" : "");
    o << line;
  }
  if (!flow.degraded_links.empty()) {
    // The faults as applied (network.faults, stragglers.nics), and a word where this job sends
    // nothing across a degraded one (failed ones carry nothing: the routes avoid them).
    size_t failed = 0, idle = 0;
    for (const engine::LinkLoad& l : flow.degraded_links) {
      if (l.capacity.bytes_per_s <= 0) ++failed;
      else if (l.bytes.n == 0) ++idle;
    }
    o << "\ndegraded     " << flow.degraded_links.size() << " link direction" << (flow.degraded_links.size() == 1 ? "" : "s")
      << " (network.faults, stragglers.nics; links.degraded in results.json):"
      << engine::degraded_list(flow.degraded_links, true) << "\n";
    if (failed > 0) o << "             " << failed << " failed: the routes avoid them (what that costs shows on the links beside them)\n";
    if (idle > 0) o << "             " << idle << " degraded but carrying none of this job's traffic\n";
  }
  if (!flow.tiers.empty()) {
    o << "\nfabric load  (tier: used link directions, bytes, peak utilisation mean / max"
      << (flow.folded ? "; folded: NVLink and bytes count the simulated rank groups' traffic and the other replicas'\n"
                        "              flows between nodes, not their flows inside a node)\n"
                      : ")\n");
    for (const engine::TierLoad& t : flow.tiers) {
      char line[200];
      std::snprintf(line, sizeof line, "  %-9s %8lld of %-8lld %12s  %.2f / %.2f\n", t.tier.c_str(),
                    static_cast<long long>(t.used_links), static_cast<long long>(t.links), to_string(t.bytes).c_str(),
                    t.mean_peak_utilisation, t.max_peak_utilisation);
      o << line;
    }
  }
  // Where most links peak at utilisation 1 the tiers do not say which fabric link is hot: the
  // busiest by the time their bytes take at line rate, against the iteration (since 2026-12-07).
  if (!flow.busiest_fabric_links.empty()) {
    o << "busiest fabric links (time their bytes take at line rate, of the " << to_string(flow.estimate.iteration)
      << " iteration; links.busiest_fabric_links):\n";
    for (size_t i = 0; i < flow.busiest_fabric_links.size() && i < 3; ++i) {
      const engine::LinkLoad& l = flow.busiest_fabric_links[i];
      const Time busy = Time::s(l.bytes.as_double() / l.capacity.bytes_per_s);
      o << "  " << l.name << "  " << to_string(busy) << fmt(" (%.0f%%)", 100 * (busy / flow.estimate.iteration)) << ", "
        << to_string(l.bytes) << " at " << fmt("%.0f", l.capacity.as_gbps()) << " Gbps\n";
    }
  }
  return o.str();
}

std::map<std::string, double> training_metrics(const engine::TrainingEstimate& est) {
  return {{"iteration_time_s", est.iteration.as_s()},
          {"tokens_per_s", est.tokens_per_s},
          {"mfu", est.mfu},
          {"hfu", est.hfu}};
}

RunOutput flow_training_output(const ScenarioConfig& cfg, const calib::HardwareProfile& hw,
                               const engine::FlowTrainingResult& flow) {
  RunOutput out;
  out.results = flow_training_results(cfg, hw, flow);
  const AnalyticalPeer peer = analytical_peer(cfg, hw, flow);
  out.summary = flow_training_summary(cfg, hw, flow, peer);
  out.trace_json = write_trace_json(flow);
  out.report_html = write_html_report(cfg, hw, flow, peer);
  out.metrics = training_metrics(flow.estimate);
  // 1 where one representative replica stood for the rest (training.fold_ranks): a sweep notes
  // finalists simulated both ways (sweep::folding_mix_note).
  out.metrics["folded"] = flow.folded ? 1.0 : 0.0;
  return out;
}

}  // namespace clustersim::report
