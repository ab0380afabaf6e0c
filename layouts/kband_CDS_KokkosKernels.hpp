// CDS <-> Kokkos Kernels CRS (KokkosSparse::CrsMatrix). Optional: include this
// header only when Kokkos Kernels is available (CMake: KBAND_HAVE_KOKKOSKERNELS,
// link Kokkos::kokkoskernels). Works with Trilinos' Kokkos Kernels 3.4 and 4.x.
//
//   auto crs = kband::cds_to_crs(exec, A);          // KokkosSparse::CrsMatrix<T, int, Device<Exec, Mem>, void, int>
//   auto A2  = kband::cds_from_crs(exec, crs, tol); // seed's tolerance rule, as cds_from_dense
//
// cds_to_crs writes the stored entries that are inside the matrix and
// non-zero (padding and explicit zeros of the stored diagonals are not
// entries), columns increasing within each row. Both fence: the CRS size and
// the CDS diagonal pattern are needed on the host.
#pragma once

#include "kband_CDS.hpp"

#include <KokkosSparse_CrsMatrix.hpp>

namespace kband {

template <class T, class Exec, class Mem = typename Exec::memory_space>
using CrsMatrixOf = KokkosSparse::CrsMatrix<T, int, Kokkos::Device<Exec, Mem>, void, int>;

namespace impl {

template <class Row, class RowMap>
struct CDSRowCounts {
  Row row;
  RowMap rowmap;  // (n + 1): count of row i into rowmap(i + 1)
  KOKKOS_INLINE_FUNCTION void operator()(const int i) const {
    int c = 0;
    for (int d = 0; d < row.nd(); ++d) {
      const int j = i + row.offset(d);
      if (j >= 0 && j < row.n && row.data(i, d) != 0) ++c;
    }
    rowmap(i + 1) = c;
    if (i == 0) rowmap(0) = 0;
  }
};

template <class RowMap>
struct InclusiveScan {
  RowMap v;  // scans v(1..n) in place
  KOKKOS_INLINE_FUNCTION void operator()(const int i, int& update, const bool final) const {
    update += v(i + 1);
    if (final) v(i + 1) = update;
  }
};

template <class Row, class RowMap, class Cols, class Vals>
struct CDSToCrsFill {
  Row row;
  RowMap rowmap;
  Cols cols;
  Vals vals;
  KOKKOS_INLINE_FUNCTION void operator()(const int i) const {
    int k = rowmap(i);
    for (int d = 0; d < row.nd(); ++d) {  // offsets increase: columns come out sorted
      const int j = i + row.offset(d);
      if (j >= 0 && j < row.n && row.data(i, d) != 0) {
        cols(k) = j;
        vals(k) = row.data(i, d);
        ++k;
      }
    }
  }
};

template <class Crs, class Flags>
struct CrsMarkDiagonals {
  Crs A;
  Flags flags;
  double tol;
  int n;
  KOKKOS_INLINE_FUNCTION void operator()(const int i) const {
    for (auto k = A.graph.row_map(i); k < A.graph.row_map(i + 1); ++k)
      if (abs_(static_cast<double>(A.values(k))) > tol) flags(A.graph.entries(k) - i + n - 1) = 1;
  }
};

template <class Crs, class Data, class Index>
struct CrsToCDSFill {
  Crs A;
  Data data;
  Index diag_of;  // (2n - 1): column of each offset in data, or -1
  int n;
  KOKKOS_INLINE_FUNCTION void operator()(const int i) const {
    for (int d = 0; d < static_cast<int>(data.extent(1)); ++d) data(i, d) = 0;
    for (auto k = A.graph.row_map(i); k < A.graph.row_map(i + 1); ++k) {
      const int d = diag_of(A.graph.entries(k) - i + n - 1);
      if (d >= 0) data(i, d) += A.values(k);
    }
  }
};

}  // namespace impl

/// CDS -> CRS (see the file comment). Fences (reads the entry count).
template <class Exec, class T, class Mem>
CrsMatrixOf<T, Exec, Mem> cds_to_crs(const Exec& exec, const CDSMatrix<T, Mem>& A) {
  impl::ProfilingRegion region("kband::cds_to_crs");
  impl::check_matrix("kband::cds_to_crs", A);
  using Crs = CrsMatrixOf<T, Exec, Mem>;
  const int n = A.n();
  const auto row = impl::cds_row_view(A);
  Kokkos::View<int*, Mem> rowmap(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("kband::crs_rowmap")), n + 1);
  Kokkos::parallel_for("kband::cds_to_crs::count", impl::Range<Exec>(exec, 0, n),
                       impl::CDSRowCounts<decltype(row), decltype(rowmap)>{row, rowmap});
  Kokkos::parallel_scan("kband::cds_to_crs::scan", impl::Range<Exec>(exec, 0, n),
                        impl::InclusiveScan<decltype(rowmap)>{rowmap});
  int nnz = 0;
  exec.fence();
  Kokkos::deep_copy(nnz, Kokkos::subview(rowmap, n));
  Kokkos::View<int*, Mem> cols(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("kband::crs_cols")), nnz);
  Kokkos::View<T*, Mem> vals(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("kband::crs_vals")), nnz);
  Kokkos::parallel_for("kband::cds_to_crs::fill", impl::Range<Exec>(exec, 0, n),
                       impl::CDSToCrsFill<decltype(row), decltype(rowmap), decltype(cols), decltype(vals)>{row, rowmap,
                                                                                                           cols, vals});
  exec.fence();
  return Crs("kband::crs", n, n, nnz, vals, rowmap, cols);
}

/// CRS -> CDS: a diagonal is stored when one of its entries has |a| > tol
/// (default 1e-10, the seed's rule); entries of dropped diagonals are
/// discarded, duplicates are summed. The matrix must be square. Fences.
template <class Exec, class Crs>
CDSMatrix<typename Crs::non_const_value_type, typename Exec::memory_space> cds_from_crs(const Exec& exec, const Crs& A,
                                                                                       double tol = 1e-10) {
  impl::ProfilingRegion region("kband::cds_from_crs");
  using T = typename Crs::non_const_value_type;
  using Mem = typename Exec::memory_space;
  const int n = static_cast<int>(A.numRows());
  impl::require(n >= 1 && static_cast<int>(A.numCols()) == n,
                impl::concat("kband::cds_from_crs: the CRS matrix must be square and non-empty, got (", A.numRows(), ", ",
                             A.numCols(), ")"));
  impl::require(tol >= 0, impl::concat("kband::cds_from_crs: tol=", tol, " must be non-negative"));
  Kokkos::View<int*, Mem> flags("kband::cds_flags", 2 * n - 1);
  Kokkos::parallel_for("kband::cds_from_crs::mark", impl::Range<Exec>(exec, 0, n),
                       impl::CrsMarkDiagonals<Crs, decltype(flags)>{A, flags, tol, n});
  auto hf = Kokkos::create_mirror_view(flags);
  exec.fence();
  Kokkos::deep_copy(hf, flags);
  std::vector<int> off;
  for (int k = 0; k < 2 * n - 1; ++k) {
    const int d = hf(k) ? static_cast<int>(off.size()) : -1;
    if (hf(k)) off.push_back(k - (n - 1));
    hf(k) = d;
  }
  if (off.empty()) {
    off.push_back(0);
    hf(n - 1) = 0;
  }
  Kokkos::deep_copy(flags, hf);
  CDSMatrix<T, Mem> C("kband::cds_from_crs", n, off);
  Kokkos::parallel_for("kband::cds_from_crs::fill", impl::Range<Exec>(exec, 0, n),
                       impl::CrsToCDSFill<Crs, typename CDSMatrix<T, Mem>::data_view, decltype(flags)>{A, C.data(), flags, n});
  return C;
}

}  // namespace kband
