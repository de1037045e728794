// SPDX-License-Identifier: Apache-2.0
// Job-level reliability over days of training: a seeded discrete-event simulation of failure
// arrivals, detection, diagnosis, restart, lost work and checkpoints, giving ETTR and the time
// lost per cause; plus confidence intervals over seeds and the checkpoint-interval optimum.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/faults_config.h"
#include "sim/core/units.h"

namespace clustersim::engine {

// Where wall-clock time that did not produce kept training progress went.
enum class LossCause {
  kCheckpoint,      // blocking checkpoint stages (and the checkpoint before a planned stop)
  kLostWork,        // progress since the last durable checkpoint, discarded at a failure
  kDetection,       // failure to detection (heartbeat or watchdog timeout)
  kDiagnosis,       // finding the faulty host
  kReschedule,      // restarting processes, swapping hosts
  kRepairWait,      // no spare host: waiting for a repaired one
  kCommInit,        // communicator initialisation
  kCheckpointLoad,  // reading the checkpoint back
  kDegraded,        // running slower because of a straggling host
};
inline constexpr int kLossCauses = 9;
const char* to_string(LossCause c);

// One failure source of the whole job, resolved.
struct JobComponent {
  FailureComponent spec;
  double rate_per_s = 0;               // whole job: per-unit rate x units
  std::vector<double> degraded_speed;  // kDegrade: healthy / degraded iteration time, one entry
                                       // per equally likely placement (e.g. per pipeline stage)
};

// Everything the simulation needs, with defaults already resolved (see faults_report.cc).
struct ReliabilityInputs {
  Time duration;
  std::vector<JobComponent> components;
  Time checkpoint_interval;   // training time between checkpoints
  Time checkpoint_blocking;   // training stalls this long per checkpoint
  Time checkpoint_async;      // then the write continues this long in the background (0: sync)
  // The healthy iteration: a checkpoint holds whole iterations, the part of one under way stays
  // at risk (0: progress is fluid, every second of it saved).
  Time iteration;
  Time detection;
  Time hang_detection;
  Time diagnosis;
  Time reschedule;
  Time comm_init;
  Time checkpoint_load;
  std::optional<int> spare_hosts;  // absent: a replacement is always at hand
  int job_hosts = 0;               // hosts the job runs on (0: not counted; host failures at full rate)
  Time repair_time;
  Time straggler_detection;
  double straggler_threshold = 1.0;  // degrade components with a smaller slowdown are never found
};

struct ReliabilityRun {
  Time useful;                                  // kept training progress, at healthy speed
  std::array<Time, kLossCauses> lost{};         // useful + sum(lost) == duration
  std::vector<int> interruptions_by_component;  // job stops, indexed like inputs.components
  std::vector<Time> lost_by_component;          // downtime + lost work + degraded time they caused
  int interruptions = 0;    // job stops (crashes, hangs, planned stops, straggler swaps, failed restarts)
  int failures = 0;         // arrivals that affected the job (also those absorbed during a recovery)
  int checkpoints = 0;      // durable checkpoints
  Time max_lost_work;       // the largest single loss of progress
  Time downtime;            // sum of all recovery phases
  int hosts_repaired = 0;   // hosts sent to repair (with spare_hosts; each away repair_time)
  double ettr(Time duration) const { return useful / duration; }
};

// Simulates one window with one seed (std::mt19937_64 with our own uniform and exponential
// transforms, so a seed gives the same run on every platform with an IEEE libm).
ReliabilityRun simulate_reliability(const ReliabilityInputs& in, uint64_t seed);

// Mean time between job-stopping unexpected failures (crashes and hangs) while running, in
// seconds; infinite when no crash or hang component has a rate (it may exceed any window: the
// optimum interval still follows from it).
double mean_time_between_failures_s(const ReliabilityInputs& in);

// Young's first-order optimum checkpoint interval, sqrt(2 delta M) (J. W. Young, "A first order
// approximation to the optimum checkpoint interval", CACM 17(9), 1974), and Daly's higher-order
// one, sqrt(2 delta M) [1 + sqrt(delta / 2M) / 3 + delta / 18M] - delta for delta < 2M (J. T. Daly,
// FGCS 22(3), 2006, eq. 37), with delta the checkpoint cost and M the MTBF.
// In seconds, as doubles: with rare failures they may exceed any window (and simulated time).
double young_interval_s(Time checkpoint_cost, double mtbf_s);
double daly_interval_s(Time checkpoint_cost, double mtbf_s);
// Whether any crash or hang component has a rate; else there is no Young/Daly optimum (a longer
// interval is always better).
bool has_failures(const ReliabilityInputs& in);

// Hosts the job sends to repair per second when a spare is always at hand: crashes and hangs that
// replace their host, and slow hosts the straggler detection finds (degrade components at or above
// its threshold). A pool that runs dry sends fewer, since slow hosts are found only while the job
// runs and wait for a spare, so the hosts a run sent understate the need (2026-12-06 review: 2,048
// hosts each slowing 0.01 a day on 64 spares sent 21.7 a day against 26.4 arriving, and the
// spares advised from that still ran dry).
double hosts_to_repair_per_s(const ReliabilityInputs& in);

// Mean and 95% confidence half-width (Student t over n - 1 degrees of freedom; 0 when n < 2).
struct MeanCi {
  double mean = 0;
  double half_width = 0;
};
MeanCi mean_ci(const std::vector<double>& samples);

// The interval at which checkpoints are taken when `interval` is asked for: due after that much
// training, a checkpoint waits for the iteration under way to end, so it comes every whole number
// of iterations, ceil(interval / iteration) of them (the interval itself without an iteration time).
Time checkpoint_interval_taken(Time interval, Time iteration);

// The shortest checkpoint interval the study simulates: one healthy iteration (a checkpoint cannot
// come more often), and at least 1 s, so that a run's event count (about duration / interval)
// stays bounded whatever the checkpoint cost.
Time checkpoint_interval_floor(Time iteration);

// ETTR over `seeds` runs (seeds seed, seed + 1, ...) for each checkpoint interval in a geometric
// grid from center / 4 to center x 4, every interval raised to `floor` (points that collapse onto
// the floor are tried once) and cut at the window, each taken as the run takes it (a whole number
// of iterations, checkpoint_interval_taken; the same interval taken twice is tried once). When the job can fail and the best grid point
// is at the grid's end (not at the floor or the window), the grid goes on a step at a time that
// way, up to points - 1 more steps (another factor 16), until the best is inside it. Inside, the
// optimum is near the vertex of the parabola through the best grid point and its neighbours (in
// log interval): the two whole-iteration intervals around the vertex are simulated too, and the
// best interval simulated is the optimum, its ETTR a simulated one (until 2026-12-06 the vertex
// and the parabola's value there were reported: with 100 s iterations an interval no run takes,
// 236 s, and an ETTR above every simulated one). The run's own interval (in.checkpoint_interval,
// as the run takes it) is simulated too, and is the optimum where it beats them all, so the best
// is never worse than the run (since 2026-12-06). `best_at` says when it is an edge. The same seeds
// for every interval (common random numbers: failure arrivals do not depend on the interval) keep
// the curve smooth. Preconditions: floor > 0, points >= 1, seeds >= 1; a center below floor is raised.
enum class SweepEdge {
  kInterior,  // a maximum with a tried interval on each side
  kFloor,     // the shortest interval tried, `floor`: checkpoint as often as possible
  kWindow,    // the longest, the window: no checkpoint within it
  kSweepEnd,  // the grid's end after all the extra steps: the optimum lies further out
};
const char* to_string(SweepEdge e);
struct IntervalSweep {
  std::vector<Time> intervals;  // ascending
  std::vector<double> mean_ettr;
  Time best;
  double best_ettr = 0;
  std::vector<double> best_ettr_by_seed;  // ETTR of each seed at `best`: paired with the run's seeds
  SweepEdge best_at = SweepEdge::kInterior;
};
IntervalSweep sweep_checkpoint_interval(const ReliabilityInputs& in, Time center, Time floor, int points,
                                        int seeds, uint64_t seed);

}  // namespace clustersim::engine
