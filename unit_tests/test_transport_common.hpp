// Shared pieces of the transport RHS tests: a smooth periodic velocity field
// (products of sines) and its analytic skew-symmetric RHS in long double.
#pragma once

#include "../examples/transport/kband_transport.hpp"
#include "kband_test_common.hpp"

#include <array>
#include <cmath>
#include <limits>
#include <vector>

namespace kband_test {

using kband_transport::Box;
template <class T>
using TVector = kband_transport::Vector<T>;
using HostField = Kokkos::View<double***, Kokkos::LayoutLeft, Kokkos::HostSpace>;

/// u_c(x) = prod_d sin(m[c][d] x_d + phi[c][d]) on the box [0, 2 pi)^3
/// (not divergence-free: the RHS formula does not need it).
struct SineField {
  int m[3][3] = {{1, 2, 1}, {2, 1, 1}, {1, 1, 2}};
  long double phi[3][3] = {{0.3L, 1.1L, -0.4L}, {0.7L, 0.2L, 1.3L}, {-0.9L, 0.5L, 0.1L}};

  /// sin(m x + phi) and its derivative along direction d of component c at
  /// the local indices of the block (tables: the fill costs products only).
  struct Tables {
    std::vector<long double> s[3][3], ds[3][3];
  };
  Tables tables(const Box& box) const {
    const long double pi = 3.141592653589793238462643383279502884L;
    Tables t;
    for (int c = 0; c < 3; ++c)
      for (int d = 0; d < 3; ++d)
        for (int q = 0; q < box.local[d]; ++q) {
          const long double x = 2 * pi * (box.offset[d] + q) / box.global[d];
          t.s[c][d].push_back(std::sin(m[c][d] * x + phi[c][d]));
          t.ds[c][d].push_back(m[c][d] * std::cos(m[c][d] * x + phi[c][d]));
        }
    return t;
  }

  /// u_c, du_c/dx_d (du[c][d]) and d2u_c/dx_d^2 (d2u[c][d]) at local point (i, j, k).
  void eval(const Tables& t, int i, int j, int k, long double u[3], long double du[3][3],
            long double d2u[3][3]) const {
    const int g[3] = {i, j, k};
    for (int c = 0; c < 3; ++c) {
      long double s[3], ds[3];
      for (int d = 0; d < 3; ++d) s[d] = t.s[c][d][g[d]], ds[d] = t.ds[c][d][g[d]];
      u[c] = s[0] * s[1] * s[2];
      for (int d = 0; d < 3; ++d) {
        long double p = ds[d];
        for (int e = 0; e < 3; ++e)
          if (e != d) p *= s[e];
        du[c][d] = p;
        d2u[c][d] = -static_cast<long double>(m[c][d]) * m[c][d] * u[c];
      }
    }
  }

  /// RHS_i = sum_j -1/2 (u_j du_i/dx_j + d(u_j u_i)/dx_j) + nu d2u_i/dx_j^2.
  static void rhs(const long double u[3], const long double du[3][3], const long double d2u[3][3], long double nu,
                  long double r[3]) {
    for (int i = 0; i < 3; ++i) {
      r[i] = 0;
      for (int j = 0; j < 3; ++j) {
        const long double duju = du[j][j] * u[i] + u[j] * du[i][j];
        r[i] += -0.5L * (u[j] * du[i][j] + duju) + nu * d2u[i][j];
      }
    }
  }

  /// Fills the local block of u (device) and returns the analytic RHS of
  /// the block on the host.
  template <class T>
  std::array<HostField, 3> fill(const Box& box, const TVector<T>& uv, double nu) const {
    std::array<HostField, 3> r;
    for (int c = 0; c < 3; ++c) r[c] = HostField("rhs_exact", box.local[0], box.local[1], box.local[2]);
    auto h0 = Kokkos::create_mirror_view(uv.c[0]), h1 = Kokkos::create_mirror_view(uv.c[1]),
         h2 = Kokkos::create_mirror_view(uv.c[2]);
    const Tables t = tables(box);
    for (int k = 0; k < box.local[2]; ++k)
      for (int j = 0; j < box.local[1]; ++j)
        for (int i = 0; i < box.local[0]; ++i) {
          long double u[3], du[3][3], d2u[3][3], rr[3];
          eval(t, i, j, k, u, du, d2u);
          rhs(u, du, d2u, nu, rr);
          h0(i, j, k) = static_cast<T>(u[0]), h1(i, j, k) = static_cast<T>(u[1]), h2(i, j, k) = static_cast<T>(u[2]);
          for (int c = 0; c < 3; ++c) r[c](i, j, k) = static_cast<double>(rr[c]);
        }
    Kokkos::deep_copy(uv.c[0], h0), Kokkos::deep_copy(uv.c[1], h1), Kokkos::deep_copy(uv.c[2], h2);
    return r;
  }
};

/// Host copies of a device Vector.
template <class T>
std::array<HostField, 3> to_host(const TVector<T>& v) {
  std::array<HostField, 3> h;
  for (int c = 0; c < 3; ++c) {
    auto m = Kokkos::create_mirror_view(v.c[c]);
    Kokkos::deep_copy(m, v.c[c]);
    h[c] = HostField("host", v.c[c].extent(0), v.c[c].extent(1), v.c[c].extent(2));
    for (size_t k = 0; k < m.extent(2); ++k)
      for (size_t j = 0; j < m.extent(1); ++j)
        for (size_t i = 0; i < m.extent(0); ++i) h[c](i, j, k) = static_cast<double>(m(i, j, k));
  }
  return h;
}

/// Fills every component with NaN (a result the RHS does not write stays NaN).
template <class T>
void poison(const TVector<T>& v) {
  for (int c = 0; c < 3; ++c) Kokkos::deep_copy(v.c[c], std::numeric_limits<T>::quiet_NaN());
}

/// max |a - b| / max |b| over the three components (NaN in a -> infinity).
inline double rel_diff(const std::array<HostField, 3>& a, const std::array<HostField, 3>& b) {
  double num = 0, den = 0;
  for (int c = 0; c < 3; ++c)
    for (size_t k = 0; k < b[c].extent(2); ++k)
      for (size_t j = 0; j < b[c].extent(1); ++j)
        for (size_t i = 0; i < b[c].extent(0); ++i) {
          const double d = std::fabs(a[c](i, j, k) - b[c](i, j, k));
          if (!(d <= std::numeric_limits<double>::max())) return std::numeric_limits<double>::infinity();
          num = std::max(num, d);
          den = std::max(den, std::fabs(b[c](i, j, k)));
        }
  return den > 0 ? num / den : num;
}

}  // namespace kband_test
