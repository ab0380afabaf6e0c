// The Window variants of kband::penta (per-system coefficients,
// non-periodic) and kband::gtsv: kband::thomas' Window
// (kband_ThomasWindow_impl.hpp) on a back substitution of two terms
// (TwoTermWindow), whose rows come from the pentadiagonal elimination of
// kband_Penta_impl.hpp (PentaWindowRows) or from dgtsv's pivoted LU of
// kband_GTSV_impl.hpp (GTSVWindowRows).
//
// Back substitution x_j = z_j - p_j x_{j+1} - q_j x_{j+2} has a state of two
// values. A block of B rows, solved on its own from the two x after it
// (X'), gives x_j = u_j + v_j X'_0 + w_j X'_1; its first two rows give the
// block's map (U, V: a 2-vector and a 2x2 matrix). Every pending block
// keeps "the two x after it = al + BE X'(newest)", which each new block
// extends (al += BE U, BE = BE V). With X'(newest) = 0 the rows of pending
// block q are off by at most
//   (max |v| (|BE_00| + |BE_01|) + max |w| (|BE_10| + |BE_11|)) ||x||_inf,
// a bound on the system's own coefficients; the oldest blocks whose bound
// is at most u = epsilon / 2 are written (x_j = u_j + v_j al_0 + w_j al_1).
// The ring keeps u, v, w of the pending blocks (three values a row); a
// system whose pending blocks fill it goes on as the Global variant does
// (pending rows' u to x, v and w to the workspace's two buffers; later
// rows' z to x, p and q to the workspace), ended by one back substitution.
// The last block ends the system exactly. Pivots, info and NaN rows are
// those of penta's and gtsv's other variants.
#pragma once

#include "kband_GTSV_impl.hpp"
#include "kband_Penta_impl.hpp"
#include "kband_ThomasWindow_impl.hpp"

namespace kband {
namespace impl {

/// Ring rows and block rows of penta's window (three values a row in the
/// ring): double (48, 8), a lag of up to about 40 rows (36 KB of team
/// scratch for 32 threads, under Kokkos' 40 KB a team on CUDA); float (64,
/// 16). Penta's back substitution settles more slowly than Thomas': rows
/// with |c| = |a| + |b| + |d| + |e| + U(1, 2) (kband-bench penta) need
/// 37-44 rows, + U(4, 5) 28-34 (double). Not timed on a GPU yet.
#ifndef KBAND_PENTA_WINDOW_RING
#define KBAND_PENTA_WINDOW_RING 48
#endif
template <class T>
struct PentaWindowShape {
  static constexpr bool kDouble = sizeof(T) >= 8;
  static constexpr int R = kDouble ? KBAND_PENTA_WINDOW_RING : 64;
  static constexpr int B = kDouble ? 8 : 16;
};

/// The forward pass of penta's window: pentadiagonal elimination without
/// pivoting, B rows a block; the state is p, q, z of the last two rows.
template <class BA, class BB, class BC, class BD, class BE, class BY, int B>
struct PentaWindowRows {
  using T = batch_value_t<BY>;
  BA a;
  BB b;
  BC c;
  BD d;
  BE e;
  BY y;
  struct Rows {
    T a[B], b[B], c[B], d[B], e[B], y[B];
  };
  struct State {
    T p1 = T(0), p2 = T(0), q1 = T(0), q2 = T(0), z1 = T(0), z2 = T(0);  // rows j-1 (1), j-2 (2)
  };
  KOKKOS_INLINE_FUNCTION void start(State&, int, int) const {}
  /// Rows jb .. jb+B-1 (rows past n: identity rows).
  KOKKOS_INLINE_FUNCTION void load(Rows& r, int s, int jb, int n) const {
    KBAND_UNROLL
    for (int u = 0; u < B; ++u) {
      const int j = jb + u;
      const bool in = j < n;
      r.a[u] = in && j >= 2 ? a(s, j) : T(0);
      r.b[u] = in && j >= 1 ? b(s, j) : T(0);
      r.c[u] = in ? c(s, j) : T(1);
      r.d[u] = in && j <= n - 2 ? d(s, j) : T(0);
      r.e[u] = in && j <= n - 3 ? e(s, j) : T(0);
      r.y[u] = in ? y(s, j) : T(0);
    }
  }
  /// Rows jb .. jb+B-1 of U and z: x_j = z_j - p_j x_{j+1} - q_j x_{j+2}.
  KOKKOS_INLINE_FUNCTION void eliminate(const Rows& r, State& st, int jb, int n, T (&pp)[B], T (&qq)[B], T (&zz)[B],
                                        int& bad) const {
    KBAND_UNROLL
    for (int u = 0; u < B; ++u) {
      const T beta = r.b[u] - r.a[u] * st.p2;
      const T mu = r.c[u] - r.a[u] * st.q2 - beta * st.p1;
      bad = (bad == 0 && jb + u < n && !usable_pivot(mu)) ? jb + u + 1 : bad;
      const T w = T(1) / mu;
      const T p = (r.d[u] - beta * st.q1) * w;
      const T q = r.e[u] * w;
      const T z = (r.y[u] - r.a[u] * st.z2 - beta * st.z1) * w;
      st.p2 = st.p1;
      st.p1 = p;
      st.q2 = st.q1;
      st.q1 = q;
      st.z2 = st.z1;
      st.z1 = z;
      pp[u] = p;
      qq[u] = q;
      zz[u] = z;
    }
  }
};

/// The forward pass of gtsv's window: LAPACK dgtsv's elimination with
/// partial pivoting (gtsv_step), row i of U finished when row i+1 is read;
/// the state is the carried row (diagonal, super-diagonal, right-hand side).
template <class BA, class BB, class BC, class BD, int B>
struct GTSVWindowRows {
  using T = batch_value_t<BD>;
  BA a;
  BB b;
  BC c;
  BD d;
  struct Rows {
    T a[B], b[B], c[B], d[B];  // input rows jb+1 .. jb+B
  };
  struct State {
    T di = T(0), du = T(0), bi = T(0);
  };
  KOKKOS_INLINE_FUNCTION void start(State& st, int s, int n) const {
    st.di = b(s, 0);
    st.du = n > 1 ? c(s, 0) : T(0);
    st.bi = d(s, 0);
  }
  KOKKOS_INLINE_FUNCTION void load(Rows& r, int s, int jb, int n) const {
    KBAND_UNROLL
    for (int u = 0; u < B; ++u) {
      const int j = jb + u + 1;
      const bool in = j < n;
      r.a[u] = in ? a(s, j) : T(0);
      r.b[u] = in ? b(s, j) : T(1);
      r.c[u] = in && j < n - 1 ? c(s, j) : T(0);  // c(s,n-1) lies outside the matrix
      r.d[u] = in ? d(s, j) : T(0);
    }
  }
  /// Rows jb .. jb+B-1 of U, normalised: x_i = z_i - p_i x_{i+1} - q_i x_{i+2}.
  KOKKOS_INLINE_FUNCTION void eliminate(const Rows& r, State& st, int jb, int n, T (&pp)[B], T (&qq)[B], T (&zz)[B],
                                        int& bad) const {
    KBAND_UNROLL
    for (int u = 0; u < B; ++u) {
      const int i = jb + u;
      if (i < n - 1) {
        const GTSVRow<T> g = gtsv_step(st.di, st.du, st.bi, r.a[u], r.b[u], r.c[u], r.d[u]);
        bad = (bad == 0 && !usable_pivot(g.piv)) ? i + 1 : bad;
        pp[u] = g.u1 * g.rp;
        qq[u] = g.u2 * g.rp;
        zz[u] = g.y * g.rp;
      } else if (i == n - 1) {
        bad = (bad == 0 && !usable_pivot(st.di)) ? n : bad;
        pp[u] = T(0);
        qq[u] = T(0);
        zz[u] = st.bi / st.di;
      } else {
        pp[u] = qq[u] = zz[u] = T(0);
      }
    }
  }
};

/// The window over a back substitution x_j = z_j - p_j x_{j+1} - q_j x_{j+2}
/// whose rows the forward pass Fwd produces B at a time (penta's
/// elimination, gtsv's pivoted LU).
template <class Exec, class Fwd, class BX, class Info, int R, int B>
struct TwoTermWindow {
  static constexpr int P = R / B;
  static_assert(R % B == 0 && P >= 2 && B >= 2, "kband: the ring holds whole blocks, two at least");
  using T = batch_value_t<BX>;
  using member_type = typename Kokkos::TeamPolicy<Exec>::member_type;
  using tx = batch_traits<BX>;
  using WMap = WorkspaceMap<tx::layout, tx::sz>;
  int nsys, n;
  T nan, tol;
  Fwd fwd;
  BX x;
  Info info;
  T* ws;  // two buffers of WMap::extent(nsys, n)
  size_t wbuf;

  TwoTermWindow(int nsys_, int n_, const Fwd& fwd_, const BX& x_, const Info& info_, T* ws_)
      : nsys(nsys_),
        n(n_),
        nan(std::numeric_limits<T>::quiet_NaN()),
        tol(std::numeric_limits<T>::epsilon() / 2),
        fwd(fwd_),
        x(x_),
        info(info_),
        ws(ws_),
        wbuf(WMap::extent(nsys_, n_)) {}

  KOKKOS_INLINE_FUNCTION static constexpr size_t scratch_per_thread() { return 3 * R * sizeof(T); }

  /// Writes block q's rows, x_j = u_j + v_j X0 + w_j X1.
  KOKKOS_INLINE_FUNCTION void emit(const T* ur, int ts, int s, int q, T X0, T X1) const {
    const int bq = (q % P) * B;
    const T* vr = ur + static_cast<size_t>(R) * ts;
    const T* wr = vr + static_cast<size_t>(R) * ts;
    KBAND_UNROLL
    for (int u = 0; u < B; ++u) {
      const int j = q * B + u;
      const int k = (bq + u) * ts;
      if (j < n) x(s, j) = ur[k] + vr[k] * X0 + wr[k] * X1;
    }
  }

  KOKKOS_FUNCTION void operator()(const member_type& m) const {
    const int ts = m.team_size();
    T* sc = static_cast<T*>(m.team_scratch(0).get_shmem(static_cast<size_t>(3 * R) * ts * sizeof(T)));
    const int s = m.league_rank() * ts + m.team_rank();
    if (s >= nsys) return;
    T* const ur = sc + m.team_rank();
    T* const vr = ur + static_cast<size_t>(R) * ts;
    T* const wr = vr + static_cast<size_t>(R) * ts;
    T* const w0 = ws + WMap::offset(s, nsys, n);
    T* const w1 = w0 + wbuf;
    const size_t wrs = WMap::row_stride(nsys, n);
    const int nb = (n + B - 1) / B;
    typename Fwd::State st;
    fwd.start(st, s, n);
    int bad = 0;
    int oldest = 0;      // the first block not yet solved
    int np = 0;          // pending blocks: oldest .. oldest + np - 1
    int past_from = nb;  // blocks from here on went on as Global does
    // pending block i: the two x after it = al + BE X'(newest); mv, mw: the
    // block's largest |v|, |w|
    T al0[P], al1[P], b00[P], b01[P], b10[P], b11[P], mv[P], mw[P];
    KBAND_UNROLL
    for (int i = 0; i < P; ++i) al0[i] = al1[i] = b00[i] = b01[i] = b10[i] = b11[i] = mv[i] = mw[i] = T(0);
    typename Fwd::Rows r;
    fwd.load(r, s, 0, n);
    for (int k = 0; k < nb; ++k) {
      const int jb = k * B;
      T pp[B], qq[B], zz[B];
      fwd.eliminate(r, st, jb, n, pp, qq, zz, bad);
      if (k + 1 < nb) fwd.load(r, s, jb + B, n);
      if (k >= past_from) {
        KBAND_UNROLL
        for (int u = 0; u < B; ++u)
          if (jb + u < n) {
            w0[(jb + u) * wrs] = pp[u];
            w1[(jb + u) * wrs] = qq[u];
            x(s, jb + u) = zz[u];
          }
        continue;
      }
      // the block solved from the two x after it: x_j = u_j + v_j X'_0 + w_j X'_1
      T U0, U1, V00, V01, V10, V11, mxv = T(0), mxw = T(0);
      {
        // rows j+1, j+2 of the three recurrences (u, v, w)
        T u1 = T(0), u2 = T(0), v1 = T(1), v2 = T(0), x1 = T(0), x2 = T(1);
        const int bk = (k % P) * B;
        KBAND_UNROLL
        for (int u = B - 1; u >= 0; --u) {
          const T un = zz[u] - pp[u] * u1 - qq[u] * u2;
          const T vn = -pp[u] * v1 - qq[u] * v2;
          const T wn = -pp[u] * x1 - qq[u] * x2;
          u2 = u1;
          u1 = un;
          v2 = v1;
          v1 = vn;
          x2 = x1;
          x1 = wn;
          const int kk = (bk + u) * ts;
          ur[kk] = un;
          vr[kk] = vn;
          wr[kk] = wn;
          const T av = abs_(vn), aw = abs_(wn);
          mxv = av > mxv ? av : mxv;
          mxw = aw > mxw ? aw : mxw;
        }
        // the block's first two rows: (x_jb, x_jb+1) = U + V X'
        U0 = u1;
        U1 = u2;
        V00 = v1;
        V01 = x1;
        V10 = v2;
        V11 = x2;
      }
      {
        KBAND_UNROLL
        for (int i = 0; i < P; ++i) {
          if (i < np) {
            al0[i] += b00[i] * U0 + b01[i] * U1;
            al1[i] += b10[i] * U0 + b11[i] * U1;
            const T n00 = b00[i] * V00 + b01[i] * V10, n01 = b00[i] * V01 + b01[i] * V11;
            const T n10 = b10[i] * V00 + b11[i] * V10, n11 = b10[i] * V01 + b11[i] * V11;
            b00[i] = n00;
            b01[i] = n01;
            b10[i] = n10;
            b11[i] = n11;
          } else if (i == np) {
            al0[i] = al1[i] = T(0);
            b00[i] = b11[i] = T(1);
            b01[i] = b10[i] = T(0);
            mv[i] = mxv;
            mw[i] = mxw;
          }
        }
        ++np;
      }
      if (k + 1 == nb) {
        // X' = 0 exactly: every pending block is solved
        KBAND_UNROLL
        for (int i = 0; i < P; ++i)
          if (i < np) emit(ur, ts, s, oldest + i, al0[i], al1[i]);
        break;
      }
      while (np > 0 && mv[0] * (abs_(b00[0]) + abs_(b01[0])) + mw[0] * (abs_(b10[0]) + abs_(b11[0])) <= tol) {
        emit(ur, ts, s, oldest, al0[0], al1[0]);
        drop_oldest(al0, al1, b00, b01, b10, b11, mv, mw);
        --np;
        ++oldest;
      }
      if (np == P) {
        // no room for the next block: the pending blocks' u to x, v and w
        // to the workspace; later rows as Global keeps them
        for (int q = oldest; q <= k; ++q) {
          const int bq = (q % P) * B;
          for (int u = 0; u < B; ++u) {
            const int j = q * B + u;
            const int kk = (bq + u) * ts;
            x(s, j) = ur[kk];
            w0[j * wrs] = vr[kk];
            w1[j * wrs] = wr[kk];
          }
        }
        past_from = k + 1;
      }
    }
    if (past_from < nb) {
      // x_{j+1}, x_{j+2}
      T xa = T(0), xb = T(0);
      int j = n - 1;
      const int jp = past_from * B;
      for (; j >= jp; --j) {
        const T xj = x(s, j) - w0[j * wrs] * xa - w1[j * wrs] * xb;
        x(s, j) = xj;
        xb = xa;
        xa = xj;
      }
      // the pending blocks: x_j = u_j + v_j x(next block's first row) +
      // w_j x(its second row)
      T X0 = xa, X1 = xb;
      for (; j >= oldest * B; --j) {
        if ((j + 1) % B == 0) {
          X0 = xa;
          X1 = xb;
        }
        const T xj = x(s, j) + w0[j * wrs] * X0 + w1[j * wrs] * X1;
        x(s, j) = xj;
        xb = xa;
        xa = xj;
      }
    }
    info(s) = bad;
    if (bad != 0)
      for (int j = 0; j < n; ++j) x(s, j) = nan;
  }
};

}  // namespace impl
}  // namespace kband
