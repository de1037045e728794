// SPDX-License-Identifier: Apache-2.0
#include "sim/report/trace_writer.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "sim/report/internal/trace_lanes.h"
#include "sim/report/json_writer.h"

namespace clustersim::report {
namespace {

std::string us(Time t) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.6f", static_cast<double>(t.as_ps()) * 1e-6);
  return buf;
}

std::string span_name(const engine::TraceSpan& s) {
  std::string name = work::to_string(s.role);
  if (s.microbatch >= 0) name += " mb" + std::to_string(s.microbatch);
  if (s.chunk >= 0) name += " c" + std::to_string(s.chunk);
  return name;
}

}  // namespace

std::string write_trace_json(const engine::FlowTrainingResult& flow) {
  std::string out = "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  bool first = true;
  auto emit = [&](const std::string& event) {
    if (!first) out += ",\n";
    first = false;
    out += event;
  };
  std::vector<bool> shown(flow.group_names.size(), false);
  for (const engine::TraceSpan& s : flow.spans) shown[s.group] = true;
  // Each span on its group's stream, and each pipeline send's receive and the tied embedding's
  // all-reduce on the peer's (the last stage's share of it was missing until 2026-12-06, a gap on
  // every lane there): their lanes (a send and a receive in flight together overlap on the pp
  // stream without nesting, and Perfetto dropped one of them until 2026-12-06).
  const auto mirrored = [&](const engine::TraceSpan& s) {
    return (s.role == work::OpRole::kPpSend || s.role == work::OpRole::kEmbeddingSync) && s.peer_group >= 0 &&
           s.peer_group < static_cast<int32_t>(shown.size()) && shown[s.peer_group] && s.peer_group != s.group;
  };
  std::vector<internal::LaneSpan> placed;
  placed.reserve(flow.spans.size() * 2);
  for (const engine::TraceSpan& s : flow.spans) {
    const int track = static_cast<int>(s.stream);
    placed.push_back({s.group, track, s.start, s.end});
    if (mirrored(s)) placed.push_back({s.peer_group, track, s.start, s.end});
  }
  const std::vector<int> lanes = internal::pack_lanes(placed);
  const internal::LaneCounts lanes_used(placed, lanes);
  const auto tid_of = [&](size_t i) {
    return std::to_string(internal::lane_tid(placed[i].track, lanes[i], work::kStreamCount));
  };
  for (size_t g = 0; g < flow.group_names.size(); ++g) {
    if (!shown[g]) continue;
    const std::string pid = std::to_string(g);
    emit("{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" + pid + ",\"tid\":0,\"args\":{\"name\":" +
         json_quote(flow.group_names[g]) + "}}");
    emit("{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":" + pid + ",\"tid\":0,\"args\":{\"sort_index\":" + pid + "}}");
    for (int t = 0; t < work::kStreamCount; ++t) {
      // MoE all-to-alls run on the TP stream (category "ep"): its lane says so (it read "tp" alone
      // until 2026-12-06).
      const auto stream = static_cast<work::Stream>(t);
      const std::string name = stream == work::Stream::kTp && !flow.estimate.moe_layers.empty()
                                   ? std::string("tp, ep")
                                   : std::string(work::to_string(stream));
      const auto pid_g = static_cast<int64_t>(g);
      for (const std::string& e : internal::lane_metadata(pid_g, t, lanes_used.of(pid_g, t), work::kStreamCount, name)) {
        emit(e);
      }
    }
  }
  // MoE: each layer's exposed all-to-all time per micro-batch on the critical rank group, as
  // measured (metadata; viewers ignore it, scripts read it).
  for (const engine::MoeLayerReport& l : flow.estimate.moe_layers) {
    if (flow.groups.empty()) break;
    emit("{\"ph\":\"M\",\"name\":\"moe_layer\",\"pid\":0,\"tid\":0,\"args\":{\"layer\":" + std::to_string(l.layer) +
         ",\"stage\":" + std::to_string(flow.estimate.critical_stage) + ",\"a2a_exposed_us\":" + us(l.a2a_exposed) +
         ",\"chunks\":" + std::to_string(l.chunks) + "}}");
  }
  int64_t flow_id = 0;
  size_t at = 0;  // into `placed`, in step with the spans
  for (const engine::TraceSpan& s : flow.spans) {
    const std::string pid = std::to_string(s.group);
    const std::string tid = tid_of(at++);
    const std::string ts = us(s.start);
    const std::string dur = us(s.end - s.start);
    std::string args = "{";
    if (s.microbatch >= 0) args += "\"microbatch\":" + std::to_string(s.microbatch);
    if (s.chunk >= 0) args += std::string(args.size() > 1 ? "," : "") + "\"chunk\":" + std::to_string(s.chunk);
    if (s.layer >= 0) args += std::string(args.size() > 1 ? "," : "") + "\"layer\":" + std::to_string(s.layer);
    args += "}";
    emit("{\"ph\":\"X\",\"name\":" + json_quote(span_name(s)) + ",\"cat\":\"" + engine::breakdown_kind(s.role) +
         "\",\"pid\":" + pid + ",\"tid\":" + tid + ",\"ts\":" + ts + ",\"dur\":" + dur + ",\"args\":" + args + "}");
    if (mirrored(s) && s.role == work::OpRole::kEmbeddingSync) {
      emit("{\"ph\":\"X\",\"name\":" + json_quote(span_name(s)) + ",\"cat\":\"" + engine::breakdown_kind(s.role) +
           "\",\"pid\":" + std::to_string(s.peer_group) + ",\"tid\":" + tid_of(at++) + ",\"ts\":" + ts +
           ",\"dur\":" + dur + ",\"args\":" + args + "}");
    } else if (mirrored(s)) {
      const std::string peer = std::to_string(s.peer_group);
      const std::string peer_tid = tid_of(at++);
      const std::string id = std::to_string(++flow_id);
      emit("{\"ph\":\"X\",\"name\":" + json_quote("recv" + span_name(s).substr(7)) + ",\"cat\":\"pp\",\"pid\":" + peer +
           ",\"tid\":" + peer_tid + ",\"ts\":" + ts + ",\"dur\":" + dur + ",\"args\":" + args + "}");
      emit("{\"ph\":\"s\",\"name\":\"p2p\",\"cat\":\"pp\",\"id\":" + id + ",\"pid\":" + pid + ",\"tid\":" + tid +
           ",\"ts\":" + ts + "}");
      emit("{\"ph\":\"f\",\"bp\":\"e\",\"name\":\"p2p\",\"cat\":\"pp\",\"id\":" + id + ",\"pid\":" + peer +
           ",\"tid\":" + peer_tid + ",\"ts\":" + ts + "}");
    }
  }
  out += "\n]}\n";
  return out;
}

}  // namespace clustersim::report
