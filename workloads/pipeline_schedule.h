// SPDX-License-Identifier: Apache-2.0
// Pipeline schedules: the order of forward and backward passes on each pipeline rank under 1F1B
// and interleaved 1F1B (virtual stages), micro-batch by micro-batch.
#pragma once

#include <vector>

#include "sim/core/units.h"

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

// The most forward chunks rank `rank` holds at once (run, backward not yet run) in pipeline_order:
// plain 1F1B min(pp - rank, m); interleaved its warm-up and one more, 2 (pp - rank - 1) +
// (vpp - 1) pp + 1, or all m vpp when m = pp, never more than m vpp. What peak_held replays, in
// closed form, for a rank whose chunks all hold the same.
int chunks_in_flight(int pp, int vpp, int micro_batches, int rank);

// The most any pipeline rank holds at once of what a forward pass keeps until its backward (its
// activations): `held[c * pp + s]` is what one micro-batch's forward of chunk c on rank s keeps;
// each rank's passes run in pipeline_order, a forward adding its chunk's, a backward releasing
// it. Uniform chunks give Megatron-LM's first-stage count, min(pp, m) micro-batches of a stage's
// layers, times 1 + (pp - 1) / (pp vpp) interleaved (Korthikanti et al., MLSys'23, section 4.2.3):
// rank 0 warms up with 2 (pp - 1) + (vpp - 1) pp forwards and holds one more. Micro-batches past
// 4 pp repeat the steady state's pattern and are not replayed. `last_stage_extra` is added to the
// last rank's peak (its LM head's logits). Preconditions as pipeline_order's, held.size() == pp * vpp.
double peak_held(const std::vector<double>& held, int pp, int vpp, int micro_batches, double last_stage_extra = 0.0);
// The same, rank by rank: entry s is rank s's most held at once (the memory check adds each
// stage's own weights and optimizer state to it).
std::vector<double> peak_held_by_rank(const std::vector<double>& held, int pp, int vpp, int micro_batches,
                                      double last_stage_extra = 0.0);

// Forward and backward time of one virtual pipeline stage (chunk) for one micro-batch.
struct ChunkTime {
  Time forward;
  Time backward;
};

// Makespan of one pipeline replica's forward and backward passes: 1F1B when vpp = 1, Megatron-LM's
// interleaved 1F1B otherwise (Narayanan et al., SC'21, section 2.2). `chunks[c * pp + s]` is chunk c
// of physical stage s (virtual stage c * pp + s); each device runs its ops in the schedule's
// fixed order, an op starting when its device is free and its input has arrived. Uniform chunks
// give (m + (pp - 1) / vpp) x (per-stage f + b); with the last stage's chunks taking c' instead of
// c (per-stage f + b over vpp), (m vpp - 1) c' + (pp - 1) c + c' (it paces every chunk slot). Plain
// 1F1B with stage k slower by d = (f' + b') - (f + b) per micro-batch, d <= min(f, b), m >= pp:
// (m + pp - 1)(f + b) + (m - (pp - 1 - k)) d (the pp - 1 - k warm-up micro-batches hide their extra
// time in the wait for the first gradient). See the closed-form tests in
// tests/unit/faults/straggler_model_test.cc.
//
// Point-to-point sends (overlapped unless `blocking`: they hold neither device, and delay the input
// they carry), per virtual stage v, each vector empty where free or of size pp * vpp:
//   forward[v], backward[v]: from v's forward end to v + 1's input, from v's backward end to
//     v - 1's input;
//   forward_nic[v], backward_nic[v]: how long that send holds its device's NIC at the NIC's full
//     rate (its bytes; 0 on NVLink), at most the send's own time (the rest is latency). A
//     device's forward sends leave one after another in the order its passes end, its backward
//     sends likewise, and the sends in flight share the sender's NIC and the receiver's, each at
//     1 / (the most sends on either) of the rate: a stage whose sends take longer than its passes
//     runs at the sends' pace. Empty: sends run side by side, each in its own time.
//   blocking: each send holds its device until it is delivered, as without overlap.pp_p2p
//     (Megatron-LM's batched isend/irecv and wait): the device's next pass starts after it.
//   nic: per device (physical stage), the NIC its sends leave and arrive by; devices with the
//     same entry share one NIC (stages on one node behind one NIC), and "the sends on either"
//     above count every send in flight through that NIC, from or to any of its devices. Empty:
//     each device its own NIC.
struct PipelineSends {
  std::vector<Time> forward = {}, backward = {};
  std::vector<Time> forward_nic = {}, backward_nic = {};
  bool blocking = false;
  std::vector<int> nic = {};
};

// With sends (PipelineSends): in plain 1F1B with equal stages
// and one send time c they lengthen the steady state's slots, not only the fill and drain: 2
// stages, f 1 ms, b 2 ms, c 0.5 ms: slots alternate 3 and 4 ms, (m + 1)(f + b) + m c in all; k
// equal stages 2 (k - 1) / k sends a micro-batch, 1.5 for 4 (tests/unit/workloads/pipeline_schedule_test.cc).
// Preconditions: chunks.size() == pp * vpp, micro_batches >= 1 (a multiple of pp when vpp > 1),
// the send vectors as PipelineSends says.
Time pipeline_makespan(const std::vector<ChunkTime>& chunks, int pp, int vpp, int micro_batches, const PipelineSends& sends = {});

// When each device runs its backward passes (where ZeRO-2 and -3 reduce every micro-batch's
// gradients, each chunk's as its backward pass ends, and the last micro-batch's bucket by bucket
// as the pass runs): `passes[d]`, device d's
// backward passes in the order it runs them, each's start and end (waits for inputs between
// them), replayed without sends for the first `replayed` = min(m, 4 pp) micro-batches; past them
// each micro-batch runs one steady-state cycle, `pace` (the slowest device's passes per
// micro-batch), as in pipeline_send_delay. Plain 1F1B's backward passes come a cycle apart on
// every stage; interleaved, the drain runs the warm-up's extra chunks' backward passes one after
// another. Preconditions as pipeline_makespan's.
struct BackwardPasses {
  struct Pass {
    Time start, end;
    bool chunk_last = false;  // the chunk's last backward pass (the last micro-batch's)
  };
  std::vector<std::vector<Pass>> passes;
  int replayed = 0;
  Time pace;
};
BackwardPasses backward_passes(const std::vector<ChunkTime>& chunks, int pp, int vpp, int micro_batches);

// The sends as a single replay should take them to agree with pipeline_send_delay (the straggler
// model's): `sends`, or where the busiest NIC's sends per micro-batch (out or in) take less than
// a quarter of the slowest device's passes, the sends side by side (forward and backward alone,
// the NIC times dropped): two sends then seldom share a NIC, and the replay sharing NICs costs
// about 8 times as much. (pipeline_send_delay itself blends the two from 15% to 35%.)
PipelineSends sends_to_replay(const std::vector<ChunkTime>& chunks, int pp, int vpp, const PipelineSends& sends);

// What sends add to a pipeline's makespan (overlapped, or blocking): pipeline_makespan with the
// sends less without, replayed for at most 8 pp micro-batches; past them each micro-batch adds
// the steady state's growth, measured on the replay: how much faster micro-batches finish
// between a quarter and three quarters of the way through without the sends than with them (at
// least what the busiest NIC's time per micro-batch exceeds the slowest device's passes). Where
// the busiest NIC's sends per micro-batch take under 15% of the slowest device's passes the
// sends are replayed side by side, over 35% sharing NICs, and between the two are blended
// linearly (no jump at a threshold). Against the full replay of 256 micro-batches with the same
// sends, on 2 to 16 stages (2 to 8 interleaved, 2 or 3 chunks each) of uneven chunk times, sends
// of 1% to 300% of a stage's slot side by side or holding NICs, overlapped or blocking: mean
// about 0.1% (side by side) and 0.2% (holding NICs) of the makespan, worst 3% and 7% where
// overlapped sends as long as a slot share the NICs of 3-stage plain pipelines, whose steady
// state wanders (tests/unit/workloads/pipeline_schedule_test.cc). Before 2026-12-06 plain 1F1B
// took the growth from the schedule's largest cycle mean (exact for sends side by side, blind to
// shared NICs), interleaved plans replayed nothing and blocking sends were priced in closed form.
// Preconditions as pipeline_makespan's, forward and backward of size pp * vpp.
Time pipeline_send_delay(const std::vector<ChunkTime>& chunks, int pp, int vpp, int micro_batches, const PipelineSends& sends);
// pipeline_send_delay for several sets of sends over the same chunks (the replay without sends
// serves them all): one delay per entry of `variants`, in order.
std::vector<Time> pipeline_send_delays(const std::vector<ChunkTime>& chunks, int pp, int vpp, int micro_batches,
                                       const std::vector<PipelineSends>& variants);

}  // namespace clustersim::work
