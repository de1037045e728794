#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Sustained GEMM rate on one GPU: the probe's kernels are isolated (20 samples after 5 warm-ups at
the top clock); a training step keeps the GPU busy for minutes at its power limit. This runs one
bf16 GEMM back to back for SECONDS and prints, about once a second, the rate it reached in that
second, as CSV on stdout; log the clocks and power beside it with nvidia-smi (which, run from
this loop, would leave the GPU idle while it answers):

    nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv -lms 1000 > smi.csv &
    python3 kernels_probe/sustained_gemm.py [SECONDS] [SIZE] > sustained.csv; kill %1

Needs PyTorch with CUDA (the GEMM is torch.matmul, i.e. cuBLAS, as in the probe).
Defaults: 60 s, 8192 x 8192 x 8192. Random operands (all-zero ones draw less power).
"""
import sys
import time

import torch


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 60.0
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 8192
    dev = torch.device("cuda")
    a = torch.randn(n, n, dtype=torch.bfloat16, device=dev)
    b = torch.randn(n, n, dtype=torch.bfloat16, device=dev)
    c = torch.empty(n, n, dtype=torch.bfloat16, device=dev)
    flops = 2.0 * n * n * n
    for _ in range(5):
        torch.matmul(a, b, out=c)
    torch.cuda.synchronize()
    print(f"# {torch.cuda.get_device_name(0)}, torch {torch.__version__}, CUDA {torch.version.cuda}, "
          f"bf16 GEMM {n}x{n}x{n}, {seconds:.0f} s")
    print("t_s,tflops")
    start = time.time()
    while time.time() - start < seconds:
        t0 = time.time()
        count = 0
        while time.time() - t0 < 1.0:
            for _ in range(20):
                torch.matmul(a, b, out=c)
            count += 20
            torch.cuda.synchronize()
        dt = time.time() - t0
        print(f"{time.time() - start:.1f},{flops * count / dt / 1e12:.1f}", flush=True)


if __name__ == "__main__":
    main()
