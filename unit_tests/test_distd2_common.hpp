// Helpers of the compact-operator and DistD2 tests: smooth test functions with
// their analytic derivatives, SZ-grouped line batches, and an independent
// long-double reference (the operator's RHS from CompactScheme::row and a
// dense LU of its matrix).
#pragma once

#include "kband_test_common.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

namespace kband_test {
namespace compact {

using kband::Boundary;
using kband::CompactOperator;
using kband::CompactScheme;
template <class T, int SZ = kSZ>
using GB = kband::GroupedBatch<T, SZ>;

constexpr long double kPi = 3.141592653589793238462643383279502884L;

/// Smooth test function of line s, and its first and second derivatives.
/// Periodic lines (period 1): sin(2 pi (x + p)) + 0.3 cos(4 pi x + p);
/// closed lines: sin(4x + p) + exp(x/2), p = 0.1 s.
inline long double fun(bool periodic, int deriv, long double x, int s) {
  const long double p = 0.1L * s;
  if (periodic) {
    const long double w1 = 2 * kPi, w2 = 4 * kPi;
    const long double a1 = w1 * (x + p), a2 = w2 * x + p;
    if (deriv == 0) return std::sin(a1) + 0.3L * std::cos(a2);
    if (deriv == 1) return w1 * std::cos(a1) - 0.3L * w2 * std::sin(a2);
    return -w1 * w1 * std::sin(a1) - 0.3L * w2 * w2 * std::cos(a2);
  }
  const long double a = 4 * x + p, e = std::exp(x / 2);
  if (deriv == 0) return std::sin(a) + e;
  if (deriv == 1) return 4 * std::cos(a) + e / 2;
  return -16 * std::sin(a) + e / 4;
}

/// Grid spacing of a line of n points on [0, 1) (periodic) or [0, 1] (closed).
inline double spacing(bool periodic, int n) { return periodic ? 1.0 / n : 1.0 / (n - 1); }

/// The exact value the operator approximates at output point i.
inline long double exact(const CompactScheme& op, int i, int s, int n) {
  const bool per = op.periodic();
  const long double h = spacing(per, n);  // (the interpolation's stencil does not hold h)
  const long double x = i * h;
  switch (op.op()) {
    case CompactOperator::FirstDerivative: return fun(per, 1, x, s);
    case CompactOperator::SecondDerivative: return fun(per, 2, x, s);
    case CompactOperator::Interpolation: return fun(per, 0, x + h / 2, s);
    default: return fun(per, 1, x + h / 2, s);
  }
}

/// Scheme of the given kind for a line of n points (h = spacing).
inline CompactScheme make_scheme(CompactOperator k, bool periodic, int n, double alpha = 0.3) {
  const double h = spacing(periodic, n);
  const Boundary bc = periodic ? Boundary::Periodic : Boundary::NonPeriodic;
  switch (k) {
    case CompactOperator::FirstDerivative: return CompactScheme::first_derivative(h, bc);
    case CompactOperator::SecondDerivative: return CompactScheme::second_derivative(h, bc);
    case CompactOperator::Interpolation: return CompactScheme::interpolation(alpha);
    default: return CompactScheme::staggered_derivative(h);
  }
}

/// Input batch: line s holds fun(x_j) (plus a small random perturbation of
/// relative size `noise`, so that lines differ in every digit when asked).
template <class T, int SZ = kSZ>
GB<T, SZ> make_input(int nsys, int n, bool periodic, double noise = 0, std::uint64_t seed = 1) {
  GB<T, SZ> b("in", nsys, n);
  Host<GB<T, SZ>> h(b);
  poison(h, T(0));
  Rng rng(seed);
  const double hx = spacing(periodic, n);
  for (int s = 0; s < nsys; ++s)
    for (int j = 0; j < n; ++j)
      h(s, j) = static_cast<T>(fun(periodic, 0, j * hx, s) * (1 + noise * rng.uniform(-1, 1)));
  h.to_device();
  return b;
}

/// A fresh output batch poisoned with NaN (padding: the sentinel).
template <class T, int SZ = kSZ>
GB<T, SZ> make_output(int nsys, int n) {
  GB<T, SZ> b("out", nsys, n);
  Host<GB<T, SZ>> h(b);
  poison(h, nan_value<T>());
  h.to_device();
  return b;
}

/// Host values of a batch, [s][j].
template <class T, int SZ>
std::vector<std::vector<T>> to_host(const GB<T, SZ>& b, int* pad_damage = nullptr) {
  Host<GB<T, SZ>> h(b);
  h.to_host();
  std::vector<std::vector<T>> v(b.nsys(), std::vector<T>(b.n()));
  for (int s = 0; s < b.nsys(); ++s)
    for (int j = 0; j < b.n(); ++j) v[s][j] = h(s, j);
  if (pad_damage) *pad_damage = padding_damage(h);
  return v;
}

/// Long-double reference of the operator applied to each line of `in`, and
/// per line the amplification of input rounding by the RHS stencil:
/// amp = max_i sum_q |coef_q f_p| / max_i |rhs_i| (>= 1; about 1/h^2 for the
/// second derivative, whose stencil cancels).
template <class T>
std::vector<std::vector<real_ref>> reference(const CompactScheme& op, const std::vector<std::vector<T>>& in,
                                             std::vector<double>* amp = nullptr) {
  const int n = static_cast<int>(in.empty() ? 0 : in[0].size());
  std::vector<double> l, d, u;
  op.matrix(n, l, d, u);
  const DenseLU lu(dense_tridiagonal(n, l.data(), d.data(), u.data(), op.periodic()), n);
  std::vector<std::vector<real_ref>> out;
  if (amp) amp->clear();
  for (const auto& f : in) {
    std::vector<real_ref> rhs(n);
    real_ref absmax = 0, rmax = 0;
    for (int i = 0; i < n; ++i) {
      const kband::CompactRow r = op.row(i, n);
      real_ref acc = 0, abs_acc = 0;
      for (int q = 0; q < 5; ++q) {
        if (r.coef[q] == 0) continue;
        int p = i + r.start + q;
        p = ((p % n) + n) % n;
        acc += static_cast<real_ref>(r.coef[q]) * f[p];
        abs_acc += std::fabs(static_cast<real_ref>(r.coef[q]) * f[p]);
      }
      rhs[i] = acc;
      absmax = std::max(absmax, abs_acc);
      rmax = std::max(rmax, std::fabs(acc));
    }
    if (amp) amp->push_back(std::max(1.0, rmax > 0 ? static_cast<double>(absmax / rmax) : 1.0));
    out.push_back(lu.solve(rhs.data()));
  }
  return out;
}

/// max over lines of ||x - ref||_inf / ||ref||_inf (inf for a non-finite x).
template <class T, class R>
double max_rel_error(const std::vector<std::vector<T>>& x, const std::vector<std::vector<R>>& ref) {
  double e = 0;
  for (size_t s = 0; s < x.size(); ++s) {
    std::vector<real_ref> r(ref[s].begin(), ref[s].end());
    e = std::max(e, relative_error_inf(static_cast<int>(x[s].size()), x[s].data(), r.data()));
  }
  return e;
}

/// The relative error against the long-double reference divided by the
/// stencil's rounding amplification (see reference()).
template <class T>
double scaled_ref_error(const CompactScheme& op, const std::vector<std::vector<T>>& x,
                        const std::vector<std::vector<T>>& in) {
  std::vector<double> amp;
  const auto ref = reference(op, in, &amp);
  double e = 0;
  for (size_t s = 0; s < x.size(); ++s) {
    std::vector<real_ref> r(ref[s].begin(), ref[s].end());
    e = std::max(e, relative_error_inf(static_cast<int>(x[s].size()), x[s].data(), r.data()) / amp[s]);
  }
  return e;
}

/// max over lines and points of |x - exact| (inf for a non-finite x).
template <class T>
double max_abs_error_exact(const CompactScheme& op, const std::vector<std::vector<T>>& x) {
  double e = 0;
  for (size_t s = 0; s < x.size(); ++s)
    for (size_t i = 0; i < x[s].size(); ++i) {
      const long double v = x[s][i];
      if (!std::isfinite(v)) return HUGE_VAL;
      e = std::max(e, static_cast<double>(std::fabs(v - exact(op, static_cast<int>(i), static_cast<int>(s), static_cast<int>(x[s].size())))));
    }
  return e;
}

/// Least-squares slope of -log(err) against log(n): the observed order.
inline double observed_order(const std::vector<int>& ns, const std::vector<double>& errs) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  const double m = static_cast<double>(ns.size());
  for (size_t k = 0; k < ns.size(); ++k) {
    const double x = std::log(static_cast<double>(ns[k])), y = -std::log(errs[k]);
    sx += x, sy += y, sxx += x * x, sxy += x * y;
  }
  return (m * sxy - sx * sy) / (m * sxx - sx * sx);
}

/// The reference path on the device: compact_apply (RHS kernel + shared Thomas).
template <class T, int SZ>
GB<T, SZ> apply_thomas(const CompactScheme& op, const GB<T, SZ>& in) {
  Exec exec;
  const auto f = kband::compact_factor<T>(exec, op, in.n());
  GB<T, SZ> rhs = make_output<T, SZ>(in.nsys(), in.n()), out = make_output<T, SZ>(in.nsys(), in.n());
  Kokkos::View<int*> info("info", in.nsys());
  Kokkos::deep_copy(info, kInfoPoison);
  kband::compact_apply(exec, op, f, in, rhs, out, info);
  exec.fence();
  auto hi = Kokkos::create_mirror_view(info);
  Kokkos::deep_copy(hi, info);
  for (int s = 0; s < in.nsys(); ++s) EXPECT_EQ(hi(s), 0) << "system " << s;
  return out;
}

/// DistD2 on one rank over the given subdomain lengths.
template <class T, int SZ>
GB<T, SZ> apply_distd2(const CompactScheme& op, const GB<T, SZ>& in, const std::vector<int>& lengths,
                       bool exact_reduced = false) {
  Exec exec;
  kband::DistD2Options opt;
  opt.exact_reduced = exact_reduced;
  const kband::DistD2Line<T> line(exec, op, lengths, opt);
  GB<T, SZ> out = make_output<T, SZ>(in.nsys(), in.n());
  kband::distd2(exec, line, in, out);
  exec.fence();
  return out;
}

/// Tolerances of DistD2 / Thomas against the long-double reference of the
/// same operator on the same input (relative, per line). The matrices are
/// diagonally dominant with condition numbers below 10 (closures: about 30),
/// the RHS stencils sum at most 5 terms: the observed maxima are quoted where
/// the bounds are used; a lost term gives errors of order 1e-3 or more.
template <class T>
struct CTol;
template <>
struct CTol<double> {
  static constexpr double ref = 1e-12;
};
template <>
struct CTol<float> {
  static constexpr double ref = 2e-5;
};

}  // namespace compact
}  // namespace kband_test
