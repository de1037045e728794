// SPDX-License-Identifier: Apache-2.0
// A minimal reader for the one-line JSON objects this folder writes: strings, numbers, booleans,
// null and nested objects (no arrays). Not a general JSON parser.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

namespace clustersim::sweep::internal {

struct JsonValue {
  enum class Kind { kNull, kBool, kNumber, kString, kObject };
  Kind kind = Kind::kNull;
  bool boolean = false;
  double number = 0;
  std::string text;
  std::map<std::string, JsonValue> members;
};

// Parses exactly one object spanning the whole of `line` (trailing spaces allowed).
std::optional<JsonValue> parse_json_object(const std::string& line);

// Prints `v` so that strtod reads back the same double.
std::string exact_number(double v);

}  // namespace clustersim::sweep::internal
