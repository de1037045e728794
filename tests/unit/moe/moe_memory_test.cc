// SPDX-License-Identifier: Apache-2.0
// MoE memory per GPU (moe_memory_per_gpu) against hand-derived terms: the LM head's logits, the
// working set of full recomputation and ZeRO-3's gathered layer.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "workloads/moe.h"
#include "workloads/transformer.h"
#include "tests/unit/moe/moe_test_util.h"

namespace clustersim::work {
namespace {

using moe_test::load;
using moe_test::small_yaml;

MemoryEstimate memory(const std::vector<std::string>& overrides) {
  return moe_memory_per_gpu(load(small_yaml(), overrides));
}

// The logits (16-bit, plus their FP32 copy for the loss: 6 bytes a value) are split over the tp
// group whether attention runs tp or sp (head_time splits the vocabulary over it): doubling the
// vocabulary of the small plan (micro-batch 1, seq 2048, cp 1, tp 8) from 8192 to 16384 adds
// 2048 / 8 x 8192 x 6 = 12,582,912 bytes either way. Before 2026-12-05 sp added 8 times that.
TEST(MoeMemory, LogitsAreSplitOverTheTpGroupUnderSp) {
  const double added = 2048.0 / 8 * 8192 * 6;
  for (const char* attention : {"training.attention_parallel=sp", "training.attention_parallel=tp"}) {
    const double base = memory({attention}).activations.as_double();
    const double wide = memory({attention, "model.vocab=16384"}).activations.as_double();
    EXPECT_NEAR(wide - base, added, 2.0) << attention;
  }
}

// Full recomputation keeps each layer's input for every layer in flight and, while one layer is
// recomputed, that layer's full activations: with every layer an MoE layer, the activations
// without recomputation (4 layers in flight: pp 1, 4 micro-batches of 4 layers) less the logits,
// over 4. The input under sp: 2 bytes x 2048 / 8 tokens x h 1024 = 524,288 bytes; the logits
// 2048 / 8 x 8192 x 6 = 12,582,912. With a shared expert, whose activations the recomputed layer
// holds too. Before 2026-12-05 the recomputed layer held its input and the routed pairs only.
TEST(MoeMemory, FullRecomputeHoldsOneWholeLayer) {
  const double logits = 2048.0 / 8 * 8192 * 6;
  const double input = 2.0 * 2048 / 8 * 1024;
  const double none = memory({"model.moe.shared_experts=1", "training.recompute=none"}).activations.as_double();
  const double full = memory({"model.moe.shared_experts=1", "training.recompute=full"}).activations.as_double();
  const double whole_layer = (none - logits) / 4;
  EXPECT_NEAR(full, 4 * input + whole_layer + logits, 4.0);
}

// With a capacity factor, no expert keeps more than ceil(cf x mean) pairs: under zipf routing
// at capacity_factor 1 the busiest owner holds about the mean, not its kept pairs' 2.3x over the
// kept mean times the mean routed (which counted the dropped pairs: 32.4 GiB of activations on
// the Mixtral plan for at most 16.4; until 2026-12-06).
TEST(MoeMemory, DroppedPairsHoldNoActivations) {
  const double uniform = memory({}).activations.as_double();
  const double skewed = memory({"model.moe.routing=zipf", "model.moe.zipf_s=3"}).activations.as_double();
  const double capped =
      memory({"model.moe.routing=zipf", "model.moe.zipf_s=3", "model.moe.capacity_factor=1"}).activations.as_double();
  EXPECT_GT(skewed, 1.5 * uniform);
  EXPECT_LE(capped, 1.01 * uniform);
}

// ZeRO-3 gathers, beside the shards, two layers' 16-bit weights and one layer's gradients of what
// its groups shard (FP32 gradients, 4 bytes a value), and only that: the dense share of a layer (params / layers, pp 1) when dense
// DP > 1, an MoE layer's experts on the GPU when expert DP > 1. Before 2026-12-05 both whenever
// either group sharded.
TEST(MoeMemory, ZeroThreeGathersOnlyWhatIsSharded) {
  constexpr double kGiB = 1024.0 * 1024 * 1024;
  // 16 experts over ep 16: expert DP 1, the experts whole; dense DP 2 x tp 8 (sp) = 16.
  {
    const MemoryEstimate z = memory({"parallelism.zero_stage=3", "model.moe.experts=16", "parallelism.ep=16"});
    const double expert = z.expert_params_on_gpu, dense = z.params_on_gpu - expert;
    ASSERT_GT(expert, 0);
    EXPECT_NEAR(z.weights.as_double(), 2.0 * (dense / 16 + expert) + 2.0 * 2.0 * dense / 4, 4.0)
        << z.weights.as_double() / kGiB << " GiB";
    EXPECT_NEAR(z.gradients.as_double(), 4.0 * (dense / 16 + expert) + 4.0 * dense / 4, 4.0);
  }
  // 8 GPUs, attention tp 8: dense DP 1, the dense part whole; ep 4 of 8 experts: expert DP 2.
  {
    const MemoryEstimate z = memory({"parallelism.zero_stage=3", "cluster.gpus=8", "training.attention_parallel=tp",
                                     "parallelism.ep=4"});
    const double expert = z.expert_params_on_gpu, dense = z.params_on_gpu - expert;
    ASSERT_GT(dense, 0);
    EXPECT_NEAR(z.weights.as_double(), 2.0 * (dense + expert / 2) + 2.0 * 2.0 * expert / 4, 4.0)
        << z.weights.as_double() / kGiB << " GiB";
    EXPECT_NEAR(z.gradients.as_double(), 4.0 * (dense + expert / 2) + 4.0 * expert / 4, 4.0);
  }
}

// The most loaded GPU is the stage whose parts add up to the most, not the stage with the most
// parameters before sharding: two wide dense layers (ffn 262,144: 1.6B parameters, sharded over
// dense DP 16 under sp) on the first stage, two MoE layers of 64 experts (expert ffn 16,384) on
// the second, ep 8 over its 8 GPUs (expert DP 1: the experts whole). The second stage holds 8
// experts x 3 x 1024 x 16384 x 2 layers = 805,306,368 expert parameters a GPU, 12 bytes each of
// optimizer state at ZeRO-1. Until 2026-12-07 the first stage's count (1.2 GB) was reported.
TEST(MoeMemory, MostLoadedStageIsTheOneWithTheMostMemory) {
  const MemoryEstimate e = memory({"parallelism.pp=2", "parallelism.zero_stage=1", "model.ffn_hidden=262144",
                                   "model.moe.experts=64", "model.moe.expert_ffn_hidden=16384",
                                   "model.moe.first_dense_layers=2"});
  const double experts = 8.0 * 3 * 1024 * 16384 * 2;
  EXPECT_GE(e.optimizer.as_double(), 12.0 * experts);
  EXPECT_LT(e.optimizer.as_double(), 12.0 * experts * 1.05);
  EXPECT_GE(e.most_optimizer, e.optimizer);  // the optimizer step's time takes the largest
}

}  // namespace
}  // namespace clustersim::work
