// SPDX-License-Identifier: Apache-2.0
// The `faults` and `stragglers` sections from inline YAML: defaults, overrides, and every kind of
// bad input reported as BadInput with its key path.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "sim/core/scenario.h"

namespace clustersim {
namespace {

// 32 GPUs = 4 hosts; tp 2, pp 2 -> dp 8; 64 / 8 = 8 micro-batches per pipeline.
const char* const kBase =
    "name: tiny\n"
    "cluster: {gpu: H100-SXM, gpus: 32, gpus_per_node: 8}\n"
    "model: {layers: 4, hidden: 1024, heads: 16, seq_len: 2048, vocab: 32000}\n"
    "parallelism: {tp: 2, pp: 2}\n"
    "training: {global_batch: 64}\n";

ScenarioConfig load(const std::string& extra) {
  return scenario_from_tree(parse_yaml_text(std::string(kBase) + extra, "f.yaml"), "f.yaml");
}

// The key paths of the errors `extra` causes (empty when it loads).
std::vector<std::string> error_paths(const std::string& extra) {
  try {
    load(extra);
  } catch (const BadInput& e) {
    std::vector<std::string> paths;
    for (const InputError& err : e.errors()) paths.push_back(err.key_path);
    return paths;
  }
  return {};
}

bool has(const std::vector<std::string>& v, const std::string& s) {
  for (const std::string& x : v) {
    if (x == s) return true;
  }
  return false;
}

TEST(FaultsConfig, DefaultsAreLlama3RatesAndMegaScaleLikeRecovery) {
  const ScenarioConfig cfg = load("faults: {}\n");
  ASSERT_TRUE(cfg.faults);
  const FaultsConfig& f = *cfg.faults;
  EXPECT_EQ(f.duration, Time::s(30 * 86400.0));
  ASSERT_EQ(f.components.size(), 19u);  // Llama 3 Table 5's 18 rows + planned
  double unexpected_per_day_at_16k = 0;
  for (const FailureComponent& c : f.components) {
    const double units = c.unit == FailureUnit::kGpu ? 16384 : c.unit == FailureUnit::kHost ? 2048
                         : c.unit == FailureUnit::kNic ? 16384 : 1;
    if (c.kind != FailureKind::kPlanned) unexpected_per_day_at_16k += c.rate_per_day * units;
  }
  EXPECT_NEAR(unexpected_per_day_at_16k, 419.0 / 54.0, 1e-9);  // Table 5 total over 54 days
  EXPECT_EQ(f.recovery.comm_init, Time::s(30));
  EXPECT_FALSE(f.checkpoint.interval);
}

TEST(FaultsConfig, ComponentsOverrideByNameOrAdd) {
  const ScenarioConfig cfg = load(
      "faults:\n"
      "  rates: none\n"
      "  components:\n"
      "    slow_host: {unit: host, rate_per_day: 0.01, kind: degrade, slowdown: 1.1, phase: forward}\n"
      "  checkpoint: {interval: 10min, async: false, size: 1TB}\n"
      "  recovery: {comm_init: 1047s, comm_init_at_gpus: 2048, comm_init_scaling: linear, spare_hosts: 2}\n");
  const FaultsConfig& f = *cfg.faults;
  ASSERT_EQ(f.components.size(), 1u);
  EXPECT_EQ(f.components[0].kind, FailureKind::kDegrade);
  EXPECT_EQ(f.components[0].phase, StragglerPhase::kForward);
  EXPECT_EQ(*f.checkpoint.interval, Time::s(600));
  EXPECT_EQ(f.recovery.comm_init_scaling, CommInitScaling::kLinear);
  EXPECT_EQ(*f.recovery.spare_hosts, 2);
  const ScenarioConfig over = load("faults: {components: {faulty_gpu: {rate_per_day: 0}}}\n");
  EXPECT_EQ(over.faults->components.size(), 19u);
  EXPECT_EQ(over.faults->components[0].rate_per_day, 0.0);
}

// New components follow the built-in table in name order, whatever their order in the file: the
// failure draw walks them in order, and a mapping's order means nothing in YAML (before
// 2026-12-04 swapping two moved the optimal checkpoint interval by 17% over 10 seeds).
TEST(FaultsConfig, NewComponentsAreInNameOrder) {
  const auto names = [](const std::string& components) {
    const ScenarioConfig cfg = load("faults: {components: {" + components + "}}\n");
    std::vector<std::string> out;
    for (const FailureComponent& c : cfg.faults->components) out.push_back(c.name);
    return out;
  };
  const std::string beta = "beta: {unit: gpu, rate_per_day: 0.001}";
  const std::string alpha = "alpha: {unit: host, rate_per_day: 0.002}";
  const std::vector<std::string> ab = names(alpha + ", " + beta);
  EXPECT_EQ(ab, names(beta + ", " + alpha));
  ASSERT_EQ(ab.size(), 21u);
  EXPECT_EQ(ab[0], "faulty_gpu");  // the built-in table keeps its order
  EXPECT_EQ(ab[19], "alpha");
  EXPECT_EQ(ab[20], "beta");
}

// "faulty_gpu:" given empty, or removed by --set when the file does not give it, would leave the
// built-in rates in place while reading as "off" (before 2026-12-05 both were accepted and changed
// nothing); rate_per_day: 0 is the way to turn one off.
TEST(FaultsConfig, AnEmptyOrRemovedBuiltInComponentIsRefused) {
  EXPECT_TRUE(has(error_paths("faults: {components: {faulty_gpu: null}}\n"), "faults.components.faulty_gpu"));
  EXPECT_TRUE(has(error_paths("faults:\n  components:\n    faulty_gpu:\n"), "faults.components.faulty_gpu"));
  const std::string file = ::testing::TempDir() + "/faults_removal.yaml";
  std::ofstream(file) << kBase << "faults: {components: {gpu_sram: {rate_per_day: 0.001}}}\n";
  try {
    load_scenario(file, {"faults.components.faulty_gpu=null"});
    ADD_FAILURE() << "expected BadInput";
  } catch (const BadInput& e) {
    EXPECT_EQ(e.errors().at(0).key_path, "faults.components.faulty_gpu");
    EXPECT_NE(e.errors().at(0).message.find("rate_per_day=0 to turn it off"), std::string::npos) << e.what();
  }
  // Removing a component the file gives restores its built-in rates, as --set KEY=null does.
  const ScenarioConfig cfg = load_scenario(file, {"faults.components.gpu_sram=null"});
  const ScenarioConfig builtin = load("faults: {}\n");
  ASSERT_EQ(cfg.faults->components.size(), builtin.faults->components.size());
  for (size_t i = 0; i < cfg.faults->components.size(); ++i) {
    EXPECT_EQ(cfg.faults->components[i].rate_per_day, builtin.faults->components[i].rate_per_day);
  }
}

// A component named '' ran, a "" key in the JSON's per-component times (until 2026-12-05).
TEST(FaultsConfig, AComponentNeedsAName) {
  const std::vector<std::string> paths = error_paths("faults: {components: {'': {rate_per_day: 0.001}}}\n");
  ASSERT_EQ(paths.size(), 1u);
  EXPECT_EQ(paths[0], "faults.components.");
  try {
    load("faults: {components: {'': {rate_per_day: 0.001}}}\n");
  } catch (const BadInput& e) {
    EXPECT_NE(e.errors().at(0).message.find("a component's name is empty"), std::string::npos) << e.what();
    EXPECT_EQ(e.errors().at(0).line, 6);
  }
}

TEST(FaultsConfig, BadInputNamesTheKey) {
  EXPECT_TRUE(has(error_paths("faults: {recovery: {detectoin: 1s}}\n"), "faults.recovery.detectoin"));
  EXPECT_TRUE(has(error_paths("faults: {duration: 30 days}\n"), "faults.duration"));
  EXPECT_TRUE(has(error_paths("faults: {duration: 200d}\n"), "faults.duration"));
  EXPECT_TRUE(has(error_paths("faults: {seeds: 0}\n"), "faults.seeds"));
  EXPECT_TRUE(has(error_paths("faults: {rates: meta}\n"), "faults.rates"));
  EXPECT_TRUE(has(error_paths("faults: {checkpoint: {interval: 0s}}\n"), "faults.checkpoint.interval"));
  EXPECT_TRUE(has(error_paths("faults: {checkpoint: {write_bandwidth: fast}}\n"), "faults.checkpoint.write_bandwidth"));
  EXPECT_TRUE(has(error_paths("faults: {components: {new_thing: {unit: gpu}}}\n"), "faults.components.new_thing"));
  EXPECT_TRUE(has(error_paths("faults: {components: {faulty_gpu: {kind: explode}}}\n"), "faults.components.faulty_gpu.kind"));
  EXPECT_TRUE(has(error_paths("faults: {components: {x: {rate_per_day: 1, kind: degrade}}}\n"), "faults.components.x.slowdown"));
  EXPECT_TRUE(has(error_paths("faults: {components: [a, b]}\n"), "faults.components"));
  EXPECT_TRUE(has(error_paths("faults: {recovery: {spare_hosts: -1}}\n"), "faults.recovery.spare_hosts"));
  // A cluster's spare pool may outnumber a small job's hosts (refused as a typo until 2026-12-06).
  EXPECT_TRUE(error_paths("faults: {recovery: {spare_hosts: 9}}\n").empty());
  EXPECT_TRUE(has(error_paths("faults: {recovery: {comm_init_scaling: cubic}}\n"), "faults.recovery.comm_init_scaling"));
  EXPECT_TRUE(has(error_paths("faults: {sweep_points: 1}\n"), "faults.sweep_points"));
  EXPECT_TRUE(has(error_paths("faults: {recovery: {straggler_threshold: 0.9}}\n"), "faults.recovery.straggler_threshold"));
  EXPECT_TRUE(has(error_paths("faults: {recovery: {straggler_threshold: often}}\n"), "faults.recovery.straggler_threshold"));
}

// Every error `extra` causes as "path: message" lines (empty when it loads).
std::string error_text(const std::string& extra) {
  try {
    load(extra);
  } catch (const BadInput& e) {
    std::string all;
    for (const InputError& err : e.errors()) all += err.key_path + ": " + err.message + "\n";
    return all;
  }
  return "";
}

// A new component named a built-in one's but for case or an edit per 4 characters is refused as a
// misspelling (gpu_hmb3 with rate_per_day: 0 ran beside an untouched gpu_hbm3 until 2026-12-06),
// unless it says what it is counted per; a short name a letter from a built-in one (psu, cpu) is
// a component of its own.
TEST(FaultsConfig, AMisspeltBuiltInComponentIsRefused) {
  const std::string typo = error_text("faults: {components: {gpu_hmb3: {rate_per_day: 0}}}\n");
  EXPECT_NE(typo.find("faults.components.gpu_hmb3: is not a built-in component; did you mean 'gpu_hbm3'?"), std::string::npos)
      << typo;
  EXPECT_NE(error_text("faults: {components: {NIC: {rate_per_day: 0}}}\n").find("did you mean 'nic'?"), std::string::npos);
  EXPECT_NE(error_text("faults: {components: {sofware_bug: {rate_per_day: 0}}}\n").find("did you mean 'software_bug'?"),
            std::string::npos);
  const ScenarioConfig meant = load("faults: {components: {gpu_hmb3: {unit: gpu, rate_per_day: 0.001}}}\n");
  EXPECT_EQ(meant.faults->components.back().name, "gpu_hmb3");
  EXPECT_TRUE(error_text("faults: {components: {psu: {unit: host, rate_per_day: 0.001}}}\n").empty());
  EXPECT_TRUE(error_text("faults: {components: {psu: {rate_per_day: 0.001}}}\n").empty());
  // A name that holds a built-in one whole is a component of its own (an unknown scenario key's
  // hint, key_holding, is not a misspelling here; review 2026-12-07).
  EXPECT_TRUE(error_text("faults: {components: {silent_data_corruption_v2: {rate_per_day: 1e-6}}}\n").empty());
}

// The reliability simulation decides by kind whether a failure takes a host (planned: never;
// degrade: always) and only a degrade component has a phase; given anyway, they are errors.
TEST(FaultsConfig, KeysTheKindDecidesAreErrors) {
  const std::string planned = error_text("faults: {components: {planned: {replace_host: true}}}\n");
  EXPECT_NE(planned.find("faults.components.planned.replace_host: a planned stop never takes a host"),
            std::string::npos) << planned;
  const std::string degrade = error_text(
      "faults: {rates: none, components: {slow: {unit: host, rate_per_day: 0.01, kind: degrade, slowdown: 1.1, "
      "replace_host: false}}}\n");
  EXPECT_NE(degrade.find("faults.components.slow.replace_host: a degrade component always swaps the slow host"),
            std::string::npos) << degrade;
  for (const char* name : {"gpu_hbm3", "nccl_watchdog_timeout", "planned"}) {  // crash, hang, planned
    const std::string phase = error_text(std::string("faults: {components: {") + name + ": {phase: forward}}}\n");
    EXPECT_NE(phase.find(std::string("faults.components.") + name + ".phase: only a degrade component"),
              std::string::npos) << phase;
  }
  const std::string running = error_text("faults: {components: {planned: {only_while_running: false}}}\n");
  EXPECT_NE(running.find("faults.components.planned.only_while_running: a planned stop happens only while the job runs"),
            std::string::npos) << running;
  // Where the kind reads them, and in the default table (not given), they load.
  EXPECT_EQ(error_text("faults: {}\n"), "");
  EXPECT_EQ(error_text("faults: {components: {gpu_hbm3: {replace_host: false}, nccl_watchdog_timeout: "
                       "{replace_host: true}}}\n"), "");
  EXPECT_EQ(error_text("faults: {rates: none, components: {slow: {unit: host, rate_per_day: 0.01, kind: degrade, "
                       "slowdown: 1.1, phase: backward}}}\n"), "");
}

TEST(FaultsConfig, ZeroCostCheckpointNeedsAnInterval) {
  // Young/Daly = sqrt(2 x 0 x MTBF) = 0: no optimum to centre on, so the interval must be given.
  EXPECT_TRUE(has(error_paths("faults: {checkpoint: {blocking: 0s}}\n"), "faults.checkpoint.blocking"));
  EXPECT_TRUE(error_paths("faults: {checkpoint: {blocking: 0s, interval: 1h}}\n").empty());
  // 1 byte over 32 GPUs: a 0-byte shard, snapshotted in no time.
  EXPECT_TRUE(has(error_paths("faults: {checkpoint: {size: 1B}}\n"), "faults.checkpoint.size"));
  EXPECT_TRUE(error_paths("faults: {checkpoint: {size: 1B, interval: 1h}}\n").empty());
}

TEST(FaultsConfig, CheckpointAndRecoveryTimesMustFitTheWindow) {
  // 10 TB at 1 Mbit/s is 8e7 s, past Time's ~106 days (it overflowed, and ETTR came out negative).
  EXPECT_TRUE(has(error_paths("faults: {checkpoint: {size: 10TB, write_bandwidth: 1Mbps}}\n"),
                  "faults.checkpoint.write_bandwidth"));
  EXPECT_TRUE(has(error_paths("faults: {checkpoint: {size: 10TB, read_bandwidth: 1Mbps}}\n"),
                  "faults.checkpoint.read_bandwidth"));
  // 10 TB over 32 GPUs at 1 Mbit/s each: 2.5e6 s, within Time but past a 10-day window.
  EXPECT_TRUE(has(error_paths("faults: {duration: 10d, checkpoint: {size: 10TB, snapshot_bandwidth: 1Mbps}}\n"),
                  "faults.checkpoint.snapshot_bandwidth"));
  EXPECT_TRUE(has(error_paths("faults: {duration: 1d, checkpoint: {blocking: 2d, interval: 1h}}\n"),
                  "faults.checkpoint.blocking"));
  EXPECT_TRUE(has(error_paths("faults: {duration: 1d, recovery: {checkpoint_load: 2d}}\n"),
                  "faults.recovery.checkpoint_load"));
  EXPECT_TRUE(has(error_paths("faults: {duration: 1d, recovery: {detection: 2d}}\n"), "faults.recovery.detection"));
  // No step or checkpoint interval ends in a shorter window (a 100-day step over 30 days gave
  // ETTR 90.8% before 2026-12-04).
  EXPECT_TRUE(has(error_paths("faults: {duration: 30d, iteration_time: 100d}\n"), "faults.iteration_time"));
  EXPECT_TRUE(has(error_paths("faults: {duration: 30d, checkpoint: {interval: 31d}}\n"), "faults.checkpoint.interval"));
  // A vanishing scale is no rate but an overflow (MTBF inf h before 2026-12-04); 0 says it.
  EXPECT_TRUE(has(error_paths("faults: {rate_scale: 1e-308}\n"), "faults.rate_scale"));
  EXPECT_FALSE(has(error_paths("faults: {rate_scale: 1e-12}\n"), "faults.rate_scale"));
  // Linear scaling: 30 s x 32 / 1 GPU = 960 s, more than a 10-minute window.
  EXPECT_TRUE(has(error_paths("faults: {duration: 10min, recovery: {comm_init_at_gpus: 1, comm_init_scaling: linear}}\n"),
                  "faults.recovery.comm_init"));
  // A host may stay in repair past the window's end.
  EXPECT_TRUE(error_paths("faults: {duration: 1d, recovery: {repair_time: 3d}}\n").empty());
  EXPECT_TRUE(error_paths("faults: {checkpoint: {size: 1TB}}\n").empty());
}

// The errors `extra` causes, as (key path, line) pairs.
std::vector<std::pair<std::string, int>> error_lines(const std::string& extra) {
  std::vector<std::pair<std::string, int>> out;
  try {
    load(extra);
  } catch (const BadInput& e) {
    for (const InputError& err : e.errors()) out.emplace_back(err.key_path, err.line);
  }
  return out;
}

// A `faults` section, or a subsection, written with no value ran the whole default study until
// 2026-12-05; a key written with no value is an error (scenarios/README.md). `faults: {}` asks for
// the defaults, and --set faults=null removes the section.
TEST(FaultsConfig, AnEmptySectionIsRefusedWithItsLine) {
  for (const char* empty : {"faults:\n", "faults: null\n", "faults: ~\n"}) {
    const auto errors = error_lines(empty);
    ASSERT_EQ(errors.size(), 1u) << empty;
    EXPECT_EQ(errors[0].first, "faults") << empty;
    EXPECT_EQ(errors[0].second, 6) << empty;  // kBase is five lines
  }
  const auto subsections = error_lines("faults:\n  checkpoint:\n  recovery:\n  components: ~\n");
  ASSERT_EQ(subsections.size(), 3u);
  EXPECT_EQ(subsections[0], (std::pair<std::string, int>{"faults.components", 9}));
  EXPECT_EQ(subsections[1], (std::pair<std::string, int>{"faults.checkpoint", 7}));
  EXPECT_EQ(subsections[2], (std::pair<std::string, int>{"faults.recovery", 8}));
  EXPECT_NE(error_text("faults:\n").find("has no value"), std::string::npos);
  EXPECT_TRUE(load("faults: {}\n").faults);
  EXPECT_TRUE(load("faults: {checkpoint: {}}\n").faults);
  const std::string file = ::testing::TempDir() + "/faults_null_removal.yaml";
  std::ofstream(file) << kBase << "faults: {seeds: 2}\n";
  EXPECT_FALSE(load_scenario(file, {"faults=null"}).faults);
}

// recovery.straggler_detection times only found slow hosts: with no degrade component a window
// shorter than its default (1 h) was refused, naming a key the user never wrote (until
// 2026-12-05). Used, a default that does not fit says it is the default.
TEST(FaultsConfig, DetectionTimesAreCheckedOnlyWhenUsed) {
  EXPECT_TRUE(error_paths("faults: {duration: 10min}\n").empty());
  const char* const degrade = "components: {slow: {unit: host, rate_per_day: 0.01, kind: degrade, slowdown: 1.1}}";
  const std::string used = error_text(std::string("faults: {duration: 10min, ") + degrade + "}\n");
  EXPECT_NE(used.find("faults.recovery.straggler_detection: its default, 3600 s, is longer than faults.duration (600 s)"),
            std::string::npos) << used;
  const std::string given =
      error_text(std::string("faults: {duration: 10min, recovery: {straggler_detection: 2h}, ") + degrade + "}\n");
  EXPECT_NE(given.find("faults.recovery.straggler_detection: longer than faults.duration (600 s); got 7200 s"),
            std::string::npos) << given;
  // Never found (slower by less than straggler_threshold), or never arriving: unused.
  EXPECT_TRUE(error_paths("faults: {duration: 10min, components: {slow: {unit: host, rate_per_day: 0.01, kind: "
                          "degrade, slowdown: 1.01}}}\n").empty());
  EXPECT_TRUE(error_paths("faults: {duration: 10min, components: {slow: {unit: host, rate_per_day: 0, kind: "
                          "degrade, slowdown: 1.1}}}\n").empty());
  // hang_detection (default 10 min) times hangs only: the Llama 3 rates have one.
  EXPECT_TRUE(has(error_paths("faults: {duration: 5min}\n"), "faults.recovery.hang_detection"));
  EXPECT_TRUE(error_paths("faults: {duration: 5min, components: {nccl_watchdog_timeout: {rate_per_day: 0}}}\n").empty());
}

// One limit in every message about faults.duration (105d said "at most 104d", the parser's, and
// 100d "at most 90d" until 2026-12-05).
TEST(FaultsConfig, DurationLimitIsTheSameInEveryMessage) {
  for (const char* d : {"100d", "105d", "1000d", "0s", "30 days"}) {
    const std::string text = error_text(std::string("faults: {duration: ") + d + "}\n");
    EXPECT_NE(text.find("faults.duration:"), std::string::npos) << d << ": " << text;
    EXPECT_NE(text.find("above zero and at most 90d"), std::string::npos) << d << ": " << text;
    EXPECT_EQ(text.find("104d"), std::string::npos) << d << ": " << text;
  }
  EXPECT_TRUE(error_paths("faults: {duration: 90d}\n").empty());
}

// A degrade component without slowdown is refused at the component's line, with the section's
// other errors (it came alone, without a line, after them until 2026-12-05).
TEST(FaultsConfig, DegradeWithoutSlowdownHasALineAndComesWithOtherErrors) {
  const auto errors = error_lines(
      "faults:\n"
      "  components:\n"
      "    gpu_hbm3:\n"
      "    mything:\n"
      "      unit: host\n"
      "      rate_per_day: 0.01\n"
      "      kind: degrade\n");
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0].first, "faults.components.gpu_hbm3");
  EXPECT_EQ(errors[0].second, 8);
  EXPECT_EQ(errors[1].first, "faults.components.mything.slowdown");
  EXPECT_GE(errors[1].second, 9);  // the component's mapping
  EXPECT_NE(error_text("faults: {components: {x: {rate_per_day: 1, kind: degrade, slowdown: 1}}}\n")
                .find("faults.components.x.slowdown: a degrade component needs slowdown > 1"),
            std::string::npos);
  // Out of range: one error, the reader's.
  EXPECT_EQ(error_lines("faults: {components: {x: {rate_per_day: 1, kind: degrade, slowdown: 0.5}}}\n").size(), 1u);
}

TEST(FaultsConfig, IterationTimeFidelityFollowsTheNetworkUnlessGiven) {
  EXPECT_EQ(iteration_time_fidelity(load("faults: {}\n")), IterationTimeFidelity::kAnalytical);
  EXPECT_EQ(iteration_time_fidelity(load("network: {fidelity: flow}\nfaults: {}\n")), IterationTimeFidelity::kFlow);
  EXPECT_EQ(iteration_time_fidelity(load("faults: {iteration_time_fidelity: flow}\n")), IterationTimeFidelity::kFlow);
  EXPECT_EQ(iteration_time_fidelity(load("network: {fidelity: flow}\nfaults: {iteration_time_fidelity: analytical}\n")),
            IterationTimeFidelity::kAnalytical);
}

TEST(FaultsConfig, BadIterationTimeFidelityNamesTheKey) {
  EXPECT_TRUE(has(error_paths("faults: {iteration_time_fidelity: packet}\n"), "faults.iteration_time_fidelity"));
  EXPECT_TRUE(has(error_paths("faults: {iteration_time_fidelity: [flow]}\n"), "faults.iteration_time_fidelity"));
  EXPECT_TRUE(has(error_paths("faults: {iteration_time_fidelity: Flow}\n"), "faults.iteration_time_fidelity"));
  EXPECT_TRUE(has(error_paths("network: {fidelity: packet}\nfaults: {}\n"), "network.fidelity"));
}

TEST(StragglersConfig, ReadsEverySource) {
  const ScenarioConfig cfg = load(
      "stragglers:\n"
      "  seed: 3\n"
      "  hosts: {fraction: 0.25, slowdown: 1.1, phase: forward}\n"
      "  gpus: {list: [5, 7], slowdown: 1.3}\n"
      "  nics: {hosts: [1], nic: 2, bandwidth_factor: 0.5, extra_latency: 10us}\n"
      "  stage_layers: [3, 1]\n"
      "  sequence_imbalance: {max_over_mean: 1.3, replicas: 2}\n"
      "  variation: {spread: 0.08, phase: backward}\n");
  const StragglersConfig& s = cfg.stragglers;
  EXPECT_EQ(s.seed, 3u);
  ASSERT_TRUE(s.hosts && s.gpus && s.nics);
  EXPECT_EQ(s.hosts->phase, StragglerPhase::kForward);
  EXPECT_EQ(s.gpus->list, (std::vector<int>{5, 7}));
  EXPECT_EQ(s.nics->extra_latency, Time::us(10));
  EXPECT_EQ(s.stage_layers, (std::vector<int>{3, 1}));
  EXPECT_DOUBLE_EQ(s.sequence_imbalance.max_over_mean, 1.3);
  ASSERT_TRUE(s.variation);
  EXPECT_DOUBLE_EQ(s.variation->spread, 0.08);
  EXPECT_EQ(s.variation->phase, StragglerPhase::kBackward);
  EXPECT_EQ(load("stragglers: {variation: {spread: 0.08}}\n").stragglers.variation->phase, StragglerPhase::kAll);
  EXPECT_TRUE(load("").stragglers.empty());
  // Drawn hosts make the placement a random variable; listed ones do not.
  EXPECT_TRUE(s.drawn());
  EXPECT_FALSE(load("stragglers: {gpus: {list: [5], slowdown: 1.3}}\n").stragglers.drawn());
  EXPECT_TRUE(load("stragglers: {gpus: {count: 2, slowdown: 1.3}}\n").stragglers.drawn());
  EXPECT_FALSE(load("stragglers: {stage_layers: [3, 1]}\n").stragglers.drawn());
  // Every GPU's speed is drawn.
  EXPECT_TRUE(load("stragglers: {variation: {spread: 0.08}}\n").stragglers.drawn());
}

TEST(StragglersConfig, BadInputNamesTheKey) {
  EXPECT_TRUE(has(error_paths("stragglers: {hosts: {list: [1], fraction: 0.1, slowdown: 1.1}}\n"), "stragglers.hosts"));
  EXPECT_TRUE(has(error_paths("stragglers: {hosts: {list: [9], slowdown: 1.1}}\n"), "stragglers.hosts.list"));
  EXPECT_TRUE(has(error_paths("stragglers: {hosts: {list: [a], slowdown: 1.1}}\n"), "stragglers.hosts.list"));
  EXPECT_TRUE(has(error_paths("stragglers: {hosts: {count: 1}}\n"), "stragglers.hosts.slowdown"));
  EXPECT_TRUE(has(error_paths("stragglers: {hosts: {count: 1, slowdown: 0.5}}\n"), "stragglers.hosts.slowdown"));
  EXPECT_TRUE(has(error_paths("stragglers: {gpus: {count: 99, slowdown: 1.1}}\n"), "stragglers.gpus.count"));
  EXPECT_TRUE(has(error_paths("stragglers: {hosts: {count: 1, slowdown: 1.1, phase: sideways}}\n"), "stragglers.hosts.phase"));
  EXPECT_TRUE(has(error_paths("stragglers: {nics: {nic: 0, bandwidth_factor: 0.5}}\n"), "stragglers.nics.hosts"));
  EXPECT_TRUE(has(error_paths("stragglers: {nics: {hosts: [0], nic: 8, bandwidth_factor: 0.5}}\n"), "stragglers.nics.nic"));
  EXPECT_TRUE(has(error_paths("stragglers: {nics: {hosts: [0]}}\n"), "stragglers.nics"));
  EXPECT_TRUE(has(error_paths("stragglers: {stage_layers: [1, 1]}\n"), "stragglers.stage_layers"));
  EXPECT_TRUE(has(error_paths("stragglers: {stage_layers: [4]}\n"), "stragglers.stage_layers"));
  EXPECT_TRUE(has(error_paths("stragglers: {stage_layers: [0, 4]}\n"), "stragglers.stage_layers"));
  // An empty list is not the key left out.
  EXPECT_TRUE(has(error_paths("stragglers: {stage_layers: []}\n"), "stragglers.stage_layers"));
  EXPECT_TRUE(has(error_paths("stragglers: {hosts: {list: [], slowdown: 1.1}}\n"), "stragglers.hosts.list"));
  EXPECT_TRUE(has(error_paths("stragglers: {nics: {hosts: [], bandwidth_factor: 0.5}}\n"), "stragglers.nics.hosts"));
  EXPECT_TRUE(has(error_paths("stragglers: {sequence_imbalance: {max_over_mean: 0.5}}\n"),
                  "stragglers.sequence_imbalance.max_over_mean"));
  EXPECT_TRUE(has(error_paths("stragglers: {sequence_imbalance: {max_over_mean: 2, replicas: 8}}\n"),
                  "stragglers.sequence_imbalance.replicas"));
  EXPECT_TRUE(has(error_paths("stragglers: {slow: 1}\n"), "stragglers.slow"));
  // GPU speed variation: a spread in (0, 0.5], a known phase, no other keys.
  for (const char* v : {"{spread: 0}", "{spread: 0.6}", "{spread: -0.1}", "{spread: lots}", "{phase: all}"}) {
    EXPECT_TRUE(has(error_paths("stragglers: {variation: " + std::string(v) + "}\n"), "stragglers.variation.spread")) << v;
  }
  // One range in every message: the reader said ">= 0" and the check "above zero" until 2026-12-05.
  for (const char* v : {"0", "-0.1", "0.6"}) {
    const std::string text = error_text(std::string("stragglers: {variation: {spread: ") + v + "}}\n");
    EXPECT_NE(text.find("stragglers.variation.spread: expected a number above 0 and at most 0.5"), std::string::npos)
        << v << ": " << text;
  }
  EXPECT_TRUE(has(error_paths("stragglers: {variation: {spread: 0.08, phase: up}}\n"), "stragglers.variation.phase"));
  EXPECT_TRUE(has(error_paths("stragglers: {variation: {spread: 0.08, sigma: 0.01}}\n"), "stragglers.variation.sigma"));
  // Listed twice, or a count of heavy replicas that cannot act.
  EXPECT_TRUE(has(error_paths("stragglers: {hosts: {list: [1, 1], slowdown: 1.1}}\n"), "stragglers.hosts.list"));
  EXPECT_TRUE(has(error_paths("stragglers: {nics: {hosts: [0, 0], bandwidth_factor: 0.5}}\n"), "stragglers.nics.hosts"));
  EXPECT_TRUE(has(error_paths("stragglers: {sequence_imbalance: {replicas: 2}}\n"), "stragglers.sequence_imbalance.replicas"));
  EXPECT_TRUE(has(error_paths("stragglers: {sequence_imbalance: {max_over_mean: 1.1, replicas: 1000}}\n"),
                  "stragglers.sequence_imbalance.replicas"));
}

// Which of list, fraction and count: said of the mapping, with what it gives (the message named
// `.list` whether or not a list was given until 2026-12-05).
TEST(StragglersConfig, ListFractionOrCountIsSaidOfTheMapping) {
  const std::string none = error_text("stragglers: {gpus: {slowdown: 1.5}}\n");
  EXPECT_NE(none.find("stragglers.gpus: give exactly one of list (the slow GPUs' indices), fraction (of all GPUs) or "
                      "count (drawn at random); none of them is given"),
            std::string::npos)
      << none;
  EXPECT_EQ(none.find("stragglers.gpus.list"), std::string::npos) << none;
  const std::string two = error_text("stragglers: {hosts: {fraction: 0.1, count: 1, slowdown: 1.1}}\n");
  EXPECT_NE(two.find("stragglers.hosts: give exactly one of list (the slow hosts' indices), fraction (of all hosts) or "
                     "count (drawn at random); it gives fraction and count"),
            std::string::npos)
      << two;
  const std::string three = error_text("stragglers: {hosts: {list: [1], fraction: 0.1, count: 1, slowdown: 1.1}}\n");
  EXPECT_NE(three.find("; it gives list, fraction and count"), std::string::npos) << three;
}

// stage_layers holds layer counts, not indices (its messages said "a list of indices" until
// 2026-12-05); the index lists keep theirs.
TEST(StragglersConfig, ListMessagesSayWhatTheListHolds) {
  for (const char* v : {"12", "{0: 12}"}) {
    const std::string text = error_text(std::string("stragglers: {stage_layers: ") + v + "}\n");
    EXPECT_NE(text.find("stragglers.stage_layers: expected a list of layer counts, one per pipeline stage (pp entries) "
                        "adding up to model.layers, such as [10, 14]"),
              std::string::npos)
        << v << ": " << text;
    EXPECT_EQ(text.find("indices"), std::string::npos) << v << ": " << text;
  }
  const std::string item = error_text("stragglers: {stage_layers: [2, x]}\n");
  EXPECT_NE(item.find("stragglers.stage_layers: item 1: expected a stage's layer count (a whole number), got 'x'"),
            std::string::npos)
      << item;
  const std::string list = error_text("stragglers: {hosts: {list: 3, slowdown: 1.1}}\n");
  EXPECT_NE(list.find("stragglers.hosts.list: expected a list of indices such as [3, 17]"), std::string::npos) << list;
  const std::string nics = error_text("stragglers: {nics: {hosts: [a], bandwidth_factor: 0.5}}\n");
  EXPECT_NE(nics.find("stragglers.nics.hosts: item 0: expected a non-negative integer, got 'a'"), std::string::npos) << nics;
}

}  // namespace
}  // namespace clustersim
