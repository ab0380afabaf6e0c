// The Registers variant of kband::penta (per-system coefficients,
// non-periodic): every intermediate stays in registers, so a solve reads its
// six input arrays once and writes x once.
//
// The Thomas Registers design (kband_ThomasRegisters_impl.hpp): each system
// is cut into K chunks of M rows, a thread per chunk holding its rows; a team
// holds P systems. The elimination of kband_Penta_impl.hpp (pivots mu_j, U's
// super-diagonals p_j, q_j) is joined across the chunks in three steps.
//
//  1. The pivots. Before row j the elimination's state is the 2x2 matrix
//       W = [[q_{j-2} - p_{j-2} p_{j-1}, -p_{j-2} q_{j-1}], [p_{j-1}, q_{j-1}]]
//     (mu_j = c_j - b_j W10 - a_j W00, p_j mu_j = d_j - b_j W11 - a_j W01),
//     which follows a matrix Riccati recurrence. Its linear form: the
//     homogeneous solutions of rows 0..j-1 restricted to (x_{j-2} .. x_{j+1})
//     span a plane of R^4, the kernel of U's rows j-2, j-1. Row j maps that
//     plane to the next one, and on the plane's Pluecker coordinates
//     (pi_01, pi_02, pi_03, pi_12, pi_13, pi_23; pi_23 = 1 gives
//     W = [[-pi_03, pi_02], [-pi_13, pi_12]]) the map is linear:
//       pi_01' = e pi_12,  pi_02' = e pi_13,  pi_12' = e pi_23,
//       pi_03' = a pi_01 - c pi_12 - d pi_13,
//       pi_13' = a pi_02 + b pi_12 - d pi_23,
//       pi_23' = a pi_03 + b pi_13 + c pi_23      (= mu_j pi_23).
//     It holds for e_j = 0 too (the map is the 4x4 transfer's second compound
//     divided by e_j), and as a projective map it may be scaled freely (each
//     row is first scaled by a power of two, which leaves x, p, q and z as
//     they are, to largest coefficient in [1, 2)). The chunks put their
//     scaled rows in team scratch (in waves of a few chunks, so that a team
//     can hold enough systems) and one thread per system runs the map over
//     them from pi = e_23 (before row 0): 12 multiplications a row, no
//     division, leaving each chunk the coordinates it starts from. Like
//     Thomas's c', the walk converges to the dominant plane, where a basis of
//     the plane (4x2) would lose its second column to the first. (Walking
//     each chunk's 6x6 product costs 36 values of scratch a thread and 72
//     multiplications a row; walking rows read again from memory waits on
//     memory every row: perf_tests/RESULTS.md.) The chunk
//     then runs the elimination's own recurrences from W: pivots, info and
//     stability are those of penta's other variants (up to rounding in the
//     start state).
//  2. Forward substitution, z_j = (y_j - a_j z_{j-2} - beta_j z_{j-1}) / mu_j,
//     written on the state (z_{j-1}, t_j), t_j = z_{j-2} - p_{j-2} z_{j-1}:
//       z_j = (y_j - b_j z_{j-1} - a_j t_j) / mu_j,  t_{j+1} = z_{j-1} - p_{j-1} z_j,
//     which needs p_{j-1} only (W10 at a chunk's first row). A chunk is an
//     affine map of that state (Affine2Sum), joined by a scan.
//  3. Back substitution, x_j = z_j - p_j x_{j+1} - q_j x_{j+2}, on the state
//     (x_{j+1}, x_{j+2}), the same way from the last chunk down.
//
// Team scratch: the start coordinates and a wave's rows, then the scan
// regions. Host backends
// (teams of one thread) serve systems of at most M rows.
#pragma once

#include "kband_Penta_impl.hpp"
#include "kband_ThomasRegisters_impl.hpp"

namespace kband {
namespace impl {

/// Affine map of a two-value state, out = Y + G in; `bad` keeps the first
/// failed row (0 = none).
template <class T>
struct Affine2Sum {
  T g00, g01, g10, g11, y0, y1;
  int bad;
  static constexpr int kT = 6, kI = 1;
  KOKKOS_INLINE_FUNCTION void put(T* t, int* i, int ts, int slot) const {
    t[slot] = g00;
    t[ts + slot] = g01;
    t[2 * ts + slot] = g10;
    t[3 * ts + slot] = g11;
    t[4 * ts + slot] = y0;
    t[5 * ts + slot] = y1;
    i[slot] = bad;
  }
  KOKKOS_INLINE_FUNCTION void get(const T* t, const int* i, int ts, int slot) {
    g00 = t[slot];
    g01 = t[ts + slot];
    g10 = t[2 * ts + slot];
    g11 = t[3 * ts + slot];
    y0 = t[4 * ts + slot];
    y1 = t[5 * ts + slot];
    bad = i[slot];
  }
  KOKKOS_INLINE_FUNCTION static Affine2Sum identity() { return {T(1), T(0), T(0), T(1), T(0), T(0), 0}; }
};

/// later o earlier
template <class T>
KOKKOS_INLINE_FUNCTION Affine2Sum<T> compose(const Affine2Sum<T>& l, const Affine2Sum<T>& e) {
  return {l.g00 * e.g00 + l.g01 * e.g10, l.g00 * e.g01 + l.g01 * e.g11,
          l.g10 * e.g00 + l.g11 * e.g10, l.g10 * e.g01 + l.g11 * e.g11,
          l.y0 + l.g00 * e.y0 + l.g01 * e.y1, l.y1 + l.g10 * e.y0 + l.g11 * e.y1,
          e.bad != 0 ? e.bad : l.bad};
}

/// pi <- (row j's map) pi, Pluecker coordinates in the order 01, 02, 03, 12, 13, 23.
template <class T>
KOKKOS_INLINE_FUNCTION void pluecker_row(T a, T b, T c, T d, T e, T* p) {
  const T q0 = e * p[3], q1 = e * p[4], q2 = a * p[0] - c * p[3] - d * p[4];
  const T q3 = e * p[5], q4 = a * p[1] + b * p[3] - d * p[5], q5 = a * p[2] + b * p[4] + c * p[5];
  p[0] = q0, p[1] = q1, p[2] = q2, p[3] = q3, p[4] = q4, p[5] = q5;
}

template <class Exec, class BA, class BB, class BC, class BD, class BE, class BY, class BX, class Info, int M>
struct PentaPerSystemRegisters : RegisterBase<Exec, batch_value_t<BX>, M>,
                                 PentaArgs<BA, BB, BC, BD, BE, BY, BX, Info> {
  using T = batch_value_t<BX>;
  using Base = RegisterBase<Exec, T, M>;
  using Args = PentaArgs<BA, BB, BC, BD, BE, BY, BX, Info>;
  using typename Base::member_type;
  using Place = typename Base::Place;
  using Args::a, Args::b, Args::c, Args::d, Args::e, Args::y, Args::x, Args::info;

  PentaPerSystemRegisters(const Base& base, const Args& args) : Base(base), Args(args) {}

  using Sum = Affine2Sum<T>;
  // Teams of about 128 threads: 16 systems at n = 64, 8 at n = 128 (H100,
  // double, interleaved, waves of one chunk, bw/copy at n = 64 / 128 / 256:
  // 0.72 / 0.56 / 0.35 with 128 threads, 0.53 / 0.43 / 0.30 with 256 (one
  // team a multiprocessor at 166 registers), 0.61 / 0.35 / 0.15 with 64)
  static constexpr int kSystemsPerTeam = 4;
  static constexpr int kMinTeamStrided = 128;
  static constexpr bool kAutoContiguous = false;
  // Auto: up to 16 chunks (n <= 128). H100, double, bw/copy against Global:
  // n = 64 0.80 / 0.56 interleaved, 0.78 / 0.59 grouped; n = 128 0.57 /
  // 0.53, 0.56 / 0.56; n = 256 0.36 / 0.52, 0.34 / 0.54
  static constexpr int kAutoChunks = 16;
  static constexpr int kAutoChunksInterleaved = kAutoChunks;
  static constexpr size_t kEntry = scan_entry<T, Sum>();
  static constexpr size_t kStart = 6 * sizeof(T);     // the coordinates a chunk starts from
  static constexpr size_t kRows = 5 * M * sizeof(T);   // a chunk's scaled rows for the walk
  int Q = 1;         // chunks whose rows the walk holds at a time (a wave)
  size_t spt = 0;    // team scratch per thread

  /// Waves of Q chunks, a wave's rows taking about 20 values a thread (two
  /// waves for 8 rows a thread; teams of up to 196 threads in double, 392 in
  /// float); the bytes per thread for K chunks.
  static constexpr size_t kWave = 20 * sizeof(T);
  static int wave(int K) {
    const int q = static_cast<int>(kWave * K / kRows);
    return q > 1 ? q : 1;
  }
  static size_t scratch_for(int K) {
    const int nt = K > 0 ? K : 1;
    const size_t walk = kStart + (kRows * wave(nt) + nt - 1) / nt;
    const size_t need = walk > 2 * kEntry ? walk : 2 * kEntry;
    return (need + 7) / 8 * 8;
  }

  KOKKOS_FUNCTION void operator()(const member_type& m) const {
    const Place pl0 = this->place(m);
    const int j0 = pl0.k * M, nr = this->rows(pl0.k);
    int b0, b1;
    this->blocks(m, b0, b1);
    char* raw = static_cast<char*>(m.team_scratch(0).get_shmem(m.team_size() * spt));
    for (int blk = b0; blk < b1; ++blk) {
      // the previous block's backward scan read its results where this
      // block's start coordinates go
      if (blk > b0) m.team_barrier();
      const Place pl = this->at(pl0, blk);
      T av[M], bv[M], cv[M], dv[M], ev[M], yv[M];
      Base::load(a, pl, j0, nr, av);
      Base::load(b, pl, j0, nr, bv);
      Base::load(c, pl, j0, nr, cv);
      Base::load(d, pl, j0, nr, dv);
      Base::load(e, pl, j0, nr, ev);
      Base::load(y, pl, j0, nr, yv);
      solve(m, pl, raw, j0, nr, av, bv, cv, dv, ev, yv);
    }
  }

  /// The walk: in waves of Q chunks, the chunks put their scaled rows in
  /// team scratch (after the start coordinates, 6 values a thread) and the
  /// chunk-0 thread of each system runs the Pluecker map over them, leaving
  /// the coordinates that enter chunk k+1 in chunk k+1's slot. Ends with a
  /// barrier (no wave, and no barrier, when K = 1).
  KOKKOS_INLINE_FUNCTION void walk(const member_type& m, const Place& pl, char* raw, const T (&av)[M],
                                   const T (&bv)[M], const T (&cv)[M], const T (&dv)[M], const T (&ev)[M]) const {
    const int ts = m.team_size(), K = this->K, P = this->P;
    T* start = reinterpret_cast<T*>(raw);
    T* rows = start + 6 * ts;
    const int nq = P * Q;  // rows of one wave: nq slots of 5 M values
    // a chunk's slot in its wave (conflict-free for the walking threads of
    // interleaved teams, whose P systems sit side by side)
    auto rslot = [&](int p, int kk) { return this->chunk_fastest ? p * Q + kk : kk * P + p; };
    T pi[6] = {T(0), T(0), T(0), T(0), T(0), T(1)};
    for (int w0 = 0; w0 + 1 < K; w0 += Q) {
      const int w1 = w0 + Q < K - 1 ? w0 + Q : K - 1;  // chunks w0 .. w1-1 (the last chunk is not walked)
      if (pl.k >= w0 && pl.k < w1) {
        const int rs = rslot(pl.p, pl.k - w0);
KBAND_UNROLL
        for (int u = 0; u < M; ++u) {
          rows[(0 * M + u) * nq + rs] = av[u];
          rows[(1 * M + u) * nq + rs] = bv[u];
          rows[(2 * M + u) * nq + rs] = cv[u];
          rows[(3 * M + u) * nq + rs] = dv[u];
          rows[(4 * M + u) * nq + rs] = ev[u];
        }
      }
      m.team_barrier();
      if (pl.k == 0) {
        for (int k = w0; k < w1; ++k) {
          const int rs = rslot(pl.p, k - w0);
KBAND_UNROLL
          for (int u = 0; u < M; ++u)  // chunk k is whole
            pluecker_row(rows[(0 * M + u) * nq + rs], rows[(1 * M + u) * nq + rs], rows[(2 * M + u) * nq + rs],
                         rows[(3 * M + u) * nq + rs], rows[(4 * M + u) * nq + rs], pi);
          T mx = T(0);
KBAND_UNROLL
          for (int i = 0; i < 6; ++i) mx = abs_(pi[i]) > mx ? abs_(pi[i]) : mx;
          const T r = inverse_pow2(mx);
          const int slot = pl.slot + (k + 1) * pl.stride;
KBAND_UNROLL
          for (int i = 0; i < 6; ++i) {
            pi[i] *= r;
            start[i * ts + slot] = pi[i];
          }
        }
      }
      m.team_barrier();
    }
  }

  KOKKOS_INLINE_FUNCTION void solve(const member_type& m, const Place& pl, char* raw, int j0, int nr, T (&av)[M],
                                    T (&bv)[M], T (&cv)[M], T (&dv)[M], T (&ev)[M], T (&yv)[M]) const {
    const int ts = m.team_size(), n = this->n;
KBAND_UNROLL
    for (int u = 0; u < M; ++u) penta_mask(j0 + u, n, av[u], bv[u], dv[u], ev[u]);
    // rows scaled by powers of two to largest coefficients in [1, 2): exact,
    // and x, p, q, z do not change (mu does, by the row's factor)
KBAND_UNROLL
    for (int u = 0; u < M; ++u) {
      T mx = abs_(av[u]);
      mx = abs_(bv[u]) > mx ? abs_(bv[u]) : mx;
      mx = abs_(cv[u]) > mx ? abs_(cv[u]) : mx;
      mx = abs_(dv[u]) > mx ? abs_(dv[u]) : mx;
      mx = abs_(ev[u]) > mx ? abs_(ev[u]) : mx;
      const T r = inverse_pow2(mx);
      av[u] *= r, bv[u] *= r, cv[u] *= r, dv[u] *= r, ev[u] *= r, yv[u] *= r;
    }
    // 1. the walk (one thread per system), then W from the start coordinates
    walk(m, pl, raw, av, bv, cv, dv, ev);
    T w00 = T(0), w01 = T(0), w10 = T(0), w11 = T(0);
    if (pl.k > 0) {
      T st[6];
KBAND_UNROLL
      for (int i = 0; i < 6; ++i) st[i] = reinterpret_cast<const T*>(raw)[i * ts + pl.slot];
      const T r = T(1) / st[5];
      w00 = -st[2] * r, w01 = st[1] * r, w10 = -st[4] * r, w11 = st[3] * r;
    }
    // the scans below reuse the scratch of the start coordinates
    m.team_barrier();
    // the chunk's pivots from W: c <- 1 / mu, d <- p, e <- q
    int bad = 0;
    {
      T p1 = w10, q1 = w11, p2 = T(0), q2 = T(0);  // p, q of rows j-1 and j-2
KBAND_UNROLL
      for (int u = 0; u < M; ++u)
        if (u < nr) {
          T mu, pn;
          if (u == 0) {
            mu = cv[u] - bv[u] * w10 - av[u] * w00;
            pn = dv[u] - bv[u] * w11 - av[u] * w01;
          } else {
            const T beta = bv[u] - av[u] * p2;
            mu = cv[u] - av[u] * q2 - beta * p1;
            pn = dv[u] - beta * q1;
          }
          if (bad == 0 && !usable_pivot(mu)) bad = j0 + u + 1;
          const T w = T(1) / mu;
          p2 = p1, q2 = q1;
          p1 = pn * w, q1 = ev[u] * w;
          cv[u] = w, dv[u] = p1, ev[u] = q1;
        }
    }
    // 2. forward substitution: the chunk's map of (z_{j-1}, t_j)
    Sum fw = Sum::identity();
    fw.bad = bad;
    {
      T pprev = w10;
KBAND_UNROLL
      for (int u = 0; u < M; ++u)
        if (u < nr) {
          const T z = (yv[u] - bv[u] * fw.y0 - av[u] * fw.y1) * cv[u];
          const T z0 = -(bv[u] * fw.g00 + av[u] * fw.g10) * cv[u];
          const T z1 = -(bv[u] * fw.g01 + av[u] * fw.g11) * cv[u];
          fw.y1 = fw.y0 - pprev * z, fw.y0 = z;
          fw.g10 = fw.g00 - pprev * z0, fw.g00 = z0;
          fw.g11 = fw.g01 - pprev * z1, fw.g01 = z1;
          pprev = dv[u];
        }
    }
    Sum in, all;
    this->template scan<false>(m, pl, raw, kEntry, fw, Sum::identity(), in, all);
    bad = all.bad;
    m.team_barrier();  // the backward scan reuses the region
    {
      T s0 = in.y0, s1 = in.y1, pprev = w10;
KBAND_UNROLL
      for (int u = 0; u < M; ++u)
        if (u < nr) {
          const T z = (yv[u] - bv[u] * s0 - av[u] * s1) * cv[u];
          s1 = s0 - pprev * z, s0 = z;
          pprev = dv[u];
          yv[u] = z;
        }
    }
    // 3. back substitution: the chunk's map of (x_{j+1}, x_{j+2})
    Sum bw = Sum::identity();
KBAND_UNROLL
    for (int u = M - 1; u >= 0; --u)
      if (u < nr) {
        const T xv = yv[u] - dv[u] * bw.y0 - ev[u] * bw.y1;
        const T x0 = -(dv[u] * bw.g00 + ev[u] * bw.g10);
        const T x1 = -(dv[u] * bw.g01 + ev[u] * bw.g11);
        bw.y1 = bw.y0, bw.y0 = xv;
        bw.g10 = bw.g00, bw.g00 = x0;
        bw.g11 = bw.g01, bw.g01 = x1;
      }
    Sum xin, xall;
    this->template scan<true>(m, pl, raw, kEntry, bw, Sum::identity(), xin, xall);
    if (!pl.live) return;
    {
      T s0 = xin.y0, s1 = xin.y1;
KBAND_UNROLL
      for (int u = M - 1; u >= 0; --u)
        if (u < nr) {
          const T xv = yv[u] - dv[u] * s0 - ev[u] * s1;
          s1 = s0, s0 = xv;
          yv[u] = bad != 0 ? this->nan : xv;
        }
    }
    store_chunk<M>(&x(pl.s, j0), batch_traits<BX>::row_stride(x), nr, yv);
    if (pl.k == 0) info(pl.s) = bad;
  }
};

/// Rows per thread of the per-system Registers penta kernel (six arrays).
#ifndef KBAND_PENTA_REGISTER_ROWS
#define KBAND_PENTA_REGISTER_ROWS 8
#endif
constexpr int kPentaRegisterRows = KBAND_PENTA_REGISTER_ROWS;

}  // namespace impl
}  // namespace kband
