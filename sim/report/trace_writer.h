// SPDX-License-Identifier: Apache-2.0
// trace.json of a flow-level training run in the Chrome trace event format (opens in
// ui.perfetto.dev and chrome://tracing): one process per rank group, one thread per stream.
#pragma once

#include <string>

#include "sim/engine/flow_training.h"

namespace clustersim::report {

// Complete events ("ph":"X", microseconds) for every op of the representative rank groups:
// compute spans on the "compute" track, TP/CP collectives on "tp", pipeline sends on "pp" (with a
// matching "recv" span on the receiver's "pp" track and a flow event "s" -> "f" joining them), DP
// buckets and the embedding sync on "dp". Process and thread names come as metadata events.
std::string write_trace_json(const engine::FlowTrainingResult& flow);

}  // namespace clustersim::report
