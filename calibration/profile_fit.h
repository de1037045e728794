// SPDX-License-Identifier: Apache-2.0
// Turns fitted cost models (calibration/fit/calibrate.h) into a hardware profile that scenarios
// use: datasheet values from a base profile, efficiencies from the fits.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "calibration/fit/calibrate.h"
#include "calibration/hardware_profile.h"

namespace clustersim::calib {

// The built-in profile whose GPU matches the probe's device name ("NVIDIA H100 80GB HBM3" ->
// "H100-SXM"), or empty when none does.
std::string builtin_profile_for_device(const std::string& gpu_model);

// `base` with every efficiency the probe files measured replaced by its fitted value, the
// probe files recorded, and a source line per fitted value (probe date, GPU, versions).
// Values the probes did not measure keep the base's value and source. `models_used`, when given,
// receives how many fitted models went into the profile (0: the probes fitted nothing).
HardwareProfile fitted_profile(const CalibrationResult& result, const HardwareProfile& base, int* models_used = nullptr);

// The fitted models fitted_profile does not write, one line per reason: the models as the error
// table names them, then why in parentheses ("memory elementwise, memory layernorm (a profile's
// HBM efficiency comes from the copy fit ...)"). Empty when every fit is written.
// `base`, where given: the profile fitted over (an fp8 fit is written only where it has an fp8
// peak; without one, the fp8 GEMM fit is listed, and gemm_max_fp8 is not named as kept).
std::vector<std::string> fitted_not_written(const CalibrationResult& result, const HardwareProfile* base = nullptr);
// The same, one (model, why) pair per model.
std::vector<std::pair<std::string, std::string>> not_written_models(const CalibrationResult& result,
                                                                    const HardwareProfile* base = nullptr);

// The efficiencies fitted_profile leaves at the base's because no series measured them, one line
// per group, with why ("hbm (no device copy series fitted)"). Until 2026-12-06 a series absent
// from the probe files left its values unnamed (a series with too few points was named).
std::vector<std::string> kept_from_base(const CalibrationResult& result, const HardwareProfile* base = nullptr);

// How the written profile `fitted` times the points of the fits it simplifies, one row each,
// named "<model> as written": the device copy at the profile's kernel_launch (the bf16 GEMM
// fit's launch cost, which every kernel pays) and its HBM rate, and the NVLink all-reduce as one
// alpha-beta line (nvlink_collective_latency, the smallest sizes' alpha, and the largest sizes'
// bus bandwidth), where the fits have their own launch cost and up to 3 segments, and the FP8
// GEMMs at the profile's tile, gemm_k_half and kernel_launch (its row `gated`: gemm_max_fp8 is
// fitted to those points, so calibrate judges it as a fit; since 2026-12-07). The error table
// judges the fits; these judge what the simulator will use (before 2026-12-06 only the fits were
// shown: the H200 copies read 5.7% median where the written profile misses by 17%, and 55% at 4 KiB).
std::vector<FitErrorRow> as_written_errors(const CalibrationResult& result, const HardwareProfile& fitted);

}  // namespace clustersim::calib
