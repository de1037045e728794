// SPDX-License-Identifier: Apache-2.0
// Attention measurements, forward and backward, as a matmul-softmax-matmul chain in BF16.
#pragma once

#include "kernels_probe/probe_options.h"
#include "kernels_probe/probe_record.h"

namespace clustersim::kernels_probe {

// Name recorded as AttentionShape.implementation for the chain below.
inline constexpr const char* kAttentionChain = "cublas-strided-batched-bmm+softmax";

// Measures attention_cases() on device 0. No fused kernel ships with the CUDA toolkit alone
// (cuDNN's and FlashAttention's are extra libraries), so the probe times the unfused chain and
// records fused = false: forward S = QK^T, P = softmax(S / sqrt(d)), O = PV; backward dV = P^T dO,
// dP = dO V^T, dS = P * (dP - rowsum(dP * P)) / sqrt(d), dQ = dS K, dK = dS^T Q.
void run_attention_bench(const ProbeOptions& options, ProbeRun& run);

}  // namespace clustersim::kernels_probe
