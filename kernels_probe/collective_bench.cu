// SPDX-License-Identifier: Apache-2.0
// NCCL collectives over single-process communicators (ncclCommInitAll), timed per rank stream.
#include "kernels_probe/collective_bench.h"

#include <cstdlib>
#include <exception>
#include <iostream>
#include <vector>

#include "kernels_probe/cuda_check.h"
#include "kernels_probe/device_buffer.h"
#include "kernels_probe/probe_shapes.h"
#include "kernels_probe/timing.h"

namespace clustersim::kernels_probe {

#if CLUSTERSIM_PROBE_HAVE_NCCL
namespace {

std::string env_or_auto(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : "auto";
}

std::vector<int> rank_counts(int devices) {
  std::vector<int> out;
  for (int n = 1; n <= devices; n *= 2) out.push_back(n);
  if (out.back() != devices) out.push_back(devices);
  return out;
}

// Communicators, streams and buffers for the first `ranks` devices; released on destruction.
// Destroyed while an exception unwinds (a failed call, an asynchronous NCCL error, a timeout), it
// aborts the communicators instead: ncclCommDestroy waits for outstanding work and can hang after
// an error, ncclCommAbort does not. The buffers are then left to process exit (cudaFree would
// wait for the device too).
class Group {
 public:
  Group(int ranks, size_t buffer_bytes)
      : comms_(static_cast<size_t>(ranks)), exceptions_at_start_(std::uncaught_exceptions()) {
    for (int r = 0; r < ranks; ++r) devices_.push_back(r);
    PROBE_NCCL(ncclCommInitAll(comms_.data(), ranks, devices_.data()));
    for (int r = 0; r < ranks; ++r) {
      PROBE_CUDA(cudaSetDevice(r));
      cudaStream_t s = nullptr;
      PROBE_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
      streams_.push_back(s);
      send_.emplace_back(buffer_bytes);
      recv_.emplace_back(buffer_bytes);
      fill_bf16(send_.back().get(), buffer_bytes / 2, 31 + static_cast<uint32_t>(r), s);
      PROBE_CUDA(cudaMemsetAsync(recv_.back().get(), 0, buffer_bytes, s));
      wait_for_stream(s, "buffer fill", 30);
    }
  }
  ~Group() {
    // Destructor: failures cannot be reported.
    if (std::uncaught_exceptions() > exceptions_at_start_) {
      for (ncclComm_t c : comms_) {
        if (c != nullptr) ncclCommAbort(c);
      }
      for (DeviceBuffer& b : send_) b.leak();
      for (DeviceBuffer& b : recv_) b.leak();
      return;
    }
    for (ncclComm_t c : comms_) ncclCommDestroy(c);
    for (size_t r = 0; r < streams_.size(); ++r) {
      cudaSetDevice(devices_[r]);
      cudaStreamDestroy(streams_[r]);
    }
    for (size_t r = 0; r < send_.size(); ++r) {
      cudaSetDevice(devices_[r]);
      send_[r] = DeviceBuffer();
      recv_[r] = DeviceBuffer();
    }
  }
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;

  int ranks() const { return static_cast<int>(comms_.size()); }

  // Throws ProbeError when a communicator reports an asynchronous error (a failed peer, a
  // network error): waiting on its streams would then never end.
  void check_async_errors() const {
    for (ncclComm_t c : comms_) {
      ncclResult_t async = ncclSuccess;
      PROBE_NCCL(ncclCommGetAsyncError(c, &async));
      if (async != ncclSuccess && async != ncclInProgress) {
        throw ProbeError(std::string("NCCL asynchronous error: ") + ncclGetErrorString(async));
      }
    }
  }

  std::vector<ncclComm_t> comms_;
  std::vector<int> devices_;
  std::vector<cudaStream_t> streams_;
  std::vector<DeviceBuffer> send_, recv_;

 private:
  int exceptions_at_start_ = 0;
};

// Enqueues one `op` of `bytes` (nccl-tests' size) on every rank, as one NCCL group.
void enqueue(Group& g, Collective op, size_t bytes) {
  const int n = g.ranks();
  const size_t count = bytes / 2;  // bf16 elements
  PROBE_NCCL(ncclGroupStart());
  for (int r = 0; r < n; ++r) {
    const void* send = g.send_[static_cast<size_t>(r)].get();
    void* recv = g.recv_[static_cast<size_t>(r)].get();
    ncclComm_t comm = g.comms_[static_cast<size_t>(r)];
    cudaStream_t s = g.streams_[static_cast<size_t>(r)];
    switch (op) {
      case Collective::kAllReduce:
        PROBE_NCCL(ncclAllReduce(send, recv, count, ncclBfloat16, ncclSum, comm, s));
        break;
      case Collective::kAllGather:
        PROBE_NCCL(ncclAllGather(send, recv, count / n, ncclBfloat16, comm, s));
        break;
      case Collective::kReduceScatter:
        PROBE_NCCL(ncclReduceScatter(send, recv, count / n, ncclBfloat16, ncclSum, comm, s));
        break;
      case Collective::kAllToAll: {
        const size_t chunk = count / n;
        for (int peer = 0; peer < n; ++peer) {
          PROBE_NCCL(ncclSend(static_cast<const char*>(send) + peer * chunk * 2, chunk,
                              ncclBfloat16, peer, comm, s));
          PROBE_NCCL(ncclRecv(static_cast<char*>(recv) + peer * chunk * 2, chunk, ncclBfloat16,
                              peer, comm, s));
        }
        break;
      }
      case Collective::kSendRecv:
        PROBE_NCCL(ncclSend(send, count, ncclBfloat16, (r + 1) % n, comm, s));
        PROBE_NCCL(ncclRecv(recv, count, ncclBfloat16, (r + n - 1) % n, comm, s));
        break;
    }
  }
  PROBE_NCCL(ncclGroupEnd());
}

}  // namespace

void run_collective_bench(const ProbeOptions& options, ProbeRun& run) {
  const int devices = static_cast<int>(run.header.gpu_count);
  TimingPlan plan;
  plan.warmup = options.warmup;
  plan.reps = options.reps;
  const std::string algo = env_or_auto("NCCL_ALGO");
  const std::string proto = env_or_auto("NCCL_PROTO");
  const std::vector<uint64_t> sizes = byte_sizes(1024, options.max_bytes, options.quick);
  int done = 0;
  // One sweep of `op` over `sizes` on `group`, recorded with `algorithm`.
  auto sweep = [&](Group& group, Collective op, const std::string& algorithm) {
    const int ranks = group.ranks();
    for (uint64_t size : sizes) {
      // Whole bf16 elements, split evenly over the ranks where the op splits the buffer.
      const uint64_t unit = op == Collective::kAllReduce || op == Collective::kSendRecv
                                ? 2 : 2 * static_cast<uint64_t>(ranks);
      const uint64_t bytes = size / unit * unit;
      if (bytes == 0) continue;
      Record r;
      r.kind = Kind::kCollective;
      r.collective = {op, static_cast<uint32_t>(ranks), bytes, DType::kBf16, algorithm, proto, 1};
      r.timing = time_on_streams(group.devices_, group.streams_,
                                 [&]() { enqueue(group, op, bytes); }, plan);
      run.records.push_back(std::move(r));
      ++done;
    }
  };
  bool ring_pass = false;
  for (int ranks : rank_counts(devices)) {
    {
      Group group(ranks, sizes.back());
      plan.poll = [&group]() { group.check_async_errors(); };
      for (Collective op : {Collective::kAllReduce, Collective::kAllGather,
                            Collective::kReduceScatter, Collective::kAllToAll,
                            Collective::kSendRecv}) {
        if (op == Collective::kSendRecv && ranks < 2) continue;
        const bool p2p = op == Collective::kAllToAll || op == Collective::kSendRecv;
        sweep(group, op, p2p ? "p2p" : algo);
      }
      plan.poll = {};
    }
    // NCCL's own choice on NVSwitch machines (H100/H200 x8) is NVLS for large all-reduces: the
    // switch reduces in flight and the bus bandwidth reaches ~475-480 GB/s, over the 450 GB/s
    // NVLink line rate, which a profile's nvlink_busbw (a fraction of the line rate) cannot hold.
    // So the all-reduce is measured once more with NCCL_ALGO=Ring (read by NCCL at communicator
    // init), recorded as algorithm "ring"; `clustersim calibrate` fits NVLink from it.
    if (ranks >= 2 && std::getenv("NCCL_ALGO") == nullptr) {
      setenv("NCCL_ALGO", "Ring", 1);
      try {
        Group group(ranks, sizes.back());
        plan.poll = [&group]() { group.check_async_errors(); };
        sweep(group, Collective::kAllReduce, "ring");
        plan.poll = {};
      } catch (...) {
        unsetenv("NCCL_ALGO");
        throw;
      }
      unsetenv("NCCL_ALGO");
      ring_pass = true;
    }
    std::cerr << "  collectives: " << ranks << " ranks done (" << done << " measurements)\n";
  }
  add_note(run.header, "collectives: single process, ncclCommInitAll; NCCL_ALGO=" + algo +
                           ", NCCL_PROTO=" + proto +
                           (ring_pass ? "; all-reduce again with NCCL_ALGO=Ring (algorithm \"ring\")" : ""));
}

#else  // built without NCCL

void run_collective_bench(const ProbeOptions&, ProbeRun& run) {
  std::cerr << "  collectives: skipped, clustersim-probe was built without NCCL\n";
  add_note(run.header, "collectives: skipped, built without NCCL");
}

#endif

}  // namespace clustersim::kernels_probe
