// SPDX-License-Identifier: Apache-2.0
// CUDA-event timing with a host-released blocking kernel in front of each sample.
#include "kernels_probe/timing.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <iostream>
#include <memory>
#include <string>
#include <thread>

#include "kernels_probe/cuda_check.h"

namespace clustersim::kernels_probe {
namespace {

// The GPU's global nanosecond timer (the same on every SM, unaffected by clock changes).
__device__ unsigned long long globaltimer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Holds its stream until the host sets *release (mapped pinned memory), so that a sample's
// launches, on every device, are all queued before any of its start events runs (nvbench's
// blocking_kernel). After `timeout_ns` it lets the stream go by itself and sets *timed_out: the
// host never released it (an exception between launch and release, a full launch queue).
__global__ void block_stream(const volatile int* release, unsigned long long timeout_ns,
                             volatile int* timed_out) {
  const unsigned long long start = globaltimer_ns();
  while (*release == 0) {
    if (globaltimer_ns() - start > timeout_ns) {
      *timed_out = 1;
      return;
    }
  }
}

// Longest a block_stream kernel waits for the host: enqueueing a sample takes microseconds to
// milliseconds, so this is reached only when the host could not enqueue while the streams were
// held (a launch queue or NCCL work FIFO filled up); the sample is then retried with fewer launches.
constexpr unsigned long long kBlockTimeoutNs = 2'000'000'000ull;

// Two ints in pinned host memory mapped into every device: [0] release, [1] timed out.
class HostFlags {
 public:
  HostFlags() {
    void* p = nullptr;
    PROBE_CUDA(cudaHostAlloc(&p, 2 * sizeof(int), cudaHostAllocMapped | cudaHostAllocPortable));
    flags_ = static_cast<int*>(p);
    flags_[0] = 0;
    flags_[1] = 0;
  }
  ~HostFlags() { cudaFreeHost(const_cast<int*>(flags_)); }  // destructor: nothing to do on failure
  HostFlags(const HostFlags&) = delete;
  HostFlags& operator=(const HostFlags&) = delete;

  volatile int* release() const { return flags_; }
  volatile int* timed_out() const { return flags_ + 1; }
  // The flags' address on the current device.
  int* on_device() const {
    void* p = nullptr;
    PROBE_CUDA(cudaHostGetDevicePointer(&p, const_cast<int*>(flags_), 0));
    return static_cast<int*>(p);
  }

 private:
  volatile int* flags_ = nullptr;
};

// Sets the release flag when it goes out of scope, so that an exception thrown while a sample is
// being enqueued never leaves a stream held (until kBlockTimeoutNs).
class Releaser {
 public:
  explicit Releaser(volatile int* release) : release_(release) {}
  ~Releaser() {
    std::atomic_thread_fence(std::memory_order_seq_cst);  // every launch is enqueued before
    *release_ = 1;
  }
  Releaser(const Releaser&) = delete;
  Releaser& operator=(const Releaser&) = delete;

 private:
  volatile int* release_;
};

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
  std::vector<int*> flags_on_device(n);
  const HostFlags flags;
  int previous = 0;
  PROBE_CUDA(cudaGetDevice(&previous));
  for (size_t i = 0; i < n; ++i) {
    PROBE_CUDA(cudaSetDevice(devices[i]));
    events.push_back(std::make_unique<EventPair>());  // events belong to the current device
    flags_on_device[i] = flags.on_device();
  }
  auto sync_all = [&]() {
    for (size_t i = 0; i < n; ++i) {
      PROBE_CUDA(cudaSetDevice(devices[i]));
      wait_for_stream(streams[i], "warm-up", plan.sample_timeout_s, plan.poll);
    }
  };
  // One sample of `launches` back-to-back operations; returns seconds per operation, or -1 when
  // the streams were released by block_stream's timeout, not by the host. Every stream
  // is held by block_stream while the host records the start events and enqueues the launches,
  // then all are released at once by one host write: the devices start within the time a write
  // to host memory takes to reach them (about a microsecond), where launching them one after
  // another from this thread made device 0 wait inside the collective for the others.
  auto sample = [&](int launches) {
    *flags.release() = 0;
    *flags.timed_out() = 0;
    {
      const Releaser releaser(flags.release());
      for (size_t i = 0; i < n; ++i) {
        PROBE_CUDA(cudaSetDevice(devices[i]));
        block_stream<<<1, 1, 0, streams[i]>>>(flags_on_device[i], kBlockTimeoutNs,
                                               flags_on_device[i] + 1);
        PROBE_CUDA(cudaGetLastError());
        PROBE_CUDA(cudaEventRecord(events[i]->start_, streams[i]));
      }
      for (int j = 0; j < launches; ++j) launch();
      for (size_t i = 0; i < n; ++i) {
        PROBE_CUDA(cudaSetDevice(devices[i]));
        PROBE_CUDA(cudaEventRecord(events[i]->stop_, streams[i]));
      }
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
    if (*flags.timed_out() != 0) return -1.0;
    return static_cast<double>(worst_ms) * 1e-3 / launches;
  };
  // A sample whose launches could not all be enqueued while the streams were held is discarded
  // and taken again with half the launches (down to one, where nothing can fill up).
  auto held_sample = [&](int& launches) {
    for (;;) {
      const double t = sample(launches);
      if (t >= 0) return t;
      if (launches == 1) {
        throw ProbeError("the host could not enqueue even one launch while the streams were held (" +
                         std::to_string(kBlockTimeoutNs / 1000000000ull) + " s)");
      }
      launches = std::max(1, launches / 2);
      std::cerr << "  timing: streams not released in time, retrying with " << launches
                << " launches per sample\n";
    }
  };

  for (int i = 0; i < plan.warmup; ++i) launch();
  sync_all();
  int launches = 1;
  const double single = held_sample(launches);
  if (single > 0 && single < plan.min_sample_s) {
    launches = static_cast<int>(std::ceil(plan.min_sample_s / single));
    launches = std::clamp(launches, 1, plan.max_launches);
  }
  std::vector<double> samples;
  samples.reserve(static_cast<size_t>(plan.reps));
  for (int r = 0; r < plan.reps; ++r) samples.push_back(held_sample(launches));
  PROBE_CUDA(cudaSetDevice(previous));
  return summarize_samples(std::move(samples), static_cast<uint32_t>(plan.warmup),
                           static_cast<uint32_t>(launches));
}

}  // namespace clustersim::kernels_probe
