// SPDX-License-Identifier: Apache-2.0
// Reusable slots of a vector of records (sub-flows, bundles, packets): freed indices are taken
// again before the vector grows, so a long run holds as many records as are ever live at once.
#pragma once

#include <cstdint>
#include <vector>

namespace clustersim::net::internal {

// A free slot of `items` (the last one `free` holds), else a new default record at the end.
template <typename T>
uint32_t take_slot(std::vector<T>& items, std::vector<uint32_t>& free) {
  if (!free.empty()) {
    const uint32_t i = free.back();
    free.pop_back();
    return i;
  }
  items.emplace_back();
  return static_cast<uint32_t>(items.size() - 1);
}

}  // namespace clustersim::net::internal
