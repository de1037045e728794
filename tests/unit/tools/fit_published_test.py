#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""tools/fit_published.py: --leave-out takes a row out of the score, and a label matching no row
is bad input (exit 2). Runs one grid point of the analytical CI suite (under a second).
Usage: fit_published_test.py SOURCE_DIR CLUSTERSIM"""
import os
import subprocess
import sys
import tempfile

source, clustersim = sys.argv[1], sys.argv[2]
script = os.path.join(source, "tools", "fit_published.py")
profile = os.path.join(source, "calibration", "profiles", "A100-SXM4-80GB.yaml")
suite = os.path.join(source, "scenarios", "validation", "ci.yaml")
failures = []


def fit(*extra):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "fitted.yaml")
        r = subprocess.run([sys.executable, script, "--clustersim", clustersim, "--profile", profile, "--suite", suite,
                            "--grid", "efficiency.gemm_max=0.65:0.65:0.01", "-o", out, *extra],
                           capture_output=True, text=True, cwd=source)
        written = open(out).read() if os.path.exists(out) else ""
    return r, written


def check(ok, what):
    if not ok:
        failures.append(what)


base, _ = fit()
left, written = fit("--leave-out", "megascale-175b-256-b768", "--leave-out", "megascale-175b-256-b768")
check(base.returncode == 0 and left.returncode == 0, f"runs: {base.returncode} {left.returncode}\n{left.stderr}")
mean = lambda r: float(r.stderr.split("mean ")[1].split("%")[0])
check(mean(base) != mean(left), f"leaving a row out changes the mean: {base.stderr} / {left.stderr}")
check("left out: megascale-175b-256-b768)" in left.stdout, f"stdout names the row once: {left.stdout}")
check("(ci.yaml less megascale-175b-256-b768)" in written, f"sources name it: {written[-400:]}")
bad, _ = fit("--leave-out", "no-such-row")
check(bad.returncode == 2, f"unknown label exits 2, got {bad.returncode}")
check("--leave-out no-such-row: no such row" in bad.stderr, f"message: {bad.stderr}")
# A grid stops at HIGH (0.612 was tried and could be written until 2026-12-06) and whole-number
# keys stay whole (64.0 was refused by the profile loader).
with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "fitted.yaml")
    r = subprocess.run([sys.executable, script, "--clustersim", clustersim, "--profile", profile, "--suite", suite,
                        "--grid", "efficiency.gemm_max=0.6:0.61:0.006", "--grid", "efficiency.gemm_tile_m=64:64:64",
                        "-o", out], capture_output=True, text=True, cwd=source)
    check(r.returncode == 0, f"grid run: {r.returncode} {r.stderr}")
    check("0.612" not in r.stderr and "gemm_max=0.606" in r.stderr, f"grid past HIGH: {r.stderr}")
    check("gemm_tile_m=64 " in r.stderr and "64.0" not in r.stderr, f"integer key: {r.stderr}")
for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
