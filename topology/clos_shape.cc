// SPDX-License-Identifier: Apache-2.0
// Clos dimensions from radix and oversubscription, and the checks that reject impossible fabrics.
#include "topology/clos_shape.h"

#include <cassert>
#include <cmath>
#include <cstdio>
#include <limits>

#include "sim/core/error.h"
#include "topology/internal/text.h"

namespace clustersim::topo {
namespace {

using internal::short_decimal;
using internal::with_commas;

constexpr int kMaxRadix = 4096;  // upper end of the search for a radix that fits

// A tier's ports at down:up `ratio`: the radix split at the ratio, or (fewer_uplinks) half of it
// down, as at 1:1, and down / ratio up; nullopt when they are not whole numbers.
std::optional<PortSplit> tier_ports(int radix, double ratio, OversubscriptionBy by) {
  if (by == OversubscriptionBy::kPortSplit) return split_ports(radix, ratio);
  const auto even = split_ports(radix, 1.0);
  if (!even || !std::isfinite(ratio) || ratio < 1.0) return std::nullopt;
  const double up_exact = even->down / ratio;
  const long up = std::lround(up_exact);
  if (up < 1 || std::abs(static_cast<double>(up) - up_exact) > 1e-9 * radix) return std::nullopt;
  return PortSplit{even->down, static_cast<int>(up)};
}

// Grouping and capacity for one radix (cluster size not yet applied); nullopt when the ratios
// give fractional ports or the radix cannot hold one group per pod.
std::optional<ClosShape> size_for_radix(int radix, const ClusterConfig& c, const NetworkConfig& n) {
  ClosShape s;
  s.tiers = n.tiers;
  s.wiring = n.wiring;
  s.oversubscription_by = n.oversubscription_by;
  s.radix = radix;
  s.gpus_per_node = c.gpus_per_node;
  s.nics_per_node = c.nics_per_node;
  const auto tor = tier_ports(radix, n.tor_oversubscription, n.oversubscription_by);
  if (!tor) return std::nullopt;
  s.tor_down = tor->down;
  s.tor_up = tor->up;
  if (n.tiers == 3) {
    const auto agg = tier_ports(radix, n.agg_oversubscription, n.oversubscription_by);
    if (!agg) return std::nullopt;
    s.agg_down = agg->down;
    s.agg_up = agg->up;
    s.max_pods = radix;
  } else {
    s.agg_down = radix;  // spines have no uplinks
    s.agg_up = 0;
    s.max_pods = 1;
  }
  if (n.wiring == Wiring::kRailOptimized) {
    s.servers_per_group = s.tor_down;
    s.tors_per_group = c.nics_per_node;
  } else {
    s.servers_per_group = s.tor_down / c.nics_per_node;
    s.tors_per_group = 1;
  }
  if (s.servers_per_group == 0) return std::nullopt;
  s.groups_per_pod = s.agg_down / s.tors_per_group;
  if (s.groups_per_pod == 0) return std::nullopt;
  s.tors_per_pod = s.groups_per_pod * s.tors_per_group;
  s.aggs_per_pod = s.tor_up;
  s.max_gpus = int64_t{s.max_pods} * s.groups_per_pod * s.servers_per_group * c.gpus_per_node;
  return s;
}

// `other`: the other tier's ratio in a 3-tier fabric (0 in 2 tiers); a radix offered must split both.
std::string ratio_problem(const char* name, int radix, double ratio, double other) {
  if (!(ratio >= 1.0) || !std::isfinite(ratio)) {
    return std::string(name) + " must be a down:up port ratio >= 1; got " + short_decimal(ratio, 3);
  }
  const double up = radix / (1.0 + ratio);
  // As many places as show the ratio and the ports as given (1.0000001 read "1", and its 32 down
  // and 32 up ports looked whole, until 2026-12-06).
  const auto digits = [](double v, int n) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.*g", n, v);
    return std::string(buf);
  };
  std::string msg = std::string(name) + " " + digits(ratio, 15) + " with radix " + std::to_string(radix) + " gives " +
                    digits(radix - up, 10) + " down and " + digits(up, 10) + " up ports; port counts must be whole numbers";
  std::string options, first;
  for (int u : {static_cast<int>(std::floor(up)), static_cast<int>(std::ceil(up))}) {
    // Only splits a scenario may give: at least as many ports down as up, at most 64:1.
    if (u < 1 || u >= radix || radix - u < u || radix - u > kMaxOversubscription * u) continue;
    const std::string split = std::to_string(radix - u) + ":" + std::to_string(u);
    if (first.empty()) first = split;
    if (!options.empty()) options += " or ";
    options += split + " (" + short_decimal(static_cast<double>(radix - u) / u, 4) + ")";
  }
  if (!options.empty()) {
    msg += "; nearest whole splits: " + options + ", written as port counts (" + name + ": \"" + first + "\")";
  }
  // Or keep the ratio on a radix it divides: the nearest radix with whole ports, below and above.
  std::string radices;
  for (const int step : {-1, 1}) {
    for (int k = radix + step; k >= 4 && k <= kMaxRadix && std::abs(k - radix) <= radix / 2; k += step) {
      if (const auto s = split_ports(k, ratio); s && (other <= 0 || split_ports(k, other))) {
        radices += std::string(radices.empty() ? "" : " or ") + std::to_string(k) + " (" + std::to_string(s->down) +
                   ":" + std::to_string(s->up) + ")";
        break;
      }
    }
  }
  if (!radices.empty()) msg += "; or keep " + short_decimal(ratio, 3) + ":1 with network.switch_radix " + radices;
  // The same pods with fewer uplinks (a tapered fabric), where the ratio divides half the radix.
  if (const auto tapered = tier_ports(radix, ratio, OversubscriptionBy::kFewerUplinks)) {
    msg += "; or network.oversubscription_by: fewer_uplinks (" + std::to_string(tapered->down) + ":" +
           std::to_string(tapered->up) + ", the 1:1 pods with fewer uplinks)";
  }
  return msg;
}

// oversubscription_by: fewer_uplinks: half the radix down, down / ratio up, whole.
std::string uplinks_problem(const char* name, int radix, double ratio) {
  if (!(ratio >= 1.0) || !std::isfinite(ratio)) {
    return std::string(name) + " must be a down:up port ratio >= 1; got " + short_decimal(ratio, 3);
  }
  if (radix % 2 != 0) {
    return std::string(name) + " with oversubscription_by: fewer_uplinks keeps half the ports down, as at 1:1; radix " +
           std::to_string(radix) + " is odd";
  }
  const int down = radix / 2;
  std::string msg = std::string(name) + " " + short_decimal(ratio, 3) +
                    " with oversubscription_by: fewer_uplinks keeps " + std::to_string(down) + " of radix " +
                    std::to_string(radix) + "'s ports down (as at 1:1) and gives " + short_decimal(down / ratio) +
                    " up; port counts must be whole numbers";
  std::string options;
  for (int up : {static_cast<int>(std::floor(down / ratio)), static_cast<int>(std::ceil(down / ratio))}) {
    if (up < 1 || up > down || (!options.empty() && options.find(":" + std::to_string(up) + " ") != std::string::npos)) continue;
    options += std::string(options.empty() ? "" : " or ") + std::to_string(down) + ":" + std::to_string(up) + " (" +
               short_decimal(static_cast<double>(down) / up, 4) + ")";
  }
  if (!options.empty()) msg += "; nearest: " + options;
  return msg;
}

std::string describe(const ClusterConfig& c, const NetworkConfig& n) {
  std::string d = std::to_string(n.tiers) + "-tier " + to_string(n.wiring) + " Clos with " +
                  std::to_string(c.nics_per_node) + " NICs per node (ToR " +
                  short_decimal(n.tor_oversubscription) + ":1";
  if (n.tiers == 3) d += ", agg " + short_decimal(n.agg_oversubscription) + ":1";
  return d + ")";
}

}  // namespace

std::optional<PortSplit> split_ports(int radix, double ratio) {
  if (radix < 2 || !std::isfinite(ratio) || ratio < 1.0) return std::nullopt;
  const double up_exact = radix / (1.0 + ratio);
  const long up = std::lround(up_exact);
  if (std::abs(static_cast<double>(up) - up_exact) > 1e-9 * radix) return std::nullopt;
  if (up < 1 || up >= radix) return std::nullopt;
  const int down = radix - static_cast<int>(up);
  if (std::abs(static_cast<double>(down) / up - ratio) > 1e-9 * ratio) return std::nullopt;
  return PortSplit{down, static_cast<int>(up)};
}

ClosShape plan_clos(const ClusterConfig& c, const NetworkConfig& n, const std::string& file) {
  ErrorList errors;
  auto fail = [&](std::string key, std::string message) {
    errors.add(InputError{file, 0, std::move(key), std::move(message)});
  };

  // Checks that do not depend on each other, all reported together.
  if (c.gpus <= 0) fail("cluster.gpus", "must be positive; got " + std::to_string(c.gpus));
  if (c.gpus_per_node <= 0) {
    fail("cluster.gpus_per_node", "must be positive; got " + std::to_string(c.gpus_per_node));
  }
  if (c.nics_per_node <= 0) {
    fail("cluster.nics_per_node", "must be positive; got " + std::to_string(c.nics_per_node));
  }
  if (c.gpus > 0 && c.gpus_per_node > 0 && c.gpus % c.gpus_per_node != 0) {
    fail("cluster.gpus", with_commas(c.gpus) + " GPUs is not a whole number of " +
                             std::to_string(c.gpus_per_node) + "-GPU nodes");
  }
  if (n.tiers != 2 && n.tiers != 3) {
    fail("network.tiers",
         "must be 2 (leaf/spine) or 3 (ToR/agg/core); got " + std::to_string(n.tiers));
  }
  const bool radix_ok = n.switch_radix >= 2;
  if (!radix_ok) {
    fail("network.switch_radix", "must be at least 2 ports; got " + std::to_string(n.switch_radix));
  }
  const bool by_split = n.oversubscription_by == OversubscriptionBy::kPortSplit;
  // An odd radix at 1:1 everywhere is the radix's problem, not the ratios' (the scenario may not
  // write them: both were blamed, with no line, until 2026-12-06).
  // So is an odd radix under fewer_uplinks, which keeps half the ports down whatever the ratio.
  const bool odd_at_one = radix_ok && n.switch_radix % 2 == 1 &&
                          (!by_split || (n.tor_oversubscription == 1.0 && (n.tiers != 3 || n.agg_oversubscription == 1.0)));
  if (odd_at_one && !by_split) {
    fail("network.switch_radix", "must be even with network.oversubscription_by: fewer_uplinks (half the ports down, "
                                 "as at 1:1); got " + std::to_string(n.switch_radix) + ": use " +
                                     std::to_string(n.switch_radix - 1) + " or " + std::to_string(n.switch_radix + 1));
  } else if (odd_at_one) {
    fail("network.switch_radix",
         "must be even for 1:1 switches (half the ports down, half up); got " + std::to_string(n.switch_radix) + ": use " +
             std::to_string(n.switch_radix - 1) + " or " + std::to_string(n.switch_radix + 1) +
             ", or give network.tor_oversubscription" + (n.tiers == 3 ? " and agg_oversubscription" : "") +
             " as port counts (\"" + std::to_string(n.switch_radix / 2 + 1) + ":" + std::to_string(n.switch_radix / 2) + "\")");
  }
  if (radix_ok && !odd_at_one && !tier_ports(n.switch_radix, n.tor_oversubscription, n.oversubscription_by)) {
    fail("network.tor_oversubscription",
         by_split ? ratio_problem("tor_oversubscription", n.switch_radix, n.tor_oversubscription,
                                  n.tiers == 3 ? n.agg_oversubscription : 0.0)
                  : uplinks_problem("tor_oversubscription", n.switch_radix, n.tor_oversubscription));
  }
  if (n.tiers == 3 && radix_ok && !odd_at_one && !tier_ports(n.switch_radix, n.agg_oversubscription, n.oversubscription_by)) {
    fail("network.agg_oversubscription",
         by_split ? ratio_problem("agg_oversubscription", n.switch_radix, n.agg_oversubscription, n.tor_oversubscription)
                  : uplinks_problem("agg_oversubscription", n.switch_radix, n.agg_oversubscription));
  }
  if (n.tiers == 2 && n.agg_oversubscription != 1.0) {
    fail("network.agg_oversubscription",
         "applies to 3-tier fabrics only (spines of a 2-tier Clos have no uplinks); got " +
             short_decimal(n.agg_oversubscription, 3) + " with tiers: 2");
  }
  errors.throw_if_any();

  // The radix must hold at least one group under one aggregation switch.
  const auto tor = *tier_ports(n.switch_radix, n.tor_oversubscription, n.oversubscription_by);
  const std::string radix_text = "radix " + std::to_string(n.switch_radix);
  if (n.wiring == Wiring::kTorPerServer && tor.down < c.nics_per_node) {
    fail("network.switch_radix",
         radix_text + " leaves " + std::to_string(tor.down) + " ToR down ports, fewer than the " +
             std::to_string(c.nics_per_node) + " NICs of one server (tor_per_server wiring)");
    errors.throw_if_any();
  }
  const int agg_down =
      n.tiers == 3 ? tier_ports(n.switch_radix, n.agg_oversubscription, n.oversubscription_by)->down : n.switch_radix;
  const int tors_per_group = n.wiring == Wiring::kRailOptimized ? c.nics_per_node : 1;
  if (agg_down < tors_per_group) {
    fail("network.switch_radix", radix_text + " leaves " + std::to_string(agg_down) +
                                     " aggregation down ports, fewer than the " +
                                     std::to_string(tors_per_group) +
                                     " rail ToRs of one server group");
    errors.throw_if_any();
  }

  std::optional<ClosShape> sized = size_for_radix(n.switch_radix, c, n);
  assert(sized && "checked above");
  ClosShape s = *sized;
  if (c.gpus > s.max_gpus) {
    std::string msg = radix_text + " supports at most " + with_commas(s.max_gpus) + " GPUs in a " +
                      describe(c, n) + "; " + with_commas(c.gpus) + " requested";
    auto fits = [&](int k) {
      const auto bigger = size_for_radix(k, c, n);
      return bigger && bigger->max_gpus >= c.gpus;
    };
    int smallest = 0;
    for (int k = n.switch_radix + 1; k <= kMaxRadix && smallest == 0; ++k)
      smallest = fits(k) ? k : 0;
    int power_of_two = 0;
    for (int k = 2; k <= kMaxRadix && power_of_two == 0; k *= 2) {
      power_of_two = k > n.switch_radix && fits(k) ? k : 0;
    }
    if (smallest > 0) {
      msg += "; radix " + std::to_string(smallest) + " would fit";
      if (power_of_two > smallest) msg += " (as would " + std::to_string(power_of_two) + ")";
    }
    if (n.tiers == 2) msg += " (or use tiers: 3)";
    fail("network.switch_radix", msg);
    errors.throw_if_any();
  }

  s.gpus = c.gpus;
  s.servers = c.gpus / c.gpus_per_node;
  s.nics = s.servers * c.nics_per_node;
  s.groups = (s.servers + s.servers_per_group - 1) / s.servers_per_group;
  s.pods = (s.groups + s.groups_per_pod - 1) / s.groups_per_pod;
  s.tors = s.groups * s.tors_per_group;
  s.aggs = s.pods * s.aggs_per_pod;
  s.cores = s.tiers == 3 ? s.tor_up * s.agg_up : 0;

  // Link directions get dense int32 ids (fabric.h); stay well inside that range.
  const int64_t cables =
      int64_t{s.gpus} + s.nics + int64_t{s.tors} * s.tor_up + int64_t{s.aggs} * s.agg_up;
  if (2 * cables > std::numeric_limits<int32_t>::max()) {
    fail("cluster.gpus", with_commas(c.gpus) + " GPUs need " + with_commas(2 * cables) +
                             " link directions, more than the 2^31 this simulator indexes");
  }
  errors.throw_if_any();
  return s;
}

}  // namespace clustersim::topo
