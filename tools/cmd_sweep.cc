// SPDX-License-Identifier: Apache-2.0
// clustersim sweep (not built yet).
#include "sim/core/error.h"
#include "tools/cli_args.h"
#include "tools/commands.h"

namespace clustersim::cli {

const char* const kSweepUsage = "usage: clustersim sweep ... (not built yet in this version)\n";

int cmd_sweep(const std::vector<std::string>&) {
  throw BadInput(InputError{"", 0, "", "'clustersim sweep' is not built yet in this version"});
}

}  // namespace clustersim::cli
