// Compact finite-difference operators (Lele 1992; the schemes of Xcompact3d /
// x3d2) applied along the rows of SZ-grouped batches.
//
//   kband::CompactScheme op = kband::CompactScheme::first_derivative(h, kband::Boundary::Periodic);
//   auto factor = kband::compact_factor<double>(exec, op, n);     // shared tridiagonal, factored once
//   kband::compact_apply(exec, op, factor, in, rhs, out, info);   // RHS kernel, then shared Thomas
//
// Every operator is a constant-coefficient tridiagonal matrix shared by all
// lines (interior rows  alpha y_{i-1} + y_i + alpha y_{i+1}) and a right-hand
// side stencil of half-width 2 on the input f:
//
//   first derivative (6th order)   alpha = 1/3,  a = 14/9,  b = 1/9:
//       rhs_i = a (f_{i+1} - f_{i-1}) / (2h) + b (f_{i+2} - f_{i-2}) / (4h)
//   second derivative (6th order)  alpha = 2/11, a = 12/11, b = 3/11:
//       rhs_i = a (f_{i+1} - 2 f_i + f_{i-1}) / h^2 + b (f_{i+2} - 2 f_i + f_{i-2}) / (4h^2)
//   mid-point interpolation        alpha (0.3 classic: 6th order; else 4th),
//       a = (9 + 10 alpha) / 16, b = (6 alpha - 1) / 16:
//       rhs_i = a (f_i + f_{i+1}) + b (f_{i-1} + f_{i+2})          (y_i at x_{i+1/2})
//   staggered first derivative     alpha = 9/62, a = 63/62, b = 17/62 (6th order):
//       rhs_i = a (f_{i+1} - f_i) / h + b (f_{i+2} - f_{i-1}) / (3h)  (y_i at x_{i+1/2})
//
// Boundaries: Boundary::Periodic (every operator), or Boundary::NonPeriodic,
// which means the Dirichlet closures of the first and second derivatives
// (rows 1, 2 and their mirrors at the other end; input values on the closed
// grid x_0 .. x_{n-1}):
//   first : y_0 + 2 y_1 = (-5/2 f_0 + 2 f_1 + 1/2 f_2)/h;  row 1: alpha = 1/4, rhs = 3/4 (f_2 - f_0)/h
//   second: y_0 + 11 y_1 = (13 f_0 - 27 f_1 + 15 f_2 - f_3)/h^2;  row 1: alpha = 1/10,
//           rhs = 6/5 (f_0 - 2 f_1 + f_2)/h^2
// (third-order at the boundary rows, fourth-order at the next ones). The
// staggered operators (interpolation, staggered derivative) are periodic only:
// on a closed grid their output has a different length than their input.
#pragma once

#include "impl/kband_Compact_impl.hpp"
#include "kband_Thomas.hpp"

#include <cmath>
#include <vector>

namespace kband {

enum class CompactOperator { FirstDerivative, SecondDerivative, Interpolation, StaggeredDerivative };

inline const char* compact_operator_name(CompactOperator op) {
  switch (op) {
    case CompactOperator::FirstDerivative: return "first derivative";
    case CompactOperator::SecondDerivative: return "second derivative";
    case CompactOperator::Interpolation: return "mid-point interpolation";
    default: return "staggered first derivative";
  }
}

/// One row of a compact operator: the tridiagonal entries (lower y_{i-1},
/// diag y_i, upper y_{i+1}) and the RHS coefficients coef[k] of f_{i+start+k},
/// k = 0..4 (start = -2 in the interior; boundary closures shift the window
/// so that it stays inside the grid).
struct CompactRow {
  double lower = 0, diag = 1, upper = 0;
  int start = -2;
  double coef[5] = {0, 0, 0, 0, 0};
};

/// Host description of a compact operator: alpha, a, b, the grid spacing and
/// the boundary closure. The shared tridiagonal matrix and the RHS stencil
/// of every row follow from it (row()). Cheap to copy.
class CompactScheme {
 public:
  /// Sixth-order first derivative (alpha = 1/3, a = 14/9, b = 1/9).
  static CompactScheme first_derivative(double h, Boundary bc = Boundary::Periodic) {
    return CompactScheme(CompactOperator::FirstDerivative, 1.0 / 3, 14.0 / 9, 1.0 / 9, h, bc);
  }
  /// Sixth-order second derivative (alpha = 2/11, a = 12/11, b = 3/11).
  static CompactScheme second_derivative(double h, Boundary bc = Boundary::Periodic) {
    return CompactScheme(CompactOperator::SecondDerivative, 2.0 / 11, 12.0 / 11, 3.0 / 11, h, bc);
  }
  /// Mid-point interpolation node -> x_{i+1/2}, periodic; alpha = 0.3 is the
  /// classic sixth-order scheme, other alpha in (-1/2, 1/2) fourth order.
  static CompactScheme interpolation(double alpha = 0.3) {
    return CompactScheme(CompactOperator::Interpolation, alpha, (9 + 10 * alpha) / 16, (6 * alpha - 1) / 16, 1.0,
                         Boundary::Periodic);
  }
  /// Sixth-order staggered first derivative node -> x_{i+1/2}, periodic
  /// (alpha = 9/62, a = 63/62, b = 17/62).
  static CompactScheme staggered_derivative(double h) {
    return CompactScheme(CompactOperator::StaggeredDerivative, 9.0 / 62, 63.0 / 62, 17.0 / 62, h,
                         Boundary::Periodic);
  }

  CompactOperator op() const { return op_; }
  Boundary boundary() const { return bc_; }
  bool periodic() const { return bc_ == Boundary::Periodic; }
  double alpha() const { return alpha_; }
  double a() const { return a_; }
  double b() const { return b_; }
  double h() const { return h_; }
  /// Smallest line length the operator accepts: 3 periodic, 5 with closures.
  int min_n() const { return periodic() ? 3 : 5; }

  /// Row i of the operator on a line of n points (0 <= i < n). Periodic
  /// lines wrap the window (index mod n) and the corner entries lower(0),
  /// upper(n-1); closed lines use the closures at rows 0, 1, n-2, n-1.
  CompactRow row(int i, int n) const {
    const int k = i < 2 ? i : (i >= n - 2 ? n - 1 - i : -1);
    if (periodic() || k < 0) return interior_;
    CompactRow r = closure_[k];
    if (k == i) return r;  // left end
    // right end: the mirror image of the left closure row k
    CompactRow m;
    m.lower = r.upper;
    m.diag = r.diag;
    m.upper = r.lower;
    m.start = -r.start - 4;
    const double sign = op_ == CompactOperator::FirstDerivative ? -1.0 : 1.0;
    for (int q = 0; q < 5; ++q) m.coef[4 - q] = sign * r.coef[q];
    return m;
  }

  /// The whole matrix of a line of n points (corners included when periodic).
  void matrix(int n, std::vector<double>& lower, std::vector<double>& diag, std::vector<double>& upper) const {
    lower.resize(n);
    diag.resize(n);
    upper.resize(n);
    for (int i = 0; i < n; ++i) {
      const CompactRow r = row(i, n);
      lower[i] = r.lower;
      diag[i] = r.diag;
      upper[i] = r.upper;
    }
  }

  /// Device copy of the RHS stencils.
  template <class T>
  impl::CompactStencil<T> stencil() const {
    impl::CompactStencil<T> s;
    s.periodic = periodic();
    for (int q = 0; q < 5; ++q) s.interior[q] = static_cast<T>(interior_.coef[q]);
    // rows 0, 1 and n-2, n-1 (expressed through the mirror with n = 5 + k)
    for (int k = 0; k < 2; ++k) {
      const CompactRow l = row(k, 8), r = row(7 - k, 8);
      s.left_start[k] = l.start;
      s.right_start[k] = r.start;
      for (int q = 0; q < 5; ++q) {
        s.left[k][q] = static_cast<T>(l.coef[q]);
        s.right[k][q] = static_cast<T>(r.coef[q]);
      }
    }
    return s;
  }

 private:
  CompactScheme(CompactOperator op, double alpha, double a, double b, double h, Boundary bc)
      : op_(op), bc_(bc), alpha_(alpha), a_(a), b_(b), h_(h) {
    impl::require(h > 0 && std::isfinite(h), impl::concat("kband::CompactScheme: grid spacing h=", h,
                                                          " must be positive and finite"));
    impl::require(alpha > -0.5 && alpha < 0.5,
                  impl::concat("kband::CompactScheme: alpha=", alpha, " must lie in (-1/2, 1/2)"));
    impl::require(bc == Boundary::Periodic || op == CompactOperator::FirstDerivative ||
                      op == CompactOperator::SecondDerivative,
                  impl::concat("kband::CompactScheme: the ", compact_operator_name(op),
                               " has no closures for non-periodic lines (periodic only)"));
    interior_.lower = interior_.upper = alpha;
    double* c = interior_.coef;
    switch (op) {
      case CompactOperator::FirstDerivative:
        c[0] = -b / (4 * h), c[1] = -a / (2 * h), c[2] = 0, c[3] = a / (2 * h), c[4] = b / (4 * h);
        closure_[0].upper = 2;
        closure_[0].start = 0;
        closure_[0].coef[0] = -2.5 / h, closure_[0].coef[1] = 2 / h, closure_[0].coef[2] = 0.5 / h;
        closure_[1].lower = closure_[1].upper = 0.25;
        closure_[1].start = -1;
        closure_[1].coef[0] = -0.75 / h, closure_[1].coef[2] = 0.75 / h;
        break;
      case CompactOperator::SecondDerivative: {
        const double h2 = h * h;
        c[0] = c[4] = b / (4 * h2), c[1] = c[3] = a / h2, c[2] = -2 * (a + b / 4) / h2;
        closure_[0].upper = 11;
        closure_[0].start = 0;
        closure_[0].coef[0] = 13 / h2, closure_[0].coef[1] = -27 / h2, closure_[0].coef[2] = 15 / h2,
        closure_[0].coef[3] = -1 / h2;
        closure_[1].lower = closure_[1].upper = 0.1;
        closure_[1].start = -1;
        closure_[1].coef[0] = 1.2 / h2, closure_[1].coef[1] = -2.4 / h2, closure_[1].coef[2] = 1.2 / h2;
        break;
      }
      case CompactOperator::Interpolation:
        c[0] = 0, c[1] = b, c[2] = a, c[3] = a, c[4] = b;
        break;
      default:
        c[0] = 0, c[1] = -b / (3 * h), c[2] = -a / h, c[3] = a / h, c[4] = b / (3 * h);
        break;
    }
  }

  CompactOperator op_;
  Boundary bc_;
  double alpha_, a_, b_, h_;
  CompactRow interior_;
  CompactRow closure_[2];  // left-end rows 0 and 1 (non-periodic)
};

/// The operator's shared tridiagonal matrix for lines of n points, factored
/// (periodic factor for periodic schemes). Throws kband::Error for n below
/// scheme.min_n(). Fences exec (setup call).
template <class T, class Mem = Kokkos::DefaultExecutionSpace::memory_space, class Exec>
TridiagonalFactor<T, Mem> compact_factor(const Exec& exec, const CompactScheme& scheme, int n) {
  impl::ProfilingRegion region("kband::compact_factor");
  impl::require(n >= scheme.min_n(), impl::concat("kband::compact_factor: n=", n, ", the ",
                                                  compact_operator_name(scheme.op()), " needs n >= ",
                                                  scheme.min_n()));
  std::vector<double> l, d, u;
  scheme.matrix(n, l, d, u);
  Kokkos::View<T*, Mem> a("kband::compact::a", n), b("kband::compact::b", n), c("kband::compact::c", n);
  auto ha = Kokkos::create_mirror_view(a), hb = Kokkos::create_mirror_view(b), hc = Kokkos::create_mirror_view(c);
  for (int i = 0; i < n; ++i) {
    ha(i) = static_cast<T>(l[i]);
    hb(i) = static_cast<T>(d[i]);
    hc(i) = static_cast<T>(u[i]);
  }
  Kokkos::deep_copy(exec, a, ha);
  Kokkos::deep_copy(exec, b, hb);
  Kokkos::deep_copy(exec, c, hc);
  exec.fence();  // the host arrays are temporaries
  return TridiagonalFactor<T, Mem>(exec, a, b, c, scheme.periodic() ? Boundary::Periodic : Boundary::NonPeriodic);
}

/// Right-hand side of the operator for every line: rhs(s, i) = sum_k
/// coef_i[k] in(s, i + start_i + k) (indices mod n when periodic). in and rhs
/// are SZ-grouped batches of extents (nsys, n), n >= scheme.min_n(); rhs must
/// not alias in. Padding lanes are neither read nor written. No fence.
template <class Exec, class T, int SZ, class Mem>
void compact_rhs(const Exec& exec, const CompactScheme& scheme, const GroupedBatch<T, SZ, Mem>& in,
                 const GroupedBatch<T, SZ, Mem>& rhs) {
  const char* fn = "kband::compact_rhs";
  impl::ProfilingRegion region(fn);
  impl::require_accessible<Kokkos::View<T*, Mem>, Exec>("in");
  const int n = in.n();
  impl::require(n >= scheme.min_n(), impl::concat(fn, ": n=", n, ", the ", compact_operator_name(scheme.op()),
                                                  " needs n >= ", scheme.min_n()));
  impl::check_batch(fn, "rhs", rhs, in.nsys(), n);
  impl::require(rhs.view().data() != in.view().data(), impl::concat(fn, ": rhs must not alias in"));
  if (in.nsys() == 0) return;
  Kokkos::parallel_for(fn,
                       impl::Range<Exec, Kokkos::IndexType<size_t>>(
                           exec, 0, impl::batch_traits<GroupedBatch<T, SZ, Mem>>::flat_size(in)),
                       impl::CompactRhsKernel<T, SZ, Mem>{scheme.stencil<T>(), in, rhs});
}

/// The reference (unfused) application of a compact operator along the rows
/// of SZ-grouped lines: out = A^{-1} rhs(in), by compact_rhs into `rhs` (a
/// work batch like in) and the shared-coefficient (periodic) Thomas with
/// `factor` = compact_factor(exec, scheme, n). out may alias rhs, not in.
/// info(s) as for thomas (nonzero only when the factor failed). No fence.
template <class Exec, class T, int SZ, class Mem, class Info>
void compact_apply(const Exec& exec, const CompactScheme& scheme, const TridiagonalFactor<T, Mem>& factor,
                   const GroupedBatch<T, SZ, Mem>& in, const GroupedBatch<T, SZ, Mem>& rhs,
                   const GroupedBatch<T, SZ, Mem>& out, const Info& info, const SolveOptions& opt = {}) {
  impl::ProfilingRegion region("kband::compact_apply");
  impl::require(factor.periodic() == scheme.periodic(),
                "kband::compact_apply: the factor's boundary differs from the scheme's");
  impl::require(out.view().data() != in.view().data(), "kband::compact_apply: out must not alias in");
  compact_rhs(exec, scheme, in, rhs);
  thomas(exec, factor, rhs, out, info, opt);
}

}  // namespace kband
