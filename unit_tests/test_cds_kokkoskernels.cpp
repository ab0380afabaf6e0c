// CDS <-> Kokkos Kernels CRS (layouts/kband_CDS_KokkosKernels.hpp); built
// only when Kokkos Kernels is found.
#include <kband_CDS_KokkosKernels.hpp>

#include <KokkosSparse_spmv.hpp>

#include "test_cg_common.hpp"

namespace {

using namespace kband_test;
using kband_test_cg::DenseHost;

TEST(CDSCrs, RoundTripAndSpmv) {
  for (auto g : std::vector<std::pair<int, int>>{{1, 2}, {3, 3}, {4, 5}, {7, 2}}) {
    const int nx = g.first, ny = g.second, n = nx * ny;
    auto A = kband::make_poisson_2d<double>(Exec(), nx, ny);
    auto crs = kband::cds_to_crs(Exec(), A);
    const DenseHost ref = DenseHost::poisson_2d(nx, ny);
    int want_nnz = 0;
    for (auto v : ref.a) want_nnz += v != 0;
    ASSERT_EQ(static_cast<int>(crs.nnz()), want_nnz) << nx << "x" << ny;
    auto rm = Kokkos::create_mirror_view(crs.graph.row_map);
    auto cols = Kokkos::create_mirror_view(crs.graph.entries);
    auto vals = Kokkos::create_mirror_view(crs.values);
    Kokkos::deep_copy(rm, crs.graph.row_map);
    Kokkos::deep_copy(cols, crs.graph.entries);
    Kokkos::deep_copy(vals, crs.values);
    for (int i = 0; i < n; ++i) {
      int prev = -1;
      for (int k = rm(i); k < rm(i + 1); ++k) {
        EXPECT_GT(cols(k), prev);
        prev = cols(k);
        EXPECT_EQ(vals(k), static_cast<double>(ref(i, cols(k))));
      }
    }
    auto back = kband::cds_from_crs(Exec(), crs);
    EXPECT_EQ(back.host_offsets(), A.host_offsets());
    auto h1 = Kokkos::create_mirror_view(A.data());
    auto h2 = Kokkos::create_mirror_view(back.data());
    Kokkos::deep_copy(h1, A.data());
    Kokkos::deep_copy(h2, back.data());
    for (int i = 0; i < n; ++i)
      for (int d = 0; d < A.ndiag(); ++d) EXPECT_EQ(h1(i, d), h2(i, d));
    // KokkosSparse::spmv on the CRS copy gives kband::spmv's result
    Rng rng(mix_seed({81, static_cast<std::uint64_t>(n)}));
    std::vector<double> xv(n);
    for (auto& v : xv) v = rng.uniform(-1, 1);
    auto x = kband_test_cg::to_device(xv);
    Kokkos::View<double*> y1("y1", n), y2("y2", n);
    Kokkos::deep_copy(y1, nan_value<double>());
    Kokkos::deep_copy(y2, 0.0);
    kband::spmv(Exec(), A, x, y1);
    KokkosSparse::spmv("N", 1.0, crs, x, 0.0, y2);
    Kokkos::fence();
    const auto a = kband_test_cg::to_host(y1), b = kband_test_cg::to_host(y2);
    for (int i = 0; i < n; ++i) EXPECT_NEAR(a[i], b[i], 1e-14);  // 5 terms of |.| <= 4: observed 0
  }
  // a non-square CRS is refused
  kband::CrsMatrixOf<double, Exec> rect("r", 3, 4, 0, Kokkos::View<double*>("v", 0), Kokkos::View<int*>("rm", 4),
                                        Kokkos::View<int*>("c", 0));
  EXPECT_THROW(kband::cds_from_crs(Exec(), rect), kband::Error);
}

}  // namespace
