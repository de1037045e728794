// SPDX-License-Identifier: Apache-2.0
// Every key the JSON outputs hold is documented: each run kind's `results.json` and `whatif`'s
// object in docs/results.md, `validate`'s in README.md. A key added without its documentation
// fails here, naming it and where it appeared.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "sim/core/error.h"
#include "sim/core/yaml_tree.h"
#include "tests/unit/run_cli.h"

namespace {

using clustersim::YamlNode;

// Identifiers in `text`, with `prefix_{a,b}` standing for prefix_a and prefix_b.
void add_words(const std::string& text, std::set<std::string>& words) {
  const std::regex word("[A-Za-z0-9_]+");
  for (auto w = std::sregex_iterator(text.begin(), text.end(), word); w != std::sregex_iterator(); ++w) {
    words.insert(w->str());
  }
  const std::regex braces("([A-Za-z0-9_]+)\\{([^{}]*)\\}");
  for (auto b = std::sregex_iterator(text.begin(), text.end(), braces); b != std::sregex_iterator(); ++b) {
    const std::string alternatives = (*b)[2].str();
    for (auto w = std::sregex_iterator(alternatives.begin(), alternatives.end(), word); w != std::sregex_iterator(); ++w) {
      words.insert((*b)[1].str() + w->str());
    }
  }
}

// The identifiers inside the document's `code spans` (which may run over a line break, not a
// paragraph's end):
// `time_lost_s.{checkpoint, lost_work}` documents time_lost_s, checkpoint and lost_work.
std::set<std::string> documented_words(const std::string& doc_path) {
  std::ifstream in(std::string(CLUSTERSIM_SOURCE_DIR) + "/" + doc_path);
  std::stringstream s;
  s << in.rdbuf();
  // Fenced blocks count whole; the rest by its code spans.
  std::set<std::string> words;
  std::string text;
  bool fenced = false;
  for (std::string line; std::getline(s, line);) {
    if (line.rfind("```", 0) == 0) {
      fenced = !fenced;
    } else if (fenced) {
      add_words(line, words);
    } else {
      text += line + "\n";
    }
  }
  const std::regex span("`((?:[^`\\n]|\\n(?!\\n))+)`");  // a span ends at its paragraph
  for (auto it = std::sregex_iterator(text.begin(), text.end(), span); it != std::sregex_iterator(); ++it) {
    add_words((*it)[1].str(), words);
  }
  return words;
}

// Maps whose keys are names from the scenario (failure components), not keys of the format.
bool named_by_scenario(const std::string& parent) {
  return parent == "interruptions_by_component" || parent == "time_lost_by_component_s";
}

// Collects "path (key)" for every key below `node` that `words` lacks.
void undocumented(const YamlNode& node, const std::string& path, const std::string& parent,
                  const std::set<std::string>& words, std::set<std::string>& out) {
  if (node.is_seq()) {
    for (const YamlNode& item : node.seq) undocumented(item, path + "[]", parent, words, out);
    return;
  }
  if (!node.is_map()) return;
  for (const auto& [key, child] : node.map) {
    const bool named = named_by_scenario(parent);
    // breakdown_fraction.* are the breakdown's parts without their `_s`.
    const bool ok = named || words.count(key) > 0 || (parent == "breakdown_fraction" && words.count(key + "_s") > 0);
    if (!ok) out.insert(path + "." + key);
    undocumented(child, path + "." + key, named ? std::string() : key, words, out);
  }
}

void expect_documented(const std::string& args, const std::set<std::string>& words, const std::string& doc) {
  const clustersim::testing::CliResult r = clustersim::testing::run_cli(args + " --format json");
  ASSERT_EQ(r.code, 0) << args << "\n" << r.err;
  YamlNode root;
  try {
    root = clustersim::parse_yaml_text(r.out, args);
  } catch (const clustersim::BadInput& e) {
    FAIL() << args << ": the output is not JSON: " << e.what();
  }
  std::set<std::string> missing;
  undocumented(root, "", "", words, missing);
  for (const std::string& key : missing) ADD_FAILURE() << "`clustersim " << args << "` prints " << key << ", which " << doc << " does not name";
}

TEST(DocsKeys, EveryResultsKeyIsInDocsResults) {
  const std::set<std::string> words = documented_words("docs/results.md");
  ASSERT_GT(words.size(), 100u) << "docs/results.md not found or empty";
  for (const std::string& args : std::vector<std::string>{
           "run scenarios/megascale-175b-12288.yaml",
           "run scenarios/megascale-table2/megascale-175b-256-b768.yaml --fidelity flow",
           "run scenarios/stragglers-175b-12288.yaml",
           "run scenarios/stragglers-175b-12288.yaml --set stragglers.variation.spread=0.04",
           "run scenarios/faults-16k-30d.yaml --set faults.seeds=2",
           "run scenarios/mixtral-8x7b-h100-256.yaml",
           "run scenarios/mixtral-8x7b-h100-256.yaml --fidelity flow",
           "run scenarios/net-incast-32-dcqcn.yaml",
           "run scenarios/net-incast-32.yaml --fidelity packet",
           "run scenarios/net-shift-1k.yaml",
           "run scenarios/infer-colocated.yaml",
           "run scenarios/infer-pd.yaml",
           "run scenarios/infer-afd.yaml",
           "run scenarios/infer-afd.yaml --fidelity flow",
           "run scenarios/serving-trtllm/qwen3-235b-a22b.yaml",
           "whatif scenarios/stragglers-175b-12288.yaml",
           "whatif scenarios/stragglers-175b-12288.yaml --fidelity flow --set cluster.gpus=1024 --set training.global_batch=512",
       }) {
    expect_documented(args, words, "docs/results.md");
  }
}

TEST(DocsKeys, EveryValidateKeyIsInTheReadme) {
  expect_documented("validate tests/data/suites/cli_pass.yaml", documented_words("README.md"), "README.md");
}

}  // namespace
