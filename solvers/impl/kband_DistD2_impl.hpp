// Preprocessing (host) and kernels of DistD2 (kband_DistD2.hpp).
//
// Notation for one subdomain of n rows (local rows 0..n-1): row j of the
// operator matrix is  l_j x_{j-1} + m_j x_j + u_j x_{j+1} = rhs_j, where
// x_{-1} is the previous subdomain's last unknown and x_n the next one's first.
//
// Forward pass (seed 002, Algorithm 5 lines 1-12 / Algorithm 6 lines 1-12):
// rows 0 and 1 are only normalised, rows j >= 2 eliminate x_{j-1}:
//     d_j = f_j (rhs_j - r_j d_{j-1})        (r_0 = r_1 = 0)
// leaving  x_j + sa_j x_0 + sc_j x_{j+1} = d_j  for 1 <= j <= n-1 (sa_j is the
// coefficient of the first unknown s = x_0; for j = n-1, sc is that of x_n),
// and  x_0 + sa_0 x_{-1} + sc_0 x_1 = d_0.
// The backward elimination of the paper (Algorithm 6 lines 13-20) serves only
// to give the first row its final form  s + A x_{-1} + B e = D_0  (e = x_{n-1});
// here D_0 = sum_j g_j d_j is accumulated during the forward pass with weights g
// precomputed by the preprocessing (as the periodic Thomas accumulates g.d), and
// the backward sweep moves into the substitution, which then runs the ordinary
// Thomas back-substitution  x_j = d_j - sa_j s - sc_j x_{j+1}  from x_{n-1} = e.
// Same arithmetic model, same 2x2 systems, but the field is streamed twice
// (decouple: read input, write d; substitution: read and write d) instead of
// three times: 4 field-sized transfers instead of the paper's 6 (Table 3).
// Last row:  e + C s + E x_n = D_{n-1} = d_{n-1}.  DistD2 drops B and C.
#pragma once

#include "kband_Compact_impl.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace kband {
namespace impl {

/// Result of the host preprocessing of one subdomain (long double).
/// w, G: the forward values' response to the RHS of row 1 (d_j += w_j dd_1 for
/// 1 <= j <= n-3, w_0 = w_{n-2} = w_{n-1} = 0) and its weight in D_0,
/// G = sum g_j w_j: what distd2_add_halos needs (see kband_DistD2.hpp).
struct DistD2Pre {
  std::vector<long double> f, r, g, sa, sc, w;
  long double A = 0, B = 0, C = 0, E = 0, G = 0;
  long double far = 0;  // max(|w_{n-3}|, |g_{n-2}|): what a neighbour's view of D drops (DistD2Edges)
  int bad_row = 0;  // 1-based row of an unusable pivot, 0 if none
};

template <class Scheme>
void distd2_local_row(const Scheme& s, int i, int n, bool lo_closed, bool hi_closed, long double& l,
                      long double& m, long double& u) {
  const int big = 1 << 20;  // a line long enough that its ends do not meet
  int gi = 2;               // an interior row
  if (lo_closed && i < 2) gi = i;
  else if (hi_closed && i >= n - 2) gi = big - n + i;
  const auto r = s.row(gi, big);
  l = r.lower;
  m = r.diag;
  u = r.upper;
}

inline bool distd2_usable(long double v) { return std::isfinite(static_cast<double>(v)) && v != 0; }

/// Algorithm 5 (adapted as described at the top of this file), n >= 3.
template <class Scheme>
DistD2Pre distd2_preprocess(const Scheme& s, int n, bool lo_closed, bool hi_closed) {
  DistD2Pre p;
  p.f.assign(n, 0);
  p.r.assign(n, 0);
  p.g.assign(n, 0);
  p.sa.assign(n, 0);
  p.sc.assign(n, 0);
  std::vector<long double> sab(n, 0), scb(n, 0), gam(n, 0);
  for (int j = 0; j < n; ++j) {
    long double l, m, u;
    distd2_local_row(s, j, n, lo_closed, hi_closed, l, m, u);
    const long double piv = j < 2 ? m : m - l * p.sc[j - 1];
    if (p.bad_row == 0 && !distd2_usable(piv)) p.bad_row = j + 1;
    p.f[j] = 1 / piv;
    p.r[j] = j < 2 ? 0 : l;
    p.sa[j] = j < 2 ? l * p.f[j] : -l * p.sa[j - 1] * p.f[j];
    p.sc[j] = u * p.f[j];
  }
  sab[n - 2] = p.sa[n - 2];
  scb[n - 2] = p.sc[n - 2];
  for (int j = n - 3; j >= 1; --j) {
    sab[j] = p.sa[j] - p.sc[j] * sab[j + 1];
    scb[j] = -p.sc[j] * scb[j + 1];
  }
  const long double den = 1 - p.sc[0] * sab[1];
  if (p.bad_row == 0 && !distd2_usable(den)) p.bad_row = 1;
  const long double w0 = 1 / den;
  gam[1] = 1;
  for (int k = 2; k <= n - 2; ++k) gam[k] = -gam[k - 1] * p.sc[k - 1];
  p.g[0] = w0;
  for (int k = 1; k <= n - 2; ++k) p.g[k] = -w0 * p.sc[0] * gam[k];
  p.w.assign(n, 0);
  if (n >= 4) p.w[1] = 1;
  for (int j = 2; j <= n - 3; ++j) p.w[j] = -p.f[j] * p.r[j] * p.w[j - 1];
  for (int j = 1; j <= n - 3; ++j) p.G += p.g[j] * p.w[j];
  if (n >= 5) p.far = std::max(std::fabs(p.w[n - 3]), std::fabs(p.g[n - 2]));
  p.A = w0 * p.sa[0];
  p.B = -w0 * p.sc[0] * scb[1];
  p.C = p.sa[n - 1];
  p.E = p.sc[n - 1];
  return p;
}

/// Preprocessed arrays of one subdomain on the memory space.
/// Lean rows lean_lo .. lean_hi: away from both ends the elimination has
/// converged and the couplings to the ends have died out -- f_j, r_j, sc_j
/// equal lean_f, lean_r, lean_sc exactly (in T) and |sa_j|, |w_j|, |g_j| are
/// below epsilon / 64 -- so a block of lean rows runs the plain recurrences
/// d_j = f (rhs_j - r d_{j-1}) and x_j = d_j - sc x_{j+1} with scalar
/// coefficients: no per-row coefficient loads, fewer registers.
template <class T, class Mem>
struct DistD2Data {
  Kokkos::View<T*, Mem> f, r, g, sa, sc, w;
  CompactStencil<T> stencil;
  T G = 0;
  int n = 0;
  bool lo_closed = false, hi_closed = false;  // closure rows at local 0,1 / n-2,n-1
  int lean_lo = 1 << 30, lean_hi = -1;        // empty unless set by distd2_lean_rows
  T lean_f = 0, lean_r = 0, lean_sc = 0;
  /// Are rows a .. b (a <= b) all lean?
  KOKKOS_INLINE_FUNCTION bool lean(const int a, const int b) const { return a >= lean_lo && b <= lean_hi; }
};

/// The lean rows of a preprocessed subdomain (DistD2Data): the widest run of
/// rows around the middle, within 2 .. n-3, where the coefficients in T
/// equal those of the middle row and the end couplings are below eps / 64.
template <class T, class Mem>
void distd2_lean_rows(const DistD2Pre& p, DistD2Data<T, Mem>& d) {
  const int n = d.n;
  d.lean_lo = 1 << 30;
  d.lean_hi = -1;
  if (n < 8) return;
  const long double thr = static_cast<long double>(std::numeric_limits<T>::epsilon()) / 64;
  const long double gthr = thr * std::max<long double>(1, std::fabs(p.g[0]));
  const int mid = n / 2;
  const T F = static_cast<T>(p.f[mid]), R = static_cast<T>(p.r[mid]), C = static_cast<T>(p.sc[mid]);
  auto ok = [&](int j) {
    return j >= 2 && j <= n - 3 && static_cast<T>(p.f[j]) == F && static_cast<T>(p.r[j]) == R &&
           static_cast<T>(p.sc[j]) == C && std::fabs(p.sa[j]) <= thr && std::fabs(p.w[j]) <= thr &&
           std::fabs(p.g[j]) <= gthr;
  };
  if (!ok(mid)) return;
  int lo = mid, hi = mid;
  while (ok(lo - 1)) --lo;
  while (ok(hi + 1)) ++hi;
  d.lean_lo = lo;
  d.lean_hi = hi;
  d.lean_f = F;
  d.lean_r = R;
  d.lean_sc = C;
}

template <class T, int SZ, class Mem>
using GroupedView = typename GroupedBatch<T, SZ, Mem>::view_type;

/// The systems (lanes) a work item owns: one system on GPUs (W = 1; SZ
/// consecutive threads of a team share a group, so every row access of a
/// warp is one contiguous segment), a whole group of SZ on CPUs (W = SZ, the
/// lane loop vectorises). Work item = league_rank * team_size + team_rank.
template <int SZ, int W>
struct DistD2Lanes {
  int g, l0, nl;
  KOKKOS_INLINE_FUNCTION DistD2Lanes(const int item, const int nsys) {
    if (W == 1) {
      g = item / SZ;
      l0 = item % SZ;
      nl = item < nsys ? 1 : 0;
    } else {
      g = item;
      l0 = 0;
      nl = nsys - item * SZ < SZ ? nsys - item * SZ : SZ;
    }
  }
};

/// Launch shape of the DistD2 kernels; `scratch`: the decoupled rows d of a
/// single-subdomain line stay in team scratch between the passes.
struct DistD2Geometry {
  int team_size = 1, league = 0;
  bool scratch = false;
  size_t scratch_bytes = 0;
};

/// Rows per block of the DistD2 kernels outside the lean stretch (GPUs:
/// KBAND_DISTD2_UNROLL_FULL, default half of U; those blocks hold three
/// coefficients a row in registers).
template <int U>
struct DistD2FullRows {
#ifdef KBAND_DISTD2_UNROLL_FULL
  static constexpr int value = U > 1 ? KBAND_DISTD2_UNROLL_FULL : 1;
#else
  static constexpr int value = U > 1 ? U / 2 : 1;
#endif
  static_assert(value >= 1 && value <= U, "KBAND_DISTD2_UNROLL_FULL must lie in 1 .. KBAND_DISTD2_UNROLL");
};

#ifndef KBAND_DISTD2_REVERSE
#define KBAND_DISTD2_REVERSE 1
#endif
/// Work item of a substitution kernel: teams in reverse order when
/// KBAND_DISTD2_REVERSE (default), so that the first teams to run take the
/// lines the decoupling wrote last, whose last rows -- the first the sweep
/// reads -- are still in L2. (H200, 2 GPUs, 512^3: 0.599-0.601 ms per
/// derivative against 0.605-0.608 ms in team order.)
template <class Member>
KOKKOS_INLINE_FUNCTION int distd2_sweep_item(const Member& m) {
  const int t = KBAND_DISTD2_REVERSE ? m.league_size() - 1 - m.league_rank() : m.league_rank();
  return t * m.team_size() + m.team_rank();
}

/// Algorithm 7's sweep: x_{n-1} = e, x_j = d_j - sa_j s - sc_j x_{j+1} for
/// j = n-2 .. 1, x_0 = s; d read from src (row stride srow), x written to
/// dst (row stride drow); src may be dst. Blocks of UF rows (lean stretches:
/// U), loads first (one memory round trip per block); the last block holds
/// the cnt < UF rows left, its loads and stores predicated (so a short line
/// pays one round trip for its remainder, not one per row). HC: d_j + w_j hc first (the halos'
/// share of d, distd2_add_halos), and d_{n-2} + dn2 (the share's row n-2
/// term, added here so that no store precedes the first block's loads).
template <class T, class Mem, int W, int U, bool HC = false>
struct DistD2Sweep {
  /// Lean rows jb-U+1 .. jb (DistD2Data::lean): x_j = d_j - sc x_{j+1}.
  KOKKOS_INLINE_FUNCTION static void lean_rows(const DistD2Data<T, Mem>& p, const T* src, size_t srow, T* dst,
                                               size_t drow, int nlc, int jb, T (&xn)[W]) {
    T dv[U][W];
    const T c = p.lean_sc;
    for (int u = 0; u < U; ++u)
      for (int l = 0; l < nlc; ++l) dv[u][l] = src[(jb - u) * srow + l];
    for (int u = 0; u < U; ++u)
      for (int l = 0; l < nlc; ++l) {
        xn[l] = dv[u][l] - c * xn[l];
        dst[(jb - u) * drow + l] = xn[l];
      }
  }
  template <int UU, bool Part, bool First>
  KOKKOS_INLINE_FUNCTION static void rows(const DistD2Data<T, Mem>& p, const T* src, size_t srow, T* dst,
                                          size_t drow, int nlc, int jb, int cnt, const T (&s)[W], T (&xn)[W],
                                          const T (&hc)[W], const T (&dn2)[W]) {
    T dv[UU][W], av[UU], cv[UU];
    for (int u = 0; u < UU; ++u) {
      if (Part && u >= cnt) continue;
      av[u] = p.sa(jb - u);
      cv[u] = p.sc(jb - u);
      const T wu = HC ? p.w(jb - u) : T(0);
      for (int l = 0; l < nlc; ++l) {
        dv[u][l] = HC ? src[(jb - u) * srow + l] + wu * hc[l] : src[(jb - u) * srow + l];
        if (HC && First && u == 0) dv[u][l] += dn2[l];
      }
    }
    for (int u = 0; u < UU; ++u) {
      if (Part && u >= cnt) continue;
      for (int l = 0; l < nlc; ++l) {
        xn[l] = dv[u][l] - av[u] * s[l] - cv[u] * xn[l];
        dst[(jb - u) * drow + l] = xn[l];
      }
    }
  }
  /// Lean stretches in blocks of U rows, the rest in blocks of UF (fewer
  /// registers for the blocks that load three coefficients a row). GPUs
  /// only: with U = 1 (CPUs) the lean test per row cost more than the loads
  /// it saves (one core, n = 1024: the one-message coupling took 2.6-2.8x
  /// the copy time with it, 0.89-0.91x without).
  KOKKOS_INLINE_FUNCTION static constexpr bool lean_sweep() { return U > 1; }
  KOKKOS_INLINE_FUNCTION static void run(const DistD2Data<T, Mem>& p, const T* src, size_t srow, T* dst,
                                         size_t drow, int nlc, const T (&s)[W], T (&xn)[W], const T (&hc)[W],
                                         const T (&dn2)[W]) {
    constexpr int UF = DistD2FullRows<U>::value;
    const int n = p.n;
    T e[W];
    for (int l = 0; l < nlc; ++l) e[l] = xn[l];
    int j = n - 2;
    if (j - UF + 1 >= 1) {
      rows<UF, false, true>(p, src, srow, dst, drow, nlc, j, UF, s, xn, hc, dn2);
      j -= UF;
    } else if (j >= 1) {
      rows<UF, true, true>(p, src, srow, dst, drow, nlc, j, j, s, xn, hc, dn2);
      j = 0;
    }
    while (j - UF + 1 >= 1) {
      if (lean_sweep() && j - U + 1 >= 1 && p.lean(j - U + 1, j)) {
        lean_rows(p, src, srow, dst, drow, nlc, j, xn);
        j -= U;
      } else {
        rows<UF, false, false>(p, src, srow, dst, drow, nlc, j, UF, s, xn, hc, dn2);
        j -= UF;
      }
    }
    if (j >= 1) rows<UF, true, false>(p, src, srow, dst, drow, nlc, j, j, s, xn, hc, dn2);
    for (int l = 0; l < nlc; ++l) {
      dst[(n - 1) * drow + l] = e[l];
      dst[l] = s[l];
    }
  }
};

/// Decoupling phase: RHS stencil fused into the forward pass (Algorithm 6).
/// The forward values d_j go to `out` (Scratch: to team scratch). Local (a
/// single-subdomain line): the subdomain's own 2x2 system (s + P e = D_0,
/// Q s + e = D_{n-1}, det_inv = 1/(1 - PQ)) and the substitution follow in
/// the same kernel, so d is read back from scratch (or cache) and the field
/// crosses memory twice in all.
template <class Exec, class T, int SZ, class Mem, int W, int U, bool Local, bool Scratch>
struct DistD2DecoupleKernel {
  using member_type = typename Kokkos::TeamPolicy<Exec>::member_type;
  DistD2Data<T, Mem> p;
  GroupedView<T, SZ, Mem> in, lo, hi, out, bnd;
  int row0, nsys;
  T P = 0, Q = 0, det_inv = 1;  // Local only
  bool zero_halo = false;       // halos taken as zero (distd2_decouple_interior)
  bool copy_ends = false;       // rows 0, 1 -> first, rows n-2, n-1 -> last (the neighbours' halos)
  GroupedView<T, SZ, Mem> first, last;
  bool ends_d = false;          // and D_0 -> first row 2, D_{n-1} -> last row 2 (DistD2 one-message mode)

  KOKKOS_INLINE_FUNCTION T point(const int g, const int l, const int q) const {
    const int n = p.n;
    if (q >= 0 && q < n) return in(g, row0 + q, l);
    if (zero_halo) return T(0);
    return q < 0 ? lo(g, q + 2, l) : hi(g, q - n, l);
  }

  /// Row j whose window may leave the subdomain (rows 0, 1, n-2, n-1).
  KOKKOS_INLINE_FUNCTION void edge_row(const int g, const int l0, const int nlc, const int j, T* ds,
                                       const size_t drow, T (&dprev)[W], T (&dot)[W]) const {
    const T* c;
    int o;
    p.stencil.window(j, p.n, p.lo_closed, p.hi_closed, c, o);
    const T fj = p.f(j), rj = p.r(j), gj = p.g(j);
    for (int l = 0; l < nlc; ++l) {
      T rhs = 0;
      for (int q = 0; q < 5; ++q)
        if (c[q] != T(0)) rhs += c[q] * point(g, l0 + l, j + o + q);
      const T d = fj * (rhs - rj * dprev[l]);
      ds[j * drow + l] = d;
      dot[l] += gj * d;
      dprev[l] = d;
    }
  }

  /// Rows jb .. jb+UU-1 of the interior (windows inside the subdomain).
  /// GPUs (W = 1): win[0..3] holds rows jb-2 .. jb+1 in registers and is
  /// advanced by UU rows, so each input row is loaded once, UU loads in
  /// flight. CPUs (W = SZ lanes): the five rows are read where they are (the
  /// lanes of a row share a cache line), which keeps the lane loop free of
  /// register spills.
  template <int UU>
  KOKKOS_INLINE_FUNCTION void bulk(const int g, const int l0, const int nlc, const int jb, T* ds, const size_t drow,
                                   T (&win)[4][W], T (&dprev)[W], T (&dot)[W]) const {
    const T* c = p.stencil.interior;
    const T c0 = c[0], c1 = c[1], c2 = c[2], c3 = c[3], c4 = c[4];
    if (W > 1) {
      const bool lean = p.lean(jb, jb + UU - 1);
      for (int u = 0; u < UU; ++u) {
        const int j = jb + u;
        const T fj = lean ? p.lean_f : p.f(j), rj = lean ? p.lean_r : p.r(j), gj = lean ? T(0) : p.g(j);
        const T* x = &in(g, row0 + j - 2, l0);
        T* y = ds + j * drow;
        for (int l = 0; l < nlc; ++l) {
          const T rhs = c0 * x[l] + c1 * x[SZ + l] + c2 * x[2 * SZ + l] + c3 * x[3 * SZ + l] + c4 * x[4 * SZ + l];
          const T d = fj * (rhs - rj * dprev[l]);
          y[l] = d;
          dot[l] += gj * d;
          dprev[l] = d;
        }
      }
      return;
    }
    T v[UU + 4];
    T fv[UU], rv[UU], gv[UU];
    for (int u = 0; u < UU; ++u) {
      fv[u] = p.f(jb + u);
      rv[u] = p.r(jb + u);
      gv[u] = p.g(jb + u);
      v[u + 4] = in(g, row0 + jb + 2 + u, l0);
    }
    for (int q = 0; q < 4; ++q) v[q] = win[q][0];
    for (int u = 0; u < UU; ++u) {
      const T rhs = c0 * v[u] + c1 * v[u + 1] + c2 * v[u + 2] + c3 * v[u + 3] + c4 * v[u + 4];
      const T d = fv[u] * (rhs - rv[u] * dprev[0]);
      ds[(jb + u) * drow] = d;
      dot[0] += gv[u] * d;
      dprev[0] = d;
    }
    for (int q = 0; q < 4; ++q) win[q][0] = v[UU + q];
  }

  /// A block of U lean rows jb .. jb+U-1 (DistD2Data::lean): scalar
  /// coefficients, no share of D_0.
  KOKKOS_INLINE_FUNCTION void stream_lean(const int g, const int l, const int jb, T* ds, const size_t drow,
                                          T (&win)[4], T& dprev) const {
    const T* c = p.stencil.interior;
    const T c0 = c[0], c1 = c[1], c2 = c[2], c3 = c[3], c4 = c[4], F = p.lean_f, R = p.lean_r;
    T v[U + 4];
    for (int u = 0; u < U; ++u) v[u + 4] = in(g, row0 + jb + 2 + u, l);
    for (int q = 0; q < 4; ++q) v[q] = win[q];
    for (int u = 0; u < U; ++u) {
      const T rhs = c0 * v[u] + c1 * v[u + 1] + c2 * v[u + 2] + c3 * v[u + 3] + c4 * v[u + 4];
      dprev = F * (rhs - R * dprev);
      ds[(jb + u) * drow] = dprev;
    }
    for (int q = 0; q < 4; ++q) win[q] = v[U + q];
  }

  /// GPUs, no closed end: every row j = 0 .. n-1 has the interior stencil
  /// over x_{j-2} .. x_{j+2} (points beyond the subdomain: the halos, or
  /// zero) and r_0 = r_1 = 0, so the forward pass is one stream of blocks of
  /// U rows, win[0..3] = x_{jb-2} .. x_{jb+1} carried in registers. Tail: the
  /// block holds the last cnt <= UU rows; loads and stores are predicated and
  /// the points past row n-1 come from hi (or are zero). Blocks of UU rows.
  template <int UU, bool Tail>
  KOKKOS_INLINE_FUNCTION void stream(const int g, const int l, const int jb, const int cnt, T* ds,
                                     const size_t drow, T (&win)[4], T& dprev, T& dot) const {
    const int n = p.n;
    const T* c = p.stencil.interior;
    const T c0 = c[0], c1 = c[1], c2 = c[2], c3 = c[3], c4 = c[4];
    T v[UU + 4], fv[UU], rv[UU], gv[UU];
    for (int u = 0; u < UU; ++u) {
      if (Tail && u >= cnt) {
        v[u + 4] = fv[u] = rv[u] = gv[u] = T(0);
        continue;
      }
      const int q = jb + 2 + u;
      fv[u] = p.f(jb + u);
      rv[u] = p.r(jb + u);
      gv[u] = p.g(jb + u);
      v[u + 4] = (!Tail || q < n) ? in(g, row0 + q, l) : (zero_halo ? T(0) : hi(g, q - n, l));
    }
    for (int q = 0; q < 4; ++q) v[q] = win[q];
    for (int u = 0; u < UU; ++u) {
      if (Tail && u >= cnt) continue;
      const T rhs = c0 * v[u] + c1 * v[u + 1] + c2 * v[u + 2] + c3 * v[u + 3] + c4 * v[u + 4];
      const T d = fv[u] * (rhs - rv[u] * dprev);
      ds[(jb + u) * drow] = d;
      dot += gv[u] * d;
      dprev = d;
    }
    if (!Tail || cnt == UU)
      for (int q = 0; q < 4; ++q) win[q] = v[UU + q];
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& m) const {
    const DistD2Lanes<SZ, W> ln(m.league_rank() * m.team_size() + m.team_rank(), nsys);
    if (ln.nl <= 0) return;
    const int nlc = W == 1 ? 1 : ln.nl;
    const int g = ln.g, l0 = ln.l0, n = p.n;
    T* ds = &out(g, row0, l0);
    size_t drow = SZ;
    if (Scratch) {
      T* sc = static_cast<T*>(m.team_scratch(0).get_shmem(static_cast<size_t>(m.team_size()) * n * sizeof(T)));
      ds = sc + m.team_rank();
      drow = static_cast<size_t>(m.team_size());
    }
    if (copy_ends)
      for (int r = 0; r < 2; ++r)
        for (int l = 0; l < nlc; ++l) {
          first(g, r, l0 + l) = in(g, row0 + r, l0 + l);
          last(g, r, l0 + l) = in(g, row0 + n - 2 + r, l0 + l);
        }
    T dprev[W], dot[W];
    for (int l = 0; l < W; ++l) dprev[l] = dot[l] = 0;
    if (W == 1 && !p.lo_closed && !p.hi_closed) {
      T win[4] = {point(g, l0, -2), point(g, l0, -1), in(g, row0, l0), in(g, row0 + 1, l0)};
      int j = 0;
      constexpr int UF = DistD2FullRows<U>::value;  // rows per block outside the lean stretch
      while (j + UF + 2 <= n) {
        if (j + U + 2 <= n && p.lean(j, j + U - 1)) {
          stream_lean(g, l0, j, ds, drow, win, dprev[0]);
          j += U;
        } else {
          stream<UF, false>(g, l0, j, UF, ds, drow, win, dprev[0], dot[0]);
          j += UF;
        }
      }
      for (; j < n; j += UF) stream<UF, true>(g, l0, j, n - j < UF ? n - j : UF, ds, drow, win, dprev[0], dot[0]);
    } else {
      const int e0 = n < 2 ? n : 2;
      for (int j = 0; j < e0; ++j) edge_row(g, l0, nlc, j, ds, drow, dprev, dot);
      int j = 2;
      if (j < n - 2) {
        T win[4][W] = {};
        if (W == 1)
          for (int q = 0; q < 4; ++q) win[q][0] = point(g, l0, q);
        constexpr int UB = W == 1 ? DistD2FullRows<U>::value : U;  // GPUs: the register budget of the stream
        for (; j + UB <= n - 2; j += UB) bulk<UB>(g, l0, nlc, j, ds, drow, win, dprev, dot);
        for (; j < n - 2; ++j) bulk<1>(g, l0, nlc, j, ds, drow, win, dprev, dot);
      }
      for (j = j > n - 2 ? j : n - 2; j < n; ++j) edge_row(g, l0, nlc, j, ds, drow, dprev, dot);
    }
    if (Local) {
      T s[W];
      for (int l = 0; l < nlc; ++l) {
        s[l] = (dot[l] - P * dprev[l]) * det_inv;
        dprev[l] = (dprev[l] - Q * dot[l]) * det_inv;  // e
      }
      const T none[W] = {};
      DistD2Sweep<T, Mem, W, U>::run(p, ds, drow, &out(g, row0, l0), SZ, nlc, s, dprev, none, none);
    } else {
      for (int l = 0; l < nlc; ++l) {
        bnd(g, 0, l0 + l) = dot[l];
        bnd(g, 1, l0 + l) = dprev[l];
      }
      if (ends_d)
        for (int l = 0; l < nlc; ++l) {
          first(g, 2, l0 + l) = dot[l];
          last(g, 2, l0 + l) = dprev[l];
        }
    }
  }
};

/// How the substitution finds s = x_0 and e = x_{n-1} of each system:
///   s = (bnd(g,0,l) - ps * xs(g, is, l)) * ws,  e = (bnd(g,1,l) - pe * xe(g, ie, l)) * we,
/// which covers the 2x2 systems across both boundaries (xs, xe = the
/// neighbours' boundary rows), the single subdomain's own 2x2 system, and
/// already solved values (ps = pe = 0, ws = we = 1).
template <class T, int SZ, class Mem>
struct DistD2Ends {
  GroupedView<T, SZ, Mem> xs, xe;
  int is = 0, ie = 0;
  T ps = 0, pe = 0, ws = 1, we = 1;
};

/// Substitution (Algorithm 7, as the backward sweep described above), in
/// place. HC: with the halos' share hc (distd2_add_halos) spread over d.
template <class Exec, class T, int SZ, class Mem, int W, int U, bool HC>
struct DistD2SubstituteKernel {
  DistD2Data<T, Mem> p;
  GroupedView<T, SZ, Mem> bnd, out;
  DistD2Ends<T, SZ, Mem> ends;
  int row0, nsys;
  GroupedView<T, SZ, Mem> hc;

  KOKKOS_INLINE_FUNCTION void operator()(const typename Kokkos::TeamPolicy<Exec>::member_type& m) const {
    const DistD2Lanes<SZ, W> ln(distd2_sweep_item(m), nsys);
    if (ln.nl <= 0) return;
    const int nlc = W == 1 ? 1 : ln.nl;
    const int g = ln.g, l0 = ln.l0;
    T s[W], xn[W], h[W] = {};
    for (int l = 0; l < nlc; ++l) {
      s[l] = (bnd(g, 0, l0 + l) - ends.ps * ends.xs(g, ends.is, l0 + l)) * ends.ws;
      xn[l] = (bnd(g, 1, l0 + l) - ends.pe * ends.xe(g, ends.ie, l0 + l)) * ends.we;
      if (HC) h[l] = hc(g, 0, l0 + l);
    }
    T* x = &out(g, row0, l0);
    const T none[W] = {};
    DistD2Sweep<T, Mem, W, U, HC>::run(p, x, SZ, x, SZ, nlc, s, xn, h, none);
  }
};

/// The RHS part of row j from points beyond the subdomain: halo rows
/// lo = (x_{-2}, x_{-1}), hi = (x_n, x_{n+1}).
template <class T>
KOKKOS_INLINE_FUNCTION T distd2_halo_part(const CompactStencil<T>& st, const int j, const int n, const bool lo_closed,
                                          const bool hi_closed, const T lo0, const T lo1, const T hi0, const T hi1) {
  const T* c;
  int o;
  st.window(j, n, lo_closed, hi_closed, c, o);
  T r = 0;
  for (int q = 0; q < 5; ++q) {
    const int i = j + o + q;
    if (c[q] == T(0) || (i >= 0 && i < n)) continue;
    r += c[q] * (i == -2 ? lo0 : (i == -1 ? lo1 : (i == n ? hi0 : hi1)));
  }
  return r;
}

/// The halos' share of a decoupling run with zero halos (linearity: they
/// enter only the RHS of rows 0, 1, n-2, n-1). Per system: the RHS parts
/// of those rows, the forward values' changes dd_0, dd_1 (row 1 is only
/// normalised), dd_{n-3} = w_{n-3} dd_1, dd_{n-2}, dd_{n-1}; then
/// D_0 += g_0 dd_0 + G dd_1 + g_{n-2} dd_{n-2}, D_{n-1} += dd_{n-1},
/// d_{n-2} += dd_{n-2}, and hc = dd_1 for the substitution (d_j += w_j hc).
/// n >= 5 (the four rows distinct, w_{n-3} past row 1).
template <class T, class Mem>
struct DistD2HaloShare {
  T dd1, dd2, dD0, dDn;
  KOKKOS_INLINE_FUNCTION DistD2HaloShare(const DistD2Data<T, Mem>& p, const T lo0, const T lo1, const T hi0,
                                         const T hi1) {
    const int n = p.n;
    auto part = [&](int j) { return distd2_halo_part(p.stencil, j, n, p.lo_closed, p.hi_closed, lo0, lo1, hi0, hi1); };
    const T dd0 = p.f(0) * part(0);
    dd1 = p.f(1) * (part(1) - p.r(1) * dd0);
    const T dd3 = p.w(n - 3) * dd1;
    dd2 = p.f(n - 2) * (part(n - 2) - p.r(n - 2) * dd3);
    dDn = p.f(n - 1) * (part(n - 1) - p.r(n - 1) * dd2);
    dD0 = p.g(0) * dd0 + p.G * dd1 + p.g(n - 2) * dd2 + p.g(n - 1) * dDn;
  }
};

template <class T, int SZ, class Mem>
struct DistD2AddHalosKernel {
  DistD2Data<T, Mem> p;
  GroupedView<T, SZ, Mem> lo, hi, out, bnd, hc;
  int row0, nsys;
  bool copy_bnd = false;  // D_0 -> d_first(g, 0, l), D_{n-1} -> d_last(g, 0, l) too
  GroupedView<T, SZ, Mem> d_first, d_last;

  KOKKOS_INLINE_FUNCTION void operator()(const size_t k) const {
    const int g = static_cast<int>(k / SZ), l = static_cast<int>(k % SZ);
    if (g * SZ + l >= nsys) return;
    const int n = p.n;
    const DistD2HaloShare<T, Mem> h(p, p.lo_closed ? T(0) : lo(g, 0, l), p.lo_closed ? T(0) : lo(g, 1, l),
                                    p.hi_closed ? T(0) : hi(g, 0, l), p.hi_closed ? T(0) : hi(g, 1, l));
    const T D0 = bnd(g, 0, l) + h.dD0;
    const T Dn = bnd(g, 1, l) + h.dDn;
    bnd(g, 0, l) = D0;
    bnd(g, 1, l) = Dn;
    if (copy_bnd) {
      d_first(g, 0, l) = D0;
      d_last(g, 0, l) = Dn;
    }
    out(g, row0 + n - 2, l) += h.dd2;
    hc(g, 0, l) = h.dd1;
  }
};

/// A neighbour's plan entries at the rows that face this subdomain: its
/// first rows (a, b, c, d) = (f_0, f_1, g_0, G) when it is the next
/// subdomain, its last rows (f_{n-2}, r_{n-2}, f_{n-1}, r_{n-1}) when it is
/// the previous one (r_{n-2} multiplies the share that is dropped).
template <class T>
struct DistD2Edges {
  T a = 0, b = 0, c = 0, d = 0;
  T far = 0;  // the neighbour plan's far(): what forming its boundary row here neglects
};

/// DistD2 with one message each way (the MPI layer's one-message mode): the
/// decoupling (zero halos) sent each neighbour this subdomain's two end rows
/// and its interior boundary row (rows 0, 1, 2 of the messages); with the
/// neighbours' messages `from_prev` / `from_next` (extents (nsys, 3)) each
/// system here adds the halos' share to its own D_0, D_{n-1}, forms the
/// neighbours' boundary rows from their interior rows and its own end rows
/// (dropping only the neighbours' far-end shares, below epsilon by
/// DistD2Plan::far()), solves both 2x2 systems and substitutes.
template <class Exec, class T, int SZ, class Mem, int W, int U>
struct DistD2OneMessageKernel {
  DistD2Data<T, Mem> p;
  GroupedView<T, SZ, Mem> in, bnd, out, from_prev, from_next;
  DistD2Edges<T> prev, next;  // prev: its last rows; next: its first rows
  DistD2Ends<T, SZ, Mem> ends;  // ps, ws, pe, we only
  bool has_prev, has_next;
  int row0, nsys;

  KOKKOS_INLINE_FUNCTION void operator()(const typename Kokkos::TeamPolicy<Exec>::member_type& m) const {
    const DistD2Lanes<SZ, W> ln(distd2_sweep_item(m), nsys);
    if (ln.nl <= 0) return;
    const int nlc = W == 1 ? 1 : ln.nl;
    const int g = ln.g, l0 = ln.l0, n = p.n;
    const T* c = p.stencil.interior;
    T s[W], xn[W], h[W], dn2[W];
    for (int l = 0; l < nlc; ++l) {
      const int L = l0 + l;
      const T lo0 = has_prev ? from_prev(g, 0, L) : T(0), lo1 = has_prev ? from_prev(g, 1, L) : T(0);
      const T hi0 = has_next ? from_next(g, 0, L) : T(0), hi1 = has_next ? from_next(g, 1, L) : T(0);
      const DistD2HaloShare<T, Mem> mine(p, lo0, lo1, hi0, hi1);
      T xs = 0, xe = 0;
      if (has_prev) {  // the previous subdomain's D_{n-1}: its interior row + the share of this one's rows 0, 1
        const T u0 = in(g, row0, L), u1 = in(g, row0 + 1, L);
        const T d2 = prev.a * (c[4] * u0);
        xs = from_prev(g, 2, L) + prev.c * ((c[3] * u0 + c[4] * u1) - prev.d * d2);
      }
      if (has_next) {  // the next subdomain's D_0: its interior row + the share of this one's rows n-2, n-1
        const T u2 = in(g, row0 + n - 2, L), u1 = in(g, row0 + n - 1, L);
        const T d0 = next.a * (c[0] * u2 + c[1] * u1), d1 = next.b * (c[0] * u1);
        xe = from_next(g, 2, L) + next.c * d0 + next.d * d1;
      }
      s[l] = (bnd(g, 0, L) + mine.dD0 - ends.ps * xs) * ends.ws;
      xn[l] = (bnd(g, 1, L) + mine.dDn - ends.pe * xe) * ends.we;
      h[l] = mine.dd1;
      dn2[l] = mine.dd2;
    }
    T* x = &out(g, row0, l0);
    DistD2Sweep<T, Mem, W, U, true>::run(p, x, SZ, x, SZ, nlc, s, xn, h, dn2);
  }
};

/// dst(s, dst_row + q) = src(s, (src_row + q) mod src.n()), q < count.
template <class T, int SZ, class Mem>
struct DistD2CopyRows {
  GroupedView<T, SZ, Mem> src, dst;
  int src_row, dst_row, count, nsys;
  KOKKOS_INLINE_FUNCTION void operator()(const size_t k) const {
    const int l = static_cast<int>(k % SZ);
    const int q = static_cast<int>((k / SZ) % count);
    const int g = static_cast<int>(k / (static_cast<size_t>(SZ) * count));
    if (g * SZ + l >= nsys) return;
    const int n = static_cast<int>(src.extent(1));
    int r = (src_row + q) % n;
    r = r < 0 ? r + n : r;
    dst(g, dst_row + q, l) = src(g, r, l);
  }
};

/// Rows streamed per block by the DistD2 kernels on GPUs (loads in flight).
#ifndef KBAND_DISTD2_UNROLL
#define KBAND_DISTD2_UNROLL 16
#endif

}  // namespace impl
}  // namespace kband
