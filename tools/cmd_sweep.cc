// SPDX-License-Identifier: Apache-2.0
// clustersim sweep: screen many plans and clusters (analytical stage, then the best k at the
// flow level), in parallel worker processes and across MPI ranks, resumable.
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <thread>

#include "sim/core/error.h"
#include "sim/report/sweep/candidate_evaluator.h"
#include "sim/report/sweep/sweep_output.h"
#include "sim/report/sweep/sweep_runner.h"
#include "sim/report/sweep/sweep_spec.h"
#include "sim/report/sweep/transport.h"
#include "tools/cli_args.h"
#include "tools/commands.h"
#include "tools/input_files.h"

namespace clustersim::cli {

const char* const kSweepUsage = R"(usage: clustersim sweep SWEEP.yaml [options]
       mpirun -n N clustersim sweep SWEEP.yaml [options]

Screens every candidate of a sweep file (a base scenario plus axes over any scenario keys,
constraints and an objective; see docs/sweep.md) at the analytical level, then re-runs the best
k at the flow level and shows how the ranking changed. Invalid plans are skipped and counted by
reason. Results are appended to DIR/results.jsonl as they finish: run the same command with
--resume after an interruption and it continues where it stopped. Writes DIR/sweep.csv,
DIR/sweep.json (one row per candidate) and DIR/sweep.html (ranking and plots).

options:
  -j, --jobs N       local worker processes (1 to 1,024, default 1); flow-level runs always get
                     a fresh process each (SimGrid runs one simulation per process)
  --out DIR          output directory (default: sweep-out)
  --resume           continue the sweep whose results are in DIR
  --restart          discard the results in DIR and start again
  --top K            candidates re-run at the finer level (0 to 100,000; default: flow_stage.top_k
                     of the sweep file, else 5); 0 skips the second stage
  --no-progress      no progress bar (it is drawn on stderr only when stderr is a terminal)
  -h, --help         this help

MPI: under mpirun (Open MPI) rank 0 reads the log, the candidates are spread over the ranks
(each with its own -j workers) and rank 0 gathers every result into DIR; other ranks write
nothing. Without mpirun the same command runs in one process. A clustersim built without MPI
refuses to run under mpirun with a clear message.
The candidate count is printed on stderr before the first run; a sweep whose results would
not fit in the memory available (up to 6 KiB per candidate) is refused before it starts.
Exit codes: 0 ok, 2 bad sweep file or usage, no valid candidate (the reasons are counted) or
too many candidates for the memory, 1 an internal error, or, once the files are written, a
candidate that failed (its worker crashed or met an internal error; --resume runs it again).
sweep.html and the summary carry the run's timings; sweep.json and sweep.csv are the same from
run to run.
)";

namespace {

// MemAvailable of /proc/meminfo in bytes; a fixed 64 GiB where it cannot be read (not Linux).
int64_t available_memory_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  long long kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit) {
    if (key == "MemAvailable:") return static_cast<int64_t>(kib) * 1024;
  }
  return int64_t{64} << 30;
}

}  // namespace

int cmd_sweep(const std::vector<std::string>& argv) {
  const Args args(argv, {"-j", "--jobs", "--out", "--top", "--stop-after"}, {},
                  {"--resume", "--restart", "--no-progress", "-h", "--help"});
  if (args.has("-h") || args.has("--help")) {
    std::cout << kSweepUsage;
    return 0;
  }
  if (args.positionals().size() != 1) throw UsageError{"expected exactly one sweep file"};
  if (args.has("--resume") && args.has("--restart")) throw UsageError{"--resume and --restart exclude each other"};
  if (args.has("-j") && args.has("--jobs")) throw UsageError{"give -j or --jobs, not both"};

  sweep::RunOptions options;
  options.jobs = static_cast<int>(args.integer(args.has("-j") ? "-j" : "--jobs", 1, 1, 1024));
  options.resume = args.has("--resume");
  options.restart = args.has("--restart");
  if (args.has("--top")) options.top_k = static_cast<int>(args.integer("--top", 0, 0, 100000));
  const long long stop_after = args.integer("--stop-after", 0, 1, 1'000'000'000'000LL);
  if (stop_after > 0) {
    options.after_append = [stop_after](int64_t appended) {
      if (appended >= stop_after) ::kill(::getpid(), SIGKILL);
    };
  }

  // Under mpirun every rank runs this command; rank 0 owns the output directory.
  std::unique_ptr<sweep::Transport> transport;
  if (sweep::launched_by_mpirun()) transport = sweep::make_mpi_transport();
  options.transport = transport.get();
  const bool root = !transport || transport->rank() == 0;

  const sweep::SweepSpec spec = sweep::load_sweep_spec(args.positionals()[0]);
  // Said before the first run (2026-12-05: a 10-million-candidate sweep printed nothing without
  // a terminal until it ended, and held up to 7.7 KB per candidate); refused when it cannot fit.
  // Rank 0 holds the results and decides for every rank (each deciding on its own node's memory
  // could stop some ranks while the others wait for them in the sweep's collectives).
  std::string refusal;
  if (root) {
    std::cerr << "sweep " << spec.name << ": " << with_commas(spec.candidate_count()) << (spec.candidate_count() == 1 ? " candidate, about " : " candidates, about ")
              << (sweep::sweep_memory_estimate(spec.candidate_count()) >> 20) << " MiB of memory for their results\n";
    refusal = sweep::sweep_memory_refusal(spec.candidate_count(), available_memory_bytes());
    for (const std::string& note : sweep::objective_notes(spec)) std::cerr << "note: " << note << "\n";
    // Workers are processes, each with its own memory, which the estimate above leaves out: more
    // than the machine's CPUs only add memory (QA, 2026-12-07: -j 1024 on 2 CPUs took 6.3 GB
    // and ran no faster than -j 2).
    const unsigned cpus = std::thread::hardware_concurrency();
    if (cpus > 0 && options.jobs > static_cast<int>(cpus)) {
      std::cerr << "note: -j " << options.jobs << " runs up to " << options.jobs << " worker processes on " << cpus
                << " CPUs: each holds its own memory (a few MiB each), and more workers than CPUs run no "
                   "faster; -j "
                << cpus << " is enough\n";
    }
  }
  if (transport) {
    std::vector<int64_t> refused = {refusal.empty() ? 0 : 1};
    transport->broadcast(refused);
    if (refused[0] != 0 && refusal.empty()) refusal = "rank 0 refused the sweep: too many candidates for its memory";
  }
  if (!refusal.empty()) throw BadInput(InputError{spec.file, 0, "axes", refusal});
  const std::filesystem::path dir(args.value("--out", "sweep-out"));
  if (root) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw BadInput(InputError{dir.string(), 0, "--out", "cannot create the directory: " + ec.message()});
  }
  // The sweep file, its base and the files they name (a base called sweep.csv was overwritten
  // until 2026-12-05).
  const std::vector<std::string> inputs = sweep_input_files(spec);
  for (const char* name : {"results.jsonl", "sweep.csv", "sweep.json", "sweep.html"}) {
    refuse_overwriting(dir / name, inputs, "--out");
  }
  options.log_path = (dir / "results.jsonl").string();
  // The summary files of an earlier sweep in DIR go once the log is accepted and come back when
  // this sweep ends, so that a sweep stopped or restarted here leaves no other sweep's ranking
  // beside its log (until 2026-12-06 a restarted sweep killed early left the old sweep.json of 10
  // rows beside its 3); a sweep refused at the log (no --resume, another sweep's log) removes
  // nothing.
  options.after_log_opened = [&dir, &inputs] {
    remove_stale_outputs(dir, {"sweep.csv", "sweep.json", "sweep.html"}, inputs);
  };
  std::error_code ec;
  if (root && args.has("--resume") &&
      std::filesystem::status(options.log_path, ec).type() == std::filesystem::file_type::not_found) {
    std::cerr << "note: --resume: no log at " << options.log_path << " (another --out?); starting the sweep afresh\n";
  }
  options.progress = root && !args.has("--no-progress") && ::isatty(STDERR_FILENO);

  sweep::SweepRun run = sweep::run_sweep(spec, options);
  if (!root) return 0;
  const sweep::CandidateSpace space(spec);
  const sweep::SweepTable table = sweep::build_table(space, run.records);
  std::vector<sweep::Record>().swap(run.records);  // the table holds what the files need
  // The notes go into sweep.json and sweep.html too, and are printed after the summary (the
  // objective's were printed at the start).
  run.notes = sweep::objective_notes(spec);
  const size_t said = run.notes.size();
  for (const std::string& note : sweep::analytical_notes(space)) run.notes.push_back("analytical screen: " + note);
  std::vector<int64_t> finalists;
  for (const sweep::Row& row : table.rows) {
    if (row.finer.ran) finalists.push_back(row.index);
  }
  for (const std::string& note : sweep::flow_stage_notes(space, finalists)) run.notes.push_back(note);
  {
    std::vector<int64_t> ranked;
    for (const int64_t at : table.ranking) ranked.push_back(table.rows[static_cast<size_t>(at)].index);
    // The best as the summary ranks it: the finer stage's where it re-ran some.
    const std::map<std::string, double> best =
        !table.finer_ranking.empty() ? table.rows[static_cast<size_t>(table.finer_ranking.front())].finer.metrics
        : table.ranking.empty()      ? std::map<std::string, double>{}
                                     : table.rows[static_cast<size_t>(table.ranking.front())].analytical.metrics;
    for (const std::string& note : sweep::serving_notes(space, ranked, best)) run.notes.push_back(note);
    for (const std::string& note : sweep::memory_notes(space, best)) run.notes.push_back(note);
  }
  if (const std::string note = sweep::folding_mix_note(table); !note.empty()) run.notes.push_back(note);
  const auto write = [&](const std::string& name, const std::string& text) { write_text_file(dir / name, text, "--out"); };
  write("sweep.csv", sweep::sweep_csv(space, table));
  write("sweep.json", sweep::sweep_json_text(space, table, run));
  write("sweep.html", sweep::sweep_html(space, table, run));
  std::cout << sweep::sweep_summary(space, table, run);
  for (size_t i = said; i < run.notes.size(); ++i) std::cerr << "note: " << run.notes[i] << "\n";
  std::cout << "\nwrote " << (dir / "sweep.csv").string() << ", sweep.json, sweep.html (log: results.jsonl)\n";
  // The files are written (they list every skipped candidate), but a sweep that ranks nothing
  // has failed: the axes or constraints exclude every candidate.
  if (const std::string why = sweep::no_valid_candidates(table); !why.empty()) {
    throw BadInput(InputError{spec.file, 0, "", why});
  }
  // A candidate whose worker crashed, or that met an internal error, is the simulator's failure,
  // not the plan's: the sweep's ranking may lack it, so the sweep exits 1 (it exited 0 until
  // 2026-12-06, and a nightly job saw a full ranking).
  int64_t failed = 0;
  for (const sweep::Row& row : table.rows) {
    failed += row.analytical.status == sweep::kFailed || row.finer.status == sweep::kFailed ? 1 : 0;
  }
  if (failed > 0) {
    std::cerr << "error: " << failed << (failed == 1 ? " candidate" : " candidates")
              << " failed (a worker crashed or met an internal error; status 'failed' in sweep.json): the ranking may "
                 "lack them\n";
    return 1;
  }
  return 0;
}

}  // namespace clustersim::cli
