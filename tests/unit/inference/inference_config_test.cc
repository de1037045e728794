// SPDX-License-Identifier: Apache-2.0
// The `inference` section: strict reading, the checks between its keys and the model, and the
// errors a user sees for bad settings.
#include "sim/core/inference_config.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/unit/inference/inference_test_util.h"

namespace clustersim {
namespace {

using testing::bad_input_of;
using testing::serving;
using testing::serving_without;

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(InferenceConfig, ReadsEveryKeyWithoutATrainingSection) {
  const ScenarioConfig cfg = serving();
  ASSERT_TRUE(cfg.inference.has_value());
  const InferenceConfig& in = *cfg.inference;
  EXPECT_EQ(in.mode, ServingMode::kColocated);
  EXPECT_EQ(in.seed, 7u);
  EXPECT_EQ(in.requests, 200);
  EXPECT_DOUBLE_EQ(in.rate_per_s, 400);
  EXPECT_EQ(in.prompt.dist, LengthDist::kUniform);
  EXPECT_EQ(in.prompt.max, 512);
  EXPECT_EQ(in.max_batch, 64);
  EXPECT_EQ(in.tpot_limit, Time::ms(50));
  EXPECT_EQ(in.moe.experts, 8);
  EXPECT_EQ(in.moe.top_k, 2);
  ASSERT_TRUE(in.colocated.has_value());
  EXPECT_EQ(in.colocated->ep, 8);
  EXPECT_DOUBLE_EQ(in.colocated->price_per_gpu_hour, 2.5);
  EXPECT_FALSE(in.attention.has_value());
}

TEST(InferenceConfig, TrainingStillRequiredWithoutInference) {
  const std::string msg = bad_input_of([] {
    serving({}, "cluster: {gpus: 8}\nmodel: {layers: 2, hidden: 64, heads: 4, seq_len: 128, vocab: 100}\n");
  });
  EXPECT_TRUE(has(msg, "training: required section is missing")) << msg;
}

TEST(InferenceConfig, UnknownKeyNamesItsPath) {
  const std::string msg = bad_input_of([] { serving({"inference.max_btach=3"}); });
  EXPECT_TRUE(has(msg, "inference.max_btach")) << msg;
}

// An empty trace or pool GPU is a mistake, not the key left out: '' served Poisson arrivals and ran
// the pool on cluster.gpu without a word until 2026-12-05.
TEST(InferenceConfig, EmptyTextIsNotTheKeyLeftOut) {
  const std::string trace = bad_input_of([] { serving({"inference.trace=''"}); });
  EXPECT_TRUE(has(trace, "--set: inference.trace: is empty; expected a request trace file")) << trace;
  const std::string gpu = bad_input_of([] { serving({"inference.pools.colocated.gpu=''"}); });
  EXPECT_TRUE(has(gpu, "--set: inference.pools.colocated.gpu: is empty; expected a built-in profile name")) << gpu;
  // Left out, each keeps its default.
  EXPECT_TRUE(serving().inference->trace.empty());
  EXPECT_TRUE(serving().inference->colocated->gpu.empty());
}

TEST(InferenceConfig, BadEnumAndUnitAreErrors) {
  EXPECT_TRUE(has(bad_input_of([] { serving({"inference.mode=disaggregated"}); }), "inference.mode"));
  EXPECT_TRUE(has(bad_input_of([] { serving({"inference.tpot_limit=50"}); }), "inference.tpot_limit"));
  EXPECT_TRUE(has(bad_input_of([] { serving({"inference.kv_cache_per_gpu=lots"}); }), "inference.kv_cache_per_gpu"));
  EXPECT_TRUE(has(bad_input_of([] { serving({"inference.rate_per_s=-1"}); }), "inference.rate_per_s"));
  // A price so small that tokens per currency unit overflows (1e-305 printed 'inf'): 0 or >= 1e-6.
  EXPECT_TRUE(has(bad_input_of([] { serving({"inference.pools.colocated.price_per_gpu_hour=1e-305"}); }),
                  "inference.pools.colocated.price_per_gpu_hour: must be 0 (unknown) or at least 1e-06"));
  EXPECT_NO_THROW(serving({"inference.pools.colocated.price_per_gpu_hour=0"}));
  EXPECT_TRUE(has(bad_input_of([] { serving({"inference.prompt_tokens.dist=normal"}); }), "inference.prompt_tokens.dist"));
  EXPECT_TRUE(has(bad_input_of([] { serving({"inference.weight_precision=int4"}); }), "inference.weight_precision"));
  EXPECT_EQ(serving().inference->weight_precision, WeightPrecision::kBf16);
  EXPECT_EQ(serving({"inference.weight_precision=fp8"}).inference->weight_precision, WeightPrecision::kFp8);
  EXPECT_TRUE(has(bad_input_of([] { serving({"inference.chunked_prefill=sometimes"}); }), "inference.chunked_prefill"));
  EXPECT_FALSE(serving().inference->chunked_prefill);
}

// Values the physics rules out: a busiest expert above every token (8 experts, top-2: at most 4x
// the mean), and an exponential length with no cap, whose draws can pass model.seq_len.
TEST(InferenceConfig, ImpossibleImbalanceAndUnboundedLengthsAreErrors) {
  EXPECT_NO_THROW(serving({"inference.moe.load_imbalance=4"}));
  const std::string over = bad_input_of([] { serving({"inference.moe.load_imbalance=4.5"}); });
  EXPECT_TRUE(has(over, "inference.moe.load_imbalance")) << over;
  EXPECT_TRUE(has(over, "experts / top_k = 4")) << over;
  const std::string open = bad_input_of([] { serving({"inference.prompt_tokens={dist: exponential, mean: 300}"}); });
  EXPECT_TRUE(has(open, "inference.prompt_tokens.max")) << open;
  EXPECT_NO_THROW(serving({"inference.prompt_tokens={dist: exponential, mean: 300, max: 1024}"}));
  // A cap under the mean clamps most draws: the lengths would average 300 (1 - e^-0.5) = 118.
  const std::string low = bad_input_of([] { serving({"inference.prompt_tokens={dist: exponential, mean: 300, max: 150}"}); });
  EXPECT_TRUE(has(low, "inference.prompt_tokens.max: is below mean (300)")) << low;
  EXPECT_TRUE(has(low, "would average 118")) << low;
  // Its mirror: a floor over the mean raises most draws to it, 256 + 100 (e^-2.56 - e^-10.24) = 264.
  const std::string high =
      bad_input_of([] { serving({"inference.prompt_tokens={dist: exponential, mean: 100, min: 256, max: 1024}"}); });
  EXPECT_TRUE(has(high, "inference.prompt_tokens.min: is above mean (100)")) << high;
  EXPECT_TRUE(has(high, "would average 264")) << high;
  EXPECT_NO_THROW(serving({"inference.prompt_tokens={dist: exponential, mean: 300, min: 100, max: 1024}"}));
}

// inference.moe.dispatch: all_to_all (default) or all_gather, for the pools that hold an instance's
// experts; attention_ffn sends its tokens by M2N and refuses the key.
TEST(InferenceConfig, MoeDispatchIsReadAndRefusedWhereItCannotApply) {
  EXPECT_EQ(serving().inference->moe.dispatch, MoeDispatch::kAllToAll);
  EXPECT_EQ(serving({"inference.moe.dispatch=all_gather"}).inference->moe.dispatch, MoeDispatch::kAllGather);
  const std::string bad = bad_input_of([] { serving({"inference.moe.dispatch=broadcast"}); });
  EXPECT_TRUE(has(bad, "inference.moe.dispatch")) << bad;
  EXPECT_TRUE(has(bad, "all_gather")) << bad;
  const std::string afd = bad_input_of([] {
    serving({"inference.mode=attention_ffn", "inference.moe.dispatch=all_gather",
             "inference.pools={attention: {gpus: 8, tp: 2}, expert: {gpus: 8}}"});
  });
  EXPECT_TRUE(has(afd, "inference.moe.dispatch: applies to the colocated, prefill and decode pools")) << afd;
  EXPECT_NO_THROW(serving({"inference.mode=attention_ffn", "inference.moe.dispatch=all_to_all",
                           "inference.pools={attention: {gpus: 8, tp: 2}, expert: {gpus: 8}}"}));
}

// pools.<role>.expert_tp splits the instance's ep GPUs into ep / expert_tp groups of whole
// experts: it must divide ep, the groups must divide the experts, and only the pools holding an
// instance's experts take it.
// Pools of two GPU kinds may not share a node (pools sit on consecutive GPUs in the order
// colocated, prefill, decode, attention, expert): accepted until 2026-12-06.
TEST(InferenceConfig, PoolsOfTwoGpuKindsDoNotShareANode) {
  const std::vector<std::string> afd = {"inference.mode=attention_ffn", "cluster.gpus=32",
                                        "inference.pools={attention: {gpus: 4, tp: 2, gpu: H200-SXM}, expert: {gpus: 8}}"};
  const std::string mixed = bad_input_of([&] { serving(afd); });
  EXPECT_TRUE(has(mixed, "inference.pools.expert.gpu: pool expert (")) << mixed;
  EXPECT_TRUE(has(mixed, "would start on GPU 4, on a node of pool attention (H200-SXM): a node holds one kind of GPU")) << mixed;
  std::vector<std::string> aligned = afd;
  aligned.back() = "inference.pools={attention: {gpus: 8, tp: 2, gpu: H200-SXM}, expert: {gpus: 8}}";
  EXPECT_NO_THROW(serving(aligned));
  std::vector<std::string> same = afd;
  same.back() = "inference.pools={attention: {gpus: 4, tp: 2}, expert: {gpus: 8}}";
  EXPECT_NO_THROW(serving(same));
}

TEST(InferenceConfig, ExpertTpMustSplitTheInstanceIntoGroupsOfWholeExperts) {
  EXPECT_EQ(serving().inference->colocated->expert_tp, 0);  // the default rule applies
  EXPECT_EQ(serving({"inference.pools.colocated.expert_tp=8"}).inference->colocated->expert_tp, 8);
  EXPECT_NO_THROW(serving({"inference.pools.colocated.expert_tp=2"}));  // 4 groups of 2 experts
  const std::string odd = bad_input_of([] { serving({"inference.pools.colocated.expert_tp=3"}); });
  EXPECT_TRUE(has(odd, "inference.pools.colocated.expert_tp: must divide the instance's GPUs (ep = 8); got 3")) << odd;
  // 16 experts on ep 8 split 8 ways: one group. With 12 experts, ep 8 and expert_tp 2: 4 groups of 3.
  EXPECT_NO_THROW(serving({"inference.moe.experts=12", "inference.pools.colocated.expert_tp=2"}));
  const std::string groups = bad_input_of([] { serving({"inference.moe.experts=12", "inference.pools.colocated.expert_tp=1"}); });
  EXPECT_TRUE(has(groups, "ep / expert_tp = 8 expert groups must divide inference.moe.experts (12)")) << groups;
  // Whole columns of each expert on each GPU.
  const std::string width = bad_input_of([] { serving({"inference.moe.expert_ffn_hidden=1020", "inference.pools.colocated.expert_tp=8"}); });
  EXPECT_TRUE(has(width, "must divide the expert's width (1020, inference.moe.expert_ffn_hidden); got 8")) << width;
  const std::string dense = bad_input_of([] {
    serving({"inference.moe=null", "inference.pools.colocated.expert_tp=2"});
  });
  EXPECT_TRUE(has(dense, "inference.pools.colocated.expert_tp: splits the experts, but the model has none")) << dense;
  // Nor does ep wider than tp mean anything for a dense model (one instance of ep / tp replicas
  // sharing a batch: accepted until 2026-12-06).
  const std::string dense_ep = bad_input_of([] {
    serving({"inference.moe=null", "inference.pools.colocated.ep=8", "inference.pools.colocated.tp=1"});
  });
  EXPECT_TRUE(has(dense_ep, "inference.pools.colocated.ep: groups GPUs around experts, but the model has none")) << dense_ep;
  EXPECT_NO_THROW(serving({"inference.moe=null", "inference.pools.colocated.ep=2", "inference.pools.colocated.tp=2"}));
  const std::string attention = bad_input_of([] {
    serving({"inference.mode=attention_ffn", "inference.pools={attention: {gpus: 8, tp: 2, expert_tp: 2}, expert: {gpus: 8}}"});
  });
  EXPECT_TRUE(has(attention, "inference.pools.attention.expert_tp: the attention pool holds no experts")) << attention;
  const std::string expert = bad_input_of([] {
    serving({"inference.mode=attention_ffn", "inference.pools={attention: {gpus: 8, tp: 2}, expert: {gpus: 8, expert_tp: 2}}"});
  });
  EXPECT_TRUE(has(expert, "inference.pools.expert.expert_tp: the expert pool splits each expert over its tp GPUs")) << expert;
}

// A pool's tp splits the KV heads or replicates them on whole groups, as for training's tp
// (6 KV heads over tp 4 passed until 2026-12-06; vLLM refuses it).
TEST(InferenceConfig, PoolTpMustSplitOrReplicateWholeKvHeads) {
  EXPECT_NO_THROW(serving({"model.hidden=1536", "model.heads=24", "model.kv_heads=6", "inference.pools.colocated.tp=2"}));
  EXPECT_NO_THROW(serving({"model.hidden=1536", "model.heads=24", "model.kv_heads=2", "inference.pools.colocated.tp=8"}));
  const std::string odd = bad_input_of([] { serving({"model.hidden=1536", "model.heads=24", "model.kv_heads=6", "inference.pools.colocated.tp=4"}); });
  EXPECT_TRUE(has(odd, "serving.yaml: inference.pools.colocated.tp: must divide model.kv_heads (6) or be a multiple of it"))
      << odd;
}

// inference.kv_cache_fraction: in (0, 1], and not beside kv_cache_per_gpu, which sets the cache
// itself.
TEST(InferenceConfig, KvCacheFractionIsAShareAndExcludesAnAbsoluteCache) {
  EXPECT_EQ(serving().inference->kv_cache_fraction, 1.0);
  EXPECT_EQ(serving({"inference.kv_cache_fraction=0.9"}).inference->kv_cache_fraction, 0.9);
  EXPECT_TRUE(has(bad_input_of([] { serving({"inference.kv_cache_fraction=0"}); }), "inference.kv_cache_fraction: expected a number above 0 and at most 1"));
  EXPECT_TRUE(has(bad_input_of([] { serving({"inference.kv_cache_fraction=1.01"}); }), "inference.kv_cache_fraction: expected a number above 0 and at most 1"));
  EXPECT_TRUE(has(bad_input_of([] { serving({"inference.kv_cache_fraction=1.5"}); }), "inference.kv_cache_fraction"));
  const std::string both = bad_input_of([] { serving({"inference.kv_cache_fraction=0.9", "inference.kv_cache_per_gpu=10GiB"}); });
  EXPECT_TRUE(has(both, "give one of the two")) << both;
}

TEST(InferenceConfig, MicroBatchesLargerThanTheBatchIsAnError) {
  const std::string msg = bad_input_of([] {
    serving({"inference.mode=attention_ffn", "inference.micro_batches=8", "inference.max_batch=4",
             "inference.pools={attention: {gpus: 8, tp: 2}, expert: {gpus: 8}}"});
  });
  EXPECT_TRUE(has(msg, "inference.micro_batches")) << msg;
  EXPECT_TRUE(has(msg, "cannot be formed")) << msg;
}

// A pool's max_batch is its instances' (colocated, prefill, decode); under attention_ffn the
// batch is the deployment's, inference.max_batch.
TEST(InferenceConfig, APoolsMaxBatchIsNotTheAttentionFfnDeployments) {
  const std::string msg = bad_input_of([] {
    serving({"inference.mode=attention_ffn", "inference.pools={attention: {gpus: 8, tp: 2, max_batch: 64}, expert: {gpus: 8}}"});
  });
  EXPECT_TRUE(has(msg, "inference.pools.attention.max_batch: under attention_ffn a step's batch is the deployment's")) << msg;
  EXPECT_TRUE(has(bad_input_of([] { serving({"inference.pools.colocated.max_batch=0"}); }),
                  "inference.pools.colocated.max_batch"));
  EXPECT_EQ(serving({"inference.pools.colocated.max_batch=32"}).inference->colocated->max_batch, 32);
}

TEST(InferenceConfig, MicroBatchesOnlyForAttentionFfn) {
  const std::string msg = bad_input_of([] { serving({"inference.micro_batches=2"}); });
  EXPECT_TRUE(has(msg, "applies to mode attention_ffn only")) << msg;
}

TEST(InferenceConfig, ModeNeedsItsPoolsAndRejectsOthers) {
  const std::string missing = bad_input_of([] { serving({"inference.mode=prefill_decode"}); });
  EXPECT_TRUE(has(missing, "inference.pools.prefill: mode prefill_decode needs this pool")) << missing;
  EXPECT_TRUE(has(missing, "inference.pools.colocated: mode prefill_decode has no colocated pool")) << missing;
  const std::string none = bad_input_of([] { serving_without("inference.pools"); });
  EXPECT_TRUE(has(none, "inference.pools.colocated")) << none;
}

TEST(InferenceConfig, PoolShapeErrors) {
  EXPECT_TRUE(has(bad_input_of([] { serving({"inference.pools.colocated.tp=3", "inference.pools.colocated.ep=3",
                                              "inference.pools.colocated.gpus=15"}); }),
                  "inference.pools.colocated.tp: must divide model.heads"));
  // A pool without ep is sized by its tp group, and the message says so (it named an 'ep' the
  // scenario did not give until 2026-12-06).
  EXPECT_TRUE(has(bad_input_of([] { serving({"inference.pools.colocated.gpus=12"}); }),
                  "inference.pools.colocated.gpus: must be a multiple of the instance size (ep = 8); got 12"));
  const std::string no_ep = bad_input_of([] {
    serving(
        {"inference.pools.colocated.ep=null", "inference.pools.colocated.tp=4", "inference.pools.colocated.gpus=6"});
  });
  EXPECT_TRUE(has(no_ep, "inference.pools.colocated.gpus: must be a multiple of the instance size (tp = 4); got 6"))
      << no_ep;
  EXPECT_TRUE(has(bad_input_of([] { serving({"inference.pools.colocated.gpus=24"}); }),
                  "cluster.gpus: the pools use 24 GPUs but the cluster has 16"));
  EXPECT_TRUE(has(bad_input_of([] { serving({"inference.pools.colocated.tp=16", "inference.pools.colocated.ep=16"}); }),
                  "tensor parallelism stays inside a node"));
}

TEST(InferenceConfig, AttentionFfnNeedsExpertsThatDivide) {
  const std::string afd = "inference.mode=attention_ffn";
  const std::string pools = "inference.pools={attention: {gpus: 8, tp: 2}, expert: {gpus: 6}}";
  EXPECT_TRUE(has(bad_input_of([&] { serving({afd, pools}); }), "expert groups must divide inference.moe.experts"));
  EXPECT_TRUE(has(bad_input_of([&] {
                    serving_without("inference.moe", {afd, "inference.pools={attention: {gpus: 8}, expert: {gpus: 8}}"});
                  }),
                  "mode attention_ffn needs an MoE model"));
  EXPECT_TRUE(has(bad_input_of([&] { serving({afd, "inference.pools={attention: {gpus: 8, ep: 2}, expert: {gpus: 8}}"}); }),
                  "inference.pools.attention.ep"));
}

TEST(InferenceConfig, LengthsAndModelChecks) {
  EXPECT_TRUE(has(bad_input_of([] { serving({"inference.prompt_tokens={dist: uniform, min: 10}"}); }),
                  "inference.prompt_tokens.max: a uniform length needs max >= min"));
  EXPECT_TRUE(has(bad_input_of([] { serving({"model.seq_len=256"}); }), "model.seq_len: is the longest context served"));
  EXPECT_TRUE(has(bad_input_of([] { serving({"inference.moe.top_k=9"}); }), "inference.moe.top_k"));
  // Only that error: the imbalance bound follows from top_k, which is what is wrong.
  EXPECT_FALSE(has(bad_input_of([] { serving({"inference.moe.top_k=9"}); }), "load_imbalance"));
  EXPECT_TRUE(has(bad_input_of([] { serving({"model.kv_heads=3"}); }), "model.kv_heads: must divide model.heads"));
  // Every layer dense leaves no MoE layer to serve.
  EXPECT_TRUE(has(bad_input_of([] { serving({"model.layers=4", "inference.moe.dense_layers=4"}); }),
                  "inference.moe.dense_layers: must be below model.layers"));
}

// The serving cost model has rotary positions and full causal attention: a value that asks for
// anything else is refused; the values it assumes (kServing's learned_positions: false) load.
TEST(InferenceConfig, ModelKeysTheServingModelIgnoresAreErrors) {
  const std::string learned = bad_input_of([] { serving({"model.learned_positions=true"}); });
  EXPECT_TRUE(has(learned, "model.learned_positions: the serving cost model has no position-embedding table")) << learned;
  const std::string window = bad_input_of([] { serving({"model.attention_window=512"}); });
  EXPECT_TRUE(has(window, "model.attention_window: the serving cost model prices full causal attention")) << window;
  EXPECT_EQ(bad_input_of([] { serving({"model.attention_window=0"}); }), "");
  // A window of the whole sequence is full attention (refused until 2026-12-06).
  const ScenarioConfig full = serving();
  const std::string whole = "model.attention_window=" + std::to_string(full.model.seq_len);
  EXPECT_EQ(bad_input_of([&] { serving({whole}); }), "");
  const std::string past = "model.attention_window=" + std::to_string(full.model.seq_len + 1);
  EXPECT_TRUE(has(bad_input_of([&] { serving({past}); }), "model.attention_window: must not exceed model.seq_len"));
  EXPECT_EQ(bad_input_of([] { serving_without("model.learned_positions"); }), "");  // default true, not given
}

}  // namespace
}  // namespace clustersim
