// SPDX-License-Identifier: Apache-2.0
// GEMM measurements: transformer shapes in BF16 (cuBLAS) and FP8 E4M3 (cuBLASLt, sm_89 and up).
#pragma once

#include "kernels_probe/probe_options.h"
#include "kernels_probe/probe_record.h"

namespace clustersim::kernels_probe {

// Measures every transformer_gemm_cases() shape on device 0 and appends one record per shape and
// data type to `run`; skipped data types and shapes are noted in run.header.notes.
void run_gemm_bench(const ProbeOptions& options, ProbeRun& run);

// Runs 8192 x 8192 x 8192 bf16 GEMMs back to back on device 0 for about `seconds`, so that the
// first measurements find the GPU at its loaded clock and temperature, not idle. Throws ProbeError.
void preheat_gpu(double seconds);

}  // namespace clustersim::kernels_probe
