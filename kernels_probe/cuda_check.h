// SPDX-License-Identifier: Apache-2.0
// Checks every CUDA runtime, cuBLAS and NCCL call: a failure throws with the call and its place.
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#if CLUSTERSIM_PROBE_HAVE_NCCL
#include <nccl.h>
#endif

namespace clustersim::kernels_probe {

// Thrown by the CHECK macros; main() prints it and exits 1.
class ProbeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// GPU work that did not finish within its deadline (a hung kernel or NCCL call). The device may be
// wedged: main() writes what was measured, runs no further part and exits 1 without CUDA teardown.
class ProbeTimeout : public ProbeError {
 public:
  using ProbeError::ProbeError;
};

[[noreturn]] inline void fail_call(const char* call, const char* file, int line,
                                   const std::string& what) {
  throw ProbeError(std::string(file) + ":" + std::to_string(line) + ": " + call + " failed: " + what);
}

}  // namespace clustersim::kernels_probe

#define PROBE_CUDA(call)                                                               \
  do {                                                                                 \
    const cudaError_t probe_err_ = (call);                                             \
    if (probe_err_ != cudaSuccess) {                                                   \
      ::clustersim::kernels_probe::fail_call(#call, __FILE__, __LINE__,                \
                                             cudaGetErrorString(probe_err_));          \
    }                                                                                  \
  } while (0)

#define PROBE_CUBLAS(call)                                                                    \
  do {                                                                                        \
    const cublasStatus_t probe_st_ = (call);                                                  \
    if (probe_st_ != CUBLAS_STATUS_SUCCESS) {                                                 \
      ::clustersim::kernels_probe::fail_call(#call, __FILE__, __LINE__,                       \
                                             std::string(cublasGetStatusName(probe_st_)) +    \
                                                 " (" + cublasGetStatusString(probe_st_) + ")"); \
    }                                                                                         \
  } while (0)

#if CLUSTERSIM_PROBE_HAVE_NCCL
#define PROBE_NCCL(call)                                                               \
  do {                                                                                 \
    const ncclResult_t probe_nr_ = (call);                                             \
    if (probe_nr_ != ncclSuccess) {                                                    \
      ::clustersim::kernels_probe::fail_call(#call, __FILE__, __LINE__,                \
                                             ncclGetErrorString(probe_nr_));           \
    }                                                                                  \
  } while (0)
#endif

namespace clustersim::kernels_probe {

// Device 0, a new non-blocking stream and a cuBLAS handle that runs on it; the caller destroys
// both (cublasDestroy, cudaStreamDestroy).
inline void open_blas_stream(cudaStream_t& stream, cublasHandle_t& handle) {
  PROBE_CUDA(cudaSetDevice(0));
  PROBE_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  PROBE_CUBLAS(cublasCreate(&handle));
  PROBE_CUBLAS(cublasSetStream(handle, stream));
}

}  // namespace clustersim::kernels_probe
