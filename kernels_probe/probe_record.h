// SPDX-License-Identifier: Apache-2.0
// What the probe measured, as plain structs, and their encoding as a probe file (+ readable text).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace clustersim::kernels_probe {

// Numbers mirror the enums of calibration/probe_data.proto; keep them in step.
enum class Kind : uint32_t { kGemm = 1, kAttention = 2, kMemory = 3, kCollective = 4 };
enum class DType : uint32_t { kBf16 = 1, kFp16 = 2, kFp32 = 3, kFp8E4m3 = 4 };
enum class Direction : uint32_t { kForward = 1, kBackward = 2 };
enum class MemoryOp : uint32_t { kCopy = 1, kElementwise = 2, kLayerNorm = 3 };
enum class Collective : uint32_t {
  kAllReduce = 1, kAllGather = 2, kReduceScatter = 3, kAllToAll = 4, kSendRecv = 5
};

const char* name(DType d);
const char* name(MemoryOp op);
const char* name(Collective op);

// Mirrors clustersim.probe.Header.
struct Header {
  std::string gpu_model;
  uint32_t gpu_count = 0;
  std::string driver_version;
  uint32_t cuda_driver_version = 0;
  uint32_t cuda_runtime_version = 0;
  uint32_t nccl_version = 0;
  uint32_t cublas_version = 0;
  uint32_t sm_count = 0;
  uint32_t compute_capability = 0;
  uint32_t sm_clock_mhz = 0;
  uint32_t memory_clock_mhz = 0;
  uint32_t memory_bus_width_bits = 0;
  uint64_t memory_bytes = 0;
  uint64_t l2_cache_bytes = 0;
  std::string date;
  std::string host;
  std::string probe_version;
  std::string command_line;
  std::string notes;
};

// Sample statistics in seconds (clustersim.probe.Timing).
struct TimingStats {
  double median_s = 0, min_s = 0, max_s = 0, p10_s = 0, p90_s = 0, stddev_s = 0;
  uint32_t repetitions = 0;
  uint32_t warmup = 0;
  uint32_t launches_per_sample = 1;
};

// Median (interpolated), extremes, 10th/90th percentiles and population standard deviation
// (divided by the sample count, not count - 1) of `samples_s`.
// Precondition: at least one sample.
TimingStats summarize_samples(std::vector<double> samples_s, uint32_t warmup,
                              uint32_t launches_per_sample);

struct GemmShape { uint64_t m = 0, n = 0, k = 0; DType dtype = DType::kBf16; std::string label; };
struct AttentionShape {
  uint64_t batch = 0, seq_len = 0, heads = 0, head_dim = 0;
  bool causal = false, fused = false;
  Direction direction = Direction::kForward;
  DType dtype = DType::kBf16;
  std::string implementation;
};
struct MemoryShape { MemoryOp op = MemoryOp::kCopy; uint64_t bytes = 0; DType dtype = DType::kBf16;
                     uint64_t row_elements = 0; };
struct CollectiveShape {
  Collective op = Collective::kAllReduce;
  uint32_t ranks = 0;
  uint64_t bytes = 0;
  DType dtype = DType::kBf16;
  std::string algorithm = "auto";
  std::string protocol = "auto";
  uint32_t nodes = 1;
};

// One measurement; only the shape matching `kind` is encoded.
struct Record {
  Kind kind = Kind::kGemm;
  GemmShape gemm;
  AttentionShape attention;
  MemoryShape memory;
  CollectiveShape collective;
  TimingStats timing;
  uint32_t device = 0;
};

struct ProbeRun {
  Header header;
  std::vector<Record> records;
};

// The kernel driver's version in the first line of /proc/driver/nvidia/version: the first word
// after "Kernel Module" made of digits and dots ("570.124.06" in "NVRM version: NVIDIA UNIX x86_64
// Kernel Module  570.124.06  <date>", "580.159.04" in "... Open Kernel Module for x86_64
// 580.159.04  Release Build ..."); "" when there is none.
std::string kernel_driver_version_from(const std::string& proc_version_line);

// Appends `note` to header.notes ("; "-separated): parts skipped and why, substitutions made.
void add_note(Header& header, const std::string& note);

// The probe file bytes (a clustersim.probe.ProbeFile, format "clustersim-probe", version 1).
std::string encode_probe_run(const ProbeRun& run);

// A readable summary of the run, one table per kind.
std::string format_probe_run(const ProbeRun& run);

}  // namespace clustersim::kernels_probe
