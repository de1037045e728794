// SPDX-License-Identifier: Apache-2.0
// Times GPU work with CUDA events: warm-up, batching of short launches, repeated samples.
#pragma once

#include <cuda_runtime.h>

#include <functional>
#include <vector>

#include "kernels_probe/probe_record.h"

namespace clustersim::kernels_probe {

struct TimingPlan {
  int warmup = 5;
  int reps = 20;
  // Short operations are launched back to back, enough of them to fill this much GPU time per
  // sample (up to max_launches), and the sample is divided by their count: event resolution
  // (~0.5 us) and per-sample host gaps then no longer dominate microsecond kernels.
  double min_sample_s = 200e-6;
  int max_launches = 64;
  // The longest wait for one sample (or the warm-up) to finish; beyond it ProbeTimeout is thrown.
  double sample_timeout_s = 30;
  // Called over and over while waiting for the GPU; may throw to abandon the wait (the collectives
  // check ncclCommGetAsyncError here). Empty: nothing to check.
  std::function<void()> poll;
};

// Waits for all work queued on `stream` by polling cudaStreamQuery (never blocking in the driver),
// calling `poll` between checks. Throws ProbeTimeout naming `what` after `timeout_s` seconds, and
// ProbeError when the stream reports an error.
void wait_for_stream(cudaStream_t stream, const char* what, double timeout_s,
                     const std::function<void()>& poll = {});

// Times `launch`, which enqueues one operation on `stream` (of the current device). Before each
// sample a blocking kernel holds the stream until the host has queued all of the sample's
// launches, then the host releases it: samples measure GPU time, not the host's launch latency.
TimingStats time_on_stream(cudaStream_t stream, const std::function<void()>& launch,
                           const TimingPlan& plan);

// As time_on_stream for an operation spanning several devices (one stream each, devices[i] owns
// streams[i]); `launch` enqueues on all of them. A sample is the slowest stream's elapsed time.
// All streams are released by the same host write, so the devices start together (to about a
// microsecond, the time the write takes to reach each GPU over PCIe).
TimingStats time_on_streams(const std::vector<int>& devices, const std::vector<cudaStream_t>& streams,
                            const std::function<void()>& launch, const TimingPlan& plan);

}  // namespace clustersim::kernels_probe
