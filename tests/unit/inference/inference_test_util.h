// SPDX-License-Identifier: Apache-2.0
// Inline serving scenarios for the inference tests.
#pragma once

#include <cctype>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "sim/core/scenario.h"
#include "sim/core/yaml_tree.h"
#include "sim/engine/inference_sim.h"
#include "sim/network/network.h"
#include "tests/unit/network/manual_clock.h"

namespace clustersim::testing {

// A small MoE model (4 layers, 8 experts, top-2) on 16 H100 GPUs, colocated in 2 instances of 8.
inline const char* const kServing =
    "name: tiny-serving\n"
    "cluster: {gpu: H100-SXM, gpus: 16, gpus_per_node: 8}\n"
    "model: {layers: 4, hidden: 1024, heads: 16, kv_heads: 4, ffn_hidden: 2048, seq_len: 2048,\n"
    "        vocab: 32000, activation: swiglu, tied_embeddings: false, learned_positions: false}\n"
    "inference:\n"
    "  mode: colocated\n"
    "  seed: 7\n"
    "  requests: 200\n"
    "  rate_per_s: 400\n"
    "  prompt_tokens: {dist: uniform, min: 64, max: 512}\n"
    "  output_tokens: {dist: uniform, min: 1, max: 64}\n"
    "  max_batch: 64\n"
    "  tpot_limit: 50ms\n"
    "  moe: {experts: 8, top_k: 2, expert_ffn_hidden: 1024}\n"
    "  pools:\n"
    "    colocated: {gpus: 16, tp: 2, ep: 8, price_per_gpu_hour: 2.5}\n";

// kServing with "key.path=value" overrides applied (YAML values), loaded and validated.
inline ScenarioConfig serving(const std::vector<std::string>& overrides = {}, const char* text = kServing) {
  YamlNode root = parse_yaml_text(text, "serving.yaml");
  for (const std::string& o : overrides) apply_override(root, o);
  return scenario_from_tree(root, "serving.yaml");
}

// Deletes a top-level-path key ("inference.pools.colocated") from the tree before loading.
inline ScenarioConfig serving_without(const std::string& path, const std::vector<std::string>& overrides = {}) {
  YamlNode root = parse_yaml_text(kServing, "serving.yaml");
  for (const std::string& o : overrides) apply_override(root, o);
  YamlNode* node = &root;
  std::string rest = path;
  while (true) {
    const size_t dot = rest.find('.');
    const std::string key = rest.substr(0, dot);
    if (dot == std::string::npos) {
      auto& m = node->map;
      for (auto it = m.begin(); it != m.end(); ++it) {
        if (it->first == key) {
          m.erase(it);
          break;
        }
      }
      break;
    }
    node = node->find(key);
    rest = rest.substr(dot + 1);
  }
  return scenario_from_tree(root, "serving.yaml");
}

// The messages of the BadInput thrown by `f`, joined; empty when nothing was thrown.
template <typename F>
std::string bad_input_of(F f) {
  try {
    f();
  } catch (const BadInput& e) {
    std::string all;
    for (const InputError& err : e.errors()) all += err.to_string() + "\n";
    return all;
  }
  return "";
}

// A network that delivers every transfer after 10 us plus bytes at 50 GB/s.
class FixedNetwork final : public net::Network {
 public:
  explicit FixedNetwork(Clock& clock) : clock_(clock) {}
  using net::Network::send;
  net::TransferId send(net::GpuId, net::GpuId, Bytes size, std::function<void(Time)> done, uint32_t) override {
    ++sent_;
    const Time at = clock_.now() + Time::us(10) + serialization_time(size, gbytes_per_s(50));
    clock_.at(at, [done, at] { done(at); });
    return sent_;
  }
  int64_t in_flight() const override { return 0; }
  int64_t flow_count() const override { return sent_; }
  std::vector<net::LinkUsage> link_usage() const override { return {}; }
  int64_t sent_ = 0;

 private:
  Clock& clock_;
};

// Runs `cfg` on a hand-run clock and FixedNetwork (no SimGrid): the seeded requests unless given.
inline engine::ServingResult simulate(const ScenarioConfig& cfg, std::vector<engine::ServingRequest> requests = {},
                                      engine::ServingTraceLimits limits = {}) {
  const engine::ServingSetup setup = engine::make_serving_setup(cfg);
  if (requests.empty()) requests = engine::make_requests(setup.in, "");
  net::testing::ManualClock clock;
  FixedNetwork network(clock);
  engine::ServingSimulation sim(setup, std::move(requests), clock, &network, 1.0, limits);
  sim.start();
  clock.run();
  return sim.result();
}

// Strict JSON (RFC 8259) check: true when `text` is one JSON value and nothing else; `where` gets
// the offset of the first problem. Small recursive descent, enough for trace.json in tests.
class JsonChecker {
 public:
  static bool valid(const std::string& text, size_t* where = nullptr) {
    JsonChecker c(text);
    const bool ok = c.value() && (c.skip(), c.i_ == text.size());
    if (where) *where = c.i_;
    return ok;
  }

 private:
  explicit JsonChecker(const std::string& t) : t_(t) {}
  void skip() {
    while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\n' || t_[i_] == '\t' || t_[i_] == '\r')) ++i_;
  }
  bool eat(char c) {
    skip();
    if (i_ < t_.size() && t_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool literal(const char* w) {
    const std::string s(w);
    if (t_.compare(i_, s.size(), s) != 0) return false;
    i_ += s.size();
    return true;
  }
  bool string() {
    if (!eat('"')) return false;
    while (i_ < t_.size() && t_[i_] != '"') {
      if (static_cast<unsigned char>(t_[i_]) < 0x20) return false;
      if (t_[i_] == '\\') {
        ++i_;
        if (i_ >= t_.size() || std::string("\"\\/bfnrtu").find(t_[i_]) == std::string::npos) return false;
      }
      ++i_;
    }
    return i_ < t_.size() && t_[i_++] == '"';
  }
  bool number() {
    const size_t start = i_;
    if (i_ < t_.size() && t_[i_] == '-') ++i_;
    auto digits = [&] {
      const size_t d = i_;
      while (i_ < t_.size() && std::isdigit(static_cast<unsigned char>(t_[i_]))) ++i_;
      return i_ > d;
    };
    if (!digits()) return false;
    if (i_ < t_.size() && t_[i_] == '.' && (++i_, !digits())) return false;
    if (i_ < t_.size() && (t_[i_] == 'e' || t_[i_] == 'E')) {
      ++i_;
      if (i_ < t_.size() && (t_[i_] == '+' || t_[i_] == '-')) ++i_;
      if (!digits()) return false;
    }
    return i_ > start;
  }
  bool value() {
    skip();
    if (i_ >= t_.size()) return false;
    const char c = t_[i_];
    if (c == '{') {
      ++i_;
      if (eat('}')) return true;
      do {
        if (!string() || !eat(':') || !value()) return false;
      } while (eat(','));
      return eat('}');
    }
    if (c == '[') {
      ++i_;
      if (eat(']')) return true;
      do {
        if (!value()) return false;
      } while (eat(','));
      return eat(']');
    }
    if (c == '"') return string();
    if (c == 't') return literal("true");
    if (c == 'f') return literal("false");
    if (c == 'n') return literal("null");
    return number();
  }
  const std::string& t_;
  size_t i_ = 0;
};

}  // namespace clustersim::testing
