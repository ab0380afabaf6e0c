// kband CG with the zebra line preconditioner (CGPreconditioner::Zebra):
// symmetric red-black line Gauss-Seidel, run as CG on the Schur complement of
// the odd ("black") lines.
//
// The lines are those of the line preconditioner (the tridiagonal part of A
// split where both couplings between consecutive rows are zero), all of one
// length L. Colour the even lines red and the odd ones black. When every
// other stored entry joins a line only to the lines next to it (2D Poisson:
// offsets +-nx), A is, in red-black order,
//
//   [ D_R  U  ]      D_R, D_B: the lines' tridiagonal blocks,
//   [ U^T  D_B],     U: the couplings between red and black lines,
//
// and eliminating the red lines leaves S x_B = g with
//   S = D_B - U^T D_R^-1 U,   g = b_B - U^T D_R^-1 b_R,   x_R = D_R^-1 (b_R - U x_B).
// kband runs preconditioned CG on that system, with the black lines' own
// solves D_B^-1 as its preconditioner. This is CG with the symmetric zebra
// line Gauss-Seidel preconditioner, on half the unknowns: the eigenvalues of
// D_B^-1 S are 1 - mu^2 for the line-Jacobi iteration's mu, so it needs
// about half the iterations of the line preconditioner (2D Poisson 2^18: 396
// against 797), each applying two half batches of line solves (the red lines
// to apply S, the black ones to precondition).
//
// The residual of the reduced system is the residual of the full system at
// the iterate whose red lines are solved exactly (those rows' residual is 0),
// so the stopping test ||r_k|| <= tol ||r_0|| is on the true system's
// residual; r_0 is that of x0's black lines with the red lines solved (it can
// exceed ||b - A x0||: 1.41x for 2D Poisson, b = ones, x0 = 0).
//
// Vectors in the reduced spaces are compact: black line c (full line 2c + 1)
// row j at c L + j, red line c (full line 2c) row j at c L + j. A coupling at
// offset o from full row i reaches line i's next line (o > 0) or previous
// one (o < 0); in the compact vectors of the other colour it is at offset
//   red rows:   o - L (o > 0), o     (o < 0)
//   black rows: o     (o > 0), o + L (o < 0).
// The kernels read A in place (no copy of the matrix); the line solvers hold
// factors of the red and black tridiagonal blocks (one each for 2D Poisson).
//
// Per iteration (the driver is CGDriver, with this operator and the black
// lines' LineSolver as its line preconditioner):
//   red lines     t = D_R^-1 s_R, s_R = -U p_new (p_new = z + beta p_old at
//                 each coupling, ZebraRedStep, as the kernel loads its rhs;
//                 lines over 1024 rows: a kernel of its own first)           LineKernel (Apply)
//   ZebraBlack    p_new, q = D_B p_new + U^T t, p.Ap; x_B += alpha p_old     reads z, p_old, x, A, t
//   black lines   r -= alpha q, z = D_B^-1 r, (r.r, r.z)                     LineKernel (Iterate)
// (H100, 2D Poisson 2^20, before s_R was fused into the red lines' kernel:
// 12 us for s_R, 12, 28 and 20 us; the line kernels are bound by the
// latency of their teams, ZebraBlack moves 43 MB.)
// That is the two-reduction form (CGReductions::Two). The one-reduction
// form (ZebraBlackOne, below) runs two kernels: the red lines (21-23 us at
// 2^20, their rhs from z - alpha w + beta p) and one black-line kernel
// (38 us) in place of the last two; 60.5-61.5 against 67-68 us an iteration.
#pragma once

#include "kband_CG_impl.hpp"

#include <memory>

namespace kband {
namespace impl {

/// Couplings of one colour's rows to the other colour's compact vector: the
/// matrix diagonal (index into A's data) and the compact offset.
struct ZebraCouplings {
  static constexpr int kMax = 8;
  int count = 0;
  int diag[kMax] = {};
  int off[kMax] = {};
  int full_off[kMax] = {};  // the offset in A
  int mirror[kMax] = {};    // the diagonal of offset -full_off (symmetric A)
};

/// What the zebra kernels share: A in place, the line length, the couplings.
template <class T, class Mem>
struct ZebraRows {
  using Data = Kokkos::View<const T**, Kokkos::LayoutLeft, Mem>;
  Data A;
  int L = 1, nR = 0, nB = 0;
  int dl = -1, d0 = -1, du = -1;  // tridiagonal part (-1: not stored)
  ZebraCouplings red, black;      // red rows -> black vector, black rows -> red vector
  // A exactly symmetric (offsets in +-o pairs, A(i, i + o) == A(i + o, i)):
  // the red rows read their couplings from the black rows' mirrored entries,
  // which the black rows' product reads again while they are in L2, and
  // the black rows read A(i, i - 1) as A(i - 1, i), next to their own +1 entry.
  bool sym = false;
  /// Full row of compact row ic of colour `color` (0 red, 1 black).
  KOKKOS_INLINE_FUNCTION int full(const int ic, const int color) const { return ic + (ic / L + color) * L; }
  /// sum over the couplings of red row ic: A(i, o) v(compact black column)
  template <class V>
  KOKKOS_INLINE_FUNCTION T red_coupling(const int ic, const V& v) const {
    const int i = full(ic, 0);
    T s = 0;
    for (int c = 0; c < red.count; ++c) {
      const int j = ic + red.off[c], f = i + red.full_off[c];
      // (f outside A: the entry is padding, 0)
      if (j >= 0 && j < nB && f >= 0 && f < nR + nB) s += (sym ? A(f, red.mirror[c]) : A(i, red.diag[c])) * v(j);
    }
    return s;
  }
  /// Row ib of D_B v + U^T t (v: a black vector, t: a red one).
  template <class V, class W>
  KOKKOS_INLINE_FUNCTION T black_row(const int ib, const V& v, const W& t) const {
    const int i = full(ib, 1), j = ib % L;
    T s = A(i, d0) * v(ib);
    if (dl >= 0 && j > 0) s += (sym ? A(i - 1, du) : A(i, dl)) * v(ib - 1);
    if (du >= 0 && j + 1 < L) s += A(i, du) * v(ib + 1);
    for (int c = 0; c < black.count; ++c) {
      const int k = ib + black.off[c];
      if (k >= 0 && k < nR) s += A(i, black.diag[c]) * t(k);
    }
    return s;
  }
};

template <class T, class Mem>
struct ZebraVec {
  Kokkos::View<const T*, Mem> v;
  KOKKOS_INLINE_FUNCTION T operator()(const int i) const { return v(i); }
};

/// s_R = b_R - U x_B over the red rows.
template <class T, class Mem>
struct ZebraRedRhs {
  ZebraRows<T, Mem> z;
  Kokkos::View<const T*, Mem> b, x;
  Kokkos::View<T*, Mem> s;
  KOKKOS_INLINE_FUNCTION void operator()(const int ic) const { s(ic) = b(ic) - z.red_coupling(ic, ZebraVec<T, Mem>{x}); }
};

/// The red lines' right-hand side in an iteration, only while iteration k
/// goes. Lines of up to kZebraFusedLine rows: computed row by row inside the
/// red line kernel (LineSolver::apply_rhs), no s_R array and no kernel of its
/// own; longer ones: by ZebraRedStepRows.
template <class T, class Mem, int Prec>
struct ZebraRedStep {
  CGStep<T, Mem, Prec> st;
  ZebraRows<T, Mem> z;
  KOKKOS_INLINE_FUNCTION bool active() const { return st.st.go(); }
  /// p_new = z + beta p_old (beta from the device history: once per thread)
  KOKKOS_INLINE_FUNCTION CGDir<T, Mem, Prec> eval() const { return st.dir(); }
  /// red row ic of s_R = -U p_new, p_new at each coupling
  KOKKOS_INLINE_FUNCTION T operator()(const int ic, const CGDir<T, Mem, Prec>& d) const { return -z.red_coupling(ic, d); }
};

/// Red lines longer than this take s_R from its own kernel (ZebraRedStepRows)
/// instead of computing it in the line kernel, which there takes 16 rows a
/// thread: H100, 2D Poisson 2^22 (2048-row lines), 219-220 against 226-227
/// us an iteration. Up to it, the red line kernel runs 4 rows a thread
/// (kZebraRedRows) with s_R computed inside: 2^20 66.4-67.2 against
/// 71.2-71.9 us (the separate kernel, 8 rows a thread), 2^18 33.3-33.6
/// against 34.9. (Fused at 8 rows a thread: 71.0-72.7 and 37.2-37.9; the
/// line kernel then holds 128 threads a line, a quarter of the threads an
/// H100 can hold at 2^20. The black lines at 4 rows a thread too: no gain.)
constexpr int kZebraFusedLine = 1024;
constexpr int kZebraRedRows = 4;

/// s_R = -U p_new into an array, a thread a red row (lines over
/// kZebraFusedLine rows); Rs: ZebraRedStep or ZebraRedOne.
template <class Rs, class T, class Mem>
struct ZebraRedStepRows {
  Rs rs;
  Kokkos::View<T*, Mem> s;
  KOKKOS_INLINE_FUNCTION void operator()(const int ic) const {
    if (!rs.active()) return;
    s(ic) = rs(ic, rs.eval());
  }
};

/// q0 = D_B x_B + U^T t (the start: t = D_R^-1 (b_R - U x_B)).
template <class T, class Mem>
struct ZebraBlackStart {
  ZebraRows<T, Mem> z;
  Kokkos::View<const T*, Mem> x, t;
  Kokkos::View<T*, Mem> q;
  KOKKOS_INLINE_FUNCTION void operator()(const int ib) const { q(ib) = z.black_row(ib, ZebraVec<T, Mem>{x}, ZebraVec<T, Mem>{t}); }
};

/// The black rows' K1: the deferred x update, p_new (written once, computed
/// at every neighbour), q = D_B p_new + U^T t with t = -D_R^-1 U p_new, p.Ap.
template <class T, class Mem, int Prec>
struct ZebraBlack {
  CGStep<T, Mem, Prec> s;
  ZebraRows<T, Mem> z;
  Kokkos::View<const T*, Mem> t;
  Kokkos::View<T*, Mem> q;
  KOKKOS_INLINE_FUNCTION void operator()(const int c, T& pap) const {
    const T a = s.x_alpha();
    const bool go = s.st.go();
    if (a == T(0) && !go) return;
    const CGDir<T, Mem, Prec> d = s.dir();
    const ZebraVec<T, Mem> tv{t};
    for (int i = s.st.first(c), e = s.st.last(c), di = s.st.step(); i < e; i += di) {
      if (a != T(0)) s.x(i) += a * s.pold(i);
      if (go) {
        const T pi = d(i);
        const T qi = z.black_row(i, d, tv);
        s.pnew(i) = pi;
        q(i) = qi;
        pap += pi * qi;
      }
    }
  }
};

/// The one-reduction zebra (CGReductions::One): two kernels an iteration.
/// Iteration k's black kernel defers nothing but takes the residual update
/// of iteration k - 1 with it: r -= a q, z -= a w, x += a p (a = alpha_{k-1}),
/// where w = D_B^-1 q was solved with q, so that z = D_B^-1 r follows by the
/// same update (z - a w = D_B^-1 (r - a q)). Then p = z + beta p, q = D_B p
/// + U^T t and w = D_B^-1 q in the black line's team, and one(k) = (r.r,
/// r.z, p.q, z.q, q.w): beta's numerator for iteration k + 1 is r.z - 2 a
/// z.q + a^2 q.w (CGOneFields::scalars, with M^-1 = D_B^-1). Before it,
/// iteration k's red kernel needs p_k at the couplings only: z - a w + beta p
/// from the black vectors of k - 1. The three kernels of the two-reduction
/// form (red lines, black product, black lines) become two, and the black
/// product's pass over the vectors joins the black lines' kernel.
/// Kernel 0: r = b_B, q = the start's q (a = 1), z = D_B^-1 (b_B - q) and
/// w = p = 0, so that r_0 = b_B - q, z_0 = D_B^-1 r_0 and p_0 = z_0.

/// p_k at black row j from the black vectors of iteration k - 1.
template <class T, class Mem>
struct ZebraOneDir {
  Kokkos::View<const T*, Mem> z, w, p;
  T a, beta;
  KOKKOS_INLINE_FUNCTION T operator()(const int j) const { return z(j) - a * w(j) + beta * p(j); }
};

/// The red lines' right-hand side -U p_k of the one-reduction form (the
/// LineSolver::apply_rhs functor interface, as ZebraRedStep).
template <class T, class Mem>
struct ZebraRedOne {
  CGOneFields<T, Mem> f;
  ZebraRows<T, Mem> z;
  Kokkos::View<const T*, Mem> zB, wB;
  KOKKOS_INLINE_FUNCTION bool active() const {
    T a, beta;
    return f.scalars(a, beta);
  }
  KOKKOS_INLINE_FUNCTION ZebraOneDir<T, Mem> eval() const {
    T a = 0, beta = 0;
    f.scalars(a, beta);
    return {zB, wB, f.pold, a, beta};
  }
  KOKKOS_INLINE_FUNCTION T operator()(const int ic, const ZebraOneDir<T, Mem>& d) const { return -z.red_coupling(ic, d); }
};

/// b_B - q, the rhs of kernel 0's z = D_B^-1 (b_B - q).
template <class T, class Mem>
struct ZebraOneStartRhs {
  Kokkos::View<const T*, Mem> b, q;
  KOKKOS_INLINE_FUNCTION bool active() const { return true; }
  KOKKOS_INLINE_FUNCTION int eval() const { return 0; }
  KOKKOS_INLINE_FUNCTION T operator()(const int i, int) const { return b(i) - q(i); }
};

/// Blocks of 256 threads a multiprocessor ZebraBlackOne is built for (its
/// register cap: 2 -> 128 registers).
#ifndef KBAND_CG_ZEBRA_BLACK_BLOCKS
#define KBAND_CG_ZEBRA_BLACK_BLOCKS 2
#endif
/// Rows of a thread whose loads ZebraBlackOne issues together.
#ifndef KBAND_CG_ZEBRA_BATCH
#define KBAND_CG_ZEBRA_BATCH 4
#endif

/// The one-reduction zebra's black kernel, a group of threads a black line
/// (the black LineSolver's geometry and factor, LineKernel's sweeps):
///   pass A (rows of the thread, KBAND_CG_ZEBRA_BATCH at a time, every load
///          of a batch issued before its first store): r, z, x updated, p =
///          z + beta p, the row's q without its in-line neighbours (A(i, i) p
///          + U^T t), A(i, i + 1); into memory r, z, x, p, into scratch p, z,
///          that q and that entry;
///   pass B: q += the line's p at j - 1 and j + 1 (scratch; an unsymmetric
///          A's A(i, i - 1) from memory);
///   sweep:  w = D_B^-1 q;
///   out:    w and q into memory; one(k) joined by the reduction.
/// Every vector is read at the thread's own rows only (r, q, p double-
/// buffered by the driver; z and w in place).
template <class Exec, class T, class Mem>
struct ZebraBlackOne {
  using member = typename Kokkos::TeamPolicy<Exec>::member_type;
  using Scratch = Kokkos::View<T*, typename Exec::scratch_memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  using value_type = CGOneSums<T>;
  LineKernel<Exec, T, Mem> lk;
  CGOneFields<T, Mem> f;
  ZebraRows<T, Mem> zr;
  Kokkos::View<T*, Mem> zB, wB;
  Kokkos::View<const T*, Mem> t;
  int level;  // team scratch level

  /// q and y / w in LineKernel's padded slots, p and z at their rows (the
  /// accesses of passes A and B are consecutive rows), the scans' arrays:
  /// a 1024-row double line in 39 KB, under Kokkos' CUDA limit for level 0
  /// (about 40 KB). (All four padded: 41 KB, level 1, and the kernel took
  /// 78 against 38 us on the H100 at 2^20.)
  static size_t scratch_bytes(const LineGeometry& g) {
    return (2 * static_cast<size_t>(g.lpt) * (g.padded() + g.len) + 4 * static_cast<size_t>(g.team())) * sizeof(T);
  }
  KOKKOS_INLINE_FUNCTION void operator()(const member& m, CGOneSums<T>& sums) const {
    T a, beta;
    if (!f.scalars(a, beta)) return;  // the same for the whole team
    const LineGeometry& g = lk.g;
    const int ts = m.team_size(), me = m.team_rank();
    const int grp = me / g.tl, t0 = me % g.tl;
    const int pad = g.padded();
    const int lines = 2 * g.lpt * (pad + g.len);
    Scratch buf(m.team_scratch(level), lines + 4 * ts);
    T* const d = buf.data() + grp * pad;                       // q
    T* const x = buf.data() + (g.lpt + grp) * pad;             // A(i, i + 1), then y and w
    T* const ps = buf.data() + 2 * g.lpt * pad + grp * g.len;  // p
    T* const zs = ps + g.lpt * g.len;                          // z
    const Scratch sg(buf.data() + lines, 2 * ts), sv(buf.data() + lines + 2 * ts, 2 * ts);
    int i0, len, fi;
    lk.line(m.league_rank() * g.lpt + grp, i0, len, fi);
    auto slot = [&](const int j) { return j + (j >> g.lc); };
    const ZebraCouplings& cb = zr.black;
    const int L = zr.L;
    CGOneSums<T> s;
    constexpr int B = KBAND_CG_ZEBRA_BATCH;
    for (int j0 = t0; j0 < len; j0 += B * g.tl) {
      T rv[B], qv[B], zv[B], wv[B], pv[B], xv[B], a0[B], au[B], ut[B];
      for (int u = 0; u < B; ++u) {
        const int j = j0 + u * g.tl, jj = j < len ? j : len - 1, ib = i0 + jj, i = zr.full(ib, 1);
        rv[u] = f.rold(ib);
        qv[u] = f.qold(ib);
        zv[u] = zB(ib);
        wv[u] = wB(ib);
        pv[u] = f.pold(ib);
        xv[u] = f.x(ib);
        a0[u] = zr.A(i, zr.d0);
        au[u] = zr.du >= 0 && ib % L + 1 < L ? zr.A(i, zr.du) : T(0);
        ut[u] = 0;
        for (int c = 0; c < cb.count; ++c) {
          const int k = ib + cb.off[c];
          if (k >= 0 && k < zr.nR) ut[u] += zr.A(i, cb.diag[c]) * t(k);
        }
      }
      for (int u = 0; u < B; ++u) {
        const int j = j0 + u * g.tl, ib = i0 + j;
        if (j < len) {
          const T r1 = rv[u] - a * qv[u], z1 = zv[u] - a * wv[u], p1 = z1 + beta * pv[u];
          f.rnew(ib) = r1;
          zB(ib) = z1;
          f.pnew(ib) = p1;
          f.x(ib) = xv[u] + a * pv[u];
          ps[j] = p1;
          zs[j] = z1;
          d[slot(j)] = a0[u] * p1 + ut[u];
          x[slot(j)] = au[u];
          s.rr += r1 * r1;
          s.rz += r1 * z1;
        }
      }
    }
    m.team_barrier();
    // pass B: lines start at multiples of L, so j is the row's place in its line
    for (int j = t0; j < len; j += g.tl) {
      T qi = d[slot(j)];
      if (j > 0) qi += (zr.sym ? x[slot(j - 1)] : (zr.dl >= 0 ? zr.A(zr.full(i0 + j, 1), zr.dl) : T(0))) * ps[j - 1];
      if (j + 1 < len) qi += x[slot(j)] * ps[j + 1];
      d[slot(j)] = qi;
      s.pap += ps[j] * qi;
      s.zq += zs[j] * qi;
    }
    m.team_barrier();
    s.qmq = lk.sweep(m, sg, sv, d, x, t0, len, fi);
    m.team_barrier();
    for (int j = t0; j < len; j += g.tl) {
      wB(i0 + j) = x[slot(j)];
      f.qnew(i0 + j) = d[slot(j)];
    }
    sums += s;
  }
  KOKKOS_INLINE_FUNCTION void init(CGOneSums<T>& v) const { v = CGOneSums<T>(); }
  KOKKOS_INLINE_FUNCTION void join(CGOneSums<T>& v, const CGOneSums<T>& o) const { v += o; }
  KOKKOS_INLINE_FUNCTION void join(volatile CGOneSums<T>& v, const volatile CGOneSums<T>& o) const { v += o; }
};

/// Compact copies of b's red and black rows and x's black rows.
template <class T, class Mem, class VB, class VX>
struct ZebraGather {
  ZebraRows<T, Mem> z;
  VB b;
  VX x;
  Kokkos::View<T*, Mem> bR, bB, xB;
  KOKKOS_INLINE_FUNCTION void operator()(const int i) const {
    const int line = i / z.L, ic = (line / 2) * z.L + i % z.L;
    if (line % 2 == 0) {
      bR(ic) = b(i);
    } else {
      bB(ic) = b(i);
      xB(ic) = x(i);
    }
  }
};

/// x = the black rows of xB and the red rows of tR.
template <class T, class Mem, class VX>
struct ZebraScatter {
  ZebraRows<T, Mem> z;
  Kokkos::View<const T*, Mem> tR, xB;
  VX x;
  KOKKOS_INLINE_FUNCTION void operator()(const int i) const {
    const int line = i / z.L, ic = (line / 2) * z.L + i % z.L;
    x(i) = line % 2 == 0 ? tR(ic) : xB(ic);
  }
};

/// The black rows' main diagonal.
template <class T, class Mem>
struct ZebraDiagonal {
  ZebraRows<T, Mem> z;
  Kokkos::View<T*, Mem> out;
  KOKKOS_INLINE_FUNCTION void operator()(const int ib) const { out(ib) = z.A(z.full(ib, 1), z.d0); }
};

/// The operator CGDriver iterates: S = D_B - U^T D_R^-1 U on the black
/// lines' compact vectors. b_R (set by ZebraSolver before each solve) enters
/// the start only.
template <class Exec, class T, class Mem>
struct ZebraOperator {
  using Vec = Kokkos::View<T*, Mem>;
  ZebraRows<T, Mem> z;
  std::shared_ptr<const LineSolver<T, Mem>> red, black;  // D_R, D_B
  Vec bR, sR, tR;                                        // compact red vectors
  Vec zB, wB;  // the one-reduction form's z = D_B^-1 r and w = D_B^-1 q
  int n() const { return z.nB; }
  int global_n() const { return z.nB; }
  int halo() const { return 0; }
  /// (CGDriver's interface; it asks only under Jacobi)
  void diagonal(const Exec& exec, const Vec& out) const {
    Kokkos::parallel_for("kband::cg::zebra_diagonal", Range<Exec>(exec, 0, z.nB), ZebraDiagonal<T, Mem>{z, out});
  }
  /// q = D_B x + U^T D_R^-1 (b_R - U x): the driver's r_0 = b_B - q is g - S x.
  template <class VX>
  void start(const Exec& exec, const VX& x, const Vec&, const Vec& q) const {
    Kokkos::parallel_for("kband::cg::zebra_red", Range<Exec>(exec, 0, z.nR), ZebraRedRhs<T, Mem>{z, bR, x, sR});
    red->apply(exec, sR, tR);
    Kokkos::parallel_for("kband::cg::zebra_black_start", Range<Exec>(exec, 0, z.nB), ZebraBlackStart<T, Mem>{z, x, tR, q});
  }
  template <class Step, class Slot>
  void step(const Exec& exec, const Step& s, const Vec& q, const Slot& pap) const {
    constexpr int P = Step::prec;
    const ZebraRedStep<T, Mem, P> rhs{s, z};
    if (z.L <= kZebraFusedLine) {
      red->apply_rhs(exec, rhs, tR);
    } else {
      Kokkos::parallel_for("kband::cg::zebra_red", Range<Exec>(exec, 0, z.nR), ZebraRedStepRows<ZebraRedStep<T, Mem, P>, T, Mem>{rhs, sR});
      red->apply(exec, sR, tR);
    }
    Kokkos::parallel_reduce("kband::cg::zebra_black", CGPolicy<Exec>(exec, 0, s.st.chunks()),
                            ZebraBlack<T, Mem, P>{s, z, tR, q}, pap);
  }
  template <class K>
  void finish(const Exec& exec, const K& k) const {
    Kokkos::parallel_for("kband::cg::finish", CGPolicy<Exec>(exec, 0, k.s.st.chunks()), k);
  }
  /// The one-reduction form (ZebraBlackOne): iteration k's red and black
  /// kernels, one(k) into `one`. (P: the driver's; the zebra's is D_B.)
  static constexpr bool kOneReduction = true;
  static constexpr bool kOneLine = true;
  using BlackPolicy = Team<Exec, Kokkos::LaunchBounds<256, KBAND_CG_ZEBRA_BLACK_BLOCKS>>;
  /// Auto takes the one-reduction form where a black line fits the black
  /// kernel's team scratch (lines of up to about 1100 rows in double, 2200
  /// in float); longer lines would leave its scratch in global memory.
  bool black_fits = false;  // set with `black`
  bool one_auto() const { return black_fits; }
  static bool fits(const LineSolver<T, Mem>& b) {
    return ZebraBlackOne<Exec, T, Mem>::scratch_bytes(b.geometry()) <=
           static_cast<size_t>(BlackPolicy::scratch_size_max(0));
  }
  template <int P, class Slot>
  void step_one(const Exec& exec, const CGOneFields<T, Mem>& f, const Slot& one) const {
    if (f.st.k == 0) {  // z = D_B^-1 (b_B - q), w = 0 (f.rold is b_B, f.qold the start's q)
      black->apply_rhs(exec, ZebraOneStartRhs<T, Mem>{f.rold, f.qold}, zB);
      Kokkos::deep_copy(exec, wB, T(0));
    }
    const ZebraRedOne<T, Mem> rhs{f, z, zB, wB};
    if (z.L <= kZebraFusedLine) {
      red->apply_rhs(exec, rhs, tR);
    } else {
      Kokkos::parallel_for("kband::cg::zebra_red", Range<Exec>(exec, 0, z.nR), ZebraRedStepRows<ZebraRedOne<T, Mem>, T, Mem>{rhs, sR});
      red->apply(exec, sR, tR);
    }
    const LineGeometry& g = black->geometry();
    using K = ZebraBlackOne<Exec, T, Mem>;
    const int level = black_fits ? 0 : 1;
    const K k{LineKernel<Exec, T, Mem>{black->line_data(), g, {}}, f, z, zB, wB, tR, level};
    BlackPolicy policy(exec, (z.nB / z.L + g.lpt - 1) / g.lpt, g.team());
    policy.set_scratch_size(level, Kokkos::PerTeam(K::scratch_bytes(g)));
    Kokkos::parallel_reduce("kband::cg::zebra_black", policy, k, one);
  }
};

/// Host-side analysis of A for the zebra preconditioner: the lines, their
/// colours' tridiagonal blocks (as CDS matrices of the compact vectors) and
/// the couplings. Throws kband::Error when A does not have that structure.
template <class T, class Mem>
struct ZebraSetup {
  ZebraRows<T, Mem> rows;
  CDSMatrix<T, Mem> DR, DB;

  template <class Exec>
  ZebraSetup(const Exec& exec, const CDSMatrix<T, Mem>& A) {
    const char* fn = "kband::cg (zebra preconditioner)";
    const int n = A.n();
    auto h = Kokkos::create_mirror_view(A.data());
    exec.fence();
    Kokkos::deep_copy(h, A.data());
    const int dl = A.diagonal_index(-1), d0 = A.diagonal_index(0), du = A.diagonal_index(1);
    require(d0 >= 0, concat(fn, ": needs a stored main diagonal (offset 0)"));
    auto lower = [&](int i) { return dl >= 0 && i > 0 ? h(i, dl) : T(0); };
    auto upper = [&](int i) { return du >= 0 && i < n - 1 ? h(i, du) : T(0); };
    // the lines, as the line preconditioner finds them; all of one length
    const std::vector<int> starts = cds_line_starts(h, n, dl, du);
    const int m = static_cast<int>(starts.size()) - 1, L = starts[1];
    std::vector<int> line_of(n, 0);
    for (int s = 0; s < m; ++s) {
      require(starts[s + 1] - starts[s] == L, concat(fn, ": the lines (tridiagonal blocks) must all have one length; line ",
                                                     s, " has ", starts[s + 1] - starts[s], " rows, line 0 ", L));
      for (int i = starts[s]; i < starts[s + 1]; ++i) line_of[i] = s;
    }
    require(m >= 2, concat(fn, ": needs at least two lines (A is one tridiagonal block of ", n,
                           " rows: use CGPreconditioner::Line, which solves it exactly)"));
    rows.L = L;
    rows.nR = ((m + 1) / 2) * L;
    rows.nB = (m / 2) * L;
    rows.dl = dl;
    rows.d0 = d0;
    rows.du = du;
    // the couplings: every other stored diagonal, entries joining adjacent lines only
    const auto& offs = A.host_offsets();
    for (int d = 0; d < A.ndiag(); ++d) {
      const int o = offs[d];
      if (o >= -1 && o <= 1) continue;
      for (int i = 0; i < n; ++i) {
        const int j = i + o;
        if (j < 0 || j >= n || h(i, d) == T(0)) continue;
        require(line_of[j] == line_of[i] + (o > 0 ? 1 : -1),
                concat(fn, ": entry (", i, ", ", j, ") joins line ", line_of[i], " to line ", line_of[j],
                       "; the zebra split needs every coupling outside the tridiagonal part to join adjacent lines"));
      }
      require(rows.red.count < ZebraCouplings::kMax,
              concat(fn, ": at most ", ZebraCouplings::kMax, " coupling diagonals are supported"));
      const int mirror = A.diagonal_index(-o);
      for (ZebraCouplings* c : {&rows.red, &rows.black}) {
        c->diag[c->count] = d;
        c->full_off[c->count] = o;
        c->mirror[c->count] = mirror;
        c->off[c->count++] = c == &rows.red ? (o > 0 ? o - L : o) : (o > 0 ? o : o + L);
      }
    }
    // exact symmetry: every stored offset's mirror stored, the values equal
    rows.sym = true;
    for (int d = 0; rows.sym && d < A.ndiag(); ++d) {
      const int o = offs[d], dm = A.diagonal_index(-o);
      rows.sym = dm >= 0;
      for (int i = 0; rows.sym && i < n; ++i)
        if (i + o >= 0 && i + o < n) rows.sym = h(i, d) == h(i + o, dm);
    }
    rows.A = A.data();
    // the colours' tridiagonal blocks as CDS matrices of the compact vectors
    auto block = [&](const char* label, const int color, const int rows_c) {
      CDSMatrix<T, Mem> M(label, rows_c, {-1, 0, 1});
      auto hm = Kokkos::create_mirror_view(M.data());
      for (int ic = 0; ic < rows_c; ++ic) {
        const int i = ic + (ic / L + color) * L, j = ic % L;
        hm(ic, 0) = j > 0 ? lower(i) : T(0);
        hm(ic, 1) = h(i, d0);
        hm(ic, 2) = j + 1 < L ? upper(i) : T(0);
      }
      Kokkos::deep_copy(M.data(), hm);
      return M;
    };
    DR = block("kband::cg::zebra_red_lines", 0, rows.nR);
    DB = block("kband::cg::zebra_black_lines", 1, rows.nB);
  }
};

/// The zebra solver CGSolver delegates to: compact vectors, the red lines'
/// solver, the black lines' solver (the driver's line preconditioner).
template <class Exec, class T, class Mem>
class ZebraSolver {
 public:
  using Vec = Kokkos::View<T*, Mem>;

  ZebraSolver(const Exec& exec, const CDSMatrix<T, Mem>& A) : ZebraSolver(exec, ZebraSetup<T, Mem>(exec, A)) {}

  template <class VB, class VX>
  CGResult solve(const Exec& exec, const VB& b, const VX& x, const CGOptions& opt) {
    const ZebraRows<T, Mem>& z = op_.z;
    const int n = z.nR + z.nB;
    Kokkos::parallel_for("kband::cg::zebra_gather", Range<Exec>(exec, 0, n),
                         ZebraGather<T, Mem, VB, VX>{z, b, x, op_.bR, bB_, xB_});
    CGResult res = driver_.solve(exec, bB_, xB_, opt, LocalComm{});
    // nothing was iterated on non-finite input: x stays as it was
    if (res.status == CGStatus::NonFinite && res.iterations == 0) return res;
    // the red lines from the final black ones
    Kokkos::parallel_for("kband::cg::zebra_red", Range<Exec>(exec, 0, z.nR), ZebraRedRhs<T, Mem>{z, op_.bR, xB_, op_.sR});
    op_.red->apply(exec, op_.sR, op_.tR);
    Kokkos::parallel_for("kband::cg::zebra_scatter", Range<Exec>(exec, 0, n), ZebraScatter<T, Mem, VX>{z, op_.tR, xB_, x});
    exec.fence();
    return res;
  }

  int lines() const { return op_.z.nR / op_.z.L + op_.z.nB / op_.z.L; }
  /// True when A was found exactly symmetric (ZebraRows::sym).
  bool symmetric() const { return op_.z.sym; }
  int line_length() const { return op_.z.L; }

 private:
  using Op = ZebraOperator<Exec, T, Mem>;
  ZebraSolver(const Exec& exec, const ZebraSetup<T, Mem>& s)
      : op_(make_op(exec, s)), driver_(exec, op_, CGPreconditioner::Line, op_.black.get()) {
    auto alloc = [&](const char* l, int len) { return Vec(Kokkos::view_alloc(exec, std::string(l)), len); };
    bB_ = alloc("kband::cg::zebra_bB", s.rows.nB);
    xB_ = alloc("kband::cg::zebra_xB", s.rows.nB);
  }
  static Op make_op(const Exec& exec, const ZebraSetup<T, Mem>& s) {
    auto alloc = [&](const char* l, int len) { return Vec(Kokkos::view_alloc(exec, std::string(l)), len); };
    Op op;
    op.z = s.rows;
    op.red = std::make_shared<const LineSolver<T, Mem>>(exec, s.DR, 0, s.rows.L <= kZebraFusedLine ? kZebraRedRows : 0);
    op.black = std::make_shared<const LineSolver<T, Mem>>(exec, s.DB);
    op.black_fits = Op::fits(*op.black);
    op.bR = alloc("kband::cg::zebra_bR", s.rows.nR);
    op.sR = alloc("kband::cg::zebra_sR", s.rows.nR);
    op.tR = alloc("kband::cg::zebra_tR", s.rows.nR);
    op.zB = alloc("kband::cg::zebra_zB", s.rows.nB);
    op.wB = alloc("kband::cg::zebra_wB", s.rows.nB);
    return op;
  }

  Op op_;
  CGDriver<Exec, T, Op, LocalComm> driver_;
  Vec bB_, xB_;
};

}  // namespace impl
}  // namespace kband
