// SPDX-License-Identifier: Apache-2.0
// Scenario loading from inline YAML: a valid training scenario, and every kind of bad one, each
// with the key path, line and wording a user needs to fix it.
#include "sim/core/scenario.h"

#include <gtest/gtest.h>

#include <fstream>

#include <algorithm>
#include <string>
#include <vector>

#include "sim/core/unit_parse.h"
#include "tests/unit/core/unit_printers.h"

namespace clustersim {
namespace {

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// A small valid training scenario; the line numbers are used below.
// DP = 16 / (tp 2 x pp 2) = 4; micro-batches per pipeline = 32 / (1 x 4) = 8.
const char* const kTiny =
    "name: tiny\n"                 //  1
    "cluster:\n"                   //  2
    "  gpu: H100-SXM\n"            //  3
    "  gpus: 16\n"                 //  4
    "  gpus_per_node: 8\n"         //  5
    "  nic_bandwidth: 400Gbps\n"   //  6
    "model:\n"                     //  7
    "  layers: 4\n"                //  8
    "  hidden: 1024\n"             //  9
    "  heads: 16\n"                // 10
    "  seq_len: 2048\n"            // 11
    "  vocab: 32000\n"             // 12
    "parallelism:\n"               // 13
    "  tp: 2\n"                    // 14
    "  pp: 2\n"                    // 15
    "  micro_batch: 1\n"           // 16
    "training:\n"                  // 17
    "  global_batch: 32\n";        // 18

// kTiny with each `from` line replaced by `to` (lines stay where they were when `to` is one line).
std::string tiny_with(std::vector<std::pair<std::string, std::string>> edits) {
  std::string text = kTiny;
  for (const auto& [from, to] : edits) {
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) text.replace(at, from.size(), to);
  }
  return text;
}

ScenarioConfig load_text(const std::string& text, const std::vector<std::string>& overrides = {}) {
  YamlNode root = parse_yaml_text(text, "dir/s.yaml");
  for (const std::string& o : overrides) apply_override(root, o);
  return scenario_from_tree(root, "dir/s.yaml");
}

std::vector<InputError> errors_of(const std::string& text, const std::vector<std::string>& overrides = {}) {
  try {
    load_text(text, overrides);
  } catch (const BadInput& e) {
    return e.errors();
  }
  ADD_FAILURE() << "expected BadInput for:\n" << text;
  return {};
}

// The first error about `key_path`, or a failure listing them all.
InputError error_at(const std::vector<InputError>& errors, const std::string& key_path) {
  for (const InputError& e : errors) {
    if (e.key_path == key_path) return e;
  }
  std::string all;
  for (const InputError& e : errors) all += "\n  " + e.to_string();
  ADD_FAILURE() << "no error about " << key_path << "; got:" << all;
  return {};
}

TEST(Scenario, MinimalTrainingScenarioLoads) {
  const ScenarioConfig cfg = load_text(kTiny);
  EXPECT_EQ(cfg.file, "dir/s.yaml");
  EXPECT_EQ(cfg.cluster.source_dir, "dir");
  EXPECT_EQ(cfg.name, "tiny");
  EXPECT_EQ(cfg.cluster.gpu, "H100-SXM");
  EXPECT_EQ(cfg.cluster.gpus, 16);
  EXPECT_DOUBLE_EQ(cfg.cluster.nic_bandwidth.bytes_per_s, gbps(400).bytes_per_s);
  EXPECT_EQ(cfg.model.layers, 4);
  EXPECT_EQ(cfg.model.hidden, 1024);
  EXPECT_EQ(cfg.parallelism.tp, 2);
  EXPECT_EQ(cfg.training.global_batch, 32);
  EXPECT_FALSE(cfg.traffic.has_value());
  // Defaults for what the file leaves out.
  EXPECT_EQ(cfg.network.fidelity, Fidelity::kAnalytical);
  EXPECT_EQ(cfg.parallelism.zero_stage, 1);
  EXPECT_EQ(cfg.training.recompute, Recompute::kNone);
  EXPECT_EQ(cfg.model.activation, Activation::kGelu);
  // Derived plan: dp = 16 / (2 x 2) = 4, micro-batches = 32 / (1 x 4) = 8.
  EXPECT_EQ(data_parallel_size(cfg), 4);
  EXPECT_EQ(micro_batches_per_iteration(cfg), 8);
  // Lines of values, for messages about them later.
  EXPECT_EQ(cfg.lines.at("cluster.gpus"), 4);
  EXPECT_EQ(cfg.lines.at("parallelism.tp"), 14);
  EXPECT_EQ(cfg.lines.at("training.global_batch"), 18);
}

TEST(Scenario, SectionLinesAreTheSectionKeysLines) {
  const ScenarioConfig cfg = load_text(kTiny);
  EXPECT_EQ(cfg.lines.at("parallelism"), 13);
  EXPECT_EQ(cfg.lines.at("cluster"), 2);
}

TEST(Scenario, EnumsAndNestedSectionsLoad) {
  const ScenarioConfig cfg = load_text(std::string(kTiny) +
                                       "  recompute: full\n"
                                       "  precision: fp16\n"
                                       "  overlap: {tp_comm: true, pp_p2p: true}\n"
                                       "network:\n"
                                       "  fidelity: flow\n"
                                       "  routing: dmodk\n"
                                       "  fabric_bandwidth: 800Gbps\n"
                                       "  faults:\n"
                                       "    - {element: 'tor:3', bandwidth_factor: 0.5, extra_latency: 2us}\n");
  EXPECT_EQ(cfg.training.recompute, Recompute::kFull);
  EXPECT_EQ(cfg.training.precision, Precision::kFp16);
  EXPECT_TRUE(cfg.training.overlap.tp_comm);
  EXPECT_TRUE(cfg.training.overlap.pp_p2p);
  EXPECT_TRUE(cfg.training.overlap.dp_grad_reduce);  // default kept
  EXPECT_EQ(cfg.network.fidelity, Fidelity::kFlow);
  EXPECT_EQ(cfg.network.routing, Routing::kDmodK);
  ASSERT_TRUE(cfg.network.fabric_bandwidth.has_value());
  EXPECT_DOUBLE_EQ(cfg.network.fabric_bandwidth->bytes_per_s, 100e9);  // 800 Gbps / 8
  ASSERT_EQ(cfg.network.faults.size(), 1u);
  EXPECT_EQ(cfg.network.faults[0].element, "tor:3");
  EXPECT_DOUBLE_EQ(cfg.network.faults[0].bandwidth_factor, 0.5);
  EXPECT_EQ(cfg.network.faults[0].extra_latency, Time::us(2));
}

TEST(ScenarioErrors, TypoInAKeySuggestsTheKey) {
  const auto errors = errors_of(tiny_with({{"  micro_batch: 1\n", "  micro_bach: 1\n"}}));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].key_path, "parallelism.micro_bach");
  EXPECT_EQ(errors[0].line, 16);
  EXPECT_TRUE(contains(errors[0].message, "did you mean 'micro_batch'"));
  EXPECT_EQ(errors[0].to_string(),
            "dir/s.yaml:16: parallelism.micro_bach: unknown key; did you mean 'micro_batch'?");
}

// A section or list written with no value is refused as a leaf key so written is (2026-12-06 QA:
// `network:` or `network.faults:` alone ran every default, `network.dcqcn:` alone counted as
// present); `{}` asks for the defaults.
TEST(ScenarioErrors, ASectionWithNoValueIsRefused) {
  for (const auto& [extra, key] : {std::pair{"network:\n", "network"},
                                   std::pair{"network:\n  dcqcn:\n", "network.dcqcn"},
                                   std::pair{"network:\n  fidelity: flow\n  faults:\n", "network.faults"}}) {
    const InputError e = error_at(errors_of(std::string(kTiny) + extra), key);
    EXPECT_TRUE(contains(e.message, "has no value")) << e.message;
    EXPECT_GT(e.line, 0) << key;
  }
  // `moe:` alone ran as a dense model, and `loads:` alone was ignored.
  const InputError moe = error_at(errors_of(tiny_with({{"  vocab: 32000\n", "  vocab: 32000\n  moe:\n"}})), "model.moe");
  EXPECT_TRUE(contains(moe.message, "has no value")) << moe.message;
  EXPECT_NO_THROW(load_text(std::string(kTiny) + "network: {}\n"));
  EXPECT_NO_THROW(load_text(std::string(kTiny) + "network: {fidelity: flow, faults: []}\n"));
}

TEST(ScenarioErrors, TypoInASectionName) {
  const auto errors = errors_of(tiny_with({{"training:\n", "trainng:\n"}}));
  const InputError e = error_at(errors, "trainng");
  EXPECT_TRUE(contains(e.message, "did you mean 'training'"));
  EXPECT_TRUE(contains(error_at(errors, "training").message, "required section is missing"));
}

TEST(ScenarioErrors, OptionalSectionNamesAreSuggested) {
  // inference, traffic and faults are read only when present, yet a typo still finds them.
  const auto errors = errors_of(std::string(kTiny) + "infernce: {}\nfault: {}\n");
  EXPECT_TRUE(contains(error_at(errors, "infernce").message, "did you mean 'inference'"));
  EXPECT_TRUE(contains(error_at(errors, "fault").message, "did you mean 'faults'"));
}

TEST(ScenarioErrors, ASweepFileOrASuiteIsNamedAsSuch) {
  // One error that names the command, not a list of missing sections.
  auto errors = errors_of("base: {}\naxes: {parallelism.tp: [1, 2]}\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].key_path, "axes");
  EXPECT_TRUE(contains(errors[0].message, "clustersim sweep")) << errors[0].message;
  errors = errors_of("cases: []\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_TRUE(contains(errors[0].message, "clustersim validate")) << errors[0].message;
}

TEST(ScenarioErrors, WrongUnitNamesTheKeyAndTheExpectedForm) {
  const auto errors = errors_of(tiny_with({{"400Gbps", "200Gbs"}}));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].key_path, "cluster.nic_bandwidth");
  EXPECT_EQ(errors[0].line, 6);
  EXPECT_TRUE(contains(errors[0].message, kBandwidthForm));
  EXPECT_TRUE(contains(errors[0].message, "'200Gbs'"));
}

TEST(ScenarioErrors, BareNumberIsAWrongUnit) {
  const auto errors = errors_of(tiny_with({{"400Gbps", "400"}}));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].key_path, "cluster.nic_bandwidth");
}

TEST(ScenarioErrors, MissingRequiredKey) {
  const auto errors = errors_of(tiny_with({{"  vocab: 32000\n", ""}}));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].key_path, "model.vocab");
  EXPECT_EQ(errors[0].message, "required key is missing");
}

TEST(ScenarioErrors, MissingRequiredSection) {
  const auto errors = errors_of(
      "cluster:\n  gpus: 8\n"
      "model: {layers: 2, hidden: 64, heads: 4, seq_len: 128, vocab: 1000}\n");
  EXPECT_TRUE(contains(error_at(errors, "training").message, "required section is missing"));
  EXPECT_EQ(error_at(errors, "training.global_batch").message, "required key is missing");
}

TEST(ScenarioErrors, WrongTypeAndRange) {
  const auto errors = errors_of(tiny_with({{"  gpus: 16\n", "  gpus: sixteen\n"}, {"  tp: 2\n", "  tp: 0\n"}}));
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(error_at(errors, "cluster.gpus").line, 4);
  EXPECT_TRUE(contains(error_at(errors, "parallelism.tp").message, "an integer in [1, 65536]"));
}

TEST(ScenarioErrors, BucketSizeIsAWholeNumberOfParameters) {
  EXPECT_EQ(load_text(kTiny, {"training.dp_bucket_size=4e7"}).training.dp_bucket_size, 40'000'000);
  // 0.5 was truncated to 0, the default rule, without a word.
  const auto errors = errors_of(kTiny, {"training.dp_bucket_size=0.5"});
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].key_path, "training.dp_bucket_size");
  EXPECT_TRUE(contains(errors[0].message, "whole number")) << errors[0].message;
}

TEST(ScenarioErrors, RateToleranceIsAFractionUpToATenth) {
  EXPECT_DOUBLE_EQ(load_text(kTiny, {"network.rate_tolerance=0.01"}).network.rate_tolerance, 0.01);
  for (const char* bad : {"network.rate_tolerance=-0.01", "network.rate_tolerance=0.5", "network.rate_tolerance=1%"}) {
    const auto errors = errors_of(kTiny, {bad});
    ASSERT_EQ(errors.size(), 1u) << bad;
    EXPECT_EQ(errors[0].key_path, "network.rate_tolerance") << bad;
  }
}

// merge_tolerance is a numerical precision: a day merged every pending completion into the
// last one's time until 2026-12-05; now [0, 1 ms].
TEST(ScenarioErrors, MergeToleranceIsAtMostAMillisecond) {
  EXPECT_EQ(load_text(kTiny, {"network.merge_tolerance=1ms"}).network.merge_tolerance, Time::ms(1));
  EXPECT_EQ(load_text(kTiny, {"network.merge_tolerance=0s"}).network.merge_tolerance, Time::zero());
  for (const char* bad : {"network.merge_tolerance=2ms", "network.merge_tolerance=1d", "network.merge_tolerance=-1us"}) {
    const auto errors = errors_of(kTiny, {bad});
    ASSERT_EQ(errors.size(), 1u) << bad;
    EXPECT_EQ(errors[0].key_path, "network.merge_tolerance") << bad;
  }
}

TEST(ScenarioErrors, EmptyValueAndClusterCap) {
  const auto errors = errors_of(tiny_with({{"  micro_batch: 1\n", "  micro_batch:\n"}, {"  gpus: 16\n", "  gpus: 2097152\n"}}));
  EXPECT_TRUE(contains(error_at(errors, "parallelism.micro_batch").message, "has no value")) << errors.size();
  EXPECT_TRUE(contains(error_at(errors, "cluster.gpus").message, "[1, 1048576]"));
}

TEST(ScenarioErrors, EmptyNameIsRefusedLikeASuitesName) {
  for (const auto& errors : {errors_of(tiny_with({{"name: tiny\n", "name: ''\n"}})), errors_of(kTiny, {"name=''"})}) {
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0].key_path, "name");
    EXPECT_TRUE(contains(errors[0].message, "is empty; expected the scenario's name")) << errors[0].message;
  }
  EXPECT_EQ(error_at(errors_of(tiny_with({{"name: tiny\n", "name: ''\n"}})), "name").line, 1);
  // Left out, the file's path names the run.
  EXPECT_EQ(load_text(tiny_with({{"name: tiny\n", ""}})).name, "");
  // The model's name likewise.
  const auto model = errors_of(kTiny, {"model.name=''"});
  ASSERT_EQ(model.size(), 1u);
  EXPECT_EQ(model[0].key_path, "model.name");
  EXPECT_TRUE(contains(model[0].message, "is empty; expected the model's name")) << model[0].message;
}

TEST(ScenarioFaults, LatencyOnlyEntryKeepsBandwidthAndElementsAreListedOnce) {
  const ScenarioConfig cfg = load_text(kTiny, {"network.faults=[{element: 'host:0', extra_latency: 5us}]"});
  ASSERT_EQ(cfg.network.faults.size(), 1u);
  EXPECT_DOUBLE_EQ(cfg.network.faults[0].bandwidth_factor, 1.0);
  EXPECT_DOUBLE_EQ(load_text(kTiny, {"network.faults=[{element: 'host:0'}]"}).network.faults[0].bandwidth_factor, 0.0);
  const auto errors =
      errors_of(kTiny, {"network.faults=[{element: 'host:0', bandwidth_factor: 0.5}, {element: 'host:0', bandwidth_factor: 0.2}]"});
  EXPECT_TRUE(contains(error_at(errors, "network.faults[1].element").message, "already listed"));
}

TEST(ScenarioFaults, ADegradedLinkSlowerThanAMillionthIsRefused) {
  // At 1e-11 of its rate an NVLink's transfers outran simulated time and the flow level printed
  // the healthy iteration (until 2026-12-05); 1e-10 printed 7.9e6 s where 2.5e7 was due.
  const auto errors = errors_of(kTiny, {"network.faults=[{element: 'nvlink:0', bandwidth_factor: 1e-11}]"});
  const InputError& e = error_at(errors, "network.faults[0].bandwidth_factor");
  EXPECT_TRUE(contains(e.message, "expected 0 (failed) or a factor in [1e-6, 1]; got 1e-11")) << e.message;
  EXPECT_DOUBLE_EQ(load_text(kTiny, {"network.faults=[{element: 'nvlink:0', bandwidth_factor: 1e-6}]"})
                       .network.faults[0].bandwidth_factor,
                   1e-6);
  EXPECT_DOUBLE_EQ(load_text(kTiny, {"network.faults=[{element: 'nvlink:0', bandwidth_factor: 0}]"})
                       .network.faults[0].bandwidth_factor,
                   0.0);
}

TEST(ScenarioErrors, TpMustDivideHeads) {
  // heads 12 (hidden 1536 = 12 x 128), tp 8: 12 % 8 = 4, so a TP rank would hold a part of a
  // head; gpus 16 = tp 8 x pp 2 x dp 1 is fine. Every error is about parallelism.tp, line 14.
  const auto errors = errors_of(
      tiny_with({{"  hidden: 1024\n", "  hidden: 1536\n"}, {"  heads: 16\n", "  heads: 12\n"}, {"  tp: 2\n", "  tp: 8\n"}}));
  ASSERT_GE(errors.size(), 1u);
  for (const InputError& e : errors) {
    EXPECT_EQ(e.key_path, "parallelism.tp");
    EXPECT_EQ(e.line, 14);
  }
  EXPECT_TRUE(contains(errors[0].message, "model.heads (12)"));
}

TEST(ScenarioErrors, RemovingAKeyThatDoesNotExistIsATypo) {
  // key=null on a key the file does not give removes nothing, and that is fine for a real key; a
  // key that does not exist at all is a typo (stragglers.host=null left the slow hosts in, and
  // said nothing, before 2026-12-04).
  const std::string file = ::testing::TempDir() + "/removal.yaml";
  std::ofstream(file) << kTiny;
  EXPECT_NO_THROW(load_scenario(file, {"training.overlap.pp_p2p=null", "model.kv_heads=null"}));
  try {
    load_scenario(file, {"parallelism.tpp=null"});
    ADD_FAILURE() << "expected BadInput";
  } catch (const BadInput& e) {
    EXPECT_EQ(e.errors().at(0).key_path, "parallelism.tpp");
    EXPECT_TRUE(contains(e.errors().at(0).message, "is not a scenario key, so there is nothing to remove")) << e.what();
    EXPECT_TRUE(contains(e.errors().at(0).message, "did you mean")) << e.what();
  }
  EXPECT_THROW(load_scenario(file, {"nosuchsection.key=null"}), BadInput);
}

TEST(ScenarioErrors, EcmpDrawsAreOneToSixtyFour) {
  for (const char* bad : {"network.ecmp_draws=0", "network.ecmp_draws=65", "network.ecmp_draws=many"}) {
    EXPECT_TRUE(contains(error_at(errors_of(kTiny, {bad}), "network.ecmp_draws").message, "[1, 64]")) << bad;
  }
  EXPECT_NO_THROW(load_text(kTiny, {"network.ecmp_draws=64"}));
}

TEST(ScenarioErrors, FfnHiddenMustGiveEachTpRankAColumn) {
  // kTiny has tp 2: an MLP one column wide leaves a rank with none (before 2026-12-04 the run
  // overflowed simulated time and said the model was far too large).
  EXPECT_TRUE(contains(error_at(errors_of(kTiny, {"model.ffn_hidden=1"}), "model.ffn_hidden").message,
                       "must be a multiple of parallelism.tp (2)"));
  EXPECT_NO_THROW(load_text(kTiny, {"model.ffn_hidden=2"}));
  // Nor may the ranks hold uneven shares (accepted until 2026-12-05, each priced 1,001 / 2 columns).
  EXPECT_TRUE(contains(error_at(errors_of(kTiny, {"model.ffn_hidden=1001"}), "model.ffn_hidden").message,
                       "must be a multiple of parallelism.tp (2)"));
}

TEST(ScenarioErrors, TpMustDivideKvHeads) {
  // GQA: 16 heads, 4 KV heads; tp 8 is a multiple of 4 (each KV head replicated on 2 ranks): fine.
  EXPECT_NO_THROW(load_text(tiny_with({{"  heads: 16\n", "  heads: 16\n  kv_heads: 4\n"},
                                       {"  tp: 2\n", "  tp: 8\n"}, {"  pp: 2\n", "  pp: 1\n"}})));
  // 12 heads (hidden 1536), 3 KV heads, tp 2: tp divides the 12 query heads but neither divides
  // the 3 KV heads nor is a multiple of them (3 % 2 = 1, 2 % 3 = 2).
  const auto errors = errors_of(tiny_with({{"  hidden: 1024\n", "  hidden: 1536\n"},
                                           {"  heads: 16\n", "  heads: 12\n  kv_heads: 3\n"}}));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].key_path, "parallelism.tp");
  EXPECT_TRUE(contains(errors[0].message, "model.kv_heads (3)"));
}

TEST(ScenarioErrors, TpMustStayInsideANode) {
  // tp 16 > 8 GPUs per node (heads 16 and gpus 16 = 16 x 1 x 1 are fine otherwise).
  const auto errors = errors_of(tiny_with({{"  tp: 2\n", "  tp: 16\n"}, {"  pp: 2\n", "  pp: 1\n"}}));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].key_path, "parallelism.tp");
  EXPECT_TRUE(contains(errors[0].message, "cluster.gpus_per_node (8)"));
}

TEST(ScenarioErrors, DataParallelMustBeWhole) {
  // gpus 24 (3 nodes of 8), tp 8 x pp 2 = 16 model ranks: 24 / 16 is not whole.
  const auto errors = errors_of(tiny_with({{"  gpus: 16\n", "  gpus: 24\n"}, {"  tp: 2\n", "  tp: 8\n"}}));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].key_path, "cluster.gpus");
  EXPECT_EQ(errors[0].line, 4);
  EXPECT_TRUE(contains(errors[0].message, "24 / 16"));
  EXPECT_TRUE(contains(errors[0].message, "not a whole number"));
}

TEST(ScenarioErrors, GlobalBatchMustBeAMultiple) {
  // micro_batch 1 x dp 4 = 4 sequences per step of every replica; 30 is not a multiple.
  const auto errors = errors_of(tiny_with({{"  global_batch: 32\n", "  global_batch: 30\n"}}));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].key_path, "training.global_batch");
  EXPECT_EQ(errors[0].line, 18);
  EXPECT_TRUE(contains(errors[0].message, "micro_batch x dp = 1 x 4 = 4; got 30"));
}

TEST(ScenarioErrors, InterleavingNeedsMicroBatchesMultipleOfPp) {
  // vpp 2 with pp 2: layers 4 = 2 x 2 fine; global 36 / (1 x 4) = 9 micro-batches, 9 % 2 != 0.
  const auto errors = errors_of(
      tiny_with({{"  pp: 2\n", "  pp: 2\n  vpp: 2\n"}, {"  global_batch: 32\n", "  global_batch: 36\n"}}));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].key_path, "training.global_batch");
  EXPECT_TRUE(contains(errors[0].message, "interleaved"));
}

TEST(ScenarioErrors, PlanMustDivideLayers) {
  const auto errors = errors_of(tiny_with({{"  layers: 4\n", "  layers: 3\n"}}));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].key_path, "parallelism.pp");
  EXPECT_TRUE(contains(errors[0].message, "model.layers (3)"));
  // A dense model's way out is named (2026-12-06).
  EXPECT_TRUE(contains(errors[0].message, "or list each stage's layers in stragglers.stage_layers")) << errors[0].message;
}

// Sequence parallelism splits each CP rank's tokens over tp, and CP's causal load balance cuts a
// sequence into 2 cp chunks: both must divide it (accepted until 2026-12-07; review: seq 8193 at
// tp 8 ran).
TEST(ScenarioErrors, TheSequenceMustSplitOverTpAndCp) {
  const auto sp = errors_of(tiny_with({{"  seq_len: 2048\n", "  seq_len: 2047\n"}}));
  EXPECT_TRUE(contains(error_at(sp, "model.seq_len").message, "tp x cp (2) must divide model.seq_len (2047)"));
  EXPECT_NO_THROW(load_text(tiny_with({{"  seq_len: 2048\n", "  seq_len: 2047\n"}}), {"parallelism.sequence_parallel=false"}));
  const auto cp = errors_of(kTiny, {"parallelism.cp=2", "model.seq_len=2046", "parallelism.tp=1", "cluster.gpus=8",
                                    "training.global_batch=16"});
  EXPECT_TRUE(contains(error_at(cp, "parallelism.cp").message, "2 x cp (4) must divide model.seq_len (2046)"));
  EXPECT_NO_THROW(load_text(kTiny, {"parallelism.cp=2", "model.seq_len=2044", "parallelism.tp=1", "cluster.gpus=8",
                                    "training.global_batch=16"}));
  // Where cp itself does not divide, the whole rule is named at once (QA, 2026-12-08).
  const auto odd = errors_of(kTiny, {"parallelism.cp=2", "model.seq_len=2047", "parallelism.tp=1", "cluster.gpus=8",
                                     "training.global_batch=16"});
  EXPECT_TRUE(contains(error_at(odd, "parallelism.cp").message, "(and 2 x cp, 4, must")) << error_at(odd, "parallelism.cp").message;
}

// A default that does not fit is named as the default, with the key to set (review 2026-12-07).
TEST(ScenarioErrors, ADefaultThatDoesNotFitIsNamedAsTheDefault) {
  const auto defaulted = errors_of(kTiny, {"cluster.gpus_per_node=1", "cluster.gpus=4", "parallelism.tp=1",
                                           "training.global_batch=4"});
  const std::string m = error_at(defaulted, "cluster.nics_per_node").message;
  EXPECT_TRUE(contains(m, "got 8 (the default): set cluster.nics_per_node")) << m;
  const auto given = errors_of(kTiny, {"cluster.nics_per_node=3"});
  EXPECT_FALSE(contains(error_at(given, "cluster.nics_per_node").message, "the default"));
}

TEST(ScenarioErrors, GqaKvHeadsMustDivideHeads) {
  const auto errors = errors_of(tiny_with({{"  heads: 16\n", "  heads: 16\n  kv_heads: 3\n"}}));
  EXPECT_TRUE(contains(error_at(errors, "model.kv_heads").message, "must divide model.heads (16)"));
}

// A name is one line: a quoted "\n" was accepted and broke the text summary until 2026-12-05.
TEST(ScenarioErrors, ANameWithALineBreakIsRefused) {
  const auto errors = errors_of(tiny_with({{"name: tiny\n", "name: \"two\\nlines\"\n"}}));
  EXPECT_TRUE(contains(error_at(errors, "name").message, "has a line break")) << errors.size();
  const auto block = errors_of(tiny_with({{"  heads: 16\n", "  heads: 16\n  name: |\n    block\n"}}));
  EXPECT_TRUE(contains(error_at(block, "model.name").message, "has a line break")) << block.size();
}

// model.head_dim sizes heads that are not hidden / heads wide, in training too since 2026-12-07
// (refused before); without it the hidden size must split into the heads.
TEST(ScenarioErrors, AHiddenSizeThatDoesNotSplitIntoHeadsNeedsAHeadDim) {
  EXPECT_EQ(load_text(tiny_with({{"  heads: 16\n", "  heads: 16\n  head_dim: 128\n"}})).model.head_dim, 128);
  const auto errors = errors_of(tiny_with({{"  hidden: 1024\n", "  hidden: 1000\n"}}));
  EXPECT_TRUE(contains(error_at(errors, "model.hidden").message, "unless model.head_dim is given")) << errors.size();
  EXPECT_NO_THROW(load_text(tiny_with({{"  hidden: 1024\n", "  hidden: 1000\n"}, {"  heads: 16\n", "  heads: 16\n  head_dim: 64\n"}})));
}

TEST(ScenarioErrors, SeveralReadErrorsAtOnce) {
  // Three independent mistakes, all reported in one go (in file order): a wrong unit (line 6),
  // a missing required key, a typo (line 16).
  const auto errors = errors_of(tiny_with(
      {{"400Gbps", "200Gbs"}, {"  vocab: 32000\n", ""}, {"  micro_batch: 1\n", "  micro_bach: 1\n"}}));
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_EQ(errors[0].key_path, "cluster.nic_bandwidth");
  EXPECT_EQ(errors[0].line, 6);
  EXPECT_EQ(errors[1].key_path, "model.vocab");
  EXPECT_EQ(errors[2].key_path, "parallelism.micro_bach");
  EXPECT_EQ(errors[2].line, 15);  // one line up: the vocab line was removed
}

TEST(ScenarioErrors, SeveralPlanErrorsAtOnce) {
  // hidden 1000 % heads 16 = 8 (line 9); pp 2 does not divide layers 3 (line 15); global batch
  // 30 is not a multiple of micro_batch x dp = 4 (line 18).
  const auto errors = errors_of(tiny_with({{"  hidden: 1024\n", "  hidden: 1000\n"},
                                           {"  layers: 4\n", "  layers: 3\n"},
                                           {"  global_batch: 32\n", "  global_batch: 30\n"}}));
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_EQ(error_at(errors, "model.hidden").line, 9);
  EXPECT_EQ(error_at(errors, "parallelism.pp").line, 15);
  EXPECT_EQ(error_at(errors, "training.global_batch").line, 18);
}

TEST(ScenarioErrors, CongestionLevelsRunTrainingPacketOnSmallFabrics) {
  for (const char* level : {"packet", "flow+dcqcn"}) {
    EXPECT_EQ(to_string(load_text(std::string(kTiny) + "network:\n  fidelity: " + level + "\n").network.fidelity),
              std::string(level));
  }
  // The packet level keeps to a few hundred endpoints: the error names the limit and the way out.
  const auto big = errors_of(std::string(kTiny) + "network:\n  fidelity: packet\n", {"cluster.gpus=1024", "training.global_batch=512"});
  ASSERT_EQ(big.size(), 1u);
  EXPECT_EQ(big[0].key_path, "cluster.gpus");
  EXPECT_TRUE(contains(big[0].message, "limited to 512 GPUs"));
  EXPECT_TRUE(contains(big[0].message, "flow+dcqcn"));
  EXPECT_NO_THROW(load_text(std::string(kTiny) + "network:\n  fidelity: flow+dcqcn\n",
                            {"cluster.gpus=1024", "training.global_batch=512"}));
  const auto errors = errors_of(std::string(kTiny) + "network:\n  fidelity: exact\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_TRUE(contains(errors[0].message, "one of analytical, flow, flow+dcqcn, packet"));
}

TEST(ScenarioErrors, OverridesAreCheckedLikeTheFile) {
  // --set parallelism.tp=3: 16 heads % 3, 3 does not divide 8 GPUs per node, 16 GPUs % (3 x 2).
  const auto errors = errors_of(kTiny, {"parallelism.tp=3"});
  const InputError e = error_at(errors, "parallelism.tp");
  EXPECT_TRUE(contains(e.message, "model.heads (16)"));
  EXPECT_EQ(e.line, 0);  // the value came from the command line, not from line 14
  EXPECT_NO_THROW(load_text(kTiny, {"parallelism.tp=4"}));
  EXPECT_EQ(load_text(kTiny, {"parallelism.tp=4", "parallelism.pp=1"}).parallelism.tp, 4);
}

TEST(ScenarioErrors, EmptyAndNonMappingDocuments) {
  const auto empty = errors_of("");
  ASSERT_EQ(empty.size(), 1u);
  EXPECT_TRUE(contains(empty[0].message, "the scenario is empty"));
  // One error, not one more per required key of every section.
  for (const char* text : {"- a\n- b\n", "hello\n"}) {
    const auto errors = errors_of(text);
    ASSERT_EQ(errors.size(), 1u) << text;
    EXPECT_TRUE(contains(errors[0].message, "a scenario is a mapping with sections cluster")) << errors[0].message;
  }
}

TEST(ScenarioErrors, UnknownKeysInsideSectionsAreRejected) {
  const auto errors = errors_of(std::string(kTiny) + "inference:\n  no_such_key: 1\n");
  ASSERT_FALSE(errors.empty());
  EXPECT_TRUE(std::any_of(errors.begin(), errors.end(), [](const InputError& e) {
    return e.key_path == "inference.no_such_key" && contains(e.message, "unknown key");
  }));
}

TEST(ScenarioErrors, ServingScenariosHaveNoTrainingPlan) {
  // kTiny's parallelism and training sections would be dropped by a serving run: named, not read.
  const auto errors = errors_of(std::string(kTiny) + "inference:\n  no_such_key: 1\n");
  for (const char* section : {"parallelism", "training"}) {
    EXPECT_TRUE(std::any_of(errors.begin(), errors.end(), [&](const InputError& e) {
      return e.key_path == section && contains(e.message, "a serving (inference) scenario has no training step");
    })) << section;
  }
}

TEST(ScenarioErrors, MissingFileIsNamed) {
  try {
    load_scenario("/nonexistent/clustersim/scenario.yaml");
    FAIL() << "expected BadInput";
  } catch (const BadInput& e) {
    EXPECT_TRUE(contains(e.what(), "/nonexistent/clustersim/scenario.yaml"));
  }
}

// Network microbenchmarks: cluster + network + traffic, no training sections.
const char* const kTraffic =
    "cluster:\n"                 // 1
    "  gpus: 64\n"               // 2
    "network:\n"                 // 3
    "  fidelity: flow\n"         // 4
    "traffic:\n"                 // 5
    "  pattern: incast\n"        // 6
    "  incast_senders: 8\n";     // 7

TEST(TrafficScenario, Loads) {
  const ScenarioConfig cfg = load_text(kTraffic);
  ASSERT_TRUE(cfg.traffic.has_value());
  EXPECT_EQ(cfg.traffic->pattern, TrafficPattern::kIncast);
  EXPECT_EQ(cfg.traffic->incast_senders, 8);
  EXPECT_EQ(cfg.traffic->bytes_per_pair, Bytes::mib(64));  // default
  EXPECT_EQ(cfg.network.fidelity, Fidelity::kFlow);
}

TEST(TrafficScenario, Errors) {
  const auto with_model = errors_of(std::string(kTraffic) + "model: {layers: 1}\n");
  EXPECT_TRUE(contains(error_at(with_model, "model").message, "a traffic scenario has no training step"));

  std::string too_many = kTraffic;
  too_many.replace(too_many.find("senders: 8"), 10, "senders: 64");
  const auto senders = errors_of(too_many);
  ASSERT_EQ(senders.size(), 1u);
  EXPECT_EQ(senders[0].key_path, "traffic.incast_senders");
  EXPECT_EQ(senders[0].line, 7);

  std::string bad_pattern = kTraffic;
  bad_pattern.replace(bad_pattern.find("incast\n"), 7, "broadcast\n");
  const auto pattern = errors_of(bad_pattern);
  ASSERT_EQ(pattern.size(), 1u);
  EXPECT_EQ(pattern[0].key_path, "traffic.pattern");
  EXPECT_TRUE(contains(pattern[0].message, "shift, random_permutation, ring_allreduce, all_to_all, incast"));

  const auto zero = errors_of(std::string(kTraffic) + "  bytes_per_pair: 0B\n");
  EXPECT_TRUE(contains(error_at(zero, "traffic.bytes_per_pair").message, "above zero"));
}

// Review findings: inputs that would overflow byte counts or Time, or make the run explode.
TEST(ScenarioErrors, TrafficBytesAreBounded) {
  const auto big = errors_of(std::string(kTraffic) + "  bytes_per_pair: 2TiB\n");
  ASSERT_FALSE(big.empty());
  EXPECT_EQ(big[0].key_path, "traffic.bytes_per_pair");
  EXPECT_TRUE(contains(big[0].message, "at most 1TiB"));
  // All-to-all grows as N^2: refused beyond what each level handles, not left to run for hours.
  const auto a2a = errors_of(kTraffic, {"cluster.gpus=1024", "traffic.pattern=all_to_all"});
  EXPECT_TRUE(contains(error_at(a2a, "traffic.pattern").message, "1.05e+06 sub-flows")) << a2a.size();
  EXPECT_NO_THROW(load_text(kTraffic, {"cluster.gpus=1024", "traffic.pattern=all_to_all", "network.fidelity=analytical"}));
}

TEST(ScenarioErrors, TooManyMicroBatchesAndTinyBucketsAreRejected) {
  const auto many = errors_of(tiny_with({{"  global_batch: 32", "  global_batch: 1073741824"}}));
  bool found = false;
  for (const InputError& e : many) found |= e.key_path == "training.global_batch" && contains(e.message, "1,000,000");
  EXPECT_TRUE(found);
  const auto tiny_buckets =
      errors_of(std::string(kTiny).replace(std::string(kTiny).find("training:\n"), 10, "training:\n  dp_bucket_size: 1\n"));
  ASSERT_FALSE(tiny_buckets.empty());
  EXPECT_EQ(tiny_buckets[0].key_path, "training.dp_bucket_size");
}

}  // namespace
}  // namespace clustersim
