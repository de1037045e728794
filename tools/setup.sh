#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One-step setup on Debian 12 or Ubuntu 24.04 (they ship SimGrid 3.32 or later and CMake 3.24 or
# later; Ubuntu 22.04's SimGrid 3.30 is too old): installs the build dependencies (apt-get, only
# what is missing), builds clustersim in Release (incrementally), then
#   tools/setup.sh run    runs the default scenario
#   tools/setup.sh test   runs the test suite (everything but tests labelled 'slow' or 'known_gap')
# Safe to run again: a second run installs nothing and rebuilds only what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

mode="${1:-}"
if [[ "$mode" != "run" && "$mode" != "test" ]]; then
  echo "usage: tools/setup.sh run|test" >&2
  exit 2
fi

packages=(cmake g++ make pkg-config libsimgrid-dev libyaml-cpp-dev libboost-graph-dev
          libeigen3-dev libprotobuf-dev protobuf-compiler libgtest-dev libopenmpi-dev openmpi-bin
          python3)  # python3: the layering test and tools/*.py (without it CMake leaves those tests out)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  if [[ $(id -u) -ne 0 ]]; then
    if ! command -v sudo >/dev/null; then
      echo "setup: missing packages ${missing[*]}; run this as root, or install sudo, or install them first" >&2
      exit 1
    fi
    sudo="sudo"
  fi
  echo "setup: installing ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$jobs"

if [[ "$mode" == "run" ]]; then
  exec ./build/tools/clustersim run scenarios/megascale-175b-12288.yaml
fi
exec ctest --test-dir build --output-on-failure -j"$jobs" -LE "slow|known_gap" --timeout 600
