// SPDX-License-Identifier: Apache-2.0
#include "workloads/pipeline_schedule.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace clustersim::work {

std::vector<PipelinePass> pipeline_order(int pp, int vpp, int microbatches, int rank) {
  assert(pp >= 1 && vpp >= 1 && microbatches >= 1 && rank >= 0 && rank < pp && "bad pipeline shape");
  std::vector<PipelinePass> out;
  const int total = microbatches * vpp;
  out.reserve(static_cast<size_t>(2 * total));
  if (vpp == 1) {
    const int warmup = std::min(pp - rank - 1, microbatches);
    int f = 0, b = 0;
    for (; f < warmup; ++f) out.push_back({f, 0, true});
    while (f < microbatches) {
      out.push_back({f++, 0, true});
      out.push_back({b++, 0, false});
    }
    while (b < microbatches) out.push_back({b++, 0, false});
    return out;
  }
  assert(microbatches % pp == 0 && "interleaved 1F1B needs micro-batches to be a multiple of pp");
  const int group = pp * vpp;
  auto pass = [&](int k, bool forward) {
    const int in_group = k % group;
    const int chunk = forward ? in_group / pp : vpp - 1 - in_group / pp;
    return PipelinePass{(k / group) * pp + k % pp, chunk, forward};
  };
  int warmup = microbatches == pp ? total : std::min(total, 2 * (pp - rank - 1) + (vpp - 1) * pp);
  int f = 0, b = 0;
  for (; f < warmup; ++f) out.push_back(pass(f, true));
  while (f < total) {
    out.push_back(pass(f++, true));
    out.push_back(pass(b++, false));
  }
  while (b < total) out.push_back(pass(b++, false));
  return out;
}

int chunks_in_flight(int pp, int vpp, int m, int rank) {
  if (vpp == 1) return std::min(pp - rank, m);
  const int total = m * vpp;
  if (m == pp) return total;
  return std::min(total, 2 * (pp - rank - 1) + (vpp - 1) * pp + 1);
}

double bubble_microbatch_slots(int pp, int vpp) { return static_cast<double>(pp - 1) / vpp; }

std::vector<double> peak_held_by_rank(const std::vector<double>& held, int pp, int vpp, int m, double last_stage_extra) {
  assert(held.size() == static_cast<size_t>(pp) * vpp && "one value per virtual stage");
  const int replayed = std::min(m, 4 * pp);
  std::vector<double> peak(static_cast<size_t>(pp), 0.0);
  for (int s = 0; s < pp; ++s) {
    const double extra = s == pp - 1 ? last_stage_extra : 0.0;
    double now = 0;
    for (const PipelinePass& op : pipeline_order(pp, vpp, replayed, s)) {
      const double v = held[static_cast<size_t>(op.chunk * pp + s)];
      now += op.forward ? v : -v;
      peak[static_cast<size_t>(s)] = std::max(peak[static_cast<size_t>(s)], now + extra);
    }
  }
  return peak;
}

double peak_held(const std::vector<double>& held, int pp, int vpp, int m, double last_stage_extra) {
  const std::vector<double> by_rank = peak_held_by_rank(held, pp, vpp, m, last_stage_extra);
  return *std::max_element(by_rank.begin(), by_rank.end());
}

namespace {

using Schedule = std::vector<std::vector<PipelinePass>>;  // pipeline_order of each rank

// Entry i of one of PipelineSends' vectors; 0 where it is empty (free).
Time entry(const std::vector<Time>& v, int i) { return v.empty() ? Time::zero() : v[static_cast<size_t>(i)]; }

// The NIC of `device` (PipelineSends::nic; each device its own where it is empty).
size_t nic_of(const PipelineSends& sends, int device) {
  return static_cast<size_t>(sends.nic.empty() ? device : sends.nic[static_cast<size_t>(device)]);
}

Schedule schedule_of(int pp, int vpp, int m) {
  Schedule schedule(static_cast<size_t>(pp));
  for (int s = 0; s < pp; ++s) schedule[static_cast<size_t>(s)] = pipeline_order(pp, vpp, m, s);
  return schedule;
}

// pipeline_makespan with sends that hold their device's NIC: a discrete-event replay. Each
// device's sends leave in order the same way (forward behind forward, backward behind backward,
// as the flow level chains them); the sends in flight share their sender's NIC and their
// receiver's, each at 1 / (the most sends on either) of the NIC's rate (max-min fair where the
// pipeline's sends are symmetric); a send's input reaches its pass its latency (send time less
// NIC time) after its last byte leaves. At most pp passes and 2 pp sends (one per device and
// direction) are under way at once, so the next event is found by a scan.
Time shared_nic_makespan(const std::vector<ChunkTime>& chunks, int pp, int vpp, int m, const Schedule& schedule,
                         const PipelineSends& sends, std::vector<Time>* finished) {
  const int vs = pp * vpp;
  const Time kNotRun = Time::ps(-1);
  // Input arrival per (virtual stage, micro-batch, direction): 0 forward, 1 backward.
  const auto slot = [&](int v, int mb, bool forward) { return (static_cast<size_t>(v) * m + mb) * 2 + (forward ? 0 : 1); };
  std::vector<Time> input(static_cast<size_t>(vs) * m * 2, kNotRun);
  for (int mb = 0; mb < m; ++mb) input[slot(0, mb, true)] = Time::zero();
  std::vector<size_t> next(pp, 0);
  std::vector<Time> pass_end(pp, Time::max());  // of the pass under way (max: idle)
  // Blocking sends: the device waits for its send (held) and, once the send's last byte has
  // left, for its latency (pass_end then marks the release, not a pass's end).
  std::vector<bool> held(pp, false), releasing(pp, false);
  Time makespan;

  // A send, waiting or under way on line q = 2 x device + (0 forward, 1 backward).
  struct Send {
    int dst = 0;
    size_t to = 0;         // the input slot it carries
    Time latency = {};     // after its last byte
    double left_ps = 0;    // NIC time left at the full rate
  };
  // Holds device s until `until` (a blocking send's delivery).
  const auto hold_until = [&](int s, Time until) {
    pass_end[s] = until;
    releasing[s] = true;
  };
  const size_t lines = 2 * static_cast<size_t>(pp);
  std::vector<std::vector<Send>> waiting(lines);
  std::vector<size_t> head(lines, 0);         // the line's send under way (or next) in `waiting`
  std::vector<Time> send_end(lines, Time::max());  // of the send under way (max: none)
  std::vector<double> rate(lines, 0);
  std::vector<Time> since(lines);
  // Sends under way out of and into each NIC (sends.nic: devices sharing one; else one each).
  const auto nic_id = [&](int device) { return nic_of(sends, device); };
  size_t nics = static_cast<size_t>(pp);
  for (int d = 0; d < pp; ++d) nics = std::max(nics, nic_id(d) + 1);
  std::vector<int> out_of(nics, 0), into(nics, 0);

  // Brings a send under way up to now at its old share and reschedules it at its new one.
  const auto reshare_line = [&](size_t q, Time now) {
    if (send_end[q] == Time::max()) return;
    Send& sd = waiting[q][head[q]];
    const double r = 1.0 / std::max(out_of[nic_id(static_cast<int>(q / 2))], into[nic_id(sd.dst)]);
    if (r == rate[q]) return;
    sd.left_ps = std::max(0.0, sd.left_ps - static_cast<double>((now - since[q]).as_ps()) * rate[q]);
    since[q] = now;
    rate[q] = r;
    send_end[q] = now + Time::ps(static_cast<int64_t>(std::ceil(sd.left_ps / r)));
  };
  // After a send starts or ends: every send under way takes its share again (those on NICs whose
  // counts did not change keep their rate, and reshare_line leaves them as they are). A scan, as
  // the next event's is.
  const auto reshare = [&](Time now) {
    for (size_t q = 0; q < lines; ++q) reshare_line(q, now);
  };
  const auto start_send = [&](size_t q, Time now) {
    const int dst = waiting[q][head[q]].dst;
    ++out_of[nic_id(static_cast<int>(q / 2))];
    ++into[nic_id(dst)];
    send_end[q] = now;  // under way from now; reshare sets its end
    since[q] = now;
    rate[q] = 0;
    reshare(now);
  };
  const auto try_start = [&](int s, Time now) {
    if (pass_end[s] != Time::max() || held[s] || next[s] == schedule[s].size()) return;
    const PipelinePass& op = schedule[s][next[s]];
    const Time ready = input[slot(op.chunk * pp + s, op.microbatch, op.forward)];
    if (ready == kNotRun) return;
    const ChunkTime& c = chunks[static_cast<size_t>(op.chunk * pp + s)];
    pass_end[s] = max(now, ready) + (op.forward ? c.forward : c.backward);
  };
  // An input that reaches its pass at `t` (now or later): its device starts it then if idle.
  const auto arrive = [&](size_t to, Time t, Time now) {
    input[to] = t;
    try_start(static_cast<int>((to / 2 / static_cast<size_t>(m)) % static_cast<size_t>(pp)), now);
  };
  for (int s = 0; s < pp; ++s) try_start(s, Time::zero());

  while (true) {
    // The next event: a pass's end or a send's last byte (passes first at a tie).
    Time now = Time::max();
    int device = -1;
    size_t line = lines;
    for (int s = 0; s < pp; ++s) {
      if (pass_end[s] < now) now = pass_end[s], device = s;
    }
    for (size_t q = 0; q < lines; ++q) {
      if (send_end[q] < now) now = send_end[q], device = -1, line = q;
    }
    if (now == Time::max()) break;
    if (device >= 0 && releasing[device]) {
      releasing[device] = false;
      pass_end[device] = Time::max();
      try_start(device, now);
    } else if (device >= 0) {
      const int s = device;
      const PipelinePass op = schedule[s][next[s]++];
      pass_end[s] = Time::max();
      makespan = max(makespan, now);
      const int v = op.chunk * pp + s;
      if (finished && !op.forward && v == 0) (*finished)[static_cast<size_t>(op.microbatch)] = now;
      if (op.forward && v + 1 == vs) {
        input[slot(v, op.microbatch, false)] = now;  // the last stage's backward takes its own output
      } else if (op.forward || v > 0) {
        const int to_v = op.forward ? v + 1 : v - 1;
        const size_t to = slot(to_v, op.microbatch, op.forward);
        const Time send = entry(op.forward ? sends.forward : sends.backward, v);
        const Time nic = entry(op.forward ? sends.forward_nic : sends.backward_nic, v);
        if (nic > Time::zero()) {
          const size_t q = 2 * static_cast<size_t>(s) + (op.forward ? 0 : 1);
          waiting[q].push_back({to_v % pp, to, send - nic, static_cast<double>(nic.as_ps())});
          if (head[q] + 1 == waiting[q].size()) start_send(q, now);
          held[s] = sends.blocking;
        } else {
          arrive(to, now + send, now);
          if (sends.blocking && send > Time::zero()) hold_until(s, now + send);
        }
      }
      try_start(s, now);
    } else {
      const size_t q = line;
      const Send done = waiting[q][head[q]++];
      send_end[q] = Time::max();
      --out_of[nic_id(static_cast<int>(q / 2))];
      --into[nic_id(done.dst)];
      reshare(now);
      arrive(done.to, now + done.latency, now);
      if (held[q / 2]) {
        held[q / 2] = false;
        hold_until(static_cast<int>(q / 2), now + done.latency);
      }
      if (head[q] < waiting[q].size()) start_send(q, now);  // the next send the same way leaves now
    }
  }
  return makespan;
}

// pipeline_makespan, and where `finished` is given, when each micro-batch's last pass (virtual
// stage 0's backward) ends; where `backward` is given (sends free only), each device's backward
// passes (BackwardPasses::passes).
Time replay(const std::vector<ChunkTime>& chunks, int pp, int vpp, int m, const Schedule& schedule, const PipelineSends& sends,
            std::vector<Time>* finished, std::vector<std::vector<BackwardPasses::Pass>>* backward = nullptr) {
  if (finished) finished->assign(static_cast<size_t>(m), Time::zero());
  assert(chunks.size() == static_cast<size_t>(pp) * vpp && "one chunk time per virtual stage");
  assert(m >= 1 && (vpp == 1 || m % pp == 0) && "interleaving needs micro-batches in multiples of pp");
  [[maybe_unused]] const auto sized = [&](const std::vector<Time>& v) { return v.empty() || v.size() == chunks.size(); };
  assert(sized(sends.forward) && sized(sends.backward) && sized(sends.forward_nic) && sized(sends.backward_nic) &&
         "one send time per virtual stage");
  assert((sends.nic.empty() || sends.nic.size() == static_cast<size_t>(pp)) && "one NIC per device");
  if (!sends.forward_nic.empty() || !sends.backward_nic.empty()) {
    assert(!backward && "backward passes are replayed without NIC-sharing sends");
    return shared_nic_makespan(chunks, pp, vpp, m, schedule, sends, finished);
  }
  const int virtual_stages = pp * vpp;
  if (backward) backward->assign(static_cast<size_t>(pp), {});
  // When every (virtual stage, micro-batch) forward's and backward's output reaches the pass that
  // takes it (its end where sends are free); -1 ps = not yet run.
  const Time kNotRun = Time::ps(-1);
  std::vector<Time> fwd_out(static_cast<size_t>(virtual_stages) * m, kNotRun);
  std::vector<Time> bwd_out(static_cast<size_t>(virtual_stages) * m, kNotRun);
  std::vector<size_t> next(pp, 0);
  std::vector<Time> free_at(pp);
  size_t remaining = 2 * static_cast<size_t>(virtual_stages) * m;
  while (remaining > 0) {
    bool progressed = false;
    for (int s = 0; s < pp; ++s) {
      // Run this device's ops in order for as long as their inputs are ready.
      while (next[s] < schedule[s].size()) {
        const work::PipelinePass& op = schedule[s][next[s]];
        const int v = op.chunk * pp + s;
        const size_t idx = static_cast<size_t>(v) * m + op.microbatch;
        Time ready;
        if (op.forward) {
          if (v > 0) ready = fwd_out[idx - m];
        } else {
          ready = v + 1 < virtual_stages ? bwd_out[idx + m] : fwd_out[idx];
        }
        if (ready == kNotRun) break;
        const ChunkTime& t = chunks[v];
        const Time end = max(free_at[s], ready) + (op.forward ? t.forward : t.backward);
        // The output's send, if it goes to another virtual stage, delays it by the send's time
        // (and holds the device as long where it blocks).
        const bool sends_on = op.forward ? v + 1 < virtual_stages : v > 0;
        const Time out = sends_on ? end + entry(op.forward ? sends.forward : sends.backward, v) : end;
        free_at[s] = sends.blocking ? out : end;
        (op.forward ? fwd_out : bwd_out)[idx] = out;
        if (finished && !op.forward && v == 0) (*finished)[static_cast<size_t>(op.microbatch)] = end;
        if (backward && !op.forward) {
          (*backward)[static_cast<size_t>(s)].push_back({end - t.backward, end, op.microbatch == m - 1});
        }
        ++next[s];
        --remaining;
        progressed = true;
      }
    }
    assert(progressed && "the pipeline schedule deadlocked");
    if (!progressed) break;
  }
  Time makespan;
  for (Time t : free_at) makespan = max(makespan, t);
  return makespan;
}

// Rounds of pp micro-batches that pipeline_send_delay replays.
constexpr int kReplayRounds = 8;
// The busiest NIC's share of the slowest device's pass time per micro-batch below which sends are
// replayed side by side, above which sharing NICs, and between which pipeline_send_delay blends
// the two (sends_to_replay takes the sharing replay from the middle on).
constexpr double kSideBySideBelow = 0.15, kSharedAbove = 0.35;

// Each device's NIC time per micro-batch, the most out or in (no device sends or takes in a
// micro-batch's activations and gradients faster than its NIC moves them), and the slowest
// device's passes per micro-batch (the steady state's pace without sends), over all devices.
std::pair<Time, Time> nic_and_compute_pace(const std::vector<ChunkTime>& chunks, int pp, int vpp, const PipelineSends& sends) {
  const int vs = pp * vpp;
  // Out and in per NIC: the devices sharing one (sends.nic) add up.
  std::vector<Time> out, in;
  Time compute_pace;
  for (int d = 0; d < pp; ++d) {
    const size_t n = nic_of(sends, d);
    if (n >= out.size()) out.resize(n + 1), in.resize(n + 1);
    Time passes;
    for (int v = d; v < vs; v += pp) {
      passes += chunks[static_cast<size_t>(v)].forward + chunks[static_cast<size_t>(v)].backward;
      if (v + 1 < vs) out[n] += entry(sends.forward_nic, v), in[n] += entry(sends.backward_nic, v + 1);
      if (v > 0) out[n] += entry(sends.backward_nic, v), in[n] += entry(sends.forward_nic, v - 1);
    }
    compute_pace = max(compute_pace, passes);
  }
  Time nic_pace;
  for (size_t n = 0; n < out.size(); ++n) nic_pace = max(nic_pace, max(out[n], in[n]));
  return {nic_pace, compute_pace};
}

// The busiest NIC's share of the slowest device's pass time per micro-batch, from
// nic_and_compute_pace's two paces.
double busy_share(Time nic_pace, Time compute_pace) {
  return compute_pace > Time::zero() ? nic_pace / compute_pace : (nic_pace > Time::zero() ? 1.0 : 0.0);
}

PipelineSends side_by_side(const PipelineSends& sends) {
  return {.forward = sends.forward, .backward = sends.backward, .blocking = sends.blocking, .nic = {}};
}

}  // namespace

Time pipeline_makespan(const std::vector<ChunkTime>& chunks, int pp, int vpp, int m, const PipelineSends& sends) {
  return replay(chunks, pp, vpp, m, schedule_of(pp, vpp, m), sends, nullptr);
}

BackwardPasses backward_passes(const std::vector<ChunkTime>& chunks, int pp, int vpp, int m) {
  BackwardPasses out;
  out.replayed = std::min(m, 4 * pp);
  replay(chunks, pp, vpp, out.replayed, schedule_of(pp, vpp, out.replayed), PipelineSends{}, nullptr, &out.passes);
  out.pace = nic_and_compute_pace(chunks, pp, vpp, PipelineSends{}).second;
  return out;
}

PipelineSends sends_to_replay(const std::vector<ChunkTime>& chunks, int pp, int vpp, const PipelineSends& sends) {
  const auto [nic_pace, compute_pace] = nic_and_compute_pace(chunks, pp, vpp, sends);
  return busy_share(nic_pace, compute_pace) >= 0.5 * (kSideBySideBelow + kSharedAbove) ? sends : side_by_side(sends);
}

std::vector<Time> pipeline_send_delays(const std::vector<ChunkTime>& chunks, int pp, int vpp, int m,
                                       const std::vector<PipelineSends>& variants) {
  assert(pp >= 1 && vpp >= 1 && m >= 1 && (vpp == 1 || m % pp == 0) && chunks.size() == static_cast<size_t>(pp) * vpp &&
         "one chunk time per virtual stage");
  for ([[maybe_unused]] const PipelineSends& sends : variants) {
    assert(sends.forward.size() == chunks.size() && sends.backward.size() == chunks.size() &&
           "one send each way per virtual stage");
    for (size_t v = 0; v < chunks.size(); ++v) {
      assert(entry(sends.forward_nic, static_cast<int>(v)) <= sends.forward[v] &&
             entry(sends.backward_nic, static_cast<int>(v)) <= sends.backward[v] && "a send holds its NIC at most its own time");
    }
  }
  // The replay of the first micro-batches, with the sends and without, and each one's pace in its
  // steady state: how fast micro-batches finish between a quarter and three quarters of the way
  // (past the fill; the drain's finish faster). The replay without sends serves every variant.
  const int replayed = std::min(m, kReplayRounds * pp);
  const Schedule schedule = schedule_of(pp, vpp, replayed);
  std::vector<Time> without;
  const Time plain = replay(chunks, pp, vpp, replayed, schedule, {}, &without);
  const size_t from = static_cast<size_t>(replayed / 4), to = static_cast<size_t>(3 * replayed / 4);
  const double per = m == replayed ? 0.0 : 1.0 / static_cast<double>(to - from);
  const Time pace_without = per * (without[to] - without[from]);
  std::vector<Time> out;
  for (const PipelineSends& sends : variants) {
    // Where the NICs pace the steady state, the replay may not have reached it yet.
    const auto [nic_pace, compute_pace] = nic_and_compute_pace(chunks, pp, vpp, sends);
    const auto delay = [&](const PipelineSends& as) {
      std::vector<Time> with_sends;
      const Time head = replay(chunks, pp, vpp, replayed, schedule, as, &with_sends) - plain;
      if (m == replayed) return head;
      const Time pace_with = per * (with_sends[to] - with_sends[from]);
      return head + static_cast<double>(m - replayed) * max(Time::zero(), max(pace_with, nic_pace) - pace_without);
    };
    // Blended across the band, so that a little more compute or a little less NIC never jumps the
    // step from one replay to the other (a single threshold made a GPU 1% faster 1.3% slower).
    const double busy = busy_share(nic_pace, compute_pace);
    if (busy <= kSideBySideBelow || (sends.forward_nic.empty() && sends.backward_nic.empty())) {
      out.push_back(delay(side_by_side(sends)));
    } else if (busy >= kSharedAbove) {
      out.push_back(delay(sends));
    } else {
      const double w = (busy - kSideBySideBelow) / (kSharedAbove - kSideBySideBelow);
      out.push_back((1.0 - w) * delay(side_by_side(sends)) + w * delay(sends));
    }
  }
  return out;
}

Time pipeline_send_delay(const std::vector<ChunkTime>& chunks, int pp, int vpp, int m, const PipelineSends& sends) {
  return pipeline_send_delays(chunks, pp, vpp, m, {sends}).front();
}

}  // namespace clustersim::work
