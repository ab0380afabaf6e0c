// Shared coefficients, Partition variant (kband::thomas with a
// TridiagonalFactor, Variant::Partition).
//
// Each system is cut into P = ceil(n / M) segments of balanced lengths (at
// most M rows), a thread each, so that a batch of few long systems still has
// nsys P threads. The factor's recurrences are linear in d, and the matrix is
// shared, so what crosses a segment boundary is a fixed linear functional of
// the segment's right-hand sides. With mu_i = -a_i w_i, nu_i = -c'_i and a
// segment of rows s .. e-1:
//   forward   y_i = w_i d_i + mu_i y_{i-1}:   y_{e-1} = t + Pi y_{s-1},
//             t = sum_j alpha_j d_j,  alpha_j = w_j prod_{l=j+1}^{e-1} mu_l;
//   backward  x_i = y_i + nu_i x_{i+1}:       x_s = v + C y_{s-1} + B x_e,
//             v = sum_j gamma_j d_j,  gamma_j = w_j S_j,
//             S_j = beta_j + mu_{j+1} S_{j+1},  beta_i = prod_{l=s}^{i-1} nu_l,
//             B = prod_{l=s}^{e-1} nu_l,  C = sum_i beta_i prod_{l=s}^{i} mu_l.
// alpha, gamma (n values) and Pi, B, C (3 a segment) are computed once with
// the factor (PartitionFactorKernel). A solve then runs three kernels:
//   1. a thread per (system, segment) reads the segment's d and writes t, v
//      (and, periodic, g.d over the segment) to three slots;
//   2. a thread per system walks the segments' slots forward (y at each
//      segment's start) and backward (x past each segment's end), and puts
//      the two values (and the Sherman-Morrison factor) back in the slots;
//   3. a thread per (system, segment) reads its slots and the segment's d
//      again and runs the factor's own forward and backward passes over the
//      segment in registers, from those boundary values, into x.
// A solve thus reads d twice and writes x once, plus 3 slots a segment (the
// Recompute variant's data movement), with nsys P threads where Recompute has
// nsys. It needs no pivots beyond the factor's: the recurrences are those of
// Thomas, regrouped. The slots are rows s, s+1, s+2 of the segment in x itself
// (each segment has at least 3 rows when P > 1: n > M >= 6), which kernel 3 reads
// before it writes the segment; when x is d (in place) they go to a workspace
// instead. With P = 1 kernel 3 alone solves (kernels 1 and 2 are skipped).
#pragma once

#include <limits>
#include <type_traits>

#include "kband_Thomas_impl.hpp"

#ifndef KBAND_PARTITION_ROWS
#define KBAND_PARTITION_ROWS 32
#endif

namespace kband {
namespace impl {

/// Rows a segment of the Partition variant at most.
constexpr int kPartitionRows = KBAND_PARTITION_ROWS;
static_assert(kPartitionRows >= 6, "Partition segments need at least 3 rows each");

/// Segments of a system of n rows: P = ceil(n / M), segment k is rows
/// begin(k) .. begin(k+1)-1 (lengths floor(n/P) or ceil(n/P), at most M).
struct PartitionSegments {
  int n = 0, P = 0;
  KOKKOS_INLINE_FUNCTION static int count(int n, int M) { return (n + M - 1) / M; }
  KOKKOS_INLINE_FUNCTION int begin(int k) const {
    return static_cast<int>(static_cast<long long>(k) * n / P);
  }
};

/// alpha, gamma (per row) and Pi, B, C (per segment, seg(3 k + q)) of a
/// factored shared matrix; a thread per segment.
template <class T, class Mem>
struct PartitionFactorKernel {
  FactorData<T, Mem> f;
  PartitionSegments sg;
  KOKKOS_INLINE_FUNCTION void operator()(const int k) const {
    const int s = sg.begin(k), e = sg.begin(k + 1);
    T G = T(1), beta = T(1), C = T(0);
    for (int i = s; i < e; ++i) {
      f.gamma(i) = beta;  // beta_i, until the backward loop below
      G *= -f.a(i) * f.w(i);
      C += beta * G;
      beta *= -f.cp(i);
    }
    f.seg(3 * k) = G;
    f.seg(3 * k + 1) = beta;
    f.seg(3 * k + 2) = C;
    T A = T(1), S = T(0);
    for (int j = e - 1; j >= s; --j) {
      const T bj = f.gamma(j);
      if (j < e - 1) {
        const T mu = -f.a(j + 1) * f.w(j + 1);
        A *= mu;
        S = bj + mu * S;
      } else {
        S = bj;
      }
      f.alpha(j) = f.w(j) * A;
      f.gamma(j) = f.w(j) * S;
    }
  }
};

/// The Partition kernels' common state: factor, d, x, info, the segments, and
/// where the slots live (rows of x, or ws when x is d).
template <class Exec, class T, class Mem, class BD, class BX, class Info, bool Periodic>
struct PartitionBase {
  FactorData<T, Mem> f;
  BD d;
  BX x;
  Info info;
  PartitionSegments sg;
  int nsys;
  Kokkos::View<T*, typename batch_traits<BX>::memory_space> ws;  // empty: slots in x
  T nan;

  static constexpr int kSlots = Periodic ? 3 : 2;

  KOKKOS_INLINE_FUNCTION T& slot(int s, int k, int q) const {
    return ws.extent(0) ? ws(static_cast<size_t>(k * kSlots + q) * nsys + s) : x(s, sg.begin(k) + q);
  }
  /// Thread i of nsys P: system i % nsys (adjacent threads, adjacent systems),
  /// segment i / nsys.
  KOKKOS_INLINE_FUNCTION void place(long i, int& s, int& k) const {
    k = static_cast<int>(i / nsys);
    s = static_cast<int>(i - static_cast<long>(k) * nsys);
  }
};

/// Kernel 1: a segment's t, v (and g.d) into its slots.
template <class Exec, class T, class Mem, class BD, class BX, class Info, bool Periodic, int M>
struct PartitionSummary : PartitionBase<Exec, T, Mem, BD, BX, Info, Periodic> {
  using PB = PartitionBase<Exec, T, Mem, BD, BX, Info, Periodic>;
  explicit PartitionSummary(const PB& b) : PB(b) {}
  KOKKOS_INLINE_FUNCTION void operator()(const long i) const {
    int s, k;
    this->place(i, s, k);
    if (this->f.info() != 0) return;
    const int j0 = this->sg.begin(k), nr = this->sg.begin(k + 1) - j0;
    const T* dp = &this->d(s, j0);
    const size_t rs = batch_traits<BD>::row_stride(this->d);
    T v[M];
KBAND_UNROLL
    for (int u = 0; u < M; ++u)
      if (u < nr) v[u] = dp[u * rs];
    T t = T(0), w = T(0), q = T(0);
KBAND_UNROLL
    for (int u = 0; u < M; ++u)
      if (u < nr) {
        t += this->f.alpha(j0 + u) * v[u];
        w += this->f.gamma(j0 + u) * v[u];
        if (Periodic) q += this->f.g(j0 + u) * v[u];
      }
    this->slot(s, k, 0) = t;
    this->slot(s, k, 1) = w;
    if (Periodic) this->slot(s, k, 2) = q;
  }
};

/// Kernel 2: per system, y at each segment's start and x past each segment's
/// end (and the Sherman-Morrison factor) into the slots.
template <class Exec, class T, class Mem, class BD, class BX, class Info, bool Periodic>
struct PartitionJoin : PartitionBase<Exec, T, Mem, BD, BX, Info, Periodic> {
  using PB = PartitionBase<Exec, T, Mem, BD, BX, Info, Periodic>;
  explicit PartitionJoin(const PB& b) : PB(b) {}
  KOKKOS_INLINE_FUNCTION void operator()(const int s) const {
    if (this->f.info() != 0) return;
    const int P = this->sg.P;
    T Y = T(0), dot = T(0);
    for (int k = 0; k < P; ++k) {
      T& t = this->slot(s, k, 0);
      const T tk = t;
      t = Y;  // y_{s_k - 1}
      Y = tk + this->f.seg(3 * k) * Y;
      if (Periodic) dot += this->slot(s, k, 2);
    }
    const T fact = Periodic ? (dot + this->f.scal(0) * Y) * this->f.scal(1) : T(0);
    T X = T(0);
    for (int k = P - 1; k >= 0; --k) {
      T& v = this->slot(s, k, 1);
      const T vk = v;
      v = X;  // x past the segment's last row (before the periodic correction)
      X = vk + this->f.seg(3 * k + 2) * this->slot(s, k, 0) + this->f.seg(3 * k + 1) * X;
      if (Periodic) this->slot(s, k, 2) = fact;
    }
  }
};

/// Kernel 3: a segment's forward and backward passes from its boundary
/// values, in registers, into x (P = 1: the whole system, boundary values 0
/// and, periodic, the factor from its own forward pass).
template <class Exec, class T, class Mem, class BD, class BX, class Info, bool Periodic, int M>
struct PartitionSolve : PartitionBase<Exec, T, Mem, BD, BX, Info, Periodic> {
  using PB = PartitionBase<Exec, T, Mem, BD, BX, Info, Periodic>;
  explicit PartitionSolve(const PB& b) : PB(b) {}
  KOKKOS_INLINE_FUNCTION void operator()(const long i) const {
    int s, k;
    this->place(i, s, k);
    const FactorData<T, Mem>& f = this->f;
    const int j0 = this->sg.begin(k), nr = this->sg.begin(k + 1) - j0;
    T* xp = &this->x(s, j0);
    const size_t xs = batch_traits<BX>::row_stride(this->x);
    const int finfo = f.info();
    if (finfo != 0) {
      for (int u = 0; u < nr; ++u) xp[u * xs] = this->nan;
      if (k == 0) this->info(s) = finfo;
      return;
    }
    const bool one = this->sg.P == 1;
    // the slots first: they may be rows of this segment of x
    T yprev = one ? T(0) : this->slot(s, k, 0);
    T xnext = one ? T(0) : this->slot(s, k, 1);
    T fact = Periodic && !one ? this->slot(s, k, 2) : T(0);
    const T* dp = &this->d(s, j0);
    const size_t ds = batch_traits<BD>::row_stride(this->d);
    T y[M];
KBAND_UNROLL
    for (int u = 0; u < M; ++u)
      if (u < nr) y[u] = dp[u * ds];
    T dot = T(0);
KBAND_UNROLL
    for (int u = 0; u < M; ++u)
      if (u < nr) {
        const int j = j0 + u;
        if (Periodic && one) dot += f.g(j) * y[u];
        yprev = (y[u] - f.a(j) * yprev) * f.w(j);
        y[u] = yprev;
      }
    if (Periodic && one) fact = (dot + f.scal(0) * yprev) * f.scal(1);
KBAND_UNROLL
    for (int u = M - 1; u >= 0; --u)
      if (u < nr) {
        const int j = j0 + u;
        xnext = y[u] - f.cp(j) * xnext;
        y[u] = Periodic ? xnext - fact * f.z(j) : xnext;
      }
KBAND_UNROLL
    for (int u = 0; u < M; ++u)
      if (u < nr) xp[u * xs] = y[u];
    if (k == 0) this->info(s) = 0;
  }
};

/// Slots (elements) an in-place Partition solve needs in a workspace.
template <class T, class Mem>
size_t partition_workspace_size(const FactorData<T, Mem>& f, int nsys) {
  const int P = PartitionSegments::count(f.n, kPartitionRows);
  return P > 1 ? static_cast<size_t>(nsys) * P * (f.periodic ? 3 : 2) : 0;
}

/// Launches the Partition variant's kernels.
template <class Exec, class T, class Mem, class BD, class BX, class Info>
void thomas_partition(const char* fn, const Exec& exec, const FactorData<T, Mem>& f, const BD& d, const BX& x,
                      const Info& info, Kokkos::View<T*, typename batch_traits<BX>::memory_space> ws) {
  const int nsys = batch_traits<BX>::nsys(x);
  if (nsys == 0) return;
  constexpr int M = kPartitionRows;
  const PartitionSegments sg{f.n, PartitionSegments::count(f.n, M)};
  const bool inplace = batch_traits<BX>::data(x) == batch_traits<BD>::data(d);
  const size_t need = inplace ? partition_workspace_size(f, nsys) : 0;
  if (need == 0)
    ws = {};
  else if (ws.extent(0) < need)
    ws = decltype(ws)(Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, std::string("kband::thomas::partition_ws")),
                      need);
  const long items = static_cast<long>(nsys) * sg.P;
  auto run = [&](auto periodic) {
    constexpr bool Pd = decltype(periodic)::value;
    const PartitionBase<Exec, T, Mem, BD, BX, Info, Pd> b{f, d, x, info, sg, nsys, ws, std::numeric_limits<T>::quiet_NaN()};
    if (sg.P > 1) {
      Kokkos::parallel_for(fn, Range<Exec, Kokkos::IndexType<long>>(exec, 0, items),
                           PartitionSummary<Exec, T, Mem, BD, BX, Info, Pd, M>(b));
      Kokkos::parallel_for(fn, Range<Exec>(exec, 0, nsys), PartitionJoin<Exec, T, Mem, BD, BX, Info, Pd>(b));
    }
    Kokkos::parallel_for(fn, Range<Exec, Kokkos::IndexType<long>>(exec, 0, items),
                         PartitionSolve<Exec, T, Mem, BD, BX, Info, Pd, M>(b));
  };
  if (f.periodic)
    run(std::true_type());
  else
    run(std::false_type());
}

}  // namespace impl
}  // namespace kband
