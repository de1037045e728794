// SPDX-License-Identifier: Apache-2.0
// Device allocations and data fills for the probe.
#include "kernels_probe/device_buffer.h"

#include <cuda_bf16.h>

#include <utility>

#include "kernels_probe/cuda_check.h"

namespace clustersim::kernels_probe {
namespace {

__device__ uint32_t mix(uint64_t i, uint32_t seed) {
  // 32-bit finaliser of MurmurHash3 over index and seed: cheap, well spread.
  uint32_t h = static_cast<uint32_t>(i) ^ static_cast<uint32_t>(i >> 32) * 0x9e3779b9u ^ seed;
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return h;
}

__global__ void fill_bf16_kernel(__nv_bfloat16* data, size_t count, uint32_t seed) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    data[i] = __float2bfloat16(static_cast<float>(mix(i, seed)) * (2.0f / 4294967296.0f) - 1.0f);
  }
}

__global__ void fill_fp8_kernel(uint8_t* data, size_t count, uint32_t seed) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    // E4M3: sign, 4 exponent bits, 3 mantissa bits. Exponent fields 0..7 keep |x| < 2 and avoid
    // the NaN pattern (all ones).
    const uint32_t h = mix(i, seed);
    data[i] = static_cast<uint8_t>((h & 0x80u) | ((h >> 8) & 0x3fu));
  }
}

constexpr int kFillBlocks = 1024;
constexpr int kFillThreads = 256;

}  // namespace

DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) {
  if (bytes > 0) PROBE_CUDA(cudaMalloc(&ptr_, bytes));
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_ != nullptr) cudaFree(ptr_);  // destructor: nothing useful to do on failure
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (ptr_ != nullptr) cudaFree(ptr_);
    ptr_ = std::exchange(other.ptr_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void fill_bf16(void* data, size_t count, uint32_t seed, cudaStream_t stream) {
  if (count == 0) return;
  fill_bf16_kernel<<<kFillBlocks, kFillThreads, 0, stream>>>(static_cast<__nv_bfloat16*>(data),
                                                             count, seed);
  PROBE_CUDA(cudaGetLastError());
}

void fill_fp8(void* data, size_t count, uint32_t seed, cudaStream_t stream) {
  if (count == 0) return;
  fill_fp8_kernel<<<kFillBlocks, kFillThreads, 0, stream>>>(static_cast<uint8_t*>(data), count,
                                                            seed);
  PROBE_CUDA(cudaGetLastError());
}

size_t free_device_memory() {
  size_t free_bytes = 0, total = 0;
  PROBE_CUDA(cudaMemGetInfo(&free_bytes, &total));
  return free_bytes;
}

}  // namespace clustersim::kernels_probe
