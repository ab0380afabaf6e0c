// The Window variant of kband::thomas (per-system coefficients,
// non-periodic): a thread per system keeps its latest rows in a ring of R
// rows in team scratch and writes each block of B rows of x as soon as the
// rows after it decide the block to the unit roundoff, so that a system's
// rows are read once and x is written once, at any n.
//
// A block k of B rows is solved on its own from x = 0 after it:
// x_j = u_j + v_j x', x' the first x after the block, v_j the product of
// -c' from row j to the block's end (its forward pass and this local back
// substitution run in registers; u, v go to the ring). The map of block k
// joins those of the pending blocks before it: for pending block q,
// x after q = al_q + be_q x'_k (two multiply-adds a pending block a
// block, in registers). Taking x'_k = 0 makes an error of be_q x'_k in the
// x after q, hence at most max_j |v_j| |be_q| ||x||_inf in block q's rows,
// whatever the system: the oldest pending blocks whose bound is at most
// u ||x||_inf (u = epsilon / 2, below the rounding of Thomas itself) are
// written, x_j = u_j + v_j al_q. On diagonally dominant systems |c'| < 1
// and be falls geometrically: a block waits for the rows that decide it
// (its lag: kband-bench's systems about 20 rows, the sixth-order compact
// scheme's (1/3, 1, 1/3) 38, implicit diffusion with lambda dt / dx^2 = 1
// 38). A system whose pending blocks fill the ring goes on as the Global
// variant does (their u to x and v to the workspace, later rows' c' to
// the workspace and y to x, one back substitution from row n - 1). The
// last block ends the system exactly. Pivots, info and NaN rows are thomas'.
//
// GPUs: a team is a warp of systems (interleaved and grouped batches: a
// row's loads of a warp are contiguous); the threads of a warp reach the
// same blocks together, so their writes of x stay coalesced too.
#pragma once

#include "kband_Thomas_impl.hpp"

namespace kband {
namespace impl {

/// The window's shape by value type: ring rows R, rows a block B (whose
/// loads are issued together, one block ahead). A system stays in the ring
/// while its lag is at most about R - B rows: double (48, 8) 40 rows
/// (|c'| up to about 0.4), float (64, 16) 48 rows (|c'| up to about 0.7,
/// its unit roundoff being larger). H200, interleaved n = 1024..4096, bw
/// over the copy: double rings of 40 / 48 / 56 rows 0.61-0.67 / 0.66-0.68
/// / 0.48-0.64 (a larger ring holds fewer teams a multiprocessor);
/// KBAND_WINDOW_RING sets double's.
#ifndef KBAND_WINDOW_RING
#define KBAND_WINDOW_RING 48
#endif
template <class T>
struct WindowShape {
  static constexpr bool kDouble = sizeof(T) >= 8;
  static constexpr int R = kDouble ? KBAND_WINDOW_RING : 64;
  static constexpr int B = kDouble ? 8 : 16;
};

/// Drops pending slot 0 (its block was written): slot i takes slot i + 1's
/// value, for each array (compile-time indices, so the slots stay in
/// registers).
template <int P, class T>
KOKKOS_INLINE_FUNCTION void drop_oldest(T (&v)[P]) {
  KBAND_UNROLL
  for (int i = 0; i + 1 < P; ++i) v[i] = v[i + 1];
}
template <int P, class T, class... More>
KOKKOS_INLINE_FUNCTION void drop_oldest(T (&v)[P], More&... more) {
  drop_oldest(v);
  drop_oldest(more...);
}

template <class Exec, class BA, class BB, class BC, class BD, class BX, class Info, int R, int B>
struct ThomasWindow {
  static constexpr int P = R / B;
  static_assert(R % B == 0 && P >= 2, "kband: the ring holds whole blocks, two at least");
  using T = batch_value_t<BX>;
  using member_type = typename Kokkos::TeamPolicy<Exec>::member_type;
  using tx = batch_traits<BX>;
  using WMap = WorkspaceMap<tx::layout, tx::sz>;
  int nsys, n;
  T nan, tol;
  BA a;
  BB b;
  BC c;
  BD d;
  BX x;
  Info info;
  T* ws;

  ThomasWindow(int nsys_, int n_, BA a_, BB b_, BC c_, BD d_, BX x_, Info info_, T* ws_)
      : nsys(nsys_),
        n(n_),
        nan(std::numeric_limits<T>::quiet_NaN()),
        tol(std::numeric_limits<T>::epsilon() / 2),
        a(a_),
        b(b_),
        c(c_),
        d(d_),
        x(x_),
        info(info_),
        ws(ws_) {}

  KOKKOS_INLINE_FUNCTION static constexpr size_t scratch_per_thread() { return 2 * R * sizeof(T); }

  /// Writes block q's rows, x_j = u_j + v_j X.
  KOKKOS_INLINE_FUNCTION void emit(const T* ur, const T* vr, int ts, int s, int q, T X) const {
    const int bq = (q % P) * B;
    KBAND_UNROLL
    for (int u = 0; u < B; ++u) {
      const int j = q * B + u;
      if (j < n) x(s, j) = ur[(bq + u) * ts] + vr[(bq + u) * ts] * X;
    }
  }

  struct Group {
    T a[B], b[B], c[B], d[B];
  };

  KOKKOS_INLINE_FUNCTION void load(Group& g, int s, int jb) const {
    KBAND_UNROLL
    for (int u = 0; u < B; ++u) {
      const int j = jb + u;
      const bool in = j < n;
      g.a[u] = in && j > 0 ? a(s, j) : T(0);
      g.b[u] = in ? b(s, j) : T(1);
      g.c[u] = in && j < n - 1 ? c(s, j) : T(0);
      g.d[u] = in ? d(s, j) : T(0);
    }
  }

  KOKKOS_FUNCTION void operator()(const member_type& m) const {
    const int ts = m.team_size();
    T* sc = static_cast<T*>(m.team_scratch(0).get_shmem(static_cast<size_t>(2 * R) * ts * sizeof(T)));
    const int s = m.league_rank() * ts + m.team_rank();
    if (s >= nsys) return;
    T* const ur = sc + m.team_rank();
    T* const vr = ur + static_cast<size_t>(R) * ts;
    T* const wc = ws + WMap::offset(s, nsys, n);
    const size_t wrs = WMap::row_stride(nsys, n);
    const int nb = (n + B - 1) / B;
    T cprev = T(0), yprev = T(0);
    int bad = 0;
    int oldest = 0;      // the first block not yet solved
    int np = 0;          // pending blocks: oldest .. oldest + np - 1
    int past_from = nb;  // blocks from here on went on as Global does
    T al[P], be[P], mv[P];
    KBAND_UNROLL
    for (int i = 0; i < P; ++i) al[i] = be[i] = mv[i] = T(0);
    Group g;
    load(g, s, 0);
    for (int k = 0; k < nb; ++k) {
      const int jb = k * B;
      T cc[B], yy[B];
      KBAND_UNROLL
      for (int u = 0; u < B; ++u) {
        const T piv = g.b[u] - g.a[u] * cprev;
        bad = (bad == 0 && jb + u < n && !usable_pivot(piv)) ? jb + u + 1 : bad;
        const T w = T(1) / piv;
        cprev = g.c[u] * w;
        yprev = (g.d[u] - g.a[u] * yprev) * w;
        cc[u] = cprev;
        yy[u] = yprev;
      }
      if (k + 1 < nb) load(g, s, jb + B);
      if (k >= past_from) {
        KBAND_UNROLL
        for (int u = 0; u < B; ++u)
          if (jb + u < n) {
            wc[(jb + u) * wrs] = cc[u];
            x(s, jb + u) = yy[u];
          }
        continue;
      }
      // the block solved from x = 0 after it: x_j = u_j + v_j x(after)
      T u0, v0, mx = T(0);
      {
        T xl = T(0), vl = T(1);
        const int bk = (k % P) * B;
        KBAND_UNROLL
        for (int u = B - 1; u >= 0; --u) {
          xl = yy[u] - cc[u] * xl;
          vl = -cc[u] * vl;
          ur[(bk + u) * ts] = xl;
          vr[(bk + u) * ts] = vl;
          const T av = abs_(vl);
          mx = av > mx ? av : mx;
        }
        u0 = xl;
        v0 = vl;
      }
      // pending block i (block oldest + i): x after it = al[i] + be[i] x',
      // x' the true x after block k; block k's own map joins every one
      {
        KBAND_UNROLL
        for (int i = 0; i < P; ++i) {
          if (i < np) {
            al[i] += be[i] * u0;
            be[i] *= v0;
          } else if (i == np) {
            al[i] = T(0);
            be[i] = T(1);
            mv[i] = mx;
          }
        }
        ++np;
      }
      if (k + 1 == nb) {
        // x' = 0 exactly: every pending block is solved
        KBAND_UNROLL
        for (int i = 0; i < P; ++i)
          if (i < np) emit(ur, vr, ts, s, oldest + i, al[i]);
        break;
      }
      // the oldest blocks whose rows x' changes by at most u ||x||
      while (np > 0 && mv[0] * abs_(be[0]) <= tol) {
        emit(ur, vr, ts, s, oldest, al[0]);
        drop_oldest(al, be, mv);
        --np;
        ++oldest;
      }
      if (np == P) {
        // no room for the next block: the pending blocks' u to x, v to the
        // workspace; later rows as Global keeps them
        for (int q = oldest; q <= k; ++q) {
          const int bq = (q % P) * B;
          for (int u = 0; u < B; ++u) {
            const int j = q * B + u;
            x(s, j) = ur[(bq + u) * ts];
            wc[j * wrs] = vr[(bq + u) * ts];
          }
        }
        past_from = k + 1;
      }
    }
    if (past_from < nb) {
      T xn = T(0);
      int j = n - 1;
      const int jp = past_from * B;
      for (; j - B + 1 >= jp; j -= B) {
        T cv[B], yv[B];
        KBAND_UNROLL
        for (int u = 0; u < B; ++u) {
          cv[u] = wc[(j - u) * wrs];
          yv[u] = x(s, j - u);
        }
        KBAND_UNROLL
        for (int u = 0; u < B; ++u) {
          xn = yv[u] - cv[u] * xn;
          x(s, j - u) = xn;
        }
      }
      for (; j >= jp; --j) {
        xn = x(s, j) - wc[j * wrs] * xn;
        x(s, j) = xn;
      }
      // the pending blocks: x_j = u_j + v_j x(first row of the next block)
      T X = xn;
      for (; j >= oldest * B; --j) {
        if ((j + 1) % B == 0) X = xn;
        xn = x(s, j) + wc[j * wrs] * X;
        x(s, j) = xn;
      }
    }
    info(s) = bad;
    if (bad != 0)
      for (int j = 0; j < n; ++j) x(s, j) = nan;
  }
};

}  // namespace impl
}  // namespace kband
