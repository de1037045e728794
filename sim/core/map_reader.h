// SPDX-License-Identifier: Apache-2.0
// Strict reading of one YAML mapping into typed fields: wrong types, out-of-range values, missing
// required keys and unknown keys all become InputErrors with file, line and key path.
#pragma once

#include <initializer_list>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "sim/core/error.h"
#include "sim/core/units.h"
#include "sim/core/yaml_tree.h"

namespace clustersim {

enum class Need { kOptional, kRequired };

// A scalar node's whole text as the plain decimal MapReader reads numbers as (an optional '-', no
// '+', spaces or hexadecimal); nullopt for anything else, a real also when not finite. For lists
// and other values read outside a MapReader.
std::optional<double> plain_real(const YamlNode& n);
std::optional<long long> plain_integer(const YamlNode& n);
// A down:up ratio's value as MapReader::read_ratio reads it: whole port counts "a:b" (both above
// zero) or a plain number; nullopt for anything else (read_ratio also checks the counts against
// the switch's ports and the range).
std::optional<double> plain_ratio(const YamlNode& n);

// An integer written with a leading zero ("08", "-010"), which YAML 1.1 tools read as octal:
// refused wherever a number is read (scenario files, --set and command-line flags).
bool leading_zero(const std::string& text);

// Levenshtein distance: single-character insertions, deletions and substitutions from a to b.
int edit_distance(const std::string& a, const std::string& b);
// The name in `known` closest to `name` for a "did you mean" hint: within 2 edits, or differing
// only in case (of names as close, the one sharing the longest start); empty where none is.
std::string closest_name(const std::string& name, const std::set<std::string>& known);
// For an unknown key with no closest_name: the longest name in `known` (4 letters at least) that
// holds `name` whole, or is held by it, at a word's edge ('_'): the same setting as another
// section spells it, 'first_dense_layers' for inference.moe's 'dense_layers' (no suggestion
// until 2026-12-07; QA); empty where none is. Not for names a user may coin (faults components).
std::string key_holding(const std::string& name, const std::set<std::string>& known);

class MapReader {
 public:
  // `node` may be nullptr (an absent section: every key reads as absent). `path` is the key path
  // of the mapping ("" for the document root). Errors go to `errors`; `origin` (the enclosing
  // mapping, may be nullptr) gives them a file and line when the section itself is absent.
  MapReader(const YamlNode* node, std::string path, ErrorList& errors, const YamlNode* origin = nullptr);

  bool has(const std::string& key) const;
  // The raw child, marked as known; nullptr when absent.
  const YamlNode* child(const std::string& key);
  // A reader for a nested mapping (absent is fine; a non-mapping is an error).
  MapReader section(const std::string& key);

  // Each read leaves `out` unchanged when the key is absent or invalid, and returns whether a
  // valid value was read.
  bool read(const std::string& key, int& out, Need need = Need::kOptional, int min = INT32_MIN,
            int max = INT32_MAX);
  bool read(const std::string& key, uint64_t& out, Need need = Need::kOptional);
  bool read(const std::string& key, double& out, Need need = Need::kOptional,
            double min = -1e300, double max = 1e300);
  bool read(const std::string& key, bool& out, Need need = Need::kOptional);
  bool read(const std::string& key, std::string& out, Need need = Need::kOptional);
  // Text that may not be empty: '' is an error, "is empty; expected <what>", where it would
  // otherwise read as the key left out (a file, a profile name: absent means a default).
  bool read_text(const std::string& key, std::string& out, const std::string& what, Need need = Need::kOptional);
  bool read(const std::string& key, Time& out, Need need = Need::kOptional);
  bool read(const std::string& key, Bytes& out, Need need = Need::kOptional);
  bool read(const std::string& key, Bandwidth& out, Need need = Need::kOptional);
  bool read(const std::string& key, FlopRate& out, Need need = Need::kOptional);
  bool read(const std::string& key, std::optional<Bandwidth>& out);
  // A down:up ratio, as a number (2.5) or as whole port counts ("86:42" = 86 / 42), in [min, max].
  // Given `ports` (a switch's radix), "a:b" is port counts when a + b = ports, else a ratio in
  // lowest terms ("3:1"); "60:20" on 64 ports is neither, and an error.
  bool read_ratio(const std::string& key, double& out, double min, double max, int ports = 0);

  // Reads one of the named values; the message lists them all.
  template <typename E>
  bool read_enum(const std::string& key, E& out,
                 std::initializer_list<std::pair<const char*, E>> names,
                 Need need = Need::kOptional) {
    const YamlNode* n = scalar(key, need);
    if (!n) return false;
    std::string expected;
    for (const auto& [name, value] : names) {
      if (n->scalar == name) {
        out = value;
        return true;
      }
      expected += expected.empty() ? std::string("one of ") : std::string(", ");
      expected += name;
    }
    fail(key, *n, expected);
    return false;
  }

  // Keys this mapping may hold that the caller reads or refuses only when present: known for
  // finish()'s suggestions ('infernce' suggests 'inference').
  void may_hold(std::initializer_list<const char*> keys) { known_.insert(keys.begin(), keys.end()); }

  // Reports every key present that no read asked for, with a suggestion when one is close.
  // Call once, after all reads.
  void finish();

  // Records an error about `key` (for cross-field checks made by the caller).
  void error(const std::string& key, const std::string& message);
  // Reports `key` as a required key that is missing, unless the section itself was refused (a
  // list where a mapping belongs says all there is to say).
  void missing(const std::string& key);
  std::string key_path(const std::string& key) const;
  const std::string& file() const;

 private:
  const YamlNode* scalar(const std::string& key, Need need);
  void fail(const std::string& key, const YamlNode& n, const std::string& expected);

  const YamlNode* node_;
  std::string origin_file_;  // where errors about an absent section point
  int origin_line_ = 0;
  std::string path_;
  ErrorList& errors_;
  std::set<std::string> known_;
  bool not_a_map_ = false;  // refused as a whole: its keys are not reported missing one by one
};

}  // namespace clustersim
