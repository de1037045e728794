// SPDX-License-Identifier: Apache-2.0
// Probe files (calibration/probe_data.proto) as plain structs: read, validate, write, summarise.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace clustersim::calib {

// The value of ProbeFile.format; a file with anything else is not ours.
inline constexpr std::string_view kProbeFormat = "clustersim-probe";
// The schema version this reader understands.
inline constexpr uint32_t kProbeVersion = 1;

enum class DType { kUnspecified, kBf16, kFp16, kFp32, kFp8E4m3 };
enum class Direction { kForward, kBackward };
enum class MemoryOpKind { kCopy, kElementwise, kLayerNorm };
enum class CollectiveKind { kAllReduce, kAllGather, kReduceScatter, kAllToAll, kSendRecv };

std::string_view to_string(DType d);              // "bf16", "fp8_e4m3", ...
std::string_view to_string(Direction d);          // "fwd", "bwd"
std::string_view to_string(MemoryOpKind op);      // "copy", "elementwise", "layernorm"
std::string_view to_string(CollectiveKind op);    // "all_reduce", ...

// The machine and software a probe ran on (ProbeFile.header). Versions as the APIs report them.
struct ProbeHeader {
  std::string gpu_model;
  int gpu_count = 0;
  std::string driver_version;
  uint32_t cuda_driver_version = 0;
  uint32_t cuda_runtime_version = 0;
  uint32_t nccl_version = 0;       // 0 when the probe was built without NCCL
  uint32_t cublas_version = 0;
  int sm_count = 0;
  int compute_capability = 0;      // major * 10 + minor
  int sm_clock_mhz = 0;
  int memory_clock_mhz = 0;
  int memory_bus_width_bits = 0;
  uint64_t memory_bytes = 0;
  uint64_t l2_cache_bytes = 0;
  std::string date;                // ISO-8601
  std::string host;
  std::string probe_version;
  std::string command_line;
  bool synthetic = false;
  std::string notes;
};

// Sample statistics of one measurement, in seconds.
struct Timing {
  double median_s = 0;
  double min_s = 0;
  double max_s = 0;
  double p10_s = 0;
  double p90_s = 0;
  double stddev_s = 0;
  int repetitions = 0;
  int warmup = 0;
  int launches_per_sample = 1;
};

// Row-major C[m x n] = A[m x k] * B[k x n].
struct GemmPoint {
  int64_t m = 0, n = 0, k = 0;
  DType dtype = DType::kBf16;
  std::string label;
  Timing timing;
};

struct AttentionPoint {
  int64_t batch = 0, seq_len = 0, heads = 0, head_dim = 0;
  bool causal = false;
  bool fused = false;
  Direction direction = Direction::kForward;
  DType dtype = DType::kBf16;
  std::string implementation;
  Timing timing;
};

struct MemoryPoint {
  MemoryOpKind op = MemoryOpKind::kCopy;
  int64_t bytes = 0;               // read + written per launch
  DType dtype = DType::kBf16;
  int64_t row_elements = 0;        // layernorm only
  Timing timing;
};

// `bytes` follows nccl-tests' size convention (see probe_data.proto).
struct CollectivePoint {
  CollectiveKind op = CollectiveKind::kAllReduce;
  int ranks = 0;
  int64_t bytes = 0;
  DType dtype = DType::kBf16;
  std::string algorithm = "auto";
  std::string protocol = "auto";
  int nodes = 1;
  Timing timing;
};

// One probe file's content; `source` is the path it was read from (for messages).
struct ProbeData {
  std::string source;
  ProbeHeader header;
  std::vector<GemmPoint> gemm;
  std::vector<AttentionPoint> attention;
  std::vector<MemoryPoint> memory;
  std::vector<CollectivePoint> collectives;

  size_t measurement_count() const {
    return gemm.size() + attention.size() + memory.size() + collectives.size();
  }
};

// Reads and validates a probe file. Throws clustersim::BadInput, listing every problem found with
// the field path ("measurements[3].timing.median_s"), when the file is missing, empty, truncated,
// not a probe file (foreign protobuf or other data), of another schema version, or has missing
// header fields, empty shapes, a missing data type, non-positive timings or impossible spread
// statistics (a negative p10, p90 or stddev, p10 over p90, launches_per_sample 0).
ProbeData read_probe_file(const std::filesystem::path& file);

// As read_probe_file, from bytes already in memory; `source` names them in messages.
ProbeData parse_probe_data(std::string_view bytes, const std::string& source);

// Encodes `data` in the probe wire format (what read_probe_file accepts).
std::string serialize_probe_data(const ProbeData& data);

// Writes serialize_probe_data(data) to `file`. Throws std::runtime_error when it cannot write.
void write_probe_file(const ProbeData& data, const std::filesystem::path& file);

// A readable summary: header, then one table per measurement kind (median and spread per point).
std::string format_probe_summary(const ProbeData& data);

}  // namespace clustersim::calib
