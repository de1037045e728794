// SPDX-License-Identifier: Apache-2.0
// Weighted non-negative least squares by active-set enumeration, with IRLS for robustness.
#include "calibration/fit/least_squares.h"

#include <Eigen/Dense>
#include <cassert>
#include <cmath>
#include <limits>

namespace clustersim::calib {
namespace {

// Solves min ||W (A theta - 1)||^2, theta >= 0, where A = X / y row-wise (so the residual is the
// relative error) and W = diag(sqrt(weights)). Columns are scaled to unit norm first: features span
// 1 (a launch cost) to 1e15 (FLOPs), which would otherwise ruin the conditioning.
Eigen::VectorXd solve_nonneg(const Eigen::MatrixXd& a, const Eigen::VectorXd& weights) {
  const Eigen::Index n = a.rows();
  const Eigen::Index p = a.cols();
  Eigen::VectorXd sw = weights.array().sqrt();
  Eigen::MatrixXd aw = sw.asDiagonal() * a;
  Eigen::VectorXd bw = sw;  // target is 1 for every row
  Eigen::VectorXd scale(p);
  for (Eigen::Index j = 0; j < p; ++j) {
    const double norm = aw.col(j).norm();
    scale(j) = norm > 0 ? 1.0 / norm : 0.0;
  }
  aw = aw * scale.asDiagonal();

  Eigen::VectorXd best = Eigen::VectorXd::Zero(p);
  double best_cost = bw.squaredNorm();  // theta = 0
  for (unsigned mask = 1; mask < (1u << p); ++mask) {
    std::vector<Eigen::Index> cols;
    for (Eigen::Index j = 0; j < p; ++j) {
      if ((mask >> j) & 1u && scale(j) > 0) cols.push_back(j);
    }
    if (cols.empty() || static_cast<Eigen::Index>(cols.size()) > n) continue;
    Eigen::MatrixXd sub(n, static_cast<Eigen::Index>(cols.size()));
    for (size_t c = 0; c < cols.size(); ++c) sub.col(static_cast<Eigen::Index>(c)) = aw.col(cols[c]);
    const Eigen::VectorXd x = sub.colPivHouseholderQr().solve(bw);
    if (!x.allFinite() || (x.array() < 0).any()) continue;
    const double cost = (sub * x - bw).squaredNorm();
    if (cost < best_cost * (1 - 1e-12)) {
      best_cost = cost;
      best.setZero();
      for (size_t c = 0; c < cols.size(); ++c) best(cols[c]) = x(static_cast<Eigen::Index>(c));
    }
  }
  return scale.asDiagonal() * best;
}

}  // namespace

std::vector<double> fit_nonneg_relative(const std::vector<std::vector<double>>& rows,
                                        const std::vector<double>& y,
                                        const RelativeFitOptions& options) {
  assert(rows.size() == y.size() && "one target per row");
  if (rows.empty()) return {};
  const auto n = static_cast<Eigen::Index>(rows.size());
  const auto p = static_cast<Eigen::Index>(rows.front().size());
  assert(p >= 1 && p <= 8 && "subset enumeration is for small models");
  Eigen::MatrixXd a(n, p);
  for (Eigen::Index i = 0; i < n; ++i) {
    assert(static_cast<Eigen::Index>(rows[static_cast<size_t>(i)].size()) == p && "ragged rows");
    assert(y[static_cast<size_t>(i)] > 0 && "targets must be positive");
    for (Eigen::Index j = 0; j < p; ++j) {
      a(i, j) = rows[static_cast<size_t>(i)][static_cast<size_t>(j)] / y[static_cast<size_t>(i)];
    }
  }
  // keep(i) is 1 for the rows in the fit, 0 for the rows trimmed as wild.
  const auto fit = [&](const Eigen::VectorXd& keep) {
    Eigen::VectorXd theta = solve_nonneg(a, keep);
    if (!options.robust) return theta;
    // IRLS for the L1 norm: weight 1/|r| (floored so exact fits stay finite) converges towards
    // the least-absolute-deviation solution.
    constexpr double kFloor = 1e-4;
    for (int it = 0; it < options.iterations; ++it) {
      const Eigen::VectorXd r = (a * theta).array() - 1.0;
      const Eigen::VectorXd weights = keep.array() / r.array().abs().max(kFloor);
      const Eigen::VectorXd next = solve_nonneg(a, weights);
      const double change = (next - theta).norm() / std::max(theta.norm(), 1e-300);
      theta = next;
      if (change < 1e-9) break;
    }
    return theta;
  };
  Eigen::VectorXd keep = Eigen::VectorXd::Ones(n);
  Eigen::VectorXd theta = fit(keep);
  if (options.robust && options.trim_factor > 1) {
    // Leave out the rows the fit misses by more than trim_factor and fit again, until the rows
    // left out are those the last fit misses so (the first fit, pulled by them, may also miss
    // rows it would follow without them; a refit brings those back). At most a few rounds.
    const auto allowed = static_cast<Eigen::Index>(options.trim_max_share * static_cast<double>(n));
    for (int round = 0; round < 5; ++round) {
      const Eigen::VectorXd ratio = a * theta;  // predicted over measured
      Eigen::VectorXd next = Eigen::VectorXd::Ones(n);
      Eigen::Index wild = 0;
      for (Eigen::Index i = 0; i < n; ++i) {
        if (!(ratio(i) * options.trim_factor >= 1 && ratio(i) <= options.trim_factor)) {
          next(i) = 0;
          ++wild;
        }
      }
      if (next == keep || wild > allowed || n - wild < p + 2) break;
      keep = next;
      theta = fit(keep);
    }
  }
  return std::vector<double>(theta.data(), theta.data() + theta.size());
}

}  // namespace clustersim::calib
