// SPDX-License-Identifier: Apache-2.0
// clustersim topo: the fabric of a scenario: switch and link counts per tier, bisection
// bandwidth, and exports (DOT, GraphML, link list).
#include <fstream>
#include <iostream>

#include "sim/core/error.h"
#include "sim/core/scenario.h"
#include "sim/engine/scenario_nvlink.h"
#include "tools/cli_args.h"
#include "tools/commands.h"
#include "tools/input_files.h"
#include "topology/fabric.h"
#include "topology/fabric_graph.h"
#include "topology/fabric_stats.h"

namespace clustersim::cli {

const char* const kTopoUsage = R"(usage: clustersim topo SCENARIO.yaml [options]

Builds the scenario's fabric (network.* and cluster.* keys) and prints switch and link counts
per tier, injection and bisection bandwidth, and any failed or degraded links.

options:
  --set key.path=value       override a scenario key (repeatable)
  --export dot|graphml FILE  write the graph (Graphviz DOT or GraphML; large fabrics make large files)
  --list-links               print every link as CSV (link,tier,from,to,capacity_gbps,latency_us);
                             the link column (NAME/up, NAME/down) is what network.faults
                             takes; links.csv (run --out) splits it into link and direction;
                             not with --export
  -h, --help                 this help
)";

int cmd_topo(const std::vector<std::string>& argv) {
  const Args args(argv, {"--set", "--export"}, {"--set"}, {"-h", "--help", "--list-links"});
  if (args.has("-h") || args.has("--help")) {
    std::cout << kTopoUsage;
    return 0;
  }
  if (args.positionals().size() < 1) throw UsageError{"expected a scenario file"};
  std::string export_format, export_file;
  size_t scenario_index = 0;
  if (args.has("--export")) {
    export_format = args.value("--export");
    if (export_format != "dot" && export_format != "graphml") {
      throw UsageError{"--export takes dot or graphml, got '" + export_format + "'"};
    }
    if (args.positionals().size() != 2) throw UsageError{"--export needs a FORMAT and a FILE"};
    // FILE is the word right after FORMAT, wherever the scenario stands (until 2026-12-06 the
    // second positional: "--export graphml a.yaml b.yaml" wrote over b.yaml, the scenario).
    const int at = args.positional_after("--export");
    if (at < 0) throw UsageError{"--export FORMAT FILE: give the file right after the format"};
    export_file = args.positionals()[static_cast<size_t>(at)];
    scenario_index = at == 0 ? 1 : 0;
    if (export_file.empty()) throw UsageError{"--export needs a FILE, got ''"};
    if (args.has("--list-links")) throw UsageError{"--list-links prints the links, --export writes the graph; give one"};
  } else if (args.positionals().size() != 1) {
    throw UsageError{"expected exactly one scenario file"};
  }
  refuse_repeated_sets(args.values("--set"));
  const ScenarioConfig cfg = load_scenario(args.positionals()[scenario_index], args.values("--set"));
  // Neither the scenario nor a file it names (its GPU profile) may be replaced by the export.
  if (!export_file.empty()) refuse_overwriting(export_file, scenario_input_files(cfg), "--export");
  const topo::Fabric fabric = topo::build_fabric(cfg, engine::scenario_profile(cfg).nvlink_bandwidth);
  if (args.has("--list-links")) {
    topo::write_link_list(fabric, std::cout);
    return 0;
  }
  // The file is opened before anything is printed: an unwritable path is the only output (the
  // whole summary came first, then the error, until 2026-12-06).
  std::ofstream out;
  if (!export_file.empty()) out = open_output(export_file, "--export");
  std::cout << topo::format_summary(fabric);
  if (!export_file.empty()) {
    if (export_format == "dot") {
      topo::write_dot(fabric, out);
    } else {
      topo::write_graphml(fabric, out);
    }
    finish_output(out, export_file, "--export");
    std::cout << "wrote " << export_file << " (" << export_format << ")\n";
  }
  return 0;
}

}  // namespace clustersim::cli
