// SPDX-License-Identifier: Apache-2.0
#include "calibration/profile_fit.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "calibration/compute_cost.h"
#include "calibration/fit/least_squares.h"
#include "sim/core/error.h"

namespace clustersim::calib {
namespace {

bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::string version(uint32_t v) {
  if (v == 0) return "none";
  return std::to_string(v);
}

// The fastest measured time among the points the fit follows (predicted within the fits' trim
// factor, 2x: a point timed 100x too fast, left out of the fit, would lower the bar 100x);
// infinity with none.
double fastest_followed(const std::vector<FitPoint>& points) {
  const double factor = RelativeFitOptions{}.trim_factor;
  double fastest = std::numeric_limits<double>::infinity();
  for (const FitPoint& pt : points) {
    const double ratio = pt.measured_s > 0 ? pt.predicted_s / pt.measured_s : 0.0;
    if (ratio * factor >= 1 && ratio <= factor) fastest = std::min(fastest, pt.measured_s);
  }
  return fastest;
}

// A fixed cost shows in the data only where it is a fair share of a measured time; under
// kFixedCostShare of the fastest point's it is lost in the slopes' noise (2026-12-06 review: a
// GEMM series without its shapes under 60 MiB fitted a launch cost of 0, 3.3 us with them; an
// all-reduce measured at 512 MiB and 1 GiB alone a latency of 222 us, 12 us measured at 1 KiB).
bool fixed_cost_seen(double fixed_s, const std::vector<FitPoint>& points) {
  const double fastest = fastest_followed(points);
  return fixed_s > 0 && std::isfinite(fastest) && fixed_s >= kFixedCostShare * fastest;
}

const CollectiveFit* nvlink_fit(const CalibrationResult& r) {
  const CollectiveModel* c = r.nvlink_all_reduce();
  for (const CollectiveFit& f : r.collectives) {
    if (&f.model == c) return &f;
  }
  return nullptr;
}

bool launch_seen(const CalibrationResult& r) {
  const GemmFit* g = r.gemm_fit(DType::kBf16);
  return g && fixed_cost_seen(g->model.launch_s, g->points);
}

bool nvlink_latency_seen(const CalibrationResult& r) {
  const CollectiveFit* c = nvlink_fit(r);
  return c && fixed_cost_seen(c->model.segments.front().alpha_s, c->points);
}

// Why a fitted fixed cost is not written, for kept_from_base.
std::string unseen_fixed_cost(const char* what, double fixed_s, const std::vector<FitPoint>& points) {
  const double fastest = fastest_followed(points);
  if (!std::isfinite(fastest)) {
    return std::string("the fit follows none of its points within 2x, so its ") + what + " means nothing";
  }
  return std::string("the fit puts ") + what + " at " + fmt(fixed_s * 1e6) + " us, under " +
         fmt(100 * kFixedCostShare) + "% of the fastest point it follows, " + fmt(fastest * 1e6) +
         " us: the data do not show it; probe smaller sizes";
}

// The FP8 GEMM rate (peak x gemm_max_fp8, FLOP/s) that fits `f`'s points as the profile `p` times
// them: compute_cost.h's gemm_time gives an FP8 GEMM the profile's one tile, inner-loop cost and
// launch (the bf16 fit's, or the base's), so the rate is the only value left to fit:
//   t_i = launch + a_i / rate,   a_i = 2 m n k / gemm_shape_efficiency(m, n, k)
// The least absolute relative error, sum_i |launch + a_i x - t_i| / t_i over x = 1 / rate, is
// reached at the weighted median of (t_i - launch) / a_i with weights a_i / t_i (a one-parameter
// L1 fit). The weights grow with a point's speed, so the points the GEMM fit leaves out as timed
// far too fast (plausible_rates: over twice the 90th percentile of the useful FLOP rates) are left
// out here too (code review, 2026-12-07: one of 30 points timed 30x fast read 19.5x the datasheet
// and refused the probe). Until 2026-12-07 gemm_max_fp8 was the FP8 fit's own
// peak, with its own tile, launch and per-wave cost that the profile does not keep: the H200 probe's
// FP8 table row read 4.2% median while the written profile timed those GEMMs 6.6% off, 7.5% fast
// on average (QA). 0 with no point to fit.
double fp8_rate_as_written(const GemmFit& f, const HardwareProfile& p) {
  const double launch = p.eff.kernel_launch.as_s();
  std::vector<const FitPoint*> shaped;
  std::vector<double> flops, rates;  // useful FLOPs, and FLOP/s as the GEMM fit judges its points
  for (const FitPoint& pt : f.points) {
    if (pt.m <= 0 || pt.n <= 0 || pt.k <= 0 || !(pt.measured_s > 0)) continue;
    shaped.push_back(&pt);
    flops.push_back(2.0 * static_cast<double>(pt.m) * static_cast<double>(pt.n) * static_cast<double>(pt.k));
    rates.push_back(flops.back() / pt.measured_s);
  }
  const std::vector<bool> plausible = plausible_rates(rates);
  std::vector<std::pair<double, double>> ratios;  // (t - launch) / a, weight a / t
  for (size_t i = 0; i < shaped.size(); ++i) {
    if (!plausible[i]) continue;
    const FitPoint& pt = *shaped[i];
    const double a = flops[i] / gemm_shape_efficiency(pt.m, pt.n, pt.k, p);
    ratios.emplace_back((pt.measured_s - launch) / a, a / pt.measured_s);
  }
  if (ratios.empty()) return 0;
  std::sort(ratios.begin(), ratios.end());
  double total = 0;
  for (const auto& r : ratios) total += r.second;
  double seen = 0;
  for (const auto& [x, w] : ratios) {
    seen += w;
    if (seen >= 0.5 * total) return x > 0 ? 1.0 / x : 0.0;
  }
  return 0;
}

}  // namespace

std::string builtin_profile_for_device(const std::string& gpu_model) {
  // The built-ins are SXM parts. A PCIe or NVL card, a Grace Hopper module or a MIG slice has
  // other clocks, power, memory or SM counts under the same chip name, so it is not matched.
  std::string upper = gpu_model;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (const char* other : {"PCIE", "NVL", "GH200", "GB200", "MIG"}) {
    if (contains(upper, other)) return {};
  }
  if (contains(gpu_model, "H200")) return "H200-SXM";
  if (contains(gpu_model, "H800")) return "H800-SXM";
  if (contains(gpu_model, "H100")) return "H100-SXM";
  if (contains(gpu_model, "A100")) return contains(gpu_model, "40GB") ? "A100-SXM4-40GB" : "A100-SXM4-80GB";
  return {};
}

HardwareProfile fitted_profile(const CalibrationResult& r, const HardwareProfile& base, int* models_used) {
  int used = 0;
  HardwareProfile p = base;
  p.origin.clear();
  p.probe_files = r.sources;
  const ProbeHeader& m = r.machine;
  const std::string from = std::string(r.synthetic ? "SYNTHETIC probe data" : "probe") + " " + m.date + " on " +
                           std::to_string(m.gpu_count) + "x " + m.gpu_model + " (driver " + m.driver_version +
                           ", CUDA " + version(m.cuda_runtime_version) + ", NCCL " + version(m.nccl_version) +
                           ", cuBLAS " + version(m.cublas_version) + ")" +
                           // Several files fitted together: the first one's header, and how many more
                           // (named in probe_files; until 2026-12-06 only the first was cited).
                           (r.sources.size() > 1 ? " and " + std::to_string(r.sources.size() - 1) + " more probe file" +
                                                       (r.sources.size() > 2 ? "s" : "") + " (probe_files)"
                                                 : std::string());
  // A fitted profile given as --base describes its own fit: the new one replaces it.
  const std::string base_description = base.description.substr(0, base.description.find("; fitted by clustersim calibrate"));
  p.description = base_description + "; fitted by clustersim calibrate from " + from;
  // Not the built-in's name: results name the profile, and a fitted one gives other numbers. A
  // fitted base's "(fitted DATE)" gives way to this probe's date (since 2026-12-06: it was kept,
  // and a refit from a 2027 probe over a 2026 fit was named after the 2026 one).
  const std::string base_name = base.name.substr(0, base.name.rfind(" (fitted "));
  p.name = base_name + " (fitted " + m.date.substr(0, 10) + ")";
  Efficiencies& e = p.eff;
  // The GEMM fit counts waves over the probe's SMs; a profile with another SM count would time
  // every GEMM with other waves (an H100 PCIe's 114 SMs against H100-SXM's 132: 11% off at the
  // median, 42% at worst, while the fit table showed 0%).
  if (m.sm_count > 0 && base.sm_count > 0 && m.sm_count != base.sm_count) {
    throw BadInput(InputError{r.source_list(), 0, "header.sm_count",
                              "the probed GPU has " + std::to_string(m.sm_count) + " SMs, the base profile " + base.name +
                                  " " + std::to_string(base.sm_count) + ": another part (a PCIe or NVL card, a MIG "
                                  "slice). Write a profile for it ('clustersim profiles " + base.name +
                                  "' prints one to copy; set sm_count and its datasheet peaks) and pass it with --base"});
  }
  // Nor does a base of another memory size describe the probed GPU: its capacity and bandwidth
  // would be written into the profile (an H100's probe over H200-SXM gave an "H200" of 141 GB
  // whose timings were an H100's, 2026-12-06 review). The driver's total and a profile's figure can
  // differ a little; 10% apart is another part.
  if (m.memory_bytes > 0 && base.hbm_capacity.n > 0) {
    if (!same_memory_size(static_cast<double>(m.memory_bytes), base.hbm_capacity.as_double())) {
      // The built-ins of the probed GPU's memory (and SM count), to pass with --base; until
      // 2026-12-07 the message said none had it where H100-SXM and H800-SXM both did (review).
      std::string fits;
      for (const std::string& name : builtin_profile_names()) {
        const HardwareProfile b = load_hardware_profile(name);
        if (!same_memory_size(static_cast<double>(m.memory_bytes), b.hbm_capacity.as_double()) ||
            (m.sm_count > 0 && b.sm_count != m.sm_count)) {
          continue;
        }
        fits += (fits.empty() ? "" : ", ") + name;
      }
      throw BadInput(InputError{r.source_list(), 0, "header.memory_bytes",
                                "the probed GPU (" + m.gpu_model + ") has " + fmt(static_cast<double>(m.memory_bytes) / (1 << 30)) +
                                    " GiB of memory, the base profile " + base.name + " " +
                                    fmt(base.hbm_capacity.as_double() / (1 << 30)) +
                                    " GiB: another GPU. Pass the profile of the GPU probed with --base (" +
                                    (fits.empty() ? std::string("none built in has that memory and SM count: write one, "
                                                                "'clustersim profiles ") +
                                                        base.name + "' prints one to copy; set memory.capacity, sm_count and its datasheet peaks"
                                                  : "built in with that memory and SM count: " + fits) +
                                    ")"});
    }
  }
  // A fitted rate over the base's datasheet rate. Above it by more than measurement noise and
  // boost clocks (5%), or under 1% of it, the probe did not measure this GPU (another model, a
  // wrong --base) or its timings are broken: refused, not clamped into a profile that looks
  // sound. Within the band the measured ratio is written as it is, above 1 too: clamping it to 1
  // left a profile 4% slower than the data its table claimed to fit (1030 TFLOP/s on a 989.4
  // datasheet, 2026-12-05 audit).
  const auto efficiency = [&](double measured, double datasheet, const char* what, const char* unit, double scale) {
    const double x = measured / datasheet;
    if (!(x >= kMinFittedEfficiency && x <= kMaxFittedEfficiency)) {
      throw BadInput(InputError{r.source_list(), 0, "",
                                std::string("the fitted ") + what + ", " + fmt(measured / scale) + " " + unit + ", is " +
                                    fmt(100 * x) + "% of " + base.name + "'s datasheet " + fmt(datasheet / scale) +
                                    " " + unit + "; expected 1% to 105%: the probe measured another GPU (pick the "
                                    "base profile with --base) or its timings are wrong"});
    }
    return x;
  };
  if (const GemmModel* g = r.gemm_model(DType::kBf16)) {
    ++used;
    e.gemm_max = efficiency(g->peak_flops_per_s, base.bf16.per_s, "bf16 GEMM peak", "TFLOP/s", 1e12);
    e.gemm_tile_m = g->tile.m;
    e.gemm_tile_n = g->tile.n;
    // The per-wave cost as an inner-loop length, in the range a profile loads (a wave of 26 s
    // once came out as 4.3e9 and wrapped to a plausible-looking 500001 in the int).
    const double k_half = g->k_half();
    if (!(k_half >= 0 && k_half <= kMaxGemmKHalf)) {
      throw BadInput(InputError{r.source_list(), 0, "",
                                "the fitted GEMM cost per wave, " + fmt(g->wave_overhead_s * 1e6) + " us, is " +
                                    fmt(k_half) + " steps of the inner loop (gemm_k_half); expected 0 to " +
                                    std::to_string(kMaxGemmKHalf) + ": check the probe's GEMM timings"});
    }
    e.gemm_k_half = static_cast<int>(std::lround(k_half));
    if (launch_seen(r)) e.kernel_launch = Time::s(g->launch_s);
    p.sources["efficiency.gemm_max"] = "fitted: " + fmt(g->peak_flops_per_s / 1e12) + " TFLOP/s bf16 GEMM peak, " + from;
    p.sources["efficiency.gemm_tile_m"] = p.sources["efficiency.gemm_tile_n"] =
        "fitted: tile " + std::to_string(g->tile.m) + "x" + std::to_string(g->tile.n) + ", " + from;
    p.sources["efficiency.gemm_k_half"] = "fitted: " + fmt(g->wave_overhead_s * 1e6) + " us per wave, as " +
                                          std::to_string(e.gemm_k_half) +
                                          " steps of the inner loop (that cost x peak / (2 x tile_m x tile_n x SMs)), " + from;
    if (launch_seen(r)) p.sources["efficiency.kernel_launch"] = "fitted GEMM launch cost, " + from;
  }
  // GEMMs of other types: a profile takes its GEMM efficiency from bf16 (the peak of each type is
  // its datasheet's), and FP8's of its own (gemm_max_fp8, written since 2026-12-07); the others
  // are not written, still refused out of range, as broken timings or another GPU. fp32 inputs
  // may run on TF32 tensor cores: the larger of the two peaks.
  for (const GemmFit& f : r.gemm) {
    const DType d = f.model.dtype;
    if (d == DType::kBf16) continue;
    const double datasheet = d == DType::kFp16   ? base.fp16.per_s
                             : d == DType::kFp32 ? std::max(base.fp32.per_s, base.tf32.per_s)
                                                 : base.fp8.per_s;
    const std::string what = std::string(to_string(d)) + " GEMM peak";
    // A base without that type's peak (a custom profile that leaves fp8 out) has nothing to check
    // it against: not written either way. Refused until 2026-12-06, blaming the probe, and the
    // probe measures FP8 on every GPU that has it, so such a base could never be used.
    if (datasheet <= 0) continue;
    (void)efficiency(f.model.peak_flops_per_s, datasheet, what.c_str(), "TFLOP/s", 1e12);  // refuses out of range
    if (d == DType::kFp8E4m3) {
      // Fitted as the profile times FP8 GEMMs (fp8_rate_as_written), range-checked like the fit's.
      const double rate = fp8_rate_as_written(f, p);
      e.gemm_max_fp8 = efficiency(rate, datasheet, "fp8 GEMM rate at the profile's tile and launch", "TFLOP/s", 1e12);
      p.sources["efficiency.gemm_max_fp8"] = "fitted: " + fmt(rate / 1e12) + " TFLOP/s fp8 GEMMs at the profile's " +
                                             std::to_string(e.gemm_tile_m) + "x" + std::to_string(e.gemm_tile_n) +
                                             " tile, gemm_k_half and kernel_launch, " + from;
      ++used;
    }
  }
  // The chain is fitted beside the GEMM fit's launch cost (fit_unfused_chain); where the profile
  // keeps the base's launch cost instead, the chain's values would pair with a launch cost the
  // profile does not have (3 launches of 4 us on a 22 us chain fitted at 0: +54%), so they stay
  // the base's too (since 2026-12-06).
  if (const AttentionModel* a = r.attention_model(Direction::kForward, false); a && launch_seen(r)) {
    ++used;
    e.attention_unfused = efficiency(a->flops_per_s, base.bf16.per_s, "unfused attention rate", "TFLOP/s", 1e12);
    p.sources["efficiency.attention_unfused"] = "fitted: matmul-softmax-matmul chain forward, " + from;
    if (a->score_bytes > 0) {
      // The chain in the simulator's roofline form: its GEMMs at the GEMM fit's peak, or their
      // score-matrix traffic, whichever is longer.
      p.sources["efficiency.attention_unfused"] = "fitted: the chain's GEMMs at the bf16 GEMM peak (" +
                                                  fmt(a->flops_per_s / 1e12) + " TFLOP/s), " + from;
      e.attention_score_bytes = a->score_bytes;
      p.sources["efficiency.attention_score_bytes"] = "fitted: " + fmt(a->score_bytes) +
                                                      " B per score element, matmul-softmax-matmul chain forward, " + from;
      if (const AttentionModel* b = r.attention_model(Direction::kBackward, false); b && b->score_bytes > 0) {
        e.attention_score_bytes_backward = b->score_bytes;
        p.sources["efficiency.attention_score_bytes_backward"] =
            "fitted: " + fmt(b->score_bytes) + " B per score element, matmul-softmax-matmul chain backward, " + from;
      }
    }
  }
  // Fitted beside the GEMM fit's launch cost, as the chain is: written only where the profile
  // takes that launch cost.
  if (const AttentionModel* a = r.attention_model(Direction::kForward, true); a && launch_seen(r)) {
    ++used;
    e.attention_fused = efficiency(a->flops_per_s, base.bf16.per_s, "fused attention rate", "TFLOP/s", 1e12);
    p.sources["efficiency.attention_fused"] = "fitted: fused attention forward, " + from;
  }
  // A bandwidth fitted from sizes the fixed cost dominates is that cost's, not the link's: a
  // probe run with a small --max-bytes fitted 104 GB/s of HBM from 4-16 KiB copies (0.02 of the
  // datasheet, inside the 1% band) and an NVLink bus bandwidth of 0.17 from all-reduces up to
  // 1 MiB, each with fit errors under 1% (2026-12-06 review). The largest size must take at least
  // 9 times the fixed cost at the datasheet rate (the bandwidth then 90% of its time, or more).
  // `counted` is the bytes the bound counts per byte of the probe's size (bus bytes for an
  // all-reduce): the size named is the probe's --max-bytes (in bus bytes until 2026-12-06, 1.75x
  // too small for 8 GPUs).
  const auto bandwidth_bound = [&](const char* series, double bytes, double counted, double datasheet_bytes_per_s,
                                   double fixed_s, const char* unit_words) {
    const double fixed = std::max(fixed_s, 1e-6);
    if (bytes * counted / datasheet_bytes_per_s >= 9 * fixed) return;
    double needed = 1024;
    while (needed * counted / datasheet_bytes_per_s < 9 * fixed) needed *= 2;
    // A size the probe takes, in whole binary units; past the GPU's memory no size would do, and
    // the fixed cost itself is suspect (65536MiB was suggested for a 1 ms copy cost until
    // 2026-12-06, 512 GiB on a 141 GB GPU).
    const std::string size = needed >= double(int64_t{1} << 30) ? fmt(needed / double(int64_t{1} << 30)) + "GiB"
                                                                 : fmt(needed / 1048576) + "MiB";
    const double memory = static_cast<double>(r.machine.memory_bytes);
    const std::string advice =
        // The probe's copy needs twice the size and stops at 0.9 of the free memory.
        memory > 0 && 2 * needed > 0.9 * memory
            ? " No size the GPU holds makes the bandwidth dominate (it would take --max-bytes " + size +
                  "): the fixed cost looks wrong; check the probe's timings of the small sizes"
            : " Run the probe with --max-bytes " + size + " or more (the default is 1GiB)";
    throw BadInput(InputError{r.source_list(), 0, "",
                              std::string("the ") + series + " series reaches " + fmt(bytes * counted / 1048576) +
                                  " MiB" + unit_words + ", which takes " + fmt(bytes * counted / datasheet_bytes_per_s * 1e6) +
                                  " us at " +
                                  base.name + "'s datasheet rate against a fixed cost of " + fmt(fixed * 1e6) +
                                  " us: its fitted bandwidth would be the fixed cost's." + advice});
  };
  if (const MemoryModel* mm = r.memory_model(MemoryOpKind::kCopy)) {
    ++used;
    bandwidth_bound("device copy", static_cast<double>(mm->max_bytes), 1.0, base.hbm_bandwidth.bytes_per_s, mm->launch_s,
                    " (bytes read and written)");
    e.hbm = efficiency(mm->bw_bytes_per_s, base.hbm_bandwidth.bytes_per_s, "device copy bandwidth", "GB/s", 1e9);
    p.sources["efficiency.hbm"] = "fitted: " + fmt(mm->bw_bytes_per_s / 1e9) + " GB/s device copy, " + from;
  }
  // NVLink: the all-reduce on one node over the most GPUs measured, in whichever file (before
  // 2026-12-05 only up to the first file's GPU count, and only NCCL's auto choice).
  if (const CollectiveModel* c = r.nvlink_all_reduce()) {
    ++used;
    bandwidth_bound(model_name(*c).c_str(), static_cast<double>(c->segments.back().max_bytes),
                    bus_bandwidth_factor(c->op, c->ranks), base.nvlink_bandwidth.bytes_per_s,
                    std::max(c->segments.front().alpha_s, c->segments.back().alpha_s), " of bus bytes");
    e.nvlink_busbw = efficiency(c->large_message_busbw_bytes_per_s(), base.nvlink_bandwidth.bytes_per_s,
                                "all-reduce bus bandwidth", "GB/s", 1e9);
    if (nvlink_latency_seen(r)) e.nvlink_collective_latency = Time::s(c->segments.front().alpha_s);
    const std::string on = std::to_string(c->ranks) + " GPUs" +
                           (c->algorithm == "auto" && c->protocol == "auto" ? "" : ", NCCL " + c->algorithm + "/" + c->protocol);
    p.sources["efficiency.nvlink_busbw"] =
        "fitted: all-reduce on " + on + ", " + fmt(c->large_message_busbw_bytes_per_s() / 1e9) + " GB/s busbw, " + from;
    if (nvlink_latency_seen(r)) {
      p.sources["efficiency.nvlink_collective_latency"] = "fitted: all-reduce alpha on " + on + ", " + from;
    }
  }
  if (models_used) *models_used = used;
  return p;
}

// Mirrors fitted_profile's choices: a fit it writes is not listed. Before 2026-12-05 the CLI named
// only the GEMMs of other types and the collectives across nodes; attention of other types,
// elementwise and layernorm kernels and the other collectives were printed in the table alone
// (the synthetic H100 probe: 21 of its 26 fitted models not written, 1 of them named).
std::vector<std::pair<std::string, std::string>> not_written_models(const CalibrationResult& r, const HardwareProfile* base) {
  const bool fp8_written = base == nullptr || base->fp8.per_s > 0;  // as fitted_profile decides
  std::vector<std::pair<std::string, std::string>> out;  // model, why
  const auto add = [&](const std::string& model, const std::string& reason) { out.emplace_back(model, reason); };
  for (const GemmFit& f : r.gemm) {
    // FP8's is written (gemm_max_fp8, since 2026-12-07) where the base has an fp8 peak, so gated
    // like bf16's; over a base without one it is not (code review).
    if (f.model.dtype == DType::kBf16 || (f.model.dtype == DType::kFp8E4m3 && fp8_written)) continue;
    if (f.model.dtype == DType::kFp8E4m3) {
      add("gemm " + std::string(to_string(f.model.dtype)), "the base profile has no fp8 peak to take gemm_max_fp8 against");
      continue;
    }
    add("gemm " + std::string(to_string(f.model.dtype)),
        "a profile's GEMM efficiency comes from the bf16 fit (fp8's from its own); the other types' peaks are their "
        "datasheet's");
  }
  const AttentionModel* chain_fwd = r.attention_model(Direction::kForward, false);
  for (const AttentionFit& f : r.attention) {
    const AttentionModel& a = f.model;
    if (a.dtype == DType::kBf16 && !launch_seen(r) && (!a.fused || a.direction == Direction::kForward)) {
      add(model_name(a), std::string(a.fused ? "the fused kernel" : "the unfused chain") +
                             " is fitted beside the GEMM launch cost, which the data do not show and the profile "
                             "keeps from the base (see kept from the base profile)");
    } else if (a.dtype != DType::kBf16) {
      add(model_name(a), "a profile's attention efficiencies come from the bf16 fits; the other types run at them "
                         "against their datasheet peak");
    } else if (a.direction == Direction::kBackward && a.fused) {
      add(model_name(a), "a profile's fused attention efficiency comes from the forward fit; the backward pass runs "
                         "at it over 2.5x the forward's FLOPs");
    } else if (a.direction == Direction::kBackward && !(chain_fwd && chain_fwd->score_bytes > 0 && a.score_bytes > 0)) {
      add(model_name(a), "the backward chain's score traffic is written only beside a forward chain fitted with its "
                         "score traffic");
    }
  }
  for (const MemoryFit& f : r.memory) {
    if (f.model.op == MemoryOpKind::kCopy) continue;
    add("memory " + std::string(to_string(f.model.op)),
        "a profile's HBM efficiency comes from the copy fit; every memory-bound kernel is timed at it");
  }
  const CollectiveModel* nvlink = r.nvlink_all_reduce();
  for (const CollectiveFit& f : r.collectives) {
    const CollectiveModel& c = f.model;
    if (&c == nvlink) continue;
    if (c.nodes > 1) {
      add(model_name(c), "a profile's collective values are NVLink's, from one node; network_busbw and "
                         "network_collective_latency stay the base's");
    } else if (c.ranks < 2) {
      add(model_name(c), "one rank moves nothing between GPUs");
    } else if (nvlink) {
      add(model_name(c), "a profile's NVLink values come from one all-reduce, " + model_name(*nvlink) +
                             ", the widest on one node; every collective is timed from them");
    } else {
      add(model_name(c), "a profile's NVLink values come from an all-reduce on one node over 2 or more GPUs, and "
                         "none was fitted");
    }
  }
  return out;
}

std::vector<std::string> fitted_not_written(const CalibrationResult& r, const HardwareProfile* base) {
  std::vector<std::pair<std::string, std::vector<std::string>>> by_reason;  // in the order met
  for (const auto& [model, reason] : not_written_models(r, base)) {
    auto it = std::find_if(by_reason.begin(), by_reason.end(), [&](const auto& e) { return e.first == reason; });
    if (it == by_reason.end()) it = by_reason.insert(by_reason.end(), {reason, {}});
    it->second.push_back(model);
  }
  std::vector<std::string> out;
  for (const auto& [reason, models] : by_reason) {
    std::string line;
    for (const std::string& m : models) line += (line.empty() ? "" : ", ") + m;
    out.push_back(line + " (" + reason + ")");
  }
  return out;
}

std::vector<FitErrorRow> as_written_errors(const CalibrationResult& r, const HardwareProfile& p) {
  std::vector<FitErrorRow> rows;
  const auto row = [&](const std::string& model, const std::vector<FitPoint>& fitted, auto&& predict) {
    std::vector<FitPoint> points = fitted;
    for (FitPoint& pt : points) pt.predicted_s = predict(static_cast<double>(pt.bytes));
    rows.push_back({model + " as written", fit_error(points)});
  };
  for (const MemoryFit& f : r.memory) {
    if (f.model.op != MemoryOpKind::kCopy || p.eff.hbm <= 0) continue;
    const double bw = p.eff.hbm * p.hbm_bandwidth.bytes_per_s;
    row("memory copy", f.points, [&](double bytes) { return p.eff.kernel_launch.as_s() + bytes / bw; });
  }
  // FP8 GEMMs at the profile's tile, inner-loop cost and launch: gated like the fits, since
  // gemm_max_fp8 is fitted to these very points (fp8_rate_as_written).
  if (const GemmFit* f = r.gemm_fit(DType::kFp8E4m3); f && p.eff.gemm_max_fp8 > 0 && p.fp8.per_s > 0) {
    std::vector<FitPoint> points = f->points;
    for (FitPoint& pt : points) pt.predicted_s = gemm_time(pt.m, pt.n, pt.k, Precision::kFp8, p).as_s();
    rows.push_back({"gemm fp8_e4m3 as written", fit_error(points), true});
  }
  if (const CollectiveModel* c = r.nvlink_all_reduce(); c && p.eff.nvlink_busbw > 0) {
    const double busbw = p.eff.nvlink_busbw * p.nvlink_bandwidth.bytes_per_s;
    const double factor = bus_bandwidth_factor(c->op, c->ranks);
    for (const CollectiveFit& f : r.collectives) {
      if (&f.model != c) continue;
      row(model_name(*c), f.points,
          [&](double bytes) { return p.eff.nvlink_collective_latency.as_s() + factor * bytes / busbw; });
    }
  }
  return rows;
}

std::vector<std::string> kept_from_base(const CalibrationResult& r, const HardwareProfile* base) {
  std::vector<std::string> out;
  if (!r.gemm_model(DType::kBf16)) {
    out.push_back("gemm_max, gemm_tile_m, gemm_tile_n, gemm_k_half, kernel_launch (no bf16 GEMM series fitted)");
  } else if (!launch_seen(r)) {
    const GemmFit* g = r.gemm_fit(DType::kBf16);
    out.push_back("kernel_launch (" + unseen_fixed_cost("the bf16 GEMMs' launch cost", g->model.launch_s, g->points) +
                  ", or GEMMs under 60 MiB)");
  }
  if (!r.attention_model(Direction::kForward, false)) {
    out.push_back("attention_unfused (no bf16 unfused attention chain fitted)");
  } else if (!launch_seen(r)) {
    out.push_back("attention_unfused, attention_score_bytes, attention_score_bytes_backward (the chain was fitted "
                  "beside the GEMM launch cost the profile does not take)");
  }
  if (!r.attention_model(Direction::kForward, true)) {
    out.push_back("attention_fused (no bf16 fused attention forward fitted)");
  } else if (!launch_seen(r)) {
    out.push_back("attention_fused (the fused kernel was fitted beside the GEMM launch cost the profile does not take)");
  }
  // (Not for a base without FP8, an A100's: nothing to keep; code review.)
  if (!r.gemm_model(DType::kFp8E4m3) && (base == nullptr || base->fp8.per_s > 0)) {
    out.push_back("gemm_max_fp8 (no fp8 GEMM series fitted)");
  }
  if (!r.memory_model(MemoryOpKind::kCopy)) out.push_back("hbm (no device copy series fitted)");
  if (!r.nvlink_all_reduce()) {
    out.push_back("nvlink_busbw, nvlink_collective_latency (no all-reduce on one node over 2 or more GPUs fitted)");
  } else if (!nvlink_latency_seen(r)) {
    const CollectiveFit* c = nvlink_fit(r);
    out.push_back("nvlink_collective_latency (" +
                  unseen_fixed_cost(("the " + model_name(c->model) + " latency").c_str(),
                                    c->model.segments.front().alpha_s, c->points) +
                  ", down to a few KiB)");
  }
  return out;
}

}  // namespace clustersim::calib
