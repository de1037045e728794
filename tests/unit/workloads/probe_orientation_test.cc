// SPDX-License-Identifier: Apache-2.0
// The simulator times each GEMM in the orientation the probe measured it: a fitted tile of unequal
// sides (the synthetic H100's 128 x 256) quantises m x n and n x m differently, so a backward GEMM
// timed as the transpose of the probed one is timed off the fit (2026-12-06 review).
#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "kernels_probe/probe_shapes.h"
#include "workloads/transformer.h"

namespace clustersim::work {
namespace {

TEST(ProbeOrientation, BackwardGemmsAreTheProbedShapes) {
  using Shape = std::tuple<uint64_t, uint64_t, uint64_t>;
  std::set<Shape> data_grads, weight_grads, forwards;
  for (const kernels_probe::GemmCase& c : kernels_probe::transformer_gemm_cases(false)) {
    const Shape s{c.m, c.n, c.k};
    if (c.pass == kernels_probe::GemmPass::kForward) forwards.insert(s);
    if (c.pass == kernels_probe::GemmPass::kDataGrad) data_grads.insert(s);
    if (c.pass == kernels_probe::GemmPass::kWeightGrad) weight_grads.insert(s);
  }
  ASSERT_FALSE(forwards.empty());
  int checked = 0;
  for (const Shape& f : forwards) {
    const auto [m, n, k] = f;
    const BackwardGemms b = backward_gemms({"probed", static_cast<int64_t>(m), static_cast<int64_t>(n),
                                            static_cast<int64_t>(k)});
    const auto as_shape = [](const GemmShape& g) {
      return Shape{static_cast<uint64_t>(g.m), static_cast<uint64_t>(g.n), static_cast<uint64_t>(g.k)};
    };
    EXPECT_TRUE(data_grads.count(as_shape(b.data_grad))) << m << " " << n << " " << k;
    EXPECT_TRUE(weight_grads.count(as_shape(b.weight_grad))) << m << " " << n << " " << k;
    ++checked;
  }
  EXPECT_GT(checked, 100);
}

}  // namespace
}  // namespace clustersim::work
