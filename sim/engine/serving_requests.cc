// SPDX-License-Identifier: Apache-2.0
#include "sim/engine/serving_requests.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <cmath>
#include <filesystem>
#include <limits>
#include <sstream>

#include "sim/core/error.h"
#include "sim/core/text_file.h"

namespace clustersim::engine {
namespace {

// Uniform double in [0, 1) from the top 53 bits: the same on every standard library.
double unit(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

}  // namespace

int draw_length(const LengthConfig& l, std::mt19937_64& rng) {
  const int hi = l.max > 0 ? l.max : std::numeric_limits<int>::max();
  switch (l.dist) {
    case LengthDist::kFixed: return l.mean;
    case LengthDist::kUniform:
      return l.min + static_cast<int>(unit(rng) * static_cast<double>(l.max - l.min + 1));
    case LengthDist::kExponential: {
      const double v = -std::log(1.0 - unit(rng)) * l.mean;
      return static_cast<int>(std::clamp<double>(std::llround(v), l.min, hi));
    }
  }
  return l.mean;
}

namespace {

// The fields of one CSV line, trimmed, with surrounding quotes (double or single) removed and
// what they held trimmed too (" 0.5 " is 0.5).
std::vector<std::string> csv_fields(const std::string& line) {
  const auto trim = [](const std::string& f) {
    const size_t a = f.find_first_not_of(" \t\r");
    const size_t b = f.find_last_not_of(" \t\r");
    return a == std::string::npos ? std::string() : f.substr(a, b - a + 1);
  };
  std::vector<std::string> out;
  std::istringstream fields(line);
  std::string field;
  while (std::getline(fields, field, ',')) {
    field = trim(field);
    if (field.size() >= 2 && (field.front() == '"' || field.front() == '\'') && field.back() == field.front()) {
      field = trim(field.substr(1, field.size() - 2));
    }
    out.push_back(field);
  }
  if (!line.empty() && line.back() == ',') out.emplace_back();
  return out;
}

// Text from a trace file as a message shows it: at most 120 bytes, cut at a UTF-8 character's
// start, with control bytes and DEL as \xNN (a NUL printed as nothing, a 50 KB line whole, a
// character cut in half, until 2026-12-07).
std::string shown(const std::string& text) {
  size_t end = std::min<size_t>(text.size(), 120);
  while (end < text.size() && end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  std::string out;
  for (size_t i = 0; i < end; ++i) {
    const auto u = static_cast<unsigned char>(text[i]);
    if ((u < 0x20 && text[i] != '\t') || u == 0x7f) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\x%02x", u);
      out += esc;
    } else {
      out += text[i];
    }
  }
  if (end < text.size()) out += "... (" + std::to_string(text.size()) + " bytes)";
  return out;
}

}  // namespace

std::vector<ServingRequest> parse_request_trace(const std::string& text, const std::string& origin, int max_context) {
  std::vector<ServingRequest> out;
  // Compressed or UTF-16 text is said as such (its bytes were echoed as a bad header until
  // 2026-12-07; QA).
  if (text.rfind("\x1f\x8b", 0) == 0) {
    throw BadInput(InputError{origin, 1, "inference.trace", "is gzip-compressed; decompress it (gunzip) and name the CSV"});
  }
  if (text.rfind("\xFF\xFE", 0) == 0 || text.rfind("\xFE\xFF", 0) == 0) {
    throw BadInput(InputError{origin, 1, "inference.trace", "is UTF-16 text; save it as UTF-8 (or ASCII) CSV"});
  }
  // A UTF-8 byte-order mark (spreadsheets write one) is not part of the first line.
  std::string body = text.rfind("\xEF\xBB\xBF", 0) == 0 ? text.substr(3) : text;
  // Old Mac line ends (a lone CR) are line breaks, as in YAML files: the whole file read as one
  // line, refused as "found 7 fields" on line 1 (until 2026-12-05). CRLF stays (the CR is trimmed).
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i] == '\r' && (i + 1 >= body.size() || body[i + 1] != '\n')) body[i] = '\n';
  }
  std::istringstream in(body);
  std::string line;
  int n = 0;
  bool first_content = true;
  static const std::string kColumns[] = {"arrival_s", "prompt_tokens", "output_tokens"};
  std::array<int, 3> column = {0, 1, 2};  // the file's field of each of kColumns (a header may reorder them)
  while (std::getline(in, line)) {
    ++n;
    const size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    const std::vector<std::string> fields = csv_fields(line);
    // The first line that is not blank or a comment may name the columns (no field starts like a
    // number: arrival_s, "arrival_s"; 'nan,1,1' is a bad request, not a header); no later line may.
    const bool header = first_content && std::none_of(fields.begin(), fields.end(), [](const std::string& f) {
      return !f.empty() && (std::isdigit(static_cast<unsigned char>(f[0])) || f[0] == '.' || f[0] == '+' || f[0] == '-');
    });
    first_content = false;
    const auto bad = [&](const std::string& why) {
      return BadInput(InputError{origin, n, "inference.trace", why + "; got '" + shown(line) + "'"});
    };
    if (header) {
      // A header names the three columns, in any order, each once; anything else is a mistyped
      // request or a file of other columns, not a header (until 2026-12-05 only their number was
      // checked, and 'prompt_tokens,output_tokens,arrival_s' read prompts as arrival times).
      if (fields.size() != 3) {
        throw bad("a header names 3 columns, arrival_s,prompt_tokens,output_tokens; found " +
                  std::to_string(fields.size()));
      }
      std::array<int, 3> at = {-1, -1, -1};
      for (int f = 0; f < 3; ++f) {
        const std::string& name = fields[static_cast<size_t>(f)];  // trimmed, unquoted
        // Each column by its name or the name without its unit (arrival, prompt, output).
        int k = 0;
        while (k < 3 && name != kColumns[k] && name != kColumns[k].substr(0, kColumns[k].find('_'))) ++k;
        if (k == 3) {
          throw bad("a header's columns are arrival_s, prompt_tokens and output_tokens (or arrival, prompt and "
                    "output), in any order; '" + shown(name) + "' is not one");
        }
        int& slot = at[static_cast<size_t>(k)];
        if (slot >= 0) throw bad("a header names each column once; '" + shown(name) + "' is named twice");
        slot = f;
      }
      column = at;
      continue;
    }
    if (fields.size() != 3) {
      throw bad("expected 3 fields, arrival_s,prompt_tokens,output_tokens (a header only on the first line that "
                "is not blank or a comment), found " + std::to_string(fields.size()));
    }
    // A decimal number ("0.5", "1e3"): from_chars takes no sign, hexadecimal or locale's comma.
    double arrival = 0;
    const std::string& a = fields[static_cast<size_t>(column[0])];
    const auto [end, ec] = std::from_chars(a.data(), a.data() + a.size(), arrival);
    if (a.empty() || a[0] == '-' || ec != std::errc() || end != a.data() + a.size() || !std::isfinite(arrival) ||
        arrival < 0 || arrival > kMaxArrivalSeconds) {
      throw bad("arrival_s must be a decimal number of seconds in [0, 1e6]");
    }
    long long tokens[2] = {0, 0};
    for (int i = 0; i < 2; ++i) {
      const std::string& f = fields[static_cast<size_t>(column[static_cast<size_t>(i + 1)])];
      const auto [ptr, token_ec] = std::from_chars(f.data(), f.data() + f.size(), tokens[i]);
      if (f.empty() || token_ec != std::errc() || ptr != f.data() + f.size() || tokens[i] < 1 || tokens[i] > (1 << 24)) {
        throw bad(kColumns[i + 1] + " must be a whole number from 1 to 16777216");
      }
    }
    const long long prompt = tokens[0], output = tokens[1];
    if (max_context > 0 && prompt + output > max_context) {
      throw BadInput(InputError{origin, n, "inference.trace",
                                "prompt + output is " + std::to_string(prompt + output) +
                                    " tokens, over model.seq_len (" + std::to_string(max_context) +
                                    "), the longest context served; got '" + shown(line) + "'"});
    }
    out.push_back({static_cast<int64_t>(out.size()), Time::s(arrival), static_cast<int>(prompt), static_cast<int>(output)});
  }
  if (out.empty()) throw BadInput(InputError{origin, 0, "inference.trace", "the trace has no requests"});
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.arrival < b.arrival; });
  for (size_t i = 0; i < out.size(); ++i) out[i].id = static_cast<int64_t>(i);
  return out;
}

std::string trace_file_path(const std::string& trace, const std::string& base_dir) {
  std::filesystem::path p(trace);
  if (p.is_relative() && !base_dir.empty()) p = std::filesystem::path(base_dir) / p;
  return p.string();
}

std::vector<ServingRequest> make_requests(const InferenceConfig& in, const std::string& base_dir, int max_context) {
  if (!in.trace.empty()) {
    const std::string p = trace_file_path(in.trace, base_dir);
    constexpr size_t kMaxTraceBytes = size_t{256} << 20;  // about 10 million requests
    std::string text;
    try {
      text = read_text_file(p, kMaxTraceBytes, "a request trace (CSV)");
    } catch (const BadInput& e) {
      // Name the key that gave the path (relative paths are resolved beside the scenario).
      std::vector<InputError> errors = e.errors();
      for (InputError& err : errors) {
        if (err.key_path.empty()) err.key_path = "inference.trace";
      }
      throw BadInput(errors);
    }
    std::vector<ServingRequest> out = parse_request_trace(text, p, max_context);
    // Replayed trace_speed times as fast: every arrival divided by it (the order unchanged), and
    // still within the arrivals' range (a speed under 1 pushed them past it unchecked; review).
    if (in.trace_speed != 1.0) {
      for (ServingRequest& r : out) r.arrival = Time::s(r.arrival.as_s() / in.trace_speed);
      if (!out.empty() && out.back().arrival.as_s() > kMaxArrivalSeconds) {
        char buf[200];
        std::snprintf(buf, sizeof buf, "the last arrival, %.6g s, is %.6g s at this speed, past the %.0e s an arrival may take",
                      out.back().arrival.as_s() * in.trace_speed, out.back().arrival.as_s(), kMaxArrivalSeconds);
        throw BadInput(InputError{"", 0, "inference.trace_speed", buf});
      }
    }
    return out;
  }
  std::mt19937_64 rng(in.seed);
  std::vector<ServingRequest> out;
  out.reserve(static_cast<size_t>(in.requests));
  double t = 0;
  for (int i = 0; i < in.requests; ++i) {
    t += -std::log(1.0 - unit(rng)) / in.rate_per_s;  // exponential gaps: a Poisson process
    if (t > kMaxArrivalSeconds) {
      throw BadInput(InputError{"", 0, "inference.rate_per_s",
                                "request " + std::to_string(i) + " of " + std::to_string(in.requests) +
                                    " arrives after 1e6 s, the longest span simulated; raise the rate or "
                                    "lower inference.requests"});
    }
    const int prompt = draw_length(in.prompt, rng);
    const int output = draw_length(in.output, rng);
    out.push_back({i, Time::s(t), prompt, output});
  }
  return out;
}

}  // namespace clustersim::engine
