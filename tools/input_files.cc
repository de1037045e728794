// SPDX-License-Identifier: Apache-2.0
#include "tools/input_files.h"

#include <filesystem>
#include <utility>

#include "calibration/hardware_profile.h"
#include "sim/core/config.h"
#include "sim/core/digest.h"
#include "sim/core/inference_config.h"
#include "sim/core/yaml_tree.h"
#include "sim/engine/serving_requests.h"
#include "sim/report/sweep/sweep_spec.h"

namespace clustersim::cli {
namespace {

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
    if (std::string f = calib::profile_file_path(value->scalar, base_dir); !f.empty()) out.push_back(std::move(f));
  } else {
    out.push_back(engine::trace_file_path(value->scalar, base_dir));
  }
}

}  // namespace

std::vector<std::string> scenario_input_files(const ScenarioConfig& cfg) {
  std::vector<std::string> out = {cfg.file};
  const std::string& dir = cfg.cluster.source_dir;
  const auto add_profile = [&](const std::string& gpu) {
    if (std::string f = calib::profile_file_path(gpu, dir); !f.empty()) out.push_back(std::move(f));
  };
  add_profile(cfg.cluster.gpu);
  if (cfg.inference) {
    for (const PoolConfig* p : given_pools(*cfg.inference)) add_profile(p->gpu);
    if (!cfg.inference->trace.empty()) out.push_back(engine::trace_file_path(cfg.inference->trace, dir));
  }
  return out;
}

report::Json inputs_stamp(const std::vector<std::string>& inputs, const std::vector<std::string>& sets,
                          const std::string& fidelity) {
  report::Json j = report::Json::object();
  report::Json& files = j.set("files", report::Json::array());
  for (const std::string& f : inputs) {
    report::Json file = report::Json::object();
    file.set("name", std::filesystem::path(f).filename().string());
    // A regular file's bytes; a pipe or device (process substitution, a FIFO) is not read again
    // (a second open of a FIFO waits for a writer: the run hung) and has no digest.
    std::error_code ec;
    const bool regular = std::filesystem::is_regular_file(f, ec);
    const std::string digest = regular ? file_digest_hex(f) : "";
    file.set("digest", digest.empty() ? report::Json() : report::Json(digest));
    files.push(file);
  }
  report::Json& set = j.set("set", report::Json::array());
  for (const std::string& s : sets) set.push(s);
  if (!fidelity.empty()) j.set("fidelity", fidelity);
  return j;
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
