// Kernels of the batched pentadiagonal solvers (kband::penta,
// kband::periodic_penta, kband::PentadiagonalFactor).
//
// Row j of system s:
//   a(s,j) x(j-2) + b(s,j) x(j-1) + c(s,j) x(j) + d(s,j) x(j+1) + e(s,j) x(j+2) = y(s,j).
//
// Gaussian elimination without pivoting, one thread per system (the
// cuPentaBatch design), written as A = L U with L lower triangular (entries
// a_j, beta_j, mu_j on its three diagonals) and U unit upper triangular
// (p_j, q_j on its two super-diagonals):
//   beta_j = b_j - a_j p_{j-2}
//   mu_j   = c_j - a_j q_{j-2} - beta_j p_{j-1}          (the pivot of row j)
//   p_j    = (d_j - beta_j q_{j-1}) / mu_j,   q_j = e_j / mu_j
//   z_j    = (y_j - a_j z_{j-2} - beta_j z_{j-1}) / mu_j
//   x_j    = z_j - p_j x_{j+1} - q_j x_{j+2}               (backward)
// The thread / lane / scratch machinery (ThomasBase, LaneStore, the Global and
// Scratch variants) is the Thomas solvers'; only the recurrences differ.
//
// Periodic systems (n >= 5): the corner entries a(0), a(1), b(0) (couplings of
// rows 0, 1 to x(n-2), x(n-1)) and d(n-1), e(n-2), e(n-1) (couplings of rows
// n-2, n-1 to x(0), x(1)), i.e. every index taken modulo n, form the 2x2
// blocks B = [[a0, b0], [0, a1]] (rows 0-1, columns n-2..n-1) and
// C = [[e_{n-2}, 0], [d_{n-1}, e_{n-1}]] (rows n-2..n-1, columns 0-1).
// With G = -diag(c0, c1) and K = G^-1 B:  A = A' + U V^T,
//   U = [G; 0; C] (n x 2),  V^T = [I, 0, K] (2 x n),
//   A' = A without corners, its block (0..1, 0..1) minus G and its block
//        (n-2..n-1, n-2..n-1) minus C K  (still pentadiagonal).
// Sherman-Morrison-Woodbury: y0 = A'^-1 y, Z = A'^-1 U, H = I + V^T Z,
//   x = y0 - Z H^-1 V^T y0.
#pragma once

#include "kband_Thomas_impl.hpp"

namespace kband {
namespace impl {

/// Entries of row j of a non-periodic system that lie outside the matrix are
/// never read as values: a(0), a(1), b(0), d(n-1), e(n-2), e(n-1) count as 0.
template <class T>
KOKKOS_INLINE_FUNCTION void penta_mask(int j, int n, T& a, T& b, T& d, T& e) {
  if (j < 2) a = T(0);
  if (j < 1) b = T(0);
  if (j > n - 2) d = T(0);
  if (j > n - 3) e = T(0);
}

/// 2x2 matrix (PCR-Penta's blocks; the chunk maps of the shared solve).
template <class T>
struct M2 {
  T a00, a01, a10, a11;
  KOKKOS_INLINE_FUNCTION M2 operator*(const M2& o) const {
    return {a00 * o.a00 + a01 * o.a10, a00 * o.a01 + a01 * o.a11, a10 * o.a00 + a11 * o.a10,
            a10 * o.a01 + a11 * o.a11};
  }
  KOKKOS_INLINE_FUNCTION T det() const { return a00 * a11 - a01 * a10; }
  /// Inverse (through 1/det; the caller checks det).
  KOKKOS_INLINE_FUNCTION M2 inverse() const {
    const T r = T(1) / det();
    return {a11 * r, -a01 * r, -a10 * r, a00 * r};
  }
};

/// Corner data of one periodic system (see the file comment).
template <class T>
struct PentaCorners {
  T c0 = 0, c1 = 0;                // G = -diag(c0, c1)
  T k00 = 0, k01 = 0, k11 = 0;     // K = G^-1 B (k10 = 0)
  T en2 = 0, dn1 = 0, en1 = 0;     // C
  int bad = 0;                     // 1 or 2 when c0 or c1 is not a usable pivot

  KOKKOS_INLINE_FUNCTION void set(T c0_, T c1_, T a0, T a1, T b0, T en2_, T dn1_, T en1_) {
    c0 = c0_, c1 = c1_, en2 = en2_, dn1 = dn1_, en1 = en1_;
    bad = usable_pivot(c0) ? (usable_pivot(c1) ? 0 : 2) : 1;
    k00 = -a0 / c0;
    k01 = -b0 / c0;
    k11 = -a1 / c1;
  }
  /// Row j of A' from row j of A (b, c, d of the row; a and e are unchanged).
  KOKKOS_INLINE_FUNCTION void modify(int j, int n, T& b, T& c, T& d) const {
    if (j < 2) c += c;
    if (j == n - 2) {
      c -= en2 * k00;
      d -= en2 * k01;
    }
    if (j == n - 1) {
      b -= dn1 * k00;
      c -= dn1 * k01 + en1 * k11;
    }
  }
  /// Row j of the two columns of U.
  KOKKOS_INLINE_FUNCTION T u1(int j, int n) const {
    return j == 0 ? -c0 : (j == n - 2 ? en2 : (j == n - 1 ? dn1 : T(0)));
  }
  KOKKOS_INLINE_FUNCTION T u2(int j, int n) const { return j == 1 ? -c1 : (j == n - 1 ? en1 : T(0)); }
  /// V^T v for v given by its rows 0, 1, n-2, n-1.
  KOKKOS_INLINE_FUNCTION void vt(T v0, T v1, T vn2, T vn1, T& r0, T& r1) const {
    r0 = v0 + k00 * vn2 + k01 * vn1;
    r1 = v1 + k11 * vn1;
  }
};

/// Solves the 2x2 system H w = r of the Woodbury correction; false when H is
/// singular or not finite.
template <class T>
KOKKOS_INLINE_FUNCTION bool solve2(T h00, T h01, T h10, T h11, T r0, T r1, T& w0, T& w1) {
  const T det = h00 * h11 - h01 * h10;
  const T inv = T(1) / det;
  w0 = (h11 * r0 - h01 * r1) * inv;
  w1 = (h00 * r1 - h10 * r0) * inv;
  return usable_pivot(det);
}

/// Loads UU rows jb.. of W lanes of a batch before any of them is used.
template <int UU, int W, class B, class T>
KOKKOS_INLINE_FUNCTION void load_rows(const B& b, int s0, int jb, int nlc, T (&v)[UU][W]) {
  const auto* p = &b(s0, jb);
  const size_t rs = batch_traits<B>::row_stride(b), ls = batch_traits<B>::lane_stride(b);
  for (int u = 0; u < UU; ++u)
    for (int l = 0; l < nlc; ++l) v[u][l] = p[u * rs + l * ls];
}

/// The arguments of a per-system pentadiagonal kernel.
template <class BA, class BB, class BC, class BD, class BE, class BY, class BX, class Info>
struct PentaArgs {
  BA a;
  BB b;
  BC c;
  BD d;
  BE e;
  BY y;
  BX x;
  Info info;
};

/// The per-system elimination on a pack of LanePack systems as vectors
/// (CPUs): p, q and z of the last two rows, vector by vector (index 0: row
/// j-1 forward, j+1 backward; 1: row j-2, j+2), and the pivot check (the sum
/// of mu * (1/mu), not finite once a pivot is zero or not finite).
template <class T>
struct PentaPackRows {
  using P = LanePack<T>;
  using V = typename P::V;
  static constexpr int K = P::K;
  V p[2][K], q[2][K], z[2][K], check;
  KOKKOS_INLINE_FUNCTION PentaPackRows() {
    const V zero{};
    check = zero;
    for (int k = 0; k < K; ++k) p[0][k] = p[1][k] = q[0][k] = q[1][k] = z[0][k] = z[1][k] = zero;
  }
  /// Row j (of n) forward, vector k: the row's a .. e and y at r[0] .. r[5]
  /// (entries outside the matrix count as 0, penta_mask); its p, q, z out.
  KOKKOS_INLINE_FUNCTION void forward(const int j, const int n, const int k, const T* const (&r)[6], V& pj, V& qj,
                                      V& zj) {
    const V zero{};
    const V al = j >= 2 ? P::vload(r[0], k) : zero;
    const V bl = j >= 1 ? P::vload(r[1], k) : zero;
    const V dl = j <= n - 2 ? P::vload(r[3], k) : zero;
    const V el = j <= n - 3 ? P::vload(r[4], k) : zero;
    V beta, w;
    eliminate(k, al, bl, P::vload(r[2], k), dl, el, P::vload(r[5], k), pj, qj, zj, beta, w);
  }
  /// The same on a row's values (a .. e masked, y); also returns the row's
  /// beta and 1/mu, which further right-hand sides take.
  KOKKOS_INLINE_FUNCTION void eliminate(const int k, const V al, const V bl, const V cl, const V dl, const V el,
                                        const V yl, V& pj, V& qj, V& zj, V& beta, V& w) {
    beta = bl - al * p[1][k];
    const V mu = cl - al * q[1][k] - beta * p[0][k];
    w = T(1) / mu;
    check += mu * w;
    pj = (dl - beta * q[0][k]) * w;
    qj = el * w;
    zj = (yl - al * z[1][k] - beta * z[0][k]) * w;
    p[1][k] = p[0][k], p[0][k] = pj;
    q[1][k] = q[0][k], q[0][k] = qj;
    z[1][k] = z[0][k], z[0][k] = zj;
  }
  /// Clears the state before the backward pass.
  KOKKOS_INLINE_FUNCTION void turn() {
    const V zero{};
    for (int k = 0; k < K; ++k) z[0][k] = z[1][k] = zero;
  }
  /// Row j backward, vector k: x_j = z_j - p_j x_{j+1} - q_j x_{j+2} from the
  /// row's z, p, q at zr, pr, qr.
  KOKKOS_INLINE_FUNCTION V backward(const int k, const T* zr, const T* pr, const T* qr) {
    const V xj = P::vload(zr, k) - P::vload(pr, k) * z[0][k] - P::vload(qr, k) * z[1][k];
    z[1][k] = z[0][k], z[0][k] = xj;
    return xj;
  }
};

/// The periodic elimination on a pack (CPUs): PentaPackRows on the rows of
/// A' (PentaCorners' changes to rows 0, 1, n-2 and n-1, vector by vector),
/// the two columns of Z = A'^-1 U beside z (their states flushed every 8th
/// row, as in the lane loops), and the 2x2 Woodbury solve H w = V^T z.
template <class T>
struct PentaPeriodicPack {
  using P = LanePack<T>;
  using V = typename P::V;
  static constexpr int K = P::K;
  PentaPackRows<T> pk;
  V c0[K], c1[K], k00[K], k01[K], k11[K], en2[K], dn1[K], en1[K];
  V u[2][2][K];  // column cc's rows j-1, j-2 (forward) / j+1, j+2 (backward)

  /// Vector k of the corners: c(s,0), c(s,1), a(s,0), a(s,1), b(s,0),
  /// e(s,n-2), d(s,n-1), e(s,n-1) of the pack's systems.
  KOKKOS_INLINE_FUNCTION void corners(const int k, const V c0k, const V c1k, const V a0, const V a1, const V b0,
                                      const V en2k, const V dn1k, const V en1k) {
    const V zero = V{} + T(0);
    c0[k] = c0k, c1[k] = c1k;
    pk.check += c0k * (T(1) / c0k) + c1k * (T(1) / c1k);
    k00[k] = -a0 / c0k;
    k01[k] = -b0 / c0k;
    k11[k] = -a1 / c1k;
    en2[k] = en2k, dn1[k] = dn1k, en1[k] = en1k;
    for (int cc = 0; cc < 2; ++cc) u[cc][0][k] = u[cc][1][k] = zero;
  }
  /// Row j (of n) forward, vector k, from the row's a .. e and y at r[0] ..
  /// r[5]: its p, q, z and the columns' values v out.
  KOKKOS_INLINE_FUNCTION void forward(const int j, const int n, const int k, const T* const (&r)[6], V& pj, V& qj,
                                      V& zj, V (&v)[2]) {
    const V zero = V{} + T(0);
    const V al = j >= 2 ? P::vload(r[0], k) : zero;
    V bl = j >= 1 ? P::vload(r[1], k) : zero;
    V cl = P::vload(r[2], k);
    V dl = j <= n - 2 ? P::vload(r[3], k) : zero;
    const V el = j <= n - 3 ? P::vload(r[4], k) : zero;
    if (j < 2) cl += cl;
    if (j == n - 2) {
      cl -= en2[k] * k00[k];
      dl -= en2[k] * k01[k];
    }
    if (j == n - 1) {
      bl -= dn1[k] * k00[k];
      cl -= dn1[k] * k01[k] + en1[k] * k11[k];
    }
    V beta, w;
    pk.eliminate(k, al, bl, cl, dl, el, P::vload(r[5], k), pj, qj, zj, beta, w);
    // U: column 1 -c0 (row 0), en2 (n-2), dn1 (n-1); column 2 -c1 (row 1), en1 (n-1)
    const V rhs[2] = {j == 0 ? -c0[k] : (j == n - 2 ? en2[k] : (j == n - 1 ? dn1[k] : zero)),
                      j == 1 ? -c1[k] : (j == n - 1 ? en1[k] : zero)};
    for (int cc = 0; cc < 2; ++cc) {
      v[cc] = (rhs[cc] - al * u[cc][1][k] - beta * u[cc][0][k]) * w;
      shift(cc, k, v[cc], (j & 7) == 7);
    }
  }
  KOKKOS_INLINE_FUNCTION void turn() {
    const V zero = V{} + T(0);
    pk.turn();
    for (int cc = 0; cc < 2; ++cc)
      for (int k = 0; k < K; ++k) u[cc][0][k] = u[cc][1][k] = zero;
  }
  /// Row j backward, vector k: x_j from the row's z, p, q at zr, pr, qr, the
  /// columns' rows from ur (values out in v).
  KOKKOS_INLINE_FUNCTION V backward(const int j, const int k, const T* zr, const T* pr, const T* qr,
                                    const T* const (&ur)[2], V (&v)[2]) {
    const V xj = pk.backward(k, zr, pr, qr);
    const V pj = P::vload(pr, k), qj = P::vload(qr, k);
    for (int cc = 0; cc < 2; ++cc) {
      v[cc] = P::vload(ur[cc], k) - pj * u[cc][0][k] - qj * u[cc][1][k];
      shift(cc, k, v[cc], (j & 7) == 0);
    }
    return xj;
  }
  /// After the backward pass (the states hold rows 0 and 1): vector k of w
  /// = H^-1 V^T x, H = I + V^T Z (PentaCorners::vt), from rows n-2, n-1 of
  /// x and of the columns; det H out (also in the pack's check).
  KOKKOS_INLINE_FUNCTION void woodbury(const int k, const V xn2, const V xn1, const V (&un2)[2], const V (&un1)[2],
                                       V (&w)[2], V& det) {
    V h[2][2];
    for (int cc = 0; cc < 2; ++cc) {
      h[0][cc] = u[cc][0][k] + k00[k] * un2[cc] + k01[k] * un1[cc] + T(cc == 0 ? 1 : 0);
      h[1][cc] = u[cc][1][k] + k11[k] * un1[cc] + T(cc == 1 ? 1 : 0);
    }
    const V r0 = pk.z[0][k] + k00[k] * xn2 + k01[k] * xn1, r1 = pk.z[1][k] + k11[k] * xn1;
    det = h[0][0] * h[1][1] - h[0][1] * h[1][0];
    const V inv = T(1) / det;
    pk.check += det * inv;
    w[0] = (h[1][1] * r0 - h[0][1] * r1) * inv;
    w[1] = (h[0][0] * r1 - h[1][0] * r0) * inv;
  }

 private:
  KOKKOS_INLINE_FUNCTION void shift(const int cc, const int k, const V v, const bool flush) {
    u[cc][1][k] = flush ? P::flush_subnormal(u[cc][0][k]) : u[cc][0][k];
    u[cc][0][k] = flush ? P::flush_subnormal(v) : v;
  }
};

// ---------------------------------------------------------------------------
// Per-system coefficients.
// ---------------------------------------------------------------------------
template <class Exec, class BA, class BB, class BC, class BD, class BE, class BY, class BX, class Info, int W,
          int U, bool Periodic, bool Scratch, bool ZScratch = Scratch>
struct PentaPerSystem : ThomasBase<Exec, BX, batch_value_t<BX>, W>,
                        PentaArgs<BA, BB, BC, BD, BE, BY, BX, Info> {
  using T = batch_value_t<BX>;
  using Base = ThomasBase<Exec, BX, T, W>;
  using typename Base::member_type;
  // stored rows: p (0), q (1), z (2 in scratch when ZScratch; x itself
  // otherwise), and for periodic systems the two columns of Z = A'^-1 U
  static_assert(Scratch || !ZScratch, "kband: z sits in scratch only in the Scratch variant");
  static constexpr int kZ = 2;
  static constexpr int kU1 = ZScratch ? 3 : 2;
  static constexpr int kU2 = kU1 + 1;
  static constexpr int kBufs = (ZScratch ? 3 : 2) + (Periodic ? 2 : 0);
  using Args = PentaArgs<BA, BB, BC, BD, BE, BY, BX, Info>;
  using Args::a, Args::b, Args::c, Args::d, Args::e, Args::y, Args::x, Args::info;

  PentaPerSystem(const Base& base, const Args& args) : Base(base), Args(args) {}

  /// Per-lane state: the two previous rows of each recurrence (index 0: row
  /// j-1 forward / j+1 backward, 1: row j-2 / j+2); v: the columns of Z.
  struct State {
    T p[2][W], q[2][W], z[2][W], v1[2][W], v2[2][W];
    PentaCorners<T> cor[W];
    int bad[W];
  };

  KOKKOS_INLINE_FUNCTION T& zref(const LaneStore<T>& st, int s0, int j, int l) const {
    return ZScratch ? st(kZ, j, l) : x(s0 + l, j);
  }

  /// Whether a thread's full set of lanes may run as packs of
  /// LanePack<T>::L (CPUs, Global solves and Scratch ones with z in x; see
  /// packed).
  static constexpr bool kPacks = W > 1 && W % LanePack<T>::L == 0 && !ZScratch;

  /// Whether a thread's full set of lanes of a contiguous batch runs as one
  /// pack through transposed blocks (CPUs, Global solves; see
  /// solve_contiguous_pack).
  static constexpr bool kContiguousPack = KBAND_HOST_VECTOR_PACKS && W == LanePack<T>::L && !ZScratch &&
                                          batch_traits<BX>::layout == Layout::Contiguous;

  /// Whether the forward pass runs forward_pipelined (where the rows sit in
  /// level-0 scratch: the small teams that Auto gives interleaved and
  /// grouped batches; H100, 2^27 points, double n = 128, 8 threads a team:
  /// bw/copy 0.61 -> 0.65 interleaved, 0.65 -> 0.71 grouped; 248-252
  /// registers against 140-146).
#ifndef KBAND_PENTA_PIPELINED
#define KBAND_PENTA_PIPELINED 1
#endif
  static constexpr bool kPipelined = KBAND_PENTA_PIPELINED && is_device_exec<Exec>::value && Scratch && !Periodic &&
                                     U > 1 && batch_traits<BX>::layout != Layout::Contiguous;

  KOKKOS_FUNCTION void operator()(const member_type& m) const {
    int nl;
    const int s0 = this->first_system(m, nl);
    if (nl == 0) return;
    // one store a thread: in team scratch each call takes more of it
    const LaneStore<T> st = this->store(m, s0, kBufs);
    if constexpr (kPacks) {
      if (nl == W && packed(st, s0)) {
        for (int k = 0; k < W / LanePack<T>::L; ++k)
          solve_packed(s0 + k * LanePack<T>::L, st.from_lane(k * LanePack<T>::L));
        return;
      }
    }
    if constexpr (kContiguousPack) {
      if (nl == W) {
        solve_contiguous_pack(s0, st);
        return;
      }
    }
    const int nlc = W == 1 ? 1 : nl;
    const int n = this->n;
    State S;
    for (int l = 0; l < nlc; ++l) {
      for (int k = 0; k < 2; ++k) S.p[k][l] = S.q[k][l] = S.z[k][l] = S.v1[k][l] = S.v2[k][l] = T(0);
      S.bad[l] = 0;
      if (Periodic) {
        const int s = s0 + l;
        S.cor[l].set(c(s, 0), c(s, 1), a(s, 0), a(s, 1), b(s, 0), e(s, n - 2), d(s, n - 1), e(s, n - 1));
        S.bad[l] = S.cor[l].bad;
      }
    }
    int j = 0;
    if constexpr (kPipelined)
      if (this->level == 0) j = forward_pipelined(st, s0, nlc, S);
    for (; j + U <= n; j += U) forward<U>(st, s0, j, nlc, S);
    for (; j < n; ++j) forward<1>(st, s0, j, nlc, S);
    for (int l = 0; l < nlc; ++l)
      for (int k = 0; k < 2; ++k) S.z[k][l] = S.v1[k][l] = S.v2[k][l] = T(0);
    j = n - 1;
    for (; j - U + 1 >= 0; j -= U) backward<U>(st, s0, j, nlc, S);
    for (; j >= 0; --j) backward<1>(st, s0, j, nlc, S);
    if (Periodic) {
      // S.z/v1/v2[0] hold row 0, [1] row 1; rows n-2, n-1 are stored.
      T w0[W], w1[W];
      for (int l = 0; l < nlc; ++l) {
        const PentaCorners<T>& K = S.cor[l];
        T h00, h01, h10, h11, r0, r1;
        K.vt(S.v1[0][l], S.v1[1][l], st(kU1, n - 2, l), st(kU1, n - 1, l), h00, h10);
        K.vt(S.v2[0][l], S.v2[1][l], st(kU2, n - 2, l), st(kU2, n - 1, l), h01, h11);
        K.vt(S.z[0][l], S.z[1][l], zref(st, s0, n - 2, l), zref(st, s0, n - 1, l), r0, r1);
        const bool ok = solve2(T(1) + h00, h01, h10, T(1) + h11, r0, r1, w0[l], w1[l]);
        S.bad[l] = (S.bad[l] == 0 && !ok) ? n : S.bad[l];
      }
      for (int jj = 0; jj < n; ++jj)
        for (int l = 0; l < nlc; ++l)
          x(s0 + l, jj) = zref(st, s0, jj, l) - w0[l] * st(kU1, jj, l) - w1[l] * st(kU2, jj, l);
    }
    for (int l = 0; l < nlc; ++l) {
      info(s0 + l) = S.bad[l];
      if (S.bad[l] != 0)
        for (int jj = 0; jj < n; ++jj) x(s0 + l, jj) = this->nan;
    }
  }

  /// Whether every pack of LanePack<T>::L systems from s0 lies at
  /// consecutive addresses in a .. e, y, x and the workspace.
  KOKKOS_INLINE_FUNCTION bool packed(const LaneStore<T>& st, int s0) const {
    constexpr int L = LanePack<T>::L;
    if (st.lane != 1) return false;
    return packs_adjacent<L>(s0, W / L, a, b, c, d, e, y, x);
  }

  /// The Global solve of one pack of systems from s (CPUs): the lane loops'
  /// operations, in their order, on vectors, vector by vector within a row.
  /// Pivots are checked once, at the end, as in thomas' packed solve: a zero
  /// or non-finite pivot mu makes mu * (1/mu), and so the pack's sum of
  /// them, non-finite; every lane is then walked again on its own for its
  /// first bad row (info) and its x filled with NaN. Periodic (n >= 5):
  /// PentaPeriodicPack's rows (the columns of Z to the workspace's third and
  /// fourth buffers), the Woodbury weights, and a third pass x = z - w0 Z_1
  /// - w1 Z_2; the check also covers c(s,0), c(s,1) and det H (n for a
  /// singular H).
  KOKKOS_INLINE_FUNCTION void solve_packed(const int s, const LaneStore<T>& st) const {
    using P = LanePack<T>;
    using V = typename P::V;
    constexpr int K = P::K;
    const int n = this->n;
    T* const pw = &st(0, 0, 0);
    T* const qw = &st(1, 0, 0);
    T* const uw[2] = {Periodic ? &st(kU1, 0, 0) : nullptr, Periodic ? &st(kU2, 0, 0) : nullptr};
    const T* const src[6] = {&a(s, 0), &b(s, 0), &c(s, 0), &d(s, 0), &e(s, 0), &y(s, 0)};
    const size_t rs[6] = {batch_traits<BA>::row_stride(a), batch_traits<BB>::row_stride(b),
                          batch_traits<BC>::row_stride(c), batch_traits<BD>::row_stride(d),
                          batch_traits<BE>::row_stride(e), batch_traits<BY>::row_stride(y)};
    T* const xp = &x(s, 0);
    const size_t xrs = batch_traits<BX>::row_stride(x);
    std::conditional_t<Periodic, PentaPeriodicPack<T>, PentaPackRows<T>> pk;
    if constexpr (Periodic)
      for (int k = 0; k < K; ++k)
        pk.corners(k, P::vload(src[2], k), P::vload(src[2] + rs[2], k), P::vload(src[0], k),
                   P::vload(src[0] + rs[0], k), P::vload(src[1], k), P::vload(src[4] + (n - 2) * rs[4], k),
                   P::vload(src[3] + (n - 1) * rs[3], k), P::vload(src[4] + (n - 1) * rs[4], k));
    for (int j = 0; j < n; ++j) {
      const T* const r[6] = {src[0] + j * rs[0], src[1] + j * rs[1], src[2] + j * rs[2],
                             src[3] + j * rs[3], src[4] + j * rs[4], src[5] + j * rs[5]};
      for (int k = 0; k < K; ++k) {
        V pj, qj, zj;
        if constexpr (Periodic) {
          V v[2];
          pk.forward(j, n, k, r, pj, qj, zj, v);
          for (int cc = 0; cc < 2; ++cc) P::vstore(uw[cc] + j * st.row, k, v[cc]);
        } else {
          pk.forward(j, n, k, r, pj, qj, zj);
        }
        P::vstore(pw + j * st.row, k, pj);
        P::vstore(qw + j * st.row, k, qj);
        P::vstore(xp + j * xrs, k, zj);
      }
    }
    pk.turn();
    for (int j = n - 1; j >= 0; --j)
      for (int k = 0; k < K; ++k) {
        if constexpr (Periodic) {
          const T* const ur[2] = {uw[0] + j * st.row, uw[1] + j * st.row};
          V v[2];
          P::vstore(xp + j * xrs, k, pk.backward(j, k, xp + j * xrs, pw + j * st.row, qw + j * st.row, ur, v));
          for (int cc = 0; cc < 2; ++cc) P::vstore(uw[cc] + j * st.row, k, v[cc]);
        } else {
          P::vstore(xp + j * xrs, k, pk.backward(k, xp + j * xrs, pw + j * st.row, qw + j * st.row));
        }
      }
    if constexpr (Periodic) {
      V w[K][2];
      alignas(64) T det[P::L];
      for (int k = 0; k < K; ++k) {
        const V un2[2] = {P::vload(uw[0] + (n - 2) * st.row, k), P::vload(uw[1] + (n - 2) * st.row, k)};
        const V un1[2] = {P::vload(uw[0] + (n - 1) * st.row, k), P::vload(uw[1] + (n - 1) * st.row, k)};
        V dk;
        pk.woodbury(k, P::vload(xp + (n - 2) * xrs, k), P::vload(xp + (n - 1) * xrs, k), un2, un1, w[k], dk);
        P::vstore(det, k, dk);
      }
      for (int j = 0; j < n; ++j)
        for (int k = 0; k < K; ++k)
          P::vstore(xp + j * xrs, k,
                    P::vload(xp + j * xrs, k) - w[k][0] * P::vload(uw[0] + j * st.row, k) -
                        w[k][1] * P::vload(uw[1] + j * st.row, k));
      finish_pack(s, pk.pk.check, det);
    } else {
      finish_pack(s, pk.check);
    }
  }

  /// The Global solve of the L = LanePack<T>::L systems from s of a
  /// contiguous batch (CPUs) as one pack, thomas' transposed blocks
  /// (ThomasPerSystem::solve_contiguous_pack): blocks of kRows rows of a .. e
  /// and y copied into a buffer that holds the L systems side by side, p and
  /// q to the workspace in that form, z to x through the buffer; the
  /// recurrences and the pivot check are solve_packed's. Periodic: those of
  /// solve_packed, the columns of Z to the workspace's third and
  /// fourth buffers in the same form, and a third pass through x.
  static constexpr int kRows = 32;
  KOKKOS_INLINE_FUNCTION void solve_contiguous_pack(const int s, const LaneStore<T>& st) const {
    using P = LanePack<T>;
    using V = typename P::V;
    constexpr int K = P::K, L = P::L, B = kRows;
    const int n = this->n;
    T* const pw = &st(0, 0, 0);  // row j of p at pw + j L
    T* const qw = &st(1, 0, 0);
    T* const uw[2] = {Periodic ? &st(kU1, 0, 0) : nullptr, Periodic ? &st(kU2, 0, 0) : nullptr};
    const T* const src[6] = {&a(s, 0), &b(s, 0), &c(s, 0), &d(s, 0), &e(s, 0), &y(s, 0)};
    const size_t ls[6] = {batch_traits<BA>::lane_stride(a), batch_traits<BB>::lane_stride(b),
                          batch_traits<BC>::lane_stride(c), batch_traits<BD>::lane_stride(d),
                          batch_traits<BE>::lane_stride(e), batch_traits<BY>::lane_stride(y)};
    T* const xp = &x(s, 0);
    const size_t xls = batch_traits<BX>::lane_stride(x);
    alignas(64) T buf[6][B * L];  // a, b, c, d, e, y (then z, then x)
    T* const zb = buf[5];
    using Rows = std::conditional_t<Periodic, PentaPeriodicPack<T>, PentaPackRows<T>>;
    Rows pk;
    if constexpr (Periodic) {
      // the corners: rows 0, 1 and n-2, n-1 of the L systems side by side
      alignas(64) T cr[5][2 * L];
      for (int v = 0; v < 5; ++v) {
        rows_to_pack<L>(src[v], ls[v], 0, 2, cr[v]);
        rows_to_pack<L>(src[v], ls[v], n - 2, 2, buf[v]);
      }
      for (int k = 0; k < K; ++k)
        pk.corners(k, P::vload(cr[2], k), P::vload(cr[2] + L, k), P::vload(cr[0], k), P::vload(cr[0] + L, k),
                   P::vload(cr[1], k), P::vload(buf[4], k), P::vload(buf[3] + L, k), P::vload(buf[4] + L, k));
    }
    for (int j0 = 0; j0 < n; j0 += B) {
      const int nb = n - j0 < B ? n - j0 : B;
      if (j0 + B < n)
        for (int v = 0; v < 6; ++v) prefetch_rows<L>(src[v], ls[v], j0 + B, n - j0 - B < B ? n - j0 - B : B);
      for (int v = 0; v < 6; ++v) rows_to_pack<L>(src[v], ls[v], j0, nb, buf[v]);
      for (int u = 0; u < nb; ++u) {
        const size_t j = static_cast<size_t>(j0 + u);
        const T* const r[6] = {buf[0] + u * L, buf[1] + u * L, buf[2] + u * L,
                               buf[3] + u * L, buf[4] + u * L, zb + u * L};
        for (int k = 0; k < K; ++k) {
          V pj, qj, zj;
          if constexpr (Periodic) {
            V v[2];
            pk.forward(j0 + u, n, k, r, pj, qj, zj, v);
            for (int cc = 0; cc < 2; ++cc) P::vstore(uw[cc] + j * L, k, v[cc]);
          } else {
            pk.forward(j0 + u, n, k, r, pj, qj, zj);
          }
          P::vstore(pw + j * L, k, pj);
          P::vstore(qw + j * L, k, qj);
          P::vstore(zb + u * L, k, zj);
        }
      }
      pack_to_rows<L>(zb, xp, xls, j0, nb);
    }
    pk.turn();
    for (int j0 = (n - 1) / B * B; j0 >= 0; j0 -= B) {
      const int nb = n - j0 < B ? n - j0 : B;
      rows_to_pack<L>(static_cast<const T*>(xp), xls, j0, nb, zb);
      for (int u = nb - 1; u >= 0; --u) {
        const size_t j = static_cast<size_t>(j0 + u);
        for (int k = 0; k < K; ++k) {
          if constexpr (Periodic) {
            const T* const ur[2] = {uw[0] + j * L, uw[1] + j * L};
            V v[2];
            P::vstore(zb + u * L, k, pk.backward(j0 + u, k, zb + u * L, pw + j * L, qw + j * L, ur, v));
            for (int cc = 0; cc < 2; ++cc) P::vstore(uw[cc] + j * L, k, v[cc]);
          } else {
            P::vstore(zb + u * L, k, pk.backward(k, zb + u * L, pw + j * L, qw + j * L));
          }
        }
      }
      pack_to_rows<L>(zb, xp, xls, j0, nb);
    }
    if constexpr (Periodic) {
      // rows n-2, n-1 of x and of the columns give the weights; then x -=
      // w0 Z_1 + w1 Z_2, block by block
      V w[K][2];
      alignas(64) T det[L];
      rows_to_pack<L>(static_cast<const T*>(xp), xls, n - 2, 2, zb);
      for (int k = 0; k < K; ++k) {
        const V un2[2] = {P::vload(uw[0] + (n - 2) * L, k), P::vload(uw[1] + (n - 2) * L, k)};
        const V un1[2] = {P::vload(uw[0] + (n - 1) * L, k), P::vload(uw[1] + (n - 1) * L, k)};
        V dk;
        pk.woodbury(k, P::vload(zb, k), P::vload(zb + L, k), un2, un1, w[k], dk);
        P::vstore(det, k, dk);
      }
      for (int j0 = 0; j0 < n; j0 += B) {
        const int nb = n - j0 < B ? n - j0 : B;
        rows_to_pack<L>(static_cast<const T*>(xp), xls, j0, nb, zb);
        for (int u = 0; u < nb; ++u) {
          const size_t j = static_cast<size_t>(j0 + u);
          for (int k = 0; k < K; ++k)
            P::vstore(zb + u * L, k,
                      P::vload(zb + u * L, k) - w[k][0] * P::vload(uw[0] + j * L, k) -
                          w[k][1] * P::vload(uw[1] + j * L, k));
        }
        pack_to_rows<L>(zb, xp, xls, j0, nb);
      }
      finish_pack(s, pk.pk.check, det);
    } else {
      finish_pack(s, pk.check);
    }
  }

  /// info and NaN for the L systems of a pack from s whose pivot check
  /// (the sum of mu * (1/mu)) is not finite; periodic packs pass det H of
  /// each lane (n where it is not usable and no pivot was bad).
  template <class V>
  KOKKOS_INLINE_FUNCTION void finish_pack(const int s, const V& check, const T* det = nullptr) const {
    using P = LanePack<T>;
    const bool ok = P::finite(check);
    for (int l = 0; l < P::L; ++l) {
      int bad = ok ? 0 : first_bad_pivot(s + l);
      if (bad == 0 && !ok && det != nullptr && !usable_pivot(det[l])) bad = this->n;
      info(s + l) = bad;
      if (bad != 0)
        for (int j = 0; j < this->n; ++j) x(s + l, j) = this->nan;
    }
  }

  /// The row (1-based) of system s's first zero or non-finite pivot mu, 0
  /// if none; periodic: of A' (the elimination's matrix), 1 or 2 when c(s,0)
  /// or c(s,1) is not usable (PentaCorners::bad).
  KOKKOS_INLINE_FUNCTION int first_bad_pivot(const int s) const {
    const int n = this->n;
    PentaCorners<T> cor;
    if (Periodic) {
      cor.set(c(s, 0), c(s, 1), a(s, 0), a(s, 1), b(s, 0), e(s, n - 2), d(s, n - 1), e(s, n - 1));
      if (cor.bad != 0) return cor.bad;
    }
    T p1 = T(0), p2 = T(0), q1 = T(0), q2 = T(0);
    for (int j = 0; j < n; ++j) {
      T al = a(s, j), bl = b(s, j), cl = c(s, j), dl = d(s, j), el = e(s, j);
      penta_mask(j, n, al, bl, dl, el);
      if (Periodic) cor.modify(j, n, bl, cl, dl);
      const T beta = bl - al * p2;
      const T mu = cl - al * q2 - beta * p1;
      if (!usable_pivot(mu)) return j + 1;
      const T w = T(1) / mu;
      p2 = p1, p1 = (dl - beta * q1) * w;
      q2 = q1, q1 = el * w;
    }
    return 0;
  }

  /// The correction's columns (periodic) decay away from the corners: every
  /// 8th row the recurrences' states lose their subnormal values (both rows
  /// of a state: either would bring them back), so that at most 8 rows of a
  /// system compute with them (flush_subnormal; one core of a Xeon, n =
  /// 1024, 2^20 points, ns a point: grouped 34 -> 18, contiguous 23 ->
  /// 15; flushing every row cost contiguous n = 256 30 %).
  KOKKOS_INLINE_FUNCTION static void flush_columns(State& S, int l) {
    for (int r = 0; r < 2; ++r) {
      S.v1[r][l] = flush_subnormal(S.v1[r][l]);
      S.v2[r][l] = flush_subnormal(S.v2[r][l]);
    }
  }

  /// UU rows of a .. e and y of a thread's lanes.
  template <int UU>
  struct Rows {
    T a[UU][W], b[UU][W], c[UU][W], d[UU][W], e[UU][W], y[UU][W];
  };

  template <int UU>
  KOKKOS_INLINE_FUNCTION void load(int s0, int jb, int nlc, Rows<UU>& r) const {
    load_rows<UU>(a, s0, jb, nlc, r.a);
    load_rows<UU>(b, s0, jb, nlc, r.b);
    load_rows<UU>(c, s0, jb, nlc, r.c);
    load_rows<UU>(d, s0, jb, nlc, r.d);
    load_rows<UU>(e, s0, jb, nlc, r.e);
    load_rows<UU>(y, s0, jb, nlc, r.y);
  }

  template <int UU>
  KOKKOS_INLINE_FUNCTION void forward(const LaneStore<T>& st, int s0, int jb, int nlc, State& S) const {
    Rows<UU> r;
    load<UU>(s0, jb, nlc, r);
    eliminate<UU>(st, s0, jb, nlc, S, r);
  }

  /// GPUs, non-periodic Scratch: the forward pass with the next block's
  /// loads issued before the current block's rows are eliminated (two
  /// register blocks), so that a thread of the variant's small teams keeps
  /// its loads in flight while it computes; returns the first row left.
  KOKKOS_INLINE_FUNCTION int forward_pipelined(const LaneStore<T>& st, int s0, int nlc, State& S) const {
    const int n = this->n;
    if (n < U) return 0;
    Rows<U> r0, r1;
    load<U>(s0, 0, nlc, r0);
    int j = 0;
    while (true) {
      const bool more = j + 2 * U <= n;
      if (more) load<U>(s0, j + U, nlc, r1);
      eliminate<U>(st, s0, j, nlc, S, r0);
      j += U;
      if (!more) return j;
      const bool more2 = j + 2 * U <= n;
      if (more2) load<U>(s0, j + U, nlc, r0);
      eliminate<U>(st, s0, j, nlc, S, r1);
      j += U;
      if (!more2) return j;
    }
  }

  template <int UU>
  KOKKOS_INLINE_FUNCTION void eliminate(const LaneStore<T>& st, int s0, int jb, int nlc, State& S,
                                        const Rows<UU>& r) const {
    const int n = this->n;
    for (int u = 0; u < UU; ++u) {
      const int j = jb + u;
      for (int l = 0; l < nlc; ++l) {
        T al = r.a[u][l], bl = r.b[u][l], cl = r.c[u][l], dl = r.d[u][l], el = r.e[u][l];
        penta_mask(j, n, al, bl, dl, el);
        if (Periodic) S.cor[l].modify(j, n, bl, cl, dl);
        const T beta = bl - al * S.p[1][l];
        const T mu = cl - al * S.q[1][l] - beta * S.p[0][l];
        S.bad[l] = (S.bad[l] == 0 && !usable_pivot(mu)) ? j + 1 : S.bad[l];
        const T w = T(1) / mu;
        const T pj = (dl - beta * S.q[0][l]) * w, qj = el * w;
        const T zj = (r.y[u][l] - al * S.z[1][l] - beta * S.z[0][l]) * w;
        S.p[1][l] = S.p[0][l], S.p[0][l] = pj;
        S.q[1][l] = S.q[0][l], S.q[0][l] = qj;
        S.z[1][l] = S.z[0][l], S.z[0][l] = zj;
        st(0, j, l) = pj;
        st(1, j, l) = qj;
        zref(st, s0, j, l) = zj;
        if (Periodic) {
          const T v1 = (S.cor[l].u1(j, n) - al * S.v1[1][l] - beta * S.v1[0][l]) * w;
          const T v2 = (S.cor[l].u2(j, n) - al * S.v2[1][l] - beta * S.v2[0][l]) * w;
          S.v1[1][l] = S.v1[0][l], S.v1[0][l] = v1;
          S.v2[1][l] = S.v2[0][l], S.v2[0][l] = v2;
          st(kU1, j, l) = v1;
          st(kU2, j, l) = v2;
          if ((j & 7) == 7) flush_columns(S, l);
        }
      }
    }
  }

  template <int UU>
  KOKKOS_INLINE_FUNCTION void backward(const LaneStore<T>& st, int s0, int jb, int nlc, State& S) const {
    T pv[UU][W], qv[UU][W], zv[UU][W], v1v[UU][W], v2v[UU][W];
    for (int u = 0; u < UU; ++u)
      for (int l = 0; l < nlc; ++l) {
        pv[u][l] = st(0, jb - u, l);
        qv[u][l] = st(1, jb - u, l);
        zv[u][l] = zref(st, s0, jb - u, l);
        if (Periodic) {
          v1v[u][l] = st(kU1, jb - u, l);
          v2v[u][l] = st(kU2, jb - u, l);
        }
      }
    for (int u = 0; u < UU; ++u) {
      const int j = jb - u;
      for (int l = 0; l < nlc; ++l) {
        const T p = pv[u][l], q = qv[u][l];
        const T xj = zv[u][l] - p * S.z[0][l] - q * S.z[1][l];
        S.z[1][l] = S.z[0][l], S.z[0][l] = xj;
        if (Periodic) {
          const T v1 = v1v[u][l] - p * S.v1[0][l] - q * S.v1[1][l];
          const T v2 = v2v[u][l] - p * S.v2[0][l] - q * S.v2[1][l];
          S.v1[1][l] = S.v1[0][l], S.v1[0][l] = v1;
          S.v2[1][l] = S.v2[0][l], S.v2[0][l] = v2;
          st(kU1, j, l) = v1;
          st(kU2, j, l) = v2;
          if ((j & 7) == 0) flush_columns(S, l);
          zref(st, s0, j, l) = xj;
        } else {
          x(s0 + l, j) = xj;
        }
      }
    }
  }
};

// ---------------------------------------------------------------------------
// Shared coefficients: one matrix factored once (one device thread).
// ---------------------------------------------------------------------------
/// Chunks of the Registers variant's tables at most (a team's threads).
constexpr int kPentaTableChunks = 1024;

template <class T, class Mem>
struct PentaFactorData {
  Kokkos::View<T*, Mem> a, beta, w, p, q;  // L (a, beta, 1/mu) and U (p, q) of A'
  Kokkos::View<T*, Mem> z1, z2;            // periodic: Z = A'^-1 U
  Kokkos::View<T*, Mem> g1, g2;            // periodic: A'^-T V, so that V^T A'^-1 y = (g1.y, g2.y)
  Kokkos::View<T[4], Mem> hinv;            // periodic: H^-1, row-major
  Kokkos::View<int, Mem> info;
  // Registers variant: the rows are cut into tk chunks of tm rows. A chunk's
  // forward pass maps (z_{j0-1}, z_{j0-2}) linearly (for y = 0) to its last
  // two z, its backward pass (x_{j1+1}, x_{j1+2}) to (x_{j0}, x_{j0+1}).
  // tf[(r * tk + k) * 4 + ..] is the row-major product of the forward maps of
  // chunks k-2^r+1 .. k (from 0 when fewer), later ones on the left; tb the
  // product of the backward maps of chunks k .. k+2^r-1, lower ones on the
  // left; r < tr = ceil(log2 tk). hf(2j), hf(2j+1): the row of that forward
  // map for z_j of row j's chunk (how z_j moves with the chunk's input); hb
  // likewise for x_j. Empty when tk < 2 or tk > kPentaTableChunks.
  Kokkos::View<T*, Mem> tf, tb, hf, hb;
  int tk = 0, tm = 0, tr = 0;
  int n = 0;
  bool periodic = false;
};

/// One row of v = -(c1 s0 + c2 s1) w on the linear map m of a two-value
/// state (rows: s0, s1; columns: the chunk's input): v becomes s0, the old
/// s0 becomes s1.
template <class T>
KOKKOS_INLINE_FUNCTION void penta_map_step(M2<T>& m, T c1, T c2, T w) {
  const T h0 = -(c1 * m.a00 + c2 * m.a10) * w, h1 = -(c1 * m.a01 + c2 * m.a11) * w;
  m.a10 = m.a00, m.a11 = m.a01;
  m.a00 = h0, m.a01 = h1;
}

template <class T, class Mem, class VA, class VB, class VC, class VD, class VE>
struct PentaFactorKernel {
  PentaFactorData<T, Mem> f;
  VA a;
  VB b;
  VC c;
  VD d;
  VE e;

  /// Forward and backward solve of A' v = rhs in place (v holds rhs).
  KOKKOS_INLINE_FUNCTION void solve(const Kokkos::View<T*, Mem>& v) const {
    const int n = f.n;
    for (int j = 0; j < n; ++j) {
      T s = v(j);
      if (j >= 1) s -= f.beta(j) * v(j - 1);
      if (j >= 2) s -= f.a(j) * v(j - 2);
      v(j) = s * f.w(j);
    }
    for (int j = n - 2; j >= 0; --j) v(j) -= f.p(j) * v(j + 1) + (j + 2 < n ? f.q(j) * v(j + 2) : T(0));
  }
  /// A'^T g = rhs in place: U^T h = rhs forward, then L^T g = h backward.
  KOKKOS_INLINE_FUNCTION void solve_transposed(const Kokkos::View<T*, Mem>& g) const {
    const int n = f.n;
    for (int j = 1; j < n; ++j) g(j) -= f.p(j - 1) * g(j - 1) + (j >= 2 ? f.q(j - 2) * g(j - 2) : T(0));
    for (int j = n - 1; j >= 0; --j) {
      T s = g(j);
      if (j + 1 < n) s -= f.beta(j + 1) * g(j + 1);
      if (j + 2 < n) s -= f.a(j + 2) * g(j + 2);
      g(j) = s * f.w(j);
    }
  }

  KOKKOS_INLINE_FUNCTION void operator()(const int) const {
    const int n = f.n;
    PentaCorners<T> K;
    int bad = 0;
    if (f.periodic) {
      K.set(c(0), c(1), a(0), a(1), b(0), e(n - 2), d(n - 1), e(n - 1));
      bad = K.bad;
    }
    T p1 = 0, p2 = 0, q1 = 0, q2 = 0;
    for (int j = 0; j < n; ++j) {
      T al = j >= 2 ? a(j) : T(0), bl = j >= 1 ? b(j) : T(0), cl = c(j);
      T dl = j <= n - 2 ? d(j) : T(0), el = j <= n - 3 ? e(j) : T(0);
      if (f.periodic) K.modify(j, n, bl, cl, dl);
      const T beta = bl - al * p2;
      const T mu = cl - al * q2 - beta * p1;
      if (bad == 0 && !usable_pivot(mu)) bad = j + 1;
      const T w = T(1) / mu;
      f.a(j) = al;
      f.beta(j) = beta;
      f.w(j) = w;
      p2 = p1, p1 = (dl - beta * q1) * w;
      q2 = q1, q1 = el * w;
      f.p(j) = p1;
      f.q(j) = q1;
    }
    if (f.periodic && bad == 0) {
      for (int j = 0; j < n; ++j) {
        f.z1(j) = K.u1(j, n);
        f.z2(j) = K.u2(j, n);
        f.g1(j) = f.g2(j) = T(0);
      }
      solve(f.z1);
      solve(f.z2);
      // rows of V^T: (1, 0, .., k00, k01) and (0, 1, .., 0, k11)
      f.g1(0) = T(1), f.g1(n - 2) = K.k00, f.g1(n - 1) = K.k01;
      f.g2(1) = T(1), f.g2(n - 1) = K.k11;
      solve_transposed(f.g1);
      solve_transposed(f.g2);
      T h00, h01, h10, h11;
      K.vt(f.z1(0), f.z1(1), f.z1(n - 2), f.z1(n - 1), h00, h10);
      K.vt(f.z2(0), f.z2(1), f.z2(n - 2), f.z2(n - 1), h01, h11);
      h00 += T(1), h11 += T(1);
      // columns of H^-1: H^-1 e_0 and H^-1 e_1
      T i00, i10, i01, i11;
      const bool ok = solve2(h00, h01, h10, h11, T(1), T(0), i00, i10);
      solve2(h00, h01, h10, h11, T(0), T(1), i01, i11);
      if (!ok) bad = n;
      f.hinv(0) = i00, f.hinv(1) = i01, f.hinv(2) = i10, f.hinv(3) = i11;
      // Z and G decay away from the corners: no subnormal values for the
      // solves to multiply (see flush_subnormal)
      for (int j = 0; j < n; ++j) {
        f.z1(j) = flush_subnormal(f.z1(j));
        f.z2(j) = flush_subnormal(f.z2(j));
        f.g1(j) = flush_subnormal(f.g1(j));
        f.g2(j) = flush_subnormal(f.g2(j));
      }
    }
    if (f.tk > 1) tables();
    f.info() = bad;
  }

  KOKKOS_INLINE_FUNCTION void put(const Kokkos::View<T*, Mem>& t, int r, int k, const M2<T>& m) const {
    const size_t o = (static_cast<size_t>(r) * f.tk + k) * 4;
    t(o) = m.a00, t(o + 1) = m.a01, t(o + 2) = m.a10, t(o + 3) = m.a11;
  }
  KOKKOS_INLINE_FUNCTION M2<T> get(const Kokkos::View<T*, Mem>& t, int r, int k) const {
    const size_t o = (static_cast<size_t>(r) * f.tk + k) * 4;
    return {t(o), t(o + 1), t(o + 2), t(o + 3)};
  }
  /// The chunk maps of the Registers variant and their products.
  KOKKOS_INLINE_FUNCTION void tables() const {
    const int n = f.n, K = f.tk, M = f.tm;
    for (int k = 0; k < K; ++k) {
      const int j0 = k * M, j1 = j0 + M < n ? j0 + M : n;
      M2<T> g{T(1), T(0), T(0), T(1)}, h{T(1), T(0), T(0), T(1)};
      for (int j = j0; j < j1; ++j) {
        penta_map_step(g, f.beta(j), f.a(j), f.w(j));
        f.hf(2 * j) = g.a00, f.hf(2 * j + 1) = g.a01;
      }
      for (int j = j1 - 1; j >= j0; --j) {
        penta_map_step(h, f.p(j), f.q(j), T(1));
        f.hb(2 * j) = h.a00, f.hb(2 * j + 1) = h.a01;
      }
      put(f.tf, 0, k, g);
      put(f.tb, 0, k, h);
    }
    // each round in ranges of k, without a select per k: g++ 12 at -O3
    // with AVX-512 vectorised the loop that chose between the product and
    // the copy into wrong tb products (OpenMP teams of 5 threads, n = 79:
    // solutions off by 2e-12; perf_tests/RESULTS.md, 2026-11-27)
    for (int r = 1; r < f.tr; ++r) {
      const int off = 1 << (r - 1);
      const int kf = off < K ? off : K, kb = K - kf;  // products for k >= kf (tf) and k < kb (tb)
      for (int k = 0; k < kf; ++k) put(f.tf, r, k, get(f.tf, r - 1, k));
      for (int k = kf; k < K; ++k) put(f.tf, r, k, get(f.tf, r - 1, k) * get(f.tf, r - 1, k - off));
      for (int k = 0; k < kb; ++k) put(f.tb, r, k, get(f.tb, r - 1, k) * get(f.tb, r - 1, k + off));
      for (int k = kb; k < K; ++k) put(f.tb, r, k, get(f.tb, r - 1, k));
    }
  }
};

template <class Exec, class T, class Mem, class BY, class BX, class Info, int W, int U, bool Periodic, bool Scratch>
struct PentaShared : ThomasBase<Exec, BX, T, W> {
  using Base = ThomasBase<Exec, BX, T, W>;
  using typename Base::member_type;
  PentaFactorData<T, Mem> f;
  BY y;
  BX x;
  Info info;

  PentaShared(const Base& base, const PentaFactorData<T, Mem>& f_, BY y_, BX x_, Info info_)
      : Base(base), f(f_), y(y_), x(x_), info(info_) {}

  KOKKOS_INLINE_FUNCTION T& zref(const LaneStore<T>& st, int s0, int j, int l) const {
    return Scratch ? st(0, j, l) : x(s0 + l, j);
  }

  KOKKOS_FUNCTION void operator()(const member_type& m) const {
    int nl;
    const int s0 = this->first_system(m, nl);
    if (nl == 0) return;
    const int nlc = W == 1 ? 1 : nl;
    const int n = this->n;
    const int finfo = f.info();
    if (finfo != 0) {
      for (int l = 0; l < nlc; ++l) {
        info(s0 + l) = finfo;
        for (int j = 0; j < n; ++j) x(s0 + l, j) = this->nan;
      }
      return;
    }
    if constexpr (kPacks) {
      // full packs as vectors (two at once from KBAND_HOST_PAIR_ROWS rows
      // on), then the rest, fewer than a pack and inside one group, lane by
      // lane
      constexpr int L = LanePack<T>::L;
      const int full = nl / L;
      if (full > 0 && packs_adjacent<L>(s0, full, y, x)) {
        if (full == 2 && W == 2 * L && n >= KBAND_HOST_PAIR_ROWS) {
          solve_packed<2>(s0);
        } else {
          for (int k = 0; k < full; ++k) solve_packed<1>(s0 + k * L);
        }
        if (nl == full * L) return;
        lanes<0>(m, s0 + full * L, nl - full * L);
        return;
      }
    }
    // a full set of lanes with a compile-time count (its states then stay in
    // registers; one core of a Xeon, contiguous, 2^20 points, n = 256..4096:
    // 1.4-1.65 ns a point against 3.8-4.7 with the runtime count)
    if constexpr (W == 1)
      lanes<1>(m, s0, nl);
    else if (nl == W)
      lanes<W>(m, s0, nl);
    else
      lanes<0>(m, s0, nl);
  }

  /// The lane loops over systems s0 .. s0+nl-1 (nl <= W, inside one group
  /// of a grouped batch; NL: nl at compile time, 0 at run time).
  template <int NL>
  KOKKOS_INLINE_FUNCTION void lanes(const member_type& m, const int s0, const int nl) const {
    const int nlc = NL > 0 ? NL : (W == 1 ? 1 : nl);
    const int n = this->n;
    const LaneStore<T> st = this->store(m, s0, 1);
    T z[2][W], r[2][W];
    for (int l = 0; l < nlc; ++l) z[0][l] = z[1][l] = r[0][l] = r[1][l] = T(0);
    int j = 0;
    for (; j + U <= n; j += U) forward<U>(st, s0, j, nlc, z, r);
    for (; j < n; ++j) forward<1>(st, s0, j, nlc, z, r);
    // The correction weights are known before the backward pass, which then
    // writes the final solution directly.
    T wt[2][W];
    for (int l = 0; l < nlc; ++l) {
      wt[0][l] = Periodic ? f.hinv(0) * r[0][l] + f.hinv(1) * r[1][l] : T(0);
      wt[1][l] = Periodic ? f.hinv(2) * r[0][l] + f.hinv(3) * r[1][l] : T(0);
      z[0][l] = z[1][l] = T(0);
    }
    j = n - 1;
    for (; j - U + 1 >= 0; j -= U) backward<U>(st, s0, j, nlc, z, wt);
    for (; j >= 0; --j) backward<1>(st, s0, j, nlc, z, wt);
    for (int l = 0; l < nlc; ++l) info(s0 + l) = 0;
  }

  /// Whether a thread's full set of lanes may run as packs of
  /// LanePack<T>::L (CPUs, Global solves of interleaved and grouped
  /// batches).
  static constexpr bool kPacks = W > 1 && W % LanePack<T>::L == 0 && !Scratch;

  /// The Global solve of G packs of LanePack<T>::L systems from s0 (CPUs):
  /// the lane loops' recurrences on vectors, z in x; G packs advance
  /// together. Each step puts one multiply-add on the recurrence's chain:
  /// z_j = (y_j w_j - (a_j w_j) z_{j-2}) - (beta_j w_j) z_{j-1},
  /// x_j = (z_j - q_j x_{j+2}) - p_j x_{j+1}. Periodic: the forward pass
  /// also sums (g1.y, g2.y), whose product with H^-1 weighs the columns z1,
  /// z2 that the backward pass subtracts from each x_j.
  template <int G>
  KOKKOS_INLINE_FUNCTION void solve_packed(const int s0) const {
    using P = LanePack<T>;
    using V = typename P::V;
    constexpr int K = P::K;
    const int n = this->n;
    const size_t yrs = batch_traits<BY>::row_stride(y), xrs = batch_traits<BX>::row_stride(x);
    const T* yp[G];
    T* xp[G];
    V z1[G][K], z2[G][K];  // the last two rows' z (then x)
    V r1[G][K], r2[G][K];  // periodic: g1.y, g2.y (then the weights of z1, z2)
    const V zero{};
    for (int g = 0; g < G; ++g) {
      yp[g] = &y(s0 + g * P::L, 0);
      xp[g] = &x(s0 + g * P::L, 0);
      for (int k = 0; k < K; ++k) z1[g][k] = z2[g][k] = r1[g][k] = r2[g][k] = zero;
    }
    for (int j = 0; j < n; ++j) {
      const T wj = f.w(j), awj = f.a(j) * wj, bwj = f.beta(j) * wj;
      const T g1 = Periodic ? f.g1(j) : T(0), g2 = Periodic ? f.g2(j) : T(0);
      for (int g = 0; g < G; ++g)
        for (int k = 0; k < K; ++k) {
          const V yv = P::vload(yp[g] + j * yrs, k);
          const V t = yv * wj - awj * z2[g][k];
          z2[g][k] = z1[g][k];
          z1[g][k] = t - bwj * z1[g][k];
          P::vstore(xp[g] + j * xrs, k, z1[g][k]);
          if (Periodic) {
            r1[g][k] += g1 * yv;
            r2[g][k] += g2 * yv;
          }
        }
    }
    for (int g = 0; g < G; ++g)
      for (int k = 0; k < K; ++k) {
        z1[g][k] = z2[g][k] = zero;
        if (Periodic) {
          const V w1 = f.hinv(0) * r1[g][k] + f.hinv(1) * r2[g][k];
          r2[g][k] = f.hinv(2) * r1[g][k] + f.hinv(3) * r2[g][k];
          r1[g][k] = w1;
        }
      }
    for (int j = n - 1; j >= 0; --j) {
      const T pj = f.p(j), qj = f.q(j);
      const T c1 = Periodic ? f.z1(j) : T(0), c2 = Periodic ? f.z2(j) : T(0);
      for (int g = 0; g < G; ++g)
        for (int k = 0; k < K; ++k) {
          const V t = P::vload(xp[g] + j * xrs, k) - qj * z2[g][k];
          z2[g][k] = z1[g][k];
          z1[g][k] = t - pj * z1[g][k];
          P::vstore(xp[g] + j * xrs, k, Periodic ? z1[g][k] - r1[g][k] * c1 - r2[g][k] * c2 : z1[g][k]);
        }
    }
    for (int l = 0; l < G * P::L; ++l) info(s0 + l) = 0;
  }

  template <int UU>
  KOKKOS_INLINE_FUNCTION void forward(const LaneStore<T>& st, int s0, int jb, int nlc, T (&z)[2][W],
                                      T (&r)[2][W]) const {
    T yv[UU][W], av[UU], bv[UU], wv[UU], g1[UU], g2[UU];
    for (int u = 0; u < UU; ++u) {
      av[u] = f.a(jb + u);
      bv[u] = f.beta(jb + u);
      wv[u] = f.w(jb + u);
      if (Periodic) g1[u] = f.g1(jb + u), g2[u] = f.g2(jb + u);
    }
    load_rows<UU>(y, s0, jb, nlc, yv);
    for (int u = 0; u < UU; ++u)
      for (int l = 0; l < nlc; ++l) {
        const T zj = (yv[u][l] - av[u] * z[1][l] - bv[u] * z[0][l]) * wv[u];
        z[1][l] = z[0][l], z[0][l] = zj;
        if (Periodic) r[0][l] += g1[u] * yv[u][l], r[1][l] += g2[u] * yv[u][l];
        zref(st, s0, jb + u, l) = zj;
      }
  }

  template <int UU>
  KOKKOS_INLINE_FUNCTION void backward(const LaneStore<T>& st, int s0, int jb, int nlc, T (&z)[2][W],
                                       const T (&wt)[2][W]) const {
    T zv[UU][W], pv[UU], qv[UU], z1[UU], z2[UU];
    for (int u = 0; u < UU; ++u) {
      pv[u] = f.p(jb - u);
      qv[u] = f.q(jb - u);
      if (Periodic) z1[u] = f.z1(jb - u), z2[u] = f.z2(jb - u);
      for (int l = 0; l < nlc; ++l) zv[u][l] = zref(st, s0, jb - u, l);
    }
    for (int u = 0; u < UU; ++u)
      for (int l = 0; l < nlc; ++l) {
        const T xj = zv[u][l] - pv[u] * z[0][l] - qv[u] * z[1][l];
        z[1][l] = z[0][l], z[0][l] = xj;
        x(s0 + l, jb - u) = Periodic ? xj - wt[0][l] * z1[u] - wt[1][l] * z2[u] : xj;
      }
  }
};

// ---------------------------------------------------------------------------
// PCR-Penta: cyclic reduction on the 2x2-block tridiagonal form.
// Block row I holds rows 2I, 2I+1; A_I, B_I, C_I couple it to block rows
// I-1, I, I+1. A row 2I+1 = n (odd n) is an identity row with y = 0.
// Step with stride s (1, 2, 4, ..):  alpha = -A_I B_{I-s}^-1,
// gamma = -C_I B_{I+s}^-1, A_I <- alpha A_{I-s}, C_I <- gamma C_{I+s},
// B_I <- B_I + alpha C_{I-s} + gamma A_{I+s}, Y_I likewise; block rows outside
// [0, m) are identity rows. After ceil(log2 m) steps X_I = B_I^-1 Y_I.
// ---------------------------------------------------------------------------

template <class Exec, class BA, class BB, class BC, class BD, class BE, class BY, class BX, class Info>
struct PCRPentaKernel : PentaArgs<BA, BB, BC, BD, BE, BY, BX, Info> {
  using T = batch_value_t<BX>;
  using member_type = typename Kokkos::TeamPolicy<Exec>::member_type;
  using Args = PentaArgs<BA, BB, BC, BD, BE, BY, BX, Info>;
  using Args::a, Args::b, Args::c, Args::d, Args::e, Args::y, Args::x, Args::info;
  PCRPentaKernel(const Args& args, const PCRGeometry& g_, int n_, T nan_) : Args(args), g(g_), n(n_), nan(nan_) {}
  PCRGeometry g;  // g.n = m = ceil(n / 2) block rows
  int n;
  T nan;

  static constexpr int kVals = 14;  // A, B, C (4 each), Y (2) per block row
  KOKKOS_INLINE_FUNCTION static size_t bytes_per_system(int m) {
    return static_cast<size_t>(2) * kVals * m * sizeof(T) + 16;
  }

  struct Row {
    M2<T> A, B, C;
    T y0, y1;
  };
  KOKKOS_INLINE_FUNCTION static Row get(const T* buf, int I) {
    const T* p = buf + static_cast<size_t>(I) * kVals;
    return {{p[0], p[1], p[2], p[3]}, {p[4], p[5], p[6], p[7]}, {p[8], p[9], p[10], p[11]}, p[12], p[13]};
  }
  KOKKOS_INLINE_FUNCTION static void put(T* buf, int I, const Row& r) {
    T* p = buf + static_cast<size_t>(I) * kVals;
    const T v[kVals] = {r.A.a00, r.A.a01, r.A.a10, r.A.a11, r.B.a00, r.B.a01, r.B.a10,
                        r.B.a11, r.C.a00, r.C.a01, r.C.a10, r.C.a11, r.y0,    r.y1};
    for (int k = 0; k < kVals; ++k) p[k] = v[k];
  }

  /// Block row I of system s from the scalar rows 2I, 2I+1 (masked).
  KOKKOS_INLINE_FUNCTION Row load(int s, int I) const {
    Row r;
    T v[2][6];  // a b c d e y of the two rows
    for (int k = 0; k < 2; ++k) {
      const int j = 2 * I + k;
      if (j < n) {
        v[k][0] = a(s, j), v[k][1] = b(s, j), v[k][2] = c(s, j), v[k][3] = d(s, j), v[k][4] = e(s, j);
        v[k][5] = y(s, j);
        penta_mask(j, n, v[k][0], v[k][1], v[k][3], v[k][4]);
      } else {
        for (int q = 0; q < 6; ++q) v[k][q] = T(0);
        v[k][2] = T(1);
      }
    }
    r.A = {v[0][0], v[0][1], T(0), v[1][0]};
    r.B = {v[0][2], v[0][3], v[1][1], v[1][2]};
    r.C = {v[0][4], T(0), v[1][3], v[1][4]};
    r.y0 = v[0][5], r.y1 = v[1][5];
    return r;
  }

  KOKKOS_FUNCTION void operator()(const member_type& mem) const {
    const int m = g.n, ns = g.ns;
    const PCRThread<T, member_type> th(mem, g, bytes_per_system(m));
    const int r = th.r, s = th.s;
    const bool live = th.live;
    T* buf[2] = {th.buf, th.buf + static_cast<size_t>(kVals) * m};
    int* badp = reinterpret_cast<int*>(th.buf + static_cast<size_t>(2) * kVals * m);
    if (live) {
      for (int I = r; I < m; I += ns) put(buf[0], I, load(s, I));
      if (r == 0) *badp = n + 1;
    }
    mem.team_barrier();
    int cur = 0;
    int bad = n + 1;
    for (int stride = 1; stride < m; stride *= 2) {
      if (live) {
        for (int I = r; I < m; I += ns) {
          Row o = get(buf[cur], I);
          Row nr{{T(0), T(0), T(0), T(0)}, o.B, {T(0), T(0), T(0), T(0)}, o.y0, o.y1};
          for (int side = 0; side < 2; ++side) {
            const int J = side == 0 ? I - stride : I + stride;
            if (J < 0 || J >= m) continue;
            const Row q = get(buf[cur], J);
            const T dt = q.B.det();
            if (!usable_pivot(dt) && 2 * J + 1 < bad) bad = 2 * J + 1;
            const M2<T> inv = q.B.inverse();
            const M2<T> f = (side == 0 ? o.A : o.C) * inv;  // -alpha or -gamma
            const M2<T> far = f * (side == 0 ? q.A : q.C);
            const M2<T> near = f * (side == 0 ? q.C : q.A);
            if (side == 0) nr.A = {-far.a00, -far.a01, -far.a10, -far.a11};
            else nr.C = {-far.a00, -far.a01, -far.a10, -far.a11};
            nr.B = {nr.B.a00 - near.a00, nr.B.a01 - near.a01, nr.B.a10 - near.a10, nr.B.a11 - near.a11};
            nr.y0 -= f.a00 * q.y0 + f.a01 * q.y1;
            nr.y1 -= f.a10 * q.y0 + f.a11 * q.y1;
          }
          put(buf[1 - cur], I, nr);
        }
      }
      cur = 1 - cur;
      mem.team_barrier();
    }
    if (live) {
      for (int I = r; I < m; I += ns) {
        const Row o = get(buf[cur], I);
        if (!usable_pivot(o.B.det()) && 2 * I + 1 < bad) bad = 2 * I + 1;
      }
      if (bad <= n) Kokkos::atomic_fetch_min(badp, bad);
    }
    mem.team_barrier();
    if (live) {
      const int sb = *badp;
      for (int I = r; I < m; I += ns) {
        const Row o = get(buf[cur], I);
        const M2<T> inv = o.B.inverse();
        const T x0 = inv.a00 * o.y0 + inv.a01 * o.y1, x1 = inv.a10 * o.y0 + inv.a11 * o.y1;
        x(s, 2 * I) = sb <= n ? nan : x0;
        if (2 * I + 1 < n) x(s, 2 * I + 1) = sb <= n ? nan : x1;
      }
      if (r == 0) info(s) = sb <= n ? sb : 0;
    }
  }
};

}  // namespace impl
}  // namespace kband
