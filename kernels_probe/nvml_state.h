// SPDX-License-Identifier: Apache-2.0
// GPU power and clock state from NVML, loaded at run time (the probe must start without it).
#pragma once

#include <string>
#include <vector>

namespace clustersim::kernels_probe {

// One "; "-separated entry per device, named by its PCI bus id (cudaDeviceGetPCIBusId, e.g.
// "0000:19:00.0"). `full`: enforced power limit, persistence mode, current and maximum SM clock,
// memory clock, temperature, power draw and the active clock-event (throttle) reasons bitmask;
// otherwise only the values that change during a run (SM clock, power, temperature, reasons).
// "" when libnvidia-ml.so.1 cannot be loaded; "?" for a value NVML does not give.
std::string nvml_device_state(const std::vector<std::string>& pci_bus_ids, bool full);

}  // namespace clustersim::kernels_probe
