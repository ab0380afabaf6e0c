// kband-bench: test problems, layout helpers and host-side verification.
//
// Every input value is a pure function of (seed, system, row) (a splitmix64
// hash), so device kernels generate the data and the host regenerates exactly
// the same values when it checks residuals; no host copy of the inputs is kept.
//
// The matrices are symmetric, strictly diagonally dominant with a positive
// diagonal (hence SPD), so one data set is valid input for kband's Thomas, for
// cuSPARSE gtsv (general tridiagonal) and for Kokkos Kernels' pttrf/pttrs (SPD):
//   off(s, j)  in [-1, 1)            coupling of rows j and j+1 (cyclically)
//   a(s, j)  = off(s, j-1)            a(s, 0)   = periodic ? off(s, n-1) : 0
//   c(s, j)  = off(s, j)              c(s, n-1) = periodic ? off(s, n-1) : 0
//   b(s, j)  = 1 + u + |a(s,j)| + |c(s,j)|, u in [0, 1)
//   d(s, j)  in [-1, 1)
// Non-periodic data has zero corners, which is what cuSPARSE requires
// (dl[0] = du[n-1] = 0) and what kband ignores.
#pragma once

#include <kband.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace kband_bench {

using Exec = Kokkos::DefaultExecutionSpace;
using Mem = Exec::memory_space;
constexpr int kSZ = kband::default_sz<Exec>::value;
using Index = Kokkos::IndexType<std::int64_t>;
using Policy = Kokkos::RangePolicy<Exec, Index>;

// ---------------------------------------------------------------------------
// Deterministic data
// ---------------------------------------------------------------------------
KOKKOS_INLINE_FUNCTION std::uint64_t mix64(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

struct Gen {
  static constexpr std::int64_t kShared = -1;  // "system" index of shared coefficients
  std::uint64_t seed = 1;
  int n = 0;
  bool periodic = false;

  KOKKOS_INLINE_FUNCTION double u01(std::int64_t s, int j, int which) const {
    const std::uint64_t h =
        mix64(seed ^ mix64(static_cast<std::uint64_t>(s) * 4 + static_cast<std::uint64_t>(which)) ^
              (static_cast<std::uint64_t>(j) << 40));
    return static_cast<double>(h >> 11) * (1.0 / 9007199254740992.0);
  }
  KOKKOS_INLINE_FUNCTION double off(std::int64_t s, int j) const { return 2.0 * u01(s, j, 0) - 1.0; }
  KOKKOS_INLINE_FUNCTION double a(std::int64_t s, int j) const {
    return j == 0 ? (periodic ? off(s, n - 1) : 0.0) : off(s, j - 1);
  }
  KOKKOS_INLINE_FUNCTION double c(std::int64_t s, int j) const {
    return j == n - 1 ? (periodic ? off(s, n - 1) : 0.0) : off(s, j);
  }
  KOKKOS_INLINE_FUNCTION double b(std::int64_t s, int j) const {
    const double aa = a(s, j), cc = c(s, j);
    return 1.0 + u01(s, j, 1) + (aa < 0 ? -aa : aa) + (cc < 0 ? -cc : cc);
  }
  KOKKOS_INLINE_FUNCTION double d(std::int64_t s, int j) const { return 2.0 * u01(s, j, 2) - 1.0; }
};

// ---------------------------------------------------------------------------
// The three layouts, behind one interface
// ---------------------------------------------------------------------------
template <class T, kband::Layout L>
struct LayoutOps;

template <class T>
struct LayoutOps<T, kband::Layout::Contiguous> {
  using batch = kband::ContiguousBatch<T, Mem>;
  using raw_type = batch;
  static constexpr kband::Layout layout = kband::Layout::Contiguous;
  static batch alloc(const std::string& l, int nsys, int n) {
    return batch(Kokkos::view_alloc(Kokkos::WithoutInitializing, l), nsys, n);
  }
  static const raw_type& raw(const batch& b) { return b; }
  static std::size_t flat(int nsys, int n) { return static_cast<std::size_t>(nsys) * n; }
  KOKKOS_INLINE_FUNCTION static bool decode(std::int64_t k, int /*nsys*/, int n, int& s, int& j) {
    s = static_cast<int>(k / n);
    j = static_cast<int>(k % n);
    return true;
  }
  KOKKOS_INLINE_FUNCTION static auto row(const raw_type& b, int s) { return Kokkos::subview(b, s, Kokkos::ALL()); }
  KOKKOS_INLINE_FUNCTION static auto row_head(const raw_type& b, int s, int len) {
    return Kokkos::subview(b, s, Kokkos::pair<int, int>(0, len));
  }
};

template <class T>
struct LayoutOps<T, kband::Layout::Interleaved> {
  using batch = kband::InterleavedBatch<T, Mem>;
  using raw_type = batch;
  static constexpr kband::Layout layout = kband::Layout::Interleaved;
  static batch alloc(const std::string& l, int nsys, int n) {
    return batch(Kokkos::view_alloc(Kokkos::WithoutInitializing, l), nsys, n);
  }
  static const raw_type& raw(const batch& b) { return b; }
  static std::size_t flat(int nsys, int n) { return static_cast<std::size_t>(nsys) * n; }
  KOKKOS_INLINE_FUNCTION static bool decode(std::int64_t k, int nsys, int /*n*/, int& s, int& j) {
    s = static_cast<int>(k % nsys);
    j = static_cast<int>(k / nsys);
    return true;
  }
  KOKKOS_INLINE_FUNCTION static auto row(const raw_type& b, int s) { return Kokkos::subview(b, s, Kokkos::ALL()); }
  KOKKOS_INLINE_FUNCTION static auto row_head(const raw_type& b, int s, int len) {
    return Kokkos::subview(b, s, Kokkos::pair<int, int>(0, len));
  }
};

template <class T>
struct LayoutOps<T, kband::Layout::Grouped> {
  using batch = kband::GroupedBatch<T, kSZ, Mem>;
  using raw_type = typename batch::view_type;  // (ngroups, n, SZ)
  static constexpr kband::Layout layout = kband::Layout::Grouped;
  static batch alloc(const std::string& l, int nsys, int n) { return batch(l, nsys, n); }
  static const raw_type& raw(const batch& b) { return b.view(); }
  static std::size_t flat(int nsys, int n) {
    return static_cast<std::size_t>(batch::groups_for(nsys)) * kSZ * n;
  }
  KOKKOS_INLINE_FUNCTION static bool decode(std::int64_t k, int nsys, int n, int& s, int& j) {
    const std::int64_t g = k / (static_cast<std::int64_t>(n) * kSZ);
    j = static_cast<int>((k / kSZ) % n);
    s = static_cast<int>(g * kSZ + k % kSZ);
    return s < nsys;
  }
  // Row views take the underlying View: GroupedBatch::view() is host-only.
  KOKKOS_INLINE_FUNCTION static auto row(const raw_type& v, int s) {
    return Kokkos::subview(v, s / kSZ, Kokkos::ALL(), s % kSZ);
  }
  KOKKOS_INLINE_FUNCTION static auto row_head(const raw_type& v, int s, int len) {
    return Kokkos::subview(v, s / kSZ, Kokkos::pair<int, int>(0, len), s % kSZ);
  }
};

// ---------------------------------------------------------------------------
// Fill kernels
// ---------------------------------------------------------------------------
template <class T, class Ops>
struct FillSystems {
  typename Ops::batch a, b, c, d;
  Gen g;
  int nsys, n;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t k) const {
    int s, j;
    if (!Ops::decode(k, nsys, n, s, j)) return;
    a(s, j) = static_cast<T>(g.a(s, j));
    b(s, j) = static_cast<T>(g.b(s, j));
    c(s, j) = static_cast<T>(g.c(s, j));
    d(s, j) = static_cast<T>(g.d(s, j));
  }
};

/// Rewrites the entries that differ between periodic and non-periodic data.
template <class T, class Ops>
struct SetCorners {
  typename Ops::batch a, b, c;
  Gen g;
  int n;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t k) const {
    const int s = static_cast<int>(k);
    a(s, 0) = static_cast<T>(g.a(s, 0));
    b(s, 0) = static_cast<T>(g.b(s, 0));
    b(s, n - 1) = static_cast<T>(g.b(s, n - 1));
    c(s, n - 1) = static_cast<T>(g.c(s, n - 1));
  }
};

template <class T>
struct FillShared {
  Kokkos::View<T*, Mem> a, b, c;
  Gen g;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t j) const {
    const int jj = static_cast<int>(j);
    a(jj) = static_cast<T>(g.a(Gen::kShared, jj));
    b(jj) = static_cast<T>(g.b(Gen::kShared, jj));
    c(jj) = static_cast<T>(g.c(Gen::kShared, jj));
  }
};

/// Copies the shared matrix into per-system coefficient batches (for peers
/// that only take per-system coefficients).
template <class T, class Ops>
struct BroadcastShared {
  typename Ops::batch a, b, c;
  Kokkos::View<T*, Mem> sa, sb, sc;
  int nsys, n;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t k) const {
    int s, j;
    if (!Ops::decode(k, nsys, n, s, j)) return;
    a(s, j) = sa(j);
    b(s, j) = sb(j);
    c(s, j) = sc(j);
  }
};

// ---------------------------------------------------------------------------
// Verification, after timing: on the device, a scan of every output for
// non-finite values (outputs are poisoned with NaN before the warm-up), of
// info for non-zero entries, and the residual of every system; then the rows
// of ~32 sampled systems are copied to the host and their residuals computed
// again there. Residuals are relative to max |d| of the system, in double,
// with the coefficients regenerated from the seed; tolerance 1000 eps(T).
// ---------------------------------------------------------------------------

/// Decoder for the x-direction lines of a LayoutLeft field (i fastest).
struct LineOps {
  KOKKOS_INLINE_FUNCTION static bool decode(std::int64_t k, int /*nsys*/, int n, int& s, int& j) {
    s = static_cast<int>(k / n);
    j = static_cast<int>(k % n);
    return true;
  }
};

/// (s, j) accessor of the x-lines of a field f(i, j, k) with extents (n, ny, nz).
template <class T>
struct FieldLines {
  Kokkos::View<T***, Kokkos::LayoutLeft, Mem> f;
  int ny;
  KOKKOS_INLINE_FUNCTION T& operator()(const int s, const int j) const { return f(j, s % ny, s / ny); }
};

template <class Acc, class Dec>
struct CountNonFinite {
  Acc x;
  int nsys, n;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t k, long long& bad) const {
    int s, j;
    if (!Dec::decode(k, nsys, n, s, j)) return;
    const auto v = x(s, j);
    if (!(v - v == 0)) ++bad;  // NaN and +-inf fail
  }
};

struct CountNonZero {
  Kokkos::View<int*, Mem> info;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t s, long long& bad) const {
    if (info(s) != 0) ++bad;
  }
};

template <class T, class Acc>
struct GatherRows {
  Acc x;
  Kokkos::View<int*, Mem> sys;
  Kokkos::View<T**, Kokkos::LayoutRight, Mem> out;
  int n;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t k) const {
    const int i = static_cast<int>(k / n), j = static_cast<int>(k % n);
    out(i, j) = x(sys(i), j);
  }
};

/// Relative residual max_j |A x - d| / max_j |d| of every system, with the
/// coefficients regenerated from `g` exactly as the fill kernels stored them
/// (rounded to T); NaN counts as +huge. Reduced with Max over the systems.
template <class T, class Acc>
struct FullResidual {
  Acc x;
  Gen g;
  int n;
  bool shared;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t sl, double& worst) const {
    const int s = static_cast<int>(sl);
    const std::int64_t ms = shared ? Gen::kShared : sl;
    const double corner = g.periodic ? g.off(ms, n - 1) : 0.0;
    const double x0 = static_cast<double>(x(s, 0));
    double offp = corner;  // a(ms, 0)
    double xm = g.periodic ? static_cast<double>(x(s, n - 1)) : 0.0, xc = x0;
    double rmax = 0, dmax = 0;
    for (int j = 0; j < n; ++j) {
      const double offc = j == n - 1 ? corner : g.off(ms, j);  // c(ms, j)
      const double aa = offp < 0 ? -offp : offp, cc = offc < 0 ? -offc : offc;
      const double av = static_cast<T>(offp), cv = static_cast<T>(offc);
      const double bv = static_cast<T>(1.0 + g.u01(ms, j, 1) + aa + cc);
      const double dv = static_cast<T>(g.d(sl, j));
      const double xp = j < n - 1 ? static_cast<double>(x(s, j + 1)) : (g.periodic ? x0 : 0.0);
      double r = av * xm + bv * xc + cv * xp - dv;
      r = r < 0 ? -r : r;
      rmax = r > rmax ? r : rmax;
      const double ad = dv < 0 ? -dv : dv;
      dmax = ad > dmax ? ad : dmax;
      xm = xc;
      xc = xp;
      offp = offc;
    }
    double rel = rmax / (dmax > 0 ? dmax : 1.0);
    if (!(rel == rel)) rel = 1e300;
    worst = rel > worst ? rel : worst;
  }
};

struct CheckResult {
  bool ok = true;
  double max_rel_residual = 0;
  std::string msg;
};

/// Systems whose residual is checked: first, last, middle and pseudo-random ones.
inline std::vector<int> sample_systems(int nsys, int count = 29) {
  std::vector<int> s{0, nsys - 1, nsys / 2};
  for (int i = 0; i < count; ++i) s.push_back(static_cast<int>(mix64(977 + i) % static_cast<std::uint64_t>(nsys)));
  std::sort(s.begin(), s.end());
  s.erase(std::unique(s.begin(), s.end()), s.end());
  return s;
}

/// Checks the solution held by accessor `x` (nsys systems of n rows, memory
/// order given by Dec) of the systems generated by `g`; shared == true: every
/// system has the matrix of Gen::kShared. `info`, when non-empty, must be 0.
template <class T, class Dec, class Acc>
CheckResult check_solution(const Exec& exec, const Acc& x, std::size_t flat, int nsys, int n, const Gen& g,
                           bool shared, const Kokkos::View<int*, Mem>& info) {
  CheckResult r;
  long long bad = 0;
  Kokkos::parallel_reduce("kband_bench::count_nonfinite", Policy(exec, 0, static_cast<std::int64_t>(flat)),
                          CountNonFinite<Acc, Dec>{x, nsys, n}, bad);
  if (bad) {
    r.ok = false;
    r.msg = kband::impl::concat(bad, " of ", static_cast<long long>(nsys) * n, " outputs are not finite");
    return r;
  }
  if (info.extent(0) > 0) {
    long long nz = 0;
    Kokkos::parallel_reduce("kband_bench::count_info", Policy(exec, 0, static_cast<std::int64_t>(info.extent(0))),
                            CountNonZero{info}, nz);
    if (nz) {
      r.ok = false;
      r.msg = kband::impl::concat(nz, " systems report info != 0");
      return r;
    }
  }
  const double tol = 1000.0 * static_cast<double>(std::numeric_limits<T>::epsilon());
  {
    double worst = 0;
    Kokkos::parallel_reduce("kband_bench::residual", Policy(exec, 0, nsys), FullResidual<T, Acc>{x, g, n, shared},
                            Kokkos::Max<double>(worst));
    r.max_rel_residual = worst;
    if (!(worst <= tol)) {
      r.ok = false;
      r.msg = kband::impl::concat("max relative residual over all ", nsys, " systems ", worst, " > tolerance ", tol);
      return r;
    }
  }
  // An independent recomputation on the host for a sample of systems.
  const std::vector<int> smp = sample_systems(nsys);
  const int ns = static_cast<int>(smp.size());
  Kokkos::View<int*, Mem> sys("kband_bench::sample", ns);
  {
    auto h = Kokkos::create_mirror_view(sys);
    for (int i = 0; i < ns; ++i) h(i) = smp[i];
    Kokkos::deep_copy(sys, h);
  }
  Kokkos::View<T**, Kokkos::LayoutRight, Mem> rows("kband_bench::sample_rows", ns, n);
  Kokkos::parallel_for("kband_bench::gather", Policy(exec, 0, static_cast<std::int64_t>(ns) * n),
                       GatherRows<T, Acc>{x, sys, rows, n});
  auto X = Kokkos::create_mirror_view(rows);
  Kokkos::deep_copy(X, rows);  // fences
  for (int i = 0; i < ns; ++i) {
    const int s = smp[i];
    const std::int64_t ms = shared ? Gen::kShared : s;
    double rmax = 0, dmax = 0;
    for (int j = 0; j < n; ++j) {
      const double aj = static_cast<T>(g.a(ms, j)), bj = static_cast<T>(g.b(ms, j)),
                   cj = static_cast<T>(g.c(ms, j)), dj = static_cast<T>(g.d(s, j));
      const int jm = j > 0 ? j - 1 : (g.periodic ? n - 1 : -1);
      const int jp = j < n - 1 ? j + 1 : (g.periodic ? 0 : -1);
      double ax = bj * static_cast<double>(X(i, j));
      if (jm >= 0) ax += aj * static_cast<double>(X(i, jm));
      if (jp >= 0) ax += cj * static_cast<double>(X(i, jp));
      rmax = std::max(rmax, std::fabs(ax - dj));
      dmax = std::max(dmax, std::fabs(dj));
    }
    const double rel = rmax / (dmax > 0 ? dmax : 1.0);
    if (!(rel <= tol)) {
      r.ok = false;
      r.msg = kband::impl::concat("host check, system ", s, ": relative residual ", rel, " > tolerance ", tol);
      return r;
    }
  }
  return r;
}

// ---------------------------------------------------------------------------
// Dense symmetric systems (kband::solve_symmetric and the dense LU peers)
// ---------------------------------------------------------------------------
// A(m) is symmetric with off-diagonal entries in [-1, 1) and diagonal
// d + u, u in [0, 1): strictly diagonally dominant (the d-1 off-diagonal
// entries of a row sum to less than d-1 in magnitude), hence SPD, with a
// condition number below about 2d. b(m, i) in [-1, 1).
struct DenseGen {
  std::uint64_t seed = 1;
  int d = 0;
  KOKKOS_INLINE_FUNCTION double u01(std::int64_t m, int i, int j, int which) const {
    const std::uint64_t h =
        mix64(seed ^ 0x5eed0d15e5ull ^ mix64(static_cast<std::uint64_t>(m) * 4 + static_cast<std::uint64_t>(which)) ^
              (static_cast<std::uint64_t>(i) << 40) ^ (static_cast<std::uint64_t>(j) << 20));
    return static_cast<double>(h >> 11) * (1.0 / 9007199254740992.0);
  }
  KOKKOS_INLINE_FUNCTION double A(std::int64_t m, int i, int j) const {
    if (i == j) return static_cast<double>(d) + u01(m, i, i, 1);
    return 2.0 * u01(m, i < j ? i : j, i < j ? j : i, 0) - 1.0;
  }
  KOKKOS_INLINE_FUNCTION double b(std::int64_t m, int i) const { return 2.0 * u01(m, i, 0, 2) - 1.0; }
};

/// Fills A (nmat, d, d) and b (nmat, d), any layouts; one thread per matrix row.
template <class T, class VA, class VB>
struct FillDense {
  VA A;
  VB b;
  DenseGen g;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t k) const {
    const int d = g.d;
    const std::int64_t m = k / d;
    const int i = static_cast<int>(k % d);
    for (int j = 0; j < d; ++j) A(m, i, j) = static_cast<T>(g.A(m, i, j));
    b(m, i) = static_cast<T>(g.b(m, i));
  }
};

template <class VX>
struct CountNonFinite2D {
  VX x;
  int d;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t k, long long& bad) const {
    const auto v = x(k / d, static_cast<int>(k % d));
    if (!(v - v == 0)) ++bad;
  }
};

/// Normwise backward error max_i |A x - b|_i / (|A|_inf |x|_inf + |b|_inf) of
/// every matrix, A and b regenerated (rounded to T); NaN counts as +huge.
template <class T, class VX>
struct DenseResidual {
  VX x;
  DenseGen g;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t m, double& worst) const {
    const int d = g.d;
    double rmax = 0, anorm = 0, xmax = 0, bmax = 0;
    for (int i = 0; i < d; ++i) {
      double r = 0, arow = 0;
      for (int j = 0; j < d; ++j) {
        const double aij = static_cast<T>(g.A(m, i, j));
        r += aij * static_cast<double>(x(m, j));
        arow += aij < 0 ? -aij : aij;
      }
      const double bi = static_cast<T>(g.b(m, i));
      r -= bi;
      r = r < 0 ? -r : r;
      rmax = r > rmax ? r : rmax;
      anorm = arow > anorm ? arow : anorm;
      const double xi = static_cast<double>(x(m, i)), ax = xi < 0 ? -xi : xi, ab = bi < 0 ? -bi : bi;
      xmax = ax > xmax ? ax : xmax;
      bmax = ab > bmax ? ab : bmax;
    }
    const double den = anorm * xmax + bmax;
    double rel = rmax / (den > 0 ? den : 1.0);
    if (!(rel == rel) || !(xmax - xmax == 0)) rel = 1e300;
    worst = rel > worst ? rel : worst;
  }
};

template <class T, class VX>
struct GatherDenseRows {
  VX x;
  Kokkos::View<int*, Mem> sys;
  Kokkos::View<T**, Kokkos::LayoutRight, Mem> out;
  int d;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t k) const {
    const int i = static_cast<int>(k / d), j = static_cast<int>(k % d);
    out(i, j) = x(sys(i), j);
  }
};

/// The dense counterpart of check_solution: scan of every output for
/// non-finite values and of info for non-zero entries, the backward error of
/// every matrix on the device, then ~32 sampled matrices recomputed on the
/// host. Tolerance 1000 eps(T).
template <class T, class VX>
CheckResult check_dense(const Exec& exec, const VX& x, int nmat, const DenseGen& g,
                        const Kokkos::View<int*, Mem>& info) {
  CheckResult r;
  const int d = g.d;
  const std::int64_t total = static_cast<std::int64_t>(nmat) * d;
  long long bad = 0;
  Kokkos::parallel_reduce("kband_bench::dense_nonfinite", Policy(exec, 0, total), CountNonFinite2D<VX>{x, d}, bad);
  if (bad) {
    r.ok = false;
    r.msg = kband::impl::concat(bad, " of ", total, " outputs are not finite");
    return r;
  }
  if (info.extent(0) > 0) {
    long long nz = 0;
    Kokkos::parallel_reduce("kband_bench::dense_info", Policy(exec, 0, static_cast<std::int64_t>(info.extent(0))),
                            CountNonZero{info}, nz);
    if (nz) {
      r.ok = false;
      r.msg = kband::impl::concat(nz, " matrices report info != 0");
      return r;
    }
  }
  const double tol = 1000.0 * static_cast<double>(std::numeric_limits<T>::epsilon());
  {
    double worst = 0;
    Kokkos::parallel_reduce("kband_bench::dense_residual", Policy(exec, 0, nmat), DenseResidual<T, VX>{x, g},
                            Kokkos::Max<double>(worst));
    r.max_rel_residual = worst;
    if (!(worst <= tol)) {
      r.ok = false;
      r.msg = kband::impl::concat("max backward error over all ", nmat, " matrices ", worst, " > tolerance ", tol);
      return r;
    }
  }
  const std::vector<int> smp = sample_systems(nmat);
  const int ns = static_cast<int>(smp.size());
  Kokkos::View<int*, Mem> sys("kband_bench::dense_sample", ns);
  {
    auto h = Kokkos::create_mirror_view(sys);
    for (int i = 0; i < ns; ++i) h(i) = smp[i];
    Kokkos::deep_copy(sys, h);
  }
  Kokkos::View<T**, Kokkos::LayoutRight, Mem> rows("kband_bench::dense_sample_rows", ns, d);
  Kokkos::parallel_for("kband_bench::dense_gather", Policy(exec, 0, static_cast<std::int64_t>(ns) * d),
                       GatherDenseRows<T, VX>{x, sys, rows, d});
  auto X = Kokkos::create_mirror_view(rows);
  Kokkos::deep_copy(X, rows);  // fences
  for (int s = 0; s < ns; ++s) {
    const int m = smp[s];
    double rmax = 0, anorm = 0, xmax = 0, bmax = 0;
    for (int i = 0; i < d; ++i) {
      double ax = 0, arow = 0;
      for (int j = 0; j < d; ++j) {
        const double aij = static_cast<T>(g.A(m, i, j));
        ax += aij * static_cast<double>(X(s, j));
        arow += std::fabs(aij);
      }
      const double bi = static_cast<T>(g.b(m, i));
      rmax = std::max(rmax, std::fabs(ax - bi));
      anorm = std::max(anorm, arow);
      xmax = std::max(xmax, std::fabs(static_cast<double>(X(s, i))));
      bmax = std::max(bmax, std::fabs(bi));
    }
    const double den = anorm * xmax + bmax;
    const double rel = rmax / (den > 0 ? den : 1.0);
    if (!(rel <= tol)) {
      r.ok = false;
      r.msg = kband::impl::concat("host check, matrix ", m, ": backward error ", rel, " > tolerance ", tol);
      return r;
    }
  }
  return r;
}

}  // namespace kband_bench
