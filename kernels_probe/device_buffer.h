// SPDX-License-Identifier: Apache-2.0
// Owning device allocations and fills with non-zero data (zeros would flatter power and clocks).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace clustersim::kernels_probe {

// cudaMalloc'd bytes on the device current at construction, freed on destruction.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* get() const { return ptr_; }
  template <typename T>
  T* as() const { return static_cast<T*>(ptr_); }
  size_t bytes() const { return bytes_; }
  // Forgets the allocation without freeing it: for error paths where cudaFree could wait on a
  // hung device (the process is about to exit and the driver reclaims the memory).
  void leak() {
    ptr_ = nullptr;
    bytes_ = 0;
  }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

// Fills `count` bf16 values with pseudo-random numbers in [-1, 1) (a hash of the index and seed).
void fill_bf16(void* data, size_t count, uint32_t seed, cudaStream_t stream);

// Fills `count` bytes with finite FP8 E4M3 values of magnitude below 2 (no NaN encodings).
void fill_fp8(void* data, size_t count, uint32_t seed, cudaStream_t stream);

// Bytes of free device memory on the current device.
size_t free_device_memory();

}  // namespace clustersim::kernels_probe
