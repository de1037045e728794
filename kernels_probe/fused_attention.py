#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Fused attention rate on one GPU, for the profiles' efficiency.attention_fused: the probe has
no fused kernel (none ships with the CUDA toolkit alone), PyTorch has FlashAttention-2 as the
flash backend of scaled_dot_product_attention. Prints CSV on stdout, one row per shape and pass:

    python3 kernels_probe/fused_attention.py > fused_attention.csv

bf16, batch x heads x seq x 128 (head size), causal and not; forward, and forward + backward.
FLOPs as clustersim counts them (workloads/transformer.cc, FlashAttention-2 paper section 4):
forward 4 b h s^2 d, backward 2.5 x forward, causal half of each. Median of 20 timed runs after
5 warm-ups (CUDA events), random inputs.
"""
import statistics

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel


def timed(fn, reps=20, warmup=5):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    return statistics.median(times)


def main():
    dev = torch.device("cuda")
    print(f"# {torch.cuda.get_device_name(0)}, torch {torch.__version__}, CUDA {torch.version.cuda}, SDPA flash backend")
    print("pass,causal,batch,heads,seq,head_dim,median_s,tflops")
    d = 128
    for seq, batch in ((2048, 8), (4096, 4), (8192, 2)):
        for heads in (16, 32):
            for causal in (False, True):
                q, k, v = (torch.randn(batch, heads, seq, d, dtype=torch.bfloat16, device=dev, requires_grad=True)
                           for _ in range(3))
                grad = torch.randn(batch, heads, seq, d, dtype=torch.bfloat16, device=dev)
                fwd_flops = 4.0 * batch * heads * seq * seq * d * (0.5 if causal else 1.0)
                with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                    t_fwd = timed(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal))

                    def both():
                        out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                        out.backward(grad)
                    t_both = timed(both)
                for name, t, flops in (("fwd", t_fwd, fwd_flops), ("fwd+bwd", t_both, 3.5 * fwd_flops)):
                    print(f"{name},{int(causal)},{batch},{heads},{seq},{d},{t:.6e},{flops / t / 1e12:.1f}", flush=True)


if __name__ == "__main__":
    main()
