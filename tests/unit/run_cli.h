// SPDX-License-Identifier: Apache-2.0
// Runs the clustersim binary as a user would, from the source directory, for the tests that check
// the command line end to end. Needs CLUSTERSIM_CLI (the binary) and CLUSTERSIM_SOURCE_DIR.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace clustersim::testing {

struct CliResult {
  int code = -1;    // exit status; -1 when the process did not exit normally
  std::string out;  // standard output (with standard error when folded)
  std::string err;  // standard error, when not folded into `out`
};

enum class Stderr { kApart, kFolded };

// Runs `clustersim ARGS` in the source directory; ARGS is pasted into a shell command line.
inline CliResult run_cli(const std::string& args, Stderr stderr_to = Stderr::kApart) {
  const std::filesystem::path err_file =
      std::filesystem::temp_directory_path() / ("clustersim_cli_" + std::to_string(::getpid()) + "_stderr");
  const std::string redirect = stderr_to == Stderr::kFolded ? " 2>&1" : " 2>'" + err_file.string() + "'";
  const std::string cmd =
      std::string("cd '") + CLUSTERSIM_SOURCE_DIR + "' && '" + CLUSTERSIM_CLI + "' " + args + redirect;
  CliResult r;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (!pipe) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) r.out.append(buf, n);
  const int status = ::pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (stderr_to == Stderr::kApart) {
    std::ifstream in(err_file, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    r.err = s.str();
    std::filesystem::remove(err_file);
  }
  return r;
}

}  // namespace clustersim::testing
