#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A sweep killed with SIGKILL after 50 logged results resumes with --resume and ends with exactly
# one row per candidate, identical to an uninterrupted run. Also: a partial last log line is dropped.
set -u
bin=$1 data=$2 out=$3
rm -rf "$out" && mkdir -p "$out"
fail() { echo "FAIL: $*" >&2; exit 1; }

"$bin" sweep "$data/small-sweep.yaml" -j 2 --top 0 --no-progress --out "$out/full" >/dev/null || fail "full run"

"$bin" sweep "$data/small-sweep.yaml" -j 2 --top 0 --no-progress --out "$out/cut" --stop-after 50 >/dev/null 2>&1
rc=$?
[ "$rc" -eq 137 ] || fail "expected the run to be killed (exit 137), got $rc"
logged=$(($(wc -l < "$out/cut/results.jsonl") - 1))
[ "$logged" -ge 50 ] && [ "$logged" -lt 144 ] || fail "expected 50..143 logged results after the kill, got $logged"
[ -e "$out/cut/sweep.csv" ] && fail "a killed sweep wrote sweep.csv"
# A half-written line, as a kill during a write leaves.
printf '{"stage": "analytical", "index": 9' >> "$out/cut/results.jsonl"

"$bin" sweep "$data/small-sweep.yaml" -j 2 --top 0 --no-progress --out "$out/cut" >/dev/null 2>&1 \
  && fail "an existing log without --resume must be refused"
"$bin" sweep "$data/small-sweep.yaml" -j 2 --top 0 --no-progress --out "$out/cut" --resume > "$out/resume.txt" \
  2> "$out/resume.err" || fail "resume"
# The count comes first, on stderr, whether or not there is a terminal (2026-12-05).
head -n 1 "$out/resume.err" | grep -q "^sweep small-sweep: 144 candidates, about" || { cat "$out/resume.err" >&2; fail "count up front"; }
grep -q "144 candidates" "$out/resume.txt" || fail "summary"
rows=$(($(wc -l < "$out/cut/sweep.csv") - 1))
[ "$rows" -eq 144 ] || fail "expected 144 rows, got $rows"
ids=$(tail -n +2 "$out/cut/sweep.csv" | cut -d, -f2 | sort -u | wc -l)
[ "$ids" -eq 144 ] || fail "expected 144 distinct candidate ids, got $ids"
records=$(($(wc -l < "$out/cut/results.jsonl") - 1))
[ "$records" -eq 144 ] || fail "expected 144 log records after resume (none repeated), got $records"
cmp "$out/full/sweep.csv" "$out/cut/sweep.csv" || fail "resumed sweep.csv differs from an uninterrupted run"
# Resuming a finished sweep runs nothing and writes the same rows.
"$bin" sweep "$data/small-sweep.yaml" -j 2 --top 0 --no-progress --out "$out/cut" --resume > "$out/again.txt" || fail "second resume"
grep -q "analytical stage: 0 run" "$out/again.txt" || fail "second resume re-ran candidates"
cmp "$out/full/sweep.csv" "$out/cut/sweep.csv" || fail "second resume changed rows"
# A record the sweep did not write is refused naming the log's line, exit 2 (docs/sweep.md): another
# candidate's id, and an MFU of 99 (both were taken until 2026-12-05: the first candidate was never
# run again, the second ranked).
for edit in 's/"id": "/"id": "x/' 's/"mfu": [0-9.e-]*/"mfu": 99.0/'; do
  rm -rf "$out/edited" && cp -r "$out/full" "$out/edited"
  line=$(grep -n '"mfu"' "$out/edited/results.jsonl" | head -n 1 | cut -d: -f1)
  sed -i "${line}${edit}" "$out/edited/results.jsonl"
  "$bin" sweep "$data/small-sweep.yaml" -j 2 --top 0 --no-progress --out "$out/edited" --resume > "$out/edited.txt" 2>&1
  rc=$?
  [ "$rc" -eq 2 ] || { cat "$out/edited.txt" >&2; fail "an edited log line ($edit): expected exit 2, got $rc"; }
  grep -q "edited/results.jsonl:$line: --resume: .*the log was edited or damaged" "$out/edited.txt" \
    || { cat "$out/edited.txt" >&2; fail "an edited log line ($edit): the message does not name line $line"; }
done
# A candidate whose worker failed makes the sweep exit 1 once its files are written (it exited 0
# until 2026-12-06); a stale sweep.json of another sweep in the directory is gone while it runs.
rm -rf "$out/failed" && cp -r "$out/full" "$out/failed"
sed -i '2s/"status": "ok"/"status": "failed"/' "$out/failed/results.jsonl"
"$bin" sweep "$data/small-sweep.yaml" -j 2 --top 0 --no-progress --out "$out/failed" --resume > "$out/failed.txt" 2>&1
rc=$?
[ "$rc" -eq 1 ] || { cat "$out/failed.txt" >&2; fail "a failed candidate: expected exit 1, got $rc"; }
grep -q "error: 1 candidate failed" "$out/failed.txt" || { cat "$out/failed.txt" >&2; fail "a failed candidate is not said"; }
[ -e "$out/failed/sweep.json" ] || fail "a sweep with a failed candidate did not write sweep.json"
# A sweep refused at the log (another run into a finished sweep's directory without --resume)
# removes nothing.
"$bin" sweep "$data/small-sweep.yaml" -j 2 --top 0 --no-progress --out "$out/full" >/dev/null 2>&1 \
  && fail "a second run into a finished sweep's directory must be refused"
[ -e "$out/full/sweep.json" ] || fail "a refused sweep removed the finished sweep's sweep.json"
rm -rf "$out/stale" && cp -r "$out/full" "$out/stale" && rm "$out/stale/results.jsonl"
"$bin" sweep "$data/small-sweep.yaml" -j 2 --top 0 --no-progress --out "$out/stale" --stop-after 5 >/dev/null 2>&1
[ -e "$out/stale/sweep.json" ] && fail "a killed sweep left an earlier sweep's sweep.json beside its log"
echo "ok: killed at $logged of 144, resumed to 144 rows identical to an uninterrupted run; edited lines refused; a failed candidate exits 1"
