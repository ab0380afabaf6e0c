// Distributed CG (mpi/kband_MPI_CG.hpp) on 1..4 ranks: the same iterations
// and solution as the single-rank kband::cg on the same global problem.
// Every rank solves the global problem on its own too and compares its block.
#include <kband_MPI_CG.hpp>

#include "test_cg_common.hpp"

namespace {

using namespace kband_test;
using kband::CGPreconditioner;

MPI_Comm world() { return MPI_COMM_WORLD; }

/// Solves A x = b globally on one rank and distributed, compares.
void compare(const kband::CDSMatrix<double>& A, CGPreconditioner prec, std::uint64_t seed, const char* what) {
  const int n = A.n();
  Rng rng(seed);  // the same b on every rank
  std::vector<double> bv(n);
  for (auto& v : bv) v = rng.uniform(-1, 1);
  auto b = kband_test_cg::to_device(bv);
  Kokkos::View<double*> x("x", n);
  kband::CGOptions opt;
  opt.tol = 1e-10;
  opt.check_every = 5;
  auto one = kband::make_cg_solver(Exec(), A, prec);
  const auto ref = one.solve(Exec(), b, x, opt);
  const auto xs = kband_test_cg::to_host(x);

  auto D = kband::mpi::distribute(Exec(), world(), A);
  Kokkos::View<double*> bl("bl", D.rows), xl("xl", D.rows);
  Kokkos::deep_copy(bl, Kokkos::subview(b, Kokkos::make_pair(D.first, D.first + D.rows)));
  Kokkos::deep_copy(xl, 0.0);
  kband::mpi::DistCGSolver<Exec, double> dist(Exec(), D, prec);
  EXPECT_EQ(dist.upper_only(), one.upper_only()) << what;
  const auto res = dist.solve(Exec(), bl, xl, opt);
  const auto xd = kband_test_cg::to_host(xl);
  double err = 0, scale = 0;
  for (int i = 0; i < D.rows; ++i) {
    err = std::max(err, std::fabs(xd[i] - xs[D.first + i]));
    scale = std::max(scale, std::fabs(xs[D.first + i]));
  }
  double gerr = 0, gscale = 0;
  MPI_Allreduce(&err, &gerr, 1, MPI_DOUBLE, MPI_MAX, world());
  MPI_Allreduce(&scale, &gscale, 1, MPI_DOUBLE, MPI_MAX, world());
  EXPECT_EQ(ref.status, kband::CGStatus::Converged) << what;
  EXPECT_EQ(res.status, ref.status) << what << ": " << res.message();
  EXPECT_EQ(res.iterations, ref.iterations) << what;
  // only the order of the sums differs: observed max 3.1e-14 relative
  EXPECT_LT(gerr / gscale, 1e-11) << what << " (" << gerr / gscale << ")";
  EXPECT_NEAR(res.relative_residual, ref.relative_residual, 1e-3 * ref.relative_residual + 1e-14) << what;
}

TEST(CGMPI, Laplacian1DSameAsOneRank) {
  for (int n : {37, 64})
    for (auto p : {CGPreconditioner::None, CGPreconditioner::Jacobi})
      compare(kband::make_laplacian_1d<double>(Exec(), n), p, 100 + n, "laplacian_1d");
}

TEST(CGMPI, Poisson2DSameAsOneRank) {
  for (auto g : std::vector<std::pair<int, int>>{{8, 6}, {5, 9}, {16, 16}})
    for (auto p : {CGPreconditioner::None, CGPreconditioner::Jacobi})
      compare(kband::make_poisson_2d<double>(Exec(), g.first, g.second), p, 200 + g.first, "poisson_2d");
}

/// Symmetric matrices are multiplied from their upper half (the rows near a
/// block's start take the previous block's upper diagonals, kept by
/// distribute()); a matrix whose offsets do not pair up is read whole.
TEST(CGMPI, UpperHalfAndWholeMatrix) {
  const auto P = kband::make_poisson_2d<double>(Exec(), 7, 9);
  auto D = kband::mpi::distribute(Exec(), world(), P);
  EXPECT_TRUE(D.symmetric);
  EXPECT_EQ(D.up.nu, 2);
  const auto E = kband_test_cg::with_zero_diagonal(P, 3);
  EXPECT_FALSE(kband::mpi::distribute(Exec(), world(), E).symmetric);
  for (auto p : {CGPreconditioner::None, CGPreconditioner::Jacobi}) {
    compare(P, p, 300, "poisson_2d 7 x 9");
    compare(E, p, 301, "poisson_2d 7 x 9, unpaired offset 3");
  }
}

TEST(CGMPI, SeedIterationCounts) {
  // b = ones: n / 2 iterations for the 1D Laplacian on any number of ranks
  auto D = kband::mpi::distribute(Exec(), world(), kband::make_laplacian_1d<double>(Exec(), 256));
  Kokkos::View<double*> b("b", D.rows), x("x", D.rows);
  Kokkos::deep_copy(b, 1.0);
  EXPECT_EQ(kband::mpi::cg(Exec(), D, b, x).iterations, 128);
}

TEST(CGMPI, CollectiveErrors) {
  int size = 1;
  MPI_Comm_size(world(), &size);
  // every block needs at least the half bandwidth rows: a corner coupling
  // (offsets +-(n-1)) over 2 rows per rank is refused on every rank
  if (size > 1) {
    const int n = 2 * size;
    kband::CDSMatrix<double> C("corner", n, {-(n - 1), 0, n - 1});
    EXPECT_THROW(kband::mpi::distribute(Exec(), world(), C), kband::Error);
  }
  auto D = kband::mpi::distribute(Exec(), world(), kband::make_laplacian_1d<double>(Exec(), 40));
  Kokkos::View<double*> b("b", D.rows), x("x", D.rows + 1);
  EXPECT_THROW(kband::mpi::cg(Exec(), D, b, x), kband::Error);
  Kokkos::View<double*> x2("x2", D.rows);
  EXPECT_THROW(kband::mpi::cg(Exec(), D, b, x2, {}, CGPreconditioner::Line), kband::Error);
  EXPECT_THROW(kband::mpi::cg(Exec(), D, b, x2, {}, CGPreconditioner::Zebra), kband::Error);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  Kokkos::initialize(argc, argv);
  int rc = 0;
  {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank != 0) {  // one rank reports
      auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
      delete listeners.Release(listeners.default_result_printer());
    }
    rc = RUN_ALL_TESTS();
    int grc = 0;
    MPI_Allreduce(&rc, &grc, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    rc = grc;
  }
  Kokkos::finalize();
  MPI_Finalize();
  return rc;
}
