// SPDX-License-Identifier: Apache-2.0
// The append-only results log of a sweep (one JSON line per finished candidate and stage, flushed
// as written), so that an interrupted sweep resumes without losing or repeating work.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sim/report/sweep/candidate_evaluator.h"

namespace clustersim::sweep {

inline constexpr const char* kStageAnalytical = "analytical";
inline constexpr const char* kStageFiner = "finer";

struct Record {
  std::string stage;  // kStageAnalytical or kStageFiner
  int64_t index = 0;
  std::string id;
  Outcome outcome;
  // The worker running it was lost (killed, crashed) before it reported: the candidate itself may
  // be sound, so `--resume` runs it again rather than keep the failure.
  bool retry = false;
};

// One line of JSON (no newline); numbers keep every digit so a resumed sweep writes the same
// tables as an uninterrupted one.
std::string record_to_line(const Record& r);
// Parses a line written by record_to_line; nullopt for anything else (a truncated last line).
std::optional<Record> record_from_line(const std::string& line);

class ResultLog {
 public:
  // Opens `path`. When it holds results: with `resume`, reads them (dropping a truncated last
  // line) after checking they belong to the sweep with `fingerprint` and `candidates`
  // candidates, whose ids `id_of` gives; without, throws BadInput asking for --resume or
  // --restart. With `restart` the old log is discarded. A line the sweep did not write is
  // BadInput naming it: not a record, an index past the candidates, an id not the index's, a
  // second record of one stage of one candidate (a lost worker's retry records may come before
  // it), a header whose count is not `candidates`.
  ResultLog(const std::string& path, const std::string& fingerprint, int64_t candidates,
            const std::function<std::string(int64_t)>& id_of, bool resume, bool restart);
  ~ResultLog();
  ResultLog(const ResultLog&) = delete;
  ResultLog& operator=(const ResultLog&) = delete;

  // Records read at open (in file order: a candidate's retry records before its result).
  const std::vector<Record>& previous() const { return previous_; }
  // Appends one record and flushes it to the operating system.
  void append(const Record& r);
  void append_line(const std::string& line);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
  std::vector<Record> previous_;
};

}  // namespace clustersim::sweep
