#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Draws random training plans around a base scenario and compares the analytical level with the
flow level, plan by plan: the analytical level's error against the level that simulates every
flow. A search for where the closed forms and the detailed simulation part ways (docs/results.md,
"Analytical and flow levels"). With --folding it compares instead the flow level's folded runs
(training.fold_ranks: true, the default) with unfolded ones (every rank group simulated), on
smaller plans around scenarios/megatron-sc21/gpt-7p5b-128.yaml that also place DP first and share
one NIC per node (scenarios/README.md, fold_ranks).

Each plan varies the cluster size, tp, pp, vpp, cp, global batch, ZeRO stage, recomputation,
wiring, ToR oversubscription, queue pairs, rank placement and NICs per node; plans the scenario
loader refuses (they do not divide, do not fit in memory) are drawn again; a plan that runs at the
analytical level and fails at the flow level is reported. Prints one line per plan (error, both
iteration times, the overrides) and the mean and worst absolute error; exits 1 when a flow run
failed or the worst exceeds --max-error (percent), so it can guard a change.

Example (about 10 s per plan on 2 cores, most of it the flow level):
  tools/compare_levels.py --clustersim build/tools/clustersim --seed 1 --plans 25
  tools/compare_levels.py --folding --seed 1 --plans 25      (about 2 s per plan)
"""
import argparse
import json
import random
import statistics
import subprocess
import sys


def iteration_time(clustersim, scenario, overrides):
    cmd = [clustersim, "run", scenario, "--format", "json"]
    for o in overrides:
        cmd += ["--set", o]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
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


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clustersim", default="build/tools/clustersim", help="the clustersim binary")
    ap.add_argument("--scenario", default="scenarios/megascale-175b-12288.yaml", help="base scenario (a dense model)")
    ap.add_argument("--seed", type=int, default=1, help="random seed of the plans")
    ap.add_argument("--plans", type=int, default=20, help="valid plans to compare")
    ap.add_argument("--max-error", type=float, default=None, help="exit 1 when a plan's |error| exceeds this (percent)")
    ap.add_argument("--folding", action="store_true", help="compare folded flow-level runs with unfolded ones")
    args = ap.parse_args()
    if args.folding and args.scenario == ap.get_default("scenario"):
        args.scenario = "scenarios/megatron-sc21/gpt-7p5b-128.yaml"
    names = ("folded", "unfolded") if args.folding else ("analytical", "flow")
    if args.plans < 1:
        ap.error("--plans must be at least 1")
    rng = random.Random(args.seed)
    errors = []
    failures = []
    draws = 0
    while len(errors) < args.plans:
        draws += 1
        if draws > 20 * args.plans:
            sys.exit(f"compare_levels: only {len(errors)} of {draws} drawn plans were valid for {args.scenario}")
        overrides = draw_folding(rng) if args.folding else draw(rng)
        second = ["training.fold_ranks=false"] if args.folding else ["network.fidelity=flow"]
        estimate = iteration_time(args.clustersim, args.scenario, overrides)
        if estimate is None:
            continue
        reference = iteration_time(args.clustersim, args.scenario, overrides + second)
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
