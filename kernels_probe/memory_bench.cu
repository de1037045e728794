// SPDX-License-Identifier: Apache-2.0
// Copy, elementwise and layernorm-like kernels timed over sizes, rotating through an L2-defeating arena.
#include "kernels_probe/memory_bench.h"

#include <cuda_bf16.h>

#include <algorithm>
#include <iostream>

#include "kernels_probe/cuda_check.h"
#include "kernels_probe/device_buffer.h"
#include "kernels_probe/probe_shapes.h"
#include "kernels_probe/timing.h"

namespace clustersim::kernels_probe {
namespace {

constexpr int kThreads = 256;
constexpr size_t kAlign = 256;

// 16-byte vector copy, grid-stride.
__global__ void copy_kernel(const uint4* __restrict__ in, uint4* __restrict__ out, size_t n) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    out[i] = in[i];
  }
}

// z = gelu_tanh(x) * y over bf16 pairs (a SwiGLU/GeGLU-style gate): two reads, one write.
__global__ void elementwise_kernel(const __nv_bfloat162* __restrict__ x,
                                   const __nv_bfloat162* __restrict__ y,
                                   __nv_bfloat162* __restrict__ z, size_t n) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const float2 a = __bfloat1622float2(x[i]);
    const float2 b = __bfloat1622float2(y[i]);
    auto gelu = [](float v) { return 0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v))); };
    z[i] = __floats2bfloat162_rn(gelu(a.x) * b.x, gelu(a.y) * b.y);
  }
}

// One block per row: y = (x - mean) / sqrt(var + eps), bf16 in and out, statistics in fp32.
__global__ void layernorm_kernel(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y,
                                 size_t row_len) {
  __shared__ float partial[2][kThreads / 32];
  const __nv_bfloat16* in = x + blockIdx.x * row_len;
  __nv_bfloat16* out = y + blockIdx.x * row_len;
  float sum = 0, sq = 0;
  for (size_t i = threadIdx.x; i < row_len; i += kThreads) {
    const float v = __bfloat162float(in[i]);
    sum += v;
    sq += v * v;
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    sum += __shfl_xor_sync(0xffffffffu, sum, offset);
    sq += __shfl_xor_sync(0xffffffffu, sq, offset);
  }
  if (threadIdx.x % 32 == 0) {
    partial[0][threadIdx.x / 32] = sum;
    partial[1][threadIdx.x / 32] = sq;
  }
  __syncthreads();
  sum = 0;
  sq = 0;
  for (int w = 0; w < kThreads / 32; ++w) {
    sum += partial[0][w];
    sq += partial[1][w];
  }
  const float mean = sum / row_len;
  const float rstd = rsqrtf(fmaxf(sq / row_len - mean * mean, 0.0f) + 1e-5f);
  for (size_t i = threadIdx.x; i < row_len; i += kThreads) {
    out[i] = __float2bfloat16((__bfloat162float(in[i]) - mean) * rstd);
  }
}

// Blocks for a grid-stride kernel over n items: enough to fill the GPU, no more than needed.
unsigned grid_for(size_t n, int sm_count) {
  const size_t wanted = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::max<size_t>(1, std::min<size_t>(wanted, size_t{32} * sm_count)));
}

size_t round_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

}  // namespace

void run_memory_bench(const ProbeOptions& options, ProbeRun& run) {
  PROBE_CUDA(cudaSetDevice(0));
  cudaStream_t stream = nullptr;
  PROBE_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  TimingPlan plan;
  plan.warmup = options.warmup;
  plan.reps = options.reps;
  const int sms = static_cast<int>(run.header.sm_count);
  const size_t l2 = std::max<uint64_t>(run.header.l2_cache_bytes, size_t{8} << 20);
  int done = 0;
  for (MemoryOp op : {MemoryOp::kCopy, MemoryOp::kElementwise, MemoryOp::kLayerNorm}) {
    // Traffic per launch: copy reads and writes n bytes each; elementwise reads 2n, writes n;
    // layernorm reads and writes n (statistics pass and output pass read the same row).
    const uint64_t parts = op == MemoryOp::kElementwise ? 3 : 2;
    const uint64_t min_bytes = op == MemoryOp::kLayerNorm ? parts * kLayerNormRow * 2 : 4096;
    for (uint64_t bytes : byte_sizes(min_bytes, options.max_bytes, options.quick)) {
      const size_t operand = round_up(bytes / parts, kAlign);   // bytes of one operand
      const size_t footprint = operand * parts;
      const size_t arena_bytes = round_up(std::max(2 * footprint, 4 * l2 + footprint), kAlign);
      if (arena_bytes > free_device_memory() * 9 / 10) break;
      DeviceBuffer arena(arena_bytes);
      fill_bf16(arena.get(), arena_bytes / 2, 21, stream);
      const size_t slots = (arena_bytes - footprint) / footprint + 1;
      size_t launch_index = 0;
      char* base = arena.as<char>();
      auto launch = [&]() {
        char* at = base + (launch_index++ % slots) * footprint;
        switch (op) {
          case MemoryOp::kCopy: {
            const size_t n = operand / sizeof(uint4);
            copy_kernel<<<grid_for(n, sms), kThreads, 0, stream>>>(
                reinterpret_cast<const uint4*>(at), reinterpret_cast<uint4*>(at + operand), n);
            break;
          }
          case MemoryOp::kElementwise: {
            const size_t n = operand / sizeof(__nv_bfloat162);
            elementwise_kernel<<<grid_for(n, sms), kThreads, 0, stream>>>(
                reinterpret_cast<const __nv_bfloat162*>(at),
                reinterpret_cast<const __nv_bfloat162*>(at + operand),
                reinterpret_cast<__nv_bfloat162*>(at + 2 * operand), n);
            break;
          }
          case MemoryOp::kLayerNorm: {
            const size_t rows = operand / (kLayerNormRow * 2);
            layernorm_kernel<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(
                reinterpret_cast<const __nv_bfloat16*>(at),
                reinterpret_cast<__nv_bfloat16*>(at + operand), kLayerNormRow);
            break;
          }
        }
        PROBE_CUDA(cudaGetLastError());
      };
      Record r;
      r.kind = Kind::kMemory;
      const uint64_t moved = op == MemoryOp::kLayerNorm
                                 ? parts * (operand / (kLayerNormRow * 2)) * kLayerNormRow * 2
                                 : parts * operand;
      r.memory = {op, moved, DType::kBf16, op == MemoryOp::kLayerNorm ? kLayerNormRow : 0};
      r.timing = time_on_stream(stream, launch, plan);
      run.records.push_back(std::move(r));
      ++done;
    }
  }
  std::cerr << "  memory: " << done << " measurements\n";
  PROBE_CUDA(cudaStreamDestroy(stream));
}

}  // namespace clustersim::kernels_probe
