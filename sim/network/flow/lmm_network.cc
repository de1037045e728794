// SPDX-License-Identifier: Apache-2.0
// LmmNetwork: platform construction, comm start with per-comm routes, completion bookkeeping.
#include "sim/network/flow/lmm_network.h"

#include <simgrid/kernel/resource/NetworkModelIntf.hpp>
#include <simgrid/s4u/Activity.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "sim/network/flow/internal/fabric_zone.h"

namespace clustersim::net {

namespace {

// SimGrid's completion signal is global and cannot be disconnected in 3.32: it reaches the live
// network through this pointer (one LmmNetwork per process).
LmmNetwork* g_live = nullptr;
bool g_signals_connected = false;

// Smallest latency handed to SimGrid: a comm with zero latency would get sharing penalty 1
// instead of FabricZone::kRouteLatency, i.e. a different weight.
constexpr double kMinLatency = 1e-12;  // s

// Loads held for less than this are not peaks: FluidNetwork merges completions closer than its
// tolerance (default 0.1 us) and never shows such instants either.
constexpr double kMinPeakHold = 1e-7;  // s

}  // namespace

LmmNetwork::LmmNetwork(const RouteSource& routes, Clock& clock, LmmOptions options)
    : routes_(routes),
      clock_(clock),
      options_(options),
      link_bytes_(static_cast<size_t>(routes.link_count())),
      peak_utilisation_(static_cast<size_t>(routes.link_count()), 0.0),
      step_marked_(static_cast<size_t>(routes.link_count()), 0),
      held_load_(static_cast<size_t>(routes.link_count()), 0.0),
      held_since_(static_cast<size_t>(routes.link_count()), 0.0),
      held_end_(static_cast<size_t>(routes.link_count()), 0.0) {
  namespace s4u = simgrid::s4u;
  if (!s4u::Engine::has_instance()) throw std::logic_error("LmmNetwork needs an s4u::Engine");
  auto* engine = s4u::Engine::get_instance();
  if (engine->get_netzone_root() != nullptr || g_live != nullptr) {
    throw std::logic_error("LmmNetwork needs a fresh SimGrid engine (one platform per process)");
  }
  // Before the first zone exists: afterwards SimGrid refuses configuration changes.
  s4u::Engine::set_config("network/model:CM02");
  s4u::Engine::set_config("network/crosstraffic:0");
  if (!options_.lazy_update) s4u::Engine::set_config("network/optim:Full");
  if (options_.surf_precision) s4u::Engine::set_config("surf/precision", *options_.surf_precision);
  if (options_.maxmin_precision) {
    s4u::Engine::set_config("maxmin/precision", *options_.maxmin_precision);
  }

  zone_ = new internal::FabricZone(  // the first zone becomes the root; the engine deletes it
      "clustersim-fabric",
      [this](unsigned long, unsigned long,
             std::vector<simgrid::kernel::resource::StandardLinkImpl*>& into) {
        if (pending_path_ == nullptr) {
          throw std::logic_error("SimGrid asked for a route outside LmmNetwork::send");
        }
        for (const LinkIndex l : pending_path_->links) into.push_back(links_[l]);
        pending_used_ = true;
      });

  hosts_.reserve(static_cast<size_t>(routes.gpu_count()));
  for (int g = 0; g < routes.gpu_count(); ++g) {
    hosts_.push_back(zone_->create_host("gpu" + std::to_string(g), {1e9}));
  }
  links_.reserve(static_cast<size_t>(routes.link_count()));
  s4u_links_.reserve(static_cast<size_t>(routes.link_count()));
  for (LinkIndex l = 0; l < routes.link_count(); ++l) {
    // A failed link (capacity 0) gets 1 B/s: SimGrid refuses zero bandwidth; nothing should be
    // routed over it anyway.
    const double capacity = std::max(1.0, routes.capacity(l).bytes_per_s);
    s4u::Link* link = zone_->create_link("l" + std::to_string(l), {capacity});
    link->set_latency(0);
    links_.push_back(link->get_impl());
    s4u_links_.push_back(link);
  }
  zone_->seal();

  zone_->get_iface()->get_network_model()->set_lat_factor_cb(
      [this](double, const s4u::Host*, const s4u::Host*, const std::vector<s4u::Link*>&,
             const std::unordered_set<s4u::NetZone*>&) {
        const double latency = pending_path_ != nullptr ? pending_path_->latency.as_s() : 0.0;
        return std::max(latency, kMinLatency) / internal::FabricZone::kRouteLatency;
      });

  g_live = this;
  if (!g_signals_connected) {
    g_signals_connected = true;
    s4u::Activity::on_completion_cb([](const s4u::Activity& a) {
      if (g_live != nullptr) g_live->on_completion(a);
    });
    s4u::Engine::on_time_advance_cb([](double delta) {
      if (g_live != nullptr) g_live->on_time_advance(delta);
    });
  }
}

LmmNetwork::~LmmNetwork() {
  g_live = nullptr;
  finished_.clear();
}

TransferId LmmNetwork::send(GpuId src, GpuId dst, Bytes size, std::function<void(Time)> done, uint32_t connection) {
  if (src == dst) {
    const TransferId id = transfers_.open(std::move(done), 0);
    transfers_.complete_at(clock_, id, clock_.now());
    return id;
  }
  routes_.paths(src, dst, connection, scratch_paths_);
  if (scratch_paths_.empty()) throw std::logic_error("route source gave no path between two GPUs");
  const int parts = static_cast<int>(scratch_paths_.size());
  const TransferId id = transfers_.open(std::move(done), parts);
  for (int k = 0; k < parts; ++k) {
    const Bytes bytes = share_of(size, parts, k);
    pending_path_ = &scratch_paths_[k];
    pending_used_ = false;
    // Starting the comm asks FabricZone for the route and the model for the latency factor,
    // synchronously (we are maestro), so both see pending_path_.
    simgrid::s4u::CommPtr comm =
        simgrid::s4u::Comm::sendto_init(hosts_[src], hosts_[dst])->set_payload_size(bytes.n);
    comm->start();
    pending_path_ = nullptr;
    if (!pending_used_) throw std::logic_error("SimGrid started a comm without asking its route");
    const simgrid::s4u::Activity* key = comm.get();
    SubFlow& s = flows_[key];
    s.comm = std::move(comm);
    s.transfer = id;
    s.size = bytes;
    s.links = scratch_paths_[k].links;
    s.active_slot = active_.size();
    active_.push_back(key);
  }
  flows_created_ += parts;
  return id;
}

void LmmNetwork::on_completion(const simgrid::s4u::Activity& activity) {
  const auto it = flows_.find(&activity);
  if (it == flows_.end()) return;
  SubFlow& s = it->second;
  for (const LinkIndex l : s.links) link_bytes_[l] += s.size;
  // Swap-remove from the active list.
  const auto* moved = active_.back();
  active_[s.active_slot] = moved;
  flows_.at(moved).active_slot = s.active_slot;
  active_.pop_back();

  finished_.push_back(std::move(s.comm));
  const TransferId transfer = s.transfer;
  flows_.erase(it);
  if (auto done = transfers_.finish_part(transfer)) done(clock_.now());
}

void LmmNetwork::on_time_advance(double delta) {
  // SimGrid has finished with the comms completed at the previous step.
  finished_.clear();
  if (!options_.track_peaks || delta <= 0) return;
  // SimGrid's link usage (sum of the LMM rates on it) still describes the step just simulated:
  // the comms that ended with it leave the LMM only after this signal. A load counts as a peak
  // once held for kMinPeakHold, as in FluidNetwork.
  const double end = simgrid::s4u::Engine::get_clock();
  const double start = end - delta;
  for (const auto* key : active_) {
    for (const LinkIndex l : flows_.at(key).links) {
      if (step_marked_[l]) continue;
      step_marked_[l] = 1;
      step_links_.push_back(l);
    }
  }
  for (const LinkIndex l : step_links_) {
    step_marked_[l] = 0;
    const double capacity = routes_.capacity(l).bytes_per_s;
    if (capacity <= 0) continue;
    const double load = s4u_links_[l]->get_usage();
    if (std::abs(load - held_load_[l]) > 1e-9 * capacity || held_end_[l] < start) {
      if (held_end_[l] - held_since_[l] >= kMinPeakHold) {
        peak_utilisation_[l] = std::max(peak_utilisation_[l], held_load_[l] / capacity);
      }
      held_load_[l] = load;
      held_since_[l] = start;
    }
    held_end_[l] = end;
  }
  step_links_.clear();
}

std::vector<LinkUsage> LmmNetwork::link_usage() const {
  std::vector<LinkUsage> usage(link_bytes_.size());
  for (size_t l = 0; l < usage.size(); ++l) {
    double peak = peak_utilisation_[l];
    const double capacity = routes_.capacity(static_cast<LinkIndex>(l)).bytes_per_s;
    if (capacity > 0 && held_end_[l] - held_since_[l] >= kMinPeakHold) {
      peak = std::max(peak, held_load_[l] / capacity);
    }
    usage[l] = {link_bytes_[l], peak};
  }
  return usage;
}

}  // namespace clustersim::net
