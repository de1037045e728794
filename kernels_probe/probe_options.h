// SPDX-License-Identifier: Apache-2.0
// Command line of clustersim-probe, parsed without CUDA so that it can be unit-tested anywhere.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace clustersim::kernels_probe {

struct ProbeOptions {
  std::string output;               // FILE.pb; the summary goes to FILE.txt
  bool quick = false;               // fewer shapes and sizes, fewer repetitions (a smoke run)
  bool gemm = true;
  bool attention = true;
  bool memory = true;
  bool collectives = true;
  uint64_t max_bytes = uint64_t{1} << 30;  // largest memory-kernel and collective size
  int reps = 20;                    // samples per measurement
  int warmup = 5;                   // launches discarded first
  std::string command_line;
};

constexpr const char* kProbeUsage =
    "usage: clustersim-probe -o FILE.pb [--quick] [--only gemm,attention,memory,collectives]\n"
    "                        [--max-bytes 1GiB] [--reps N] [--warmup N]\n"
    "Measures GEMMs, attention, memory-bound kernels and NCCL collectives on the visible GPUs\n"
    "(CUDA_VISIBLE_DEVICES chooses them) and writes FILE.pb (probe data,\n"
    "calibration/probe_data.proto) and FILE.txt (summary); clustersim calibrate fits a profile.\n"
    "\n"
    "  -o, --output FILE.pb  required; its directory must exist and be writable\n"
    "  --quick               a smoke run: a few shapes, sizes x4 apart, --reps 5 and --warmup 2\n"
    "                        unless given (not for a profile)\n"
    "  --only LIST           only these parts (default all four)\n"
    "  --max-bytes SIZE      largest memory-kernel and collective size, B, KiB, MiB or GiB\n"
    "                        (default 1GiB; calibrate needs bandwidth-bound sizes, 64MiB or more)\n"
    "  --reps N              timed samples per measurement (default 20)\n"
    "  --warmup N            launches discarded first (default 5)\n"
    "  -h, --help            this help\n"
    "Exit codes: 0 measured; 1 a part failed (what was measured is written); 2 bad command line;\n"
    "3 no usable CUDA device (nothing written). kernels_probe/README.md has the details.\n";

// Parses "1GiB", "512MiB", "64KiB", "4096" (bytes). Returns 0 on a malformed or zero size.
uint64_t parse_byte_size(std::string_view text);

// Parses argv. On a bad command line returns false with a message in `error`; `help` is set when
// -h/--help was given. --quick lowers --reps and --warmup to 5 and 2 unless they are given
// (until 2026-12-06 it capped given values too: --reps 50 --quick ran 5).
bool parse_probe_options(int argc, const char* const* argv, ProbeOptions& out, std::string& error,
                         bool& help);

// Why `output` cannot be written (a directory, or its directory missing or not writable), or ""
// when it can: the probe checks it before any measurement (a typo found after the first part,
// with exit 1, cost the run until 2026-12-06).
std::string output_path_problem(const std::string& output);

}  // namespace clustersim::kernels_probe
