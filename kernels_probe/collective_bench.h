// SPDX-License-Identifier: Apache-2.0
// NCCL collective measurements on every GPU count the visible devices can form, from one process.
#pragma once

#include "kernels_probe/probe_options.h"
#include "kernels_probe/probe_record.h"

namespace clustersim::kernels_probe {

// For each rank count in 1, 2, 4, 8, ... and the full device count, builds communicators with
// ncclCommInitAll over the first devices and measures all-reduce, all-gather, reduce-scatter,
// all-to-all (grouped ncclSend/ncclRecv to every peer) and send/recv (each rank to the next, for
// two or more ranks) from 1 KiB to options.max_bytes. One rank still yields launch overheads.
// Built without NCCL, it only notes that collectives were skipped.
void run_collective_bench(const ProbeOptions& options, ProbeRun& run);

}  // namespace clustersim::kernels_probe
