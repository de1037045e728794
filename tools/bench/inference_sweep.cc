// SPDX-License-Identifier: Apache-2.0
// Decode sweep for serving scenarios: best per-GPU decode throughput under the TPOT limit for
// colocated serving and for attention/FFN disaggregation at each micro-batch count m.
//
//   inference_sweep SCENARIO.yaml [--set key.path=value ...] [--all] [--by-cost]
//                   [--colocated-tp 1,2,4,8] [--attention-tp 1,2,4,8] [--m 1,2,3,4]
//
// Prints the table of sim/engine/inference_sweep.h: colocated with TP-8 attention (the baseline),
// colocated with data-parallel attention, then attention/FFN per m (--all: every point within the
// limit too; --by-cost: best = most tokens per cost unit, for pools of different GPU types).
// Exit 0 ok, 2 bad input.
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "sim/core/error.h"
#include "sim/core/scenario.h"
#include "sim/engine/inference_sweep.h"

constexpr const char* kUsage =
    "usage: inference_sweep SCENARIO.yaml [--set key.path=value ...] [--all] [--by-cost]\n"
    "                       [--colocated-tp 1,2,4,8] [--attention-tp 1,2,4,8] [--m 1,2,3,4]\n";

int main(int argc, char** argv) {
  using namespace clustersim;
  std::string file;
  std::vector<std::string> overrides;
  bool all = false;
  engine::DecodeSweepGrid grid;
  auto list = [](const char* text) {
    std::vector<int> v;
    for (const char* p = text; *p;) {
      char* end = nullptr;
      const long x = std::strtol(p, &end, 10);
      if (end == p || x < 1 || x > 1 << 20) return std::vector<int>{};
      v.push_back(static_cast<int>(x));
      p = *end == ',' ? end + 1 : end;
      if (*end != ',' && *end != 0) return std::vector<int>{};
    }
    return v;
  };
  for (int i = 1; i < argc; ++i) {
    std::vector<int>* target = nullptr;
    if (!std::strcmp(argv[i], "--colocated-tp")) target = &grid.colocated_tp;
    if (!std::strcmp(argv[i], "--attention-tp")) target = &grid.attention_tp;
    if (!std::strcmp(argv[i], "--m")) target = &grid.micro_batches;
    if (target) {
      if (i + 1 >= argc || (*target = list(argv[i + 1])).empty()) {
        std::cerr << argv[i] << " needs a comma-separated list of positive integers\n";
        return 2;
      }
      ++i;
      continue;
    }
    if (!std::strcmp(argv[i], "--set") && i + 1 < argc) {
      overrides.emplace_back(argv[++i]);
    } else if (!std::strcmp(argv[i], "--all")) {
      all = true;
    } else if (!std::strcmp(argv[i], "--by-cost")) {
      grid.rank_by_cost = true;
    } else if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
      std::cout << kUsage;
      return 0;
    } else if (file.empty()) {
      file = argv[i];
    } else {
      std::cerr << "unexpected argument '" << argv[i] << "'\n";
      return 2;
    }
  }
  if (file.empty()) {
    std::cerr << kUsage;
    return 2;
  }
  try {
    const ScenarioConfig cfg = load_scenario(file, overrides);
    if (!cfg.inference) {
      std::cerr << file << ": not a serving scenario (no inference section)\n";
      return 2;
    }
    const engine::DecodeSweepResult r = engine::sweep_decode(cfg, grid);
    std::cout << engine::format_decode_sweep(r);
    if (all) {
      std::cout << "\nevery point within the limit (mode, m, gpus, batch, TPOT ms, tok/s/GPU):\n";
      for (const engine::DecodePoint& d : r.points) {
        if (!d.fits || (r.tpot_limit > Time::zero() && d.tpot > r.tpot_limit)) continue;
        std::cout << "  " << to_string(d.mode) << " m=" << d.micro_batches << " attn/inst="
                  << (d.mode == ServingMode::kColocated ? d.instance_gpus : d.attention_gpus)
                  << " expert=" << d.expert_gpus << " batch=" << d.batch << " tpot=" << d.tpot.as_s() * 1e3
                  << " tok/s/gpu=" << d.tokens_per_s_per_gpu << " tok/cost=" << d.tokens_per_cost_unit << "\n";
      }
    }
  } catch (const BadInput& e) {
    for (const InputError& err : e.errors()) std::cerr << err.to_string() << "\n";
    return 2;
  }
  return 0;
}
