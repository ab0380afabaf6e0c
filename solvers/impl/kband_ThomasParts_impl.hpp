// Shared coefficients, Recompute variant in parts (kband::thomas with a
// TridiagonalFactor): for batches too few to fill a GPU with a thread per
// system, each system is cut into Q parts (Q = 2, 4, 8 or 16), a thread each.
//
// The factor's recurrences are linear in d, and the matrix is shared, so what
// crosses a part boundary is a fixed linear function of the part's data.
// With mu_i = -a_i w_i, nu_i = -c'_i and a part of rows s .. e-1:
//   forward   y_i = w_i d_i + mu_i y_{i-1}:  y_i = y0_i + G_i y_{s-1},
//             y0 the recurrence from y_{s-1} = 0, G_i = prod_{l=s}^{i} mu_l;
//   backward  x_i = y_i + nu_i x_{i+1}:      x_s = v + C y_{s-1} + B x_e,
//             v = sum_j gamma_j d_j,  gamma_j = w_j S_j,
//             S_j = beta_j + mu_{j+1} S_{j+1},  beta_i = prod_{l=s}^{i-1} nu_l,
//             B = prod_{l=s}^{e-1} nu_l,  C = sum_i beta_i G_i.
// G and gamma (n values a level Q) and B, C (per part) come with the factor
// (PartsFactorKernel). A solve runs three kernels:
//   A. a thread per (system, part) runs Recompute's pass 1 over the part from
//      y = 0: the checkpoints y0 at the first row of every block of RB rows
//      go to x, and the part's y0 at its last row, v (and, periodic, g.d)
//      to three slots;
//   B. a thread per system joins its parts' slots: y before each part and x
//      after it (and the Sherman-Morrison factor), back into the slots;
//   C. a thread per (system, part) runs Recompute's pass 2 over the part,
//      blocks from the last one down, each checkpoint corrected by
//      G y_{s-1}, the backward pass starting from x after the part.
// The data movement is Recompute's (d read twice, x written once, plus the
// checkpoints), with nsys Q threads. No pivots beyond the factor's. The slots
// are rows s+1 .. s+kSlots of the part in x (no checkpoint row: parts have at
// least RB rows), which kernel C reads before it writes the part; when x is d
// (in place) they go to a workspace instead.
#pragma once

#include <limits>
#include <type_traits>

#include "kband_Thomas_impl.hpp"

namespace kband {
namespace impl {

/// Blocks of 128 threads a multiprocessor the parts kernels launch for
/// (Kokkos::LaunchBounds; 4: at most 128 registers a thread. H100, 2^27
/// points, grouped n = 4096 / 8192 in 4 parts: 1.85 / 1.80x the copy time,
/// against 1.99 / 2.02x with 5, 96 registers).
#ifndef KBAND_RECOMPUTE_PARTS_MIN_BLOCKS
#define KBAND_RECOMPUTE_PARTS_MIN_BLOCKS 4
#endif

/// Most parts a system: 2^kMaxPartLevel.
constexpr int kMaxPartLevel = 4;

/// Parts of a system of n rows at level Q: part q is rows begin(q) ..
/// begin(q+1)-1 (balanced lengths).
struct RecomputeParts {
  int n = 0, Q = 1;
  KOKKOS_INLINE_FUNCTION int begin(int q) const { return static_cast<int>(static_cast<long long>(q) * n / Q); }
  /// Offsets of level Q's rows (G, gamma) and parts (B, C) in the factor.
  KOKKOS_INLINE_FUNCTION size_t row_offset() const {
    int l = 0;
    while ((1 << l) < Q) ++l;
    return static_cast<size_t>(l - 1) * n;
  }
  KOKKOS_INLINE_FUNCTION int part_offset() const { return 2 * (Q - 2); }
  /// Levels a factor of n rows holds: parts of at least min_rows rows.
  static int levels(int n, int min_rows) {
    int l = 0;
    while (l < kMaxPartLevel && n / (2 << l) >= min_rows) ++l;
    return l;
  }
};

/// G, gamma (per row) and B, C (per part) of every level; a thread per part
/// of every level (index p: level Q = the power of two with Q - 2 <= p < 2 Q - 2).
template <class T, class Mem>
struct PartsFactorKernel {
  FactorData<T, Mem> f;
  KOKKOS_INLINE_FUNCTION void operator()(const int p) const {
    int Q = 2;
    while (p >= 2 * Q - 2) Q *= 2;
    const RecomputeParts pt{f.n, Q};
    const int q = p - (Q - 2);
    const int s = pt.begin(q), e = pt.begin(q + 1);
    const size_t o = pt.row_offset();
    T G = T(1), beta = T(1), C = T(0);
    for (int i = s; i < e; ++i) {
      f.pgamma(o + i) = beta;  // beta_i, until the backward loop below
      G *= -f.a(i) * f.w(i);
      f.pgain(o + i) = G;
      C += beta * G;
      beta *= -f.cp(i);
    }
    f.pseg(pt.part_offset() + 2 * q) = beta;
    f.pseg(pt.part_offset() + 2 * q + 1) = C;
    T S = T(0);
    for (int j = e - 1; j >= s; --j) {
      const T bj = f.pgamma(o + j);
      S = j < e - 1 ? bj - f.a(j + 1) * f.w(j + 1) * S : bj;
      f.pgamma(o + j) = f.w(j) * S;
    }
  }
};

/// The parts kernels' common state.
template <class T, class Mem, class BD, class BX, class Info, bool Periodic, int RB>
struct PartsBase {
  FactorData<T, Mem> f;
  BD d;
  BX x;
  Info info;
  RecomputeParts pt;
  int nsys;
  Kokkos::View<T*, typename batch_traits<BX>::memory_space> ws;  // empty: slots in x
  T nan;

  static constexpr int kSlots = Periodic ? 3 : 2;
  static_assert(RB > kSlots, "a part's slots must not be checkpoint rows");
  using Block = T[RB][1];

  KOKKOS_INLINE_FUNCTION T& slot(int s, int q, int k) const {
    return ws.extent(0) ? ws(static_cast<size_t>(q * kSlots + k) * nsys + s) : x(s, pt.begin(q) + 1 + k);
  }
  /// Thread i of nsys Q: system s = i % nsys (adjacent threads, adjacent
  /// systems), part q = i / nsys, rows j0 .. je-1.
  KOKKOS_INLINE_FUNCTION void place(long i, int& s, int& q, int& j0, int& je) const {
    q = static_cast<int>(i / nsys);
    s = static_cast<int>(i - static_cast<long>(q) * nsys);
    j0 = pt.begin(q);
    je = pt.begin(q + 1);
  }
  /// Rows jb .. jb+nr-1 of system s; with `checkpoint` the first from x.
  KOKKOS_INLINE_FUNCTION void load(const SharedRows<T>& r, int jb, int nr, bool checkpoint, Block& v) const {
    RecomputeBlocks<T, 1, RB>::template load<1>(r, jb, nr, 1, checkpoint, v);
  }
};

/// Kernel A: pass 1 over a part from y = 0 (checkpoints to x), its last y0,
/// v (and g.d) to its slots.
template <class Exec, class T, class Mem, class BD, class BX, class Info, bool Periodic, int RB>
struct PartsForward : PartsBase<T, Mem, BD, BX, Info, Periodic, RB> {
  using PB = PartsBase<T, Mem, BD, BX, Info, Periodic, RB>;
  using typename PB::Block;
  explicit PartsForward(const PB& b) : PB(b) {}
  KOKKOS_INLINE_FUNCTION void operator()(const long i) const {
    int s, q, j0, je;
    this->place(i, s, q, j0, je);
    const FactorData<T, Mem>& f = this->f;
    if (f.info() != 0) return;
    const size_t o = this->pt.row_offset();
    const SharedRows<T> r = shared_rows<T>(this->d, this->x, s);
    T y = T(0), v = T(0), dot = T(0);
    Block cur, next;
    auto nr = [&](int jb) { return je - jb < RB ? je - jb : RB; };
    this->load(r, j0, nr(j0), false, cur);
    for (int jb = j0; jb < je; jb += RB) {
      if (jb + RB < je) this->load(r, jb + RB, nr(jb + RB), false, next);
      T y0 = T(0);
KBAND_UNROLL
      for (int u = 0; u < RB; ++u)
        if (u < nr(jb)) {
          const int j = jb + u;
          v += f.pgamma(o + j) * cur[u][0];
          if (Periodic) dot += f.g(j) * cur[u][0];
          y = (cur[u][0] - f.a(j) * y) * f.w(j);
          if (u == 0) y0 = y;
        }
      r.x[jb * r.xrs] = y0;
      if (jb + RB < je)
        for (int u = 0; u < RB; ++u) cur[u][0] = next[u][0];
    }
    this->slot(s, q, 0) = y;
    this->slot(s, q, 1) = v;
    if (Periodic) this->slot(s, q, 2) = dot;
  }
};

/// Kernel B: per system, y before each part and x after it (and the
/// Sherman-Morrison factor) into the slots.
template <class Exec, class T, class Mem, class BD, class BX, class Info, bool Periodic, int RB>
struct PartsJoin : PartsBase<T, Mem, BD, BX, Info, Periodic, RB> {
  using PB = PartsBase<T, Mem, BD, BX, Info, Periodic, RB>;
  explicit PartsJoin(const PB& b) : PB(b) {}
  KOKKOS_INLINE_FUNCTION void operator()(const int s) const {
    const FactorData<T, Mem>& f = this->f;
    if (f.info() != 0) return;
    const int Q = this->pt.Q;
    const size_t o = this->pt.row_offset();
    const int po = this->pt.part_offset();
    T Y = T(0), dot = T(0);
    for (int q = 0; q < Q; ++q) {
      T& t = this->slot(s, q, 0);
      const T tq = t;
      t = Y;  // y before the part
      Y = tq + f.pgain(o + this->pt.begin(q + 1) - 1) * Y;
      if (Periodic) dot += this->slot(s, q, 2);
    }
    const T fact = Periodic ? (dot + f.scal(0) * Y) * f.scal(1) : T(0);
    T X = T(0);
    for (int q = Q - 1; q >= 0; --q) {
      T& v = this->slot(s, q, 1);
      const T vq = v;
      v = X;  // x after the part (before the periodic correction)
      X = vq + f.pseg(po + 2 * q + 1) * this->slot(s, q, 0) + f.pseg(po + 2 * q) * X;
      if (Periodic) this->slot(s, q, 2) = fact;
    }
  }
};

/// Kernel C: pass 2 over a part, blocks from the last one down, checkpoints
/// corrected by G y_{s-1}, the backward pass from x after the part.
template <class Exec, class T, class Mem, class BD, class BX, class Info, bool Periodic, int RB>
struct PartsBackward : PartsBase<T, Mem, BD, BX, Info, Periodic, RB> {
  using PB = PartsBase<T, Mem, BD, BX, Info, Periodic, RB>;
  using typename PB::Block;
  explicit PartsBackward(const PB& b) : PB(b) {}
  KOKKOS_INLINE_FUNCTION void operator()(const long i) const {
    int s, q, j0, je;
    this->place(i, s, q, j0, je);
    const FactorData<T, Mem>& f = this->f;
    const SharedRows<T> r = shared_rows<T>(this->d, this->x, s);
    const int finfo = f.info();
    if (finfo != 0) {
      for (int j = j0; j < je; ++j) r.x[j * r.xrs] = this->nan;
      if (q == 0) this->info(s) = finfo;
      return;
    }
    const size_t o = this->pt.row_offset();
    // the slots first: they may be rows of this part of x
    const T ystart = this->slot(s, q, 0);
    T xnext = this->slot(s, q, 1);
    const T fact = Periodic ? this->slot(s, q, 2) : T(0);
    auto nr = [&](int jb) { return je - jb < RB ? je - jb : RB; };
    const int last = j0 + (je - 1 - j0) / RB * RB;
    Block cur, next;
    this->load(r, last, nr(last), true, cur);
    for (int jb = last; jb >= j0; jb -= RB) {
      if (jb > j0) this->load(r, jb - RB, RB, true, next);
      const int n = nr(jb);
      cur[0][0] += f.pgain(o + jb) * ystart;
KBAND_UNROLL
      for (int u = 1; u < RB; ++u)
        if (u < n) cur[u][0] = (cur[u][0] - f.a(jb + u) * cur[u - 1][0]) * f.w(jb + u);
KBAND_UNROLL
      for (int u = RB - 1; u >= 0; --u)
        if (u < n) {
          const int j = jb + u;
          xnext = cur[u][0] - f.cp(j) * xnext;
          r.x[j * r.xrs] = Periodic ? xnext - fact * f.z(j) : xnext;
        }
      if (jb > j0)
        for (int u = 0; u < RB; ++u) cur[u][0] = next[u][0];
    }
    if (q == 0) this->info(s) = 0;
  }
};

/// Slots (elements) an in-place solve in Q parts needs in a workspace.
template <class T, class Mem>
size_t parts_workspace_size(const FactorData<T, Mem>& f, int nsys, int Q) {
  return Q > 1 ? static_cast<size_t>(nsys) * Q * (f.periodic ? 3 : 2) : 0;
}

/// Launches the Recompute variant in Q > 1 parts (Q a level the factor holds).
template <int RB, class Exec, class T, class Mem, class BD, class BX, class Info>
void thomas_parts(const char* fn, const Exec& exec, const FactorData<T, Mem>& f, int Q, const BD& d, const BX& x,
                  const Info& info, Kokkos::View<T*, typename batch_traits<BX>::memory_space> ws) {
  const int nsys = batch_traits<BX>::nsys(x);
  if (nsys == 0) return;
  const RecomputeParts pt{f.n, Q};
  const bool inplace = batch_traits<BX>::data(x) == batch_traits<BD>::data(d);
  const size_t need = inplace ? parts_workspace_size(f, nsys, Q) : 0;
  if (need == 0)
    ws = {};
  else
    grow_workspace(exec, ws, need, "kband::thomas::parts_ws");
  const long items = static_cast<long>(nsys) * Q;
  // blocks of 128 threads, KBAND_RECOMPUTE_PARTS_MIN_BLOCKS of them a
  // multiprocessor on GPUs
  using Parts = Range<Exec, Kokkos::IndexType<long>, Kokkos::LaunchBounds<128, KBAND_RECOMPUTE_PARTS_MIN_BLOCKS>>;
  auto run = [&](auto periodic) {
    constexpr bool Pd = decltype(periodic)::value;
    using PB = PartsBase<T, Mem, BD, BX, Info, Pd, RB>;
    const PB b{f, d, x, info, pt, nsys, ws, std::numeric_limits<T>::quiet_NaN()};
    Kokkos::parallel_for(fn, Parts(exec, 0, items),
                         PartsForward<Exec, T, Mem, BD, BX, Info, Pd, RB>(b));
    Kokkos::parallel_for(fn, Range<Exec>(exec, 0, nsys), PartsJoin<Exec, T, Mem, BD, BX, Info, Pd, RB>(b));
    Kokkos::parallel_for(fn, Parts(exec, 0, items),
                         PartsBackward<Exec, T, Mem, BD, BX, Info, Pd, RB>(b));
  };
  if (f.periodic)
    run(std::true_type());
  else
    run(std::false_type());
}

}  // namespace impl
}  // namespace kband
