// SPDX-License-Identifier: Apache-2.0
#include "sim/core/units.h"

#include <cmath>
#include <cstdio>

#include "sim/core/unit_parse.h"

namespace clustersim {
namespace {

std::string format(const char* fmt, double v, const char* unit) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return std::string(buf) + " " + unit;
}

}  // namespace

std::string with_commas(int64_t v) {
  const bool negative = v < 0;
  const std::string digits = std::to_string(negative ? -v : v);
  std::string out;
  const int n = static_cast<int>(digits.size());
  for (int i = 0; i < n; ++i) {
    if (i > 0 && (n - i) % 3 == 0) out += ',';
    out += digits[static_cast<size_t>(i)];
  }
  return negative ? "-" + out : out;
}

std::string format_number(double v) {
  char buf[64];
  if (std::fabs(v) < 9e15 && v == std::floor(v)) {
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
  } else {
    std::snprintf(buf, sizeof buf, "%.10g", v);
  }
  return buf;
}

std::string to_string(Time t) { return seconds_to_string(t.as_s()); }

std::string seconds_to_string(double s) {
  const double a = std::fabs(s);
  // Past 10,000 s in hours, past two days in days, as the scenario keys take them ("4 h", "30 d"),
  // not "8.64e+05 s".
  if (a >= 2 * 86400.0) return format("%.4g", s / 86400, "d");
  if (a >= 1e4) return format("%.4g", s / 3600, "h");
  if (a >= 1.0 || a == 0.0) return format("%.4g", s, "s");
  if (a >= 1e-3) return format("%.4g", s * 1e3, "ms");
  if (a >= 1e-6) return format("%.4g", s * 1e6, "us");
  return format("%.4g", s * 1e9, "ns");
}

std::string to_string(Bytes b) {
  const double v = b.as_double();
  if (v >= 1024.0 * 1024 * 1024) return format("%.2f", v / (1024.0 * 1024 * 1024), "GiB");
  if (v >= 1024.0 * 1024) return format("%.2f", v / (1024.0 * 1024), "MiB");
  if (v >= 1024.0) return format("%.2f", v / 1024.0, "KiB");
  return format("%.0f", v, "B");
}

// Gbps up to 9,999.5 (an aggregate of many links in Tbps, Pbps: "8.185e+04 Gbps" until 2026-12-07).
std::string to_string(Bandwidth bw) {
  const double g = bw.as_gbps();
  if (std::abs(g) >= 9999.5e3) return format("%.4g", g / 1e6, "Pbps");
  if (std::abs(g) >= 9999.5) return format("%.4g", g / 1e3, "Tbps");
  return format("%.4g", g, "Gbps");
}

std::string bytes_rate_string(Bandwidth bw) {
  const double b = bw.bytes_per_s;
  if (std::abs(b) >= 1e12) return format("%.4g", b / 1e12, "TB/s");
  if (std::abs(b) >= 1e9) return format("%.4g", b / 1e9, "GB/s");
  return format("%.4g", b / 1e6, "MB/s");
}

std::string to_string(FlopRate r) { return format("%.4g", r.as_tflops(), "TFLOP/s"); }

}  // namespace clustersim
