// SPDX-License-Identifier: Apache-2.0
// The event-driven serving simulation: request arrivals, continuous batching under batch and KV
// cache limits, steps costed by sim/engine/inference_cost.h, KV transfers over the Network.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "sim/core/clock.h"
#include "sim/core/config.h"
#include "sim/engine/inference_cost.h"
#include "sim/engine/inference_trace.h"
#include "sim/engine/serving_requests.h"
#include "sim/network/network.h"
#include "sim/network/route_source.h"
#include "topology/fabric.h"

namespace clustersim::net {
class RouteSource;
}  // namespace clustersim::net

namespace clustersim::engine {

// Everything derived from the scenario that the simulation needs: model, pools with their
// hardware profiles and memory, links. Pools are placed on consecutive GPUs in the order
// colocated | prefill, decode | attention, expert.
struct ServingSetup {
  ServingModel model;
  InferenceConfig in;
  std::vector<PoolPlan> pools;
  std::vector<ServingLinks> links;  // per pool
  int gpus = 0;                     // GPUs in all pools
};
// Loads each pool's profile and sizes its memory; throws BadInput (unknown GPU, pool too small
// for the model, KV cache too small for a request).
ServingSetup make_serving_setup(const ScenarioConfig& cfg);

// Each pool's GPUs' NVLink on `fabric` at network.nvlink_bandwidth, else the pool's own profile's
// (pools.<role>.gpu may differ; pools of two kinds never share a node, validate_inference). GPUs
// outside every pool keep theirs (no serving traffic reaches them).
void set_pool_nvlink(const NetworkConfig& network, const std::vector<PoolPlan>& pools, topo::Fabric& fabric);

// The pools' TP and expert all-to-all slowdowns (setup.links[i].tp_slowdown, ep_slowdown) from
// their flows routed on the fabric, every group at once (static_contention: the most loaded link
// against the busiest NIC, so ECMP collisions and slower switch-to-switch links count). Both
// levels price these collectives in closed form; run_serving calls this.
void route_pool_links(ServingSetup& setup, const topo::Fabric& fabric, const net::RouteSource& routes);

// The analytical level's M2N factor: the static completion (static_completion: the most loaded
// link over every tier, NVLink included) of one layer's M2N and N2M sent at once
// (m2n_exchange_flows, as the flow level's probe sends them) on the routes, against the closed
// form's NIC share for every byte at line rate. 1 outside attention_ffn and on a non-blocking
// fabric with the pools on their own nodes; below 1 where pairs share a node (NVLink) or a node's
// NIC serves fewer busy GPUs than the closed form assumes; above 1 where flows collide. Both
// directions at once is what the ping-pong's overlapping M2N and N2M channels see; with one
// micro-batch they do not overlap and this over-charges the lighter.
double m2n_static_factor(const ServingSetup& setup, const topo::Fabric& fabric, const net::RouteSource& routes);

struct RequestOutcome {
  Time arrival;
  Time first_token;  // seen by the client: prefill_decode's once its KV cache is at the decode side
  Time finish;
  int prompt = 0;
  int output = 0;
  bool rejected = false;  // can never fit the KV cache of one replica
  bool completed = false;
  // When the step that takes its first prompt tokens began (admitted to a prefill: a batch slot,
  // KV room and the replica's prefill budget); `admitted` false until then.
  bool admitted = false;
  Time prefill_start;
  // prefill_decode, requests whose KV cache moved: from the prefill's end until the decode side
  // had room to reserve it and the transfer started, and from there until its last shard arrived
  bool kv_moved = false;
  Time kv_wait_for_room;
  Time kv_transfer;
};

struct PoolStats {
  PoolRole role = PoolRole::kColocated;
  std::string gpu;
  int gpus = 0;
  int instances = 0;
  double price_per_gpu_hour = 0;
  Time compute_busy;  // summed over instances
  Time stepping;      // time inside steps (compute, communication, pipeline waits), over instances
  int64_t steps = 0;
  int max_batch_seen = 0;   // most sequences in one step on one instance
  int max_batch = 0;        // the pool's limit on them (its max_batch, else inference.max_batch)
  Bytes weights_per_gpu;
  Bytes kv_budget_per_gpu;
  int64_t kv_tokens_per_instance = 0;
};

struct M2nProbe {
  Time measured;
  Time bound;
  double factor = 1.0;
};

struct ServingResult {
  std::vector<RequestOutcome> requests;  // by request id
  std::vector<PoolStats> pools;
  Time first_arrival;
  Time last_finish;
  StepTiming decode_step_sum;  // over decode-only steps of the decoding pool
  int64_t decode_steps = 0;
  int64_t decode_step_seqs = 0;  // sum of batch sizes over those steps
  int64_t mixed_steps = 0;       // steps that decoded and also ran prefill (not in decode_step_sum)
  int64_t drain_decode_steps = 0;  // of decode_steps, those that started after the last arrival
  int64_t kv_transfers = 0;  // one per request moved to a decode instance (its TP shards together)
  Bytes kv_transfer_bytes;
  // At the levels that share bandwidth: the sum, over the KV shards sent, of the shards already in
  // flight when each went out (kMaxKvFlowWork), and whether it passed the bound, after which no
  // more were sent and the run is refused.
  double kv_flow_work = 0;
  bool kv_flow_work_exceeded = false;
  int64_t kv_shards_in_flight = 0;  // when kv_flow_work passed the bound
  int micro_batches = 1;
  double m2n_factor = 1.0;  // fabric contention on M2N/N2M, see probe_m2n_exchange (attention_ffn)
  M2nProbe m2n_probe;       // the measurement behind m2n_factor (zero times outside attention_ffn)
  ServingTrace trace;       // bounded by ServingTraceLimits; for trace.json
};

// prefill_decode at a level that shares bandwidth: each KV shard's flow events reprice the flows in
// flight, so the wall time follows the sum, over the shards sent, of those in flight when each
// goes out (about 3e-8 s a unit on a 2-core machine in 2026-12: infer-pd on 10 Gbps NICs, 10,000
// requests, 6.0e8 units in 18 s). Where the NICs cannot carry the caches the transfers queue and
// that sum grows with the square of the requests (30,000 took 105 s, a million would take hours);
// past this bound, about 3 minutes, no more are sent and the run is refused (since 2026-12-06).
inline constexpr double kMaxKvFlowWork = 5e9;

// Runs the requests through the deployment of `setup` on `clock`. `network` carries the KV
// transfers of prefill_decode (may be null for the other modes). `m2n_factor` scales the
// closed-form M2N/N2M time (measured on the fabric by run_serving). `limits` bound what is kept
// for the trace. Call start(), run the clock to completion, then result().
class ServingSimulation {
 public:
  ServingSimulation(const ServingSetup& setup, std::vector<ServingRequest> requests, Clock& clock,
                    net::Network* network, double m2n_factor = 1.0, ServingTraceLimits limits = {});
  void start();
  ServingResult result() const;
  // The bound on ServingResult::kv_flow_work past which no more KV caches are sent (tests lower it).
  void set_kv_flow_work_limit(double limit) { kv_flow_work_limit_ = limit; }

 private:
  struct Instance {
    int pool = 0;
    int first_gpu = 0;
    int64_t kv_per_replica = 0;     // KV tokens one attention replica holds
    std::vector<int64_t> kv_used;   // per attention replica: tokens reserved by its requests
    std::deque<int> waiting;
    // decode (prefill_decode): prefilled requests (request, prefill instance) waiting, in order,
    // for room to reserve their KV cache here before it is sent; the prefill side holds it
    std::deque<std::pair<int, int>> kv_pending;
    std::vector<int> running;
    // chunked_prefill: admitted requests with part of their prompt still to process, in order
    std::deque<int> prefilling;
    std::vector<int> step_prefill;   // requests prefilling in this step
    std::vector<int64_t> step_chunk;  // and the prompt tokens each processes in it
    int incoming = 0;  // decode: requests whose KV is on its way or queued for room (kv_pending)
    int kv_in_flight = 0;  // decode: requests whose KV is on its way (room and a batch slot reserved)
    bool busy = false;
    bool start_due = false;  // a try_start is scheduled at the current time (start_soon)
  };
  void arrive(int r);
  void release_kv(Instance& in, int r, int64_t tokens);  // from the replica holding r's KV
  void try_start(int inst);
  // try_start once everything else due at this instant has happened: requests (or KV caches) that
  // arrive at the same time join one step instead of the first starting one alone.
  void start_soon(int inst);
  void end_step(int inst, StepTiming timing);
  void finish(int r, Instance& in);
  void send_kv(int r, int from, int to);      // reserves on `to` and sends, or queues there
  void start_kv_transfer(int r, int from, int to);
  void send_pending_kv(int to);              // after `to` freed KV: the queued ones that now fit
  // The step of `decode` and in.step_prefill (in.step_chunk's prompt tokens each).
  StepTiming cost(const Instance& in, const StepLoad& total, const std::vector<int>& decode,
                  std::vector<StepSpan>* spans) const;
  void trace_step(int inst, const StepLoad& load, const StepTiming& t, std::vector<StepSpan> detail);
  int pick(int pool, int64_t need = 0) const;
  // The replica with the fewest tokens that can reserve `need` more (-1: none); has_room: one can
  // now, with nothing queued ahead at that instance.
  static int reservable_replica(const Instance& in, int64_t need);
  bool has_room(int inst, int64_t need) const;
  // Whether a decode instance has a batch slot (max_batch) for one more request: those running,
  // landed and on their way hold one each.
  bool has_slot(const Instance& in) const;
  int64_t context(int r) const;

  const ServingSetup& setup_;
  std::vector<ServingRequest> requests_;
  Time last_arrival_;  // the latest request's arrival: steps after it are the drain
  Clock& clock_;
  net::Network* network_;
  double m2n_factor_;
  std::vector<Instance> instances_;
  std::vector<std::vector<int>> pool_instances_;  // pool -> instance indices
  std::vector<int> generated_;
  std::vector<int64_t> prefilled_;  // prompt tokens processed (and cached) so far
  std::vector<int> replica_;  // per request: the attention replica of the instance holding its KV
  std::vector<int> kv_to_;    // per request: the decode replica reserved for its KV (-1: none)
  std::vector<RequestOutcome> outcomes_;
  ServingResult stats_;
  ServingTrace trace_;
  // The analytical level's NICs (it prices a send as if alone): when each NIC's send and receive
  // sides are free of the KV transfers queued on them, by NIC index.
  std::map<int64_t, Time> nic_send_free_, nic_receive_free_;
  int64_t kv_shards_in_flight_ = 0;  // over a network that shares bandwidth
  double kv_flow_work_limit_ = kMaxKvFlowWork;
  std::vector<int> traced_steps_;  // per instance
  std::vector<size_t> detailed_;   // indices into trace_.steps of the steps with detail
};

// One layer's M2N and N2M of an attention_ffn deployment (setup.pools = attention, expert), sent
// once over a network: every attention GPU to every expert GPU and back, all at once, with the
// bytes of m2n_bytes / n2m_bytes for max_batch / micro_batches tokens spread evenly over the pairs
// (that token count times the smallest integer that gives the busiest GPU >= 8 MiB, so that the
// microseconds of path latency do not count: the factor scales exchange_time's bytes term).
//   measured  when the last transfer arrived
//   bound     the closed form of the same exchange: exchange_time over serving_links (each GPU's NIC
//             share) at line rate, i.e. without the achieved efficiency network_busbw, and with the
//             shortest path latency of a pair as alpha
//   factor    measured / bound: what the fabric adds to the closed form (> 1: flows collide, or cross
//             slower or oversubscribed uplinks)
// `shares_links` says whether the network shares link bandwidth among concurrent transfers (flow,
// packet). The analytical level does not: it prices each transfer as if alone, reporting about one
// pair's time where every GPU's NIC is in fact shared by all its pairs, so there the factor is
// max(measured, bound) / bound (1 unless a single path is slower than a GPU's NIC share);
// run_serving replaces it with m2n_static_factor at that level.
// `run_clock` runs `clock` until the network is idle. Call this before anything else uses `network`.
M2nProbe probe_m2n_exchange(const ServingSetup& setup, net::Network& network, bool shares_links,
                            const net::RouteSource& routes, Clock& clock, const std::function<void()>& run_clock);

// The decode steps a run takes, about, per decoding instance. Every output token after the first
// takes one step of an instance that decodes, and a step decodes at most max_batch sequences: at
// least tokens / (max_batch x decoders) steps. At low load a step decodes few: an instance steps
// while some request decodes, busy_s (the union over requests of [arrival, arrival + (output - 1)
// x step]), every `step`, the time of a step of `batch` sequences and its share of the prompts at
// the mean lengths (the slowest decoding pool's; Little's law solved by iteration from one
// sequence a step), and at most once per token. Within 1.6x of the steps run on the shipped
// serving scenarios and on a low-load attention_ffn plan at 2 to 20,000 requests/s. Before
// 2026-12-05 only the full-batch bound was counted, and 1e7 requests at 2 a second (1e9 steps of
// one sequence) passed for 7.8e6.
struct DecodeWork {
  double tokens = 0;            // output tokens after the first
  int decoders = 0;             // instances that decode
  int batch = 1;                // sequences a step decodes, about
  Time step;                    // a step of `batch` sequences (and its share of the prompts)
  double busy_s = 0;
  // The most sequences an instance decodes at once: max_batch, or fewer where its KV cache holds
  // fewer requests (each reserves prompt + output at admission on one attention replica: whole
  // requests a replica where every request has one length, the mean's ratio otherwise).
  double batch_cap = 1;
  int max_batch = 1;            // the decoding pool's max_batch
  std::string max_batch_key = "inference.max_batch";  // the key that sets it
  bool kv_bound = false;        // the KV cache, not max_batch, sets batch_cap
  double full_batch_steps = 0;  // tokens / (batch_cap x decoders)
  double sparse_steps = 0;      // min(tokens / decoders, busy_s / step)
  double steps = 0;             // the larger: per instance
};
DecodeWork decode_work(const ServingSetup& setup, const std::vector<ServingRequest>& requests);

// Each step of each decoding instance costs about 2 us of wall time (one event; 8 million steps
// took 15 s, 1e7 at one sequence 28 s, on a 2-core machine in 2026-12), so past kMaxDecodeSteps
// over all decoding instances a run takes minutes to
// hours: refused up front with the figures (throws BadInput naming inference.requests or
// inference.trace), as the reliability study's event bound does (10 million requests of 4,000
// tokens at max_batch 1 ran for hours before).
inline constexpr double kMaxDecodeSteps = 2e8;
void check_serving_work(const ScenarioConfig& cfg, const ServingSetup& setup, const std::vector<ServingRequest>& requests);

// Builds fabric, network and clock for the scenario, measures the M2N factor (attention_ffn,
// probe_m2n_exchange), runs every request to completion and returns the result. Uses the process's
// s4u::Engine. Throws BadInput where the KV transfers pass `kv_flow_work_limit` (kMaxKvFlowWork).
ServingResult run_serving(const ScenarioConfig& cfg, double kv_flow_work_limit = kMaxKvFlowWork);

}  // namespace clustersim::engine
