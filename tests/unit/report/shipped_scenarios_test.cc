// SPDX-License-Identifier: Apache-2.0
// Every scenario shipped in scenarios/ loads, and none gives a setting its own level ignores
// (unused_key_notes): the examples users copy say nothing they do not mean.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "sim/core/error.h"
#include "sim/core/scenario.h"
#include "sim/report/run_scenario.h"
#include "tests/unit/scratch_dir.h"

namespace clustersim::report {
namespace {

// Scenario files: YAML under scenarios/ other than sweep and validation-suite files.
std::vector<std::string> shipped_scenarios() {
  std::vector<std::string> out;
  const std::filesystem::path root = std::filesystem::path(CLUSTERSIM_SOURCE_DIR) / "scenarios";
  for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
    const std::string p = e.path().string();
    if (e.path().extension() != ".yaml") continue;
    // Judged inside scenarios/ (a checkout under a path containing "sweep" found none).
    const std::string inside = std::filesystem::relative(e.path(), root).generic_string();
    if (inside.starts_with("validation/") || inside.starts_with("sweep-")) continue;
    if (e.path().filename() == "table3.yaml") continue;  // a validation suite beside its scenarios
    out.push_back(p);
  }
  return out;
}

TEST(ShippedScenarios, LoadAndGiveNoUnusedSettings) {
  const std::vector<std::string> files = shipped_scenarios();
  EXPECT_GT(files.size(), 40u);
  for (const std::string& f : files) {
    try {
      const ScenarioConfig cfg = load_scenario(f);
      std::vector<std::string> notes = unused_key_notes(cfg);
      // DeepSeek-V3's plan is run to show what its node-limited dispatch would save: the note that
      // says the all-to-all here is an upper bound for it is the scenario's point.
      if (f.ends_with("deepseek-v3-2048.yaml")) {
        std::erase_if(notes, [](const std::string& n) { return n.starts_with("the expert all-to-all sends a copy of each token"); });
      }
      EXPECT_TRUE(notes.empty()) << f << ": " << notes.front();
    } catch (const BadInput& e) {
      ADD_FAILURE() << f << ": " << e.what();
    }
  }
}

// The notes unused_key_notes gives for scenarios/NAME with `overrides` (--set style).
// `text` written as scenario.yaml in `dir`: its path, or empty when the directory could not be made.
std::string written(const testing::ScratchDir& dir, const std::string& text) {
  if (!dir.ok()) return "";
  const std::string path = dir.file("scenario.yaml");
  std::ofstream(path) << text;
  return path;
}

std::vector<std::string> notes_of(const std::string& name, const std::vector<std::string>& overrides = {}) {
  return unused_key_notes(load_scenario(std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/" + name, overrides));
}

// Context parallelism without fused attention has no Megatron-LM run to compare with: noted
// (QA, 2026-12-08), and not for cp 1 or with it.
TEST(UnusedKeyNotes, ContextParallelismWithoutFusedAttentionIsNoted) {
  const auto has_cp_note = [](const std::vector<std::string>& notes) {
    return std::any_of(notes.begin(), notes.end(), [](const std::string& n) {
      return n.find("training.flash_attention: false with parallelism.cp") != std::string::npos;
    });
  };
  const std::string file = "llama3-405b/llama3-405b-16384.yaml";
  EXPECT_TRUE(has_cp_note(notes_of(file, {"parallelism.cp=2", "training.flash_attention=false"})));
  EXPECT_FALSE(has_cp_note(notes_of(file, {"parallelism.cp=2"})));
  EXPECT_FALSE(has_cp_note(notes_of(file, {"training.flash_attention=false"})));
  EXPECT_FALSE(has_cp_note(notes_of("megascale-175b-12288.yaml", {"training.flash_attention=false"})));
}

// network.pxn routes all-to-all traffic: given where there is none, it is noted unused.
TEST(UnusedKeyNotes, PxnWithoutAllToAllTrafficIsNoted) {
  const std::vector<std::string> ring = notes_of("net-ring-1k.yaml", {"network.pxn=false"});
  ASSERT_EQ(ring.size(), 1u);
  EXPECT_NE(ring[0].find("network.pxn is not used"), std::string::npos) << ring[0];
  EXPECT_EQ(notes_of("megascale-175b-12288.yaml", {"network.pxn=false"}).size(), 1u);
  EXPECT_TRUE(notes_of("net-alltoall-128.yaml", {"network.pxn=false"}).empty());
  EXPECT_TRUE(notes_of("mixtral-8x7b-h100-256.yaml", {"network.pxn=false"}).empty());
  EXPECT_TRUE(notes_of("infer-colocated.yaml", {"network.pxn=false"}).empty());
}

// What the model does not price as NCCL does, said where it matters (a network engineer's QA,
// 2026-12-07): the analytical level pricing an MoE plan's traffic sets alone on a tapered fabric
// (it understates the taper there, where the dense note says it overstates pipeline sends'). PXN's
// relayed sends, routed as one connection then and noted, keep their senders' connections since
// 2026-12-08 (RunTraffic.PxnRelaysHashApartOnTorPerServerWiring): no note.
TEST(UnusedKeyNotes, WhatAnMoeFabricStudyShouldKnowIsNoted) {
  const auto has = [](const std::vector<std::string>& notes, const std::string& text) {
    return std::any_of(notes.begin(), notes.end(), [&](const std::string& n) { return n.find(text) != std::string::npos; });
  };
  const auto any_pxn = [](const std::vector<std::string>& notes) {
    return std::any_of(notes.begin(), notes.end(), [](const std::string& n) { return n.find("network.pxn") != std::string::npos; });
  };
  EXPECT_FALSE(any_pxn(notes_of("net-alltoall-128.yaml", {"network.wiring=tor_per_server"})));
  EXPECT_FALSE(any_pxn(notes_of("deepseek-v3-2048.yaml", {"network.wiring=tor_per_server"})));
  const std::string understate = "so it can understate what the taper costs";
  const std::vector<std::string> tapered =
      notes_of("deepseek-v3-2048.yaml", {"network.tor_oversubscription=3", "network.switch_radix=64"});
  EXPECT_TRUE(has(tapered, understate));
  EXPECT_FALSE(has(tapered, "overstates what the taper costs"));
  EXPECT_FALSE(has(notes_of("deepseek-v3-2048.yaml"), understate));
  EXPECT_FALSE(has(notes_of("deepseek-v3-2048.yaml", {"network.tor_oversubscription=3", "network.fidelity=flow"}), understate));
}

// Sequence parallelism asked for at tp 1 has nothing to split (noted since 2026-12-07); turned off
// there, or given with tp above 1, nothing is said.
TEST(UnusedKeyNotes, SequenceParallelismAtTpOneIsNoted) {
  const std::vector<std::string> on = notes_of("megatron-sc21/gpt-1p7b-32.yaml", {"parallelism.sequence_parallel=true"});
  ASSERT_EQ(on.size(), 1u);
  EXPECT_NE(on[0].find("parallelism.sequence_parallel is not used at parallelism.tp 1"), std::string::npos) << on[0];
  EXPECT_TRUE(notes_of("megatron-sc21/gpt-1p7b-32.yaml").empty());  // sequence_parallel: false
  EXPECT_TRUE(notes_of("megascale-175b-12288.yaml", {"parallelism.sequence_parallel=true"}).empty());
}

// Megatron-LM sets the expert TP to tp when not given; here the default is 1, so a training plan
// with tp > 1 that does not say is noted (added 2026-12-06).
TEST(UnusedKeyNotes, AnExpertTpLeftToItsDefaultUnderTensorParallelismIsNoted) {
  const std::vector<std::string> omitted = notes_of("mixtral-8x7b-h100-256.yaml", {"parallelism.expert_tp=null"});
  ASSERT_EQ(omitted.size(), 1u);
  EXPECT_NE(omitted[0].find("parallelism.expert_tp is 1 (the default"), std::string::npos) << omitted[0];
  EXPECT_NE(omitted[0].find("Megatron-LM sets it to tp (2)"), std::string::npos) << omitted[0];
  EXPECT_TRUE(notes_of("mixtral-8x7b-h100-256.yaml").empty());
  EXPECT_TRUE(notes_of("mixtral-8x7b-h100-256.yaml", {"parallelism.expert_tp=null", "parallelism.tp=1"}).empty());
}

// DCQCN's default thresholds, scaled to 400 Gbps, put kmax (2 MB) above an empty switch's PFC
// pause threshold (1.5 MB): a run on the defaults says so; one that chose its settings does not.
TEST(UnusedKeyNotes, DcqcnDefaultsWhoseKmaxPassesThePauseThresholdAreNoted) {
  const std::vector<std::string> defaults = notes_of("net-incast-32-dcqcn.yaml", {"network.dcqcn=null"});
  ASSERT_EQ(defaults.size(), 1u);
  EXPECT_NE(defaults[0].find("network.dcqcn: at 400 Gbps kmax scales to 2 MB, above the PFC pause threshold"),
            std::string::npos)
      << defaults[0];
  EXPECT_TRUE(notes_of("net-incast-32-dcqcn.yaml").empty());  // preset: dcqcn-paper, chosen
  EXPECT_TRUE(notes_of("net-incast-32-dcqcn.yaml", {"network.dcqcn=null", "cluster.nic_bandwidth=100Gbps"}).empty());
}

// fold_ranks auto leaves a plan whose TP groups span nodes unfolded; where every replica's graph
// would pass the op limit it folds after all and says so (until 2026-12-06, the first day of
// auto, it refused a key the scenario did not give, where the old default folded).
TEST(UnusedKeyNotes, AutoFoldingPastTheOpLimitFoldsAndSaysSo) {
  const std::vector<std::string> spanning = {"network.fidelity=flow", "parallelism.placement=dp-tp-cp-pp"};
  std::vector<std::string> big = spanning;
  big.push_back("training.global_batch=24576");  // 128 micro-batches: 1.18e7 ops unfolded
  const RunOutput folded = run_scenario(
      load_scenario(std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/megascale-175b-12288.yaml", big));
  ASSERT_EQ(folded.notes.size(), 1u);
  EXPECT_NE(folded.notes[0].find("but their graph would hold 1.18e+07 ops, past the limit of 1e+07: folded instead"),
            std::string::npos)
      << folded.notes[0];
  EXPECT_NE(folded.results.dump(2).find("\"folded\": true"), std::string::npos);
}

// auto simulates every replica where pipeline sends cross a tapered tier, and says so (since
// 2026-12-07): 64 GPUs on 8 single-NIC servers, 4 under each ToR, PP outermost over a 4:1 ToR.
TEST(UnusedKeyNotes, AutoUnfoldingOverATaperedTierSaysSo) {
  const testing::ScratchDir dir("taper");
  const std::string path = written(dir, "cluster: {gpus: 64, gpu: A100-SXM4-80GB, nics_per_node: 1}\n"
                                        "network: {fidelity: flow, tiers: 2, switch_radix: 8, tor_oversubscription: 4, "
                                        "oversubscription_by: fewer_uplinks}\n"
                                        "model: {layers: 8, hidden: 1024, heads: 8, seq_len: 1024, vocab: 32000}\n"
                                        "parallelism: {tp: 8, pp: 2}\n"
                                        "training: {global_batch: 64}\n");
  ASSERT_FALSE(path.empty());
  const RunOutput unfolded = run_scenario(load_scenario(path));
  ASSERT_EQ(unfolded.notes.size(), 1u);
  EXPECT_NE(unfolded.notes[0].find("pipeline sends or CP rings cross a tapered tier in this placement, so every DP "
                                   "replica is simulated (auto)"),
            std::string::npos)
      << unfolded.notes[0];
  EXPECT_NE(unfolded.results.dump(2).find("\"folded\": false"), std::string::npos);
  EXPECT_TRUE(run_scenario(load_scenario(path, {"parallelism.placement=tp-cp-pp-dp"})).notes.empty());
}

// MoE layouts a run should name (QA 2026-12-07): expert domains that straddle nodes (ep x
// expert_tp not dividing the node), a2a_chunks with no all-to-all, and the Megatron-LM expert_tp
// note only where Megatron-LM's default applies (not under attention_parallel: sp).
TEST(UnusedKeyNotes, MoeLayoutsTheRunShouldName) {
  const testing::ScratchDir dir("moe-notes");
  const std::string path = written(dir, "cluster: {gpu: H100-SXM, gpus: 24, gpus_per_node: 8}\n"
                                        "model: {layers: 4, hidden: 2048, heads: 16, kv_heads: 8, ffn_hidden: 8192, "
                                        "seq_len: 4096, vocab: 32000, moe: {experts: 6, top_k: 2}}\n"
                                        "parallelism: {tp: 1, ep: 3}\n"
                                        "training: {global_batch: 48}\n");
  ASSERT_FALSE(path.empty());
  const std::vector<std::string> straddle = unused_key_notes(load_scenario(path));
  ASSERT_EQ(straddle.size(), 1u);
  EXPECT_NE(straddle[0].find("ep x expert_tp (3) does not divide cluster.gpus_per_node (8), so some expert domains "
                             "straddle nodes (GPUs 6-8 over 2 nodes)"),
            std::string::npos)
      << straddle[0];
  EXPECT_TRUE(unused_key_notes(load_scenario(path, {"model.moe.experts=8", "parallelism.ep=8"})).empty());
  const std::vector<std::string> chunks = unused_key_notes(
      load_scenario(path, {"model.moe.experts=8", "parallelism.ep=1", "training.overlap.a2a_chunks=4"}));
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_NE(chunks[0].find("training.overlap.a2a_chunks is not used"), std::string::npos) << chunks[0];
  // sp attention (MegaScale-MoE's layout), expert_tp not given: no Megatron-LM note.
  EXPECT_TRUE(notes_of("megascale-moe-352b-1440.yaml", {"parallelism.expert_tp=null"}).empty());
}

// A run folded by fold_ranks: true whose pipeline sends cross a tapered tier says the taper's cost
// may be overstated (QA 2026-12-07: an 8:1 spine with PP outermost read 8.82 s folded, 7.03 s
// unfolded, with no note); under auto such a run is not folded (its note comes with the run's
// results), and Llama 3's own plan, each pipeline inside a pod, folds without a note.
TEST(UnusedKeyNotes, AFoldedRunWhosePipelineSendsCrossATaperSaysItMayOverstateIt) {
  const std::vector<std::string> pp_outermost = {"network.fidelity=flow", "parallelism.placement=tp-cp-dp-pp",
                                                 "network.oversubscription_by=fewer_uplinks",
                                                 "network.agg_oversubscription=8"};
  std::vector<std::string> folded = pp_outermost;
  folded.push_back("training.fold_ranks=true");
  const std::vector<std::string> notes = notes_of("llama3-405b/llama3-405b-16384.yaml", folded);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("pipeline sends or CP rings cross a tapered tier"), std::string::npos) << notes[0];
  EXPECT_TRUE(notes_of("llama3-405b/llama3-405b-16384.yaml", pp_outermost).empty());  // auto: unfolded
  // The analytical level says it overstates such a taper (8.039 s against 7.034 s unfolded).
  std::vector<std::string> analytical = pp_outermost;
  analytical.front() = "network.fidelity=analytical";
  const std::vector<std::string> screen = notes_of("llama3-405b/llama3-405b-16384.yaml", analytical);
  ASSERT_EQ(screen.size(), 1u);
  EXPECT_NE(screen[0].find("the analytical level prices every replica's at once and overstates what the taper costs"),
            std::string::npos)
      << screen[0];
  EXPECT_TRUE(notes_of("llama3-405b/llama3-405b-16384.yaml").empty());  // its own plan: nothing crosses the taper
  EXPECT_TRUE(notes_of("llama3-405b/llama3-405b-16384.yaml", {"network.fidelity=flow"}).empty());
  EXPECT_TRUE(notes_of("llama3-405b/llama3-405b-16384.yaml", {"network.fidelity=flow", "training.fold_ranks=true"})
                  .empty());
}

// A global batch that reads as tokens (sequences are meant) is noted (run silently as a step of
// hours until 2026-12-06); the shipped batches are not.
TEST(UnusedKeyNotes, ABatchOfBillionsOfTokensIsNoted) {
  const std::vector<std::string> tokens = notes_of("megascale-175b-12288.yaml", {"training.global_batch=3145728"});
  ASSERT_EQ(tokens.size(), 1u);
  EXPECT_NE(tokens[0].find("training.global_batch counts sequences: 3145728 of 2048 tokens is 6.44e+09 tokens per "
                           "step"),
            std::string::npos)
      << tokens[0];
  EXPECT_TRUE(notes_of("megascale-175b-12288.yaml").empty());
  EXPECT_TRUE(notes_of("llama3-405b/llama3-405b-16384.yaml").empty());
}

TEST(UnusedKeyNotes, ServingLengthsAndArrivalsTheRunDoesNotRead) {
  // infer-afd draws prompts uniformly between min and max.
  const std::vector<std::string> mean = notes_of("infer-afd.yaml", {"inference.prompt_tokens.mean=5"});
  ASSERT_EQ(mean.size(), 1u);
  EXPECT_NE(mean[0].find("inference.prompt_tokens.mean is not used by a uniform distribution"), std::string::npos);
  const std::vector<std::string> trace =
      notes_of("infer-afd.yaml", {"inference.trace=t.csv", "inference.requests=5", "inference.rate_per_s=2", "inference.seed=9"});
  ASSERT_EQ(trace.size(), 1u);
  EXPECT_NE(trace[0].find("inference.requests, inference.rate_per_s"), std::string::npos) << trace[0];
  EXPECT_NE(trace[0].find("inference.seed"), std::string::npos) << trace[0];  // unnamed until 2026-12-06
  EXPECT_NE(trace[0].find("not used with inference.trace"), std::string::npos) << trace[0];
}

TEST(UnusedKeyNotes, FoldingIsAFlowLevelSetting) {
  const std::vector<std::string> analytical = notes_of("megascale-175b-12288.yaml", {"training.fold_ranks=false"});
  ASSERT_EQ(analytical.size(), 1u);
  EXPECT_NE(analytical[0].find("training.fold_ranks"), std::string::npos) << analytical[0];
  EXPECT_TRUE(notes_of("megascale-175b-12288.yaml", {"training.fold_ranks=false", "network.fidelity=flow"}).empty());
}

TEST(UnusedKeyNotes, ARatioTheFabricCablesLowerIsNoted) {
  // net-shift-1k: 1,024 GPUs, 8 rails. Radix 16 at agg 3:1 gives 12 down ports, but a pod holds
  // whole groups of 8 rail ToRs: 1 group on 8 ports, 2:1 as cabled (before 2026-12-05 silent, and
  // the run took 2:1's time).
  const std::vector<std::string> notes =
      notes_of("net-shift-1k.yaml", {"network.switch_radix=16", "network.agg_oversubscription=3", "network.tiers=3"});
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("network.agg_oversubscription gives 12 down and 4 up ports"), std::string::npos) << notes[0];
  EXPECT_NE(notes[0].find("the tier runs at 8:4 (2:1;"), std::string::npos) << notes[0];
  // 1:1 split with spare uplinks changes nothing: no note.
  EXPECT_TRUE(notes_of("net-shift-1k.yaml", {"network.switch_radix=16", "network.tiers=3"}).empty());
}

TEST(UnusedKeyNotes, EcmpDrawsAreAnAnalyticalEcmpSetting) {
  EXPECT_TRUE(notes_of("megascale-175b-12288.yaml", {"network.ecmp_draws=4"}).empty());
  const std::vector<std::string> flow = notes_of("megascale-175b-12288.yaml", {"network.ecmp_draws=4", "network.fidelity=flow"});
  // (and, since 2026-12-07, that its pipeline sends leave their pods and run folded)
  ASSERT_EQ(flow.size(), 2u);
  EXPECT_NE(flow[0].find("network.ecmp_draws is not used here"), std::string::npos) << flow[0];
  EXPECT_NE(flow[1].find("training.fold_ranks: pipeline sends leave their pods"), std::string::npos) << flow[1];
  const std::vector<std::string> spray = notes_of("megascale-175b-12288.yaml", {"network.ecmp_draws=4", "network.routing=spray"});
  ASSERT_EQ(spray.size(), 1u);
  EXPECT_NE(spray[0].find("without network.routing: ecmp"), std::string::npos) << spray[0];
}

TEST(UnusedKeyNotes, AGatedMlpWidthWithoutAnActivationIsNoted) {
  // A Llama-like 3.5 x hidden MLP read with the GPT default, gelu: a third fewer MLP weights than
  // meant, said nowhere before 2026-12-05.
  const std::vector<std::string> notes = notes_of("megascale-175b-12288.yaml", {"model.ffn_hidden=43008"});
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("model.activation is not given, so gelu"), std::string::npos) << notes[0];
  EXPECT_NE(notes[0].find("3.5 x hidden"), std::string::npos) << notes[0];
  EXPECT_TRUE(notes_of("megascale-175b-12288.yaml", {"model.ffn_hidden=43008", "model.activation=swiglu"}).empty());
  EXPECT_TRUE(notes_of("megascale-175b-12288.yaml", {"model.ffn_hidden=49152"}).empty());  // 4 x hidden
  EXPECT_TRUE(notes_of("megascale-175b-12288.yaml", {"model.ffn_hidden=61440"}).empty());  // wider: not gated
}

TEST(UnusedKeyNotes, FaultsKeysTheirSettingsOverrideAreNoted) {
  // A given checkpoint_load is the load's duration: read_bandwidth changes nothing (before
  // 2026-12-05, 1Mbps and 2TBps gave the same output without a word). Likewise comm_init_at_gpus
  // under constant scaling (faults-16k-30d's).
  ASSERT_TRUE(notes_of("faults-16k-30d.yaml").empty());
  const std::vector<std::string> read =
      notes_of("faults-16k-30d.yaml", {"faults.checkpoint.read_bandwidth=1Mbps", "faults.recovery.checkpoint_load=1min"});
  ASSERT_EQ(read.size(), 1u);
  EXPECT_NE(read[0].find("faults.checkpoint.read_bandwidth is not used: faults.recovery.checkpoint_load gives"),
            std::string::npos)
      << read[0];
  EXPECT_TRUE(notes_of("faults-16k-30d.yaml", {"faults.checkpoint.read_bandwidth=1Mbps"}).empty());
  const std::vector<std::string> at = notes_of("faults-16k-30d.yaml", {"faults.recovery.comm_init_at_gpus=1"});
  ASSERT_EQ(at.size(), 1u);
  EXPECT_NE(at[0].find("faults.recovery.comm_init_at_gpus is not used: with comm_init_scaling: constant"),
            std::string::npos)
      << at[0];
  EXPECT_TRUE(notes_of("faults-16k-30d.yaml", {"faults.recovery.comm_init_at_gpus=1",
                                               "faults.recovery.comm_init_scaling=linear"})
                  .empty());
  // Without a spare pool the job never waits for a repair (no note until 2026-12-06).
  const std::vector<std::string> repair = notes_of("faults-16k-30d.yaml", {"faults.recovery.spare_hosts=null"});
  ASSERT_EQ(repair.size(), 1u);
  EXPECT_NE(repair[0].find("faults.recovery.repair_time is not used: without faults.recovery.spare_hosts"),
            std::string::npos)
      << repair[0];
}

TEST(UnusedKeyNotes, AFaultNoPathCrossesIsNoted) {
  // net-shift-1k builds one pod of a 3-tier fabric: a failed core switch changes nothing (before
  // 2026-12-05 the run's output was the healthy one's, with no word; only topo said so).
  const std::vector<std::string> core = notes_of(
      "net-shift-1k.yaml",
      {"network.faults=[{element: 'tor_agg:3', bandwidth_factor: 0.5}, {element: 'core:0', bandwidth_factor: 0}]"});
  ASSERT_EQ(core.size(), 1u);
  EXPECT_NE(core[0].find("network.faults[1] (core:0) changes nothing: one pod is built, so no path crosses the core tier"),
            std::string::npos)
      << core[0];
}

// What run_scenario refuses `cfg` with: the BadInput's text (a test failure when it runs).
std::string refusal(const ScenarioConfig& cfg) {
  try {
    run_scenario(cfg);
  } catch (const BadInput& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected BadInput";
  return "";
}

TEST(RunScenario, ColocatedServingRefusesFabricFaultsItWouldIgnore) {
  // Colocated serving prices its collectives in closed form at every level: at the flow level
  // it ran with the faults and gave the healthy numbers (until 2026-12-05).
  const ScenarioConfig cfg = load_scenario(std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/infer-colocated.yaml",
                                           {"network.fidelity=flow", "inference.requests=30",
                                            "network.faults=[{element: 'nvlink:0', bandwidth_factor: 0.01}]"});
  const std::string colocated = refusal(cfg);
  EXPECT_NE(colocated.find("network.faults: colocated serving sends nothing over the simulated fabric"), std::string::npos)
      << colocated;
  // Prefill/decode sends its KV caches over the fabric: faults are taken.
  EXPECT_NO_THROW(run_scenario(load_scenario(std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/infer-pd.yaml",
                                             {"network.fidelity=flow", "inference.requests=30",
                                              "network.faults=[{element: 'host:0', bandwidth_factor: 0.5}]"})));
}

TEST(UnusedKeyNotes, APoolStartingMidNodeAndSpanningNodesIsNoted) {
  // infer-afd: attention 16 GPUs, expert 16 on 8-GPU nodes, 32 GPUs. An attention pool of 12
  // leaves the expert pool on GPUs 12-27, starting mid-node and across nodes.
  ASSERT_TRUE(notes_of("infer-afd.yaml").empty());
  const std::vector<std::string> notes = notes_of("infer-afd.yaml", {"inference.pools.attention.gpus=12"});
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("pool 2 of 2 starts mid-node"), std::string::npos) << notes[0];
}

TEST(RunScenario, TimesPastTheRangeAreRefusedNotPrinted) {
  // A model far too large for 32 GPUs: one iteration overflows the picosecond clock (before
  // 2026-11-22 it printed -5.4e6 s and MFU -482%).
  const ScenarioConfig cfg = load_scenario(std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/megatron-sc21/gpt-1p7b-32.yaml",
                                           {"training.memory_check=false", "model.layers=100000", "model.hidden=65536",
                                            "model.heads=64", "training.global_batch=4096"});
  // With a real GPU's peak, the step's size alone is named.
  const std::string big = refusal(cfg);
  EXPECT_NE(big.find("iteration_time_s reaches the limit of simulated time"), std::string::npos) << big;
  EXPECT_NE(big.find("which clustersim cannot time; the step is too large for its GPUs: lower model.layers (100000, "
                     "--set)"),
            std::string::npos)
      << big;
  EXPECT_EQ(big.find("peak."), std::string::npos) << big;
  // The output that overflowed is known, not the input that made it; the message names the
  // inputs given with values that stretch times (before 2026-12-05 only the output, no key).
  const ScenarioConfig far = load_scenario(std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/megatron-sc21/gpt-1p7b-32.yaml",
                                           {"stragglers.nics.hosts=[1]", "stragglers.nics.extra_latency=104d"});
  const std::string stretched = refusal(far);
  EXPECT_NE(stretched.find("one training iteration would take over 107 days (iteration_time_s reaches the limit of "
                           "simulated time), which clustersim cannot time; of the inputs that stretch times, the "
                           "scenario gives stragglers.nics.extra_latency (--set): check it; else the step is too "
                           "large for its GPUs: lower model.layers (24, line "),
            std::string::npos)
      << stretched;
  // A profile's peak far below any GPU's is named, with the step's size keys as the other thing to
  // change (before 2026-12-05: "a model far too large for its GPUs, or latencies and intervals of
  // days", with no key).
  const testing::ScratchDir dir("slow-profile");
  ASSERT_TRUE(dir.ok());
  {
    std::ifstream in(std::string(CLUSTERSIM_SOURCE_DIR) + "/calibration/profiles/A100-SXM4-80GB.yaml");
    std::ofstream out(dir.file("SLOW.yaml"));
    // Every peak at or under bf16's, as a profile must keep them (since 2026-12-07).
    for (std::string line; std::getline(in, line);) {
      const bool peak = line.starts_with("  bf16:") || line.starts_with("  tf32:") || line.starts_with("  fp32:");
      out << (peak ? line.substr(0, line.find(':') + 1) + " 1GFLOPS" : line) << "\n";
    }
  }
  const ScenarioConfig slow = load_scenario(std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/megascale-175b-12288.yaml",
                                            {"cluster.gpu=" + dir.file("SLOW.yaml"), "model.layers=960",
                                             "training.global_batch=61440", "training.memory_check=false"});
  {
    const std::string text = refusal(slow);
    EXPECT_NE(text.find("one training iteration would take over 107 days"), std::string::npos) << text;
    EXPECT_NE(text.find("; the GPU profile " + dir.file("SLOW.yaml") + " (cluster.gpu, --set) gives peak.bf16 "),
              std::string::npos)
        << text;
    EXPECT_NE(text.find(", far below a data-center GPU's (hundreds of TFLOPS): check its unit; else the step is too "
                        "large for its GPUs: lower model.layers (960, --set), model.hidden (12288, line "),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("training.global_batch (61440, --set), or raise cluster.gpus (12288, line "), std::string::npos)
        << text;
  }
  // A rate of 1.16e7 tokens/s is not a time (tokens_per_s ends in _s too).
  const ScenarioConfig fast = load_scenario(std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/megatron-sc21/gpt-1p7b-32.yaml",
                                            {"cluster.gpus=8192", "training.global_batch=262144"});
  EXPECT_NO_THROW(run_scenario(fast));
}

}  // namespace
}  // namespace clustersim::report
