// SPDX-License-Identifier: Apache-2.0
// Probe file reader and writer: the only code that sees the generated protobuf classes.
#include "calibration/probe_file.h"

#include <algorithm>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>

#include "calibration/probe_data.pb.h"
#if GOOGLE_PROTOBUF_VERSION < 4022000
#include <google/protobuf/stubs/logging.h>
#endif
#include "sim/core/error.h"

namespace clustersim::calib {
namespace {

namespace pb = ::clustersim::probe;

// Stop listing after this many problems: a wholly wrong file would otherwise print thousands.
constexpr size_t kMaxErrors = 25;

DType from_pb(pb::DType d) {
  switch (d) {
    case pb::DTYPE_BF16: return DType::kBf16;
    case pb::DTYPE_FP16: return DType::kFp16;
    case pb::DTYPE_FP32: return DType::kFp32;
    case pb::DTYPE_FP8_E4M3: return DType::kFp8E4m3;
    default: return DType::kUnspecified;
  }
}

pb::DType to_pb(DType d) {
  switch (d) {
    case DType::kBf16: return pb::DTYPE_BF16;
    case DType::kFp16: return pb::DTYPE_FP16;
    case DType::kFp32: return pb::DTYPE_FP32;
    case DType::kFp8E4m3: return pb::DTYPE_FP8_E4M3;
    case DType::kUnspecified: break;
  }
  return pb::DTYPE_UNSPECIFIED;
}

// What one probe measurement can hold: shapes up to 2^24 per dimension, buffers up to 1 TiB,
// collectives over up to 2^20 ranks. Beyond them a value is corrupt (an unsigned -1), not measured.
constexpr uint64_t kMaxDimension = uint64_t{1} << 24;
constexpr uint64_t kMaxBytes = uint64_t{1} << 40;
constexpr uint64_t kMaxRanks = uint64_t{1} << 20;
// Launches timed together in one sample: the probe times up to thousands; 2^20 is far beyond.
constexpr uint64_t kMaxLaunchesPerSample = uint64_t{1} << 20;

// Whether `date` opens with a calendar date as ISO 8601 writes it (YYYY-MM-DD, what the probe's
// utc_now_iso8601 writes before its time), alone or followed by a time ('T' or ' ' and more): a
// fitted profile's name takes its first 10 characters, "(fitted 2026-12-04)".
bool iso_dated(const std::string& date) {
  if (date.size() < 10 || date[4] != '-' || date[7] != '-') return false;
  for (const int i : {0, 1, 2, 3, 5, 6, 8, 9}) {
    if (!std::isdigit(static_cast<unsigned char>(date[static_cast<size_t>(i)]))) return false;
  }
  // A time after the date: 'T' or ' ' and something after it.
  if (date.size() > 10 && ((date[10] != 'T' && date[10] != ' ') || date.size() == 11)) return false;
  const int year = std::stoi(date.substr(0, 4)), month = std::stoi(date.substr(5, 2)), day = std::stoi(date.substr(8, 2));
  if (month < 1 || month > 12 || day < 1) return false;
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return day <= kDays[month - 1] + (month == 2 && leap ? 1 : 0);
}

// Collects problems with their field paths; stops adding after kMaxErrors.
class Checker {
 public:
  explicit Checker(std::string source) : source_(std::move(source)) {}

  void fail(const std::string& path, const std::string& what) {
    if (errors_.errors().size() < kMaxErrors) errors_.add(InputError{source_, 0, path, what});
    else truncated_ = true;
  }
  void positive(const std::string& path, double v, const char* what) {
    if (!(v > 0) || !std::isfinite(v)) {
      std::ostringstream os;
      os << what << " must be a positive number, got " << v;
      fail(path, os.str());
    }
  }
  // A size or count as the file holds it (unsigned), within what a probe can have measured.
  void count(const std::string& path, uint64_t v, const char* what, uint64_t max) {
    if (v < 1 || v > max) {
      fail(path, std::string(what) + " must be a whole number from 1 to " + std::to_string(max) + ", got " +
                     std::to_string(v));
    }
  }
  void non_empty(const std::string& path, const std::string& v, const char* what) {
    if (v.empty()) fail(path, std::string(what) + " is missing");
  }
  void throw_if_any() {
    if (truncated_) {
      errors_.add(InputError{source_, 0, "", "further problems not listed"});
      truncated_ = false;
    }
    errors_.throw_if_any();
  }

 private:
  std::string source_;
  ErrorList errors_;
  bool truncated_ = false;
};

// A measurement's data type: missing (0), or a value this build does not know (a newer probe's,
// or damage: until 2026-12-07 both were "data type is missing"; QA).
void check_dtype(Checker& check, const std::string& key, pb::DType raw) {
  if (from_pb(raw) != DType::kUnspecified) return;
  check.fail(key, raw == pb::DTYPE_UNSPECIFIED ? std::string("data type is missing")
                                               : "unknown data type " + std::to_string(static_cast<int>(raw)) +
                                                     "; expected 1 (bf16), 2 (fp16), 3 (fp32) or 4 (fp8_e4m3)");
}

std::string indexed(const char* name, int i) {
  return std::string(name) + "[" + std::to_string(i) + "]";
}

Timing read_timing(const pb::Timing& t, const std::string& path, Checker& check) {
  Timing out{t.median_s(), t.min_s(), t.max_s(), t.p10_s(), t.p90_s(), t.stddev_s(),
             static_cast<int>(t.repetitions()), static_cast<int>(t.warmup()),
             static_cast<int>(t.launches_per_sample())};
  check.positive(path + ".median_s", out.median_s, "median time");
  check.positive(path + ".min_s", out.min_s, "minimum time");
  check.positive(path + ".max_s", out.max_s, "maximum time");
  if (out.min_s > out.median_s || out.median_s > out.max_s) {
    char got[160];
    std::snprintf(got, sizeof got, "expected min_s <= median_s <= max_s; got %.9g, %.9g, %.9g", out.min_s, out.median_s,
                  out.max_s);
    check.fail(path, got);
  }
  if (out.repetitions <= 0) check.fail(path + ".repetitions", "must be at least 1");
  // The spread is the probe's own statistics over its samples: never negative, p10 <= p90. A
  // sample is the time of launches_per_sample launches over that count, so 0 is a broken record,
  // not a default. Before 2026-12-05 these were read as written and a launch count of 0 was
  // taken as 1.
  const auto non_negative = [&](const char* field, double v) {
    if (!(v >= 0) || !std::isfinite(v)) {
      std::ostringstream os;
      os << "must be a number of seconds of 0 or more, got " << v;
      check.fail(path + "." + field, os.str());
    }
  };
  non_negative("p10_s", out.p10_s);
  non_negative("p90_s", out.p90_s);
  non_negative("stddev_s", out.stddev_s);
  if (out.p10_s > out.p90_s) {
    std::ostringstream os;
    os << "expected p10_s <= p90_s, got " << out.p10_s << " > " << out.p90_s;
    check.fail(path + ".p10_s", os.str());
  } else if ((out.p10_s > 0 || out.p90_s > 0) && (out.p10_s < out.min_s || out.p90_s > out.max_s)) {
    // Percentiles of the samples lie between their extremes (until 2026-12-07 unchecked; QA);
    // both 0 is a file that did not record them (proto3's unset), as before.
    std::ostringstream os;
    os << "expected min_s <= p10_s <= p90_s <= max_s, got " << out.min_s << ", " << out.p10_s << ", " << out.p90_s
       << ", " << out.max_s;
    check.fail(path + (out.p10_s < out.min_s ? ".p10_s" : ".p90_s"), os.str());
  }
  // As the file holds it (unsigned): a launch count over INT_MAX is corrupt too.
  check.count(path + ".launches_per_sample", t.launches_per_sample(), "launches per sample", kMaxLaunchesPerSample);
  return out;
}

void read_header(const pb::Header& h, ProbeHeader& out, Checker& check) {
  out.gpu_model = h.gpu_model();
  out.gpu_count = static_cast<int>(h.gpu_count());
  out.driver_version = h.driver_version();
  out.cuda_driver_version = h.cuda_driver_version();
  out.cuda_runtime_version = h.cuda_runtime_version();
  out.nccl_version = h.nccl_version();
  out.cublas_version = h.cublas_version();
  out.sm_count = static_cast<int>(h.sm_count());
  out.compute_capability = static_cast<int>(h.compute_capability());
  out.sm_clock_mhz = static_cast<int>(h.sm_clock_mhz());
  out.memory_clock_mhz = static_cast<int>(h.memory_clock_mhz());
  out.memory_bus_width_bits = static_cast<int>(h.memory_bus_width_bits());
  out.memory_bytes = h.memory_bytes();
  out.l2_cache_bytes = h.l2_cache_bytes();
  out.date = h.date();
  out.host = h.host();
  out.probe_version = h.probe_version();
  out.command_line = h.command_line();
  out.synthetic = h.synthetic();
  out.notes = h.notes();

  check.non_empty("header.gpu_model", out.gpu_model, "GPU model");
  // As the file holds them (unsigned): cast first, 4294967295 read as -1.
  check.count("header.gpu_count", h.gpu_count(), "GPU count", 65536);
  check.count("header.sm_count", h.sm_count(), "SM count", 65536);
  check.count("header.compute_capability", h.compute_capability(), "compute capability", 1000);
  // The fit checks it against the base profile's memory (another GPU's timings otherwise pass as
  // this one's): required since 2026-12-06, when a file without it skipped that check.
  check.count("header.memory_bytes", h.memory_bytes(), "GPU memory in bytes", uint64_t{1} << 50);
  check.positive("header.cuda_runtime_version", out.cuda_runtime_version, "CUDA runtime version");
  check.non_empty("header.date", out.date, "date of the run");
  const auto control = [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; };
  // (A date with a control character is refused as one below, not echoed here.)
  if (!out.date.empty() && std::none_of(out.date.begin(), out.date.end(), control) && !iso_dated(out.date)) {
    check.fail("header.date", "must be an ISO 8601 date, YYYY-MM-DD, alone or with a time (2026-12-04T10:00:00Z); got '" +
                                  out.date.substr(0, 40) + (out.date.size() > 40 ? "...'" : "'"));
  }
  check.non_empty("header.host", out.host, "host name");
  // These go into a fitted profile's name and description: one line of text each (a date with a
  // newline ended up inside the written name until 2026-12-06).
  const auto one_line = [&](const char* field, const std::string& v) {
    if (std::any_of(v.begin(), v.end(), control)) {
      check.fail(field, "must be one line of text (it has a control character such as a newline)");
    }
  };
  one_line("header.gpu_model", out.gpu_model);
  one_line("header.date", out.date);
  one_line("header.driver_version", out.driver_version);
  one_line("header.host", out.host);
}

void read_measurement(const pb::Measurement& m, int i, ProbeData& out, Checker& check) {
  const std::string path = indexed("measurements", i);
  const std::string timing_path = path + ".timing";
  if (!m.has_timing()) {
    check.fail(timing_path, "timing is missing");
    return;
  }
  auto expect_kind = [&](pb::Kind want, const char* shape) {
    if (m.kind() != want) {
      check.fail(path + ".kind", std::string("does not match the ") + shape + " shape it carries");
    }
  };
  switch (m.shape_case()) {
    case pb::Measurement::kGemm: {
      expect_kind(pb::KIND_GEMM, "gemm");
      const pb::GemmShape& g = m.gemm();
      GemmPoint p{static_cast<int64_t>(g.m()), static_cast<int64_t>(g.n()),
                  static_cast<int64_t>(g.k()), from_pb(g.dtype()), g.label(),
                  read_timing(m.timing(), timing_path, check)};
      check.count(path + ".gemm.m", g.m(), "m", kMaxDimension);
      check.count(path + ".gemm.n", g.n(), "n", kMaxDimension);
      check.count(path + ".gemm.k", g.k(), "k", kMaxDimension);
      check_dtype(check, path + ".gemm.dtype", g.dtype());
      out.gemm.push_back(std::move(p));
      break;
    }
    case pb::Measurement::kAttention: {
      expect_kind(pb::KIND_ATTENTION, "attention");
      const pb::AttentionShape& a = m.attention();
      AttentionPoint p;
      p.batch = static_cast<int64_t>(a.batch());
      p.seq_len = static_cast<int64_t>(a.seq_len());
      p.heads = static_cast<int64_t>(a.heads());
      p.head_dim = static_cast<int64_t>(a.head_dim());
      p.causal = a.causal();
      p.fused = a.fused();
      p.dtype = from_pb(a.dtype());
      p.implementation = a.implementation();
      p.timing = read_timing(m.timing(), timing_path, check);
      if (a.direction() == pb::DIRECTION_FORWARD) p.direction = Direction::kForward;
      else if (a.direction() == pb::DIRECTION_BACKWARD) p.direction = Direction::kBackward;
      else check.fail(path + ".attention.direction", "expected forward or backward");
      check.count(path + ".attention.batch", a.batch(), "batch", kMaxDimension);
      check.count(path + ".attention.seq_len", a.seq_len(), "sequence length", kMaxDimension);
      check.count(path + ".attention.heads", a.heads(), "heads", kMaxDimension);
      check.count(path + ".attention.head_dim", a.head_dim(), "head size", kMaxDimension);
      // Every point names its data type, as GEMMs must: attention fits are keyed by it (a point
      // without one made a series of its own, fitted under "unspecified"), and a memory or
      // collective point without one did not record what it moved. Before 2026-12-05 only GEMMs
      // were refused.
      check_dtype(check, path + ".attention.dtype", a.dtype());
      out.attention.push_back(std::move(p));
      break;
    }
    case pb::Measurement::kMemory: {
      expect_kind(pb::KIND_MEMORY, "memory");
      const pb::MemoryOp& mo = m.memory();
      MemoryPoint p;
      p.bytes = static_cast<int64_t>(mo.bytes());
      p.dtype = from_pb(mo.dtype());
      p.row_elements = static_cast<int64_t>(mo.row_elements());
      p.timing = read_timing(m.timing(), timing_path, check);
      switch (mo.op()) {
        case pb::MEMORY_OP_COPY: p.op = MemoryOpKind::kCopy; break;
        case pb::MEMORY_OP_ELEMENTWISE: p.op = MemoryOpKind::kElementwise; break;
        case pb::MEMORY_OP_LAYERNORM: p.op = MemoryOpKind::kLayerNorm; break;
        default: check.fail(path + ".memory.op", "expected copy, elementwise or layernorm");
      }
      check.count(path + ".memory.bytes", mo.bytes(), "bytes", kMaxBytes);
      check_dtype(check, path + ".memory.dtype", mo.dtype());
      out.memory.push_back(std::move(p));
      break;
    }
    case pb::Measurement::kCollective: {
      expect_kind(pb::KIND_COLLECTIVE, "collective");
      const pb::CollectiveOp& c = m.collective();
      CollectivePoint p;
      p.ranks = static_cast<int>(c.ranks());
      p.bytes = static_cast<int64_t>(c.bytes());
      p.dtype = from_pb(c.dtype());
      p.algorithm = c.algorithm().empty() ? "auto" : c.algorithm();
      p.protocol = c.protocol().empty() ? "auto" : c.protocol();
      p.nodes = c.nodes() == 0 ? 1 : static_cast<int>(c.nodes());
      p.timing = read_timing(m.timing(), timing_path, check);
      switch (c.op()) {
        case pb::COLLECTIVE_ALL_REDUCE: p.op = CollectiveKind::kAllReduce; break;
        case pb::COLLECTIVE_ALL_GATHER: p.op = CollectiveKind::kAllGather; break;
        case pb::COLLECTIVE_REDUCE_SCATTER: p.op = CollectiveKind::kReduceScatter; break;
        case pb::COLLECTIVE_ALL_TO_ALL: p.op = CollectiveKind::kAllToAll; break;
        case pb::COLLECTIVE_SEND_RECV: p.op = CollectiveKind::kSendRecv; break;
        default:
          check.fail(path + ".collective.op",
                     "expected all_reduce, all_gather, reduce_scatter, all_to_all or send_recv");
      }
      check.count(path + ".collective.ranks", c.ranks(), "rank count", kMaxRanks);
      // 0 is proto3's unset and reads as 1 (one node); above the largest cluster, refused.
      if (c.nodes() > kMaxRanks) check.count(path + ".collective.nodes", c.nodes(), "node count (0, unset, reads as 1)", kMaxRanks);
      check.count(path + ".collective.bytes", c.bytes(), "bytes", kMaxBytes);
      check_dtype(check, path + ".collective.dtype", c.dtype());
      out.collectives.push_back(std::move(p));
      break;
    }
    case pb::Measurement::SHAPE_NOT_SET:
      check.fail(path, "carries no gemm, attention, memory or collective shape");
      break;
  }
}

void write_timing(const Timing& t, pb::Timing* out) {
  out->set_median_s(t.median_s);
  out->set_min_s(t.min_s);
  out->set_max_s(t.max_s);
  out->set_p10_s(t.p10_s);
  out->set_p90_s(t.p90_s);
  out->set_stddev_s(t.stddev_s);
  out->set_repetitions(static_cast<uint32_t>(t.repetitions));
  out->set_warmup(static_cast<uint32_t>(t.warmup));
  out->set_launches_per_sample(static_cast<uint32_t>(t.launches_per_sample));
}

void write_header(const ProbeHeader& h, pb::Header* out) {
  out->set_gpu_model(h.gpu_model);
  out->set_gpu_count(static_cast<uint32_t>(h.gpu_count));
  out->set_driver_version(h.driver_version);
  out->set_cuda_driver_version(h.cuda_driver_version);
  out->set_cuda_runtime_version(h.cuda_runtime_version);
  out->set_nccl_version(h.nccl_version);
  out->set_cublas_version(h.cublas_version);
  out->set_sm_count(static_cast<uint32_t>(h.sm_count));
  out->set_compute_capability(static_cast<uint32_t>(h.compute_capability));
  out->set_sm_clock_mhz(static_cast<uint32_t>(h.sm_clock_mhz));
  out->set_memory_clock_mhz(static_cast<uint32_t>(h.memory_clock_mhz));
  out->set_memory_bus_width_bits(static_cast<uint32_t>(h.memory_bus_width_bits));
  out->set_memory_bytes(h.memory_bytes);
  out->set_l2_cache_bytes(h.l2_cache_bytes);
  out->set_date(h.date);
  out->set_host(h.host);
  out->set_probe_version(h.probe_version);
  out->set_command_line(h.command_line);
  out->set_synthetic(h.synthetic);
  out->set_notes(h.notes);
}

pb::CollectiveKind to_pb(CollectiveKind op) {
  switch (op) {
    case CollectiveKind::kAllReduce: return pb::COLLECTIVE_ALL_REDUCE;
    case CollectiveKind::kAllGather: return pb::COLLECTIVE_ALL_GATHER;
    case CollectiveKind::kReduceScatter: return pb::COLLECTIVE_REDUCE_SCATTER;
    case CollectiveKind::kAllToAll: return pb::COLLECTIVE_ALL_TO_ALL;
    case CollectiveKind::kSendRecv: return pb::COLLECTIVE_SEND_RECV;
  }
  return pb::COLLECTIVE_UNSPECIFIED;
}

pb::MemoryOpKind to_pb(MemoryOpKind op) {
  switch (op) {
    case MemoryOpKind::kCopy: return pb::MEMORY_OP_COPY;
    case MemoryOpKind::kElementwise: return pb::MEMORY_OP_ELEMENTWISE;
    case MemoryOpKind::kLayerNorm: return pb::MEMORY_OP_LAYERNORM;
  }
  return pb::MEMORY_OP_UNSPECIFIED;
}

// The header counts one host's GPUs: a collective over more ranks than its hosts hold is a
// mislabelled file (and would be fitted as NVLink where it was not). Reported once per file.
void check_collectives_fit_hosts(const pb::ProbeFile& file, const ProbeData& out, Checker& check) {
  const int64_t per_host = out.header.gpu_count;
  if (per_host <= 0) return;  // reported with the header
  int first = -1, count = 0;
  int64_t ranks = 0, nodes = 0;
  for (int i = 0; i < file.measurements_size(); ++i) {
    const pb::Measurement& m = file.measurements(i);
    if (m.shape_case() != pb::Measurement::kCollective) continue;
    const pb::CollectiveOp& c = m.collective();
    const int64_t n = c.nodes() == 0 ? 1 : static_cast<int64_t>(c.nodes());
    if (c.ranks() > kMaxRanks || n > static_cast<int64_t>(kMaxRanks)) continue;  // reported as corrupt
    if (static_cast<int64_t>(c.ranks()) <= per_host * n) continue;
    if (count++ == 0) {
      first = i;
      ranks = static_cast<int64_t>(c.ranks());
      nodes = n;
    }
  }
  if (count == 0) return;
  check.fail(indexed("measurements", first) + ".collective.ranks",
             std::to_string(ranks) + " ranks on " + std::to_string(nodes) + (nodes == 1 ? " node" : " nodes") +
                 (count > 1 ? " (and " + std::to_string(count - 1) + " more collectives like it)" : "") +
                 ", but header.gpu_count says a host has " + std::to_string(per_host) + " GPUs; expected at most " +
                 std::to_string(per_host * nodes) + " (collective.nodes gives the hosts a run spans)");
}

}  // namespace

std::string_view to_string(DType d) {
  switch (d) {
    case DType::kBf16: return "bf16";
    case DType::kFp16: return "fp16";
    case DType::kFp32: return "fp32";
    case DType::kFp8E4m3: return "fp8_e4m3";
    case DType::kUnspecified: break;
  }
  return "unspecified";
}

std::string_view to_string(Direction d) { return d == Direction::kForward ? "fwd" : "bwd"; }

std::string_view to_string(MemoryOpKind op) {
  switch (op) {
    case MemoryOpKind::kCopy: return "copy";
    case MemoryOpKind::kElementwise: return "elementwise";
    case MemoryOpKind::kLayerNorm: return "layernorm";
  }
  return "unknown";
}

std::string_view to_string(CollectiveKind op) {
  switch (op) {
    case CollectiveKind::kAllReduce: return "all_reduce";
    case CollectiveKind::kAllGather: return "all_gather";
    case CollectiveKind::kReduceScatter: return "reduce_scatter";
    case CollectiveKind::kAllToAll: return "all_to_all";
    case CollectiveKind::kSendRecv: return "send_recv";
  }
  return "unknown";
}

ProbeData parse_probe_data(std::string_view bytes, const std::string& source) {
  auto fail = [&](std::string key, std::string what) {
    throw BadInput(InputError{source, 0, std::move(key), std::move(what)});
  };
  if (bytes.empty()) fail("", "the file is empty; expected a probe file written by clustersim-probe");

  pb::ProbeFile file;
  const bool parsed = [&] {
#if GOOGLE_PROTOBUF_VERSION < 4022000
    // The library logs what it dislikes (a string that is not UTF-8) to stderr; this reader
    // reports it as bad input itself.
    const google::protobuf::LogSilencer quiet;
#endif
    return file.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
  }();
  if (!parsed) {
    // The probe's readable summary beside its .pb (2026-12-07 review: it read as a corrupt file).
    if (bytes.starts_with("clustersim probe summary")) {
      fail("", "this is a probe's readable summary, not its data: pass the .pb file written beside it");
    }
    fail("", "not a readable probe file (truncated, corrupt or not protobuf); expected a file "
             "written by clustersim-probe");
  }
  if (file.format() != kProbeFormat) {
    fail("format", "not a clustersim probe file: format is '" + file.format() + "', expected '" +
                       std::string(kProbeFormat) + "'");
  }
  if (file.version() != kProbeVersion) {
    fail("version", "probe schema version " + std::to_string(file.version()) +
                        " is not supported; this build reads version " +
                        std::to_string(kProbeVersion));
  }
  if (file.measurement_count() > static_cast<uint64_t>(file.measurements_size())) {
    fail("measurement_count",
         "the file is truncated: it declares " + std::to_string(file.measurement_count()) +
             " measurements but holds " + std::to_string(file.measurements_size()));
  } else if (file.measurement_count() < static_cast<uint64_t>(file.measurements_size())) {
    fail("measurement_count", "the file holds " + std::to_string(file.measurements_size()) +
                                  " measurements but declares " + std::to_string(file.measurement_count()) +
                                  " (files joined together, or a probe that stopped before writing the count)");
  }
  if (!file.has_header()) fail("header", "the header is missing");
  if (file.measurements_size() == 0) fail("measurements", "the file holds no measurements");

  ProbeData out;
  out.source = source;
  Checker check(source);
  read_header(file.header(), out.header, check);
  for (int i = 0; i < file.measurements_size(); ++i) {
    read_measurement(file.measurements(i), i, out, check);
  }
  check_collectives_fit_hosts(file, out, check);
  check.throw_if_any();
  return out;
}

ProbeData read_probe_file(const std::filesystem::path& file) {
  const std::string source = file.string();
  std::error_code ec;
  const std::filesystem::file_type type = std::filesystem::status(file, ec).type();
  if (type == std::filesystem::file_type::directory) {
    throw BadInput(InputError{source, 0, "", "is a directory; expected a probe file (clustersim-probe writes NAME.pb)"});
  }
  if (type == std::filesystem::file_type::not_found) throw BadInput(InputError{source, 0, "", "no such probe file"});
  // A symbolic link loop or a name over 255 bytes: said as such, not as a missing file.
  if (ec) throw BadInput(InputError{source, 0, "", "cannot be read (" + ec.message() + ")"});
  // A device or pipe has no end to read to (/dev/zero would fill memory).
  if (type != std::filesystem::file_type::regular) {
    throw BadInput(InputError{source, 0, "", "is not a regular file; expected a probe file (clustersim-probe writes NAME.pb)"});
  }
  // In chunks, as YAML files are: a read that fails part way (EIO; /proc/self/mem, which says it is
  // a regular file) is bad input, where an istreambuf_iterator's read threw out as an internal
  // error (until 2026-12-05). Protobuf parses at most 2 GiB.
  std::ifstream in(file, std::ios::binary);
  if (!in) throw BadInput(InputError{source, 0, "", "cannot open the probe file for reading"});
  constexpr size_t kMaxProbeBytes = (size_t{2} << 30) - 1;
  std::string bytes;
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    bytes.append(chunk, static_cast<size_t>(in.gcount()));
    if (bytes.size() > kMaxProbeBytes) {
      throw BadInput(InputError{source, 0, "", "is larger than 2 GiB, more than a probe file can hold"});
    }
  }
  if (in.bad()) throw BadInput(InputError{source, 0, "", "cannot be read (a read error part way); expected a probe file"});
  return parse_probe_data(bytes, source);
}

std::string serialize_probe_data(const ProbeData& data) {
  pb::ProbeFile file;
  file.set_format(std::string(kProbeFormat));
  file.set_version(kProbeVersion);
  write_header(data.header, file.mutable_header());
  for (const GemmPoint& p : data.gemm) {
    pb::Measurement* m = file.add_measurements();
    m->set_kind(pb::KIND_GEMM);
    pb::GemmShape* g = m->mutable_gemm();
    g->set_m(static_cast<uint64_t>(p.m));
    g->set_n(static_cast<uint64_t>(p.n));
    g->set_k(static_cast<uint64_t>(p.k));
    g->set_dtype(to_pb(p.dtype));
    g->set_label(p.label);
    write_timing(p.timing, m->mutable_timing());
  }
  for (const AttentionPoint& p : data.attention) {
    pb::Measurement* m = file.add_measurements();
    m->set_kind(pb::KIND_ATTENTION);
    pb::AttentionShape* a = m->mutable_attention();
    a->set_batch(static_cast<uint64_t>(p.batch));
    a->set_seq_len(static_cast<uint64_t>(p.seq_len));
    a->set_heads(static_cast<uint64_t>(p.heads));
    a->set_head_dim(static_cast<uint64_t>(p.head_dim));
    a->set_causal(p.causal);
    a->set_fused(p.fused);
    a->set_direction(p.direction == Direction::kForward ? pb::DIRECTION_FORWARD
                                                        : pb::DIRECTION_BACKWARD);
    a->set_dtype(to_pb(p.dtype));
    a->set_implementation(p.implementation);
    write_timing(p.timing, m->mutable_timing());
  }
  for (const MemoryPoint& p : data.memory) {
    pb::Measurement* m = file.add_measurements();
    m->set_kind(pb::KIND_MEMORY);
    pb::MemoryOp* mo = m->mutable_memory();
    mo->set_op(to_pb(p.op));
    mo->set_bytes(static_cast<uint64_t>(p.bytes));
    mo->set_dtype(to_pb(p.dtype));
    mo->set_row_elements(static_cast<uint64_t>(p.row_elements));
    write_timing(p.timing, m->mutable_timing());
  }
  for (const CollectivePoint& p : data.collectives) {
    pb::Measurement* m = file.add_measurements();
    m->set_kind(pb::KIND_COLLECTIVE);
    pb::CollectiveOp* c = m->mutable_collective();
    c->set_op(to_pb(p.op));
    c->set_ranks(static_cast<uint32_t>(p.ranks));
    c->set_bytes(static_cast<uint64_t>(p.bytes));
    c->set_dtype(to_pb(p.dtype));
    c->set_algorithm(p.algorithm);
    c->set_protocol(p.protocol);
    c->set_nodes(static_cast<uint32_t>(p.nodes));
    write_timing(p.timing, m->mutable_timing());
  }
  file.set_measurement_count(static_cast<uint64_t>(file.measurements_size()));
  return file.SerializeAsString();
}

void write_probe_file(const ProbeData& data, const std::filesystem::path& file) {
  errno = 0;
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  const std::string bytes = serialize_probe_data(data);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.flush();
  if (!out) {
    // Why, where the system says (a missing directory, a directory, a full disk).
    throw std::runtime_error("cannot write probe file " + file.string() + ": " + io_reason());
  }
}

std::string format_probe_summary(const ProbeData& data) {
  const ProbeHeader& h = data.header;
  std::ostringstream os;
  char line[512];
  os << "clustersim probe summary";
  if (h.synthetic) os << "  ** SYNTHETIC DATA: generated from a model, not measured **";
  os << "\n";
  std::snprintf(line, sizeof line,
                "gpu:      %s x%d, sm_%d, %d SMs, SM clock %d MHz, memory clock %d MHz, "
                "%d-bit bus, %.1f GiB, L2 %.1f MiB\n",
                h.gpu_model.c_str(), h.gpu_count, h.compute_capability, h.sm_count,
                h.sm_clock_mhz, h.memory_clock_mhz, h.memory_bus_width_bits,
                static_cast<double>(h.memory_bytes) / (1 << 30),
                static_cast<double>(h.l2_cache_bytes) / (1 << 20));
  os << line;
  os << "software: driver " << (h.driver_version.empty() ? "?" : h.driver_version)
     << ", CUDA driver API " << h.cuda_driver_version << ", CUDA runtime "
     << h.cuda_runtime_version << ", NCCL " << h.nccl_version << ", cuBLAS " << h.cublas_version
     << "\n";
  os << "run:      " << h.date << " on " << h.host << ", probe " << h.probe_version << "\n";
  if (!h.command_line.empty()) os << "command:  " << h.command_line << "\n";
  if (!h.notes.empty()) os << "notes:    " << h.notes << "\n";

  auto us = [](double s) { return s * 1e6; };
  if (!data.gemm.empty()) {
    os << "\nGEMM (" << data.gemm.size() << " shapes; C[m x n] = A[m x k] B[k x n])\n";
    std::snprintf(line, sizeof line, "%-9s %7s %7s %7s %12s %12s %12s %9s  %s\n", "dtype", "m",
                  "n", "k", "median_us", "p10_us", "p90_us", "TFLOP/s", "label");
    os << line;
    for (const GemmPoint& p : data.gemm) {
      const double tflops = 2.0 * static_cast<double>(p.m) * static_cast<double>(p.n) *
                            static_cast<double>(p.k) / p.timing.median_s * 1e-12;
      std::snprintf(line, sizeof line, "%-9s %7lld %7lld %7lld %12.2f %12.2f %12.2f %9.1f  %s\n",
                    std::string(to_string(p.dtype)).c_str(), static_cast<long long>(p.m),
                    static_cast<long long>(p.n), static_cast<long long>(p.k),
                    us(p.timing.median_s), us(p.timing.p10_s), us(p.timing.p90_s), tflops,
                    p.label.c_str());
      os << line;
    }
  }
  if (!data.attention.empty()) {
    os << "\nAttention (" << data.attention.size() << " shapes)\n";
    std::snprintf(line, sizeof line, "%-4s %5s %6s %6s %5s %6s %6s %12s %12s %12s  %s\n", "dir",
                  "batch", "seq", "heads", "hdim", "causal", "fused", "median_us", "p10_us",
                  "p90_us", "implementation");
    os << line;
    for (const AttentionPoint& p : data.attention) {
      std::snprintf(line, sizeof line, "%-4s %5lld %6lld %6lld %5lld %6s %6s %12.2f %12.2f %12.2f  %s\n",
                    std::string(to_string(p.direction)).c_str(), static_cast<long long>(p.batch),
                    static_cast<long long>(p.seq_len), static_cast<long long>(p.heads),
                    static_cast<long long>(p.head_dim), p.causal ? "yes" : "no",
                    p.fused ? "yes" : "no", us(p.timing.median_s), us(p.timing.p10_s),
                    us(p.timing.p90_s), p.implementation.c_str());
      os << line;
    }
  }
  if (!data.memory.empty()) {
    os << "\nMemory-bound kernels (" << data.memory.size() << " points; bytes = read + written)\n";
    std::snprintf(line, sizeof line, "%-12s %14s %12s %12s %12s %9s\n", "op", "bytes",
                  "median_us", "p10_us", "p90_us", "GB/s");
    os << line;
    for (const MemoryPoint& p : data.memory) {
      std::snprintf(line, sizeof line, "%-12s %14lld %12.2f %12.2f %12.2f %9.1f\n",
                    std::string(to_string(p.op)).c_str(), static_cast<long long>(p.bytes),
                    us(p.timing.median_s), us(p.timing.p10_s), us(p.timing.p90_s),
                    static_cast<double>(p.bytes) / p.timing.median_s * 1e-9);
      os << line;
    }
  }
  if (!data.collectives.empty()) {
    os << "\nCollectives (" << data.collectives.size()
       << " points; bytes as nccl-tests' size, algbw = bytes / time)\n";
    std::snprintf(line, sizeof line, "%-15s %5s %-10s %14s %12s %12s %12s %9s\n", "op", "ranks",
                  "algo", "bytes", "median_us", "p10_us", "p90_us", "algbw_GB/s");
    os << line;
    for (const CollectivePoint& p : data.collectives) {
      std::snprintf(line, sizeof line, "%-15s %5d %-10s %14lld %12.2f %12.2f %12.2f %9.2f\n",
                    std::string(to_string(p.op)).c_str(), p.ranks, p.algorithm.c_str(),
                    static_cast<long long>(p.bytes), us(p.timing.median_s), us(p.timing.p10_s),
                    us(p.timing.p90_s), static_cast<double>(p.bytes) / p.timing.median_s * 1e-9);
      os << line;
    }
  }
  return os.str();
}

}  // namespace clustersim::calib
