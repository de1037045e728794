// SPDX-License-Identifier: Apache-2.0
// clustersim-synthetic-probe: writes a synthetic probe file (.pb + .txt) and prints its fit errors.
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <iostream>
#include <string>

#include "calibration/fit/calibrate.h"
#include "calibration/probe_file.h"
#include "calibration/synthetic_probe.h"
#include "sim/core/error.h"

namespace {

constexpr const char* kUsage =
    "usage: clustersim-synthetic-probe -o FILE.pb [--seed N] [--gpus N] [--noise REL]\n"
    "Writes FILE.pb and FILE.txt: probe data generated from known H100-like models with seeded\n"
    "noise (marked synthetic in the file), then fits them and prints the fit-error table.\n";

// The whole of `text` as a number in [lo, hi], or nothing: "1.5" or "-1" for --seed, "nan" or
// "1e308" for --noise were taken (as 1, 2^64 - 1, the default noise and a file of NaN timings)
// until 2026-12-06.
template <typename T>
bool parse_in(const std::string& text, T lo, T hi, T& out) {
  T v{};
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || ptr != end || text.empty()) return false;
  if constexpr (std::is_floating_point_v<T>) {
    if (!std::isfinite(v)) return false;
  }
  if (v < lo || v > hi) return false;
  out = v;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace clustersim::calib;
  std::string out;
  uint64_t seed = 1;
  int gpus = 8;
  double noise = -1;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "clustersim-synthetic-probe: " << arg << " needs a value\n" << kUsage;
        std::exit(2);
      }
      return argv[++i];
    };
    const auto bad = [&](const std::string& v, const char* expected) {
      std::cerr << "clustersim-synthetic-probe: " << arg << " " << v << ": expected " << expected << "\n";
      return 2;
    };
    if (arg == "-o") {
      out = value();
    } else if (arg == "--seed") {
      const std::string v = value();
      if (!parse_in<uint64_t>(v, 0, UINT64_MAX, seed)) return bad(v, "a whole number from 0 to 2^64 - 1");
    } else if (arg == "--gpus") {
      const std::string v = value();
      if (!parse_in<int>(v, 1, 1024, gpus)) return bad(v, "a whole number of GPUs from 1 to 1024");
    } else if (arg == "--noise") {
      const std::string v = value();
      if (!parse_in<double>(v, 0.0, 1.0, noise)) return bad(v, "a relative noise from 0 to 1 (0.02 is 2%)");
    } else if (arg == "-h" || arg == "--help") {
      std::cout << kUsage;
      return 0;
    } else {
      std::cerr << "clustersim-synthetic-probe: unknown argument '" << arg << "'\n" << kUsage;
      return 2;
    }
  }
  if (out.empty() || gpus < 1) {
    std::cerr << kUsage;
    return 2;
  }
  // The file is binary protobuf with a .txt summary beside it: a name of another kind (a profile's
  // .yaml) would be overwritten with it (QA 2026-12-07).
  if (!out.ends_with(".pb")) {
    std::cerr << "clustersim-synthetic-probe: -o needs a probe file name ending in .pb, got '" << out << "'\n";
    return 2;
  }
  ProbeData data;
  try {
    SyntheticTruth truth = synthetic_h100_truth(gpus);
    if (noise >= 0) truth.model_noise = noise;
    data = make_synthetic_probe(truth, seed);
  } catch (const std::exception& e) {
    std::cerr << "clustersim-synthetic-probe: " << e.what() << "\n";
    return 1;
  }
  // Where the files cannot be written is the caller's input: exit 2, with the system's reason.
  const std::string txt = out.substr(0, out.size() - 3) + ".txt";
  try {
    write_probe_file(data, out);
    errno = 0;
    std::ofstream summary(txt);
    summary << format_probe_summary(data);
    summary.flush();
    if (!summary) {
      throw std::runtime_error("cannot write " + txt + ": " + clustersim::io_reason());
    }
  } catch (const std::exception& e) {
    std::cerr << "clustersim-synthetic-probe: -o: " << e.what() << "\n";
    return 2;
  }
  try {
    std::cout << "wrote " << out << " (" << data.measurement_count() << " measurements) and "
              << txt << "\n\n";
    const CalibrationResult result = calibrate({read_probe_file(out)});
    std::cout << format_parameters(result) << "\n" << format_error_table(result);
  } catch (const std::exception& e) {
    std::cerr << "clustersim-synthetic-probe: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
