// SPDX-License-Identifier: Apache-2.0
#include "workloads/pipeline_schedule.h"

#include <algorithm>
#include <cassert>

namespace clustersim::work {

std::vector<PipelinePass> pipeline_order(int pp, int vpp, int microbatches, int rank) {
  assert(pp >= 1 && vpp >= 1 && microbatches >= 1 && rank >= 0 && rank < pp && "bad pipeline shape");
  std::vector<PipelinePass> out;
  const int total = microbatches * vpp;
  out.reserve(static_cast<size_t>(2 * total));
  if (vpp == 1) {
    const int warmup = std::min(pp - rank - 1, microbatches);
    int f = 0, b = 0;
    for (; f < warmup; ++f) out.push_back({f, 0, true});
    while (f < microbatches) {
      out.push_back({f++, 0, true});
      out.push_back({b++, 0, false});
    }
    while (b < microbatches) out.push_back({b++, 0, false});
    return out;
  }
  assert(microbatches % pp == 0 && "interleaved 1F1B needs micro-batches to be a multiple of pp");
  const int group = pp * vpp;
  auto pass = [&](int k, bool forward) {
    const int in_group = k % group;
    const int chunk = forward ? in_group / pp : vpp - 1 - in_group / pp;
    return PipelinePass{(k / group) * pp + k % pp, chunk, forward};
  };
  int warmup = microbatches == pp ? total : std::min(total, 2 * (pp - rank - 1) + (vpp - 1) * pp);
  int f = 0, b = 0;
  for (; f < warmup; ++f) out.push_back(pass(f, true));
  while (f < total) {
    out.push_back(pass(f++, true));
    out.push_back(pass(b++, false));
  }
  while (b < total) out.push_back(pass(b++, false));
  return out;
}

double bubble_microbatch_slots(int pp, int vpp) { return static_cast<double>(pp - 1) / vpp; }

Time pipeline_makespan(const std::vector<ChunkTime>& chunks, int pp, int vpp, int m, const std::vector<Time>& forward_send,
                       const std::vector<Time>& backward_send) {
  assert(chunks.size() == static_cast<size_t>(pp) * vpp && "one chunk time per virtual stage");
  assert(m >= 1 && (vpp == 1 || m % pp == 0) && "interleaving needs micro-batches in multiples of pp");
  assert((forward_send.empty() || forward_send.size() == chunks.size()) &&
         (backward_send.empty() || backward_send.size() == chunks.size()) && "one send time per virtual stage");
  const int virtual_stages = pp * vpp;
  // End times of every (virtual stage, micro-batch) forward and backward; -1 ps = not yet run.
  const Time kNotRun = Time::ps(-1);
  std::vector<Time> fwd_end(static_cast<size_t>(virtual_stages) * m, kNotRun);
  std::vector<Time> bwd_end(static_cast<size_t>(virtual_stages) * m, kNotRun);
  std::vector<std::vector<work::PipelinePass>> schedule(pp);
  for (int s = 0; s < pp; ++s) schedule[s] = work::pipeline_order(pp, vpp, m, s);
  std::vector<size_t> next(pp, 0);
  std::vector<Time> free_at(pp);
  size_t remaining = 2 * static_cast<size_t>(virtual_stages) * m;
  while (remaining > 0) {
    bool progressed = false;
    for (int s = 0; s < pp; ++s) {
      // Run this device's ops in order for as long as their inputs are ready.
      while (next[s] < schedule[s].size()) {
        const work::PipelinePass& op = schedule[s][next[s]];
        const int v = op.chunk * pp + s;
        const size_t idx = static_cast<size_t>(v) * m + op.microbatch;
        Time ready;
        Time in_flight;  // the send carrying the input, after its producer ends
        if (op.forward) {
          if (v > 0) ready = fwd_end[idx - m];
          if (v > 0 && !forward_send.empty()) in_flight = forward_send[static_cast<size_t>(v - 1)];
        } else {
          ready = v + 1 < virtual_stages ? bwd_end[idx + m] : fwd_end[idx];
          if (v + 1 < virtual_stages && !backward_send.empty()) in_flight = backward_send[static_cast<size_t>(v + 1)];
        }
        if (ready == kNotRun) break;
        ready += in_flight;
        const ChunkTime& t = chunks[v];
        const Time end = max(free_at[s], ready) + (op.forward ? t.forward : t.backward);
        (op.forward ? fwd_end : bwd_end)[idx] = end;
        free_at[s] = end;
        ++next[s];
        --remaining;
        progressed = true;
      }
    }
    assert(progressed && "the pipeline schedule deadlocked");
    if (!progressed) break;
  }
  Time makespan;
  for (Time t : free_at) makespan = max(makespan, t);
  return makespan;
}

Time plain_pipeline_send_delay(const std::vector<ChunkTime>& stages, int m, const std::vector<Time>& forward_send,
                               const std::vector<Time>& backward_send) {
  const int pp = static_cast<int>(stages.size());
  assert(pp >= 1 && m >= 1 && forward_send.size() == stages.size() && backward_send.size() == stages.size() &&
         "one slot and one send each way per stage");
  const int replayed = std::min(m, 4 * pp);
  const Time delay = pipeline_makespan(stages, pp, 1, replayed, forward_send, backward_send) -
                     pipeline_makespan(stages, pp, 1, replayed);
  if (m == replayed) return delay;
  Time slowest;
  double lambda_s = 0;
  for (int a = 0; a < pp; ++a) {
    slowest = max(slowest, stages[a].forward + stages[a].backward);
    Time range;
    for (int b = a; b < pp; ++b) {
      range += stages[b].forward + stages[b].backward;
      if (b > a) range += forward_send[b - 1] + backward_send[b];
      lambda_s = std::max(lambda_s, range.as_s() / (b - a + 1));
    }
  }
  return delay + Time::s(static_cast<double>(m - replayed) * std::max(0.0, lambda_s - slowest.as_s()));
}

}  // namespace clustersim::work
