// SPDX-License-Identifier: Apache-2.0
// Traffic runs at the congestion levels write queues.csv, rates.csv and a self-contained
// report.html with every section (run_scenario, as `clustersim run --out` uses it).
#include <gtest/gtest.h>

#include <string>

#include "sim/core/scenario.h"
#include "sim/report/run_scenario.h"

namespace clustersim {
namespace {

void check_run(const std::string& fidelity) {
  const std::string path = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/net-incast-32-dcqcn.yaml";
  // A smaller incast keeps the packet level quick.
  const ScenarioConfig cfg =
      load_scenario(path, {"network.fidelity=" + fidelity, "traffic.incast_senders=4", "traffic.bytes_per_pair=4MiB"});
  const report::RunOutput out = report::run_scenario(cfg);
  const std::string& html = out.report_html;
  for (const char* id : {"completion", "tiers", "links", "congestion", "queues", "rates"}) {
    EXPECT_NE(html.find(std::string("<section id='") + id + "'"), std::string::npos) << fidelity << ": " << id;
  }
  EXPECT_NE(html.find("<svg"), std::string::npos);
  for (const char* external : {"http:", "https:", "src=", "<link", "@import", "<script"}) {
    EXPECT_EQ(html.find(external), std::string::npos) << fidelity << ": " << external;
  }
  bool queues = false, rates = false;
  for (const auto& [name, content] : out.extra_files) {
    if (name == "queues.csv") queues = content.rfind("time_us,link,bytes", 0) == 0;
    if (name == "rates.csv") rates = content.rfind("time_us,flow,", 0) == 0;
  }
  EXPECT_TRUE(queues) << fidelity;
  EXPECT_TRUE(rates) << fidelity;
}

TEST(TrafficReport, FlowDcqcnRunHasEverySectionAndNoExternalReference) { check_run("flow+dcqcn"); }

// Small incasts at flow+dcqcn end at their bound (ideal_time_s: the receiver's NIC carries every
// byte), whatever the step: the last byte's time is interpolated at the rate the last hop
// delivered at. Before 2026-12-04 it used that hop's inflow, 0 while a queue drains with nothing
// arriving, and the finish snapped to the step's start: 12 x 100 KiB ended at 26.5 us against a
// bound of 27.08 us with 1 us steps, 28 x 900 KiB 3% early with 20 us steps.
TEST(TrafficReport, AFlowDcqcnIncastNeverEndsBeforeItsBound) {
  const std::string path = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/net-incast-32-dcqcn.yaml";
  for (const char* step : {"1us", "20us"}) {
    for (const auto& [senders, bytes] : {std::pair{"12", "100KiB"}, {"12", "500KiB"}, {"28", "900KiB"}}) {
      const ScenarioConfig cfg = load_scenario(path, {std::string("network.dcqcn.fluid_step=") + step,
                                                      std::string("traffic.incast_senders=") + senders,
                                                      std::string("traffic.bytes_per_pair=") + bytes});
      const report::RunOutput out = report::run_scenario(cfg);
      EXPECT_GE(out.metrics.at("completion_time_s"), out.metrics.at("ideal_time_s") * (1 - 1e-9))
          << step << " steps, " << senders << " x " << bytes;
    }
  }
}

TEST(TrafficReport, AFlowDcqcnTransferShorterThanAStepEndsWhenItsBytesDo) {
  // One sender, alone on the fabric: flow+dcqcn ends where the flow level does, whatever the
  // step (until 2026-12-05 a transfer of fewer bytes than a step's worth ended at the step's
  // end: 60 KB at 20 us steps took 22.5 us against 3.7 us).
  const std::string path = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/net-incast-32-dcqcn.yaml";
  for (const char* step : {"1us", "20us"}) {
    for (const char* bytes : {"1B", "60KB"}) {
      const std::vector<std::string> set = {std::string("network.dcqcn.fluid_step=") + step, "traffic.incast_senders=1",
                                            std::string("traffic.bytes_per_pair=") + bytes};
      std::vector<std::string> flow = set;
      flow.push_back("network.fidelity=flow");
      const double dcqcn = report::run_scenario(load_scenario(path, set)).metrics.at("completion_time_s");
      const double fluid = report::run_scenario(load_scenario(path, flow)).metrics.at("completion_time_s");
      EXPECT_NEAR(dcqcn / fluid, 1.0, 0.01) << step << " steps, " << bytes << ": " << dcqcn << " s against " << fluid;
    }
  }
}

TEST(TrafficReport, PacketRunHasEverySectionAndNoExternalReference) { check_run("packet"); }

}  // namespace
}  // namespace clustersim
