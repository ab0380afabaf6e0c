// Kernels of the batched Thomas solvers (kband::thomas, kband::periodic_thomas).
//
// One kernel source serves every layout and backend. Each thread of a team owns
// W consecutive systems ("lanes"): W = 1 on GPUs (one system per thread, the
// grouped and interleaved layouts then coalesce across a warp) and W = SZ or 8
// on CPUs, where the inner lane loop is unit-stride and vectorises (contiguous
// batches: 8 lanes n apart for shared-coefficient solves, else 1; see
// thomas_lanes). A thread with all W lanes runs a compile-time lane count, the
// last, partial one a runtime count (CPUs only). Forward-pass
// intermediates live either in team scratch memory (Scratch) or in the output
// and a workspace (Global); only where they live differs. Shared-factor
// solves may also store none and recompute them (Recompute, below).
#pragma once

#include <cstdint>

#include "kband_Layouts.hpp"

// Full unrolling of the fixed-length row loops keeps a thread's rows in
// registers (device compilers); host compilers need no hint.
// KBAND_UNROLL_COUNT(n): unroll n times (an integral constant expression,
// which may depend on template parameters; 1: not at all).
#define KBAND_PRAGMA(x) _Pragma(#x)
#if defined(__CUDACC__) || defined(__HIPCC__)
#define KBAND_UNROLL _Pragma("unroll")
#define KBAND_UNROLL_COUNT(n) KBAND_PRAGMA(unroll n)
#else
#define KBAND_UNROLL
#define KBAND_UNROLL_COUNT(n)
#endif

namespace kband {
namespace impl {

/// M consecutive rows of one tridiagonal system, in registers (the chunk of
/// the Registers kernels of thomas and pcr).
template <class T, int M>
struct ChunkRows {
  T a[M], b[M], c[M], d[M];
};

/// W values of T in one aligned 16-byte access (W = 1: no such access).
template <class T>
struct Pack16 {
  static constexpr int W = sizeof(T) < 16 && 16 % sizeof(T) == 0 ? static_cast<int>(16 / sizeof(T)) : 1;
  struct alignas(16) type {
    T v[W];
  };
  KOKKOS_INLINE_FUNCTION static bool aligned(const void* p) {
    return W > 1 && (reinterpret_cast<uintptr_t>(p) & 15) == 0;
  }
};

/// Loads rows j0 .. j0+nr-1 of system s (of n rows) into r; the rest of the
/// chunk, and every row when !live, become identity rows (b = 1, a = c = d =
/// 0). a(s,0) and c(s,n-1) lie outside the matrix and are not used. A full
/// chunk of unit-stride rows at 16-byte aligned addresses (contiguous
/// batches) is read 16 bytes at a time: a GPU warp then asks for half or a
/// quarter as many cache lines per load (those loads read a(s,0) and
/// c(s,n-1) too, and drop them). One test covers all four arrays: written
/// as four load_rows calls, each with its own test, pcr ran 2-2.5x slower
/// on the H100.
template <int M, class T, class BA, class BB, class BC, class BD>
KOKKOS_INLINE_FUNCTION void load_chunk(const BA& a, const BB& b, const BC& c, const BD& d, bool live, int s, int j0,
                                       int nr, int n, ChunkRows<T, M>& r) {
  const T* ap = live ? &a(s, j0) : nullptr;
  const T* bp = live ? &b(s, j0) : nullptr;
  const T* cp = live ? &c(s, j0) : nullptr;
  const T* dp = live ? &d(s, j0) : nullptr;
  const size_t ars = batch_traits<BA>::row_stride(a), brs = batch_traits<BB>::row_stride(b);
  const size_t crs = batch_traits<BC>::row_stride(c), drs = batch_traits<BD>::row_stride(d);
  using PK = Pack16<T>;
  constexpr int W = M % PK::W == 0 ? PK::W : 1;
  if (W > 1 && live && nr == M && ars == 1 && brs == 1 && crs == 1 && drs == 1 && PK::aligned(ap) &&
      PK::aligned(bp) && PK::aligned(cp) && PK::aligned(dp)) {
    using V = typename PK::type;
KBAND_UNROLL
    for (int u = 0; u < M; u += W) {
      const V va = *reinterpret_cast<const V*>(ap + u), vb = *reinterpret_cast<const V*>(bp + u);
      const V vc = *reinterpret_cast<const V*>(cp + u), vd = *reinterpret_cast<const V*>(dp + u);
KBAND_UNROLL
      for (int w = 0; w < W; ++w) {
        r.a[u + w] = j0 + u + w > 0 ? va.v[w] : T(0);
        r.b[u + w] = vb.v[w];
        r.c[u + w] = j0 + u + w < n - 1 ? vc.v[w] : T(0);
        r.d[u + w] = vd.v[w];
      }
    }
    return;
  }
KBAND_UNROLL
  for (int u = 0; u < M; ++u) {
    const bool in = live && u < nr;
    r.a[u] = in && j0 + u > 0 ? ap[u * ars] : T(0);
    r.b[u] = in ? bp[u * brs] : T(1);
    r.c[u] = in && j0 + u < n - 1 ? cp[u * crs] : T(0);
    r.d[u] = in ? dp[u * drs] : T(0);
  }
}

/// Loads rows 0 .. nr-1 of one array at p (row stride rs; none when p is
/// null) into v, zeros after them; 16 bytes at a time like load_chunk.
template <int M, class T>
KOKKOS_INLINE_FUNCTION void load_rows(const T* p, size_t rs, int nr, T (&v)[M]) {
  using PK = Pack16<T>;
  constexpr int W = M % PK::W == 0 ? PK::W : 1;
  if (W > 1 && p != nullptr && nr == M && rs == 1 && PK::aligned(p)) {
    using V = typename PK::type;
KBAND_UNROLL
    for (int u = 0; u < M; u += W) {
      const V q = *reinterpret_cast<const V*>(p + u);
KBAND_UNROLL
      for (int w = 0; w < W; ++w) v[u + w] = q.v[w];
    }
    return;
  }
KBAND_UNROLL
  for (int u = 0; u < M; ++u) v[u] = (p != nullptr && u < nr) ? p[u * rs] : T(0);
}

/// Stores rows 0 .. nr-1 of a chunk's solution v at xp (row stride xrs);
/// a full chunk of unit-stride rows at a 16-byte aligned address is written
/// 16 bytes at a time.
template <int M, class T>
KOKKOS_INLINE_FUNCTION void store_chunk(T* xp, size_t xrs, int nr, const T (&v)[M]) {
  using PK = Pack16<T>;
  constexpr int W = M % PK::W == 0 ? PK::W : 1;
  if (W > 1 && nr == M && xrs == 1 && PK::aligned(xp)) {
    using V = typename PK::type;
KBAND_UNROLL
    for (int u = 0; u < M; u += W) {
      V q;
KBAND_UNROLL
      for (int w = 0; w < W; ++w) q.v[w] = v[u + w];
      *reinterpret_cast<V*>(xp + u) = q;
    }
    return;
  }
KBAND_UNROLL
  for (int u = 0; u < M; ++u)
    if (u < nr) xp[u * xrs] = v[u];
}

/// Eight lanes of T as K vectors V of E lanes, for the CPU lane loops of the
/// Global Thomas solves (per-system and shared factor) on batches that put
/// eight consecutive systems next to each other: a thread's recurrences then
/// stay in vector registers. Host compilers with GNU vector extensions get
/// 16-byte vectors, 32-byte ones where AVX is on (-march=native on the EPYC
/// below: shared factor, grouped layout, n = 256..4096, 0.72-1.03 of the
/// copy bandwidth in three runs against 0.55-1.08 with 16-byte vectors);
/// other compilers, and device passes, a plain array. GCC
/// does not vectorise the eight separate recurrences of the lane loops by
/// itself: on one core of an EPYC a stand-alone shared solve ran them as
/// scalar code at 0.6 ns a point from cache, as packs at 0.50 (one pack) and
/// 0.34 (two packs advanced together).
#if (defined(__GNUC__) || defined(__clang__)) && !defined(__CUDACC__) && !defined(__HIPCC__) && \
    !defined(__SYCL_DEVICE_ONLY__)
#define KBAND_HOST_VECTOR_PACKS 1
#else
#define KBAND_HOST_VECTOR_PACKS 0
#endif
/// From this many rows a CPU thread advances two packs at once (one core of
/// an EPYC, stand-alone, n >= 256: 0.69-0.97 of the copy against 0.56-0.76
/// with one; at n <= 128 one pack was faster, 0.85-1.14 against 0.38-0.79).
#ifndef KBAND_HOST_PAIR_ROWS
#define KBAND_HOST_PAIR_ROWS 256
#endif
template <class T>
struct LanePack {
  static constexpr int L = 8;  // lanes
#if KBAND_HOST_VECTOR_PACKS && defined(__AVX__)
  static constexpr int VB = 32;  // bytes of a vector
#else
  static constexpr int VB = 16;
#endif
#if KBAND_HOST_VECTOR_PACKS
  static constexpr bool vector = VB % sizeof(T) == 0 && (L * sizeof(T)) % VB == 0;
#else
  static constexpr bool vector = false;
#endif
  template <bool V, class = void>
  struct pick {
    using type = T;
  };
#if KBAND_HOST_VECTOR_PACKS
  template <class D>
  struct pick<true, D> {
    typedef T type __attribute__((vector_size(VB)));
  };
#endif
  using V = typename pick<vector>::type;
  static constexpr int E = static_cast<int>(sizeof(V) / sizeof(T));  // lanes per V
  static constexpr int K = L / E;

  /// Vector k (lanes k E .. k E + E-1) of the pack at p. Kernels keep
  /// arrays of V, worked vector by vector: GCC kept whole-pack aggregates on
  /// the stack.
  KOKKOS_INLINE_FUNCTION static V vload(const T* p, int k) {
    V t;
    __builtin_memcpy(&t, p + k * E, sizeof(V));
    return t;
  }
  KOKKOS_INLINE_FUNCTION static void vstore(T* p, int k, const V t) { __builtin_memcpy(p + k * E, &t, sizeof(V)); }
  /// flush_subnormal lane by lane.
  KOKKOS_INLINE_FUNCTION static V flush_subnormal(const V v) {
    const V m = V{} + real_limits<T>::min_normal();
    return (v < m) & (v > -m) ? V{} + T(0) : v;
  }
  /// Whether every lane of t is finite (the packed solves' pivot checks).
  KOKKOS_INLINE_FUNCTION static bool finite(const V t) {
    T v[E];
    __builtin_memcpy(v, &t, sizeof(V));
    bool ok = true;
    for (int e = 0; e < E; ++e) ok = ok && v[e] - v[e] == T(0);
    return ok;
  }
};

/// Whether the L systems from s of batch v lie at consecutive addresses (as
/// a LanePack of them needs).
template <int L, class B>
KOKKOS_INLINE_FUNCTION bool pack_adjacent(const B& v, int s) {
  return batch_traits<B>::lane_stride(v) == 1 && &v(s + L - 1, 0) == &v(s, 0) + (L - 1);
}
/// Whether each of the np packs of L systems from s0 lies at consecutive
/// addresses in every batch of vs.
template <int L, class... Bs>
KOKKOS_INLINE_FUNCTION bool packs_adjacent(const int s0, const int np, const Bs&... vs) {
  for (int k = 0; k < np; ++k)
    if (!(pack_adjacent<L>(vs, s0 + k * L) && ...)) return false;
  return true;
}

/// Transposed blocks of contiguous systems (CPUs): rows j0 .. j0+nb-1 of the
/// L systems at p (system l at p + l ls, its rows consecutive) to or from a
/// buffer that holds them side by side (row u at buf + u L).
template <int L, class T>
KOKKOS_INLINE_FUNCTION void rows_to_pack(const T* p, const size_t ls, const int j0, const int nb, T* buf) {
  for (int l = 0; l < L; ++l)
    for (int u = 0; u < nb; ++u) buf[u * L + l] = p[l * ls + j0 + u];
}
template <int L, class T>
KOKKOS_INLINE_FUNCTION void pack_to_rows(const T* buf, T* p, const size_t ls, const int j0, const int nb) {
  for (int l = 0; l < L; ++l)
    for (int u = 0; u < nb; ++u) p[l * ls + j0 + u] = buf[u * L + l];
}
/// Asks the CPU's caches for rows j0 .. j0+nb-1 of the L systems at p (a
/// block ahead of the one being copied; no-op elsewhere).
template <int L, class T>
KOKKOS_INLINE_FUNCTION void prefetch_rows(const T* p, const size_t ls, const int j0, const int nb) {
#if KBAND_HOST_VECTOR_PACKS
  for (int l = 0; l < L; ++l)
    for (int u = 0; u < nb; u += 64 / static_cast<int>(sizeof(T))) __builtin_prefetch(p + l * ls + j0 + u);
#else
  (void)p, (void)ls, (void)j0, (void)nb;
#endif
}

/// Where a thread keeps the rows of its forward-pass intermediates. A slot
/// holds `nbuf` arrays of n rows for each of the thread's W lanes.
template <class T>
struct LaneStore {
  T* base = nullptr;   // lane 0, row 0, buffer 0
  size_t lane = 0;     // distance between lanes
  size_t row = 0;      // distance between rows
  size_t buf = 0;      // distance between buffers
  KOKKOS_INLINE_FUNCTION T& operator()(int b, int j, int l) const {
    return base[b * buf + j * row + l * lane];
  }
  /// The same store from lane l on.
  KOKKOS_INLINE_FUNCTION LaneStore from_lane(int l) const {
    LaneStore t = *this;
    t.base += l * lane;
    return t;
  }
};

/// Offset of (s, row 0) and the row stride of the workspace, laid out like the batch.
template <Layout L, int SZ>
struct WorkspaceMap {
  static constexpr int G = SZ > 0 ? SZ : 1;  // group width (grouped layout only)
  KOKKOS_INLINE_FUNCTION static size_t offset(int s, int nsys, int n) {
    if (L == Layout::Contiguous) return static_cast<size_t>(s) * n;
    if (L == Layout::Interleaved) return static_cast<size_t>(s);
    (void)nsys;
    return static_cast<size_t>(s / G) * n * G + s % G;
  }
  KOKKOS_INLINE_FUNCTION static size_t row_stride(int nsys, int n) {
    if (L == Layout::Contiguous) return 1;
    if (L == Layout::Interleaved) return static_cast<size_t>(nsys);
    (void)n;
    return G;
  }
  KOKKOS_INLINE_FUNCTION static size_t extent(int nsys, int n) {
    if (L == Layout::Grouped) return static_cast<size_t>((nsys + G - 1) / G) * G * n;
    return static_cast<size_t>(nsys) * n;
  }
};

/// Makes ws at least `need` elements long: a new View (`label`, not
/// initialised) when it is shorter, so that a Global variant's workspace is
/// allocated per call when the caller passes none or too short a one.
template <class Exec, class WS>
void grow_workspace(const Exec& exec, WS& ws, const size_t need, const char* label) {
  if (ws.extent(0) < need) ws = WS(Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, std::string(label)), need);
}

/// Launch geometry shared by the Thomas kernels.
struct ThomasGeometry {
  int nsys = 0, n = 0;
  int lanes = 1;       // W
  int team_size = 1;   // threads per team
  int league = 0;
  bool scratch = false;
  int scratch_level = 0;  // 0: on-chip team scratch; 1: the backend's larger, slower level
  int nbuf = 0;           // intermediate arrays per lane
  size_t scratch_bytes = 0;
};

template <class Exec, class BX, class T, int W>
struct ThomasBase {
  using member_type = typename Kokkos::TeamPolicy<Exec>::member_type;
  using tr = batch_traits<BX>;
  using WMap = WorkspaceMap<tr::layout, tr::sz>;

  int nsys, n;
  bool scratch;
  int level;                                        // scratch level
  Kokkos::View<T*, typename tr::memory_space> ws;  // Global variant only
  T nan;

  /// First system of this thread, number of live lanes (0 = idle thread).
  KOKKOS_INLINE_FUNCTION int first_system(const member_type& m, int& nl) const {
    const int item = m.league_rank() * m.team_size() + m.team_rank();
    const int s0 = item * W;
    nl = s0 < nsys ? (nsys - s0 < W ? nsys - s0 : W) : 0;
    return s0;
  }

  /// Runs k.solve<NL>(m, s0, nl) for this thread's systems. A full set of
  /// lanes gets a compile-time count NL = W (on CPUs the lane loops then
  /// vectorise and the recurrences stay in registers); the last, partial set
  /// NL = 0 (a runtime count). GPUs (W = 1) compile only the first: the
  /// runtime-count copy's arrays would live in local memory.
  template <class K>
  KOKKOS_INLINE_FUNCTION void by_lanes(const K& k, const member_type& m) const {
    int nl;
    const int s0 = first_system(m, nl);
    if (nl == 0) return;
    if constexpr (W == 1)
      k.template solve<1>(m, s0, nl);
    else if (nl == W)
      k.template solve<W>(m, s0, nl);
    else
      k.template solve<0>(m, s0, nl);
  }

  KOKKOS_INLINE_FUNCTION LaneStore<T> store(const member_type& m, int s0, int nbuf) const {
    LaneStore<T> st;
    if (scratch) {
      const size_t slots = static_cast<size_t>(m.team_size()) * W;
      T* sc = static_cast<T*>(m.team_scratch(level).get_shmem(slots * n * nbuf * sizeof(T)));
      st.base = sc + static_cast<size_t>(m.team_rank()) * W;
      st.lane = 1;
      st.row = slots;
      st.buf = slots * n;
    } else {
      st.base = ws.data() + WMap::offset(s0, nsys, n);
      st.lane = tr::layout == Layout::Contiguous ? static_cast<size_t>(n) : 1;
      st.row = WMap::row_stride(nsys, n);
      st.buf = WMap::extent(nsys, n);
    }
    return st;
  }
};

// ---------------------------------------------------------------------------
// Per-system coefficients: a (sub), b (diag), c (super), d (rhs) -> x.
// Non-periodic: a(s,0) and c(s,n-1) are not read.
// Periodic: a(s,0) couples row 0 to x(n-1), c(s,n-1) couples row n-1 to x(0);
// Sherman-Morrison with gamma = -b(s,0).
// ---------------------------------------------------------------------------
template <class Exec, class BA, class BB, class BC, class BD, class BX, class Info, int W,
          int U, bool Periodic, bool Scratch, bool YScratch = Scratch>
struct ThomasPerSystem : ThomasBase<Exec, BX, batch_value_t<BX>, W> {
  using T = batch_value_t<BX>;
  using Base = ThomasBase<Exec, BX, T, W>;
  using typename Base::member_type;
  // stored rows: c' (buffer 0), y' (buffer 1 in scratch when YScratch; x
  // itself otherwise), z' (periodic only: the buffer after them)
  static_assert(Scratch || !YScratch, "kband: y' sits in scratch only in the Scratch variant");
  static constexpr int kZ = YScratch ? 2 : 1;
  static constexpr int kBufs = kZ + (Periodic ? 1 : 0);
  BA a;
  BB b;
  BC c;
  BD d;
  BX x;
  Info info;

  ThomasPerSystem(const Base& base, BA a_, BB b_, BC c_, BD d_, BX x_, Info info_)
      : Base(base), a(a_), b(b_), c(c_), d(d_), x(x_), info(info_) {}

  /// Per-lane state of the forward pass.
  struct State {
    T cprev[W], yprev[W], zprev[W], gam[W], alpha[W], beta[W];
    int bad[W];
  };

  /// The thread's solution rows: lane l, row j at x0[j * xrs + l * ls] on CPUs.
  /// With one lane (GPUs) the batch's own accessor, which takes fewer
  /// registers there (94 against 104 per thread for the interleaved kernel).
  struct Out {
    T* x0;
    size_t xrs, ls;
    const BX* xv;
    int s0;
    KOKKOS_INLINE_FUNCTION T& operator()(int j, int l) const {
      if constexpr (W == 1)
        return (*xv)(s0, j);
      else
        return x0[j * xrs + l * ls];
    }
  };

  KOKKOS_INLINE_FUNCTION T& yref(const LaneStore<T>& st, const Out& xo, int j, int l) const {
    return YScratch ? st(1, j, l) : xo(j, l);
  }

  KOKKOS_FUNCTION void operator()(const member_type& m) const { this->by_lanes(*this, m); }

  /// Whether a thread's full set of lanes may run as packs of
  /// LanePack<T>::L (CPUs, Global solves and Scratch ones with y' in x; see
  /// packed).
  static constexpr bool kPacks = W > 1 && W % LanePack<T>::L == 0 && !YScratch;

  /// Whether a thread's full set of lanes of a contiguous batch runs as one
  /// pack through transposed blocks (CPUs, Global solves; see
  /// solve_contiguous_pack).
  static constexpr bool kContiguousPack = KBAND_HOST_VECTOR_PACKS && W == LanePack<T>::L && !YScratch &&
                                          batch_traits<BX>::layout == Layout::Contiguous;

  template <int NL>
  KOKKOS_INLINE_FUNCTION void solve(const member_type& m, const int s0, const int nl) const {
    // one store a thread: in team scratch each call takes more of it
    const LaneStore<T> st = this->store(m, s0, kBufs);
    if constexpr (kPacks && NL == W) {
      // (periodic systems of one row: the lane loops)
      if ((!Periodic || this->n >= 2) && packed(st, s0)) {
        // the thread's packs advance together, row by row: each visit of a
        // row's page (interleaved batches: a page a row) serves them all
        solve_packed<W / LanePack<T>::L>(s0, st);
        return;
      }
    }
    if constexpr (kContiguousPack && NL == W) {
      solve_contiguous_pack(s0, st);
      return;
    }
    const int nlc = NL > 0 ? NL : nl;
    const int n = this->n;
    const Out xo{&x(s0, 0), batch_traits<BX>::row_stride(x), batch_traits<BX>::lane_stride(x), &x, s0};
    State S;
    {
      const T* a0 = &a(s0, 0);
      const T* b0 = &b(s0, 0);
      const T* c0 = &c(s0, 0);
      const T* cn = &c(s0, n - 1);
      const T* d0 = &d(s0, 0);
      const size_t als = batch_traits<BA>::lane_stride(a), bls = batch_traits<BB>::lane_stride(b);
      const size_t cls = batch_traits<BC>::lane_stride(c), dls = batch_traits<BD>::lane_stride(d);
      for (int l = 0; l < nlc; ++l) {
        T piv = b0[l * bls];
        if (Periodic) {
          S.gam[l] = -piv;
          S.beta[l] = a0[l * als];
          S.alpha[l] = cn[l * cls];
          piv = piv - S.gam[l];
        }
        S.bad[l] = usable_pivot(piv) ? 0 : 1;
        const T w = T(1) / piv;
        S.cprev[l] = n > 1 ? c0[l * cls] * w : T(0);
        S.yprev[l] = d0[l * dls] * w;
        st(0, 0, l) = S.cprev[l];
        yref(st, xo, 0, l) = S.yprev[l];
        if (Periodic) {
          S.zprev[l] = S.gam[l] * w;
          st(kZ, 0, l) = S.zprev[l];
        }
      }
    }
    // Forward pass in blocks of U rows, then single rows; the last row (with
    // the periodic correction of its pivot) is done on its own.
    int j = 1;
    for (; j + U <= n - 1; j += U) forward<U>(st, xo, s0, j, nlc, S);
    for (; j < n - 1; ++j) forward<1>(st, xo, s0, j, nlc, S);
    if (n > 1) forward<1, true>(st, xo, s0, n - 1, nlc, S);
    // Backward pass: y (and z) overwrite their forward intermediates; in the
    // non-periodic case y is the solution and goes straight to x.
    if (!Periodic)
      for (int l = 0; l < nlc; ++l) xo(n - 1, l) = S.yprev[l];
    j = n - 2;
    for (; j - U + 1 >= 0; j -= U) backward<U>(st, xo, j, nlc, S);
    for (; j >= 0; --j) backward<1>(st, xo, j, nlc, S);
    if (Periodic) {
      // yprev/zprev now hold y_0, z_0; y_{n-1}, z_{n-1} are still stored.
      T fact[W];
      for (int l = 0; l < nlc; ++l) {
        const T r = S.beta[l] / S.gam[l];
        const T den = T(1) + S.zprev[l] + r * st(kZ, n - 1, l);
        S.bad[l] = (S.bad[l] == 0 && !usable_pivot(den)) ? n : S.bad[l];
        fact[l] = (S.yprev[l] + r * yref(st, xo, n - 1, l)) / den;
      }
      for (int jj = 0; jj < n; ++jj)
        for (int l = 0; l < nlc; ++l) xo(jj, l) = yref(st, xo, jj, l) - fact[l] * st(kZ, jj, l);
    }
    for (int l = 0; l < nlc; ++l) {
      info(s0 + l) = S.bad[l];
      if (S.bad[l] != 0)
        for (int jj = 0; jj < n; ++jj) xo(jj, l) = this->nan;
    }
  }

  /// Whether every pack of LanePack<T>::L systems from s0 lies at
  /// consecutive addresses in a, b, c, d, x and the workspace.
  KOKKOS_INLINE_FUNCTION bool packed(const LaneStore<T>& st, int s0) const {
    constexpr int L = LanePack<T>::L;
    if (st.lane != 1) return false;
    return packs_adjacent<L>(s0, W / L, a, b, c, d, x);
  }

  /// The solve of G adjacent packs of systems from s (CPUs, n >= 2 when
  /// periodic; c' in the store st, y' in x), advancing together row by row:
  /// the lane loops' operations, in their order, on vectors.
  /// Pivots are checked once, at the end: a zero or non-finite pivot p (or
  /// an infinite 1/p) makes p * (1/p) non-finite, and so the pack's sum of
  /// them; then every lane is walked again on its own to find its first bad
  /// row for info, as the lane loops would (a subnormal pivot whose inverse
  /// overflows passes that walk, as it passes the lane loops). One vector
  /// a pack for the sum leaves SSE2's 16 registers enough for the
  /// recurrences.
  /// Periodic: z (the correction's vector) runs beside y, to the workspace's
  /// second buffer, and a third pass subtracts fact z from x.
  template <int G>
  KOKKOS_INLINE_FUNCTION void solve_packed(const int s, const LaneStore<T>& st) const {
    using P = LanePack<T>;
    constexpr int L = P::L;
    const int n = this->n;
    // pack g: lanes g L .. g L + L - 1 (adjacent: packed())
    T* const cw = &st(0, 0, 0);
    T* const zw = Periodic ? &st(kZ, 0, 0) : nullptr;
    const T* const ap = &a(s, 0);
    const T* const bp = &b(s, 0);
    const T* const cp = &c(s, 0);
    const T* const dp = &d(s, 0);
    T* const xp = &x(s, 0);
    const size_t ars = batch_traits<BA>::row_stride(a), brs = batch_traits<BB>::row_stride(b);
    const size_t crs = batch_traits<BC>::row_stride(c), drs = batch_traits<BD>::row_stride(d);
    const size_t xrs = batch_traits<BX>::row_stride(x);
    // vector by vector (E lanes each) within a row: the live values then fit
    // SSE2's 16 registers (with whole packs GCC kept y on the stack)
    using V = typename P::V;
    constexpr int K = P::K;
    const V zero = V{} + T(0);
    V cprev[G][K], y[G][K], z[G][K], gam[G][K], ab[G][K], check[G];
    for (int g = 0; g < G; ++g) {
      check[g] = zero;
      const int o = g * L;
      for (int k = 0; k < K; ++k) {
        V piv = P::vload(bp + o, k);
        if (Periodic) {
          // gamma = -b_0; beta alpha / gamma enters the last pivot
          gam[g][k] = -piv;
          ab[g][k] = P::vload(ap + o, k) * P::vload(cp + (n - 1) * crs + o, k) / gam[g][k];
          piv = piv - gam[g][k];
        }
        const V w = T(1) / piv;
        check[g] += piv * w;
        cprev[g][k] = n > 1 ? P::vload(cp + o, k) * w : zero;
        y[g][k] = P::vload(dp + o, k) * w;
        P::vstore(cw + o, k, cprev[g][k]);
        P::vstore(xp + o, k, y[g][k]);
        if (Periodic) {
          z[g][k] = gam[g][k] * w;
          P::vstore(zw + o, k, z[g][k]);
        }
      }
    }
    for (int j = 1; j < n; ++j) {
      const bool last = j == n - 1;
      for (int g = 0; g < G; ++g) {
        const int o = g * L;
        for (int k = 0; k < K; ++k) {
          const V al = P::vload(ap + j * ars + o, k);
          V piv = P::vload(bp + j * brs + o, k) - al * cprev[g][k];
          if (Periodic && last) piv -= ab[g][k];
          const V w = T(1) / piv;
          check[g] += piv * w;
          y[g][k] = (P::vload(dp + j * drs + o, k) - al * y[g][k]) * w;
          P::vstore(xp + j * xrs + o, k, y[g][k]);
          if (!last) {
            cprev[g][k] = P::vload(cp + j * crs + o, k) * w;
            P::vstore(cw + j * st.row + o, k, cprev[g][k]);
          }
          if (Periodic) {
            // z_j = (alpha [j = n-1] - a_j z_{j-1}) / pivot, alpha = c_{n-1}
            z[g][k] = P::flush_subnormal(((last ? P::vload(cp + j * crs + o, k) : zero) - al * z[g][k]) * w);
            P::vstore(zw + j * st.row + o, k, z[g][k]);
          }
        }
      }
    }
    for (int j = n - 2; j >= 0; --j)
      for (int g = 0; g < G; ++g) {
        const int o = g * L;
        for (int k = 0; k < K; ++k) {
          const V cj = P::vload(cw + j * st.row + o, k);
          y[g][k] = P::vload(xp + j * xrs + o, k) - cj * y[g][k];
          P::vstore(xp + j * xrs + o, k, y[g][k]);
          if (Periodic) {
            z[g][k] = P::flush_subnormal(P::vload(zw + j * st.row + o, k) - cj * z[g][k]);
            P::vstore(zw + j * st.row + o, k, z[g][k]);
          }
        }
      }
    if constexpr (Periodic) {
      // y, z hold y_0, z_0; y_{n-1}, z_{n-1} are still stored. x = y - fact z
      V dcheck[G], fact[G][K];
      alignas(64) T den[G][L];
      for (int g = 0; g < G; ++g) {
        const int o = g * L;
        dcheck[g] = zero;
        for (int k = 0; k < K; ++k) {
          const V r = P::vload(ap + o, k) / gam[g][k];
          const V dk = T(1) + z[g][k] + r * P::vload(zw + (n - 1) * st.row + o, k);
          dcheck[g] += dk * (T(1) / dk);
          fact[g][k] = (y[g][k] + r * P::vload(xp + (n - 1) * xrs + o, k)) / dk;
          P::vstore(den[g], k, dk);
        }
      }
      for (int j = 0; j < n; ++j)
        for (int g = 0; g < G; ++g)
          for (int k = 0; k < K; ++k)
            P::vstore(xp + j * xrs + g * L, k,
                      P::vload(xp + j * xrs + g * L, k) - fact[g][k] * P::vload(zw + j * st.row + g * L, k));
      for (int g = 0; g < G; ++g) finish_pack(s + g * L, P::finite(check[g] + dcheck[g]), den[g]);
    } else {
      for (int g = 0; g < G; ++g) finish_pack(s + g * L, P::finite(check[g]));
    }
  }

  /// The Global solve of the L = LanePack<T>::L systems from s of a
  /// contiguous batch (CPUs) as one pack: each block of kRows rows of a, b,
  /// c, d is copied, system by system (runs of consecutive elements), into a
  /// thread-local buffer whose rows hold the L systems side by side; the
  /// recurrences then run on vectors, as in solve_packed, c' goes to the
  /// workspace in that form (the L systems' part of it, L n elements), and y
  /// to x through the buffer, system by system. The backward pass reads x
  /// back the same way. Lane by lane the pivots' division lies on each row's
  /// chain; packed, L chains share it. Periodic: z beside y (to the
  /// workspace's second buffer, in the same form), then a third pass through
  /// x subtracts fact z, as solve_packed does.
  static constexpr int kRows = 32;
  KOKKOS_INLINE_FUNCTION void solve_contiguous_pack(const int s, const LaneStore<T>& st) const {
    using P = LanePack<T>;
    using V = typename P::V;
    constexpr int K = P::K, L = P::L, B = kRows;
    const int n = this->n;
    T* const cw = st.base;           // row j of c' at cw + j L
    T* const zw = st.base + st.buf;  // periodic: row j of z at zw + j L
    const T* const ap = &a(s, 0);
    const T* const bp = &b(s, 0);
    const T* const cp = &c(s, 0);
    const T* const dp = &d(s, 0);
    T* const xp = &x(s, 0);
    const size_t als = batch_traits<BA>::lane_stride(a), bls = batch_traits<BB>::lane_stride(b);
    const size_t cls = batch_traits<BC>::lane_stride(c), dls = batch_traits<BD>::lane_stride(d);
    const size_t xls = batch_traits<BX>::lane_stride(x);
    alignas(64) T ab[B * L], bb[B * L], cb[B * L], db[B * L];
    const V zero{};
    V cprev[K], y[K], z[K], gam[K], beta[K], alpha[K], check = zero;
    for (int k = 0; k < K; ++k) cprev[k] = y[k] = z[k] = zero;
    if (Periodic) {
      // gamma = -b_0; a(s, 0) = beta and c(s, n-1) = alpha couple the ends
      rows_to_pack<L>(ap, als, 0, 1, ab);
      rows_to_pack<L>(bp, bls, 0, 1, bb);
      rows_to_pack<L>(cp, cls, n - 1, 1, cb);
      for (int k = 0; k < K; ++k) {
        gam[k] = -P::vload(bb, k);
        beta[k] = P::vload(ab, k);
        alpha[k] = P::vload(cb, k);
      }
    }
    for (int j0 = 0; j0 < n; j0 += B) {
      const int nb = n - j0 < B ? n - j0 : B;
      if (j0 + B < n) {
        const int na = n - j0 - B < B ? n - j0 - B : B;
        prefetch_rows<L>(ap, als, j0 + B, na);
        prefetch_rows<L>(bp, bls, j0 + B, na);
        prefetch_rows<L>(cp, cls, j0 + B, na);
        prefetch_rows<L>(dp, dls, j0 + B, na);
      }
      rows_to_pack<L>(ap, als, j0, nb, ab);
      rows_to_pack<L>(bp, bls, j0, nb, bb);
      rows_to_pack<L>(cp, cls, j0, nb, cb);
      rows_to_pack<L>(dp, dls, j0, nb, db);
      for (int u = 0; u < nb; ++u) {
        const int j = j0 + u;
        // a(s, 0) and c(s, n-1) count as 0 (periodic: they enter the
        // corrected pivots of rows 0 and n-1 and z)
        const bool ua = j > 0, uc = j < n - 1;
        for (int k = 0; k < K; ++k) {
          const V al = ua ? P::vload(ab + u * L, k) : zero;
          V piv = P::vload(bb + u * L, k) - al * cprev[k];
          if (Periodic && j == 0) piv = piv - gam[k];
          if (Periodic && !uc) piv -= alpha[k] * beta[k] / gam[k];
          const V w = T(1) / piv;
          check += piv * w;
          y[k] = (P::vload(db + u * L, k) - al * y[k]) * w;
          cprev[k] = uc ? P::vload(cb + u * L, k) * w : zero;
          P::vstore(db + u * L, k, y[k]);
          P::vstore(cw + static_cast<size_t>(j) * L, k, cprev[k]);
          if (Periodic) {
            const V u0 = j == 0 ? gam[k] : (uc ? zero : alpha[k]);
            z[k] = P::flush_subnormal((u0 - al * z[k]) * w);
            P::vstore(zw + static_cast<size_t>(j) * L, k, z[k]);
          }
        }
      }
      pack_to_rows<L>(db, xp, xls, j0, nb);
    }
    // x_j = y_j - c'_j x_{j+1}, from x_n = 0 (c'_{n-1} = 0); z alike
    V ylast[K], zlast[K];
    for (int k = 0; k < K; ++k) {
      ylast[k] = y[k], zlast[k] = z[k];
      y[k] = z[k] = zero;
    }
    for (int j0 = (n - 1) / B * B; j0 >= 0; j0 -= B) {
      const int nb = n - j0 < B ? n - j0 : B;
      rows_to_pack<L>(static_cast<const T*>(xp), xls, j0, nb, db);
      for (int u = nb - 1; u >= 0; --u)
        for (int k = 0; k < K; ++k) {
          const size_t o = static_cast<size_t>(j0 + u) * L;
          const V cj = P::vload(cw + o, k);
          y[k] = P::vload(db + u * L, k) - cj * y[k];
          P::vstore(db + u * L, k, y[k]);
          if (Periodic) {
            z[k] = P::flush_subnormal(P::vload(zw + o, k) - cj * z[k]);
            P::vstore(zw + o, k, z[k]);
          }
        }
      pack_to_rows<L>(db, xp, xls, j0, nb);
    }
    if constexpr (Periodic) {
      // y, z hold y_0, z_0: x = y - fact z, block by block
      V dcheck = zero, fact[K];
      alignas(64) T den[L];
      for (int k = 0; k < K; ++k) {
        const V r = beta[k] / gam[k];
        const V dk = T(1) + z[k] + r * zlast[k];
        dcheck += dk * (T(1) / dk);
        fact[k] = (y[k] + r * ylast[k]) / dk;
        P::vstore(den, k, dk);
      }
      for (int j0 = 0; j0 < n; j0 += B) {
        const int nb = n - j0 < B ? n - j0 : B;
        rows_to_pack<L>(static_cast<const T*>(xp), xls, j0, nb, db);
        for (int u = 0; u < nb; ++u)
          for (int k = 0; k < K; ++k)
            P::vstore(db + u * L, k,
                      P::vload(db + u * L, k) - fact[k] * P::vload(zw + static_cast<size_t>(j0 + u) * L, k));
        pack_to_rows<L>(db, xp, xls, j0, nb);
      }
      finish_pack(s, P::finite(check + dcheck), den);
    } else {
      finish_pack(s, P::finite(check));
    }
  }

  /// info and NaN for the LanePack<T>::L systems of a pack from s whose
  /// pivot check failed (ok false): each one's first bad row, as the lane
  /// loops would give it (periodic: n when the pivots are fine but the
  /// lane's correction denominator den[l] is not).
  KOKKOS_INLINE_FUNCTION void finish_pack(const int s, const bool ok, const T* den = nullptr) const {
    for (int l = 0; l < LanePack<T>::L; ++l) {
      int bad = ok ? 0 : first_bad_pivot(s + l);
      if (!ok && bad == 0 && den != nullptr && !usable_pivot(den[l])) bad = this->n;
      info(s + l) = bad;
      if (info(s + l) != 0)
        for (int j = 0; j < this->n; ++j) x(s + l, j) = this->nan;
    }
  }

  /// The row (1-based) of system s's first zero or non-finite pivot (the
  /// periodic pivots where periodic), 0 if none.
  KOKKOS_INLINE_FUNCTION int first_bad_pivot(const int s) const {
    const int n = this->n;
    T piv = b(s, 0);
    const T gam = -piv, beta = Periodic ? a(s, 0) : T(0), alpha = Periodic ? c(s, n - 1) : T(0);
    if (Periodic) piv = piv - gam;
    if (!usable_pivot(piv)) return 1;
    T cprev = n > 1 ? c(s, 0) * (T(1) / piv) : T(0);
    for (int j = 1; j < n; ++j) {
      piv = b(s, j) - a(s, j) * cprev;
      if (Periodic && j == n - 1) piv -= alpha * beta / gam;
      if (!usable_pivot(piv)) return j + 1;
      cprev = j < n - 1 ? c(s, j) * (T(1) / piv) : T(0);
    }
    return 0;
  }

  /// Rows jb .. jb+UU-1 of the forward pass (Last: the final row n-1).
  template <int UU, bool Last = false>
  KOKKOS_INLINE_FUNCTION void forward(const LaneStore<T>& st, const Out& xo, int s0, int jb, int nlc, State& S) const {
    T av[UU][W], bv[UU][W], cv[UU][W], dv[UU][W];
    const T* ap = &a(s0, jb);
    const T* bp = &b(s0, jb);
    const T* cp = &c(s0, jb);
    const T* dp = &d(s0, jb);
    const size_t ars = batch_traits<BA>::row_stride(a), brs = batch_traits<BB>::row_stride(b);
    const size_t crs = batch_traits<BC>::row_stride(c), drs = batch_traits<BD>::row_stride(d);
    const size_t als = batch_traits<BA>::lane_stride(a), bls = batch_traits<BB>::lane_stride(b);
    const size_t cls = batch_traits<BC>::lane_stride(c), dls = batch_traits<BD>::lane_stride(d);
    for (int u = 0; u < UU; ++u)
      for (int l = 0; l < nlc; ++l) {
        av[u][l] = ap[u * ars + l * als];
        bv[u][l] = bp[u * brs + l * bls];
        cv[u][l] = Last ? T(0) : cp[u * crs + l * cls];
        dv[u][l] = dp[u * drs + l * dls];
      }
    for (int u = 0; u < UU; ++u) {
      const int j = jb + u;
      for (int l = 0; l < nlc; ++l) {
        const T al = av[u][l];
        T piv = bv[u][l] - al * S.cprev[l];
        if (Periodic && Last) piv -= S.alpha[l] * S.beta[l] / S.gam[l];
        S.bad[l] = (S.bad[l] == 0 && !usable_pivot(piv)) ? j + 1 : S.bad[l];
        const T w = T(1) / piv;
        S.cprev[l] = cv[u][l] * w;
        S.yprev[l] = (dv[u][l] - al * S.yprev[l]) * w;
        if (!Last) st(0, j, l) = S.cprev[l];
        yref(st, xo, j, l) = S.yprev[l];
        if (Periodic) {
          S.zprev[l] = flush_subnormal(((Last ? S.alpha[l] : T(0)) - al * S.zprev[l]) * w);
          st(kZ, j, l) = S.zprev[l];
        }
      }
    }
  }

  /// Rows jb, jb-1, .., jb-UU+1 of the backward pass.
  template <int UU>
  KOKKOS_INLINE_FUNCTION void backward(const LaneStore<T>& st, const Out& xo, int jb, int nlc, State& S) const {
    T cv[UU][W], yv[UU][W], zv[UU][W];
    for (int u = 0; u < UU; ++u)
      for (int l = 0; l < nlc; ++l) {
        cv[u][l] = st(0, jb - u, l);
        yv[u][l] = yref(st, xo, jb - u, l);
        if (Periodic) zv[u][l] = st(kZ, jb - u, l);
      }
    for (int u = 0; u < UU; ++u) {
      const int j = jb - u;
      for (int l = 0; l < nlc; ++l) {
        S.yprev[l] = yv[u][l] - cv[u][l] * S.yprev[l];
        if (Periodic) {
          S.zprev[l] = flush_subnormal(zv[u][l] - cv[u][l] * S.zprev[l]);
          st(kZ, j, l) = S.zprev[l];
          yref(st, xo, j, l) = S.yprev[l];
        } else {
          xo(j, l) = S.yprev[l];
        }
      }
    }
  }
};

// ---------------------------------------------------------------------------
// Shared coefficients (a factored TridiagonalFactor): only d is read per system.
// ---------------------------------------------------------------------------
template <class T, class Mem>
struct FactorData {
  Kokkos::View<T*, Mem> a, cp, w;     // sub-diagonal, c' = c/pivot, 1/pivot
  Kokkos::View<T*, Mem> g, z;         // periodic: first row of T'^-1, correction vector
  Kokkos::View<T[2], Mem> scal;       // periodic: beta/gamma, 1/(1 + z_0 + beta/gamma z_{n-1})
  Kokkos::View<T*, Mem> pgain, pgamma;  // Recompute in parts: G and gamma of each level (n rows each)
  Kokkos::View<T*, Mem> pseg;           // Recompute in parts: B, C of each part of each level
  int part_levels = 0;                  // levels Q = 2 .. 2^part_levels
  Kokkos::View<int, Mem> info;        // first bad pivot (1-based) or 0
  int n = 0;
  bool periodic = false;
};

/// Rows of a thread's lanes, by pointer: lane l, row j at p[j * rs + l * ls].
template <class T>
struct SharedRows {
  const T* d;
  T* x;
  size_t drs, xrs, dls, xls;
};
template <class T, class BD, class BX>
KOKKOS_INLINE_FUNCTION SharedRows<T> shared_rows(const BD& d, const BX& x, int s0) {
  return {&d(s0, 0), &x(s0, 0), batch_traits<BD>::row_stride(d), batch_traits<BX>::row_stride(x),
          batch_traits<BD>::lane_stride(d), batch_traits<BX>::lane_stride(x)};
}

/// A failed factor (FactorData, or any factor with an `info` View): every
/// lane's x is NaN and its info the factor's. Returns whether it failed (the
/// same for every thread).
template <class F, class BX, class Info, class T>
KOKKOS_INLINE_FUNCTION bool factor_failed(const F& f, const BX& x, const Info& info, int s0, int nlc, int n,
                                          T nan) {
  const int finfo = f.info();
  if (finfo == 0) return false;
  for (int l = 0; l < nlc; ++l) {
    info(s0 + l) = finfo;
    for (int j = 0; j < n; ++j) x(s0 + l, j) = nan;
  }
  return true;
}

/// What the shared-factor kernels (Derived) hold: the factor, d, x, info;
/// each thread runs Derived::solve for its lanes.
template <class Derived, class Exec, class T, class Mem, class BD, class BX, class Info, int W>
struct SharedSolve : ThomasBase<Exec, BX, T, W> {
  using Base = ThomasBase<Exec, BX, T, W>;
  using typename Base::member_type;
  using Rows = SharedRows<T>;
  FactorData<T, Mem> f;
  BD d;
  BX x;
  Info info;

  SharedSolve(const Base& base, const FactorData<T, Mem>& f_, BD d_, BX x_, Info info_)
      : Base(base), f(f_), d(d_), x(x_), info(info_) {}

  KOKKOS_FUNCTION void operator()(const member_type& m) const {
    this->by_lanes(static_cast<const Derived&>(*this), m);
  }
};

template <class Exec, class T, class Mem, class BD, class BX, class Info, int W, int U,
          bool Periodic, bool Scratch>
struct ThomasShared
    : SharedSolve<ThomasShared<Exec, T, Mem, BD, BX, Info, W, U, Periodic, Scratch>, Exec, T, Mem, BD, BX, Info, W> {
  using Shared = SharedSolve<ThomasShared, Exec, T, Mem, BD, BX, Info, W>;
  using Shared::Shared;
  using typename Shared::member_type;
  using typename Shared::Rows;
  using Shared::f;
  using Shared::d;
  using Shared::x;
  using Shared::info;

  /// Whether a thread's lanes run as packs of LanePack<T>::L (CPUs, Global
  /// solves of interleaved or grouped batches; see shared_pack_lanes).
  static constexpr bool kPacks = W > 1 && W % LanePack<T>::L == 0 && !Scratch;

  template <int NL>
  KOKKOS_INLINE_FUNCTION void solve(const member_type& m, const int s0, const int nl) const {
    if (factor_failed(f, x, info, s0, NL > 0 ? NL : nl, this->n, this->nan)) return;
    if constexpr (kPacks) {
      // full packs as vectors (two at once from KBAND_HOST_PAIR_ROWS rows on),
      // then the rest, fewer than a pack and inside one group, lane by lane
      constexpr int L = LanePack<T>::L;
      if (!packed(s0, nl / L)) {
        solve_lanes<NL>(m, s0, nl);
        return;
      }
      const int full = nl / L;
      if (full == 2 && W == 2 * L && this->n >= KBAND_HOST_PAIR_ROWS)
        solve_packed<2>(s0);
      else
        for (int k = 0; k < full; ++k) solve_packed<1>(s0 + k * L);
      if (nl > full * L) solve_lanes<0>(m, s0 + full * L, nl - full * L);
    } else {
      solve_lanes<NL>(m, s0, nl);
    }
  }

  /// The lane loops (runtime count when NL = 0).
  template <int NL>
  KOKKOS_INLINE_FUNCTION void solve_lanes(const member_type& m, const int s0, const int nl) const {
    const int nlc = NL > 0 ? NL : nl;
    const int n = this->n;
    const Rows r = shared_rows<T>(d, x, s0);
    const LaneStore<T> st = this->store(m, s0, 1);
    T yprev[W], dot[W];
    {
      const T w0 = f.w(0);
      for (int l = 0; l < nlc; ++l) {
        const T dl = r.d[l * r.dls];
        yprev[l] = dl * w0;
        if (Periodic) dot[l] = f.g(0) * dl;
        yref(st, r, 0, l) = yprev[l];
      }
    }
    // Forward pass in blocks of U rows (then single rows): the right-hand sides
    // and shared coefficients of a block are loaded before the recurrence and
    // its stores begin, so U loads per thread are in flight.
    int j = 1;
    for (; j + U <= n; j += U) forward<U>(st, r, j, nlc, yprev, dot);
    for (; j < n; ++j) forward<1>(st, r, j, nlc, yprev, dot);
    // y_0 = g.d and y_{n-1} are known now, so the Sherman-Morrison factor is too
    // and the backward pass writes the final solution directly.
    T fact[W];
    for (int l = 0; l < nlc; ++l) {
      fact[l] = Periodic ? (dot[l] + f.scal(0) * yprev[l]) * f.scal(1) : T(0);
      r.x[(n - 1) * r.xrs + l * r.xls] = Periodic ? yprev[l] - fact[l] * f.z(n - 1) : yprev[l];
    }
    j = n - 2;
    for (; j - U + 1 >= 0; j -= U) backward<U>(st, r, j, nlc, yprev, fact);
    for (; j >= 0; --j) backward<1>(st, r, j, nlc, yprev, fact);
    for (int l = 0; l < nlc; ++l) info(s0 + l) = 0;
  }

  KOKKOS_INLINE_FUNCTION T& yref(const LaneStore<T>& st, const Rows& r, int j, int l) const {
    return Scratch ? st(0, j, l) : r.x[j * r.xrs + l * r.xls];
  }

  /// Whether each of the np packs of LanePack<T>::L systems from s0 lies at
  /// consecutive addresses in d and in x (interleaved batches, and grouped
  /// ones whose SZ is a multiple of the pack).
  KOKKOS_INLINE_FUNCTION bool packed(int s0, int np) const {
    return packs_adjacent<LanePack<T>::L>(s0, np, d, x);
  }

  /// The Global solve of G packs from s0 (CPUs): the lane loops'
  /// operations, in their order, on vectors; G packs advance together.
  template <int G>
  KOKKOS_INLINE_FUNCTION void solve_packed(const int s0) const {
    using P = LanePack<T>;
    using V = typename P::V;
    constexpr int K = P::K;
    const int n = this->n;
    const size_t drs = batch_traits<BD>::row_stride(d), xrs = batch_traits<BX>::row_stride(x);
    const T* dp[G];
    T* xp[G];
    V y[G][K], dot[G][K];
    const T w0 = f.w(0), g0 = Periodic ? f.g(0) : T(0);
    for (int g = 0; g < G; ++g) {
      dp[g] = &d(s0 + g * P::L, 0);
      xp[g] = &x(s0 + g * P::L, 0);
      for (int k = 0; k < K; ++k) {
        const V dv = P::vload(dp[g], k);
        y[g][k] = dv * w0;
        if (Periodic) dot[g][k] = g0 * dv;
        P::vstore(xp[g], k, y[g][k]);
      }
    }
    // y_j = d_j w_j - (a_j w_j) y_{j-1}: a multiplication and a subtraction
    // on the recurrence's chain, not three operations
    for (int j = 1; j < n; ++j) {
      const T wj = f.w(j), awj = f.a(j) * wj, gj = Periodic ? f.g(j) : T(0);
      for (int g = 0; g < G; ++g)
        for (int k = 0; k < K; ++k) {
          const V dv = P::vload(dp[g] + j * drs, k);
          y[g][k] = dv * wj - awj * y[g][k];
          if (Periodic) dot[g][k] += gj * dv;
          P::vstore(xp[g] + j * xrs, k, y[g][k]);
        }
    }
    // periodic: the Sherman-Morrison factor from g.d and y_{n-1}, then x =
    // (the backward recurrence's value) - fact z, row by row
    V fact[G][K];
    if (Periodic) {
      const T s0f = f.scal(0), s1f = f.scal(1), zl = f.z(n - 1);
      for (int g = 0; g < G; ++g)
        for (int k = 0; k < K; ++k) {
          fact[g][k] = (dot[g][k] + s0f * y[g][k]) * s1f;
          P::vstore(xp[g] + (n - 1) * xrs, k, y[g][k] - fact[g][k] * zl);
        }
    }
    for (int j = n - 2; j >= 0; --j) {
      const T cj = f.cp(j), zj = Periodic ? f.z(j) : T(0);
      for (int g = 0; g < G; ++g)
        for (int k = 0; k < K; ++k) {
          y[g][k] = P::vload(xp[g] + j * xrs, k) - cj * y[g][k];
          P::vstore(xp[g] + j * xrs, k, Periodic ? y[g][k] - fact[g][k] * zj : y[g][k]);
        }
    }
    for (int l = 0; l < G * P::L; ++l) info(s0 + l) = 0;
  }

  /// Rows jb .. jb+UU-1 of the forward pass.
  template <int UU>
  KOKKOS_INLINE_FUNCTION void forward(const LaneStore<T>& st, const Rows& r, int jb, int nlc, T (&yprev)[W],
                                      T (&dot)[W]) const {
    T dv[UU][W], av[UU], wv[UU], gv[UU];
    const T* dp = r.d + jb * r.drs;
    for (int u = 0; u < UU; ++u) {
      av[u] = f.a(jb + u);
      wv[u] = f.w(jb + u);
      if (Periodic) gv[u] = f.g(jb + u);
      for (int l = 0; l < nlc; ++l) dv[u][l] = dp[u * r.drs + l * r.dls];
    }
    for (int u = 0; u < UU; ++u)
      for (int l = 0; l < nlc; ++l) {
        yprev[l] = (dv[u][l] - av[u] * yprev[l]) * wv[u];
        if (Periodic) dot[l] += gv[u] * dv[u][l];
        yref(st, r, jb + u, l) = yprev[l];
      }
  }

  /// Rows jb, jb-1, .., jb-UU+1 of the backward pass.
  template <int UU>
  KOKKOS_INLINE_FUNCTION void backward(const LaneStore<T>& st, const Rows& r, int jb, int nlc, T (&yprev)[W],
                                       const T (&fact)[W]) const {
    T yv[UU][W], cv[UU], zv[UU];
    for (int u = 0; u < UU; ++u) {
      cv[u] = f.cp(jb - u);
      if (Periodic) zv[u] = f.z(jb - u);
      for (int l = 0; l < nlc; ++l) yv[u][l] = yref(st, r, jb - u, l);
    }
    for (int u = 0; u < UU; ++u)
      for (int l = 0; l < nlc; ++l) {
        yprev[l] = yv[u][l] - cv[u] * yprev[l];
        r.x[(jb - u) * r.xrs + l * r.xls] = Periodic ? yprev[l] - fact[l] * zv[u] : yprev[l];
      }
  }
};

/// Blocks of B rows of a thread's W lanes (the Recompute kernels).
template <class T, int W, int B>
struct RecomputeBlocks {
  using Block = T[B][W];
  /// Rows jb .. jb+nr-1 of the lanes; with `checkpoint` (pass 2) the first C
  /// come from x, where pass 1 left them, the others from d.
  template <int C>
  KOKKOS_INLINE_FUNCTION static void load(const SharedRows<T>& r, int jb, int nr, int nlc, bool checkpoint,
                                          Block& v) {
    const T* dp = r.d + jb * r.drs;
    const T* xp = r.x + jb * r.xrs;
KBAND_UNROLL
    for (int u = 0; u < B; ++u)
      if (u < nr)
        for (int l = 0; l < nlc; ++l)
          v[u][l] = checkpoint && u < C ? xp[u * r.xrs + l * r.xls] : dp[u * r.drs + l * r.dls];
  }
  KOKKOS_INLINE_FUNCTION static void copy(const Block& from, Block& to, int nlc) {
KBAND_UNROLL
    for (int u = 0; u < B; ++u)
      for (int l = 0; l < nlc; ++l) to[u][l] = from[u][l];
  }
};

// ---------------------------------------------------------------------------
// Shared coefficients, Recompute variant: the forward pass runs twice and no
// intermediate row is stored. Pass 1 streams d once and keeps y only at the
// first row of each block of B rows, in x itself (x(s, kB) = y_kB); pass 2
// walks the blocks from the last one down: it reads a block's checkpoint and
// the rest of its d, recomputes the block's y in registers (the same
// arithmetic, so the same values) and runs the backward pass into x. A solve
// thus reads d twice and writes x once (plus 2/B of an array for the
// checkpoints), against once and three times for Global. In-place solves
// (x == d) work: pass 2 never needs d at a block's first row.
// ---------------------------------------------------------------------------
template <class Exec, class T, class Mem, class BD, class BX, class Info, int W, int B, bool Periodic>
struct ThomasSharedRecompute
    : SharedSolve<ThomasSharedRecompute<Exec, T, Mem, BD, BX, Info, W, B, Periodic>, Exec, T, Mem, BD, BX, Info, W> {
  using Shared = SharedSolve<ThomasSharedRecompute, Exec, T, Mem, BD, BX, Info, W>;
  using Shared::Shared;
  using typename Shared::member_type;
  using typename Shared::Rows;
  using Block = T[B][W];
  using Shared::f;
  using Shared::d;
  using Shared::x;
  using Shared::info;

  // Each pass loads the next block's rows before it stores anything of the
  // current one (the compiler cannot move loads across stores to x, which
  // may be d), so two blocks' loads are in flight per thread. In-place
  // solves stay correct: the blocks' rows are disjoint.
  template <int NL>
  KOKKOS_INLINE_FUNCTION void solve(const member_type&, const int s0, const int nl) const {
    const int nlc = NL > 0 ? NL : nl;
    const int n = this->n;
    if (factor_failed(f, x, info, s0, nlc, n, this->nan)) return;
    const Rows r = shared_rows<T>(d, x, s0);
    const int nb = (n + B - 1) / B;
    T yprev[W], dot[W];
    for (int l = 0; l < nlc; ++l) {
      yprev[l] = T(0);  // y_{-1}: f.a(0) = 0 makes row 0 y_0 = d_0 w_0
      dot[l] = T(0);
    }
    Block cur, next;
    load(r, 0, nlc, false, cur);
    for (int k = 0; k < nb; ++k) {
      if (k + 1 < nb) load(r, (k + 1) * B, nlc, false, next);
      forward(r, k * B, nlc, cur, yprev, dot);
      if (k + 1 < nb) copy(next, cur, nlc);
    }
    T fact[W], xnext[W];
    for (int l = 0; l < nlc; ++l) {
      fact[l] = Periodic ? (dot[l] + f.scal(0) * yprev[l]) * f.scal(1) : T(0);
      xnext[l] = T(0);  // x_n: f.cp(n-1) = 0
    }
    load(r, (nb - 1) * B, nlc, true, cur);
    for (int k = nb - 1; k >= 0; --k) {
      if (k > 0) load(r, (k - 1) * B, nlc, true, next);
      backward(r, k * B, nlc, cur, xnext, fact);
      if (k > 0) copy(next, cur, nlc);
    }
    for (int l = 0; l < nlc; ++l) info(s0 + l) = 0;
  }

  KOKKOS_INLINE_FUNCTION int rows(int jb) const { return this->n - jb < B ? this->n - jb : B; }

  /// The block's right-hand sides; pass 2 (`checkpoint`) takes its first row
  /// from x, where pass 1 left y.
  KOKKOS_INLINE_FUNCTION void load(const Rows& r, int jb, int nlc, bool checkpoint, Block& v) const {
    RecomputeBlocks<T, W, B>::template load<1>(r, jb, rows(jb), nlc, checkpoint, v);
  }
  KOKKOS_INLINE_FUNCTION static void copy(const Block& from, Block& to, int nlc) {
    RecomputeBlocks<T, W, B>::copy(from, to, nlc);
  }

  /// Pass 1 over the block at row jb: y through the block, y_jb into x(jb).
  KOKKOS_INLINE_FUNCTION void forward(const Rows& r, int jb, int nlc, const Block& dv, T (&yprev)[W],
                                      T (&dot)[W]) const {
    const int nr = rows(jb);
    T y0[W];
KBAND_UNROLL
    for (int u = 0; u < B; ++u)
      if (u < nr) {
        const T a = f.a(jb + u), w = f.w(jb + u), g = Periodic ? f.g(jb + u) : T(0);
        for (int l = 0; l < nlc; ++l) {
          yprev[l] = (dv[u][l] - a * yprev[l]) * w;
          if (Periodic) dot[l] += g * dv[u][l];
          if (u == 0) y0[l] = yprev[l];
        }
      }
    T* xp = r.x + jb * r.xrs;
    for (int l = 0; l < nlc; ++l) xp[l * r.xls] = y0[l];
  }

  /// Pass 2 over the block at row jb: its y again (from the checkpoint in
  /// yv[0]), then x from the bottom up. The factor's rows, the same for every
  /// thread, come from cache as the recurrences need them.
  KOKKOS_INLINE_FUNCTION void backward(const Rows& r, int jb, int nlc, Block& yv, T (&xnext)[W],
                                       const T (&fact)[W]) const {
    const int nr = rows(jb);
KBAND_UNROLL
    for (int u = 1; u < B; ++u)
      if (u < nr) {
        const T a = f.a(jb + u), w = f.w(jb + u);
        for (int l = 0; l < nlc; ++l) yv[u][l] = (yv[u][l] - a * yv[u - 1][l]) * w;
      }
KBAND_UNROLL
    for (int u = B - 1; u >= 0; --u)
      if (u < nr) {
        const T cp = f.cp(jb + u), z = Periodic ? f.z(jb + u) : T(0);
        for (int l = 0; l < nlc; ++l) {
          xnext[l] = yv[u][l] - cp * xnext[l];
          r.x[(jb + u) * r.xrs + l * r.xls] = Periodic ? xnext[l] - fact[l] * z : xnext[l];
        }
      }
  }
};

/// Factorisation of a shared tridiagonal matrix, run by one device thread.
template <class T, class Mem, class VA, class VB, class VC>
struct FactorKernel {
  FactorData<T, Mem> f;
  VA a;
  VB b;
  VC c;
  KOKKOS_INLINE_FUNCTION void operator()(const int) const {
    const int n = f.n;
    int bad = 0;
    T gam = 0, beta = 0, alpha = 0;
    T b0 = b(0);
    if (f.periodic) {
      gam = -b0;
      beta = a(0);
      alpha = c(n - 1);
      b0 -= gam;
    }
    // forward elimination of T' (modified diagonal in the periodic case)
    bad = usable_pivot(b0) ? 0 : 1;
    f.w(0) = T(1) / b0;
    f.a(0) = T(0);
    f.cp(0) = n > 1 ? c(0) * f.w(0) : T(0);
    for (int j = 1; j < n; ++j) {
      T piv = b(j) - a(j) * f.cp(j - 1);
      if (f.periodic && j == n - 1) piv -= alpha * beta / gam;
      if (bad == 0 && !usable_pivot(piv)) bad = j + 1;
      f.w(j) = T(1) / piv;
      f.a(j) = a(j);
      f.cp(j) = j < n - 1 ? c(j) * f.w(j) : T(0);
    }
    if (f.periodic && bad == 0) {
      // z = T'^-1 u, u = (gamma, 0, ..., 0, alpha)
      T zp = gam * f.w(0);
      f.z(0) = zp;
      for (int j = 1; j < n; ++j) {
        zp = ((j == n - 1 ? alpha : T(0)) - f.a(j) * zp) * f.w(j);
        f.z(j) = zp;
      }
      for (int j = n - 2; j >= 0; --j) f.z(j) = f.z(j) - f.cp(j) * f.z(j + 1);
      // g = T'^-T e_0: with T' = L U (L unit lower with l_j = a_j w_{j-1}...),
      // solve U^T L^T g = e_0 directly: forward on U^T, backward on L^T.
      // U has diagonal piv_j = 1/w_j and super-diagonal c_j; L has sub-diagonal a_j / piv_{j-1}.
      T h = f.w(0);  // (U^T h = e_0): h_0 = 1/piv_0, h_j = -c_{j-1} h_{j-1} / piv_j
      f.g(0) = h;
      for (int j = 1; j < n; ++j) {
        h = -(f.cp(j - 1) / f.w(j - 1)) * h * f.w(j);
        f.g(j) = h;
      }
      // L^T g = h: g_{n-1} = h_{n-1}, g_j = h_j - (a_{j+1} w_j) g_{j+1}
      for (int j = n - 2; j >= 0; --j) f.g(j) = f.g(j) - f.a(j + 1) * f.w(j) * f.g(j + 1);
      const T r = beta / gam;
      const T den = T(1) + f.z(0) + r * f.z(n - 1);
      if (!usable_pivot(den)) bad = n;
      f.scal(0) = r;
      f.scal(1) = T(1) / den;
      // z and g decay away from their ends: no subnormal values for the
      // solves to multiply (see flush_subnormal)
      for (int j = 0; j < n; ++j) {
        f.z(j) = flush_subnormal(f.z(j));
        f.g(j) = flush_subnormal(f.g(j));
      }
    }
    f.info() = bad;
  }
};

}  // namespace impl
}  // namespace kband
