// SPDX-License-Identifier: Apache-2.0
// Command-line parsing for the clustersim subcommands: flags with values, repeatable flags,
// switches and positionals, with errors that say which flag and what was expected.
#pragma once

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "sim/core/config.h"

namespace clustersim::cli {

// Thrown for bad usage; main prints the message and the subcommand's usage line, exit code 2.
struct UsageError {
  std::string message;
};

class Args {
 public:
  // `with_value`: flags that take a value ("--out DIR" or "--out=DIR"); `repeatable` is a subset;
  // `switches`: flags without a value. Anything else starting with '-' is an error.
  Args(const std::vector<std::string>& argv, const std::set<std::string>& with_value,
       const std::set<std::string>& repeatable, const std::set<std::string>& switches);

  bool has(const std::string& flag) const;
  std::string value(const std::string& flag, const std::string& fallback = "") const;
  std::vector<std::string> values(const std::string& flag) const;
  // The flag's value as a whole number in [min, max], or `fallback` when the flag is absent;
  // anything else is a UsageError naming the flag and the range.
  long long integer(const std::string& flag, long long fallback, long long min, long long max) const;
  // The same for a real number.
  double number(const std::string& flag, double fallback, double min, double max) const;
  const std::vector<std::string>& positionals() const { return positionals_; }
  // The index into positionals() of the one given right after `flag`'s value ("--export dot FILE":
  // FILE), or -1 when none is.
  int positional_after(const std::string& flag) const;

 private:
  std::map<std::string, std::vector<std::string>> values_;
  std::map<std::string, size_t> value_at_;  // argv index of each flag's (last) value
  std::set<std::string> switches_seen_;
  std::vector<std::string> positionals_;
  std::vector<size_t> positional_at_;  // argv index of each positional
};

// Whether two paths name one file: through links (hard or symbolic) where both exist, else by
// their resolved spelling.
bool same_file(const std::filesystem::path& a, const std::filesystem::path& b);

// Refuses (UsageError naming `flag`) to write `output` where it is one of `inputs`: the run would
// destroy what it read.
void refuse_overwriting(const std::filesystem::path& output, const std::vector<std::string>& inputs,
                        const std::string& flag);

// Output files named by a flag (--out's files, --export, -o): opened for writing, or BadInput
// naming the path, the flag and why ("permission denied"); finish_output checks that everything
// written reached the file; write_text_file does all three, for a regular file through a
// temporary beside it renamed into place (PATH.part), so a stopped run leaves no part of a file.
std::ofstream open_output(const std::filesystem::path& path, const std::string& flag);
// Before the work that produces a file: BadInput when `path` is a directory or its directory does
// not exist or cannot be written in (calibrate fitted and printed everything before saying so,
// until 2026-12-07).
void check_output_path(const std::filesystem::path& path, const std::string& flag);
void finish_output(std::ofstream& out, const std::filesystem::path& path, const std::string& flag);
void write_text_file(const std::filesystem::path& path, const std::string& text, const std::string& flag);

// Removes the regular files `names` in `dir`: what an earlier run of a command wrote there, which
// would otherwise sit beside this run's files as if they were its own. A file that is one of
// `inputs` (what the run read) stays.
void remove_stale_outputs(const std::filesystem::path& dir, const std::vector<std::string>& names,
                          const std::vector<std::string>& inputs);

// `run --out DIR` records the files it wrote in DIR/.clustersim-run, one name a line, so that a
// later run removes only what clustersim wrote (until 2026-12-07 any file of an output's name: a
// user's report.html or a request trace called requests.csv in DIR went with it). Names other
// than a run's outputs, or with a folder, are ignored when read.
inline constexpr const char* kRunManifest = ".clustersim-run";
std::vector<std::string> read_run_manifest(const std::filesystem::path& dir);
void write_run_manifest(const std::filesystem::path& dir, const std::vector<std::string>& names);

// The scenario at `path` with the --set overrides and --fidelity's level (as network.fidelity)
// applied; a --set of network.fidelity that names another level is a UsageError (which one was
// meant is a guess), and a level no scenario takes is said of --fidelity, not of --set.
ScenarioConfig load_scenario_with_flags(const std::string& path, const Args& args);

// A usage error where two --set values set one key, or a key and one inside it.
void refuse_repeated_sets(const std::vector<std::string>& overrides);

}  // namespace clustersim::cli
