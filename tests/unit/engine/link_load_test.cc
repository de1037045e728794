// SPDX-License-Identifier: Apache-2.0
#include "sim/engine/link_load.h"

#include <gtest/gtest.h>

#include <vector>

#include "tests/unit/engine/gpt_plan.h"
#include "topology/fabric.h"

namespace clustersim::engine {
namespace {

// Under max-min sharing most used links peak at a utilisation of 1 within floating-point noise;
// the ranking must then follow the bytes each link moved, not the noise.
TEST(MostLoadedLinks, PeakUtilisationWithinNoiseRanksByBusyTime) {
  const ScenarioConfig cfg = engine_test::validated(engine_test::gpt_1p3b(64, 8, 1, 64));
  const topo::Fabric fabric = topo::build_fabric(cfg.cluster, cfg.network, cfg.file);
  ASSERT_GE(fabric.link_count(), 4);
  std::vector<net::LinkUsage> usage(static_cast<size_t>(fabric.link_count()));
  // Link 0 carried least but peaked a hair higher; link 2 carried most.
  usage[0] = {Bytes::mib(96), 1.0 + 4e-12};
  usage[1] = {Bytes::mib(160), 1.0 - 3e-12};
  usage[2] = {Bytes::mib(176), 1.0 - 1e-11};
  usage[3] = {Bytes::mib(500), 0.5};  // most bytes, but never busier than half its line rate
  const std::vector<LinkLoad> top = most_loaded_links(fabric, usage, 3);
  ASSERT_EQ(top.size(), 3u);
  EXPECT_EQ(top[0].id, 2);
  EXPECT_EQ(top[1].id, 1);
  EXPECT_EQ(top[2].id, 0);
}

}  // namespace
}  // namespace clustersim::engine
