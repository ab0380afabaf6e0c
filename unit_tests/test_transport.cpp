// The skew-symmetric transport RHS (examples/transport/kband_transport.hpp):
// against the analytic RHS of a product-of-sines field with sixth-order
// convergence, padded (odd) blocks and two SZ, discrete energy conservation
// of the nonlinear term, the data-movement count, Taylor-Green linear decay,
// argument errors.
#include "test_transport_common.hpp"

#include <cstdio>

namespace kband_test {
namespace {

using namespace kband_transport;

template <int SZ = kSZ>
double rhs_error(const std::array<int, 3>& n, double nu, std::array<HostField, 3>* out = nullptr) {
  Exec exec;
  const Box box = Box::single(n);
  SkewTransport<double, SZ> tr(exec, box, nu);
  TVector<double> u("u", box.local), r("r", box.local);
  const auto exact = SineField().fill(box, u, nu);
  poison(r);
  tr.rhs(exec, u, r);
  exec.fence();
  const auto got = to_host(r);
  if (out) *out = got;
  return rel_diff(got, exact);
}

// Observed (Serial, double): 16^3 5.1e-03, 24^3 3.9e-04, 32^3 6.3e-05;
// orders 6.3 and 6.3. A lost term or a wrong sign gives errors of order 1.
TEST(TransportRHS, SixthOrderConvergence) {
  const double nu = 0.05;
  const int sizes[3] = {16, 24, 32};
  double e[3];
  for (int q = 0; q < 3; ++q) e[q] = rhs_error({sizes[q], sizes[q], sizes[q]}, nu);
  for (int q = 0; q < 3; ++q) std::printf("  RHS %d^3: max rel. error %.3e\n", sizes[q], e[q]);
  EXPECT_LT(e[2], 2e-4);
  for (int q = 0; q + 1 < 3; ++q) {
    const double order = std::log(e[q] / e[q + 1]) / std::log(double(sizes[q + 1]) / sizes[q]);
    std::printf("  order %d -> %d: %.2f\n", sizes[q], sizes[q + 1], order);
    EXPECT_GT(order, 5.5) << sizes[q] << " -> " << sizes[q + 1];
  }
}

// Line counts that are no multiple of SZ (padded stacks) in every direction,
// unequal extents; SZ = 4 and the default SZ give the same result.
// Observed: rel. error 1.6e-03 vs analytic (19 points for wavenumbers up
// to 3 in the products); SZ 4 vs SZ 8: identical (0).
TEST(TransportRHS, OddBlocksAndSZ) {
  const std::array<int, 3> n = {21, 27, 19};
  std::array<HostField, 3> a, b;
  const double e = rhs_error<kSZ>(n, 0.1, &a);
  const double e4 = rhs_error<4>(n, 0.1, &b);
  std::printf("  RHS %dx%dx%d: rel. error %.3e (SZ %d), %.3e (SZ 4)\n", n[0], n[1], n[2], e, kSZ, e4);
  EXPECT_LT(e, 5e-3);
  EXPECT_LT(rel_diff(a, b), 1e-13) << rel_diff(a, b);
}

// With nu = 0 the skew-symmetric term conserves energy discretely:
// sum u.RHS = 0 up to round-off (observed 1.7e-18 relative, bound 1e-13).
TEST(TransportRHS, NonlinearTermConservesEnergy) {
  Exec exec;
  const Box box = Box::single({18, 16, 20});
  SkewTransport<double> tr(exec, box, 0.0);
  TVector<double> u("u", box.local), r("r", box.local);
  SineField().fill(box, u, 0.0);
  poison(r);
  tr.rhs(exec, u, r);
  const double ur = dot(exec, u, r), scale = std::sqrt(dot(exec, u, u) * dot(exec, r, r));
  std::printf("  sum u.RHS / (|u| |RHS|) = %.3e\n", ur / scale);
  EXPECT_GT(scale, 1.0);
  EXPECT_LT(std::fabs(ur) / scale, 1e-13);
}

// The counter sees every kernel: 189 field transfers per evaluation when
// the line counts are multiples of SZ; timing does not change the result.
TEST(TransportRHS, DataMovementCounter) {
  Exec exec;
  const Box box = Box::single({16, 24, 16});
  SkewTransport<double> tr(exec, box, 0.05);
  TVector<double> u("u", box.local), r1("r1", box.local), r2("r2", box.local);
  SineField().fill(box, u, 0.05);
  poison(r1), poison(r2);
  MovementCounter plain, timed(true);
  tr.rhs(exec, u, r1, &plain);
  tr.rhs(exec, u, r2, &timed);
  exec.fence();
  EXPECT_DOUBLE_EQ(plain.transfers(), 189.0);
  EXPECT_DOUBLE_EQ(tr.transfers(), 189.0);
  EXPECT_DOUBLE_EQ(timed.transfers(), 189.0);
  EXPECT_GT(timed.seconds(), 0.0);
  EXPECT_GT(timed.seconds(true), 0.0);
  long reorders = 0;
  for (const auto& e : plain.entries())
    if (e.reorder) reorders += e.calls;
  EXPECT_EQ(reorders, 9);
  EXPECT_EQ(rel_diff(to_host(r1), to_host(r2)), 0.0);
  // padded stacks count their padding
  SkewTransport<double> odd(exec, Box::single({13, 11, 9}), 0.05);
  EXPECT_GT(odd.transfers(), 189.0);
}

// Taylor-Green vortex of small amplitude (Re = A/nu = 0.1): the energy
// follows the linear decay E0 exp(-2 nu k^2 t), k^2 = 3. Observed at t = 1:
// |E/E_lin - 1| (nonlinear transfer ~A^2, RK3 and 6th-order space
// errors) = 3.0e-06, bound 3e-5; the energy budget E(0) - E(t) vs the
// trapezoid integral of -<u.RHS>: 7.5e-05 (trapezoid error), bound 1e-3.
TEST(TransportRHS, TaylorGreenLinearDecay) {
  Exec exec;
  const int N = 16;
  const double nu = 0.1, dt = 0.05, A = 0.01;
  const int steps = 20;
  const Box box = Box::single({N, N, N});
  SkewTransport<double> tr(exec, box, nu);
  TVector<double> u("u", box.local), du("du", box.local), r("r", box.local);
  taylor_green(exec, box, u, A);
  const double pts = static_cast<double>(box.global_points());
  const double E0 = 0.5 * dot(exec, u, u) / pts;
  EXPECT_NEAR(E0, A * A / 8, 1e-15);
  double budget = 0, eps_prev = 0;
  for (int s = 0; s <= steps; ++s) {
    poison(r);
    tr.rhs(exec, u, r);
    const double eps = -dot(exec, u, r) / pts;
    if (s > 0) budget += 0.5 * dt * (eps + eps_prev);
    eps_prev = eps;
    if (s == steps) break;
    for (int st = 0; st < 3; ++st) {
      if (st > 0) tr.rhs(exec, u, r);
      rk3_stage(exec, u, du, r, rk3_a[st], rk3_b[st], dt);
    }
  }
  const double t = steps * dt, E = 0.5 * dot(exec, u, u) / pts, lin = E0 * std::exp(-6 * nu * t);
  std::printf("  Taylor-Green t=%.2f: E/E_lin - 1 = %.3e, budget rel. diff %.3e\n", t, E / lin - 1,
              std::fabs(E0 - E - budget) / budget);
  EXPECT_LT(std::fabs(E / lin - 1), 3e-5);
  EXPECT_LT(std::fabs(E0 - E - budget) / budget, 1e-3);
}

TEST(TransportRHS, ArgumentErrors) {
  Exec exec;
  const Box box = Box::single({12, 10, 8});
  EXPECT_THROW((SkewTransport<double>(exec, Box::single({12, 2, 8}), 0.1)), kband::Error);
  SkewTransport<double> tr(exec, box, 0.1);
  TVector<double> u("u", box.local), r("r", box.local), bad("bad", {12, 10, 9});
  EXPECT_THROW(tr.rhs(exec, u, bad), kband::Error);
  EXPECT_THROW(tr.rhs(exec, bad, r), kband::Error);
  EXPECT_THROW(tr.rhs(exec, u, u), kband::Error);
}

}  // namespace
}  // namespace kband_test
