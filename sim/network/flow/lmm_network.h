// SPDX-License-Identifier: Apache-2.0
// The flow level on SimGrid's own LMM max-min solver (the reference for FluidNetwork).
#pragma once

#include <cstdint>
#include <functional>
#include <unordered_map>
#include <vector>

#include <simgrid/forward.h>
#include <simgrid/s4u/Comm.hpp>

#include "sim/core/clock.h"
#include "sim/network/flow/lmm_options.h"
#include "sim/network/internal/transfer_book.h"
#include "sim/network/network.h"
#include "sim/network/route_source.h"

namespace clustersim::net {

namespace internal {
class FabricZone;
}


// One SimGrid host per GPU and one SimGrid link per link direction (directions are separate
// resources, as SPLITDUPLEX would make them) inside our FabricZone, whose routes are the paths of
// the RouteSource. Each sub-flow is a host-to-host s4u::Comm started from maestro (no actors).
// Model CM02 without cross-traffic; sharing is max-min with equal weights because every route
// reports the same latency to the solver, while each comm still pays its own path latency (via
// the latency-factor callback) before it starts sharing, as in FluidNetwork.
//
// Needs an s4u::Engine with no platform yet, and a Clock over SimGrid's time (SimGridClock); at
// most one LmmNetwork per process. Run the engine to completion; destroy the network before the
// engine.
class LmmNetwork final : public Network {
 public:
  LmmNetwork(const RouteSource& routes, Clock& clock, LmmOptions options = {});
  ~LmmNetwork() override;
  LmmNetwork(const LmmNetwork&) = delete;
  LmmNetwork& operator=(const LmmNetwork&) = delete;

  using Network::send;
  TransferId send(GpuId src, GpuId dst, Bytes size, std::function<void(Time)> done, uint32_t connection) override;
  int64_t in_flight() const override { return transfers_.in_flight(); }
  int64_t flow_count() const override { return flows_created_; }
  std::vector<LinkUsage> link_usage() const override;

 private:
  struct SubFlow {
    simgrid::s4u::CommPtr comm;
    TransferId transfer = 0;
    Bytes size;
    std::vector<LinkIndex> links;
    size_t active_slot = 0;     // position in active_
  };

  void on_completion(const simgrid::s4u::Activity& activity);
  void on_time_advance(double delta);

  const RouteSource& routes_;
  Clock& clock_;
  LmmOptions options_;
  internal::FabricZone* zone_ = nullptr;  // owned by the s4u::Engine
  std::vector<simgrid::s4u::Host*> hosts_;
  std::vector<simgrid::kernel::resource::StandardLinkImpl*> links_;
  std::vector<simgrid::s4u::Link*> s4u_links_;

  // The path of the comm being started; FabricZone's resolver and the latency factor read it.
  const Path* pending_path_ = nullptr;
  bool pending_used_ = false;

  internal::TransferBook transfers_;
  std::unordered_map<const simgrid::s4u::Activity*, SubFlow> flows_;
  std::vector<const simgrid::s4u::Activity*> active_;
  std::vector<simgrid::s4u::CommPtr> finished_;  // released at the next step, not inside SimGrid's callback
  int64_t flows_created_ = 0;

  std::vector<Bytes> link_bytes_;
  std::vector<double> peak_utilisation_;
  std::vector<char> step_marked_;
  std::vector<double> held_load_;  // bytes/s, unchanged from held_since_ to held_end_ (s)
  std::vector<double> held_since_;
  std::vector<double> held_end_;
  std::vector<LinkIndex> step_links_;
  std::vector<Path> scratch_paths_;
};

}  // namespace clustersim::net
