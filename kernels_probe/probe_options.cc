// SPDX-License-Identifier: Apache-2.0
// Parses clustersim-probe's command line.
#include "kernels_probe/probe_options.h"

#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace clustersim::kernels_probe {
namespace {

bool parse_int(const std::string& text, int min, int& out) {
  char* end = nullptr;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || v < min || v > 1000000) return false;
  out = static_cast<int>(v);
  return true;
}

}  // namespace

uint64_t parse_byte_size(std::string_view text) {
  size_t i = 0;
  uint64_t value = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    value = value * 10 + static_cast<uint64_t>(text[i] - '0');
    if (value > (uint64_t{1} << 50)) return 0;
    ++i;
  }
  if (i == 0) return 0;
  const std::string_view unit = text.substr(i);
  uint64_t scale = 1;
  if (unit.empty() || unit == "B") scale = 1;
  else if (unit == "KiB") scale = uint64_t{1} << 10;
  else if (unit == "MiB") scale = uint64_t{1} << 20;
  else if (unit == "GiB") scale = uint64_t{1} << 30;
  else return 0;
  // At most 2^50 bytes in all (the product wrapped until 2026-12-06: 1099511627777GiB was 1 GiB).
  if (value > (uint64_t{1} << 50) / scale) return 0;
  return value * scale;
}

bool parse_probe_options(int argc, const char* const* argv, ProbeOptions& out, std::string& error,
                         bool& help) {
  help = false;
  bool reps_given = false, warmup_given = false;
  for (int i = 0; i < argc; ++i) {
    if (i > 0) out.command_line += ' ';
    out.command_line += argv[i];
  }
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    auto need_value = [&]() {
      if (!has_value) error = arg + " needs a value";
      return has_value;
    };
    if (arg == "-h" || arg == "--help") {
      help = true;
      return true;
    } else if (arg == "-o" || arg == "--output") {
      if (!need_value()) return false;
      out.output = argv[++i];
    } else if (arg == "--quick") {
      out.quick = true;
    } else if (arg == "--only") {
      if (!need_value()) return false;
      out.gemm = out.attention = out.memory = out.collectives = false;
      std::string list = argv[++i];
      size_t start = 0;
      while (start <= list.size()) {
        const size_t comma = list.find(',', start);
        const std::string item = list.substr(start, comma == std::string::npos ? std::string::npos
                                                                              : comma - start);
        if (item == "gemm") out.gemm = true;
        else if (item == "attention") out.attention = true;
        else if (item == "memory") out.memory = true;
        else if (item == "collectives") out.collectives = true;
        else {
          error = "--only: unknown part '" + item + "' (expected gemm, attention, memory, collectives)";
          return false;
        }
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
    } else if (arg == "--max-bytes") {
      if (!need_value()) return false;
      out.max_bytes = parse_byte_size(argv[++i]);
      if (out.max_bytes < 1024) {
        error = std::string("--max-bytes: expected a size of at least 1KiB like 1GiB or 256MiB, got '") +
                argv[i] + "'";
        return false;
      }
    } else if (arg == "--reps") {
      if (!need_value()) return false;
      if (!parse_int(argv[++i], 1, out.reps)) {
        error = "--reps: expected a whole number >= 1";
        return false;
      }
      reps_given = true;
    } else if (arg == "--warmup") {
      if (!need_value()) return false;
      if (!parse_int(argv[++i], 0, out.warmup)) {
        error = "--warmup: expected a whole number >= 0";
        return false;
      }
      warmup_given = true;
    } else {
      error = "unknown argument '" + arg + "'";
      return false;
    }
  }
  if (out.output.empty()) {
    error = "-o FILE.pb is required";
    return false;
  }
  if (out.quick) {
    if (!reps_given) out.reps = 5;
    if (!warmup_given) out.warmup = 2;
  }
  return true;
}

std::string output_path_problem(const std::string& output) {
  std::error_code ec;
  if (std::filesystem::is_directory(output, ec)) {
    return "-o " + output + ": is a directory; name a file such as " + (std::filesystem::path(output) / "probe.pb").string();
  }
  const std::filesystem::path dir = std::filesystem::path(output).parent_path();
  const std::filesystem::path where = dir.empty() ? std::filesystem::path(".") : dir;
  if (!std::filesystem::is_directory(where, ec) || ::access(where.c_str(), W_OK) != 0) {
    return "-o " + output + ": its directory '" + where.string() + "' does not exist or is not writable";
  }
  return "";
}

}  // namespace clustersim::kernels_probe
