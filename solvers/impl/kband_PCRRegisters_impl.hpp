// Kernels of the Registers variant of kband::pcr: PCR on the partitioned
// system ("Thomas-PCR", after Laszlo, Giles and Appleyard).
//
// Each system is cut into K chunks of M consecutive rows (M a compile-time
// constant, so that a chunk's rows live in registers). A thread eliminates
// the interior of its chunk with one downward and one upward sweep; every row
// j of the chunk then reads
//
//     a'_j x_first + x_j + c'_j x_last = d'_j,
//
// and the chunk's first and last rows couple only to the neighbouring
// chunks' last and first rows. Those 2K rows form a tridiagonal system, kept
// in team scratch at a unit diagonal: one step of cyclic reduction
// eliminates the last rows from the first rows, PCR solves the K first rows
// in ceil(log2 K) steps (one row per thread and step), and each thread then
// substitutes its last row and its interior rows. A solve reads a, b, c, d
// once and writes x once, and only the 2K reduced rows (three values each,
// double-buffered) go through scratch.
//
// Rows past n are identity rows, so any n works. A team holds P systems of
// Kt threads each; a thread takes the chunks k, k + Kt, ... of its system
// (V = ceil(K / Kt) of them). With one chunk per thread (GPUs) the chunk stays
// in registers across the PCR; with several (host backends, whose teams have
// one thread) it is loaded and reduced again before the substitution, so the
// inputs are read twice.
//
// No pivoting: stable for diagonally dominant systems, like kband::pcr's
// Scratch variant. A zero or non-finite pivot (of a sweep or of the reduced
// system) sets info to the 1-based row it belongs to and x to NaN.
#pragma once

#include "kband_PCR_impl.hpp"
#include "kband_Thomas_impl.hpp"

namespace kband {
namespace impl {

/// Launch geometry of a Registers-variant pcr.
struct PCRRegisterGeometry {
  int nsys = 0, n = 0;
  int M = 0;   // rows per chunk
  int K = 0;   // chunks per system
  int Kt = 0;  // threads per system
  int V = 0;   // chunks per thread
  int P = 0;   // systems per team
  int team_size = 0;
  int league = 0;
  bool chunk_fastest = true;  // thread = p*Kt + r (contiguous batches) or r*P + p
  int scratch_level = 0;
  size_t scratch_bytes = 0;
};

template <class Exec, class BA, class BB, class BC, class BD, class BX, class Info, int M>
struct PCRRegisters {
  static_assert(M >= 3, "kband: the chunk sweeps need at least 3 rows per chunk");
  static constexpr int kRows = M;
  using T = batch_value_t<BX>;
  using member_type = typename Kokkos::TeamPolicy<Exec>::member_type;
  BA a;
  BB b;
  BC c;
  BD d;
  BX x;
  Info info;
  PCRRegisterGeometry g;
  T nan;

  /// Team scratch: two buffers of three arrays (a, c, d of the reduced rows)
  /// of 2 P K values each, then P ints (first failed row per system). The
  /// PCR of the first rows alternates between the buffers' first-row slots.
  KOKKOS_INLINE_FUNCTION static size_t scratch_bytes(int P, int K) {
    return static_cast<size_t>(12) * P * K * sizeof(T) + static_cast<size_t>(P) * sizeof(int) + 16;
  }

  struct Rows {
    T a[M], b[M], c[M], d[M];
  };

  KOKKOS_INLINE_FUNCTION void load(bool live, int s, int j0, int nr, Rows& r) const {
    const int n = g.n;
    const T* ap = live ? &a(s, j0) : nullptr;
    const T* bp = live ? &b(s, j0) : nullptr;
    const T* cp = live ? &c(s, j0) : nullptr;
    const T* dp = live ? &d(s, j0) : nullptr;
    const size_t ars = batch_traits<BA>::row_stride(a), brs = batch_traits<BB>::row_stride(b);
    const size_t crs = batch_traits<BC>::row_stride(c), drs = batch_traits<BD>::row_stride(d);
KBAND_UNROLL
    for (int u = 0; u < M; ++u) {
      const bool in = live && u < nr;
      // a(s,0) and c(s,n-1) lie outside the matrix: not read
      r.a[u] = in && j0 + u > 0 ? ap[u * ars] : T(0);
      r.b[u] = in ? bp[u * brs] : T(1);
      r.c[u] = in && j0 + u < n - 1 ? cp[u * crs] : T(0);
      r.d[u] = in ? dp[u * drs] : T(0);
    }
  }

  /// The chunk's two sweeps, in place: afterwards row u reads
  /// a[u] x_first + x_u + c[u] x_last = d[u] for 0 < u < M-1, while row 0
  /// couples to the previous chunk's last row through a[0] and row M-1 to
  /// the next chunk's first row through c[M-1]. Returns the first row (1-based)
  /// with an unusable pivot, 0 if none.
  KOKKOS_INLINE_FUNCTION static int sweep(Rows& r, int j0) {
    int bad = 0;
    // rows 0 and 1: scaled to a unit diagonal (row 1 keeps its coupling to x_0)
KBAND_UNROLL
    for (int u = 0; u < 2; ++u) {
      if (bad == 0 && !usable_pivot(r.b[u])) bad = j0 + u + 1;
      const T w = T(1) / r.b[u];
      r.a[u] *= w;
      r.c[u] *= w;
      r.d[u] *= w;
    }
    // downward: eliminate x_{u-1}, keeping the fill-in on x_0
KBAND_UNROLL
    for (int u = 2; u < M; ++u) {
      const T piv = r.b[u] - r.a[u] * r.c[u - 1];
      if (bad == 0 && !usable_pivot(piv)) bad = j0 + u + 1;
      const T w = T(1) / piv;
      r.d[u] = (r.d[u] - r.a[u] * r.d[u - 1]) * w;
      r.a[u] = -r.a[u] * r.a[u - 1] * w;
      r.c[u] *= w;
    }
    // upward: eliminate x_{u+1}, keeping the fill-in on x_{M-1}
KBAND_UNROLL
    for (int u = M - 3; u >= 1; --u) {
      r.d[u] -= r.c[u] * r.d[u + 1];
      r.a[u] -= r.c[u] * r.a[u + 1];
      r.c[u] = -r.c[u] * r.c[u + 1];
    }
    // row 0: x_1 replaced by row 1's expression in x_0 and x_{M-1}
    const T piv = T(1) - r.c[0] * r.a[1];
    if (bad == 0 && !usable_pivot(piv)) bad = j0 + 1;
    const T w = T(1) / piv;
    r.d[0] = (r.d[0] - r.c[0] * r.d[1]) * w;
    r.a[0] *= w;
    r.c[0] = -r.c[0] * r.c[1] * w;
    return bad;
  }

  /// Slot of reduced row h (0: first, 1: last) of chunk k of system p.
  KOKKOS_INLINE_FUNCTION int slot(int p, int k, int h) const {
    const int pk = g.P * g.K;
    return h * pk + (g.chunk_fastest ? p * g.K + k : k * g.P + p);
  }

  /// One PCR update of a reduced row (a, c, d) from its neighbours lo and hi
  /// (unit diagonals); returns the new diagonal before scaling.
  KOKKOS_INLINE_FUNCTION static T pcr_update(T& a, T& c, T& d, bool has_lo, T al, T cl, T dl, bool has_hi, T ah,
                                             T ch, T dh) {
    T bn = T(1), an = T(0), cn = T(0);
    if (has_lo) {
      bn -= a * cl;
      an = -a * al;
      d -= a * dl;
    }
    if (has_hi) {
      bn -= c * ah;
      cn = -c * ch;
      d -= c * dh;
    }
    const T w = T(1) / bn;
    a = an * w;
    c = cn * w;
    d *= w;
    return bn;
  }

  KOKKOS_FUNCTION void operator()(const member_type& m) const {
    const int n = g.n, K = g.K, Kt = g.Kt, V = g.V, P = g.P;
    const int t = m.team_rank();
    const int p = g.chunk_fastest ? t / Kt : t % P;
    const int r0 = g.chunk_fastest ? t % Kt : t / P;
    const int s = m.league_rank() * P + p;
    const bool mine = p < P;  // every thread is, with team_size = P * Kt
    const bool live = mine && s < g.nsys;
    const int pk2 = 2 * P * K;  // values per array
    T* S = align_ptr<T>(static_cast<char*>(m.team_scratch(g.scratch_level).get_shmem(scratch_bytes(P, K))));
    int* badp = reinterpret_cast<int*>(S + 6 * pk2);
    auto arr = [&](int buf, int comp) { return S + (3 * buf + comp) * pk2; };
    // chunk k's first row sits at slot(p, k, 0), its last at slot(p, k, 1)
    auto put = [&](int buf, int at, T av, T cv, T dv) {
      arr(buf, 0)[at] = av;
      arr(buf, 1)[at] = cv;
      arr(buf, 2)[at] = dv;
    };
    auto fail = [&](int k) { Kokkos::atomic_fetch_min(badp + p, k * M + 1); };
    if (mine && r0 == 0) badp[p] = n + 1;
    Rows rw;
    int mybad = 0;
    // 1. sweeps; the chunks' first and last rows go to buffer 0
    for (int v = 0; v < V; ++v) {
      const int k = r0 + v * Kt;
      if (!mine || k >= K) break;
      const int j0 = k * M, nr = n - j0 < M ? n - j0 : M;
      load(live, s, j0, nr, rw);
      const int bad = sweep(rw, j0);
      if (bad != 0 && (mybad == 0 || bad < mybad)) mybad = bad;
      put(0, slot(p, k, 0), rw.a[0], rw.c[0], rw.d[0]);
      put(0, slot(p, k, 1), rw.a[M - 1], rw.c[M - 1], rw.d[M - 1]);
    }
    m.team_barrier();
    if (mybad != 0) Kokkos::atomic_fetch_min(badp + p, mybad);
    // 2. one step of cyclic reduction: the last rows are eliminated from the
    // first rows (buffer 0 -> buffer 1); the last rows stay in buffer 0
    for (int v = 0; v < V; ++v) {
      const int k = r0 + v * Kt;
      if (!mine || k >= K) break;
      const int f = slot(p, k, 0), l = slot(p, k, 1), lm = k > 0 ? slot(p, k - 1, 1) : l;
      T a0 = arr(0, 0)[f], c0 = arr(0, 1)[f], d0 = arr(0, 2)[f];
      const T bn = pcr_update(a0, c0, d0, k > 0, arr(0, 0)[lm], arr(0, 1)[lm], arr(0, 2)[lm], true, arr(0, 0)[l],
                              arr(0, 1)[l], arr(0, 2)[l]);
      if (!usable_pivot(bn)) fail(k);
      put(1, f, a0, c0, d0);
    }
    m.team_barrier();
    // 3. PCR on the K first rows, between the buffers' first-row slots
    int cur = 1;
    for (int st = 1; st < K; st *= 2) {
      for (int v = 0; v < V; ++v) {
        const int k = r0 + v * Kt;
        if (!mine || k >= K) break;
        const int f = slot(p, k, 0);
        const bool has_lo = k - st >= 0, has_hi = k + st < K;
        const int lo = slot(p, has_lo ? k - st : k, 0), hi = slot(p, has_hi ? k + st : k, 0);
        const T* A0 = arr(cur, 0);
        const T* C0 = arr(cur, 1);
        const T* D0 = arr(cur, 2);
        T a0 = A0[f], c0 = C0[f], d0 = D0[f];
        const T bn = pcr_update(a0, c0, d0, has_lo, A0[lo], C0[lo], D0[lo], has_hi, A0[hi], C0[hi], D0[hi]);
        if (!usable_pivot(bn)) fail(k);
        put(1 - cur, f, a0, c0, d0);
      }
      cur = 1 - cur;
      m.team_barrier();
    }
    // 4. substitution: the last rows from the first rows, then the interiors
    if (!live) return;
    const int sb = badp[p];
    const T* XF = arr(cur, 2);
    const size_t xrs = batch_traits<BX>::row_stride(x);
    for (int v = 0; v < V; ++v) {
      const int k = r0 + v * Kt;
      if (k >= K) break;
      const int j0 = k * M, nr = n - j0 < M ? n - j0 : M;
      if (V > 1) {
        load(live, s, j0, nr, rw);
        sweep(rw, j0);
      }
      const T xf = XF[slot(p, k, 0)];
      const T xn = k + 1 < K ? XF[slot(p, k + 1, 0)] : T(0);
      const T xl = rw.d[M - 1] - rw.a[M - 1] * xf - rw.c[M - 1] * xn;
      T* xp = &x(s, j0);
KBAND_UNROLL
      for (int u = 0; u < M; ++u)
        if (u < nr) {
          const T xu = u == 0 ? xf : (u == M - 1 ? xl : rw.d[u] - rw.a[u] * xf - rw.c[u] * xl);
          xp[u * xrs] = sb <= n ? nan : xu;
        }
    }
    if (r0 == 0) info(s) = sb <= n ? sb : 0;
  }
};

/// One coefficient vector read as a batch whose systems all share it (the
/// shared-matrix solve runs the per-system kernel on it: the coefficients
/// come from cache, only d and x from memory).
template <class T, class Mem>
struct Broadcast {
  Kokkos::View<const T*, Mem> v;
  KOKKOS_INLINE_FUNCTION const T& operator()(int, int j) const { return v(j); }
};
template <class T, class Mem>
struct batch_traits<Broadcast<T, Mem>, void> {
  using value_type = T;
  KOKKOS_INLINE_FUNCTION static size_t row_stride(const Broadcast<T, Mem>& b) { return b.v.stride_0(); }
};

/// The shared-matrix solve: the per-system kernel on broadcast coefficients,
/// after the factor's own verdict (a failed factor fills x with NaN and sets
/// info to its row, as kband::pcr's Scratch variant does).
template <class Exec, class T, class Mem, class BD, class BX, class Info, int M>
struct PCRSharedRegisters
    : PCRRegisters<Exec, Broadcast<T, Mem>, Broadcast<T, Mem>, Broadcast<T, Mem>, BD, BX, Info, M> {
  using Base = PCRRegisters<Exec, Broadcast<T, Mem>, Broadcast<T, Mem>, Broadcast<T, Mem>, BD, BX, Info, M>;
  using typename Base::member_type;
  Kokkos::View<const int, Mem> finfo;

  PCRSharedRegisters(const Base& b, Kokkos::View<const int, Mem> fi) : Base(b), finfo(fi) {}

  KOKKOS_FUNCTION void operator()(const member_type& m) const {
    const int fi = finfo();  // the same for the whole team: no barrier is skipped by some only
    if (fi == 0) {
      Base::operator()(m);
      return;
    }
    const auto& g = this->g;
    const int t = m.team_rank();
    const int p = g.chunk_fastest ? t / g.Kt : t % g.P;
    const int r0 = g.chunk_fastest ? t % g.Kt : t / g.P;
    const int s = m.league_rank() * g.P + p;
    if (p >= g.P || s >= g.nsys) return;
    for (int k = r0; k < g.K; k += g.Kt)
      for (int j = k * M; j < (k + 1) * M && j < g.n; ++j) this->x(s, j) = this->nan;
    if (r0 == 0) this->info(s) = fi;
  }
};

/// Rows per chunk of the Registers variant of pcr.
#ifndef KBAND_PCR_ROWS
#define KBAND_PCR_ROWS 8
#endif
constexpr int kPCRRegisterRows = KBAND_PCR_ROWS;
/// Threads per team the Registers variant aims at on GPUs (a team holds
/// whole systems, so long systems get more).
#ifndef KBAND_PCR_TEAM
#define KBAND_PCR_TEAM 64
#endif

}  // namespace impl
}  // namespace kband
