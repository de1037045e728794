// SPDX-License-Identifier: Apache-2.0
// clustersim-probe's command line and sweep lists (CPU-only parts of kernels_probe).
#include "kernels_probe/probe_options.h"

#include <gtest/gtest.h>

#include <set>
#include <tuple>
#include <vector>

#include "kernels_probe/probe_shapes.h"

namespace clustersim::kernels_probe {
namespace {

bool parse(std::vector<const char*> args, ProbeOptions& out, std::string& error) {
  args.insert(args.begin(), "clustersim-probe");
  bool help = false;
  return parse_probe_options(static_cast<int>(args.size()), args.data(), out, error, help);
}

TEST(ProbeOptions, ParsesEveryFlag) {
  ProbeOptions o;
  std::string error;
  ASSERT_TRUE(parse({"-o", "h100.pb", "--quick", "--only", "gemm,collectives", "--max-bytes",
                     "256MiB", "--reps", "7", "--warmup", "0"},
                    o, error))
      << error;
  EXPECT_EQ(o.output, "h100.pb");
  EXPECT_TRUE(o.quick);
  EXPECT_TRUE(o.gemm);
  EXPECT_FALSE(o.attention);
  EXPECT_FALSE(o.memory);
  EXPECT_TRUE(o.collectives);
  EXPECT_EQ(o.max_bytes, uint64_t{256} << 20);
  EXPECT_EQ(o.reps, 7);
  EXPECT_EQ(o.warmup, 0);
  EXPECT_NE(o.command_line.find("--only gemm,collectives"), std::string::npos);
}

TEST(ProbeOptions, RejectsBadCommandLines) {
  ProbeOptions o;
  std::string error;
  EXPECT_FALSE(parse({"--quick"}, o, error));
  EXPECT_NE(error.find("-o FILE.pb is required"), std::string::npos);
  EXPECT_FALSE(parse({"-o", "x.pb", "--only", "gemm,tensor"}, o, error));
  EXPECT_NE(error.find("unknown part 'tensor'"), std::string::npos);
  EXPECT_FALSE(parse({"-o", "x.pb", "--max-bytes", "1TB"}, o, error));
  EXPECT_FALSE(parse({"-o", "x.pb", "--reps", "0"}, o, error));
  EXPECT_FALSE(parse({"-o", "x.pb", "--bogus"}, o, error));
  EXPECT_FALSE(parse({"-o"}, o, error));
  EXPECT_NE(error.find("needs a value"), std::string::npos);
}

// --quick lowers --reps and --warmup only where they are not given (until 2026-12-06 it capped
// given values too); an output whose directory is missing is refused before any measurement;
// a size past 2^50 bytes is refused (it wrapped to 1 GiB).
TEST(ProbeOptions, QuickKeepsGivenValuesAndTheOutputIsCheckedFirst) {
  ProbeOptions o;
  std::string error;
  ASSERT_TRUE(parse({"-o", "x.pb", "--quick"}, o, error)) << error;
  EXPECT_EQ(o.reps, 5);
  EXPECT_EQ(o.warmup, 2);
  ProbeOptions given;
  ASSERT_TRUE(parse({"-o", "x.pb", "--reps", "50", "--quick", "--warmup", "9"}, given, error)) << error;
  EXPECT_EQ(given.reps, 50);
  EXPECT_EQ(given.warmup, 9);
  EXPECT_NE(output_path_problem("no-such-directory-here/x.pb").find("does not exist or is not writable"),
            std::string::npos);
  EXPECT_NE(output_path_problem("/").find("is a directory"), std::string::npos);
  EXPECT_EQ(parse_byte_size("1099511627777GiB"), 0u);
  EXPECT_EQ(parse_byte_size("1048576GiB"), uint64_t{1} << 50);
}

TEST(ByteSize, ParsesBinaryUnits) {
  EXPECT_EQ(parse_byte_size("1GiB"), uint64_t{1} << 30);
  EXPECT_EQ(parse_byte_size("64KiB"), uint64_t{64} << 10);
  EXPECT_EQ(parse_byte_size("4096"), 4096u);
  EXPECT_EQ(parse_byte_size("12B"), 12u);
  EXPECT_EQ(parse_byte_size("GiB"), 0u);
  EXPECT_EQ(parse_byte_size("1GB"), 0u);  // decimal units are ambiguous here; refuse them
}

TEST(ProbeShapes, TransformerGemmsAreUniqueAndCoverEveryLayer) {
  const std::vector<GemmCase> full = transformer_gemm_cases(false);
  std::set<std::tuple<uint64_t, uint64_t, uint64_t, GemmPass>> seen;
  for (const GemmCase& g : full) {
    EXPECT_TRUE(seen.insert({g.m, g.n, g.k, g.pass}).second) << g.label;
    const bool named = g.label.find(g.pass == GemmPass::kForward    ? " fwd "
                                    : g.pass == GemmPass::kDataGrad ? " dgrad "
                                                                    : " wgrad ") != std::string::npos;
    EXPECT_TRUE(named) << g.label;
    EXPECT_GT(g.m * g.n * g.k, 0u) << g.label;
  }
  for (const char* layer : {"qkv", "attn_out", "mlp_up", "mlp_down", "lm_head"}) {
    bool found = false;
    for (const GemmCase& g : full) found = found || g.label.rfind(layer, 0) == 0;
    EXPECT_TRUE(found) << layer;
  }
  // MLP up at h=8192, TP 8, 2048 tokens: C[2048 x 4096] = X[2048 x 8192] W^T.
  bool mlp_up = false;
  for (const GemmCase& g : full) mlp_up = mlp_up || (g.m == 2048 && g.n == 4096 && g.k == 8192);
  EXPECT_TRUE(mlp_up);
  EXPECT_LT(transformer_gemm_cases(true).size(), 12u);
}

TEST(ProbeShapes, ByteSizesArePowersOfTwoUpToTheLimit) {
  const std::vector<uint64_t> sizes = byte_sizes(1024, uint64_t{1} << 30, false);
  ASSERT_EQ(sizes.size(), 21u);  // 2^10 .. 2^30
  EXPECT_EQ(sizes.front(), 1024u);
  EXPECT_EQ(sizes.back(), uint64_t{1} << 30);
  EXPECT_EQ(byte_sizes(1024, uint64_t{1} << 30, true).size(), 11u);
}

}  // namespace
}  // namespace clustersim::kernels_probe
