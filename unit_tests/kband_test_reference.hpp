// Reference solutions for the kband unit tests: the dense n x n matrix of one
// tridiagonal (optionally periodic) system, factored by Gaussian elimination
// with partial pivoting in long double. Host-only code.
//
// The elimination is an ordinary dense getrf/getrs, except that it skips exact
// zeros: rows whose entry in the pivot column is zero are not updated, and a row
// update stops at the last non-zero column of the pivot row. For tridiagonal and
// cyclic-tridiagonal matrices that makes it O(n) resp. O(n^2) instead of O(n^3)
// (n = 1000 must stay cheap), with exactly the same result as the dense loops.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>
#include <vector>

namespace kband_test {

using real_ref = long double;

/// Row-major dense matrix of one system. Row j holds a[j] at column j-1, b[j]
/// at column j and c[j] at column j+1. Periodic systems (n >= 3) also hold the
/// corners a[0] at (0, n-1) and c[n-1] at (n-1, 0); ordinary systems ignore
/// a[0] and c[n-1] entirely (they may hold anything, NaN included).
template <class T>
std::vector<real_ref> dense_tridiagonal(int n, const T* a, const T* b, const T* c, bool periodic) {
  std::vector<real_ref> m(static_cast<size_t>(n) * n, real_ref(0));
  auto at = [&](int i, int j) -> real_ref& { return m[static_cast<size_t>(i) * n + j]; };
  for (int j = 0; j < n; ++j) {
    at(j, j) = b[j];
    if (j > 0) at(j, j - 1) = a[j];
    if (j < n - 1) at(j, j + 1) = c[j];
  }
  if (periodic) {
    at(0, n - 1) += a[0];
    at(n - 1, 0) += c[n - 1];
  }
  return m;
}

/// LU factorisation with partial pivoting (P A = L U) of a dense row-major matrix.
class DenseLU {
 public:
  DenseLU(std::vector<real_ref> m, int n) : n_(n), lu_(std::move(m)), perm_(n), last_(n), lcol_(n) {
    for (int i = 0; i < n_; ++i) {
      int l = 0;
      for (int j = 0; j < n_; ++j)
        if (at(i, j) != 0) l = j;
      last_[i] = l;
    }
    for (int k = 0; k < n_; ++k) {
      int p = k;
      real_ref best = std::fabs(at(k, k));
      for (int i = k + 1; i < n_; ++i) {
        const real_ref v = std::fabs(at(i, k));
        if (v > best) { best = v; p = i; }
      }
      perm_[k] = p;
      if (best == 0 || !std::isfinite(best)) {
        singular_ = true;
        continue;
      }
      if (p != k) {
        for (int j = 0; j < n_; ++j) std::swap(at(k, j), at(p, j));
        std::swap(last_[k], last_[p]);
      }
      const real_ref piv = at(k, k);
      for (int i = k + 1; i < n_; ++i) {
        if (at(i, k) == 0) continue;
        const real_ref mult = at(i, k) / piv;
        at(i, k) = 0;
        for (int j = k + 1; j <= last_[k]; ++j) at(i, j) -= mult * at(k, j);
        last_[i] = std::max(last_[i], last_[k]);
        lcol_[k].emplace_back(i, mult);
      }
    }
  }

  bool singular() const { return singular_; }

  /// Solves A x = rhs (rhs of length n, any arithmetic type).
  template <class T>
  std::vector<real_ref> solve(const T* rhs) const {
    std::vector<real_ref> x(rhs, rhs + n_);
    for (int k = 0; k < n_; ++k) {
      std::swap(x[k], x[perm_[k]]);
      for (const auto& e : lcol_[k]) x[e.first] -= e.second * x[k];
    }
    for (int i = n_ - 1; i >= 0; --i) {
      real_ref s = x[i];
      for (int j = i + 1; j <= last_[i]; ++j) s -= at(i, j) * x[j];
      x[i] = s / at(i, i);
    }
    return x;
  }

 private:
  real_ref& at(int i, int j) { return lu_[static_cast<size_t>(i) * n_ + j]; }
  const real_ref& at(int i, int j) const { return lu_[static_cast<size_t>(i) * n_ + j]; }

  int n_;
  std::vector<real_ref> lu_;
  std::vector<int> perm_;
  std::vector<int> last_;                                   // last non-zero column of each row of U
  std::vector<std::vector<std::pair<int, real_ref>>> lcol_;  // non-zero multipliers of each column
  bool singular_ = false;
};

/// ||x - xref||_inf / ||xref||_inf, evaluated in long double. A non-finite x
/// entry gives +inf (never a pass).
template <class T>
double relative_error_inf(int n, const T* x, const real_ref* xref) {
  real_ref num = 0, den = 0;
  for (int j = 0; j < n; ++j) {
    const real_ref xj = x[j];
    if (!std::isfinite(xj)) return HUGE_VAL;
    num = std::max(num, std::fabs(xj - xref[j]));
    den = std::max(den, std::fabs(xref[j]));
  }
  return den > 0 ? static_cast<double>(num / den) : static_cast<double>(num);
}

}  // namespace kband_test
