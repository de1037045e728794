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

}  // namespace clustersim::work
