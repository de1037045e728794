// SPDX-License-Identifier: Apache-2.0
// network.dcqcn: presets with their sources, strict reading, range and cross-field checks.
#include "sim/core/dcqcn_config.h"

#include <cstdio>
#include <string>

#include "sim/core/config.h"
#include "sim/core/map_reader.h"
#include "sim/core/scenario.h"

namespace clustersim {

DcqcnConfig dcqcn_preset(DcqcnPreset preset) {
  DcqcnConfig c;
  c.preset = preset;
  if (preset == DcqcnPreset::kDcqcnPaper) {
    // DCQCN defaults (Zhu et al., SIGCOMM 2015) as collected in ../shared/reference/dcqcn.yaml:
    // Kmin 5 KB, Kmax 200 KB, Pmax 0.01 and R_AI 40 Mbps, R_HAI 200 Mbps at 40 Gbps; g = 1/256;
    // CNP interval 50 us; alpha update 55 us; rate increase timer 55 us (unverified; the
    // authors' ns-3 sample config uses 60 us); byte counter 10 MB (htsim dcqcn.cpp); F = 5.
    // Buffer: 12 MB, the Broadcom Trident II shared buffer of the paper's testbed switches.
    // Minimum rate: not in the reference; 100 Mbps as in the HPCC-lineage configs.
    return c;
  }
  // HPCC-lineage DCQCN as SimAI configures its ns-3 backend (public SimAI/astra-sim run scripts,
  // secondary source): KMIN_MAP/KMAX_MAP 800/3200 KB and PMAX 0.2 at 400 Gbps, marking on
  // dequeue, RATE_DECREASE_INTERVAL 4 us, ALPHA_RESUME_INTERVAL 1 us, EWMA_GAIN 1/256,
  // RP_TIMER 900 us, FAST_RECOVERY_TIMES 1, RATE_AI 50 Mb/s, RATE_HAI 100 Mb/s, MIN_RATE
  // 100 Mb/s, CLAMP_TARGET_RATE 0 (since 2026-12-07), no byte counter, BUFFER_SIZE 32 MB, ingress dynamic threshold alpha 1/8, payload 1000 B.
  c.kmin = Bytes{800'000};
  c.kmax = Bytes{3'200'000};
  c.pmax = 0.2;
  c.reference_bandwidth = gbps(400);
  c.mark_on = EcnMarkPoint::kDequeue;
  c.alpha_update_interval = Time::us(1);
  c.rate_decrease_interval = Time::us(4);
  c.rate_increase_timer = Time::us(900);
  c.byte_counter = Bytes{0};
  c.fast_recovery_steps = 1;
  c.rate_ai = {50e6 / 8};
  c.rate_hai = {100e6 / 8};
  c.clamp_target_rate = false;  // CLAMP_TARGET_RATE 0
  c.buffer = Bytes{32'000'000};
  c.mtu = Bytes{1000};
  c.resume_offset = Bytes{2000};
  return c;
}

const char* to_string(DcqcnPreset p) {
  return p == DcqcnPreset::kDcqcnPaper ? "dcqcn-paper" : "hpcc-simai";
}

void read_dcqcn(MapReader r, DcqcnConfig& out) {
  DcqcnPreset preset = out.preset;
  if (r.read_enum("preset", preset,
                  {{"dcqcn-paper", DcqcnPreset::kDcqcnPaper}, {"hpcc-simai", DcqcnPreset::kHpccSimai}})) {
    out = dcqcn_preset(preset);
  }
  r.read("kmin", out.kmin);
  r.read("kmax", out.kmax);
  r.read("pmax", out.pmax, Need::kOptional, 0.0, 1.0);
  r.read("reference_bandwidth", out.reference_bandwidth);
  r.read("scale_with_link_speed", out.scale_with_link_speed);
  r.read_enum("mark_on", out.mark_on, {{"enqueue", EcnMarkPoint::kEnqueue}, {"dequeue", EcnMarkPoint::kDequeue}});
  r.read("cnp_interval", out.cnp_interval);
  r.read("g", out.g, Need::kOptional, 0.0, 1.0);
  r.read("initial_alpha", out.initial_alpha, Need::kOptional, 0.0, 1.0);
  r.read("alpha_update_interval", out.alpha_update_interval);
  r.read("rate_decrease_interval", out.rate_decrease_interval);
  r.read("rate_increase_timer", out.rate_increase_timer);
  r.read("byte_counter", out.byte_counter);
  r.read("fast_recovery_steps", out.fast_recovery_steps, Need::kOptional, 0, 1000);
  r.read("rate_ai", out.rate_ai);
  r.read("rate_hai", out.rate_hai);
  r.read("min_rate", out.min_rate);
  r.read("clamp_target_rate", out.clamp_target_rate);
  r.read("pfc", out.pfc);
  r.read("buffer", out.buffer);
  r.read("dynamic_threshold", out.dynamic_threshold, Need::kOptional, 0.0, 1e6);
  Bytes headroom;
  if (r.read("headroom", headroom)) out.headroom = headroom;
  r.read("resume_offset", out.resume_offset);
  r.read("mtu", out.mtu);
  r.read("fluid_step", out.fluid_step);
  r.read("sample_interval", out.sample_interval);
  r.read("traced_flows", out.traced_flows, Need::kOptional, 0, 100'000);
  r.finish();
}

void validate_dcqcn(const ScenarioConfig& cfg, std::vector<InputError>& errors) {
  const DcqcnConfig& d = cfg.network.dcqcn;
  auto fail = [&](const std::string& key, const std::string& message) {
    errors.push_back(scenario_error(cfg, "network.dcqcn." + key, message));
  };
  // In bytes, as given in any unit (KiB here read as a mistake where KB was written).
  if (d.kmax < d.kmin) {
    fail("kmax", "must be at least kmin (" + std::to_string(d.kmin.n) + " B); got " + std::to_string(d.kmax.n) + " B");
  }
  if (d.pmax <= 0) fail("pmax", "must be above 0 (marking probability at kmax)");
  if (d.reference_bandwidth.bytes_per_s <= 0) fail("reference_bandwidth", "must be above 0");
  if (d.g <= 0) fail("g", "must be above 0 (alpha gain, 1/256 in the paper)");
  if (d.cnp_interval <= Time::zero()) fail("cnp_interval", "must be above 0");
  if (d.alpha_update_interval <= Time::zero()) fail("alpha_update_interval", "must be above 0");
  if (d.rate_increase_timer <= Time::zero()) fail("rate_increase_timer", "must be above 0");
  if (d.rate_decrease_interval < Time::zero()) fail("rate_decrease_interval", "must not be negative");
  if (d.rate_ai.bytes_per_s <= 0) fail("rate_ai", "must be above 0");
  if (d.rate_hai.bytes_per_s <= 0) fail("rate_hai", "must be above 0");
  if (d.min_rate.bytes_per_s <= 0) fail("min_rate", "must be above 0");
  const bool used = cfg.network.fidelity == Fidelity::kFlowDcqcn || cfg.network.fidelity == Fidelity::kPacket;
  if (used && d.min_rate.bytes_per_s > cfg.cluster.nic_bandwidth.bytes_per_s) {
    fail("min_rate", "must not exceed cluster.nic_bandwidth (" + to_string(cfg.cluster.nic_bandwidth) + ")");
  }
  if (d.mtu.n < 64 || d.mtu.n > 65'536) fail("mtu", "must be between 64B and 64KiB; got " + to_string(d.mtu));
  if (d.buffer.n < 4 * d.mtu.n) fail("buffer", "must hold at least 4 packets of mtu (" + to_string(d.mtu) + ")");
  // Below 1/64 the fluid level's pause and resume no longer make progress (0.0005: no end).
  if (d.dynamic_threshold < 1.0 / 64 || d.dynamic_threshold > 64) {
    char got[32];
    std::snprintf(got, sizeof got, "%g", d.dynamic_threshold);
    fail("dynamic_threshold", std::string("must be between 1/64 (0.015625) and 64; got ") + got);
  }
  // XON needs the ingress counter to fall this far below XOFF, whose threshold is at most
  // dynamic_threshold x buffer (an empty buffer): at or above it a paused port never resumes.
  if (d.pfc && used && d.resume_offset.n * 4.0 > d.dynamic_threshold * static_cast<double>(d.buffer.n)) {
    fail("resume_offset", "must be at most a quarter of dynamic_threshold x buffer (" +
                              to_string(Bytes{static_cast<int64_t>(d.dynamic_threshold * d.buffer.n / 4)}) +
                              "), or a paused port may never resume; got " + to_string(d.resume_offset));
  }
  // flow+dcqcn has no loss recovery: drops would cost nothing. Lossy RoCE (go-back-N
  // retransmissions) is simulated at the packet level.
  if (!d.pfc && cfg.network.fidelity == Fidelity::kFlowDcqcn) {
    fail("pfc", "false (lossy) is simulated at network.fidelity: packet, which retransmits what it drops; "
                "flow+dcqcn has no loss recovery");
  }
  if (d.headroom && d.headroom->n < 0) fail("headroom", "must not be negative");
  // Past tens of microseconds a step overshoots the queues it integrates (100us finished an incast
  // faster than its bound, with PFC paused for good).
  if (d.fluid_step < Time::ns(10) || d.fluid_step > Time::us(20)) {
    fail("fluid_step", "must be between 10ns and 20us; got " + to_string(d.fluid_step));
  }
  if (d.sample_interval < Time::ns(100)) fail("sample_interval", "must be at least 100ns");
}

}  // namespace clustersim
