// SPDX-License-Identifier: Apache-2.0
#include "sim/core/build_info.h"

#include "generated/build_id.h"

namespace clustersim {

const char* clustersim_version() { return CLUSTERSIM_VERSION; }
const char* clustersim_build_id() { return CLUSTERSIM_BUILD_ID; }

}  // namespace clustersim
