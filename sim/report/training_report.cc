// SPDX-License-Identifier: Apache-2.0
#include "sim/report/training_report.h"

#include <cstdio>
#include <sstream>
#include <utility>
#include <vector>

#include "workloads/transformer.h"

namespace clustersim::report {
namespace {

std::vector<std::pair<const char*, Time>> breakdown_parts(const engine::TrainingBreakdown& b) {
  return {{"compute", b.compute},       {"tp_exposed", b.tp_exposed}, {"pp_exposed", b.pp_exposed},
          {"bubble", b.bubble},         {"dp_exposed", b.dp_exposed}, {"optimizer", b.optimizer}};
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

}  // namespace

Json training_results(const ScenarioConfig& cfg, const calib::HardwareProfile& hw,
                      const engine::TrainingEstimate& est) {
  Json r = Json::object();
  r.set("kind", "training");
  r.set("scenario", cfg.name.empty() ? cfg.file : cfg.name);
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
  r.set("iteration_time_s", est.iteration.as_s());
  r.set("tokens_per_s", est.tokens_per_s);
  r.set("mfu", est.mfu);
  r.set("hfu", est.hfu);
  r.set("mfu_definition", engine::kMfuDefinition);
  Json& bd = r.set("breakdown", Json::object());
  for (const auto& [name, t] : breakdown_parts(est.breakdown)) bd.set(std::string(name) + "_s", t.as_s());
  Json& frac = r.set("breakdown_fraction", Json::object());
  for (const auto& [name, t] : breakdown_parts(est.breakdown)) frac.set(name, t / est.iteration);
  Json& fl = r.set("flops", Json::object());
  fl.set("model_per_iteration", est.flops.model.n);
  fl.set("hardware_per_iteration", est.flops.hardware.n);
  fl.set("model_per_token", work::model_flops_per_token(cfg.model));
  fl.set("achieved_tflops_per_gpu", est.mfu * hw.peak(cfg.training.precision).as_tflops());
  r.set("parameters", work::count_params(cfg.model).total);
  Json& mem = r.set("memory_per_gpu_gib", Json::object());
  mem.set("weights", est.memory.weights.as_gib());
  mem.set("gradients", est.memory.gradients.as_gib());
  mem.set("optimizer", est.memory.optimizer.as_gib());
  mem.set("activations", est.memory.activations.as_gib());
  mem.set("total", est.memory.total().as_gib());
  mem.set("usable", est.memory_capacity.as_gib());
  return r;
}

std::string training_summary(const ScenarioConfig& cfg, const calib::HardwareProfile& hw,
                             const engine::TrainingEstimate& est) {
  std::ostringstream o;
  const ParallelismConfig& p = cfg.parallelism;
  o << "scenario     " << (cfg.name.empty() ? cfg.file : cfg.name) << "\n";
  o << "cluster      " << cfg.cluster.gpus << " x " << hw.name << " (" << cfg.cluster.gpus_per_node
    << " per node, " << cfg.cluster.nics_per_node << " x " << to_string(cfg.cluster.nic_bandwidth) << " NICs)\n";
  o << "model        " << (cfg.model.name.empty() ? "" : cfg.model.name + ", ")
    << fmt("%.1f", work::count_params(cfg.model).total / 1e9) << "B parameters\n";
  o << "plan         tp " << p.tp << ", pp " << p.pp << ", vpp " << p.vpp << ", cp " << p.cp << ", dp " << est.dp
    << "; micro-batch " << p.micro_batch << " x " << est.micro_batches << " per pipeline; ZeRO-" << p.zero_stage
    << "; recompute " << to_string(cfg.training.recompute) << "\n";
  o << "fidelity     " << to_string(cfg.network.fidelity) << "\n\n";
  o << "iteration    " << to_string(est.iteration) << "\n";
  o << "tokens/s     " << fmt("%.4g", est.tokens_per_s) << "\n";
  o << "MFU          " << fmt("%.1f%%", 100 * est.mfu) << "   (HFU " << fmt("%.1f%%", 100 * est.hfu) << ", "
    << fmt("%.1f", est.mfu * hw.peak(cfg.training.precision).as_tflops()) << " model TFLOP/s per GPU)\n";
  o << "             " << engine::kMfuDefinition << "\n\n";
  o << "where the time goes\n";
  for (const auto& [name, t] : breakdown_parts(est.breakdown)) {
    char line[128];
    std::snprintf(line, sizeof line, "  %-12s %12s  %5.1f%%\n", name, to_string(t).c_str(), 100.0 * (t / est.iteration));
    o << line;
  }
  o << "\nmemory per GPU  " << fmt("%.1f", est.memory.total().as_gib()) << " of "
    << fmt("%.1f", est.memory_capacity.as_gib()) << " GiB usable (weights "
    << fmt("%.1f", est.memory.weights.as_gib()) << ", gradients " << fmt("%.1f", est.memory.gradients.as_gib())
    << ", optimizer " << fmt("%.1f", est.memory.optimizer.as_gib()) << ", activations "
    << fmt("%.1f", est.memory.activations.as_gib()) << ")\n";
  return o.str();
}

}  // namespace clustersim::report
