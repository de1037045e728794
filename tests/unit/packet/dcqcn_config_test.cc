// SPDX-License-Identifier: Apache-2.0
// network.dcqcn: presets, overrides with units, and every bad input named by its key path.
#include "sim/core/dcqcn_config.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/core/error.h"
#include "sim/core/scenario.h"
#include "sim/core/yaml_tree.h"

namespace clustersim {
namespace {

const std::string kTraffic =
    "cluster: {gpus: 64, gpus_per_node: 8}\n"
    "traffic: {pattern: incast, bytes_per_pair: 1MiB, incast_senders: 4}\n"
    "network:\n"
    "  fidelity: packet\n";

ScenarioConfig load(const std::string& dcqcn) {
  const YamlNode root = parse_yaml_text(kTraffic + dcqcn, "s.yaml");
  return scenario_from_tree(root, "s.yaml");
}

std::vector<InputError> errors_of(const std::string& dcqcn) {
  try {
    load(dcqcn);
  } catch (const BadInput& e) {
    return e.errors();
  }
  ADD_FAILURE() << "expected BadInput for " << dcqcn;
  return {};
}

bool has_error(const std::vector<InputError>& errors, const std::string& key) {
  for (const InputError& e : errors) {
    if (e.key_path == key) return true;
  }
  return false;
}

TEST(DcqcnConfig, DefaultsAreThePaperPreset) {
  const ScenarioConfig cfg = load("");
  const DcqcnConfig& d = cfg.network.dcqcn;
  EXPECT_EQ(d.preset, DcqcnPreset::kDcqcnPaper);
  EXPECT_EQ(d.kmin, Bytes{5000});
  EXPECT_EQ(d.kmax, Bytes{200000});
  EXPECT_DOUBLE_EQ(d.pmax, 0.01);
  EXPECT_DOUBLE_EQ(d.g, 1.0 / 256);
  EXPECT_EQ(d.cnp_interval, Time::us(50));
  EXPECT_EQ(d.fast_recovery_steps, 5);
  EXPECT_TRUE(d.pfc);
}

TEST(DcqcnConfig, HpccPresetThenOverrides) {
  const ScenarioConfig cfg = load(
      "  dcqcn: {preset: hpcc-simai, kmin: 100KB, rate_ai: 1Gbps, pfc: false, rate_increase_timer: 300us,\n"
      "          headroom: 64KiB, mark_on: enqueue}\n");
  const DcqcnConfig& d = cfg.network.dcqcn;
  EXPECT_EQ(d.preset, DcqcnPreset::kHpccSimai);
  EXPECT_EQ(d.kmin, Bytes{100'000});
  EXPECT_EQ(d.kmax, Bytes{3'200'000});  // from the preset
  EXPECT_DOUBLE_EQ(d.pmax, 0.2);
  EXPECT_DOUBLE_EQ(d.rate_ai.as_gbps(), 1.0);
  EXPECT_FALSE(d.pfc);
  EXPECT_EQ(d.rate_increase_timer, Time::us(300));
  EXPECT_EQ(d.rate_decrease_interval, Time::us(4));
  ASSERT_TRUE(d.headroom.has_value());
  EXPECT_EQ(*d.headroom, Bytes::kib(64));
  EXPECT_EQ(d.mark_on, EcnMarkPoint::kEnqueue);
}

TEST(DcqcnConfig, BadInputsNameTheirKey) {
  EXPECT_TRUE(has_error(errors_of("  dcqcn: {preset: dctcp}\n"), "network.dcqcn.preset"));
  EXPECT_TRUE(has_error(errors_of("  dcqcn: {kmin: 5}\n"), "network.dcqcn.kmin"));         // no unit
  EXPECT_TRUE(has_error(errors_of("  dcqcn: {kmin: 300KB}\n"), "network.dcqcn.kmax"));     // kmax < kmin
  EXPECT_TRUE(has_error(errors_of("  dcqcn: {pmax: 1.5}\n"), "network.dcqcn.pmax"));
  EXPECT_TRUE(has_error(errors_of("  dcqcn: {pmax: 0}\n"), "network.dcqcn.pmax"));
  EXPECT_TRUE(has_error(errors_of("  dcqcn: {g: -1}\n"), "network.dcqcn.g"));
  EXPECT_TRUE(has_error(errors_of("  dcqcn: {cnp_interval: 0us}\n"), "network.dcqcn.cnp_interval"));
  EXPECT_TRUE(has_error(errors_of("  dcqcn: {rate_increase_timer: 55}\n"), "network.dcqcn.rate_increase_timer"));
  EXPECT_TRUE(has_error(errors_of("  dcqcn: {rate_ai: 0Gbps}\n"), "network.dcqcn.rate_ai"));
  EXPECT_TRUE(has_error(errors_of("  dcqcn: {min_rate: 800Gbps}\n"), "network.dcqcn.min_rate"));
  EXPECT_TRUE(has_error(errors_of("  dcqcn: {mtu: 32B}\n"), "network.dcqcn.mtu"));
  EXPECT_TRUE(has_error(errors_of("  dcqcn: {buffer: 1KB}\n"), "network.dcqcn.buffer"));
  EXPECT_TRUE(has_error(errors_of("  dcqcn: {pfc: maybe}\n"), "network.dcqcn.pfc"));
  EXPECT_TRUE(has_error(errors_of("  dcqcn: {clamp_target_rate: sometimes}\n"), "network.dcqcn.clamp_target_rate"));
  EXPECT_TRUE(has_error(errors_of("  dcqcn: {mark_on: both}\n"), "network.dcqcn.mark_on"));
  EXPECT_TRUE(has_error(errors_of("  dcqcn: {fluid_step: 1ms}\n"), "network.dcqcn.fluid_step"));
  EXPECT_TRUE(has_error(errors_of("  dcqcn: {fast_recovery_steps: -1}\n"), "network.dcqcn.fast_recovery_steps"));
  EXPECT_TRUE(has_error(errors_of("  dcqcn: {traced_flows: x}\n"), "network.dcqcn.traced_flows"));
  EXPECT_TRUE(has_error(errors_of("  dcqcn: {kmn: 5KB}\n"), "network.dcqcn.kmn"));        // unknown key
  EXPECT_TRUE(has_error(errors_of("  dcqcn: 5\n"), "network.dcqcn"));                     // not a mapping
  // Values that hung or misled the fluid level (a third fuzzing pass).
  EXPECT_TRUE(has_error(errors_of("  dcqcn: {dynamic_threshold: 0.0001}\n"), "network.dcqcn.dynamic_threshold"));
  EXPECT_TRUE(has_error(errors_of("  dcqcn: {resume_offset: 100MB}\n"), "network.dcqcn.resume_offset"));
  EXPECT_TRUE(has_error(errors_of("  dcqcn: {fluid_step: 100us}\n"), "network.dcqcn.fluid_step"));
  std::string fluid = kTraffic;
  fluid.replace(fluid.find("packet"), 6, "flow+dcqcn");
  try {
    (void)scenario_from_tree(parse_yaml_text(fluid + "  dcqcn: {pfc: false}\n", "s.yaml"), "s.yaml");
    ADD_FAILURE() << "flow+dcqcn has no loss recovery: pfc false must be refused";
  } catch (const BadInput& e) {
    EXPECT_TRUE(has_error(e.errors(), "network.dcqcn.pfc")) << e.what();
  }
  EXPECT_NO_THROW(load("  dcqcn: {pfc: false}\n"));  // the packet level retransmits
}

}  // namespace
}  // namespace clustersim
