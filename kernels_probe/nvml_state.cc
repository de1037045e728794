// SPDX-License-Identifier: Apache-2.0
// NVML through dlopen: linking libnvidia-ml would stop the probe from loading on a machine without
// the driver, where it must exit 3 ("no device") instead. The few entry points used are declared
// here with NVML's stable C ABI (nvml.h is not in every CUDA toolkit).
#include "kernels_probe/nvml_state.h"

#include <dlfcn.h>

#include <cstdio>
#include <string>

namespace clustersim::kernels_probe {
namespace {

using NvmlDevice = struct NvmlDeviceOpaque*;
constexpr int kNvmlSuccess = 0;
constexpr int kClockSm = 1;           // NVML_CLOCK_SM
constexpr int kClockMem = 2;          // NVML_CLOCK_MEM
constexpr int kTemperatureGpu = 0;    // NVML_TEMPERATURE_GPU

struct Nvml {
  void* lib = nullptr;
  int (*init)() = nullptr;
  int (*shutdown)() = nullptr;
  int (*by_pci)(const char*, NvmlDevice*) = nullptr;
  int (*power_limit)(NvmlDevice, unsigned*) = nullptr;       // mW
  int (*power_usage)(NvmlDevice, unsigned*) = nullptr;       // mW
  int (*clock)(NvmlDevice, int, unsigned*) = nullptr;        // MHz
  int (*max_clock)(NvmlDevice, int, unsigned*) = nullptr;    // MHz
  int (*temperature)(NvmlDevice, int, unsigned*) = nullptr;  // C
  int (*persistence)(NvmlDevice, int*) = nullptr;            // 1 enabled
  int (*reasons)(NvmlDevice, unsigned long long*) = nullptr;

  template <typename F>
  void load(F& f, const char* name) {
    f = reinterpret_cast<F>(dlsym(lib, name));
  }
  bool open() {
    lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) return false;
    load(init, "nvmlInit_v2");
    load(shutdown, "nvmlShutdown");
    load(by_pci, "nvmlDeviceGetHandleByPciBusId_v2");
    load(power_limit, "nvmlDeviceGetEnforcedPowerLimit");
    load(power_usage, "nvmlDeviceGetPowerUsage");
    load(clock, "nvmlDeviceGetClockInfo");
    load(max_clock, "nvmlDeviceGetMaxClockInfo");
    load(temperature, "nvmlDeviceGetTemperature");
    load(persistence, "nvmlDeviceGetPersistenceMode");
    load(reasons, "nvmlDeviceGetCurrentClocksEventReasons");
    if (reasons == nullptr) load(reasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
    return init != nullptr && shutdown != nullptr && by_pci != nullptr && init() == kNvmlSuccess;
  }
  ~Nvml() {
    if (lib == nullptr) return;
    if (shutdown != nullptr) shutdown();
    dlclose(lib);
  }
};

// "name value unit" when the call exists and succeeds, "name ?" otherwise.
template <typename F, typename... Args>
std::string value(const char* name, F f, double scale, const char* unit, NvmlDevice d, Args... args) {
  unsigned v = 0;
  if (f == nullptr || f(d, args..., &v) != kNvmlSuccess) return std::string(name) + " ?";
  char buf[96];
  std::snprintf(buf, sizeof buf, "%s %.0f%s", name, v * scale, unit);
  return buf;
}

}  // namespace

std::string nvml_device_state(const std::vector<std::string>& pci_bus_ids, bool full) {
  Nvml nvml;
  if (!nvml.open()) return "";
  std::string out;
  for (const std::string& bus : pci_bus_ids) {
    if (!out.empty()) out += "; ";
    out += bus + ":";
    NvmlDevice d = nullptr;
    if (nvml.by_pci(bus.c_str(), &d) != kNvmlSuccess) {
      out += " not found by NVML";
      continue;
    }
    // Appended piece by piece (GCC 12 warns, wrongly, on " " + std::string temporaries here).
    const auto append = [&out](const std::string& piece, const char* tail) {
      out += ' ';
      out += piece;
      out += tail;
    };
    if (full) {
      append(value("power limit", nvml.power_limit, 1e-3, " W", d), ",");
      int persistent = -1;
      const bool known = nvml.persistence != nullptr && nvml.persistence(d, &persistent) == kNvmlSuccess;
      append(std::string("persistence ") + (!known ? "?" : persistent == 1 ? "on" : "off"), ",");
    }
    append(value("SM clock", nvml.clock, 1, " MHz", d, kClockSm), "");
    if (full) {
      append(value("of max", nvml.max_clock, 1, " MHz", d, kClockSm), ",");
      append(value("memory clock", nvml.clock, 1, " MHz", d, kClockMem), "");
    }
    out += ", " + value("power", nvml.power_usage, 1e-3, " W", d);
    out += ", " + value("temperature", nvml.temperature, 1, " C", d, kTemperatureGpu);
    unsigned long long reasons = 0;
    if (nvml.reasons != nullptr && nvml.reasons(d, &reasons) == kNvmlSuccess) {
      char buf[64];
      std::snprintf(buf, sizeof buf, ", clock event reasons 0x%llx", reasons);
      out += buf;
    }
  }
  return out;
}

}  // namespace clustersim::kernels_probe
