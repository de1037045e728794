// SPDX-License-Identifier: Apache-2.0
// Non-negative linear fits in relative error, the solver under every cost-model fit (Eigen inside).
#pragma once

#include <vector>

namespace clustersim::calib {

struct RelativeFitOptions {
  // Reweight towards least absolute relative error (IRLS), so that a few outliers (a clock dip, a
  // different kernel picked by cuBLAS) do not pull the fit; the reported error is a median.
  bool robust = true;
  int iterations = 30;
  // Robust fits only: rows the fit predicts more than this factor off their target (too fast or
  // too slow) are left out and the fit is redone without them, when they are at most
  // trim_max_share of the rows (none of a series under 10 rows) and p + 2 rows remain; again
  // until the rows left out are those the last fit misses so (at most 5 rounds). A point timed 100x too fast weighs 100x in
  // relative terms and IRLS does not tame it (one such GEMM moved the fitted launch cost from
  // 3.94 us to 0, 2026-12-06 review). Their errors still count where callers report them.
  double trim_factor = 2.0;
  double trim_max_share = 0.1;
};

// Finds theta >= 0 minimising sum_i ((rows[i] . theta - y[i]) / y[i])^2 (or the robust variant).
// Every y[i] must be positive and every row as long as the first. Small problems only: the
// non-negativity constraint is met by trying every subset of active columns (2^p solves), so p
// must be at most 8. Columns that the data cannot determine come out as 0. Robust fits leave out
// rows off by more than options.trim_factor (see there).
std::vector<double> fit_nonneg_relative(const std::vector<std::vector<double>>& rows,
                                        const std::vector<double>& y,
                                        const RelativeFitOptions& options = {});

}  // namespace clustersim::calib
