// SPDX-License-Identifier: Apache-2.0
// The files a subcommand reads, so that an output that would replace one is refused
// (refuse_overwriting): the scenario or sweep file, a sweep's base scenario, the GPU profile
// files and request traces a scenario names.
#pragma once

#include <string>
#include <vector>

#include "sim/report/json_writer.h"

namespace clustersim {
struct ScenarioConfig;
namespace sweep {
struct SweepSpec;
}  // namespace sweep
}  // namespace clustersim

namespace clustersim::cli {

// The scenario file, the profile files that cluster.gpu and the serving pools' gpu name (a
// built-in profile name is no file) and inference.trace, each resolved as the run resolves it
// (relative paths beside the scenario). A path may name no file yet; same_file compares it by
// its spelling then.
std::vector<std::string> scenario_input_files(const ScenarioConfig& cfg);

// What results.json's `inputs` records, so that a results file says what it was computed from:
// `files` (each of `inputs`, scenario_input_files's list, as {name: the file's name without its
// folder, digest: file_digest_hex of its bytes}), `set` (the --set overrides in the order given)
// and, when given, `fidelity` (the --fidelity flag). The same from any directory.
report::Json inputs_stamp(const std::vector<std::string>& inputs, const std::vector<std::string>& sets,
                          const std::string& fidelity);

// The sweep file, its base scenario file, and the profile files and request traces that the base
// and every axis value name, resolved beside the base as the candidates resolve them.
std::vector<std::string> sweep_input_files(const sweep::SweepSpec& spec);

}  // namespace clustersim::cli
