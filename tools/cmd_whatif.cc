// SPDX-License-Identifier: Apache-2.0
// clustersim whatif: the cost of each straggler source, alone and removed from the full set.
#include <filesystem>
#include <iostream>

#include "sim/core/error.h"
#include "sim/core/scenario.h"
#include "sim/report/faults_report.h"
#include "sim/report/run_scenario.h"
#include "sim/report/whatif_report.h"
#include "tools/cli_args.h"
#include "tools/commands.h"
#include "tools/input_files.h"

namespace clustersim::cli {

const char* const kWhatIfUsage = R"(usage: clustersim whatif SCENARIO.yaml [options]

Simulates the scenario with and without each source in its `stragglers:` section (slow hosts,
slow GPUs, degraded NICs, uneven stages, sequence-length imbalance, GPU speed variation) and
prints, per source, the iteration time it gives alone, the slowdown and MFU it costs, what
removing it from the full set saves and regains (MFU points), and the ranks, stages and links on
its critical path.

At the analytical level the straggler model replays each pipeline replica's
schedule. With --fidelity flow (or network.fidelity: flow in the scenario) every variant is a
detailed simulation in its own process: the baseline without stragglers, all of them, and per
source (when there are several) the source alone and all but it, and per pipeline stage holding
slow hosts or GPUs (when several do) all but that stage's; each reports the slowdown, the MFU
lost, the rank groups with the most compute on the critical path and the degraded and most loaded
links; failed or degraded fabric elements of network.faults are one more source there, `links`
(the baseline has none; the analytical level has no per-link view and refuses them). Both levels
end with the cause: the repair that regains the most (a stage's slow hosts, another source, or
the degraded links). Training scenarios only: a network microbenchmark (`traffic:`) or a
serving scenario (`inference:`) is refused; price their network.faults with `clustersim run`.

options:
  --set key.path=value   override a scenario key (repeatable)
  --fidelity analytical|flow
                         level to simulate at (default: the scenario's network.fidelity; a
                         --set network.fidelity naming another level is refused)
  --jobs N               flow level: variants simulated at once, one process each (1 to 256,
                         default 2)
  --draws N              also redraw randomly placed stragglers (and the GPU speeds of
                         stragglers.variation) with seeds seed..seed+N-1 and report the MFU lost
                         over the draws: mean with its 95% confidence interval, lowest and
                         highest (1 to 10,000; default: 100 at the analytical level when slow
                         hosts or GPUs or the GPU speeds are drawn, which takes milliseconds;
                         otherwise 1, the scenario's seed alone; more than 1 where nothing is
                         drawn, or nothing drawn slows, is refused). At the analytical level
                         the variants and draws replay the pipeline schedule, 2 x micro-batches
                         x pp x vpp passes a replay: past 5e9 passes in all (about a minute),
                         or 1e8 in one replay, the run is refused with its figures
  --format text|json     table (default) or one JSON object on stdout
  --out DIR              also write DIR/whatif.json
  -h, --help             this help
)";

namespace {

// `inputs`: the files the run read, which whatif.json must not replace. Returns the text-format
// line that says so ("wrote DIR/whatif.json", as run says what it wrote; since 2026-12-07), or "".
std::string write_out(const Args& args, const std::vector<std::string>& inputs, const report::Json& j) {
  if (!args.has("--out")) return "";
  const std::filesystem::path dir(args.value("--out"));
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw BadInput(InputError{dir.string(), 0, "--out", "cannot create the directory: " + ec.message()});
  refuse_overwriting(dir / "whatif.json", inputs, "--out");
  write_text_file(dir / "whatif.json", j.dump(2), "--out");
  return "\nwrote " + (dir / "whatif.json").string() + "\n";
}

}  // namespace

int cmd_whatif(const std::vector<std::string>& argv) {
  const Args args(argv, {"--set", "--format", "--out", "--draws", "--fidelity", "--jobs"}, {"--set"}, {"-h", "--help"});
  if (args.has("-h") || args.has("--help")) {
    std::cout << kWhatIfUsage;
    return 0;
  }
  if (args.positionals().size() != 1) throw UsageError{"expected exactly one scenario file"};
  const std::string format = args.value("--format", "text");
  if (format != "text" && format != "json") throw UsageError{"--format must be text or json, got '" + format + "'"};
  const int jobs = static_cast<int>(args.integer("--jobs", 2, 1, 256));
  const std::string fidelity = args.value("--fidelity", "");
  if (!fidelity.empty() && fidelity != "analytical" && fidelity != "flow") {
    throw UsageError{"--fidelity must be analytical or flow, got '" + fidelity + "'"};
  }
  const ScenarioConfig cfg = load_scenario_with_flags(args.positionals()[0], args);
  // The what-if compares training iterations; a microbenchmark or a serving run has none (their
  // fabric faults are priced by `clustersim run`).
  if (cfg.traffic || cfg.inference) {
    throw BadInput(scenario_error(cfg, cfg.traffic ? "traffic" : "inference",
                                  std::string("the what-if compares training iterations, and this is a ") +
                                      (cfg.traffic ? "network microbenchmark" : "serving scenario") +
                                      " (price its network.faults with `clustersim run`, with and without them)"));
  }
  if (cfg.stragglers.empty() && cfg.network.faults.empty()) {
    throw BadInput(scenario_error(cfg, "stragglers", "the scenario has no straggler source (stragglers.hosts, gpus, nics, "
                                                     "stage_layers, sequence_imbalance, variation) nor network.faults to "
                                                     "analyse; add one (keys in scenarios/README.md)" +
                                                     std::string(cfg.parallelism.stage_layers.empty()
                                                                     ? ""
                                                                     : ". An MoE model's stage_layers is its plan's layer "
                                                                       "map, priced in every run: compare it with another "
                                                                       "split, or the even one, with `clustersim run`")));
  }
  // Randomly placed stragglers cost what their placement makes them cost (a slow host on the
  // pipeline's pacing stage or not): one seed alone can mislead, and at the analytical level a
  // hundred placements take milliseconds.
  const bool flow = cfg.network.fidelity == Fidelity::kFlow;
  const int draws =
      static_cast<int>(args.integer("--draws", !flow && cfg.stragglers.drawn_slow() ? report::kDefaultPlacementDraws : 1, 1, 10000));
  if (draws > 1 && !cfg.stragglers.drawn()) {
    throw UsageError{"--draws " + std::to_string(draws) +
                     ": the scenario's stragglers place nothing at random (no stragglers.hosts or gpus by fraction "
                     "or count, no variation), so every draw would be the same; leave --draws out"};
  }
  // Drawn hosts or GPUs that slow nothing (a count or fraction of 0, or a slowdown of 1): every
  // draw is the same at either level, since replicas that slow nothing stay folded (until
  // 2026-12-06 such draws ran and reported 0.00 +- 0.00).
  if (draws > 1 && !cfg.stragglers.drawn_slow()) {
    throw UsageError{"--draws " + std::to_string(draws) +
                     ": the scenario's drawn stragglers slow nothing (a count or fraction of 0, or a slowdown of 1), "
                     "so every draw would be the same; leave --draws out"};
  }
  if (!flow && args.has("--jobs")) {
    std::cerr << "note: --jobs sets the flow level's worker processes; the analytical level runs in this one\n";
  }
  const calib::HardwareProfile hw = report::training_profile(cfg);
  // As `run` notes them (whatif printed nothing until 2026-12-05): slow hosts or GPUs that slow
  // nothing. Also under "notes" in the JSON.
  std::vector<std::string> notes = report::inert_straggler_notes(cfg);
  if (cfg.faults) {
    notes.push_back("the faults section is not used: the what-if compares training iterations (`clustersim run` "
                    "simulates the job's days with it)");
  }
  for (const std::string& note : notes) std::cerr << "note: " << note << "\n";
  // The files the run reads: recorded in the JSON, and never replaced by whatif.json.
  const std::vector<std::string> inputs = scenario_input_files(cfg);
  const auto with_notes = [&](report::Json j) {
    j.set("clustersim", report::build_stamp());
    j.set("inputs", inputs_stamp(inputs, args.values("--set"), fidelity));
    if (notes.empty()) return j;
    report::Json& a = j.set("notes", report::Json::array());
    for (const std::string& n : notes) a.push(n);
    return j;
  };
  if (flow) {
    // As `run` says it: network.faults above the hosts, every variant unfolded or all folded.
    if (const std::string note = report::fabric_faults_folding_note(cfg, hw); !note.empty()) {
      notes.push_back(note);
      std::cerr << "note: " << note << "\n";
    }
    // One detailed simulation per variant, each in a forked child (SimGrid: one per process).
    const auto variants = report::flow_whatif_variants(cfg, draws);
    const std::vector<report::FlowVariant> results =
        report::run_flow_variants(variants, hw, report::unfold_per_variant(variants, hw), jobs);
    const report::Json j = with_notes(report::whatif_flow_json(cfg, results));
    report::refuse_saturated_times(cfg, j);
    const std::string wrote = write_out(args, inputs, j);
    std::cout << (format == "json" ? j.dump(2) : report::whatif_flow_table(cfg, results) + wrote);
    // A variant that failed leaves the comparison incomplete: exit 2 when the input was at fault
    // (a fault that cuts every path, say), 1 when something else broke.
    bool internal = false, bad_input = false;
    for (const report::FlowVariant& v : results) {
      if (v.error.empty()) continue;
      std::cerr << "error: variant '" << v.name << "' failed: " << v.error << "\n";
      (v.bad_input ? bad_input : internal) = true;
    }
    return internal ? 1 : bad_input ? 2 : 0;
  }
  const engine::TrainingLevel level = engine::analytical_level();
  const report::WhatIf w = report::run_whatif(cfg, hw, level, draws);
  const report::Json j = with_notes(report::whatif_json(cfg, w));
  report::refuse_saturated_times(cfg, j);
  const std::string text = report::whatif_table(cfg, w);
  const std::string wrote = write_out(args, inputs, j);
  std::cout << (format == "json" ? j.dump(2) : text + wrote);
  return 0;
}

}  // namespace clustersim::cli
