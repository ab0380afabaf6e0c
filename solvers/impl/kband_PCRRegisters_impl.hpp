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
// Segments (G > 1): a system longer than one team should take, when the
// systems are too few to fill the device, is cut into G segments of K chunks,
// one team each, in three steps. The summary pass (Summary = true) reduces
// each segment with its couplings to the neighbouring segments moved to two
// extra right-hand sides, giving its first and last rows as affine functions
// of the neighbours' end rows; PCRInterface solves for all end rows (a team
// per system, or for systems of many segments a team per block of them, in
// four launches); the solve pass reduces each segment again with those
// values known and writes x. The inputs are read twice.
//
// No pivoting: stable for diagonally dominant systems, like kband::pcr's
// Scratch variant. A zero or non-finite pivot (of a sweep or of the reduced
// system) sets info to the 1-based row it belongs to and x to NaN.
#pragma once

#include "kband_PCR_impl.hpp"
#include "kband_ThomasRegisters_impl.hpp"
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
  // Segments: a system longer than one team's chunks is cut into G segments
  // of S = K*M rows, one team each (P = 1); G = 1 when a team holds it whole.
  int S = 0;
  int G = 1;
};

/// Per segment of a segmented solve: the first and last rows' values as
/// x = alpha + beta * xi_prev + gamma * xi_next (xi_prev: the last row of the
/// previous segment, xi_next: the first row of the next), then the
/// interface solve's u (first row) and v (last row), and its elimination
/// coefficients.
struct PCRSegmentSlots {
  static constexpr int kAlphaF = 0, kBetaF = 1, kGammaF = 2, kAlphaL = 3, kBetaL = 4, kGammaL = 5;
  static constexpr int kA = 6, kB = 7, kP = 8, kQ = 9, kU = 10, kV = 11;
  static constexpr int kCount = 12;
};

/// Summary = false: solves and writes x (a whole system per team, or, with
/// G > 1, a segment whose neighbours' end rows the workspace holds).
/// Summary = true: a segment's first and last rows as affine functions of
/// the neighbouring segments' end rows, into the workspace (three
/// right-hand sides in the reduced solve); x is not written.
template <class Exec, class BA, class BB, class BC, class BD, class BX, class Info, int M, bool Summary = false>
struct PCRRegisters {
  static_assert(M >= 3, "kband: the chunk sweeps need at least 3 rows per chunk");
  static constexpr int kRows = M;
  static constexpr int NR = Summary ? 3 : 1;  // right-hand sides of the reduced solve
  static constexpr int NC = 2 + NR;           // values per reduced row: a, c, d...
  using T = batch_value_t<BX>;
  using member_type = typename Kokkos::TeamPolicy<Exec>::member_type;
  using WS = Kokkos::View<T*, typename batch_traits<BX>::memory_space>;
  using SL = PCRSegmentSlots;
  BA a;
  BB b;
  BC c;
  BD d;
  BX x;
  Info info;
  PCRRegisterGeometry g;
  T nan;
  WS ws = {};  // segments: PCRSegmentSlots::kCount values per (system, segment)

  /// Team scratch: two buffers of NC arrays (a, c, d... of the reduced rows)
  /// of 2 P K values each, then P ints (first failed row per system). The
  /// PCR of the first rows alternates between the buffers' first-row slots.
  KOKKOS_INLINE_FUNCTION static size_t scratch_bytes(int P, int K) {
    return static_cast<size_t>(4 * NC) * P * K * sizeof(T) + static_cast<size_t>(P) * sizeof(int) + 16;
  }

  using Rows = ChunkRows<T, M>;

  KOKKOS_INLINE_FUNCTION void load(bool live, int s, int j0, int nr, Rows& r) const {
    load_chunk<M>(a, b, c, d, live, s, j0, nr, g.n, r);
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

  /// One PCR update of a reduced row (a, c, d[NR]) from its neighbours lo
  /// and hi (unit diagonals; absent neighbours are identity rows); returns
  /// the new diagonal before scaling.
  KOKKOS_INLINE_FUNCTION static T pcr_update(T (&r)[NC], bool has_lo, const T (&lo)[NC], bool has_hi,
                                             const T (&hi)[NC]) {
    T bn = T(1), an = T(0), cn = T(0);
    const T ai = r[0], ci = r[1];
    if (has_lo) {
      bn -= ai * lo[1];
      an = -ai * lo[0];
KBAND_UNROLL
      for (int q = 2; q < NC; ++q) r[q] -= ai * lo[q];
    }
    if (has_hi) {
      bn -= ci * hi[0];
      cn = -ci * hi[1];
KBAND_UNROLL
      for (int q = 2; q < NC; ++q) r[q] -= ci * hi[q];
    }
    const T w = T(1) / bn;
    r[0] = an * w;
    r[1] = cn * w;
KBAND_UNROLL
    for (int q = 2; q < NC; ++q) r[q] *= w;
    return bn;
  }

  /// Where a thread works: system s (slot p of the team), segment seg whose
  /// rows start at o (ns rows), first chunk r0.
  struct Where {
    int p, r0, s, seg, o, ns;
    bool mine, live;
  };
  KOKKOS_INLINE_FUNCTION Where where(const member_type& m) const {
    Where w;
    const int t = m.team_rank();
    w.p = g.chunk_fastest ? t / g.Kt : t % g.P;
    w.r0 = g.chunk_fastest ? t % g.Kt : t / g.P;
    if (g.G > 1) {
      w.s = m.league_rank() / g.G;
      w.seg = m.league_rank() % g.G;
    } else {
      w.s = m.league_rank() * g.P + w.p;
      w.seg = 0;
    }
    w.o = w.seg * g.S;
    w.ns = g.n - w.o < g.S ? g.n - w.o : g.S;
    w.mine = w.p < g.P;
    w.live = w.mine && w.s < g.nsys;
    return w;
  }
  KOKKOS_INLINE_FUNCTION T* wsp(int s, int seg) const {
    return ws.data() + (static_cast<size_t>(s) * g.G + seg) * SL::kCount;
  }

  KOKKOS_FUNCTION void operator()(const member_type& m) const {
    const int n = g.n, K = g.K, Kt = g.Kt, V = g.V, P = g.P, G = g.G;
    const Where w = where(m);
    const int p = w.p, r0 = w.r0, s = w.s;
    const bool mine = w.mine, live = w.live;
    const int pk2 = 2 * P * K;  // values per array
    T* S = align_ptr<T>(static_cast<char*>(m.team_scratch(g.scratch_level).get_shmem(scratch_bytes(P, K))));
    int* badp = reinterpret_cast<int*>(S + 2 * NC * pk2);
    auto arr = [&](int buf, int comp) { return S + (NC * buf + comp) * pk2; };
    // chunk k's first row sits at slot(p, k, 0), its last at slot(p, k, 1)
    auto put = [&](int buf, int at, const T (&r)[NC]) {
      for (int q = 0; q < NC; ++q) arr(buf, q)[at] = r[q];
    };
    auto get = [&](int buf, int at, T (&r)[NC]) {
      for (int q = 0; q < NC; ++q) r[q] = arr(buf, q)[at];
    };
    auto fail = [&](int k) { Kokkos::atomic_fetch_min(badp + p, w.o + k * M + 1); };
    // rows of chunk k inside the segment (0 for the identity chunks past its end)
    auto rows_of = [&](int k) {
      const int r = w.ns - k * M;
      return r < 0 ? 0 : (r < M ? r : M);
    };
    // the neighbouring segments' end rows (a solve of a segment)
    const bool has_prev = !Summary && G > 1 && w.seg > 0 && live;
    const bool has_next = !Summary && G > 1 && w.seg + 1 < G && live;
    const T xi_prev = has_prev ? wsp(s, w.seg - 1)[SL::kV] : T(0);
    const T xi_next = has_next ? wsp(s, w.seg + 1)[SL::kU] : T(0);
    if (mine && r0 == 0) badp[p] = n + 1;
    Rows rw;
    int mybad = 0;
    // 1. sweeps; the chunks' first and last rows go to buffer 0
    for (int v = 0; v < V; ++v) {
      const int k = r0 + v * Kt;
      if (!mine || k >= K) break;
      const int j0 = k * M, nr = rows_of(k);
      load(live, s, w.o + j0, nr, rw);
      const int bad = sweep(rw, w.o + j0);
      if (bad != 0 && (mybad == 0 || bad < mybad)) mybad = bad;
      T f[NC], l[NC];
      f[0] = rw.a[0];
      f[1] = rw.c[0];
      f[2] = rw.d[0];
      l[0] = rw.a[M - 1];
      l[1] = rw.c[M - 1];
      l[2] = rw.d[M - 1];
      if (Summary) {
        // the couplings to the neighbouring segments become right-hand sides
        f[3] = k == 0 ? -f[0] : T(0);
        f[4] = T(0);
        l[3] = T(0);
        l[4] = k == K - 1 ? -l[1] : T(0);
        if (k == 0) f[0] = T(0);
        if (k == K - 1) l[1] = T(0);
      } else {
        if (k == 0 && has_prev) {
          f[2] -= f[0] * xi_prev;
          f[0] = T(0);
        }
        if (k == K - 1 && has_next) {
          l[2] -= l[1] * xi_next;
          l[1] = T(0);
        }
      }
      put(0, slot(p, k, 0), f);
      put(0, slot(p, k, 1), l);
    }
    m.team_barrier();
    if (mybad != 0) Kokkos::atomic_fetch_min(badp + p, mybad);
    // 2. one step of cyclic reduction: the last rows are eliminated from the
    // first rows (buffer 0 -> buffer 1); the last rows stay in buffer 0
    for (int v = 0; v < V; ++v) {
      const int k = r0 + v * Kt;
      if (!mine || k >= K) break;
      T f[NC], lm[NC], l[NC];
      get(0, slot(p, k, 0), f);
      get(0, slot(p, k > 0 ? k - 1 : k, 1), lm);
      get(0, slot(p, k, 1), l);
      if (!usable_pivot(pcr_update(f, k > 0, lm, true, l))) fail(k);
      put(1, slot(p, k, 0), f);
    }
    m.team_barrier();
    // 3. PCR on the K first rows, between the buffers' first-row slots
    int cur = 1;
    for (int st = 1; st < K; st *= 2) {
      for (int v = 0; v < V; ++v) {
        const int k = r0 + v * Kt;
        if (!mine || k >= K) break;
        const bool has_lo = k - st >= 0, has_hi = k + st < K;
        T f[NC], lo[NC], hi[NC];
        get(cur, slot(p, k, 0), f);
        get(cur, slot(p, has_lo ? k - st : k, 0), lo);
        get(cur, slot(p, has_hi ? k + st : k, 0), hi);
        if (!usable_pivot(pcr_update(f, has_lo, lo, has_hi, hi))) fail(k);
        put(1 - cur, slot(p, k, 0), f);
      }
      cur = 1 - cur;
      m.team_barrier();
    }
    if (!live) return;
    const int sb = badp[p];
    if (Summary) {
      // 4'. the segment's end rows as affine functions of its neighbours' end rows
      T* out = wsp(s, w.seg);
      if (r0 == 0) {
        const int f = slot(p, 0, 0);
        out[SL::kAlphaF] = sb <= n ? nan : arr(cur, 2)[f];
        out[SL::kBetaF] = sb <= n ? nan : arr(cur, 3)[f];
        out[SL::kGammaF] = sb <= n ? nan : arr(cur, 4)[f];
      }
      if (r0 == (K - 1) % Kt) {
        T l[NC];
        get(0, slot(p, K - 1, 1), l);  // c moved to the right-hand side
        const int f = slot(p, K - 1, 0);
        out[SL::kAlphaL] = sb <= n ? nan : l[2] - l[0] * arr(cur, 2)[f];
        out[SL::kBetaL] = sb <= n ? nan : l[3] - l[0] * arr(cur, 3)[f];
        out[SL::kGammaL] = sb <= n ? nan : l[4] - l[0] * arr(cur, 4)[f];
      }
      return;
    }
    // 4. substitution: the last rows from the first rows, then the interiors
    const T* XF = arr(cur, 2);
    const size_t xrs = batch_traits<BX>::row_stride(x);
    for (int v = 0; v < V; ++v) {
      const int k = r0 + v * Kt;
      if (k >= K) break;
      const int j0 = k * M, nr = rows_of(k);
      if (nr == 0) break;
      if (V > 1) {
        load(live, s, w.o + j0, nr, rw);
        sweep(rw, w.o + j0);
      }
      const T xf = XF[slot(p, k, 0)];
      const T xn = k + 1 < K ? XF[slot(p, k + 1, 0)] : xi_next;
      const T xl = rw.d[M - 1] - rw.a[M - 1] * xf - rw.c[M - 1] * xn;
      T xv[M];
KBAND_UNROLL
      for (int u = 0; u < M; ++u) {
        const T xu = u == 0 ? xf : (u == M - 1 ? xl : rw.d[u] - rw.a[u] * xf - rw.c[u] * xl);
        xv[u] = sb <= n ? nan : xu;
      }
      store_chunk<M>(&x(s, w.o + j0), xrs, nr, xv);
    }
    if (r0 != 0) return;
    if (G == 1) {
      info(s) = sb <= n ? sb : 0;
    } else if (sb <= n) {
      // several teams per system: the smallest failed row wins (the interface
      // solve wrote 0 or its own row first)
      int cur_info = info(s);
      while (cur_info == 0 || sb < cur_info) {
        const int seen = Kokkos::atomic_compare_exchange(&info(s), cur_info, sb);
        if (seen == cur_info) break;
        cur_info = seen;
      }
    }
  }
};

/// Blocks of the interface solve: a run's most segments in registers, the
/// most blocks a system is cut into, and a block's aggregate in the
/// workspace (after the segments' slots): the Moebius matrix of scan 1 (4
/// values), the P map of scan 2 (2) with its first failed segment (2 exact
/// halves, so that float keeps it), u's backward map of scan 3 (2).
struct PCRInterfaceBlocks {
  static constexpr int kRun = 4;
  static constexpr int kMax = 64;
  static constexpr int kM = 0, kP = 4, kBad = 6, kU = 8;
  static constexpr int kCount = 10;
  static constexpr int kHalf = 65536;
  /// Aggregates a system of G segments may need.
  static long most(long G) {
    const long b = (G + kRun - 1) / kRun;
    return b < kMax ? b : kMax;
  }
};

/// The interface solve of a segmented pcr: per system, the 2G end rows
/// u_s = aF + bF v_{s-1} + gF u_{s+1}, v_s = aL + bL v_{s-1} + gL u_{s+1}
/// by elimination along the segments (u_s = A + B u_{s+1}, v_s = P + Q
/// u_{s+1}) and back. Kt threads per system, P systems per team; a thread
/// takes a run of consecutive segments and the runs are joined by scans in
/// team scratch, as in Thomas' Registers variant: Q follows the Moebius map
/// Q -> gL + bL gF Q / (1 - bF Q) (2x2 matrices [[bL gF - gL bF, gL], [-bF, 1]]),
/// P is affine in the previous P once Q is known (P -> aL + bL Q aF / den +
/// bL / den P, den = 1 - bF Q), and u is affine in the next u. So three
/// scans, and a thread walks its run four times. On GPUs a run is at most
/// kRun segments, loaded once into registers (all loads in flight together,
/// the walks' coefficients kept there too); longer runs are walked in the
/// workspace. Sets info(s) to 0, or to the first row of the first segment
/// whose elimination failed on finite values (the end rows are then NaN,
/// and so is x). A segment whose own pivots failed has a NaN summary; the
/// NaN spreads to every end row, and the solve pass of that segment reports
/// its row.
///
/// Blocks: a system of more segments than kRun times a team's threads (on
/// GPUs), or one whose caller asks for several threads a system on a host
/// backend (team_cap; host teams have one thread), is cut into nb blocks of
/// consecutive segments, a team each, and the solve takes four launches
/// (stage 0 to 3). Stage k ends with the block's aggregate of scan k in the
/// workspace; the later stages redo the earlier scans and join the
/// aggregates of the blocks before (after, for u) their own, so that every
/// block starts from the values the unblocked solve would carry into it.
/// Without blocks (nb = 1) the stages run in one launch (stage = -1).
/// (H100, 16 x 2^20: 4096 segments a system; one team of 384 threads
/// walking runs of 11 in the workspace took 13 % of the solve.)
template <class Exec, class T, class WS, class Info>
struct PCRInterface {
  using member_type = typename Kokkos::TeamPolicy<Exec>::member_type;
  using SL = PCRSegmentSlots;
  using IB = PCRInterfaceBlocks;
  using Moeb = MoebiusSum<T>;
  using Aff = AffineSum<T, false, true>;
  using Scan = RegisterBase<Exec, T, 1>;
  static constexpr size_t kEntry =
      scan_entry<T, Moeb>() > scan_entry<T, Aff>() ? scan_entry<T, Moeb>() : scan_entry<T, Aff>();
  static constexpr int kRun = IB::kRun;
  /// Threads of a block's team on GPUs (at most).
  static constexpr int kBlockTeam = 64;
  WS ws;
  Info info;
  int G, S;
  T nan;
  int nsys = 0;
  int Kt = 1;      // threads per system (per block with blocks)
  int P = 1;       // systems per team
  int L = 1;       // segments per thread
  int nb = 1;      // blocks per system
  int stage = -1;  // with blocks: the launch (0..3); -1: all in one

  /// Team scratch (level 0) for a team of ts threads: one scan region (the
  /// scans are apart by barriers), so that a team can have more threads,
  /// then the aggregates of a system's blocks when it has several.
  KOKKOS_INLINE_FUNCTION static size_t scratch_bytes(int ts, int blocks) {
    return 2 * kEntry * static_cast<size_t>(ts) +
           (blocks > 1 ? static_cast<size_t>(blocks) * IB::kCount * sizeof(T) : 0);
  }
  size_t scratch_bytes() const { return scratch_bytes(team_size(), nb); }

  /// Geometry: on GPUs ceil(G / kRun) threads per system (at most what the
  /// kernel, the level-0 scratch, 1024 and team_cap if > 0 allow), systems
  /// per team up to 64 threads; blocks of kBlockTeam threads (team_cap if
  /// > 0) when the runs would be longer than kRun. On host backends one thread
  /// per team and system, and min(team_cap, IB::kMax, ceil(G / kRun))
  /// blocks when team_cap > 1.
  template <class E>
  static PCRInterface make(const E& exec, Info info, int nsys, int G, int S, T nan, int team_cap = 0) {
    PCRInterface f{WS(), info, G, S, nan};
    f.nsys = nsys;
    if (is_device_exec<E>::value) {
      // as many threads as the kernel and level-0 scratch allow
      int cap = Team<E>(exec, 1, 1).team_size_max(f, Kokkos::ParallelForTag());
      const size_t room = Kokkos::TeamPolicy<E>::scratch_size_max(0), aggs = scratch_bytes(0, IB::kMax);
      const int by_scratch = room > aggs ? static_cast<int>((room - aggs) / scratch_bytes(1, 1)) : 1;
      cap = cap < by_scratch ? cap : by_scratch;
      cap = cap < 1024 ? cap : 1024;
      if (team_cap > 0 && team_cap < cap) cap = team_cap;
      cap = cap > 32 ? cap / 32 * 32 : (cap < 1 ? 1 : cap);
      f.Kt = (G + kRun - 1) / kRun;
      if (f.Kt > cap) f.Kt = cap;
      if ((G + f.Kt - 1) / f.Kt > kRun) {
        f.Kt = team_cap > 0 || cap < kBlockTeam ? cap : kBlockTeam;
        const long per = static_cast<long>(kRun) * f.Kt;
        const long want = (G + per - 1) / per;
        f.nb = static_cast<int>(want < IB::kMax ? want : IB::kMax);
      } else {
        f.P = f.Kt >= 64 ? 1 : 64 / f.Kt;
        if (f.P > nsys) f.P = nsys > 0 ? nsys : 1;
      }
    } else if (team_cap > 1) {
      const long most = IB::most(G);
      f.nb = static_cast<int>(team_cap < most ? team_cap : most);
    }
    const int per_block = (G + f.nb - 1) / f.nb;
    f.L = (per_block + f.Kt - 1) / f.Kt;
    return f;
  }
  int team_size() const { return P * Kt; }
  int league() const { return nb > 1 ? nsys * nb : (nsys + P - 1) / P; }
  /// Workspace values: the segments' slots, then the blocks' aggregates.
  size_t workspace_size() const {
    return static_cast<size_t>(nsys) * G * SL::kCount + (nb > 1 ? static_cast<size_t>(nsys) * nb * IB::kCount : 0);
  }
  /// The launches: one, or one per stage with blocks.
  template <class E>
  void launch(const char* fn, const E& exec) {
    Team<E> policy(exec, league(), team_size());
    policy.set_scratch_size(0, Kokkos::PerTeam(scratch_bytes()));
    for (int st = nb > 1 ? 0 : -1; st < (nb > 1 ? 4 : 0); ++st) {
      stage = st;
      Kokkos::parallel_for(fn, policy, *this);
    }
  }

  KOKKOS_INLINE_FUNCTION int block_lo(int b) const { return static_cast<int>(static_cast<long>(b) * G / nb); }
  KOKKOS_INLINE_FUNCTION T* aggregate(int s, int b) const {
    return ws.data() + static_cast<size_t>(nsys) * G * SL::kCount + (static_cast<size_t>(s) * nb + b) * IB::kCount;
  }

  /// A run of up to kRun segments in registers: each(f) calls f(i, e)
  /// with segment i's six summary values, each_back(f) f(i, k) from the
  /// last segment down with the kept A, B, P, Q.
  struct RegRun {
    T e[kRun][6];
    T k[kRun][4];
    int len = 0;
    template <class F>
    KOKKOS_INLINE_FUNCTION void each(F&& f) const {
KBAND_UNROLL
      for (int i = 0; i < kRun; ++i)
        if (i < len) f(i, e[i]);
    }
    template <class F>
    KOKKOS_INLINE_FUNCTION void each_back(F&& f) const {
KBAND_UNROLL
      for (int i = kRun - 1; i >= 0; --i)
        if (i < len) f(i, k[i]);
    }
    KOKKOS_INLINE_FUNCTION void keep(int i, T A, T B, T Pn, T Qn) {
      k[i][0] = A;
      k[i][1] = B;
      k[i][2] = Pn;
      k[i][3] = Qn;
    }
  };
  /// A longer run, walked in the workspace kRun segments at a time (a
  /// block's loads in flight together); A, B, P, Q are kept there.
  struct MemRun {
    T* base = nullptr;  // the run's first segment
    int len = 0;
    template <int NQ, class F>
    KOKKOS_INLINE_FUNCTION void blocks(int q0, bool back, F&& f) const {
      const int nb = (len + kRun - 1) / kRun;
      for (int bb = 0; bb < nb; ++bb) {
        const int b = (back ? nb - 1 - bb : bb) * kRun;
        T e[kRun][NQ];
KBAND_UNROLL
        for (int i = 0; i < kRun; ++i)
KBAND_UNROLL
          for (int q = 0; q < NQ; ++q)
            e[i][q] = b + i < len ? base[static_cast<size_t>(b + i) * SL::kCount + q0 + q] : T(0);
KBAND_UNROLL
        for (int ii = 0; ii < kRun; ++ii) {
          const int i = back ? kRun - 1 - ii : ii;
          if (b + i < len) f(b + i, e[i]);
        }
      }
    }
    template <class F>
    KOKKOS_INLINE_FUNCTION void each(F&& f) const {
      blocks<6>(0, false, f);
    }
    template <class F>
    KOKKOS_INLINE_FUNCTION void each_back(F&& f) const {
      blocks<4>(SL::kA, true, f);
    }
    KOKKOS_INLINE_FUNCTION void keep(int i, T A, T B, T Pn, T Qn) const {
      T* o = base + static_cast<size_t>(i) * SL::kCount;
      o[SL::kA] = A;
      o[SL::kB] = B;
      o[SL::kP] = Pn;
      o[SL::kQ] = Qn;
    }
  };

  KOKKOS_FUNCTION void operator()(const member_type& m) const {
    Scan sc;
    sc.nsys = nsys;
    sc.n = Kt;
    sc.K = Kt;
    sc.P = P;
    sc.chunk_fastest = true;
    sc.nan = nan;
    const int blk = nb > 1 ? m.league_rank() % nb : 0;
    const typename Scan::Place pl = sc.at(sc.place(m), nb > 1 ? m.league_rank() / nb : m.league_rank());
    char* raw = static_cast<char*>(m.team_scratch(0).get_shmem(scratch_bytes(m.team_size(), nb)));
    const int s = pl.s;
    const int lo = block_lo(blk), hi = block_lo(blk + 1);
    int g0 = lo + pl.k * L;
    g0 = g0 < hi ? g0 : hi;
    const int g1 = !pl.live ? g0 : (g0 + L < hi ? g0 + L : hi);
    T* base = ws.data() + (static_cast<size_t>(pl.live ? s : 0) * G + g0) * SL::kCount;
    if (L <= kRun) {
      RegRun run;
      run.len = g1 - g0;
KBAND_UNROLL
      for (int i = 0; i < kRun; ++i)
KBAND_UNROLL
        for (int q = 0; q < 6; ++q) run.e[i][q] = i < run.len ? base[static_cast<size_t>(i) * SL::kCount + q] : T(0);
      solve(m, sc, pl, raw, run, g0, base, blk);
    } else {
      MemRun run;
      run.base = base;
      run.len = g1 - g0;
      solve(m, sc, pl, raw, run, g0, base, blk);
    }
  }

  // a block's aggregates, from the team's scratch copy
  KOKKOS_INLINE_FUNCTION static Moeb moebius_at(const T* ag, int b) {
    const T* p = ag + b * IB::kCount + IB::kM;
    return Moeb{p[0], p[1], p[2], p[3]};
  }
  KOKKOS_INLINE_FUNCTION Aff affine_at(const T* ag, int b, int q0) const {
    const T* p = ag + b * IB::kCount + q0;
    Aff r{p[0], p[1], T(0), 0};
    if (q0 == IB::kP) {
      const int seg = static_cast<int>(p[2]) * IB::kHalf + static_cast<int>(p[3]);
      r.bad = seg > 0 ? (seg - 1) * S + 1 : 0;
    }
    return r;
  }

  template <class Run>
  KOKKOS_INLINE_FUNCTION void solve(const member_type& m, const Scan& sc, const typename Scan::Place& pl, char* raw,
                                    Run& run, int g0, T* base, int blk) const {
    const bool blocked = nb > 1;
    // with blocks: the aggregates of the earlier stages, all blocks of the
    // system, into scratch (the first scan's barrier publishes them)
    T* ag = reinterpret_cast<T*>(raw + 2 * kEntry * static_cast<size_t>(m.team_size()));
    if (blocked && stage > 0 && pl.live) {
      const int nq = stage == 1 ? IB::kP : (stage == 2 ? IB::kU : IB::kCount);
      for (int b = pl.k; b < nb; b += Kt) {
        const T* src = aggregate(pl.s, b);
        for (int q = 0; q < nq; ++q) ag[b * IB::kCount + q] = src[q];
      }
    }
    T* mine = blocked && pl.live && pl.k == 0 ? aggregate(pl.s, blk) : nullptr;

    // 1. Q entering the run: the scan of the runs' Moebius matrices (Q = 0
    //    before the first segment)
    const Moeb mid{T(1), T(0), T(0), T(1)};
    Moeb mq = mid;
    run.each([&](int, const T(&e)[6]) {
      const Moeb me{e[SL::kBetaL] * e[SL::kGammaF] - e[SL::kGammaL] * e[SL::kBetaF], e[SL::kGammaL], -e[SL::kBetaF],
                    T(1)};
      mq = compose(me, mq);
    });
    Moeb mex, mtot;
    sc.template scan<false>(m, pl, Scan::region(m, raw, 0, kEntry), kEntry, mq, mid, mex, mtot);
    if (blocked) {
      if (stage == 0) {
        if (mine) mtot.put(mine + IB::kM, nullptr, 1, 0);
        return;
      }
      Moeb c = mid;  // the blocks before this one
      for (int b = 0; b < blk; ++b) c = compose(moebius_at(ag, b), c);
      mex = compose(mex, c);
    }
    const T Q0 = mex.m01 / mex.m11;

    // 2. P entering the run: the scan of the runs' affine maps; the first
    //    failed elimination comes with it
    const Aff aid{T(1), T(0), T(0), 0};
    Aff ap = aid;
    {
      T Q = Q0;
      run.each([&](int i, const T(&e)[6]) {
        const T bF = e[SL::kBetaF], bL = e[SL::kBetaL];
        const T den = T(1) - bF * Q;
        const bool finite = abs_(bF) <= real_limits<T>::max() && abs_(Q) <= real_limits<T>::max();
        if (ap.bad == 0 && finite && !usable_pivot(den)) ap.bad = (g0 + i) * S + 1;
        const T rden = T(1) / den;
        const T f = bL * rden;
        ap.y = e[SL::kAlphaL] + bL * Q * e[SL::kAlphaF] * rden + f * ap.y;
        ap.g = f * ap.g;
        Q = bL * Q * e[SL::kGammaF] * rden + e[SL::kGammaL];
      });
    }
    Aff aex, atot;
    m.team_barrier();  // every thread has read scan 1's results
    sc.template scan<false>(m, pl, Scan::region(m, raw, 0, kEntry), kEntry, ap, aid, aex, atot);
    int bad = atot.bad;
    if (blocked) {
      if (stage == 1) {
        if (mine) {
          const int seg = atot.bad > 0 ? (atot.bad - 1) / S + 1 : 0;
          mine[IB::kP] = atot.g;
          mine[IB::kP + 1] = atot.y;
          mine[IB::kBad] = T(seg / IB::kHalf);
          mine[IB::kBad + 1] = T(seg % IB::kHalf);
        }
        return;
      }
      Aff c = aid;  // the blocks before this one
      for (int b = 0; b < blk; ++b) c = compose(affine_at(ag, b, IB::kP), c);
      aex = compose(aex, c);
      bad = 0;  // the system's first failed elimination
      for (int b = 0; b < nb && bad == 0; ++b) bad = affine_at(ag, b, IB::kP).bad;
    }

    // 3. the elimination coefficients of the run, and u's backward map over it
    Aff au = aid;
    {
      T Pc = aex.y, Q = Q0;
      run.each([&](int i, const T(&e)[6]) {
        const T bF = e[SL::kBetaF], bL = e[SL::kBetaL];
        const T den = T(1) - bF * Q;
        const T A = (e[SL::kAlphaF] + bF * Pc) / den, Bn = e[SL::kGammaF] / den;
        const T Pn = e[SL::kAlphaL] + bL * (Pc + Q * A);
        const T Qn = bL * Q * Bn + e[SL::kGammaL];
        run.keep(i, A, Bn, Pn, Qn);
        au.y += au.g * A;  // u_{g0} = y + g u_{g+1}
        au.g *= Bn;
        Pc = Pn;
        Q = Qn;
      });
    }
    Aff uex, utot;
    m.team_barrier();  // every thread has read scan 2's results
    sc.template scan<true>(m, pl, Scan::region(m, raw, 0, kEntry), kEntry, au, aid, uex, utot);
    if (blocked) {
      if (stage == 2) {
        if (mine) {
          mine[IB::kU] = utot.g;
          mine[IB::kU + 1] = utot.y;
        }
        return;
      }
      Aff c = aid;  // the blocks after this one
      for (int b = nb - 1; b > blk; --b) c = compose(affine_at(ag, b, IB::kU), c);
      uex = compose(uex, c);
    }

    // 4. back substitution over the run from the u that follows it
    T un = uex.y;
    run.each_back([&](int i, const T(&k)[4]) {
      T* o = base + static_cast<size_t>(i) * SL::kCount;
      const T u = k[0] + k[1] * un;
      o[SL::kV] = bad != 0 ? nan : k[2] + k[3] * un;
      o[SL::kU] = bad != 0 ? nan : u;  // NaN summaries give NaN here too
      un = u;
    });
    if (pl.live && pl.k == 0 && blk == 0) info(pl.s) = bad;
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
    const auto w = this->where(m);
    if (!w.live) return;
    const auto& g = this->g;
    for (int k = w.r0; k < g.K; k += g.Kt)
      for (int j = k * M; j < (k + 1) * M && j < w.ns; ++j) this->x(w.s, w.o + j) = this->nan;
    if (w.r0 == 0 && w.seg == 0) this->info(w.s) = fi;
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
/// Chunks per segment when kband splits long systems on GPUs (256 rows: a
/// team is one warp. H100, 16384 x 8192 and 16 x 2^20, share of the copy
/// bandwidth: 128 rows 0.38 / 0.31, 192 0.49 / 0.40, 256 0.56 / 0.47, 320
/// 0.39 / 0.36, 384 0.44 / 0.42, 512 0.52 / 0.46, 1024 0.48 / 0.43).
#ifndef KBAND_PCR_SEGMENT_CHUNKS
#define KBAND_PCR_SEGMENT_CHUNKS 32
#endif
constexpr int kPCRSegmentChunks = KBAND_PCR_SEGMENT_CHUNKS;

}  // namespace impl
}  // namespace kband
