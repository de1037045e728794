// SPDX-License-Identifier: Apache-2.0
#include "sim/report/sweep/sweep_spec.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "sim/core/error.h"
#include "sim/report/sweep/candidate_space.h"
#include "tests/unit/scratch_dir.h"
#include "tests/unit/sweep/sweep_test_util.h"

namespace clustersim::sweep {
namespace {

using testing::spec_from;

std::string error_text(const std::string& body) {
  try {
    spec_from(body);
  } catch (const BadInput& e) {
    std::string s;
    for (const InputError& err : e.errors()) s += err.to_string() + "\n";
    return s;
  }
  return "";
}

TEST(SweepSpec, ListsRangesAndMappingsExpand) {
  const SweepSpec s = spec_from(
      "axes:\n"
      "  parallelism.tp: [1, 2, 4]\n"
      "  parallelism.pp: {from: 1, to: 8, times: 2}\n"
      "  parallelism.micro_batch: {from: 1, to: 3}\n"
      "  cluster: [{gpus: 16}, {gpus: 32, nic_bandwidth: 400Gbps}]\n");
  ASSERT_EQ(s.axes.size(), 4u);
  EXPECT_EQ(s.axes[1].values.size(), 4u);  // 1 2 4 8
  EXPECT_EQ(s.axes[1].values[3].label, "8");
  EXPECT_EQ(s.axes[2].values.size(), 3u);
  EXPECT_EQ(s.axes[3].values[1].label, "gpus=32 nic_bandwidth=400Gbps");
  EXPECT_EQ(s.axes[3].values[1].sets.size(), 2u);
  EXPECT_EQ(s.candidate_count(), 3 * 4 * 3 * 2);
  EXPECT_EQ(s.objective, "tokens_per_s");
  EXPECT_EQ(s.goal, Goal::kMaximize);
}

// MFU is against the peak of the precision trained in: ranking an axis over precision by it put
// a bf16 plan (5.42 s, 36.7%) above its FP8 twin (3.63 s, 27.4%) without a word (until 2026-12-06).
TEST(SweepSpec, AnMfuObjectiveOverPrecisionsOrGpusIsNoted) {
  const std::vector<std::string> notes =
      objective_notes(spec_from("axes: {training.precision: [bf16, fp8]}\nobjective: mfu\n"));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("objective mfu: the axis over training.precision changes the peak"), std::string::npos)
      << notes[0];
  EXPECT_EQ(objective_notes(spec_from("axes: {cluster: [{gpu: A100-SXM4-80GB}, {gpu: H100-SXM}]}\nobjective: hfu\n"))
                .size(),
            1u);
  EXPECT_TRUE(objective_notes(spec_from("axes: {training.precision: [bf16, fp8]}\n")).empty());
  EXPECT_TRUE(objective_notes(spec_from("axes: {parallelism.tp: [1, 2]}\nobjective: mfu\n")).empty());
  EXPECT_TRUE(objective_notes(spec_from("axes: {training.precision: [fp8]}\nobjective: mfu\n")).empty());
}

// A scenario given to `sweep` gets one error saying what it is (an unknown-key error per section
// until 2026-12-06).
TEST(SweepSpec, AScenarioIsSaidToBeOne) {
  try {
    sweep_spec_from_tree(parse_yaml_text("cluster: {gpus: 8}\nmodel: {layers: 2}\n", "plan.yaml"), "plan.yaml");
    FAIL() << "expected BadInput";
  } catch (const BadInput& e) {
    ASSERT_EQ(e.errors().size(), 1u);
    EXPECT_NE(e.errors()[0].message.find("this is a scenario (it has 'cluster' or 'model'), not a sweep file: run it "
                                         "with 'clustersim run', or sweep it from a file with 'base: plan.yaml'"),
              std::string::npos)
        << e.errors()[0].message;
  }
}

TEST(SweepSpec, CostObjectiveMinimisesAndNeedsPrices) {
  EXPECT_NE(error_text("axes: {parallelism.tp: [1, 2]}\nobjective: cost_per_mtoken\n")
                .find("needs a price for GPU 'A100-SXM4-80GB'"),
            std::string::npos);
  const SweepSpec s = spec_from(
      "axes: {parallelism.tp: [1, 2]}\nobjective: cost_per_mtoken\nprice_per_gpu_hour: {A100-SXM4-80GB: 2}\n");
  EXPECT_EQ(s.goal, Goal::kMinimize);
  // Free GPUs make every cost 0: nothing to rank by (the tie-break picked the slower plan).
  EXPECT_NE(error_text("axes: {parallelism.tp: [1, 2]}\nobjective: cost_per_mtoken\nprice_per_gpu_hour: {A100-SXM4-80GB: 0}\n")
                .find("price_per_gpu_hour: every price is 0"),
            std::string::npos);
}

// Prices and axis numbers are plain decimals, as scenario numbers: '+2', '0x10' and ' 2' were
// read by strtod until 2026-12-05.
TEST(SweepSpec, NumbersArePlainDecimals) {
  for (const char* price : {"'+2'", "0x10", "' 2'"}) {
    EXPECT_NE(error_text(std::string("axes: {parallelism.tp: [1, 2]}\nobjective: cost_per_mtoken\nprice_per_gpu_hour: "
                                     "{A100-SXM4-80GB: ") + price + "}\n")
                  .find("price_per_gpu_hour"),
              std::string::npos)
        << price;
  }
  // A price given wrongly is one error, not also "needs a price" (QA 2026-12-07).
  const std::string dollar = error_text(
      "axes: {parallelism.tp: [1, 2]}\nobjective: cost_per_mtoken\nprice_per_gpu_hour: {A100-SXM4-80GB: '$2.50'}\n");
  EXPECT_NE(dollar.find("price_per_gpu_hour.A100-SXM4-80GB"), std::string::npos) << dollar;
  EXPECT_EQ(dollar.find("needs a price"), std::string::npos) << dollar;
  EXPECT_EQ(spec_from("axes: {parallelism.tp: [1, 2]}\nobjective: cost_per_mtoken\nprice_per_gpu_hour: {A100-SXM4-80GB: 2.5e0}\n")
                .price_per_gpu_hour.at("A100-SXM4-80GB"),
            2.5);
}

// An empty name is refused, as a suite's or a scenario's (it named the results after nothing until
// 2026-12-05); left out, the file's stem names them.
TEST(SweepSpec, EmptyNameIsRefused) {
  const std::string text = error_text("name: ''\naxes: {parallelism.tp: [1, 2]}\n");
  EXPECT_NE(text.find("name: is empty; expected the sweep's name"), std::string::npos) << text;
  // A scenario name '' on an axis is refused too, as the scenario's key.
  EXPECT_NE(error_text("axes: {name: ['', b]}\n").find("is empty; expected the scenario's name"), std::string::npos);
}

// A section written with no entries ({}) sets nothing: refused as one with no value is (it was
// accepted as a no-op until 2026-12-07).
TEST(SweepSpec, EmptySectionsAreRefused) {
  for (const auto& [body, message] :
       std::vector<std::pair<std::string, std::string>>{
           {"axes: {parallelism.tp: [1, 2]}\nset: {}\n", "set: has no value"},
           {"axes: {parallelism.tp: [1, 2]}\nset:\n", "set: has no value"},
           {"axes: {parallelism.tp: [1, 2]}\nconstraints: {}\n", "constraints: has no value"},
           {"axes: {parallelism.tp: [1, 2]}\nprice_per_gpu_hour: {}\n", "price_per_gpu_hour: has no value"}}) {
    const std::string text = error_text(body);
    EXPECT_NE(text.find(message), std::string::npos) << body << ": " << text;
  }
}

// network.fidelity is each stage's own: as an axis every value ran at the analytical level under
// its label (a 'packet' row was the 'flow' row), and in `set` it was overridden (until 2026-12-05).
TEST(SweepSpec, TheLevelIsTheStagesNotAnAxisOrASetting) {
  for (const char* body : {"axes: {parallelism.tp: [1, 2], network.fidelity: [flow, packet]}\n",
                           "axes: {parallelism.tp: [1, 2], network: [{fidelity: flow}, {fidelity: packet}]}\n",
                           "axes: {parallelism.tp: [1, 2]}\nset: {network.fidelity: packet}\n",
                           "axes: {parallelism.tp: [1, 2]}\nset: {network: {fidelity: flow}}\n"}) {
    const std::string text = error_text(body);
    EXPECT_NE(text.find("each stage sets network.fidelity itself"), std::string::npos) << body << text;
  }
  // Other network keys stay free.
  EXPECT_EQ(spec_from("axes: {parallelism.tp: [1, 2], network.routing: [ecmp, spray]}\n").axes.size(), 2u);
}

// A price is at most 1e9 per GPU-hour, as a serving pool's: 1e308 passed, and every candidate's
// cost (price x GPUs) was inf in sweep.csv, "did not produce the objective" with a cost objective.
TEST(SweepSpec, PricesAreBounded) {
  for (const char* price : {"1e308", "1.5e9"}) {
    const std::string text = error_text(std::string("axes: {parallelism.tp: [1, 2]}\nobjective: cost_per_mtoken\n"
                                                    "price_per_gpu_hour: {A100-SXM4-80GB: ") + price + "}\n");
    EXPECT_NE(text.find("price_per_gpu_hour.A100-SXM4-80GB: expected a price per GPU-hour in [0, 1e9]"), std::string::npos)
        << price << ": " << text;
  }
  EXPECT_EQ(spec_from("axes: {parallelism.tp: [1, 2]}\nobjective: cost_per_mtoken\nprice_per_gpu_hour: {A100-SXM4-80GB: 1e9}\n")
                .price_per_gpu_hour.at("A100-SXM4-80GB"),
            1e9);
}

// An unknown axis key is said once (not once per value), beside the file's other mistakes (before
// 2026-12-05 a bad objective hid it, and then it came twice).
TEST(SweepSpec, AnUnknownAxisKeyIsSaidOnceWithTheOtherMistakes) {
  const std::string text = error_text("axes: {parallelism.tensor_parallel: [4, 8]}\nobjective: tokens_per_sec\n");
  size_t said = 0;
  for (size_t at = text.find("is not a scenario key"); at != std::string::npos; at = text.find("is not a scenario key", at + 1)) {
    ++said;
  }
  EXPECT_EQ(said, 1u) << text;
  EXPECT_NE(text.find("'tokens_per_sec' is not an output"), std::string::npos) << text;
}

// One key given twice in `set`, dotted and nested: the later won without a word until 2026-12-06.
TEST(SweepSpec, SetGivesEachKeyOnce) {
  const std::string text =
      error_text("set: {training.global_batch: 1024, training: {global_batch: 2048}}\naxes: {parallelism.tp: [1, 2]}\n");
  EXPECT_NE(text.find("set.training.global_batch: is given twice"), std::string::npos) << text;
  const std::string nested = error_text("set: {training: {global_batch: 8}, training.global_batch: 16}\naxes: {parallelism.tp: [1, 2]}\n");
  EXPECT_NE(nested.find("is given twice"), std::string::npos) << nested;
}

// A base that does not load leaves the kind of run unknown: its error alone, not "tpot_p99_s is
// not an output of training scenarios" for a serving base that failed.
TEST(SweepSpec, ABaseThatDoesNotLoadIsTheOnlyError) {
  const std::string text = error_text("set: {training.global_batch: 7}\naxes: {parallelism.tp: [1, 2]}\n"
                                      "constraints: {tpot_p99_s: {max: 0.05}}\n");
  EXPECT_NE(text.find("does not load"), std::string::npos) << text;
  EXPECT_EQ(text.find("not an output"), std::string::npos) << text;
}

// A `set` the base cannot take alone but the candidates can (a global batch for the axes' GPU
// counts) is a sweep, not a refusal; one no candidate takes is said at the sweep file's line, as
// the `set` entry (until 2026-12-07 every such sweep was refused, at the base's path; review).
TEST(SweepSpec, ASetTheCandidatesTakeLoads) {
  const std::string base = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/planning/llama3-70b-4096.yaml";
  const auto spec_text = [&](const std::string& body) { return "name: t\nbase: '" + base + "'\n" + body; };
  const auto load = [&](const std::string& text) {
    return sweep_spec_from_tree(parse_yaml_text(text, "/tmp/sweep.yaml"), "/tmp/sweep.yaml");
  };
  EXPECT_NO_THROW(load(spec_text("set:\n  training.global_batch: 128\naxes:\n  cluster.gpus: [64, 128]\n")));
  // A base that needs an axis's key: its GPUs (for prices) are read from the candidate that loads,
  // and the candidates are tried in their own order, the last axis fastest (code review: the
  // price check read no GPU, and 256 tries of the first axis missed candidate 1).
  const std::filesystem::path no_gpus =
      std::filesystem::temp_directory_path() / ("sweep_base_no_gpus_" + std::to_string(::getpid()) + ".yaml");
  {
    std::ifstream in(base);
    std::ofstream out(no_gpus);
    for (std::string line; std::getline(in, line);) {
      if (line != "  gpus: 4096") out << line << "\n";
    }
  }
  const auto on = [&](const std::string& body) { return "name: t\nbase: '" + no_gpus.string() + "'\n" + body; };
  EXPECT_NO_THROW(load(on("axes:\n  cluster.gpus: [4096]\nobjective: cost_per_mtoken\nprice_per_gpu_hour: {H100-SXM: 2.5}\n")));
  EXPECT_NO_THROW(load(on("axes:\n  parallelism.micro_batch: {from: 1, to: 256}\n  cluster.gpus: [4095, 4096]\n")));
  std::filesystem::remove(no_gpus);
  try {
    load(spec_text("set:\n  cluster.gpus: 100\naxes:\n  parallelism.tp: [4, 8]\n"));
    ADD_FAILURE() << "expected BadInput";
  } catch (const BadInput& e) {
    const std::string text = e.what();
    EXPECT_NE(text.find("/tmp/sweep.yaml:4: set.cluster.gpus: the base scenario (with `set`) does not load"), std::string::npos)
        << text;
  }
}

// Prices are asked for the GPUs the candidates run on: a base GPU every candidate replaces needs
// none, and a price for it is a price no candidate uses (until 2026-12-07 it was asked one, and a
// price for it passed; review).
TEST(SweepSpec, PricesAreForTheGpusTheCandidatesUse) {
  const std::string base = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/planning/llama3-70b-4096.yaml";  // H100-SXM
  const auto load = [&](const std::string& prices) {
    return sweep_spec_from_tree(parse_yaml_text("name: t\nbase: '" + base + "'\naxes:\n  cluster.gpu: [H200-SXM]\n"
                                                "  parallelism.tp: [4, 8]\nobjective: cost_per_mtoken\n"
                                                "price_per_gpu_hour: {" + prices + "}\n",
                                                "/tmp/sweep.yaml"),
                                "/tmp/sweep.yaml");
  };
  EXPECT_NO_THROW(load("H200-SXM: 3.2"));
  try {
    load("H200-SXM: 3.2, H100-SXM: 2.5");
    ADD_FAILURE() << "expected BadInput";
  } catch (const BadInput& e) {
    EXPECT_NE(std::string(e.what()).find("price_per_gpu_hour.H100-SXM: no candidate uses GPU 'H100-SXM'"), std::string::npos)
        << e.what();
  }
}

// train_tokens is a training run's; a serving sweep took it until 2026-12-07 and gave its
// candidates a time to train from their output tokens.
TEST(SweepSpec, OnlyATrainingSweepTakesTrainTokens) {
  const std::string base = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/infer-colocated.yaml";
  try {
    sweep_spec_from_tree(parse_yaml_text("base: '" + base + "'\naxes: {inference.requests: [300]}\n"
                                         "objective: {metric: tokens_per_s, train_tokens: 1e12}\n",
                                         "/tmp/sweep.yaml"),
                         "/tmp/sweep.yaml");
    ADD_FAILURE() << "expected BadInput";
  } catch (const BadInput& e) {
    EXPECT_NE(std::string(e.what()).find("objective.train_tokens: only a training sweep takes train_tokens"),
              std::string::npos)
        << e.what();
  }
}

TEST(SweepSpec, AMissingBaseIsTheOnlyError) {
  try {
    sweep_spec_from_tree(parse_yaml_text("base: missing.yaml\naxes: {parallelism.tp: [1, 2]}\n"
                                         "constraints: {tpot_p99_s: {max: 0.05}}\n",
                                         "test.yaml"),
                         "test.yaml");
    ADD_FAILURE() << "expected BadInput";
  } catch (const BadInput& e) {
    const std::string text = e.what();
    EXPECT_NE(text.find("no scenario file"), std::string::npos) << text;
    EXPECT_EQ(text.find("not an output"), std::string::npos) << text;
  }
}

// A limit in days takes a duration (QA 2026-12-07: `{max: 30d}` read "expected a number").
TEST(SweepSpec, ADaysLimitTakesADuration) {
  const std::string head = "axes: {parallelism.tp: [1]}\nobjective: {metric: time_to_train_days, train_tokens: 1e12}\n";
  EXPECT_DOUBLE_EQ(*spec_from(head + "constraints: {time_to_train_days: {max: 30d}}\n").limits[0].max, 30.0);
  EXPECT_DOUBLE_EQ(*spec_from(head + "constraints: {time_to_train_days: {max: 36h}}\n").limits[0].max, 1.5);
  EXPECT_DOUBLE_EQ(*spec_from(head + "constraints: {time_to_train_days: {max: 30}}\n").limits[0].max, 30.0);
  EXPECT_NE(error_text(head + "constraints: {time_to_train_days: {max: 30parsecs}}\n").find("30d, 720h, or a number of days"),
            std::string::npos);
}

// A limit in GiB takes a size with its unit, as one in seconds takes a duration (until 2026-12-06
// "40GiB" was refused as not a number).
TEST(SweepSpec, AGibLimitTakesASize) {
  const SweepSpec s = spec_from("axes: {parallelism.tp: [1]}\nconstraints: {memory_per_gpu_gib: {max: 40GiB}}\n");
  ASSERT_EQ(s.limits.size(), 1u);
  EXPECT_DOUBLE_EQ(*s.limits[0].max, 40.0);
  EXPECT_DOUBLE_EQ(*spec_from("axes: {parallelism.tp: [1]}\nconstraints: {memory_per_gpu_gib: {max: 512MiB}}\n")
                        .limits[0]
                        .max,
                   0.5);
  EXPECT_DOUBLE_EQ(*spec_from("axes: {parallelism.tp: [1]}\nconstraints: {memory_per_gpu_gib: {max: 40}}\n").limits[0].max,
                   40.0);
  EXPECT_NE(error_text("axes: {parallelism.tp: [1]}\nconstraints: {memory_per_gpu_gib: {max: 40parsecs}}\n")
                .find("constraints.memory_per_gpu_gib.max"),
            std::string::npos);
  // No output is negative: a negative bound is refused, with a unit or without (2026-12-06).
  const std::string negative = error_text("axes: {parallelism.tp: [1]}\nconstraints: {memory_per_gpu_gib: {max: -1}}\n");
  EXPECT_NE(negative.find("memory_per_gpu_gib is never negative; got max -1"), std::string::npos) << negative;
  EXPECT_NE(error_text("axes: {parallelism.tp: [1]}\nconstraints: {mfu: {min: -0.5}}\n").find("never negative"),
            std::string::npos);
}

TEST(SweepSpec, BadFilesSayWhatIsWrong) {
  EXPECT_NE(error_text("axis: {parallelism.tp: [1]}\n").find("did you mean 'axes'"), std::string::npos);
  EXPECT_NE(error_text("axes: {parallelism.tp: []}\n").find("axes.parallelism.tp: the axis is empty"), std::string::npos);
  // An empty key names no scenario key, said plainly (QA, 2026-12-07).
  const std::string empty_key = error_text("axes: {\"\": [1, 2]}\n");
  EXPECT_NE(empty_key.find("axes: '' is not a scenario key: give a dotted key path"), std::string::npos) << empty_key;
  EXPECT_NE(error_text("axes: {parallelism..tp: [1, 2]}\n").find("'parallelism..tp' is not a scenario key: give"),
            std::string::npos);
  // A list value (an MoE model's stragglers.stage_layers) goes in a mapping of its section: said
  // once for the axis, with the form that works (QA, 2026-12-07: one bare line a value).
  const std::string lists = error_text("axes: {stragglers.stage_layers: [[2, 2], [3, 1]]}\n");
  EXPECT_NE(lists.find("axis stragglers: [{stage_layers: [...]}"), std::string::npos) << lists;
  EXPECT_EQ(lists.find("each value must"), lists.rfind("each value must")) << lists;
  EXPECT_NE(error_text("axes: {parallelism.tp: {from: 3, to: 1}}\n").find("the range is empty"), std::string::npos);
  EXPECT_NE(error_text("axes: {parallelism.tp: [1]}\nobjective: speed\n").find("'speed' is not an output"),
            std::string::npos);
  EXPECT_NE(error_text("axes: {parallelism.tpp: [1, 2]}\n").find("'parallelism.tpp' is not a scenario key"),
            std::string::npos);
  EXPECT_NE(error_text("axes: {paralelism.tp: [1, 2]}\n").find("did you mean 'parallelism'"), std::string::npos);
  EXPECT_NE(error_text("axes: {parallelism.tp: [1]}\nconstraints: {tpot_s: {max: 1}}\n").find("not an output of training"),
            std::string::npos);
  EXPECT_NE(error_text("").find("axes: required"), std::string::npos);
  EXPECT_NE(error_text("axes: {parallelism.tp: [1]}\nset: {training.global_btch: 8}\n").find("set.training.global_btch"),
            std::string::npos);
  EXPECT_NE(error_text("axes: {parallelism.tp: [1]}\nobjective: {metric: time_to_train_days}\n").find("train_tokens"),
            std::string::npos);
  // An empty goal is no goal given: it took the metric's default until 2026-12-05.
  const std::string goal = error_text("axes: {parallelism.tp: [1]}\nobjective: {metric: mfu, goal: ''}\n");
  EXPECT_NE(goal.find("test.yaml:7: objective.goal: expected one of max, min, got ''"), std::string::npos) << goal;
  EXPECT_EQ(spec_from("axes: {parallelism.tp: [1]}\nobjective: {metric: mfu, goal: min}\n").goal, Goal::kMinimize);
  // A base file that is not there is named with the sweep file and the key.
  try {
    sweep_spec_from_tree(parse_yaml_text("base: no_such.yaml\naxes: {parallelism.tp: [1]}\n", "/tmp/s.yaml"), "/tmp/s.yaml");
    ADD_FAILURE() << "expected BadInput";
  } catch (const BadInput& e) {
    EXPECT_NE(std::string(e.what()).find("/tmp/s.yaml:1: base: no scenario file '/tmp/no_such.yaml'"), std::string::npos)
        << e.what();
  }
  // A null in `set` on a key that does not exist removes nothing: a typo, refused as --set's is.
  EXPECT_NE(error_text("axes: {parallelism.tp: [1]}\nset: {stragglers.host: null}\n").find("set.stragglers.host: not a scenario key"),
            std::string::npos);
  EXPECT_EQ(error_text("axes: {parallelism.tp: [1]}\nset: {training.overlap.pp_p2p: null}\n").find("not a scenario key"),
            std::string::npos);
  // Two axes setting one key: one would override the other under both labels (2026-12-04).
  EXPECT_NE(error_text("axes: {parallelism: [{tp: 1}, {tp: 2}], parallelism.tp: [4, 8]}\n")
                .find("axes.parallelism.tp: sets parallelism.tp, which axes.parallelism sets too"),
            std::string::npos);
  // So would an axis a key `set` gives (the axis overrode it without a word until 2026-12-05).
  EXPECT_NE(error_text("set: {cluster.gpus: 32}\naxes: {cluster.gpus: [32, 64]}\n")
                .find("test.yaml:6: set.cluster.gpus: axes.cluster.gpus sets cluster.gpus too"),
            std::string::npos);
  EXPECT_NE(error_text("set: {parallelism: {tp: 2, pp: 1}}\naxes: {parallelism: [{tp: 1}, {tp: 4}]}\n")
                .find("set.parallelism.tp: axes.parallelism sets parallelism.tp too"),
            std::string::npos);
  EXPECT_EQ(error_text("set: {parallelism.pp: 1}\naxes: {parallelism.tp: [1, 2]}\n"), "");
  EXPECT_EQ(error_text("axes: {parallelism: [{tp: 1}, {tp: 2}], parallelism.pp: [1, 2]}\n").find("override"),
            std::string::npos);
  // A value given twice would run and rank the same candidates twice (2026-12-04: it did);
  // Two mappings that set the same keys alike are one value. 8.0 for an integer key is that
  // mistake alone, not also a duplicate of 8 (both were said until 2026-12-07; review).
  const std::string eight = error_text("axes: {parallelism.tp: [8, 4, 8.0]}\n");
  EXPECT_NE(eight.find("value '8.0': parallelism.tp: expected an integer"), std::string::npos) << eight;
  EXPECT_EQ(eight.find("is given twice"), std::string::npos) << eight;
  EXPECT_NE(error_text("axes: {parallelism.tp: [8, 4, 8]}\n").find("axes.parallelism.tp: the value 8 is given twice"),
            std::string::npos);
  EXPECT_NE(error_text("axes: {cluster: [{gpus: 16, nic_bandwidth: 400Gbps}, {nic_bandwidth: 400Gbps, gpus: 16}]}\n")
                .find("is given twice"),
            std::string::npos);
  EXPECT_NE(error_text("axes: {training.recompute: [full, none, full]}\n").find("the value full is given twice"),
            std::string::npos);
  // One quantity in other units is one value too (accepted, and run twice, before 2026-12-04).
  EXPECT_NE(error_text("axes: {cluster.nic_bandwidth: [200Gbps, 25GBps]}\n").find("the value 25GBps (200Gbps) is given twice"),
            std::string::npos);
  EXPECT_NE(error_text("axes: {training.step_stall: [200ms, 0.2s]}\n").find("is given twice"), std::string::npos);
  EXPECT_NE(error_text("axes: {cluster: [{nic_bandwidth: 400Gbps}, {nic_bandwidth: 50GBps}]}\n").find("is given twice"),
            std::string::npos);
  EXPECT_EQ(error_text("axes: {cluster.nic_bandwidth: [200Gbps, 400Gbps]}\n"), "");
  // A ratio as a number and as port counts or a ratio in lowest terms is one value (two identical
  // candidates until 2026-12-05).
  const std::string radix = "set: {network.switch_radix: 128}\n";
  EXPECT_NE(error_text(radix + "axes: {network.tor_oversubscription: [1, \"64:64\"]}\n")
                .find("axes.network.tor_oversubscription: the value 64:64 (1) is given twice"),
            std::string::npos)
      << error_text(radix + "axes: {network.tor_oversubscription: [1, \"64:64\"]}\n");
  EXPECT_NE(error_text(radix + "axes: {network.tor_oversubscription: [\"3:1\", \"96:32\"]}\n").find("is given twice"),
            std::string::npos);
  EXPECT_NE(error_text(radix + "axes: {network: [{tor_oversubscription: 3}, {tor_oversubscription: \"96:32\"}]}\n")
                .find("is given twice"),
            std::string::npos);
  EXPECT_EQ(error_text(radix + "axes: {network.tor_oversubscription: [1, \"96:32\", \"86:42\"]}\n"), "");
  EXPECT_EQ(error_text("axes: {parallelism.tp: {from: 1, to: 8, times: 2}}\n"), "");
  // An empty mapping as a value sets nothing (it crashed the reader before 2026-11-22).
  EXPECT_NE(error_text("axes: {parallelism: [{}]}\n").find("non-empty mapping"), std::string::npos);
  // A reliability study is no base: refused at load, not as an error per candidate.
  EXPECT_NE(error_text("set: {faults: {duration: 30d}}\naxes: {parallelism.tp: [1, 2]}\n")
                .find("faults: a sweep screens training, serving and network scenarios"),
            std::string::npos);
}

// A sweep over the candidate limit is refused before its values are read on the base: two ranges
// of 100,000 values (1e10 candidates) took 111 s to refuse, on a loaded 2-core machine, until
// 2026-12-05.
TEST(SweepSpec, TooManyCandidatesAreRefusedBeforeTheValuesAreRead) {
  // The candidate count is checked before any value is read on the base: a mistyped value in
  // the first axis is not reached (before 2026-12-05 every value was checked first: 111 s on
  // the two ranges alone, and here the 'abc' would have been the message).
  const std::string text = error_text(
      "axes: {parallelism.tp: [1, abc], cluster.gpus: {from: 1, to: 100000}, model.layers: {from: 1, to: 100000}}\n");
  EXPECT_NE(text.find("test.yaml: axes: the axes make 20000000000 candidates; the limit is 1e8"), std::string::npos) << text;
  EXPECT_EQ(text.find("abc"), std::string::npos) << text;
}

// A resumed log must not rank results of two inputs together: a GPU profile or trace the base or
// an axis names is part of the fingerprint (before 2026-12-04 only the YAML text was, and a
// profile edited between runs mixed 24% and 6% MFU rows in one ranking).
TEST(SweepSpec, TheFingerprintCoversTheFilesTheScenarioNames) {
  const clustersim::testing::ScratchDir dir("clustersim_sweep_fp");
  ASSERT_TRUE(dir.ok());
  const std::string profile = std::string(CLUSTERSIM_SOURCE_DIR) + "/calibration/profiles/A100-SXM4-80GB.yaml";
  std::filesystem::copy_file(profile, dir.file("p.yaml"));
  const std::string sweep = dir.file("s.yaml");
  const auto fingerprint = [&](const std::string& axes) {
    const std::string body = std::string(testing::kBase) + axes;
    return sweep_spec_from_tree(parse_yaml_text(body, sweep), sweep).fingerprint;
  };
  const std::string base_axes = "axes: {cluster.gpu: [p.yaml, A100-SXM4-80GB]}\n";
  const std::string before = fingerprint(base_axes);
  EXPECT_EQ(fingerprint(base_axes), before);  // the same files, the same sweep
  std::ofstream(dir.file("p.yaml"), std::ios::app) << "# edited\n";
  EXPECT_NE(fingerprint(base_axes), before);
}

TEST(SweepSpec, MistypedValuesAreMistakesNotInvalidCandidates) {
  // Every value of every axis is read on the base: types, ranges, enum names and keys inside
  // mapping values. A plan that does not divide stays a candidate (reported invalid).
  EXPECT_NE(error_text("axes: {parallelism.tp: [1, abc]}\n").find("value 'abc': parallelism.tp"), std::string::npos);
  EXPECT_NE(error_text("axes: {parallelism.tp: [1, -2]}\n").find("value '-2'"), std::string::npos);
  EXPECT_NE(error_text("axes: {parallelism: [{tp: 1}, {tpx: 4}]}\n").find("'parallelism.tpx' is not a scenario key"),
            std::string::npos);
  EXPECT_NE(error_text("axes: {training.recompute: [none, partial]}\n").find("value 'partial'"), std::string::npos);
  EXPECT_EQ(error_text("axes: {parallelism.tp: [1, 3]}\n"), "");  // 3 does not divide: a candidate
  EXPECT_NE(error_text("axes: {parallelism.tp: [1]}\nflow_stage: {fidelity: quantum}\n").find("flow_stage.fidelity"),
            std::string::npos);
  EXPECT_NE(error_text("axes: {parallelism.tp: [1]}\nprice_per_gpu_hour: {H100: 2}\n")
                .find("no candidate uses GPU 'H100'"),
            std::string::npos);
}

TEST(SweepSpec, ContradictoryConstraintsAreRejectedAtLoad) {
  EXPECT_NE(error_text("axes: {parallelism.tp: [1, 2]}\nconstraints: {gpus: {min: 10, max: 1}}\n")
                .find("constraints.gpus: min 10 is above max 1"),
            std::string::npos);
  EXPECT_NE(error_text("axes: {parallelism.tp: [1, 2]}\nconstraints: {mfu: {min: 0.9, max: 0.1}}\n")
                .find("constraints.mfu: min 0.9 is above max 0.1"),
            std::string::npos);
  EXPECT_NE(error_text("axes: {parallelism.tp: [1, 2]}\nconstraints: {gpus: 0}\n").find("constraints.gpus"),
            std::string::npos);
  EXPECT_EQ(error_text("axes: {parallelism.tp: [1, 2]}\nconstraints: {gpus: {min: 8, max: 8}}\n"), "");
  // A percentage where a fraction is meant would reject every candidate after the run (until
  // 2026-12-06).
  EXPECT_NE(error_text("axes: {parallelism.tp: [1, 2]}\nconstraints: {mfu: {min: 40}}\n")
                .find("constraints.mfu: mfu is a fraction, at most 1; got 40 (for 40%, write 0.4)"),
            std::string::npos);
  EXPECT_NE(error_text("axes: {parallelism.tp: [1, 2]}\nconstraints: {hfu: {max: 90}}\n").find("constraints.hfu"),
            std::string::npos);
  EXPECT_EQ(error_text("axes: {parallelism.tp: [1, 2]}\nconstraints: {mfu: {min: 0.4, max: 1}}\n"), "");
  // served_fraction and slo_attainment too (a serving base).
  for (const std::string metric : {"served_fraction", "slo_attainment"}) {
    try {
      sweep_spec_from_tree(parse_yaml_text("base: " + std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/infer-afd.yaml\n"
                                               "axes: {inference.rate_per_s: [50, 100]}\n"
                                               "constraints: {" + metric + ": {min: 95}}\n",
                                           "test.yaml"),
                           "test.yaml");
      ADD_FAILURE() << "expected BadInput";
    } catch (const BadInput& e) {
      EXPECT_NE(std::string(e.what()).find("constraints." + metric + ": " + metric + " is a fraction, at most 1"),
                std::string::npos)
          << e.what();
    }
  }
}

// A metric in seconds takes a duration with its unit, as a scenario's limits do, or a plain number
// of seconds (only the number until 2026-12-06: {max: 50} meant for milliseconds passed as 50 s).
TEST(SweepSpec, LimitsInSecondsTakeUnits) {
  const SweepSpec ms = spec_from("axes: {parallelism.tp: [1, 2]}\nconstraints: {iteration_time_s: {min: 500ms, max: 2min}}\n");
  ASSERT_EQ(ms.limits.size(), 1u);
  EXPECT_DOUBLE_EQ(*ms.limits[0].min, 0.5);
  EXPECT_DOUBLE_EQ(*ms.limits[0].max, 120.0);
  const SweepSpec plain = spec_from("axes: {parallelism.tp: [1, 2]}\nconstraints: {iteration_time_s: {max: 10}}\n");
  EXPECT_DOUBLE_EQ(*plain.limits[0].max, 10.0);
  EXPECT_NE(error_text("axes: {parallelism.tp: [1, 2]}\nconstraints: {iteration_time_s: {max: 10 parsecs}}\n")
                .find("constraints.iteration_time_s.max"),
            std::string::npos);
  // Only metrics in seconds: a rate with a unit is refused.
  EXPECT_NE(error_text("axes: {parallelism.tp: [1, 2]}\nconstraints: {tokens_per_s: {min: 5ms}}\n")
                .find("constraints.tokens_per_s.min"),
            std::string::npos);
}

// A fixed GPU count is an integer >= 1, as {min, max} are (before 2026-12-05 it was cast to int:
// 16.7 became 16, and 3e9 wrapped around to a wrong message).
TEST(SweepSpec, AFixedGpuCountIsAWholeNumber) {
  EXPECT_NE(error_text("axes: {parallelism.tp: [1, 2]}\nconstraints: {gpus: 16.7}\n")
                .find("constraints.gpus: expected an integer >= 1, got '16.7'"),
            std::string::npos);
  EXPECT_NE(error_text("axes: {parallelism.tp: [1, 2]}\nconstraints: {gpus: 15.9}\n").find("expected an integer >= 1"),
            std::string::npos);
  EXPECT_NE(error_text("axes: {parallelism.tp: [1, 2]}\nconstraints: {gpus: 3e9}\n").find("constraints.gpus: expected an integer"),
            std::string::npos);
  const SweepSpec s = spec_from("axes: {parallelism.tp: [1, 2]}\nconstraints: {gpus: 16}\n");
  EXPECT_EQ(s.gpus_min, 16);
  EXPECT_EQ(s.gpus_max, 16);
}

// A constraint on time_to_train_days without train_tokens could never be checked; it counted as
// met for every candidate before 2026-12-05. Refused at load, as the objective is.
TEST(SweepSpec, ATimeToTrainConstraintNeedsTrainTokens) {
  EXPECT_NE(error_text("axes: {parallelism.tp: [1, 2]}\nconstraints: {time_to_train_days: {max: 30}}\n")
                .find("test.yaml:7: constraints.time_to_train_days: time_to_train_days needs objective.train_tokens"),
            std::string::npos);
  EXPECT_EQ(error_text("axes: {parallelism.tp: [1, 2]}\nconstraints: {time_to_train_days: {max: 30}}\n"
                       "objective: {metric: mfu, train_tokens: 1e9}\n"),
            "");
  // The GPU-hours and the cost to train follow from train_tokens as well.
  EXPECT_NE(error_text("axes: {parallelism.tp: [1, 2]}\nconstraints: {gpu_hours_to_train: {max: 1e6}}\n")
                .find("constraints.gpu_hours_to_train: gpu_hours_to_train needs objective.train_tokens"),
            std::string::npos);
  EXPECT_NE(error_text("axes: {parallelism.tp: [1, 2]}\nobjective: cost_to_train\n")
                .find("objective.train_tokens: cost_to_train needs objective.train_tokens"),
            std::string::npos);
  // A cost to train needs the prices, as cost_per_mtoken does, and says which cost needs them.
  EXPECT_NE(error_text("axes: {parallelism.tp: [1, 2]}\nobjective: {metric: cost_to_train, train_tokens: 1e12}\n")
                .find("cost_to_train needs a price for GPU"),
            std::string::npos);
  const SweepSpec budget = spec_from("axes: {parallelism.tp: [1, 2]}\nobjective: {metric: mfu, train_tokens: 1e12}\n"
                                     "constraints: {cost_to_train: {max: 2e7}}\nprice_per_gpu_hour: {A100-SXM4-80GB: 2}\n");
  ASSERT_EQ(budget.limits.size(), 1u);
  EXPECT_DOUBLE_EQ(*budget.limits[0].max, 2e7);
}

// The GPUs a cost needs prices for are those the candidates run on, pools an axis adds or
// changes included (before 2026-12-05 only the base's pools counted: a pool an axis added ran on
// an unpriced cluster.gpu, and a pool whose gpu an axis removed asked for a price for GPU '').
// A GPU an axis or `set` names resolves when the sweep loads, as a value not among a key's names
// does: a misspelt name was an error in each candidate and the sweep exited 0 until 2026-12-05.
TEST(SweepSpec, GpuValuesResolveAtLoad) {
  const std::string names = "A100-SXM4-40GB, A100-SXM4-80GB, H100-SXM, H800-SXM, H200-SXM";
  const std::string axis = error_text("axes: {cluster.gpu: [H100-SMX, A100-SXM4-80GB]}\n");
  EXPECT_NE(axis.find("test.yaml:6: axes.cluster.gpu[0]: 'H100-SMX' is neither a built-in profile (" + names +
                      ") nor a profile file (no file H100-SMX; paths are relative to the base scenario's directory)"),
            std::string::npos)
      << axis;
  const std::string set = error_text("set: {cluster.gpu: H100-SMX}\naxes: {parallelism.tp: [1, 2]}\n");
  EXPECT_NE(set.find("test.yaml:6: set.cluster.gpu: 'H100-SMX' is neither a built-in profile"), std::string::npos) << set;
  const std::string mapping = error_text("axes: {cluster: [{gpu: A100-SXM4-80GB}, {gpu: B200, gpus: 8}]}\n");
  EXPECT_NE(mapping.find("axes.cluster[1].gpu: 'B200' is neither"), std::string::npos) << mapping;
  EXPECT_EQ(error_text("axes: {cluster.gpu: [H100-SXM, A100-SXM4-80GB]}\n"), "");
  // Files resolve as the runs resolve them: beside the base scenario, not the sweep file.
  const clustersim::testing::ScratchDir dir("clustersim_sweep_gpu");
  ASSERT_TRUE(dir.ok());
  std::filesystem::create_directory(dir.file("sc"));
  std::filesystem::copy_file(std::string(CLUSTERSIM_SOURCE_DIR) + "/calibration/profiles/A100-SXM4-80GB.yaml",
                             dir.file("sc/p.yaml"));
  std::ofstream(dir.file("sc/base.yaml")) << std::string(testing::kBase).substr(std::string("base:\n").size());
  std::ofstream(dir.file("sc/scenario.yaml")) << std::string(testing::kBase).substr(std::string("base:\n").size());
  const auto text = [&](const std::string& axes, const std::string& base = "sc/base.yaml") {
    const std::string sweep = dir.file("s.yaml");
    try {
      sweep_spec_from_tree(parse_yaml_text("base: " + base + "\n" + axes, sweep), sweep);
    } catch (const BadInput& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(text("axes: {cluster.gpu: [p.yaml, H100-SXM]}\n"), "");
  const std::string beside_sweep = text("axes: {cluster.gpu: [H100-SXM, sc/p.yaml]}\n");
  EXPECT_NE(beside_sweep.find("axes.cluster.gpu[1]: 'sc/p.yaml' is neither a built-in profile"), std::string::npos)
      << beside_sweep;
  EXPECT_NE(beside_sweep.find("(no file " + dir.file("sc/sc/p.yaml")), std::string::npos) << beside_sweep;
  // A file that is there but no profile is said to be what it is.
  const std::string scenario = text("axes: {cluster.gpu: [H100-SXM, scenario.yaml]}\n");
  EXPECT_NE(scenario.find("axes.cluster.gpu[1]: 'scenario.yaml' (" + dir.file("sc/scenario.yaml") +
                          ") is a scenario (it has 'cluster', 'model', 'parallelism' and 'training'), not a GPU profile"),
            std::string::npos)
      << scenario;
  // The base's own GPU and a serving pool's, in the base or an axis, too (later on 2026-12-05).
  std::string typo = std::string(testing::kBase).substr(std::string("base:\n").size());
  typo.replace(typo.find("A100-SXM4-80GB"), std::string("A100-SXM4-80GB").size(), "A100-SXM4-80G");
  std::ofstream(dir.file("sc/typo.yaml")) << typo;
  const std::string base_typo = text("axes: {parallelism.tp: [1, 2]}\n", "sc/typo.yaml");
  EXPECT_NE(base_typo.find("cluster.gpu: 'A100-SXM4-80G' is neither a built-in profile"), std::string::npos) << base_typo;
  const std::string pool = text("axes: {inference.pools.colocated.gpu: [H100-SXM, H200-SMX]}\n");
  EXPECT_NE(pool.find("axes.inference.pools.colocated.gpu[1]: 'H200-SMX' is neither a built-in profile"), std::string::npos)
      << pool;
}

TEST(SweepSpec, CostNeedsAPriceForEveryGpuTheAxesBringIn) {
  const std::string base = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/infer-afd-hetero.yaml";
  const auto text = [&](const std::string& axes) {
    try {
      sweep_spec_from_tree(parse_yaml_text("base: " + base + "\nset: {inference.requests: 300, cluster.gpu: H100-SXM}\n" +
                                               axes + "\nconstraints: {cost_per_mtoken: {max: 0.5}}\n"
                                               "price_per_gpu_hour: {H200-SXM: 2.6, H800-SXM: 2.0}\n",
                                           "test.yaml"),
                           "test.yaml");
    } catch (const BadInput& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(text("axes: {inference.rate_per_s: [50, 100]}"), "");
  const std::string added = text(
      "axes: {inference: [{mode: attention_ffn}, {mode: colocated, micro_batches: null, pools: {attention: null, "
      "expert: null, colocated: {gpus: 24, tp: 8, ep: 8}}}]}");
  EXPECT_NE(added.find("cost_per_mtoken needs a price for GPU 'H100-SXM' (used by axes.inference value"), std::string::npos)
      << added;
  const std::string removed = text("axes: {inference.pools.attention: [{gpu: H200-SXM}, {gpu: null}]}");
  EXPECT_NE(removed.find("needs a price for GPU 'H100-SXM'"), std::string::npos) << removed;
  EXPECT_EQ(removed.find("GPU ''"), std::string::npos) << removed;
}

TEST(CandidateSpace, LastAxisVariesFastestAndIdsAreStable) {
  const SweepSpec s = spec_from("axes:\n  parallelism.tp: [1, 2]\n  parallelism.pp: [1, 2, 4]\n");
  const CandidateSpace space(s);
  ASSERT_EQ(space.size(), 6);
  EXPECT_EQ(space.label(0), "parallelism.tp=1 parallelism.pp=1");
  EXPECT_EQ(space.label(1), "parallelism.tp=1 parallelism.pp=2");
  EXPECT_EQ(space.label(5), "parallelism.tp=2 parallelism.pp=4");
  std::set<std::string> ids;
  for (int64_t i = 0; i < space.size(); ++i) ids.insert(space.id(i));
  EXPECT_EQ(ids.size(), 6u);
  // The id depends on the values, not on the order of the axes in the file.
  const SweepSpec swapped = spec_from("axes:\n  parallelism.pp: [1, 2, 4]\n  parallelism.tp: [1, 2]\n");
  const CandidateSpace other(swapped);
  EXPECT_EQ(other.label(3), "parallelism.pp=2 parallelism.tp=2");
  EXPECT_EQ(other.id(3), space.id(4));  // tp=2 pp=2
  const YamlNode tree = space.tree(5);
  EXPECT_EQ(tree.find("parallelism")->find("pp")->scalar, "4");
}

// Every sweep file shipped in scenarios/ loads and expands.
TEST(ShippedSweeps, LoadAndExpand) {
  int seen = 0;
  const std::filesystem::path root = std::filesystem::path(CLUSTERSIM_SOURCE_DIR) / "scenarios";
  for (const auto& e : std::filesystem::directory_iterator(root)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("sweep-", 0) != 0 || e.path().extension() != ".yaml") continue;
    ++seen;
    try {
      const SweepSpec spec = load_sweep_spec(e.path().string());
      const CandidateSpace space(spec);
      EXPECT_GT(space.size(), 1) << name;
    } catch (const BadInput& err) {
      ADD_FAILURE() << name << ": " << err.what();
    }
  }
  EXPECT_GE(seen, 3);
}

}  // namespace
}  // namespace clustersim::sweep
