// SPDX-License-Identifier: Apache-2.0
// The shapes and sizes the probe sweeps: transformer GEMMs, attention cases, byte sizes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace clustersim::kernels_probe {

// The pass of a linear layer Y = X W^T (W stored [out x in], as torch.nn.Linear keeps it) a GEMM
// belongs to; it fixes the operands' memory layout (gemm_bench.cu times each in its own).
enum class GemmPass { kForward, kDataGrad, kWeightGrad };

// Row-major C[m x n] = A[m x k] B[k x n], its pass and where it comes from.
struct GemmCase {
  uint64_t m = 0, n = 0, k = 0;
  GemmPass pass = GemmPass::kForward;
  std::string label;  // "mlp_up fwd h=8192 tp=8 t=4096"
};

// GEMMs of a dense transformer layer, per tensor-parallel shard (Megatron-LM column/row split):
// QKV (h -> 3h/tp), attention output (h/tp -> h), MLP up (h -> 4h/tp), MLP down (4h/tp -> h) and
// the LM head (h -> vocab/tp, vocab 128256), for the forward pass (m = tokens), the
// data-gradient pass (n and k swapped) and the weight-gradient pass (k = tokens). Hidden sizes
// 2048..12288, TP 1..8, tokens 512..8192; --quick keeps h=4096, TP 1 and 8, 2048 tokens, forward
// only. A shape repeated by the sweep in the same pass appears once (with the first label); the
// same m, n, k in another pass is another case (another layout).
std::vector<GemmCase> transformer_gemm_cases(bool quick);

struct AttentionCase {
  uint64_t batch = 1, seq_len = 0, heads = 0, head_dim = 0;
};

// Sequence lengths 512..8192, 8/16/32 heads (per TP shard), head sizes 64 and 128, batch 1;
// --quick keeps seq 1024 and 2048, 16 heads, head size 128.
std::vector<AttentionCase> attention_cases(bool quick);

// Powers of two from `min_bytes` to `max_bytes` (both included when powers of two); --quick steps
// by 4x instead of 2x.
std::vector<uint64_t> byte_sizes(uint64_t min_bytes, uint64_t max_bytes, bool quick);

}  // namespace clustersim::kernels_probe
