// SPDX-License-Identifier: Apache-2.0
// Which clustersim this is: the release version and the source's git commit at build time
// (cmake/BuildId.cmake), so that results can be matched to the build that produced them.
#pragma once

namespace clustersim {

// "0.1.0"
const char* clustersim_version();
// "5ae18bc3f2a1" (12 hex digits of the commit), with "-dirty" for a build of uncommitted
// changes; "unknown" outside a git checkout.
const char* clustersim_build_id();

}  // namespace clustersim
