// SPDX-License-Identifier: Apache-2.0
#include "calibration/hardware_profile.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "calibration/builtin_profiles.h"
#include "sim/core/error.h"
#include "sim/core/map_reader.h"
#include "sim/core/unit_parse.h"
#include "sim/core/text_file.h"
#include "sim/core/yaml_tree.h"

namespace clustersim::calib {
namespace {

// Shortest text that reads back as the same double.
std::string num(double v) {
  char buf[64];
  for (int precision = 6; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

// A YAML double-quoted scalar that reads back as `s`: control characters escaped (since
// 2026-12-06; a name with one, which the loader takes, was written raw and the written profile
// refused, and a newline in a description read back as a space).
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7f) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\x%02x", u);
      out += esc;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

void read_efficiencies(MapReader r, Efficiencies& e, bool fp8_peak) {
  // Every key is required: a default would change the predictions without a word. A complete
  // profile to copy: `clustersim profiles H100-SXM`.
  const Need need = Need::kRequired;
  r.read("gemm_max", e.gemm_max, need, kMinFittedEfficiency, kMaxFittedEfficiency);
  // Optional (added 2026-12-07): absent, FP8 GEMMs take gemm_max (docs/profiles.md).
  // A fraction of peak.fp8: without it nothing would use it (accepted silently until 2026-12-07, QA).
  if (r.read("gemm_max_fp8", e.gemm_max_fp8, Need::kOptional, kMinFittedEfficiency, kMaxFittedEfficiency) && !fp8_peak) {
    r.error("gemm_max_fp8", "is a fraction of peak.fp8, which this profile does not give (a GPU without FP8, as the "
                            "A100): give peak.fp8 or leave gemm_max_fp8 out");
  }
  r.read("gemm_tile_m", e.gemm_tile_m, need, 1, 4096);
  r.read("gemm_tile_n", e.gemm_tile_n, need, 1, 4096);
  r.read("gemm_k_half", e.gemm_k_half, need, 0, kMaxGemmKHalf);
  r.read("kernel_launch", e.kernel_launch, need);
  r.read("attention_fused", e.attention_fused, need, kMinFittedEfficiency, kMaxFittedEfficiency);
  r.read("attention_unfused", e.attention_unfused, need, kMinFittedEfficiency, kMaxFittedEfficiency);
  // Optional (added 2026-12-04; absent in older profiles): 0 keeps the FLOP-only chain.
  r.read("attention_score_bytes", e.attention_score_bytes, Need::kOptional, 0.0, 256.0);
  r.read("attention_score_bytes_backward", e.attention_score_bytes_backward, Need::kOptional, 0.0, 256.0);
  r.read("hbm", e.hbm, need, kMinFittedEfficiency, kMaxFittedEfficiency);
  r.read("nvlink_busbw", e.nvlink_busbw, need, kMinFittedEfficiency, kMaxFittedEfficiency);
  r.read("network_busbw", e.network_busbw, need, kMinFittedEfficiency, kMaxFittedEfficiency);
  r.read("nvlink_collective_latency", e.nvlink_collective_latency, need);
  r.read("network_collective_latency", e.network_collective_latency, need);
  const Time limit = kMaxFixedCost;
  for (const auto& [key, t] : {std::pair{"kernel_launch", e.kernel_launch},
                               std::pair{"nvlink_collective_latency", e.nvlink_collective_latency},
                               std::pair{"network_collective_latency", e.network_collective_latency}}) {
    if (t < Time::zero() || t > limit) r.error(key, "expected a time in [0, 1ms] (microseconds on real GPUs), got " + to_string(t));
  }
  r.finish();
}

// What a YAML mapping that is not a GPU profile is instead, as the rest of a sentence ("is a
// scenario (it has 'cluster' and 'model'), not a GPU profile"), or "" when it may be one. A
// scenario given as cluster.gpu was read key by key into 25 lines of "required key is missing"
// and "unknown key" until 2026-12-05; as scenario.cc does for a sweep file or a suite given as a
// scenario, one message now says what the file is.
std::string what_else(const YamlNode& root) {
  if (root.find("axes")) return "is a sweep file (it has 'axes'), not a GPU profile";
  if (root.find("cases")) return "is a validation suite (it has 'cases'), not a GPU profile";
  std::vector<std::string> sections;
  for (const char* key : {"cluster", "network", "model", "parallelism", "training", "inference", "traffic"}) {
    if (root.find(key)) sections.push_back(std::string("'") + key + "'");
  }
  if (!sections.empty()) return "is a scenario (it has " + joined_words(sections) + "), not a GPU profile";
  for (const char* key : {"peak", "memory", "nvlink", "sm_count", "efficiency"}) {
    if (root.find(key)) return "";
  }
  return "is not a GPU profile (it has none of 'peak', 'memory', 'nvlink', 'sm_count' and 'efficiency')";
}

}  // namespace

FlopRate HardwareProfile::peak(Precision p) const {
  const FlopRate r = p == Precision::kBf16 ? bf16 : p == Precision::kFp16 ? fp16 : fp8;
  if (r.per_s <= 0) {
    // The scenario's choice is what to change (the caller adds its file and line).
    throw BadInput(InputError{"", 0, "training.precision",
                              std::string(to_string(p)) + ": the " + name + " profile (" + origin + ") has no peak." +
                                  to_string(p) + " rate: this GPU does not support training in that precision"});
  }
  return r;
}

std::vector<std::string> builtin_profile_names() {
  std::vector<std::string> names;
  for (const BuiltinProfile& b : builtin_profiles()) names.emplace_back(b.name);
  return names;
}

std::string builtin_profile_names_text() {
  std::string names;
  for (const std::string& n : builtin_profile_names()) names += (names.empty() ? "" : ", ") + n;
  return names;
}

std::string builtin_profile_suggestion(const std::string& name) {
  // Compared without letter case or punctuation ("h100 sxm", "H100_SXM"), then with the part of a
  // name before its first '-' ("H100", "a100": the profiles so named; not "H20" for H200-SXM, a
  // different GPU; since 2026-12-06, before by letter case alone).
  const auto key = [](const std::string& s) {
    std::string k;
    for (const char c : ascii_lower(s)) {
      if (std::isalnum(static_cast<unsigned char>(c))) k += c;
    }
    return k;
  };
  const std::string want = key(name);
  if (want.empty()) return "";
  std::vector<std::string> starts;
  for (const std::string& n : builtin_profile_names()) {
    if (key(n) == want) return "; did you mean '" + n + "'?";
    if (key(n.substr(0, n.find('-'))) == want) starts.push_back("'" + n + "'");
  }
  return starts.empty() ? "" : "; did you mean " + joined_words(starts, " or ") + "?";
}

std::string builtin_profile_text(const std::string& name) {
  for (const BuiltinProfile& b : builtin_profiles()) {
    if (name == b.name) return std::string(b.text);
  }
  return {};
}

namespace {

void add_plausibility_notes(HardwareProfile& p) {
  // Ratios every data-center GPU since the V100 keeps within a few times of each other: far off
  // them, a value is most likely in the wrong unit (bits for bytes, GFLOPS for TFLOPS) or has a
  // digit too many; each slip ran silently until 2026-12-07 (QA: memory.bandwidth 8000Gbps for a
  // B200's 8 TB/s, 8x slow; sm_count 14800 for 148, 9x slow).
  char buf[320];
  const double bf16 = p.bf16.per_s;
  const double hbm = p.hbm_bandwidth.bytes_per_s;
  // FLOPs per HBM byte: A100 153, H100 295, H200 206, B200 281, MI300X 246 (bits for bytes puts
  // an A100 at 1,224).
  const bool flop_per_byte_off = bf16 > 0 && hbm > 0 && (bf16 / hbm < 20 || bf16 / hbm > 800);
  if (flop_per_byte_off) {
    std::snprintf(buf, sizeof buf,
                  "peak.bf16 / memory.bandwidth is %.3g FLOP per byte, where data-center GPUs have 100 to 500 "
                  "(H100 295, B200 281): check both units (GBps is bytes a second, Gbps bits)",
                  bf16 / hbm);
    p.notes.push_back(buf);
  }
  // BF16 per SM (or compute unit): A100 2.9, H100 7.5, B200 15.2, MI300X 4.3 TFLOPS (an SM count
  // 10x puts an A100 at 0.29).
  if (bf16 > 0 && p.sm_count > 0 && (bf16 / p.sm_count < 1e12 || bf16 / p.sm_count > 1e14)) {
    std::snprintf(buf, sizeof buf,
                  "peak.bf16 / sm_count is %.3g TFLOPS per SM, where tensor-core GPUs have 1.5 to 20 (H100 7.5 over "
                  "132 SMs, B200 15.2 over 148): check sm_count",
                  bf16 / p.sm_count / 1e12);
    p.notes.push_back(buf);
  }
  // NVLink per direction against HBM: the built-in profiles 0.06 (H800) to 0.19 (A100 40GB), B200
  // 0.11. Not where the HBM figure itself is off (the NVLink then reads wrong by its fault).
  const double nvl = p.nvlink_bandwidth.bytes_per_s;
  if (!flop_per_byte_off && nvl > 0 && hbm > 0 && nvl / hbm > 0.2) {
    std::snprintf(buf, sizeof buf,
                  "nvlink.bandwidth is %.2g of memory.bandwidth, where the built-in profiles have 0.06 to 0.19: it "
                  "is each GPU's bandwidth one way (H100 450GBps, B200 900GBps), half the bidirectional figure "
                  "datasheets give",
                  nvl / hbm);
    p.notes.push_back(buf);
  }
}

HardwareProfile profile_from_tree(const YamlNode& root, const std::string& origin) {
  if (!root.is_map()) {
    throw BadInput(InputError{origin, 0, "", "not a hardware profile: expected a YAML mapping with name, peak, "
                                             "memory, nvlink and sm_count (see calibration/profiles/*.yaml)"});
  }
  if (const std::string what = what_else(root); !what.empty()) {
    throw BadInput(InputError{origin, 0, "", "this " + what + ": a profile has name, peak, memory, nvlink, sm_count and "
                                             "efficiency (clustersim profiles H100-SXM prints one to copy)"});
  }
  ErrorList errors;
  HardwareProfile p;
  p.origin = origin;
  MapReader top(&root, "", errors);
  // '' passed, and runs on the profile printed an empty GPU name (until 2026-12-05).
  top.read_text("name", p.name, "the GPU's name (e.g. H100-SXM)", Need::kRequired);
  top.read("description", p.description);
  MapReader peak = top.section("peak");
  const bool bf16_read = peak.read("bf16", p.bf16, Need::kRequired);
  const bool fp16_read = peak.read("fp16", p.fp16, Need::kRequired);
  const bool fp8_read = peak.read("fp8", p.fp8);
  const bool tf32_read = peak.read("tf32", p.tf32);
  const bool fp32_read = peak.read("fp32", p.fp32, Need::kRequired);
  peak.finish();
  MapReader mem = top.section("memory");
  const bool capacity_read = mem.read("capacity", p.hbm_capacity, Need::kRequired);
  mem.read("bandwidth", p.hbm_bandwidth, Need::kRequired);
  mem.read("reserved", p.memory_reserved);
  mem.finish();
  MapReader nvl = top.section("nvlink");
  nvl.read("bandwidth", p.nvlink_bandwidth, Need::kRequired);
  nvl.finish();
  top.read("sm_count", p.sm_count, Need::kRequired, 1, 100000);
  if (!top.has("efficiency")) top.error("efficiency", "required section is missing (copy it from `clustersim profiles H100-SXM`)");
  // An fp8 peak that is given but fails to read has its own error: not a second on gemm_max_fp8.
  read_efficiencies(top.section("efficiency"), p.eff, (fp8_read && p.fp8.per_s > 0) || (peak.has("fp8") && !fp8_read));
  if (const YamlNode* src = top.child("sources"); src && !src->is_null()) {
    if (!src->is_map()) {
      top.error("sources", "expected a mapping of key path -> source text");
    } else {
      for (const auto& [k, v] : src->map) {
        // A list or mapping read as '' until 2026-12-05.
        if (!v.is_scalar()) {
          errors.add(InputError{v.file, v.line, "sources." + k, "expected the source as text"});
          continue;
        }
        p.sources[k] = v.scalar;
      }
    }
  }
  if (const YamlNode* probes = top.child("probe_files"); probes && !probes->is_null()) {
    if (!probes->is_seq()) {
      top.error("probe_files", "expected a list of the probe files the profile was fitted to");
    } else {
      for (size_t i = 0; i < probes->seq.size(); ++i) {
        const YamlNode& f = probes->seq[i];
        if (!f.is_scalar() || f.scalar.empty()) {
          errors.add(InputError{f.file, f.line, "probe_files[" + std::to_string(i) + "]", "expected a probe file's name"});
          continue;
        }
        p.probe_files.push_back(f.scalar);
      }
    }
  }
  top.finish();
  // Checked whatever else is wrong, on the values that were read (a key that failed to read has
  // its error already).
  if (bf16_read && p.bf16.per_s <= 0) peak.error("bf16", "must be above zero");
  // A GPU's dense peak lies far inside 1 GFLOPS to 100 PFLOPS (B200: 4.5 PFLOPS fp8): outside it
  // the unit is wrong (TFLOPS for FLOPS) and every time would be off by orders of magnitude.
  const std::pair<const char*, std::pair<bool, FlopRate>> rates[] = {{"bf16", {bf16_read, p.bf16}},
                                                                     {"fp16", {fp16_read, p.fp16}},
                                                                     {"fp8", {fp8_read, p.fp8}},
                                                                     {"tf32", {tf32_read, p.tf32}},
                                                                     {"fp32", {fp32_read, p.fp32}}};
  for (const auto& [key, read_rate] : rates) {
    const auto& [was_read, rate] = read_rate;
    if (was_read && rate.per_s > 0 && (rate.per_s < 1e9 || rate.per_s > 1e17)) {
      peak.error(key, "expected 1GFLOPS to 100PFLOPS (a GPU's dense peak); got " + to_string(rate));
    }
  }
  // The peaks keep their order on every GPU that has them: FP8 tensor cores run at least the BF16
  // rate (2x on Hopper and Blackwell), TF32 and FP32 below it. A dropped digit otherwise ran (fp8
  // at 450 TFLOPS beside bf16's 2,250: FP8 3.9x slower at a higher MFU, until 2026-12-07; QA).
  if (bf16_read && p.bf16.per_s >= 1e9 && p.bf16.per_s <= 1e17) {  // a bf16 out of range has its error
    const auto order = [&](const char* key, bool was_read, FlopRate rate, bool at_least) {
      // A rate out of range has its error already (review: two errors on one key).
      if (!was_read || rate.per_s < 1e9 || rate.per_s > 1e17) return;
      if (at_least ? rate.per_s >= p.bf16.per_s : rate.per_s <= p.bf16.per_s) return;
      peak.error(key, std::string(at_least ? "is below" : "is above") + " peak.bf16 (" + to_string(p.bf16) + "); got " +
                          to_string(rate) + ": " +
                          (at_least ? "FP8 tensor cores run at least the BF16 rate (2x on Hopper and Blackwell)"
                                    : "TF32 and FP32 run below the BF16 rate (H100: 495 and 67 against 989 TFLOPS)") +
                          "; check the digits and the unit");
    };
    order("fp8", fp8_read, p.fp8, true);
    order("tf32", tf32_read, p.tf32, false);
    order("fp32", fp32_read, p.fp32, false);
  }
  // A GPU's memory, not a node's or a cluster's: 80TiB for 80GiB read as 81,917 GiB usable until
  // 2026-12-07 (QA), where the peaks already had such a guard.
  constexpr double kMaxGpuMemory = 4.0 * (int64_t{1} << 40);
  if (capacity_read && p.hbm_capacity.n <= 0) {
    mem.error("capacity", "must be above zero");
  } else if (capacity_read && p.hbm_capacity.as_double() > kMaxGpuMemory) {
    mem.error("capacity", "expected at most 4TiB (one GPU's memory: an H200 has 141GB); got " + to_string(p.hbm_capacity));
  } else if (capacity_read && p.memory_reserved.n >= p.hbm_capacity.n) {
    mem.error("reserved", "must be below memory.capacity (" + to_string(p.hbm_capacity) + "); got " +
                              to_string(p.memory_reserved));
  }
  errors.throw_if_any();
  add_plausibility_notes(p);
  return p;
}

}  // namespace

HardwareProfile parse_hardware_profile(const std::string& text, const std::string& origin) {
  return profile_from_tree(parse_yaml_text(text, origin), origin);
}

std::string profile_file_path(const std::string& name_or_path, const std::string& base_dir) {
  if (name_or_path.empty() || !builtin_profile_text(name_or_path).empty()) return "";
  std::filesystem::path path(name_or_path);
  // Beside the file that names it, as the docs say (until 2026-12-06 a file of that name in the
  // working directory came first: one scenario gave another GPU's figures by where it ran).
  if (path.is_relative() && !base_dir.empty()) path = std::filesystem::path(base_dir) / path;
  return path.string();
}

HardwareProfile load_hardware_profile(const std::string& name_or_path, const std::string& base_dir) {
  if (const std::string text = builtin_profile_text(name_or_path); !text.empty()) {
    HardwareProfile p = parse_hardware_profile(text, "built-in profile " + name_or_path);
    p.origin = "built-in";
    return p;
  }
  const std::filesystem::path path(profile_file_path(name_or_path, base_dir));
  // The error_code overload: a path the system cannot look up (a symbolic link loop, a name over
  // 255 bytes) threw std::filesystem_error, an internal error, until 2026-12-05.
  std::error_code ec;
  const std::filesystem::file_type type =
      name_or_path.empty() ? std::filesystem::file_type::none : std::filesystem::status(path, ec).type();
  if (name_or_path.empty() || type == std::filesystem::file_type::directory) {
    throw BadInput(InputError{"", 0, "cluster.gpu",
                              name_or_path.empty() ? "is empty; expected a built-in profile name (clustersim profiles "
                                                     "lists them) or a profile file"
                                                   : "'" + name_or_path + "' is a directory; expected a built-in profile "
                                                     "name or a profile file"});
  }
  if (path.extension() == ".pb") {
    throw BadInput(InputError{"", 0, "cluster.gpu",
                              "'" + name_or_path + "' is a probe file; fit a profile from it first (clustersim calibrate " +
                                  name_or_path + " -o PROFILE.yaml) and name that"});
  }
  if (type == std::filesystem::file_type::not_found) {
    std::string where;
    if (path.string() != name_or_path) {
      where = " (looked for " + path.string() + ": a relative path is read beside the scenario file";
      std::error_code cwd_ec;
      if (std::filesystem::is_regular_file(name_or_path, cwd_ec)) {
        where += "; the working directory has a file of that name: give its full path";
      }
      where += ")";
    }
    throw BadInput(InputError{"", 0, "cluster.gpu",
                              "'" + name_or_path + "' is neither a built-in profile (" + builtin_profile_names_text() +
                                  ") nor a profile file" + where + builtin_profile_suggestion(name_or_path)});
  }
  if (ec) throw BadInput(InputError{"", 0, "cluster.gpu", "'" + name_or_path + "' cannot be read (" + ec.message() + ")"});
  const YamlNode root =
      parse_yaml_text(read_text_file(path.string(), kMaxYamlBytes, "a hardware profile (YAML)"), path.string());
  // Said of the referring key (the caller adds the scenario's file and line), as a misspelt name is.
  if (const std::string what = root.is_map() ? what_else(root) : ""; !what.empty()) {
    const std::string shown = path.string() == name_or_path ? "'" + name_or_path + "'"
                                                           : "'" + name_or_path + "' (" + path.string() + ")";
    throw BadInput(InputError{"", 0, "cluster.gpu",
                              shown + " " + what + ": name a built-in profile (" + builtin_profile_names_text() +
                                  ") or a profile file (clustersim profiles H100-SXM prints one to copy)"});
  }
  HardwareProfile p = profile_from_tree(root, path.string());
  // A copied and edited profile that kept a built-in name prints as that GPU in every result (QA
  // 2026-12-07); a file of the built-in's own values (calibration/profiles/, a copy) is that GPU.
  if (const std::string builtin = builtin_profile_text(p.name);
      !builtin.empty() && format_hardware_profile(p) != format_hardware_profile(parse_hardware_profile(builtin, p.name))) {
    p.notes.push_back("its name, " + p.name + ", is a built-in profile's: results print it as that GPU; give the file "
                      "its own name");
  }
  return p;
}

std::string format_hardware_profile(const HardwareProfile& p) {
  std::ostringstream o;
  // Scaled units when they read back exactly, else the base unit (so the file round-trips).
  // The fewest digits of the scaled value that read back as the value: 1978.9TFLOPS, whose
  // quotient by 1e12 prints as 1978.9000000000001 (until 2026-12-07 written 1.9789e+15FLOPS).
  auto scaled = [](double value, double scale, const char* unit, auto parse, auto get) -> std::optional<std::string> {
    char buf[64];
    for (int precision = 6; precision <= 17; ++precision) {
      std::snprintf(buf, sizeof buf, "%.*g%s", precision, value / scale, unit);
      const auto back = parse(buf);
      if (back && get(*back) == value) return std::string(buf);
    }
    return std::nullopt;
  };
  auto rate = [&](FlopRate r) {
    return scaled(r.per_s, 1e12, "TFLOPS", parse_flop_rate, [](FlopRate x) { return x.per_s; })
        .value_or(num(r.per_s) + "FLOPS");
  };
  auto bw = [&](Bandwidth b) {
    return scaled(b.bytes_per_s, 1e9, "GBps", parse_bandwidth, [](Bandwidth x) { return x.bytes_per_s; })
        .value_or(num(b.bytes_per_s) + "Bps");
  };
  // Microseconds, with as many decimals as the picoseconds need (3.936682us, 8us), where they read
  // back exactly (until 2026-12-07 always picoseconds: kernel_launch: 3936682ps).
  auto time = [](Time t) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.6f", static_cast<double>(t.as_ps()) / 1e6);
    std::string us = buf;
    us.erase(us.find_last_not_of('0') + 1);
    if (us.back() == '.') us.pop_back();
    us += "us";
    const auto back = parse_time(us);
    return back && back->as_ps() == t.as_ps() ? us : std::to_string(t.as_ps()) + "ps";
  };
  auto bytes = [](Bytes b) {
    if (b.n % (int64_t{1} << 30) == 0) return std::to_string(b.n >> 30) + "GiB";
    if (b.n % (int64_t{1} << 20) == 0) return std::to_string(b.n >> 20) + "MiB";  // H200's 143771MiB
    return std::to_string(b.n) + "B";
  };
  o << "# clustersim hardware profile. Units are written out; docs/profiles.md describes every key.\n";
  o << "name: " << quoted(p.name) << "\n";
  if (!p.description.empty()) o << "description: " << quoted(p.description) << "\n";
  o << "peak:\n  bf16: " << rate(p.bf16) << "\n  fp16: " << rate(p.fp16) << "\n";
  if (p.fp8.per_s > 0) o << "  fp8: " << rate(p.fp8) << "\n";
  if (p.tf32.per_s > 0) o << "  tf32: " << rate(p.tf32) << "\n";
  o << "  fp32: " << rate(p.fp32) << "\n";
  o << "memory:\n  capacity: " << bytes(p.hbm_capacity) << "\n  bandwidth: " << bw(p.hbm_bandwidth)
    << "\n  reserved: " << bytes(p.memory_reserved) << "\n";
  o << "nvlink:\n  bandwidth: " << bw(p.nvlink_bandwidth) << "\n";
  o << "sm_count: " << p.sm_count << "\n";
  const Efficiencies& e = p.eff;
  o << "efficiency:\n"
    << "  gemm_max: " << num(e.gemm_max) << "\n";
  if (e.gemm_max_fp8 > 0) o << "  gemm_max_fp8: " << num(e.gemm_max_fp8) << "\n";
  o << "  gemm_tile_m: " << e.gemm_tile_m << "\n"
    << "  gemm_tile_n: " << e.gemm_tile_n << "\n"
    << "  gemm_k_half: " << e.gemm_k_half << "\n"
    << "  kernel_launch: " << time(e.kernel_launch) << "\n"
    << "  attention_fused: " << num(e.attention_fused) << "\n"
    << "  attention_unfused: " << num(e.attention_unfused) << "\n";
  if (e.attention_score_bytes > 0 || e.attention_score_bytes_backward > 0) {
    o << "  attention_score_bytes: " << num(e.attention_score_bytes) << "\n"
      << "  attention_score_bytes_backward: " << num(e.attention_score_bytes_backward) << "\n";
  }
  o << "  hbm: " << num(e.hbm) << "\n"
    << "  nvlink_busbw: " << num(e.nvlink_busbw) << "\n"
    << "  network_busbw: " << num(e.network_busbw) << "\n"
    << "  nvlink_collective_latency: " << time(e.nvlink_collective_latency) << "\n"
    << "  network_collective_latency: " << time(e.network_collective_latency) << "\n";
  if (!p.probe_files.empty()) {
    o << "probe_files:\n";
    for (const std::string& f : p.probe_files) o << "  - " << quoted(f) << "\n";
  }
  if (!p.sources.empty()) {
    o << "sources:\n";
    for (const auto& [k, v] : p.sources) o << "  " << k << ": " << quoted(v) << "\n";
  }
  return o.str();
}

}  // namespace clustersim::calib
