// SPDX-License-Identifier: Apache-2.0
// `faults`: job-level reliability simulation over days of training (issue 9).
// Plain structs (no yaml-cpp); read_faults fills them from the scenario, validate_faults checks
// them against the rest of the scenario. Keys are documented in scenarios/README.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/error.h"
#include "sim/core/stragglers_config.h"
#include "sim/core/units.h"

namespace clustersim {

class MapReader;
struct ScenarioConfig;

// What a failure does to the job.
enum class FailureKind {
  kCrash,    // the job stops at once; found after recovery.detection (heartbeat)
  kHang,     // the job hangs; found after recovery.hang_detection (collective watchdog)
  kPlanned,  // operator-initiated stop: checkpoint first, no detection, diagnosis or lost work
  kDegrade,  // no stop: one host computes `slowdown` times slower until the straggler is found
};

// What a failure rate is counted per.
enum class FailureUnit { kGpu, kHost, kNic, kJob };

struct FailureComponent {
  std::string name;
  FailureUnit unit = FailureUnit::kGpu;
  double rate_per_day = 0.0;     // failures per unit per day
  FailureKind kind = FailureKind::kCrash;
  bool replace_host = true;      // the host is swapped (a spare, or wait for its repair)
  bool only_while_running = false;  // software: arrives only while training runs
  double slowdown = 1.0;         // kDegrade only: compute time factor of the affected host
  StragglerPhase phase = StragglerPhase::kAll;  // kDegrade only
};

// The unexpected and planned interruptions of Llama 3 405B pre-training (Llama 3 Herd of Models,
// Table 5 and section 3.3.4: 466 in 54 days on 16,384 H100 GPUs), as rates per unit per day:
// count / 54 / units, with 16,384 GPUs, 2,048 hosts and 16,384 NICs (8 per host, assumed).
std::vector<FailureComponent> llama3_components();

// How communicator initialisation grows with the job: t(N) = time x f(N / at_gpus), f = 1 (constant),
// N / at (linear: a central store serialises every rank, as torch.distributed's TCPStore does).
enum class CommInitScaling { kConstant, kLinear };

struct CheckpointConfig {
  std::optional<Time> interval;      // training time between checkpoints; absent: Young/Daly
  std::optional<Bytes> size;         // whole job; absent: 14 bytes per parameter (BF16 weights + FP32 Adam)
  bool async = true;                 // blocking snapshot, then a background write
  Bandwidth write_bandwidth = gbytes_per_s(2000);    // aggregate to storage
  std::optional<Bandwidth> read_bandwidth;           // aggregate from storage; absent: write_bandwidth
  Bandwidth snapshot_bandwidth = gbytes_per_s(25);   // per GPU, device to host memory (async)
  std::optional<Time> blocking;      // absent: shard / snapshot_bandwidth (async) or size / write (sync)
};

struct RecoveryConfig {
  Time detection = Time::s(30);            // heartbeat timeout (crashes)
  Time hang_detection = Time::s(600);      // collective watchdog timeout (hangs)
  Time diagnosis = Time::s(180);           // find and cordon the faulty host
  Time reschedule = Time::s(120);          // restart the job's processes (and swap a host)
  Time comm_init = Time::s(30);            // communicator initialisation at `comm_init_at_gpus`
  int comm_init_at_gpus = 0;               // 0: the job's size
  CommInitScaling comm_init_scaling = CommInitScaling::kConstant;
  std::optional<Time> checkpoint_load;     // absent: checkpoint size / read bandwidth
  std::optional<int> spare_hosts;          // absent: a replacement host is always at hand
  Time repair_time = Time::s(2 * 86400.0); // a failed host returns to the spare pool after this
  Time straggler_detection = Time::s(3600);  // a degraded host is found (then swapped) after this
  // A degraded host slower than healthy by less than this factor is never found (it stays until
  // the window ends): per-host step timers cannot tell it from noise. Assumed: half of the ~10% by
  // which MegaScale's detected slow hosts lagged (arXiv:2402.15627v1 section 6.3).
  double straggler_threshold = 1.05;
};

// The training level that times each cluster state the reliability simulation needs (healthy, and
// each placement of a straggling host): the analytical level in process, or one flow-level
// simulation per state, each in its own worker process.
enum class IterationTimeFidelity { kAnalytical, kFlow };

struct FaultsConfig {
  Time duration = Time::s(30 * 86400.0);  // simulated wall-clock window
  int seeds = 10;                         // independent runs for confidence intervals
  uint64_t seed = 1;                      // first seed; run k uses seed + k
  bool llama3_rates = true;               // `rates: llama3` (default table) or `none`
  double rate_scale = 1.0;                // multiplies every rate
  std::vector<FailureComponent> components;  // `components`: added, or replacing a default by name
  CheckpointConfig checkpoint;
  RecoveryConfig recovery;
  int sweep_points = 21;                  // checkpoint intervals tried around Young/Daly
  std::optional<Time> iteration_time;     // absent: from the training simulation
  std::optional<IterationTimeFidelity> iteration_time_fidelity;  // absent: see iteration_time_fidelity()
};

const char* to_string(FailureKind k);
const char* to_string(FailureUnit u);
const char* to_string(IterationTimeFidelity f);

// `faults.iteration_time_fidelity` of `cfg` (whose `faults` must be set), resolved: the key when
// given, else flow when network.fidelity is flow, else analytical.
IterationTimeFidelity iteration_time_fidelity(const ScenarioConfig& cfg);

// Whether a slow host can come and be found (a degrade component with a rate, slowed by at least
// recovery.straggler_threshold, as the reliability simulation decides): recovery.straggler_detection
// times only those.
bool uses_straggler_detection(const FaultsConfig& f);

// Reads the `faults` mapping strictly (unknown keys are errors). Called by the scenario loader.
void read_faults(MapReader r, FaultsConfig& out);

// Cross-field checks; appends problems to `errors` (see scenario_error in sim/core/scenario.h).
// With faults.checkpoint.size given, includes validate_checkpoint_times.
void validate_faults(const ScenarioConfig& cfg, std::vector<InputError>& errors);

// What a checkpoint moves to or from storage at: `storage` (checkpoint.write_bandwidth or
// read_bandwidth, the storage system's aggregate), but no more than the job's NICs carry together,
// job_nic_bandwidth: hosts (gpus / gpus_per_node, rounded up) x nics_per_node x nic_bandwidth, the
// NICs the scenario gives (a separate front-end network is not modelled). Since 2026-12-06;
// before, an 8-GPU job on the default 8 x 400 Gbps wrote at the 2 TB/s default, 5x its NICs' rate.
Bandwidth job_nic_bandwidth(const ScenarioConfig& cfg);
Bandwidth checkpoint_bandwidth(const ScenarioConfig& cfg, Bandwidth storage);
// Whether the job's NICs, not `storage`, set that rate.
bool checkpoint_nic_bound(const ScenarioConfig& cfg, Bandwidth storage);

// That rate in words for messages, naming what sets it: "write_bandwidth's 2 TB/s", or "the
// job's NICs' 25.6 TB/s (2048 hosts x 1 x 100 Gbps), below read_bandwidth's 100 TB/s" (`key`
// names the storage key).
std::string checkpoint_rate_words(const ScenarioConfig& cfg, Bandwidth storage, const std::string& key);

// Checks the checkpoint times that follow from `size` (the whole job's checkpoint: the key, or
// the size derived from the model, at checkpoint_bandwidth): the write, the load and the blocking stage must each fit in
// faults.duration, and a zero-cost checkpoint needs faults.checkpoint.interval (Young/Daly are
// zero then). Computed in double seconds, so an absurd bandwidth cannot overflow Time.
void validate_checkpoint_times(const ScenarioConfig& cfg, Bytes size, std::vector<InputError>& errors);

}  // namespace clustersim
