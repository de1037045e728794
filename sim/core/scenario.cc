// SPDX-License-Identifier: Apache-2.0
#include "sim/core/scenario.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sim/core/error.h"
#include "sim/core/map_reader.h"

namespace clustersim {
namespace {

// What a scenario holds, for the messages about a file that is none.
constexpr const char* kSections =
    "cluster, network and model, then parallelism and training (a training run), inference (serving) or traffic "
    "(a network test; model not needed)";

void read_cluster(MapReader r, ClusterConfig& c) {
  r.read("gpu", c.gpu);
  r.read("gpus", c.gpus, Need::kRequired, 1, kMaxGpus);
  r.read("gpus_per_node", c.gpus_per_node, Need::kOptional, 1, 1024);
  r.read("nics_per_node", c.nics_per_node, Need::kOptional, 1, 1024);
  r.read("nic_bandwidth", c.nic_bandwidth);
  r.finish();
}

void read_fault(MapReader r, FabricFault& f) {
  r.read("element", f.element, Need::kRequired);
  // An entry that gives only extra_latency slows the element's links without cutting them.
  if (!r.has("bandwidth_factor") && r.has("extra_latency")) f.bandwidth_factor = 1.0;
  // Below a millionth a degraded link's transfers outrun simulated time (a 1e-11 NVLink came
  // out as a healthy one at the flow level until 2026-12-05): a link that slow is failed, 0.
  if (r.read("bandwidth_factor", f.bandwidth_factor, Need::kOptional, 0.0, 1.0) && f.bandwidth_factor > 0 &&
      f.bandwidth_factor < kMinDegradedFactor) {
    char got[32];
    std::snprintf(got, sizeof got, "%g", f.bandwidth_factor);
    r.error("bandwidth_factor", std::string("expected 0 (failed) or a factor in [1e-6, 1]; got ") + got +
                                    ", which leaves the link too slow to time: give 0 for a failed link");
  }
  r.read("extra_latency", f.extra_latency);
  r.finish();
}

void read_network(MapReader r, NetworkConfig& n, ErrorList& errors) {
  r.read_enum("fidelity", n.fidelity,
              {{"analytical", Fidelity::kAnalytical}, {"flow", Fidelity::kFlow},
               {"flow+dcqcn", Fidelity::kFlowDcqcn}, {"packet", Fidelity::kPacket}});
  r.read("tiers", n.tiers, Need::kOptional, 2, 3);
  r.read_enum("wiring", n.wiring,
              {{"rail_optimized", Wiring::kRailOptimized}, {"tor_per_server", Wiring::kTorPerServer}});
  r.read("switch_radix", n.switch_radix, Need::kOptional, 4, 4096);
  r.read_enum("oversubscription_by", n.oversubscription_by,
              {{"port_split", OversubscriptionBy::kPortSplit}, {"fewer_uplinks", OversubscriptionBy::kFewerUplinks}});
  // Port counts ("48:16") add up to the radix when the ratio splits it; with fewer uplinks the
  // down ports are half the radix and the counts any whole pair at the ratio ("32:8").
  const int ports = n.oversubscription_by == OversubscriptionBy::kPortSplit ? n.switch_radix : 0;
  r.read_ratio("tor_oversubscription", n.tor_oversubscription, 1.0, kMaxOversubscription, ports);
  r.read_ratio("agg_oversubscription", n.agg_oversubscription, 1.0, kMaxOversubscription, ports);
  r.read("fabric_bandwidth", n.fabric_bandwidth);
  // Link and switch latencies are nanoseconds to microseconds: past a millisecond, a unit slip
  // (`1d` ran, every transfer two days; accepted until 2026-12-07).
  const auto read_latency = [&r](const char* key, Time& into) {
    if (r.read(key, into) && into > Time::ms(1)) r.error(key, "expected at most 1ms (links and switches take nanoseconds to microseconds)");
  };
  read_latency("host_link_latency", n.host_link_latency);
  read_latency("fabric_link_latency", n.fabric_link_latency);
  read_latency("switch_latency", n.switch_latency);
  r.read("nvlink_bandwidth", n.nvlink_bandwidth);
  read_latency("nvlink_latency", n.nvlink_latency);
  r.read_enum("routing", n.routing,
              {{"ecmp", Routing::kEcmp}, {"dmodk", Routing::kDmodK}, {"spray", Routing::kSpray}});
  r.read("qps_per_connection", n.qps_per_connection, Need::kOptional, 1, 256);
  r.read("pxn", n.pxn);
  r.read("ecmp_seed", n.ecmp_seed);
  r.read("ecmp_draws", n.ecmp_draws, Need::kOptional, 1, 64);
  r.read_enum("solver", n.solver, {{"fluid", FlowSolver::kFluid}, {"lmm", FlowSolver::kLmm}});
  // A numerical precision (completions this close are processed as one event, the later time
  // for all): past a millisecond it moves results, so it is refused there.
  if (r.read("merge_tolerance", n.merge_tolerance) &&
      (n.merge_tolerance < Time::zero() || n.merge_tolerance > Time::ms(1))) {
    r.error("merge_tolerance", "expected a time in [0, 1ms] (flow completions this close are processed as one "
                               "event); got " + to_string(n.merge_tolerance));
  }
  r.read("rate_tolerance", n.rate_tolerance, Need::kOptional, 0.0, 0.1);
  read_dcqcn(r.section("dcqcn"), n.dcqcn);
  if (const YamlNode* faults = r.child("faults"); faults && faults->is_null()) {
    r.error("faults", "has no value; give a list of {element, bandwidth_factor, extra_latency} ([] for none), or "
                      "remove it");
  } else if (faults) {
    if (!faults->is_seq()) {
      r.error("faults", "expected a list of {element, bandwidth_factor, extra_latency}");
    } else {
      for (size_t i = 0; i < faults->seq.size(); ++i) {
        FabricFault f;
        const std::string path = r.key_path("faults") + "[" + std::to_string(i) + "]";
        read_fault(MapReader(&faults->seq[i], path, errors, faults), f);
        // A fault given by --set has no line in the file (the message names the file alone).
        if (faults->seq[i].file.rfind("--set", 0) != 0) f.line = faults->seq[i].line;
        for (const FabricFault& earlier : n.faults) {
          if (!f.element.empty() && earlier.element == f.element) {
            // Two entries would compound (0.5 then 0.2 gives 0.1): one entry per element says it.
            errors.add(InputError{faults->seq[i].file, faults->seq[i].line, path + ".element",
                                  "'" + f.element + "' is already listed; give each element one entry"});
          }
        }
        n.faults.push_back(f);
      }
    }
  }
  r.finish();
}

void read_model(MapReader r, ModelConfig& m) {
  // As the scenario's name: '' read as the key left out (until 2026-12-05).
  r.read_text("name", m.name, "the model's name (or remove the key)");
  r.read("layers", m.layers, Need::kRequired, 1, 100000);
  r.read("hidden", m.hidden, Need::kRequired, 1, 1 << 20);
  r.read("heads", m.heads, Need::kRequired, 1, 1 << 16);
  r.read("kv_heads", m.kv_heads, Need::kOptional, 1, 1 << 16);
  r.read("head_dim", m.head_dim, Need::kOptional, 1, 1 << 16);
  r.read("ffn_hidden", m.ffn_hidden, Need::kOptional, 1, 1 << 22);
  r.read("seq_len", m.seq_len, Need::kRequired, 1, 1 << 24);
  r.read("vocab", m.vocab, Need::kRequired, 1, 1 << 24);
  r.read_enum("activation", m.activation, {{"gelu", Activation::kGelu}, {"swiglu", Activation::kSwiglu}});
  r.read("tied_embeddings", m.tied_embeddings);
  r.read("learned_positions", m.learned_positions);
  r.read("attention_window", m.attention_window, Need::kOptional, 0, 1 << 24);
  // `moe:` with no value is refused by section() (ran as a dense model until 2026-12-06).
  if (r.child("moe")) read_moe(r.section("moe"), m.moe.emplace());
  r.finish();
}

bool valid_placement(const std::string& order) {
  std::vector<std::string> dims;
  size_t start = 0;
  while (start <= order.size()) {
    const size_t dash = order.find('-', start);
    dims.push_back(order.substr(start, dash == std::string::npos ? std::string::npos : dash - start));
    if (dash == std::string::npos) break;
    start = dash + 1;
  }
  std::sort(dims.begin(), dims.end());
  return dims == std::vector<std::string>{"cp", "dp", "pp", "tp"};
}

void read_parallelism(MapReader r, ParallelismConfig& p) {
  r.read("tp", p.tp, Need::kOptional, 1, 1 << 16);
  r.read("pp", p.pp, Need::kOptional, 1, 1 << 16);
  r.read("vpp", p.vpp, Need::kOptional, 1, 1024);
  r.read("cp", p.cp, Need::kOptional, 1, 1 << 16);
  r.read("micro_batch", p.micro_batch, Need::kOptional, 1, 1 << 20);
  r.read("sequence_parallel", p.sequence_parallel);
  r.read("zero_stage", p.zero_stage, Need::kOptional, 0, 3);
  if (r.read("placement", p.placement) && !valid_placement(p.placement)) {
    r.error("placement", "expected the four dimensions tp, cp, dp, pp each once, joined by '-' (e.g. tp-cp-dp-pp)");
  }
  r.read("ep", p.ep, Need::kOptional, 1, 1 << 16);
  r.read("expert_tp", p.expert_tp, Need::kOptional, 1, 1024);
  r.finish();
}

void read_training(MapReader r, TrainingConfig& t) {
  r.read("global_batch", t.global_batch, Need::kRequired, 1);
  r.read_enum("precision", t.precision,
              {{"bf16", Precision::kBf16}, {"fp16", Precision::kFp16}, {"fp8", Precision::kFp8}});
  r.read_enum("recompute", t.recompute,
              {{"none", Recompute::kNone}, {"selective", Recompute::kSelective}, {"full", Recompute::kFull}});
  r.read("parallel_block", t.parallel_block);
  r.read("flash_attention", t.flash_attention);
  r.read("flash_attention_version", t.flash_attention_version, Need::kOptional, 1, 2);
  r.read("fused_kernels", t.fused_kernels);
  r.read("dropout", t.dropout);
  r.read("memory_check", t.memory_check);
  r.read("fp32_grad_reduce", t.fp32_grad_reduce);
  r.read("step_stall", t.step_stall);
  MapReader o = r.section("overlap");
  o.read("dp_grad_reduce", t.overlap.dp_grad_reduce);
  o.read("dp_param_gather", t.overlap.dp_param_gather);
  o.read("tp_comm", t.overlap.tp_comm);
  o.read("pp_p2p", t.overlap.pp_p2p);
  o.read("a2a_chunks", t.overlap.a2a_chunks, Need::kOptional, 1, 64);
  o.finish();
  r.read_enum("attention_parallel", t.attention_parallel, {{"tp", AttentionParallel::kTp}, {"sp", AttentionParallel::kSp}});
  r.read_enum("comm_precision", t.comm_precision,
              {{"default", CommPrecision::kDefault}, {"bf16", CommPrecision::kBf16}, {"fp8", CommPrecision::kFp8}});
  double bucket = 0;
  // Read as a number so that 4e7 works; a fraction of a parameter is a mistake, not 0 (the default).
  if (r.read("dp_bucket_size", bucket, Need::kOptional, 0.0, 1e13)) {
    if (bucket != std::floor(bucket)) {
      r.error("dp_bucket_size", "expected a whole number of parameters (0: the default rule); got " + format_number(bucket));
    } else {
      t.dp_bucket_size = static_cast<int64_t>(bucket);
    }
  }
  r.read_enum("fold_ranks", t.fold_ranks,
              {{"auto", FoldRanks::kAuto}, {"true", FoldRanks::kFold}, {"false", FoldRanks::kUnfold}});
  r.read("moe_grouped_gemm", t.moe_grouped_gemm);
  r.finish();
}

void read_traffic(MapReader r, TrafficConfig& t) {
  r.read_enum("pattern", t.pattern,
              {{"shift", TrafficPattern::kShift},
               {"random_permutation", TrafficPattern::kRandomPermutation},
               {"ring_allreduce", TrafficPattern::kRingAllReduce},
               {"all_to_all", TrafficPattern::kAllToAll},
               {"incast", TrafficPattern::kIncast}},
              Need::kRequired);
  r.read("bytes_per_pair", t.bytes_per_pair);
  r.read("shift", t.shift, Need::kOptional, 0);
  r.read("incast_senders", t.incast_senders, Need::kOptional, 1);
  r.read("seed", t.seed);
  r.finish();
}

void record_lines(const YamlNode& n, const std::string& path, std::map<std::string, int>& lines,
                  std::set<std::string>& given) {
  if (!path.empty()) given.insert(path);
  if (!path.empty() && n.line > 0 && n.file.rfind("--set", 0) != 0) lines[path] = n.line;
  for (const auto& [k, v] : n.map) record_lines(v, path.empty() ? k : path + "." + k, lines, given);
}

}  // namespace

ScenarioConfig read_scenario_tree(const YamlNode& root, const std::string& file) {
  ScenarioConfig cfg;
  cfg.file = file;
  cfg.cluster.source_dir = std::filesystem::path(file).parent_path().string();
  record_lines(root, "", cfg.lines, cfg.given);
  ErrorList errors;
  if (root.is_null()) {
    throw BadInput(InputError{file, 0, "", "the scenario is empty; expected a mapping with sections " + std::string(kSections)});
  }
  // A list or a single value: one error (each section's required keys were reported missing
  // after it, ten lines of noise, until 2026-12-05).
  if (!root.is_map()) {
    throw BadInput(InputError{file, root.line, "",
                              std::string("a scenario is a mapping with sections ") + kSections + "; this file holds " +
                                  root.kind_name()});
  }
  refuse_gpu_profile(root, file, "scenario");
  // A sweep file or a validation suite given where a scenario belongs: one error that says so.
  if (root.is_map() && (root.find("axes") || root.find("cases"))) {
    const bool sweep = root.find("axes") != nullptr;
    throw BadInput(InputError{file, 0, sweep ? "axes" : "cases",
                              sweep ? "this is a sweep file (it has 'axes'), not a scenario: run it with 'clustersim sweep'"
                                    : "this is a validation suite (it has 'cases'), not a scenario: run it with "
                                      "'clustersim validate'"});
  }
  MapReader top(&root, "", errors);
  top.may_hold({"traffic", "inference", "faults", "stragglers"});
  // '' would be a name that names nothing (results and reports then fell back to the file's path
  // without a word until 2026-12-05): give one, or leave the key out.
  top.read_text("name", cfg.name, "the scenario's name (or remove the key: the file's path names the run)");
  top.read("description", cfg.description);
  read_cluster(top.section("cluster"), cfg.cluster);
  if (!top.has("cluster")) top.error("cluster", "required section is missing");
  read_network(top.section("network"), cfg.network, errors);
  // A section this kind of scenario would drop unread: known (the error says why, not "unknown
  // key"), and refused.
  auto refuse = [&top](const char* section, const std::string& why) {
    if (!top.has(section)) return;
    top.child(section);
    top.error(section, why);
  };
  // Stragglers and the reliability study slow or stop a training step; traffic and serving
  // scenarios have none.
  if (top.has("traffic") || top.has("inference")) {
    const std::string kind = top.has("traffic") ? "traffic" : "serving (inference)";
    refuse("stragglers", "stragglers need a training step; a " + kind + " scenario has none");
    refuse("faults", "the reliability simulation needs a training step; a " + kind + " scenario has none");
  }
  if (top.has("traffic")) {
    cfg.traffic.emplace();
    read_traffic(top.section("traffic"), *cfg.traffic);
    for (const char* s : {"model", "parallelism", "training"}) {
      refuse(s, "a traffic scenario has no training step; remove this section or 'traffic'");
    }
    refuse("inference", "a traffic scenario has no model to serve; remove this section or 'traffic'");
  } else {
    for (const char* s : {"model", "training"}) {
      if (!top.has(s) && !(top.has("inference") && s == std::string("training"))) {
        top.error(s, "required section is missing");
      }
    }
    read_model(top.section("model"), cfg.model);
    if (top.has("inference")) {
      for (const char* s : {"parallelism", "training"}) {
        refuse(s, "a serving (inference) scenario has no training step; its plans are inference.pools' "
                  "(remove this section or 'inference')");
      }
    } else {
      read_parallelism(top.section("parallelism"), cfg.parallelism);
      read_training(top.section("training"), cfg.training);
    }
  }
  if (top.has("inference") && !top.has("traffic")) {
    cfg.inference.emplace();
    read_inference(top.section("inference"), *cfg.inference);
  }
  if (!top.has("traffic") && !top.has("inference")) {
    if (const YamlNode* faults = top.has("faults") ? top.child("faults") : nullptr; faults && faults->is_null()) {
      // `faults:` (or null, ~) with nothing under it ran the whole default study until 2026-12-05;
      // `faults: {}` asks for it. (--set faults=null removes the section: never null here.)
      top.error("faults", "has no value; give its keys (faults: {} for every default), or remove it");
    } else if (faults) {
      cfg.faults.emplace();
      read_faults(top.section("faults"), *cfg.faults);
    }
    read_stragglers(top.section("stragglers"), cfg.stragglers);
    // An MoE model's layers go whole, with their experts, so its listed split is the plan's
    // layer map (ParallelismConfig::stage_layers), not a straggler measured against an even split
    // that may not exist (DeepSeek-V3's 61 layers over 16 stages).
    if (cfg.model.moe) cfg.parallelism.stage_layers = std::exchange(cfg.stragglers.stage_layers, {});
  }
  top.finish();
  errors.throw_if_any();
  return cfg;
}

void refuse_gpu_profile(const YamlNode& root, const std::string& path, const std::string& kind) {
  for (const char* own : {"cluster", "model", "cases", "budget", "axes"}) {
    if (root.find(own)) return;
  }
  if (!root.find("peak") || !root.find("efficiency")) return;
  throw BadInput(InputError{path, 0, "", "this is a GPU profile (it has 'peak' and 'efficiency'), not a " + kind +
                                             ": use it in a scenario with cluster.gpu: " + path});
}

ScenarioConfig scenario_from_tree(const YamlNode& root, const std::string& file) {
  ScenarioConfig cfg = read_scenario_tree(root, file);
  ErrorList errors;
  for (InputError& e : validate_scenario(cfg)) errors.add(std::move(e));
  errors.throw_if_any();
  return cfg;
}

bool is_unknown_key(const InputError& e) { return e.message.rfind("unknown key", 0) == 0; }

bool is_unknown_key_at(const InputError& e, const std::string& path) {
  return is_unknown_key(e) && (e.key_path == path || path.rfind(e.key_path + ".", 0) == 0);
}

std::optional<InputError> unknown_key_error(const YamlNode& root, const std::string& path) {
  YamlNode probe = root;
  apply_override(probe, path + "=0");
  try {
    (void)read_scenario_tree(probe, "--set");
  } catch (const BadInput& e) {
    for (const InputError& err : e.errors()) {
      if (is_unknown_key_at(err, path)) return err;
    }
  }
  return std::nullopt;
}

ScenarioConfig load_scenario(const std::string& path, const std::vector<std::string>& overrides) {
  YamlNode root = parse_yaml_file(path);
  std::vector<std::string> removed_absent;
  for (const std::string& o : overrides) {
    const std::string key = o.substr(0, o.find('='));
    const bool absent = !find_path(root, key);
    apply_override(root, o);  // reports a malformed assignment in its own words
    // Applied and still absent: a removal (key=null) of a key the scenario does not give.
    if (absent && !find_path(root, key)) removed_absent.push_back(key);
  }
  for (const std::string& key : removed_absent) {
    // A component's name is free, so any name passes as a key; removing one the file does not
    // give changes nothing (a built-in component keeps its rates).
    const std::string components = "faults.components.";
    if (key.rfind(components, 0) == 0 && key.find('.', components.size()) == std::string::npos) {
      throw BadInput(InputError{"--set", 0, key,
                                "the scenario gives no component '" + key.substr(components.size()) +
                                    "', so there is nothing to remove; a built-in component keeps its rates: set " +
                                    key + ".rate_per_day=0 to turn it off"});
    }
    if (const auto err = unknown_key_error(root, key)) {
      throw BadInput(InputError{"--set", 0, key, "'" + key + "' is not a scenario key, so there is nothing to remove (" +
                                                     err->key_path + ": " + err->message + ")"});
    }
  }
  return scenario_from_tree(root, path);
}

}  // namespace clustersim
