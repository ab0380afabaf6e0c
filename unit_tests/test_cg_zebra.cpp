// CG with the zebra line preconditioner (issue 8): against a long double
// dense LU solve on grids with odd and even line counts, variable
// coefficients and a 9-point stencil, from initial guesses whose red lines
// are poisoned (the method recomputes them); iteration counts against the
// line preconditioner; the history against the returned iterate; errors and
// non-finite input. Every case runs in both forms (CGReductions::Two: three
// kernels an iteration; One: two, ZebraBlackOne).
#include "test_cg_common.hpp"

namespace {

using namespace kband_test;
using kband_test_cg::DenseHost;
using kband::CGPreconditioner;
using kband::CGStatus;
using kband_test_cg::random_vector;

/// 5-point operator on an nx x ny grid with random positive couplings
/// (conductivities in [0.5, 2]), diagonal = the sum of a row's couplings plus
/// `shift` > 0 (the sums alone make a singular matrix): SPD, every line with its
/// own coefficients.
DenseHost variable_poisson(int nx, int ny, double shift, Rng& rng) {
  DenseHost m(nx * ny);
  auto couple = [&](int a, int b) {
    const real_ref c = static_cast<real_ref>(rng.uniform(0.5, 2.0));
    m(a, b) -= c;
    m(b, a) -= c;
    m(a, a) += c;
    m(b, b) += c;
  };
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i) {
      const int k = i + nx * j;
      if (i + 1 < nx) couple(k, k + 1);
      if (j + 1 < ny) couple(k, k + nx);
      m(k, k) += shift;
    }
  return m;
}

/// 9-point Laplacian (8 on the diagonal, -1 to all eight neighbours): the
/// couplings at +-(nx - 1), +-nx, +-(nx + 1) all join adjacent lines.
DenseHost nine_point(int nx, int ny) {
  DenseHost m(nx * ny);
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i) {
      const int k = i + nx * j;
      m(k, k) = 8;
      for (int dj = -1; dj <= 1; ++dj)
        for (int di = -1; di <= 1; ++di) {
          const int ii = i + di, jj = j + dj;
          if ((di || dj) && ii >= 0 && ii < nx && jj >= 0 && jj < ny) m(k, ii + nx * jj) = -1;
        }
    }
  return m;
}

/// Solves A x = b with the zebra preconditioner from x0 = random on the
/// black lines and `poison` on the red ones; returns ||x - x_LU|| / ||x_LU||
/// (inf norms) and checks status and history.
using kband::CGReductions;
const CGReductions kForms[] = {CGReductions::Two, CGReductions::One};
std::string form_name(CGReductions r) { return r == CGReductions::One ? " (one)" : " (two)"; }

template <class T>
double zebra_error(const kband::CDSMatrix<T>& A, const DenseHost& ref, int nx, double tol, Rng& rng,
                   const std::string& what0, CGReductions red, T poison = T(1e30)) {
  const std::string what = what0 + form_name(red);
  const int n = ref.n;
  const std::vector<T> b = random_vector<T>(n, rng);
  std::vector<T> x0 = random_vector<T>(n, rng);
  for (int i = 0; i < n; ++i)
    if ((i / nx) % 2 == 0) x0[i] = poison;
  auto x = kband_test_cg::to_device(x0);
  kband::CGOptions opt;
  opt.tol = tol;
  opt.check_every = 3;
  opt.reductions = red;
  auto s = kband::make_cg_solver(Exec(), A, CGPreconditioner::Zebra);
  EXPECT_EQ(s.line_length(), nx) << what;
  const kband::CGResult res = s.solve(Exec(), kband_test_cg::to_device(b), x, opt);
  EXPECT_EQ(res.status, CGStatus::Converged) << res.message() << " " << what;
  EXPECT_EQ(res.reductions, red) << what;
  EXPECT_EQ(static_cast<int>(res.history.size()), res.iterations + 1) << what;
  EXPECT_LE(res.relative_residual, tol) << what;
  const auto xh = kband_test_cg::to_host(x);
  const auto xref = ref.solve(b);
  ++stats().solves;
  return relative_error_inf(n, xh.data(), xref.data());
}

template <class T>
struct ZebraTol;
template <>
struct ZebraTol<double> {
  static constexpr double tol = 1e-12, err = 1e-10;
};
template <>
struct ZebraTol<float> {
  static constexpr double tol = 1e-5, err = 2e-3;
};

template <class T>
void zebra_sweep() {
  Rng rng(mix_seed({81, sizeof(T)}));
  double worst = 0;
  // odd and even line counts (an odd count leaves one more red line), lines of 2..16 rows
  for (auto g : std::vector<std::pair<int, int>>{{2, 2}, {3, 3}, {4, 5}, {7, 3}, {8, 8}, {5, 2}, {16, 9}, {3, 12}}) {
    const std::string what = "poisson " + std::to_string(g.first) + "x" + std::to_string(g.second);
    for (CGReductions red : kForms) {
      const double e =
          zebra_error<T>(kband::make_poisson_2d<T>(Exec(), g.first, g.second), DenseHost::poisson_2d(g.first, g.second),
                         g.first, ZebraTol<T>::tol, rng, what, red);
      EXPECT_LT(e, ZebraTol<T>::err) << what << form_name(red);
      worst = std::max(worst, e);
    }
  }
  // variable coefficients (a factor per line), with and without a shift
  for (auto g : std::vector<std::pair<int, int>>{{6, 7}, {9, 4}}) {
    for (double shift : {0.05, 0.5}) {
      const DenseHost ref = variable_poisson(g.first, g.second, shift, rng);
      const std::string what = "variable " + std::to_string(g.first) + "x" + std::to_string(g.second);
      for (CGReductions red : kForms) {
        const double e = zebra_error<T>(kband::cds_from_dense(Exec(), ref.to_device<T>()), ref, g.first,
                                        ZebraTol<T>::tol, rng, what, red);
        EXPECT_LT(e, ZebraTol<T>::err) << what << form_name(red);
        worst = std::max(worst, e);
      }
    }
  }
  // six coupling diagonals
  for (auto g : std::vector<std::pair<int, int>>{{5, 5}, {8, 3}}) {
    const DenseHost ref = nine_point(g.first, g.second);
    const std::string what = "nine-point " + std::to_string(g.first) + "x" + std::to_string(g.second);
    for (CGReductions red : kForms) {
      const double e = zebra_error<T>(kband::cds_from_dense(Exec(), ref.to_device<T>()), ref, g.first, ZebraTol<T>::tol,
                                      rng, what, red);
      EXPECT_LT(e, ZebraTol<T>::err) << what << form_name(red);
      worst = std::max(worst, e);
    }
  }
  record_error(std::string(type_name(T())) + " cg zebra", worst);
}

TEST(CGZebra, MatchesDenseLUDouble) { zebra_sweep<double>(); }
TEST(CGZebra, MatchesDenseLUFloat) { zebra_sweep<float>(); }

kband::CGResult ones(const kband::CDSMatrix<double>& A, CGPreconditioner p, kband::CGOptions opt = {},
                     Kokkos::View<double*> x = {}) {
  Kokkos::View<double*> b("b", A.n());
  if (x.extent(0) == 0) x = Kokkos::View<double*>("x", A.n());
  Kokkos::deep_copy(b, 1.0);
  return kband::cg(Exec(), A, b, x, opt, p);
}

TEST(CGZebra, AboutHalfTheLineIterations) {
  for (int N : {32, 64}) {
    auto P = kband::make_poisson_2d<double>(Exec(), N, N);
    kband::CGOptions one;
    one.reductions = CGReductions::One;
    const auto line = ones(P, CGPreconditioner::Line), zebra = ones(P, CGPreconditioner::Zebra),
               zebra1 = ones(P, CGPreconditioner::Zebra, one);
    ASSERT_EQ(zebra.status, CGStatus::Converged) << zebra.message();
    ASSERT_EQ(zebra1.status, CGStatus::Converged) << zebra1.message();
    EXPECT_GT(zebra.iterations, 0);
    EXPECT_LT(zebra.iterations, 0.6 * line.iterations) << N;
    // the one-reduction form: the same iterations (to 2 %) and first residuals
    EXPECT_LE(std::abs(zebra1.iterations - zebra.iterations), 1 + zebra.iterations / 50) << N;
    for (int j = 0; j <= 4; ++j) EXPECT_NEAR(zebra1.history[j], zebra.history[j], 1e-9 * zebra.history[j]) << j;
    std::printf("  poisson %dx%d: line %d, zebra %d (one-reduction form %d) iterations\n", N, N, line.iterations,
                zebra.iterations, zebra1.iterations);
  }
}

/// The returned x is the iterate the history describes: its red rows' residual
/// is zero, and its true residual relative to that of the first iterate is
/// history[k] / history[0].
TEST(CGZebra, HistoryDescribesTheReturnedIterate) {
  const int nx = 12, ny = 9, n = nx * ny;
  auto A = kband::make_poisson_2d<double>(Exec(), nx, ny);
  const DenseHost ref = DenseHost::poisson_2d(nx, ny);
  for (CGReductions red : kForms) {
    auto true_res = [&](int maxit, kband::CGResult& res, std::vector<long double>& r) {
      kband::CGOptions opt;
      opt.reductions = red;
      opt.max_iterations = maxit;
      opt.check_every = 2;
      opt.tol = 1e-14;
      Kokkos::View<double*> x("x", n);
      Kokkos::deep_copy(x, 7.0);  // poison: every entry is overwritten
      Kokkos::deep_copy(Kokkos::subview(x, std::make_pair(nx, 2 * nx)), 0.0);
      Kokkos::deep_copy(Kokkos::subview(x, std::make_pair(3 * nx, 4 * nx)), 0.0);
      Kokkos::deep_copy(Kokkos::subview(x, std::make_pair(5 * nx, 6 * nx)), 0.0);
      Kokkos::deep_copy(Kokkos::subview(x, std::make_pair(7 * nx, 8 * nx)), 0.0);
      res = ones(A, CGPreconditioner::Zebra, opt, x);
      const auto xh = kband_test_cg::to_host(x);
      const auto ax = ref.multiply(xh);
      r.assign(n, 0);
      long double rr = 0;
      for (int i = 0; i < n; ++i) {
        r[i] = 1.0L - ax[i];
        rr += r[i] * r[i];
      }
      return std::sqrt(rr);
    };
    kband::CGResult r1, r6;
    std::vector<long double> res1, res6;
    const long double t1 = true_res(1, r1, res1), t6 = true_res(6, r6, res6);
    ASSERT_EQ(r1.status, CGStatus::MaxIterations);
    ASSERT_EQ(r6.status, CGStatus::MaxIterations);
    ASSERT_EQ(r6.history.size(), 7u);
    for (int i = 0; i < n; ++i)
      if ((i / nx) % 2 == 0) {
        EXPECT_NEAR(static_cast<double>(res1[i]), 0.0, 1e-13) << i;
        EXPECT_NEAR(static_cast<double>(res6[i]), 0.0, 1e-13) << i;
      }
    // the recursive residual of a few steps equals the true one
    EXPECT_NEAR(static_cast<double>(t6 / t1), r6.history[6] / r6.history[1], 1e-10) << form_name(red);
    EXPECT_NEAR(r1.history[1], r6.history[1], 1e-15) << form_name(red);
    EXPECT_GT(t1, t6);
  }
}

/// Red lines of up to 1024 rows get their right-hand side inside the line
/// kernel, longer ones from a kernel of its own (kZebraFusedLine): both
/// sides of that bound converge to the true solution (residual b - A x in
/// long double on the host).
TEST(CGZebra, LinesEitherSideOfTheFusedLength) {
  for (int nx : {1024, 1025}) {
    const int ny = 5, n = nx * ny;
    auto A = kband::make_poisson_2d<double>(Exec(), nx, ny);
    Rng rng(mix_seed({86, static_cast<std::uint64_t>(nx)}));
    const std::vector<double> bh = kband_test_cg::random_vector<double>(n, rng);
    for (CGReductions red : kForms) {
      Kokkos::View<double*> x("x", n);
      Kokkos::deep_copy(x, 0.0);
      kband::CGOptions opt;
      opt.tol = 1e-12;
      opt.reductions = red;
      const auto res = kband::cg(Exec(), A, kband_test_cg::to_device(bh), x, opt, CGPreconditioner::Zebra);
      ASSERT_EQ(res.status, CGStatus::Converged) << res.message() << " nx=" << nx << form_name(red);
      EXPECT_EQ(res.reductions, red);
      EXPECT_GT(res.iterations, 0);
      const auto xh = kband_test_cg::to_host(x);
      long double rr = 0, bb = 0;
      for (int i = 0; i < n; ++i) {
        const int ix = i % nx, iy = i / nx;
        long double ax = 4.0L * xh[i];
        if (ix > 0) ax -= xh[i - 1];
        if (ix + 1 < nx) ax -= xh[i + 1];
        if (iy > 0) ax -= xh[i - nx];
        if (iy + 1 < ny) ax -= xh[i + nx];
        rr += (bh[i] - ax) * (bh[i] - ax);
        bb += static_cast<long double>(bh[i]) * bh[i];
      }
      EXPECT_LT(static_cast<double>(std::sqrt(rr / bb)), 1e-10) << "nx=" << nx << form_name(red);
      ++stats().solves;
    }
  }
}

TEST(CGZebra, CheckIntervalDoesNotChangeTheAnswer) {
  for (CGReductions red : kForms) kband_test_cg::expect_check_interval_invariance(CGPreconditioner::Zebra, 6, red);
}

/// An exactly symmetric A is read through its mirrored entries; a copy
/// with an unpaired (zero) diagonal is read as stored. Same iterations, the
/// same x to rounding.
TEST(CGZebra, SymmetricReadsMatchTheGeneralOnes) {
  Rng rng(9);
  for (auto g : std::vector<std::pair<int, int>>{{12, 9}, {7, 6}}) {
    const int nx = g.first, n = nx * g.second;
    const DenseHost ref = nx == 12 ? DenseHost::poisson_2d(nx, g.second) : variable_poisson(nx, g.second, 0.1, rng);
    const auto A = kband::cds_from_dense(Exec(), ref.to_device<double>());
    const auto E = kband_test_cg::with_zero_diagonal(A, 2 * nx);
    using Zebra = kband::impl::ZebraSolver<Exec, double, Exec::memory_space>;
    Zebra sa(Exec(), A), se(Exec(), E);
    EXPECT_TRUE(sa.symmetric());
    EXPECT_FALSE(se.symmetric());
    auto b = kband_test_cg::to_device(random_vector<double>(n, rng));
    Kokkos::View<double*> xa("xa", n), xe("xe", n);
    kband::CGOptions opt;
    opt.tol = 1e-12;
    const auto ra = sa.solve(Exec(), b, xa, opt), re = se.solve(Exec(), b, xe, opt);
    EXPECT_EQ(ra.status, CGStatus::Converged);
    EXPECT_EQ(ra.iterations, re.iterations);
    const auto ha = kband_test_cg::to_host(xa), he = kband_test_cg::to_host(xe);
    const std::vector<real_ref> hel(he.begin(), he.end());
    EXPECT_LT(relative_error_inf(n, ha.data(), hel.data()), 1e-12) << nx;
    const auto xref = ref.solve(kband_test_cg::to_host(b));
    EXPECT_LT(relative_error_inf(n, ha.data(), xref.data()), 1e-10) << nx;
  }
}

TEST(CGZebra, NonFiniteAndSingularLines) {
  for (CGReductions red : kForms) {
    const int nx = 4, ny = 4, n = nx * ny;
    kband::CGOptions opt;
    opt.reductions = red;
    auto A = kband::make_poisson_2d<double>(Exec(), nx, ny);
    Kokkos::View<double*> b("b", n), x("x", n);
    Kokkos::deep_copy(b, 1.0);
    Kokkos::deep_copy(Kokkos::subview(b, 2), nan_value<double>());  // a red row
    Kokkos::deep_copy(x, 0.25);
    auto res = kband::cg(Exec(), A, b, x, opt, CGPreconditioner::Zebra);
    EXPECT_EQ(res.status, CGStatus::NonFinite) << res.message();
    EXPECT_EQ(res.iterations, 0);
    for (double v : kband_test_cg::to_host(x)) EXPECT_EQ(v, 0.25);
    // a zero pivot in a red line's factor (rows 0-1: [[1, 1], [1, 1]])
    DenseHost ref = DenseHost::poisson_2d(nx, ny);
    ref(0, 0) = ref(0, 1) = ref(1, 0) = ref(1, 1) = 1;
    auto S = kband::cds_from_dense(Exec(), ref.to_device<double>());
    Kokkos::deep_copy(b, 1.0);
    res = kband::cg(Exec(), S, b, x, opt, CGPreconditioner::Zebra);
    EXPECT_EQ(res.status, CGStatus::NonFinite) << res.message();
    EXPECT_EQ(res.iterations, 0);
    for (double v : kband_test_cg::to_host(x)) EXPECT_EQ(v, 0.25);
    // b = 0 from x0 = 0: converged at once, x = 0
    Kokkos::deep_copy(b, 0.0);
    Kokkos::deep_copy(x, 0.0);
    res = kband::cg(Exec(), A, b, x, opt, CGPreconditioner::Zebra);
    EXPECT_EQ(res.status, CGStatus::Converged);
    EXPECT_EQ(res.iterations, 0);
    for (double v : kband_test_cg::to_host(x)) EXPECT_EQ(v, 0.0);
  }
}

TEST(CGZebra, MatricesWithoutTheStructureAreRejected) {
  auto expect_error = [](const kband::CDSMatrix<double>& A, const char* what, const char* says) {
    Kokkos::View<double*> b("b", A.n()), x("x", A.n());
    try {
      kband::cg(Exec(), A, b, x, {}, CGPreconditioner::Zebra);
      ADD_FAILURE() << what << ": no error";
    } catch (const kband::Error& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << what << ": " << e.what();
    }
  };
  // one line
  expect_error(kband::make_laplacian_1d<double>(Exec(), 20), "laplacian", "at least two lines");
  expect_error(kband::make_poisson_2d<double>(Exec(), 1, 6), "poisson 1x6", "at least two lines");
  // lines of 3 and 4 rows
  DenseHost uneven(7);
  for (int i = 0; i < 7; ++i) {
    uneven(i, i) = 4;
    if (i + 1 < 7 && i != 2) uneven(i, i + 1) = uneven(i + 1, i) = -1;
  }
  expect_error(kband::cds_from_dense(Exec(), uneven.to_device<double>()), "uneven lines", "one length");
  // a coupling two lines away (offsets +-2 nx)
  DenseHost far = DenseHost::poisson_2d(4, 6);
  far(1, 9) = far(9, 1) = -0.5;
  expect_error(kband::cds_from_dense(Exec(), far.to_device<double>()), "far coupling", "adjacent lines");
  // a coupling inside a line beyond the tridiagonal part (offset 2 within line 0)
  DenseHost penta = DenseHost::poisson_2d(5, 4);
  penta(0, 2) = penta(2, 0) = -0.25;
  expect_error(kband::cds_from_dense(Exec(), penta.to_device<double>()), "in-line offset 2", "adjacent lines");
  // dense matrices
  kband::DenseMatrix<double> D("D", 8, 8);
  Kokkos::View<double*> b("b", 8), x("x", 8);
  EXPECT_THROW(kband::cg(Exec(), D, b, x, {}, CGPreconditioner::Zebra), kband::Error);
  EXPECT_STREQ(kband::cg_preconditioner_name(CGPreconditioner::Zebra), "zebra");
}

}  // namespace
