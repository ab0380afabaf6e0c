// Kernel of the batched tridiagonal LU with partial pivoting (kband::gtsv),
// LAPACK dgtsv's elimination streamed row by row so that every input row is
// read once: row i (possibly modified by the previous step) is carried in
// registers, row i+1 is read, the larger of |b_i| and |a_{i+1}| pivots, and the
// finished row of U (1/pivot, first and second super-diagonal) plus its RHS is
// stored for the back substitution.
#pragma once

#include "kband_Thomas_impl.hpp"

namespace kband {
namespace impl {

/// A finished row of U and its right-hand side: 1/pivot, the first and second
/// super-diagonal, y.
template <class T>
struct GTSVRow {
  T rp, u1, u2, y;
  T piv;  // the pivot, for the caller's check
};

/// One elimination step: the carried row (di, du, bi: diagonal,
/// super-diagonal, right-hand side) against input row j (dl = a_j, bj, cj,
/// dj). The larger of |di| and |dl| pivots; the finished row of U is returned
/// and the carried row becomes row j's.
template <class T>
KOKKOS_INLINE_FUNCTION GTSVRow<T> gtsv_step(T& di, T& du, T& bi, const T dl, const T bj, const T cj, const T dj) {
  const bool swap = abs_(di) < abs_(dl);
  GTSVRow<T> r;
  r.piv = swap ? dl : di;
  r.rp = T(1) / r.piv;
  const T fact = swap ? di * r.rp : dl * r.rp;
  r.u1 = swap ? bj : du;
  r.u2 = swap ? cj : T(0);
  r.y = swap ? dj : bi;
  const T nd = swap ? du - fact * bj : bj - fact * du;
  const T ndu = swap ? -fact * cj : cj;
  const T nb = swap ? bi - fact * dj : dj - fact * bi;
  di = nd;
  du = ndu;
  bi = nb;
  return r;
}

template <class Exec, class BA, class BB, class BC, class BD, class BX, class Info, int W, int U>
struct GTSVPerSystem : ThomasBase<Exec, BX, batch_value_t<BX>, W> {
  using T = batch_value_t<BX>;
  using Base = ThomasBase<Exec, BX, T, W>;
  using typename Base::member_type;
  static constexpr int nbuf_scratch = 4;  // 1/p, u1, u2, y
  BA a;
  BB b;
  BC c;
  BD d;
  BX x;
  Info info;

  GTSVPerSystem(const Base& base, BA a_, BB b_, BC c_, BD d_, BX x_, Info info_)
      : Base(base), a(a_), b(b_), c(c_), d(d_), x(x_), info(info_) {}

  KOKKOS_FUNCTION void operator()(const member_type& m) const {
    int nl;
    const int s0 = this->first_system(m, nl);
    if (nl == 0) return;
    const int nlc = W == 1 ? 1 : nl;
    const int n = this->n;
    const LaneStore<T> st = this->store(m, s0, nbuf_scratch);
    const size_t als = batch_traits<BA>::lane_stride(a), bls = batch_traits<BB>::lane_stride(b);
    const size_t cls = batch_traits<BC>::lane_stride(c), dls = batch_traits<BD>::lane_stride(d);
    // buffers: 0 = 1/p, 1 = u1, 2 = u2, 3 = y (scratch only; Global keeps y in x)
    T di[W], dui[W], bi[W];
    int bad[W];
    {
      const T* b0 = &b(s0, 0);
      const T* c0 = &c(s0, 0);
      const T* d0 = &d(s0, 0);
      for (int l = 0; l < nlc; ++l) {
        di[l] = b0[l * bls];
        dui[l] = n > 1 ? c0[l * cls] : T(0);
        bi[l] = d0[l * dls];
        bad[l] = 0;
      }
    }
    for (int jb = 1; jb < n; jb += U) {
      T av[U][W], bv[U][W], cv[U][W], dv[U][W];
      for (int u = 0; u < U; ++u) {
        const int j = jb + u;
        if (j < n) {
          const T* aj = &a(s0, j);
          const T* bj = &b(s0, j);
          const T* cj = &c(s0, j);
          const T* dj = &d(s0, j);
          for (int l = 0; l < nlc; ++l) {
            av[u][l] = aj[l * als];
            bv[u][l] = bj[l * bls];
            cv[u][l] = j < n - 1 ? cj[l * cls] : T(0);
            dv[u][l] = dj[l * dls];
          }
        }
      }
      for (int u = 0; u < U; ++u) {
        const int j = jb + u;  // row i = j - 1 is finished in this step
        if (j < n) {
          for (int l = 0; l < nlc; ++l) {
            const GTSVRow<T> r = gtsv_step(di[l], dui[l], bi[l], av[u][l], bv[u][l], cv[u][l], dv[u][l]);
            bad[l] = (bad[l] == 0 && !usable_pivot(r.piv)) ? j : bad[l];
            st(0, j - 1, l) = r.rp;
            st(1, j - 1, l) = r.u1;
            st(2, j - 1, l) = r.u2;
            yref(st, s0, j - 1, l) = r.y;
          }
        }
      }
    }
    // last row, then back substitution
    T x1[W], x2[W];
    for (int l = 0; l < nlc; ++l) {
      bad[l] = (bad[l] == 0 && !usable_pivot(di[l])) ? n : bad[l];
      x1[l] = bi[l] / di[l];
      x2[l] = T(0);
      x(s0 + l, n - 1) = x1[l];
    }
    for (int jb = n - 2; jb >= 0; jb -= U) {
      T rv[U][W], u1[U][W], u2[U][W], yv[U][W];
      for (int u = 0; u < U; ++u) {
        const int j = jb - u;
        if (j >= 0)
          for (int l = 0; l < nlc; ++l) {
            rv[u][l] = st(0, j, l);
            u1[u][l] = st(1, j, l);
            u2[u][l] = st(2, j, l);
            yv[u][l] = yref(st, s0, j, l);
          }
      }
      for (int u = 0; u < U; ++u) {
        const int j = jb - u;
        if (j >= 0)
          for (int l = 0; l < nlc; ++l) {
            const T xj = (yv[u][l] - u1[u][l] * x1[l] - u2[u][l] * x2[l]) * rv[u][l];
            x2[l] = x1[l];
            x1[l] = xj;
            x(s0 + l, j) = xj;
          }
      }
    }
    for (int l = 0; l < nlc; ++l) {
      info(s0 + l) = bad[l];
      if (bad[l] != 0)
        for (int j = 0; j < n; ++j) x(s0 + l, j) = this->nan;
    }
  }

  KOKKOS_INLINE_FUNCTION T& yref(const LaneStore<T>& st, int s0, int j, int l) const {
    return this->scratch ? st(3, j, l) : x(s0 + l, j);
  }
};

/// Recompute variant: the elimination runs twice and no row of U is stored.
/// Pass 1 streams a, b, c, d once and keeps only the carried row (its
/// diagonal, super-diagonal and right-hand side) at the start of every block
/// of R elimination steps, in the workspace (3 values per block, laid out
/// like a batch of ceil((n-1)/R) rows). Pass 2 walks the blocks from the last
/// one down: it reloads a block's rows and its checkpoint, redoes the block's
/// elimination in registers (the same arithmetic, so the same pivots and the
/// same U) and substitutes into x. A solve thus reads the inputs twice and
/// writes x once, 9 transfers a row (plus 6/R for the checkpoints) against
/// Global's 13. In-place solves (x == d) work: a block's lowest row of x,
/// the only one an earlier block still reads, is stored after that block's
/// rows are loaded.
template <class Exec, class BA, class BB, class BC, class BD, class BX, class Info, int W, int R>
struct GTSVRecompute : ThomasBase<Exec, BX, batch_value_t<BX>, W> {
  using T = batch_value_t<BX>;
  using Base = ThomasBase<Exec, BX, T, W>;
  using typename Base::member_type;
  using WMap = typename Base::WMap;
  BA a;
  BB b;
  BC c;
  BD d;
  BX x;
  Info info;

  GTSVRecompute(const Base& base, BA a_, BB b_, BC c_, BD d_, BX x_, Info info_)
      : Base(base), a(a_), b(b_), c(c_), d(d_), x(x_), info(info_) {}

  /// Blocks of elimination steps j = 1 .. n-1 (block k: j = 1 + kR .. ).
  KOKKOS_INLINE_FUNCTION static int blocks(int n) { return n > 1 ? (n - 2) / R + 1 : 0; }
  /// Workspace elements for nsys systems of n rows.
  static size_t workspace(int nsys, int n) { return WMap::extent(nsys, blocks(n) > 0 ? blocks(n) : 1) * 3; }

  /// The rows of one block, lane by lane.
  struct Rows {
    T a[R][W], b[R][W], c[R][W], d[R][W];
  };
  /// The carried row: diagonal, super-diagonal, right-hand side.
  struct Carry {
    T di[W], du[W], bi[W];
  };

  KOKKOS_INLINE_FUNCTION void load(int s0, int nlc, int k, Rows& r) const {
    const int n = this->n;
    const size_t als = batch_traits<BA>::lane_stride(a), bls = batch_traits<BB>::lane_stride(b);
    const size_t cls = batch_traits<BC>::lane_stride(c), dls = batch_traits<BD>::lane_stride(d);
    const size_t ars = batch_traits<BA>::row_stride(a), brs = batch_traits<BB>::row_stride(b);
    const size_t crs = batch_traits<BC>::row_stride(c), drs = batch_traits<BD>::row_stride(d);
    const int j0 = 1 + k * R;
    const T* ap = &a(s0, j0);
    const T* bp = &b(s0, j0);
    const T* cp = &c(s0, j0);
    const T* dp = &d(s0, j0);
KBAND_UNROLL
    for (int u = 0; u < R; ++u) {
      const int j = j0 + u;
      if (j < n)
        for (int l = 0; l < nlc; ++l) {
          r.a[u][l] = ap[u * ars + l * als];
          r.b[u][l] = bp[u * brs + l * bls];
          r.c[u][l] = j < n - 1 ? cp[u * crs + l * cls] : T(0);
          r.d[u][l] = dp[u * drs + l * dls];
        }
    }
  }

  /// Block k's elimination steps from the carried row (gtsv_step's
  /// arithmetic written out: through gtsv_step the staged float kernel took
  /// 128 registers instead of 106 on sm_90). Pass 1 (!Store) records the
  /// first failed pivot in `bad`; pass 2 (Store) overwrites each
  /// row of r with the row of U it finishes (1/pivot, u1, u2, y: row j-1 of
  /// U in the slot of input row j).
  template <bool Store>
  KOKKOS_INLINE_FUNCTION void eliminate(int nlc, int k, Rows& r, Carry& cr, int (&bad)[W]) const {
    const int n = this->n;
KBAND_UNROLL
    for (int q = 0; q < R; ++q) {
      const int j = 1 + k * R + q;
      if (j < n)
        for (int l = 0; l < nlc; ++l) {
          const T dl = r.a[q][l], bj = r.b[q][l], cj = r.c[q][l], dj = r.d[q][l];
          const bool swap = abs_(cr.di[l]) < abs_(dl);
          const T piv = swap ? dl : cr.di[l];
          if (!Store) bad[l] = (bad[l] == 0 && !usable_pivot(piv)) ? j : bad[l];
          const T rp = T(1) / piv;
          const T fact = swap ? cr.di[l] * rp : dl * rp;
          if (Store) {
            r.a[q][l] = rp;
            r.b[q][l] = swap ? bj : cr.du[l];
            r.c[q][l] = swap ? cj : T(0);
            r.d[q][l] = swap ? dj : cr.bi[l];
          }
          const T nd = swap ? cr.du[l] - fact * bj : bj - fact * cr.du[l];
          const T ndu = swap ? -fact * cj : cj;
          const T nb = swap ? cr.bi[l] - fact * dj : dj - fact * cr.bi[l];
          cr.di[l] = nd;
          cr.du[l] = ndu;
          cr.bi[l] = nb;
        }
    }
  }

  /// Whether a thread's full set of lanes may run as packs of
  /// LanePack<T>::L (CPUs; see packed).
  static constexpr bool kPacks = W > 1 && W % LanePack<T>::L == 0;

  template <int NL>
  KOKKOS_INLINE_FUNCTION void solve(const member_type& m, const int s0, const int nl) const {
    (void)m;
    if constexpr (kPacks && NL == W) {
      if (packed(s0)) {
        for (int k = 0; k < W / LanePack<T>::L; ++k) solve_packed(m, s0 + k * LanePack<T>::L);
        return;
      }
    }
    const int nlc = NL > 0 ? NL : nl;
    const int n = this->n, nb = blocks(n);
    const int nsys = this->nsys;
    // checkpoints: 3 arrays of nb rows, laid out like the batch
    T* cp0 = this->ws.data() + WMap::offset(s0, nsys, nb);
    const size_t crs = WMap::row_stride(nsys, nb), cls = batch_traits<BX>::layout == Layout::Contiguous ? nb : 1;
    const size_t cbuf = WMap::extent(nsys, nb);
    Carry cr;
    int bad[W];
    for (int l = 0; l < nlc; ++l) {
      cr.di[l] = b(s0 + l, 0);
      cr.du[l] = n > 1 ? c(s0 + l, 0) : T(0);
      cr.bi[l] = d(s0 + l, 0);
      bad[l] = 0;
    }
    Rows r;
    for (int k = 0; k < nb; ++k) {
      load(s0, nlc, k, r);
      for (int l = 0; l < nlc; ++l) {
        T* p = cp0 + k * crs + l * cls;
        p[0] = cr.di[l];
        p[cbuf] = cr.du[l];
        p[2 * cbuf] = cr.bi[l];
      }
      eliminate<false>(nlc, k, r, cr, bad);
    }
    // the last row, then the blocks from the last one down. A block's
    // lowest row of x (row kR) is stored only after block k-1, whose last
    // step reads d there, is loaded (in-place solves).
    T x1[W], x2[W];
    for (int l = 0; l < nlc; ++l) {
      bad[l] = (bad[l] == 0 && !usable_pivot(cr.di[l])) ? n : bad[l];
      x1[l] = cr.bi[l] / cr.di[l];
      x2[l] = T(0);
    }
    int pending = n - 1;  // row of x1, not stored yet
    for (int k = nb - 1; k >= 0; --k) {
      load(s0, nlc, k, r);
      for (int l = 0; l < nlc; ++l) {
        x(s0 + l, pending) = x1[l];
        const T* p = cp0 + k * crs + l * cls;
        cr.di[l] = p[0];
        cr.du[l] = p[cbuf];
        cr.bi[l] = p[2 * cbuf];
      }
      eliminate<true>(nlc, k, r, cr, bad);
KBAND_UNROLL
      for (int q = R - 1; q >= 0; --q) {
        const int j = k * R + q;  // row of U
        if (j < n - 1)
          for (int l = 0; l < nlc; ++l) {
            const T xj = (r.d[q][l] - r.b[q][l] * x1[l] - r.c[q][l] * x2[l]) * r.a[q][l];
            if (q > 0) x(s0 + l, j) = xj;
            x2[l] = x1[l];
            x1[l] = xj;
          }
      }
      pending = k * R;
    }
    for (int l = 0; l < nlc; ++l) {
      x(s0 + l, pending) = x1[l];
      info(s0 + l) = bad[l];
      if (bad[l] != 0)
        for (int j = 0; j < n; ++j) x(s0 + l, j) = this->nan;
    }
  }

  /// Whether every pack of LanePack<T>::L systems from s0 lies at
  /// consecutive addresses in a, b, c, d and x (interleaved and grouped
  /// batches; their checkpoints are laid out like x).
  KOKKOS_INLINE_FUNCTION bool packed(int s0) const {
    constexpr int L = LanePack<T>::L;
    if (batch_traits<BX>::layout == Layout::Contiguous) return false;
    return packs_adjacent<L>(s0, W / L, a, b, c, d, x);
  }

  /// One elimination step of a pack (eliminate's arithmetic on vectors;
  /// the interchange a select lane by lane). Store: the row of U into
  /// (rp, u1, u2, y); otherwise piv * (1/piv) added to `check`.
  template <bool Store, class V>
  KOKKOS_INLINE_FUNCTION static void step_packed(V& di, V& du, V& bi, const V dl, const V bj, const V cj, const V dj,
                                                 V& check, V& rp, V& u1, V& u2, V& y) {
    const V zero = V{} + T(0);
    const V adi = di < zero ? -di : di, adl = dl < zero ? -dl : dl;
    const auto swap = adi < adl;
    const V piv = swap ? dl : di;
    const V r = T(1) / piv;
    const V fact = swap ? di * r : dl * r;
    if (Store) {
      rp = r;
      u1 = swap ? bj : du;
      u2 = swap ? cj : zero;
      y = swap ? dj : bi;
    } else {
      check += piv * r;
    }
    const V nd = swap ? du - fact * bj : bj - fact * du;
    const V ndu = swap ? -fact * cj : cj;
    const V nb = swap ? bi - fact * dj : dj - fact * bi;
    di = nd;
    du = ndu;
    bi = nb;
  }

  /// The solve of one pack of systems from s (CPUs): solve's passes on
  /// vectors of LanePack<T>. Pivots are checked once, after pass 1 (which
  /// writes only checkpoints): a zero or non-finite pivot p (or an infinite
  /// 1/p) makes p * (1/p) non-finite, and so their sum; the pack is then
  /// solved again lane by lane, as solve does, for its info and NaN rows.
  /// One core of this project's VM (Xeon, AVX-512, 2^21 points), double,
  /// n = 32 / 256 / 1024 / 4096, time over the copy time: grouped 9.6 / 7.7
  /// / 8.4 / 7.9 against 21.0 / 17.6 / 17.6 / 17.9 lane by lane (thomas
  /// 5.3-5.8), interleaved 17.7 / 17.1 / 25.7 / 26.6 against 31.2 / 31.9 /
  /// 39.5 / 42.9.
  KOKKOS_INLINE_FUNCTION void solve_packed(const member_type& m, const int s) const {
    using P = LanePack<T>;
    using V = typename P::V;
    constexpr int K = P::K;
    const int n = this->n, nb = blocks(n), nsys = this->nsys;
    T* const cp0 = this->ws.data() + WMap::offset(s, nsys, nb);
    const size_t ks = WMap::row_stride(nsys, nb), kbuf = WMap::extent(nsys, nb);
    const T* const ap = &a(s, 0);
    const T* const bp = &b(s, 0);
    const T* const cp = &c(s, 0);
    const T* const dp = &d(s, 0);
    T* const xp = &x(s, 0);
    const size_t ars = batch_traits<BA>::row_stride(a), brs = batch_traits<BB>::row_stride(b);
    const size_t crs = batch_traits<BC>::row_stride(c), drs = batch_traits<BD>::row_stride(d);
    const size_t xrs = batch_traits<BX>::row_stride(x);
    const V zero = V{} + T(0);
    V di[K], du[K], bi[K], check = zero, unused;
    for (int k = 0; k < K; ++k) {
      di[k] = P::vload(bp, k);
      du[k] = n > 1 ? P::vload(cp, k) : zero;
      bi[k] = P::vload(dp, k);
    }
    // pass 1: checkpoints and pivots
    for (int blk = 0; blk < nb; ++blk) {
      T* const p = cp0 + blk * ks;
      for (int k = 0; k < K; ++k) {
        P::vstore(p, k, di[k]);
        P::vstore(p + kbuf, k, du[k]);
        P::vstore(p + 2 * kbuf, k, bi[k]);
      }
      const int j1 = 1 + (blk + 1) * R < n ? 1 + (blk + 1) * R : n;
      for (int j = 1 + blk * R; j < j1; ++j)
        for (int k = 0; k < K; ++k)
          step_packed<false>(di[k], du[k], bi[k], P::vload(ap + j * ars, k), P::vload(bp + j * brs, k),
                             j < n - 1 ? P::vload(cp + j * crs, k) : zero, P::vload(dp + j * drs, k), check, unused,
                             unused, unused, unused);
    }
    V x1[K], x2[K];
    for (int k = 0; k < K; ++k) {
      const V r = T(1) / di[k];
      check += di[k] * r;
      x1[k] = bi[k] / di[k];
      x2[k] = zero;
    }
    if (!P::finite(check)) {
      this->template solve<0>(m, s, P::L);
      return;
    }
    // pass 2, from the last block down; row kR of x is stored after block
    // k-1 (which reads d there) is loaded, as in solve
    int pending = n - 1;
    for (int blk = nb - 1; blk >= 0; --blk) {
      V ra[R][K], rb[R][K], rc[R][K], rd[R][K];
      const int j0 = 1 + blk * R;
KBAND_UNROLL
      for (int q = 0; q < R; ++q) {
        const int j = j0 + q;
        if (j < n)
          for (int k = 0; k < K; ++k) {
            ra[q][k] = P::vload(ap + j * ars, k);
            rb[q][k] = P::vload(bp + j * brs, k);
            rc[q][k] = j < n - 1 ? P::vload(cp + j * crs, k) : zero;
            rd[q][k] = P::vload(dp + j * drs, k);
          }
      }
      const T* const p = cp0 + blk * ks;
      for (int k = 0; k < K; ++k) {
        P::vstore(xp + pending * xrs, k, x1[k]);
        di[k] = P::vload(p, k);
        du[k] = P::vload(p + kbuf, k);
        bi[k] = P::vload(p + 2 * kbuf, k);
      }
KBAND_UNROLL
      for (int q = 0; q < R; ++q)
        if (j0 + q < n)
          for (int k = 0; k < K; ++k)
            step_packed<true>(di[k], du[k], bi[k], ra[q][k], rb[q][k], rc[q][k], rd[q][k], check, ra[q][k],
                              rb[q][k], rc[q][k], rd[q][k]);
KBAND_UNROLL
      for (int q = R - 1; q >= 0; --q) {
        const int j = blk * R + q;  // row of U
        if (j < n - 1)
          for (int k = 0; k < K; ++k) {
            const V xj = (rd[q][k] - rb[q][k] * x1[k] - rc[q][k] * x2[k]) * ra[q][k];
            if (q > 0) P::vstore(xp + j * xrs, k, xj);
            x2[k] = x1[k];
            x1[k] = xj;
          }
      }
      pending = blk * R;
    }
    for (int k = 0; k < K; ++k) P::vstore(xp + pending * xrs, k, x1[k]);
    for (int l = 0; l < P::L; ++l) info(s + l) = 0;
  }

  KOKKOS_FUNCTION void operator()(const member_type& m) const { this->by_lanes(*this, m); }
};

/// The Recompute variant for contiguous batches on GPUs: a thread still
/// eliminates one system, but a team of ts threads (ts consecutive systems)
/// loads each block's rows together through team scratch, eight consecutive
/// threads reading one system's eight rows, so that the loads coalesce (a
/// thread's own rows are n elements from its neighbours'). x goes out the
/// same way, one row later than its block (rows kR+1 .. (k+1)R: the row kR
/// waits for block k-1, which reads d there). The checkpoints are laid out
/// (value, block, system), systems fastest.
template <class Exec, class BA, class BB, class BC, class BD, class BX, class Info, int R>
struct GTSVRecomputeStaged : GTSVRecompute<Exec, BA, BB, BC, BD, BX, Info, 1, R> {
  using Rec = GTSVRecompute<Exec, BA, BB, BC, BD, BX, Info, 1, R>;
  using T = typename Rec::T;
  using typename Rec::member_type;
  using typename Rec::Rows;
  using typename Rec::Carry;
  using Rec::Rec;
  static constexpr int kPad = R + 1;  // a system's slot in a tile (odd: fewer bank conflicts)

  /// Level-0 scratch of a team of ts threads: the four input tiles and x's.
  KOKKOS_INLINE_FUNCTION static size_t scratch_bytes(int ts) {
    return static_cast<size_t>(5) * ts * kPad * sizeof(T);
  }

  /// Block k of the team's systems into the tiles (tile q at q * ts * kPad).
  /// A thread loads its R elements of each array before it stores any: the
  /// compiler cannot tell the tiles from the inputs, and would otherwise keep
  /// one load in flight at a time.
  KOKKOS_INLINE_FUNCTION void stage(const member_type& m, int s0, int k, T* tile) const {
    const int ts = m.team_size(), n = this->n, nsys = this->nsys;
    const size_t ld = static_cast<size_t>(ts) * kPad;
    // thread r takes row u = r % R of systems r / R + q * ts / R (ts is a
    // multiple of R on GPUs; host teams have one thread, which takes every row
    // of its system)
    int u, p0, ps;
    place(m.team_rank(), ts, u, p0, ps);
    const int j = 1 + k * R + u;
    const bool row = j < n;
    const size_t as = batch_traits<BA>::lane_stride(this->a), bs = batch_traits<BB>::lane_stride(this->b);
    const size_t cs = batch_traits<BC>::lane_stride(this->c), ds = batch_traits<BD>::lane_stride(this->d);
    const int jr = row ? j : 0;
    const T* ap = &this->a(0, jr);
    const T* bp = &this->b(0, jr);
    const T* cp = &this->c(0, row && j < n - 1 ? j : 0);
    const T* dp = &this->d(0, jr);
    if constexpr (!is_device_exec<Exec>::value) {  // host teams of one thread: its own rows, straight
      for (int q = 0; q < R && 1 + k * R + q < n && s0 < nsys; ++q) {
        const int jq = 1 + k * R + q;
        T* t = tile + q;
        t[0] = this->a(s0, jq);
        t[ld] = this->b(s0, jq);
        t[2 * ld] = jq < n - 1 ? this->c(s0, jq) : T(0);
        t[3 * ld] = this->d(s0, jq);
      }
      return;
    }
    T v[4][R];
KBAND_UNROLL
    for (int q = 0; q < R; ++q) {
      const size_t sq = static_cast<size_t>(s0 + p0 + q * ps);
      if (row && sq < static_cast<size_t>(nsys)) {
        v[0][q] = ap[sq * as];
        v[1][q] = bp[sq * bs];
        v[2][q] = j < n - 1 ? cp[sq * cs] : T(0);
        v[3][q] = dp[sq * ds];
      }
    }
KBAND_UNROLL
    for (int q = 0; q < R; ++q) {
      const int sq = s0 + p0 + q * ps;
      if (row && sq < nsys) {
        T* t = tile + (p0 + q * ps) * kPad + u;
        t[0] = v[0][q];
        t[ld] = v[1][q];
        t[2 * ld] = v[2][q];
        t[3 * ld] = v[3][q];
      }
    }
  }
  /// Thread r's row u and first system p0 of a tile, and the system step ps.
  KOKKOS_INLINE_FUNCTION static void place(int r, int ts, int& u, int& p0, int& ps) {
    u = r % R;
    p0 = r / R;
    ps = ts / R;
  }
  /// This thread's rows of the staged block.
  KOKKOS_INLINE_FUNCTION static void rows(const T* tile, size_t ld, int p, Rows& r) {
KBAND_UNROLL
    for (int q = 0; q < R; ++q) {
      const T* t = tile + p * kPad + q;
      r.a[q][0] = t[0];
      r.b[q][0] = t[ld];
      r.c[q][0] = t[2 * ld];
      r.d[q][0] = t[3 * ld];
    }
  }

  KOKKOS_FUNCTION void operator()(const member_type& m) const {
    const int ts = m.team_size(), p = m.team_rank();
    const int n = this->n, nsys = this->nsys, nb = Rec::blocks(n);
    const int s0 = m.league_rank() * ts, s = s0 + p;
    const bool live = s < nsys;
    T* tile = static_cast<T*>(m.team_scratch(0).get_shmem(scratch_bytes(ts)));
    const size_t ld = static_cast<size_t>(ts) * kPad;
    T* xt = tile + 4 * ld;
    T* cp = this->ws.data() + s;  // value v of block k at cp[(v * nb + k) * nsys]
    const size_t cbuf = static_cast<size_t>(nb) * nsys;
    Carry cr;
    int bad[1] = {0};
    if (live) {
      cr.di[0] = this->b(s, 0);
      cr.du[0] = n > 1 ? this->c(s, 0) : T(0);
      cr.bi[0] = this->d(s, 0);
    }
    Rows r;
    for (int k = 0; k < nb; ++k) {
      if (k > 0) m.team_barrier();  // everyone has taken its rows of block k-1
      stage(m, s0, k, tile);
      m.team_barrier();
      if (live) {
        rows(tile, ld, p, r);
        T* c0 = cp + static_cast<size_t>(k) * nsys;
        c0[0] = cr.di[0];
        c0[cbuf] = cr.du[0];
        c0[2 * cbuf] = cr.bi[0];
        this->template eliminate<false>(1, k, r, cr, bad);
      }
    }
    T x1 = T(0), x2 = T(0);
    if (live) {
      bad[0] = (bad[0] == 0 && !usable_pivot(cr.di[0])) ? n : bad[0];
      x1 = cr.bi[0] / cr.di[0];
    }
    int pending = n - 1;  // the row of x1
    for (int k = nb - 1; k >= 0; --k) {
      m.team_barrier();  // the previous block's x went out; its rows were taken
      stage(m, s0, k, tile);
      m.team_barrier();
      if (live) {
        rows(tile, ld, p, r);
        const T* c0 = cp + static_cast<size_t>(k) * nsys;
        cr.di[0] = c0[0];
        cr.du[0] = c0[cbuf];
        cr.bi[0] = c0[2 * cbuf];
        this->template eliminate<true>(1, k, r, cr, bad);
        T* xo = xt + p * kPad;  // row j at xo[j - kR - 1]
        const int j1 = k * R + 1;
        xo[pending - j1] = x1;
KBAND_UNROLL
        for (int q = R - 1; q >= 0; --q) {
          const int j = k * R + q;  // row of U
          if (j < n - 1) {
            const T xj = (r.d[q][0] - r.b[q][0] * x1 - r.c[q][0] * x2) * r.a[q][0];
            if (q > 0) xo[j - j1] = xj;
            x2 = x1;
            x1 = xj;
          }
        }
      }
      pending = k * R;
      m.team_barrier();
      if constexpr (!is_device_exec<Exec>::value) {
        for (int u = 0; u < R && k * R + 1 + u < n && live; ++u) this->x(s, k * R + 1 + u) = xt[u];
      } else {
        int u, p0, ps;
        place(p, ts, u, p0, ps);
        const int j = k * R + 1 + u;
        for (int q = 0; q < R; ++q) {
          const int pp = p0 + q * ps;
          if (s0 + pp < nsys && j < n) this->x(s0 + pp, j) = xt[pp * kPad + u];
        }
      }
    }
    if (live) {
      this->x(s, pending) = x1;
      this->info(s) = bad[0];
      if (bad[0] != 0)
        for (int j = 0; j < n; ++j) this->x(s, j) = this->nan;
    }
  }
};

}  // namespace impl
}  // namespace kband
