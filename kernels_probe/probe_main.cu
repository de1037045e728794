// SPDX-License-Identifier: Apache-2.0
// clustersim-probe: measures GEMM, attention, memory and NCCL costs and writes a probe file.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "kernels_probe/attention_bench.h"
#include "kernels_probe/collective_bench.h"
#include "kernels_probe/cuda_check.h"
#include "kernels_probe/device_info.h"
#include "kernels_probe/gemm_bench.h"
#include "kernels_probe/memory_bench.h"
#include "kernels_probe/probe_options.h"
#include "kernels_probe/probe_record.h"
#include "kernels_probe/timing.h"

namespace {

using namespace clustersim::kernels_probe;

// Exit codes: 0 all parts measured, 1 a part failed (what was measured is still written),
// 2 bad command line, 3 no usable CUDA device (nothing measured, no file written).
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;
constexpr int kExitNoDevice = 3;
// Seconds of GEMMs before the first part (preheat_gpu).
constexpr double kPreheatSeconds = 1.5;

// Writes `bytes` to `path` + ".tmp", then renames it over `path`: a reader, or a run killed
// half-way through the write, sees the previous complete file or the new one, never a cut one.
bool write_file(const std::string& path, const std::string& bytes, bool binary) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, binary ? std::ios::binary | std::ios::trunc : std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    if (!out) return false;
  }
  return std::rename(tmp.c_str(), path.c_str()) == 0;
}

// FILE.pb -> FILE.txt (any other name: NAME.txt beside it).
std::string summary_path_for(std::string output) {
  if (output.size() > 3 && output.compare(output.size() - 3, 3, ".pb") == 0) output.resize(output.size() - 3);
  return output + ".txt";
}

// Writes the probe file and its summary as they stand: called after every part, so that a run
// killed later (time limit, hang, crash) leaves the parts already measured.
bool write_outputs(const ProbeOptions& options, const ProbeRun& run) {
  const std::string summary_path = summary_path_for(options.output);
  if (!write_file(options.output, encode_probe_run(run), true) ||
      !write_file(summary_path, format_probe_run(run), false)) {
    std::cerr << "clustersim-probe: cannot write " << options.output << " or " << summary_path << "\n";
    return false;
  }
  return true;
}

enum class PartResult { kOk, kFailed, kTimedOut };

// Runs one part; a failed CUDA/cuBLAS/NCCL call ends that part only, and is noted in the file.
// A timeout is reported apart: the device may be wedged, and no further part should start.
PartResult run_part(const char* name, void (*part)(const ProbeOptions&, ProbeRun&),
                    const ProbeOptions& options, ProbeRun& run) {
  std::cerr << "clustersim-probe: " << name << "\n";
  try {
    part(options, run);
    return PartResult::kOk;
  } catch (const ProbeTimeout& e) {
    std::cerr << "clustersim-probe: " << name << " timed out: " << e.what() << "\n";
    add_note(run.header, std::string(name) + ": timed out, later parts not run: " + e.what());
    return PartResult::kTimedOut;
  } catch (const std::exception& e) {
    std::cerr << "clustersim-probe: " << name << " failed: " << e.what() << "\n";
    add_note(run.header, std::string(name) + ": failed: " + e.what());
    return PartResult::kFailed;
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
  if (const std::string problem = output_path_problem(options.output); !problem.empty()) {
    std::cerr << "clustersim-probe: " << problem << "\n";
    return kExitUsage;
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

  struct Part {
    bool wanted;
    const char* name;
    void (*run)(const ProbeOptions&, ProbeRun&);
  };
  const Part parts[] = {{options.gemm, "gemm", run_gemm_bench},
                        {options.attention, "attention", run_attention_bench},
                        {options.memory, "memory", run_memory_bench},
                        {options.collectives, "collectives", run_collective_bench}};
  bool timed_out = false;
  std::vector<std::string> bus_ids;
  try {
    bus_ids = pci_bus_ids(devices);
    if (options.gemm || options.attention || options.memory) {
      preheat_gpu(kPreheatSeconds);
      add_note(run.header, "preheat: " + std::to_string(kPreheatSeconds).substr(0, 3) +
                               " s of 8192^3 bf16 GEMMs on device 0 before the first part");
    }
  } catch (const ProbeTimeout& e) {
    add_note(run.header, std::string("preheat: timed out, no part run: ") + e.what());
    timed_out = true;
    write_outputs(options, run);
  } catch (const std::exception& e) {
    add_note(run.header, std::string("preheat: failed: ") + e.what());
  }
  for (const Part& p : parts) {
    if (!p.wanted || timed_out) continue;
    const PartResult result = run_part(p.name, p.run, options, run);
    ok = ok && result == PartResult::kOk;
    // The clocks the part left the GPU at (boost, or held down by power or temperature).
    if (const std::string state = device_state(bus_ids, false); !state.empty()) {
      add_note(run.header, std::string("gpu state after ") + p.name + ": " + state);
    }
    if (!write_outputs(options, run)) return kExitFailed;
    if (result == PartResult::kTimedOut) {
      timed_out = true;
      break;
    }
  }
  std::cerr << "clustersim-probe: wrote " << run.records.size() << " measurements to "
            << options.output << " and " << summary_path_for(options.output) << "\n";
  if (timed_out) {
    // Skip static destructors and CUDA/NCCL teardown: they would wait for the hung work.
    std::cerr.flush();
    std::fflush(nullptr);
    std::_Exit(kExitFailed);
  }
  if (run.records.empty()) {
    std::cerr << "clustersim-probe: nothing was measured\n";
    return kExitFailed;
  }
  return ok ? 0 : kExitFailed;
}
