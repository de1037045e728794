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
  // as_written_errors rows only: judged by calibrate's --max-median-error like a fit (the profile's
  // value was fitted to these points), where the others are shown, not gated.
  bool gated = false;
};

// Everything `clustersim calibrate` learns from a set of probe files. Units are in the field
// names: seconds, bytes, FLOP/s, bytes/s. Each fit keeps its points (measured and predicted) and
// its FitError; `errors` is the table printed by format_error_table.
//
// Mapping onto a HardwareProfile's Efficiencies (calibration/hardware_profile.h), with `hw` the
// datasheet peaks:
//   gemm_max          = gemm_model(kBf16)->peak_flops_per_s / hw.bf16 (the other types' fits are
//                       range-checked against their datasheet peak, and not written but fp8's:)
//   gemm_max_fp8      = the FP8 points' rate at the profile's tile, gemm_k_half and kernel_launch
//                       / hw.fp8 (since 2026-12-07; profile_fit.cc's fp8_rate_as_written)
//   gemm_tile_m/_n    = gemm_model(kBf16)->tile.m / .n
//   gemm_k_half       = gemm_model(kBf16)->k_half()   (same per-wave cost, as compute_cost.h uses it)
//   kernel_launch     = gemm_model(kBf16)->launch_s   (one launch cost for every kernel; the copy
//                       fit's own launch cost is printed with --parameters, not written)
//   attention_unfused = attention_model(kForward, false)->flops_per_s / hw.bf16; with bf16 GEMM and
//                       copy data the chain is fitted as the simulator times it (fit_unfused_chain:
//                       its GEMMs at the GEMM peak or their score traffic, the softmax's at the copy
//                       rate), and attention_score_bytes(_backward) = that fit's score_bytes
//   attention_fused   = attention_model(kForward, true)->flops_per_s / hw.bf16, when a fused kernel
//                       was measured beside bf16 GEMMs: fitted as the simulator times it, one launch
//                       (the GEMM fit's) plus its FLOPs at that rate (fit_fused_attention); written
//                       only where the profile takes that launch cost (as attention_unfused)
//   hbm               = memory_model(kCopy)->bw_bytes_per_s / hw.hbm_bandwidth
//   nvlink_busbw      = nvlink_all_reduce()->large_message_busbw_bytes_per_s() / hw.nvlink_bandwidth
//   nvlink_collective_latency = nvlink_all_reduce()->segments.front().alpha_s
// Every other fit is printed, not written (fitted_not_written in calibration/profile_fit.h).
// `machine` is the header of the first probe file (GPU model, versions, date) for provenance.
struct CalibrationResult {
  ProbeHeader machine;
  std::vector<std::string> sources;   // probe files used, in order
  std::string source_list() const;    // "a.pb, b.pb": the files, for messages
  bool synthetic = false;             // any input was synthetic
  std::vector<GemmFit> gemm;          // one per dtype
  std::vector<AttentionFit> attention;  // one per (direction, fused, dtype)
  std::vector<MemoryFit> memory;      // one per op
  std::vector<CollectiveFit> collectives;  // one per (op, ranks, algorithm, protocol, nodes)
  // One row per fitted model, then one "(all)" row per family pooling that family's points:
  // "gemm (all)", "attention (all)", "memory (all)", "collectives (all)".
  std::vector<FitErrorRow> errors;
  // Series with too few points for their model, in words ("gemm bf16: 1 point, needs 3"): their
  // profile values stay the base's.
  std::vector<std::string> unfitted;

  // Lookups; nullptr when the probe files had no data for that model.
  const GemmFit* gemm_fit(DType dtype) const;  // the model with its points
  const GemmModel* gemm_model(DType dtype) const;
  const AttentionModel* attention_model(Direction direction, bool fused,
                                        DType dtype = DType::kBf16) const;
  const MemoryModel* memory_model(MemoryOpKind op) const;
  const CollectiveModel* collective_model(CollectiveKind op, int ranks,
                                          const std::string& algorithm = "auto",
                                          const std::string& protocol = "auto", int nodes = 1) const;
  // The all-reduce that stands for NVLink: on one node, over the most ranks measured; at that
  // count NCCL_ALGO=Ring (algorithm "ring", any case, protocol auto) where measured, else NCCL's
  // own choice (auto/auto), else the forced algorithm with the highest large-message bus
  // bandwidth. Ring first because NCCL's own choice on NVSwitch machines is NVLS, whose in-switch
  // reduction exceeds the NVLink line rate. nullptr when none was fitted.
  const CollectiveModel* nvlink_all_reduce() const;
};

// The error table's name of a fitted model: "attention fwd chain bf16", "all_reduce x8 auto/auto"
// (" on 2 nodes" for a run across hosts).
std::string model_name(const AttentionModel& m);
std::string model_name(const CollectiveModel& m);

// Fits every model the probe files have data for. Files must come from the same GPU model
// (throws clustersim::BadInput naming the odd one out otherwise); collectives from runs on
// different GPU or node counts, or with different NCCL_ALGO settings, are fitted separately by key.
CalibrationResult calibrate(const std::vector<ProbeData>& probes);

// The error table as aligned text, one line per row of result.errors, with a header line:
//   model                          points  median_err  worst_err
std::string format_error_table(const CalibrationResult& result);

// One line per model whose worst point misses by more than 50%: the median gate of `calibrate`
// lets a single wild point through (a GEMM timed at 1e6 s fitted with exit 0), so it is named.
std::vector<std::string> wild_point_notes(const CalibrationResult& result);

// One line per series whose repeated measurements of one shape or size (probe files fitted
// together, or a file holding a shape twice) lie more than kRepeatSpread apart, slowest over
// fastest, with the widest pair: the fit sits between them and no other figure says so (QA
// 2026-12-07: every bf16 GEMM given twice, the copies 30% slower, was fitted with exit 0 and a
// 12.5% median error, nothing said). Two runs on one H200 four minutes apart differ by a few percent.
inline constexpr double kRepeatSpread = 1.25;
std::vector<std::string> repeat_notes(const CalibrationResult& result);
// Fits from a thin probe: a --quick run (the first file's command line), and GEMM series of fewer
// than kGemmThinShapes shapes, which the model's parameters and tile choice fit almost exactly
// (4 shapes reported 0.3% median and missed the other 467 measured points by 19% median, 66% at
// worst; 2026-12-06 review). One line each; the fit is still written.
inline constexpr size_t kGemmThinShapes = 12;
std::vector<std::string> thin_fit_notes(const CalibrationResult& result);

// The fitted parameters as readable text (one line per model), for the CLI and logs.
std::string format_parameters(const CalibrationResult& result);

}  // namespace clustersim::calib
