// SPDX-License-Identifier: Apache-2.0
#include "sim/report/sweep/result_log.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <utility>

#include "calibration/hardware_profile.h"
#include "sim/core/build_info.h"
#include "sim/core/error.h"
#include "sim/report/json_writer.h"
#include "sim/report/sweep/internal/json_line.h"

namespace clustersim::sweep {
namespace {

using internal::exact_number;
using internal::JsonValue;
using report::json_quote;

// The header names the build that wrote the log (since 2026-12-06): another build's predictions
// may differ, so --resume refuses to mix them.
std::string header_line(const std::string& fingerprint, int64_t candidates) {
  return "{\"sweep_log\": 1, \"fingerprint\": " + json_quote(fingerprint) +
         ", \"candidates\": " + std::to_string(candidates) + ", \"build\": " + json_quote(clustersim_build_id()) + "}";
}

const JsonValue* member(const JsonValue& v, const char* key, JsonValue::Kind kind) {
  const auto it = v.members.find(key);
  return it != v.members.end() && it->second.kind == kind ? &it->second : nullptr;
}

// A line of the log at `path` the sweep did not write.
[[noreturn]] void refuse_line(const std::string& path, int line, const std::string& what) {
  throw BadInput(InputError{path, line, "--resume", what + "; the log was edited or damaged: --restart to run the sweep again"});
}

// Text the sweep writes holds no control characters but tabs and line breaks (a reason can span
// lines); a NUL or an escape sequence ("\u0000", "\u001b") came from an edit, and went on into
// sweep.csv and the terminal.
bool plain_text(const std::string& s) {
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f) return false;
    // C1 controls, U+0080..U+009F (UTF-8 C2 80..C2 9F): U+009B starts a terminal escape too.
    if (c == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) <= 0x9f) return false;
  }
  return true;
}

}  // namespace

std::string record_to_line(const Record& r) {
  std::string s = "{\"stage\": " + json_quote(r.stage) + ", \"index\": " + std::to_string(r.index) +
                  ", \"id\": " + json_quote(r.id) + ", \"status\": " + json_quote(r.outcome.status) +
                  ", \"reason\": " + json_quote(r.outcome.reason) + ", \"metrics\": {";
  bool first = true;
  for (const auto& [k, v] : r.outcome.metrics) {
    s += (first ? "" : ", ") + json_quote(k) + ": " + exact_number(v);
    first = false;
  }
  s += "}, \"info\": {";
  first = true;
  for (const auto& [k, v] : r.outcome.info) {
    s += (first ? "" : ", ") + json_quote(k) + ": " + json_quote(v);
    first = false;
  }
  return s + (r.retry ? "}, \"retry\": true}" : "}}");
}

std::optional<Record> record_from_line(const std::string& line) {
  const std::optional<JsonValue> v = internal::parse_json_object(line);
  if (!v) return std::nullopt;
  const JsonValue* stage = member(*v, "stage", JsonValue::Kind::kString);
  const JsonValue* index = member(*v, "index", JsonValue::Kind::kNumber);
  const JsonValue* id = member(*v, "id", JsonValue::Kind::kString);
  const JsonValue* status = member(*v, "status", JsonValue::Kind::kString);
  const JsonValue* reason = member(*v, "reason", JsonValue::Kind::kString);
  const JsonValue* metrics = member(*v, "metrics", JsonValue::Kind::kObject);
  const JsonValue* info = member(*v, "info", JsonValue::Kind::kObject);
  if (!stage || !index || !id || !status || !reason || !metrics || !info) return std::nullopt;
  if (!plain_text(id->text) || !plain_text(reason->text)) return std::nullopt;
  // Only what record_to_line writes: a known stage and status, an index that is a count.
  if (stage->text != kStageAnalytical && stage->text != kStageFiner) return std::nullopt;
  bool known_status = false;
  for (const char* k : {kOk, kInvalid, kNoFit, kError, kFailed, kRejected}) known_status = known_status || status->text == k;
  if (!known_status || !(index->number >= 0 && index->number < 9.0e18) ||
      index->number != std::floor(index->number)) {
    return std::nullopt;
  }
  Record r;
  // "retry" is written only as true; anything else there was not written by the sweep.
  if (const auto it = v->members.find("retry"); it != v->members.end()) {
    if (it->second.kind != JsonValue::Kind::kBool) return std::nullopt;
    r.retry = it->second.boolean;
  }
  r.stage = stage->text;
  r.index = static_cast<int64_t>(index->number);
  r.id = id->text;
  r.outcome.status = status->text;
  r.outcome.reason = reason->text;
  for (const auto& [k, m] : metrics->members) {
    // Every metric a sweep writes is a finite count, time, rate or ratio, none below zero, and
    // a utilisation is a fraction of the peak: any other value was put there by hand.
    if (m.kind != JsonValue::Kind::kNumber || !std::isfinite(m.number) || m.number < 0 || !plain_text(k)) {
      return std::nullopt;
    }
    // A profile's efficiencies reach kMaxFittedEfficiency (a GPU above its datasheet clock), and
    // MFU with them: until 2026-12-05 an MFU over 1 was refused here, and the sweep dropped the
    // candidate it had just run without a word.
    if ((k == "memory_fits" && m.number > 1) || ((k == "mfu" || k == "hfu") && m.number > calib::kMaxFittedEfficiency)) {
      return std::nullopt;
    }
    r.outcome.metrics[k] = m.number;
  }
  for (const auto& [k, m] : info->members) {
    // Every info value is text; any other (a number, a list) was edited in and was dropped unseen.
    if (m.kind != JsonValue::Kind::kString || !plain_text(k) || !plain_text(m.text)) return std::nullopt;
    r.outcome.info[k] = m.text;
  }
  return r;
}

ResultLog::ResultLog(const std::string& path, const std::string& fingerprint, int64_t candidates,
                     const std::function<std::string(int64_t)>& id_of, bool resume, bool restart)
    : path_(path) {
  std::error_code ec;
  if (restart) std::filesystem::remove(path, ec);
  std::string text;
  const std::filesystem::file_type type = std::filesystem::status(path, ec).type();
  if (ec && type != std::filesystem::file_type::not_found) {
    throw BadInput(InputError{path, 0, "--out", "the results log cannot be read (" + ec.message() + ")"});
  }
  // A device or a pipe is no log (a link to /dev/zero was read until memory ran out: 'internal
  // error: std::bad_alloc'), and a read that fails part way is not an empty log (/proc/self/mem
  // read as one, and the results went nowhere) (both until 2026-12-05).
  if (type != std::filesystem::file_type::not_found && type != std::filesystem::file_type::regular) {
    throw BadInput(InputError{path, 0, "--out",
                              type == std::filesystem::file_type::directory
                                  ? "the results log is a directory; expected the file the sweep writes (use another --out)"
                                  : "the results log is not a regular file (a device, pipe or socket); expected the file "
                                    "the sweep writes (use another --out)"});
  }
  if (type == std::filesystem::file_type::regular) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw BadInput(InputError{path, 0, "--out", "the results log cannot be opened for reading"});
    char chunk[1 << 16];
    while (in.read(chunk, sizeof chunk) || in.gcount() > 0) text.append(chunk, static_cast<size_t>(in.gcount()));
    if (in.bad()) throw BadInput(InputError{path, 0, "--out", "the results log cannot be read (a read error part way)"});
  }
  // Only whole lines count: a sweep killed mid-write leaves a partial last line.
  const size_t whole = text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1;
  // Without a whole line the file is this sweep's header cut short, or not a log at all: another
  // file of that name is not overwritten (until 2026-12-07 any text without a newline was taken for
  // a half-written header and replaced, with or without --resume; QA).
  // (Any sweep's header cut short holds no results: begun afresh too. Review, 2026-12-07.)
  const std::string header_start = "{\"sweep_log\": ";
  const bool cut_header = header_line(fingerprint, candidates).compare(0, text.size(), text) == 0 ||
                          text.compare(0, header_start.size(), header_start) == 0;
  if (whole == 0 && !text.empty() && !cut_header) {
    throw BadInput(InputError{path, 1, resume ? "--resume" : "--out",
                              "is not a clustersim sweep log (it holds no whole line, and what it holds does not begin "
                              "this sweep's log header); use another --out, or --restart to overwrite it"});
  }
  text.resize(whole);
  if (!text.empty()) {
    if (!resume) {
      throw BadInput(InputError{path, 0, "--out",
                                "this directory already holds results of a sweep; pass --resume to "
                                "continue it or --restart to discard them"});
    }
    std::istringstream lines(text);
    std::string line;
    std::getline(lines, line);
    const std::optional<JsonValue> header = internal::parse_json_object(line);
    const JsonValue* fp = header ? member(*header, "fingerprint", JsonValue::Kind::kString) : nullptr;
    if (!header || !member(*header, "sweep_log", JsonValue::Kind::kNumber) || !fp) {
      throw BadInput(InputError{path, 1, "--resume",
                                "is not a clustersim sweep log (its first line is not the log header); use "
                                "another --out, or --restart to overwrite it"});
    }
    if (fp->text != fingerprint) {
      throw BadInput(InputError{path, 1, "--resume",
                                "these results belong to a different sweep (the sweep file's set, axes, "
                                "constraints.memory_fits or flow_stage.fidelity, its base scenario or a file "
                                "they name, a GPU profile or a trace, changed since; what only ranks may change: "
                                "the objective and train_tokens, the other constraints, prices, --top, "
                                "flow_stage.top_k and report); use another --out or --restart"});
    }
    // A log written by another build holds that build's predictions: resuming would rank them
    // beside this one's (a nightly sweep resumed after an upgrade did so until 2026-12-06). A log
    // from before the header named its build is taken as it was.
    if (const JsonValue* build = member(*header, "build", JsonValue::Kind::kString);
        build && build->text != clustersim_build_id()) {
      throw BadInput(InputError{path, 1, "--resume",
                                "these results were computed by clustersim build " + build->text + " and this is build " +
                                    clustersim_build_id() +
                                    ", whose predictions may differ; resume with the build that wrote them, or use "
                                    "another --out or --restart"});
    }
    // Whole lines are all the sweep's own; anything else was edited in or is damage (until
    // 2026-12-05 a record's id, its index's range, a second record and the header's count went
    // unchecked: a candidate with another id was never run again, and an edited mfu was ranked).
    const JsonValue* count = member(*header, "candidates", JsonValue::Kind::kNumber);
    if (!count || count->number != static_cast<double>(candidates)) {
      refuse_line(path, 1, "the header's candidate count is not this sweep's " + std::to_string(candidates));
    }
    std::map<std::pair<std::string, int64_t>, int> result_line;  // (stage, index) -> its result's line
    int n = 1;
    while (std::getline(lines, line)) {
      ++n;
      auto r = record_from_line(line);
      if (!r) refuse_line(path, n, "is not a result record of this sweep");
      if (r->index >= candidates) {
        refuse_line(path, n, "index " + std::to_string(r->index) + " is past this sweep's " + std::to_string(candidates) +
                      " candidates");
      }
      if (const std::string id = id_of(r->index); r->id != id) {
        refuse_line(path, n, "id '" + r->id + "' is not candidate " + std::to_string(r->index) + "'s (" + id + ")");
      }
      // A lost worker's retry records come before the result of the run that replaced them.
      if (const auto it = result_line.find({r->stage, r->index}); it != result_line.end()) {
        refuse_line(path, n, "candidate " + std::to_string(r->index) + "'s " + r->stage + " stage has a result already, at line " +
                      std::to_string(it->second));
      }
      if (!r->retry) result_line[{r->stage, r->index}] = n;
      previous_.push_back(std::move(*r));
    }
  }
  std::filesystem::resize_file(path, whole, ec);  // drop the partial line before appending
  file_ = std::fopen(path.c_str(), whole == 0 ? "wb" : "ab");
  if (!file_) throw BadInput(InputError{path, 0, "--out", "cannot write the results log"});
  if (whole == 0) append_line(header_line(fingerprint, candidates));
}

ResultLog::~ResultLog() {
  if (file_) std::fclose(file_);
}

void ResultLog::append(const Record& r) { append_line(record_to_line(r)); }

void ResultLog::append_line(const std::string& line) {
  std::fwrite(line.data(), 1, line.size(), file_);
  std::fputc('\n', file_);
  std::fflush(file_);
}

}  // namespace clustersim::sweep
