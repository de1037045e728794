// SPDX-License-Identifier: Apache-2.0
// The sweep's local worker processes: every candidate reported once, whether children are reused
// (analytical chunks) or fresh per chunk (flow level), and a child that dies loses only the rest
// of its own chunk, the chunks after it going to a new child.
#include "sim/report/sweep/worker_pool.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <map>
#include <numeric>
#include <string>
#include <vector>

namespace clustersim::sweep {
namespace {

struct Reports {
  std::map<int64_t, std::string> lines;
  std::map<int64_t, std::string> lost;
  int duplicates = 0;
};

Reports run(int jobs, bool fork_always, int64_t n, int max_chunk, int64_t dies_at = -1) {
  std::vector<int64_t> todo(static_cast<size_t>(n));
  std::iota(todo.begin(), todo.end(), 0);
  Reports r;
  WorkerPool pool(jobs, fork_always);
  pool.run(
      make_chunks(todo, jobs, max_chunk),
      [&](int64_t i) {
        if (i == dies_at) ::_exit(9);
        // After the death, slow enough that the surviving child cannot take every chunk left
        // before the parent replaces the dead one.
        if (dies_at >= 0 && i > dies_at) ::usleep(2000);
        return "result " + std::to_string(i * i) + " pid " + std::to_string(::getpid());
      },
      [&](int64_t i, const std::string& line) { r.duplicates += !r.lines.emplace(i, line).second; },
      [&](int64_t i, const std::string& why) { r.duplicates += !r.lost.emplace(i, why).second; }, [] {});
  return r;
}

// The distinct worker processes that produced the lines.
size_t processes(const Reports& r) {
  std::map<std::string, int> pids;
  for (const auto& [i, line] : r.lines) ++pids[line.substr(line.find(" pid ") + 5)];
  return pids.size();
}

TEST(WorkerPool, ReusedChildrenReportEveryCandidateOnce) {
  // 1,000 candidates in chunks of at most 16: 63 chunks, run by 3 children, not 63.
  const Reports r = run(3, false, 1000, 16);
  ASSERT_EQ(r.lines.size(), 1000u);
  EXPECT_TRUE(r.lost.empty());
  EXPECT_EQ(r.duplicates, 0);
  for (const auto& [i, line] : r.lines) EXPECT_EQ(line.rfind("result " + std::to_string(i * i) + " pid ", 0), 0u) << line;
  EXPECT_LE(processes(r), 3u);
  EXPECT_NE(r.lines.begin()->second.substr(r.lines.begin()->second.find(" pid ") + 5), std::to_string(::getpid()));
}

TEST(WorkerPool, FlowLevelChunksEachGetAFreshChild) {
  const Reports r = run(2, true, 7, 1);
  ASSERT_EQ(r.lines.size(), 7u);
  EXPECT_EQ(processes(r), 7u);
  // One job without fork_always runs in this process.
  const Reports here = run(1, false, 5, 16);
  ASSERT_EQ(here.lines.size(), 5u);
  EXPECT_EQ(here.lines.at(0).substr(here.lines.at(0).find(" pid ") + 5), std::to_string(::getpid()));
}

TEST(WorkerPool, AChildThatDiesLosesOnlyTheRestOfItsChunk) {
  // 100 candidates for 2 jobs in chunks of 6 (100 / (2 x 8)): the child dies at candidate 40,
  // in the chunk 36..41: 40 and 41 are lost, 36..39 reported, and the chunks after it run in a
  // third child that replaces it.
  const Reports r = run(2, false, 100, 10, 40);
  EXPECT_EQ(r.duplicates, 0);
  ASSERT_EQ(r.lost.size(), 2u);
  EXPECT_TRUE(r.lost.count(40) && r.lost.count(41));
  EXPECT_EQ(r.lost.at(40), "worker process exited with code 9");
  EXPECT_EQ(r.lines.size(), 98u);
  for (int64_t i = 0; i < 100; ++i) EXPECT_TRUE(r.lines.count(i) || r.lost.count(i)) << i;
  EXPECT_EQ(processes(r), 3u);
}

}  // namespace
}  // namespace clustersim::sweep
