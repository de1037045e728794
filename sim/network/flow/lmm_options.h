// SPDX-License-Identifier: Apache-2.0
// Settings of the SimGrid LMM flow backend that scenarios do not carry (benchmarks tune them).
#pragma once

#include <optional>

namespace clustersim::net {

struct LmmOptions {
  // SimGrid's --cfg=surf/precision and maxmin/precision; unset keeps SimGrid's defaults (1e-9,
  // 1e-5). DESIGN.md section 5: 1e-4 / 1e-3 made 12,288 coupled flows 14x faster and moved
  // completion times by under 0.5%.
  std::optional<double> surf_precision;
  std::optional<double> maxmin_precision;
  // SimGrid's network/optim. Full (our default) updates every comm at every step. SimGrid's own
  // default, Lazy, updates only the comms whose rate changed and is faster, but in 3.32 it let
  // some comms finish up to 1.4% early against an exact max-min timeline (our agreement tests,
  // staggered and all-to-all traffic), with links apparently loaded to 103%.
  bool lazy_update = false;
  // Peak link utilisation costs one pass over the active sub-flows per SimGrid step.
  bool track_peaks = true;
};

}  // namespace clustersim::net
