// SPDX-License-Identifier: Apache-2.0
// Groups probe measurements by model key, runs each fitter and builds the error table.
#include "calibration/fit/calibrate.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "calibration/hardware_profile.h"
#include "sim/core/error.h"

namespace clustersim::calib {
namespace {

void add_row(CalibrationResult& result, std::string name, const std::vector<FitPoint>& points) {
  result.errors.push_back({std::move(name), fit_error(points)});
}

template <typename Fit>
void append_points(std::vector<FitPoint>& all, const std::vector<Fit>& fits) {
  for (const Fit& f : fits) all.insert(all.end(), f.points.begin(), f.points.end());
}

// "all_reduce x8 auto/auto", and " on 2 nodes" for a run across hosts.
std::string collective_name(CollectiveKind op, int ranks, const std::string& algorithm, const std::string& protocol,
                            int nodes) {
  return std::string(to_string(op)) + " x" + std::to_string(ranks) + " " + algorithm + "/" + protocol +
         (nodes > 1 ? " on " + std::to_string(nodes) + " nodes" : "");
}
// "attention fwd chain bf16", "attention bwd fused fp16".
std::string attention_name(Direction direction, bool fused, DType dtype) {
  return "attention " + std::string(to_string(direction)) + (fused ? " fused " : " chain ") + std::string(to_string(dtype));
}

}  // namespace

std::string model_name(const AttentionModel& m) { return attention_name(m.direction, m.fused, m.dtype); }
std::string model_name(const CollectiveModel& m) {
  return collective_name(m.op, m.ranks, m.algorithm, m.protocol, m.nodes);
}

const GemmFit* CalibrationResult::gemm_fit(DType dtype) const {
  for (const GemmFit& f : gemm) {
    if (f.model.dtype == dtype) return &f;
  }
  return nullptr;
}

const GemmModel* CalibrationResult::gemm_model(DType dtype) const {
  const GemmFit* f = gemm_fit(dtype);
  return f ? &f->model : nullptr;
}

const AttentionModel* CalibrationResult::attention_model(Direction direction, bool fused,
                                                         DType dtype) const {
  for (const AttentionFit& f : attention) {
    if (f.model.direction == direction && f.model.fused == fused && f.model.dtype == dtype) {
      return &f.model;
    }
  }
  return nullptr;
}

const MemoryModel* CalibrationResult::memory_model(MemoryOpKind op) const {
  for (const MemoryFit& f : memory) {
    if (f.model.op == op) return &f.model;
  }
  return nullptr;
}

const CollectiveModel* CalibrationResult::collective_model(CollectiveKind op, int ranks,
                                                           const std::string& algorithm,
                                                           const std::string& protocol, int nodes) const {
  for (const CollectiveFit& f : collectives) {
    const CollectiveModel& m = f.model;
    if (m.op == op && m.ranks == ranks && m.algorithm == algorithm && m.protocol == protocol && m.nodes == nodes) {
      return &m;
    }
  }
  return nullptr;
}

const CollectiveModel* CalibrationResult::nvlink_all_reduce() const {
  // Preference at one rank count: Ring (2), NCCL's own choice (1), another forced algorithm (0).
  // Ring first: on NVSwitch machines NCCL's choice is NVLS, whose in-switch reduction puts the
  // bus bandwidth over the NVLink line rate (~475-480 GB/s against 450 on 8 x H100/H200), which
  // nvlink_busbw, a fraction of the line rate, cannot take.
  const auto rank = [](const CollectiveModel& m) {
    if (ascii_lower(m.algorithm) == "ring" && m.protocol == "auto") return 2;
    return m.algorithm == "auto" && m.protocol == "auto" ? 1 : 0;
  };
  const CollectiveModel* best = nullptr;
  for (const CollectiveFit& f : collectives) {
    const CollectiveModel& m = f.model;
    if (m.op != CollectiveKind::kAllReduce || m.nodes != 1 || m.ranks < 2 || m.segments.empty()) continue;
    const bool better = !best || m.ranks > best->ranks ||
                        (m.ranks == best->ranks &&
                         (rank(m) > rank(*best) ||
                          (rank(m) == rank(*best) &&
                           m.large_message_busbw_bytes_per_s() > best->large_message_busbw_bytes_per_s())));
    if (better) best = &m;
  }
  return best;
}

CalibrationResult calibrate(const std::vector<ProbeData>& probes) {
  CalibrationResult result;
  if (probes.empty()) throw BadInput(InputError{"", 0, "", "no probe files given"});
  result.machine = probes.front().header;
  for (const ProbeData& p : probes) {
    if (p.header.gpu_model != result.machine.gpu_model) {
      throw BadInput(InputError{p.source, 0, "header.gpu_model",
                                "probe files must come from one GPU model: this one is '" +
                                    p.header.gpu_model + "', " + probes.front().source +
                                    " is '" + result.machine.gpu_model + "'"});
    }
    // The GEMM fit's waves are counted over the SMs: one model with another SM count is another
    // part (a MIG slice, a cut-down SKU), and its timings do not share a fit.
    if (p.header.sm_count != result.machine.sm_count) {
      throw BadInput(InputError{p.source, 0, "header.sm_count",
                                "probe files must come from GPUs with one SM count: this one has " +
                                    std::to_string(p.header.sm_count) + ", " + probes.front().source + " " +
                                    std::to_string(result.machine.sm_count) + " (a MIG slice or another part)"});
    }
    // Nor one memory size: another size is another part of the same name (an 80 GiB file
    // beside a 141 GiB one wrote an H200 profile from an H100's collectives when it came second,
    // and was refused only when it came first, at the base's check; 2026-12-07 review).
    const double memory = static_cast<double>(p.header.memory_bytes);
    const double first_memory = static_cast<double>(result.machine.memory_bytes);
    if (memory > 0 && first_memory > 0 && !same_memory_size(memory, first_memory)) {
      char sizes[96];
      std::snprintf(sizes, sizeof sizes, "%.1f GiB, ", memory / (1 << 30));
      std::string text = sizes;
      std::snprintf(sizes, sizeof sizes, " %.1f GiB", first_memory / (1 << 30));
      throw BadInput(InputError{p.source, 0, "header.memory_bytes",
                                "probe files must come from GPUs of one memory size: this one has " + text +
                                    probes.front().source + sizes + " (another part of the same name)"});
    }
    result.sources.push_back(p.source);
    result.synthetic = result.synthetic || p.header.synthetic;
  }

  std::map<DType, std::vector<GemmPoint>> gemm;
  std::map<std::tuple<Direction, bool, DType>, std::vector<AttentionPoint>> attention;
  std::map<MemoryOpKind, std::vector<MemoryPoint>> memory;
  std::map<std::tuple<CollectiveKind, int, std::string, std::string, int>, std::vector<CollectivePoint>> collectives;
  for (const ProbeData& p : probes) {
    for (const GemmPoint& g : p.gemm) gemm[g.dtype].push_back(g);
    for (const AttentionPoint& a : p.attention) {
      attention[{a.direction, a.fused, a.dtype}].push_back(a);
    }
    for (const MemoryPoint& m : p.memory) memory[m.op].push_back(m);
    for (const CollectivePoint& c : p.collectives) {
      collectives[{c.op, c.ranks, c.algorithm, c.protocol, c.nodes}].push_back(c);
    }
  }

  // Counted in distinct shapes: repeats of one shape add no information to fit. With enough of
  // them and still no fit, every candidate model came out non-physical (a time of zero, or
  // shuffled timings, give no finite positive rate): that is bad data, not too little.
  std::vector<InputError> unfittable;
  // `noun`: what a distinct point is, "shape" (GEMMs, attention) or "size" (memory, collectives).
  const auto not_fitted = [&](const std::string& model, size_t points, size_t shapes, size_t needs,
                              const std::string& noun = "shape") {
    std::string what = std::to_string(points) + (points == 1 ? " point" : " points");
    if (shapes != points) what += " of " + std::to_string(shapes) + " " + noun + (shapes == 1 ? "" : "s");
    if (shapes >= needs) {
      unfittable.push_back(InputError{result.source_list(), 0, "",
                                      model + ": " + what + " fit no model (no candidate gives a finite, positive rate "
                                      "and cost); check the probe's timings"});
      return;
    }
    result.unfitted.push_back(model + ": " + what + ", needs at least " + std::to_string(needs) + " " + noun + "s");
  };
  for (const auto& [dtype, points] : gemm) {
    GemmFit fit = fit_gemm(points, result.machine.sm_count);
    if (fit.error.points == 0) {
      not_fitted("gemm " + std::string(to_string(dtype)), points.size(), gemm_shapes(points), kGemmMinPoints);
      continue;
    }
    add_row(result, "gemm " + std::string(to_string(dtype)), fit.points);
    result.gemm.push_back(std::move(fit));
  }
  for (const auto& [op, points] : memory) {
    MemoryFit fit = fit_memory(points);
    if (fit.error.points > 0) {
      result.memory.push_back(std::move(fit));
    } else {
      not_fitted("memory " + std::string(to_string(op)), points.size(), memory_shapes(points), kMemoryMinPoints, "size");
    }
  }
  // The unfused chain as the simulator times it, once the GEMM and copy rates it uses are known.
  const GemmModel* bf16_gemm = result.gemm_model(DType::kBf16);
  const MemoryModel* copy = result.memory_model(MemoryOpKind::kCopy);
  for (const auto& [key, points] : attention) {
    const auto& [direction, fused, dtype] = key;
    const std::string name = attention_name(direction, fused, dtype);
    // The bf16 chain is memory-bound at the probe's sizes: fitted as a FLOP rate alone its rate
    // runs to thousands of TFLOP/s (a probe run with --only attention, 2026-12-05 audit), so it
    // is fitted only as the simulator times it, beside the GEMM and copy series.
    const bool chain = !fused && dtype == DType::kBf16;
    if (chain && !(bf16_gemm && copy)) {
      result.unfitted.push_back(name + ": needs the bf16 GEMM and copy series in the same run (the simulator times "
                                       "the chain as its GEMMs or its score-matrix traffic); give their probe file too");
      continue;
    }
    // A fused kernel is timed as one launch plus its FLOPs at one rate: fitted so, beside the GEMM
    // fit's launch cost (fit_fused_attention).
    if (fused && !bf16_gemm) {
      result.unfitted.push_back(name + ": needs the bf16 GEMM series in the same run (the simulator times a fused "
                                       "kernel as one launch, the GEMM fit's, plus its FLOPs); give its probe file too");
      continue;
    }
    AttentionFit fit = chain   ? fit_unfused_chain(points, bf16_gemm->launch_s, bf16_gemm->peak_flops_per_s, copy->bw_bytes_per_s)
                       : fused ? fit_fused_attention(points, bf16_gemm->launch_s)
                               : fit_attention(points);
    if (fit.error.points == 0) {
      not_fitted(name, points.size(), attention_shapes(points), kAttentionMinPoints);
      continue;
    }
    add_row(result, name, fit.points);
    result.attention.push_back(std::move(fit));
  }
  for (const MemoryFit& fit : result.memory) add_row(result, "memory " + std::string(to_string(fit.model.op)), fit.points);
  for (const auto& [key, points] : collectives) {
    CollectiveFit fit = fit_collective(points);
    if (fit.error.points == 0) {
      const auto& [op, ranks, algorithm, protocol, nodes] = key;
      not_fitted(collective_name(op, ranks, algorithm, protocol, nodes), points.size(), collective_sizes(points),
                 kCollectiveMinPoints, "size");
      continue;
    }
    add_row(result, model_name(fit.model), fit.points);
    result.collectives.push_back(std::move(fit));
  }

  if (!unfittable.empty()) throw BadInput(unfittable);

  std::vector<FitPoint> all;
  if (!result.gemm.empty()) {
    append_points(all, result.gemm);
    add_row(result, "gemm (all)", all);
  }
  if (!result.attention.empty()) {
    all.clear();
    append_points(all, result.attention);
    add_row(result, "attention (all)", all);
  }
  if (!result.memory.empty()) {
    all.clear();
    append_points(all, result.memory);
    add_row(result, "memory (all)", all);
  }
  if (!result.collectives.empty()) {
    all.clear();
    append_points(all, result.collectives);
    add_row(result, "collectives (all)", all);
  }
  return result;
}

std::string CalibrationResult::source_list() const {
  std::string out;
  for (const std::string& f : sources) out += (out.empty() ? "" : ", ") + f;
  return out;
}

std::string format_error_table(const CalibrationResult& result) {
  std::ostringstream os;
  char line[256];
  if (result.synthetic) os << "(fitted on SYNTHETIC probe data)\n";
  std::snprintf(line, sizeof line, "%-36s %7s %11s %10s\n", "model", "points", "median_err",
                "worst_err");
  os << line;
  // Percentages past a million in exponent form: a point timed 1e-300 s printed 300 digits,
  // which overran the line and ran two rows together (QA 2026-12-07).
  const auto percent = [](double fraction) {
    char cell[32];
    const double pct = 100 * fraction;
    std::snprintf(cell, sizeof cell, pct < 1e6 ? "%.2f%%" : "%.2e%%", pct);
    return std::string(cell);
  };
  for (const FitErrorRow& row : result.errors) {
    std::snprintf(line, sizeof line, "%-36s %7d %11s %10s\n", row.model.c_str(), row.error.points,
                  percent(row.error.median_rel).c_str(), percent(row.error.worst_rel).c_str());
    os << line;
  }
  os << "(errors: |model - measured| / measured time, over each model's points)\n";
  return os.str();
}

std::vector<std::string> wild_point_notes(const CalibrationResult& result) {
  std::vector<std::string> out;
  for (const FitErrorRow& row : result.errors) {
    if (row.model.find("(all)") != std::string::npos || row.error.worst_rel <= 0.5) continue;
    // Named, with both times: a point timed far too slow reads under 100% (|model - measured| /
    // measured), one far too fast thousands of percent (until 2026-12-07 the note named neither).
    const FitPoint& w = row.error.worst;
    char line[512];
    std::snprintf(line, sizeof line,
                  "the %s model misses its worst point, %s, by %.0f%% (measured %.4g us, the model %.4g us); "
                  "check that measurement",
                  row.model.c_str(), w.label.c_str(), 100 * row.error.worst_rel, 1e6 * w.measured_s,
                  1e6 * w.predicted_s);
    out.push_back(line);
  }
  return out;
}

std::vector<std::string> repeat_notes(const CalibrationResult& result) {
  std::vector<std::string> out;
  const auto series = [&out](const std::string& model, const std::vector<FitPoint>& points) {
    struct Span {
      const FitPoint* fastest;
      const FitPoint* slowest;
      int count;
      double ratio() const { return slowest->measured_s / fastest->measured_s; }
    };
    std::map<std::string, Span> span;  // by label (shape or size)
    for (const FitPoint& p : points) {
      auto [it, fresh] = span.try_emplace(p.label, Span{&p, &p, 0});
      Span& s = it->second;
      ++s.count;
      if (p.measured_s < s.fastest->measured_s) s.fastest = &p;
      if (p.measured_s > s.slowest->measured_s) s.slowest = &p;
    }
    int repeated = 0, apart = 0;
    const Span* widest = nullptr;
    for (const auto& [label, s] : span) {
      if (s.count < 2) continue;
      ++repeated;
      if (s.ratio() <= kRepeatSpread) continue;
      ++apart;
      if (!widest || s.ratio() > widest->ratio()) widest = &s;
    }
    if (apart == 0) return;
    char line[512];
    std::snprintf(line, sizeof line,
                  "the %s series measures %d of its %d repeated shapes or sizes more than %.0f%% apart (widest %s: "
                  "%.4g us and %.4g us): fitted together, the model sits between them; check that the probe files "
                  "measured the same GPU under the same conditions",
                  model.c_str(), apart, repeated, 100 * (kRepeatSpread - 1), widest->fastest->label.c_str(),
                  1e6 * widest->fastest->measured_s, 1e6 * widest->slowest->measured_s);
    out.push_back(line);
  };
  for (const GemmFit& f : result.gemm) series("gemm " + std::string(to_string(f.model.dtype)), f.points);
  for (const AttentionFit& f : result.attention) series(model_name(f.model), f.points);
  for (const MemoryFit& f : result.memory) series("memory " + std::string(to_string(f.model.op)), f.points);
  for (const CollectiveFit& f : result.collectives) series(model_name(f.model), f.points);
  return out;
}

std::vector<std::string> thin_fit_notes(const CalibrationResult& result) {
  std::vector<std::string> out;
  if (result.machine.command_line.find("--quick") != std::string::npos) {
    out.push_back("the probe ran with --quick (a few shapes and sizes, a smoke test): fit a profile from a full run");
  }
  for (const GemmFit& f : result.gemm) {
    std::set<std::string> shapes;
    for (const FitPoint& p : f.points) shapes.insert(p.label);
    if (shapes.size() >= kGemmThinShapes) continue;
    out.push_back("the gemm " + std::string(to_string(f.model.dtype)) + " model is fitted from " +
                  std::to_string(shapes.size()) + " shapes: its launch cost, peak and cost per wave and its tile fit so " +
                  "few almost exactly, and may miss other shapes widely; a full probe run measures " +
                  std::to_string(kGemmThinShapes) + " or more");
  }
  return out;
}

std::string format_parameters(const CalibrationResult& result) {
  std::ostringstream os;
  char line[512];
  for (const GemmFit& f : result.gemm) {
    const GemmModel& m = f.model;
    std::snprintf(line, sizeof line,
                  "gemm %-9s peak %.1f TFLOP/s, tile %dx%d over %d SMs, launch %.2f us, "
                  "per wave %.2f us\n",
                  std::string(to_string(m.dtype)).c_str(), m.peak_flops_per_s * 1e-12, m.tile.m,
                  m.tile.n, m.sm_count, m.launch_s * 1e6, m.wave_overhead_s * 1e6);
    os << line;
  }
  for (const AttentionFit& f : result.attention) {
    const AttentionModel& m = f.model;
    if (m.score_bytes > 0) {
      std::snprintf(line, sizeof line,
                    "attention %s chain %s: GEMMs at %.1f TFLOP/s or %.2f B per score element, whichever is "
                    "longer, softmax %.0f B per score element, at %.1f GB/s; launch %.2f us\n",
                    std::string(to_string(m.direction)).c_str(), std::string(to_string(m.dtype)).c_str(),
                    m.flops_per_s * 1e-12, m.score_bytes, m.s_per_score_element * m.hbm_bytes_per_s,
                    m.hbm_bytes_per_s * 1e-9, m.launch_s * 1e6);
      os << line;
      continue;
    }
    std::snprintf(line, sizeof line,
                  "attention %s %s %s: %.1f TFLOP/s, launch %.2f us, %.3f ps per score element\n",
                  std::string(to_string(m.direction)).c_str(), m.fused ? "fused" : "chain",
                  std::string(to_string(m.dtype)).c_str(), m.flops_per_s * 1e-12,
                  m.launch_s * 1e6, m.s_per_score_element * 1e12);
    os << line;
  }
  for (const MemoryFit& f : result.memory) {
    std::snprintf(line, sizeof line, "memory %-11s %.1f GB/s, launch %.2f us\n",
                  std::string(to_string(f.model.op)).c_str(), f.model.bw_bytes_per_s * 1e-9,
                  f.model.launch_s * 1e6);
    os << line;
  }
  for (const CollectiveFit& f : result.collectives) {
    os << model_name(f.model) << ":";
    for (const AlphaBetaSegment& s : f.model.segments) {
      // nccl-tests' two figures: the size over the time (algbw) and the bus bandwidth (until
      // 2026-12-06 the algbw alone, unlabelled, which reads as a slow link beside busbw figures).
      std::snprintf(line, sizeof line, " [%lld..%lld B: alpha %.2f us, algbw %.2f GB/s, busbw %.2f GB/s]",
                    static_cast<long long>(s.min_bytes), static_cast<long long>(s.max_bytes),
                    s.alpha_s * 1e6, s.bandwidth_bytes_per_s() * 1e-9,
                    s.bandwidth_bytes_per_s() * bus_bandwidth_factor(f.model.op, f.model.ranks) * 1e-9);
      os << line;
    }
    os << "\n";
  }
  return os.str();
}

}  // namespace clustersim::calib
