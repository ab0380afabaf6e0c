// CG (issue 8): against a long double dense LU solve for the three seed
// matrices in float and double, the seed's iteration counts, breakdown,
// max-iteration, non-finite and bad-argument cases, preconditioners.
#include "test_cg_common.hpp"

namespace {

using namespace kband_test;
using kband_test_cg::DenseHost;
using kband::CGPreconditioner;
using kband::CGStatus;
using kband_test_cg::random_vector;

/// Solves with `solver` from x0 = 0 (poisoned x first overwritten by the
/// guess), checks the status and returns the relative error against LU.
template <class T, class Solver>
double solve_and_compare(Solver& solver, const DenseHost& ref, const std::vector<T>& b, const kband::CGOptions& opt,
                         kband::CGResult* out = nullptr) {
  auto bd = kband_test_cg::to_device(b);
  Kokkos::View<T*> x("x", ref.n);
  Kokkos::deep_copy(x, T(0));
  const kband::CGResult res = solver.solve(Exec(), bd, x, opt);
  if (out) *out = res;
  EXPECT_EQ(res.status, CGStatus::Converged) << res.message() << " n=" << ref.n;
  EXPECT_EQ(static_cast<int>(res.history.size()), res.iterations + 1);
  EXPECT_LE(res.relative_residual, opt.tol);
  const auto xh = kband_test_cg::to_host(x);
  const auto xref = ref.solve(b);
  ++stats().solves;
  return relative_error_inf(ref.n, xh.data(), xref.data());
}

/// Accuracy bounds (||x - x_LU||_inf / ||x_LU||_inf). CG stops at a relative
/// residual tol, so the error is about cond(A) * tol. double: tol 1e-12;
/// float: tol 1e-5 (a float recursive residual still falls that far).
template <class T>
struct CGTol;
template <>
struct CGTol<double> {
  static constexpr double tol = 1e-12;
  static constexpr double sparse = 1e-10;  // observed max 3.2e-13 (Serial, Kokkos 3.4, g++ 12)
  static constexpr double dense = 1e-10;   // observed max 1.6e-13
};
template <>
struct CGTol<float> {
  static constexpr double tol = 1e-5;
  static constexpr double sparse = 2e-3;  // observed max 1.1e-5
  static constexpr double dense = 5e-3;   // observed max 3.4e-5
};

template <class T>
void accuracy_sweep() {
  Rng rng(mix_seed({80, sizeof(T)}));
  kband::CGOptions opt;
  opt.tol = CGTol<T>::tol;
  opt.check_every = 3;
  const auto precs = {CGPreconditioner::None, CGPreconditioner::Jacobi, CGPreconditioner::Line};
  double worst_sparse = 0, worst_dense = 0;
  for (int n : {2, 3, 7, 16, 33}) {
    auto A = kband::make_laplacian_1d<T>(Exec(), n);
    for (auto p : precs) {
      auto s = kband::make_cg_solver(Exec(), A, p);
      const double e = solve_and_compare(s, DenseHost::laplacian_1d(n), random_vector<T>(n, rng), opt);
      EXPECT_LT(e, CGTol<T>::sparse) << "laplacian n=" << n << " " << kband::cg_preconditioner_name(p);
      worst_sparse = std::max(worst_sparse, e);
    }
  }
  for (auto g : std::vector<std::pair<int, int>>{{1, 2}, {3, 3}, {4, 5}, {7, 3}, {8, 8}}) {
    auto A = kband::make_poisson_2d<T>(Exec(), g.first, g.second);
    for (auto p : precs) {
      auto s = kband::make_cg_solver(Exec(), A, p);
      const double e = solve_and_compare(s, DenseHost::poisson_2d(g.first, g.second),
                                         random_vector<T>(g.first * g.second, rng), opt);
      EXPECT_LT(e, CGTol<T>::sparse) << "poisson " << g.first << "x" << g.second << " " << kband::cg_preconditioner_name(p);
      worst_sparse = std::max(worst_sparse, e);
    }
  }
  for (int n : {1, 3, 10, 17}) {
    auto A = kband::make_random_spd<T>(Exec(), n, 7 + n);
    const DenseHost ref = DenseHost::from_device(A);
    kband::CGOptions o = opt;
    o.max_iterations = 50 * n + 50;  // loss of orthogonality: more than n steps
    for (auto p : {CGPreconditioner::None, CGPreconditioner::Jacobi}) {
      auto s = kband::make_cg_solver(Exec(), A, p);
      const double e = solve_and_compare(s, ref, random_vector<T>(n, rng), o);
      EXPECT_LT(e, CGTol<T>::dense) << "random spd n=" << n << " " << kband::cg_preconditioner_name(p);
      worst_dense = std::max(worst_dense, e);
    }
    // the same matrix through CDS (dense -> CDS keeps all 2n-1 diagonals: the
    // kernel that reads more than 16 offsets from a View). Its tridiagonal
    // part is indefinite (off-diagonals ~ n/4, diagonal ~ n/3), so no Line.
    auto C = kband::cds_from_dense(Exec(), A);
    auto s = kband::make_cg_solver(Exec(), C, CGPreconditioner::None);
    const double e = solve_and_compare(s, ref, random_vector<T>(n, rng), o);
    EXPECT_LT(e, CGTol<T>::dense) << "random spd as CDS n=" << n;
    worst_dense = std::max(worst_dense, e);
  }
  record_error(std::string(type_name(T())) + " cg sparse", worst_sparse);
  record_error(std::string(type_name(T())) + " cg dense spd", worst_dense);
}

TEST(CGAccuracy, Double) { accuracy_sweep<double>(); }
TEST(CGAccuracy, Float) { accuracy_sweep<float>(); }

kband::CGResult solve_ones(const kband::CDSMatrix<double>& A, CGPreconditioner p = CGPreconditioner::None,
                           kband::CGOptions opt = {}) {
  Kokkos::View<double*> b("b", A.n()), x("x", A.n());
  Kokkos::deep_copy(b, 1.0);
  return kband::cg(Exec(), A, b, x, opt, p);
}

/// Solves with `solver` from x0 = 0 at tolerance 1e-12 (an unwritten x fails
/// the residual check below), checks that it converged; x on the host.
template <class Solver>
std::vector<double> solve_from_zero(Solver& solver, const std::vector<double>& b, const std::string& what) {
  Kokkos::View<double*> x("x", b.size());
  Kokkos::deep_copy(x, 0.0);
  kband::CGOptions opt;
  opt.tol = 1e-12;
  const kband::CGResult res = solver.solve(Exec(), kband_test_cg::to_device(b), x, opt);
  EXPECT_EQ(res.status, CGStatus::Converged) << res.message() << " " << what;
  EXPECT_GT(res.iterations, 0) << what;
  ++stats().solves;
  return kband_test_cg::to_host(x);
}

/// As solve_from_zero, with the given sweep order; the iterations it took
/// in `its`.
template <class Solver>
std::vector<double> solve_sweeps(Solver& solver, const std::vector<double>& b, const kband::CGSweeps sweeps, int& its,
                                 const std::string& what) {
  Kokkos::View<double*> x("x", b.size());
  Kokkos::deep_copy(x, 0.0);
  kband::CGOptions opt;
  opt.tol = 1e-12;
  opt.sweeps = sweeps;
  const kband::CGResult res = solver.solve(Exec(), kband_test_cg::to_device(b), x, opt);
  EXPECT_EQ(res.status, CGStatus::Converged) << res.message() << " " << what;
  EXPECT_GT(res.iterations, 1) << what;
  its = res.iterations;
  ++stats().solves;
  return kband_test_cg::to_host(x);
}

/// ||b - A x|| / ||b|| in long double; row_times_x(i) = (A x)_i.
template <class RowTimesX>
double true_relative_residual(const std::vector<double>& b, const RowTimesX& row_times_x) {
  long double rr = 0, bb = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    const long double ri = b[i] - row_times_x(static_cast<int>(i));
    rr += ri * ri;
    bb += static_cast<long double>(b[i]) * b[i];
  }
  return std::sqrt(static_cast<double>(rr / bb));
}

/// ||b - A x|| / ||b|| in long double from the CDS matrix's own entries.
double cds_true_residual(const kband::CDSMatrix<double>& A, const std::vector<double>& b, const std::vector<double>& x) {
  auto hd = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), A.data());
  const std::vector<int> off = A.host_offsets();
  const int n = A.n();
  return true_relative_residual(b, [&](const int i) {
    long double ax = 0;
    for (size_t d = 0; d < off.size(); ++d) {
      const int j = i + off[d];
      if (j >= 0 && j < n) ax += static_cast<long double>(hd(i, d)) * x[j];
    }
    return ax;
  });
}

/// A random symmetric n x n matrix on the device, and its host copy `h`:
/// diagonal d0 + U(0, 1), off-diagonal entries U(-0.5, 0.5) * scale.
template <class Layout>
Kokkos::View<double**, Layout> random_symmetric(const int n, Rng& rng, const double d0, const double scale,
                                                typename Kokkos::View<double**, Layout>::HostMirror& h) {
  Kokkos::View<double**, Layout> A("A", n, n);
  h = Kokkos::create_mirror_view(A);
  for (int i = 0; i < n; ++i) {
    h(i, i) = d0 + rng.uniform(0, 1);
    for (int j = 0; j < i; ++j) h(i, j) = h(j, i) = rng.uniform(-0.5, 0.5) * scale;
  }
  Kokkos::deep_copy(A, h);
  return A;
}

/// The dense product reads the upper triangle in 128 x 128 tiles: sizes
/// one short of, at and past a tile, several tiles with a partial last one
/// (1537: 13 tiles a side, the last of one row),
/// row-major and column-major matrices (the latter read as the transpose).
/// Checked by the true residual in long double; a second solve must repeat
/// the first bit for bit (every partial product has one writer, summed in a
/// fixed order: no atomics).
template <class Layout>
void dense_tiles_case(const int n) {
  Rng rng(mix_seed({82, static_cast<std::uint64_t>(n)}));
  typename Kokkos::View<double**, Layout>::HostMirror ha;
  const auto A = random_symmetric<Layout>(n, rng, n, 1.0, ha);
  const std::vector<double> b = random_vector<double>(n, rng);
  const std::string what = std::string(std::is_same<Layout, Kokkos::LayoutLeft>::value ? "LayoutLeft" : "LayoutRight") +
                           " n=" + std::to_string(n);
  for (auto p : {CGPreconditioner::None, CGPreconditioner::Jacobi}) {
    auto s = kband::make_cg_solver(Exec(), A, p);
    const auto xh = solve_from_zero(s, b, what);
    const double res = true_relative_residual(b, [&](const int i) {
      long double ax = 0;
      for (int j = 0; j < n; ++j) ax += static_cast<long double>(ha(i, j)) * xh[j];
      return ax;
    });
    EXPECT_LT(res, 1e-10) << what << " " << kband::cg_preconditioner_name(p);
    const auto again = solve_from_zero(s, b, what);
    int differ = 0;
    for (int i = 0; i < n; ++i) differ += again[i] == xh[i] ? 0 : 1;
    EXPECT_EQ(differ, 0) << what << ": a repeated solve differs";
  }
}

TEST(CGDense, TileBoundariesAndLayouts) {
  for (int n : {1, 2, 127, 128, 129, 300, 1537}) {
    dense_tiles_case<Kokkos::LayoutRight>(n);
    dense_tiles_case<Kokkos::LayoutLeft>(n);
  }
}

/// CDS matrices of several row blocks, a partial last block, and diagonals
/// farther apart than a block (CPUs multiply blocks of 512 rows diagonal by
/// diagonal; GPUs take 4 rows a quarter of the matrix apart): 2D Poisson
/// 700 x 3 (offsets +-700) and 3 x 700 (offsets +-3), n = 2100, every
/// preconditioner. Checked by the true residual ||b - A x|| / ||b||, in long
/// double on the host.
TEST(CGAccuracy, RowBlocksAndFarDiagonals) {
  for (auto g : std::vector<std::pair<int, int>>{{700, 3}, {3, 700}}) {
    auto A = kband::make_poisson_2d<double>(Exec(), g.first, g.second);
    const int n = A.n();
    Rng rng(mix_seed({82, static_cast<std::uint64_t>(g.first)}));
    const std::vector<double> b = random_vector<double>(n, rng);
    for (auto p : {CGPreconditioner::None, CGPreconditioner::Jacobi, CGPreconditioner::Line}) {
      auto s = kband::make_cg_solver(Exec(), A, p);
      const std::string what = std::to_string(g.first) + " x " + std::to_string(g.second) + " " +
                               kband::cg_preconditioner_name(p);
      const auto xh = solve_from_zero(s, b, what);
      EXPECT_LT(cds_true_residual(A, b, xh), 1e-10) << what;
    }
  }
}

/// One right-hand side solved by the two forms of CGOptions::reductions on
/// the same solver: both converge to the LU answer, in iteration counts
/// within 1 + 2 % of each other (One takes beta's numerator from a
/// recurrence one step deep, so rounding differs), with the same first
/// residuals.
template <class T>
void reductions_case(const kband::CDSMatrix<T>& A, const DenseHost& ref, const CGPreconditioner p, Rng& rng,
                     const std::string& what, double& worst) {
  const int n = A.n();
  const std::vector<T> b = random_vector<T>(n, rng);
  auto s = kband::make_cg_solver(Exec(), A, p);
  kband::CGOptions opt;
  opt.tol = CGTol<T>::tol;
  opt.check_every = 3;
  opt.max_iterations = 20 * n + 50;
  kband::CGResult res[2];
  for (int f = 0; f < 2; ++f) {
    opt.reductions = f == 0 ? kband::CGReductions::Two : kband::CGReductions::One;
    const double e = solve_and_compare(s, ref, b, opt, &res[f]);
    EXPECT_EQ(res[f].reductions, opt.reductions) << what;
    EXPECT_LT(e, CGTol<T>::sparse) << what << (f ? " one" : " two");
    worst = std::max(worst, e);
  }
  // (float on the random SPD matrix, condition about 1e5: the two forms'
  // histories part within five steps, as rounding alone makes them, so
  // their counts are compared to 10 %)
  const bool chaotic = std::is_same<T, float>::value && what == "random spd as CDS";
  EXPECT_LE(std::abs(res[0].iterations - res[1].iterations), 1 + res[0].iterations / (chaotic ? 10 : 50))
      << what << ": two " << res[0].iterations << ", one " << res[1].iterations;
  // (entries down at the rounding level, as in the last steps of tiny
  // systems, differ at random)
  const double eps = std::numeric_limits<T>::epsilon(), htol = 1e6 * eps;
  for (int j = 0; j <= std::min({4, res[0].iterations, res[1].iterations}) && res[0].history[j] > 1e4 * eps; ++j)
    EXPECT_NEAR(res[1].history[j], res[0].history[j], htol * res[0].history[j]) << what << " history " << j;
}

template <class T>
void reductions_sweep() {
  Rng rng(mix_seed({83, sizeof(T)}));
  double worst = 0;
  for (int n : {2, 3, 7, 100, 513}) {  // (the builder's minimum is 2)
    const auto A = kband::make_laplacian_1d<T>(Exec(), n);
    for (auto p : {CGPreconditioner::None, CGPreconditioner::Jacobi})
      reductions_case(A, DenseHost::laplacian_1d(n), p, rng, "laplacian n=" + std::to_string(n), worst);
  }
  for (auto g : std::vector<std::pair<int, int>>{{1, 2}, {3, 5}, {17, 13}, {40, 40}}) {
    const auto A = kband::make_poisson_2d<T>(Exec(), g.first, g.second);
    for (auto p : {CGPreconditioner::None, CGPreconditioner::Jacobi})
      reductions_case(A, DenseHost::poisson_2d(g.first, g.second), p, rng,
                      "poisson " + std::to_string(g.first) + "x" + std::to_string(g.second), worst);
  }
  // a badly scaled D L D (Jacobi's own case) and a random SPD matrix with
  // all 2n - 1 diagonals (offsets read from a View)
  const int n = 48;
  DenseHost scaled = DenseHost::laplacian_1d(n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) scaled(i, j) *= (1.0L + i % 10) * (1.0L + j % 10);
  reductions_case(kband::cds_from_dense(Exec(), scaled.to_device<T>()), scaled, CGPreconditioner::Jacobi, rng,
                  "scaled laplacian", worst);
  const auto R = kband::make_random_spd<T>(Exec(), 17, 91);
  reductions_case(kband::cds_from_dense(Exec(), R), DenseHost::from_device(R), CGPreconditioner::None, rng,
                  "random spd as CDS", worst);
  record_error(std::string(type_name(T())) + " cg sparse", worst);
}

TEST(CGReductions, OneAgreesWithTwoDouble) { reductions_sweep<double>(); }
TEST(CGReductions, OneAgreesWithTwoFloat) { reductions_sweep<float>(); }

/// A test matrix and its name.
struct NamedCDS {
  kband::CDSMatrix<double> A;
  std::string what;
};

/// The narrow-band one-reduction kernel (CGBandApply: teams of consecutive
/// rows, r and p in place, halos through side buffers) on systems of many
/// teams (GPUs: 2048 rows a team, hosts 512), including a last team shorter
/// than twice the band (2D Poisson 9 x 228: 4 rows against w = 9) and a
/// wide band (w = 40): the same iterations
/// as the two-kernel form (to 2 %), true residuals in long double.
/// (CGBand::Always: under Auto a GPU takes the row kernel at these sizes.)
TEST(CGReductions, NarrowBandTeams) {
  Rng rng(85);
  std::vector<NamedCDS> cases;
  for (int n : {4100, 6001}) cases.push_back({kband::make_laplacian_1d<double>(Exec(), n), "laplacian " + std::to_string(n)});
  for (auto g : std::vector<std::pair<int, int>>{{3, 2000}, {9, 228}, {40, 60}})
    cases.push_back({kband::make_poisson_2d<double>(Exec(), g.first, g.second),
                     "poisson " + std::to_string(g.first) + "x" + std::to_string(g.second)});
  for (const auto& c : cases) {
    const int n = c.A.n();
    const std::vector<double> bh = random_vector<double>(n, rng);
    const auto b = kband_test_cg::to_device(bh);
    for (auto p : {CGPreconditioner::None, CGPreconditioner::Jacobi}) {
      int its[2] = {0, 0};
      for (int f = 0; f < 2; ++f) {
        kband::CGOptions opt;
        opt.tol = 1e-10;
        opt.reductions = f == 0 ? kband::CGReductions::Two : kband::CGReductions::One;
        opt.narrow_band = kband::CGBand::Always;  // these sizes would fill few of a GPU's multiprocessors
        Kokkos::View<double*> x("x", n);
        Kokkos::deep_copy(x, 0.5);  // x0 != 0: kernel 0 reads it as p
        const auto res = kband::cg(Exec(), c.A, b, x, opt, p);
        ASSERT_EQ(res.status, CGStatus::Converged) << c.what << " " << res.message();
        EXPECT_EQ(res.reductions, opt.reductions);
        its[f] = res.iterations;
        EXPECT_LT(cds_true_residual(c.A, bh, kband_test_cg::to_host(x)), 1e-8) << c.what << (f ? " one" : " two");
        ++stats().solves;
      }
      EXPECT_LE(std::abs(its[0] - its[1]), 1 + its[0] / 50) << c.what << ": two " << its[0] << ", one " << its[1];
    }
  }
}

/// The narrow-band kernel takes matrices whose x, r, p and read diagonals
/// fit KBAND_CG_BAND_MAX_MIB (48 MiB): the 1D Laplacian of 2^20 rows both
/// ways (24 or 40 MiB), of 2^21 rows with its constant diagonals only (48
/// MiB), of 2^21 + 1 rows neither; never under the line preconditioner.
TEST(CGReductions, NarrowBandWhereTheDataFitCache) {
  struct Case {
    int n;
    bool constant, read;
  };
  for (const Case c : {Case{1 << 20, true, true}, Case{1 << 21, true, false}, Case{(1 << 21) + 1, false, false}}) {
    const auto A = kband::make_laplacian_1d<double>(Exec(), c.n);
    const auto solver = kband::make_cg_solver(Exec(), A, CGPreconditioner::None);
    EXPECT_TRUE(solver.constant_diagonals());
    EXPECT_EQ(solver.narrow_band(true), c.constant) << c.n;
    EXPECT_EQ(solver.narrow_band(false), c.read) << c.n;
  }
  const auto P = kband::make_poisson_2d<double>(Exec(), 4, 50);
  EXPECT_TRUE(kband::make_cg_solver(Exec(), P, CGPreconditioner::None).narrow_band(true, kband::CGBand::Always));
  EXPECT_FALSE(kband::make_cg_solver(Exec(), P, CGPreconditioner::None).narrow_band(true, kband::CGBand::Never));
  EXPECT_FALSE(kband::make_cg_solver(Exec(), P, CGPreconditioner::Line).narrow_band(true, kband::CGBand::Always));
}

/// CGBand::Auto asks for 2 teams (2048 rows on GPUs, 512 on hosts) for
/// every 2048 threads the device holds; a small matrix then takes the row
/// kernel on GPUs, and the answer is the same as on the narrow-band one.
TEST(CGReductions, NarrowBandNeedsRowsToFillTheDevice) {
  const long threads = static_cast<long>(Exec().concurrency());
  const int team_rows = kband::impl::is_device_exec<Exec>::value ? 2048 : 512;
  const int n = 3 * team_rows + 5;  // 4 teams
  const auto A = kband::make_laplacian_1d<double>(Exec(), n);
  const auto solver = kband::make_cg_solver(Exec(), A, CGPreconditioner::None);
  EXPECT_EQ(solver.narrow_band(true), 4 * 1024 >= threads);
  EXPECT_TRUE(solver.narrow_band(true, kband::CGBand::Always));
  EXPECT_FALSE(solver.narrow_band(true, kband::CGBand::Never));
  // 2^21 rows: 1024 GPU teams, enough for devices of up to 2^20 threads
  if (threads <= (1L << 20))
    EXPECT_TRUE(kband::make_cg_solver(Exec(), kband::make_laplacian_1d<double>(Exec(), 1 << 21), CGPreconditioner::None)
                    .narrow_band(true));
  Rng rng(87);
  const std::vector<double> bh = random_vector<double>(n, rng);
  const auto b = kband_test_cg::to_device(bh);
  std::vector<double> xs[3];
  int its[3];
  const kband::CGBand modes[3] = {kband::CGBand::Auto, kband::CGBand::Always, kband::CGBand::Never};
  for (int m = 0; m < 3; ++m) {
    auto s = kband::make_cg_solver(Exec(), A, CGPreconditioner::None);
    kband::CGOptions opt;
    opt.reductions = kband::CGReductions::One;
    opt.narrow_band = modes[m];
    Kokkos::View<double*> x("x", n);
    Kokkos::deep_copy(x, nan_value<double>());
    Kokkos::deep_copy(x, 0.0);
    const auto res = s.solve(Exec(), b, x, opt);
    ASSERT_EQ(res.status, CGStatus::Converged) << m << " " << res.message();
    its[m] = res.iterations;
    xs[m] = kband_test_cg::to_host(x);
    EXPECT_LT(cds_true_residual(A, bh, xs[m]), 1e-7) << m;
  }
  EXPECT_LE(std::abs(its[1] - its[2]), 1 + its[2] / 50);
  EXPECT_EQ(its[0], its[solver.narrow_band(true) ? 1 : 2]);
}

/// A CDS matrix with the given diagonals, each one value on all its rows.
kband::CDSMatrix<double> constant_stencil(const int n, const std::vector<int>& off, const std::vector<double>& val) {
  kband::CDSMatrix<double> A("stencil", n, off);
  auto h = Kokkos::create_mirror_view(A.data());
  for (int i = 0; i < n; ++i)
    for (size_t d = 0; d < off.size(); ++d) h(i, d) = i + off[d] >= 0 && i + off[d] < n ? val[d] : 0.0;
  Kokkos::deep_copy(A.data(), h);
  return A;
}

/// Constant diagonals (CDSConstSymRow): the product from the diagonals'
/// values gives the iterates of the one that reads the matrix (the same
/// arithmetic in the same order: bit for bit on hosts whose compiler does
/// not fuse multiply-adds; GPUs, and hosts with FMA, where the compiler may
/// fuse the two paths' products differently, to 1e-13), in
/// both forms (the one-reduction form on the narrow-band kernel and on the
/// row kernel, CGOptions::work_items), with and without Jacobi; true
/// residuals in long double.
#if defined(__FMA__) || defined(__FP_FAST_FMA) || defined(__ARM_FEATURE_FMA)
constexpr bool kHostFusesMultiplyAdd = true;  // e.g. -march=native (KBAND_NATIVE_ARCH)
#else
constexpr bool kHostFusesMultiplyAdd = false;
#endif
TEST(CGConstantDiagonals, SameAsReadingTheMatrix) {
  Rng rng(86);
  std::vector<NamedCDS> cases;
  cases.push_back({constant_stencil(1, {0}, {2.0}), "1 x 1"});
  for (int n : {2, 3, 7, 100, 4100})
    cases.push_back({kband::make_laplacian_1d<double>(Exec(), n), "laplacian " + std::to_string(n)});
  for (int n : {5, 333})
    cases.push_back({constant_stencil(n, {-2, -1, 0, 1, 2}, {1, -4, 6.5, -4, 1}), "penta " + std::to_string(n)});
  cases.push_back({constant_stencil(300, {-7, -1, 0, 1, 7}, {-1, -1, 4.5, -1, -1}), "offsets 1 and 7, n 300"});
  for (const auto& c : cases) {
    const int n = c.A.n();
    const std::vector<double> bh = random_vector<double>(n, rng);
    const auto b = kband_test_cg::to_device(bh);
    for (auto p : {CGPreconditioner::None, CGPreconditioner::Jacobi})
      for (auto red : {kband::CGReductions::Two, kband::CGReductions::One})
        for (int items : {0, 64}) {
          if (red == kband::CGReductions::Two && items > 0) continue;
          const std::string what = c.what + (p == CGPreconditioner::Jacobi ? " jacobi" : "") +
                                   (red == kband::CGReductions::One ? " one" : " two") + (items ? " rows" : "");
          auto solver = kband::make_cg_solver(Exec(), c.A, p);
          EXPECT_TRUE(solver.constant_diagonals()) << what;
          kband::CGOptions opt;
          opt.tol = 1e-10;
          opt.reductions = red;
          opt.work_items = items;
          opt.narrow_band = kband::CGBand::Always;  // at these sizes, also on GPUs
          std::vector<double> xs[2];
          int its[2] = {-1, -2};
          for (int f = 0; f < 2; ++f) {
            opt.constant_diagonals = f == 0;
            Kokkos::View<double*> x("x", n);
            const auto res = solver.solve(Exec(), b, x, opt);
            ASSERT_EQ(res.status, CGStatus::Converged) << what << " " << res.message();
            its[f] = res.iterations;
            xs[f] = kband_test_cg::to_host(x);
            EXPECT_LT(cds_true_residual(c.A, bh, xs[f]), 1e-8) << what;
            ++stats().solves;
          }
          EXPECT_EQ(its[0], its[1]) << what;
          double dmax = 0, xmax = 0;
          int differ = 0;
          for (int i = 0; i < n; ++i) {
            dmax = std::max(dmax, std::abs(xs[0][i] - xs[1][i]));
            xmax = std::max(xmax, std::abs(xs[1][i]));
            differ += xs[0][i] != xs[1][i];
          }
          EXPECT_GT(xmax, 0.0) << what;
          EXPECT_LE(dmax, 1e-13 * xmax) << what;
          if (!kband::impl::is_device_exec<Exec>::value && !kHostFusesMultiplyAdd) EXPECT_EQ(differ, 0) << what;
        }
  }
}

/// Constant diagonals are found only where every main and upper diagonal is
/// one value on all its rows of a symmetric matrix; the other matrices are
/// read (and still solved).
TEST(CGConstantDiagonals, FoundOnlyWhereConstant) {
  Rng rng(87);
  const int n = 50;
  auto lap = [&](const int i, const int d, const double v) {
    auto A = kband::make_laplacian_1d<double>(Exec(), n);
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), A.data());
    h(i, d) = v;
    Kokkos::deep_copy(A.data(), h);
    return A;
  };
  struct Case {
    kband::CDSMatrix<double> A;
    bool constant;
    std::string what;
  };
  std::vector<Case> cases;
  cases.push_back({kband::make_laplacian_1d<double>(Exec(), n), true, "laplacian"});
  cases.push_back({lap(n - 1, 1, 2.5), false, "last main entry"});
  cases.push_back({lap(0, 1, 2.5), false, "first main entry"});
  {
    auto A = lap(7, 2, -0.5);  // A(7, 8) and A(8, 7): still symmetric
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), A.data());
    h(8, 0) = -0.5;
    Kokkos::deep_copy(A.data(), h);
    cases.push_back({A, false, "one symmetric pair"});
  }
  cases.push_back({lap(7, 2, -0.5), false, "unsymmetric"});
  cases.push_back({kband::make_poisson_2d<double>(Exec(), 8, 8), false, "2D Poisson (zeros at the lines' ends)"});
  cases.push_back({constant_stencil(n, {0, 3}, {2.0, 0.5}), false, "no partner diagonal"});
  for (const auto& c : cases) {
    auto solver = kband::make_cg_solver(Exec(), c.A, CGPreconditioner::None);
    EXPECT_EQ(solver.constant_diagonals(), c.constant) << c.what;
    if (c.what == "unsymmetric" || c.what == "no partner diagonal") continue;
    const std::vector<double> bh = random_vector<double>(c.A.n(), rng);
    Kokkos::View<double*> x("x", c.A.n());
    const auto res = solver.solve(Exec(), kband_test_cg::to_device(bh), x);
    ASSERT_EQ(res.status, CGStatus::Converged) << c.what;
    EXPECT_LT(cds_true_residual(c.A, bh, kband_test_cg::to_host(x)), 1e-7) << c.what;
  }
}

/// Which form runs: Auto takes One for single-rank CDS matrices without a
/// preconditioner, with Jacobi or with the zebra on GPUs, Two on hosts and
/// elsewhere (a request for One falls back), and explicit requests are
/// honoured. The
/// unsymmetric storage (an unpaired zero diagonal: every diagonal read)
/// converges the same way.
TEST(CGReductions, FormChosen) {
  const auto P = kband::make_poisson_2d<double>(Exec(), 9, 7);
  kband::CGOptions one, two;
  one.reductions = kband::CGReductions::One;
  two.reductions = kband::CGReductions::Two;
  const auto gpu = kband::impl::is_device_exec<Exec>::value ? kband::CGReductions::One : kband::CGReductions::Two;
  EXPECT_EQ(solve_ones(P).reductions, gpu);
  EXPECT_EQ(solve_ones(P, CGPreconditioner::Jacobi).reductions, gpu);
  EXPECT_EQ(solve_ones(P, CGPreconditioner::None, one).reductions, kband::CGReductions::One);
  EXPECT_EQ(solve_ones(P, CGPreconditioner::Jacobi, one).reductions, kband::CGReductions::One);
  EXPECT_EQ(solve_ones(P, CGPreconditioner::None, two).reductions, kband::CGReductions::Two);
  EXPECT_EQ(solve_ones(P, CGPreconditioner::Line, one).reductions, kband::CGReductions::Two);
  EXPECT_EQ(solve_ones(P, CGPreconditioner::Zebra, one).reductions, kband::CGReductions::One);
  EXPECT_EQ(solve_ones(P, CGPreconditioner::Zebra).reductions, gpu);
  EXPECT_EQ(solve_ones(P, CGPreconditioner::Zebra, two).reductions, kband::CGReductions::Two);
  // zebra lines too long for the black kernel's team scratch (double, 2048
  // rows): Auto keeps Two on GPUs; a request for One is honoured
  // (its scratch then in global memory on GPUs: the solve still converges)
  const auto W = kband::make_poisson_2d<double>(Exec(), 2048, 2);
  EXPECT_EQ(solve_ones(W, CGPreconditioner::Zebra).reductions, kband::CGReductions::Two);
  const auto wide = solve_ones(W, CGPreconditioner::Zebra, one);
  EXPECT_EQ(wide.reductions, kband::CGReductions::One);
  EXPECT_EQ(wide.status, CGStatus::Converged) << wide.message();
  EXPECT_GT(wide.iterations, 0);
  Kokkos::View<double*> b("b", 63), x("x", 63);
  Kokkos::deep_copy(b, 1.0);
  const auto D = DenseHost::poisson_2d(9, 7).to_device<double>();
  EXPECT_EQ(kband::cg(Exec(), D, b, x, one).reductions, kband::CGReductions::Two);
  const auto E = kband_test_cg::with_zero_diagonal(P, 2);
  auto s = kband::make_cg_solver(Exec(), E);
  EXPECT_FALSE(s.upper_only());
  for (const auto& opt : {one, two}) {
    Rng rng(84);
    const std::vector<double> bh = random_vector<double>(63, rng);
    Kokkos::deep_copy(x, 0.0);
    const auto res = s.solve(Exec(), kband_test_cg::to_device(bh), x, opt);
    EXPECT_EQ(res.status, CGStatus::Converged);
    EXPECT_EQ(res.reductions, opt.reductions);
    EXPECT_LT(cds_true_residual(P, bh, kband_test_cg::to_host(x)), 1e-7);
  }
}

/// The dense product sweeps its tiles from the last rows up on odd
/// iterations with CGSweeps::Alternate (Auto's choice on GPUs). Both orders
/// must give converged solves of the same accuracy in about the same number
/// of iterations (only the order of the sums changes): sizes with one, two
/// and three tiles a side (partial last tiles), row- and column-major,
/// checked by the true residual in long double.
template <class Layout>
void dense_sweeps_case(const int n) {
  Rng rng(mix_seed({83, static_cast<std::uint64_t>(n)}));
  typename Kokkos::View<double**, Layout>::HostMirror hd;
  const auto D = random_symmetric<Layout>(n, rng, 4, 1 / std::sqrt(n), hd);
  const std::vector<double> b = random_vector<double>(n, rng);
  auto s = kband::make_cg_solver(Exec(), D);
  int its[2] = {0, 0};
  for (int alt = 0; alt < 2; ++alt) {
    const std::string what = std::string(std::is_same<Layout, Kokkos::LayoutLeft>::value ? "LayoutLeft" : "LayoutRight") +
                             " n=" + std::to_string(n) + (alt ? " alternate" : " forward");
    const auto xh = solve_sweeps(s, b, alt ? kband::CGSweeps::Alternate : kband::CGSweeps::Forward, its[alt], what);
    const double res = true_relative_residual(b, [&](const int i) {
      long double ax = 0;
      for (int j = 0; j < n; ++j) ax += static_cast<long double>(hd(i, j)) * xh[j];
      return ax;
    });
    EXPECT_LT(res, 1e-10) << what;
  }
  EXPECT_LE(std::abs(its[0] - its[1]), 2) << "n=" << n << ": " << its[0] << " / " << its[1];
}

TEST(CGDense, SweepDirections) {
  for (int n : {100, 129, 300}) {
    dense_sweeps_case<Kokkos::LayoutRight>(n);
    dense_sweeps_case<Kokkos::LayoutLeft>(n);
  }
}

/// A CDS matrix is multiplied from its upper half only when its offsets pair
/// up and its values are exactly symmetric. Three matrices of the same
/// 2D Poisson couplings (9 x 7 grid), each checked by the true residual of
/// its own entries in long double:
///  - as built: upper half;
///  - one entry below the diagonal changed by 1e-6 (non-symmetric): whole
///    matrix (from the upper half, CG would solve the symmetric matrix
///    instead, and the true residual would be about 1e-7);
///  - an extra diagonal (offset -2, zero) without a partner: whole matrix.
/// Repeated solves with the upper half repeat bit for bit.
TEST(CGAccuracy, UpperHalfOnlyForSymmetricValues) {
  const int nx = 9, ny = 7, n = nx * ny;
  const auto P = kband::make_poisson_2d<double>(Exec(), nx, ny);
  auto pd = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), P.data());
  Rng rng(mix_seed({83}));
  const std::vector<double> b = random_vector<double>(n, rng);
  auto check = [&](const kband::CDSMatrix<double>& A, bool upper, const std::string& what) {
    for (auto p : {CGPreconditioner::None, CGPreconditioner::Jacobi, CGPreconditioner::Line}) {
      auto s = kband::make_cg_solver(Exec(), A, p);
      EXPECT_EQ(s.upper_only(), upper) << what;
      const auto xh = solve_from_zero(s, b, what);
      EXPECT_LT(cds_true_residual(A, b, xh), 1e-10) << what << " " << kband::cg_preconditioner_name(p);
      if (upper) {
        const auto again = solve_from_zero(s, b, what);
        int differ = 0;
        for (int i = 0; i < n; ++i) differ += again[i] == xh[i] ? 0 : 1;
        EXPECT_EQ(differ, 0) << what << ": a repeated solve differs";
      }
    }
  };
  check(P, true, "symmetric");

  kband::CDSMatrix<double> N("asymmetric", n, P.host_offsets());
  auto nd = Kokkos::create_mirror_view(N.data());
  Kokkos::deep_copy(nd, pd);
  const int dlow = P.diagonal_index(-1);
  ASSERT_GE(dlow, 0);
  nd(20, dlow) *= 1 + 1e-6;  // A(20, 19) != A(19, 20)
  Kokkos::deep_copy(N.data(), nd);
  check(N, false, "one entry off by 1e-6");

  check(kband_test_cg::with_zero_diagonal(P, -2), false, "unpaired offset -2");

  // dense matrices: always the upper triangle
  auto D = kband::make_cg_solver(Exec(), DenseHost::poisson_2d(3, 3).to_device<double>());
  EXPECT_TRUE(D.upper_only());
}

TEST(CGIterations, Laplacian1DSeedCounts) {
  // seed 003 Table 4: n / 2 iterations for n = 2^k, b = ones, tol 1e-8
  for (int k = 4; k <= 11; ++k) {
    const int n = 1 << k;
    const auto res = solve_ones(kband::make_laplacian_1d<double>(Exec(), n));
    EXPECT_EQ(res.status, CGStatus::Converged);
    EXPECT_EQ(res.iterations, n / 2) << "n=" << n;
  }
}

TEST(CGIterations, Poisson2DSeedCounts) {
  // seed 003 Table 5: 3, 10, 28, 59, 119 iterations for 2^4 .. 2^12 unknowns
  const int want[] = {3, 10, 28, 59, 119};
  for (int k = 0; k < 5; ++k) {
    const int N = 4 << k;
    const auto res = solve_ones(kband::make_poisson_2d<double>(Exec(), N, N));
    EXPECT_EQ(res.status, CGStatus::Converged);
    EXPECT_EQ(res.iterations, want[k]) << N << " x " << N;
  }
}

/// The line solve itself: T z = r for the tridiagonal part, with lines of
/// one length (shared factor or not) and of unequal lengths, for every
/// number of threads per line the backend allows (GPUs: 1 to 256, so that
/// chunks of 1 row, uneven chunks, empty chunks and the scan across them
/// are all exercised; CPUs: 1).
TEST(CGLine, SolvesTheTridiagonalPart) {
  Rng rng(11);
  struct Case {
    int n;
    std::vector<int> breaks;  // rows i where the coupling (i-1, i) is zero
    bool identical;
  };
  const std::vector<Case> cases = {{12, {4, 8}, true},        {12, {4, 8}, false},          {13, {1, 5, 6, 11}, false},
                                   {1, {}, true},             {9, {}, false},               {1000, {}, true},
                                   {2100, {700, 1400}, true}, {1503, {1, 501, 502}, false}, {4099, {}, false},
                                   {1000, {100, 200, 300, 400, 500, 600, 700, 800, 900}, true}};
  std::vector<int> tls{0, 1};
  if (kband::impl::is_device_exec<Exec>::value) tls.insert(tls.end(), {2, 3, 7, 16, 32, 100, 128, 256});
  for (const int tl : tls)
    for (const auto& c : cases) {
      // A(i, i-1) = A(i-1, i) = lo[i], A(i, i) = dg[i]; the offsets +-2 (0.5)
      // are not part of the tridiagonal part
      const int n = c.n;
      std::vector<double> lo(n, 0.0), dg(n);
      for (int i = 0; i < n; ++i) {
        dg[i] = c.identical ? 3 : 3 + rng.uniform(0, 1);
        if (i > 0 && std::find(c.breaks.begin(), c.breaks.end(), i) == c.breaks.end())
          lo[i] = c.identical ? -1 : rng.uniform(-1, 1);
      }
      kband::CDSMatrix<double, Exec::memory_space> A("A", n, n > 2 ? std::vector<int>{-2, -1, 0, 1, 2} : std::vector<int>{0});
      auto hd = Kokkos::create_mirror_view(A.data());
      for (int i = 0; i < n; ++i) {
        if (n > 2) {
          hd(i, 0) = i >= 2 ? 0.5 : 0.0;
          hd(i, 1) = lo[i];
          hd(i, 3) = i + 1 < n ? lo[i + 1] : 0.0;
          hd(i, 4) = i + 2 < n ? 0.5 : 0.0;
          hd(i, 2) = dg[i];
        } else {
          hd(i, 0) = dg[i];
          lo[i] = 0;
        }
      }
      Kokkos::deep_copy(A.data(), hd);
      kband::impl::LineSolver<double, Exec::memory_space> line(Exec(), A, tl);
      const int want_lines = n > 2 ? static_cast<int>(c.breaks.size()) + 1 : n;
      EXPECT_EQ(line.lines(), want_lines);
      EXPECT_EQ(line.shared(), c.identical || want_lines == 1);
      std::vector<double> rv(n);
      for (auto& v : rv) v = rng.uniform(-1, 1);
      auto r = kband_test_cg::to_device(rv);
      Kokkos::View<double*> z("z", n);
      Kokkos::deep_copy(z, nan_value<double>());
      line.apply(Exec(), r, z);
      const auto zh = kband_test_cg::to_host(z);
      for (int i = 0; i < n; ++i) {
        long double t = static_cast<long double>(dg[i]) * zh[i];
        if (i > 0) t += static_cast<long double>(lo[i]) * zh[i - 1];
        if (i < n - 1) t += static_cast<long double>(lo[i + 1]) * zh[i + 1];
        ASSERT_NEAR(static_cast<double>(t), rv[i], 1e-14)
            << "n=" << n << " row " << i << ", threads per line " << tl;  // observed <= 4.4e-16
      }
    }
}

/// The fused step of the line-preconditioned iteration: r = b - q (start)
/// or r -= alpha q (iterate, alpha = r.z / p.Ap from the history), z = T^-1 r
/// and the sums (r.r, r.z), on a 2D Poisson grid (identical lines: on CPUs
/// whole groups of 8 lines and a partial one) and on lines of unequal
/// lengths, for every thread count a line may get.
TEST(CGLine, ResidualStepAndSums) {
  using Mem = Exec::memory_space;
  Rng rng(17);
  std::vector<int> tls{0, 1};
  if (kband::impl::is_device_exec<Exec>::value) tls.insert(tls.end(), {4, 32, 256});
  const std::vector<kband::CDSMatrix<double, Mem>> mats = {
      kband::make_poisson_2d<double>(Exec(), 37, 23), [&] {
        DenseHost ref = DenseHost::laplacian_1d(50);
        for (int i : {7, 8, 30}) ref(i, i - 1) = ref(i - 1, i) = 0;  // lines of 7, 1, 22, 20 rows
        return kband::cds_from_dense(Exec(), ref.to_device<double>());
      }()};
  for (const auto& A : mats)
    for (const int tl : tls)
      for (const int mode : {kband::impl::kLineStart, kband::impl::kLineIterate}) {
        const int n = A.n();
        kband::impl::LineSolver<double, Mem> line(Exec(), A, tl);
        const auto bv = random_vector<double>(n, rng), qv = random_vector<double>(n, rng),
                   rv = random_vector<double>(n, rng);
        auto b = kband_test_cg::to_device(bv), q = kband_test_cg::to_device(qv), r = kband_test_cg::to_device(rv);
        Kokkos::View<double*> z("z", n);
        Kokkos::deep_copy(z, nan_value<double>());
        kband::impl::CGState<double, Mem> st;
        st.sums = Kokkos::View<kband::impl::CGSums<double>*, Mem>("sums", 2);
        st.pap = Kokkos::View<double*, Mem>("pap", 2);
        auto hs = Kokkos::create_mirror_view(st.sums);
        auto hp = Kokkos::create_mirror_view(st.pap);
        hs(0).rr = 1.0;
        hs(0).rz = 0.75;  // alpha = 0.75 / 2.5 = 0.3
        hs(1).rr = hs(1).rz = nan_value<double>();
        hp(0) = 2.5;
        Kokkos::deep_copy(st.sums, hs);
        Kokkos::deep_copy(st.pap, hp);
        line.residual(Exec(), mode, st, r, b, q, z, Kokkos::subview(st.sums, 1));
        Kokkos::deep_copy(hs, st.sums);
        const auto rn = kband_test_cg::to_host(r), zh = kband_test_cg::to_host(z);
        auto hd = Kokkos::create_mirror_view(A.data());
        Kokkos::deep_copy(hd, A.data());
        const int dl = A.diagonal_index(-1), d0 = A.diagonal_index(0), du = A.diagonal_index(1);
        long double rr = 0, rz = 0;
        for (int i = 0; i < n; ++i) {
          const double want = mode == kband::impl::kLineStart ? bv[i] - qv[i] : rv[i] - 0.3 * qv[i];
          ASSERT_NEAR(rn[i], want, 1e-15) << "row " << i;
          // T z = r, T = the tridiagonal part
          long double t = hd(i, d0) * static_cast<long double>(zh[i]);
          if (i > 0) t += hd(i, dl) * static_cast<long double>(zh[i - 1]);
          if (i + 1 < n) t += hd(i, du) * static_cast<long double>(zh[i + 1]);
          ASSERT_NEAR(static_cast<double>(t), rn[i], 1e-13) << "row " << i << ", threads per line " << tl;
          rr += static_cast<long double>(rn[i]) * rn[i];
          rz += static_cast<long double>(rn[i]) * zh[i];
        }
        EXPECT_NEAR(hs(1).rr, static_cast<double>(rr), 1e-13 * static_cast<double>(rr)) << "threads per line " << tl;
        EXPECT_NEAR(hs(1).rz, static_cast<double>(rz), 1e-12 * std::fabs(static_cast<double>(rz)))
            << "threads per line " << tl;
      }
}

TEST(CGIterations, PreconditionersNeedFewerIterations) {
  auto P = kband::make_poisson_2d<double>(Exec(), 32, 32);
  const auto none = solve_ones(P), line = solve_ones(P, CGPreconditioner::Line);
  EXPECT_EQ(line.status, CGStatus::Converged);
  EXPECT_LT(line.iterations, none.iterations);
  std::printf("  poisson 32x32: none %d, line %d iterations\n", none.iterations, line.iterations);
  // the 1D Laplacian is its own tridiagonal part: one line, one iteration
  EXPECT_EQ(solve_ones(kband::make_laplacian_1d<double>(Exec(), 100), CGPreconditioner::Line).iterations, 1);
  // a badly scaled matrix D L D (D = diag(1 .. 100)): Jacobi undoes the scaling
  const int n = 64;
  DenseHost ref = DenseHost::laplacian_1d(n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) ref(i, j) *= (1.0L + i % 100) * (1.0L + j % 100);
  auto A = kband::cds_from_dense(Exec(), ref.to_device<double>());
  kband::CGOptions opt;
  opt.max_iterations = 2000;
  const auto plain = solve_ones(A, CGPreconditioner::None, opt), jac = solve_ones(A, CGPreconditioner::Jacobi, opt);
  EXPECT_EQ(jac.status, CGStatus::Converged);
  EXPECT_LT(jac.iterations, plain.iterations);
  std::printf("  scaled laplacian n=64: none %d (%s), jacobi %d iterations\n", plain.iterations, plain.message(),
              jac.iterations);
}

TEST(CGIterations, CheckIntervalDoesNotChangeTheAnswer) {
  for (auto red : {kband::CGReductions::Two, kband::CGReductions::One})
    kband_test_cg::expect_check_interval_invariance(CGPreconditioner::Jacobi, 5, red);
}

/// Check points after the first 32 look one batch ahead: the host posts a
/// copy of the history, enqueues the next check_every iterations, then
/// decides (check_every 1, 2 and 3 reach that phase here). The stop, the iteration count, the history and x must be those of
/// a solve that checks once at the end, for each status and in both forms,
/// also when the stop falls just before, at or after a check point.
void LookAheadChecks_case(const kband::CGReductions red) {
  SCOPED_TRACE(red == kband::CGReductions::One ? "one reduction" : "two reductions");
  const int n = 200;  // converges in n / 2 = 100 iterations
  DenseHost lap = DenseHost::laplacian_1d(n);
  DenseHost ind = lap;
  // indefinite at row 150; b = 1 on rows 0..49 only: the Krylov space
  // reaches row 150 after some 100 iterations, and p.Ap <= 0 comes late
  ind(150, 150) = -100;
  const auto L = kband::cds_from_dense(Exec(), lap.to_device<double>());
  const auto I = kband::cds_from_dense(Exec(), ind.to_device<double>());
  Kokkos::View<double*> b("b", n), bi("bi", n);
  Kokkos::deep_copy(b, 1.0);
  Kokkos::deep_copy(Kokkos::subview(bi, Kokkos::make_pair(0, 50)), 1.0);
  struct Case {
    const char* name;
    const std::decay_t<decltype(L)>* A;
    int maxit;
    CGStatus status;
  };
  const Case cases[] = {{"converged", &L, 0, CGStatus::Converged},
                        {"max iterations", &L, 61, CGStatus::MaxIterations},
                        {"max iterations at the stop", &L, 100, CGStatus::Converged},
                        {"not SPD", &I, 0, CGStatus::NotSPD}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    kband::CGResult ref;
    std::vector<double> xref;
    for (int every : {1000000, 1, 2, 3, 5, 7, 9, 11, 13, 99, 100, 101}) {
      SCOPED_TRACE("check_every " + std::to_string(every));
      Kokkos::View<double*> x("x", n);
      Kokkos::deep_copy(x, nan_value<double>());
      Kokkos::deep_copy(x, 0.0);
      kband::CGOptions opt;
      opt.reductions = red;
      opt.check_every = every;
      opt.max_iterations = c.maxit;
      const auto res = kband::cg(Exec(), *c.A, c.A == &L ? b : bi, x, opt);
      const auto hx = kband_test_cg::to_host(x);
      EXPECT_EQ(res.status, c.status) << res.message();
      if (every == 1000000) {  // one check, at the stop
        ref = res;
        xref = hx;
        if (c.status == CGStatus::Converged) EXPECT_EQ(res.iterations, c.A == &L ? n / 2 : res.iterations);
        if (c.status == CGStatus::MaxIterations) EXPECT_EQ(res.iterations, c.maxit);
        if (c.status == CGStatus::NotSPD) EXPECT_GT(res.iterations, 99);  // past 32 checks at check_every <= 3
        std::printf("  %s, %s: %d iterations\n", red == kband::CGReductions::One ? "one" : "two", c.name,
                    res.iterations);
        continue;
      }
      EXPECT_EQ(res.iterations, ref.iterations);
      ASSERT_EQ(res.history.size(), ref.history.size());
      for (size_t j = 0; j < res.history.size(); ++j) EXPECT_EQ(res.history[j], ref.history[j]) << j;
      int bad = 0;
      for (int i = 0; i < n; ++i) bad += kband_test::same_bits(hx[i], xref[i]) ? 0 : 1;
      EXPECT_EQ(bad, 0);
    }
  }
}

TEST(CGIterations, LookAheadChecks) {
  for (auto red : {kband::CGReductions::Two, kband::CGReductions::One}) LookAheadChecks_case(red);
}

void IndefiniteMatrixIsNotSPD_case(const kband::CGReductions red) {
  SCOPED_TRACE(red == kband::CGReductions::One ? "one reduction" : "two reductions");
  kband::CGOptions opt;
  opt.reductions = red;
  // diag(2, 2, -1, 2, ...) with the Laplacian couplings: indefinite
  const int n = 12;
  DenseHost ref = DenseHost::laplacian_1d(n);
  ref(5, 5) = -6;
  auto A = kband::cds_from_dense(Exec(), ref.to_device<double>());
  Kokkos::View<double*> b("b", n), x("x", n);
  Kokkos::deep_copy(b, 1.0);
  const auto res = kband::cg(Exec(), A, b, x, opt);
  EXPECT_EQ(res.status, CGStatus::NotSPD) << res.message();
  EXPECT_NE(std::string(res.message()).find("not SPD"), std::string::npos);
  for (double v : kband_test_cg::to_host(x)) EXPECT_TRUE(std::isfinite(v));
  // negative definite: breakdown at the very first step, x untouched
  auto N = kband::cds_from_dense(Exec(), [&] {
    DenseHost m = DenseHost::laplacian_1d(n);
    for (auto& v : m.a) v = -v;
    return m;
  }().to_device<double>());
  Kokkos::deep_copy(x, 0.5);
  const auto r0 = kband::cg(Exec(), N, b, x, opt, CGPreconditioner::Line);
  EXPECT_EQ(r0.status, CGStatus::PreconditionerNotSPD) << r0.message();
  const auto r1 = kband::cg(Exec(), N, b, x, opt);
  EXPECT_EQ(r1.status, CGStatus::NotSPD) << r1.message();
  EXPECT_EQ(r1.iterations, 0);
  for (double v : kband_test_cg::to_host(x)) EXPECT_EQ(v, 0.5);
}

void MaxIterationsKeepsTheIterate_case(const kband::CGReductions red) {
  SCOPED_TRACE(red == kband::CGReductions::One ? "one reduction" : "two reductions");
  const int n = 64;
  auto A = kband::make_laplacian_1d<double>(Exec(), n);
  Kokkos::View<double*> b("b", n), x("x", n), Ax("Ax", n);
  Kokkos::deep_copy(b, 1.0);
  kband::CGOptions opt;
  opt.reductions = red;
  opt.max_iterations = 5;
  opt.check_every = 2;
  const auto res = kband::cg(Exec(), A, b, x, opt);
  EXPECT_EQ(res.status, CGStatus::MaxIterations);
  EXPECT_EQ(res.iterations, 5);
  ASSERT_EQ(res.history.size(), 6u);
  // the true residual of the returned x equals the recursive one
  kband::spmv(Exec(), A, x, Ax);
  const auto ax = kband_test_cg::to_host(Ax);
  double rr = 0;
  for (int i = 0; i < n; ++i) rr += (1.0 - ax[i]) * (1.0 - ax[i]);
  EXPECT_NEAR(std::sqrt(rr / n), res.relative_residual, 1e-12);
}

void NonFiniteInputIsReportedNotIterated_case(const kband::CGReductions red) {
  SCOPED_TRACE(red == kband::CGReductions::One ? "one reduction" : "two reductions");
  kband::CGOptions opt;
  opt.reductions = red;
  const int n = 10;
  auto A = kband::make_laplacian_1d<double>(Exec(), n);
  Kokkos::View<double*> b("b", n), x("x", n);
  Kokkos::deep_copy(b, 1.0);
  Kokkos::deep_copy(Kokkos::subview(b, 3), nan_value<double>());
  Kokkos::deep_copy(x, 0.25);
  auto res = kband::cg(Exec(), A, b, x, opt);
  EXPECT_EQ(res.status, CGStatus::NonFinite);
  EXPECT_EQ(res.iterations, 0);
  for (double v : kband_test_cg::to_host(x)) EXPECT_EQ(v, 0.25);
  Kokkos::deep_copy(b, 1.0);
  Kokkos::deep_copy(Kokkos::subview(x, 9), std::numeric_limits<double>::infinity());
  res = kband::cg(Exec(), A, b, x, opt, CGPreconditioner::Jacobi);
  EXPECT_EQ(res.status, CGStatus::NonFinite);
  // b = 0 from x0 = 0: converged at once
  Kokkos::deep_copy(b, 0.0);
  Kokkos::deep_copy(x, 0.0);
  res = kband::cg(Exec(), A, b, x, opt);
  EXPECT_EQ(res.status, CGStatus::Converged);
  EXPECT_EQ(res.iterations, 0);
  // a zero pivot in the line preconditioner's factor (the tridiagonal part
  // [[1, 1], [1, 1]] of rows 0-1 is singular): reported, x untouched
  DenseHost ref = DenseHost::laplacian_1d(n);
  ref(0, 0) = ref(0, 1) = ref(1, 0) = ref(1, 1) = 1;
  auto S = kband::cds_from_dense(Exec(), ref.to_device<double>());
  Kokkos::deep_copy(b, 1.0);
  Kokkos::deep_copy(x, 0.25);
  res = kband::cg(Exec(), S, b, x, opt, CGPreconditioner::Line);
  EXPECT_EQ(res.status, CGStatus::NonFinite) << res.message();
  EXPECT_EQ(res.iterations, 0);
  for (double v : kband_test_cg::to_host(x)) EXPECT_EQ(v, 0.25);
}

/// The status cases under both forms of CGOptions::reductions.
TEST(CGStatus, IndefiniteMatrixIsNotSPD) {
  for (auto red : {kband::CGReductions::Two, kband::CGReductions::One}) IndefiniteMatrixIsNotSPD_case(red);
}
TEST(CGStatus, MaxIterationsKeepsTheIterate) {
  for (auto red : {kband::CGReductions::Two, kband::CGReductions::One}) MaxIterationsKeepsTheIterate_case(red);
}
TEST(CGStatus, NonFiniteInputIsReportedNotIterated) {
  for (auto red : {kband::CGReductions::Two, kband::CGReductions::One}) NonFiniteInputIsReportedNotIterated_case(red);
}

TEST(CGErrors, BadArguments) {
  auto A = kband::make_laplacian_1d<double>(Exec(), 8);
  Kokkos::View<double*> b("b", 8), x("x", 8), x7("x7", 7);
  EXPECT_THROW(kband::cg(Exec(), A, b, x7), kband::Error);
  EXPECT_THROW(kband::cg(Exec(), A, x7, x), kband::Error);
  EXPECT_THROW(kband::cg(Exec(), A, b, b), kband::Error);
  kband::CGOptions opt;
  opt.check_every = 0;
  EXPECT_THROW(kband::cg(Exec(), A, b, x, opt), kband::Error);
  opt = {};
  opt.tol = -1;
  EXPECT_THROW(kband::cg(Exec(), A, b, x, opt), kband::Error);
  opt = {};
  opt.max_iterations = -3;
  EXPECT_THROW(kband::cg(Exec(), A, b, x, opt), kband::Error);
  kband::DenseMatrix<double> D("D", 8, 8), R("R", 8, 7);
  EXPECT_THROW(kband::cg(Exec(), D, b, x, {}, CGPreconditioner::Line), kband::Error);
  EXPECT_THROW(kband::cg(Exec(), R, b, x), kband::Error);
  EXPECT_THROW(kband::cg(Exec(), kband::CDSMatrix<double>(), b, x), kband::Error);
  try {
    kband::cg(Exec(), A, b, x7);
  } catch (const kband::Error& e) {
    EXPECT_NE(std::string(e.what()).find("'x'"), std::string::npos) << e.what();
  }
}

}  // namespace
