// SPDX-License-Identifier: Apache-2.0
// clustersim-probe: measures GEMM, attention, memory and NCCL costs and writes a probe file.
#include <algorithm>
#include <exception>
#include <fstream>
#include <iostream>
#include <string>

#include "kernels_probe/attention_bench.h"
#include "kernels_probe/collective_bench.h"
#include "kernels_probe/cuda_check.h"
#include "kernels_probe/device_info.h"
#include "kernels_probe/gemm_bench.h"
#include "kernels_probe/memory_bench.h"
#include "kernels_probe/probe_options.h"
#include "kernels_probe/probe_record.h"

namespace {

using namespace clustersim::kernels_probe;

// Exit codes: 0 all parts measured, 1 a part failed (what was measured is still written),
// 2 bad command line, 3 no usable CUDA device (nothing measured, no file written).
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;
constexpr int kExitNoDevice = 3;

bool write_file(const std::string& path, const std::string& bytes, bool binary) {
  std::ofstream out(path, binary ? std::ios::binary | std::ios::trunc : std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(out);
}

// Runs one part; a failed CUDA/cuBLAS/NCCL call ends that part only, and is noted in the file.
bool run_part(const char* name, void (*part)(const ProbeOptions&, ProbeRun&),
              const ProbeOptions& options, ProbeRun& run) {
  std::cerr << "clustersim-probe: " << name << "\n";
  try {
    part(options, run);
    return true;
  } catch (const std::exception& e) {
    std::cerr << "clustersim-probe: " << name << " failed: " << e.what() << "\n";
    add_note(run.header, std::string(name) + ": failed: " + e.what());
    return false;
  }
}

}  // namespace

int main(int argc, char** argv) {
  ProbeOptions options;
  std::string error;
  bool help = false;
  if (!parse_probe_options(argc, argv, options, error, help)) {
    std::cerr << "clustersim-probe: " << error << "\n" << kProbeUsage;
    return kExitUsage;
  }
  if (help) {
    std::cout << kProbeUsage;
    return 0;
  }
  if (options.quick) {
    options.reps = std::min(options.reps, 5);
    options.warmup = std::min(options.warmup, 2);
  }

  std::string why;
  const int devices = usable_device_count(why);
  if (devices == 0) {
    std::cerr << "clustersim-probe: no usable CUDA device (" << why
              << "). Run it on a machine with an NVIDIA GPU and its driver; nothing was written.\n";
    return kExitNoDevice;
  }

  ProbeRun run;
  bool ok = true;
  try {
    describe_machine(devices, run.header);
    run.header.command_line = options.command_line;
    for (int d = 1; d < devices; ++d) {
      cudaDeviceProp prop{};
      PROBE_CUDA(cudaGetDeviceProperties(&prop, d));
      if (run.header.gpu_model != prop.name) {
        add_note(run.header, "device " + std::to_string(d) + " is a " + prop.name +
                                 ", not the header's model");
      }
    }
  } catch (const std::exception& e) {
    std::cerr << "clustersim-probe: cannot query the devices: " << e.what() << "\n";
    return kExitFailed;
  }
  std::cerr << "clustersim-probe: " << run.header.gpu_model << " x" << devices << ", sm_"
            << run.header.compute_capability << ", CUDA runtime " << run.header.cuda_runtime_version
            << ", NCCL " << run.header.nccl_version << "\n";

  if (options.gemm) ok &= run_part("gemm", run_gemm_bench, options, run);
  if (options.attention) ok &= run_part("attention", run_attention_bench, options, run);
  if (options.memory) ok &= run_part("memory", run_memory_bench, options, run);
  if (options.collectives) ok &= run_part("collectives", run_collective_bench, options, run);

  std::string summary_path = options.output;
  if (summary_path.size() > 3 && summary_path.compare(summary_path.size() - 3, 3, ".pb") == 0) {
    summary_path.resize(summary_path.size() - 3);
  }
  summary_path += ".txt";
  if (!write_file(options.output, encode_probe_run(run), true) ||
      !write_file(summary_path, format_probe_run(run), false)) {
    std::cerr << "clustersim-probe: cannot write " << options.output << " or " << summary_path << "\n";
    return kExitFailed;
  }
  std::cerr << "clustersim-probe: wrote " << run.records.size() << " measurements to "
            << options.output << " and " << summary_path << "\n";
  if (run.records.empty()) {
    std::cerr << "clustersim-probe: nothing was measured\n";
    return kExitFailed;
  }
  return ok ? 0 : kExitFailed;
}
