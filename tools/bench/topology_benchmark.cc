// SPDX-License-Identifier: Apache-2.0
// Builds a 100k+ GPU Clos and prints build/route/export wall times, peak RSS and ECMP collisions.
//
// usage: topology_benchmark [GPUS [RADIX]]     (default 131072 GPUs, radix 128, 3 tiers, rails)
// Figures only; nothing here asserts on time.

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/config.h"
#include "sim/core/error.h"
#include "topology/fabric.h"
#include "topology/fabric_graph.h"
#include "topology/fabric_router.h"
#include "topology/fabric_stats.h"

namespace {

using namespace clustersim;
using namespace clustersim::topo;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Peak resident set size of this process in MiB (VmHWM in /proc/self/status); -1 if unknown.
double peak_rss_mib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::atof(line.c_str() + 6) / 1024.0;
  }
  return -1;
}

struct Collisions {
  double max_load = 0;      // worst link, in flows (a QP counts 1/qps)
  double mean_load = 0;     // over links that carry anything, fabric tiers only
  double share_shared = 0;  // fraction of used fabric link directions carrying more than one flow
};

// Every GPU sends one transfer to (g + shift) mod gpus, split into `qps` sub-flows.
Collisions shift_collisions(const FabricRouter& router, int shift) {
  const Fabric& f = router.fabric();
  std::vector<float> load(static_cast<size_t>(f.link_count()), 0.0f);
  std::vector<Path> paths;
  const float weight = 1.0f / router.options().qps_per_connection;
  for (GpuId g = 0; g < f.gpus(); ++g) {
    router.connection_paths(g, (g + shift) % f.gpus(), 0, paths);
    for (const Path& p : paths) {
      for (LinkId l : p.links()) load[l] += weight;
    }
  }
  Collisions c;
  int used = 0;
  int shared = 0;
  double sum = 0;
  const LinkId first_fabric =
      2 * static_cast<LinkId>(f.cable_count(LinkTier::kNvlink) + f.cable_count(LinkTier::kHost));
  for (LinkId l = 0; l < f.link_count(); ++l) {
    c.max_load = std::max(c.max_load, static_cast<double>(load[l]));
    if (l < first_fabric || load[l] <= 0) continue;
    ++used;
    sum += load[l];
    shared += load[l] > 1.0001f ? 1 : 0;
  }
  c.mean_load = used ? sum / used : 0;
  c.share_shared = used ? static_cast<double>(shared) / used : 0;
  return c;
}

int run(int gpus, int radix) {
  ClusterConfig cluster;
  cluster.gpus = gpus;
  NetworkConfig network;
  network.tiers = 3;
  network.switch_radix = radix;

  const double rss_before = peak_rss_mib();
  auto t0 = Clock::now();
  const Fabric fabric = build_fabric(cluster, network);
  const double build_s = seconds_since(t0);
  const double rss_built = peak_rss_mib();
  std::printf("build_fabric: %d GPUs, radix %d: %.3f s, peak RSS %.1f MiB (%.1f MiB before)\n",
              gpus, radix, build_s, rss_built, rss_before);

  t0 = Clock::now();
  const std::string summary = format_summary(fabric);
  std::printf("format_summary: %.3f s\n%s", seconds_since(t0), summary.c_str());

  // Shifts by one server (mostly under the same rail ToRs), one group (across ToRs of a pod) and
  // one pod (across the core): each GPU sends one transfer, split into qps sub-flows.
  const ClosShape& shape = fabric.shape();
  const int server = shape.gpus_per_node;
  const int group = shape.servers_per_group * server;
  const int pod = shape.groups_per_pod * group;
  std::printf("\nshift permutations, load of the worst link in flows (a sub-flow counts 1/qps):\n");
  for (const auto& [name, shift] : {std::pair{"server", server}, {"group", group}, {"pod", pod}}) {
    if (shift >= gpus) continue;
    for (int qps : {1, 2, 4, 8}) {
      if (qps > 1 && std::string(name) != "pod") continue;
      for (uint64_t seed : {0u, 1u, 2u, 3u, 4u}) {
        const FabricRouter router(fabric, {Routing::kEcmp, seed, qps});
        t0 = Clock::now();
        const Collisions c = shift_collisions(router, shift);
        const double s = seconds_since(t0);
        std::printf(
            "  shift=%s (%d GPUs) ecmp qps=%d seed=%llu: max %.3g, mean %.3g, %.1f%% of used"
            " fabric link directions shared (%.0f ns per route)\n",
            name, shift, qps, static_cast<unsigned long long>(seed), c.max_load, c.mean_load,
            100 * c.share_shared, 1e9 * s / (static_cast<double>(gpus) * qps));
      }
    }
    const Collisions d = shift_collisions(FabricRouter(fabric, {Routing::kDmodK, 0, 1}), shift);
    std::printf("  shift=%s (%d GPUs) dmodk: max %.3g, mean %.3g, %.1f%% shared\n", name, shift,
                d.max_load, d.mean_load, 100 * d.share_shared);
  }
  const int shift = pod < gpus ? pod : server;

  t0 = Clock::now();
  const FabricRouter sprayer(fabric, {Routing::kSpray, 0, 1});
  size_t ranges = 0;
  for (GpuId g = 0; g < gpus; ++g) ranges += sprayer.spray(g, (g + shift) % gpus).hops.size();
  std::printf("  spray: %.0f ns per route, %.2f ranges per route\n", 1e9 * seconds_since(t0) / gpus,
              static_cast<double>(ranges) / gpus);

  t0 = Clock::now();
  const Connectivity conn = check_connectivity(fabric);
  std::printf("\ncheck_connectivity: %.3f s (%d components, %d isolated NICs), peak RSS %.1f MiB\n",
              seconds_since(t0), conn.components, conn.isolated_nics, peak_rss_mib());
  for (const char* format : {"dot", "graphml"}) {
    std::ofstream sink("/dev/null");
    t0 = Clock::now();
    if (std::string(format) == "dot") {
      write_dot(fabric, sink);
    } else {
      write_graphml(fabric, sink);
    }
    std::printf("write_%s: %.3f s, peak RSS %.1f MiB\n", format, seconds_since(t0), peak_rss_mib());
  }
  return 0;
}

// A whole number from 1 to 2^24 (a flag or a typo is not a GPU count), or nothing.
std::optional<int> count_arg(const char* s) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(s, &end, 10);
  if (end == s || *end != '\0' || errno != 0 || v < 1 || v > (1L << 24)) return std::nullopt;
  return static_cast<int>(v);
}

}  // namespace

int main(int argc, char** argv) {
  const char* usage = "usage: topology_benchmark [GPUS (default 131072)] [SWITCH_RADIX (default 128)]\n";
  if (argc > 3) {
    std::fputs(usage, stderr);
    return 2;
  }
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "-h") == 0 || std::strcmp(argv[i], "--help") == 0) {
      std::fputs(usage, stdout);
      return 0;
    }
    if (!count_arg(argv[i])) {
      std::fprintf(stderr, "topology_benchmark: '%s' is not a whole number from 1 to 16777216\n%s", argv[i], usage);
      return 2;
    }
  }
  const int gpus = argc > 1 ? *count_arg(argv[1]) : 131072;
  const int radix = argc > 2 ? *count_arg(argv[2]) : 128;
  try {
    return run(gpus, radix);
  } catch (const clustersim::BadInput& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}
