// SPDX-License-Identifier: Apache-2.0
#include "sim/core/unit_parse.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <utility>

namespace clustersim {
namespace {

struct Suffix {
  std::string_view name;
  double scale;
};

// Splits "12.5GiB" into 12.5 and "GiB" and looks the suffix up (case-sensitive: Gbps != GBps).
template <size_t N>
std::optional<double> parse_scaled(std::string_view text, const Suffix (&suffixes)[N]) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.' ||
                             text[i] == 'e' || text[i] == 'E' || text[i] == '+' || text[i] == '-')) {
    ++i;
  }
  if (i == 0) return std::nullopt;
  double value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + i, value);
  if (ec != std::errc() || ptr != text.data() + i) return std::nullopt;
  // No sign: '-0us' passed as zero until 2026-12-05 (-0.0 is not below zero).
  if (!std::isfinite(value) || std::signbit(value)) return std::nullopt;
  std::string_view unit = text.substr(i);
  while (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
  for (const Suffix& s : suffixes) {
    if (unit == s.name) {
      const double scaled = value * s.scale;
      if (!std::isfinite(scaled)) return std::nullopt;
      return scaled;
    }
  }
  return std::nullopt;
}

constexpr Suffix kTimeSuffixes[] = {{"ps", 1e-12}, {"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3},
                                    {"s", 1.0},    {"min", 60},  {"h", 3600},   {"d", 86400}};
constexpr Suffix kByteSuffixes[] = {
    {"B", 1},       {"KB", 1e3},           {"MB", 1e6},
    {"GB", 1e9},    {"TB", 1e12},          {"PB", 1e15},
    {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0}, {"PiB", 1125899906842624.0}};
constexpr Suffix kBandwidthSuffixes[] = {
    {"bps", 1.0 / 8}, {"Kbps", 1e3 / 8}, {"Mbps", 1e6 / 8}, {"Gbps", 1e9 / 8}, {"Tbps", 1e12 / 8}, {"Pbps", 1e15 / 8},
    {"Bps", 1.0},     {"KBps", 1e3},     {"MBps", 1e6},     {"GBps", 1e9},     {"TBps", 1e12},     {"PBps", 1e15}};
constexpr Suffix kFlopSuffixes[] = {{"FLOPS", 1}, {"GFLOPS", 1e9}, {"TFLOPS", 1e12}, {"PFLOPS", 1e15}};

}  // namespace

std::optional<Time> parse_time(std::string_view text) {
  const auto v = parse_scaled(text, kTimeSuffixes);
  if (!v || *v > 9.0e6) return std::nullopt;  // beyond Time's +-106 day range
  // Below half a picosecond a duration would round to none: refused rather than read as 0
  // (`0.0001ps` dropped a step stall without a word until 2026-12-07).
  if (*v != 0 && std::abs(*v) < 0.5e-12) return std::nullopt;
  return Time::s(*v);
}

std::optional<Bytes> parse_bytes(std::string_view text) {
  const auto v = parse_scaled(text, kByteSuffixes);
  if (!v || *v > 9.0e18) return std::nullopt;
  // Whole bytes: a size the rounding would change by more than 0.1% is refused (1.5B moved 2 B
  // until 2026-12-06); 0.3KiB, 307.2 B, is 307.
  if (std::abs(std::round(*v) - *v) > 1e-3 * *v) return std::nullopt;
  return bytes_of(*v);
}

std::optional<Bandwidth> parse_bandwidth(std::string_view text) {
  const auto v = parse_scaled(text, kBandwidthSuffixes);
  // 1 Mbps .. 1 Pbps: below, transfers of a few GiB outlast Time's range; above, nothing exists.
  if (!v || *v < kMinBandwidth.bytes_per_s || *v > kMaxBandwidth.bytes_per_s) return std::nullopt;
  return Bandwidth{*v};
}

std::optional<FlopRate> parse_flop_rate(std::string_view text) {
  const auto v = parse_scaled(text, kFlopSuffixes);
  if (!v) return std::nullopt;
  return FlopRate{*v};
}

}  // namespace clustersim
