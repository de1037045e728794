// SPDX-License-Identifier: Apache-2.0
// clustersim calibrate: fit a hardware profile to probe files.
#include "sim/core/error.h"
#include "tools/cli_args.h"
#include "tools/commands.h"

namespace clustersim::cli {

const char* const kCalibrateUsage = "usage: clustersim calibrate PROBE_FILE... -o PROFILE\n";

int cmd_calibrate(const std::vector<std::string>&) {
  throw BadInput(InputError{"", 0, "", "'clustersim calibrate' is not built yet"});
}

}  // namespace clustersim::cli
