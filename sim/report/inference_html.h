// SPDX-License-Identifier: Apache-2.0
// report.html of a serving run: headline figures, TTFT and TPOT distributions, per-pool
// utilisation and the decode step breakdown, as inline SVG (one self-contained file, no network).
#pragma once

#include <string>
#include <vector>

#include "sim/core/config.h"
#include "sim/engine/inference_sim.h"

namespace clustersim::report {

// The figures inference_output derives from a run, handed over so that the page and results.json agree.
struct ServingFigures {
  double duration_s = 0;
  double tokens_per_s = 0;
  double tokens_per_s_per_gpu = 0;
  double tokens_per_cost_unit = 0;  // 0 when a pool has no price
  int gpus = 0;
  std::vector<double> ttft_s;       // per completed request
  std::vector<double> tpot_s;       // per completed request with more than one output token
};

// Sections (each an <h2> with an id): summary, ttft, tpot, pools, decode-step.
std::string write_inference_html(const ScenarioConfig& cfg, const engine::ServingResult& r, const ServingFigures& f);

}  // namespace clustersim::report
