// SPDX-License-Identifier: Apache-2.0
// Unfused attention: strided-batched cuBLAS GEMMs plus row-softmax kernels, forward and backward.
#include "kernels_probe/attention_bench.h"

#include <cuda_bf16.h>

#include <cmath>
#include <iostream>

#include "kernels_probe/cuda_check.h"
#include "kernels_probe/device_buffer.h"
#include "kernels_probe/probe_shapes.h"
#include "kernels_probe/timing.h"

namespace clustersim::kernels_probe {
namespace {

constexpr int kRowThreads = 256;

// Sum (or max) over the block; every thread gets the result.
template <bool kMax>
__device__ float block_reduce(float v) {
  __shared__ float partial[kRowThreads / 32];
  for (int offset = 16; offset > 0; offset /= 2) {
    const float o = __shfl_xor_sync(0xffffffffu, v, offset);
    v = kMax ? fmaxf(v, o) : v + o;
  }
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  v = partial[0];
  for (int w = 1; w < kRowThreads / 32; ++w) v = kMax ? fmaxf(v, partial[w]) : v + partial[w];
  __syncthreads();  // partial[] is reused by the next reduction
  return v;
}

// One block per row: P = softmax(scale * S), in place over bf16.
__global__ void softmax_forward(__nv_bfloat16* rows, size_t row_len, float scale) {
  __nv_bfloat16* row = rows + blockIdx.x * row_len;
  float m = -INFINITY;
  for (size_t i = threadIdx.x; i < row_len; i += kRowThreads) m = fmaxf(m, __bfloat162float(row[i]));
  m = block_reduce<true>(m) * scale;
  float sum = 0;
  for (size_t i = threadIdx.x; i < row_len; i += kRowThreads) {
    sum += __expf(__bfloat162float(row[i]) * scale - m);
  }
  const float inv = 1.0f / block_reduce<false>(sum);
  for (size_t i = threadIdx.x; i < row_len; i += kRowThreads) {
    row[i] = __float2bfloat16(__expf(__bfloat162float(row[i]) * scale - m) * inv);
  }
}

// One block per row: dS = P * (dP - sum(dP * P)) * scale, written over dP.
__global__ void softmax_backward(const __nv_bfloat16* p, __nv_bfloat16* dp, size_t row_len,
                                 float scale) {
  const __nv_bfloat16* prow = p + blockIdx.x * row_len;
  __nv_bfloat16* drow = dp + blockIdx.x * row_len;
  float dot = 0;
  for (size_t i = threadIdx.x; i < row_len; i += kRowThreads) {
    dot += __bfloat162float(prow[i]) * __bfloat162float(drow[i]);
  }
  dot = block_reduce<false>(dot);
  for (size_t i = threadIdx.x; i < row_len; i += kRowThreads) {
    const float pv = __bfloat162float(prow[i]);
    drow[i] = __float2bfloat16(pv * (__bfloat162float(drow[i]) - dot) * scale);
  }
}

// Row-major [batch*heads, rows, cols] tensors seen by cuBLAS as column-major [cols x rows] each.
struct Chain {
  cublasHandle_t handle;
  int s, d, batch;
  long long sd, ss;  // strides of [s x d] and [s x s] matrices

  // Row-major C[s x s] = A[s x d] * B[s x d]^T (S = Q K^T, dP = dO V^T).
  void abt(const void* a, const void* b, void* c) const {
    const float one = 1.0f, zero = 0.0f;
    PROBE_CUBLAS(cublasGemmStridedBatchedEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, s, s, d, &one, b,
                                            CUDA_R_16BF, d, sd, a, CUDA_R_16BF, d, sd, &zero, c,
                                            CUDA_R_16BF, s, ss, batch, CUBLAS_COMPUTE_32F,
                                            CUBLAS_GEMM_DEFAULT));
  }
  // Row-major C[s x d] = P[s x s] * B[s x d] (O = P V, dQ = dS K).
  void pb(const void* p, const void* b, void* c) const {
    const float one = 1.0f, zero = 0.0f;
    PROBE_CUBLAS(cublasGemmStridedBatchedEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, d, s, s, &one, b,
                                            CUDA_R_16BF, d, sd, p, CUDA_R_16BF, s, ss, &zero, c,
                                            CUDA_R_16BF, d, sd, batch, CUBLAS_COMPUTE_32F,
                                            CUBLAS_GEMM_DEFAULT));
  }
  // Row-major C[s x d] = P[s x s]^T * B[s x d] (dV = P^T dO, dK = dS^T Q).
  void ptb(const void* p, const void* b, void* c) const {
    const float one = 1.0f, zero = 0.0f;
    PROBE_CUBLAS(cublasGemmStridedBatchedEx(handle, CUBLAS_OP_N, CUBLAS_OP_T, d, s, s, &one, b,
                                            CUDA_R_16BF, d, sd, p, CUDA_R_16BF, s, ss, &zero, c,
                                            CUDA_R_16BF, d, sd, batch, CUBLAS_COMPUTE_32F,
                                            CUBLAS_GEMM_DEFAULT));
  }
};

}  // namespace

void run_attention_bench(const ProbeOptions& options, ProbeRun& run) {
  cudaStream_t stream = nullptr;
  cublasHandle_t handle = nullptr;
  open_blas_stream(stream, handle);
  TimingPlan plan;
  plan.warmup = options.warmup;
  plan.reps = options.reps;
  int done = 0, skipped = 0;
  for (const AttentionCase& c : attention_cases(options.quick)) {
    const size_t bh = c.batch * c.heads;
    const size_t qkv_elems = bh * c.seq_len * c.head_dim;
    const size_t score_elems = bh * c.seq_len * c.seq_len;
    // Q K V O dO dQ dK dV, plus P and dP.
    const size_t need = 2 * (8 * qkv_elems + 2 * score_elems);
    if (need > free_device_memory() * 9 / 10) {
      ++skipped;
      continue;
    }
    DeviceBuffer q(2 * qkv_elems), k(2 * qkv_elems), v(2 * qkv_elems), o(2 * qkv_elems),
        dout(2 * qkv_elems), dq(2 * qkv_elems), dk(2 * qkv_elems), dv(2 * qkv_elems),
        p(2 * score_elems), dp(2 * score_elems);
    fill_bf16(q.get(), qkv_elems, 11, stream);
    fill_bf16(k.get(), qkv_elems, 12, stream);
    fill_bf16(v.get(), qkv_elems, 13, stream);
    fill_bf16(dout.get(), qkv_elems, 14, stream);
    const Chain chain{handle, static_cast<int>(c.seq_len), static_cast<int>(c.head_dim),
                      static_cast<int>(bh), static_cast<long long>(c.seq_len * c.head_dim),
                      static_cast<long long>(c.seq_len * c.seq_len)};
    const float scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
    const unsigned rows = static_cast<unsigned>(bh * c.seq_len);
    auto forward = [&]() {
      chain.abt(q.get(), k.get(), p.get());
      softmax_forward<<<rows, kRowThreads, 0, stream>>>(p.as<__nv_bfloat16>(), c.seq_len, scale);
      PROBE_CUDA(cudaGetLastError());
      chain.pb(p.get(), v.get(), o.get());
    };
    auto backward = [&]() {
      chain.ptb(p.get(), dout.get(), dv.get());
      chain.abt(dout.get(), v.get(), dp.get());
      softmax_backward<<<rows, kRowThreads, 0, stream>>>(p.as<__nv_bfloat16>(),
                                                         dp.as<__nv_bfloat16>(), c.seq_len, scale);
      PROBE_CUDA(cudaGetLastError());
      chain.pb(dp.get(), k.get(), dq.get());
      chain.ptb(dp.get(), q.get(), dk.get());
    };
    forward();  // P must hold probabilities before the backward pass is timed
    for (Direction dir : {Direction::kForward, Direction::kBackward}) {
      Record r;
      r.kind = Kind::kAttention;
      r.attention = {c.batch, c.seq_len, c.heads, c.head_dim, /*causal=*/false, /*fused=*/false,
                     dir, DType::kBf16, kAttentionChain};
      r.timing = time_on_stream(stream, dir == Direction::kForward ? std::function<void()>(forward)
                                                                  : std::function<void()>(backward),
                                plan);
      run.records.push_back(std::move(r));
      ++done;
    }
  }
  std::cerr << "  attention: " << done << " measurements\n";
  add_note(run.header, std::string("attention: unfused chain (") + kAttentionChain +
                           "), no fused kernel without extra libraries");
  if (skipped > 0) {
    add_note(run.header, "attention: " + std::to_string(skipped) + " cases skipped (too big for free memory)");
  }
  PROBE_CUBLAS(cublasDestroy(handle));
  PROBE_CUDA(cudaStreamDestroy(stream));
}

}  // namespace clustersim::kernels_probe
