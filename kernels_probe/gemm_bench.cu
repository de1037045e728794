// SPDX-License-Identifier: Apache-2.0
// Times cublasGemmEx (BF16) and cublasLtMatmul (FP8) on the transformer GEMM shapes.
#include "kernels_probe/gemm_bench.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <memory>

#include "kernels_probe/cuda_check.h"
#include "kernels_probe/device_buffer.h"
#include "kernels_probe/probe_shapes.h"
#include "kernels_probe/timing.h"

namespace clustersim::kernels_probe {
namespace {

constexpr size_t kWorkspaceBytes = size_t{64} << 20;

// Layouts, for a linear layer Y = X W^T with W stored [out x in] row-major (torch.nn.Linear) and
// activations row-major, as PyTorch and Megatron-LM call cuBLAS (column-major, so each call
// computes C^T = op(A) op(B) with A the [n x k]-sized buffer and B the [m x k]-sized one):
//   forward  Y  = X W^T   (m = tokens, n = out, k = in):  TN, lda = k, ldb = k
//   dgrad    dX = dY W    (m = tokens, n = in,  k = out): NN, lda = n, ldb = k
//   wgrad    dW = dY^T X  (m = out,    n = in,  k = tokens): NT, lda = n, ldb = m
// ldc = n throughout. FP8 stays TN in every pass: Hopper's FP8 tensor cores take only TN, and
// Transformer Engine materialises the transposed copies it needs for the backward GEMMs.
struct BlasLayout {
  cublasOperation_t trans_a, trans_b;
  int64_t lda, ldb;
  const char* name;
};

BlasLayout bf16_layout(const GemmCase& g) {
  const auto m = static_cast<int64_t>(g.m), n = static_cast<int64_t>(g.n), k = static_cast<int64_t>(g.k);
  switch (g.pass) {
    case GemmPass::kForward: break;
    case GemmPass::kDataGrad: return {CUBLAS_OP_N, CUBLAS_OP_N, n, k, "NN"};
    case GemmPass::kWeightGrad: return {CUBLAS_OP_N, CUBLAS_OP_T, n, m, "NT"};
  }
  return {CUBLAS_OP_T, CUBLAS_OP_N, k, k, "TN"};
}

// Operands of one shape, rotated so that every launch reads operands that are not in L2: a
// shape whose W, X and C fit in the L2 (235 of the 942 GEMMs of 2026-12-04 on a 60 MiB L2) would
// otherwise be timed with its inputs cached, faster than in a training step, where the previous
// kernels have evicted them. ceil(2 x L2 / (W + X + C)) copies in one arena, fewer when free
// memory is short (then noted); one copy for shapes beyond twice the L2.
struct GemmOperands {
  DeviceBuffer arena;
  size_t copies = 1;
  size_t stride = 0;                      // bytes per copy
  size_t w_bytes = 0, x_bytes = 0;        // W [n x k] and X [m x k]; C [m x n] follows them
  void* w(size_t i) const { return arena.as<char>() + i * stride; }
  void* x(size_t i) const { return arena.as<char>() + i * stride + w_bytes; }
  void* c(size_t i) const { return arena.as<char>() + i * stride + w_bytes + x_bytes; }
};

size_t round_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

// `capped` is set when free memory allowed fewer copies than the L2 asks for.
GemmOperands allocate(const GemmCase& g, size_t in_elem_bytes, size_t l2_bytes, cudaStream_t stream,
                      bool fp8, bool& capped) {
  constexpr size_t kAlign = 256;
  GemmOperands o;
  o.w_bytes = round_up(g.n * g.k * in_elem_bytes, kAlign);
  o.x_bytes = round_up(g.m * g.k * in_elem_bytes, kAlign);
  o.stride = o.w_bytes + o.x_bytes + round_up(g.m * g.n * 2, kAlign);
  const size_t wanted = std::max<size_t>(1, (2 * l2_bytes + o.stride - 1) / o.stride);
  const size_t fit = std::max<size_t>(1, free_device_memory() * 8 / 10 / o.stride);
  o.copies = std::min(wanted, fit);
  capped = o.copies < wanted;
  o.arena = DeviceBuffer(o.copies * o.stride);
  // Non-zero data everywhere (C included: it is overwritten); FP8 as valid E4M3 bytes.
  if (fp8) {
    fill_fp8(o.arena.get(), o.arena.bytes(), 1, stream);
  } else {
    fill_bf16(o.arena.get(), o.arena.bytes() / 2, 1, stream);
  }
  return o;
}

// RAII holders for the cuBLASLt descriptors of one FP8 matmul.
struct LtPlan {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulHeuristicResult_t heuristic{};
  ~LtPlan() {
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (c) cublasLtMatrixLayoutDestroy(c);
    if (op) cublasLtMatmulDescDestroy(op);
  }
};

// Builds the FP8 plan; returns false when cuBLASLt offers no algorithm for the shape.
// `fast_accum`: FP8 fast accumulation (partial sums kept at lower precision in the tensor cores),
// which Transformer Engine uses in the forward GEMMs and not in dgrad/wgrad; up to ~1.2x faster.
bool plan_fp8(cublasLtHandle_t lt, const GemmCase& g, bool fast_accum, LtPlan& plan) {
  PROBE_CUBLAS(cublasLtMatmulDescCreate(&plan.op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const int8_t fast = fast_accum ? 1 : 0;
  PROBE_CUBLAS(cublasLtMatmulDescSetAttribute(plan.op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast));
  const cublasOperation_t trans = CUBLAS_OP_T, no_trans = CUBLAS_OP_N;
  PROBE_CUBLAS(cublasLtMatmulDescSetAttribute(plan.op, CUBLASLT_MATMUL_DESC_TRANSA, &trans, sizeof trans));
  PROBE_CUBLAS(cublasLtMatmulDescSetAttribute(plan.op, CUBLASLT_MATMUL_DESC_TRANSB, &no_trans, sizeof no_trans));
  PROBE_CUBLAS(cublasLtMatrixLayoutCreate(&plan.a, CUDA_R_8F_E4M3, g.k, g.n, g.k));
  PROBE_CUBLAS(cublasLtMatrixLayoutCreate(&plan.b, CUDA_R_8F_E4M3, g.k, g.m, g.k));
  PROBE_CUBLAS(cublasLtMatrixLayoutCreate(&plan.c, CUDA_R_16BF, g.n, g.m, g.n));
  cublasLtMatmulPreference_t pref = nullptr;
  PROBE_CUBLAS(cublasLtMatmulPreferenceCreate(&pref));
  std::unique_ptr<std::remove_pointer_t<cublasLtMatmulPreference_t>,
                  decltype(&cublasLtMatmulPreferenceDestroy)>
      pref_owner(pref, &cublasLtMatmulPreferenceDestroy);
  const size_t workspace = kWorkspaceBytes;
  PROBE_CUBLAS(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                    &workspace, sizeof workspace));
  int found = 0;
  const cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(lt, plan.op, plan.a, plan.b, plan.c,
                                                           plan.c, pref, 1, &plan.heuristic, &found);
  if (st == CUBLAS_STATUS_NOT_SUPPORTED) return false;
  PROBE_CUBLAS(st);
  return found > 0;
}

}  // namespace

void preheat_gpu(double seconds) {
  cudaStream_t stream = nullptr;
  cublasHandle_t handle = nullptr;
  open_blas_stream(stream, handle);
  constexpr int kN = 8192;
  const size_t elems = size_t{kN} * kN;
  if (3 * elems * 2 < free_device_memory() / 2) {
    DeviceBuffer a(elems * 2), b(elems * 2), c(elems * 2);
    fill_bf16(a.get(), elems, 3, stream);
    fill_bf16(b.get(), elems, 4, stream);
    const float alpha = 1.0f, beta = 0.0f;
    const auto start = std::chrono::steady_clock::now();
    while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < seconds) {
      for (int i = 0; i < 20; ++i) {  // ~2 ms each on an H100/H200
        PROBE_CUBLAS(cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, kN, kN, kN, &alpha, a.get(),
                                  CUDA_R_16BF, kN, b.get(), CUDA_R_16BF, kN, &beta, c.get(),
                                  CUDA_R_16BF, kN, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
      }
      wait_for_stream(stream, "preheat GEMMs", 30);
    }
  }
  PROBE_CUBLAS(cublasDestroy(handle));
  PROBE_CUDA(cudaStreamDestroy(stream));
}

void run_gemm_bench(const ProbeOptions& options, ProbeRun& run) {
  PROBE_CUDA(cudaSetDevice(0));
  cudaStream_t stream = nullptr;
  PROBE_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cublasHandle_t handle = nullptr;
  PROBE_CUBLAS(cublasCreate(&handle));
  cublasLtHandle_t lt = nullptr;
  PROBE_CUBLAS(cublasLtCreate(&lt));
  DeviceBuffer workspace(kWorkspaceBytes);
  PROBE_CUBLAS(cublasSetStream(handle, stream));
  PROBE_CUBLAS(cublasSetWorkspace(handle, workspace.get(), workspace.bytes()));

  TimingPlan plan;
  plan.warmup = options.warmup;
  plan.reps = options.reps;
  const bool fp8_supported = run.header.compute_capability >= 89;
  if (!fp8_supported) {
    add_note(run.header, "gemm fp8: skipped, needs compute capability 8.9 or newer (have " +
                             std::to_string(run.header.compute_capability) + ")");
  }
  const std::vector<GemmCase> cases = transformer_gemm_cases(options.quick);
  const float alpha = 1.0f, beta = 0.0f;
  const size_t l2 = std::max<uint64_t>(run.header.l2_cache_bytes, size_t{8} << 20);
  int skipped_fp8 = 0, skipped_memory = 0, capped_copies = 0, done = 0;
  for (const GemmCase& g : cases) {
    for (DType dtype : {DType::kBf16, DType::kFp8E4m3}) {
      const bool fp8 = dtype == DType::kFp8E4m3;
      if (fp8 && !fp8_supported) continue;
      const size_t in_bytes = fp8 ? 1 : 2;
      const size_t need = (g.n * g.k + g.m * g.k) * in_bytes + g.m * g.n * 2;
      if (need > free_device_memory() * 9 / 10) {
        ++skipped_memory;
        continue;
      }
      bool capped = false;
      const GemmOperands ops = allocate(g, in_bytes, l2, stream, fp8, capped);
      capped_copies += capped ? 1 : 0;
      size_t launch_index = 0;
      Record r;
      r.kind = Kind::kGemm;
      r.gemm = {g.m, g.n, g.k, dtype, g.label};
      if (!fp8) {
        const BlasLayout layout = bf16_layout(g);
        r.gemm.label += std::string(" ") + layout.name;
        auto launch = [&]() {
          const size_t i = launch_index++ % ops.copies;
          PROBE_CUBLAS(cublasGemmEx(handle, layout.trans_a, layout.trans_b, static_cast<int>(g.n),
                                    static_cast<int>(g.m), static_cast<int>(g.k), &alpha,
                                    ops.w(i), CUDA_R_16BF, static_cast<int>(layout.lda), ops.x(i),
                                    CUDA_R_16BF, static_cast<int>(layout.ldb), &beta, ops.c(i),
                                    CUDA_R_16BF, static_cast<int>(g.n), CUBLAS_COMPUTE_32F,
                                    CUBLAS_GEMM_DEFAULT));
        };
        r.timing = time_on_stream(stream, launch, plan);
      } else {
        // FP8 tensor cores want 16-element-aligned leading dimensions.
        LtPlan lt_plan;
        const bool fast_accum = g.pass == GemmPass::kForward;
        if (g.k % 16 != 0 || g.n % 16 != 0 || !plan_fp8(lt, g, fast_accum, lt_plan)) {
          ++skipped_fp8;
          continue;
        }
        r.gemm.label += fast_accum ? " TN fast_accum" : " TN";
        auto launch = [&]() {
          const size_t i = launch_index++ % ops.copies;
          PROBE_CUBLAS(cublasLtMatmul(lt, lt_plan.op, &alpha, ops.w(i), lt_plan.a, ops.x(i),
                                      lt_plan.b, &beta, ops.c(i), lt_plan.c, ops.c(i),
                                      lt_plan.c, &lt_plan.heuristic.algo, workspace.get(),
                                      workspace.bytes(), stream));
        };
        r.timing = time_on_stream(stream, launch, plan);
      }
      run.records.push_back(std::move(r));
      if (++done % 100 == 0) std::cerr << "  gemm: " << done << " measurements\n";
    }
  }
  std::cerr << "  gemm: " << done << " measurements\n";
  if (skipped_fp8 > 0) {
    add_note(run.header, "gemm fp8: " + std::to_string(skipped_fp8) +
                             " shapes skipped (no cuBLASLt algorithm or unaligned)");
  }
  if (fp8_supported) {
    add_note(run.header, "gemm fp8: E4M3 in, bf16 out, TN in every pass; fast accumulation in the "
                         "forward shapes only (label 'fast_accum'), as Transformer Engine runs them");
  }
  add_note(run.header, "gemm: operands rotated over ceil(2 x L2 / (W + X + C)) copies, so every launch "
                       "reads them from HBM");
  if (capped_copies > 0) {
    add_note(run.header, "gemm: " + std::to_string(capped_copies) +
                             " shapes with fewer operand copies than 2 x L2 needs (free memory)");
  }
  if (skipped_memory > 0) {
    add_note(run.header, "gemm: " + std::to_string(skipped_memory) + " shapes skipped (too big for free memory)");
  }
  PROBE_CUBLAS(cublasLtDestroy(lt));
  PROBE_CUBLAS(cublasDestroy(handle));
  PROBE_CUDA(cudaStreamDestroy(stream));
}

}  // namespace clustersim::kernels_probe
