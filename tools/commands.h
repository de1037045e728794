// SPDX-License-Identifier: Apache-2.0
// Subcommands implemented in their own files (each throws UsageError / BadInput like the rest).
#pragma once

#include <string>
#include <vector>

namespace clustersim::cli {

extern const char* const kTopoUsage;
int cmd_topo(const std::vector<std::string>& argv);

extern const char* const kCalibrateUsage;
int cmd_calibrate(const std::vector<std::string>& argv);

extern const char* const kSweepUsage;
int cmd_sweep(const std::vector<std::string>& argv);

extern const char* const kWhatIfUsage;
int cmd_whatif(const std::vector<std::string>& argv);

}  // namespace clustersim::cli
