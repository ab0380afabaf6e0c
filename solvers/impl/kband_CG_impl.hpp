// kband CG: kernels and the iteration driver shared by the single-rank solver
// (solvers/kband_CG.hpp) and the distributed one (mpi/kband_MPI_CG.hpp).
//
// The iteration never waits for the host. Every reduction is written into a
// device history (r.r and r.z of iteration k in sums(k), p.Ap in pap(k)), and
// every kernel of iteration k decides from that history alone whether it still
// has work: "go(k)" = r.r(k) above tol^2 r.r(0), finite, r.z(k) > 0; iteration
// k's update was applied ("ran(k)") iff p.Ap(k) > 0 and finite. A kernel with
// no work writes 0 into its history slot, so once the solve stops every later
// kernel stops too. The host reads the history every `check_every` iterations
// and finds the exact stopping iteration and its cause there.
//
// Data movement per iteration (n rows, nd stored diagonals, no preconditioner):
//   K1  p_new = r + beta p_old (computed at every neighbour, written once),
//       q = A p_new, p.Ap, and x += alpha_{k-1} p_old       reads A, r, p_old, x; writes p_new, q, x
//   K2  r -= alpha q, r.r                                     reads r, q; writes r
// i.e. the matrix plus 9 vectors, in two kernels. With the line
// preconditioner K1 reads z instead of r, and K2 is LineKernel: r -= alpha q,
// z = T^-1 r, (r.r, r.z); it writes z besides: 10 vectors.
// The one-reduction form (CGReductions::One, CGOneApply; GPUs, no
// preconditioner or Jacobi) does it all in one kernel: reads A, r, q, p_old,
// x; writes r, q, p_new, x: the matrix plus 8 vectors, with the history
// one(k) = (r.r, r.z, p.q, z.q, q.M^-1 q) in place of sums and pap.
#pragma once

#include "kband_CDS.hpp"
#include "kband_Thomas.hpp"

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace kband {

/// How a CG solve ended.
enum class CGStatus {
  Converged,             ///< ||r_k|| <= tol ||r_0||
  MaxIterations,         ///< max_iterations reached first
  NotSPD,                ///< breakdown: p^T A p <= 0, the matrix is not SPD
  PreconditionerNotSPD,  ///< breakdown: r^T M^-1 r <= 0, the preconditioner is not SPD
  NonFinite              ///< b, x0 or A gave a non-finite residual (k = 0), or one appeared later
};

inline const char* cg_status_name(CGStatus s) {
  switch (s) {
    case CGStatus::Converged: return "converged";
    case CGStatus::MaxIterations: return "maximum iterations reached";
    case CGStatus::NotSPD: return "breakdown: matrix not SPD (p^T A p <= 0)";
    case CGStatus::PreconditionerNotSPD: return "breakdown: preconditioner not SPD (r^T z <= 0)";
    default: return "non-finite values (input or iteration)";
  }
}

enum class CGPreconditioner {
  None,    ///< plain CG
  Jacobi,  ///< z = r / diag(A)
  Line,    ///< z = T^-1 r, T = the tridiagonal part (offsets -1, 0, 1) split into independent lines (CDS only)
  /// Symmetric red-black (zebra) line Gauss-Seidel on those lines, run as CG
  /// on the odd lines' Schur complement (CDS only; lines of one length, other
  /// couplings between adjacent lines only: kband_CGZebra_impl.hpp).
  Zebra
};

inline const char* cg_preconditioner_name(CGPreconditioner p) {
  switch (p) {
    case CGPreconditioner::None: return "none";
    case CGPreconditioner::Jacobi: return "jacobi";
    case CGPreconditioner::Line: return "line";
    default: return "zebra";
  }
}

/// The order in which a dense CG product sweeps the matrix (CGOptions::sweeps).
///  - Alternate: odd iterations start from the last rows, so that an
///    iteration begins on the rows the one before it read last, while they
///    are still in cache (H100, 2^12 unknowns: 0.88-0.93x the time per
///    iteration).
///  - Forward: every iteration from the first row (one core of a CPU: the
///    descending order was 1.15-1.26x slower at 2^10 and 2^11).
///  - Auto: Alternate on GPUs, Forward on hosts.
/// CDS matrices always go forward (alternating gained nothing on the H100
/// and lost up to 1.5x on one CPU core).
enum class CGSweeps { Auto, Forward, Alternate };

/// The grid-wide reductions of a CG iteration (CGOptions::reductions).
///  - Two: the textbook recurrence. p.Ap is needed for alpha before the
///    residual update, and r.r (r.z) for beta after it: two reductions, so
///    two kernels an iteration (direction + product + p.Ap; residual + r.r).
///  - One: r_{k+1}.z_{k+1} is known before r_{k+1} exists, from the sums of
///    iteration k: r.z - 2 alpha z.q + alpha^2 q.M^-1 q (q = A p, an identity
///    for any vectors, no conjugacy assumed). One kernel an iteration then
///    updates r and x, forms the direction (at each neighbour on the fly) and
///    q = A p, and sums r.r, r.z, p.q, z.q and q.M^-1 q. alpha uses the r.z
///    summed from the updated r itself, so the recurrence reaches one
///    iteration only (beta's numerator). It moves one vector fewer (the
///    matrix plus 8 vectors, against 9), with r and q double-buffered (two
///    more work vectors). Single-rank CDS matrices with no preconditioner,
///    Jacobi or the zebra (two kernels an iteration against three; see
///    ZebraBlackOne); elsewhere it falls back to Two.
///  - Auto: One where it applies, on GPUs (the zebra: where a black line
///    fits team scratch); Two on hosts (one CPU core: One 1.2-1.4x slower on
///    2D Poisson; the product is not memory-bound there).
enum class CGReductions { Auto, Two, One };

/// The one-reduction form's narrow-band kernel (CGBandApply,
/// CGSolver::narrow_band()), where its data fit a GPU's L2:
///  - Auto: where the matrix also gives the device two of its 2048-row
///    teams for every 2048 threads it holds (two a multiprocessor on NVIDIA
///    GPUs). Fewer teams leave the GPU waiting on each team's chain of
///    loads and barriers: H100, one-reduction form, us an iteration, 1D
///    Laplacian 2^10 .. 2^18 (1-128 teams) 10.4-13.0 against 6.5-10.7 on the
///    row kernel, 2D Poisson 2^12 (2 teams) 19.4-19.7 against 7.7-8.4; 1D
///    Laplacian 2^20 (512 teams) 22.2-22.4 against 33.7-33.9.
///  - Always: wherever its data fit (hosts, where teams are 512 rows of one
///    thread, take this rule under Auto too);
///  - Never: the row kernel (CGOneApply).
enum class CGBand { Auto, Always, Never };

struct CGOptions {
  double tol = 1e-8;       ///< stop when ||r_k||_2 <= tol ||r_0||_2 (seed 003's test)
  int max_iterations = 0;  ///< 0: 2 n + 10
  int check_every = 16;    ///< host reads the residual history every k iterations (k >= 1)
  CGSweeps sweeps = CGSweeps::Auto;  ///< dense matrices: the order of the product's rows (CGSweeps)
  /// GPUs: threads of an iteration's row kernels (the CDS product, the
  /// residual update), each taking rows i, i + work_items, ... (a tuning
  /// knob; hosts ignore it). 0 = kband's choice: the threads the device
  /// holds at once, so that the rows in flight form one contiguous front
  /// and a row's far neighbours (2D Poisson: +-nx) come from L2. A count
  /// also keeps the one-reduction form on that row kernel where it would
  /// take the narrow-band one (CGSolver::narrow_band()), on every backend.
  int work_items = 0;
  /// Reductions per iteration: one kernel or two (CGReductions).
  CGReductions reductions = CGReductions::Auto;
  /// The one-reduction form's narrow-band kernel (CGBand).
  CGBand narrow_band = CGBand::Auto;
  /// Single-rank CDS matrices that are symmetric with each main and upper
  /// diagonal one value on all its rows (constant-coefficient stencils: the
  /// 1D Laplacian) are multiplied from those values without reading the
  /// matrix (CGSolver::constant_diagonals()); the products are the same to
  /// the bit. false: read the matrix all the same.
  bool constant_diagonals = true;
};

/// Outcome of a CG solve. history[k] = ||r_k|| / ||r_0|| for k = 0..iterations
/// (the recursively updated residual, as in the seed); x holds the last iterate.
struct CGResult {
  CGStatus status = CGStatus::MaxIterations;
  int iterations = 0;
  double relative_residual = 0;
  std::vector<double> history;
  /// The form the solve ran: One or Two (CGOptions::reductions; Auto resolved).
  CGReductions reductions = CGReductions::Two;
  bool converged() const { return status == CGStatus::Converged; }
  const char* message() const { return cg_status_name(status); }
};

namespace impl {

/// The two sums of the residual update (r.r, r.z), reduced together.
template <class T>
struct CGSums {
  T rr, rz;
  KOKKOS_INLINE_FUNCTION CGSums() : rr(0), rz(0) {}
  KOKKOS_INLINE_FUNCTION CGSums& operator+=(const CGSums& o) {
    rr += o.rr;
    rz += o.rz;
    return *this;
  }
  KOKKOS_INLINE_FUNCTION void operator+=(const volatile CGSums& o) volatile {
    rr += o.rr;
    rz += o.rz;
  }
};

/// The sums of one kernel of the one-reduction CG (CGReductions::One), for
/// iteration k: r.r, r.z, p.q, z.q and q.M^-1 q (z = M^-1 r, q = A p).
template <class T>
struct CGOneSums {
  T rr, rz, pap, zq, qmq;
  KOKKOS_INLINE_FUNCTION CGOneSums() : rr(0), rz(0), pap(0), zq(0), qmq(0) {}
  KOKKOS_INLINE_FUNCTION CGOneSums& operator+=(const CGOneSums& o) {
    rr += o.rr;
    rz += o.rz;
    pap += o.pap;
    zq += o.zq;
    qmq += o.qmq;
    return *this;
  }
  KOKKOS_INLINE_FUNCTION void operator+=(const volatile CGOneSums& o) volatile {
    rr += o.rr;
    rz += o.rz;
    pap += o.pap;
    zq += o.zq;
    qmq += o.qmq;
  }
};

template <class T>
KOKKOS_INLINE_FUNCTION bool finite_(const T v) {
  return v == v && abs_(v) <= real_limits<T>::max();
}

/// The device history and the per-iteration decisions every kernel makes.
template <class T, class Mem>
struct CGState {
  Kokkos::View<CGSums<T>*, Mem> sums;  // (max_iterations + 1)
  Kokkos::View<T*, Mem> pap;           // (max_iterations + 1)
  Kokkos::View<CGOneSums<T>*, Mem> one;  // CGReductions::One: the history instead of sums and pap
  T tol2 = 0;
  int k = 0;
  // Rows of a work item: the per-iteration scalars below (go, alpha, beta:
  // history reads and divisions) are evaluated once per item, not per row.
  // CPUs: item c = the block of `chunk` (512) consecutive rows from c*chunk,
  // so the row loop vectorises. GPUs: item c = rows c, c + W, c + 2W, ...
  // (W = items), so a warp's items are consecutive rows and every access
  // stays coalesced. W is the number of threads the device holds at once
  // (CGOptions::work_items), so that each thread takes one item, and the
  // rows in flight at any moment are one contiguous stretch of the matrix:
  // a row's neighbours +-nx were then read a moment before, by threads of
  // the same stretch, and come from L2. (Items of 4 rows, W = n / 4, which
  // Kokkos deals out to its reduction blocks in contiguous ranges, spread
  // the rows in flight over the whole matrix; H100, 2D Poisson 2^22: the
  // product read 8.4 elements a row from memory instead of 6.)
  int n = 0, chunk = 1, items = 0;
  bool strided = false;
  // The dense product's sweep direction (CGDenseSymApply, CGSweeps):
  // flipped, it takes the tiles from the last one, each from its last row up.
  bool flip = false;
  // The one-reduction form may take the narrow-band kernel (CGBandApply):
  // CGOptions::work_items is 0 (a set count tunes the row kernel) and
  // CGOptions::narrow_band is not Never; band_any: Always.
  bool band = true, band_any = false;
  // CDS operators may multiply from constant diagonals (CGOptions::constant_diagonals).
  bool cdiag = true;
  // (The kernels' Blocks parameter, !is_device_exec, relies on this mapping.)
  void set_rows(const int rows, const bool device, const int threads) {
    n = rows;
    strided = device;
    if (device) {
      items = threads > 0 && threads < n ? threads : (n > 0 ? n : 1);
      chunk = (n + items - 1) / items;
    } else {
      chunk = 512;
      items = (n + chunk - 1) / chunk;
    }
  }
  int chunks() const { return items; }
  /// Rows of item c: first(c), first(c) + step(), ... below last(c).
  KOKKOS_INLINE_FUNCTION int first(const int c) const { return strided ? c : c * chunk; }
  KOKKOS_INLINE_FUNCTION int last(const int c) const {
    return strided || (c + 1) * chunk > n ? n : (c + 1) * chunk;
  }
  KOKKOS_INLINE_FUNCTION int step() const { return strided ? items : 1; }
  KOKKOS_INLINE_FUNCTION bool go() const {
    const CGSums<T> s = sums(k);
    return s.rr > tol2 * sums(0).rr && finite_(s.rr) && s.rz > T(0) && finite_(s.rz);
  }
  KOKKOS_INLINE_FUNCTION bool ran(const int j) const { return pap(j) > T(0) && finite_(pap(j)); }
  KOKKOS_INLINE_FUNCTION T alpha(const int j) const { return sums(j).rz / pap(j); }
  KOKKOS_INLINE_FUNCTION T beta() const { return k == 0 ? T(0) : sums(k).rz / sums(k - 1).rz; }
};

enum { kPrecNone = 0, kPrecJacobi = 1, kPrecLine = 2 };

/// Blocks of 256 threads per multiprocessor the one-reduction kernel
/// (CGOneApply) is built for. Kokkos' CUDA reduction of its 40-byte sums
/// needs 62 registers even around an empty loop, so it runs at 64 (4
/// blocks, half the threads an H100 multiprocessor holds), with as many work
/// items as fit at once (one wave, 8 rows a thread at 2^20). H100, 2D
/// Poisson, us per iteration: 2^20 47.0 (4 blocks, one wave), 51.2 (4
/// blocks, items for 8: two waves), 71.0 (8 blocks: 32 registers, 176-240
/// bytes of spills); two reductions 52.8. 2^22: 158.7 against 175.4.
constexpr int kCGOneBlocks = 4;

/// Range policy of the CG row kernels (one work item per CGState item). On
/// GPUs the kernels are capped at 32 registers with 256-thread blocks, so
/// that Kokkos' reduction grid (sized for the threads the device holds at
/// once) runs in one wave instead of one and a third (H200: 40 registers
/// left 6 of its 8 blocks per multiprocessor resident).
template <class Exec>
using CGPolicy = impl::Range<Exec, Kokkos::LaunchBounds<256, 8>>;

/// The search direction p_new(j) = z(j) + beta p_old(j), z = r, r/diag or the line solve.
/// p vectors carry a halo of h entries each side (h = 0 on one rank).
template <class T, class Mem, int Prec>
struct CGDir {
  Kokkos::View<const T*, Mem> r, aux, pold;  // aux: 1/diag (Jacobi) or z (Line)
  T beta;
  int h;
  KOKKOS_INLINE_FUNCTION T operator()(const int j) const {
    const T z = Prec == kPrecNone ? r(j) : (Prec == kPrecJacobi ? aux(j) * r(j) : aux(j));
    return z + beta * pold(j + h);
  }
};

/// Fields shared by the kernels that start an iteration.
template <class T, class Mem, int Prec>
struct CGStep {
  static constexpr int prec = Prec;
  CGState<T, Mem> st;
  Kokkos::View<const T*, Mem> r, aux, pold;
  Kokkos::View<T*, Mem> pnew, x;
  int h;
  /// The deferred x += alpha_{k-1} p_{k-1} of the previous iteration: its alpha, or 0 (no update).
  KOKKOS_INLINE_FUNCTION T x_alpha() const { return st.k > 0 && st.ran(st.k - 1) ? st.alpha(st.k - 1) : T(0); }
  KOKKOS_INLINE_FUNCTION CGDir<T, Mem, Prec> dir() const { return {r, aux, pold, st.beta(), h}; }
};

/// K1 on a CDS matrix on one rank: the direction at each neighbour on the
/// fly, q = A p_new, p.Ap; x update of the previous iteration.
/// Blocks (CPUs, set from the execution space): the item is a block of
/// consecutive rows, multiplied diagonal by diagonal. GPUs compile only the
/// row-by-row path (the block path's partial sums would spill at their
/// 32-register cap).
template <class Row, class T, class Mem, int Prec, bool Blocks, bool Groups = false>
struct CGFusedApply {
  CGStep<T, Mem, Prec> s;
  Row row;
  Kokkos::View<T*, Mem> q;
  KOKKOS_INLINE_FUNCTION void operator()(const int c, T& pap) const {
    const T a = s.x_alpha();
    const bool go = s.st.go();
    if constexpr (Blocks) {  // a block of consecutive rows, diagonal by diagonal
      if (a != T(0))
        for (int i = s.st.first(c), e = s.st.last(c); i < e; ++i) s.x(i) += a * s.pold(i);
      if (!go) return;
      const CGDir<T, Mem, Prec> d = s.dir();
      const int i0 = s.st.first(c), i1 = s.st.last(c);
      row.apply_rows(i0, i1, d, q, 0, row.n);
      T s0 = 0, s1 = 0, s2 = 0, s3 = 0;  // four partial sums: the loop vectorises
      auto row_i = [&](const int i) {
        const T pi = d(i);
        s.pnew(i) = pi;
        return pi * q(i);
      };
      int i = i0;
      for (; i + 3 < i1; i += 4) {
        s0 += row_i(i);
        s1 += row_i(i + 1);
        s2 += row_i(i + 2);
        s3 += row_i(i + 3);
      }
      for (; i < i1; ++i) s0 += row_i(i);
      pap += (s0 + s1) + (s2 + s3);
      return;
    }
    if (a == T(0) && !go) return;
    const CGDir<T, Mem, Prec> d = s.dir();
    // Groups (items of more than 4 rows): the item's rows in groups of 4,
    // each updated and then multiplied (its rows lie far apart: a pass over
    // all of them between the two would evict p_old; one loop doing both
    // spills at the 32-register cap). The loop over groups costs a few
    // registers and spills 8-32 bytes, so items of at most 4 rows (n up to
    // 4x the threads the device holds) use the plain form (H100, 2^20 rows:
    // 7-10 % faster).
    const int e = s.st.last(c), di = s.st.step();
    for (int g = s.st.first(c); g < e; g += 4 * di) {
      const int ge = !Groups || e - g <= 4 * di ? e : g + 4 * di;
      if (a != T(0))
        for (int i = g; i < ge; i += di) s.x(i) += a * s.pold(i);
      if (go)
        for (int i = g; i < ge; i += di) {
          const T qi = row.apply(i, d, 0, row.n);
          const T pi = d(i);
          s.pnew(i) = pi;
          q(i) = qi;
          pap += pi * qi;
        }
      if (!Groups) break;
    }
  }
};

/// The buffers of one kernel of the one-reduction CG (CGReductions::One):
/// r, q and p of iteration k - 1 (at k = 0: b, A x0 and 0), and the other
/// buffer of each pair, which kernel k writes.
template <class T, class Mem>
struct CGOneFields {
  CGState<T, Mem> st;
  Kokkos::View<const T*, Mem> rold, qold, pold, aux;  // aux: 1/diag (Jacobi)
  Kokkos::View<T*, Mem> rnew, qnew, pnew, x;
  /// Iteration k's scalars from one(k - 1): alpha_{k-1} (the residual and x
  /// update) and beta_k. False when iteration k - 1 stopped (r_{k-1} within
  /// the tolerance, r.z <= 0, p.q <= 0 or non-finite): the kernel then sums
  /// zeros, and so every later one does nothing either. k = 0: alpha = 1
  /// (r_0 = b - A x0; p = 0, so x is unchanged), beta = 0.
  KOKKOS_INLINE_FUNCTION bool scalars(T& a, T& beta) const {
    if (st.k == 0) {
      a = T(1);
      beta = T(0);
      return true;
    }
    const CGOneSums<T> h = st.one(st.k - 1);
    if (!(h.rr > st.tol2 * st.one(0).rr && finite_(h.rr) && h.rz > T(0) && finite_(h.rz) && h.pap > T(0) &&
          finite_(h.pap)))
      return false;
    a = h.rz / h.pap;
    // r_k.z_k = |r_{k-1} - a q_{k-1}|_M^-1^2, before r_k exists
    const T next = h.rz - T(2) * a * h.zq + a * a * h.qmq;
    beta = next > T(0) ? next / h.rz : T(0);
    return true;
  }
};

/// Iteration k's direction at any row j, from the buffers of k - 1:
/// p_k(j) = M^-1 (r_{k-1}(j) - a q_{k-1}(j)) + beta p_{k-1}(j).
template <class T, class Mem, int Prec>
struct CGOneDir {
  Kokkos::View<const T*, Mem> r, q, p, aux;
  T a, beta;
  KOKKOS_INLINE_FUNCTION T operator()(const int j) const {
    const T rj = r(j) - a * q(j);
    return (Prec == kPrecJacobi ? aux(j) * rj : rj) + beta * p(j);
  }
};

/// Kernel k of the one-reduction CG on a CDS matrix on one rank
/// (CGReductions::One): r_k = r_{k-1} - alpha q_{k-1}, x += alpha p_{k-1},
/// p_k = M^-1 r_k + beta p_{k-1} (at each neighbour on the fly), q_k = A p_k,
/// and one(k) = (r.r, r.z, p.q, z.q, q.M^-1 q). Blocks: as in CGFusedApply.
template <class Row, class T, class Mem, int Prec, bool Blocks>
struct CGOneApply {
  CGOneFields<T, Mem> f;
  Row row;
  using value_type = CGOneSums<T>;
  KOKKOS_INLINE_FUNCTION void operator()(const int c, CGOneSums<T>& sums) const {
    T a, beta;
    if (!f.scalars(a, beta)) return;
    const CGOneDir<T, Mem, Prec> d{f.rold, f.qold, f.pold, f.aux, a, beta};
    // row i, once q_i is known: the updates and the sums
    auto row_i = [&](const int i, const T qi, CGOneSums<T>& s) {
      const T po = f.pold(i);
      const T ri = f.rold(i) - a * f.qold(i);
      const T zi = Prec == kPrecJacobi ? f.aux(i) * ri : ri;
      const T pi = zi + beta * po;
      f.rnew(i) = ri;
      f.pnew(i) = pi;
      f.x(i) += a * po;  // k = 0: p_{-1} = 0
      s.rr += ri * ri;
      s.pap += pi * qi;
      s.zq += zi * qi;
      if (Prec == kPrecJacobi) {
        s.rz += ri * zi;
        s.qmq += qi * qi * f.aux(i);
      } else {
        s.qmq += qi * qi;
      }
    };
    CGOneSums<T> s0;
    if constexpr (Blocks) {  // consecutive rows: the product diagonal by diagonal, four partial sums
      const int i0 = f.st.first(c), i1 = f.st.last(c);
      row.apply_rows(i0, i1, d, f.qnew, 0, row.n);
      CGOneSums<T> s1, s2, s3;
      int i = i0;
      for (; i + 3 < i1; i += 4) {
        row_i(i, f.qnew(i), s0);
        row_i(i + 1, f.qnew(i + 1), s1);
        row_i(i + 2, f.qnew(i + 2), s2);
        row_i(i + 3, f.qnew(i + 3), s3);
      }
      for (; i < i1; ++i) row_i(i, f.qnew(i), s0);
      s0 += s1;
      s2 += s3;
      s0 += s2;
    } else {
      for (int i = f.st.first(c), e = f.st.last(c), di = f.st.step(); i < e; i += di) {
        const T qi = row.apply(i, d, 0, row.n);
        f.qnew(i) = qi;
        row_i(i, qi, s0);
      }
    }
    if (Prec != kPrecJacobi) s0.rz = s0.rr;
    sums += s0;
  }
  KOKKOS_INLINE_FUNCTION void init(CGOneSums<T>& s) const { s = CGOneSums<T>(); }
  KOKKOS_INLINE_FUNCTION void join(CGOneSums<T>& a, const CGOneSums<T>& b) const { a += b; }
  KOKKOS_INLINE_FUNCTION void join(volatile CGOneSums<T>& a, const volatile CGOneSums<T>& b) const { a += b; }
};

/// Rows a thread of CGBandApply takes on GPUs (teams of 256: chunks of 2048
/// rows, so that 2^20 rows are one wave of 4 teams a multiprocessor); hosts
/// run one thread a team with KBAND_CG_BAND_HOST_ROWS rows.
/// (Hosts take the two-reduction form by default; forced, the narrow-band
/// kernel took 3.6x the two-kernel time on one CPU core, 1D Laplacian
/// 2^16-2^18: three products a row, none vectorised.)
#ifndef KBAND_CG_BAND_ROWS
#define KBAND_CG_BAND_ROWS 8
#endif
#ifndef KBAND_CG_BAND_HOST_ROWS
#define KBAND_CG_BAND_HOST_ROWS 512
#endif
/// Rows whose loads a thread of CGBandApply issues together (GPUs): rows
/// that read the matrix, and rows of constant diagonals (CDSConstSymRow),
/// which load only r and x.
#ifndef KBAND_CG_BAND_BATCH
#define KBAND_CG_BAND_BATCH 4
#endif
#ifndef KBAND_CG_BAND_BATCH_CONST
#define KBAND_CG_BAND_BATCH_CONST 2
#endif
/// The narrow-band kernel serves matrices whose iteration data (x, r, p and
/// the diagonals it reads) take at most this many MiB: where they stay in a
/// GPU's L2 cache between iterations. Larger ones take the row kernel
/// (CGOneApply), which streams from memory more efficiently (H100, 1D
/// Laplacian read from the matrix: narrow band 36.7 us an iteration at 2^20
/// (40 MiB) against 41.4; 167 against 141 at 2^22; 634 against 558 at 2^24).
#ifndef KBAND_CG_BAND_MAX_MIB
#define KBAND_CG_BAND_MAX_MIB 48
#endif

/// The narrow-band one-reduction kernel's state: r and p in place, and the
/// halo side buffers, by parity of k: team c's first and last 2w rows of p
/// at hp(par, c, 0 .. 4w), its first and last w rows of r at hr(par, c, 0 .. 2w).
template <class T, class Mem>
struct CGBandBuffers {
  Kokkos::View<T*, Mem> r, p, hp, hr;
};

/// The one-reduction CG kernel for CDS matrices of a narrow band (half
/// bandwidth w, 4 w <= the chunk a team takes): a team a chunk of
/// consecutive rows, q never stored. q_{k-1} = A p_{k-1} is formed again from
/// p_{k-1} in team scratch (rows c0 - 2w .. c1 + 2w), then r_k, p_k (rows c0
/// - w .. c1 + w) and q_k = A p_k on the chunk, x += alpha p_{k-1}, and
/// one(k) as CGOneApply sums it. r and p are updated in place; the rows a
/// neighbour needs come from the side buffers written in iteration k - 1.
/// So an iteration reads x, r, p and the matrix and writes x, r and p: 6
/// vectors (CGOneApply: 8), and the work vectors are x, r and p only.
/// A thread takes rows me, me + team size, ... of the chunk, R in all, and
/// issues the loads of B of them before it stores anything (the stores could
/// alias the loads as far as the compiler knows); it keeps no row across
/// the team barriers: r_k is read again from r (its own store) for z.q.
/// Kernel 0: r_{-1} = b, p_{-1} = x0 (read in place of the buffers), alpha
/// = 1: r_0 = b - A x0, p_0 = M^-1 r_0; x is not updated.
template <class Exec, class Row, class T, class Mem, int Prec, int R, int B>
struct CGBandApply {
  using member = typename Kokkos::TeamPolicy<Exec>::member_type;
  using Scratch = Kokkos::View<T*, typename Exec::scratch_memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  using value_type = CGOneSums<T>;
  static_assert(R % B == 0, "CGBandApply: rows a thread a multiple of the batch");
  CGOneFields<T, Mem> f;
  CGBandBuffers<T, Mem> bb;
  Row row;
  int w, teams;

  static constexpr int kTeam = is_device_exec<Exec>::value ? 256 : 1;
  static constexpr int kChunk = R * kTeam;
  KOKKOS_INLINE_FUNCTION static size_t scratch_values(const int w) { return 2 * static_cast<size_t>(kChunk) + 8 * w; }
  struct At {  // scratch vector of rows from `first`
    const T* v;
    int first;
    KOKKOS_INLINE_FUNCTION T operator()(const int j) const { return v[j - first]; }
  };
  KOKKOS_INLINE_FUNCTION T prec(const T rv, const int j) const { return Prec == kPrecJacobi ? f.aux(j) * rv : rv; }

  KOKKOS_INLINE_FUNCTION void operator()(const member& m, CGOneSums<T>& sums) const {
    T a, beta;
    if (!f.scalars(a, beta)) return;  // the same for the whole team
    const int k = f.st.k, n = row.n, c = m.league_rank(), ts = m.team_size(), me = m.team_rank();
    const int c0 = c * kChunk, c1 = c0 + kChunk < n ? c0 + kChunk : n;
    Scratch buf(m.team_scratch(0), scratch_values(w));
    T* const P = buf.data();           // p_{k-1}, rows c0 - 2w .. c1 + 2w
    T* const PN = P + kChunk + 4 * w;  // p_k, rows c0 - w .. c1 + w
    T* const RH = PN + kChunk + 2 * w;  // r_{k-1} at rows c0 - w .. c0 and c1 .. c1 + w
    const Kokkos::View<const T*, Mem> rsrc = k == 0 ? f.rold : Kokkos::View<const T*, Mem>(bb.r);
    const Kokkos::View<const T*, Mem> psrc = k == 0 ? Kokkos::View<const T*, Mem>(f.x) : Kokkos::View<const T*, Mem>(bb.p);
    const int prev = ((k + 1) % 2) * teams, cur = (k % 2) * teams;
    // p_{k-1} and r_{k-1} at row j outside the chunk: in place at k = 0,
    // else the neighbour's side buffer (its first or last rows)
    auto p_out = [&](const int j) {
      if (k == 0) return psrc(j);
      return j < c0 ? bb.hp((prev + c - 1) * 4 * w + 2 * w + (j - (c0 - 2 * w))) : bb.hp((prev + c + 1) * 4 * w + (j - c1));
    };
    auto r_out = [&](const int j) {
      if (k == 0) return rsrc(j);
      return j < c0 ? bb.hr((prev + c - 1) * 2 * w + w + (j - (c0 - w))) : bb.hr((prev + c + 1) * 2 * w + (j - c1));
    };
    // (j_u = c0 + me + u ts; jj: a row to load that exists)
    auto rowof = [&](const int u) { return c0 + me + u * ts; };
    auto inside = [&](const int j) { return j < c1 ? j : c1 - 1; };
    {
      T v[R];
      for (int u = 0; u < R; ++u) v[u] = psrc(inside(rowof(u)));
      for (int u = 0; u < R; ++u)
        if (rowof(u) < c1) P[rowof(u) - (c0 - 2 * w)] = v[u];
    }
    for (int i = me; i < 4 * w; i += ts) {
      const int j = i < 2 * w ? c0 - 2 * w + i : c1 + i - 2 * w;
      P[j - (c0 - 2 * w)] = j < 0 || j >= n ? T(0) : p_out(j);
    }
    for (int i = me; i < 2 * w; i += ts) {
      const int j = i < w ? c0 - w + i : c1 + i - w;
      RH[i] = j < 0 || j >= n ? T(0) : r_out(j);
    }
    m.team_barrier();
    const At pa{P, c0 - 2 * w}, pn{PN, c0 - w};
    CGOneSums<T> s;
    // r_k and p_k at the chunk's rows (r_k in place), x += alpha p_{k-1};
    // then p_k at the w rows either side
    for (int u0 = 0; u0 < R; u0 += B) {
      T qv[B], rv[B], xv[B];
      for (int b = 0; b < B; ++b) {
        const int jj = inside(rowof(u0 + b));
        qv[b] = row.apply(jj, pa, 0, n);
        rv[b] = rsrc(jj);
        xv[b] = k > 0 ? f.x(jj) : T(0);
      }
      for (int b = 0; b < B; ++b) {
        const int j = rowof(u0 + b);
        if (j < c1) {
          const T rj = rv[b] - a * qv[b], pj = pa(j), zj = prec(rj, j);
          bb.r(j) = rj;
          PN[j - (c0 - w)] = zj + beta * pj;
          if (k > 0) f.x(j) = xv[b] + a * pj;
          s.rr += rj * rj;
          s.rz += rj * zj;
        }
      }
    }
    for (int i = me; i < 2 * w; i += ts) {
      const int j = i < w ? c0 - w + i : c1 + i - w;
      PN[j - (c0 - w)] = j < 0 || j >= n ? T(0) : prec(RH[i] - a * row.apply(j, pa, 0, n), j) + beta * pa(j);
    }
    m.team_barrier();
    // q_k on the chunk; p_k to p and the side buffers with r_k's edges
    for (int u0 = 0; u0 < R; u0 += B) {
      T qv[B], rv[B];
      for (int b = 0; b < B; ++b) {
        const int jj = inside(rowof(u0 + b));
        qv[b] = row.apply(jj, pn, 0, n);
        rv[b] = bb.r(jj);
      }
      for (int b = 0; b < B; ++b) {
        const int j = rowof(u0 + b);
        if (j < c1) {
          const T qi = qv[b], pi = pn(j), ri = rv[b];
          bb.p(j) = pi;
          const int jf = j - c0, jl = j - (c1 - 2 * w);
          if (jf < 2 * w) bb.hp((cur + c) * 4 * w + jf) = pi;
          if (jl >= 0) bb.hp((cur + c) * 4 * w + 2 * w + jl) = pi;
          if (jf < w) bb.hr((cur + c) * 2 * w + jf) = ri;
          if (jl >= w) bb.hr((cur + c) * 2 * w + jl) = ri;
          s.pap += pi * qi;
          s.zq += prec(ri, j) * qi;
          s.qmq += Prec == kPrecJacobi ? qi * qi * f.aux(j) : qi * qi;
        }
      }
    }
    sums += s;
  }
  KOKKOS_INLINE_FUNCTION void init(CGOneSums<T>& v) const { v = CGOneSums<T>(); }
  KOKKOS_INLINE_FUNCTION void join(CGOneSums<T>& v, const CGOneSums<T>& o) const { v += o; }
  KOKKOS_INLINE_FUNCTION void join(volatile CGOneSums<T>& v, const volatile CGOneSums<T>& o) const { v += o; }
};

/// CGDriver takes the one-reduction form for operators with
/// `static constexpr bool kOneReduction = true` and a step_one<Prec>(exec,
/// CGOneFields, slot).
template <class Op, class = void>
struct cg_one_reduction : std::false_type {};
template <class Op>
struct cg_one_reduction<Op, std::void_t<decltype(Op::kOneReduction)>> : std::integral_constant<bool, Op::kOneReduction> {};
/// ... and `static constexpr bool kOneLine = true` when its step_one also
/// runs under the line preconditioner (the zebra operator).
template <class Op, class = void>
struct cg_one_line : std::false_type {};
template <class Op>
struct cg_one_line<Op, std::void_t<decltype(Op::kOneLine)>> : std::integral_constant<bool, Op::kOneLine> {};
/// Whether CGReductions::Auto may take the one-reduction form: the
/// operator's one_auto() where it has one (the zebra: its lines fit the
/// black kernel's team scratch), else true.
template <class Op>
auto cg_one_auto(const Op& op, int) -> decltype(op.one_auto()) {
  return op.one_auto();
}
template <class Op>
bool cg_one_auto(const Op&, long) {
  return true;
}
/// Whether the operator's one-reduction form is CGBandApply (6 vectors an
/// iteration, no second r and q buffers).
template <class Op>
auto cg_narrow_band(const Op& op, const bool cdiag, const bool any, int) -> decltype(op.narrow_band(cdiag, any)) {
  return op.narrow_band(cdiag, any);
}
template <class Op>
bool cg_narrow_band(const Op&, bool, bool, long) {
  return false;
}
/// Whether the operator multiplies from constant diagonals (CDSConstSymRow).
template <class Op>
auto cg_constant(const Op& op, int) -> decltype(op.constant) {
  return op.constant;
}
template <class Op>
bool cg_constant(const Op&, long) {
  return false;
}

/// K1a of the split form (distributed CG): direction and x only.
template <class T, class Mem, int Prec>
struct CGDirection {
  CGStep<T, Mem, Prec> s;
  KOKKOS_INLINE_FUNCTION void operator()(const int c) const {
    const T a = s.x_alpha();
    const bool go = s.st.go();
    if (a == T(0) && !go) return;
    const CGDir<T, Mem, Prec> d = s.dir();
    for (int i = s.st.first(c), e = s.st.last(c), di = s.st.step(); i < e; i += di) {
      if (a != T(0)) s.x(i) += a * s.pold(i + s.h);
      if (go) s.pnew(i + s.h) = d(i);
    }
  }
};

/// A halo'd vector read at block column j: p(j + h).
template <class T, class Mem>
struct CGShifted {
  Kokkos::View<const T*, Mem> p;
  int h;
  KOKKOS_INLINE_FUNCTION T operator()(const int j) const { return p(j + h); }
};

/// K1b of the split form on a CDS block with halo h: q = A p, p.Ap (rows of
/// the block; p(j + h) for block column j, j in [-h, nloc + h)). Blocks: as
/// in CGFusedApply.
template <class Row, class T, class Mem, bool Blocks>
struct CGHaloApply {
  CGState<T, Mem> st;
  Row row;
  Kokkos::View<const T*, Mem> p;
  Kokkos::View<T*, Mem> q;
  int h, lo, hi;  // readable block columns [lo, hi)
  using Shifted = CGShifted<T, Mem>;
  KOKKOS_INLINE_FUNCTION void operator()(const int c, T& pap) const {
    if (!st.go()) return;
    if constexpr (Blocks) {
      const int i0 = st.first(c), i1 = st.last(c);
      row.apply_rows(i0, i1, Shifted{p, h}, q, lo, hi);
      T s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      int i = i0;
      for (; i + 3 < i1; i += 4) {
        s0 += p(i + h) * q(i);
        s1 += p(i + 1 + h) * q(i + 1);
        s2 += p(i + 2 + h) * q(i + 2);
        s3 += p(i + 3 + h) * q(i + 3);
      }
      for (; i < i1; ++i) s0 += p(i + h) * q(i);
      pap += (s0 + s1) + (s2 + s3);
      return;
    }
    for (int i = st.first(c), e = st.last(c), di = st.step(); i < e; i += di) {
      const T qi = row.apply(i, Shifted{p, h}, lo, hi);
      q(i) = qi;
      pap += p(i + h) * qi;
    }
  }
};

/// K1 on a dense matrix (one rank), reading the upper triangle only (A is
/// symmetric, as CG requires; BLAS symv does the same): half the matrix's
/// bytes. The matrix is cut into square tiles of TB x TB; a team takes one
/// tile (I, J), I <= J, and finds both its row sums A_IJ p_J (for the rows of
/// block I) and, off the diagonal, its column sums A_IJ^T p_I (for the rows
/// of block J), with p_new = z + beta p_old formed on the fly. Each is written
/// once into a slot of the partial-sum array part(x, i), x = the other
/// block: every (x, i) has exactly one writer per iteration, so q = the sum
/// over x (CGDenseAssemble) is deterministic. p.Ap is summed tile by tile
/// (p_I.A_IJ p_J + p_J.A_IJ^T p_I). The diagonal tiles write p_new and the
/// x update of the previous iteration for their rows.
///
/// Inside a team of W threads, thread w takes rows w, w + W, ... of the
/// tile; its vector lane l takes columns l, l + V, ... (V = Lanes,
/// compile-time: 32 on GPUs, so a row's loads are coalesced; 1 on CPUs,
/// where the column loops vectorise). A lane keeps its columns' p and column sums in registers and
/// leaves its share of each row sum in team scratch; the shares are added
/// after one barrier. A LayoutLeft matrix is read as its transpose (the same
/// matrix), so that lanes always run along memory.
template <int TB>
struct DenseTiles {
  int n = 0, nt = 0;  // rows, tiles per side
  KOKKOS_INLINE_FUNCTION int count() const { return nt * (nt + 1) / 2; }
  /// Tile (I, J), I <= J, of league rank r (row I holds nt - I tiles).
  KOKKOS_INLINE_FUNCTION void tile(const int r, int& I, int& J) const {
    int i = 0, left = r;
    while (left >= nt - i) {
      left -= nt - i;
      ++i;
    }
    I = i;
    J = i + left;
  }
};

/// Rows a thread of the dense product takes per step (its loads in flight).
#ifndef KBAND_CG_DENSE_ROWS
#define KBAND_CG_DENSE_ROWS 2
#endif
/// Tile side of the dense product, and its threads per team on GPUs (each a
/// warp of vector lanes). H100, n = 1024 / 4096, us per iteration: 128 and
/// 8 (kept) 25.3 / 53.6; 64 and 4, 8, 16: 26.1 / 74.7, 22.7 / 88.0,
/// 22.6 / 112.8; 128 and 16 needs more than 48 KB of team scratch.
#ifndef KBAND_CG_DENSE_TILE
#define KBAND_CG_DENSE_TILE 128
#endif
#ifndef KBAND_CG_DENSE_THREADS
#define KBAND_CG_DENSE_THREADS 8
#endif
template <class Exec, class VA, class T, class Mem, int Prec, int Lanes, int TB>
struct CGDenseSymApply {
  CGStep<T, Mem, Prec> s;
  VA A;
  Kokkos::View<T**, Kokkos::LayoutRight, Mem> part;  // (nt, n)
  DenseTiles<TB> tiles;
  static constexpr int C = TB / Lanes;  // columns per lane
  static constexpr int RU = KBAND_CG_DENSE_ROWS;  // rows per step of a thread
  static constexpr bool kLeft = std::is_same<typename VA::array_layout, Kokkos::LayoutLeft>::value;
  using member = typename Kokkos::TeamPolicy<Exec>::member_type;

  KOKKOS_INLINE_FUNCTION T at(const int i, const int j) const { return kLeft ? A(j, i) : A(i, j); }
  // team scratch: each lane's share of each row sum (rows of TB + 1 slots,
  // so that phase 2's reads are free of bank conflicts), each thread's
  // column sums, each lane's share of p.Ap
  static constexpr int kRowStride = Lanes + 1;
  static size_t scratch_bytes(const int threads) {
    return (static_cast<size_t>(TB) * kRowStride + threads * TB + threads * Lanes) * sizeof(T);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member& t, T& pap) const {
    int I, J;
    // flipped (odd iterations of CGSweeps::Alternate): the tiles from the
    // last one, and each tile's rows from its last row up
    const bool flip = s.st.flip;
    tiles.tile(flip ? t.league_size() - 1 - t.league_rank() : t.league_rank(), I, J);
    const int n = tiles.n, i0 = I * TB, j0 = J * TB;
    const int nr = n - i0 < TB ? n - i0 : TB, nc = n - j0 < TB ? n - j0 : TB;
    const bool diag = I == J;
    const T a = s.x_alpha();
    const int nth = t.team_size(), w = t.team_rank();
    const bool go = s.st.go();
    const CGDir<T, Mem, Prec> d = s.dir();
    T* rowpart = static_cast<T*>(t.team_shmem().get_shmem(static_cast<size_t>(TB) * kRowStride * sizeof(T)));
    T* colpart = static_cast<T*>(t.team_shmem().get_shmem(static_cast<size_t>(nth) * TB * sizeof(T)));
    T* lanepap = static_cast<T*>(t.team_shmem().get_shmem(static_cast<size_t>(nth) * Lanes * sizeof(T)));
    auto tile_row = [&](const int rr) { return flip ? nr - 1 - rr : rr; };
    // phase 1: lane l of thread w, columns l + c * Lanes (c < cn; one lane:
    // c < nc, a plain loop the compiler vectorises; a warp: C = 4, guarded
    // and unrolled), rows w, w + nth, ...
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(t, Lanes), [&](const int l) {
      const int cn = Lanes == 1 ? nc : C;
      auto live = [&](const int c) { return Lanes == 1 || l + c * Lanes < nc; };
      // the diagonal tile's first thread: p_new and the previous iteration's
      // x update for the block's rows (its columns)
      if (diag && w == 0)
KBAND_UNROLL
        for (int c = 0; c < cn; ++c)
          if (live(c)) {
            const int i = j0 + l + c * Lanes;
            if (a != T(0)) s.x(i) += a * s.pold(i + s.h);
            if (go) s.pnew(i + s.h) = d(i);
          }
      if (!go) return;
      T pj[C], cs[C], lp = 0;
KBAND_UNROLL
      for (int c = 0; c < cn; ++c) {
        pj[c] = live(c) ? d(j0 + l + c * Lanes) : T(0);
        cs[c] = T(0);
      }
      // RU rows at a time: RU cn loads of the matrix in flight per lane
      int rr = w;
      for (; rr + (RU - 1) * nth < nr; rr += RU * nth) {
        T pi[RU], rs[RU];
KBAND_UNROLL
        for (int u = 0; u < RU; ++u) {
          pi[u] = d(i0 + tile_row(rr + u * nth));
          rs[u] = T(0);
        }
KBAND_UNROLL
        for (int c = 0; c < cn; ++c)
          if (live(c)) {
            const int j = j0 + l + c * Lanes;
            T av[RU];
KBAND_UNROLL
            for (int u = 0; u < RU; ++u) av[u] = at(i0 + tile_row(rr + u * nth), j);
KBAND_UNROLL
            for (int u = 0; u < RU; ++u) {
              rs[u] += av[u] * pj[c];
              cs[c] += av[u] * pi[u];
            }
          }
KBAND_UNROLL
        for (int u = 0; u < RU; ++u) {
          rowpart[tile_row(rr + u * nth) * kRowStride + l] = rs[u];
          lp += pi[u] * rs[u];
        }
      }
      for (; rr < nr; rr += nth) {
        const int ri = tile_row(rr);
        const T pi = d(i0 + ri);
        T rs = 0;
KBAND_UNROLL
        for (int c = 0; c < cn; ++c)
          if (live(c)) {
            const T av = at(i0 + ri, j0 + l + c * Lanes);
            rs += av * pj[c];
            cs[c] += av * pi;
          }
        rowpart[ri * kRowStride + l] = rs;
        lp += pi * rs;
      }
KBAND_UNROLL
      for (int c = 0; c < cn; ++c) {
        colpart[w * TB + l + c * Lanes] = cs[c];
        if (!diag) lp += pj[c] * cs[c];
      }
      lanepap[w * Lanes + l] = lp;
    });
    if (!go) return;  // the same for every thread of the team
    t.team_barrier();
    // phase 2, a thread (lane) per sum: the row sums of block I (slot J) and,
    // off the diagonal, the column sums of block J (slot I)
    const int nsum = diag ? nr : nr + nc;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(t, nth), [&](const int h) {
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(t, Lanes), [&](const int l) {
        for (int k = h * Lanes + l; k < nsum; k += nth * Lanes) {
          T v = 0;
          if (k < nr) {
            for (int m = 0; m < Lanes; ++m) v += rowpart[k * kRowStride + m];
            part(J, i0 + k) = v;
          } else {
            for (int m = 0; m < nth; ++m) v += colpart[m * TB + k - nr];
            part(I, j0 + k - nr) = v;
          }
        }
      });
    });
    T tile_pap = 0;
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(t, nth),
        [&](const int h, T& acc) {
          T v = 0;
          Kokkos::parallel_reduce(
              Kokkos::ThreadVectorRange(t, Lanes), [&](const int l, T& x) { x += lanepap[h * Lanes + l]; }, v);
          acc += v;
        },
        tile_pap);
    Kokkos::single(Kokkos::PerTeam(t), [&]() { pap += tile_pap; });
  }
};

/// q(i) = sum over x of part(x, i), in a fixed order (after CGDenseSymApply).
template <class T, class Mem>
struct CGDenseAssemble {
  CGState<T, Mem> st;
  Kokkos::View<const T**, Kokkos::LayoutRight, Mem> part;
  Kokkos::View<T*, Mem> q;
  KOKKOS_INLINE_FUNCTION void operator()(const int i) const {
    if (!st.go()) return;
    T v = 0;
    for (int x = 0, nt = static_cast<int>(part.extent(0)); x < nt; ++x) v += part(x, i);
    q(i) = v;
  }
};

/// K2: r -= alpha q; sums(k+1) = (r.r, r.z) (Line: LineKernel instead).
template <class T, class Mem, int Prec, bool Blocks>
struct CGResidual {
  CGState<T, Mem> st;
  Kokkos::View<T*, Mem> r;
  Kokkos::View<const T*, Mem> q, aux;
  KOKKOS_INLINE_FUNCTION void operator()(const int c, CGSums<T>& s) const {
    if (!st.ran(st.k)) return;
    const T a = st.alpha(st.k);
    T rr = 0, rz = 0;
    if constexpr (Blocks) {  // consecutive rows, four partial sums each (the loop vectorises)
      auto row_i = [&](const int i, T& sr, T& sz) {
        const T ri = r(i) - a * q(i);
        r(i) = ri;
        sr += ri * ri;
        sz += Prec == kPrecJacobi ? ri * ri * aux(i) : ri * ri;
      };
      const int e = st.last(c);
      int i = st.first(c);
      T r1 = 0, r2 = 0, r3 = 0, z1 = 0, z2 = 0, z3 = 0;
      for (; i + 3 < e; i += 4) {
        row_i(i, rr, rz);
        row_i(i + 1, r1, z1);
        row_i(i + 2, r2, z2);
        row_i(i + 3, r3, z3);
      }
      for (; i < e; ++i) row_i(i, rr, rz);
      rr += r1 + r2 + r3;
      rz += z1 + z2 + z3;
    } else {
      for (int i = st.first(c), e = st.last(c), di = st.step(); i < e; i += di) {
        const T ri = r(i) - a * q(i);
        r(i) = ri;
        rr += ri * ri;
        rz += Prec == kPrecJacobi ? ri * ri * aux(i) : ri * ri;
      }
    }
    s.rr += rr;
    s.rz += rz;
  }
  KOKKOS_INLINE_FUNCTION void init(CGSums<T>& s) const { s = CGSums<T>(); }
  KOKKOS_INLINE_FUNCTION void join(CGSums<T>& a, const CGSums<T>& b) const { a += b; }
  KOKKOS_INLINE_FUNCTION void join(volatile CGSums<T>& a, const volatile CGSums<T>& b) const { a += b; }
  using value_type = CGSums<T>;
};

/// The deferred x update after the last iteration.
template <class T, class Mem, int Prec>
struct CGFinish {
  CGStep<T, Mem, Prec> s;
  KOKKOS_INLINE_FUNCTION void operator()(const int c) const {
    const T a = s.x_alpha();
    if (a != T(0))
      for (int i = s.st.first(c), e = s.st.last(c), di = s.st.step(); i < e; i += di) {
        s.x(i) += a * s.pold(i + s.h);
      }
  }
};

/// (r.r, r.z) at the start: r = b - q (no preconditioner, or Jacobi).
template <class T, class Mem>
struct CGSumsKernel {
  CGState<T, Mem> st;
  Kokkos::View<T*, Mem> r;
  Kokkos::View<const T*, Mem> b, q, invdiag;
  int prec;
  using value_type = CGSums<T>;
  KOKKOS_INLINE_FUNCTION void operator()(const int c, CGSums<T>& s) const {
    for (int i = st.first(c), e = st.last(c), di = st.step(); i < e; i += di) {
      const T ri = b(i) - q(i);
      r(i) = ri;
      s.rr += ri * ri;
      s.rz += prec == kPrecJacobi ? ri * ri * invdiag(i) : ri * ri;
    }
  }
  KOKKOS_INLINE_FUNCTION void init(CGSums<T>& s) const { s = CGSums<T>(); }
  KOKKOS_INLINE_FUNCTION void join(CGSums<T>& a, const CGSums<T>& b) const { a += b; }
  KOKKOS_INLINE_FUNCTION void join(volatile CGSums<T>& a, const volatile CGSums<T>& b) const { a += b; }
};

template <class T, class Mem>
struct Reciprocal {
  Kokkos::View<T*, Mem> v;
  KOKKOS_INLINE_FUNCTION void operator()(const int i) const { v(i) = T(1) / v(i); }
};

/// Main diagonal of a CDS matrix (0 where it is not stored) or of a dense one.
template <class Data, class T, class Mem>
struct CDSDiagonal {
  Data data;
  int d;  // column of offset 0, or -1
  Kokkos::View<T*, Mem> out;
  KOKKOS_INLINE_FUNCTION void operator()(const int i) const { out(i) = d >= 0 ? data(i, d) : T(0); }
};
template <class VA, class T, class Mem>
struct DenseDiagonal {
  VA A;
  Kokkos::View<T*, Mem> out;
  KOKKOS_INLINE_FUNCTION void operator()(const int i) const { out(i) = A(i, i); }
};

/// What the line kernel's right-hand side is, and what it writes besides z.
enum { kLineApply = 0, kLineStart = 1, kLineIterate = 2 };

/// Rows per thread the line kernel aims for on GPUs: threads per line grow
/// in powers of two up to 256 until a chunk holds at most 8 rows, or 16 for
/// lines longer than 1024 rows. (H200, 2D Poisson, line preconditioner, us
/// per iteration: 2^20 (1024-row lines) 67.2-68.3 with 8 rows (128 threads)
/// against 68.6-69.0 with 16 (64 threads); 2^22 (2048-row lines) 464-473
/// with 8 (256 threads), 271-272 with 16 (128 threads), 694-699 with 32;
/// 2^24 (4096-row lines) 1848 with 16 (256 threads), 2612 with 32.)
#ifndef KBAND_CG_LINE_ROWS
#define KBAND_CG_LINE_ROWS 8
#endif
#ifndef KBAND_CG_LONG_LINE_ROWS
#define KBAND_CG_LONG_LINE_ROWS 16
#endif

/// How the line kernel maps lines onto teams: `tl` threads per line, each
/// taking a chunk of 2^lc consecutive rows; `lpt` lines per team.
struct LineGeometry {
  int tl = 1, lpt = 1, lc = 0, len = 0, level = 0;
  KOKKOS_INLINE_FUNCTION int team() const { return tl * lpt; }
  KOKKOS_INLINE_FUNCTION int chunk() const { return 1 << lc; }
  /// A line's slots in scratch: row j at j + j / chunk (a chunk's rows are
  /// one slot apart from the next chunk's, so that the threads' strided
  /// accesses fall on different banks).
  KOKKOS_INLINE_FUNCTION int padded() const { return len + (len >> lc) + 1; }
  /// Factor entries per line: row i of chunk t at i * tl + t, so that the
  /// threads of a warp read consecutive entries at each step of their sweeps.
  int factor_width() const { return tl << lc; }
  size_t scratch_bytes(const size_t elem) const {
    return (2 * static_cast<size_t>(lpt) * padded() + 4 * static_cast<size_t>(team())) * elem;
  }
};

/// What the line kernels (LineKernel on GPUs, LineLanes on CPUs) read and
/// write, and the rows of a line.
template <class T, class Mem>
struct LineData {
  using value_type = CGSums<T>;
  CGState<T, Mem> st;
  Kokkos::View<T*, Mem> r;
  Kokkos::View<const T*, Mem> src, q;
  Kokkos::View<T*, Mem> z;
  Kokkos::View<const T**, Kokkos::LayoutRight, Mem> aw, w, cp;  // the factor (LineGeometry::factor_width)
  Kokkos::View<const int*, Mem> starts;                         // empty: every line has len rows
  int len = 0, nlines = 0, mode = kLineApply;
  bool shared = true;

  /// First row, rows and factor row of line s (no rows past the last line).
  KOKKOS_INLINE_FUNCTION void line(const int s, int& i0, int& rows, int& f) const {
    const bool live = s < nlines;
    i0 = !live ? 0 : (starts.extent(0) > 0 ? starts(s) : s * len);
    rows = !live ? 0 : (starts.extent(0) > 0 ? starts(s + 1) - i0 : len);
    f = shared || !live ? 0 : s;
  }
  /// Row i of the right-hand side (Apply: src; Start: src - q; Iterate: r - alpha q).
  KOKKOS_INLINE_FUNCTION T rhs(const int i, const T alpha) const {
    return mode == kLineApply ? src(i) : (mode == kLineStart ? src(i) - q(i) : r(i) - alpha * q(i));
  }
  KOKKOS_INLINE_FUNCTION void init(CGSums<T>& v) const { v = CGSums<T>(); }
  KOKKOS_INLINE_FUNCTION void join(CGSums<T>& x, const CGSums<T>& y) const { x += y; }
  KOKKOS_INLINE_FUNCTION void join(volatile CGSums<T>& x, const volatile CGSums<T>& y) const { x += y; }
};

/// The line kernels' Apply right-hand side: src (LineNoRhs), or a functor
/// Rhs computing it row by row: Rhs::active() (false: the kernel does
/// nothing; the same for every thread), Rhs::eval(), a context made once per
/// thread (per-iteration scalars from the device history), and
/// Rhs::operator()(i, context), row i's value. (The functor stays in the
/// kernel's parameters: a per-thread copy of a struct with indexed arrays
/// would live in local memory; H100, zebra 2^20: 87 against 71 us an
/// iteration.)
struct LineNoRhs {};

/// z = T^-1 rhs for every line, one line per group of `tl` threads, fused
/// with the CG residual update and its sums:
///   Apply:   rhs = src, or Rhs (above)      (z only)
///   Start:   rhs = r = src - q              (r = b - A x0; sums of k = 0)
///   Iterate: rhs = r = r - alpha_k q        (only when iteration k ran)
/// and (r.r, r.z) into the reduction (Apply runs by parallel_for, with no
/// reduction: on the H100 that took the zebra's red line kernel from 16.5 to
/// 11.8 us at 2^20). The line's rhs is loaded into team
/// scratch with coalesced accesses; each thread then runs the factored
/// Thomas recurrences over its chunk of rows. A chunk's forward and
/// backward sweeps are affine in the value they start from, so every thread
/// first sweeps from zero, tracking the slope (the product of the
/// recurrence coefficients); a scan over the team's chunks composes those
/// affine maps (log2(tl) steps) into each chunk's true starting value, and
/// the sweep is repeated from it (with tl = 1, one plain Thomas solve per
/// thread; CPUs use LineLanes instead unless a test asks for this kernel).
/// The factor holds a w (a: the sub-diagonal), c' = c / pivot and
/// w = 1 / pivot per row, for one line (shared) or for every line.
template <class Exec, class T, class Mem, class Rhs = LineNoRhs>
struct LineKernel : LineData<T, Mem> {
  using member = typename Kokkos::TeamPolicy<Exec>::member_type;
  using Scratch = Kokkos::View<T*, typename Exec::scratch_memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  using D = LineData<T, Mem>;
  using D::aw;
  using D::cp;
  using D::mode;
  using D::r;
  using D::st;
  using D::w;
  using D::z;
  LineGeometry g;
  Rhs rhs_fn;

  /// Exclusive scan of the affine maps v -> val + slope v over the chunks of
  /// one line (forward: from chunk 0 up; else from the last chunk down):
  /// returns the value entering this thread's chunk (0 for the first).
  KOKKOS_INLINE_FUNCTION T scan(const member& m, const Scratch& sg, const Scratch& sv, T slope, T val, const int t,
                                const bool forward) const {
    const int ts = m.team_size(), me = m.team_rank();
    int cur = 0;
    sg(me) = slope;
    sv(me) = val;
    m.team_barrier();
    for (int off = 1; off < g.tl; off <<= 1) {
      const bool has = forward ? t >= off : t + off < g.tl;
      if (has) {
        const int o = cur * ts + (forward ? me - off : me + off);
        val += slope * sv(o);
        slope *= sg(o);
      }
      cur ^= 1;
      sg(cur * ts + me) = slope;
      sv(cur * ts + me) = val;
      m.team_barrier();
    }
    const bool first = forward ? t == 0 : t + 1 == g.tl;
    const T in = first ? T(0) : sv(cur * ts + (forward ? me - 1 : me + 1));
    m.team_barrier();  // before the arrays are written again
    return in;
  }

  /// The solve of one line in scratch, by the thread t of its group: the
  /// rhs at d (slots), the solution into x; returns this thread's part of
  /// rhs . solution. Ends before a team barrier (x is read by other threads).
  KOKKOS_INLINE_FUNCTION T sweep(const member& m, const Scratch& sg, const Scratch& sv, const T* const d, T* const x,
                                 const int t, const int len, const int f) const {
    T dx = 0;
    // this thread's chunk: rows c0 + k, k < nk, the rhs at dc[k], y and then
    // x at xc[k]; factor entries at k * tl + t
    const int c0 = t << g.lc, nk = len - c0 < g.chunk() ? (len > c0 ? len - c0 : 0) : g.chunk();
    const T* const dc = d + c0 + t;
    T* const xc = x + c0 + t;
    const T* const faw = &aw(f, 0) + t;
    const T* const fw = &w(f, 0) + t;
    const T* const fc = &cp(f, 0) + t;
    const int tl = g.tl;
    // forward: y_j = d_j w_j - (a_j w_j) y_{j-1} (one chunk a line: no carries)
    T y = 0, slope = 1;
    if (tl > 1) {
      for (int k = 0; k < nk; ++k) {
        const T awj = faw[k * tl];
        y = dc[k] * fw[k * tl] - awj * y;
        slope *= -awj;
      }
      y = scan(m, sg, sv, slope, y, t, true);
    }
    for (int k = 0; k < nk; ++k) {
      y = dc[k] * fw[k * tl] - faw[k * tl] * y;
      xc[k] = y;
    }
    // backward: x_j = y_j - c'_j x_{j+1}
    T v = 0;
    slope = 1;
    if (tl > 1) {
      for (int k = nk - 1; k >= 0; --k) {
        const T cj = fc[k * tl];
        v = xc[k] - cj * v;
        slope *= -cj;
      }
      v = scan(m, sg, sv, slope, v, t, false);
    }
    for (int k = nk - 1; k >= 0; --k) {
      v = xc[k] - fc[k * tl] * v;
      xc[k] = v;
      dx += dc[k] * v;
    }
    return dx;
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member& m, CGSums<T>& sums) const {
    if (mode == kLineIterate && !st.ran(st.k)) return;  // the same for the whole team
    if constexpr (!std::is_same<Rhs, LineNoRhs>::value) {
      if (mode == kLineApply && !rhs_fn.active()) return;
    }
    const T alpha = mode == kLineIterate ? st.alpha(st.k) : T(0);
    const int ts = m.team_size(), me = m.team_rank();
    const int grp = me / g.tl, t = me % g.tl;
    const int s = m.league_rank() * g.lpt + grp;
    const int pad = g.padded();
    Scratch buf(m.team_scratch(g.level), 2 * g.lpt * pad + 4 * ts);
    T* const d = buf.data() + grp * pad;              // the rhs
    T* const x = buf.data() + (g.lpt + grp) * pad;    // y, then the solution
    const Scratch sg(buf.data() + 2 * g.lpt * pad, 2 * ts), sv(buf.data() + 2 * g.lpt * pad + 2 * ts, 2 * ts);
    int i0, len, f;
    this->line(s, i0, len, f);
    auto slot = [&](const int j) { return j + (j >> g.lc); };
    T rr = 0;
    // the rhs into scratch, four rows a thread at a time: their loads are
    // all issued before the first store (r is written back at the end). One
    // loop per mode, and rows past the line's end load its last row: with
    // the mode or the bound tested per row, each row's arithmetic waited
    // for its own loads before the next row's were issued.
    auto load = [&](const auto& rhs_of) {
      constexpr int B = 4;
      for (int j0 = t; j0 < len; j0 += B * g.tl) {
        T v[B];
        for (int u = 0; u < B; ++u) {
          const int j = j0 + u * g.tl;
          v[u] = rhs_of(i0 + (j < len ? j : len - 1));
        }
        for (int u = 0; u < B; ++u) {
          const int j = j0 + u * g.tl;
          if (j < len) {
            d[slot(j)] = v[u];
            rr += v[u] * v[u];
          }
        }
      }
    };
    if (mode == kLineApply) {
      if constexpr (std::is_same<Rhs, LineNoRhs>::value) {
        load([&](const int i) { return this->src(i); });
      } else {
        const auto ctx = rhs_fn.eval();
        load([&](const int i) { return rhs_fn(i, ctx); });
      }
    }
    else if (mode == kLineStart)
      load([&](const int i) { return this->src(i) - this->q(i); });
    else
      load([&](const int i) { return r(i) - alpha * this->q(i); });
    m.team_barrier();
    const T rz = sweep(m, sg, sv, d, x, t, len, f);
    m.team_barrier();
    for (int j = t; j < len; j += g.tl) {
      z(i0 + j) = x[slot(j)];
      if (mode != kLineApply) r(i0 + j) = d[slot(j)];
    }
    // every thread's contribution is joined by the reduction
    sums.rr += rr;
    sums.rz += rz;
  }
};

/// LineKernel's work on CPUs: W lines a work item, their Thomas recurrences
/// interleaved (W independent dependency chains; one line at a time is bound
/// by the latency of its recurrence), forward into z and backward in place.
template <class T, class Mem, int W, class Rhs = LineNoRhs>
struct LineLanes : LineData<T, Mem> {  // one chunk a line: factor row j at column j
  using D = LineData<T, Mem>;
  using D::aw;
  using D::cp;
  using D::len;
  using D::mode;
  using D::q;
  using D::r;
  using D::shared;
  using D::src;
  using D::st;
  using D::w;
  using D::z;

  Rhs rhs_fn;

  KOKKOS_INLINE_FUNCTION void operator()(const int item, CGSums<T>& sums) const {
    if constexpr (!std::is_same<Rhs, LineNoRhs>::value) {
      // Apply from a functor: its values into z, then the solve with src = z
      // (each row's value is read before its z is written; Apply's sums are
      // not wanted)
      if (!rhs_fn.active()) return;
      const auto ctx = rhs_fn.eval();
      for (int l = 0; l < W; ++l) {
        int i0, ln, f;
        this->line(item * W + l, i0, ln, f);
        for (int j = 0; j < ln; ++j) z(i0 + j) = rhs_fn(i0 + j, ctx);
      }
      LineLanes<T, Mem, W> plain{static_cast<const LineData<T, Mem>&>(*this)};
      plain.src = z;
      plain(item, sums);
      return;
    }
    if (mode == kLineIterate && !st.ran(st.k)) return;
    const T alpha = mode == kLineIterate ? st.alpha(st.k) : T(0);
    int i0[W], ln[W], f[W];
    for (int l = 0; l < W; ++l) this->line(item * W + l, i0[l], ln[l], f[l]);
    T rr = 0, rz = 0, y[W];
    for (int l = 0; l < W; ++l) y[l] = 0;
    bool full = shared;
    for (int l = 0; l < W; ++l) full = full && ln[l] == len;
    if (full) {  // W whole lines of one factor: no per-lane tests, one factor load a row
      // the residual update over the W lines' rows (consecutive: the loop
      // vectorises), then the interleaved sweeps read r from cache
      const Kokkos::View<const T*, Mem> rhs = mode == kLineApply ? src : Kokkos::View<const T*, Mem>(r);
      if (mode != kLineApply) {
        const int e = i0[0] + W * len;
        T r1 = 0, r2 = 0, r3 = 0;
        int i = i0[0];
        auto row = [&](const int ii, T& acc) {
          const T v = this->rhs(ii, alpha);
          r(ii) = v;
          acc += v * v;
        };
        for (; i + 3 < e; i += 4) {
          row(i, rr);
          row(i + 1, r1);
          row(i + 2, r2);
          row(i + 3, r3);
        }
        for (; i < e; ++i) row(i, rr);
        rr += r1 + r2 + r3;
      }
      for (int j = 0; j < len; ++j) {
        const T awj = aw(0, j), wj = w(0, j);
        for (int l = 0; l < W; ++l) {
          const int i = i0[l] + j;
          const T v = rhs(i);
          if (mode == kLineApply) rr += v * v;
          y[l] = v * wj - awj * y[l];
          z(i) = y[l];
        }
      }
      for (int l = 0; l < W; ++l) y[l] = 0;
      for (int j = len - 1; j >= 0; --j) {
        const T cj = cp(0, j);
        for (int l = 0; l < W; ++l) {
          const int i = i0[l] + j;
          y[l] = z(i) - cj * y[l];
          z(i) = y[l];
          rz += rhs(i) * y[l];
        }
      }
      sums.rr += rr;
      sums.rz += rz;
      return;
    }
    for (int j = 0; j < len; ++j)
      for (int l = 0; l < W; ++l)
        if (j < ln[l]) {
          const int i = i0[l] + j;
          const T v = this->rhs(i, alpha);
          if (mode != kLineApply) r(i) = v;
          rr += v * v;
          y[l] = v * w(f[l], j) - aw(f[l], j) * y[l];
          z(i) = y[l];
        }
    for (int l = 0; l < W; ++l) y[l] = 0;
    for (int j = len - 1; j >= 0; --j)
      for (int l = 0; l < W; ++l)
        if (j < ln[l]) {
          const int i = i0[l] + j;
          y[l] = z(i) - cp(f[l], j) * y[l];
          z(i) = y[l];
          rz += (mode == kLineApply ? src(i) : r(i)) * y[l];
        }
    sums.rr += rr;
    sums.rz += rz;
  }
};

/// A line kernel whose sums nobody wants (Apply), run by parallel_for.
template <class K>
struct LineApplyOnly {
  K k;
  template <class Member>
  KOKKOS_INLINE_FUNCTION void operator()(const Member& m) const {
    typename K::value_type unused;
    k(m, unused);
  }
};

/// The lines of a CDS matrix's tridiagonal part, from a host copy h of its
/// data (diagonals dl = -1, du = +1; -1: not stored): the first row of each
/// line, then n. A line ends where both couplings between consecutive rows
/// are zero (the line and zebra preconditioners).
template <class HostData>
std::vector<int> cds_line_starts(const HostData& h, const int n, const int dl, const int du) {
  using V = typename HostData::non_const_value_type;
  std::vector<int> starts{0};
  for (int i = 0; i + 1 < n; ++i)
    if ((du < 0 || h(i, du) == V(0)) && (dl < 0 || h(i + 1, dl) == V(0))) starts.push_back(i + 1);
  starts.push_back(n);
  return starts;
}

/// The line preconditioner: the tridiagonal part of a CDS matrix split where
/// both couplings between consecutive rows are zero (2D Poisson: the grid
/// lines), factored once on the host (one factor when every line has the
/// same coefficients) and solved by LineKernel, which also performs the CG
/// residual update and its sums: one kernel, reading r and q and writing r
/// and z, takes the place of an update, a solve and a reduction. A zero
/// pivot leaves infinities in the factor, so the solve gives non-finite
/// values and CG stops with CGStatus::NonFinite.
template <class T, class Mem>
class LineSolver {
 public:
  using Batch = Kokkos::View<T**, Kokkos::LayoutRight, Mem>;

  LineSolver() = default;

  /// threads_per_line: 0 = kband's choice (CPUs: LineLanes); else LineKernel
  /// with that many threads per line (tests; at most the backend's team size).
  /// rows_per_thread: GPUs, lines of up to 1024 rows, the rows a thread aims
  /// for (0: KBAND_CG_LINE_ROWS).
  template <class Exec>
  LineSolver(const Exec& exec, const CDSMatrix<T, Mem>& A, const int threads_per_line = 0, const int rows_per_thread = 0) {
    const int n = A.n();
    auto hdata = Kokkos::create_mirror_view(A.data());
    exec.fence();
    Kokkos::deep_copy(hdata, A.data());
    const int dl = A.diagonal_index(-1), d0 = A.diagonal_index(0), du = A.diagonal_index(1);
    require(d0 >= 0, "kband::cg: the line preconditioner needs a stored main diagonal (offset 0)");
    auto lower = [&](int i) { return dl >= 0 && i > 0 ? hdata(i, dl) : T(0); };
    auto upper = [&](int i) { return du >= 0 && i < n - 1 ? hdata(i, du) : T(0); };
    const std::vector<int> starts = cds_line_starts(hdata, n, dl, du);
    nlines_ = static_cast<int>(starts.size()) - 1;
    len_ = 0;
    uniform_ = true;
    for (int s = 0; s < nlines_; ++s) {
      len_ = std::max(len_, starts[s + 1] - starts[s]);
      uniform_ = uniform_ && starts[s + 1] - starts[s] == starts[1] - starts[0];
    }
    shared_ = uniform_;
    for (int s = 1; shared_ && s < nlines_; ++s)
      for (int j = 0; shared_ && j < len_; ++j) {
        const int i = starts[s] + j;
        shared_ = lower(i) == lower(j) && hdata(i, d0) == hdata(j, d0) && upper(i) == upper(j);
      }
    geom_ = geometry<Exec>(len_, threads_per_line, rows_per_thread);
    forced_ = threads_per_line > 0;
    // the factor, per line (rows past a line's end: identity, a w = c' = 0,
    // w = 1), in the geometry's chunk-interleaved order
    const int rows = shared_ ? 1 : nlines_, width = geom_.factor_width();
    auto alloc = [&](const char* l) {
      return Batch(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(l)), rows, width);
    };
    Batch aw = alloc("kband::cg::line_aw"), w = alloc("kband::cg::line_w"), cp = alloc("kband::cg::line_cp");
    auto haw = Kokkos::create_mirror_view(aw), hw = Kokkos::create_mirror_view(w), hc = Kokkos::create_mirror_view(cp);
    for (int s = 0; s < rows; ++s) {
      T cprev = 0;
      for (int j = 0; j < width; ++j) {
        const int i = starts[s] + j, at = (j & (geom_.chunk() - 1)) * geom_.tl + (j >> geom_.lc);
        const bool in = j < len_ && i < starts[s + 1];
        const T aj = in && j > 0 ? lower(i) : T(0);
        const T wj = T(1) / (in ? hdata(i, d0) - aj * cprev : T(1));
        haw(s, at) = aj * wj;
        hw(s, at) = wj;
        hc(s, at) = cprev = in && i + 1 < starts[s + 1] ? upper(i) * wj : T(0);
      }
    }
    Kokkos::deep_copy(aw, haw);
    Kokkos::deep_copy(w, hw);
    Kokkos::deep_copy(cp, hc);
    aw_ = aw;
    w_ = w;
    cp_ = cp;
    if (!uniform_) {
      Kokkos::View<int*, Mem> st("kband::cg::line_starts", nlines_ + 1);
      auto hs = Kokkos::create_mirror_view(st);
      for (int s = 0; s <= nlines_; ++s) hs(s) = starts[s];
      Kokkos::deep_copy(st, hs);
      starts_ = st;
    }
    discard_ = Kokkos::View<CGSums<T>, Mem>("kband::cg::line_discard");
  }

  int lines() const { return nlines_; }
  int line_length() const { return len_; }
  /// The factor and the lines, and how LineKernel maps them onto teams: for
  /// team kernels that solve the lines inside their own work (the zebra's
  /// one-reduction black kernel).
  LineData<T, Mem> line_data() const {
    return LineData<T, Mem>{CGState<T, Mem>{}, {}, {}, {}, {}, aw_, w_, cp_, starts_, len_, nlines_, kLineApply, shared_};
  }
  const LineGeometry& geometry() const { return geom_; }
  bool shared() const { return shared_; }
  bool uniform() const { return uniform_; }

  /// z = T^-1 r (r and z of extent n, distinct). No fence.
  template <class Exec>
  void apply(const Exec& exec, const Kokkos::View<T*, Mem>& r, const Kokkos::View<T*, Mem>& z) const {
    run(exec, kLineApply, CGState<T, Mem>{}, {}, r, {}, z, discard_);
  }

  /// z = T^-1 rhs, rhs row by row from a functor (LineNoRhs). No fence.
  template <class Exec, class Rhs>
  void apply_rhs(const Exec& exec, const Rhs& rhs, const Kokkos::View<T*, Mem>& z) const {
    run(exec, kLineApply, CGState<T, Mem>{}, {}, {}, {}, z, discard_, rhs);
  }

  /// Start: r = b - q; Iterate: r -= alpha_k q (when iteration k ran). Then
  /// z = T^-1 r and sum = (r.r, r.z). No fence.
  template <class Exec>
  void residual(const Exec& exec, int mode, const CGState<T, Mem>& st, const Kokkos::View<T*, Mem>& r,
                const Kokkos::View<const T*, Mem>& b, const Kokkos::View<const T*, Mem>& q,
                const Kokkos::View<T*, Mem>& z, const Kokkos::View<CGSums<T>, Mem>& sum) const {
    run(exec, mode, st, r, b, q, z, sum);
  }

 private:
  /// GPUs: chunks of about 8 rows (16 on lines over 1024 rows; see
  /// KBAND_CG_LINE_ROWS), up to 256 threads a line, teams of at least 128
  /// threads (several short lines a team). CPUs: one thread a line.
  template <class Exec>
  static LineGeometry geometry(const int len, const int threads_per_line, const int rows_per_thread) {
    LineGeometry g;
    g.len = len;
    if (threads_per_line > 0) g.tl = threads_per_line;
    else if (is_device_exec<Exec>::value) {
      const int rows = len > 1024 ? KBAND_CG_LONG_LINE_ROWS : (rows_per_thread > 0 ? rows_per_thread : KBAND_CG_LINE_ROWS);
      while (g.tl < 256 && g.tl * rows < len) g.tl *= 2;
    }
    if (is_device_exec<Exec>::value) g.lpt = g.tl < 128 ? 128 / g.tl : 1;
    while ((g.tl << g.lc) < len) ++g.lc;
    g.level = g.scratch_bytes(sizeof(T)) <= Kokkos::TeamPolicy<Exec>::scratch_size_max(0) ? 0 : 1;
    return g;
  }

  template <class Exec, class Rhs = LineNoRhs>
  void run(const Exec& exec, int mode, const CGState<T, Mem>& st, const Kokkos::View<T*, Mem>& r,
           const Kokkos::View<const T*, Mem>& src, const Kokkos::View<const T*, Mem>& q,
           const Kokkos::View<T*, Mem>& z, const Kokkos::View<CGSums<T>, Mem>& sum, const Rhs& rhs = {}) const {
    const LineData<T, Mem> data{st, r, src, q, z, aw_, w_, cp_, starts_, len_, nlines_, mode, shared_};
    if constexpr (!is_device_exec<Exec>::value) {
      if (!forced_) {
        // CPUs: 8 lines a thread, interleaved (one line a thread: 1.8x slower)
        constexpr int W = 8;
        Kokkos::parallel_reduce("kband::cg::line", Range<Exec>(exec, 0, (nlines_ + W - 1) / W), LineLanes<T, Mem, W, Rhs>{data, rhs},
                                sum);
        return;
      }
    }
    launch(exec, LineKernel<Exec, T, Mem, Rhs>{data, geom_, rhs}, sum);
  }

  template <class Exec, class K>
  void launch(const Exec& exec, const K& k, const Kokkos::View<CGSums<T>, Mem>& sum) const {
    const int league = (nlines_ + geom_.lpt - 1) / geom_.lpt;
    // at most 64 registers: with teams of 128 the H200 then holds 8 per
    // multiprocessor, all 1024 lines of a 2^20 grid in one wave (H200: 72
    // uncapped; sweeps unrolled over chunks of 8 with y and x in registers
    // were slower, 78-79 against 67.5 us per CG iteration at 2^20)
    Team<Exec, Kokkos::LaunchBounds<256, 4>> policy(exec, league, geom_.team());
    policy.set_scratch_size(geom_.level, Kokkos::PerTeam(geom_.scratch_bytes(sizeof(T))));
    if (k.mode == kLineApply)  // no sums wanted: no reduction
      Kokkos::parallel_for("kband::cg::line", policy, LineApplyOnly<K>{k});
    else
      Kokkos::parallel_reduce("kband::cg::line", policy, k, sum);
  }

  int nlines_ = 0, len_ = 0;
  bool uniform_ = true, shared_ = false, forced_ = false;
  LineGeometry geom_;
  Kokkos::View<const T**, Kokkos::LayoutRight, Mem> aw_, w_, cp_;
  Kokkos::View<const int*, Mem> starts_;
  Kokkos::View<CGSums<T>, Mem> discard_;
};

/// Host memory that history slots are copied into while the device goes on:
/// pinned where the backend has it (the copy is then asynchronous), plain
/// host memory otherwise (the copy returns when it has landed).
#ifdef KOKKOS_HAS_SHARED_HOST_PINNED_SPACE
using CGMirrorSpace = Kokkos::SharedHostPinnedSpace;
#else
using CGMirrorSpace = Kokkos::HostSpace;
#endif

/// A copy of history slots j0..k (sums, or one-reduction sums) and, for the
/// two-kernel form, p.Ap of j0..k-1, into one of two host mirrors, and the
/// test that it has landed. The host fills the mirror with a signalling-NaN
/// pattern before it posts the copy: every word of T the copy writes differs
/// from it (arithmetic yields quiet NaNs only), so the copy has landed when
/// no word holds the pattern any longer, whatever order it writes them in.
template <class T>
struct CGMirrorWords {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "CG history words are 4 or 8 bytes");
  using W = std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>;
  static constexpr W kMark = sizeof(T) == 8 ? W(0x7FF4A5A5A5A5A5A5ull) : W(0x7FA5A5A5u);
  static void mark(void* p, size_t bytes) {
    auto* w = static_cast<W*>(p);
    for (size_t i = 0; i < bytes / sizeof(W); ++i) w[i] = kMark;
  }
  static bool landed(const void* p, size_t bytes) {
    const volatile W* w = static_cast<const volatile W*>(p);
    for (size_t i = bytes / sizeof(W); i-- > 0;)
      if (w[i] == kMark) return false;
    std::atomic_thread_fence(std::memory_order_acquire);  // the reads of the slots come after
    return true;
  }
};

/// Single-rank reductions: the history already holds the global sums.
struct LocalComm {
  template <class Exec, class V>
  void sum(const Exec&, const V&) const {}
  bool agree(bool stop) const { return stop; }
};

/// The CG iteration over an operator Op, which provides
///   n(), halo(), fused (bool), diagonal(exec, out),
///   start(exec, x, pext, q): q = A x (pext: a halo'd scratch vector it may use),
///   step(exec, CGStep, q, pap_slot): K1 (fused or split, p.Ap into pap_slot),
/// and the reductions' global completion Comm::sum(exec, slot), Comm::agree(stop).
template <class Exec, class T, class Op, class Comm>
class CGDriver {
 public:
  using Mem = typename Exec::memory_space;
  using Vec = Kokkos::View<T*, Mem>;

  CGDriver(const Exec& exec, const Op& op, CGPreconditioner prec, const LineSolver<T, Mem>* line)
      : op_(op), prec_(prec), line_(line) {
    const int n = op.n(), h = op.halo();
    auto alloc = [&](const char* l, int len) { return Vec(Kokkos::view_alloc(exec, std::string(l)), len); };
    r_ = alloc("kband::cg::r", n);
    q_ = alloc("kband::cg::q", n);
    p_[0] = alloc("kband::cg::p0", n + 2 * h);
    p_[1] = alloc("kband::cg::p1", n + 2 * h);
    if (prec == CGPreconditioner::Jacobi) {
      aux_ = alloc("kband::cg::invdiag", n);
      op.diagonal(exec, aux_);
      Kokkos::parallel_for("kband::cg::invdiag", impl::Range<Exec>(exec, 0, n), Reciprocal<T, Mem>{aux_});
    } else if (prec == CGPreconditioner::Line) {
      aux_ = alloc("kband::cg::z", n);
    }
  }

  template <class VB, class VX>
  CGResult solve(const Exec& exec, const VB& b, const VX& x, const CGOptions& opt, const Comm& comm) {
    const int n = op_.n();
    const int maxit = opt.max_iterations > 0 ? opt.max_iterations : 2 * op_.global_n() + 10;
    const int every = opt.check_every;
    const int pk = prec_ == CGPreconditioner::None ? kPrecNone : (prec_ == CGPreconditioner::Jacobi ? kPrecJacobi : kPrecLine);
    // Auto: One on GPUs only (one CPU core, 2D Poisson 2^14..2^18: One took
    // 1.24-1.38x the time of Two; the product there is not bound by memory,
    // and One forms each neighbour's direction from three vectors, not two)
    one_ = cg_one_reduction<Op>::value && (pk != kPrecLine || cg_one_line<Op>::value) &&
           (opt.reductions == CGReductions::One ||
            (opt.reductions == CGReductions::Auto && is_device_exec<Exec>::value && cg_one_auto(op_, 0)));
    if (one_ && static_cast<int>(st_.one.extent(0)) < maxit + 1) {
      st_.one = Kokkos::View<CGOneSums<T>*, Mem>(
          Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, std::string("kband::cg::history")), maxit + 1);
    } else if (!one_ && static_cast<int>(st_.sums.extent(0)) < maxit + 1) {
      // every slot is written by its reduction before anything reads it
      st_.sums = Kokkos::View<CGSums<T>*, Mem>(
          Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, std::string("kband::cg::sums")), maxit + 1);
      st_.pap = Kokkos::View<T*, Mem>(Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, std::string("kband::cg::pap")),
                                      maxit + 1);
    }
    st_.tol2 = static_cast<T>(opt.tol * opt.tol);
    // kband's choice of work items on GPUs: the threads the device holds at
    // once (8 blocks of 256 a multiprocessor; the one-reduction kernel
    // kCGOneBlocks of them)
    const int resident = static_cast<int>(exec.concurrency()) / (one_ ? 8 / kCGOneBlocks : 1);
    st_.set_rows(n, is_device_exec<Exec>::value, opt.work_items > 0 ? opt.work_items : resident);
    st_.flip = false;
    st_.band = opt.work_items == 0 && opt.narrow_band != CGBand::Never;
    st_.band_any = opt.narrow_band == CGBand::Always;
    st_.cdiag = opt.constant_diagonals;
    alternate_ = opt.sweeps == CGSweeps::Alternate || (opt.sweeps == CGSweeps::Auto && is_device_exec<Exec>::value);
    Kokkos::deep_copy(exec, p_[0], T(0));
    begin_checks(every);
    if constexpr (cg_one_reduction<Op>::value) {
      if (one_) return solve_one(exec, b, x, maxit, every, comm, pk == kPrecJacobi);
    }
    // r = b - A x, (r.r, r.z) at k = 0
    op_.start(exec, x, p_[1], q_);
    st_.k = 0;
    if (pk == kPrecLine) {
      auto dst = Kokkos::subview(st_.sums, 0);
      line_->residual(exec, kLineStart, st_, r_, b, q_, aux_, dst);
      comm.sum(exec, dst);
    } else {
      reduce_sums(exec, comm, CGSumsKernel<T, Mem>{st_, r_, b, q_, aux_, pk}, 0);
    }
    int k = 0;
    CGResult res;
    for (; k < maxit;) {
      st_.k = k;
      Vec pold = p_[k % 2], pnew = p_[(k + 1) % 2];
      iterate(exec, comm, pk, pold, pnew, x);
      ++k;
      if ((k % every == 0 || k == maxit) && check(exec, comm, k, maxit, res)) break;
    }
    if (maxit == 0) check(exec, comm, 0, maxit, res);
    // the deferred x update of the last enqueued iteration (a no-op unless it
    // ran; iterations enqueued after the stop do nothing)
    st_.k = k;
    finish_x(exec, pk, x);
    return res;
  }

 private:
  /// The one-reduction form (CGReductions::One): kernel 0 forms r_0 = b - A x0
  /// (b in place of the previous r, alpha = 1) and the first direction,
  /// kernel k + 1 completes iteration k (it writes one(k + 1), as the
  /// two-kernel form writes sums(k + 1)). x is updated with r, so nothing is
  /// deferred past the last kernel.
  template <class VB, class VX>
  CGResult solve_one(const Exec& exec, const VB& b, const VX& x, int maxit, int every, const Comm& comm, bool jacobi) {
    const int n = op_.n();
    // the narrow-band kernel needs neither the second buffers nor A x0 (its
    // kernel 0 forms that itself)
    const bool band = st_.band && cg_narrow_band(op_, st_.cdiag, st_.band_any, 0);
    if (!band && static_cast<int>(r1_.extent(0)) != n) {
      r1_ = Vec(Kokkos::view_alloc(exec, std::string("kband::cg::r1")), n);
      q1_ = Vec(Kokkos::view_alloc(exec, std::string("kband::cg::q1")), n);
    }
    if (!band) op_.start(exec, x, p_[1], q_);
    auto kernel = [&](const int k) {
      st_.k = k;
      const Vec rb[2] = {r_, r1_}, qb[2] = {q_, q1_};
      const int o = k % 2, w = 1 - o;
      const Kokkos::View<const T*, Mem> rin = k == 0 ? Kokkos::View<const T*, Mem>(b) : rb[o];
      const CGOneFields<T, Mem> f{st_, rin, qb[o], p_[o], aux_, rb[w], qb[w], p_[w], x};
      auto slot = Kokkos::subview(st_.one, k);
      if (jacobi)
        op_.template step_one<kPrecJacobi>(exec, f, slot);
      else
        op_.template step_one<kPrecNone>(exec, f, slot);
      comm.sum(exec, slot);
    };
    kernel(0);
    int k = 0;
    CGResult res;
    res.reductions = CGReductions::One;
    for (; k < maxit;) {
      kernel(k + 1);
      ++k;
      if ((k % every == 0 || k == maxit) && check(exec, comm, k, maxit, res)) return res;
    }
    check(exec, comm, k, maxit, res);  // maxit = 0
    return res;
  }

  template <class K>
  void reduce_sums(const Exec& exec, const Comm& comm, const K& kernel, int slot) {
    auto dst = Kokkos::subview(st_.sums, slot);
    Kokkos::parallel_reduce("kband::cg::sums", CGPolicy<Exec>(exec, 0, st_.chunks()), kernel, dst);
    comm.sum(exec, dst);
  }

  template <class VX>
  void iterate(const Exec& exec, const Comm& comm, int pk, const Vec& pold, const Vec& pnew, const VX& x) {
    if (pk == kPrecNone) iterate_t<kPrecNone>(exec, comm, pold, pnew, x);
    else if (pk == kPrecJacobi) iterate_t<kPrecJacobi>(exec, comm, pold, pnew, x);
    else iterate_t<kPrecLine>(exec, comm, pold, pnew, x);
  }

  template <int P, class VX>
  CGStep<T, Mem, P> step_of(const Vec& pold, const Vec& pnew, const VX& x) const {
    return CGStep<T, Mem, P>{st_, r_, aux_, pold, pnew, x, op_.halo()};
  }

  template <int P, class VX>
  void iterate_t(const Exec& exec, const Comm& comm, const Vec& pold, const Vec& pnew, const VX& x) {
    const int n = op_.n(), k = st_.k;
    auto pap = Kokkos::subview(st_.pap, k);
    st_.flip = alternate_ && k % 2 == 1;
    op_.step(exec, step_of<P>(pold, pnew, x), q_, pap);
    comm.sum(exec, pap);
    if (P == kPrecLine) {
      auto dst = Kokkos::subview(st_.sums, k + 1);
      line_->residual(exec, kLineIterate, st_, r_, q_, q_, aux_, dst);
      comm.sum(exec, dst);
    } else {
      reduce_sums(exec, comm, CGResidual<T, Mem, P, !is_device_exec<Exec>::value>{st_, r_, q_, aux_}, k + 1);
    }
  }

  template <class VX>
  void finish_x(const Exec& exec, int pk, const VX& x) {
    const Vec pold = p_[st_.k % 2];
    // the preconditioner does not enter the x update
    op_.finish(exec, CGFinish<T, Mem, kPrecNone>{step_of<kPrecNone>(pold, pold, x)});
  }

  /// Check points. At iteration k (a multiple of check_every, or the last)
  /// the host posts a copy of the history slots since the previous check
  /// point into a host mirror, and decides from them once they have landed.
  /// The first kCGSyncChecks check points wait for their copy at once (as a
  /// fence would). After those, the host enqueues the next check_every
  /// iterations before it waits, so that the device never drains between
  /// checks; iterations enqueued after the stop do nothing (every kernel
  /// reads the stop from the history), but they take their launches: so
  /// short solves keep the synchronous checks (H100, 1D Laplacian 2^20,
  /// 16384 checks: 11.79-11.83 s against 11.88-11.92 s; 2D Poisson 2^16, 14
  /// checks, looking ahead after 8: 4.18 ms against 3.95-4.02 ms). Each slot
  /// is copied and examined once: a solve of K iterations reads O(K)
  /// history, and the host holds 2 (check_every + 1) slots.
  static constexpr int kCGSyncChecks = 32;
  struct Post {
    int j0 = 0, k = -1, slot = 0;
  };
  void begin_checks(const int every) {
    // two mirrors (rows) of the slots j0..k of one check point, for this
    // solve's form only (pinned allocations are slow)
    const size_t len = static_cast<size_t>(every) + 1;
    if (one_ && mone_.extent(1) < len) mone_ = Mirror<CGOneSums<T>>(std::string("kband::cg::host_history"), 2, len);
    if (!one_ && msums_.extent(1) < len) {
      msums_ = Mirror<CGSums<T>>(std::string("kband::cg::host_sums"), 2, len);
      mpap_ = Mirror<T>(std::string("kband::cg::host_pap"), 2, len);
    }
    posted_ = 0;
    nposts_ = 0;
    checks_ = 0;
    pending_ = Post{};
  }
  /// Marks a mirror and enqueues the copy of history slots j0..k into it.
  Post post(const Exec& exec, const int k) {
    const Post p{posted_, k, nposts_++ % 2};
    posted_ = k;
    const auto slots = Kokkos::make_pair(p.j0, k + 1), to = Kokkos::make_pair(0, k + 1 - p.j0);
    if (one_) {
      auto dst = Kokkos::subview(mone_, p.slot, to);
      CGMirrorWords<T>::mark(dst.data(), dst.span() * sizeof(CGOneSums<T>));
      Kokkos::deep_copy(exec, dst, Kokkos::subview(st_.one, slots));
    } else {
      auto dst = Kokkos::subview(msums_, p.slot, to);
      CGMirrorWords<T>::mark(dst.data(), dst.span() * sizeof(CGSums<T>));
      Kokkos::deep_copy(exec, dst, Kokkos::subview(st_.sums, slots));
      if (k > p.j0) {
        auto pd = Kokkos::subview(mpap_, p.slot, Kokkos::make_pair(0, k - p.j0));
        CGMirrorWords<T>::mark(pd.data(), pd.span() * sizeof(T));
        Kokkos::deep_copy(exec, pd, Kokkos::subview(st_.pap, Kokkos::make_pair(p.j0, k)));
      }
    }
    return p;
  }
  bool landed(const Post& p) const {
    const size_t m = static_cast<size_t>(p.k - p.j0) + 1;
    if (one_) return CGMirrorWords<T>::landed(&mone_(p.slot, 0), m * sizeof(CGOneSums<T>));
    return CGMirrorWords<T>::landed(&msums_(p.slot, 0), m * sizeof(CGSums<T>)) &&
           CGMirrorWords<T>::landed(&mpap_(p.slot, 0), (m - 1) * sizeof(T));
  }
  /// Waits for a posted copy. After a second without it the host fences
  /// (which reports a failed kernel) and looks once more.
  void wait(const Exec& exec, const Post& p) const {
    const auto t0 = std::chrono::steady_clock::now();
    for (long spin = 1; !landed(p); ++spin) {
      if (spin % 1024 == 0 && std::chrono::steady_clock::now() - t0 > std::chrono::seconds(1)) {
        exec.fence();
        require(landed(p), "kband::cg: a copy of the residual history did not arrive");
        return;
      }
    }
  }
  /// Check point k; true when the solve stopped (every posted copy has then
  /// landed, so the mirrors are free for the next solve).
  bool check(const Exec& exec, const Comm& comm, const int k, const int maxit, CGResult& res) {
    const Post now = post(exec, k);
    ++checks_;
    if (pending_.k >= 0) {
      const Post p = pending_;
      pending_ = Post{};
      if (comm.agree(analyse(exec, p, maxit, res))) {
        wait(exec, now);
        return true;
      }
    }
    if (checks_ <= kCGSyncChecks || k >= maxit) return comm.agree(analyse(exec, now, maxit, res));
    pending_ = now;
    return false;
  }

  /// Decides from the slots of a posted copy (waits for it); true when the
  /// solve stopped. res.history holds the entries 0..j0 of earlier check
  /// points, every one of which passed the tests below.
  bool analyse(const Exec& exec, const Post& p, const int maxit, CGResult& res) {
    wait(exec, p);
    const int j0 = p.j0, k = p.k;
    auto hs = [&](const int j) {
      if (!one_) return msums_(p.slot, j - j0);
      const CGOneSums<T>& o = mone_(p.slot, j - j0);
      CGSums<T> v;
      v.rr = o.rr;
      v.rz = o.rz;
      return v;
    };
    auto hp = [&](const int j) { return one_ ? mone_(p.slot, j - j0).pap : mpap_(p.slot, j - j0); };
    if (j0 == 0) rr0_ = hs(0).rr;
    const double rr0 = static_cast<double>(rr0_);
    auto rel = [&](int j) { return rr0 > 0 ? std::sqrt(static_cast<double>(hs(j).rr) / rr0) : 0.0; };
    for (int j = j0; j <= k; ++j) {
      const CGSums<T> h = hs(j);
      const double rr = h.rr, rz = h.rz;
      if (j >= static_cast<int>(res.history.size())) res.history.push_back(rel(j));
      res.iterations = j;
      res.relative_residual = rel(j);
      if (!std::isfinite(rr) || !std::isfinite(rz)) {
        res.status = CGStatus::NonFinite;
        return true;
      }
      // the same comparison as the device, in T
      if (!(h.rr > st_.tol2 * rr0_)) {
        res.status = CGStatus::Converged;
        return true;
      }
      if (!(rz > 0)) {
        res.status = CGStatus::PreconditionerNotSPD;
        return true;
      }
      if (j < k) {
        const double pap = hp(j);
        if (!std::isfinite(pap)) {
          res.status = CGStatus::NonFinite;
          return true;
        }
        if (!(pap > 0)) {
          res.status = CGStatus::NotSPD;
          return true;
        }
      }
    }
    res.status = CGStatus::MaxIterations;
    return k >= maxit;
  }

  Op op_;
  CGPreconditioner prec_;
  const LineSolver<T, Mem>* line_;
  CGState<T, Mem> st_;
  bool alternate_ = true;
  bool one_ = false;  // this solve runs the one-reduction form
  Vec r_, q_, aux_, p_[2];
  Vec r1_, q1_;  // the one-reduction form's second r and q buffers
  // the host mirrors of the history (check points), two of each
  template <class E>
  using Mirror = Kokkos::View<E**, Kokkos::LayoutRight, CGMirrorSpace>;
  Mirror<CGSums<T>> msums_;
  Mirror<T> mpap_;
  Mirror<CGOneSums<T>> mone_;
  T rr0_ = T(0);  // r.r at k = 0
  int posted_ = 0, nposts_ = 0, checks_ = 0;
  Post pending_;  // the check point posted, not yet analysed
};

/// What the single-rank operators share: no halo, the start spmv, the finish.
template <class Exec, class T, class Mem, class Matrix>
struct LocalOperator {
  Matrix A;
  int rows = 0;
  int n() const { return rows; }
  int global_n() const { return rows; }
  int halo() const { return 0; }
  template <class VX>
  void start(const Exec& exec, const VX& x, const Kokkos::View<T*, Mem>&, const Kokkos::View<T*, Mem>& q) const {
    spmv(exec, A, x, q);
  }
  template <class K>
  void finish(const Exec& exec, const K& k) const {
    Kokkos::parallel_for("kband::cg::finish", CGPolicy<Exec>(exec, 0, k.s.st.chunks()), k);
  }
};

/// Single-rank CDS operator: fused K1. A matrix found exactly symmetric at
/// construction (offsets in +-o pairs, A(i, i - o) == A(i - o, i)) is
/// multiplied from its main and upper diagonals only (CDSSymRow), as the
/// dense operator reads the upper triangle only.
template <class Exec, class T, class Mem>
struct CDSOperator : LocalOperator<Exec, T, Mem, CDSMatrix<T, Mem>> {
  using Base = LocalOperator<Exec, T, Mem, CDSMatrix<T, Mem>>;
  using SymRow = CDSSymRow<typename CDSMatrix<T, Mem>::data_view>;
  CDSUpper up;
  bool sym = false;
  // CGBandApply: rows a thread and a team, the half bandwidth, the buffers
  // (made at the first solve that takes it)
  static constexpr int kBandRows = is_device_exec<Exec>::value ? KBAND_CG_BAND_ROWS : KBAND_CG_BAND_HOST_ROWS;
  template <class Row>
  static constexpr int kBandBatch = !is_device_exec<Exec>::value                   ? 1
                                    : std::is_same<Row, CDSConstSymRow<T>>::value ? KBAND_CG_BAND_BATCH_CONST
                                                                                   : KBAND_CG_BAND_BATCH;
  template <class Row, int P>
  using Band = CGBandApply<Exec, Row, T, Mem, P, kBandRows, kBandBatch<Row>>;
  int w = 0;
  std::shared_ptr<CGBandBuffers<T, Mem>> band = std::make_shared<CGBandBuffers<T, Mem>>();
  // constant diagonals (sym only): the row of their values
  CDSConstSymRow<T> crow{};
  bool constant = false;
  CDSOperator(const Exec& exec, const CDSMatrix<T, Mem>& M) : Base{M, M.n()}, w(M.half_bandwidth()) {
    sym = cds_symmetric(exec, M, up);
    constant = sym && cds_constant(exec, M, up, crow);
  }
  /// The one-reduction form takes CGBandApply when the band is narrow (4 w
  /// <= the rows of a team, and its scratch fits) and x, r, p and the
  /// diagonals the product reads (none when it multiplies by constant ones:
  /// `cdiag`, CGOptions::constant_diagonals) take at most
  /// KBAND_CG_BAND_MAX_MIB; unless `any` (CGBand::Always), the matrix must
  /// also give 2 teams for every 2048 threads the device holds (CGBand).
  bool narrow_band(const bool cdiag, const bool any = false) const {
    using K = Band<CDSRowOf<T, Mem>, kPrecNone>;
    const int read = constant && cdiag ? 0 : (sym ? up.nu + (up.main >= 0 ? 1 : 0) : this->A.ndiag());
    const double mib = static_cast<double>(this->rows) * (3 + read) * sizeof(T) / (1024.0 * 1024.0);
    const long teams = (static_cast<long>(this->rows) + K::kChunk - 1) / K::kChunk;
    return w > 0 && 4 * w <= K::kChunk && mib <= KBAND_CG_BAND_MAX_MIB &&
           K::scratch_values(w) * sizeof(T) <= static_cast<size_t>(Team<Exec>::scratch_size_max(0)) &&
           (any || teams * 1024 >= static_cast<long>(Exec().concurrency()));
  }
  /// True when K1 reads only the main and upper diagonals.
  bool upper_only() const { return sym; }
  void diagonal(const Exec& exec, const Kokkos::View<T*, Mem>& out) const {
    const auto& A = this->A;
    Kokkos::parallel_for("kband::cg::diagonal", impl::Range<Exec>(exec, 0, A.n()),
                         CDSDiagonal<typename CDSMatrix<T, Mem>::data_view, T, Mem>{A.data(), A.diagonal_index(0), out});
  }
  template <class Step, class Slot>
  void step(const Exec& exec, const Step& s, const Kokkos::View<T*, Mem>& q, const Slot& pap) const {
    const auto& A = this->A;
    if (constant && s.st.cdiag)
      launch(exec, s, crow, q, pap);
    else if (sym)
      launch(exec, s, SymRow{A.data(), up, A.n()}, q, pap);
    else if (CDSOffsets::fits(A.ndiag()))
      launch(exec, s, cds_row(A), q, pap);
    else
      launch(exec, s, cds_row_view(A), q, pap);
  }
  /// The one-reduction kernel (CGReductions::One) into the history slot `one`.
  static constexpr bool kOneReduction = true;
  template <int P, class Slot>
  void step_one(const Exec& exec, const CGOneFields<T, Mem>& f, const Slot& one) const {
    const auto& A = this->A;
    if (constant && f.st.cdiag)
      launch_one<P>(exec, f, crow, one);
    else if (sym)
      launch_one<P>(exec, f, SymRow{A.data(), up, A.n()}, one);
    else if (CDSOffsets::fits(A.ndiag()))
      launch_one<P>(exec, f, cds_row(A), one);
    else
      launch_one<P>(exec, f, cds_row_view(A), one);
  }
  template <int P, class Row, class Slot>
  void launch_one(const Exec& exec, const CGOneFields<T, Mem>& f, const Row& row, const Slot& one) const {
    if (f.st.band && narrow_band(f.st.cdiag, f.st.band_any)) {
      using K = Band<Row, P>;
      const int n = this->rows, teams = (n + K::kChunk - 1) / K::kChunk;
      CGBandBuffers<T, Mem>& b = *band;
      if (static_cast<int>(b.r.extent(0)) != n) {
        auto alloc = [&](const char* l, size_t len) {
          return Kokkos::View<T*, Mem>(Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, std::string(l)), len);
        };
        b.r = alloc("kband::cg::band_r", n);
        b.p = alloc("kband::cg::band_p", n);
        b.hp = alloc("kband::cg::band_halo_p", 2 * static_cast<size_t>(teams) * 4 * w);
        b.hr = alloc("kband::cg::band_halo_r", 2 * static_cast<size_t>(teams) * 2 * w);
      }
      Team<Exec, Kokkos::LaunchBounds<256, kCGOneBlocks>> policy(exec, teams, K::kTeam);
      policy.set_scratch_size(0, Kokkos::PerTeam(K::scratch_values(w) * sizeof(T)));
      Kokkos::parallel_reduce("kband::cg::iterate(band)", policy, K{f, b, row, w, teams}, one);
      return;
    }
    Kokkos::parallel_reduce("kband::cg::iterate", impl::Range<Exec, Kokkos::LaunchBounds<256, kCGOneBlocks>>(exec, 0, f.st.chunks()),
                            CGOneApply<Row, T, Mem, P, !is_device_exec<Exec>::value>{f, row}, one);
  }
  /// K1 with rows `row`; GPU items of more than 4 rows take the grouped form.
  template <class Step, class Row, class Slot>
  static void launch(const Exec& exec, const Step& s, const Row& row, const Kokkos::View<T*, Mem>& q, const Slot& pap) {
    constexpr int P = Step::prec;
    const CGPolicy<Exec> policy(exec, 0, s.st.chunks());
    if constexpr (!is_device_exec<Exec>::value)
      Kokkos::parallel_reduce("kband::cg::apply", policy, CGFusedApply<Row, T, Mem, P, true>{s, row, q}, pap);
    else if (s.st.chunk <= 4)
      Kokkos::parallel_reduce("kband::cg::apply", policy, CGFusedApply<Row, T, Mem, P, false>{s, row, q}, pap);
    else
      Kokkos::parallel_reduce("kband::cg::apply", policy, CGFusedApply<Row, T, Mem, P, false, true>{s, row, q}, pap);
  }
};

/// Single-rank dense operator: K1 in two kernels, the tiles of the upper
/// triangle (CGDenseSymApply) and the sum of their partial products
/// (CGDenseAssemble).
template <class Exec, class T, class Mem, class VA>
struct DenseOperator : LocalOperator<Exec, T, Mem, VA> {
  using Base = LocalOperator<Exec, T, Mem, VA>;
  // tile side; lanes per thread (GPUs: a warp, 4 columns each; CPUs: one
  // thread, the tile's columns in a vectorised loop)
  static constexpr int kTile = KBAND_CG_DENSE_TILE;
  static constexpr int kLanes = is_device_exec<Exec>::value ? 32 : 1;
  static constexpr int kThreads = is_device_exec<Exec>::value ? KBAND_CG_DENSE_THREADS : 1;
  Kokkos::View<T**, Kokkos::LayoutRight, Mem> part;  // (tiles per side, n)

  /// K1 reads the upper triangle only.
  bool upper_only() const { return true; }
  DenseOperator(const Exec&, const VA& M) : Base{M, static_cast<int>(M.extent(0))} {
    const int n = this->rows;
    part = Kokkos::View<T**, Kokkos::LayoutRight, Mem>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("kband::cg::dense_part")), (n + kTile - 1) / kTile, n);
  }
  void diagonal(const Exec& exec, const Kokkos::View<T*, Mem>& out) const {
    Kokkos::parallel_for("kband::cg::diagonal", impl::Range<Exec>(exec, 0, this->rows),
                         DenseDiagonal<VA, T, Mem>{this->A, out});
  }
  template <class Step, class Slot>
  void step(const Exec& exec, const Step& s, const Kokkos::View<T*, Mem>& q, const Slot& pap) const {
    constexpr int P = Step::prec;
    const int n = this->rows;
    using K = CGDenseSymApply<Exec, VA, T, Mem, P, kLanes, kTile>;
    DenseTiles<kTile> tiles{n, (n + kTile - 1) / kTile};
    // 2 rows per step fit in 64 registers (4 teams of 256 threads per
    // multiprocessor); 4 rows need 80 (3 teams; at 64 they spill) and were
    // slower (H200, n = 4096: 65.2 against 46.0 us per iteration)
    constexpr int kTeam = kThreads * kLanes;
    impl::Team<Exec, Kokkos::LaunchBounds<kTeam, (K::RU >= 4 ? 768 : 1024) / kTeam>> policy(exec, tiles.count(), kThreads,
                                                                                        kLanes);
    Kokkos::parallel_reduce("kband::cg::apply(dense)",
                            policy.set_scratch_size(0, Kokkos::PerTeam(K::scratch_bytes(kThreads))),
                            K{s, this->A, part, tiles}, pap);
    Kokkos::parallel_for("kband::cg::assemble(dense)", CGPolicy<Exec>(exec, 0, n),
                         CGDenseAssemble<T, Mem>{s.st, part, q});
  }
};

}  // namespace impl
}  // namespace kband
