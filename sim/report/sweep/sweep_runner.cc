// SPDX-License-Identifier: Apache-2.0
#include "sim/report/sweep/sweep_runner.h"

#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cstdio>
#include <memory>
#include <set>
#include <stdexcept>

#include "sim/report/sweep/candidate_evaluator.h"
#include "sim/report/sweep/candidate_space.h"
#include "sim/report/sweep/sweep_table.h"
#include "sim/report/sweep/worker_pool.h"

namespace clustersim::sweep {
namespace {

using Clock = std::chrono::steady_clock;

// At most this many analytical candidates per child process.
constexpr int kMaxAnalyticalChunk = 256;

// Peak resident memory of rank 0 per candidate, measured 2026-12-05 with /usr/bin/time (-j 2):
// 5.9 KB on 50,000 training candidates that all run (a result with every metric), 1.6 KB on
// 1,000,000 that are nearly all invalid (a reason only). The estimate takes the worst case,
// rounded up; and the process's own baseline.
constexpr int64_t kBytesPerCandidate = 6144;
constexpr int64_t kBaselineBytes = int64_t{64} << 20;

class Progress {
 public:
  Progress(bool on, const char* stage, int64_t total) : on_(on), stage_(stage), total_(total), start_(Clock::now()) {}
  void tick(int64_t done) {
    if (!on_) return;
    const auto now = Clock::now();
    if (done < total_ && now - last_ < std::chrono::milliseconds(200)) return;
    last_ = now;
    const double s = std::chrono::duration<double>(now - start_).count();
    const double rate = s > 0 ? static_cast<double>(done) / s : 0;
    const double eta = rate > 0 ? static_cast<double>(total_ - done) / rate : 0;
    constexpr int kWidth = 30;
    const int filled = total_ > 0 ? static_cast<int>(kWidth * done / total_) : kWidth;
    std::fprintf(stderr, "\r%-10s [%s%s] %lld/%lld  %s/s  ETA %.0fs   ", stage_,
                 std::string(static_cast<size_t>(filled), '#').c_str(),
                 std::string(static_cast<size_t>(kWidth - filled), '.').c_str(), static_cast<long long>(done),
                 static_cast<long long>(total_), rate_text(rate).c_str(), eta);
    if (done >= total_) std::fprintf(stderr, "\n");
    std::fflush(stderr);
  }

 private:
  bool on_;
  const char* stage_;
  int64_t total_;
  Clock::time_point start_;
  Clock::time_point last_;
};

class Runner {
 public:
  Runner(const SweepSpec& spec, const RunOptions& options)
      : spec_(spec), options_(options), space_(spec), evaluator_(space_), transport_(options.transport) {
    rank_ = transport_ ? transport_->rank() : 0;
    size_ = transport_ ? transport_->size() : 1;
  }

  SweepRun run() {
    SweepRun out;
    out.top_k = options_.top_k.value_or(spec_.flow_top_k);
    if (rank_ == 0) {
      log_ = std::make_unique<ResultLog>(options_.log_path, spec_.fingerprint, space_.size(),
                                         [this](int64_t i) { return space_.id(i); }, options_.resume, options_.restart);
      if (options_.after_log_opened) options_.after_log_opened();
      for (const Record& r : log_->previous()) {
        if (!r.retry) remember(r);  // a candidate whose worker was lost runs again
      }
    }
    // Stage 1: every candidate not yet in the log.
    std::vector<int64_t> todo;
    if (rank_ == 0) {
      for (int64_t i = 0; i < space_.size(); ++i) {
        if (!done_.count({kStageAnalytical, i})) todo.push_back(i);
      }
      out.analytical.candidates = space_.size();
      out.analytical.reused = space_.size() - static_cast<int64_t>(todo.size());
    }
    out.analytical.seconds = stage(kStageAnalytical, todo);
    out.analytical.ran = static_cast<int64_t>(todo.size());

    // Stage 2: the best k of stage 1 at the finer level.
    todo.clear();
    std::set<int64_t> top;
    if (rank_ == 0) {
      const SweepTable table = build_table(space_, records_);
      const auto k = std::min<size_t>(static_cast<size_t>(std::max(out.top_k, 0)), table.ranking.size());
      for (size_t r = 0; r < k; ++r) {
        const int64_t i = table.rows[static_cast<size_t>(table.ranking[r])].index;
        top.insert(i);
        if (!done_.count({kStageFiner, i})) todo.push_back(i);
      }
      out.finer.candidates = static_cast<int64_t>(k);
      out.finer.reused = static_cast<int64_t>(k - todo.size());
    }
    out.finer.seconds = stage(kStageFiner, todo);
    out.finer.ran = static_cast<int64_t>(todo.size());
    if (rank_ == 0) {
      // The finer rows of this run's best k only: a log resumed with a smaller --top holds more
      // (kept there for a later, larger one).
      for (Record& r : records_) {
        if (r.stage != kStageFiner || top.count(r.index)) out.records.push_back(std::move(r));
      }
    }
    return out;
  }

 private:
  void remember(const Record& r) {
    // The log's records are checked as it is read (index, id, one result per stage), and the
    // workers' are this sweep's own.
    assert(r.index >= 0 && r.index < space_.size() && r.id == space_.id(r.index) && "a record of another sweep");
    if (done_.insert({r.stage, r.index}).second) records_.push_back(r);
  }

  // Rank 0: one record line arrived (from a local worker or a rank).
  void accept(const std::string& line) {
    std::optional<Record> r = record_from_line(line);
    // A worker's line that does not read back is a bug, not a candidate to lose in silence.
    if (!r) throw std::logic_error("a sweep worker's result does not read back as a log record: " + line.substr(0, 300));
    if (done_.count({r->stage, r->index})) return;
    log_->append_line(line);
    remember(*r);
    ++appended_;
    ++stage_done_;
    progress_->tick(stage_done_);
    if (options_.after_append) options_.after_append(appended_);
  }

  void poll_ranks() {
    if (!transport_ || size_ == 1) return;
    if (rank_ == 0) {
      std::vector<std::string> lines;
      dones_ += transport_->receive(lines);
      for (const std::string& l : lines) accept(l);
      return;
    }
    if (!outbox_.empty() && (outbox_.size() > (1 << 16) || Clock::now() - last_send_ > std::chrono::milliseconds(100))) {
      transport_->send_lines(outbox_);
      outbox_.clear();
      last_send_ = Clock::now();
    }
  }

  // Runs `todo` (meaningful on rank 0; broadcast to the others) and returns the wall time.
  double stage(const char* name, std::vector<int64_t>& todo) {
    if (transport_ && size_ > 1) transport_->broadcast(todo);
    const auto start = Clock::now();
    const bool finer = std::string(name) == kStageFiner;
    std::vector<int64_t> mine;
    for (size_t i = 0; i < todo.size(); ++i) {
      if (static_cast<int>(i % static_cast<size_t>(size_)) == rank_) mine.push_back(todo[i]);
    }
    stage_done_ = 0;
    dones_ = 0;
    progress_ = std::make_unique<Progress>(options_.progress && rank_ == 0 && !todo.empty(),
                                           finer ? spec_.flow_fidelity.c_str() : name,
                                           static_cast<int64_t>(todo.size()));
    const auto work = [&](int64_t index) {
      Record r;
      r.stage = name;
      r.index = index;
      r.id = space_.id(index);
      r.outcome = finer ? evaluator_.finer(index) : evaluator_.analytical(index);
      return record_to_line(r);
    };
    const auto on_line = [&](int64_t, const std::string& line) {
      if (rank_ == 0) {
        accept(line);
      } else {
        outbox_ += line + "\n";
      }
    };
    const auto on_lost = [&](int64_t index, const std::string& why) {
      Record r;
      r.stage = name;
      r.index = index;
      r.id = space_.id(index);
      r.outcome.status = kFailed;
      r.outcome.reason = why;
      r.retry = true;
      on_line(index, record_to_line(r));
    };
    // Finer levels run SimGrid: a fresh process for each candidate.
    WorkerPool pool(options_.jobs, finer);
    pool.run(make_chunks(mine, options_.jobs, finer ? 1 : kMaxAnalyticalChunk), work, on_line, on_lost,
             [&] { poll_ranks(); });
    if (transport_ && size_ > 1) {
      if (rank_ == 0) {
        while (dones_ < size_ - 1) {
          poll_ranks();
          ::usleep(2000);
        }
        poll_ranks();
      } else {
        if (!outbox_.empty()) transport_->send_lines(outbox_);
        outbox_.clear();
        transport_->send_done();
      }
    }
    progress_->tick(static_cast<int64_t>(todo.size()));
    return std::chrono::duration<double>(Clock::now() - start).count();
  }

  const SweepSpec& spec_;
  const RunOptions& options_;
  CandidateSpace space_;
  CandidateEvaluator evaluator_;
  Transport* transport_;
  int rank_ = 0;
  int size_ = 1;
  std::unique_ptr<ResultLog> log_;
  std::vector<Record> records_;
  std::set<std::pair<std::string, int64_t>> done_;
  int64_t appended_ = 0;
  int64_t stage_done_ = 0;
  int dones_ = 0;
  std::string outbox_;
  Clock::time_point last_send_ = Clock::now();
  std::unique_ptr<Progress> progress_;
};

}  // namespace

SweepRun run_sweep(const SweepSpec& spec, const RunOptions& options) { return Runner(spec, options).run(); }

int64_t sweep_memory_estimate(int64_t candidates) {
  return kBaselineBytes + candidates * kBytesPerCandidate;
}

std::string sweep_memory_refusal(int64_t candidates, int64_t available_bytes) {
  const int64_t need = sweep_memory_estimate(candidates);
  if (need <= available_bytes) return "";
  char buf[400];
  std::snprintf(buf, sizeof buf,
                "the axes make %lld candidates; holding their results needs about %.1f GiB (%.1f KiB each) "
                "but %.1f GiB is available: narrow the axes or split the sweep (e.g. one sweep per value of "
                "the first axis, with `set:`)",
                static_cast<long long>(candidates), static_cast<double>(need) / (1 << 30),
                static_cast<double>(kBytesPerCandidate) / 1024, static_cast<double>(available_bytes) / (1 << 30));
  return buf;
}

}  // namespace clustersim::sweep
