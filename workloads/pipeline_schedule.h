// SPDX-License-Identifier: Apache-2.0
// Pipeline schedules: the order of forward and backward passes on each pipeline rank under 1F1B
// and interleaved 1F1B (virtual stages), micro-batch by micro-batch.
#pragma once

#include <vector>

namespace clustersim::work {

// One pass of one micro-batch through one model chunk on one pipeline rank. The chunk's virtual
// stage is chunk x pp + rank; a micro-batch visits virtual stages 0 .. pp x vpp - 1 forward, then
// back.
struct PipelinePass {
  int microbatch = 0;
  int chunk = 0;
  bool forward = true;
  friend bool operator==(const PipelinePass&, const PipelinePass&) = default;
};

// The passes of pipeline rank `rank` (0 .. pp-1) in execution order, 2 x microbatches x vpp of
// them.
//   vpp = 1 (1F1B, Narayanan et al. SC'21 section 2.2.1): pp - rank - 1 warm-up forwards, then
//     alternate one forward and one backward, then the remaining backwards.
//   vpp > 1 (interleaved, ibid. section 2.2.2, as Megatron-LM schedules it): warm-up
//     min(total, 2 (pp - rank - 1) + (vpp - 1) pp) forwards (all of them when microbatches ==
//     pp); the k-th forward runs chunk (k mod pp vpp) / pp on micro-batch (k / (pp vpp)) pp +
//     k mod pp; the k-th backward runs chunk vpp - 1 - (k mod pp vpp) / pp on the same
//     micro-batch formula. Needs microbatches to be a multiple of pp.
std::vector<PipelinePass> pipeline_order(int pp, int vpp, int microbatches, int rank);

// Fill and drain of the pipeline in units of one micro-batch's forward + backward on a full stage
// when communication is free and stages are equal: (pp - 1) / vpp (SC'21 sections 2.2.1-2.2.2).
double bubble_microbatch_slots(int pp, int vpp);

}  // namespace clustersim::work
