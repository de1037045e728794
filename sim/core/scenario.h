// SPDX-License-Identifier: Apache-2.0
// Loading a scenario file into ScenarioConfig, and the checks that need nothing but the config.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/core/config.h"
#include "sim/core/error.h"
#include "sim/core/yaml_tree.h"

namespace clustersim {

// Reads `path`, applies the "key.path=value" overrides in order, maps the result strictly onto
// ScenarioConfig and validates it. Throws BadInput listing every problem found.
ScenarioConfig load_scenario(const std::string& path, const std::vector<std::string>& overrides = {});

// Same, from an already-parsed tree (tests, sweeps). `file` is used in messages.
ScenarioConfig scenario_from_tree(const YamlNode& root, const std::string& file);

// Only the reading: types, ranges, enum names, required and unknown keys; no checks between
// fields (validate_scenario). Sweeps use it to tell a mistyped axis value from a plan that does
// not divide.
ScenarioConfig read_scenario_tree(const YamlNode& root, const std::string& file);

// A GPU profile's mapping (`peak` and `efficiency`, none of a scenario's or a suite's own sections)
// given at `path` where a `kind` ("scenario", "validation suite") belongs: throws BadInput saying
// so in one line (each file read as the other kind listed its keys as missing and unknown until
// 2026-12-07). Returns otherwise.
void refuse_gpu_profile(const YamlNode& root, const std::string& path, const std::string& kind);

// Whether `e`, from the reader, says a key is unknown; is_unknown_key_at: the key at `path` or a
// section on its way.
bool is_unknown_key(const InputError& e);
bool is_unknown_key_at(const InputError& e, const std::string& path);

// The reader's "unknown key" error when `path` is not a scenario key (found by setting it on a
// copy of `root` and reading that), nullopt when it is one: a removal (key=null) of an absent key
// removes nothing, and is a typo only when the key does not exist at all.
std::optional<InputError> unknown_key_error(const YamlNode& root, const std::string& path);

// Checks between fields (divisibility of the plan, DP derivation, ranges). Pure; returns every
// problem found. Hardware-dependent checks (memory fit) live with the cost models.
std::vector<InputError> validate_scenario(const ScenarioConfig& cfg);

// An error about `key_path` of `cfg`, with the file and the line where that key was written.
InputError scenario_error(const ScenarioConfig& cfg, const std::string& key_path, const std::string& message);

// `e` with the scenario's file (and the key's line, when it names a key) on each error that names
// no file (checks made while running, the profile loader's, the network backends'): what a user
// needs to find it; an error that names the scenario but no line gets the key's line. Errors
// that name their own file (a profile, a trace) keep it.
BadInput in_scenario(const ScenarioConfig& cfg, const BadInput& e);

}  // namespace clustersim
