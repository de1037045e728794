#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Rejects upward #includes: each layer may include only itself and the layers it may use
(../shared/DESIGN.md section 3, STYLE.md "Layering"), and third-party headers only in their one
home. Exit 1 with one line per violation."""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent

# layer -> layers it may include (besides itself)
ALLOWED = {
    "sim/core": set(),
    "calibration": {"sim/core"},
    "topology": {"sim/core"},
    "sim/network": {"sim/core", "topology"},
    "sim/collectives": {"sim/core", "sim/network", "topology"},
    "workloads": {"sim/core", "sim/collectives", "sim/network", "topology", "calibration"},
    "sim/engine": {"sim/core", "calibration", "topology", "sim/network", "sim/collectives", "workloads"},
    "sim/report": {"sim/core", "calibration", "topology", "sim/network", "sim/collectives", "workloads", "sim/engine"},
    "tools": {"sim/core", "calibration", "topology", "sim/network", "sim/collectives", "workloads", "sim/engine", "sim/report", "tools"},
}
# third-party header prefix -> folders allowed to include it
HOMES = {
    "yaml-cpp/": {"sim/core/load_yaml.cc"},
    "boost/graph": {"topology/"},
    "Eigen/": {"calibration/fit/"},
    "simgrid/": {"sim/network/flow/", "sim/engine/", "tools/bench/", "tests/"},
    "google/protobuf": {"calibration/"},
}

INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]')


def layer_of(rel):
    for layer in sorted(ALLOWED, key=len, reverse=True):
        if rel.startswith(layer + "/"):
            return layer
    return None


def main():
    problems = []
    for path in sorted(ROOT.rglob("*")):
        if path.suffix not in (".h", ".cc", ".cu", ".cuh") or "build" in path.relative_to(ROOT).parts[0]:
            continue
        rel = path.relative_to(ROOT).as_posix()
        layer = layer_of(rel)
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            inc = m.group(1)
            for prefix, homes in HOMES.items():
                if inc.startswith(prefix) and not any(rel.startswith(h) or rel == h for h in homes):
                    problems.append(f"{rel}:{n}: {inc} belongs only in {', '.join(sorted(homes))}")
            if layer is None:
                continue
            target = layer_of(inc)
            if target is None or target == layer:
                continue
            if target not in ALLOWED[layer]:
                problems.append(f"{rel}:{n}: layer {layer} may not include {inc} (layer {target})")
            if "/internal/" in inc and not rel.startswith(inc.split("/internal/")[0] + "/"):
                problems.append(f"{rel}:{n}: {inc} is internal to its folder")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
