// SPDX-License-Identifier: Apache-2.0
#include "tools/input_files.h"

#include <filesystem>
#include <optional>

#include "calibration/hardware_profile.h"
#include "sim/core/config.h"
#include "sim/core/inference_config.h"
#include "sim/core/yaml_tree.h"
#include "sim/report/sweep/sweep_spec.h"

namespace clustersim::cli {
namespace {

// As calib::load_hardware_profile resolves a GPU: a built-in name reads no file; a relative path
// is taken from the working directory where a file is there, else beside the scenario.
std::optional<std::string> profile_file(const std::string& gpu, const std::string& base_dir) {
  if (gpu.empty() || !calib::builtin_profile_text(gpu).empty()) return std::nullopt;
  std::filesystem::path p(gpu);
  std::error_code ec;
  if (p.is_relative() && !base_dir.empty() && !std::filesystem::exists(p, ec)) p = std::filesystem::path(base_dir) / p;
  return p.string();
}

// As engine::make_requests resolves inference.trace: a relative path is beside the scenario.
std::string trace_file(const std::string& trace, const std::string& base_dir) {
  std::filesystem::path p(trace);
  if (p.is_relative() && !base_dir.empty()) p = std::filesystem::path(base_dir) / p;
  return p.string();
}

// The scenario keys whose values name files, and which kind.
struct FileKey {
  const char* path;
  bool profile;  // a GPU profile (else a request trace)
};
constexpr FileKey kFileKeys[] = {
    {"cluster.gpu", true},
    {"inference.pools.colocated.gpu", true},
    {"inference.pools.prefill.gpu", true},
    {"inference.pools.decode.gpu", true},
    {"inference.pools.attention.gpu", true},
    {"inference.pools.expert.gpu", true},
    {"inference.trace", false},
};

void add_named(const FileKey& key, const YamlNode* value, const std::string& base_dir, std::vector<std::string>& out) {
  if (!value || !value->is_scalar() || value->scalar.empty()) return;
  if (key.profile) {
    if (const auto f = profile_file(value->scalar, base_dir)) out.push_back(*f);
  } else {
    out.push_back(trace_file(value->scalar, base_dir));
  }
}

}  // namespace

std::vector<std::string> scenario_input_files(const ScenarioConfig& cfg) {
  std::vector<std::string> out = {cfg.file};
  const std::string& dir = cfg.cluster.source_dir;
  if (const auto f = profile_file(cfg.cluster.gpu, dir)) out.push_back(*f);
  if (cfg.inference) {
    for (const PoolConfig* p : given_pools(*cfg.inference)) {
      if (const auto f = profile_file(p->gpu, dir)) out.push_back(*f);
    }
    if (!cfg.inference->trace.empty()) out.push_back(trace_file(cfg.inference->trace, dir));
  }
  return out;
}

std::vector<std::string> sweep_input_files(const sweep::SweepSpec& spec) {
  std::vector<std::string> out = {spec.file};
  if (!spec.base_origin.empty()) out.push_back(spec.base_origin);
  // Candidates are read as scenarios loaded from base_origin (the base file, or the sweep file
  // for an inline base): relative paths resolve beside it.
  const std::string dir = std::filesystem::path(spec.base_origin.empty() ? spec.file : spec.base_origin).parent_path().string();
  for (const FileKey& key : kFileKeys) add_named(key, find_path(spec.base, key.path), dir, out);
  // An axis value sets a key ("cluster.gpu") or a section holding it ("inference" as a mapping).
  for (const sweep::Axis& axis : spec.axes) {
    for (const sweep::AxisValue& v : axis.values) {
      for (const auto& [set, node] : v.sets) {
        for (const FileKey& key : kFileKeys) {
          const std::string path = key.path;
          if (path == set) {
            add_named(key, &node, dir, out);
          } else if (path.starts_with(set + ".")) {
            add_named(key, find_path(node, path.substr(set.size() + 1)), dir, out);
          }
        }
      }
    }
  }
  return out;
}

}  // namespace clustersim::cli
