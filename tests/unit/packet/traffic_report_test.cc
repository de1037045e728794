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

TEST(TrafficReport, PacketRunHasEverySectionAndNoExternalReference) { check_run("packet"); }

}  // namespace
}  // namespace clustersim
