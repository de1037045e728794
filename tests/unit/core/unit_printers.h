// SPDX-License-Identifier: Apache-2.0
// GoogleTest printers for the strong units, so that failed comparisons show "1.5 ms", not bytes.
#pragma once

#include <ostream>

#include "sim/core/units.h"

namespace clustersim {

inline void PrintTo(Time t, std::ostream* os) { *os << t.as_ps() << " ps (" << to_string(t) << ")"; }
inline void PrintTo(Bytes b, std::ostream* os) { *os << b.n << " B (" << to_string(b) << ")"; }
inline void PrintTo(Bandwidth bw, std::ostream* os) { *os << bw.bytes_per_s << " B/s (" << to_string(bw) << ")"; }

}  // namespace clustersim
