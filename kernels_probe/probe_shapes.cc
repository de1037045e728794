// SPDX-License-Identifier: Apache-2.0
// Shape sweeps of the probe.
#include "kernels_probe/probe_shapes.h"

#include <set>
#include <tuple>

namespace clustersim::kernels_probe {

std::vector<GemmCase> transformer_gemm_cases(bool quick) {
  constexpr uint64_t kVocab = 128256;  // Llama 3 tokenizer
  const std::vector<uint64_t> hiddens = quick ? std::vector<uint64_t>{4096}
                                              : std::vector<uint64_t>{2048, 4096, 8192, 12288};
  const std::vector<uint64_t> tps = quick ? std::vector<uint64_t>{1, 8}
                                          : std::vector<uint64_t>{1, 2, 4, 8};
  const std::vector<uint64_t> token_counts = quick ? std::vector<uint64_t>{2048}
                                                   : std::vector<uint64_t>{512, 2048, 8192};
  std::vector<GemmCase> out;
  std::set<std::tuple<uint64_t, uint64_t, uint64_t, GemmPass>> seen;
  for (uint64_t h : hiddens) {
    for (uint64_t tp : tps) {
      for (uint64_t tokens : token_counts) {
        struct Layer { const char* name; uint64_t out, in; };
        const Layer layers[] = {{"qkv", 3 * h / tp, h},
                                {"attn_out", h, h / tp},
                                {"mlp_up", 4 * h / tp, h},
                                {"mlp_down", h, 4 * h / tp},
                                {"lm_head", kVocab / tp, h}};
        for (const Layer& l : layers) {
          struct Pass { const char* name; GemmPass pass; uint64_t m, n, k; };
          const Pass passes[] = {{"fwd", GemmPass::kForward, tokens, l.out, l.in},
                                 {"dgrad", GemmPass::kDataGrad, tokens, l.in, l.out},
                                 {"wgrad", GemmPass::kWeightGrad, l.out, l.in, tokens}};
          for (const Pass& p : passes) {
            if (quick && p.pass != GemmPass::kForward) continue;
            if (!seen.insert({p.m, p.n, p.k, p.pass}).second) continue;
            out.push_back({p.m, p.n, p.k, p.pass,
                           std::string(l.name) + " " + p.name + " h=" + std::to_string(h) +
                               " tp=" + std::to_string(tp) + " t=" + std::to_string(tokens)});
          }
        }
      }
    }
  }
  return out;
}

std::vector<AttentionCase> attention_cases(bool quick) {
  std::vector<AttentionCase> out;
  const std::vector<uint64_t> seqs = quick ? std::vector<uint64_t>{1024, 2048}
                                           : std::vector<uint64_t>{512, 1024, 2048, 4096, 8192};
  const std::vector<uint64_t> heads = quick ? std::vector<uint64_t>{16}
                                            : std::vector<uint64_t>{8, 16, 32};
  const std::vector<uint64_t> dims = quick ? std::vector<uint64_t>{128}
                                           : std::vector<uint64_t>{64, 128};
  for (uint64_t s : seqs) {
    for (uint64_t h : heads) {
      for (uint64_t d : dims) out.push_back({1, s, h, d});
    }
  }
  return out;
}

std::vector<uint64_t> byte_sizes(uint64_t min_bytes, uint64_t max_bytes, bool quick) {
  std::vector<uint64_t> out;
  for (uint64_t b = min_bytes; b <= max_bytes && b > 0; b *= quick ? 4 : 2) out.push_back(b);
  return out;
}

}  // namespace clustersim::kernels_probe
