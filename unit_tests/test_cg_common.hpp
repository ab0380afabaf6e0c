// Helpers of the CDS / CG tests: a host dense matrix in long double built
// from the definitions of seed 003 (independent of kband's builders), and
// vector transfers. Host-only.
#pragma once

#include "kband_test_common.hpp"

#include <algorithm>

namespace kband_test_cg {

using kband_test::real_ref;

struct DenseHost {
  int n = 0;
  std::vector<real_ref> a;  // row-major
  explicit DenseHost(int n_) : n(n_), a(static_cast<size_t>(n_) * n_, 0) {}
  real_ref& operator()(int i, int j) { return a[static_cast<size_t>(i) * n + j]; }
  real_ref operator()(int i, int j) const { return a[static_cast<size_t>(i) * n + j]; }

  static DenseHost laplacian_1d(int n) {
    DenseHost m(n);
    for (int i = 0; i < n; ++i) {
      m(i, i) = 2;
      if (i > 0) m(i, i - 1) = -1;
      if (i < n - 1) m(i, i + 1) = -1;
    }
    return m;
  }
  static DenseHost poisson_2d(int nx, int ny) {
    DenseHost m(nx * ny);
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i) {
        const int idx = i + nx * j;
        m(idx, idx) = 4;
        if (i > 0) m(idx, idx - 1) = -1;
        if (i < nx - 1) m(idx, idx + 1) = -1;
        if (j > 0) m(idx, idx - nx) = -1;
        if (j < ny - 1) m(idx, idx + nx) = -1;
      }
    return m;
  }
  template <class T>
  kband::DenseMatrix<T> to_device() const {
    kband::DenseMatrix<T> d("dense", n, n);
    auto h = Kokkos::create_mirror_view(d);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) h(i, j) = static_cast<T>((*this)(i, j));
    Kokkos::deep_copy(d, h);
    return d;
  }
  template <class T>
  static DenseHost from_device(const kband::DenseMatrix<T>& d) {
    DenseHost m(static_cast<int>(d.extent(0)));
    auto h = Kokkos::create_mirror_view(d);
    Kokkos::deep_copy(h, d);
    for (int i = 0; i < m.n; ++i)
      for (int j = 0; j < m.n; ++j) m(i, j) = h(i, j);
    return m;
  }
  template <class T>
  std::vector<real_ref> multiply(const std::vector<T>& x) const {
    std::vector<real_ref> y(n, 0);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) y[i] += (*this)(i, j) * static_cast<real_ref>(x[j]);
    return y;
  }
  template <class T>
  std::vector<real_ref> solve(const std::vector<T>& b) const {
    kband_test::DenseLU lu(a, n);
    return lu.solve(b.data());
  }
};

template <class T>
Kokkos::View<T*> to_device(const std::vector<T>& v) {
  Kokkos::View<T*> d("vec", v.size());
  auto h = Kokkos::create_mirror_view(d);
  for (size_t i = 0; i < v.size(); ++i) h(i) = v[i];
  Kokkos::deep_copy(d, h);
  return d;
}
template <class T>
std::vector<T> to_host(const Kokkos::View<T*>& d) {
  auto h = Kokkos::create_mirror_view(d);
  Kokkos::deep_copy(h, d);
  return std::vector<T>(h.data(), h.data() + d.extent(0));
}

/// A copy of A with one more stored diagonal, `offset` (not stored in A),
/// all zeros: the same matrix, but its offsets no longer pair up.
inline kband::CDSMatrix<double> with_zero_diagonal(const kband::CDSMatrix<double>& A, int offset) {
  std::vector<int> off = A.host_offsets();
  const int at = static_cast<int>(std::lower_bound(off.begin(), off.end(), offset) - off.begin());
  off.insert(off.begin() + at, offset);
  kband::CDSMatrix<double> E("with_zero_diagonal", A.n(), off);
  auto ad = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), A.data());
  auto ed = Kokkos::create_mirror_view(E.data());
  for (int i = 0; i < A.n(); ++i)
    for (int d = 0; d < static_cast<int>(off.size()); ++d) ed(i, d) = d == at ? 0.0 : ad(i, d < at ? d : d - 1);
  Kokkos::deep_copy(E.data(), ed);
  return E;
}

/// n values uniform in [-1, 1).
template <class T>
std::vector<T> random_vector(int n, kband_test::Rng& rng) {
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(rng.uniform(-1, 1));
  return v;
}

/// Solves the 9 x 7 2D Poisson problem with a random b (from seed) and
/// preconditioner p at check intervals 1, 4 and 1000 (CGOptions::reductions
/// red): the iterations and x must be the same, bit for bit.
inline void expect_check_interval_invariance(kband::CGPreconditioner p, std::uint64_t seed,
                                             kband::CGReductions red = kband::CGReductions::Auto) {
  auto A = kband::make_poisson_2d<double>(kband_test::Exec(), 9, 7);
  kband_test::Rng rng(seed);
  auto b = to_device(random_vector<double>(63, rng));
  std::vector<std::vector<double>> xs;
  std::vector<int> its;
  for (int every : {1, 4, 1000}) {
    Kokkos::View<double*> x("x", 63);
    kband::CGOptions opt;
    opt.check_every = every;
    opt.reductions = red;
    const auto res = kband::cg(kband_test::Exec(), A, b, x, opt, p);
    EXPECT_EQ(res.status, kband::CGStatus::Converged) << kband::cg_preconditioner_name(p);
    its.push_back(res.iterations);
    xs.push_back(to_host(x));
  }
  EXPECT_EQ(its[0], its[1]);
  EXPECT_EQ(its[0], its[2]);
  for (size_t i = 0; i < xs[0].size(); ++i) {
    EXPECT_TRUE(kband_test::same_bits(xs[0][i], xs[1][i])) << kband::cg_preconditioner_name(p);
    EXPECT_TRUE(kband_test::same_bits(xs[0][i], xs[2][i])) << kband::cg_preconditioner_name(p);
  }
}

}  // namespace kband_test_cg
