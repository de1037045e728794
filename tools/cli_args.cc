// SPDX-License-Identifier: Apache-2.0
#include "tools/cli_args.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "sim/core/error.h"
#include "sim/core/map_reader.h"
#include "sim/core/scenario.h"
#include "sim/core/yaml_tree.h"

namespace clustersim::cli {

Args::Args(const std::vector<std::string>& argv, const std::set<std::string>& with_value,
           const std::set<std::string>& repeatable, const std::set<std::string>& switches) {
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a.size() < 2 || a[0] != '-' ) {
      positionals_.push_back(a);
      positional_at_.push_back(i);
      continue;
    }
    std::string flag = a;
    std::string value;
    bool inline_value = false;
    if (const auto eq = a.find('='); eq != std::string::npos && a.rfind("--", 0) == 0) {
      flag = a.substr(0, eq);
      value = a.substr(eq + 1);
      inline_value = true;
    } else if (a[1] != '-' && a.size() > 2 && with_value.count(a.substr(0, 2))) {
      // A short option with its value attached, as make and ctest take it: -j2 (refused as an
      // unknown option until 2026-12-07).
      flag = a.substr(0, 2);
      value = a.substr(2);
      inline_value = true;
    }
    if (switches.count(flag)) {
      if (inline_value) throw UsageError{flag + " takes no value"};
      switches_seen_.insert(flag);
    } else if (with_value.count(flag)) {
      if (!inline_value) {
        // "-j --out DIR" would take --out as -j's value and DIR as a positional.
        if (i + 1 >= argv.size() || with_value.count(argv[i + 1]) || switches.count(argv[i + 1])) {
          throw UsageError{flag + " needs a value"};
        }
        value = argv[++i];
      }
      value_at_[flag] = i;
      // An empty value ("--base ''") is no value: taken as absent it would run with the default.
      if (value.empty()) throw UsageError{flag + " needs a value, got ''"};
      auto& slot = values_[flag];
      if (!slot.empty() && !repeatable.count(flag)) throw UsageError{flag + " given more than once"};
      slot.push_back(value);
    } else {
      throw UsageError{"unknown option " + flag};
    }
  }
}

int Args::positional_after(const std::string& flag) const {
  const auto it = value_at_.find(flag);
  if (it == value_at_.end()) return -1;
  for (size_t p = 0; p < positional_at_.size(); ++p) {
    if (positional_at_[p] == it->second + 1) return static_cast<int>(p);
  }
  return -1;
}

bool Args::has(const std::string& flag) const {
  return switches_seen_.count(flag) || values_.count(flag);
}

std::string Args::value(const std::string& flag, const std::string& fallback) const {
  const auto it = values_.find(flag);
  return it == values_.end() ? fallback : it->second.back();
}

std::vector<std::string> Args::values(const std::string& flag) const {
  const auto it = values_.find(flag);
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

long long Args::integer(const std::string& flag, long long fallback, long long min, long long max) const {
  if (!has(flag)) return fallback;
  const std::string text = value(flag);
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  // Decimal digits, with a minus sign where a value below zero is allowed ('-0' passed as 0):
  // strtoll also takes leading spaces and a plus sign.
  const bool plain = !text.empty() && (std::isdigit(static_cast<unsigned char>(text[0])) || (text[0] == '-' && min < 0));
  // A leading zero ("08") is refused as the scenario reader refuses it (README; taken as 8 until
  // 2026-12-06).
  const bool octal = plain && leading_zero(text);
  if (!plain || octal || *end != '\0' || errno == ERANGE || v < min || v > max) {
    throw UsageError{flag + " needs a whole number in [" + std::to_string(min) + ", " + std::to_string(max) +
                     "], got '" + text + "'" + (octal ? " (a plain decimal: no leading zero)" : "")};
  }
  return v;
}

double Args::number(const std::string& flag, double fallback, double min, double max) const {
  if (!has(flag)) return fallback;
  const std::string text = value(flag);
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  // A decimal number: strtod also takes leading spaces, a plus sign and hexadecimal ("0x10"); a
  // minus sign only where a value below zero is allowed ('-0' passed as 0).
  const bool plain = !text.empty() &&
                     (std::isdigit(static_cast<unsigned char>(text[0])) || (text[0] == '-' && min < 0) ||
                      text[0] == '.') &&
                     text.find_first_of("xX") == std::string::npos;
  const bool octal = plain && leading_zero(text);
  if (!plain || octal || *end != '\0' || errno == ERANGE || !std::isfinite(v) || v < min || v > max) {
    std::ostringstream range;
    range << "[" << min << ", " << max << "]";
    throw UsageError{flag + " needs a number in " + range.str() + ", got '" + text + "'" +
                     (octal ? " (a plain decimal: no leading zero)" : "")};
  }
  return v;
}

bool same_file(const std::filesystem::path& a, const std::filesystem::path& b) {
  std::error_code ec;
  if (std::filesystem::exists(a, ec) && std::filesystem::exists(b, ec)) {
    const bool same = std::filesystem::equivalent(a, b, ec);
    if (!ec) return same;
  }
  std::error_code ea, eb;
  const std::filesystem::path ca = std::filesystem::weakly_canonical(a, ea);
  const std::filesystem::path cb = std::filesystem::weakly_canonical(b, eb);
  return !ea && !eb && ca == cb;
}

void refuse_overwriting(const std::filesystem::path& output, const std::vector<std::string>& inputs,
                        const std::string& flag) {
  for (const std::string& in : inputs) {
    if (same_file(output, in)) {
      throw UsageError{flag + " would write " + output.string() + ", which is the input " + in +
                       ": writing it would destroy what was read; choose another path"};
    }
  }
}

std::ofstream open_output(const std::filesystem::path& path, const std::string& flag) {
  errno = 0;
  std::ofstream out(path, std::ios::binary);
  if (!out) throw BadInput(InputError{path.string(), 0, flag, "cannot write the file: " + io_reason()});
  return out;
}

void check_output_path(const std::filesystem::path& path, const std::string& flag) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw BadInput(InputError{path.string(), 0, flag, "is a directory; expected a file to write"});
  }
  // An existing file (or /dev/stdout) is written in place where its directory takes no new name.
  if (std::filesystem::exists(path, ec)) {
    if (::access(path.c_str(), W_OK) != 0) {
      throw BadInput(InputError{path.string(), 0, flag, "cannot write the file: permission denied"});
    }
    return;
  }
  const std::filesystem::path dir = path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
  if (!std::filesystem::is_directory(dir, ec)) {
    throw BadInput(InputError{path.string(), 0, flag, "cannot write the file: no directory " + dir.string()});
  }
  if (::access(dir.c_str(), W_OK) != 0) {
    throw BadInput(InputError{path.string(), 0, flag, "cannot write the file: the directory " + dir.string() + " is not writable"});
  }
}

void finish_output(std::ofstream& out, const std::filesystem::path& path, const std::string& flag) {
  out.flush();
  if (!out) throw BadInput(InputError{path.string(), 0, flag, "writing the file failed: " + io_reason()});
}

void write_text_file(const std::filesystem::path& path, const std::string& text, const std::string& flag) {
  // A regular file (or none yet) is written beside it and renamed into place, so that a run
  // stopped while writing leaves the old file or the new one, never part of one (written in place
  // until 2026-12-06); anything else (/dev/stdout, a pipe) is written as it is.
  const auto in_place = [&] {
    std::ofstream direct = open_output(path, flag);
    direct << text;
    finish_output(direct, path, flag);
  };
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(path, ec);
  if (st.type() != std::filesystem::file_type::not_found && st.type() != std::filesystem::file_type::regular) {
    return in_place();
  }
  std::filesystem::path part = path;
  part += ".part";
  errno = 0;
  std::ofstream out(part, std::ios::binary);
  // No temporary beside it (a directory that takes the file but no new name): in place, and said
  // of the file asked for.
  if (!out) return in_place();
  out << text;
  out.flush();
  if (!out) {
    // A failed write (a full disk) leaves the old file as it was.
    const std::string why = io_reason();
    std::filesystem::remove(part, ec);
    throw BadInput(InputError{path.string(), 0, flag, "writing the file failed: " + why});
  }
  out.close();
  std::filesystem::rename(part, path, ec);
  if (ec) {
    std::filesystem::remove(part, ec);
    throw BadInput(InputError{path.string(), 0, flag, "cannot write the file: " + ec.message()});
  }
}

void remove_stale_outputs(const std::filesystem::path& dir, const std::vector<std::string>& names,
                          const std::vector<std::string>& inputs) {
  for (const std::string& name : names) {
    std::error_code ec;
    const std::filesystem::path p = dir / name;
    if (std::filesystem::status(p, ec).type() != std::filesystem::file_type::regular) continue;
    if (std::any_of(inputs.begin(), inputs.end(), [&](const std::string& in) { return same_file(p, in); })) continue;
    std::filesystem::remove(p, ec);
  }
}

std::vector<std::string> read_run_manifest(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  std::ifstream in(dir / kRunManifest);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.find('/') == std::string::npos && line != "." && line != "..") names.push_back(line);
  }
  return names;
}

void write_run_manifest(const std::filesystem::path& dir, const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& n : names) text += n + "\n";
  write_text_file(dir / kRunManifest, text, "--out");
}

void refuse_repeated_sets(const std::vector<std::string>& overrides) {
  // One key set twice: the last would win without a word (until 2026-12-06), where --fidelity
  // beside a --set of network.fidelity that disagrees is refused.
  // A key and one inside it ('parallelism={tp: 4}' beside 'parallelism.tp=8') set one value too.
  std::map<std::string, std::string> seen;
  for (const std::string& o : overrides) {
    const std::string key = o.substr(0, o.find('='));
    for (const auto& [other, given] : seen) {
      if (paths_overlap(key, other)) throw UsageError{"--set " + given + " and --set " + o + " set one key; give it once"};
    }
    seen.emplace(key, o);
  }
}

ScenarioConfig load_scenario_with_flags(const std::string& path, const Args& args) {
  std::vector<std::string> overrides = args.values("--set");
  refuse_repeated_sets(overrides);
  if (!args.has("--fidelity")) return load_scenario(path, overrides);
  const std::string key = "network.fidelity=";
  for (const std::string& o : overrides) {
    if (o.rfind(key, 0) == 0 && o.substr(key.size()) != args.value("--fidelity")) {
      throw UsageError{"--fidelity " + args.value("--fidelity") + " and --set " + o + " disagree; give one"};
    }
  }
  overrides.push_back(key + args.value("--fidelity"));
  try {
    return load_scenario(path, overrides);
  } catch (const BadInput& e) {
    // The level reaches the reader as the last --set, and so do its errors; the user typed
    // --fidelity.
    std::vector<InputError> errors = e.errors();
    for (InputError& err : errors) {
      if (err.file == "--set" && err.key_path == "network.fidelity") {
        err = InputError{"--fidelity", 0, "", err.message};
      }
    }
    throw BadInput(errors);
  }
}

}  // namespace clustersim::cli
