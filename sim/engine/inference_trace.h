// SPDX-License-Identifier: Apache-2.0
// What a serving run keeps for trace.json: the first steps of each instance, the inside of a few
// decode steps (ping-pong spans or the summed parts) and the first KV transfers, within fixed bounds.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/core/units.h"

namespace clustersim::engine {

// Bounds that keep trace.json small (a few MB at most) whatever the length of the run.
struct ServingTraceLimits {
  int steps_per_instance = 200;  // first steps of each instance (attention_ffn: of the deployment)
  int detailed_decode_steps = 3; // decode-only steps among those drawn part by part: the largest batches
  int kv_transfers = 200;        // first prefill-to-decode KV transfers (whole requests)
};

// A stretch inside one step, relative to the step's start. Ping-pong steps (attention_ffn) give
// one span per layer, micro-batch and stage; other steps their summed parts in order
// (attention, FFN, communication; layer = -1).
enum class StepPart { kAttention, kFfn, kM2n, kN2m, kCommunication };
const char* to_string(StepPart p);

struct StepSpan {
  StepPart part = StepPart::kAttention;
  int micro_batch = 0;
  int layer = -1;
  Time start;
  Time end;
};

struct TracedStep {
  int instance = 0;
  Time start;
  Time end;
  int64_t decode_seqs = 0;
  int64_t prefill_seqs = 0;
  int64_t prefill_tokens = 0;
  std::vector<StepSpan> detail;  // empty unless the step is one of the detailed decode steps
};

struct TracedKvTransfer {
  int64_t request = 0;
  int from_instance = 0;
  int to_instance = 0;
  Time sent;
  Time arrived;  // when the last shard arrived
  Bytes bytes;
};

struct TracedInstance {
  int pool = 0;       // index into ServingResult::pools
  int first_gpu = 0;
  int gpus = 0;
};

struct ServingTrace {
  ServingTraceLimits limits;
  std::vector<TracedInstance> instances;  // attention_ffn: the attention deployment only
  std::vector<TracedStep> steps;          // in start order
  std::vector<TracedKvTransfer> kv;       // in send order
};

}  // namespace clustersim::engine
