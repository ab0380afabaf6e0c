// Kernels of the Thomas-PCR hybrid (kband::hybrid), after Laszlo, Giles and
// Appleyard, "Manycore algorithms for batch scalar and block tridiagonal
// solvers", ACM TOMS 42(4), 2016.
//
// A system of n rows is cut into G segments (one team each, rows held in team
// scratch) and every segment into P chunks of at least two rows (one thread
// each). For a chunk of rows 0..L-1 (x_{-1}, x_L belong to the neighbours):
//  * a reverse sweep eliminates rows L-2..1 into row 0, giving
//      R0:  a0 x_{-1} + B0 x_0 + C0 x_{L-1} = D0,
//  * a forward (modified Thomas) sweep gives, for k = 1..L-1,
//      x_k + alpha_k x_0 + gamma_k x_{k+1} = delta_k,
//    whose last row is R1 (couples x_0, x_{L-1}, x_L); the forward
//    relations are kept in scratch for the substitution.
// R0, R1 of every chunk form the segment's reduced tridiagonal system of
// R = 2P rows (unknowns x_0, x_{L-1} of each chunk), solved by PCR in scratch.
// Then x_k = delta_k - alpha_k x_0 - gamma_k x_{k+1}, k = L-2..1.
//
// One segment (G = 1, mode Full): one kernel, 4 loads and 1 store per point.
// Several segments (long systems, mode Reduce then Substitute): the Reduce
// kernel solves each segment's reduced system with its first and last
// unknowns u_0, u_last left free (identity rows at both ends, three
// right-hand sides: the interior data, e_0, e_last) and writes two rows per
// segment coupling only (u_last of the previous segment, u_0, u_last, u_0 of
// the next): a tridiagonal system of 2G rows per system, solved recursively by
// the same hybrid. The Substitute kernel reloads the segment, repeats the
// sweeps and solves with the known u_0, u_last: 8 loads and 1 store per point
// plus O(n/segment) for the reduced system.
#pragma once

#include "kband_PCR_impl.hpp"

namespace kband {
namespace impl {

enum class HybridMode { Full, Reduce, Substitute };

struct HybridGeometry {
  int nsys = 0, n = 0;
  int W = 1;        // systems (lanes) per team
  int G = 1;        // segments per system (teams per system)
  int M = 2;        // nominal rows per chunk
  int P = 1;        // chunks per segment (maximum)
  int Smax = 1;     // rows of the longest segment
  int Sp = 1;       // padded scratch row count of one segment array (Smax + Smax/16 + 1)
  int R = 2;        // rows of the segment's reduced system (2P)
  int team_size = 1;
  int league = 0;
  int scratch_level = 0;
  size_t scratch_bytes = 0;

  KOKKOS_INLINE_FUNCTION int seg_begin(int g) const {
    return static_cast<int>(static_cast<long>(g) * n / G);
  }
  /// Chunks of a segment of Ls rows: every chunk has >= 2 rows (Ls >= 2).
  KOKKOS_INLINE_FUNCTION int chunks(int Ls) const {
    const int p = Ls / 2 < P ? Ls / 2 : P;
    return p > 1 ? p : 1;
  }
  /// Scratch elements (of T) a team needs with nrhs right-hand sides in PCR.
  static size_t scratch_elems(int W_, int Sp_, int R_, int nrhs) {
    return static_cast<size_t>(W_) * (4 * static_cast<size_t>(Sp_) + 2 * (3 + nrhs) * static_cast<size_t>(R_) + 8);
  }
};

/// The reduced system of the segments, one row pair per segment: (nsys, 2G).
template <class T, class Mem>
struct HybridReduced {
  using V = Kokkos::View<T**, Kokkos::LayoutRight, Mem>;
  V a, b, c, d, x;
  Kokkos::View<int*, Mem> bad;   // n + 1 - (first failed row) found by Reduce, 0 = none
  Kokkos::View<int*, Mem> info;  // info of the reduced solve
};

template <class Exec, class BA, class BB, class BC, class BD, class BX, class Info, HybridMode Mode>
struct HybridKernel {
  using T = batch_value_t<BX>;
  using Mem = typename batch_traits<BX>::memory_space;
  using member_type = typename Kokkos::TeamPolicy<Exec>::member_type;
  static constexpr int NRHS = Mode == HybridMode::Reduce ? 3 : 1;
  static constexpr int NV = 3 + NRHS;  // a, b, c and the right-hand sides of a PCR row

  BA a;
  BB b;
  BC c;
  BD d;
  BX x;
  Info info;
  HybridReduced<T, Mem> red;
  HybridGeometry g;
  T nan;

  /// Scratch of one team: the segment's rows (a, b, c, d per lane; one
  /// padding element every 16 rows, so that threads sweeping chunks of 16
  /// rows hit distinct banks), the PCR double buffer, the saved end rows
  /// (Reduce) and a failed-row marker per lane.
  struct Team {
    T* seg;
    T* pcr;
    T* ends;
    int* bad;
    int W, Sp, R;
    KOKKOS_INLINE_FUNCTION T& s(int k, int l, int r) const { return seg[(k * W + l) * Sp + r + (r >> 4)]; }
    KOKKOS_INLINE_FUNCTION T& p(int buf, int k, int l, int i) const { return pcr[((buf * NV + k) * W + l) * R + i]; }
  };

  struct Seg {
    int sys0, nl;  // first system, live lanes
    int seg, g0, Ls, P;
    KOKKOS_INLINE_FUNCTION int cbeg(int ch) const { return static_cast<int>(static_cast<long>(ch) * Ls / P); }
    /// 1-based global row of reduced row i (chunk i/2, its first or last row).
    KOKKOS_INLINE_FUNCTION int row_of(int i) const {
      const int ch = i / 2;
      return g0 + (i % 2 ? cbeg(ch + 1) - 1 : cbeg(ch)) + 1;
    }
  };

  KOKKOS_INLINE_FUNCTION static void mark(int* bad, int row) { Kokkos::atomic_fetch_min(bad, row); }

  KOKKOS_FUNCTION void operator()(const member_type& m) const {
    const int t = m.team_rank(), ts = m.team_size();
    const int n = g.n;
    Seg sg;
    sg.seg = m.league_rank() % g.G;
    sg.sys0 = (m.league_rank() / g.G) * g.W;
    sg.nl = g.nsys - sg.sys0 < g.W ? g.nsys - sg.sys0 : g.W;
    sg.g0 = g.seg_begin(sg.seg);
    sg.Ls = g.seg_begin(sg.seg + 1) - sg.g0;
    sg.P = g.chunks(sg.Ls);
    const int R = 2 * sg.P, nl = sg.nl;

    Team tm;
    tm.W = g.W;
    tm.Sp = g.Sp;
    tm.R = g.R;
    tm.seg = static_cast<T*>(m.team_scratch(g.scratch_level).get_shmem(g.scratch_bytes));
    tm.pcr = tm.seg + static_cast<size_t>(4) * g.W * g.Sp;
    tm.ends = tm.pcr + static_cast<size_t>(2) * NV * g.W * g.R;
    tm.bad = reinterpret_cast<int*>(tm.ends + 8 * g.W);

    // Thread t serves lane l = t % W (consecutive threads: consecutive
    // systems, then rows), items q, q + nq, ... of it; lanes >= nl idle.
    const int l = t % g.W, q = t / g.W, nq = ts / g.W;
    const bool live = l < nl;
    // 1. the segment's rows into scratch
    if (live) {
      if (q == 0) tm.bad[l] = n + 1;
      const int s = sg.sys0 + l;
      for (int r = q; r < sg.Ls; r += nq) {
        const int j = sg.g0 + r;
        tm.s(0, l, r) = j > 0 ? T(a(s, j)) : T(0);
        tm.s(1, l, r) = b(s, j);
        tm.s(2, l, r) = j < n - 1 ? T(c(s, j)) : T(0);
        tm.s(3, l, r) = d(s, j);
      }
    }
    m.team_barrier();
    // 2. chunk sweeps -> reduced rows 2ch, 2ch+1 in PCR buffer 0
    if (live)
      for (int ch = q; ch < sg.P; ch += nq) chunk_sweeps(tm, sg, l, ch);
    m.team_barrier();
    // 3. PCR on the reduced rows
    int cur = 0;
    for (int stride = 1; stride < R; stride *= 2) {
      if (live)
        for (int i = q; i < R; i += nq) pcr_row(tm, sg, l, i, stride, cur);
      cur = 1 - cur;
      m.team_barrier();
    }
    if (live) {
      for (int i = q; i < R; i += nq)
        if (!usable_pivot(tm.p(cur, 1, l, i))) mark(&tm.bad[l], sg.row_of(i));
      if (Mode == HybridMode::Substitute && q == 0) merge_global_info(tm, sg, l);
    }
    m.team_barrier();
    if (Mode == HybridMode::Reduce) {
      if (live && q == 0) write_segment_rows(tm, sg, l, cur);
      return;
    }
    // 4. substitution inside the chunks, then the rows back to x
    if (live)
      for (int ch = q; ch < sg.P; ch += nq) substitute(tm, sg, l, ch, cur);
    m.team_barrier();
    if (live) {
      const int s = sg.sys0 + l;
      const bool failed = tm.bad[l] <= n;
      for (int r = q; r < sg.Ls; r += nq) x(s, sg.g0 + r) = failed ? nan : tm.s(3, l, r);
      if (sg.seg == 0 && q == 0) info(s) = failed ? tm.bad[l] : 0;
    }
  }

  /// Writes reduced row i of lane l into PCR buffer 0 (identity rows at the
  /// segment's ends in Reduce and Substitute mode; Reduce saves the real ones).
  KOKKOS_INLINE_FUNCTION void put_row(const Team& tm, const Seg& sg, int l, int i, T ra, T rb, T rc, T rd) const {
    const int R = 2 * sg.P;
    const bool end0 = i == 0, end1 = i == R - 1;
    if (Mode == HybridMode::Full || !(end0 || end1)) {
      tm.p(0, 0, l, i) = ra;
      tm.p(0, 1, l, i) = rb;
      tm.p(0, 2, l, i) = rc;
      tm.p(0, 3, l, i) = rd;
      for (int k = 4; k < NV; ++k) tm.p(0, k, l, i) = T(0);
      return;
    }
    tm.p(0, 0, l, i) = T(0);
    tm.p(0, 1, l, i) = T(1);
    tm.p(0, 2, l, i) = T(0);
    if (Mode == HybridMode::Reduce) {
      T* e = tm.ends + 8 * l + (end0 ? 0 : 4);
      e[0] = ra;
      e[1] = rb;
      e[2] = rc;
      e[3] = rd;
      tm.p(0, 3, l, i) = T(0);
      tm.p(0, 4, l, i) = end0 ? T(1) : T(0);
      tm.p(0, 5, l, i) = end0 ? T(0) : T(1);
    } else {
      tm.p(0, 3, l, i) = red.x(sg.sys0 + l, 2 * sg.seg + (end0 ? 0 : 1));
    }
  }

  KOKKOS_INLINE_FUNCTION void chunk_sweeps(const Team& tm, const Seg& sg, int l, int ch) const {
    const int cb = sg.cbeg(ch), L = sg.cbeg(ch + 1) - cb;
    const int row1 = sg.g0 + cb + 1;  // 1-based global row of chunk row 0
    auto A = [&](int k) -> T& { return tm.s(0, l, cb + k); };
    auto B = [&](int k) -> T& { return tm.s(1, l, cb + k); };
    auto C = [&](int k) -> T& { return tm.s(2, l, cb + k); };
    auto D = [&](int k) -> T& { return tm.s(3, l, cb + k); };
    int bad = g.n + 1;
    auto check = [&](T p, int k) {
      if (!usable_pivot(p) && row1 + k < bad) bad = row1 + k;
    };
    if (L == 1) {  // n == 1: b x = d, and x_{L-1} = x_0
      put_row(tm, sg, l, 0, T(0), B(0), T(0), D(0));
      put_row(tm, sg, l, 1, T(-1), T(1), T(0), T(0));
      return;
    }
    // reverse sweep: x_k + ga x_{k-1} + al x_{L-1} = de for k = L-2 .. 1, then row 0
    T r0b = B(0), r0c = C(0), r0d = D(0);
    if (L > 2) {
      T piv = B(L - 2);
      check(piv, L - 2);
      T w = T(1) / piv;
      T al = C(L - 2) * w, ga = A(L - 2) * w, de = D(L - 2) * w;
      for (int k = L - 3; k >= 1; --k) {
        const T ck = C(k);
        piv = B(k) - ck * ga;
        check(piv, k);
        w = T(1) / piv;
        al = -ck * al * w;
        ga = A(k) * w;
        de = (D(k) - ck * de) * w;
      }
      r0b = B(0) - C(0) * ga;
      r0c = -C(0) * al;
      r0d = D(0) - C(0) * de;
    }
    const T r0a = A(0);
    // forward sweep: x_k + al x_0 + ga x_{k+1} = de for k = 1 .. L-1, kept in (a, c, d)
    T piv = B(1);
    check(piv, 1);
    T w = T(1) / piv;
    T al = A(1) * w, ga = C(1) * w, de = D(1) * w;
    A(1) = al;
    C(1) = ga;
    D(1) = de;
    for (int k = 2; k < L; ++k) {
      const T ak = A(k);
      piv = B(k) - ak * ga;
      check(piv, k);
      w = T(1) / piv;
      al = -ak * al * w;
      ga = C(k) * w;
      de = (D(k) - ak * de) * w;
      A(k) = al;
      C(k) = ga;
      D(k) = de;
    }
    put_row(tm, sg, l, 2 * ch, r0a, r0b, r0c, r0d);
    put_row(tm, sg, l, 2 * ch + 1, al, T(1), ga, de);
    if (bad <= g.n) mark(&tm.bad[l], bad);
  }

  /// One PCR step of reduced row i (rows outside [0, R) act as identity rows).
  KOKKOS_INLINE_FUNCTION void pcr_row(const Team& tm, const Seg& sg, int l, int i, int stride, int cur) const {
    const int R = 2 * sg.P, im = i - stride, ip = i + stride;
    T v[NV];
    for (int k = 0; k < NV; ++k) v[k] = tm.p(cur, k, l, i);
    T an = T(0), cn = T(0);
    int bad = g.n + 1;
    if (im >= 0) {
      const T bm = tm.p(cur, 1, l, im);
      if (!usable_pivot(bm)) bad = sg.row_of(im);
      const T k1 = v[0] / bm;
      an = -tm.p(cur, 0, l, im) * k1;
      v[1] -= tm.p(cur, 2, l, im) * k1;
      for (int k = 3; k < NV; ++k) v[k] -= tm.p(cur, k, l, im) * k1;
    }
    if (ip < R) {
      const T bp = tm.p(cur, 1, l, ip);
      if (!usable_pivot(bp) && sg.row_of(ip) < bad) bad = sg.row_of(ip);
      const T k2 = v[2] / bp;
      cn = -tm.p(cur, 2, l, ip) * k2;
      v[1] -= tm.p(cur, 0, l, ip) * k2;
      for (int k = 3; k < NV; ++k) v[k] -= tm.p(cur, k, l, ip) * k2;
    }
    v[0] = an;
    v[2] = cn;
    for (int k = 0; k < NV; ++k) tm.p(1 - cur, k, l, i) = v[k];
    if (bad <= g.n) mark(&tm.bad[l], bad);
  }

  /// Reduced unknown i of lane l, right-hand side k, after PCR.
  KOKKOS_INLINE_FUNCTION T unknown(const Team& tm, int l, int i, int k, int cur) const {
    return tm.p(cur, 3 + k, l, i) / tm.p(cur, 1, l, i);
  }

  /// Substitute: failures found by the Reduce kernels of every segment and by
  /// the reduced solve count for this segment too.
  KOKKOS_INLINE_FUNCTION void merge_global_info(const Team& tm, const Seg& sg, int l) const {
    const int s = sg.sys0 + l, n = g.n;
    const int gb = red.bad(s);
    if (gb > 0) mark(&tm.bad[l], n + 1 - gb);
    const int ri = red.info(s);
    if (ri > 0) {  // reduced row ri: segment (ri-1)/2, its first or last row
      const int sgi = (ri - 1) / 2;
      const int row = (ri - 1) % 2 ? g.seg_begin(sgi + 1) : g.seg_begin(sgi) + 1;
      mark(&tm.bad[l], row);
    }
  }

  /// Reduce: the segment's two rows of the reduced system of all segments.
  ///   u_i = Y_i + u_0 V_i + u_last W_i inside the segment, so
  ///   G0: a0 u_prev + (b0 + c0 V_1) u_0 + c0 W_1 u_last = d0 - c0 Y_1
  ///   G1: aL V_{R-2} u_0 + (bL + aL W_{R-2}) u_last + cL u_next = dL - aL Y_{R-2}
  KOKKOS_INLINE_FUNCTION void write_segment_rows(const Team& tm, const Seg& sg, int l, int cur) const {
    const int s = sg.sys0 + l, R = 2 * sg.P, r0 = 2 * sg.seg;
    const T* e0 = tm.ends + 8 * l;
    const T* e1 = e0 + 4;
    const T y1 = unknown(tm, l, 1, 0, cur), v1 = unknown(tm, l, 1, 1, cur), w1 = unknown(tm, l, 1, 2, cur);
    const T yl = unknown(tm, l, R - 2, 0, cur), vl = unknown(tm, l, R - 2, 1, cur),
            wl = unknown(tm, l, R - 2, 2, cur);
    red.a(s, r0) = e0[0];
    red.b(s, r0) = e0[1] + e0[2] * v1;
    red.c(s, r0) = e0[2] * w1;
    red.d(s, r0) = e0[3] - e0[2] * y1;
    red.a(s, r0 + 1) = e1[0] * vl;
    red.b(s, r0 + 1) = e1[1] + e1[0] * wl;
    red.c(s, r0 + 1) = e1[2];
    red.d(s, r0 + 1) = e1[3] - e1[0] * yl;
    if (tm.bad[l] <= g.n) Kokkos::atomic_fetch_max(&red.bad(s), g.n + 1 - tm.bad[l]);
  }

  /// x_{L-1} and x_0 from the reduced solution, then the forward relations
  /// backwards: x_k = delta_k - alpha_k x_0 - gamma_k x_{k+1}; x goes to d's slot.
  KOKKOS_INLINE_FUNCTION void substitute(const Team& tm, const Seg& sg, int l, int ch, int cur) const {
    const int cb = sg.cbeg(ch), L = sg.cbeg(ch + 1) - cb;
    const T x0 = unknown(tm, l, 2 * ch, 0, cur);
    tm.s(3, l, cb) = x0;
    if (L == 1) return;
    T xn = unknown(tm, l, 2 * ch + 1, 0, cur);
    tm.s(3, l, cb + L - 1) = xn;
    for (int k = L - 2; k >= 1; --k) {
      xn = tm.s(3, l, cb + k) - tm.s(0, l, cb + k) * x0 - tm.s(2, l, cb + k) * xn;
      tm.s(3, l, cb + k) = xn;
    }
  }
};

}  // namespace impl
}  // namespace kband
