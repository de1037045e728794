// SPDX-License-Identifier: Apache-2.0
// A parsed YAML document as our own small tree (maps keep their order, every node its line), so
// that yaml-cpp stays inside load_yaml.cc and every layer can read its own files strictly.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace clustersim {

struct YamlNode {
  enum class Kind { kNull, kScalar, kMap, kSeq };
  Kind kind = Kind::kNull;
  std::string scalar;                                  // kScalar: the text as written
  std::vector<std::pair<std::string, YamlNode>> map;   // kMap: keys in file order
  std::vector<YamlNode> seq;                           // kSeq
  std::vector<std::string> removed;                    // kMap: keys a --set KEY=null removed
  std::string file;                                    // where it came from ("--set" for overrides)
  int line = 0;                                        // 1-based, 0 when unknown

  bool is_map() const { return kind == Kind::kMap; }
  bool is_seq() const { return kind == Kind::kSeq; }
  bool is_scalar() const { return kind == Kind::kScalar; }
  bool is_null() const { return kind == Kind::kNull; }
  // What the node is, for messages: "a mapping", "a list", "a value" or "nothing".
  const char* kind_name() const {
    switch (kind) {
      case Kind::kMap: return "a mapping";
      case Kind::kSeq: return "a list";
      case Kind::kNull: return "nothing";
      case Kind::kScalar: return "a value";
    }
    return "?";
  }
  // The child under `key`, or nullptr.
  const YamlNode* find(const std::string& key) const;
  YamlNode* find(const std::string& key);
};

// The largest YAML file read: scenarios, suites, sweeps and profiles are kilobytes.
inline constexpr size_t kMaxYamlBytes = size_t{16} << 20;

// Parses a YAML file. Throws BadInput naming the file (and line, for syntax errors) when it cannot
// be read, is larger than kMaxYamlBytes, is not valid YAML or holds more than one document, or when
// a mapping repeats a key or has a non-scalar key.
YamlNode parse_yaml_file(const std::string& path);

// Parses YAML text; `origin` names it in messages.
YamlNode parse_yaml_text(const std::string& text, const std::string& origin);

// The node at the dotted `path`, or nullptr when a key on the way is absent or not a mapping.
const YamlNode* find_path(const YamlNode& root, const std::string& path);

// Removes the key at the dotted `path` (its parents stay; a path that is not there is a no-op).
// Returns false when a node on the way is a value or a list, not a mapping.
bool remove_path(YamlNode& root, const std::string& path);

// Applies "key.path=value" to `root` (a map): walks or creates the maps on the path and replaces
// the leaf with `value` parsed as YAML (so "4", "true", "[1, 2]" and "400Gbps" all work); spaces
// around a single value stay in it ("key= 4" sets " 4", which no number reader takes).
// A null value ("key=null", "key=~", "key=") removes the key instead. Throws BadInput when the
// text has no '=' or the path crosses a non-map.
void apply_override(YamlNode& root, const std::string& assignment);

// Whether key path `a` is `b` or lies under it ("parallelism.tp" under "parallelism").
inline bool path_within(const std::string& a, const std::string& b) {
  return a == b || (a.size() > b.size() && a.starts_with(b) && a[b.size()] == '.');
}

// Whether setting key paths `a` and `b` sets one value: the same key, or one inside the other
// ("parallelism" and "parallelism.tp").
inline bool paths_overlap(const std::string& a, const std::string& b) { return path_within(a, b) || path_within(b, a); }

}  // namespace clustersim
