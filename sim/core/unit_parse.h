// SPDX-License-Identifier: Apache-2.0
// Parsing of unit strings as written in scenarios: "1.5us", "80GiB", "200Gbps", "50GBps", "312TFLOPS".
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "sim/core/units.h"

namespace clustersim {

// Each returns nullopt when `text` is not a finite, non-negative number followed by a known unit.
// Time units: ps ns us ms s min h d. Bytes: B KB MB GB TB PB (powers of 1000) KiB MiB GiB TiB PiB,
// a whole number of bytes (within 0.1%: 1.5B is refused, 0.3KiB is 307 B).
// Bandwidth: bps Kbps Mbps Gbps Tbps (bits/s) and Bps KBps MBps GBps TBps (bytes/s).
// FLOP rate: FLOPS GFLOPS TFLOPS PFLOPS (FLOP/s).
std::optional<Time> parse_time(std::string_view text);
std::optional<Bytes> parse_bytes(std::string_view text);
std::optional<Bandwidth> parse_bandwidth(std::string_view text);
std::optional<FlopRate> parse_flop_rate(std::string_view text);

// One-line descriptions of the accepted forms, for error messages.
inline constexpr const char* kTimeForm = "a duration such as 1.5us, 200ns, 3ms, 2s, 30min, 4h or 2d (0, or at least half a picosecond; at most 104d)";
inline constexpr const char* kBytesForm = "a size such as 64MiB, 80GiB or 1.5GB (B, KB to PB, KiB to PiB; whole bytes)";
inline constexpr const char* kBandwidthForm =
    "a bandwidth between 1Mbps and 1Pbps such as 400Gbps (bits/s) or 50GBps (bytes/s)";
inline constexpr Bandwidth kMinBandwidth{1e6 / 8};
inline constexpr Bandwidth kMaxBandwidth{1e15 / 8};
inline constexpr const char* kFlopRateForm = "a FLOP rate such as 312TFLOPS";

}  // namespace clustersim
