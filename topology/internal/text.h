// SPDX-License-Identifier: Apache-2.0
// Small text helpers shared by the topology sources (thousands separators, short decimals).
#pragma once

#include <cstdint>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "sim/core/units.h"

namespace clustersim::topo::internal {

// 131072 -> "131,072" (sim/core/units.h).
using clustersim::with_commas;

// A decimal with at most `digits` places and no trailing zeros: 1.5 -> "1.5", 3.0 -> "3".
inline std::string short_decimal(double v, int digits = 2) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  std::string s(buf);
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

// As short_decimal with `digits` places from 1 up, and `digits` significant digits below 1, in
// plain decimals (0.0004 -> "0.0004", 4e-07 -> "0.0000004"), so a positive value never prints as
// "0": a link degraded by a factor of 1e-6 still shows its capacity. 0 prints "0". No exponent
// (since 2026-12-06: "5e-05" in a DOT export was a syntax error to Graphviz).
inline std::string nonzero_decimal(double v, int digits = 3) {
  if (v == 0 || v >= 1 || v <= -1) return short_decimal(v, digits);
  const int places = digits - 1 - static_cast<int>(std::floor(std::log10(std::fabs(v))));
  return short_decimal(v, std::min(places, 40));
}

// An aggregate rate in the largest fitting decimal unit, with at most `places` decimals: "400
// Gbps", "51.2 Tbps", "3.28 Pbps".
inline std::string aggregate_bandwidth(Bandwidth bw, int places = 2) {
  const double gbps = bw.as_gbps();
  if (gbps >= 1e6) return short_decimal(gbps / 1e6, places) + " Pbps";
  if (gbps >= 1e3) return short_decimal(gbps / 1e3, places) + " Tbps";
  return short_decimal(gbps, places) + " Gbps";
}

// A figure the faults left beside its as-built one: with as many decimals as it takes to read
// differently where the two differ, and its share of the as-built figure to as many places
// ("3.276 Pbps (99.99% of as built)"; until 2026-12-07 one failed host link of 16,384 left
// "3.28 Pbps", the as-built figure). Unchanged, the short form alone.
inline std::string faulted_bandwidth(Bandwidth faulted, Bandwidth built) {
  if (faulted.bytes_per_s == built.bytes_per_s || built.bytes_per_s <= 0) return aggregate_bandwidth(faulted);
  int places = 2;
  while (places < 9 && aggregate_bandwidth(faulted, places) == aggregate_bandwidth(built, places)) ++places;
  const double share = 100 * faulted.bytes_per_s / built.bytes_per_s;
  int pct = 1;
  while (pct < 9 && (short_decimal(share, pct) == "100" || short_decimal(share, pct) == "0") && share > 0) ++pct;
  return aggregate_bandwidth(faulted, places) + " (" + short_decimal(share, pct) + "% of as built)";
}

}  // namespace clustersim::topo::internal
