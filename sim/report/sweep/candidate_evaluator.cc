// SPDX-License-Identifier: Apache-2.0
#include "sim/report/sweep/candidate_evaluator.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "sim/core/error.h"
#include "sim/core/scenario.h"
#include "sim/engine/analytical_training.h"
#include "sim/report/run_scenario.h"
#include "topology/clos_shape.h"
#include "workloads/placement.h"
#include "workloads/training_costs.h"
#include "workloads/transformer.h"

namespace clustersim::sweep {
namespace {

// The errors as one reason. An error about another file than the scenario (a trace, a GPU
// profile) names it: which path was tried is the point.
std::string join_errors(const BadInput& e, const std::string& scenario_file) {
  std::string s;
  for (const InputError& err : e.errors()) {
    const std::string file = err.file.empty() || err.file == scenario_file ? "" : err.file + ": ";
    s += (s.empty() ? "" : "; ") + file + (err.key_path.empty() ? err.message : err.key_path + ": " + err.message);
  }
  return s;
}

void add_plan_facts(const ScenarioConfig& cfg, Outcome& out) {
  if (cfg.inference) {
    // Serving pools may each have their own GPU: the GPUs by type, for the cost (finish_stage),
    // and their total, which the cost prices.
    std::map<std::string, int> by_type;
    for (const PoolConfig* p : given_pools(*cfg.inference)) {
      by_type[p->gpu.empty() ? cfg.cluster.gpu : p->gpu] += p->gpus;
    }
    std::string names;
    for (const auto& [gpu, n] : by_type) names += (names.empty() ? "" : "+") + gpu;
    out.info["gpu"] = names;
    out.info[kGpuCountsInfo] = gpu_counts_text(by_type);
    out.metrics["gpus"] = serving_gpus(*cfg.inference);
    return;
  }
  out.metrics["gpus"] = cfg.cluster.gpus;
  out.info["gpu"] = cfg.cluster.gpu;
  if (cfg.traffic) return;
  const ParallelismConfig& p = cfg.parallelism;
  out.metrics["tp"] = p.tp;
  out.metrics["pp"] = p.pp;
  out.metrics["vpp"] = p.vpp;
  out.metrics["cp"] = p.cp;
  out.metrics["dp"] = data_parallel_size(cfg);
  out.metrics["micro_batch"] = p.micro_batch;
  out.metrics["zero_stage"] = p.zero_stage;
  out.info["recompute"] = to_string(cfg.training.recompute);
}

// Candidate `index`'s scenario tree, run at `fidelity`.
YamlNode tree_at(const CandidateSpace& space, int64_t index, const std::string& fidelity) {
  YamlNode tree = space.tree(index);
  YamlNode level;
  level.kind = YamlNode::Kind::kScalar;
  level.scalar = fidelity;
  set_path(tree, "network.fidelity", level);
  return tree;
}

}  // namespace

std::string gpu_counts_text(const std::map<std::string, int>& by_type) {
  std::string text;
  for (const auto& [gpu, n] : by_type) text += (text.empty() ? "" : ", ") + std::to_string(n) + " " + gpu;
  return text;
}

std::map<std::string, int> gpu_counts_from_text(const std::string& text) {
  std::map<std::string, int> by_type;
  size_t at = 0;
  while (at < text.size()) {
    const size_t end = std::min(text.find(", ", at), text.size());
    const std::string entry = text.substr(at, end - at);
    const size_t space = entry.find(' ');
    if (space != std::string::npos) by_type[entry.substr(space + 1)] += std::atoi(entry.c_str());
    at = end + 2;
  }
  return by_type;
}

std::vector<std::string> analytical_notes(const CandidateSpace& space) {
  constexpr int64_t kSample = 1000;
  std::vector<int64_t> picks;
  const int64_t n = space.size();
  for (int64_t i = 0; i < std::min(n, kSample); ++i) picks.push_back(i);
  if (n > kSample) {
    for (int64_t k = 0; k < kSample; ++k) picks.push_back(k * n / kSample);
  }
  std::vector<std::string> notes;
  for (const int64_t i : picks) {
    try {
      const YamlNode tree = tree_at(space, i, "analytical");
      ScenarioConfig cfg = scenario_from_tree(tree, space.spec().base_origin);
      // training.fold_ranks is for the flow stage, which uses it: not a key the screen leaves unused
      // (QA 2026-12-07: a sweep that set it was told so).
      if (space.spec().flow_top_k > 0) cfg.training.fold_ranks = TrainingConfig{}.fold_ranks;
      for (const std::string& note : report::unused_key_notes(cfg)) {
        if (std::find(notes.begin(), notes.end(), note) == notes.end()) notes.push_back(note);
      }
    } catch (const BadInput&) {
      // An invalid candidate: its status says why.
    }
  }
  return notes;
}

std::vector<std::string> flow_stage_notes(const CandidateSpace& space, const std::vector<int64_t>& finalists) {
  // The finalists' modes (a sweep over inference.mode can mix them; code review 2026-12-07: a
  // sample of the whole space named colocated finalists where every finalist disaggregated).
  bool colocated = false, other = false;
  for (const int64_t i : finalists) {
    try {
      const ScenarioConfig cfg = scenario_from_tree(tree_at(space, i, "analytical"), space.spec().base_origin);
      if (!cfg.inference) return {};
      (cfg.inference->mode == ServingMode::kColocated ? colocated : other) = true;
    } catch (const BadInput&) {
    }
  }
  if (!colocated) return {};
  // (Review, 2026-12-07: the flow stage of a colocated serving sweep matched the screen to the
  // digit without a word.)
  return {std::string("flow stage: colocated serving sends nothing over the simulated fabric (its collectives are priced "
                      "in closed form), so ") +
          (other ? "its colocated finalists' " : "its finalists' ") +
          "flow figures are the analytical level's; prefill_decode and attention_ffn deployments send over it"};
}

std::vector<std::string> serving_notes(const CandidateSpace& space, const std::vector<int64_t>& ranked,
                                       const std::map<std::string, double>& best) {
  if (space.spec().kind != ScenarioKind::kInference || ranked.empty()) return {};
  std::vector<std::string> notes;
  int64_t moe = 0;
  for (const int64_t i : ranked) {
    try {
      const ScenarioConfig cfg = scenario_from_tree(tree_at(space, i, "analytical"), space.spec().base_origin);
      moe += cfg.inference && cfg.inference->moe.experts > 0 ? 1 : 0;
    } catch (const BadInput&) {
    }
  }
  if (moe > 0) {
    notes.push_back(std::to_string(moe) + " of the " + std::to_string(ranked.size()) +
                    " ranked candidates serve an MoE model, whose layers are priced at their roofline costs: against "
                    "TensorRT-LLM's published MoE serving rates such predictions run 1.2 to 2.4x high "
                    "(scenarios/validation/serving-moe.yaml), so read their throughput as an upper bound and their "
                    "cost_per_mtoken as a lower one");
  }
  const auto limited = [&space](const char* metric) {
    const std::vector<MetricLimit>& limits = space.spec().limits;
    return std::any_of(limits.begin(), limits.end(), [metric](const MetricLimit& l) { return l.metric == metric; });
  };
  if (best.count("unsteady_arrivals")) {
    notes.push_back("the best-ranked candidate's arrivals are far from steady (a trace's bursts and quiet spells: "
                    "load_verdict unsteady_arrivals): its served_fraction and ttft_growth compare quarters of the "
                    "arrivals that are not one load's; rank and constrain by the latency percentiles and "
                    "slo_attainment instead");
  }
  const auto served = best.find("served_fraction");
  const auto growth = best.find("ttft_growth");
  const bool short_served = served != best.end() && served->second < 0.95 && !limited("served_fraction");
  const bool growing = growth != best.end() && growth->second > 0.01 && !limited("ttft_growth");
  if (short_served || growing) {
    // The figures the run gave, and only those.
    std::string figures;
    char v[64];
    if (served != best.end()) {
      std::snprintf(v, sizeof v, "served_fraction %.3g", served->second);
      figures += v;
    }
    if (growth != best.end()) {
      std::snprintf(v, sizeof v, "%sttft_growth %.3g", figures.empty() ? "" : ", ", growth->second);
      figures += v;
    }
    notes.push_back("the best-ranked candidate does not keep up with the offered load (" + figures +
                    "; keeping up is 0.95 or more and 0.01 or less): its figures are a saturated deployment's; add "
                    "constraints such as served_fraction: {min: 0.95} and ttft_growth: {max: 0.01} to rank those that do");
  }
  return notes;
}

std::vector<std::string> memory_notes(const CandidateSpace& space, const std::map<std::string, double>& best) {
  const auto fits = best.find("memory_fits");
  if (space.spec().memory_fits || fits == best.end() || fits->second > 0) return {};
  const auto gib = best.find("memory_per_gpu_gib");
  char v[64] = "";
  if (gib != best.end()) std::snprintf(v, sizeof v, " (%.1f GiB per GPU)", gib->second);
  return {std::string("the best-ranked candidate does not fit in its GPUs' memory") + v +
          ": constraints.memory_fits: false ranks plans that overflow HBM; remove it (or give memory_fits: true) to "
          "rank only plans that fit, or check what the memory estimate leaves out (scenarios/README.md)"};
}

CandidateEvaluator::CandidateEvaluator(const CandidateSpace& space) : space_(space) {}

const calib::HardwareProfile& CandidateEvaluator::profile(const std::string& gpu, const std::string& dir) {
  auto& slot = profiles_[dir + "|" + gpu];
  if (!slot) slot = std::make_unique<calib::HardwareProfile>(calib::load_hardware_profile(gpu, dir));
  return *slot;
}

Outcome CandidateEvaluator::analytical(int64_t index) { return run(index, "analytical", true); }

Outcome CandidateEvaluator::finer(int64_t index) { return run(index, space_.spec().flow_fidelity, false); }

Outcome CandidateEvaluator::run(int64_t index, const std::string& fidelity, bool fast_path) {
  Outcome out;
  const SweepSpec& spec = space_.spec();
  const YamlNode tree = tree_at(space_, index, fidelity);
  ScenarioConfig cfg;
  try {
    cfg = scenario_from_tree(tree, spec.base_origin);
    topo::plan_clos(cfg.cluster, cfg.network, cfg.file);  // a fabric that cannot be built is invalid
  } catch (const BadInput& e) {
    out.status = kInvalid;
    out.reason = join_errors(e, spec.base_origin);
    return out;
  }
  add_plan_facts(cfg, out);
  // memory_fits: false keeps plans that overflow HBM, at every stage: the finer run would
  // otherwise refuse the very plans the screen ranked best (2026-12-05).
  if (!spec.memory_fits) cfg.training.memory_check = false;
  try {
    if (!cfg.traffic && !cfg.inference) {
      // Hardware profiles are parsed once per sweep, not once per candidate.
      const calib::HardwareProfile& hw = profile(cfg.cluster.gpu, cfg.cluster.source_dir);
      // The most loaded GPU's, as the run reports it: a sequence imbalance's heaviest replicas
      // included (before 2026-12-05 the mean sequences' memory, and an overflow of the heavy
      // replicas only was an `error` where other overflows are `no_fit`).
      const work::MemoryEstimate mem = work::most_loaded_memory_per_gpu(cfg);
      out.metrics["memory_per_gpu_gib"] = mem.total().as_gib();
      // The fit itself, whatever training.memory_check lets the run do.
      const auto misfit = engine::memory_misfit(cfg, hw);
      out.metrics["memory_fits"] = misfit.empty() ? 1 : 0;
      if (!misfit.empty() && spec.memory_fits) {
        out.status = kNoFit;
        // In a sweep constraints.memory_fits decides, not training.memory_check (QA, 2026-12-07:
        // the reason advised the key the candidate already set).
        out.reason = misfit.front().message;
        const std::string run_hint = "(training.memory_check: false runs it anyway)";
        if (const size_t at = out.reason.find(run_hint); at != std::string::npos) {
          out.reason.replace(at, run_hint.size(),
                             "(a sweep keeps such plans with constraints.memory_fits: false, whatever "
                             "training.memory_check says)");
        }
        return out;
      }
      if (fast_path && !cfg.faults && cfg.stragglers.empty() && cfg.network.faults.empty()) {
        // The analytical training level without run_scenario's report formatting.
        const engine::TrainingEstimate est = engine::estimate_training(cfg, hw, contention_.get(cfg, &draws_), &draws_);
        // As run_scenario: an iteration at the limit of simulated time is an error with run's
        // message, not a result (before 2026-12-05 global_batch 1e7 on 8 GPUs ranked first here,
        // 9223372 s at MFU 95.8%, where `clustersim run` exits 2). Every part of the breakdown
        // is at most the iteration, so the iteration alone tells.
        report::Json times = report::Json::object();
        times.set("iteration_time_s", est.iteration.as_s());
        report::refuse_saturated_times(cfg, times);
        out.metrics["iteration_time_s"] = est.iteration.as_s();
        out.metrics["tokens_per_s"] = est.tokens_per_s;
        out.metrics["mfu"] = est.mfu;
        out.metrics["hfu"] = est.hfu;
        return out;
      }
    }
    report::RunOptions options;
    options.placement_draws = false;  // plans are compared by the seed's placement
    const report::RunOutput r = report::run_scenario(cfg, options);
    for (const auto& [k, v] : r.metrics) out.metrics[k] = v;
    // Folded (training.fold_ranks: true) where pipeline sends or CP rings cross a tapered tier:
    // the sweep says so (folding_mix_note), as run's note does for one run.
    const auto folded = out.metrics.find("folded");
    // As run's folding notes, each on its own (QA 2026-12-07: a sweep's folded finalists said
    // nothing of the last two).
    if (folded != out.metrics.end() && folded->second > 0) {
      if (work::replica_lines_cross_taper(cfg)) {
        out.info[kFoldedOverTaperInfo] = "true";
      } else if (work::replica_lines_leave(cfg, {.cp_rings = false, .tapered_only = false})) {
        out.info[kFoldedInStepInfo] = "true";
      }
      if (work::groups_span_nodes(cfg, work::Dim::kTp) || work::groups_span_nodes(cfg, work::Dim::kCp)) {
        out.info[kFoldedGroupsAcrossInfo] = "true";
      }
    }
  } catch (const BadInput& e) {
    out.status = kError;
    out.reason = join_errors(e, spec.base_origin);
  } catch (const std::exception& e) {
    out.status = kFailed;
    out.reason = std::string("internal error: ") + e.what();
  }
  return out;
}

}  // namespace clustersim::sweep
