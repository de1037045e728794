// SPDX-License-Identifier: Apache-2.0
// What the probe records about the machine: GPU model and count, versions, clocks, date, host.
#pragma once

#include <string>
#include <vector>

#include "kernels_probe/probe_record.h"

namespace clustersim::kernels_probe {

// Number of usable CUDA devices; 0 with a reason in `why` when there are none or the driver is
// missing (never throws: this is the check that lets the probe fail cleanly on a CPU machine).
int usable_device_count(std::string& why);

// Fills everything in `header` except command_line and notes from device 0 and the libraries.
// `gpu_count` devices will be used. Throws ProbeError when a CUDA call fails.
void describe_machine(int gpu_count, Header& header);

// The PCI bus ids ("0000:19:00.0") of the first `gpu_count` devices. Throws ProbeError.
std::vector<std::string> pci_bus_ids(int gpu_count);

// The devices' power and clock state now, from NVML (nvml_state.h): `full` with the power limit,
// persistence mode and maximum clocks. "" when NVML is not on the machine.
std::string device_state(const std::vector<std::string>& pci_bus_ids, bool full);

}  // namespace clustersim::kernels_probe
