// SPDX-License-Identifier: Apache-2.0
// Encodes probe records with WireWriter (field numbers from calibration/probe_data.proto).
#include "kernels_probe/probe_record.h"

#include <algorithm>
#include <cassert>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "kernels_probe/probe_wire.h"

namespace clustersim::kernels_probe {
namespace {

constexpr const char* kFormat = "clustersim-probe";
constexpr uint32_t kVersion = 1;

double percentile(const std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

WireWriter encode_header(const Header& h) {
  WireWriter w;
  w.string(1, h.gpu_model);
  w.uint(2, h.gpu_count);
  w.string(3, h.driver_version);
  w.uint(4, h.cuda_driver_version);
  w.uint(5, h.cuda_runtime_version);
  w.uint(6, h.nccl_version);
  w.uint(7, h.cublas_version);
  w.uint(8, h.sm_count);
  w.uint(9, h.compute_capability);
  w.uint(10, h.sm_clock_mhz);
  w.uint(11, h.memory_clock_mhz);
  w.uint(12, h.memory_bus_width_bits);
  w.uint(13, h.memory_bytes);
  w.uint(14, h.l2_cache_bytes);
  w.string(15, h.date);
  w.string(16, h.host);
  w.string(17, h.probe_version);
  w.string(18, h.command_line);
  // 19 (synthetic) stays false: the probe measures.
  w.string(20, h.notes);
  return w;
}

WireWriter encode_timing(const TimingStats& t) {
  WireWriter w;
  w.float64(1, t.median_s);
  w.float64(2, t.min_s);
  w.float64(3, t.max_s);
  w.float64(4, t.p10_s);
  w.float64(5, t.p90_s);
  w.float64(6, t.stddev_s);
  w.uint(7, t.repetitions);
  w.uint(8, t.warmup);
  w.uint(9, t.launches_per_sample);
  return w;
}

WireWriter encode_record(const Record& r) {
  WireWriter w;
  w.uint(1, static_cast<uint32_t>(r.kind));
  WireWriter shape;
  switch (r.kind) {
    case Kind::kGemm:
      shape.uint(1, r.gemm.m);
      shape.uint(2, r.gemm.n);
      shape.uint(3, r.gemm.k);
      shape.uint(4, static_cast<uint32_t>(r.gemm.dtype));
      shape.string(5, r.gemm.label);
      w.message(2, shape);
      break;
    case Kind::kAttention:
      shape.uint(1, r.attention.batch);
      shape.uint(2, r.attention.seq_len);
      shape.uint(3, r.attention.heads);
      shape.uint(4, r.attention.head_dim);
      shape.boolean(5, r.attention.causal);
      shape.boolean(6, r.attention.fused);
      shape.uint(7, static_cast<uint32_t>(r.attention.direction));
      shape.uint(8, static_cast<uint32_t>(r.attention.dtype));
      shape.string(9, r.attention.implementation);
      w.message(3, shape);
      break;
    case Kind::kMemory:
      shape.uint(1, static_cast<uint32_t>(r.memory.op));
      shape.uint(2, r.memory.bytes);
      shape.uint(3, static_cast<uint32_t>(r.memory.dtype));
      shape.uint(4, r.memory.row_elements);
      w.message(4, shape);
      break;
    case Kind::kCollective:
      shape.uint(1, static_cast<uint32_t>(r.collective.op));
      shape.uint(2, r.collective.ranks);
      shape.uint(3, r.collective.bytes);
      shape.uint(4, static_cast<uint32_t>(r.collective.dtype));
      shape.string(5, r.collective.algorithm);
      shape.string(6, r.collective.protocol);
      shape.uint(7, r.collective.nodes);
      w.message(5, shape);
      break;
  }
  w.message(6, encode_timing(r.timing));
  w.uint(7, r.device);
  return w;
}

}  // namespace

const char* name(DType d) {
  switch (d) {
    case DType::kBf16: return "bf16";
    case DType::kFp16: return "fp16";
    case DType::kFp32: return "fp32";
    case DType::kFp8E4m3: return "fp8_e4m3";
  }
  return "?";
}

const char* name(MemoryOp op) {
  switch (op) {
    case MemoryOp::kCopy: return "copy";
    case MemoryOp::kElementwise: return "elementwise";
    case MemoryOp::kLayerNorm: return "layernorm";
  }
  return "?";
}

const char* name(Collective op) {
  switch (op) {
    case Collective::kAllReduce: return "all_reduce";
    case Collective::kAllGather: return "all_gather";
    case Collective::kReduceScatter: return "reduce_scatter";
    case Collective::kAllToAll: return "all_to_all";
    case Collective::kSendRecv: return "send_recv";
  }
  return "?";
}

TimingStats summarize_samples(std::vector<double> samples_s, uint32_t warmup,
                              uint32_t launches_per_sample) {
  assert(!samples_s.empty() && "need at least one sample");
  std::sort(samples_s.begin(), samples_s.end());
  double mean = 0;
  for (double s : samples_s) mean += s;
  mean /= static_cast<double>(samples_s.size());
  double var = 0;
  for (double s : samples_s) var += (s - mean) * (s - mean);
  TimingStats t;
  t.median_s = percentile(samples_s, 0.5);
  t.min_s = samples_s.front();
  t.max_s = samples_s.back();
  t.p10_s = percentile(samples_s, 0.1);
  t.p90_s = percentile(samples_s, 0.9);
  t.stddev_s = std::sqrt(var / static_cast<double>(samples_s.size()));
  t.repetitions = static_cast<uint32_t>(samples_s.size());
  t.warmup = warmup;
  t.launches_per_sample = launches_per_sample;
  return t;
}

std::string kernel_driver_version_from(const std::string& proc_version_line) {
  const size_t module = proc_version_line.find("Kernel Module");
  if (module == std::string::npos) return "";
  std::istringstream words(proc_version_line.substr(module));
  std::string word;
  while (words >> word) {
    const bool version = std::isdigit(static_cast<unsigned char>(word.front())) &&
                         word.find('.') != std::string::npos &&
                         std::all_of(word.begin(), word.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '.'; });
    if (version) return word;
  }
  return "";
}

void add_note(Header& header, const std::string& note) {
  if (!header.notes.empty()) header.notes += "; ";
  header.notes += note;
}

std::string encode_probe_run(const ProbeRun& run) {
  WireWriter file;
  file.string(1, kFormat);
  file.uint(2, kVersion);
  file.message(3, encode_header(run.header));
  for (const Record& r : run.records) file.message(4, encode_record(r));
  file.uint(5, run.records.size());  // last, so that a cut file is caught
  return file.bytes();
}

std::string format_probe_run(const ProbeRun& run) {
  const Header& h = run.header;
  std::ostringstream os;
  char line[512];
  os << "clustersim probe summary\n";
  std::snprintf(line, sizeof line,
                "gpu:      %s x%u, sm_%u, %u SMs, SM clock %u MHz, memory clock %u MHz, %u-bit bus, "
                "%.1f GiB, L2 %.1f MiB\n",
                h.gpu_model.c_str(), h.gpu_count, h.compute_capability, h.sm_count, h.sm_clock_mhz,
                h.memory_clock_mhz, h.memory_bus_width_bits,
                static_cast<double>(h.memory_bytes) / (1 << 30),
                static_cast<double>(h.l2_cache_bytes) / (1 << 20));
  os << line;
  os << "software: driver " << (h.driver_version.empty() ? "?" : h.driver_version)
     << ", CUDA driver API " << h.cuda_driver_version << ", CUDA runtime " << h.cuda_runtime_version
     << ", NCCL " << h.nccl_version << ", cuBLAS " << h.cublas_version << "\n";
  os << "run:      " << h.date << " on " << h.host << ", probe " << h.probe_version << "\n";
  os << "command:  " << h.command_line << "\n";
  if (!h.notes.empty()) os << "notes:    " << h.notes << "\n";

  Kind last = Kind::kGemm;
  bool first = true;
  for (const Record& r : run.records) {
    const double us = r.timing.median_s * 1e6;
    const double p10 = r.timing.p10_s * 1e6;
    const double p90 = r.timing.p90_s * 1e6;
    if (first || r.kind != last) {
      first = false;
      last = r.kind;
      switch (r.kind) {
        case Kind::kGemm:
          os << "\nGEMM (C[m x n] = A[m x k] B[k x n])\n";
          std::snprintf(line, sizeof line, "%-9s %7s %7s %7s %12s %12s %12s %9s  %s\n", "dtype",
                        "m", "n", "k", "median_us", "p10_us", "p90_us", "TFLOP/s", "label");
          break;
        case Kind::kAttention:
          os << "\nAttention\n";
          std::snprintf(line, sizeof line, "%-4s %5s %6s %6s %5s %6s %12s %12s %12s %9s  %s\n",
                        "dir", "batch", "seq", "heads", "hdim", "fused", "median_us", "p10_us",
                        "p90_us", "TFLOP/s", "implementation");
          break;
        case Kind::kMemory:
          os << "\nMemory-bound kernels (bytes = read + written)\n";
          std::snprintf(line, sizeof line, "%-12s %14s %12s %12s %12s %9s\n", "op", "bytes",
                        "median_us", "p10_us", "p90_us", "GB/s");
          break;
        case Kind::kCollective:
          os << "\nCollectives (bytes as nccl-tests' size; algbw = bytes / time)\n";
          std::snprintf(line, sizeof line, "%-15s %5s %-10s %14s %12s %12s %12s %10s\n", "op",
                        "ranks", "algo", "bytes", "median_us", "p10_us", "p90_us", "algbw_GB/s");
          break;
      }
      os << line;
    }
    switch (r.kind) {
      case Kind::kGemm: {
        const double tflops = 2.0 * static_cast<double>(r.gemm.m) * static_cast<double>(r.gemm.n) *
                              static_cast<double>(r.gemm.k) / r.timing.median_s * 1e-12;
        std::snprintf(line, sizeof line, "%-9s %7llu %7llu %7llu %12.2f %12.2f %12.2f %9.1f  %s\n",
                      name(r.gemm.dtype), static_cast<unsigned long long>(r.gemm.m),
                      static_cast<unsigned long long>(r.gemm.n),
                      static_cast<unsigned long long>(r.gemm.k), us, p10, p90, tflops,
                      r.gemm.label.c_str());
        break;
      }
      case Kind::kAttention: {
        const AttentionShape& a = r.attention;
        double flops = 4.0 * static_cast<double>(a.batch * a.heads) *
                       static_cast<double>(a.seq_len) * static_cast<double>(a.seq_len) *
                       static_cast<double>(a.head_dim);
        if (a.direction == Direction::kBackward) flops *= a.fused ? 2.5 : 2.0;
        std::snprintf(line, sizeof line, "%-4s %5llu %6llu %6llu %5llu %6s %12.2f %12.2f %12.2f %9.1f  %s\n",
                      a.direction == Direction::kForward ? "fwd" : "bwd",
                      static_cast<unsigned long long>(a.batch),
                      static_cast<unsigned long long>(a.seq_len),
                      static_cast<unsigned long long>(a.heads),
                      static_cast<unsigned long long>(a.head_dim), a.fused ? "yes" : "no", us, p10,
                      p90, flops / r.timing.median_s * 1e-12, a.implementation.c_str());
        break;
      }
      case Kind::kMemory:
        std::snprintf(line, sizeof line, "%-12s %14llu %12.2f %12.2f %12.2f %9.1f\n",
                      name(r.memory.op), static_cast<unsigned long long>(r.memory.bytes), us, p10,
                      p90, static_cast<double>(r.memory.bytes) / r.timing.median_s * 1e-9);
        break;
      case Kind::kCollective:
        std::snprintf(line, sizeof line, "%-15s %5u %-10s %14llu %12.2f %12.2f %12.2f %10.2f\n",
                      name(r.collective.op), r.collective.ranks, r.collective.algorithm.c_str(),
                      static_cast<unsigned long long>(r.collective.bytes), us, p10, p90,
                      static_cast<double>(r.collective.bytes) / r.timing.median_s * 1e-9);
        break;
    }
    os << line;
  }
  return os.str();
}

}  // namespace clustersim::kernels_probe
