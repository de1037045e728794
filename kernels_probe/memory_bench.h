// SPDX-License-Identifier: Apache-2.0
// Memory-bound kernels (copy, elementwise, layernorm-like) for achieved HBM bandwidth.
#pragma once

#include "kernels_probe/probe_options.h"
#include "kernels_probe/probe_record.h"

namespace clustersim::kernels_probe {

// Row length of the layernorm-like kernel, in bf16 elements (a typical hidden size).
inline constexpr uint64_t kLayerNormRow = 4096;

// Measures each kernel on device 0 for total traffic (bytes read + written per launch) from
// 4 KiB to options.max_bytes. Successive launches walk through an arena several times the L2
// size, so each launch starts with cold L2 as a kernel in a training step would.
void run_memory_bench(const ProbeOptions& options, ProbeRun& run);

}  // namespace clustersim::kernels_probe
