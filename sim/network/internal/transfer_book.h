// SPDX-License-Identifier: Apache-2.0
// The transfers a network backend has in flight: ids, completion callbacks and how many of each
// transfer's sub-flows are still moving. Shared by the flow, LMM, flow+dcqcn and packet backends.
#pragma once

#include <cstdint>
#include <functional>
#include <unordered_map>
#include <utility>

#include "sim/core/clock.h"
#include "sim/network/network.h"

namespace clustersim::net::internal {

class TransferBook {
 public:
  using Done = std::function<void(Time)>;

  // Registers a transfer that completes when `parts` sub-flows have finished (see add_part).
  TransferId open(Done done, int parts) {
    const TransferId id = next_++;
    open_.emplace(id, Entry{std::move(done), parts});
    return id;
  }

  // One more sub-flow for `id` to wait for (when the count is known only while routing).
  void add_part(TransferId id) { ++open_.at(id).pending; }

  // Completes `id` at `when` through `clock` (for transfers with no sub-flow to wait for: the
  // same GPU at both ends, or only zero-byte parts). It counts as in flight until then.
  void complete_at(Clock& clock, TransferId id, Time when) {
    clock.at(when, [this, id, &clock] {
      auto node = open_.extract(id);
      node.mapped().done(clock.now());
    });
  }

  // One sub-flow of `id` has finished. Returns the completion callback, removing the transfer,
  // when it was the last one; otherwise an empty function.
  Done finish_part(TransferId id) {
    const auto it = open_.find(id);
    if (--it->second.pending > 0) return {};
    Done done = std::move(it->second.done);
    open_.erase(it);
    return done;
  }

  int64_t in_flight() const { return static_cast<int64_t>(open_.size()); }

 private:
  struct Entry {
    Done done;
    int pending = 0;
  };
  std::unordered_map<TransferId, Entry> open_;
  TransferId next_ = 1;
};

}  // namespace clustersim::net::internal
