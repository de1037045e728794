// SPDX-License-Identifier: Apache-2.0
// `network.dcqcn`: congestion-control (DCQCN, ECN, PFC) parameters for the flow+dcqcn and packet levels.
// Plain structs (no yaml-cpp); read_dcqcn fills them from the scenario, validate_dcqcn checks
// them against the rest of the scenario. Keys are documented in scenarios/README.md.
#pragma once

#include <optional>
#include <vector>

#include "sim/core/error.h"
#include "sim/core/units.h"

namespace clustersim {

class MapReader;
struct ScenarioConfig;

// Two parameter sets; every field below can be overridden after the preset is applied.
//   kDcqcnPaper  Zhu et al., SIGCOMM 2015 defaults at 40 Gbps (values and sources in
//                ../shared/reference/dcqcn.yaml, copied with their source into dcqcn_config.cc)
//   kHpccSimai   the HPCC-lineage ns-3 implementation as configured by SimAI: RED with
//                Kmin/Kmax in hundreds of KB and Pmax 0.2, rate decrease checked every 4 us,
//                one fast-recovery step, 50/100 Mbps additive/hyper steps on a 900 us timer
enum class DcqcnPreset { kDcqcnPaper, kHpccSimai };
// Where RED/ECN marks a packet: as it joins the egress queue (paper) or as it leaves (HPCC).
enum class EcnMarkPoint { kEnqueue, kDequeue };

struct DcqcnConfig {
  DcqcnPreset preset = DcqcnPreset::kDcqcnPaper;

  // RED/ECN at switch egress queues: mark with probability 0 below kmin, rising linearly to pmax
  // at kmax, 1 above. kmin/kmax are given for a link of `reference_bandwidth`; with
  // scale_with_link_speed they (and rate_ai, rate_hai) scale linearly with the link's speed.
  Bytes kmin{5'000};
  Bytes kmax{200'000};
  double pmax = 0.01;
  Bandwidth reference_bandwidth = gbps(40);
  bool scale_with_link_speed = true;
  EcnMarkPoint mark_on = EcnMarkPoint::kEnqueue;

  // Notification point (receiver): at most one CNP per flow per interval.
  Time cnp_interval = Time::us(50);

  // Reaction point (sender), per queue pair.
  double g = 1.0 / 256;                       // alpha gain
  double initial_alpha = 1.0;
  Time alpha_update_interval = Time::us(55);  // alpha decays by (1-g) per interval without a cut
  Time rate_decrease_interval = Time::zero(); // 0: cut on every CNP; > 0: at most one cut per interval
  Time rate_increase_timer = Time::us(55);
  Bytes byte_counter{10'000'000};             // 0 disables the byte counter
  int fast_recovery_steps = 5;                // F
  Bandwidth rate_ai = {40e6 / 8};             // additive step at reference_bandwidth (40 Mbps)
  Bandwidth rate_hai = {200e6 / 8};           // hyper step at reference_bandwidth (200 Mbps)
  Bandwidth min_rate = {100e6 / 8};           // floor of the current rate (100 Mbps)
  // On a cut, set the target rate to the current rate (the paper's Rt = Rc) always (true), or
  // only where a timer increase came since the last cut (false: HPCC's ns-3 RdmaHw
  // CheckRateDecreaseMlx with ClampTargetRate off, as SimAI's configs run it, CLAMP_TARGET_RATE 0),
  // so that CNPs in a row while a queue drains do not ratchet the target down with the rate.
  bool clamp_target_rate = true;

  // Switch buffer and PFC (one lossless priority).
  bool pfc = true;
  Bytes buffer{12'000'000};          // shared buffer per switch
  double dynamic_threshold = 1.0 / 8;  // PFC XOFF (or, without PFC, tail drop) when an ingress
                                       // (egress) counter exceeds alpha x free shared buffer
  std::optional<Bytes> headroom;     // per ingress port; default 2 x (bandwidth x hop delay) + 2 MTU
  Bytes resume_offset{2 * 4096};     // XON once the ingress counter is this far below XOFF
  Bytes mtu{4096};                   // payload bytes per packet (the last packet may be shorter)

  // flow+dcqcn stepping and observability (both levels).
  Time fluid_step = Time::us(1);      // fluid queue/rate integration step while congested
  Time sample_interval = Time::us(10);  // queue and rate time-series sampling
  int traced_flows = 8;               // sub-flows whose rate is recorded (the first ones started)
};

// The preset's values (every other field at its DcqcnConfig default).
DcqcnConfig dcqcn_preset(DcqcnPreset preset);
const char* to_string(DcqcnPreset p);

// Reads the `network.dcqcn` mapping strictly (unknown keys are errors): `preset` first, then
// every other key overrides the preset's value. Called by the scenario loader.
void read_dcqcn(MapReader r, DcqcnConfig& out);

// Cross-field checks; appends problems to `errors` (see scenario_error in sim/core/scenario.h).
void validate_dcqcn(const ScenarioConfig& cfg, std::vector<InputError>& errors);

}  // namespace clustersim
