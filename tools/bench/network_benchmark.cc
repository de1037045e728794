// SPDX-License-Identifier: Apache-2.0
// Flow-level benchmark: shift permutation with 4 QPs per connection on a 3-tier Clos, our fluid
// solver against SimGrid's LMM. Prints wall time, peak memory and their ratio; asserts nothing.
//
//   network_benchmark                      the default cases (fluid up to 16,384 GPUs, LMM up to 4,096)
//   network_benchmark fluid:16384 lmm:1024 chosen cases (solver:gpus)
//   options: --qps N, --routing ecmp|dmodk|spray, --lmm-fast (surf/precision 1e-4, maxmin 1e-3)
//
// Each case runs in a child process (one SimGrid engine per process) so that VmHWM is its own.
#include <sys/wait.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "sim/core/config.h"
#include "sim/core/error.h"
#include "sim/engine/network_bench.h"

namespace {

using clustersim::ScenarioConfig;

struct Case {
  std::string solver;  // "fluid" or "lmm"
  int gpus = 0;
};

struct Settings {
  int qps = 4;
  clustersim::Routing routing = clustersim::Routing::kEcmp;
  bool lmm_fast = false;
};

// The scenario of scenarios/net-shift-16k.yaml at any size: 8 GPUs and 8 rails per node,
// radix-64 full-bisection 3-tier Clos, 400 Gbps NICs, 64 MiB per pair, shift by half the GPUs
// (every flow leaves its pod once there are two or more pods).
ScenarioConfig shift_scenario(const Case& c, const Settings& s) {
  ScenarioConfig cfg;
  cfg.name = "net-shift-" + std::to_string(c.gpus);
  cfg.cluster.gpus = c.gpus;
  cfg.cluster.gpus_per_node = 8;
  cfg.cluster.nics_per_node = 8;
  cfg.cluster.nic_bandwidth = clustersim::gbps(400);
  cfg.network.fidelity = clustersim::Fidelity::kFlow;
  cfg.network.tiers = 3;
  cfg.network.switch_radix = 64;
  cfg.network.routing = s.routing;
  cfg.network.qps_per_connection = s.qps;
  cfg.network.ecmp_seed = 1;
  cfg.network.solver = c.solver == "lmm" ? clustersim::FlowSolver::kLmm : clustersim::FlowSolver::kFluid;
  clustersim::TrafficConfig traffic;
  traffic.pattern = clustersim::TrafficPattern::kShift;
  traffic.bytes_per_pair = clustersim::Bytes::mib(64);
  traffic.shift = c.gpus / 2;
  cfg.traffic = traffic;
  return cfg;
}

double vm_hwm_mib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;  // kB
  }
  return -1;
}

// Runs one case in a child; returns its "key=value ..." line, or an error line.
std::string run_case(const Case& c, const Settings& s) {
  std::fflush(stdout);  // or the child would print the parent's buffered lines again
  int fds[2];
  if (pipe(fds) != 0) return "error=pipe";
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    std::ostringstream line;
    try {
      clustersim::engine::TrafficOptions options;
      if (s.lmm_fast) {
        options.lmm.surf_precision = 1e-4;
        options.lmm.maxmin_precision = 1e-3;
      }
      const auto r = clustersim::engine::run_traffic(shift_scenario(c, s), options);
      line << "flows=" << r.flows << " completion_s=" << r.completion_time.as_s()
           << " ideal_s=" << r.ideal_time.as_s() << " slowdown=" << r.slowdown
           << " wall_s=" << r.wall_seconds << " events=" << r.solver_events
           << " hwm_mib=" << vm_hwm_mib() << "\n";
    } catch (const std::exception& e) {
      line << "error=" << e.what() << "\n";
    }
    const std::string text = line.str();
    if (write(fds[1], text.data(), text.size()) < 0) _exit(2);
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  std::string out;
  char buf[512];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (out.empty()) out = "error=child exited with status " + std::to_string(status);
  return out;
}

std::map<std::string, double> parse(const std::string& line) {
  std::map<std::string, double> v;
  std::istringstream in(line);
  std::string kv;
  while (in >> kv) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos) continue;
    try {
      v[kv.substr(0, eq)] = std::stod(kv.substr(eq + 1));
    } catch (const std::exception&) {
    }
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  Settings settings;
  std::vector<Case> cases;
  const char* usage =
      "usage: network_benchmark [--qps N] [--routing ecmp|dmodk|spray] [--lmm-fast] [fluid:GPUS|lmm:GPUS ...]\n";
  // A positive whole number, or 0 when the text is not one.
  const auto count = [](const std::string& text) {
    int v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    return ec == std::errc() && end == text.data() + text.size() && v > 0 ? v : 0;
  };
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::cout << usage;
      return 0;
    }
    if (arg == "--qps" && i + 1 < argc && count(argv[i + 1]) > 0) {
      settings.qps = count(argv[++i]);
    } else if (arg == "--routing" && i + 1 < argc &&
               (!std::strcmp(argv[i + 1], "ecmp") || !std::strcmp(argv[i + 1], "dmodk") ||
                !std::strcmp(argv[i + 1], "spray"))) {
      const std::string r = argv[++i];
      settings.routing = r == "dmodk" ? clustersim::Routing::kDmodK
                         : r == "spray" ? clustersim::Routing::kSpray
                                        : clustersim::Routing::kEcmp;
    } else if (arg == "--lmm-fast") {
      settings.lmm_fast = true;
    } else if (const size_t colon = arg.find(':'); colon != std::string::npos &&
                                                   (arg.substr(0, colon) == "fluid" || arg.substr(0, colon) == "lmm") &&
                                                   count(arg.substr(colon + 1)) > 0) {
      cases.push_back({arg.substr(0, colon), count(arg.substr(colon + 1))});
    } else {
      std::cerr << "network_benchmark: cannot use '" << arg << "'\n" << usage;
      return 2;
    }
  }
  if (cases.empty()) {
    cases = {{"fluid", 1024}, {"lmm", 1024},  {"fluid", 2048}, {"lmm", 2048},
             {"fluid", 4096}, {"lmm", 4096},  {"fluid", 16384}};
  }

  std::printf("shift permutation, 64 MiB per pair, %d QP/connection, routing %s, radix-64 3-tier Clos%s\n",
              settings.qps, clustersim::to_string(settings.routing),
              settings.lmm_fast ? ", LMM at surf/precision 1e-4, maxmin/precision 1e-3" : "");
  std::printf("%-6s %7s %8s %13s %10s %9s %9s %9s %9s\n", "solver", "gpus", "flows", "completion_ms",
              "ideal_ms", "slowdown", "events", "wall_s", "peak_MiB");
  std::map<int, std::map<std::string, std::map<std::string, double>>> by_size;
  for (const Case& c : cases) {
    const std::string line = run_case(c, settings);
    const auto v = parse(line);
    if (line.rfind("error=", 0) == 0 || v.count("wall_s") == 0) {
      std::printf("%-6s %7d  %s", c.solver.c_str(), c.gpus, line.c_str());
      continue;
    }
    by_size[c.gpus][c.solver] = v;
    std::printf("%-6s %7d %8.0f %13.4f %10.4f %9.2f %9.0f %9.2f %9.1f\n", c.solver.c_str(), c.gpus,
                v.at("flows"), v.at("completion_s") * 1e3, v.at("ideal_s") * 1e3, v.at("slowdown"),
                v.at("events"), v.at("wall_s"), v.at("hwm_mib"));
    std::fflush(stdout);
  }
  for (const auto& [gpus, solvers] : by_size) {
    if (solvers.count("fluid") == 0 || solvers.count("lmm") == 0) continue;
    const auto& f = solvers.at("fluid");
    const auto& l = solvers.at("lmm");
    std::printf("%d GPUs: LMM/fluid wall time %.1fx, memory %.2fx; completion times differ by %.3f%%\n",
                gpus, l.at("wall_s") / f.at("wall_s"), l.at("hwm_mib") / f.at("hwm_mib"),
                100.0 * (f.at("completion_s") - l.at("completion_s")) / l.at("completion_s"));
  }
  return 0;
}
