#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Bad sweep files exit 2 with a message naming the key: unknown key, empty axis, objective that
# is not an output, axis over a key scenarios do not have, contradictory constraints; and a sweep
# whose every candidate is invalid exits 2 with the reasons counted (after writing its files).
set -u
bin=$1 data=$2 out=$3
rm -rf "$out" && mkdir -p "$out"
fail() { echo "FAIL: $*" >&2; exit 1; }
base='base: {cluster: {gpus: 16}, model: {layers: 24, hidden: 2304, heads: 24, seq_len: 2048, vocab: 51200}, training: {global_batch: 384}}'
check() {  # name, expected text, yaml body
  printf '%s\n%s\n' "$base" "$3" > "$out/$1.yaml"
  "$bin" sweep "$out/$1.yaml" --out "$out/$1" > "$out/$1.txt" 2>&1
  rc=$?
  [ "$rc" -eq 2 ] || { cat "$out/$1.txt" >&2; fail "$1: expected exit 2, got $rc"; }
  grep -q -- "$2" "$out/$1.txt" || { cat "$out/$1.txt" >&2; fail "$1: message lacks '$2'"; }
}
check unknown_key "did you mean 'axes'" 'axis: {parallelism.tp: [1, 2]}'
check empty_axis "axes.parallelism.tp: the axis is empty" 'axes: {parallelism.tp: []}'
check empty_range "the range is empty" 'axes: {parallelism.tp: {from: 4, to: 1}}'
check bad_objective "'speed' is not an output" $'axes: {parallelism.tp: [1, 2]}\nobjective: speed'
check not_scenario_key "'parallelism.tpp' is not a scenario key" 'axes: {parallelism.tpp: [1, 2]}'
check bad_constraint "'tpot_s' is not an output of training" $'axes: {parallelism.tp: [1, 2]}\nconstraints: {tpot_s: {max: 0.05}}'
check contradictory_gpus "constraints.gpus: min 10 is above max 1" $'axes: {parallelism.tp: [1, 2]}\nconstraints: {gpus: {min: 10, max: 1}}'
check contradictory_limit "constraints.mfu: min 0.9 is above max 0.1" $'axes: {parallelism.tp: [1, 2]}\nconstraints: {mfu: {min: 0.9, max: 0.1}}'
check no_valid_candidate "none of the 2 candidates is valid (reasons grouped, numbers shown as #): 2 x invalid: cluster.gpus" 'axes: {cluster.gpus: [12, 20]}'
check mistyped_value "axes.parallelism.tp: value 'abc'" 'axes: {parallelism.tp: [1, abc]}'
# A fixed GPU count is a whole number, as {min, max} are; a time-to-train limit needs train_tokens
# (both passed silently before 2026-12-05).
check fractional_gpus "constraints.gpus: expected an integer >= 1, got '16.7'" $'axes: {parallelism.tp: [1, 2]}\nconstraints: {gpus: 16.7}'
check ttd_constraint "constraints.time_to_train_days: time_to_train_days needs objective.train_tokens" $'axes: {parallelism.tp: [1, 2]}\nconstraints: {time_to_train_days: {max: 30}}'
# One error each, not also every value of an over-long range, nor "needs train_tokens" beside
# train_tokens' own refusal (2026-12-05).
check_alone() {  # name, expected text, yaml body: that error and no other
  check "$1" "$2" "$3"
  [ "$(grep -c '^error:' "$out/$1.txt")" -eq 1 ] || { cat "$out/$1.txt" >&2; fail "$1: expected one error"; }
}
check_alone huge_range "the range has more than 100000 values" 'axes: {parallelism.tp: {from: 1, to: 200000}}'
check_alone bad_train_tokens "objective.train_tokens: expected a number >= 1, got 'lots'" $'axes: {parallelism.tp: [1, 2]}\nobjective: {metric: time_to_train_days, train_tokens: lots}'
[ -f "$out/no_valid_candidate/sweep.json" ] || fail "no_valid_candidate: sweep.json not written"
echo "ok: every bad sweep file exits 2 with its reason"
