// SPDX-License-Identifier: Apache-2.0
// A GPU hardware profile: datasheet peaks plus the efficiencies the cost models use, each value
// with its source. Profiles are YAML files (calibration/profiles/*.yaml are built in).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "sim/core/config.h"
#include "sim/core/units.h"

namespace clustersim::calib {

// The range a profile's efficiencies (fractions of a datasheet rate) may take. Above 1 by up to
// 5%: a GPU can run above the clock its datasheet peak assumes, and a measurement carries noise;
// `clustersim calibrate` writes what it measured in this range and refuses values outside it.
inline constexpr double kMinFittedEfficiency = 0.01;
inline constexpr double kMaxFittedEfficiency = 1.05;
// How far apart (as a ratio) a probe's reported memory and a base profile's capacity may be and
// still describe one GPU: the driver's total and a profile's figure can differ a little (a
// datasheet's GB, or another driver's reserve).
inline constexpr double kMemoryMatch = 1.10;
// Whether two memory sizes (bytes, above 0) describe one GPU: each within kMemoryMatch of the other.
inline bool same_memory_size(double a, double b) { return a <= kMemoryMatch * b && b <= kMemoryMatch * a; }
// The least share of the smallest measured time a fitted fixed cost (the GEMMs' launch cost, the
// NVLink all-reduce's latency) must take for `clustersim calibrate` to write it: smaller, it lies
// within the slopes' noise and the base's value is kept (profile_fit.cc, fixed_cost_seen).
inline constexpr double kFixedCostShare = 0.1;
// The largest launch or collective latency a profile takes: microseconds on real GPUs, so a
// millisecond is already far off any.
inline constexpr Time kMaxFixedCost = Time::ps(1'000'000'000);  // 1 ms
// The largest gemm_k_half a profile takes (an inner-loop length; fitted ones are hundreds).
inline constexpr int kMaxGemmKHalf = 1 << 20;

// Fitted or assumed efficiencies of the cost models (see calibration/compute_cost.h for where
// each enters a formula).
struct Efficiencies {
  double gemm_max = 0.8;        // fraction of peak a large, well-shaped GEMM reaches
  // The same for FP8 GEMMs, of the FP8 peak; 0: gemm_max (gemm_efficiency()).
  double gemm_max_fp8 = 0;
  int gemm_tile_m = 128;        // output tile rows of the GEMM kernel (wave quantisation)
  int gemm_tile_n = 256;        // output tile columns
  int gemm_k_half = 64;         // inner dimension at which GEMM efficiency is halved
  Time kernel_launch = Time::us(4);   // per kernel, CPU launch + GPU ramp
  double attention_fused = 0.55;      // flash-style attention, fraction of peak
  double attention_unfused = 0.45;    // matmul-softmax-matmul GEMMs, fraction of peak
  // HBM bytes per score-matrix element that the unfused chain's GEMMs move (QK^T writing S, PV
  // reading P; backward the four GEMMs over P, dP and dS), forward and backward: their time is
  // then the larger of the FLOP time and this traffic (compute_cost.h). 0 (the built-in
  // profiles, whose attention_unfused absorbs it): FLOPs alone. `clustersim calibrate` fits them.
  double attention_score_bytes = 0;
  double attention_score_bytes_backward = 0;
  double hbm = 0.85;                  // achieved / datasheet HBM bandwidth on streaming kernels
  double nvlink_busbw = 0.78;         // NCCL bus bandwidth / NVLink line rate, large messages
  double network_busbw = 0.93;        // NCCL bus bandwidth / NIC line rate across nodes
  Time nvlink_collective_latency = Time::us(8);   // alpha per NCCL collective inside a node
  Time network_collective_latency = Time::us(20); // alpha per ring step across nodes
};

struct HardwareProfile {
  std::string name;
  std::string description;
  std::string origin;  // "built-in" or the file it was read from
  FlopRate bf16, fp16, fp8, tf32, fp32;  // dense peaks; fp8 zero when unsupported
  Bytes hbm_capacity;
  Bandwidth hbm_bandwidth;
  Bytes memory_reserved = Bytes::gib(2);  // CUDA context, NCCL buffers, allocator slack
  Bandwidth nvlink_bandwidth;             // per GPU, per direction
  int sm_count = 0;
  Efficiencies eff;
  std::map<std::string, std::string> sources;  // key path -> where the value comes from
  std::vector<std::string> probe_files;        // set when fitted by `clustersim calibrate`
  // Values that read but sit far from any GPU's (a unit or digit slip is the likely cause): said
  // as notes by the runs that use the profile, not refused (an unusual GPU may be right).
  std::vector<std::string> notes;

  // Peak dense rate for a training precision; throws BadInput naming the profile if unsupported.
  FlopRate peak(Precision p) const;
};

// Names of the profiles compiled into the binary ("A100-SXM4-40GB", "H100-SXM", ...).
std::vector<std::string> builtin_profile_names();
// The same as a message lists them: "A100-SXM4-40GB, A100-SXM4-80GB, ...".
std::string builtin_profile_names_text();

// "; did you mean 'H100-SXM'?" for a built-in name given in other letter case or punctuation
// ("h100 sxm"), or for the part of names before their first '-' ("a100": both A100s, joined with
// "or"); else empty.
std::string builtin_profile_suggestion(const std::string& name);

// The text of a built-in profile, or empty when there is none of that name.
std::string builtin_profile_text(const std::string& name);

// The file `name_or_path` names as load_hardware_profile resolves it: a relative path beside
// `base_dir` (the naming file's directory), or from the working directory without one. Empty for
// a built-in name (no file) or an empty name.
std::string profile_file_path(const std::string& name_or_path, const std::string& base_dir = "");

// Resolves `name_or_path` (a built-in name, or a file path absolute or relative to `base_dir`)
// and loads it strictly. Throws BadInput with the file, line and key on any problem, and lists
// the built-in names when neither a profile nor a file of that name exists.
HardwareProfile load_hardware_profile(const std::string& name_or_path, const std::string& base_dir = "");

// Parses profile YAML text; `origin` names it in messages.
HardwareProfile parse_hardware_profile(const std::string& text, const std::string& origin);

// Writes `p` as profile YAML that parse_hardware_profile reads back unchanged.
std::string format_hardware_profile(const HardwareProfile& p);

}  // namespace clustersim::calib
