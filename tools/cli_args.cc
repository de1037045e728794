// SPDX-License-Identifier: Apache-2.0
#include "tools/cli_args.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace clustersim::cli {

Args::Args(const std::vector<std::string>& argv, const std::set<std::string>& with_value,
           const std::set<std::string>& repeatable, const std::set<std::string>& switches) {
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a.size() < 2 || a[0] != '-' ) {
      positionals_.push_back(a);
      continue;
    }
    std::string flag = a;
    std::string value;
    bool inline_value = false;
    if (const auto eq = a.find('='); eq != std::string::npos && a.rfind("--", 0) == 0) {
      flag = a.substr(0, eq);
      value = a.substr(eq + 1);
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
  if (text.empty() || *end != '\0' || errno == ERANGE || v < min || v > max) {
    throw UsageError{flag + " needs a whole number in [" + std::to_string(min) + ", " + std::to_string(max) +
                     "], got '" + text + "'"};
  }
  return v;
}

double Args::number(const std::string& flag, double fallback, double min, double max) const {
  if (!has(flag)) return fallback;
  const std::string text = value(flag);
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(v) || v < min || v > max) {
    std::ostringstream range;
    range << "[" << min << ", " << max << "]";
    throw UsageError{flag + " needs a number in " + range.str() + ", got '" + text + "'"};
  }
  return v;
}

}  // namespace clustersim::cli
