#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Fits hardware-profile efficiencies to published training runs when no probe data exists.

For every point of a grid over profile keys (efficiency.gemm_max, ...), writes a copy of the
base profile with those values, runs `clustersim validate --format json` on the calibration
suites with `--set cluster.gpu=<copy>`, and scores the point by the mean absolute relative
error over all their rows. Prints the grid's best points and writes the best profile with a
`sources:` line per fitted key naming the suites and the error reached.

The calibration suites must be held out of the validation suites that judge the result
(for the A100: calibrate on MegaScale Fig. 9 and Table 3, validate on ci.yaml / ci-flow.yaml).
A calibration row that is the same run as a validation row goes out with --leave-out LABEL: Table
3's last step (8-larger-batch, 256 GPUs, batch 768) is the run ci.yaml's megascale-175b-256-b768
row validates.

Example (what produced calibration/profiles/A100-SXM4-80GB.yaml's fitted values):
  tools/fit_published.py --clustersim build/tools/clustersim \\
      --profile calibration/profiles/A100-SXM4-80GB.yaml \\
      --suite scenarios/validation/fig9.yaml --suite scenarios/megascale-ablation/table3.yaml \\
      --leave-out 8-larger-batch --grid efficiency.gemm_max=0.645:0.67:0.005 -o /tmp/A100-fitted.yaml
(with the profile's GEMM tile, 64 x 64; 0.65 over 14 rows, mean 3.75%, about 30 s per grid point)
and the Hopper profiles' (H100-SXM.yaml, copied into H800-SXM.yaml and H200-SXM.yaml):
  tools/fit_published.py --clustersim build/tools/clustersim \\
      --profile calibration/profiles/H100-SXM.yaml --suite scenarios/validation/llama3.yaml \\
      --grid efficiency.gemm_max=0.55:0.65:0.005 -o /tmp/H100-fitted.yaml
(about 15 s per grid point on 2 cores; several --grid options span a product grid). Points whose
mean error is within --tie percentage points of the lowest are ranked by their worst row.
"""
import argparse
import itertools
import json
import math
import os
import re
import subprocess
import sys
import tempfile

MAX_POINTS = 1000  # grid points, over all --grid options together


def bad_input(message):
    """Exits 2, as argparse's own errors do (the house rule for bad input)."""
    print(f"fit_published: {message}", file=sys.stderr)
    sys.exit(2)


def parse_grid(text):
    expected = f"--grid {text!r}: expected section.key=LOW:HIGH:STEP, e.g. efficiency.gemm_max=0.6:0.8:0.01"
    m = re.fullmatch(r"([a-z0-9_]+\.[a-z0-9_]+)=([0-9.]+):([0-9.]+):([0-9.]+)", text)
    if not m:
        raise argparse.ArgumentTypeError(expected)
    try:
        key, lo, hi, step = m.group(1), float(m.group(2)), float(m.group(3)), float(m.group(4))
    except ValueError:
        raise argparse.ArgumentTypeError(expected) from None
    if step <= 0 or hi < lo:
        raise argparse.ArgumentTypeError(f"--grid {text!r}: need LOW <= HIGH and STEP > 0")
    # Points from LOW up to HIGH, never past it (a step that does not divide the range stops short).
    n = int(math.floor((hi - lo) / step + 1e-9)) + 1
    if n > MAX_POINTS:
        raise argparse.ArgumentTypeError(f"--grid {text!r}: {n} points; at most {MAX_POINTS} (a larger STEP)")
    # Whole numbers stay whole (gemm_tile_m, gemm_k_half are integers in a profile).
    whole = all(float(x).is_integer() for x in (lo, step))
    values = [int(round(lo + i * step)) if whole else round(lo + i * step, 6) for i in range(n)]
    if len(set(values)) != len(values):
        raise argparse.ArgumentTypeError(f"--grid {text!r}: STEP below the 6 decimals values are written with")
    return key, values


def set_key(profile_text, key, value):
    """Replaces `key: ...` inside its top-level section of the profile (YAML kept as text so that
    comments and sources survive: a trailing comment keeps the spaces before its `#`, without which
    YAML reads it as part of the value)."""
    section, name = key.split(".")
    pattern = re.compile(rf"(^{section}:\n(?:[ ]+.*\n)*?[ ]+{name}:)[ ]*[^\n#]*?([ ]+#[^\n]*)?$", re.MULTILINE)
    new, count = pattern.subn(lambda m: f"{m.group(1)} {value}{m.group(2) or ''}", profile_text, count=1)
    if count != 1:
        bad_input(f"--grid {key}: no such key in the --profile file")
    return new


def set_source(profile_text, key, text):
    """Sets `key`'s line in the profile's top-level `sources:` section: replaced where it is, else
    added at the section's end, and the section added at the file's end where the profile has none
    (appended to the file's last section, such a line was read as a key of that section)."""
    pattern = re.compile(rf"^(  {re.escape(key)}:)[^\n]*$", re.MULTILINE)
    line = f'  {key}: "{text}"'
    new, count = pattern.subn(lambda m: line, profile_text, count=1)
    if count:
        return new
    if re.search(r"^sources:[ ]*[^ \n#]", profile_text, re.MULTILINE):
        bad_input("--profile: its sources section is written inline (sources: {...}); write it as a block, "
                  "one key a line, as `clustersim profiles NAME` prints it")
    section = re.search(r"^sources:[ ]*(#[^\n]*)?\n((?:[ ]+[^\n]*\n|[ ]*\n)*)", profile_text, re.MULTILINE)
    if section is None:
        return profile_text.rstrip("\n") + f"\nsources:\n{line}\n"
    # After the block's last line, before any blank lines that end it.
    kept = re.sub(r"(?:^[ \t]*\n)+\Z", "", section.group(2), flags=re.MULTILINE)  # less the blank lines ending it
    end = section.start(2) + len(kept)
    return profile_text[:end] + line + "\n" + profile_text[end:]


def score(clustersim, suites, profile_path, leave_out):
    errors, rows, left = [], [], set()
    for suite in suites:
        out = subprocess.run([clustersim, "validate", suite, "--format", "json", "--set", f"cluster.gpu={profile_path}"],
                             capture_output=True, text=True)
        if out.returncode not in (0, 1):
            # The grid point's profile is a copy of --profile with the --grid values set; exit 2 when
            # clustersim found the input bad (a value out of the profile's range), as it does.
            print(f"fit_published: clustersim validate {suite} failed with the grid point's profile (a copy of "
                  f"--profile with the --grid values):\n{out.stderr}", file=sys.stderr)
            sys.exit(2 if out.returncode == 2 else 1)
        try:
            result = json.loads(out.stdout)
        except json.JSONDecodeError:
            bad_input(f"--clustersim {clustersim}: `validate --format json` printed no JSON: is it clustersim?")
        for row in result["rows"]:
            if row["label"] in leave_out:
                left.add(row["label"])
                continue
            errors.append(abs(row["rel_error"]))
            rows.append(row)
    missing = sorted(set(leave_out) - left)
    if missing:
        # Bad input: exit 2, as argparse's errors do.
        print(f"fit_published: --leave-out {', '.join(missing)}: no such row in {', '.join(suites)} (a row's label "
              f"is the case's `label:`, else its scenario file's stem, e.g. 8-larger-batch)", file=sys.stderr)
        sys.exit(2)
    if not errors:
        print("fit_published: every row is left out; nothing to fit", file=sys.stderr)
        sys.exit(2)
    return sum(errors) / len(errors), max(errors), rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clustersim", default="build/tools/clustersim")
    ap.add_argument("--profile", required=True, help="base hardware profile YAML")
    ap.add_argument("--suite", action="append", required=True, help="calibration suite (repeatable)")
    ap.add_argument("--grid", action="append", type=parse_grid, required=True, help="section.key=LOW:HIGH:STEP")
    ap.add_argument("-o", "--output", required=True, help="where to write the best profile")
    ap.add_argument("--leave-out", action="append", default=[], metavar="LABEL",
                    help="a calibration row (its label: the case's `label:`, else its scenario file's stem) not to score, e.g. a run that a "
                         "validation suite also holds (repeatable)")
    ap.add_argument("--tie", type=float, default=0.05,
                    help="points whose mean error is within this many percentage points of the lowest count as "
                         "equally good; among them the lowest worst-row error wins (default 0.05)")
    args = ap.parse_args()
    args.leave_out = sorted(set(args.leave_out))
    if not (args.tie >= 0 and math.isfinite(args.tie)):
        ap.error(f"--tie {args.tie}: expected 0 or more percentage points")
    for path, what in [(args.profile, "--profile"), (args.clustersim, "--clustersim")] + [(s, "--suite") for s in args.suite]:
        if not os.path.isfile(path):
            ap.error(f"{what} {path}: no such file")
    if not os.access(args.clustersim, os.X_OK):
        ap.error(f"--clustersim {args.clustersim}: not executable")
    out_dir = os.path.dirname(os.path.abspath(args.output))
    if os.path.isdir(args.output) or not os.path.isdir(out_dir):
        ap.error(f"-o {args.output}: expected a file path in an existing directory")
    grid_keys = [k for k, _ in args.grid]
    if len(set(grid_keys)) != len(grid_keys):
        ap.error("--grid: a key is given twice (" + ", ".join(sorted({k for k in grid_keys if grid_keys.count(k) > 1})) + ")")
    points = math.prod(len(v) for _, v in args.grid)
    if points > MAX_POINTS:
        ap.error(f"--grid: {points} points over all keys; at most {MAX_POINTS}")
    base = open(args.profile).read()
    keys = [k for k, _ in args.grid]
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "profile.yaml")
        for values in itertools.product(*[v for _, v in args.grid]):
            text = base
            for k, v in zip(keys, values):
                text = set_key(text, k, v)
            with open(path, "w") as f:
                f.write(text)
            mean, worst, _ = score(args.clustersim, args.suite, path, args.leave_out)
            results.append((mean, worst, values))
            print("  ".join(f"{k}={v}" for k, v in zip(keys, values)) + f"   mean {mean:.3%}  worst {worst:.2%}",
                  file=sys.stderr)
    # A flat mean (over- and under-predicted rows trading off) does not pick a point: within --tie of
    # the lowest mean, the smallest worst-row error decides.
    lowest = min(r[0] for r in results)
    tied = sorted((r for r in results if r[0] <= lowest + args.tie / 100.0), key=lambda r: (r[1], r[0]))
    results.sort()
    print("best points (mean |relative error| over %s%s):" % (", ".join(args.suite),
          "; left out: " + ", ".join(args.leave_out) if args.leave_out else ""))
    for mean, worst, values in results[:5]:
        print("  " + "  ".join(f"{k}={v}" for k, v in zip(keys, values)) + f"   mean {mean:.2%}  worst {worst:.2%}")
    mean, worst, values = tied[0]
    if len(tied) > 1:
        print(f"{len(tied)} points within {args.tie} points of the lowest mean; the lowest worst-row error wins: "
              + "  ".join(f"{k}={v}" for k, v in zip(keys, values)))
    text = base
    suites = ", ".join(os.path.basename(s) for s in args.suite)
    if args.leave_out:
        suites += " less " + ", ".join(args.leave_out)
    for k, v in zip(keys, values):
        text = set_key(text, k, v)
        text = set_source(text, k, f"fitted to published runs ({suites}) by tools/fit_published.py: "
                                   f"mean |error| {mean:.1%}, worst {worst:.1%}; replace with a probe fit when one exists")
    with open(args.output, "w") as f:
        f.write(text)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
