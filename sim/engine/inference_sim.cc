// SPDX-License-Identifier: Apache-2.0
// Deployment setup, the continuous-batching event loop and its driver (requests: serving_requests.h).
#include "sim/engine/inference_sim.h"

#include <simgrid/s4u/Engine.hpp>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <map>
#include <memory>

#include "sim/core/error.h"
#include "sim/core/scenario.h"
#include "sim/engine/fabric_contention.h"
#include "sim/engine/simgrid_clock.h"
#include "sim/network/fabric_routes.h"
#include "sim/network/make_network.h"
#include "topology/clos_shape.h"
#include "topology/fabric.h"
#include "topology/fabric_router.h"

namespace clustersim::engine {

ServingSetup make_serving_setup(const ScenarioConfig& cfg) {
  if (!cfg.inference) throw BadInput(InputError{cfg.file, 0, "inference", "the scenario has no inference section"});
  ServingSetup s;
  s.in = *cfg.inference;
  s.model = serving_model(cfg);
  const InferenceConfig& in = s.in;
  std::vector<std::pair<PoolRole, const PoolConfig*>> roles;
  switch (in.mode) {
    case ServingMode::kColocated: roles = {{PoolRole::kColocated, &*in.colocated}}; break;
    case ServingMode::kPrefillDecode: roles = {{PoolRole::kPrefill, &*in.prefill}, {PoolRole::kDecode, &*in.decode}}; break;
    case ServingMode::kAttentionFfn: roles = {{PoolRole::kAttention, &*in.attention}, {PoolRole::kExpert, &*in.expert}}; break;
  }
  int next_gpu = 0;
  for (const auto& [role, pc] : roles) {
    const std::string key = std::string("inference.pools.") + to_string(role);
    PoolPlan p;
    p.role = role;
    const std::string gpu = pc->gpu.empty() ? cfg.cluster.gpu : pc->gpu;
    try {
      p.hw = calib::load_hardware_profile(gpu, cfg.cluster.source_dir);
    } catch (const BadInput& e) {
      std::vector<InputError> errors = e.errors();
      for (InputError& err : errors) {
        if (err.file.empty()) err = scenario_error(cfg, pc->gpu.empty() ? "cluster.gpu" : key + ".gpu", err.message);
      }
      throw BadInput(errors);
    }
    if (p.hw.fp8.per_s <= 0 && s.model.precision == Precision::kFp8) {
      throw BadInput(scenario_error(cfg, "inference.weight_precision",
                                    "fp8: the " + p.hw.name + " profile of pool " + to_string(role) +
                                        " has no peak.fp8 rate (this GPU has no fp8 tensor cores); use bf16 or "
                                        "give the pool a GPU with fp8"));
    }
    p.first_gpu = next_gpu;
    p.gpus = pc->gpus;
    p.tp = pc->tp;
    p.price_per_gpu_hour = pc->price_per_gpu_hour;
    p.max_batch = pc->max_batch > 0 ? pc->max_batch : cfg.inference->max_batch;
    if (pc->max_batch > 0) p.max_batch_key = key + ".max_batch";
    // Pools follow one another on consecutive GPUs; each tensor-parallel group must stay inside a
    // node, or its all-reduces would cross the NICs the step costs do not charge them on.
    const int gpn = cfg.cluster.gpus_per_node;
    for (int g = p.first_gpu; g + p.tp <= p.first_gpu + p.gpus; g += p.tp) {
      if (g % gpn + p.tp <= gpn) continue;
      throw BadInput(scenario_error(
          cfg, key + ".tp",
          "its tensor-parallel group on GPUs " + std::to_string(g) + "-" + std::to_string(g + p.tp - 1) +
              " would span nodes " + std::to_string(g / gpn) + " and " + std::to_string((g + p.tp - 1) / gpn) + " (" +
              std::to_string(gpn) + " GPUs each): the pool starts at GPU " + std::to_string(p.first_gpu) +
              (p.first_gpu > 0 ? ", after the pools before it" : "") +
              "; give the pools before it whole nodes, or a tp (and ep) that keeps every group inside a node"));
    }
    if (role == PoolRole::kAttention) {
      p.ep = p.tp;
      p.instances = 1;
      p.attention_replicas = p.gpus / p.tp;
    } else if (role == PoolRole::kExpert) {
      p.ep = p.gpus;
      p.instances = 1;
      p.attention_replicas = 0;
    } else {
      p.ep = pc->ep > 0 ? pc->ep : pc->tp;
      p.expert_tp = pc->expert_tp > 0 ? pc->expert_tp : default_expert_tp(s.model, p.ep);
      p.instances = p.gpus / p.ep;
      p.attention_replicas = p.ep / p.tp;
    }
    try {
      size_pool_memory(s.model, in, key, p);
    } catch (const BadInput& e) {
      std::vector<InputError> errors = e.errors();
      for (InputError& err : errors) err = scenario_error(cfg, err.key_path, err.message);
      throw BadInput(errors);
    }
    next_gpu += p.gpus;
    s.links.push_back(serving_links(cfg, p));
    s.pools.push_back(std::move(p));
  }
  s.gpus = next_gpu;
  return s;
}

ServingSimulation::ServingSimulation(const ServingSetup& setup, std::vector<ServingRequest> requests, Clock& clock,
                                     net::Network* network, double m2n_factor, ServingTraceLimits limits)
    : setup_(setup), requests_(std::move(requests)), clock_(clock), network_(network), m2n_factor_(m2n_factor) {
  trace_.limits = limits;
  pool_instances_.resize(setup_.pools.size());
  for (size_t p = 0; p < setup_.pools.size(); ++p) {
    const PoolPlan& plan = setup_.pools[p];
    if (plan.role == PoolRole::kExpert) continue;
    for (int i = 0; i < plan.instances; ++i) {
      Instance in;
      in.pool = static_cast<int>(p);
      in.first_gpu = plan.first_gpu + i * plan.ep;
      in.kv_per_replica = plan.kv_tokens_per_replica;
      in.kv_used.assign(static_cast<size_t>(std::max(1, plan.attention_replicas)), 0);
      pool_instances_[p].push_back(static_cast<int>(instances_.size()));
      trace_.instances.push_back({in.pool, in.first_gpu, plan.role == PoolRole::kAttention ? plan.gpus : plan.ep});
      instances_.push_back(std::move(in));
    }
  }
  traced_steps_.assign(instances_.size(), 0);
  generated_.assign(requests_.size(), 0);
  prefilled_.assign(requests_.size(), 0);
  replica_.assign(requests_.size(), 0);
  kv_to_.assign(requests_.size(), -1);
  outcomes_.resize(requests_.size());
  for (size_t r = 0; r < requests_.size(); ++r) {
    last_arrival_ = max(last_arrival_, requests_[r].arrival);
    outcomes_[r].arrival = requests_[r].arrival;
    outcomes_[r].prompt = requests_[r].prompt;
    outcomes_[r].output = requests_[r].output;
  }
  stats_.micro_batches = setup_.in.mode == ServingMode::kAttentionFfn ? setup_.in.micro_batches : 1;
  for (const PoolPlan& p : setup_.pools) {
    PoolStats s;
    s.role = p.role;
    s.gpu = p.hw.name;
    s.gpus = p.gpus;
    s.instances = p.instances;
    s.price_per_gpu_hour = p.price_per_gpu_hour;
    s.max_batch = p.max_batch;
    s.weights_per_gpu = p.weights_per_gpu;
    s.kv_budget_per_gpu = p.kv_budget_per_gpu;
    s.kv_tokens_per_instance = p.kv_tokens_per_replica * p.attention_replicas;
    stats_.pools.push_back(s);
  }
}

void ServingSimulation::start() {
  for (size_t r = 0; r < requests_.size(); ++r) {
    clock_.at(requests_[r].arrival, [this, r] { arrive(static_cast<int>(r)); });
  }
}

int64_t ServingSimulation::context(int r) const { return requests_[r].prompt + generated_[r]; }

int ServingSimulation::reservable_replica(const Instance& in, int64_t need) {
  int home = -1;
  for (size_t i = 0; i < in.kv_used.size(); ++i) {
    if (in.kv_used[i] + need > in.kv_per_replica) continue;
    if (home < 0 || in.kv_used[i] < in.kv_used[static_cast<size_t>(home)]) home = static_cast<int>(i);
  }
  return home;
}

bool ServingSimulation::has_room(int inst, int64_t need) const {
  const Instance& in = instances_[inst];
  return in.kv_pending.empty() && has_slot(in) && reservable_replica(in, need) >= 0;
}

bool ServingSimulation::has_slot(const Instance& in) const {
  return static_cast<int64_t>(in.running.size() + in.waiting.size()) + in.kv_in_flight <
         setup_.pools[static_cast<size_t>(in.pool)].max_batch;
}

int ServingSimulation::pick(int pool, int64_t need) const {
  // Least outstanding work: sequences running, in the step's prefill, waiting and on their way;
  // ties to an idle instance, then to the lowest index. With `need` (a prefilled request's KV
  // cache), among the instances with room for it first, so that it does not queue behind a full
  // one while another has room.
  if (need > 0) {
    bool any = false;
    for (int i : pool_instances_[pool]) any = any || has_room(i, need);
    if (!any) need = 0;
  }
  int best = -1;
  std::pair<int64_t, bool> best_load;
  for (int i : pool_instances_[pool]) {
    if (need > 0 && !has_room(i, need)) continue;
    const Instance& in = instances_[i];
    // (Chunked prefill: `prefilling` holds the step's prompts and those between chunks.)
    const size_t prefilling = std::max(in.step_prefill.size(), in.prefilling.size());
    const std::pair<int64_t, bool> load = {
        static_cast<int64_t>(in.running.size() + prefilling + in.waiting.size()) + in.incoming, in.busy};
    if (best < 0 || load < best_load) {
      best = i;
      best_load = load;
    }
  }
  return best;
}

void ServingSimulation::arrive(int r) {
  const ServingRequest& q = requests_[r];
  // A request lives on one attention replica; reject it when it can never fit there.
  for (const PoolPlan& p : setup_.pools) {
    if (p.role == PoolRole::kExpert) continue;
    const int64_t need = p.role == PoolRole::kPrefill ? q.prompt : int64_t{q.prompt} + q.output;
    if (need > p.kv_tokens_per_replica) {
      outcomes_[r].rejected = true;
      return;
    }
  }
  const int inst = pick(0);
  instances_[inst].waiting.push_back(r);
  start_soon(inst);
}

void ServingSimulation::start_soon(int idx) {
  Instance& in = instances_[idx];
  if (in.busy || in.start_due) return;
  in.start_due = true;
  // Events at one time run in the order they were scheduled: this one after every arrival
  // already due now (before 2026-12-05 16 requests arriving at 0 ran as 1 + 8 + 7: the first
  // alone, and a longer prompt, packing differently, came out 9% sooner at the median).
  clock_.at(clock_.now(), [this, idx] {
    instances_[idx].start_due = false;
    try_start(idx);
  });
}

StepTiming ServingSimulation::cost(const Instance& in, const StepLoad& total, const std::vector<int>& decode,
                                   std::vector<StepSpan>* spans) const {
  const std::vector<int>& prefill = in.step_prefill;
  const PoolPlan& plan = setup_.pools[in.pool];
  // Each micro-batch's load in all and on each attention replica (requests where admission put
  // them, replica_); the busiest replica sets each layer's pace.
  const int seqs = static_cast<int>(decode.size() + prefill.size());
  const int m = plan.role == PoolRole::kAttention ? std::max(1, std::min(setup_.in.micro_batches, seqs)) : 1;
  const size_t replicas = in.kv_used.size();
  std::vector<StepLoad> micro(static_cast<size_t>(m));
  std::vector<StepLoad> per(static_cast<size_t>(m) * replicas);
  // Each replica splits its own sequences over the m micro-batches, in turn. Until 2026-12-06 the
  // step's list was dealt in turn, and admission spreads requests over the replicas in turn too,
  // so with m sharing a factor with the replica count a micro-batch held whole replicas' loads
  // (m = 4 on 8 replicas: micro-batch 0 all of replicas 0 and 4's sequences) and each paid the
  // busiest replica's full attention: infer-afd.yaml's output rate went 11.3k, 17.4k, 19.9k,
  // 13.6k tokens/s for m = 1 to 4, and m = 8 fell below m = 1 (2026-12-06 review).
  // Replica k starts at micro-batch k mod m, so replicas with fewer sequences than m fill the
  // micro-batches evenly between them (all starting at 0, 8 replicas of one sequence each put all
  // 8 in the first of 8 micro-batches).
  std::vector<int> dealt(replicas, 0);
  const auto micro_of = [&](int r) {
    const size_t rep = static_cast<size_t>(replica_[static_cast<size_t>(r)]);
    return std::pair{(static_cast<size_t>(dealt[rep]++) + rep) % static_cast<size_t>(m), rep};
  };
  for (int r : decode) {
    const auto [i, rep] = micro_of(r);
    micro[i].add_decode(context(r));
    per[i * replicas + rep].add_decode(context(r));
  }
  for (size_t j = 0; j < prefill.size(); ++j) {
    const int r = prefill[j];
    const auto [i, rep] = micro_of(r);
    const int64_t done = prefilled_[static_cast<size_t>(r)];
    micro[i].add_prefill_chunk(done, in.step_chunk[j]);
    per[i * replicas + rep].add_prefill_chunk(done, in.step_chunk[j]);
  }
  std::vector<StepLoad> busiest;
  for (size_t i = 0; i < micro.size(); ++i) {
    busiest.push_back(busiest_replica(setup_.model, plan, std::span<const StepLoad>(per).subspan(i * replicas, replicas)));
  }
  if (plan.role != PoolRole::kAttention) return colocated_step(setup_.model, plan, setup_.links[in.pool], total, busiest[0]);
  AfdPlan afd{&setup_.pools[0], &setup_.pools[1], m, m2n_factor_};
  return afd_step(setup_.model, afd, setup_.links[0], setup_.links[1], micro, spans, busiest);
}

void ServingSimulation::trace_step(int idx, const StepLoad& load, const StepTiming& t, std::vector<StepSpan> detail) {
  ++traced_steps_[idx];
  const Time now = clock_.now();
  TracedStep step{idx, now, now + t.total, load.decode_seqs, load.prefill_seqs, load.prefill_tokens, {}};
  const int keep = trace_.limits.detailed_decode_steps;
  if (load.prefill_seqs == 0 && keep > 0) {
    if (detail.empty()) {
      // Whole layers on the same GPUs: the step's summed parts one after the other.
      Time at = Time::zero();
      for (const auto& [part, d] : {std::pair{StepPart::kAttention, t.attention}, std::pair{StepPart::kFfn, t.ffn},
                                    std::pair{StepPart::kCommunication, t.communication}}) {
        if (d > Time::zero()) detail.push_back({part, 0, -1, at, at + d});
        at += d;
      }
    }
    step.detail = std::move(detail);
    detailed_.push_back(trace_.steps.size());
  }
  trace_.steps.push_back(std::move(step));
  if (static_cast<int>(detailed_.size()) > keep) {
    // Keep the largest decode batches (the earliest on ties): steady state rather than ramp-up.
    size_t drop = 0;
    for (size_t k = 1; k < detailed_.size(); ++k) {
      if (trace_.steps[detailed_[k]].decode_seqs <= trace_.steps[detailed_[drop]].decode_seqs) drop = k;
    }
    std::vector<StepSpan>().swap(trace_.steps[detailed_[drop]].detail);
    detailed_.erase(detailed_.begin() + static_cast<std::ptrdiff_t>(drop));
  }
}

void ServingSimulation::try_start(int idx) {
  Instance& in = instances_[idx];
  if (in.busy) return;
  const PoolPlan& plan = setup_.pools[in.pool];
  const InferenceConfig& cfg = setup_.in;
  const bool decodes = plan.role != PoolRole::kPrefill;
  const bool prefills = plan.role != PoolRole::kDecode;
  in.step_prefill.clear();
  in.step_chunk.clear();
  // The prefill budget is each attention replica's, as each data-parallel attention rank of an
  // engine schedules its own (vLLM, SGLang, TensorRT-LLM's attention DP); one replica per
  // instance without data-parallel attention. Chunked prefill: a replica's step tokens, its
  // decode tokens first, fill max_prefill_tokens, and its prompts under way continue, in order,
  // before new ones start. Whole prompts: a replica admits prompts while they fit its budget,
  // and a longer one only alone.
  const bool chunked = cfg.chunked_prefill && prefills;
  const size_t replicas = in.kv_used.size();
  std::vector<int64_t> budget(replicas, cfg.max_prefill_tokens);
  std::vector<char> prefilling_here(replicas, 0);  // whole prompts: some prompt admitted this step
  const auto at = [&](int r) { return static_cast<size_t>(replica_[static_cast<size_t>(r)]); };
  if (chunked && decodes) {
    for (int r : in.running) --budget[at(r)];
  }
  if (chunked) {
    for (int r : in.prefilling) {
      int64_t& left = budget[at(r)];
      if (left <= 0) continue;
      const int64_t chunk = std::min<int64_t>(left, requests_[r].prompt - prefilled_[static_cast<size_t>(r)]);
      in.step_prefill.push_back(r);
      in.step_chunk.push_back(chunk);
      left -= chunk;
    }
  }
  const auto takes_prompt = [&](size_t i, int64_t prompt) {
    if (!prefills) return true;
    return chunked ? budget[i] > 0 : (!prefilling_here[i] || prompt <= budget[i]);
  };
  // Admission in arrival order (no overtaking), while the batch, a replica's prefill budget and
  // its KV cache allow. The KV cache of the whole request is reserved on admission (no preemption).
  while (!in.waiting.empty()) {
    const int r = in.waiting.front();
    const ServingRequest& q = requests_[r];
    const int64_t batch = static_cast<int64_t>(in.running.size() + (chunked ? in.prefilling.size() : in.step_prefill.size()));
    if (batch >= plan.max_batch) break;
    const int64_t need = plan.role == PoolRole::kPrefill ? q.prompt : int64_t{q.prompt} + q.output;
    // A request's KV lives on one replica: the one that reserved it before its KV cache was sent
    // (prefill_decode's decode side), else the emptiest (the lowest on ties) with room for it and
    // for its prompt in this step.
    const int sent_to = kv_to_[static_cast<size_t>(r)];
    const bool reserved = sent_to >= 0;
    int home = sent_to;
    if (!reserved) {
      for (size_t i = 0; i < replicas; ++i) {
        if (in.kv_used[i] + need > in.kv_per_replica || !takes_prompt(i, q.prompt)) continue;
        if (home < 0 || in.kv_used[i] < in.kv_used[static_cast<size_t>(home)]) home = static_cast<int>(i);
      }
      if (home < 0) break;
    }
    const size_t h = static_cast<size_t>(home);
    if (chunked) {
      const int64_t chunk = std::min<int64_t>(budget[h], q.prompt);
      budget[h] -= chunk;
      in.prefilling.push_back(r);
      in.step_prefill.push_back(r);
      in.step_chunk.push_back(chunk);
    } else if (prefills) {
      budget[h] -= q.prompt;
      prefilling_here[h] = 1;
      in.step_prefill.push_back(r);
      in.step_chunk.push_back(q.prompt);
    } else {
      in.running.push_back(r);  // its KV arrived: joins this decode step
    }
    if (!reserved) in.kv_used[h] += need;
    replica_[static_cast<size_t>(r)] = home;
    RequestOutcome& outcome = outcomes_[static_cast<size_t>(r)];
    if (prefills && !outcome.admitted) {
      outcome.admitted = true;
      outcome.prefill_start = clock_.now();
    }
    in.waiting.pop_front();
  }
  StepLoad load;
  if (decodes) {
    for (int r : in.running) load.add_decode(context(r));
  }
  for (size_t j = 0; j < in.step_prefill.size(); ++j) {
    load.add_prefill_chunk(prefilled_[static_cast<size_t>(in.step_prefill[j])], in.step_chunk[j]);
  }
  if (load.seqs() == 0) return;
  const bool traced = traced_steps_[idx] < trace_.limits.steps_per_instance;
  std::vector<StepSpan> spans;
  const bool detail = traced && load.prefill_seqs == 0 && trace_.limits.detailed_decode_steps > 0;
  const StepTiming t = cost(in, load, decodes ? in.running : std::vector<int>{}, detail ? &spans : nullptr);
  if (traced) trace_step(idx, load, t, std::move(spans));
  in.busy = true;
  PoolStats& ps = stats_.pools[in.pool];
  ++ps.steps;
  ps.max_batch_seen = std::max<int>(ps.max_batch_seen, static_cast<int>(load.seqs()));
  ps.stepping += t.total;
  if (plan.role == PoolRole::kAttention) {
    ps.compute_busy += t.attention_busy;
    stats_.pools[1].compute_busy += t.ffn_busy;
    stats_.pools[1].stepping += t.total;
    ++stats_.pools[1].steps;
    // The batch the expert pool serves (it holds no sequences of its own; the report says so).
    stats_.pools[1].max_batch_seen = std::max<int>(stats_.pools[1].max_batch_seen, static_cast<int>(load.seqs()));
  } else {
    ps.compute_busy += t.attention_busy + t.ffn_busy;
  }
  if (load.prefill_seqs > 0 && load.decode_seqs > 0) ++stats_.mixed_steps;
  if (load.prefill_seqs == 0) {
    stats_.decode_step_sum.total += t.total;
    stats_.decode_step_sum.attention += t.attention;
    stats_.decode_step_sum.ffn += t.ffn;
    stats_.decode_step_sum.communication += t.communication;
    stats_.decode_step_sum.idle += t.idle;
    stats_.decode_step_sum.attention_busy += t.attention_busy;
    stats_.decode_step_sum.ffn_busy += t.ffn_busy;
    ++stats_.decode_steps;
    if (clock_.now() > last_arrival_) ++stats_.drain_decode_steps;
    stats_.decode_step_seqs += load.decode_seqs;
  }
  clock_.at(clock_.now() + t.total, [this, idx, t] { end_step(idx, t); });
}

void ServingSimulation::release_kv(Instance& in, int r, int64_t tokens) {
  in.kv_used[static_cast<size_t>(replica_[static_cast<size_t>(r)])] -= tokens;
}

void ServingSimulation::finish(int r, Instance& in) {
  outcomes_[r].finish = clock_.now();
  outcomes_[r].completed = true;
  release_kv(in, r, int64_t{requests_[r].prompt} + requests_[r].output);
}

void ServingSimulation::end_step(int idx, StepTiming) {
  Instance& in = instances_[idx];
  in.busy = false;
  const Time now = clock_.now();
  const PoolPlan& plan = setup_.pools[in.pool];
  // Decoding sequences each produced one token.
  if (plan.role != PoolRole::kPrefill) {
    std::vector<int> still;
    still.reserve(in.running.size());
    for (int r : in.running) {
      if (++generated_[r] >= requests_[r].output) {
        finish(r, in);
      } else {
        still.push_back(r);
      }
    }
    in.running.swap(still);
    if (!in.kv_pending.empty()) send_pending_kv(idx);
  }
  // Prefilled sequences produced their first token; a chunk that leaves part of its prompt stays
  // in `prefilling` for the next step.
  for (size_t j = 0; j < in.step_prefill.size(); ++j) {
    const int r = in.step_prefill[j];
    prefilled_[static_cast<size_t>(r)] += in.step_chunk[j];
    if (prefilled_[static_cast<size_t>(r)] < requests_[r].prompt) continue;
    if (!in.prefilling.empty()) std::erase(in.prefilling, r);
    outcomes_[r].first_token = now;
    generated_[r] = 1;
    if (plan.role == PoolRole::kPrefill) {
      if (requests_[r].output <= 1) {
        outcomes_[r].finish = now;
        outcomes_[r].completed = true;
        release_kv(in, r, requests_[r].prompt);
      } else {
        const int to = pick(in.pool + 1, int64_t{requests_[r].prompt} + requests_[r].output);
        ++instances_[to].incoming;
        send_kv(r, idx, to);
      }
    } else if (requests_[r].output <= 1) {
      finish(r, in);
    } else {
      in.running.push_back(r);
    }
  }
  in.step_prefill.clear();
  in.step_chunk.clear();
  try_start(idx);
}

void ServingSimulation::send_kv(int r, int from, int to) {
  // The decode side reserves the request's whole KV cache (prompt and output) and a batch slot
  // before the transfer starts, on the replica with the fewest tokens that has room; with none,
  // the request queues there (in order) and the prefill side keeps holding its KV cache, so a
  // full decode pool holds back prefill. A decode engine pulls a cache when it schedules the
  // request, so the wait for a slot is TTFT's, as the wait for KV room is. (Before 2026-12-04 a
  // sent KV cache was held by neither side until decode admitted it: 100 requests' caches, 3.8x
  // what the deployment holds, were in flight at once. Until 2026-12-06 the batch slot was not
  // reserved: with max_batch 4 a request's cache landed, its first token was stamped, and it
  // waited 13 s for a slot inside TPOT, 70.6 ms against a 6.2 ms step, where the same limit set
  // by KV memory read 6.2 ms.)
  Instance& dest = instances_[to];
  if (!dest.kv_pending.empty()) {
    dest.kv_pending.emplace_back(r, from);
    return;
  }
  const int64_t need = int64_t{requests_[r].prompt} + requests_[r].output;
  const int home = has_slot(dest) ? reservable_replica(dest, need) : -1;
  if (home < 0) {
    dest.kv_pending.emplace_back(r, from);
    return;
  }
  dest.kv_used[static_cast<size_t>(home)] += need;
  ++dest.kv_in_flight;
  kv_to_[static_cast<size_t>(r)] = home;
  start_kv_transfer(r, from, to);
}

void ServingSimulation::send_pending_kv(int to) {
  Instance& dest = instances_[to];
  std::deque<std::pair<int, int>> queued;
  queued.swap(dest.kv_pending);
  while (!queued.empty()) {
    const auto [r, from] = queued.front();
    queued.pop_front();
    send_kv(r, from, to);
    if (!dest.kv_pending.empty()) break;  // it did not fit: the rest stay behind it
  }
  for (const auto& q : queued) dest.kv_pending.push_back(q);
}

void ServingSimulation::start_kv_transfer(int r, int from, int to) {
  // Past the bound no more are sent: the run ends soon after, and run_serving refuses it.
  if (stats_.kv_flow_work_exceeded) return;
  const PoolPlan& src = setup_.pools[instances_[from].pool];
  const PoolPlan& dst = setup_.pools[instances_[to].pool];
  // The KV cache is sharded over the senders' and the receivers' TP ranks: max(tp) shards, GPU
  // pairs cycling over both. Each receiving rank gets the KV heads it holds: where the decode
  // pool's tp exceeds kv_heads, tp / kv_heads ranks hold each head (as vLLM and SGLang replicate
  // them) and each gets its own copy, so the bytes moved are the per-rank cache times its tp.
  // (Until 2026-12-06 the cache was sent once whatever the receivers' replication.)
  const int shards = std::max(src.tp, dst.tp);
  const Bytes total = bytes_of(static_cast<double>(requests_[r].prompt) * dst.tp *
                               kv_bytes_per_token(setup_.model, dst.tp).as_double());
  const int src_base = instances_[from].first_gpu + src.tp * replica_[static_cast<size_t>(r)];
  const int dst_base = instances_[to].first_gpu + dst.tp * kv_to_[static_cast<size_t>(r)];
  auto left = std::make_shared<int>(shards);
  int traced = -1;
  if (static_cast<int>(trace_.kv.size()) < trace_.limits.kv_transfers) {
    traced = static_cast<int>(trace_.kv.size());
    trace_.kv.push_back({r, from, to, clock_.now(), clock_.now(), total});
  }
  RequestOutcome& outcome = outcomes_[static_cast<size_t>(r)];
  outcome.kv_moved = true;
  outcome.kv_wait_for_room = clock_.now() - outcome.first_token;
  const Time sent = clock_.now();
  auto arrived = [this, r, from, to, left, traced, sent](Time) {
    if (--*left > 0) return;
    // The client sees the first token from the decode side, once the cache has landed there (as
    // vLLM's, SGLang's and Dynamo's disaggregated deployments stream it): TTFT counts the wait
    // for room and the transfer, TPOT the tokens after it. Until 2026-12-06 the first token was
    // stamped at the prefill's end (DistServe's definition): a 25 Gbps network moved the mean
    // transfer from 3.5 to 56.6 ms and TTFT not at all.
    RequestOutcome& landed = outcomes_[static_cast<size_t>(r)];
    landed.kv_transfer = clock_.now() - sent;
    landed.first_token = clock_.now();
    if (traced >= 0) trace_.kv[static_cast<size_t>(traced)].arrived = clock_.now();
    release_kv(instances_[from], r, requests_[r].prompt);
    --instances_[to].incoming;
    --instances_[to].kv_in_flight;
    instances_[to].waiting.push_back(r);
    start_soon(to);
    try_start(from);
  };
  ++stats_.kv_transfers;
  stats_.kv_transfer_bytes += total;
  // A closed-form network prices each shard on an idle fabric, so transfers that share a NIC
  // would not share it: there each shard that leaves its node also queues, in order, on its
  // source NIC's send side and its destination NIC's receive side at line rate, and is done when
  // the path and both queues are (other traffic stays unseen; the fabric links beyond the NIC
  // each shard takes alone). Before 2026-12-04 only one transfer's own shards queued, and
  // concurrent transfers each had the whole NIC: two prefill nodes' 10G NICs carried 3.7x their
  // line rate.
  const bool shared = network_ == nullptr || network_->shares_bandwidth();
  const ServingLinks& sl = setup_.links[instances_[from].pool];
  const auto nic = [&sl](int gpu) { return topo::nic_of_gpu(gpu, sl.gpus_per_node, sl.nics_per_node); };
  // Shard s runs from GPU src_of(s) to dst_of(s); across nodes (else NVLink) it uses their NICs.
  const auto src_of = [&](int s) { return src_base + s % src.tp; };
  const auto dst_of = [&](int s) { return dst_base + s % dst.tp; };
  const auto across = [&](int s) { return src_of(s) / sl.gpus_per_node != dst_of(s) / sl.gpus_per_node; };
  for (int s = 0; s < shards; ++s) {
    const Bytes part{total.n / shards + (s < total.n % shards ? 1 : 0)};
    if (!network_) {
      clock_.at(clock_.now(), [arrived, this] { arrived(clock_.now()); });
      continue;
    }
    const int a = src_of(s), b = dst_of(s);
    if (shared) {
      // Each flow event reprices the flows in flight: the work grows with the shards sent times
      // those in flight, which grow without bound where the NICs cannot carry the KV caches.
      stats_.kv_flow_work += static_cast<double>(kv_shards_in_flight_);
      if (stats_.kv_flow_work > kv_flow_work_limit_ && !stats_.kv_flow_work_exceeded) {
        stats_.kv_flow_work_exceeded = true;
        stats_.kv_shards_in_flight = kv_shards_in_flight_;
      }
      ++kv_shards_in_flight_;
      network_->send(a, b, part, [this, arrived](Time t) {
        --kv_shards_in_flight_;
        arrived(t);
      });
      continue;
    }
    if (!across(s) || sl.nic_line_rate.bytes_per_s <= 0) {
      network_->send(a, b, part, arrived);
      continue;
    }
    // Each side its own queue (neither waits for the other's, as max-min sharing would not).
    const Time serialize = Time::s(static_cast<double>(part.n) / sl.nic_line_rate.bytes_per_s);
    Time& send_free = nic_send_free_[nic(a)];
    Time& receive_free = nic_receive_free_[nic(b)];
    send_free = max(clock_.now(), send_free) + serialize;
    receive_free = max(clock_.now(), receive_free) + serialize;
    const Time done = max(send_free, receive_free);
    auto pending = std::make_shared<int>(2);
    auto both = [pending, arrived](Time t) {
      if (--*pending == 0) arrived(t);
    };
    network_->send(a, b, part, both);
    clock_.at(done, [both, this] { both(clock_.now()); });
  }
}

ServingResult ServingSimulation::result() const {
  ServingResult r = stats_;
  r.requests = outcomes_;
  r.trace = trace_;
  bool any = false;
  for (const RequestOutcome& o : outcomes_) {
    if (!any || o.arrival < r.first_arrival) r.first_arrival = o.arrival;
    any = true;
    if (o.completed) r.last_finish = max(r.last_finish, o.finish);
    // A request turned away ends at its arrival: the run lasts at least that long (a rejected
    // last arrival left the run shorter than its arrival window until 2026-12-06).
    if (o.rejected) r.last_finish = max(r.last_finish, o.arrival);
  }
  return r;
}

// Bytes the busiest GPU of the probe moves at least: 8 MiB take 168 us at 50 GB/s, against path
// latencies differing by a few microseconds.
constexpr double kM2nProbeMinBytesPerGpu = 8.0 * 1024 * 1024;

namespace {

// The closed form of an M2N/N2M exchange (`flows`, from m2n_exchange_flows) at the links' line
// rate, with `alpha` per exchange: the serving links carry the achieved efficiency of NCCL-style
// traffic, which a fabric model running at line rate does not reproduce.
Time m2n_line_rate_bound(const ServingSetup& s, std::span<const coll::FlowSpec> flows, Time alpha) {
  const PoolPlan& a = s.pools[0];
  const PoolPlan& e = s.pools[1];
  auto line_rate = [&](const PoolPlan& p, const ServingLinks& l) {
    ServingLinks raw = l;
    raw.nic_per_gpu = Bandwidth{l.nic_per_gpu.bytes_per_s / p.hw.eff.network_busbw};
    raw.net_alpha = alpha;
    return raw;
  };
  const ServingLinks al = line_rate(a, s.links[0]), el = line_rate(e, s.links[1]);
  const int64_t pairs = int64_t{a.gpus} * e.gpus;
  return max(exchange_time(Bytes{flows[0].bytes.n * pairs}, a.gpus, e.gpus, al, el),
             exchange_time(Bytes{flows[1].bytes.n * pairs}, e.gpus, a.gpus, el, al));
}

}  // namespace

M2nProbe probe_m2n_exchange(const ServingSetup& s, net::Network& network, bool shares_links,
                            const net::RouteSource& routes, Clock& clock, const std::function<void()>& run_clock) {
  assert(s.pools.size() == 2 && s.pools[0].role == PoolRole::kAttention && s.pools[1].role == PoolRole::kExpert &&
         "the probe needs an attention pool and an expert pool");
  const PoolPlan& a = s.pools[0];
  const PoolPlan& e = s.pools[1];
  int64_t tokens = std::max<int64_t>(1, s.in.max_batch / std::max(1, s.in.micro_batches));
  // The factor scales the bytes term of exchange_time, so the probe is made large enough that
  // path latencies (microseconds, different for each pair) are negligible beside it.
  const auto busiest_gpu = [&](int64_t t) {
    const int groups = e.gpus / e.tp;
    return std::max(m2n_bytes(s.model, t, groups, e.tp).as_double() / std::min(a.gpus, e.gpus),
                    n2m_bytes(s.model, t, groups).as_double() / std::min(a.gpus, e.gpus));
  };
  tokens *= std::max<int64_t>(1, static_cast<int64_t>(std::ceil(kM2nProbeMinBytesPerGpu / busiest_gpu(tokens))));
  // Uniform routing: each of the a x e pairs carries the same share (an expert's etp ranks all get
  // the M2N tokens routed to it, and each returns its 1/etp slice).
  const std::vector<coll::FlowSpec> flows = m2n_exchange_flows(a, e, s.model, tokens, s.links[0].gpus_per_node);
  Time last = Time::zero();
  // No GPU's NIC carries a byte before its first sub-flow has crossed the shortest path.
  Time latency = Time::max();
  std::vector<net::Path> paths;
  auto shortest_path = [&](int src, int dst) {
    routes.paths(src, dst, paths);
    for (const net::Path& p : paths) latency = min(latency, p.latency);
  };
  const Time start = clock.now();
  for (const coll::FlowSpec& f : flows) {
    network.send(f.src, f.dst, f.bytes, [&last](Time t) { last = max(last, t); });
    shortest_path(f.src, f.dst);
  }
  run_clock();
  M2nProbe probe;
  probe.measured = last - start;
  probe.bound = m2n_line_rate_bound(s, flows, latency);
  if (probe.bound > Time::zero()) {
    // A level that prices each transfer alone cannot show a GPU's NIC shared by its e (or a) pairs,
    // which the bound already charges; only a single path slower than that share can add to it.
    const Time seen = shares_links ? probe.measured : max(probe.measured, probe.bound);
    probe.factor = seen / probe.bound;
  }
  return probe;
}

void set_pool_nvlink(const NetworkConfig& network, const std::vector<PoolPlan>& pools, topo::Fabric& fabric) {
  for (const PoolPlan& p : pools) {
    const Bandwidth bw = network.nvlink_bandwidth.value_or(p.hw.nvlink_bandwidth);
    for (int g = p.first_gpu; g < p.first_gpu + p.gpus; ++g) fabric.set_nvlink_bandwidth(g, bw);
  }
}

void route_pool_links(ServingSetup& setup, const topo::Fabric& fabric, const net::RouteSource& routes) {
  const Bytes unit{1 << 20};
  for (size_t i = 0; i < setup.pools.size(); ++i) {
    ServingLinks& l = setup.links[i];
    const int gpn = l.gpus_per_node;
    l.tp_slowdown = static_contention(fabric, routes, pool_tp_flows(setup.pools[i], unit, gpn)).contention;
    l.ep_slowdown = static_contention(fabric, routes, pool_ep_flows(setup.pools[i], unit, l)).contention;
  }
}

double m2n_static_factor(const ServingSetup& setup, const topo::Fabric& fabric, const net::RouteSource& routes) {
  if (setup.pools.size() < 2) return 1.0;
  const int gpn = setup.links[0].gpus_per_node;
  const PoolPlan& a = setup.pools[0];
  const PoolPlan& e = setup.pools[1];
  // Any size: the factor is a ratio (64 tokens a GPU pair keeps every flow whole bytes).
  const std::vector<coll::FlowSpec> flows = m2n_exchange_flows(a, e, setup.model, int64_t{64} * a.gpus * e.gpus, gpn);
  // The exchange's static completion on the routes (NVLink for pairs on one node, the NICs a
  // node's busy GPUs share, collisions) against the closed form's NIC share for every byte.
  const Time bound = m2n_line_rate_bound(setup, flows, Time::zero());
  return bound > Time::zero() ? static_completion(fabric, routes, flows) / bound : 1.0;
}

namespace {

// A step of `batch` decoding sequences at `context` tokens each (and `prompts` prompts of `prompt`
// tokens) on decoding pool `i`, as ServingSimulation::cost prices it with the sequences spread
// evenly (and an M2N factor of 1: the fabric probe runs later).
Time step_time(const ServingSetup& setup, size_t i, int batch, int64_t context, int prompts, int64_t prompt) {
  const PoolPlan& plan = setup.pools[i];
  if (plan.role != PoolRole::kAttention) {
    StepLoad load;
    for (int k = 0; k < batch; ++k) load.add_decode(context);
    for (int k = 0; k < prompts; ++k) load.add_prefill(prompt);
    return colocated_step(setup.model, plan, setup.links[i], load).total;
  }
  const int m = std::max(1, std::min(setup.in.micro_batches, batch + prompts));
  std::vector<StepLoad> micro(static_cast<size_t>(m));
  for (int k = 0; k < batch; ++k) micro[static_cast<size_t>(k % m)].add_decode(context);
  for (int k = 0; k < prompts; ++k) micro[static_cast<size_t>((batch + k) % m)].add_prefill(prompt);
  const AfdPlan afd{&setup.pools[0], &setup.pools[1], m, 1.0};
  return afd_step(setup.model, afd, setup.links[0], setup.links[1], micro).total;
}

// Seconds in which some request decodes if each decodes from its arrival at `step` a token: the
// union over requests of [arrival, arrival + (output - 1) x step]. `requests` as (arrival in s,
// output - 1), sorted.
double decoding_span_s(const std::vector<std::pair<double, int>>& requests, double step) {
  double covered = 0, from = 0, to = -1;
  for (const auto& [a, tokens] : requests) {
    if (a > to) {
      covered += std::max(0.0, to - from);
      from = a;
    }
    to = std::max(to, a + tokens * step);
  }
  return covered + std::max(0.0, to - from);
}

}  // namespace

DecodeWork decode_work(const ServingSetup& setup, const std::vector<ServingRequest>& requests) {
  DecodeWork w;
  double context = 0, prompt = 0;
  std::vector<std::pair<double, int>> decoding;
  double least_need = std::numeric_limits<double>::infinity(), most_need = 0;
  for (const ServingRequest& r : requests) {
    w.tokens += std::max(0, r.output - 1);
    context += r.prompt + 0.5 * r.output;
    prompt += r.prompt;
    least_need = std::min(least_need, static_cast<double>(r.prompt) + r.output);
    most_need = std::max(most_need, static_cast<double>(r.prompt) + r.output);
    if (r.output > 1) decoding.emplace_back(r.arrival.as_s(), r.output - 1);
  }
  std::sort(decoding.begin(), decoding.end());
  const double n = static_cast<double>(std::max<size_t>(1, requests.size()));
  const int64_t mean_context = std::llround(context / n), mean_prompt = std::llround(prompt / n);
  std::vector<size_t> pools;
  // A decoding instance holds at most what its KV cache reserves for whole requests (since
  // 2026-12-06; max_batch alone was counted, and a 600 MB cache that held one 8,100-token request
  // let 30,000 of them through, 2.4e8 steps, minutes of wall time, that max_batch 1 refused).
  const double need = prompt / n + 2.0 * (context - prompt) / n;  // mean prompt + mean output
  w.max_batch = setup.in.max_batch;
  w.batch_cap = setup.in.max_batch;
  for (size_t i = 0; i < setup.pools.size(); ++i) {
    const PoolPlan& p = setup.pools[i];
    if (p.role == PoolRole::kPrefill || p.role == PoolRole::kExpert) continue;
    w.decoders += p.instances;
    pools.push_back(i);
    // The decoding pool's own batch limit (one such pool in every mode), and the key that sets it.
    w.max_batch = p.max_batch;
    w.max_batch_key = p.max_batch_key;
    w.batch_cap = p.max_batch;
    // A request's KV lives on one attention replica: whole requests a replica holds, times replicas,
    // where every request has the same length; with mixed lengths the mean's ratio unrounded, as
    // short requests share a replica (the bound stays a lower bound on the steps).
    const double per_replica = static_cast<double>(p.kv_tokens_per_replica) / std::max(1.0, need);
    const double holds = (least_need == most_need ? std::floor(per_replica) : per_replica) * std::max(1, p.attention_replicas);
    if (p.kv_tokens_per_replica > 0 && holds < w.batch_cap) {
      w.batch_cap = std::max(1.0, holds);
      w.kv_bound = true;
    }
  }
  const double decoders = std::max(1, w.decoders);
  w.full_batch_steps = w.tokens / (w.batch_cap * decoders);
  // Little's law, solved by iteration from one sequence a step: a step of b sequences (and, where
  // the pool prefills, its share of the prompts) takes step(b); requests then decode for
  // busy(step(b)) seconds, in busy / step(b) steps, which hold tokens / steps sequences each. From
  // b = 1 the batch grows (and the steps fall) to where the two agree; at low load it stays 1 (a
  // step a token), at high load the steps are the span over the step time at its batch.
  double batch = 1, prompts = 0;  // per step of an instance
  for (int k = 0; k < 16 && !pools.empty(); ++k) {
    const int b = static_cast<int>(std::llround(std::clamp(batch, 1.0, w.batch_cap)));
    w.batch = b;
    w.step = Time::zero();
    for (const size_t i : pools) {
      Time t = step_time(setup, i, b, mean_context, 0, 0);
      if (setup.pools[i].role != PoolRole::kDecode && prompts > 0) {
        t += prompts * (step_time(setup, i, b, mean_context, 1, mean_prompt) - t);
      }
      w.step = max(w.step, t);
    }
    if (w.step <= Time::zero()) break;
    w.busy_s = decoding_span_s(decoding, w.step.as_s());
    w.sparse_steps = std::min(w.tokens / decoders, w.busy_s / w.step.as_s());
    if (w.sparse_steps <= 0) break;
    const double next = w.tokens / (decoders * w.sparse_steps);
    prompts = n / (decoders * w.sparse_steps);
    if (std::abs(next - batch) <= 0.01 * batch) break;
    batch = next;
  }
  w.steps = std::max(w.full_batch_steps, w.sparse_steps);
  return w;
}

namespace {

// A step's wall time in units of a colocated one (about 2 us at most; 0.7 us measured): an
// attention_ffn step runs its micro-batches through both pools with their M2N exchanges (measured
// 2026-12-05 on infer-afd, 48,616 steps: 22 us a step with 3 micro-batches, 52 with 16, 79 with 64).
double step_wall_weight(const InferenceConfig& in) {
  return in.mode == ServingMode::kAttentionFfn ? 10.0 * (1.0 + in.micro_batches / 16.0) : 1.0;
}

// The batch limit in the messages: "max_batch 640", or "a batch of at most 1.13, what the KV cache
// holds of whole requests (max_batch 640)".
std::string batch_words(const DecodeWork& w, int max_batch) {
  char buf[160];
  if (w.kv_bound) {
    std::snprintf(buf, sizeof buf, "a batch of at most %.3g, what the KV cache holds of whole requests (max_batch %d)",
                  w.batch_cap, max_batch);
  } else {
    std::snprintf(buf, sizeof buf, "max_batch %d", max_batch);
  }
  return buf;
}

// What gives the KV cache more room, in the refusal's "raise ..." (kv_cache_fraction only where it
// is below its maximum, 1).
std::string kv_room_words(const InferenceConfig& in) {
  if (in.kv_cache_per_gpu) return "inference.kv_cache_per_gpu (up to what the weights leave), or use more GPUs an instance";
  if (in.kv_cache_fraction < 1.0) return "inference.kv_cache_fraction";
  return "the KV cache's room (more GPUs an instance, tp, or GPUs with more memory)";
}

// What the message adds where steps weigh more than colocated ones.
std::string weight_note(double weight) {
  if (weight <= 1.0) return "";
  char buf[160];
  std::snprintf(buf, sizeof buf,
                " (an attention_ffn step, with its micro-batches and M2N exchanges, takes as long to simulate as "
                "about %.3g colocated ones, and counts so)",
                weight);
  return buf;
}

}  // namespace

void check_serving_work(const ScenarioConfig& cfg, const ServingSetup& setup, const std::vector<ServingRequest>& requests) {
  const DecodeWork w = decode_work(setup, requests);
  // Every instance's step is its own event: the wall time follows the steps of all of them.
  const double weight = step_wall_weight(setup.in);
  const double all_steps = w.steps * std::max(1, w.decoders) * weight;
  // The prompts take steps too: an attention replica prefills at most max_prefill_tokens a step,
  // so the instances take at least prompt tokens / (max_prefill_tokens x replicas an instance)
  // steps between them (before 2026-12-05 only decode steps were counted, and a budget of one
  // token a step ran for most of an hour on a million requests).
  // Without chunked prefill a prompt longer than the budget runs whole, alone in its step: each
  // prompt is min(1, prompt / max_prefill_tokens) of a step (until 2026-12-05 its tokens over the
  // budget were counted, and 300,000 prompts of 1,000 tokens at a budget of 1 were refused as
  // 3e8 steps where they take about 3e5).
  double prompt_tokens = 0, prompt_steps = 0;
  const double budget = setup.in.max_prefill_tokens;
  for (const ServingRequest& r : requests) {
    prompt_tokens += r.prompt;
    prompt_steps += setup.in.chunked_prefill ? r.prompt / budget : std::min(1.0, r.prompt / budget);
  }
  int replicas = 1;
  for (const PoolPlan& p : setup.pools) {
    if (p.role != PoolRole::kDecode && p.role != PoolRole::kExpert) replicas = std::max(replicas, p.attention_replicas);
  }
  const double prefill_steps = prompt_steps / replicas * weight;
  const bool trace = !setup.in.trace.empty();
  char buf[640];
  if (prefill_steps > kMaxDecodeSteps && prefill_steps >= all_steps) {
    std::snprintf(buf, sizeof buf,
                  "the prompts need at least %.3g prefill steps in all (%.3g prompt tokens over max_prefill_tokens %d%s, "
                  "over %d attention replica%s an instance); at most %.0e steps in all are simulated (each takes about "
                  "2 us of wall time): %s, or raise max_prefill_tokens",
                  prefill_steps / weight, prompt_tokens, setup.in.max_prefill_tokens,
                  setup.in.chunked_prefill ? "" : ", a prompt longer than it one step", replicas, replicas > 1 ? "s" : "",
                  kMaxDecodeSteps, trace ? "shorten the trace" : "lower inference.requests or the prompt lengths");
    throw BadInput(scenario_error(cfg, trace ? "inference.trace" : "inference.requests", buf + weight_note(weight)));
  }
  if (all_steps <= kMaxDecodeSteps) return;
  if (w.full_batch_steps >= w.sparse_steps) {
    std::snprintf(buf, sizeof buf,
                  "the requests need at least %.3g decode steps an instance (%.3g output tokens after the first over "
                  "%s x %d decoding instances), %.3g in all; at most %.0e in all are simulated (each takes "
                  "about 2 us of wall time): %s, or raise %s",
                  w.steps, w.tokens, batch_words(w, w.max_batch).c_str(), std::max(1, w.decoders),
                  all_steps / weight, kMaxDecodeSteps,
                  trace ? "shorten the trace" : "lower inference.requests or the output lengths",
                  w.kv_bound ? kv_room_words(setup.in).c_str() : w.max_batch_key.c_str());
  } else {
    double first = requests.empty() ? 0 : requests.front().arrival.as_s(), last = first;
    for (const ServingRequest& r : requests) {
      first = std::min(first, r.arrival.as_s());
      last = std::max(last, r.arrival.as_s());
    }
    std::snprintf(buf, sizeof buf,
                  "the requests need about %.3g decode steps an instance: at this load a step decodes about %d "
                  "sequence%s (%s) in about %.3g ms, while some request decodes, %.3g s of the %.3g s of "
                  "arrivals (%.3g output tokens after the first, %d decoding instance%s: %.3g steps in all); at most "
                  "%.0e in all are simulated (each takes about 2 us of wall time): %s",
                  w.steps, w.batch, w.batch > 1 ? "s" : "", batch_words(w, w.max_batch).c_str(),
                  1e3 * w.step.as_s(), w.busy_s, last - first, w.tokens,
                  std::max(1, w.decoders), w.decoders > 1 ? "s" : "", all_steps / weight, kMaxDecodeSteps,
                  trace ? "shorten the trace" : "lower inference.requests or the output lengths, or raise rate_per_s");
  }
  throw BadInput(scenario_error(cfg, trace ? "inference.trace" : "inference.requests", buf + weight_note(weight)));
}

ServingResult run_serving(const ScenarioConfig& cfg, double kv_flow_work_limit) {
  ServingSetup setup = make_serving_setup(cfg);
  std::vector<ServingRequest> requests = [&] {
    try {
      return make_requests(setup.in, cfg.cluster.source_dir, cfg.model.seq_len);
    } catch (const BadInput& e) {
      throw in_scenario(cfg, e);
    }
  }();
  check_serving_work(cfg, setup, requests);
  // NVLink at each pool's GPU profile (the first pool's for GPUs outside every pool); before
  // 2026-12-05 at build_fabric's default, H100's 450 GB/s, whatever the GPUs.
  topo::Fabric fabric = topo::build_fabric(cfg.cluster, cfg.network, cfg.file, setup.pools.front().hw.nvlink_bandwidth);
  set_pool_nvlink(cfg.network, setup.pools, fabric);
  const net::FabricRoutes routes(fabric, topo::routing_options(cfg.network));
  simgrid::s4u::Engine* engine = simgrid_engine();
  SimGridClock clock;
  std::unique_ptr<net::Network> network = net::make_network(cfg.network, routes, clock);
  route_pool_links(setup, fabric, routes);
  M2nProbe probe;
  if (setup.in.mode == ServingMode::kAttentionFfn) {
    const bool shares_links = cfg.network.fidelity != Fidelity::kAnalytical;
    probe = probe_m2n_exchange(setup, *network, shares_links, routes, clock, [engine] {
               ensure_simgrid_platform();
               engine->run();
             });
    // The closed-form network prices each flow alone, so what it "measures" is no measurement
    // (it came out below the line-rate bound): the analytical level uses the exchange's static
    // bound on the routes instead, as it does for the pools' own collectives.
    if (!shares_links) {
      probe.factor = m2n_static_factor(setup, fabric, routes);
      probe.measured = probe.factor * probe.bound;
    }
  }
  const double factor = probe.factor;
  // Arrivals are relative to the start of serving (after the measurement).
  const Time offset = clock.now();
  for (ServingRequest& r : requests) r.arrival += offset;
  ServingSimulation sim(setup, std::move(requests), clock, network.get(), factor);
  sim.set_kv_flow_work_limit(kv_flow_work_limit);
  sim.start();
  ensure_simgrid_platform();
  engine->run();
  ServingResult result = sim.result();
  if (result.kv_flow_work_exceeded) {
    const bool trace = !setup.in.trace.empty();
    char buf[640];
    std::snprintf(buf, sizeof buf,
                  "the KV transfers outrun the network: at the %s level every flow event reprices the flows in "
                  "flight, and after %lld of the %zu requests' transfers (%lld shards in flight then) the sum over "
                  "the shards sent of those in flight passed %.0e, about 3 minutes of wall time, where the rest would "
                  "take longer still (it grows with the requests times the transfers queued): lower %s, raise "
                  "cluster.nic_bandwidth, or screen at network.fidelity: analytical, which queues each NIC's "
                  "transfers in closed form",
                  to_string(cfg.network.fidelity), static_cast<long long>(result.kv_transfers), result.requests.size(),
                  static_cast<long long>(result.kv_shards_in_flight), kv_flow_work_limit,
                  trace ? "the trace's requests" : "inference.requests");
    throw BadInput(scenario_error(cfg, trace ? "inference.trace" : "inference.requests", buf));
  }
  for (RequestOutcome& o : result.requests) {
    o.arrival -= offset;
    if (o.completed) {
      o.first_token -= offset;
      o.finish -= offset;
    }
  }
  for (TracedStep& s : result.trace.steps) {
    s.start -= offset;
    s.end -= offset;
  }
  for (TracedKvTransfer& k : result.trace.kv) {
    k.sent -= offset;
    k.arrived -= offset;
  }
  result.first_arrival -= offset;
  result.last_finish = result.last_finish > offset ? result.last_finish - offset : Time::zero();
  result.micro_batches = setup.in.mode == ServingMode::kAttentionFfn ? setup.in.micro_batches : 1;
  result.m2n_factor = factor;
  result.m2n_probe = probe;
  return result;
}

}  // namespace clustersim::engine
