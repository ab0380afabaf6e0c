// Kernels of the shared-matrix pentadiagonal solve (kband::penta with a
// PentadiagonalFactor) that store no intermediate row in memory, so that a
// solve moves little more than the right-hand sides in and the solutions out.
// They run the recurrences of kband_Penta_impl.hpp:
//   z_j = (y_j - a_j z_{j-2} - beta_j z_{j-1}) w_j     (forward, L z = y)
//   x_j = z_j - p_j x_{j+1} - q_j x_{j+2}               (backward, U x = z)
// and the periodic correction x -= (H^-1 (g1.y, g2.y)) . (z1, z2).
//
//  * Registers (PentaSharedRegisters): the Thomas Registers design
//    (kband_ThomasRegisters_impl.hpp) with a state of two values. Each
//    system is cut into K chunks of M rows, a thread per chunk holding its
//    rows in registers. A chunk maps the two values entering it to the two
//    leaving it by an affine map of R^2, out = Y + G in, where G (2x2) comes
//    from the matrix alone: the factor holds every chunk's G and the products
//    of G a Hillis-Steele scan needs (PentaFactorData::tf, tb), so the scan
//    over the chunks (team scratch) carries only Y. It gives each chunk the
//    exact state it starts from; a row then adds its response to that state
//    (PentaFactorData::hf, hb) to the value it got from a zero state, as the
//    Thomas kernels do. Forward from the first chunk, backward from the last.
//  * Recompute (PentaSharedRecompute): a thread per system, the forward pass
//    twice. Pass 1 streams y and keeps z at the first two rows of every block
//    of B rows, in x; pass 2 walks the blocks from the last one down, reads a
//    block's two checkpoints and the rest of its y, recomputes its z in
//    registers and runs the backward pass into x. A solve reads y twice and
//    writes x once (plus 4/B of an array for the checkpoints). In-place
//    solves work: pass 2 never needs y at a block's first two rows.
#pragma once

#include "kband_Penta_impl.hpp"
#include "kband_ThomasRegisters_impl.hpp"

namespace kband {
namespace impl {

/// The part of a chunk's affine map that depends on the right-hand side:
/// out = (y0, y1) + G in, G from the factor's tables; with Dot, two sums
/// (d0, d1) that add up.
template <class T, bool Dot = false>
struct Vec2Sum {
  T y0, y1, d0, d1;
  static constexpr int kT = Dot ? 4 : 2, kI = 0;
  KOKKOS_INLINE_FUNCTION void put(T* t, int*, int ts, int slot) const {
    t[slot] = y0;
    t[ts + slot] = y1;
    if (Dot) {
      t[2 * ts + slot] = d0;
      t[3 * ts + slot] = d1;
    }
  }
  KOKKOS_INLINE_FUNCTION void get(const T* t, const int*, int ts, int slot) {
    y0 = t[slot];
    y1 = t[ts + slot];
    d0 = Dot ? t[2 * ts + slot] : T(0);
    d1 = Dot ? t[3 * ts + slot] : T(0);
  }
};

/// Joins chunk k's summary l with the one 2^r chunks away, e: l + G e, G
/// the product of the maps of the 2^r chunks l covers (table row r).
/// The table row of round r is loaded before the barrier ahead of the round.
template <class T>
struct TableJoin {
  const T* tab;
  int K, k;
  T g0 = T(0), g1 = T(0), g2 = T(0), g3 = T(0);
  KOKKOS_INLINE_FUNCTION TableJoin(const T* t, int K_, int k_) : tab(t), K(K_), k(k_) {}
  KOKKOS_INLINE_FUNCTION void ahead(int r, bool used) {
    if (used) {
      const T* g = tab + (static_cast<size_t>(r) * K + k) * 4;
      g0 = g[0], g1 = g[1], g2 = g[2], g3 = g[3];
    }
  }
  template <bool Dot>
  KOKKOS_INLINE_FUNCTION Vec2Sum<T, Dot> operator()(const Vec2Sum<T, Dot>& l, const Vec2Sum<T, Dot>& e,
                                                    int) const {
    return {l.y0 + g0 * e.y0 + g1 * e.y1, l.y1 + g2 * e.y0 + g3 * e.y1, l.d0 + e.d0, l.d1 + e.d1};
  }
};

// ---------------------------------------------------------------------------
// Registers: a team of P systems, K chunks of M rows each, a thread per chunk.
// ---------------------------------------------------------------------------
template <class Exec, class T, class Mem, class BY, class BX, class Info, int M, bool Periodic>
struct PentaSharedRegisters
    : SharedRegistersLoop<PentaSharedRegisters<Exec, T, Mem, BY, BX, Info, M, Periodic>, Exec, T, M> {
  using Loop = SharedRegistersLoop<PentaSharedRegisters, Exec, T, M>;
  using Base = RegisterBase<Exec, T, M>;
  using typename Base::member_type;
  using Place = typename Base::Place;
  PentaFactorData<T, Mem> f;
  BY y;
  BX x;
  Info info;

  PentaSharedRegisters(const Base& b, const PentaFactorData<T, Mem>& f_, BY y_, BX x_, Info info_)
      : Loop(b), f(f_), y(y_), x(x_), info(info_) {}
  KOKKOS_INLINE_FUNCTION const BY& rhs() const { return y; }

  using Sum = Vec2Sum<T, Periodic>;
  static constexpr size_t kEntry = scan_entry<T, Sum>();
  static constexpr int kSystemsPerTeam = 16;
  // interleaved and grouped batches: at least 128 threads, so 32 systems a
  // team for n <= 64 (H100, double, t/copy at n = 64, interleaved / grouped:
  // 1.15-1.17 / 0.99-1.02 with 128 threads against 1.28 / 1.02-1.07 with 64)
  static constexpr int kMinTeamStrided = 128;
  static constexpr bool kAutoContiguous = false;
  // Auto: up to 8 chunks (n <= 128). H100, double, 2^27 points, t/copy
  // interleaved / grouped: n = 64 1.15 / 0.98, n = 128 1.26 / 1.03. At
  // n = 256 Registers wins on grouped batches only (1.47-1.51 against
  // Recompute's 1.52-1.57), at n = 512 Recompute everywhere (1.61-1.71
  // against 2.02-2.41)
  static constexpr int kAutoChunks = 8;
  static constexpr int kAutoChunksInterleaved = kAutoChunks;
  KOKKOS_INLINE_FUNCTION static size_t scratch_per_thread() { return 4 * kEntry; }

  KOKKOS_INLINE_FUNCTION void solve(const member_type& m, const Place& pl, char* raw, int j0, int nr,
                                    T (&v)[M]) const {
    // forward pass of the chunk from z_{j0-1} = z_{j0-2} = 0
    Sum fw{T(0), T(0), T(0), T(0)};
    {
      T z1 = T(0), z2 = T(0);
KBAND_UNROLL
      for (int u = 0; u < M; ++u)
        if (u < nr) {
          const int j = j0 + u;
          if (Periodic) {
            fw.d0 += f.g1(j) * v[u];
            fw.d1 += f.g2(j) * v[u];
          }
          const T z = (v[u] - f.a(j) * z2 - f.beta(j) * z1) * f.w(j);
          z2 = z1, z1 = z;
          v[u] = z;
        }
      fw.y0 = z1, fw.y1 = z2;
    }
    const Sum zero{T(0), T(0), T(0), T(0)};
    Sum in, all;
    this->template scan<false>(m, pl, Base::region(m, raw, 0, kEntry), kEntry, fw, zero, in, all,
                               TableJoin<T>(f.tf.data(), this->K, pl.k));
    // z from the state the chunk starts from: each row moves with it by the
    // factor's hf
    if (this->K > 1) {
KBAND_UNROLL
      for (int u = 0; u < M; ++u)
        if (u < nr) {
          const int j = j0 + u;
          v[u] += f.hf(2 * j) * in.y0 + f.hf(2 * j + 1) * in.y1;
        }
    }
    // Woodbury weights from the dot products over the whole system
    T wt0 = T(0), wt1 = T(0);
    if (Periodic) {
      wt0 = f.hinv(0) * all.d0 + f.hinv(1) * all.d1;
      wt1 = f.hinv(2) * all.d0 + f.hinv(3) * all.d1;
    }
    // backward pass of the chunk from x_{j0+nr} = x_{j0+nr+1} = 0
    Vec2Sum<T> bw{T(0), T(0), T(0), T(0)};
    {
      T x1 = T(0), x2 = T(0);
KBAND_UNROLL
      for (int u = M - 1; u >= 0; --u)
        if (u < nr) {
          const int j = j0 + u;
          const T xj = v[u] - f.p(j) * x1 - f.q(j) * x2;
          x2 = x1, x1 = xj;
          v[u] = xj;
        }
      bw.y0 = x1, bw.y1 = x2;
    }
    const Vec2Sum<T> xzero{T(0), T(0), T(0), T(0)};
    Vec2Sum<T> xin, xall;
    this->template scan<true>(m, pl, Base::region(m, raw, 1, kEntry), kEntry, bw, xzero, xin, xall,
                              TableJoin<T>(f.tb.data(), this->K, pl.k));
    if (!pl.live) return;
    // the final values first, then the stores (no load waits behind a store)
    if (this->K > 1) {
KBAND_UNROLL
      for (int u = 0; u < M; ++u)
        if (u < nr) {
          const int j = j0 + u;
          v[u] += f.hb(2 * j) * xin.y0 + f.hb(2 * j + 1) * xin.y1;
        }
    }
    if (Periodic) {
KBAND_UNROLL
      for (int u = 0; u < M; ++u)
        if (u < nr) v[u] -= wt0 * f.z1(j0 + u) + wt1 * f.z2(j0 + u);
    }
    T* xp = &x(pl.s, j0);
    const size_t xrs = batch_traits<BX>::row_stride(x);
KBAND_UNROLL
    for (int u = 0; u < M; ++u)
      if (u < nr) xp[u * xrs] = v[u];
    if (pl.k == 0) info(pl.s) = 0;
  }
};

// ---------------------------------------------------------------------------
// Recompute: a thread per system (W lanes on CPUs), blocks of B rows.
// ---------------------------------------------------------------------------
template <class Exec, class T, class Mem, class BY, class BX, class Info, int W, int B, bool Periodic>
struct PentaSharedRecompute : ThomasBase<Exec, BX, T, W> {
  static_assert(B >= 2, "kband: a Recompute block keeps two checkpoint rows");
  using Base = ThomasBase<Exec, BX, T, W>;
  using typename Base::member_type;
  using Rows = SharedRows<T>;
  using Block = typename RecomputeBlocks<T, W, B>::Block;
  PentaFactorData<T, Mem> f;
  BY y;
  BX x;
  Info info;

  PentaSharedRecompute(const Base& base, const PentaFactorData<T, Mem>& f_, BY y_, BX x_, Info info_)
      : Base(base), f(f_), y(y_), x(x_), info(info_) {}

  KOKKOS_FUNCTION void operator()(const member_type& m) const { this->by_lanes(*this, m); }

  // Each pass loads the next block's rows before it stores anything of the
  // current one (x may be y), so two blocks' loads are in flight per thread.
  template <int NL>
  KOKKOS_INLINE_FUNCTION void solve(const member_type&, const int s0, const int nl) const {
    const int nlc = NL > 0 ? NL : nl;
    const int n = this->n;
    if (factor_failed(f, x, info, s0, nlc, n, this->nan)) return;
    const Rows r = shared_rows<T>(y, x, s0);
    const int nb = (n + B - 1) / B;
    T z1[W], z2[W], dot0[W], dot1[W];
    for (int l = 0; l < nlc; ++l) z1[l] = z2[l] = dot0[l] = dot1[l] = T(0);
    Block cur, next;
    load(r, 0, nlc, false, cur);
    for (int k = 0; k < nb; ++k) {
      if (k + 1 < nb) load(r, (k + 1) * B, nlc, false, next);
      forward(r, k * B, nlc, cur, z1, z2, dot0, dot1);
      if (k + 1 < nb) copy(next, cur, nlc);
    }
    T wt0[W], wt1[W];
    for (int l = 0; l < nlc; ++l) {
      wt0[l] = Periodic ? f.hinv(0) * dot0[l] + f.hinv(1) * dot1[l] : T(0);
      wt1[l] = Periodic ? f.hinv(2) * dot0[l] + f.hinv(3) * dot1[l] : T(0);
      z1[l] = z2[l] = T(0);  // now x_{j+1}, x_{j+2}: zero past the last row
    }
    load(r, (nb - 1) * B, nlc, true, cur);
    for (int k = nb - 1; k >= 0; --k) {
      if (k > 0) load(r, (k - 1) * B, nlc, true, next);
      backward(r, k * B, nlc, cur, z1, z2, wt0, wt1);
      if (k > 0) copy(next, cur, nlc);
    }
    for (int l = 0; l < nlc; ++l) info(s0 + l) = 0;
  }

  KOKKOS_INLINE_FUNCTION int rows(int jb) const { return this->n - jb < B ? this->n - jb : B; }

  /// The block's right-hand sides; pass 2 (`checkpoint`) takes its first two
  /// rows from x, where pass 1 left z.
  KOKKOS_INLINE_FUNCTION void load(const Rows& r, int jb, int nlc, bool checkpoint, Block& v) const {
    RecomputeBlocks<T, W, B>::template load<2>(r, jb, rows(jb), nlc, checkpoint, v);
  }
  KOKKOS_INLINE_FUNCTION static void copy(const Block& from, Block& to, int nlc) {
    RecomputeBlocks<T, W, B>::copy(from, to, nlc);
  }

  /// Pass 1 over the block at row jb: z through the block, its first two
  /// rows into x.
  KOKKOS_INLINE_FUNCTION void forward(const Rows& r, int jb, int nlc, const Block& yv, T (&z1)[W], T (&z2)[W],
                                      T (&dot0)[W], T (&dot1)[W]) const {
    const int nr = rows(jb);
    T c0[W], c1[W];
KBAND_UNROLL
    for (int u = 0; u < B; ++u)
      if (u < nr) {
        const T a = f.a(jb + u), bt = f.beta(jb + u), w = f.w(jb + u);
        const T g1 = Periodic ? f.g1(jb + u) : T(0), g2 = Periodic ? f.g2(jb + u) : T(0);
        for (int l = 0; l < nlc; ++l) {
          const T z = (yv[u][l] - a * z2[l] - bt * z1[l]) * w;
          z2[l] = z1[l], z1[l] = z;
          if (Periodic) dot0[l] += g1 * yv[u][l], dot1[l] += g2 * yv[u][l];
          if (u == 0) c0[l] = z;
          if (u == 1) c1[l] = z;
        }
      }
    T* xp = r.x + jb * r.xrs;
    for (int l = 0; l < nlc; ++l) {
      xp[l * r.xls] = c0[l];
      if (nr > 1) xp[r.xrs + l * r.xls] = c1[l];
    }
  }

  /// Pass 2 over the block at row jb: its z again (from the checkpoints in
  /// rows 0 and 1), then x from the bottom up.
  KOKKOS_INLINE_FUNCTION void backward(const Rows& r, int jb, int nlc, Block& v, T (&x1)[W], T (&x2)[W],
                                       const T (&wt0)[W], const T (&wt1)[W]) const {
    const int nr = rows(jb);
KBAND_UNROLL
    for (int u = 2; u < B; ++u)
      if (u < nr) {
        const T a = f.a(jb + u), bt = f.beta(jb + u), w = f.w(jb + u);
        for (int l = 0; l < nlc; ++l) v[u][l] = (v[u][l] - a * v[u - 2][l] - bt * v[u - 1][l]) * w;
      }
KBAND_UNROLL
    for (int u = B - 1; u >= 0; --u)
      if (u < nr) {
        const int j = jb + u;
        const T p = f.p(j), q = f.q(j);
        const T c1 = Periodic ? f.z1(j) : T(0), c2 = Periodic ? f.z2(j) : T(0);
        for (int l = 0; l < nlc; ++l) {
          const T xj = v[u][l] - p * x1[l] - q * x2[l];
          x2[l] = x1[l], x1[l] = xj;
          r.x[j * r.xrs + l * r.xls] = Periodic ? xj - wt0[l] * c1 - wt1[l] * c2 : xj;
        }
      }
  }
};

}  // namespace impl
}  // namespace kband
