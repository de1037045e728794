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
# with REPEAT=0), NAME-machine.txt, NAME-log.txt and NAME-{quick,full,repeat}-smi.csv (nvidia-smi
# samples during each run). A prebuilt probe is used when
# $PROBE names one that starts here; otherwise it is built from kernels_probe/ with the machine's
# own CUDA toolkit (NCCL from the toolkit, $NCCL_HOME, or the nvidia-nccl Python wheel).
# Time limits per run (each killed with SIGKILL 10 s after its SIGTERM): $QUICK_LIMIT (default
# 60 s), $FULL_LIMIT (default 150 s) and $REPEAT_LIMIT (default $FULL_LIMIT). A full run takes
# about 45 s on one H200, so the defaults add up to 6 minutes at worst; raise FULL_LIMIT on
# machines with several GPUs (the collectives grow with the GPU count). A run cut by its limit
# keeps the parts it finished (the probe rewrites its file after every part).
set -u
out=${1:?usage: measure_machine.sh OUTDIR [NAME]}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
name=${2:-$(echo "${gpu:-gpu}" | tr 'A-Z ' 'a-z-' | tr -cd 'a-z0-9-')}
log="$out/$name-log.txt"
exec > >(tee -a "$log") 2>&1
{
  echo "date_utc: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv 2>&1
  # Clock and power state before the runs (the probe also notes it, through NVML, when present).
  nvidia-smi --query-gpu=index,clocks.sm,clocks.mem,clocks.applications.graphics,power.limit,enforced.power.limit,temperature.gpu,persistence_mode,ecc.mode.current,compute_mode --format=csv 2>&1
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
  # For the GPUs of this machine (sm_90 alone until 2026-12-06: no kernel an A100 could run).
  echo "building the probe here"
  cmake -S "$here" -B /tmp/build-probe -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=native \
    ${NCCL_HOME:+-DNCCL_HOME=$NCCL_HOME} >/dev/null && cmake --build /tmp/build-probe -j "$(nproc)" >/dev/null || exit 4
  probe=/tmp/build-probe/clustersim-probe
fi
ldd "$probe" | grep -E "cublas|nccl"

# Drivers before 535 call the clock-event reasons "throttle" reasons.
smi_fields=""
for reasons in clocks_event_reasons.active clocks_throttle_reasons.active; do
  f=timestamp,index,clocks.sm,clocks.mem,power.draw,power.limit,temperature.gpu,$reasons
  if nvidia-smi --query-gpu="$f" --format=csv >/dev/null 2>&1; then smi_fields=$f; break; fi
done

quick_limit=${QUICK_LIMIT:-60}
full_limit=${FULL_LIMIT:-150}
repeat_limit=${REPEAT_LIMIT:-$full_limit}

# run_probe TAG LIMIT ARGS...: one probe run under a time limit, with nvidia-smi sampling the
# clocks, power, temperature and clock-event (throttle) reasons every 200 ms into NAME-TAG-smi.csv.
run_probe() {
  local tag=$1 limit=$2 smi=""
  shift 2
  if [ -n "$smi_fields" ]; then
    nvidia-smi --query-gpu="$smi_fields" --format=csv -lms 200 > "$out/$name-$tag-smi.csv" 2>&1 &
    smi=$!
  fi
  timeout -k 10 "$limit" "$probe" "$@"
  local rc=$?
  [ -n "$smi" ] && kill "$smi" 2>/dev/null && wait "$smi" 2>/dev/null
  echo "$tag run: exit $rc$( [ "$rc" = 124 ] || [ "$rc" = 137 ] && echo " (time limit $limit s)")"
}

run_probe quick "$quick_limit" -o "$out/$name-quick.pb" --quick
run_probe full "$full_limit" -o "$out/$name.pb"
# A second full run, for the run-to-run spread of the medians ($REPEAT=0 skips it).
if [ "${REPEAT:-1}" != 0 ]; then
  run_probe repeat "$repeat_limit" -o "$out/$name-repeat.pb"
  rm -f "$out/$name-repeat.txt"
fi
ls -la "$out"
