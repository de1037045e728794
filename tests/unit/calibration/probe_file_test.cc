// SPDX-License-Identifier: Apache-2.0
// Probe files: round trip through the schema, and rejection of bad, cut and foreign files.
#include "calibration/probe_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "calibration/probe_data.pb.h"
#include "sim/core/error.h"
#include "tests/unit/scratch_dir.h"

namespace clustersim::calib {
namespace {

Timing timing(double median_s) {
  Timing t;
  t.median_s = median_s;
  t.min_s = 0.9 * median_s;
  t.max_s = 1.2 * median_s;
  t.p10_s = 0.95 * median_s;
  t.p90_s = 1.1 * median_s;
  t.stddev_s = 0.05 * median_s;
  t.repetitions = 20;
  t.warmup = 5;
  t.launches_per_sample = 4;
  return t;
}

ProbeData sample_probe() {
  ProbeData d;
  ProbeHeader& h = d.header;
  h.gpu_model = "NVIDIA H100 80GB HBM3";
  h.gpu_count = 8;
  h.driver_version = "570.124.06";
  h.cuda_driver_version = 12080;
  h.cuda_runtime_version = 13000;
  h.nccl_version = 22809;
  h.cublas_version = 130000;
  h.sm_count = 132;
  h.compute_capability = 90;
  h.sm_clock_mhz = 1980;
  h.memory_clock_mhz = 2619;
  h.memory_bus_width_bits = 5120;
  h.memory_bytes = 80ull << 30;
  h.l2_cache_bytes = 50ull << 20;
  h.date = "2025-03-01T10:00:00Z";
  h.host = "node-17";
  h.probe_version = "clustersim-probe 0.1.0";
  h.command_line = "clustersim-probe -o h100.pb";
  h.notes = "attention: unfused chain";
  d.gemm.push_back({8192, 3072, 8192, DType::kBf16, "qkv fwd h=8192 tp=8 t=8192", timing(1.2e-3)});
  d.gemm.push_back({4096, 4096, 4096, DType::kFp8E4m3, "square", timing(0.2e-3)});
  AttentionPoint a;
  a.batch = 1;
  a.seq_len = 4096;
  a.heads = 16;
  a.head_dim = 128;
  a.direction = Direction::kBackward;
  a.implementation = "cublas-strided-batched-bmm+softmax";
  a.timing = timing(2.5e-3);
  d.attention.push_back(a);
  d.memory.push_back({MemoryOpKind::kLayerNorm, 1 << 24, DType::kBf16, 4096, timing(8e-6)});
  CollectivePoint c;
  c.op = CollectiveKind::kReduceScatter;
  c.ranks = 8;
  c.bytes = 1 << 20;
  c.algorithm = "Ring";
  c.timing = timing(30e-6);
  d.collectives.push_back(c);
  return d;
}

// The message of the BadInput thrown by parsing `bytes`, or "" when it parses.
std::string rejection(std::string_view bytes) {
  try {
    parse_probe_data(bytes, "test.pb");
  } catch (const BadInput& e) {
    return e.what();
  }
  return "";
}

TEST(ProbeFile, RoundTripsThroughTheSchema) {
  const ProbeData in = sample_probe();
  const ProbeData out = parse_probe_data(serialize_probe_data(in), "test.pb");
  EXPECT_EQ(out.source, "test.pb");
  EXPECT_EQ(out.header.gpu_model, in.header.gpu_model);
  EXPECT_EQ(out.header.gpu_count, 8);
  EXPECT_EQ(out.header.driver_version, "570.124.06");
  EXPECT_EQ(out.header.nccl_version, 22809u);
  EXPECT_EQ(out.header.memory_bytes, 80ull << 30);
  EXPECT_EQ(out.header.date, in.header.date);
  EXPECT_EQ(out.header.notes, in.header.notes);
  EXPECT_FALSE(out.header.synthetic);
  ASSERT_EQ(out.gemm.size(), 2u);
  EXPECT_EQ(out.gemm[0].m, 8192);
  EXPECT_EQ(out.gemm[0].n, 3072);
  EXPECT_EQ(out.gemm[1].dtype, DType::kFp8E4m3);
  EXPECT_EQ(out.gemm[0].label, in.gemm[0].label);
  EXPECT_DOUBLE_EQ(out.gemm[0].timing.median_s, 1.2e-3);
  EXPECT_DOUBLE_EQ(out.gemm[0].timing.p90_s, 1.1 * 1.2e-3);
  EXPECT_EQ(out.gemm[0].timing.launches_per_sample, 4);
  ASSERT_EQ(out.attention.size(), 1u);
  EXPECT_EQ(out.attention[0].direction, Direction::kBackward);
  EXPECT_FALSE(out.attention[0].fused);
  EXPECT_EQ(out.attention[0].implementation, in.attention[0].implementation);
  ASSERT_EQ(out.memory.size(), 1u);
  EXPECT_EQ(out.memory[0].op, MemoryOpKind::kLayerNorm);
  EXPECT_EQ(out.memory[0].row_elements, 4096);
  ASSERT_EQ(out.collectives.size(), 1u);
  EXPECT_EQ(out.collectives[0].op, CollectiveKind::kReduceScatter);
  EXPECT_EQ(out.collectives[0].algorithm, "Ring");
  EXPECT_EQ(out.collectives[0].protocol, "auto");  // unset reads as NCCL's default
  EXPECT_EQ(out.collectives[0].nodes, 1);
}

TEST(ProbeFile, ReadsAFileWrittenToDisk) {
  const auto path = std::filesystem::path(::testing::TempDir()) / "probe_file_test.pb";
  write_probe_file(sample_probe(), path);
  const ProbeData d = read_probe_file(path);
  EXPECT_EQ(d.measurement_count(), 5u);
  EXPECT_EQ(d.source, path.string());
  std::filesystem::remove(path);
}

TEST(ProbeFile, SummaryNamesTheMachineAndEveryKind) {
  const std::string text = format_probe_summary(sample_probe());
  EXPECT_NE(text.find("NVIDIA H100 80GB HBM3 x8"), std::string::npos) << text;
  EXPECT_NE(text.find("GEMM (2 shapes"), std::string::npos) << text;
  EXPECT_NE(text.find("Attention (1 shapes)"), std::string::npos) << text;
  EXPECT_NE(text.find("layernorm"), std::string::npos) << text;
  EXPECT_NE(text.find("reduce_scatter"), std::string::npos) << text;
  EXPECT_EQ(text.find("SYNTHETIC"), std::string::npos);
}

TEST(ProbeFile, RejectsAMissingFile) {
  try {
    read_probe_file("/nonexistent/dir/probe.pb");
    FAIL() << "expected BadInput";
  } catch (const BadInput& e) {
    EXPECT_NE(std::string(e.what()).find("no such probe file"), std::string::npos) << e.what();
    EXPECT_EQ(e.errors().front().file, "/nonexistent/dir/probe.pb");
  }
}

// A symbolic link loop is not a missing file: the reason is given (before: "no such probe file").
TEST(ProbeFile, APathThatCannotBeLookedUpSaysWhy) {
  const testing::ScratchDir dir("probe-path");
  ASSERT_TRUE(dir.ok());
  const std::filesystem::path path = dir.file("loop.pb");
  std::filesystem::create_symlink("loop.pb", path);
  try {
    read_probe_file(path);
    ADD_FAILURE() << "expected BadInput";
  } catch (const BadInput& e) {
    EXPECT_NE(std::string(e.what()).find("cannot be read (Too many levels of symbolic links)"), std::string::npos)
        << e.what();
  }
}

TEST(ProbeFile, RejectsAnEmptyFile) {
  EXPECT_NE(rejection("").find("empty"), std::string::npos);
}

TEST(ProbeFile, RejectsEveryTruncation) {
  const std::string bytes = serialize_probe_data(sample_probe());
  // Every proper prefix is rejected: mid-field cuts fail to parse, cuts at a record boundary
  // miss the trailing measurement_count.
  for (size_t len = 1; len < bytes.size(); ++len) {
    const std::string msg = rejection(std::string_view(bytes).substr(0, len));
    EXPECT_FALSE(msg.empty()) << "prefix of " << len << " bytes was accepted";
  }
}

TEST(ProbeFile, SaysTruncatedWhenCutAtARecordBoundary) {
  const std::string full = serialize_probe_data(sample_probe());
  // One record fewer than the trailing count declares: what a cut after the 4th record looks like.
  clustersim::probe::ProbeFile cut;
  ASSERT_TRUE(cut.ParseFromString(full));
  cut.mutable_measurements()->RemoveLast();
  const std::string msg = rejection(cut.SerializeAsString());
  EXPECT_NE(msg.find("truncated"), std::string::npos) << msg;
  EXPECT_NE(msg.find("measurement_count"), std::string::npos) << msg;
}

TEST(ProbeFile, SaysWhenItHoldsMoreThanItDeclares) {
  // One record more than the count: not "truncated" (two files joined, or no count written).
  clustersim::probe::ProbeFile more;
  ASSERT_TRUE(more.ParseFromString(serialize_probe_data(sample_probe())));
  *more.add_measurements() = more.measurements(0);
  const std::string msg = rejection(more.SerializeAsString());
  EXPECT_NE(msg.find("measurement_count: the file holds 6 measurements but declares 5"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("truncated"), std::string::npos) << msg;
}

TEST(ProbeFile, ShowsSizesAsTheFileHoldsThem) {
  // An unsigned -1 is shown as the 2^64 - 1 the file holds, with the range a probe can measure.
  clustersim::probe::ProbeFile f;
  ASSERT_TRUE(f.ParseFromString(serialize_probe_data(sample_probe())));
  f.mutable_measurements(0)->mutable_gemm()->set_m(~uint64_t{0});
  f.mutable_measurements(4)->mutable_collective()->set_ranks(0);
  const std::string msg = rejection(f.SerializeAsString());
  EXPECT_NE(msg.find("measurements[0].gemm.m: m must be a whole number from 1 to 16777216, got 18446744073709551615"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("measurements[4].collective.ranks: rank count must be a whole number"), std::string::npos) << msg;
}

TEST(ProbeFile, ADirectoryIsNotAProbeFile) {
  try {
    read_probe_file(std::filesystem::temp_directory_path());
    FAIL() << "expected BadInput";
  } catch (const BadInput& e) {
    EXPECT_NE(std::string(e.what()).find("is a directory; expected a probe file"), std::string::npos) << e.what();
  }
  // A device exists but is no file to read to its end (before: "no such probe file").
  if (std::filesystem::exists("/dev/zero")) {
    try {
      read_probe_file("/dev/zero");
      FAIL() << "expected BadInput";
    } catch (const BadInput& e) {
      EXPECT_NE(std::string(e.what()).find("/dev/zero: is not a regular file"), std::string::npos) << e.what();
    }
  }
}

// A regular file whose read fails part way (/proc/self/mem: EIO at offset 0) is bad input; the
// read threw std::ios_base::failure, an internal error, until 2026-12-05.
TEST(ProbeFile, AReadErrorIsBadInput) {
  if (!std::filesystem::is_regular_file("/proc/self/mem")) GTEST_SKIP() << "no /proc/self/mem";
  try {
    read_probe_file("/proc/self/mem");
    FAIL() << "expected BadInput";
  } catch (const BadInput& e) {
    EXPECT_NE(std::string(e.what()).find("/proc/self/mem: cannot be read"), std::string::npos) << e.what();
  }
}

TEST(ProbeFile, RejectsForeignData) {
  EXPECT_NE(rejection("name,value\nfoo,1\n").find("not"), std::string::npos);
  EXPECT_NE(rejection(std::string("\x89PNG\r\n\x1a\n", 8)).find("not"), std::string::npos);
  // Valid protobuf of another message: field 1 is a string, but not our format marker.
  clustersim::probe::Header other;
  other.set_gpu_model("something else");
  other.set_gpu_count(3);
  const std::string msg = rejection(other.SerializeAsString());
  EXPECT_NE(msg.find("not a clustersim probe file"), std::string::npos) << msg;
}

TEST(ProbeFile, RejectsAnotherSchemaVersion) {
  clustersim::probe::ProbeFile f;
  ASSERT_TRUE(f.ParseFromString(serialize_probe_data(sample_probe())));
  f.set_version(2);
  const std::string msg = rejection(f.SerializeAsString());
  EXPECT_NE(msg.find("version 2 is not supported"), std::string::npos) << msg;
}

TEST(ProbeFile, ListsEveryMissingHeaderFieldWithItsPath) {
  ProbeData d = sample_probe();
  d.header.gpu_model.clear();
  d.header.sm_count = 0;
  d.header.memory_bytes = 0;  // skipped the fit's memory check until 2026-12-06
  d.header.date.clear();
  try {
    parse_probe_data(serialize_probe_data(d), "test.pb");
    FAIL() << "expected BadInput";
  } catch (const BadInput& e) {
    ASSERT_EQ(e.errors().size(), 4u) << e.what();
    EXPECT_EQ(e.errors()[0].key_path, "header.gpu_model");
    EXPECT_EQ(e.errors()[1].key_path, "header.sm_count");
    EXPECT_EQ(e.errors()[2].key_path, "header.memory_bytes");
    EXPECT_EQ(e.errors()[3].key_path, "header.date");
    EXPECT_EQ(e.errors()[0].file, "test.pb");
  }
}

// Header text that goes into a fitted profile's name is one line (a date with a newline ended up
// inside the written name until 2026-12-06).
TEST(ProbeFile, HeaderTextIsOneLine) {
  ProbeData d = sample_probe();
  d.header.date = "2025-03-01\nyesterday";
  const std::string msg = rejection(serialize_probe_data(d));
  EXPECT_NE(msg.find("header.date: must be one line of text"), std::string::npos) << msg;
}

// The date opens with a calendar date (a fitted profile's name takes its first 10 characters:
// "(fitted yesterday)" until 2026-12-07); a time may follow.
TEST(ProbeFile, HeaderDateIsAnIsoDate) {
  for (const char* bad : {"yesterday", "2026-13-01", "2026-02-30", "2025-02-29T00:00:00Z", "26-12-04", "2026/12/04",
                          "2026-12-04x", "2026-12-04T"}) {
    ProbeData d = sample_probe();
    d.header.date = bad;
    const std::string msg = rejection(serialize_probe_data(d));
    EXPECT_NE(msg.find("header.date: must be an ISO 8601 date, YYYY-MM-DD"), std::string::npos) << bad << ": " << msg;
  }
  for (const char* good : {"2026-12-04", "2026-12-04T10:00:00Z", "2024-02-29 10:00", "2025-01-01T00:00:00Z"}) {
    ProbeData d = sample_probe();
    d.header.date = good;
    EXPECT_EQ(parse_probe_data(serialize_probe_data(d), "test.pb").header.date, good);
  }
}

// Header counts are read as the file holds them (unsigned): 4294967295 GPUs was reported as -1.
TEST(ProbeFile, HeaderCountsAreReportedAsWritten) {
  clustersim::probe::ProbeFile f;
  ASSERT_TRUE(f.ParseFromString(serialize_probe_data(sample_probe())));
  f.mutable_header()->set_gpu_count(4294967295u);
  f.mutable_header()->set_sm_count(4000000000u);
  const std::string msg = rejection(f.SerializeAsString());
  EXPECT_NE(msg.find("header.gpu_count: GPU count must be a whole number from 1 to 65536, got 4294967295"),
            std::string::npos) << msg;
  EXPECT_NE(msg.find("header.sm_count: SM count must be a whole number from 1 to 65536, got 4000000000"),
            std::string::npos) << msg;
}

TEST(ProbeFile, RejectsNonPositiveTimingsWithTheRecordPath) {
  ProbeData d = sample_probe();
  d.memory[0].timing.median_s = 0;
  d.memory[0].timing.min_s = -1e-6;
  try {
    parse_probe_data(serialize_probe_data(d), "test.pb");
    FAIL() << "expected BadInput";
  } catch (const BadInput& e) {
    const std::string msg = e.what();
    // Records are written gemm, attention, memory, collectives: the memory point is index 3.
    EXPECT_NE(msg.find("measurements[3].timing.median_s: median time must be a positive number"),
              std::string::npos) << msg;
    EXPECT_NE(msg.find("measurements[3].timing.min_s"), std::string::npos) << msg;
  }
}

// Timings out of order say what they are (review, 2026-12-07: the message gave no values).
TEST(ProbeFile, TimingsOutOfOrderShowTheirValues) {
  ProbeData d = sample_probe();
  d.memory[0].timing.min_s = 3e-6;
  d.memory[0].timing.median_s = 2e-6;
  d.memory[0].timing.max_s = 4e-6;
  try {
    parse_probe_data(serialize_probe_data(d), "test.pb");
    FAIL() << "expected BadInput";
  } catch (const BadInput& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("measurements[3].timing: expected min_s <= median_s <= max_s; got 3e-06, 2e-06, 4e-06"),
              std::string::npos) << msg;
  }
}

// Every point names its data type, as GEMMs must (before 2026-12-05 attention, memory and
// collective points without one were read, the attention ones fitted as a series of their own).
TEST(ProbeFile, RejectsAMissingDataTypeWithTheRecordPath) {
  ProbeData d = sample_probe();
  d.attention[0].dtype = DType::kUnspecified;
  d.memory[0].dtype = DType::kUnspecified;
  d.collectives[0].dtype = DType::kUnspecified;
  const std::string msg = rejection(serialize_probe_data(d));
  // Records are written gemm (0, 1), attention (2), memory (3), collectives (4).
  EXPECT_NE(msg.find("measurements[2].attention.dtype: data type is missing"), std::string::npos) << msg;
  EXPECT_NE(msg.find("measurements[3].memory.dtype: data type is missing"), std::string::npos) << msg;
  EXPECT_NE(msg.find("measurements[4].collective.dtype: data type is missing"), std::string::npos) << msg;
}

// The spread statistics are the probe's own over its samples: none negative, p10 <= p90, and a
// sample times at least one launch. Before 2026-12-05 they were read as written and a launch count
// of 0 was taken as 1.
TEST(ProbeFile, RejectsImpossibleTimingStatisticsWithTheRecordPath) {
  ProbeData d = sample_probe();
  d.gemm[0].timing.p10_s = -1e-6;
  d.attention[0].timing.launches_per_sample = 0;
  d.memory[0].timing.p10_s = 2 * d.memory[0].timing.p90_s;
  d.collectives[0].timing.stddev_s = -1;
  const std::string msg = rejection(serialize_probe_data(d));
  // Records are written gemm (0, 1), attention (2), memory (3), collectives (4).
  EXPECT_NE(msg.find("test.pb: measurements[0].timing.p10_s: must be a number of seconds of 0 or more, got -1e-06"),
            std::string::npos) << msg;
  EXPECT_NE(msg.find("test.pb: measurements[2].timing.launches_per_sample: launches per sample must be a whole "
                     "number from 1 to 1048576, got 0"),
            std::string::npos) << msg;
  EXPECT_NE(msg.find("test.pb: measurements[3].timing.p10_s: expected p10_s <= p90_s, got 1.76e-05 > 8.8e-06"),
            std::string::npos) << msg;
  EXPECT_NE(msg.find("test.pb: measurements[4].timing.stddev_s: must be a number of seconds of 0 or more, got -1"),
            std::string::npos) << msg;
  // Percentiles outside the samples' extremes (read until 2026-12-07; QA).
  ProbeData outside = sample_probe();
  outside.gemm[0].timing.p90_s = 2 * outside.gemm[0].timing.max_s;
  outside.memory[0].timing.p10_s = 0;
  const std::string out_msg = rejection(serialize_probe_data(outside));
  EXPECT_NE(out_msg.find("test.pb: measurements[0].timing.p90_s: expected min_s <= p10_s <= p90_s <= max_s, got "),
            std::string::npos) << out_msg;
  EXPECT_NE(out_msg.find("test.pb: measurements[3].timing.p10_s: expected min_s <= p10_s <= p90_s <= max_s, got "),
            std::string::npos) << out_msg;
  // Percentiles not recorded (both 0, proto3's unset) pass, as before.
  ProbeData unset = sample_probe();
  unset.gemm[0].timing.p10_s = 0;
  unset.gemm[0].timing.p90_s = 0;
  EXPECT_EQ(rejection(serialize_probe_data(unset)), "");
  // The probe's own statistics pass: equal percentiles (one sample) and no spread.
  ProbeData flat = sample_probe();
  flat.gemm[0].timing.p10_s = flat.gemm[0].timing.p90_s;
  flat.gemm[0].timing.stddev_s = 0;
  EXPECT_EQ(rejection(serialize_probe_data(flat)), "");
}

// A data type this build does not know is said as such, not as missing (until 2026-12-07; QA).
TEST(ProbeFile, AnUnknownDataTypeIsNotCalledMissing) {
  clustersim::probe::ProbeFile f;
  ASSERT_TRUE(f.ParseFromString(serialize_probe_data(sample_probe())));
  f.mutable_measurements(0)->mutable_gemm()->set_dtype(static_cast<clustersim::probe::DType>(7));
  const std::string msg = rejection(f.SerializeAsString());
  EXPECT_NE(msg.find("measurements[0].gemm.dtype: unknown data type 7; expected 1 (bf16), 2 (fp16), 3 (fp32) or 4 "
                     "(fp8_e4m3)"),
            std::string::npos) << msg;
}

TEST(ProbeFile, RejectsAKindThatContradictsTheShape) {
  clustersim::probe::ProbeFile f;
  ASSERT_TRUE(f.ParseFromString(serialize_probe_data(sample_probe())));
  f.mutable_measurements(0)->set_kind(clustersim::probe::KIND_MEMORY);
  const std::string msg = rejection(f.SerializeAsString());
  EXPECT_NE(msg.find("measurements[0].kind: does not match the gemm shape"), std::string::npos) << msg;
}

TEST(ProbeFile, RejectsAFileWithoutMeasurements) {
  ProbeData d = sample_probe();
  d.gemm.clear();
  d.attention.clear();
  d.memory.clear();
  d.collectives.clear();
  EXPECT_NE(rejection(serialize_probe_data(d)).find("no measurements"), std::string::npos);
}

}  // namespace
}  // namespace clustersim::calib
