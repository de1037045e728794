// SPDX-License-Identifier: Apache-2.0
// clustersim-synthetic-probe: writes a synthetic probe file (.pb + .txt) and prints its fit errors.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <iostream>
#include <string>

#include "calibration/fit/calibrate.h"
#include "calibration/probe_file.h"
#include "calibration/synthetic_probe.h"

namespace {

constexpr const char* kUsage =
    "usage: clustersim-synthetic-probe -o FILE.pb [--seed N] [--gpus N] [--noise REL]\n"
    "Writes FILE.pb and FILE.txt: probe data generated from known H100-like models with seeded\n"
    "noise (marked synthetic in the file), then fits them and prints the fit-error table.\n";

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
    try {
      if (arg == "-o") out = value();
      else if (arg == "--seed") seed = std::stoull(value());
      else if (arg == "--gpus") gpus = std::stoi(value());
      else if (arg == "--noise") noise = std::stod(value());
      else if (arg == "-h" || arg == "--help") {
        std::cout << kUsage;
        return 0;
      } else {
        std::cerr << "clustersim-synthetic-probe: unknown argument '" << arg << "'\n" << kUsage;
        return 2;
      }
    } catch (const std::exception&) {
      std::cerr << "clustersim-synthetic-probe: bad number for " << arg << "\n";
      return 2;
    }
  }
  if (out.empty() || gpus < 1) {
    std::cerr << kUsage;
    return 2;
  }
  try {
    SyntheticTruth truth = synthetic_h100_truth(gpus);
    if (noise >= 0) truth.model_noise = noise;
    const ProbeData data = make_synthetic_probe(truth, seed);
    write_probe_file(data, out);
    std::string txt = out;
    if (txt.size() > 3 && txt.ends_with(".pb")) txt.resize(txt.size() - 3);
    txt += ".txt";
    std::ofstream summary(txt);
    summary << format_probe_summary(data);
    if (!summary) throw std::runtime_error("cannot write " + txt);
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
