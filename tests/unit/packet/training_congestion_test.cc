// SPDX-License-Identifier: Apache-2.0
// Training runs at the congestion levels write queues.csv and rates.csv as traffic runs do (same
// columns), with a congestion block in results.json; big runs keep a bounded number of rows; at
// flow+dcqcn the rate series follows the first flows DCQCN cuts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <stdexcept>
#include <sstream>
#include <string>
#include <vector>

#include "calibration/hardware_profile.h"
#include "sim/core/scenario.h"
#include "sim/engine/flow_training.h"
#include "sim/network/dcqcn/fluid_dcqcn_network.h"
#include "sim/report/run_scenario.h"
#include "test_bed.h"

namespace clustersim {
namespace {

// 32 GPUs in 4 servers of 8 (one 200G NIC per GPU), tp 8 x dp 4, on a 2-tier Clos with one ToR
// per server and 3:1 uplinks (12 down, 4 up ports). Each of the 8 DP rings (one per local rank)
// sends every server's 8 NICs' worth to the next server over 4 uplinks: 2:1 on each, so queues
// build, RED marks, DCQCN cuts. About 0.05 s at flow+dcqcn, 0.5 s at packet.
ScenarioConfig congested_plan(Fidelity fidelity) {
  ScenarioConfig cfg;
  cfg.file = "congested.yaml";
  cfg.cluster.gpu = "A100-SXM4-80GB";
  cfg.cluster.gpus = 32;
  cfg.cluster.gpus_per_node = 8;
  cfg.cluster.nics_per_node = 8;
  cfg.cluster.nic_bandwidth = gbps(200);
  cfg.network.fidelity = fidelity;
  cfg.network.tiers = 2;
  cfg.network.switch_radix = 16;
  cfg.network.tor_oversubscription = 3;
  cfg.network.wiring = Wiring::kTorPerServer;
  cfg.model.layers = 4;
  cfg.model.hidden = 1024;
  cfg.model.heads = 16;
  cfg.model.seq_len = 1024;
  cfg.model.vocab = 32000;
  cfg.parallelism.tp = 8;
  cfg.parallelism.pp = 1;
  cfg.training.global_batch = 16;
  for (const InputError& e : validate_scenario(cfg)) ADD_FAILURE() << "test plan is invalid: " << e.to_string();
  return cfg;
}

constexpr double kLineGbps = 200;

using Row = std::vector<std::string>;

// A CSV without quoting (ours): the header, then rows of exactly as many fields.
std::vector<Row> parse_csv(const std::string& text, const std::string& header) {
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, header);
  std::vector<Row> rows;
  const size_t fields = static_cast<size_t>(std::count(header.begin(), header.end(), ',')) + 1;
  while (std::getline(in, line)) {
    Row row;
    std::istringstream cells(line);
    for (std::string cell; std::getline(cells, cell, ',');) row.push_back(cell);
    EXPECT_EQ(row.size(), fields) << line;
    if (row.size() == fields) rows.push_back(row);
  }
  return rows;
}

double number(const std::string& cell) {
  char* end = nullptr;
  const double v = std::strtod(cell.c_str(), &end);
  EXPECT_TRUE(!cell.empty() && *end == '\0') << "not a number: '" << cell << "'";
  return v;
}

const std::string* file(const report::RunOutput& out, const std::string& name) {
  for (const auto& [n, content] : out.extra_files) {
    if (n == name) return &content;
  }
  return nullptr;
}

// The integer after "key": in results.json.
int64_t json_int(const std::string& json, const std::string& key) {
  const size_t at = json.find("\"" + key + "\":");
  EXPECT_NE(at, std::string::npos) << key;
  return at == std::string::npos ? -1 : std::atoll(json.c_str() + at + key.size() + 3);
}

struct Parsed {
  std::vector<Row> queues, rates;
  std::string results;
};

Parsed run_and_parse(Fidelity fidelity) {
  const report::RunOutput out = report::run_scenario(congested_plan(fidelity));
  Parsed p;
  p.results = out.results.dump(2);
  const std::string* queues = file(out, "queues.csv");
  const std::string* rates = file(out, "rates.csv");
  EXPECT_NE(queues, nullptr);
  EXPECT_NE(rates, nullptr);
  if (queues) p.queues = parse_csv(*queues, "time_us,link,bytes");
  if (rates) p.rates = parse_csv(*rates, "time_us,flow,src,dst,rate_gbps,target_gbps");
  return p;
}

// What both levels must show on this plan: queues on the oversubscribed uplinks, in time order,
// never negative; rates and targets within (0, line rate], some below it; the counts in
// results.json match the files.
void check_plausible(const Parsed& p) {
  ASSERT_FALSE(p.queues.empty());
  double last = -1;
  bool uplink_queue = false;
  for (const Row& q : p.queues) {
    const double t = number(q[0]);
    EXPECT_GE(t, last);
    last = t;
    EXPECT_GE(number(q[2]), 0);
    EXPECT_NE(q[1], "");
    uplink_queue = uplink_queue || (q[1].rfind("tor_agg:", 0) == 0 && number(q[2]) > 0);
  }
  EXPECT_TRUE(uplink_queue) << "no queue on a ToR uplink";
  ASSERT_FALSE(p.rates.empty());
  bool below_line = false;
  std::map<std::string, double> last_of_flow;
  for (const Row& r : p.rates) {
    const double t = number(r[0]);
    const double rate = number(r[4]);
    const double target = number(r[5]);
    EXPECT_GT(rate, 0);
    EXPECT_LE(rate, kLineGbps * (1 + 1e-9)) << "flow " << r[1] << " at " << r[0] << " us";
    EXPECT_LE(target, kLineGbps * (1 + 1e-9));
    EXPECT_LE(rate, target * (1 + 1e-9));  // DCQCN climbs back towards Rt, never past it
    EXPECT_GE(t, last_of_flow[r[1]]);
    last_of_flow[r[1]] = t;
    below_line = below_line || rate < 0.99 * kLineGbps;
  }
  EXPECT_TRUE(below_line);
  EXPECT_GT(json_int(p.results, "rate_cuts"), 0);
  EXPECT_GT(json_int(p.results, "ecn_marks"), 0);
  EXPECT_EQ(json_int(p.results, "queue_rows_written"), static_cast<int64_t>(p.queues.size()));
  EXPECT_EQ(json_int(p.results, "rate_rows_written"), static_cast<int64_t>(p.rates.size()));
  std::set<std::string> links;
  for (const Row& q : p.queues) links.insert(q[1]);
  EXPECT_EQ(json_int(p.results, "queue_links_written"), static_cast<int64_t>(links.size()));
  EXPECT_NE(p.results.find("\"represented\": \"folded"), std::string::npos);
}

TEST(TrainingCongestion, FlowDcqcnWritesQueuesAndRatesOfTheFirstFlowsCut) {
  const Parsed p = run_and_parse(Fidelity::kFlowDcqcn);
  check_plausible(p);
  // Traced from their first cut: every traced flow's first sample is already below line rate.
  std::set<std::string> seen;
  for (const Row& r : p.rates) {
    if (seen.insert(r[1]).second) {
      EXPECT_LT(number(r[4]), kLineGbps) << "flow " << r[1];
    }
  }
  EXPECT_NE(p.results.find("\"traced_from\": \"first_cut\""), std::string::npos);
}

TEST(TrainingCongestion, StragglersRunAtTheCongestionLevels) {
  // A slow host (server 1, 30% slower) at flow+dcqcn: the operation graph takes it, the run is
  // slower than without and names the straggling rank group.
  ScenarioConfig cfg = congested_plan(Fidelity::kFlowDcqcn);
  const report::RunOutput plain = report::run_scenario(cfg);
  cfg.stragglers.hosts = ComputeStraggler{};
  cfg.stragglers.hosts->list = {1};
  cfg.stragglers.hosts->slowdown = 1.3;
  for (const InputError& e : validate_scenario(cfg)) ADD_FAILURE() << e.to_string();
  const report::RunOutput slow = report::run_scenario(cfg);
  EXPECT_GT(slow.metrics.at("iteration_time_s"), plain.metrics.at("iteration_time_s"));
  EXPECT_NE(slow.summary.find("1 rank group with slow hosts or GPUs"), std::string::npos) << slow.summary;
  EXPECT_NE(file(slow, "queues.csv"), nullptr);
}

TEST(TrainingCongestion, PacketLevelWritesTheSameFiles) {
  const Parsed p = run_and_parse(Fidelity::kPacket);
  check_plausible(p);
  EXPECT_NE(p.results.find("\"traced_from\": \"first_started\""), std::string::npos);
}

TEST(TrainingCongestion, BigRunsKeepTheLargestQueuesWithinTheRowBound) {
  const calib::HardwareProfile hw = calib::load_hardware_profile("A100-SXM4-80GB");
  engine::FlowTrainingOptions o;
  o.use_simgrid = false;
  o.keep_spans = false;
  o.max_series_rows = 100;
  const engine::FlowTrainingResult r = engine::simulate_training(congested_plan(Fidelity::kFlowDcqcn), hw, o);
  ASSERT_TRUE(r.congestion.has_value());
  const engine::TrainingCongestion& c = *r.congestion;
  ASSERT_GT(c.queue_samples, 100) << "the plan no longer queues enough to test the bound";
  EXPECT_LE(static_cast<int64_t>(c.queues.size()), 100);
  EXPECT_LE(static_cast<int64_t>(c.rates.size()), 100);
  EXPECT_LT(static_cast<int64_t>(c.link_names.size()), c.queued_links);
  for (const net::QueueSample& q : c.queues) EXPECT_TRUE(c.link_names.contains(q.link));
}

// A lone flow between two servers, then 8 servers' incast into GPU 0 (400G NICs): traced from
// their first cut, only incast senders appear, each first below line rate; the choice of traced
// flows leaves every completion time as it was.
TEST(TrainingCongestion, FluidTracesTheFirstFlowsCutWithoutChangingTheRun) {
  using net::FluidDcqcnNetwork;
  const auto run = [](FluidDcqcnNetwork::TracedFlows which, std::vector<net::RateSample>& rates) {
    auto [cluster, network] = net::testing::small_clos(9, Fidelity::kFlowDcqcn);
    net::testing::Bed bed(cluster, network);
    dynamic_cast<FluidDcqcnNetwork&>(*bed.net).trace_flows(which);
    std::vector<Time> done(9);
    bed.net->send(1, 9, Bytes{4'000'000}, [&done](Time t) { done[0] = t; });
    for (int k = 1; k <= 8; ++k) bed.net->send(k * 8, 0, Bytes{4'000'000}, [&done, k](Time t) { done[k] = t; });
    EXPECT_THROW(dynamic_cast<FluidDcqcnNetwork&>(*bed.net).trace_flows(which), std::logic_error);
    bed.clock.run();
    rates = bed.trace().rates;
    return done;
  };
  std::vector<net::RateSample> started, cut;
  const std::vector<Time> a = run(FluidDcqcnNetwork::TracedFlows::kFirstStarted, started);
  const std::vector<Time> b = run(FluidDcqcnNetwork::TracedFlows::kFirstCut, cut);
  EXPECT_EQ(a, b);
  ASSERT_FALSE(cut.empty());
  std::set<int32_t> seen;
  for (const net::RateSample& s : cut) {
    EXPECT_EQ(s.dst, 0) << "flow " << s.flow << " from GPU " << s.src << " was never cut";
    if (seen.insert(s.flow).second) {
      EXPECT_LT(s.rate, 50e9) << "flow " << s.flow;
    }
  }
  EXPECT_EQ(seen.size(), 8u);
  EXPECT_TRUE(std::any_of(started.begin(), started.end(), [](const net::RateSample& s) { return s.src == 1; }));
}

// Hand-made series: link 7 peaks at 900 (3 rows), link 2 at 500 (2 rows), link 4 at 100 (4 rows).
std::vector<net::QueueSample> three_links() {
  const auto at = [](int us, net::LinkIndex l, int64_t b) { return net::QueueSample{Time::us(us), l, b}; };
  return {at(1, 4, 100), at(1, 7, 300), at(2, 2, 500), at(2, 4, 50), at(3, 7, 900),
          at(3, 2, 0),   at(4, 4, 20),  at(4, 7, 0),   at(5, 4, 0)};
}

std::vector<net::LinkIndex> links_of(const std::vector<net::QueueSample>& s) {
  std::vector<net::LinkIndex> out;
  for (const net::QueueSample& q : s) out.push_back(q.link);
  return out;
}

TEST(TrainingCongestion, KeepLargestQueuesTakesWholeSeriesByPeak) {
  const std::vector<net::QueueSample> all = three_links();
  EXPECT_EQ(links_of(engine::keep_largest_queues(all, 9)), links_of(all));
  // 7 (3 rows) and 2 (2 rows) fit in 6; 4 (4 rows) would not. Time order kept.
  EXPECT_EQ(links_of(engine::keep_largest_queues(all, 6)), (std::vector<net::LinkIndex>{7, 2, 7, 2, 7}));
  // The largest alone does not fit: its first rows.
  EXPECT_EQ(links_of(engine::keep_largest_queues(all, 2)), (std::vector<net::LinkIndex>{7, 7}));
}

TEST(TrainingCongestion, KeepFirstRatesTakesWholeSeriesInTraceOrder) {
  const auto at = [](int us, int32_t f) { return net::RateSample{Time::us(us), f, 0, 1, 1e9, 2e9}; };
  const std::vector<net::RateSample> all = {at(1, 1), at(1, 0), at(2, 1), at(2, 0), at(3, 2), at(3, 0)};
  std::vector<int32_t> flows;
  for (const net::RateSample& s : engine::keep_first_rates(all, 5)) flows.push_back(s.flow);
  EXPECT_EQ(flows, (std::vector<int32_t>{1, 0, 1, 0, 0}));  // flows 0 (3 rows) and 1 (2 rows)
}

}  // namespace
}  // namespace clustersim
