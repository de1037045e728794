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

// An aggregate rate in the largest fitting decimal unit: "400 Gbps", "51.2 Tbps", "3.28 Pbps".
inline std::string aggregate_bandwidth(Bandwidth bw) {
  const double gbps = bw.as_gbps();
  if (gbps >= 1e6) return short_decimal(gbps / 1e6) + " Pbps";
  if (gbps >= 1e3) return short_decimal(gbps / 1e3) + " Tbps";
  return short_decimal(gbps) + " Gbps";
}

}  // namespace clustersim::topo::internal
