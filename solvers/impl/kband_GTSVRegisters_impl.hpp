// Kernel of the Registers variant of kband::gtsv: LU with partial pivoting
// (LAPACK dgtsv) of one system split over the threads of a team, M rows a
// thread, so that a solve reads its inputs once and writes x once, like the
// Registers kernel of kband::thomas.
//
// Why a pivoted elimination splits. Before input row j, dgtsv carries one
// unfinished row w = (di, du, bi): the coefficients of x_{j-1} and x_j and
// its right-hand side. With or without the row interchange, the next carried
// row is
//     (b_j di - a_j du,  c_j di,  d_j di - a_j bi) / s_j,
// s_j = di without the interchange (|di| >= |a_j|) and -a_j with it: the
// interchange changes the carried row's scale, not its direction. So:
//  1. the direction follows the product of the matrices
//     N_j = [[b, -a, 0], [c, 0, 0], [d, 0, -a]] (row j's entries); a scan of
//     the chunks' products (7 entries, kept scaled) gives each chunk the
//     direction of the row it starts from;
//  2. the size nu = max(|di|, |du|) then follows nu' = min(A_j, B_j nu), with
//     A_j = kappa_j / |w0| and B_j = kappa_j / |a_j| (w the direction with
//     max(|w0|, |w1|) = 1, kappa_j that of N_j w): such maps compose, and a
//     second scan gives each chunk the size of its first carried row;
//  3. each thread runs dgtsv's steps over its rows from that carried row
//     (kept as a direction over a scalar, so that no division lies on the
//     chain from row to row): interchanges, pivots and rows of U are
//     dgtsv's, up to rounding;
//  4. the back substitution x_{j-1} = y' - p1 x_j - p2 x_{j+1} (y', p1, p2:
//     the row of U over its pivot) is affine in the pair (x_j, x_{j+1}); a
//     third scan, from the last chunk down, joins it and carries the first
//     failed pivot, whose row is dgtsv's info.
// Row 0 is a step like the others, from the carried row (1, 0, 0) with a_0 =
// 0 (no interchange, s = 1; its row of U is discarded), so every chunk is
// handled alike. The chunk phases are the static functions of GTSVChunk, so
// that the unit tests can join chunks on the host as the kernel does on GPUs.
//
// Where the maps of step 2 meet zeros (a_j = 0: no interchange is possible;
// a carried row that is zero but for its right-hand side: a singular
// matrix), products 0 * inf appear; fmin_ drops the NaN they make, which is
// the branch that cannot be taken.
#pragma once

#include "kband_GTSV_impl.hpp"
#include "kband_ThomasRegisters_impl.hpp"

namespace kband {
namespace impl {

/// min(x, y), the other operand when one is NaN.
template <class T>
KOKKOS_INLINE_FUNCTION T fmin_(const T x, const T y) {
  return (y < x || x != x) ? y : x;
}

/// A chunk's product of the matrices N_j (later rows on the left):
/// [[x00, x01, 0], [x10, x11, 0], [h0, h1, g]], scaled.
template <class T>
struct GTSVDirSum {
  T x00, x01, x10, x11, h0, h1, g;
  static constexpr int kT = 7, kI = 0;
  KOKKOS_INLINE_FUNCTION static GTSVDirSum identity() { return {T(1), T(0), T(0), T(1), T(0), T(0), T(1)}; }
  KOKKOS_INLINE_FUNCTION void put(T* t, int*, int ts, int slot) const {
    t[slot] = x00;
    t[ts + slot] = x01;
    t[2 * ts + slot] = x10;
    t[3 * ts + slot] = x11;
    t[4 * ts + slot] = h0;
    t[5 * ts + slot] = h1;
    t[6 * ts + slot] = g;
  }
  KOKKOS_INLINE_FUNCTION void get(const T* t, const int*, int ts, int slot) {
    x00 = t[slot];
    x01 = t[ts + slot];
    x10 = t[2 * ts + slot];
    x11 = t[3 * ts + slot];
    h0 = t[4 * ts + slot];
    h1 = t[5 * ts + slot];
    g = t[6 * ts + slot];
  }
  /// A power of two near 1 / the largest magnitude (1 when every entry is 0
  /// or one is not finite): scaled by it, the largest entry lies in [1, 4).
  KOKKOS_INLINE_FUNCTION T reciprocal_max() const {
    const T v[7] = {x00, x01, x10, x11, h0, h1, g};
    return inverse_pow2_max(v);
  }
  KOKKOS_INLINE_FUNCTION void scale(const T r) {
    x00 *= r;
    x01 *= r;
    x10 *= r;
    x11 *= r;
    h0 *= r;
    h1 *= r;
    g *= r;
  }
  /// Brings the largest magnitude to [1, 4) by a power of two (the direction
  /// it gives does not change, and no rounding enters).
  KOKKOS_INLINE_FUNCTION void rescale() { scale(reciprocal_max()); }
};
/// later o earlier, not rescaled
template <class T>
KOKKOS_INLINE_FUNCTION GTSVDirSum<T> product(const GTSVDirSum<T>& l, const GTSVDirSum<T>& e) {
  return {l.x00 * e.x00 + l.x01 * e.x10,
          l.x00 * e.x01 + l.x01 * e.x11,
          l.x10 * e.x00 + l.x11 * e.x10,
          l.x10 * e.x01 + l.x11 * e.x11,
          l.h0 * e.x00 + l.h1 * e.x10 + l.g * e.h0,
          l.h0 * e.x01 + l.h1 * e.x11 + l.g * e.h1,
          l.g * e.g};
}
/// later o earlier
template <class T>
KOKKOS_INLINE_FUNCTION GTSVDirSum<T> compose(const GTSVDirSum<T>& l, const GTSVDirSum<T>& e) {
  GTSVDirSum<T> r = product(l, e);
  r.rescale();
  return r;
}
/// The kernel's join of direction products, rescaled in every second round
/// of the scan only: chunks' products have entries below 4 (direction_map
/// ends rescaled), and a join of two products with entries below e has
/// entries below 3 e^2, so entries stay below 3 * 48^2 before a rescale
/// (`direction` normalises what the scan gives). H100, double, bw/copy at n
/// = 32..256 with no rescaling in the scan against rescaling every round:
/// 0.84-0.98 against 0.80-0.92 (contiguous and grouped); without any, long
/// float systems overflow.
struct ProductDirections {
  template <class S>
  KOKKOS_INLINE_FUNCTION S operator()(const S& l, const S& e, int round) const {
    S r = product(l, e);
    if (round % 2 == 1) r.rescale();
    return r;
  }
  KOKKOS_INLINE_FUNCTION void ahead(int, bool) {}
};

/// The size map nu -> min(A, B nu) of one or more rows.
template <class T>
struct GTSVSizeSum {
  T A, B;
  static constexpr int kT = 2, kI = 0;
  KOKKOS_INLINE_FUNCTION static GTSVSizeSum identity() { return {real_limits<T>::inf(), T(1)}; }
  KOKKOS_INLINE_FUNCTION void put(T* t, int*, int ts, int slot) const {
    t[slot] = A;
    t[ts + slot] = B;
  }
  KOKKOS_INLINE_FUNCTION void get(const T* t, const int*, int ts, int slot) {
    A = t[slot];
    B = t[ts + slot];
  }
  KOKKOS_INLINE_FUNCTION T operator()(const T nu) const { return fmin_(A, B * nu); }
};
/// later o earlier: min(A, B min(A', B' nu)) = min(min(A, B A'), B B' nu)
template <class T>
KOKKOS_INLINE_FUNCTION GTSVSizeSum<T> compose(const GTSVSizeSum<T>& l, const GTSVSizeSum<T>& e) {
  return {fmin_(l.A, l.B * e.A), l.B * e.B};
}

/// The back substitution over one or more chunks, an affine map of the pair
/// (x_j, x_{j+1}) after them to the pair before them: out = G in + g; `bad`
/// is the first failed pivot (the smallest row, 0 = none).
template <class T>
struct GTSVBackSum {
  T G00, G01, G10, G11, g0, g1;
  int bad;
  static constexpr int kT = 6, kI = 1;
  KOKKOS_INLINE_FUNCTION static GTSVBackSum identity() { return {T(1), T(0), T(0), T(1), T(0), T(0), 0}; }
  KOKKOS_INLINE_FUNCTION void put(T* t, int* i, int ts, int slot) const {
    t[slot] = G00;
    t[ts + slot] = G01;
    t[2 * ts + slot] = G10;
    t[3 * ts + slot] = G11;
    t[4 * ts + slot] = g0;
    t[5 * ts + slot] = g1;
    i[slot] = bad;
  }
  KOKKOS_INLINE_FUNCTION void get(const T* t, const int* i, int ts, int slot) {
    G00 = t[slot];
    G01 = t[ts + slot];
    G10 = t[2 * ts + slot];
    G11 = t[3 * ts + slot];
    g0 = t[4 * ts + slot];
    g1 = t[5 * ts + slot];
    bad = i[slot];
  }
};
/// later o earlier (in the scan's order: from the last chunk down)
template <class T>
KOKKOS_INLINE_FUNCTION GTSVBackSum<T> compose(const GTSVBackSum<T>& l, const GTSVBackSum<T>& e) {
  const int bad = l.bad == 0 ? e.bad : (e.bad == 0 || l.bad < e.bad ? l.bad : e.bad);
  return {l.G00 * e.G00 + l.G01 * e.G10, l.G00 * e.G01 + l.G01 * e.G11,
          l.G10 * e.G00 + l.G11 * e.G10, l.G10 * e.G01 + l.G11 * e.G11,
          l.G00 * e.g0 + l.G01 * e.g1 + l.g0,  l.G10 * e.g0 + l.G11 * e.g1 + l.g1,
          bad};
}

/// The phases of one chunk: rows j0 .. j0+M-1 of a system in r (load_chunk's
/// form: a = 0 in row 0, c = 0 in row n-1, identity rows (b = 1, a = c = d =
/// 0) past row n-1). Every phase runs over all M rows, with no test a row:
/// rows past the system only enter the last chunk's direction and size maps,
/// which no chunk uses, and its elimination, where they extend the system by
/// x = 0 (see finish).
template <class T, int M>
struct GTSVChunk {
  using Rows = ChunkRows<T, M>;
  /// Rows between rescales of the products and of w (rescale_lagged): a
  /// rescale applies the scale found kEvery rows before, so between two
  /// the largest entry grows or shrinks by up to (2 C)^(2 kEvery), C the
  /// largest coefficient of a row. Every second row in double (rows with C
  /// in about 2^-250 .. 2^250), every row in float (2^-60 .. 2^60; every
  /// second row overflowed from C = 2^31 on).
  static constexpr int kEvery = sizeof(T) >= sizeof(double) ? 2 : 1;

  /// 1. The product of the chunk's matrices N_j. Every kEvery-th row it is
  /// multiplied by a power of two near the reciprocal of its largest entry
  /// kEvery rows before (so the scale is off the chain from row to row).
  KOKKOS_INLINE_FUNCTION static GTSVDirSum<T> direction_map(const Rows& r) {
    GTSVDirSum<T> p = GTSVDirSum<T>::identity();
    T sc = T(1);
KBAND_UNROLL
    for (int u = 0; u < M; ++u) {
      const T a = r.a[u], b = r.b[u], c = r.c[u], d = r.d[u];
      const GTSVDirSum<T> q{b * p.x00 - a * p.x10, b * p.x01 - a * p.x11, c * p.x00,    c * p.x01,
                            d * p.x00 - a * p.h0,  d * p.x01 - a * p.h1,  -a * p.g};
      p = q;
      if (u % kEvery == kEvery - 1) {
        if (u >= 2 * kEvery - 1) p.scale(sc);
        sc = p.reciprocal_max();
      }
    }
    p.rescale();
    return p;
  }
  /// The direction of the carried row entering a chunk, from the product of
  /// the earlier chunks' matrices (applied to (1, 0, 0)), with
  /// max(|w0|, |w1|) = 1 (all zero when those two are).
  KOKKOS_INLINE_FUNCTION static void direction(const GTSVDirSum<T>& ex, T (&w)[3]) {
    const T mx = abs_(ex.x00) > abs_(ex.x10) ? abs_(ex.x00) : abs_(ex.x10);
    const T s = mx > T(0) ? T(1) / mx : T(0);
    w[0] = ex.x00 * s;
    w[1] = ex.x10 * s;
    w[2] = ex.h0 * s;
  }
  /// The direction entering a chunk from the product of the earlier chunks'
  /// matrices of its segment applied to the direction wi the segment starts
  /// with (two segments), normalised as `direction` does.
  KOKKOS_INLINE_FUNCTION static void direction_from(const GTSVDirSum<T>& ex, const T (&wi)[3], T (&w)[3]) {
    const T t0 = ex.x00 * wi[0] + ex.x01 * wi[1], t1 = ex.x10 * wi[0] + ex.x11 * wi[1];
    const T t2 = ex.h0 * wi[0] + ex.h1 * wi[1] + ex.g * wi[2];
    const T mx = abs_(t0) > abs_(t1) ? abs_(t0) : abs_(t1);
    const T s = mx > T(0) ? T(1) / mx : T(0);
    w[0] = t0 * s;
    w[1] = t1 * s;
    w[2] = t2 * s;
  }
  /// 2. The chunk's size map, from the direction w it starts with (max(|w0|,
  /// |w1|) = 1, or w = 0). Row j's map is nu' = min(m'/|w0|, m' nu / (m |a|))
  /// with w unnormalised, m = max(|w0|, |w1|) and m' the same after the row
  /// (w' = N w). The composite over the chunk is min(A, B nu) with
  ///   A = m_end / q, q' = max(|w0|, q |a|), q = 0 at the start, and
  ///   B = m_end / e, e' = e |a|, e = 1 at the start
  /// (q and e scale with w; w is rescaled every kEvery-th row, as in
  /// direction_map): no division a row.
  KOKKOS_INLINE_FUNCTION static GTSVSizeSum<T> size_map(const Rows& r, const T (&w0)[3]) {
    T w[3] = {w0[0], w0[1], w0[2]};
    T q = T(0), e = T(1), sc = T(1);
KBAND_UNROLL
    for (int u = 0; u < M; ++u) {
      const T a = r.a[u], b = r.b[u], c = r.c[u], d = r.d[u];
      const T aa = abs_(a), ab0 = abs_(w[0]);
      const T qa = q * aa;
      q = ab0 > qa ? ab0 : qa;
      e *= aa;
      advance(w, a, b, c, d);
      const T f = rescale_lagged(u, w, sc);
      q *= f;
      e *= f;
    }
    const T m = abs_(w[0]) > abs_(w[1]) ? abs_(w[0]) : abs_(w[1]);
    const T inf = real_limits<T>::inf();
    return {q > T(0) ? m / q : inf, e > T(0) ? m / e : inf};
  }
  /// w' = N w for row (a, b, c, d).
  KOKKOS_INLINE_FUNCTION static void advance(T (&w)[3], const T a, const T b, const T c, const T d) {
    const T t0 = b * w[0] - a * w[1], t1 = c * w[0], t2 = d * w[0] - a * w[2];
    w[0] = t0;
    w[1] = t1;
    w[2] = t2;
  }
  /// After every kEvery-th row u: w times sc, a power of two near the
  /// reciprocal of max(|w0|, |w1|) kEvery rows before (from row 2 kEvery - 1
  /// on), then the next sc. Returns the factor w was multiplied by (1
  /// otherwise), for what scales with w.
  KOKKOS_INLINE_FUNCTION static T rescale_lagged(const int u, T (&w)[3], T& sc) {
    if (u % kEvery != kEvery - 1) return T(1);
    const T f = u >= 2 * kEvery - 1 ? sc : T(1);
    w[0] *= f;
    w[1] *= f;
    w[2] *= f;
    const T v[2] = {w[0], w[1]};
    sc = inverse_pow2_max(v);
    return f;
  }
  /// 3. dgtsv's steps over the chunk, from the carried row w / mu (w as
  /// `direction` gives it, mu = 1 / nu). The carried row stays w / mu with
  /// w' = N w: without the interchange the next one is N w / w0 (mu' = w0),
  /// with it N w / (-a mu) (mu' = -a mu); dgtsv interchanges when
  /// |w0 / mu| < |a|. No division lies on the chain from row to row: the
  /// row of U over its pivot is (w1, 0, w2) / w0, or (b, c, d) / a after an
  /// interchange, and w is rescaled as in direction_map (mu with it).
  /// Each row u becomes its row of U, (b, c, d) = (p1, p2, y'), in the slot
  /// of the input row that finishes it (row j0+u-1 of U). Returns the first
  /// failed pivot (1-based row of U, 0 = none: the pivot is a, or w0 / mu,
  /// whose test is that of w0 and mu); w, mu end as the carried row after
  /// the chunk.
  KOKKOS_INLINE_FUNCTION static int eliminate(Rows& r, int j0, T (&w)[3], T& mu) {
    int bad = 0;
    T sc = T(1);
KBAND_UNROLL
    for (int u = 0; u < M; ++u) {
      const T a = r.a[u], b = r.b[u], c = r.c[u], d = r.d[u];
      const bool swap = abs_(w[0]) < abs_(a * mu);
      const T pv = swap ? a : w[0];
      const bool ok = usable_pivot(pv) && (swap || usable_pivot(mu));
      if (bad == 0 && !ok) bad = j0 + u;
      const T rp = T(1) / pv;
      r.b[u] = (swap ? b : w[1]) * rp;
      r.c[u] = swap ? c * rp : T(0);
      r.d[u] = (swap ? d : w[2]) * rp;
      mu = swap ? -a * mu : w[0];
      advance(w, a, b, c, d);
      mu *= rescale_lagged(u, w, sc);
    }
    return bad;
  }
  /// 3b. The end of a system's last chunk of nr rows, after eliminate:
  /// returns x_{j0+M-1}, the first of the pair that enters its back
  /// substitution (the second, x_{j0+M}, is 0). With rows past the system
  /// (nr < M), eliminate took the first of them (a = 0: no interchange) as a
  /// step that tests the last pivot (bad = n when it fails) and leaves x_{n-1}
  /// in its row of U (p1 = c_{n-1} = 0, p2 = 0), and the others as the
  /// rows of x = 0: so 0. Otherwise the last pivot is tested here, and
  /// x_{n-1} = w2 / w0.
  KOKKOS_INLINE_FUNCTION static T finish(int nr, int n, const T (&w)[3], T mu, int& bad) {
    if (nr < M) return T(0);
    if (bad == 0 && !(usable_pivot(w[0]) && usable_pivot(mu))) bad = n;
    return w[2] / w[0];
  }
  /// 4. The chunk's back substitution map from (x_{j0+M-1}, x_{j0+M}) to
  /// (x_{j0-1}, x_{j0}); where the pair entering is known (`known`: the last
  /// chunk of a system, (xl, 0) from finish, or of a segment followed by a
  /// solved one) the map is that constant.
  KOKKOS_INLINE_FUNCTION static GTSVBackSum<T> back_map(const Rows& r, bool known, T x0, T x1, int bad) {
    GTSVBackSum<T> f = known ? GTSVBackSum<T>{T(0), T(0), T(0), T(0), x0, x1, bad}
                             : GTSVBackSum<T>{T(1), T(0), T(0), T(1), T(0), T(0), bad};
KBAND_UNROLL
    for (int u = M - 1; u >= 0; --u) {
      const T p1 = r.b[u], p2 = r.c[u], y = r.d[u];
      const T n00 = -p1 * f.G00 - p2 * f.G10, n01 = -p1 * f.G01 - p2 * f.G11;
      const T n0 = y - p1 * f.g0 - p2 * f.g1;
      f.G10 = f.G00;
      f.G11 = f.G01;
      f.g1 = f.g0;
      f.G00 = n00;
      f.G01 = n01;
      f.g0 = n0;
    }
    return f;
  }
  /// 5. x of the chunk's rows into r.a, from the pair (x0, x1) =
  /// (x_{j0+M-1}, x_{j0+M}).
  KOKKOS_INLINE_FUNCTION static void substitute(Rows& r, T x0, T x1) {
KBAND_UNROLL
    for (int u = M - 1; u >= 0; --u) {
      r.a[u] = x0;
      if (u > 0) {
        const T xp = r.d[u] - r.b[u] * x0 - r.c[u] * x1;
        x1 = x0;
        x0 = xp;
      }
    }
  }
};

/// Rows a thread of the one-segment Registers kernel: 8 in double, 16 in
/// float (the same registers; float teams then hold twice the systems:
/// H100, float, teams of 256 threads, interleaved n = 128 / 256 / 512:
/// 0.0090 / 0.0101 / 0.0127 ns a point against 0.0111 / 0.0131 / 0.0248
/// with 8 rows; grouped 0.0084 / 0.0092 / 0.0108 against 0.0108 / 0.0122 /
/// 0.0150).
template <class T>
constexpr int gtsv_register_rows() {
  return sizeof(T) >= 8 ? kRegisterRowsPerSystem : 2 * kRegisterRowsPerSystem;
}
/// Interleaved and grouped systems: kband::gtsv's Auto takes the Registers
/// kernel (in segments past one segment's limit) up to this n, Recompute
/// beyond: double 1024, float 512 (one segment's limit: no segments). Time
/// over thomas' Auto time, segments against Recompute, 2026-11-27: H100
/// double interleaved n = 1024 / 2048 1.29 / 1.30 against 1.56 / 1.29,
/// grouped 1.34 / 1.39 against 1.61 / 1.39; H200 interleaved 1.22 / 1.27
/// against 1.11 / 0.97, grouped 1.28 / 1.35 against 1.21 / 1.05. Float n =
/// 1024: H100 interleaved 1.74 against 1.73, grouped 1.76 against 1.63;
/// H200 1.73 / 1.83 against 1.31 / 1.34 (n = 512, segments ahead on the
/// H100 by 15-23 %, Recompute on the H200 by 6-19 %: kept, one segment).
template <class T>
constexpr int gtsv_segments_auto_rows() {
  return sizeof(T) >= 8 ? 1024 : 512;
}
/// Contiguous systems on GPUs past this n take two segments of 16 rows a
/// thread (one segment of 16 would need teams of more than 256 threads).
constexpr int kGTSVContiguousOneSegmentRows = 4096;

// ---------------------------------------------------------------------------
// Per-system a, b, c, d -> x with partial pivoting (a(s,0), c(s,n-1) are not
// read). Three scans: the carried row's direction, its size, x.
//
// S = 2 segments (thomas' design): a team takes a system's rows in two
// halves of K chunks, one after the other. The first half's rows of U (3
// values a row) stay in registers while the second half, started from the
// carried row the first half's scan totals give (its direction and size),
// is eliminated and solved; the first half's x then follow from the pair
// (x_{h-1}, x_h) before the second half (the second half's back scan total).
// A thread holds 7 M values at once.
//
// S > 2 segments: the same walk over S segments, the middle ones' rows of U
// in level-1 team scratch (a thread's own values, so no barrier guards them:
// (S-2) 3 M values a thread), the back substitution from the last segment
// down.
// ---------------------------------------------------------------------------
template <class Exec, class BA, class BB, class BC, class BD, class BX, class Info, int M, int S = 1>
struct GTSVPerSystemRegisters : RegisterBase<Exec, batch_value_t<BX>, M> {
  static_assert(S >= 1 && S <= 8, "one to eight segments");
  using T = batch_value_t<BX>;
  using Base = RegisterBase<Exec, T, M>;
  using typename Base::member_type;
  using Place = typename Base::Place;
  using Chunk = GTSVChunk<T, M>;
  using Rows = typename Chunk::Rows;
  BA a;
  BB b;
  BC c;
  BD d;
  BX x;
  Info info;

  GTSVPerSystemRegisters(const Base& base, BA a_, BB b_, BC c_, BD d_, BX x_, Info info_)
      : Base(base), a(a_), b(b_), c(c_), d(d_), x(x_), info(info_) {}

  // the launch geometry of thomas' per-system kernel. Auto (one segment):
  // contiguous batches at any n the teams allow, interleaved and grouped
  // ones up to 32 chunks (n = 256 in double's 8 rows a thread, 512 in
  // float's 16: gtsv_register_rows; H100, float, time over thomas' Auto
  // time, n = 256 / 512: interleaved 1.18 / 1.38, grouped 1.10 / 1.16,
  // against 1.73 / 1.55 and 1.43 / 1.60 with 8 rows one segment to 256 and
  // two segments of 16 beyond)
  using Thomas = ThomasPerSystemRegisters<Exec, BA, BB, BC, BD, BX, Info, M>;
  static constexpr int kSystemsPerTeam = Thomas::kSystemsPerTeam;
  static constexpr int kMinTeamStrided = Thomas::kMinTeamStrided;
  static constexpr bool kAutoContiguous = true;
  static constexpr int kMaxBlocksStrided = Thomas::kMaxBlocksStrided;
  // Segments of M = 16 rows (Auto's limits in chunks of M rows over the
  // system, use_registers). Two: double up to n = 2048 (H100, time over
  // thomas' Auto time, n = 512 / 1024 / 2048: interleaved 1.27 / 1.30 /
  // 1.38 against one segment's 1.62 / 2.84 and Auto's 1.63 / 1.72 / 1.41;
  // grouped 1.01 / 1.27 / 1.36 against 1.16 / 1.67 and Auto's 1.11 / 1.73 /
  // 1.55; n = 256: one segment of M = 8, 1.15 / 1.13, against 1.31 / 1.12),
  // interleaved only to 1024, where four take over; float grouped 513 ..
  // 1024 (n = 512 / 1024: 1.61 / 1.08 against Recompute's 1.76 / 1.15;
  // float's one segment serves n <= 512 first, interleaved ones too, where
  // two segments gave 1.21 against Recompute's 1.42). Four:
  // interleaved, double n = 1025..2048 (2048: 1.30 against 1.39; 1024: 1.48
  // against 1.29), float 513..1024 (1024: 1.10 against two's 1.13 and
  // Recompute's 1.29; 2048: 1.16 against Recompute's 1.02); grouped batches
  // keep two (double 2048: 1.41 against 1.38). Eight: slower everywhere
  // timed (double 2048: 1.35 interleaved, 1.50 grouped). (Those figures
  // are against older, slower thomas kernels; kband::gtsv's Auto now stops
  // at gtsv_segments_auto_rows and takes Recompute beyond, so four
  // segments serve only Variant::Registers asked for.)
  static constexpr bool kDouble = sizeof(T) >= 8;
  static constexpr int kAutoChunks = S == 1 ? 32 : S == 2 ? (kDouble ? 128 : 64) : 0;
  static constexpr int kAutoChunksInterleaved =
      S == 1 ? 32 : S == 2 ? (kDouble ? 64 : 32) : S == 4 ? (kDouble ? 128 : 64) : 0;

  static constexpr size_t kEntryDB = scan_entry<T, GTSVDirSum<T>>() > scan_entry<T, GTSVBackSum<T>>()
                                         ? scan_entry<T, GTSVDirSum<T>>()
                                         : scan_entry<T, GTSVBackSum<T>>();
  static constexpr size_t kEntryS = scan_entry<T, GTSVSizeSum<T>>();
  /// Two scan regions (two halves each): one of kEntryDB bytes a thread
  /// for the direction and back substitution scans, one of kEntryS for the
  /// size scan (double: 144 bytes a thread, against 224 with two regions of
  /// the largest entry; Kokkos' level-0 team scratch then holds teams of up
  /// to 284 threads, not 182, so 8 systems of n = 256 a team, not 4:
  /// 64-byte rows of an interleaved batch, not 32).
  KOKKOS_INLINE_FUNCTION static size_t scratch_per_thread() { return 2 * kEntryDB + 2 * kEntryS; }
  /// rows of U of segments 1 .. S-2, level-1 scratch (register_geometry)
  static constexpr size_t kScratch1PerThread = S > 2 ? (S - 2) * 3 * M * sizeof(T) : 0;

  using Base::seg_rows;
  KOKKOS_INLINE_FUNCTION void load(const Place& pl, int j0, int nr, Rows& r) const {
    this->load_segment(a, b, c, d, pl, j0, nr, r);
  }

  KOKKOS_FUNCTION void operator()(const member_type& m) const {
    const Place pl0 = this->place(m);
    const int j0 = pl0.k * M, nr = S == 1 ? this->rows(pl0.k) : seg_rows(0, pl0.k);
    int b0, b1;
    this->blocks(m, b0, b1);
    char* big = static_cast<char*>(m.team_scratch(0).get_shmem(m.team_size() * scratch_per_thread()));
    char* small = big + 2 * m.team_size() * kEntryDB;
    T* kept = nullptr;
    if constexpr (S > 2) kept = static_cast<T*>(m.team_scratch(1).get_shmem(m.team_size() * kScratch1PerThread));
    for (int bl = b0; bl < b1; ++bl) {
      const Place pl = this->at(pl0, bl);
      Rows r;
      load(pl, j0, nr, r);
      // three scans a block (S = 2: six) in the regions big, small, big:
      // the last one's results are read after it, so the next block's first
      // scan waits
      if (bl > b0) m.team_barrier();
      if constexpr (S == 1)
        solve(m, pl, big, small, j0, nr, r);
      else
        solve_segments(m, pl, big, small, kept, j0, nr, r);
    }
  }

  /// Where a thread keeps the rows of U (p1, p2, y': M values each) of its
  /// chunk of segment g (1 .. S-2): kept[(3 M (g-1) + u) ts + slot], unit
  /// stride across a warp.
  KOKKOS_INLINE_FUNCTION static T* kept_at(T* kept, int g, int ts, int slot) {
    return kept + static_cast<size_t>(3 * M * (g - 1)) * ts + slot;
  }

  KOKKOS_INLINE_FUNCTION void solve_segments(const member_type& m, const Place& pl, char* big, char* small, T* kept,
                                             int j0, int nr, Rows& r) const {
    using D = GTSVDirSum<T>;
    using Z = GTSVSizeSum<T>;
    using BS = GTSVBackSum<T>;
    const int ts = m.team_size();
    // 1-3 over the first segment, from the carried row (1, 0, 0) of size 1;
    // the scans' totals give the carried row after it, nu_h w_h
    T w[3], wh[3], nu, nuh;
    {
      D ex, all;
      this->template scan<false>(m, pl, big, kEntryDB, Chunk::direction_map(r), D::identity(), ex, all,
                                 ProductDirections());
      Chunk::direction(ex, w);
      Chunk::direction(all, wh);
    }
    {
      Z ex, all;
      this->template scan<false>(m, pl, small, kEntryS, Chunk::size_map(r, w), Z::identity(), ex, all);
      nu = ex(T(1));
      nuh = all(T(1));
    }
    T mu = T(1) / nu;
    int bad = Chunk::eliminate(r, j0, w, mu);  // this chunk's first failed pivot, all segments
    // the first segment's rows of U stay here
    T p1[M], p2[M], yv[M];
KBAND_UNROLL
    for (int u = 0; u < M; ++u) {
      p1[u] = r.b[u];
      p2[u] = r.c[u];
      yv[u] = r.d[u];
    }
    // 1-3 over the others, each from the carried row nu_h w_h the one
    // before leaves; the middle ones' rows of U to level-1 scratch, the
    // last one's stay in r
    // unrolled for two segments only (ptxas, double, M = 16: 164 / 308
    // bytes of spill stores / loads unrolled and 532 / 812 rolled; four
    // segments 612 / 968 unrolled, 252-256 / 444-452 rolled)
KBAND_UNROLL_COUNT((S <= 2 ? 8 : 1))
    for (int g = 1; g < S; ++g) {
      const int jg = (g * this->K + pl.k) * M;
      load(pl, jg, seg_rows(g, pl.k), r);
      {
        D ex, all;
        this->template scan<false>(m, pl, big, kEntryDB, Chunk::direction_map(r), D::identity(), ex, all,
                                   ProductDirections());
        Chunk::direction_from(ex, wh, w);
        if (g < S - 1) {
          T wn[3];
          Chunk::direction_from(all, wh, wn);
          wh[0] = wn[0];
          wh[1] = wn[1];
          wh[2] = wn[2];
        }
      }
      {
        Z ex, all;
        this->template scan<false>(m, pl, small, kEntryS, Chunk::size_map(r, w), Z::identity(), ex, all);
        nu = ex(nuh);
        if (g < S - 1) nuh = all(nuh);
      }
      mu = T(1) / nu;
      const int bg = Chunk::eliminate(r, jg, w, mu);
      if (bad == 0) bad = bg;
      if (S > 2 && g < S - 1) {
        T* kp = kept_at(kept, g, ts, pl.slot);
KBAND_UNROLL
        for (int u = 0; u < M; ++u) {
          kp[u * ts] = r.b[u];
          kp[(M + u) * ts] = r.c[u];
          kp[(2 * M + u) * ts] = r.d[u];
        }
      }
    }
    const bool last = pl.k == this->K - 1;
    const int jl = ((S - 1) * this->K + pl.k) * M, nrl = seg_rows(S - 1, pl.k);
    const T xl = last ? Chunk::finish(nrl, this->n, w, mu, bad) : T(0);
    // 4. the last segment's x, and the first failed pivot of the system
    BS ex, all;
    this->template scan<true>(m, pl, big, kEntryDB, Chunk::back_map(r, last, xl, T(0), bad), BS::identity(), ex,
                              all);
    const bool fail = all.bad != 0;
    if (pl.live && nrl > 0) {
      if (fail) {
KBAND_UNROLL
        for (int u = 0; u < M; ++u) r.a[u] = this->nan;
      } else {
        Chunk::substitute(r, last ? xl : ex.g0, last ? T(0) : ex.g1);
      }
      store_chunk<M>(&x(pl.s, jl), batch_traits<BX>::row_stride(x), nrl < M ? nrl : M, r.a);
    }
    // each earlier segment's x from the pair (x_{h-1}, x_h) before the one
    // after it (that one's back scan total); the back scans reuse region
    // big, whose results were just read
    T xh0 = all.g0, xh1 = all.g1;
    const int sysbad = all.bad;
    for (int g = S - 2; g >= 1; --g) {
      m.team_barrier();
      const T* kp = kept_at(kept, g, ts, pl.slot);
KBAND_UNROLL
      for (int u = 0; u < M; ++u) {
        r.b[u] = kp[u * ts];
        r.c[u] = kp[(M + u) * ts];
        r.d[u] = kp[(2 * M + u) * ts];
      }
      BS exg, allg;
      this->template scan<true>(m, pl, big, kEntryDB, Chunk::back_map(r, last, xh0, xh1, 0), BS::identity(), exg,
                                allg);
      const int nrg = seg_rows(g, pl.k);
      if (pl.live && nrg > 0) {
        if (fail) {
KBAND_UNROLL
          for (int u = 0; u < M; ++u) r.a[u] = this->nan;
        } else {
          Chunk::substitute(r, last ? xh0 : exg.g0, last ? xh1 : exg.g1);
        }
        store_chunk<M>(&x(pl.s, (g * this->K + pl.k) * M), batch_traits<BX>::row_stride(x), nrg < M ? nrg : M, r.a);
      }
      xh0 = allg.g0;
      xh1 = allg.g1;
    }
    m.team_barrier();
KBAND_UNROLL
    for (int u = 0; u < M; ++u) {
      r.b[u] = p1[u];
      r.c[u] = p2[u];
      r.d[u] = yv[u];
    }
    {
      BS ex0, all0;
      this->template scan<true>(m, pl, big, kEntryDB, Chunk::back_map(r, last, xh0, xh1, 0), BS::identity(), ex0,
                                all0);
      if (!pl.live) return;
      if (fail) {
KBAND_UNROLL
        for (int u = 0; u < M; ++u) r.a[u] = this->nan;
      } else {
        Chunk::substitute(r, last ? xh0 : ex0.g0, last ? xh1 : ex0.g1);
      }
    }
    if (nr > 0) store_chunk<M>(&x(pl.s, j0), batch_traits<BX>::row_stride(x), nr < M ? nr : M, r.a);
    if (pl.k == 0) info(pl.s) = sysbad;
  }

  KOKKOS_INLINE_FUNCTION void solve(const member_type& m, const Place& pl, char* big, char* small, int j0, int nr,
                                    Rows& r) const {
    // 1. the direction of the carried row entering the chunk
    T w[3];
    {
      using Sm = GTSVDirSum<T>;
      Sm ex, all;
      this->template scan<false>(m, pl, big, kEntryDB, Chunk::direction_map(r),
                                 Sm::identity(), ex, all, ProductDirections());
      Chunk::direction(ex, w);
    }
    // 2. its size
    T nu;
    {
      using Sm = GTSVSizeSum<T>;
      Sm ex, all;
      this->template scan<false>(m, pl, small, kEntryS, Chunk::size_map(r, w),
                                 Sm::identity(), ex, all);
      nu = ex(T(1));
    }
    // 3. dgtsv's steps from the carried row nu w; the last chunk finishes x_{n-1}
    T mu = T(1) / nu;
    int bad = Chunk::eliminate(r, j0, w, mu);
    const bool last = pl.k == this->K - 1;
    const T xl = last ? Chunk::finish(nr, this->n, w, mu, bad) : T(0);
    // 4. x entering the chunk, and the first failed pivot of the system
    using Sm = GTSVBackSum<T>;
    Sm ex, all;
    this->template scan<true>(m, pl, big, kEntryDB,
                              Chunk::back_map(r, last, xl, T(0), bad), Sm::identity(), ex, all);
    if (!pl.live) return;
    if (all.bad != 0) {
KBAND_UNROLL
      for (int u = 0; u < M; ++u) r.a[u] = this->nan;
    } else {
      Chunk::substitute(r, last ? xl : ex.g0, last ? T(0) : ex.g1);
    }
    store_chunk<M>(&x(pl.s, j0), batch_traits<BX>::row_stride(x), nr, r.a);
    if (pl.k == 0) info(pl.s) = all.bad;
  }
};

}  // namespace impl
}  // namespace kband
