#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Measures the GPU machine this runs on with clustersim-probe and leaves the probe files and a
# record of the machine (GPU, driver, CUDA, NCCL) in OUTDIR:
#
#   kernels_probe/measure_machine.sh OUTDIR [NAME]
#
# NAME (default: the GPU's name, lower case, spaces as dashes) prefixes the files: NAME-quick.pb
# (a --quick run first, so that a hang or crash later still leaves data), NAME.pb (every part),
# each with its .txt summary, NAME-repeat.pb (every part again, for the run-to-run spread; not
# with REPEAT=0), NAME-machine.txt and NAME-log.txt. A prebuilt probe is used when
# $PROBE names one that starts here; otherwise it is built from kernels_probe/ with the machine's
# own CUDA toolkit (NCCL from the toolkit, $NCCL_HOME, or the nvidia-nccl Python wheel).
# Time limits per run: $QUICK_LIMIT (default 120 s) and $FULL_LIMIT (default 360 s).
set -u
out=${1:?usage: measure_machine.sh OUTDIR [NAME]}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
log="$out/${2:-probe}-log.txt"
exec > >(tee -a "$log") 2>&1

gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
name=${2:-$(echo "${gpu:-gpu}" | tr 'A-Z ' 'a-z-' | tr -cd 'a-z0-9-')}
{
  echo "date_utc: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv 2>&1
  nvidia-smi 2>&1 | head -4
  command -v nvcc >/dev/null && nvcc --version | tail -2
} > "$out/$name-machine.txt"
cat "$out/$name-machine.txt"

# NCCL: the toolkit's, $NCCL_HOME, or the Python wheel's.
if [ -z "${NCCL_HOME:-}" ]; then
  wheel=$(python3 -c 'import nvidia.nccl, os; print(os.path.dirname(nvidia.nccl.__file__) if nvidia.nccl.__file__ else list(nvidia.nccl.__path__)[0])' 2>/dev/null)
  [ -n "$wheel" ] && [ -d "$wheel/lib" ] && export NCCL_HOME=$wheel
fi
for d in ${NCCL_HOME:+"$NCCL_HOME/lib"} /usr/local/cuda/lib64 /usr/local/cuda/lib; do
  [ -d "$d" ] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
# The wheel names its library libnccl.so.2 only; the build's find_library wants libnccl.so.
if [ -n "${NCCL_HOME:-}" ] && [ ! -e "$NCCL_HOME/lib/libnccl.so" ] && [ -e "$NCCL_HOME/lib/libnccl.so.2" ]; then
  mkdir -p /tmp/nccl-link/lib && ln -sf "$NCCL_HOME/lib/libnccl.so.2" /tmp/nccl-link/lib/libnccl.so
  ln -sfn "$NCCL_HOME/include" /tmp/nccl-link/include
  export NCCL_HOME=/tmp/nccl-link
fi
echo "NCCL_HOME=${NCCL_HOME:-} LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"

probe=${PROBE:-}
if [ -z "$probe" ] || [ ! -x "$probe" ] || ldd "$probe" 2>&1 | grep -q "not found"; then
  echo "building the probe here"
  cmake -S "$here" -B /tmp/build-probe -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    ${NCCL_HOME:+-DNCCL_HOME=$NCCL_HOME} >/dev/null && cmake --build /tmp/build-probe -j "$(nproc)" >/dev/null || exit 4
  probe=/tmp/build-probe/clustersim-probe
fi
ldd "$probe" | grep -E "cublas|nccl"

timeout -k 10 "${QUICK_LIMIT:-120}" "$probe" -o "$out/$name-quick.pb" --quick
echo "quick run: exit $?"
timeout -k 10 "${FULL_LIMIT:-360}" "$probe" -o "$out/$name.pb"
echo "full run: exit $?"
# A second full run, for the run-to-run spread of the medians ($REPEAT=0 skips it).
if [ "${REPEAT:-1}" != 0 ]; then
  timeout -k 10 "${FULL_LIMIT:-360}" "$probe" -o "$out/$name-repeat.pb"
  echo "repeat run: exit $?"
  rm -f "$out/$name-repeat.txt"
fi
ls -la "$out"
