// SPDX-License-Identifier: Apache-2.0
// The NVLink speed a scenario's fabric is built with.
#pragma once

#include "sim/core/config.h"
#include "sim/core/units.h"

namespace clustersim::engine {

// NVLink per GPU per direction: network.nvlink_bandwidth, else the cluster.gpu profile's
// nvlink.bandwidth (H800-SXM 200 GB/s, A100 300, H100 450). Pass it to topo::build_fabric, whose
// own default is H100's 450 GB/s whatever the GPU. Throws BadInput (in the scenario, key
// cluster.gpu) for a profile that does not load; does not load one when the network sets the speed.
Bandwidth scenario_nvlink_bandwidth(const ScenarioConfig& cfg);

}  // namespace clustersim::engine
