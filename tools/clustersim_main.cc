// SPDX-License-Identifier: Apache-2.0
// The clustersim command line: run, validate, topo, calibrate, profiles (sweep to come).
// Exit codes: 0 success, 2 bad input or usage, 1 internal error (and validate over budget, sweep
// with a failed candidate).
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "calibration/hardware_profile.h"
#include "sim/core/build_info.h"
#include "sim/core/error.h"
#include "sim/core/scenario.h"
#include "sim/report/run_scenario.h"
#include "sim/report/validation_suite.h"
#include "tools/cli_args.h"
#include "tools/commands.h"
#include "tools/input_files.h"

namespace clustersim::cli {
namespace {

constexpr const char* kTopUsage = R"(usage: clustersim <command> [options]

Predicts how LLM training and serving perform on GPU clusters.

commands:
  run SCENARIO.yaml     simulate a scenario and print iteration time, tokens/s, MFU, breakdown
  validate [SUITE.yaml] run a validation suite against published measurements
  topo SCENARIO.yaml    print the fabric's switches, links and bisection bandwidth; export it
  calibrate PROBE...    fit a hardware profile to probe measurements
  profiles [NAME]       list the built-in GPU profiles, or print one (to copy and edit)
  sweep SWEEP.yaml      screen many plans and clusters: analytical, then the best at flow level
  whatif SCENARIO.yaml  what each straggler source costs: slowdown, MFU lost, critical stages
  version, --version    print the version

'clustersim <command> --help' describes each command. Exit codes: 0 ok, 2 bad input, 1 internal
error, and 1 also for a validation suite over its budget and a sweep candidate that failed.
)";

constexpr const char* kRunUsage = R"(usage: clustersim run SCENARIO.yaml [options]

Simulates one scenario and prints a summary: iteration time, tokens/s, MFU and where the time
goes (training); completion time and link load (network microbenchmarks, `traffic:`); throughput,
TTFT and TPOT (serving, `inference:`); ETTR, goodput and time lost per cause (reliability,
`faults:`).

options:
  --set key.path=value   override a scenario key (repeatable), e.g. --set parallelism.tp=4;
                         key.path=null removes the key (its default applies)
  --fidelity LEVEL       shorthand for --set network.fidelity=LEVEL
                         (analytical, flow, flow+dcqcn, packet)
  --format text|json     text summary (default) or one JSON object (results.json) on stdout
  --out DIR              also write DIR/results.json, and by run kind (docs/results.md):
                         training at flow and above trace.json and report.html (flow+dcqcn
                         and packet add queues.csv and rates.csv); traffic links.csv and
                         report.html (congestion levels add queues.csv, rates.csv); serving
                         trace.json, report.html and requests.csv
  -h, --help             this help
)";

constexpr const char* kValidateUsage = R"(usage: clustersim validate [SUITE.yaml] [options]

Runs every scenario of a validation suite, compares the chosen metric with its published
reference, prints a table and exits 1 when the suite's error budget (written in the suite
file) is exceeded. Default suite: scenarios/validation/ci.yaml.

options:
  --set key.path=value   override a key in every scenario of the suite (repeatable; applied
                         after the suite's `set` and each case's own)
  --case LABEL           run only the cases of this label (repeatable); the budgets apply to
                         those rows
  --format text|json     table (default) or JSON rows
  -h, --help             this help
)";

constexpr const char* kProfilesUsage = R"(usage: clustersim profiles [NAME | FILE]

Lists the built-in GPU hardware profiles, or prints one as YAML so that it can be copied,
edited and used with cluster.gpu: path/to/profile.yaml. Given a profile file, checks it as a
run would (exit 2 with every error), prints its notes (values far from any GPU's) and the
values as read.

options:
  -h, --help             this help
)";

constexpr const char* kVersionUsage = R"(usage: clustersim version
       clustersim --version

Prints the version and the source's git commit the binary was built from:
clustersim VERSION (build COMMIT), as results files record them.

options:
  -h, --help             this help
)";

std::string require_format(const Args& args) {
  const std::string format = args.value("--format", "text");
  if (format != "text" && format != "json") throw UsageError{"--format must be text or json, got '" + format + "'"};
  return format;
}

int cmd_run(const std::vector<std::string>& argv) {
  const Args args(argv, {"--set", "--format", "--out", "--fidelity"}, {"--set"}, {"-h", "--help"});
  if (args.has("-h") || args.has("--help")) {
    std::cout << kRunUsage;
    return 0;
  }
  if (args.positionals().size() != 1) throw UsageError{"expected exactly one scenario file"};
  const std::string format = require_format(args);
  // Every file a run may write in --out's DIR.
  static const std::vector<std::string> kOutputs = {"results.json", "links.csv", "trace.json", "report.html",
                                                    "queues.csv",   "rates.csv", "requests.csv"};
  // The files the previous run wrote in DIR (its manifest), of those names.
  const auto previous_outputs = [](const std::filesystem::path& dir) {
    std::vector<std::string> names;
    for (const std::string& n : read_run_manifest(dir)) {
      if (std::find(kOutputs.begin(), kOutputs.end(), n) != kOutputs.end()) names.push_back(n);
    }
    return names;
  };
  // A run that fails, or is stopped, leaves no earlier run's results in DIR to be read as its
  // own (until 2026-12-07 a CI step that checked for results.json read the last good run's): the
  // files the manifest lists go before the run starts (the scenario's own files stay).
  const auto clear_previous = [&](const std::vector<std::string>& inputs) {
    if (!args.has("--out")) return;
    const std::filesystem::path dir(args.value("--out"));
    remove_stale_outputs(dir, previous_outputs(dir), inputs);
    std::error_code ec;
    std::filesystem::remove(dir / kRunManifest, ec);
  };
  ScenarioConfig cfg;
  try {
    cfg = load_scenario_with_flags(args.positionals()[0], args);
  } catch (...) {
    clear_previous({args.positionals()[0]});
    throw;
  }
  // The files the run reads (scenario, profile, trace): its outputs never replace them.
  const std::vector<std::string> inputs = scenario_input_files(cfg);
  clear_previous(inputs);
  report::RunOptions run_options;
  run_options.heartbeat = true;
  report::RunOutput out = report::run_scenario(cfg, run_options);
  // The build that computed it: results.json matched to the build in a nightly job (added 2026-12-06).
  out.results.set("clustersim", report::build_stamp());
  // What it was computed from: the input files' digests and the flags (added 2026-12-07).
  out.results.set("inputs", inputs_stamp(inputs, args.values("--set"), args.value("--fidelity", "")));
  for (const std::string& note : out.notes) std::cerr << "note: " << note << "\n";
  std::vector<std::string> written;
  if (args.has("--out")) {
    const std::filesystem::path dir(args.value("--out"));
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw BadInput(InputError{dir.string(), 0, "--out", "cannot create the directory: " + ec.message()});
    std::vector<std::pair<std::string, const std::string*>> files = {{"results.json", nullptr}};
    if (!out.links_csv.empty()) files.emplace_back("links.csv", &out.links_csv);
    for (const auto& [name, text] : out.extra_files) files.emplace_back(name, &text);
    if (!out.trace_json.empty()) files.emplace_back("trace.json", &out.trace_json);
    if (!out.report_html.empty()) files.emplace_back("report.html", &out.report_html);
    const std::string results = out.results.dump(2);
    for (const auto& [name, text] : files) refuse_overwriting(dir / name, inputs, "--out");
    std::vector<std::string> names;
    for (const auto& [name, text] : files) names.push_back(name);
    // Listed before they are written, so that a run stopped while writing leaves its files to
    // the next run to clear.
    write_run_manifest(dir, names);
    for (const auto& [name, text] : files) {
      write_text_file(dir / name, text ? *text : results, "--out");
      written.push_back((dir / name).string());
    }
    // What an earlier run wrote here went before this one started (clear_previous; a flow
    // run's trace beside an analytical run's results stayed until 2026-12-06, and read as this
    // run's): only what the manifest says clustersim wrote (since 2026-12-07), never the
    // scenario's own files.
  }
  if (format == "json") {
    std::cout << out.results.dump(2);
  } else {
    std::cout << out.summary;
    if (!written.empty()) std::cout << "\n";
    for (const std::string& f : written) std::cout << "wrote " << f << "\n";
  }
  return 0;
}

std::string default_suite() {
  const std::filesystem::path local = "scenarios/validation/ci.yaml";
  std::error_code ec;
  if (std::filesystem::exists(local, ec)) return local.string();
  return (std::filesystem::path(CLUSTERSIM_SOURCE_DIR) / local).string();
}

int cmd_validate(const std::vector<std::string>& argv) {
  const Args args(argv, {"--set", "--format", "--case"}, {"--set", "--case"}, {"-h", "--help"});
  if (args.has("-h") || args.has("--help")) {
    std::cout << kValidateUsage;
    return 0;
  }
  if (args.positionals().size() > 1) throw UsageError{"expected at most one suite file"};
  const std::string format = require_format(args);
  const std::string path = args.positionals().empty() ? default_suite() : args.positionals()[0];
  report::ValidationSuite suite = report::load_validation_suite(path);
  cli::refuse_repeated_sets(args.values("--set"));
  // One row or a few, as a CI job reruns the one that moved (since 2026-12-07).
  if (const std::vector<std::string> wanted = args.values("--case"); !wanted.empty()) {
    std::string labels;
    for (const report::ValidationCase& c : suite.cases) {
      if (labels.find("'" + c.label + "'") == std::string::npos) labels += (labels.empty() ? "'" : ", '") + c.label + "'";
    }
    for (const std::string& w : wanted) {
      const bool known = std::any_of(suite.cases.begin(), suite.cases.end(),
                                     [&w](const report::ValidationCase& c) { return c.label == w; });
      if (!known) throw UsageError{"--case '" + w + "': no case of " + path + " has this label; its labels: " + labels};
    }
    std::erase_if(suite.cases, [&wanted](const report::ValidationCase& c) {
      return std::find(wanted.begin(), wanted.end(), c.label) == wanted.end();
    });
  }
  const report::ValidationResult result = report::run_validation(suite, args.values("--set"));
  // A setting a case's run does not use is said, as run says it (validate dropped the notes until
  // 2026-12-06, so a --set with no effect passed unremarked).
  // Each note once, with the cases it concerns (ci-flow.yaml said one ten times until 2026-12-07).
  std::vector<std::pair<std::string, std::vector<std::string>>> notes;  // text -> labels, in order met
  for (const report::ValidationRow& r : result.rows) {
    for (const std::string& note : r.notes) {
      auto it = std::find_if(notes.begin(), notes.end(), [&](const auto& n) { return n.first == note; });
      if (it == notes.end()) it = notes.insert(notes.end(), {note, {}});
      it->second.push_back(r.c.label);
    }
  }
  for (const auto& [note, labels] : notes) {
    std::string who;
    for (size_t i = 0; i < labels.size() && i < 3; ++i) who += (i ? ", " : "") + labels[i];
    if (labels.size() > 3) who += " and " + std::to_string(labels.size() - 3) + " more";
    std::cerr << "note: " << who << ": " << note << "\n";
  }
  if (format == "json") {
    report::Json j = report::Json::object();
    j.set("suite", suite.name);
    j.set("clustersim", report::build_stamp());
    j.set("mean_abs_rel_error", result.mean_abs_rel_error);
    j.set("max_abs_rel_error", result.max_abs_rel_error);
    j.set("mean_rel_error", result.mean_rel_error);  // since 2026-12-07
    j.set("budget_mean_abs_rel_error", suite.mean_abs_rel_error);
    // The worst row's budget, when the suite sets one (it decides `passed` too).
    j.set("budget_max_abs_rel_error", suite.max_abs_rel_error ? report::Json(*suite.max_abs_rel_error) : report::Json());
    j.set("passed", result.passed);
    report::Json& rows = j.set("rows", report::Json::array());
    for (const report::ValidationRow& r : result.rows) {
      report::Json row = report::Json::object();
      row.set("scenario", r.c.scenario);
      row.set("label", r.c.label);
      row.set("metric", r.c.metric);
      row.set("reference", r.c.reference);
      row.set("source", r.c.source);
      row.set("predicted", r.predicted);
      row.set("rel_error", r.rel_error);
      row.set("over_max_budget", report::over_max_budget(suite, r));
      if (!r.notes.empty()) {
        report::Json& row_notes = row.set("notes", report::Json::array());
        for (const std::string& n : r.notes) row_notes.push(n);
      }
      rows.push(row);
    }
    std::cout << j.dump(2);
  } else {
    std::cout << report::format_validation(suite, result);
  }
  return result.passed ? 0 : 1;
}

int cmd_profiles(const std::vector<std::string>& argv) {
  const Args args(argv, {}, {}, {"-h", "--help"});
  if (args.has("-h") || args.has("--help")) {
    std::cout << kProfilesUsage;
    return 0;
  }
  if (args.positionals().empty()) {
    for (const std::string& name : calib::builtin_profile_names()) {
      const calib::HardwareProfile p = calib::load_hardware_profile(name);
      std::printf("%-16s %s\n", name.c_str(), p.description.c_str());
    }
    return 0;
  }
  if (args.positionals().size() > 1) throw UsageError{"expected at most one profile name"};
  const std::string text = calib::builtin_profile_text(args.positionals()[0]);
  std::error_code ec;
  if (text.empty() && std::filesystem::exists(args.positionals()[0], ec)) {
    // A profile file: checked and shown as read (since 2026-12-07; a profile could be checked only
    // by running a scenario on it).
    const calib::HardwareProfile p = calib::load_hardware_profile(args.positionals()[0]);
    for (const std::string& note : p.notes) std::cerr << "note: " << args.positionals()[0] << ": " << note << "\n";
    std::cout << calib::format_hardware_profile(p);
    return 0;
  }
  if (text.empty()) {
    throw BadInput(InputError{"", 0, "", "no built-in profile named '" + args.positionals()[0] +
                                             "'; 'clustersim profiles' lists them" +
                                             calib::builtin_profile_suggestion(args.positionals()[0])});
  }
  std::cout << text;
  return 0;
}

int cmd_version(const std::vector<std::string>& argv) {
  const Args args(argv, {}, {}, {"-h", "--help"});
  if (args.has("-h") || args.has("--help")) {
    std::cout << kVersionUsage;
    return 0;
  }
  if (!args.positionals().empty()) throw UsageError{"takes no arguments, got '" + args.positionals()[0] + "'"};
  std::cout << "clustersim " << clustersim_version() << " (build " << clustersim_build_id() << ")\n";
  return 0;
}

struct Command {
  std::function<int(const std::vector<std::string>&)> run;
  const char* usage;
};

const std::map<std::string, Command>& commands() {
  static const std::map<std::string, Command> kCommands = {
      {"run", {cmd_run, kRunUsage}},
      {"validate", {cmd_validate, kValidateUsage}},
      {"profiles", {cmd_profiles, kProfilesUsage}},
      {"topo", {cmd_topo, kTopoUsage}},
      {"calibrate", {cmd_calibrate, kCalibrateUsage}},
      {"sweep", {cmd_sweep, kSweepUsage}},
      {"whatif", {cmd_whatif, kWhatIfUsage}},
      {"version", {cmd_version, kVersionUsage}},
  };
  return kCommands;
}

int dispatch(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << kTopUsage;
    return 2;
  }
  const std::string name = argv[1];
  if (name == "-h" || name == "--help" || name == "help") {
    // "help run": that command's usage.
    if (argc == 3) {
      const std::string asked = argv[2];
      const auto cmd = commands().find(asked == "--version" ? "version" : asked);
      if (cmd == commands().end()) {
        std::cerr << "clustersim help: unknown command '" << argv[2] << "'\n\n" << kTopUsage;
        return 2;
      }
      std::cout << cmd->second.usage;
      return 0;
    }
    if (argc > 3) {
      std::cerr << "clustersim help: takes at most one command name\n\n" << kTopUsage;
      return 2;
    }
    std::cout << kTopUsage;
    return 0;
  }
  // "--version" is the command "version" (with its -h / --help; both said "takes no arguments"
  // to --help until 2026-12-05, and "help version" called it unknown).
  const auto it = commands().find(name == "--version" ? "version" : name);
  if (it == commands().end()) {
    std::cerr << "clustersim: unknown command '" << name << "'\n\n" << kTopUsage;
    return 2;
  }
  const std::vector<std::string> rest(argv + 2, argv + argc);
  for (const std::string& a : rest) {
    if (a == "-h" || a == "--help") {
      std::cout << it->second.usage;
      return 0;
    }
  }
  try {
    return it->second.run(rest);
  } catch (const UsageError& e) {
    std::cerr << "clustersim " << name << ": " << e.message << "\n\n" << it->second.usage;
    return 2;
  } catch (const BadInput& e) {
    bool names_set = false;
    for (const InputError& err : e.errors()) {
      const std::string line = err.to_string();
      names_set = names_set || line.find("--set") != std::string::npos;
      std::cerr << "error: " << line << "\n";
    }
    // A plan the overrides broke is reported at the scenario file's key, where the value is not:
    // say which overrides it was read with (unless a message already names --set).
    std::string overrides;
    for (size_t i = 0; i < rest.size(); ++i) {
      const std::string& a = rest[i];
      std::string given;
      if ((a == "--set" || a == "--fidelity") && i + 1 < rest.size()) given = a + " " + rest[i + 1];
      if (a.starts_with("--set=") || a.starts_with("--fidelity=")) given = a;
      if (!given.empty()) overrides += (overrides.empty() ? "" : ", ") + given;
    }
    if (!overrides.empty() && !names_set) std::cerr << "note: read with " << overrides << "\n";
    return 2;
  }
}

}  // namespace
}  // namespace clustersim::cli

int main(int argc, char** argv) {
  // A reader that closes the pipe (`| head`) makes writes fail, reported below with exit 2, as
  // a full disk is; the default SIGPIPE killed the process without a word (exit 141).
  std::signal(SIGPIPE, SIG_IGN);
  try {
    const int rc = clustersim::cli::dispatch(argc, argv);
    // Output that could not be written (a full disk, /dev/full) is a failed run, not a result.
    std::cout.flush();
    if (std::fflush(stdout) != 0 || std::ferror(stdout) || !std::cout) {
      // Exit 2 whatever the command's own code: a failing suite's table lost to /dev/full
      // exited 1, as a suite over budget whose table was read (until 2026-12-07; review).
      std::cerr << "error: writing to standard output failed\n";
      return 2;
    }
    return rc;
  } catch (const std::exception& e) {
    std::cerr << "clustersim: internal error: " << e.what() << "\n";
    return 1;
  } catch (...) {
    std::cerr << "clustersim: internal error\n";
    return 1;
  }
}
