// SPDX-License-Identifier: Apache-2.0
// clustersim whatif: the cost of each straggler source, alone and removed from the full set.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "sim/core/error.h"
#include "sim/core/scenario.h"
#include "sim/report/faults_report.h"
#include "tools/cli_args.h"
#include "tools/commands.h"

namespace clustersim::cli {

const char* const kWhatIfUsage = R"(usage: clustersim whatif SCENARIO.yaml [options]

Simulates the scenario with and without each source in its `stragglers:` section (slow hosts,
slow GPUs, degraded NICs, uneven stages, sequence-length imbalance) and prints, per source, the
iteration time it gives alone, the slowdown and MFU it costs, what removing it from the full set
saves, and the ranks, stages and links on its critical path.

options:
  --set key.path=value   override a scenario key (repeatable)
  --draws N              also redraw randomly placed stragglers with seeds seed..seed+N-1 and
                         report the mean, lowest and highest MFU lost (default 1: the scenario's seed)
  --format text|json     table (default) or one JSON object on stdout
  --out DIR              also write DIR/whatif.json
  -h, --help             this help
)";

int cmd_whatif(const std::vector<std::string>& argv) {
  const Args args(argv, {"--set", "--format", "--out", "--draws"}, {"--set"}, {"-h", "--help"});
  if (args.has("-h") || args.has("--help")) {
    std::cout << kWhatIfUsage;
    return 0;
  }
  if (args.positionals().size() != 1) throw UsageError{"expected exactly one scenario file"};
  const std::string format = args.value("--format", "text");
  if (format != "text" && format != "json") throw UsageError{"--format must be text or json, got '" + format + "'"};
  int draws = 1;
  if (args.has("--draws")) {
    const std::string d = args.value("--draws");
    try {
      size_t used = 0;
      draws = std::stoi(d, &used);
      if (used != d.size()) draws = 0;
    } catch (const std::exception&) {
      draws = 0;
    }
    if (draws < 1 || draws > 10000) throw UsageError{"--draws must be an integer in [1, 10000], got '" + d + "'"};
  }
  const ScenarioConfig cfg = load_scenario(args.positionals()[0], args.values("--set"));
  if (cfg.stragglers.empty()) {
    throw BadInput(scenario_error(cfg, "stragglers", "the scenario has no stragglers section to analyse; add one "
                                                     "(keys in scenarios/README.md)"));
  }
  const calib::HardwareProfile hw = report::training_profile(cfg);
  const engine::TrainingLevel level = engine::analytical_level();
  const report::WhatIf w = report::run_whatif(cfg, hw, level);
  report::Json j = report::whatif_json(cfg, w);
  std::string text = report::whatif_table(cfg, w);
  if (draws > 1) {
    std::vector<double> lost;
    for (int k = 0; k < draws; ++k) {
      ScenarioConfig c = cfg;
      c.stragglers.seed = cfg.stragglers.seed + static_cast<uint64_t>(k);
      const engine::StragglerImpact s = engine::simulate_stragglers(c, hw, level);
      lost.push_back(s.baseline_mfu - s.mfu);
    }
    double mean = 0;
    for (double x : lost) mean += x;
    mean /= draws;
    const auto [lo, hi] = std::minmax_element(lost.begin(), lost.end());
    report::Json& d = j.set("draws", report::Json::object());
    d.set("count", draws);
    d.set("mfu_lost_mean", mean);
    d.set("mfu_lost_min", *lo);
    d.set("mfu_lost_max", *hi);
    char line[200];
    std::snprintf(line, sizeof line, "\nover %d placements (seeds %llu..%llu): MFU lost %.2f points on average (%.2f to %.2f)\n",
                  draws, static_cast<unsigned long long>(cfg.stragglers.seed),
                  static_cast<unsigned long long>(cfg.stragglers.seed + draws - 1), 100 * mean, 100 * *lo, 100 * *hi);
    text += line;
  }
  if (args.has("--out")) {
    const std::filesystem::path dir(args.value("--out"));
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw BadInput(InputError{dir.string(), 0, "--out", "cannot create the directory: " + ec.message()});
    std::ofstream out(dir / "whatif.json", std::ios::binary);
    out << j.dump(2);
    if (!out) throw BadInput(InputError{(dir / "whatif.json").string(), 0, "--out", "cannot write the file"});
  }
  std::cout << (format == "json" ? j.dump(2) : text);
  return 0;
}

}  // namespace clustersim::cli
