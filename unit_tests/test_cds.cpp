// CDS format (issue 8): builders, dense <-> CDS conversion with the seed's
// tolerance rule, memory use (seed Table 2), SpMV for CDS and dense matrices.
#include "test_cg_common.hpp"

namespace {

using namespace kband_test;
using kband_test_cg::DenseHost;

/// Every entry of the matrix and every padding slot (must be 0) against `ref`.
template <class T>
void expect_cds_equals(const kband::CDSMatrix<T>& A, const DenseHost& ref, const char* what) {
  const int n = A.n();
  auto h = Kokkos::create_mirror_view(A.data());
  Kokkos::deep_copy(h, A.data());
  std::vector<int> covered(static_cast<size_t>(n) * n, 0);
  for (int d = 0; d < A.ndiag(); ++d) {
    const int off = A.host_offsets()[d];
    for (int i = 0; i < n; ++i) {
      const int j = i + off;
      if (j < 0 || j >= n) {
        EXPECT_EQ(h(i, d), T(0)) << what << ": padding (" << i << ", offset " << off << ") not zero";
      } else {
        EXPECT_EQ(h(i, d), static_cast<T>(ref(i, j))) << what << ": entry (" << i << ", " << j << ")";
        covered[static_cast<size_t>(i) * n + j] = 1;
      }
    }
  }
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      if (!covered[static_cast<size_t>(i) * n + j])
        EXPECT_EQ(ref(i, j), 0.0L) << what << ": (" << i << ", " << j << ") outside the stored diagonals";
}

TEST(CDSBuild, Laplacian1DMatchesDefinition) {
  for (int n : {2, 3, 7, 16}) {
    auto A = kband::make_laplacian_1d<double>(Exec(), n);
    Kokkos::fence();
    EXPECT_EQ(A.host_offsets(), (std::vector<int>{-1, 0, 1}));
    expect_cds_equals(A, DenseHost::laplacian_1d(n), "laplacian_1d");
  }
}

TEST(CDSBuild, Poisson2DMatchesDefinition) {
  for (auto g : std::vector<std::pair<int, int>>{{1, 2}, {2, 1}, {3, 3}, {4, 5}, {5, 4}}) {
    auto A = kband::make_poisson_2d<float>(Exec(), g.first, g.second);
    Kokkos::fence();
    expect_cds_equals(A, DenseHost::poisson_2d(g.first, g.second), "poisson_2d");
  }
  auto A = kband::make_poisson_2d<double>(Exec(), 4, 4);
  EXPECT_EQ(A.host_offsets(), (std::vector<int>{-4, -1, 0, 1, 4}));
}

TEST(CDSBuild, RandomSPDIsSymmetricGram) {
  const int n = 9;
  auto A = kband::make_random_spd<double>(Exec(), n, 42);
  auto h = Kokkos::create_mirror_view(A);
  Kokkos::deep_copy(h, A);
  // regenerate C exactly as documented: std::mt19937_64(seed), column by column
  std::mt19937_64 g(42);
  std::vector<double> c(n * n);
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < n; ++k) c[k + n * i] = static_cast<double>(g() >> 11) * (1.0 / 9007199254740992.0);
  double worst = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      long double s = i == j ? 1e-3L : 0.0L;
      for (int k = 0; k < n; ++k) s += static_cast<long double>(c[k + n * i]) * c[k + n * j];
      worst = std::max(worst, static_cast<double>(std::fabs(h(i, j) - s)));
      EXPECT_EQ(h(i, j), h(j, i));
    }
  EXPECT_LT(worst, 1e-13);  // sums of 9 products in [0, 1): observed ~4e-16
}

TEST(CDSConvert, DenseRoundTripAndToleranceRule) {
  const int n = 7;
  DenseHost ref(n);
  ref(0, 0) = 1;
  ref(3, 5) = 2e-9;   // offset +2: one entry above 1e-10 -> stored, with its tiny neighbour
  ref(4, 6) = 1e-12;
  ref(5, 1) = 5e-11;  // offset -4: only entries <= 1e-10 -> dropped
  ref(6, 2) = -1e-10;
  ref(2, 2) = -3;
  ref(6, 0) = 4;  // offset -6: the corner
  auto dense = ref.to_device<double>();
  auto A = kband::cds_from_dense(Exec(), dense);
  Kokkos::fence();
  EXPECT_EQ(A.host_offsets(), (std::vector<int>{-6, 0, 2}));
  DenseHost kept = ref;
  kept(5, 1) = 0;
  kept(6, 2) = 0;
  expect_cds_equals(A, kept, "cds_from_dense");
  // a larger tolerance drops offset +2 as well
  auto B = kband::cds_from_dense(Exec(), dense, 1e-8);
  EXPECT_EQ(B.host_offsets(), (std::vector<int>{-6, 0}));
  // back to dense: every entry written (poisoned first)
  kband::DenseMatrix<double> back("back", n, n);
  Kokkos::deep_copy(back, nan_value<double>());
  kband::cds_to_dense(Exec(), A, back);
  auto hb = Kokkos::create_mirror_view(back);
  Kokkos::deep_copy(hb, back);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) EXPECT_EQ(hb(i, j), static_cast<double>(kept(i, j))) << i << "," << j;
  // the zero matrix keeps a (zero) main diagonal
  auto Z = kband::cds_from_dense(Exec(), DenseHost(3).to_device<double>());
  EXPECT_EQ(Z.host_offsets(), (std::vector<int>{0}));
}

TEST(CDSMemory, SeedTable2) {
  // seed 003 Table 2, 2500 x 2500 doubles: naive 50 MB, 1D Laplace 0.06 MB, 2D Poisson 0.1 MB
  EXPECT_EQ(kband::dense_memory_bytes<double>(2500), 50000000u);
  auto L = kband::make_laplacian_1d<double>(Exec(), 2500);
  auto P = kband::make_poisson_2d<double>(Exec(), 50, 50);
  EXPECT_EQ(L.memory_bytes(), 2500u * 3 * 8 + 3 * 4);
  EXPECT_EQ(P.memory_bytes(), 2500u * 5 * 8 + 5 * 4);
  EXPECT_EQ((kband::crs_memory_bytes<double>(2500, 7498)), 7498u * 12 + 2501 * 4);
}

TEST(CDSErrors, BadArguments) {
  using M = kband::CDSMatrix<double>;
  EXPECT_THROW(M("a", 0, {0}), kband::Error);
  EXPECT_THROW(M("a", 4, {}), kband::Error);
  EXPECT_THROW(M("a", 4, {1, 0}), kband::Error);
  EXPECT_THROW(M("a", 4, {-4, 0}), kband::Error);
  EXPECT_THROW(kband::make_laplacian_1d<double>(Exec(), 1), kband::Error);
  EXPECT_THROW(kband::make_poisson_2d<double>(Exec(), 1, 1), kband::Error);
  auto A = kband::make_laplacian_1d<double>(Exec(), 5);
  Kokkos::View<double*> x("x", 5), y4("y", 4);
  EXPECT_THROW(kband::spmv(Exec(), A, x, y4), kband::Error);
  EXPECT_THROW(kband::spmv(Exec(), A, x, x), kband::Error);
  kband::DenseMatrix<double> d6("d", 6, 6), d45("d", 4, 5);
  EXPECT_THROW(kband::cds_to_dense(Exec(), A, d6), kband::Error);
  EXPECT_THROW(kband::cds_from_dense(Exec(), d45), kband::Error);
  EXPECT_THROW(kband::spmv(Exec(), d6, x, x), kband::Error);
  try {
    kband::spmv(Exec(), A, x, y4);
  } catch (const kband::Error& e) {
    EXPECT_NE(std::string(e.what()).find("'y'"), std::string::npos) << e.what();
  }
}

/// Random CDS matrices (random offsets, up to 2n-1 diagonals: the > 16 case
/// takes the offsets-from-View kernel) and dense matrices vs a long double product.
template <class T>
void spmv_sweep() {
  Rng rng(mix_seed({8, sizeof(T)}));
  double worst = 0;
  for (int n : {1, 2, 3, 5, 12, 33}) {
    for (int trial = 0; trial < 3; ++trial) {
      std::vector<int> off;
      for (int o = -(n - 1); o <= n - 1; ++o)
        if (o == 0 || rng.uniform(0, 1) < (trial == 2 ? 0.9 : 0.3)) off.push_back(o);
      DenseHost ref(n);
      for (int o : off)
        for (int i = std::max(0, -o); i < std::min(n, n - o); ++i) ref(i, i + o) = static_cast<T>(rng.uniform(-1, 1));
      auto A = kband::cds_from_dense(Exec(), ref.to_device<T>(), 0.0);
      std::vector<T> xv(n);
      for (auto& v : xv) v = static_cast<T>(rng.uniform(-1, 1));
      auto x = kband_test_cg::to_device(xv);
      Kokkos::View<T*> y("y", n);
      Kokkos::deep_copy(y, nan_value<T>());
      kband::spmv(Exec(), A, x, y);
      Kokkos::View<T*> yd("yd", n);
      Kokkos::deep_copy(yd, nan_value<T>());
      kband::spmv(Exec(), ref.to_device<T>(), x, yd);
      Kokkos::fence();
      const auto want = ref.multiply(xv);
      const auto got = kband_test_cg::to_host(y), gotd = kband_test_cg::to_host(yd);
      for (int i = 0; i < n; ++i) {
        const double e = static_cast<double>(std::fabs(got[i] - want[i])), ed = static_cast<double>(std::fabs(gotd[i] - want[i]));
        worst = std::max({worst, e, ed});
        ASSERT_TRUE(std::isfinite(got[i]) && std::isfinite(gotd[i])) << "n=" << n << " row " << i;
      }
    }
  }
  // |y_i| sums at most 2n-1 = 65 products of [-1, 1] values: observed max
  // 1.2e-15 (double), 6.0e-7 (float); bound 65 * 8 eps.
  EXPECT_LT(worst, 65 * 8 * std::numeric_limits<T>::epsilon());
  record_error(std::string(type_name(T())) + " random spmv (abs)", worst);
}

TEST(CDSSpmv, RandomDouble) { spmv_sweep<double>(); }
TEST(CDSSpmv, RandomFloat) { spmv_sweep<float>(); }

}  // namespace
