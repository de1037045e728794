// SPDX-License-Identifier: Apache-2.0
// Analytical-stage throughput of `clustersim sweep` on the 175B sweep (scenarios/sweep-175b.yaml):
// candidates per second in one process, and through the full runner (worker processes, results
// log) with -j 1 and -j 2. Prints figures; asserts nothing.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "sim/core/error.h"
#include "sim/report/sweep/candidate_evaluator.h"
#include "sim/report/sweep/sweep_runner.h"
#include "sim/report/sweep/sweep_spec.h"
#include "sim/report/sweep/sweep_table.h"

namespace {

using clustersim::sweep::CandidateEvaluator;
using clustersim::sweep::CandidateSpace;

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

int main(int argc, char** argv) {
  const char* usage = "usage: sweep_benchmark [SWEEP.yaml (default scenarios/sweep-175b.yaml)]\n";
  if (argc > 2 || (argc == 2 && argv[1][0] == '-')) {
    const bool help = argc == 2 && (std::strcmp(argv[1], "-h") == 0 || std::strcmp(argv[1], "--help") == 0);
    std::fputs(usage, help ? stdout : stderr);
    return help ? 0 : 2;
  }
  const std::string path = argc > 1 ? argv[1] : std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/sweep-175b.yaml";
  const auto t0 = std::chrono::steady_clock::now();
  const clustersim::sweep::SweepSpec spec = [&] {
    try {
      return clustersim::sweep::load_sweep_spec(path);
    } catch (const clustersim::BadInput& e) {
      std::fprintf(stderr, "%s\n", e.what());
      std::exit(2);
    }
  }();
  std::printf("sweep %s: %lld candidates (loaded in %.3f s)\n", spec.name.c_str(),
              static_cast<long long>(spec.candidate_count()), seconds_since(t0));

  {
    const CandidateSpace space(spec);
    CandidateEvaluator eval(space);
    const auto t = std::chrono::steady_clock::now();
    int64_t ok = 0;
    for (int64_t i = 0; i < space.size(); ++i) ok += eval.analytical(i).status == clustersim::sweep::kOk;
    const double s = seconds_since(t);
    std::printf("evaluate only, 1 process:   %8.0f candidates/s  (%.2f s, %lld ran ok)\n",
                static_cast<double>(space.size()) / s, s, static_cast<long long>(ok));
  }
  for (const int jobs : {1, 2}) {
    const auto dir = std::filesystem::temp_directory_path() / ("sweep_benchmark_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    clustersim::sweep::RunOptions o;
    o.jobs = jobs;
    o.top_k = 0;
    o.restart = true;
    o.log_path = (dir / "results.jsonl").string();
    const auto t = std::chrono::steady_clock::now();
    const clustersim::sweep::SweepRun run = clustersim::sweep::run_sweep(spec, o);
    const CandidateSpace space(spec);
    const clustersim::sweep::SweepTable table = clustersim::sweep::build_table(space, run.records);
    const double s = seconds_since(t);
    std::printf("runner -j %d (log + ranking): %8.0f candidates/s = %9.0f per minute  (%.2f s; stage alone %.2f s)\n",
                jobs, static_cast<double>(space.size()) / s, 60.0 * static_cast<double>(space.size()) / s, s,
                run.analytical.seconds);
    std::filesystem::remove_all(dir);
    (void)table;
  }
  std::printf("target: >= 10,000 candidates per minute on a 2-core machine\n");
  return 0;
}
