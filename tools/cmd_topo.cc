// SPDX-License-Identifier: Apache-2.0
// clustersim topo: the fabric of a scenario.
#include "sim/core/error.h"
#include "tools/cli_args.h"
#include "tools/commands.h"

namespace clustersim::cli {

const char* const kTopoUsage = "usage: clustersim topo SCENARIO.yaml\n";

int cmd_topo(const std::vector<std::string>&) {
  throw BadInput(InputError{"", 0, "", "'clustersim topo' is not built yet"});
}

}  // namespace clustersim::cli
