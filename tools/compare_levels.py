#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Draws random training plans around a base scenario and compares the analytical level with the
flow level, plan by plan: the analytical level's error against the level that simulates every
flow. A search for where the closed forms and the detailed simulation part ways (docs/results.md,
"Analytical and flow levels"). With --folding it compares instead the flow level's folded runs
(training.fold_ranks: true) with unfolded ones (every rank group simulated), on
smaller plans around scenarios/megatron-sc21/gpt-7p5b-128.yaml that also place DP first and share
one NIC per node (scenarios/README.md, fold_ranks). With --moe it draws mixture-of-experts plans
around scenarios/mixtral-8x7b-h100-256.yaml instead (analytical against flow, as the default mode).
With --sends it draws pipelines whose overlapped sends are long beside their compute (small models
of hidden 2048 on H100s, one GPU or one NIC per node, 25 to 400 Gbps, 4 to 32 micro-batches per
stage) around
scenarios/megascale-table2/megascale-175b-256-b768.yaml: the plans where the analytical level's
replay of the pipeline sends decides the step (docs/results.md, "Interleaved pipelines replay
their sends").

Each plan varies the cluster size, tp, pp, vpp, cp, global batch, ZeRO stage, recomputation,
wiring, ToR oversubscription, queue pairs, rank placement and NICs per node; plans the scenario
loader refuses (they do not divide, do not fit in memory) are drawn again; a plan that runs at the
analytical level and fails at the flow level is reported. Prints one line per plan (error, both
iteration times, the overrides) and the mean and worst absolute error; exits 1 when a flow run
failed or the worst exceeds --max-error (percent), so it can guard a change.

MoE plans (--moe) vary the cluster size (64 to 512 GPUs), tp, pp, vpp, ep, expert_tp, ZeRO stage,
attention_parallel (tp or Ulysses sp), routing (uniform or zipf, zipf_s 0.5 to 2), top_k,
a2a_chunks, recomputation, global batch, NICs per node, ToR oversubscription, wiring and ECMP or
sprayed routing. A plan whose flow run would be long is drawn again before it runs: one whose
all-to-alls carry more than --moe-max-flows (flows per MoE layer and micro-batch, every expert
domain of a stage, times the layers and micro-batches of the step, between nodes counted twice;
the default 6 million takes up to about 15 s on one core), and, as a backstop, one whose flow run
passes --timeout seconds (reported as SKIPPED, not counted).

Example (about 10 s per plan on 2 cores, most of it the flow level):
  tools/compare_levels.py --clustersim build/tools/clustersim --seed 1 --plans 25
  tools/compare_levels.py --folding --seed 1 --plans 25      (about 2 s per plan)
  tools/compare_levels.py --moe --seed 1 --plans 15          (about 2-3 s per plan, none over ~20 s)
  tools/compare_levels.py --sends --seed 1 --plans 40        (about 1 s per plan)
"""
import argparse
import os
import json
import random
import statistics
import subprocess
import sys


class TimedOut(Exception):
    pass


LAST_ERROR = [""]  # clustersim's message for the last plan it refused


def iteration_time(clustersim, scenario, overrides, timeout=None):
    cmd = [clustersim, "run", scenario, "--format", "json"]
    for o in overrides:
        cmd += ["--set", o]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise TimedOut()
    if r.returncode != 0:
        LAST_ERROR[0] = r.stderr.strip()
        return None
    return json.loads(r.stdout)["iteration_time_s"]


def draw(rng):
    pp = rng.choice([1, 2, 4, 8, 16])
    return [
        f"cluster.gpus={rng.choice([512, 1024, 2048])}",
        f"parallelism.tp={rng.choice([2, 4, 8])}",
        f"parallelism.pp={pp}",
        f"parallelism.vpp={rng.choice([1, 2, 3, 6]) if pp > 1 else 1}",
        f"parallelism.cp={rng.choice([1, 1, 2])}",
        f"training.global_batch={rng.choice([512, 1024, 2048])}",
        f"parallelism.zero_stage={rng.choice([0, 1, 2, 3])}",
        f"network.wiring={rng.choice(['rail_optimized', 'tor_per_server'])}",
        f"network.tor_oversubscription={rng.choice([1, 1, 3])}",
        f"network.qps_per_connection={rng.choice([1, 1, 2, 4])}",
        f"parallelism.placement={rng.choice(['tp-cp-dp-pp', 'tp-cp-dp-pp', 'tp-cp-pp-dp', 'tp-dp-cp-pp'])}",
        f"cluster.nics_per_node={rng.choice([8, 8, 4])}",
        f"training.recompute={rng.choice(['none', 'selective', 'full'])}",
    ]


def draw_folding(rng):
    # gpt-7p5b-128's micro-batch of 16 needs global_batch a multiple of 16 x dp.
    while True:
        gpus, tp, pp, cp = rng.choice([128, 256, 512]), rng.choice([1, 2, 4, 8]), rng.choice([1, 2, 4]), rng.choice([1, 2])
        dp = gpus // (tp * pp * cp)
        if gpus % (tp * pp * cp) == 0 and dp >= 2:
            break
    return [
        f"cluster.gpus={gpus}",
        f"parallelism.tp={tp}",
        f"parallelism.pp={pp}",
        f"parallelism.cp={cp}",
        f"training.global_batch={16 * dp * rng.choice([1, 2])}",
        f"parallelism.placement={rng.choice(['tp-cp-dp-pp', 'dp-tp-cp-pp', 'tp-dp-cp-pp', 'tp-cp-pp-dp'])}",
        f"cluster.nics_per_node={rng.choice([8, 8, 4, 1])}",
        f"network.tor_oversubscription={rng.choice([1, 1, 3])}",
        f"network.wiring={rng.choice(['rail_optimized', 'tor_per_server'])}",
        "network.switch_radix=64",
        f"network.ecmp_seed={rng.randint(1, 100)}",
        "training.memory_check=false",
        "network.fidelity=flow",
    ]


def draw_sends(rng):
    """A pipeline of 8 to 24 layers of hidden 2048 on H100s whose sends are long beside its chunks
    (one GPU per node, or 8 sharing one NIC or a NIC each), overlapped (the base scenario's
    overlap.pp_p2p), or None where the sizes do not divide."""
    layers, gpn = rng.choice([8, 16, 24]), rng.choice([1, 8])
    tp = rng.choice([t for t in (1, 2, 8) if t <= gpn])
    pp, vpp, dp = rng.choice([2, 4, 8]), rng.choice([1, 2, 3]), rng.choice([1, 2, 4])
    gpus = tp * pp * dp
    if layers % (pp * vpp) or gpus % gpn:
        return None
    return [
        f"model.layers={layers}", "model.hidden=2048", "model.heads=16", "cluster.gpu=H100-SXM",
        f"cluster.gpus={gpus}", f"cluster.gpus_per_node={gpn}", f"cluster.nics_per_node={rng.choice([1, gpn])}",
        f"cluster.nic_bandwidth={rng.choice([25, 50, 100, 200, 400])}Gbps",
        f"parallelism.tp={tp}", f"parallelism.pp={pp}", f"parallelism.vpp={vpp}",
        f"parallelism.sequence_parallel={'true' if tp > 1 else 'false'}",
        f"training.global_batch={dp * pp * rng.choice([4, 8, 16, 32])}",
    ]


# Mixtral-8x7B (scenarios/mixtral-8x7b-h100-256.yaml, which --moe assumes): 32 layers, 32 heads
# (8 KV), 8 experts, micro_batch 1, 8 GPUs per node.
MOE_LAYERS, MOE_GPN = 32, 8


def moe_flow_work(gpus, tp, pp, ep, etp, global_batch):
    """All-to-all flows the flow level simulates in one step, roughly: per MoE layer and
    micro-batch, every expert domain of every stage sends from each of its ep x etp GPUs to the
    other ep - 1 owners, dispatch and combine, forward and backward. Flows between nodes (ep x etp
    past a node) count twice: they cost the fluid solver about twice as much (measured: 3.7 million
    flows inside nodes 7 s, 1.8 million between nodes 4-10 s, on one core)."""
    if ep <= 1:
        return 0
    domains = gpus // pp // (ep * etp)
    per_layer = domains * ep * etp * (ep - 1)
    micro_batches = global_batch // (gpus // (tp * pp))
    between_nodes = 2 if ep * etp > MOE_GPN else 1
    return between_nodes * per_layer * 4 * MOE_LAYERS * micro_batches


def draw_moe_sizes(rng):
    """A Mixtral-8x7B plan whose parallel sizes divide (the loader still refuses plans that do
    not fit in memory, or that break a rule this does not check) and its flow work, or None."""
    gpus = rng.choice([64, 128, 256, 256, 512])
    tp = rng.choice([1, 2, 2, 4, 8])
    pp = rng.choice([1, 2, 4, 4, 8])
    vpp = rng.choice([1, 1, 2, 4]) if pp > 1 else 1
    ep = rng.choice([1, 2, 4, 8, 8])
    etp = rng.choice([1, 1, 1, 2, 4])
    if gpus % (tp * pp) or (gpus // pp) % (ep * etp) or MOE_LAYERS % (pp * vpp) or ep * etp > 2 * MOE_GPN:
        return None
    dp = gpus // (tp * pp)
    # Micro-batches per pipeline: at least pp, a multiple of pp when interleaved.
    m = rng.choice([4, 8, 16, 32])
    if m < pp or (vpp > 1 and m % pp):
        return None
    global_batch = m * dp
    if global_batch > 2048 or global_batch < 64:
        return None
    top_k = rng.choice([1, 2, 2, 4])
    routing = rng.choice(["uniform", "uniform", "zipf"])
    plan = [
        f"cluster.gpus={gpus}",
        f"parallelism.tp={tp}",
        f"parallelism.pp={pp}",
        f"parallelism.vpp={vpp}",
        f"parallelism.ep={ep}",
        f"parallelism.expert_tp={etp}",
        f"parallelism.zero_stage={rng.choice([0, 1, 1, 2, 3])}",
        f"training.global_batch={global_batch}",
        f"training.attention_parallel={rng.choice(['tp', 'tp', 'sp']) if tp > 1 else 'tp'}",
        f"model.moe.top_k={top_k}",
        f"model.moe.routing={routing}",
    ]
    if routing == "zipf":
        plan.append(f"model.moe.zipf_s={rng.choice([0.5, 1.0, 1.5, 2.0])}")
    plan += [
        f"training.overlap.a2a_chunks={rng.choice([1, 1, 2, 4])}",
        f"training.recompute={rng.choice(['none', 'selective', 'full'])}",
        f"cluster.nics_per_node={rng.choice([8, 8, 4, 2])}",
        f"network.tor_oversubscription={rng.choice([1, 1, 3])}",
        f"network.wiring={rng.choice(['rail_optimized', 'tor_per_server'])}",
        f"network.routing={rng.choice(['ecmp', 'ecmp', 'spray'])}",
    ]
    return plan, moe_flow_work(gpus, tp, pp, ep, etp, global_batch)


def draw_moe(rng, max_flows):
    """draw_moe_sizes until the sizes divide and the step's all-to-all flows are at most max_flows."""
    for _ in range(100000):
        drawn = draw_moe_sizes(rng)
        if drawn is not None and drawn[1] <= max_flows:
            return drawn[0]
    sys.exit(f"compare_levels: no MoE plan with at most {max_flows:g} all-to-all flows drawn")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clustersim", default="build/tools/clustersim", help="the clustersim binary")
    ap.add_argument("--scenario", default="scenarios/megascale-175b-12288.yaml", help="base scenario (a dense model)")
    ap.add_argument("--seed", type=int, default=1, help="random seed of the plans")
    ap.add_argument("--plans", type=int, default=20, help="valid plans to compare")
    ap.add_argument("--max-error", type=float, default=None, help="exit 1 when a plan's |error| exceeds this (percent)")
    ap.add_argument("--folding", action="store_true", help="compare folded flow-level runs with unfolded ones")
    ap.add_argument("--moe", action="store_true", help="draw MoE plans around scenarios/mixtral-8x7b-h100-256.yaml")
    ap.add_argument("--sends", action="store_true",
                    help="draw send-bound pipelines around scenarios/megascale-table2/megascale-175b-256-b768.yaml")
    ap.add_argument("--moe-max-flows", type=float, default=6e6,
                    help="--moe: draw again a plan whose step carries more all-to-all flows than this")
    ap.add_argument("--timeout", type=float, default=None,
                    help="seconds a flow run may take before the plan is skipped (--moe: 60)")
    args = ap.parse_args()
    if args.folding + args.moe + args.sends > 1:
        ap.error("--folding, --moe and --sends are separate modes")
    if args.folding and args.scenario == ap.get_default("scenario"):
        args.scenario = "scenarios/megatron-sc21/gpt-7p5b-128.yaml"
    if args.moe and args.scenario == ap.get_default("scenario"):
        args.scenario = "scenarios/mixtral-8x7b-h100-256.yaml"
    if args.sends and args.scenario == ap.get_default("scenario"):
        args.scenario = "scenarios/megascale-table2/megascale-175b-256-b768.yaml"
    if args.moe and args.timeout is None:
        args.timeout = 60.0
    names = ("folded", "unfolded") if args.folding else ("analytical", "flow")
    if args.plans < 1:
        ap.error("--plans must be at least 1")
    # A missing binary or scenario is bad input (exit 2), not a traceback (until 2026-12-06).
    if not (os.path.isfile(args.clustersim) and os.access(args.clustersim, os.X_OK)):
        ap.error(f"--clustersim {args.clustersim}: no such executable (build it, or run from the repository root)")
    if not os.path.isfile(args.scenario):
        ap.error(f"--scenario {args.scenario}: no such file")

    rng = random.Random(args.seed)
    errors = []
    failures = []
    draws = 0
    while len(errors) < args.plans:
        draws += 1
        if draws > 20 * args.plans:
            # None valid: the scenario itself (or a file it names) is likely what clustersim refuses.
            if not errors and not failures:
                print(f"compare_levels: none of {draws - 1} drawn plans ran on {args.scenario}; clustersim's last "
                      f"message:\n{LAST_ERROR[0]}", file=sys.stderr)
                sys.exit(2)
            sys.exit(f"compare_levels: only {len(errors)} of {draws} drawn plans were valid for {args.scenario}")
        if args.moe:
            overrides = draw_moe(rng, args.moe_max_flows)
        elif args.sends:
            overrides = draw_sends(rng)
            if overrides is None:
                draws -= 1  # sizes that do not divide are not plans the loader refused
                continue
        else:
            overrides = draw_folding(rng) if args.folding else draw(rng)
        second = ["training.fold_ranks=false"] if args.folding else ["network.fidelity=flow"]
        # Folded explicitly: auto (the default) would not fold plans whose TP groups span nodes.
        first = overrides + (["training.fold_ranks=true"] if args.folding else [])
        estimate = iteration_time(args.clustersim, args.scenario, first)
        if estimate is None:
            continue
        try:
            reference = iteration_time(args.clustersim, args.scenario, overrides + second, args.timeout)
        except TimedOut:
            print(f"  SKIPPED ({names[1]} run over {args.timeout:g} s)  {' '.join(overrides)}", flush=True)
            continue
        if reference is None:
            # A plan the first run accepts must run the second way too.
            failures.append(overrides)
            print(f"  {names[1].upper()} FAILED  {' '.join(overrides)}", flush=True)
            continue
        e = 100.0 * (estimate / reference - 1.0)
        errors.append(e)
        print(f"{e:+7.1f}%  {names[0]} {estimate:9.3f} s  {names[1]} {reference:9.3f} s  {' '.join(overrides)}",
              flush=True)
    worst = max(abs(e) for e in errors)
    print(f"{len(errors)} plans: mean |error| {statistics.mean(abs(e) for e in errors):.2f}%, worst {worst:.1f}%")
    if failures:
        print(f"{len(failures)} plans ran {names[0]} and failed {names[1]}")
    if failures or (args.max_error is not None and worst > args.max_error):
        sys.exit(1)


if __name__ == "__main__":
    main()
