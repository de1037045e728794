// SPDX-License-Identifier: Apache-2.0
// A scenario's GPU profile, and the NVLink speed its fabric is built with.
#pragma once

#include "calibration/hardware_profile.h"
#include "sim/core/config.h"
#include "sim/core/units.h"

namespace clustersim::engine {

// The cluster.gpu profile (built in, or a file beside the scenario). Throws BadInput in the
// scenario (its file, key cluster.gpu) for a profile that does not load.
calib::HardwareProfile scenario_profile(const ScenarioConfig& cfg);

// NVLink per GPU per direction: network.nvlink_bandwidth, else the cluster.gpu profile's
// nvlink.bandwidth (H800-SXM 200 GB/s, A100 300, H100 450). Pass it to topo::build_fabric, whose
// own default is H100's 450 GB/s whatever the GPU. Throws BadInput (in the scenario, key
// cluster.gpu) for a profile that does not load; does not load one when the network sets the speed.
Bandwidth scenario_nvlink_bandwidth(const ScenarioConfig& cfg);

}  // namespace clustersim::engine
