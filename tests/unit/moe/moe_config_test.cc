// SPDX-License-Identifier: Apache-2.0
// model.moe and the MoE plan keys: a good scenario loads with its values, and every bad input is
// an error naming the key path.
#include "sim/core/moe_config.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/core/error.h"
#include "tests/unit/moe/moe_test_util.h"

namespace clustersim {
namespace {

using moe_test::load;
using moe_test::small_yaml;

TEST(MoeConfig, LoadsEveryKey) {
  const ScenarioConfig cfg =
      load(small_yaml(), {"model.moe.expert_ffn_hidden=1024", "model.moe.shared_experts=1", "model.moe.capacity_factor=1.25",
                          "model.moe.first_dense_layers=1", "model.moe.moe_layer_frequency=2", "model.moe.routing=zipf",
                          "model.moe.zipf_s=1.2", "model.moe.seed=7", "parallelism.expert_tp=1",
                          "training.overlap.a2a_chunks=4", "training.comm_precision=fp8"});
  ASSERT_TRUE(cfg.model.moe.has_value());
  const MoeConfig& m = *cfg.model.moe;
  EXPECT_EQ(m.experts, 8);
  EXPECT_EQ(m.top_k, 2);
  EXPECT_EQ(m.expert_ffn_hidden, 1024);
  EXPECT_EQ(m.shared_experts, 1);
  EXPECT_DOUBLE_EQ(m.capacity_factor, 1.25);
  EXPECT_EQ(m.first_dense_layers, 1);
  EXPECT_EQ(m.moe_layer_frequency, 2);
  EXPECT_EQ(m.routing, MoeRouting::kZipf);
  EXPECT_DOUBLE_EQ(m.zipf_s, 1.2);
  EXPECT_EQ(m.seed, 7u);
  EXPECT_EQ(cfg.parallelism.ep, 8);
  EXPECT_EQ(cfg.training.attention_parallel, AttentionParallel::kSp);
  EXPECT_EQ(cfg.training.overlap.a2a_chunks, 4);
  EXPECT_EQ(cfg.training.comm_precision, CommPrecision::kFp8);
}

TEST(MoeConfig, LoadsList) {
  const ScenarioConfig cfg =
      load(small_yaml(), {"model.moe.routing=loads", "model.moe.loads=[4, 1, 1, 1, 1, 1, 1, 0.5]"});
  ASSERT_EQ(cfg.model.moe->loads.size(), 8u);
  EXPECT_DOUBLE_EQ(cfg.model.moe->loads[0], 4.0);
}

TEST(MoeConfig, SkewedRoutingCountsItsDraws) {
  const std::vector<std::string> plan = {"model.moe.experts=256", "model.moe.top_k=128", "model.seq_len=8192",
                                         "model.layers=64"};
  EXPECT_NO_THROW(load(small_yaml(), plan));
  std::vector<std::string> mild = plan;
  mild.insert(mild.end(), {"model.moe.routing=zipf", "model.moe.zipf_s=0.5"});
  EXPECT_NO_THROW(load(small_yaml(), mild));
}

TEST(MoeConfig, DenseScenarioKeepsDefaults) {
  ScenarioConfig cfg = load(small_yaml(), {"model.moe=null", "parallelism.ep=1", "training.attention_parallel=tp"});
  EXPECT_FALSE(cfg.model.moe.has_value());
  EXPECT_EQ(cfg.training.comm_precision, CommPrecision::kDefault);
  EXPECT_EQ(cfg.training.overlap.a2a_chunks, 1);
}

struct BadCase {
  std::vector<std::string> overrides;
  std::string key;   // key path the error must name
  std::string text;  // part of the message
};

class MoeBadInput : public ::testing::TestWithParam<BadCase> {};

TEST_P(MoeBadInput, NamesTheKey) {
  const BadCase& c = GetParam();
  try {
    load(small_yaml(), c.overrides);
    FAIL() << "expected an error about " << c.key;
  } catch (const BadInput& e) {
    bool found = false;
    std::string all;
    for (const InputError& err : e.errors()) {
      all += err.to_string() + "\n";
      if (err.key_path == c.key && err.message.find(c.text) != std::string::npos) found = true;
    }
    EXPECT_TRUE(found) << "errors were:\n" << all;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Keys, MoeBadInput,
    ::testing::Values(
        BadCase{{"model.moe.expertz=8"}, "model.moe.expertz", "unknown"},
        // Without a listed split the message names it (an MoE model's list is its layer map since
        // 2026-12-07: moe_stage_layers_test.cc).
        BadCase{{"model.layers=5", "parallelism.pp=2", "cluster.gpus=16"}, "parallelism.pp",
                "must divide model.layers (5); or list each stage's layers in stragglers.stage_layers"},
        BadCase{{"model.moe.experts=null"}, "model.moe.experts", ""},
        BadCase{{"model.moe.experts=0"}, "model.moe.experts", ""},
        BadCase{{"model.moe.top_k=9"}, "model.moe.top_k", "must not exceed"},
        // Routing draws that would run for hours are refused up front (until 2026-12-06 4,096 experts
        // at top_k 4,096 ran on past 2 minutes).
        // (top_k = experts draws nothing since 2026-12-06: every token takes every expert.)
        BadCase{{"model.moe.experts=4096", "model.moe.top_k=4000", "model.seq_len=65536", "model.layers=64"},
                "model.moe.top_k", "drawing the routing would take minutes"},
        // Skewed routing leaves little weight untaken after the first picks, so each later pick
        // misses 16 times and falls back to a pass over the experts: counted since 2026-12-06
        // (256 experts, top_k 128 under zipf s = 10 ran for about 200 s; uniform routing of
        // the same plan is accepted, MoeConfig.SkewedRoutingCountsItsDraws).
        BadCase{{"model.moe.experts=256", "model.moe.top_k=128", "model.moe.routing=zipf", "model.moe.zipf_s=10",
                 "model.seq_len=8192", "model.layers=64"},
                "model.moe.top_k", "or skewed routing leaves little weight untaken"},
        BadCase{{"model.moe.routing=random"}, "model.moe.routing", "uniform"},
        BadCase{{"model.moe.routing=loads"}, "model.moe.loads", "one weight per expert"},
        BadCase{{"model.moe.routing=loads", "model.moe.loads=[1, 2]"}, "model.moe.loads", "one weight per expert"},
        BadCase{{"model.moe.routing=loads", "model.moe.loads=[1, 1, 1, 1, 1, 1, 1, -1]"}, "model.moe.loads",
                "non-negative"},
        BadCase{{"model.moe.routing=loads", "model.moe.loads=[1, 1, x, 1, 1, 1, 1, 1]"}, "model.moe.loads",
                "non-negative"},
        BadCase{{"model.moe.routing=loads", "model.moe.loads=[1, 0, 0, 0, 0, 0, 0, 0]"}, "model.moe.loads",
                "top_k"},
        // A weight is a plain decimal as every number (strtod took '+', spaces and hexadecimal
        // until 2026-12-05).
        BadCase{{"model.moe.routing=loads", "model.moe.loads=[+4, 1, 1, 1, 1, 1, 1, 1]"}, "model.moe.loads",
                "entry 0 ('+4') is not a non-negative number"},
        BadCase{{"model.moe.routing=loads", "model.moe.loads=[1, 0x10, 1, 1, 1, 1, 1, 1]"}, "model.moe.loads",
                "entry 1 ('0x10')"},
        BadCase{{"model.moe.routing=loads", "model.moe.loads=[1, 1, ' 2', 1, 1, 1, 1, 1]"}, "model.moe.loads",
                "entry 2 (' 2')"},
        BadCase{{"model.moe.loads=[1, 1, 1, 1, 1, 1, 1, 1]"}, "model.moe.loads", "only with routing: loads"},
        BadCase{{"model.moe.loads=3"}, "model.moe.loads", "expected a list"},
        // An empty list is no weights, not the key left out (it passed with other routings until
        // 2026-12-05), as an empty stragglers list.
        BadCase{{"model.moe.loads=[]"}, "model.moe.loads", "the list is empty"},
        BadCase{{"model.moe.routing=loads", "model.moe.loads=[]"}, "model.moe.loads", "the list is empty"},
        BadCase{{"model.moe.capacity_factor=0.5"}, "model.moe.capacity_factor", "at least 1"},
        // The value as given, not rounded to six decimals ("got 0.000000" read as the allowed 0).
        BadCase{{"model.moe.capacity_factor=1e-9"}, "model.moe.capacity_factor", "got 1e-09"},
        BadCase{{"model.moe.zipf_s=-1"}, "model.moe.zipf_s", ""},
        BadCase{{"model.moe.first_dense_layers=4"}, "model.moe.first_dense_layers", "no MoE layer"},
        BadCase{{"parallelism.ep=3"}, "parallelism.ep", "must divide model.moe.experts"},
        BadCase{{"parallelism.ep=0"}, "parallelism.ep", ""},
        BadCase{{"parallelism.expert_tp=3"}, "parallelism.expert_tp", ""},
        BadCase{{"parallelism.ep=4", "parallelism.expert_tp=16"}, "parallelism.expert_tp", "inside a node"},
        BadCase{{"model.moe=null"}, "parallelism.ep", "needs an MoE model"},
        BadCase{{"model.moe=null", "parallelism.ep=1"}, "training.attention_parallel", "needs model.moe"},
        BadCase{{"model.moe=null", "parallelism.ep=1", "training.attention_parallel=tp", "parallelism.expert_tp=2"},
                "parallelism.expert_tp", "needs an MoE model"},
        BadCase{{"training.attention_parallel=cp"}, "training.attention_parallel", "tp, sp"},
        BadCase{{"training.comm_precision=fp4"}, "training.comm_precision", "bf16"},
        BadCase{{"training.overlap.a2a_chunks=0"}, "training.overlap.a2a_chunks", ""},
        BadCase{{"model.seq_len=2044"}, "training.attention_parallel", "must divide model.seq_len"},
        // Under tp attention too each GPU routes whole tokens (a sequence of 4 over tp 8 read as a
        // 107-day step until 2026-12-07).
        BadCase{{"model.seq_len=2044", "training.attention_parallel=tp", "parallelism.sequence_parallel=true"},
                "model.seq_len", "split over tp x cp (8 x 1): it must divide model.seq_len (2044)"},
        // tp x cp past an int: refused, not a division by zero (code review 2026-12-07).
        BadCase{{"parallelism.tp=65536", "parallelism.cp=65536", "training.attention_parallel=tp"}, "model.seq_len",
                "split over tp x cp (65536 x 65536)"},
        // MoE under TP without sequence parallelism (accepted until 2026-12-05, its tokens split by tp).
        BadCase{{"training.attention_parallel=tp", "parallelism.sequence_parallel=false"},
                "parallelism.sequence_parallel", "needs sequence parallelism"},
        // Keys the simulation would ignore, when given.
        BadCase{{"model.moe=null", "parallelism.ep=1", "training.attention_parallel=tp", "training.comm_precision=bf16"},
                "training.comm_precision", "needs model.moe"},
        BadCase{{"model.moe=null", "parallelism.ep=1", "training.attention_parallel=tp",
                 "training.overlap.a2a_chunks=1"},
                "training.overlap.a2a_chunks", "needs model.moe"},
        BadCase{{"model.moe=null", "parallelism.ep=1", "training.attention_parallel=tp",
                 "training.overlap.a2a_chunks=2"},
                "training.overlap.a2a_chunks", "needs model.moe"},
        BadCase{{"model.moe=null", "parallelism.ep=1", "training.attention_parallel=tp", "training.moe_grouped_gemm=true"},
                "training.moe_grouped_gemm", "needs model.moe"},
        BadCase{{"training.moe_grouped_gemm=maybe"}, "training.moe_grouped_gemm", "expected true or false"}));

// The same keys where they act: given on an MoE model, with zipf routing, or with dense layers
// under tensor-parallel attention (which price parallel_block as a dense model does).
TEST(MoeConfig, KeysLoadWhereTheyAct) {
  EXPECT_NO_THROW(load(small_yaml(), {"training.comm_precision=bf16", "training.overlap.a2a_chunks=2"}));
  EXPECT_NO_THROW(load(small_yaml(), {"model.moe.routing=zipf", "model.moe.zipf_s=1.5"}));
  // zipf_s under other routing loads (a sweep axis may switch the routing) and is noted by the run.
  EXPECT_NO_THROW(load(small_yaml(), {"model.moe.zipf_s=1.5"}));
  for (const char* layers : {"model.moe.first_dense_layers=1", "model.moe.moe_layer_frequency=2"}) {
    EXPECT_NO_THROW(load(small_yaml(), {layers, "training.attention_parallel=tp", "training.parallel_block=true"}))
        << layers;
  }
  // Where it cannot act it still loads (a sweep axis may switch attention_parallel); the run notes it.
  EXPECT_NO_THROW(load(small_yaml(), {"training.parallel_block=true"}));
  // Un-given, the defaults load on dense and MoE models alike.
  EXPECT_NO_THROW(load(small_yaml(), {"model.moe=null", "parallelism.ep=1", "training.attention_parallel=tp"}));
  EXPECT_NO_THROW(load(small_yaml()));
}

}  // namespace
}  // namespace clustersim
