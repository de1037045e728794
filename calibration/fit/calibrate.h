// SPDX-License-Identifier: Apache-2.0
// From probe files to fitted cost models plus their error table (`clustersim calibrate`).
#pragma once

#include <string>
#include <vector>

#include "calibration/fit/attention_fit.h"
#include "calibration/fit/collective_fit.h"
#include "calibration/fit/gemm_fit.h"
#include "calibration/fit/memory_fit.h"
#include "calibration/probe_file.h"

namespace clustersim::calib {

// One row of the fit-error table.
struct FitErrorRow {
  std::string model;      // "gemm bf16", "memory copy", "all_reduce x8 auto/auto", "gemm (all)"
  FitError error;
};

// Everything `clustersim calibrate` learns from a set of probe files. Units are in the field
// names: seconds, bytes, FLOP/s, bytes/s. To map into a hardware profile:
//   - gemm[i].model: per dtype, peak_flops_per_s (achievable dense peak), launch_s, and the
//     tile/wave efficiency model (GemmModel::efficiency gives efficiency(shape)); divide
//     peak_flops_per_s by the datasheet peak for a scalar "max efficiency";
//   - attention[i].model: per direction and fused flag, flops_per_s, launch_s, and the
//     score-matrix cost of unfused chains;
//   - memory[i].model: per kernel kind, bw_bytes_per_s (achieved HBM bandwidth) and launch_s;
//   - collectives[i].model: per op, rank count and NCCL algorithm/protocol, alpha-beta segments by
//     size range.
// `machine` is the header of the first probe file (GPU model, versions, date) for provenance.
struct CalibrationResult {
  ProbeHeader machine;
  std::vector<std::string> sources;   // probe files used, in order
  bool synthetic = false;             // any input was synthetic
  std::vector<GemmFit> gemm;
  std::vector<AttentionFit> attention;
  std::vector<MemoryFit> memory;
  std::vector<CollectiveFit> collectives;
  // One row per fitted model, then one "(all)" row per family pooling that family's points:
  // "gemm (all)", "attention (all)", "memory (all)", "collectives (all)".
  std::vector<FitErrorRow> errors;
};

// Fits every model the probe files have data for. Files must come from the same GPU model
// (throws clustersim::BadInput naming the odd one out otherwise); collectives from runs on
// different GPU counts or with different NCCL_ALGO settings are fitted separately by key.
CalibrationResult calibrate(const std::vector<ProbeData>& probes);

// The error table as aligned text, one line per row of result.errors, with a header line:
//   model                          points  median_err  worst_err
std::string format_error_table(const CalibrationResult& result);

// The fitted parameters as readable text (one line per model), for the CLI and logs.
std::string format_parameters(const CalibrationResult& result);

}  // namespace clustersim::calib
