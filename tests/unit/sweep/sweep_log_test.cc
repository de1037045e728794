// SPDX-License-Identifier: Apache-2.0
#include "sim/report/sweep/result_log.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/build_info.h"
#include "sim/core/error.h"
#include "sim/report/sweep/sweep_table.h"
#include "tests/unit/scratch_dir.h"

namespace clustersim::sweep {
namespace {

using ScratchDir = clustersim::testing::ScratchDir;

// The id of candidate `index` in the logs below (a sweep's come from its CandidateSpace).
std::string id_of(int64_t index) { return "00000000000000" + std::to_string(10 + index); }

Record sample(int64_t index) {
  Record r;
  r.stage = kStageAnalytical;
  r.index = index;
  r.id = id_of(index);
  r.outcome.metrics = {{"tokens_per_s", 0.1 + 1.0 / 3.0 * static_cast<double>(index)}, {"mfu", 0.456789012345678}};
  r.outcome.info = {{"gpu", "A100 \"80GB\""}};
  r.outcome.reason = "a, b; \"c\"\n";
  return r;
}

TEST(ResultLog, LinesRoundTripEveryDigit) {
  const Record r = sample(7);
  const auto back = record_from_line(record_to_line(r));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->index, 7);
  EXPECT_EQ(back->id, r.id);
  EXPECT_EQ(back->outcome.reason, r.outcome.reason);
  EXPECT_EQ(back->outcome.info.at("gpu"), "A100 \"80GB\"");
  EXPECT_EQ(back->outcome.metrics.at("tokens_per_s"), r.outcome.metrics.at("tokens_per_s"));  // exact
  EXPECT_FALSE(record_from_line(record_to_line(r).substr(0, 40)));
  // A metric no sweep writes (not finite, below zero, not a number) marks an edited line.
  const std::string line = record_to_line(r);
  const size_t at = line.find("\"mfu\": ") + 7;
  const size_t end = line.find_first_of(",}", at);
  for (const char* edit : {"NaN", "-1", "Infinity", "\"x\""}) {
    EXPECT_FALSE(record_from_line(line.substr(0, at) + edit + line.substr(end))) << edit;
  }
  // A lost worker's record carries "retry": true; a retry that is not a bool was edited in.
  Record lost = r;
  lost.retry = true;
  const std::string retry = record_to_line(lost);
  ASSERT_TRUE(record_from_line(retry));
  EXPECT_TRUE(record_from_line(retry)->retry);
  EXPECT_FALSE(record_from_line(line)->retry);
  const size_t t = retry.find("true");
  EXPECT_FALSE(record_from_line(retry.substr(0, t) + "\"true\"" + retry.substr(t + 4)));
  // The sweep writes no control characters but line breaks and tabs: a NUL or an escape
  // sequence edited into a text (accepted until 2026-12-05) marks the line.
  const auto with = [&](const std::string& from, const std::string& to) {
    std::string edited = line;
    edited.replace(edited.find(from), from.size(), to);
    return edited;
  };
  EXPECT_FALSE(record_from_line(with("a, b", "a\\u0000, b")));
  EXPECT_FALSE(record_from_line(with("80GB", "80\\u001bGB")));
  EXPECT_FALSE(record_from_line(with(r.id, r.id + "\\u0007")));
  EXPECT_FALSE(record_from_line(with("80GB", "80\\u009bGB")));  // a C1 control
  EXPECT_TRUE(record_from_line(with("80GB", "80\\u00e9GB")));   // é is text
  EXPECT_TRUE(record_from_line(with("a, b", "a\\t, b")));
  // Metric names and info entries too: an escape in a metric's name, or an info value that is
  // not text (the sweep writes only text there), came from an edit (both read until 2026-12-05).
  EXPECT_FALSE(record_from_line(with("\"mfu\"", "\"m\\u001b[31mfu\"")));
  EXPECT_FALSE(record_from_line(with("\"gpu\": \"A100 \\\"80GB\\\"\"", "\"g\\u0000pu\": 5")));
  EXPECT_FALSE(record_from_line(with("\"gpu\": \"A100 \\\"80GB\\\"\"", "\"gpu\": [\"A100\"]")));
}

TEST(ResultLog, ResumeDropsAPartialLastLineAndChecksTheSweep) {
  const ScratchDir dir("clustersim_sweep_log");
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.file("results.jsonl");
  {
    ResultLog log(path, "fp1", 10, id_of, false, true);
    log.append(sample(0));
    log.append(sample(1));
  }
  {
    std::ofstream out(path, std::ios::app);
    out << "{\"stage\": \"analytical\", \"ind";  // killed mid-write
  }
  EXPECT_THROW(ResultLog(path, "fp1", 10, id_of, false, false), BadInput);  // neither --resume nor --restart
  EXPECT_THROW(ResultLog(path, "other", 10, id_of, true, false), BadInput);  // a different sweep
  {
    ResultLog log(path, "fp1", 10, id_of, true, false);
    ASSERT_EQ(log.previous().size(), 2u);
    log.append(sample(2));
  }
  ResultLog log(path, "fp1", 10, id_of, true, false);
  ASSERT_EQ(log.previous().size(), 3u);
  EXPECT_EQ(log.previous()[2].index, 2);
}

// A file without a whole line is this sweep's header cut short (the sweep was killed writing it),
// or someone else's file: that is not overwritten (until 2026-12-07 any text without a newline was
// replaced, with or without --resume; QA).
TEST(ResultLog, AFileWithoutAWholeLineIsReplacedOnlyWhereItBeginsTheHeader) {
  const ScratchDir dir("clustersim_sweep_log");
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.file("results.jsonl");
  const auto write = [&](const std::string& text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
  };
  const auto file_text = [&] {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  for (const bool resume : {false, true}) {
    write("my notes, no newline");
    try {
      ResultLog log(path, "fp1", 10, id_of, resume, false);
      ADD_FAILURE() << "expected BadInput";
    } catch (const BadInput& e) {
      EXPECT_NE(std::string(e.what()).find("is not a clustersim sweep log (it holds no whole line"), std::string::npos)
          << e.what();
    }
    EXPECT_EQ(file_text(), "my notes, no newline");
  }
  // --restart overwrites it.
  { ResultLog log(path, "fp1", 10, id_of, false, true); }
  const std::string header = file_text();
  ASSERT_FALSE(header.empty());
  // The header cut short is a sweep killed at its start: begun afresh.
  write(header.substr(0, header.size() / 2));
  {
    ResultLog log(path, "fp1", 10, id_of, false, false);
    EXPECT_TRUE(log.previous().empty());
  }
  EXPECT_EQ(file_text(), header);
  // Another sweep's (or build's) header cut short holds no results either.
  write("{\"sweep_log\": 1, \"fingerprint\": \"other");
  { ResultLog log(path, "fp1", 10, id_of, false, false); }
  EXPECT_EQ(file_text(), header);
}

// A log that is a directory, a device or unreadable part way is bad input (before 2026-12-05 a
// link to /dev/zero was read until memory ran out, an internal error, and /proc/self/mem, whose
// read fails, read as an empty log the results were then written to without a word).
TEST(ResultLog, ALogThatIsNoFileIsRefused) {
  const ScratchDir dir("clustersim_sweep_log");
  ASSERT_TRUE(dir.ok());
  const auto refusal = [&](const std::string& path) -> std::string {
    try {
      ResultLog log(path, "fp1", 10, id_of, true, false);
    } catch (const BadInput& e) {
      return e.what();
    }
    return "accepted";
  };
  std::filesystem::create_directory(dir.file("d.jsonl"));
  EXPECT_NE(refusal(dir.file("d.jsonl")).find("the results log is a directory"), std::string::npos) << refusal(dir.file("d.jsonl"));
  std::error_code ec;
  std::filesystem::create_symlink("/dev/zero", dir.file("zero.jsonl"), ec);
  if (!ec && std::filesystem::exists("/dev/zero")) {
    EXPECT_NE(refusal(dir.file("zero.jsonl")).find("not a regular file"), std::string::npos) << refusal(dir.file("zero.jsonl"));
  }
  if (std::filesystem::is_regular_file("/proc/self/mem")) {
    EXPECT_NE(refusal("/proc/self/mem").find("cannot be read"), std::string::npos) << refusal("/proc/self/mem");
  }
}

TEST(ResultLog, ResumeRefusesAForeignOrEditedLog) {
  const ScratchDir dir("clustersim_sweep_log");
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.file("foreign.jsonl");
  {
    std::ofstream out(path);
    out << "garbage\nmore\n";
  }
  try {
    ResultLog log(path, "fp1", 10, id_of, true, false);
    ADD_FAILURE() << "expected BadInput";
  } catch (const BadInput& e) {
    EXPECT_NE(std::string(e.what()).find("is not a clustersim sweep log"), std::string::npos) << e.what();
  }
  { ResultLog log(path, "fp1", 10, id_of, false, true); }  // --restart writes a fresh header
  {
    std::ofstream out(path, std::ios::app);
    Record invented = sample(1);
    invented.outcome.status = "great";
    out << record_to_line(invented) << "\n";
  }
  try {
    ResultLog log(path, "fp1", 10, id_of, true, false);
    ADD_FAILURE() << "expected BadInput";
  } catch (const BadInput& e) {
    EXPECT_NE(std::string(e.what()).find(":2: --resume: is not a result record"), std::string::npos) << e.what();
  }
}

// docs/sweep.md: a line the sweep did not write is refused, naming it. Until 2026-12-05 a record
// with another id, an index past the candidates, a second record of one stage, a header with
// another count and an mfu of 99 were all taken (the first left its candidate never run, the last
// was ranked).
TEST(ResultLog, ResumeRefusesRecordsTheSweepDidNotWrite) {
  const ScratchDir dir("clustersim_sweep_log");
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.file("results.jsonl");
  const auto refusal = [&](const std::string& header, const std::vector<Record>& records) {
    {
      std::ofstream out(path, std::ios::trunc);
      out << header << "\n";
      for (const Record& r : records) out << record_to_line(r) << "\n";
    }
    try {
      ResultLog log(path, "fp1", 10, id_of, true, false);
    } catch (const BadInput& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string header = "{\"sweep_log\": 1, \"fingerprint\": \"fp1\", \"candidates\": 10}";
  Record wrong_id = sample(1);
  wrong_id.id = id_of(2);
  EXPECT_NE(refusal(header, {sample(0), wrong_id}).find(":3: --resume: id '0000000000000012' is not candidate 1's "
                                                        "(0000000000000011); the log was edited or damaged"),
            std::string::npos);
  Record past = sample(10);
  EXPECT_NE(refusal(header, {past}).find(":2: --resume: index 10 is past this sweep's 10 candidates"), std::string::npos);
  Record again = sample(3);
  again.outcome.status = kInvalid;
  EXPECT_NE(refusal(header, {sample(3), sample(4), again})
                .find(":4: --resume: candidate 3's analytical stage has a result already, at line 2"),
            std::string::npos);
  // Another build's log is refused, naming both builds; this build's is taken.
  EXPECT_NE(refusal("{\"sweep_log\": 1, \"fingerprint\": \"fp1\", \"candidates\": 10, \"build\": \"0123abc\"}", {sample(0)})
                .find(":1: --resume: these results were computed by clustersim build 0123abc and this is build "),
            std::string::npos);
  EXPECT_EQ(refusal("{\"sweep_log\": 1, \"fingerprint\": \"fp1\", \"candidates\": 10, \"build\": \"" +
                        std::string(clustersim_build_id()) + "\"}",
                    {sample(0)}),
            "");
  EXPECT_NE(refusal("{\"sweep_log\": 1, \"fingerprint\": \"fp1\", \"candidates\": 48}", {sample(0)})
                .find(":1: --resume: the header's candidate count is not this sweep's 10"),
            std::string::npos);
  Record mfu = sample(5);
  mfu.outcome.metrics["mfu"] = 99;
  EXPECT_NE(refusal(header, {mfu}).find(":2: --resume: is not a result record"), std::string::npos);
  // A profile's efficiencies may reach 1.05 (a GPU above its datasheet clock), and MFU with
  // them: 1.0046 is a result (until 2026-12-05 refused, and the sweep lost the candidate it ran).
  Record fast = sample(5);
  fast.outcome.metrics["mfu"] = 1.0046;
  fast.outcome.metrics["hfu"] = 1.0046;
  EXPECT_EQ(refusal(header, {fast}), "");
  EXPECT_DOUBLE_EQ(record_from_line(record_to_line(fast))->outcome.metrics.at("mfu"), 1.0046);
  fast.outcome.metrics["mfu"] = 1.06;
  EXPECT_NE(refusal(header, {fast}).find(":2: --resume: is not a result record"), std::string::npos);
  // A lost worker's retry records before the result that replaced them are the sweep's own, and
  // so is the same candidate's other stage.
  Record lost = sample(6);
  lost.outcome.status = kFailed;
  lost.retry = true;
  Record finer = sample(6);
  finer.stage = kStageFiner;
  EXPECT_EQ(refusal(header, {lost, lost, sample(6), finer}), "");
  Record late = lost;
  EXPECT_NE(refusal(header, {sample(6), late}).find(":3: --resume: candidate 6's analytical stage has a result already"),
            std::string::npos);
}

TEST(SweepTable, ReasonsCountOnceWhateverTheNumbers) {
  EXPECT_EQ(reason_class("invalid", "parallelism.tp: must divide model.heads (24); got tp = 16; other"),
            reason_class("invalid", "parallelism.tp: must divide model.heads (96); got tp = 5"));
  EXPECT_EQ(reason_class("invalid", "cluster.gpus: x 12.5 y"), "invalid: cluster.gpus: x # y");
  // Digits inside names stay; numbers are masked.
  EXPECT_EQ(reason_class("error", "cluster.gpu: A100-SXM4-80GB lacks fp8; interleaved 1F1B needs pp > 2"),
            "error: cluster.gpu: A100-SXM4-80GB lacks fp8");
  EXPECT_EQ(reason_class("invalid", "parallelism.vpp: interleaved 1F1B needs pp > 2, got 1 on stage3"),
            "invalid: parallelism.vpp: interleaved 1F1B needs pp > #, got # on stage3");
  // Numbers in e-notation are masked whole (each candidate was a class of its own until 2026-12-06).
  EXPECT_EQ(reason_class("rejected", "tokens_per_s 3.54457e+06 below minimum 4e+06"),
            "rejected: tokens_per_s # below minimum #");
  EXPECT_EQ(reason_class("rejected", "ttft_p99_s 2.5E-3 above maximum 1e-3"), "rejected: ttft_p99_s # above maximum #");
}

// A class that only one candidate has shows that candidate's reason, numbers and all (before
// 2026-12-05 "pp x vpp (# x # = #) must divide model.layers (#)" for a single pp of 3).
TEST(SweepTable, AReasonOfOneCandidateShowsItsNumbers) {
  SweepTable t;
  const std::string one = reason_class("invalid", "parallelism.pp: must divide model.layers (80); got 3");
  const std::string two = reason_class("invalid", "parallelism.tp: must divide model.heads (24); got 16");
  t.reason_counts = {{one, 1}, {two, 2}};
  t.reason_example = {{one, "invalid: parallelism.pp: must divide model.layers (80); got 3"},
                      {two, "invalid: parallelism.tp: must divide model.heads (24); got 16"}};
  EXPECT_EQ(shown_reason(t, one), "invalid: parallelism.pp: must divide model.layers (80); got 3");
  EXPECT_EQ(shown_reason(t, two), two);
  EXPECT_NE(no_valid_candidates(t).find("1 x invalid: parallelism.pp: must divide model.layers (80); got 3"),
            std::string::npos)
      << no_valid_candidates(t);
}

// The flow stage's finalists simulated some folded and some not (fold_ranks auto): a note; all
// alike, or a finalist that did not run, none.
TEST(SweepTable, FinalistsFoldedAndUnfoldedAreNoted) {
  const auto row = [](bool ran, const std::string& status, std::optional<double> folded) {
    Row r;
    r.finer.ran = ran;
    r.finer.status = status;
    if (folded) r.finer.metrics["folded"] = *folded;
    return r;
  };
  SweepTable t;
  t.rows = {row(true, kOk, 1.0), row(true, kOk, 1.0), row(false, "", std::nullopt), row(true, kError, 0.0)};
  EXPECT_EQ(folding_mix_note(t), "");
  t.rows.push_back(row(true, kOk, 0.0));
  const std::string note = folding_mix_note(t);
  EXPECT_NE(note.find("simulated 2 finalists folded (one representative DP replica) and 1 unfolded"), std::string::npos)
      << note;
  EXPECT_NE(note.find("training.fold_ranks: false"), std::string::npos) << note;
  // Folded over a taper its sends cross (fold_ranks: true): said even when all ran alike.
  SweepTable all_folded;
  all_folded.rows = {row(true, kOk, 1.0), row(true, kOk, 1.0)};
  all_folded.rows[1].finer.info[kFoldedOverTaperInfo] = "true";
  const std::string taper = folding_mix_note(all_folded);
  EXPECT_NE(taper.find("simulated 1 finalist folded whose pipeline sends or CP rings cross a tapered tier"),
            std::string::npos)
      << taper;
  // Folded with TP or CP groups across nodes: can read fast, said on its own (code review 2026-12-07:
  // it was given the pipeline sends' "slow" wording).
  SweepTable across;
  across.rows = {row(true, kOk, 1.0)};
  across.rows[0].finer.info[kFoldedGroupsAcrossInfo] = "true";
  const std::string fast = folding_mix_note(across);
  EXPECT_NE(fast.find("folded whose TP or CP groups span nodes"), std::string::npos) << fast;
  EXPECT_NE(fast.find("can come out fast"), std::string::npos) << fast;
  EXPECT_EQ(fast.find("pipeline sends leave"), std::string::npos) << fast;
}

}  // namespace
}  // namespace clustersim::sweep
