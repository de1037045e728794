// SPDX-License-Identifier: Apache-2.0
// Queries device properties, driver and library versions, clocks, host name and the date.
#include "kernels_probe/device_info.h"

#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>

#include "kernels_probe/cuda_check.h"
#include "kernels_probe/nvml_state.h"

namespace clustersim::kernels_probe {
namespace {

// The kernel driver version from /proc/driver/nvidia/version's first line; "" when absent.
std::string kernel_driver_version() {
  std::ifstream in("/proc/driver/nvidia/version");
  std::string line;
  if (!in || !std::getline(in, line)) return "";
  return kernel_driver_version_from(line);
}

std::string utc_now_iso8601() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi prints it.
std::string uuid_string(const cudaUUID_t& uuid) {
  std::string out = "GPU-";
  char hex[3];
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned char>(uuid.bytes[i]));
    out += hex;
  }
  return out;
}

// CUDA_VISIBLE_DEVICES and every NCCL_* variable, "NAME=value" separated by spaces.
std::string probe_environment() {
  std::string out;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string var = *e;
    if (var.rfind("NCCL_", 0) == 0 || var.rfind("CUDA_VISIBLE_DEVICES=", 0) == 0) {
      out += (out.empty() ? "" : " ") + var;
    }
  }
  return out.empty() ? "none set" : out;
}

uint32_t attribute(cudaDeviceAttr attr, int device) {
  int v = 0;
  PROBE_CUDA(cudaDeviceGetAttribute(&v, attr, device));
  return v > 0 ? static_cast<uint32_t>(v) : 0;
}

}  // namespace

int usable_device_count(std::string& why) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    why = std::string("cudaGetDeviceCount: ") + cudaGetErrorString(err);
    if (err == cudaErrorInsufficientDriver) {
      why += "; either there is no NVIDIA driver, or it is older than the CUDA runtime this probe "
             "was built with (" + std::to_string(CUDART_VERSION) + "): rebuild it with the machine's "
             "own CUDA toolkit";
    }
    cudaGetLastError();  // clear the error so that later calls start clean
    return 0;
  }
  if (count == 0) why = "the driver reports no CUDA devices";
  return count;
}

void describe_machine(int gpu_count, Header& h) {
  cudaDeviceProp prop{};
  PROBE_CUDA(cudaGetDeviceProperties(&prop, 0));
  h.gpu_model = prop.name;
  h.gpu_count = static_cast<uint32_t>(gpu_count);
  h.driver_version = kernel_driver_version();
  int v = 0;
  PROBE_CUDA(cudaDriverGetVersion(&v));
  h.cuda_driver_version = static_cast<uint32_t>(v);
  PROBE_CUDA(cudaRuntimeGetVersion(&v));
  h.cuda_runtime_version = static_cast<uint32_t>(v);
#if CLUSTERSIM_PROBE_HAVE_NCCL
  PROBE_NCCL(ncclGetVersion(&v));
  h.nccl_version = static_cast<uint32_t>(v);
#endif
  h.cublas_version = static_cast<uint32_t>(cublasLtGetVersion());
  h.sm_count = static_cast<uint32_t>(prop.multiProcessorCount);
  h.compute_capability = static_cast<uint32_t>(prop.major * 10 + prop.minor);
  // cudaDeviceProp lost its clock fields in CUDA 13; the attributes remain (kHz).
  h.sm_clock_mhz = attribute(cudaDevAttrClockRate, 0) / 1000;
  h.memory_clock_mhz = attribute(cudaDevAttrMemoryClockRate, 0) / 1000;
  h.memory_bus_width_bits = attribute(cudaDevAttrGlobalMemoryBusWidth, 0);
  h.memory_bytes = prop.totalGlobalMem;
  h.l2_cache_bytes = attribute(cudaDevAttrL2CacheSize, 0);
  h.date = utc_now_iso8601();
  h.host = host_name();
  h.probe_version = CLUSTERSIM_PROBE_VERSION;
  for (int d = 0; d < gpu_count; ++d) {
    cudaDeviceProp p{};
    PROBE_CUDA(cudaGetDeviceProperties(&p, d));
    char bus[64] = {};
    PROBE_CUDA(cudaDeviceGetPCIBusId(bus, sizeof bus, d));
    add_note(h, "device " + std::to_string(d) + ": " + uuid_string(p.uuid) + ", PCI " + bus + ", ECC " +
                    (p.ECCEnabled ? "on" : "off"));
  }
  add_note(h, "environment: " + probe_environment());
  // sm_clock_mhz above is the maximum (boost) clock; what the GPU runs at depends on its power
  // limit, temperature and load, so the state at the start goes into the notes.
  const std::string state = device_state(pci_bus_ids(gpu_count), true);
  add_note(h, "gpu state at start (NVML): " + (state.empty() ? std::string("NVML not available") : state));
}

std::vector<std::string> pci_bus_ids(int gpu_count) {
  std::vector<std::string> out;
  for (int d = 0; d < gpu_count; ++d) {
    char bus[64] = {};
    PROBE_CUDA(cudaDeviceGetPCIBusId(bus, sizeof bus, d));
    out.emplace_back(bus);
  }
  return out;
}

std::string device_state(const std::vector<std::string>& bus_ids, bool full) {
  return nvml_device_state(bus_ids, full);
}

}  // namespace clustersim::kernels_probe
