// SPDX-License-Identifier: Apache-2.0
// The requests a serving simulation answers: Poisson arrivals with drawn prompt and output lengths
// (seeded), or a trace file read line by line with errors naming the line.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "sim/core/config.h"
#include "sim/core/units.h"

namespace clustersim::engine {

struct ServingRequest {
  int64_t id = 0;
  Time arrival;
  int prompt = 0;  // tokens
  int output = 0;  // tokens generated, the first one by the prefill
};

// Draws one length from `l` (see LengthConfig); deterministic for a given generator state on every
// standard library (no std distributions).
int draw_length(const LengthConfig& l, std::mt19937_64& rng);

// The latest arrival simulated: the clock counts picoseconds in 64 bits (about 106 days), and a
// serving study spans minutes to hours.
inline constexpr double kMaxArrivalSeconds = 1e6;

// `requests` Poisson arrivals of rate_per_s with drawn lengths (seeded), or the trace file
// inference.trace (relative to `base_dir`). Sorted by arrival. `max_context` (model.seq_len; 0:
// none) bounds a trace request's prompt + output. Throws BadInput when arrivals pass
// kMaxArrivalSeconds.
// The file inference.trace names: a relative path beside `base_dir` (the scenario's directory).
std::string trace_file_path(const std::string& trace, const std::string& base_dir);

std::vector<ServingRequest> make_requests(const InferenceConfig& in, const std::string& base_dir, int max_context = 0);

// A trace: one request per line "arrival_s,prompt_tokens,output_tokens"; '#' comments, blank
// lines, a leading UTF-8 byte-order mark and a header (the first other line, when it does not
// start like a number) are skipped. Throws BadInput
// naming the line for any other line that is not three numbers (arrivals decimal: no sign,
// hexadecimal or infinity; token counts whole), arrivals outside [0, kMaxArrivalSeconds], and
// prompt + output over `max_context` (when > 0).
std::vector<ServingRequest> parse_request_trace(const std::string& text, const std::string& origin, int max_context = 0);

}  // namespace clustersim::engine
