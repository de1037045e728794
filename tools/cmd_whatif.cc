// SPDX-License-Identifier: Apache-2.0
// clustersim whatif (not built yet).
#include "sim/core/error.h"
#include "tools/cli_args.h"
#include "tools/commands.h"

namespace clustersim::cli {

const char* const kWhatIfUsage = "usage: clustersim whatif ... (not built yet in this version)\n";

int cmd_whatif(const std::vector<std::string>&) {
  throw BadInput(InputError{"", 0, "", "'clustersim whatif' is not built yet in this version"});
}

}  // namespace clustersim::cli
