// Compressed Diagonal Storage (CDS) and dense matrices for kband's CG.
//
//   kband::CDSMatrix<T, Mem> A(label, n, {offsets...});   zero-initialised
//   kband::make_laplacian_1d<T>(exec, n)                    offsets {-1, 0, 1}: (-1, 2, -1)
//   kband::make_poisson_2d<T>(exec, nx, ny)                 offsets {-nx, -1, 0, 1, nx}: 5-point, 4 on the diagonal
//   kband::make_random_spd<T>(exec, n, seed)                dense C^T C + 1e-3 I, C uniform in [0, 1)
//   kband::cds_from_dense(exec, dense, tol) / kband::cds_to_dense(exec, A, dense)
//   kband::spmv(exec, A, x, y)                              y = A x, CDS or dense
//
// Format (seed 003, section 3.1): `offsets(d)` are the stored diagonals in
// increasing order (0 = main, -1 = first lower, +1 = first upper) and `data`
// is row-indexed, data(i, d) = A(i, i + offsets(d)), extents (n, ndiag),
// LayoutLeft: each diagonal is one contiguous column of n entries. Entries
// outside the matrix (i + offsets(d) < 0 or >= n) are padding and hold 0; the
// builders and conversions write those zeros and spmv never reads them.
// Dense matrices are row-major `Kokkos::View<T**, LayoutRight, Mem>` (n, n).
#pragma once

#include "kband_Core.hpp"

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace kband {

/// Row-major dense matrix of extents (n, n).
template <class T, class Mem = Kokkos::DefaultExecutionSpace::memory_space>
using DenseMatrix = Kokkos::View<T**, Kokkos::LayoutRight, Mem>;

/// Square matrix in Compressed Diagonal Storage (see the file comment). The
/// offsets are also kept on the host (the solvers choose kernels and halo
/// widths from them without a device read). Copies share the storage.
template <class T, class Mem = Kokkos::DefaultExecutionSpace::memory_space>
class CDSMatrix {
 public:
  using value_type = T;
  using memory_space = Mem;
  using data_view = Kokkos::View<T**, Kokkos::LayoutLeft, Mem>;
  using offsets_view = Kokkos::View<int*, Mem>;

  CDSMatrix() = default;

  /// n rows, the given diagonals (strictly increasing, each in (-n, n)); data zero.
  CDSMatrix(const std::string& label, int n, const std::vector<int>& offsets) : n_(n), host_offsets_(offsets) {
    impl::require(n >= 1, impl::concat("CDSMatrix '", label, "': n=", n, ", the minimum is 1"));
    impl::require(!offsets.empty(), impl::concat("CDSMatrix '", label, "': no diagonals"));
    for (size_t d = 0; d < offsets.size(); ++d) {
      impl::require(offsets[d] > -n && offsets[d] < n,
                    impl::concat("CDSMatrix '", label, "': offset ", offsets[d], " outside (-n, n) for n=", n));
      impl::require(d == 0 || offsets[d] > offsets[d - 1],
                    impl::concat("CDSMatrix '", label, "': offsets must be strictly increasing"));
    }
    data_ = data_view(label + "::data", n, offsets.size());
    offsets_ = offsets_view(label + "::offsets", offsets.size());
    auto h = Kokkos::create_mirror_view(offsets_);
    for (size_t d = 0; d < offsets.size(); ++d) h(d) = offsets[d];
    Kokkos::deep_copy(offsets_, h);
  }

  int n() const { return n_; }
  int ndiag() const { return static_cast<int>(host_offsets_.size()); }
  const data_view& data() const { return data_; }
  const offsets_view& offsets() const { return offsets_; }
  const std::vector<int>& host_offsets() const { return host_offsets_; }
  /// Column d of the stored diagonal with this offset, or -1.
  int diagonal_index(int offset) const {
    for (int d = 0; d < ndiag(); ++d)
      if (host_offsets_[d] == offset) return d;
    return -1;
  }
  /// Largest |offset|: the half bandwidth (halo width of a row-block distribution).
  int half_bandwidth() const {
    int w = 0;
    for (int o : host_offsets_) w = std::max(w, o < 0 ? -o : o);
    return w;
  }
  /// Bytes of the format: n*ndiag values plus the offsets (seed Table 2).
  size_t memory_bytes() const { return static_cast<size_t>(n_) * ndiag() * sizeof(T) + ndiag() * sizeof(int); }

 private:
  int n_ = 0;
  std::vector<int> host_offsets_;
  data_view data_;
  offsets_view offsets_;
};

/// Bytes a dense n x n matrix of T takes (the "naive storage" of seed Table 2).
template <class T>
size_t dense_memory_bytes(int n) {
  return static_cast<size_t>(n) * n * sizeof(T);
}
/// Bytes of a CRS matrix with nnz entries: values, column indices, n+1 row offsets.
template <class T, class Ordinal = int, class Size = int>
size_t crs_memory_bytes(int n, size_t nnz) {
  return nnz * (sizeof(T) + sizeof(Ordinal)) + (static_cast<size_t>(n) + 1) * sizeof(Size);
}

namespace impl {

/// Offsets of a CDS matrix by value, so that a kernel reads them from
/// registers/constant memory rather than from a View (up to kMax diagonals).
struct CDSOffsets {
  static constexpr int kMax = 16;
  int nd = 0;
  int off[kMax] = {};
  static bool fits(int ndiag) { return ndiag <= kMax; }
  static CDSOffsets from(const std::vector<int>& h) {
    CDSOffsets o;
    o.nd = static_cast<int>(h.size());
    for (int d = 0; d < o.nd && d < kMax; ++d) o.off[d] = h[d];
    return o;
  }
};

/// Row i of a CDS matrix times any vector-like accessor v(j): sum_d data(i,d) v(i+off_d).
/// ByValue: offsets from CDSOffsets (ndiag <= 16); otherwise from the View.
template <bool ByValue, class DataView, class OffView>
struct CDSRow {
  DataView data;
  OffView offsets;
  CDSOffsets off;
  int n;
  KOKKOS_INLINE_FUNCTION int nd() const { return ByValue ? off.nd : static_cast<int>(offsets.extent(0)); }
  KOKKOS_INLINE_FUNCTION int offset(int d) const { return ByValue ? off.off[d] : offsets(d); }
  /// `lo`..`hi` (exclusive) is the index range v may be read at (halo included).
  template <class V>
  KOKKOS_INLINE_FUNCTION typename DataView::non_const_value_type apply(const int i, const V& v, const int lo,
                                                                       const int hi) const {
    typename DataView::non_const_value_type s = 0;
    const int m = nd();
    for (int d = 0; d < m; ++d) {
      const int j = i + offset(d);
      if (j >= lo && j < hi) s += data(i, d) * v(j);
    }
    return s;
  }
  /// q(i) = row i times v for the consecutive rows i0 <= i < i1, diagonal by
  /// diagonal: each pass runs along contiguous rows of one diagonal and of v
  /// (a loop a CPU compiler vectorises; `apply` per row does not).
  template <class V, class Q>
  KOKKOS_INLINE_FUNCTION void apply_rows(const int i0, const int i1, const V& v, const Q& q, const int lo,
                                         const int hi) const {
    for (int i = i0; i < i1; ++i) q(i) = 0;
    const int m = nd();
    for (int d = 0; d < m; ++d) {
      const int o = offset(d);
      const int b = lo - o > i0 ? lo - o : i0, e = hi - o < i1 ? hi - o : i1;
      for (int i = b; i < e; ++i) q(i) += data(i, d) * v(i + o);
    }
  }
};

/// The main and upper diagonals of a CDS matrix whose offsets come in pairs
/// +o / -o: data columns of the main diagonal (-1 if absent), of each +o
/// (col) and of its -o (low).
struct CDSUpper {
  static constexpr int kMax = CDSOffsets::kMax / 2;
  int nu = 0;
  int main = -1;
  int off[kMax] = {};
  int col[kMax] = {};
  int low[kMax] = {};
  /// False when some offset has no partner of opposite sign, or there are
  /// more than kMax pairs.
  static bool of(const std::vector<int>& h, CDSUpper& u) {
    u = CDSUpper{};
    const int nd = static_cast<int>(h.size());
    for (int d = 0; d < nd; ++d) {
      if (h[d] == 0) {
        u.main = d;
        continue;
      }
      int partner = -1;
      for (int e = 0; e < nd; ++e)
        if (h[e] == -h[d]) partner = e;
      if (partner < 0) return false;
      if (h[d] < 0) continue;
      if (u.nu == kMax) return false;
      u.off[u.nu] = h[d];
      u.col[u.nu] = d;
      u.low[u.nu] = partner;
      ++u.nu;
    }
    return true;
  }
};

/// Row i of a symmetric CDS matrix from its main and upper diagonals only
/// (BLAS symv's idea): A(i, i - o) = A(i - o, i) = data(i - o, d(+o)). The
/// lower diagonals are never read, so a product moves nu + 1 of the matrix's
/// columns; data(i - o, .) was read as row i - o's own entry a moment before
/// and comes from cache. Halo (a row block of a distributed matrix, lo < 0):
/// rows -h .. -1 (the previous block's last rows) come from `lower`, row j
/// at lower(h + j, .).
template <class DataView, bool Halo = false>
struct CDSSymRow {
  using value_type = typename DataView::non_const_value_type;
  DataView data;
  CDSUpper up;
  int n;
  DataView lower = {};
  int h = 0;
  /// Entry (j, c) of the stored columns, j >= -h.
  KOKKOS_INLINE_FUNCTION value_type at(const int j, const int c) const {
    if constexpr (Halo) return j >= 0 ? data(j, c) : lower(h + j, c);
    return data(j, c);
  }
  template <class V>
  KOKKOS_INLINE_FUNCTION value_type apply(const int i, const V& v, const int lo, const int hi) const {
    value_type s = up.main >= 0 ? data(i, up.main) * v(i) : value_type(0);
    for (int u = 0; u < up.nu; ++u) {
      const int o = up.off[u], c = up.col[u];
      if (i + o < hi) s += data(i, c) * v(i + o);
      if (i - o >= lo) s += at(i - o, c) * v(i - o);
    }
    return s;
  }
  /// As CDSRow::apply_rows: q(i) = row i times v for i0 <= i < i1.
  template <class V, class Q>
  KOKKOS_INLINE_FUNCTION void apply_rows(const int i0, const int i1, const V& v, const Q& q, const int lo,
                                         const int hi) const {
    if (up.main >= 0)
      for (int i = i0; i < i1; ++i) q(i) = data(i, up.main) * v(i);
    else
      for (int i = i0; i < i1; ++i) q(i) = 0;
    for (int u = 0; u < up.nu; ++u) {
      const int o = up.off[u], c = up.col[u];
      const int e = hi - o < i1 ? hi - o : i1;
      for (int i = i0; i < e; ++i) q(i) += data(i, c) * v(i + o);
      int i = lo + o > i0 ? lo + o : i0;
      for (; Halo && i < i1 && i < o; ++i) q(i) += at(i - o, c) * v(i - o);
      for (; i < i1; ++i) q(i) += data(i - o, c) * v(i - o);
    }
  }
};

/// The diagonals of a matrix whose diagonals each hold one value on all their
/// rows (a constant-coefficient stencil, such as the 1D Laplacian), read the
/// way a CDS data View is: entry (i, c) is column c's value. CDSSymRow over
/// it multiplies by those values in the same order as over the matrix, so
/// the products are the same to the bit, and the matrix is not read.
template <class T>
struct CDSConstColumns {
  using non_const_value_type = T;
  T v[CDSOffsets::kMax + 1] = {};
  KOKKOS_INLINE_FUNCTION T operator()(int, const int c) const { return v[c]; }
};
template <class T>
using CDSConstSymRow = CDSSymRow<CDSConstColumns<T>>;

/// Counts the rows where a main or upper diagonal (`up`) differs from its
/// value in `c` (exact comparison; NaN counts).
template <class DataView, class T>
struct CDSNonConstant {
  DataView data;
  CDSUpper up;
  int n;
  CDSConstColumns<T> c;
  KOKKOS_INLINE_FUNCTION void operator()(const int i, int& bad) const {
    if (up.main >= 0 && !(data(i, up.main) == c(i, up.main))) ++bad;
    for (int u = 0; u < up.nu; ++u)
      if (i + up.off[u] < n && !(data(i, up.col[u]) == c(i, up.col[u]))) ++bad;
  }
};

/// Counts the entries with A(i, i - o) != A(i - o, i) (exact comparison; NaN
/// counts).
template <class DataView>
struct CDSAsymmetry {
  DataView data;
  CDSUpper up;
  KOKKOS_INLINE_FUNCTION void operator()(const int i, int& bad) const {
    for (int u = 0; u < up.nu; ++u) {
      const int o = up.off[u];
      if (i >= o && !(data(i, up.low[u]) == data(i - o, up.col[u]))) ++bad;
    }
  }
};

/// True when A's offsets come in +-o pairs (at most CDSUpper::kMax) and its
/// values are exactly symmetric; then `up` describes its upper half. Reads
/// the matrix once and fences.
template <class Exec, class T, class Mem>
bool cds_symmetric(const Exec& exec, const CDSMatrix<T, Mem>& A, CDSUpper& up) {
  if (!CDSUpper::of(A.host_offsets(), up)) return false;
  int bad = 0;
  Kokkos::parallel_reduce("kband::cds_symmetric", Range<Exec>(exec, 0, A.n()),
                          CDSAsymmetry<typename CDSMatrix<T, Mem>::data_view>{A.data(), up}, bad);
  return bad == 0;
}

/// out(d) = data(0, d).
template <class DataView, class Out>
struct CDSRow0 {
  DataView data;
  Out out;
  KOKKOS_INLINE_FUNCTION void operator()(const int d) const { out(d) = data(0, d); }
};

/// For a symmetric matrix (`up` from cds_symmetric): true when each of its
/// main and upper diagonals holds one value on all its rows (entry (i, i + o)
/// for i + o < n); then `row` multiplies by those values. Reads the
/// diagonals once and fences.
template <class Exec, class T, class Mem>
bool cds_constant(const Exec& exec, const CDSMatrix<T, Mem>& A, const CDSUpper& up, CDSConstSymRow<T>& row) {
  const int n = A.n();
  CDSConstColumns<T> cols;
  row = CDSConstSymRow<T>{cols, up, n};
  if (n == 0) return false;
  // the values of row 0 (an upper diagonal with no rows is never used),
  // gathered into a contiguous View (a strided one cannot be copied to the host)
  const int nd = A.ndiag();
  Kokkos::View<T*, Mem> row0(Kokkos::view_alloc(exec, std::string("kband::cds_constant::row0")), nd);
  const auto data = A.data();
  Kokkos::parallel_for("kband::cds_constant::row0", Range<Exec>(exec, 0, nd),
                       CDSRow0<typename CDSMatrix<T, Mem>::data_view, Kokkos::View<T*, Mem>>{data, row0});
  auto first = Kokkos::create_mirror_view(row0);
  Kokkos::deep_copy(exec, first, row0);
  exec.fence();
  if (up.main >= 0) cols.v[up.main] = first(up.main);
  for (int u = 0; u < up.nu; ++u) cols.v[up.col[u]] = up.off[u] < n ? first(up.col[u]) : T(0);
  row.data = cols;
  int bad = 0;
  Kokkos::parallel_reduce("kband::cds_constant", Range<Exec>(exec, 0, n),
                          CDSNonConstant<typename CDSMatrix<T, Mem>::data_view, T>{data, up, n, cols}, bad);
  return bad == 0;
}

template <class T, class Mem>
using CDSRowOf = CDSRow<true, typename CDSMatrix<T, Mem>::data_view, typename CDSMatrix<T, Mem>::offsets_view>;
template <class T, class Mem>
using CDSRowOfView = CDSRow<false, typename CDSMatrix<T, Mem>::data_view, typename CDSMatrix<T, Mem>::offsets_view>;

template <class T, class Mem>
CDSRowOf<T, Mem> cds_row(const CDSMatrix<T, Mem>& A) {
  return {A.data(), A.offsets(), CDSOffsets::from(A.host_offsets()), A.n()};
}
template <class T, class Mem>
CDSRowOfView<T, Mem> cds_row_view(const CDSMatrix<T, Mem>& A) {
  return {A.data(), A.offsets(), CDSOffsets{}, A.n()};
}

/// Identity accessor over a rank-1 View.
template <class V>
struct VecRef {
  V v;
  KOKKOS_INLINE_FUNCTION typename V::const_value_type operator()(const int j) const { return v(j); }
};

template <class Row, class VX, class VY>
struct CDSSpmv {
  Row row;
  VX x;
  VY y;
  KOKKOS_INLINE_FUNCTION void operator()(const int i) const { y(i) = row.apply(i, VecRef<VX>{x}, 0, row.n); }
};

/// Dense y = A x: one team per row, its threads and vector lanes over the row
/// (coalesced reads of the row-major matrix on GPUs).
template <class Exec, class VA, class VX, class VY>
struct DenseSpmv {
  VA A;
  VX x;
  VY y;
  using member = typename Kokkos::TeamPolicy<Exec>::member_type;
  KOKKOS_INLINE_FUNCTION void operator()(const member& t) const {
    const int i = t.league_rank();
    typename VY::non_const_value_type s = 0;
    Kokkos::parallel_reduce(Kokkos::TeamThreadRange(t, static_cast<int>(A.extent(1))),
                            [&](const int j, typename VY::non_const_value_type& acc) { acc += A(i, j) * x(j); }, s);
    Kokkos::single(Kokkos::PerTeam(t), [&]() { y(i) = s; });
  }
};

/// Team size of the dense row kernels: 128 threads on devices, 1 on hosts.
template <class Exec>
int dense_team_size() {
  return is_device_exec<Exec>::value ? 128 : 1;
}

template <class Exec, class V>
void check_vector(const char* fn, const char* arg, const V& v, int n) {
  static_assert(V::rank == 1, "kband: vectors must be rank-1 Views");
  require_accessible<V, Exec>(arg);
  require(static_cast<int>(v.extent(0)) == n,
          concat(fn, ": argument '", arg, "' (", v.label(), ") has extent ", v.extent(0), ", expected n=", n));
}

template <class T, class Mem>
void check_matrix(const char* fn, const CDSMatrix<T, Mem>& A) {
  require(A.n() >= 1, concat(fn, ": the CDS matrix is empty (default-constructed)"));
}

template <class VA>
int dense_n(const char* fn, const VA& A) {
  static_assert(VA::rank == 2, "kband: a dense matrix is a rank-2 View");
  require(A.extent(0) == A.extent(1) && A.extent(0) >= 1,
          concat(fn, ": the dense matrix (", A.label(), ") must be square and non-empty, got (", A.extent(0), ", ",
                 A.extent(1), ")"));
  return static_cast<int>(A.extent(0));
}

template <class Data>
struct FillLaplacian1D {
  Data data;
  int n;
  KOKKOS_INLINE_FUNCTION void operator()(const int i) const {
    data(i, 0) = i > 0 ? -1 : 0;
    data(i, 1) = 2;
    data(i, 2) = i < n - 1 ? -1 : 0;
  }
};

template <class Data>
struct FillPoisson2D {
  Data data;
  int nx, ny;
  bool has_y;  // ny > 1: the +-nx diagonals exist
  KOKKOS_INLINE_FUNCTION void operator()(const int idx) const {
    const int i = idx % nx, j = idx / nx;
    int d = 0;
    if (has_y) data(idx, d++) = j > 0 ? -1 : 0;
    if (nx > 1) data(idx, d++) = i > 0 ? -1 : 0;
    data(idx, d++) = 4;
    if (nx > 1) data(idx, d++) = i < nx - 1 ? -1 : 0;
    if (has_y) data(idx, d++) = j < ny - 1 ? -1 : 0;
  }
};

/// A = C^T C + shift I, C(k, i) column-major in `c` (C's column i is contiguous).
template <class VA, class VC>
struct GramKernel {
  VA A;
  VC c;
  double shift;
  int n;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t ij) const {
    const int i = static_cast<int>(ij / n), j = static_cast<int>(ij % n);
    if (j < i) return;
    typename VA::non_const_value_type s = 0;
    for (int k = 0; k < n; ++k) s += c(k, i) * c(k, j);
    if (i == j) s += static_cast<typename VA::non_const_value_type>(shift);
    A(i, j) = s;
    A(j, i) = s;
  }
};

/// flags(j - i + n - 1) = 1 where |dense(i, j)| > tol.
template <class VA, class VF>
struct MarkDiagonals {
  VA A;
  VF flags;
  double tol;
  int n;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t ij) const {
    const int i = static_cast<int>(ij / n), j = static_cast<int>(ij % n);
    if (abs_(static_cast<double>(A(i, j))) > tol) flags(j - i + n - 1) = 1;
  }
};

template <class Data, class Off, class VA>
struct DenseToCDS {
  Data data;
  Off offsets;
  VA A;
  int n;
  KOKKOS_INLINE_FUNCTION void operator()(const int i) const {
    for (int d = 0; d < static_cast<int>(offsets.extent(0)); ++d) {
      const int j = i + offsets(d);
      data(i, d) = (j >= 0 && j < n) ? A(i, j) : 0;
    }
  }
};

template <class Data, class Off, class VA>
struct CDSToDense {
  Data data;
  Off offsets;
  VA A;
  int n;
  KOKKOS_INLINE_FUNCTION void operator()(const int i) const {
    for (int j = 0; j < n; ++j) A(i, j) = 0;
    for (int d = 0; d < static_cast<int>(offsets.extent(0)); ++d) {
      const int j = i + offsets(d);
      if (j >= 0 && j < n) A(i, j) = data(i, d);
    }
  }
};

}  // namespace impl

/// The 1D Laplacian of seed 003 (2 on the diagonal, -1 beside it), n >= 1.
template <class T, class Exec>
CDSMatrix<T, typename Exec::memory_space> make_laplacian_1d(const Exec& exec, int n) {
  impl::ProfilingRegion region("kband::make_laplacian_1d");
  impl::require(n >= 2, impl::concat("kband::make_laplacian_1d: n=", n, ", the minimum is 2"));
  CDSMatrix<T, typename Exec::memory_space> A("kband::laplacian_1d", n, {-1, 0, 1});
  Kokkos::parallel_for("kband::make_laplacian_1d", impl::Range<Exec>(exec, 0, n),
                       impl::FillLaplacian1D<typename CDSMatrix<T, typename Exec::memory_space>::data_view>{A.data(), n});
  return A;
}

/// The 2D Poisson 5-point matrix of seed 003 on an nx x ny grid (row idx =
/// i + nx*j): 4 on the diagonal, -1 for each grid neighbour. Offsets
/// {-nx, -1, 0, 1, nx}; the seed's N x N grid is nx = ny = N. Grid lines of
/// nx points are the independent blocks of the tridiagonal part.
template <class T, class Exec>
CDSMatrix<T, typename Exec::memory_space> make_poisson_2d(const Exec& exec, int nx, int ny) {
  impl::ProfilingRegion region("kband::make_poisson_2d");
  impl::require(nx >= 1 && ny >= 1 && static_cast<long long>(nx) * ny >= 2,
                impl::concat("kband::make_poisson_2d: grid ", nx, " x ", ny, ", need at least 2 points"));
  const int n = nx * ny;
  std::vector<int> off;
  if (ny > 1) off.push_back(-nx);
  if (nx > 1) off.push_back(-1);
  off.push_back(0);
  if (nx > 1) off.push_back(1);
  if (ny > 1) off.push_back(nx);
  CDSMatrix<T, typename Exec::memory_space> A("kband::poisson_2d", n, off);
  Kokkos::parallel_for("kband::make_poisson_2d", impl::Range<Exec>(exec, 0, n),
                       impl::FillPoisson2D<typename CDSMatrix<T, typename Exec::memory_space>::data_view>{
                           A.data(), nx, ny, ny > 1});
  return A;
}

/// Dense SPD matrix of seed 003: C^T C + shift I with C(k, i) uniform in
/// [0, 1) drawn on the host from `seed` (std::mt19937_64, column by column),
/// so the matrix does not depend on the backend. O(n^3) work on the device.
template <class T, class Exec>
DenseMatrix<T, typename Exec::memory_space> make_random_spd(const Exec& exec, int n, std::uint64_t seed = 1,
                                                            double shift = 1e-3) {
  impl::ProfilingRegion region("kband::make_random_spd");
  using Mem = typename Exec::memory_space;
  impl::require(n >= 1, impl::concat("kband::make_random_spd: n=", n, ", the minimum is 1"));
  Kokkos::View<T**, Kokkos::LayoutLeft, Mem> c(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kband::spd_C"), n, n);
  auto hc = Kokkos::create_mirror_view(c);
  std::mt19937_64 g(seed);
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < n; ++k) hc(k, i) = static_cast<T>(static_cast<double>(g() >> 11) * (1.0 / 9007199254740992.0));
  Kokkos::deep_copy(c, hc);
  DenseMatrix<T, Mem> A(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kband::random_spd"), n, n);
  Kokkos::parallel_for("kband::make_random_spd",
                       impl::Range<Exec, Kokkos::IndexType<std::int64_t>>(exec, 0, static_cast<std::int64_t>(n) * n),
                       impl::GramKernel<DenseMatrix<T, Mem>, decltype(c)>{A, c, shift, n});
  exec.fence();  // c is freed on return
  return A;
}

/// Dense -> CDS with the seed's rule: a diagonal is stored when one of its
/// entries has |a| > tol (default 1e-10); stored diagonals keep every entry as
/// it is, entries of dropped diagonals (all |a| <= tol) are discarded. Reads
/// the diagonal pattern back to the host (fences).
template <class Exec, class VA>
CDSMatrix<typename VA::non_const_value_type, typename Exec::memory_space> cds_from_dense(const Exec& exec,
                                                                                         const VA& dense,
                                                                                         double tol = 1e-10) {
  impl::ProfilingRegion region("kband::cds_from_dense");
  using T = typename VA::non_const_value_type;
  using Mem = typename Exec::memory_space;
  impl::require_accessible<VA, Exec>("dense");
  const int n = impl::dense_n("kband::cds_from_dense", dense);
  impl::require(tol >= 0, impl::concat("kband::cds_from_dense: tol=", tol, " must be non-negative"));
  Kokkos::View<int*, Mem> flags("kband::cds_flags", 2 * n - 1);
  Kokkos::parallel_for("kband::cds_from_dense::mark",
                       impl::Range<Exec, Kokkos::IndexType<std::int64_t>>(exec, 0, static_cast<std::int64_t>(n) * n),
                       impl::MarkDiagonals<VA, decltype(flags)>{dense, flags, tol, n});
  auto hf = Kokkos::create_mirror_view(flags);
  exec.fence();
  Kokkos::deep_copy(hf, flags);
  std::vector<int> off;
  for (int k = 0; k < 2 * n - 1; ++k)
    if (hf(k)) off.push_back(k - (n - 1));
  if (off.empty()) off.push_back(0);  // the zero matrix keeps its (zero) main diagonal
  CDSMatrix<T, Mem> A(dense.label() + "::cds", n, off);
  Kokkos::parallel_for("kband::cds_from_dense::fill", impl::Range<Exec>(exec, 0, n),
                       impl::DenseToCDS<typename CDSMatrix<T, Mem>::data_view, typename CDSMatrix<T, Mem>::offsets_view, VA>{
                           A.data(), A.offsets(), dense, n});
  return A;
}

/// CDS -> dense (n, n): every entry written (zeros off the stored diagonals).
template <class Exec, class T, class Mem, class VA>
void cds_to_dense(const Exec& exec, const CDSMatrix<T, Mem>& A, const VA& dense) {
  impl::ProfilingRegion region("kband::cds_to_dense");
  impl::check_matrix("kband::cds_to_dense", A);
  impl::require_accessible<VA, Exec>("dense");
  impl::require_accessible<typename CDSMatrix<T, Mem>::data_view, Exec>("A");
  const int n = impl::dense_n("kband::cds_to_dense", dense);
  impl::require(n == A.n(), impl::concat("kband::cds_to_dense: dense has n=", n, " but A has n=", A.n()));
  Kokkos::parallel_for("kband::cds_to_dense", impl::Range<Exec>(exec, 0, n),
                       impl::CDSToDense<typename CDSMatrix<T, Mem>::data_view, typename CDSMatrix<T, Mem>::offsets_view, VA>{
                           A.data(), A.offsets(), dense, n});
}

/// y = A x for a CDS matrix; x and y rank-1 of extent n, must not alias. No fence.
template <class Exec, class T, class Mem, class VX, class VY>
void spmv(const Exec& exec, const CDSMatrix<T, Mem>& A, const VX& x, const VY& y) {
  impl::ProfilingRegion region("kband::spmv(cds)");
  impl::check_matrix("kband::spmv", A);
  impl::require_accessible<typename CDSMatrix<T, Mem>::data_view, Exec>("A");
  impl::check_vector<Exec>("kband::spmv", "x", x, A.n());
  impl::check_vector<Exec>("kband::spmv", "y", y, A.n());
  impl::require(static_cast<const void*>(x.data()) != static_cast<const void*>(y.data()),
                "kband::spmv: y must not alias x");
  if (impl::CDSOffsets::fits(A.ndiag()))
    Kokkos::parallel_for("kband::spmv(cds)", impl::Range<Exec>(exec, 0, A.n()),
                         impl::CDSSpmv<impl::CDSRowOf<T, Mem>, VX, VY>{impl::cds_row(A), x, y});
  else
    Kokkos::parallel_for("kband::spmv(cds)", impl::Range<Exec>(exec, 0, A.n()),
                         impl::CDSSpmv<impl::CDSRowOfView<T, Mem>, VX, VY>{impl::cds_row_view(A), x, y});
}

/// y = A x for a dense (n, n) matrix (a team per row). No fence.
template <class Exec, class T, class... P, class VX, class VY>
void spmv(const Exec& exec, const Kokkos::View<T**, P...>& A, const VX& x, const VY& y) {
  impl::ProfilingRegion region("kband::spmv(dense)");
  using VA = Kokkos::View<T**, P...>;
  impl::require_accessible<VA, Exec>("A");
  const int n = impl::dense_n("kband::spmv", A);
  impl::check_vector<Exec>("kband::spmv", "x", x, n);
  impl::check_vector<Exec>("kband::spmv", "y", y, n);
  impl::require(static_cast<const void*>(x.data()) != static_cast<const void*>(y.data()),
                "kband::spmv: y must not alias x");
  Kokkos::parallel_for("kband::spmv(dense)", impl::Team<Exec>(exec, n, impl::dense_team_size<Exec>()),
                       impl::DenseSpmv<Exec, VA, VX, VY>{A, x, y});
}

}  // namespace kband
