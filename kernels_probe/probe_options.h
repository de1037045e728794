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
    "and writes FILE.pb (probe data, calibration/probe_data.proto) and FILE.txt (summary).\n";

// Parses "1GiB", "512MiB", "64KiB", "4096" (bytes). Returns 0 on a malformed or zero size.
uint64_t parse_byte_size(std::string_view text);

// Parses argv. On a bad command line returns false with a message in `error`; `help` is set when
// -h/--help was given.
bool parse_probe_options(int argc, const char* const* argv, ProbeOptions& out, std::string& error,
                         bool& help);

}  // namespace clustersim::kernels_probe
