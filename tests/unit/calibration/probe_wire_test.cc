// SPDX-License-Identifier: Apache-2.0
// The probe's hand-written protobuf encoder, checked against the libprotobuf-generated parser.
#include "kernels_probe/probe_wire.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "calibration/probe_data.pb.h"
#include "calibration/probe_file.h"
#include "kernels_probe/probe_record.h"
#include "sim/core/error.h"

namespace clustersim::kernels_probe {
namespace {

namespace pb = ::clustersim::probe;

TimingStats stats(double median_s) {
  return summarize_samples({median_s * 0.98, median_s, median_s * 1.05}, 3, 2);
}

ProbeRun sample_run() {
  ProbeRun run;
  Header& h = run.header;
  h.gpu_model = "NVIDIA A100-SXM4-80GB";
  h.gpu_count = 4;
  h.driver_version = "535.104.05";
  h.cuda_driver_version = 12020;
  h.cuda_runtime_version = 13000;
  h.nccl_version = 22809;
  h.cublas_version = 130001;
  h.sm_count = 108;
  h.compute_capability = 80;
  h.sm_clock_mhz = 1410;
  h.memory_clock_mhz = 1593;
  h.memory_bus_width_bits = 5120;
  h.memory_bytes = 85899345920ull;  // > 2^32: exercises multi-byte varints
  h.l2_cache_bytes = 41943040;
  h.date = "2025-02-03T04:05:06Z";
  h.host = "gpu-box";
  h.probe_version = "clustersim-probe 0.1.0";
  h.command_line = "clustersim-probe -o a100.pb --quick";
  h.notes = "gemm fp8: skipped, needs compute capability 8.9 or newer (have 80)";

  Record g;
  g.kind = Kind::kGemm;
  g.gemm = {2048, 12288, 4096, DType::kBf16, "qkv fwd h=4096 tp=1 t=2048"};
  g.timing = stats(310e-6);
  run.records.push_back(g);

  Record a;
  a.kind = Kind::kAttention;
  a.attention = {1, 2048, 16, 128, false, false, Direction::kBackward, DType::kBf16,
                 "cublas-strided-batched-bmm+softmax"};
  a.timing = stats(1.1e-3);
  run.records.push_back(a);

  Record m;
  m.kind = Kind::kMemory;
  m.memory = {MemoryOp::kElementwise, 3u << 20, DType::kBf16, 0};
  m.timing = stats(4e-6);
  run.records.push_back(m);

  Record c;
  c.kind = Kind::kCollective;
  c.collective = {Collective::kAllToAll, 4, uint64_t{1} << 30, DType::kBf16, "p2p", "auto", 1};
  c.timing = stats(6e-3);
  c.device = 2;
  run.records.push_back(c);
  return run;
}

TEST(WireWriter, MatchesTheProtobufEncodingOfScalars) {
  WireWriter w;
  w.uint(1, 150);         // the protobuf docs' example: 08 96 01
  w.uint(2, 0);           // default: not written
  w.string(3, "hi");      // 1a 02 68 69
  w.boolean(4, true);     // 20 01
  w.float64(5, 1.0);      // 29 + 00 00 00 00 00 00 f0 3f
  const std::string expected("\x08\x96\x01\x1a\x02hi\x20\x01\x29\x00\x00\x00\x00\x00\x00\xf0\x3f", 18);
  EXPECT_EQ(w.bytes(), expected);
}

TEST(WireWriter, EncodesLargeVarintsAndNestedMessages) {
  WireWriter inner;
  inner.uint(13, std::numeric_limits<uint64_t>::max());
  WireWriter outer;
  outer.message(3, inner);
  pb::ProbeFile f;
  ASSERT_TRUE(f.ParseFromString(outer.bytes()));
  EXPECT_EQ(f.header().memory_bytes(), std::numeric_limits<uint64_t>::max());
}

TEST(ProbeEncoder, ParsesWithTheGeneratedParser) {
  const ProbeRun run = sample_run();
  pb::ProbeFile f;
  ASSERT_TRUE(f.ParseFromString(encode_probe_run(run)));
  EXPECT_EQ(f.format(), "clustersim-probe");
  EXPECT_EQ(f.version(), 1u);
  EXPECT_EQ(f.measurement_count(), 4u);
  EXPECT_EQ(f.header().gpu_model(), "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(f.header().memory_bytes(), 85899345920ull);
  EXPECT_EQ(f.header().compute_capability(), 80u);
  EXPECT_FALSE(f.header().synthetic());
  ASSERT_EQ(f.measurements_size(), 4);
  EXPECT_EQ(f.measurements(0).kind(), pb::KIND_GEMM);
  EXPECT_EQ(f.measurements(0).shape_case(), pb::Measurement::kGemm);
  EXPECT_EQ(f.measurements(0).gemm().n(), 12288u);
  EXPECT_EQ(f.measurements(0).gemm().dtype(), pb::DTYPE_BF16);
  EXPECT_DOUBLE_EQ(f.measurements(0).timing().median_s(), 310e-6);
  EXPECT_EQ(f.measurements(0).timing().repetitions(), 3u);
  EXPECT_EQ(f.measurements(0).timing().launches_per_sample(), 2u);
  EXPECT_EQ(f.measurements(1).attention().direction(), pb::DIRECTION_BACKWARD);
  EXPECT_EQ(f.measurements(1).attention().seq_len(), 2048u);
  EXPECT_EQ(f.measurements(2).memory().op(), pb::MEMORY_OP_ELEMENTWISE);
  EXPECT_EQ(f.measurements(3).collective().op(), pb::COLLECTIVE_ALL_TO_ALL);
  EXPECT_EQ(f.measurements(3).collective().bytes(), uint64_t{1} << 30);
  EXPECT_EQ(f.measurements(3).device(), 2u);
  // Byte-identical to what libprotobuf writes for the same message: same field order, same
  // omission of defaults.
  EXPECT_EQ(f.SerializeAsString(), encode_probe_run(run));
}

TEST(ProbeEncoder, IsAcceptedByTheCalibrationReader) {
  const calib::ProbeData d = calib::parse_probe_data(encode_probe_run(sample_run()), "a100.pb");
  EXPECT_EQ(d.header.gpu_count, 4);
  EXPECT_EQ(d.gemm.size(), 1u);
  EXPECT_EQ(d.attention.size(), 1u);
  EXPECT_EQ(d.memory.size(), 1u);
  ASSERT_EQ(d.collectives.size(), 1u);
  EXPECT_EQ(d.collectives[0].algorithm, "p2p");
}

TEST(ProbeEncoder, RecordWithoutTimingIsRejectedByTheReader) {
  ProbeRun run = sample_run();
  run.records[1].timing = TimingStats{};
  try {
    calib::parse_probe_data(encode_probe_run(run), "a100.pb");
    FAIL() << "expected BadInput";
  } catch (const BadInput& e) {
    EXPECT_NE(std::string(e.what()).find("measurements[1].timing"), std::string::npos) << e.what();
  }
}

TEST(ProbeSummary, ListsEveryRecord) {
  const std::string text = format_probe_run(sample_run());
  EXPECT_NE(text.find("NVIDIA A100-SXM4-80GB x4"), std::string::npos) << text;
  EXPECT_NE(text.find("qkv fwd h=4096 tp=1 t=2048"), std::string::npos) << text;
  EXPECT_NE(text.find("elementwise"), std::string::npos) << text;
  EXPECT_NE(text.find("all_to_all"), std::string::npos) << text;
}

TEST(SampleStats, MedianPercentilesAndSpread) {
  const TimingStats t = summarize_samples({5, 1, 4, 2, 3}, 2, 8);
  EXPECT_DOUBLE_EQ(t.median_s, 3);
  EXPECT_DOUBLE_EQ(t.min_s, 1);
  EXPECT_DOUBLE_EQ(t.max_s, 5);
  EXPECT_DOUBLE_EQ(t.p10_s, 1.4);  // 10% of the way through 4 gaps: 1 + 0.4
  EXPECT_DOUBLE_EQ(t.p90_s, 4.6);
  EXPECT_DOUBLE_EQ(t.stddev_s, std::sqrt(2.0));
  EXPECT_EQ(t.repetitions, 5u);
  EXPECT_EQ(t.warmup, 2u);
  EXPECT_EQ(t.launches_per_sample, 8u);
}

TEST(ProbeHeader, KernelDriverVersionFromProcLine) {
  // The proprietary module's line, and the open module's, which has "for x86_64" before the
  // version (an H200 machine here, 2026-12-04: the probe recorded "for" as the driver).
  EXPECT_EQ(kernel_driver_version_from("NVRM version: NVIDIA UNIX x86_64 Kernel Module  570.124.06  Wed Feb 26 2025"),
            "570.124.06");
  EXPECT_EQ(kernel_driver_version_from(
                "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (dvs-builder@U22)"),
            "580.159.04");
  EXPECT_EQ(kernel_driver_version_from("NVRM version: something else"), "");
  EXPECT_EQ(kernel_driver_version_from("NVIDIA UNIX Kernel Module for x86_64 Release Build"), "");
  EXPECT_EQ(kernel_driver_version_from(""), "");
}

}  // namespace
}  // namespace clustersim::kernels_probe
