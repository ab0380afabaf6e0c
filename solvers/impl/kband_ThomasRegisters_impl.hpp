// Kernels of the Registers variant of kband::thomas: every intermediate stays
// in registers, so a solve reads its inputs once and writes x once.
//
// Each system is cut into K chunks of M consecutive rows (M a compile-time
// constant, so a thread's rows live in registers); a team holds P systems and
// one thread per chunk, P*K threads. The recurrences of Thomas are joined
// across the chunks of a system by inclusive scans in team scratch (Hillis-
// Steele, one barrier per round):
//
//  * the forward pass y_j = (d_j - a_j y_{j-1}) / p_j is affine in y_{j-1}: a
//    chunk summarises it as y_out = Y + G y_in, and a thread solves its chunk
//    from y_in = 0, then adds G_{..j} y_in to each row once y_in is known;
//  * the backward pass x_j = y_j - c'_j x_{j+1} is handled the same way, from
//    the last chunk down;
//  * per-system coefficients also need the pivots p_j = b_j - a_j c'_{j-1},
//    c'_j = c_j / p_j: c' follows the Moebius map c' -> c / (b - a c'), so a
//    chunk's map is the product of the 2x2 matrices [[0, c], [-a, b]] (kept
//    scaled, the map does not change), and the scan of those products gives
//    each chunk the exact c' it starts from. The pivots are then Thomas's
//    own, row by row: info and stability are those of thomas.
//
// The variant needs a team of P*K threads; on backends whose teams are smaller
// (host backends), it serves systems of at most M rows only.
#pragma once

#include "kband_Thomas_impl.hpp"

namespace kband {
namespace impl {

/// Launch geometry of a Registers-variant solve.
struct RegisterGeometry {
  int nsys = 0, n = 0;
  int M = 0;            // rows per thread (the kernel's compile-time constant)
  int K = 0;            // chunks (threads) per system
  int P = 0;            // systems per team
  int team_size = 0;    // P * K
  int R = 1;            // blocks of P systems per team
  int league = 0;
  bool chunk_fastest = false;  // thread = p*K + k (contiguous) or k*P + p
  size_t scratch_bytes = 0;   // level 0, per team
  size_t scratch1_bytes = 0;  // level 1 (global memory), per team
  bool ok = false;
  std::string why;      // why not, when !ok
};

// Chunk summaries, kept in team scratch as structures of arrays (one array
// per member, so that a warp's accesses are unit-stride and free of bank
// conflicts); put/get move one thread's value.

/// Affine summary of a chunk's recurrence: out = y + g * in; `dot` adds up
/// (periodic shared solves), `bad` keeps the first failed row (0 = none).
template <class T, bool Dot = false, bool Bad = false>
struct AffineSum {
  T g, y, dot;
  int bad;
  static constexpr int kT = Dot ? 3 : 2, kI = Bad ? 1 : 0;
  KOKKOS_INLINE_FUNCTION void put(T* t, int* i, int ts, int slot) const {
    t[slot] = g;
    t[ts + slot] = y;
    if (Dot) t[2 * ts + slot] = dot;
    if (Bad) i[slot] = bad;
  }
  KOKKOS_INLINE_FUNCTION void get(const T* t, const int* i, int ts, int slot) {
    g = t[slot];
    y = t[ts + slot];
    dot = Dot ? t[2 * ts + slot] : T(0);
    bad = Bad ? i[slot] : 0;
  }
};
/// Scaled 2x2 matrix of a chunk's Moebius map of c'.
template <class T>
struct MoebiusSum {
  T m00, m01, m10, m11;
  static constexpr int kT = 4, kI = 0;
  KOKKOS_INLINE_FUNCTION void put(T* t, int*, int ts, int slot) const {
    t[slot] = m00;
    t[ts + slot] = m01;
    t[2 * ts + slot] = m10;
    t[3 * ts + slot] = m11;
  }
  KOKKOS_INLINE_FUNCTION void get(const T* t, const int*, int ts, int slot) {
    m00 = t[slot];
    m01 = t[ts + slot];
    m10 = t[2 * ts + slot];
    m11 = t[3 * ts + slot];
  }
};
/// Bytes per thread of one half of a scan region for summaries S (a
/// multiple of 8, so that every array stays aligned).
template <class T, class S>
constexpr size_t scan_entry() {
  return (S::kT * sizeof(T) + S::kI * sizeof(int) + 7) / 8 * 8;
}

/// later o earlier
template <class T, bool Dot, bool Bad>
KOKKOS_INLINE_FUNCTION AffineSum<T, Dot, Bad> compose(const AffineSum<T, Dot, Bad>& l,
                                                       const AffineSum<T, Dot, Bad>& e) {
  return {l.g * e.g, l.y + l.g * e.y, l.dot + e.dot, e.bad != 0 ? e.bad : l.bad};
}
template <class T>
KOKKOS_INLINE_FUNCTION void rescale(MoebiusSum<T>& m) {
  T mx = abs_(m.m00);
  mx = abs_(m.m01) > mx ? abs_(m.m01) : mx;
  mx = abs_(m.m10) > mx ? abs_(m.m10) : mx;
  mx = abs_(m.m11) > mx ? abs_(m.m11) : mx;
  if (mx > T(0) && mx <= real_limits<T>::max()) {
    const T r = inverse_pow2(mx);  // exact, and no division
    m.m00 *= r;
    m.m01 *= r;
    m.m10 *= r;
    m.m11 *= r;
  }
}
template <class T>
KOKKOS_INLINE_FUNCTION MoebiusSum<T> compose(const MoebiusSum<T>& l, const MoebiusSum<T>& e) {
  MoebiusSum<T> r{l.m00 * e.m00 + l.m01 * e.m10, l.m00 * e.m01 + l.m01 * e.m11,
                  l.m10 * e.m00 + l.m11 * e.m10, l.m10 * e.m01 + l.m11 * e.m11};
  rescale(r);
  return r;
}

/// How a scan joins a chunk's summary l with an earlier one e in round r
/// (Hillis-Steele, distance 2^r): compose(l, e). `ahead(r, used)` runs before
/// the barrier that precedes round r (`used`: whether this thread joins in
/// it), so that a join can load what it needs while the team waits.
struct ComposeSums {
  template <class S>
  KOKKOS_INLINE_FUNCTION S operator()(const S& l, const S& e, int) const {
    return compose(l, e);
  }
  KOKKOS_INLINE_FUNCTION void ahead(int, bool) {}
};

/// Where a thread's chunk is, and the scan over the K chunks of its system.
template <class Exec, class T, int M>
struct RegisterBase {
  using member_type = typename Kokkos::TeamPolicy<Exec>::member_type;
  int nsys, n, K, P;
  bool chunk_fastest;
  T nan;      // the fill of failed systems
  int R = 1;  // blocks of P systems per team, solved one after another
  /// kband's largest R on interleaved and grouped batches (register_geometry)
  static constexpr int kMaxBlocksStrided = 4;
  /// Bytes of level-1 team scratch a thread (kernels that keep state there)
  static constexpr size_t kScratch1PerThread = 0;

  struct Place {
    int p, k, slot, stride;  // system in the block, chunk, scratch slot, slot distance between chunks
    int s;                   // system
    bool live;               // s < nsys
  };
  KOKKOS_INLINE_FUNCTION Place place(const member_type& m) const {
    Place pl;
    const int t = m.team_rank();
    if (chunk_fastest) {
      pl.p = t / K;
      pl.k = t % K;
      pl.stride = 1;
    } else {
      pl.p = t % P;
      pl.k = t / P;
      pl.stride = P;
    }
    pl.slot = t;
    pl.s = 0;
    pl.live = false;
    return pl;
  }
  /// Moves the place to block b (systems b*P .. b*P+P-1).
  KOKKOS_INLINE_FUNCTION Place at(Place pl, int b) const {
    pl.s = b * P + pl.p;
    pl.live = pl.s < nsys;
    return pl;
  }
  /// The blocks of this team: [b0, b1).
  KOKKOS_INLINE_FUNCTION void blocks(const member_type& m, int& b0, int& b1) const {
    const int nb = (nsys + P - 1) / P;
    b0 = m.league_rank() * R;
    b1 = b0 + R < nb ? b0 + R : nb;
  }
  KOKKOS_INLINE_FUNCTION int rows(int k) const {
    const int r = n - k * M;
    return r < M ? r : M;
  }
  /// Rows of chunk k of segment g of a system in segments of K chunks (0
  /// or fewer past the system).
  KOKKOS_INLINE_FUNCTION int seg_rows(int g, int k) const { return n - (g * K + k) * M; }
  /// Loads the rows j0 .. j0+nr-1 of a, b, c, d that the chunk at pl holds
  /// (load_chunk's form; identity rows when nr <= 0 or the system is past
  /// nsys).
  template <class BA, class BB, class BC, class BD>
  KOKKOS_INLINE_FUNCTION void load_segment(const BA& a, const BB& b, const BC& c, const BD& d, const Place& pl, int j0,
                                           int nr, ChunkRows<T, M>& r) const {
    const bool in = pl.live && nr > 0;
    load_chunk<M>(a, b, c, d, in, pl.s, in ? j0 : 0, nr < M ? nr : M, n, r);
  }
  /// Loads the nr rows of batch d that the chunk at pl holds (zeros past
  /// them, and for systems past nsys).
  template <class BD>
  KOKKOS_INLINE_FUNCTION static void load(const BD& d, const Place& pl, int j0, int nr, T (&v)[M]) {
    load_rows<M>(pl.live ? &d(pl.s, j0) : nullptr, batch_traits<BD>::row_stride(d), nr, v);
  }

  /// Inclusive scan of v over the chunks of each system (from the last chunk
  /// down when Reverse) in `region` (two halves of `entry` bytes per thread,
  /// see scan_entry). Returns the inclusive value; `excl` gets the exclusive
  /// one (ident for the first chunk) and `total` the value over all chunks.
  /// The region must not be the one the previous scan used: its results may
  /// still be read (callers alternate two regions, so no barrier is needed
  /// before the first write). `join` combines two summaries (ComposeSums).
  template <bool Reverse, class S, class Join = ComposeSums>
  KOKKOS_INLINE_FUNCTION S scan(const member_type& m, const Place& pl, char* region, size_t entry, S v,
                                const S& ident, S& excl, S& total, Join join = Join()) const {
    const int ts = m.team_size();
    const size_t half = entry * ts;
    auto tp = [&](int h) { return reinterpret_cast<T*>(region + h * half); };
    auto ip = [&](int h) { return reinterpret_cast<int*>(region + h * half + S::kT * ts * sizeof(T)); };
    const int kk = Reverse ? K - 1 - pl.k : pl.k;
    const int dir = Reverse ? 1 : -1;  // towards earlier chunks
    v.put(tp(0), ip(0), ts, pl.slot);
    join.ahead(0, kk >= 1 && K > 1);
    m.team_barrier();
    int cur = 0;
    for (int off = 1, r = 0; off < K; off *= 2, ++r) {
      if (kk >= off) {
        S e;
        e.get(tp(cur), ip(cur), ts, pl.slot + dir * off * pl.stride);
        v = join(v, e, r);
      }
      v.put(tp(1 - cur), ip(1 - cur), ts, pl.slot);
      cur = 1 - cur;
      join.ahead(r + 1, kk >= 2 * off && 2 * off < K);
      m.team_barrier();
    }
    if (kk > 0)
      excl.get(tp(cur), ip(cur), ts, pl.slot + dir * pl.stride);
    else
      excl = ident;
    const int last = Reverse ? 0 : K - 1;  // the chunk that ends the scan
    total.get(tp(cur), ip(cur), ts, pl.slot + (last - pl.k) * pl.stride);
    return v;
  }

  /// Scan region r (0 or 1) of the team's scratch, halves of `entry` bytes per thread.
  KOKKOS_INLINE_FUNCTION static char* region(const member_type& m, char* base, int r, size_t entry) {
    return base + static_cast<size_t>(r) * 2 * m.team_size() * entry;
  }
};

/// The team loop of the shared-factor Registers kernels. Derived holds the
/// factor `f` (with an `info` View), x, info, the right-hand sides (rhs())
/// and solve(m, pl, raw, j0, nr, v), which solves the block whose rows of
/// this thread's chunk are in v. Each team solves R blocks of P systems; with
/// Ahead, the right-hand sides of the next block are loaded before the
/// current one is solved, so that loads stay in flight while the scans run
/// (2 M values a thread); without, each block's after the previous one (M
/// values: long rows a thread, one block a team).
template <class Derived, class Exec, class T, int M, bool Ahead = true>
struct SharedRegistersLoop : RegisterBase<Exec, T, M> {
  using Base = RegisterBase<Exec, T, M>;
  using typename Base::member_type;
  using Place = typename Base::Place;
  explicit SharedRegistersLoop(const Base& b) : Base(b) {}


  KOKKOS_FUNCTION void operator()(const member_type& m) const {
    const Derived& self = static_cast<const Derived&>(*this);
    const Place pl0 = this->place(m);
    const int j0 = pl0.k * M, nr = this->rows(pl0.k);
    int b0, b1;
    this->blocks(m, b0, b1);
    const int finfo = self.f.info();  // the same for every thread: no barrier is skipped
    if (finfo != 0) {
      for (int b = b0; b < b1; ++b) {
        const Place pl = this->at(pl0, b);
        if (!pl.live) continue;
        for (int u = 0; u < nr; ++u) self.x(pl.s, j0 + u) = this->nan;
        if (pl.k == 0) self.info(pl.s) = finfo;
      }
      return;
    }
    char* raw = static_cast<char*>(m.team_scratch(0).get_shmem(m.team_size() * Derived::scratch_per_thread()));
    T v[M];
    Base::load(self.rhs(), this->at(pl0, b0), j0, nr, v);
    if constexpr (Ahead) {
      T vn[M];
      for (int b = b0; b < b1; ++b) {
        const bool more = b + 1 < b1;
        if (more) Base::load(self.rhs(), this->at(pl0, b + 1), j0, nr, vn);
        self.solve(m, this->at(pl0, b), raw, j0, nr, v);
        if (more) {
KBAND_UNROLL
          for (int u = 0; u < M; ++u) v[u] = vn[u];
        }
      }
    } else {
      for (int b = b0; b < b1; ++b) {
        if (b > b0) Base::load(self.rhs(), this->at(pl0, b), j0, nr, v);
        self.solve(m, this->at(pl0, b), raw, j0, nr, v);
      }
    }
  }
};

// ---------------------------------------------------------------------------
// Shared coefficients (FactorData of kband_Thomas_impl.hpp): the pivots are
// known, only the two affine scans remain.
// ---------------------------------------------------------------------------
template <class Exec, class T, class Mem, class BD, class BX, class Info, int M, bool Periodic, bool Ahead = true>
struct ThomasSharedRegisters
    : SharedRegistersLoop<ThomasSharedRegisters<Exec, T, Mem, BD, BX, Info, M, Periodic, Ahead>, Exec, T, M, Ahead> {
  using Loop = SharedRegistersLoop<ThomasSharedRegisters, Exec, T, M, Ahead>;
  using Base = RegisterBase<Exec, T, M>;
  using typename Base::member_type;
  using Place = typename Base::Place;
  FactorData<T, Mem> f;
  BD d;
  BX x;
  Info info;

  ThomasSharedRegisters(const Base& b, const FactorData<T, Mem>& f_, BD d_, BX x_, Info info_)
      : Loop(b), f(f_), d(d_), x(x_), info(info_) {}
  KOKKOS_INLINE_FUNCTION const BD& rhs() const { return d; }

  using Sum = AffineSum<T, Periodic, false>;
  static constexpr size_t kEntry = scan_entry<T, Sum>();
  static constexpr int kSystemsPerTeam = 16;  // kband's choice of P (H200: 16-32 best for n = 32 .. 512)
  static constexpr int kMinTeamStrided = 64;  // threads at least, interleaved and grouped batches
  static constexpr bool kAutoContiguous = false;  // H200: slower than Scratch on contiguous batches
  static constexpr int kAutoChunks = 32;          // Auto's limit on interleaved and grouped batches
  static constexpr int kAutoChunksInterleaved = kAutoChunks;
  KOKKOS_INLINE_FUNCTION static size_t scratch_per_thread() { return 4 * kEntry; }

  KOKKOS_INLINE_FUNCTION void solve(const member_type& m, const Place& pl, char* raw, int j0, int nr,
                                    T (&y)[M]) const {
    // forward pass of the chunk from y_in = 0
    Sum fw{T(1), T(0), T(0), 0};
KBAND_UNROLL
    for (int u = 0; u < M; ++u)
      if (u < nr) {
        const int j = j0 + u;
        const T a = f.a(j), w = f.w(j);
        if (Periodic) fw.dot += f.g(j) * y[u];
        fw.y = (y[u] - a * fw.y) * w;
        y[u] = fw.y;
        fw.g *= -a * w;
      }
    const Sum ident{T(1), T(0), T(0), 0};
    Sum in, all;
    this->template scan<false>(m, pl, Base::region(m, raw, 0, kEntry), kEntry, fw, ident, in, all);
    T gp = T(1);
KBAND_UNROLL
    for (int u = 0; u < M; ++u)
      if (u < nr) {
        const int j = j0 + u;
        gp *= -f.a(j) * f.w(j);
        y[u] += gp * in.y;
      }
    // Sherman-Morrison factor from g.d and y_{n-1} (the scan's total)
    const T fact = Periodic ? (all.dot + f.scal(0) * all.y) * f.scal(1) : T(0);
    // backward pass of the chunk from x_in = 0
    AffineSum<T> bw{T(1), T(0), T(0), 0};
KBAND_UNROLL
    for (int u = M - 1; u >= 0; --u)
      if (u < nr) {
        const T cp = f.cp(j0 + u);
        bw.y = y[u] - cp * bw.y;
        y[u] = bw.y;
        bw.g *= -cp;
      }
    AffineSum<T> xin, xall;
    this->template scan<true>(m, pl, Base::region(m, raw, 1, kEntry), kEntry, bw,
                              AffineSum<T>{T(1), T(0), T(0), 0}, xin, xall);
    if (!pl.live) return;
    // the final values first, then the stores (no load waits behind a store)
    T hp = T(1);
KBAND_UNROLL
    for (int u = M - 1; u >= 0; --u)
      if (u < nr) {
        const int j = j0 + u;
        hp *= -f.cp(j);
        y[u] = Periodic ? y[u] + hp * xin.y - fact * f.z(j) : y[u] + hp * xin.y;
      }
    store_chunk<M>(&x(pl.s, j0), batch_traits<BX>::row_stride(x), nr, y);
    if (pl.k == 0) info(pl.s) = 0;
  }
};

// ---------------------------------------------------------------------------
// Per-system coefficients a, b, c, d -> x (non-periodic; a(s,0), c(s,n-1)
// are not read). Three scans: c' (Moebius), y (affine), x (affine).
//
// S = 2 segments: a team takes a system's rows in two halves of K chunks (a
// thread holds chunk k of both), one after the other, so that a team of K
// threads a system holds twice the rows, or twice the systems (P) for the
// same n. The first half's forward pass leaves c' and y in registers; the
// second half starts from the first's last c' and y (the scans' totals) and
// is solved to the end; the first half's x then follows from its c', y and
// the second half's first x. A thread then holds 6 M values at once, not
// 4 M: M = 16 (ptxas: 243-255 registers, double).
//
// S > 2 segments: the same walk over S segments of K chunks, the first
// segment's c' and y in registers, those of segments 1 .. S-2 in level-1
// team scratch (global memory, a thread's own values, so no barrier guards
// them: (S-2) 2 M values a thread), the last one's solved in place. The
// backward passes then run from the last segment down.
// ---------------------------------------------------------------------------
template <class Exec, class BA, class BB, class BC, class BD, class BX, class Info, int M, int S = 1>
struct ThomasPerSystemRegisters : RegisterBase<Exec, batch_value_t<BX>, M> {
  static_assert(S >= 1 && S <= 8, "one to eight segments");
  using T = batch_value_t<BX>;
  using Base = RegisterBase<Exec, T, M>;
  using typename Base::member_type;
  using Place = typename Base::Place;
  BA a;
  BB b;
  BC c;
  BD d;
  BX x;
  Info info;

  ThomasPerSystemRegisters(const Base& base, BA a_, BB b_, BC c_, BD d_, BX x_, Info info_)
      : Base(base), a(a_), b(b_), c(c_), d(d_), x(x_), info(info_) {}

  using Sum = AffineSum<T, false, true>;
  static constexpr int kSystemsPerTeam = 8;  // kband's choice of P (H200: 8 best for n = 64 .. 512)
  // Interleaved and grouped batches: at least 256 threads, so 16-32 systems
  // a team for n <= 128 (H100, double, t/copy at n = 64 / 128: interleaved
  // 3.09 / 3.13 with 64 / 128 threads against 2.31 / 2.43 with 256; grouped
  // 2.69 / 2.70 against 2.14 / 2.22; n = 32 and 256 within 3 %, contiguous
  // batches 1.2x slower, so they keep 64)
  static constexpr int kMinTeamStrided = 256;
  static constexpr bool kAutoContiguous = true;  // H200: about 2x faster than Scratch there
  // Interleaved and grouped batches: one block of systems a team (H100,
  // double, ns a point with 1 block against kband's earlier 4: interleaved
  // n = 256 0.0177 / 0.0204, grouped n = 512 0.0197 / 0.0302; n = 32..128
  // within 5 %). Contiguous batches were as fast or faster with kband's
  // choice (n = 512: 0.0195 against 0.0204).
  static constexpr int kMaxBlocksStrided = 1;
  // Auto's limits, in chunks of M rows (use_registers): one segment of M = 8
  // up to n = 512 on grouped batches and 128 on interleaved ones; beyond,
  // two segments of M = 16, up to n = 2048 (grouped) and 1024 (interleaved),
  // then four on interleaved batches up to n = 2048 (thomas_per_system). An
  // interleaved batch keeps the memory busy only when a team reads 64 bytes
  // or more of each row (P >= 8 systems in double): H100, the kernel's loads
  // alone at n = 512, bw/copy 0.52 with P = 4, 0.87 with P = 8, 0.93 with
  // P = 16 (grouped batches: 0.80 at P = 4). M = 8 holds P = 4 systems of
  // n = 512 a team at two teams an SM; two segments of M = 16 hold P = 16
  // (n = 512), 8 (1024) or 4 (2048) at one team an SM, four segments P = 8
  // at n = 2048. The H100, ns a point: interleaved n = 512 0.0259 ->
  // 0.0158, n = 1024 0.0262 (Scratch) -> 0.0180, n = 2048 0.0265 (Scratch),
  // 0.0286 (two segments) -> 0.0218 (four; 0.0198 against two's 0.0178 at
  // n = 1024); grouped n = 512 0.019 either way, n = 1024 0.0254 (Scratch)
  // -> 0.0199, n = 2048 0.0256 (Scratch) -> 0.0195-0.0246 (four segments
  // 0.0232; n = 4096: 0.0258 against Scratch's 0.0256, so Scratch stays).
  // Interleaved n = 129..256: two segments in teams of 128 threads, two
  // teams an SM (0.0153 against one segment's 0.0160 at n = 256; n = 128:
  // 0.0149 against 0.0140).
  // In segments, the limits in rows are those of M = 16 for every M (float
  // takes M = 32, register_rows_segments).
  static constexpr int kAutoChunks = S == 1 ? 64 : 64 * S * 16 / M;
  static constexpr int kAutoChunksInterleaved = S == 1 ? 16 : 32 * S * 16 / M;
  static constexpr int kShortInterleaved = 256;     // two segments: n up to this ...
  static constexpr int kTeamShortInterleaved = 128;  // ... in teams of 128 threads
  static constexpr size_t kEntry = scan_entry<T, MoebiusSum<T>>() > scan_entry<T, Sum>() ? scan_entry<T, MoebiusSum<T>>()
                                                                                         : scan_entry<T, Sum>();
  KOKKOS_INLINE_FUNCTION static size_t scratch_per_thread() { return 4 * kEntry; }
  /// c' and y of segments 1 .. S-2, level-1 scratch (register_geometry)
  static constexpr size_t kScratch1PerThread = S > 2 ? (S - 2) * 2 * M * sizeof(T) : 0;

  using Rows = ChunkRows<T, M>;

  using Base::seg_rows;
  KOKKOS_INLINE_FUNCTION void load(const Place& pl, int j0, int nr, Rows& r) const {
    this->load_segment(a, b, c, d, pl, j0, nr, r);
  }

  /// Each team solves R blocks of P systems in turn. Unlike the shared
  /// solve, the next block's rows are not loaded ahead: a second set of four
  /// row arrays costs more residency than it hides latency (H200: 168
  /// instead of 102 registers, 10-40% slower).
  KOKKOS_FUNCTION void operator()(const member_type& m) const {
    const Place pl0 = this->place(m);
    int b0, b1;
    this->blocks(m, b0, b1);
    char* raw = static_cast<char*>(m.team_scratch(0).get_shmem(m.team_size() * scratch_per_thread()));
    T* kept = nullptr;
    if constexpr (S > 2) kept = static_cast<T*>(m.team_scratch(1).get_shmem(m.team_size() * kScratch1PerThread));
    for (int b = b0; b < b1; ++b) {
      const Place pl = this->at(pl0, b);
      // scans in alternate regions: each forward pass two from region r0,
      // then S backward ones from r0 on: 0, 1, 0 then 1, 0, 1 for the next
      // block with one segment (an odd S), 0, 1, 0, 1, 0, 1 every block with
      // two (an even S)
      const int r0 = S % 2 == 1 ? (b - b0) % 2 : 0;
      const int j0 = pl.k * M, nr = seg_rows(0, pl.k);
      Rows r;
      load(pl, j0, nr, r);
      if constexpr (S == 1) {
        T cl, yl;
        const int bad = forward(m, pl, raw, r0, j0, r, T(0), T(0), cl, yl);
        backward(m, pl, raw, r0, j0, nr, bad, T(0), r.c, r.d);
        if (pl.k == 0 && pl.live) info(pl.s) = bad;
      } else {
        solve_segments(m, pl, raw, kept, r0, j0, nr, r);
      }
    }
  }

  /// Where a thread keeps c' (and, M rows on, y) of its chunk of segment g
  /// (1 .. S-2): kept[(2 M (g-1) + u) ts + slot], unit stride across a warp.
  KOKKOS_INLINE_FUNCTION static T* kept_at(T* kept, int g, int ts, int slot) {
    return kept + static_cast<size_t>(2 * M * (g - 1)) * ts + slot;
  }

  KOKKOS_INLINE_FUNCTION void solve_segments(const member_type& m, const Place& pl, char* raw, T* kept, int r0,
                                             int j0, int nr, Rows& r) const {
    const int ts = m.team_size();
    // first segment: its c' and y stay here
    T cl, yl;
    int bad = forward(m, pl, raw, r0, j0, r, T(0), T(0), cl, yl);
    T c0[M], y0[M];
KBAND_UNROLL
    for (int u = 0; u < M; ++u) {
      c0[u] = r.c[u];
      y0[u] = r.d[u];
    }
    // the others, each from the previous one's last c' and y; the middle
    // ones' c' and y to level-1 scratch, the last one's stay in r
    for (int g = 1; g < S; ++g) {
      const int jg = (g * this->K + pl.k) * M;
      load(pl, jg, seg_rows(g, pl.k), r);
      T cn, yn;
      const int bg = forward(m, pl, raw, r0, jg, r, cl, yl, cn, yn);
      if (bad == 0) bad = bg;
      cl = cn;
      yl = yn;
      if (S > 2 && g < S - 1) {
        T* kp = kept_at(kept, g, ts, pl.slot);
KBAND_UNROLL
        for (int u = 0; u < M; ++u) {
          kp[u * ts] = r.c[u];
          kp[(M + u) * ts] = r.d[u];
        }
      }
    }
    // backward: the last segment to the end of the system, then each
    // earlier one from the first x of the one after it
    const int jl = ((S - 1) * this->K + pl.k) * M;
    T xf = backward(m, pl, raw, r0, jl, seg_rows(S - 1, pl.k), bad, T(0), r.c, r.d);
    int rb = 1 - r0;
    for (int g = S - 2; g >= 1; --g) {
      const T* kp = kept_at(kept, g, ts, pl.slot);
KBAND_UNROLL
      for (int u = 0; u < M; ++u) {
        r.c[u] = kp[u * ts];
        r.d[u] = kp[(M + u) * ts];
      }
      xf = backward(m, pl, raw, rb, (g * this->K + pl.k) * M, seg_rows(g, pl.k), bad, xf, r.c, r.d);
      rb = 1 - rb;
    }
    backward(m, pl, raw, rb, j0, nr, bad, xf, c0, y0);
    if (pl.k == 0 && pl.live) info(pl.s) = bad;
  }

  /// Forward pass of a segment whose rows are in r, from c' and y before
  /// it (c_in, y_in; 0 for the first): two scans in regions r0, 1 - r0.
  /// Leaves c' in r.c and y in r.d, and c' and y of the segment's last row
  /// in c_last, y_last; returns the first failed pivot (1-based row, 0 =
  /// none).
  KOKKOS_INLINE_FUNCTION int forward(const member_type& m, const Place& pl, char* raw, int r0, int j0, Rows& r,
                                     T c_in, T y_in, T& c_last, T& y_last) const {
    T(&av)[M] = r.a;
    T(&bv)[M] = r.b;
    T(&cv)[M] = r.c;
    T(&dv)[M] = r.d;
    // Every loop runs over all M rows, with no test a row: the rows past the
    // system (identity rows, load_chunk) only enter the last chunk's Moebius
    // product and forward summary, which no chunk uses, and have pivot 1, y
    // = 0 and x = 0 (c(s, n-1) is 0 there, so x_{n-1} ignores them).
    // 1. c' entering the chunk: the scan of the chunks' Moebius matrices
    T cin;
    {
      MoebiusSum<T> mb{T(1), T(0), T(0), T(1)};
KBAND_UNROLL
      for (int u = 0; u < M; ++u) {
        // [[0, c], [-a, b]] * mb
        const MoebiusSum<T> q{cv[u] * mb.m10, cv[u] * mb.m11, bv[u] * mb.m10 - av[u] * mb.m00,
                              bv[u] * mb.m11 - av[u] * mb.m01};
        mb = q;
        rescale(mb);
      }
      const MoebiusSum<T> id{T(1), T(0), T(0), T(1)};
      MoebiusSum<T> ex, all;
      this->template scan<false>(m, pl, Base::region(m, raw, r0, kEntry), kEntry, mb, id, ex, all);
      // c'_{j0-1} = (M (c_in, 1)^T)_0 / (M (c_in, 1)^T)_1; c_in before the first row
      if (S == 1) {
        cin = pl.k > 0 ? ex.m01 / ex.m11 : T(0);
      } else {
        cin = (ex.m00 * c_in + ex.m01) / (ex.m10 * c_in + ex.m11);
        c_last = (all.m00 * c_in + all.m01) / (all.m10 * c_in + all.m11);
      }
    }
    // 2. the chunk's own Thomas pivots; forward pass from y = 0 before it
    Sum fw{T(1), T(0), T(0), 0};
KBAND_UNROLL
    for (int u = 0; u < M; ++u) {
      const T piv = bv[u] - av[u] * cin;
      if (fw.bad == 0 && !usable_pivot(piv)) fw.bad = j0 + u + 1;
      const T w = T(1) / piv;
      cin = cv[u] * w;
      fw.y = (dv[u] - av[u] * fw.y) * w;
      cv[u] = cin;           // c'
      dv[u] = fw.y;          // y (local)
      av[u] = -av[u] * w;    // y's factor on y_{j-1}
      fw.g *= av[u];
    }
    const Sum ident{T(1), T(0), T(0), 0};
    Sum in, all;
    this->template scan<false>(m, pl, Base::region(m, raw, 1 - r0, kEntry), kEntry, fw, ident, in, all);
    const T yin = S == 1 ? in.y : in.y + in.g * y_in;
    y_last = S == 1 ? all.y : all.y + all.g * y_in;
    T gp = T(1);
KBAND_UNROLL
    for (int u = 0; u < M; ++u) {
      gp *= av[u];
      dv[u] += gp * yin;
    }
    return all.bad;
  }

  /// Backward pass of a segment (c' in cv, y in dv) from x after it (x_out;
  /// 0 after the system): one scan in region r; stores x (NaN when bad)
  /// and returns the segment's first x.
  KOKKOS_INLINE_FUNCTION T backward(const member_type& m, const Place& pl, char* raw, int r, int j0, int nr, int bad,
                                    T x_out, const T (&cv)[M], T (&dv)[M]) const {
    AffineSum<T> bw{T(1), T(0), T(0), 0};
KBAND_UNROLL
    for (int u = M - 1; u >= 0; --u) {
      bw.y = dv[u] - cv[u] * bw.y;
      dv[u] = bw.y;
      bw.g *= -cv[u];
    }
    AffineSum<T> xin, xall;
    this->template scan<true>(m, pl, Base::region(m, raw, r, kEntry), kEntry, bw,
                              AffineSum<T>{T(1), T(0), T(0), 0}, xin, xall);
    if (!pl.live || nr <= 0) return S == 1 ? T(0) : xall.y + xall.g * x_out;
    const T xi = S == 1 ? xin.y : xin.y + xin.g * x_out;
    T hp = T(1);
KBAND_UNROLL
    for (int u = M - 1; u >= 0; --u) {
      hp *= -cv[u];
      dv[u] = bad != 0 ? this->nan : dv[u] + hp * xi;
    }
    store_chunk<M>(&x(pl.s, j0), batch_traits<BX>::row_stride(x), nr < M ? nr : M, dv);
    return S == 1 ? T(0) : xall.y + xall.g * x_out;
  }
};

/// Rows per thread of the Registers kernels: 16 for shared coefficients (one
/// array in registers), 8 for per-system ones (four), 16 for per-system ones
/// in two segments (six).
constexpr int kRegisterRowsShared = 16;
constexpr int kRegisterRowsPerSystem = 8;
constexpr int kRegisterRowsTwoSegments = 16;
/// Rows a thread of per-system Thomas in segments past interleaved n = 256
/// and grouped n = 512: 16 in double, 32 in float, the same bytes of
/// registers, so that a team holds as many systems (H100, float, ns a point
/// with M = 32 against 16: interleaved n = 512 0.0091 / 0.0117, 1024 0.0096
/// / 0.0150, 2048 (four segments) 0.0118 / 0.0160; grouped n = 1024 0.0092
/// / 0.0146, 2048 0.0102 / 0.0170).
template <class T>
constexpr int register_rows_segments() {
  return sizeof(T) >= 8 ? kRegisterRowsTwoSegments : 2 * kRegisterRowsTwoSegments;
}
/// Contiguous per-system batches on GPUs: 8 rows a thread in double up to this n, 16 beyond.
constexpr int kContiguousRows8 = 2048;
/// ... and double in one segment of 16 rows up to this n, two beyond.
constexpr int kContiguousRows16 = 4096;
/// Team size for contiguous Registers solves on GPUs: t (P systems of K
/// chunks) within lo .. hi threads (thomas: 64 .. 128; gtsv: 32 .. 64).
inline int contiguous_team(int t, int lo = 64, int hi = 128) { return t < lo ? lo : (t > hi ? hi : t); }
/// Rows a thread for interleaved per-system systems of n <= kShortInterleavedRows (Auto, GPUs).
constexpr int kRegisterRowsShortInterleaved = 4;
constexpr int kShortInterleavedRows = 32;

/// Chooses P (systems per team) for K chunks of M rows: P * K about `team`
/// threads (at least K; 0: the kernel's kSystemsPerTeam systems, and at
/// least 64 threads on contiguous batches, kMinTeamStrided on interleaved
/// and grouped ones), at most `cap` (the kernel's registers, scratch);
/// contiguous batches put a system's chunks side by side in a warp.
template <class Exec, class Functor>
RegisterGeometry register_geometry(const Exec& exec, int nsys, int n, int M, bool contiguous,
                                   size_t scratch_per_thread, int team, int blocks, Functor& f, int segments = 1) {
  RegisterGeometry g;
  g.nsys = nsys;
  g.n = n;
  g.M = M;
  g.K = (n + M * segments - 1) / (M * segments);
  g.chunk_fastest = contiguous;
  f.K = g.K;
  f.chunk_fastest = contiguous;
  f.P = 1;
  impl::Team<Exec> probe(exec, 1, 1);
  int cap = probe.team_size_max(f, Kokkos::ParallelForTag());
  const size_t smax = Kokkos::TeamPolicy<Exec>::scratch_size_max(0);
  const int scap = static_cast<int>(smax / scratch_per_thread);
  cap = cap < scap ? cap : scap;
  if (g.K > cap) {
    g.why = concat("Variant::Registers needs ", g.K, " threads per team for n=", n, " (", M, " rows each",
                   segments > 1 ? concat(", ", segments, " segments") : std::string(), ") but the backend offers ", cap);
    return g;
  }
  if (team <= 0) {
    const int least = contiguous ? 64 : Functor::kMinTeamStrided;
    team = Functor::kSystemsPerTeam * g.K > least ? Functor::kSystemsPerTeam * g.K : least;
  }
  int P = 1;
  while (P < 32 && 2 * P * g.K <= team && 2 * P * g.K <= cap && P < nsys) P *= 2;
  g.P = P;
  g.team_size = P * g.K;
  // blocks per team: up to 4 (interleaved and grouped batches: the kernel's
  // kMaxBlocksStrided) while the league still fills the device about 8 times
  // over (concurrency: threads the backend runs at once)
  const long nb = (nsys + P - 1) / P;
  const long want = 8L * static_cast<long>(exec.concurrency()) / g.team_size;
  int R = 1;
  if (blocks > 0)
    R = blocks < 64 ? blocks : 64;
  else
    while (R < (contiguous ? 4 : Functor::kMaxBlocksStrided) && nb / (2 * R) >= want) R *= 2;
  g.R = R;
  f.R = R;
  g.league = static_cast<int>((nb + R - 1) / R);
  g.scratch_bytes = scratch_per_thread * g.team_size;
  g.scratch1_bytes = Functor::kScratch1PerThread * g.team_size;
  g.ok = true;
  f.P = P;
  return g;
}

/// Launches a Registers kernel; MinBlocks > 0: teams of at most 256 threads
/// run with Kokkos::LaunchBounds<256, MinBlocks> (the compiler keeps to
/// 65536 / (256 MinBlocks) registers a thread).
template <int MinBlocks = 0, class Exec, class Functor>
void launch_registers(const char* label, const Exec& exec, const RegisterGeometry& g, const Functor& f) {
  if (g.nsys == 0) return;
  if constexpr (MinBlocks > 0) {
    if (g.team_size <= 256) {
      impl::Team<Exec, Kokkos::LaunchBounds<256, MinBlocks>> policy(exec, g.league, g.team_size);
      policy.set_scratch_size(0, Kokkos::PerTeam(g.scratch_bytes));
      if (g.scratch1_bytes > 0) policy.set_scratch_size(1, Kokkos::PerTeam(g.scratch1_bytes));
      Kokkos::parallel_for(label, policy, f);
      return;
    }
  }
  impl::Team<Exec> policy(exec, g.league, g.team_size);
  policy.set_scratch_size(0, Kokkos::PerTeam(g.scratch_bytes));
  if (g.scratch1_bytes > 0) policy.set_scratch_size(1, Kokkos::PerTeam(g.scratch1_bytes));
  Kokkos::parallel_for(label, policy, f);
}

}  // namespace impl
}  // namespace kband
