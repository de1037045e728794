// SPDX-License-Identifier: Apache-2.0
// A small JSON value for results files: objects keep insertion order, numbers print the same way
// on every run (deterministic output for golden tests).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace clustersim::report {

class Json {
 public:
  Json() = default;  // null
  Json(double v);    // NOLINT(google-explicit-constructor): numbers read naturally
  Json(int v);       // NOLINT
  Json(int64_t v);   // NOLINT
  Json(bool v);      // NOLINT
  Json(const char* v);         // NOLINT
  Json(std::string v);         // NOLINT
  static Json object();
  static Json array();

  // Object: sets `key` (appends when new) and returns the value for chaining nested objects.
  Json& set(const std::string& key, Json value);
  Json& operator[](const std::string& key);  // inserts null when absent
  // Array: appends.
  Json& push(Json value);

  // Serialises with `indent` spaces per level (0: one line).
  std::string dump(int indent = 2) const;

  // Calls `visit` with the key path ("a.b[2].c") and value of every number inside, in order.
  void for_each_number(const std::function<void(const std::string& path, double value)>& visit,
                       const std::string& path = "") const;

 private:
  enum class Kind { kNull, kNumber, kInt, kBool, kString, kObject, kArray };
  void write(std::string& out, int indent, int depth) const;

  Kind kind_ = Kind::kNull;
  double number_ = 0;
  int64_t int_ = 0;
  bool bool_ = false;
  std::string string_;
  std::vector<std::pair<std::string, Json>> members_;
  std::vector<Json> items_;
};

// JSON string escaping (quotes included).
std::string json_quote(const std::string& s);

// {"version": "0.1.0", "build": "<commit>"}: the build that wrote a results file (the key
// `clustersim` of results.json, sweep.json and validate's JSON; sim/core/build_info.h).
Json build_stamp();

}  // namespace clustersim::report
