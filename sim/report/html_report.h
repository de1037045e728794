// SPDX-License-Identifier: Apache-2.0
// report.html of a flow-level training run: headline figures, the breakdown per rank group and
// the per-tier and per-link fabric load as inline SVG (one self-contained file, no network).
#pragma once

#include <string>

#include "calibration/hardware_profile.h"
#include "sim/core/config.h"
#include "sim/engine/flow_training.h"
#include "sim/report/training_report.h"

namespace clustersim::report {

// `peer`: the analytical figures shown beside the flow level's (analytical_peer).
std::string write_html_report(const ScenarioConfig& cfg, const calib::HardwareProfile& hw,
                              const engine::FlowTrainingResult& flow, const AnalyticalPeer& peer);

}  // namespace clustersim::report
