#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `mpirun -n 2 clustersim sweep` gives the same rows as `clustersim sweep -j 2` (exit 77 = skipped
# when mpirun is absent or clustersim was built without MPI).
set -u
bin=$1 data=$2 out=$3 with_mpi=$4
command -v mpirun >/dev/null || { echo "skipped: no mpirun"; exit 77; }
[ "$with_mpi" = 1 ] || { echo "skipped: clustersim built without MPI"; exit 77; }
rm -rf "$out" && mkdir -p "$out"
fail() { echo "FAIL: $*" >&2; exit 1; }
"$bin" sweep "$data/small-sweep.yaml" -j 2 --no-progress --out "$out/jobs" >/dev/null || fail "-j 2 run"
mpirun -n 2 --oversubscribe "$bin" sweep "$data/small-sweep.yaml" --no-progress --out "$out/mpi" > "$out/mpi.txt" 2>&1 \
  || { cat "$out/mpi.txt" >&2; fail "mpirun -n 2 run"; }
cmp "$out/jobs/sweep.csv" "$out/mpi/sweep.csv" || fail "mpirun -n 2 rows differ from -j 2"
records=$(($(wc -l < "$out/mpi/results.jsonl") - 1))
echo "ok: mpirun -n 2 and -j 2 give identical sweep.csv ($records log records)"
