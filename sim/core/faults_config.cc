// SPDX-License-Identifier: Apache-2.0
#include "sim/core/faults_config.h"

#include <algorithm>
#include <cassert>
#include <set>
#include <string>

#include "sim/core/map_reader.h"
#include "sim/core/scenario.h"
#include "sim/core/unit_parse.h"

namespace clustersim {
namespace {

// Llama 3 Herd of Models, Table 5 (interruptions in a 54-day snapshot of 405B pre-training on
// 16,384 GPUs) and section 3.3.4 (47 planned of 466 in all). Kinds and units are our reading:
// GPU parts per GPU; host parts per host (2,048); NICs per NIC; the fabric and software per GPU
// (both grow with the job); external dependencies per job. The counts (419 unexpected in all)
// are taken as printed; the table's faulty-GPU row prints 148 beside 30.1%, which would be 126 of
// 419 (its percentages give a GPU share of 58.7%, its counts 64%).
constexpr double kLlama3Days = 54.0;
constexpr double kLlama3Gpus = 16384.0;
constexpr double kLlama3Hosts = 2048.0;
constexpr double kLlama3Nics = 16384.0;

struct Row {
  const char* name;
  int count;
  FailureUnit unit;
  FailureKind kind;
  bool replace_host;
  bool only_while_running;
};

constexpr Row kLlama3Rows[] = {
    {"faulty_gpu", 148, FailureUnit::kGpu, FailureKind::kCrash, true, false},
    {"gpu_hbm3", 72, FailureUnit::kGpu, FailureKind::kCrash, true, false},
    {"software_bug", 54, FailureUnit::kGpu, FailureKind::kCrash, false, true},
    {"network_switch_cable", 35, FailureUnit::kGpu, FailureKind::kCrash, false, false},
    {"host_maintenance_unplanned", 32, FailureUnit::kHost, FailureKind::kCrash, true, false},
    {"gpu_sram", 19, FailureUnit::kGpu, FailureKind::kCrash, true, false},
    {"gpu_system_processor", 17, FailureUnit::kGpu, FailureKind::kCrash, true, false},
    {"nic", 7, FailureUnit::kNic, FailureKind::kCrash, true, false},
    {"nccl_watchdog_timeout", 7, FailureUnit::kGpu, FailureKind::kHang, false, true},
    {"silent_data_corruption", 6, FailureUnit::kGpu, FailureKind::kCrash, true, false},
    {"gpu_thermal_interface_sensor", 6, FailureUnit::kGpu, FailureKind::kCrash, true, false},
    {"ssd", 3, FailureUnit::kHost, FailureKind::kCrash, true, false},
    {"power_supply", 3, FailureUnit::kHost, FailureKind::kCrash, true, false},
    {"server_chassis", 2, FailureUnit::kHost, FailureKind::kCrash, true, false},
    {"io_expansion_board", 2, FailureUnit::kHost, FailureKind::kCrash, true, false},
    {"dependency", 2, FailureUnit::kJob, FailureKind::kCrash, false, true},
    {"cpu", 2, FailureUnit::kHost, FailureKind::kCrash, true, false},
    {"system_memory", 2, FailureUnit::kHost, FailureKind::kCrash, true, false},
    {"planned", 47, FailureUnit::kJob, FailureKind::kPlanned, false, true},
};

double units_in_llama3(FailureUnit u) {
  switch (u) {
    case FailureUnit::kGpu: return kLlama3Gpus;
    case FailureUnit::kHost: return kLlama3Hosts;
    case FailureUnit::kNic: return kLlama3Nics;
    case FailureUnit::kJob: return 1.0;
  }
  return 1.0;
}

template <typename T>
void read_optional(MapReader& r, const std::string& key, std::optional<T>& out) {
  T v{};
  if (r.read(key, v)) out = v;
}

void read_component(MapReader r, FailureComponent& c) {
  r.read_enum("unit", c.unit,
              {{"gpu", FailureUnit::kGpu}, {"host", FailureUnit::kHost}, {"nic", FailureUnit::kNic},
               {"job", FailureUnit::kJob}});
  r.read("rate_per_day", c.rate_per_day, Need::kOptional, 0.0, 1e6);
  // As rate_scale: 1e-320 made the job's rate subnormal and its MTBF infinite (QA 2026-12-07).
  if (c.rate_per_day > 0 && c.rate_per_day < 1e-12) {
    r.error("rate_per_day", "must be 0 (never) or at least 1e-12 a unit and day; got " + format_number(c.rate_per_day));
  }
  r.read_enum("kind", c.kind,
              {{"crash", FailureKind::kCrash}, {"hang", FailureKind::kHang},
               {"planned", FailureKind::kPlanned}, {"degrade", FailureKind::kDegrade}});
  r.read("replace_host", c.replace_host);
  r.read("only_while_running", c.only_while_running);
  const bool slowdown_read = r.read("slowdown", c.slowdown, Need::kOptional, 1.0, 100.0);
  r.read_enum("phase", c.phase,
              {{"all", StragglerPhase::kAll}, {"forward", StragglerPhase::kForward},
               {"backward", StragglerPhase::kBackward}});
  // Checked as it is read (in validate_faults until 2026-12-05): a missing slowdown then names the
  // component's line, and comes with the section's other read errors rather than after them.
  if (c.kind == FailureKind::kDegrade && c.slowdown <= 1.0 && (slowdown_read || !r.has("slowdown"))) {
    r.error("slowdown", "a degrade component needs slowdown > 1 (the slow host's compute time over a healthy one's)");
  }
  r.finish();
}

// `components:` with nothing under it reads as null: the defaults ran unasked (until 2026-12-05).
// A key written with no value is an error (scenarios/README.md); sections read through
// MapReader::section are refused there.
void refuse_empty(MapReader& r, const std::string& key) {
  if (const YamlNode* n = r.child(key); n && n->is_null()) {
    r.error(key, "has no value; give its keys, or remove it for the defaults");
  }
}

// The largest faults.duration: simulated time holds about 106 days, and events (a recovery, a
// straggler's detection) may end past the window.
constexpr double kMaxDurationDays = 90;
const char* const kDurationRange = "above zero and at most 90d";

// Whether a hang can come: recovery.hang_detection times only those.
bool uses_hang_detection(const FaultsConfig& f) {
  return std::any_of(f.components.begin(), f.components.end(),
                     [](const FailureComponent& c) { return c.kind == FailureKind::kHang && c.rate_per_day > 0; });
}

std::string str(long long v) { return std::to_string(v); }

}  // namespace

bool uses_straggler_detection(const FaultsConfig& f) {
  return std::any_of(f.components.begin(), f.components.end(), [&](const FailureComponent& c) {
    return c.kind == FailureKind::kDegrade && c.rate_per_day > 0 && c.slowdown >= f.recovery.straggler_threshold;
  });
}

std::vector<FailureComponent> llama3_components() {
  std::vector<FailureComponent> out;
  for (const Row& row : kLlama3Rows) {
    FailureComponent c;
    c.name = row.name;
    c.unit = row.unit;
    c.kind = row.kind;
    c.replace_host = row.replace_host;
    c.only_while_running = row.only_while_running;
    c.rate_per_day = row.count / kLlama3Days / units_in_llama3(row.unit);
    out.push_back(c);
  }
  return out;
}

const char* to_string(FailureKind k) {
  switch (k) {
    case FailureKind::kCrash: return "crash";
    case FailureKind::kHang: return "hang";
    case FailureKind::kPlanned: return "planned";
    case FailureKind::kDegrade: return "degrade";
  }
  return "?";
}

const char* to_string(FailureUnit u) {
  switch (u) {
    case FailureUnit::kGpu: return "gpu";
    case FailureUnit::kHost: return "host";
    case FailureUnit::kNic: return "nic";
    case FailureUnit::kJob: return "job";
  }
  return "?";
}

const char* to_string(IterationTimeFidelity f) {
  switch (f) {
    case IterationTimeFidelity::kAnalytical: return "analytical";
    case IterationTimeFidelity::kFlow: return "flow";
  }
  return "?";
}

IterationTimeFidelity iteration_time_fidelity(const ScenarioConfig& cfg) {
  assert(cfg.faults && "only a faults scenario has an iteration-time fidelity");
  if (cfg.faults->iteration_time_fidelity) return *cfg.faults->iteration_time_fidelity;
  return cfg.network.fidelity == Fidelity::kFlow ? IterationTimeFidelity::kFlow : IterationTimeFidelity::kAnalytical;
}

void read_faults(MapReader r, FaultsConfig& out) {
  // Read as text, so that a window past what Time holds (104d) gives the same limit as one past
  // 90d (validate_faults), not the parser's.
  if (std::string text; r.read("duration", text)) {
    if (const std::optional<Time> t = parse_time(text)) {
      out.duration = *t;
    } else {
      r.error("duration", std::string("expected a duration ") + kDurationRange + " such as 30d or 720h, got '" + text + "'");
    }
  }
  r.read("seeds", out.seeds, Need::kOptional, 1, 10000);
  r.read("seed", out.seed);
  r.read_enum("rates", out.llama3_rates, {{"llama3", true}, {"none", false}});
  r.read("rate_scale", out.rate_scale, Need::kOptional, 0.0, 1e6);
  out.components = out.llama3_rates ? llama3_components() : std::vector<FailureComponent>{};
  refuse_empty(r, "components");  // checkpoint and recovery: MapReader::section refuses them empty
  if (const YamlNode* comps = r.child("components"); comps && !comps->is_null()) {
    if (!comps->is_map()) {
      r.error("components", "expected a mapping of component name to {unit, rate_per_day, kind, ...}");
    } else {
      MapReader cr = r.section("components");
      const size_t builtin = out.components.size();
      std::set<std::string> builtin_names;
      for (const FailureComponent& c : out.components) builtin_names.insert(c.name);
      for (const auto& [name, node] : comps->map) {
        if (name.empty()) {
          // '' ran as a component named after nothing, a "" key in the JSON's per-component
          // times (until 2026-12-05).
          cr.child(name);
          cr.error(name, "a component's name is empty; name it (e.g. nic, switch, psu)");
          continue;
        }
        FailureComponent* target = nullptr;
        for (FailureComponent& c : out.components) {
          if (c.name == name) target = &c;
        }
        if (target && node.is_null()) {
          // "gpu:" with nothing under it changes nothing; a reader would take it to mean "off".
          cr.error(name, "is empty: the built-in component keeps its rates; give rate_per_day: 0 to turn it "
                         "off, or the fields to change");
        }
        if (!target) {
          // A name a built-in one's but for case or an edit per 4 characters (gpu_hmb3, Nic,
          // softwar; not psu beside cpu) is taken for a misspelling unless the component says
          // what it is counted per: gpu_hmb3 with rate_per_day: 0 ran as a new component beside
          // an untouched gpu_hbm3 (until 2026-12-06).
          const std::string near = closest_name(name, builtin_names);
          const bool misspelt = !near.empty() && (ascii_lower(near) == ascii_lower(name) ||
                                                  edit_distance(name, near) <= static_cast<int>(name.size()) / 4);
          if (misspelt && !(node.is_map() && node.find("unit"))) {
            cr.error(name, "is not a built-in component; did you mean '" + near +
                               "'? (a new component of a name this close says its unit: gpu, host, nic or job)");
          }
          out.components.push_back(FailureComponent{});
          target = &out.components.back();
          target->name = name;
          if (!node.is_map() || !node.find("rate_per_day")) {
            cr.error(name, "a new component needs rate_per_day (failures per unit per day)");
          }
        }
        if (node.is_null()) {  // refused above, with what it means for this component
          cr.child(name);
          continue;
        }
        read_component(cr.section(name), *target);
      }
      // New components in name order: a mapping's order means nothing in YAML, and the failure
      // draw picks a component by the running sum of the rates, in this order.
      std::sort(out.components.begin() + static_cast<std::ptrdiff_t>(builtin), out.components.end(),
                [](const FailureComponent& a, const FailureComponent& b) { return a.name < b.name; });
      cr.finish();
    }
  }
  MapReader c = r.section("checkpoint");
  read_optional(c, "interval", out.checkpoint.interval);
  read_optional(c, "size", out.checkpoint.size);
  c.read("async", out.checkpoint.async);
  c.read("write_bandwidth", out.checkpoint.write_bandwidth);
  read_optional(c, "read_bandwidth", out.checkpoint.read_bandwidth);
  c.read("snapshot_bandwidth", out.checkpoint.snapshot_bandwidth);
  read_optional(c, "blocking", out.checkpoint.blocking);
  c.finish();
  MapReader v = r.section("recovery");
  RecoveryConfig& rc = out.recovery;
  v.read("detection", rc.detection);
  v.read("hang_detection", rc.hang_detection);
  v.read("diagnosis", rc.diagnosis);
  v.read("reschedule", rc.reschedule);
  v.read("comm_init", rc.comm_init);
  v.read("comm_init_at_gpus", rc.comm_init_at_gpus, Need::kOptional, 1);
  v.read_enum("comm_init_scaling", rc.comm_init_scaling,
              {{"constant", CommInitScaling::kConstant}, {"linear", CommInitScaling::kLinear}});
  read_optional(v, "checkpoint_load", rc.checkpoint_load);
  int spares = 0;
  if (v.read("spare_hosts", spares, Need::kOptional, 0)) rc.spare_hosts = spares;
  v.read("repair_time", rc.repair_time);
  v.read("straggler_detection", rc.straggler_detection);
  v.read("straggler_threshold", rc.straggler_threshold, Need::kOptional, 1.0, 100.0);
  v.finish();
  r.read("sweep_points", out.sweep_points, Need::kOptional, 3, 201);
  read_optional(r, "iteration_time", out.iteration_time);
  IterationTimeFidelity level = IterationTimeFidelity::kAnalytical;
  if (r.read_enum("iteration_time_fidelity", level,
                  {{"analytical", IterationTimeFidelity::kAnalytical}, {"flow", IterationTimeFidelity::kFlow}})) {
    out.iteration_time_fidelity = level;
  }
  r.finish();
}

void validate_faults(const ScenarioConfig& cfg, std::vector<InputError>& errors) {
  if (!cfg.faults) return;
  const FaultsConfig& f = *cfg.faults;
  auto fail = [&](const std::string& key, const std::string& message) {
    errors.push_back(scenario_error(cfg, "faults." + key, message));
  };
  // Without the key, the iteration times come from the scenario's own level, which must be one
  // of the two that time a training step.
  if (!f.iteration_time_fidelity && cfg.network.fidelity != Fidelity::kAnalytical &&
      cfg.network.fidelity != Fidelity::kFlow) {
    errors.push_back(scenario_error(cfg, "network.fidelity",
                                    "faults take their iteration times from the analytical or flow training level; set "
                                    "network.fidelity: analytical or flow, or faults.iteration_time_fidelity"));
  }
  // Time is integer picoseconds (+-106 days); leave room for events past the window's end.
  if (f.duration <= Time::zero() || f.duration > Time::s(kMaxDurationDays * 86400.0)) {
    fail("duration", std::string("must be ") + kDurationRange + "; got " + to_string(f.duration));
  }
  auto positive = [&](const std::optional<Time>& t, const std::string& key) {
    if (t && *t <= Time::zero()) fail(key, "must be above zero");
  };
  auto non_negative = [&](Time t, const std::string& key) {
    if (t < Time::zero()) fail(key, "must not be negative");
  };
  positive(f.checkpoint.interval, "checkpoint.interval");
  positive(f.iteration_time, "iteration_time");
  // A scale of 1e-308 made the failure rate a denormal and the MTBF infinite ("MTBF inf h").
  if (f.rate_scale > 0 && f.rate_scale < 1e-12) {
    fail("rate_scale", "must be 0 (no failures) or at least 1e-12; got " + format_number(f.rate_scale));
  }
  if (f.checkpoint.size && f.checkpoint.size->n <= 0) fail("checkpoint.size", "must be above zero");
  if (f.checkpoint.blocking) non_negative(*f.checkpoint.blocking, "checkpoint.blocking");
  if (f.checkpoint.size && f.checkpoint.size->n > 0 && cfg.cluster.gpus > 0) {
    validate_checkpoint_times(cfg, *f.checkpoint.size, errors);
  }
  const RecoveryConfig& r = f.recovery;
  non_negative(r.detection, "recovery.detection");
  non_negative(r.hang_detection, "recovery.hang_detection");
  non_negative(r.diagnosis, "recovery.diagnosis");
  non_negative(r.reschedule, "recovery.reschedule");
  non_negative(r.comm_init, "recovery.comm_init");
  non_negative(r.repair_time, "recovery.repair_time");
  if (r.checkpoint_load) non_negative(*r.checkpoint_load, "recovery.checkpoint_load");
  if (r.straggler_detection <= Time::zero()) fail("recovery.straggler_detection", "must be above zero");
  // A phase that outlasts the window cannot end in it (and its end would overflow Time past ~106
  // days); repair_time may: a host then never returns within the window.
  // A default the user never wrote is named as the default (2026-12-05).
  auto within = [&](Time t, const std::string& key) {
    if (t <= f.duration) return;
    if (cfg.given.count("faults." + key)) {
      fail(key, "longer than faults.duration (" + to_string(f.duration) + "); got " + to_string(t));
    } else {
      fail(key, "its default, " + to_string(t) + ", is longer than faults.duration (" + to_string(f.duration) +
                    "); set it to fit the window");
    }
  };
  // No step, and no checkpoint interval, can end in a window shorter than it.
  if (f.iteration_time && *f.iteration_time > Time::zero()) within(*f.iteration_time, "iteration_time");
  if (f.checkpoint.interval && *f.checkpoint.interval > Time::zero()) within(*f.checkpoint.interval, "checkpoint.interval");
  within(r.detection, "recovery.detection");
  // The two detection times count only when a failure of their kind can come (and be found):
  // a window shorter than an unused one is fine (refused until 2026-12-05).
  if (uses_hang_detection(f)) within(r.hang_detection, "recovery.hang_detection");
  within(r.diagnosis, "recovery.diagnosis");
  within(r.reschedule, "recovery.reschedule");
  if (uses_straggler_detection(f)) within(r.straggler_detection, "recovery.straggler_detection");
  if (f.checkpoint.blocking) within(*f.checkpoint.blocking, "checkpoint.blocking");
  if (r.checkpoint_load) within(*r.checkpoint_load, "recovery.checkpoint_load");
  const double at = r.comm_init_at_gpus > 0 ? r.comm_init_at_gpus : cfg.cluster.gpus;
  const double comm_init_s =
      r.comm_init_scaling == CommInitScaling::kLinear ? r.comm_init.as_s() * cfg.cluster.gpus / at : r.comm_init.as_s();
  if (comm_init_s > f.duration.as_s()) {
    fail("recovery.comm_init", "at " + str(cfg.cluster.gpus) + " GPUs, " + seconds_to_string(comm_init_s) +
                                   ", longer than faults.duration (" + to_string(f.duration) + ")");
  }
  if (f.checkpoint.blocking && *f.checkpoint.blocking == Time::zero() && !f.checkpoint.interval) {
    fail("checkpoint.blocking",
         "a zero checkpoint cost puts the Young/Daly optimum at a zero interval; set faults.checkpoint.interval, "
         "or a blocking time above zero");
  }
  for (const FailureComponent& c : f.components) {
    const std::string key = "components." + c.name;
    if (c.kind != FailureKind::kDegrade && c.slowdown != 1.0) {
      fail(key + ".slowdown", "only a degrade component slows a host; use kind: degrade");
    }
    if (c.kind != FailureKind::kDegrade && cfg.given.count("faults." + key + ".phase")) {
      fail(key + ".phase", "only a degrade component slows a host in a phase; use kind: degrade");
    }
    // The reliability simulation decides these two by kind (sim/engine/reliability_sim.cc).
    if (cfg.given.count("faults." + key + ".replace_host")) {
      if (c.kind == FailureKind::kPlanned) {
        fail(key + ".replace_host", "a planned stop never takes a host (checkpoint, then restart on the same "
                                    "hosts): remove it");
      } else if (c.kind == FailureKind::kDegrade) {
        fail(key + ".replace_host", "a degrade component always swaps the slow host once it is found "
                                    "(recovery.straggler_detection): remove it");
      }
    }
    if (c.kind == FailureKind::kPlanned && cfg.given.count("faults." + key + ".only_while_running")) {
      fail(key + ".only_while_running", "a planned stop happens only while the job runs, whatever this says: "
                                        "remove it");
    }
  }
}

namespace {

// Hosts of the job: gpus / gpus_per_node, rounded up (validate refuses a remainder).
int64_t job_hosts(const ScenarioConfig& cfg) {
  return (static_cast<int64_t>(cfg.cluster.gpus) + cfg.cluster.gpus_per_node - 1) / cfg.cluster.gpus_per_node;
}

}  // namespace

Bandwidth job_nic_bandwidth(const ScenarioConfig& cfg) {
  return static_cast<double>(job_hosts(cfg) * cfg.cluster.nics_per_node) * cfg.cluster.nic_bandwidth;
}

Bandwidth checkpoint_bandwidth(const ScenarioConfig& cfg, Bandwidth storage) {
  if (cfg.cluster.gpus_per_node <= 0 || cfg.cluster.nics_per_node <= 0) return storage;  // refused elsewhere
  const Bandwidth nics = job_nic_bandwidth(cfg);
  return nics.bytes_per_s > 0 && nics.bytes_per_s < storage.bytes_per_s ? nics : storage;
}

bool checkpoint_nic_bound(const ScenarioConfig& cfg, Bandwidth storage) {
  return checkpoint_bandwidth(cfg, storage).bytes_per_s < storage.bytes_per_s;
}

std::string checkpoint_rate_words(const ScenarioConfig& cfg, Bandwidth storage, const std::string& key) {
  if (!checkpoint_nic_bound(cfg, storage)) return key + "'s " + bytes_rate_string(storage);
  return "the job's NICs' " + bytes_rate_string(checkpoint_bandwidth(cfg, storage)) + " (" + std::to_string(job_hosts(cfg)) + " hosts x " +
         str(cfg.cluster.nics_per_node) + " x " + to_string(cfg.cluster.nic_bandwidth) + "), below " + key + "'s " +
         bytes_rate_string(storage);
}

void validate_checkpoint_times(const ScenarioConfig& cfg, Bytes size, std::vector<InputError>& errors) {
  if (!cfg.faults || cfg.cluster.gpus <= 0) return;
  const FaultsConfig& f = *cfg.faults;
  const CheckpointConfig& ck = f.checkpoint;
  const double window_s = f.duration.as_s();
  // NaN-safe: a zero or negative bandwidth gives inf or a negative time, both rejected.
  auto check = [&](double secs, const std::string& key, const std::string& what) {
    if (!(secs >= 0 && secs <= window_s)) {
      errors.push_back(scenario_error(cfg, key,
                                      what + " takes " + seconds_to_string(secs) + ", longer than faults.duration (" +
                                          to_string(f.duration) + ")"));
    }
  };
  const double bytes = static_cast<double>(size.n);
  const std::string of = "the " + std::to_string(size.n) + "-byte checkpoint";
  // Where the job's NICs set the rate, the error names them: a faster store changes nothing.
  auto check_rate = [&](Bandwidth storage, const std::string& key, const std::string& what) {
    check(bytes / checkpoint_bandwidth(cfg, storage).bytes_per_s,
          checkpoint_nic_bound(cfg, storage) ? "cluster.nic_bandwidth" : "faults.checkpoint." + key,
          what + " at " + checkpoint_rate_words(cfg, storage, key) + ",");
  };
  check_rate(ck.write_bandwidth, "write_bandwidth", "writing " + of);
  // Without read_bandwidth the load takes as long as the write, checked above; so does a read
  // the NICs slow to the write's rate.
  if (!f.recovery.checkpoint_load && ck.read_bandwidth &&
      checkpoint_bandwidth(cfg, *ck.read_bandwidth).bytes_per_s != checkpoint_bandwidth(cfg, ck.write_bandwidth).bytes_per_s) {
    check_rate(*ck.read_bandwidth, "read_bandwidth", "reading " + of + " back");
  }
  if (ck.blocking) return;  // checked by validate_faults
  const int64_t shard = size.n / cfg.cluster.gpus;
  if (ck.async) {
    check(static_cast<double>(shard) / ck.snapshot_bandwidth.bytes_per_s, "faults.checkpoint.snapshot_bandwidth",
          "snapshotting a " + std::to_string(shard) + "-byte shard");
  }
  if (ck.async && shard == 0 && !ck.interval) {
    errors.push_back(scenario_error(cfg, "faults.checkpoint.size",
                                    "the per-GPU shard (" + std::to_string(size.n) + " bytes over " +
                                        str(cfg.cluster.gpus) +
                                        " GPUs) rounds to 0 bytes, so the checkpoint costs nothing and the "
                                        "Young/Daly optimum interval is zero; set faults.checkpoint.interval or "
                                        "faults.checkpoint.blocking, or a larger size"));
  }
}

}  // namespace clustersim
