// SPDX-License-Identifier: Apache-2.0
// CUDA-event timing with a spin kernel in front of each sample.
#include "kernels_probe/timing.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <thread>

#include "kernels_probe/cuda_check.h"

namespace clustersim::kernels_probe {
namespace {

__global__ void spin_kernel(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

// Cycles for roughly `us` microseconds at the device's clock.
long long spin_cycles(int device, double us) {
  int khz = 0;
  PROBE_CUDA(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device));
  if (khz <= 0) khz = 1500000;
  return static_cast<long long>(us * khz / 1000.0);
}

// Enough spin to cover the host enqueueing `launches` operations on `streams` streams (about
// 10 us per launch per stream, generously), capped at 10 ms.
double spin_us(int launches, size_t streams) {
  return std::min(10000.0, 50.0 + 10.0 * launches * static_cast<double>(streams));
}

class EventPair {
 public:
  EventPair() {
    PROBE_CUDA(cudaEventCreate(&start_));
    PROBE_CUDA(cudaEventCreate(&stop_));
  }
  ~EventPair() {
    cudaEventDestroy(start_);  // destructor: nothing useful to do on failure
    cudaEventDestroy(stop_);
  }
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
};

// Polls `query` (cudaEventQuery or cudaStreamQuery) until it reports completion. The driver's
// blocking waits (cudaEventSynchronize, cudaStreamSynchronize) have no deadline: a hung kernel or
// NCCL call would hold the probe, and the measurements it holds in memory, until killed.
template <typename Query>
void wait_until_done(Query query, const char* what, double timeout_s, const std::function<void()>& poll) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
  for (int tries = 0;; ++tries) {
    const cudaError_t st = query();
    if (st == cudaSuccess) return;
    if (st != cudaErrorNotReady) fail_call(what, __FILE__, __LINE__, cudaGetErrorString(st));
    if (poll) poll();
    if (Clock::now() > deadline) {
      throw ProbeTimeout(std::string(what) + " did not finish within " + std::to_string(timeout_s) +
                         " s: a kernel or NCCL call hangs");
    }
    // Spin briefly (short samples), then yield the core: the GPU timestamps do not depend on it.
    if (tries > 1000) std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

}  // namespace

void wait_for_stream(cudaStream_t stream, const char* what, double timeout_s,
                     const std::function<void()>& poll) {
  wait_until_done([&]() { return cudaStreamQuery(stream); }, what, timeout_s, poll);
}

TimingStats time_on_stream(cudaStream_t stream, const std::function<void()>& launch,
                           const TimingPlan& plan) {
  int device = 0;
  PROBE_CUDA(cudaGetDevice(&device));
  return time_on_streams({device}, {stream}, launch, plan);
}

TimingStats time_on_streams(const std::vector<int>& devices, const std::vector<cudaStream_t>& streams,
                            const std::function<void()>& launch, const TimingPlan& plan) {
  const size_t n = devices.size();
  std::vector<std::unique_ptr<EventPair>> events;
  std::vector<long long> cycles_per_us(n);
  int previous = 0;
  PROBE_CUDA(cudaGetDevice(&previous));
  for (size_t i = 0; i < n; ++i) {
    PROBE_CUDA(cudaSetDevice(devices[i]));
    events.push_back(std::make_unique<EventPair>());  // events belong to the current device
    cycles_per_us[i] = spin_cycles(devices[i], 1.0);
  }
  auto sync_all = [&]() {
    for (size_t i = 0; i < n; ++i) {
      PROBE_CUDA(cudaSetDevice(devices[i]));
      wait_for_stream(streams[i], "warm-up", plan.sample_timeout_s, plan.poll);
    }
  };
  // One sample of `launches` back-to-back operations; returns seconds per operation.
  auto sample = [&](int launches) {
    for (size_t i = 0; i < n; ++i) {
      PROBE_CUDA(cudaSetDevice(devices[i]));
      spin_kernel<<<1, 1, 0, streams[i]>>>(static_cast<long long>(cycles_per_us[i] * spin_us(launches, n)));
      PROBE_CUDA(cudaGetLastError());
      PROBE_CUDA(cudaEventRecord(events[i]->start_, streams[i]));
    }
    for (int j = 0; j < launches; ++j) launch();
    for (size_t i = 0; i < n; ++i) {
      PROBE_CUDA(cudaSetDevice(devices[i]));
      PROBE_CUDA(cudaEventRecord(events[i]->stop_, streams[i]));
    }
    float worst_ms = 0;
    for (size_t i = 0; i < n; ++i) {
      PROBE_CUDA(cudaSetDevice(devices[i]));
      wait_until_done([&]() { return cudaEventQuery(events[i]->stop_); }, "sample",
                      plan.sample_timeout_s, plan.poll);
      float ms = 0;
      PROBE_CUDA(cudaEventElapsedTime(&ms, events[i]->start_, events[i]->stop_));
      worst_ms = std::max(worst_ms, ms);
    }
    return static_cast<double>(worst_ms) * 1e-3 / launches;
  };

  for (int i = 0; i < plan.warmup; ++i) launch();
  sync_all();
  const double single = sample(1);
  int launches = 1;
  if (single > 0 && single < plan.min_sample_s) {
    launches = static_cast<int>(std::ceil(plan.min_sample_s / single));
    launches = std::clamp(launches, 1, plan.max_launches);
  }
  std::vector<double> samples;
  samples.reserve(static_cast<size_t>(plan.reps));
  for (int r = 0; r < plan.reps; ++r) samples.push_back(sample(launches));
  PROBE_CUDA(cudaSetDevice(previous));
  return summarize_samples(std::move(samples), static_cast<uint32_t>(plan.warmup),
                           static_cast<uint32_t>(launches));
}

}  // namespace clustersim::kernels_probe
